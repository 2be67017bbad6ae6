/// \file contact/fip.c
/// Feasible interior point method (paper Appendix B, docs/math.md §5).
///
/// Phase I. The LP (F1) of fip.h is solved in the substituted form
///
///     z = y + t e,  y >= 0:   max t  s.t.  M y + (M e - e) t >= -q,
///                                          y >= 0,  0 <= t <= 1,          (P1)
///
/// which is (F1) with z free: z >= t e becomes the column bound y >= 0, so
/// the LP has n rows instead of 2n. (Also requiring z >= 0 changes nothing:
/// z >= t e >= 0 already.) Phase II starts at the simplex optimum itself,
/// z0 = y* + t* e, w0 = M z0 + q (recomputed, and required to be > 0 in
/// floating point, since GLPK meets its rows only to a tolerance).
///
/// Why not a more central start: the optimum is a vertex, so some entries of
/// (z0, w0) sit exactly at t* and others may be large. We tried a second LP,
/// min e^T (z + w) s.t. z, w >= t*/2, and starting at the midpoint of the two
/// vertices (>= t*/2, so still in F+). On random monotone LCPs, n = 5..160,
/// it saved 1-2 Newton steps of 10-40 (about 5%) but doubled the phase I
/// time, which at these sizes dominates: at n = 80 a solve went from about
/// 6 ms to 11 ms. The potential-reduction line search copes with the
/// off-centre start, so the (P1) point is used alone.
///
/// GLPK calls abort() on internal errors. Every GLPK call here runs under a
/// setjmp guard with glp_error_hook installed (glpk_guarded); an error
/// longjmps back, the GLPK environment is freed (glp_free_env, as the GLPK
/// manual requires after such a jump: this also frees any other GLPK object
/// of the thread) and phase I ends with CP_LCP_NUMERICAL, the crossover with
/// the interior answer's own status. The guard is static to this file and is
/// removed after each LP, so it does not interfere with other GLPK users
/// (contact/certify.c) called before or after in the same thread.
///
/// Finishing exactly (crossover). When the solution set is not a single
/// point (indeterminate contact forces: statically indeterminate grasps,
/// contacts sharing a line), the Newton iterates converge to an interior
/// point of it, where z_i and w_i may both be small but nonzero: the gap
/// w^T z is below gap_tol, yet row i's z_i w_i is not small against that
/// row's own scale, and the row-by-row check rejects the answer. Polishing
/// by the basis {i : z_i > w_i} does not help: that basis is the support of
/// a face of solutions, and its principal matrix is singular. So, as
/// interior-point LP codes do, the iterate is used only to identify the
/// partition P = {i : z_i > w_i}, and an LP (GLPK simplex) finds a vertex
/// of the face F(P) = {z >= 0, z_j = 0 off P, (M z + q)_i = 0 on P,
/// (M z + q)_i >= 0 off P}; every point of F(P) solves the LCP. The
/// vertex's basis is then solved exactly (cp_lcp_solve_basis), or the
/// vertex polished, and the result is accepted only if it passes the same
/// check; otherwise the interior answer keeps its CHECK_FAILED. On the
/// paper's study this takes FIP from 221 to 294 solved data sets (every
/// converged run of the 330; docs/solvers.md).
///
/// Phase II follows (F2)-(F3) of fip.h. Per iteration: build A = W + Z M
/// (rows equilibrated), ONE LU factorisation (dgetrf) and ONE pair of
/// triangular solves (dgetrs); dw = M dz by one matrix-vector product. No
/// inverse is ever formed, and no allocation happens inside the loop. w is
/// advanced by theta dw, so it stays M z + q up to rounding; every
/// CP_FIP_REFRESH steps it is recomputed as M z + q (a component whose exact
/// value is not positive, i.e. at rounding level, keeps its updated value, so
/// the iterate stays strictly interior).
///
/// Choice of beta (default 0.1, constant; the paper allows any non-increasing
/// beta_k in [0, 1) and gives no value). Mean Newton steps over 20 random
/// instances per cell, n = 10 / 40 / 80 (all solved unless noted):
///
///     class                       beta = 0.05    0.1         0.2        0.5
///     monotone, planted           -          12/14/15    -          29/34/36
///     monotone, singular PSD,
///       degenerate solution       15/18/22   15/18/21    18/20/22   32/35/38
///     P-matrix, triangular,
///       |off-diagonal| <= 1       10/13/23   11/14/23    14/17/27   28/32/41
///     monotone, rows scaled
///       by 10^[-2, 2]             29/44/60   34/48/66    36/50/70   46/56/71
///
/// No class solved more instances with a larger beta; beta = 0 (pure affine
/// scaling) hit the iteration cap on the badly scaled class. beta = 0.1 is
/// 2-3 times faster than 0.5 and keeps a margin from 0. (Triangular
/// P-matrices with |off-diagonal| <= 3 defeat the method at n >= 40 for every
/// beta tried: their P-matrix condition number is huge and the step to the
/// boundary stays ~1e-4 for hundreds of steps. Not a tuning issue.)
///
/// The line search compares psi through its increment, computed with log1p
/// term by term, so that late iterations (tiny relative changes) are not lost
/// to cancellation in psi itself.
#include "contact/fip.h"
#include "contact/glpkout.h"

