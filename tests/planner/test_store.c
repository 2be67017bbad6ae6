/* The SQLite store and the planning loop over synthetic problems: the
 * schema (versioned, WAL, foreign keys, OMPL's benchmark tables), every node
 * and plan written and read back, resume after a limit and after SIGKILL
 * (integrity, no committed node lost or duplicated), and bad databases. */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "planner/plan.h"
#include "planner/store.h"
#include "tests/support.h"
#include "synth.h"

static cp_store *open_store(const char *path) {
  cp_store *st;
  char msg[512];
  cr_assert_eq(cp_store_open(path, 0, &st, msg, sizeof msg), CP_STORE_OK, "%s",
               msg);
  return st;
}


static char *query_text(sqlite3 *db, const char *sql) {
  sqlite3_stmt *q;
  cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK, "%s", sql);
  cr_assert_eq(sqlite3_step(q), SQLITE_ROW, "%s", sql);
  char *v = strdup((const char *)sqlite3_column_text(q, 0));
  sqlite3_finalize(q);
  return v;
}

static int has_column(sqlite3 *db, const char *table, const char *col) {
  char sql[256];
  snprintf(sql, sizeof sql,
           "SELECT count(*) FROM pragma_table_info('%s') WHERE name = '%s'",
           table, col);
  return synth_query_int(db, sql) == 1;
}

Test(store, schema_is_versioned_with_ompl_tables) {
  char *path = synth_temp_db();
  cp_store *st = open_store(path);
  cp_store_close(st);
  sqlite3 *db;
  cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
  cr_assert_eq(synth_query_int(db, "PRAGMA user_version"), CP_STORE_SCHEMA_VERSION);
  cr_assert_eq(synth_query_int(db, "PRAGMA application_id"), CP_STORE_APPLICATION_ID);
  char *mode = query_text(db, "PRAGMA journal_mode");
  cr_assert_str_eq(mode, "wal");
  free(mode);
  static const char *const cols[][2] = {
      {"experiments", "name"},      {"experiments", "totaltime"},
      {"experiments", "timelimit"}, {"experiments", "memorylimit"},
      {"experiments", "runcount"},  {"experiments", "version"},
      {"experiments", "hostname"},  {"experiments", "cpuinfo"},
      {"experiments", "date"},      {"experiments", "seed"},
      {"experiments", "setup"},     {"plannerConfigs", "name"},
      {"plannerConfigs", "settings"}, {"enums", "name"},
      {"enums", "value"},           {"enums", "description"},
      {"runs", "experimentid"},     {"runs", "plannerid"},
      {"runs", "time"},             {"runs", "memory"},
      {"runs", "status"},           {"runs", "solved"},
      {"runs", "graph_states"},     {"runs", "solution_length"},
      {"runs", "solution_clearance"}, {"runs", "expansions"},
      {"runs", "lcp_solves"},       {"runs", "lemke_pivots"},
      {"runs", "fallbacks"},        {"progress", "runid"},
      {"progress", "time"},         {"progress", "best_cost"},
      {"tasks", "text"},            {"tasks", "hash"},
      {"searches", "rng"},          {"searches", "options"},
      {"nodes", "state"},           {"nodes", "parent"},
      {"nodes", "inputs"},          {"nodes", "outcome"},
      {"plans", "cost"},            {"plans", "length"}};
  for (size_t k = 0; k < sizeof cols / sizeof *cols; ++k)
    cr_assert(has_column(db, cols[k][0], cols[k][1]), "%s.%s", cols[k][0],
              cols[k][1]);
  cr_assert_eq(synth_query_int(db, "SELECT value FROM enums WHERE name = 'status'"
                             " AND description = 'Exact solution'"), 6);
  sqlite3_close(db);
  /* Opening again checks and keeps the schema. */
  st = open_store(path);
  cp_store_close(st);
  unlink(path);
  free(path);
}

static const char *const maze[] = {
    "..........", ".########.", ".#......#.", ".#.####.#.", ".#.#..#.#.",
    ".#.#......", ".#.####.##", ".#........", ".########.", ".........."};

