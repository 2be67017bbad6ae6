/// \file contact/certify.h
/// Deciding whether an LCP has a solution, by a mixed-integer program
/// (docs/math.md §5; Pardalos and Rosen 1988). The scaled form needs no
/// a-priori bound on z:
///
///     max alpha  s.t.  M y + alpha q = w,  0 <= y <= x,  0 <= w <= 1 - x,
///                      x in {0,1}^n,  0 <= alpha <= 1.                  (C1)
///
/// alpha* > 0: z = y / alpha* solves (L1) (x_i = 1 lets z_i be positive,
/// x_i = 0 lets w_i be); the answer is polished by solving the linear system
/// of its complementary basis and must pass cp_lcp_check. alpha* = 0: no
/// solution exists (status CP_LCP_INFEASIBLE).
///
/// Second solution: no-good cuts on x exclude the first answer's pattern; the
/// search continues until a solution whose support {i : z_i > tol} differs
/// from the first one's is found, or (C1) with the cuts has alpha* = 0 (then
/// every solution shares the first one's support), or a limit is reached.
///
/// GLPK aborts the process on some internal failures. This module installs
/// glp_error_hook around every GLPK call and longjmps out, so such a failure
/// becomes CP_LCP_NUMERICAL; it tightens the integrality tolerance and
/// verifies every answer GLPK gives.
///
/// What "proven" means here: alpha* = 0 is GLPK's branch-and-bound verdict in
/// floating point (on an exactly equilibrated copy of (M, q)), confirmed by a
/// second, differently configured MIP solve; it is not a rational-arithmetic
/// proof. A solution is never taken from GLPK unchecked: every answer passes
/// cp_lcp_check on the original (M, q).
#ifndef CP_CONTACT_CERTIFY_H
#define CP_CONTACT_CERTIFY_H

#include "contact/lcp.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cp_certify_options {
  double time_limit_s;   ///< per call: every MIP solve of one cp_certify
                         ///< call (the confirming solve, the retry on
                         ///< cleaned q, --second's cuts) gets only what is
                         ///< left of it; default 60 s; <= 0 means none
  /// Branch-and-bound nodes of all MIP solves of one call together (GLPK's
  /// count of the nodes it created); reached undecided: the call returns
  /// CP_LCP_ITERATION_CAP. A work limit: the same data ends the same way on
  /// any machine, under any load, which time_limit_s cannot promise. The
  /// simulator uses it (cp_world_defaults) with time_limit_s off. Default 0:
  /// none.
  long node_limit;
  double alpha_tol;      ///< alpha* <= alpha_tol counts as 0; default 1e-9
  int second;            ///< 1: look for a second solution (--second)
  int max_cuts;          ///< cap on no-good cuts for --second; default 64
  cp_check_options check;
  /// The clock time_limit_s is measured with (seconds, any origin; read
  /// once at the call's start and before each MIP solve); NULL (the
  /// default): the monotonic clock of models/clock.h. The simulator passes
  /// its world clock (cp_world_set_clock), tests a scripted one.
  double (*clock)(void *ctx);
  void *clock_ctx;       ///< passed to clock
  /// A "no solution" verdict stands only if Lemke, run on the original
  /// (M, q) with this many starts (ones, then random covering vectors, with
  /// the rescue pass's tighter tie rules), finds none; a solution it finds
  /// that passes the check overrules GLPK (cp_certify_result.mip_overruled).
  /// GLPK's verdict is floating point and has been seen wrong (certify.c).
  /// Default 32; 0: off.
  int lemke_starts;
} cp_certify_options;

cp_certify_options cp_certify_defaults(void);

/// Result of cp_certify beyond cp_lcp_info.
typedef struct cp_certify_result {
  double alpha;      ///< alpha of (C1) (equilibrated) at the reported
                     ///< solution; the search stops at the first verified
                     ///< solution, so not necessarily the optimum. With
                     ///< INFEASIBLE: the optimal alpha* (<= alpha_tol).
  int has_second;    ///< 1: z2/w2 hold a solution with another support
  int second_decided;///< 1: has_second is proven (0 when a limit stopped it)
  int mip_solves;    ///< number of MIP solves done
  int q_cleaned;     ///< > 0: the answer came from a retry with this many
                     ///< rounding-level entries of q set to 0 (see certify.c)
  int mip_overruled; ///< 1: the MIPs said alpha* = 0 (no solution), but
                     ///< Lemke found a solution that passes the check: it is
                     ///< the answer (SOLVED; alpha is then the MIPs' alpha*,
                     ///< and a --second search is left undecided)
} cp_certify_result;

/// Decides (L1). On CP_LCP_SOLVED writes z[n], w[n]; when opt->second and a
/// second solution exists also z2[n], w2[n] (which may be NULL when
/// !opt->second). Returns info->status: SOLVED, INFEASIBLE, TIME_LIMIT,
/// NUMERICAL, CHECK_FAILED or NOMEM.
cp_lcp_status cp_certify(int n, const double *M, const double *q,
                         const cp_certify_options *opt, double *z, double *w,
                         double *z2, double *w2, cp_certify_result *res,
                         cp_lcp_info *info);

#ifdef __cplusplus
}
#endif
#endif
