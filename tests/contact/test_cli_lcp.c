/* `complan lcp solve|certify` as a user runs it: outputs, exit statuses and
 * error messages (docs/outputs.md). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support.h"


Test(cli_lcp, solve_json_contract) {
  char *f = cpt_temp_file("{\"M\": [[2, 1], [1, 2]], \"q\": [-5, -6]}", ".json");
  const char *argv[] = {"complan", "lcp", "solve", f, "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "solved");
  cr_assert_str_eq(json_string_value(json_object_get(doc, "solver")), "lemke");
  cr_assert_eq(json_integer_value(json_object_get(doc, "n")), 2);
  json_t *z = json_object_get(doc, "z");
  cr_assert_float_eq(json_number_value(json_array_get(z, 0)), 4.0 / 3.0, 1e-12);
  cr_assert_float_eq(json_number_value(json_array_get(z, 1)), 7.0 / 3.0, 1e-12);
  cr_assert(json_is_array(json_object_get(doc, "w")));
  cr_assert(json_is_integer(json_object_get(doc, "iterations")));
  cr_assert(json_is_integer(json_object_get(doc, "starts")));
  cr_assert(json_is_number(json_object_get(doc, "complementarity")));
  cr_assert(json_is_number(json_object_get(doc, "time_us")));
  cr_assert_str_eq(json_string_value(json_object_get(doc, "route")), "direct");
  cr_assert_null(json_object_get(doc, "route_eps"));
  cr_assert_null(json_object_get(doc, "reason"));
  json_decref(doc);
  unlink(f);
  free(f);
}

/* Lemke ends on a ray (tests/contact/test_lemke_reg.c: the solutions are
 * z = (2, t, 1), t >= 0); `lcp solve` runs the regularised route and says so. */
Test(cli_lcp, solve_json_names_the_regularised_route) {
  char *f = cpt_temp_file("{\"M\": [[0, 0, 3], [1, 0, -1], [0, 0, 1]], \"q\": [-3, -1, -1]}",
                          ".json");
  const char *solvers[] = {"lemke", "auto"};
  for (int s = 0; s < 2; s++) {
    const char *argv[] = {"complan", "lcp", "solve", f, "--solver", solvers[s], "--json", NULL};
    json_t *doc = cpt_run_json(argv, 0);
    cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "solved");
    cr_assert_str_eq(json_string_value(json_object_get(doc, "solver")), "lemke");
    cr_assert_str_eq(json_string_value(json_object_get(doc, "route")), "regularised");
    cr_assert_float_eq(json_number_value(json_object_get(doc, "route_eps")), 1e-3, 1e-18);
    json_t *z = json_object_get(doc, "z");
    cr_assert_float_eq(json_number_value(json_array_get(z, 0)), 2.0, 1e-12);
    cr_assert_float_eq(json_number_value(json_array_get(z, 2)), 1.0, 1e-12);
    /* no complementary basis solves the face; the LP vertex's basis does */
    cr_assert(json_is_true(json_object_get(doc, "polished")));
    cr_assert_leq(json_number_value(json_object_get(doc, "residual")), 1e-12);
    cr_assert_leq(json_number_value(json_object_get(doc, "complementarity")), 1e-12);
    json_decref(doc);
  }
  unlink(f);
  free(f);
}

Test(cli_lcp, each_solver_and_repeat) {
  const char *solvers[] = {"lemke", "fip", "certify", "auto"};
  for (int s = 0; s < 4; s++) {
    const char *argv[] = {"complan", "lcp", "solve", cpt_data("siconos/lcp_exp_murty.dat"),
                          "--solver", solvers[s], "--json", "--repeat", "3", NULL};
    json_t *doc = cpt_run_json(argv, 0);
    cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "solved");
    const char *by = json_string_value(json_object_get(doc, "solver"));
    cr_assert_str_eq(by, s == 3 ? "lemke" : solvers[s]);
    json_decref(doc);
  }
}

Test(cli_lcp, no_solution_exit_codes) {
  char *f = cpt_temp_file("{\"M\": [[-1]], \"q\": [-1]}", ".json");
  /* Lemke alone cannot decide: exit 1, status failed, a reason. */
  const char *a1[] = {"complan", "lcp", "solve", f, "--solver", "lemke", "--json", NULL};
  json_t *doc = cpt_run_json(a1, 1);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "failed");
  cr_assert(strstr(json_string_value(json_object_get(doc, "reason")), "secondary ray"));
  json_decref(doc);
  /* certify proves it: exit 0, no_solution. */
  const char *a2[] = {"complan", "lcp", "certify", f, "--json", NULL};
  doc = cpt_run_json(a2, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "no_solution");
  cr_assert_str_eq(json_string_value(json_object_get(doc, "solver")), "certify");
  json_decref(doc);
  const char *a3[] = {"complan", "lcp", "solve", f, "--json", NULL};
  doc = cpt_run_json(a3, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "no_solution");
  json_decref(doc);
  unlink(f);
  free(f);
}

