/* Pipelined batches (search.pipeline, cp_search_options.pipeline;
 * docs/parallel.md, "Pipelined batches"): batch k + 1 drawn from the tree
 * as merged up to batch k - 1. The nodes are the same for 1, 2 and 4
 * threads (sst and rrt on the push task at batch 4) and differ from the
 * unpipelined search's; the node limit holds; bad settings are input
 * errors. Pipelined batches are the default for rrt and sst at batch B >= 4
 * (search.pipeline unset), in halves of B / 2 (rounded down; the jobs in
 * flight are the task's batch): the default's tree at B is an explicit
 * pipelined run's at B / 2 (an odd B's too), an explicit true keeps halves
 * of B, an explicit false gives the plain tree, batch 1, 2, 3 and astar are
 * unaffected, a killed default run resumes with its halves, and a plain run
 * stored without the key (as every run before session 26) resumes plain. A commit stores the drawn, unmerged batch (table
 * pending_batches), so a pipelined run interrupted, or killed, after a
 * commit resumes on 1 or 2 threads into the uninterrupted run; one stored
 * without it (before schema version 4), or with a damaged one, is refused
 * on --resume, its database left as it was. */
#include <criterion/criterion.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "planner/plan/plan.h"
#include "tests/support.h"
#include "synth.h"

static volatile sig_atomic_t stop_flag;
static long stop_at;
static void stop_at_nodes(void *ctx, const cp_plan_progress *p) {
  (void)ctx;
  if (stop_at > 0 && p->nodes >= stop_at) cp_search_cancel(&stop_flag, 1);
}

/* Plans task into st with `method`, `threads` threads and node limit
 * max_nodes (cancelled at cancel_at nodes when > 0). */
static cp_plan_status plan(cp_store *st, const cp_task *task,
                           const char *method, int threads, long max_nodes,
                           int resume, long cancel_at, cp_plan_result *r,
                           cp_error *e) {
  cp_plan_options o = cp_plan_defaults();
  o.method = method;
  o.max_nodes = max_nodes;
  o.max_seconds = 3600;
  o.threads = threads;
  o.resume = resume;
  stop_flag = 0;
  stop_at = cancel_at;
  o.cancel = &stop_flag;
  o.progress = stop_at_nodes;
  o.progress_interval = 1e-9;
  return cp_plan_task(st, task, &o, r, e);
}

/* The push task at batch 16 without search.pipeline: runs 1-3 take the
 * default (halves of 8) on 1, 2 and 4 threads, run 4 says false (plain
 * 16), run 5 true at batch 8 (halves of 8: the default's tree), run 6 true
 * at batch 16 (halves of 16, 32 in flight: another tree). */
