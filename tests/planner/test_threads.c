/* Threads (cp_plan_world_set_threads, `complan plan --threads`): with
 * search.batch 4 the database -- every node's id, parent, action, flags,
 * outcome, cost, state, goal distance, step counts, pivots, message and
 * warm-start data -- and the plan are the same for 1, 2 and 4 threads (astar, rrt,
 * sst on the push task); a threaded run killed with SIGKILL resumes (with
 * another thread count) into the uninterrupted run; bad thread counts and
 * batches are usage and input errors. */
// No Criterion .timeout in this file: Criterion 2.4's runner leaks under
// LeakSanitizer when tests with timeouts run; meson's timeout for the
// executable (tests/planner/meson.build) bounds the run instead.
#include <criterion/criterion.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "planner/plan/plan.h"
#include "tests/support.h"
#include "synth.h"

static void same_for_any_thread_count_fresh(const char *method,
                                           long max_nodes, int fresh) {
  char *file = synth_push_task(4);
  cp_task task;
  cp_error e;
  cr_assert_eq(cp_task_load(file, &task, &e), 0, "%s", e.msg);
  cr_assert_eq(task.search_batch, 4);
  /* search.fresh_actions; rrt with 2 candidates of push's 4 actions (with
   * 8 it tries all 4 of a node at once and runs out within ~100 nodes). */
  task.search_fresh_actions = fresh;
  if (fresh && !strcmp(method, "rrt")) task.candidates = 2;
  task.weight = 0.1; /* astar: a wide search (the task's w = 2 takes 13 nodes) */
  char *path = synth_temp_db();
  cp_store *st = synth_open_store(path);
  const int threads[3] = {1, 2, 4};
  cp_plan_result r[3];
  for (int k = 0; k < 3; ++k) {
    cp_plan_options o = cp_plan_defaults();
    o.method = method;
    o.max_nodes = max_nodes;
    o.max_seconds = 3600;
    o.threads = threads[k];
    cp_plan_status s = cp_plan_task(st, &task, &o, &r[k], &e);
    cr_assert(s == CP_PLAN_SOLVED || s == CP_PLAN_LIMIT, "%s: %s", method,
              e.msg);
    cr_assert_eq(r[k].run_id, k + 1);
  }
  cp_store_close(st);
  sqlite3 *db = synth_open_db(path);
  long long n0, n;
  unsigned long long d0 = synth_run_digest(db, 1, &n0);
  char plan0[4096], plan[4096];
  synth_plan_of(db, 1, plan0, sizeof plan0);
  /* (rrt with fresh actions solves push in 31 nodes: 8 batches) */
  cr_assert(n0 > (fresh ? 16 : 40), "%s: a real search (%lld nodes)", method,
            n0);
  if (!strcmp(method, "astar")) cr_assert(plan0[0], "astar: a plan");
  for (int k = 1; k < 3; ++k) {
    cr_assert_eq(synth_run_digest(db, k + 1, &n), d0, "%s: %d threads", method,
                 threads[k]);
    cr_assert_eq(n, n0);
    synth_plan_of(db, k + 1, plan, sizeof plan);
    cr_assert_str_eq(plan, plan0, "%s: %d threads", method, threads[k]);
    cr_assert_eq(r[k].cost, r[0].cost);
    cr_assert_eq(r[k].stats.expansions, r[0].stats.expansions);
    cr_assert_eq(r[k].stats.lcp_solves, r[0].stats.lcp_solves);
    cr_assert_eq(r[k].actions_exhausted, r[0].actions_exhausted);
    /* The Lemke pivot counts too (the digest leaves them out): an impact
     * LCP answered by a world's memo counts the pivots of its cold solve
     * in batched searches, whichever world's memo had it. */
    cr_assert_eq(r[k].stats.pivots, r[0].stats.pivots, "%s: %d threads",
                 method, threads[k]);
    char q[128];
    snprintf(q, sizeof q, "SELECT id, pivots FROM nodes WHERE search_id = %d"
             " ORDER BY id", k + 1);
    char *got = synth_rows_text(db, q), *want = synth_rows_text(db,
        "SELECT id, pivots FROM nodes WHERE search_id = 1 ORDER BY id");
    cr_assert_str_eq(got, want, "%s: %d threads", method, threads[k]);
    free(got);
    free(want);
  }
  if (fresh) /* no (node, action) pair simulated twice in any run */
    cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM (SELECT 1 FROM"
                                     " nodes WHERE parent IS NOT NULL GROUP"
                                     " BY search_id, parent, action HAVING"
                                     " count(*) > 1)"),
                 0, "%s", method);
  /* Warm starts travel with the nodes: most accepted nodes carry one. */
  cr_assert(synth_query_int(db, "SELECT count(*) FROM nodes WHERE search_id ="
                                " 1 AND warm IS NOT NULL") > n0 / 4);
  sqlite3_close(db);
  synth_remove_db(path);
  cp_task_free(&task);
  remove(file);
  free(file);
}

