/* The planning loop's budgets, crash windows and accounting (issue 21
 * items 2 and 4, M1, M4; issue 20 items 4 and 5), on synthetic problems and
 * the bundled push task:
 * - a search stopped by its time limit after every single action (or
 *   inside an iteration, or inside a long action) resumes into exactly the
 *   search that ran uninterrupted: same nodes, flags, costs and state bits;
 * - SST interrupted at several node counts resumes into the uninterrupted
 *   tree (the witnesses are stored), and does not without them;
 * - the cancel flag stops, commits and stores the run "interrupted";
 * - a kill right after the run row exists leaves a resumable run;
 * - a search whose space ran out with failed expansions is not not_found,
 *   and failure messages are stored whole;
 * - a process killed at its k-th file write, for every k, leaves a database
 *   that passes integrity_check, resumes, and replays its plan bitwise.
 * No test reads a wall clock: the time limits run on injected clocks. */
// No Criterion .timeout in this file: Criterion 2.4's runner leaks under
// LeakSanitizer when tests with timeouts run; meson's timeout for the
// executable (tests/planner/meson.build) bounds the run instead.
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

#include "planner/plan/plan.h"
#include "planner/replay/replay.h"
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

static void assert_integrity(sqlite3 *db) {
  sqlite3_stmt *q;
  cr_assert_eq(sqlite3_prepare_v2(db, "PRAGMA integrity_check", -1, &q, NULL),
               SQLITE_OK);
  cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
  cr_assert_str_eq((const char *)sqlite3_column_text(q, 0), "ok");
  sqlite3_finalize(q);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM pragma_foreign_key_check"),
               0);
}

/* Digest of one run's nodes: id, parent, flags, outcome, cost and state
 * bits, in id order; *n receives the count. */
/* Digest of run's nodes with id < below (flags left out when no_flags). */
static unsigned long long run_digest_of(sqlite3 *db, long long run,
                                        long long below, int no_flags,
                                        long long *n) {
  sqlite3_stmt *q;
  cr_assert_eq(sqlite3_prepare_v2(
                   db,
                   "SELECT id, ifnull(parent, -1), flags * ?3, outcome, cost,"
                   " state FROM nodes WHERE search_id = ?1 AND id < ?2"
                   " ORDER BY id",
                   -1, &q, NULL),
               SQLITE_OK);
  sqlite3_bind_int64(q, 1, run);
  sqlite3_bind_int64(q, 2, below);
  sqlite3_bind_int64(q, 3, no_flags ? 0 : 1);
  unsigned long long h = 1469598103934665603ull;
  *n = 0;
  while (sqlite3_step(q) == SQLITE_ROW) {
    long long v[3] = {sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1),
                      sqlite3_column_int64(q, 2)};
    double c = sqlite3_column_double(q, 4);
    const unsigned char *parts[4] = {(const void *)v, (const void *)&c,
                                     sqlite3_column_text(q, 3),
                                     sqlite3_column_blob(q, 5)};
    size_t lens[4] = {sizeof v, sizeof c, (size_t)sqlite3_column_bytes(q, 3),
                      (size_t)sqlite3_column_bytes(q, 5)};
    for (int k = 0; k < 4; ++k)
      for (size_t i = 0; i < lens[k]; ++i) h = (h ^ parts[k][i]) * 1099511628211ull;
    ++*n;
  }
  sqlite3_finalize(q);
  return h;
}

static unsigned long long run_digest(sqlite3 *db, long long run, long long *n) {
  return run_digest_of(db, run, 1LL << 62, 0, n);
}

static long long run_int(sqlite3 *db, const char *col, long long run) {
  char sql[256];
  snprintf(sql, sizeof sql, "SELECT %s FROM searches WHERE id = %lld", col, run);
  return synth_query_int(db, sql);
}

static char *run_text(sqlite3 *db, const char *col, long long run) {
  char sql[256];
  snprintf(sql, sizeof sql, "SELECT %s FROM searches WHERE id = %lld", col, run);
  sqlite3_stmt *q;
  cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
  cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
  char *t = strdup((const char *)sqlite3_column_text(q, 0));
  sqlite3_finalize(q);
  return t;
}

static sqlite3 *open_db(const char *path) {
  sqlite3 *db;
  cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
  sqlite3_busy_timeout(db, 5000);
  return db;
}

/* A clock that advances by one second at every reading. */
static double ticking(void *ctx) { return (double)++*(long *)ctx; }

/* A clock that reads a counter the test advances (expansions). */
static double counter_clock(void *ctx) { return (double)*(long *)ctx; }

/* Runs a and b of the database at path have the same nodes (flags, costs
 * and state bits too); the database passes its checks. */
static void assert_same_runs(const char *path, long long a, long long b) {
  sqlite3 *db = open_db(path);
  long long na, nb;
  unsigned long long da = run_digest(db, a, &na), db_ = run_digest(db, b, &nb);
  cr_assert_eq(na, nb);
  cr_assert(na > 0);
  cr_assert_eq(da, db_, "run %lld is run %lld", b, a);
  assert_integrity(db);
  sqlite3_close(db);
}

/* A test's task (synth_task_json), fresh database and plan options. */
typedef struct fixture {
  cp_task task;
  char *path;
  cp_store *st;
  cp_plan_options o;
} fixture;

static void fixture_open(fixture *f, const char *method) {
  synth_load_task(&f->task);
  f->task.weight = 1.0;
  f->path = synth_temp_db();
  f->st = open_store(f->path);
  f->o = cp_plan_defaults();
  f->o.method = method;
}

static void fixture_close(fixture *f) {
  if (f->st) cp_store_close(f->st);
  cp_task_free(&f->task);
  synth_remove_db(f->path);
}

