// Automatic contacts (models/contactgen.h) through the scene parser: counts,
// points, normals, a/b, frames and friction against analytic answers; the
// pair rules; tolerances; penetration and normal-speed errors; and the
// explicit-vs-automatic twins of the bundled incline scenes compared through
// the system quantities (G, k, v, sliding flags, mu).
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/problem.h"
#include "models/contactgen.h"
#include "models/manifold.h"
#include "models/system.h"
#include "models/vec3.h"
#include "tests/models/mtest.h"
#include "tests/support.h"

#define PI 3.14159265358979323846
#define POS_TOL 1e-9   // contact positions (m): exact geometry up to rounding
#define DIR_TOL 1e-12  // unit vectors

static const char *table =
    "{\"name\": \"table\", \"fixed\": true, \"shape\": {\"type\": \"plane\", "
    "\"normal\": [0, 0, 1], \"offset\": 0}}";

// Parses {"bodies": [table, BODIES...] EXTRA} with automatic contacts.
static void scene_with(cp_scene *s, const char *bodies, const char *extra) {
  char text[8192];
  snprintf(text, sizeof text, "{\"bodies\": [%s%s%s]%s%s}", table,
           bodies[0] ? ", " : "", bodies, extra ? ", " : "",
           extra ? extra : "");
  mt_parse_ok(text, 1, s);
}

static void parse_fails(const char *bodies, const char *extra,
                        const char *where, const char *part) {
  char text[8192];
  snprintf(text, sizeof text, "{\"bodies\": [%s%s%s]%s%s}", table,
           bodies[0] ? ", " : "", bodies, extra ? ", " : "",
           extra ? extra : "");
  mt_parse_fails(text, where, part);
}

// Index of the contact at p (within POS_TOL), or -1.
static int find_point(const cp_scene *s, double x, double y, double z) {
  double p[3] = {x, y, z};
  for (int j = 0; j < s->n_contacts; ++j) {
    double d[3];
    cp_v3_sub(d, s->contacts[j].p, p);
    if (cp_v3_norm(d) <= POS_TOL) return j;
  }
  return -1;
}

static void assert_contact(const cp_scene *s, double x, double y, double z,
                           const char *a, const char *b, double nx, double ny,
                           double nz) {
  int j = find_point(s, x, y, z);
  cr_assert_geq(j, 0, "no contact at [%g, %g, %g]", x, y, z);
  const cp_contact *c = &s->contacts[j];
  char an[64], bn[64];
  cr_assert_str_eq(cp_scene_ref_name(s, c->a, an, sizeof an), a);
  cr_assert_str_eq(cp_scene_ref_name(s, c->b, bn, sizeof bn), b);
  cr_assert_float_eq(c->n[0], nx, DIR_TOL);
  cr_assert_float_eq(c->n[1], ny, DIR_TOL);
  cr_assert_float_eq(c->n[2], nz, DIR_TOL);
  cr_assert_lt(fabs(c->depth), 1e-12, "depth %g", c->depth);
  // Frame: the explicit-contact default tangent, right-handed, orthonormal.
  double t[3], o[3];
  cp_scene_default_tangent(c->n, t);
  cr_assert_eq(memcmp(t, c->t, sizeof t), 0);
  cp_v3_cross(o, c->n, c->t);
  cr_assert_eq(memcmp(o, c->o, sizeof o), 0);
  cr_assert_float_eq(cp_v3_dot(c->n, c->t), 0, DIR_TOL);
  cr_assert_eq(c->has_torsion, 0);
  cr_assert_eq(c->restitution, 0);
}

// --------------------------------------------------------------- counts --

Test(contactgen, box_on_plane_four_corners) {
  cp_scene s;
  scene_with(&s,
             "{\"name\": \"box\", \"mass\": 1, \"shape\": {\"type\": \"box\", "
             "\"size\": [0.2, 0.1, 0.1]}, \"position\": [0.3, -0.2, 0.05]}",
             "\"friction\": {\"default\": 0.7, \"pairs\": [{\"a\": \"table\", "
             "\"b\": \"box\", \"mu\": 0.3}]}");
  cr_assert_eq(s.contacts_auto, 1);
  cr_assert_eq(s.n_contacts, 4);
  for (int sx = -1; sx <= 1; sx += 2)
    for (int sy = -1; sy <= 1; sy += 2)
      assert_contact(&s, 0.3 + 0.1 * sx, -0.2 + 0.05 * sy, 0, "box", "table",
                     0, 0, 1);
  for (int j = 0; j < 4; ++j) {
    cr_assert_float_eq(s.contacts[j].mu, 0.3, 0); // from the pair table
    cr_assert_float_eq(s.contacts[j].t[0], 1, 0); // n = z: t = x
  }
  cp_scene_free(&s);
  mt_assert_no_leaks();
}

