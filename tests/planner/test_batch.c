/* search.batch (planner/search/batch.c) on the synthetic problems: the
 * nodes do not depend on the order or the worker a batch's jobs run in
 * (a problem whose expand_batch runs them backwards), astar's batches give
 * the nodes of batch 1, rrt and sst still solve, a batch run resumes from
 * its nodes into the uninterrupted run's tree, and bad batches and failing
 * workers are errors. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/search/search.h"
#include "synth.h"

/* The problem with an expand_batch that runs the jobs last to first (as a
 * pool of workers might finish them), or fails. */
typedef struct backwards {
  cp_search_problem inner;
  int calls, fail;
} backwards;

static int run_backwards(void *ctx, cp_expand_job *jobs, int n) {
  backwards *b = ctx;
  b->calls++;
  if (b->fail) return -1;
  for (int k = n - 1; k >= 0; --k)
    cp_expand_job_run(b->inner.expand, b->inner.ctx, &jobs[k]);
  return 0;
}

/* The inner problem's callbacks all take the inner ctx: a wrapper per
 * callback would be noise, so the wrapper shares the inner ctx and keeps
 * itself at file level (one search at a time per test). */
static backwards current;
static int bw_batch(void *ctx, cp_expand_job *jobs, int n,
                    const cp_batch_meanwhile *meanwhile) {
  (void)ctx;
  if (meanwhile) meanwhile->fn(meanwhile->ctx);
  return run_backwards(&current, jobs, n);
}

static cp_search_problem with_backwards(backwards **b,
                                        const cp_search_problem *p) {
  memset(&current, 0, sizeof current);
  current.inner = *p;
  *b = &current;
  cp_search_problem q = *p;
  q.expand_batch = bw_batch;
  return q;
}

/* Digest of every node: id, parent, action, flags, outcome, cost, state. */
static unsigned long long digest(const cp_search *s) {
  unsigned long long h = 1469598103934665603ull;
  int n = cp_search_state_size(s);
  for (long id = 0; id < cp_search_node_count(s); ++id) {
    const cp_search_node *d = cp_search_node_get(s, id);
    long v[5] = {d->id, d->parent, d->action, d->flags, (long)d->outcome};
    const unsigned char *parts[3] = {(const void *)v, (const void *)&d->cost,
                                     (const void *)cp_search_state(s, id)};
    size_t lens[3] = {sizeof v, sizeof d->cost, (size_t)n * sizeof(double)};
    for (int k = 0; k < 3; ++k)
      for (size_t i = 0; i < lens[k]; ++i)
        h = (h ^ parts[k][i]) * 1099511628211ull;
  }
  return h;
}


static cp_search_options point_options(const char *method, int batch) {
  cp_search_options o = cp_search_defaults();
  o.method = method;
  o.seed = 5;
  o.goal_bias = 0.1;
  o.candidates = 4;
  o.delta_bn = 0.1;
  o.delta_s = 0.03;
  o.max_nodes = 3000;
  o.batch = batch;
  return o;
}

/* One run of the point problem: status, digest, node count, best. */
typedef struct outcome {
  cp_search_status st;
  unsigned long long digest;
  long nodes, best, iterations, expansions;
} outcome;

static outcome run_point(const char *method, int batch, int backwards_jobs,
                         long iters) {
  synth_point pt = {0};
  cp_search_problem p = synth_point_problem(&pt);
  backwards *b = NULL;
  cp_search_problem q = backwards_jobs ? with_backwards(&b, &p) : p;
  cp_search_options o = point_options(method, batch);
  char msg[256];
  double x0[2] = {0.1, 0.1};
  cp_search *s = cp_search_create(&q, &o, x0, 0, msg, sizeof msg);
  cr_assert(s, "%s", msg);
  outcome r;
  r.st = synth_run(s, iters);
  r.digest = digest(s);
  r.nodes = cp_search_node_count(s);
  r.best = cp_search_best(s);
  r.iterations = cp_search_get_stats(s)->iterations;
  r.expansions = cp_search_get_stats(s)->expansions;
  if (backwards_jobs && batch > 1) cr_assert(b->calls > 0, "expand_batch used");
  cp_search_destroy(s);
  return r;
}

static void same_for_any_order(const char *method) {
  outcome a = run_point(method, 4, 0, 100000);
  outcome b = run_point(method, 4, 1, 100000);
  cr_assert_eq(a.st, b.st, "%s", method);
  cr_assert_eq(a.nodes, b.nodes, "%s: %ld vs %ld nodes", method, a.nodes,
               b.nodes);
  cr_assert_eq(a.digest, b.digest, "%s", method);
  cr_assert_eq(a.best, b.best, "%s", method);
  cr_assert_eq(a.expansions, b.expansions);
  cr_assert(a.nodes > 50, "%s: a real search (%ld nodes)", method, a.nodes);
}

Test(batch, astar_nodes_do_not_depend_on_job_order) {
  same_for_any_order("astar");
}
Test(batch, rrt_nodes_do_not_depend_on_job_order) {
  same_for_any_order("rrt");
}
Test(batch, sst_nodes_do_not_depend_on_job_order) {
  same_for_any_order("sst");
}