/* --- time limits per action ------------------------------------------------ */

Test(loop, astar_stops_after_one_action_and_resumes_into_the_same_search) {
  fixture f;
  fixture_open(&f, "astar");
  synth_grid g = synth_maze_grid();
  cp_search_problem p = synth_grid_problem(&g);
  double x0[2] = {0, 0};
  cp_plan_options o = f.o;
  cp_plan_result ref, r;
  cp_error e;
  cr_assert_eq(cp_plan_search(f.st, &f.task, &p, x0, &o, &ref, &e),
               CP_PLAN_SOLVED, "%s", e.msg);
  cr_assert(ref.stats.expansions > 20);

  /* The same search, each session's time limit spent from its start: every
   * session simulates exactly one action, commits and stops. */
  long ticks = 0;
  o.clock = ticking;
  o.clock_ctx = &ticks;
  o.max_seconds = 1e-9;
  int sessions = 0;
  long expansions = 0;
  cp_plan_status s;
  do {
    s = cp_plan_search(f.st, &f.task, &p, x0, &o, &r, &e);
    cr_assert(s == CP_PLAN_LIMIT || s == CP_PLAN_SOLVED, "%s: %s",
              cp_plan_status_name(s), e.msg);
    if (sessions == 0) {
      cr_assert_eq(s, CP_PLAN_LIMIT);
      cr_assert_eq(r.stats.expansions, 1, "exactly one action");
      cr_assert_eq(r.nodes, 2);
      sqlite3 *db = open_db(f.path);
      char *status = run_text(db, "status", r.run_id);
      cr_assert_str_eq(status, "limit");
      free(status);
      cr_assert_eq(run_int(db, "nodes", r.run_id), 2);
      cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM nodes WHERE"
                                       " search_id = 2"), 2);
      assert_integrity(db);
      sqlite3_close(db);
    } else {
      cr_assert_eq(r.resumed, 1);
      cr_assert(r.stats.expansions - expansions <= 1, "one action a session");
    }
    expansions = r.stats.expansions;
    o.resume = 1;
  } while (s == CP_PLAN_LIMIT && ++sessions < 10000);
  /* The goal test at generation: the session that creates the goal node
   * ends with its plan (the uninterrupted run went on to pop it). Up to
   * there the sessions made the uninterrupted run's nodes (flags aside:
   * the uninterrupted run expanded some of them later). */
  cr_assert_eq(s, CP_PLAN_SOLVED);
  cr_assert_eq(sessions + 1, r.stats.expansions, "one session per action");
  cr_assert_eq(r.run_id, 2);
  cr_assert_leq(r.nodes, ref.nodes);
  cr_assert_eq(r.goal_node, ref.goal_node);
  cr_assert_eq(r.goal_node, r.nodes - 1, "ended when the goal was created");
  cr_assert(r.cost == ref.cost);
  sqlite3 *db = open_db(f.path);
  long long na, nb;
  cr_assert_eq(run_digest_of(db, 1, r.nodes, 1, &na),
               run_digest_of(db, 2, r.nodes, 1, &nb));
  cr_assert_eq(na, r.nodes);
  cr_assert_eq(nb, r.nodes);
  assert_integrity(db);
  sqlite3_close(db);
  fixture_close(&f);
}

/* synth_point with a clock that reads its expansion count. */
typedef struct timed_point {
  synth_point pt; /* first: the point's callbacks take ctx as theirs */
  long *clock;
} timed_point;

Test(loop, rrt_stopped_inside_an_iteration_drops_it_and_resumes_the_same) {
  fixture f;
  fixture_open(&f, "rrt");
  f.task.goal_bias = 0.1;
  f.task.candidates = 8;
  synth_point pt = {0};
  cp_search_problem p = synth_point_problem(&pt);
  double x0[2] = {0.1, 0.1};
  cp_plan_options o = f.o;
  o.has_seed = 1;
  o.seed = 5;
  cp_plan_result ref, r;
  cp_error e;
  cr_assert_eq(cp_plan_search(f.st, &f.task, &p, x0, &o, &ref, &e),
               CP_PLAN_SOLVED, "%s", e.msg);
  /* Time is the expansion count. Each session may spend its time so far
   * plus 12.5 expansions: the first iteration (8 candidates) runs, the
   * second is stopped after its 5th candidate and undone. */
  o.clock = counter_clock;
  o.clock_ctx = &pt.expand_calls;
  cp_plan_status s;
  int sessions = 0;
  long expansions = 0;
  double spent = 0;
  do {
    long calls0 = pt.expand_calls;
    o.max_seconds = spent + 12.5;
    s = cp_plan_search(f.st, &f.task, &p, x0, &o, &r, &e);
    cr_assert(s == CP_PLAN_LIMIT || s == CP_PLAN_SOLVED, "%s", e.msg);
    if (s == CP_PLAN_LIMIT) {
      cr_assert_eq(pt.expand_calls - calls0, 13, "8 kept, 5 undone");
      cr_assert_eq(r.stats.expansions - expansions, 8, "one whole iteration");
    }
    expansions = r.stats.expansions;
    spent = r.seconds;
    o.resume = 1;
  } while (s == CP_PLAN_LIMIT && ++sessions < 10000);
  cr_assert_eq(s, CP_PLAN_SOLVED);
  cr_assert(sessions >= 2);
  cr_assert_eq(r.nodes, ref.nodes);
  cr_assert_eq(r.stats.expansions, ref.stats.expansions);
  cr_assert_eq(r.stats.iterations, ref.stats.iterations);
  cr_assert(r.cost == ref.cost);
  assert_same_runs(f.path, 1, 2);
  fixture_close(&f);
}

