/// \file planner/search/search.h
/// Search over actions through contact (docs/math.md §8): one interface
/// over three planners (astar.c, rrt.c, sst.c), each a table of functions
/// registered in search.c's planner table -- a fourth planner is one more
/// file and one more table row.
///
/// The search knows nothing of worlds, files or SQL. It sees the problem
/// through cp_search_problem: a state size, an action count, an expansion
/// function (simulate action a from state x for the task's duration; the
/// outcome is a value: accepted, or rejected with a reason) and the
/// metric/goal functions. planner/plan/plan.h binds it to a cp_world and to the
/// database.
///
/// Nodes. Every simulated outcome becomes a node: id (0, 1, 2, ... in
/// creation order; 0 is the start), parent, depth, time, cost g (sum of the
/// action costs from the start), the state, the action, what the simulation
/// did, and flags. Rejected outcomes are nodes too (outcome != OK; their
/// state is the last accepted state of the action) but never enter the
/// tree. A* drops exact duplicates: a state whose discretised key equals an
/// existing node's is not a new node (counted in duplicates) unless it is
/// cheaper and the old node is not expanded yet (the old node is then
/// flagged SUPERSEDED).
///
/// Journal. The nodes created since the last cp_search_journal_clear are
/// the ids [journal_first, node_count); the ids whose flags changed since are
/// listed by cp_search_journal_updates; likewise SST's witnesses
/// (cp_search_witness_first, cp_search_witness_updates). The caller writes
/// them in one transaction, with cp_search_rng and the totals, so that a
/// resumed search (nodes given back to cp_search_adopt in id order, the
/// witnesses to cp_search_adopt_witness, then cp_search_resume) continues
/// from exactly what was committed into the search the uninterrupted run
/// makes.
///
/// Budgets: cp_search_options.budget is polled after every simulated
/// action; a stop leaves the search at a point it resumes from exactly
/// (CP_SEARCH_STOPPED; see the option).
///
/// Warm starts: an expansion's warm-start data (the world's LCP basis) is
/// kept on the child node and handed to the expansions from it, so that
/// siblings start from their parent's basis. The store keeps it with the
/// node (replay needs it to re-simulate bitwise; resume restores it).
///
/// Ownership: cp_search copies the problem struct (the callbacks' ctx stays
/// the caller's) and owns its nodes; pointers it returns are valid until the
/// next call that adds nodes.
#ifndef CP_PLANNER_SEARCH_H
#define CP_PLANNER_SEARCH_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// xoshiro256** generator: the whole state is 4 words (stored for resume).
typedef struct cp_rng {
  uint64_t s[4];
} cp_rng;

void cp_rng_seed(cp_rng *r, uint64_t seed);
uint64_t cp_rng_next(cp_rng *r);
/// Uniform in [0, 1).
double cp_rng_uniform(cp_rng *r);

/// What an expansion led to. Rejections are values, not errors.
typedef enum cp_expand_outcome {
  CP_EXPAND_OK = 0,
  CP_EXPAND_JOINT_LIMIT,   ///< a joint left its limits
  CP_EXPAND_OUT_OF_BOUNDS, ///< a free body left the task's bounds
  CP_EXPAND_PENETRATION,   ///< overlap beyond the scene's tolerance
  CP_EXPAND_FALLBACK,      ///< needed the impulsive fallback, not allowed
  CP_EXPAND_NONFINITE,     ///< NaN or infinity in the state
  CP_EXPAND_SOLVER_FAILED, ///< no stepper produced an answer
  CP_EXPAND_COUNT
} cp_expand_outcome;

/// "ok", "joint_limit", "out_of_bounds", "penetration", "fallback",
/// "nonfinite", "solver_failed".
const char *cp_expand_outcome_name(cp_expand_outcome o);
/// 1 for the outcomes that are failures of the prediction rather than
/// answers about the action (solver_failed, nonfinite): a search whose
/// space ran out with such expansions has not shown that no plan exists.
int cp_expand_outcome_is_failure(cp_expand_outcome o);
/// Parses a name; returns 0 and sets *o, or -1.
int cp_expand_outcome_parse(const char *name, cp_expand_outcome *o);

