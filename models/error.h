/// \file models/error.h
/// The error record every parser and checker of complan fills: where the
/// problem is (a JSON path such as `bodies[1].mass`, or `line 7`) and what was
/// expected. The caller adds the file name when it prints the message.
#ifndef CP_MODELS_ERROR_H
#define CP_MODELS_ERROR_H

#ifdef __cplusplus
extern "C" {
#endif

/// What kind of failure an error record holds: the one error-code space of
/// complan (as SQLite's result codes). A caller decides what to do from the
/// code, never from the message text, which is for people.
typedef enum cp_error_code {
  CP_ERR_NONE = 0,     ///< no error (a cleared record)
  CP_ERR_INPUT,        ///< the input is wrong (the message says where and what)
  CP_ERR_NOMEM,        ///< out of memory
  CP_ERR_OVERLAP,      ///< bodies overlap beyond the scene's tolerance
  CP_ERR_IO,           ///< a file or the database could not be read or written
  CP_ERR_UNSUPPORTED,  ///< valid input that complan does not handle
  CP_ERR_NUMERICAL,    ///< a computation failed (singular, not finite, ...)
  CP_ERR_CODE_COUNT
} cp_error_code;

typedef struct cp_error {
  cp_error_code code; ///< the kind; CP_ERR_NONE when nothing failed
  char where[192];    ///< JSON path or "line N" ("" when not applicable)
  char msg[384];      ///< what is wrong / what was expected
} cp_error;

/// Sets err->code to CP_ERR_INPUT, err->where and a printf-formatted
/// err->msg; returns -1 so that parsers can `return cp_error_set(err, path,
/// "...")`. err may be NULL.
int cp_error_set(cp_error *err, const char *where, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/// cp_error_set with the kind given.
int cp_error_setc(cp_error *err, cp_error_code code, const char *where,
                  const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/// "none", "input", "nomem", "overlap", "io", "unsupported", "numerical"
/// (the names the JSON outputs use); "unknown" for other values.
const char *cp_error_code_name(cp_error_code code);

/// Empties err (code and both strings) without zeroing the whole record: on
/// a hot path (the simulator's per-step calls) that memset was most of their
/// own time. cp_error_set fills all three when something fails.
static inline void cp_error_clear(cp_error *err) {
  err->code = CP_ERR_NONE;
  err->where[0] = err->msg[0] = 0;
}

/// Largest input file complan reads: 256 MiB (docs/ranges.md). Scene, URDF
/// and LCP files are far smaller; the cap keeps a wrong path from filling
/// memory.
#define CP_READ_FILE_MAX (256 << 20)

/// Reads a whole REGULAR file into a NUL-terminated malloc'd buffer (*len
/// bytes, the NUL not counted). Directories, FIFOs, devices (/dev/zero) and
/// sockets are refused without reading (a FIFO without a writer does not
/// block), as are files above CP_READ_FILE_MAX. Returns NULL with *err set
/// ("cannot open PATH: REASON" or "cannot read PATH: REASON") on failure.
/// The one file reader of complan's parsers and command line.
#include <stddef.h>
char *cp_read_file(const char *path, size_t *len, cp_error *err);

/// Where the loaders (scene, URDF, mesh) get the bytes of the files they
/// read: a caller may record every file (planner/search/task.c stores them with a
/// plan) or serve them from elsewhere (replay serves them from the
/// database), without models/ knowing where they come from.
///
/// read: the bytes of path as cp_read_file gives them (malloc'd, NUL
/// appended, *len without it) or NULL with *err set naming the file; kind
/// says what the file is for ("scene", "urdf", "mesh"). is_dir (may be
/// NULL: the file system decides) answers whether path is a folder, for
/// the package folders of ROS_PACKAGE_PATH.
typedef struct cp_file_source {
  char *(*read)(void *ctx, const char *path, const char *kind, size_t *len,
                cp_error *err);
  int (*is_dir)(void *ctx, const char *path);
  void *ctx;
} cp_file_source;

/// src's read, or cp_read_file when src is NULL.
char *cp_file_source_read(const cp_file_source *src, const char *path,
                          const char *kind, size_t *len, cp_error *err);

#ifdef __cplusplus
}
#endif
#endif
