// The reuse variants a simulator calls every step (cp_collide_pair_ws,
// cp_scene_generate_contacts_ws, cp_system_build_ws) against the plain
// functions: the same results bit for bit, with one workspace carried
// across many different calls (so that what an earlier call left in it
// cannot leak into a later one), the same errors, and the ownership rules
// of their headers.
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/collide.h"
#include "models/contactgen.h"
#include "models/system.h"
#include "models/vec3.h"
#include "tests/models/mtest.h"
#include "tests/support.h"

// ------------------------------------------------------------- collide --

// A random primitive of type t (sizes 0.05..0.3 m; a plane through z = 0
// tilted by up to ~0.3 rad).
static cp_shape random_shape(uint64_t *rng, cp_shape_type t) {
  cp_shape s;
  memset(&s, 0, sizeof s);
  s.type = t;
  for (int i = 0; i < 3; ++i) s.size[i] = cpt_uniform(rng, 0.05, 0.3);
  s.radius = cpt_uniform(rng, 0.03, 0.15);
  s.length = cpt_uniform(rng, 0.05, 0.3);
  s.normal[0] = cpt_uniform(rng, -0.3, 0.3);
  s.normal[1] = cpt_uniform(rng, -0.3, 0.3);
  s.normal[2] = 1;
  s.offset = cpt_uniform(rng, -0.02, 0.02);
  return s;
}

// A pose within ~0.25 m of the origin (near a plane through it), random
// orientation; sometimes axis-aligned, where face contacts give many points.
static cp_collide_object random_pose(uint64_t *rng, const cp_shape *s) {
  cp_collide_object o = {s, {0}, {1, 0, 0, 0}};
  for (int i = 0; i < 3; ++i) o.x[i] = cpt_uniform(rng, -0.12, 0.12);
  o.x[2] += 0.1;
  if (cpt_uniform(rng, 0, 1) < 0.7)
    for (int i = 0; i < 4; ++i) o.q[i] = cpt_uniform(rng, -1, 1);
  return o;
}

Test(reuse, collide_ws_matches_collide_pair) {
  static const cp_shape_type types[] = {CP_SHAPE_BOX, CP_SHAPE_SPHERE,
                                        CP_SHAPE_CYLINDER, CP_SHAPE_CAPSULE,
                                        CP_SHAPE_PLANE};
  uint64_t rng = 20261203;
  cp_collide_ws ws = {0};
  int with_contacts = 0, many = 0, pairs = 0;
  for (int it = 0; it < 3000; ++it) {
    cp_shape_type ta = types[cpt_rand(&rng) % 5], tb = types[cpt_rand(&rng) % 5];
    if (ta == CP_SHAPE_PLANE && tb == CP_SHAPE_PLANE) continue;
    cp_shape sa = random_shape(&rng, ta), sb = random_shape(&rng, tb);
    cp_collide_object a = random_pose(&rng, &sa), b = random_pose(&rng, &sb);
    cp_collide_options o = cp_collide_defaults();
    o.touch_tol = cpt_uniform(&rng, 0, 1e-3);
    o.max_points = 1 + (int)(cpt_rand(&rng) % 16);
    cp_collide_contact c1[CP_COLLIDE_MAX_POINTS], c2[CP_COLLIDE_MAX_POINTS];
    memset(c1, 0, sizeof c1);
    memset(c2, 0, sizeof c2);
    cp_error e1 = {0}, e2 = {0};
    int n1 = cp_collide_pair(&a, &b, &o, c1, CP_COLLIDE_MAX_POINTS, &e1);
    int n2 = cp_collide_pair_ws(&a, &b, &o, &ws, c2, CP_COLLIDE_MAX_POINTS, &e2);
    cr_assert_eq(n1, n2, "pair %d (%s-%s): %d vs %d points", it,
                 cp_shape_type_name(ta), cp_shape_type_name(tb), n1, n2);
    cr_assert_geq(n1, 0, "pair %d: %s", it, e1.msg);
    cr_assert_eq(memcmp(c1, c2, sizeof c1), 0, "pair %d (%s-%s): points differ",
                 it, cp_shape_type_name(ta), cp_shape_type_name(tb));
    // The documented order (models/collide.h step 4): positions rounded to
    // 1e-9 m lexicographically, then the deeper first.
    for (int k = 1; k < n1; ++k) {
      int cmp = 0;
      for (int i = 0; i < 3 && !cmp; ++i) {
        long long u = llround(c1[k - 1].p[i] / 1e-9), v = llround(c1[k].p[i] / 1e-9);
        cmp = u < v ? -1 : u > v;
      }
      if (!cmp) cmp = c1[k - 1].depth > c1[k].depth ? -1 : c1[k - 1].depth < c1[k].depth;
      cr_assert_leq(cmp, 0, "pair %d: points %d and %d out of order", it, k - 1, k);
    }
    ++pairs;
    with_contacts += n1 > 0;
    many += n1 > 2;
  }
  // The draw is not degenerate: many pairs touch, some with a polygon.
  cr_assert_gt(with_contacts, pairs / 5, "%d of %d", with_contacts, pairs);
  cr_assert_gt(many, 50, "%d", many);
  cp_collide_ws_free(&ws);
  for (int s = 0; s < 2; ++s)
    for (int t = 0; t < CP_COLLIDE_WS_TYPES; ++t)
      cr_assert_null(ws.geom[s][t]);
  cp_collide_ws_free(&ws); // a zeroed workspace: nothing to do
  cp_collide_ws_free(NULL);
}

