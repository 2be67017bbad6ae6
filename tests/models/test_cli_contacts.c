// `complan contacts SCENE [--json]` (docs/outputs.md): the JSON contract,
// the text table, --help, and bad input (exit 2, nothing on stdout, the file
// and JSON path on stderr).
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support.h"

static const char *box_scene =
    "{\"bodies\": [{\"name\": \"table\", \"fixed\": true, \"shape\": "
    "{\"type\": \"plane\", \"normal\": [0, 0, 1]}}, {\"name\": \"box\", "
    "\"mass\": 1, \"shape\": {\"type\": \"box\", \"size\": [0.2, 0.1, 0.1]}, "
    "\"position\": [0, 0, 0.05]}]}";

static const char *bundled(const char *name) {
  static char path[4096];
  const char *root = getenv("CP_SOURCE_ROOT");
  snprintf(path, sizeof path, "%s/models/scenes/%s", root ? root : ".", name);
  return path;
}

// Runs `complan contacts FILE --json`; asserts exit 0, one JSON document
// with exactly the key "contacts", each entry exactly a, b, point, normal,
// depth. Returns the array's owner (caller json_decref()s).
static json_t *run_json(const char *file) {
  const char *argv[] = {"complan", "contacts", file, "--json", NULL};
  char *out, *err;
  int rc = cpt_run(argv, &out, &err);
  cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
  json_error_t je;
  json_t *doc = json_loads(out, 0, &je); // rejects trailing documents
  cr_assert_not_null(doc, "not one JSON document: %s (%s)", out, je.text);
  cr_assert(json_is_object(doc));
  cr_assert_eq(json_object_size(doc), 1);
  json_t *list = json_object_get(doc, "contacts");
  cr_assert(json_is_array(list));
  size_t i;
  json_t *c;
  json_array_foreach(list, i, c) {
    cr_assert_eq(json_object_size(c), 5, "contact %zu has other keys", i);
    cr_assert(json_is_string(json_object_get(c, "a")));
    cr_assert(json_is_string(json_object_get(c, "b")));
    cr_assert_eq(json_array_size(json_object_get(c, "point")), 3);
    cr_assert_eq(json_array_size(json_object_get(c, "normal")), 3);
    cr_assert(json_is_number(json_object_get(c, "depth")));
  }
  free(out);
  free(err);
  return doc;
}

static double num(json_t *c, const char *key, int i) {
  json_t *v = json_object_get(c, key);
  if (i >= 0) v = json_array_get(v, (size_t)i);
  return json_number_value(v);
}

Test(cli_contacts, json_contract_auto) {
  char *file = cpt_temp_file(box_scene, ".json");
  json_t *doc = run_json(file);
  json_t *list = json_object_get(doc, "contacts");
  cr_assert_eq(json_array_size(list), 4);
  size_t i;
  json_t *c;
  json_array_foreach(list, i, c) {
    cr_assert_str_eq(json_string_value(json_object_get(c, "a")), "box");
    cr_assert_str_eq(json_string_value(json_object_get(c, "b")), "table");
    cr_assert_float_eq(fabs(num(c, "point", 0)), 0.1, 1e-12);
    cr_assert_float_eq(fabs(num(c, "point", 1)), 0.05, 1e-12);
    cr_assert_float_eq(num(c, "point", 2), 0, 1e-12);
    cr_assert_float_eq(num(c, "normal", 2), 1, 1e-15);
    cr_assert_lt(fabs(num(c, "depth", -1)), 1e-12);
  }
  json_decref(doc);
  unlink(file);
  free(file);
}

Test(cli_contacts, json_explicit_list_and_links) {
  // An explicit list: in scene order, depth 0.
  json_t *doc = run_json(bundled("finger_push.json"));
  json_t *list = json_object_get(doc, "contacts");
  cr_assert_eq(json_array_size(list), 5);
  json_t *c = json_array_get(list, 4);
  cr_assert_str_eq(json_string_value(json_object_get(c, "b")), "finger/tip");
  for (size_t i = 0; i < 5; ++i)
    cr_assert_eq(num(json_array_get(list, i), "depth", -1), 0);
  json_decref(doc);
  // A URDF finger with automatic contacts: the link named manip/link.
  doc = run_json(bundled("urdf_finger_push.json"));
  list = json_object_get(doc, "contacts");
  cr_assert_eq(json_array_size(list), 5);
  c = json_array_get(list, 4);
  cr_assert_str_eq(json_string_value(json_object_get(c, "a")), "box");
  cr_assert_str_eq(json_string_value(json_object_get(c, "b")), "finger/distal");
  cr_assert_float_eq(num(c, "point", 0), -0.05, 1e-9);
  cr_assert_float_eq(num(c, "normal", 0), 1, 1e-12);
  json_decref(doc);
  doc = run_json(bundled("gripper_box.json"));
  cr_assert_eq(json_array_size(json_object_get(doc, "contacts")), 12);
  json_decref(doc);
}

