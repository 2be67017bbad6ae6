/// \file
/// Growing arrays: one helper for the capacity-doubling arrays of models/ and
/// planner/ (contact lists, mesh buffers, the simulator's per-step lists).
#ifndef CP_MODELS_GROW_H
#define CP_MODELS_GROW_H

#include <stdlib.h>

/// Makes *p (capacity *cap elements of elem bytes) hold at least need
/// elements, doubling from 16; the contents are kept. Returns 0, or -1 when
/// out of memory (*p and *cap then unchanged).
static inline int cp_grow(void **p, int *cap, int need, size_t elem) {
  if (need <= *cap) return 0;
  int n = *cap > 0 ? *cap : 16;
  while (n < need) n *= 2;
  void *q = realloc(*p, (size_t)n * elem);
  if (!q) return -1;
  *p = q;
  *cap = n;
  return 0;
}

#endif
