/* Dense-tableau Lemke: the textbook method, the reference for bench_lcp. */
#include "experiments/dense_lemke.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct cp_dense_lemke {
  int cap;
  double *T;     /* [cap * (2cap+2)] tableau, column-major, ld n */
  double *pc;    /* [cap] copy of the pivot column */
  double *lexv;  /* [cap] */
  int *basic;    /* [cap] variable of row r: w_i = i, z_j = n+j, z0 = 2n */
  int *cand, *keep;
};

cp_dense_lemke *cp_dense_lemke_create(int capacity) {
  cp_dense_lemke *dl = calloc(1, sizeof *dl);
  if (!dl) return NULL;
  const size_t c = (size_t)capacity;
  dl->cap = capacity;
  dl->T = malloc(sizeof(double) * c * (2 * c + 2));
  dl->pc = malloc(sizeof(double) * 2 * c);
  dl->basic = malloc(sizeof(int) * 3 * c);
  if (!dl->T || !dl->pc || !dl->basic) {
    cp_dense_lemke_destroy(dl);
    return NULL;
  }
  dl->lexv = dl->pc + c;
  dl->cand = dl->basic + c;
  dl->keep = dl->cand + c;
  return dl;
}

void cp_dense_lemke_destroy(cp_dense_lemke *dl) {
  if (!dl) return;
  free(dl->T);
  free(dl->pc);
  free(dl->basic);
  free(dl);
}

/* Lexicographic minimum over the candidate rows of row(B^-1)/div, where
 * B^-1 is the tableau's w block (columns 0..n-1). */
static int lexmin(cp_dense_lemke *dl, int n, int nc, double sg) {
  const double *T = dl->T, *pc = dl->pc;
  for (int c = 0; c < n && nc > 1; c++) {
    double vmin = INFINITY, vmax = 0.0;
    for (int t = 0; t < nc; t++) {
      int r = dl->cand[t];
      double v = T[r + (size_t)c * n] / (sg * pc[r]);
      dl->lexv[t] = v;
      if (v < vmin) vmin = v;
      if (fabs(v) > vmax) vmax = fabs(v);
    }
    int m = 0;
    for (int t = 0; t < nc; t++)
      if (dl->lexv[t] <= vmin + 1e-11 * vmax) dl->keep[m++] = dl->cand[t];
    memcpy(dl->cand, dl->keep, sizeof(int) * (size_t)m);
    nc = m;
  }
  return dl->cand[0];
}

cp_lcp_status cp_dense_lemke_solve(cp_dense_lemke *dl, int n, const double *M,
                                   const double *q, int max_pivots, double *z,
                                   double *w, int *pivots, double *k_avg) {
  *pivots = 0;
  *k_avg = 0.0;
  if (n > dl->cap) return CP_LCP_NOMEM;
  const int cap = max_pivots > 0 ? max_pivots : 50 * (n + 1) + 100;
  const int ncol = 2 * n + 2, cz0 = 2 * n, crhs = 2 * n + 1;
  double *T = dl->T;
  double qmin = INFINITY, qscale = 1.0;
  for (int i = 0; i < n; i++) {
    qmin = fmin(qmin, q[i]);
    qscale = fmax(qscale, fabs(q[i]));
  }
  if (qmin >= 0.0) {
    memset(z, 0, sizeof(double) * (size_t)n);
    memcpy(w, q, sizeof(double) * (size_t)n);
    return CP_LCP_SOLVED;
  }
  /* Tableau [I, -M, -e | q]. */
  memset(T, 0, sizeof(double) * (size_t)n * (size_t)ncol);
  for (int i = 0; i < n; i++) {
    T[i + (size_t)i * n] = 1.0;
    dl->basic[i] = i;
  }
  for (size_t j = 0; j < (size_t)n; j++)
    for (size_t i = 0; i < (size_t)n; i++) T[i + (n + j) * n] = -M[i + j * n];
  for (int i = 0; i < n; i++) {
    T[i + (size_t)cz0 * n] = -1.0;
    T[i + (size_t)crhs * n] = q[i];
  }
  const double *rhs = T + (size_t)crhs * n;
  long ksum = 0;
  int nonw = 0; /* basic variables that are not w's */
  int enter = cz0, z0row = -1;
  cp_lcp_status st = CP_LCP_PIVOT_CAP;
  for (;;) {
    memcpy(dl->pc, T + (size_t)enter * n, sizeof(double) * (size_t)n);
    const double *pc = dl->pc;
    int r = -1, nc = 0;
    if (enter == cz0 && z0row < 0) {
      /* First pivot: argmin q_r / d_r (d = e), lexicographic ties. */
      double th = INFINITY;
      for (int i = 0; i < n; i++)
        if (rhs[i] < th) th = rhs[i];
      double tau = 1e-12 * fmax(fabs(th), qscale);
      for (int i = 0; i < n; i++)
        if (rhs[i] <= th + tau) dl->cand[nc++] = i;
      r = nc > 1 ? lexmin(dl, n, nc, -1.0) : dl->cand[0];
    } else {
      double amax = 0.0, cmax = 0.0;
      if (enter < n) amax = 1.0;
      else
        for (int i = 0; i < n; i++)
          amax = fmax(amax, fabs(M[i + (size_t)(enter - n) * n]));
      for (int i = 0; i < n; i++) cmax = fmax(cmax, fabs(pc[i]));
      const double tol = 1e-12 * fmax(amax, cmax);
      double th = INFINITY;
      for (int i = 0; i < n; i++)
        if (pc[i] > tol) th = fmin(th, fmax(rhs[i], 0.0) / pc[i]);
      if (th == INFINITY) { st = CP_LCP_SECONDARY_RAY; break; }
      double tau = 1e-12 * fmax(th, qscale / cmax);
      for (int i = 0; i < n; i++)
        if (pc[i] > tol && fmax(rhs[i], 0.0) / pc[i] <= th + tau)
          dl->cand[nc++] = i;
      r = dl->cand[0];
      if (nc > 1) {
        int hit = 0;
        for (int t = 0; t < nc; t++)
          if (dl->cand[t] == z0row) hit = 1;
        r = hit ? z0row : lexmin(dl, n, nc, 1.0);
      }
    }
    /* Full row operation on every column of the tableau. */
    const double piv = pc[r];
    for (int j = 0; j < ncol; j++) {
      double *tj = T + (size_t)j * n;
      const double f = tj[r] / piv;
      for (int i = 0; i < n; i++) tj[i] -= pc[i] * f;
      tj[r] = f;
    }
    const int leave = dl->basic[r];
    dl->basic[r] = enter;
    nonw += (enter >= n) - (leave >= n);
    ksum += nonw;
    ++*pivots;
    if (enter == cz0) z0row = r;
    if (leave == cz0) { st = CP_LCP_SOLVED; break; }
    if (*pivots >= cap) { st = CP_LCP_PIVOT_CAP; break; }
    enter = leave < n ? leave + n : leave - n;
  }
  memset(z, 0, sizeof(double) * (size_t)n);
  memset(w, 0, sizeof(double) * (size_t)n);
  for (int r = 0; r < n; r++) {
    const int v = dl->basic[r];
    if (v < n) w[v] = rhs[r];
    else if (v < 2 * n) z[v - n] = rhs[r];
  }
  *k_avg = *pivots ? (double)ksum / *pivots : 0.0;
  return st;
}
