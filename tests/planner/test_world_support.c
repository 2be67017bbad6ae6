// Support friction of planar bodies (the scene key
// "planar.support_friction", planner/sim/planar.c; docs/simulate.md,
// "Support friction"): a disc lying on a table, its plane horizontal,
// against the closed forms of Coulomb friction with the known normal force
// N = m g -- it sticks under an in-plane push below mu N, slides at
// (F - mu N) / m above it, a sliding disc stops after v^2 / (2 mu g), a
// spinning one after w I / ((2/3) mu N R) -- under both dynamic steppers
// (the velocity stepper's friction is the pyramid at every step, so the
// diagonal slide is the acceleration stepper's only), a pad on a prismatic
// joint pushing the sliding disc at (F - mu N) / (m + m_pad); the keys' errors
// with their JSON paths, and the command line's exit 2.
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/scene.h"
#include "planner/sim/world.h"
#include "tests/support.h"
#include "wtest.h"

static const cp_stepper dyn[2] = {CP_STEPPER_ACCELERATION, CP_STEPPER_VELOCITY};

#define G 9.81
#define MU 0.4
#define MASS 2.0
#define RAD 0.1 /* the disc's radius and its patch's */

// A 2 kg disc (cylinder r 0.1 m, 0.05 m thick, axis z) kept in the plane
// z = 0.3 (normal z) on a table (support friction MU), under gravity (gx,
// gy, -G) -- the in-plane part stands for a push F = m (gx, gy) -- with
// velocity (vx, vy, 0) and spin wz; patch radius pr.
static void disc_text(char *t, size_t n, double gx, double gy, double vx, double vy,
                      double wz, double pr) {
  snprintf(t, n,
           "{\"gravity\": [%.17g, %.17g, %.17g], \"bodies\": [{\"name\": \"disc\", "
           "\"mass\": %g, \"shape\": {\"type\": \"cylinder\", \"radius\": %g, "
           "\"length\": 0.05}, \"position\": [0, 0, 0.3], \"velocity\": [%.17g, "
           "%.17g, 0], \"angular_velocity\": [0, 0, %.17g], \"planar\": "
           "{\"normal\": [0, 0, 1], \"support_friction\": %g, \"support_radius\": "
           "%g}}]}",
           gx, gy, -G, MASS, RAD, vx, vy, wz, MU, pr);
}

// Below the threshold (push 0.95 mu N, along x and along a diagonal) the
// disc does not move: no more than the compliance's creep (h kappa A_tt
// c_t, about 1e-9 m/s) in 1 s.
Test(world_support, push_below_threshold_sticks) {
  const double h = 1e-3, f = 0.95 * MU * G;
  const double dir[2][2] = {{1, 0}, {0.6, -0.8}};
  char text[1024];
  for (int s = 0; s < 2; ++s)
    for (int d = 0; d < 2; ++d) {
      disc_text(text, sizeof text, f * dir[d][0], f * dir[d][1], 0, 0, 0, RAD);
      cp_world *w = wt_world(text, dyn[s], h);
      wt_run(w, 1000, NULL);
      double x[13];
      cp_world_get_state(w, x);
      cr_assert(hypot(x[0], x[1]) <= 1e-7 && hypot(x[7], x[8]) <= 1e-6 &&
                    fabs(x[12]) <= 1e-6,
                "%s, push %d: moved to (%g, %g) at (%g, %g) m/s, w %g",
                cp_stepper_name(dyn[s]), d, x[0], x[1], x[7], x[8], x[12]);
      cr_assert(x[2] == 0.3 && x[9] == 0, "left its plane");
      cp_world_destroy(w);
    }
}

// Above it (push 1.5 mu N along x) the disc accelerates at (F - mu N) / m
// from the first step: v after n steps is n h (gx - mu g) to rounding, and
// it does not turn.
Test(world_support, push_above_threshold_slides) {
  const double h = 1e-3, gx = 1.5 * MU * G, a = gx - MU * G;
  char text[1024];
  disc_text(text, sizeof text, gx, 0, 0, 0, 0, RAD);
  for (int s = 0; s < 2; ++s) {
    cp_world *w = wt_world(text, dyn[s], h);
    double x[13];
    for (int k = 1; k <= 300; ++k) {
      wt_run(w, 1, NULL);
      cp_world_get_state(w, x);
      cr_assert(fabs(x[7] - k * h * a) <= 1e-9 * (1 + k * h * a),
                "%s: step %d: v %.12g, expected %.12g", cp_stepper_name(dyn[s]), k,
                x[7], k * h * a);
    }
    const double n = 300, xe = h * h * a * n * (n + 1) / 2; // semi-implicit Euler
    cr_assert(fabs(x[0] - xe) <= 1e-9 && fabs(x[1]) <= 1e-15 && fabs(x[12]) <= 1e-12,
              "%s: x %.12g (expected %.12g), y %g, w %g", cp_stepper_name(dyn[s]),
              x[0], xe, x[1], x[12]);
    cp_world_destroy(w);
  }
}

