/* contact/lemke_impl.h: internal (not installed). What the files of
 * Lemke's method share (contact/lemke.c's header comment has the algebra):
 *   lemke.c        the pivot update kernels, one start (run_start) and
 *                  cp_lemke_solve, which chooses the starts and paths;
 *   lemke_ws.c     the workspace, the default options, the accessors;
 *   lemke_basis.c  the basis: columns of B^-1, its rebuild from the basis,
 *                  warm bases, and the end of a start (refinement, the
 *                  check, the LU retry);
 *   lemke_ratio.c  the leaving row: ratio tests, the lexicographic rule,
 *                  z0's ties;
 *   lemke_small.c  the dense tableau path of small cold starts.
 * The ratio test's body and the first pivot's row (ratio_test_rows,
 * first_row_n) are defined here, always inlined: the small path
 * instantiates them with constant lengths (n <= 8), the other paths with
 * n. The functions named cp_lk_* are hidden library internals. */
#ifndef CP_CONTACT_LEMKE_IMPL_H
#define CP_CONTACT_LEMKE_IMPL_H

#include "contact/lemke.h"
#include "contact/check_impl.h"

#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#define LEMKE_MAX_STARTS 256  /* pivots_per_start keeps this many starts */
#define DRIFT_EVERY 50        /* pivots between drift checks */
#define DRIFT_TOL 1e-10       /* componentwise relative residual of B qbar = q */
#define RCOND_MIN 1e-14       /* a basis below this is treated as singular */
#define TIE_EPS 1e-12         /* relative width of a ratio-test tie */
#define QTIE_EPS 1e-10        /* error bound of basic values, x max |qbar| */
#define QTIE_RAMP 1000.0      /* pivots over which that bound grows to QTIE_EPS */
#define QTIE_RAMP_MIN 0.01    /* its fraction at the start of a path */
#define SMALL_PIVOT 1e-9      /* pivots below this x column scale: refactor */
#define SMALL_N_MAX 64        /* largest size the small path is built for */
#define SMALL_N_AUTO 4        /* automatic crossover, measured (docs/solvers.md) */
#define LEX_EPS 1e-11         /* error bound of B^-1 entries, x column max */
#define Z0_BACKUPS 16         /* z0 exits undone per start (failed check) */
#define RESCUE_STARTS 12      /* starts of the rescue pass (at least) */
#define CP_LK_LEAN_N 4        /* largest n of the lean path (lemke_small.c) */
#define RESCUE_CAP 5          /* its pivot cap per start: RESCUE_CAP (n + 1) + 100 */
#define CLASSIC_EARLY_N 2000  /* from this n on the classic pass runs before
                               * the rescue pass (docs/solvers.md) */

/* SQLite-style coverage marker: counts how often a rare branch is taken. */
#define testcase(ws, field) ((ws)->st.field++)

/* Reductions over non-negative doubles on their bit patterns: IEEE order of
 * non-negative values is integer order, so GCC vectorises these (it does not
 * vectorise floating-point max/min reductions without -ffast-math). A NaN
 * sorts above +inf, so max_abs() returns NaN if any entry is NaN. */
static inline uint64_t dbits(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}
static inline double bitsd(uint64_t u) {
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}
/* max and min of an accumulator a (never NaN) and a value b: b when it is
 * larger (smaller), so a NaN b is passed over as fmax/fmin do, without
 * their library calls (which x86-64 makes for the NaN rules). */
static inline double maxacc(double a, double b) { return b > a ? b : a; }
static inline double minacc(double a, double b) { return b < a ? b : a; }

static inline double max_abs(int n, const double *restrict x) {
  uint64_t m = 0;
  for (int i = 0; i < n; i++) {
    const uint64_t u = dbits(x[i]) & 0x7FFFFFFFFFFFFFFFull;
    m = u > m ? u : m;
  }
  return bitsd(m);
}

