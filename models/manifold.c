// Contact manifolds: pair identity and the reduction of a pair's points
// (models/manifold.h).
#include "models/manifold.h"

#include "models/vec3.h"

// (static: inlined into the reduction's loop)
static int between(const double *p, const double *a, const double *b, double tol) {
  double ab[3], ap[3], x[3];
  cp_v3_sub(ab, b, a);
  cp_v3_sub(ap, p, a);
  double l2 = cp_v3_dot(ab, ab), t = cp_v3_dot(ap, ab);
  if (!(t > 0 && t < l2)) return 0;
  cp_v3_cross(x, ap, ab); // |x| = distance * |ab|; compared squared
  return cp_v3_dot(x, x) <= tol * tol * l2;
}

int cp_manifold_between(const double p[3], const double a[3], const double b[3],
                        double tol) {
  return between(p, a, b, tol);
}

int cp_manifold_reduce(cp_contact *c, int n, double tol) {
  const double tol2 = tol * tol;
  int out = 0;
  for (int i = 0; i < n;) {
    int e = i + 1;
    while (e < n && cp_contact_same_pair(&c[e], &c[i])) ++e;
    unsigned char keep[CP_MANIFOLD_MAX_POINTS];
    int m = e - i < CP_MANIFOLD_MAX_POINTS ? e - i : CP_MANIFOLD_MAX_POINTS;
    for (int k = 0; k < m; ++k) {
      keep[k] = 1;
      for (int a = 0; keep[k] && a < k; ++a) { // near-duplicate of a kept one
        double d[3];
        cp_v3_sub(d, c[i + k].p, c[i + a].p);
        if (keep[a] && cp_v3_dot(d, d) <= tol2) keep[k] = 0;
      }
      for (int a = 0; keep[k] && a < m; ++a) {
        if (a == k) continue;
        for (int b = a + 1; keep[k] && b < m; ++b)
          if (b != k && between(c[i + k].p, c[i + a].p, c[i + b].p, tol))
            keep[k] = 0;
      }
    }
    for (int k = 0; k < e - i; ++k)
      if (k >= CP_MANIFOLD_MAX_POINTS || keep[k]) {
        if (out != i + k) c[out] = c[i + k];
        ++out;
      }
    i = e;
  }
  return out;
}
