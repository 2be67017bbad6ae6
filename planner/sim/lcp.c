// The friction LCP of every stepper (planner/sim/world_impl.h): its rows
// and columns formed from the selected contact-space block (lcp_column), and
// solved from the warm basis by a small LU and principal pivots
// (warm_accept), by Lemke warm then cold, or by the world's solver.
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/lemke.h"
#include "models/clock.h"
#include "models/grow.h"
#include "planner/sim/world_impl.h"

// ---------------------------------------------------------------------------
// LCP solving

static void lcp_column(const cp_world *w, int col, double *out);

// Dense LU with partial pivoting of the k x k column-major A, in place, for
// the warm basis's small systems (a resting box's k is 4, a 3-box stack's
// 12): OpenBLAS's dgesv costs more in call overhead than the factorisation
// there (measured: 2 900 instructions of a 4 x 4 solve). Larger k go to
// LAPACK. Returns 0, or -1 when a pivot is zero (or not a number).
static inline __attribute__((always_inline)) int lu_small(int k, double *A,
                                                          lapack_int *piv) {
  for (int j = 0; j < k; ++j) {
    double *cj = A + (size_t)j * k;
    int p = j;
    double best = fabs(cj[j]);
    for (int i = j + 1; i < k; ++i)
      if (fabs(cj[i]) > best) best = fabs(cj[p = i]);
    if (!(best > 0)) return -1;
    piv[j] = p;
    if (p != j)
      for (int c = 0; c < k; ++c) {
        double *cc = A + (size_t)c * k, t = cc[j];
        cc[j] = cc[p];
        cc[p] = t;
      }
    const double d = cj[j];
    for (int i = j + 1; i < k; ++i) cj[i] /= d;
    for (int c = j + 1; c < k; ++c) {
      double *cc = A + (size_t)c * k;
      const double f = cc[j];
      if (f != 0)
        for (int i = j + 1; i < k; ++i) cc[i] -= cj[i] * f;
    }
  }
  return 0;
}

static inline __attribute__((always_inline)) void
lu_small_solve(int k, const double *A, const lapack_int *piv, double *x) {
  cp_wi_lu_permute(k, piv, x);
  for (int j = 0; j < k; ++j) { // L, unit diagonal, by columns
    const double *cj = A + (size_t)j * k, xj = x[j];
    if (xj != 0)
      for (int i = j + 1; i < k; ++i) x[i] -= cj[i] * xj;
  }
  for (int j = k - 1; j >= 0; --j) { // U
    const double *cj = A + (size_t)j * k;
    x[j] /= cj[j];
    const double xj = x[j];
    for (int i = 0; i < j; ++i) x[i] -= cj[i] * xj;
  }
}

// A resting box's basis has k = 4 (its four corners' normals): the loops
// unrolled at that size (a constant k: the same operations in the same
// order, so the same bits) take a third of the instructions. The other
// constant sizes are frequent bases of the benchmark's scenes (a 3-box
// stack 12, a box sliding down an incline under the velocity stepper 16,
// one resting on it 18, a 10-box stack 40): 10-18 % fewer instructions
// in the LU there (experiments/results/mujoco.md, session 14).
// band: the band factor's widths (sparse.c: a large banded basis), or -1.
static int lu_factor(int k, double *A, lapack_int *piv, int band[2]) {
  band[0] = -1;
  switch (k) {
  case 4: return lu_small(4, A, piv);
  case 12: return lu_small(12, A, piv);
  case 16: return lu_small(16, A, piv);
  case 18: return lu_small(18, A, piv);
  case 40: return lu_small(40, A, piv);
  default: break;
  }
  if (k <= CP_WORLD_SMALL_LU) return lu_small(k, A, piv);
  const int rc = cp_wi_band_factor(k, A, piv, band);
  if (rc <= 0) return rc;
  return LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, k, k, A, k, piv) ? -1 : 0;
}

static int lu_solve(int k, const double *A, const lapack_int *piv, const int band[2],
                    double *x) {
  switch (k) {
  case 4: lu_small_solve(4, A, piv, x); return 0;
  case 12: lu_small_solve(12, A, piv, x); return 0;
  case 16: lu_small_solve(16, A, piv, x); return 0;
  case 18: lu_small_solve(18, A, piv, x); return 0;
  case 40: lu_small_solve(40, A, piv, x); return 0;
  default: break;
  }
  if (k <= CP_WORLD_SMALL_LU) {
    lu_small_solve(k, A, piv, x);
    return 0;
  }
  if (band[0] >= 0) return cp_wi_band_solve(k, A, piv, band, x);
  return LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', k, 1, A, k, piv, x, k) ? -1
                                                                           : 0;
}

// lu_factor of the small basic block in w->LU (8 <= k <= 24),
// remembered: when the block is, bit for bit, the one factorised last, its
// factor and pivots are copied back instead of computed again. The same
// operations on the same numbers gave them, so the same bits. A resting
// stack's block comes out of the contact space with the same bits on most
// steps although the bodies moved by rounding (a 3-box stack on 91 steps of
// 100, 5 boxes on about half, 10 boxes on a tenth). Below k = 8 (a single
// box's 4) the factorisation costs about what the comparison and copies do;
// above k = 24 the block changes on most steps and the two copies made then
// (each k^2 doubles) cost more than the few factorisations saved (10 boxes,
// k = 40: 2.5 % more instructions a step).
#define CP_WORLD_LU_MEMO 8
#define CP_WORLD_LU_MEMO_MAX 24
// A remembered factor is a dense one: lu_factor never takes the band path
// at these sizes (band[0] = -1 on a hit).
_Static_assert(CP_WORLD_LU_MEMO_MAX <= CP_WORLD_SMALL_LU,
               "the LU memo keeps dense factors only");
