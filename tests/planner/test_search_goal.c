/* The search's goal handling (planner/search/search.h): the goal test at
 * generation under a node limit, the best near-miss (synthetic problems,
 * tests/planner/synth.h); continuous sampling on the push task. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/plan/plan.h"
#include "planner/search/search.h"
#include "synth.h"

static cp_search *start(synth_grid *g, const char *method, long max_nodes) {
  cp_search_problem p = synth_grid_problem(g);
  cp_search_options o = cp_search_defaults();
  o.method = method;
  o.weight = 1.0;
  o.max_nodes = max_nodes;
  char msg[256];
  cp_search *s = cp_search_create(&p, &o, (double[]){g->start[0], g->start[1]},
                                  0, msg, sizeof msg);
  cr_assert(s, "%s", msg);
  return s;
}

static cp_search_status run(cp_search *s) {
  cp_search_status st;
  do st = cp_search_iterate(s);
  while (st == CP_SEARCH_RUNNING);
  return st;
}

Test(search_goal, astar_keeps_a_goal_node_generated_before_a_node_limit) {
  synth_grid g = synth_maze_grid();
  /* Unlimited: the plan and the id of the goal node that ended it. */
  cp_search *s = start(&g, "astar", 100000);
  cr_assert_eq(run(s), CP_SEARCH_SOLVED);
  long goal = cp_search_best(s);
  double cost = cp_search_node_get(s, goal)->cost;
  cr_assert_float_eq(cost, synth_grid_dijkstra(&g), 1e-12);
  long total = cp_search_node_count(s);
  cp_search_destroy(s);
  /* A node limit that stops the search right after the goal node is
   * created: it was never popped (a popped-only test finds no plan), yet
   * the search holds it as its best. */
  cr_assert(goal + 1 < total, "the goal node was the last one created");
  s = start(&g, "astar", goal + 1);
  cr_assert_eq(run(s), CP_SEARCH_NODE_LIMIT);
  long best = cp_search_best(s);
  cr_assert_geq(best, 0, "no goal node kept under the limit");
  const cp_search_node *n = cp_search_node_get(s, best);
  cr_assert(n->flags & CP_NODE_GOAL);
  cr_assert(!(n->flags & CP_NODE_EXPANDED));
  const double *x = cp_search_state(s, best);
  cr_assert(x[0] == g.goal[0] && x[1] == g.goal[1]);
  cr_assert_eq(cp_search_best_distance(s), 0);
  cr_assert_eq(cp_search_nearest(s), best);
  /* Under a limit one node short there is no goal node at all. */
  cp_search_destroy(s);
  s = start(&g, "astar", goal);
  cr_assert_eq(run(s), CP_SEARCH_NODE_LIMIT);
  cr_assert_eq(cp_search_best(s), -1);
  cr_assert_gt(cp_search_best_distance(s), 0);
  cp_search_destroy(s);
}

Test(search_goal, the_best_near_miss_is_the_nearest_node) {
  synth_grid g = synth_maze_grid();
  cp_search *s = start(&g, "astar", 25);
  cr_assert_eq(run(s), CP_SEARCH_NODE_LIMIT);
  long near = cp_search_nearest(s);
  cr_assert_geq(near, 0);
  /* Independently: the least distance over the accepted nodes (the grid's
   * distance is Euclidean between cells), the first node that has it. */
  double best = INFINITY;
  long at = -1;
  for (long k = 0; k < cp_search_node_count(s); ++k) {
    const cp_search_node *n = cp_search_node_get(s, k);
    if (n->outcome != CP_EXPAND_OK) continue;
    const double *x = cp_search_state(s, k);
    double d = hypot(x[0] - g.goal[0], x[1] - g.goal[1]);
    if (d < best) {
      best = d;
      at = k;
    }
  }
  cr_assert_float_eq(cp_search_best_distance(s), best, 1e-12);
  cr_assert_eq(near, at);
  cp_search_destroy(s);
}

/* --- continuous sampling (search.sampling "continuous") ------------------- */


static char *push_text(const char *method, const char *extra) {
  static char buf[4096];
  snprintf(buf, sizeof buf,
           "{\"scene\": \"%s/models/scenes/plan_push.json\","
           " \"inputs\": {\"finger/slide\": {\"range\": [-2, 4], \"samples\":"
           " 4}}, \"action\": {\"duration\": 0.1, \"dt\": 0.005},"
           " \"goal\": {\"body\": \"box\", \"position\": [0.15, 0, 0.05],"
           " \"tolerance\": 0.02},"
           " \"bounds\": {\"min\": [-0.5, -0.5, 0], \"max\": [0.5, 0.5, 0.5]},"
           " \"search\": {\"method\": \"%s\", \"sampling\": \"continuous\"%s},"
           " \"limits\": {\"nodes\": 60}}",
           getenv("CP_SOURCE_ROOT"), method, extra);
  return buf;
}

