/* complan plan / complan plans on the bundled tasks: each planner solves
 * the push task, the plan re-simulates bitwise from what the database
 * stores, rejected outcomes are stored with their reason, a search killed
 * with SIGKILL resumes with nothing lost or duplicated, the benchmark
 * tables, and bad task files and databases (exit 2 with the place). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "planner/search/task.h"
#include "planner/sim/world.h"
#include "tests/support.h"
#include "synth.h"

static const char *task_path(const char *name) {
  static char buf[1024];
  snprintf(buf, sizeof buf, "%s/planner/tasks/%s", getenv("CP_SOURCE_ROOT"),
           name);
  return buf;
}



static void assert_integrity(sqlite3 *db) {
  sqlite3_stmt *q;
  sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &q, NULL);
  cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
  cr_assert_str_eq((const char *)sqlite3_column_text(q, 0), "ok");
  sqlite3_finalize(q);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
}

static const char *jstr(json_t *d, const char *k) {
  return json_string_value(json_object_get(d, k));
}
static long long jint(json_t *d, const char *k) {
  return json_integer_value(json_object_get(d, k));
}

/* A copy of a bundled task in a temporary file, with its scene path made
 * absolute and `from` replaced by `to` (malloc'd path). */
static char *temp_task(const char *name, const char *from, const char *to) {
  char *task = cpt_read_file(task_path(name), NULL);
  char *sp = strstr(task, "\"../../models/scenes/");
  cr_assert(sp);
  char text[8192];
  snprintf(text, sizeof text, "%.*s\"%s/%s", (int)(sp - task), task,
           getenv("CP_SOURCE_ROOT"), sp + strlen("\"../../"));
  free(task);
  char *at = strstr(text, from);
  cr_assert(at, "no '%s' in %s", from, name);
  char out[8192];
  snprintf(out, sizeof out, "%.*s%s%s", (int)(at - text), text, to,
           at + strlen(from));
  return cpt_temp_file(out, ".json");
}