static int lu_factor_memo(cp_world *w, int k, int band[2]) {
  const size_t kk = (size_t)k * (size_t)k;
  if (k < CP_WORLD_LU_MEMO || k > CP_WORLD_LU_MEMO_MAX || w->lum_off)
    return lu_factor(k, w->LU, w->ipiv, band);
  if (!w->lum_in) {
    const size_t q = (size_t)CP_WORLD_LU_MEMO_MAX * CP_WORLD_LU_MEMO_MAX;
    w->lum_in = malloc(sizeof(double) * 2 * q + sizeof(lapack_int) * CP_WORLD_LU_MEMO_MAX);
    if (!w->lum_in) return lu_factor(k, w->LU, w->ipiv, band);
    w->lum_out = w->lum_in + q;
    w->lum_piv = (lapack_int *)(w->lum_out + q);
    w->lum_k = -1;
  }
  band[0] = -1;
  if (w->lum_k == k && !memcmp(w->lum_in, w->LU, sizeof(double) * kk)) {
    memcpy(w->LU, w->lum_out, sizeof(double) * kk);
    memcpy(w->ipiv, w->lum_piv, sizeof(lapack_int) * (size_t)k);
    w->lum_miss = 0;
    ++w->lum_hits;
    return 0;
  }
  // A bin's islands (many blocks a step, few repeating) miss on most
  // calls: after 8 misses in a row only every 8th block is kept.
  if (++w->lum_miss > 8 && (w->lum_miss & 7)) return lu_factor(k, w->LU, w->ipiv, band);
  memcpy(w->lum_in, w->LU, sizeof(double) * kk);
  const int rc = lu_factor(k, w->LU, w->ipiv, band);
  w->lum_k = rc ? -1 : k;
  if (!rc) {
    memcpy(w->lum_out, w->LU, sizeof(double) * kk);
    memcpy(w->lum_piv, w->ipiv, sizeof(lapack_int) * (size_t)k);
  }
  return rc;
}

void cp_wi_lu_memo_enable(cp_world *w, int on) { w->lum_off = !on; }

long cp_wi_lu_memo_hits(const cp_world *w) { return w->lum_hits; }

void cp_wi_lambda_skip_enable(cp_world *w, int on) { w->lam_off = !on; }

long cp_wi_lambda_skip_taken(const cp_world *w) { return w->lam_taken; }

int cp_wi_lu_factor(int k, double *A, lapack_int *piv, int band[2]) {
  return lu_factor(k, A, piv, band);
}

int cp_wi_lu_solve(int k, const double *A, const lapack_int *piv, const int band[2],
                   double *x) {
  return lu_solve(k, A, piv, band, x);
}

// The previous step's basis, repaired by a few principal pivots: z_B =
// -M_BB^-1 q_B, z_N = 0 (a small LU of the basic columns, one step of
// iterative refinement: with the compliance a stack's basis is regular but
// ill-conditioned, its redundant corner rows differing by kappa), accepted
// when z_B >= -tol (tol = 1e-11 max(1, |q|_inf); negative parts clamped to
// 0) and, row by row, w = M z + q passes the solution check of docs/math.md
// section 5 with its own scale s_i = sum_j |M_ij| |z_j| + |q_i|: nonbasic
// w_i >= -1e-10 s_i, basic |w_i| <= rel_tol s_i (then reported as 0;
// complementarity is exact by construction), each widened by the check's
// rounding allowance only where the row fails without it (below).
// When the basis does not fit (a contact starts or stops sliding, a new
// contact closes, or in an ill-conditioned resting basis a degenerate
// variable's rounding noise crosses the tolerance), the most negative basic
// z_j leaves the basis, or else the nonbasic w_i most negative relative to
// its scale enters it, and the system is solved again: Murty's principal
// pivoting, at most CP_WORLD_WARM_PIVOTS times (it is not guaranteed to
// terminate on these matrices; on the planner's push most changed bases
// are repaired in one to three pivots instead of a cold solve of twenty),
// and then solve_friction runs Lemke from the recorded basis, then cold.
// At rest the basis fits as it
// is, and that matters beyond saving pivots: with redundant contacts (four
// corners on a face) it holds variables at exactly zero, which rounding in q
// makes -1e-18, and Lemke's warm start would then pivot (and on the paper's
// non-copositive pyramid sometimes end on a secondary ray) for nothing.
// Only the basic columns of M are needed, and M is not formed here: they
// come from lcp_column (the whole n x n matrix and the check's three passes
// over it were a third of a resting stack's step). Call after lcp_setup;
// the principal pivots taken go to *pivots (also when it gives up).
// sum_b |M_iB_b| over the k basic columns MB (n x k).
typedef struct {
  const double *MB;
  int n, k;
} dense_l1;

static inline __attribute__((always_inline)) double dense_row_l1(void *ctx, int i) {
  const dense_l1 *d = ctx;
  double s = 0;
  for (int b = 0; b < d->k; ++b) s += fabs(d->MB[i + (size_t)b * d->n]);
  return s;
}