/// What one expansion (one action, several steps) did.
typedef struct cp_expansion {
  cp_expand_outcome outcome;
  int steps;            ///< steps taken (up to the rejection)
  int lcp_solves;
  int pivots;
  int fallbacks;        ///< steps taken by the impulsive fallback
  int warm_steps;       ///< steps whose main LCP started warm
  int lcp_reused;       ///< LCPs answered by the impact memo (in lcp_solves)
  char message[1024];   ///< rejection reason, whole ("" when OK)
  const void *warm;     ///< warm-start data of the final state (owned by
  size_t warm_size;     ///< the problem, valid until its next call)
} cp_expansion;

/// One expansion of a batch (search.batch; cp_search_problem.expand_batch):
/// the search fills the inputs, a worker runs it (cp_expand_job_run) and the
/// search merges the outcomes in job order once the whole batch is back.
typedef struct cp_expand_job {
  const double *x;       ///< [n] the parent's state (the search's)
  double t;              ///< the parent's time
  const void *warm;      ///< the parent's stored warm-start data (or NULL)
  size_t warm_size;
  long a;                ///< the action
  double *y;             ///< [n] receives the final state
  cp_expansion info;     ///< what it did; info.warm points into keep
  int rc;                ///< expand's return: 0, 1 (budget), -1 (fatal)
  void *keep;            ///< the job's own copy of the final warm-start
  size_t keep_cap;       ///< data (owned by the search, reused)
} cp_expand_job;

/// Work of the search's caller that may run while a batch's jobs are
/// simulated (cp_search_set_meanwhile): expand_batch calls fn(ctx) at most
/// once per batch, on the calling thread, after it has handed the jobs to
/// its other workers and before the caller takes jobs itself. fn must not
/// change the search's nodes (the jobs read their parents' data); the plan
/// loop writes the previous batches to the store there.
typedef struct cp_batch_meanwhile {
  void (*fn)(void *ctx);
  void *ctx;
} cp_batch_meanwhile;

/// Runs job j with the expand function and ctx given (a worker's own
/// world) and copies its warm-start data into the job, so that it stays
/// valid while the worker runs its next job. Out of memory: rc -1.
void cp_expand_job_run(int (*expand)(void *ctx, const double *x, double t,
                                     const void *warm, size_t warm_size,
                                     long a, double *y, cp_expansion *info),
                       void *ctx, cp_expand_job *j);

/// The problem the search explores (callbacks get ctx first).
/// When a search must stop (docs/planner.md, "Budgets"): a deadline on a
/// clock and a cancel flag (set by a signal handler: the library installs
/// none). The search polls it after every simulated action; a problem whose
/// actions are long polls it inside them (cp_search_problem.set_budget).
typedef struct cp_search_budget {
  int has_deadline;               ///< 0: no deadline
  double deadline;                ///< stop once clock() >= deadline
  double (*clock)(void *ctx);     ///< seconds; NULL: CLOCK_MONOTONIC
  void *clock_ctx;
  volatile sig_atomic_t *cancel;  ///< stop once *cancel != 0 (NULL: none)
} cp_search_budget;

/// The budget's clock now (CLOCK_MONOTONIC seconds when b or its clock is
/// NULL).
double cp_search_budget_now(const cp_search_budget *b);
/// 1 when b (may be NULL: never) says stop: cancelled, or its deadline
/// reached.
int cp_search_budget_spent(const cp_search_budget *b);
/// *flag != 0, read atomically: the workers of a threaded search poll the
/// cancel flag while a signal handler on any thread may set it (the handler
/// should set it with cp_search_cancel, a lock-free atomic store).
int cp_search_cancelled(const volatile sig_atomic_t *flag);
static inline void cp_search_cancel(volatile sig_atomic_t *flag, int value) {
  __atomic_store_n(flag, value, __ATOMIC_RELAXED);
}
/// Seconds left before the deadline (INFINITY without one; may be < 0).
double cp_search_budget_left(const cp_search_budget *b);

