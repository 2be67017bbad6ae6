// Scene parsing and validation (models/scene.h): the docs/formats.md §2
// example, defaults, and every error path with its exact JSON path.
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/scene.h"
#include "models/shape.h"
#include "models/vec3.h"
#include "tests/models/mtest.h"
#include "tests/support.h"

// The docs/formats.md §2 example with a second contact list entry.
static const char *base_scene =
    "{\n"
    "  \"gravity\": [0, 0, -9.81],\n"
    "  \"friction\": {\"default\": 0.5, \"pairs\": [{\"a\": \"box\", \"b\": "
    "\"table\", \"mu\": 0.3}]},\n"
    "  \"bodies\": [\n"
    "    {\"name\": \"table\", \"fixed\": true,\n"
    "     \"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1], \"offset\": "
    "0}},\n"
    "    {\"name\": \"box\", \"mass\": 1.0,\n"
    "     \"shape\": {\"type\": \"box\", \"size\": [0.2, 0.1, 0.1]},\n"
    "     \"position\": [0, 0, 0.05], \"orientation\": [1, 0, 0, 0],\n"
    "     \"velocity\": [0, 0, 0], \"angular_velocity\": [0, 0, 0]}\n"
    "  ],\n"
    "  \"manipulators\": [\n"
    "    {\"name\": \"finger\",\n"
    "     \"base\": {\"position\": [0.3, 0, 0], \"orientation\": [1, 0, 0, "
    "0]},\n"
    "     \"joints\": [\n"
    "       {\"name\": \"j1\", \"type\": \"revolute\", \"axis\": [0, 1, 0],\n"
    "        \"origin\": {\"position\": [0, 0, 0.1], \"orientation\": [1, 0, "
    "0, 0]},\n"
    "        \"position\": 0.0, \"velocity\": 0.0, \"effort\": 0.0,\n"
    "        \"link\": {\"name\": \"l1\", \"mass\": 0.2, \"com\": [0, 0, "
    "0.05],\n"
    "                 \"inertia\": [[1e-4, 0, 0], [0, 1e-4, 0], [0, 0, "
    "1e-5]],\n"
    "                 \"shape\": {\"type\": \"capsule\", \"radius\": 0.01, "
    "\"length\": 0.1}}}\n"
    "     ]}\n"
    "  ],\n"
    "  \"contacts\": [\n"
    "    {\"a\": \"box\", \"b\": \"table\", \"point\": [0.1, 0.05, 0], "
    "\"normal\": [0, 0, 1],\n"
    "     \"tangent\": [1, 0, 0], \"mu\": 0.5},\n"
    "    {\"a\": \"box\", \"b\": \"table\", \"point\": [-0.1, 0.05, 0], "
    "\"normal\": [0, 0, 1]}\n"
    "  ]\n"
    "}\n";

// Replaces the first occurrence of `from` in base_scene by `to`; asserts that
// it occurs. Returns malloc'd text.
static char *edit(const char *from, const char *to) {
  const char *at = strstr(base_scene, from);
  cr_assert_not_null(at, "test bug: '%s' not in the base scene", from);
  size_t n = strlen(base_scene), a = (size_t)(at - base_scene),
         lf = strlen(from), lt = strlen(to);
  char *s = malloc(n - lf + lt + 1);
  memcpy(s, base_scene, a);
  memcpy(s + a, to, lt);
  memcpy(s + a + lt, at + lf, n - a - lf + 1);
  return s;
}

static void fails_with(const char *from, const char *to, const char *where,
                       const char *msg_part) {
  char *t = edit(from, to);
  mt_parse_fails(t, where, msg_part);
  free(t);
}

