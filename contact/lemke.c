/* Lemke's method, revised form with a structured explicit basis inverse.
 *
 * Tableau view. The augmented system (K1) is  w - M z - d z0 = q  with n
 * equations. Variables are numbered  v in [0,n): w_v,  [n,2n): z_{v-n},  2n:
 * z0, with original columns  e_i (w_i),  -M[:,j] (z_j),  -d (z0).  Tableau
 * row r holds the basic variable basic[r]; B is the matrix of basic columns in
 * row order, qbar = B^-1 q the basic values.
 *
 * Structure of B^-1. If w_i is basic in row r then B e_r = e_i, hence
 * B^-1 e_i = e_r: column i of B^-1 is a unit vector. Only the columns i whose
 * w_i is NONBASIC are dense; there are k of them, k = number of basic z's plus
 * z0 when basic. They are stored contiguously as the "active block"
 * Bact [n x k, column-major, leading dimension n]; slot s holds column
 * slot_col[s] of B^-1. Everything the method needs from B^-1 is then O(n k):
 *
 *   entering column  abar = B^-1 a = sum_{w_i basic} a_i e_{wrow[i]}
 *                               + sum_s a_{slot_col[s]} Bact[:,s],
 *   pivot on row r   B^-1 <- B^-1 - (abar - e_r) (row r of B^-1) / abar_r,
 *
 * and row r of B^-1 vanishes on the inactive columns except (when the leaving
 * variable is w_i) column i, which then becomes active. So a pivot is one
 * rank-1 update of the n x k block. We fuse it with the product that forms the
 * NEXT entering column (the complement of the leaving variable is known
 * before the update), so each pivot streams the block through the cache once.
 *
 * Lexicographic rule. Ties in the ratio test are broken by the rows of
 * [qbar, B^-1] divided by the pivot column (Cottle-Pang-Stone §4.9): entries of
 * inactive columns are reconstructed on the fly (0 or 1). Ties are rare in
 * random problems and frequent in degenerate ones; stats.lex_ties counts them.
 *
 * Numerical care. Pivot tolerance relative to the scale of the entering column
 * (original and updated). Every DRIFT_EVERY pivots the residual of B qbar = q
 * is checked componentwise; when it has drifted, B^-1 is rebuilt from the
 * basis (refactor(): a k x k LU, O(k^3 + n k^2)). At the end, z is refined
 * against M directly (up to two steps of iterative refinement preconditioned
 * by the explicit inverse, while the residual is above roundoff) and, if the
 * check still fails, recomputed by an LU solve of its basis. Every answer
 * passes cp_lcp_check.
 *
 * Warm start (lazy). The given complementary basis is LU-factored through its
 * k x k block M_ZZ and solved; if it is feasible, that is the answer (0
 * pivots, no inverse formed). Only if pivots are needed is the explicit
 * inverse built from the same LU (warm_inverse()).
 *
 * Memory: every array is sized by the capacity in cp_lemke_ws_create; a solve
 * allocates nothing (LAPACK/CBLAS are called through their *_work forms).
 */
#include "contact/lemke.h"
#include "contact/check_impl.h"

#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
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
#define RESCUE_CAP 5          /* its pivot cap per start: RESCUE_CAP (n + 1) + 100 */

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

static double max_abs(int n, const double *restrict x) {
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
  double cscale;           /* scale of the last ratio test's column */
  double qbmax;            /* max |qbar| after the last update */
  double *tab;             /* [scap*(2 scap+1)] small path: dense tableau */
  int scap;                /* largest n the small path can take */
  int tld;                 /* leading dimension of tab: n rounded up to 4 */
  int small;               /* 1 while a start runs on the dense tableau */
  cp_lemke_trace_fn trace; /* per-pivot observer, NULL: none */
  void *trace_ctx;
  int pps[LEMKE_MAX_STARTS];
  cp_lemke_stats st;
};

/* The defaults, once: cp_lemke_solve(..., NULL, ...) reads them here
 * instead of building the struct on every solve. */
static const cp_lemke_options lemke_defaults = {
    .cover = NULL,
    .max_pivots = 0,
    .restarts = 3,
    .seed = 1,
    .pivot_tol = 1e-12,
    .lexicographic = 1,
    .small_n = 0,
    .rescue = 0,
    .check = {.rel_tol = CP_CHECK_REL_TOL_DEFAULT},
};

cp_lemke_options cp_lemke_defaults(void) { return lemke_defaults; }

cp_lemke_ws *cp_lemke_ws_create(int capacity) {
  if (capacity < 1) return NULL;
  cp_lemke_ws *ws = calloc(1, sizeof *ws);
  if (!ws) return NULL;
  const size_t c = (size_t)capacity, cc = c * c;
  /* Vectors of the small path's tableau are padded to a multiple of 4
   * (tld): each vector of the qbar block gets a stride of c + 3 or more. */
  const size_t cv = (c + 7) & ~(size_t)7;
  ws->cap = capacity;
  ws->Bact = malloc(sizeof(double) * cc);
  ws->T1 = malloc(sizeof(double) * cc);
  ws->T2 = malloc(sizeof(double) * cc);
  ws->qbar = calloc(cv * 14, sizeof(double));
  ws->basic = malloc(sizeof(int) * c * 11);
  ws->ipiv = malloc(sizeof(lapack_int) * c * 2);
  ws->basis = calloc(2 * c, 1);
  ws->scap = capacity < SMALL_N_MAX ? capacity : SMALL_N_MAX;
  const size_t sc = (size_t)ws->scap;
  ws->tab = malloc(sizeof(double) * (sc + 3) * (2 * sc + 1));
  if (!ws->Bact || !ws->T1 || !ws->T2 || !ws->qbar || !ws->basic ||
      !ws->ipiv || !ws->basis || !ws->tab) {
    cp_lemke_ws_destroy(ws);
    return NULL;
  }
  /* Carve the vectors out of two blocks (fewer allocations, same sizes). */
  ws->col = ws->qbar + cv;
  ws->nxt = ws->col + cv;
  ws->d = ws->nxt + cv;
  ws->as = ws->d + cv;
  ws->lexv = ws->as + cv;
  ws->work = ws->lexv + cv; /* 4c */
  ws->wrow = ws->basic + c;
  ws->zrow = ws->wrow + c;
  ws->slot_col = ws->zrow + c;
  ws->col_slot = ws->slot_col + c;
  ws->cand = ws->col_slot + c;
  ws->cand2 = ws->cand + c;
  ws->kidx = ws->cand2 + c;
  ws->widx = ws->kidx + c;
  ws->gidx = ws->widx + c;
  ws->ratio = ws->work + 4 * cv;
  ws->chk = ws->ratio + cv; /* 3 cv */
  ws->wbas = ws->basis + c;
  ws->iwork = ws->ipiv + c;
  return ws;
}

void cp_lemke_ws_destroy(cp_lemke_ws *ws) {
  if (!ws) return;
  free(ws->Bact);
  free(ws->T1);
  free(ws->T2);
  free(ws->qbar);
  free(ws->basic);
  free(ws->ipiv);
  free(ws->basis);
  free(ws->tab);
  free(ws);
}

int cp_lemke_basis(const cp_lemke_ws *ws, unsigned char *basis) {
  if (!ws || !ws->basis_valid) return -1;
  memcpy(basis, ws->basis, (size_t)ws->n);
  return 0;
}

int cp_lemke_pivots_per_start(const cp_lemke_ws *ws, int *per_start, int cap) {
  if (!ws) return 0;
  int m = ws->nstarts < LEMKE_MAX_STARTS ? ws->nstarts : LEMKE_MAX_STARTS;
  for (int i = 0; i < m && i < cap; i++) per_start[i] = ws->pps[i];
  return ws->nstarts;
}

void cp_lemke_set_trace(cp_lemke_ws *ws, cp_lemke_trace_fn fn, void *ctx) {
  if (!ws) return;
  ws->trace = fn;
  ws->trace_ctx = ctx;
}

void cp_lemke_get_stats(const cp_lemke_ws *ws, cp_lemke_stats *st) {
  if (ws) *st = ws->st;
  else memset(st, 0, sizeof *st);
}

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

/* Entry (r, c) of B^-1. */
static inline double binv(const cp_lemke_ws *ws, int r, int c) {
  if (ws->small) return ws->tab[(size_t)r + (size_t)c * (size_t)ws->tld];
  const int s = ws->col_slot[c];
  if (s >= 0) return ws->Bact[(size_t)r + (size_t)s * (size_t)ws->n];
  return ws->wrow[c] == r ? 1.0 : 0.0;
}

