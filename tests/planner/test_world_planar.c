// Planar bodies (the scene key "planar", planner/sim/planar.c): a body kept
// in a plane by the simulator against closed forms, with forces that push
// it out of the plane (gravity with a component along the normal), under
// both dynamic steppers; the scene key's errors with their JSON paths.
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

// Angle of the rotation q0^-1 q (unit quaternions [w, x, y, z]) and its
// axis (unit, into ax; zero for no rotation), in the world frame: the
// rotation taking q0 to q is q q0^-1.
static double rel_rotation(const double *q0, const double *q, double *ax) {
  // r = q * conj(q0)
  const double w0 = q0[0], x0 = -q0[1], y0 = -q0[2], z0 = -q0[3];
  const double rw = q[0] * w0 - q[1] * x0 - q[2] * y0 - q[3] * z0;
  const double rx = q[0] * x0 + q[1] * w0 + q[2] * z0 - q[3] * y0;
  const double ry = q[0] * y0 - q[1] * z0 + q[2] * w0 + q[3] * x0;
  const double rz = q[0] * z0 + q[1] * y0 - q[2] * x0 + q[3] * w0;
  const double s = sqrt(rx * rx + ry * ry + rz * rz);
  ax[0] = ax[1] = ax[2] = 0;
  if (s > 0) ax[0] = rx / s, ax[1] = ry / s, ax[2] = rz / s;
  if (rw < 0) ax[0] = -ax[0], ax[1] = -ax[1], ax[2] = -ax[2];
  return 2 * atan2(s, fabs(rw));
}

// A 2 kg box (0.3 x 0.2 x 0.1 m) tilted 0.4 rad about x (so that y is not a
// principal axis of its world inertia) flying without contact under gravity
// (1, 2, -9.81) with velocity (0.3, 0, 0.5) and spin 3 rad/s about y, kept
// in the x-z plane (normal y). Newton-Euler with the constraint: the
// constraint force cancels m g_y, the constraint torque cancels the
// gyroscopic torque's x and z parts (w x I w, which would make a free body
// wobble); so the centre moves as x_n = x_0 + n h v_0 + h^2 g n (n + 1) / 2
// under semi-implicit Euler (exactly, to rounding), y never changes, and the
// body turns about y at a constant 3 rad/s (I_yy of the world inertia is
// constant under rotations about y). Unconstrained, the same body leaves
// the plane and wobbles (checked: the test can fail).
static void flight_text(char *t, size_t n, int planar) {
  const double c = cos(0.2), s = sin(0.2);
  snprintf(t, n,
           "{\"gravity\": [1, 2, -9.81], \"bodies\": [{\"name\": \"box\", "
           "\"mass\": 2, \"shape\": {\"type\": \"box\", \"size\": [0.3, 0.2, "
           "0.1]}, \"position\": [0.1, 0.25, 1.0], \"orientation\": [%.17g, "
           "%.17g, 0, 0], \"velocity\": [0.3, 0, 0.5], \"angular_velocity\": "
           "[0, 3, 0]%s}]}",
           c, s, planar ? ", \"planar\": {\"normal\": [0, 1, 0]}" : "");
}

