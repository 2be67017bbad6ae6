// Banded factorisation of a large warm basis (planner/sim/world_impl.h,
// docs/simulate.md "Scaling"). A resting stack's warm basis is its normals,
// and in the order the contacts come (pair by pair, up the stack) a
// contact's row meets only the contacts of the two boxes it touches: the
// k x k basis matrix is banded, a few rows wide however tall the stack.
// LAPACK's band LU (dgbtrf, partial pivoting within the band) then costs
// k kl (kl + ku) instead of the dense k^3 / 3 (a 100-box stack: k = 400).
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
