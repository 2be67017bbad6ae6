// The transport servo makes executed assembly sequences robust to changes
// of the physics by rounding (planner/sequence/sequence.c, docs/assembly.md
// "Transport"): every bundled assembly task small enough for a test, with
// its parts' masses or the gripper's friction changed by 1e-9 relative, is
// still solved with the same order, every stage certified at its first
// grasp, and each transport a straight carriage line (its search expands
// one node per carriage move, no search over step combinations).
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "synth.h"
#include "tests/support.h"

/* The bundled task NAME with the scene inlined, every part's mass times
 * (1 + dm) and the gripper's friction times (1 + dmu); a temporary file. */
static char *perturbed(const char *name, double dm, double dmu) {
  const char *root = getenv("CP_SOURCE_ROOT");
  char path[1024];
  json_error_t je;
  snprintf(path, sizeof path, "%s/planner/tasks/assembly/%s.json", root ? root : ".", name);
  json_t *t = json_load_file(path, 0, &je);
  cr_assert(t, "%s: %s", path, je.text);
  snprintf(path, sizeof path, "%s/planner/tasks/assembly/%s", root ? root : ".",
           json_string_value(json_object_get(t, "assembly")));
  json_t *scene = json_load_file(path, 0, &je), *b;
  cr_assert(scene, "%s: %s", path, je.text);
  size_t i;
  json_array_foreach(json_object_get(scene, "bodies"), i, b) {
    json_t *m = json_object_get(b, "mass");
    if (m) json_object_set_new(b, "mass", json_real(json_number_value(m) * (1 + dm)));
  }
  json_object_set_new(t, "assembly", scene);
  json_t *robot = json_object_get(t, "robot"), *mu = json_object_get(robot, "mu");
  json_object_set_new(robot, "mu", json_real((mu ? json_number_value(mu) : 0.8) * (1 + dmu)));
  char *text = json_dumps(t, JSON_COMPACT | JSON_REAL_PRECISION(17));
  json_decref(t);
  char *file = cpt_temp_file(text, ".json");
  free(text);
  return file;
}

/* Every transport search of the sequence in db: solved, and expanding at
 * most one node per 1 cm carriage move of the longest way on the table
 * (0.4 m) plus one. Returns how many there were. */
static int check_transports(const char *db) {
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  sqlite3_stmt *q;
  cr_assert_eq(sqlite3_prepare_v2(h,
                                  "SELECT json_extract(t.text, '$.name'), s.status, s.expansions FROM searches s"
                                  " JOIN tasks t ON t.id = s.task_id WHERE json_extract(t.text, '$.name') LIKE"
                                  " '% transport'",
                                  -1, &q, NULL),
               SQLITE_OK, "%s", sqlite3_errmsg(h));
  int n = 0;
  while (sqlite3_step(q) == SQLITE_ROW) {
    n++;
    cr_assert_str_eq((const char *)sqlite3_column_text(q, 1), "solved");
    cr_assert_leq(sqlite3_column_int(q, 2), 41, "%s expanded %d nodes", sqlite3_column_text(q, 0),
                  sqlite3_column_int(q, 2));
  }
  sqlite3_finalize(q);
  sqlite3_close(h);
  return n;
}

static void solved_as_designed(const char *name, double dm, double dmu, const char *const *order, int n_parts,
                               int plans) {
  char *file = perturbed(name, dm, dmu), *db = synth_temp_db();
  const char *argv[] = {"complan", "assemble", file, "--db", db, "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "solved", "%s (dm %g, dmu %g): %s", name, dm,
                   dmu, json_string_value(json_object_get(doc, "message")));
  json_t *o = json_object_get(doc, "order"), *stages = json_object_get(doc, "stages"), *s;
  cr_assert_eq((int)json_array_size(o), n_parts);
  for (int k = 0; k < n_parts; k++) cr_assert_str_eq(json_string_value(json_array_get(o, (size_t)k)), order[k]);
  size_t i;
  json_array_foreach(stages, i, s) {
    cr_assert(json_is_true(json_object_get(s, "certified")));
    cr_assert_str_eq(json_string_value(json_object_get(s, "stability")), "strong", "%s stage %zu", name, i);
  }
  // No attempt failed: plans are seven per move (eight with a turn).
  cr_assert_eq(json_integer_value(json_object_get(doc, "plans")), plans, "%s", name);
  cr_assert_eq(json_integer_value(json_object_get(doc, "backtracks")), 0);
  json_t *fe = json_object_get(doc, "final_error");
  cr_assert_leq(json_number_value(json_object_get(fe, "position")), 0.002);
  cr_assert_leq(json_number_value(json_object_get(fe, "angle")), 3.14159265358979 / 180);
  cr_assert_eq(check_transports(db), plans / 7);
  json_decref(doc);
  unlink(file);
  free(file);
  synth_remove_db(db);
}

static const char *const tower[] = {"block0", "block1", "block2"}, *const peg[] = {"peg"},
                         *const bar[] = {"bar"};

Test(sequence_perturb, heavier_parts_same_sequences) {
  solved_as_designed("tower3", 1e-9, 0, tower, 3, 21);
  solved_as_designed("peg_hole", 1e-9, 0, peg, 1, 7);
  solved_as_designed("bar_turn", 1e-9, 0, bar, 1, 8);
  solved_as_designed("bar_regrasp", 1e-9, 0, bar, 1, 16);
}

Test(sequence_perturb, less_friction_same_sequences) {
  solved_as_designed("tower3", 0, -1e-9, tower, 3, 21);
  solved_as_designed("peg_hole", 0, -1e-9, peg, 1, 7);
  solved_as_designed("bar_turn", 0, -1e-9, bar, 1, 8);
  solved_as_designed("bar_regrasp", 0, -1e-9, bar, 1, 16);
}
