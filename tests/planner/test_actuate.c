/* Robot-ready inputs (issue 23 item 1; planner/sim/actuate.h,
 * docs/planner.md "Input kinds"): gravity compensation holds the Panda and
 * the Allegro hand still (its g(q) against the world's potential energy
 * differentiated numerically), a single joint's PD response against the
 * analytic second-order one, a joint target reached through a task, a
 * Cartesian displacement of the Panda's fingertip, and bad inputs refused
 * with their JSON path. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "models/vec3.h"
#include "planner/plan/plan.h"
#include "planner/search/task.h"
#include "planner/sim/actuate.h"
#include "planner/sim/statelayout.h"
#include "planner/sim/world.h"
#include "tests/support.h"

#define ERD "robots/example-robot-data"
#define PANDA ERD "/robots/panda_description/urdf/panda_collision.urdf"
#define ALLEGRO ERD "/robots/allegro_hand_description/urdf/allegro_right_hand.urdf"

/* Start positions within the limits. */
#define PANDA_STATE                                                          \
  "{\"panda_joint2\": {\"position\": -0.3},"                                  \
  " \"panda_joint4\": {\"position\": -2.0},"                                  \
  " \"panda_joint6\": {\"position\": 1.8},"                                   \
  " \"panda_joint7\": {\"position\": 0.7},"                                   \
  " \"panda_finger_joint1\": {\"position\": 0.02}}"
#define ALLEGRO_STATE "{\"joint_12.0\": {\"position\": 0.5}}"

/* A scene of one URDF robot in free space under gravity (malloc'd). */
static char *robot_scene_with(const char *urdf, const char *base,
                              const char *bodies) {
  char pkg[2048], path[2048];
  snprintf(pkg, sizeof pkg, "%s", cpt_data(ERD));
  snprintf(path, sizeof path, "%s", cpt_data(urdf));
  char *s = malloc(8192);
  snprintf(s, 8192,
           "{\"gravity\": [0, 0, -9.81], \"packages\": {\"example-robot-data\":"
           " \"%s\"}, \"bodies\": [], \"manipulators\": [{\"name\": \"r\","
           " \"urdf\": \"%s\", \"state\": %s, \"base\": %s}]}",
           pkg, path, strstr(urdf, "panda") ? PANDA_STATE : ALLEGRO_STATE, base);
  char *b = strstr(s, "\"bodies\": []");
  char *t = malloc(16384);
  snprintf(t, 16384, "%.*s\"bodies\": [%s]%s", (int)(b - s), s, bodies,
           b + strlen("\"bodies\": []"));
  free(s);
  return t;
}

static char *robot_scene(const char *urdf, const char *base) {
  return robot_scene_with(urdf, base, "");
}

static cp_world *world_of(const char *text, double dt) {
  cp_scene sc;
  cp_error e;
  cp_scene_options so = cp_scene_options_defaults();
  cr_assert_eq(cp_scene_parse(text, strlen(text), NULL, &so, &sc, &e), 0,
               "%s: %s", e.where, e.msg);
  cp_world_options o = cp_world_defaults();
  o.dt = dt;
  cp_world *w;
  cr_assert_eq(cp_world_create(&sc, &o, &w, &e), CP_WORLD_OK, "%s", e.msg);
  cp_scene_free(&sc);
  return w;
}

/* Every joint row of the world's chain 0 as an actuator holding its
 * current position (gains from the defaults at dt for 1 s actions). */
static int hold_all(cp_world *w, cp_actuator *a, int *row, double dt,
                    cp_actuate_work *aw) {
  const cp_scene *s = cp_world_scene(w);
  const cp_chain *c = &s->manips[0];
  int n = 0;
  for (int k = 0; k < c->n; ++k) {
    if (c->joints[k].is_mimic) continue;
    a[n].manip = 0;
    a[n].joint = k;
    a[n].target = c->joints[k].position;
    double held, inertia = cp_actuate_inertia(c, k, aw, &held);
    cr_assert(inertia > 0 && held >= inertia * (1 - 1e-12), "%g %g", held,
              inertia);
    cp_actuate_default_gains(held, inertia, 1.0, dt, &a[n].kp, &a[n].kd);
    cr_assert(cp_actuate_stability(a[n].kp, a[n].kd, inertia, dt) < 2);
    a[n].limit = 0;
    row[n] = n;
    ++n;
  }
  return n;
}