/* out := B^-1 a_v for a z or z0 column (a_v given by pointer `a` with sign
 * `sg`, i.e. a_v = sg * a). Returns max |a_v|. O(n k). */
static double form_column(cp_lemke_ws *ws, const double *a, double sg,
                          double *out) {
  const int n = ws->n, k = ws->k;
  double amax = 0.0;
  memset(out, 0, sizeof(double) * (size_t)n);
  for (int i = 0; i < n; i++) {
    const double ai = sg * a[i];
    amax = fmax(amax, fabs(ai)); /* a NaN shows up in `out` (ratio test) */
    if (ws->wrow[i] >= 0) out[ws->wrow[i]] = ai;
  }
  if (k > 0) {
    for (int s = 0; s < k; s++) ws->as[s] = sg * a[ws->slot_col[s]];
    cblas_dgemv(CblasColMajor, CblasNoTrans, n, k, 1.0, ws->Bact, n, ws->as,
                1, 1.0, out, 1);
  }
  return amax;
}

/* Entering column of variable v into out; returns the scale of a_v. */
static double entering_column(cp_lemke_ws *ws, const run *R, int v,
                              double *out) {
  const int n = R->n;
  if (v < n) {
    const int s = ws->col_slot[v];
    memcpy(out, ws->Bact + (size_t)s * (size_t)n, sizeof(double) * (size_t)n);
    return 1.0;
  }
  if (v < 2 * n) return form_column(ws, R->M + (size_t)(v - n) * (size_t)n, -1.0, out);
  return form_column(ws, ws->d, -1.0, out);
}

/* qbar := B^-1 q. */
static void recompute_qbar(cp_lemke_ws *ws, const run *R) {
  form_column(ws, R->q, 1.0, ws->qbar);
  ws->qbmax = max_abs(R->n, ws->qbar);
}

/* Rebuilds the active block of B^-1 from the current basis (see the header
 * comment for the algebra). Rows of non-w variables K (k of them), active
 * columns A (the slots); C_AK[a][kk] = a_{basic[K[kk]]}[A[a]],
 * C_WK[i][kk] = a_{basic[K[kk]]}[W[i]].  B^-1 on rows K is C_AK^-1, on rows of
 * W it is -C_WK C_AK^-1. Returns 0, or -1 if C_AK is (numerically) singular;
 * then Bact is left unchanged. */
static int refactor(cp_lemke_ws *ws, const run *R) {
  const int n = R->n, k = ws->k;
  if (k == 0) return 0;
  int nk = 0, nw = 0;
  for (int r = 0; r < n; r++) {
    if (ws->basic[r] < n) ws->widx[nw++] = r;
    else ws->kidx[nk++] = r;
  }
  if (nk != k) return -1; /* inconsistent bookkeeping: programmer error */
  double *F = ws->T1, *CW = ws->T1 + (size_t)k * (size_t)k, *Y = ws->T2;
  const int ldw = nw > 0 ? nw : 1;
  double anorm = 0.0;
  for (int kk = 0; kk < k; kk++) {
    const int v = ws->basic[ws->kidx[kk]];
    double colsum = 0.0;
    for (int a = 0; a < k; a++) {
      double x = acol(ws, R, v, ws->slot_col[a]);
      F[a + (size_t)kk * (size_t)k] = x;
      colsum += fabs(x);
    }
    if (colsum > anorm) anorm = colsum;
    for (int i = 0; i < nw; i++)
      CW[i + (size_t)kk * (size_t)ldw] = acol(ws, R, v, ws->basic[ws->widx[i]]);
  }
  lapack_int info = LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, k, k, F, k, ws->ipiv);
  if (info != 0) return -1;
  double rcond = 0.0;
  info = LAPACKE_dgecon_work(LAPACK_COL_MAJOR, '1', k, F, k, anorm, &rcond,
                             ws->work, ws->iwork);
  if (info != 0 || !(rcond >= RCOND_MIN)) return -1;
  /* Y (n x k, ld n): rows 0..k-1 = C_AK^-1, rows k..n-1 = -C_WK C_AK^-1. */
  for (int a = 0; a < k; a++) {
    double *y = Y + (size_t)a * (size_t)n;
    memset(y, 0, sizeof(double) * (size_t)k);
    y[a] = 1.0;
  }
  info = LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', k, k, F, k, ws->ipiv, Y, n);
  if (info != 0) return -1;
  if (nw > 0)
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, nw, k, k, -1.0, CW,
                ldw, Y, n, 0.0, Y + k, n);
  for (size_t i = 0; i < (size_t)n * (size_t)k; i++)
    if (!isfinite(Y[i])) return -1;
  for (int s = 0; s < k; s++) {
    const double *y = Y + (size_t)s * (size_t)n;
    double *b = ws->Bact + (size_t)s * (size_t)n;
    for (int kk = 0; kk < k; kk++) b[ws->kidx[kk]] = y[kk];
    for (int i = 0; i < nw; i++) b[ws->widx[i]] = y[k + i];
  }
  return 0;
}

/* Componentwise relative residual of B qbar = q (O(n k)). */
static double basis_residual(cp_lemke_ws *ws, const run *R) {
  const int n = R->n;
  double *res = ws->nxt, *scl = ws->lexv; /* free at this point */
  for (int i = 0; i < n; i++) { res[i] = R->q[i]; scl[i] = fabs(R->q[i]); }
  for (int r = 0; r < n; r++) {
    const int v = ws->basic[r];
    const double x = ws->qbar[r];
    if (v < n) { res[v] -= x; scl[v] += fabs(x); continue; }
    const double *a = v < 2 * n ? R->M + (size_t)(v - n) * (size_t)n : ws->d;
    /* a_v = -a: B qbar contains -a x. */
    for (int i = 0; i < n; i++) { res[i] += a[i] * x; scl[i] += fabs(a[i] * x); }
  }
  double worst = 0.0;
  for (int i = 0; i < n; i++) {
    double e = fabs(res[i]) / (scl[i] + 1e-300);
    if (!(e <= worst)) worst = e; /* NaN propagates */
  }
  return worst;
}

/* ----- the pivot update kernels --------------------------------------- */

/* c_s -= x t_s for eight columns, accumulating acc += sum a_s c_s (new).
 * Eight columns per sweep halve the traffic on x and acc against four. */
static void upd8_acc(int n, double *restrict c0, double *restrict c1,
                     double *restrict c2, double *restrict c3,
                     double *restrict c4, double *restrict c5,
                     double *restrict c6, double *restrict c7,
                     const double *restrict x, double *restrict acc,
                     const double *restrict t, const double *restrict a) {
  const double t0 = t[0], t1 = t[1], t2 = t[2], t3 = t[3], t4 = t[4],
               t5 = t[5], t6 = t[6], t7 = t[7];
  const double a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3], a4 = a[4],
               a5 = a[5], a6 = a[6], a7 = a[7];
  for (int i = 0; i < n; i++) {
    const double xi = x[i];
    const double v0 = c0[i] - xi * t0, v1 = c1[i] - xi * t1;
    const double v2 = c2[i] - xi * t2, v3 = c3[i] - xi * t3;
    const double v4 = c4[i] - xi * t4, v5 = c5[i] - xi * t5;
    const double v6 = c6[i] - xi * t6, v7 = c7[i] - xi * t7;
    c0[i] = v0; c1[i] = v1; c2[i] = v2; c3[i] = v3;
    c4[i] = v4; c5[i] = v5; c6[i] = v6; c7[i] = v7;
    acc[i] += ((a0 * v0 + a1 * v1) + (a2 * v2 + a3 * v3)) +
              ((a4 * v4 + a5 * v5) + (a6 * v6 + a7 * v7));
  }
}

static void upd4_acc(int n, double *restrict c0, double *restrict c1,
                     double *restrict c2, double *restrict c3,
                     const double *restrict x, double *restrict acc,
                     const double *restrict t, const double *restrict a) {
  const double t0 = t[0], t1 = t[1], t2 = t[2], t3 = t[3];
  const double a0 = a[0], a1 = a[1], a2 = a[2], a3 = a[3];
  for (int i = 0; i < n; i++) {
    const double xi = x[i];
    const double v0 = c0[i] - xi * t0, v1 = c1[i] - xi * t1;
    const double v2 = c2[i] - xi * t2, v3 = c3[i] - xi * t3;
    c0[i] = v0; c1[i] = v1; c2[i] = v2; c3[i] = v3;
    acc[i] += (a0 * v0 + a1 * v1) + (a2 * v2 + a3 * v3);
  }
}

