/* Lemke's method (contact/lemke.c): the small path. Cold starts of small
 * problems (n <= small_n, SMALL_N_AUTO by default) on a dense tableau
 * [I, -M, -d], with the same pivot decisions as the revised form. */
#include "contact/lemke_impl.h"

#include <float.h>
#include <stdio.h>

/* ----- the small path ------------------------------------------------- */

/* z, w of the small path's complementary basis: z from the tableau, one
 * step of iterative refinement with its B^-1 (as in cp_lk_finish()),
 * w = M z + q; then the check, and the LU fallback of cp_lk_finish().
 * M z + q is formed once,
 * by the check's own scan (contact/check_impl.h: the same sums as eval_w
 * and as cp_lcp_check, so the same numbers and the same verdict), and
 * serves the refinement test, w and the check. */
static inline __attribute__((always_inline)) cp_lcp_status
small_finish(cp_lemke_ws *ws, const run *R, const cp_check_options *chk,
             double *z, double *w, cp_lcp_info *info, const int n,
             const int lean) {
  double *buf = ws->chk;
  /* The lean path reads no wrow after its start (a failure hands over to
   * the full path, which sets up its own) and writes the basis here. */
  for (int i = 0; i < n; i++) {
    ws->zrow[i] = -1;
    if (!lean) ws->wrow[i] = -1;
    else ws->basis[i] = 0;
    z[i] = 0.0;
  }
  for (int r = 0; r < n; r++) {
    const int v = ws->basic[r];
    if (v < n) {
      if (!lean) ws->wrow[v] = r;
    } else { /* z0 has left: every row is a w or a z */
      ws->zrow[v - n] = r;
      z[v - n] = ws->qbar[r];
      if (lean) ws->basis[v - n] = 1;
    }
  }
  /* The lean path inlines the scan and the judge's fast pass (n is a
   * constant there; the same text, so the same numbers). */
  double zmax = lean ? cp_check_scan_inline(n, R->M, R->q, z, buf, 1)
                     : cp_lcp_check_scan(n, R->M, R->q, z, buf, 1);
  double rmax = 0.0;
  for (int j = 0; j < n; j++)
    if (ws->zrow[j] >= 0) rmax = maxacc(rmax, fabs(buf[j]));
  if (rmax > 8.0 * DBL_EPSILON * R->qscale) {
    for (int j = 0; j < n; j++) {
      if (ws->zrow[j] < 0) continue;
      const double rho = buf[j], *b = small_wcol(ws, j); /* w_j nonbasic */
      for (int i = 0; i < n; i++)
        if (ws->zrow[i] >= 0) z[i] += b[ws->zrow[i]] * rho;
    }
    zmax = lean ? cp_check_scan_inline(n, R->M, R->q, z, buf, 0)
                : cp_lcp_check_scan(n, R->M, R->q, z, buf, 0); /* same norms */
  }
  for (int j = 0; j < n; j++) w[j] = ws->zrow[j] >= 0 ? 0.0 : buf[j];
  /* A pair outside the fast pass's plain tests goes on to the judge's
   * full rules, with the row tolerances the fast pass left in buf:
   * cp_lcp_check_judge's verdict (which is the same fast pass, then
   * cp_lcp_check_rules). */
  if (lean && n <= CP_LK_LEAN_N) {
    if (cp_check_judge_fast(n, z, w, buf, zmax,
                            chk ? chk->rel_tol : CP_CHECK_REL_TOL_DEFAULT, info))
      return CP_LCP_SOLVED;
    return cp_lcp_check_rules(n, R->M, z, w, buf, zmax, chk, info)
               ? CP_LCP_SOLVED : CP_LCP_CHECK_FAILED;
  }
  if (cp_lcp_check_judge(n, R->M, z, w, buf, zmax, chk, info))
    return CP_LCP_SOLVED;
  return cp_lk_lu_retry(ws, R, chk, z, w, info);
}

/* Two doubles as one SSE2 vector (GCC's vector extension). */
typedef double v2d __attribute__((vector_size(16)));