/* Random joint positions within the limits (a 10 % margin), rates 0. */
static void random_config(cp_world *w, uint64_t *seed) {
  int n = cp_world_state_size(w);
  double *x = malloc((size_t)n * sizeof *x);
  cp_world_get_state(w, x);
  const cp_scene *s = cp_world_scene(w);
  cp_state_layout l;
  cr_assert_eq(cp_state_layout_init(&l, s), 0);
  for (int r = 0; r < l.n_joints; ++r) {
    const cp_joint *j = &s->manips[l.row_manip[r]].joints[l.row_joint[r]];
    double lo = j->has_limits ? j->lower : -3.0, hi = j->has_limits ? j->upper : 3.0;
    double m = 0.1 * (hi - lo);
    x[13 * l.n_free + 2 * r] = cpt_uniform(seed, lo + m, hi - m);
    x[13 * l.n_free + 2 * r + 1] = 0;
  }
  cp_state_layout_free(&l);
  cr_assert_eq(cp_world_set_state(w, x), CP_WORLD_OK);
  free(x);
}

/* g(q) of the compensation against central differences of the world's
 * potential energy (cp_world_energy at zero rates), then 1 s held: every
 * joint within 1e-6 of where it started. */
static void holds_still(const char *urdf, const char *base, int configs) {
  const double dt = 1e-3;
  char *text = robot_scene(urdf, base);
  cp_world *w = world_of(text, dt);
  free(text);
  cp_actuate_work aw;
  cr_assert_eq(cp_actuate_work_init(&aw, cp_world_scene(w)), 0);
  int n = cp_world_state_size(w);
  double *x0 = malloc((size_t)n * sizeof *x0), *x = malloc((size_t)n * sizeof *x);
  cp_actuator a[64];
  int row[64];
  double eff[64], comp[64];
  uint64_t seed = 23;
  for (int c = 0; c < configs; ++c) {
    random_config(w, &seed);
    cp_world_get_state(w, x0);
    const cp_scene *s = cp_world_scene(w);
    int na = hold_all(w, a, row, dt, &aw);
    cr_assert_eq(2 * na, n);
    cp_actuate_bias(s, 0, &aw, comp);
    double gmax = 0;
    for (int r = 0; r < na; ++r) gmax = fmax(gmax, fabs(comp[r]));
    cr_assert(gmax > 0.01, "gravity acts (max |g| %g)", gmax);
    for (int r = 0; r < na; ++r) {
      const double h = 1e-6;
      memcpy(x, x0, (size_t)n * sizeof *x);
      x[2 * r] += h;
      cr_assert_eq(cp_world_set_state(w, x), CP_WORLD_OK);
      double vp = cp_world_energy(w);
      x[2 * r] -= 2 * h;
      cr_assert_eq(cp_world_set_state(w, x), CP_WORLD_OK);
      double vm = cp_world_energy(w);
      double fd = (vp - vm) / (2 * h);
      cr_assert(fabs(fd - comp[r]) <= 1e-6 * gmax + 1e-7,
                "%s config %d row %d: g %.10g, dV/dq %.10g", urdf, c, r,
                comp[r], fd);
    }
    cr_assert_eq(cp_world_set_state(w, x0), CP_WORLD_OK);
    for (int k = 0; k < (int)lround(1.0 / dt); ++k) {
      cp_actuate_pd(cp_world_scene(w), na, a, &aw, eff);
      for (int r = 0; r < na; ++r)
        cr_assert_eq(cp_world_set_effort(w, row[r], eff[r]), CP_WORLD_OK);
      cr_assert_eq(cp_world_step(w, NULL), CP_WORLD_OK, "%s",
                   cp_world_message(w));
    }
    cp_world_get_state(w, x);
    for (int r = 0; r < na; ++r)
      cr_assert(fabs(x[2 * r] - x0[2 * r]) < 1e-6,
                "%s config %d joint row %d drifted %g rad in 1 s", urdf, c, r,
                x[2 * r] - x0[2 * r]);
  }
  free(x0);
  free(x);
  cp_actuate_work_free(&aw);
  cp_world_destroy(w);
}

Test(actuate, gravity_compensation_holds_the_panda_still) {
  holds_still(PANDA, "{\"position\": [0, 0, 0], \"orientation\": [1, 0, 0, 0]}", 3);
}

Test(actuate, gravity_compensation_holds_the_allegro_still) {
  /* Tilted so that gravity loads every finger joint. */
  holds_still(ALLEGRO,
              "{\"position\": [0, 0, 0.3], \"orientation\": [0.8, 0.36, 0.48, 0]}",
              3);
}

