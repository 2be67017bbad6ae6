/// \file tests/planner/synth.h
/// Synthetic search problems for the planner tests (no simulation): a grid
/// world with walls whose optimum can be enumerated (Dijkstra), and a point
/// in the unit square moved by fixed displacements. Both report blocked
/// moves as rejected outcomes (out_of_bounds), like a world would.
#ifndef CP_TESTS_PLANNER_SYNTH_H
#define CP_TESTS_PLANNER_SYNTH_H

#include "planner/search/search.h"
#include "planner/search/task.h"

/// Grid W x H, walls marked '#' in rows (row 0 at y = 0); the start and goal
/// are cells. Actions: +x, -x, +y, -y, costs cost[4].
typedef struct synth_grid {
  int w, h;
  const char *const *rows;
  int start[2], goal[2];
  double cost[4];
  long expand_calls;
  int delay_us;        ///< sleep per expansion (kill-and-resume tests)
} synth_grid;

/// The 10 x 10 maze of the search and store tests: start (0, 0), goal
/// (4, 4), action costs 1.0, 1.3, 0.7, 2.1.
synth_grid synth_maze_grid(void);

/// The problem over a grid (ctx = g).
cp_search_problem synth_grid_problem(synth_grid *g);

/// Independent optimum by Dijkstra over the cells; INFINITY when none.
double synth_grid_dijkstra(const synth_grid *g);

/// A point in [0,1]^2 from (0.1, 0.1) to the disc of radius 0.06 around
/// (0.9, 0.9), moves of 0.05 in 8 directions (cost 1 each; diagonals
/// sqrt 2), a wall x in [0.45, 0.55], y < 0.7 rejecting moves into it.
typedef struct synth_point {
  long expand_calls;
} synth_point;

cp_search_problem synth_point_problem(synth_point *p);

/// Iterates s until it stops running or max_iter iterations were made.
cp_search_status synth_run(cp_search *s, long max_iter);

/// Test helpers over a planner database (sqlite3 *): the integer result of
/// a one-row query (asserting it runs), and a digest of the committed node
/// rows with id < n (id, parent, cost, state bits), asserting there are n.
struct sqlite3;
long long synth_query_int(struct sqlite3 *db, const char *sql);
/* The rows of query in db as text, one line each (free()). */
char *synth_rows_text(struct sqlite3 *db, const char *query);
unsigned long long synth_rows_digest(struct sqlite3 *db, long long n);

/// A task whose inline scene has a free box and a one-joint finger ("f/j");
/// its input has 8 values so that its action indices cover the synthetic
/// problems' (4 or 8 actions); storage batch 4.
extern const char synth_task_json[];
/// Parses synth_task_json into *t (asserting it parses).
void synth_load_task(cp_task *t);

/// Polls the database at path (every ms, up to `seconds`) until it holds
/// at least n node rows; returns it open (NULL when the file never
/// appeared), for tests that kill a run once batches are committed.
struct sqlite3 *synth_wait_nodes(const char *path, long long n,
                                 double seconds);

/// A fresh database path (no file yet: the store creates it; malloc'd), and
/// its removal with SQLite's -wal and -shm files (frees the path).
char *synth_temp_db(void);
void synth_remove_db(char *path);

/// Asserts that the sequence of the `assemble TASK --json` document doc,
/// stored in db, replays whole with `complan replay --sequence --verify`:
/// `plans` phase plans, verified bitwise, its phases chained.
void synth_assert_sequence_replays(const char *db, struct json_t *doc, long long plans);

/// Helpers of the parallel tests (threads, MPI): the push task
/// (planner/tasks/push.json, its scene path made absolute) with
/// search.batch `batch` and plain batches (search.pipeline false when
/// batch > 1), in a temporary file (malloc'd path); a database
/// opened with a busy timeout; a digest of a run's node rows, every column
/// but pivots (*n the count); and its plans ("node:cost:length", comma-
/// separated, "" when none).
char *synth_push_task(int batch);
/// The same with `extra` (e.g. "\"pipeline\": true") added to its search
/// object instead (NULL: nothing, so search.pipeline takes its default:
/// pipelined batches at batch > 1 with rrt and sst).
char *synth_push_task_with(int batch, const char *extra);
struct sqlite3 *synth_open_db(const char *path);
/// The store at path, opened by cp_store_open (asserted, with its message).
struct cp_store *synth_open_store(const char *path);
unsigned long long synth_run_digest(struct sqlite3 *db, long long run,
                                    long long *n);
void synth_plan_of(struct sqlite3 *db, long long run, char *out, size_t size);
/// Asserts that run ra of a and run rb of b have the same node rows
/// (synth_run_digest) and plans (`what` in the message); returns the node
/// count.
/// After a run `plan TASK --db DB --method sst --seed 4 --max-nodes 1500`
/// of the push task (s open on db) was killed: asserts it committed 100 to
/// 1499 nodes and no plan, resumes it (with `resume`, NULL: on one
/// thread, --json, status 0) and asserts it is then the same run, equal to
/// the uninterrupted run made on `threads` threads. Closes s, removes db
/// and task, frees both paths.
/// Runs `complan plan task --db db` (sst, seed 4, 1500 nodes, 2 threads)
/// in a child process and kills it (SIGKILL) once 100 nodes are committed;
/// asserts it was killed, and returns db opened (for
/// synth_killed_push_resumes).
struct sqlite3 *synth_kill_push_run(const char *task, const char *db);
void synth_killed_push_resumes(struct sqlite3 *s, char *task, char *db,
                               const char *threads,
                               void (*resume)(const char *task,
                                              const char *db));
long long synth_assert_same_run(struct sqlite3 *a, long long ra,
                                struct sqlite3 *b, long long rb,
                                const char *what);

#endif
