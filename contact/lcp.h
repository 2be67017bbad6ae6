/// \file contact/lcp.h
/// The linear complementarity problem (LCP) and what every solver reports.
///
/// Problem (docs/math.md §4, paper eq. 39): given M (n x n) and q (n), find
///
///     z >= 0,   w = M z + q >= 0,   z^T w = 0.                          (L1)
///
/// Storage: M is dense, COLUMN-MAJOR (Fortran order, M[i + j*n]), the order
/// LAPACK and the Siconos files use; a column of M is contiguous, which is what
/// a pivoting method reads. Arrays are annotated with their sizes: `[n]`,
/// `[n*n]`.
///
/// Ownership: a cp_lcp owns its arrays (cp_lcp_free releases them). Solvers
/// never take ownership of what they are given; they write results into
/// caller-provided arrays of length n.
///
/// Every solver ends with a cp_lcp_status. Expected outcomes (secondary ray,
/// iteration cap, no strictly feasible point, proven infeasible) are statuses,
/// not errors. A solver reports CP_LCP_SOLVED only after cp_lcp_check has
/// accepted its (z, w).
#ifndef CP_CONTACT_LCP_H
#define CP_CONTACT_LCP_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/// Largest LCP size complan reads from a file (docs/ranges.md): M then takes
/// 800 MB. The solvers themselves have no such limit.
#define CP_LCP_MAX_N 10000

/// A dense LCP. `name` may be NULL.
typedef struct cp_lcp {
  int n;        ///< size, >= 1
  double *M;    ///< [n*n] column-major
  double *q;    ///< [n]
  char *name;   ///< optional, owned
} cp_lcp;

/// Allocates an LCP of size n with M and q zeroed. Returns 0, or -1 when out
/// of memory (then *lcp is left empty).
int cp_lcp_init(cp_lcp *lcp, int n);
/// Releases the arrays of *lcp and zeroes it. Safe on a zeroed struct.
void cp_lcp_free(cp_lcp *lcp);

/// How a solve ended.
typedef enum cp_lcp_status {
  CP_LCP_SOLVED = 0,        ///< (z, w) solves (L1) and passed cp_lcp_check
  CP_LCP_SECONDARY_RAY,     ///< Lemke ended on a secondary ray
  CP_LCP_PIVOT_CAP,         ///< Lemke reached its pivot cap
  CP_LCP_ITERATION_CAP,     ///< an iterative method reached its iteration cap
  CP_LCP_NO_STRICT_FEASIBLE,///< FIP phase I: no strictly feasible point ("NFP")
  CP_LCP_INFEASIBLE,        ///< proven: (L1) has no solution (certify only)
  CP_LCP_TIME_LIMIT,        ///< the time limit was reached undecided
  CP_LCP_NUMERICAL,         ///< numerical failure (singular system, NaN, ...)
  CP_LCP_CHECK_FAILED,      ///< a candidate was produced but failed the check
  CP_LCP_NOMEM              ///< out of memory
} cp_lcp_status;

/// Short stable name of a status ("solved", "secondary ray", ...).
const char *cp_lcp_status_name(cp_lcp_status s);

/// Which solver produced an answer.
typedef enum cp_lcp_solver {
  CP_SOLVER_LEMKE = 0,
  CP_SOLVER_FIP,
  CP_SOLVER_CERTIFY,
  CP_SOLVER_AUTO
} cp_lcp_solver;

/// "lemke", "fip", "certify", "auto".
const char *cp_lcp_solver_name(cp_lcp_solver s);
/// Parses a solver name; returns 0 and sets *out, or -1 when unknown.
int cp_lcp_solver_parse(const char *name, cp_lcp_solver *out);

/// What a solver reports besides (z, w). Filled by every solver.
typedef struct cp_lcp_info {
  cp_lcp_status status;
  cp_lcp_solver solver;   ///< the solver that produced the final answer
  int iterations;         ///< pivots (Lemke, over all starts) or Newton steps
  int starts;             ///< Lemke starts (1 + restarts); 1 for other solvers
  int first_start_iterations; ///< Lemke: pivots of the first start
  double complementarity; ///< max_i |z_i w_i| of the reported pair
  double residual;        ///< ||w - (M z + q)||_inf of the reported pair
  double min_z;           ///< min_i z_i of the reported pair
  double min_w;           ///< min_i w_i of the reported pair
  int polished;           ///< 1: the reported pair solves a basis system
                          ///< (its complementary basis, or the face LP's
                          ///< vertex basis of cp_fip_face_crossover: a
                          ///< linear solve, exact to rounding); 0: an
                          ///< approximate answer that passed the check only
                          ///< (complementarity as measured)
  char reason[160];       ///< human-readable detail when not solved
} cp_lcp_info;

