/// \file planner/search_impl.h
/// Inside planner/search: the search struct shared by search.c and the
/// planners (astar.c, rrt.c, sst.c), and the table a planner fills. Not a
/// public header.
#ifndef CP_PLANNER_SEARCH_IMPL_H
#define CP_PLANNER_SEARCH_IMPL_H

#include "planner/nn.h"
#include "planner/search.h"

/// A planner: its name and its functions. state: the planner's own data.
typedef struct cp_planner_impl {
  const char *name;
  /// Sets up s->state (the start node exists unless resuming).
  int (*init)(cp_search *s);
  /// Rebuilds the planner's structures from the nodes (resume).
  int (*rebuild)(cp_search *s);
  /// One iteration.
  cp_search_status (*iterate)(cp_search *s);
  void (*destroy)(cp_search *s);
} cp_planner_impl;

extern const cp_planner_impl cp_planner_astar;
extern const cp_planner_impl cp_planner_rrt;
extern const cp_planner_impl cp_planner_sst;

struct cp_search {
  cp_search_problem p;
  cp_search_options opt;
  const cp_planner_impl *impl;
  void *state;              /* the planner's */
  cp_rng rng;
  cp_search_node *nodes;
  double *x;                /* [cap * n] states */
  void **warm;              /* [cap] warm-start blobs (may be NULL) */
  size_t *warm_size;
  long n_nodes, cap;
  long best;                /* cheapest goal node, -1 */
  double best_distance;
  cp_search_stats stats;
  long journal_first;
  long *updates;
  long n_updates, cap_updates;
  double *scratch_y;        /* [n] */
  double *lo, *hi;          /* [m] bounding box of accepted embeddings */
  double *scratch_e;        /* [m] */
  long nearest_goal;        /* accepted node of least goal distance */
  char message[256];
};

/// Simulates action a from node `from` into y [n] (the problem's expand
/// with the node's warm-start data); counts it in the totals. Returns 0, or
/// -1 on a fatal error (message set).
int cp_search_simulate(cp_search *s, long from, long a, double *y,
                       cp_expansion *info);
/// Records the outcome of cp_search_simulate as a new node (child of from,
/// flags GOAL set when accepted and in the goal) and returns its id, or -1
/// when out of memory (message set).
long cp_search_record(cp_search *s, long from, long a, const double *y,
                      const cp_expansion *info);
/// Records a flag change of node id for the journal. Returns 0 or -1.
int cp_search_flag(cp_search *s, long id, int set, int clear);
/// Uniform sample in the bounding box of the accepted nodes' embeddings (widened and given
/// to the problem's sample_bounds); goal sample with probability goal_bias
/// (the embedding of the node nearest the goal moved to the goal).
void cp_search_sample(cp_search *s, double *e);

#endif