static void solves_push_with(const char *method, const char *limit_flag,
                             const char *limit) {
  char *db = synth_temp_db();
  const char *argv[] = {"complan", "plan", task_path("push.json"), "--db", db,
                        "--method", method, "--seed", "3", limit_flag, limit,
                        /* no wall-time limit: sanitizer builds are slow */
                        "--max-seconds", "3600", "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert_str_eq(jstr(doc, "status"), "solved", "%s", method);
  cr_assert_str_eq(jstr(doc, "planner"), method);
  cr_assert(jint(doc, "length") >= 1);
  /* The plan's last node is in the goal region: box within 2 cm of
   * (0.15, 0, 0.05). */
  sqlite3 *s;
  sqlite3_open(db, &s);
  assert_integrity(s);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM nodes"), jint(doc, "nodes"));
  sqlite3_stmt *q;
  sqlite3_prepare_v2(s, "SELECT n.state FROM nodes n JOIN plans p ON"
                        " p.search_id = n.search_id AND p.node = n.id", -1, &q,
                     NULL);
  cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
  const double *x = sqlite3_column_blob(q, 0);
  double d = hypot(hypot(x[0] - 0.15, x[1]), x[2] - 0.05);
  cr_assert(d <= 0.02, "box at (%g, %g, %g)", x[0], x[1], x[2]);
  sqlite3_finalize(q);
  sqlite3_close(s);
  json_decref(doc);
  synth_remove_db(db);
}

Test(cli_plan, astar_solves_the_push) { solves_push_with("astar", "--max-nodes", "5000"); }
Test(cli_plan, rrt_solves_the_push) { solves_push_with("rrt", "--max-nodes", "5000"); }
Test(cli_plan, sst_solves_the_push) { solves_push_with("sst", "--max-nodes", "400"); }

/* COMPLAN_CHECKPOINT_PAGES (docs/database.md): the WAL checkpointed by the
 * store's helper thread every 2 pages, or inside the commits (0), gives
 * the same rows and plan, and the closed file holds them alone (no WAL
 * left beside it). */
static char *push_with_checkpoints(const char *pages) {
  char *db = synth_temp_db();
  const char *argv[] = {"complan", "plan", task_path("push.json"), "--db", db,
                        "--method", "sst", "--seed", "3", "--max-nodes",
                        "300", "--max-seconds", "3600", "--json", NULL};
  setenv("COMPLAN_CHECKPOINT_PAGES", pages, 1);
  json_t *doc = cpt_run_json(argv, 0);
  unsetenv("COMPLAN_CHECKPOINT_PAGES");
  json_decref(doc);
  char wal[600];
  snprintf(wal, sizeof wal, "%s-wal", db);
  cr_assert_neq(access(wal, F_OK), 0, "no WAL left after the run (%s)", pages);
  return db;
}

Test(cli_plan, checkpoint_pages_change_nothing_in_the_database) {
  char *a = push_with_checkpoints("0"), *b = push_with_checkpoints("2");
  sqlite3 *da = synth_open_db(a), *db = synth_open_db(b);
  assert_integrity(db);
  cr_assert_gt(synth_assert_same_run(da, 1, db, 1, "checkpoint pages"), 100);
  sqlite3_close(da);
  sqlite3_close(db);
  synth_remove_db(a);
  synth_remove_db(b);
}

/* Re-simulates every action of the stored plan from the database alone
 * (task text, world options, parent state and basis, inputs) and compares
 * the result with the stored child state bit for bit. */
Test(cli_plan, stored_plans_resimulate_bitwise) {
  char *db = synth_temp_db();
  const char *argv[] = {"complan", "plan", task_path("grasp_lift.json"), "--db",
                        db, "--max-seconds", "3600", "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert_str_eq(jstr(doc, "status"), "solved");
  json_decref(doc);
  sqlite3 *s;
  sqlite3_open(db, &s);
  sqlite3_stmt *q;
  sqlite3_prepare_v2(s, "SELECT t.text, t.scene_dir FROM tasks t", -1, &q, NULL);
  cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
  cp_task task;
  cp_error e;
  char path[1200];
  snprintf(path, sizeof path, "%s/planner/tasks/x.json", getenv("CP_SOURCE_ROOT"));
  const char *text = (const char *)sqlite3_column_text(q, 0);
  cr_assert_eq(cp_task_parse(text, strlen(text), path, &task, &e), 0, "%s", e.msg);
  sqlite3_finalize(q);
  cp_world_options wo = cp_world_defaults();
  wo.stepper = (cp_stepper)task.stepper;
  wo.dt = task.dt;
  cp_world *w;
  cr_assert_eq(cp_world_create(&task.scene, &wo, &w, &e), CP_WORLD_OK);
  int n = cp_world_state_size(w);
  double *y = malloc((size_t)n * sizeof *y);
  sqlite3_prepare_v2(
      s,
      "WITH RECURSIVE path(id) AS (SELECT node FROM plans UNION ALL"
      " SELECT n.parent FROM nodes n JOIN path ON n.id = path.id"
      " WHERE n.parent IS NOT NULL)"
      " SELECT c.state, c.inputs, c.steps, p.state, p.warm, p.time,"
      " c.duration, c.dt FROM path JOIN nodes c ON c.id = path.id"
      " JOIN nodes p ON p.id = c.parent ORDER BY c.id",
      -1, &q, NULL);
  int checked = 0;
  while (sqlite3_step(q) == SQLITE_ROW) {
    cr_assert_eq(sqlite3_column_bytes(q, 0), n * (int)sizeof(double));
    const double *child = sqlite3_column_blob(q, 0);
    const double *in = sqlite3_column_blob(q, 1);
    cr_assert_eq(cp_world_set_state(w, sqlite3_column_blob(q, 3)), CP_WORLD_OK);
    cp_world_set_time(w, sqlite3_column_double(q, 5));
    if (sqlite3_column_bytes(q, 4) > 0)
      cp_world_warm_set(w, sqlite3_column_blob(q, 4),
                        (size_t)sqlite3_column_bytes(q, 4));
    for (int i = 0; i < task.n_inputs; ++i)
      cr_assert_eq(cp_world_set_effort(w, task.inputs[i].row, in[i]), CP_WORLD_OK);
    int steps = (int)round(sqlite3_column_double(q, 6) / sqlite3_column_double(q, 7));
    cr_assert_eq(steps, sqlite3_column_int(q, 2));
    for (int k = 0; k < steps; ++k) cr_assert_eq(cp_world_step(w, NULL), CP_WORLD_OK);
    cp_world_get_state(w, y);
    cr_assert(!memcmp(y, child, (size_t)n * sizeof *y),
              "action %d does not re-simulate bitwise", checked + 1);
    ++checked;
  }
  sqlite3_finalize(q);
  cr_assert(checked >= 2, "%d actions checked", checked);
  free(y);
  cp_world_destroy(w);
  cp_task_free(&task);
  sqlite3_close(s);
  synth_remove_db(db);
}

Test(cli_plan, rejected_outcomes_are_stored_with_their_reason) {
  /* Tight bounds: pushes that carry the box past x = 0.05 leave them. */
  char *tp = temp_task("push.json", "\"max\": [0.5, 0.5, 0.5]",
                       "\"max\": [0.05, 0.5, 0.5]");
  char *db = synth_temp_db();
  const char *argv[] = {"complan", "plan", tp, "--db", db, "--max-nodes", "200",
                        "--json", NULL};
  json_t *doc = cpt_run_json(argv, 1);
  cr_assert_str_eq(jstr(doc, "status"), "limit", "the goal is out of bounds");
  cr_assert(jint(doc, "rejected") > 0);
  sqlite3 *s;
  sqlite3_open(db, &s);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM nodes WHERE outcome ="
                       " 'out_of_bounds' AND message LIKE '%box%left the bounds%'"),
               jint(doc, "rejected"));
  /* Rejected nodes never get children. */
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM nodes c JOIN nodes p ON"
                       " p.id = c.parent WHERE p.outcome != 'ok'"), 0);
  sqlite3_close(s);
  json_decref(doc);
  synth_remove_db(db);
  unlink(tp);
  free(tp);
}


