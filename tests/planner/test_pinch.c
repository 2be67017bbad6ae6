/* Pinch inputs (issue 23; planner/search/pinch.h, docs/planner.md "Pinch
 * inputs"): the antipodal contacts of a box, a cylinder and a sphere; two
 * point fingers pinch a box on the floor and lift it when the squeeze
 * meets the friction bound mu F >= m g / 2 per finger, and leave it on the
 * floor when it does not; a held pair turns a box; bad pinch inputs are
 * refused with their JSON path (exit 2 from the command). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/plan/plan.h"
#include "planner/search/pinch.h"
#include "planner/search/reach.h"
#include "planner/search/task.h"
#include "planner/sim/statelayout.h"
#include "tests/support.h"

static const double no_push[2] = {0, 0};

/* Every drawn contact of each shape: its antipode lies on the shape, its
 * normal is the opposite of the drawn one, and the segment between the two
 * points runs along the normal (a squeeze along it pushes the points
 * towards each other) through the body's axis or centre. */
Test(pinch, antipodes_of_a_box_a_cylinder_and_a_sphere) {
  const cp_shape shapes[3] = {
      {.type = CP_SHAPE_BOX, .size = {0.1, 0.2, 0.4}},
      {.type = CP_SHAPE_CYLINDER, .radius = 0.05, .length = 0.3},
      {.type = CP_SHAPE_SPHERE, .radius = 0.07}};
  for (int s = 0; s < 3; ++s) {
    const cp_shape *sh = &shapes[s];
    unsigned faces = cp_pinch_faces(sh, ~0u);
    cr_assert_eq(faces, cp_reach_shape_faces(sh));
    for (int k = 0; k < 2000; ++k) {
      double p[3], n[3], q[3], m[3], d;
      unsigned f = cp_reach_sample(sh, faces, k * 0.61, no_push, p, n, &d);
      cr_assert(f);
      cp_pinch_antipode(sh, f, p, q, m);
      double qq[3], qn[3], dist;
      unsigned g = cp_reach_nearest(sh, q, qq, qn, &dist);
      cr_assert(fabs(dist) < 1e-12, "shape %d: antipode %g off", s, dist);
      double along = 0;
      for (int c = 0; c < 3; ++c) {
        cr_assert(fabs(m[c] + n[c]) < 1e-12, "shape %d normal %d", s, c);
        cr_assert(fabs(qn[c] - m[c]) < 1e-12, "shape %d: face %u", s, g);
        along += (p[c] - q[c]) * n[c];
      }
      for (int c = 0; c < 3; ++c) /* p - q is along n */
        cr_assert(fabs(p[c] - q[c] - along * n[c]) < 1e-12);
      cr_assert(along > 0);
    }
  }
  /* Faces without their opposite are not pinched. */
  cr_assert_eq(cp_pinch_faces(&shapes[0], 0x3fu & ~CP_REACH_FACE_XN),
               0x3fu & ~(CP_REACH_FACE_XN | CP_REACH_FACE_XP));
  cr_assert_eq(cp_pinch_faces(&shapes[1], CP_REACH_FACE_ZP | CP_REACH_FACE_SIDE),
               CP_REACH_FACE_SIDE);
}

/* Two point fingers (three prismatic joints each, tip spheres r 1 cm) at
 * either side of a 4 cm box of mass 0.1 kg on the floor, mu 0.5 between
 * the tips and the box; the x joints' effort limit is the squeeze F. The z
 * joints' limit, 0.8 N, keeps a lift slow: a tip (0.01 kg) carrying half
 * the box accelerates at most (0.8 - 0.098 - 0.49) / 0.06 = 3.5 m/s^2,
 * which takes mu F >= 0.05 (9.81 + 3.5) = 0.67 N, within the 0.98 N of
 * twice the static bound. */
