/* Reach inputs (issue 23: fingertip contact sampling; planner/search/
 * reach.h, docs/planner.md "Reach inputs"): the sampler's points lie on
 * the faces drawn, never on an excluded one, with the faces' areas as
 * their odds and the same point for the same value; a point finger driven
 * by a reach action ends at the sampled point, checked against the body's
 * face planes computed here; bad reach inputs are refused with their JSON
 * path (exit 2 from the command). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/plan/plan.h"
#include "planner/search/reach.h"
#include "planner/search/task.h"
#include "planner/sim/statelayout.h"
#include "tests/support.h"

static const double no_push[2] = {0, 0};

Test(reach, box_points_lie_on_the_allowed_faces_with_area_odds) {
  cp_shape sh = {.type = CP_SHAPE_BOX, .size = {0.1, 0.2, 0.4}};
  unsigned allowed = 0x3fu & ~CP_REACH_FACE_ZN;
  int count[6] = {0};
  const double push[2] = {-0.01, 0.02};
  int n = 20000;
  for (int k = 0; k < n; ++k) {
    double v = k * 0.37, p[3], nn[3], d;
    unsigned f = cp_reach_sample(&sh, allowed, v, push, p, nn, &d);
    cr_assert(f & allowed, "face bit %u drawn", f);
    int b = __builtin_ctz(f), a = b / 2;
    double s = b % 2 ? -1 : 1;
    count[b]++;
    for (int c = 0; c < 3; ++c) {
      cr_assert_eq(nn[c], c == a ? s : 0, "normal of face %d", b);
      if (c == a)
        cr_assert_eq(p[c], s * 0.5 * sh.size[c]);
      else
        cr_assert(fabs(p[c]) <= 0.5 * sh.size[c], "off the face: %g", p[c]);
    }
    cr_assert(d >= push[0] && d <= push[1], "depth %g", d);
    /* The same value: the same contact. */
    double p2[3], n2[3], d2;
    cr_assert_eq(cp_reach_sample(&sh, allowed, v, push, p2, n2, &d2), f);
    cr_assert(!memcmp(p, p2, sizeof p) && d == d2);
  }
  cr_assert_eq(count[5], 0, "-z excluded");
  /* Face areas: +-x 0.08, +-y 0.04, +z 0.02 (of 0.26). Binomial counts
   * within 5 standard deviations. */
  const double area[5] = {0.08, 0.08, 0.04, 0.04, 0.02};
  for (int b = 0; b < 5; ++b) {
    double pr = area[b] / 0.26, mean = n * pr, sd = sqrt(n * pr * (1 - pr));
    cr_assert(fabs(count[b] - mean) < 5 * sd, "face %d: %d draws, expected %g",
              b, count[b], mean);
  }
}

Test(reach, cylinder_and_sphere_points_lie_on_their_surfaces) {
  cp_shape cyl = {.type = CP_SHAPE_CYLINDER, .radius = 0.05, .length = 0.3};
  cp_shape ball = {.type = CP_SHAPE_SPHERE, .radius = 0.07};
  int side = 0;
  for (int k = 0; k < 5000; ++k) {
    double p[3], n[3], d;
    unsigned f = cp_reach_sample(&cyl, ~0u, k + 0.5, no_push, p, n, &d);
    cr_assert_eq(d, 0);
    if (f == CP_REACH_FACE_SIDE) {
      side++;
      cr_assert(fabs(hypot(p[0], p[1]) - 0.05) < 1e-12);
      cr_assert(fabs(p[2]) <= 0.15);
      cr_assert(fabs(n[0] * p[0] + n[1] * p[1] - 0.05) < 1e-12 && n[2] == 0);
    } else {
      cr_assert(f == CP_REACH_FACE_ZP || f == CP_REACH_FACE_ZN);
      cr_assert_eq(fabs(p[2]), 0.15);
      cr_assert_eq(n[2], f == CP_REACH_FACE_ZP ? 1 : -1);
      cr_assert(hypot(p[0], p[1]) <= 0.05 + 1e-15);
    }
    f = cp_reach_sample(&ball, ~0u, k + 0.5, no_push, p, n, &d);
    cr_assert_eq(f, CP_REACH_FACE_SURFACE);
    cr_assert(fabs(sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]) - 0.07) < 1e-12);
  }
  /* Side 2 pi r L = 0.0942 of 0.0942 + 2 pi r^2 = 0.1100: 85.7 %. */
  cr_assert(fabs(side / 5000.0 - 0.0942 / 0.1100) < 0.03, "side %d", side);
  cp_shape cap = {.type = CP_SHAPE_CAPSULE, .radius = 0.05, .length = 0.3};
  double p[3], n[3], d;
  cr_assert_eq(cp_reach_sample(&cap, ~0u, 1, no_push, p, n, &d), 0);
}