Test(world_planar, free_flight_stays_in_plane) {
  const double h = 1e-3, g[3] = {1, 2, -9.81}, v0[3] = {0.3, 0, 0.5},
               x0[3] = {0.1, 0.25, 1.0};
  const int n = 400;
  char text[1024];
  flight_text(text, sizeof text, 1);
  for (int s = 0; s < 2; ++s) {
    cp_world *w = wt_world(text, dyn[s], h);
    double x[13], q0[4];
    cp_world_get_state(w, x);
    memcpy(q0, x + 3, sizeof q0);
    for (int k = 1; k <= n; ++k) {
      wt_run(w, 1, NULL);
      cp_world_get_state(w, x);
      cr_assert(x[1] == 0.25 && x[8] == 0, "%s: step %d: y %.17g vy %g",
                cp_stepper_name(dyn[s]), k, x[1], x[8]);
      cr_assert(x[10] == 0 && x[12] == 0 && fabs(x[11] - 3) <= 1e-12,
                "%s: step %d: w (%g, %.17g, %g)", cp_stepper_name(dyn[s]), k,
                x[10], x[11], x[12]);
    }
    for (int d = 0; d < 3; d += 2) {
      const double e = x0[d] + n * h * v0[d] + h * h * g[d] * n * (n + 1) / 2.0;
      cr_assert(fabs(x[d] - e) <= 1e-12, "%s: x[%d] %.17g, expected %.17g",
                cp_stepper_name(dyn[s]), d, x[d], e);
      const double ve = v0[d] + n * h * g[d];
      cr_assert(fabs(x[7 + d] - ve) <= 1e-12, "%s: v[%d] %.17g, expected %.17g",
                cp_stepper_name(dyn[s]), d, x[7 + d], ve);
    }
    double ax[3];
    const double ang = rel_rotation(q0, x + 3, ax);
    cr_assert(fabs(ang - 3 * n * h) <= 1e-9 && fabs(ax[1] - 1) <= 1e-12,
              "%s: turned %.12g rad about (%g, %g, %g), expected %.12g about y",
              cp_stepper_name(dyn[s]), ang, ax[0], ax[1], ax[2], 3 * n * h);
    cp_world_destroy(w);
  }
  // The same body without the constraint leaves the plane and wobbles.
  flight_text(text, sizeof text, 0);
  cp_world *w = wt_world(text, CP_STEPPER_ACCELERATION, h);
  wt_run(w, n, NULL);
  double x[13];
  cp_world_get_state(w, x);
  cr_assert(fabs(x[1] - 0.25) > 0.1 && fabs(x[10]) + fabs(x[12]) > 0.1,
            "free: y %g, w (%g, %g, %g)", x[1], x[10], x[11], x[12]);
  cp_world_destroy(w);
}

// A 1 kg box (0.2 x 0.1 x 0.1 m) sliding at 1 m/s along x on a floor
// (mu 0.3) under gravity (1, 3, -9.81), kept in the x-z plane. The
// constraint takes the 3 N out-of-plane pull, so friction acts along x
// only: the box decelerates at mu g_z - g_x = 1.943 m/s^2 and stops after
// v0^2 / (2 a) (1 %) at t = v0 / a (within a step), then holds (|g_x| <
// mu g_z); y and the orientation never change. Unconstrained, the pull
// (3.16 N against a friction limit of 2.94 N) slides it off sideways.
static void floor_text(char *t, size_t n, int planar) {
  snprintf(t, n,
           "{\"gravity\": [1, 3, -9.81], \"friction\": {\"default\": 0.3}, "
           "\"bodies\": [{\"name\": \"floor\", \"fixed\": true, \"shape\": "
           "{\"type\": \"plane\", \"normal\": [0, 0, 1], \"offset\": 0}}, "
           "{\"name\": \"box\", \"mass\": 1, \"shape\": {\"type\": \"box\", "
           "\"size\": [0.2, 0.1, 0.1]}, \"position\": [0, 0, 0.05], "
           "\"velocity\": [1, 0, 0]%s}]}",
           planar ? ", \"planar\": {\"normal\": [0, -1, 0]}" : "");
}