Test(contactgen, absent_key_means_auto) {
  cp_scene s;
  char text[1024];
  snprintf(text, sizeof text,
           "{\"bodies\": [%s, {\"name\": \"ball\", \"mass\": 1, \"shape\": "
           "{\"type\": \"sphere\", \"radius\": 0.1}, \"position\": [0, 0, "
           "0.1]}], \"contacts\": \"auto\"}",
           table);
  mt_parse_ok(text, 1, &s);
  cr_assert_eq(s.n_contacts, 1);
  cp_scene_free(&s);
  scene_with(&s,
             "{\"name\": \"ball\", \"mass\": 1, \"shape\": {\"type\": "
             "\"sphere\", \"radius\": 0.1}, \"position\": [0, 0, 0.1]}",
             NULL);
  cr_assert_eq(s.n_contacts, 1);
  cr_assert_eq(s.contacts_auto, 1);
  cp_scene_free(&s);
  // An explicit empty list stays empty.
  snprintf(text, sizeof text,
           "{\"bodies\": [%s, {\"name\": \"ball\", \"mass\": 1, \"shape\": "
           "{\"type\": \"sphere\", \"radius\": 0.1}, \"position\": [0, 0, "
           "0.1]}], \"contacts\": []}",
           table);
  mt_parse_ok(text, 1, &s);
  cr_assert_eq(s.n_contacts, 0);
  cr_assert_eq(s.contacts_auto, 0);
  cp_scene_free(&s);
  mt_assert_no_leaks();
}

Test(contactgen, box_on_larger_box_overlap_patch) {
  // base: 0.4 x 0.4 x 0.1 on the table; top: 0.2 x 0.2 x 0.1 centred at
  // (0.25, 0.1) overhangs the base's +x edge: the patch is x in [0.15, 0.2],
  // y in [0, 0.2] at z = 0.1. Both move: a = base (earlier), normal from
  // top into base = -z.
  cp_scene s;
  scene_with(&s,
             "{\"name\": \"base\", \"mass\": 2, \"shape\": {\"type\": \"box\", "
             "\"size\": [0.4, 0.4, 0.1]}, \"position\": [0, 0, 0.05]}, "
             "{\"name\": \"top\", \"mass\": 1, \"shape\": {\"type\": \"box\", "
             "\"size\": [0.2, 0.2, 0.1]}, \"position\": [0.25, 0.1, 0.15]}",
             NULL);
  cr_assert_eq(s.n_contacts, 8);
  for (int sx = -1; sx <= 1; sx += 2)
    for (int sy = -1; sy <= 1; sy += 2)
      assert_contact(&s, 0.2 * sx, 0.2 * sy, 0, "base", "table", 0, 0, 1);
  assert_contact(&s, 0.15, 0.0, 0.1, "base", "top", 0, 0, -1);
  assert_contact(&s, 0.15, 0.2, 0.1, "base", "top", 0, 0, -1);
  assert_contact(&s, 0.2, 0.0, 0.1, "base", "top", 0, 0, -1);
  assert_contact(&s, 0.2, 0.2, 0.1, "base", "top", 0, 0, -1);
  // Order: pairs in object order (base-table first), then the pair's points.
  for (int j = 0; j < 4; ++j) cr_assert_eq(s.contacts[j].b.body, 0);
  for (int j = 4; j < 8; ++j) cr_assert_eq(s.contacts[j].b.body, 2);
  cp_scene_free(&s);
  mt_assert_no_leaks();
}