/* A point finger (three prismatic joints along the world axes, no shape:
 * it touches nothing) above a fixed box turned 30 degrees about z. */
static char *finger_task_at(const char *block, const char *xvalue,
                            const char *reach) {
  char *t = malloc(8192);
  const char *lim = "\"limits\": {\"lower\": -0.5, \"upper\": 0.5, \"effort\": 20}";
  const char *in = "\"mass\": 0.01, \"inertia\": [[1e-6, 0, 0], [0, 1e-6, 0], [0, 0, 1e-6]]";
  int n = snprintf(t, 8192,
      "{\"scene\": {\"gravity\": [0, 0, -9.81], \"bodies\": ["
      " {\"name\": \"block\", \"fixed\": true, \"shape\": {\"type\": \"box\","
      "  \"size\": [0.1, 0.08, 0.06]}, \"position\": %s,"
      "  \"orientation\": [0.9659258262890683, 0, 0, 0.25881904510252074]},"
      " {\"name\": \"ball\", \"mass\": 0.1, \"shape\": {\"type\": \"sphere\","
      "  \"radius\": 0.02}, \"position\": [-3, 0, 0]}],"
      " \"manipulators\": [{\"name\": \"f\", \"base\": {\"position\": [0, 0, 0.3]},"
      "  \"joints\": ["
      "   {\"name\": \"x\", \"type\": \"prismatic\", \"axis\": [1, 0, 0], %s, \"link\": {\"name\": \"cx\", %s}},"
      "   {\"name\": \"y\", \"type\": \"prismatic\", \"axis\": [0, 1, 0], %s, \"link\": {\"name\": \"cy\", %s}},"
      "   {\"name\": \"z\", \"type\": \"prismatic\", \"axis\": [0, 0, 1], %s, \"link\": {\"name\": \"tip\", %s}}]}]},"
      " \"inputs\": {"
      "  \"f/x\": {\"kind\": \"target\", \"relative\": true, \"values\": [%s], \"stiffness\": 100},"
      "  \"f/y\": {\"kind\": \"target\", \"relative\": true, \"values\": [0], \"stiffness\": 100},"
      "  \"f/z\": {\"kind\": \"target\", \"relative\": true, \"values\": [0], \"stiffness\": 100},"
      "  \"reach\": {\"kind\": \"reach\", \"link\": \"f/tip\", \"body\": \"block\"%s}},"
      " \"action\": {\"duration\": 1, \"dt\": 0.001},"
      " \"goal\": {\"body\": \"ball\", \"position\": [0, 0, 0], \"tolerance\": 0.01},"
      " \"limits\": {\"nodes\": 10}}",
      block, lim, in, lim, in, lim, in, xvalue, reach);
  cr_assert(n < 8192);
  return t;
}

static char *finger_task(const char *reach) {
  return finger_task_at("[0.2, 0.05, 0.1]", "0", reach);
}

/* Each action value puts the tip (offset 2 cm) on the drawn face: in the
 * block's frame (rotated here by the 30 degrees directly, not by the
 * library's quaternion code) one coordinate is +-(half size + offset) and
 * the others within the face; never on the excluded -z face. */
