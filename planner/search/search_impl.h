/// \file planner/search/search_impl.h
/// Inside planner/search: the search struct shared by search.c and the
/// planners (astar.c, rrt.c, sst.c), and the table a planner fills. Not a
/// public header.
#ifndef CP_PLANNER_SEARCH_IMPL_H
#define CP_PLANNER_SEARCH_IMPL_H

#include "planner/search/nn.h"
#include "planner/search/search.h"

#include <stdlib.h>
#include <string.h>

/* Makes *p (old elements of elem bytes) hold cap elements, the new ones
 * zero. Returns 0, or -1 when out of memory (*p then unchanged). */
static inline int cp_search_grow_zeroed(void **p, long old, long cap,
                                        size_t elem) {
  char *q = realloc(*p, (size_t)cap * elem);
  if (!q) return -1;
  memset(q + (size_t)old * elem, 0, (size_t)(cap - old) * elem);
  *p = q;
  return 0;
}

/// A planner: its name and its functions. state: the planner's own data.
typedef struct cp_planner_impl {
  const char *name;
  /// Sets up s->state; a fresh search (s->resuming 0) also takes in the
  /// start node.
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
  int resuming;             /* set by cp_search_resume: init builds nothing */
  /* 0 until this session's first action (rrt: iteration) is done: until
   * then the deadline is not polled, so that every session makes progress
   * (a resumed run whose time is spent still takes one step). */
  int progressed;
  cp_search_budget view;    /* the budget as the problem sees it */
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
  long failed[CP_EXPAND_COUNT]; /* failed expansions among the nodes */
  /* Witnesses (sst): points [cap_w * m], representatives, journal. */
  double *w_x;
  long *w_rep;
  long n_w, cap_w, w_first;
  long *w_updates;
  long n_wu, cap_wu;
  /* The state at the start of the current iteration (cp_search_mark). */
  struct {
    long n_nodes, best, nearest_goal, iterations;
    double best_distance;
    cp_rng rng;
    cp_search_stats stats;
    long failed[CP_EXPAND_COUNT];
  } mark;
  double *mark_lo, *mark_hi; /* [m] */
  struct cp_batch *batch;   /* search.batch > 1: the jobs (batch.c) */
  struct cp_batch *pending; /* pipeline: drawn, not yet merged (batch.c) */
  int has_pending;
  /* pipeline: the search ended at its node limit with the last draw
   * (still in `pending`) undone; the generator after it (resume). */
  int undone;
  cp_rng undone_rng;
  cp_batch_meanwhile meanwhile; /* cp_search_set_meanwhile */
  /* fresh_actions (rrt, sst): the (node, action) pairs tried, drawn or
   * recorded: a bit per action of every node, and each node's count; the
   * pairs first marked since cp_search_mark (undone by a rollback). */
  int fresh;
  long tried_words;         /* uint64_t words per node */
  uint64_t *tried;          /* [cap_tried * tried_words] */
  long *n_tried;            /* [cap_tried] */
  long cap_tried;
  long *tried_log;          /* [2 * cap_log]: node, action */
  long n_log, cap_log;
  long *near_ids;           /* [cap_near] cp_search_fresh_near's scratch */
  double *near_d2;
  int cap_near;
  char message[256];
};

/// Simulates action a from node `from` into y [n] (the problem's expand
/// with the node's warm-start data); counts it in the totals. Returns 0; 1
/// when the budget stopped the action before it ended (nothing counted);
/// or -1 on a fatal error (message set).
int cp_search_simulate(cp_search *s, long from, long a, double *y,
                       cp_expansion *info);
/// Adds what an expansion did to the totals (cp_search_simulate does).
void cp_search_count(cp_search *s, const cp_expansion *info);
/// Sets the budget the problem sees (s->view) before actions are simulated.
void cp_search_view_budget(cp_search *s);
/// Records the outcome of cp_search_simulate as a new node (child of from,
/// flags GOAL set when accepted and in the goal) and returns its id, or -1
/// when out of memory (message set).
long cp_search_record(cp_search *s, long from, long a, const double *y,
                      const cp_expansion *info);