static void load(const char *text, cp_task *t) {
  cp_error e;
  cr_assert_eq(cp_task_parse(text, strlen(text), NULL, t, &e), 0, "%s: %s",
               e.where, e.msg);
}

Test(search_goal, continuous_actions_are_seeds_of_values_in_range) {
  cp_task t;
  load(push_text("rrt", ""), &t);
  cr_assert(t.continuous);
  cr_assert_eq(t.n_actions, CP_TASK_CONTINUOUS_ACTIONS);
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  int on_grid = 0;
  for (long a = 0; a < 4000; ++a) {
    double v, w;
    cp_task_action_values(&t, a * 7919 + 3, &v);
    cp_task_action_values(&t, a * 7919 + 3, &w);
    cr_assert(v == w, "action %ld is not one value", a);
    cr_assert(v >= -2 && v <= 4);
    /* The cost follows the value: time 1, effort 0 by default. */
    cr_assert_float_eq(cp_task_action_cost(&t, a * 7919 + 3), 0.1, 1e-15);
    lo = fmin(lo, v);
    hi = fmax(hi, v);
    sum += v;
    on_grid += v == -2 || v == 0 || v == 2 || v == 4;
  }
  /* Uniform over [-2, 4]: spread to both ends, mean 1 (sd of the mean of
   * 4000 is 0.027), none on the 4-sample grid. */
  cr_assert(lo < -1.99 && hi > 3.99, "%g .. %g", lo, hi);
  cr_assert_float_eq(sum / 4000, 1.0, 0.15);
  cr_assert_eq(on_grid, 0);
  cp_task_free(&t);
  /* astar keeps the grid. */
  cp_error e;
  const char *bad = push_text("astar", "");
  cr_assert_eq(cp_task_parse(bad, strlen(bad), NULL, &t, &e), -1);
  cr_assert_str_eq(e.where, "search.sampling");
  bad = push_text("rrt", ", \"sampling\": \"fine\"");
  cr_assert_eq(cp_task_parse(bad, strlen(bad), NULL, &t, &e), -1);
}

/* An rrt or sst search of the continuous push to its node limit: the ids,
 * parents, actions and state bits, digested. */
static uint64_t continuous_run(const char *method, uint64_t seed, long *n) {
  cp_task t;
  load(push_text(method, ""), &t);
  cp_plan_world *pw;
  cp_error e;
  cr_assert_eq(cp_plan_world_create(&t, 1, &pw, &e), 0, "%s", e.msg);
  cp_search_options o = cp_search_defaults();
  o.method = method;
  o.seed = seed;
  o.max_nodes = t.max_nodes;
  char msg[256];
  cp_search *s = cp_search_create(cp_plan_world_problem(pw), &o,
                                  cp_plan_world_start(pw), 0, msg, sizeof msg);
  cr_assert(s, "%s", msg);
  run(s);
  uint64_t h = 1469598103934665603ull;
  *n = cp_search_node_count(s);
  for (long k = 0; k < *n; ++k) {
    const cp_search_node *nd = cp_search_node_get(s, k);
    long v[2] = {nd->parent, nd->action};
    const unsigned char *p = (const unsigned char *)v;
    for (size_t i = 0; i < sizeof v; ++i) h = (h ^ p[i]) * 1099511628211ull;
    p = (const unsigned char *)cp_search_state(s, k);
    for (size_t i = 0; i < (size_t)cp_search_state_size(s) * sizeof(double); ++i)
      h = (h ^ p[i]) * 1099511628211ull;
    if (k > 0) { /* a sampled value, within the range */
      double u;
      cp_task_action_values(&t, nd->action, &u);
      cr_assert(u >= -2 && u <= 4);
    }
  }
  cp_search_destroy(s);
  cp_plan_world_destroy(pw);
  cp_task_free(&t);
  return h;
}

Test(search_goal, continuous_sampling_is_reproducible_from_the_seed) {
  const char *methods[] = {"rrt", "sst"};
  for (int m = 0; m < 2; ++m) {
    long n1, n2, n3;
    uint64_t a = continuous_run(methods[m], 7, &n1);
    uint64_t b = continuous_run(methods[m], 7, &n2);
    uint64_t c = continuous_run(methods[m], 8, &n3);
    cr_assert_gt(n1, 10);
    cr_assert_eq(n1, n2);
    cr_assert_eq(a, b, "%s: seed 7 twice, two searches", methods[m]);
    cr_assert_neq(a, c, "%s: seeds 7 and 8, one search", methods[m]);
  }
}