Test(scene, interface_example_parses) {
  cp_scene s;
  mt_parse_ok(base_scene, 1, &s);
  cr_assert_eq(s.n_bodies, 2);
  cr_assert_eq(s.n_manips, 1);
  cr_assert_eq(s.n_contacts, 2);
  cr_assert_str_eq(s.bodies[0].name, "table");
  cr_assert(s.bodies[0].fixed);
  cr_assert_eq(s.bodies[0].shape.type, CP_SHAPE_PLANE);
  cr_assert(!s.bodies[1].fixed);
  cr_assert_float_eq(s.bodies[1].mass, 1.0, 0);
  // Box default inertia m/12 (b^2 + c^2, a^2 + c^2, a^2 + b^2).
  cr_assert_float_eq(s.bodies[1].inertia[0], (0.01 + 0.01) / 12, 1e-17);
  cr_assert_float_eq(s.bodies[1].inertia[4], (0.04 + 0.01) / 12, 1e-17);
  cr_assert_float_eq(s.bodies[1].inertia[8], (0.04 + 0.01) / 12, 1e-17);
  cr_assert_eq(s.bodies[1].inertia[1], 0);
  cr_assert(!s.bodies[1].inertia_given);
  cp_ref r;
  cr_assert_eq(cp_scene_find(&s, "finger/l1", &r), 0);
  cr_assert_eq(r.body, -1);
  cr_assert_eq(r.manip, 0);
  cr_assert_eq(r.link, 0);
  cr_assert_eq(cp_scene_find(&s, "finger/l2", &r), -1);
  cr_assert_eq(cp_scene_find(&s, "finger", &r), -1);
  char buf[64];
  cr_assert_str_eq(cp_scene_ref_name(&s, s.contacts[0].b, buf, sizeof buf),
                   "table");
  // mu: explicit override, then the pair table.
  cr_assert_float_eq(s.contacts[0].mu, 0.5, 0);
  cr_assert_float_eq(s.contacts[1].mu, 0.3, 0);
  // Default tangent for n = z: x, then o = n x t = y.
  cr_assert_float_eq(s.contacts[1].t[0], 1, 0);
  cr_assert_float_eq(s.contacts[1].o[1], 1, 0);
  cr_assert_float_eq(s.contacts[1].restitution, 0, 0);
  cr_assert(!s.contacts[1].has_torsion);
  cr_assert_float_eq(s.velocity_tolerance, 1e-6, 0);
  cr_assert_eq(s.manips[0].joints[0].drive, CP_DRIVE_EFFORT);
  cr_assert_float_eq(s.manips[0].joints[0].origin_pos[2], 0.1, 0);
  cp_scene_free(&s);
  cp_scene_free(&s); // idempotent
  mt_assert_no_leaks();
}

Test(scene, defaults_and_normalisation) {
  const char *t =
      "{\"contacts\": [{\"a\": \"ball\", \"b\": \"floor\", \"point\": [0, 0, "
      "0], \"normal\": [0, 3, 4]}],"
      " \"bodies\": [{\"name\": \"floor\", \"fixed\": true, \"shape\": "
      "{\"type\": \"plane\", \"normal\": [0, 0, 2]}},"
      " {\"name\": \"ball\", \"mass\": 2, \"shape\": {\"type\": \"sphere\", "
      "\"radius\": 0.5}, \"orientation\": [0.7071, 0, 0, 0.7071]}]}";
  cp_scene s;
  mt_parse_ok(t, 1, &s);
  cr_assert_float_eq(s.gravity[2], -9.81, 0);
  cr_assert_float_eq(s.mu_default, 0.5, 0);
  cr_assert_float_eq(s.contacts[0].mu, 0.5, 0);
  cr_assert_float_eq(s.bodies[0].shape.normal[2], 1, 0);
  cr_assert_float_eq(s.contacts[0].n[1], 0.6, 1e-15);
  cr_assert_float_eq(s.contacts[0].n[2], 0.8, 1e-15);
  // Tangent: least aligned axis is x.
  cr_assert_float_eq(s.contacts[0].t[0], 1, 1e-16);
  double o[3];
  cp_v3_cross(o, s.contacts[0].n, s.contacts[0].t);
  cr_assert_lt(mt_maxdiff(o, s.contacts[0].o, 3), 1e-16);
  // 4-digit quaternion accepted and normalised exactly.
  const double *q = s.bodies[1].q;
  cr_assert_float_eq(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3], 1,
                     1e-15);
  cr_assert_float_eq(s.bodies[1].inertia[0], 0.4 * 2 * 0.25, 1e-16);
  cp_scene_free(&s);
  mt_assert_no_leaks();
}