static void same_for_any_thread_count(const char *method) {
  char *file = synth_push_task_with(16, NULL);
  cp_task task;
  cp_error e;
  cr_assert_eq(cp_task_load(file, &task, &e), 0, "%s", e.msg);
  cr_assert_eq(task.search_pipeline, -1, "unset by default");
  int half = 0;
  cr_assert_eq(cp_task_search_mode(&task, method, 16, &half), 1,
               "on at batch 16");
  cr_assert_eq(half, 8);
  char *path = synth_temp_db();
  cp_store *st;
  char msg[512];
  cr_assert_eq(cp_store_open(path, 0, &st, msg, sizeof msg), CP_STORE_OK,
               "%s", msg);
  const int threads[6] = {1, 2, 4, 1, 2, 2}, given[6] = {-1, -1, -1, 0, 1, 1},
            batch[6] = {16, 16, 16, 16, 8, 16};
  const long max_nodes = 301;
  cp_plan_result r[6];
  for (int k = 0; k < 6; ++k) {
    task.search_pipeline = given[k];
    task.search_batch = batch[k];
    cp_plan_status s =
        plan(st, &task, method, threads[k], max_nodes, 0, 0, &r[k], &e);
    cr_assert(s == CP_PLAN_SOLVED || s == CP_PLAN_LIMIT, "%s: %s", method,
              e.msg);
    cr_assert_eq(r[k].run_id, k + 1);
  }
  cp_store_close(st);
  sqlite3 *db = synth_open_db(path);
  long long n0, n;
  unsigned long long d0 = synth_run_digest(db, 1, &n0);
  cr_assert(n0 > 100 && n0 <= max_nodes, "%s: %lld nodes", method, n0);
  for (int k = 1; k < 5; ++k) {
    if (k == 3) continue; /* the plain run */
    cr_assert_eq(synth_assert_same_run(db, 1, db, k + 1, method), n0);
    cr_assert_eq(r[k].stats.expansions, r[0].stats.expansions);
    cr_assert_eq(r[k].stats.lcp_solves, r[0].stats.lcp_solves);
    cr_assert_eq(r[k].cost, r[0].cost);
  }
  /* Another search each for sst. Not asserted for rrt: on this task and
   * seed its three trees happen to coincide (rrt solves push with seed 1
   * in 149 nodes plain 16 and pipelined 8 alike, experiments/results/
   * parallel.md, session 26, par20). */
  const unsigned long long plain = synth_run_digest(db, 4, &n),
                           halves16 = synth_run_digest(db, 6, &n);
  if (!strcmp(method, "sst")) {
    cr_assert_neq(plain, d0, "the pipelined search is another search");
    cr_assert_neq(halves16, d0, "halves of 16 are another search");
    cr_assert_neq(halves16, plain, "an explicit true is pipelined");
  }
  /* The run's options say it was pipelined (and only then: the plain run
   * has no key, as plain runs had before the default changed), and its
   * search_batch is the half it ran. */
  cr_assert_eq(synth_query_int(db, "SELECT group_concat(id) = '1,2,3,5' FROM "
                                   "(SELECT id FROM searches WHERE options "
                                   "LIKE '%\"search_batch\": 8, "
                                   "\"search_pipeline\": true%' ORDER BY id)"),
               1);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM searches WHERE "
                                   "options LIKE '%search_pipeline%'"),
               5);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM searches WHERE id "
                                   "IN (4, 6) AND options LIKE "
                                   "'%\"search_batch\": 16%'"),
               2);
  sqlite3_close(db);
  synth_remove_db(path);
  cp_task_free(&task);
  remove(file);
  free(file);
}

Test(pipeline, sst_nodes_are_the_same_for_1_2_4_threads) {
  same_for_any_thread_count("sst");
}

Test(pipeline, rrt_nodes_are_the_same_for_1_2_4_threads) {
  same_for_any_thread_count("rrt");
}

Test(pipeline, bad_settings_are_refused) {
  char *task = synth_push_task_with(4, "\"pipeline\": \"yes\"");
  char *db = synth_temp_db();
  const char *argv[] = {"complan", "plan", task, "--db", db, NULL};
  char *err = NULL;
  cr_assert_eq(cpt_run(argv, NULL, &err), 2);
  cr_assert(strstr(err, "search.pipeline") && strstr(err, task), "%s", err);
  free(err);
  cr_assert(access(db, F_OK) != 0, "nothing written");
  remove(task);
  free(task);
  /* astar (the task's method), and batch 1: refused before any row. */
  task = synth_push_task_with(4, "\"pipeline\": true");
  cp_task t;
  cp_error e;
  cr_assert_eq(cp_task_load(task, &t, &e), 0, "%s", e.msg);
  cr_assert_eq(t.search_pipeline, 1);
  cp_store *st;
  char msg[512];
  cr_assert_eq(cp_store_open(db, 0, &st, msg, sizeof msg), CP_STORE_OK);
  cp_plan_result r;
  cr_assert_eq(plan(st, &t, NULL, 1, 100, 0, 0, &r, &e), CP_PLAN_BAD_INPUT);
  cr_assert(strstr(e.msg, "pipeline") && strstr(e.msg, "astar"), "%s",
            e.msg);
  t.search_batch = 1;
  cr_assert_eq(plan(st, &t, "sst", 1, 100, 0, 0, &r, &e), CP_PLAN_BAD_INPUT);
  cr_assert(strstr(e.msg, "pipeline") && strstr(e.msg, "batch"), "%s", e.msg);
  cp_store_close(st);
  sqlite3 *s = synth_open_db(db);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM searches"), 0);
  sqlite3_close(s);
  cp_task_free(&t);
  synth_remove_db(db);
  remove(task);
  free(task);
}

