/// \file planner/io/outfile.h
/// Atomic output files: every file complan writes (CSV trajectories, viewer
/// pages, experiment reports) is written to a temporary file next to its
/// target and renamed into place when complete, so the target is either
/// the whole new file or untouched -- never half-written.
///
/// - The temporary file is `PATH.XXXXXX` (six random letters and digits),
///   created exclusively (O_EXCL) in the target's folder, so the rename is
///   atomic on the same file system.
/// - It is created with mode 0666 less the process's umask, like any new
///   file of the user (umask 022: 0644, umask 027: 0640); no mode is forced.
///   A target that existed is replaced by the new file with that mode.
/// - Pending temporary files are kept in a cleanup list that a signal
///   handler can walk: cp_outfile_remove_pending() is async-signal-safe, and
///   cp_outfile_catch_signals() installs handlers for SIGINT, SIGTERM and
///   SIGHUP that remove them and then die of the signal as before. So an
///   interrupted command leaves neither its target nor a temporary file.
///
/// Test hook: when the environment variable COMPLAN_TEST_HOLD_OUTPUT names
/// a FIFO, cp_outfile_commit, with the whole content written to the
/// temporary file and before the rename, opens the FIFO for reading and
/// waits until its writer closes it -- a deterministic "long write" during
/// which a test can send a signal. Unset (always, outside tests) it costs
/// one getenv per file.
///
/// Not thread-safe for one cp_outfile; distinct ones may be used from
/// distinct threads (the cleanup list is lock-free). Nothing is printed.
#ifndef CP_PLANNER_OUTFILE_H
#define CP_PLANNER_OUTFILE_H

#include <stdio.h>

#include "models/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Pending temporary files at once (per process).
enum { CP_OUTFILE_MAX_PENDING = 32 };

typedef struct cp_outfile cp_outfile;

/// Creates the temporary file for path. Returns the handle, or NULL with
/// err->msg "PATH: cannot create: REASON" (code CP_ERR_IO; CP_ERR_NOMEM
/// with "out of memory", CP_ERR_INPUT for an empty path); a folder at path
/// is refused here ("Is a directory"), before anything is written.
cp_outfile *cp_outfile_open(const char *path, cp_error *err);

/// The stream to write to (buffered; errors stay on it until commit).
FILE *cp_outfile_stream(cp_outfile *o);

/// Flushes the stream, syncs the file to disk (fsync), closes it, renames
/// the temporary file to the target and frees o. Returns 0, or -1 with err->msg "PATH: cannot
/// write: REASON" (CP_ERR_IO: any write, close or rename error); the temporary file is
/// removed then and the target is untouched.
int cp_outfile_commit(cp_outfile *o, cp_error *err);

/// Closes and removes the temporary file, frees o (NULL: nothing).
void cp_outfile_discard(cp_outfile *o);

/// Writes text (len bytes) to path atomically: open, write, commit.
int cp_outfile_write_all(const char *path, const char *text, size_t len,
                         cp_error *err);

/// Removes every pending temporary file. Async-signal-safe (unlink only).
void cp_outfile_remove_pending(void);

/// Installs the cleanup handler for SIGINT, SIGTERM and SIGHUP where their
/// action is the default one (an ignored signal stays ignored; a handler
/// someone else installed stays, and may call cp_outfile_remove_pending).
/// The handler removes the pending files, restores the default action and
/// raises the signal again, so the process ends as it would have.
void cp_outfile_catch_signals(void);

#ifdef __cplusplus
}
#endif
#endif
