/* contact/check_impl.h: internal (not installed). cp_lcp_check in its two
 * parts, for a solver that needs M z + q at its end anyway (Lemke's small
 * path): the scan forms it once, and the same numbers serve the solver's
 * refinement test and the check. cp_lcp_check(...) is exactly
 * cp_lcp_check_scan followed by cp_lcp_check_judge. */
#ifndef CP_CONTACT_CHECK_IMPL_H
#define CP_CONTACT_CHECK_IMPL_H

#include "contact/lcp.h"

/* Library internals: hidden from a shared library's exported symbols (as
 * planner/sim/world_impl.h's), still linked by the tests from the static
 * library. */
#define CP_CHECK_HIDDEN __attribute__((visibility("hidden")))

/* A function's own optimisation flags (lcp.c's plain scan, lemke.c's small
 * path): GCC's attribute; other compilers (clang, for the fuzzers) warn
 * about it and get the function as it is. */
#if defined(__GNUC__) && !defined(__clang__)
#define CP_GCC_OPTIMIZE(flags) __attribute__((optimize(flags)))
#else
#define CP_GCC_OPTIMIZE(flags)
#endif

/* The default of cp_check_options.rel_tol (cp_check_defaults; Lemke's
 * static default options use it too). */
#define CP_CHECK_REL_TOL_DEFAULT 1e-6

/* buf[3n] := (M z + q, the row scales s_i of cp_check_options, the row
 * norms |M_i|_1); returns max |z_i| (NaN passed over). With norms = 0 the
 * row norms (which depend on M alone) are those of an earlier scan of the
 * same M, kept in buf, and the zero columns of z are skipped. */
CP_CHECK_HIDDEN double cp_lcp_check_scan(int n, const double *M,
                                         const double *q, const double *z,
                                         double *buf, int norms);

/* The verdict of cp_lcp_check on (z, w) from a scan of z (buf, zmax as
 * cp_lcp_check_scan left them; buf's scales are overwritten). */
CP_CHECK_HIDDEN int cp_lcp_check_judge(int n, const double *M,
                                       const double *z, const double *w,
                                       double *buf, double zmax,
                                       const cp_check_options *opt,
                                       cp_lcp_info *info);

#endif