#define ONE_JOINT                                                            \
  "{\"gravity\": [0, 0, -9.81], \"bodies\": [], \"manipulators\": [{"        \
  "\"name\": \"arm\", \"base\": {\"position\": [0, 0, 0]}, \"joints\": [{"   \
  "\"name\": \"j\", \"type\": \"revolute\", \"axis\": [0, 0, 1],"            \
  "\"origin\": {\"position\": [0, 0, 0]}, \"position\": 0,"                  \
  "\"link\": {\"name\": \"l\", \"mass\": 2.0, \"com\": [0.3, 0, 0],"         \
  "\"inertia\": [[0.01, 0, 0], [0, 0.02, 0], [0, 0, 0.03]]}}]}]}"

/* One revolute joint about the vertical (no gravity effort, h = 0): the
 * PD response (explicit law, or the implicit one: it adds the damping
 * h Kp, first order in dt) against the analytic under-damped second-order
 * one, and the effective inertia against I_zz + m r^2. */
static void single_joint_response(int implicit) {
  const double dt = 1e-4;
  cp_world *w = world_of(ONE_JOINT, dt);
  cp_actuate_work aw;
  cr_assert_eq(cp_actuate_work_init(&aw, cp_world_scene(w)), 0);
  double held, I = cp_actuate_inertia(&cp_world_scene(w)->manips[0], 0, &aw, &held);
  cr_assert_float_eq(I, 0.03 + 2.0 * 0.09, 1e-12);
  cr_assert_float_eq(held, I, 1e-12);
  double wn = 8.0, zeta = 0.3, target = 0.7;
  cp_actuator a = {0, 0, target, I * wn * wn, 2 * zeta * wn * I, 0};
  double wd = wn * sqrt(1 - zeta * zeta), worst = 0;
  for (int k = 1; k <= 10000; ++k) {
    double e;
    if (implicit)
      cp_actuate_pd_implicit(cp_world_scene(w), 1, &a, dt, &aw, &e);
    else
      cp_actuate_pd(cp_world_scene(w), 1, &a, &aw, &e);
    cr_assert_eq(cp_world_set_effort(w, 0, e), CP_WORLD_OK);
    cr_assert_eq(cp_world_step(w, NULL), CP_WORLD_OK, "%s", cp_world_message(w));
    double t = k * dt;
    double q = target - target * exp(-zeta * wn * t) *
                            (cos(wd * t) + zeta * wn / wd * sin(wd * t));
    double x[2];
    cp_world_get_state(w, x);
    worst = fmax(worst, fabs(x[0] - q));
  }
  /* Semi-implicit Euler: first order in dt (wn dt = 8e-4). */
  cr_assert(worst < 2e-3 * target, "worst deviation %g rad", worst);
  cr_assert(worst > 0, "the simulation is not the formula");
  cp_actuate_work_free(&aw);
  cp_world_destroy(w);
}

Test(actuate, single_joint_matches_the_analytic_response) {
  single_joint_response(0);
}

/* ---- Tasks with target and Cartesian inputs ---- */

static char *panda_task(const char *inputs, double duration) {
  /* A free box far from the arm (the goal needs a body; it falls freely). */
  char *scene = robot_scene_with(
      PANDA, "{\"position\": [0, 0, 0], \"orientation\": [1, 0, 0, 0]}",
      "{\"name\": \"box\", \"mass\": 0.1, \"shape\": {\"type\": \"box\","
      " \"size\": [0.05, 0.05, 0.05]}, \"position\": [3, 3, 0]}");
  char *text = malloc(16384);
  int n = snprintf(text, 16384,
                   "{\"scene\": %s, \"inputs\": %s,"
                   " \"action\": {\"duration\": %g, \"dt\": 0.001},"
                   " \"goal\": {\"body\": \"box\", \"position\": [0, 0, 0],"
                   " \"tolerance\": 0.01}, \"limits\": {\"nodes\": 10}}",
                   scene, inputs, duration);
  cr_assert(n < 16384);
  free(scene);
  return text;
}


static void parse_task(const char *text, cp_task *t) {
  cp_error e;
  cr_assert_eq(cp_task_parse(text, strlen(text), NULL, t, &e), 0, "%s: %s",
               e.where, e.msg);
}

