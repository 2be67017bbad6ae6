#include "contact/lcpio.h"
#include "models/jsonread.h"

#include <ctype.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- JSON -- */

static int json_number(const json_t *v, double *out) {
  if (!json_is_number(v)) return -1;
  *out = json_number_value(v);
  return isfinite(*out) ? 0 : -1;
}

static const char *json_kind(const json_t *v) {
  switch (json_typeof(v)) {
  case JSON_OBJECT: return "an object";
  case JSON_ARRAY: return "an array";
  case JSON_STRING: return "a string";
  case JSON_INTEGER: case JSON_REAL: return "a number";
  case JSON_TRUE: case JSON_FALSE: return "a boolean";
  case JSON_NULL: return "null";
  }
  return "something else";
}

int cp_lcp_parse_json(const char *text, size_t len, cp_lcp *out,
                      cp_error *err) {
  memset(out, 0, sizeof *out);
  json_error_t jerr;
  int nomem;
  json_t *root = cp_json_loadb(text, len, JSON_REJECT_DUPLICATES | JSON_DECODE_ANY,
                               &jerr, &nomem);
  if (!root) {
    if (nomem) return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory reading JSON");
    char where[64];
    snprintf(where, sizeof where, "line %d, column %d", jerr.line,
             jerr.column);
    return cp_error_set(err, where, "invalid JSON: %s", jerr.text);
  }
  int rc = -1;
  if (!json_is_object(root)) {
    cp_error_set(err, "$", "expected an object with keys \"M\" and \"q\", found %s",
                 json_kind(root));
    goto done;
  }
  const char *key;
  json_t *val;
  json_object_foreach(root, key, val) {
    if (strcmp(key, "M") && strcmp(key, "q") && strcmp(key, "name") &&
        strcmp(key, "comment")) {
      cp_error_set(err, key, "unknown key (expected \"M\", \"q\", \"name\" or \"comment\")");
      goto done;
    }
    if ((!strcmp(key, "name") || !strcmp(key, "comment")) && !json_is_string(val)) {
      cp_error_set(err, key, "expected a string, found %s", json_kind(val));
      goto done;
    }
  }
  json_t *jq = json_object_get(root, "q"), *jm = json_object_get(root, "M");
  if (!jq) { cp_error_set(err, "q", "missing: expected the vector q"); goto done; }
  if (!jm) { cp_error_set(err, "M", "missing: expected the matrix M (a list of rows)"); goto done; }
  if (!json_is_array(jq) || json_array_size(jq) == 0) {
    cp_error_set(err, "q", "expected a non-empty array of numbers, found %s",
                 json_is_array(jq) ? "an empty array" : json_kind(jq));
    goto done;
  }
  size_t n = json_array_size(jq);
  if (n > CP_LCP_MAX_N) {
    cp_error_set(err, "q", "size %zu is above the maximum n = %d", n, CP_LCP_MAX_N);
    goto done;
  }
  if (!json_is_array(jm) || json_array_size(jm) != n) {
    if (json_is_array(jm))
      cp_error_set(err, "M", "expected %zu rows (the length of q), found %zu",
                   n, json_array_size(jm));
    else
      cp_error_set(err, "M", "expected an array of rows, found %s", json_kind(jm));
    goto done;
  }
  char where[64];
  /* Every row's length is checked before n^2 doubles are allocated. */
  for (size_t i = 0; i < n; i++) {
    json_t *row = json_array_get(jm, i);
    snprintf(where, sizeof where, "M[%zu]", i);
    if (!json_is_array(row) || json_array_size(row) != n) {
      if (json_is_array(row))
        cp_error_set(err, where, "expected a row of %zu numbers (the length of q), found %zu",
                     n, json_array_size(row));
      else
        cp_error_set(err, where, "expected a row (array of numbers), found %s", json_kind(row));
      goto done;
    }
  }
  if (cp_lcp_init(out, (int)n) != 0) { cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory"); goto done; }
  for (size_t i = 0; i < n; i++) {
    snprintf(where, sizeof where, "q[%zu]", i);
    if (json_number(json_array_get(jq, i), &out->q[i])) {
      cp_error_set(err, where, "expected a finite number, found %s",
                   json_kind(json_array_get(jq, i)));
      goto done;
    }
    json_t *row = json_array_get(jm, i);
    for (size_t j = 0; j < n; j++) {
      snprintf(where, sizeof where, "M[%zu][%zu]", i, j);
      if (json_number(json_array_get(row, j), &out->M[i + j * n])) {
        cp_error_set(err, where, "expected a finite number, found %s",
                     json_kind(json_array_get(row, j)));
        goto done;
      }
    }
  }
  json_t *jn = json_object_get(root, "name");
  if (jn && !(out->name = strdup(json_string_value(jn)))) {
    cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
    goto done;
  }
  rc = 0;
done:
  if (rc) cp_lcp_free(out);
  json_decref(root);
  return rc;
}

/* ---------------------------------------------------------------- .dat -- */

/* A whitespace tokenizer over a buffer that knows its line number. Tokens
 * are read in full: a number of up to CP_DAT_TOKEN_MAX - 1 characters is
 * converted exactly as written (1e-1 followed by 70 zeros is 0.1, not a
 * prefix of it); a longer token is an error naming its line. */
enum { CP_DAT_TOKEN_MAX = 512 };
typedef struct tok {
  const char *p, *end;
  int line;
  int tok_line;
  size_t tok_len;        /* full length of the last token */
  char buf[CP_DAT_TOKEN_MAX];
  char shown[48];        /* printable start of the token, for messages */
} tok;

static int tok_next(tok *t) {
  while (t->p < t->end && isspace((unsigned char)*t->p)) {
    if (*t->p == '\n') t->line++;
    t->p++;
  }
  if (t->p >= t->end) return 0;
  t->tok_line = t->line;
  const char *start = t->p;
  while (t->p < t->end && !isspace((unsigned char)*t->p)) t->p++;
  size_t k = (size_t)(t->p - start);
  t->tok_len = k;
  size_t c = k < sizeof t->buf - 1 ? k : sizeof t->buf - 1;
  memcpy(t->buf, start, c);
  t->buf[c] = '\0';
  /* The token may end up in an error message: keep it printable and short. */
  size_t m = k < sizeof t->shown - 4 ? k : sizeof t->shown - 4;
  for (size_t i = 0; i < m; i++)
    t->shown[i] = isprint((unsigned char)start[i]) ? start[i] : '?';
  if (m < k) memcpy(t->shown + m, "...", 3), m += 3;
  t->shown[m] = '\0';
  return 1;
}

static int tok_number(tok *t, double *v, const char *what, cp_error *err) {
  char where[32];
  if (!tok_next(t)) {
    snprintf(where, sizeof where, "line %d", t->tok_line ? t->tok_line : 1);
    return cp_error_set(err, where, "unexpected end of file after this line: expected %s", what);
  }
  snprintf(where, sizeof where, "line %d", t->tok_line);
  if (t->tok_len >= sizeof t->buf)
    return cp_error_set(err, where, "expected %s, found a token of %zu characters "
                        "(at most %d are read): '%s'", what, t->tok_len,
                        CP_DAT_TOKEN_MAX - 1, t->shown);
  char *endp;
  errno = 0;
  *v = strtod(t->buf, &endp);
  if (*endp != '\0' || endp == t->buf)
    return cp_error_set(err, where, "expected %s, found '%s'", what, t->shown);
  if (!isfinite(*v) || errno == ERANGE) {
    if (!(errno == ERANGE && fabs(*v) < 1.0)) /* underflow to ~0 is harmless */
      return cp_error_set(err, where, "expected %s, found the non-finite value '%s'",
                          what, t->shown);
  }
  return 0;
}

static int tok_int(tok *t, long *v, const char *what, cp_error *err) {
  double d;
  if (tok_number(t, &d, what, err)) return -1;
  if (d != floor(d) || fabs(d) > 1e9) {
    char where[32];
    snprintf(where, sizeof where, "line %d", t->tok_line);
    return cp_error_set(err, where, "expected %s (an integer), found '%s'", what, t->shown);
  }
  *v = (long)d;
  return 0;
}

int cp_lcp_parse_dat(const char *text, size_t len, cp_lcp *out,
                     cp_error *err) {
  memset(out, 0, sizeof *out);
  tok t = {.p = text, .end = text + len, .line = 1};
  long n = 0, storage = 0, rows = 0, cols = 0, rows2 = 0, cols2 = 0;
  char where[32];
  if (tok_int(&t, &n, "the problem size n", err)) return -1;
  if (n < 1 || n > CP_LCP_MAX_N) {
    snprintf(where, sizeof where, "line %d", t.tok_line);
    return cp_error_set(err, where, "expected a problem size n >= 1 (at most %d), found %ld",
                        CP_LCP_MAX_N, n);
  }
  if (tok_int(&t, &storage, "the storage type (0 = dense)", err)) return -1;
  if (storage != 0) {
    snprintf(where, sizeof where, "line %d", t.tok_line);
    if (storage == 1)
      return cp_error_set(err, where, "unsupported storage type 1 (sparse block storage); only storage type 0 (dense) is read");
    return cp_error_set(err, where, "unknown storage type %ld (expected 0 = dense)", storage);
  }
  if (tok_int(&t, &rows, "the number of rows of M", err) ||
      tok_int(&t, &cols, "the number of columns of M", err) ||
      tok_int(&t, &rows2, "the number of rows of M (repeated)", err) ||
      tok_int(&t, &cols2, "the number of columns of M (repeated)", err))
    return -1;
  if (rows != n || cols != n || rows2 != n || cols2 != n) {
    snprintf(where, sizeof where, "line %d", t.tok_line);
    return cp_error_set(err, where,
                        "inconsistent sizes: n = %ld but M is given as %ld x %ld and %ld x %ld",
                        n, rows, cols, rows2, cols2);
  }
  /* n^2 + n numbers follow, each at least one character and a separator
   * (the last needs no separator): check that the rest of the file can hold
   * them before allocating n^2 doubles. (Small sizes are left to the
   * token-by-token reader, whose message names the line where data ends.) */
  const size_t need = (size_t)n * (size_t)n + (size_t)n, left = (size_t)(t.end - t.p);
  if (need > 65536 && left / 2 + 1 < need) {
    snprintf(where, sizeof where, "line %d", t.tok_line);
    return cp_error_set(err, where,
                        "n = %ld needs %zu numbers (M and q) but the rest of the file "
                        "has only %zu bytes", n, need, left);
  }
  if (cp_lcp_init(out, (int)n) != 0) return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  char what[128];
  for (long k = 0; k < n * n; k++) {
    snprintf(what, sizeof what, "M[%ld][%ld] (column-major entry %ld of %ld)",
             k % n, k / n, k + 1, n * n);
    if (tok_number(&t, &out->M[k], what, err)) { cp_lcp_free(out); return -1; }
  }
  for (long i = 0; i < n; i++) {
    snprintf(what, sizeof what, "q[%ld] (entry %ld of %ld)", i, i + 1, n);
    if (tok_number(&t, &out->q[i], what, err)) { cp_lcp_free(out); return -1; }
  }
  return 0; /* the rest is a free-text comment */
}

int cp_lcp_parse(const char *text, size_t len, cp_lcp *out, cp_error *err) {
  memset(out, 0, sizeof *out);
  /* A UTF-8 byte-order mark is skipped (editors on some systems write one);
   * UTF-16/32 text is named as such rather than misread. */
  if (len >= 3 && !memcmp(text, "\xEF\xBB\xBF", 3)) {
    text += 3;
    len -= 3;
  } else if (len >= 2 && (!memcmp(text, "\xFF\xFE", 2) || !memcmp(text, "\xFE\xFF", 2))) {
    return cp_error_set(err, "line 1", "the file is UTF-16 (or UTF-32) text: save it as "
                        "UTF-8 (a JSON LCP) or ASCII (a Siconos .dat file)");
  }
  size_t i = 0;
  while (i < len && isspace((unsigned char)text[i])) i++;
  if (i == len)
    return cp_error_set(err, "line 1", "unexpected end of file: the file is empty; expected a JSON LCP "
                        "{\"M\": ..., \"q\": ...} or a Siconos .dat file");
  const unsigned char c = (unsigned char)text[i];
  /* A .dat file starts with its size n (a number); anything that can start
   * a JSON value is JSON, so that `null` or `"text"` get a JSON message. */
  if (isdigit(c) || c == '+' || c == '-' || c == '.') return cp_lcp_parse_dat(text, len, out, err);
  if (c == '{' || c == '[' || c == '"' || c == 't' || c == 'f' || c == 'n')
    return cp_lcp_parse_json(text, len, out, err);
  int line = 1;
  for (size_t k = 0; k < i; k++) line += text[k] == '\n';
  char where[32];
  snprintf(where, sizeof where, "line %d", line);
  if (isprint(c))
    return cp_error_set(err, where, "unknown format: found '%c'; expected a JSON LCP "
                        "(starting with '{') or a Siconos .dat file (starting with the size n)", c);
  return cp_error_set(err, where, "unknown format: found the byte 0x%02X (binary data?); "
                      "expected a JSON LCP (starting with '{') or a Siconos .dat file "
                      "(starting with the size n)", c);
}

/* ------------------------------------------------------------- writers -- */

/* A growable string; all writes go through sb_printf. */
typedef struct sb { char *s; size_t n, cap; int oom; } sb;

static void sb_printf(sb *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(sb *b, const char *fmt, ...) {
  if (b->oom) return;
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(b->s ? b->s + b->n : NULL, b->s ? b->cap - b->n : 0, fmt, ap);
    va_end(ap);
    if (k < 0) { b->oom = 1; return; }
    if (b->s && b->n + (size_t)k < b->cap) { b->n += (size_t)k; return; }
    size_t cap = (b->cap ? b->cap * 2 : 1024) + (size_t)k;
    char *s = realloc(b->s, cap);
    if (!s) { b->oom = 1; return; }
    b->s = s;
    b->cap = cap;
  }
}

static char *sb_finish(sb *b) {
  if (b->oom) { free(b->s); return NULL; }
  return b->s;
}

/* %.17g round-trips every double; "-0" would come back as the integer 0 from
 * a JSON reader, so negative zero is written as a real. */
static void sb_num(sb *b, const char *sep, double x) {
  if (x == 0.0 && signbit(x)) sb_printf(b, "%s-0.0", sep);
  else sb_printf(b, "%s%.17g", sep, x);
}

char *cp_lcp_format_json(const cp_lcp *lcp) {
  sb b = {0};
  const int n = lcp->n;
  sb_printf(&b, "{");
  if (lcp->name) {
    json_t *js = json_string(lcp->name);
    char *nm = js ? json_dumps(js, JSON_ENCODE_ANY) : NULL;
    json_decref(js);
    if (!nm) { /* out of memory: no name is not an answer */
      free(sb_finish(&b));
      return NULL;
    }
    sb_printf(&b, "\"name\": %s, ", nm);
    free(nm);
  }
  sb_printf(&b, "\"M\": [");
  for (int i = 0; i < n; i++) {
    sb_printf(&b, "%s[", i ? ",\n  " : "\n  ");
    for (int j = 0; j < n; j++)
      sb_num(&b, j ? ", " : "", lcp->M[i + (size_t)j * n]);
    sb_printf(&b, "]");
  }
  sb_printf(&b, "],\n \"q\": [");
  for (int i = 0; i < n; i++) sb_num(&b, i ? ", " : "", lcp->q[i]);
  sb_printf(&b, "]}\n");
  return sb_finish(&b);
}

char *cp_lcp_format_dat(const cp_lcp *lcp) {
  sb b = {0};
  const int n = lcp->n;
  sb_printf(&b, "%d\n0\n%d\n%d\n%d\t%d\n", n, n, n, n, n);
  for (int j = 0; j < n; j++) {
    for (int i = 0; i < n; i++)
      sb_printf(&b, "%s%.17g", i ? " " : "", lcp->M[i + (size_t)j * n]);
    sb_printf(&b, "\n");
  }
  for (int i = 0; i < n; i++) sb_printf(&b, "%s%.17g", i ? " " : "", lcp->q[i]);
  sb_printf(&b, "\n");
  if (lcp->name) sb_printf(&b, "\n%s\n", lcp->name);
  return sb_finish(&b);
}