/* A pipelined run of the push task (batch 4) with `method` on `threads`
 * threads, interrupted at 100 nodes (between two calls of the search: the
 * next batch drawn and out), in a new database; db: its rows. */
typedef struct interrupted {
  char *file, *path;
  cp_task task;
  cp_store *st;
  sqlite3 *db;
  long long nodes;
} interrupted;

/* The pipelined push task and a new database (x->db opened later). */
static void pipelined_push(interrupted *x) {
  cp_error e;
  char msg[512];
  x->file = synth_push_task(4);
  cr_assert_eq(cp_task_load(x->file, &x->task, &e), 0, "%s", e.msg);
  x->task.search_pipeline = 1;
  x->path = synth_temp_db();
  cr_assert_eq(cp_store_open(x->path, 0, &x->st, msg, sizeof msg),
               CP_STORE_OK);
}

static void interrupt_run(interrupted *x, const char *method, int threads) {
  pipelined_push(x);
  cp_error e;
  cp_plan_result r;
  cr_assert_eq(plan(x->st, &x->task, method, threads, 400, 0, 100, &r, &e),
               CP_PLAN_INTERRUPTED, "%s", e.msg);
  x->db = synth_open_db(x->path);
  x->nodes = synth_query_int(x->db, "SELECT count(*) FROM nodes");
  cr_assert(x->nodes >= 100 && x->nodes < 400, "%lld nodes", x->nodes);
}

static void interrupted_free(interrupted *x) {
  sqlite3_close(x->db);
  cp_store_close(x->st);
  synth_remove_db(x->path);
  cp_task_free(&x->task);
  remove(x->file);
  free(x->file);
}

/* Interrupted on t1 threads, resumed on t2: the uninterrupted run's nodes,
 * plan, expansions and LCP solves. */
static void resumes_into_the_uninterrupted_run(const char *method, int t1,
                                               int t2) {
  interrupted x;
  interrupt_run(&x, method, t1);
  cp_error e;
  cp_plan_result r1, r2;
  cr_assert_eq(synth_query_int(x.db, "SELECT iterations FROM "
                                     "pending_batches WHERE search_id = 1"),
               x.task.search_batch, "the drawn batch is stored");
  cp_plan_status a = plan(x.st, &x.task, method, t2, 400, 1, 0, &r1, &e);
  cr_assert(a == CP_PLAN_SOLVED || a == CP_PLAN_LIMIT, "%s", e.msg);
  cr_assert(r1.resumed);
  cr_assert_eq(r1.run_id, 1);
  cp_plan_status b = plan(x.st, &x.task, method, t1, 400, 0, 0, &r2, &e);
  cr_assert_eq(b, a, "%s", e.msg);
  cr_assert_eq(r2.run_id, 2);
  cr_assert_gt(synth_assert_same_run(x.db, 1, x.db, 2,
                                     "resumed pipelined run"),
               x.nodes);
  cr_assert_eq(r1.stats.expansions, r2.stats.expansions);
  cr_assert_eq(r1.stats.lcp_solves, r2.stats.lcp_solves);
  /* Not the pivots: a world's impact memo is its own (a resumed session's
   * starts empty, as a second thread's does), docs/parallel.md. */
  cr_assert(r1.cost == r2.cost || (isnan(r1.cost) && isnan(r2.cost)));
  interrupted_free(&x);
}

Test(pipeline, an_interrupted_sst_run_resumes_on_1_thread) {
  resumes_into_the_uninterrupted_run("sst", 2, 1);
}

Test(pipeline, an_interrupted_rrt_run_resumes_on_2_threads) {
  resumes_into_the_uninterrupted_run("rrt", 1, 2);
}