// A disc sliding at 1 m/s with no push decelerates at mu g against its
// velocity and stops after v0 / (mu g) (within a step: below 1e-6 m/s; the
// compliance leaves 1e-9 m/s for one more step) and v0^2 / (2 mu g)
// (within h v0: semi-implicit Euler's sum of the step velocities), on a
// straight line (the 30-degree slide: the sliding friction is isotropic),
// then stays.
Test(world_support, sliding_disc_stops) {
  const double h = 1e-3, v0 = 1.0, a = MU * G;
  const double d = v0 * v0 / (2 * a), t = v0 / a;
  const double ang[2] = {0, 0.5235987755982988}; // 0 and 30 degrees
  char text[1024];
  for (int s = 0; s < 2; ++s)
    for (int k = 0; k < 2; ++k) {
      if (k && dyn[s] == CP_STEPPER_VELOCITY) continue; // pyramid: not isotropic
      const double c = cos(ang[k]), sn = sin(ang[k]);
      disc_text(text, sizeof text, 0, 0, v0 * c, v0 * sn, 0, RAD);
      cp_world *w = wt_world(text, dyn[s], h);
      double x[13], tstop = -1;
      for (int i = 0; i < 500; ++i) {
        wt_run(w, 1, NULL);
        cp_world_get_state(w, x);
        if (tstop < 0 && hypot(x[7], x[8]) <= 1e-6) tstop = cp_world_time(w);
      }
      cr_assert(tstop > 0, "%s: never stopped (v %g)", cp_stepper_name(dyn[s]), x[7]);
      cr_assert(fabs(tstop - t) <= h * (1 + 1e-9), "%s, %d: stopped at t %.6g, expected %.6g",
                cp_stepper_name(dyn[s]), k, tstop, t);
      const double along = x[0] * c + x[1] * sn, across = -x[0] * sn + x[1] * c;
      cr_assert(fabs(along - d) <= h * v0 && fabs(across) <= 1e-12,
                "%s, %d: stopped at %.6g m (%.3g across), expected %.6g",
                cp_stepper_name(dyn[s]), k, along, across, d);
      cr_assert(hypot(x[7], x[8]) <= 1e-12 && fabs(x[12]) <= 1e-12,
                "%s, %d: moving after the stop", cp_stepper_name(dyn[s]), k);
      cp_world_destroy(w);
    }
}

// A disc spinning at 5 rad/s: the patch's four points at 2R/3 give the
// uniformly pressed disc's torque (2/3) mu N R, so it stops at w0 I / ((2/3)
// mu N R) (I = m r^2 / 2; within a step) having turned w0^2 / (2 alpha)
// (within h w0), its centre still. With support_radius 0 (one point at
// the centre) nothing resists the spin.
Test(world_support, spinning_disc_stops) {
  const double h = 1e-3, w0 = 5.0, I = MASS * RAD * RAD / 2;
  const double alpha = (2.0 / 3.0) * MU * MASS * G * RAD / I;
  const double t = w0 / alpha, turn = w0 * w0 / (2 * alpha);
  char text[1024];
  disc_text(text, sizeof text, 0, 0, 0, 0, w0, RAD);
  for (int s = 0; s < 2; ++s) {
    cp_world *w = wt_world(text, dyn[s], h);
    double x[13], tstop = -1, yaw = 0;
    for (int i = 0; i < 200; ++i) {
      wt_run(w, 1, NULL);
      cp_world_get_state(w, x);
      if (tstop < 0) {
        yaw += h * x[12];
        if (fabs(x[12]) <= 1e-6) tstop = cp_world_time(w);
      }
    }
    cr_assert(tstop > 0 && fabs(tstop - t) <= h * (1 + 1e-9),
              "%s: stopped at t %.6g, expected %.6g", cp_stepper_name(dyn[s]), tstop, t);
    const double q = 2 * atan2(x[6], x[3]); // the yaw of [w, 0, 0, z]
    cr_assert(fabs(q - turn) <= h * w0 && fabs(yaw - q) <= 1e-9,
              "%s: turned %.6g rad (summed %.6g), expected %.6g",
              cp_stepper_name(dyn[s]), q, yaw, turn);
    cr_assert(hypot(x[0], x[1]) <= 1e-12, "%s: the centre moved (%g, %g)",
              cp_stepper_name(dyn[s]), x[0], x[1]);
    cp_world_destroy(w);
  }
  disc_text(text, sizeof text, 0, 0, 0, 0, w0, 0);
  cp_world *w = wt_world(text, CP_STEPPER_ACCELERATION, h);
  wt_run(w, 200, NULL);
  double x[13];
  cp_world_get_state(w, x);
  cr_assert(fabs(x[12] - w0) <= 1e-12, "one point: w %.12g", x[12]);
  cp_world_destroy(w);
}