Test(reuse, collide_ws_errors_as_collide_pair) {
  cp_collide_ws ws = {0};
  cp_shape p = {.type = CP_SHAPE_PLANE, .normal = {0, 0, 1}},
           q = {.type = CP_SHAPE_PLANE, .normal = {0, 1, 0}},
           b = {.type = CP_SHAPE_BOX, .size = {0.1, 0.1, 0.1}},
           bad = {.type = CP_SHAPE_BOX, .size = {0.1, -0.1, 0.1}};
  cp_collide_object op = {&p, {0, 0, 0}, {1, 0, 0, 0}},
                    oq = {&q, {0, 0, 0}, {1, 0, 0, 0}},
                    ob = {&b, {0, 0, 0.05}, {1, 0, 0, 0}},
                    obad = {&bad, {0, 0, 0}, {1, 0, 0, 0}};
  cp_collide_contact c[8];
  cp_error err = {0};
  cr_assert_eq(cp_collide_pair_ws(&op, &oq, NULL, &ws, c, 8, &err), -1);
  cr_assert(strstr(err.msg, "plane-plane"), "%s", err.msg);
  cr_assert_eq(cp_collide_pair_ws(&ob, &obad, NULL, &ws, c, 8, &err), -1);
  cr_assert_str_eq(err.where, "b");
  // The workspace still works after errors: a box resting on a plane.
  cr_assert_eq(cp_collide_pair_ws(&ob, &op, NULL, &ws, c, 8, &err), 4);
  for (int k = 0; k < 4; ++k) cr_assert_float_eq(c[k].p[2], 0.0, 1e-9);
  // ws NULL is cp_collide_pair.
  cr_assert_eq(cp_collide_pair_ws(&ob, &op, NULL, NULL, c, 8, &err), 4);
  cp_collide_ws_free(&ws);
}

// cp_collide_pair (fresh geoms) and cp_collide_pair_ws (kept ones) on the
// same call: the same count and bytes; returns the count.
static int same_as_fresh(const cp_collide_object *a, const cp_collide_object *b,
                         const cp_collide_options *o, cp_collide_ws *ws,
                         const char *what) {
  cp_collide_contact c1[CP_COLLIDE_MAX_POINTS], c2[CP_COLLIDE_MAX_POINTS];
  memset(c1, 0, sizeof c1);
  memset(c2, 0, sizeof c2);
  cp_error e1 = {0}, e2 = {0};
  int n1 = cp_collide_pair(a, b, o, c1, CP_COLLIDE_MAX_POINTS, &e1);
  int n2 = cp_collide_pair_ws(a, b, o, ws, c2, CP_COLLIDE_MAX_POINTS, &e2);
  cr_assert_eq(n1, n2, "%s: %d vs %d points (%s)", what, n1, n2, e1.msg);
  cr_assert_eq(memcmp(c1, c2, sizeof c1), 0, "%s: points differ", what);
  return n1;
}

Test(reuse, collide_ws_follows_every_change) {
  // One workspace through calls that change one thing at a time, each
  // against a fresh call: what the workspace kept from the call before
  // (geom sizes, positions, orientations, the last rotation per side) must
  // never show.
  cp_collide_ws ws = {0};
  cp_shape box = {.type = CP_SHAPE_BOX, .size = {0.2, 0.2, 0.1}},
           top = {.type = CP_SHAPE_BOX, .size = {0.2, 0.2, 0.1}},
           table = {.type = CP_SHAPE_PLANE, .normal = {0, 0, 1}};
  cp_collide_object a = {&box, {0, 0, 0.05}, {1, 0, 0, 0}},
                    t = {&table, {0, 0, 0}, {1, 0, 0, 0}},
                    b = {&top, {0.05, 0, 0.15}, {1, 0, 0, 0}};
  cp_collide_options o = cp_collide_defaults();
  cr_assert_eq(same_as_fresh(&a, &t, &o, &ws, "resting"), 4);
  cr_assert_eq(same_as_fresh(&a, &t, &o, &ws, "again"), 4);
  box.size[2] = 0.12; // the same shape, resized in place: now 1 cm deep
  o.touch_tol = 1e-3;
  int n = same_as_fresh(&a, &t, &o, &ws, "resized");
  cr_assert_eq(n, 4);
  box.size[2] = 0.1;
  a.q[0] = cos(0.01), a.q[1] = sin(0.01); // tilted about x: one edge down
  n = same_as_fresh(&a, &t, &o, &ws, "tilted");
  cr_assert_eq(n, 2, "%d", n);
  a.x[2] += 1e-4;
  same_as_fresh(&a, &t, &o, &ws, "raised");
  a.q[0] = 1, a.q[1] = 0;
  a.x[2] = 0.05;
  cr_assert_eq(same_as_fresh(&a, &t, &o, &ws, "back"), 4);
  table.normal[0] = 0.1; // the same pose, another plane
  same_as_fresh(&a, &t, &o, &ws, "plane tilted");
  table.normal[0] = 0;
  // Box on box: a grown in step 1 (its own geom), then a true-size a;
  // touch_tol changes the grown size between calls.
  for (int k = 0; k < 4; ++k) {
    o.touch_tol = k % 2 ? 1e-6 : 2e-4;
    n = same_as_fresh(&b, &a, &o, &ws, "stacked"); // the overlap polygon
    cr_assert(k ? n >= 4 : n == 4, "%d points", n);
    cr_assert_eq(same_as_fresh(&a, &t, &o, &ws, "resting"), 4);
    b.q[0] = cos(0.2 * k), b.q[3] = sin(0.2 * k); // yawed on top
    b.x[0] = 0.01 * k;
  }
  // The roles swapped (a plane as a, the box as b).
  cr_assert_eq(same_as_fresh(&t, &a, &o, &ws, "plane first"), 4);
  cp_collide_ws_free(&ws);
}