typedef struct cp_search_problem {
  int n;              ///< state size
  int m;              ///< embedding (metric) size
  int key_n;          ///< discretised key size (A*)
  long n_actions;     ///< actions 0 .. n_actions-1
  double duration;    ///< time an action lasts
  void *ctx;
  /// Simulates action a from x at time t starting from warm-start data
  /// (may be NULL); writes the final state y and info. Returns 0; 1 when
  /// the budget (set_budget) stopped it before the action ended (no
  /// outcome: the search stops and the action is simulated again when it
  /// resumes); or -1 on a fatal error (out of memory: the search stops with
  /// an error).
  int (*expand)(void *ctx, const double *x, double t, const void *warm,
                size_t warm_size, long a, double *y, cp_expansion *info);
  /// Cost of action a (> 0).
  double (*action_cost)(void *ctx, long a);
  /// Optional: the cost of action a taken from state x and ending in y
  /// (>= action_cost(a); e.g. plus a path length). NULL: action_cost.
  double (*edge_cost)(void *ctx, const double *x, long a, const double *y);
  /// 1 when x is in the goal region.
  int (*in_goal)(void *ctx, const double *x);
  /// A lower-bound-in-spirit estimate of the cost to go (A*), >= 0.
  double (*heuristic)(void *ctx, const double *x);
  /// Distance to the goal region (m, >= 0; progress reports).
  double (*goal_distance)(void *ctx, const double *x);
  /// The metric embedding e [m] of x (weighted coordinates).
  void (*embed)(void *ctx, const double *x, double *e);
  /// The cell key [key_n] of x at the task's resolution (A*).
  void (*discretise)(void *ctx, const double *x, int64_t *key);
  /// Sampling box: lo/hi [m] arrive as the tree's bounding box (widened);
  /// the problem may override coordinates it bounds (workspace bounds).
  void (*sample_bounds)(void *ctx, double *lo, double *hi);
  /// Turns an embedding into a goal sample (the goal body's coordinates
  /// moved to the goal).
  void (*goal_sample)(void *ctx, double *e);
  /// Optional: receives the search's budget (cp_search_options.budget) at
  /// cp_search_create and NULL at cp_search_destroy, so that expand can
  /// poll it inside a long action and bound its solvers by the time left.
  void (*set_budget)(void *ctx, const cp_search_budget *budget);
  /// Optional: receives the search's batch (cp_search_options.batch: a
  /// pipelined search's half) at cp_search_create, before any expansion.
  void (*set_batch)(void *ctx, int batch);
  /// Optional: runs the n jobs of a batch, in any order and on any number
  /// of workers, each with cp_expand_job_run on a world of its own (a job's
  /// outcome must depend on its inputs only). Returns 0 once every job has
  /// run (each job's rc says how), or -1 when the batch could not be run
  /// (the search fails). NULL: the jobs run one by one with expand.
  /// meanwhile (may be NULL): see cp_batch_meanwhile; an implementation
  /// that has no other workers may leave it uncalled.
  int (*expand_batch)(void *ctx, cp_expand_job *jobs, int n,
                      const cp_batch_meanwhile *meanwhile);
  /// Optional, for local steering (cp_search_options.steer_local; docs/
  /// planner.md "Local steering"): the size of the normalised input u in
  /// [-1, 1]^n_steer (0: the problem cannot be steered locally); the
  /// action whose input is nearest u; the normalised input u of action a;
  /// and the embedding rows the steering fits (e.g. the free bodies'
  /// poses), written into rows [m], their count returned.
  int n_steer;
  long (*steer_action)(void *ctx, const double *u);
  void (*steer_coords)(void *ctx, long a, double *u);
  int (*steer_rows)(void *ctx, int *rows);
  /// 1 when steer_rows are poses, 7 rows per body (position, then a
  /// quaternion [w, x, y, z] of any scale and sign): local steering may
  /// then fit in the rotation-vector chart (cp_search_options.steer_log).
  int steer_pose;
  /// Optional, for pipelined batches (cp_search_options.pipeline): hands
  /// the n jobs to the workers and returns at once with a handle >= 0 (at
  /// most two batches out at a time), or -1 when they cannot be handed
  /// out; batch_wait returns 0 once every job of batch `handle` has run
  /// (each job's rc says how), the calling thread taking jobs of it, then
  /// of the other batch out, meanwhile (meanwhile: as for expand_batch),
  /// or -1. The jobs' inputs must stay valid until the wait: the search
  /// gives started jobs copies of their parents' data. NULL: every batch
  /// runs with expand_batch (or one job after another).
  int (*batch_start)(void *ctx, cp_expand_job *jobs, int n);
  int (*batch_wait)(void *ctx, int handle,
                    const cp_batch_meanwhile *meanwhile);
} cp_search_problem;