/// Cost of action a from node `from` ending in y (the problem's edge_cost,
/// else its action_cost).
double cp_search_edge_cost(const cp_search *s, long from, long a,
                           const double *y);
/// Records a flag change of node id for the journal. Returns 0 or -1.
int cp_search_flag(cp_search *s, long id, int set, int clear);
/// 1 when the search's budget says stop (polled after every action); 0
/// before the session has made progress (s->progressed).
int cp_search_stop_requested(const cp_search *s);
/// Remembers the search's state at the start of an iteration, and goes
/// back to it: nodes created since are dropped, the generator, the totals,
/// the best node and the bounding box restored (rrt and sst, whose
/// iterations draw random numbers before they simulate: an iteration the
/// budget cuts short is undone so that the resumed search draws them
/// again). Flag changes and the planner's own structures are not undone:
/// a planner rolls back only before it has changed either.
void cp_search_mark(cp_search *s);
void cp_search_rollback(cp_search *s);
/// A new witness at point e [m] without representative: its id, or -1
/// when out of memory (message set).
long cp_search_witness_add(cp_search *s, const double *e);
/// Sets witness w's representative (journalled). 0, or -1 (memory).
int cp_search_witness_set_rep(cp_search *s, long w, long rep);

/// fresh_actions: 1 when node id has been given every action (drawn or
/// recorded): it is exhausted and selection passes it by. 0 without
/// fresh_actions.
int cp_search_exhausted(const cp_search *s, long id);
/// fresh_actions: marks action a of node `from` as tried (journalled for a
/// rollback). 0, or -1 when out of memory (message set).
int cp_search_try(cp_search *s, long from, long a);
/// fresh_actions: actions for an iteration from node `from`: k distinct
/// random actions among the node's untried ones (all of them, in order, when at most k are left), each marked
/// tried at once, so that a later draw of the same batch passes them by.
/// Returns how many (0: the node is exhausted), or -1 (memory).
int cp_search_pick_fresh(cp_search *s, long from, long *out, int k);
/// fresh_actions: the ids of up to `want` live points of nn nearest q that
/// are not exhausted, nearest first, in *ids (distances in *d2; the
/// search's scratch, valid until the next call). Returns how many (0: every
/// live point is exhausted), or -1 (memory, message set).
int cp_search_fresh_near(cp_search *s, const cp_nn *nn, const double *q,
                         int want, const long **ids, const double **d2);

/// k distinct random actions into out (all of them, in order, when the
/// problem has at most k); returns how many.
int cp_search_pick_actions(cp_search *s, long *out, int k);
/// Steering (rrt, sst): simulates actions acts[0..k) from node `from` and
/// records each; keeps a candidate in the goal, else the one of least goal
/// distance (to_goal), else the one whose embedding is nearest the sample
/// [m]; the other accepted candidates are flagged DISCARDED. *kept: its id
/// (its embedding in e [m]), or -1 when none was accepted. Returns
/// CP_SEARCH_RUNNING; CP_SEARCH_STOPPED when the budget stopped the
/// iteration between or inside candidates (the iteration is rolled back:
/// the planner must not have changed its own structures yet); or
/// CP_SEARCH_NODE_LIMIT when the k candidates would pass the node limit
/// (nothing simulated; the iteration rolled back); or CP_SEARCH_FAILED
/// (message set).
cp_search_status cp_search_steer(cp_search *s, long from, const long *acts,
                                 int k, const double *sample, int to_goal,
                                 double *e, long *kept);

/// Local steering (rrt with steer_local; planner/search/steer_local.c): as
/// cp_search_steer, with the problem's zero input simulated first and, when
/// it was accepted, the input of the fitted linear model's bounded least
/// squares simulated last; k + 2 nodes.
cp_search_status cp_search_steer_local(cp_search *s, long from,
                                       const long *acts, int k,
                                       const double *sample, int to_goal,
                                       double *e, long *kept);
/// Local steering's linear algebra (steer_local.c), exposed for its tests:
/// B [r x n] (row-major) fitted to k input differences du [k x n] and
/// outcome differences df [k x r] (g: n x n scratch), 0 or -1 when the
/// inputs span nothing; and u [n] = argmin |B u - d|^2 + mu |u|^2 over
/// [-1, 1]^n (q: n x n and c: n scratch).
int cp_steer_fit(int n, int r, int k, const double *du, const double *df,
                 double *g, double *b);