Test(scene, default_tangent_is_orthonormal_for_any_normal) {
  uint64_t r = 5;
  for (int k = 0; k < 200; ++k) {
    double n[3] = {cpt_uniform(&r, -1, 1), cpt_uniform(&r, -1, 1),
                   cpt_uniform(&r, -1, 1)};
    if (k < 3) n[0] = n[1] = n[2] = 0, n[k] = -1;
    char t[512];
    snprintf(t, sizeof t,
             "{\"contacts\": [{\"a\": \"b\", \"b\": \"w\", \"point\": [0, 0, "
             "0], \"normal\": [%.17g, %.17g, %.17g]}], \"bodies\": ["
             "{\"name\": \"w\", \"fixed\": true, \"shape\": {\"type\": "
             "\"sphere\", \"radius\": 1}},"
             "{\"name\": \"b\", \"mass\": 1, \"shape\": {\"type\": \"box\", "
             "\"size\": [1, 1, 1]}}]}",
             n[0], n[1], n[2]);
    cp_scene s;
    mt_parse_ok(t, 1, &s);
    const cp_contact *c = &s.contacts[0];
    cr_assert_float_eq(cp_v3_norm(c->n), 1, 1e-15);
    cr_assert_float_eq(cp_v3_norm(c->t), 1, 1e-15);
    cr_assert_float_eq(cp_v3_norm(c->o), 1, 1e-15);
    cr_assert_lt(fabs(cp_v3_dot(c->n, c->t)), 1e-15);
    cr_assert_lt(fabs(cp_v3_dot(c->n, c->o)), 1e-15);
    cr_assert_lt(fabs(cp_v3_dot(c->t, c->o)), 1e-15);
    cp_scene_free(&s);
  }
  mt_assert_no_leaks();
}

Test(scene, friction_pairs_most_specific_wins) {
  char *t = edit("\"pairs\": [{\"a\": \"box\", \"b\": \"table\", \"mu\": 0.3}]",
                 "\"pairs\": [{\"a\": \"finger\", \"b\": \"box\", \"mu\": 0.9},"
                 " {\"a\": \"box\", \"b\": \"finger/l1\", \"mu\": 0.7},"
                 " {\"a\": \"table\", \"b\": \"box\", \"mu\": 0.2}]");
  cp_scene s;
  mt_parse_ok(t, 1, &s);
  cp_ref box, l1, table;
  cp_scene_find(&s, "box", &box);
  cp_scene_find(&s, "finger/l1", &l1);
  cp_scene_find(&s, "table", &table);
  cr_assert_float_eq(cp_scene_friction(&s, l1, box), 0.7, 0);
  cr_assert_float_eq(cp_scene_friction(&s, box, l1), 0.7, 0);
  cr_assert_float_eq(cp_scene_friction(&s, box, table), 0.2, 0);
  cr_assert_float_eq(cp_scene_friction(&s, l1, table), 0.5, 0);
  cr_assert_float_eq(s.contacts[1].mu, 0.2, 0);
  cp_scene_free(&s);
  free(t);
  mt_assert_no_leaks();
}

// ----------------------------------------------------------- error paths --

Test(scene_errors, mass) {
  fails_with("\"mass\": 1.0", "\"mass\": -1", "bodies[1].mass", "positive");
  fails_with("\"mass\": 1.0", "\"mass\": 0", "bodies[1].mass", "positive");
  fails_with("\"mass\": 1.0", "\"mass\": \"1\"", "bodies[1].mass", "number");
  fails_with("\"mass\": 1.0,", "", "bodies[1].mass", "mass");
  fails_with("\"mass\": 0.2", "\"mass\": -0.2",
             "manipulators[0].joints[0].link.mass", "positive");
  fails_with("\"mass\": 0.2,", "", "manipulators[0].joints[0].link.mass",
             "mass");
  mt_assert_no_leaks();
}

