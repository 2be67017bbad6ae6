// The velocity stepper's sliding substitution (cp_world_options.
// velocity_sliding, docs/simulate.md "Sliding contacts in the velocity
// stepper") against closed forms and Newton-Euler: a box sliding down an
// incline, a box sliding diagonally to a stop on a table (straight, at
// v0^2 / (2 mu g)), and one step's momentum balance.
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "planner/sim/world.h"
#include "tests/support.h"
#include "wtest.h"

static const double g = 9.81;
static const double PI = 3.14159265358979323846;

static cp_world *world_with(const char *text, double h, int sliding, cp_stepper st) {
  cp_scene sc;
  wt_scene(text, &sc);
  cp_world_options o = cp_world_defaults();
  o.stepper = st;
  o.dt = h;
  o.velocity_sliding = sliding;
  cp_world *w = NULL;
  cp_error err = {0};
  cr_assert_eq(cp_world_create(&sc, &o, &w, &err), CP_WORLD_OK, "%s", err.msg);
  cp_scene_free(&sc);
  return w;
}

// The velocity stepper's world.
static cp_world *world_opt(const char *text, double h, int sliding) {
  return world_with(text, h, sliding, CP_STEPPER_VELOCITY);
}

// The contact forces on body 1 (the box) summed into f; returns their count.
static int box_force(const cp_world *w, double f[3]) {
  const cp_world_contact *c = NULL;
  const int n = cp_world_contacts(w, &c);
  f[0] = f[1] = f[2] = 0;
  for (int k = 0; k < n; ++k)
    for (int d = 0; d < 3; ++d) f[d] += (c[k].a.body == 1 ? 1 : -1) * c[k].force[d];
  return n;
}

// A 1 kg box (0.2 x 0.1 x 0.1 m) on a ramp inclined by theta about y
// (downhill +x), friction mu, at rest.
static void incline_text(char *text, size_t n, double theta, double mu) {
  const double c = cos(theta / 2), s = sin(theta / 2);
  snprintf(text, n,
           "{\"friction\": {\"default\": %.17g}, \"bodies\": [{\"name\": "
           "\"ramp\", \"fixed\": true, \"orientation\": [%.17g, 0, %.17g, 0], "
           "\"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1], "
           "\"offset\": 0}}, {\"name\": \"box\", \"mass\": 1, \"shape\": "
           "{\"type\": \"box\", \"size\": [0.2, 0.1, 0.1]}, \"position\": "
           "[%.17g, 0, %.17g], \"orientation\": [%.17g, 0, %.17g, 0]}]}",
           mu, c, s, 0.05 * sin(theta), 0.05 * cos(theta), c, s);
}

// Down a 30 degree incline with mu = 0.2 the box accelerates at
// g (sin - mu cos) (0.2 %), at dt 1 ms and 5 ms; the option changes the
// answer's bits (the sliding contacts are written differently), and with
// it off the world is the default one.
Test(world_sliding, incline_closed_form) {
  const double th = PI / 6, mu = 0.2, a = g * (sin(th) - mu * cos(th));
  char text[2048];
  incline_text(text, sizeof text, th, mu);
  const double hs[2] = {1e-3, 5e-3};
  for (int i = 0; i < 2; ++i) {
    const double h = hs[i];
    const int n1 = (int)lround(0.1 / h), n2 = (int)lround(0.5 / h);
    double x[2][13];
    for (int on = 0; on < 2; ++on) {
      cp_world *w = world_opt(text, h, on);
      double x0[13];
      cp_world_get_state(w, x0);
      wt_run(w, n1, NULL);
      cp_world_get_state(w, x[on]);
      const double v1 = x[on][7] * cos(th) - x[on][9] * sin(th), t1 = cp_world_time(w);
      for (int k = 0; k < n2; ++k) { // every step passes the check at once
        cp_step_info info;
        cr_assert_eq(cp_world_step(w, &info), CP_WORLD_OK, "%s", cp_world_message(w));
        cr_assert(!info.retried && !info.fallback, "dt %g, sliding %d: step %d retried", h, on,
                  k);
      }
      cp_world_get_state(w, x[on]);
      const double v2 = x[on][7] * cos(th) - x[on][9] * sin(th), t2 = cp_world_time(w);
      const double am = (v2 - v1) / (t2 - t1);
      cr_assert(fabs(am - a) <= 2e-3 * a, "dt %g, sliding %d: a = %.9g, expected %.9g", h, on,
                am, a);
      // Straight down the slope: no sideways motion, no turning.
      cr_assert(fabs(x[on][1] - x0[1]) < 1e-9, "dt %g, sliding %d: y %g", h, on, x[on][1]);
      cr_assert(fabs(x[on][10]) + fabs(x[on][11]) + fabs(x[on][12]) < 1e-6,
                "dt %g, sliding %d: spins %g %g %g", h, on, x[on][10], x[on][11], x[on][12]);
      cp_world_destroy(w);
    }
    cr_assert(memcmp(x[0], x[1], sizeof x[0]) != 0, "dt %g: the option changed nothing", h);
  }
}