Test(store, every_node_and_the_plan_are_written) {
  cp_task task;
  synth_load_task(&task);
  char *path = synth_temp_db();
  cp_store *st = open_store(path);
  synth_grid g = {.w = 10, .h = 10, .rows = maze, .start = {0, 0},
                  .goal = {4, 4}, .cost = {1.0, 1.3, 0.7, 2.1}};
  cp_search_problem p = synth_grid_problem(&g);
  double x0[2] = {0, 0};
  cp_plan_options o = cp_plan_defaults();
  o.method = "astar";
  cp_plan_result r;
  cp_error e;
  task.weight = 1.0;
  cr_assert_eq(cp_plan_search(st, &task, &p, x0, &o, &r, &e), CP_PLAN_SOLVED,
               "%s", e.msg);
  cr_assert_float_eq(r.cost, synth_grid_dijkstra(&g), 1e-12);
  long *ids, n;
  int64_t run;
  cr_assert_eq(cp_store_plan_nodes(st, r.plan_id, &run, &ids, &n), CP_STORE_OK);
  cr_assert_eq(run, r.run_id);
  cr_assert_eq(n, r.length + 1);
  cr_assert_eq(ids[0], 0);
  cr_assert_eq(ids[n - 1], r.goal_node);
  free(ids);
  cp_store_close(st);

  sqlite3 *db;
  cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM nodes"), r.nodes);
  cr_assert_eq(synth_query_int(db, "SELECT max(id) + 1 FROM nodes"), r.nodes);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM nodes WHERE outcome ="
                             " 'out_of_bounds' AND message LIKE '%blocked%'"),
               r.stats.rejected);
  cr_assert(r.stats.rejected > 0);
  /* The goal node's state blob holds the goal cell; its inputs blob the
   * action's value (the task's values are 0..7 = the action index). */
  sqlite3_stmt *q;
  sqlite3_prepare_v2(db, "SELECT n.state, n.inputs, n.action, n.duration FROM nodes n"
                         " JOIN plans p ON p.node = n.id AND p.search_id = n.search_id", -1, &q, NULL);
  cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
  cr_assert_eq(sqlite3_column_bytes(q, 0), 2 * (int)sizeof(double));
  const double *x = sqlite3_column_blob(q, 0);
  cr_assert(x[0] == 4 && x[1] == 4);
  cr_assert_eq(sqlite3_column_bytes(q, 1), (int)sizeof(double));
  const double *v = sqlite3_column_blob(q, 1);
  cr_assert_eq((long)v[0], (long)sqlite3_column_int64(q, 2));
  cr_assert_float_eq(sqlite3_column_double(q, 3), 1.0, 0);
  sqlite3_finalize(q);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM searches WHERE status ="
                             " 'solved'"), 1);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
  sqlite3_close(db);
  cp_task_free(&task);
  unlink(path);
  free(path);
}

/* A 40 x 40 field with a wall along y = 20 open only at x = 39: the goal
 * (0, 39) takes a long detour. */
static char field_rows[40][41];
static const char *field_ptr[40];
static synth_grid field(void) {
  for (int y = 0; y < 40; ++y) {
    for (int x = 0; x < 40; ++x) field_rows[y][x] = (y == 20 && x < 39) ? '#' : '.';
    field_rows[y][40] = '\0';
    field_ptr[y] = field_rows[y];
  }
  synth_grid g = {.w = 40, .h = 40, .rows = field_ptr, .start = {0, 0},
                  .goal = {0, 39}, .cost = {1, 1, 1, 1}};
  return g;
}

Test(store, resume_after_a_limit_continues_the_same_run) {
  cp_task task;
  synth_load_task(&task);
  task.weight = 1.0;
  char *path = synth_temp_db();
  cp_store *st = open_store(path);
  synth_grid g = field();
  cp_search_problem p = synth_grid_problem(&g);
  double x0[2] = {0, 0};
  cp_plan_options o = cp_plan_defaults();
  o.method = "astar";
  o.max_nodes = 300;
  cp_plan_result r1, r2;
  cp_error e;
  cr_assert_eq(cp_plan_search(st, &task, &p, x0, &o, &r1, &e), CP_PLAN_LIMIT);
  cr_assert_eq(r1.nodes, 300);
  o.max_nodes = 0;
  o.resume = 1;
  cr_assert_eq(cp_plan_search(st, &task, &p, x0, &o, &r2, &e), CP_PLAN_SOLVED,
               "%s", e.msg);
  cr_assert_eq(r2.resumed, 1);
  cr_assert_eq(r2.run_id, r1.run_id);
  cr_assert_float_eq(r2.cost, synth_grid_dijkstra(&g), 1e-12);
  cr_assert(r2.stats.expansions > r1.stats.expansions);
  /* A finished run is not resumed: a new run starts. */
  cp_plan_result r3;
  cr_assert_eq(cp_plan_search(st, &task, &p, x0, &o, &r3, &e), CP_PLAN_SOLVED);
  cr_assert_eq(r3.resumed, 0);
  cr_assert_neq(r3.run_id, r1.run_id);
  cr_assert_eq(r3.nodes, r2.nodes, "the same search from scratch");
  cp_store_close(st);
  cp_task_free(&task);
  unlink(path);
  free(path);
}