static char *pinch_task_at(double squeeze, const char *f2_base,
                           const char *pinch) {
  char *t = malloc(16384);
  const char *in = "\"mass\": 0.01, \"inertia\": [[1e-6, 0, 0], [0, 1e-6, 0], [0, 0, 1e-6]]";
  char fingers[4096];
  int n = 0;
  for (int f = 0; f < 2; ++f)
    n += snprintf(fingers + n, sizeof fingers - (size_t)n,
        "%s{\"name\": \"f%d\", \"base\": {\"position\": %s},"
        " \"joints\": ["
        "  {\"name\": \"x\", \"type\": \"prismatic\", \"axis\": [1, 0, 0],"
        "   \"limits\": {\"lower\": -0.5, \"upper\": 0.5, \"effort\": %g}, \"link\": {\"name\": \"cx\", %s}},"
        "  {\"name\": \"y\", \"type\": \"prismatic\", \"axis\": [0, 1, 0],"
        "   \"limits\": {\"lower\": -0.5, \"upper\": 0.5, \"effort\": 20}, \"link\": {\"name\": \"cy\", %s}},"
        "  {\"name\": \"z\", \"type\": \"prismatic\", \"axis\": [0, 0, 1],"
        "   \"limits\": {\"lower\": -0.5, \"upper\": 0.5, \"effort\": 0.8}, \"link\": {\"name\": \"tip\", %s,"
        "   \"shape\": {\"type\": \"sphere\", \"radius\": 0.01}}}]}",
        f ? ", " : "", f + 1, f ? f2_base : "[-0.06, 0, 0.02]", squeeze, in,
        in, in);
  char inputs[2048];
  n = 0;
  for (int f = 1; f <= 2; ++f)
    for (const char *j = "xyz"; *j; ++j)
      n += snprintf(inputs + n, sizeof inputs - (size_t)n,
                    "\"f%d/%c\": {\"kind\": \"target\", \"relative\": true,"
                    " \"values\": [0], \"stiffness\": 1000},", f, *j);
  n = snprintf(t, 16384,
      "{\"scene\": {\"gravity\": [0, 0, -9.81],"
      " \"friction\": {\"default\": 0.3, \"pairs\": [{\"a\": \"box\", \"b\": \"f1\", \"mu\": 0.5},"
      "  {\"a\": \"box\", \"b\": \"f2\", \"mu\": 0.5}]},"
      " \"bodies\": ["
      " {\"name\": \"floor\", \"fixed\": true, \"shape\": {\"type\": \"box\","
      "  \"size\": [1, 1, 0.1]}, \"position\": [0, 0, -0.05]},"
      " {\"name\": \"box\", \"mass\": 0.1, \"shape\": {\"type\": \"box\","
      "  \"size\": [0.04, 0.04, 0.04]}, \"position\": [0, 0, 0.02]}],"
      " \"manipulators\": [%s]},"
      " \"inputs\": {%s"
      "  \"pinch\": {\"kind\": \"pinch\", \"links\": [\"f1/tip\", \"f2/tip\"],"
      "   \"body\": \"box\"%s}},"
      " \"action\": {\"duration\": 0.2, \"dt\": 0.001},"
      " \"goal\": {\"body\": \"box\", \"position\": [0, 0, 0.3], \"tolerance\": 0.01},"
      " \"limits\": {\"nodes\": 10}}",
      fingers, inputs, pinch);
  cr_assert(n < 16384);
  return t;
}

static char *pinch_task(double squeeze, const char *pinch) {
  return pinch_task_at(squeeze, "[0.06, 0, 0.02]", pinch);
}

static void parse_ok(char *text, cp_task *t) {
  cp_error e;
  cr_assert_eq(cp_task_parse(text, strlen(text), NULL, t, &e), 0, "%s: %s",
               e.where, e.msg);
  free(text);
}

static const cp_task_input *pinch_input(const cp_task *t) {
  for (int i = 0; i < t->n_inputs; ++i)
    if (t->inputs[i].kind == CP_INPUT_PINCH) return &t->inputs[i];
  cr_assert_fail("no pinch input");
  return NULL;
}