Test(reach, a_point_finger_lands_on_the_sampled_face) {
  char *text = finger_task(", \"exclude\": [\"-z\"], \"offset\": 0.02,"
                           " \"approach\": 0.03, \"push\": [0, 0],"
                           " \"values\": [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]");
  cp_task t;
  cp_error e;
  cr_assert_eq(cp_task_parse(text, strlen(text), NULL, &t, &e), 0, "%s: %s",
               e.where, e.msg);
  free(text);
  cr_assert_eq(t.inputs[3].kind, CP_INPUT_REACH);
  cr_assert_eq(t.n_actions, 8);
  cp_plan_world *pw;
  cr_assert_eq(cp_plan_world_create(&t, 1, &pw, &e), 0, "%s", e.msg);
  const cp_search_problem *p = cp_plan_world_problem(pw);
  double *y = malloc((size_t)p->n * sizeof *y);
  cp_state_layout l;
  cr_assert_eq(cp_state_layout_init(&l, &t.scene), 0);
  const double half[3] = {0.05, 0.04, 0.03}, c = cos(3.14159265358979323846 / 6),
               s = sin(3.14159265358979323846 / 6);
  for (long a = 0; a < t.n_actions; ++a) {
    cp_expansion info;
    memset(&info, 0, sizeof info);
    cr_assert_eq(p->expand(p->ctx, cp_plan_world_start(pw), 0, NULL, 0, a, y,
                           &info), 0, "%s", info.message);
    cr_assert_eq(info.outcome, CP_EXPAND_OK, "%s", info.message);
    double tip[3] = {0, 0, 0.3};
    for (int r = 0; r < 3; ++r) tip[l.row_joint[r]] += y[13 * l.n_free + 2 * r];
    double d[3] = {tip[0] - 0.2, tip[1] - 0.05, tip[2] - 0.1};
    double b[3] = {c * d[0] + s * d[1], -s * d[0] + c * d[1], d[2]};
    double pb[3], nb[3], depth;
    unsigned f = cp_reach_sample(&t.scene.bodies[0].shape, t.inputs[3].faces,
                                 t.inputs[3].values[a], no_push, pb, nb, &depth);
    int ax = __builtin_ctz(f) / 2;
    cr_assert_neq(f, CP_REACH_FACE_ZN);
    for (int k = 0; k < 3; ++k) {
      double want = k == ax ? nb[ax] * (half[k] + 0.02) : pb[k];
      cr_assert(fabs(b[k] - want) < 1e-4, "action %ld axis %d: %g, want %g",
                a, k, b[k], want);
      if (k != ax) cr_assert(fabs(b[k]) <= half[k] + 1e-4);
    }
  }
  cp_state_layout_free(&l);
  free(y);
  cp_plan_world_destroy(pw);
  cp_task_free(&t);
}

/* Parses text, runs action 0 from the start and gives the finger's three
 * joint positions at its end. */
static void end_joints(char *text, double *q) {
  cp_task t;
  cp_error e;
  cr_assert_eq(cp_task_parse(text, strlen(text), NULL, &t, &e), 0, "%s", e.msg);
  free(text);
  cp_plan_world *pw;
  cr_assert_eq(cp_plan_world_create(&t, 1, &pw, &e), 0, "%s", e.msg);
  const cp_search_problem *p = cp_plan_world_problem(pw);
  double *y = malloc((size_t)p->n * sizeof *y);
  cp_expansion info;
  memset(&info, 0, sizeof info);
  cr_assert_eq(p->expand(p->ctx, cp_plan_world_start(pw), 0, NULL, 0, 0, y,
                         &info), 0, "%s", info.message);
  cr_assert_eq(info.outcome, CP_EXPAND_OK, "%s", info.message);
  for (int r = 0; r < 3; ++r) q[r] = y[13 + 2 * r];
  free(y);
  cp_plan_world_destroy(pw);
  cp_task_free(&t);
}

/* A negative value leaves the finger to its target inputs (here: hold). */
Test(reach, a_negative_value_does_not_reach) {
  double q[3];
  end_joints(finger_task(", \"values\": [-1]"), q);
  for (int r = 0; r < 3; ++r)
    cr_assert(fabs(q[r]) < 1e-9, "joint %d moved to %g", r, q[r]);
}

static void refused(const char *reach, const char *where, const char *what) {
  char *text = finger_task(reach);
  cp_task t;
  cp_error e;
  cr_assert_neq(cp_task_parse(text, strlen(text), NULL, &t, &e), 0, "%s", reach);
  cr_assert_str_eq(e.where, where, "%s: %s", e.where, e.msg);
  cr_assert(strstr(e.msg, what), "'%s' not in: %s", what, e.msg);
  free(text);
}