static void upd1_acc(int n, double *restrict c0, const double *restrict x,
                     double *restrict acc, double t0, double a0) {
  for (int i = 0; i < n; i++) {
    const double v0 = c0[i] - x[i] * t0;
    c0[i] = v0;
    acc[i] += a0 * v0;
  }
}

/* Plain rank-1 update of eight columns (no next column to form). */
static void upd8(int n, double *restrict c0, double *restrict c1,
                 double *restrict c2, double *restrict c3, double *restrict c4,
                 double *restrict c5, double *restrict c6, double *restrict c7,
                 const double *restrict x, const double *restrict t) {
  const double t0 = t[0], t1 = t[1], t2 = t[2], t3 = t[3], t4 = t[4],
               t5 = t[5], t6 = t[6], t7 = t[7];
  for (int i = 0; i < n; i++) {
    const double xi = x[i];
    c0[i] -= xi * t0; c1[i] -= xi * t1; c2[i] -= xi * t2; c3[i] -= xi * t3;
    c4[i] -= xi * t4; c5[i] -= xi * t5; c6[i] -= xi * t6; c7[i] -= xi * t7;
  }
}

static void upd1(int n, double *restrict c0, const double *restrict x,
                 double t0) {
  for (int i = 0; i < n; i++) c0[i] -= x[i] * t0;
}

/* Rank-1 update of the active block with x = abar - e_r and pivot piv; if
 * acc != NULL also acc += Bact_new * as (the next entering column). */
static void update_block(cp_lemke_ws *ws, const double *x, int r, double piv,
                         double *acc) {
  const int n = ws->n, k = ws->k;
  const double inv = 1.0 / piv;
  double *B = ws->Bact;
  const size_t ld = (size_t)n;
  int s = 0;
  double t[8];
  if (acc) {
    for (; s + 8 <= k; s += 8) {
      double *c = B + (size_t)s * ld;
      for (int l = 0; l < 8; l++) t[l] = c[(size_t)l * ld + (size_t)r] * inv;
      upd8_acc(n, c, c + ld, c + 2 * ld, c + 3 * ld, c + 4 * ld, c + 5 * ld,
               c + 6 * ld, c + 7 * ld, x, acc, t, ws->as + s);
    }
    if (s + 4 <= k) {
      double *c = B + (size_t)s * ld;
      for (int l = 0; l < 4; l++) t[l] = c[(size_t)l * ld + (size_t)r] * inv;
      upd4_acc(n, c, c + ld, c + 2 * ld, c + 3 * ld, x, acc, t, ws->as + s);
      s += 4;
    }
    for (; s < k; s++) {
      double *c0 = B + (size_t)s * ld;
      upd1_acc(n, c0, x, acc, c0[r] * inv, ws->as[s]);
    }
  } else {
    for (; s + 8 <= k; s += 8) {
      double *c = B + (size_t)s * ld;
      for (int l = 0; l < 8; l++) t[l] = c[(size_t)l * ld + (size_t)r] * inv;
      upd8(n, c, c + ld, c + 2 * ld, c + 3 * ld, c + 4 * ld, c + 5 * ld,
           c + 6 * ld, c + 7 * ld, x, t);
    }
    for (; s < k; s++) {
      double *c0 = B + (size_t)s * ld;
      upd1(n, c0, x, c0[r] * inv);
    }
  }
}

/* Pivots the entering variable v (column ws->col) into row r. The leaving
 * variable's complement becomes the next entering variable; its column is
 * formed during the update and left in ws->col (scale in *amax_next).
 * Returns the next entering variable, or -1 when z0 left. */
static int pivot(cp_lemke_ws *ws, const run *R, int r, int v,
                 double *amax_next) {
  const int n = R->n;
  double *x = ws->col; /* consumed: becomes abar - e_r */
  const double piv = x[r];
  const int u = ws->basic[r];
  int vn = -1;
  if (u < n) vn = n + u;
  else if (u < 2 * n) vn = u - n;
  x[r] -= 1.0;
  {
    const double t = ws->qbar[r] / piv;
    double *restrict qb = ws->qbar;
    const double *restrict xr = x;
    uint64_t m = 0; /* max |qbar| for the ratio test, fused (bit patterns) */
    for (int i = 0; i < n; i++) {
      const double v = qb[i] - xr[i] * t;
      qb[i] = v;
      const uint64_t u = dbits(v) & 0x7FFFFFFFFFFFFFFFull;
      m = u > m ? u : m;
    }
    ws->qbmax = bitsd(m);
  }
  /* Active set changes. Entering w_v: its column of B^-1 becomes e_r after
   * this pivot, drop it now. Leaving w_u: its column was e_r and becomes
   * dense; it joins the block as e_r and takes part in the update. */
  if (v < n) {
    const int s = ws->col_slot[v], last = ws->k - 1;
    if (s != last) {
      memcpy(ws->Bact + (size_t)s * (size_t)n,
             ws->Bact + (size_t)last * (size_t)n, sizeof(double) * (size_t)n);
      ws->slot_col[s] = ws->slot_col[last];
      ws->col_slot[ws->slot_col[s]] = s;
    }
    ws->col_slot[v] = -1;
    ws->k = last;
  }
  if (u < n) {
    const int s = ws->k++;
    double *c = ws->Bact + (size_t)s * (size_t)n;
    memset(c, 0, sizeof(double) * (size_t)n);
    c[r] = 1.0;
    ws->slot_col[s] = u;
    ws->col_slot[u] = s;
    ws->wrow[u] = -1;
  }
  ws->st.active_sum += ws->k;
  /* Basis bookkeeping (the next column's w part reads the new basis). */
  ws->basic[r] = v;
  ws->gidx[r] = v < n ? v : 0;
  ws->wbas[r] = v < n;
  if (v < n) ws->wrow[v] = r;
  else if (v < 2 * n) ws->zrow[v - n] = r;
  else ws->z0row = r;
  if (u >= n && u < 2 * n) ws->zrow[u - n] = -1;
  else if (u == VZ0(n)) ws->z0row = -1;
  *amax_next = 0.0;
  if (vn >= n) {
    /* Next column B^-1 a, a = -M[:,j]: the unit columns of B^-1 contribute
     * a_i in the row of each basic w_i (a gather, vectorised); the active
     * block is added during the update. */
    const double *restrict Mj = R->M + (size_t)(vn - n) * (size_t)n;
    double *restrict acc = ws->nxt;
    const int *restrict g = ws->gidx;
    const unsigned char *restrict wb = ws->wbas;
    for (int s = 0; s < ws->k; s++) ws->as[s] = -Mj[ws->slot_col[s]];
    for (int i = 0; i < n; i++) {
      const double a = Mj[g[i]];
      acc[i] = wb[i] ? -a : 0.0;
    }
    update_block(ws, x, r, piv, acc);
    *amax_next = max_abs(n, Mj);
    double *t = ws->col;
    ws->col = ws->nxt;
    ws->nxt = t;
  } else {
    update_block(ws, x, r, piv, NULL);
    if (vn >= 0) {
      memcpy(ws->col, ws->Bact + (size_t)ws->col_slot[vn] * (size_t)n,
             sizeof(double) * (size_t)n);
      *amax_next = 1.0;
    }
  }
  return u == VZ0(n) ? -1 : vn;
}

/* Lexicographic minimum of the rows of B^-1 divided by sg * col[r] over the
 * candidate rows cand[0..nc-1]. Returns the chosen row.
 *
 * Entries of B^-1 that are zero in exact arithmetic come out of the rank-1
 * updates as roundoff noise (1e-17 .. 1e-15 on the Siconos problem
 * lcp_tobenna). Degenerate contact problems tie on whole leading columns
 * whose true values are all zero, so the noise must not decide: each value
 * v_t = B^-1[r_t, c] / (sg col[r_t]) carries an error bound
 * e_t = LEX_EPS * |B^-1[:, c]|_inf / |col[r_t]| (the absolute error of an
 * entry scales with its column, not with its own size), and a candidate
 * stays tied while its interval [v_t - e_t, v_t + e_t] reaches below the
 * smallest upper end. (The former rule compared the values relative to the
 * largest of them, so a column of pure noise picked the most negative
 * noise: on lcp_tobenna the first start left the exact path at pivot 54
 * and wandered into the pivot cap.) If the noise bound ties rows through
 * every column, the largest pivot is the stablest choice. */