// all_flat: set when every touching pair is a box face down on a plane
// (cp_collide_ws.flat), whose rectangles the manifold reduction keeps whole
// (constraints.c then skips it); not for a box on a box.
Test(contactgen, all_flat_marks_face_down_boxes_only) {
  const char *two_on_table =
      "{\"name\": \"a\", \"mass\": 1, \"shape\": {\"type\": \"box\", "
      "\"size\": [0.2, 0.1, 0.1]}, \"position\": [0.3, -0.2, 0.05]}, "
      "{\"name\": \"b\", \"mass\": 1, \"shape\": {\"type\": \"box\", "
      "\"size\": [0.1, 0.1, 0.3]}, \"position\": [-0.3, 0.2, 0.15], "
      "\"orientation\": [0.8, 0, 0, 0.6]}";
  const char *stacked =
      "{\"name\": \"base\", \"mass\": 2, \"shape\": {\"type\": \"box\", "
      "\"size\": [0.4, 0.4, 0.1]}, \"position\": [0, 0, 0.05]}, "
      "{\"name\": \"top\", \"mass\": 1, \"shape\": {\"type\": \"box\", "
      "\"size\": [0.2, 0.2, 0.1]}, \"position\": [0.25, 0.1, 0.15]}";
  const char *scenes[2] = {two_on_table, stacked};
  for (int k = 0; k < 2; ++k) {
    cp_scene s;
    scene_with(&s, scenes[k], NULL);
    cp_contactgen_ws ws = {0};
    cp_contactgen_options o = cp_contactgen_scene_options(&s);
    cp_error err;
    cr_assert_eq(cp_scene_generate_contacts_ws(&s, &o, &ws, &err), 0, "%s", err.msg);
    cr_assert_eq(s.n_contacts, 8);
    cr_assert_eq(ws.all_flat, k == 0, "scene %d: all_flat %d", k, ws.all_flat);
    cr_assert_eq(ws.collide.flat, k == 0 ? 2 : 1); // base-table is one
    if (k == 0) {
      // The reduction's own answer: nothing to drop.
      cr_assert_eq(cp_manifold_reduce(s.contacts, s.n_contacts, CP_MANIFOLD_MERGE_TOL), 8);
      for (int sx = -1; sx <= 1; sx += 2)
        for (int sy = -1; sy <= 1; sy += 2) {
          assert_contact(&s, 0.3 + 0.1 * sx, -0.2 + 0.05 * sy, 0, "a", "table", 0, 0, 1);
          // b turned 73.74 deg about z (cos 0.28, sin 0.96): corners of its
          // 0.1 x 0.1 base.
          const double cx = 0.05 * sx, cy = 0.05 * sy;
          assert_contact(&s, -0.3 + 0.28 * cx - 0.96 * cy, 0.2 + 0.96 * cx + 0.28 * cy, 0,
                         "b", "table", 0, 0, 1);
        }
    }
    cp_contactgen_ws_free(&ws);
    cp_scene_free(&s);
  }
  mt_assert_no_leaks();
}

Test(contactgen, yawed_box) {
  double th = 30 * PI / 180, c = cos(th), sn = sin(th);
  char body[512];
  snprintf(body, sizeof body,
           "{\"name\": \"box\", \"mass\": 1, \"shape\": {\"type\": \"box\", "
           "\"size\": [0.2, 0.1, 0.1]}, \"position\": [0.1, 0.2, 0.05], "
           "\"orientation\": [%.17g, 0, 0, %.17g]}",
           cos(th / 2), sin(th / 2));
  cp_scene s;
  scene_with(&s, body, NULL);
  cr_assert_eq(s.n_contacts, 4);
  for (int sx = -1; sx <= 1; sx += 2)
    for (int sy = -1; sy <= 1; sy += 2) {
      double lx = 0.1 * sx, ly = 0.05 * sy;
      assert_contact(&s, 0.1 + c * lx - sn * ly, 0.2 + sn * lx + c * ly, 0,
                     "box", "table", 0, 0, 1);
    }
  cp_scene_free(&s);
  mt_assert_no_leaks();
}

Test(contactgen, sphere_capsule_cylinder_on_plane) {
  // Sphere: one point under the centre. Capsule lying along x (rotated
  // 90 degrees about y): its two end-cap bottoms. Upright cylinder: rim
  // points on its flat face (ODE gives 4, on the cylinder's x and y axes).
  double h = sqrt(0.5);
  char bodies[1024];
  snprintf(bodies, sizeof bodies,
           "{\"name\": \"ball\", \"mass\": 1, \"shape\": {\"type\": "
           "\"sphere\", \"radius\": 0.05}, \"position\": [1, 0, 0.05]}, "
           "{\"name\": \"cap\", \"mass\": 1, \"shape\": {\"type\": "
           "\"capsule\", \"radius\": 0.02, \"length\": 0.1}, \"position\": "
           "[2, 0.5, 0.02], \"orientation\": [%.17g, 0, %.17g, 0]}, "
           "{\"name\": \"can\", \"mass\": 1, \"shape\": {\"type\": "
           "\"cylinder\", \"radius\": 0.05, \"length\": 0.1}, \"position\": "
           "[3, 0, 0.05]}",
           h, h);
  cp_scene s;
  scene_with(&s, bodies, NULL);
  cr_assert_eq(s.n_contacts, 1 + 2 + 4);
  assert_contact(&s, 1, 0, 0, "ball", "table", 0, 0, 1);
  assert_contact(&s, 1.95, 0.5, 0, "cap", "table", 0, 0, 1);
  assert_contact(&s, 2.05, 0.5, 0, "cap", "table", 0, 0, 1);
  assert_contact(&s, 2.95, 0, 0, "can", "table", 0, 0, 1);
  assert_contact(&s, 3.05, 0, 0, "can", "table", 0, 0, 1);
  assert_contact(&s, 3, -0.05, 0, "can", "table", 0, 0, 1);
  assert_contact(&s, 3, 0.05, 0, "can", "table", 0, 0, 1);
  cp_scene_free(&s);
  mt_assert_no_leaks();
}

