/* `complan solve` as a user runs it: the JSON contract of docs/outputs.md,
 * the numbers in it, and bad input (exit 2, nothing on stdout, the place). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support.h"

static const char *scene(const char *name) {
  static char buf[2][1024];
  static int k;
  k ^= 1;
  snprintf(buf[k], sizeof buf[k], "%s/models/scenes/%s", getenv("CP_SOURCE_ROOT"), name);
  return buf[k];
}


static double num(json_t *arr, size_t i) { return json_number_value(json_array_get(arr, i)); }

Test(cli_solve, json_contract_and_numbers) {
  const char *argv[] = {"complan", "solve", scene("incline_slide.json"), "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "solved");
  cr_assert_str_eq(json_string_value(json_object_get(doc, "friction")), "pyramid");
  cr_assert_str_eq(json_string_value(json_object_get(doc, "solver")), "lemke");
  cr_assert_eq(json_integer_value(json_object_get(doc, "lcp_size")), 20);
  cr_assert(json_is_integer(json_object_get(doc, "iterations")));
  cr_assert(json_is_integer(json_object_get(doc, "starts")));
  json_t *bodies = json_object_get(doc, "bodies");
  cr_assert_eq(json_array_size(bodies), 1);
  json_t *box = json_array_get(bodies, 0);
  cr_assert_str_eq(json_string_value(json_object_get(box, "name")), "box");
  json_t *la = json_object_get(box, "linear_acceleration");
  const double th = 20 * 3.14159265358979323846 / 180;
  cr_assert_float_eq(hypot(num(la, 0), num(la, 2)), 9.81 * (sin(th) - 0.2 * cos(th)), 1e-9);
  cr_assert_eq(json_array_size(json_object_get(box, "angular_acceleration")), 3);
  cr_assert(json_is_array(json_object_get(doc, "joints")));
  json_t *contacts = json_object_get(doc, "contacts");
  cr_assert_eq(json_array_size(contacts), 4);
  for (size_t j = 0; j < 4; j++) {
    json_t *c = json_array_get(contacts, j);
    cr_assert_str_eq(json_string_value(json_object_get(c, "a")), "box");
    cr_assert_str_eq(json_string_value(json_object_get(c, "b")), "ramp");
    cr_assert_str_eq(json_string_value(json_object_get(c, "initial")), "rolling");
    cr_assert_str_eq(json_string_value(json_object_get(c, "outcome")), "sliding");
    json_t *f = json_object_get(c, "force"), *a = json_object_get(c, "acceleration");
    /* Pyramid law: the component along the slide (t here: a_t > 0, a_o = 0)
     * opposes it at full magnitude; c_o is only bounded by mu c_n. */
    cr_assert_gt(num(a, 1), 1.0);
    cr_assert_float_eq(num(a, 2), 0.0, 1e-9);
    cr_assert_float_eq(num(f, 1), -0.2 * num(f, 0), 1e-9);
    cr_assert_leq(fabs(num(f, 2)), 0.2 * num(f, 0) + 1e-9);
  }
  json_t *d = json_object_get(doc, "diagnostics");
  cr_assert(json_is_integer(json_object_get(d, "jacobian_rank")));
  cr_assert(json_is_boolean(json_object_get(d, "full_column_rank")));
  cr_assert(json_is_boolean(json_object_get(d, "within_friction_bound")));
  cr_assert_not_null(json_object_get(d, "friction_bound"));
  cr_assert_null(json_object_get(doc, "cone_edges"));
  json_decref(doc);
}

