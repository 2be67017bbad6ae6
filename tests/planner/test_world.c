// The simulator's basics: free fall, rest, API contracts (planner/sim/world.h).
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "planner/sim/simulate.h"
#include "planner/sim/world.h"
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
    // No energy made; the compliance (docs/simulate.md) lets the box settle
    // into the table by less than the drift tolerance (1e-9 m), m g 1e-9 J.
    cr_assert(cp_world_energy(w) <= e0 + 1e-9, "%s: energy rose by %g J",
              cp_stepper_name(dyn[s]), cp_world_energy(w) - e0);
    cr_assert(cp_world_energy(w) >= e0 - 9.81 * 1e-9 - 1e-9,
              "%s: energy fell by %g J", cp_stepper_name(dyn[s]),
              e0 - cp_world_energy(w));
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

// Joints are found by "manipulator/joint" names of any length (a 300-byte
// joint name was cut by a 256-byte buffer, so its cut prefix matched and the
// whole name did not).
Test(world, joint_index_long_names) {
  char jn[301], text[2048], full[400];
  memset(jn, 'j', 300);
  jn[300] = '\0';
  snprintf(text, sizeof text,
           "{\"bodies\": [], \"manipulators\": [{\"name\": \"arm\", \"joints\": "
           "[{\"name\": \"%s\", \"type\": \"revolute\", \"axis\": [0, 1, 0], "
           "\"link\": {\"name\": \"l\", \"mass\": 1, \"com\": [0, 0, 0.1], "
           "\"inertia\": [[0.001, 0, 0], [0, 0.001, 0], [0, 0, 0.001]]}}]}]}",
           jn);
  cp_world *w = wt_world(text, CP_STEPPER_ACCELERATION, 1e-3);
  snprintf(full, sizeof full, "arm/%s", jn);
  cr_assert_eq(cp_world_joint_index(w, full), 0);
  full[255] = '\0'; // the prefix the old buffer kept
  cr_assert_eq(cp_world_joint_index(w, full), -1);
  cr_assert_eq(cp_world_joint_index(w, "arm"), -1);
  cr_assert_eq(cp_world_joint_index(w, "ar/j"), -1);
  cp_world_destroy(w);
}

// A one-link pendulum falling onto its joint limit: the limit is a
// unilateral constraint in the LCP, so the joint stops at it (to the drift
// tolerance) instead of passing it, and stays there.
Test(world, joint_limit_stops) {
  const char *text =
      "{\"bodies\": [], \"manipulators\": [{\"name\": \"arm\", \"joints\": "
      "[{\"name\": \"j\", \"type\": \"revolute\", \"axis\": [0, 1, 0], "
      "\"position\": 0.1, \"limits\": {\"lower\": -0.5, \"upper\": 0.5}, "
      "\"link\": {\"name\": \"l\", \"mass\": 1, \"com\": [0, 0, 0.1], "
      "\"inertia\": [[0.001, 0, 0], [0, 0.001, 0], [0, 0, 0.001]]}}]}]}";
  for (int s = 0; s < 2; ++s) {
    cp_world *w = wt_world(text, dyn[s], 1e-3);
    cr_assert_eq(cp_world_joint_count(w), 1);
    cr_assert_eq(cp_world_joint_index(w, "arm/j"), 0);
    cr_assert_eq(cp_world_joint_index(w, "arm/k"), -1);
    double x[2], top = -1;
    for (int k = 0; k < 2000; ++k) {
      wt_run(w, 1, NULL);
      cp_world_get_state(w, x);
      top = fmax(top, x[0]);
    }
    cr_assert(top <= 0.5 + 1e-6, "%s: passed the limit: %.9g",
              cp_stepper_name(dyn[s]), top);
    cr_assert(fabs(x[0] - 0.5) <= 1e-6 && fabs(x[1]) <= 1e-6,
              "%s: q %.9g qd %g", cp_stepper_name(dyn[s]), x[0], x[1]);
    // An effort pulling it back off the limit frees it.
    cr_assert_eq(cp_world_set_effort(w, 0, -5.0), CP_WORLD_OK);
    wt_run(w, 100, NULL);
    cp_world_get_state(w, x);
    cr_assert(x[0] < 0.49, "%s: q %.9g", cp_stepper_name(dyn[s]), x[0]);
    cr_assert_eq(cp_world_set_effort(w, 3, 1.0), CP_WORLD_BAD_INPUT);
    cr_assert_eq(cp_world_set_effort(w, 0, NAN), CP_WORLD_NONFINITE);
    cp_world_destroy(w);
  }
}