Test(cli_plan, sigkill_then_resume_finishes_the_same_run) {
  char *db = synth_temp_db();
  const char *exe = getenv("CP_COMPLAN");
  pid_t pid = fork();
  cr_assert(pid >= 0);
  if (pid == 0) {
    freopen("/dev/null", "w", stdout);
    freopen("/dev/null", "w", stderr);
    /* SST keeps improving its plan until a limit: the node limit decides
     * (the time limit is out of reach on any machine), and the run is long
     * enough to be killed mid-write on any machine. */
    execl(exe, exe, "plan", task_path("push.json"), "--db", db, "--method",
          "sst", "--max-nodes", "4000", "--max-seconds", "3600", NULL);
    _exit(127);
  }
  /* Wait for committed nodes (the schema appears first), then kill. */
  sqlite3 *s = NULL;
  long long n1 = 0;
  for (int k = 0; k < 3000 && n1 < 60; ++k) {
    nanosleep(&(struct timespec){0, 5000000L}, NULL);
    if (!s && access(db, F_OK) == 0) {
      sqlite3_open(db, &s);
      sqlite3_busy_timeout(s, 2000);
    }
    sqlite3_stmt *q;
    if (s && sqlite3_prepare_v2(s, "SELECT count(*) FROM nodes", -1, &q, NULL) == 0) {
      if (sqlite3_step(q) == SQLITE_ROW) n1 = sqlite3_column_int64(q, 0);
      sqlite3_finalize(q);
    }
  }
  kill(pid, SIGKILL);
  int st;
  waitpid(pid, &st, 0);
  cr_assert(WIFSIGNALED(st), "the search finished before it was killed");
  cr_assert_not_null(s);
  assert_integrity(s);
  n1 = synth_query_int(s, "SELECT count(*) FROM nodes");
  cr_assert(n1 >= 60);
  cr_assert_eq(synth_query_int(s, "SELECT max(id) + 1 FROM nodes"), n1);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM searches WHERE status = 'running'"), 1);
  unsigned long long before = synth_rows_digest(s, n1);
  /* The killed session's committed time: the resumed run adds to it. */
  sqlite3_stmt *q;
  cr_assert_eq(sqlite3_prepare_v2(s, "SELECT seconds FROM searches", -1, &q, NULL), 0);
  cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
  double seconds1 = sqlite3_column_double(q, 0);
  sqlite3_finalize(q);
  cr_assert(seconds1 > 0, "the first session's time is committed with its nodes");
  /* A second process reads the database while nothing writes: fine. */
  const char *lv[] = {"complan", "plans", "--db", db, "--json", NULL};
  json_t *list = cpt_run_json(lv, 0);
  cr_assert_eq(json_array_size(json_object_get(list, "runs")), 1);
  json_decref(list);

  const char *argv[] = {"complan", "plan", task_path("push.json"), "--db",
                        db, "--resume", "--max-seconds", "3600", "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert_str_eq(jstr(doc, "status"), "solved");
  cr_assert(json_is_true(json_object_get(doc, "resumed")));
  cr_assert_str_eq(jstr(doc, "planner"), "sst", "the run's own planner");
  /* Stopped by its node limit (the limit that cannot depend on the
   * machine's speed), and its time counts both sessions. */
  cr_assert(jint(doc, "nodes") >= 4000, "stopped by the node limit");
  cr_assert(json_number_value(json_object_get(doc, "seconds")) >= seconds1,
            "the run's time counts every session");
  cr_assert_eq(jint(doc, "run_id"), 1);
  assert_integrity(s);
  cr_assert_eq(synth_rows_digest(s, n1), before, "committed nodes unchanged");
  long long n2 = synth_query_int(s, "SELECT count(*) FROM nodes");
  cr_assert_eq(n2, jint(doc, "nodes"));
  cr_assert_eq(synth_query_int(s, "SELECT max(id) + 1 FROM nodes"), n2);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM searches"), 1);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM plans"), 1);
  /* The plan's path is connected to the start. */
  cr_assert_eq(synth_query_int(s, "WITH RECURSIVE p(id) AS (SELECT node FROM plans"
                       " UNION ALL SELECT n.parent FROM nodes n JOIN p ON"
                       " n.id = p.id WHERE n.parent IS NOT NULL)"
                       " SELECT min(id) FROM p"), 0);
  sqlite3_close(s);
  json_decref(doc);
  synth_remove_db(db);
}