Test(reach, bad_reach_inputs_are_refused_with_their_path) {
  refused(", \"values\": [0], \"exclude\": [\"side\"]", "inputs.reach.exclude[0]",
          "no face \"side\" on a box");
  refused(", \"values\": [0], \"exclude\": [\"+x\", \"-x\", \"+y\", \"-y\", \"+z\", \"-z\"]",
          "inputs.reach.exclude", "every face is excluded");
  refused(", \"values\": [0], \"push\": [0.02, 0.01]", "inputs.reach.push",
          "lo <= hi");
  refused(", \"values\": [0], \"offset\": -0.01", "inputs.reach.offset",
          "a distance in [0, 10] m");
  refused(", \"values\": [0], \"direction\": [1, 0, 0]",
          "inputs.reach.direction", "unknown key");
  char *text = finger_task(", \"values\": [0]");
  char *bad = strstr(text, "\"body\": \"block\"");
  memcpy(bad, "\"body\": \"nobod\"", 15);
  cp_task t;
  cp_error e;
  cr_assert_neq(cp_task_parse(text, strlen(text), NULL, &t, &e), 0);
  cr_assert_str_eq(e.where, "inputs.reach.body");
  /* Through the command: exit 2, the file and the path on stderr. */
  char *path = cpt_temp_file(text, ".json");
  const char *argv[] = {"complan", "plan", path, NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(argv, &out, &err), 2, "%s", err);
  cr_assert(strstr(err, "inputs.reach.body") && strstr(err, path), "%s", err);
  cr_assert_str_eq(out, "");
  free(out);
  free(err);
  remove(path);
  free(path);
  free(text);
  /* A joint on the path that is not a target input. */
  text = finger_task(", \"values\": [0]");
  const char *from = "\"f/y\": {\"kind\": \"target\", \"relative\": true,"
                     " \"values\": [0], \"stiffness\": 100}";
  bad = strstr(text, from);
  cr_assert_not_null(bad);
  char *fixed = malloc(8192);
  snprintf(fixed, 8192, "%.*s\"f/y\": {\"values\": [0]}%s", (int)(bad - text),
           text, bad + strlen(from));
  free(text);
  text = fixed;
  cr_assert_neq(cp_task_parse(text, strlen(text), NULL, &t, &e), 0);
  cr_assert_str_eq(e.where, "inputs.reach", "%s: %s", e.where, e.msg);
  cr_assert(strstr(e.msg, "\"f/y\" moves this link"), "%s", e.msg);
  free(text);
}

/* Hold: a value < 0 with the tip 2.5 cm above the turned block's top face
 * (offset 2 cm, hold 1 cm): the tip is held on the face's nearest point at
 * the squeeze depth push[1] = 4 mm and moved by its relative target (x +1
 * cm): it ends at (0.01, 0, 0.245 + 0.03 + 0.02 - 0.004). With hold 1 mm it
 * is too far: the targets alone move it to (0.01, 0, 0.3). */
static void held_at_but(const char *hold, const char *extra, double want_z) {
  char reach[256];
  snprintf(reach, sizeof reach,
           ", \"offset\": 0.02, \"push\": [0, 0.004], \"hold\": %s,"
           " \"values\": [-1]%s", hold, extra);
  double q[3];
  end_joints(finger_task_at("[0, 0, 0.245]", "0.01", reach), q);
  const double want[3] = {0.01, 0, want_z - 0.3};
  for (int r = 0; r < 3; ++r)
    cr_assert(fabs(q[r] - want[r]) < 1e-4, "joint %d at %g, want %g", r, q[r],
              want[r]);
}

static void held_at(const char *hold, double want_z) {
  held_at_but(hold, "", want_z);
}

Test(reach, a_near_contact_is_held_and_moved) {
  held_at("0.01", 0.245 + 0.03 + 0.02 - 0.004);
  held_at("0.001", 0.3);
}

/* An excluded face is never held (the corner pivot's fingers on the face
 * that ends against its block): the same tip within hold of the top face,
 * with +z excluded, follows its targets alone; with -z excluded it is held. */
Test(reach, an_excluded_face_is_not_held) {
  held_at_but("0.01", ", \"exclude\": [\"+z\"]", 0.3);
  held_at_but("0.01", ", \"exclude\": [\"-z\"]", 0.245 + 0.03 + 0.02 - 0.004);
}