// The accepted basis's answer: w (r = w->w) with the basic rows' residual
// reported and set to 0, z scattered from z_B (z[0..k), zidx increasing),
// and info (pivots: the principal pivots taken).
static inline __attribute__((always_inline)) void
warm_finish(cp_world *w, int n, int k, int pivots, cp_lcp_info *info) {
  double *r = w->w, *zb = w->z;
  double res = 0, minw = INFINITY;
  for (int i = 0; i < n; ++i) {
    if (w->basis[i]) {
      res = MAXD(res, fabs(r[i]));
      r[i] = 0;
    } else if (r[i] < 0) {
      r[i] = 0;
    }
    minw = MIND(minw, r[i]);
  }
  // Scatter z_B (z[0..k)) from the back: zidx is increasing.
  for (int a = k - 1; a >= 0; --a) {
    const double v = zb[a];
    const int i = w->zidx[a];
    for (int j = a > 0 ? w->zidx[a - 1] + 1 : 0; j < i; ++j) w->z[j] = 0;
    w->z[i] = v;
  }
  for (int j = k > 0 ? w->zidx[k - 1] + 1 : 0; j < n; ++j) w->z[j] = 0;
  cp_lcp_info_clear(info);
  info->status = CP_LCP_SOLVED;
  info->solver = CP_SOLVER_LEMKE;
  info->starts = 1;
  info->iterations = pivots;
  info->residual = res;
  info->min_z = 0; // z_B was clamped to >= 0, z_N = 0
  info->min_w = minw;
}

static inline __attribute__((always_inline)) int
warm_accept_n(cp_world *w, int n, cp_lcp_info *info, int *pivots) {
  int k;
  const double tol = cp_wi_warm_basis(w, n, &k), rel = w->opt.solve.lemke.check.rel_tol;
  double *MB = w->MB; // M[:, B], n x k (columns in zidx order)
  for (int b = 0; b < k; ++b) lcp_column(w, w->zidx[b], MB + (size_t)b * n);
  double *zb = w->z, *r = w->w, *sc = w->LU; // z_B in z[0..k); scratch
  *pivots = 0; // also when the repair gives up: they were done
  for (;; ++*pivots) {
    if (k > 0) {
      for (int b = 0; b < k; ++b)
        for (int a = 0; a < k; ++a)
          w->LU[a + (size_t)b * k] = MB[w->zidx[a] + (size_t)b * n];
      for (int a = 0; a < k; ++a) zb[a] = -w->q[w->zidx[a]];
      int band[2];
      if (lu_factor_memo(w, k, band) || lu_solve(k, w->LU, w->ipiv, band, zb))
        return 0;
      for (int a = 0; a < k; ++a) r[a] = -w->q[w->zidx[a]];
      for (int b = 0; b < k; ++b) {
        const double zv = zb[b], *col = MB + (size_t)b * n;
        for (int a = 0; a < k; ++a) r[a] -= col[w->zidx[a]] * zv;
      }
      if (lu_solve(k, w->LU, w->ipiv, band, r)) return 0;
    }
    const int worst = cp_wi_warm_refine(zb, r, k, tol);
    if (worst == -2) return 0;
    if (worst >= 0) { // z_j leaves
      if (*pivots == CP_WORLD_WARM_PIVOTS) return 0;
      cp_wi_warm_leave(w, zb, k, worst);
      memmove(MB + (size_t)worst * n, MB + (size_t)(worst + 1) * n,
              sizeof(double) * (size_t)n * (size_t)(k - 1 - worst));
      --k;
      continue;
    }
    // w = M_B z_B + q and the row scales, in one pass over the k columns
    // (r = w->w takes w, sc the LU block's storage). The lambda rows
    // [nb, n) of a column are +0 but for one (a c_n's mu, a corner's -1 in
    // its contact's row; none in a lambda's column): only that one is
    // added. Leaving out the others' terms, +0 (z_b > 0, finite: refine
    // returned otherwise), changes no bit: x + +0 = x for every x but -0,
    // and a lambda row's w never is -0 -- it starts at q = +0 (lcp_setup;
    // fixed_q adds v mu >= +0), and a sum is -0 only when both terms are.
    // sc's terms are all >= +0, as is its start |q|.
    const double zmax = cp_wi_warm_clamp(w, n, k, zb, r, sc);
    const int ns = w->lns, nb = w->lam_off ? n : n - w->lnr;
    w->lam_taken += nb < n;
    for (int b = 0; b < k; ++b) {
      const double zv = zb[b], az = fabs(zv), *col = MB + (size_t)b * n;
      if (zv == 0) continue;
      for (int i = 0; i < nb; ++i) {
        r[i] += col[i] * zv;
        sc[i] += fabs(col[i]) * az;
      }
      const int c = w->zidx[b], f = c < ns ? w->rank[c] : c < nb ? (c - ns) / 4 : -1;
      if (f >= 0 && nb < n) {
        r[nb + f] += col[nb + f] * zv;
        sc[nb + f] += fabs(col[nb + f]) * az;
      }
    }
    // The check (cp_wi_warm_check) with its rounding allowance 8 n eps
    // |z|_inf |M_iB|_1 over the basic columns only (never larger than the
    // full check's).
    const double ulp = 8.0 * (double)n * DBL_EPSILON * zmax;
    dense_l1 l1 = {MB, n, k};
    const int enter = cp_wi_warm_check(w, n, r, sc, rel, ulp, dense_row_l1, &l1);
    if (enter == -2) return 0;
    if (enter < 0) break;
    // z_i enters, in order (zidx stays increasing).
    if (*pivots == CP_WORLD_WARM_PIVOTS) return 0;
    const int at = cp_wi_warm_enter(w, k, enter);
    memmove(MB + (size_t)(at + 1) * n, MB + (size_t)at * n,
            sizeof(double) * (size_t)n * (size_t)(k - at));
    lcp_column(w, enter, MB + (size_t)at * n);
    ++k;
  }
  warm_finish(w, n, k, *pivots, info);
  return 1;
}

