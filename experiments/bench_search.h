/* A threaded search run for the parallel benchmarks (bench_threads,
 * bench_parallel, bench_cpu_share): one search of a task with a node
 * limit and no time limit, at search.batch `batch`, simulated on
 * `threads` threads, into a fresh database; and the digest of its tree. */
#ifndef CP_EXPERIMENTS_BENCH_SEARCH_H
#define CP_EXPERIMENTS_BENCH_SEARCH_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <sqlite3.h>
#include <stdint.h>

#include "experiments/bench_util.h"
#include "models/hash.h"
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

/* FNV-1a over every node row of run 1 in db (the columns the tests
 * compare, pivots aside) into *h, the row count into *n: the parallel
 * benchmarks compare these to tell the same tree. 0, or -1 when the
 * database cannot be read. */
static inline int bench_run_digest(const char *db, uint64_t *h, long *n) {
  sqlite3 *s;
  sqlite3_stmt *q = NULL;
  int rc = -1;
  if (sqlite3_open_v2(db, &s, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
      sqlite3_prepare_v2(
          s, "SELECT id, ifnull(parent, -1), depth, ifnull(action, -1), flags,"
             " steps, lcp_solves, fallbacks, warm_steps, time, cost,"
             " goal_distance, outcome, ifnull(message, ''), state,"
             " ifnull(warm, x'') FROM nodes WHERE search_id = 1 ORDER BY id",
          -1, &q, NULL) == SQLITE_OK) {
    *h = CP_FNV_OFFSET;
    *n = 0;
    while (sqlite3_step(q) == SQLITE_ROW) {
      for (int k = 0; k < 16; ++k) {
        int type = sqlite3_column_type(q, k);
        if (type == SQLITE_INTEGER || type == SQLITE_FLOAT) {
          double d = sqlite3_column_double(q, k);
          long long v = sqlite3_column_int64(q, k);
          *h = type == SQLITE_FLOAT ? cp_fnv_bytes(*h, &d, sizeof d)
                                    : cp_fnv_bytes(*h, &v, sizeof v);
        } else {
          const void *p = sqlite3_column_blob(q, k);
          *h = cp_fnv_bytes(*h, p, (size_t)sqlite3_column_bytes(q, k));
        }
      }
      ++*n;
    }
    rc = 0;
  }
  sqlite3_finalize(q);
  sqlite3_close(s);
  return rc;
}

#endif
