/* Deterministic LCP generators (see lcpgen.h). Every random draw comes from
 * one splitmix64 stream per instance, in a fixed order, so that the same seed
 * gives the same instance on every machine (up to BLAS rounding in A). */
#include "experiments/lcpgen.h"

#include <cblas.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/pyramid.h"

static uint64_t sm64(uint64_t *s) {
  uint64_t x = (*s += 0x9E3779B97F4A7C15ull);
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

static double unif(uint64_t *s, double lo, double hi) {
  return lo + (hi - lo) * (double)(sm64(s) >> 11) * 0x1.0p-53;
}

void cp_gen_monotone(int n, uint64_t seed, double *M, double *q,
                     double *zstar) {
  uint64_t s = seed ^ 0x4D4F4E4F544F4E45ull; /* "MONOTONE" */
  const size_t nn = (size_t)n * (size_t)n;
  double *B = malloc(sizeof(double) * (2 * nn + 2 * (size_t)n));
  if (!B) abort(); /* generator for tests and benchmarks only */
  double *C = B + nn, *zs = C + nn, *ws = zs + n;
  for (size_t i = 0; i < nn; i++) B[i] = unif(&s, -1.0, 1.0);
  for (size_t i = 0; i < nn; i++) C[i] = unif(&s, -1.0, 1.0);
  /* M = B^T B + (C - C^T): positive semidefinite plus skew, i.e. monotone. */
  cblas_dgemm(CblasColMajor, CblasTrans, CblasNoTrans, n, n, n, 1.0, B, n, B,
              n, 0.0, M, n);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++)
      M[i + (size_t)j * n] += C[i + (size_t)j * n] - C[j + (size_t)i * n];
  for (int i = 0; i < n; i++) {
    if (unif(&s, 0.0, 1.0) < 0.5) {
      zs[i] = unif(&s, 0.1, 1.0);
      ws[i] = 0.0;
    } else {
      zs[i] = 0.0;
      ws[i] = unif(&s, 0.1, 1.0);
    }
  }
  /* q = w* - M z*. */
  for (int i = 0; i < n; i++) q[i] = ws[i];
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) q[i] -= M[i + (size_t)j * n] * zs[j];
  if (zstar) memcpy(zstar, zs, sizeof(double) * (size_t)n);
  free(B);
}

int cp_gen_contact_like_size(int nc, int ns) { return ns + 5 * (nc - ns); }

static void cross(const double *a, const double *b, double *c) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

static void random_unit(uint64_t *s, double *v) {
  for (;;) {
    double n2 = 0.0;
    for (int k = 0; k < 3; k++) {
      v[k] = unif(s, -1.0, 1.0);
      n2 += v[k] * v[k];
    }
    if (n2 > 0.01 && n2 <= 1.0) {
      const double r = 1.0 / sqrt(n2);
      for (int k = 0; k < 3; k++) v[k] *= r;
      return;
    }
  }
}

/* Rotation matrix (column-major 3x3) of a random unit quaternion. */
static void random_rotation(uint64_t *s, double *R) {
  double q[4], n2 = 0.0;
  do {
    n2 = 0.0;
    for (int k = 0; k < 4; k++) {
      q[k] = unif(s, -1.0, 1.0);
      n2 += q[k] * q[k];
    }
  } while (n2 < 0.01 || n2 > 1.0);
  const double r = 1.0 / sqrt(n2);
  const double w = q[0] * r, x = q[1] * r, y = q[2] * r, z = q[3] * r;
  const double m[9] = {1 - 2 * (y * y + z * z), 2 * (x * y + w * z),
                       2 * (x * z - w * y),     2 * (x * y - w * z),
                       1 - 2 * (x * x + z * z), 2 * (y * z + w * x),
                       2 * (x * z + w * y),     2 * (y * z - w * x),
                       1 - 2 * (x * x + y * y)};
  memcpy(R, m, sizeof m);
}

