// The order search of an executed assembly sequence (planner/sequence/
// sequence.h, docs/assembly.md "Other orders"): when a stage cannot be
// done, the placed stages are taken back and other orders tried; an order
// whose subassembly has no equilibrium is never tried, let alone returned;
// a stage that knocks a placed part over is refused with the part named.
#include <criterion/criterion.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "planner/store/sequence.h"
#include "planner/store/store.h"
#include "synth.h"
#include "tests/support.h"

static json_t *assemble(const char *text, const char *db) {
  char *file = cpt_temp_file(text, ".json");
  const char *argv[] = {"complan", "assemble", file, "--db", db, "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  unlink(file);
  free(file);
  return doc;
}

static const char *part_of(json_t *doc, size_t k) {
  return json_string_value(json_object_get(json_array_get(json_object_get(doc, "stages"), k), "part"));
}

// A slab 12 cm deep (wider than the gripper opens: held only across x) and
// a cube 4 mm from its +x face. The order search places the lower cube
// first; then no grasp of the slab fits (a finger across x would go into
// the 4 mm gap). The cube's stage is taken back and the slab placed first;
// the cube then goes in held across y.
Test(sequence_order, stage_without_grasp_sends_the_search_to_another_order) {
  const char *task =
      "{\"assembly\": {\"bodies\": ["
      "{\"name\": \"table\", \"fixed\": true, \"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1], \"offset\": 0}},"
      "{\"name\": \"slab\", \"mass\": 0.08, \"shape\": {\"type\": \"box\", \"size\": [0.04, 0.12, 0.06]},"
      " \"position\": [0, 0, 0.03]},"
      "{\"name\": \"cube\", \"mass\": 0.1, \"shape\": {\"type\": \"box\", \"size\": [0.04, 0.04, 0.04]},"
      " \"position\": [0.044, 0, 0.02]}]},"
      " \"staging\": {\"slab\": {\"position\": [0.25, -0.12, 0.03]}, \"cube\": {\"position\": [0.25, 0.12, 0.02]}},"
      " \"robot\": {\"type\": \"parallel_gripper\", \"finger\": [0.01, 0.03, 0.024]}}";
  char *db = synth_temp_db();
  json_t *doc = assemble(task, db);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "solved", "%s",
                   json_string_value(json_object_get(doc, "message")));
  json_t *order = json_object_get(doc, "order");
  cr_assert_eq(json_array_size(order), 2);
  cr_assert_str_eq(json_string_value(json_array_get(order, 0)), "slab");
  cr_assert_str_eq(json_string_value(json_array_get(order, 1)), "cube");
  cr_assert_eq(json_integer_value(json_object_get(doc, "backtracks")), 1);
  // The cube's first stage (7 phases) was executed and taken back.
  cr_assert_eq(json_integer_value(json_object_get(doc, "plans")), 21);
  json_t *stages = json_object_get(doc, "stages");
  for (size_t k = 0; k < 2; k++) {
    json_t *s = json_array_get(stages, k);
    cr_assert(json_is_true(json_object_get(s, "certified")));
    cr_assert_str_eq(json_string_value(json_object_get(s, "stability")), "strong");
    cr_assert_eq(json_array_size(json_object_get(s, "plan_ids")), 7);
  }
  cr_assert_str_eq(json_string_value(json_object_get(json_object_get(json_array_get(stages, 0), "grasp"), "axis")), "x");
  cr_assert_str_eq(json_string_value(json_object_get(json_object_get(json_array_get(stages, 1), "grasp"), "axis")), "y");
  // The cube's x grasps are refused now that the slab stands next to it.
  json_t *cand = json_object_get(json_array_get(stages, 1), "candidates"), *c;
  size_t i;
  int refused = 0;
  json_array_foreach(cand, i, c) if (!strcmp(json_string_value(json_object_get(c, "axis")), "x")) {
    cr_assert(strstr(json_string_value(json_object_get(c, "reason")), "would meet a placed part"));
    refused++;
  }
  cr_assert_eq(refused, 2);
  cr_assert(json_is_true(json_object_get(doc, "replay_verified")));
  cr_assert_leq(json_number_value(json_object_get(json_object_get(doc, "final_error"), "position")), 0.002);
  // The stored sequence is the returned one, with its backtrack, and
  // replays whole.
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  cr_assert_eq(synth_query_int(h, "SELECT backtracks FROM assembly_sequences"), 1);
  sqlite3_close(h);
  synth_assert_sequence_replays(db, doc, 14);
  json_decref(doc);
  synth_remove_db(db);
}