/* Resumes the field search stored in path to its end (an optimal plan). */
static cp_plan_result resume_field(const char *path, const cp_task *task) {
  cp_store *st = open_store(path);
  synth_grid g = field();
  cp_search_problem p = synth_grid_problem(&g);
  double x0[2] = {0, 0};
  cp_plan_options o = cp_plan_defaults();
  o.resume = 1;
  cp_plan_result r;
  cp_error e;
  cr_assert_eq(cp_plan_search(st, task, &p, x0, &o, &r, &e), CP_PLAN_SOLVED,
               "%s", e.msg);
  cr_assert_eq(r.resumed, 1);
  cr_assert_float_eq(r.cost, synth_grid_dijkstra(&g), 1e-12);
  cp_store_close(st);
  return r;
}

Test(store, sigkill_then_resume_loses_and_duplicates_nothing) {
  cp_task task;
  synth_load_task(&task);
  task.weight = 1.0;
  char *path = synth_temp_db();
  {
    cp_store *st = open_store(path); /* the schema exists before the fork */
    cp_store_close(st);
  }
  pid_t pid = fork();
  cr_assert(pid >= 0);
  if (pid == 0) {
    cp_store *st;
    char msg[512];
    if (cp_store_open(path, 0, &st, msg, sizeof msg)) _exit(3);
    synth_grid g = field();
    g.delay_us = 300;
    cp_search_problem p = synth_grid_problem(&g);
    double x0[2] = {0, 0};
    cp_plan_options o = cp_plan_defaults();
    o.method = "astar";
    cp_plan_result r;
    cp_error e;
    cp_plan_search(st, &task, &p, x0, &o, &r, &e);
    _exit(4); /* should have been killed before finishing */
  }
  /* Kill it while it writes: wait until some batches are committed. */
  sqlite3 *db;
  cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
  sqlite3_busy_timeout(db, 2000);
  for (int k = 0; k < 400; ++k) {
    nanosleep(&(struct timespec){0, 10000000L}, NULL);
    sqlite3_stmt *q;
    long long c = 0;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM nodes", -1, &q, NULL) == 0) {
      if (sqlite3_step(q) == SQLITE_ROW) c = sqlite3_column_int64(q, 0);
      sqlite3_finalize(q);
    }
    if (c > 200) break;
  }
  kill(pid, SIGKILL);
  int wst;
  waitpid(pid, &wst, 0);
  cr_assert(WIFSIGNALED(wst), "the search ended before it was killed");
  char *ok = query_text(db, "PRAGMA integrity_check");
  cr_assert_str_eq(ok, "ok");
  free(ok);
  long n1 = (long)synth_query_int(db, "SELECT count(*) FROM nodes");
  cr_assert(n1 > 200);
  cr_assert_eq(synth_query_int(db, "SELECT max(id) + 1 FROM nodes"), n1);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM searches WHERE status ="
                             " 'running'"), 1);
  unsigned long long before = synth_rows_digest(db, n1);

  cp_plan_result r = resume_field(path, &task);

  ok = query_text(db, "PRAGMA integrity_check");
  cr_assert_str_eq(ok, "ok");
  free(ok);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
  cr_assert_eq(synth_rows_digest(db, n1), before, "committed nodes unchanged");
  long n2 = (long)synth_query_int(db, "SELECT count(*) FROM nodes");
  cr_assert_eq(n2, r.nodes);
  cr_assert_eq(synth_query_int(db, "SELECT max(id) + 1 FROM nodes"), n2,
               "ids 0..n-1, none lost or duplicated");
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM searches"), 1);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM plans"), 1);
  sqlite3_close(db);
  cp_task_free(&task);
  unlink(path);
  free(path);
}

