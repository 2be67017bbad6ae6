/* overlap_scan: the deepest overlap left after accepted steps in two hard
 * cases of docs/simulate.md ("Speculative contacts", limits), both
 * steppers:
 *   wrist  the test arm tests/data/robots/ur_like (UR5 joints, STL/OBJ
 *          prisms) posed wrist down (tests/models/test_mesh_links.c's
 *          WRIST_DOWN), one of its last four joints spun at +-20 rad/s
 *          (effort 0, the others held by zero accelerations, no gravity)
 *          over a 0.2 m box table whose top is 0.5, 1 or 2 mm below the
 *          wrist's lowest point; dt 5 ms, 1 s;
 *   edges  a free 0.1 m cube, edge down along y (45 deg about y, tilted
 *          0, 0.1 or 0.4 rad about x), dropped from 1 mm, 5 cm or 30 cm
 *          onto a fixed cube with an edge up along x, spin 0, 3 or 10
 *          rad/s about z; dt 2 and 5 ms, 0.6 s.
 * Prints each run deeper than 1e-4 m (the scenes' penetration tolerance),
 * each refused run with its message, and the deepest per case and stepper.
 * Usage: overlap_scan [source root] (default ".": the repository). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/scene.h"
#include "planner/sim/world.h"

/* Steps the scene text with the stepper; the deepest overlap after any
 * accepted step, or -1 when a step was refused (message printed). */
static double run(const char *text, cp_stepper stp, double dt, double seconds,
                  const char *what) {
  cp_scene sc;
  cp_error err = {0};
  if (cp_scene_parse(text, strlen(text), NULL, NULL, &sc, &err)) {
    fprintf(stderr, "overlap_scan: %s: %s: %s\n", what, err.where, err.msg);
    exit(2);
  }
  cp_world_options o = cp_world_defaults();
  o.dt = dt;
  o.stepper = stp;
  cp_world *w;
  if (cp_world_create(&sc, &o, &w, &err) != CP_WORLD_OK) {
    fprintf(stderr, "overlap_scan: %s: %s\n", what, err.msg);
    exit(2);
  }
  cp_scene_free(&sc);
  double deepest = 0;
  for (int k = 0; k < (int)lround(seconds / dt); ++k) {
    cp_step_info si;
    cp_world_status st = cp_world_step(w, &si);
    if (st != CP_WORLD_OK) {
      printf("refused: %s, %s stepper, step %d: %s: %.300s\n", what,
             cp_stepper_name(stp), k, cp_world_status_name(st), cp_world_message(w));
      deepest = -1;
      break;
    }
    if (si.max_penetration > deepest) deepest = si.max_penetration;
  }
  cp_world_destroy(w);
  if (deepest > 1e-4)
    printf("%s, %s stepper: %.3g m\n", what, cp_stepper_name(stp), deepest);
  return deepest;
}

static void report(const char *name, const double *worst, const int *refused,
                   int runs) {
  printf("%s: %d runs per stepper; deepest overlap: acceleration %.3g m, "
         "velocity %.3g m; refused: %d, %d\n",
         name, runs, worst[0], worst[1], refused[0], refused[1]);
}

static void tally(double d, int s, double *worst, int *refused) {
  if (d < 0) refused[s]++;
  else if (d > worst[s]) worst[s] = d;
}