Test(batch, astar_batches_are_batch_one) {
  /* Siblings do not depend on one another: any batch gives batch 1's
   * nodes, and the same optimum as Dijkstra on the maze. */
  outcome one = run_point("astar", 1, 0, 100000);
  for (int b = 2; b <= 9; b += 7) {
    outcome k = run_point("astar", b, 1, 100000);
    cr_assert_eq(k.st, one.st);
    cr_assert_eq(k.nodes, one.nodes, "batch %d", b);
    cr_assert_eq(k.digest, one.digest, "batch %d", b);
  }
  synth_grid g = synth_maze_grid();
  cp_search_problem p = synth_grid_problem(&g);
  backwards *bw;
  cp_search_problem q = with_backwards(&bw, &p);
  cp_search_options o = cp_search_defaults();
  o.weight = 1.0;
  o.batch = 3;
  char msg[256];
  double x0[2] = {0, 0};
  cp_search *s = cp_search_create(&q, &o, x0, 0, msg, sizeof msg);
  cr_assert_eq(synth_run(s, 100000), CP_SEARCH_SOLVED);
  cr_assert_float_eq(cp_search_node_get(s, cp_search_best(s))->cost,
                     synth_grid_dijkstra(&g), 1e-12);
  cp_search_destroy(s);
}

Test(batch, sampling_planners_batch_their_iterations_and_solve) {
  /* rrt: one cp_search_iterate is a batch of 4 iterations of 4 candidates;
   * the goal ends it (the rest of the batch is dropped). sst: keeps
   * improving until the node limit. */
  outcome r = run_point("rrt", 4, 1, 100000);
  cr_assert_eq(r.st, CP_SEARCH_SOLVED);
  cr_assert(r.best > 0);
  cr_assert_eq(r.expansions, r.nodes - 1, "every merged job is a node");
  outcome t = run_point("sst", 4, 1, 100000);
  cr_assert_eq(t.st, CP_SEARCH_NODE_LIMIT);
  cr_assert(t.best > 0, "sst found a plan");
  cr_assert(t.nodes <= 3000 && t.nodes > 3000 - 4 * 4, "%ld nodes", t.nodes);
  /* Batches differ from single iterations (drawn from the tree before the
   * batch), so batch 4 is its own search. */
  outcome t1 = run_point("sst", 1, 0, 100000);
  cr_assert_neq(t1.digest, t.digest);
}

/* A batch run interrupted after `first` calls, rebuilt from its nodes and
 * continued, grows the uninterrupted run's nodes. */
static void resume_matches(const char *method, long first) {
  synth_point pt = {0};
  cp_search_problem p = synth_point_problem(&pt);
  cp_search_options o = point_options(method, 4);
  o.max_nodes = 1500;
  char msg[256];
  double x0[2] = {0.1, 0.1};
  cp_search *a = cp_search_create(&p, &o, x0, 0, msg, sizeof msg);
  cp_search_status sa = synth_run(a, 100000);
  cp_search *b = cp_search_create(&p, &o, x0, 0, msg, sizeof msg);
  cr_assert_eq(synth_run(b, first), CP_SEARCH_RUNNING);
  cp_search *c = cp_search_create(&p, &o, x0, 1, msg, sizeof msg);
  for (long id = 0; id < cp_search_node_count(b); ++id)
    cr_assert_eq(cp_search_adopt(c, cp_search_node_get(b, id),
                                 cp_search_state(b, id), NULL, 0), 0);
  for (long w = 0; w < cp_search_witness_count(b); ++w) {
    long rep;
    const double *pt_w = cp_search_witness(b, w, &rep);
    cr_assert_eq(cp_search_adopt_witness(c, w, pt_w, 2, rep), 0);
  }
  cr_assert_eq(cp_search_resume(c, cp_search_rng(b), cp_search_get_stats(b)),
               0);
  cp_search_status sc = synth_run(c, 100000);
  cr_assert_eq(sa, sc, "%s", method);
  cr_assert_eq(cp_search_node_count(a), cp_search_node_count(c), "%s", method);
  cr_assert_eq(digest(a), digest(c), "%s: the uninterrupted nodes", method);
  cp_search_destroy(a);
  cp_search_destroy(b);
  cp_search_destroy(c);
}

Test(batch, a_batch_run_resumes_into_the_uninterrupted_nodes) {
  resume_matches("astar", 25);
  resume_matches("rrt", 10);
  resume_matches("sst", 60);
}

Test(batch, bad_batches_and_failing_workers_are_errors) {
  synth_point pt = {0};
  cp_search_problem p = synth_point_problem(&pt);
  char msg[256];
  double x0[2] = {0.1, 0.1};
  cp_search_options o = point_options("rrt", 0);
  cr_assert_null(cp_search_create(&p, &o, x0, 0, msg, sizeof msg));
  cr_assert(strstr(msg, "batch 0"), "%s", msg);
  o.batch = CP_SEARCH_MAX_BATCH + 1;
  cr_assert_null(cp_search_create(&p, &o, x0, 0, msg, sizeof msg));
  backwards *b;
  cp_search_problem q = with_backwards(&b, &p);
  b->fail = 1;
  const char *const methods[] = {"astar", "rrt", "sst"};
  for (int k = 0; k < 3; ++k) {
    o = point_options(methods[k], 4);
    o.goal_bias = 0; /* sst: one action an iteration, four a batch */
    cp_search *s = cp_search_create(&q, &o, x0, 0, msg, sizeof msg);
    cr_assert(s, "%s", msg);
    cr_assert_eq(synth_run(s, 10), CP_SEARCH_FAILED, "%s", methods[k]);
    cr_assert(strstr(cp_search_message(s), "workers"), "%s",
              cp_search_message(s));
    cp_search_destroy(s);
  }
}
