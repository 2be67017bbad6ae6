/// \file planner/store/sequence.h
/// Writes an executed assembly sequence (planner/sequence/sequence.h) to the
/// planner's database, next to the plans of its phases (each phase is an
/// ordinary stored plan: tasks, searches, nodes, plans). Three tables of
/// the store's schema (version 3, planner/store/schema.c; a version-2 file
/// is migrated on its first write, its phases read from the plans' task
/// names, and read as it is when opened read-only):
///
///   assembly_sequences(id, created, task, status, parts, part_order,
///       final_position_error, final_angle_error, seconds, lcp_solves,
///       plans, message, backtracks)
///   assembly_stages(sequence_id -> assembly_sequences.id, stage, part,
///       certified, grasp (JSON), regrasps, attempts, plan_ids (JSON
///       array, one per phase), stability, position_error, angle_error)
///   assembly_phases(plan_id -> plans.id, sequence_id, stage, step (index
///       in plan_ids), part, move, phase)
///
/// docs/assembly.md gives every column's meaning.
#ifndef CP_PLANNER_STORE_SEQUENCE_H
#define CP_PLANNER_STORE_SEQUENCE_H

#include <stdint.h>

#include "models/error.h"
#include "planner/store/store.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cp_store_sequence_row {
  const char *task;          ///< the task file as given
  const char *status;        ///< "solved", "none", "limit", "failed"
  int parts;
  const char *order;         ///< JSON array of part names
  double final_position_error, final_angle_error, seconds;
  long long lcp_solves;
  long plans;
  const char *message;       ///< NULL or why
  int backtracks;            ///< placed stages taken back by the order search
} cp_store_sequence_row;

typedef struct cp_store_stage_row {
  const char *part;
  int certified;
  const char *grasp;         ///< JSON object
  int regrasps, attempts;
  const char *plan_ids;      ///< JSON array
  const char *phases;        ///< JSON array of phase names parallel to
                             ///< plan_ids (NULL: each plan's phase "?")
  const char *stability;
  double position_error, angle_error;
} cp_store_stage_row;

/// Stores one sequence and its stages in one transaction. Returns 0 with
/// the new id in *id (may be NULL), or -1 with err (CP_ERR_IO, the message
/// naming the table and SQLite's reason).
int cp_store_sequence(cp_store *st, const cp_store_sequence_row *row,
                      const cp_store_stage_row *stages, int n_stages,
                      int64_t *id, cp_error *err);

/// A stored sequence read back (cp_store_sequence_read): what the replay
/// of the whole sequence needs. Owned arrays; free with
/// cp_store_sequence_info_free.
typedef struct cp_store_stage_info {
  char *part;                ///< part name
  int certified;
  char *stability;           ///< NULL when not certified
  int n_plans;
  int64_t *plan_ids;         ///< [n_plans] the phase plans in order
  char **phases;             ///< [n_plans] each plan's phase name ("?":
                             ///< not known)
  int *moves;                ///< [n_plans] each plan's move (0, 1, ...; the
                             ///< moves before the last set the part down
                             ///< for a regrasp)
  double position_error, angle_error; ///< NaN when not certified
} cp_store_stage_info;

typedef struct cp_store_sequence_info {
  int64_t id;
  char *task;                ///< the task file as given
  char *status;              ///< "solved", "none", "limit", "failed"
  int parts;
  double final_position_error, final_angle_error; ///< NaN unless solved
  int n_stages;
  cp_store_stage_info *stages;
} cp_store_sequence_info;

/// Reads sequence id (<= 0: the latest one) and its stages. Returns 0, or
/// -1 with err: CP_ERR_INPUT when the database holds no sequences, no
/// sequence id, or a stage whose plan_ids is not a JSON array of positive
/// integers (err->where "assembly_stages"); CP_ERR_IO when SQLite fails;
/// CP_ERR_NOMEM. *out is zeroed on failure.
int cp_store_sequence_read(cp_store *st, int64_t id, cp_store_sequence_info *out, cp_error *err);
void cp_store_sequence_info_free(cp_store_sequence_info *info);

#ifdef __cplusplus
}
#endif
#endif
