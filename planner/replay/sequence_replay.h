/// \file planner/replay/sequence_replay.h
/// A stored assembly sequence replayed whole (`complan replay --sequence
/// ID`, docs/assembly.md "Replaying a sequence"): every phase plan of every
/// certified stage, in order, re-simulated from the database with
/// planner/replay/replay.h, and the phases checked to chain: each phase
/// starts bitwise in the state where the sequence left every body it holds
/// (the placed parts, the carried part) and, inside one move of a part,
/// where the previous phase left the gripper's joints. A new move starts
/// the gripper afresh above its part (docs/assembly.md, "The phases"), so
/// its joints are not compared there.
///
/// With a page path, the whole sequence is also drawn as one viewer page
/// (planner/view/viewer.h): the fixed bodies and every part (parts not yet
/// handled wait at their first poses, placed ones stand where the
/// simulation left them), the gripper's two fingers drawn as boxes (hidden
/// between moves), and a note per phase naming the stage, the part and the
/// phase, the certified stage's verdict and pose error from its release
/// on. The page's time runs on across phases.
///
/// Nothing here prints. The store is borrowed.
#ifndef CP_PLANNER_REPLAY_SEQUENCE_REPLAY_H
#define CP_PLANNER_REPLAY_SEQUENCE_REPLAY_H

#include <stdint.h>

#include "models/error.h"
#include "planner/replay/replay.h"
#include "planner/store/store.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cp_sequence_replay_options {
  int verify;             ///< compare every node with the stored one (0 = off)
  double tolerance;       ///< deviation allowed by verify (default 0: bitwise)
  const char *html;       ///< write the page of the whole sequence (NULL: no page)
  const char *title;      ///< the page's title (NULL: "complan replay: sequence ID")
} cp_sequence_replay_options;

cp_sequence_replay_options cp_sequence_replay_defaults(void);

typedef struct cp_sequence_replay_result {
  int64_t sequence_id;    ///< the sequence replayed
  int stages;             ///< its stages (certified or not)
  int plans;              ///< phase plans replayed
  long steps;             ///< simulation steps re-simulated
  double duration;        ///< simulated time, all phases (s)
  double max_deviation;   ///< largest node deviation (verify)
  int verified;           ///< 1: every plan as stored (verify), -1 not compared
  int chained;            ///< 1: every phase starts where the last left its bodies and joints
  int64_t first_plan;     ///< the first plan that failed a check (0: none)
  int frames;             ///< frames on the page (0 without one)
  char message[700];      ///< what failed
} cp_sequence_replay_result;

/// Replays sequence id (<= 0: the latest). Returns OK, MISMATCH (a plan does
/// not replay as stored, or two phases do not chain: res->message says
/// which), FAILED (a plan could not be re-simulated, the store failed),
/// BAD_INPUT (no such sequence, a damaged row, a page that cannot be
/// written: err says which, err->where naming the table or the page's
/// file) or NOMEM. The page is written only after a complete replay, and
/// then whole or not at all.
cp_replay_status cp_sequence_replay(cp_store *st, int64_t id, const cp_sequence_replay_options *opt,
                                    cp_sequence_replay_result *res, cp_error *err);

/// The stored phase of every plan of sequence id (<= 0: the latest), in
/// replay order, as JSON text: [{"plan", "stage", "part", "move",
/// "phase"}] (planner/store/sequence.h, assembly_phases). malloc'd (free
/// it); NULL with err when the sequence cannot be read.
char *cp_sequence_phases_json(cp_store *st, int64_t id, cp_error *err);

#ifdef __cplusplus
}
#endif
#endif