static int lex_min(cp_lemke_ws *ws, int nc, const double *col, double sg) {
  const int n = ws->n;
  int *cand = ws->cand, *keep = ws->cand2;
  for (int c = 0; c < n && nc > 1; c++) {
    const int sl = ws->small ? -1 : ws->col_slot[c];
    const double cs =
        ws->small ? max_abs(n, ws->tab + (size_t)c * (size_t)ws->tld)
        : sl >= 0 ? max_abs(n, ws->Bact + (size_t)sl * (size_t)n) : 1.0;
    const double del = LEX_EPS * cs;
    double up = INFINITY;
    for (int t = 0; t < nc; t++) {
      const int r = cand[t];
      const double p = sg * col[r];
      const double v = binv(ws, r, c) / p, e = del / p;
      ws->lexv[t] = v - e;
      if (v + e < up) up = v + e;
    }
    int m = 0;
    for (int t = 0; t < nc; t++)
      if (ws->lexv[t] <= up) keep[m++] = cand[t];
    memcpy(cand, keep, sizeof(int) * (size_t)m);
    nc = m;
  }
  int best = cand[0];
  for (int t = 1; t < nc; t++)
    if (fabs(col[cand[t]]) > fabs(col[best])) best = cand[t];
  return best;
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
CP_GCC_OPTIMIZE("no-tree-loop-distribute-patterns") static int
lex_min_identity(cp_lemke_ws *ws, int nc, const double *col, double sg) {
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

static int z0_or_lex(cp_lemke_ws *ws, const run *R, int nc,
                     const double *col);

/* The ratio test of a rescue start (ws->tight): point ratios
 * t_i = max(qbar_i, 0) / col_i, rows tied within TIE_EPS of the smallest
 * (relative to it or to |q| / |col|), no interval for the noise and no
 * preference for large pivots; ties then go to z0 or to lex_min as in
 * ratio_test. This is the ratio test the error bounds replaced: it loses
 * resting stacks (noise decides their exact ties) but solves contact
 * problems whose near-ties are real differences that the error bounds'
 * window (1e-10 max |qbar| wide) calls ties (docs/solvers.md, issue 24). */
static int ratio_test_tight(cp_lemke_ws *ws, const run *R, double tol,
                            double cmax) {
  const int n = R->n;
  const double *restrict col = ws->col, *restrict qb = ws->qbar;
  double *restrict t = ws->ratio;
  double theta = HUGE_VAL;
  for (int i = 0; i < n; i++) {
    const int ok = col[i] > tol;
    t[i] = ok ? (qb[i] > 0.0 ? qb[i] : 0.0) / col[i] : HUGE_VAL;
    theta = fmin(theta, t[i]);
  }
  if (!(theta < HUGE_VAL)) return -1;
  const double sc = R->qscale / cmax;
  const double thr = theta + TIE_EPS * (theta > sc ? theta : sc);
  int nc = 0;
  for (int i = 0; i < n; i++)
    if (t[i] <= thr) ws->cand[nc++] = i;
  ws->ties = nc;
  if (nc == 1) return ws->cand[0];
  return z0_or_lex(ws, R, nc, col);
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
  if (ws->tight) return ratio_test_tight(ws, R, tol, cmax);
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
   * velocity LCPs ended on rays (planner/sim/world.c). All upper ends are >= +0:
   * reduce on the bit patterns. */
  const double qbm = ws->qbmax; /* max |qbar|, kept by the updates */
  const double ramp = minacc(1.0, maxacc(QTIE_RAMP_MIN, ws->npiv / QTIE_RAMP));
  const double del = ramp * QTIE_EPS * (R->qscale > qbm ? R->qscale : qbm);
  uint64_t umin = dbits(HUGE_VAL);
  for (int i = 0; i < n; i++) {
    const int ok = col[i] > tol;
    const double num = ok ? (qb[i] > 0.0 ? qb[i] : 0.0) : HUGE_VAL;
    const double up = (num + del) / (ok ? col[i] : 1.0);
    /* t_i: the lower end, scaled by col_i (no second division). */
    t[i] = ok ? num - del : NAN; /* NaN: never tied */
    const uint64_t u = dbits(up);
    umin = u < umin ? u : umin;
  }
  const double upmin = bitsd(umin);
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
  return z0_or_lex(ws, R, nc, col);
}

/* The ratio test; the small path's padded lengths 4 and 8 get copies with
 * constant trip counts. */
static int ratio_test(cp_lemke_ws *ws, const run *R, double amax) {
  if (ws->small && ws->tld == 4) return ratio_test_rows(ws, R, amax, 4);
  if (ws->small && ws->tld == 8) return ratio_test_rows(ws, R, amax, 8);
  return ratio_test_rows(ws, R, amax, R->n);
}

/* Among the tied rows cand[0..nc): z0 if it is there, else the
 * lexicographic choice. */
static int z0_or_lex(cp_lemke_ws *ws, const run *R, int nc,
                     const double *col) {
  /* z0 among the tied rows: let it leave (ends the start with a solution).
   * After such an exit failed the check (run_start backs up), z0 is taken
   * out of the tie instead: its ratio was not the smallest after all. */
  if (ws->z0row >= 0) {
    int m = 0;
    for (int c = 0; c < nc; c++) {
      if (ws->cand[c] != ws->z0row) ws->cand[m++] = ws->cand[c];
      else if (!ws->z0skip) {
        testcase(ws, z0_ties);
        ws->z0tie = 1;
        return ws->z0row;
      }
    }
    if (m == 0) return ws->z0row;
    nc = m;
  }
  if (!R->lex) return ws->cand[0];
  testcase(ws, lex_ties);
  return lex_min(ws, nc, col, 1.0);
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
  /* From the start basis B^-1 is the identity, unless it is a warm one. */
  if (ws->small || ws->k == 0) return lex_min_identity(ws, nc, col, -1.0);
  return lex_min(ws, nc, col, -1.0);
}

CP_GCC_OPTIMIZE("no-tree-loop-distribute-patterns") static int
first_row(cp_lemke_ws *ws, const run *R) {
  return first_row_n(ws, R, R->n);
}

/* Basis from the all-w start. */
static void cold_basis(cp_lemke_ws *ws, const run *R) {
  const int n = R->n;
  for (int i = 0; i < n; i++) {
    ws->basic[i] = i;
    ws->wrow[i] = i;
    ws->zrow[i] = -1;
    ws->col_slot[i] = -1;
    ws->gidx[i] = i;
    ws->wbas[i] = 1;
  }
  ws->k = 0;
  ws->z0row = -1;
  memcpy(ws->qbar, R->q, sizeof(double) * (size_t)n);
}

static int factor_mzz(cp_lemke_ws *ws, const run *R, int cond);
static void solve_mzz(cp_lemke_ws *ws, const run *R, int m, double *z,
                      double *w);

/* Warm basis: row i holds z_i if warm[i] else w_i; d := B e. Computes the
 * basic values into qbar (z, w used as scratch). Returns -1 if the basis is
 * singular (the caller starts cold). */
static int warm_basis(cp_lemke_ws *ws, const run *R, const unsigned char *warm,
                      double *z, double *w) {
  const int n = R->n;
  ws->k = 0;
  ws->z0row = -1;
  for (int i = 0; i < n; i++) {
    ws->col_slot[i] = -1;
    ws->d[i] = 0.0;
  }
  for (int i = 0; i < n; i++) {
    if (warm[i]) {
      ws->basic[i] = n + i;
      ws->zrow[i] = i;
      ws->wrow[i] = -1;
      ws->gidx[i] = 0;
      ws->wbas[i] = 0;
      ws->slot_col[ws->k] = i;
      ws->col_slot[i] = ws->k++;
      const double *Mi = R->M + (size_t)i * (size_t)n;
      for (int r = 0; r < n; r++) ws->d[r] -= Mi[r];
    } else {
      ws->basic[i] = i;
      ws->wrow[i] = i;
      ws->zrow[i] = -1;
      ws->gidx[i] = i;
      ws->wbas[i] = 1;
      ws->d[i] += 1.0;
    }
  }
  /* Lazy: factor M_ZZ and solve for the basic values; the explicit inverse
   * is built (refactor()) only if pivots turn out to be needed. */
  const int m = factor_mzz(ws, R, 0);
  if (m < 0) return -1;
  solve_mzz(ws, R, m, z, w);
  for (int i = 0; i < n; i++) {
    const double x = ws->zrow[i] >= 0 ? z[i] : w[i];
    if (!isfinite(x)) return -1;
    ws->qbar[i] = x; /* row i holds z_i or w_i */
  }
  return 0;
}

/* z, w of the current (complementary or almost complementary) basis. */
static void read_iterate(const cp_lemke_ws *ws, int n, double *z, double *w) {
  for (int i = 0; i < n; i++) {
    z[i] = ws->zrow[i] >= 0 ? ws->qbar[ws->zrow[i]] : 0.0;
    w[i] = ws->wrow[i] >= 0 ? ws->qbar[ws->wrow[i]] : 0.0;
  }
}

/* w := M[:,Z] z_Z + q (z is zero off Z). */
static void eval_w(const cp_lemke_ws *ws, const run *R, const double *z,
                   double *w) {
  const int n = R->n;
  memcpy(w, R->q, sizeof(double) * (size_t)n);
  for (int j = 0; j < n; j++) {
    if (ws->zrow[j] < 0 || z[j] == 0.0) continue;
    const double *Mj = R->M + (size_t)j * (size_t)n, zj = z[j];
    for (int i = 0; i < n; i++) w[i] += Mj[i] * zj;
  }
}

/* LU factors of M_ZZ, Z = {j : z_j basic} (listed in kidx[0..m)), in T1
 * (ld m) with pivots ipiv. Returns m, or -1 if M_ZZ is singular; with
 * `cond` also when its reciprocal condition estimate is below RCOND_MIN.
 * (Without: a solution computed from the factors is accepted only by the
 * check, so a poor factorisation cannot produce a wrong answer.) */
static int factor_mzz(cp_lemke_ws *ws, const run *R, int cond) {
  const int n = R->n;
  int m = 0;
  for (int j = 0; j < n; j++)
    if (ws->zrow[j] >= 0) ws->kidx[m++] = j;
  if (m == 0) return 0;
  double *F = ws->T1, anorm = 0.0;
  for (int b = 0; b < m; b++) {
    const double *Mj = R->M + (size_t)ws->kidx[b] * (size_t)n;
    double cs = 0.0;
    for (int a = 0; a < m; a++) {
      const double x = Mj[ws->kidx[a]];
      F[a + (size_t)b * (size_t)m] = x;
      cs += fabs(x);
    }
    anorm = cs > anorm ? cs : anorm;
  }
  if (LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, m, m, F, m, ws->ipiv) != 0) return -1;
  if (!cond) return m;
  double rcond = 0.0;
  if (LAPACKE_dgecon_work(LAPACK_COL_MAJOR, '1', m, F, m, anorm, &rcond,
                          ws->work, ws->iwork) != 0 ||
      !(rcond >= RCOND_MIN))
    return -1;
  return m;
}

/* With factor_mzz done: z_Z = -M_ZZ^-1 q_Z plus one step of iterative
 * refinement, z = 0 off Z; w = M z + q with w_Z = 0 exactly. */
static void solve_mzz(cp_lemke_ws *ws, const run *R, int m, double *z,
                      double *w) {
  const int n = R->n;
  double *F = ws->T1, *rhs = ws->T2;
  memset(z, 0, sizeof(double) * (size_t)n);
  if (m > 0) {
    for (int b = 0; b < m; b++) rhs[b] = -R->q[ws->kidx[b]];
    LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', m, 1, F, m, ws->ipiv, rhs, m);
    for (int b = 0; b < m; b++) z[ws->kidx[b]] = rhs[b];
    eval_w(ws, R, z, w);
    for (int b = 0; b < m; b++) rhs[b] = -w[ws->kidx[b]];
    LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', m, 1, F, m, ws->ipiv, rhs, m);
    for (int b = 0; b < m; b++) z[ws->kidx[b]] += rhs[b];
  }
  eval_w(ws, R, z, w);
  for (int b = 0; b < m; b++) w[ws->kidx[b]] = 0.0;
}

/* Explicit inverse of a warm (complementary) basis from the LU of M_ZZ left
 * by factor_mzz (m = k columns, slot s <-> column kidx[s], row i holds z_i or
 * w_i). With C_AK = -M_ZZ and C_WK = -M_WZ (refactor()): B^-1 on the z rows
 * is -M_ZZ^-1, on the w rows -M_WZ M_ZZ^-1. Cost 4/3 k^3 (dgetri) plus
 * 2 (n-k) k^2 (one GEMM), against 8/3 k^3 + 2 (n-k) k^2 for refactor().
 * Returns -1 if M_ZZ is ill-conditioned (rcond < RCOND_MIN). */
static int warm_inverse(cp_lemke_ws *ws, const run *R, int m) {
  const int n = R->n, nw = n - m;
  if (m == 0) return 0;
  double *F = ws->T1, *CW = ws->T1 + (size_t)m * (size_t)m, *P = ws->T2;
  double anorm = 0.0;
  for (int b = 0; b < m; b++) {
    const double *Mj = R->M + (size_t)ws->kidx[b] * (size_t)n;
    double cs = 0.0;
    for (int a = 0; a < m; a++) cs += fabs(Mj[ws->kidx[a]]);
    anorm = cs > anorm ? cs : anorm;
  }
  double rcond = 0.0;
  if (LAPACKE_dgecon_work(LAPACK_COL_MAJOR, '1', m, F, m, anorm, &rcond,
                          ws->work, ws->iwork) != 0 ||
      !(rcond >= RCOND_MIN))
    return -1;
  const lapack_int lwork = (lapack_int)ws->cap * (lapack_int)ws->cap;
  if (LAPACKE_dgetri_work(LAPACK_COL_MAJOR, m, F, m, ws->ipiv, P, lwork) != 0)
    return -1;
  int t = 0;
  for (int i = 0; i < n; i++)
    if (ws->zrow[i] < 0) ws->widx[t++] = i;
  if (nw > 0) {
    for (int b = 0; b < m; b++) {
      const double *Mj = R->M + (size_t)ws->kidx[b] * (size_t)n;
      for (int a = 0; a < nw; a++) CW[a + (size_t)b * (size_t)nw] = Mj[ws->widx[a]];
    }
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, nw, m, m, -1.0, CW,
                nw, F, m, 0.0, P, nw);
  }
  for (size_t i = 0; i < (size_t)m * (size_t)m; i++)
    if (!isfinite(F[i])) return -1;
  for (int s = 0; s < m; s++) {
    double *b = ws->Bact + (size_t)s * (size_t)n;
    const double *f = F + (size_t)s * (size_t)m, *p = P + (size_t)s * (size_t)nw;
    for (int kk = 0; kk < m; kk++) b[ws->kidx[kk]] = -f[kk];
    for (int a = 0; a < nw; a++) b[ws->widx[a]] = p[a];
  }
  return 0;
}

