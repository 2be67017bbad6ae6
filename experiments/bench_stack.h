/* The benchmarks' resting stack: n boxes of SX x SY x SZ m and 1 kg on a
 * table (a plane), friction mu, box i centred at SZ / 2 + SZ i, all sliding
 * at v0 along x -- the scene of experiments/bench_sim, experiments/
 * stack_steps and experiments/bench_system (one text, so their numbers are
 * of the same scene). */
#ifndef CP_EXPERIMENTS_BENCH_STACK_H
#define CP_EXPERIMENTS_BENCH_STACK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/scene.h"
#include "planner/sim/world.h"

#define BENCH_STACK_SX 0.2
#define BENCH_STACK_SY 0.2
#define BENCH_STACK_SZ 0.1

/* The scene's JSON text (malloc'd; exits on out of memory). */
static inline char *bench_stack_text(int n, double mu, double v0) {
  size_t cap = 4096 + 256 * (size_t)n;
  char *s = malloc(cap);
  if (!s) {
    fprintf(stderr, "out of memory\n");
    exit(1);
  }
  int k = snprintf(s, cap,
                   "{\"friction\": {\"default\": %g}, \"bodies\": [{\"name\": "
                   "\"table\", \"fixed\": true, \"shape\": {\"type\": "
                   "\"plane\", \"normal\": [0, 0, 1], \"offset\": 0}}",
                   mu);
  for (int i = 0; i < n; ++i)
    k += snprintf(s + k, cap - (size_t)k,
                  ", {\"name\": \"b%d\", \"mass\": 1, \"shape\": {\"type\": "
                  "\"box\", \"size\": [%g, %g, %g]}, \"position\": [0, 0, "
                  "%.17g], \"velocity\": [%g, 0, 0]}",
                  i, BENCH_STACK_SX, BENCH_STACK_SY, BENCH_STACK_SZ,
                  BENCH_STACK_SZ / 2 + BENCH_STACK_SZ * i, v0);
  snprintf(s + k, cap - (size_t)k, "]}");
  return s;
}

/* A world of that scene with options o (exits with a message naming `who`
 * when the scene or the world cannot be made). */
static inline cp_world *bench_stack_world(int n, double mu, double v0,
                                          const cp_world_options *o,
                                          const char *who) {
  char *text = bench_stack_text(n, mu, v0);
  cp_scene sc;
  cp_error err;
  if (cp_scene_parse(text, strlen(text), NULL, NULL, &sc, &err)) {
    fprintf(stderr, "%s: scene: %s: %s\n", who, err.where, err.msg);
    exit(1);
  }
  free(text);
  cp_world *w = NULL;
  if (cp_world_create(&sc, o, &w, &err) != CP_WORLD_OK) {
    fprintf(stderr, "%s: world: %s: %s\n", who, err.where, err.msg);
    exit(1);
  }
  cp_scene_free(&sc);
  return w;
}

#endif
