// The contact generator's pair finding (models/contactgen.c: a sweep over
// the objects' bounding boxes, its order kept in the workspace between
// calls; each object validated and turned once for all its pairs) against
// an independent list: every pair of the scene's bodies in body order
// collided afresh by cp_collide_pair (no workspace, nothing kept). Points,
// depths and normals must be the same bits, in the same order, over random
// piles of mixed shapes (enough objects for the sweep) and the edge cases
// of a resting scene: faces exactly touching, a box exactly on another,
// parallel edges, equal poses. The workspace is reused across steps and
// across scenes (its kept order must not carry over wrongly).
#include <criterion/criterion.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/collide.h"
#include "models/contactgen.h"
#include "models/scene.h"
#include "models/vec3.h"
#include "tests/models/mtest.h"

#define MAXB 40

// Deterministic uniform in [0, 1).
static double urand(unsigned long long *s) {
  *s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
  return (double)(*s >> 11) * 0x1p-53;
}

typedef struct pile {
  int n;
  char text[MAXB * 320 + 512];
} pile;

// A scene: a floor plane, `fixed` fixed boxes, then moving bodies.
static void add(pile *p, int *k, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void add(pile *p, int *k, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  *k += vsnprintf(p->text + *k, sizeof p->text - (size_t)*k, fmt, ap);
  va_end(ap);
}

// Random pile of n moving bodies in a cube of side L around the origin
// (boxes, spheres, capsules, cylinders), one fixed box and the floor; some
// boxes placed exactly on, beside or on the edge of an earlier one.
static void random_pile(pile *p, int n, double L, unsigned long long seed) {
  unsigned long long s = seed;
  int k = 0;
  add(p, &k, "{\"friction\": {\"default\": 0.5}, \"penetration_tolerance\": 10, "
             "\"bodies\": [{\"name\": \"floor\", \"fixed\": true, \"shape\": {\"type\": "
             "\"plane\", \"normal\": [0, 0, 1], \"offset\": 0}}, {\"name\": \"post\", "
             "\"fixed\": true, \"shape\": {\"type\": \"box\", \"size\": [0.1, 0.1, 0.4]}, "
             "\"position\": [0, 0, 0.2]}");
  double bx[MAXB][3];
  for (int i = 0; i < n; ++i) {
    int kind = (int)(urand(&s) * 8);
    double x = (urand(&s) - 0.5) * L, y = (urand(&s) - 0.5) * L, z = 0.05 + urand(&s) * L;
    double a = (urand(&s) - 0.5) * 6.28, ux = urand(&s) - 0.5, uy = urand(&s) - 0.5,
           uz = urand(&s) - 0.5, un = sqrt(ux * ux + uy * uy + uz * uz);
    double q[4] = {cos(a / 2), sin(a / 2) * ux / un, sin(a / 2) * uy / un, sin(a / 2) * uz / un};
    if (kind >= 4 && i > 0) { // exact placements against the previous box
      const double *c = bx[i - 1];
      x = c[0], y = c[1], z = c[2];
      if (kind == 4) z += 0.1;                        // exactly on it
      else if (kind == 5) x += 0.1;                   // faces touching
      else if (kind == 6) z += 0.1, x += 0.1;         // parallel edges
      else x += 0.03, y -= 0.02, z += 0.1;            // overhanging
      q[0] = 1, q[1] = q[2] = q[3] = 0;
      if (kind == 6) q[0] = cos(0.25 * 3.14159265358979), q[3] = sin(0.25 * 3.14159265358979);
      kind = 0;
    }
    bx[i][0] = x, bx[i][1] = y, bx[i][2] = z;
    static const char *shapes[4] = {
        "{\"type\": \"box\", \"size\": [0.1, 0.1, 0.1]}",
        "{\"type\": \"sphere\", \"radius\": 0.05}",
        "{\"type\": \"capsule\", \"radius\": 0.03, \"length\": 0.1}",
        "{\"type\": \"cylinder\", \"radius\": 0.04, \"length\": 0.08}"};
    add(p, &k, ", {\"name\": \"b%d\", \"mass\": 1, \"shape\": %s, \"position\": [%.17g, "
               "%.17g, %.17g], \"orientation\": [%.17g, %.17g, %.17g, %.17g]}",
        i, shapes[kind % 4], x, y, z, q[0], q[1], q[2], q[3]);
  }
  add(p, &k, "]}");
  p->n = n + 2;
}

// The independent list: every pair of bodies in body order (a the moving
// one against a fixed body, else the earlier), cp_collide_pair afresh,
// compared with s->contacts point by point.
static void assert_same_as_fresh(const cp_scene *s, const cp_contactgen_options *opt) {
  cp_collide_options co = cp_collide_defaults();
  co.touch_tol = opt->touch_tol;
  co.merge_tol = opt->merge_tol;
  co.max_points = opt->max_points;
  co.mesh_hull = opt->mesh_hull;
  int at = 0;
  for (int i = 0; i < s->n_bodies; ++i)
    for (int j = i + 1; j < s->n_bodies; ++j) {
      const cp_body *A = &s->bodies[i], *B = &s->bodies[j];
      if (A->fixed && B->fixed) continue;
      if (A->fixed) A = &s->bodies[j], B = &s->bodies[i];
      cp_collide_object oa = {&A->shape, {A->x[0], A->x[1], A->x[2]},
                              {A->q[0], A->q[1], A->q[2], A->q[3]}};
      cp_collide_object ob = {&B->shape, {B->x[0], B->x[1], B->x[2]},
                              {B->q[0], B->q[1], B->q[2], B->q[3]}};
      cp_collide_contact pts[CP_COLLIDE_MAX_POINTS];
      int m = cp_collide_pair(&oa, &ob, &co, pts, CP_COLLIDE_MAX_POINTS, NULL);
      cr_assert_geq(m, 0);
      for (int k = 0; k < m; ++k, ++at) {
        cr_assert_lt(at, s->n_contacts, "fewer contacts than the fresh list");
        const cp_contact *c = &s->contacts[at];
        cr_assert_eq(c->a.body, (int)(A - s->bodies));
        cr_assert_eq(c->b.body, (int)(B - s->bodies));
        double p[3] = {pts[k].p[0] + 0.0, pts[k].p[1] + 0.0, pts[k].p[2] + 0.0}, n[3];
        cp_v3_scale(n, pts[k].n, 1.0 / cp_v3_norm(pts[k].n));
        for (int d = 0; d < 3; ++d) n[d] += 0.0;
        cr_assert_eq(memcmp(p, c->p, sizeof p), 0, "pair %d-%d point %d", i, j, k);
        cr_assert_eq(memcmp(n, c->n, sizeof n), 0, "pair %d-%d normal %d", i, j, k);
        cr_assert_eq(memcmp(&pts[k].depth, &c->depth, sizeof c->depth), 0);
      }
    }
  cr_assert_eq(at, s->n_contacts, "more contacts than the fresh list");
}

static void parse(const char *text, cp_scene *s) {
  cp_error err;
  cr_assert_eq(cp_scene_parse_geometry(text, strlen(text), NULL, NULL, s, &err), 0, "%s: %s",
               err.where, err.msg);
}

Test(contactgen_sweep, random_piles_equal_fresh_pairs) {
  cp_contactgen_ws ws = {0};
  cp_contactgen_options opt = cp_contactgen_defaults();
  opt.penetration_tol = 10; // overlaps are fine here: this is about pairs
  unsigned long long seed = 7;
  int total = 0;
  for (int trial = 0; trial < 60; ++trial) {
    static pile p;
    int n = 3 + trial % 30; // below and above the sweep's threshold
    double L = trial % 3 == 0 ? 0.2 : trial % 3 == 1 ? 0.5 : 2.0;
    random_pile(&p, n, L, ++seed);
    cp_scene s;
    parse(p.text, &s);
    opt.touch_tol = trial % 4 == 0 ? 0 : trial % 4 == 1 ? 1e-6 : trial % 4 == 2 ? 1e-3 : 0.05;
    cp_error err;
    // The kept workspace (the last trial's order) and a fresh call.
    cr_assert_eq(cp_scene_generate_contacts_ws(&s, &opt, &ws, &err), 0, "%s", err.msg);
    assert_same_as_fresh(&s, &opt);
    total += s.n_contacts;
    // Steps: every body moved a little, then the same scene again.
    for (int step = 0; step < 3; ++step) {
      for (int i = 0; i < s.n_bodies; ++i)
        if (!s.bodies[i].fixed)
          for (int d = 0; d < 3; ++d) s.bodies[i].x[d] += 1e-3 * (urand(&seed) - 0.5);
      cr_assert_eq(cp_scene_generate_contacts_ws(&s, &opt, &ws, &err), 0, "%s", err.msg);
      assert_same_as_fresh(&s, &opt);
      cr_assert_eq(cp_scene_generate_contacts(&s, &opt, &err), 0);
      assert_same_as_fresh(&s, &opt);
    }
    cp_scene_free(&s);
  }
  cr_assert_gt(total, 500, "the piles touch (%d contacts)", total);
  cp_contactgen_ws_free(&ws);
}

// A bin-like layout: many boxes in a grid, resting on the floor and on
// each other exactly; the sweep drops most pairs; swapping the bodies'
// positions between calls (the same count: the kept order is stale)
// still gives the fresh list.
Test(contactgen_sweep, grid_exact_contacts_and_stale_order) {
  static pile p;
  int k = 0;
  add(&p, &k, "{\"penetration_tolerance\": 1e-3, \"bodies\": [{\"name\": \"floor\", "
              "\"fixed\": true, \"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1], "
              "\"offset\": 0}}");
  int nb = 0;
  for (int layer = 0; layer < 2; ++layer)
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c, ++nb)
        add(&p, &k, ", {\"name\": \"g%d\", \"mass\": 1, \"shape\": {\"type\": \"box\", "
                    "\"size\": [0.1, 0.1, 0.05]}, \"position\": [%.17g, %.17g, %.17g]}",
            nb, 0.1 * c, 0.1 * r + 0.05 * layer, 0.025 + 0.05 * layer);
  add(&p, &k, "]}");
  cp_scene s;
  parse(p.text, &s);
  cp_contactgen_ws ws = {0};
  cp_contactgen_options opt = cp_contactgen_defaults();
  opt.touch_tol = 1e-4;
  opt.penetration_tol = 1; // the changes below press bodies together
  cp_error err;
  cr_assert_eq(cp_scene_generate_contacts_ws(&s, &opt, &ws, &err), 0, "%s", err.msg);
  assert_same_as_fresh(&s, &opt);
  // Lower layer: 16 x 4 corners on the floor; faces touching in the grid.
  cr_assert_gt(s.n_contacts, 64);
  unsigned long long seed = 3;
  for (int round = 0; round < 20; ++round) {
    int i = 1 + (int)(urand(&seed) * nb), j = 1 + (int)(urand(&seed) * nb);
    double t[3];
    memcpy(t, s.bodies[i].x, sizeof t);
    memcpy(s.bodies[i].x, s.bodies[j].x, sizeof t);
    memcpy(s.bodies[j].x, t, sizeof t);
    cr_assert_eq(cp_scene_generate_contacts_ws(&s, &opt, &ws, &err), 0, "%s", err.msg);
    assert_same_as_fresh(&s, &opt);
  }
  // The workspace keeps each object's validated pose while its shape,
  // position and quaternion keep their bits: a change of any of them (the
  // pose of the others unchanged) must be seen.
  const int n0 = s.n_contacts;
  s.bodies[5].shape.size[2] = 0.06; // taller: presses into its neighbours
  cr_assert_eq(cp_scene_generate_contacts_ws(&s, &opt, &ws, &err), 0, "%s", err.msg);
  assert_same_as_fresh(&s, &opt);
  s.bodies[0].shape.offset = 2e-5; // the floor raised by 20 um
  cr_assert_eq(cp_scene_generate_contacts_ws(&s, &opt, &ws, &err), 0, "%s", err.msg);
  assert_same_as_fresh(&s, &opt);
  s.bodies[0].q[0] = cos(0.01), s.bodies[0].q[1] = sin(0.01); // and tilted
  cr_assert_eq(cp_scene_generate_contacts_ws(&s, &opt, &ws, &err), 0, "%s", err.msg);
  assert_same_as_fresh(&s, &opt);
  cr_assert_neq(s.n_contacts, n0);
  s.bodies[0].q[0] = 1, s.bodies[0].q[1] = 0; // back: the first answer
  s.bodies[0].shape.offset = 0;
  s.bodies[5].shape.size[2] = 0.05;
  cr_assert_eq(cp_scene_generate_contacts_ws(&s, &opt, &ws, &err), 0, "%s", err.msg);
  assert_same_as_fresh(&s, &opt);
  cr_assert_eq(s.n_contacts, n0);
  s.bodies[3].shape.size[0] = -1; // an invalid shape: the pair's error
  cr_assert_eq(cp_scene_generate_contacts_ws(&s, &opt, &ws, &err), -1);
  cr_assert(strstr(err.msg, "box size must be positive"), "%s", err.msg);
  cp_scene_free(&s);
  cp_contactgen_ws_free(&ws);
  mt_assert_no_leaks();
}