Test(cli_contacts, text_and_help) {
  char *file = cpt_temp_file(box_scene, ".json");
  const char *argv[] = {"complan", "contacts", file, NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(argv, &out, &err), 0, "%s", err);
  cr_assert(strstr(out, "4 contacts (generated from the shapes)"), "%s", out);
  cr_assert(strstr(out, "box"), "%s", out);
  cr_assert(strstr(out, "depth"), "%s", out);
  cr_assert_str_eq(err, "");
  free(out);
  free(err);
  const char *help[] = {"complan", "contacts", "--help", NULL};
  cr_assert_eq(cpt_run(help, &out, &err), 0);
  cr_assert(strstr(out, "usage: complan contacts SCENE"), "%s", out);
  cr_assert(strstr(out, "--json"), "%s", out);
  cr_assert(strstr(out, "--no-speed-check"), "%s", out);
  free(out);
  free(err);
  unlink(file);
  free(file);
}

// Runs with args; asserts exit 2, empty stdout, and every part in stderr.
static void bad(const char *const *argv, const char *p1, const char *p2) {
  char *out, *err;
  int rc = cpt_run(argv, &out, &err);
  cr_assert_eq(rc, 2, "exit %d, stderr %s", rc, err);
  cr_assert_str_eq(out, "", "stdout not empty: %s", out);
  cr_assert(strstr(err, p1), "stderr '%s' lacks '%s'", err, p1);
  if (p2) cr_assert(strstr(err, p2), "stderr '%s' lacks '%s'", err, p2);
  free(out);
  free(err);
}

Test(cli_contacts, bad_input_exits_2_with_nothing_on_stdout) {
  const char *a1[] = {"complan", "contacts", "/nonexistent.json", "--json", NULL};
  bad(a1, "complan: /nonexistent.json", "cannot open");
  const char *a2[] = {"complan", "contacts", NULL};
  bad(a2, "missing SCENE", NULL);
  const char *a3[] = {"complan", "contacts", "x.json", "--frobnicate", NULL};
  bad(a3, "unknown option '--frobnicate'", NULL);
  const char *a4[] = {"complan", "contacts", "x.json", "y.json", NULL};
  bad(a4, "second", NULL);
  // A bad number: the JSON path.
  char *f = cpt_temp_file("{\"bodies\": [{\"name\": \"b\", \"mass\": -1, "
                          "\"shape\": {\"type\": \"sphere\", \"radius\": 1}}]}",
                          ".json");
  const char *a5[] = {"complan", "contacts", f, "--json", NULL};
  char want[4200];
  snprintf(want, sizeof want, "complan: %s: bodies[0].mass: ", f);
  bad(a5, want, "positive");
  unlink(f);
  free(f);
  // Penetration: the pair and the depth.
  f = cpt_temp_file("{\"bodies\": [{\"name\": \"table\", \"fixed\": true, "
                    "\"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1]}}, "
                    "{\"name\": \"ball\", \"mass\": 1, \"shape\": {\"type\": "
                    "\"sphere\", \"radius\": 0.1}, \"position\": [0, 0, "
                    "0.09]}]}",
                    ".json");
  const char *a6[] = {"complan", "contacts", f, "--json", NULL};
  bad(a6, ": contacts: \"ball\" and \"table\" overlap: penetration 0.01 m",
      NULL);
  unlink(f);
  free(f);
  // Malformed JSON: the line.
  f = cpt_temp_file("{\n\"bodies\": [\n}\n", ".json");
  const char *a7[] = {"complan", "contacts", f, NULL};
  bad(a7, ": line 3: ", NULL);
  unlink(f);
  free(f);
  // A bad URDF: the scene's JSON path, the URDF file, line and element.
  char *u = cpt_temp_file("<robot name=\"r\">\n<link name=\"base\"/>\n"
                          "<link name=\"a\">\n<collision><geometry>\n"
                          "<mesh filename=\"a.stl\"/></geometry></collision>"
                          "</link>\n</robot>\n",
                          ".urdf");
  char text[4200];
  snprintf(text, sizeof text,
           "{\"manipulators\": [{\"name\": \"m\", \"urdf\": \"%s\"}]}", u);
  f = cpt_temp_file(text, ".json");
  const char *a8[] = {"complan", "contacts", f, "--json", NULL};
  snprintf(want, sizeof want, "manipulators[0].urdf: %s line 5: <mesh>: "
           "cannot read mesh", u);
  bad(a8, want, NULL);
  unlink(f);
  free(f);
  unlink(u);
  free(u);
}

Test(cli_contacts, normal_speed) {
  char *f = cpt_temp_file(
      "{\"bodies\": [{\"name\": \"table\", \"fixed\": true, \"shape\": "
      "{\"type\": \"plane\", \"normal\": [0, 0, 1]}}, {\"name\": \"ball\", "
      "\"mass\": 1, \"shape\": {\"type\": \"sphere\", \"radius\": 0.1}, "
      "\"position\": [0, 0, 0.1], \"velocity\": [0, 0, -1]}]}",
      ".json");
  const char *a1[] = {"complan", "contacts", f, "--json", NULL};
  bad(a1, ": contacts: generated contact 0 (ball on table)", "approaching");
  const char *a2[] = {"complan", "contacts", f, "--json", "--no-speed-check",
                      NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(a2, &out, &err), 0, "%s", err);
  cr_assert(strstr(out, "\"ball\""), "%s", out);
  free(out);
  free(err);
  unlink(f);
  free(f);
}
