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

#include "planner/store/assembly.h"
#include "planner/plan/plan.h"
#include "planner/store/store.h"
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

static void assert_ok(sqlite3 *db, const char *pragma) {
  char *v = query_text(db, pragma);
  cr_assert_str_eq(v, "ok", "%s", pragma);
  free(v);
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

/* cp_store_set_progress: the caller's function runs while the store
 * writes (planner/plan/mpi.c looks for the workers' answers in it during
 * rank 0's commits), and changes nothing of what is written; set to NULL
 * it is no longer called. */
static void count_call(void *ctx) { ++*(long *)ctx; }

static long long maze_run(const char *path, long *calls, int every) {
  cp_task task;
  synth_load_task(&task);
  task.weight = 1.0;
  cp_store *st = open_store(path);
  if (calls) cp_store_set_progress(st, every, count_call, calls);
  synth_grid g = synth_maze_grid();
  cp_search_problem p = synth_grid_problem(&g);
  double x0[2] = {g.start[0], g.start[1]};
  cp_plan_options o = cp_plan_defaults();
  o.method = "astar";
  cp_plan_result r;
  cp_error e;
  cr_assert_eq(cp_plan_search(st, &task, &p, x0, &o, &r, &e), CP_PLAN_SOLVED,
               "%s", e.msg);
  if (calls) {
    long before = *calls;
    cr_assert_gt(before, 0, "called while the run was written");
    cp_store_set_progress(st, every, NULL, NULL);
    cr_assert_eq(cp_plan_search(st, &task, &p, x0, &o, &r, &e),
                 CP_PLAN_SOLVED, "%s", e.msg);
    cr_assert_eq(*calls, before, "not called once cleared");
  }
  cp_store_close(st);
  cp_task_free(&task);
  return r.nodes;
}

Test(store, a_progress_function_runs_during_writes_and_changes_nothing) {
  char *a = synth_temp_db(), *b = synth_temp_db();
  long calls = 0;
  long long n = maze_run(a, NULL, 0);
  cr_assert_eq(maze_run(b, &calls, 10), n);
  sqlite3 *da = synth_open_db(a), *db = synth_open_db(b);
  cr_assert_eq(synth_assert_same_run(da, 1, db, 1, "progress function"), n);
  sqlite3_close(da);
  sqlite3_close(db);
  unlink(a);
  unlink(b);
  free(a);
  free(b);
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
  /* Sessions: two for the resumed run, one for the fresh one (issue 21). */
  sqlite3 *db;
  sqlite3_open(path, &db);
  char sql[96];
  snprintf(sql, sizeof sql, "SELECT sessions FROM searches WHERE id = %lld", (long long)r1.run_id);
  cr_assert_eq(synth_query_int(db, sql), 2);
  snprintf(sql, sizeof sql, "SELECT sessions FROM searches WHERE id = %lld", (long long)r3.run_id);
  cr_assert_eq(synth_query_int(db, sql), 1);
  sqlite3_close(db);
  cp_task_free(&task);
  unlink(path);
  free(path);
}


/* The field search in path to its end (an optimal plan): resumed, or a
 * new astar run committing every 16 expansions, its WAL checkpointed as
 * cp_store_set_checkpoints(pages) says (pages < 0: the store's default)
 * and the checkpoints counted in *ck (NULL: not). */
static cp_plan_result field_to_the_end(const char *path, const cp_task *task,
                                       int resume, int pages,
                                       cp_store_checkpoint_stats *ck) {
  cp_store *st = open_store(path);
  if (pages >= 0)
    cr_assert_eq(cp_store_set_checkpoints(st, pages), CP_STORE_OK);
  synth_grid g = field();
  cp_search_problem p = synth_grid_problem(&g);
  double x0[2] = {0, 0};
  cp_plan_options o = cp_plan_defaults();
  o.resume = resume;
  if (!resume) {
    o.method = "astar";
    o.batch = 16;
  }
  cp_plan_result r;
  cp_error e;
  cr_assert_eq(cp_plan_search(st, task, &p, x0, &o, &r, &e), CP_PLAN_SOLVED,
               "%s", e.msg);
  cr_assert_eq(r.resumed, resume);
  cr_assert_float_eq(r.cost, synth_grid_dijkstra(&g), 1e-12);
  if (ck) {
    cp_store_checkpoint_wait(st);
    cp_store_checkpoints(st, ck);
  }
  cp_store_close(st);
  return r;
}

static cp_plan_result resume_field(const char *path, const cp_task *task) {
  return field_to_the_end(path, task, 1, -1, NULL);
}

/* A search killed (SIGKILL) while it writes, then resumed: nothing
 * committed is lost or duplicated. ckpt_pages is the writer's
 * cp_store_set_checkpoints: 0 SQLite's checkpoints inside the commits, > 0
 * the helper thread's (a small value: many checkpoints, and the process
 * may be killed during one). */
static void sigkill_then_resume(int ckpt_pages) {
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
    if (cp_store_set_checkpoints(st, ckpt_pages)) _exit(3);
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

Test(store, sigkill_then_resume_loses_and_duplicates_nothing) {
  sigkill_then_resume(0);
}

Test(store, sigkill_during_background_checkpoints_loses_nothing) {
  sigkill_then_resume(4);
}

/* The field search written with checkpoints of every `pages` (0: SQLite's
 * own, inside the commits); the checkpoint counts in *ck. */
static long long field_run(const char *path, int pages,
                           cp_store_checkpoint_stats *ck) {
  cp_task task;
  synth_load_task(&task);
  task.weight = 1.0;
  cp_plan_result r = field_to_the_end(path, &task, 0, pages, ck);
  cp_task_free(&task);
  return r.nodes;
}

static int file_exists(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0;
}

/* cp_store_set_checkpoints: a helper thread checkpoints the WAL while the
 * search writes (the writer's commits never do), the rows are those of
 * SQLite's own checkpoints, and closing leaves the whole database in its
 * file: the WAL is gone, and the file copied alone holds every node. */
Test(store, background_checkpoints_leave_a_complete_file_at_close) {
  char *a = synth_temp_db(), *b = synth_temp_db();
  cp_store_checkpoint_stats ca, cb;
  long long n = field_run(a, 0, &ca);
  cr_assert_eq(ca.passive + ca.restarts + ca.failed, 0, "no helper thread");
  cr_assert_eq(field_run(b, 4, &cb), n);
  cr_assert_gt(n, 1000);
  cr_assert_gt(cb.passive + cb.restarts, 0, "the helper checkpointed");
  cr_assert_geq(cb.wal_max, 4);
  cr_assert_gt(cb.seconds, 0);
  cr_assert(cb.cpu >= 0 && cb.cpu <= cb.seconds + 0.01, "CPU %g of %g s",
            cb.cpu, cb.seconds);
  char wal[600], copy[600];
  snprintf(wal, sizeof wal, "%s-wal", b);
  cr_assert(!file_exists(wal), "the WAL is checkpointed and removed at close");
  /* The main file alone: every node and the plan. */
  snprintf(copy, sizeof copy, "%s.copy", b);
  FILE *in = fopen(b, "rb"), *out = fopen(copy, "wb");
  cr_assert(in && out);
  char buf[65536];
  size_t k;
  while ((k = fread(buf, 1, sizeof buf, in)) > 0)
    cr_assert_eq(fwrite(buf, 1, k, out), k);
  fclose(in);
  fclose(out);
  sqlite3 *dc = synth_open_db(copy);
  assert_ok(dc, "PRAGMA integrity_check");
  cr_assert_eq(synth_query_int(dc, "SELECT count(*) FROM nodes"), n);
  cr_assert_eq(synth_query_int(dc, "SELECT count(*) FROM plans"), 1);
  sqlite3 *da = synth_open_db(a);
  cr_assert_eq(synth_assert_same_run(da, 1, dc, 1, "background checkpoints"),
               n);
  sqlite3_close(da);
  sqlite3_close(dc);
  synth_remove_db(strdup(copy));
  synth_remove_db(a);
  synth_remove_db(b);
}

/* An in-memory store has no WAL: nothing to checkpoint, no thread. */
Test(store, an_in_memory_store_has_no_checkpoints) {
  cp_store *st = open_store(":memory:");
  cr_assert_eq(cp_store_set_checkpoints(st, 4), CP_STORE_OK);
  cp_store_checkpoint_stats ck;
  cp_store_checkpoint_wait(st);
  cp_store_checkpoints(st, &ck);
  cr_assert_eq(ck.passive + ck.restarts + ck.failed + ck.wal_max, 0);
  cp_store_close(st);
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
  /* Other versions and applications: the tests below. */
  /* A directory is not a database. */
  cr_assert_eq(cp_store_open("/", 0, &st, msg, sizeof msg), CP_STORE_BAD_FILE,
               "%s", msg);
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
  cp_store_set_busy_timeout(st, 0.2);
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
  /* Say why in the test's log (the parent sees only the status). */
  fprintf(stderr, "spawn_search: status %d: %s\n", (int)s, e.msg);
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

/* ---- one schema, stamped, migrated, created atomically (issue 21) ----- */

/* The file's bytes (malloc'd; *len its size). */
static char *file_bytes(const char *path, size_t *len) {
  char *b = cpt_read_file(path, len);
  cr_assert(b, "cannot read %s", path);
  return b;
}

Test(store, two_creators_of_a_missing_file_both_succeed) {
  cp_task task;
  synth_load_task(&task);
  for (int trial = 0; trial < 25; ++trial) {
    char *path = synth_temp_db();
    int go[2];
    cr_assert_eq(pipe(go), 0);
    pid_t kid[2];
    for (int k = 0; k < 2; ++k) {
      if ((kid[k] = fork()) == 0) {
        close(go[1]);
        char c;
        if (read(go[0], &c, 1) < 0) _exit(3); /* both start together */
        cp_store *st;
        char msg[512];
        int64_t tid;
        if (cp_store_open(path, 0, &st, msg, sizeof msg)) {
          fprintf(stderr, "trial %d, process %d: %s\n", trial, k, msg);
          _exit(1);
        }
        cp_store_status s = cp_store_task(st, &task, NULL, &tid);
        if (s) fprintf(stderr, "trial %d, process %d: %s\n", trial, k, cp_store_message(st));
        cp_store_close(st);
        _exit(s ? 2 : 0);
      }
    }
    close(go[0]);
    close(go[1]); /* EOF wakes both readers at once */
    for (int k = 0; k < 2; ++k) {
      int ws;
      waitpid(kid[k], &ws, 0);
      cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0,
                "trial %d: creator %d failed (status %d)", trial, k, ws);
    }
    sqlite3 *db;
    cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
    cr_assert_eq(synth_query_int(db, "PRAGMA user_version"), CP_STORE_SCHEMA_VERSION);
    cr_assert_eq(synth_query_int(db, "PRAGMA application_id"), CP_STORE_APPLICATION_ID);
    cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM tasks"), 1);
    cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM enums"), 9);
    char *mode = query_text(db, "PRAGMA journal_mode");
    cr_assert_str_eq(mode, "wal");
    free(mode);
    sqlite3_close(db);
    synth_remove_db(path);
  }
  cp_task_free(&task);
}

/* Every way of opening refuses the file (for reading too unless
 * writes_only) and leaves its bytes as they were. */
static void refused_untouched_by(const char *path, const char *what, int writes_only) {
  size_t n0, n1;
  char *before = file_bytes(path, &n0);
  char msg[512];
  cp_store *st;
  for (int ro = 0; ro < 2 - writes_only; ++ro) {
    cr_assert_eq(cp_store_open(path, ro, &st, msg, sizeof msg), CP_STORE_BAD_FILE,
                 "read_only %d: %s", ro, msg);
    cr_assert_null(st);
    cr_assert(strstr(msg, path) && strstr(msg, what), "%s", msg);
  }
  cp_scene sc;
  memset(&sc, 0, sizeof sc);
  cp_assembly_result res;
  memset(&res, 0, sizeof res);
  cp_error err;
  cr_assert_eq(cp_assembly_store(path, "x.json", &sc, &res, 6, NULL, &err), -1);
  cr_assert_str_eq(err.where, "bad_file");
  cr_assert(strstr(err.msg, what), "%s", err.msg);
  char *after = file_bytes(path, &n1);
  cr_assert(n0 == n1 && !memcmp(before, after, n0), "%s changed", path);
  free(before);
  free(after);
}

static void refused_untouched(const char *path, const char *what) {
  refused_untouched_by(path, what, 0);
}

Test(store, foreign_and_other_version_files_are_refused_untouched) {
  char *path = synth_temp_db();
  sqlite3 *db;
  sqlite3_open(path, &db);
  sqlite3_exec(db, "CREATE TABLE mine(x); INSERT INTO mine VALUES (42);"
               " PRAGMA application_id = 7;", NULL, NULL, NULL);
  sqlite3_close(db);
  refused_untouched(path, "another application (application_id 7");
  unlink(path);
  /* Unstamped with a table of its own: not complan's either. */
  sqlite3_open(path, &db);
  sqlite3_exec(db, "CREATE TABLE assembly_runs(x); CREATE TABLE mine(y);", NULL, NULL, NULL);
  sqlite3_close(db);
  refused_untouched(path, "another application (application_id 0");
  unlink(path);
  /* A complan file of a later schema version. */
  sqlite3_open(path, &db);
  char sql[160];
  snprintf(sql, sizeof sql, "CREATE TABLE tasks(x); PRAGMA user_version = 99;"
           " PRAGMA application_id = %d;", CP_STORE_APPLICATION_ID);
  sqlite3_exec(db, sql, NULL, NULL, NULL);
  sqlite3_close(db);
  refused_untouched(path, "schema version 99");
  unlink(path);
  /* Not SQLite at all. */
  FILE *f = fopen(path, "w");
  fputs("name,value\nx,1\n", f);
  fclose(f);
  refused_untouched(path, "not a complan SQLite database");
  synth_remove_db(path);
}

Test(store, a_damaged_file_is_refused_before_writing) {
  char *path = synth_temp_db();
  int ws;
  waitpid(spawn_search(path, 0), &ws, 0); /* a few hundred nodes */
  cr_assert(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
  sqlite3 *db;
  sqlite3_open(path, &db);
  cr_assert_eq(sqlite3_exec(db, "PRAGMA wal_checkpoint(TRUNCATE); PRAGMA journal_mode = DELETE",
                            NULL, NULL, NULL), SQLITE_OK);
  long long root = synth_query_int(
      db, "SELECT rootpage FROM sqlite_master WHERE name = 'sqlite_autoindex_nodes_1'");
  long long psize = synth_query_int(db, "PRAGMA page_size");
  sqlite3_close(db);
  /* The nodes' primary-key index root page overwritten with junk. */
  FILE *f = fopen(path, "r+b");
  cr_assert(f);
  fseek(f, (long)((root - 1) * psize + 8), SEEK_SET);
  for (int i = 0; i < 64; ++i) fputc(0x5a, f);
  fclose(f);
  refused_untouched_by(path, "damaged: PRAGMA quick_check", 1);
  synth_remove_db(path);
}

Test(store, version_1_files_are_migrated_in_one_transaction) {
  char *path = synth_temp_db();
  sqlite3 *db;
  sqlite3_open(path, &db);
  char sql[4096];
  snprintf(sql, sizeof sql,
           "CREATE TABLE tasks (id INTEGER PRIMARY KEY, hash TEXT NOT NULL UNIQUE,"
           " text TEXT NOT NULL, scene TEXT NOT NULL, scene_dir TEXT, path TEXT,"
           " created TEXT NOT NULL DEFAULT (datetime('now')));"
           "CREATE TABLE searches (id INTEGER PRIMARY KEY,"
           " task_id INTEGER NOT NULL REFERENCES tasks(id), planner TEXT NOT NULL,"
           " options TEXT NOT NULL, seed INTEGER NOT NULL, status TEXT NOT NULL"
           " CHECK (status IN ('running', 'solved', 'not_found', 'limit', 'error')),"
           " state_size INTEGER NOT NULL, started TEXT NOT NULL DEFAULT"
           " (datetime('now')), updated TEXT, seconds REAL NOT NULL DEFAULT 0,"
           " sessions INTEGER NOT NULL DEFAULT 1, nodes INTEGER NOT NULL DEFAULT 0,"
           " expansions INTEGER NOT NULL DEFAULT 0, iterations INTEGER NOT NULL"
           " DEFAULT 0, duplicates INTEGER NOT NULL DEFAULT 0, rejected INTEGER NOT"
           " NULL DEFAULT 0, steps INTEGER NOT NULL DEFAULT 0, lcp_solves INTEGER"
           " NOT NULL DEFAULT 0, pivots INTEGER NOT NULL DEFAULT 0, fallbacks"
           " INTEGER NOT NULL DEFAULT 0, warm_steps INTEGER NOT NULL DEFAULT 0, rng BLOB);"
           "CREATE TABLE nodes (search_id INTEGER NOT NULL REFERENCES searches(id),"
           " id INTEGER NOT NULL, parent INTEGER, depth INTEGER NOT NULL, time REAL"
           " NOT NULL, cost REAL NOT NULL, state BLOB NOT NULL, action INTEGER,"
           " inputs BLOB, duration REAL, dt REAL, stepper TEXT, steps INTEGER NOT"
           " NULL DEFAULT 0, lcp_solves INTEGER NOT NULL DEFAULT 0, pivots INTEGER"
           " NOT NULL DEFAULT 0, fallbacks INTEGER NOT NULL DEFAULT 0, warm_steps"
           " INTEGER NOT NULL DEFAULT 0, outcome TEXT NOT NULL, message TEXT, flags"
           " INTEGER NOT NULL DEFAULT 0, goal_distance REAL, warm BLOB, PRIMARY KEY"
           " (search_id, id), FOREIGN KEY (search_id, parent) REFERENCES"
           " nodes(search_id, id));"
           "CREATE TABLE plans (id INTEGER PRIMARY KEY, search_id INTEGER NOT NULL"
           " REFERENCES searches(id), node INTEGER NOT NULL, cost REAL NOT NULL,"
           " length INTEGER NOT NULL, duration REAL NOT NULL, created TEXT NOT NULL"
           " DEFAULT (datetime('now')), FOREIGN KEY (search_id, node) REFERENCES"
           " nodes(search_id, id));"
           "CREATE TABLE assembly_runs (id INTEGER PRIMARY KEY, created TEXT, scene"
           " TEXT NOT NULL, status TEXT NOT NULL, parts INTEGER NOT NULL, directions"
           " INTEGER NOT NULL, explored INTEGER NOT NULL, stability_checks INTEGER"
           " NOT NULL, seconds REAL NOT NULL, blocked TEXT);"
           "INSERT INTO tasks (hash, text, scene) VALUES ('0123456789abcdef', '{}', '{}');"
           "INSERT INTO searches (task_id, planner, options, seed, status, state_size,"
           " seconds, nodes) VALUES (1, 'astar', '{}', 5, 'limit', 2, 1.5, 1);"
           "INSERT INTO nodes (search_id, id, depth, time, cost, state, outcome)"
           " VALUES (1, 0, 0, 0, 0, zeroblob(16), 'ok');"
           "INSERT INTO plans (search_id, node, cost, length, duration) VALUES (1, 0, 0, 0, 0);"
           "INSERT INTO assembly_runs (scene, status, parts, directions, explored,"
           " stability_checks, seconds) VALUES ('t.json', 'found', 3, 6, 9, 9, 0.1);"
           "PRAGMA user_version = 1; PRAGMA application_id = %d;",
           CP_STORE_APPLICATION_ID);
  cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
  sqlite3_close(db);
  /* Read-only: read as it is, not migrated. */
  cp_store *st;
  char msg[512];
  cr_assert_eq(cp_store_open(path, 1, &st, msg, sizeof msg), CP_STORE_OK, "%s", msg);
  cp_store_run run;
  cr_assert_eq(cp_store_load_run(st, 1, &run), CP_STORE_OK, "%s", cp_store_message(st));
  free(run.options);
  cp_store_close(st);
  sqlite3_open(path, &db);
  cr_assert_eq(synth_query_int(db, "PRAGMA user_version"), 1);
  sqlite3_close(db);
  /* Writing migrates. */
  st = open_store(path);
  cp_store_close(st);
  sqlite3_open(path, &db);
  cr_assert_eq(synth_query_int(db, "PRAGMA user_version"), CP_STORE_SCHEMA_VERSION);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM searches WHERE id = 1 AND"
                                   " seed = 5 AND status = 'limit' AND seconds = 1.5"), 1);
  cr_assert_eq(synth_query_int(db, "SELECT inputs_stored FROM tasks WHERE id = 1"), 0);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM assembly_runs"), 1);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM blobs"), 0);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM enums"), 9);
  assert_ok(db, "PRAGMA integrity_check");
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
  /* The new status is accepted, the foreign keys still hold. */
  cr_assert_eq(sqlite3_exec(db, "UPDATE searches SET status = 'interrupted'", NULL, NULL, NULL),
               SQLITE_OK, "%s", sqlite3_errmsg(db));
  sqlite3_exec(db, "PRAGMA foreign_keys = ON", NULL, NULL, NULL);
  cr_assert_neq(sqlite3_exec(db, "INSERT INTO plans (search_id, node, cost, length, duration)"
                             " VALUES (7, 0, 0, 0, 0)", NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(db);
  synth_remove_db(path);
}

Test(store, an_unstamped_assembly_file_is_adopted) {
  char *path = synth_temp_db();
  sqlite3 *db;
  sqlite3_open(path, &db);
  sqlite3_exec(db, "CREATE TABLE assembly_runs (id INTEGER PRIMARY KEY, created TEXT,"
               " scene TEXT NOT NULL, status TEXT NOT NULL, parts INTEGER NOT NULL,"
               " directions INTEGER NOT NULL, explored INTEGER NOT NULL,"
               " stability_checks INTEGER NOT NULL, seconds REAL NOT NULL, blocked TEXT);"
               "INSERT INTO assembly_runs (scene, status, parts, directions, explored,"
               " stability_checks, seconds) VALUES ('t.json', 'found', 3, 6, 9, 9, 0.1);",
               NULL, NULL, NULL);
  sqlite3_close(db);
  char msg[512];
  cp_store *st;
  cr_assert_eq(cp_store_open(path, 1, &st, msg, sizeof msg), CP_STORE_BAD_FILE);
  cr_assert(strstr(msg, "only assembly runs"), "%s", msg);
  st = open_store(path);
  cp_store_close(st);
  sqlite3_open(path, &db);
  cr_assert_eq(synth_query_int(db, "PRAGMA application_id"), CP_STORE_APPLICATION_ID);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM assembly_runs"), 1);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM searches"), 0);
  sqlite3_close(db);
  synth_remove_db(path);
}

