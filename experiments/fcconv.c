/* Siconos frictional-contact problems as pyramid LCPs: see fcconv.h. */
#include "experiments/fcconv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct lexer {
  const char *p, *end;
  int line;
  char *err;
  size_t errlen;
} lexer;

/* Next whitespace-separated token as a double. what: what was expected. */
static int next_num(lexer *lx, double *out, const char *what) {
  while (lx->p < lx->end && (*lx->p == ' ' || *lx->p == '\t' ||
                             *lx->p == '\n' || *lx->p == '\r')) {
    if (*lx->p == '\n') lx->line++;
    lx->p++;
  }
  if (lx->p >= lx->end) {
    snprintf(lx->err, lx->errlen, "line %d: end of input, expected %s",
             lx->line, what);
    return -1;
  }
  char buf[128];
  size_t k = 0;
  while (lx->p < lx->end && !strchr(" \t\r\n", *lx->p)) {
    if (k + 1 < sizeof buf) buf[k++] = *lx->p;
    lx->p++;
  }
  buf[k] = '\0';
  char *e;
  errno = 0;
  double v = strtod(buf, &e);
  if (e == buf || *e || !isfinite(v)) {
    snprintf(lx->err, lx->errlen, "line %d: '%.40s' is not a number (%s)",
             lx->line, buf, what);
    return -1;
  }
  *out = v;
  return 0;
}

/* Next token as an integer in [lo, hi]. */
static int next_int(lexer *lx, int *out, int lo, int hi, const char *what) {
  double v;
  if (next_num(lx, &v, what)) return -1;
  if (v != floor(v) || v < lo || v > hi) {
    snprintf(lx->err, lx->errlen, "line %d: %g is not %s (an integer in %d..%d)",
             lx->line, v, what, lo, hi);
    return -1;
  }
  *out = (int)v;
  return 0;
}

void fc_free(fc_problem *p) {
  free(p->W);
  free(p->q);
  free(p->mu);
  memset(p, 0, sizeof *p);
}

/* Sparse-block storage (SBM_write_in_file): block counts, cumulative block
 * sizes, the row pointer and column index arrays, then each block's number
 * and its values in column-major order. */
static int read_sbm(lexer *lx, int N, double *W) {
  int nb, bn0, bn1;
  if (next_int(lx, &nb, 0, 1 << 28, "the number of blocks")) return -1;
  if (nb == 0) return 0;
  if (next_int(lx, &bn0, 1, N, "the number of block rows") ||
      next_int(lx, &bn1, 1, N, "the number of block columns"))
    return -1;
  int *bs0 = calloc((size_t)bn0 + (size_t)bn1, sizeof(int)), *bs1 = bs0 + bn0;
  int *idx1 = NULL, *idx2 = NULL, rc = -1;
  if (!bs0) goto oom;
  for (int i = 0; i < bn0; i++)
    if (next_int(lx, &bs0[i], i ? bs0[i - 1] + 1 : 1, N,
                 "a cumulative block row size"))
      goto out;
  for (int i = 0; i < bn1; i++)
    if (next_int(lx, &bs1[i], i ? bs1[i - 1] + 1 : 1, N,
                 "a cumulative block column size"))
      goto out;
  if (bs0[bn0 - 1] != N || bs1[bn1 - 1] != N) {
    snprintf(lx->err, lx->errlen, "line %d: block sizes add up to %d x %d, "
             "expected %d x %d", lx->line, bs0[bn0 - 1], bs1[bn1 - 1], N, N);
    goto out;
  }
  int f1, f2;
  if (next_int(lx, &f1, bn0 + 1, bn0 + 1, "filled1 (block rows + 1)") ||
      next_int(lx, &f2, nb, nb, "filled2 (the number of blocks)"))
    goto out;
  idx1 = malloc(sizeof(int) * (size_t)f1);
  idx2 = malloc(sizeof(int) * (size_t)f2);
  if (!idx1 || !idx2) goto oom;
  for (int i = 0; i < f1; i++)
    if (next_int(lx, &idx1[i], i ? idx1[i - 1] : 0, nb, "a block row pointer"))
      goto out;
  if (idx1[0] != 0 || idx1[f1 - 1] != nb) {
    snprintf(lx->err, lx->errlen, "line %d: block row pointers run from %d to "
             "%d, expected 0 to %d", lx->line, idx1[0], idx1[f1 - 1], nb);
    goto out;
  }
  for (int i = 0; i < f2; i++)
    if (next_int(lx, &idx2[i], 0, bn1 - 1, "a block column index")) goto out;
  for (int br = 0; br < bn0; br++) {
    const int r0 = br ? bs0[br - 1] : 0, nr = bs0[br] - r0;
    for (int b = idx1[br]; b < idx1[br + 1]; b++) {
      int num;
      if (next_int(lx, &num, b, b, "the block number")) goto out;
      const int bc = idx2[b], c0 = bc ? bs1[bc - 1] : 0, ncl = bs1[bc] - c0;
      for (int j = 0; j < ncl; j++)
        for (int i = 0; i < nr; i++) {
          double v;
          if (next_num(lx, &v, "a block entry")) goto out;
          W[(size_t)(r0 + i) + (size_t)(c0 + j) * (size_t)N] = v;
        }
    }
  }
  rc = 0;
  goto out;
oom:
  snprintf(lx->err, lx->errlen, "out of memory");
out:
  free(bs0);
  free(idx1);
  free(idx2);
  return rc;
}

