#include "contact/dynamics.h"

#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void cp_contact_space_free(cp_contact_space *cs) {
  if (!cs) return;
  free(cs->free_idx);
  free(cs->L);
  free(cs->LinvG);
  free(cs->A);
  free(cs->b);
  memset(cs, 0, sizeof *cs);
}

/* rhs_F = f_F - H_FD u'_D: the generalised force left for the free dofs once
 * the driven dofs' prescribed accelerations are accounted for. */
static void free_rhs(const cp_contact_space *cs, double *rhs) {
  const int nu = cs->nu;
  for (int a = 0; a < cs->nfree; a++) {
    int i = cs->free_idx[a];
    double s = cs->f[i];
    if (cs->driven)
      for (int j = 0; j < nu; j++)
        if (cs->driven[j]) s -= cs->H[i + (size_t)j * nu] * cs->udot_driven[j];
    rhs[a] = s;
  }
}

int cp_contact_space_build(int nu, int nc, const double *H, const double *G,
                           const double *f, const double *k,
                           const unsigned char *driven,
                           const double *udot_driven, cp_contact_space *cs) {
  memset(cs, 0, sizeof *cs);
  const int m = 3 * nc;
  cs->nu = nu;
  cs->nc = nc;
  cs->H = H;
  cs->G = G;
  cs->f = f;
  cs->k = k;
  cs->driven = driven;
  cs->udot_driven = udot_driven;
  cs->free_idx = malloc(sizeof(int) * (size_t)(nu > 0 ? nu : 1));
  cs->A = calloc((size_t)(m > 0 ? m * m : 1), sizeof(double));
  cs->b = calloc((size_t)(m > 0 ? m : 1), sizeof(double));
  double *rhs = malloc(sizeof(double) * (size_t)(nu > 0 ? nu : 1));
  if (!cs->free_idx || !cs->A || !cs->b || !rhs) goto nomem;
  int nf = 0;
  for (int i = 0; i < nu; i++)
    if (!driven || !driven[i]) cs->free_idx[nf++] = i;
  cs->nfree = nf;
  cs->L = malloc(sizeof(double) * (size_t)(nf > 0 ? nf * nf : 1));
  cs->LinvG = malloc(sizeof(double) * (size_t)(nf * m > 0 ? nf * m : 1));
  if (!cs->L || !cs->LinvG) goto nomem;
  for (int c = 0; c < nf; c++)
    for (int r = 0; r < nf; r++)
      cs->L[r + (size_t)c * nf] = H[cs->free_idx[r] + (size_t)cs->free_idx[c] * nu];
  for (int c = 0; c < m; c++)
    for (int r = 0; r < nf; r++)
      cs->LinvG[r + (size_t)c * nf] = G[cs->free_idx[r] + (size_t)c * nu];
  if (nf > 0) {
    if (LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', nf, cs->L, nf) != 0) {
      free(rhs);
      cp_contact_space_free(cs);
      return -1;
    }
    if (m > 0) {
      cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans,
                  CblasNonUnit, nf, m, 1.0, cs->L, nf, cs->LinvG, nf);
      cblas_dsyrk(CblasColMajor, CblasUpper, CblasTrans, m, nf, 1.0, cs->LinvG,
                  nf, 0.0, cs->A, m);
      for (int c = 0; c < m; c++)
        for (int r = c + 1; r < m; r++) cs->A[r + (size_t)c * m] = cs->A[c + (size_t)r * m];
    }
    /* b = (L^-1 G_F)^T L^-1 rhs_F: one triangular solve, one product. */
    free_rhs(cs, rhs);
    cblas_dtrsv(CblasColMajor, CblasLower, CblasNoTrans, CblasNonUnit, nf,
                cs->L, nf, rhs, 1);
    if (m > 0)
      cblas_dgemv(CblasColMajor, CblasTrans, nf, m, 1.0, cs->LinvG, nf, rhs, 1,
                  0.0, cs->b, 1);
  }
  for (int c = 0; c < m; c++) {
    double s = k ? k[c] : 0.0;
    if (driven)
      for (int i = 0; i < nu; i++)
        if (driven[i]) s += G[i + (size_t)c * nu] * udot_driven[i];
    cs->b[c] += s;
  }
  free(rhs);
  return 0;