Test(store, a_fifo_or_directory_is_refused_at_once) {
  char dir[] = "/tmp/cp_fifoXXXXXX";
  cr_assert(mkdtemp(dir));
  char fifo[64];
  snprintf(fifo, sizeof fifo, "%s/db", dir);
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  char msg[512];
  cp_store *st;
  for (int ro = 0; ro < 2; ++ro) {
    cr_assert_eq(cp_store_open(fifo, ro, &st, msg, sizeof msg), CP_STORE_BAD_FILE);
    cr_assert(strstr(msg, fifo) && strstr(msg, "a FIFO"), "%s", msg);
    cr_assert_eq(cp_store_open(dir, ro, &st, msg, sizeof msg), CP_STORE_BAD_FILE);
    cr_assert(strstr(msg, "a directory"), "%s", msg);
  }
  unlink(fifo);
  rmdir(dir);
}

/* ---- hostile databases (issue 21) ------------------------------------ */

/* A* over the field into st: max_nodes (0: the task's), resumed or not. */
static cp_plan_status field_astar(cp_store *st, const cp_task *task, long max_nodes,
                                  int resume, cp_plan_result *r, cp_error *e) {
  synth_grid g = field();
  cp_search_problem p = synth_grid_problem(&g);
  double x0[2] = {0, 0};
  cp_plan_options o = cp_plan_defaults();
  o.method = "astar";
  o.max_nodes = max_nodes;
  o.resume = resume;
  return cp_plan_search(st, task, &p, x0, &o, r, e);
}