Test(reuse, collide_apart_exactly_at_touch_tol) {
  // Pairs clearly farther apart than touch_tol are rejected before ODE is
  // asked; within rounding of the limit ODE decides. Either way: a gap
  // below touch_tol is a contact (depth -gap), above it none.
  const double tol = 1e-6;
  cp_shape box = {.type = CP_SHAPE_BOX, .size = {0.2, 0.2, 0.1}},
           top = {.type = CP_SHAPE_BOX, .size = {0.1, 0.1, 0.1}},
           table = {.type = CP_SHAPE_PLANE, .normal = {0, 0, 1}};
  static const double dgap[] = {-1e-7, -3e-9, -5e-10, 5e-10, 3e-9, 1e-7, 1e-3};
  cp_collide_options o = cp_collide_defaults();
  o.touch_tol = tol;
  cp_collide_ws ws = {0};
  for (int pass = 0; pass < 2; ++pass) // plane below / box below
    for (int i = 0; i < (int)(sizeof dgap / sizeof dgap[0]); ++i) {
      double gap = tol + dgap[i];
      cp_collide_object lo = {pass ? &box : &table, {0, 0, pass ? 0.05 : 0},
                              {1, 0, 0, 0}},
                        hi = {&top, {0.01, 0, (pass ? 0.1 : 0) + 0.05 + gap},
                              {1, 0, 0, 0}};
      cp_collide_contact c[CP_COLLIDE_MAX_POINTS];
      int n = cp_collide_pair_ws(&hi, &lo, &o, &ws, c, CP_COLLIDE_MAX_POINTS,
                                 NULL);
      cr_assert_eq(n, same_as_fresh(&hi, &lo, &o, &ws, "near tol"));
      if (dgap[i] < 0) {
        cr_assert_eq(n, 4, "pass %d gap tol%+g: %d points", pass, dgap[i], n);
        for (int k = 0; k < n; ++k)
          cr_assert_float_eq(c[k].depth, -gap, 1e-12, "%g", c[k].depth);
      } else {
        cr_assert_eq(n, 0, "pass %d gap tol%+g: %d points", pass, dgap[i], n);
      }
    }
  cp_collide_ws_free(&ws);
}

// ---------------------------------------------------------- contactgen --

static void load(const char *rel, cp_scene *s) {
  const char *root = getenv("CP_SOURCE_ROOT");
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", root ? root : ".", rel);
  cp_error err;
  cr_assert_eq(cp_scene_load(path, NULL, s, &err), 0, "%s: %s", path, err.msg);
}

// Moves every free body by up to d (m) and turns it by up to d (rad), and
// every joint by up to d.
static void jiggle(cp_scene *s, uint64_t *rng, double d) {
  for (int i = 0; i < s->n_bodies; ++i) {
    cp_body *b = &s->bodies[i];
    if (b->fixed) continue;
    for (int k = 0; k < 3; ++k) b->x[k] += cpt_uniform(rng, -d, d);
    double w[3] = {cpt_uniform(rng, -1, 1), cpt_uniform(rng, -1, 1),
                   cpt_uniform(rng, -1, 1)}, dq[4], q[4];
    cp_quat_axis_angle(dq, w, cpt_uniform(rng, -d, d));
    cp_quat_mul(q, dq, b->q);
    memcpy(b->q, q, sizeof q);
  }
  for (int m = 0; m < s->n_manips; ++m)
    for (int k = 0; k < s->manips[m].n; ++k)
      s->manips[m].joints[k].position += cpt_uniform(rng, -d, d);
}

static void assert_same_contacts(const cp_scene *x, const cp_scene *y,
                                 const char *what) {
  cr_assert_eq(x->n_contacts, y->n_contacts, "%s: %d vs %d contacts", what,
               x->n_contacts, y->n_contacts);
  for (int j = 0; j < x->n_contacts; ++j)
    cr_assert_eq(memcmp(&x->contacts[j], &y->contacts[j], sizeof(cp_contact)),
                 0, "%s: contact %d differs", what, j);
}