/* Runs action a from the start; returns the end state (malloc'd). */
static double *run_action(const cp_task *t, long a, cp_plan_world **pwo) {
  cp_plan_world *pw;
  cp_error e;
  cr_assert_eq(cp_plan_world_create(t, 1, &pw, &e), 0, "%s", e.msg);
  const cp_search_problem *p = cp_plan_world_problem(pw);
  double *y = malloc((size_t)p->n * sizeof *y);
  cp_expansion info;
  memset(&info, 0, sizeof info);
  cr_assert_eq(p->expand(p->ctx, cp_plan_world_start(pw), 0, NULL, 0, a, y,
                         &info), 0, "%s", info.message);
  cr_assert_eq(info.outcome, CP_EXPAND_OK, "%s", info.message);
  cr_assert_eq(info.steps, t->steps);
  *pwo = pw;
  return y;
}

/* Joint targets, absolute and relative, on every arm joint and the
 * gripper: each reached within 1e-3 rad (m) at the end of a 1 s action. */
Test(actuate, joint_targets_are_reached_in_free_space) {
  char *text = panda_task(
      "{\"r/panda_joint1\": {\"kind\": \"target\", \"values\": [0.4]},"
      " \"r/panda_joint2\": {\"kind\": \"target\", \"relative\": true,"
      "   \"values\": [0.25]},"
      " \"r/panda_joint3\": {\"kind\": \"target\", \"values\": [-0.2]},"
      " \"r/panda_joint4\": {\"kind\": \"target\", \"relative\": true,"
      "   \"values\": [-0.3]},"
      " \"r/panda_joint5\": {\"kind\": \"target\", \"values\": [0.1]},"
      " \"r/panda_joint6\": {\"kind\": \"target\", \"values\": [1.5]},"
      " \"r/panda_joint7\": {\"kind\": \"target\", \"values\": [0.7],"
      "   \"stiffness\": 20, \"damping\": 1},"
      " \"r/panda_finger_joint1\": {\"kind\": \"target\", \"values\": [0.035]}}",
      1.0);
  cp_task t;
  parse_task(text, &t);
  free(text);
  cr_assert_eq(t.inputs[1].kind, CP_INPUT_TARGET);
  cr_assert_eq(t.inputs[1].relative, 1);
  cr_assert_float_eq(t.inputs[6].stiffness, 20, 0);
  cr_assert_float_eq(t.inputs[6].damping, 1, 0);
  cr_assert_float_eq(t.inputs[0].effort_limit, 87, 0);
  cr_assert_float_eq(t.inputs[4].effort_limit, 12, 0);
  cp_plan_world *pw;
  double *y = run_action(&t, 0, &pw);
  const double want[8] = {0.4, -0.3 + 0.25, -0.2, -2.0 - 0.3, 0.1, 1.5, 0.7, 0.035};
  const double from[8] = {0, -0.3, 0, -2.0, 0, 1.8, 0.7, 0.02};
  int joints = 13; /* the box first */
  /* Critically damped at w = 10 / T reaches 1 - 11 e^-10 of a step alone;
   * the joints' coupling through the mass matrix (not compensated) leaves
   * a little more: within 2 % of each step, and 1e-4 where none. */
  for (int r = 0; r < 8; ++r)
    cr_assert(fabs(y[joints + 2 * r] - want[r]) <=
                  0.02 * fabs(want[r] - from[r]) + 1e-4,
              "joint row %d at %.6g, target %g", r, y[joints + 2 * r], want[r]);
  free(y);
  cp_plan_world_destroy(pw);
  cp_task_free(&t);
}

/* A Cartesian displacement of a point 10 cm beyond the flange, with the
 * gripper held: the point moves by the commanded 1 cm (first order of the
 * Jacobian: the residual is below 2 % of it) and the rotation input turns
 * the link by its angle. */