// A pad on a prismatic joint (0.5 kg, effort 30 N along x) pushes the disc
// from the start: the pad's contact sticks (friction 0.9, no tangential
// load) while the four support points slide, all in one friction LCP
// (the support's known c_n in q, its column the unit one: lcp.c,
// fixed_q). Disc and pad move together at a = (F - mu m g) / (m + m_pad):
// v after n steps is n h a to rounding, the gap between them stays, the
// disc neither drifts sideways nor turns, and no step falls back to the
// velocity stepper.
Test(world_support, pad_pushes_sliding_disc) {
  const double h = 1e-3, F = 30, mpad = 0.5, a = (F - MU * MASS * G) / (MASS + mpad);
  char text[1024];
  snprintf(text, sizeof text,
           "{\"gravity\": [0, 0, %.17g], \"friction\": {\"default\": 0.9}, "
           "\"bodies\": [{\"name\": \"disc\", \"mass\": %g, \"shape\": "
           "{\"type\": \"cylinder\", \"radius\": %g, \"length\": 0.05}, "
           "\"position\": [0, 0, 0.3], \"planar\": {\"normal\": [0, 0, 1], "
           "\"support_friction\": %g, \"support_radius\": %g}}], "
           "\"manipulators\": [{\"name\": \"p\", \"base\": {\"position\": "
           "[-0.15, 0, 0.3]}, \"joints\": [{\"name\": \"x\", \"type\": "
           "\"prismatic\", \"axis\": [1, 0, 0], \"effort\": %g, \"link\": "
           "{\"name\": \"pad\", \"mass\": %g, \"shape\": {\"type\": \"box\", "
           "\"size\": [0.1, 0.2, 0.05]}}}]}]}",
           -G, MASS, RAD, MU, RAD, F, mpad);
  for (int s = 0; s < 2; ++s) {
    cp_world *w = wt_world(text, dyn[s], h);
    double x[15];
    for (int k = 1; k <= 300; ++k) {
      cr_assert(wt_run(w, 1, NULL) == 0, "%s: step %d fell back",
                cp_stepper_name(dyn[s]), k);
      cp_world_get_state(w, x);
      // The contact's compliance (kappa 1e-6) settles within the first
      // steps: the pad gains kappa-relative speed on the disc, then the
      // settling is held (docs/simulate.md, "Compliance").
      cr_assert(fabs(x[7] - k * h * a) <= 4e-6 * h * a &&
                    fabs(x[14] - x[7]) <= 4e-6 * h * a,
                "%s: step %d: disc v %.12g, pad v %.12g, expected %.12g",
                cp_stepper_name(dyn[s]), k, x[7], x[14], k * h * a);
    }
    const double n = 300;
    cr_assert(fabs(x[7] - n * h * a) <= 1e-9 * n * h * a &&
                  fabs(x[0] - h * h * a * n * (n + 1) / 2) <= 1e-9,
              "%s: v %.12g at x %.12g, expected %.12g at %.12g", cp_stepper_name(dyn[s]),
              x[7], x[0], n * h * a, h * h * a * n * (n + 1) / 2);
    cr_assert(fabs(x[13] - x[0]) <= 1e-9 && fabs(x[1]) <= 1e-12 && fabs(x[12]) <= 1e-9,
              "%s: pad at %.12g, disc at (%.12g, %g), w %g", cp_stepper_name(dyn[s]),
              x[13], x[0], x[1], x[12]);
    cp_world_destroy(w);
  }
}