// A 1 kg box (0.2 x 0.1 x 0.1 m) on a table with friction mu, sliding
// at (c, c, 0) m/s.
static void diagonal_text(char *text, size_t n, double mu, double c) {
  snprintf(text, n,
           "{\"friction\": {\"default\": %g}, \"bodies\": [{\"name\": \"table\", \"fixed\": "
           "true, \"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1], \"offset\": 0}}, "
           "{\"name\": \"box\", \"mass\": 1, \"shape\": {\"type\": \"box\", \"size\": [0.2, "
           "0.1, 0.1]}, \"position\": [0, 0, 0.05], \"velocity\": [%.17g, %.17g, 0]}]}",
           mu, c, c);
}

// A box sliding at v0 along the diagonal of a table (vx = vy): Coulomb's
// friction opposes the velocity, so it stops on the diagonal after
// v0^2 / (2 mu g) (0.5 %) at t = v0 / (mu g) (within a step) and stays
// stopped (the contacts that would reverse are made rolling).
Test(world_sliding, diagonal_slide_stops_straight) {
  const double v0 = 1.0, mu = 0.3, h = 1e-3, c = v0 / sqrt(2.0);
  char text[2048];
  diagonal_text(text, sizeof text, mu, c);
  cp_world *w = world_opt(text, h, 1);
  double x[13], tstop = -1;
  for (int k = 0; k < 600; ++k) {
    cp_step_info info;
    cr_assert_eq(cp_world_step(w, &info), CP_WORLD_OK, "%s", cp_world_message(w));
    cr_assert(!info.retried, "step %d retried", k);
    cp_world_get_state(w, x);
    if (tstop < 0 && hypot(x[7], x[8]) <= 1e-6) tstop = cp_world_time(w);
  }
  const double d = v0 * v0 / (2 * mu * g), t = v0 / (mu * g);
  cr_assert(tstop > 0, "never stopped (v %g %g)", x[7], x[8]);
  cr_assert(hypot(x[7], x[8]) <= 1e-6, "moving again: v %g %g", x[7], x[8]);
  cr_assert(fabs(hypot(x[0], x[1]) - d) <= 5e-3 * d, "stopped at %.6g m, expected %.6g",
            hypot(x[0], x[1]), d);
  cr_assert(fabs(x[0] - x[1]) <= 1e-6 * d, "left the diagonal: x %.9g y %.9g", x[0], x[1]);
  cr_assert(fabs(tstop - t) <= h * (1 + 1e-9), "stopped at t = %.6g, expected %.6g", tstop, t);
  cp_world_destroy(w);
}