static void same_for_any_thread_count(const char *method, long max_nodes) {
  same_for_any_thread_count_fresh(method, max_nodes, 0);
}

Test(threads, astar_database_is_the_same_for_1_2_4_threads) {
  same_for_any_thread_count("astar", 400);
}
Test(threads, rrt_database_is_the_same_for_1_2_4_threads) {
  same_for_any_thread_count("rrt", 400);
}
Test(threads, sst_database_is_the_same_for_1_2_4_threads) {
  same_for_any_thread_count("sst", 400);
}

Test(threads, a_killed_threaded_run_resumes_into_the_uninterrupted_one) {
  char *task = synth_push_task(4);
  char *db = synth_temp_db();
  sqlite3 *s = synth_kill_push_run(task, db);
  synth_killed_push_resumes(s, task, db, "2", NULL);
}

/* search.fresh_actions (session 28) on worker threads: the same tree for 1,
 * 2 and 4 threads, and a killed run (plain batches of 4; pipelined halves
 * of 2, whose pending half's pairs are tried before they are merged)
 * resumes into the uninterrupted run. */
Test(threads, fresh_actions_rrt_database_is_the_same_for_1_2_4_threads) {
  same_for_any_thread_count_fresh("rrt", 400, 1);
}
Test(threads, fresh_actions_sst_database_is_the_same_for_1_2_4_threads) {
  same_for_any_thread_count_fresh("sst", 400, 1);
}
static void killed_fresh_run_resumes(const char *search_keys) {
  char *task = synth_push_task_with(4, search_keys);
  char *db = synth_temp_db();
  synth_killed_push_resumes(synth_kill_push_run(task, db), task, db, "2",
                            NULL);
}
Test(threads, a_killed_fresh_actions_run_resumes_into_the_uninterrupted_one) {
  killed_fresh_run_resumes("\"pipeline\": false, \"fresh_actions\": true");
}
Test(threads, a_killed_pipelined_fresh_actions_run_resumes_alike) {
  killed_fresh_run_resumes("\"pipeline\": true, \"fresh_actions\": true");
}