/* "spread" (reach and pinch inputs) draws points from the middle of each
 * face: a point's body-frame coordinates along its face (a box face's two,
 * a cap's x and y, a cylinder side's height) are scaled by the spread of
 * their axis about the centre, the coordinate across the face kept, so the
 * point stays on its face; [1, 0, 1] puts every box point on the body's
 * x-z midplane; a spread of 1 leaves the drawn point bit for bit. */
Test(pinch, spread_draws_points_from_the_middle_of_each_face) {
  const cp_shape box = {.type = CP_SHAPE_BOX, .size = {0.1, 0.2, 0.4}},
                 cyl = {.type = CP_SHAPE_CYLINDER, .radius = 0.05, .length = 0.3};
  const double one[3] = {1, 1, 1}, s[3] = {0.25, 0.25, 0.25}, mid[3] = {1, 0, 1};
  for (int k = 0; k < 2000; ++k) {
    double p[3], n[3], p1[3], ps[3], pm[3], d, dist, pp[3], pn[3];
    unsigned f = cp_reach_sample(&box, cp_reach_shape_faces(&box), k * 0.37,
                                 no_push, p, n, &d);
    memcpy(p1, p, sizeof p), memcpy(ps, p, sizeof p), memcpy(pm, p, sizeof p);
    cp_reach_spread(&box, f, one, p1);
    cr_assert(!memcmp(p1, p, sizeof p));
    cp_reach_spread(&box, f, s, ps);
    cp_reach_spread(&box, f, mid, pm);
    int a = __builtin_ctz(f) / 2;
    for (int c = 0; c < 3; ++c)
      cr_assert(c == a ? ps[c] == p[c] : fabs(ps[c] - 0.25 * p[c]) < 1e-15 &&
                                             fabs(ps[c]) <= 0.25 * box.size[c] / 2,
                "face %u axis %d: %g from %g", f, c, ps[c], p[c]);
    cr_assert(a == 1 ? pm[1] == p[1] : pm[1] == 0 && pm[0] == p[0] && pm[2] == p[2]);
    cr_assert_eq(cp_reach_nearest(&box, ps, pp, pn, &dist), f);
    cr_assert(fabs(dist) < 1e-12);
    f = cp_reach_sample(&cyl, cp_reach_shape_faces(&cyl), k * 0.37, no_push,
                        p, n, &d);
    memcpy(ps, p, sizeof p);
    cp_reach_spread(&cyl, f, s, ps);
    if (f == CP_REACH_FACE_SIDE)
      cr_assert(ps[0] == p[0] && ps[1] == p[1] && fabs(ps[2]) <= 0.25 * cyl.length / 2);
    else
      cr_assert(ps[2] == p[2] && hypot(ps[0], ps[1]) <= 0.25 * cyl.radius + 1e-15);
  }
  /* Parsed: a number is every axis's share, a vector one per axis. */
  cp_task t;
  parse_ok(pinch_task(5, ", \"values\": [0], \"spread\": 0.5"), &t);
  const cp_task_input *in = pinch_input(&t);
  cr_assert(in->spread[0] == 0.5 && in->spread[1] == 0.5 && in->spread[2] == 0.5);
  cp_task_free(&t);
  parse_ok(pinch_task(5, ", \"values\": [0], \"spread\": [1, 0, 0.5]"), &t);
  in = pinch_input(&t);
  cr_assert(in->spread[0] == 1 && in->spread[1] == 0 && in->spread[2] == 0.5);
  cp_task_free(&t);
}

/* "still" s: a held action keeps the pair where it is (no displacement,
 * no turn) for a share s of the values, drawn after the motion, so that
 * every other value's carry is the one drawn without the key, bit for bit;
 * s = 0 (the default) and s = 1 are never and always. */
