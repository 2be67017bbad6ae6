/// \file planner/plan/mpi.h
/// Planning with MPI (docs/parallel.md, "MPI"): rank 0 runs the search and
/// owns the database, as cp_plan_task does; ranks 1 .. R-1 each own a world
/// of the task and simulate the jobs of its batches (search.batch), sent as
/// messages (planner/plan/wire.h), while rank 0 simulates the rest. The answers are those of
/// cp_plan_task with any number of threads. Built as its own library
/// (libcomplan-mpi, complan-mpi.pc) when meson finds MPI (-Dmpi=auto); the
/// C library does not depend on MPI, and this header needs no MPI header:
/// a program calls these functions when linked with complan-mpi.
#ifndef CP_PLANNER_PLAN_MPI_H
#define CP_PLANNER_PLAN_MPI_H

#include "planner/plan/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Initialises MPI (MPI_Init) and gives this process's rank and the number
/// of ranks. 0, or -1 with err.
int cp_plan_mpi_start(int *rank, int *ranks, cp_error *err);
/// Rank 0: tells every worker still waiting to stop; then every rank:
/// MPI_Finalize.
void cp_plan_mpi_stop(void);

/// Rank 0: cp_plan_task with the batches simulated by ranks 1 .. R-1 (up
/// to two jobs in flight each) and by rank 0 itself (the jobs not handed
/// out; one rank alone runs them all). A job carries the seconds the
/// search had left when it was sent: a worker stops a long action at that
/// deadline as rank 0 would.
/// First every worker reports that it loaded the same task
/// (cp_task_hash) into a world (else CP_PLAN_BAD_INPUT naming the rank and
/// what it said). A worker that fails or dies mid-run ends the search
/// like a failed expansion (CP_PLAN_FAILED, the rank named): the batches
/// committed before stay in the database and --resume continues the run.
cp_plan_status cp_plan_mpi_task(cp_store *st, const cp_task *task,
                                const cp_plan_options *opt,
                                cp_plan_result *res, cp_error *err);

/// Rank 0: cp_plan_benchmark with the runs searched by ranks 1 .. R-1, one
/// run per rank at a time, each into a store in the rank's memory that
/// travels back whole; rank 0 imports the runs in run order
/// (cp_store_import_run) and writes the benchmark's rows, so st gets the
/// rows of a one-thread benchmark (docs/parallel.md). One rank alone
/// searches every run itself. The workers check their task as for
/// cp_plan_mpi_task; a worker that fails ends the benchmark (CP_PLAN_FAILED,
/// the rank named) with the runs imported so far.
cp_plan_status cp_plan_mpi_benchmark(cp_store *st, const cp_task *task,
                                     const cp_search_problem *p,
                                     const double *x0,
                                     const char *world_options,
                                     const cp_bench_options *opt,
                                     int64_t *experiment_id, cp_error *err);

/// Rank 0: the jobs sent to the workers so far, the jobs rank 0 ran
/// itself, and the bytes of the job and outcome messages (docs/parallel.md
/// measures them per expansion).
void cp_plan_mpi_traffic(long long *jobs, long long *own, long long *sent,
                         long long *received);

/// Rank 0's time in the batches of cp_plan_mpi_task (summed over the
/// batches so far; thread-CPU seconds unless said otherwise): what rank 0
/// spends dispatching and collecting against what it simulates itself.
typedef struct cp_plan_mpi_rank0 {
  long long batches; ///< batches handed to the ranks
  double cpu;        ///< all of rank 0's CPU inside the batches
  double own;        ///< simulating the jobs it ran itself
  double store;      ///< the caller's work during the batches (the store's
                     ///< commits, docs/parallel.md)
  double looking;    ///< looking for outcomes (MPI_Iprobe) between jobs
  double waiting;    ///< waiting for outcomes with no job left to run
                     ///< (polling costs CPU; naps do not)
  double waiting_wall; ///< the same waits on the monotonic clock
  double wall;       ///< the batches' span on the monotonic clock
  long long looks;   ///< looks for answers while jobs were left to hand
                     ///< out (between and within rank 0's own jobs)
  long long fruitless; ///< those of them that found no answer
  long long ahead;   ///< pipelined batches: jobs rank 0 ran of the batch
                     ///< after the one it waited for (its own handed out)
  long long store_looks; ///< of `looks`, those made during the store's
                         ///< commits (cp_store_set_progress)
  long long solve_polls; ///< calls from within the LCP solves of rank 0's
                         ///< own jobs (every 16 Lemke pivots and every
                         ///< FIP iteration: cp_plan_world_set_solve_poll)
  long long solve_looks; ///< of `looks`, those made in such calls (an
                         ///< answer was due: one step was lasting)
} cp_plan_mpi_rank0;