struct cp_lemke_ws {
  int cap;
  int n;                   /* size of the last solve */
  double *Bact;            /* [cap*cap] active block of B^-1, ld n */
  double *T1, *T2;         /* [cap*cap] scratch of refactor() and polish */
  double *qbar;            /* [cap] basic values */
  double *col, *nxt;       /* [cap] entering column, next entering column */
  double *d;               /* [cap] covering vector of the current start */
  double *as;              /* [cap] entries of the next column on active cols */
  double *lexv;            /* [cap] lexicographic values of the candidates */
  double *work;            /* [4*cap] dgecon */
  int *basic;              /* [cap] variable basic in row r */
  int *wrow, *zrow;        /* [cap] row of basic w_i / z_i, or -1 */
  int *slot_col, *col_slot;/* [cap] active slot <-> column of B^-1 */
  int *cand, *cand2;       /* [cap] candidate rows of the ratio test */
  int *kidx, *widx;        /* [cap] refactor(): rows of non-w / w variables */
  int *gidx;               /* [cap] row r holds w_gidx[r] (0 if not a w) */
  unsigned char *wbas;     /* [cap] 1 if row r holds a w */
  double *ratio;           /* [cap] ratio-test values */
  double *chk;             /* [3*cap] the check's scan (small path) */
  lapack_int *ipiv;        /* [cap] */
  lapack_int *iwork;       /* [cap] */
  unsigned char *basis;    /* [cap] final complementary basis */
  int basis_valid;
  int z0row;               /* row of z0, -1 when nonbasic */
  int k;                   /* active columns */
  int nstarts;
  int ties;                /* rows tied in the last ratio test (trace) */
  int npiv;                /* pivots so far in this start (tie window) */
  int z0tie;               /* 1: the last ratio test chose z0 from a tie */
  int z0skip;              /* 1: the next ratio test gives z0 no priority */
  int tight;               /* 1: this start uses the tight tie rules */
  int classic;             /* 1: this start uses the classic pass's rules */
  double cscale;           /* scale of the last ratio test's column */
  double qbmax;            /* max |qbar| after the last update */
  double *tab;             /* [scap*(2 scap+1)] small path: dense tableau */
  int scap;                /* largest n the small path can take */
  int tld;                 /* leading dimension of tab: n rounded up to 4 */
  int small;               /* 1 while a start runs on the dense tableau,
                            * 2 on the lean path's condensed tableau */
  int cslot[2 * CP_LK_LEAN_N + 1];    /* condensed tableau: slot of variable v, -1 basic */
  int cvar[CP_LK_LEAN_N + 1];        /* condensed tableau: variable in slot s */
  long cond_expands;       /* lean starts that went on on the full tableau
                            * (never reset: read by the tests) */
  cp_lemke_trace_fn trace; /* per-pivot observer, NULL: none */
  void *trace_ctx;
  cp_lemke_poll_fn poll;   /* call-back every poll_period pivots, NULL: none */
  void *poll_ctx;
  int poll_period;         /* >= 1 when poll is set */
  int poll_left;           /* pivots of this solve before the next call */
  int pps[LEMKE_MAX_STARTS];
  cp_lemke_stats st;
};

/* ------------------------------------------------------------------------ */
/* One solve's constant data. */
typedef struct run {
  int n;
  const double *M, *q;
  double qscale;      /* max(1, |q|_inf) */
  double pivot_tol;
  int lex;
  int cap;            /* pivot cap per start */
  char *reason;       /* info->reason */
} run;

#define VZ0(n) (2 * (n))

/* Original column entry a_v[i]. */
static inline double acol(const cp_lemke_ws *ws, const run *R, int v, int i) {
  const int n = R->n;
  if (v < n) return v == i ? 1.0 : 0.0;
  if (v < 2 * n) return -R->M[(size_t)i + (size_t)(v - n) * (size_t)n];
  return -ws->d[i];
}

/* Column of w_c (= column c of B^-1) in a small tableau, NULL when w_c is
 * basic on the condensed tableau (its column is then the unit vector of
 * its row, not stored). */
static inline const double *small_wcol(const cp_lemke_ws *ws, int c) {
  const int s = ws->small == 2 ? ws->cslot[c] : c;
  return s >= 0 ? ws->tab + (size_t)s * (size_t)ws->tld : NULL;
}

/* Entry (r, c) of B^-1. */
static inline double binv(const cp_lemke_ws *ws, int r, int c) {
  if (ws->small) {
    const double *b = small_wcol(ws, c);
    return b ? b[r] : ws->basic[r] == c ? 1.0 : 0.0;
  }
  const int s = ws->col_slot[c];
  if (s >= 0) return ws->Bact[(size_t)r + (size_t)s * (size_t)ws->n];
  return ws->wrow[c] == r ? 1.0 : 0.0;
}

#define CP_LK_HIDDEN CP_CHECK_HIDDEN

/* lemke_ws.c */
CP_LK_HIDDEN extern const cp_lemke_options cp_lk_defaults;

/* lemke_basis.c */
CP_LK_HIDDEN double cp_lk_form_column(cp_lemke_ws *ws, const double *a,
                                      double sg, double *out);