Test(actuate, cartesian_moves_the_point_by_the_displacement) {
  const char *in =
      "{\"tip x\": {\"kind\": \"cartesian\", \"link\": \"r/panda_link7\","
      "   \"point\": [0, 0, 0.2], \"direction\": [1, 0, 0], \"values\": [0.01]},"
      " \"tip z\": {\"kind\": \"cartesian\", \"link\": \"r/panda_link7\","
      "   \"point\": [0, 0, 0.2], \"direction\": [0, 0, 2], \"values\": [-0.005]},"
      " \"tip turn\": {\"kind\": \"cartesian\", \"link\": \"r/panda_link7\","
      "   \"point\": [0, 0, 0.2], \"axis\": [0, 0, 1], \"values\": [0.05]},"
      " \"r/panda_finger_joint1\": {\"kind\": \"target\", \"values\": [0.02]}}";
  char *text = panda_task(in, 1.0);
  cp_task t;
  parse_task(text, &t);
  free(text);
  cr_assert_eq(t.inputs[1].kind, CP_INPUT_CARTESIAN);
  cr_assert_float_eq(t.inputs[1].direction[2], 1, 0);
  /* Where the point and the link are at the start. */
  cp_actuate_work aw;
  cr_assert_eq(cp_actuate_work_init(&aw, &t.scene), 0);
  int link = t.inputs[0].index;
  double p0[3], R0[9], p1[3], R1[9];
  cp_actuate_link_pose(&t.scene, 0, link, t.inputs[0].point, &aw, p0, R0);
  cp_plan_world *pw;
  double *y = run_action(&t, 0, &pw);
  cp_scene end;
  cr_assert_eq(cp_scene_copy(&t.scene, &end), 0);
  cp_state_layout l;
  cr_assert_eq(cp_state_layout_init(&l, &end), 0);
  for (int r = 0; r < l.n_joints; ++r)
    end.manips[0].joints[l.row_joint[r]].position = y[13 + 2 * r];
  cp_state_layout_free(&l);
  cp_chain_apply_mimic(&end.manips[0]);
  cp_actuate_link_pose(&end, 0, link, t.inputs[0].point, &aw, p1, R1);
  double d[3] = {0.01, 0, -0.005}, moved[3], err[3];
  cp_v3_sub(moved, p1, p0);
  cp_v3_sub(err, moved, d);
  cr_assert(cp_v3_norm(err) < 0.02 * cp_v3_norm(d),
            "moved (%g, %g, %g), commanded (0.01, 0, -0.005)", moved[0],
            moved[1], moved[2]);
  /* R1 R0^T: a turn of 0.05 rad about z. */
  double R0t[9], D[9];
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) R0t[3 * i + j] = R0[3 * j + i];
  cp_m3_mul(D, R1, R0t);
  double ang = atan2(D[3] - D[1], D[0] + D[4]);
  cr_assert(fabs(ang - 0.05) < 0.02 * 0.05, "turned %g rad", ang);
  cr_assert(fabs(D[8] - 1) < 1e-5, "about z only (R33 %g)", D[8]);
  free(y);
  cp_scene_free(&end);
  cp_actuate_work_free(&aw);
  cp_plan_world_destroy(pw);
  cp_task_free(&t);
}

/* Bad inputs: the JSON path and what was expected. */
static void refused(const char *inputs, const char *where, const char *what) {
  char *text = panda_task(inputs, 0.1);
  cp_task t;
  cp_error e;
  cr_assert_neq(cp_task_parse(text, strlen(text), NULL, &t, &e), 0, "%s", inputs);
  cr_assert_str_eq(e.where, where, "%s: %s", e.where, e.msg);
  cr_assert(strstr(e.msg, what), "'%s' not in: %s", what, e.msg);
  free(text);
}

Test(actuate, bad_inputs_are_refused_with_their_path) {
  refused("{\"r/panda_joint1\": {\"kind\": \"position\", \"values\": [0]}}",
          "inputs.r/panda_joint1.kind", "unknown input kind \"position\"");
  refused("{\"r/panda_joint4\": {\"kind\": \"target\", \"values\": [-1, 0.5]}}",
          "inputs.r/panda_joint4.values", "outside the joint's limits");
  refused("{\"r/panda_joint7\": {\"kind\": \"target\", \"values\": [0],"
          " \"stiffness\": 1e6}}",
          "inputs.r/panda_joint7.stiffness", "unstable gains");
  refused("{\"r/panda_joint7\": {\"kind\": \"target\", \"values\": [0],"
          " \"damping\": 1e4}}",
          "inputs.r/panda_joint7.damping", "unstable gains");
  refused("{\"r/panda_finger_joint2\": {\"kind\": \"target\", \"values\": [0]}}",
          "inputs.r/panda_finger_joint2", "mimics \"panda_finger_joint1\"");
  refused("{\"r/panda_joint7\": {\"kind\": \"target\", \"values\": [0],"
          " \"acceleration\": true}}",
          "inputs.r/panda_joint7.acceleration", "unknown key");
  refused("{\"r/panda_joint1\": {\"values\": [0], \"acceleration\": true}}",
          "inputs.r/panda_joint1.acceleration", "effort-driven");
  refused("{\"tip\": {\"kind\": \"cartesian\", \"link\": \"r/nolink\","
          " \"direction\": [1, 0, 0], \"values\": [0]}}",
          "inputs.tip.link", "no link \"r/nolink\"");
  refused("{\"tip\": {\"kind\": \"cartesian\", \"link\": \"r/panda_link7\","
          " \"values\": [0]}}",
          "inputs.tip", "exactly one of \"direction\"");
  refused("{\"tip\": {\"kind\": \"cartesian\", \"link\": \"r/panda_link7\","
          " \"direction\": [1, 0, 0], \"values\": [0]},"
          " \"r/panda_joint3\": {\"kind\": \"target\", \"values\": [0]}}",
          "inputs.tip", "panda_joint3\" moves this link");
}