/* Ended at a node limit (the last draw undone, the pending batch merged),
 * resumed with a larger one: the uninterrupted run with that limit, its
 * iteration count included. */
Test(pipeline, a_run_at_its_node_limit_resumes_with_a_larger_one) {
  interrupted x;
  pipelined_push(&x);
  cp_store *st = x.st;
  cp_task task = x.task;
  cp_error e;
  cp_plan_result r0, r1, r2;
  cr_assert_eq(plan(st, &task, "sst", 2, 60, 0, 0, &r0, &e), CP_PLAN_LIMIT,
               "%s", e.msg);
  sqlite3 *s = x.db = synth_open_db(x.path);
  cr_assert_eq(synth_query_int(s, "SELECT status = 'limit' FROM searches"),
               1);
  cr_assert_eq(synth_query_int(s, "SELECT iterations > 0 AND rng IS NOT "
                                  "NULL FROM pending_batches"), 1,
               "the undone draw is stored");
  cr_assert_eq(plan(st, &task, "sst", 1, 400, 1, 0, &r1, &e),
               CP_PLAN_SOLVED, "%s", e.msg);
  cr_assert(r1.resumed);
  cr_assert_eq(plan(st, &task, "sst", 2, 400, 0, 0, &r2, &e),
               CP_PLAN_SOLVED, "%s", e.msg);
  cr_assert_gt(synth_assert_same_run(s, 1, s, 2, "resumed at a limit"),
               r0.nodes);
  cr_assert_eq(r1.stats.expansions, r2.stats.expansions);
  cr_assert_eq(r1.stats.lcp_solves, r2.stats.lcp_solves);
  cr_assert_eq(r1.stats.iterations, r2.stats.iterations);
  interrupted_free(&x);
}

/* A clock that reads 0 and sets the cancel flag at its `stop_calls`-th
 * read: the workers read it after every action once the session has made
 * progress, so the flag stops a batch part-way through its jobs. */
static long clock_reads, stop_calls;
static double cancelling_clock(void *ctx) {
  (void)ctx;
  if (__atomic_add_fetch(&clock_reads, 1, __ATOMIC_RELAXED) == stop_calls)
    cp_search_cancel(&stop_flag, 1);
  return 0;
}

/* Stopped mid-batch on 2 threads (the batch being merged half run, the
 * next one out, or between two calls: the clock read that sets the flag
 * decides), at six points: the run stores its pending batch as it
 * was before that call, and resumed on 2 threads it is the uninterrupted
 * run. */
Test(pipeline, a_run_stopped_mid_batch_resumes_into_the_uninterrupted_one) {
  interrupted x;
  pipelined_push(&x);
  cp_store *st = x.st;
  cp_task task = x.task;
  cp_error e;
  cp_plan_result r;
  cp_plan_options o = cp_plan_defaults();
  o.method = "sst";
  o.max_nodes = 300;
  o.max_seconds = 3600;
  o.threads = 2;
  o.cancel = &stop_flag;
  o.clock = cancelling_clock;
  stop_flag = 0;
  clock_reads = 0;
  stop_calls = 0; /* the uninterrupted run: its clock reads counted */
  cr_assert_eq(cp_plan_task(st, &task, &o, &r, &e), CP_PLAN_SOLVED, "%s",
               e.msg);
  const long reads = clock_reads;
  cr_assert_gt(reads, 100);
  sqlite3 *s = x.db = synth_open_db(x.path);
  for (int k = 0; k < 6; ++k) {
    stop_flag = 0;
    clock_reads = 0;
    stop_calls = reads * (2 * k + 1) / 12;
    cr_assert_eq(cp_plan_task(st, &task, &o, &r, &e), CP_PLAN_INTERRUPTED,
                 "stopped at clock read %ld of %ld: %s", stop_calls, reads,
                 e.msg);
    long long n = synth_query_int(s, "SELECT nodes FROM searches ORDER BY "
                                     "id DESC LIMIT 1");
    cr_assert(n > 1 && n < 300, "%lld nodes", n);
    cr_assert_eq(plan(st, &task, "sst", 2, 300, 1, 0, &r, &e),
                 CP_PLAN_SOLVED, "%s", e.msg);
    cr_assert_eq(r.run_id, k + 2);
    cr_assert_gt(synth_assert_same_run(s, 1, s, k + 2, "stopped mid-batch"),
                 n);
  }
  interrupted_free(&x);
}