Test(threads, bad_thread_counts_and_batches_are_refused) {
  char *task = synth_push_task(4);
  char *db = synth_temp_db();
  const char *argv[] = {"complan", "plan", task, "--db", db, "--threads", "0",
                        NULL};
  char *err = NULL;
  cr_assert_eq(cpt_run(argv, NULL, &err), 2);
  cr_assert(strstr(err, "--threads"), "%s", err);
  free(err);
  cr_assert(access(db, F_OK) != 0, "nothing written");
  remove(task);
  free(task);
  task = synth_push_task(0);
  const char *argv2[] = {"complan", "plan", task, "--db", db, NULL};
  cr_assert_eq(cpt_run(argv2, NULL, &err), 2);
  cr_assert(strstr(err, "search.batch") && strstr(err, task), "%s", err);
  free(err);
  cp_error e;
  cp_plan_world *pw;
  cp_task t;
  remove(task);
  free(task);
  task = synth_push_task(2);
  cr_assert_eq(cp_task_load(task, &t, &e), 0, "%s", e.msg);
  cr_assert_eq(cp_plan_world_create(&t, 1, &pw, &e), 0, "%s", e.msg);
  cr_assert_eq(cp_plan_world_set_threads(pw, 0, &e), -1);
  cr_assert(strstr(e.msg, "threads"), "%s", e.msg);
  cr_assert_eq(cp_plan_world_set_threads(pw, 3, &e), 0, "%s", e.msg);
  cr_assert_not_null(cp_plan_world_problem(pw)->expand_batch);
  cr_assert_eq(cp_plan_world_set_threads(pw, 1, &e), 0);
  cr_assert_null(cp_plan_world_problem(pw)->expand_batch);
  cp_plan_world_destroy(pw);
  cp_task_free(&t);
  synth_remove_db(db);
  remove(task);
  free(task);
}

/* cp_plan_world_set_timing: a world's expansions (its workers' too, on a
 * thread count set before or after) are timed by default and not when
 * untimed, and the search is the same either way (sst, 2 threads). */
Test(threads, untimed_worlds_grow_the_timed_worlds_tree) {
  char *file = synth_push_task(4);
  cp_task task;
  cp_error e;
  cr_assert_eq(cp_task_load(file, &task, &e), 0, "%s", e.msg);
  char *path = synth_temp_db();
  cp_store *st = synth_open_store(path);
  double secs[3];
  for (int k = 0; k < 3; ++k) {
    cp_plan_world *pw;
    cr_assert_eq(cp_plan_world_create(&task, 1, &pw, &e), 0, "%s", e.msg);
    /* 0: timed; 1: untimed before the threads; 2: after them. */
    if (k == 1) cp_plan_world_set_timing(pw, 0);
    cr_assert_eq(cp_plan_world_set_threads(pw, 2, &e), 0, "%s", e.msg);
    if (k == 2) cp_plan_world_set_timing(pw, 0);
    cp_plan_options o = cp_plan_defaults();
    o.method = "sst";
    o.max_nodes = 120;
    o.max_seconds = 3600;
    o.world_options = cp_plan_world_options(pw);
    cp_plan_result r;
    cp_plan_status s = cp_plan_search(st, &task, cp_plan_world_problem(pw),
                                      cp_plan_world_start(pw), &o, &r, &e);
    cr_assert(s == CP_PLAN_SOLVED || s == CP_PLAN_LIMIT, "%s", e.msg);
    secs[k] = cp_plan_world_seconds(pw);
    cp_plan_world_destroy(pw);
  }
  cp_store_close(st);
  cr_assert_gt(secs[0], 0, "timed: the expansions' CPU seconds");
  cr_assert_eq(secs[1], 0, "untimed before the threads: no clock read");
  cr_assert_eq(secs[2], 0, "untimed after the threads: no clock read");
  sqlite3 *db = synth_open_db(path);
  long long n0, n;
  unsigned long long d0 = synth_run_digest(db, 1, &n0);
  cr_assert(n0 > 100, "%lld nodes", n0);
  for (int k = 2; k <= 3; ++k) {
    cr_assert_eq(synth_run_digest(db, k, &n), d0, "run %d", k);
    cr_assert_eq(n, n0);
  }
  sqlite3_close(db);
  synth_remove_db(path);
  cp_task_free(&task);
  remove(file);
  free(file);
}

/* Cancels the run once it has `stop_at` nodes (a progress callback). */
static volatile sig_atomic_t stop_flag;
static long stop_at;
static void stop_at_nodes(void *ctx, const cp_plan_progress *p) {
  (void)ctx;
  if (stop_at > 0 && p->nodes >= stop_at) cp_search_cancel(&stop_flag, 1);
}

