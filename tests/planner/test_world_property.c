// The randomized property test of issue 20: random strong-actuation scenes
// (random joint positions within the limits, random efforts up to the
// URDF's effort limits) on the Panda, the Allegro hand and the bundled
// chains, stepped 0.5 s at dt 5 ms (100 steps). Every step either passes
// the independent per-step check (planner/sim/stepcheck.h) -- and then holds
// the joint limits and gives finite numbers -- or fails with a status that
// names what failed; never an "ok" step that was not checked.
// Deterministic: sample i draws from a generator seeded with i.
// No Criterion .timeout in this file: Criterion 2.4's runner leaks under
// LeakSanitizer when tests with timeouts run; meson's timeout for the
// executable (tests/planner/meson.build) bounds the run instead.
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/chain.h"
#include "planner/sim/world.h"

#define SAMPLES 1000
#define STEPS 100

static uint64_t rng_next(uint64_t *s) { // splitmix64
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static double uni(uint64_t *s, double a, double b) {
  return a + (b - a) * (double)(rng_next(s) >> 11) * 0x1.0p-53;
}

static void load(const char *dir, const char *rel, cp_scene *sc) {
  char path[1024];
  snprintf(path, sizeof path, "%s/%s", dir, rel);
  cp_error err;
  cp_error_clear(&err);
  cr_assert_eq(cp_scene_load(path, NULL, sc, &err), 0, "%s: %s", path, err.msg);
}

// Random positions (inside the limits; unlimited joints within 1 rad of
// where they were), zero velocities, efforts uniform in +-(effort limit,
// or 5 when the file gives none); every joint effort-driven.
static void randomize(cp_scene *sc, uint64_t *rs) {
  for (int m = 0; m < sc->n_manips; ++m) {
    cp_chain *c = &sc->manips[m];
    for (int k = 0; k < c->n; ++k) {
      cp_joint *j = &c->joints[k];
      if (j->is_mimic) continue;
      j->position = j->has_limits ? uni(rs, j->lower, j->upper)
                                  : j->position + uni(rs, -1, 1);
      j->velocity = 0;
      j->drive = CP_DRIVE_EFFORT;
      j->acceleration = 0;
      const double lim = j->effort_limit > 0 ? j->effort_limit : 5.0;
      j->effort = uni(rs, -lim, lim);
    }
    cp_chain_apply_mimic(c);
  }
}

static int names_something(const char *m) {
  return strstr(m, "body \"") || strstr(m, "joint \"") || strstr(m, "contact \"") ||
         strstr(m, "\" and \"") || strstr(m, "whole scene");
}

Test(world_property, random_strong_actuation) {
  const char *root = getenv("CP_SOURCE_ROOT"), *data = getenv("CP_TEST_DATA");
  cr_assert(root && data, "run with meson test");
  char scenes_dir[1024];
  snprintf(scenes_dir, sizeof scenes_dir, "%s/models/scenes", root);
  struct { const char *dir, *rel; } src[] = {
      {data, "robots/panda_squeeze.json"}, {data, "robots/allegro_cube.json"},
      {scenes_dir, "urdf_finger_push.json"}, {scenes_dir, "gripper_box.json"},
      {scenes_dir, "grasp_hold.json"},       {scenes_dir, "plan_push.json"},
      {scenes_dir, "plan_grasp.json"}};
  const int ns = (int)(sizeof src / sizeof src[0]);
  cp_scene base[8];
  for (int i = 0; i < ns; ++i) load(src[i].dir, src[i].rel, &base[i]);
  long steps = 0, checked = 0, retried = 0, refused = 0, rejected = 0, done = 0;
  long by_status[16] = {0};
  for (uint64_t i = 0; done < SAMPLES; ++i) {
    cr_assert(i < 4 * SAMPLES, "too many starts rejected (%ld)", rejected);
    uint64_t rs = i;
    const int which = (int)(i % (uint64_t)ns);
    cp_scene sc;
    cr_assert_eq(cp_scene_copy(&base[which], &sc), 0);
    randomize(&sc, &rs);
    cp_world_options o = cp_world_defaults();
    o.dt = 5e-3;
    o.stepper = rng_next(&rs) % 4 == 0 ? CP_STEPPER_VELOCITY : CP_STEPPER_ACCELERATION;
    cp_world *w;
    cp_error err;
    cp_error_clear(&err);
    cp_world_status cs = cp_world_create(&sc, &o, &w, &err);
    cp_scene_free(&sc);
    if (cs == CP_WORLD_BAD_INPUT) { // a random pose overlapping something
      ++rejected;
      continue;
    }
    cr_assert_eq(cs, CP_WORLD_OK, "%s", err.msg);
    ++done;
    const int n = cp_world_state_size(w), nl = cp_world_joint_count(w);
    double *x0 = malloc(sizeof(double) * (size_t)n), *x = malloc(sizeof(double) * (size_t)n);
    const cp_scene *ws = cp_world_scene(w);
    for (int k = 0; k < STEPS; ++k) {
      cp_world_get_state(w, x0);
      cp_step_info info;
      cp_world_status st = cp_world_step(w, &info);
      ++steps;
      if (st != CP_WORLD_OK) {
        const char *m = cp_world_message(w);
        cr_assert(st == CP_WORLD_CHECK_FAILED || st == CP_WORLD_PENETRATION ||
                      st == CP_WORLD_NONFINITE || st == CP_WORLD_SOLVER_FAILED ||
                      st == CP_WORLD_JOINT_LIMIT,
                  "sample %lu (%s) step %d: %s: %s", (unsigned long)i, src[which].rel, k,
                  cp_world_status_name(st), m);
        cr_assert(names_something(m), "sample %lu step %d: the message names nothing: %s",
                  (unsigned long)i, k, m);
        ++refused;
        ++by_status[st];
        if (getenv("CP_PROPERTY_VERBOSE"))
          fprintf(stderr, "sample %lu (%s, %s) step %d: %s\n", (unsigned long)i,
                  src[which].rel, cp_stepper_name(o.stepper), k, m);
        break;
      }
      cr_assert_eq(info.checked, 1, "sample %lu step %d: ok but not checked",
                   (unsigned long)i, k);
      checked += info.checked;
      retried += info.retried;
      cp_world_get_state(w, x);
      for (int q = 0; q < n; ++q)
        cr_assert(isfinite(x[q]), "sample %lu step %d: state[%d] = %g", (unsigned long)i, k,
                  q, x[q]);
      // Limits held: no joint deeper past a limit than it started, + 1e-9.
      for (int r = 0, q = n - 2 * nl; r < nl; ++r, q += 2) {
        int mm = 0, kk = r;
        while (kk >= 0 && mm < ws->n_manips) {
          int cnt = 0;
          for (int t = 0; t < ws->manips[mm].n; ++t) cnt += !ws->manips[mm].joints[t].is_mimic;
          if (kk < cnt) break;
          kk -= cnt;
          ++mm;
        }
        const cp_chain *c = &ws->manips[mm];
        int t = 0;
        for (int seen = -1; t < c->n; ++t)
          if (!c->joints[t].is_mimic && ++seen == kk) break;
        const cp_joint *j = &c->joints[t];
        if (!j->has_limits) continue;
        const double b0 = fmax(j->lower - x0[q], x0[q] - j->upper),
                     b1 = fmax(j->lower - x[q], x[q] - j->upper);
        cr_assert(b1 <= fmax(b0, 0) + 1e-9,
                  "sample %lu (%s) step %d: joint %s %.12g beyond [%g, %g] by %g",
                  (unsigned long)i, src[which].rel, k, j->name, x[q], j->lower, j->upper, b1);
      }
    }
    free(x0);
    free(x);
    cp_world_destroy(w);
  }
  for (int i = 0; i < ns; ++i) cp_scene_free(&base[i]);
  fprintf(stderr,
          "world_property: %d scenes (%ld random starts rejected as overlapping), %ld steps, "
          "%ld checked, %ld taken again, %ld runs refused (check_failed %ld, penetration "
          "%ld, nonfinite %ld, solver_failed %ld, joint_limit %ld)\n",
          SAMPLES, rejected, steps, checked, retried, refused, by_status[CP_WORLD_CHECK_FAILED],
          by_status[CP_WORLD_PENETRATION], by_status[CP_WORLD_NONFINITE],
          by_status[CP_WORLD_SOLVER_FAILED], by_status[CP_WORLD_JOINT_LIMIT]);
  cr_assert(checked > steps / 2, "most steps must pass: %ld of %ld", checked, steps);
}