/* complan plan of the pipelined push task on 2 threads, killed (SIGKILL)
 * once 100 nodes are committed. */
static sqlite3 *killed_pipelined_run(char **task, char **db) {
  *task = synth_push_task_with(4, "\"pipeline\": true");
  *db = synth_temp_db();
  sqlite3 *s = synth_kill_push_run(*task, *db);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM pending_batches"), 1);
  return s;
}

Test(pipeline, a_killed_run_resumes_on_1_thread_into_the_uninterrupted_one) {
  char *task, *db;
  sqlite3 *s = killed_pipelined_run(&task, &db);
  synth_killed_push_resumes(s, task, db, "2", NULL);
}

static void resume_on_2_threads(const char *task, const char *db) {
  const char *argv[] = {"complan", "plan", task, "--db", db, "--method",
                        "sst", "--seed", "4", "--max-nodes", "1500",
                        "--max-seconds", "3600", "--threads", "2", "--json",
                        "--resume", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert(json_is_true(json_object_get(doc, "resumed")));
  json_decref(doc);
}

Test(pipeline, a_killed_run_resumes_on_2_threads_into_the_uninterrupted_one) {
  char *task, *db;
  sqlite3 *s = killed_pipelined_run(&task, &db);
  synth_killed_push_resumes(s, task, db, "1", resume_on_2_threads);
}

/* Gives the stored pending batch's first iteration node `id` (its first
 * int64), leaving the rest as it is. */
static void set_first_node(sqlite3 *s, long long id) {
  sqlite3_stmt *q;
  cr_assert_eq(sqlite3_prepare_v2(s, "SELECT data FROM pending_batches",
                                  -1, &q, NULL), SQLITE_OK);
  cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
  int n = sqlite3_column_bytes(q, 0);
  cr_assert_geq(n, 8);
  unsigned char *d = malloc((size_t)n);
  memcpy(d, sqlite3_column_blob(q, 0), (size_t)n);
  sqlite3_finalize(q);
  int64_t v = id;
  memcpy(d, &v, sizeof v);
  cr_assert_eq(sqlite3_prepare_v2(s, "UPDATE pending_batches SET data = ?1",
                                  -1, &q, NULL), SQLITE_OK);
  sqlite3_bind_blob(q, 1, d, n, SQLITE_TRANSIENT);
  cr_assert_eq(sqlite3_step(q), SQLITE_DONE);
  sqlite3_finalize(q);
  free(d);
}

/* A pipelined run without its pending batch (as stored before schema
 * version 4), or with a damaged one: --resume is refused with exit status
 * 2 and a message naming the run, and nothing is written. */
Test(pipeline, a_run_without_its_pending_batch_is_refused_on_resume) {
  interrupted x;
  interrupt_run(&x, "sst", 2);
  sqlite3 *s = x.db;
  cp_store *st = x.st;
  cp_task task = x.task;
  long long n0 = x.nodes;
  cp_plan_result r;
  cp_error e;
  /* Damaged: one byte short, then a node id beyond the stored ones. */
  cr_assert_eq(sqlite3_exec(s, "UPDATE pending_batches SET data = "
                               "substr(data, 1, length(data) - 1)",
                            NULL, NULL, NULL), SQLITE_OK);
  cr_assert_eq(plan(st, &task, "sst", 2, 400, 1, 0, &r, &e),
               CP_PLAN_BAD_INPUT);
  cr_assert(strstr(e.msg, "run 1") && strstr(e.msg, "pending batch") &&
                strstr(e.msg, "cut short"), "%s", e.msg);
  set_first_node(s, n0);
  cr_assert_eq(plan(st, &task, "sst", 2, 400, 1, 0, &r, &e),
               CP_PLAN_BAD_INPUT);
  cr_assert(strstr(e.msg, "run 1") && strstr(e.msg, "not stored"), "%s",
            e.msg);
  /* Missing (an older complan's pipelined run). */
  cr_assert_eq(sqlite3_exec(s, "DELETE FROM pending_batches", NULL, NULL,
                            NULL), SQLITE_OK);
  cr_assert_eq(plan(st, &task, "sst", 2, 400, 1, 0, &r, &e),
               CP_PLAN_BAD_INPUT);
  cr_assert(strstr(e.msg, "search.pipeline") && strstr(e.msg, "run 1") &&
                strstr(e.msg, "cannot be resumed"), "%s", e.msg);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM nodes"), n0,
               "the database as it was");
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM searches"), 1);
  cr_assert_eq(synth_query_int(s, "SELECT sessions FROM searches"), 1);
  interrupted_free(&x);
}

