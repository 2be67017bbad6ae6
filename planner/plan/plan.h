/// \file planner/plan/plan.h
/// Planning a task: the loop that drives a search (planner/search/search.h) and
/// writes what it explores to the database (planner/store/store.h) in batches, so
/// that a killed search resumes from what was committed; the binding of a
/// task to the simulator (cp_plan_world: the search problem whose
/// expansions step a cp_world); and repeated runs in OMPL's benchmark
/// tables.
///
/// Data flows task -> world -> search -> store: the search sees only the
/// problem's callbacks, the store only finished nodes.
///
/// Ownership: nothing here keeps the caller's pointers beyond a call except
/// cp_plan_world, which owns its world and scratch and borrows the task
/// (the task must outlive it). No function prints; progress goes to the
/// caller's callback.
#ifndef CP_PLANNER_PLAN_H
#define CP_PLANNER_PLAN_H

#include <signal.h>
#include <stdint.h>

#include "models/error.h"
#include "planner/search/search.h"
#include "planner/store/store.h"
#include "planner/search/task.h"
#include "planner/sim/world.h"

#ifdef __cplusplus
extern "C" {
#endif

/// A progress report (every progress_interval seconds).
typedef struct cp_plan_progress {
  long nodes, expansions;
  double expansions_per_second;
  double best_distance;   ///< least goal distance so far (m)
  double best_cost;       ///< cheapest plan so far (NaN when none)
  double elapsed;         ///< seconds in this session
} cp_plan_progress;

typedef struct cp_plan_options {
  int resume;             ///< continue the task's last unfinished run
  int has_seed;           ///< 1: seed overrides the task's
  uint64_t seed;
  const char *method;     ///< NULL: the task's
  double max_seconds;     ///< 0: the task's limit
  long max_nodes;         ///< 0: the task's limit
  int batch;              ///< expansions per transaction (0: the task's)
  /// Expansions chosen and simulated together (search.batch; 0: the
  /// task's), to which the task's pipeline rule applies as to the task's
  /// own (cp_task_search_mode: unless the task says search.pipeline, rrt
  /// and sst at 4 or more pipeline two halves of half of it). A resumed
  /// run keeps the batch and halves it was started with.
  int search_batch;
  /// cp_plan_task only: workers simulating a batch (0, 1: the calling
  /// thread alone; see cp_plan_world_set_threads).
  int threads;
  /// cp_plan_task only: runs the batches instead of threads when not NULL
  /// (MPI's ranks: planner/plan/mpi.h), like cp_search_problem's
  /// expand_batch. own is the calling thread's problem (own->expand with
  /// own->ctx runs a job on the caller's world, which polls the search's
  /// budget; own->n is the state size); budget is the search's (NULL:
  /// none), for the time left that jobs run elsewhere must respect.
  int (*run_batch)(void *ctx, const cp_search_problem *own,
                   const cp_search_budget *budget, cp_expand_job *jobs,
                   int count, const cp_batch_meanwhile *meanwhile);
  /// cp_plan_task only, with run_batch (may be NULL): pipelined batches
  /// (task search.pipeline; by default rrt and sst at batch >= 4 pipeline
  /// halves of batch / 2, cp_task_search_mode)
  /// overlapped over the same workers, like
  /// cp_search_problem's batch_start / batch_wait: start hands the jobs
  /// out and returns a handle >= 0 at once (-1: two batches out already);
  /// wait returns 0 once every job of batch `handle` has run (the caller
  /// runs jobs of it, then of the other batch out), or -1. NULL: every
  /// batch runs with run_batch.
  int (*run_batch_start)(void *ctx, const cp_search_problem *own,
                         const cp_search_budget *budget, cp_expand_job *jobs,
                         int count);
  int (*run_batch_wait)(void *ctx, const cp_search_problem *own, int handle,
                        const cp_batch_meanwhile *meanwhile);
  void *run_batch_ctx;
  const char *task_path;  ///< recorded in the tasks table (may be NULL)
  const char *world_options; ///< JSON text recorded with the run (NULL: {})
  void (*progress)(void *ctx, const cp_plan_progress *p);
  void *progress_ctx;
  double progress_interval; ///< seconds (default 0.5)
  /// Cancel flag (NULL: none), typically set by the caller's SIGINT/SIGTERM
  /// handler (the library installs none): once *cancel != 0 the search
  /// stops after the action it is simulating, commits, and the run is
  /// stored "interrupted" (resumable); the status is CP_PLAN_INTERRUPTED.
  volatile sig_atomic_t *cancel;
  /// The clock of the time limit, the progress reports and the stored
  /// seconds (NULL: CLOCK_MONOTONIC, wall time). Tests inject one.
  double (*clock)(void *ctx);
  void *clock_ctx;
  /// Called (NULL: not) once the run's row exists in the store, before its
  /// first expansion, with its id: cp_plan_benchmark's threads start their
  /// runs in order through it.
  void (*started)(void *ctx, int64_t run_id);
  void *started_ctx;
} cp_plan_options;

cp_plan_options cp_plan_defaults(void);

typedef enum cp_plan_status {
  CP_PLAN_SOLVED = 0,
  CP_PLAN_NOT_FOUND,      ///< the search space was exhausted
  CP_PLAN_LIMIT,          ///< a limit ended the search first
  CP_PLAN_BAD_INPUT,      ///< bad task, or a database of another kind
  CP_PLAN_FAILED,         ///< storage or memory failure (message says which)
  CP_PLAN_INTERRUPTED,    ///< the cancel flag stopped it (resumable)
  CP_PLAN_FAILED_EXPANSIONS ///< the space ran out, but some expansions
                          ///< failed (cp_expand_outcome_is_failure): no
                          ///< proof that no plan exists
} cp_plan_status;

/// "solved", "not_found", "limit", "bad_input", "failed", "interrupted",
/// "failed_expansions".
const char *cp_plan_status_name(cp_plan_status s);

typedef struct cp_plan_result {
  cp_plan_status status;
  int64_t run_id, plan_id;    ///< plan_id -1 when none
  char planner[16];
  int resumed;                ///< 1 when an unfinished run was continued
  long nodes;
  cp_search_stats stats;
  double seconds;             ///< search time over all sessions of the run
  double session_seconds;     ///< this call
  double store_seconds;       ///< part of session_seconds spent writing
  double cost;                ///< plan cost (NaN when none)
  long length;                ///< plan actions (0 when none)
  double best_distance;       ///< least goal distance over the nodes (m)
  long best_node;             ///< the node that has it (-1 when none)
  long goal_node;             ///< -1 when none
  long failed;                ///< failed expansions over all sessions
  long failed_by[CP_EXPAND_COUNT]; ///< per outcome (solver_failed,
                                    ///< nonfinite)
  /// 1 when an rrt or sst search with fresh actions (search.fresh_actions)
  /// ended because every node it could grow from had tried all its
  /// actions. That is no proof that no plan exists (the tree's shape
  /// depends on the order it was grown in), so the status is
  /// CP_PLAN_LIMIT (stored "limit"), or CP_PLAN_SOLVED when sst had a plan.
  int actions_exhausted;
} cp_plan_result;

/// Runs (or resumes) a search of the problem p from x0 for task, writing
/// every node to st. Returns the status (also in res->status); err has the
/// message for BAD_INPUT and FAILED.
cp_plan_status cp_plan_search(cp_store *st, const cp_task *task,
                              const cp_search_problem *p, const double *x0,
                              const cp_plan_options *opt, cp_plan_result *res,
                              cp_error *err);

/// The task bound to the simulator.
typedef struct cp_plan_world cp_plan_world;

/// Slots of the world's impact memo when warm starts are on (docs/
/// simulate.md): the siblings of a node are expanded far apart in a search
/// (in a 3000-node SST on the push, half of the repeated impact problems
/// came more than 64 impacts after the first).
#define CP_PLAN_IMPACT_MEMO 1024

/// Simulation steps between two polls of the search's budget inside an
/// action (docs/planner.md, "Budgets").
#define CP_PLAN_BUDGET_STEPS 16

/// The world options the planner simulates task with (stepper, dt,
/// fallback policy, warm starts with CP_PLAN_IMPACT_MEMO impact-memo slots,
/// or neither when warm_start = 0): a bare cp_world made with them steps
/// as cp_plan_world's does.
cp_world_options cp_plan_world_options_of(const cp_task *task, int warm_start);

/// Creates the world of the task's scene (stepper, dt, fallback policy,
/// warm starts on unless warm_start = 0) and the search problem over it:
/// states are cp_world_get_state vectors; an expansion sets the state, the
/// parent's LCP basis and the action's inputs, steps round(T / h) times and
/// rejects on a world status, a body leaving the bounds or a fallback step
/// when the task forbids them. Given a budget (the search's, through
/// set_budget), an expansion bounds every solver of its steps by the time
/// left (cp_world_set_deadline) and polls the budget every
/// CP_PLAN_BUDGET_STEPS steps, stopping the action when it is spent.
/// Returns 0, or -1 with err.
int cp_plan_world_create(const cp_task *task, int warm_start,
                         cp_plan_world **out, cp_error *err);
void cp_plan_world_destroy(cp_plan_world *pw);
/// Resizes the world's impact memo (cp_world_set_impact_memo; with warm
/// starts it has CP_PLAN_IMPACT_MEMO slots, else none): the benchmark
/// measures warm starts with and without it. 0, or -1 (bad size, memory).
int cp_plan_world_set_impact_memo(cp_plan_world *pw, int slots);
/// cp_world_set_memo_pivots on the world and its workers' worlds: set by
/// every search of the world (on when its batch is above 1, so that its
/// nodes' pivots do not depend on the thread or rank that made them), and
/// by an MPI worker rank, which runs jobs of such searches only.
void cp_plan_world_set_memo_pivots(cp_plan_world *pw, int on);
/// cp_world_clear_impact_memo on the world and its workers' worlds (done at
/// every search's start).
void cp_plan_world_clear_impact_memo(cp_plan_world *pw);
/// Simulates the batches of a search (search.batch > 1) on `threads`
/// threads: the calling thread and threads - 1 workers, each with a world
/// of its own made like pw's (docs/parallel.md). The problem then has
/// expand_batch; its answers are the same for any number of threads (every
/// expansion starts from its parent's state and stored warm-start data
/// only). threads 1 removes the workers. With a budget the workers poll it
/// too: its clock must be safe to call from several threads. 0, or -1 with
/// err (memory, threads out of 1 .. CP_PLAN_MAX_THREADS, no thread).
int cp_plan_world_set_threads(cp_plan_world *pw, int threads, cp_error *err);
#define CP_PLAN_MAX_THREADS 256
/// The problem (ctx = pw) and the start state.
const cp_search_problem *cp_plan_world_problem(const cp_plan_world *pw);
const double *cp_plan_world_start(const cp_plan_world *pw);
/// JSON text of the world options (stepper, dt, warm_start,
/// allow_fallback, solver), for the run's record.
const char *cp_plan_world_options(const cp_plan_world *pw);
/// The velocity_sliding recorded in a world-options JSON text (world_of 0:
/// cp_plan_world_options' text; 1: a stored run's options, the world's
/// under "world"): 0 or 1, or -1 when the text does not say (runs stored
/// before session 22, which simulated with it off).
int cp_plan_velocity_sliding_of(const char *text, int world_of);
/// Seconds spent simulating so far (CPU time of the threads that simulated,
/// summed over pw's workers); 0 for expansions made while pw was untimed.
double cp_plan_world_seconds(const cp_plan_world *pw);
/// Whether pw's expansions (and its workers', on any thread count set
/// before or after) read the thread's CPU clock for cp_plan_world_seconds:
/// on when created. That clock is a system call on some machines (1.4-1.5
/// us a read on a KVM guest, two reads an expansion); complan's own
/// searches, replays and MPI workers, which do not report the figure, turn
/// it off. Nothing else of a search depends on it.
void cp_plan_world_set_timing(cp_plan_world *pw, int on);
/// Calls fn(ctx, world) after every simulation step of the expansions that
/// follow (fn NULL: none), with the world after the step: replay records
/// per-step states and contacts through it while the expansion itself stays
/// the search's own. The world must not be changed by fn.
void cp_plan_world_observe(cp_plan_world *pw,
                           void (*fn)(void *ctx, const cp_world *world),
                           void *ctx);
/// Calls fn(ctx) from within the long LCP solves of pw's own expansions
/// (cp_world_set_solve_poll: after every `period`-th Lemke pivot and every
/// FIP iteration; fn NULL: none). Not its workers' (threads take their jobs themselves). MPI's
/// rank 0 answers its workers through it (planner/plan/mpi.c). The
/// expansions' results are the same with or without it. -1 for fn set with
/// period < 1, else 0.
int cp_plan_world_set_solve_poll(cp_plan_world *pw, void (*fn)(void *ctx),
                                 void *ctx, int period);

/// One action stepped by the caller (the search's expansion is exactly
/// this; the OMPL adapter, planner/ompl/, steps it one world step at a
/// time). cp_plan_world_begin sets the world to state x (the problem's n
/// numbers) at time t, installs the warm-start data (may be NULL) and
/// action a's inputs; cp_plan_world_advance takes world step k (0, 1, ...)
/// of the action: y holds the state before the step (its goal entries are
/// read) and receives the state after it, and the step's counts are added
/// to info; cp_plan_world_end puts the world's warm-start data into
/// info->warm (the world's copy, valid until the next call) when the
/// outcome is OK. begin and advance return 0 (go on), 1 (rejected:
/// info->outcome and info->message say why), 2 (advance only: the world's
/// deadline, cp_world_set_deadline, stopped a solver call; the search
/// treats the action as cut short by its budget, with no outcome) or -1
/// (fatal: out of memory, or a task the world does not fit; info->message
/// says which).
int cp_plan_world_begin(cp_plan_world *pw, const double *x, double t,
                        const void *warm, size_t warm_size, long a,
                        cp_expansion *info);
int cp_plan_world_advance(cp_plan_world *pw, int k, double *y,
                          cp_expansion *info);
void cp_plan_world_end(cp_plan_world *pw, cp_expansion *info);

/// Plans task with the simulator: cp_plan_world_create + cp_plan_search.
cp_plan_status cp_plan_task(cp_store *st, const cp_task *task,
                            const cp_plan_options *opt, cp_plan_result *res,
                            cp_error *err);

/// Where a benchmark's runs are searched when not in this process (MPI
/// ranks: cp_plan_mpi_benchmark, planner/plan/mpi.h). cp_plan_benchmark
/// has up to `slots` runs under way at once, takes them back in any order
/// and brings each into its store in run order, so that the store gets the
/// rows of a one-thread benchmark.
typedef struct cp_bench_remote {
  int slots;
  void *ctx;
  /// Starts run k, to be searched with options o (planner, seed, limits;
  /// no callbacks). 0, or -1 with err.
  int (*start)(void *ctx, int k, const cp_plan_options *o, cp_error *err);
  /// Waits for a started run to end: *k which, *status, *res (its ids are
  /// the searching side's until import), *run_err; *samples (n_samples)
  /// its progress reports, valid until the next call. 0, or -1 with err.
  int (*wait)(void *ctx, int *k, cp_plan_status *status, cp_plan_result *res,
              cp_error *run_err, const cp_plan_progress **samples,
              int *n_samples, cp_error *err);
  /// Writes ended run k's rows (search, nodes, witnesses, plans) into st;
  /// res->run_id and res->plan_id become their ids there. 0, or -1 with
  /// err.
  int (*import)(void *ctx, cp_store *st, int k, cp_plan_result *res,
                cp_error *err);
} cp_bench_remote;

/// Benchmark: runs x planners, seeds seed, seed+1, ...; each run is a full
/// search stored as usual, summarised in OMPL's tables (one experiment).
typedef struct cp_bench_options {
  int runs;                   ///< per planner (>= 1)
  const char *const *planners;///< NULL-terminated; NULL: the task's method
  double max_seconds;         ///< per run (0: the task's limit)
  const char *task_path;
  void (*progress)(void *ctx, const char *planner, int run,
                   const cp_plan_result *r);
  void *progress_ctx;
  /// Runs searched at once (0, 1: one after another). With more, each
  /// running search has a world of its own (cp_plan_world_create(task, 1):
  /// p must be such a world's problem) and a connection of its own to the
  /// database file `db` (the one st was opened from); the runs still start
  /// in order, and the benchmark's rows are written in order by the
  /// calling thread, so the database has the same rows as with one thread
  /// (docs/parallel.md: only the plans' row ids and the times differ).
  /// progress is called from the calling thread, in run order.
  int threads;
  const char *db;
  /// NULL: the runs are searched here (threads). Else where they are
  /// searched (threads is then ignored).
  const cp_bench_remote *remote;
  /// A signal handler's flag (cp_search_cancel; NULL: none). Once set, the
  /// benchmark stops: the runs that ended keep their rows, each run under
  /// way is stored as `interrupted` (here: its search stops as
  /// cp_plan_search's does; remote, under mpirun when a rank died: its
  /// nodes were in the other process, so it gets its search row and start
  /// node, a search under the set flag), runs not started are left out,
  /// the experiment's total time stays unset, and CP_PLAN_INTERRUPTED is
  /// returned with err saying so. --resume continues an interrupted run.
  volatile sig_atomic_t *cancel;
} cp_bench_options;

/// The OMPL benchmark row of one finished run (status 6 solved, 4 limit,
/// else 0; memory in MB).
cp_bench_run cp_plan_bench_row(const cp_plan_result *res, double memory);

/// Benchmarks the problem p from x0 (world_options: JSON text recorded with
/// every run), on opt->threads threads when more than one. Returns the
/// experiment id in *experiment_id; CP_PLAN_SOLVED when every run finished
/// (solved or not), else the first failure's status.
cp_plan_status cp_plan_benchmark(cp_store *st, const cp_task *task,
                                 const cp_search_problem *p, const double *x0,
                                 const char *world_options,
                                 const cp_bench_options *opt,
                                 int64_t *experiment_id, cp_error *err);

#ifdef __cplusplus
}
#endif
#endif
