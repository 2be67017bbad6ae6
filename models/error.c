#include "models/error.h"

#include <stdarg.h>
#include <stdio.h>

int cp_error_set(cp_error *err, const char *where, const char *fmt, ...) {
  if (!err) return -1;
  snprintf(err->where, sizeof err->where, "%s", where ? where : "");
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err->msg, sizeof err->msg, fmt, ap);
  va_end(ap);
  return -1;
}