Test(contactgen, separated_shapes_have_none) {
  cp_scene s;
  scene_with(&s,
             "{\"name\": \"box\", \"mass\": 1, \"shape\": {\"type\": \"box\", "
             "\"size\": [0.2, 0.1, 0.1]}, \"position\": [0, 0, 0.06]}, "
             "{\"name\": \"ball\", \"mass\": 1, \"shape\": {\"type\": "
             "\"sphere\", \"radius\": 0.05}, \"position\": [0.16, 0, 0.1]}, "
             "{\"name\": \"cap\", \"mass\": 1, \"shape\": {\"type\": "
             "\"capsule\", \"radius\": 0.02, \"length\": 0.1}, \"position\": "
             "[1, 0, 0.2]}",
             NULL);
  cr_assert_eq(s.n_contacts, 0);
  cr_assert_null(s.contacts);
  cp_scene_free(&s);
  // A scene without bodies or manipulators has no contacts either.
  mt_parse_ok("{}", 1, &s);
  cr_assert_eq(s.n_contacts, 0);
  cp_scene_free(&s);
  mt_assert_no_leaks();
}

Test(contactgen, touch_tolerance) {
  cp_scene s;
  // A gap of 5e-7 m counts by default (touch_tolerance 1e-6), 2e-6 does
  // not unless the scene widens the tolerance.
  scene_with(&s,
             "{\"name\": \"ball\", \"mass\": 1, \"shape\": {\"type\": "
             "\"sphere\", \"radius\": 0.05}, \"position\": [0, 0, 0.0500005]}",
             NULL);
  cr_assert_eq(s.n_contacts, 1);
  cr_assert_float_eq(s.contacts[0].depth, -5e-7, 1e-12);
  cr_assert_float_eq(s.contacts[0].p[2], 2.5e-7, 1e-12); // midway
  cp_scene_free(&s);
  const char *far = "{\"name\": \"ball\", \"mass\": 1, \"shape\": {\"type\": "
                    "\"sphere\", \"radius\": 0.05}, \"position\": [0, 0, "
                    "0.050002]}";
  scene_with(&s, far, NULL);
  cr_assert_eq(s.n_contacts, 0);
  cp_scene_free(&s);
  scene_with(&s, far, "\"touch_tolerance\": 1e-5");
  cr_assert_eq(s.n_contacts, 1);
  cr_assert_float_eq(s.touch_tolerance, 1e-5, 0);
  cr_assert_float_eq(s.contacts[0].depth, -2e-6, 1e-12);
  cp_scene_free(&s);
  parse_fails(far, "\"touch_tolerance\": -1", "touch_tolerance", ">= 0");
  mt_assert_no_leaks();
}

Test(contactgen, penetration_error_names_pair_and_depth) {
  const char *deep = "{\"name\": \"box\", \"mass\": 1, \"shape\": {\"type\": "
                     "\"box\", \"size\": [0.2, 0.1, 0.1]}, \"position\": [0, "
                     "0, 0.049]}";
  parse_fails(deep, NULL, "contacts", "\"box\" and \"table\" overlap");
  parse_fails(deep, NULL, "contacts", "penetration 0.001 m");
  parse_fails(deep, NULL, "contacts", "penetration_tolerance");
  // Within a raised tolerance: accepted, depth reported.
  cp_scene s;
  scene_with(&s, deep, "\"penetration_tolerance\": 0.002");
  cr_assert_eq(s.n_contacts, 4);
  for (int j = 0; j < 4; ++j) {
    cr_assert_float_eq(s.contacts[j].depth, 0.001, 1e-12);
    cr_assert_float_eq(s.contacts[j].p[2], -0.0005, 1e-12); // midway
  }
  cp_scene_free(&s);
  // Below the default 1e-4 m: accepted.
  scene_with(&s,
             "{\"name\": \"box\", \"mass\": 1, \"shape\": {\"type\": \"box\", "
             "\"size\": [0.2, 0.1, 0.1]}, \"position\": [0, 0, 0.04995]}",
             NULL);
  cr_assert_eq(s.n_contacts, 4);
  cr_assert_float_eq(s.contacts[0].depth, 5e-5, 1e-12);
  cp_scene_free(&s);
  // Between two free bodies, the message names both.
  parse_fails("{\"name\": \"b1\", \"mass\": 1, \"shape\": {\"type\": "
              "\"sphere\", \"radius\": 0.1}, \"position\": [0, 0, 1]}, "
              "{\"name\": \"b2\", \"mass\": 1, \"shape\": {\"type\": "
              "\"sphere\", \"radius\": 0.1}, \"position\": [0, 0, 1.19]}",
              NULL, "contacts", "\"b1\" and \"b2\" overlap: penetration 0.01 m");
  parse_fails(deep, "\"penetration_tolerance\": \"big\"",
              "penetration_tolerance", "number");
  mt_assert_no_leaks();
}