/* The default's rule (cp_task_search_mode): given values win, with halves
 * of the batch given; unset, rrt and sst at batch >= 4 pipeline halves of
 * batch / 2 rounded down. Batch 1 and 3 (rrt, sst) and astar at batch 4
 * run unpipelined with search.pipeline unset, their options without the
 * key, their trees those of an explicit false. */
Test(pipeline, the_default_follows_the_method_and_the_batch) {
  cp_task t = {.search_pipeline = -1};
  const struct {
    int given;
    const char *method;
    int batch, pipeline, half;
  } rule[] = {
      {-1, "sst", 4, 1, 2},     {-1, "rrt", 16, 1, 8}, {-1, "sst", 5, 1, 2},
      {-1, "rrt", 7, 1, 3},     {-1, "rrt", 3, 0, 3},  {-1, "sst", 2, 0, 2},
      {-1, "rrt", 1, 0, 1},     {-1, "astar", 16, 0, 16},
      {-1, NULL, 4, 0, 4},      {0, "sst", 16, 0, 16}, {1, "rrt", 16, 1, 16},
      {1, "astar", 1, 1, 1}, /* refused by cp_search_create, not here */
  };
  for (size_t k = 0; k < sizeof rule / sizeof *rule; ++k) {
    t.search_pipeline = rule[k].given;
    int half = -1;
    cr_assert_eq(cp_task_search_mode(&t, rule[k].method, rule[k].batch,
                                     &half),
                 rule[k].pipeline, "case %zu", k);
    cr_assert_eq(half, rule[k].half, "case %zu", k);
    cr_assert_eq(cp_task_search_mode(&t, rule[k].method, rule[k].batch, NULL),
                 rule[k].pipeline, "case %zu", k);
  }

  const struct {
    int batch;
    const char *method;
  } c[5] = {{1, "sst"}, {1, "rrt"}, {4, "astar"}, {3, "rrt"}, {2, "sst"}};
  for (int k = 0; k < 5; ++k) {
    char *file = synth_push_task_with(c[k].batch, NULL);
    cp_task task;
    cp_error e;
    cr_assert_eq(cp_task_load(file, &task, &e), 0, "%s", e.msg);
    cr_assert_eq(task.search_pipeline, -1);
    char *path = synth_temp_db();
    cp_store *st = synth_open_store(path);
    cp_plan_result r[2];
    for (int j = 0; j < 2; ++j) {
      task.search_pipeline = j ? 0 : -1;
      cp_plan_status s = plan(st, &task, c[k].method, 2, 120, 0, 0, &r[j], &e);
      cr_assert(s == CP_PLAN_SOLVED || s == CP_PLAN_LIMIT, "%s batch %d: %s",
                c[k].method, c[k].batch, e.msg);
    }
    cp_store_close(st);
    sqlite3 *db = synth_open_db(path);
    cr_assert_gt(synth_assert_same_run(db, 1, db, 2, c[k].method), 10);
    cr_assert_eq(r[0].stats.lcp_solves, r[1].stats.lcp_solves);
    cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM searches WHERE "
                                     "options LIKE '%search_pipeline%'"),
                 0, "%s batch %d", c[k].method, c[k].batch);
    cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM pending_batches"),
                 0);
    sqlite3_close(db);
    synth_remove_db(path);
    cp_task_free(&task);
    remove(file);
    free(file);
  }
}