static cp_lcp_status lu_retry(cp_lemke_ws *ws, const run *R,
                              const cp_check_options *chk, double *z,
                              double *w, cp_lcp_info *info);

/* The end of a start at a complementary basis (zrow set): w_i = 0 where
 * z_i is basic, the check, and if it fails an LU solve of the basis system
 * M_ZZ z_Z = -q_Z and the check again. */
static cp_lcp_status check_or_lu(cp_lemke_ws *ws, const run *R,
                                 const cp_check_options *chk, double *z,
                                 double *w, cp_lcp_info *info) {
  const int n = R->n;
  for (int j = 0; j < n; j++)
    if (ws->zrow[j] >= 0) w[j] = 0.0; /* nonbasic: exactly zero */
  if (cp_lcp_check(n, R->M, R->q, z, w, chk, info)) return CP_LCP_SOLVED;
  return lu_retry(ws, R, chk, z, w, info);
}

/* The answer of a complementary basis failed the check: z again by an LU
 * solve of the basis system M_ZZ z_Z = -q_Z, and the check again. */
static cp_lcp_status lu_retry(cp_lemke_ws *ws, const run *R,
                              const cp_check_options *chk, double *z,
                              double *w, cp_lcp_info *info) {
  const int n = R->n;
  const int mz = factor_mzz(ws, R, 0);
  if (mz >= 0) {
    solve_mzz(ws, R, mz, z, w);
    ws->st.lu_polish = 1;
    if (cp_lcp_check(n, R->M, R->q, z, w, chk, info)) return CP_LCP_SOLVED;
  }
  return CP_LCP_CHECK_FAILED;
}

/* Complementary basis reached: refine z against M and check. Falls back to
 * an LU solve of the basis system if refinement is not good enough. */
