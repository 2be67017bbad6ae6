/* The planners on synthetic problems (no simulation): A* against an
 * independent Dijkstra, duplicate detection, rejected outcomes as data,
 * RRT and SST solving a point-with-a-wall problem, the k-d tree against a
 * linear scan, and resume through cp_search_adopt. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/search/nn.h"
#include "planner/search/search.h"
#include "tests/support.h"
#include "synth.h"

static const char *const maze[] = {
    "..........",
    ".########.",
    ".#......#.",
    ".#.####.#.",
    ".#.#..#.#.",
    ".#.#......",
    ".#.####.##",
    ".#........",
    ".########.",
    ".........."};

static synth_grid maze_grid(void) {
  synth_grid g = {.w = 10, .h = 10, .rows = maze, .start = {0, 0},
                  .goal = {4, 4}, .cost = {1.0, 1.3, 0.7, 2.1}};
  return g;
}


/* Follows the path's actions from the start with the grid's own rules. */
static void check_grid_path(const synth_grid *g, cp_search *s, long goal) {
  long ids[512];
  long len = cp_search_path(s, goal, ids, 512);
  cr_assert(len >= 1 && len <= 512);
  cr_assert_eq(ids[0], 0);
  int x = g->start[0], y = g->start[1];
  double cost = 0;
  static const int d[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};
  for (long k = 1; k < len; ++k) {
    const cp_search_node *n = cp_search_node_get(s, ids[k]);
    cr_assert_eq(n->parent, ids[k - 1]);
    cr_assert_eq(n->outcome, CP_EXPAND_OK);
    x += d[n->action][0];
    y += d[n->action][1];
    cr_assert(g->rows[y][x] != '#');
    cost += g->cost[n->action];
  }
  cr_assert_eq(x, g->goal[0]);
  cr_assert_eq(y, g->goal[1]);
  cr_assert_float_eq(cost, cp_search_node_get(s, goal)->cost, 1e-12);
}

Test(search, astar_finds_the_enumerated_optimum) {
  synth_grid g = maze_grid();
  cp_search_problem p = synth_grid_problem(&g);
  cp_search_options o = cp_search_defaults();
  o.weight = 1.0;
  char msg[256];
  double x0[2] = {g.start[0], g.start[1]};
  cp_search *s = cp_search_create(&p, &o, x0, 0, msg, sizeof msg);
  cr_assert(s, "%s", msg);
  cr_assert_eq(synth_run(s, 100000), CP_SEARCH_SOLVED);
  long goal = cp_search_best(s);
  double opt = synth_grid_dijkstra(&g);
  cr_assert(isfinite(opt));
  cr_assert_float_eq(cp_search_node_get(s, goal)->cost, opt, 1e-12,
                     "A* %g, Dijkstra %g", cp_search_node_get(s, goal)->cost,
                     opt);
  check_grid_path(&g, s, goal);
  cp_search_destroy(s);
}

Test(search, weighted_astar_is_within_its_bound) {
  synth_grid g = maze_grid();
  cp_search_problem p = synth_grid_problem(&g);
  cp_search_options o = cp_search_defaults();
  o.weight = 3.0;
  char msg[256];
  double x0[2] = {0, 0};
  cp_search *s = cp_search_create(&p, &o, x0, 0, msg, sizeof msg);
  cr_assert_eq(synth_run(s, 100000), CP_SEARCH_SOLVED);
  double c = cp_search_node_get(s, cp_search_best(s))->cost;
  cr_assert(c <= 3.0 * synth_grid_dijkstra(&g) + 1e-12);
  check_grid_path(&g, s, cp_search_best(s));
  cp_search_destroy(s);
}

Test(search, astar_same_state_twice_is_one_node) {
  /* An open 6 x 6 field, unreachable goal: the search enumerates it. */
  static const char *const open6[] = {"......", "......", "......",
                                      "......", "......", "......"};
  synth_grid g = {.w = 6, .h = 6, .rows = open6, .start = {2, 2},
                  .goal = {9, 9}, .cost = {1, 1, 1, 1}};
  cp_search_problem p = synth_grid_problem(&g);
  cp_search_options o = cp_search_defaults();
  char msg[256];
  double x0[2] = {2, 2};
  cp_search *s = cp_search_create(&p, &o, x0, 0, msg, sizeof msg);
  cr_assert_eq(synth_run(s, 100000), CP_SEARCH_EXHAUSTED);
  int seen[36] = {0};
  long accepted = 0, rejected = 0;
  for (long id = 0; id < cp_search_node_count(s); ++id) {
    const cp_search_node *n = cp_search_node_get(s, id);
    if (n->outcome != CP_EXPAND_OK) {
      ++rejected;
      continue;
    }
    if (n->flags & CP_NODE_SUPERSEDED) continue;
    const double *x = cp_search_state(s, id);
    int cell = (int)x[1] * 6 + (int)x[0];
    cr_assert_eq(seen[cell], 0, "cell %d is two nodes", cell);
    seen[cell] = 1;
    ++accepted;
  }
  cr_assert_eq(accepted, 36, "every cell once");
  /* 36 cells expanded with 4 actions: 144 outcomes = 35 new cells +
   * 24 walls (the border) + the rest duplicates. */
  cr_assert_eq(rejected, 24);
  cr_assert_eq(cp_search_get_stats(s)->expansions, 144);
  /* Every outcome is a node or a counted duplicate. */
  cr_assert_eq(cp_search_get_stats(s)->duplicates + cp_search_node_count(s) - 1,
               144);
  cr_assert(cp_search_get_stats(s)->duplicates >= 144 - 35 - 24 - 10);
  cp_search_destroy(s);
}

