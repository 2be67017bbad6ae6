/// \file planner/store/store.h
/// The planner's SQLite database (docs/database.md): tasks, searches (the
/// issue's "runs": OMPL's benchmark layout owns the table name `runs`),
/// every explored node, plans, and OMPL's benchmark tables (experiments,
/// plannerConfigs, runs, progress, enums).
///
/// Schema version CP_STORE_SCHEMA_VERSION in PRAGMA user_version and
/// application_id 0x43504c4e ("CPLN"); a database of another version, or
/// another application's, is refused (CP_STORE_BAD_FILE). Journal mode WAL,
/// foreign keys on, synchronous NORMAL (a committed transaction survives the
/// process being killed), a busy timeout so a second process waits, then
/// gets CP_STORE_BUSY with a clear message. Statements are prepared once and
/// reused; each cp_store_write_batch is one transaction.
///
/// The store reads search results and writes rows; it never simulates.
///
/// Ownership: a cp_store owns its sqlite3 handle and statements; the message
/// of the last failure is kept on the handle (cp_store_message). No function
/// prints.
#ifndef CP_PLANNER_STORE_H
#define CP_PLANNER_STORE_H

#include <jansson.h>
#include <stddef.h>
#include <stdint.h>

#include "planner/search/search.h"
#include "planner/search/task.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CP_STORE_SCHEMA_VERSION 4
#define CP_STORE_APPLICATION_ID 0x43504c4e

typedef enum cp_store_status {
  CP_STORE_OK = 0,
  CP_STORE_BAD_FILE,   ///< not SQLite, another schema version or application
  CP_STORE_BUSY,       ///< another process holds the database
  CP_STORE_IO,         ///< cannot write: read-only file, disk full, I/O
  CP_STORE_NOT_FOUND,  ///< no such run / plan
  CP_STORE_NOMEM,
  CP_STORE_CHANGED,    ///< a resume whose inputs changed (message: which)
  CP_STORE_FAILED       ///< any other SQLite failure (message says which)
} cp_store_status;

typedef struct cp_store cp_store;

/// Opens (read_only = 0: creating it when absent) a database and checks or
/// creates the schema. On failure *out is NULL and msg (size bytes) says why
/// and names the file.
///
/// Writing (read_only = 0): the file must be a regular file or absent. In
/// one transaction taken before anything is read (BEGIN IMMEDIATE, which
/// waits for another writer under the busy timeout), a new or empty file
/// gets the whole schema and complan's stamp; a schema-version-1 file is
/// migrated; an unstamped file holding only assembly_* tables (written by
/// an older `complan assemble`) is adopted; a complan file passes PRAGMA
/// quick_check first. Then the journal switches to WAL, retried for the
/// busy timeout. Anything else (another application's file, another
/// version, a damaged file) is refused with CP_STORE_BAD_FILE and left as
/// it was. Reading: versions 1 and 2 are read as they are.
cp_store_status cp_store_open(const char *path, int read_only,
                              cp_store **out, char *msg, size_t size);
/// The store's SQLite handle, for the planner's other table writers
/// (planner/store/assembly.c): they use the tables of this schema and their
/// own transactions, never PRAGMAs.
struct sqlite3 *cp_store_sqlite(cp_store *st);
void cp_store_close(cp_store *st);
const char *cp_store_message(const cp_store *st);
/// Seconds spent inside the store's writes so far.
double cp_store_seconds(const cp_store *st);
/// How long this connection waits for another process's lock before a
/// write fails with CP_STORE_BUSY (seconds; 60 by default, capped at a day;
/// 0 fails at once). Opening waits the default.
void cp_store_set_busy_timeout(cp_store *st, double seconds);
/// Calls fn(ctx) about every `every` steps of SQLite's virtual machine
/// while this connection runs a statement (a batch's inserts: a few
/// microseconds apart), until called again with fn NULL. For a caller
/// that must keep answering others while it writes (planner/plan/mpi.c:
/// rank 0 collects the workers' answers during its commit). fn must not
/// use the store; it cannot stop the statement. Not within one step: the
/// writing of a commit's pages and a checkpoint are one step each.
void cp_store_set_progress(cp_store *st, int every, void (*fn)(void *ctx),
                           void *ctx);

/// The WAL's growth, in pages, between two checkpoints by the store's
/// helper thread (the default of a file opened for writing).
#define CP_STORE_CHECKPOINT_PAGES 1000