/* An input on an acceleration-driven joint needs "acceleration": true. */
Test(actuate, acceleration_driven_inputs_need_saying_so) {
  const char *scene =
      "{\"gravity\": [0, 0, -9.81], \"bodies\": [{\"name\": \"box\", \"mass\": 1,"
      " \"shape\": {\"type\": \"box\", \"size\": [0.1, 0.1, 0.1]},"
      " \"position\": [2, 0, 0]}], \"manipulators\": [{\"name\": \"arm\","
      " \"joints\": [{\"name\": \"j\", \"type\": \"prismatic\", \"axis\": [1, 0, 0],"
      " \"acceleration\": 0, \"link\": {\"name\": \"l\", \"mass\": 1,"
      " \"inertia\": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}}]}]}";
  char text[4096];
  const char *fmt =
      "{\"scene\": %s, \"inputs\": {\"arm/j\": {\"values\": [1]%s}},"
      " \"action\": {\"duration\": 0.1, \"dt\": 0.01}, \"goal\": {\"body\":"
      " \"box\", \"position\": [0, 0, 0], \"tolerance\": 0.1},"
      " \"limits\": {\"nodes\": 10}}";
  snprintf(text, sizeof text, fmt, scene, "");
  cp_task t;
  cp_error e;
  cr_assert_neq(cp_task_parse(text, strlen(text), NULL, &t, &e), 0);
  cr_assert_str_eq(e.where, "inputs.arm/j", "%s", e.msg);
  cr_assert(strstr(e.msg, "acceleration-driven"), "%s", e.msg);
  cr_assert(strstr(e.msg, "\"acceleration\": true"), "%s", e.msg);
  snprintf(text, sizeof text, fmt, scene, ", \"acceleration\": true");
  parse_task(text, &t);
  cr_assert_eq(t.inputs[0].acceleration, 1);
  cp_task_free(&t);
}

/* The bundled target task: A* solves it and the plan replays bitwise from
 * the database (the PD law runs inside every replayed step). */
Test(actuate, a_target_plan_replays_bitwise) {
  char task[2048], db[256];
  snprintf(task, sizeof task, "%s/planner/tasks/grasp_lift_targets.json",
           getenv("CP_SOURCE_ROOT"));
  snprintf(db, sizeof db, "/tmp/cp_actuate_%d.sqlite", (int)getpid());
  unlink(db);
  const char *a1[] = {"complan", "plan", task, "--db", db, "--max-seconds",
                      "3600", "--json", NULL};
  json_t *doc = cpt_run_json(a1, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "solved");
  cr_assert(json_integer_value(json_object_get(doc, "length")) >= 2);
  json_decref(doc);
  const char *a2[] = {"complan", "replay", "--db", db, "--verify", NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(a2, &out, &err), 0, "%s", err);
  cr_assert(strstr(out, "bitwise"), "%s", out);
  free(out);
  free(err);
  unlink(db);
}

/* complan plan on bad task files: exit 2, the file and the JSON path on
 * stderr, nothing on stdout, no database written. */
