#include "models/jsonread.h"

#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

/* Allocations of jansson's that failed, in this thread (cp_json_loadb,
 * cp_json_alloc_failures). */
static _Thread_local unsigned long json_failures;

static void *json_alloc(size_t size) {
  void *p = malloc(size);
  if (!p) ++json_failures;
  return p;
}

static pthread_once_t json_once = PTHREAD_ONCE_INIT;
static void json_init(void) { json_set_alloc_funcs(json_alloc, free); }

unsigned long cp_json_alloc_failures(void) {
  pthread_once(&json_once, json_init);
  return json_failures;
}

void cp_json_note_alloc_failure(void) {
  (void)cp_json_alloc_failures();
  ++json_failures;
}

json_t *cp_json_loadb(const char *text, size_t len, size_t flags,
                      json_error_t *je, int *nomem) {
  const unsigned long before = cp_json_alloc_failures();
  json_t *r = json_loadb(text, len, flags, je);
  const int failed = json_failures != before;
  if (r && failed) { /* jansson absorbed a failure: the tree may lack parts */
    json_decref(r);
    r = NULL;
  }
  *nomem = !r && (failed || json_error_code(je) == json_error_out_of_memory);
  return r;
}

int cp_json_parse(const char *text, size_t len, json_t **root, cp_error *err) {
  *root = NULL;
  if (!text) return cp_error_set(err, "", "no text to parse");
  json_error_t je;
  int nomem;
  json_t *r = cp_json_loadb(text, len, JSON_REJECT_DUPLICATES, &je, &nomem);
  if (!r) {
    if (nomem) return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory reading JSON");
    /* An empty (or blank) file gets its own words, not jansson's "'[' or
     * '{' expected near end of file" at column 0. */
    size_t i = 0;
    while (i < len && strchr(" \t\r\n", text[i]) && text[i]) ++i;
    if (i == len)
      return cp_error_set(err, "line 1", "expected a JSON object, found %s",
                          len ? "only blank space" : "an empty file");
    char where[32];
    snprintf(where, sizeof where, "line %d", je.line);
    return cp_error_set(err, where, "invalid JSON at column %d: %s", je.column,
                        je.text);
  }
  if (!json_is_object(r)) {
    json_decref(r);
    return cp_error_set(err, "", "expected a JSON object at the top level");
  }
  *root = r;
  return 0;
}

char *cp_json_path_key(char *out, const char *parent, const char *key) {
  if (!parent || !*parent)
    snprintf(out, CP_JSON_PATH_MAX, "%.*s", CP_JSON_PATH_MAX - 1, key);
  else
    snprintf(out, CP_JSON_PATH_MAX, "%.*s.%.*s", CP_JSON_PATH_MAX / 2, parent,
             CP_JSON_PATH_MAX / 2 - 2, key);
  return out;
}

char *cp_json_path_index(char *out, const char *parent, size_t i) {
  snprintf(out, CP_JSON_PATH_MAX, "%.*s[%zu]", CP_JSON_PATH_MAX - 24,
           parent ? parent : "", i);
  return out;
}

static const char *type_name(const json_t *v) {
  switch (json_typeof(v)) {
  case JSON_OBJECT: return "an object";
  case JSON_ARRAY: return "an array";
  case JSON_STRING: return "a string";
  case JSON_INTEGER:
  case JSON_REAL: return "a number";
  case JSON_TRUE:
  case JSON_FALSE: return "a boolean";
  case JSON_NULL: return "null";
  }
  return "something else";
}

int cp_json_check_object(const json_t *v, const char *path,
                         const char *const *allowed, cp_error *err) {
  if (!json_is_object(v))
    return cp_error_set(err, path, "expected an object, got %s", type_name(v));
  const char *key;
  json_t *val;
  json_object_foreach((json_t *)v, key, val) {
    int ok = 0;
    for (const char *const *a = allowed; *a && !ok; ++a) ok = !strcmp(*a, key);
    if (!ok) {
      char list[256] = "", p[CP_JSON_PATH_MAX];
      size_t used = 0;
      for (const char *const *a = allowed; *a; ++a) {
        int k = snprintf(list + used, sizeof list - used, "%s%s",
                         a == allowed ? "" : ", ", *a);
        if (k < 0 || (size_t)k >= sizeof list - used) break;
        used += (size_t)k;
      }
      return cp_error_set(err, cp_json_path_key(p, path, key),
                          "unknown key \"%.60s\" (expected one of: %s)", key,
                          list);
    }
  }
  return 0;
}

int cp_json_number(const json_t *v, const char *path, double *out,
                   cp_error *err) {
  if (!v || !json_is_number(v))
    return cp_error_set(err, path, "expected a number, got %s",
                        v ? type_name(v) : "nothing");
  double x = json_number_value(v);
  if (!isfinite(x))
    return cp_error_set(err, path, "expected a finite number");
  *out = x;
  return 0;
}

int cp_json_string(const json_t *v, const char *path, const char **out,
                   cp_error *err) {
  if (!v || !json_is_string(v))
    return cp_error_set(err, path, "expected a string, got %s",
                        v ? type_name(v) : "nothing");
  const char *s = json_string_value(v);
  if (!*s) return cp_error_set(err, path, "expected a non-empty string");
  if (strlen(s) != json_string_length(v))
    return cp_error_set(err, path, "string contains a NUL character");
  *out = s;
  return 0;
}

int cp_json_bool(const json_t *v, const char *path, int *out, cp_error *err) {
  if (!v || !json_is_boolean(v))
    return cp_error_set(err, path, "expected true or false, got %s",
                        v ? type_name(v) : "nothing");
  *out = json_is_true(v);
  return 0;
}

int cp_json_vector(const json_t *v, const char *path, int n, double *out,
                   cp_error *err) {
  if (!v || !json_is_array(v))
    return cp_error_set(err, path, "expected an array of %d numbers, got %s",
                        n, v ? type_name(v) : "nothing");
  if (json_array_size(v) != (size_t)n)
    return cp_error_set(err, path, "expected %d numbers, got %zu", n,
                        json_array_size(v));
  for (int i = 0; i < n; ++i) {
    char p[CP_JSON_PATH_MAX];
    if (cp_json_number(json_array_get(v, (size_t)i),
                       cp_json_path_index(p, path, (size_t)i), &out[i], err))
      return -1;
  }
  return 0;
}

int cp_json_mat3(const json_t *v, const char *path, double *out,
                 cp_error *err) {
  if (!v || !json_is_array(v) || json_array_size(v) != 3)
    return cp_error_set(err, path,
                        "expected a 3x3 matrix as 3 rows of 3 numbers");
  for (int r = 0; r < 3; ++r) {
    char p[CP_JSON_PATH_MAX];
    if (cp_json_vector(json_array_get(v, (size_t)r),
                       cp_json_path_index(p, path, (size_t)r), 3, out + 3 * r,
                       err))
      return -1;
  }
  return 0;
}