/// Where the WAL is checkpointed (its pages copied into the database file,
/// with an fsync of each: 10-40 ms). pages > 0: not by the writing
/// connection's commits but by a helper thread with a connection of its
/// own, started at the first checkpoint due, which runs a PASSIVE
/// checkpoint (commits go on meanwhile) whenever the WAL has grown by
/// `pages` since the last one, and a RESTART checkpoint (it holds the
/// writer off while it copies what is left and syncs) once the WAL has
/// reached 8 x `pages` without starting again (waiting 0.1 s at most for
/// the writer and for other connections' readers; retried after `pages`
/// more when that was not enough). pages <= 0: SQLite's own
/// rule, a checkpoint inside the commit that takes the WAL past 1000
/// pages. Either way a committed transaction survives the process being
/// killed, and cp_store_close (the helper's connection closed first)
/// leaves the whole database in its file, the WAL removed, when no other
/// connection has the file open. Nothing for an in-memory store. A store
/// opened for writing starts with CP_STORE_CHECKPOINT_PAGES. A process
/// that fork()s with a store open should choose pages <= 0 for it.
cp_store_status cp_store_set_checkpoints(cp_store *st, int pages);

/// What the helper thread has done (all zero without one).
typedef struct cp_store_checkpoint_stats {
  long passive;   ///< PASSIVE checkpoints done
  long restarts;  ///< RESTART checkpoints done (the WAL grew to 8 x pages)
  long failed;    ///< checkpoints that found the file busy or failed
  long copied;    ///< WAL pages found checkpointed at their ends, summed
  int wal_max;    ///< the largest WAL seen after a commit (pages)
  double seconds; ///< wall seconds inside the helper's checkpoints
  double cpu;     ///< the helper's CPU seconds in them (the rest: I/O)
} cp_store_checkpoint_stats;
void cp_store_checkpoints(cp_store *st, cp_store_checkpoint_stats *out);
/// Returns once no checkpoint is asked for or under way on the helper
/// (tests; the writer never needs to wait).
void cp_store_checkpoint_wait(cp_store *st);

/// The task row for these inputs (cp_task_hash: the task text and every
/// file it was built from), inserted when new together with the bytes of
/// every file (table blobs, each content once) and their list (task_files),
/// in one transaction. Returns its id in *task_id.
cp_store_status cp_store_task(cp_store *st, const cp_task *task,
                              const char *path, int64_t *task_id);

/// A file stored with a task (a cp_task_file read back): kind, path as the
/// loader asked for it, the bytes (NUL appended) and their SHA-256, checked
/// when read.
typedef struct cp_store_file {
  char kind[8];
  char *path;
  char *data;
  size_t size;
  char sha256[65];
} cp_store_file;

/// The files stored with task_id in reading order (*files malloc'd: free
/// with cp_store_files_free); none for a task from a version-1 database. A
/// file whose bytes are missing or do not hash to their SHA-256 is
/// CP_STORE_BAD_FILE.
cp_store_status cp_store_task_files(cp_store *st, int64_t task_id,
                                    cp_store_file **files, int *n);
void cp_store_files_free(cp_store_file *files, int n);

/// Before starting a fresh run under --resume when task_id has no run to
/// resume: CP_STORE_CHANGED, the message naming the first input that
/// differs (the task text, the scene, a URDF or a mesh file), when a
/// resumable run exists for the same task text or task path but other
/// inputs; CP_STORE_OK when none does.
cp_store_status cp_store_resume_check(cp_store *st, const cp_task *task,
                                      const char *path, int64_t task_id);

/// A search run being started: planner, options (JSON text: search and
/// world options), seed, state size. The run's status is "running".
cp_store_status cp_store_run_begin(cp_store *st, int64_t task_id,
                                   const char *planner, const char *options,
                                   uint64_t seed, int state_size,
                                   int64_t *run_id);

/// A search run being started, in one transaction with the search's journal
/// (the start node): a run in the database always has its start node, so a
/// process killed at any moment leaves a run that --resume continues.
/// The planner is the search's; the status "running".
cp_store_status cp_store_run_start(cp_store *st, int64_t task_id,
                                   const char *options, uint64_t seed,
                                   const cp_task *task, cp_search *search,
                                   int64_t *run_id);

