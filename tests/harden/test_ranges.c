/* Physical values outside their sensible ranges (models/ranges.h,
 * docs/ranges.md) are rejected with the JSON path, exit 2 at the command
 * line; values at the edges of the ranges are accepted. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/ranges.h"
#include "models/scene.h"
#include "tests/harden/harden.h"

/* A box on a table with one explicit contact; %s placeholders take the
 * values under test. */
static char *scene(const char *g, const char *mu, const char *mass, const char *size,
                   const char *point, const char *inertia) {
  char *t = malloc(4096);
  snprintf(t, 4096,
           "{\"gravity\": %s, \"friction\": {\"default\": %s},"
           " \"bodies\": [{\"name\": \"table\", \"fixed\": true,"
           "   \"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1], \"offset\": 0}},"
           "  {\"name\": \"box\", \"mass\": %s %s,"
           "   \"shape\": {\"type\": \"box\", \"size\": %s}, \"position\": [0, 0, 0.05]}],"
           " \"contacts\": [{\"a\": \"box\", \"b\": \"table\", \"point\": %s,"
           "   \"normal\": [0, 0, 1]}]}",
           g, mu, mass, inertia, size, point);
  return t;
}

static void expect(const char *text, const char *where, const char *what) {
  cp_scene s;
  cp_error err;
  int rc = cp_scene_parse(text, strlen(text), NULL, NULL, &s, &err);
  if (!where) {
    cr_assert_eq(rc, 0, "rejected: %s: %s", err.where, err.msg);
    cp_scene_free(&s);
    return;
  }
  cr_assert_eq(rc, -1, "accepted, expected %s", where);
  cr_assert_str_eq(err.where, where, "%s", err.msg);
  cr_assert(strstr(err.msg, what), "'%s' lacks '%s'", err.msg, what);
  cr_assert(strstr(err.msg, "docs/ranges.md"), "%s", err.msg);
}

#define G "[0, 0, -9.81]"
#define SZ "[0.2, 0.1, 0.1]"
#define PT "[0.1, 0.05, 0]"

Test(ranges, each_quantity_rejected_with_its_path) {
  struct { char *text; const char *where, *what; } c[] = {
      {scene(G, "0.5", "1", SZ, PT, ""), NULL, NULL},
      {scene(G, "1e12", "1", SZ, PT, ""), "friction.default", "friction coefficient 1e+12"},
      {scene(G, "100", "1", SZ, PT, ""), NULL, NULL},
      {scene(G, "100.5", "1", SZ, PT, ""), "friction.default", "[0, 100]"},
      {scene(G, "0.5", "1e-300", SZ, PT, ""), "bodies[1].mass", "mass 1e-300"},
      {scene(G, "0.5", "1e7", SZ, PT, ""), "bodies[1].mass", "kg"},
      {scene(G, "0.5", "1e-6", SZ, PT, ""), NULL, NULL},
      {scene("[0, 0, -1e5]", "0.5", "1", SZ, PT, ""), "gravity[2]", "gravity"},
      {scene(G, "0.5", "1", "[0.2, 1e-9, 0.1]", PT, ""), "bodies[1].shape.size[1]", "box size"},
      {scene(G, "0.5", "1", "[0.2, 0.1, 5e3]", PT, ""), "bodies[1].shape.size[2]", "m"},
      {scene(G, "0.5", "1", SZ, "[1e12, 0, 0]", ""), "contacts[0].point[0]", "position"},
      {scene(G, "0.5", "1", SZ, "[500, 0, 0]", ""), "contacts[0].point",
       "from the centre of 'a'"},
      {scene(G, "0.5", "1", SZ, PT, ", \"inertia\": [[1e10, 0, 0], [0, 1e10, 0], [0, 0, 1e10]]"),
       "bodies[1].inertia[0][0]", "moment of inertia"},
      {scene(G, "0.5", "1", SZ, PT, ", \"inertia\": [[1e-20, 0, 0], [0, 1e-20, 0], [0, 0, 1e-20]]"),
       "bodies[1].inertia[0][0]", "moment of inertia"},
  };
  for (size_t k = 0; k < sizeof c / sizeof c[0]; k++) {
    expect(c[k].text, c[k].where, c[k].what);
    free(c[k].text);
  }
}

Test(ranges, contact_mu_and_joint_values) {
  const char *contact_mu =
      "{\"bodies\": [{\"name\": \"t\", \"fixed\": true, \"shape\": {\"type\": \"plane\","
      " \"normal\": [0, 0, 1], \"offset\": 0}}, {\"name\": \"b\", \"mass\": 1,"
      " \"shape\": {\"type\": \"sphere\", \"radius\": 0.1}, \"position\": [0, 0, 0.1]}],"
      " \"contacts\": [{\"a\": \"b\", \"b\": \"t\", \"point\": [0, 0, 0], \"normal\": [0, 0, 1],"
      " \"mu\": 1e20}]}";
  expect(contact_mu, "contacts[0].mu", "friction coefficient 1e+20");
  const char *finger =
      "{\"bodies\": [], \"manipulators\": [{\"name\": \"f\", \"base\": {\"position\": [0, 0, 0]},"
      " \"joints\": [{\"name\": \"j1\", \"type\": \"revolute\", \"axis\": [0, 1, 0],"
      "  \"origin\": {\"position\": [0, 0, 0.1]}, \"effort\": %s,"
      "  \"link\": {\"name\": \"l1\", \"mass\": %s, \"com\": [0, 0, 0.05],"
      "   \"inertia\": [[1e-4, 0, 0], [0, 1e-4, 0], [0, 0, 1e-5]],"
      "   \"shape\": {\"type\": \"capsule\", \"radius\": 0.01, \"length\": 0.1}}}]}]}";
  char t[2048];
  snprintf(t, sizeof t, finger, "1e9", "0.2");
  expect(t, "manipulators[0].joints[0].effort", "joint effort 1e+09");
  snprintf(t, sizeof t, finger, "1", "1e-9");
  expect(t, "manipulators[0].joints[0].link.mass", "mass 1e-09");
  snprintf(t, sizeof t, finger, "1", "0.2");
  expect(t, NULL, NULL);
}

/* The command line: exit 2, the file and path named, nothing on stdout. */
Test(ranges, cli_exit_2) {
  char *t = scene(G, "0.5", "1e-300", SZ, PT, "");
  char *f = cpt_temp_file(t, ".json");
  const char *argv[] = {"complan", "solve", f, "--json", NULL};
  cpth_expect_bad_input(argv, f, "bodies[1].mass: mass 1e-300");
  unlink(f);
  free(f);
  free(t);
}

/* Every bundled scene lies inside the ranges. */
Test(ranges, bundled_scenes_accepted) {
  const char *names[] = {"box_on_table", "box_sliding", "finger_push", "gripper_box",
                         "incline_rest", "incline_slide", "painleve_rod", "quasistatic_push",
                         "softfinger_screwdriver", "softfinger_spin", "squeeze_grasp",
                         "squeeze_slip", "stack", "urdf_finger_push"};
  for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
    char rel[128];
    snprintf(rel, sizeof rel, "../../models/scenes/%s.json", names[k]);
    cp_scene s;
    cp_error err;
    cp_scene_options o = cp_scene_options_defaults();
    o.check_normal_speed = 0;
    cr_assert_eq(cp_scene_load(cpt_data(rel), &o, &s, &err), 0, "%s: %s: %s", names[k],
                 err.where, err.msg);
    cp_scene_free(&s);
  }
}
