// The simulator against closed forms (issue 8): sliding to a stop, inclines,
// a rolling sphere, stacks at rest, a dropped box (both dynamic steppers).
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/sim/world.h"
#include "wtest.h"

static const cp_stepper dyn[2] = {CP_STEPPER_ACCELERATION, CP_STEPPER_VELOCITY};
static const double g = 9.81;
static const double PI = 3.14159265358979323846;

// A 1 kg box (0.2 x 0.1 x 0.1 m) on a table sliding at v0 along x.
static void sliding_text(char *text, size_t n, double mu, double v0) {
  char b[512];
  snprintf(text, n,
           "{\"friction\": {\"default\": %g}, \"bodies\": [{\"name\": "
           "\"table\", \"fixed\": true, \"shape\": {\"type\": \"plane\", "
           "\"normal\": [0, 0, 1], \"offset\": 0}}, %s]}",
           mu, wt_box(b, sizeof b, "box", 1.0, 0.2, 0.1, 0.1, 0, 0, 0.05, v0));
}

// A box sliding at v0 on a table stops after v0^2 / (2 mu g) (1 %) at
// t = v0 / (mu g) (within one step).
Test(world_motion, sliding_box_stops) {
  const double v0 = 1.0, mu = 0.3, h = 1e-3;
  for (int s = 0; s < 2; ++s) {
    char text[2048];
    sliding_text(text, sizeof text, mu, v0);
    cp_world *w = wt_world(text, dyn[s], h);
    double x[13], tstop = -1;
    for (int k = 0; k < 600; ++k) {
      wt_run(w, 1, NULL);
      cp_world_get_state(w, x);
      // Stopped: below 1e-6 m/s (a stuck contact creeps at h kappa A_tt
      // c_t, 3e-9 m/s here: the compliance of docs/simulate.md).
      if (tstop < 0 && fabs(x[7]) <= 1e-6) tstop = cp_world_time(w);
    }
    double d = v0 * v0 / (2 * mu * g), t = v0 / (mu * g);
    cr_assert(tstop > 0, "%s: never stopped (vx %g)", cp_stepper_name(dyn[s]),
              x[7]);
    cr_assert(fabs(x[0] - d) <= 0.01 * d, "%s: stopped at %.6g m, expected %.6g",
              cp_stepper_name(dyn[s]), x[0], d);
    cr_assert(fabs(tstop - t) <= h * (1 + 1e-9), "%s: stopped at t = %.6g, expected %.6g",
              cp_stepper_name(dyn[s]), tstop, t);
    cr_assert(fabs(x[1]) < 1e-9 && fabs(x[2] - 0.05) < 1e-6, "%s: y %g z %g",
              cp_stepper_name(dyn[s]), x[1], x[2]);
    cp_world_destroy(w);
  }
}

// Scene text: a box (0.2 x 0.1 x 0.1 m, 1 kg) at rest on a ramp inclined by
// theta about y (downhill +x), friction mu.
static void incline_text(char *text, size_t n, double theta, double mu,
                         const char *shape, double half) {
  double nx = sin(theta), nz = cos(theta);
  snprintf(text, n,
           "{\"friction\": {\"default\": %.17g}, \"bodies\": [{\"name\": "
           "\"ramp\", \"fixed\": true, \"orientation\": [%.17g, 0, %.17g, 0], "
           "\"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1], "
           "\"offset\": 0}}, {\"name\": \"box\", \"mass\": 1, \"shape\": %s, "
           "\"position\": [%.17g, 0, %.17g], \"orientation\": [%.17g, 0, "
           "%.17g, 0]}]}",
           mu, cos(theta / 2), sin(theta / 2), shape, half * nx, half * nz,
           cos(theta / 2), sin(theta / 2));
}

// Velocity along the slope (downhill unit (cos, 0, -sin)).
static double downhill(const double *x, double theta) {
  return x[7] * cos(theta) - x[9] * sin(theta);
}