#include <cblas.h>
#include <float.h>
#include <glpk.h>
#include <lapacke.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/// Recompute w = M z + q every this many Newton steps.
#define CP_FIP_REFRESH 10
/// Maximal number of backtracking steps (rho^m, m = 0..CP_FIP_MAX_BACKTRACK).
#define CP_FIP_MAX_BACKTRACK 60

cp_fip_options cp_fip_defaults(void) {
  cp_fip_options o;
  memset(&o, 0, sizeof o);
  o.max_iter = 300;
  o.gap_tol = 1e-6;
  o.beta = 0.1; /* see the file comment */
  o.zeta = 0.0; /* sqrt(n) */
  o.kappa = 0.95;
  o.rho = 0.5;
  o.sigma = 1e-4;
  o.nfp_tol = 1e-9;
  o.polish = 1;
  o.crossover = 1;
  o.check = cp_check_defaults();
  return o;
}

/* ------------------------------------------------------------------------ */
/* GLPK, guarded                                                             */

typedef struct glpk_guard {
  jmp_buf jb;
} glpk_guard;

/* Called by GLPK instead of abort(); must not return. */
static void glpk_error_hook(void *info) {
  longjmp(((glpk_guard *)info)->jb, 1);
}

enum { LP_OK = 0, LP_INFEASIBLE = 1, LP_FAILED = 2, LP_GLPK_ERROR = 3 };

/* 1 when GLPK's primal solution satisfies every row's lower bound -q_i to a
 * tolerance relative to the row's scale (it does not always: see below). */
static int rows_hold(glp_prob *lp, int n, const double *q) {
  for (int i = 0; i < n; i++) {
    const double lb = -q[i], act = glp_get_row_prim(lp, i + 1);
    if (!(act >= lb - 1e-7 * (1.0 + fabs(lb)))) return 0;
  }
  return 1;
}

/// Runs body(ctx), a function making GLPK calls, with the error hook that
/// turns GLPK's internal errors into a return of LP_GLPK_ERROR (longjmp back
/// here; the GLPK environment is then freed, which releases the problem the
/// body had created: nothing the body assigned after setjmp is read on that
/// path, so no local needs to be volatile) and with GLPK's text (errors
/// included: they are printed before the error hook runs) going to
/// contact/glpkout.h's sink, never to stdout.
static int glpk_guarded(int (*body)(void *), void *ctx) {
  glpk_guard guard;
  if (setjmp(guard.jb)) {
    glp_free_env();
    return LP_GLPK_ERROR;
  }
  glp_error_hook(glpk_error_hook, &guard);
  glp_term_hook(cp_glpk_forward, NULL);
  const int result = body(ctx);
  glp_error_hook(NULL, NULL);
  glp_term_hook(NULL, NULL);
  return result;
}

/// Appends the nonzeros of column j (col[n]) to GLPK's 1-based triplets
/// after entry k; returns the new last entry.
static int add_column(int n, const double *col, int j, int k, int *ia,
                      int *ja, double *ar) {
  for (int i = 0; i < n; i++)
    if (col[i] != 0.0) {
      ++k;
      ia[k] = i + 1;
      ja[k] = j + 1;
      ar[k] = col[i];
    }
  return k;
}

/// Arguments of the two LPs (phase1_body, face_body).
typedef struct lp_args {
  int n;
  const double *M, *q, *rs;  /* rs: phase I only */
  const unsigned char *P;    /* face only */
  int *ia, *ja;
  double *ar, *z, *t;
  unsigned char *lpb;        /* face only */
  unsigned char *rowb;       /* face only, may be NULL: row i's slack basic */
  int tm_lim;                /* face only: GLPK time limit, ms */
} lp_args;