nomem:
  free(rhs);
  cp_contact_space_free(cs);
  return -2;
}

int cp_contact_space_accel(const cp_contact_space *cs, const double *c,
                           double *udot, double *tau_driven) {
  const int nu = cs->nu, nf = cs->nfree, m = 3 * cs->nc;
  double *rhs = malloc(sizeof(double) * (size_t)(nu > 0 ? nu : 1));
  if (!rhs) return -2;
  free_rhs(cs, rhs);
  for (int a = 0; a < nf; a++) {
    int i = cs->free_idx[a];
    for (int j = 0; j < m; j++) rhs[a] += cs->G[i + (size_t)j * nu] * c[j];
  }
  if (nf > 0) LAPACKE_dpotrs(LAPACK_COL_MAJOR, 'L', nf, 1, cs->L, nf, rhs, nf);
  for (int i = 0; i < nu; i++) udot[i] = cs->driven && cs->driven[i] ? cs->udot_driven[i] : 0.0;
  for (int a = 0; a < nf; a++) udot[cs->free_idx[a]] = rhs[a];
  if (tau_driven) {
    for (int i = 0; i < nu; i++) {
      tau_driven[i] = 0.0;
      if (!cs->driven || !cs->driven[i]) continue;
      /* Row i of (E1) solved for the effort it lacks. */
      double s = -cs->f[i];
      for (int j = 0; j < nu; j++) s += cs->H[i + (size_t)j * nu] * udot[j];
      for (int j = 0; j < m; j++) s -= cs->G[i + (size_t)j * nu] * c[j];
      tau_driven[i] = s;
    }
  }
  free(rhs);
  return 0;
}

/* Smallest and largest eigenvalue of a symmetric matrix (copied). */
static int sym_extreme_eigs(int n, const double *S, double *lmin, double *lmax) {
  if (n == 0) { *lmin = *lmax = 0.0; return 0; }
  double *a = malloc(sizeof(double) * (size_t)n * (size_t)(n + 1));
  if (!a) return -2;
  memcpy(a, S, sizeof(double) * (size_t)n * (size_t)n);
  double *ev = a + (size_t)n * n;
  int rc = LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'U', n, a, n, ev) == 0 ? 0 : -1;
  if (rc == 0) { *lmin = ev[0]; *lmax = ev[n - 1]; }
  free(a);
  return rc;
}

/* Singular values of an r x c matrix (copied), descending, into sv[min(r,c)]. */
static int singular_values(int r, int c, const double *X, double *sv) {
  int k = r < c ? r : c;
  if (k == 0) return 0;
  double *a = malloc(sizeof(double) * (size_t)r * (size_t)c);
  double *sup = malloc(sizeof(double) * (size_t)k);
  if (!a || !sup) { free(a); free(sup); return -2; }
  memcpy(a, X, sizeof(double) * (size_t)r * (size_t)c);
  int rc = LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'N', r, c, a, r, sv, NULL, 1,
                          NULL, 1, sup) == 0 ? 0 : -1;
  free(a);
  free(sup);
  return rc;
}