static cp_lcp_status finish(cp_lemke_ws *ws, const run *R,
                            const cp_check_options *chk, double *z, double *w,
                            cp_lcp_info *info) {
  const int n = R->n, k = ws->k;
  read_iterate(ws, n, z, w);
  /* Iterative refinement: residual rho_i = (M z + q)_i on the basic-z rows
   * must vanish; M_ZZ^-1 = -B^-1[zrows, Z] (see refactor()), so
   * z_Z += B^-1[zrows, Z] rho_Z. Stops once rho is at roundoff level. */
  int m = 0;
  for (int j = 0; j < n; j++)
    if (ws->zrow[j] >= 0) {
      ws->kidx[m] = j;
      ws->widx[m++] = ws->zrow[j];
    }
  eval_w(ws, R, z, w);
  for (int it = 0; it < 2 && k > 0; it++) {
    double rmax = 0.0;
    for (int b = 0; b < m; b++) {
      const double a = fabs(w[ws->kidx[b]]);
      rmax = a > rmax ? a : rmax;
    }
    if (!(rmax > 8.0 * DBL_EPSILON * R->qscale)) break;
    for (int s = 0; s < k; s++) {
      const double rho = w[ws->slot_col[s]];
      const double *b = ws->Bact + (size_t)s * (size_t)n;
      for (int c = 0; c < m; c++) z[ws->kidx[c]] += b[ws->widx[c]] * rho;
    }
    eval_w(ws, R, z, w);
  }
  return check_or_lu(ws, R, chk, z, w, info);
}

/* ----- the small path ------------------------------------------------- */

/* z, w of the small path's complementary basis: z from the tableau, one
 * step of iterative refinement with its B^-1 (as in finish()), w = M z + q;
 * then the check, and the LU fallback of finish(). M z + q is formed once,
 * by the check's own scan (contact/check_impl.h: the same sums as eval_w
 * and as cp_lcp_check, so the same numbers and the same verdict), and
 * serves the refinement test, w and the check. */
static inline __attribute__((always_inline)) cp_lcp_status
small_finish(cp_lemke_ws *ws, const run *R, const cp_check_options *chk,
             double *z, double *w, cp_lcp_info *info, const int n) {
  double *buf = ws->chk;
  for (int i = 0; i < n; i++) {
    ws->zrow[i] = ws->wrow[i] = -1;
    z[i] = 0.0;
  }
  for (int r = 0; r < n; r++) {
    const int v = ws->basic[r];
    if (v < n) ws->wrow[v] = r;
    else { /* z0 has left: every row is a w or a z */
      ws->zrow[v - n] = r;
      z[v - n] = ws->qbar[r];
    }
  }
  double zmax = cp_lcp_check_scan(n, R->M, R->q, z, buf, 1);
  double rmax = 0.0;
  for (int j = 0; j < n; j++)
    if (ws->zrow[j] >= 0) rmax = maxacc(rmax, fabs(buf[j]));
  if (rmax > 8.0 * DBL_EPSILON * R->qscale) {
    for (int j = 0; j < n; j++) {
      if (ws->zrow[j] < 0) continue;
      const double rho = buf[j], *b = ws->tab + (size_t)j * (size_t)ws->tld;
      for (int i = 0; i < n; i++)
        if (ws->zrow[i] >= 0) z[i] += b[ws->zrow[i]] * rho;
    }
    zmax = cp_lcp_check_scan(n, R->M, R->q, z, buf, 0); /* same norms */
  }
  for (int j = 0; j < n; j++) w[j] = ws->zrow[j] >= 0 ? 0.0 : buf[j];
  if (cp_lcp_check_judge(n, R->M, z, w, buf, zmax, chk, info))
    return CP_LCP_SOLVED;
  return lu_retry(ws, R, chk, z, w, info);
}

/* Column updates of a small pivot, L rows (the padded leading dimension;
 * a constant in the specialised copies, so each column is a few vector
 * operations): t_j -= pc t_j[r] / p on every column with t_j[r] != 0,
 * t_j[r] = t_j[r] / p; the same on qb, whose largest |entry| is returned.
 * Padding rows are 0 in pc, the tableau and qb, and stay 0. */
static inline __attribute__((always_inline)) double
small_update(double *restrict T, double *restrict qb,
             const double *restrict pc, int ncol, int L, int r, double inv) {
  for (int j = 0; j < ncol; j++) {
    double *restrict tj = T + (size_t)j * (size_t)L;
    const double t = tj[r];
    if (t == 0.0) continue; /* most unit columns of basic variables */
    const double f = t * inv;
    for (int i = 0; i < L; i++) tj[i] -= pc[i] * f;
    tj[r] = f;
  }
  const double f = qb[r] * inv;
  uint64_t m = 0;
  for (int i = 0; i < L; i++) {
    const double v = i == r ? f : qb[i] - pc[i] * f;
    qb[i] = v;
    const uint64_t u = dbits(v) & 0x7FFFFFFFFFFFFFFFull;
    m = u > m ? u : m;
  }
  return bitsd(m);
}

/* A tableau column into the pivot column: constant lengths for the padded
 * sizes 4 and 8 (inline moves instead of a library call per pivot). */
static inline void copy_col(double *restrict dst, const double *restrict src,
                            size_t ld) {
  if (ld == 4) memcpy(dst, src, 4 * sizeof(double));
  else if (ld == 8) memcpy(dst, src, 8 * sizeof(double));
  else memcpy(dst, src, ld * sizeof(double));
}

/* A pivot of the small path's tableau on row r with pivot p, the pivot
 * column in ws->col (consumed: the column itself becomes e_r); L is the
 * padded length ws->tld. */
static inline __attribute__((always_inline)) void
small_pivot_ld(cp_lemke_ws *ws, int n, int r, double p, const int L) {
  ws->qbmax = small_update(ws->tab, ws->qbar, ws->col, 2 * n + 1, L, r, 1.0 / p);
}

/* One cold start on the dense tableau [I, -M, -d] (rhs in qbar), for small
 * n: the same decisions as run_start (first_row, ratio_test and lex_min read
 * B^-1 from the tableau's w columns while ws->small is set), but a pivot is
 * one plain loop over the tableau instead of the structured update with its
 * bookkeeping and BLAS calls. Measured (docs/solvers.md): a few per cent
 * faster on contact LCPs with n <= 4, no faster from n = 5 up (the
 * structured form's O(n k) pivots win), hence SMALL_N_AUTO. No refactoring:
 * small starts are short. Counts pivots in *piv. */
static inline __attribute__((always_inline)) cp_lcp_status
small_start_ld(cp_lemke_ws *ws, const run *R, const cp_check_options *chk,
               double *z, double *w, cp_lcp_info *info, int *piv,
               const int L, const int n) {
  const int vz0 = VZ0(n);
  const size_t ld = (size_t)L, nn = (size_t)n;
  const int rows = L == 4 || L == 8 ? L : n; /* as ratio_test() */
  double *restrict T = ws->tab, *restrict qb = ws->qbar, *restrict pc = ws->col;
  int backups = 0;
  *piv = 0;
  ws->tld = (int)ld;
  /* [I, -M, -d], rows padded with zeros to ld. */
  memset(T, 0, sizeof(double) * ld * (2 * nn + 1));
  memset(qb, 0, sizeof(double) * ld);
  memset(pc, 0, sizeof(double) * ld);
  for (int i = 0; i < n; i++) {
    T[(size_t)i + (size_t)i * ld] = 1.0;
    ws->basic[i] = i;
    T[(size_t)i + (size_t)vz0 * ld] = -ws->d[i];
    qb[i] = R->q[i];
    pc[i] = -ws->d[i];
  }
  for (size_t j = 0; j < nn; j++)
    for (size_t i = 0; i < nn; i++) T[i + (nn + j) * ld] = -R->M[i + j * nn];
  ws->z0row = -1;
  int v = vz0;
  int r = first_row_n(ws, R, n);
  if (r < 0) {
    snprintf(R->reason, sizeof info->reason, "non-finite data at the start");
    return CP_LCP_NUMERICAL;
  }
  for (;;) {
    if (ws->trace) {
      const cp_lemke_step step = {ws->nstarts, *piv, v, ws->basic[r], r,
                                  ws->ties};
      ws->trace(ws->trace_ctx, &step);
    }
    const double p = pc[r];
    if (!(fabs(p) > 0.0 && fabs(p) <= DBL_MAX)) { /* zero or not finite */
      snprintf(R->reason, sizeof info->reason,
               "zero or non-finite pivot at pivot %d", *piv);
      return CP_LCP_NUMERICAL;
    }
    small_pivot_ld(ws, n, r, p, L);
    ++*piv;
    const int u = ws->basic[r];
    ws->basic[r] = v;
    if (v == vz0) ws->z0row = r;
    if (u == vz0) {
      const cp_lcp_status st = small_finish(ws, R, chk, z, w, info, n);
      /* As run_start: a z0 exit from a tie that fails the check is undone
       * (pivot z0 back into row r) and another tied row leaves. */
      if (st != CP_LCP_CHECK_FAILED || !ws->tight || !ws->z0tie ||
          backups >= Z0_BACKUPS ||
          *piv >= R->cap)
        return st;
      memcpy(pc, T + (size_t)vz0 * ld, sizeof(double) * ld);
      if (!(fabs(pc[r]) > 0.0)) return st;
      small_pivot_ld(ws, n, r, pc[r], L);
      ws->basic[r] = vz0;
      ws->z0row = r;
      ws->st.lu_polish = 0;
      backups++;
      testcase(ws, z0_backups);
      memcpy(pc, T + (size_t)v * ld, sizeof(double) * ld);
      const double am = v < n ? 1.0 : max_abs(n, R->M + (size_t)(v - n) * nn);
      ws->z0skip = 1;
      r = ratio_test_rows(ws, R, am, rows);
      ws->z0skip = 0;
      if (r < 0) return st;
      continue;
    }
    if (*piv >= R->cap) {
      snprintf(R->reason, sizeof info->reason, "pivot cap %d reached", R->cap);
      return CP_LCP_PIVOT_CAP;
    }
    v = u < n ? u + n : u - n;
    copy_col(pc, T + (size_t)v * ld, ld);
    const double amax =
        v < n ? 1.0 : max_abs(n, R->M + (size_t)(v - n) * nn);
    ws->npiv = *piv;
    r = ratio_test_rows(ws, R, amax, rows);
    if (r == -1) {
      snprintf(R->reason, sizeof info->reason,
               "secondary ray at pivot %d (entering %c%d)", *piv,
               v < n ? 'w' : 'z', (v < n ? v : v - n) + 1);
      return CP_LCP_SECONDARY_RAY;
    }
    if (r < 0) {
      snprintf(R->reason, sizeof info->reason,
               "non-finite entering column at pivot %d", *piv);
      return CP_LCP_NUMERICAL;
    }
  }
}