/* --- shortcutting --------------------------------------------------------- */

/* Re-simulates the path to `goal` from the start with the problem's own
 * expansion: every state as stored, every outcome accepted, the end in the
 * goal, the cost the sum of the action costs. Returns the cost. */
static double resimulate(const cp_search_problem *p, cp_search *s, long goal) {
  long ids[4096];
  long len = cp_search_path(s, goal, ids, 4096);
  cr_assert(len >= 1 && len <= 4096);
  double x[8], y[8], cost = 0;
  int n = cp_search_state_size(s);
  cr_assert(n <= 8);
  memcpy(x, cp_search_state(s, 0), (size_t)n * sizeof *x);
  for (long k = 1; k < len; ++k) {
    const cp_search_node *nd = cp_search_node_get(s, ids[k]);
    cr_assert_eq(nd->parent, ids[k - 1]);
    cp_expansion info;
    memset(&info, 0, sizeof info);
    cr_assert_eq(p->expand(p->ctx, x, 0, NULL, 0, nd->action, y, &info), 0);
    cr_assert_eq(info.outcome, CP_EXPAND_OK);
    cr_assert_eq(memcmp(y, cp_search_state(s, ids[k]), (size_t)n * sizeof *y),
                 0, "step %ld differs from its node", k);
    cost += p->action_cost(p->ctx, nd->action);
    memcpy(x, y, sizeof x);
  }
  cr_assert(p->in_goal(p->ctx, x), "the plan ends outside the goal");
  cr_assert_float_eq(cost, cp_search_node_get(s, goal)->cost, 1e-9);
  return cost;
}

Test(search_goal, shortcutting_keeps_only_plans_that_reach_the_goal) {
  int shortened = 0;
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    synth_point pt = {0};
    cp_search_problem p = synth_point_problem(&pt);
    cp_search_options o = cp_search_defaults();
    o.method = seed % 2 ? "rrt" : "sst";
    o.seed = seed;
    o.max_nodes = 3000;
    char msg[256];
    cp_search *s = cp_search_create(&p, &o, (double[]){0.1, 0.1}, 0, msg,
                                    sizeof msg);
    cr_assert(s, "%s", msg);
    run(s);
    long goal = cp_search_best(s);
    cr_assert_geq(goal, 0, "seed %lu: no plan", (unsigned long)seed);
    double before = resimulate(&p, s, goal);
    long n0 = cp_search_node_count(s);
    long got = cp_search_shortcut(s, goal, 20000);
    cr_assert_geq(got, 0, "%s", cp_search_message(s));
    cr_assert_eq(cp_search_best(s), got);
    /* Whatever happened: a plan that re-simulates into the goal, never
     * costlier; the new nodes are all flagged (rejected cuts are stored as
     * data too). */
    cr_assert(cp_search_node_get(s, got)->flags & CP_NODE_GOAL);
    double after = resimulate(&p, s, got);
    cr_assert_leq(after, before);
    for (long k = n0; k < cp_search_node_count(s); ++k)
      cr_assert(cp_search_node_get(s, k)->flags & CP_NODE_SHORTCUT);
    if (got != goal) {
      cr_assert_lt(after, before);
      cr_assert_geq(got, n0);
      shortened++;
    }
    /* No plan beats the straight line: 0.8 sqrt 2 - 0.06 at 0.05 per unit
     * cost along the diagonal, around the wall or not. */
    cr_assert_geq(after, (0.8 * sqrt(2) - 0.06) / 0.05 - 1e-9);
    cp_search_destroy(s);
  }
  cr_assert_gt(shortened, 0, "no plan of six was shortened");
}

Test(search_goal, shortcut_of_a_non_goal_node_changes_nothing) {
  synth_grid g = synth_maze_grid();
  cp_search_problem p = synth_grid_problem(&g);
  cp_search_options o = cp_search_defaults();
  o.max_nodes = 10;
  char msg[256];
  cp_search *s = cp_search_create(&p, &o, (double[]){0, 0}, 0, msg, sizeof msg);
  cr_assert(s);
  cr_assert_eq(run(s), CP_SEARCH_NODE_LIMIT);
  cr_assert_eq(cp_search_shortcut(s, 3, 100), 3);
  cr_assert_eq(cp_search_node_count(s), 10);
  cr_assert_eq(cp_search_best(s), -1);
  cp_search_destroy(s);
}