typedef struct cp_search_options {
  const char *method;   ///< "astar" (default), "rrt", "sst"
  double weight;        ///< astar: w in g + w h (1.5)
  double goal_bias;     ///< rrt/sst: probability of a goal sample (0.05)
  int candidates;       ///< rrt: actions tried per iteration (8)
  double delta_bn;      ///< sst: selection radius (0.05)
  double delta_s;       ///< sst: witness radius (0.02)
  uint64_t seed;        ///< (1)
  long max_nodes;       ///< stop when this many nodes exist (100000)
  /// Polled after every simulated action (NULL: none); the caller's, it
  /// must outlive the search. When it says stop, cp_search_iterate returns
  /// CP_SEARCH_STOPPED with the nodes in a state that resumes exactly
  /// (astar: the node being expanded continues with its next action; rrt:
  /// the unfinished iteration's candidates are dropped; sst: an iteration
  /// is one action).
  const cp_search_budget *budget;
  /// Expansions chosen together from the search as it is before them,
  /// simulated (in parallel when the problem has expand_batch) and merged
  /// in a fixed order (docs/planner.md, "Batches"): astar takes the popped
  /// node's actions `batch` at a time, rrt and sst draw `batch` iterations.
  /// The nodes depend on batch, never on the workers. 1 (default): one at a
  /// time, as always.
  int batch;
  /// rrt: after a goal sample's iteration brought the tree nearer the goal,
  /// up to this many more goal-steered extensions from the node just kept,
  /// while each comes nearer still (docs/planner.md, "Greedy extension").
  /// 0 (default): none, as before. Needs batch 1.
  int connect;
  /// rrt: local steering (docs/planner.md, "Local steering"; planner/
  /// search/steer_local.c): each iteration also simulates the zero input,
  /// fits the linear model e(u) ~ e(0) + B u of the embedding's steered rows
  /// to the candidates' outcomes, and simulates the input of the bounded
  /// least-squares problem min |e(0) + B u - sample|. Needs a problem with
  /// n_steer > 0 and batch 1, method rrt or sst (sst steers its goal
  /// samples with its candidates, its other iterations with one random
  /// action). 0 (default): off.
  int steer_local;
  /// Local steering: fit and solve in the rotation-vector chart (6 rows
  /// per body: position and log(R R0^T), planner/search/steer_chart.c)
  /// instead of the embedding's quaternion rows; needs a problem with
  /// steer_pose. 0 (default): the quaternion rows.
  int steer_log;
  /// Local steering: before the random candidates, probe each steered
  /// input alone at u_i = steer_probe (in (0, 1]; n_steer more actions per
  /// iteration), so that the fit sees every column of B. 0 (default): no
  /// probes.
  double steer_probe;
  /// rrt: a goal sample's iteration grows from a node drawn uniformly
  /// (from the search's random stream) among the goal_k tree nodes nearest
  /// the goal sample, instead of the nearest (docs/planner.md, "Goal
  /// neighbourhood"): a nearest node from which no action comes nearer the
  /// goal no longer takes every goal sample. 0 or 1 (default): the nearest,
  /// as before, and no random number drawn.
  int goal_k;
  /// rrt and sst with batch > 1: pipelined batches (docs/parallel.md,
  /// "Pipelined batches"): batch k + 1 is drawn from the tree as merged up
  /// to batch k - 1, before batch k is merged; merges stay in job order, so
  /// the nodes depend on the task and seed only. With a
  /// problem's batch_start the two batches out overlap on the workers; a
  /// commit stores the drawn, unmerged batch
  /// (cp_search_pending_save), so a run resumes exactly. 0 (default here):
  /// off. A task's runs (cp_plan_search) set it and batch by the task's
  /// rule, cp_task_search_mode: unless the task says search.pipeline, rrt
  /// and sst at search.batch B >= 4 pipeline halves of B / 2 (batch here is
  /// one half; planner/search/task.h).
  int pipeline;
  /// rrt: a tree node from which an iteration kept no candidate (every
  /// candidate rejected: out of bounds, penetration, solver failure) is
  /// flagged CP_NODE_DROPPED and leaves the nearest-neighbour index, so no
  /// later sample grows from it (docs/planner.md, "Dropping dead nodes").
  /// The start node is never dropped. 0 (default): off, as before.
  int drop_rejected;
  /// rrt and sst: never simulate a (node, action) pair twice (docs/
  /// planner.md, "Fresh actions"; a simulation is a function of the node
  /// and the action, so a repeat gives the node it gave before). An
  /// iteration draws its actions among the untried ones of its node; a
  /// node whose every action has been tried is exhausted and selection
  /// passes it by; pairs are marked when drawn, so the iterations of a
  /// batch never share one. Needs at most CP_SEARCH_MAX_FRESH_ACTIONS
  /// actions (grid sampling; continuous sampling does not repeat). astar
  /// ignores it (it expands every action of a node once). 0 (default here):
  /// off, as before; a task's new runs have it on (cp_plan_search).
  int fresh_actions;
  /// rrt with fresh_actions: when a node has tried every action, the
  /// candidates it simulated but did not keep (CP_NODE_DISCARDED, outcome
  /// ok) are kept after all (the flag is cleared) and join the
  /// nearest-neighbour index, so that exhausting a node does not lose the
  /// states it reached (docs/planner.md, "Fresh actions"). 1 (default):
  /// on; 0: session 28's rrt, which never selected them (runs stored
  /// without "search_fresh_revive" resume so). sst ignores it (it keeps
  /// every candidate it does not prune).
  int fresh_revive;
} cp_search_options;