Test(scene_errors, inertia) {
  fails_with("\"mass\": 1.0,",
             "\"mass\": 1.0, \"inertia\": [[1, 0.5, 0], [0, 1, 0], [0, 0, 1]],",
             "bodies[1].inertia", "symmetric");
  fails_with("\"mass\": 1.0,",
             "\"mass\": 1.0, \"inertia\": [[1, 2, 0], [2, 1, 0], [0, 0, 1]],",
             "bodies[1].inertia", "positive definite");
  fails_with("\"mass\": 1.0,",
             "\"mass\": 1.0, \"inertia\": [[1, 0, 0], [0, 0, 0], [0, 0, 1]],",
             "bodies[1].inertia", "positive definite");
  fails_with("\"mass\": 1.0,",
             "\"mass\": 1.0, \"inertia\": [[1, 0, 0], [0, 1], [0, 0, 1]],",
             "bodies[1].inertia[1]", "3 numbers");
  fails_with("\"mass\": 1.0,", "\"mass\": 1.0, \"inertia\": 3,",
             "bodies[1].inertia", "3x3");
  fails_with("[0, 0, 1e-5]]", "[0, 0, -1e-5]]",
             "manipulators[0].joints[0].link.inertia", "positive definite");
  // A link with neither inertia nor shape.
  fails_with(",\n                 \"inertia\": [[1e-4, 0, 0], [0, 1e-4, 0], "
             "[0, 0, 1e-5]],\n                 \"shape\": {\"type\": "
             "\"capsule\", \"radius\": 0.01, \"length\": 0.1}",
             "", "manipulators[0].joints[0].link.inertia", "shape");
  mt_assert_no_leaks();
}

Test(scene_errors, link_without_inertia_or_shape) {
  char *t = edit("\"inertia\": [[1e-4, 0, 0], [0, 1e-4, 0], [0, 0, 1e-5]],\n"
                 "                 \"shape\": {\"type\": \"capsule\", "
                 "\"radius\": 0.01, \"length\": 0.1}",
                 "\"shape\": {\"type\": \"capsule\", \"radius\": 0.01, "
                 "\"length\": 0.1}");
  cp_scene s;
  mt_parse_ok(t, 1, &s); // inertia from the capsule
  free(t);
  cr_assert_gt(s.manips[0].joints[0].link.inertia[0], 0);
  cp_scene_free(&s);
  mt_assert_no_leaks();
}

Test(scene_errors, unknown_keys) {
  fails_with("\"gravity\"", "\"colour\": 1, \"gravity\"", "colour", "unknown key");
  fails_with("\"mass\": 1.0", "\"mass\": 1.0, \"color\": \"red\"",
             "bodies[1].color", "unknown key");
  fails_with("\"size\": [0.2, 0.1, 0.1]",
             "\"size\": [0.2, 0.1, 0.1], \"radius\": 1",
             "bodies[1].shape.radius", "unknown key");
  fails_with("\"mu\": 0.5}", "\"mu\": 0.5, \"force\": 1}", "contacts[0].force",
             "unknown key");
  fails_with("\"effort\": 0.0", "\"effort\": 0.0, \"limit\": 1",
             "manipulators[0].joints[0].limit", "unknown key");
  fails_with("\"com\": [0, 0, 0.05]", "\"com\": [0, 0, 0.05], \"colour\": 2",
             "manipulators[0].joints[0].link.colour", "unknown key");
  fails_with("\"origin\": {\"position\"", "\"origin\": {\"x\": 1, \"position\"",
             "manipulators[0].joints[0].origin.x", "unknown key");
  fails_with("\"default\": 0.5", "\"default\": 0.5, \"static\": 1",
             "friction.static", "unknown key");
  mt_assert_no_leaks();
}