Test(world_planar, box_on_floor_pulled_sideways) {
  const double h = 1e-3, mu = 0.3, a = mu * 9.81 - 1.0, v0 = 1.0;
  char text[1024];
  floor_text(text, sizeof text, 1);
  for (int s = 0; s < 2; ++s) {
    cp_world *w = wt_world(text, dyn[s], h);
    double x[13], tstop = -1;
    for (int k = 0; k < 800; ++k) {
      wt_run(w, 1, NULL);
      cp_world_get_state(w, x);
      cr_assert(x[1] == 0 && x[8] == 0 && x[10] == 0 && x[12] == 0,
                "%s: step %d: y %g vy %g wx %g wz %g", cp_stepper_name(dyn[s]),
                k, x[1], x[8], x[10], x[12]);
      if (tstop < 0 && fabs(x[7]) <= 1e-6) tstop = cp_world_time(w);
    }
    const double d = v0 * v0 / (2 * a), t = v0 / a;
    cr_assert(tstop > 0, "%s: never stopped (vx %g)", cp_stepper_name(dyn[s]), x[7]);
    cr_assert(fabs(x[0] - d) <= 0.01 * d, "%s: stopped at %.6g m, expected %.6g",
              cp_stepper_name(dyn[s]), x[0], d);
    cr_assert(fabs(tstop - t) <= h * (1 + 1e-9), "%s: stopped at t = %.6g, expected %.6g",
              cp_stepper_name(dyn[s]), tstop, t);
    double ax[3], id[4] = {1, 0, 0, 0};
    cr_assert(rel_rotation(id, x + 3, ax) <= 1e-9, "%s: turned", cp_stepper_name(dyn[s]));
    cr_assert(fabs(x[2] - 0.05) <= 1e-6, "%s: z %g", cp_stepper_name(dyn[s]), x[2]);
    cp_world_destroy(w);
  }
  floor_text(text, sizeof text, 0);
  cp_world *w = wt_world(text, CP_STEPPER_ACCELERATION, h);
  wt_run(w, 800, NULL);
  double x[13];
  cp_world_get_state(w, x);
  cr_assert(x[1] > 0.05, "free: y %g", x[1]);
  cp_world_destroy(w);
}

// A solid cylinder (r 0.1 m, length 0.2 m, 1 kg) lying on a floor with its
// axis along y, kept in the x-z plane, under gravity g (sin t, p, -cos t)
// with t = 0.3 rad (an incline of t) and p = 0.5 (a pull along the axis,
// out of the plane). With mu 0.8 >= tan(t) / 3 it rolls without slipping:
// its centre accelerates at a = g sin t / (1 + I / (m r^2)) = (2/3) g sin t
// and w_y = v_x / r. Checked: (1) against the closed form over the first
// 0.2 s (1 %); (2) against the same cylinder free in 3D without the pull,
// which the constrained one must follow step for step (1e-6 relative);
// y and the axis never move.
//
// Over longer runs both fall behind the closed form alike (1.7 % by 0.5 s):
// the simulator treats the rim's contact point as a material point, whose
// centripetal acceleration w^2 r reads as the floor falling away (the
// correction stepsys.c makes for spheres is not made for a cylinder on
// its side), so drift correction keeps pushing the centre up at a cost in
// kinetic energy. That is not the planar constraint's doing (check 2).
static void roller_text(char *t, size_t n, double pull, int planar) {
  const double g = 9.81, th = 0.3, c = sqrt(0.5);
  snprintf(t, n,
           "{\"gravity\": [%.17g, %.17g, %.17g], \"friction\": {\"default\": "
           "0.8}, \"bodies\": [{\"name\": \"floor\", \"fixed\": true, "
           "\"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1], "
           "\"offset\": 0}}, {\"name\": \"roller\", \"mass\": 1, \"shape\": "
           "{\"type\": \"cylinder\", \"radius\": 0.1, \"length\": 0.2}, "
           "\"position\": [0, 0, 0.1], \"orientation\": [%.17g, %.17g, 0, 0]%s}]}",
           g * sin(th), pull * g, -g * cos(th), c, -c,
           planar ? ", \"planar\": {\"normal\": [0, 1, 0]}" : "");
}