/// Upper bound of cp_search_options.batch.
#define CP_SEARCH_MAX_BATCH 4096
/// Most actions a problem may have for cp_search_options.fresh_actions.
#define CP_SEARCH_MAX_FRESH_ACTIONS 65536
/// Upper bound of cp_search_options.goal_k.
#define CP_SEARCH_MAX_GOAL_K 10000

cp_search_options cp_search_defaults(void);

/// Node flags.
enum {
  CP_NODE_EXPANDED = 1,    ///< astar: popped and expanded
  CP_NODE_SUPERSEDED = 2,  ///< astar: a cheaper node took its cell
  CP_NODE_DISCARDED = 4,   ///< rrt: a candidate not kept; sst: dominated
                           ///< in its witness cell on arrival
  CP_NODE_INACTIVE = 8,    ///< sst: dominated later (kept for its subtree)
  CP_NODE_PRUNED = 16,     ///< sst: inactive leaf removed from the tree
  CP_NODE_GOAL = 32,       ///< in the goal region
  CP_NODE_SHORTCUT = 64,   ///< made by cp_search_shortcut (not part of the
                           ///< planner's own structures)
  CP_NODE_DROPPED = 128    ///< rrt with drop_rejected: every candidate of an
                           ///< iteration from it was rejected; out of the
                           ///< nearest-neighbour index (kept for its subtree)
};

typedef struct cp_search_node {
  long id, parent;        ///< parent -1 for the start
  int depth;
  double time, cost;
  long action;            ///< -1 for the start
  cp_expand_outcome outcome;
  int steps, lcp_solves, pivots, fallbacks, warm_steps;
  int flags;
  double goal_distance;
  /// Rejection reason, whole ("" when none). Owned by the search (or, from
  /// cp_store_load_node, by the store until its next call); cp_search_adopt
  /// copies it.
  const char *message;
} cp_search_node;

