/* Timing helpers shared by the benchmarks: thread CPU time (the machine is
 * shared, so wall time would count other processes) and medians. */
#ifndef CP_EXPERIMENTS_BENCH_UTIL_H
#define CP_EXPERIMENTS_BENCH_UTIL_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "models/clock.h"

/* Seconds of CPU time used by the calling thread. */
static inline double bench_now(void) { return cp_clock_thread_cpu(); }

/* Seconds of CPU time used by the whole process (all its threads). */
static inline double bench_process_cpu(void) {
  struct timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline int bench_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Removes an SQLite database file and its -wal and -shm side files. */
static inline void bench_remove_db(const char *db) {
  char side[1100];
  unlink(db);
  snprintf(side, sizeof side, "%s-wal", db);
  unlink(side);
  snprintf(side, sizeof side, "%s-shm", db);
  unlink(side);
}

/* Median of v[0..n) (sorts v). */
static inline double bench_median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, bench_cmp);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* argv[i] as a positive number (def when absent); anything else ("--help",
 * "0", "2s") prints the usage line and exits with status 2 instead of
 * running with a zero that fills the tables with infinities. */
static inline double bench_positive_arg(int argc, char **argv, int i, double def,
                                        const char *usage) {
  if (argc <= i) return def;
  char *end;
  double v = strtod(argv[i], &end);
  if (end == argv[i] || *end || !(v > 0) || !(v < 1e9)) {
    fprintf(stderr, "%s: bad argument '%s' (a positive number)\nusage: %s\n",
            argv[0], argv[i], usage);
    exit(2);
  }
  return v;
}

#endif