Test(reuse, generate_ws_matches_generate) {
  // Boxes, spheres, stacks, arches, a gripper, and a URDF finger with
  // triangle meshes (made and destroyed per call even with a workspace).
  static const char *scenes[] = {
      "models/scenes/stack5.json",        "models/scenes/sphere_incline.json",
      "models/scenes/arch.json",          "models/scenes/gripper_box.json",
      "models/scenes/urdf_finger_push.json", "models/scenes/tower.json",
      "models/scenes/grasp_hold.json",    "models/scenes/painleve_slide.json"};
  const int ns = (int)(sizeof scenes / sizeof scenes[0]);
  uint64_t rng = 7;
  cp_contactgen_ws ws = {0};
  int tried = 0, failed = 0;
  for (int round = 0; round < 3; ++round)
    for (int i = 0; i < ns; ++i) {
      cp_scene base;
      load(scenes[i], &base);
      cr_assert(base.contacts_auto, "%s", scenes[i]);
      for (int rep = 0; rep < 6; ++rep) {
        cp_scene a, b;
        cr_assert_eq(cp_scene_copy(&base, &a), 0);
        jiggle(&a, &rng, rep ? 2e-3 * rep : 0);
        cr_assert_eq(cp_scene_copy(&a, &b), 0);
        cp_contactgen_options o = cp_contactgen_scene_options(&a);
        o.touch_tol = cpt_uniform(&rng, 1e-6, 5e-3);
        o.penetration_tol = 2e-3;
        cp_error e1 = {0}, e2 = {0};
        int r1 = cp_scene_generate_contacts(&a, &o, &e1);
        int r2 = cp_scene_generate_contacts_ws(&b, &o, &ws, &e2);
        cr_assert_eq(r1, r2, "%s rep %d: %s / %s", scenes[i], rep, e1.msg,
                     e2.msg);
        cr_assert_str_eq(e1.msg, e2.msg);
        ++tried;
        failed += r1 != 0;
        assert_same_contacts(&a, &b, scenes[i]);
        cp_scene_free(&a);
        cp_scene_free(&b);
      }
      cp_scene_free(&base);
    }
  cr_assert_lt(failed, tried / 2, "%d of %d overlapped", failed, tried);
  cp_contactgen_ws_free(&ws);
  cr_assert_null(ws.list);
  cp_contactgen_ws_free(&ws);
  mt_assert_no_leaks();
}

Test(reuse, generate_ws_reuses_the_array_and_keeps_it_on_error) {
  cp_scene s;
  load("models/scenes/stack5.json", &s);
  cp_contactgen_ws ws = {0};
  cp_error err = {0};
  cr_assert_eq(cp_scene_generate_contacts_ws(&s, NULL, &ws, &err), 0, "%s",
               err.msg);
  int n = s.n_contacts;
  cr_assert_gt(n, 0);
  // The same state again: the same count, written over the same array.
  const cp_contact *p = s.contacts;
  cr_assert_eq(cp_scene_generate_contacts_ws(&s, NULL, &ws, &err), 0);
  cr_assert_eq(s.n_contacts, n);
  cr_assert_eq(s.contacts, p, "the array was not reused in place");
  // Push the second box 5 mm into the first: an error naming the overlap,
  // and the scene's contacts as they were.
  cp_contact *keep = malloc(sizeof(cp_contact) * (size_t)n);
  memcpy(keep, s.contacts, sizeof(cp_contact) * (size_t)n);
  int moved = -1;
  for (int i = 0; i < s.n_bodies && moved < 0; ++i)
    if (!s.bodies[i].fixed && s.bodies[i].x[2] > 0.15) moved = i;
  cr_assert_geq(moved, 0);
  s.bodies[moved].x[2] -= 5e-3;
  cr_assert_eq(cp_scene_generate_contacts_ws(&s, NULL, &ws, &err), -1);
  cr_assert(strstr(err.msg, "overlap"), "%s", err.msg);
  cr_assert_str_eq(err.where, "contacts");
  cr_assert_eq(s.n_contacts, n);
  cr_assert_eq(s.contacts, p);
  cr_assert_eq(memcmp(s.contacts, keep, sizeof(cp_contact) * (size_t)n), 0);
  // Lift every free body clear of everything: no contacts, no array.
  for (int i = 0; i < s.n_bodies; ++i)
    if (!s.bodies[i].fixed) s.bodies[i].x[2] += 10.0 * (i + 1);
  cr_assert_eq(cp_scene_generate_contacts_ws(&s, NULL, &ws, &err), 0);
  cr_assert_eq(s.n_contacts, 0);
  cr_assert_null(s.contacts);
  free(keep);
  cp_contactgen_ws_free(&ws);
  cp_scene_free(&s);
  mt_assert_no_leaks();
}

// -------------------------------------------------------------- system --

static void same_doubles(const double *x, const double *y, size_t n,
                         const char *name, int seed) {
  if (n) cr_assert_eq(memcmp(x, y, n * sizeof *x), 0, "%s differs (%d)", name, seed);
}
static void same_ints(const int *x, const int *y, size_t n, const char *name,
                      int seed) {
  if (n) cr_assert_eq(memcmp(x, y, n * sizeof *x), 0, "%s differs (%d)", name, seed);
}

