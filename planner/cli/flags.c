/* The flag parser of every command (planner/cli/flags.h). */
#include "planner/cli/flags.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/cli/output.h"

/* strtol and friends skip leading spaces and accept '+', hexadecimal, inf
 * and nan, and strtoull wraps "-1" to 2^64 - 1: all of that is refused here
 * before they are called. */
static int plain_integer(const char *s, int allow_minus) {
  if (!s) return 0;
  if (allow_minus && *s == '-') s++;
  if (!*s) return 0;
  for (; *s; s++)
    if (!isdigit((unsigned char)*s)) return 0;
  return 1;
}

int cp_parse_int(const char *s, long lo, long hi, long *out) {
  if (!plain_integer(s, 1)) return -1;
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (*end || errno == ERANGE || v < lo || v > hi) return -1;
  *out = v;
  return 0;
}

int cp_parse_u64(const char *s, uint64_t *out) {
  if (!plain_integer(s, 0)) return -1;
  char *end;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (*end || errno == ERANGE || v > UINT64_MAX) return -1;
  *out = (uint64_t)v;
  return 0;
}

int cp_parse_double(const char *s, double lo, double hi, double *out) {
  if (!s || !*s) return -1;
  /* digits, one '.', an exponent: [-]D*[.D*][(e|E)[+|-]D+] with a digit */
  const char *p = s;
  int digits = 0;
  if (*p == '-') p++;
  while (isdigit((unsigned char)*p)) p++, digits++;
  if (*p == '.') {
    p++;
    while (isdigit((unsigned char)*p)) p++, digits++;
  }
  if (!digits) return -1;
  if (*p == 'e' || *p == 'E') {
    p++;
    if (*p == '+' || *p == '-') p++;
    if (!isdigit((unsigned char)*p)) return -1;
    while (isdigit((unsigned char)*p)) p++;
  }
  if (*p) return -1;
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (*end || !isfinite(v) || (errno == ERANGE && fabs(v) > 1.0) || v < lo || v > hi)
    return -1;
  *out = v;
  return 0;
}

/* --- the flag parser ------------------------------------------------------- */

const char *const cp_cli_solver_names[] = {"lemke", "fip", "certify", "auto", NULL};

static int flag_active(const cp_cli_spec *spec, const cp_cli_flag *f) {
  return !f->modes || (f->modes & spec->mode);
}

/* What a value of f must be, for messages: the table's words, else said
 * from the kind and range. */
static const char *expectation(const cp_cli_flag *f, char *buf, size_t n) {
  if (f->expect) return f->expect;
  switch (f->kind) {
  case CP_FLAG_INT:
  case CP_FLAG_LONG:
    snprintf(buf, n, "a whole number from %ld to %ld", f->imin, f->imax);
    break;
  case CP_FLAG_U64:
    snprintf(buf, n, "a whole number from 0 to %" PRIu64, UINT64_MAX);
    break;
  case CP_FLAG_DOUBLE:
    snprintf(buf, n, "a number in [%g, %g]", f->dmin, f->dmax);
    break;
  case CP_FLAG_ENUM: {
    size_t k = 0, used = 0;
    buf[0] = '\0';
    for (; f->names[k]; k++) {
      const char *sep = k == 0 ? "" : f->names[k + 1] ? ", " : " or ";
      int w = snprintf(buf + used, n - used, "%s%s", sep, f->names[k]);
      if (w < 0 || (size_t)w >= n - used) break;
      used += (size_t)w;
    }
    break;
  }
  case CP_FLAG_PATH:
    snprintf(buf, n, "a file name");
    break;
  default:
    snprintf(buf, n, "%s", f->arg ? f->arg : "a value");
  }
  return buf;
}

/* Stores value v of flag f; returns 0, or -1 when v is not acceptable. */
static int store(const cp_cli_flag *f, const char *v) {
  long l;
  double d;
  switch (f->kind) {
  case CP_FLAG_STRING:
    *(const char **)f->dest = v;
    return 0;
  case CP_FLAG_PATH:
    if (!*v) return -1;
    *(const char **)f->dest = v;
    return 0;
  case CP_FLAG_INT:
    if (cp_parse_int(v, f->imin, f->imax, &l) || l < INT_MIN || l > INT_MAX) return -1;
    *(int *)f->dest = (int)l;
    return 0;
  case CP_FLAG_LONG:
    if (cp_parse_int(v, f->imin, f->imax, &l)) return -1;
    *(long *)f->dest = l;
    return 0;
  case CP_FLAG_U64:
    return cp_parse_u64(v, (uint64_t *)f->dest);
  case CP_FLAG_DOUBLE:
    if (cp_parse_double(v, f->dmin, f->dmax, &d)) return -1;
    *(double *)f->dest = d;
    return 0;
  case CP_FLAG_ENUM:
    for (int k = 0; f->names[k]; k++)
      if (!strcmp(v, f->names[k])) {
        *(int *)f->dest = k;
        return 0;
      }
    return -1;
  case CP_FLAG_BOOL:
    break;
  }
  return -1;
}