int fc_parse(const char *text, size_t len, fc_problem *out, char *err,
             size_t errlen) {
  memset(out, 0, sizeof *out);
  lexer lx = {text, text + len, 1, err, errlen};
  int d, nc, st, s0, s1;
  if (next_int(&lx, &d, 2, 3, "the dimension") ||
      next_int(&lx, &nc, 1, 100000, "the number of contacts") ||
      next_int(&lx, &st, 0, 2, "the storage type"))
    return -1;
  if (st == 2) {
    snprintf(err, errlen, "line %d: storage type 2 (sparse CSC) is not "
             "supported", lx.line);
    return -1;
  }
  const int N = d * nc;
  if (next_int(&lx, &s0, N, N, "the number of rows (d nc)") ||
      next_int(&lx, &s1, N, N, "the number of columns (d nc)"))
    return -1;
  out->d = d;
  out->nc = nc;
  out->W = calloc((size_t)N * (size_t)N, sizeof(double));
  out->q = malloc(sizeof(double) * (size_t)N);
  out->mu = malloc(sizeof(double) * (size_t)nc);
  if (!out->W || !out->q || !out->mu) {
    snprintf(err, errlen, "out of memory");
    goto fail;
  }
  if (st == 0) {
    if (next_int(&lx, &s0, N, N, "the number of rows again") ||
        next_int(&lx, &s1, N, N, "the number of columns again"))
      goto fail;
    for (size_t i = 0; i < (size_t)N * (size_t)N; i++)
      if (next_num(&lx, &out->W[i], "an entry of W")) goto fail;
  } else if (read_sbm(&lx, N, out->W)) {
    goto fail;
  }
  for (int i = 0; i < N; i++)
    if (next_num(&lx, &out->q[i], "an entry of q")) goto fail;
  for (int j = 0; j < nc; j++) {
    if (next_num(&lx, &out->mu[j], "a friction coefficient")) goto fail;
    if (out->mu[j] < 0.0) {
      snprintf(err, errlen, "line %d: friction coefficient %d is negative",
               lx.line, j);
      goto fail;
    }
  }
  return 0;
fail:
  fc_free(out);
  return -1;
}

int fc_ndir(const fc_problem *p) { return p->d == 3 ? 4 : 2; }
int fc_lcp_size(const fc_problem *p) { return (fc_ndir(p) + 2) * p->nc; }

/* Direction k of the (t, o) plane: 3D (1,1), (-1,1), (-1,-1), (1,-1);
 * 2D +1, -1 (t only). */
static void direction(int d, int k, double *t, double *o) {
  if (d == 2) {
    *t = k == 0 ? 1.0 : -1.0;
    *o = 0.0;
    return;
  }
  *t = (k == 0 || k == 3) ? 1.0 : -1.0;
  *o = k < 2 ? 1.0 : -1.0;
}

/* Contact-space vector g [N] of unknown v (< (K+1) nc: r_n or a beta). */
static void unknown_dir(const fc_problem *p, int v, double *g) {
  const int d = p->d, nc = p->nc, N = d * nc;
  memset(g, 0, sizeof(double) * (size_t)N);
  if (v < nc) {
    g[d * v] = 1.0;
    return;
  }
  const int k = (v - nc) / nc, j = (v - nc) % nc;
  double t, o;
  direction(d, k, &t, &o);
  g[d * j + 1] = t;
  if (d == 3) g[d * j + 2] = o;
}