// The overlap report of the workspace (cp_contactgen_ws.overlap): the
// pair as a contact's a and b, the depth and the point, for a caller that
// words the error itself.
Test(contactgen, overlap_report) {
  cp_scene s;
  scene_with(&s,
             "{\"name\": \"box\", \"mass\": 1, \"shape\": {\"type\": "
             "\"box\", \"size\": [0.2, 0.1, 0.1]}, \"position\": [0, 0, 0.049]}",
             "\"penetration_tolerance\": 0.002");
  cp_contactgen_options o = cp_contactgen_scene_options(&s);
  o.penetration_tol = 5e-4;
  cp_contactgen_ws ws = {0};
  cp_error err;
  cp_error_clear(&err);
  cr_assert_eq(cp_scene_generate_contacts_ws(&s, &o, &ws, &err), -1);
  cr_assert_eq(err.code, CP_ERR_OVERLAP);
  char a[64], b[64];
  cr_assert_str_eq(cp_scene_ref_name(&s, ws.overlap.a, a, sizeof a), "box");
  cr_assert_str_eq(cp_scene_ref_name(&s, ws.overlap.b, b, sizeof b), "table");
  cr_assert_float_eq(ws.overlap.depth, 0.001, 1e-12);
  cr_assert_float_eq(ws.overlap.p[2], -0.0005, 1e-12); // midway
  cr_assert_float_eq(fabs(ws.overlap.p[0]), 0.1, 1e-12); // a corner
  cr_assert_float_eq(fabs(ws.overlap.p[1]), 0.05, 1e-12);
  cr_assert_eq(s.n_contacts, 4); // the scene keeps its contacts
  cp_contactgen_ws_free(&ws);
  cp_scene_free(&s);
  mt_assert_no_leaks();
}

Test(contactgen, fixed_pairs_are_skipped) {
  // Two overlapping fixed boxes and a fixed box sunk into the (fixed)
  // table: no contacts, no penetration error.
  cp_scene s;
  scene_with(&s,
             "{\"name\": \"w1\", \"fixed\": true, \"shape\": {\"type\": "
             "\"box\", \"size\": [1, 1, 1]}, \"position\": [0, 0, 0]}, "
             "{\"name\": \"w2\", \"fixed\": true, \"shape\": {\"type\": "
             "\"box\", \"size\": [1, 1, 1]}, \"position\": [0.5, 0, 0]}",
             NULL);
  cr_assert_eq(s.n_contacts, 0);
  cp_scene_free(&s);
  mt_assert_no_leaks();
}

Test(contactgen, normal_speed_check_applies) {
  const char *falling = "{\"name\": \"box\", \"mass\": 1, \"shape\": "
                        "{\"type\": \"box\", \"size\": [0.2, 0.1, 0.1]}, "
                        "\"position\": [0, 0, 0.05], \"velocity\": [0, 0, "
                        "-0.5]}";
  parse_fails(falling, NULL, "contacts",
              "generated contact 0 (box on table): normal relative speed -0.5");
  parse_fails(falling, NULL, "contacts", "approaching");
  // Unchecked (impacts): parses.
  char text[2048];
  snprintf(text, sizeof text, "{\"bodies\": [%s, %s]}", table, falling);
  cp_scene s;
  mt_parse_ok(text, 0, &s);
  cr_assert_eq(s.n_contacts, 4);
  cp_scene_free(&s);
  // Sliding along the table is fine.
  scene_with(&s,
             "{\"name\": \"box\", \"mass\": 1, \"shape\": {\"type\": \"box\", "
             "\"size\": [0.2, 0.1, 0.1]}, \"position\": [0, 0, 0.05], "
             "\"velocity\": [1, 0, 0]}",
             NULL);
  cp_system sys;
  cp_error err;
  cr_assert_eq(cp_system_build(&s, &sys, &err), 0);
  for (int j = 0; j < 4; ++j) cr_assert(sys.sliding[j]);
  cp_system_free(&sys);
  cp_scene_free(&s);
  mt_assert_no_leaks();
}

// ---------------------------------------------------------------- links --

