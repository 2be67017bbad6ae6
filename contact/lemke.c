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
 *
 * Files: this one has the pivot update kernels, one start and
 * cp_lemke_solve; lemke_ws.c the workspace, lemke_basis.c the basis
 * algebra and the end of a start, lemke_ratio.c the choice of the leaving
 * row, lemke_small.c the dense small path; lemke_impl.h what they share.
 */
#include "contact/lemke_impl.h"

#include <cblas.h>
#include <float.h>
#include <stdio.h>
#include <stdlib.h>

/* Basis from the all-w start. */
static void cp_lk_cold_basis(cp_lemke_ws *ws, const run *R) {
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

/* The check's row scales s_i = |q_i| + sum_j |M_ij| |z_j| into sc and
 * max |z_i| (returned), as cp_lcp_check_scan forms them (the same sums in
 * the same order, zero columns of z skipped, a NaN passed over by the
 * max); its M z + q comes from cp_lk_eval_w, the same sums again. */
static double row_scales(int n, const double *M, const double *q,
                         const double *z, double *restrict sc) {
  double zmax = 0.0;
  for (int i = 0; i < n; i++) {
    sc[i] = fabs(q[i]);
    const double az = fabs(z[i]);
    zmax = az > zmax ? az : zmax;
  }
  for (int j = 0; j < n; j++) {
    const double azj = fabs(z[j]);
    if (z[j] == 0.0) continue;
    const double *restrict col = M + (size_t)j * (size_t)n;
    for (int i = 0; i < n; i++) sc[i] += fabs(col[i]) * azj;
  }
  return zmax;
}

/* Complementary basis reached: refine z against M and check. Falls back to
 * an LU solve of the basis system if refinement is not good enough.
 * cp_lcp_check is its scan (M z + q, the row scales and norms) and its
 * judge (contact/check_impl.h); M z + q is formed here anyway, so the
 * scan of the first z serves the refinement test and, when z stays, the
 * judge; after a refinement step M z + q comes from cp_lk_eval_w and the
 * row scales from row_scales (the row norms depend on M alone). The same
 * numbers as the scan and the check's own, one M z + q fewer. */
static cp_lcp_status cp_lk_finish(cp_lemke_ws *ws, const run *R,
                           const cp_check_options *chk, double *z, double *w,
                           cp_lcp_info *info) {
  const int n = R->n, k = ws->k;
  double *buf = ws->chk; /* [3n]: M z + q, row scales, row norms */
  for (int i = 0; i < n; i++)
    z[i] = ws->zrow[i] >= 0 ? ws->qbar[ws->zrow[i]] : 0.0;
  /* Iterative refinement: residual rho_i = (M z + q)_i on the basic-z rows
   * must vanish; M_ZZ^-1 = -B^-1[zrows, Z] (see cp_lk_refactor()), so
   * z_Z += B^-1[zrows, Z] rho_Z. Stops once rho is at roundoff level. */
  int m = 0;
  for (int j = 0; j < n; j++)
    if (ws->zrow[j] >= 0) {
      ws->kidx[m] = j;
      ws->widx[m++] = ws->zrow[j];
    }
  double zmax = cp_lcp_check_scan(n, R->M, R->q, z, buf, 1);
  int moved = 0;
  for (int it = 0; it < 2 && k > 0; it++) {
    double rmax = 0.0;
    for (int b = 0; b < m; b++) {
      const double a = fabs(buf[ws->kidx[b]]);
      rmax = a > rmax ? a : rmax;
    }
    if (!(rmax > 8.0 * DBL_EPSILON * R->qscale)) break;
    for (int s = 0; s < k; s++) {
      const double rho = buf[ws->slot_col[s]];
      const double *b = ws->Bact + (size_t)s * (size_t)n;
      for (int c = 0; c < m; c++) z[ws->kidx[c]] += b[ws->widx[c]] * rho;
    }
    cp_lk_eval_w(ws, R, z, buf);
    moved = 1;
  }
  if (moved) zmax = row_scales(n, R->M, R->q, z, buf + n);
  /* w_i = 0 where z_i is basic (nonbasic: exactly zero). */
  for (int j = 0; j < n; j++) w[j] = ws->zrow[j] >= 0 ? 0.0 : buf[j];
  if (cp_lcp_check_judge(n, R->M, z, w, buf, zmax, chk, info))
    return CP_LCP_SOLVED;
  return cp_lk_lu_retry(ws, R, chk, z, w, info);
}

/* ----- the pivot update kernels --------------------------------------- */

/* c_s -= x t_s for eight columns, accumulating acc += sum a_s c_s (new).
 * Eight columns per sweep halve the traffic on x and acc against four. */
static inline __attribute__((always_inline)) void upd8_acc(int n, double *restrict c0, double *restrict c1,
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

static inline __attribute__((always_inline)) void upd4_acc(int n, double *restrict c0, double *restrict c1,
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

static inline __attribute__((always_inline)) void upd1_acc(int n, double *restrict c0, const double *restrict x,
                     double *restrict acc, double t0, double a0) {
  for (int i = 0; i < n; i++) {
    const double v0 = c0[i] - x[i] * t0;
    c0[i] = v0;
    acc[i] += a0 * v0;
  }
}

/* Plain rank-1 update of eight columns (no next column to form). */
static inline __attribute__((always_inline)) void upd8(int n, double *restrict c0, double *restrict c1,
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

static inline __attribute__((always_inline)) void upd1(int n, double *restrict c0, const double *restrict x,
                 double t0) {
  for (int i = 0; i < n; i++) c0[i] -= x[i] * t0;
}

/* Rank-1 update of the active block with x = abar - e_r and pivot piv; if
 * acc != NULL also acc += Bact_new * as (the next entering column). */
static inline __attribute__((always_inline)) void
update_block(cp_lemke_ws *ws, const double *x, int r, double piv, double *acc,
             const int n) {
  const int k = ws->k;
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
static inline __attribute__((always_inline)) int
pivot_n(cp_lemke_ws *ws, const run *R, int r, int v, double *amax_next,
        const int n) {
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
    update_block(ws, x, r, piv, acc, n);
    *amax_next = max_abs(n, Mj);
    double *t = ws->col;
    ws->col = ws->nxt;
    ws->nxt = t;
  } else {
    update_block(ws, x, r, piv, NULL, n);
    if (vn >= 0) {
      memcpy(ws->col, ws->Bact + (size_t)ws->col_slot[vn] * (size_t)n,
             sizeof(double) * (size_t)n);
      *amax_next = 1.0;
    }
  }
  return u == VZ0(n) ? -1 : vn;
}

/* The pivot with n a constant for n = 5..12 (its loops over the rows then
 * unroll without vector prologues and epilogues; the same operations). */
static int pivot(cp_lemke_ws *ws, const run *R, int r, int v,
                 double *amax_next) {
  switch (R->n) {
#define CP_LK_PV(N) case N: return pivot_n(ws, R, r, v, amax_next, N);
  CP_LK_PV(5) CP_LK_PV(6) CP_LK_PV(7) CP_LK_PV(8) CP_LK_PV(9) CP_LK_PV(10)
  CP_LK_PV(11) CP_LK_PV(12)
#undef CP_LK_PV
  default: return pivot_n(ws, R, r, v, amax_next, R->n);
  }
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
  int r = cp_lk_first_row(ws, R);
  if (r < 0) {
    snprintf(R->reason, sizeof info->reason, "non-finite data at the start");
    return CP_LCP_NUMERICAL;
  }
  for (;;) {
    const double p = ws->col[r];
    if (!isfinite(p) || p == 0.0) {
      snprintf(R->reason, sizeof info->reason,
               "zero or non-finite pivot at pivot %d", *piv);
      cp_lk_read_iterate(ws, n, z, w);
      return CP_LCP_NUMERICAL;
    }
    if (ws->trace) {
      const cp_lemke_step step = {ws->nstarts, *piv, v, ws->basic[r], r,
                                  ws->ties};
      ws->trace(ws->trace_ctx, &step);
    }
    int vn = pivot(ws, R, r, v, &amax);
    ++*piv;
    /* The owner's call-back (cp_lemke_set_poll): nothing of the solve is
     * shown to it, nothing it does comes back. */
    if (ws->poll && --ws->poll_left == 0) {
      ws->poll_left = ws->poll_period;
      ws->poll(ws->poll_ctx);
    }
    if (vn < 0) {
      const cp_lcp_status st = cp_lk_finish(ws, R, chk, z, w, info);
      /* z0 left from a tie and the answer fails the check: the tie was
       * not real (a basic value whose exact ratio is smaller went negative
       * beyond its row's tolerance). Back up one pivot and let another of
       * the tied rows leave instead (diagnosis: docs/solvers.md). */
      if (st != CP_LCP_CHECK_FAILED || !ws->tight || ws->classic ||
          !ws->z0tie || backups >= Z0_BACKUPS ||
          *piv >= R->cap || cp_lk_unpivot_z0(ws, R, r, v, &amax) != 0)
        return st;
      backups++;
      testcase(ws, z0_backups);
      ws->z0skip = 1;
      ws->npiv = *piv;
      r = cp_lk_ratio_test(ws, R, amax);
      ws->z0skip = 0;
      if (r < 0) return st;
      continue;
    }
    if (*piv >= R->cap) {
      snprintf(R->reason, sizeof info->reason, "pivot cap %d reached", R->cap);
      cp_lk_read_iterate(ws, n, z, w);
      return CP_LCP_PIVOT_CAP;
    }
    v = vn;
    if (*piv % DRIFT_EVERY == 0 && ws->k > 0) {
      double e = cp_lk_basis_residual(ws, R);
      if (!(e <= DRIFT_TOL)) {
        testcase(ws, refactors);
        if (cp_lk_refactor(ws, R) == 0) {
          cp_lk_recompute_qbar(ws, R);
          amax = cp_lk_entering_column(ws, R, v, ws->col);
        }
      }
    }
    ws->npiv = *piv;
    r = cp_lk_ratio_test(ws, R, amax);
    /* A tiny pivot, or no pivot at all (a secondary ray), may be an
     * artefact of the error accumulated in B^-1 by the rank-1 updates: a
     * zero entry of the entering column that came out as 1e-11 of its scale
     * (resting stacks of 30 boxes with exact ties did this and blew B^-1 up
     * to 1e12). Before acting on one, rebuild B^-1 from the basis, recompute
     * qbar and the column, and redo the ratio test; what survives is real. */
    if ((r == -1 || (r >= 0 && fabs(ws->col[r]) < SMALL_PIVOT * ws->cscale)) &&
        ws->k > 0 && !ws->classic && cp_lk_refactor(ws, R) == 0) {
      testcase(ws, pivot_refactors);
      cp_lk_recompute_qbar(ws, R);
      amax = cp_lk_entering_column(ws, R, v, ws->col);
      r = cp_lk_ratio_test(ws, R, amax);
    }
    if (r == -1) {
      snprintf(R->reason, sizeof info->reason,
               "secondary ray at pivot %d (entering %c%d)", *piv,
               v < n ? 'w' : 'z', (v < n ? v : v - n) + 1);
      cp_lk_read_iterate(ws, n, z, w);
      return CP_LCP_SECONDARY_RAY;
    }
    if (r < 0) {
      snprintf(R->reason, sizeof info->reason,
               "non-finite entering column at pivot %d", *piv);
      cp_lk_read_iterate(ws, n, z, w);
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
  /* Tiny cold solves: the lean path, the same first start with less
   * around it; anything but a solution there hands over to the full path
   * below, from the start (docs/solvers.md, "The lean path"). */
  if (n >= 2 && n <= CP_LK_LEAN_N && !warm && ws && M && q && z && w &&
      n <= ws->scap && !ws->trace &&
      cp_lk_lean_solve(ws, n, M, q, opt ? opt : &cp_lk_defaults, z, w, info))
    return CP_LCP_SOLVED;
  cp_lcp_info_clear(info);
  info->solver = CP_SOLVER_LEMKE;
  if (!ws || n < 1 || !M || !q || !z || !w) {
    snprintf(info->reason, sizeof info->reason, "invalid arguments");
    return info->status = CP_LCP_NUMERICAL;
  }
  ws->basis_valid = 0;
  ws->nstarts = 0;
  ws->poll_left = ws->poll_period;
  memset(&ws->st, 0, sizeof ws->st);
  if (n > ws->cap) {
    snprintf(info->reason, sizeof info->reason,
             "problem size %d exceeds the workspace capacity %d", n, ws->cap);
    return info->status = CP_LCP_NOMEM;
  }
  if (!opt) opt = &cp_lk_defaults;
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
  ws->classic = 0;
  /* The rescue pass: the cover, then random covers (the first ones the
   * same as the ordinary pass's), at least RESCUE_STARTS starts, each
   * capped at RESCUE_CAP (n + 1) + 100 pivots unless the caller set a cap
   * (a start that wanders costs little; docs/solvers.md). */
  const int nrescue = !opt->rescue || opt->classic == 2 ? 0
                      : restarts + 1 > RESCUE_STARTS ? restarts + 1 : RESCUE_STARTS;
  /* The classic pass: the ordinary pass's starts again (the cover, then
   * the same random covers) under the tie rules before the error bounds
   * (docs/solvers.md, "The classic pass"). It follows the rescue pass,
   * except from n = CLASSIC_EARLY_N on, where it comes first: there the
   * rescue pass's twelve starts cost RockPile_tob1 (n = 2778) ten times
   * the classic pass that solves it, and below it every corpus problem
   * keeps the starts and pivots it had before the classic pass existed.
   * classic == 2: the classic pass alone (tests, diagnosis). */
  const int nclassic = opt->classic ? restarts + 1 : 0;
  const int cls_first = n >= CLASSIC_EARLY_N;
  const int rs0 = restarts + 1 + (cls_first ? nclassic : 0);
  const int cl0 = restarts + 1 + (cls_first ? 0 : nrescue);
  const int last = restarts + nrescue + nclassic;
  const int first = opt->classic == 2 ? restarts + 1 : 0;
  for (int s = first; s <= last; s++) {
    info->reason[0] = '\0';
    int ready = 0;
    if (nrescue && s == rs0) {
      /* Every start failed under the error-bound tie rules: the rescue
       * pass. The same sequence of starts again (the caller's cover, then
       * the same random covers) with the tight ratio test
       * (ratio_test_tight) and tie windows scaled by |q| itself (the floor
       * of 1 in R.qscale makes every row of a problem with |q| ~ 1e-15
       * tie). A solve that succeeded before never gets here: its pivots,
       * answer and cost are unchanged (docs/solvers.md, issue 24). */
      ws->tight = 1;
      ws->classic = 0;
      cover_used = 0;
      rng = opt->seed;
      R.qscale = qabs > 0.0 ? qabs : 1.0;
      R.cap = opt->max_pivots > 0 ? opt->max_pivots : 50 * (n + 1) + 100;
      if (opt->max_pivots <= 0 && RESCUE_CAP * (n + 1) + 100 < R.cap)
        R.cap = RESCUE_CAP * (n + 1) + 100;
      testcase(ws, rescue_starts);
    }
    if (nclassic && s == cl0) {
      /* The classic pass: the rules of commit f641725^, the last before
       * the error bounds: the rescue pass's ratio test (point ratios, z0
       * first among tied rows) with the lexicographic rule of then
       * (cp_lk_lex_min_classic), the window relative to max(1, |q|), the
       * ordinary pivot cap, and neither the rebuild of B^-1 before a tiny
       * pivot or a ray nor the undoing of a z0 exit. They solve
       * RockPile_tob1 at the third start, bit for bit as that commit did
       * (docs/solvers.md, "The classic pass", says which rules matter). */
      ws->tight = 1;
      ws->classic = 1;
      cover_used = 0;
      rng = opt->seed;
      R.qscale = maxacc(1.0, qabs);
      R.cap = opt->max_pivots > 0 ? opt->max_pivots : 50 * (n + 1) + 100;
      ws->st.classic_starts = 1;
    }
    if (s == 0 && warm) {
      if (cp_lk_warm_basis(ws, &R, warm, z, w) == 0) {
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
        if (cp_lk_warm_inverse(ws, &R, ws->k) == 0) {
          ready = 1;
          for (int i = 0; i < n; i++) ws->col[i] = -1.0; /* -dbar = -e */
        }
      }
      if (!ready) testcase(ws, warm_fallbacks);
    }
    if (!ready) {
      /* The small path sets up its own tableau and basis. */
      if (n > small_n) cp_lk_cold_basis(ws, &R);
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
      st = cp_lk_small_start(ws, &R, chk, z, w, info, &piv);
      ws->small = 0;
      if (st != CP_LCP_SOLVED && st != CP_LCP_CHECK_FAILED)
        cp_lk_small_iterate(ws, n, z, w);
    } else {
      st = run_start(ws, &R, chk, z, w, info, &piv);
    }
    if (ws->nstarts < LEMKE_MAX_STARTS) ws->pps[ws->nstarts] = piv;
    ws->nstarts++;
    info->iterations += piv;
    if (s == first) info->first_start_iterations = piv;
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

