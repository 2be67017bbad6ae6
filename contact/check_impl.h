/* contact/check_impl.h: internal (not installed). cp_lcp_check in its two
 * parts, for a solver that needs M z + q at its end anyway (Lemke's small
 * path): the scan forms it once, and the same numbers serve the solver's
 * refinement test and the check. cp_lcp_check(...) is exactly
 * cp_lcp_check_scan followed by cp_lcp_check_judge. */
#ifndef CP_CONTACT_CHECK_IMPL_H
#define CP_CONTACT_CHECK_IMPL_H

#include "contact/lcp.h"

#include <float.h>
#include <math.h>

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

/* The judge's full rules alone, after its fast pass
 * (cp_check_judge_fast) declined the pair: buf as that pass left it (its
 * row tolerances in place of the scales). cp_lcp_check_judge is the fast
 * pass, then this; a caller that ran the fast pass itself goes on here
 * (the same verdict, measures and reason). */
CP_CHECK_HIDDEN int cp_lcp_check_rules(int n, const double *M,
                                       const double *z, const double *w,
                                       const double *buf, double zmax,
                                       const cp_check_options *opt,
                                       cp_lcp_info *info);

/* The scan's one text, compiled twice: vectorised, and plainly for tiny n,
 * where the vectorised loops' set-up costs more than the loops (callgrind:
 * 145 against 100 instructions per scan at n = 3; the plain form is 30 %
 * slower at n = 26). The same operations in the same order either way. */
#define CP_CHECK_SCAN_BODY                                                        \
  double *restrict mw = buf, *restrict sc = buf + n, *restrict l1 = sc + n;   \
  double zmax = 0.0;                                                           \
  for (int i = 0; i < n; i++) {                                                \
    mw[i] = q[i];                                                              \
    sc[i] = fabs(q[i]);                                                        \
    if (norms) l1[i] = 0.0;                                                    \
    const double az = fabs(z[i]);                                              \
    zmax = az > zmax ? az : zmax; /* as fmax: a NaN is passed over */          \
  }                                                                            \
  /* One pass over M: w (as cp_lcp_eval sums it, same order), the row        \
   * scales and the row norms. Most z_j of a contact answer are 0: their      \
   * columns only add to the row norms (a non-finite M_ij still reaches sc    \
   * through l1). */                                                           \
  for (int j = 0; j < n; j++) {                                                \
    const double zj = z[j], azj = fabs(zj);                                    \
    const double *restrict col = M + (size_t)j * (size_t)n;                    \
    if (zj == 0.0) {                                                           \
      if (norms)                                                               \
        for (int i = 0; i < n; i++) l1[i] += fabs(col[i]);                     \
      continue;                                                                \
    }                                                                          \
    if (!norms) {                                                              \
      for (int i = 0; i < n; i++) {                                            \
        mw[i] += col[i] * zj;                                                  \
        sc[i] += fabs(col[i]) * azj;                                           \
      }                                                                        \
      continue;                                                                \
    }                                                                          \
    for (int i = 0; i < n; i++) {                                              \
      mw[i] += col[i] * zj;                                                    \
      sc[i] += fabs(col[i]) * azj;                                             \
      l1[i] += fabs(col[i]);                                                   \
    }                                                                          \
  }                                                                            \
  return zmax;

/* The scan with n a constant (contact/lcp.c's scan_fixed; Lemke's lean
 * path, whose finish inlines it): the same text, the same numbers. */
static inline __attribute__((always_inline)) double
cp_check_scan_inline(const int n, const double *M, const double *q,
                     const double *z, double *buf, int norms) {
  CP_CHECK_SCAN_BODY
}

/* The judge's fast pass: the measures, and whether every row passes by the
 * plain tests (finite values, z_i >= 0, w_i >= -tol_i, the residual, and
 * z_i w_i <= tol_i |z|_inf where w_i > tol_i), branch-free; the row
 * tolerances are left in sc. A row passed here is passed by the full rules
 * too, and on finite rows the measures are those the full loop computes
 * (the same comparisons in the same order), so a pair accepted here gets
 * the same verdict and the same figures. Anything else (a negative z_i,
 * which may still be negligible; a failure to report) goes through the
 * full loop. Returns 1 when accepted (measures in info). Inlined with n a
 * constant for Lemke's small and lean paths (n = 2, 3, 4; the same
 * operations). */
static inline __attribute__((always_inline)) int
cp_check_judge_fast(const int n, const double *z, const double *w, double *buf,
           double zmax, double rel, cp_lcp_info *info) {
  const double *mw = buf;
  double *sc = buf + n;
  const double *l1 = sc + n;
  const double ulp = 8.0 * (double)n * 2.220446049250313e-16 * zmax;
  double comp = 0.0, res = 0.0, minz = INFINITY, minw = INFINITY;
  int odd = 0;
  for (int i = 0; i < n; i++) {
    const double tol = rel * sc[i] + ulp * l1[i];
    sc[i] = tol;
    const double wi = mw[i], wr = w ? w[i] : wi, zi = z[i];
    const double r = fabs(wr - wi), c = fabs(zi * wi);
    res = r > res ? r : res;
    comp = c > comp ? c : comp;
    minz = zi < minz ? zi : minz;
    minw = wi < minw ? wi : minw;
    odd |= !((r <= tol) & (zi >= 0.0) & (wi >= -tol) & (tol <= DBL_MAX) &
             (zi <= DBL_MAX) & (wi <= DBL_MAX) &
             ((wi <= tol) | (zi * wi <= tol * zmax)));
  }
  if (odd) return 0;
  info->complementarity = comp;
  info->residual = res;
  info->min_z = n ? minz : 0.0;
  info->min_w = n ? minw : 0.0;
  return 1;
}

#endif
