// `complan stability` and `complan assemble` (docs/assembly.md): the JSON
// contracts, exit statuses, the database, and bad input (exit 2, nothing on
// stdout, the file and place on stderr).
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/planner/asm_support.h"
#include "tests/support.h"

#define bundled cpt_bundled_scene

static const char *slope_text(double mu) {
  static char buf[1024];
  return cpt_slope_scene(0.5, mu, buf, sizeof buf);
}

Test(cli_assembly, stability_json_contract) {
  const char *argv[] = {"complan", "stability", bundled("tower.json"), "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert(json_is_true(json_object_get(doc, "stable")));
  cr_assert_str_eq(json_string_value(json_object_get(doc, "kind")), "strong");
  cr_assert_eq(json_array_size(json_object_get(doc, "moving")), 0);
  json_t *cl = json_object_get(doc, "contacts");
  cr_assert_eq(json_array_size(cl), 16);
  // The equilibrium carries the tower's weight: normal forces on the ground
  // add up to 4 blocks x 9.81 N.
  double ground = 0.0;
  size_t i;
  json_t *c;
  json_array_foreach(cl, i, c) {
    cr_assert_eq(json_array_size(json_object_get(c, "force")), 3);
    if (!strcmp(json_string_value(json_object_get(c, "b")), "ground"))
      ground += json_number_value(json_array_get(json_object_get(c, "force"), 0));
  }
  cr_assert_float_eq(ground, 4 * 9.81, 1e-7);
  cr_assert(json_is_null(json_object_get(doc, "motion")));
  json_decref(doc);
}

Test(cli_assembly, stability_unstable_names_moving_body) {
  char *file = cpt_temp_file(slope_text(0.5), ".json"); // tan 0.5 = 0.546
  const char *argv[] = {"complan", "stability", file, "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert(json_is_false(json_object_get(doc, "stable")));
  cr_assert_str_eq(json_string_value(json_object_get(doc, "kind")), "unstable");
  json_t *mv = json_object_get(doc, "moving");
  cr_assert_eq(json_array_size(mv), 1);
  cr_assert_str_eq(json_string_value(json_array_get(mv, 0)), "block");
  json_t *b = json_array_get(json_object_get(json_object_get(doc, "motion"), "bodies"), 0);
  json_t *a = json_object_get(b, "linear_acceleration");
  const double acc = hypot(json_number_value(json_array_get(a, 0)), json_number_value(json_array_get(a, 2)));
  cr_assert_float_eq(acc, 9.81 * (sin(0.5) - 0.5 * cos(0.5)), 1e-6);
  // No equilibrium: forces are null.
  cr_assert(json_is_null(json_object_get(json_array_get(json_object_get(doc, "contacts"), 0), "force")));
  json_decref(doc);
  unlink(file);
  free(file);
  // Text output names it too.
  const char *argv2[] = {"complan", "stability", file = cpt_temp_file(slope_text(0.6), ".json"), NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(argv2, &out, &err), 0);
  cr_assert(strstr(out, "strongly stable"), "%s", out);
  free(out);
  free(err);
  unlink(file);
  free(file);
}

/* --node-limit: the MILPs' work limit, a count of branch-and-bound nodes,
 * so the verdict is the same on any machine (the wall clock is off when
 * only the node limit is given). The slope with mu 0.6 > tan 0.5 needs the
 * MILPs (friction holds it; gravity could do work sliding). */
Test(cli_assembly, stability_node_limit) {
  char *file = cpt_temp_file(slope_text(0.6), ".json");
  long nodes[2] = {0, 0};
  for (int k = 0; k < 2; k++) {
    const char *argv[] = {"complan", "stability", file, "--json", "--node-limit", "5", NULL};
    json_t *doc = cpt_run_json(argv, 1);
    cr_assert_str_eq(json_string_value(json_object_get(doc, "kind")), "stable_undecided");
    cr_assert(json_is_true(json_object_get(doc, "stable")));
    cr_assert(strstr(json_string_value(json_object_get(doc, "reason")), "node limit"));
    nodes[k] = (long)json_integer_value(json_object_get(doc, "mip_nodes"));
    // GLPK may pass the limit by the two children of its last branching.
    cr_assert(nodes[k] > 5 && nodes[k] <= 7, "%ld nodes", nodes[k]);
    json_decref(doc);
  }
  cr_assert_eq(nodes[0], nodes[1]);
  const char *argv[] = {"complan", "stability", file, "--json", "--node-limit", "1000000", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "kind")), "strong");
  cr_assert_str_eq(json_string_value(json_object_get(doc, "method")), "milp");
  cr_assert_gt(json_integer_value(json_object_get(doc, "mip_nodes")), 5);
  json_decref(doc);
  unlink(file);
  free(file);
}

