// The sparse warm start's pass forming w = M z + q and its row scales
// (planner/sim/warmsparse.c, cp_wi_scatter_runs): the corner rows' runs of
// four consecutive rows taken two at a time must give the bits of the
// plain loop over the column's list (copied here as the reference), on
// random lists (single rows and runs in any order, runs adjacent, at the
// list's start and end) and values that include +-0, subnormal products,
// overflow, infinities and NaN, several columns in turn on the same rows.
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "planner/sim/world_impl.h"

// warmsparse.c's pass over one basic column, as it was (the reference).
static void ref_scatter(int len, const int *ri, const double *v, double zv, double *r,
                        double *sc) {
  const double az = fabs(zv);
  for (int t = 0; t < len; ++t) {
    r[ri[t]] += v[t] * zv;
    sc[ri[t]] += fabs(v[t]) * az;
  }
}

static uint64_t rng = 0x2545f4914f6cdd1du;
static uint64_t next(void) { // xorshift64*
  rng ^= rng >> 12;
  rng ^= rng << 25;
  rng ^= rng >> 27;
  return rng * 0x2545f4914f6cdd1du;
}

// A value: mostly ordinary (of either sign, over many scales), sometimes a
// special one.
static double value(void) {
  const uint64_t u = next();
  switch (u % 16) {
  case 0: return 0.0;
  case 1: return -0.0;
  case 2: return (u >> 8) % 2 ? 1e-300 : -1e-300; // products underflow
  case 3: return (u >> 8) % 2 ? 1e300 : -1e300;   // products overflow
  case 4: return (u >> 8) % 7 ? 1.0 : INFINITY;
  case 5: return (u >> 8) % 7 ? -1.0 : NAN;
  default: {
    const double m = (double)(u >> 11) / 9007199254740992.0;
    return ((u >> 4) % 2 ? -1 : 1) * m * ldexp(1.0, (int)((u >> 5) % 40) - 20);
  }
  }
}

// Equal bits, but any two NaNs equal: which NaN operand's payload and
// sign an add passes on depends on the compiler's operand order (-O0 and
// -O2 differ in the reference loop itself); C leaves it open.
static int same_bits(int n, const double *a, const double *b) {
  for (int i = 0; i < n; ++i)
    if (!(isnan(a[i]) && isnan(b[i])) && memcmp(a + i, b + i, sizeof *a)) return 0;
  return 1;
}

#define NR 96
#define MAXL NR
#define LO 21 // the corner rows: [LO, HI), in groups of four from LO
#define HI 69

// A column's list over rows 0..NR): single rows outside [LO, HI), groups
// of four within, some left out, in a random order; *nrun: how many
// groups.
static int make_list(int *ri, int *nrun) {
  int seg_at[NR], seg_len[NR], nseg = 0;
  for (int i = 0; i < NR;) {
    const int four = i >= LO && i < HI;
    if (next() % 3 == 0) { // a row or group left out of this column
      i += four ? 4 : 1;
      continue;
    }
    seg_at[nseg] = i;
    seg_len[nseg++] = four ? 4 : 1;
    i += four ? 4 : 1;
  }
  for (int a = nseg - 1; a > 0; --a) { // shuffled
    const int b = (int)(next() % (uint64_t)(a + 1));
    int t = seg_at[a];
    seg_at[a] = seg_at[b], seg_at[b] = t;
    t = seg_len[a];
    seg_len[a] = seg_len[b], seg_len[b] = t;
  }
  int len = 0;
  *nrun = 0;
  for (int g = 0; g < nseg; ++g) {
    *nrun += seg_len[g] == 4;
    for (int e = 0; e < seg_len[g]; ++e) ri[len++] = seg_at[g] + e;
  }
  return len;
}

Test(world_scatter, runs_give_the_plain_loops_bits) {
  int ri[MAXL];
  double v[MAXL], r0[NR], s0[NR], r1[NR], s1[NR];
  long runs = 0, specials = 0;
  for (int trial = 0; trial < 4000; ++trial) {
    for (int i = 0; i < NR; ++i) {
      r0[i] = r1[i] = value();
      s0[i] = s1[i] = fabs(value());
    }
    const int ncol = 1 + (int)(next() % 6);
    for (int c = 0; c < ncol; ++c) {
      int nrun;
      const int len = make_list(ri, &nrun);
      for (int t = 0; t < len; ++t) {
        v[t] = value();
        specials += !isfinite(v[t]) || v[t] == 0;
      }
      const double zv = trial % 50 == 0 ? -0.0 : value();
      runs += nrun;
      ref_scatter(len, ri, v, zv, r0, s0);
      cp_wi_scatter_runs(len, ri, v, LO, HI, zv, r1, s1);
      cr_assert(same_bits(NR, r0, r1), "trial %d column %d: w differs", trial, c);
      cr_assert(same_bits(NR, s0, s1), "trial %d column %d: scales differ", trial, c);
    }
  }
  cr_assert(runs > 10000 && specials > 10000); // (the inputs do reach the cases)
}

// Named degenerate lists (corner rows [8, 24)): empty, one group only,
// groups back to back, a group last, no group at all, and -0 meeting +0
// in every lane.
Test(world_scatter, degenerate_lists) {
  static const int lists[][9] = {{0},
                                 {12, 13, 14, 15},
                                 {8, 9, 10, 11, 20, 21, 22, 23},
                                 {1, 3, 16, 17, 18, 19},
                                 {7, 0, 24, 30, 2},
                                 {5, 20, 21, 22, 23, 8, 9, 10, 11}};
  const int lens[] = {0, 4, 8, 6, 5, 9};
  double v[9], r0[32], s0[32], r1[32], s1[32];
  for (int t = 0; t < 9; ++t) v[t] = t % 3 == 0 ? -0.0 : t % 3 == 1 ? 0.0 : -1.5 * t;
  for (int c = 0; c < 6; ++c)
    for (int z = 0; z < 3; ++z) {
      const double zv = z == 0 ? -0.0 : z == 1 ? 2.0 : -3.0;
      for (int i = 0; i < 32; ++i) {
        r0[i] = r1[i] = i % 2 ? -0.0 : 0.0;
        s0[i] = s1[i] = 0.0;
      }
      ref_scatter(lens[c], lists[c], v, zv, r0, s0);
      cp_wi_scatter_runs(lens[c], lists[c], v, 8, 24, zv, r1, s1);
      cr_assert(memcmp(r0, r1, sizeof r0) == 0 && memcmp(s0, s1, sizeof s0) == 0,
                "case %d zv %g", c, zv);
    }
}