Test(store, bad_databases_are_refused_with_a_reason) {
  char msg[512];
  cp_store *st;
  /* Not SQLite. */
  char *junk = cpt_temp_file("this is not a database, just text\n", ".sqlite");
  cr_assert_eq(cp_store_open(junk, 0, &st, msg, sizeof msg), CP_STORE_BAD_FILE);
  cr_assert_null(st);
  cr_assert(strstr(msg, junk) && strstr(msg, "not a"), "%s", msg);
  size_t len;
  char *after = cpt_read_file(junk, &len);
  cr_assert_str_eq(after, "this is not a database, just text\n", "untouched");
  free(after);
  unlink(junk);
  free(junk);
  /* Another schema version. */
  char *path = synth_temp_db();
  sqlite3 *db;
  sqlite3_open(path, &db);
  char sql[128];
  snprintf(sql, sizeof sql, "CREATE TABLE t(x); PRAGMA user_version = 7;"
           " PRAGMA application_id = %d;", CP_STORE_APPLICATION_ID);
  sqlite3_exec(db, sql, NULL, NULL, NULL);
  sqlite3_close(db);
  cr_assert_eq(cp_store_open(path, 0, &st, msg, sizeof msg), CP_STORE_BAD_FILE);
  cr_assert(strstr(msg, "version 7"), "%s", msg);
  unlink(path);
  /* Another application's database. */
  sqlite3_open(path, &db);
  sqlite3_exec(db, "CREATE TABLE mine(x)", NULL, NULL, NULL);
  sqlite3_close(db);
  cr_assert_eq(cp_store_open(path, 0, &st, msg, sizeof msg), CP_STORE_BAD_FILE);
  cr_assert(strstr(msg, "another application"), "%s", msg);
  unlink(path);
  /* A directory cannot be opened. */
  cr_assert_eq(cp_store_open("/", 0, &st, msg, sizeof msg), CP_STORE_IO, "%s",
               msg);
  free(path);
}

Test(store, read_only_and_busy_databases_fail_cleanly) {
  cp_task task;
  synth_load_task(&task);
  char *path = synth_temp_db();
  cp_store *st = open_store(path);
  cp_store_close(st);
  char msg[512];
  cr_assert_eq(cp_store_open(path, 1, &st, msg, sizeof msg), CP_STORE_OK, "%s",
               msg);
  int64_t tid;
  cr_assert_eq(cp_store_task(st, &task, NULL, &tid), CP_STORE_IO, "%s",
               cp_store_message(st));
  cr_assert(strstr(cp_store_message(st), path));
  cp_store_close(st);
  /* Another process holds the write lock: a clear BUSY after the timeout. */
  sqlite3 *db;
  sqlite3_open(path, &db);
  cr_assert_eq(sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
  st = open_store(path);
  cr_assert_eq(cp_store_task(st, &task, NULL, &tid), CP_STORE_BUSY);
  cr_assert(strstr(cp_store_message(st), "another process"), "%s",
            cp_store_message(st));
  sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
  cr_assert_eq(cp_store_task(st, &task, NULL, &tid), CP_STORE_OK);
  cp_store_close(st);
  sqlite3_close(db);
  cp_task_free(&task);
  unlink(path);
  free(path);
}

Test(store, benchmark_fills_the_ompl_tables) {
  cp_task task;
  synth_load_task(&task);
  char *path = synth_temp_db();
  cp_store *st = open_store(path);
  synth_point pt = {0};
  cp_search_problem p = synth_point_problem(&pt);
  double x0[2] = {0.1, 0.1};
  const char *const planners[] = {"rrt", "sst", NULL};
  /* Limited by nodes, not wall time: under the sanitizers on a loaded
   * machine 0.3 s of wall time was sometimes too little to solve. */
  cp_bench_options bo = {.runs = 3, .planners = planners, .max_seconds = 3600};
  task.max_nodes = 3000;
  task.goal_bias = 0.1;
  task.delta_bn = 0.1;
  task.delta_s = 0.03;
  int64_t eid;
  cp_error e;
  cr_assert_eq(cp_plan_benchmark(st, &task, &p, x0, "{}", &bo, &eid, &e),
               CP_PLAN_SOLVED, "%s", e.msg);
  cp_store_close(st);
  sqlite3 *db;
  sqlite3_open(path, &db);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM experiments"), 1);
  cr_assert_eq(synth_query_int(db, "SELECT runcount FROM experiments"), 3);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM plannerConfigs"), 2);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM runs"), 6);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM runs WHERE solved = 1 AND"
                             " status = 6 AND solution_length > 0"), 6);
  /* Each run's search is stored in full and linked. */
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM runs r JOIN searches s ON"
                             " s.id = r.search_id AND s.nodes = r.graph_states"),
               6);
  cr_assert(synth_query_int(db, "SELECT count(*) FROM progress") >= 6);
  /* SST's best cost over time never grows. */
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM progress a JOIN progress b"
                             " ON a.runid = b.runid AND a.time < b.time"
                             " WHERE a.best_cost < b.best_cost"), 0);
  sqlite3_close(db);
  cp_task_free(&task);
  unlink(path);
  free(path);
}