/* The small path's start with the padded length L a constant for 4 and 8
 * (n <= 8: the pivots, column copies and ratio tests then inline with
 * constant trip counts, without a dispatch per pivot). */
static cp_lcp_status small_start(cp_lemke_ws *ws, const run *R,
                                 const cp_check_options *chk, double *z,
                                 double *w, cp_lcp_info *info, int *piv) {
  switch (R->n) {
  case 2: return small_start_ld(ws, R, chk, z, w, info, piv, 2, 2);
  case 3: return small_start_ld(ws, R, chk, z, w, info, piv, 4, 3);
  case 4: return small_start_ld(ws, R, chk, z, w, info, piv, 4, 4);
  default: break;
  }
  const int ld = (R->n + 3) & ~3;
  if (ld == 8) return small_start_ld(ws, R, chk, z, w, info, piv, 8, R->n);
  return small_start_ld(ws, R, chk, z, w, info, piv, ld, R->n);
}

/* The small path's iterate (for a failed start's diagnosis). */
static void small_iterate(const cp_lemke_ws *ws, int n, double *z, double *w) {
  memset(z, 0, sizeof(double) * (size_t)n);
  memset(w, 0, sizeof(double) * (size_t)n);
  for (int r = 0; r < n; r++) {
    const int v = ws->basic[r];
    if (v < n) w[v] = ws->qbar[r];
    else if (v < 2 * n) z[v - n] = ws->qbar[r];
  }
}

/* Undoes the pivot that brought v into row r and took z0 out: z0 basic in
 * row r again, v nonbasic (a w_v entering had dropped its column of B^-1
 * from the active block: it rejoins), B^-1 rebuilt from the basis, qbar
 * recomputed and v's column formed in ws->col (scale in *amax). Returns 0,
 * or -1 if the basis cannot be refactored. */
static int unpivot_z0(cp_lemke_ws *ws, const run *R, int r, int v,
                      double *amax) {
  const int n = R->n;
  ws->basic[r] = VZ0(n);
  ws->gidx[r] = 0;
  ws->wbas[r] = 0;
  ws->z0row = r;
  if (v < n) {
    ws->wrow[v] = -1;
    const int s = ws->k++;
    ws->slot_col[s] = v;
    ws->col_slot[v] = s;
  } else {
    ws->zrow[v - n] = -1;
  }
  ws->st.lu_polish = 0;
  if (refactor(ws, R) != 0) return -1;
  recompute_qbar(ws, R);
  *amax = entering_column(ws, R, v, ws->col);
  return 0;
}

/* One start from the basis already set up in ws (z0 about to enter with
 * column -dbar in ws->col). Counts pivots in *piv. */
static cp_lcp_status run_start(cp_lemke_ws *ws, const run *R,
                               const cp_check_options *chk, double *z,
                               double *w, cp_lcp_info *info, int *piv) {
  const int n = R->n;
  int backups = 0;
  *piv = 0;
  int v = VZ0(n);
  double amax = 0.0;
  for (int i = 0; i < n; i++) amax = maxacc(amax, fabs(ws->d[i])); /* d > 0, finite */
  int r = first_row(ws, R);
  if (r < 0) {
    snprintf(R->reason, sizeof info->reason, "non-finite data at the start");
    return CP_LCP_NUMERICAL;
  }
  for (;;) {
    const double p = ws->col[r];
    if (!isfinite(p) || p == 0.0) {
      snprintf(R->reason, sizeof info->reason,
               "zero or non-finite pivot at pivot %d", *piv);
      read_iterate(ws, n, z, w);
      return CP_LCP_NUMERICAL;
    }
    if (ws->trace) {
      const cp_lemke_step step = {ws->nstarts, *piv, v, ws->basic[r], r,
                                  ws->ties};
      ws->trace(ws->trace_ctx, &step);
    }
    int vn = pivot(ws, R, r, v, &amax);
    ++*piv;
    if (vn < 0) {
      const cp_lcp_status st = finish(ws, R, chk, z, w, info);
      /* z0 left from a tie and the answer fails the check: the tie was
       * not real (a basic value whose exact ratio is smaller went negative
       * beyond its row's tolerance). Back up one pivot and let another of
       * the tied rows leave instead (diagnosis: docs/solvers.md). */
      if (st != CP_LCP_CHECK_FAILED || !ws->tight || !ws->z0tie ||
          backups >= Z0_BACKUPS ||
          *piv >= R->cap || unpivot_z0(ws, R, r, v, &amax) != 0)
        return st;
      backups++;
      testcase(ws, z0_backups);
      ws->z0skip = 1;
      ws->npiv = *piv;
      r = ratio_test(ws, R, amax);
      ws->z0skip = 0;
      if (r < 0) return st;
      continue;
    }
    if (*piv >= R->cap) {
      snprintf(R->reason, sizeof info->reason, "pivot cap %d reached", R->cap);
      read_iterate(ws, n, z, w);
      return CP_LCP_PIVOT_CAP;
    }
    v = vn;
    if (*piv % DRIFT_EVERY == 0 && ws->k > 0) {
      double e = basis_residual(ws, R);
      if (!(e <= DRIFT_TOL)) {
        testcase(ws, refactors);
        if (refactor(ws, R) == 0) {
          recompute_qbar(ws, R);
          amax = entering_column(ws, R, v, ws->col);
        }
      }
    }
    ws->npiv = *piv;
    r = ratio_test(ws, R, amax);
    /* A tiny pivot, or no pivot at all (a secondary ray), may be an
     * artefact of the error accumulated in B^-1 by the rank-1 updates: a
     * zero entry of the entering column that came out as 1e-11 of its scale
     * (resting stacks of 30 boxes with exact ties did this and blew B^-1 up
     * to 1e12). Before acting on one, rebuild B^-1 from the basis, recompute
     * qbar and the column, and redo the ratio test; what survives is real. */
    if ((r == -1 || (r >= 0 && fabs(ws->col[r]) < SMALL_PIVOT * ws->cscale)) &&
        ws->k > 0 && refactor(ws, R) == 0) {
      testcase(ws, pivot_refactors);
      recompute_qbar(ws, R);
      amax = entering_column(ws, R, v, ws->col);
      r = ratio_test(ws, R, amax);
    }
    if (r == -1) {
      snprintf(R->reason, sizeof info->reason,
               "secondary ray at pivot %d (entering %c%d)", *piv,
               v < n ? 'w' : 'z', (v < n ? v : v - n) + 1);
      read_iterate(ws, n, z, w);
      return CP_LCP_SECONDARY_RAY;
    }
    if (r < 0) {
      snprintf(R->reason, sizeof info->reason,
               "non-finite entering column at pivot %d", *piv);
      read_iterate(ws, n, z, w);
      return CP_LCP_NUMERICAL;
    }
  }
}