typedef enum cp_search_status {
  CP_SEARCH_RUNNING = 0,  ///< call cp_search_iterate again
  CP_SEARCH_SOLVED,       ///< a plan was found and this planner stops
  CP_SEARCH_EXHAUSTED,    ///< nothing left to expand (A*)
  CP_SEARCH_NODE_LIMIT,   ///< max_nodes reached
  CP_SEARCH_FAILED,        ///< out of memory or a bad setup (message)
  CP_SEARCH_STOPPED       ///< the budget stopped it (resumable)
} cp_search_status;

typedef struct cp_search cp_search;

/// Totals over the search's life in this process (plus those given to
/// cp_search_resume).
typedef struct cp_search_stats {
  long expansions;        ///< actions simulated
  long iterations;        ///< planner iterations
  long duplicates;        ///< astar: outcomes dropped as duplicates
  long rejected;          ///< outcomes rejected
  long long steps, lcp_solves, pivots, fallbacks, warm_steps;
} cp_search_stats;

/// Creates a search from the start state x0 (node 0 is created unless the
/// search is to be resumed: resume = 1, then give the nodes to
/// cp_search_adopt). Returns NULL with msg (size bytes) filled on failure
/// (unknown method, out of memory).
cp_search *cp_search_create(const cp_search_problem *p,
                            const cp_search_options *opt, const double *x0,
                            int resume, char *msg, size_t size);
void cp_search_destroy(cp_search *s);

/// The planner names, NULL-terminated.
const char *const *cp_search_methods(void);

/// Resume: gives back stored node `node` (ids in order 0, 1, 2, ...) with
/// its state x and its warm-start data (may be NULL). Returns 0, or -1 (out
/// of memory or an id out of order).
int cp_search_adopt(cp_search *s, const cp_search_node *node,
                    const double *x, const void *warm, size_t warm_size);
/// Resume: rebuilds the planner's structures from the adopted nodes and
/// restores the generator and the totals. Returns 0 or -1 (no nodes).
int cp_search_resume(cp_search *s, const cp_rng *rng,
                     const cp_search_stats *stats);

/// Pipelined batches (cp_search_options.pipeline; docs/parallel.md,
/// "Pipelined batches"): after a call of cp_search_iterate the batch drawn
/// for the next call (from the tree before the merged one) is pending, and
/// the generator's state is the one after that draw. A commit stores it so
/// that a resumed run hands it out first. cp_search_pending_save writes the
/// pending iterations into *buf (grown with realloc; *cap its size) as
/// int64 / double values (docs/database.md, table pending_batches) and
/// sets *size to the bytes written; returns the number of iterations (0:
/// none pending, also for an unpipelined search), or -1 (memory). A search
/// that ended at its node limit undid its last draw (its generator too)
/// and merged the pending batch: that draw is saved, and *rng points at
/// the generator after it (else NULL), so that a resume with a larger
/// limit continues as the uninterrupted run.
long cp_search_pending_save(const cp_search *s, unsigned char **buf,
                            size_t *cap, size_t *size, const cp_rng **rng);
/// Resume of a pipelined search, after cp_search_resume: `iters`
/// iterations saved by cp_search_pending_save become the pending batch
/// (with its rng when it gave one: the generator and the iteration count
/// of the call that drew it are then restored).
/// Returns 0, or -1 when the data does not fit the search (its size, a
/// node id not adopted, an action out of range, more candidates than the
/// search's; message set).
int cp_search_pending_load(cp_search *s, const void *data, size_t size,
                           long iters, const cp_rng *rng);
/// 1 for a pipelined search (cp_search_options.pipeline), else 0.
int cp_search_pipelined(const cp_search *s);

/// Sets the totals, for a search whose nodes were simulated elsewhere and
/// given to cp_search_adopt (the OMPL adapter's plans, planner/ompl/): the
/// store writes them with the run.
void cp_search_set_stats(cp_search *s, const cp_search_stats *stats);

/// The work that expand_batch may run while the jobs of a batch of several
/// are simulated (cp_batch_meanwhile; fn NULL: none, the default).
void cp_search_set_meanwhile(cp_search *s, void (*fn)(void *ctx), void *ctx);

/// One planner iteration (astar: expand one node with every action; rrt:
/// one sample and its candidates; sst: one sample, one action).
cp_search_status cp_search_iterate(cp_search *s);