int main(int argc, char **argv) {
  const char *root = argc > 1 ? argv[1] : ".";
  static const char *joint[6] = {"shoulder_pan_joint", "shoulder_lift_joint",
                                 "elbow_joint", "wrist_1_joint",
                                 "wrist_2_joint", "wrist_3_joint"};
  const double q[6] = {0, -1.5707963267948966, 1.5707963267948966, 0,
                       -1.5707963267948966, 0.3};
  /* The wrist's lowest point in that pose (complan contacts against a
   * plane above it): wrist_3_link at (0.31225, 0.11262, 0.38217). */
  const double low[3] = {0.31225, 0.11262, 0.38217};
  double worst[2] = {0, 0};
  int refused[2] = {0, 0}, runs = 0;
  char text[8192], state[2048];
  for (int j = 2; j < 6; ++j)
    for (int sgn = -1; sgn <= 1; sgn += 2)
      for (int g = 0; g < 3; ++g) {
        const double gap = (const double[]){5e-4, 1e-3, 2e-3}[g];
        size_t n = 0;
        for (int k = 0; k < 6; ++k)
          n += (size_t)snprintf(state + n, sizeof state - n,
                                "%s\"%s\": {\"position\": %.17g, \"velocity\": %g, "
                                "\"%s\": 0}",
                                k ? ", " : "", joint[k], q[k], k == j ? 20.0 * sgn : 0.0,
                                k == j ? "effort" : "acceleration");
        snprintf(text, sizeof text,
                 "{\"gravity\": [0, 0, 0], \"bodies\": [{\"name\": \"table\", "
                 "\"fixed\": true, \"shape\": {\"type\": \"box\", \"size\": [0.2, "
                 "0.2, 0.1]}, \"position\": [%.17g, %.17g, %.17g]}], "
                 "\"manipulators\": [{\"name\": \"ur\", \"urdf\": "
                 "\"%s/tests/data/robots/ur_like/urdf/ur_like.urdf\", \"state\": "
                 "{%s}}]}",
                 low[0], low[1], low[2] - gap - 0.05, root, state);
        char what[128];
        snprintf(what, sizeof what, "wrist: %s at %+g rad/s, table %g m below", joint[j],
                 20.0 * sgn, gap);
        for (int s = 0; s < 2; ++s)
          tally(run(text, s ? CP_STEPPER_VELOCITY : CP_STEPPER_ACCELERATION, 5e-3, 1.0,
                    what),
                s, worst, refused);
        ++runs;
      }
  report("wrist", worst, refused, runs);

  worst[0] = worst[1] = 0;
  refused[0] = refused[1] = runs = 0;
  const double pi8 = 0.39269908169872414; /* 22.5 deg */
  const double c = cos(pi8), s8 = sin(pi8);
  for (int a = 0; a < 2; ++a)
    for (int b = 0; b < 3; ++b)
      for (int e = 0; e < 3; ++e)
        for (int f = 0; f < 3; ++f) {
          const double dt = a ? 5e-3 : 2e-3, drop = (const double[]){1e-3, 0.05, 0.3}[b],
                       spin = (const double[]){0, 3, 10}[e],
                       t = (const double[]){0, 0.1, 0.4}[f];
          const double ct = cos(t / 2), st = sin(t / 2);
          /* Ry(45 deg) Rx(t); the lowest point 0.05 sqrt(2) (cos t + sin t)
           * below the centre at most. */
          const double z = 0.05 * sqrt(2) * (1 + cos(t) + sin(t)) + drop;
          snprintf(text, sizeof text,
                   "{\"gravity\": [0, 0, -9.81], \"bodies\": [{\"name\": \"low\", "
                   "\"fixed\": true, \"shape\": {\"type\": \"box\", \"size\": [0.1, "
                   "0.1, 0.1]}, \"orientation\": [%.17g, %.17g, 0, 0]}, {\"name\": "
                   "\"up\", \"mass\": 1, \"shape\": {\"type\": \"box\", \"size\": "
                   "[0.1, 0.1, 0.1]}, \"position\": [0.003, -0.002, %.17g], "
                   "\"orientation\": [%.17g, %.17g, %.17g, %.17g], "
                   "\"angular_velocity\": [0, 0, %g]}]}",
                   c, s8, z, c * ct, c * st, s8 * ct, -s8 * st, spin);
          char what[128];
          snprintf(what, sizeof what, "edges: dt %g, drop %g m, spin %g rad/s, tilt %g rad",
                   dt, drop, spin, t);
          for (int sp = 0; sp < 2; ++sp)
            tally(run(text, sp ? CP_STEPPER_VELOCITY : CP_STEPPER_ACCELERATION, dt, 0.6,
                      what),
                  sp, worst, refused);
          ++runs;
        }
  report("edges", worst, refused, runs);
  return 0;
}