// Newton-Euler over one step of a box sliding along x on a table: the
// contacts' forces (cp_world_contacts) sum to a normal force m g and a
// friction force -mu m g along the velocity, and the velocity changes by
// h (sum of forces / m + gravity): dv_x = -mu g h, dv_z = 0.
Test(world_sliding, one_step_momentum) {
  const double v0 = 1.0, mu = 0.3, h = 1e-3;
  char text[2048], b[512];
  snprintf(text, sizeof text,
           "{\"friction\": {\"default\": %g}, \"bodies\": [{\"name\": \"table\", \"fixed\": "
           "true, \"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1], \"offset\": 0}}, "
           "%s]}",
           mu, wt_box(b, sizeof b, "box", 1.0, 0.2, 0.1, 0.1, 0, 0, 0.05, v0));
  cp_world *w = world_opt(text, h, 1);
  wt_run(w, 5, NULL); // resting contacts established
  double x0[13], x1[13];
  cp_world_get_state(w, x0);
  wt_run(w, 1, NULL);
  cp_world_get_state(w, x1);
  cr_assert(fabs((x1[7] - x0[7]) - (-mu * g * h)) <= 1e-9, "dv_x %.12g, expected %.12g",
            x1[7] - x0[7], -mu * g * h);
  cr_assert(fabs(x1[8] - x0[8]) <= 1e-12 && fabs(x1[9] - x0[9]) <= 1e-9,
            "dv_y %g dv_z %g", x1[8] - x0[8], x1[9] - x0[9]);
  double fs[3];
  const int n = box_force(w, fs);
  cr_assert(n >= 3, "%d contacts", n);
  cr_assert(fabs(fs[2] - g) <= 1e-9 * g, "normal force %.12g, expected %.12g", fs[2], g);
  cr_assert(fabs(fs[0] + mu * g) <= 1e-9 * g, "friction %.12g, expected %.12g", fs[0], -mu * g);
  cr_assert(fabs(fs[1]) <= 1e-12, "sideways friction %g", fs[1]);
  cp_world_destroy(w);
}

// The option is the default (since session 22): `complan simulate` with
// the velocity stepper stops the diagonal slide at Coulomb's closed form
// v0^2 / (2 mu g); `--no-velocity-sliding` gives the pyramid's answer,
// whose friction along the diagonal is sqrt 2 times larger:
// v0^2 / (2 sqrt 2 mu g).
Test(world_sliding, default_on_and_the_cli_turns_it_off) {
  cr_assert_eq(cp_world_defaults().velocity_sliding, 1);
  const double v0 = 1.0, mu = 0.3, c = v0 / sqrt(2.0);
  char text[2048];
  diagonal_text(text, sizeof text, mu, c);
  char *scene = cpt_temp_file(text, ".json");
  const double d = v0 * v0 / (2 * mu * g);
  for (int off = 0; off < 2; ++off) {
    const char *argv[] = {"complan", "simulate", scene, "--stepper", "velocity", "--dt", "0.001",
                          "--duration", "0.6", "--json",
                          off ? "--no-velocity-sliding" : NULL, NULL};
    json_t *doc = cpt_run_json(argv, 0);
    json_t *b = json_array_get(json_object_get(json_object_get(doc, "final"), "bodies"), 0);
    json_t *x = json_object_get(b, "position");
    cr_assert(json_is_array(x), "no final position");
    const double dist = hypot(json_number_value(json_array_get(x, 0)),
                              json_number_value(json_array_get(x, 1)));
    const double want = off ? d / sqrt(2.0) : d;
    cr_assert(fabs(dist - want) <= 1e-2 * want, "%s: stopped at %.6g m, expected %.6g",
              off ? "pyramid" : "default", dist, want);
    json_decref(doc);
  }
  remove(scene);
  free(scene);
}