Test(store, hostile_rows_are_refused_naming_the_node) {
  cp_task task;
  synth_load_task(&task);
  task.weight = 1.0;
  char *path = synth_temp_db();
  cp_store *st = open_store(path);
  cp_plan_result r;
  cp_error e;
  cr_assert_eq(field_astar(st, &task, 50, 0, &r, &e), CP_PLAN_LIMIT);
  cp_store_close(st);
  sqlite3 *db;
  sqlite3_open(path, &db);
  /* A cycle: node 10's parent made a later node. Resume refuses it. */
  cr_assert_eq(sqlite3_exec(db, "UPDATE nodes SET parent = 30 WHERE id = 10", NULL, NULL, NULL),
               SQLITE_OK);
  st = open_store(path);
  cr_assert_eq(field_astar(st, &task, 0, 1, &r, &e), CP_PLAN_BAD_INPUT);
  cr_assert(strstr(e.msg, "node 10 ") && strstr(e.msg, "not an earlier node"), "%s", e.msg);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM searches"), 1, "nothing started");
  sqlite3_exec(db, "UPDATE nodes SET parent = (SELECT parent FROM nodes WHERE id = 11)"
               " WHERE id = 10", NULL, NULL, NULL);
  /* Short blobs: inputs, then state. */
  cr_assert_eq(sqlite3_exec(db, "UPDATE nodes SET inputs = x'00' WHERE id = 10", NULL, NULL, NULL),
               SQLITE_OK);
  cp_search_node node;
  double x[8], v[8];
  int nv;
  cr_assert_eq(cp_store_load_node(st, 1, 10, &node, x, 8, v, task.n_inputs, &nv),
               CP_STORE_BAD_FILE);
  cr_assert(strstr(cp_store_message(st), "node 10 of run 1: inputs of 1 bytes"), "%s",
            cp_store_message(st));
  cr_assert_eq(sqlite3_exec(db, "UPDATE nodes SET state = x'' WHERE id = 10", NULL, NULL, NULL),
               SQLITE_OK);
  cr_assert_eq(cp_store_load_node(st, 1, 10, &node, x, 8, NULL, 0, &nv), CP_STORE_BAD_FILE);
  cr_assert(strstr(cp_store_message(st), "node 10 of run 1: state of 0 bytes"), "%s",
            cp_store_message(st));
  cp_store_close(st);
  sqlite3_close(db);
  cp_task_free(&task);
  synth_remove_db(path);
}