/* Runs the push task (batch 1 in the file) with search batch `batch`
 * (0: the task's), sst, to `nodes` nodes into path (cancelled at `cancel_at`
 * nodes when > 0); returns the result. */
static cp_plan_result plan_push(const cp_task *task, const char *path,
                                int batch, long nodes, int resume,
                                long cancel_at) {
  cp_store *st = synth_open_store(path);
  cp_plan_options o = cp_plan_defaults();
  o.method = "sst";
  o.max_nodes = nodes;
  o.max_seconds = 3600;
  o.search_batch = batch;
  o.resume = resume;
  o.threads = 2;
  stop_flag = 0;
  stop_at = cancel_at;
  o.cancel = &stop_flag;
  o.progress = stop_at_nodes;
  o.progress_interval = 1e-9; /* after every iteration */
  cp_plan_result r;
  cp_error e;
  cp_plan_status s = cp_plan_task(st, task, &o, &r, &e);
  cr_assert(s == (cancel_at > 0 ? CP_PLAN_INTERRUPTED : CP_PLAN_SOLVED),
            "%s: %s", cp_plan_status_name(s), e.msg);
  cp_store_close(st);
  return r;
}

Test(threads, a_resumed_run_keeps_the_batch_it_was_started_with) {
  char *file = synth_push_task(1);
  cp_task task;
  cp_error e;
  cr_assert_eq(cp_task_load(file, &task, &e), 0, "%s", e.msg);
  char *a = synth_temp_db(), *b = synth_temp_db();
  plan_push(&task, a, 4, 400, 0, 0); /* the reference: batch 4, 400 nodes */
  plan_push(&task, b, 4, 400, 0, 200); /* cancelled at 200, resumed with */
  cp_plan_result r = plan_push(&task, b, 0, 400, 1, 0); /* the task's 1 */
  cr_assert_eq(r.resumed, 1);
  sqlite3 *da = synth_open_db(a), *db = synth_open_db(b);
  long long na, nb;
  cr_assert_eq(synth_run_digest(da, 1, &na), synth_run_digest(db, 1, &nb),
               "the resumed run went on in batches of 4");
  cr_assert_eq(na, nb);
  cr_assert(na > 300, "%lld nodes", na);
  sqlite3_close(da);
  sqlite3_close(db);
  synth_remove_db(a);
  synth_remove_db(b);
  cp_task_free(&task);
  remove(file);
  free(file);
}

typedef struct bench_calls {
  int n, run[16];
  char planner[16][8];
} bench_calls;

static void bench_progress(void *ctx, const char *planner, int run,
                           const cp_plan_result *r) {
  (void)r;
  bench_calls *c = ctx;
  if (c->n < 16) {
    c->run[c->n] = run;
    snprintf(c->planner[c->n], sizeof c->planner[0], "%s", planner);
  }
  c->n++;
}

/* A benchmark of task (astar and sst, 3 seeds each) into a new database
 * on `threads` threads; the calls of the progress callback in *calls. */
static char *bench_on(const cp_task *task, int threads, bench_calls *calls) {
  char *path = synth_temp_db();
  cp_store *st = synth_open_store(path);
  cp_plan_world *pw;
  cp_error e;
  cr_assert_eq(cp_plan_world_create(task, 1, &pw, &e), 0, "%s", e.msg);
  const char *planners[] = {"astar", "sst", NULL};
  cp_bench_options bo = {.runs = 3, .planners = planners,
                         .max_seconds = 3600, .progress = bench_progress,
                         .progress_ctx = calls, .threads = threads,
                         .db = path};
  int64_t eid = -1;
  cp_plan_status s = cp_plan_benchmark(
      st, task, cp_plan_world_problem(pw), cp_plan_world_start(pw),
      cp_plan_world_options(pw), &bo, &eid, &e);
  cr_assert_eq(s, CP_PLAN_SOLVED, "%d threads: %s", threads, e.msg);
  cr_assert_eq(eid, 1);
  cp_plan_world_destroy(pw);
  cp_store_close(st);
  return path;
}