Test(world_motion, incline_slides) {
  const double th = PI / 6, mu = 0.2, h = 1e-3;
  char text[2048];
  incline_text(text, sizeof text, th, mu,
               "{\"type\": \"box\", \"size\": [0.2, 0.1, 0.1]}", 0.05);
  double a = g * (sin(th) - mu * cos(th));
  for (int s = 0; s < 2; ++s) {
    cp_world *w = wt_world(text, dyn[s], h);
    double x[13];
    wt_run(w, 100, NULL);
    cp_world_get_state(w, x);
    double v1 = downhill(x, th), t1 = cp_world_time(w);
    wt_run(w, 400, NULL);
    cp_world_get_state(w, x);
    double v2 = downhill(x, th), t2 = cp_world_time(w);
    double am = (v2 - v1) / (t2 - t1);
    cr_assert(fabs(am - a) <= 0.005 * a, "%s: a = %.6g, expected %.6g",
              cp_stepper_name(dyn[s]), am, a);
    cp_world_destroy(w);
  }
}

// A box (0.2 x 0.1 x 0.1 m) resting on the 30 degree incline with friction
// mu, stepped at h for 10 s with either stepper, drifts at most `bound` m.
static void incline_rests(double mu, double h, double bound) {
  char text[2048];
  incline_text(text, sizeof text, PI / 6, mu,
               "{\"type\": \"box\", \"size\": [0.2, 0.1, 0.1]}", 0.05);
  for (int s = 0; s < 2; ++s) {
    cp_world *w = wt_world(text, dyn[s], h);
    double x0[13], x[13];
    cp_world_get_state(w, x0);
    wt_run(w, (int)lround(10 / h), NULL);
    cp_world_get_state(w, x);
    double d = sqrt(pow(x[0] - x0[0], 2) + pow(x[1] - x0[1], 2) +
                    pow(x[2] - x0[2], 2));
    cr_log_info("%s, mu %g, h %g: incline drift %.3g m", cp_stepper_name(dyn[s]), mu, h, d);
    cr_assert(d <= bound, "%s: drifted %.3g m in 10 s (bound %.3g)",
              cp_stepper_name(dyn[s]), d, bound);
    cp_world_destroy(w);
  }
}

Test(world_motion, incline_holds) { incline_rests(0.6, 1e-3, 1e-6); }

// Issue 26's figure for the box resting on the 30 degree incline, held: the
// benchmark's setting (mu 0.7, dt = 5 ms, 10 s; bench_mujoco prints a drift
// of 1.5e-7 m with either stepper, experiments/results/mujoco.md; issue 26
// quoted 2.2e-7 m from an earlier run). This scene tilts the ramp as a body
// rather than its plane's normal and drifts the same 1.53e-7 m; bound:
// three times that, where incline_holds' 1e-6 m at 1 ms allows more.
Test(world_motion, incline_rest_fidelity) { incline_rests(0.7, 5e-3, 3 * 1.53e-7); }

// A sphere rolls without slipping when mu >= (2/7) tan theta: its centre
// accelerates at (5/7) g sin theta.
Test(world_motion, sphere_rolls) {
  const double th = 20 * PI / 180, h = 1e-3;
  double a = 5.0 / 7.0 * g * sin(th);
  for (int s = 0; s < 2; ++s) {
    cp_world *w = wt_world_file("sphere_incline.json", dyn[s], h);
    double x[13];
    wt_run(w, 100, NULL);
    cp_world_get_state(w, x);
    double v1 = downhill(x, th), t1 = cp_world_time(w);
    wt_run(w, 400, NULL);
    cp_world_get_state(w, x);
    double v2 = downhill(x, th), t2 = cp_world_time(w);
    double am = (v2 - v1) / (t2 - t1);
    cr_assert(fabs(am - a) <= 0.01 * a, "%s: a = %.6g, expected %.6g",
              cp_stepper_name(dyn[s]), am, a);
    // Rolling: the contact point's speed v - w x r is zero, so |w| r = |v|.
    double wn = sqrt(x[10] * x[10] + x[11] * x[11] + x[12] * x[12]);
    cr_assert(fabs(wn * 0.05 - fabs(v2)) <= 0.01 * fabs(v2), "%s: w r %g v %g",
              cp_stepper_name(dyn[s]), wn * 0.05, v2);
    cp_world_destroy(w);
  }
}