/// Solves (P1) with z = y + t e. Row i: sum_j M_ij y_j + (rs_i - 1) t >=
/// -q_i, rs = M e. ia/ja/ar: caller-provided arrays of length 1 + n (n + 1)
/// (GLPK is 1-based). On LP_OK writes z[n] and *t = t*. Runs guarded.
static int phase1_body(void *ctx) {
  const lp_args *a = ctx;
  const int n = a->n;
  const double *M = a->M, *q = a->q, *rs = a->rs;
  int *ia = a->ia, *ja = a->ja;
  double *ar = a->ar, *z = a->z, *t = a->t;
  int result = LP_FAILED;
  glp_prob *lp = glp_create_prob();
  glp_add_rows(lp, n);
  glp_add_cols(lp, n + 1);
  int k = 0;
  for (int i = 0; i < n; i++) glp_set_row_bnds(lp, i + 1, GLP_LO, -q[i], 0.0);
  for (int j = 0; j < n; j++) {
    glp_set_col_bnds(lp, j + 1, GLP_LO, 0.0, 0.0); /* y_j >= 0 */
    k = add_column(n, M + (size_t)j * (size_t)n, j, k, ia, ja, ar);
  }
  glp_set_col_bnds(lp, n + 1, GLP_DB, 0.0, 1.0); /* 0 <= t <= 1 */
  for (int i = 0; i < n; i++) {
    const double a = rs[i] - 1.0;
    if (a != 0.0) {
      ++k;
      ia[k] = i + 1;
      ja[k] = n + 1;
      ar[k] = a;
    }
  }
  glp_set_obj_coef(lp, n + 1, 1.0);
  glp_set_obj_dir(lp, GLP_MAX);
  glp_load_matrix(lp, k, ia, ja, ar);
  if (cp_glpk_fault("fip phase I")) glp_error("complan: injected GLPK fault\n");
  /* The phase I LP of a contact LCP is massively degenerate (every friction
   * slack row ties t to the same bound). Measured on stacks of boxes: GLPK's
   * primal simplex stalled for over a minute (n = 80, 200000 iterations);
   * with its presolver it once returned an "optimal" point violating a row by
   * 1.98 (n = 40); the dual simplex on the scaled LP misreported
   * infeasibility. The dual simplex without presolve on the unscaled LP from
   * an advanced basis was right and fast on all of them, so it goes first;
   * its answer is checked row by row, and only if it fails does the primal
   * simplex with scaling and presolve get a (capped) try. */
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.meth = GLP_DUALP;
  parm.presolve = GLP_OFF;
  /* Bounded by work, never by the clock (a clock limit would let the load
   * of the machine decide the answer): GLPK's default tm_lim is none. */
  parm.it_lim = 50 * n + 5000;
  const int term = glp_term_out(GLP_OFF); /* glp_adv_basis, glp_scale_prob print */
  glp_adv_basis(lp, 0);
  glp_term_out(term);
  int rc = glp_simplex(lp, &parm);
  const int st0 = rc == 0 ? glp_get_status(lp) : GLP_UNDEF;
  if (!(st0 == GLP_NOFEAS || (st0 == GLP_OPT && rows_hold(lp, n, q)))) {
    const int term2 = glp_term_out(GLP_OFF);
    glp_scale_prob(lp, GLP_SF_AUTO);
    glp_term_out(term2);
    parm.meth = GLP_PRIMAL;
    parm.presolve = GLP_ON;
    parm.it_lim = 20 * n + 2000;
    rc = glp_simplex(lp, &parm);
    if (rc == 0 && glp_get_status(lp) == GLP_OPT && !rows_hold(lp, n, q)) rc = GLP_EFAIL;
  }
  if (rc == GLP_ENOPFS) {
    result = LP_INFEASIBLE; /* found by the presolver */
  } else if (rc == 0) {
    const int st = glp_get_status(lp);
    if (st == GLP_OPT) {
      const double tv = glp_get_col_prim(lp, n + 1);
      for (int j = 0; j < n; j++) {
        const double y = glp_get_col_prim(lp, j + 1);
        /* The simplex honours bounds to a tolerance; y >= 0 is a bound we
         * can enforce exactly so that z >= t holds exactly. */
        z[j] = (y > 0.0 ? y : 0.0) + tv;
      }
      *t = tv;
      result = LP_OK;
    } else if (st == GLP_NOFEAS) {
      result = LP_INFEASIBLE;
    }
  }
  glp_delete_prob(lp);
  return result;
}

static int phase1_lp(int n, const double *M, const double *q, const double *rs,
                     int *ia, int *ja, double *ar, double *z, double *t) {
  lp_args a = {n, M, q, rs, NULL, ia, ja, ar, z, t, NULL, NULL, 0};
  return glpk_guarded(phase1_body, &a);
}

/// The face LP's time limit in ms: `time_limit` seconds when the caller
/// sets one, else none (INT_MAX, GLPK's default): the LP is bounded by its
/// iteration cap, 20 n + 2000, so that its end does not depend on the
/// machine's speed or load. (Until session 19 the automatic limit was
/// 10 s + 20 ms per row, a clock limit that made planner trees differ
/// between a loaded and a quiet machine.)
static int face_time_ms(double time_limit) {
  if (!(time_limit > 0.0)) return INT_MAX;
  return time_limit >= 2e6 ? 2000000000 : (int)(1000.0 * time_limit);
}