/// A stored run as read back for resume and listing.
typedef struct cp_store_run {
  int64_t id, task_id;
  char planner[16];
  char status[16];
  char *options;          ///< JSON text (owned by the caller: free())
  uint64_t seed;
  int state_size;
  double seconds;         ///< search time over all sessions
  cp_rng rng;
  int has_rng;
  cp_search_stats stats;
  long nodes;
} cp_store_run;

/// A session more for run_id (searches.sessions + 1): called when a run is
/// resumed.
cp_store_status cp_store_run_resumed(cp_store *st, int64_t run_id);

/// The latest run of task_id whose status is "running", "limit" or
/// "interrupted" and whose planner is complan's (an OMPL planner's run,
/// "ompl:...", keeps no state to resume from); CP_STORE_NOT_FOUND when
/// none.
cp_store_status cp_store_find_resumable(cp_store *st, int64_t task_id,
                                        int64_t *run_id);
cp_store_status cp_store_load_run(cp_store *st, int64_t run_id,
                                  cp_store_run *run);
/// The whole store as bytes (SQLite's serialisation of its main file; an
/// in-memory store's too), in *bytes (malloc'd: free()) of *len bytes.
cp_store_status cp_store_export(cp_store *st, void **bytes, size_t *len);
/// cp_store_export of what cp_store_import_run reads, for a store about to
/// be closed: its tasks' texts, scenes and input files are emptied in place
/// first (the tasks rows stay, so the runs still name them) and the file
/// compacted. MPI benchmark workers send their runs so (planner/plan/mpi.c):
/// rank 0 has the task already.
cp_store_status cp_store_export_runs(cp_store *st, void **bytes, size_t *len);
/// Copies run `from` of a store exported by cp_store_export (the same
/// schema version, else CP_STORE_BAD_FILE) into st as a new run of task_id
/// (a task st has, from cp_store_task), with its nodes, witnesses, pending
/// batch (pipelined runs: what --resume continues from) and plans, in one
/// transaction: *run_id its id in st (the next free one),
/// *plan_id that of its last plan (-1: none). MPI benchmarks
/// (planner/plan/mpi.c) bring the ranks' runs into rank 0's store so.
cp_store_status cp_store_import_run(cp_store *st, const void *bytes,
                                    size_t len, int64_t from, int64_t task_id,
                                    int64_t *run_id, int64_t *plan_id);
/// Calls fn for every node of the run in id order (x: state_size doubles;
/// warm: its warm-start blob, NULL when none). fn returns 0 to go on, else
/// the load stops with CP_STORE_FAILED.
cp_store_status cp_store_load_nodes(cp_store *st, int64_t run_id,
                                    int (*fn)(void *ctx,
                                              const cp_search_node *node,
                                              const double *x,
                                              const void *warm,
                                              size_t warm_size),
                                    void *ctx);

/// Calls fn for every witness of the run (sst) in id order: its point (m
/// numbers) and representative node (-1 when none). fn returns 0 to go
/// on, else the load stops with CP_STORE_BAD_FILE naming the witness.
cp_store_status cp_store_load_witnesses(
    cp_store *st, int64_t run_id,
    int (*fn)(void *ctx, long id, const double *point, int m, long rep),
    void *ctx);

/// A pipelined run's pending batch at its last commit (table
/// pending_batches): fn gets its iteration count, embedding size, data and
/// rng (NULL when none; as cp_search_pending_save gave them) and returns 0, else the load
/// fails with CP_STORE_BAD_FILE. CP_STORE_NOT_FOUND when the run has none
/// (an unpipelined run, or one stored before schema version 4), with no
/// message.
cp_store_status cp_store_load_pending(
    cp_store *st, int64_t run_id,
    int (*fn)(void *ctx, long iters, int m, const void *data, size_t size,
              const cp_rng *rng),
    void *ctx);

/// One node of a run: its record, its state (x: cap doubles, may be NULL)
/// and its action's input values (values: cap_v doubles, may be NULL; *n_v
/// receives their count, 0 for the start). A state blob that is not the
/// run's state_size doubles, and with values an input blob that is not
/// cap_v doubles (pass the task's input count), an unknown outcome: each is
/// CP_STORE_BAD_FILE naming the node (a damaged database). node->message is
/// the store's, valid until the next call.
cp_store_status cp_store_load_node(cp_store *st, int64_t run_id, long id,
                                   cp_search_node *node, double *x, int cap,
                                   double *values, int cap_v, int *n_v);

