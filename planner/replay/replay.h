/// \file planner/replay/replay.h
/// Replay of stored plans (`complan replay`, docs/replay.md): the plan's
/// task is rebuilt from the database (the task text and the scene text stored
/// with it, not the files, which may have changed), and the plan's actions
/// are re-simulated one after the other from the stored start state.
///
/// Each action is simulated by the planner's own expansion
/// (cp_plan_world's search problem, planner/plan/plan.h) exactly as the search
/// did it: the state set to the (re-simulated) parent node's, the parent's
/// warm-start data (what the world held after the expansion that made the
/// parent; none for the start), the action's inputs held for
/// round(T / h) steps. So on the same build the re-simulated node states are
/// bitwise the stored ones; a difference means the database was changed, or
/// was made by another build or with other code or parameters.
///
/// Verification compares every re-simulated node state with the stored one:
/// the largest absolute deviation, and the first plan step whose deviation
/// exceeds the tolerance (0: any bit), with the body or joint and the state
/// component where it does.
///
/// Ownership: a cp_replay owns the rebuilt task, its world and the plan's
/// stored states; it borrows the store (which must outlive it). Messages
/// are kept in cp_error / on the result; nothing is printed.
#ifndef CP_PLANNER_REPLAY_H
#define CP_PLANNER_REPLAY_H

#include <stdint.h>
#include <stdio.h>

#include "models/error.h"
#include "planner/store/store.h"
#include "planner/search/task.h"
#include "planner/view/viewer.h"
#include "planner/sim/world.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cp_replay_status {
  CP_REPLAY_OK = 0,
  CP_REPLAY_MISMATCH,   ///< verification found a deviation over tolerance
  CP_REPLAY_FAILED,     ///< an action could not be re-simulated (rejected,
                        ///< solver failure), or the store failed
  CP_REPLAY_BAD_INPUT,  ///< no such plan, no plan at all, a task that no
                        ///< longer parses
  CP_REPLAY_NOMEM
} cp_replay_status;

typedef struct cp_replay cp_replay;

/// Opens plan plan_id (<= 0: the latest plan in the database) for replay.
/// On failure *err says why; its code: CP_ERR_IO when the store failed (the
/// message is the store's and names the database file), CP_ERR_NOMEM, or
/// CP_ERR_INPUT (no such plan, a stored task that no longer works: the
/// message does not name the file).
cp_replay_status cp_replay_open(cp_store *st, int64_t plan_id,
                                cp_replay **out, cp_error *err);
void cp_replay_close(cp_replay *r);

/// The rebuilt task (scene at the start state, goal, inputs).
const cp_task *cp_replay_task(const cp_replay *r);
int64_t cp_replay_plan_id(const cp_replay *r);
int64_t cp_replay_run_id(const cp_replay *r);
/// Actions in the plan.
long cp_replay_length(const cp_replay *r);

/// One simulation step of the replay, given to the observer.
typedef struct cp_replay_frame {
  long step;              ///< 0: the start state; then 1, 2, ...
  long plan_step;         ///< the action in force: 1..length (0 at start)
  long action;            ///< its index in the task (-1 at start)
  const double *values;   ///< its input values [n_values] (NULL at start)
  int n_values;
  double time;
  const double *state;    ///< [n] (cp_world_get_state layout)
  int n;
  int n_contacts;         ///< contacts of the step with forces (0 at start)
  const cp_world_contact *contacts;
} cp_replay_frame;

typedef struct cp_replay_options {
  int verify;             ///< compare with the stored node states
  double tolerance;       ///< deviation allowed (default 0: bitwise)
  /// Called for the start and after every simulation step (may be NULL).
  void (*frame)(void *ctx, const cp_replay_frame *f);
  void *ctx;
} cp_replay_options;

cp_replay_options cp_replay_defaults(void);

typedef struct cp_replay_result {
  long steps;             ///< simulation steps re-simulated
  double duration;        ///< simulated time (s)
  double max_deviation;   ///< largest |re-simulated - stored| over nodes
  long max_plan_step;     ///< where (0 when none)
  int compared;           ///< 1 when verification ran
  int verified;           ///< 1: every node within tolerance (bitwise at 0)
  long first_plan_step;   ///< first step over tolerance (0: none)
  int first_entry;        ///< its state index
  char first_where[160];  ///< 'body "box" x' or 'joint "finger/j1" position'
  double first_deviation;
  char message[512];      ///< what failed, for MISMATCH and FAILED
} cp_replay_result;

/// Re-simulates the plan (and verifies it when asked). Returns OK,
/// MISMATCH (res says where), FAILED (res->message) or NOMEM.
cp_replay_status cp_replay_run(cp_replay *r, const cp_replay_options *opt,
                               cp_replay_result *res);

/// The explored tree of the plan's run for the viewer: every node's goal
/// body position (points [3 n]), parents as indices into that list, and the
/// plan's nodes as indices. Arrays malloc'd (free them).
cp_replay_status cp_replay_tree(cp_replay *r, double **points, int **parent,
                                int *n, int **path, int *n_path,
                                cp_error *err);

/// Writes the CSV header for the task's scene (RFC 4180, planner/io/csv.h): t,
/// a column per state entry (planner/sim/statelayout.h: per free body NAME.x ..
/// NAME.wz, per joint row MANIP/JOINT.q MANIP/JOINT.qd; the `simulate --csv`
/// columns), then action and per input JOINT.input. Returns 0, or -1 when
/// out of memory. Header and rows come from the same layout: equal widths.
int cp_replay_csv_header(const cp_replay *r, FILE *f);
/// Writes one frame's row (numbers in %.17g: they read back exactly).
void cp_replay_csv_row(const cp_replay *r, const cp_replay_frame *fr,
                       FILE *f);

#ifdef __cplusplus
}
#endif
#endif