/* --- SST resumes bit-identically (M4) ----------------------------------- */

/* SST on the point, max_nodes n, resuming the task's last run when resume. */
static cp_plan_result sst_session(cp_store *st, const cp_task *task, long n,
                                  int resume, long *ticks) {
  synth_point pt = {0};
  cp_search_problem p = synth_point_problem(&pt);
  double x0[2] = {0.1, 0.1};
  cp_plan_options o = cp_plan_defaults();
  o.method = "sst";
  o.has_seed = 1;
  o.seed = 9;
  o.max_nodes = n;
  o.resume = resume;
  if (ticks) { /* the time limit spent from the start: one action */
    o.clock = ticking;
    o.clock_ctx = ticks;
    o.max_seconds = 1e-9;
  }
  cp_plan_result r;
  cp_error e;
  cp_plan_status s = cp_plan_search(st, task, &p, x0, &o, &r, &e);
  cr_assert(s == CP_PLAN_LIMIT || s == CP_PLAN_SOLVED, "%s: %s",
            cp_plan_status_name(s), e.msg);
  return r;
}

Test(loop, sst_interrupted_at_node_counts_resumes_into_the_same_tree) {
  fixture f;
  fixture_open(&f, "sst");
  cp_task task = f.task;
  task.goal_bias = 0.1;
  task.delta_bn = 0.1;
  task.delta_s = 0.03;
  cp_store *st = f.st;
  const char *path = f.path;
  const long N = 1500;
  cp_plan_result ref = sst_session(st, &task, N, 0, NULL);
  /* A goal-steered iteration (task.candidates actions) that the node limit
   * would cut is not started: a limit of n ends with n - candidates < nodes
   * <= n. */
  cr_assert_leq(ref.nodes, N);
  cr_assert_gt(ref.nodes, N - task.candidates);
  cr_assert(ref.goal_node >= 0, "the reference run found a plan");
  sqlite3 *db = open_db(path);
  long long nref;
  unsigned long long dref = run_digest(db, 1, &nref);
  cr_assert_eq(nref, ref.nodes);
  cr_assert(synth_query_int(db, "SELECT count(*) FROM witnesses WHERE"
                                " search_id = 1") > 10);
  cr_assert(synth_query_int(db, "SELECT count(*) FROM nodes WHERE search_id = 1"
                                " AND flags & 8") > 0, "some nodes went inactive");
  /* The first kept goal node: a run stopped before it has no plan and stays
   * resumable. */
  long long first_goal = synth_query_int(
      db, "SELECT min(id) FROM nodes WHERE search_id = 1 AND flags & 32 AND"
          " NOT flags & 4");
  cr_assert(first_goal > 40, "%lld", first_goal);
  /* Interrupted at several node counts (and by the time limit after single
   * actions), then resumed to N. */
  long stops[] = {2, 3, 17, first_goal / 3, first_goal / 2, first_goal - 1};
  cp_plan_result r = sst_session(st, &task, stops[0], 0, NULL);
  long long run = r.run_id;
  long ticks = 0;
  for (int k = 0; k < 3; ++k) { /* three sessions of one action each */
    long before = r.stats.expansions;
    r = sst_session(st, &task, N, 1, &ticks);
    cr_assert_eq(r.run_id, run);
    /* One iteration: one action, or a goal-steered one's candidates. */
    cr_assert(r.stats.expansions == before + 1 ||
                  r.stats.expansions == before + task.candidates,
              "%ld after %ld", r.stats.expansions, before);
  }
  for (size_t k = 1; k < sizeof stops / sizeof *stops; ++k) {
    if (stops[k] <= r.nodes) continue;
    r = sst_session(st, &task, stops[k], 1, NULL);
    cr_assert_eq(r.run_id, run);
    cr_assert_eq(r.status, CP_PLAN_LIMIT);
    cr_assert_leq(r.nodes, stops[k]);
    cr_assert_gt(r.nodes, stops[k] - task.candidates);
  }
  r = sst_session(st, &task, N, 1, NULL);
  cr_assert_eq(r.run_id, run);
  cr_assert_eq(r.nodes, ref.nodes);
  cr_assert(r.cost == ref.cost);
  long long n;
  cr_assert_eq(run_digest(db, run, &n), dref, "the uninterrupted tree");
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM witnesses WHERE"
                                   " search_id = 1"),
               synth_query_int(db, "SELECT count(*) FROM witnesses WHERE"
                                   " search_id = 2"));

  /* Control: an interruption with the witnesses thrown away (as before
   * they were stored) grows another tree (just before the first goal node,
   * the latest a run stays resumable, where the most nodes have gone
   * inactive, so that witnesses rebuilt from the active nodes differ). */
  r = sst_session(st, &task, first_goal - 1, 0, NULL);
  run = r.run_id;
  char sql[128];
  snprintf(sql, sizeof sql, "DELETE FROM witnesses WHERE search_id = %lld", run);
  cr_assert_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
  r = sst_session(st, &task, N, 1, NULL);
  cr_assert_eq(r.run_id, run);
  cr_assert_neq(run_digest(db, run, &n), dref);
  assert_integrity(db);
  sqlite3_close(db);
  fixture_close(&f);
}

/* --- the cancel flag ------------------------------------------------------ */

/* The maze (or another grid) whose expansions can raise a cancel flag
 * after a count, or fail (solver_failed, with a long message) when they
 * move into a column. */
typedef struct wrapped_grid {
  synth_grid g; /* first: the grid's callbacks take ctx as theirs */
  int (*expand)(void *, const double *, double, const void *, size_t, long,
                double *, cp_expansion *);
  long after;   /* raise the flag after this many expansions (-1 never) */
  volatile sig_atomic_t flag;
  int fail_x;   /* moves into this column fail (-1 none) */
} wrapped_grid;