/* cp_bench_options.threads (plan --benchmark --threads): six runs (node
 * limits, so no run depends on the clock) on 3 threads give the database of
 * one thread: the same searches under the same ids, every node row and
 * plan equal, the benchmark's run rows (planner, search, status, states,
 * expansions, LCP solves, steps, cost, pivots) in the same order, every
 * node's pivots (a batch-1 task: see set_batch in planner/plan/problem.c),
 * and the
 * progress callback called in run order; without the database's path
 * threads are refused. */
Test(threads, benchmark_runs_on_threads_give_the_one_thread_database) {
  char *file = synth_push_task(1);
  cp_task task;
  cp_error e;
  cr_assert_eq(cp_task_load(file, &task, &e), 0, "%s", e.msg);
  task.max_nodes = 120;
  task.weight = 0.5;
  bench_calls c1 = {0}, c3 = {0};
  char *a = bench_on(&task, 1, &c1), *b = bench_on(&task, 3, &c3);
  cr_assert_eq(c1.n, 6);
  cr_assert_eq(c3.n, 6);
  for (int k = 0; k < 6; ++k) {
    cr_expect_eq(c3.run[k], k % 3);
    cr_expect_str_eq(c3.planner[k], k < 3 ? "astar" : "sst");
  }
  sqlite3 *da = synth_open_db(a), *db = synth_open_db(b);
  for (int run = 1; run <= 6; ++run) {
    char what[32];
    snprintf(what, sizeof what, "run %d", run);
    synth_assert_same_run(da, run, db, run, what);
  }
  const char *q =
      "SELECT r.id, p.name, r.search_id, r.status, r.solved, r.graph_states,"
      " r.expansions, r.lcp_solves, r.simulation_steps, r.best_cost,"
      " r.lemke_pivots, s.planner, s.seed FROM runs r JOIN plannerConfigs p"
      " ON p.id = r.plannerid JOIN searches s ON s.id = r.search_id ORDER"
      " BY r.id";
  char *ra = synth_rows_text(da, q), *rb = synth_rows_text(db, q);
  cr_assert_str_eq(rb, ra);
  cr_assert(strstr(ra, "control_complan_sst 6 "), "%s", ra);
  free(ra);
  free(rb);
  /* The pivots too (batch 1: a memo hit counts none), every node's: each
   * search starts with empty impact memos, so a run's count does not
   * depend on the runs its thread made before. */
  const char *qp = "SELECT search_id, id, pivots FROM nodes ORDER BY 1, 2";
  ra = synth_rows_text(da, qp);
  rb = synth_rows_text(db, qp);
  cr_assert_str_eq(rb, ra);
  free(ra);
  free(rb);
  cr_expect_eq(synth_query_int(db, "SELECT count(*) FROM searches WHERE "
                                   "status = 'running'"), 0);
  sqlite3_close(da);
  sqlite3_close(db);
  synth_remove_db(a);
  synth_remove_db(b);
  /* Threads without the database's path. */
  char *path = synth_temp_db();
  cp_store *st = synth_open_store(path);
  cp_plan_world *pw;
  cr_assert_eq(cp_plan_world_create(&task, 1, &pw, &e), 0, "%s", e.msg);
  cp_bench_options bo = {.runs = 2, .threads = 2};
  int64_t eid;
  cr_assert_eq(cp_plan_benchmark(st, &task, cp_plan_world_problem(pw),
                                 cp_plan_world_start(pw), "{}", &bo, &eid,
                                 &e),
               CP_PLAN_BAD_INPUT);
  cr_expect(strstr(e.msg, "database's path"), "%s", e.msg);
  cp_plan_world_destroy(pw);
  cp_store_close(st);
  synth_remove_db(path);
  cp_task_free(&task);
  remove(file);
  free(file);
}