// An object whose position is not finite is paired with every other (no
// sweep box), so the error is the one every pair test gives.
Test(contactgen_sweep, nonfinite_position_still_an_error) {
  static pile p;
  random_pile(&p, 12, 2.0, 99);
  cp_scene s;
  parse(p.text, &s);
  cp_contactgen_ws ws = {0};
  cp_error err;
  cr_assert_eq(cp_scene_generate_contacts_ws(&s, NULL, &ws, &err), 0, "%s", err.msg);
  s.bodies[7].x[1] = NAN;
  cr_assert_eq(cp_scene_generate_contacts_ws(&s, NULL, &ws, &err), -1);
  cr_assert(strstr(err.msg, "position is not finite"), "%s", err.msg);
  s.bodies[7].x[1] = INFINITY;
  cr_assert_eq(cp_scene_generate_contacts(&s, NULL, &err), -1);
  cr_assert(strstr(err.msg, "position is not finite"), "%s", err.msg);
  cp_scene_free(&s);
  // One object (no pairs), with a fresh workspace and with a used one.
  cp_scene one;
  parse("{\"bodies\": [{\"name\": \"b\", \"mass\": 1, \"shape\": {\"type\": "
        "\"box\", \"size\": [1, 1, 1]}}]}", &one);
  cr_assert_eq(cp_scene_generate_contacts(&one, NULL, &err), 0, "%s", err.msg);
  cr_assert_eq(one.n_contacts, 0);
  cr_assert_eq(cp_scene_generate_contacts_ws(&one, NULL, &ws, &err), 0, "%s", err.msg);
  cr_assert_eq(one.n_contacts, 0);
  cp_scene_free(&one);
  cp_contactgen_ws_free(&ws);
}