static int wrapped_expand(void *ctx, const double *x, double t,
                          const void *warm, size_t ws, long a, double *y,
                          cp_expansion *info) {
  wrapped_grid *w = ctx;
  int rc = w->expand(ctx, x, t, warm, ws, a, y, info);
  if (w->g.expand_calls == w->after) w->flag = SIGINT;
  if (!rc && info->outcome == CP_EXPAND_OK && (int)y[0] == w->fail_x) {
    info->outcome = CP_EXPAND_SOLVER_FAILED;
    int n = snprintf(info->message, sizeof info->message,
                     "step 1: t = 0.005: the velocity LCP (size 403) was not "
                     "solved: certify: undecided: GLPK finds no solution");
    while (n < 300) info->message[n++] = '.';
    snprintf(info->message + n, sizeof info->message - (size_t)n, "END");
  }
  return rc;
}

static cp_search_problem wrapped_problem(wrapped_grid *w, synth_grid g) {
  w->g = g;
  w->after = -1;
  w->flag = 0;
  w->fail_x = -1;
  cp_search_problem p = synth_grid_problem(&w->g);
  w->expand = p.expand;
  p.expand = wrapped_expand;
  return p;
}

Test(loop, the_cancel_flag_stops_commits_and_the_run_resumes) {
  fixture f;
  fixture_open(&f, "astar");
  wrapped_grid c;
  cp_search_problem p = wrapped_problem(&c, synth_maze_grid());
  c.after = 23;
  double x0[2] = {0, 0};
  cp_plan_options o = f.o;
  o.cancel = &c.flag;
  cp_plan_result r, ref;
  cp_error e;
  cr_assert_eq(cp_plan_search(f.st, &f.task, &p, x0, &o, &r, &e),
               CP_PLAN_INTERRUPTED, "%s", e.msg);
  cr_assert_eq(r.status, CP_PLAN_INTERRUPTED);
  cr_assert_str_eq(cp_plan_status_name(r.status), "interrupted");
  cr_assert_eq(r.stats.expansions, 23, "stopped after the action in progress");
  cr_assert_eq(r.plan_id, -1);
  sqlite3 *db = open_db(f.path);
  char *status = run_text(db, "status", r.run_id);
  cr_assert_str_eq(status, "interrupted");
  free(status);
  cr_assert_eq(run_int(db, "expansions", r.run_id), 23, "committed");
  cr_assert_eq(run_int(db, "nodes", r.run_id),
               synth_query_int(db, "SELECT count(*) FROM nodes"));
  assert_integrity(db);
  /* Resumed (flag down): the same run, to the uninterrupted search's end. */
  c.flag = 0;
  c.after = -1;
  sqlite3_close(db);
  o.resume = 1;
  cr_assert_eq(cp_plan_search(f.st, &f.task, &p, x0, &o, &r, &e),
               CP_PLAN_SOLVED, "%s", e.msg);
  cr_assert_eq(r.resumed, 1);
  cr_assert_eq(r.run_id, 1);
  o.resume = 0;
  cr_assert_eq(cp_plan_search(f.st, &f.task, &p, x0, &o, &ref, &e),
               CP_PLAN_SOLVED);
  assert_same_runs(f.path, 2, 1);
  fixture_close(&f);
}

/* --- the crash window before the first batch ------------------------------ */

Test(loop, a_kill_right_after_the_run_row_leaves_a_resumable_run) {
  fixture f;
  fixture_open(&f, "astar"); /* the schema exists before the fork */
  cp_store_close(f.st);
  f.st = NULL;
  const cp_task task = f.task;
  const char *path = f.path;
  pid_t pid = fork();
  cr_assert(pid >= 0);
  if (pid == 0) {
    cp_store *st;
    char msg[512];
    if (cp_store_open(path, 0, &st, msg, sizeof msg)) _exit(3);
    synth_grid g = synth_maze_grid();
    g.delay_us = 900000; /* the first expansion outlasts the test's poll */
    cp_search_problem p = synth_grid_problem(&g);
    double x0[2] = {0, 0};
    cp_plan_result r;
    cp_error e;
    cp_plan_search(st, &task, &p, x0, &f.o, &r, &e);
    _exit(4);
  }
  /* Killed as soon as the run row is visible: inside its first expansion,
   * before any batch. */
  sqlite3 *db = open_db(path);
  long long runs = 0;
  for (int k = 0; k < 20000 && runs == 0; ++k) {
    sqlite3_stmt *q;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM searches", -1, &q, NULL) ==
        SQLITE_OK) {
      if (sqlite3_step(q) == SQLITE_ROW) runs = sqlite3_column_int64(q, 0);
      sqlite3_finalize(q);
    }
    if (!runs) nanosleep(&(struct timespec){0, 200000L}, NULL);
  }
  kill(pid, SIGKILL);
  int wst;
  waitpid(pid, &wst, 0);
  cr_assert(WIFSIGNALED(wst), "the search ended before it was killed");
  cr_assert_eq(runs, 1);
  assert_integrity(db);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM nodes"), 1,
               "the start node came with the run row");
  cr_assert_eq(synth_query_int(db, "SELECT expansions FROM searches"), 0);
  cp_store *st = open_store(path);
  synth_grid g = synth_maze_grid();
  cp_search_problem p = synth_grid_problem(&g);
  double x0[2] = {0, 0};
  cp_plan_options o = cp_plan_defaults();
  o.resume = 1;
  cp_plan_result r;
  cp_error e;
  cr_assert_eq(cp_plan_search(st, &task, &p, x0, &o, &r, &e), CP_PLAN_SOLVED,
               "%s", e.msg);
  cr_assert_eq(r.resumed, 1);
  cr_assert_eq(r.run_id, 1);
  cr_assert_float_eq(r.cost, synth_grid_dijkstra(&g), 1e-12);
  cp_store_close(st);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM searches"), 1);
  cr_assert_eq(synth_query_int(db, "SELECT max(id) + 1 FROM nodes"), r.nodes);
  assert_integrity(db);
  sqlite3_close(db);
  fixture_close(&f);
}