Test(pinch, still_keeps_a_share_of_held_pairs_where_they_are) {
  cp_task t0, t1, t4;
  parse_ok(pinch_task(5, ", \"values\": [0], \"carry\": [0.01, 0.02, 0.05],"
                         " \"turn\": 0.3"), &t0);
  parse_ok(pinch_task(5, ", \"values\": [0], \"carry\": [0.01, 0.02, 0.05],"
                         " \"turn\": 0.3, \"still\": 1"), &t1);
  parse_ok(pinch_task(5, ", \"values\": [0], \"carry\": [0.01, 0.02, 0.05],"
                         " \"turn\": 0.3, \"still\": 0.25"), &t4);
  const cp_task_input *a = pinch_input(&t0), *b = pinch_input(&t1),
                      *c = pinch_input(&t4);
  cr_assert(a->still == 0 && b->still == 1 && c->still == 0.25);
  int n = 4000, zero = 0;
  for (int k = 0; k < n; ++k) {
    double v = -0.001 - 3.0 * k / n, d0[3], d1[3], d4[3], g0, g1, g4;
    cp_pinch_carry(a, v, d0, &g0);
    cp_pinch_carry(b, v, d1, &g1);
    cp_pinch_carry(c, v, d4, &g4);
    cr_assert(g0 != 0 && d0[0] != 0 && d0[1] != 0 && d0[2] != 0);
    cr_assert(g1 == 0 && d1[0] == 0 && d1[1] == 0 && d1[2] == 0);
    if (g4 == 0 && d4[0] == 0 && d4[1] == 0 && d4[2] == 0) {
      ++zero;
      continue;
    }
    cr_assert(!memcmp(d4, d0, sizeof d0) && g4 == g0, "v %g: carry changed", v);
  }
  /* Binomial(4000, 0.25): mean 1000, standard deviation 27. */
  cr_assert(zero > 850 && zero < 1150, "%d of %d held still", zero, n);
  cp_task_free(&t0);
  cp_task_free(&t1);
  cp_task_free(&t4);
}

/* Values for the test's actions: a pinch on the +-x pair (the only one
 * left) at mid-height of the box (within 5 mm of it, away from the floor)
 * and within 1 mm of y = 0 (so that gravity has no moment about the line
 * through the two contacts, which point contacts cannot resist), then hold values whose drawn carry (carry [0, 0, 0.01])
 * lifts by more than 6 mm each. */
static int lift_values(const cp_task *t, const cp_task_input *in, double *v,
                       int n, double *up) {
  int k = 0;
  double p[3], nn[3], d;
  for (v[0] = 0.5; cp_reach_sample(&t->scene.bodies[1].shape, in->faces, v[0],
                                   in->push, p, nn, &d),
                   fabs(p[2]) > 0.005 || fabs(p[1]) > 0.001;)
    v[0] += 0.001;
  k = 1;
  *up = 0;
  for (double c = -0.013; k < n; c -= 0.0371) {
    double d[3], ang;
    cp_pinch_carry(in, c, d, &ang);
    cr_assert(d[0] == 0 && d[1] == 0 && ang == 0);
    if (d[2] > 0.006) v[k++] = c, *up += d[2];
  }
  return k;
}

#define PINCH_KEYS ", \"exclude\": [\"+y\", \"-y\", \"+z\", \"-z\"], \"offset\": 0.01," \
  " \"approach\": 0.01, \"push\": [0.01, 0.01], \"hold\": 0.01," \
  " \"carry\": [0, 0, 0.01]"

/* Grip with squeeze F (N) then lift with 5 hold actions: how far the box
 * rose over the lift, how far the tips rose, and the total commanded. */