Test(scene_errors, types_and_numbers) {
  fails_with("\"gravity\": [0, 0, -9.81]", "\"gravity\": [0, 0]", "gravity",
             "3 numbers");
  fails_with("\"gravity\": [0, 0, -9.81]", "\"gravity\": [0, 0, \"down\"]",
             "gravity[2]", "number");
  fails_with("\"position\": [0, 0, 0.05]", "\"position\": [0, 0, null]",
             "bodies[1].position[2]", "number");
  fails_with("\"fixed\": true", "\"fixed\": 1", "bodies[0].fixed", "true or false");
  fails_with("{\"name\": \"box\",", "7, {\"name\": \"box\",", "bodies[1]",
             "object");
  fails_with("\"name\": \"box\"", "\"name\": 3", "bodies[1].name", "string");
  fails_with("\"name\": \"box\"", "\"name\": \"\"", "bodies[1].name", "non-empty");
  fails_with("\"name\": \"box\"", "\"name\": \"a/b\"", "bodies[1].name", "'/'");
  mt_parse_fails("{\"bodies\": {}, \"contacts\": []}", "bodies", "array");
  mt_parse_fails("{\"manipulators\": 1, \"contacts\": []}", "manipulators",
                 "array");
  // Non-finite numbers: JSON cannot spell them; overflowing literals are a
  // syntax error reported by line.
  fails_with("\"mass\": 1.0", "\"mass\": 1e999", "line 7", NULL);
  mt_parse_fails("[1, 2]", "", "object");
  mt_parse_fails("", "line 1", NULL);
  mt_parse_fails("{\"contacts\": []", "line 1", NULL);
  mt_assert_no_leaks();
}

Test(scene_errors, json_syntax_and_duplicate_keys) {
  fails_with("\"fixed\": true,", "\"fixed\": true, \"fixed\": true,", "line 5",
             "duplicate");
  fails_with("\"mass\": 1.0,", "\"mass\": 1.0,,", "line 7", NULL);
  mt_assert_no_leaks();
}

Test(scene_errors, quaternions) {
  fails_with("\"orientation\": [1, 0, 0, 0],\n     \"velocity\"",
             "\"orientation\": [2, 0, 0, 0],\n     \"velocity\"",
             "bodies[1].orientation", "unit quaternion");
  fails_with("\"orientation\": [1, 0, 0, 0],\n     \"velocity\"",
             "\"orientation\": [1, 0, 0, 0.1],\n     \"velocity\"",
             "bodies[1].orientation", "norm");
  fails_with("\"orientation\": [1, 0, 0, 0],\n     \"velocity\"",
             "\"orientation\": [1, 0, 0],\n     \"velocity\"",
             "bodies[1].orientation", "4 numbers");
  fails_with("\"base\": {\"position\": [0.3, 0, 0], \"orientation\": [1, 0, 0, 0]}",
             "\"base\": {\"position\": [0.3, 0, 0], \"orientation\": [0, 0, 0, 0]}",
             "manipulators[0].base.orientation", "unit quaternion");
  fails_with("\"orientation\": [1, 0, 0, 0]},\n        \"position\"",
             "\"orientation\": [0.9, 0, 0, 0]},\n        \"position\"",
             "manipulators[0].joints[0].origin.orientation", "unit quaternion");
  mt_assert_no_leaks();
}

Test(scene_errors, names) {
  fails_with("\"name\": \"box\"", "\"name\": \"table\"", "bodies[1].name",
             "duplicate");
  fails_with("\"name\": \"finger\"", "\"name\": \"box\"",
             "manipulators[0].name", "unique");
  fails_with("\"contacts\": [\n",
             "\"contacts\": [\n{\"a\": \"finger/nope\", \"b\": \"box\", "
             "\"point\": [0,0,0], \"normal\": [1,0,0]},",
             "contacts[0].a", "unknown body or link");
  fails_with("{\"a\": \"box\", \"b\": \"table\", \"point\": [0.1",
             "{\"a\": \"box\", \"b\": \"floor\", \"point\": [0.1",
             "contacts[0].b", "floor");
  fails_with("{\"a\": \"box\", \"b\": \"table\", \"point\": [0.1",
             "{\"a\": \"box\", \"b\": \"box\", \"point\": [0.1",
             "contacts[0].b", "same");
  fails_with("{\"a\": \"box\", \"b\": \"table\", \"point\": [0.1",
             "{\"b\": \"table\", \"point\": [0.1", "contacts[0].a", "missing");
  fails_with("{\"a\": \"box\", \"b\": \"table\", \"mu\": 0.3}",
             "{\"a\": \"box\", \"b\": \"chair\", \"mu\": 0.3}",
             "friction.pairs[0].b", "unknown");
  fails_with("\"mu\": 0.3}]", "\"mu\": 0.3}, {\"a\": \"table\", \"b\": \"box\", \"mu\": 1}]",
             "friction.pairs[1]", "duplicate");
  fails_with("\"name\": \"l1\"", "\"name\": 3",
             "manipulators[0].joints[0].link.name", "string");
  mt_assert_no_leaks();
}

