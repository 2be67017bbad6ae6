/// \file planner/plan/spin.h
/// Inside planner/plan: waiting a short while by polling before sleeping
/// (pool.c's threads, mpi.c's ranks). A batch's serial part (the search
/// choosing the next jobs, merging, the store) takes tens of microseconds
/// and an expansion 0.1-2 ms; a worker that sleeps between jobs and is
/// woken by the scheduler (or naps between MPI polls) loses that much at
/// every job. Polling costs a core, so it is done only while every worker
/// of the machine has a core of its own and the machine is not loaded
/// (decided when the workers start). Not a public header.
#ifndef CP_PLANNER_PLAN_SPIN_H
#define CP_PLANNER_PLAN_SPIN_H

#include <stdio.h>
#include <unistd.h>

#include "models/clock.h"

/// How long a waiting worker polls before it sleeps (seconds).
#define CP_PLAN_SPIN_SECONDS 2e-3

/// A hint to the processor that the caller is polling.
static inline void cp_plan_spin_pause(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  __asm__ __volatile__("yield");
#endif
}

/// Polls done(ctx) until it returns nonzero or `seconds` pass (the clock
/// read every `every` polls, a power of two: a poll may be far cheaper
/// than reading the clock); returns whether done. pool.c's workers poll
/// for the next batch and its caller for a batch's last jobs, mpi.c's
/// ranks MPI_Iprobe, through this one loop.
static inline int cp_plan_spin_until(int (*done)(void *ctx), void *ctx,
                                     double seconds, unsigned every) {
  double until = cp_clock_now() + seconds;
  for (unsigned k = 1;; ++k) {
    if (done(ctx)) return 1;
    if (!(k & (every - 1)) && cp_clock_now() > until) return 0;
    cp_plan_spin_pause();
  }
}

/// Whether `workers` busy processes or threads on this machine may poll:
/// no more of them than cores online, and the machine not busy with other
/// work (the 1-minute load average, from /proc/loadavg where there is one,
/// below twice the cores). On a loaded machine a polling worker uses up
/// the share of a core that the one at work needs: 2 threads on push at
/// load 30 ran at 0.58-0.71x of 1 thread polling, 1.22-1.42x not.
static inline int cp_plan_spin_allowed(int workers) {
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  if (cores <= 0 || workers > cores) return 0;
  double load = 0;
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf", &load) != 1) load = 0;
    fclose(f);
  }
  return load < 2.0 * (double)cores;
}

#endif
