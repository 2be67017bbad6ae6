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
