/* Pipelined batches (search.pipeline, cp_search_options.pipeline;
 * docs/parallel.md, "Pipelined batches"): batch k + 1 drawn from the tree
 * as merged up to batch k - 1. The nodes are the same for 1, 2 and 4
 * threads (sst and rrt on the push task at batch 4) and differ from the
 * unpipelined search's; the node limit holds; bad settings are input
 * errors; a pipelined run is refused on --resume (its drawn, unmerged
 * batch is not stored), leaving its database as it was. */
#include <criterion/criterion.h>
#include <signal.h>
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

static void same_for_any_thread_count(const char *method) {
  char *file = synth_push_task(4);
  cp_task task;
  cp_error e;
  cr_assert_eq(cp_task_load(file, &task, &e), 0, "%s", e.msg);
  cr_assert_eq(task.search_pipeline, 0, "off by default");
  char *path = synth_temp_db();
  cp_store *st;
  char msg[512];
  cr_assert_eq(cp_store_open(path, 0, &st, msg, sizeof msg), CP_STORE_OK,
               "%s", msg);
  const int threads[4] = {1, 2, 4, 1};
  const long max_nodes = 301;
  cp_plan_result r[4];
  for (int k = 0; k < 4; ++k) {
    task.search_pipeline = k < 3; /* run 4: not pipelined */
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
  for (int k = 1; k < 3; ++k) {
    cr_assert_eq(synth_assert_same_run(db, 1, db, k + 1, method), n0);
    cr_assert_eq(r[k].stats.expansions, r[0].stats.expansions);
    cr_assert_eq(r[k].stats.lcp_solves, r[0].stats.lcp_solves);
    cr_assert_eq(r[k].cost, r[0].cost);
  }
  cr_assert_neq(synth_run_digest(db, 4, &n), d0,
                "%s: the pipelined search is another search", method);
  /* The run's options say it was pipelined (and only then). */
  cr_assert_eq(synth_query_int(db, "SELECT count(*) FROM searches WHERE "
                                   "options LIKE '%\"search_pipeline\": true%'"),
               3);
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

Test(pipeline, a_pipelined_run_is_refused_on_resume) {
  char *file = synth_push_task(4);
  cp_task task;
  cp_error e;
  cr_assert_eq(cp_task_load(file, &task, &e), 0, "%s", e.msg);
  task.search_pipeline = 1;
  char *path = synth_temp_db();
  cp_store *st;
  char msg[512];
  cr_assert_eq(cp_store_open(path, 0, &st, msg, sizeof msg), CP_STORE_OK);
  cp_plan_result r;
  cr_assert_eq(plan(st, &task, "sst", 2, 400, 0, 100, &r, &e),
               CP_PLAN_INTERRUPTED, "%s", e.msg);
  sqlite3 *s = synth_open_db(path);
  long long n0 = synth_query_int(s, "SELECT count(*) FROM nodes");
  cr_assert(n0 >= 100 && n0 < 400, "%lld nodes", n0);
  cr_assert_eq(plan(st, &task, "sst", 2, 400, 1, 0, &r, &e),
               CP_PLAN_BAD_INPUT);
  cr_assert(strstr(e.msg, "search.pipeline") && strstr(e.msg, "resumed"),
            "%s", e.msg);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM nodes"), n0,
               "the database as it was");
  sqlite3_close(s);
  cp_store_close(st);
  synth_remove_db(path);
  cp_task_free(&task);
  remove(file);
  free(file);
}