static double grip_and_lift(double squeeze, double *tips, double *up) {
  cp_task probe;
  char keys[512];
  parse_ok(pinch_task(squeeze, PINCH_KEYS ", \"values\": [0]"), &probe);
  double v[6];
  lift_values(&probe, &probe.inputs[6], v, 6, up);
  cp_task_free(&probe);
  snprintf(keys, sizeof keys,
           PINCH_KEYS ", \"values\": [%.17g, %.17g, %.17g, %.17g, %.17g, %.17g]",
           v[0], v[1], v[2], v[3], v[4], v[5]);
  cp_task t;
  parse_ok(pinch_task(squeeze, keys), &t);
  cr_assert_eq(t.inputs[6].kind, CP_INPUT_PINCH);
  cr_assert_eq(t.inputs[6].faces, CP_REACH_FACE_XP | CP_REACH_FACE_XN);
  cp_plan_world *pw;
  cp_error e;
  cr_assert_eq(cp_plan_world_create(&t, 1, &pw, &e), 0, "%s", e.msg);
  const cp_search_problem *p = cp_plan_world_problem(pw);
  double *x = malloc((size_t)p->n * sizeof *x), *y = malloc((size_t)p->n * sizeof *y);
  memcpy(x, cp_plan_world_start(pw), (size_t)p->n * sizeof *x);
  double z0 = 0, t0 = 0;
  for (long a = 0; a < 6; ++a) {
    cp_expansion info;
    memset(&info, 0, sizeof info);
    cr_assert_eq(p->expand(p->ctx, x, 0, NULL, 0, a, y, &info), 0, "%s",
                 info.message);
    cr_assert_eq(info.outcome, CP_EXPAND_OK, "%s", info.message);
    memcpy(x, y, (size_t)p->n * sizeof *x);
    if (a) continue;
    /* Squeezed: the box still on the floor, each tip touching its face
     * (centre 1 cm off it: the tip's radius) at the drawn height. */
    cr_assert(fabs(x[2] - 0.02) < 1e-3, "box at z %g after the pinch", x[2]);
    cr_assert(fabs(x[13] - 0.03) < 1e-3 && fabs(x[19] + 0.03) < 1e-3,
              "tips at x %g, %g", x[13] - 0.06, 0.06 + x[19]);
    z0 = x[2];
    t0 = x[17];
  }
  double z = x[2] - z0;
  *tips = x[17] - t0;
  free(x);
  free(y);
  cp_plan_world_destroy(pw);
  cp_task_free(&t);
  return z;
}

/* m g / (2 mu) = 0.1 * 9.81 / (2 * 0.5) = 0.981 N per finger: twice that
 * lifts the box with the tips (within 1 mm of their rise, over 3 cm, which
 * is within 5 mm of the commanded lift), half of it lets the box slip and
 * stay on the floor while the tips rise as far. */
Test(pinch, the_pinch_lifts_the_box_when_mu_f_exceeds_half_its_weight) {
  const double bound = 0.1 * 9.81 / (2 * 0.5);
  double up, tips, z = grip_and_lift(2 * bound, &tips, &up);
  cr_assert(tips > 0.03 && fabs(tips - up) < 0.005, "tips rose %g of %g", tips, up);
  cr_assert(fabs(z - tips) < 0.001, "box rose %g with the tips' %g", z, tips);
  z = grip_and_lift(0.5 * bound, &tips, &up);
  cr_assert(tips > 0.02, "tips rose %g of %g", tips, up);
  cr_assert(fabs(z) < 0.001, "box rose %g: it should have slipped", z);
}

/* Whichever face of the +-x pair is drawn, f1 (at x = -0.06) takes the -x
 * face and f2 (10 cm above the box, farther from either) the +x face: the
 * tips end touching their faces (centres 1 cm out) at the drawn point and
 * its antipode. */