Test(search, rejected_outcomes_are_nodes_with_their_reason) {
  synth_grid g = maze_grid();
  cp_search_problem p = synth_grid_problem(&g);
  char msg[256];
  double x0[2] = {0, 0};
  cp_search *s = cp_search_create(&p, NULL, x0, 0, msg, sizeof msg);
  synth_run(s, 100000);
  long rejected = 0;
  for (long id = 0; id < cp_search_node_count(s); ++id) {
    const cp_search_node *n = cp_search_node_get(s, id);
    if (n->outcome == CP_EXPAND_OK) continue;
    ++rejected;
    cr_assert_eq(n->outcome, CP_EXPAND_OUT_OF_BOUNDS);
    cr_assert(strstr(n->message, "blocked"), "%s", n->message);
    /* The state is the parent's (the move did not happen). */
    const double *x = cp_search_state(s, id), *px = cp_search_state(s, n->parent);
    cr_assert(x[0] == px[0] && x[1] == px[1]);
  }
  cr_assert(rejected > 0);
  cr_assert_eq(rejected, cp_search_get_stats(s)->rejected);
  cp_search_destroy(s);
}

static void check_point_path(cp_search *s, long goal) {
  long ids[4096];
  long len = cp_search_path(s, goal, ids, 4096);
  cr_assert(len > 1 && len <= 4096);
  double x = 0.1, y = 0.1;
  for (long k = 1; k < len; ++k) {
    const cp_search_node *n = cp_search_node_get(s, ids[k]);
    cr_assert_eq(n->outcome, CP_EXPAND_OK);
    x += 0.05 * cos((double)n->action * 0.78539816339744831);
    y += 0.05 * sin((double)n->action * 0.78539816339744831);
    cr_assert(!(x >= 0.45 && x <= 0.55 && y < 0.7), "path crosses the wall");
  }
  cr_assert(hypot(x - 0.9, y - 0.9) <= 0.06 + 1e-9);
}

/* rrt's options with the given seed, goal bias, candidates and connect. */
static cp_search_options rrt_options(uint64_t seed, double goal_bias,
                                     int candidates, int connect) {
  cp_search_options o = cp_search_defaults();
  o.method = "rrt";
  o.seed = seed;
  o.goal_bias = goal_bias;
  o.candidates = candidates;
  o.connect = connect;
  return o;
}

Test(search, rrt_solves_the_point_around_the_wall) {
  synth_point pt = {0};
  cp_search_problem p = synth_point_problem(&pt);
  cp_search_options o = rrt_options(7, 0.1, 4, 0);
  char msg[256];
  double x0[2] = {0.1, 0.1};
  cp_search *s = cp_search_create(&p, &o, x0, 0, msg, sizeof msg);
  cr_assert(s, "%s", msg);
  cr_assert_eq(synth_run(s, 20000), CP_SEARCH_SOLVED);
  check_point_path(s, cp_search_best(s));
  cp_search_destroy(s);
}

Test(search, sst_solves_and_improves_and_prunes) {
  synth_point pt = {0};
  cp_search_problem p = synth_point_problem(&pt);
  cp_search_options o = cp_search_defaults();
  o.method = "sst";
  o.seed = 3;
  o.goal_bias = 0.1;
  o.delta_bn = 0.1;
  o.delta_s = 0.03;
  o.max_nodes = 1000000;
  char msg[256];
  double x0[2] = {0.1, 0.1};
  cp_search *s = cp_search_create(&p, &o, x0, 0, msg, sizeof msg);
  cr_assert(s, "%s", msg);
  double first = INFINITY, last = INFINITY;
  for (long k = 0; k < 40000; ++k) {
    cr_assert_eq(cp_search_iterate(s), CP_SEARCH_RUNNING);
    long b = cp_search_best(s);
    if (b >= 0) {
      double c = cp_search_node_get(s, b)->cost;
      cr_assert(c <= last, "best cost never grows");
      if (!isfinite(first)) first = c;
      last = c;
    }
  }
  cr_assert(isfinite(last), "solved");
  check_point_path(s, cp_search_best(s));
  long pruned = 0, discarded = 0;
  for (long id = 0; id < cp_search_node_count(s); ++id) {
    int f = cp_search_node_get(s, id)->flags;
    pruned += !!(f & CP_NODE_PRUNED);
    discarded += !!(f & CP_NODE_DISCARDED);
  }
  cr_assert(pruned > 0 && discarded > 0);
  /* The straight-line lower bound: (0.8 sqrt 2 - 0.06) / 0.05 diagonal
   * moves around a wall cannot beat 21 moves of cost >= 1. */
  cr_assert(last >= 21.0);
  cr_assert(last < first || first < 40, "first %g, last %g", first, last);
  cp_search_destroy(s);
}

Test(search, unknown_method_is_refused) {
  synth_point pt = {0};
  cp_search_problem p = synth_point_problem(&pt);
  cp_search_options o = cp_search_defaults();
  o.method = "prm";
  char msg[256];
  double x0[2] = {0.1, 0.1};
  cr_assert_null(cp_search_create(&p, &o, x0, 0, msg, sizeof msg));
  cr_assert(strstr(msg, "prm"), "%s", msg);
}

/* search.connect: one goal-sample iteration from (0.1, 0.1) towards
 * (0.9, 0.9) keeps the diagonal step and then L more (each 0.05 nearer:
 * the wall is 10 diagonal steps away), all 8 actions tried per step
 * (`candidates` 8 = the problem's 8 actions). */
static long kept_after_one_goal_iteration(int connect, long *n_nodes) {
  synth_point pt = {0};
  cp_search_problem p = synth_point_problem(&pt);
  cp_search_options o = rrt_options(1, 1.0, 8, connect);
  char msg[256];
  double x0[2] = {0.1, 0.1};
  cp_search *s = cp_search_create(&p, &o, x0, 0, msg, sizeof msg);
  cr_assert(s, "%s", msg);
  cr_assert_eq(cp_search_iterate(s), CP_SEARCH_RUNNING);
  *n_nodes = cp_search_node_count(s);
  long kept = 0, last = 0;
  double d = hypot(0.8, 0.8) - 0.06;
  for (long id = 1; id < *n_nodes; ++id) {
    const cp_search_node *n = cp_search_node_get(s, id);
    if ((n->flags & CP_NODE_DISCARDED) || n->outcome != CP_EXPAND_OK)
      continue; /* the other candidates, and those into the wall */
    cr_assert_eq(n->parent, last, "the chain grows from its last node");
    cr_assert(n->goal_distance < d, "each kept node nearer the goal");
    if (kept < 9) { /* the free diagonal, 0.05 nearer each step */
      cr_assert_eq(n->action, 1);
      cr_assert_float_eq(n->goal_distance, d - 0.05, 1e-12);
    }
    d = n->goal_distance;
    last = id;
    ++kept;
  }
  cp_search_destroy(s);
  return kept;
}