CP_LK_HIDDEN double cp_lk_entering_column(cp_lemke_ws *ws, const run *R,
                                          int v, double *out);
CP_LK_HIDDEN void cp_lk_recompute_qbar(cp_lemke_ws *ws, const run *R);
CP_LK_HIDDEN int cp_lk_refactor(cp_lemke_ws *ws, const run *R);
CP_LK_HIDDEN double cp_lk_basis_residual(cp_lemke_ws *ws, const run *R);
CP_LK_HIDDEN int cp_lk_warm_basis(cp_lemke_ws *ws, const run *R,
                                  const unsigned char *warm, double *z,
                                  double *w);
CP_LK_HIDDEN int cp_lk_warm_inverse(cp_lemke_ws *ws, const run *R, int m);
CP_LK_HIDDEN cp_lcp_status cp_lk_lu_retry(cp_lemke_ws *ws, const run *R,
                                          const cp_check_options *chk,
                                          double *z, double *w,
                                          cp_lcp_info *info);
CP_LK_HIDDEN int cp_lk_unpivot_z0(cp_lemke_ws *ws, const run *R, int r, int v,
                                  double *amax);

/* lemke_ratio.c */
CP_LK_HIDDEN int cp_lk_lex_min(cp_lemke_ws *ws, int nc, const double *col,
                               double sg);
CP_LK_HIDDEN int cp_lk_lex_min_classic(cp_lemke_ws *ws, int nc,
                                       const double *col, double sg);
CP_LK_HIDDEN int cp_lk_z0_or_lex(cp_lemke_ws *ws, const run *R, int nc,
                                 const double *col);
CP_LK_HIDDEN int cp_lk_ratio_test_tight(cp_lemke_ws *ws, const run *R,
                                        double tol, double cmax);
CP_LK_HIDDEN int cp_lk_ratio_test(cp_lemke_ws *ws, const run *R, double amax);
CP_LK_HIDDEN CP_GCC_OPTIMIZE("no-tree-loop-distribute-patterns") int
cp_lk_first_row(cp_lemke_ws *ws, const run *R);

/* lemke_small.c */
CP_LK_HIDDEN cp_lcp_status cp_lk_small_start(cp_lemke_ws *ws, const run *R,
                                             const cp_check_options *chk,
                                             double *z, double *w,
                                             cp_lcp_info *info, int *piv);
CP_LK_HIDDEN void cp_lk_small_iterate(const cp_lemke_ws *ws, int n, double *z,
                                      double *w);
CP_LK_HIDDEN int cp_lk_lean_solve(cp_lemke_ws *ws, int n, const double *M,
                                  const double *q, const cp_lemke_options *opt,
                                  double *z, double *w, cp_lcp_info *info);

/* z, w of the current (complementary or almost complementary) basis. */
static inline void cp_lk_read_iterate(const cp_lemke_ws *ws, int n, double *z,
                                      double *w) {
  for (int i = 0; i < n; i++) {
    z[i] = ws->zrow[i] >= 0 ? ws->qbar[ws->zrow[i]] : 0.0;
    w[i] = ws->wrow[i] >= 0 ? ws->qbar[ws->wrow[i]] : 0.0;
  }
}

/* w := M[:,Z] z_Z + q (z is zero off Z). */
static inline void cp_lk_eval_w(const cp_lemke_ws *ws, const run *R, const double *z,
                                 double *w) {
  const int n = R->n;
  memcpy(w, R->q, sizeof(double) * (size_t)n);
  for (int j = 0; j < n; j++) {
    if (ws->zrow[j] < 0 || z[j] == 0.0) continue;
    const double *Mj = R->M + (size_t)j * (size_t)n, zj = z[j];
    for (int i = 0; i < n; i++) w[i] += Mj[i] * zj;
  }
}

/* lex_min when B^-1 is the identity (the first pivot of a cold start, on
 * either path), with the same arithmetic and therefore the same choice:
 * column c of the identity is zero on every candidate row but row c, so a
 * column that is not a candidate's ties them all (each value 0 with its
 * bound e_t = LEX_EPS / p_t > 0 reaches below the smallest upper end) and
 * is skipped; on candidate c's column, c stays iff (1 - LEX_EPS) / p_c, as
 * the general loop computes it, is at most the smallest upper end, the
 * others stay. Columns in increasing order while more than one row is
 * left, then the largest pivot, as in lex_min. p_t = sg col[r_t] > 0 for
 * every candidate (the ratio tests admit only such rows). */