long cp_search_node_count(const cp_search *s);
const cp_search_node *cp_search_node_get(const cp_search *s, long id);
const double *cp_search_state(const cp_search *s, long id);
int cp_search_state_size(const cp_search *s);
/// The metric embedding's size (the problem's m).
int cp_search_embedding_size(const cp_search *s);
/// Node id's warm-start data (the world's LCP basis at its state; NULL and
/// *size 0 when none).
const void *cp_search_warm(const cp_search *s, long id, size_t *size);

/// Expansions that failed (cp_expand_outcome_is_failure) among the nodes:
/// the total, and per outcome in by_outcome[CP_EXPAND_COUNT] (may be
/// NULL). Counted from the nodes, so a resumed search counts its earlier
/// sessions' too.
long cp_search_failures(const cp_search *s, long *by_outcome);

/// The cheapest goal node so far (-1 when none): for astar the cheapest
/// goal node generated (the node that ended a solved search), for rrt the
/// node that ended the search, for sst the cheapest in the tree.
long cp_search_best(const cp_search *s);
/// The smallest goal distance over the accepted nodes so far (the problem's
/// goal_distance: position and orientation), and the first node that has
/// it (-1 when none): the best near-miss of a search without a plan.
double cp_search_best_distance(const cp_search *s);
long cp_search_nearest(const cp_search *s);
const cp_search_stats *cp_search_get_stats(const cp_search *s);
const cp_rng *cp_search_rng(const cp_search *s);
const char *cp_search_message(const cp_search *s);
const char *cp_search_method(const cp_search *s);
/// 1 when the search draws fresh actions (cp_search_options.fresh_actions
/// on, and rrt or sst): its CP_SEARCH_EXHAUSTED then means every node it
/// could grow from has tried all its actions, which proves nothing about
/// the task (docs/planner.md, "Fresh actions").
int cp_search_fresh_actions(const cp_search *s);

/// Shortcutting (docs/planner.md): tries to shorten the plan ending at goal
/// node `goal` by cutting stretches out of it (actions i+1..j, longest
/// first), putting nothing or one action (each of the first 64) in their
/// place and simulating the actions after them again from node i; a
/// result is kept when one of its nodes is in the goal and cheaper than the
/// plan. Repeats until no cut helps or max_sims actions were simulated (the
/// budget may stop it sooner). The simulated outcomes are new nodes flagged
/// SHORTCUT. Returns the (possibly unchanged) best goal node, which becomes
/// cp_search_best; -1 on a fatal error (message). A node that is not a goal
/// node is returned as it is.
long cp_search_shortcut(cp_search *s, long goal, long max_sims);

/// The path from the start to node id: writes up to cap ids (start first)
/// into ids (may be NULL with cap 0); returns the path's node count.
long cp_search_path(const cp_search *s, long id, long *ids, long cap);

/// Journal (see the file comment).
long cp_search_journal_first(const cp_search *s);
/// Ids whose flags changed since the last clear (and that were created
/// before journal_first); *n receives the count.
const long *cp_search_journal_updates(const cp_search *s, long *n);
void cp_search_journal_clear(cp_search *s);

/// Witnesses (sst; none for the other planners): witness id's point in the
/// embedding (m numbers) and its representative node (*rep, -1 when none).
/// Created since the last journal clear: [cp_search_witness_first,
/// cp_search_witness_count); existing ones whose representative changed:
/// cp_search_witness_updates. The store keeps them with the nodes so that a
/// resumed sst grows exactly the tree of the uninterrupted run.
long cp_search_witness_count(const cp_search *s);
const double *cp_search_witness(const cp_search *s, long id, long *rep);
long cp_search_witness_first(const cp_search *s);
const long *cp_search_witness_updates(const cp_search *s, long *n);
/// Resume: gives back stored witness id (in order 0, 1, ...; point of m
/// numbers), before cp_search_resume. Returns 0, or -1 (out of order, a
/// point of another size, a representative that is no node, memory).
int cp_search_adopt_witness(cp_search *s, long id, const double *point,
                            int m, long rep);

#ifdef __cplusplus
}
#endif
#endif