/// Crossover LP (see "Finishing exactly" in the file comment): a vertex of
/// the face F(P) = {z >= 0 : z_j = 0 (j not in P), (M z + q)_i = 0 (i in P),
/// (M z + q)_i >= 0 (i not in P)}, P[i] != 0 marking the partition. Every
/// point of F(P) solves (L1). On LP_OK writes zv[n] (the vertex, exact
/// zeros off its support) and lpb[n] (1: z_j basic in GLPK's final basis),
/// and when rowb is not NULL rowb[n] (1: row i's auxiliary variable, i.e.
/// w_i, basic; the other rows hold w_i at 0).
static int face_body(void *ctx) {
  const lp_args *a = ctx;
  const int n = a->n;
  const double *M = a->M, *q = a->q;
  const unsigned char *P = a->P;
  int *ia = a->ia, *ja = a->ja;
  double *ar = a->ar, *zv = a->z;
  unsigned char *lpb = a->lpb;
  int result = LP_FAILED;
  glp_prob *lp = glp_create_prob();
  glp_add_rows(lp, n);
  glp_add_cols(lp, n);
  int k = 0;
  for (int i = 0; i < n; i++)
    glp_set_row_bnds(lp, i + 1, P[i] ? GLP_FX : GLP_LO, -q[i], -q[i]);
  for (int j = 0; j < n; j++) {
    glp_set_col_bnds(lp, j + 1, P[j] ? GLP_LO : GLP_FX, 0.0, 0.0);
    if (!P[j]) continue; /* z_j = 0: its column does not matter */
    k = add_column(n, M + (size_t)j * (size_t)n, j, k, ia, ja, ar);
  }
  glp_load_matrix(lp, k, ia, ja, ar);
  if (cp_glpk_fault("fip crossover")) glp_error("complan: injected GLPK fault\n");
  glp_smcp parm;
  glp_init_smcp(&parm);
  parm.msg_lev = GLP_MSG_OFF;
  parm.presolve = GLP_OFF;
  parm.it_lim = 20 * n + 2000;
  parm.tm_lim = a->tm_lim;
  const int term = glp_term_out(GLP_OFF);
  glp_scale_prob(lp, GLP_SF_AUTO);
  glp_adv_basis(lp, 0);
  glp_term_out(term);
  const int rc = glp_simplex(lp, &parm);
  if (rc == 0 && glp_get_status(lp) == GLP_OPT) {
    for (int j = 0; j < n; j++) {
      const double v = P[j] ? glp_get_col_prim(lp, j + 1) : 0.0;
      zv[j] = v > 0.0 ? v : 0.0;
      lpb[j] = P[j] && glp_get_col_stat(lp, j + 1) == GLP_BS;
      if (a->rowb) a->rowb[j] = glp_get_row_stat(lp, j + 1) == GLP_BS;
    }
    result = LP_OK;
  } else if (rc == 0 && glp_get_status(lp) == GLP_NOFEAS) {
    result = LP_INFEASIBLE;
  }
  glp_delete_prob(lp);
  return result;
}

static int face_lp(int n, const double *M, const double *q,
                   const unsigned char *P, double time_limit, int *ia, int *ja,
                   double *ar, double *zv, unsigned char *lpb,
                   unsigned char *rowb) {
  lp_args a = {n, M, q, NULL, P, ia, ja, ar, zv, NULL, lpb, rowb,
               face_time_ms(time_limit)};
  return glpk_guarded(face_body, &a);
}

/* ------------------------------------------------------------------------ */
/* Phase II helpers                                                          */

