// The simulator's basics: free fall, rest, API contracts (planner/world.h).
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/world.h"
#include "wtest.h"

static const char *table =
    "{\"name\": \"table\", \"fixed\": true, \"shape\": {\"type\": \"plane\", "
    "\"normal\": [0, 0, 1], \"offset\": 0}}";

static char *scene_of(const char *bodies, double mu) {
  char *s = malloc(8192);
  snprintf(s, 8192,
           "{\"gravity\": [0, 0, -9.81], \"friction\": {\"default\": %.17g}, "
           "\"bodies\": [%s]}",
           mu, bodies);
  return s;
}

static const cp_stepper dyn[2] = {CP_STEPPER_ACCELERATION, CP_STEPPER_VELOCITY};

// Free fall: v(t_k) = v0 + g t_k exactly to rounding at every step, and the
// position follows semi-implicit Euler: z_k = z0 + h sum_i v_i.
Test(world, free_fall_exact) {
  char b[512], bodies[1024];
  snprintf(bodies, sizeof bodies, "%s, %s", table,
           wt_box(b, sizeof b, "box", 2.0, 0.2, 0.1, 0.1, 0, 0, 5.0, 0.5));
  for (int s = 0; s < 2; ++s) {
    char *text = scene_of(bodies, 0.5);
    const double h = 1e-3;
    cp_world *w = wt_world(text, dyn[s], h);
    int ib = wt_body(w, "box");
    double x[64], z = 5.0, vz = 0.0;
    for (int k = 1; k <= 500; ++k) {
      cp_step_info info;
      cr_assert_eq(cp_world_step(w, &info), CP_WORLD_OK, "%s",
                   cp_world_message(w));
      cr_assert_eq(info.contacts, 0);
      cp_world_get_state(w, x);
      vz += h * -9.81;
      z += h * vz;
      double vexact = -9.81 * h * k;
      cr_assert(fabs(x[ib + 9] - vexact) <= 1e-12 * (1 + fabs(vexact)),
                "%s step %d: vz %.17g vs %.17g", cp_stepper_name(dyn[s]), k,
                x[ib + 9], vexact);
      cr_assert(fabs(x[ib + 7] - 0.5) <= 1e-15, "vx %.17g", x[ib + 7]);
      cr_assert(fabs(x[ib + 2] - z) <= 1e-12, "z %.17g vs %.17g", x[ib + 2], z);
    }
    cr_assert(fabs(cp_world_time(w) - 0.5) < 1e-12);
    cp_world_destroy(w);
    free(text);
  }
}

// A box at rest on a table stays at rest (both dynamic steppers).
Test(world, resting_box) {
  char b[512], bodies[1024];
  snprintf(bodies, sizeof bodies, "%s, %s", table,
           wt_box(b, sizeof b, "box", 1.0, 0.2, 0.1, 0.1, 0.3, -0.2, 0.05, 0));
  for (int s = 0; s < 2; ++s) {
    char *text = scene_of(bodies, 0.5);
    cp_world *w = wt_world(text, dyn[s], 1e-3);
    int ib = wt_body(w, "box");
    double x0[64], x[64];
    cp_world_get_state(w, x0);
    double e0 = cp_world_energy(w);
    cr_assert_eq(wt_run(w, 2000, NULL), 0);
    cp_world_get_state(w, x);
    double d = 0;
    for (int i = 0; i < 3; ++i) d = fmax(d, fabs(x[ib + i] - x0[ib + i]));
    cr_assert(d <= 1e-9, "%s: moved %g m", cp_stepper_name(dyn[s]), d);
    cr_assert(fabs(cp_world_energy(w) - e0) <= 1e-9);
    const cp_world_contact *c;
    int n = cp_world_contacts(w, &c);
    cr_assert_eq(n, 4);
    double fz = 0;
    for (int j = 0; j < n; ++j) fz += c[j].force[2];
    cr_assert(fabs(fz - 9.81) < 1e-6, "%s: normal force %.12g",
              cp_stepper_name(dyn[s]), fz);
    cp_world_destroy(w);
    free(text);
  }
}