void cp_wi_warm_finish(cp_world *w, int n, int k, int pivots, cp_lcp_info *info) {
  warm_finish(w, n, k, pivots, info);
}

// A resting box's LCP has n = 24 (four rolling contacts: 4 normals, 16
// corner betas, 4 lambdas): its passes over the rows with n a constant
// (unrolled, the same operations in the same order: the same bits).
static int warm_accept(cp_world *w, int n, cp_lcp_info *info, int *pivots) {
  if (n == 24) return warm_accept_n(w, 24, info, pivots);
  // A large LCP on its sparse columns (warmsparse.c), when they pay.
  const int rc = cp_wi_warm_accept_sparse(w, n, info, pivots);
  if (rc >= 0) return rc;
  return warm_accept_n(w, n, info, pivots);
}

// The solver options for a call made now: certify's time limit cut to
// the time left before the deadline (cp_world_set_deadline, read with the
// world's clock). Once the deadline has passed no such call is made
// (certify reads a limit <= 0 as none, and GLPK's shortest is 1 ms): -1,
// and the step is marked so that cp_world_step does not retry it.
int cp_wi_solve_options_now(cp_world *w, cp_solve_options *so) {
  *so = w->opt.solve;
  // The world's solve poll (cp_world_set_solve_poll) also inside FIP: once
  // an interior-point iteration (the Lemke pivots have it through w->ws).
  if (w->poll) {
    so->fip.poll = w->poll;
    so->fip.poll_ctx = w->poll_ctx;
  }
  if (w->deadline < INFINITY) {
    const double left = w->deadline - cp_wi_now(w);
    if (!(left > 0)) {
      w->deadline_hit = 1;
      return -1;
    }
    if (!(so->certify.time_limit_s > 0) || so->certify.time_limit_s > left)
      so->certify.time_limit_s = left;
    // certify measures that limit with the world's clock, so that its own
    // later solves (its retry on cleaned data) see the same deadline.
    so->certify.clock = w->clock;
    so->certify.clock_ctx = w->clock_ctx;
  }
  return 0;
}

// An LCP that was not solved because the deadline had passed.
static int refused(cp_lcp_info *info) {
  info->status = CP_LCP_TIME_LIMIT;
  snprintf(info->reason, sizeof info->reason,
           "not solved: the deadline had passed (cp_world_set_deadline)");
  return -1;
}

// Solves the LCP in w->M, w->q (size n) with the world's solver, cold.
// Returns 0 when solved; adds pivots to *piv.
int cp_wi_solve_lcp(cp_world *w, int n, int *piv, cp_lcp_info *info) {
  cp_lcp_info_clear(info);
  if (n == 0) {
    info->status = CP_LCP_SOLVED;
    return 0;
  }
  cp_lcp_status st;
  if (w->opt.solve.solver == CP_SOLVER_LEMKE) {
    st = cp_lemke_solve(w->ws, n, w->M, w->q, &w->opt.solve.lemke, NULL, w->z,
                        w->w, info);
    if (st == CP_LCP_SOLVED) cp_lemke_basis(w->ws, w->basis);
  } else {
    cp_solve_options so;
    if (cp_wi_solve_options_now(w, &so)) return refused(info);
    st = cp_lcp_solve(w->ws, n, w->M, w->q, &so, w->z, w->w, info, NULL);
    for (int i = 0; i < n; ++i) w->basis[i] = w->z[i] > 0;
  }
  *piv += info->iterations;
  return st == CP_LCP_SOLVED ? 0 : -1;
}