/// The run's progress written with a batch.
typedef struct cp_store_progress {
  const char *status;     ///< "running", "solved", "not_found", "limit",
                          ///< "error", "interrupted", "failed_expansions"
  double seconds;         ///< search time over all sessions
  /// The totals and generator state written with the run (NULL: the
  /// search's own): the plan loop commits a batch while the next one is
  /// simulated, with the search's totals as they were after the batch.
  const cp_search_stats *stats;
  const cp_rng *rng;
  /// A pipelined search's pending batch, written with the run (table
  /// pending_batches): pending_iters iterations in pending_size bytes as
  /// cp_search_pending_save writes them. NULL: the search's own, saved at
  /// the commit (the plan loop passes the one saved with rng).
  const void *pending;
  size_t pending_size;
  long pending_iters;
} cp_store_progress;

/// One transaction: the search's journal (new nodes, flag changes), the
/// run's status, totals and generator state; clears the journal on success.
/// With plan_node >= 0 also inserts the plan ending at that node (its id in
/// *plan_id, may be NULL).
cp_store_status cp_store_write_batch(cp_store *st, int64_t run_id,
                                     const cp_task *task, cp_search *search,
                                     const cp_store_progress *progress,
                                     long plan_node, int64_t *plan_id);

/// Every run and plan as JSON: {"runs": [{"id", "task_id", "task_hash",
/// "planner", "status", "seed", "seconds", "nodes", "expansions",
/// "lcp_solves", "plans": [{"id", "node", "cost", "length"}]}]}.
cp_store_status cp_store_list(cp_store *st, json_t **out);

/// A stored task as written by cp_store_task: its text, the scene's JSON
/// text, the scene's folder ("" when none) and the task file's path (""
/// when none); each malloc'd (free them). For replay, which rebuilds the
/// task from these rather than from files that may have changed.
typedef struct cp_store_task_row {
  char *text, *scene, *scene_dir, *path;
  int inputs_stored;      ///< 1: every file is in cp_store_task_files; 0: a
                          ///< task from schema version 1 (files on disk)
} cp_store_task_row;
cp_store_status cp_store_load_task(cp_store *st, int64_t task_id,
                                   cp_store_task_row *row);
void cp_store_task_row_free(cp_store_task_row *row);

/// The nodes of a plan, start first (ids into the run's nodes): *ids is
/// malloc'd (free it), *n its length.
cp_store_status cp_store_plan_nodes(cp_store *st, int64_t plan_id,
                                    int64_t *run_id, long **ids, long *n);

/// OMPL benchmark rows (tables experiments, plannerConfigs, runs,
/// progress, enums with OMPL's column names plus complan's).
typedef struct cp_bench_run {
  int64_t search_id;      ///< the complan search (searches.id)
  double time, memory;    ///< s, MB
  int status;             ///< OMPL planner status enum (6 exact, 4 timeout,
                          ///< 5 approximate, 0 unknown)
  int solved;
  long graph_states;
  double solution_length; ///< actions in the plan (NULL when unsolved)
  double best_cost;
  long expansions, lcp_solves, lemke_pivots, fallbacks, steps, duplicates,
      rejected;
  double best_distance;
} cp_bench_run;

cp_store_status cp_store_bench_experiment(cp_store *st, const char *name,
                                          const char *setup, double timelimit,
                                          int runcount, uint64_t seed,
                                          int64_t *experiment_id);
cp_store_status cp_store_bench_planner(cp_store *st, const char *name,
                                       const char *settings,
                                       int64_t *planner_id);
cp_store_status cp_store_bench_run(cp_store *st, int64_t experiment_id,
                                   int64_t planner_id, const cp_bench_run *r,
                                   int64_t *run_id);
/// One point of a run's progress: time (s), best cost (NaN: none yet),
/// nodes and expansions so far.
cp_store_status cp_store_bench_progress(cp_store *st, int64_t run_id,
                                        double time, double best_cost,
                                        long nodes, long expansions,
                                        double best_distance);
/// Per-planner means of an experiment, read from OMPL's tables:
/// {"experiment": id, "planners": [{"planner", "runs", "solved", "time",
/// "best_cost" (solved runs), "graph_states", "expansions", "lcp_solves",
/// "simulation_steps"}]}.
cp_store_status cp_store_bench_summary(cp_store *st, int64_t experiment_id,
                                       json_t **out);
cp_store_status cp_store_bench_finish(cp_store *st, int64_t experiment_id,
                                      double totaltime);

#ifdef __cplusplus
}
#endif
#endif
