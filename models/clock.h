/// \file models/clock.h
/// complan's one clock: seconds as doubles from CLOCK_MONOTONIC (time
/// limits, deadlines, reported run times) and from the calling thread's CPU
/// clock (benchmarks and the per-expansion cost the planner stores). Never
/// the wall clock: it jumps when the system's time is set.
#ifndef CP_MODELS_CLOCK_H
#define CP_MODELS_CLOCK_H

#include <time.h>

/// Seconds on the monotonic clock (an arbitrary origin: use differences).
static inline double cp_clock_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/// CPU seconds used by the calling thread.
static inline double cp_clock_thread_cpu(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#endif