static void assert_same_system(const cp_system *x, const cp_system *y,
                               const cp_scene *sc, int seed) {
  cr_assert_eq(x->n_obj, y->n_obj);
  cr_assert_eq(x->n_l, y->n_l);
  cr_assert_eq(x->n_u, y->n_u);
  cr_assert_eq(x->n_c, y->n_c);
  size_t nu = (size_t)x->n_u, nc = (size_t)x->n_c, nl = (size_t)x->n_l;
  size_t nfull = 0;
  for (int m = 0; m < sc->n_manips; ++m) nfull += (size_t)sc->manips[m].n;
  same_doubles(x->u, y->u, nu, "u", seed);
  same_doubles(x->H, y->H, nu * nu, "H", seed);
  same_doubles(x->f, y->f, nu, "f", seed);
  same_doubles(x->tau, y->tau, nl, "tau", seed);
  same_doubles(x->qdd, y->qdd, nl, "qdd", seed);
  same_doubles(x->g_man, y->g_man, nl, "g_man", seed);
  same_doubles(x->h_man, y->h_man, nl, "h_man", seed);
  same_doubles(x->G, y->G, nu * 3 * nc, "G", seed);
  same_doubles(x->k, y->k, 3 * nc, "k", seed);
  same_doubles(x->v, y->v, 3 * nc, "v", seed);
  same_doubles(x->Gtor, y->Gtor, nu * nc, "Gtor", seed);
  same_doubles(x->ktor, y->ktor, nc, "ktor", seed);
  same_doubles(x->frame, y->frame, 9 * nc, "frame", seed);
  same_doubles(x->point, y->point, 3 * nc, "point", seed);
  same_doubles(x->mu, y->mu, nc, "mu", seed);
  same_doubles(x->d, y->d, 2 * nc, "d", seed);
  same_doubles(x->chain_row_scale, y->chain_row_scale, nfull, "scale", seed);
  same_ints(x->obj_body, y->obj_body, (size_t)x->n_obj, "obj_body", seed);
  same_ints(x->body_obj, y->body_obj, (size_t)sc->n_bodies, "body_obj", seed);
  same_ints(x->joint_manip, y->joint_manip, nl, "joint_manip", seed);
  same_ints(x->joint_index, y->joint_index, nl, "joint_index", seed);
  same_ints(x->joint_offset, y->joint_offset, (size_t)sc->n_manips,
            "joint_offset", seed);
  same_ints(x->chain_row, y->chain_row, nfull, "chain_row", seed);
  same_ints(x->chain_row_offset, y->chain_row_offset, (size_t)sc->n_manips,
            "chain_row_offset", seed);
  same_ints(x->sliding, y->sliding, nc, "sliding", seed);
  for (size_t r = 0; r < nl; ++r) cr_assert_eq(x->drive[r], y->drive[r]);
}

Test(reuse, system_ws_matches_build) {
  // Random scenes with chains of 3..7 joints, large and small in turn, so
  // that the block is reused with an earlier, bigger system's numbers in
  // it; then bundled scenes with their generated contacts.
  cp_system_ws ws = {0};
  int sliding = 0, rolling = 0;
  for (int seed = 1; seed <= 14; ++seed) {
    int nj = seed % 2 ? 7 - seed / 2 % 5 : 3 + seed / 2 % 5;
    char *text = mt_random_scene((uint64_t)seed, nj);
    cp_scene sc;
    mt_parse_ok(text, 0, &sc);
    free(text);
    cp_system x, y;
    cp_error err = {0};
    cr_assert_eq(cp_system_build(&sc, &x, &err), 0, "%s", err.msg);
    cr_assert_eq(cp_system_build_ws(&sc, &ws, &y, &err), 0, "%s", err.msg);
    cr_assert_not_null(x.own);
    cr_assert_null(y.own, "a workspace's system owns nothing");
    cr_assert_eq((void *)y.H >= ws.block &&
                     (char *)y.H < (char *)ws.block + ws.block_size,
                 1, "the arrays are in the workspace's block");
    assert_same_system(&x, &y, &sc, seed);
    for (int j = 0; j < x.n_c; ++j) {
      sliding += x.sliding[j];
      rolling += !x.sliding[j];
    }
    cp_system_free(&x);
    cp_system_free(&y); // zeroes y; the block stays the workspace's
    cr_assert_null(y.H);
    cr_assert_not_null(ws.block);
    cp_scene_free(&sc);
  }
  static const char *scenes[] = {"models/scenes/stack10.json",
                                 "models/scenes/grasp_hold.json",
                                 "models/scenes/box_drop.json",
                                 "models/scenes/urdf_finger_push.json"};
  for (int i = 0; i < 4; ++i) {
    cp_scene sc;
    load(scenes[i], &sc);
    cp_system x, y;
    cp_error err = {0};
    cr_assert_eq(cp_system_build(&sc, &x, &err), 0, "%s", err.msg);
    cr_assert_eq(cp_system_build_ws(&sc, &ws, &y, &err), 0, "%s", err.msg);
    assert_same_system(&x, &y, &sc, 100 + i);
    for (int j = 0; j < x.n_c; ++j) {
      sliding += x.sliding[j];
      rolling += !x.sliding[j];
    }
    cp_system_free(&x);
    cp_system_free(&y);
    cp_scene_free(&sc);
  }
  cr_assert_gt(sliding, 0); // both kinds of contact columns were compared
  cr_assert_gt(rolling, 0);
  cp_system_ws_free(&ws);
  cr_assert_null(ws.block);
  cp_system_ws_free(&ws);
  mt_assert_no_leaks();
}

