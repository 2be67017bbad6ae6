// Banded factorisation of a large warm basis (planner/sim/world_impl.h,
// docs/simulate.md "Scaling"). A resting stack's warm basis is its normals,
// and in the order the contacts come (pair by pair, up the stack) a
// contact's row meets only the contacts of the two boxes it touches: the
// k x k basis matrix is banded, a few rows wide however tall the stack.
// LAPACK's band LU (dgbtrf, partial pivoting within the band) then costs
// k kl (kl + ku) instead of the dense k^3 / 3 (a 100-box stack: k = 400).
#include <math.h>
#include <string.h>

#include "planner/sim/world_impl.h"

// The widest band factorised as a band (rows of band storage), and how much
// narrower than k it must be to pay for the scan.
#define CP_WORLD_BAND_ROWS 128
#define CP_WORLD_BAND_RATIO 4

int cp_wi_band_fits(int k, int kl, int ku) {
  return !((2 * kl + ku + 1) * CP_WORLD_BAND_RATIO > k || 2 * kl + ku + 1 > CP_WORLD_BAND_ROWS);
}

int cp_wi_band_factor_stored(int k, int kl, int ku, double *A, lapack_int *piv, int band[2]) {
  band[0] = band[1] = -1;
  if (LAPACKE_dgbtrf_work(LAPACK_COL_MAJOR, k, k, kl, ku, A, 2 * kl + ku + 1, piv)) return -1;
  band[0] = kl;
  band[1] = ku;
  return 0;
}

int cp_wi_band_factor(int k, double *A, lapack_int *piv, int band[2]) {
  band[0] = band[1] = -1;
  // Lower and upper bandwidths of A (column-major k x k), column by column
  // from the outside in: most of a wide band's scan is skipped.
  int kl = 0, ku = 0;
  for (int j = 0; j < k; ++j) {
    const double *c = A + (size_t)j * k;
    for (int i = 0; i < j - ku; ++i)
      if (c[i] != 0) {
        ku = j - i;
        break;
      }
    for (int i = k - 1; i > j + kl; --i)
      if (c[i] != 0) {
        kl = i - j;
        break;
      }
    if (!cp_wi_band_fits(k, kl, ku)) return 1;
  }
  // Band storage (ldab = 2 kl + ku + 1, row kl + ku + i - j of column j
  // holds A_ij) written over A in place, column by column: column j's band
  // starts at j ldab <= j k, so it overwrites only columns already moved
  // (and its own, read first).
  const int ldab = 2 * kl + ku + 1;
  double col[CP_WORLD_BAND_ROWS];
  for (int j = 0; j < k; ++j) {
    const double *c = A + (size_t)j * k;
    for (int r = 0; r < ldab; ++r) {
      const int i = r - kl - ku + j;
      col[r] = r >= kl && i >= 0 && i < k ? c[i] : 0.0;
    }
    memcpy(A + (size_t)j * ldab, col, sizeof(double) * (size_t)ldab);
  }
  return cp_wi_band_factor_stored(k, kl, ku, A, piv, band);
}

int cp_wi_band_solve(int k, const double *A, const lapack_int *piv, const int band[2],
                     double *x) {
  return LAPACKE_dgbtrs_work(LAPACK_COL_MAJOR, 'N', k, band[0], band[1], 1, A,
                             2 * band[0] + band[1] + 1, piv, x, k)
             ? -1
             : 0;
}

