/* RFC 4180 CSV fields and the state's columns (planner/io/csv.h). */
#include "planner/io/csv.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

int cp_csv_needs_quotes(const char *s) { return s[strcspn(s, ",\"\r\n")] != '\0'; }

void cp_csv_field(FILE *f, const char *s) {
  if (!cp_csv_needs_quotes(s)) {
    fputs(s, f);
    return;
  }
  fputc('"', f);
  for (; *s; ++s) {
    if (*s == '"') fputc('"', f);
    fputc(*s, f);
  }
  fputc('"', f);
}

int cp_csv_fieldf(FILE *f, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *buf = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (!buf) return -1;
  va_start(ap, fmt);
  vsnprintf(buf, (size_t)n + 1, fmt, ap);
  va_end(ap);
  cp_csv_field(f, buf);
  free(buf);
  return 0;
}

int cp_csv_state_header(FILE *f, const cp_state_layout *l, const cp_scene *s) {
  size_t cap = 256;
  char *buf = malloc(cap);
  if (!buf) return -1;
  fputc('t', f);
  for (int i = 0; i < l->n; ++i) {
    int len = cp_state_column_name(l, s, i, buf, cap);
    if (len >= 0 && (size_t)len >= cap) { /* a long name: room for it */
      char *b = realloc(buf, (size_t)len + 1);
      if (!b) {
        free(buf);
        return -1;
      }
      buf = b;
      cap = (size_t)len + 1;
      cp_state_column_name(l, s, i, buf, cap);
    }
    fputc(',', f);
    cp_csv_field(f, buf);
  }
  free(buf);
  return 0;
}

void cp_csv_state_row(FILE *f, const cp_state_layout *l, double t,
                      const double *x) {
  fprintf(f, "%.17g", t);
  for (int i = 0; i < l->n; ++i) fprintf(f, ",%.17g", x[i]);
}
