#include "wtest.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support.h"

void wt_scene(const char *text, cp_scene *sc) {
  cp_error err = {0};
  int rc = cp_scene_parse(text, strlen(text), NULL, NULL, sc, &err);
  cr_assert_eq(rc, 0, "scene: %s: %s", err.where, err.msg);
}

void wt_scene_file(const char *rel, cp_scene *sc) {
  char path[1024];
  snprintf(path, sizeof path, "%s/models/scenes/%s", getenv("CP_SOURCE_ROOT"),
           rel);
  cp_error err = {0};
  int rc = cp_scene_load(path, NULL, sc, &err);
  cr_assert_eq(rc, 0, "%s: %s: %s", rel, err.where, err.msg);
}

static cp_world *world_of(cp_scene *sc, cp_stepper stepper, double dt) {
  cp_world_options o = cp_world_defaults();
  o.stepper = stepper;
  o.dt = dt;
  cp_world *w = NULL;
  cp_error err = {0};
  cp_world_status st = cp_world_create(sc, &o, &w, &err);
  cp_scene_free(sc);
  cr_assert_eq(st, CP_WORLD_OK, "world: %s: %s", err.where, err.msg);
  return w;
}

cp_world *wt_world(const char *text, cp_stepper stepper, double dt) {
  cp_scene sc;
  wt_scene(text, &sc);
  return world_of(&sc, stepper, dt);
}

cp_world *wt_world_file(const char *rel, cp_stepper stepper, double dt) {
  cp_scene sc;
  wt_scene_file(rel, &sc);
  return world_of(&sc, stepper, dt);
}

int wt_run(cp_world *w, int n, long *pivots) {
  int fb = 0;
  for (int i = 0; i < n; ++i) {
    cp_step_info info;
    cp_world_status st = cp_world_step(w, &info);
    cr_assert_eq(st, CP_WORLD_OK, "step %d: %s: %s", i,
                 cp_world_status_name(st), cp_world_message(w));
    fb += info.fallback;
    if (pivots) *pivots += info.pivots;
  }
  return fb;
}

int wt_body(const cp_world *w, const char *name) {
  const cp_scene *s = cp_world_scene(w);
  for (int i = 0, k = 0; i < s->n_bodies; ++i) {
    if (s->bodies[i].fixed) continue;
    if (!strcmp(s->bodies[i].name, name)) return 13 * k;
    ++k;
  }
  cr_assert_fail("no free body %s", name);
  return -1;
}

const char *wt_box(char *buf, size_t n, const char *name, double m, double sx,
                   double sy, double sz, double x, double y, double z,
                   double vx) {
  snprintf(buf, n,
           "{\"name\": \"%s\", \"mass\": %.17g, \"shape\": {\"type\": \"box\", "
           "\"size\": [%.17g, %.17g, %.17g]}, \"position\": [%.17g, %.17g, "
           "%.17g], \"velocity\": [%.17g, 0, 0]}",
           name, m, sx, sy, sz, x, y, z, vx);
  return buf;
}