Test(pinch, each_finger_takes_the_nearer_point_of_the_pair) {
  /* Two values drawing each face, away from the floor (|z| <= 1 cm). */
  const cp_shape box = {.type = CP_SHAPE_BOX, .size = {0.04, 0.04, 0.04}};
  const double push[2] = {0.01, 0.01};
  double v[4];
  int got[2] = {0, 0};
  for (double c = 0.1; got[0] + got[1] < 4; c += 0.1) {
    double pb[3], nb[3], d;
    unsigned f = cp_reach_sample(&box, CP_REACH_FACE_XP | CP_REACH_FACE_XN, c,
                                 push, pb, nb, &d);
    int k = f == CP_REACH_FACE_XN;
    if (fabs(pb[2]) <= 0.01 && got[k] < 2) v[2 * k + got[k]++] = c;
  }
  char keys[512];
  snprintf(keys, sizeof keys, PINCH_KEYS ", \"values\": [%.17g, %.17g, %.17g, %.17g]",
           v[0], v[1], v[2], v[3]);
  cp_task t;
  parse_ok(pinch_task_at(5, "[0, 0, 0.12]", keys), &t);
  cp_plan_world *pw;
  cp_error e;
  cr_assert_eq(cp_plan_world_create(&t, 1, &pw, &e), 0, "%s", e.msg);
  const cp_search_problem *p = cp_plan_world_problem(pw);
  double *y = malloc((size_t)p->n * sizeof *y);
  for (long a = 0; a < t.n_actions; ++a) {
    double pb[3], nb[3], d;
    unsigned f = cp_reach_sample(&t.scene.bodies[1].shape, t.inputs[6].faces,
                                 t.inputs[6].values[a], t.inputs[6].push, pb,
                                 nb, &d);
    cr_assert_eq(f, a < 2 ? CP_REACH_FACE_XP : CP_REACH_FACE_XN);
    cp_expansion info;
    memset(&info, 0, sizeof info);
    cr_assert_eq(p->expand(p->ctx, cp_plan_world_start(pw), 0, NULL, 0, a, y,
                           &info), 0, "%s", info.message);
    cr_assert_eq(info.outcome, CP_EXPAND_OK, "%s", info.message);
    double tip1[3] = {y[13] - 0.06, y[15], y[17] + 0.02},
           tip2[3] = {y[19], y[21], y[23] + 0.12};
    cr_assert(fabs(tip1[0] + 0.03) < 1e-3 && fabs(tip2[0] - 0.03) < 1e-3,
              "action %ld: tips at x %g and %g", a, tip1[0], tip2[0]);
    for (int k = 1; k < 3; ++k) /* the drawn y, z (box centre 0, 0, 0.02) */
      cr_assert(fabs(tip1[k] - tip2[k]) < 2e-3 &&
                fabs(tip1[k] - pb[k] - (k == 2 ? 0.02 : 0)) < 2e-3,
                "action %ld axis %d: %g, %g, drawn %g", a, k, tip1[k],
                tip2[k], pb[k]);
  }
  free(y);
  cp_plan_world_destroy(pw);
  cp_task_free(&t);
}

static void refused(const char *keys, const char *where, const char *what) {
  char *text = pinch_task(5, keys);
  cp_task t;
  cp_error e;
  cr_assert_neq(cp_task_parse(text, strlen(text), NULL, &t, &e), 0, "%s", keys);
  cr_assert_str_eq(e.where, where, "%s: %s", e.where, e.msg);
  cr_assert(strstr(e.msg, what), "'%s' not in: %s", what, e.msg);
  free(text);
}