/* The push task at `batch` without search.pipeline (*file, loaded into
 * *task) and a new store at *path. */
static cp_store *default_task_store(int batch, char **file, cp_task *task,
                                    char **path) {
  cp_error e;
  *file = synth_push_task_with(batch, NULL);
  cr_assert_eq(cp_task_load(*file, task, &e), 0, "%s", e.msg);
  cr_assert_eq(task->search_pipeline, -1);
  *path = synth_temp_db();
  return synth_open_store(*path);
}

/* A plain batched run as every complan before session 26 stored it (the
 * task without search.pipeline, the run's options without the key),
 * interrupted at 100 nodes: resumed now, when the same task text means
 * pipelined batches for a new run, it goes on plain (the run's record
 * decides), into the uninterrupted plain run; a new run of the same task
 * is the pipelined one. */
Test(pipeline, an_old_plain_run_resumes_plain) {
  char *file, *path;
  cp_task task;
  cp_error e;
  cp_store *st = default_task_store(4, &file, &task, &path);
  cp_plan_result r0, r1, r2, r3;
  task.search_pipeline = 0; /* what an older complan did with this text */
  cr_assert_eq(plan(st, &task, "sst", 2, 400, 0, 100, &r0, &e),
               CP_PLAN_INTERRUPTED, "%s", e.msg);
  sqlite3 *db = synth_open_db(path);
  const long long n0 = synth_query_int(db, "SELECT count(*) FROM nodes");
  cr_assert(n0 >= 100 && n0 < 400, "%lld nodes", n0);
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM searches WHERE "
                                   "options LIKE '%search_pipeline%'"),
               0);
  task.search_pipeline = -1; /* the same text read by this complan */
  cp_plan_status a = plan(st, &task, "sst", 1, 400, 1, 0, &r1, &e);
  cr_assert(a == CP_PLAN_SOLVED || a == CP_PLAN_LIMIT, "%s", e.msg);
  cr_assert(r1.resumed);
  cr_assert_eq(r1.run_id, 1);
  task.search_pipeline = 0; /* run 2: uninterrupted, plain */
  cr_assert_eq(plan(st, &task, "sst", 2, 400, 0, 0, &r2, &e), a, "%s",
               e.msg);
  task.search_pipeline = -1; /* run 3: a new run takes the default */
  cp_plan_status c = plan(st, &task, "sst", 2, 400, 0, 0, &r3, &e);
  cr_assert(c == CP_PLAN_SOLVED || c == CP_PLAN_LIMIT, "%s", e.msg);
  cr_assert_gt(synth_assert_same_run(db, 1, db, 2, "resumed old plain run"),
               n0);
  cr_assert_eq(r1.stats.expansions, r2.stats.expansions);
  cr_assert_eq(r1.stats.lcp_solves, r2.stats.lcp_solves);
  cr_assert(r1.cost == r2.cost || (isnan(r1.cost) && isnan(r2.cost)));
  long long n;
  cr_assert_neq(synth_run_digest(db, 3, &n), synth_run_digest(db, 1, &n),
                "a new run is pipelined");
  cr_assert_eq(synth_query_int(db, "SELECT group_concat(id) FROM searches "
                                   "WHERE options LIKE "
                                   "'%\"search_batch\": 2, "
                                   "\"search_pipeline\": true%'"),
               3, "halves of 2");
  sqlite3_close(db);
  cp_store_close(st);
  synth_remove_db(path);
  cp_task_free(&task);
  remove(file);
  free(file);
}

/* An odd batch, 5: the default pipelines halves of 2 (4 in flight, never
 * more than the task's 5), the tree of an explicit pipelined run at batch
 * 2, on 1 and 2 threads; its options say batch 2. */
