// The warm basis's small LU on the block's extents (planner/sim/sparse.c,
// cp_wi_lu_factor_ext): the same bits as the plain dense LU with partial
// pivoting that lcp.c runs (copied here, straightforward, as the
// reference), on random banded blocks with exact zeros inside the band,
// negative pivots (whose +0 / d leave -0 in L), cancellations, singular
// blocks, infinities, NaN and overflow.
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "planner/sim/world_impl.h"

// lcp.c's lu_small as it stands, loop for loop (the reference).
static int ref_lu(int k, double *A, lapack_int *piv) {
  for (int j = 0; j < k; ++j) {
    double *cj = A + (size_t)j * k;
    int p = j;
    double best = fabs(cj[j]);
    for (int i = j + 1; i < k; ++i)
      if (fabs(cj[i]) > best) best = fabs(cj[p = i]);
    if (!(best > 0)) return -1;
    piv[j] = p;
    if (p != j)
      for (int c = 0; c < k; ++c) {
        double *cc = A + (size_t)c * k, t = cc[j];
        cc[j] = cc[p];
        cc[p] = t;
      }
    const double d = cj[j];
    for (int i = j + 1; i < k; ++i) cj[i] /= d;
    for (int c = j + 1; c < k; ++c) {
      double *cc = A + (size_t)c * k;
      const double f = cc[j];
      if (f != 0)
        for (int i = j + 1; i < k; ++i) cc[i] -= cj[i] * f;
    }
  }
  return 0;
}

// lcp.c's lu_small_solve as it stands (the reference).
static void ref_solve(int k, const double *A, const lapack_int *piv, double *x) {
  for (int j = 0; j < k; ++j)
    if (piv[j] != j) {
      double t = x[j];
      x[j] = x[piv[j]];
      x[piv[j]] = t;
    }
  for (int j = 0; j < k; ++j) {
    const double *cj = A + (size_t)j * k, xj = x[j];
    if (xj != 0)
      for (int i = j + 1; i < k; ++i) x[i] -= cj[i] * xj;
  }
  for (int j = k - 1; j >= 0; --j) {
    const double *cj = A + (size_t)j * k;
    x[j] /= cj[j];
    const double xj = x[j];
    for (int i = 0; i < j; ++i) x[i] -= cj[i] * xj;
  }
}

static uint64_t rng = 0x9e3779b97f4a7c15u;
static uint64_t next(void) { // xorshift64*
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return rng * 2685821657736338717u;
}
static double unit(void) { return (double)(next() >> 11) / 9007199254740992.0; }

// A random k x k block (column-major) with nonzeros within kl below and ku
// above the diagonal; kind picks the degenerate values mixed in. Never -0.
static void block(int k, int kl, int ku, int kind, double *A) {
  for (int j = 0; j < k; ++j)
    for (int i = 0; i < k; ++i) {
      double v = 0;
      if (i - j <= kl && j - i <= ku && next() % 5) {
        v = (unit() - 0.5) * (next() % 3 ? 1.0 : 1e-8);
        if (next() % 7 == 0) v = (double)(int)(4 * v + 2) - 2; // small integers: cancellations
        if (kind == 1 && next() % 40 == 0) v = next() % 2 ? INFINITY : -INFINITY;
        if (kind == 2 && next() % 60 == 0) v = NAN;
        if (kind == 3 && next() % 10 == 0) v = (next() % 2 ? 1e300 : -1e300);
        if (v == 0) v = 0.0; // (+0, never -0)
      }
      A[i + (size_t)j * k] = v;
    }
  if (kind == 4 && k > 1) { // a zero column: singular
    const int j = (int)(next() % (uint64_t)k);
    for (int i = 0; i < k; ++i) A[i + (size_t)j * k] = 0;
  }
}

// The extents the caller gives: last nonzero column of each row, last
// nonzero row of each column (NaN counts as nonzero).
static void extents(int k, const double *A, int *rl, int *cl) {
  for (int i = 0; i < k; ++i) rl[i] = -1;
  for (int j = 0; j < k; ++j) {
    cl[j] = -1;
    for (int i = 0; i < k; ++i)
      if (A[i + (size_t)j * k] != 0) {
        cl[j] = i;
        rl[i] = j;
      }
  }
}