/* Builds the instance; eps > 0 perturbs b with the stream pseed. */
static void contact_instance(int nc, int ns, int nb, double mu, uint64_t seed,
                             double eps, uint64_t pseed, double *M,
                             double *q) {
  uint64_t s = seed ^ 0x434F4E5441435421ull; /* "CONTACT!" */
  if (nb < 1) nb = 1;
  const int nd = 6 * nb, n3 = 3 * nc;
  double *H = calloc((size_t)nd * nd + (size_t)nd * n3 + (size_t)n3 * n3 +
                         (size_t)n3 + 3 * (size_t)nb,
                     sizeof(double));
  cp_pyramid_contact *con = malloc(sizeof *con * (size_t)(nc > 0 ? nc : 1));
  int *ord = malloc(sizeof(int) * 2 * (size_t)(nc > 0 ? nc : 1));
  if (!H || !con || !ord) abort();
  double *G = H + (size_t)nd * nd, *A = G + (size_t)nd * n3, *b = A + (size_t)n3 * n3;
  double *xb = b + n3;
  /* Bodies: mass, position, world inertia R diag(I) R^T. */
  for (int k = 0; k < nb; k++) {
    const double m = unif(&s, 0.5, 2.0);
    double R[9], Ip[3];
    for (int a = 0; a < 3; a++) xb[3 * k + a] = unif(&s, -1.0, 1.0);
    for (int a = 0; a < 3; a++) Ip[a] = m * unif(&s, 0.02, 0.1);
    random_rotation(&s, R);
    const size_t o = (size_t)6 * k;
    for (int a = 0; a < 3; a++) H[(o + a) + (o + a) * nd] = m;
    for (int r = 0; r < 3; r++)
      for (int c = 0; c < 3; c++) {
        double v = 0.0;
        for (int a = 0; a < 3; a++) v += R[r + 3 * a] * Ip[a] * R[c + 3 * a];
        H[(o + 3 + r) + (o + 3 + c) * nd] = v;
      }
  }
  /* Contacts: body a (free), body b (free, different, or the ground = -1),
   * point near a, random frame N = [n t o]. G column block (formulation §2):
   * [N; (p - x_a) x N] in a's rows, the negatives (about x_b) in b's. */
  for (int j = 0; j < nc; j++) {
    const int ba = (int)(sm64(&s) % (uint64_t)nb);
    int bb = -1;
    if (nb > 1 && unif(&s, 0.0, 1.0) < 0.5) {
      bb = (int)(sm64(&s) % (uint64_t)(nb - 1));
      if (bb >= ba) bb++;
    }
    double p[3], N[9], r0[3];
    for (int a = 0; a < 3; a++) p[a] = xb[3 * ba + a] + unif(&s, -0.3, 0.3);
    random_unit(&s, N);
    random_unit(&s, r0);
    double dot = r0[0] * N[0] + r0[1] * N[1] + r0[2] * N[2];
    double t[3] = {r0[0] - dot * N[0], r0[1] - dot * N[1], r0[2] - dot * N[2]};
    double tn = sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
    if (tn < 1e-3) { /* r0 almost parallel to n: use a fixed helper axis */
      double e[3] = {fabs(N[0]) < 0.9 ? 1.0 : 0.0, fabs(N[0]) < 0.9 ? 0.0 : 1.0, 0.0};
      dot = e[0] * N[0] + e[1] * N[1];
      for (int a = 0; a < 3; a++) t[a] = e[a] - dot * N[a];
      tn = sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
    }
    for (int a = 0; a < 3; a++) N[3 + a] = t[a] / tn;
    cross(N, N + 3, N + 6); /* o = n x t */
    for (int side = 0; side < 2; side++) {
      const int body = side == 0 ? ba : bb;
      if (body < 0) continue;
      const double sg = side == 0 ? 1.0 : -1.0;
      const double rel[3] = {p[0] - xb[3 * body], p[1] - xb[3 * body + 1],
                             p[2] - xb[3 * body + 2]};
      for (int c = 0; c < 3; c++) {
        double *g = G + (size_t)(3 * j + c) * nd + 6 * body;
        double rx[3];
        cross(rel, N + 3 * c, rx);
        for (int a = 0; a < 3; a++) {
          g[a] += sg * N[3 * c + a];
          g[3 + a] += sg * rx[a];
        }
      }
    }
    /* Mostly approaching normal accelerations, random tangential ones. */
    b[3 * j] = unif(&s, 0.0, 1.0) < 0.8 ? -unif(&s, 0.1, 1.0) : unif(&s, 0.0, 0.5);
    b[3 * j + 1] = unif(&s, -0.5, 0.5);
    b[3 * j + 2] = unif(&s, -0.5, 0.5);
    con[j].mu = mu;
    con[j].sliding = j < ns;
    const double th = unif(&s, 0.0, 6.283185307179586);
    con[j].d[0] = j < ns ? mu * cos(th) : 0.0;
    con[j].d[1] = j < ns ? mu * sin(th) : 0.0;
  }
  /* A = G^T H^-1 G = (L^-1 G)^T (L^-1 G), H = L L^T. */
  if (LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', nd, H, nd) != 0) abort();
  cblas_dtrsm(CblasColMajor, CblasLeft, CblasLower, CblasNoTrans,
              CblasNonUnit, nd, n3, 1.0, H, nd, G, nd);
  cblas_dsyrk(CblasColMajor, CblasLower, CblasTrans, n3, nd, 1.0, G, nd, 0.0,
              A, n3);
  for (int j = 0; j < n3; j++)
    for (int i = 0; i < j; i++) A[i + (size_t)j * n3] = A[j + (size_t)i * n3];
  if (eps > 0.0) {
    uint64_t ps = pseed ^ 0x5045525455524221ull; /* "PERTURB!" */
    double bmax = 0.0;
    for (int i = 0; i < n3; i++) bmax = fmax(bmax, fabs(b[i]));
    for (int i = 0; i < n3; i++) b[i] += eps * bmax * unif(&ps, -1.0, 1.0);
  }
  cp_pyramid_layout lay;
  cp_pyramid_layout_make(nc, con, ord, ord + nc, &lay);
  cp_pyramid_build(&lay, con, A, b, M, q);
  free(H);
  free(con);
  free(ord);
}

void cp_gen_contact_like(int nc, int ns, int nb, double mu, uint64_t seed,
                         double *M, double *q) {
  contact_instance(nc, ns, nb, mu, seed, 0.0, 0, M, q);
}

void cp_gen_contact_like_perturbed(int nc, int ns, int nb, double mu,
                                   uint64_t seed, double eps, uint64_t pseed,
                                   double *M, double *q) {
  contact_instance(nc, ns, nb, mu, seed, eps, pseed, M, q);
}
