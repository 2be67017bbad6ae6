/// \file
/// Two doubles as one SSE2 vector (GCC's vector extension), loaded and
/// stored unaligned (internal; not installed). Used where a short loop
/// takes its rows two at a time and each lane must get exactly the scalar
/// loop's multiplies and adds, in its order, so the same bits: the build
/// has no contraction into fused multiply-adds (-std=c17), and lanes are
/// independent. contact/dynamics.c (A's triangle updates) and
/// planner/sim/warmsparse.c (w = M z + q over corner rows) use it.
#ifndef CP_MODELS_VEC2_H
#define CP_MODELS_VEC2_H

#include <string.h>

typedef double v2d __attribute__((vector_size(16)));

static inline __attribute__((always_inline)) v2d ld2(const double *p) {
  v2d v;
  memcpy(&v, p, sizeof v);
  return v;
}

static inline __attribute__((always_inline)) void st2(double *p, v2d v) {
  memcpy(p, &v, sizeof v);
}

#endif