Test(search, rrt_connect_extends_a_goal_step_while_it_nears_the_goal) {
  long n;
  cr_assert_eq(kept_after_one_goal_iteration(0, &n), 1);
  cr_assert_eq(n, 1 + 8);
  cr_assert_eq(kept_after_one_goal_iteration(5, &n), 6);
  cr_assert_eq(n, 1 + 6 * 8);
  /* The wall stops the diagonal after 9 steps; the chain goes on upwards
   * and around it, still nearer each step (the goal is 24 steps away). */
  cr_assert_eq(kept_after_one_goal_iteration(20, &n), 21);
}

/* Asserts that options o are refused on the point with a message naming
 * word. */
static void assert_refused(cp_search_options o, const char *word) {
  synth_point pt = {0};
  cp_search_problem p = synth_point_problem(&pt);
  char msg[256];
  double x0[2] = {0.1, 0.1};
  cr_assert_null(cp_search_create(&p, &o, x0, 0, msg, sizeof msg));
  cr_assert(strstr(msg, word), "%s", msg);
}

Test(search, rrt_connect_needs_batch_one) {
  cp_search_options o = rrt_options(1, 0.1, 8, 3);
  o.batch = 4;
  assert_refused(o, "connect");
}

/* Asserts that trees a and b hold the same nodes, state for state. */
static void assert_same_tree(cp_search *a, cp_search *c) {
  cr_assert_eq(cp_search_node_count(c), cp_search_node_count(a));
  for (long id = 0; id < cp_search_node_count(a); ++id) {
    const cp_search_node *na = cp_search_node_get(a, id),
                         *nc = cp_search_node_get(c, id);
    cr_assert_eq(na->parent, nc->parent, "node %ld", id);
    cr_assert_eq(na->action, nc->action, "node %ld", id);
    cr_assert_eq(na->flags, nc->flags, "node %ld", id);
    cr_assert_eq(memcmp(cp_search_state(a, id), cp_search_state(c, id),
                        2 * sizeof(double)), 0, "node %ld", id);
  }
}

/* A run with options o stopped by a node limit of 47 (an iteration the
 * limit would cut is undone) and resumed from its nodes with o's limit
 * grows the uninterrupted run's tree, state for state. */
static void assert_resumed_same_tree(cp_search_options o) {
  synth_point pt = {0};
  cp_search_problem p = synth_point_problem(&pt);
  char msg[256];
  double x0[2] = {0.1, 0.1};
  cp_search *a = cp_search_create(&p, &o, x0, 0, msg, sizeof msg);
  cr_assert(a, "%s", msg);
  cp_search_status sa = synth_run(a, 100000);
  cp_search_options ob = o;
  ob.max_nodes = 47;
  cp_search *b = cp_search_create(&p, &ob, x0, 0, msg, sizeof msg);
  cr_assert_eq(synth_run(b, 100000), CP_SEARCH_NODE_LIMIT);
  cr_assert(cp_search_node_count(b) <= 47);
  cp_search *c = cp_search_create(&p, &o, x0, 1, msg, sizeof msg);
  for (long id = 0; id < cp_search_node_count(b); ++id)
    cr_assert_eq(cp_search_adopt(c, cp_search_node_get(b, id),
                                 cp_search_state(b, id), NULL, 0), 0);
  cr_assert_eq(cp_search_resume(c, cp_search_rng(b), cp_search_get_stats(b)), 0);
  cr_assert_eq(synth_run(c, 100000), sa);
  assert_same_tree(a, c);
  cp_search_destroy(a);
  cp_search_destroy(b);
  cp_search_destroy(c);
}

Test(search, rrt_connect_resumed_grows_the_same_tree) {
  cp_search_options o = rrt_options(5, 0.3, 3, 6);
  o.max_nodes = 400;
  assert_resumed_same_tree(o);
}

/* search.goal_k: 0 and 1 grow the default tree bit for bit (no random
 * number drawn); K > 1 grows every goal sample's iteration from one of the
 * K tree nodes nearest the goal sample (checked against a scan of the
 * tree as it was), not always the nearest, reproducibly from the seed,
 * and resumes bit for bit. */
/* A run on the point from (0.1, 0.1) with options o, to its end. */
static cp_search *point_run(cp_search_options o) {
  static synth_point pt;
  static cp_search_problem p;
  p = synth_point_problem(&pt);
  char msg[256];
  double x0[2] = {0.1, 0.1};
  cp_search *s = cp_search_create(&p, &o, x0, 0, msg, sizeof msg);
  cr_assert(s, "%s", msg);
  synth_run(s, 100000);
  return s;
}

static cp_search *goal_k_run(int goal_k, double goal_bias, long nodes) {
  cp_search_options o = rrt_options(3, goal_bias, 4, 0);
  o.goal_k = goal_k;
  o.max_nodes = nodes;
  return point_run(o);
}

/* For a run with goal bias 1 (every sample the goal): the largest rank
 * of an iteration's node among the tree's nodes by distance to the goal
 * sample (0: the nearest), and in *not_nearest how many of the *iters
 * iterations grew from another node than the nearest. */