/* A search whose problem runs batches (threads, MPI) writes each commit
 * while the next batch is simulated (cp_batch_meanwhile). The problem
 * here runs the jobs itself after the meanwhile work, and copies the
 * database (what is committed) right after the first commit written that
 * way: the copy holds a consistent prefix, resumes into the uninterrupted
 * run's nodes (so its generator state and totals are the batch's, not
 * those of the batch being simulated), and the whole database is the one
 * written without the overlap. */
typedef struct overlap_probe {
  const cp_search_problem *inner;
  sqlite3 *db;     /* a second connection to the run's file */
  const char *copy;
  long long before; /* committed nodes before the first meanwhile commit */
  int copied, calls;
} overlap_probe;

static overlap_probe probe;

static long long committed_nodes(sqlite3 *db) {
  return synth_query_int(db, "SELECT coalesce(max(nodes), 0) FROM searches");
}

static int probe_batch(void *ctx, cp_expand_job *jobs, int n,
                       const cp_batch_meanwhile *meanwhile) {
  probe.calls++;
  long long before = committed_nodes(probe.db);
  cr_assert_not_null(meanwhile, "the plan loop hands its commits over");
  meanwhile->fn(meanwhile->ctx);
  if (!probe.copied && committed_nodes(probe.db) > before) {
    sqlite3 *to;
    cr_assert_eq(sqlite3_open(probe.copy, &to), SQLITE_OK);
    sqlite3_backup *b = sqlite3_backup_init(to, "main", probe.db, "main");
    cr_assert_not_null(b);
    cr_assert_eq(sqlite3_backup_step(b, -1), SQLITE_DONE);
    sqlite3_backup_finish(b);
    sqlite3_close(to);
    probe.copied = 1;
    probe.before = before;
  }
  for (int k = 0; k < n; ++k)
    cp_expand_job_run(probe.inner->expand, ctx, &jobs[k]);
  return 0;
}