// A box that slides just above the scene's velocity tolerance (1.05e-6 m/s
// along x) on a table whose gravity pulls it sideways (g = (3, 20, -9.81),
// mu = 0.3): within the first step the slip turns to +y. Coulomb's law
// against the slip at the step's start would put the whole friction along
// -x, which the per-step check refuses (the end slip is along y, the start
// slip below the check's v_tol, too small to judge by). So the sliding
// substitution keeps a contact only while its start slip is above the
// check's v_tol; this one is written with the pyramid, whose friction
// (maximal dissipation over the step) opposes the step's own slip, and
// the velocity stepper takes the step at its first try (session 23's code
// needed the last retries, with the pyramid throughout; session 22's
// refused the step). The acceleration stepper's own try fails either way
// and falls back to the velocity stepper. Then the box slides: each
// later step's friction (the contacts' forces summed) has Coulomb's
// magnitude mu m g against the slip at the step's start (with the option),
// and v_y after 10 steps lies between (g_y - mu g) t and g_y t (either law
// bounds the friction's y part by mu m g). In session 22's code such a
// step ended the run (check_failed); with the option off (the pyramid in
// every try) the run was and is ok.
Test(world_sliding, a_turning_slip_is_taken_with_the_pyramid) {
  const double mu = 0.3, h = 5e-3, gy = 20;
  char text[2048], b[512];
  snprintf(text, sizeof text,
           "{\"gravity\": [3, %g, %g], \"friction\": {\"default\": %g}, \"bodies\": "
           "[{\"name\": \"table\", \"fixed\": true, \"shape\": {\"type\": \"plane\", "
           "\"normal\": [0, 0, 1], \"offset\": 0}}, %s]}",
           gy, -g, mu, wt_box(b, sizeof b, "box", 1.0, 0.1, 0.1, 0.1, 0, 0, 0.05, 1.05e-6));
  const cp_stepper st[2] = {CP_STEPPER_VELOCITY, CP_STEPPER_ACCELERATION};
  for (int s = 0; s < 2; ++s)
    for (int sliding = 0; sliding < 2; ++sliding) {
      cp_world *w = world_with(text, h, sliding, st[s]);
      int retried = 0;
      double x[13];
      for (int k = 0; k < 10; ++k) {
        double v0[13];
        cp_world_get_state(w, v0);
        cp_step_info info;
        cr_assert_eq(cp_world_step(w, &info), CP_WORLD_OK, "%s, sliding %d, step %d: %s",
                     cp_stepper_name(st[s]), sliding, k, cp_world_message(w));
        cr_assert(info.checked, "step %d not checked", k);
        retried += info.retried;
        if (!sliding || k == 0) continue;
        double f[3];
        box_force(w, f);
        const double ft = hypot(f[0], f[1]), v = hypot(v0[7], v0[8]);
        cr_assert(fabs(f[2] - g) <= 1e-6 * g, "step %d: normal force %.12g", k, f[2]);
        cr_assert(fabs(ft - mu * f[2]) <= 1e-6 * ft, "step %d: friction %.12g, mu N %.12g", k,
                  ft, mu * f[2]);
        cr_assert((f[0] * v0[7] + f[1] * v0[8]) / (ft * v) <= -1 + 1e-9,
                  "step %d: friction (%g, %g) not against the slip (%g, %g)", k, f[0], f[1],
                  v0[7], v0[8]);
      }
      // The velocity stepper takes every step at its first try; the
      // acceleration stepper's first step falls back.
      cr_assert(s == 1 ? retried >= 1 : retried == 0, "%s, sliding %d: %d steps retried",
                cp_stepper_name(st[s]), sliding, retried);
      cp_world_get_state(w, x);
      const double t = 10 * h, lo = (gy - mu * g) * t, hi = gy * t;
      cr_assert(x[8] >= lo * (1 - 1e-9) && x[8] <= hi, "%s, sliding %d: v_y %.9g, not in [%g, %g]",
                cp_stepper_name(st[s]), sliding, x[8], lo, hi);
      cr_assert(fabs(x[9]) <= 1e-6, "v_z %g", x[9]);
      cp_world_destroy(w);
    }
}

// The last retries with the pyramid (world.c): the bundled grasp_drop scene
// with the velocity stepper at dt 5 ms. Once the box has fallen, the
// fingers' constant efforts spin them ever faster, and at step 56 the
// sliding substitution's friction (against the slip at the step's start)
// adds energy the check refuses, whole and in substeps (the fingers' slip
// turns within the step). The pyramid's friction, found with the step's
// own velocities, dissipates: the step is taken and passes the check, as
// do the two after it. Without those retries the run ended at step 56.
Test(world_sliding, an_energy_refusal_is_taken_with_the_pyramid) {
  cp_world *w = wt_world_file("grasp_drop.json", CP_STEPPER_VELOCITY, 5e-3);
  int retried = 0;
  for (int k = 1; k <= 58; ++k) {
    cp_step_info info;
    cr_assert_eq(cp_world_step(w, &info), CP_WORLD_OK, "step %d: %s", k, cp_world_message(w));
    cr_assert(info.checked, "step %d not checked", k);
    retried += k >= 56 && info.retried;
  }
  cr_assert(retried >= 1, "steps 56-58 taken without a retry");
  cp_world_destroy(w);
}