Test(world_planar, cylinder_rolls) {
  const double h = 1e-3, g = 9.81, th = 0.3, r = 0.1;
  const double a = 2.0 / 3.0 * g * sin(th);
  char text[1024], ftext[1024];
  roller_text(text, sizeof text, 0.5, 1);
  roller_text(ftext, sizeof ftext, 0.0, 0);
  for (int s = 0; s < 2; ++s) {
    cp_world *w = wt_world(text, dyn[s], h), *f = wt_world(ftext, dyn[s], h);
    double x[13], y[13], q0[4];
    cp_world_get_state(w, x);
    memcpy(q0, x + 3, sizeof q0);
    for (int k = 1; k <= 500; ++k) {
      wt_run(w, 1, NULL);
      wt_run(f, 1, NULL);
      cp_world_get_state(w, x);
      cp_world_get_state(f, y);
      cr_assert(x[1] == 0 && x[8] == 0 && x[10] == 0 && x[12] == 0,
                "%s: step %d: y %g vy %g wx %g wz %g", cp_stepper_name(dyn[s]),
                k, x[1], x[8], x[10], x[12]);
      const int c[4] = {0, 2, 7, 11};
      for (int i = 0; i < 4; ++i)
        cr_assert(fabs(x[c[i]] - y[c[i]]) <= 1e-6 * (fabs(y[c[i]]) + 1e-3),
                  "%s: step %d: state[%d] %.12g, free without the pull %.12g",
                  cp_stepper_name(dyn[s]), k, c[i], x[c[i]], y[c[i]]);
      if (k == 200) {
        const double am = x[7] / cp_world_time(w);
        cr_assert(fabs(am - a) <= 0.01 * a, "%s: a = %.6g, expected %.6g",
                  cp_stepper_name(dyn[s]), am, a);
        cr_assert(fabs(x[11] * r - x[7]) <= 0.01 * x[7], "%s: w r %g v %g",
                  cp_stepper_name(dyn[s]), x[11] * r, x[7]);
      }
    }
    double ax[3];
    rel_rotation(q0, x + 3, ax);
    cr_assert(fabs(fabs(ax[1]) - 1) <= 1e-12, "%s: turned about (%g, %g, %g)",
              cp_stepper_name(dyn[s]), ax[0], ax[1], ax[2]);
    cp_world_destroy(w);
    cp_world_destroy(f);
  }
}

// The scene key's errors name the JSON path and what was expected.
static void scene_error(const char *body_extra, const char *path,
                        const char *what) {
  char text[1024];
  snprintf(text, sizeof text,
           "{\"bodies\": [{\"name\": \"box\", \"mass\": 1, \"shape\": "
           "{\"type\": \"box\", \"size\": [0.1, 0.1, 0.1]}%s}]}",
           body_extra);
  cp_scene sc;
  cp_error err;
  cp_error_clear(&err);
  cr_assert(cp_scene_parse_geometry(text, strlen(text), NULL, NULL, &sc, &err) != 0,
            "accepted: %s", text);
  cr_assert(!strcmp(err.where, path), "path \"%s\", expected \"%s\" (%s)",
            err.where, path, err.msg);
  cr_assert(strstr(err.msg, what), "message \"%s\" lacks \"%s\"", err.msg, what);
}

Test(world_planar, bad_keys) {
  scene_error(", \"planar\": {\"normal\": [1, 1, 0]}", "bodies[0].planar.normal",
              "world axis");
  scene_error(", \"planar\": {\"normal\": [0, 0, 0]}", "bodies[0].planar.normal",
              "non-zero");
  scene_error(", \"planar\": {\"axis\": [0, 0, 1]}", "bodies[0].planar.axis", "");
  scene_error(", \"planar\": {}", "bodies[0].planar.normal", "missing");
  scene_error(", \"planar\": true", "bodies[0].planar", "expected an object");
  scene_error(", \"velocity\": [0, 0, 1], \"planar\": {\"normal\": [0, 0, 1]}",
              "bodies[0].velocity", "along its normal");
  scene_error(", \"angular_velocity\": [1, 0, 0], \"planar\": {\"normal\": [0, 0, 1]}",
              "bodies[0].angular_velocity", "only about its normal");
  scene_error(", \"fixed\": true, \"planar\": {\"normal\": [0, 0, 1]}",
              "bodies[0].planar", "fixed");
}