// A base too wide for the gripper either way, a cube standing on it: the
// base cannot be placed, and the only other order starts with the cube
// alone in the air (no equilibrium): it is never tried, nothing is
// executed, and no sequence is returned.
Test(sequence_order, order_through_an_unstable_stage_never_tried) {
  const char *task =
      "{\"assembly\": {\"bodies\": ["
      "{\"name\": \"table\", \"fixed\": true, \"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1], \"offset\": 0}},"
      "{\"name\": \"base\", \"mass\": 0.1, \"shape\": {\"type\": \"box\", \"size\": [0.12, 0.12, 0.04]},"
      " \"position\": [0, 0, 0.02]},"
      "{\"name\": \"top\", \"mass\": 0.1, \"shape\": {\"type\": \"box\", \"size\": [0.04, 0.04, 0.04]},"
      " \"position\": [0, 0, 0.06]}]},"
      " \"staging\": {\"base\": {\"position\": [0.3, 0, 0.02]}, \"top\": {\"position\": [0, 0.3, 0.02]}},"
      " \"robot\": {\"type\": \"parallel_gripper\"}}";
  char *db = synth_temp_db();
  json_t *doc = assemble(task, db);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "none");
  cr_assert_eq(json_array_size(json_object_get(doc, "stages")), 1);
  cr_assert_str_eq(part_of(doc, 0), "base");
  cr_assert(json_is_false(json_object_get(json_array_get(json_object_get(doc, "stages"), 0), "certified")));
  cr_assert(strstr(json_string_value(json_object_get(doc, "message")), "stage 1 (base): no usable grasp of base"));
  cr_assert_eq(json_integer_value(json_object_get(doc, "plans")), 0);
  cr_assert_eq(json_integer_value(json_object_get(doc, "backtracks")), 0);
  cr_assert(json_is_null(json_object_get(doc, "final_error")));
  json_decref(doc);
  synth_remove_db(db);
}

/* A plank 16 x 3 x 1 cm (0.05 kg) balanced on a fixed ridge `ridge` wide
 * (m), and a 0.2 kg lintel resting on the plank's end and, 0.3 mm below
 * it (within the scene's touch tolerance), on two fixed pillars either
 * side of the plank. At the design poses the pillars can carry the lintel
 * alone, so the order plank, lintel passes the order search's equilibrium
 * check; in the simulation the lintel lands on the plank's end first. No
 * time limit a slow (sanitizer) run could reach: the outcome must not
 * depend on the machine's speed. */
static const char *seesaw_task(double ridge, char *buf, size_t n) {
  snprintf(buf, n,
           "{\"assembly\": {\"touch_tolerance\": 5e-4, \"bodies\": ["
           "{\"name\": \"table\", \"fixed\": true, \"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1], \"offset\": 0}},"
           "{\"name\": \"ridge\", \"fixed\": true, \"shape\": {\"type\": \"box\", \"size\": [%.17g, 0.04, 0.0403]},"
           " \"position\": [0, 0, 0.02015]},"
           "{\"name\": \"pillar1\", \"fixed\": true, \"shape\": {\"type\": \"box\", \"size\": [0.03, 0.015, 0.05]},"
           " \"position\": [0.065, 0.03, 0.025]},"
           "{\"name\": \"pillar2\", \"fixed\": true, \"shape\": {\"type\": \"box\", \"size\": [0.03, 0.015, 0.05]},"
           " \"position\": [0.065, -0.03, 0.025]},"
           "{\"name\": \"plank\", \"mass\": 0.05, \"shape\": {\"type\": \"box\", \"size\": [0.16, 0.03, 0.01]},"
           " \"position\": [0, 0, 0.0453]},"
           "{\"name\": \"lintel\", \"mass\": 0.2, \"shape\": {\"type\": \"box\", \"size\": [0.03, 0.09, 0.03]},"
           " \"position\": [0.065, 0, 0.0653]}]},"
           " \"staging\": {\"plank\": {\"position\": [0.3, -0.1, 0.005]}, \"lintel\": {\"position\": [0.3, 0.15, 0.015]}},"
           " \"robot\": {\"type\": \"parallel_gripper\", \"finger\": [0.01, 0.03, 0.024]},"
           " \"limits\": {\"seconds\": 1e5}}",
           ridge);
  return buf;
}

