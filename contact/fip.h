/// \file contact/fip.h
/// The feasible interior point (FIP) method of the paper's Appendix B for the
/// LCP (L1) of contact/lcp.h (docs/math.md §5).
///
/// Phase I (GLPK simplex): the LP
///
///     max t  s.t.  z >= t e,  M z + q >= t e,  0 <= t <= 1.             (F1)
///
/// t* <= 0 (to a tolerance) means there is no strictly feasible point: status
/// CP_LCP_NO_STRICT_FEASIBLE ("NFP"), not an error. Otherwise (z0, w0) =
/// (z, M z + q) > 0 starts phase II.
///
/// Phase II: with mu = w^T z / n, the Newton system of (54),
///
///     (W + Z M) dz = beta mu e - w o z,   dw = M dz,                    (F2)
///
/// keeps w = M z + q exact. One LU factorisation (LAPACK dgetrf/dgetrs) per
/// iteration, no inverse. Step: theta_hat = largest step in (0, 1] keeping
/// (w, z) >= 0, theta0 = kappa * theta_hat, then the smallest m with
///
///     psi(w + rho^m theta0 dw, z + rho^m theta0 dz) - psi(w, z)
///         <= -sigma (1 - beta) zeta rho^m theta0                        (F3)
///
/// (Armijo on psi = (n + zeta) log(w^T z) - sum_i log(w_i z_i)). Stop when
/// w^T z <= gap_tol or after max_iter iterations.
///
/// Finish: the converged iterate is polished by its basis; if it still
/// fails the row-by-row check (indeterminate forces: the iterate is inside
/// a face of solutions), a crossover LP finds a vertex of the face named by
/// the partition {i : z_i > w_i}, solved exactly and checked (fip.c).
#ifndef CP_CONTACT_FIP_H
#define CP_CONTACT_FIP_H

#include "contact/lcp.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cp_fip_options {
  int max_iter;     ///< default 300 (paper)
  double gap_tol;   ///< stop when w^T z <= gap_tol; default 1e-6 (paper)
  double beta;      ///< centering parameter in [0, 1); default 0.1 (see fip.c)
  double zeta;      ///< potential weight zeta > 0; default sqrt(n) when 0
  double kappa;     ///< fraction to the boundary in (0, 1); default 0.95
  double rho;       ///< backtracking factor in (0, 1); default 0.5
  double sigma;     ///< Armijo constant in (0, 1); default 1e-4
  double nfp_tol;   ///< phase I: t* <= nfp_tol means NFP; default 1e-9
  int polish;       ///< 1 (default): polish the final iterate by its basis
  int crossover;    ///< 1 (default): if the polished iterate fails the check,
                    ///< finish exactly on the face its partition names
                    ///< (fip.c); only with polish (polish 0: the raw iterate)
  double face_time_limit; ///< the crossover LP's time limit in seconds;
                          ///< 0 (default): none, only its iteration cap
                          ///< (20 n + 2000), so the answer does not depend
                          ///< on the machine's speed
  cp_check_options check;
  /// The poll hook (docs/solvers.md "The poll hook"): when set,
  /// poll(poll_ctx) after every completed phase II iteration, so a solve
  /// that ends with info->iterations = k has made k calls. Phase I and the
  /// crossover are GLPK's simplex and make none. It is given only its
  /// context and returns nothing: a solve's numbers are the same with or
  /// without it. Default NULL (none; one pointer test an iteration).
  void (*poll)(void *ctx);
  void *poll_ctx;
} cp_fip_options;

cp_fip_options cp_fip_defaults(void);

/// Solves (L1) by phase I + phase II. Writes z[n], w[n] and *info; returns
/// info->status (SOLVED, NO_STRICT_FEASIBLE, ITERATION_CAP, NUMERICAL,
/// CHECK_FAILED, NOMEM). info->iterations counts phase II Newton steps.
cp_lcp_status cp_fip_solve(int n, const double *M, const double *q,
                           const cp_fip_options *opt, double *z, double *w,
                           cp_lcp_info *info);

/// The crossover on a named face: a vertex of F(P) = {z >= 0 : z_j = 0 off
/// P, (M z + q)_i = 0 on P, (M z + q)_i >= 0 off P} (P[i] != 0 marks the
/// partition; every point of F(P) solves (L1)) by a GLPK simplex under
/// `time_limit` seconds (0: automatic, as face_time_limit), then the
/// vertex's complementary basis solved exactly, or else the LP's own vertex
/// basis (the basic z_j against the rows whose w_i the LP holds at 0), or
/// else the vertex itself polished; the
/// first candidate that passes `chk` (NULL: defaults) replaces (z, w) and
/// fills *info's measures (status and iterations untouched). Returns 2 for a
/// basis solution (exact to rounding), 1 for the verified LP vertex (not a
/// basis solution: report it unpolished), 0 when the face is empty, the LP
/// was not solved or no candidate passed (then (z, w) and *info are
/// unchanged), -1 when memory ran out. Allocates O(n^2).
int cp_fip_face_crossover(int n, const double *M, const double *q,
                          const unsigned char *P /*[n]*/, double time_limit,
                          const cp_check_options *chk, double *z, double *w,
                          cp_lcp_info *info);

#ifdef __cplusplus
}
#endif
#endif