/* --- failed expansions ---------------------------------------------------- */

static const char *const walled[] = {"...#......", "...#......", "...#......"};

Test(loop, failed_expansions_are_not_not_found_and_messages_are_whole) {
  fixture f;
  fixture_open(&f, "astar");
  cp_task task = f.task;
  cp_store *st = f.st;
  const char *path = f.path;
  /* The goal is behind a wall: the space is finite and runs out. */
  synth_grid g0 = {.w = 10, .h = 3, .rows = walled, .start = {0, 0},
                   .goal = {8, 1}, .cost = {1, 1, 1, 1}};
  wrapped_grid fg;
  cp_search_problem p = wrapped_problem(&fg, g0);
  double x0[2] = {0, 0};
  cp_plan_options o = f.o;
  cp_plan_result r;
  cp_error e;
  /* No expansion fails: not_found, space exhausted. */
  cr_assert_eq(cp_plan_search(st, &task, &p, x0, &o, &r, &e),
               CP_PLAN_NOT_FOUND, "%s", e.msg);
  cr_assert_eq(r.failed, 0);
  /* Moves into column 2 fail: 3 cells of column 1 each fail once. */
  fg.fail_x = 2;
  cr_assert_eq(cp_plan_search(st, &task, &p, x0, &o, &r, &e),
               CP_PLAN_FAILED_EXPANSIONS, "%s", e.msg);
  cr_assert_str_eq(cp_plan_status_name(r.status), "failed_expansions");
  cr_assert_eq(r.failed, 3);
  cr_assert_eq(r.failed_by[CP_EXPAND_SOLVER_FAILED], 3);
  cr_assert_eq(r.failed_by[CP_EXPAND_NONFINITE], 0);
  cp_store_close(st);
  sqlite3 *db = open_db(path);
  char *status = run_text(db, "status", r.run_id);
  cr_assert_str_eq(status, "failed_expansions");
  free(status);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM nodes WHERE search_id"
                                   " = 2 AND outcome = 'solver_failed'"),
               3);
  /* Whole: 300 characters and the end marker. */
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM nodes WHERE search_id"
                                   " = 2 AND length(message) = 303 AND"
                                   " message LIKE 'step 1:%GLPK%END'"),
               3);
  sqlite3_close(db);
  /* Not resumable: the space is exhausted. */
  st = open_store(path);
  o.resume = 1;
  cr_assert_eq(cp_plan_search(st, &task, &p, x0, &o, &r, &e),
               CP_PLAN_FAILED_EXPANSIONS);
  cr_assert_eq(r.resumed, 0);
  f.st = st;
  fixture_close(&f);
}

/* --- a long action is cut by the budget ------------------------------------ */

static const char *push_path(void) {
  static char buf[1024];
  snprintf(buf, sizeof buf, "%s/planner/tasks/push.json",
           getenv("CP_SOURCE_ROOT"));
  return buf;
}

/* A copy of the push task with its scene path made absolute and `from`
 * replaced by `to` (a temporary file; malloc'd path). */
static char *push_variant(const char *from, const char *to) {
  char *text = cpt_read_file(push_path(), NULL);
  char *sp = strstr(text, "\"../../models/scenes/");
  char *at = strstr(text, from);
  cr_assert(sp && at && sp < at, "no %s", from);
  char out[8192];
  snprintf(out, sizeof out, "%.*s\"%s/%.*s%s%s", (int)(sp - text), text,
           getenv("CP_SOURCE_ROOT"), (int)(at - sp - 7), sp + 7, to,
           at + strlen(from));
  free(text);
  return cpt_temp_file(out, ".json");
}

/* The push task with actions of 2 s (400 steps). */
static void load_long_push(cp_task *task) {
  char *path = push_variant("\"duration\": 0.1", "\"duration\": 2.0");
  cp_error e;
  cr_assert_eq(cp_task_load(path, task, &e), 0, "%s: %s", e.where, e.msg);
  unlink(path);
  free(path);
  cr_assert_eq(task->steps, 400);
}

Test(loop, cli_reports_failed_expansions_with_exit_1) {
  /* Efforts near DBL_MAX: every expansion's state goes non-finite. */
  char *task = push_variant("[-2, 0, 2, 4]", "[1.7e308, -1.7e308]");
  char *db = synth_temp_db();
  const char *argv[] = {"complan", "plan", task, "--db", db, "--json", NULL};
  json_t *doc = cpt_run_json(argv, 1);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")),
                   "failed_expansions");
  cr_assert_eq(json_integer_value(json_object_get(doc, "failed_expansions")), 2);
  json_t *why = json_object_get(doc, "failures");
  cr_assert_eq(json_integer_value(json_object_get(why, "nonfinite")), 2);
  cr_assert_eq(json_integer_value(json_object_get(why, "solver_failed")), 0);
  json_decref(doc);
  const char *tv[] = {"complan", "plan", task, "--db", db, NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(tv, &out, &err), 1);
  cr_assert(strstr(out, "failed_expansions by astar") && strstr(out, "(2 failed)"),
            "%s", out);
  cr_assert(strstr(err, "2 expansions failed (0 solver_failed, 2 nonfinite)"),
            "%s", err);
  free(out);
  free(err);
  sqlite3 *s = open_db(db);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM searches WHERE status ="
                                  " 'failed_expansions'"), 2);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM nodes WHERE outcome ="
                                  " 'nonfinite' AND message LIKE '%not finite%'"),
               4);
  sqlite3_close(s);
  synth_remove_db(db);
  unlink(task);
  free(task);
}