void cp_steer_solve(int n, int r, const double *b, const double *d, double *q,
                    double *c, double *u);
/// Local steering's chart (steer_chart.c): v [3] = log(R(q) R(q0)^T), the
/// rotation vector (world frame, angle in [0, pi]) of the turn from q0 to
/// q (quaternions [w, x, y, z] of any nonzero scale and sign; v = 0 when
/// either is zero); and d [6 nb] = the difference of nb poses e [7 nb]
/// from e0 [7 nb] (position rows, then the rotation vector times half the
/// norm of e0's quaternion rows).
void cp_steer_rotvec(const double *q, const double *q0, double *v);
void cp_steer_pose_diff(int nb, const double *e0, const double *e, double *d);
/// steer.c's choice among candidates, for steer_local.c: node id (ending
/// in y) against the one kept so far; and the end of an iteration (the
/// other candidates since `first` discarded, e the kept one's embedding).
void cp_search_steer_consider(cp_search *s, long id, const double *y,
                              const double *sample, int to_goal, double *e,
                              long *kept, double *kept_d2);
void cp_search_steer_keep(cp_search *s, long first, long kept, double *e);

/// Uniform sample in the bounding box of the accepted nodes' embeddings (widened and given
/// to the problem's sample_bounds); goal sample with probability goal_bias
/// (the embedding of the node nearest the goal moved to the goal). Returns
/// 1 for a goal sample, else 0.
int cp_search_sample(cp_search *s, double *e);

/* --- batches (batch.c; search.batch > 1) --------------------------------- */

/// One iteration of a rrt/sst batch: its node, its jobs [first, first + k)
/// and whether its sample is a goal sample.
typedef struct cp_batch_iter {
  long from;
  int first, k, to_goal;
} cp_batch_iter;

/// Empties the batch (jobs and iterations).
void cp_search_batch_clear(cp_search *s);
/// Appends the job "action a from node from"; its index, or -1 (memory,
/// message set).
int cp_search_batch_add(cp_search *s, long from, long a);
/// Job k of the batch.
cp_expand_job *cp_search_batch_job(cp_search *s, int k);
int cp_search_batch_jobs(const cp_search *s);
/// rrt/sst: starts iteration i of the batch (from node `from`): its sample
/// buffer [m] and action buffer [candidates]; the planner then adds its k
/// jobs and calls cp_search_batch_iter_end.
cp_batch_iter *cp_search_batch_iter(cp_search *s, int i, double **sample,
                                    long **acts);
int cp_search_batch_iter_end(cp_search *s, int i, long from, int k,
                             int to_goal);
/// Simulates every job of the batch. Returns the number of jobs that
/// finished before the first one the budget stopped (all: the job count),
/// or -1 on a fatal error (message set). Nothing is counted or recorded.
int cp_search_batch_run(cp_search *s);
/// rrt/sst: draws the batch's iterations with draw(s, i) (each fills its
/// iteration), checks the node limit, simulates the jobs, and hands each
/// iteration to merge(s, i) in order until one returns anything but
/// CP_SEARCH_RUNNING. A batch that would pass the node limit or that the
/// budget stops is undone (cp_search_rollback), so that a resumed search
/// draws it again.
cp_search_status cp_search_batch_iterate(
    cp_search *s, int (*draw)(cp_search *s, int i),
    cp_search_status (*merge)(cp_search *s, const cp_batch_iter *it,
                              const double *sample));
/// Frees the batch.
void cp_search_batch_free(cp_search *s);
/// Waits for the batches out on the workers (pipelined), if any.
void cp_search_batch_drain(cp_search *s);
/// Steering from a simulated batch iteration: counts and records its jobs
/// in order and keeps one candidate as cp_search_steer does.
/// Returns CP_SEARCH_RUNNING or CP_SEARCH_FAILED (memory, message set).
cp_search_status cp_search_steer_merge(cp_search *s, const cp_batch_iter *it,
                                       const double *sample, double *e,
                                       long *kept);

#endif
