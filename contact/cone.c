#include "contact/cone.h"

#include <math.h>
#include <string.h>

int cp_cone_size(const cp_pyramid_layout *lay, int k) {
  return lay->nc + lay->nr * (k + 1);
}

static void edge(int k, int i, double *dx, double *dy) {
  const double pi = 3.14159265358979323846;
  double phi = pi / k + 2.0 * pi * i / k, s = 1.0 / cos(pi / k);
  *dx = cos(phi) * s;
  *dy = sin(phi) * s;
}

/* Entry of a = A c + b's row r for a unit of unknown `col` of the cone LCP. */
void cp_cone_build(const cp_pyramid_layout *lay, const cp_pyramid_contact *c,
                   int k, const double *A, const double *b, double *M,
                   double *q) {
  const int nc = lay->nc, nr = lay->nr, n3 = 3 * nc;
  const int m = cp_cone_size(lay, k), off_beta = nc, off_lam = nc + nr * k;
  memset(M, 0, sizeof(double) * (size_t)m * (size_t)m);
#define MM(i, j) M[(size_t)(i) + (size_t)(j) * (size_t)m]
#define AA(i, j) A[(size_t)(i) + (size_t)(j) * (size_t)n3]
  /* Rows: for each LCP row, the A row(s) it reads, combined with weights. */
  for (int row = 0; row < off_lam; row++) {
    int j, rr = -1;
    double wt = 0, wo = 0; /* weights of A rows 3j+1, 3j+2; a_n row if rr < 0 */
    if (row < nc) {
      j = lay->order[row];
    } else {
      int r = (row - off_beta) / k, i = (row - off_beta) % k;
      j = lay->order[lay->ns + r];
      edge(k, i, &wt, &wo);
      rr = r;
    }
    double qv;
    if (rr < 0) qv = b[3 * j];
    else qv = wt * b[3 * j + 1] + wo * b[3 * j + 2];
    q[row] = qv;
    /* Columns of c_n. */
    for (int kc = 0; kc < nc; kc++) {
      int l = lay->order[kc];
      double dt = c[l].sliding ? c[l].d[0] : 0.0, dd = c[l].sliding ? c[l].d[1] : 0.0;
      double v;
      if (rr < 0) {
        v = AA(3 * j, 3 * l) - dt * AA(3 * j, 3 * l + 1) - dd * AA(3 * j, 3 * l + 2);
      } else {
        v = wt * (AA(3 * j + 1, 3 * l) - dt * AA(3 * j + 1, 3 * l + 1) - dd * AA(3 * j + 1, 3 * l + 2)) +
            wo * (AA(3 * j + 2, 3 * l) - dt * AA(3 * j + 2, 3 * l + 1) - dd * AA(3 * j + 2, 3 * l + 2));
      }
      MM(row, kc) = v;
    }
    /* Columns of beta of rolling contact l, edge i. */
    for (int r2 = 0; r2 < nr; r2++) {
      int l = lay->order[lay->ns + r2];
      for (int i = 0; i < k; i++) {
        double ex, ey;
        edge(k, i, &ex, &ey);
        double v;
        if (rr < 0) {
          v = AA(3 * j, 3 * l + 1) * ex + AA(3 * j, 3 * l + 2) * ey;
        } else {
          v = wt * (AA(3 * j + 1, 3 * l + 1) * ex + AA(3 * j + 1, 3 * l + 2) * ey) +
              wo * (AA(3 * j + 2, 3 * l + 1) * ex + AA(3 * j + 2, 3 * l + 2) * ey);
        }
        MM(row, off_beta + r2 * k + i) = v;
      }
    }
    if (rr >= 0) MM(row, off_lam + rr) = 1.0; /* + lambda */
  }
  /* Rows mu c_n - e^T beta. */
  for (int r = 0; r < nr; r++) {
    int j = lay->order[lay->ns + r];
    q[off_lam + r] = 0.0;
    MM(off_lam + r, lay->ns + r) = c[j].mu;
    for (int i = 0; i < k; i++) MM(off_lam + r, off_beta + r * k + i) = -1.0;
  }
#undef MM
#undef AA
}

void cp_cone_forces(const cp_pyramid_layout *lay, const cp_pyramid_contact *c,
                    int k, const double *z, double *force) {
  const int nc = lay->nc;
  for (int kk = 0; kk < nc; kk++) {
    int j = lay->order[kk];
    double cn = z[kk];
    force[3 * j] = cn;
    if (c[j].sliding) {
      force[3 * j + 1] = -c[j].d[0] * cn;
      force[3 * j + 2] = -c[j].d[1] * cn;
    } else {
      int r = lay->rank[j];
      double ft = 0, fo = 0;
      for (int i = 0; i < k; i++) {
        double ex, ey;
        edge(k, i, &ex, &ey);
        ft += ex * z[nc + r * k + i];
        fo += ey * z[nc + r * k + i];
      }
      force[3 * j + 1] = ft;
      force[3 * j + 2] = fo;
    }
  }
}

double cp_cone_violation(const cp_pyramid_layout *lay,
                         const cp_pyramid_contact *c, const double *force,
                         double scale) {
  double worst = 0.0;
  for (int j = 0; j < lay->nc; j++) {
    if (c[j].sliding) continue;
    double lim = c[j].mu * force[3 * j];
    double tan = hypot(force[3 * j + 1], force[3 * j + 2]);
    double v = (tan - lim) / fmax(lim, scale);
    if (v > worst) worst = v;
  }
  return worst;
}