Test(pipeline, an_odd_batch_pipelines_halves_rounded_down) {
  char *file, *path;
  cp_task task;
  cp_error e;
  cp_store *st = default_task_store(5, &file, &task, &path);
  const int threads[3] = {1, 2, 1}, given[3] = {-1, -1, 1},
            batch[3] = {5, 5, 2};
  cp_plan_result r[3];
  for (int k = 0; k < 3; ++k) {
    task.search_pipeline = given[k];
    task.search_batch = batch[k];
    cp_plan_status s = plan(st, &task, "rrt", threads[k], 200, 0, 0, &r[k], &e);
    cr_assert(s == CP_PLAN_SOLVED || s == CP_PLAN_LIMIT, "%s", e.msg);
  }
  cp_store_close(st);
  sqlite3 *db = synth_open_db(path);
  for (int k = 1; k < 3; ++k) {
    cr_assert_gt(synth_assert_same_run(db, 1, db, k + 1, "odd batch"), 10);
    cr_assert_eq(r[k].stats.lcp_solves, r[0].stats.lcp_solves);
  }
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM searches WHERE "
                                   "options LIKE '%\"search_batch\": 2, "
                                   "\"search_pipeline\": true%'"),
               3);
  sqlite3_close(db);
  synth_remove_db(path);
  cp_task_free(&task);
  remove(file);
  free(file);
}

/* complan plan of the push task at batch 8 without search.pipeline (the
 * default: halves of 4) on 2 threads, killed (SIGKILL) once 100 nodes are
 * committed, resumed on 1 thread: the uninterrupted default run, which is
 * also an explicit pipelined run at batch 4. */
Test(pipeline, a_killed_default_run_resumes_with_its_halves) {
  char *task = synth_push_task_with(8, NULL), *db = synth_temp_db();
  sqlite3 *s = synth_kill_push_run(task, db);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM pending_batches"), 1);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM searches WHERE "
                                  "options LIKE '%\"search_batch\": 4, "
                                  "\"search_pipeline\": true%'"),
               1);
  cr_assert_eq(synth_query_int(s, "SELECT iterations FROM pending_batches"),
               4, "a half drawn");
  /* complan plans shows the batches: 2x4, pipelined halves of 4. */
  const char *lv[] = {"complan", "plans", "--db", db, NULL, NULL};
  char *out = NULL;
  cr_assert_eq(cpt_run(lv, &out, NULL), 0);
  cr_assert(strstr(out, " batches ") && strstr(out, " 2x4 "), "%s", out);
  free(out);
  lv[4] = "--json";
  json_t *list = cpt_run_json(lv, 0),
         *run = json_array_get(json_object_get(list, "runs"), 0);
  cr_assert_eq(json_integer_value(json_object_get(run, "search_batch")), 4);
  cr_assert(json_is_true(json_object_get(run, "search_pipeline")));
  json_decref(list);
  char *task4 = synth_push_task_with(4, "\"pipeline\": true"),
       *db4 = synth_temp_db();
  const char *argv[] = {"complan", "plan", task4, "--db", db4, "--method",
                        "sst", "--seed", "4", "--max-nodes", "1500",
                        "--max-seconds", "3600", "--threads", "1", "--json",
                        NULL};
  json_decref(cpt_run_json(argv, 0));
  sqlite3 *s4 = synth_open_db(db4);
  /* synth_killed_push_resumes closes s and removes task and db */
  synth_killed_push_resumes(s, task, db, "2", NULL);
  char *task8 = synth_push_task_with(8, NULL), *db8 = synth_temp_db();
  argv[2] = task8;
  argv[4] = db8;
  json_decref(cpt_run_json(argv, 0));
  sqlite3 *s8 = synth_open_db(db8);
  cr_assert_gt(synth_assert_same_run(s8, 1, s4, 1, "default 8 = pipelined 4"),
               100);
  sqlite3_close(s4);
  sqlite3_close(s8);
  synth_remove_db(db4);
  synth_remove_db(db8);
  remove(task4);
  remove(task8);
  free(task4);
  free(task8);
}
