/// \file planner/cli/output.h
/// Small helpers shared by the command-line front ends: reading input files,
/// printing errors in the one format complan uses, and emitting JSON.
///
/// Error format (stderr): `complan: FILE: WHERE: WHAT`, exit status 2.
#ifndef CP_PLANNER_OUTPUT_H
#define CP_PLANNER_OUTPUT_H

#include <jansson.h>
#include <stddef.h>
#include "models/error.h"
#include "models/scene.h"
#include "planner/store/store.h"

/// Exit statuses of docs/outputs.md
enum { CP_EXIT_ANSWERED = 0, CP_EXIT_UNDECIDED = 1, CP_EXIT_BAD_INPUT = 2 };

/// Reads a whole file into a NUL-terminated malloc'd buffer. On failure
/// prints `complan: PATH: cannot open PATH: REASON` (or `cannot read`: the
/// message of cp_read_file, models/error.h) and returns NULL.
char *cp_cli_read_file(const char *path, size_t *len);

/// As cp_cli_read_file, with the exit status of a failure: 0 (read), 2
/// (cannot read) or 1 (out of memory, not the input's fault).
int cp_cli_read_input(const char *path, char **text, size_t *len);

/// The exit status of a failure with err: 1 when its code is CP_ERR_NOMEM
/// (not the input's fault), else 2 (bad input, or a file that cannot be
/// read or written: docs/outputs.md).
int cp_cli_exit_of(const cp_error *err);

/// Prints `complan: FILE: WHERE: MSG` (WHERE omitted when empty); returns
/// cp_cli_exit_of(err).
int cp_cli_input_error(const char *file, const cp_error *err);

/// Prints the scene loader's warnings (input accepted despite URDF habits,
/// e.g. revolute limits 0..0) on stderr, one `complan: FILE: warning: W`
/// line each: diagnostics, never on stdout, so --json output is unchanged.
void cp_cli_scene_warnings(const char *file, const cp_scene *scene);

/// Opens the planner database for a command (read_only: it must exist, and
/// `complan: DB: no such database (REASON)` otherwise). Returns 0 with *st
/// open, or the exit status after printing the store's message: 2 for a
/// file that is not a complan database of this version, 1 for I/O.
int cp_cli_open_store(const char *db, int read_only, cp_store **st);

/// The name of a body ("box") or link ("arm/finger") for printing, however
/// long: in one of CP_CLI_NAME_SLOTS buffers of the command line (slot
/// 0..3, so that a printf can show two or more at once), valid until the
/// next call with the same slot. Out of memory: "(name: out of memory)",
/// counted as a failed allocation of the JSON document being built
/// (cp_json_print then refuses it: no document with a wrong name).
enum { CP_CLI_NAME_SLOTS = 4 };
const char *cp_cli_ref_name(const cp_scene *s, cp_ref r, int slot);
/// "MANIP/JOINT" of joint k of chain m, as cp_cli_ref_name.
const char *cp_cli_joint_name(const cp_scene *s, int m, int k, int slot);

/// Prints `complan: MSG` for usage errors and a hint to --help; returns 2.
int cp_cli_usage_error(const char *cmd, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/// A JSON array of n doubles; non-finite entries become null.
json_t *cp_json_vec(const double *v, int n);

/// A JSON number, or null when not finite.
json_t *cp_json_num(double x);

/// Prints one JSON document on stdout (17 significant digits, newline):
/// the whole document or nothing. Returns 0, or -1 (with "out of memory
/// writing the JSON document" on stderr) if it could not be serialised or
/// if a jansson allocation failed since cp_cli_output_begin (the document
/// may then lack keys: jansson drops them silently).
int cp_json_print(json_t *doc);

/// SIGINT and SIGTERM call on_signal once (it sets a cancel flag); the
/// handler resets itself, so that a second signal ends the process at once.
void cp_cli_catch_signals(void (*on_signal)(int));
/// SIGINT and SIGTERM back to their default.
void cp_cli_release_signals(void);

/// Marks the start of a command for cp_json_print (called by cp_cli_main).
void cp_cli_output_begin(void);

/// Sends GLPK's terminal output to stderr (it is dropped otherwise; stdout
/// only ever holds the command's own output): `--verbose` of every command
/// that solves.
void cp_cli_verbose(void);

#endif