// lu_small (lcp.c) of a block whose nonzeros sit near the diagonal, its
// operations restricted to the entries that can be nonzero. Skipped are
// only operations that leave every bit as lu_small leaves it, given that
// no entry of A is -0 (the caller's promise):
// - An entry of the active (not yet eliminated) part of A is never -0:
//   x - y is -0 only when x is -0 and y +0, and a zero result of x - y
//   otherwise is +0. So a zero there is +0, and x - (+-0) = x for every x
//   that is not -0 (infinities and NaN included).
// - The pivot search stops at the column's last row that can be nonzero
//   (|+0| > best never holds).
// - Column c's update by pivot column j: f = A_jc is +0 beyond row j's
//   last nonzero column (lu_small skips f = 0); within it, rows of column
//   j past its last nonzero row hold +0 / d = +-0, whose products with a
//   finite f are +-0 and leave the +0 or nonzero entry unchanged. A
//   non-finite f (0 inf is NaN) widens every extent to the whole matrix:
//   from then on nothing is skipped.
// - A row swap exchanges two +0 in a column of the active part where
//   neither row can be nonzero, and in an eliminated column c (L) two
//   entries +0 / d_c, equal to the bit, where neither row held a nonzero
//   at c's elimination or received one by a later swap.
// The division by the pivot runs over the whole column as in lu_small (the
// solve reads the zeros' signs). Extents are upper bounds kept as the
// elimination fills in: rl[i] the last column row i can be nonzero in, cl[j]
// the last row column j can be nonzero in (both -1: none), given by the
// caller for A and overwritten; le[] scratch (k ints).
int cp_wi_lu_factor_ext(int k, double *A, lapack_int *piv, int *rl, int *cl, int *le) {
  int lo = 0; // eliminated columns before lo hold no nonzero in rows >= j
  for (int j = 0; j < k; ++j) {
    double *cj = A + (size_t)j * k;
    int p = j;
    double best = fabs(cj[j]);
    for (int i = j + 1; i <= cl[j]; ++i)
      if (fabs(cj[i]) > best) best = fabs(cj[p = i]);
    if (!(best > 0)) return -1;
    piv[j] = p;
    if (p != j) {
      while (lo < j && le[lo] < j) ++lo;
      for (int c = lo; c < j; ++c) {
        if (le[c] < j) continue;
        double *cc = A + (size_t)c * k, t = cc[j];
        cc[j] = cc[p];
        cc[p] = t;
        if (p > le[c]) le[c] = p;
      }
      const int hi = rl[j] > rl[p] ? rl[j] : rl[p];
      for (int c = j; c <= hi; ++c) {
        double *cc = A + (size_t)c * k, t = cc[j];
        cc[j] = cc[p];
        cc[p] = t;
        if (p > cl[c]) cl[c] = p;
      }
      const int t = rl[j];
      rl[j] = rl[p];
      rl[p] = t;
    }
    const double d = cj[j];
    for (int i = j + 1; i < k; ++i) cj[i] /= d;
    le[j] = cl[j];
    int last = cl[j], rj = rl[j];
    for (int c = j + 1; c <= rj; ++c) {
      double *cc = A + (size_t)c * k;
      const double f = cc[j];
      if (f == 0) continue;
      if (!isfinite(f) && (rj < k - 1 || last < k - 1)) { // nothing skipped from here
        for (int i = 0; i < k; ++i) rl[i] = cl[i] = le[i] = k - 1;
        last = rj = k - 1;
      }
      for (int i = j + 1; i <= last; ++i) cc[i] -= cj[i] * f;
      if (last > cl[c]) cl[c] = last;
    }
    for (int i = j + 1; i <= last; ++i)
      if (rj > rl[i]) rl[i] = rj;
  }
  // Column c of U can be nonzero from the first row i whose extent, fixed
  // at i's elimination (later swaps and fills touch only rows below),
  // reaches c: into cl for the solve.
  for (int i = 0, c = 0; i < k; ++i)
    while (c < k && c <= rl[i]) cl[c++] = i;
  return 0;
}

// lcp.c's small LU solve on the extents cp_wi_lu_factor_ext leaves (uf[j]
// the first row of U's column j, le[j] the last of L's that can be
// nonzero), the same bits: when x holds no -0, no entry of x turns -0
// before U's division (x - y is -0 only when x is -0), and the products
// of the zeros beyond the extents (+0 in U, +0 / d_j in L) with a finite
// x_j are +-0, which leave it unchanged. With a -0 in x, or for a
// non-finite x_j, the whole column is run.
void cp_wi_lu_solve_ext(int k, const double *A, const lapack_int *piv, const int *uf,
                        const int *le, double *x) {
  int negz = 0;
  for (int j = 0; j < k; ++j) negz |= x[j] == 0 && signbit(x[j]);
  cp_wi_lu_permute(k, piv, x);
  for (int j = 0; j < k; ++j) { // L, unit diagonal, by columns
    const double *cj = A + (size_t)j * k, xj = x[j];
    const int end = negz || !isfinite(xj) ? k - 1 : le[j];
    if (xj != 0)
      for (int i = j + 1; i <= end; ++i) x[i] -= cj[i] * xj;
  }
  for (int j = k - 1; j >= 0; --j) { // U
    const double *cj = A + (size_t)j * k;
    x[j] /= cj[j];
    const double xj = x[j];
    for (int i = negz || !isfinite(xj) ? 0 : uf[j]; i < j; ++i) x[i] -= cj[i] * xj;
  }
}