// A Lemke answer to the friction LCP of lcp_setup (size m, in w->z, w->w,
// its basis in w->basis) whose z has an entry below -tol (tol of the warm
// start, 1e-11 max(1, |q|_inf)): Lemke's own acceptance (contact/lcp.h)
// takes a negative z_j whose effect on every row is within rel_tol of the
// row's scale, but a negative pyramid edge impulse puts |c_tan| above
// mu c_n, which the step check's friction test (1e-7 of the step's momentum
// scale) refuses: at saturated friction (a stack sliding to rest) cold
// Lemke ends with z_j = -4.5e-6 against c_n ~ 0.02. Such an answer is
// cleaned up by the warm start's principal pivots from Lemke's basis
// (warm_accept: z_B >= -tol, clamped to 0, nonbasic w_i >= -1e-10 s_i),
// or, when that basis is singular or does not settle (a sliding box's cold
// Lemke basis often holds dependent degenerate columns), from the support
// of Lemke's z (z_i > tol); if neither settles, Lemke's answer stays. Lemke
// is deterministic, so its answer is got back by solving again into w->z,
// w->w (warm_accept overwrites them). Answers without such an entry are
// not touched (their bits are those of before). Returns the solve's status.
static int friction_cleanup(cp_world *w, int m, const unsigned char *warm,
                            int *piv, cp_lcp_info *info) {
  double qmax = 1;
  for (int i = 0; i < m; ++i) qmax = MAXD(qmax, fabs(w->q[i]));
  const double tol = 1e-11 * qmax;
  int neg = 0;
  for (int i = 0; i < m && !neg; ++i) neg = !(w->z[i] >= -tol);
  if (!neg) return 0;
  cp_lcp_info li;
  int repair = 0, ok = warm_accept(w, m, &li, &repair);
  if (!ok) { // Lemke's basis singular or not settled: from z's support
    *piv += repair;
    repair = 0;
    cp_lemke_solve(w->ws, m, w->M, w->q, &w->opt.solve.lemke, warm, w->z, w->w, info);
    for (int i = 0; i < m; ++i) w->basis[i] = w->z[i] > tol;
    ok = warm_accept(w, m, &li, &repair);
  }
  if (ok) {
    *piv += repair;
    info->iterations += repair;
    info->residual = li.residual;
    info->min_z = li.min_z;
    info->min_w = li.min_w;
    info->polished = 1;
    return 0;
  }
  *piv += repair;
  cp_lcp_status st = cp_lemke_solve(w->ws, m, w->M, w->q, &w->opt.solve.lemke, warm,
                                    w->z, w->w, info);
  if (st != CP_LCP_SOLVED) return -1;
  cp_lemke_basis(w->ws, w->basis);
  return 0;
}

// The friction LCP (size m, M formed) solved cold with the world's solver;
// a Lemke answer cleaned up by friction_cleanup.
static int solve_friction_cold(cp_world *w, int m, int *piv, cp_lcp_info *info) {
  if (cp_wi_solve_lcp(w, m, piv, info)) return -1;
  if (w->opt.solve.solver != CP_SOLVER_LEMKE) return 0;
  return friction_cleanup(w, m, NULL, piv, info);
}

int cp_wi_solve_friction_cold(cp_world *w, int m, int *piv, cp_lcp_info *info) {
  return solve_friction_cold(w, m, piv, info);
}

// The friction LCP of lcp_setup (size m), with warm starts on: from the
// warm basis in w->basis (lcp_warm) when warm_accept takes or repairs it (M
// is then never formed), else M is formed for Lemke from that basis, then
// cold. Returns 0 when solved; pivots are added to *piv.
int cp_wi_solve_friction(cp_world *w, int m, int *piv,
                          int *warm_used, cp_lcp_info *info) {
  cp_lcp_info_clear(info);
  if (m == 0) {
    info->status = CP_LCP_SOLVED;
    return 0;
  }
  // Independent groups of constraints solved apart (islands.c).
  if (!cp_wi_solve_islands(w, m, piv, warm_used, info)) return 0;
  if (w->opt.warm_start) {
    memcpy(w->basis0, w->basis, (size_t)m);
    int repair = 0;
    if (warm_accept(w, m, info, &repair)) {
      if (warm_used) *warm_used = 1;
      *piv += repair;
      return 0;
    }
    *piv += repair;
    // Lemke from the recorded basis: once the principal pivots have not
    // repaired it, a warm Lemke start still pivots less than a cold one on
    // the planner's tasks (same expansions: grasp 7.0 -> 5.4 pivots per
    // solve, push 3.8 -> 3.3); a failed warm run is retried cold.
    if (w->opt.solve.solver == CP_SOLVER_LEMKE) {
      cp_wi_lcp_fill(w, m);
      cp_lcp_status st = cp_lemke_solve(w->ws, m, w->M, w->q, &w->opt.solve.lemke,
                                        w->basis0, w->z, w->w, info);
      *piv += info->iterations;
      if (st == CP_LCP_SOLVED) {
        cp_lemke_basis(w->ws, w->basis);
        return friction_cleanup(w, m, w->basis0, piv, info) ? solve_friction_cold(w, m, piv, info)
                                                            : 0;
      }
      return solve_friction_cold(w, m, piv, info);
    }
  }
  cp_wi_lcp_fill(w, m);
  return solve_friction_cold(w, m, piv, info);
}

// The corner directions of the pyramid: cp_wi_corner (world_impl.h).
#define corner cp_wi_corner

// From this many selected constraints As is written on its footprint only.
#define CP_WORLD_EXTRACT_SPARSE 16