int cp_contact_diagnostics(const cp_contact_space *cs,
                           const unsigned char *sliding, const double *mu,
                           cp_contact_diag *d) {
  memset(d, 0, sizeof *d);
  const int nc = cs->nc, m = 3 * nc, nf = cs->nfree;
  int rc = 0;
  /* Rank of G_F (= rank of L^-1 G_F, L nonsingular; but use G_F itself so
   * that the tolerance is in G's own units). */
  int kmin = nf < m ? nf : m;
  double *GF = malloc(sizeof(double) * (size_t)(nf * m > 0 ? nf * m : 1));
  double *sv = malloc(sizeof(double) * (size_t)(kmin > 0 ? kmin : 1));
  int *bidx = malloc(sizeof(int) * (size_t)(m > 0 ? m : 1));
  double *Bt = malloc(sizeof(double) * (size_t)(m > 0 ? m * m : 1));
  double *E = malloc(sizeof(double) * (size_t)(m > 0 ? m * nc : 1));
  if (!GF || !sv || !bidx || !Bt || !E) { rc = -2; goto done; }
  for (int c = 0; c < m; c++)
    for (int r = 0; r < nf; r++) GF[r + (size_t)c * nf] = cs->G[cs->free_idx[r] + (size_t)c * cs->nu];
  if ((rc = singular_values(nf, m, GF, sv)) != 0) goto done;
  double tol = (kmin > 0 ? sv[0] : 0.0) * (double)(nf > m ? nf : m) * DBL_EPSILON;
  for (int i = 0; i < kmin; i++) d->jacobian_rank += sv[i] > tol;
  d->full_column_rank = d->jacobian_rank == m;
  double lmin, lmax;
  if ((rc = sym_extreme_eigs(m, cs->A, &lmin, &lmax)) != 0) goto done;
  d->a_positive_definite = m == 0 || lmin > (double)m * DBL_EPSILON * fabs(lmax) * 16;

  /* Proposition 3: B~ is the principal submatrix of A on the normals of all
   * contacts and the tangents of rolling ones; delta_t (delta_o) is the
   * spectral norm of A's t (o) columns of sliding contacts on B~'s rows. */
  int nb = 0, ns = 0;
  for (int j = 0; j < nc; j++) bidx[nb++] = 3 * j;
  for (int j = 0; j < nc; j++)
    if (!sliding[j]) { bidx[nb++] = 3 * j + 1; bidx[nb++] = 3 * j + 2; }
  for (int j = 0; j < nc; j++) ns += sliding[j] != 0;
  for (int c = 0; c < nb; c++)
    for (int r = 0; r < nb; r++) Bt[r + (size_t)c * nb] = cs->A[bidx[r] + (size_t)bidx[c] * m];
  if ((rc = sym_extreme_eigs(nb, Bt, &lmin, &lmax)) != 0) goto done;
  int bt_pd = nb == 0 || lmin > (double)nb * DBL_EPSILON * fabs(lmax) * 16;
  if (ns == 0) {
    d->friction_bound = INFINITY;
    d->within_friction_bound = bt_pd;
  } else if (!bt_pd) {
    d->friction_bound = 0.0;
    d->within_friction_bound = 0;
  } else {
    double delta[2];
    for (int comp = 1; comp <= 2; comp++) {
      int col = 0;
      for (int j = 0; j < nc; j++) {
        if (!sliding[j]) continue;
        for (int r = 0; r < nb; r++) E[r + (size_t)col * nb] = cs->A[bidx[r] + (size_t)(3 * j + comp) * m];
        col++;
      }
      double s1[64];
      double *s = ns <= 64 ? s1 : malloc(sizeof(double) * (size_t)ns);
      if (!s) { rc = -2; goto done; }
      rc = singular_values(nb, ns, E, s);
      delta[comp - 1] = rc == 0 ? s[0] : 0.0;
      if (s != s1) free(s);
      if (rc) goto done;
    }
    double den = delta[0] + delta[1];
    d->friction_bound = den > 0 ? lmin / den : INFINITY;
    d->within_friction_bound = 1;
    for (int j = 0; j < nc; j++)
      if (sliding[j] && !(mu[j] < d->friction_bound)) d->within_friction_bound = 0;
  }
done:
  free(GF);
  free(sv);
  free(bidx);
  free(Bt);
  free(E);
  return rc;
}
