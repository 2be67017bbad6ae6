// A stored assembly sequence replayed whole (planner/replay/sequence_replay.h,
// `complan replay --sequence ID`, docs/assembly.md "Replaying a sequence"):
// the bundled tower's 21 phase plans re-simulated bitwise and chained, the
// figures checked against the database's own plan rows; a tampered start
// state caught by the chain check alone; the page of the whole sequence
// (every stage's verdict in its notes, the parts at their design poses in
// the last frame); bad requests exit 2 with nothing written.
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "planner/replay/sequence_replay.h"
#include "synth.h"
#include "tests/support.h"

static char *temp_path(const char *suffix) {
  char *p = malloc(64);
  snprintf(p, 64, "/tmp/cp_seqr_%d_XXXXXX", (int)getpid());
  int fd = mkstemp(p);
  close(fd);
  unlink(p);
  strcat(p, suffix);
  return p;
}

/* The bundled tower built into a fresh database (with html: and its page
 * written by `assemble --html`); returns the database. */
static char *tower_db_page(long long *sequence_id, const char *html) {
  char task[4096];
  const char *root = getenv("CP_SOURCE_ROOT");
  snprintf(task, sizeof task, "%s/planner/tasks/assembly/tower3.json", root ? root : ".");
  char *db = temp_path(".sqlite");
  const char *argv[] = {"complan", "assemble", task, "--db", db, "--json", html ? "--html" : NULL, html, NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "solved");
  if (html) cr_assert_str_eq(json_string_value(json_object_get(doc, "html")), html);
  else cr_assert(json_is_null(json_object_get(doc, "html")));
  *sequence_id = json_integer_value(json_object_get(doc, "sequence_id"));
  cr_assert_gt(*sequence_id, 0);
  json_decref(doc);
  return db;
}

static char *tower_db(long long *sequence_id) { return tower_db_page(sequence_id, NULL); }

/* One number from the database. */
static double scalar(const char *db, const char *sql) {
  sqlite3 *h;
  sqlite3_stmt *q;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &q, NULL), SQLITE_OK, "%s", sqlite3_errmsg(h));
  cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
  const double v = sqlite3_column_double(q, 0);
  sqlite3_finalize(q);
  sqlite3_close(h);
  return v;
}