// sc built with the workspace ws and on a fresh block: the two systems
// the same bit for bit (assert_same_system, tag in its messages).
static void build_as_fresh(const cp_scene *sc, cp_system_ws *ws, int tag) {
  cp_error err = {0};
  cp_system x, y;
  cr_assert_eq(cp_system_build(sc, &x, &err), 0, "%s", err.msg);
  cr_assert_eq(cp_system_build_ws(sc, ws, &y, &err), 0, "%s", err.msg);
  assert_same_system(&x, &y, sc, tag);
  cp_system_free(&x);
  cp_system_free(&y);
}

// A stack scene with its contacts (generated if the file has none, at
// least min of them) and the chain scene urdf_finger_push; *all gets a copy
// of the stack's contacts (the caller frees it). Returns their number.
static int stack_and_chain(const char *stack, int min, cp_scene *st, cp_scene *ch,
                           cp_contact **all) {
  load(stack, st);
  load("models/scenes/urdf_finger_push.json", ch);
  cp_error err = {0};
  if (!st->n_contacts)
    cr_assert_eq(cp_scene_generate_contacts(st, NULL, &err), 0, "%s", err.msg);
  const int n = st->n_contacts;
  cr_assert_gt(n, min);
  *all = malloc(sizeof(cp_contact) * (size_t)n);
  memcpy(*all, st->contacts, sizeof(cp_contact) * (size_t)n);
  return n;
}

// A large system's H, G and Gtor are not cleared whole by the next build
// with the same workspace: the ranges the last build wrote are (models/
// system.c, zero_hg). Built again and again with contacts dropped, added
// back, reordered, with their bodies swapped, and with a chain scene
// between (a small system: the one memset, and the record dropped), each
// build is bit for bit cp_system_build's on a fresh block.
Test(reuse, system_ws_large_clears_what_it_wrote) {
  cp_scene st, ch;
  cp_contact *all;
  const int n = stack_and_chain("models/scenes/stack10.json", 20, &st, &ch, &all);
  cp_system_ws ws = {0};
  int tracked = 0;
  for (int round = 0; round < 12; ++round) {
    cp_scene *sc = &st;
    const int kind = round % 6;
    if (kind == 0) { // all, in order
      st.n_contacts = n;
      memcpy(st.contacts, all, sizeof(cp_contact) * (size_t)n);
    } else if (kind == 1) { // the first half: the region shrinks
      st.n_contacts = n / 2;
    } else if (kind == 2) { // all in reverse: it grows, columns move
      st.n_contacts = n;
      for (int j = 0; j < n; ++j) st.contacts[j] = all[n - 1 - j];
    } else if (kind == 3) { // a and b swapped, every third one dropped
      int m = 0;
      for (int j = 0; j < n; ++j) {
        if (j % 3 == 2) continue;
        st.contacts[m] = all[j];
        cp_ref a = st.contacts[m].a;
        st.contacts[m].a = st.contacts[m].b;
        st.contacts[m].b = a;
        ++m;
      }
      st.n_contacts = m;
    } else if (kind == 4) { // a chain scene in the same workspace
      sc = &ch;
    } else { // none
      st.n_contacts = 0;
    }
    build_as_fresh(sc, &ws, 200 + round);
    tracked += ws.zero_end > 0;
  }
  cr_assert_geq(tracked, 6, "the large builds kept their record (%d)", tracked);
  st.n_contacts = n;
  memcpy(st.contacts, all, sizeof(cp_contact) * (size_t)n);
  free(all);
  cp_system_ws_free(&ws);
  cp_scene_free(&st);
  cp_scene_free(&ch);
}

// The contacts' perturbations the kept-zeros tests build with: st's
// contacts become all of `all` (n of them), then: reversed (every column's
// rows move), a and b swapped (the same rows, signs turned), every third
// one's b the fixed table (fewer rows), the first half, the first four, or
// every other one (columns move up). Returns 1 when columns' rows move.
enum { P_ALL, P_REVERSE, P_SWAP, P_TABLE, P_HALF, P_FEW, P_ALTERNATE };
static int perturb_contacts(cp_scene *st, const cp_contact *all, int n, int what) {
  st->n_contacts = n;
  memcpy(st->contacts, all, sizeof(cp_contact) * (size_t)n);
  switch (what) {
  case P_REVERSE:
    for (int j = 0; j < n; ++j) st->contacts[j] = all[n - 1 - j];
    return 1;
  case P_SWAP:
    for (int j = 0; j < n; ++j) {
      st->contacts[j].a = all[j].b;
      st->contacts[j].b = all[j].a;
    }
    return 0;
  case P_TABLE:
    for (int j = 0; j < n; j += 3) st->contacts[j].b = (cp_ref){.body = 0, .manip = -1, .link = -1};
    return 1;
  case P_HALF: st->n_contacts = n / 2; return 0;
  case P_FEW: st->n_contacts = 4; return 0;
  case P_ALTERNATE:
    for (int j = 0; 2 * j < n; ++j) st->contacts[j] = all[2 * j];
    st->n_contacts = (n + 1) / 2;
    return 0;
  default: return 0;
  }
}