// Warm starts give the same motion as cold solves, with far fewer pivots:
// the box of sliding_box_stops run warm and cold side by side. When it stops
// its four corners change from sliding to rolling, so the recorded bases no
// longer fit and are repaired by principal pivots (docs/simulate.md, "Solvers
// and warm starts"); the states agree at every step (positions to 1e-9 m,
// velocities to 1e-6, the stop criterion: at the stop the yaw rate's noise
// differs by 1e-9 rad/s).
Test(world_motion, warm_matches_cold) {
  const double v0 = 1.0, mu = 0.3, h = 1e-3;
  char text[2048];
  sliding_text(text, sizeof text, mu, v0);
  for (int s = 0; s < 2; ++s) {
    cp_world *w[2];
    for (int warm = 0; warm < 2; ++warm) {
      cp_scene sc;
      wt_scene(text, &sc);
      cp_world_options o = cp_world_defaults();
      o.stepper = dyn[s];
      o.dt = h;
      o.warm_start = warm;
      cp_error err = {0};
      cr_assert_eq(cp_world_create(&sc, &o, &w[warm], &err), CP_WORLD_OK, "%s", err.msg);
      cp_scene_free(&sc);
    }
    long piv[2] = {0, 0}, warm_steps = 0;
    for (int k = 0; k < 600; ++k) {
      double x[2][13];
      for (int i = 0; i < 2; ++i) {
        cp_step_info info;
        cr_assert_eq(cp_world_step(w[i], &info), CP_WORLD_OK, "%s", cp_world_message(w[i]));
        piv[i] += info.pivots;
        if (i == 1) warm_steps += info.warm_started;
        cp_world_get_state(w[i], x[i]);
      }
      for (int d = 0; d < 13; ++d)
        cr_assert(fabs(x[1][d] - x[0][d]) <= (d < 7 ? 1e-9 : 1e-6),
                  "%s step %d: state %d warm %.17g cold %.17g", cp_stepper_name(dyn[s]),
                  k, d, x[1][d], x[0][d]);
    }
    // Measured: 5186 / 34 pivots and 600 warm steps (acceleration), 7155 /
    // 39 and 599 (velocity).
    cr_assert(warm_steps >= 599, "%s: %ld of 600 steps warm", cp_stepper_name(dyn[s]),
              warm_steps);
    cr_assert(20 * piv[1] < piv[0], "%s: pivots warm %ld, cold %ld",
              cp_stepper_name(dyn[s]), piv[1], piv[0]);
    for (int i = 0; i < 2; ++i) cp_world_destroy(w[i]);
  }
}