// As from A on the blocks that can be nonzero: two constraints that share
// no moving part (cp_wi_con_nodes) have a zero block in A (H is block
// diagonal over the parts; the zero written there by the contact space's
// build), so As gets the blocks of the pairs of each part's constraints
// (and each constraint's own) and is zero elsewhere, as the full copy
// leaves it, bit for bit. The last such extraction's blocks are cleared
// first (the boxes landing in a bin: a selection that is not every
// constraint, and a full copy of the selected block was most of
// cp_wi_extract's cost). Returns 0, or -1 (memory: the caller copies in
// full).
static int extract_sparse(cp_world *w, const double *A, int ns, const int *sel) {
  const size_t n3 = 3 * (size_t)w->ncon, m3 = 3 * (size_t)ns;
  const int nn = w->sc.n_bodies + w->sc.n_manips;
  if (cp_grow((void **)&w->ex_buf, &w->ex_cap, 4 * ns + nn + 1, sizeof(int))) return -1;
  int *nd = w->ex_buf, *st = nd + 2 * ns, *list = st + nn + 1;
  memset(st, 0, sizeof(int) * (size_t)(nn + 1));
  long pairs = 0;
  for (int k = 0; k < ns; ++k) {
    cp_wi_con_nodes(w, &w->cons[sel[k]], nd + 2 * k);
    if (nd[2 * k + 1] == nd[2 * k]) nd[2 * k + 1] = -1;
    pairs += nd[2 * k] < 0 && nd[2 * k + 1] < 0; // its own block only
    for (int t = 0; t < 2; ++t)
      if (nd[2 * k + t] >= 0) ++st[nd[2 * k + t] + 1];
  }
  for (int n = 0; n < nn; ++n) {
    pairs += (long)st[n + 1] * st[n + 1];
    st[n + 1] += st[n];
  }
  if (pairs > INT_MAX / 2) return -1;
  // The previous footprint cleared, then the new one's region made zero.
  const size_t pm3 = 3 * (size_t)w->as_ns;
  for (int i = 0; i < w->as_fp_n; ++i) {
    double *d = w->As + 3 * (size_t)w->as_fp[2 * i] + 3 * (size_t)w->as_fp[2 * i + 1] * pm3;
    for (int e = 0; e < 3; ++e) d[e * pm3] = d[e * pm3 + 1] = d[e * pm3 + 2] = 0.0;
  }
  w->as_fp_n = 0;
  if (cp_grow((void **)&w->as_fp, &w->as_fp_cap, 2 * (int)pairs, sizeof(int))) {
    w->as_zero = 0;
    return -1;
  }
  if (m3 * m3 > w->as_zero) {
    memset(w->As + w->as_zero, 0, sizeof(double) * (m3 * m3 - w->as_zero));
    w->as_zero = m3 * m3;
  }
  for (int k = 0; k < ns; ++k) // st[n] runs to the end of part n's list
    for (int t = 0; t < 2; ++t)
      if (nd[2 * k + t] >= 0) list[st[nd[2 * k + t]]++] = k;
  for (int n = nn; n > 0; --n) st[n] = st[n - 1];
  st[0] = 0;
  int *fp = w->as_fp, np = 0;
  for (int k = 0; k < ns; ++k)
    if (nd[2 * k] < 0 && nd[2 * k + 1] < 0) fp[2 * np] = fp[2 * np + 1] = k, ++np;
  for (int n = 0; n < nn; ++n)
    for (int x = st[n]; x < st[n + 1]; ++x)
      for (int y = st[n]; y < st[n + 1]; ++y) fp[2 * np] = list[y], fp[2 * np + 1] = list[x], ++np;
  for (int i = 0; i < np; ++i) { // block (rows of fp[2i], columns of fp[2i+1])
    const int r = fp[2 * i], c = fp[2 * i + 1];
    const double *s = A + 3 * (size_t)sel[r] + 3 * (size_t)sel[c] * n3;
    double *d = w->As + 3 * (size_t)r + 3 * (size_t)c * m3;
    for (int e = 0; e < 3; ++e) {
      d[e * m3] = s[e * n3];
      d[e * m3 + 1] = s[e * n3 + 1];
      d[e * m3 + 2] = s[e * n3 + 2];
    }
  }
  w->as_fp_n = np;
  w->as_ns = ns;
  return 0;
}

// The rows/columns of the constraints sel[0..ns) of A (3 ncon square) and b
// (3 ncon): w->Asel (3 ns square) and w->bs. When every constraint is
// selected in order (the velocity stepper; a resting acceleration step),
// Asel is A itself: copying it was a twentieth of a 10-box stack's step.
void cp_wi_extract(cp_world *w, const double *A, const double *b, int ns,
                    const int *sel) {
  const int n3 = 3 * w->ncon, m3 = 3 * ns;
  int identity = ns == w->ncon;
  for (int k = 0; identity && k < ns; ++k) identity = sel[k] == k;
  w->Asel = identity ? A : w->As;
  if (identity) {
    memcpy(w->bs, b, sizeof(double) * (size_t)m3);
    return;
  }
  for (int a = 0; a < m3; ++a) w->bs[a] = b[3 * sel[a / 3] + a % 3];
  if (ns >= CP_WORLD_EXTRACT_SPARSE && !extract_sparse(w, A, ns, sel)) return;
  for (int bcol = 0; bcol < m3; ++bcol) {
    const double *col = A + (size_t)(3 * sel[bcol / 3] + bcol % 3) * (size_t)n3;
    for (int a = 0; a < m3; ++a)
      w->As[a + (size_t)bcol * m3] = col[3 * sel[a / 3] + a % 3];
  }
  w->as_zero = 0; // (As written whole: no footprint)
  w->as_fp_n = 0;
}

// Support point k's known c_n (cp_wi_fixed_col) moved into q: its
// column as lcp_column would form it (without its own row), times the
// value its own row fixes, max(0, -q_k).
static void fixed_q(cp_world *w, int k) {
  const int ns = w->lns, nb = ns + 4 * w->lnr;
  const int *ridx = w->rank;
  double *q = w->q;
  const double v = q[k] < 0 ? -q[k] : 0;
  cp_wi_colsrc src;
  cp_wi_colsrc_init(w, k, &src);
  for (int r = 0; r < ns; ++r) {
    double cn, a, b;
    cp_wi_colsrc_at(&src, r, &cn, &a, &b);
    if (r != k) q[r] += v * cn;
    if (ridx[r] < 0) continue;
    double *rows = q + ns + 4 * ridx[r];
    rows[0] += v * (a + b);
    rows[1] += v * (a + -b);
    rows[2] += v * (-a + b);
    rows[3] += v * (-a + -b);
  }
  if (ridx[k] >= 0) q[nb + ridx[k]] += v * w->pc[k].mu;
}