Test(contactgen, link_shapes_at_their_com_with_link_axes) {
  // A revolute joint about x at +90 degrees turns the link's z axis to
  // world -y; the link's box (0.02 x 0.04 x 0.2, centred at com (0, 0, 0.1))
  // then spans x in [-0.01, 0.01], y in [-0.2, 0], z in [0, 0.04] with
  // the base at z = 0.02: its bottom face rests on the table.
  cp_scene s;
  char text[4096];
  snprintf(text, sizeof text,
           "{\"bodies\": [%s], \"manipulators\": [{\"name\": \"arm\", "
           "\"base\": {\"position\": [0, 0, 0.02]}, \"joints\": [{\"name\": "
           "\"j\", \"type\": \"revolute\", \"axis\": [1, 0, 0], \"position\": "
           "%.17g, \"link\": {\"name\": \"l\", \"mass\": 1, \"com\": [0, 0, "
           "0.1], \"shape\": {\"type\": \"box\", \"size\": [0.02, 0.04, "
           "0.2]}}}]}]}",
           table, PI / 2);
  mt_parse_ok(text, 1, &s);
  cr_assert_eq(s.n_contacts, 4);
  for (int sx = -1; sx <= 1; sx += 2)
    for (int k = 0; k < 2; ++k)
      assert_contact(&s, 0.01 * sx, -0.2 * k, 0, "arm/l", "table", 0, 0, 1);
  cp_scene_free(&s);
  // Prismatic: a box link lowered onto the table by its joint position.
  snprintf(text, sizeof text,
           "{\"bodies\": [%s], \"manipulators\": [{\"name\": \"lift\", "
           "\"base\": {\"position\": [1, 0, 0.3]}, \"joints\": [{\"name\": "
           "\"z\", \"type\": \"prismatic\", \"axis\": [0, 0, 1], "
           "\"position\": -0.2, \"link\": {\"name\": \"pad\", \"mass\": 1, "
           "\"com\": [0, 0, -0.05], \"shape\": {\"type\": \"box\", \"size\": "
           "[0.1, 0.1, 0.1]}}}]}]}",
           table);
  mt_parse_ok(text, 1, &s);
  cr_assert_eq(s.n_contacts, 4);
  assert_contact(&s, 1.05, 0.05, 0, "lift/pad", "table", 0, 0, 1);
  assert_contact(&s, 0.95, -0.05, 0, "lift/pad", "table", 0, 0, 1);
  cp_scene_free(&s);
  mt_assert_no_leaks();
}

// Three spheres on a chain of prismatic joints along x: links 0 and 1
// overlap (adjacent: never tested), links 0 and 2 touch, and link 2 touches
// a free ball (a = the ball, a body, earlier in object order).
static const char *chain_scene =
    "{\"bodies\": [{\"name\": \"ball\", \"mass\": 1, \"shape\": {\"type\": "
    "\"sphere\", \"radius\": 0.1}, \"position\": [0.2, 0.2, 1]}], "
    "\"contacts\": \"auto\", \"gravity\": [0, 0, 0], "
    "\"manipulators\": [{\"name\": \"m\", \"base\": {\"position\": [0, 0, 1]}, "
    "\"joints\": ["
    "{\"name\": \"j0\", \"type\": \"prismatic\", \"axis\": [1, 0, 0], "
    "\"link\": {\"name\": \"s0\", \"mass\": 1, \"shape\": {\"type\": "
    "\"sphere\", \"radius\": 0.1}}}, "
    "{\"name\": \"j1\", \"type\": \"prismatic\", \"axis\": [0, 1, 0], "
    "\"position\": 0.15, \"link\": {\"name\": \"s1\", \"mass\": 1, "
    "\"shape\": {\"type\": \"sphere\", \"radius\": 0.1}}}, "
    "{\"name\": \"j2\", \"type\": \"prismatic\", \"axis\": [0, 1, 0], "
    "\"position\": 0.05, \"link\": {\"name\": \"s2\", \"mass\": 1, "
    "\"shape\": {\"type\": \"sphere\", \"radius\": 0.1}}}]}]}";