CP_GCC_OPTIMIZE("no-tree-loop-distribute-patterns") static inline int
cp_lk_lex_min_identity(cp_lemke_ws *ws, int nc, const double *col, double sg) {
  int *cand = ws->cand;
  double *e = ws->lexv;
  const double del = LEX_EPS * 1.0;
  for (int t = 0; t < nc; t++) e[t] = del / (sg * col[cand[t]]);
  for (int t = 0; t < nc && nc > 1;) {
    const double p = sg * col[cand[t]];
    double up = 1.0 / p + e[t];
    for (int u = 0; u < nc; u++)
      if (u != t && e[u] < up) up = e[u];
    if (1.0 / p - e[t] <= up) {
      t++;
      continue;
    }
    for (int u = t + 1; u < nc; u++) {
      cand[u - 1] = cand[u];
      e[u - 1] = e[u];
    }
    nc--;
  }
  int best = cand[0];
  for (int t = 1; t < nc; t++)
    if (fabs(col[cand[t]]) > fabs(col[best])) best = cand[t];
  return best;
}

/* The tie window's growth along a path: npiv / QTIE_RAMP clamped to
 * [QTIE_RAMP_MIN, 1]. Division is correctly rounded and monotone, so with
 * QTIE_RAMP = 1000 and QTIE_RAMP_MIN = 0.01 (the cut-offs 10 and 1000 below
 * follow them) npiv / 1000.0 is below 0.01 for npiv < 10 and at least 1 for
 * npiv >= 1000: the clamp's ends are returned there without the division,
 * the same value (a short path, such as every small solve, never divides). */
static inline double qtie_ramp(int npiv) {
  if (npiv < 10) return QTIE_RAMP_MIN;
  if (npiv >= 1000) return 1.0;
  return minacc(1.0, maxacc(QTIE_RAMP_MIN, npiv / QTIE_RAMP));
}

/* Ratio test for the entering column ws->col (scale amax) over rows
 * [0, n): n is R->n, or on the small path the padded length (padding rows
 * have col = 0 and qbar = 0: never candidates, no effect on any maximum).
 * Returns the pivot row, or -1 when no entry is positive enough (secondary
 * ray). */