// The world refuses what the scene key cannot catch: the quasistatic
// stepper, and a state (cp_world_set_state) moving a planar body out of its
// plane; the state stays as it was.
Test(world_planar, world_refuses) {
  const char *text =
      "{\"gravity\": [0, 0, 0], \"bodies\": [{\"name\": \"box\", \"mass\": 1, "
      "\"shape\": {\"type\": \"box\", \"size\": [0.1, 0.1, 0.1]}, "
      "\"planar\": {\"normal\": [0, 0, 1]}}]}";
  cp_scene sc;
  wt_scene(text, &sc);
  cp_world_options o = cp_world_defaults();
  o.stepper = CP_STEPPER_QUASISTATIC;
  cp_world *w = NULL;
  cp_error err;
  cp_error_clear(&err);
  cr_assert_eq(cp_world_create(&sc, &o, &w, &err), CP_WORLD_BAD_INPUT);
  cr_assert(w == NULL && strstr(err.msg, "quasistatic") &&
                !strcmp(err.where, "bodies[0].planar"),
            "%s: %s", err.where, err.msg);
  cp_scene_free(&sc);
  w = wt_world(text, CP_STEPPER_ACCELERATION, 1e-3);
  double x[13], x0[13];
  cp_world_get_state(w, x0);
  memcpy(x, x0, sizeof x);
  x[9] = 0.1; // velocity along z
  cr_assert_eq(cp_world_set_state(w, x), CP_WORLD_BAD_INPUT);
  cr_assert(strstr(cp_world_message(w), "along z"), "%s", cp_world_message(w));
  memcpy(x, x0, sizeof x);
  x[11] = 0.1; // turning about y
  cr_assert_eq(cp_world_set_state(w, x), CP_WORLD_BAD_INPUT);
  cr_assert(strstr(cp_world_message(w), "about y"), "%s", cp_world_message(w));
  cp_world_get_state(w, x);
  cr_assert(!memcmp(x, x0, sizeof x), "the state changed");
  x[7] = 0.5, x[12] = 2; // in the plane: accepted
  cr_assert_eq(cp_world_set_state(w, x), CP_WORLD_OK);
  cp_world_destroy(w);
}

// The command line: a bad key exits 2 naming the file and the JSON path,
// writing nothing; the quasistatic stepper and `solve` refuse a planar body
// (exit 2, the body's path); a good planar scene simulates.
Test(world_planar, command_line) {
  char *bad = cpt_temp_file(
      "{\"bodies\": [{\"name\": \"box\", \"mass\": 1, \"shape\": {\"type\": "
      "\"box\", \"size\": [0.1, 0.1, 0.1]}, \"planar\": {\"normal\": [0, 1, "
      "1]}}]}",
      ".json");
  char csv[] = "/tmp/test_world_planar_XXXXXX";
  int fd = mkstemp(csv);
  cr_assert(fd >= 0);
  close(fd);
  unlink(csv);
  char *out, *err;
  const char *a1[] = {"complan", "simulate", bad, "--csv", csv, NULL};
  cr_assert_eq(cpt_run(a1, &out, &err), 2, "%s", err);
  cr_assert(strstr(err, bad) && strstr(err, "bodies[0].planar.normal") &&
                strstr(err, "world axis"),
            "%s", err);
  cr_assert(access(csv, F_OK) != 0, "%s was written", csv);
  free(out), free(err);
  char *good = cpt_temp_file(
      "{\"gravity\": [0, 1, -9.81], \"bodies\": [{\"name\": \"box\", \"mass\": "
      "1, \"shape\": {\"type\": \"box\", \"size\": [0.1, 0.1, 0.1]}, "
      "\"position\": [0, 0, 1], \"planar\": {\"normal\": [0, 1, 0]}}]}",
      ".json");
  const char *a2[] = {"complan", "simulate", good, "--stepper", "quasistatic", NULL};
  cr_assert_eq(cpt_run(a2, &out, &err), 2, "%s", err);
  cr_assert(strstr(err, "bodies[0].planar") && strstr(err, "quasistatic"), "%s", err);
  free(out), free(err);
  const char *a3[] = {"complan", "solve", good, NULL};
  cr_assert_eq(cpt_run(a3, &out, &err), 2, "%s", err);
  cr_assert(strstr(err, "bodies[0].planar") && strstr(err, "solve does not support"),
            "%s", err);
  free(out), free(err);
  const char *a4[] = {"complan", "simulate", good, "--duration", "0.1", "--csv", csv, NULL};
  cr_assert_eq(cpt_run(a4, &out, &err), 0, "%s", err);
  free(out), free(err);
  char *rows = cpt_read_file(csv, NULL);
  cr_assert(rows && strstr(rows, "box.y"), "no CSV written");
  free(rows);
  unlink(csv);
  unlink(bad);
  unlink(good);
  free(bad);
  free(good);
}