int fc_to_lcp(const fc_problem *p, cp_lcp *out) {
  const int d = p->d, nc = p->nc, N = d * nc, K = fc_ndir(p);
  const int n = (K + 2) * nc, nf = (K + 1) * nc; /* r_n and betas */
  if (cp_lcp_init(out, n)) return -1;
  double *g = malloc(sizeof(double) * (size_t)N * 2), *Wg = g + N;
  if (!g) {
    cp_lcp_free(out);
    return -1;
  }
  /* Row v of the r_n / beta block reads h_v^T (W r + q) with h_v = g_v. */
  for (int c = 0; c < nf; c++) {
    unknown_dir(p, c, g);
    memset(Wg, 0, sizeof(double) * (size_t)N);
    for (int a = 0; a < N; a++)
      if (g[a] != 0.0) {
        const double *Wa = p->W + (size_t)a * (size_t)N;
        for (int i = 0; i < N; i++) Wg[i] += Wa[i] * g[a];
      }
    double *Mc = out->M + (size_t)c * (size_t)n;
    for (int v = 0; v < nf; v++) {
      if (v < nc) {
        Mc[v] = Wg[d * v];
        continue;
      }
      const int k = (v - nc) / nc, j = (v - nc) % nc;
      double t, o;
      direction(d, k, &t, &o);
      Mc[v] = t * Wg[d * j + 1] + (d == 3 ? o * Wg[d * j + 2] : 0.0);
    }
  }
  for (int v = 0; v < nf; v++) {
    if (v < nc) {
      out->q[v] = p->q[d * v];
      continue;
    }
    const int k = (v - nc) / nc, j = (v - nc) % nc;
    double t, o;
    direction(d, k, &t, &o);
    out->q[v] = t * p->q[d * j + 1] + (d == 3 ? o * p->q[d * j + 2] : 0.0);
  }
  /* lambda: +1 in the beta rows of its contact; its own row
   * mu r_n - sum_k beta_k (q = 0). */
#define MM(i, j) out->M[(size_t)(i) + (size_t)(j) * (size_t)n]
  for (int j = 0; j < nc; j++) {
    const int lam = nf + j;
    for (int k = 0; k < K; k++) {
      MM(nc + k * nc + j, lam) = 1.0;
      MM(lam, nc + k * nc + j) = -1.0;
    }
    MM(lam, j) = p->mu[j];
    out->q[lam] = 0.0;
  }
#undef MM
  free(g);
  return 0;
}

void fc_forces(const fc_problem *p, const double *z, double *r, double *u) {
  const int d = p->d, nc = p->nc, N = d * nc, K = fc_ndir(p);
  memset(r, 0, sizeof(double) * (size_t)N);
  for (int j = 0; j < nc; j++) {
    r[d * j] = z[j];
    for (int k = 0; k < K; k++) {
      double t, o;
      direction(d, k, &t, &o);
      const double b = z[nc + k * nc + j];
      r[d * j + 1] += t * b;
      if (d == 3) r[d * j + 2] += o * b;
    }
  }
  memcpy(u, p->q, sizeof(double) * (size_t)N);
  for (int a = 0; a < N; a++) {
    if (r[a] == 0.0) continue;
    const double *Wa = p->W + (size_t)a * (size_t)N;
    for (int i = 0; i < N; i++) u[i] += Wa[i] * r[a];
  }
}

static double fmin0(double a, double b) { return a < b ? a : b; }

double fc_law_violation(const fc_problem *p, const double *r, const double *u,
                        int *where) {
  const int d = p->d, nc = p->nc, N = d * nc;
  double F = 0.0;
  for (int i = 0; i < N; i++) F = fmax(F, fabs(r[i]));
  if (F == 0.0) F = 1.0;
  /* Velocity scale: the largest of |q| and |W r| (normwise: a contact
   * without load and without free velocity has velocities that are the
   * rounding noise of the other contacts' terms). */
  double V = 0.0;
  for (int i = 0; i < N; i++)
    V = fmax(V, fmax(fabs(p->q[i]), fabs(u[i] - p->q[i])));
  if (V == 0.0) V = 1.0;
  double worst = 0.0;
  if (where) *where = -1;
  for (int j = 0; j < nc; j++) {
    const double Sj = V;
    const double rn = r[d * j] / F, un = u[d * j] / Sj;
    double v = fmax(fmax(-rn, -un), fmin0(fabs(rn), fabs(un)));
    for (int a = 1; a < d; a++) {
      const double rc = r[d * j + a] / F, uc = u[d * j + a] / Sj;
      const double gap = p->mu[j] * rn - fabs(rc);
      v = fmax(v, -gap);                          /* inside the box */
      v = fmax(v, fmin0(fabs(gap), fabs(uc)));    /* at the bound or stuck */
      if (rc * uc > 0.0) v = fmax(v, fmin0(fabs(rc), fabs(uc))); /* opposes */
    }
    if (v > worst) {
      worst = v;
      if (where) *where = j;
    }
  }
  return worst;
}