Test(actuate, bad_task_files_exit_2_with_the_json_path) {
  char task[2048];
  snprintf(task, sizeof task, "%s/planner/tasks/grasp_lift_targets.json",
           getenv("CP_SOURCE_ROOT"));
  char *text = cpt_read_file(task, NULL);
  cr_assert(text);
  const char *cases[][3] = {
      {"\"kind\": \"target\", \"relative\"", "\"kind\": \"position\", \"relative\"",
       "inputs.hand/lift.kind"},
      {"\"values\": [0, -0.03]", "\"values\": [0, -0.3]", "inputs.hand/gap.values"},
      {"\"stiffness\": 300", "\"stiffness\": 3e5", "inputs.hand/gap.stiffness"},
      {"\"hand/lift\": {\"kind\": \"target\", \"relative\": true, \"values\": [0, 0.02]},",
       "\"hand/lift\": {\"kind\": \"target\", \"relative\": true, \"values\": [0, 0.02]},"
       " \"hand/left\": {\"values\": [0], \"acceleration\": true},",
       "inputs.hand/left.acceleration"},
  };
  char db[256];
  snprintf(db, sizeof db, "/tmp/cp_actuate_bad_%d.sqlite", (int)getpid());
  for (int i = 0; i < 4; ++i) {
    const char *at = strstr(text, cases[i][0]);
    cr_assert(at, "%s", cases[i][0]);
    char *edited = malloc(strlen(text) + 512);
    sprintf(edited, "%.*s%s%s", (int)(at - text), text, cases[i][1],
            at + strlen(cases[i][0]));
    /* The scene path made absolute (the copy lives in /tmp). */
    char *sp = strstr(edited, "\"../../models/");
    char *abs = malloc(strlen(edited) + 2048);
    sprintf(abs, "%.*s\"%s/%s", (int)(sp - edited), edited,
            getenv("CP_SOURCE_ROOT"), sp + strlen("\"../../"));
    char *path = cpt_temp_file(abs, ".json");
    const char *argv[] = {"complan", "plan", path, "--db", db, NULL};
    char *out, *err;
    cr_assert_eq(cpt_run(argv, &out, &err), 2, "%s", err);
    cr_assert_str_eq(out, "");
    cr_assert(strstr(err, path), "%s", err);
    cr_assert(strstr(err, cases[i][2]), "'%s' not in: %s", cases[i][2], err);
    cr_assert_neq(access(db, F_OK), 0, "no database for a bad task");
    free(out);
    free(err);
    unlink(path);
    free(path);
    free(abs);
    free(edited);
  }
  free(text);
}

/* ---- The implicit law (action.pd "implicit") ---- */

Test(actuate, implicit_single_joint_matches_the_analytic_response) {
  single_joint_response(1);
}

/* Stiff gains (Kp h^2 / I = 400, a hundred times the explicit law's
 * bound): the explicit law diverges; the implicit one follows its
 * closed-form step v+ = (I v + h Kp e) / (I + h Kd + h^2 Kp), q+ = q + h v+
 * and settles on the target. */
Test(actuate, implicit_law_is_stable_where_the_explicit_one_diverges) {
  const double dt = 2e-3, I = 0.21, target = 0.5;
  double kp = 400 * I / (dt * dt), kd = 2 * sqrt(kp * I);
  cr_assert_gt(cp_actuate_stability(kp, kd, I, dt), 4);
  for (int implicit = 0; implicit < 2; ++implicit) {
    cp_world *w = world_of(ONE_JOINT, dt);
    cp_actuate_work aw;
    cr_assert_eq(cp_actuate_work_init(&aw, cp_world_scene(w)), 0);
    cp_actuator a = {0, 0, target, kp, kd, 0};
    double q = 0, v = 0, worst = 0, x[2] = {0, 0};
    int diverged = 0;
    for (int k = 1; k <= 500 && !diverged; ++k) {
      double e;
      if (implicit)
        cp_actuate_pd_implicit(cp_world_scene(w), 1, &a, dt, &aw, &e);
      else
        cp_actuate_pd(cp_world_scene(w), 1, &a, &aw, &e);
      cr_assert_eq(cp_world_set_effort(w, 0, e), CP_WORLD_OK);
      if (cp_world_step(w, NULL) != CP_WORLD_OK) {
        diverged = 1;
        break;
      }
      cp_world_get_state(w, x);
      if (!(fabs(x[0]) < 100)) diverged = 1;
      v = (I * v + dt * kp * (target - q)) / (I + dt * kd + dt * dt * kp);
      q += dt * v;
      worst = fmax(worst, fabs(x[0] - q));
    }
    if (!implicit) {
      cr_assert(diverged, "explicit PD at s = %g stayed at %g",
                cp_actuate_stability(kp, kd, I, dt), x[0]);
    } else {
      cr_assert(!diverged);
      cr_assert(worst < 1e-9, "off the closed-form step by %g", worst);
      cr_assert(fabs(x[0] - target) < 1e-6, "ended at %.9g", x[0]);
    }
    cp_actuate_work_free(&aw);
    cp_world_destroy(w);
  }
}

/* Two coupled links (vertical axes, no gravity torque), both stiff: the
 * chain's matrix form settles both joints on their targets without ever
 * overshooting past the starting error. */