static void count_step(void *ctx, const cp_world *w) {
  (void)w;
  ++*(long *)ctx;
}

Test(loop, a_long_action_is_cut_inside_and_simulated_again_on_resume) {
  cp_task task;
  load_long_push(&task);
  char *path = synth_temp_db();
  cp_store *st = open_store(path);
  cp_plan_world *pw;
  cp_error e;
  cr_assert_eq(cp_plan_world_create(&task, 1, &pw, &e), 0, "%s", e.msg);
  long steps = 0;
  cp_plan_world_observe(pw, count_step, &steps);
  const cp_search_problem *p = cp_plan_world_problem(pw);
  const double *x0 = cp_plan_world_start(pw);
  cp_plan_options o = cp_plan_defaults();
  o.world_options = cp_plan_world_options(pw);
  o.max_nodes = 9;
  o.max_seconds = 3600;
  cp_plan_result ref, r;
  /* Reference: uninterrupted to 9 nodes. */
  cr_assert_eq(cp_plan_search(st, &task, p, x0, &o, &ref, &e), CP_PLAN_LIMIT,
               "%s", e.msg);
  /* Reads of the ticking clock: 1 the session's start (deadline 3.5); the
   * first action is the session's own (not polled); 2 after it; 3 when the
   * second action starts (the world's deadline); 4 at its step 16: spent,
   * so the action stops there without an outcome. */
  long ticks = 0;
  o.clock = ticking;
  o.clock_ctx = &ticks;
  o.max_seconds = 2.5;
  steps = 0;
  cr_assert_eq(cp_plan_search(st, &task, p, x0, &o, &r, &e), CP_PLAN_LIMIT,
               "%s", e.msg);
  cr_assert_eq(r.stats.expansions, 1);
  cr_assert_eq(r.nodes, 2);
  cr_assert_eq(r.stats.steps, 400, "the first action whole");
  cr_assert_eq(steps, 400 + CP_PLAN_BUDGET_STEPS, "the second cut at step 16");
  /* Resumed without a time limit: the cut action again, then on to the
   * reference's 9 nodes, bit for bit. */
  o.clock = NULL;
  o.max_seconds = 3600;
  o.resume = 1;
  cr_assert_eq(cp_plan_search(st, &task, p, x0, &o, &r, &e), CP_PLAN_LIMIT,
               "%s", e.msg);
  cr_assert_eq(r.run_id, 2);
  cr_assert_eq(r.stats.expansions, ref.stats.expansions);
  cp_plan_world_destroy(pw);
  cp_store_close(st);
  sqlite3 *db = open_db(path);
  long long n1, n2;
  cr_assert_eq(run_digest(db, 1, &n1), run_digest(db, 2, &n2));
  cr_assert_eq(n1, 9);
  cr_assert_eq(n2, 9);
  sqlite3_close(db);
  cp_task_free(&task);
  synth_remove_db(path);
}

/* --- a kill at every write (SQLite's crash tests, by a VFS shim) ----------- */

/* The default VFS wrapped: every xWrite is counted, and the write numbered
 * fault_at ends the process before it happens (die) or fails with an I/O
 * error (the process goes on). */
typedef struct shim_file {
  sqlite3_file base;
  sqlite3_file *real; /* follows this struct in the same allocation */
} shim_file;

static sqlite3_vfs *real_vfs;
static sqlite3_vfs shim_vfs;
static sqlite3_io_methods shim_io;
static long shim_writes, fault_at;
static int fault_dies;

#define REAL(f) (((shim_file *)(f))->real)
static int sh_close(sqlite3_file *f) { return REAL(f)->pMethods->xClose(REAL(f)); }
static int sh_read(sqlite3_file *f, void *b, int n, sqlite3_int64 o) {
  return REAL(f)->pMethods->xRead(REAL(f), b, n, o);
}
static int sh_write(sqlite3_file *f, const void *b, int n, sqlite3_int64 o) {
  if (++shim_writes == fault_at) {
    if (fault_dies) _exit(0);
    return SQLITE_IOERR_WRITE;
  }
  return REAL(f)->pMethods->xWrite(REAL(f), b, n, o);
}
static int sh_truncate(sqlite3_file *f, sqlite3_int64 s) {
  return REAL(f)->pMethods->xTruncate(REAL(f), s);
}
static int sh_sync(sqlite3_file *f, int fl) { return REAL(f)->pMethods->xSync(REAL(f), fl); }
static int sh_size(sqlite3_file *f, sqlite3_int64 *s) {
  return REAL(f)->pMethods->xFileSize(REAL(f), s);
}
static int sh_lock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xLock(REAL(f), l); }
static int sh_unlock(sqlite3_file *f, int l) { return REAL(f)->pMethods->xUnlock(REAL(f), l); }
static int sh_reserved(sqlite3_file *f, int *r) {
  return REAL(f)->pMethods->xCheckReservedLock(REAL(f), r);
}
static int sh_control(sqlite3_file *f, int op, void *a) {
  return REAL(f)->pMethods->xFileControl(REAL(f), op, a);
}
static int sh_sector(sqlite3_file *f) { return REAL(f)->pMethods->xSectorSize(REAL(f)); }
static int sh_device(sqlite3_file *f) {
  return REAL(f)->pMethods->xDeviceCharacteristics(REAL(f));
}
static int sh_shm_map(sqlite3_file *f, int pg, int sz, int ext, void volatile **p) {
  return REAL(f)->pMethods->xShmMap(REAL(f), pg, sz, ext, p);
}
static int sh_shm_lock(sqlite3_file *f, int o, int n, int fl) {
  return REAL(f)->pMethods->xShmLock(REAL(f), o, n, fl);
}
static void sh_shm_barrier(sqlite3_file *f) { REAL(f)->pMethods->xShmBarrier(REAL(f)); }
static int sh_shm_unmap(sqlite3_file *f, int d) {
  return REAL(f)->pMethods->xShmUnmap(REAL(f), d);
}