int cp_cli_parse(const cp_cli_spec *spec, int argc, char **argv) {
  char cmd[64], buf[256];
  snprintf(cmd, sizeof cmd, "%s ", spec->cmd);
  /* Which path flags were given: a second one would silently replace the
   * first output or input. */
  unsigned char seen[64] = {0};
  if (spec->operand_dest) *spec->operand_dest = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      cp_cli_help(spec, stdout);
      return CP_EXIT_ANSWERED;
    }
    if (a[0] != '-' || a[1] == '\0') { // an operand ("-" is one: stdin-like)
      if (!spec->operand) return cp_cli_usage_error(cmd, "unexpected argument '%s'", a);
      if (*spec->operand_dest)
        return cp_cli_usage_error(cmd, "one %s expected, found a second: '%s'",
                                  spec->operand, a);
      *spec->operand_dest = a;
      continue;
    }
    const cp_cli_flag *f = NULL;
    size_t len = 0;
    int k = 0;
    for (; k < spec->n_flags; k++) {
      const cp_cli_flag *g = &spec->flags[k];
      len = strlen(g->name);
      if (flag_active(spec, g) && !strncmp(a, g->name, len) && (a[len] == '\0' || a[len] == '=')) {
        f = g;
        break;
      }
    }
    if (!f) return cp_cli_usage_error(cmd, "unknown option '%s'", a);
    if (f->kind == CP_FLAG_BOOL) {
      if (a[len] == '=') return cp_cli_usage_error(cmd, "%s takes no value, found '%s'", f->name, a);
      *(int *)f->dest = 1;
      continue;
    }
    const char *v;
    if (a[len] == '=') v = a + len + 1;
    else if (i + 1 < argc) v = argv[++i];
    else return cp_cli_usage_error(cmd, "%s needs a value: %s", f->name, expectation(f, buf, sizeof buf));
    if (f->kind == CP_FLAG_PATH && k < (int)sizeof seen && seen[k]++)
      return cp_cli_usage_error(cmd, "%s given twice (second: '%s')", f->name, v);
    if (store(f, v))
      return cp_cli_usage_error(cmd, "%s: expected %s, found '%s'", f->name,
                                expectation(f, buf, sizeof buf), v);
  }
  if (spec->operand && !*spec->operand_dest)
    return cp_cli_usage_error(cmd, "missing %s", spec->operand);
  return CP_CLI_GO;
}

void cp_cli_usage_lines(const char *usage, int first, FILE *out) {
  const char *lead = first ? "usage:" : "      ";
  for (const char *p = usage; *p;) {
    size_t n = strcspn(p, "\n");
    fprintf(out, "%s complan %.*s\n", lead, (int)n, p);
    lead = "      ";
    p += n + (p[n] == '\n');
  }
}

/* One entry of the flag list: "  --name ARG", padded to col, then the help,
 * its continuation lines indented to col. */
static void help_entry(FILE *out, const char *name, const char *arg, const char *help, int col) {
  int w = fprintf(out, "  %s%s%s", name, arg ? " " : "", arg ? arg : "");
  fprintf(out, "%*s", w < col ? col - w : 2, "");
  for (const char *p = help; *p; p++) {
    fputc(*p, out);
    if (*p == '\n' && p[1]) fprintf(out, "%*s", col, "");
  }
  fputc('\n', out);
}

void cp_cli_help(const cp_cli_spec *spec, FILE *out) {
  /* The help column: past the longest "--name ARG" up to 20 characters;
   * longer ones keep two spaces. */
  int col = 20;
  for (int k = 0; k < spec->n_flags; k++) {
    const cp_cli_flag *f = &spec->flags[k];
    int w = 2 + (int)strlen(f->name) + (f->arg ? 1 + (int)strlen(f->arg) : 0) + 2;
    if (flag_active(spec, f) && w > col && w <= 24) col = w;
  }
  if (spec->usage) {
    cp_cli_usage_lines(spec->usage, 1, out);
    fputc('\n', out);
  }
  fputs(spec->head, out);
  for (int k = 0; k < spec->n_flags; k++)
    if (flag_active(spec, &spec->flags[k]))
      help_entry(out, spec->flags[k].name, spec->flags[k].arg, spec->flags[k].help, col);
  help_entry(out, "-h, --help", NULL, "this text", col);
  fputs(spec->tail, out);
}