Test(actuate, implicit_law_settles_a_coupled_chain) {
  const char *text =
      "{\"gravity\": [0, 0, -9.81], \"bodies\": [], \"manipulators\": [{"
      "\"name\": \"arm\", \"base\": {\"position\": [0, 0, 0]}, \"joints\": ["
      "{\"name\": \"j1\", \"type\": \"revolute\", \"axis\": [0, 0, 1],"
      " \"origin\": {\"position\": [0, 0, 0]}, \"position\": 0,"
      " \"link\": {\"name\": \"l1\", \"mass\": 1.0, \"com\": [0.15, 0, 0],"
      " \"inertia\": [[0.001, 0, 0], [0, 0.002, 0], [0, 0, 0.002]]}},"
      "{\"name\": \"j2\", \"type\": \"revolute\", \"axis\": [0, 0, 1],"
      " \"origin\": {\"position\": [0.3, 0, 0]}, \"position\": 0.4,"
      " \"link\": {\"name\": \"l2\", \"mass\": 0.05, \"com\": [0.05, 0, 0],"
      " \"inertia\": [[1e-5, 0, 0], [0, 1e-5, 0], [0, 0, 1e-5]]}}]}]}";
  const double dt = 2e-3;
  cp_world *w = world_of(text, dt);
  cp_actuate_work aw;
  cr_assert_eq(cp_actuate_work_init(&aw, cp_world_scene(w)), 0);
  const cp_chain *c = &cp_world_scene(w)->manips[0];
  double held, least = cp_actuate_inertia(c, 1, &aw, &held);
  cp_actuator a[2] = {{0, 0, 0.3, 100, 0, 0}, {0, 1, -0.2, 100, 0, 0}};
  for (int k = 0; k < 2; ++k) a[k].kd = 2 * sqrt(a[k].kp * least);
  cr_assert_gt(cp_actuate_stability(a[1].kp, a[1].kd, least, dt), 4,
               "stiff for the light link");
  double x[4], start = fmax(0.3, 0.6), worst = 0;
  for (int k = 0; k < 1000; ++k) {
    double e[2];
    cp_actuate_pd_implicit(cp_world_scene(w), 2, a, dt, &aw, e);
    cr_assert_eq(cp_world_set_effort(w, 0, e[0]), CP_WORLD_OK);
    cr_assert_eq(cp_world_set_effort(w, 1, e[1]), CP_WORLD_OK);
    cr_assert_eq(cp_world_step(w, NULL), CP_WORLD_OK, "%s", cp_world_message(w));
    cp_world_get_state(w, x);
    worst = fmax(worst, fmax(fabs(x[0] - 0.3), fabs(x[2] + 0.2)));
  }
  cr_assert(worst <= start, "error grew to %g", worst);
  cr_assert(fabs(x[0] - 0.3) < 1e-6 && fabs(x[2] + 0.2) < 1e-6,
            "ended at %.9g, %.9g", x[0], x[2]);
  cp_actuate_work_free(&aw);
  cp_world_destroy(w);
}

/* A task: gains past the explicit bound are refused unless the action says
 * "pd": "implicit"; then the target is reached; a bad law is refused. */
Test(actuate, implicit_law_in_a_task) {
  const char *stiff = "{\"r/panda_joint7\": {\"kind\": \"target\","
                      " \"values\": [1.2], \"stiffness\": 1e5}}";
  refused(stiff, "inputs.r/panda_joint7.stiffness", "\"pd\": \"implicit\"");
  char *text = panda_task(stiff, 0.5);
  const char *at = "\"dt\": 0.001}";
  char *p = strstr(text, at);
  cr_assert(p);
  char *imp = malloc(strlen(text) + 64), *bad = malloc(strlen(text) + 64);
  sprintf(imp, "%.*s\"dt\": 0.001, \"pd\": \"implicit\"}%s", (int)(p - text),
          text, p + strlen(at));
  sprintf(bad, "%.*s\"dt\": 0.001, \"pd\": \"stiff\"}%s", (int)(p - text),
          text, p + strlen(at));
  cp_task t;
  cp_error e;
  cr_assert_neq(cp_task_parse(bad, strlen(bad), NULL, &t, &e), 0);
  cr_assert_str_eq(e.where, "action.pd");
  parse_task(imp, &t);
  cr_assert_eq(t.pd_implicit, 1);
  cr_assert_float_eq(t.inputs[0].stiffness, 1e5, 0);
  cp_plan_world *pw;
  double *y = run_action(&t, 0, &pw);
  cr_assert(fabs(y[13 + 2 * 6] - 1.2) < 1e-3, "joint 7 at %.6g", y[13 + 2 * 6]);
  free(y);
  cp_plan_world_destroy(pw);
  cp_task_free(&t);
  free(text);
  free(imp);
  free(bad);
}