Test(cli_plan, limits_exit_1_and_plans_lists_runs) {
  char *db = synth_temp_db();
  const char *argv[] = {"complan", "plan", task_path("grasp_lift.json"), "--db",
                        db, "--max-nodes", "5", "--json", NULL};
  json_t *doc = cpt_run_json(argv, 1);
  cr_assert_str_eq(jstr(doc, "status"), "limit");
  cr_assert(json_is_null(json_object_get(doc, "plan_id")));
  json_decref(doc);
  const char *lv[] = {"complan", "plans", "--db", db, "--json", NULL};
  doc = cpt_run_json(lv, 0);
  json_t *r = json_array_get(json_object_get(doc, "runs"), 0);
  cr_assert_str_eq(jstr(r, "status"), "limit");
  cr_assert_eq(jint(r, "nodes"), 5);
  cr_assert_eq(json_array_size(json_object_get(r, "plans")), 0);
  json_decref(doc);
  char *out, *err;
  const char *hv[] = {"complan", "plans", "--db", db, NULL};
  cr_assert_eq(cpt_run(hv, &out, &err), 0);
  cr_assert(strstr(out, "limit") && strstr(out, "astar"), "%s", out);
  free(out);
  free(err);
  synth_remove_db(db);
}

/* `complan plans` reads a run's search_batch from the stored options: a
 * damaged or hand-edited value outside 1..CP_SEARCH_MAX_BATCH is listed
 * as 1, the batch `plan --resume` would run it with, never as stored. */