Test(pinch, bad_pinch_inputs_are_refused_with_their_path) {
  refused(", \"values\": [0], \"exclude\": [\"+x\", \"+y\", \"+z\"]",
          "inputs.pinch.exclude", "no two opposite faces");
  refused(", \"values\": [0], \"carry\": [0, -0.01, 0]", "inputs.pinch.carry",
          "[0, 1] m");
  refused(", \"values\": [0], \"turn\": 4", "inputs.pinch.turn", "[0, pi]");
  refused(", \"values\": [0], \"still\": 1.5", "inputs.pinch.still", "[0, 1]");
  refused(", \"values\": [0], \"spread\": -0.1", "inputs.pinch.spread",
          "[0, 1]");
  refused(", \"values\": [0], \"spread\": [1, 1.5, 1]",
          "inputs.pinch.spread", "[0, 1]");
  refused(", \"values\": [0], \"axis\": [0, 0, 0]", "inputs.pinch.axis",
          "non-zero");
  refused(", \"values\": [0], \"link\": \"f1/tip\"", "inputs.pinch.link",
          "unknown key");
  refused(", \"values\": [0], \"push\": [0.02, 0.01]", "inputs.pinch.push",
          "lo <= hi");
  /* The links. */
  char *text = pinch_task(5, ", \"values\": [0]");
  char *bad = strstr(text, "\"f2/tip\"]");
  memcpy(bad, "\"f1/tip\"]", 9);
  cp_task t;
  cp_error e;
  cr_assert_neq(cp_task_parse(text, strlen(text), NULL, &t, &e), 0);
  cr_assert_str_eq(e.where, "inputs.pinch.links", "%s", e.msg);
  memcpy(bad, "\"f2/tap\"]", 9);
  cr_assert_neq(cp_task_parse(text, strlen(text), NULL, &t, &e), 0);
  cr_assert_str_eq(e.where, "inputs.pinch.links[1]", "%s", e.msg);
  /* Through the command: exit 2, the file and the path on stderr, nothing
   * on stdout. */
  char *path = cpt_temp_file(text, ".json");
  const char *argv[] = {"complan", "plan", path, NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(argv, &out, &err), 2, "%s", err);
  cr_assert(strstr(err, "inputs.pinch.links[1]") && strstr(err, path), "%s", err);
  cr_assert_str_eq(out, "");
  free(out);
  free(err);
  remove(path);
  free(path);
  free(text);
  /* A joint on a link's path that is not a target input. */
  text = pinch_task(5, ", \"values\": [0]");
  const char *from = "\"f2/y\": {\"kind\": \"target\", \"relative\": true,"
                     " \"values\": [0], \"stiffness\": 1000}",
             *to = "\"f2/y\": {\"values\": [0]}";
  bad = strstr(text, from);
  cr_assert_not_null(bad);
  memset(bad, ' ', strlen(from));
  memcpy(bad, to, strlen(to));
  cr_assert_neq(cp_task_parse(text, strlen(text), NULL, &t, &e), 0);
  cr_assert_str_eq(e.where, "inputs.pinch", "%s: %s", e.where, e.msg);
  cr_assert(strstr(e.msg, "\"f2/y\" moves a pinching link"), "%s", e.msg);
  free(text);
}

/* The pinch test task searched by rrt with continuous sampling and the
 * given search.steer. */
static char *steered_pinch_task(const char *steer) {
  char *text = pinch_task(5, ", \"values\": [0]");
  char *at = strstr(text, "\"limits\": {\"nodes\": 10}}");
  cr_assert_not_null(at);
  snprintf(at, 16384 - (size_t)(at - text),
           "\"search\": {\"method\": \"rrt\", \"sampling\": \"continuous\", \"steer\": \"%s\"},"
           " \"limits\": {\"nodes\": 10}}", steer);
  return text;
}

/* Local steering (search.steer "local") moves inputs with a range along
 * a fitted linear model; a pinch is a label (which faces, which carry), so
 * a task that combines the two is refused at the pinch input's path. */
Test(pinch, local_steering_refuses_a_pinch_input) {
  char *text = steered_pinch_task("local");
  cp_task t;
  cp_error e;
  cr_assert_neq(cp_task_parse(text, strlen(text), NULL, &t, &e), 0);
  cr_assert_str_eq(e.where, "inputs.pinch", "%s: %s", e.where, e.msg);
  cr_assert(strstr(e.msg, "pinch"), "%s", e.msg);
  free(text);
  /* The same task with plain sampling parses. */
  text = steered_pinch_task("sample");
  cr_assert_eq(cp_task_parse(text, strlen(text), NULL, &t, &e), 0, "%s: %s", e.where, e.msg);
  cp_task_free(&t);
  free(text);
}