/* --node-limit: a work limit. The instance is block triangular (rows 8-9
 * read w = C z + q_C with C = [-2 1; -1 1], q_C = (-2, 0): no complementary
 * solution whatever the other rows), so proving it takes branching. */
Test(cli_lcp, certify_node_limit) {
  char *f = cpt_temp_file("{\"M\": [[0.246, 0.484, 0.59, 0.885, 0.48, 0.845, -0.942, -0.069, 0.887, 0.298], [0.802, -0.774, -0.062, -0.507, 0.088, 0.148, -0.974, -0.567, -0.441, 0.833], [0.531, -0.681, 0.594, -0.722, 0.235, -0.747, -0.996, 0.743, -0.581, -0.569], [0.965, 0.745, -0.421, 0.923, 0.078, 0.356, -0.59, 0.882, 0.381, 0.933], [0.787, -0.402, -0.278, -0.668, -0.709, -0.87, -0.397, 0.206, -0.993, 0.356], [-0.324, -0.38, 0.637, -0.039, -0.368, -0.038, 0.409, -0.886, 0.95, -0.954], [0.5, 0.69, -0.964, 0.575, -0.268, 0.157, -0.982, -0.907, -0.638, 0.91], [-0.607, 0.511, 0.859, 0.884, -0.311, -0.29, 0.049, 0.551, -0.784, 0.497], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -2, 1], [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, -1, 1]], \"q\": [0.594, 0.719, -0.927, 0.892, -0.818, -0.319, 0.222, 0.836, -2, 0]}", ".json");
  const char *a0[] = {"complan", "lcp", "certify", f, "--json", NULL};
  json_t *doc = cpt_run_json(a0, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "no_solution");
  const json_int_t full = json_integer_value(json_object_get(doc, "iterations"));
  cr_assert_gt(full, 2, "the proof needs branching: %lld nodes", (long long)full);
  json_decref(doc);
  /* Two nodes: undecided at the limit, exit 1, the limit named; the same
   * count of nodes however often it runs. */
  const char *a1[] = {"complan", "lcp", "certify", f, "--json", "--node-limit", "2", NULL};
  json_int_t it[2];
  for (int r = 0; r < 2; r++) {
    doc = cpt_run_json(a1, 1);
    cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "failed");
    const char *why = json_string_value(json_object_get(doc, "reason"));
    cr_assert(strstr(why, "node limit (2 branch-and-bound nodes)") != NULL, "%s", why);
    it[r] = json_integer_value(json_object_get(doc, "iterations"));
    json_decref(doc);
  }
  cr_assert_eq(it[0], it[1]);
  cr_assert_lt(it[0], full);
  /* As many nodes as the proof took: the proof. */
  char lim[32];
  snprintf(lim, sizeof lim, "%lld", (long long)full);
  const char *a2[] = {"complan", "lcp", "solve", f, "--solver", "certify", "--json",
                      "--node-limit", lim, NULL};
  doc = cpt_run_json(a2, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "no_solution");
  json_decref(doc);
  /* 0 is not a limit: exit 2, the flag and what it expects named. */
  const char *a3[] = {"complan", "lcp", "certify", f, "--node-limit", "0", NULL};
  char *out = NULL, *err = NULL;
  cr_assert_eq(cpt_run(a3, &out, &err), 2);
  cr_assert(strstr(err, "--node-limit: expected a whole number >= 1") != NULL, "%s", err);
  cr_assert_str_eq(out, "");
  free(out);
  free(err);
  unlink(f);
  free(f);
}