Test(contactgen, pairs_within_a_manipulator) {
  // Link centres: s0 (0, 0, 1), s1 (0, 0.15, 1), s2 (0, 0.2, 1), radius
  // 0.1. s0-s1 and s1-s2 overlap but are adjacent (not tested); s0-s2 touch
  // at (0, 0.1, 1); the ball at (0.2, 0.2, 1) touches s2 at (0.1, 0.2, 1)
  // and is 0.206 from s1 (no contact).
  cp_scene s;
  cp_error err = {0};
  cp_scene_options o = cp_scene_options_defaults();
  int rc = cp_scene_parse(chain_scene, strlen(chain_scene), NULL, &o, &s, &err);
  cr_assert_eq(rc, 0, "%s: %s", err.where, err.msg);
  cr_assert_eq(s.n_contacts, 2);
  // Object order: ball, m/s0, m/s1, m/s2. Pair (ball, s2) comes first.
  assert_contact(&s, 0.1, 0.2, 1, "ball", "m/s2", 1, 0, 0);
  assert_contact(&s, 0, 0.1, 1, "m/s0", "m/s2", 0, -1, 0);
  cr_assert_eq(s.contacts[0].a.body, 0);
  cr_assert_eq(s.contacts[1].a.link, 0);
  // The system handles a link-link contact within one chain: v = G^T u is
  // the relative velocity of the contact points, here with every joint
  // moving.
  for (int k = 0; k < 3; ++k) s.manips[0].joints[k].velocity = 0.1 * (k + 1);
  cp_system sys;
  cr_assert_eq(cp_system_build(&s, &sys, &err), 0);
  for (int j = 0; j < s.n_contacts; ++j) {
    double vc[3];
    cp_scene_contact_velocity(&s, j, vc);
    cr_assert_lt(mt_maxdiff(vc, sys.v + 3 * j, 3), 1e-15);
  }
  // s0 moves at (0.1, 0, 0), s2 at (0.1, 0.2 + 0.3, 0): n.(v_a - v_b) = 0.5.
  cr_assert_float_eq(sys.v[3], 0.5, 1e-15);
  cp_system_free(&sys);
  // skip_same_manipulator drops the self contact.
  cp_contactgen_options opt = cp_contactgen_scene_options(&s);
  opt.skip_same_manipulator = 1;
  cr_assert_eq(cp_scene_generate_contacts(&s, &opt, &err), 0);
  cr_assert_eq(s.n_contacts, 1);
  char bn[64];
  cr_assert_str_eq(cp_scene_ref_name(&s, s.contacts[0].b, bn, sizeof bn),
                   "m/s2");
  cp_scene_free(&s);
  mt_assert_no_leaks();
}

Test(contactgen, regenerate_is_deterministic_and_keeps_scene_on_error) {
  cp_scene s;
  mt_parse_ok(chain_scene, 1, &s);
  int n = s.n_contacts;
  cp_contact *copy = malloc((size_t)n * sizeof *copy);
  memcpy(copy, s.contacts, (size_t)n * sizeof *copy);
  cp_error err;
  for (int k = 0; k < 3; ++k) {
    cr_assert_eq(cp_scene_generate_contacts(&s, NULL, &err), 0);
    cr_assert_eq(s.n_contacts, n);
    cr_assert_eq(memcmp(copy, s.contacts, (size_t)n * sizeof *copy), 0);
  }
  // Move link 2 into link 0 (centres 0.15 apart): a penetration error
  // leaves the contacts as they were.
  s.manips[0].joints[2].position = 0.0;
  cr_assert_eq(cp_scene_generate_contacts(&s, NULL, &err), -1);
  cr_assert_str_eq(err.where, "contacts");
  cr_assert(strstr(err.msg, "\"m/s0\" and \"m/s2\" overlap: penetration 0.05 m"),
            "%s", err.msg);
  cr_assert_eq(s.n_contacts, n);
  cr_assert_eq(memcmp(copy, s.contacts, (size_t)n * sizeof *copy), 0);
  // Invalid options are an error too.
  cp_contactgen_options opt = cp_contactgen_defaults();
  opt.max_points = 0;
  cr_assert_eq(cp_scene_generate_contacts(&s, &opt, NULL), -1);
  opt = cp_contactgen_defaults();
  opt.penetration_tol = NAN;
  cr_assert_eq(cp_scene_generate_contacts(&s, &opt, &err), -1);
  free(copy);
  cp_scene_free(&s);
  mt_assert_no_leaks();
}

// ---------------------------------------------------- explicit vs auto --

static char *load_text(const char *name) {
  const char *root = getenv("CP_SOURCE_ROOT");
  char path[4096];
  snprintf(path, sizeof path, "%s/models/scenes/%s.json", root ? root : ".",
           name);
  size_t len;
  char *t = cpt_read_file(path, &len);
  cr_assert_not_null(t, "cannot read %s", path);
  return t;
}

// The bundled scene with its "contacts" key removed (automatic contacts).
static char *auto_twin(const char *text) {
  json_error_t je;
  json_t *root = json_loads(text, 0, &je);
  cr_assert_not_null(root);
  cr_assert_eq(json_object_del(root, "contacts"), 0);
  char *t = json_dumps(root, JSON_REAL_PRECISION(17));
  json_decref(root);
  return t;
}

