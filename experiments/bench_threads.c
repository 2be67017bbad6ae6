/* bench_threads: expansions per second of a threaded search (issue 27,
 * search.batch and --threads) at 1 and 2 threads, side by side.
 *
 * For each task and planner, the same search (a node limit, no time limit)
 * at search.batch B on 1 thread and on 2, alternated REPEATS times; printed:
 * the median wall-clock expansions per second of each, the speed-up, and
 * whether the two give the same search (nodes, expansions, LCP solves,
 * steps, plan cost: the runs are checked against each other in the same
 * process; tests/planner/test_threads.c checks every node row). Wall-clock
 * time is the measure here (two threads share the work), so on a machine
 * shared with other jobs the speed-up is a lower bound of what the code
 * gives; the 1-thread run's CPU time per expansion is printed for scale.
 * Load-independent: the 1-thread run's serial share (its CPU time outside
 * the simulations -- search, merge, store -- over its whole CPU time) and
 * the speed-up Amdahl's law allows 2 threads with it (an upper bound: it
 * ignores a batch's wait for its slowest expansion).
 *
 * Usage (from the source root): build/experiments/bench_threads [REPEATS]
 *   REPEATS: runs per thread count (default 3).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "experiments/bench_search.h"

/* OpenBLAS on one thread, as complan's CLI runs it. */
void openblas_set_num_threads(int n);

typedef bench_spec spec;

static const spec specs[] = {
    {"planner/tasks/push.json", "sst", 3000, 4},
    {"planner/tasks/push.json", "sst", 3000, 16},
    {"planner/tasks/push.json", "rrt", 3000, 4},
    {"planner/tasks/grasp_lift.json", "sst", 1500, 4},
    {"planner/tasks/bench/cmgmp-bookshelf.json", "sst", 1000, 4},
};

static int one(const cp_task *task, const spec *sp, int threads,
               cp_plan_result *r, double *cpu, double *sim) {
  char db[64];
  if (bench_temp_db(db, "bench_threads")) return -1;
  int rc = bench_search_run("bench_threads", task, sp, threads, db, r, cpu,
                            sim);
  bench_remove_db(db);
  return rc;
}

static int same(const cp_plan_result *a, const cp_plan_result *b) {
  return a->nodes == b->nodes && a->stats.expansions == b->stats.expansions &&
         a->stats.lcp_solves == b->stats.lcp_solves &&
         a->stats.steps == b->stats.steps &&
         (a->cost == b->cost || (isnan(a->cost) && isnan(b->cost)));
}

int main(int argc, char **argv) {
  int repeats = (int)bench_positive_arg(argc, argv, 1, 3,
                                        "bench_threads [REPEATS]");
  openblas_set_num_threads(1);
  printf("| task | planner | batch | nodes | expansions/s, 1 thread | "
         "2 threads | speed-up | same search | CPU ms/expansion (1 thread) "
         "| serial share | Amdahl bound, 2 threads |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (size_t k = 0; k < sizeof specs / sizeof *specs; ++k) {
    const spec *sp = &specs[k];
    cp_task task;
    cp_error err;
    if (cp_task_load(sp->task, &task, &err)) {
      fprintf(stderr, "bench_threads: %s: %s: %s\n", sp->task, err.where,
              err.msg);
      return 1;
    }
    double rate[2][16], cpu1[16], serial[16];
    cp_plan_result ref, r;
    memset(&ref, 0, sizeof ref);
    int ok = 1;
    for (int i = 0; i < repeats && i < 16; ++i)
      for (int t = 0; t < 2; ++t) {
        double cpu, sim;
        if (one(&task, sp, t + 1, &r, &cpu, &sim)) return 1;
        rate[t][i] = (double)r.stats.expansions / r.session_seconds;
        if (t == 0) {
          cpu1[i] = cpu / (double)r.stats.expansions;
          serial[i] = 1 - sim / cpu;
        }
        if (i == 0 && t == 0) ref = r;
        else ok &= same(&ref, &r);
      }
    int n = repeats < 16 ? repeats : 16;
    double r1 = bench_median(rate[0], n), r2 = bench_median(rate[1], n);
    double sf = bench_median(serial, n);
    printf("| %s | %s | %d | %ld | %.0f | %.0f | %.2fx | %s | %.3f | %.1f%% "
           "| %.2fx |\n",
           strrchr(sp->task, '/') + 1, sp->method, sp->batch, ref.nodes, r1,
           r2, r2 / r1, ok ? "yes" : "NO", 1e3 * bench_median(cpu1, n),
           100 * sf, 1 / (sf + (1 - sf) / 2));
    fflush(stdout);
    cp_task_free(&task);
  }
  return 0;
}