Test(cli_lcp, certify_second) {
  /* z = 0 (w = 1) and z = 1 (w = 0) both solve M = [-1], q = [1]. */
  char *f = cpt_temp_file("{\"M\": [[-1]], \"q\": [1]}", ".json");
  const char *argv[] = {"complan", "lcp", "certify", f, "--second", "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "solved");
  json_t *second = json_object_get(doc, "second");
  cr_assert(json_is_object(second), "second is not an object");
  double z1 = json_number_value(json_array_get(json_object_get(doc, "z"), 0));
  double z2 = json_number_value(json_array_get(json_object_get(second, "z"), 0));
  cr_assert_float_eq(z1 + z2, 1.0, 1e-9); /* one is 0, the other 1 */
  cr_assert_float_eq(z1 * z2, 0.0, 1e-9);
  json_decref(doc);
  unlink(f);
  free(f);
  /* A P-matrix: unique solution, so "second": null. */
  const char *a2[] = {"complan", "lcp", "certify", cpt_data("siconos/lcp_exp_murty.dat"),
                      "--second", "--json", NULL};
  doc = cpt_run_json(a2, 0);
  cr_assert(json_is_null(json_object_get(doc, "second")));
  json_decref(doc);
}

/* Bad input: exit 2, nothing on stdout, the file and the place named. */
Test(cli_lcp, bad_input) {
  static const struct { const char *text, *expect; } cases[] = {
      {"{\"M\": [[1, 2], [3]], \"q\": [1, 2]}", ": M[1]: expected a row of 2 numbers"},
      {"{\"M\": [[1]], \"q\": [1], \"Q\": 2}", ": Q: unknown key"},
      {"2\n0\n2\n2\n2 2\n1 2 3\n", ": line 6: unexpected end of file"},
      {"2\n1\n2\n2\n", ": line 2: unsupported storage type 1"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    char *f = cpt_temp_file(cases[k].text, k < 2 ? ".json" : ".dat");
    const char *argv[] = {"complan", "lcp", "solve", f, "--json", NULL};
    char *out, *err;
    cr_assert_eq(cpt_run(argv, &out, &err), 2, "case %zu", k);
    cr_assert_str_empty(out, "case %zu wrote to stdout: %s", k, out);
    cr_assert(strstr(err, f), "case %zu: file not named: %s", k, err);
    cr_assert(strstr(err, cases[k].expect), "case %zu: '%s' lacks '%s'", k, err, cases[k].expect);
    free(out);
    free(err);
    unlink(f);
    free(f);
  }
  const char *missing[] = {"complan", "lcp", "solve", "/nonexistent/x.json", NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(missing, &out, &err), 2);
  cr_assert(strstr(err, "complan: /nonexistent/x.json: cannot open /nonexistent/x.json: "), "%s",
            err);
  cr_assert_str_empty(out);
  free(out);
  free(err);
}

Test(cli_lcp, usage_errors_and_help) {
  const char *f = cpt_data("siconos/lcp_CPS_1.dat");
  const char *const bad[][7] = {
      {"complan", "lcp", "solve", f, "--solver", "simplex", NULL},
      {"complan", "lcp", "solve", f, "--repeat", "0", NULL},
      {"complan", "lcp", "solve", f, "--bogus", NULL, NULL},
      {"complan", "lcp", "solve", NULL, NULL, NULL, NULL},
      {"complan", "lcp", "solve", f, "--repeat", NULL, NULL},
      {"complan", "lcp", "frobnicate", NULL, NULL, NULL, NULL},
      {"complan", "frobnicate", NULL, NULL, NULL, NULL, NULL},
  };
  for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
    char *out, *err;
    cr_assert_eq(cpt_run(bad[k], &out, &err), 2, "case %zu", k);
    cr_assert_str_empty(out, "case %zu", k);
    cr_assert(strstr(err, "complan: "), "case %zu: %s", k, err);
    free(out);
    free(err);
  }
  const char *const help[][5] = {
      {"complan", "--help", NULL},
      {"complan", "lcp", "solve", "--help", NULL},
      {"complan", "lcp", "certify", "--help", NULL},
  };
  const char *flags[] = {"lcp solve", "--solver", "--second"};
  for (int k = 0; k < 3; k++) {
    char *out, *err;
    cr_assert_eq(cpt_run(help[k], &out, &err), 0);
    cr_assert(strstr(out, flags[k]), "help %d lacks %s", k, flags[k]);
    free(out);
    free(err);
  }
}

Test(cli_lcp, human_output) {
  const char *argv[] = {"complan", "lcp", "solve", cpt_data("siconos/lcp_exp_murty.dat"), NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(argv, &out, &err), 0, "%s", err);
  cr_assert(strstr(out, "solved by lemke"), "%s", out);
  cr_assert(strstr(out, "z = 0 0 0 0 0 1"), "%s", out);
  free(out);
  free(err);
}