// The impact memo: a state stepped a second time finds its impact problem
// in the memo (no pivots) and gives the same bits as a world without it.
Test(world_motion, impact_memo_same_answer) {
  cp_world *w[2]; // 0: no memo, 1: memo of 8 slots
  for (int i = 0; i < 2; ++i) {
    cp_scene sc;
    wt_scene_file("box_drop.json", &sc);
    cp_world_options o = cp_world_defaults();
    o.dt = 1e-3;
    o.impact_memo = 8 * i;
    cp_error err = {0};
    cr_assert_eq(cp_world_create(&sc, &o, &w[i], &err), CP_WORLD_OK, "%s", err.msg);
    cp_scene_free(&sc);
  }
  int n = cp_world_state_size(w[0]), impact_steps = 0;
  double *xb = malloc(sizeof(double) * (size_t)n), *x[2];
  for (int i = 0; i < 2; ++i) x[i] = malloc(sizeof(double) * (size_t)n);
  for (int k = 0; k < 1500 && impact_steps < 3; ++k) {
    cp_world_get_state(w[0], xb);
    cp_step_info info[2];
    for (int i = 0; i < 2; ++i) {
      cr_assert_eq(cp_world_step(w[i], &info[i]), CP_WORLD_OK, "%s", cp_world_message(w[i]));
      cp_world_get_state(w[i], x[i]);
      cr_assert_eq(info[i].lcp_reused, 0, "step %d: nothing to reuse yet", k);
    }
    cr_assert_eq(memcmp(x[0], x[1], sizeof(double) * (size_t)n), 0, "step %d", k);
    if (info[0].impacts == 0) continue;
    // The same state again, in both worlds.
    ++impact_steps;
    for (int i = 0; i < 2; ++i) {
      cr_assert_eq(cp_world_set_state(w[i], xb), CP_WORLD_OK);
      cr_assert_eq(cp_world_step(w[i], &info[i]), CP_WORLD_OK, "%s", cp_world_message(w[i]));
      cp_world_get_state(w[i], x[i]);
    }
    cr_assert_eq(info[0].lcp_reused, 0);
    cr_assert_eq(info[1].lcp_reused, 1, "step %d: impact not found in the memo", k);
    cr_assert_eq(info[1].lcp_solves, info[0].lcp_solves);
    cr_assert(info[1].pivots < info[0].pivots, "step %d: pivots %d with the memo, %d without",
              k, info[1].pivots, info[0].pivots);
    cr_assert_eq(memcmp(x[0], x[1], sizeof(double) * (size_t)n), 0, "step %d again", k);
  }
  cr_assert_eq(impact_steps, 3, "box_drop: %d steps with impacts", impact_steps);
  // Resized, the memo starts empty: the last impact state misses, then hits.
  cr_assert_eq(cp_world_set_impact_memo(w[1], -1), CP_WORLD_BAD_INPUT);
  cr_assert_eq(cp_world_set_impact_memo(w[1], 4), CP_WORLD_OK);
  for (int pass = 0; pass < 2; ++pass) {
    cp_step_info info;
    cr_assert_eq(cp_world_set_state(w[1], xb), CP_WORLD_OK);
    cr_assert_eq(cp_world_step(w[1], &info), CP_WORLD_OK, "%s", cp_world_message(w[1]));
    cr_assert(info.impacts > 0);
    cr_assert_eq(info.lcp_reused, pass, "pass %d", pass);
    cp_world_get_state(w[1], x[1]);
    cr_assert_eq(memcmp(x[0], x[1], sizeof(double) * (size_t)n), 0, "pass %d", pass);
  }
  cr_assert_eq(cp_world_set_impact_memo(w[1], 0), CP_WORLD_OK);
  cp_step_info off;
  cr_assert_eq(cp_world_set_state(w[1], xb), CP_WORLD_OK);
  cr_assert_eq(cp_world_step(w[1], &off), CP_WORLD_OK);
  cr_assert_eq(off.lcp_reused, 0);
  for (int i = 0; i < 2; ++i) {
    cp_world_destroy(w[i]);
    free(x[i]);
  }
  free(xb);
  // A negative size is refused.
  cp_scene sc;
  wt_scene_file("box_drop.json", &sc);
  cp_world_options o = cp_world_defaults();
  o.impact_memo = -1;
  cp_error err = {0};
  cp_world *bad = NULL;
  cr_assert_eq(cp_world_create(&sc, &o, &bad, &err), CP_WORLD_BAD_INPUT);
  cr_assert(bad == NULL);
  cr_assert(strstr(err.msg, "must be >= 0") != NULL, "%s", err.msg);
  cp_scene_free(&sc);
}
