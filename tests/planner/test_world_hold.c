// The Allegro hand holding a cube by constant joint efforts
// (tests/data/robots/allegro_hold.json, issue 26's bench scene): the
// contact problem of the initial state balances the cube, checked here
// against Newton-Euler from the scene's own contact frames, and both
// steppers keep the cube in place while the unstable equilibrium lasts.
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "contact/problem.h"
#include "models/system.h"
#include "planner/sim/world.h"
#include "wtest.h"

static void hold_scene(cp_scene *sc) {
  char path[1024];
  snprintf(path, sizeof path, "%s/robots/allegro_hold.json", getenv("CP_TEST_DATA"));
  cp_error err;
  cp_error_clear(&err);
  cr_assert_eq(cp_scene_load(path, NULL, sc, &err), 0, "%s: %s", err.where, err.msg);
}

static void cross(const double *a, const double *b, double *c) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

// The initial state's contact problem: three fingertip contacts (thumb,
// index, middle) all rolling; the forces it finds on the cube, put
// together from the scene's contact frames, cancel the cube's weight and
// have no moment about its centre (the cube is at rest: Newton-Euler with
// zero acceleration); the cube's and the joints' accelerations are ~0.
Test(world_hold, solve_balances_the_cube) {
  cp_scene sc;
  hold_scene(&sc);
  cr_assert_eq(sc.n_contacts, 3, "%d contacts", sc.n_contacts);
  cp_ref cube;
  cr_assert_eq(cp_scene_find(&sc, "cube", &cube), 0);
  cp_system sys;
  cp_error err;
  cr_assert_eq(cp_system_build(&sc, &sys, &err), 0, "%s", err.msg);
  cp_problem_options opt = cp_problem_defaults();
  cp_problem_result res;
  cr_assert_eq(cp_problem_solve(&sys, &opt, &res), CP_LCP_SOLVED, "%s", res.info.reason);
  const cp_body *b = &sc.bodies[cube.body];
  double force[3], moment[3] = {0, 0, 0}, load = 0;
  for (int k = 0; k < 3; ++k) force[k] = b->mass * sc.gravity[k];
  for (int j = 0; j < sc.n_contacts; ++j) {
    const cp_contact *c = &sc.contacts[j];
    cr_assert_eq(c->a.body, cube.body, "contact %d is not on the cube", j);
    cr_assert_eq(res.outcome[j], CP_OUTCOME_ROLLING, "contact %d %s", j,
                 cp_outcome_name(res.outcome[j]));
    const double *cf = res.force + 3 * j;
    cr_assert(cf[0] > 1.0, "contact %d presses with %g N only", j, cf[0]);
    // inside the friction pyramid with a margin: the grasp is not at the
    // edge of slipping
    cr_assert(fabs(cf[1]) <= 0.5 * c->mu * cf[0] && fabs(cf[2]) <= 0.5 * c->mu * cf[0],
              "contact %d: friction %g %g of normal %g", j, cf[1], cf[2], cf[0]);
    double f[3], r[3], m[3];
    for (int k = 0; k < 3; ++k) {
      f[k] = cf[0] * c->n[k] + cf[1] * c->t[k] + cf[2] * c->o[k];
      force[k] += f[k];
      r[k] = c->p[k] - b->x[k];
    }
    cross(r, f, m);
    for (int k = 0; k < 3; ++k) moment[k] += m[k];
    load += cf[0];
  }
  const double weight = b->mass * 9.81;
  for (int k = 0; k < 3; ++k) {
    cr_assert(fabs(force[k]) <= 1e-6 * load, "net force %g %g %g", force[0], force[1], force[2]);
    cr_assert(fabs(moment[k]) <= 1e-6 * load * 0.03, "net moment %g %g %g", moment[0],
              moment[1], moment[2]);
  }
  cr_assert(load > 5 * weight, "squeeze %g N for a weight of %g N", load, weight);
  for (int i = 0; i < sys.n_u; ++i)
    cr_assert(fabs(res.udot[i]) <= 1e-5, "acceleration %d: %g", i, res.udot[i]);
  cp_problem_result_free(&res);
  cp_system_free(&sys);
  cp_scene_free(&sc);
}

// Steps of 5 ms from the scene's state (efforts as given, or all zero)
// with a stepper; returns the cube's displacement after `steps` steps.
static double cube_drift(cp_stepper st, int steps, int limp) {
  cp_scene sc;
  hold_scene(&sc);
  if (limp)
    for (int m = 0; m < sc.n_manips; ++m)
      for (int j = 0; j < sc.manips[m].n; ++j) sc.manips[m].joints[j].effort = 0;
  cp_world_options o = cp_world_defaults();
  o.dt = 5e-3;
  o.stepper = st;
  cp_world *w;
  cp_error err;
  cr_assert_eq(cp_world_create(&sc, &o, &w, &err), CP_WORLD_OK, "%s", err.msg);
  cp_scene_free(&sc);
  const int ib = wt_body(w, "cube"), n = cp_world_state_size(w);
  double *x = malloc(sizeof(double) * (size_t)n), x0[3];
  cp_world_get_state(w, x);
  for (int k = 0; k < 3; ++k) x0[k] = x[ib + k];
  wt_run(w, steps, NULL);
  cp_world_get_state(w, x);
  const double d = sqrt(pow(x[ib] - x0[0], 2) + pow(x[ib + 1] - x0[1], 2) +
                        pow(x[ib + 2] - x0[2], 2));
  free(x);
  cp_world_destroy(w);
  return d;
}

// 0.15 s (30 steps): the cube stays within 5 um with either stepper (8.1e-8
// m measured in session 29). The equilibrium is unstable under constant
// efforts (a pressing finger buckles): the drift grows about eightfold
// every 50 ms (5.8e-7 m at 0.2 s) and the cube is lost after about 0.4 s,
// so the test stops early, with room for rounding to seed the growth
// differently on another build. With the efforts off the cube falls: more
// than 1 cm in the same 0.15 s.
Test(world_hold, cube_held_then_dropped_when_limp, .timeout = 600) {
  for (int st = 0; st < 2; ++st) {
    const cp_stepper s = st ? CP_STEPPER_VELOCITY : CP_STEPPER_ACCELERATION;
    const double held = cube_drift(s, 30, 0), limp = cube_drift(s, 30, 1);
    cr_assert(held <= 5e-6, "%s stepper: the held cube moved %g m", cp_stepper_name(s), held);
    cr_assert(limp >= 1e-2, "%s stepper: the limp hand's cube moved %g m only",
              cp_stepper_name(s), limp);
  }
}