Test(sequence_replay, tower_replayed_whole_bitwise_and_chained) {
  long long id;
  char *db = tower_db(&id);
  char sid[32];
  snprintf(sid, sizeof sid, "%lld", id);
  const char *argv[] = {"complan", "replay", "--db", db, "--sequence", sid, "--verify", "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert_eq(json_integer_value(json_object_get(doc, "sequence")), id);
  cr_assert_eq(json_integer_value(json_object_get(doc, "stages")), 3);
  cr_assert_eq(json_integer_value(json_object_get(doc, "plans")), 21);
  cr_assert(json_is_true(json_object_get(doc, "verified")));
  cr_assert(json_is_true(json_object_get(doc, "chained")));
  cr_assert(json_is_null(json_object_get(doc, "mismatch")));
  cr_assert_eq(json_number_value(json_object_get(doc, "deviation")), 0.0);
  // Independently, from the plans' own rows: every action is 0.2 s of 2 ms
  // steps, and the durations add up.
  const double actions = scalar(db, "SELECT sum(length) FROM plans"), dur = scalar(db, "SELECT sum(duration) FROM plans");
  cr_assert_eq(scalar(db, "SELECT count(*) FROM plans"), 21);
  cr_assert_eq(json_integer_value(json_object_get(doc, "steps")), (long long)(100 * actions));
  cr_assert_float_eq(json_number_value(json_object_get(doc, "duration")), dur, 1e-9);
  json_decref(doc);
  // The library call says the same, and the latest sequence is the default.
  cp_store *st;
  char msg[256];
  cr_assert_eq(cp_store_open(db, 1, &st, msg, sizeof msg), CP_STORE_OK, "%s", msg);
  cp_sequence_replay_options o = cp_sequence_replay_defaults();
  o.verify = 1;
  cp_sequence_replay_result res;
  cp_error err;
  cr_assert_eq(cp_sequence_replay(st, 0, &o, &res, &err), CP_REPLAY_OK, "%s %s", err.msg, res.message);
  cr_assert_eq(res.sequence_id, id);
  cr_assert_eq(res.plans, 21);
  cr_assert_eq(res.verified, 1);
  cr_assert_eq(res.chained, 1);
  cr_assert_eq(res.frames, 0);
  cp_store_close(st);
  synth_remove_db(db);
}

// A start state moved by one part in 10^9: the plans themselves still replay
// (each from its own stored start), but the sequence no longer chains.
Test(sequence_replay, tampered_start_breaks_the_chain) {
  long long id;
  char *db = tower_db(&id);
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  // The third stage's grasp phase: its start holds block0 and block1 placed.
  long long plan = 0, search = 0;
  sqlite3_stmt *q;
  cr_assert_eq(sqlite3_prepare_v2(h, "SELECT json_extract(plan_ids, '$[1]') FROM assembly_stages WHERE stage = 2",
                                  -1, &q, NULL), SQLITE_OK);
  cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
  plan = sqlite3_column_int64(q, 0);
  sqlite3_finalize(q);
  cr_assert_eq(sqlite3_prepare_v2(h, "SELECT search_id FROM plans WHERE id = ?", -1, &q, NULL), SQLITE_OK);
  sqlite3_bind_int64(q, 1, plan);
  cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
  search = sqlite3_column_int64(q, 0);
  sqlite3_finalize(q);
  cr_assert_eq(sqlite3_prepare_v2(h, "SELECT state FROM nodes WHERE search_id = ? AND parent IS NULL", -1, &q, NULL),
               SQLITE_OK);
  sqlite3_bind_int64(q, 1, search);
  cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
  const int bytes = sqlite3_column_bytes(q, 0);
  double *x = malloc((size_t)bytes);
  memcpy(x, sqlite3_column_blob(q, 0), (size_t)bytes);
  sqlite3_finalize(q);
  x[0] *= 1 + 1e-9; // block0's x (the first free body: ground is fixed)
  cr_assert_eq(sqlite3_prepare_v2(h, "UPDATE nodes SET state = ? WHERE search_id = ? AND parent IS NULL", -1, &q,
                                  NULL), SQLITE_OK);
  sqlite3_bind_blob(q, 1, x, bytes, SQLITE_TRANSIENT);
  sqlite3_bind_int64(q, 2, search);
  cr_assert_eq(sqlite3_step(q), SQLITE_DONE);
  sqlite3_finalize(q);
  sqlite3_close(h);
  free(x);
  char sid[32], *out, *err;
  snprintf(sid, sizeof sid, "%lld", id);
  const char *argv[] = {"complan", "replay", "--db", db, "--sequence", sid, "--json", NULL};
  cr_assert_eq(cpt_run(argv, &out, &err), 1, "%s%s", out, err);
  json_t *doc = json_loads(out, 0, NULL);
  cr_assert(doc, "%s", out);
  cr_assert(json_is_false(json_object_get(doc, "chained")));
  cr_assert(json_is_null(json_object_get(doc, "verified"))); // not asked
  char expect[128];
  snprintf(expect, sizeof expect, "plan %lld: body \"block0\" does not start where", plan);
  const char *m = json_string_value(json_object_get(doc, "mismatch"));
  cr_assert(m && strstr(m, expect), "expected \"%s\" in %s", expect, m ? m : "(null)");
  cr_assert(strstr(err, expect), "%s", err);
  json_decref(doc);
  free(out);
  free(err);
  synth_remove_db(db);
}

Test(sequence_replay, page_shows_every_stage_and_the_built_tower) {
  long long id;
  char *first = temp_path(".html");
  char *db = tower_db_page(&id, first);
  char *page = temp_path(".html"), sid[32];
  snprintf(sid, sizeof sid, "%lld", id);
  const char *argv[] = {"complan", "replay", "--db", db, "--sequence", sid, "--html", page, "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "html")), page);
  json_decref(doc);
  json_t *d = cpt_page_data(page);
  // One note per phase; each stage's verdict from its release on.
  json_t *notes = json_object_get(d, "notes");
  cr_assert_eq(json_array_size(notes), 21);
  int verdicts = 0;
  size_t i;
  json_t *n;
  json_array_foreach(notes, i, n) {
    const char *t = json_string_value(json_array_get(n, 1));
    cr_assert(strstr(t, i < 7 ? "stage 1 of 3: block0" : i < 14 ? "stage 2 of 3: block1" : "stage 3 of 3: block2"),
              "%s", t);
    verdicts += strstr(t, "certified strong") != NULL;
    if (i % 7 == 5) cr_assert(strstr(t, "release -- certified strong, "), "%s", t);
  }
  cr_assert_eq(verdicts, 6); // release and retreat of each stage
  // The last frame: the blocks stacked at their design poses (to 2 mm),
  // read from the page's own pose table.
  json_t *bodies = json_object_get(d, "bodies"), *poses = json_object_get(d, "poses");
  json_t *last = json_array_get(poses, json_array_size(poses) - 1);
  int blocks = 0, fingers = 0;
  json_array_foreach(bodies, i, n) {
    const char *name = json_string_value(json_object_get(n, "name"));
    fingers += !strncmp(name, "gripper_", 8);
    if (strncmp(name, "block", 5)) continue;
    const int k = name[5] - '0';
    const size_t m = (size_t)json_integer_value(json_object_get(n, "moving"));
    const double x = json_number_value(json_array_get(last, 7 * m)), y = json_number_value(json_array_get(last, 7 * m + 1)),
                 z = json_number_value(json_array_get(last, 7 * m + 2));
    cr_assert_leq(hypot(x, y), 0.002, "%s at %g %g", name, x, y);
    cr_assert_float_eq(z, 0.02 + 0.04 * k, 0.002, "%s at z %g", name, z);
    blocks++;
  }
  cr_assert_eq(blocks, 3);
  cr_assert_eq(fingers, 2); // one finger size in this task
  cr_assert_gt(json_array_size(poses), 100);
  // `assemble --html` drew the same frames.
  json_t *a = cpt_page_data(first);
  cr_assert(json_equal(json_object_get(a, "poses"), poses));
  cr_assert(json_equal(json_object_get(a, "notes"), notes));
  json_decref(a);
  json_decref(d);
  unlink(page);
  unlink(first);
  free(first);
  // A page that cannot be written: exit 2 naming it, nothing on stdout.
  const char *bad[] = {"complan", "replay", "--db", db, "--sequence", sid, "--html", "/nonexistent/dir/p.html", NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(bad, &out, &err), 2, "%s%s", out, err);
  cr_assert_str_eq(out, "");
  cr_assert(strstr(err, "/nonexistent/dir/p.html"), "%s", err);
  free(out);
  free(err);
  free(page);
  synth_remove_db(db);
}

static void refused(const char *const *argv, const char *expect) {
  char *out, *err;
  cr_assert_eq(cpt_run(argv, &out, &err), 2, "%s%s", out, err);
  cr_assert_str_eq(out, "");
  cr_assert(strstr(err, expect), "expected \"%s\" in: %s", expect, err);
  free(out);
  free(err);
}

Test(sequence_replay, bad_requests_exit_2) {
  long long id;
  char *db = tower_db(&id);
  const char *none[] = {"complan", "replay", "--db", db, "--sequence", "99", NULL};
  refused(none, "no assembly sequence 99");
  const char *mixed[] = {"complan", "replay", "--db", db, "--sequence", "1", "--plan", "1", NULL};
  refused(mixed, "--sequence goes with");
  synth_remove_db(db);
  // A sequence without a certified stage replays (nothing) but has nothing
  // to draw.
  char task[4096];
  const char *root = getenv("CP_SOURCE_ROOT");
  snprintf(task, sizeof task,
           "{\"assembly\": {\"bodies\": [{\"name\": \"t\", \"fixed\": true, \"shape\": {\"type\": \"plane\","
           " \"normal\": [0, 0, 1], \"offset\": 0}}, {\"name\": \"wide\", \"mass\": 0.1, \"shape\": {\"type\": \"box\","
           " \"size\": [0.2, 0.2, 0.04]}, \"position\": [0, 0, 0.02]}]}, \"staging\": {\"wide\": {\"position\":"
           " [0.4, 0, 0.02]}}, \"robot\": {\"type\": \"parallel_gripper\"}}");
  char *file = cpt_temp_file(task, ".json");
  db = temp_path(".sqlite");
  const char *none_task[] = {"complan", "assemble", file, "--db", db, "--json", NULL};
  json_t *doc = cpt_run_json(none_task, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "none");
  json_decref(doc);
  const char *plain[] = {"complan", "replay", "--db", db, "--sequence", "1", "--json", NULL};
  doc = cpt_run_json(plain, 0);
  cr_assert_eq(json_integer_value(json_object_get(doc, "plans")), 0);
  json_decref(doc);
  const char *drawn[] = {"complan", "replay", "--db", db, "--sequence", "1", "--html", "/tmp/cp_never.html", NULL};
  refused(drawn, "sequence 1 has no certified stage: nothing to draw");
  cr_assert_neq(access("/tmp/cp_never.html", F_OK), 0);
  unlink(file);
  free(file);
  synth_remove_db(db);
  // A planner database without sequences.
  char scene[4096];
  snprintf(scene, sizeof scene, "%s/models/scenes/tower.json", root ? root : ".");
  db = temp_path(".sqlite");
  const char *assemble[] = {"complan", "assemble", scene, "--db", db, NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(assemble, &out, &err), 0, "%s", err);
  free(out);
  free(err);
  const char *empty[] = {"complan", "replay", "--db", db, "--sequence", "1", NULL};
  refused(empty, "no assembly sequence is stored");
  synth_remove_db(db);
  // `assemble TASK --html` into a folder that does not exist: refused
  // before anything is planned, no database made.
  snprintf(task, sizeof task, "%s/planner/tasks/assembly/tower3.json", root ? root : ".");
  db = temp_path(".sqlite");
  const char *page[] = {"complan", "assemble", task, "--db", db, "--html", "/nonexistent/dir/p.html", NULL};
  refused(page, "/nonexistent/dir/p.html");
  cr_assert_neq(access(db, F_OK), 0, "nothing written");
  synth_remove_db(db);
}

/* The rows of assembly_phases as text, in plan order. */
static char *phase_rows(const char *db) {
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  char *t = synth_rows_text(h, "SELECT plan_id, sequence_id, stage, step, part, move, phase FROM assembly_phases"
                               " ORDER BY plan_id");
  sqlite3_close(h);
  return t;
}

/* Every table's row count, as text. */
static char *table_counts(const char *db) {
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  char *t = synth_rows_text(h, "SELECT (SELECT count(*) FROM tasks), (SELECT count(*) FROM blobs),"
                               " (SELECT count(*) FROM searches), (SELECT count(*) FROM nodes),"
                               " (SELECT count(*) FROM plans), (SELECT count(*) FROM assembly_sequences),"
                               " (SELECT count(*) FROM assembly_stages), (SELECT sum(length(state)) FROM nodes)");
  sqlite3_close(h);
  return t;
}

static void exec_sql(const char *db, const char *sql) {
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  cr_assert_eq(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(h));
  sqlite3_close(h);
}

/* `replay --sequence --json`'s phases, checked against the tower's: three
 * stages of seven phases, one move each, the plans in stored order. */
static void assert_tower_phases(const char *db, long long id) {
  static const char *const names[7] = {"approach", "grasp", "lift", "transport", "place", "release", "retreat"};
  char sid[32];
  snprintf(sid, sizeof sid, "%lld", id);
  const char *argv[] = {"complan", "replay", "--db", db, "--sequence", sid, "--verify", "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert(json_is_true(json_object_get(doc, "verified")));
  cr_assert(json_is_true(json_object_get(doc, "chained")));
  json_t *ph = json_object_get(doc, "phases");
  cr_assert_eq(json_array_size(ph), 21);
  for (size_t i = 0; i < 21; i++) {
    json_t *p = json_array_get(ph, i);
    cr_assert_str_eq(json_string_value(json_object_get(p, "phase")), names[i % 7]);
    cr_assert_eq(json_integer_value(json_object_get(p, "stage")), (json_int_t)(i / 7));
    cr_assert_eq(json_integer_value(json_object_get(p, "move")), 0);
    char part[8];
    snprintf(part, sizeof part, "block%d", (int)(i / 7));
    cr_assert_str_eq(json_string_value(json_object_get(p, "part")), part);
    char sql[160];
    snprintf(sql, sizeof sql,
             "SELECT json_extract(plan_ids, '$[%d]') FROM assembly_stages WHERE sequence_id = %lld AND stage = %d",
             (int)(i % 7), id, (int)(i / 7));
    cr_assert_eq(json_integer_value(json_object_get(p, "plan")), (json_int_t)scalar(db, sql));
  }
  json_decref(doc);
}

// Each phase plan is stored with its stage, part, move and phase
// (assembly_phases), and `replay --sequence --json` lists them.
Test(sequence_replay, phases_stored_and_listed) {
  long long id;
  char *db = tower_db(&id);
  cr_assert_eq(scalar(db, "SELECT count(*) FROM assembly_phases"), 21);
  cr_assert_eq(scalar(db, "SELECT count(*) FROM assembly_phases a JOIN plans p ON p.id = a.plan_id"), 21);
  assert_tower_phases(db, id);
  synth_remove_db(db);
}

// A database as complan wrote it at schema version 2 (made here from a
// current one: assembly_phases dropped, assembly_sequences without the
// column backtracks an older complan did not write, user_version 2) is read
// as it is by replay, the phases taken from the plans' task names; opened
// for writing it is migrated in one transaction to version 3 with the same
// phase rows and nothing else changed.
Test(sequence_replay, version_2_database_read_then_migrated) {
  long long id;
  char *db = tower_db(&id);
  char *rows = phase_rows(db), *counts = table_counts(db);
  exec_sql(db, "DROP TABLE assembly_phases; ALTER TABLE assembly_sequences DROP COLUMN backtracks;"
               " PRAGMA user_version = 2;");
  cr_assert_eq(scalar(db, "SELECT count(*) FROM sqlite_master WHERE name = 'assembly_phases'"), 0);
  assert_tower_phases(db, id);
  cr_assert_eq(scalar(db, "PRAGMA user_version"), 2, "read-only: not migrated");
  cp_store *st;
  char msg[512];
  cr_assert_eq(cp_store_open(db, 0, &st, msg, sizeof msg), CP_STORE_OK, "%s", msg);
  cp_store_close(st);
  cr_assert_eq(scalar(db, "PRAGMA user_version"), CP_STORE_SCHEMA_VERSION);
  char *rows2 = phase_rows(db), *counts2 = table_counts(db);
  cr_assert_str_eq(rows2, rows);
  cr_assert_str_eq(counts2, counts);
  cr_assert_eq(scalar(db, "SELECT count(*) FROM assembly_sequences WHERE backtracks IS NULL"), 1);
  cr_assert_eq(scalar(db, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
  assert_tower_phases(db, id);
  free(rows);
  free(rows2);
  free(counts);
  free(counts2);
  synth_remove_db(db);
}

// A database of a newer schema version than this complan knows is refused
// by every command, exit 2 naming the file and the version, and left as it
// was.
Test(sequence_replay, newer_schema_refused_untouched) {
  long long id;
  char *db = tower_db(&id);
  char sql[64];
  snprintf(sql, sizeof sql, "PRAGMA user_version = %d;", CP_STORE_SCHEMA_VERSION + 1);
  exec_sql(db, sql);
  size_t n0, n1;
  char *before = cpt_read_file(db, &n0), task[4096], version[64];
  const char *root = getenv("CP_SOURCE_ROOT");
  snprintf(task, sizeof task, "%s/planner/tasks/assembly/tower3.json", root ? root : ".");
  snprintf(version, sizeof version, "schema version %d", CP_STORE_SCHEMA_VERSION + 1);
  const char *replay[] = {"complan", "replay", "--db", db, "--sequence", "1", "--json", NULL};
  const char *assemble[] = {"complan", "assemble", task, "--db", db, "--json", NULL};
  refused(replay, version);
  refused(assemble, version);
  refused(replay, db);
  char *after = cpt_read_file(db, &n1);
  cr_assert(n0 == n1 && !memcmp(before, after, n0), "the file changed");
  free(before);
  free(after);
  synth_remove_db(db);
}
