/* The system build's per-step cost (docs/system-build.md): resting stacks of
 * 1, 3 and 10 boxes on a plane, as experiments/bench_sim steps them.
 *
 *   bench_system [REPS]      a table: per stack, the CPU time of one
 *                            cp_system_build_ws (the simulator's, with a
 *                            workspace) and of one cp_system_build (plain:
 *                            allocates and frees), measured side by side in
 *                            alternating rounds, their ratio, and one
 *                            cp_world_step for scale. REPS builds per round
 *                            for 1 box (default 20000; fewer for more boxes).
 * (experiments/stack_steps steps a stack for valgrind --tool=callgrind.)
 *
 * The builds use the scene of the world after 200 steps (contacts generated
 * by the simulator, velocities of a stack at rest: tiny, not zero). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/bench_stack.h"
#include "experiments/bench_util.h"
#include "models/scene.h"
#include "models/system.h"
#include "planner/sim/world.h"

// The benchmarks' stack at rest (experiments/bench_stack.h), mu 0.5,
// stepped at 5 ms.
static cp_world *stack_world(int n) {
  cp_world_options o = cp_world_defaults();
  o.dt = 0.005;
  return bench_stack_world(n, 0.5, 0, &o, "bench_system");
}

static void step(cp_world *w, int steps) {
  for (int j = 0; j < steps; ++j) {
    cp_step_info si;
    memset(&si, 0, sizeof si);
    if (cp_world_step(w, &si) != CP_WORLD_OK) {
      fprintf(stderr, "bench_system: %s\n", cp_world_message(w));
      exit(1);
    }
  }
}

static void fail_build(const cp_error *err) {
  fprintf(stderr, "bench_system: %s\n", err->msg);
  exit(1);
}

int main(int argc, char **argv) {
  int reps = argc > 1 ? atoi(argv[1]) : 20000;
  if (reps < 1 || argc > 2) {
    fprintf(stderr, "usage: bench_system [REPS]\n");
    return 2;
  }
  printf("| boxes | contacts | n_u | build_ws (us) | build, plain (us) | "
         "ws / plain | world step (us) |\n|---|---|---|---|---|---|---|\n");
  static const int sizes[] = {1, 3, 10};
  for (int si = 0; si < 3; ++si) {
    int n = sizes[si], r = reps / (n * n) > 50 ? reps / (n * n) : 50;
    cp_world *w = stack_world(n);
    step(w, 200);
    cp_scene sc;
    if (cp_scene_copy(cp_world_scene(w), &sc)) return 1;
    cp_system_ws ws = {0};
    cp_system sys;
    cp_error err;
    double best_ws = 1e30, best_plain = 1e30, best_step = 1e30;
    int nu = 0;
    for (int round = 0; round < 5; ++round) {
      double t0 = bench_now();
      for (int i = 0; i < r; ++i) {
        if (cp_system_build_ws(&sc, &ws, &sys, &err)) fail_build(&err);
        nu = sys.n_u;
        cp_system_free(&sys);
      }
      double t1 = bench_now();
      for (int i = 0; i < r; ++i) {
        if (cp_system_build(&sc, &sys, &err)) fail_build(&err);
        cp_system_free(&sys);
      }
      double t2 = bench_now();
      int steps = r / 4 + 1;
      step(w, steps);
      double t3 = bench_now();
      if (t1 - t0 < best_ws) best_ws = t1 - t0;
      if (t2 - t1 < best_plain) best_plain = t2 - t1;
      if ((t3 - t2) / steps < best_step) best_step = (t3 - t2) / steps;
    }
    printf("| %d | %d | %d | %.3f | %.3f | %.2f | %.2f |\n", n, sc.n_contacts,
           nu, 1e6 * best_ws / r, 1e6 * best_plain / r, best_ws / best_plain,
           1e6 * best_step);
    cp_system_ws_free(&ws);
    cp_scene_free(&sc);
    cp_world_destroy(w);
  }
  return 0;
}
