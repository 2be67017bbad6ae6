#include "models/error.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cp_error_set(cp_error *err, const char *where, const char *fmt, ...) {
  if (!err) return -1;
  snprintf(err->where, sizeof err->where, "%s", where ? where : "");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  return -1;
}

char *cp_read_file(const char *path, size_t *len, cp_error *err) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    cp_error_set(err, "", "cannot open %s: %s", path, strerror(errno));
    return NULL;
  }
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    if (n + 1 >= cap) {
      char *t = realloc(buf, cap *= 2);
      if (!t) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = t;
    }
    size_t k = fread(buf + n, 1, cap - n - 1, f);
    if (k == 0) break;
    n += k;
  }
  int bad = ferror(f);
  fclose(f);
  if (!buf || bad) {
    free(buf);
    cp_error_set(err, "", "cannot read %s%s", path, buf ? "" : ": out of memory");
    return NULL;
  }
  buf[n] = '\0';
  if (len) *len = n;
  return buf;
}