// A placement that knocks a neighbour over (issue 25): on a 4 mm ridge the
// plank is tipped by the lintel landing on its end (the pillars take the
// lintel, the plank is left tilted far beyond the 1 degree tolerance).
// Every grasp of the lintel is executed and refused with the knocked part
// named; the search takes the plank's stage back, and with no other order
// (the plank cannot go in under the lintel) no sequence is returned. The
// same task on a ridge 3 cm wide is built and certified: the refusal is
// the knock, not the task. (While the transport searched carriage steps
// for a +-1 mm box, where the second grasp's transport ended moved with
// rounding and this test had to accept either outcome; the transport
// servo ends it within 0.25 mm of the place, measured.)
Test(sequence_order, placement_that_knocks_a_neighbour_over_is_refused) {
  char task[4096];
  char *db = synth_temp_db();
  json_t *doc = assemble(seesaw_task(0.004, task, sizeof task), db);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "none");
  const char *msg = json_string_value(json_object_get(doc, "message"));
  cr_assert(strstr(msg, "stage 2 (lintel): placing lintel knocked plank"), "%s", msg);
  cr_assert_eq(json_array_size(json_object_get(doc, "stages")), 2);
  cr_assert_str_eq(part_of(doc, 0), "plank");
  cr_assert_str_eq(part_of(doc, 1), "lintel");
  json_t *s0 = json_array_get(json_object_get(doc, "stages"), 0), *s1 = json_array_get(json_object_get(doc, "stages"), 1);
  cr_assert(json_is_true(json_object_get(s0, "certified")));
  cr_assert(json_is_false(json_object_get(s1, "certified")));
  cr_assert_geq(json_integer_value(json_object_get(doc, "backtracks")), 1);
  cr_assert(json_is_null(json_object_get(doc, "final_error")));
  // Both usable grasps (across y, at the centre and near the top) were
  // executed, and each left the plank tilted beyond the tolerance.
  cr_assert_eq(json_integer_value(json_object_get(s1, "attempts")), 2);
  json_t *cand = json_object_get(s1, "candidates"), *c;
  size_t i;
  int knocked = 0;
  json_array_foreach(cand, i, c) {
    const char *why = json_string_value(json_object_get(c, "reason"));
    double mm, deg;
    if (!why || sscanf(why, "placing lintel knocked plank: it is %lf mm / %lf deg", &mm, &deg) != 2) continue;
    cr_assert_gt(deg, 1.0, "%s", why);
    knocked++;
  }
  cr_assert_eq(knocked, 2);
  json_decref(doc);
  synth_remove_db(db);
  db = synth_temp_db();
  doc = assemble(seesaw_task(0.03, task, sizeof task), db);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "solved", "%s",
                   json_string_value(json_object_get(doc, "message")));
  cr_assert_eq(json_integer_value(json_object_get(doc, "backtracks")), 0);
  cr_assert_leq(json_number_value(json_object_get(json_object_get(doc, "final_error"), "angle")), 3.14159265358979 / 180);
  json_decref(doc);
  synth_remove_db(db);
}

/* A new database made a version-2 one: the sequence tables dropped, sql
 * (the old ones) run, user_version 2. */