/// Resets *info to "nothing done yet" (status CP_LCP_NUMERICAL, counts 0).
void cp_lcp_info_clear(cp_lcp_info *info);

/// Tolerance of the acceptance check (docs/math.md §5), applied row by row.
typedef struct cp_check_options {
  /// Row i is judged against its own scale s_i = sum_j |M_ij||z_j| + |q_i|
  /// (the size of the terms summed into w_i), tol_i = rel_tol s_i plus a
  /// rounding allowance 8 n eps |M_i|_1 |z|_inf for the noise solvers leave
  /// in z: w_i >= -tol_i and |w_i - (M z + q)_i| <= tol_i. z_j is measured
  /// in units of the rows it moves, u_j = max_k |M_kj z_j| / tol_k: it may
  /// be negative only when u_j <= 1 (negligible), and complementarity asks
  /// z_i w_i <= tol_i |z|_inf or u_i (w_i / tol_i) <= 1 / rel_tol, i.e.
  /// (z_i / its scale) times (w_i / s_i) at most rel_tol. One huge entry of
  /// q therefore loosens only its own row.
  double rel_tol;
} cp_check_options;

/// Defaults: rel_tol = 1e-6 (matches FIP's complementarity gap 1e-6).
cp_check_options cp_check_defaults(void);

/// The acceptance test of docs/math.md §5 (row by row, as above) applied
/// to a candidate (z, w). Recomputes M z + q, fills info->complementarity
/// (max |z_i w_i|), residual, min_z, min_w. Returns 1 if the pair is
/// accepted, 0 if not (info->reason names the first failing row and why).
/// `w` may be NULL: then w := M z + q is used (and residual is 0).
int cp_lcp_check(int n, const double *M /*[n*n]*/, const double *q /*[n]*/,
                 const double *z /*[n]*/, const double *w /*[n] or NULL*/,
                 const cp_check_options *opt, cp_lcp_info *info);

/// w := M z + q.
void cp_lcp_eval(int n, const double *M, const double *q, const double *z,
                 double *w);

/// Solves the linear system of a complementary basis: for each i, z_i is
/// basic if basis[i] != 0, else w_i is basic; nonbasic variables are 0.
/// Writes (z, w). Returns 0, -1 if the basis matrix is singular, or -2 if
/// memory runs out. Used to polish approximate answers (FIP, certify).
int cp_lcp_solve_basis(int n, const double *M, const double *q,
                       const unsigned char *basis /*[n]*/, double *z,
                       double *w);

/// 1 when M is symmetric (to 1e-12 of its largest entry) and positive
/// semidefinite (smallest eigenvalue >= -1e-10 of the largest in modulus).
/// For such a monotone LCP M z is the same for every solution.
int cp_lcp_symmetric_psd(int n, const double *M);

/// Crossover of an accepted but approximate answer (an interior point's):
/// the support basis[i] = (z_i > w_i) is solved exactly (cp_lcp_solve_basis)
/// and its solution verified with cp_lcp_check. If it passes, it replaces
/// (z, w), *info's measures are refreshed and info->polished = 1; returns 1.
/// Otherwise (singular basis, or a basis solution that fails the check: the
/// support is degenerate) nothing changes and 0 is returned; -1 when memory
/// ran out (nothing changes either: the caller reports CP_LCP_NOMEM rather
/// than a result that depends on the allocator). Allocates O(n^2).
int cp_lcp_crossover(int n, const double *M, const double *q, double *z,
                     double *w, const cp_check_options *opt, cp_lcp_info *info);

/// Polishes an approximate solution: takes basis[i] = (z_i > w_i), solves
/// that basis exactly and keeps the result if it passes the check with a
/// tighter tolerance than (z, w) did. Returns 1 if (z, w) was replaced.
int cp_lcp_polish(int n, const double *M, const double *q, double *z,
                  double *w, const cp_check_options *opt);

#ifdef __cplusplus
}
#endif
#endif