// set_state / get_state round trip, checks on bad states, warm blobs, and
// an explicit contact list or a bad dt refused at creation.
Test(world, state_api_and_errors) {
  char b[512], bodies[1024];
  snprintf(bodies, sizeof bodies, "%s, %s", table,
           wt_box(b, sizeof b, "box", 1.0, 0.2, 0.1, 0.1, 0, 0, 0.05, 0));
  char *text = scene_of(bodies, 0.5);
  cp_world *w = wt_world(text, CP_STEPPER_ACCELERATION, 1e-3);
  cr_assert_eq(cp_world_state_size(w), 13);
  double x[13], y[13];
  wt_run(w, 10, NULL);
  cp_world_get_state(w, x);
  cr_assert(cp_world_warm_size(w) > 0);
  size_t ws = cp_world_warm_size(w);
  void *blob = malloc(ws);
  cp_world_warm_get(w, blob, ws);
  uint64_t h0 = cp_world_hash(w);
  memcpy(y, x, sizeof y);
  y[3] = 2.0; // not a unit quaternion
  cr_assert_eq(cp_world_set_state(w, y), CP_WORLD_BAD_INPUT);
  cr_assert(strstr(cp_world_message(w), "box") != NULL);
  y[3] = NAN;
  cr_assert_eq(cp_world_set_state(w, y), CP_WORLD_NONFINITE);
  cr_assert_eq(cp_world_hash(w), h0); // refused: nothing changed
  cr_assert_eq(cp_world_set_state(w, x), CP_WORLD_OK);
  cp_world_get_state(w, y);
  cr_assert_eq(memcmp(x, y, sizeof x), 0);
  cp_world_warm_set(w, blob, ws);
  cp_step_info info;
  cr_assert_eq(cp_world_step(w, &info), CP_WORLD_OK);
  cr_assert_eq(info.warm_started, 1);
  cr_assert_eq(info.pivots, 0);
  cp_world_warm_set(w, blob, ws - 1); // ignored
  free(blob);
  cp_world_destroy(w);

  cp_scene sc;
  wt_scene(text, &sc);
  cp_world_options o = cp_world_defaults();
  o.dt = 0;
  cp_error err;
  cr_assert_eq(cp_world_create(&sc, &o, &w, &err), CP_WORLD_BAD_INPUT);
  cr_assert_null(w);
  cr_assert_str_eq(err.where, "dt");
  o.dt = NAN;
  cr_assert_eq(cp_world_create(&sc, &o, &w, &err), CP_WORLD_BAD_INPUT);
  sc.contacts_auto = 0;
  o = cp_world_defaults();
  cr_assert_eq(cp_world_create(&sc, &o, &w, &err), CP_WORLD_BAD_INPUT);
  cr_assert(strstr(err.msg, "explicit contact list") != NULL);
  cp_scene_free(&sc);
  free(text);
}