static int sh_open(sqlite3_vfs *v, const char *name, sqlite3_file *f, int fl,
                   int *out) {
  (void)v;
  shim_file *s = (shim_file *)f;
  s->real = (sqlite3_file *)(s + 1);
  int rc = real_vfs->xOpen(real_vfs, name, s->real, fl, out);
  s->base.pMethods = rc == SQLITE_OK && s->real->pMethods ? &shim_io : NULL;
  return rc;
}

static int sh_delete(sqlite3_vfs *v, const char *n, int d) {
  (void)v;
  return real_vfs->xDelete(real_vfs, n, d);
}
static int sh_access(sqlite3_vfs *v, const char *n, int fl, int *r) {
  (void)v;
  return real_vfs->xAccess(real_vfs, n, fl, r);
}
static int sh_full(sqlite3_vfs *v, const char *n, int sz, char *out) {
  (void)v;
  return real_vfs->xFullPathname(real_vfs, n, sz, out);
}

static void shim_install(void) {
  real_vfs = sqlite3_vfs_find(NULL);
  cr_assert_not_null(real_vfs);
  shim_vfs = *real_vfs;
  shim_vfs.iVersion = 1; /* xOpen .. xCurrentTime: the rest from SQLite */
  shim_vfs.zName = "complan-fault-shim";
  shim_vfs.szOsFile = (int)sizeof(shim_file) + real_vfs->szOsFile;
  shim_vfs.xOpen = sh_open;
  shim_vfs.xDelete = sh_delete;
  shim_vfs.xAccess = sh_access;
  shim_vfs.xFullPathname = sh_full;
  shim_vfs.pAppData = NULL;
  shim_io = (sqlite3_io_methods){2,        sh_close,    sh_read,   sh_write,
                                 sh_truncate, sh_sync,  sh_size,   sh_lock,
                                 sh_unlock, sh_reserved, sh_control, sh_sector,
                                 sh_device, sh_shm_map, sh_shm_lock,
                                 sh_shm_barrier, sh_shm_unmap, NULL, NULL};
  cr_assert_eq(sqlite3_vfs_register(&shim_vfs, 1), SQLITE_OK);
}

static void shim_remove(void) { sqlite3_vfs_unregister(&shim_vfs); }

/* Plans the push task (astar, batches of 3 expansions) into path; resume
 * continues its unfinished run. Returns the status. */
static cp_plan_status plan_push(const char *path, int resume,
                                cp_plan_result *r) {
  cp_task task;
  cp_error e;
  if (cp_task_load(push_path(), &task, &e)) return CP_PLAN_BAD_INPUT;
  cp_store *st;
  char msg[512];
  cp_plan_status s = CP_PLAN_FAILED;
  if (cp_store_open(path, 0, &st, msg, sizeof msg) == CP_STORE_OK) {
    cp_plan_options o = cp_plan_defaults();
    o.batch = 3;
    o.resume = resume;
    o.max_seconds = 3600;
    s = cp_plan_task(st, &task, &o, r, &e);
    cp_store_close(st);
  }
  cp_task_free(&task);
  return s;
}