static long goal_ranks(cp_search *c, long *iters, long *not_nearest) {
  synth_point pt = {0};
  cp_search_problem p = synth_point_problem(&pt);
  double g[2], e[2];
  p.embed(p.ctx, cp_search_state(c, 0), g);
  p.goal_sample(p.ctx, g);
  long tree[512], n_tree = 1, max_rank = 0;
  *iters = *not_nearest = 0;
  tree[0] = 0;
  for (long id = 1; id < cp_search_node_count(c); ++id) {
    const cp_search_node *n = cp_search_node_get(c, id);
    if ((n->flags & CP_NODE_DISCARDED) || n->outcome != CP_EXPAND_OK)
      continue;
    /* The kept node of an iteration: its parent's rank among the tree's
     * nodes by distance to the goal sample (every sample is one). */
    double dp[2];
    p.embed(p.ctx, cp_search_state(c, n->parent), dp);
    double d_from = hypot(dp[0] - g[0], dp[1] - g[1]);
    long nearer = 0;
    for (long j = 0; j < n_tree; ++j) {
      p.embed(p.ctx, cp_search_state(c, tree[j]), e);
      nearer += hypot(e[0] - g[0], e[1] - g[1]) < d_from;
    }
    if (nearer > max_rank) max_rank = nearer;
    *not_nearest += nearer > 0;
    ++*iters;
    cr_assert(n_tree < 512);
    tree[n_tree++] = id;
  }
  return max_rank;
}

Test(search, rrt_goal_k_off_is_the_nearest_and_on_draws_among_k) {
  cp_search *a = goal_k_run(0, 0.3, 600), *b = goal_k_run(1, 0.3, 600);
  assert_same_tree(a, b);
  cp_search_destroy(a);
  cp_search_destroy(b);
  long iters, not_nearest;
  a = goal_k_run(0, 1.0, 400); /* off: always the nearest */
  cr_assert_eq(goal_ranks(a, &iters, &not_nearest), 0);
  cr_assert(iters >= 10, "%ld iterations", iters);
  cp_search_destroy(a);
  enum { K = 6 };
  cp_search *c = goal_k_run(K, 1.0, 400), *d = goal_k_run(K, 1.0, 400);
  assert_same_tree(c, d);
  cr_assert(goal_ranks(c, &iters, &not_nearest) < K);
  cr_assert(iters >= 10, "%ld iterations", iters);
  cr_assert(not_nearest > iters / 4, "%ld of %ld from another than the nearest",
            not_nearest, iters);
  cp_search_destroy(c);
  cp_search_destroy(d);
  cp_search_options o = rrt_options(9, 0.5, 3, 0);
  o.goal_k = 4;
  o.max_nodes = 300;
  assert_resumed_same_tree(o);
}

Test(search, rrt_goal_k_out_of_range_is_refused) {
  for (int k = 0; k < 2; ++k) {
    cp_search_options o = rrt_options(1, 0.1, 8, 0);
    o.goal_k = k ? CP_SEARCH_MAX_GOAL_K + 1 : -1;
    assert_refused(o, "goal_k");
  }
}

static int resume_matches(const char *method, long first_iters) {
  synth_point pt = {0};
  cp_search_problem p = synth_point_problem(&pt);
  cp_search_options o = cp_search_defaults();
  o.method = method;
  o.seed = 11;
  o.weight = 1.0;
  char msg[256];
  double x0[2] = {0.1, 0.1};
  /* Uninterrupted. */
  cp_search *a = cp_search_create(&p, &o, x0, 0, msg, sizeof msg);
  cp_search_status sa = synth_run(a, 200000);
  /* Interrupted after first_iters, rebuilt from its nodes, continued. */
  cp_search *b = cp_search_create(&p, &o, x0, 0, msg, sizeof msg);
  synth_run(b, first_iters);
  cp_search *c = cp_search_create(&p, &o, x0, 1, msg, sizeof msg);
  for (long id = 0; id < cp_search_node_count(b); ++id)
    cr_assert_eq(cp_search_adopt(c, cp_search_node_get(b, id),
                                 cp_search_state(b, id), NULL, 0), 0);
  cr_assert_eq(cp_search_resume(c, cp_search_rng(b), cp_search_get_stats(b)), 0);
  cp_search_status sc = synth_run(c, 200000);
  cr_assert_eq(sa, CP_SEARCH_SOLVED);
  cr_assert_eq(sc, CP_SEARCH_SOLVED);
  double ca = cp_search_node_get(a, cp_search_best(a))->cost;
  double cc = cp_search_node_get(c, cp_search_best(c))->cost;
  check_point_path(c, cp_search_best(c));
  int same = fabs(ca - cc) < 1e-9;
  cp_search_destroy(a);
  cp_search_destroy(b);
  cp_search_destroy(c);
  return same;
}

Test(search, astar_resumed_from_its_nodes_finds_the_same_cost) {
  cr_assert(resume_matches("astar", 40));
}

Test(search, rrt_resumed_from_its_nodes_still_solves) {
  resume_matches("rrt", 30);
}