Test(reach, nearest_face_of_each_shape) {
  cp_shape box = {.type = CP_SHAPE_BOX, .size = {0.1, 0.2, 0.4}};
  double q[3] = {0.02, 0.13, -0.1}, p[3], n[3], d;
  cr_assert_eq(cp_reach_nearest(&box, q, p, n, &d), CP_REACH_FACE_YP);
  cr_assert(fabs(d - 0.03) < 1e-15 && p[1] == 0.1 && p[0] == 0.02 && n[1] == 1);
  q[1] = -0.09; /* inside: the -y face is 1 cm away, +-x 3 cm */
  cr_assert_eq(cp_reach_nearest(&box, q, p, n, &d), CP_REACH_FACE_YN);
  cr_assert(fabs(d + 0.01) < 1e-15 && p[1] == -0.1 && n[1] == -1);
  cp_shape cyl = {.type = CP_SHAPE_CYLINDER, .radius = 0.05, .length = 0.3};
  double c[3] = {0.06, 0.08, 0.1};
  cr_assert_eq(cp_reach_nearest(&cyl, c, p, n, &d), CP_REACH_FACE_SIDE);
  cr_assert(fabs(d - 0.05) < 1e-15 && fabs(p[0] - 0.03) < 1e-15 &&
            fabs(p[1] - 0.04) < 1e-15 && p[2] == 0.1);
  c[0] = c[1] = 0.01, c[2] = -0.17;
  cr_assert_eq(cp_reach_nearest(&cyl, c, p, n, &d), CP_REACH_FACE_ZN);
  cr_assert(fabs(d - 0.02) < 1e-15 && p[2] == -0.15 && n[2] == -1);
}

/* search.metric.robot scales every joint coordinate of the embedding (the
 * finger's prismatic joints weigh as positions: 1 m per m by default) and
 * leaves the bodies' alone; outside [0, 1] it is refused at its path. */
static void embed_with(const char *robot, double *e, int *m) {
  char *text = finger_task(", \"values\": [-1]");
  char *lim = strstr(text, " \"limits\": {\"nodes\"");
  char *t2 = malloc(9000);
  snprintf(t2, 9000, "%.*s \"search\": {\"method\": \"rrt\", \"metric\": "
           "{\"robot\": %s}},%s", (int)(lim - text), text, robot, lim);
  free(text);
  cp_task t;
  cp_error err;
  cr_assert_eq(cp_task_parse(t2, strlen(t2), NULL, &t, &err), 0, "%s", err.msg);
  free(t2);
  cp_plan_world *pw;
  cr_assert_eq(cp_plan_world_create(&t, 1, &pw, &err), 0, "%s", err.msg);
  const cp_search_problem *p = cp_plan_world_problem(pw);
  double *x = malloc((size_t)p->n * sizeof *x);
  memcpy(x, cp_plan_world_start(pw), (size_t)p->n * sizeof *x);
  x[13] = 0.2; /* joint f/x at 0.2 m; the ball's x at -3 */
  p->embed(p->ctx, x, e);
  *m = p->m;
  free(x);
  cp_plan_world_destroy(pw);
  cp_task_free(&t);
}

Test(reach, metric_robot_scales_the_joint_coordinates) {
  double e1[64], e2[64];
  int m1, m2;
  embed_with("1", e1, &m1);
  embed_with("0.25", e2, &m2);
  cr_assert_eq(m1, m2);
  cr_assert_eq(e1[0], -3);
  cr_assert_eq(e2[0], -3);
  cr_assert_eq(e1[13], 0.2);
  cr_assert_eq(e2[13], 0.25 * 0.2);
  char *text = finger_task(", \"values\": [-1]");
  char *lim = strstr(text, " \"limits\": {\"nodes\"");
  char *t2 = malloc(9000);
  snprintf(t2, 9000, "%.*s \"search\": {\"metric\": {\"robot\": 2}},%s",
           (int)(lim - text), text, lim);
  cp_task t;
  cp_error err;
  cr_assert_neq(cp_task_parse(t2, strlen(t2), NULL, &t, &err), 0);
  cr_assert_str_eq(err.where, "search.metric.robot");
  free(text);
  free(t2);
}
