/// \file models/jsonread.h
/// Typed reading of JSON (jansson) with exact JSON paths in every error, for
/// the scene parser and any other complan file format built on JSON.
///
/// Paths are written like `bodies[1].shape.size[2]`: object members joined
/// with '.', array elements as [i], the root as "". Every reader checks the
/// type and finiteness of what it reads and fills a cp_error (where = path,
/// msg = what was expected) on failure, returning -1; 0 on success.
/// Nothing here allocates except cp_json_parse (the caller json_decref()s the
/// root).
#ifndef CP_MODELS_JSONREAD_H
#define CP_MODELS_JSONREAD_H

#include <jansson.h>
#include <stddef.h>

#include "models/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Size of a path buffer (that of cp_error.where).
#define CP_JSON_PATH_MAX 192

/// Parses text (len bytes) rejecting duplicate keys. The root must be an
/// object. On a syntax error err->where is "line L" and the message gives the
/// column and jansson's reason.
int cp_json_parse(const char *text, size_t len, json_t **root, cp_error *err);

/// json_loadb(text, len, flags, je) that tells running out of memory from bad
/// syntax: returns the root, or NULL with *je filled and *nomem = 1 when an
/// allocation of jansson's failed during the parse (jansson then sometimes
/// reports a syntax error at the string it could not store). For this,
/// jansson's allocator is set once, process-wide, to malloc/free with a
/// per-thread failure flag (json_set_alloc_funcs).
json_t *cp_json_loadb(const char *text, size_t len, size_t flags,
                      json_error_t *je, int *nomem);

/// Number of jansson allocations that failed so far in this thread (since
/// jansson's allocator was set, which this call also does). jansson drops a
/// key or element silently when it cannot allocate it: a document built
/// while this number moved is incomplete (planner/cli/output.h's cp_json_print
/// refuses to print it).
unsigned long cp_json_alloc_failures(void);
/// Counts a failed allocation of a document's part made outside jansson
/// (e.g. a name for it), so that the document is refused as above.
void cp_json_note_alloc_failure(void);

/// out = parent + "." + key (or key at the root). Returns out.
char *cp_json_path_key(char *out, const char *parent, const char *key);
/// out = parent + "[i]". Returns out.
char *cp_json_path_index(char *out, const char *parent, size_t i);

/// Checks that v is an object whose keys are all in `allowed` (a
/// NULL-terminated list); an unknown key is reported at its own path.
int cp_json_check_object(const json_t *v, const char *path,
                         const char *const *allowed, cp_error *err);

/// A finite number.
int cp_json_number(const json_t *v, const char *path, double *out,
                   cp_error *err);
/// A non-empty string (borrowed pointer, valid while the document lives).
int cp_json_string(const json_t *v, const char *path, const char **out,
                   cp_error *err);
/// true or false.
int cp_json_bool(const json_t *v, const char *path, int *out, cp_error *err);
/// An array of exactly n finite numbers.
int cp_json_vector(const json_t *v, const char *path, int n, double *out,
                   cp_error *err);
/// A 3x3 matrix as an array of 3 rows of 3 finite numbers (row-major out[9]).
int cp_json_mat3(const json_t *v, const char *path, double *out,
                 cp_error *err);

#ifdef __cplusplus
}
#endif
#endif