Test(scene_errors, contact_between_fixed_bodies) {
  fails_with("{\"name\": \"box\", \"mass\": 1.0,",
             "{\"name\": \"box\", \"fixed\": true, \"mass\": 1.0,", "contacts[0]",
             "two fixed bodies");
  mt_assert_no_leaks();
}

Test(scene_errors, contact_geometry) {
  fails_with("\"normal\": [0, 0, 1],\n     \"tangent\"",
             "\"normal\": [0, 0, 0],\n     \"tangent\"", "contacts[0].normal",
             "non-zero");
  fails_with("\"tangent\": [1, 0, 0]", "\"tangent\": [1, 0, 1]",
             "contacts[0].tangent", "orthogonal");
  fails_with("\"tangent\": [1, 0, 0]", "\"tangent\": [0, 0, 0]",
             "contacts[0].tangent", "non-zero");
  fails_with("\"point\": [0.1, 0.05, 0]", "\"point\": [0.1, 0.05]",
             "contacts[0].point", "3 numbers");
  fails_with("\"mu\": 0.5}", "\"mu\": -0.5}", "contacts[0].mu", ">= 0");
  fails_with("\"mu\": 0.5}", "\"mu\": 0.5, \"restitution\": 1.5}",
             "contacts[0].restitution", "[0, 1]");
  fails_with("\"mu\": 0.5}", "\"mu\": 0.5, \"mu_torsion\": -1}",
             "contacts[0].mu_torsion", ">= 0");
  // A slightly non-orthogonal tangent (4 digits) is accepted and fixed.
  char *t = edit("\"normal\": [0, 0, 1],\n     \"tangent\": [1, 0, 0]",
                 "\"normal\": [0, 0.7071, 0.7071],\n     \"tangent\": [1, "
                 "0.001, 0]");
  char *t2 = strdup(t);
  free(t);
  cp_scene s;
  mt_parse_ok(t2, 0, &s);
  free(t2);
  cr_assert_lt(fabs(cp_v3_dot(s.contacts[0].n, s.contacts[0].t)), 1e-15);
  cp_scene_free(&s);
  mt_assert_no_leaks();
}

Test(scene_errors, shapes) {
  fails_with("\"type\": \"box\"", "\"type\": \"cone\"", "bodies[1].shape.type",
             "unknown shape type");
  fails_with("\"size\": [0.2, 0.1, 0.1]", "\"size\": [0.2, -0.1, 0.1]",
             "bodies[1].shape.size[1]", "positive");
  fails_with("{\"type\": \"box\", \"size\": [0.2, 0.1, 0.1]}",
             "{\"type\": \"plane\", \"normal\": [0, 0, 1]}",
             "bodies[1].shape.type", "fixed body");
  fails_with("{\"type\": \"box\", \"size\": [0.2, 0.1, 0.1]}",
             "{\"type\": \"sphere\"}", "bodies[1].shape.radius", "missing");
  fails_with("\"radius\": 0.01, \"length\": 0.1", "\"radius\": 0.01",
             "manipulators[0].joints[0].link.shape.length", "missing");
  fails_with("\"shape\": {\"type\": \"box\", \"size\": [0.2, 0.1, 0.1]},",
             "", "bodies[1].shape", "missing");
  fails_with("\"normal\": [0, 0, 1], \"offset\": 0",
             "\"normal\": [0, 0, 0], \"offset\": 0", "bodies[0].shape.normal",
             "non-zero");
  mt_assert_no_leaks();
}

Test(scene_errors, fixed_body_velocity) {
  fails_with("\"fixed\": true,", "\"fixed\": true, \"velocity\": [1, 0, 0],",
             "bodies[0].velocity", "fixed");
  mt_assert_no_leaks();
}