Test(cli_plan, plans_reads_a_stored_batch_out_of_range_as_one) {
  char *db = synth_temp_db();
  const char *argv[] = {"complan", "plan", task_path("grasp_lift.json"), "--db",
                        db, "--max-nodes", "5", "--json", NULL};
  json_decref(cpt_run_json(argv, 1));
  static const char *const bad[] = {"0", "-3", "4097", "99999999999",
                                    "\"8\"", "2.5", "null"};
  for (size_t k = 0; k < sizeof bad / sizeof *bad; ++k) {
    sqlite3 *s;
    cr_assert_eq(sqlite3_open(db, &s), SQLITE_OK);
    char sql[256];
    snprintf(sql, sizeof sql,
             "UPDATE searches SET options = json_set(options,"
             " '$.search_batch', json('%s'))", bad[k]);
    cr_assert_eq(sqlite3_exec(s, sql, NULL, NULL, NULL), SQLITE_OK, "%s",
                 sqlite3_errmsg(s));
    sqlite3_close(s);
    const char *lv[] = {"complan", "plans", "--db", db, "--json", NULL};
    json_t *doc = cpt_run_json(lv, 0);
    json_t *r = json_array_get(json_object_get(doc, "runs"), 0);
    cr_assert_eq(jint(r, "search_batch"), 1, "stored %s", bad[k]);
    json_decref(doc);
  }
  /* In range, the stored value is listed. */
  sqlite3 *s;
  cr_assert_eq(sqlite3_open(db, &s), SQLITE_OK);
  cr_assert_eq(sqlite3_exec(s, "UPDATE searches SET options = json_set(options,"
                               " '$.search_batch', 4096)", NULL, NULL, NULL),
               SQLITE_OK);
  sqlite3_close(s);
  const char *lv[] = {"complan", "plans", "--db", db, "--json", NULL};
  json_t *doc = cpt_run_json(lv, 0);
  cr_assert_eq(jint(json_array_get(json_object_get(doc, "runs"), 0),
                    "search_batch"), 4096);
  json_decref(doc);
  synth_remove_db(db);
}

/* A run's stored options name every search setting that shapes its tree,
 * rrt's greedy extension (search.connect) and the steering among them
 * (issue 23: `connect` was only in the stored task text). */
Test(cli_plan, stored_options_name_connect_and_steer) {
  char *db = synth_temp_db();
  char *tp = temp_task("push.json", "\"search\": {\"method\": \"astar\",",
                       "\"search\": {\"method\": \"rrt\", \"connect\": 3,");
  const char *argv[] = {"complan", "plan", tp, "--db", db, "--max-nodes", "30", "--json", NULL};
  char *out, *err;
  int rc = cpt_run(argv, &out, &err); /* solved (0) or the node limit (1) */
  cr_assert(rc == 0 || rc == 1, "exit %d: %s", rc, err);
  free(out);
  free(err);
  sqlite3 *s;
  cr_assert_eq(sqlite3_open(db, &s), SQLITE_OK);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM searches"), 1);
  cr_assert_eq(synth_query_int(s, "SELECT json_extract(options, '$.connect') FROM searches"), 3);
  cr_assert_eq(synth_query_int(s, "SELECT json_extract(options, '$.steer') = 'sample' FROM searches"), 1);
  cr_assert_eq(synth_query_int(s, "SELECT json_extract(options, '$.method') = 'rrt' FROM searches"), 1);
  sqlite3_close(s);
  unlink(tp);
  free(tp);
  synth_remove_db(db);
}

Test(cli_plan, benchmark_writes_ompl_tables) {
  char *db = synth_temp_db();
  const char *argv[] = {"complan", "plan", task_path("push.json"), "--db", db,
                        "--benchmark", "2", "--planners", "astar,rrt",
                        "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  json_t *p = json_object_get(doc, "planners");
  cr_assert_eq(json_array_size(p), 2);
  cr_assert_eq(jint(json_array_get(p, 0), "solved"), 2);
  json_decref(doc);
  sqlite3 *s;
  sqlite3_open(db, &s);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM experiments"), 1);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM plannerConfigs WHERE name LIKE"
                       " 'control_complan_%'"), 2);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM runs"), 4);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM runs WHERE lcp_solves > 0 AND"
                       " lemke_pivots > 0 AND expansions > 0"), 4);
  cr_assert(synth_query_int(s, "SELECT count(*) FROM progress") >= 4);
  sqlite3_close(s);
  synth_remove_db(db);
}