// A small system of free bodies (the 5-box stack: below the tracked size)
// keeps its zeros between builds with the same workspace and clears no
// more than the contact columns whose rows moved (models/system.c,
// keep_hg). Built again and again with the same number of contacts in
// another order, with their bodies swapped, with one side of some made the
// fixed table (a column's rows shrink) and back, with half of them (other
// sizes), after the block was filled with garbage, and with a chain scene
// between, each build is bit for bit cp_system_build's on a fresh block.
Test(reuse, system_ws_small_keeps_its_zeros) {
  cp_scene st, ch;
  cp_contact *all;
  const int n = stack_and_chain("models/scenes/stack5.json", 12, &st, &ch, &all);
  cp_system_ws ws = {0};
  int kept = 0, moved = 0;
  for (int round = 0; round < 16; ++round) {
    cp_scene *sc = &st;
    const int kind = round % 8;
    static const int what[8] = {P_ALL, P_REVERSE, P_SWAP, P_TABLE, P_HALF};
    moved += perturb_contacts(&st, all, n, what[kind]);
    if (kind == 5) { // garbage in the block
      if (ws.block) memset(ws.block, 0xA5, ws.block_size);
      ws.zero_end = 0; // the block was written: its zeros are not known
    } else if (kind == 6) { // a chain scene in the same workspace
      sc = &ch;
    }
    const int was_kept = ws.n_dirty == (size_t)-1 && ws.zero_end > 0;
    build_as_fresh(sc, &ws, 300 + round);
    kept += was_kept && sc == &st && st.n_contacts == n;
  }
  cr_assert_geq(kept, 6, "builds on a kept region (%d)", kept);
  cr_assert_gt(moved, 0);
  cr_assert(st.bodies[0].fixed);
  st.n_contacts = n;
  memcpy(st.contacts, all, sizeof(cp_contact) * (size_t)n);
  free(all);
  cp_system_ws_free(&ws);
  cp_scene_free(&st);
  cp_scene_free(&ch);
}

// A large system of free bodies (the 10-box stack: past the tracked size)
// keeps its zeros the same way (models/system.c, keep_hg), and a build
// with other sizes clears the last build's rows (its bodies' blocks and
// its contacts' rows, in its layout) and what lay past its region, not
// the whole region. Built with contacts appearing (a few, then all: the
// rows' record grows) and disappearing (half of them), reordered, with
// their bodies swapped, with one side made the fixed table, after garbage
// in the block and with a chain scene between, each build is bit for bit
// cp_system_build's on a fresh block.
Test(reuse, system_ws_large_keeps_its_zeros) {
  cp_scene st, ch;
  cp_contact *all;
  const int n = stack_and_chain("models/scenes/stack10.json", 20, &st, &ch, &all);
  cp_system_ws ws = {0};
  int kept = 0, cleared = 0, moved = 0;
  for (int round = 0; round < 20; ++round) {
    cp_scene *sc = &st;
    const int kind = round % 10;
    // a few first: a region past the tracked size still
    static const int what[10] = {P_FEW, P_ALL, P_REVERSE, P_SWAP, P_TABLE, P_ALTERNATE};
    moved += perturb_contacts(&st, all, n, what[kind]);
    if (kind == 7) { // garbage in the block
      if (ws.block) memset(ws.block, 0xA5, ws.block_size);
      ws.zero_end = 0; // the block was written: its zeros are not known
    } else if (kind == 8) { // a chain scene in the same workspace
      sc = &ch;
    }
    const int was_kept = ws.n_dirty == (size_t)-1 && ws.zero_end > 0;
    const int same = was_kept && ws.keep_nc == st.n_contacts;
    build_as_fresh(sc, &ws, 400 + round);
    if (sc == &st) {
      cr_assert_eq(ws.n_dirty, (size_t)-1, "round %d: a kept build", round);
      kept += same;
      cleared += was_kept && !same;
    }
  }
  cr_assert_geq(kept, 6, "builds on a kept region (%d)", kept);
  cr_assert_geq(cleared, 4, "builds cleared on the last rows (%d)", cleared);
  cr_assert_gt(moved, 0);
  cr_assert(st.bodies[0].fixed);
  st.n_contacts = n;
  memcpy(st.contacts, all, sizeof(cp_contact) * (size_t)n);
  free(all);
  cp_system_ws_free(&ws);
  cp_scene_free(&st);
  cp_scene_free(&ch);
}

// The rows of a ref's columns: a free body's 6, its chain's coordinates for
// a link, none for a fixed body.
static void ref_rows(const cp_system *s, const cp_scene *sc, cp_ref r,
                     size_t *lo, size_t *hi) {
  *lo = *hi = 0;
  if (r.body >= 0) {
    int oi = s->body_obj[r.body];
    if (oi >= 0) *lo = 6 * (size_t)oi, *hi = *lo + 6;
    return;
  }
  *lo = (size_t)(6 * s->n_obj + s->joint_offset[r.manip]);
  *hi = (size_t)(6 * s->n_obj) + (size_t)(r.manip + 1 < sc->n_manips
                                              ? s->joint_offset[r.manip + 1]
                                              : s->n_l);
}

static int same_bits(double x, double y) { return !memcmp(&x, &y, sizeof x); }