// The friction LCP of every stepper, over the ns constraints whose
// contact-space quantities are in w->Asel, w->bs (y = Asel c + bs: accelerations
// for the acceleration problem, velocities after the step for the impulse
// and velocity problems) and whose friction data are in w->pc:
//   sliding k (also frictionless: d = 0):  c_t = -d_t c_n, c_o = -d_o c_n
//       (the paper's substitution), one unknown c_n _|_ y_n;
//   rolling k: the pyramid by its four corner directions D (Stewart-Trinkle,
//       Anitescu-Potra): c_tan = D beta, unknowns c_n, beta (4), lambda,
//       0 <= c_n _|_ y_n >= 0,
//       0 <= beta _|_ D^T y_tan + lambda >= 0,
//       0 <= lambda _|_ mu c_n - sum beta >= 0,
//   i.e. each tangential component at full magnitude against its own y
//   when y_tan != 0 (maximal dissipation over the four-sided pyramid: the
//   paper's rolling law). For A positive semidefinite and no sliding
//   contact this LCP is copositive-plus, so Lemke solves it whenever it is
//   solvable, and at the velocity level (gap/h) it always is -- unlike the
//   paper's slack form of the same pyramid, on which Lemke ends on secondary
//   rays for stacks of boxes. Unknowns: z = [c_n (ns); beta (4 nr);
//   lambda (nr)] in constraint order. Fills w->M, w->q; returns the size or
//   -1 (memory).
// lcp_setup fills q and the indexing (w->lns, w->lnr, w->rank: index among
// rolling constraints or -1, w->order: constraint of rolling index f) and
// returns the size (-1: memory); lcp_column writes one column of M in full
// (the warm start needs only its basis's columns); lcp_fill forms M.
int cp_wi_lcp_setup(cp_world *w, int ns) {
  int nr = 0;
  for (int k = 0; k < ns; ++k) nr += cp_wi_rolling(&w->pc[k]);
  const int m = ns + 5 * nr;
  w->lns = ns;
  w->lnr = nr;
  if (m == 0) return 0;
  if (cp_wi_ensure(w, w->ncon, m) != CP_WORLD_OK) return -1;
  int *ridx = w->rank, *rk = w->order;
  for (int k = 0, f = 0; k < ns; ++k) {
    ridx[k] = cp_wi_rolling(&w->pc[k]) ? f : -1;
    if (ridx[k] >= 0) rk[f++] = k;
  }
  double *q = w->q;
  for (int k = 0; k < ns; ++k) {
    q[k] = w->bs[3 * k];
    if (w->nsup && w->cons[w->sel[k]].contact == CP_CON_SUPPORT)
      q[k] -= w->fix_scale * w->sup[w->cons[w->sel[k]].sup].fixn; // cp_wi_fixed_col
    int f = ridx[k];
    if (f < 0) continue;
    for (int e = 0; e < 4; ++e)
      q[ns + 4 * f + e] =
          corner[e][0] * w->bs[3 * k + 1] + corner[e][1] * w->bs[3 * k + 2];
    q[ns + 4 * nr + f] = 0;
  }
  for (int k = 0; w->nsup && k < ns; ++k)
    if (cp_wi_fixed_col(w, k)) fixed_q(w, k);
  return m;
}

// Compliance (docs/simulate.md, "Compliance"): y_n gains kappa A_nn c_n.
// The rigid problem leaves the split of a face's pressure over its corner
// points open (the rows of coplanar points are dependent), and a pivoting
// solver returns a vertex of that set: the whole load on one corner, about
// which a grasped box is then free to twist or hinge -- a motion the rigid
// model allows and no real face does. The small diagonal makes the split
// unique (spread as on a stiff elastic foundation); what it costs is an
// approach of kappa A_nn c_n per loaded contact, kappa relative to the
// contact's own acceleration scale, which drift correction removes.
// The same holds for the friction of a rolling contact whose tangential
// motion other constraints already fix (a pusher on a prismatic joint
// pressing a box onto the table: how much of the box's weight the pusher's
// friction carries is open, and with it the table's sliding friction): the
// tangential rows get kappa A_tt c_tan too, through the pyramid's corner
// form (y_beta += kappa D^T diag(A_tt, A_oo) D beta), so that such friction
// is the least the motion needs.
// Two doubles as one SSE2 vector (GCC's vector extension), and its bits.
typedef double v2d __attribute__((vector_size(16)));
typedef int64_t v2i __attribute__((vector_size(16)));

static inline __attribute__((always_inline)) v2d v2_load(const double *p) {
  v2d v;
  memcpy(&v, p, sizeof v);
  return v;
}

// A rolling constraint's four corner rows from its tangential entries a, b:
// a + b, a + -b, -a + b, -a + -b.
static inline __attribute__((always_inline)) void corner_rows(double *rows, double a,
                                                               double b) {
  const v2d aa = {a, a}, bb = {b, -b}, r01 = aa + bb, r23 = -aa + bb;
  memcpy(rows, &r01, sizeof r01);
  memcpy(rows + 2, &r23, sizeof r23);
}