// The scene's "restitution" table: checked like friction, resolved per pair.
Test(world, restitution_key) {
  cp_scene sc;
  cp_error err;
  const char *bad =
      "{\"restitution\": {\"default\": 1.5}, \"bodies\": []}";
  cr_assert_eq(cp_scene_parse(bad, strlen(bad), NULL, NULL, &sc, &err), -1);
  cr_assert_str_eq(err.where, "restitution.default");
  const char *bad2 =
      "{\"restitution\": {\"pairs\": [{\"a\": \"box\", \"b\": \"nope\", "
      "\"e\": 0.5}]}, \"bodies\": [{\"name\": \"box\", \"mass\": 1, "
      "\"shape\": {\"type\": \"sphere\", \"radius\": 0.1}}]}";
  cr_assert_eq(cp_scene_parse(bad2, strlen(bad2), NULL, NULL, &sc, &err), -1);
  cr_assert_str_eq(err.where, "restitution.pairs[0].b");
  char b[512], bodies[1024], text[4096];
  snprintf(bodies, sizeof bodies, "%s, %s", table,
           wt_box(b, sizeof b, "box", 1.0, 0.2, 0.1, 0.1, 0, 0, 0.05, 0));
  snprintf(text, sizeof text,
           "{\"restitution\": {\"default\": 0.25, \"pairs\": [{\"a\": "
           "\"box\", \"b\": \"table\", \"e\": 0.75}]}, \"bodies\": [%s]}",
           bodies);
  wt_scene(text, &sc);
  cr_assert_eq(sc.n_contacts, 4);
  for (int j = 0; j < 4; ++j) cr_assert_eq(sc.contacts[j].restitution, 0.75);
  cp_ref a, t;
  cr_assert_eq(cp_scene_find(&sc, "box", &a), 0);
  cr_assert_eq(cp_scene_find(&sc, "table", &t), 0);
  cr_assert_eq(cp_scene_restitution(&sc, t, a), 0.75);
  cr_assert_eq(cp_scene_restitution(&sc, a, a), 0.25); // no pair: default
  cp_scene copy;
  cr_assert_eq(cp_scene_copy(&sc, &copy), 0);
  cr_assert_eq(copy.n_epairs, 1);
  cr_assert_str_eq(copy.epairs[0].b, "table");
  cp_scene_free(&copy);
  cp_scene_free(&sc);
}

// A 1 kg box resting on the table (mu 0.5), parsed into sc.
static void resting_box(cp_scene *sc) {
  char b[512], bodies[1024];
  snprintf(bodies, sizeof bodies, "%s, %s", table,
           wt_box(b, sizeof b, "box", 1.0, 0.2, 0.2, 0.1, 0, 0, 0.05, 0));
  char *text = scene_of(bodies, 0.5);
  wt_scene(text, sc);
  free(text);
}

// Phase timings (opt.profile, cp_world_profile): off, the profile is all
// zeros; on, zeros before the first step, then the same
// trajectory bit for bit, every phase >= 0, the phases a resting box's step
// goes through (contact generation, its system, an LCP, the check) took
// time, and the phases never add up to more than the whole step.
Test(world, profile_phases) {
  cp_scene sc;
  resting_box(&sc);
  for (int s = 0; s < 2; ++s) {
    cp_world *w[2];
    for (int p = 0; p < 2; ++p) {
      cp_world_options o = cp_world_defaults();
      o.stepper = dyn[s];
      o.dt = 5e-3;
      o.profile = p;
      cp_error err;
      cr_assert_eq(cp_world_create(&sc, &o, &w[p], &err), CP_WORLD_OK, "%s", err.msg);
    }
    const cp_step_profile zero = {0}, first = cp_world_profile(w[1]);
    cr_assert(!memcmp(&first, &zero, sizeof zero));
    cp_step_profile sum = {0};
    for (int k = 0; k < 50; ++k) {
      cp_step_info off, on;
      cr_assert_eq(cp_world_step(w[0], &off), CP_WORLD_OK);
      cr_assert_eq(cp_world_step(w[1], &on), CP_WORLD_OK);
      const cp_step_profile poff = cp_world_profile(w[0]), pon = cp_world_profile(w[1]);
      cr_assert(!memcmp(&poff, &zero, sizeof zero), "step %d: profile off", k);
      const cp_step_profile *q = &pon;
      const double ph[6] = {q->collide, q->constraints, q->assembly,
                            q->solve, q->check, q->integrate};
      double parts = 0;
      for (int i = 0; i < 6; ++i) {
        cr_assert(ph[i] >= 0, "step %d phase %d: %g", k, i, ph[i]);
        parts += ph[i];
      }
      cr_assert(parts <= q->total * (1 + 1e-12), "step %d: %.17g > %.17g", k,
                parts, q->total);
      sum.collide += q->collide;
      sum.assembly += q->assembly;
      sum.solve += q->solve;
      sum.check += q->check;
      cr_assert(on.contacts == 4 && on.checked && off.contacts == 4, "step %d", k);
    }
    cr_assert(sum.collide > 0 && sum.assembly > 0 && sum.solve > 0 && sum.check > 0,
              "%s: collide %g assembly %g solve %g check %g", cp_stepper_name(dyn[s]),
              sum.collide, sum.assembly, sum.solve, sum.check);
    cr_assert_eq(cp_world_hash(w[0]), cp_world_hash(w[1]));
    cp_world_destroy(w[0]);
    cp_world_destroy(w[1]);
  }
  cp_scene_free(&sc);
}