Test(scene_errors, joints) {
  fails_with("\"effort\": 0.0", "\"effort\": 0.0, \"acceleration\": 1",
             "manipulators[0].joints[0].acceleration", "exactly one");
  fails_with("\"type\": \"revolute\"", "\"type\": \"spherical\"",
             "manipulators[0].joints[0].type", "revolute or prismatic");
  fails_with("\"axis\": [0, 1, 0]", "\"axis\": [0, 0, 0]",
             "manipulators[0].joints[0].axis", "non-zero");
  fails_with("\"axis\": [0, 1, 0],", "", "manipulators[0].joints[0].axis",
             "missing");
  mt_parse_fails("{\"manipulators\": [{\"name\": \"m\", \"joints\": []}]}",
                 "manipulators[0].joints", "non-empty");
  fails_with("\"base\":", "\"urdf\": \"arm.urdf\", \"base\":",
             "manipulators[0].joints", "either \"joints\" or \"urdf\"");
  fails_with("\"base\":", "\"state\": {}, \"base\":", "manipulators[0].state",
             "urdf");
  fails_with("\"position\": 0.0, \"velocity\": 0.0",
             "\"position\": \"zero\", \"velocity\": 0.0",
             "manipulators[0].joints[0].position", "number");
  mt_assert_no_leaks();
}

Test(scene_errors, contacts_key) {
  // "auto" and an absent key generate contacts (tests/models/
  // test_contactgen.c); anything else but a list is an error.
  cp_scene s;
  mt_parse_ok("{\"bodies\": [], \"contacts\": \"auto\"}", 1, &s);
  cr_assert_eq(s.contacts_auto, 1);
  cr_assert_eq(s.n_contacts, 0);
  cp_scene_free(&s);
  mt_parse_ok("{\"bodies\": []}", 1, &s);
  cr_assert_eq(s.contacts_auto, 1);
  cp_scene_free(&s);
  mt_parse_fails("{\"bodies\": [], \"contacts\": 5}", "contacts", "array");
  mt_parse_fails("{\"bodies\": [], \"contacts\": \"none\"}", "contacts",
                 "array");
  mt_assert_no_leaks();
}

Test(scene_errors, normal_speed) {
  // The box moves down at 0.5 m/s into the table: contact 0 approaches.
  fails_with("\"velocity\": [0, 0, 0], \"angular_velocity\"",
             "\"velocity\": [0, 0, -0.5], \"angular_velocity\"", "contacts[0]",
             "contact 0");
  char *t = edit("\"velocity\": [0, 0, 0], \"angular_velocity\"",
                 "\"velocity\": [0, 0, 0.25], \"angular_velocity\"");
  cp_error err;
  cp_scene s;
  cr_assert_eq(cp_scene_parse(t, strlen(t), NULL, NULL, &s, &err), -1);
  cr_assert(strstr(err.msg, "0.25"), "%s", err.msg);
  cr_assert(strstr(err.msg, "separating"), "%s", err.msg);
  // Not checked when the caller says so (an impact problem).
  cp_scene_options o = cp_scene_options_defaults();
  o.check_normal_speed = 0;
  cr_assert_eq(cp_scene_parse(t, strlen(t), NULL, &o, &s, &err), 0);
  cr_assert_eq(cp_scene_check_normal_speeds(&s, &err), -1);
  cr_assert_str_eq(err.where, "contacts[0]");
  cp_scene_free(&s);
  free(t);
  // Rotation about a contact's own axis: the second contact's speed is
  // w x r = 2 * 0.1 (point at x = -0.1, y = 0.05 rel. to the com at z=0.05).
  fails_with("\"angular_velocity\": [0, 0, 0]",
             "\"angular_velocity\": [0, 2, 0]", "contacts[0]", "0.2");
  // Sliding along the table is fine; a tolerance key loosens the check.
  t = edit("\"velocity\": [0, 0, 0], \"angular_velocity\"",
           "\"velocity\": [1, 0, 1e-5], \"angular_velocity\"");
  mt_parse_fails(t, "contacts[0]", "1e-05");
  free(t);
  t = edit("\"gravity\"", "\"velocity_tolerance\": 1e-4, \"gravity\"");
  char *t3 = malloc(strlen(t) + 64);
  const char *at = strstr(t, "\"velocity\": [0, 0, 0]");
  size_t a = (size_t)(at - t);
  memcpy(t3, t, a);
  strcpy(t3 + a, "\"velocity\": [1, 0, 1e-5]");
  strcat(t3, at + strlen("\"velocity\": [0, 0, 0]"));
  mt_parse_ok(t3, 1, &s);
  cr_assert_float_eq(s.velocity_tolerance, 1e-4, 0);
  cp_scene_free(&s);
  free(t);
  free(t3);
  fails_with("\"gravity\"", "\"velocity_tolerance\": 0, \"gravity\"",
             "velocity_tolerance", "positive");
  mt_assert_no_leaks();
}