/* Runs the field search in a child process against db; returns its exit
 * status: 0 solved, 10 failed with a message naming the file, else 1. With
 * fsize > 0 the child may write files of at most fsize bytes (a full disk). */
static pid_t spawn_search(const char *db, long fsize) {
  pid_t pid = fork();
  if (pid != 0) return pid;
  if (fsize > 0) {
    signal(SIGXFSZ, SIG_IGN); /* writes past the limit fail with EFBIG */
    struct rlimit rl = {(rlim_t)fsize, (rlim_t)fsize};
    setrlimit(RLIMIT_FSIZE, &rl);
  }
  cp_task task;
  cp_error e;
  if (cp_task_parse(synth_task_json, strlen(synth_task_json), NULL, &task, &e)) _exit(1);
  task.weight = 1.0;
  cp_store *st;
  char msg[512];
  if (cp_store_open(db, 0, &st, msg, sizeof msg)) _exit(1);
  synth_grid g = field();
  cp_search_problem p = synth_grid_problem(&g);
  double x0[2] = {0, 0};
  cp_plan_options o = cp_plan_defaults();
  o.method = "astar";
  cp_plan_result r;
  cp_plan_status s = cp_plan_search(st, &task, &p, x0, &o, &r, &e);
  cp_store_close(st);
  if (s == CP_PLAN_SOLVED) _exit(0);
  if (s == CP_PLAN_FAILED && strstr(e.msg, db)) _exit(10);
  _exit(1);
}

Test(store, a_full_disk_fails_cleanly_and_loses_nothing) {
  char *path = synth_temp_db();
  {
    cp_store *st = open_store(path);
    cp_store_close(st);
  }
  pid_t pid = spawn_search(path, 96 * 1024);
  int wst;
  waitpid(pid, &wst, 0);
  cr_assert(WIFEXITED(wst) && WEXITSTATUS(wst) == 10,
            "the search should fail with a message (status %d)", wst);
  sqlite3 *db;
  sqlite3_open(path, &db);
  sqlite3_stmt *q;
  sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &q, NULL);
  cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
  cr_assert_str_eq((const char *)sqlite3_column_text(q, 0), "ok");
  sqlite3_finalize(q);
  long long n1 = synth_query_int(db, "SELECT count(*) FROM nodes");
  cr_assert(n1 > 0, "batches before the disk filled are kept");
  cr_assert_eq(synth_query_int(db, "SELECT max(id) + 1 FROM nodes"), n1);
  unsigned long long before = synth_rows_digest(db, n1);
  /* With room again, the run resumes and finishes. */
  cp_task task;
  synth_load_task(&task);
  task.weight = 1.0;
  cp_plan_result r = resume_field(path, &task);
  cr_assert_eq(synth_rows_digest(db, n1), before);
  cr_assert_eq(synth_query_int(db, "SELECT max(id) + 1 FROM nodes"), r.nodes);
  sqlite3_close(db);
  cp_task_free(&task);
  unlink(path);
  free(path);
}

Test(store, two_processes_write_one_database) {
  char *path = synth_temp_db();
  {
    cp_store *st = open_store(path);
    cp_store_close(st);
  }
  pid_t a = spawn_search(path, 0), b = spawn_search(path, 0);
  int sa, sb;
  waitpid(a, &sa, 0);
  waitpid(b, &sb, 0);
  cr_assert(WIFEXITED(sa) && WEXITSTATUS(sa) == 0, "first: %d", sa);
  cr_assert(WIFEXITED(sb) && WEXITSTATUS(sb) == 0, "second: %d", sb);
  sqlite3 *db;
  sqlite3_open(path, &db);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM searches WHERE"
                                   " status = 'solved'"), 2);
  cr_assert_eq(synth_query_int(db, "SELECT count(DISTINCT nodes) FROM searches"), 1,
               "both runs stored the same search in full");
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM nodes"),
               2 * synth_query_int(db, "SELECT nodes FROM searches LIMIT 1"));
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM tasks"), 1);
  sqlite3_close(db);
  unlink(path);
  free(path);
}