Test(cli_assembly, assemble_tower_json_and_db) {
  char db[] = "/tmp/cp_cli_asm_XXXXXX";
  int fd = mkstemp(db);
  close(fd);
  unlink(db);
  const char *argv[] = {"complan", "assemble", bundled("tower.json"), "--db", db, "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "found");
  json_t *seq = json_object_get(doc, "sequence"), *steps = json_object_get(doc, "steps");
  cr_assert_eq(json_array_size(seq), 4);
  for (size_t k = 0; k < 4; k++) {
    char want[16];
    snprintf(want, sizeof want, "block%zu", k);
    cr_assert_str_eq(json_string_value(json_array_get(seq, k)), want);
    json_t *s = json_array_get(steps, k);
    cr_assert_str_eq(json_string_value(json_object_get(s, "place")), want);
    cr_assert_eq(json_array_size(json_object_get(s, "direction")), 3);
    cr_assert_str_eq(json_string_value(json_object_get(s, "stability")), "strong");
  }
  cr_assert(json_is_integer(json_object_get(doc, "explored")));
  cr_assert(json_is_null(json_object_get(doc, "blocked")));
  const json_int_t run = json_integer_value(json_object_get(doc, "run_id"));
  json_decref(doc);
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  sqlite3_stmt *st;
  cr_assert_eq(sqlite3_prepare_v2(h, "SELECT status, parts FROM assembly_runs WHERE id = ?", -1, &st, NULL), SQLITE_OK);
  sqlite3_bind_int64(st, 1, run);
  cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
  cr_assert_str_eq((const char *)sqlite3_column_text(st, 0), "found");
  cr_assert_eq(sqlite3_column_int(st, 1), 4);
  sqlite3_finalize(st);
  sqlite3_close(h);
  unlink(db);
  char side[64];
  snprintf(side, sizeof side, "%s-wal", db);
  unlink(side);
  snprintf(side, sizeof side, "%s-shm", db);
  unlink(side);
}

/* A found step's verdict is node-limited (default 2000 nodes, --mip-nodes):
 * the friction stack's last step needs about 23 000 (docs/assembly.md), so
 * it is undecided by default and strong with enough nodes, on any machine. */
Test(cli_assembly, assemble_step_verdicts_node_limited) {
  const char *want[2] = {"stable_undecided", "strong"};
  for (int k = 0; k < 2; k++) {
    const char *argv[] = {"complan", "assemble", bundled("friction_stack.json"), "--no-db", "--json",
                          k ? "--mip-nodes" : NULL, "1000000", NULL};
    json_t *doc = cpt_run_json(argv, 0);
    cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "found");
    json_t *steps = json_object_get(doc, "steps");
    cr_assert_eq(json_array_size(steps), 2);
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(steps, 0), "stability")), "strong");
    cr_assert_str_eq(json_string_value(json_object_get(json_array_get(steps, 1), "stability")), want[k]);
    json_decref(doc);
  }
}