static void lcp_column(const cp_world *w, int col, double *out) {
  const int ns = w->lns, nr = w->lnr, nb = ns + 4 * nr;
  const int *ridx = w->rank;
  if (col >= nb) { // lambda_f: + lambda in rolling f's four corner rows
    const int f = col - nb;
    memset(out, 0, sizeof(double) * (size_t)(nb + nr));
    for (int e = 0; e < 4; ++e) out[ns + 4 * f + e] = 1.0;
    return;
  }
  if (cp_wi_fixed_col(w, col)) { // a support's known c_n: lcp_setup's q
    memset(out, 0, sizeof(double) * (size_t)(nb + nr));
    out[col] = 1.0;
    return;
  }
  // The column of Asel C (C: the unknown's direction in contact space)
  // computed row by row into the rows of M that read it: cp_wi_colsrc_at's
  // sums with cn and a as the two lanes of one vector (each lane the same
  // operations in the same order: the same bits), the corner rows as two
  // pairs, (a, a) + (b, -b) and (-a, -a) + (b, -b).
  cp_wi_colsrc src;
  cp_wi_colsrc_init(w, col, &src);
  const double *an = src.an, *at = src.at, *ao = src.ao;
  if (an) {
    const double ct = src.ct, co = src.co;
    const v2d ct2 = {ct, ct}, co2 = {co, co};
    for (int k = 0; k < ns; ++k) {
      const v2d na = v2_load(an + 3 * k) + ct2 * v2_load(at + 3 * k) + co2 * v2_load(ao + 3 * k);
      out[k] = na[0];
      if (ridx[k] < 0) continue;
      const double b = an[3 * k + 2] + ct * at[3 * k + 2] + co * ao[3 * k + 2];
      corner_rows(out + ns + 4 * ridx[k], na[1], b);
    }
  } else { // the +-1 products as sign flips (cp_wi_colsrc_at)
    const v2i f0 = {src.s0 > 0 ? 0 : INT64_MIN, src.s0 > 0 ? 0 : INT64_MIN},
              f1 = {src.s1 > 0 ? 0 : INT64_MIN, src.s1 > 0 ? 0 : INT64_MIN};
    for (int k = 0; k < ns; ++k) {
      const v2d na = (v2d)((v2i)v2_load(at + 3 * k) ^ f0) + (v2d)((v2i)v2_load(ao + 3 * k) ^ f1);
      out[k] = na[0];
      if (ridx[k] < 0) continue;
      const double b = (src.s0 > 0 ? at[3 * k + 2] : -at[3 * k + 2]) +
                       (src.s1 > 0 ? ao[3 * k + 2] : -ao[3 * k + 2]);
      corner_rows(out + ns + 4 * ridx[k], na[1], b);
    }
  }
  // The lambda rows: mu c_n - sum beta.
  for (int f = 0; f < nr; ++f) out[nb + f] = 0;
  if (col < ns) {
    if (ridx[col] >= 0) out[nb + ridx[col]] = w->pc[col].mu;
  } else {
    out[nb + ridx[src.k0]] = -1.0;
  }
  double add[4];
  const int comp = cp_wi_colsrc_comp(w, col, &src, add);
  if (comp == 1) out[col] += add[0];
  for (int e = 0; comp == 4 && e < 4; ++e) out[ns + 4 * ridx[src.k0] + e] += add[e];
}

void cp_wi_lcp_fill(cp_world *w, int m) {
  for (int col = 0; col < m; ++col) lcp_column(w, col, w->M + (size_t)col * m);
}

// Contact-space forces (or impulses) c [3 ns] from the LCP's z.
void cp_wi_lcp_forces(cp_world *w, int ns, double *c) {
  for (int k = 0, f = 0; k < ns; ++k) {
    const cp_pyramid_contact *p = &w->pc[k];
    double cn = w->z[k];
    c[3 * k] = cn;
    if (p->sliding) {
      c[3 * k + 1] = -p->d[0] * cn;
      c[3 * k + 2] = -p->d[1] * cn;
      continue;
    }
    c[3 * k + 1] = c[3 * k + 2] = 0;
    for (int e = 0; e < 4; ++e) {
      double b = w->z[ns + 4 * f + e];
      c[3 * k + 1] += corner[e][0] * b;
      c[3 * k + 2] += corner[e][1] * b;
    }
    ++f;
  }
}

// Friction data with every frictional constraint rolling (impulse and
// velocity problems).
void cp_wi_all_rolling(cp_world *w, int ns, const int *sel) {
  for (int k = 0; k < ns; ++k) {
    const con *c = &w->cons[sel[k]];
    cp_pyramid_contact *p = &w->pc[k];
    memset(p, 0, sizeof *p);
    p->mu = c->contact != CP_CON_LIMIT ? c->mu : 0;
    p->sliding = p->mu == 0; // frictionless: c_n only
  }
}

// Scatters subset forces c [3 ns] into cfull [3 ncon].
void cp_wi_scatter(cp_world *w, int ns, const int *sel, const double *c,
                    double *cfull) {
  memset(cfull, 0, sizeof(double) * 3 * (size_t)w->ncon);
  for (int k = 0; k < ns; ++k)
    for (int d = 0; d < 3; ++d) cfull[3 * sel[k] + d] = c[3 * k + d];
}