static char *version_2_db(const char *sql) {
  char *db = synth_temp_db();
  cp_store *st;
  char msg[512];
  cr_assert_eq(cp_store_open(db, 0, &st, msg, sizeof msg), CP_STORE_OK, "%s", msg);
  cp_store_close(st);
  sqlite3 *raw;
  cr_assert_eq(sqlite3_open(db, &raw), SQLITE_OK);
  cr_assert_eq(sqlite3_exec(raw, "DROP TABLE assembly_phases; DROP TABLE assembly_stages; DROP TABLE assembly_sequences;",
                            NULL, NULL, NULL), SQLITE_OK);
  cr_assert_eq(sqlite3_exec(raw, sql, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(raw));
  cr_assert_eq(sqlite3_exec(raw, "PRAGMA user_version = 2;", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(raw);
  return db;
}

// backtracks is a column of assembly_sequences; a table written by an
// older complan (a schema-version-2 file, without it) gains the column in
// the migration to version 3, its earlier rows NULL, and the sequences stay
// readable.
Test(sequence_order, backtracks_stored_and_an_older_table_gains_the_column) {
  char *db = version_2_db("CREATE TABLE assembly_sequences (id INTEGER PRIMARY KEY, created TEXT NOT NULL DEFAULT 'x',"
                            " task TEXT NOT NULL, status TEXT NOT NULL, parts INTEGER NOT NULL, part_order TEXT NOT NULL,"
                            " final_position_error REAL, final_angle_error REAL, seconds REAL NOT NULL,"
                            " lcp_solves INTEGER NOT NULL, plans INTEGER NOT NULL, message TEXT);"
                            "INSERT INTO assembly_sequences (task, status, parts, part_order, seconds, lcp_solves, plans)"
                            " VALUES ('old.json', 'none', 1, '[]', 0, 0, 0);");
  cp_store *st;
  char msg[512];
  cr_assert_eq(cp_store_open(db, 0, &st, msg, sizeof msg), CP_STORE_OK, "%s", msg);
  cp_store_sequence_row row = {.task = "new.json", .status = "solved", .parts = 1, .order = "[\"a\"]",
                               .seconds = 1, .lcp_solves = 2, .plans = 7, .backtracks = 3};
  // no plans behind it: assembly_phases refers to stored plans
  cp_store_stage_row stage = {.part = "a", .certified = 1, .grasp = "{}", .plan_ids = "[]", .stability = "strong"};
  int64_t id = 0;
  cp_error err;
  cr_assert_eq(cp_store_sequence(st, &row, &stage, 1, &id, &err), 0, "%s", err.msg);
  cr_assert_eq(id, 2);
  // A second write finds the column there.
  row.backtracks = 0;
  cr_assert_eq(cp_store_sequence(st, &row, &stage, 1, &id, &err), 0, "%s", err.msg);
  sqlite3 *h = cp_store_sqlite(st);
  cr_assert_eq(synth_query_int(h, "SELECT count(*) FROM assembly_sequences WHERE id = 1 AND backtracks IS NULL"), 1);
  cr_assert_eq(synth_query_int(h, "SELECT backtracks FROM assembly_sequences WHERE id = 2"), 3);
  cr_assert_eq(synth_query_int(h, "SELECT backtracks FROM assembly_sequences WHERE id = 3"), 0);
  cp_store_sequence_info info;
  cr_assert_eq(cp_store_sequence_read(st, 2, &info, &err), 0, "%s", err.msg);
  cr_assert_str_eq(info.status, "solved");
  cr_assert_eq(info.n_stages, 1);
  cp_store_sequence_info_free(&info);
  cp_store_close(st);
  synth_remove_db(db);
}

// The migration to version 3 is one transaction: a version-2 file on which
// it fails part way (here a table assembly_phases of its own, which the
// backfill cannot fill, after backtracks was added) is left as it was:
// version 2, no column added, the same bytes.
Test(sequence_order, failed_migration_leaves_the_file_as_it_was) {
  char *db = version_2_db("CREATE TABLE assembly_sequences (id INTEGER PRIMARY KEY, task TEXT, status TEXT,"
                            " parts INTEGER, part_order TEXT, final_position_error REAL, final_angle_error REAL,"
                            " seconds REAL, lcp_solves INTEGER, plans INTEGER, message TEXT);"
                            "CREATE TABLE assembly_stages (sequence_id INTEGER, stage INTEGER, part TEXT,"
                            " plan_ids TEXT, PRIMARY KEY (sequence_id, stage));"
                            "INSERT INTO assembly_sequences (task) VALUES ('old.json');"
                            "INSERT INTO assembly_stages VALUES (1, 0, 'a', '[]');"
                            "CREATE TABLE assembly_phases (x);");
  cp_store *st;
  char msg[512];
  sqlite3 *raw;
  size_t n0, n1;
  char *before = cpt_read_file(db, &n0);
  cr_assert_neq(cp_store_open(db, 0, &st, msg, sizeof msg), CP_STORE_OK);
  cr_assert(strstr(msg, "cannot migrate the database from schema version 2") && strstr(msg, db), "%s", msg);
  char *after = cpt_read_file(db, &n1);
  cr_assert(n0 == n1 && !memcmp(before, after, n0), "the file changed");
  cr_assert_eq(sqlite3_open(db, &raw), SQLITE_OK);
  cr_assert_eq(synth_query_int(raw, "PRAGMA user_version"), 2);
  cr_assert_eq(synth_query_int(raw, "SELECT count(*) FROM pragma_table_info('assembly_sequences')"
                                    " WHERE name = 'backtracks'"), 0);
  sqlite3_close(raw);
  free(before);
  free(after);
  synth_remove_db(db);
}
