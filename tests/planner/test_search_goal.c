/* The search's goal handling (planner/search/search.h): the goal test at
 * generation under a node limit, the best near-miss. Synthetic problems
 * (tests/planner/synth.h), no simulation. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
