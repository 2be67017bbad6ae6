/* Timing helpers shared by the benchmarks: thread CPU time (the machine is
 * shared, so wall time would count other processes) and medians. */
#ifndef CP_EXPERIMENTS_BENCH_UTIL_H
#define CP_EXPERIMENTS_BENCH_UTIL_H

#include <stdlib.h>
#include <time.h>

/* Seconds of CPU time used by the calling thread. */
static inline double bench_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline int bench_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Median of v[0..n) (sorts v). */
static inline double bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, bench_cmp);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

#endif