Test(cli_solve, joints_cone_and_certify) {
  const char *a1[] = {"complan", "solve", scene("squeeze_grasp.json"), "--json", NULL};
  json_t *doc = cpt_run_json(a1, 0);
  json_t *joints = json_object_get(doc, "joints");
  cr_assert_eq(json_array_size(joints), 4);
  cr_assert_str_eq(json_string_value(json_object_get(json_array_get(joints, 0), "name")), "left/j1");
  for (size_t r = 0; r < 4; r++)
    cr_assert_float_eq(json_number_value(json_object_get(json_array_get(joints, r), "acceleration")),
                       0.0, 1e-8);
  json_decref(doc);
  const char *a2[] = {"complan", "solve", scene("incline_slide.json"), "--friction", "cone", "--json", NULL};
  doc = cpt_run_json(a2, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "friction")), "cone");
  cr_assert(json_integer_value(json_object_get(doc, "cone_edges")) >= 8);
  cr_assert_leq(json_number_value(json_object_get(doc, "cone_violation")), 1e-3);
  json_decref(doc);
  const char *a3[] = {"complan", "solve", scene("squeeze_grasp.json"), "--solver", "certify", "--json", NULL};
  doc = cpt_run_json(a3, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "solver")), "certify");
  cr_assert_not_null(json_object_get(doc, "unique"), "certify must say whether u' is unique");
  json_decref(doc);
}

/* The Painleve rod: certify proves there is no solution; exit 0. */
Test(cli_solve, painleve_no_solution) {
  const char *argv[] = {"complan", "solve", scene("painleve_rod.json"), "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "no_solution");
  cr_assert_str_eq(json_string_value(json_object_get(doc, "solver")), "certify");
  json_decref(doc);
}

Test(cli_solve, bad_input) {
  static const struct { const char *text, *expect; } cases[] = {
      {"{\"bodies\": [{\"name\": \"box\", \"mass\": -1, \"shape\": {\"type\": \"sphere\", \"radius\": 0.1}}],"
       " \"contacts\": []}", "bodies[0].mass"},
      {"{\"bodies\": [], \"contacts\": [], \"gravty\": [0, 0, -9.81]}", "gravty"},
      {"{\"bodies\": [{\"name\": \"t\", \"fixed\": true, \"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1], \"offset\": 0}},"
       " {\"name\": \"b\", \"mass\": 1, \"shape\": {\"type\": \"sphere\", \"radius\": 0.1},"
       " \"position\": [0, 0, 0.1], \"velocity\": [0, 0, -1]}],"
       " \"contacts\": [{\"a\": \"b\", \"b\": \"t\", \"point\": [0, 0, 0], \"normal\": [0, 0, 1]}]}",
       "contacts[0]"},
      {"{\"bodies\": [], \"contacts\": [{\"a\": \"ghost\", \"b\": \"t\", \"point\": [0, 0, 0], \"normal\": [0, 0, 1]}]}",
       "contacts[0]"},
      {"{\"bodies\": [}", "line 1"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    char *f = cpt_temp_file(cases[k].text, ".json");
    const char *argv[] = {"complan", "solve", f, "--json", NULL};
    char *out, *err;
    cr_assert_eq(cpt_run(argv, &out, &err), 2, "case %zu: %s", k, err);
    cr_assert_str_empty(out, "case %zu wrote to stdout", k);
    cr_assert(strstr(err, f), "case %zu: file not named: %s", k, err);
    cr_assert(strstr(err, cases[k].expect), "case %zu: '%s' lacks '%s'", k, err, cases[k].expect);
    free(out);
    free(err);
    unlink(f);
    free(f);
  }
  const char *const bad[][6] = {
      {"complan", "solve", NULL},
      {"complan", "solve", "x.json", "--friction", "square", NULL},
      {"complan", "solve", "x.json", "--solver", "newton", NULL},
      {"complan", "solve", "x.json", "--frobnicate", NULL},
  };
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
    char *out, *err;
    cr_assert_eq(cpt_run(bad[k], &out, &err), 2, "usage case %zu", k);
    cr_assert_str_empty(out);
    free(out);
    free(err);
  }
}

Test(cli_solve, human_table) {
  const char *argv[] = {"complan", "solve", scene("squeeze_slip.json"), NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(argv, &out, &err), 0, "%s", err);
  cr_assert(strstr(out, "solved by"), "%s", out);
  cr_assert(strstr(out, "left/tip"), "%s", out);
  cr_assert(strstr(out, "sliding"), "%s", out);
  cr_assert(strstr(out, "diagnostics:"), "%s", out);
  free(out);
  free(err);
}