static void bad(const char *const *argv, int rc, const char *w1,
                const char *w2) {
  char *out, *err;
  cr_assert_eq(cpt_run(argv, &out, &err), rc, "stderr: %s", err);
  cr_assert_str_eq(out, "", "nothing on stdout");
  cr_assert(strstr(err, w1), "'%s' not in: %s", w1, err);
  if (w2) cr_assert(strstr(err, w2), "'%s' not in: %s", w2, err);
  free(out);
  free(err);
}

Test(cli_plan, bad_tasks_and_databases_exit_2_with_the_place) {
  char *db = synth_temp_db();
  const char *a1[] = {"complan", "plan", "/nonexistent/task.json", "--db", db, NULL};
  bad(a1, 2, "/nonexistent/task.json", NULL);
  cr_assert_neq(access(db, F_OK), 0, "no database written for a bad task");
  char *tp = temp_task("push.json", "\"tolerance\"", "\"tolerancf\"");
  const char *a2[] = {"complan", "plan", tp, "--db", db, NULL};
  bad(a2, 2, tp, "goal.tolerancf");
  const char *a3[] = {"complan", "plan", task_path("push.json"), "--method",
                      "prm", NULL};
  bad(a3, 2, "--method", NULL);
  const char *a4[] = {"complan", "plan", NULL};
  bad(a4, 2, "missing TASK", NULL);
  /* A time limit beyond a task's limits.seconds range: the range is said. */
  const char *a4b[] = {"complan", "plan", task_path("push.json"), "--max-seconds", "1e9", "--db", db, NULL};
  bad(a4b, 2, "--max-seconds: expected a number of seconds from 1e-6 to 1e7, found '1e9'", NULL);
  cr_assert_neq(access(db, F_OK), 0, "no database written for a bad flag");
  setenv("COMPLAN_CHECKPOINT_PAGES", "12x", 1);
  const char *a4c[] = {"complan", "plan", task_path("push.json"), "--db", db, NULL};
  bad(a4c, 2, "COMPLAN_CHECKPOINT_PAGES=12x: expected a whole number of pages", NULL);
  unsetenv("COMPLAN_CHECKPOINT_PAGES");
  cr_assert_neq(access(db, F_OK), 0, "no database written for a bad setting");
  /* A file that is not SQLite is refused and left alone. */
  char *junk = cpt_temp_file("not a database\n", ".sqlite");
  const char *a5[] = {"complan", "plan", task_path("push.json"), "--db", junk, NULL};
  bad(a5, 2, junk, "not a");
  char *after = cpt_read_file(junk, NULL);
  cr_assert_str_eq(after, "not a database\n");
  free(after);
  const char *a6[] = {"complan", "plans", "--db", junk, NULL};
  bad(a6, 2, junk, NULL);
  /* Another schema version. */
  sqlite3 *s;
  sqlite3_open(db, &s);
  sqlite3_exec(s, "CREATE TABLE t(x); PRAGMA user_version = 99;"
                  " PRAGMA application_id = 1129335886;", NULL, NULL, NULL);
  sqlite3_close(s);
  const char *a7[] = {"complan", "plan", task_path("push.json"), "--db", db, NULL};
  bad(a7, 2, "version 99", db);
  const char *a8[] = {"complan", "plans", "--db", "/nonexistent.sqlite", NULL};
  bad(a8, 2, "no such database", NULL);
  unlink(junk);
  free(junk);
  unlink(tp);
  free(tp);
  synth_remove_db(db);
}

/* The action's step and length out of range: exit 2, the file, the JSON
 * path, the value and the allowed range on stderr, no database written. */