Test(nn, kdtree_is_exact_and_does_not_scan) {
  /* 10^5 points on a 3-D sheet embedded in 12 dimensions (as a search
   * tree's states: a few coordinates move, the rest barely). */
  enum { N = 100000, D = 12, Q = 300 };
  double *pts = malloc((size_t)N * D * sizeof *pts);
  uint64_t r = 42;
  cp_nn *nn = cp_nn_create(D);
  for (long i = 0; i < N; ++i) {
    double *p = pts + i * D;
    for (int k = 0; k < D; ++k)
      p[k] = k < 3 ? cpt_uniform(&r, -1, 1) : 1e-3 * cpt_uniform(&r, -1, 1);
    cr_assert_eq(cp_nn_add(nn, p, i), 0);
  }
  cr_assert_eq(cp_nn_size(nn), N);
  long long before = cp_nn_evaluations(nn);
  for (int qi = 0; qi < Q; ++qi) {
    double q[D];
    for (int k = 0; k < D; ++k)
      q[k] = k < 3 ? cpt_uniform(&r, -1.2, 1.2) : 1e-3 * cpt_uniform(&r, -1, 1);
    double d2;
    long id = cp_nn_nearest(nn, q, &d2);
    long best = -1;
    double bd = INFINITY;
    for (long i = 0; i < N; ++i) {
      double s = 0;
      for (int k = 0; k < D; ++k) s += (pts[i * D + k] - q[k]) * (pts[i * D + k] - q[k]);
      if (s < bd) {
        bd = s;
        best = i;
      }
    }
    cr_assert_eq(id, best);
    cr_assert_float_eq(d2, bd, 1e-15);
    /* The 7 nearest against the scan's 7 smallest distances. */
    enum { KN = 7 };
    long kid[KN];
    double kd2[KN], want_d2[KN];
    cr_assert_eq(cp_nn_knearest(nn, q, KN, kid, kd2), KN);
    int nw = 0;
    for (long i = 0; i < N; ++i) {
      double s = 0;
      for (int k = 0; k < D; ++k) s += (pts[i * D + k] - q[k]) * (pts[i * D + k] - q[k]);
      if (nw == KN && s >= want_d2[KN - 1]) continue;
      int j = nw < KN ? nw++ : KN - 1;
      for (; j > 0 && want_d2[j - 1] > s; --j) want_d2[j] = want_d2[j - 1];
      want_d2[j] = s;
    }
    cr_assert_eq(kid[0], best);
    for (int j = 0; j < KN; ++j) {
      const double *pk = pts + kid[j] * D;
      double s = 0;
      for (int k = 0; k < D; ++k) s += (pk[k] - q[k]) * (pk[k] - q[k]);
      cr_assert_float_eq(kd2[j], want_d2[j], 1e-15, "rank %d", j);
      cr_assert_eq(s, kd2[j], "rank %d: the id's own distance", j);
    }
    /* Radius query against the scan. */
    long ids[256];
    double rad = 0.05;
    long cnt = cp_nn_radius(nn, q, rad, ids, 256), want = 0;
    for (long i = 0; i < N; ++i) {
      double s = 0;
      for (int k = 0; k < D; ++k) s += (pts[i * D + k] - q[k]) * (pts[i * D + k] - q[k]);
      want += s <= rad * rad;
    }
    cr_assert_eq(cnt, want);
  }
  double per_query = (double)(cp_nn_evaluations(nn) - before) / (2.0 * Q);
  cr_log_info("k-d tree: %.0f distance evaluations per query at 1e5 points",
              per_query);
  cr_assert(per_query < 0.01 * N, "%.0f evaluations per query", per_query);
  /* Removal hides a point. */
  double *p0 = pts;
  cr_assert_eq(cp_nn_nearest(nn, p0, NULL), 0);
  cr_assert_eq(cp_nn_remove(nn, 0), 0);
  cr_assert_neq(cp_nn_nearest(nn, p0, NULL), 0);
  cr_assert_eq(cp_nn_remove(nn, 0), -1);
  cr_assert_eq(cp_nn_size(nn), N - 1);
  cp_nn_destroy(nn);
  free(pts);
}

/* Removals interleaved with additions (as SST's active set): a point
 * removed before its leaf splits stays hidden in the leaf it moves to,
 * and the queries, near the points and far from them, agree with a scan
 * of the live points. */
Test(nn, removals_before_splits_stay_removed) {
  enum { N = 3000, D = 4, Q = 200 };
  static double pts[N * D];
  static unsigned char gone[N];
  uint64_t r = 7;
  cp_nn *nn = cp_nn_create(D);
  long live = 0;
  for (long i = 0; i < N; ++i) {
    double *p = pts + i * D;
    for (int k = 0; k < D; ++k) p[k] = cpt_uniform(&r, -1, 1);
    cr_assert_eq(cp_nn_add(nn, p, i), 0);
    ++live;
    /* Remove an earlier point now and then: its leaf splits later. */
    if (i % 3 == 2) {
      long j = i - 1 - (long)(cpt_uniform(&r, 0, 1) * (double)(i < 40 ? i : 40));
      if (j >= 0 && !gone[j]) {
        cr_assert_eq(cp_nn_remove(nn, j), 0);
        gone[j] = 1;
        --live;
      }
    }
  }
  cr_assert_eq(cp_nn_size(nn), live);
  for (int qi = 0; qi < Q; ++qi) {
    double q[D];
    /* Every other query far outside the points' cube (as a sample in a
     * search's bounds far from its tree): the boxes prune there. */
    const double w = qi % 2 ? 3 : 1.1;
    for (int k = 0; k < D; ++k) q[k] = cpt_uniform(&r, -w, w);
    long best = -1, within = 0;
    double bd = INFINITY, rad = 0.3;
    for (long i = 0; i < N; ++i) {
      if (gone[i]) continue;
      double s = 0;
      for (int k = 0; k < D; ++k) s += (pts[i * D + k] - q[k]) * (pts[i * D + k] - q[k]);
      if (s < bd) {
        bd = s;
        best = i;
      }
      within += s <= rad * rad;
    }
    double d2;
    cr_assert_eq(cp_nn_nearest(nn, q, &d2), best);
    cr_assert_eq(d2, bd);
    long kid[3];
    cr_assert_eq(cp_nn_knearest(nn, q, 3, kid, NULL), 3);
    cr_assert_eq(kid[0], best);
    for (int j = 0; j < 3; ++j) cr_assert(!gone[kid[j]], "removed id %ld", kid[j]);
    long ids[N];
    long cnt = cp_nn_radius(nn, q, rad, ids, N);
    cr_assert_eq(cnt, within);
    for (long j = 0; j < cnt; ++j) cr_assert(!gone[ids[j]], "removed id %ld", ids[j]);
  }
  cp_nn_destroy(nn);
}

/* k-nearest and radius queries pruned by the cells' boxes: on a grid (exact
 * ties everywhere) on a 2-D sheet of 6-D, the k nearest are the scan's in
 * (distance, insertion) order, ties included; the radius query finds the
 * scan's points; a query far off the sheet evaluates few points. */
