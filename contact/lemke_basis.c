/* Lemke's method (contact/lemke.c): the basis. Columns of B^-1 (the
 * structured explicit inverse of lemke.c's header comment), its rebuild
 * from the basis when it has drifted, the warm basis (LU of M_ZZ, lazy
 * inverse), and the end of a start at a complementary basis: iterative
 * refinement against M, the solution check, the LU retry; and the undoing
 * of a z0 exit whose answer failed the check. */
#include "contact/lemke_impl.h"

#include <cblas.h>
#include <float.h>
#include <lapacke.h>

/* out := B^-1 a_v for a z or z0 column (a_v given by pointer `a` with sign
 * `sg`, i.e. a_v = sg * a). Returns max |a_v|. O(n k). */
double cp_lk_form_column(cp_lemke_ws *ws, const double *a, double sg,
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
double cp_lk_entering_column(cp_lemke_ws *ws, const run *R, int v,
                             double *out) {
  const int n = R->n;
  if (v < n) {
    const int s = ws->col_slot[v];
    memcpy(out, ws->Bact + (size_t)s * (size_t)n, sizeof(double) * (size_t)n);
    return 1.0;
  }
  if (v < 2 * n) return cp_lk_form_column(ws, R->M + (size_t)(v - n) * (size_t)n, -1.0, out);
  return cp_lk_form_column(ws, ws->d, -1.0, out);
}

/* qbar := B^-1 q. */
void cp_lk_recompute_qbar(cp_lemke_ws *ws, const run *R) {
  cp_lk_form_column(ws, R->q, 1.0, ws->qbar);
  ws->qbmax = max_abs(R->n, ws->qbar);
}

/* Rebuilds the active block of B^-1 from the current basis (see the header
 * comment for the algebra). Rows of non-w variables K (k of them), active
 * columns A (the slots); C_AK[a][kk] = a_{basic[K[kk]]}[A[a]],
 * C_WK[i][kk] = a_{basic[K[kk]]}[W[i]].  B^-1 on rows K is C_AK^-1, on rows of
 * W it is -C_WK C_AK^-1. Returns 0, or -1 if C_AK is (numerically) singular;
 * then Bact is left unchanged. */
int cp_lk_refactor(cp_lemke_ws *ws, const run *R) {
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
double cp_lk_basis_residual(cp_lemke_ws *ws, const run *R) {
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

static int factor_mzz(cp_lemke_ws *ws, const run *R, int cond);
static void solve_mzz(cp_lemke_ws *ws, const run *R, int m, double *z,
                      double *w);

/* Warm basis: row i holds z_i if warm[i] else w_i; d := B e. Computes the
 * basic values into qbar (z, w used as scratch). Returns -1 if the basis is
 * singular (the caller starts cold). */
int cp_lk_warm_basis(cp_lemke_ws *ws, const run *R, const unsigned char *warm,
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
   * is built (cp_lk_refactor()) only if pivots turn out to be needed. */
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
    cp_lk_eval_w(ws, R, z, w);
    for (int b = 0; b < m; b++) rhs[b] = -w[ws->kidx[b]];
    LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', m, 1, F, m, ws->ipiv, rhs, m);
    for (int b = 0; b < m; b++) z[ws->kidx[b]] += rhs[b];
  }
  cp_lk_eval_w(ws, R, z, w);
  for (int b = 0; b < m; b++) w[ws->kidx[b]] = 0.0;
}

/* Explicit inverse of a warm (complementary) basis from the LU of M_ZZ left
 * by factor_mzz (m = k columns, slot s <-> column kidx[s], row i holds z_i or
 * w_i). With C_AK = -M_ZZ and C_WK = -M_WZ (cp_lk_refactor()): B^-1 on the z
 * rows is -M_ZZ^-1, on the w rows -M_WZ M_ZZ^-1. Cost 4/3 k^3 (dgetri) plus
 * 2 (n-k) k^2 (one GEMM), against 8/3 k^3 + 2 (n-k) k^2 for
 * cp_lk_refactor(). Returns -1 if M_ZZ is ill-conditioned (rcond <
 * RCOND_MIN). */
int cp_lk_warm_inverse(cp_lemke_ws *ws, const run *R, int m) {
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

cp_lcp_status cp_lk_lu_retry(cp_lemke_ws *ws, const run *R,
                             const cp_check_options *chk, double *z,
                             double *w, cp_lcp_info *info);

/* The answer of a complementary basis failed the check: z again by an LU
 * solve of the basis system M_ZZ z_Z = -q_Z, and the check again. */
cp_lcp_status cp_lk_lu_retry(cp_lemke_ws *ws, const run *R,
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

/* Undoes the pivot that brought v into row r and took z0 out: z0 basic in
 * row r again, v nonbasic (a w_v entering had dropped its column of B^-1
 * from the active block: it rejoins), B^-1 rebuilt from the basis, qbar
 * recomputed and v's column formed in ws->col (scale in *amax). Returns 0,
 * or -1 if the basis cannot be refactored. */
int cp_lk_unpivot_z0(cp_lemke_ws *ws, const run *R, int r, int v,
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
  if (cp_lk_refactor(ws, R) != 0) return -1;
  cp_lk_recompute_qbar(ws, R);
  *amax = cp_lk_entering_column(ws, R, v, ws->col);
  return 0;
}