// Compares the explicit and automatic versions of a bundled scene: the same
// contact points and normals (in some order), a and b, mu, sliding flags,
// and the system quantities G, k, v column by column after expressing the
// automatic frame in the explicit one (G's column for a direction d is
// linear in d, and so are k and v). Then the contact problem (contact/
// problem.h, pyramid law) of both: the same accelerations u'. (The
// tangents differ -- explicit: downhill / along x; automatic: the default
// rule -- but the pyramids have the same faces up to a quarter turn, so the
// answer is the same.)
static void compare_twins(const char *name, double accel) {
  char *text = load_text(name);
  char *twin = auto_twin(text);
  cp_scene se, sa;
  mt_parse_ok(text, 1, &se);
  mt_parse_ok(twin, 1, &sa);
  cr_assert_eq(sa.n_contacts, se.n_contacts, "%s: %d automatic, %d explicit",
               name, sa.n_contacts, se.n_contacts);
  cp_system ye, ya;
  cp_error err;
  cr_assert_eq(cp_system_build(&se, &ye, &err), 0);
  cr_assert_eq(cp_system_build(&sa, &ya, &err), 0);
  cr_assert_eq(ya.n_u, ye.n_u);
  int nu = ye.n_u;
  for (int r = 0; r < nu * nu; ++r) cr_assert_eq(ya.H[r], ye.H[r]);
  for (int r = 0; r < nu; ++r) cr_assert_eq(ya.f[r], ye.f[r]);
  for (int j = 0; j < sa.n_contacts; ++j) {
    const cp_contact *ca = &sa.contacts[j];
    int i = find_point(&se, ca->p[0], ca->p[1], ca->p[2]);
    cr_assert_geq(i, 0, "%s: automatic contact %d at [%g, %g, %g] is not "
                  "in the explicit list", name, j, ca->p[0], ca->p[1],
                  ca->p[2]);
    const cp_contact *ce = &se.contacts[i];
    cr_assert_eq(memcmp(&ca->a, &ce->a, sizeof ca->a), 0);
    cr_assert_eq(memcmp(&ca->b, &ce->b, sizeof ca->b), 0);
    for (int k = 0; k < 3; ++k)
      cr_assert_float_eq(ca->n[k], ce->n[k], DIR_TOL, "%s contact %d", name, j);
    cr_assert_eq(ca->mu, ce->mu);
    cr_assert_eq(ya.sliding[j], ye.sliding[i]);
    // T[r][c] = (explicit frame vector r) . (automatic frame vector c).
    const double *Na = ya.frame + 9 * j, *Ne = ye.frame + 9 * i;
    double T[3][3];
    for (int r = 0; r < 3; ++r)
      for (int c = 0; c < 3; ++c) T[r][c] = cp_v3_dot(Ne + 3 * r, Na + 3 * c);
    for (int c = 0; c < 3; ++c) {
      for (int row = 0; row < nu; ++row) {
        double g = 0;
        for (int r = 0; r < 3; ++r)
          g += ye.G[row + (size_t)nu * (3 * i + r)] * T[r][c];
        cr_assert_float_eq(ya.G[row + (size_t)nu * (3 * j + c)], g, 1e-9,
                           "%s G row %d, contact %d dir %d", name, row, j, c);
      }
      double k = 0, v = 0;
      for (int r = 0; r < 3; ++r) {
        k += ye.k[3 * i + r] * T[r][c];
        v += ye.v[3 * i + r] * T[r][c];
      }
      cr_assert_float_eq(ya.k[3 * j + c], k, 1e-9);
      cr_assert_float_eq(ya.v[3 * j + c], v, 1e-9);
    }
    // The normal columns agree directly.
    for (int row = 0; row < nu; ++row)
      cr_assert_float_eq(ya.G[row + (size_t)nu * 3 * j],
                         ye.G[row + (size_t)nu * 3 * i], 1e-9);
  }
  cp_problem_options po = cp_problem_defaults();
  cp_problem_result re, ra;
  memset(&re, 0, sizeof re);
  memset(&ra, 0, sizeof ra);
  cr_assert_eq(cp_problem_solve(&ye, &po, &re), CP_LCP_SOLVED, "%s", name);
  cr_assert_eq(cp_problem_solve(&ya, &po, &ra), CP_LCP_SOLVED, "%s", name);
  for (int r = 0; r < nu; ++r)
    cr_assert_float_eq(ra.udot[r], re.udot[r], 1e-9, "%s: u'[%d] %g vs %g",
                       name, r, ra.udot[r], re.udot[r]);
  // |linear acceleration| of the (one) free body: the analytic answer.
  cr_assert_float_eq(cp_v3_norm(ra.udot), accel, 1e-9, "%s: |a| = %g", name,
                     cp_v3_norm(ra.udot));
  cp_problem_result_free(&re);
  cp_problem_result_free(&ra);
  cp_system_free(&ye);
  cp_system_free(&ya);
  cp_scene_free(&se);
  cp_scene_free(&sa);
  free(twin);
  free(text);
}

Test(contactgen, incline_and_table_twins_match_explicit_contacts) {
  // incline_slide's box slides down (mu 0.2 < tan 20 deg); the others rest
  // or slide along the table.
  double th = 20 * PI / 180;
  compare_twins("incline_rest", 0);
  compare_twins("incline_slide", 9.81 * (sin(th) - 0.2 * cos(th)));
  compare_twins("box_on_table", 0);
  compare_twins("box_sliding", 9.81 * 0.3);
  mt_assert_no_leaks();
}