/* x[0..L) -= p f for L = 2 or 4, p = (p0, p1) in pairs of rows: each entry
 * gets the multiply and the subtract of the scalar loop in small_update(),
 * so the same bits on x86-64's baseline SSE2 (GCC left those short loops
 * scalar). */
static inline __attribute__((always_inline)) void
pair_axpy(double *restrict x, v2d p0, v2d p1, double f, const int L) {
  const v2d fv = {f, f};
  v2d a;
  memcpy(&a, x, sizeof a);
  a -= p0 * fv;
  memcpy(x, &a, sizeof a);
  if (L == 4) {
    memcpy(&a, x + 2, sizeof a);
    a -= p1 * fv;
    memcpy(x + 2, &a, sizeof a);
  }
}

/* Column updates of a small pivot, L rows (the padded leading dimension;
 * a constant in the specialised copies, so each column is a few vector
 * operations): t_j -= pc t_j[r] / p on every column with t_j[r] != 0,
 * t_j[r] = t_j[r] / p; the same on qb, whose largest |entry| is returned.
 * Padding rows are 0 in pc, the tableau and qb, and stay 0. */
static inline __attribute__((always_inline)) double
small_update(double *restrict T, double *restrict qb,
             const double *restrict pc, int ncol, int L, int r, double inv) {
  /* L = 2 and 4 (n = 2..4): pair_axpy; callgrind (peers_ir.sh --complan):
   * 11 to 37 instructions fewer per solve than the loops below on the nine
   * Siconos LCPs with n <= 4 (experiments/results/peers.md). */
  if (L == 2 || L == 4) {
    v2d p0, p1 = {0.0, 0.0};
    memcpy(&p0, pc, sizeof p0);
    if (L == 4) memcpy(&p1, pc + 2, sizeof p1);
    for (int j = 0; j < ncol; j++) {
      double *restrict tj = T + (size_t)j * (size_t)L;
      const double t = tj[r];
      if (t == 0.0) continue; /* as below */
      const double f = t * inv;
      pair_axpy(tj, p0, p1, f, L);
      tj[r] = f;
    }
    const double f = qb[r] * inv;
    pair_axpy(qb, p0, p1, f, L);
    qb[r] = f;
    return max_abs(L, qb);
  }
  for (int j = 0; j < ncol; j++) {
    double *restrict tj = T + (size_t)j * (size_t)L;
    const double t = tj[r];
    if (t == 0.0) continue; /* most unit columns of basic variables */
    const double f = t * inv;
    for (int i = 0; i < L; i++) tj[i] -= pc[i] * f;
    tj[r] = f;
  }
  const double f = qb[r] * inv;
  for (int i = 0; i < L; i++) qb[i] -= pc[i] * f; /* row r: replaced next */
  qb[r] = f;
  return max_abs(L, qb);
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

/* The same pivot on the condensed tableau of the lean path (n = 3, 4),
 * which stores only the n + 1 nonbasic columns (slot ws->cslot[v] of
 * variable v; the basic columns are unit vectors, not stored). The entering variable v's
 * slot receives the leaving variable's column, the unit vector e_r, and is
 * then updated with the others: 0 - pc_i / p and 1 / p, the arithmetic the
 * full tableau applies to that column. The full tableau also updates the
 * entering column itself, to exactly e_r when p (1/p) rounds to 1 (every
 * c_i - c_i 1 is +0); the caller expands to the full tableau before a
 * pivot where it does not, so the numbers stay those of the full tableau. */
static inline __attribute__((always_inline)) void
cond_pivot(cp_lemke_ws *ws, int n, int r, int v, double inv, const int L) {
  double *ts = ws->tab + (size_t)ws->cslot[v] * (size_t)L;
  for (int i = 0; i < L; i++) ts[i] = 0.0;
  ts[r] = 1.0; /* (writing 0 - pc_i / p directly and skipping the slot in
                * the loop measured 1 % more instructions) */
  ws->qbmax = small_update(ws->tab, ws->qbar, ws->col, n + 1, L, r, inv);
}

/* The condensed tableau written out as the full one [B^-1 A | d-bar] with
 * its unit columns, in place (before a pivot with p (1/p) != 1). */
static inline __attribute__((always_inline)) void
cond_expand(cp_lemke_ws *ws, int n, const int L) {
  double tmp[(CP_LK_LEAN_N + 1) * 4];
  double *T = ws->tab;
  const size_t ld = (size_t)L;
  memcpy(tmp, T, sizeof(double) * ld * (size_t)(n + 1));
  memset(T, 0, sizeof(double) * ld * (size_t)(2 * n + 1));
  for (int k = 0; k < n; k++) T[(size_t)k + (size_t)ws->basic[k] * ld] = 1.0;
  for (int s = 0; s <= n; s++)
    memcpy(T + (size_t)ws->cvar[s] * ld, tmp + (size_t)s * ld,
           sizeof(double) * ld);
  ws->small = 1;
  ws->cond_expands++;
}

/* first_row_n() for the lean start, whose d is e (the z0 column is -1 in
 * every row): qb_i / -col_i = qb_i / 1 = qb_i and dmax = 1 exactly, so the
 * same theta, window and candidates without the divisions. Among tied rows
 * cp_lk_lex_min_identity() keeps the last: with every p_t = 1 each e_t is
 * LEX_EPS, and 1 - LEX_EPS > LEX_EPS drops the first candidate until one is
 * left (the lexicographic minimum of the rows e_r of the identity is the
 * largest r). The same row, the same tie count and statistics. */
static inline __attribute__((always_inline)) int
first_row_e(cp_lemke_ws *ws, const run *R, const int n) {
  const double *qb = ws->qbar;
  double theta = INFINITY;
  int best = -1;
  for (int i = 0; i < n; i++)
    if (qb[i] < theta) { theta = qb[i]; best = i; }
  if (best < 0 || !(theta < 0.0)) return -2;
  const double tau = TIE_EPS * maxacc(fabs(theta), R->qscale);
  int nc = 0, last = -1;
  for (int i = 0; i < n; i++)
    if (qb[i] < 0.0 && qb[i] <= theta + tau) { nc++; last = i; }
  ws->ties = nc;
  if (nc <= 1) return nc >= 1 ? last : best;
  testcase(ws, lex_ties);
  return last;
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
               const int L, const int n, const int lean) {
  const int vz0 = VZ0(n);
  const size_t ld = (size_t)L, nn = (size_t)n;
  /* Ratio tests over the n rows (the padding rows, col = qb = 0, are never
   * candidates and change no maximum or minimum); L when L = 8 (n = 5..8,
   * a constant trip count where n is not a constant). */
  const int rows = L == 8 ? L : n;
  double *restrict T = ws->tab, *restrict qb = ws->qbar, *restrict pc = ws->col;
  int backups = 0;
  /* The lean start runs on the condensed tableau [-M, -d] (slots of z_j
   * and z0; cond_pivot) until a pivot would leave round-off in a unit
   * column, then on the full one. */
  const int cnd = lean && n >= 3; /* n = 2: measured slower, not used */
  int cond = cnd;
  *piv = 0;
  ws->tld = (int)ld;
  /* [I, -M, -d], rows padded with zeros to ld. */
  memset(T, 0, sizeof(double) * ld * (cnd ? nn + 1 : 2 * nn + 1));
  memset(qb, 0, sizeof(double) * ld);
  memset(pc, 0, sizeof(double) * ld);
  for (int i = 0; i < n; i++) {
    const double di = lean ? 1.0 : ws->d[i]; /* the lean start: d = e */
    if (!cnd) T[(size_t)i + (size_t)i * ld] = 1.0;
    ws->basic[i] = i;
    T[(size_t)i + (size_t)(cnd ? n : vz0) * ld] = -di;
    qb[i] = R->q[i];
    pc[i] = -di;
  }
  if (cnd) {
    for (int j = 0; j <= n; j++) {
      ws->cslot[n + j] = j;
      ws->cvar[j] = n + j;
    }
    for (int i = 0; i < n; i++) ws->cslot[i] = -1;
    ws->small = 2;
  }
  for (size_t j = 0; j < nn; j++)
    for (size_t i = 0; i < nn; i++)
      T[i + ((cnd ? 0 : nn) + j) * ld] = -R->M[i + j * nn];
  ws->z0row = -1;
  int v = vz0;
  int r = lean ? first_row_e(ws, R, n) : first_row_n(ws, R, n);
  if (lean && r < 0) return CP_LCP_NUMERICAL;
  if (r < 0) {
    snprintf(R->reason, sizeof info->reason, "non-finite data at the start");
    return CP_LCP_NUMERICAL;
  }
  for (;;) {
    if (!lean && ws->trace) {
      const cp_lemke_step step = {ws->nstarts, *piv, v, ws->basic[r], r,
                                  ws->ties};
      ws->trace(ws->trace_ctx, &step);
    }
    const double p = pc[r];
    if (lean && !(fabs(p) > 0.0 && fabs(p) <= DBL_MAX)) return CP_LCP_NUMERICAL;
    if (!(fabs(p) > 0.0 && fabs(p) <= DBL_MAX)) { /* zero or not finite */
      snprintf(R->reason, sizeof info->reason,
               "zero or non-finite pivot at pivot %d", *piv);
      return CP_LCP_NUMERICAL;
    }
    const int u = ws->basic[r];
    if (cond && p * (1.0 / p) != 1.0) { /* round-off would stay in e_r */
      cond_expand(ws, n, L);
      cond = 0;
    }
    if (cond) { /* u's unit column takes v's slot */
      const int s = ws->cslot[v];
      cond_pivot(ws, n, r, v, 1.0 / p, L);
      ws->cslot[u] = s;
      ws->cvar[s] = u;
      ws->cslot[v] = -1;
    } else {
      small_pivot_ld(ws, n, r, p, L);
    }
    ++*piv;
    ws->basic[r] = v;
    if (v == vz0) ws->z0row = r;
    if (u == vz0) {
      const cp_lcp_status st = small_finish(ws, R, chk, z, w, info, n, lean);
      if (lean) return st; /* a failed check: the full path backs up */
      /* As run_start: a z0 exit from a tie that fails the check is undone
       * (pivot z0 back into row r) and another tied row leaves. */
      if (st != CP_LCP_CHECK_FAILED || !ws->tight || ws->classic ||
          !ws->z0tie || backups >= Z0_BACKUPS ||
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
    if (lean && *piv >= R->cap) return CP_LCP_PIVOT_CAP;
    if (*piv >= R->cap) {
      snprintf(R->reason, sizeof info->reason, "pivot cap %d reached", R->cap);
      return CP_LCP_PIVOT_CAP;
    }
    v = u < n ? u + n : u - n;
    copy_col(pc, T + (size_t)(cond ? ws->cslot[v] : v) * ld, ld);
    const double amax =
        v < n ? 1.0 : max_abs(n, R->M + (size_t)(v - n) * nn);
    ws->npiv = *piv;
    r = ratio_test_rows(ws, R, amax, rows);
    if (lean && r < 0) return CP_LCP_SECONDARY_RAY; /* or NaN */
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
cp_lcp_status cp_lk_small_start(cp_lemke_ws *ws, const run *R,
                                const cp_check_options *chk, double *z,
                                double *w, cp_lcp_info *info, int *piv) {
  switch (R->n) {
  case 2: return small_start_ld(ws, R, chk, z, w, info, piv, 2, 2, 0);
  case 3: return small_start_ld(ws, R, chk, z, w, info, piv, 4, 3, 0);
  case 4: return small_start_ld(ws, R, chk, z, w, info, piv, 4, 4, 0);
  default: break;
  }
  const int ld = (R->n + 3) & ~3;
  if (ld == 8) return small_start_ld(ws, R, chk, z, w, info, piv, 8, R->n, 0);
  return small_start_ld(ws, R, chk, z, w, info, piv, ld, R->n, 0);
}

/* The small path's iterate (for a failed start's diagnosis). */
void cp_lk_small_iterate(const cp_lemke_ws *ws, int n, double *z, double *w) {
  memset(z, 0, sizeof(double) * (size_t)n);
  memset(w, 0, sizeof(double) * (size_t)n);
  for (int r = 0; r < n; r++) {
    const int v = ws->basic[r];
    if (v < n) w[v] = ws->qbar[r];
    else if (v < 2 * n) z[v - n] = ws->qbar[r];
  }
}

/* ----- the lean path --------------------------------------------------- */

/* A cold solve of n = 2..CP_LK_LEAN_N with default-like options, as one
 * call: the first start of cp_lemke_solve on the small path (the same
 * text, small_start_ld with lean set: the same pivots, tie rules and
 * arithmetic), without the restart loop, the option decoding, the trace
 * and the failure reports. Anything the first start would not end with a
 * solution (q >= 0, non-finite data, a zero pivot, a ray, the pivot cap, a
 * failed check, hence also a z0 exit that the full path would undo)
 * returns 0 and the caller runs the full path from the start, which then
 * takes the same first start again. On 1 everything cp_lemke_solve would
 * have left is set: z, w, info (the check's measures), the basis, the
 * pivots per start and the statistics. Tested bit for bit against the full
 * path (tests/contact/test_lemke_lean.c). */
static inline __attribute__((always_inline)) int
lean_solve(cp_lemke_ws *ws, const int n, const double *M, const double *q,
           const cp_lemke_options *opt, double *z, double *w,
           cp_lcp_info *info) {
  if (opt->cover || !opt->lexicographic || opt->small_n < 0 ||
      (opt->small_n > 0 && opt->small_n < n))
    return 0;
  double qmin = INFINITY, qabs = 0.0;
  int nan = 0;
  for (int i = 0; i < n; i++) {
    qabs = maxacc(qabs, fabs(q[i])); /* NaN passed over: */
    qmin = minacc(qmin, q[i]);
    nan |= q[i] != q[i]; /* caught here */
  }
  if (!(qmin < 0.0) || !(qabs <= DBL_MAX) || nan) return 0; /* z = 0, NaN/inf */
  /* info is not cleared: a solution below writes every field of it (the
   * check's measures in the judge), and anything else hands over to the
   * full path, which clears it first. */
  memset(&ws->st, 0, sizeof ws->st);
  ws->n = n;
  ws->tight = 0;
  ws->classic = 0;
  ws->nstarts = 0;
  ws->basis_valid = 0;
  const run R = {.n = n, .M = M, .q = q, .qscale = maxacc(1.0, qabs),
                 .pivot_tol = opt->pivot_tol > 0.0 ? opt->pivot_tol : 0.0,
                 .lex = 1,
                 .cap = opt->max_pivots > 0 ? opt->max_pivots : 50 * (n + 1) + 100,
                 .reason = info->reason};
  int piv = 0;
  ws->small = 1;
  const cp_lcp_status st =
      n == 2   ? small_start_ld(ws, &R, &opt->check, z, w, info, &piv, 2, 2, 1)
      : n == 3 ? small_start_ld(ws, &R, &opt->check, z, w, info, &piv, 4, 3, 1)
               : small_start_ld(ws, &R, &opt->check, z, w, info, &piv, 4, 4, 1);
  ws->small = 0;
  if (st != CP_LCP_SOLVED) return 0;
  ws->st.small_starts = 1;
  ws->pps[0] = piv;
  ws->nstarts = 1;
  info->solver = CP_SOLVER_LEMKE;
  info->iterations = info->first_start_iterations = piv;
  info->starts = 1;
  info->reason[0] = '\0';
  ws->basis_valid = 1; /* ws->basis: written by small_finish */
  info->polished = 1;
  info->status = CP_LCP_SOLVED;
  return 1;
}

/* The whole lean solve compiled with n a constant (its entry, q scan and
 * basis output unroll with the start; the same operations). */
int cp_lk_lean_solve(cp_lemke_ws *ws, int n, const double *M,
                     const double *q, const cp_lemke_options *opt, double *z,
                     double *w, cp_lcp_info *info) {
  switch (n) {
  case 2: return lean_solve(ws, 2, M, q, opt, z, w, info);
  case 3: return lean_solve(ws, 3, M, q, opt, z, w, info);
  default: return lean_solve(ws, 4, M, q, opt, z, w, info);
  }
}