Test(cli_plan, action_dt_and_duration_ranges_are_said) {
  char *db = synth_temp_db();
  const struct {
    const char *from, *to, *w1, *w2;
  } cases[] = {
      {"\"dt\": 0.005", "\"dt\": 0.5", "action.dt: expected seconds in (0, 0.1] (at most "
       "action.duration) and >= 1e-07 (at most 10^6 steps), got 0.5", NULL},
      {"\"dt\": 0.005", "\"dt\": -0.005", "action.dt: expected seconds in (0, 0.1]",
       "got -0.005"},
      {"\"dt\": 0.005", "\"dt\": 1e-9", "action.dt: expected seconds in (0, 0.1]",
       ">= 1e-07 (at most 10^6 steps), got 1e-09"},
      {"\"duration\": 0.1", "\"duration\": 0", "action.duration: expected a number in "
       "(0, 1e+06], got 0", NULL},
      {"\"duration\": 0.1", "\"duration\": 2e6", "action.duration: expected a number in "
       "(0, 1e+06], got 2000000", NULL},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; ++k) {
    char *tp = temp_task("push.json", cases[k].from, cases[k].to);
    const char *argv[] = {"complan", "plan", tp, "--db", db, NULL};
    bad(argv, 2, tp, cases[k].w1);
    if (cases[k].w2) bad(argv, 2, tp, cases[k].w2);
    cr_assert_neq(access(db, F_OK), 0, "case %zu: a database was written", k);
    unlink(tp);
    free(tp);
  }
  synth_remove_db(db);
}

/* Issue 21 (H3): `assemble` writes the default complan.sqlite through the
 * store, stamped, so `plan` in the same folder adds to it; every command
 * refuses another application's file and leaves it as it was. */
Test(cli_plan, assemble_then_plan_share_the_default_database) {
  char dir[] = "/tmp/cp_defdbXXXXXX";
  cr_assert(mkdtemp(dir));
  cr_assert_eq(chdir(dir), 0);
  char scene[1024];
  snprintf(scene, sizeof scene, "%s/models/scenes/tower.json", getenv("CP_SOURCE_ROOT"));
  const char *asm_argv[] = {"complan", "assemble", scene, NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(asm_argv, &out, &err), 0, "%s", err);
  free(out), free(err);
  const char *plan_argv[] = {"complan", "plan", task_path("push.json"), "--max-nodes", "40", NULL};
  int rc = cpt_run(plan_argv, &out, &err);
  cr_assert(rc == 0 || rc == 1, "plan after assemble: exit %d: %s", rc, err);
  cr_assert_null(strstr(err, "another application"), "%s", err);
  free(out), free(err);
  sqlite3 *db;
  cr_assert_eq(sqlite3_open("complan.sqlite", &db), SQLITE_OK);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM assembly_runs"), 1);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM searches"), 1);
  cr_assert_eq(synth_query_int(db, "PRAGMA application_id"), 0x43504c4e);
  assert_integrity(db);
  sqlite3_close(db);
  /* Another application's file: refused by all four, byte-identical. */
  sqlite3_open("other.db", &db);
  sqlite3_exec(db, "CREATE TABLE t(x); INSERT INTO t VALUES (1); PRAGMA user_version = 3;",
               NULL, NULL, NULL);
  sqlite3_close(db);
  size_t n0, n1;
  char *before = cpt_read_file("other.db", &n0);
  const char *cmds[][8] = {
      {"complan", "plan", task_path("push.json"), "--db", "other.db", NULL},
      {"complan", "assemble", scene, "--db", "other.db", NULL},
      {"complan", "plans", "--db", "other.db", NULL},
      {"complan", "replay", "--db", "other.db", NULL}};
  for (int k = 0; k < 4; ++k) {
    rc = cpt_run(cmds[k], &out, &err);
    cr_assert_eq(rc, 2, "%s: exit %d: %s", cmds[k][1], rc, err);
    cr_assert(strstr(err, "other.db") && strstr(err, "another application"), "%s: %s",
              cmds[k][1], err);
    cr_assert_str_eq(out, "", "%s printed on stdout", cmds[k][1]);
    free(out), free(err);
  }
  char *after = cpt_read_file("other.db", &n1);
  cr_assert(n0 == n1 && !memcmp(before, after, n0), "other.db changed");
  free(before), free(after);
}

/* search.fresh_actions through complan plan, batched (session 28: push
 * has 4 actions, so a batch of 16 -- or rrt's batch of 4, each drawing all
 * 4 actions of its node -- took every action of the start node; the draw
 * after that found no node to grow from and the run ended at 1 node,
 * reported not_found). One run per thread count: both grow past the start,
 * the same tree (nodes, simulations, plan), and never a (parent, action)
 * pair twice. */