Test(world_lu, extents_same_bits) {
  enum { K = CP_WORLD_SMALL_LU };
  static double A[K * K], B[K * K];
  lapack_int pa[K], pb[K];
  int rl[K], cl[K], le[K];
  int fails = 0, swaps = 0, solves = 0;
  for (int trial = 0; trial < 6000; ++trial) {
    const int k = 1 + (int)(next() % K);
    const int kl = (int)(next() % (uint64_t)k), ku = (int)(next() % (uint64_t)k);
    const int kind = (int)(next() % 5);
    block(k, next() % 3 ? kl % 8 : kl, next() % 3 ? ku % 8 : ku, kind, A);
    memcpy(B, A, sizeof(double) * (size_t)k * (size_t)k);
    extents(k, B, rl, cl);
    memset(pa, 0, sizeof pa);
    memset(pb, 0, sizeof pb);
    const int ra = ref_lu(k, A, pa);
    const int rb = cp_wi_lu_factor_ext(k, B, pb, rl, cl, le);
    cr_assert_eq(ra, rb, "trial %d (k %d, kind %d): %d against the reference's %d", trial, k,
                 kind, rb, ra);
    cr_assert(!memcmp(pa, pb, sizeof(lapack_int) * (size_t)k), "trial %d: pivots differ", trial);
    cr_assert(!memcmp(A, B, sizeof(double) * (size_t)k * (size_t)k),
              "trial %d (k %d, kind %d): factors differ", trial, k, kind);
    fails += ra != 0;
    if (!ra) { // both solves, on right-hand sides with zeros of either sign and non-finite values
      double xa[K], xb[K];
      for (int i = 0; i < k; ++i) {
        const int r = (int)(next() % 16);
        xa[i] = r == 0 ? 0.0
                : r == 1 && trial % 3 == 0 ? -0.0
                : r == 2 && kind == 1 ? INFINITY
                : unit() - 0.5;
      }
      memcpy(xb, xa, sizeof(double) * (size_t)k);
      ref_solve(k, A, pa, xa);
      cp_wi_lu_solve_ext(k, B, pb, cl, le, xb);
      cr_assert(!memcmp(xa, xb, sizeof(double) * (size_t)k),
                "trial %d (k %d, kind %d): solutions differ", trial, k, kind);
      solves += 1;
    }
    for (int j = 0; j < k && !ra; ++j) swaps += pa[j] != j;
  }
  // The draws reach what they are meant to (not a test of the code).
  cr_assert_gt(fails, 100, "singular blocks: %d", fails);
  cr_assert_gt(swaps, 1000, "row swaps: %d", swaps);
  cr_assert_gt(solves, 1000, "solves: %d", solves);
}

// The degenerate blocks by name: the zero block, a single NaN pivot, -inf
// on the diagonal, a pivot column whose only nonzero is below the band.
Test(world_lu, degenerate_same_bits) {
  enum { K = 6 };
  double cases[4][K * K];
  memset(cases, 0, sizeof cases);
  for (int j = 0; j < K; ++j) {
    cases[1][j + j * K] = j == 2 ? NAN : -1.0 - j;
    cases[2][j + j * K] = j == 3 ? -INFINITY : 2.0;
    if (j + 1 < K) cases[2][j + 1 + j * K] = 0.5;
    cases[3][j + j * K] = j == 0 ? 0 : -3.0;
  }
  cases[3][5] = -1e-300;
  cases[3][K] = 1.0;
  for (int c = 0; c < 4; ++c) {
    double A[K * K], B[K * K];
    lapack_int pa[K] = {0}, pb[K] = {0};
    int rl[K], cl[K], le[K];
    memcpy(A, cases[c], sizeof A);
    memcpy(B, cases[c], sizeof B);
    extents(K, B, rl, cl);
    const int ra = ref_lu(K, A, pa), rb = cp_wi_lu_factor_ext(K, B, pb, rl, cl, le);
    cr_assert_eq(ra, rb, "case %d", c);
    cr_assert(!memcmp(pa, pb, sizeof pa) && !memcmp(A, B, sizeof A), "case %d differs", c);
  }
}