// The build writes each contact column once and sums v = G^T u over the
// rows its refs touch only. Checked against the definitions: every other
// row of G and Gtor is +0 (bits), a free body's rows are [N; (p - x) x N]
// (Gtor: [0; n]) with the ref's sign, H is zero outside the bodies' blocks
// and the chains' block, and v is bit for bit the sum over EVERY row in
// row order -- also with -0, inf and NaN in u (a NaN anywhere in u makes
// every v it multiplies NaN, as the full sum does) and with the same ref on
// both sides of a contact (shared rows, added a then b). The workspace is
// filled with garbage before each build, and the other arrays are compared
// with cp_system_build's (a fresh block).
Test(reuse, system_columns_as_defined) {
  cp_system_ws ws = {0};
  int checked = 0, nan_v = 0, shared = 0;
  for (int seed = 1; seed <= 12; ++seed)
    for (int variant = 0; variant < 5; ++variant) {
      char *text = mt_random_scene((uint64_t)seed, 2 + seed % 5);
      cp_scene sc;
      mt_parse_ok(text, 0, &sc);
      free(text);
      cp_body *box = &sc.bodies[1], *ball = &sc.bodies[2];
      cr_assert(!box->fixed && !ball->fixed);
      if (variant == 1) box->v[1] = NAN;
      if (variant == 2) ball->w[2] = -INFINITY;
      if (variant == 3)
        for (int k = 0; k < 3; ++k) box->v[k] = box->w[k] = -0.0;
      if (variant == 4) { // box-table becomes box-box; box-ball ball-ball
        sc.contacts[0].b = sc.contacts[0].a;
        sc.contacts[1].a = sc.contacts[1].b;
        shared += 2;
      }
      cp_system s;
      cp_error err = {0};
      // Garbage (NaN bits) where the last build was: every element the
      // build does not write shows.
      if (ws.block) memset(ws.block, 0xA5, ws.block_size);
      ws.zero_end = 0; // the block was written: its zeros are not known
      cr_assert_eq(cp_system_build_ws(&sc, &ws, &s, &err), 0, "%s", err.msg);
      size_t nu = (size_t)s.n_u;
      for (size_t c = 0; c < nu; ++c)
        for (size_t r = 0; r < nu; ++r) {
          double h = s.H[r + c * nu];
          int body = r < 6 * (size_t)s.n_obj && c < 6 * (size_t)s.n_obj;
          if (body ? r / 6 != c / 6 : (r < 6 * (size_t)s.n_obj) !=
                                          (c < 6 * (size_t)s.n_obj))
            cr_assert(same_bits(h, 0.0), "H(%zu, %zu) = %g", r, c, h);
          cr_assert(same_bits(h, s.H[c + r * nu]), "H not symmetric");
        }
      for (int j = 0; j < s.n_c; ++j) {
        const cp_contact *ct = &sc.contacts[j];
        size_t alo, ahi, blo, bhi;
        ref_rows(&s, &sc, ct->a, &alo, &ahi);
        ref_rows(&s, &sc, ct->b, &blo, &bhi);
        for (int c = 0; c < 4; ++c) {
          const double *g = c < 3 ? s.G + (size_t)(3 * j + c) * nu
                                  : s.Gtor + (size_t)j * nu;
          double acc = 0;
          for (size_t r = 0; r < nu; ++r) {
            if (!(r >= alo && r < ahi) && !(r >= blo && r < bhi))
              cr_assert(same_bits(g[r], 0.0), "contact %d column %d row %zu",
                        j, c, r);
            acc += g[r] * s.u[r];
          }
          if (c == 3) continue;
          cr_assert(same_bits(acc, s.v[3 * j + c]) ||
                        (isnan(acc) && isnan(s.v[3 * j + c])),
                    "seed %d variant %d contact %d: v %a, full sum %a", seed,
                    variant, j, s.v[3 * j + c], acc);
          nan_v += isnan(acc) != 0;
          // A free body against a fixed one: [N_c; (p - x) x N_c].
          if (ct->a.body >= 0 && ahi && bhi == 0) {
            const cp_body *b = &sc.bodies[ct->a.body];
            double d[3], rx[3];
            cp_v3_sub(d, ct->p, b->x);
            cp_v3_cross(rx, d, s.frame + 9 * j + 3 * c);
            for (int i = 0; i < 3; ++i) {
              cr_assert_eq(g[alo + (size_t)i], s.frame[9 * j + 3 * c + i]);
              cr_assert_eq(g[alo + 3 + (size_t)i], rx[i]);
              cr_assert_eq(s.Gtor[(size_t)j * nu + alo + (size_t)i], 0.0);
              cr_assert_eq(s.Gtor[(size_t)j * nu + alo + 3 + (size_t)i],
                           ct->n[i]);
            }
          }
          if (variant == 4 && j < 2) // a - a: the columns cancel
            for (size_t r = alo; r < ahi; ++r) cr_assert_eq(g[r], 0.0);
        }
        ++checked;
      }
      cp_system x;
      cr_assert_eq(cp_system_build(&sc, &x, &err), 0, "%s", err.msg);
      assert_same_system(&x, &s, &sc, seed);
      cp_system_free(&x);
      cp_system_free(&s);
      cp_scene_free(&sc);
    }
  cr_assert_gt(checked, 200);
  cr_assert_gt(nan_v, 10); // the NaN and inf variants were summed in full
  cr_assert_gt(shared, 0);
  cp_system_ws_free(&ws);
  mt_assert_no_leaks();
}
