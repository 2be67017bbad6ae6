/// \file planner/replay/sequence_run.h
/// An assembly task run end to end, as `complan assemble TASK` does it
/// (docs/assembly.md, "Assembly tasks"): the task parsed, the sequence
/// planned and executed (planner/sequence/sequence.h) with its phase plans
/// in the planner database, every certified phase plan re-simulated and
/// compared bitwise (planner/replay/replay.h), the sequence stored
/// (planner/store/sequence.h), and the result document built: the JSON text
/// of `assemble TASK --json`. Nothing is printed; messages are kept on the
/// result and in cp_error.
#ifndef CP_PLANNER_REPLAY_SEQUENCE_RUN_H
#define CP_PLANNER_REPLAY_SEQUENCE_RUN_H

#include <stddef.h>
#include <stdint.h>

#include "models/error.h"
#include "planner/sequence/sequence.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cp_sequence_run_options {
  /// The task's file: a relative "assembly" scene path resolves from it,
  /// and it names the run in the database (sequence_runs.task). NULL
  /// (default): the scene path resolves from the working directory.
  const char *path;
  /// The run's name in the database when path is NULL (default "(task)").
  const char *label;
  /// 1 (default): re-simulate every certified phase plan and compare it
  /// bitwise with the stored nodes ("replay_verified"); 0: skip it
  /// ("replay_verified": null).
  int verify;
  /// The page of the whole sequence (planner/replay/sequence_replay.h) is
  /// written here after the sequence is stored (NULL, the default: none).
  /// The file is tried for writing before anything is planned (BAD_OUTPUT
  /// then, nothing planned or stored); a sequence without a certified
  /// stage has nothing to show and writes no page (page_written 0).
  const char *html;
} cp_sequence_run_options;

cp_sequence_run_options cp_sequence_run_defaults(void);

typedef enum cp_sequence_run_status {
  CP_SEQUENCE_RUN_ANSWERED = 0,  ///< solved, or no sequence exists
  CP_SEQUENCE_RUN_UNDECIDED,     ///< time limit, failure, a plan that does not replay, storing failed
  CP_SEQUENCE_RUN_BAD_TASK,      ///< the task does not parse (err: where = the JSON path)
  CP_SEQUENCE_RUN_BAD_STORE,     ///< the database cannot be opened (err.msg names it)
  CP_SEQUENCE_RUN_BAD_OUTPUT     ///< the page cannot be written (err.msg names the file)
} cp_sequence_run_status;

typedef struct cp_sequence_run_result {
  /// The result document (one line, numbers with 17 significant digits,
  /// no newline); free() it. NULL when the status is BAD_TASK or BAD_STORE,
  /// or when it could not be built for want of memory (then err says so).
  char *json;
  cp_sequence_status sequence;  ///< the sequence planner's status
  int parts;                    ///< the task's parts
  int verified;                 ///< every phase plan replayed (1 when verify is off)
  char why[700];                ///< when not verified: which plan and why
  int64_t sequence_id;          ///< the stored sequence, or -1
  int store_failed;             ///< 1: storing the sequence failed (store_error says why)
  cp_error store_error;
  cp_error plan_error;          ///< sequence == CP_SEQUENCE_FAILED: why
  int page_written;             ///< 1: the page is at opt->html
} cp_sequence_run_result;

/// Runs the task text (len bytes) with the planner database db (created
/// when missing). Returns the status; out is always set (out->json NULL
/// unless a document was built). err: BAD_TASK / BAD_STORE, or the
/// document's allocation failure.
cp_sequence_run_status cp_sequence_run(const char *text, size_t len, const char *db,
                                       const cp_sequence_run_options *opt,
                                       cp_sequence_run_result *out, cp_error *err);

#ifdef __cplusplus
}
#endif

#endif