static inline __attribute__((always_inline)) int
ratio_test_rows(cp_lemke_ws *ws, const run *R, double amax, const int n) {
  const double *restrict col = ws->col, *restrict qb = ws->qbar;
  double *restrict t = ws->ratio;
  const double cmax = max_abs(n, col);
  if (!(cmax <= HUGE_VAL) || !(amax <= HUGE_VAL)) return -2; /* NaN */
  const double tol = R->pivot_tol * (amax > cmax ? amax : cmax);
  ws->cscale = amax > cmax ? amax : cmax;
  ws->z0tie = 0;
  if (ws->tight) return cp_lk_ratio_test_tight(ws, R, tol, cmax);
  /* Basic values that are zero in exact arithmetic (degenerate rows) come
   * out of the updates as roundoff of either sign, about 1e-15 of the
   * largest basic value (3e-13 against 91 on a resting stack of 10 boxes).
   * Each ratio is therefore an interval: num_i = max(qbar_i, 0) is known to
   * within del, t_i in [(num_i - del) / col_i, (num_i + del) / col_i]; the
   * rows whose interval reaches below the smallest upper end umin are tied
   * and the lexicographic rule (or z0) chooses among them. (With a window
   * that did not scale with 1/col_i, such noise decided between degenerate
   * rows: the resting stack of 10 boxes left the exact path at pivot 101,
   * noise 2.3e-13 against 2.6e-13 over col 0.003, and ended on a secondary
   * ray.) A chosen row's ratio exceeds the smallest by at most 2 del / col_i:
   * other basic values may go negative by roundoff-sized amounts, which
   * count as 0 (and the final refinement and check see the truth). The
   * noise grows along the path: 1e-11 of max |qbar| still let a 30-box
   * stack wander; QTIE_EPS = 1e-10 and 1e-9 solve every resting and sliding
   * stack of 1..30 boxes in one start (measured). The bound grows with the
   * path (QTIE_RAMP_MIN of QTIE_EPS at its start, all of it after QTIE_RAMP
   * pivots), as the noise does: a full-width window from the first pivot
   * tied rows whose exact ratios differ by ~1e-12 and left bases that are
   * infeasible by that much; the simulator kept them as warm bases, a
   * resting stack of 10 boxes tipped at 1e-11 rad/s and after 0.8 s its
   * velocity LCPs ended on rays (planner/sim/world.c). The smallest upper
   * end: every end is > 0, +0 (underflow), +inf or NaN (num >= +0,
   * del >= +0 since qscale > 0, col_i > tol, or 1 on rows left out), so
   * minacc, which passes a NaN over, takes the same value as the minimum of
   * their bit patterns did until session 20 (one minsd per row instead of
   * a move to an integer register, a compare and a select). */
  const double qbm = ws->qbmax; /* max |qbar|, kept by the updates */
  const double ramp = qtie_ramp(ws->npiv);
  const double del = ramp * QTIE_EPS * (R->qscale > qbm ? R->qscale : qbm);
  double upmin = HUGE_VAL;
  for (int i = 0; i < n; i++) {
    const int ok = col[i] > tol;
    const double num = ok ? (qb[i] > 0.0 ? qb[i] : 0.0) : HUGE_VAL;
    const double up = (num + del) / (ok ? col[i] : 1.0);
    /* t_i: the lower end, scaled by col_i (no second division). */
    t[i] = ok ? num - del : NAN; /* NaN: never tied */
    upmin = minacc(upmin, up);
  }
  if (!(upmin < HUGE_VAL)) return -1;
  const double thr = upmin + TIE_EPS * upmin;
  /* Usually one row attains the minimum: count (vectorised), then find it
   * with an early-exit scan; collect the tied rows only when there are ties.
   * Row i is tied when (num_i - del) / col_i <= thr, i.e. t_i <= thr col_i
   * (col_i > 0 for every row with a finite t_i). */
  int nc = 0;
  for (int i = 0; i < n; i++) nc += t[i] <= thr * col[i];
  ws->ties = nc;
  if (nc <= 1) {
    for (int i = 0; i < n; i++)
      if (t[i] <= thr * col[i]) return i;
  }
  /* Tied rows with a pivot below SMALL_PIVOT of the column's scale would
   * make the next basis nearly singular (resting stacks: the normal forces
   * of four coplanar corners are redundant, and their degenerate rows tie
   * with entries of 1e-11); they are left out whenever a tied row with a
   * sound pivot exists. */
  const double big = SMALL_PIVOT * ws->cscale;
  int nbig = 0;
  nc = 0;
  for (int i = 0; i < n; i++)
    if (t[i] <= thr * col[i]) {
      ws->cand[nc++] = i;
      nbig += col[i] >= big;
    }
  if (nbig > 0 && nbig < nc) {
    int m = 0;
    for (int c = 0; c < nc; c++)
      if (col[ws->cand[c]] >= big) ws->cand[m++] = ws->cand[c];
    nc = m;
  }
  return cp_lk_z0_or_lex(ws, R, nc, col);
}

/* The first pivot: z0 enters with column -dbar (dbar > 0), the row of the
 * lexicographically smallest (qbar_r, B^-1_r) / dbar_r leaves. */
static inline __attribute__((always_inline)) int
first_row_n(cp_lemke_ws *ws, const run *R, const int n) {
  const double *col = ws->col, *qb = ws->qbar; /* col = -dbar */
  double theta = INFINITY, dmax = 0.0;
  int best = -1;
  for (int i = 0; i < n; i++) {
    const double t = qb[i] / -col[i];
    dmax = maxacc(dmax, -col[i]);
    if (t < theta) { theta = t; best = i; }
  }
  if (best < 0 || !(theta < 0.0)) return -2;
  /* Only rows with qbar_i < 0 can leave: a tie window must not make z0
   * negative (a warm basis can carry roundoff-level negatives). */
  const double tau = TIE_EPS * maxacc(fabs(theta), R->qscale / dmax);
  int nc = 0;
  for (int i = 0; i < n; i++)
    if (qb[i] < 0.0 && qb[i] / -col[i] <= theta + tau) ws->cand[nc++] = i;
  ws->ties = nc;
  if (nc <= 1 || !R->lex) return nc >= 1 ? ws->cand[0] : best;
  testcase(ws, lex_ties);
  if (ws->classic) return cp_lk_lex_min_classic(ws, nc, col, -1.0);
  /* From the start basis B^-1 is the identity, unless it is a warm one. */
  if (ws->small || ws->k == 0) return cp_lk_lex_min_identity(ws, nc, col, -1.0);
  return cp_lk_lex_min(ws, nc, col, -1.0);
}

#endif