Test(nn, box_pruned_queries_keep_ties_and_skip_far_cells) {
  enum { G = 40, N = G * G, D = 6, Q = 120, K = 6 };
  static double pts[N * D];
  cp_nn *nn = cp_nn_create(D);
  for (long i = 0; i < N; ++i) {
    double *p = pts + i * D;
    for (int k = 0; k < D; ++k) p[k] = 0;
    p[0] = (double)(i % G);
    p[1] = (double)(i / G);
    cr_assert_eq(cp_nn_add(nn, p, i), 0);
  }
  uint64_t r = 11;
  long long far_evals = 0;
  for (int qi = 0; qi < Q; ++qi) {
    double q[D] = {0};
    /* Grid points and half-grid points (many ties), half of them lifted
     * off the sheet. */
    q[0] = 0.5 * (double)(long)cpt_uniform(&r, 0, 2 * G);
    q[1] = 0.5 * (double)(long)cpt_uniform(&r, 0, 2 * G);
    const int far = qi % 2;
    if (far) q[2 + qi % 4] = 30;
    long want[K];
    double want_d2[K];
    int nw = 0;
    long within = 0;
    const double rad = far ? 31 : 2;
    for (long i = 0; i < N; ++i) {
      double s = 0;
      for (int k = 0; k < D; ++k) s += (pts[i * D + k] - q[k]) * (pts[i * D + k] - q[k]);
      within += s <= rad * rad;
      if (nw == K && s >= want_d2[K - 1]) continue; /* ties: the earlier */
      int j = nw < K ? nw++ : K - 1;
      for (; j > 0 && want_d2[j - 1] > s; --j) {
        want_d2[j] = want_d2[j - 1];
        want[j] = want[j - 1];
      }
      want_d2[j] = s;
      want[j] = i;
    }
    long kid[K];
    double kd2[K];
    cr_assert_eq(cp_nn_knearest(nn, q, K, kid, kd2), K);
    for (int j = 0; j < K; ++j) {
      cr_assert_eq(kid[j], want[j], "query %d rank %d", qi, j);
      cr_assert_eq(kd2[j], want_d2[j], "query %d rank %d", qi, j);
    }
    long ids[N];
    long long before = cp_nn_evaluations(nn);
    long cnt = cp_nn_radius(nn, q, rad, ids, N);
    if (far) far_evals += cp_nn_evaluations(nn) - before;
    cr_assert_eq(cnt, within, "query %d", qi);
    for (long j = 0; j < cnt; ++j) {
      double s = 0;
      for (int k = 0; k < D; ++k) s += (pts[ids[j] * D + k] - q[k]) * (pts[ids[j] * D + k] - q[k]);
      cr_assert_leq(s, rad * rad, "query %d: id %ld", qi, ids[j]);
    }
  }
  /* A far query's ball (radius 31, centre 30 off the sheet) meets a disc
   * of radius sqrt(61) < 8 of the sheet: about 190 points of 1600. */
  double per_far = (double)far_evals / (Q / 2);
  cr_log_info("radius query off the sheet: %.0f evaluations", per_far);
  cr_assert_lt(per_far, 0.5 * N, "%.0f evaluations per far query", per_far);
  cp_nn_destroy(nn);
}

/* search.drop_rejected: with one candidate per iteration (so that each
 * child is an iteration of its own), a node other than the start is
 * DROPPED exactly when one of its children was rejected, and the rejected
 * child is its last: nothing grows from it afterwards. Off, no node is
 * dropped and nodes go on growing after a rejected child. Resumed, the
 * run grows the uninterrupted run's tree, flags included. */
static cp_search *drop_run(int drop, uint64_t seed, int batch) {
  cp_search_options o = rrt_options(seed, 0.05, 1, 0);
  o.drop_rejected = drop;
  o.batch = batch;
  o.max_nodes = 1500;
  return point_run(o);
}

/* Over the tree of s: *dropped nodes flagged DROPPED, *grown_after nodes
 * with a child made after a rejected child. check 1 (drop on, batch 1):
 * asserts the flag matches "has a rejected child, and it is the last" for
 * every node but the start; -1 (off): no flag; 0: counts only. */
static void drop_census(cp_search *s, int check, long *dropped,
                        long *grown_after) {
  long n = cp_search_node_count(s);
  long *first_rej = malloc((size_t)n * sizeof *first_rej),
       *last = malloc((size_t)n * sizeof *last);
  cr_assert(first_rej && last);
  for (long id = 0; id < n; ++id) first_rej[id] = last[id] = -1;
  for (long id = 1; id < n; ++id) {
    const cp_search_node *c = cp_search_node_get(s, id);
    if (c->outcome != CP_EXPAND_OK && first_rej[c->parent] < 0)
      first_rej[c->parent] = id;
    last[c->parent] = id;
  }
  *dropped = *grown_after = 0;
  for (long id = 0; id < n; ++id) {
    int is_dropped = (cp_search_node_get(s, id)->flags & CP_NODE_DROPPED) != 0;
    *dropped += is_dropped;
    *grown_after += first_rej[id] >= 0 && last[id] > first_rej[id];
    if (check == 1 && id > 0)
      cr_assert_eq(is_dropped, first_rej[id] >= 0, "node %ld", id);
    if (check == 1 && id > 0 && is_dropped)
      cr_assert_eq(last[id], first_rej[id], "node %ld grew after its drop", id);
    if (check == -1 || id == 0) cr_assert(!is_dropped, "node %ld", id);
  }
  free(first_rej);
  free(last);
}

Test(search, rrt_drop_rejected_drops_dead_nodes_and_resumes) {
  long dropped = 0, grown_after = 0, any_dropped = 0, any_grown = 0;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    cp_search *on = drop_run(1, seed, 1), *off = drop_run(0, seed, 1);
    drop_census(on, 1, &dropped, &grown_after);
    any_dropped += dropped;
    drop_census(off, -1, &dropped, &grown_after);
    any_grown += grown_after;
    cp_search_destroy(on);
    cp_search_destroy(off);
  }
  cr_assert(any_dropped > 0, "no node dropped");
  cr_assert(any_grown > 0, "off: no node grew after a rejected child");
  cp_search_options o = rrt_options(5, 0.1, 2, 0);
  o.drop_rejected = 1;
  o.max_nodes = 400;
  assert_resumed_same_tree(o);
}

/* In a batch, iterations are drawn from the tree as it was before it: a
 * dropped node may still grow within the batch of its drop, never after;
 * one worker or two give the same tree. */