static void count_poll(void *ctx) { ++*(long *)ctx; }

// The solve poll (cp_world_set_solve_poll) reaches the FIP solves the world
// makes (once an interior-point iteration, whatever the period): a resting
// box stepped with FIP (velocity stepper, cold solves) calls it and ends
// with the same trajectory bit for bit as without it.
Test(world, solve_poll_reaches_fip) {
  cp_scene sc;
  resting_box(&sc);
  cp_world *w[2];
  for (int p = 0; p < 2; ++p) {
    cp_world_options o = cp_world_defaults();
    o.stepper = CP_STEPPER_VELOCITY;
    o.dt = 5e-3;
    o.warm_start = 0;
    o.solve.solver = CP_SOLVER_FIP;
    cp_error err;
    cr_assert_eq(cp_world_create(&sc, &o, &w[p], &err), CP_WORLD_OK, "%s", err.msg);
  }
  long calls = 0;
  cr_assert_eq(cp_world_set_solve_poll(w[1], count_poll, &calls, 1000000), CP_WORLD_OK);
  long iterations = 0;
  for (int k = 0; k < 20; ++k) {
    cp_step_info off, on;
    cr_assert_eq(cp_world_step(w[0], &off), CP_WORLD_OK, "%s", cp_world_message(w[0]));
    cr_assert_eq(cp_world_step(w[1], &on), CP_WORLD_OK, "%s", cp_world_message(w[1]));
    cr_assert(on.contacts == 4 && off.contacts == 4, "step %d", k);
    cr_assert_eq(on.pivots, off.pivots, "step %d", k);
    iterations += on.pivots;
  }
  cr_assert(calls > 0, "no call in 20 FIP steps");
  cr_assert_eq(calls, iterations, "%ld calls, %ld FIP iterations", calls, iterations);
  cr_assert_eq(cp_world_hash(w[0]), cp_world_hash(w[1]));
  cp_world_destroy(w[0]);
  cp_world_destroy(w[1]);
  cp_scene_free(&sc);
}

// A run's profile (cp_sim_result.profile) is the sum of its steps': zeros
// without opt.profile, and the same run (hash) either way.
Test(world, simulate_sums_profile) {
  cp_scene sc;
  resting_box(&sc);
  cp_sim_result r[2];
  for (int p = 0; p < 2; ++p) {
    cp_world_options o = cp_world_defaults();
    o.dt = 5e-3;
    o.profile = p;
    cp_world *w;
    cp_error err;
    cr_assert_eq(cp_world_create(&sc, &o, &w, &err), CP_WORLD_OK, "%s", err.msg);
    cp_sim_options so = cp_sim_defaults();
    so.duration = 0.25;
    cr_assert_eq(cp_simulate(w, &so, &r[p]), CP_WORLD_OK, "%s", r[p].message);
    cr_assert_eq(r[p].steps, 50);
    cp_world_destroy(w);
  }
  const cp_step_profile zero = {0}, *q = &r[1].profile;
  cr_assert(!memcmp(&r[0].profile, &zero, sizeof zero));
  cr_assert_eq(r[0].hash, r[1].hash);
  const double parts = q->collide + q->constraints + q->assembly + q->solve +
                       q->check + q->integrate;
  cr_assert(q->collide > 0 && q->assembly > 0 && q->solve > 0 && q->check > 0 &&
                q->integrate >= 0 && q->constraints >= 0,
            "collide %g assembly %g solve %g check %g", q->collide, q->assembly,
            q->solve, q->check);
  cr_assert(parts <= q->total * (1 + 1e-12), "%.17g > %.17g", parts, q->total);
  cp_scene_free(&sc);
}
