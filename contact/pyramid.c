#include "contact/pyramid.h"

#include <string.h>

void cp_pyramid_layout_make(int nc, const cp_pyramid_contact *c, int *order,
                            int *rank, cp_pyramid_layout *lay) {
  int k = 0, nr = 0;
  for (int j = 0; j < nc; j++)
    if (c[j].sliding) { order[k++] = j; rank[j] = -1; }
  for (int j = 0; j < nc; j++)
    if (!c[j].sliding) { order[k++] = j; rank[j] = nr++; }
  lay->nc = nc;
  lay->nr = nr;
  lay->ns = nc - nr;
  lay->m = lay->ns + 5 * nr;
  lay->order = order;
  lay->rank = rank;
}

/* Column of a = A c + b belonging to the unknown c_n of contact j, after the
 * tangential components have been eliminated: A[:,n] - d_t A[:,t] - d_o A[:,o]
 * (sliding) or A[:,n] - mu (A[:,t] + A[:,o]) (rolling). Row index r of A. */
static double normal_column(const double *A, int n3, const cp_pyramid_contact *cj,
                            int j, int r) {
  const double *an = A + (size_t)(3 * j) * n3, *at = an + n3, *ao = at + n3;
  double dt = cj->sliding ? cj->d[0] : cj->mu;
  double d_o = cj->sliding ? cj->d[1] : cj->mu;
  return an[r] - dt * at[r] - d_o * ao[r];
}

void cp_pyramid_build(const cp_pyramid_layout *lay,
                      const cp_pyramid_contact *c, const double *A,
                      const double *b, double *M, double *q) {
  const int nc = lay->nc, nr = lay->nr, m = lay->m, n3 = 3 * nc;
  const int off_st = nc, off_so = nc + nr, off_at = nc + 2 * nr,
            off_ao = nc + 3 * nr;
  memset(M, 0, sizeof(double) * (size_t)m * (size_t)m);
  /* Row of w for LCP row index `row` and A row `r`: the a_n, a+_t and a+_o
   * rows all read row r of A through the same column substitutions. */
#define MM(i, j) M[(size_t)(i) + (size_t)(j) * (size_t)m]
  for (int kr = 0; kr < nc; kr++) {             /* a_n rows, all contacts */
    int ir = lay->order[kr];
    q[kr] = b[3 * ir];
  }
  for (int kr = 0; kr < nr; kr++) {             /* a+_t, a+_o rows */
    int ir = lay->order[lay->ns + kr];
    q[off_st + kr] = b[3 * ir + 1];
    q[off_so + kr] = b[3 * ir + 2];
    q[off_at + kr] = 0.0;
    q[off_ao + kr] = 0.0;
  }
  /* Columns of c_n: rows a_n (all), a+_t (R), a+_o (R), and 2 mu in s- rows. */
  for (int kc = 0; kc < nc; kc++) {
    int jc = lay->order[kc];
    for (int kr = 0; kr < nc; kr++)
      MM(kr, kc) = normal_column(A, n3, &c[jc], jc, 3 * lay->order[kr]);
    for (int kr = 0; kr < nr; kr++) {
      int ir = lay->order[lay->ns + kr];
      MM(off_st + kr, kc) = normal_column(A, n3, &c[jc], jc, 3 * ir + 1);
      MM(off_so + kr, kc) = normal_column(A, n3, &c[jc], jc, 3 * ir + 2);
    }
    if (!c[jc].sliding) {
      int rr = lay->rank[jc];
      MM(off_at + rr, kc) = 2.0 * c[jc].mu;
      MM(off_ao + rr, kc) = 2.0 * c[jc].mu;
    }
  }
  /* Columns of s+_t, s+_o (rolling j): A[:,t], A[:,o]; -1 in the s- rows. */
  for (int kc = 0; kc < nr; kc++) {
    int jc = lay->order[lay->ns + kc];
    const double *at = A + (size_t)(3 * jc + 1) * n3, *ao = at + n3;
    for (int kr = 0; kr < nc; kr++) {
      int r = 3 * lay->order[kr];
      MM(kr, off_st + kc) = at[r];
      MM(kr, off_so + kc) = ao[r];
    }
    for (int kr = 0; kr < nr; kr++) {
      int ir = lay->order[lay->ns + kr];
      MM(off_st + kr, off_st + kc) = at[3 * ir + 1];
      MM(off_so + kr, off_st + kc) = at[3 * ir + 2];
      MM(off_st + kr, off_so + kc) = ao[3 * ir + 1];
      MM(off_so + kr, off_so + kc) = ao[3 * ir + 2];
    }
    MM(off_at + kc, off_st + kc) = -1.0;
    MM(off_ao + kc, off_so + kc) = -1.0;
    /* Columns of a-_t, a-_o: identity in the a+ rows. */
    MM(off_st + kc, off_at + kc) = 1.0;
    MM(off_so + kc, off_ao + kc) = 1.0;
  }
#undef MM
}

void cp_pyramid_forces(const cp_pyramid_layout *lay,
                       const cp_pyramid_contact *c, const double *z,
                       double *force) {
  const int nc = lay->nc, nr = lay->nr;
  for (int k = 0; k < nc; k++) {
    int j = lay->order[k];
    double cn = z[k];
    force[3 * j] = cn;
    if (c[j].sliding) {
      force[3 * j + 1] = -c[j].d[0] * cn;
      force[3 * j + 2] = -c[j].d[1] * cn;
    } else {
      int r = lay->rank[j];
      force[3 * j + 1] = z[nc + r] - c[j].mu * cn;
      force[3 * j + 2] = z[nc + nr + r] - c[j].mu * cn;
    }
  }
}