Test(threads, a_commit_written_during_a_batch_is_a_resumable_prefix) {
  char *file = synth_push_task(4);
  cp_task task;
  cp_error e;
  char msg[512];
  cr_assert_eq(cp_task_load(file, &task, &e), 0, "%s", e.msg);
  char *ref = synth_temp_db(), *path = synth_temp_db();
  char *copy = synth_temp_db();
  cp_plan_options o = cp_plan_defaults();
  o.method = "sst";
  o.max_nodes = 300;
  o.max_seconds = 3600;
  o.batch = 8; /* a commit every 8 expansions: many of them */
  o.threads = 1; /* no batch runner: every commit between batches */
  cp_store *st;
  cp_plan_result r;
  cr_assert_eq(cp_store_open(ref, 0, &st, msg, sizeof msg), CP_STORE_OK, "%s",
               msg);
  cp_plan_status s = cp_plan_task(st, &task, &o, &r, &e);
  cr_assert(s == CP_PLAN_SOLVED || s == CP_PLAN_LIMIT, "%s", e.msg);
  cp_store_close(st);

  cp_plan_world *pw;
  cr_assert_eq(cp_plan_world_create(&task, 1, &pw, &e), 0, "%s", e.msg);
  cp_search_problem p = *cp_plan_world_problem(pw);
  p.expand_batch = probe_batch;
  cr_assert_eq(cp_store_open(path, 0, &st, msg, sizeof msg), CP_STORE_OK,
               "%s", msg);
  memset(&probe, 0, sizeof probe);
  probe.inner = cp_plan_world_problem(pw);
  probe.db = synth_open_db(path);
  probe.copy = copy;
  cp_plan_options ov = o;
  ov.world_options = cp_plan_world_options(pw);
  s = cp_plan_search(st, &task, &p, cp_plan_world_start(pw), &ov, &r, &e);
  cr_assert(s == CP_PLAN_SOLVED || s == CP_PLAN_LIMIT, "%s", e.msg);
  cp_store_close(st);
  sqlite3_close(probe.db);
  cp_plan_world_destroy(pw);
  cr_assert(probe.copied && probe.calls > 10, "%d batches", probe.calls);

  long long n0, n;
  sqlite3 *db = synth_open_db(ref);
  unsigned long long d0 = synth_run_digest(db, 1, &n0);
  sqlite3_close(db);
  db = synth_open_db(path);
  cr_assert_eq(synth_run_digest(db, 1, &n), d0, "overlapped commits");
  cr_assert_eq(n, n0);
  sqlite3_close(db);

  /* The copy: a consistent prefix (the run's row counts its node rows)
   * that resumes into the reference run. */
  db = synth_open_db(copy);
  long long rows = synth_query_int(db, "SELECT count(*) FROM nodes");
  cr_assert_eq(committed_nodes(db), rows);
  cr_assert(rows > probe.before && rows < n0, "%lld of %lld nodes", rows, n0);
  cr_assert_eq(synth_query_int(db, "SELECT status = 'running' FROM searches"),
               1);
  sqlite3_close(db);
  cr_assert_eq(cp_store_open(copy, 0, &st, msg, sizeof msg), CP_STORE_OK,
               "%s", msg);
  cp_plan_options orr = o;
  orr.resume = 1;
  s = cp_plan_task(st, &task, &orr, &r, &e);
  cr_assert(s == CP_PLAN_SOLVED || s == CP_PLAN_LIMIT, "%s", e.msg);
  cr_assert(r.resumed);
  cp_store_close(st);
  db = synth_open_db(copy);
  cr_assert_eq(synth_run_digest(db, 1, &n), d0, "the copy resumed");
  cr_assert_eq(n, n0);
  sqlite3_close(db);
  synth_remove_db(ref);
  synth_remove_db(path);
  synth_remove_db(copy);
  cp_task_free(&task);
  remove(file);
  free(file);
}

/* Worker threads whose steps reach GLPK (the solver chain after a failed
 * Lemke: FIP's LPs, certify's MIP) release their GLPK environment when the
 * pool ends (cp_glpk_thread_end): without that, LeakSanitizer reports 5 296
 * bytes per worker in the sanitizer build of this test. The tree is also
 * the one thread's, on a task whose steps fall back (the grasp, sst, batch
 * 16). */
Test(threads, workers_that_used_glpk_grow_the_one_thread_tree) {
  char path[1024];
  snprintf(path, sizeof path, "%s/planner/tasks/grasp_lift.json",
           getenv("CP_SOURCE_ROOT"));
  cp_task task;
  cp_error e;
  cr_assert_eq(cp_task_load(path, &task, &e), 0, "%s", e.msg);
  task.search_batch = 16;
  char *db_path = synth_temp_db();
  cp_store *st = synth_open_store(db_path);
  cp_plan_result r[2];
  for (int k = 0; k < 2; ++k) {
    cp_plan_options o = cp_plan_defaults();
    o.method = "sst";
    o.max_nodes = 600;
    o.max_seconds = 3600;
    o.threads = k + 1;
    cp_plan_status s = cp_plan_task(st, &task, &o, &r[k], &e);
    cr_assert(s == CP_PLAN_SOLVED || s == CP_PLAN_LIMIT, "%s", e.msg);
  }
  cp_store_close(st);
  cr_assert_gt(r[0].stats.fallbacks, 0, "steps reached the solver chain");
  sqlite3 *db = synth_open_db(db_path);
  synth_assert_same_run(db, 1, db, 2, "grasp, sst, 2 threads");
  cr_assert_eq(r[1].stats.lcp_solves, r[0].stats.lcp_solves);
  sqlite3_close(db);
  synth_remove_db(db_path);
  cp_task_free(&task);
}