Test(cli_assembly, assemble_none_names_blocked) {
  const char *argv[] = {"complan", "assemble", bundled("no_sequence.json"), "--no-db", "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "none");
  cr_assert_eq(json_array_size(json_object_get(doc, "sequence")), 0);
  json_t *bl = json_object_get(doc, "blocked");
  cr_assert_eq(json_array_size(bl), 2);
  cr_assert_str_eq(json_string_value(json_array_get(bl, 0)), "plank");
  cr_assert_str_eq(json_string_value(json_array_get(bl, 1)), "counterweight");
  json_decref(doc);
  // The arch: blocked is the whole arch.
  const char *argv2[] = {"complan", "assemble", bundled("arch.json"), "--no-db", "--json", "--directions", "20", NULL};
  doc = cpt_run_json(argv2, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "none");
  cr_assert_eq(json_array_size(json_object_get(doc, "blocked")), 3);
  json_decref(doc);
}

static void expect_bad(const char *const *argv, const char *needle) {
  char *out, *err;
  int rc = cpt_run(argv, &out, &err);
  cr_assert_eq(rc, 2, "exit %d, stderr: %s", rc, err);
  cr_assert_eq(out[0], '\0', "nothing on stdout: %s", out);
  cr_assert(strstr(err, needle), "stderr lacks '%s': %s", needle, err);
  free(out);
  free(err);
}

Test(cli_assembly, bad_input_exit_2) {
  const char *missing[] = {"complan", "stability", "/nonexistent/scene.json", "--json", NULL};
  expect_bad(missing, "/nonexistent/scene.json");
  char *bad = cpt_temp_file("{\"bodies\": [{\"name\": \"b\", \"mass\": -1, \"shape\": {\"type\": \"sphere\", \"radius\": 1}}]}", ".json");
  const char *a1[] = {"complan", "stability", bad, "--json", NULL};
  expect_bad(a1, "bodies[0].mass");
  const char *a2[] = {"complan", "assemble", bad, "--json", "--no-db", NULL};
  expect_bad(a2, "bodies[0].mass");
  char *broken = cpt_temp_file("{\"bodies\": [", ".json");
  const char *a3[] = {"complan", "assemble", broken, "--no-db", NULL};
  expect_bad(a3, "line");
  const char *a4[] = {"complan", "assemble", bundled("tower.json"), "--directions", "-1", NULL};
  expect_bad(a4, "--directions");
  const char *a5[] = {"complan", "stability", bundled("tower.json"), "--frobnicate", NULL};
  expect_bad(a5, "unknown option");
  const char *a6[] = {"complan", "stability", NULL};
  expect_bad(a6, "missing SCENE");
  const char *a7[] = {"complan", "assemble", bundled("tower.json"), "--db", "/nonexistent-dir/x.sqlite", "--json", NULL};
  expect_bad(a7, "/nonexistent-dir/x.sqlite");
  const char *a8[] = {"complan", "stability", bundled("tower.json"), "--node-limit", "-3", NULL};
  expect_bad(a8, "--node-limit");
  const char *a9[] = {"complan", "stability", bundled("tower.json"), "--node-limit", "many", NULL};
  expect_bad(a9, "--node-limit");
  const char *a10[] = {"complan", "assemble", bundled("tower.json"), "--no-db", "--mip-nodes", "0", NULL};
  expect_bad(a10, "--mip-nodes");
  const char *a11[] = {"complan", "assemble", bundled("tower.json"), "--no-db", "--mip-nodes", "2.5", NULL};
  expect_bad(a11, "--mip-nodes");
  unlink(bad);
  unlink(broken);
  free(bad);
  free(broken);
}

Test(cli_assembly, help) {
  const char *a[] = {"complan", "assemble", "--help", NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(a, &out, &err), 0);
  cr_assert(strstr(out, "--directions"));
  free(out);
  free(err);
  const char *b[] = {"complan", "stability", "--help", NULL};
  cr_assert_eq(cpt_run(b, &out, &err), 0);
  cr_assert(strstr(out, "stable_undecided"));
  free(out);
  free(err);
}

/* --verbose: GLPK's own text on stderr, stdout still one JSON document;
 * without it GLPK says nothing. */
Test(cli_assembly, verbose_glpk_text_on_stderr) {
  const char *cmds[2][7] = {
      {"complan", "stability", bundled("tower.json"), "--json", "--verbose", NULL},
      {"complan", "assemble", bundled("tower.json"), "--json", "--no-db", "--verbose", NULL}};
  for (int c = 0; c < 2; c++) {
    for (int verbose = 0; verbose < 2; verbose++) {
      const char *argv[7];
      memcpy(argv, cmds[c], sizeof argv);
      if (!verbose) argv[c ? 5 : 4] = NULL;
      char *out, *err;
      cr_assert_eq(cpt_run(argv, &out, &err), 0, "%s: %s", argv[1], err);
      json_error_t je;
      json_t *doc = json_loads(out, 0, &je);
      cr_assert_not_null(doc, "%s: stdout is not one JSON document: %s", argv[1], out);
      json_decref(doc);
      cr_assert_null(strstr(out, " obj = "));
      if (verbose)
        cr_assert(strstr(err, " obj = "), "%s --verbose: stderr lacks GLPK's text: %s",
                  argv[1], err);
      else
        cr_assert_null(strstr(err, " obj = "), "%s: GLPK spoke without --verbose: %s", argv[1], err);
      free(out);
      free(err);
    }
  }
}

/* assemble --html: the viewer page of the sequence; a page that cannot be
 * written is exit 2 naming the file, with nothing on stdout. */
Test(cli_assembly, assemble_html_page) {
  char *page = cpt_temp_file("", ".html");
  const char *argv[] = {"complan", "assemble", bundled("tower.json"), "--no-db", "--html", page, NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(argv, &out, &err), 0, "%s", err);
  size_t len;
  char *html = cpt_read_file(page, &len);
  cr_assert_not_null(html);
  cr_assert(strstr(html, "complan assemble"), "the page lacks its title");
  cr_assert(strstr(html, "block3"), "the page lacks the parts");
  cr_assert_gt(len, 100000); // three.js is inlined: the page stands alone
  free(html);
  free(out);
  free(err);
  unlink(page);
  free(page);
  const char *bad[] = {"complan", "assemble", bundled("tower.json"), "--no-db", "--html",
                       "/nonexistent-dir/page.html", NULL};
  expect_bad(bad, "/nonexistent-dir/page.html");
  const char *noval[] = {"complan", "assemble", bundled("tower.json"), "--no-db", "--html", NULL};
  expect_bad(noval, "--html");
}
