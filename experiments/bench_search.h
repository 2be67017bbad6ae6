/* A threaded search run for the parallel benchmarks (bench_threads,
 * bench_parallel): one search of a task with a node limit and no time
 * limit, at search.batch `batch`, simulated on `threads` threads, into a
 * fresh database. */
#ifndef CP_EXPERIMENTS_BENCH_SEARCH_H
#define CP_EXPERIMENTS_BENCH_SEARCH_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "experiments/bench_util.h"
#include "planner/plan/plan.h"
#include "planner/search/task.h"
#include "planner/store/store.h"

typedef struct bench_spec {
  const char *task, *method;
  long nodes;
  int batch;
} bench_spec;

/* Runs sp on task with `threads` threads into the database db (a path
 * that does not exist yet; the caller removes it): the result, the
 * calling thread's CPU seconds (*cpu: all of a 1-thread run) and the
 * simulation's (*sim, cp_plan_world_seconds). 0, or -1 said on stderr
 * (prefixed by who). */
static inline int bench_search_run(const char *who, const cp_task *task,
                                   const bench_spec *sp, int threads,
                                   const char *db, cp_plan_result *r,
                                   double *cpu, double *sim) {
  cp_store *st;
  char msg[600];
  if (cp_store_open(db, 0, &st, msg, sizeof msg)) {
    fprintf(stderr, "%s: %s\n", who, msg);
    return -1;
  }
  cp_plan_options o = cp_plan_defaults();
  o.method = sp->method;
  o.max_nodes = sp->nodes;
  o.max_seconds = 1e6;
  o.search_batch = sp->batch;
  cp_error err;
  cp_plan_world *pw = NULL;
  cp_plan_status s = CP_PLAN_FAILED;
  if (!cp_plan_world_create(task, 1, &pw, &err) &&
      !cp_plan_world_set_threads(pw, threads, &err)) {
    o.world_options = cp_plan_world_options(pw);
    double c0 = bench_now();
    s = cp_plan_search(st, task, cp_plan_world_problem(pw),
                       cp_plan_world_start(pw), &o, r, &err);
    *cpu = bench_now() - c0;
    *sim = cp_plan_world_seconds(pw);
  }
  cp_plan_world_destroy(pw);
  cp_store_close(st);
  if (s != CP_PLAN_SOLVED && s != CP_PLAN_LIMIT) {
    fprintf(stderr, "%s: %s: %s\n", who, sp->task, err.msg);
    return -1;
  }
  return 0;
}

/* A fresh database path in /tmp (into path, 64 bytes); 0 or -1. */
static inline int bench_temp_db(char *path, const char *prefix) {
  snprintf(path, 64, "/tmp/%s_XXXXXX", prefix);
  int fd = mkstemp(path);
  if (fd < 0) return -1;
  close(fd);
  bench_remove_db(path);
  return 0;
}

#endif