Test(search, rrt_drop_rejected_in_batches) {
  cp_search *a = drop_run(1, 3, 8), *b = drop_run(1, 3, 8);
  assert_same_tree(a, b);
  long dropped, grown_after;
  drop_census(a, 0, &dropped, &grown_after); /* counts only */
  cr_assert(dropped > 0);
  cp_search_destroy(a);
  cp_search_destroy(b);
  cp_search_options ob = rrt_options(2, 0.1, 2, 0);
  ob.drop_rejected = 1;
  ob.batch = 4;
  ob.max_nodes = 400;
  assert_resumed_same_tree(ob);
  cp_search_options o = rrt_options(1, 0.1, 8, 0);
  o.drop_rejected = 2;
  assert_refused(o, "drop_rejected");
}

/* search.fresh_actions (docs/planner.md, "Fresh actions"): the point has 8
 * actions and a simulation is a function of (node, action), so without it
 * sst repeats pairs; with it no pair is simulated twice (a node has at most
 * 8 children: once every action is tried the node is never selected
 * again), in single iterations, batches and pipelined halves, and a run
 * stopped by a node limit resumes to the uninterrupted run's tree. */
static void pair_census(cp_search *s, long *repeats, long *exhausted) {
  long n = cp_search_node_count(s);
  int *seen = calloc((size_t)n * 8, sizeof *seen);
  long *children = calloc((size_t)n, sizeof *children);
  cr_assert(seen && children);
  *repeats = *exhausted = 0;
  for (long id = 1; id < n; ++id) {
    const cp_search_node *d = cp_search_node_get(s, id);
    cr_assert(d->action >= 0 && d->action < 8);
    if (seen[d->parent * 8 + d->action]++) (*repeats)++;
    if (++children[d->parent] == 8) (*exhausted)++;
    cr_assert(children[d->parent] <= 8 || *repeats > 0);
  }
  free(seen);
  free(children);
}

static cp_search *fresh_run(const char *method, int fresh, int batch,
                            int pipeline, long nodes) {
  cp_search_options o = rrt_options(11, 0.1, 3, 0);
  o.method = method;
  o.fresh_actions = fresh;
  o.batch = batch;
  o.pipeline = pipeline;
  o.max_nodes = nodes;
  o.delta_bn = 0.2;
  return point_run(o);
}

Test(search, fresh_actions_never_repeat_a_pair) {
  long rep, ex;
  cp_search *s = fresh_run("sst", 0, 1, 0, 1500);
  pair_census(s, &rep, &ex);
  cr_assert_gt(rep, 100, "sst repeats pairs without fresh actions (%ld)", rep);
  cp_search_destroy(s);
  const char *methods[] = {"sst", "rrt"};
  for (int m = 0; m < 2; ++m)
    for (int mode = 0; mode < 3; ++mode) {
      s = fresh_run(methods[m], 1, mode ? 4 : 1, mode == 2, 1500);
      pair_census(s, &rep, &ex);
      cr_assert_eq(rep, 0, "%s mode %d: %ld repeated pairs", methods[m], mode,
                   rep);
      if (m == 0 && mode == 0) /* sst runs some nodes out */
        cr_assert_gt(ex, 0, "%s mode %d: no node exhausted", methods[m], mode);
      cp_search_destroy(s);
    }
}

Test(search, fresh_actions_resumed_grow_the_same_tree) {
  cp_search_options o = rrt_options(11, 0.1, 3, 0);
  o.fresh_actions = 1;
  o.max_nodes = 400;
  assert_resumed_same_tree(o); /* rrt */
  o.method = "sst";
  o.delta_bn = 0.2;
  assert_resumed_same_tree(o);
  o.batch = 4;
  assert_resumed_same_tree(o);
  o.method = "rrt"; /* with revival (session 29) */
  assert_resumed_same_tree(o);
}

/* rrt with fresh actions (session 29, search.fresh_revive): once a node
 * has tried every action, its unkept ok children are kept after all and
 * join the index. The maze with its goal in a wall: rrt with 8 candidates
 * tries a node's 4 actions in one iteration and keeps one child. Without
 * revival (session 28) unkept ok children of exhausted nodes are lost;
 * with it none stays discarded, the tree reaches far into the maze, and it
 * grows until the node limit (a finite maze gives an rrt tree no end:
 * cells are reached again by other paths). */
static cp_search *maze_rrt(int revive, int batch, int pipeline, long nodes,
                           long stop_at, cp_search *from) {
  static synth_grid g;
  static cp_search_problem p;
  g = maze_grid();
  g.goal[0] = g.goal[1] = 1;
  p = synth_grid_problem(&g);
  cp_search_options o = cp_search_defaults();
  o.method = "rrt";
  o.goal_bias = 0;
  o.fresh_actions = 1;
  o.fresh_revive = revive;
  o.batch = batch;
  o.pipeline = pipeline;
  o.max_nodes = stop_at ? stop_at : nodes;
  char msg[256];
  double x0[2] = {0, 0};
  cp_search *s = cp_search_create(&p, &o, x0, from != NULL, msg, sizeof msg);
  cr_assert(s, "%s", msg);
  if (from) {
    for (long id = 0; id < cp_search_node_count(from); ++id)
      cr_assert_eq(cp_search_adopt(s, cp_search_node_get(from, id),
                                   cp_search_state(from, id), NULL, 0), 0);
    cr_assert_eq(cp_search_resume(s, cp_search_rng(from),
                                  cp_search_get_stats(from)), 0);
  }
  return s;
}

/* Cells of the maze reached by ok nodes; *lost counts ok nodes left
 * discarded whose parent tried all 4 actions. */
static int maze_reach(cp_search *s, long *lost) {
  long n = cp_search_node_count(s);
  long *tried = calloc((size_t)n, sizeof *tried);
  char cells[100] = {0};
  cr_assert(tried);
  for (long id = 1; id < n; ++id) tried[cp_search_node_get(s, id)->parent]++;
  int reach = 0;
  *lost = 0;
  for (long id = 0; id < n; ++id) {
    const cp_search_node *d = cp_search_node_get(s, id);
    if (d->outcome != CP_EXPAND_OK) continue;
    const double *x = cp_search_state(s, id);
    int c = (int)x[1] * 10 + (int)x[0];
    cr_assert(c >= 0 && c < 100);
    reach += !cells[c];
    cells[c] = 1;
    if ((d->flags & CP_NODE_DISCARDED) && tried[d->parent] == 4) (*lost)++;
  }
  free(tried);
  return reach;
}