static double dot(int n, const double *a, const double *b) {
  double s = 0.0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

static double vmin(int n, const double *a) {
  double m = INFINITY;
  for (int i = 0; i < n; i++)
    if (a[i] < m) m = a[i];
  return m;
}

static int all_finite(int n, const double *a) {
  for (int i = 0; i < n; i++)
    if (!isfinite(a[i])) return 0;
  return 1;
}

/// Fills the info fields derived from (z, w) without touching status/reason.
static void fill_measures(int n, const double *M, const double *q,
                          const double *z, const double *w,
                          const cp_check_options *chk, cp_lcp_info *info) {
  char keep[sizeof info->reason];
  memcpy(keep, info->reason, sizeof keep);
  (void)cp_lcp_check(n, M, q, z, w, chk, info);
  memcpy(info->reason, keep, sizeof keep);
}

/// Second chance for polishing when cp_lcp_polish declined. cp_lcp_polish
/// compares min(M z + q) of the basic solution with 0 exactly, so a
/// rounding-level negative (-1e-15 in a w that is 0 by construction) makes it
/// refuse an exact answer. Here the basic solution of the same basis is kept
/// if it passes cp_lcp_check, is no worse in complementarity, and is
/// nonnegative up to a rounding bound eps = 64 u (|q| + |M| |z|). (Once
/// cp_lcp_polish accepts such pairs this path is simply never taken.)
/// zz, ww [n], basis [n]: workspace.
static int polish_fallback(int n, const double *M, const double *q,
                           double *z, double *w, const cp_check_options *chk,
                           unsigned char *basis, double *zz, double *ww) {
  for (int i = 0; i < n; i++) basis[i] = z[i] > w[i];
  if (cp_lcp_solve_basis(n, M, q, basis, zz, ww) != 0) return 0;
  cp_lcp_info a, b;
  cp_lcp_info_clear(&a);
  cp_lcp_info_clear(&b);
  if (!cp_lcp_check(n, M, q, zz, ww, chk, &b)) return 0;
  (void)cp_lcp_check(n, M, q, z, w, chk, &a);
  double qn = 0.0, mn = 0.0, zn = 0.0;
  for (int i = 0; i < n; i++) {
    double r = 0.0;
    for (int j = 0; j < n; j++) r += fabs(M[i + (size_t)j * (size_t)n]);
    if (r > mn) mn = r;
    if (fabs(q[i]) > qn) qn = fabs(q[i]);
    if (fabs(zz[i]) > zn) zn = fabs(zz[i]);
  }
  const double eps = 64.0 * DBL_EPSILON * (qn + mn * zn);
  if (b.complementarity <= a.complementarity && b.min_z >= -eps &&
      b.min_w >= -eps) {
    memcpy(z, zz, sizeof(double) * (size_t)n);
    memcpy(w, ww, sizeof(double) * (size_t)n);
    return 1;
  }
  return 0;
}

/// The face LP's vertex solved from its own basis: the basic z_j (lpb)
/// are the unknowns, and the rows whose w_i is nonbasic (rowb[i] = 0, held
/// at 0 by the LP) the equations, as many as unknowns in a simplex basis:
/// M[N, B] z_B = -q_N by one LU solve, z = 0 off B, w = M z + q. This is the
/// vertex exact to rounding where GLPK's values meet the rows only to its
/// tolerance, also when no complementary basis solves the vertex (a
/// degenerate face: a row i in P with z_i = 0 and w_i basic in the LP).
/// Writes (z, w); returns 0, -1 (not square or singular), -2 (memory).
static int vertex_solve(int n, const double *M, const double *q,
                        const unsigned char *lpb, const unsigned char *rowb,
                        double *z, double *w) {
  int k = 0, r = 0;
  for (int i = 0; i < n; i++) {
    k += lpb[i] != 0;
    r += rowb[i] == 0;
  }
  if (k != r) return -1;
  if (k == 0) { /* z = 0 */
    for (int i = 0; i < n; i++) z[i] = 0.0;
    cp_lcp_eval(n, M, q, z, w);
    return 0;
  }
  int *idx = malloc(sizeof(int) * 2 * (size_t)k);
  lapack_int *piv = malloc(sizeof(lapack_int) * (size_t)k);
  double *A = malloc(sizeof(double) * ((size_t)k * (size_t)k + (size_t)k));
  if (!idx || !piv || !A) {
    free(idx); free(piv); free(A);
    return -2;
  }
  int *B = idx, *N = idx + k, nb = 0, nr = 0;
  for (int i = 0; i < n; i++) {
    if (lpb[i]) B[nb++] = i;
    if (!rowb[i]) N[nr++] = i;
  }
  double *rhs = A + (size_t)k * (size_t)k;
  for (int c = 0; c < k; c++)
    for (int t = 0; t < k; t++)
      A[t + (size_t)c * (size_t)k] = M[N[t] + (size_t)B[c] * (size_t)n];
  for (int t = 0; t < k; t++) rhs[t] = -q[N[t]];
  const lapack_int rc = LAPACKE_dgesv(LAPACK_COL_MAJOR, k, 1, A, k, piv, rhs, k);
  int result = -1;
  if (rc == 0 && all_finite(k, rhs)) {
    for (int i = 0; i < n; i++) z[i] = 0.0;
    for (int c = 0; c < k; c++) z[B[c]] = rhs[c];
    cp_lcp_eval(n, M, q, z, w);
    result = 0;
  }
  free(idx); free(piv); free(A);
  return result;
}

/// The crossover (file comment): partition P = {i : z_i > w_i} from the
/// converged iterate (z, w), a vertex of F(P) by face_lp, then two exact
/// candidates: the vertex's own basis solved by cp_lcp_solve_basis, and the
/// vertex itself polished (cp_lcp_polish). The first that passes the check
/// replaces (z, w) and fills *info; returns 2 for a basis solution (exact to
/// rounding), 1 for the LP vertex that polishing declined. Otherwise (z, w)
/// and *info are left as they were; returns 0. basis: 2n bytes; zt, wt, zb, wb [n];
/// ia, ja, ar as for phase1_lp.
static int face_crossover(int n, const double *M, const double *q,
                          const cp_check_options *chk, const unsigned char *P,
                          double time_limit, unsigned char *lpb,
                          unsigned char *rowb, int *ia,
                          int *ja, double *ar, double *z, double *w, double *zt,
                          double *wt, double *zb, double *wb,
                          cp_lcp_info *info) {
  if (face_lp(n, M, q, P, time_limit, ia, ja, ar, zt, lpb, rowb) != LP_OK)
    return 0;
  cp_lcp_info ci;
  cp_lcp_info_clear(&ci);
  int exact = 1;
  if ((cp_lcp_solve_basis(n, M, q, lpb, zb, wb) == 0 &&
       cp_lcp_check(n, M, q, zb, wb, chk, &ci)) ||
      (rowb && vertex_solve(n, M, q, lpb, rowb, zb, wb) == 0 &&
       cp_lcp_check(n, M, q, zb, wb, chk, &ci))) {
    memcpy(z, zb, sizeof(double) * (size_t)n);
    memcpy(w, wb, sizeof(double) * (size_t)n);
  } else {
    cp_lcp_eval(n, M, q, zt, wt);
    exact = cp_lcp_polish(n, M, q, zt, wt, chk);
    if (!cp_lcp_check(n, M, q, zt, wt, chk, &ci)) return 0;
    memcpy(z, zt, sizeof(double) * (size_t)n);
    memcpy(w, wt, sizeof(double) * (size_t)n);
  }
  const int iters = info->iterations;
  (void)cp_lcp_check(n, M, q, z, w, chk, info);
  info->iterations = iters;
  return exact ? 2 : 1;
}

/// FIP's own crossover: the partition of its iterate (z, w).
static int crossover(int n, const double *M, const double *q,
                     const cp_check_options *chk, double time_limit,
                     unsigned char *basis, int *ia, int *ja, double *ar,
                     double *z, double *w, double *zt, double *wt, double *zb,
                     double *wb, cp_lcp_info *info) {
  unsigned char *P = basis;
  for (int i = 0; i < n; i++) P[i] = z[i] > w[i];
  return face_crossover(n, M, q, chk, P, time_limit, basis + n, NULL, ia, ja,
                        ar, z, w, zt, wt, zb, wb, info);
}

int cp_fip_face_crossover(int n, const double *M, const double *q,
                          const unsigned char *P, double time_limit,
                          const cp_check_options *chk, double *z, double *w,
                          cp_lcp_info *info) {
  if (n < 1 || !M || !q || !P || !z || !w || !info || !(time_limit >= 0.0))
    return 0;
  const cp_check_options def = cp_check_defaults();
  if (!chk) chk = &def;
  const size_t nnz = (size_t)n * (size_t)(n + 1) + 1;
  unsigned char *lpb = malloc(2 * (size_t)n);
  int *ia = malloc(sizeof(int) * nnz);
  int *ja = malloc(sizeof(int) * nnz);
  double *ar = malloc(sizeof(double) * nnz);
  double *tmp = malloc(sizeof(double) * 4 * (size_t)n);
  int c = -1;
  if (lpb && ia && ja && ar && tmp)
    c = face_crossover(n, M, q, chk, P, time_limit, lpb, lpb + n, ia, ja, ar,
                       z, w, tmp,
                       tmp + n, tmp + 2 * n, tmp + 3 * n, info);
  free(lpb); free(ia); free(ja); free(ar); free(tmp);
  return c;
}

static cp_lcp_status finish(cp_lcp_info *info, cp_lcp_status st) {
  info->status = st;
  if (st == CP_LCP_SOLVED) info->reason[0] = '\0';
  return st;
}

cp_lcp_status cp_fip_solve(int n, const double *M, const double *q,
                           const cp_fip_options *opt, double *z, double *w,
                           cp_lcp_info *info) {
  cp_lcp_info_clear(info);
  info->solver = CP_SOLVER_FIP;
  info->starts = 1;

  cp_fip_options o = opt ? *opt : cp_fip_defaults();
  if (n < 1 || !M || !q || !z || !w || o.max_iter < 0 || !(o.gap_tol > 0.0) ||
      !(o.beta >= 0.0 && o.beta < 1.0) || !(o.zeta >= 0.0) ||
      !(o.kappa > 0.0 && o.kappa < 1.0) || !(o.rho > 0.0 && o.rho < 1.0) ||
      !(o.sigma > 0.0 && o.sigma < 1.0) || !(o.nfp_tol >= 0.0) ||
      !(o.face_time_limit >= 0.0)) {
    snprintf(info->reason, sizeof info->reason, "invalid FIP arguments");
    if (n >= 1 && z && w)
      for (int i = 0; i < n; i++) z[i] = w[i] = 0.0;
    return finish(info, CP_LCP_NUMERICAL);
  }
  const double zeta = o.zeta > 0.0 ? o.zeta : sqrt((double)n);
  const double beta = o.beta;
  const size_t nn = (size_t)n * (size_t)n;
  for (size_t k = 0; k < nn; k++)
    if (!isfinite(M[k])) {
      snprintf(info->reason, sizeof info->reason, "M has a non-finite entry");
      for (int i = 0; i < n; i++) z[i] = w[i] = 0.0;
      return finish(info, CP_LCP_NUMERICAL);
    }
  if (!all_finite(n, q)) {
    snprintf(info->reason, sizeof info->reason, "q has a non-finite entry");
    for (int i = 0; i < n; i++) z[i] = w[i] = 0.0;
    return finish(info, CP_LCP_NUMERICAL);
  }

  /* All workspace, once: A (n*n), 8 vectors, pivots, GLPK triplets. */
  const size_t nnz = (size_t)n * (size_t)(n + 1) + 1;
  double *A = malloc(sizeof(double) * (nn + 8 * (size_t)n));
  lapack_int *piv = malloc(sizeof(lapack_int) * (size_t)n);
  unsigned char *basis = malloc(2 * (size_t)n); /* crossover: P, LP basis */
  int *ia = malloc(sizeof(int) * nnz);
  int *ja = malloc(sizeof(int) * nnz);
  double *ar = malloc(sizeof(double) * nnz);
  if (!A || !piv || !basis || !ia || !ja || !ar) {
    free(A); free(piv); free(basis); free(ia); free(ja); free(ar);
    snprintf(info->reason, sizeof info->reason, "out of memory");
    for (int i = 0; i < n; i++) z[i] = w[i] = 0.0;
    return finish(info, CP_LCP_NOMEM);
  }
  double *dz = A + nn;      /* Newton direction in z (rhs on input)   */
  double *dw = dz + n;      /* M dz                                   */
  double *zt = dw + n;      /* trial z                                */
  double *wt = zt + n;      /* trial w                                */
  double *rs = wt + n;      /* row sums M e (phase I), row scales     */
  double *rowmax = rs + n;  /* max_j |M_ij|                           */
  double *wr = rowmax + n;  /* w recomputed from z                    */
  double *dscale = wr + n;  /* row equilibration of W + Z M           */

  cp_lcp_status status = CP_LCP_NUMERICAL;
  for (int i = 0; i < n; i++) {
    rs[i] = 0.0;
    rowmax[i] = 0.0;
  }
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      const double a = M[i + (size_t)j * (size_t)n];
      rs[i] += a;
      if (fabs(a) > rowmax[i]) rowmax[i] = fabs(a);
    }

  /* ---- Phase I ---------------------------------------------------------- */
  double tstar = 0.0;
  int lprc = phase1_lp(n, M, q, rs, ia, ja, ar, z, &tstar);
  if (lprc == LP_GLPK_ERROR) {
    snprintf(info->reason, sizeof info->reason,
             "GLPK internal error in phase I (caught)");
    for (int i = 0; i < n; i++) z[i] = w[i] = 0.0;
    status = CP_LCP_NUMERICAL;
    goto done;
  }
  if (lprc == LP_INFEASIBLE) {
    snprintf(info->reason, sizeof info->reason,
             "no strictly feasible point (phase I LP infeasible: no z >= 0 "
             "with M z + q >= 0)");
    for (int i = 0; i < n; i++) z[i] = 0.0;
    cp_lcp_eval(n, M, q, z, w);
    status = CP_LCP_NO_STRICT_FEASIBLE;
    goto done;
  }
  if (lprc != LP_OK) {
    snprintf(info->reason, sizeof info->reason,
             "phase I LP not solved by GLPK");
    for (int i = 0; i < n; i++) z[i] = w[i] = 0.0;
    status = CP_LCP_NUMERICAL;
    goto done;
  }
  cp_lcp_eval(n, M, q, z, w);
  if (!(tstar > o.nfp_tol)) {
    snprintf(info->reason, sizeof info->reason,
             "no strictly feasible point (phase I t* = %.3g)", tstar);
    status = CP_LCP_NO_STRICT_FEASIBLE;
    goto done;
  }
  {
    /* The LP honours its rows only to GLPK's tolerance: the point must be
     * strictly positive in exact evaluation, not just per the LP. */
    const double mz = vmin(n, z), mw = vmin(n, w);
    if (!(mz > 0.0 && mw > 0.0) || !all_finite(n, w)) {
      snprintf(info->reason, sizeof info->reason,
               "no strictly feasible point (phase I t* = %.3g, but min(z, "
               "M z + q) = %.3g after rounding)",
               tstar, fmin(mz, mw));
      status = CP_LCP_NO_STRICT_FEASIBLE;
      goto done;
    }
  }

  /* ---- Phase II ---------------------------------------------------------- */
  double gap = dot(n, w, z);
  int it = 0;
  for (;;) {
    if (!isfinite(gap)) {
      snprintf(info->reason, sizeof info->reason,
               "non-finite complementarity gap at iteration %d", it);
      status = CP_LCP_NUMERICAL;
      goto done;
    }
    if (gap <= o.gap_tol) break;
    if (it >= o.max_iter) {
      snprintf(info->reason, sizeof info->reason,
               "iteration cap %d reached (w^T z = %.3g > %.3g)", o.max_iter,
               gap, o.gap_tol);
      status = CP_LCP_ITERATION_CAP;
      goto done;
    }
    const double mu = gap / n;

    /* A = D (W + Z M), rhs = D (beta mu e - w o z), with the row scale
     * D_ii = 1 / (w_i + z_i max_j |M_ij|) so that partial pivoting sees rows
     * of comparable size (the solution dz is unchanged). */
    for (int i = 0; i < n; i++) {
      double s = w[i] + z[i] * rowmax[i];
      dscale[i] = s > 0.0 ? 1.0 / s : 1.0;
      dz[i] = dscale[i] * (beta * mu - w[i] * z[i]);
    }
    for (int j = 0; j < n; j++) {
      const double *mc = M + (size_t)j * (size_t)n;
      double *ac = A + (size_t)j * (size_t)n;
      for (int i = 0; i < n; i++) ac[i] = dscale[i] * z[i] * mc[i];
      ac[j] += dscale[j] * w[j];
    }
    /* The one LU factorisation of this iteration. */
    lapack_int lrc = LAPACKE_dgetrf(LAPACK_COL_MAJOR, n, n, A, n, piv);
    if (lrc != 0) {
      snprintf(info->reason, sizeof info->reason,
               "Newton matrix W + Z M singular at iteration %d (dgetrf "
               "info %d)",
               it, (int)lrc);
      status = CP_LCP_NUMERICAL;
      goto done;
    }
    lrc = LAPACKE_dgetrs(LAPACK_COL_MAJOR, 'N', n, 1, A, n, piv, dz, n);
    if (lrc != 0 || !all_finite(n, dz)) {
      snprintf(info->reason, sizeof info->reason,
               "Newton direction not finite at iteration %d", it);
      status = CP_LCP_NUMERICAL;
      goto done;
    }
    /* dw = M dz: w stays M z + q along the step. */
    cblas_dgemv(CblasColMajor, CblasNoTrans, n, n, 1.0, M, n, dz, 1, 0.0, dw,
                1);
    if (!all_finite(n, dw)) {
      snprintf(info->reason, sizeof info->reason,
               "M dz not finite at iteration %d", it);
      status = CP_LCP_NUMERICAL;
      goto done;
    }

    /* theta_hat: largest step in (0, 1] keeping (w, z) >= 0. */
    double th = 1.0;
    for (int i = 0; i < n; i++) {
      if (dw[i] < 0.0 && -w[i] / dw[i] < th) th = -w[i] / dw[i];
      if (dz[i] < 0.0 && -z[i] / dz[i] < th) th = -z[i] / dz[i];
    }
    const double theta0 = o.kappa * th;

    /* Armijo backtracking on psi (F3), via the increment
     *   dpsi = (n + zeta) log(gap_new / gap) - sum log(1 + theta dw_i / w_i)
     *                                        - sum log(1 + theta dz_i / z_i).
     * gap_new / gap = 1 + theta a + theta^2 b with a = (w^T dz + z^T dw)/gap,
     * b = dw^T dz / gap. */
    const double a1 = (dot(n, w, dz) + dot(n, z, dw)) / gap;
    const double b1 = dot(n, dw, dz) / gap;
    double theta = theta0;
    int accepted = 0;
    for (int m = 0; m <= CP_FIP_MAX_BACKTRACK; m++, theta *= o.rho) {
      if (!(theta > 0.0)) break;
      const double rg = theta * a1 + theta * theta * b1; /* gap ratio - 1 */
      if (!(rg > -1.0)) continue; /* would make w^T z <= 0: step too long */
      double dpsi = (n + zeta) * log1p(rg);
      int ok = 1;
      for (int i = 0; i < n; i++) {
        const double rw = theta * dw[i] / w[i];
        const double rz = theta * dz[i] / z[i];
        if (!(rw > -1.0) || !(rz > -1.0)) { ok = 0; break; }
        dpsi -= log1p(rw) + log1p(rz);
      }
      if (!ok || !isfinite(dpsi)) continue;
      if (dpsi <= -o.sigma * (1.0 - beta) * zeta * theta) {
        accepted = 1;
        break;
      }
    }
    if (!accepted) {
      snprintf(info->reason, sizeof info->reason,
               "line search failed at iteration %d (w^T z = %.3g, "
               "theta0 = %.3g, %d backtracks)",
               it, gap, theta0, CP_FIP_MAX_BACKTRACK);
      status = CP_LCP_NUMERICAL;
      goto done;
    }
    for (int i = 0; i < n; i++) {
      zt[i] = z[i] + theta * dz[i];
      wt[i] = w[i] + theta * dw[i];
    }
    /* Guard against rounding pushing an entry to 0 (log1p(rw) > -inf held
     * above, but z + theta dz is evaluated separately). */
    if (!(vmin(n, zt) > 0.0) || !(vmin(n, wt) > 0.0)) {
      snprintf(info->reason, sizeof info->reason,
               "iterate left the positive orthant at iteration %d", it);
      status = CP_LCP_NUMERICAL;
      goto done;
    }
    memcpy(z, zt, sizeof(double) * (size_t)n);
    memcpy(w, wt, sizeof(double) * (size_t)n);
    ++it;
    info->iterations = it;
    if (o.poll) o.poll(o.poll_ctx); /* sees nothing, changes nothing */

    if (it % CP_FIP_REFRESH == 0) {
      /* Stop drift of w from M z + q. A component whose exact value is not
       * positive (it is at rounding level) keeps its updated value. */
      cp_lcp_eval(n, M, q, z, wr);
      for (int i = 0; i < n; i++)
        if (wr[i] > 0.0 && isfinite(wr[i])) w[i] = wr[i];
    }
    gap = dot(n, w, z);
  }

  /* ---- Converged: polish, check, cross over ------------------------------- */
  int polished = 0;
  if (o.polish)
    polished = cp_lcp_polish(n, M, q, z, w, &o.check) ||
               polish_fallback(n, M, q, z, w, &o.check, basis, zt, wt);
  if (cp_lcp_check(n, M, q, z, w, &o.check, info)) {
    status = CP_LCP_SOLVED;
  } else {
    status = CP_LCP_CHECK_FAILED; /* cp_lcp_check wrote the reason */
    const int c = o.polish && o.crossover
                      ? crossover(n, M, q, &o.check, o.face_time_limit, basis,
                                  ia, ja, ar, z, w, zt, wt, dz, dw, info)
                      : 0;
    if (c) status = CP_LCP_SOLVED;
    polished = c == 2;
  }
  /* Accepted but not exact (the iterate inside a face of solutions, whose
   * support basis is singular): the crossover's vertex, if it is a basis
   * solution, replaces it; else the answer stays, flagged unpolished. */
  if (status == CP_LCP_SOLVED && !polished && o.polish && o.crossover &&
      crossover(n, M, q, &o.check, o.face_time_limit, basis, ia, ja, ar, z, w,
                zt, wt, dz, dw, info) == 2)
    polished = 1;
  info->polished = status == CP_LCP_SOLVED && polished;
  free(A); free(piv); free(basis); free(ia); free(ja); free(ar);
  return finish(info, status);

done:
  fill_measures(n, M, q, z, w, &o.check, info);
  free(A); free(piv); free(basis); free(ia); free(ja); free(ar);
  return finish(info, status);
}