static uint64_t splitmix64(uint64_t *s) {
  uint64_t x = (*s += 0x9E3779B97F4A7C15ull);
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

cp_lcp_status cp_lemke_solve(cp_lemke_ws *ws, int n, const double *M,
                             const double *q, const cp_lemke_options *opt,
                             const unsigned char *warm, double *z, double *w,
                             cp_lcp_info *info) {
  cp_lcp_info_clear(info);
  info->solver = CP_SOLVER_LEMKE;
  if (!ws || n < 1 || !M || !q || !z || !w) {
    snprintf(info->reason, sizeof info->reason, "invalid arguments");
    return info->status = CP_LCP_NUMERICAL;
  }
  ws->basis_valid = 0;
  ws->nstarts = 0;
  memset(&ws->st, 0, sizeof ws->st);
  if (n > ws->cap) {
    snprintf(info->reason, sizeof info->reason,
             "problem size %d exceeds the workspace capacity %d", n, ws->cap);
    return info->status = CP_LCP_NOMEM;
  }
  if (!opt) opt = &lemke_defaults;
  ws->n = n;
  run R;
  R.n = n;
  R.M = M;
  R.q = q;
  R.pivot_tol = opt->pivot_tol > 0.0 ? opt->pivot_tol : 0.0;
  R.lex = opt->lexicographic != 0;
  R.cap = opt->max_pivots > 0 ? opt->max_pivots : 50 * (n + 1) + 100;
  R.reason = info->reason;
  R.qscale = 1.0;
  double qmin = INFINITY, qabs = 0.0;
  for (int i = 0; i < n; i++) {
    if (!isfinite(q[i])) {
      snprintf(info->reason, sizeof info->reason, "q[%d] is not finite", i);
      return info->status = CP_LCP_NUMERICAL;
    }
    qabs = maxacc(qabs, fabs(q[i])); /* q is finite here */
    qmin = minacc(qmin, q[i]);
  }
  R.qscale = maxacc(1.0, qabs);
  if (opt->cover)
    for (int i = 0; i < n; i++)
      if (!(opt->cover[i] > 0.0) || !isfinite(opt->cover[i])) {
        snprintf(info->reason, sizeof info->reason,
                 "covering vector entry %d is not positive", i);
        return info->status = CP_LCP_NUMERICAL;
      }
  const cp_check_options *chk = &opt->check;

  if (qmin >= 0.0) { /* z = 0 solves it */
    memset(z, 0, sizeof(double) * (size_t)n);
    memcpy(w, q, sizeof(double) * (size_t)n);
    ws->nstarts = 1;
    ws->pps[0] = 0;
    info->starts = 1;
    if (cp_lcp_check(n, M, q, z, w, chk, info)) {
      memset(ws->basis, 0, (size_t)n);
      ws->basis_valid = 1;
      info->polished = 1;
      return info->status = CP_LCP_SOLVED;
    }
    return info->status = CP_LCP_CHECK_FAILED;
  }

  /* Cold starts of small problems run on the dense tableau. */
  const int small_n = opt->small_n < 0   ? 0
                      : opt->small_n > 0 ? (opt->small_n < ws->scap ? opt->small_n : ws->scap)
                      : (SMALL_N_AUTO < ws->scap ? SMALL_N_AUTO : ws->scap);
  uint64_t rng = opt->seed;
  const int restarts = opt->restarts > 0 ? opt->restarts : 0;
  cp_lcp_status st = CP_LCP_NUMERICAL;
  int cover_used = 0;
  ws->tight = 0;
  /* The rescue pass: the cover, then random covers (the first ones the
   * same as the ordinary pass's), at least RESCUE_STARTS starts, each
   * capped at RESCUE_CAP (n + 1) + 100 pivots unless the caller set a cap
   * (a start that wanders costs little; docs/solvers.md). */
  const int nrescue = !opt->rescue ? 0
                      : restarts + 1 > RESCUE_STARTS ? restarts + 1 : RESCUE_STARTS;
  const int last = restarts + nrescue;
  for (int s = 0; s <= last; s++) {
    info->reason[0] = '\0';
    int ready = 0;
    if (s == restarts + 1) {
      /* Every start failed under the error-bound tie rules: the rescue
       * pass. The same sequence of starts again (the caller's cover, then
       * the same random covers) with the tight ratio test
       * (ratio_test_tight) and tie windows scaled by |q| itself (the floor
       * of 1 in R.qscale makes every row of a problem with |q| ~ 1e-15
       * tie). A solve that succeeded before never gets here: its pivots,
       * answer and cost are unchanged (docs/solvers.md, issue 24). */
      ws->tight = 1;
      cover_used = 0;
      rng = opt->seed;
      R.qscale = qabs > 0.0 ? qabs : 1.0;
      if (opt->max_pivots <= 0 && RESCUE_CAP * (n + 1) + 100 < R.cap)
        R.cap = RESCUE_CAP * (n + 1) + 100;
      testcase(ws, rescue_starts);
    }
    if (s == 0 && warm) {
      if (warm_basis(ws, &R, warm, z, w) == 0) {
        /* The warm basis may already be feasible (up to roundoff): then
         * (z, w) from its LU solve is the answer, no pivot and no inverse.
         * "Up to roundoff" is the ratio test's noise bound: a degenerate
         * basic value of a resting stack comes out of the LU solve as
         * -2.5e-10 against max 98 (20 boxes; M_ZZ of coplanar corners is
         * ill-conditioned). The check below still decides. */
        double m = INFINITY;
        for (int i = 0; i < n; i++) m = fmin(m, ws->qbar[i]);
        if (m >= -QTIE_EPS * fmax(R.qscale, max_abs(n, ws->qbar))) {
          ws->st.lu_polish = 1;
          /* Basic values inside the noise bound are degenerate zeros:
           * report them as 0 (the row-by-row check judges a negative z by
           * the rows it moves, and a -2.5e-10 force on a stiff column moves
           * them by more than their tolerance). */
          for (int i = 0; i < n; i++) {
            if (z[i] < 0.0) z[i] = 0.0;
            if (w[i] < 0.0) w[i] = 0.0;
          }
          if (cp_lcp_check(n, M, q, z, w, chk, info)) {
            ws->pps[ws->nstarts++] = 0;
            info->starts = ws->nstarts;
            goto solved;
          }
          ws->st.lu_polish = 0;
        }
        /* Pivots needed: now build the explicit inverse of the basis. */
        if (warm_inverse(ws, &R, ws->k) == 0) {
          ready = 1;
          for (int i = 0; i < n; i++) ws->col[i] = -1.0; /* -dbar = -e */
        }
      }
      if (!ready) testcase(ws, warm_fallbacks);
    }
    if (!ready) {
      /* The small path sets up its own tableau and basis. */
      if (n > small_n) cold_basis(ws, &R);
      /* The first cold start uses the caller's cover (ones by default);
       * after a failed warm start that is start 2. Then random covers. */
      const int first_cold = !cover_used;
      cover_used = 1;
      for (int i = 0; i < n; i++) {
        if (first_cold) ws->d[i] = opt->cover ? opt->cover[i] : 1.0;
        else ws->d[i] = 0.1 + (double)(splitmix64(&rng) >> 11) * 0x1.0p-53;
        ws->col[i] = -ws->d[i];
      }
    }
    int piv = 0;
    if (!ready && n <= small_n) {
      testcase(ws, small_starts);
      ws->small = 1;
      st = small_start(ws, &R, chk, z, w, info, &piv);
      ws->small = 0;
      if (st != CP_LCP_SOLVED && st != CP_LCP_CHECK_FAILED)
        small_iterate(ws, n, z, w);
    } else {
      st = run_start(ws, &R, chk, z, w, info, &piv);
    }
    if (ws->nstarts < LEMKE_MAX_STARTS) ws->pps[ws->nstarts] = piv;
    ws->nstarts++;
    info->iterations += piv;
    if (s == 0) info->first_start_iterations = piv;
    info->starts = ws->nstarts;
    if (st == CP_LCP_SOLVED) goto solved;
    /* Any failed start (ray, cap, numerical trouble, failed check) is
     * followed by a restart with a fresh random covering vector. */
  }
  if (st != CP_LCP_CHECK_FAILED) {
    /* Report the pair of the last iterate for diagnosis (not a solution). */
    cp_lcp_info tmp = *info;
    cp_lcp_check(n, M, q, z, w, chk, info);
    memcpy(info->reason, tmp.reason, sizeof info->reason);
  }
  return info->status = st;

solved:
  for (int i = 0; i < n; i++) ws->basis[i] = ws->zrow[i] >= 0;
  ws->basis_valid = 1;
  info->reason[0] = '\0';
  info->polished = 1; /* basic values of a complementary basis */
  return info->status = CP_LCP_SOLVED;
}