/// Rank 0: its times so far (the messages -- encoding and sending jobs,
/// receiving and decoding outcomes -- are cpu - own - store - looking -
/// waiting).
void cp_plan_mpi_rank0_times(cp_plan_mpi_rank0 *t);

/// This rank's waits for a message with nothing else to do (a worker's for
/// its next job, rank 0's for a batch's last answers or a benchmark's
/// runs; docs/parallel.md, "Waiting for messages"), summed since
/// cp_plan_mpi_start; wall-clock seconds (the monotonic clock).
typedef struct cp_plan_mpi_waits {
  long long waits;   ///< waits whose first look found no message
  double wall;       ///< their span
  double polling;    ///< of which polling MPI_Iprobe without sleeping
  long long naps;    ///< sleeps between polls
  double nap_wall;   ///< the sleeps' span, as slept (timer slack included)
  long long jobs;    ///< a worker: the jobs it ran (rank 0: 0)
  double job_cpu;    ///< a worker: their thread-CPU seconds (decoding,
                     ///< simulating, encoding the outcome)
  double sending;    ///< a worker: wall seconds in sending the outcomes
                     ///< (handing them to MPI, and completing a slot's
                     ///< earlier send before it is reused)
} cp_plan_mpi_waits;

/// This rank's waits so far (cp_plan_mpi_waits).
void cp_plan_mpi_wait_times(cp_plan_mpi_waits *w);

/// Independent items (e.g. the paper study's data sets, `complan experiment
/// paper --mpi`) spread over the ranks: rank 0 writes item i's request,
/// the rank that runs it turns the request into an answer, and rank 0 takes
/// the answers in whatever order they come (done stores them by i, so the
/// result does not depend on who ran what). Requests and answers are bytes
/// in this process's layout (one architecture per run, as for the jobs).
typedef struct cp_plan_mpi_items {
  int count;  ///< rank 0: items 0 .. count-1
  void *ctx;  ///< given to the three calls
  /// Rank 0: item i's request, malloc'd (*req; may be NULL when *len is 0).
  /// 0, or -1 with err.
  int (*request)(void *ctx, int i, void **req, size_t *len, cp_error *err);
  /// The rank that runs item i: its answer, malloc'd. 0, or -1 with err
  /// (a malformed request, no memory: the run ends; an item's own failure
  /// belongs in its answer).
  int (*work)(void *ctx, int i, const void *req, size_t len, void **ans,
              size_t *ans_len, cp_error *err);
  /// Rank 0: item i's answer. 0, or -1 with err (the run ends).
  int (*done)(void *ctx, int i, const void *ans, size_t len, cp_error *err);
  /// Rank 0: a signal handler's flag (cp_search_cancel; NULL: none). Once
  /// set, rank 0 stops waiting for answers and cp_plan_mpi_items_run fails
  /// (under mpirun, SIGTERM to every rank means a rank died or mpirun was
  /// stopped; the workers ignore it while they serve, so that rank 0 can
  /// say so before mpirun's SIGKILL).
  volatile sig_atomic_t *cancel;
} cp_plan_mpi_items;

/// Rank 0: runs every item, one per worker rank at a time (the next goes
/// to whichever answers first); alone (one rank) it runs them itself, one
/// after another. Rank 0 runs none itself while it has workers. 0, or -1
/// with err: a callback's error, a worker's (the rank and item named), or
/// MPI's. The workers are stopped by cp_plan_mpi_stop.
int cp_plan_mpi_items_run(const cp_plan_mpi_items *items, cp_error *err);

/// Ranks 1 ..: runs the items rank 0 sends (items->work) until rank 0 says
/// stop. SIGINT and SIGTERM are ignored while it serves (see cancel). 0, or -1 with err (an MPI failure or a malformed message).
int cp_plan_mpi_items_serve(const cp_plan_mpi_items *items, cp_error *err);

/// Ranks 1 ..: simulates rank 0's jobs (and searches its benchmark runs)
/// for task until rank 0 says stop. SIGINT and SIGTERM are ignored while
/// it serves: under mpirun they mean a rank failed or mpirun was stopped,
/// and rank 0 needs its workers alive for the second Open MPI gives it
/// before SIGKILL (a child exiting cuts that second short) to commit its
/// run as interrupted.
/// task NULL: this rank could not load the task (load_err says why); it
/// tells rank 0 so and waits for the stop. 0, or -1 with err (an MPI
/// failure or a malformed message).
int cp_plan_mpi_serve(const cp_task *task, const cp_error *load_err,
                      cp_error *err);

#ifdef __cplusplus
}
#endif

#endif
