/* stack_steps: steps a resting stack of N boxes (0.2 x 0.2 x 0.1 m, 1 kg,
 * mu 0.5) on a table with cp_world_step at dt = 5 ms, and prints the
 * thread CPU time per step, the Lemke pivots and a hash of the final poses
 * (equal hashes: the same trajectory, bit for bit). Made to be counted:
 *   valgrind --tool=callgrind ./build/experiments/stack_steps 1 2000
 * instructions per step of a function = the difference of its inclusive
 * count between two runs of different lengths, divided by the difference
 * of their steps (so that one-time set-up such as ODE's initialisation
 * drops out). Results: experiments/results/contactgen_ir.md.
 * Usage: stack_steps N [steps] (default 2000). With STACK_STEPS_DENSE=1
 * in the environment the warm bases are solved on dense columns only
 * (planner/sim/warmsparse.c off: the comparison of the two). With
 * STACK_STEPS_VELOCITY=1 the velocity stepper takes the steps (the
 * acceleration stepper otherwise: the default). */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/bench_stack.h"
#include "models/hash.h"
#include "experiments/bench_util.h"
#include "planner/sim/world_impl.h"

int main(int argc, char **argv) {
  int n = argc > 1 ? atoi(argv[1]) : 1;
  int steps = argc > 2 ? atoi(argv[2]) : 2000;
  const int check = !(argc > 3 && !strcmp(argv[3], "nocheck"));
  if (n < 1 || n > 200 || steps < 1 || (argc > 3 && check)) {
    fprintf(stderr, "usage: stack_steps N(1..200) [steps [nocheck]]\n");
    return 2;
  }
  cp_world_options o = cp_world_defaults();
  o.dt = 0.005;
  o.check = check; // nocheck: without the per-step check (its cost)
  const char *vel = getenv("STACK_STEPS_VELOCITY");
  if (vel && !strcmp(vel, "1")) o.stepper = CP_STEPPER_VELOCITY;
  cp_world *w = bench_stack_world(n, 0.5, 0, &o, "stack_steps");
  const char *dense = getenv("STACK_STEPS_DENSE");
  if (dense && !strcmp(dense, "1")) cp_wi_sparse_enable(w, 0);
  long pivots = 0;
  double t0 = bench_now();
  for (int j = 0; j < steps; ++j) {
    cp_step_info si;
    memset(&si, 0, sizeof si);
    if (cp_world_step(w, &si)) {
      fprintf(stderr, "stack_steps: step %d failed\n", j);
      return 1;
    }
    pivots += si.pivots;
  }
  double t = bench_now() - t0;
  const cp_scene *ws = cp_world_scene(w);
  uint64_t h = CP_FNV_OFFSET; /* FNV-1a over the bytes of the poses */
  for (int i = 0; i < ws->n_bodies; ++i) {
    h = cp_fnv_bytes(h, ws->bodies[i].x, sizeof ws->bodies[i].x);
    h = cp_fnv_bytes(h, ws->bodies[i].q, sizeof ws->bodies[i].q);
  }
  printf("boxes %d steps %d us/step %.2f pivots %ld hash %016llx\n", n, steps,
         1e6 * t / steps, pivots, (unsigned long long)h);
  cp_world_destroy(w);
  return 0;
}