Test(scene_errors, link_contact_normal_speed) {
  // The finger joint turns: its link's point at the table moves along x
  // (normal z): fine; a contact with normal x there is an impact.
  char *t = edit("\"contacts\": [\n",
                 "\"contacts\": [\n{\"a\": \"finger/l1\", \"b\": \"table\", "
                 "\"point\": [0.3, 0, 0.2], \"normal\": [0, 0, 1]},"
                 "{\"a\": \"finger/l1\", \"b\": \"box\", \"point\": [0.3, 0, "
                 "0.2], \"normal\": [1, 0, 0]},");
  char *u = strdup(t);
  char *at = strstr(u, "\"velocity\": 0.0");
  memcpy(at, "\"velocity\": 2.0", strlen("\"velocity\": 2.0"));
  mt_parse_fails(u, "contacts[1]", "contact 1");
  free(t);
  free(u);
  mt_assert_no_leaks();
}

// Parsing never crashes or leaks on damaged input (run under ASan too).
Test(scene_fuzz, truncations_and_mutations) {
  size_t n = strlen(base_scene);
  char *buf = malloc(n + 1);
  for (size_t k = 0; k <= n; ++k) {
    cp_scene s;
    cp_error err;
    if (cp_scene_parse(base_scene, k, NULL, NULL, &s, &err) == 0)
      cp_scene_free(&s);
  }
  uint64_t r = 99;
  const char alphabet[] = "{}[],:\"0123456789.-eE tfnabxyz/";
  for (int trial = 0; trial < 4000; ++trial) {
    memcpy(buf, base_scene, n + 1);
    int edits = 1 + (int)(cpt_rand(&r) % 3);
    for (int e = 0; e < edits; ++e)
      buf[cpt_rand(&r) % n] = alphabet[cpt_rand(&r) % (sizeof alphabet - 1)];
    cp_scene s;
    cp_error err;
    if (cp_scene_parse(buf, n, NULL, NULL, &s, &err) == 0) {
      // Whatever parsed is finite.
      for (int i = 0; i < s.n_bodies; ++i) {
        cr_assert(cp_v3_isfinite(s.bodies[i].x));
        cr_assert(isfinite(s.bodies[i].mass));
      }
      cp_scene_free(&s);
    } else {
      cr_assert(err.msg[0] != '\0');
    }
  }
  free(buf);
  mt_assert_no_leaks();
}

Test(scene, load_file_and_base_dir) {
  char *path = cpt_temp_file(base_scene, ".json");
  cr_assert_not_null(path);
  cp_scene s;
  cp_error err;
  cr_assert_eq(cp_scene_load(path, NULL, &s, &err), 0, "%s: %s", err.where,
               err.msg);
  cr_assert_not_null(s.base_dir);
  cr_assert_eq(strncmp(path, s.base_dir, strlen(s.base_dir)), 0);
  cp_scene_free(&s);
  unlink(path);
  free(path);
  cr_assert_eq(cp_scene_load("/nonexistent/x.json", NULL, &s, &err), -1);
  cr_assert_str_eq(err.where, "");
  cr_assert(strstr(err.msg, "/nonexistent/x.json"));
  mt_assert_no_leaks();
}