Test(search, fresh_actions_rrt_keeps_an_exhausted_nodes_children) {
  long lost0, lost1;
  cp_search *a = maze_rrt(0, 1, 0, 3000, 0, NULL);
  cp_search_status sa = synth_run(a, 1000000);
  cr_assert(sa == CP_SEARCH_EXHAUSTED || sa == CP_SEARCH_NODE_LIMIT);
  (void)maze_reach(a, &lost0);
  cr_assert_gt(lost0, 0, "session 28's rrt loses unkept children");
  cp_search_destroy(a);
  static const int modes[][2] = {{1, 0}, {4, 0}, {4, 1}};
  for (int m = 0; m < 3; ++m) {
    cp_search *b = maze_rrt(1, modes[m][0], modes[m][1], 3000, 0, NULL);
    cr_assert_eq(synth_run(b, 1000000), CP_SEARCH_NODE_LIMIT, "mode %d", m);
    int reach1 = maze_reach(b, &lost1);
    cr_assert_eq(lost1, 0, "mode %d: %ld children lost", m, lost1);
    cr_assert_gt(reach1, 40, "mode %d: %d cells", m, reach1);
    /* Stopped at 300 nodes and resumed (revived flags stored, the index
     * rebuilt in id order): the uninterrupted tree, flags included (a
     * pipelined run's resume needs its pending half: test_pipeline). */
    if (modes[m][1]) {
      cp_search_destroy(b);
      continue;
    }
    cp_search *c = maze_rrt(1, modes[m][0], modes[m][1], 3000, 300, NULL);
    cr_assert_eq(synth_run(c, 1000000), CP_SEARCH_NODE_LIMIT);
    cp_search *d = maze_rrt(1, modes[m][0], modes[m][1], 3000, 0, c);
    cr_assert_eq(synth_run(d, 1000000), CP_SEARCH_NODE_LIMIT);
    assert_same_tree(b, d);
    cp_search_destroy(b);
    cp_search_destroy(c);
    cp_search_destroy(d);
  }
}

Test(search, fresh_actions_exhaust_a_small_space) {
  /* The maze with its goal in a wall (unreachable): sst keeps one node per
   * cell (a later, dearer one is dominated), so with fresh actions it
   * simulates each active node's 4 actions once, then every active node is
   * exhausted and the search says so -- without them it would go on
   * repeating them up to the node limit. The same in batches of 16 and
   * pipelined batches: a batch from a tree of one node (4 actions) is
   * short, not the end of the search (session 28: it ended at 1 node).
   * The search tells it apart from a proof (cp_search_fresh_actions: the
   * plan layer reports a limit). */
  static const int batches[][2] = {{1, 0}, {16, 0}, {16, 1}, {4, 1}};
  for (int b = 0; b < 4; ++b) {
    synth_grid g = maze_grid();
    g.goal[0] = g.goal[1] = 1;
    cp_search_problem p = synth_grid_problem(&g);
    cp_search_options o = cp_search_defaults();
    o.method = "sst";
    o.goal_bias = 0;
    o.fresh_actions = 1;
    o.batch = batches[b][0];
    o.pipeline = batches[b][1];
    o.max_nodes = 100000;
    char msg[256];
    double x0[2] = {0, 0};
    cp_search *s = cp_search_create(&p, &o, x0, 0, msg, sizeof msg);
    cr_assert(s, "%s", msg);
    cr_assert_eq(synth_run(s, 1000000), CP_SEARCH_EXHAUSTED, "batch %d", b);
    cr_assert_eq(cp_search_fresh_actions(s), 1);
    long n = cp_search_node_count(s), *tried = calloc((size_t)n, sizeof *tried);
    /* The maze has 10 x 10 cells less its walls: the tree reached far. */
    cr_assert_gt(n, 40, "batch %d pipeline %d: %ld nodes", o.batch,
                 o.pipeline, n);
    int *seen = calloc((size_t)n * 4, sizeof *seen);
    cr_assert(tried && seen && n < 100000);
    for (long id = 1; id < n; ++id) {
      const cp_search_node *d = cp_search_node_get(s, id);
      cr_assert_eq(seen[d->parent * 4 + d->action]++, 0, "pair repeated");
      tried[d->parent]++;
    }
    for (long id = 0; id < n; ++id) {
      const cp_search_node *d = cp_search_node_get(s, id);
      if (d->outcome == CP_EXPAND_OK &&
          !(d->flags & (CP_NODE_DISCARDED | CP_NODE_INACTIVE | CP_NODE_PRUNED)))
        cr_assert_eq(tried[id], 4, "active node %ld tried %ld actions", id,
                     tried[id]);
    }
    free(tried);
    free(seen);
    cp_search_destroy(s);
  }
  /* Without fresh actions the search does not claim it. */
  synth_grid g = maze_grid();
  cp_search_problem p = synth_grid_problem(&g);
  cp_search_options o = cp_search_defaults();
  o.method = "sst";
  char msg[256];
  double x0[2] = {0, 0};
  cp_search *s = cp_search_create(&p, &o, x0, 0, msg, sizeof msg);
  cr_assert(s, "%s", msg);
  cr_assert_eq(cp_search_fresh_actions(s), 0);
  cp_search_destroy(s);
}

Test(search, fresh_actions_refuse_huge_action_spaces) {
  synth_point pt = {0};
  cp_search_problem p = synth_point_problem(&pt);
  p.n_actions = CP_SEARCH_MAX_FRESH_ACTIONS + 1L;
  cp_search_options o = rrt_options(1, 0.1, 3, 0);
  o.fresh_actions = 1;
  char msg[256] = "";
  double x0[2] = {0.1, 0.1};
  cr_assert_null(cp_search_create(&p, &o, x0, 0, msg, sizeof msg));
  cr_assert(strstr(msg, "fresh_actions"), "%s", msg);
  o.fresh_actions = 2;
  p.n_actions = 8;
  cr_assert_null(cp_search_create(&p, &o, x0, 0, msg, sizeof msg));
  cr_assert(strstr(msg, "fresh_actions"), "%s", msg);
}