static json_t *fresh_push(const char *search, const char *threads,
                          char **db, int rc) {
  char *task = temp_task("push.json", "\"method\": \"astar\"", search);
  *db = synth_temp_db();
  const char *argv[] = {"complan", "plan", task, "--db", *db, "--seed", "1",
                        "--max-nodes", "300", "--threads", threads,
                        "--max-seconds", "3600", "--json", NULL};
  json_t *doc = cpt_run_json(argv, rc);
  sqlite3 *s;
  sqlite3_open(*db, &s);
  assert_integrity(s);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM nodes"),
               jint(doc, "nodes"));
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM (SELECT 1 FROM nodes"
                                  " WHERE parent IS NOT NULL GROUP BY parent,"
                                  " action HAVING count(*) > 1)"),
               0, "a (node, action) pair simulated twice");
  cr_assert_eq(synth_query_int(s, "SELECT json_extract(options,"
                                  " '$.search_fresh_actions') FROM searches"),
               1);
  sqlite3_close(s);
  unlink(task);
  free(task);
  return doc;
}

Test(cli_plan, fresh_actions_batched_runs_grow_alike_on_1_and_2_threads) {
  static const char *const searches[] = {
      "\"method\": \"sst\", \"batch\": 16, \"fresh_actions\": true",
      "\"method\": \"sst\", \"batch\": 16, \"pipeline\": true, "
      "\"fresh_actions\": true",
      "\"method\": \"rrt\", \"batch\": 4, \"candidates\": 2, "
      "\"fresh_actions\": true"};
  for (int k = 0; k < 3; ++k) {
    char *db1, *db2;
    json_t *a = fresh_push(searches[k], "1", &db1, 0);
    json_t *b = fresh_push(searches[k], "2", &db2, 0);
    cr_assert_str_eq(jstr(a, "status"), "solved", "%s", searches[k]);
    cr_assert_gt(jint(a, "nodes"), 16, "%s", searches[k]);
    cr_assert(json_is_false(json_object_get(a, "actions_exhausted")));
    cr_assert_str_eq(jstr(b, "status"), "solved");
    cr_assert_eq(jint(a, "nodes"), jint(b, "nodes"), "%s", searches[k]);
    cr_assert_eq(jint(a, "lcp_solves"), jint(b, "lcp_solves"));
    cr_assert_eq(jint(a, "length"), jint(b, "length"));
    cr_assert_eq(json_number_value(json_object_get(a, "cost")),
                 json_number_value(json_object_get(b, "cost")));
    cr_assert_eq(jint(a, "best_node"), jint(b, "best_node"));
    json_decref(a);
    json_decref(b);
    synth_remove_db(db1);
    synth_remove_db(db2);
  }
}

/* Running out of untried actions is no proof that no plan exists: rrt
 * with 4 candidates of push's 4 actions keeps one child per node and tries
 * every action of a node at once; when every node of its tree has, the
 * run ends as a limit (exit 1, stored "limit", resumable), flagged
 * actions_exhausted, not not_found. */
/* Session 28's fresh rrt ended this run (push, batch 4, seed 1, 2 threads) exhausted
 * at under 300 nodes, reported as a limit; session 29's rrt keeps an
 * exhausted node's unkept children and solves it. (Exhaustion as a limit:
 * test_search's fresh_actions_exhaust_a_small_space and plan.c.) */
Test(cli_plan, fresh_actions_rrt_solves_what_session_28_ran_out_on) {
  char *db;
  json_t *doc = fresh_push("\"method\": \"rrt\", \"batch\": 4, "
                           "\"fresh_actions\": true",
                           "2", &db, 0);
  cr_assert_str_eq(jstr(doc, "status"), "solved");
  cr_assert(!json_is_true(json_object_get(doc, "actions_exhausted")));
  cr_assert(!json_is_null(json_object_get(doc, "plan_id")));
  json_decref(doc);
  synth_remove_db(db);
}