// The keys' errors name the JSON path and what was expected; a support
// without gravity along the normal is the world's error, at the key.
static void scene_error(const char *planar, const char *path, const char *what) {
  char text[1024];
  snprintf(text, sizeof text,
           "{\"bodies\": [{\"name\": \"disc\", \"mass\": 1, \"shape\": "
           "{\"type\": \"cylinder\", \"radius\": 0.1, \"length\": 0.05}, "
           "\"planar\": %s}]}",
           planar);
  cp_scene sc;
  cp_error err;
  cp_error_clear(&err);
  cr_assert(cp_scene_parse_geometry(text, strlen(text), NULL, NULL, &sc, &err) != 0,
            "accepted: %s", text);
  cr_assert(!strcmp(err.where, path), "path \"%s\", expected \"%s\" (%s)", err.where,
            path, err.msg);
  cr_assert(strstr(err.msg, what), "message \"%s\" lacks \"%s\"", err.msg, what);
}

Test(world_support, bad_keys) {
  scene_error("{\"normal\": [0, 0, 1], \"support_friction\": -0.3}",
              "bodies[0].planar.support_friction", ">= 0");
  scene_error("{\"normal\": [0, 0, 1], \"support_friction\": \"high\"}",
              "bodies[0].planar.support_friction", "number");
  scene_error("{\"normal\": [0, 0, 1], \"support_friction\": 0.3, \"support_radius\": -1}",
              "bodies[0].planar.support_radius", ">= 0");
  scene_error("{\"normal\": [0, 0, 1], \"support_radius\": 0.1}",
              "bodies[0].planar.support_radius", "support_friction");
  scene_error("{\"normal\": [0, 0, 1], \"support\": 0.3}", "bodies[0].planar.support", "");
  const char *text =
      "{\"gravity\": [0, -9.81, 0], \"bodies\": [{\"name\": \"disc\", \"mass\": 1, "
      "\"shape\": {\"type\": \"cylinder\", \"radius\": 0.1, \"length\": 0.05}, "
      "\"planar\": {\"normal\": [0, 0, 1], \"support_friction\": 0.3}}]}";
  cp_scene sc;
  wt_scene(text, &sc);
  cp_world_options o = cp_world_defaults();
  cp_world *w = NULL;
  cp_error err;
  cp_error_clear(&err);
  cr_assert_eq(cp_world_create(&sc, &o, &w, &err), CP_WORLD_BAD_INPUT);
  cr_assert(w == NULL && !strcmp(err.where, "bodies[0].planar.support_friction") &&
                strstr(err.msg, "gravity"),
            "%s: %s", err.where, err.msg);
  cp_scene_free(&sc);
}

// The command line: a negative friction exits 2 naming the file and the
// path, writing nothing; a good scene simulates.
Test(world_support, command_line) {
  char *bad = cpt_temp_file(
      "{\"bodies\": [{\"name\": \"disc\", \"mass\": 1, \"shape\": {\"type\": "
      "\"cylinder\", \"radius\": 0.1, \"length\": 0.05}, \"planar\": {\"normal\": "
      "[0, 0, 1], \"support_friction\": -0.5}}]}",
      ".json");
  char csv[] = "/tmp/test_world_support_XXXXXX";
  int fd = mkstemp(csv);
  cr_assert(fd >= 0);
  close(fd);
  unlink(csv);
  char *out, *err;
  const char *a1[] = {"complan", "simulate", bad, "--csv", csv, NULL};
  cr_assert_eq(cpt_run(a1, &out, &err), 2, "%s", err);
  cr_assert(strstr(err, bad) && strstr(err, "bodies[0].planar.support_friction") &&
                strstr(err, ">= 0"),
            "%s", err);
  cr_assert(access(csv, F_OK) != 0, "%s was written", csv);
  free(out), free(err);
  char text[1024];
  disc_text(text, sizeof text, 0, 0, 1, 0, 0, RAD);
  char *good = cpt_temp_file(text, ".json");
  const char *a2[] = {"complan", "simulate", good, "--duration", "0.5", "--csv", csv, NULL};
  cr_assert_eq(cpt_run(a2, &out, &err), 0, "%s", err);
  free(out), free(err);
  char *rows = cpt_read_file(csv, NULL);
  cr_assert(rows && strstr(rows, "disc.x"), "no CSV written");
  free(rows);
  unlink(csv);
  unlink(bad);
  unlink(good);
  free(bad);
  free(good);
}