Test(loop, a_kill_or_failure_at_every_write_leaves_a_database_that_resumes) {
  /* The reference, counting its writes. */
  char *ref = synth_temp_db();
  cp_store_close(open_store(ref));
  shim_install();
  shim_writes = 0;
  fault_at = -1;
  cp_plan_result rr;
  cr_assert_eq(plan_push(ref, 0, &rr), CP_PLAN_SOLVED);
  long total = shim_writes;
  shim_remove();
  cr_assert(total > 10, "%ld writes", total);
  sqlite3 *rdb = open_db(ref);
  long long nref;
  unsigned long long dref = run_digest(rdb, 1, &nref);
  sqlite3_close(rdb);
  for (int dies = 1; dies >= 0; --dies)
    for (long k = 1; k <= total; ++k) {
      char *path = synth_temp_db();
      cp_store_close(open_store(path));
      pid_t pid = fork();
      cr_assert(pid >= 0);
      if (pid == 0) {
        shim_install();
        shim_writes = 0;
        fault_at = k;
        fault_dies = dies;
        cp_plan_result r;
        cp_plan_status s = plan_push(path, 0, &r);
        _exit(s == CP_PLAN_FAILED ? 10 : s == CP_PLAN_SOLVED ? 11 : 12);
      }
      int wst;
      waitpid(pid, &wst, 0);
      cr_assert(WIFEXITED(wst), "write %ld: %d", k, wst);
      int code = WEXITSTATUS(wst);
      /* Died at write k, or failed cleanly (the write's transaction rolled
       * back; SQLite may also absorb a failed write into a later retry). */
      cr_assert(dies ? code == 0 : code == 10 || code == 11,
                "write %ld (%s): exit %d", k, dies ? "kill" : "I/O error",
                code);
      sqlite3 *db = open_db(path);
      assert_integrity(db);
      long long runs = synth_query_int(db, "SELECT count(*) FROM searches");
      long long nodes = synth_query_int(db, "SELECT count(*) FROM nodes");
      cr_assert(runs <= 1);
      cr_assert(runs == 0 || nodes >= 1, "a run always has its start node");
      int solved = runs == 1 && synth_query_int(db, "SELECT count(*) FROM"
                                                " searches WHERE status ="
                                                " 'solved'") == 1;
      cr_assert(code != 11 || solved);
      cp_plan_result r;
      if (!solved) { /* finish it: resumed (or new when no run) */
        cr_assert_eq(plan_push(path, 1, &r), CP_PLAN_SOLVED, "write %ld", k);
        cr_assert_eq(r.resumed, runs == 1, "write %ld", k);
        cr_assert_eq(r.run_id, 1);
      }
      assert_integrity(db);
      long long n;
      cr_assert_eq(run_digest(db, 1, &n), dref, "write %ld: the same search",
                   k);
      cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM plans"), 1);
      sqlite3_close(db);
      /* The plan replays bitwise from the database. */
      cp_store *st = open_store(path);
      cp_replay *rp;
      cp_error e;
      cr_assert_eq(cp_replay_open(st, 0, &rp, &e), CP_REPLAY_OK, "%s", e.msg);
      cp_replay_options ro = cp_replay_defaults();
      ro.verify = 1;
      cp_replay_result res;
      cr_assert_eq(cp_replay_run(rp, &ro, &res), CP_REPLAY_OK, "write %ld: %s",
                   k, res.message);
      cr_assert(res.verified && res.max_deviation == 0);
      cp_replay_close(rp);
      cp_store_close(st);
      synth_remove_db(path);
    }
  synth_remove_db(ref);
}

/* --- SIGINT / SIGTERM on `complan plan` ------------------------------------ */

static json_t *plan_json(const char *db, const char *extra, int rc) {
  const char *argv[] = {"complan", "plan", push_path(), "--db", db,
                        "--method", "sst", "--seed", "4", "--max-nodes",
                        "3000", "--max-seconds", "3600", "--json", extra,
                        NULL};
  return cpt_run_json(argv, rc);
}

static void signal_stops_and_resumes(int sig, const char *name) {
  char *db = synth_temp_db();
  char *err = cpt_temp_file("", ".txt");
  const char *exe = getenv("CP_COMPLAN");
  pid_t pid = fork();
  cr_assert(pid >= 0);
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout) || !freopen(err, "w", stderr))
      _exit(126);
    execl(exe, exe, "plan", push_path(), "--db", db, "--method", "sst",
          "--seed", "4", "--max-nodes", "3000", "--max-seconds", "3600",
          NULL);
    _exit(127);
  }
  /* Signalled once batches are committed (the handler is in place). */
  sqlite3 *s = NULL;
  long long n = 0;
  for (int k = 0; k < 20000 && n < 100; ++k) {
    nanosleep(&(struct timespec){0, 1000000L}, NULL);
    if (!s && access(db, F_OK) == 0) s = open_db(db);
    sqlite3_stmt *q;
    if (s && sqlite3_prepare_v2(s, "SELECT count(*) FROM nodes", -1, &q,
                                NULL) == SQLITE_OK) {
      if (sqlite3_step(q) == SQLITE_ROW) n = sqlite3_column_int64(q, 0);
      sqlite3_finalize(q);
    }
  }
  kill(pid, sig);
  int wst;
  waitpid(pid, &wst, 0);
  cr_assert(WIFEXITED(wst), "%s ended the process: %d", name, wst);
  cr_assert_eq(WEXITSTATUS(wst), 1, "%s: exit status 1", name);
  char *text = cpt_read_file(err, NULL);
  char want[64];
  snprintf(want, sizeof want, "interrupted by %s", name);
  cr_assert(strstr(text, want) && strstr(text, "--resume"), "%s", text);
  free(text);
  cr_assert_not_null(s);
  assert_integrity(s);
  char *status = run_text(s, "status", 1);
  cr_assert_str_eq(status, "interrupted");
  free(status);
  long long n1 = synth_query_int(s, "SELECT count(*) FROM nodes");
  cr_assert(n1 >= 100 && n1 < 3000, "%lld", n1);
  cr_assert_eq(run_int(s, "nodes", 1), n1, "the last actions committed");
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM plans"), 0);
  /* Resumed: the same run to its node limit, the uninterrupted tree. */
  json_t *doc = plan_json(db, "--resume", 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "solved");
  cr_assert(json_is_true(json_object_get(doc, "resumed")));
  cr_assert_eq(json_integer_value(json_object_get(doc, "run_id")), 1);
  cr_assert_eq(json_integer_value(json_object_get(doc, "nodes")), 3000);
  json_decref(doc);
  char *db2 = synth_temp_db();
  json_decref(plan_json(db2, NULL, 0));
  sqlite3 *s2 = open_db(db2);
  long long na, nb;
  cr_assert_eq(run_digest(s, 1, &na), run_digest(s2, 1, &nb),
               "the interrupted run is the uninterrupted one");
  cr_assert_eq(na, 3000);
  sqlite3_close(s2);
  sqlite3_close(s);
  synth_remove_db(db2);
  synth_remove_db(db);
  unlink(err);
  free(err);
}

Test(loop, sigint_stops_commits_exits_1_and_resumes) {
  signal_stops_and_resumes(SIGINT, "SIGINT");
}

Test(loop, sigterm_stops_commits_exits_1_and_resumes) {
  signal_stops_and_resumes(SIGTERM, "SIGTERM");
}
