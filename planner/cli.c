#include "planner/cli.h"

#include <cblas.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/glpkout.h"
#include "planner/output.h"

static const char usage[] =
    "usage: complan COMMAND [ARGS]\n"
    "\n"
    "Planning robot manipulation through contact: the rigid-body contact model\n"
    "of Trinkle, Pang, Sudarsky and Lo (1995) with Coulomb friction, solved as a\n"
    "linear complementarity problem (LCP).\n"
    "\n"
    "commands:\n"
    "  solve SCENE        the contact problem: accelerations and contact forces\n"
    "  contacts SCENE     list the contacts generated from the shapes\n"
    "  simulate SCENE     step a scene in time (contacts, impacts, friction)\n"
    "  lcp solve FILE     solve a raw LCP (JSON or Siconos .dat)\n"
    "  lcp certify FILE   decide exactly whether an LCP has a solution (MILP)\n"
    "  experiment paper   reproduce the paper's computational study (section 6)\n"
    "  plan TASK          plan a task; every explored state goes to SQLite\n"
    "  plans              list the runs and plans in a planner database\n"
    "  replay             re-simulate a stored plan, verify, export, view\n"
    "  stability SCENE    is the assembly at rest strongly/weakly stable or not\n"
    "  assemble SCENE     plan a stable assembly sequence (SQLite, --db)\n"
    "\n"
    "options:\n"
    "  -h, --help         this text; 'complan COMMAND --help' for a command\n"
    "  --version          print the version\n"
    "\n"
    "exit status: 0 answered (including a proof that no solution exists),\n"
    "1 undecided (iteration cap, numerical failure), 2 bad input or usage.\n";

const char *cp_cli_flag_value(int argc, char **argv, int *i, const char *flag,
                              int *missing) {
  const char *a = argv[*i];
  size_t k = strlen(flag);
  if (strncmp(a, flag, k) != 0) return NULL;
  if (a[k] == '=') return a + k + 1;
  if (a[k] != '\0') return NULL;
  if (*i + 1 >= argc) {
    *missing = 1;
    return NULL;
  }
  return argv[++*i];
}

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

static void glpk_to_stderr(void *ctx, const char *text) {
  (void)ctx;
  fputs(text, stderr);
}

int cp_cli_verbose_flag(const char *arg) {
  if (strcmp(arg, "--verbose")) return 0;
  cp_glpk_set_sink(glpk_to_stderr, NULL);
  return 1;
}

int cp_cli_main(int argc, char **argv) {
  /* At the sizes complan works with, BLAS threads cost more than they give;
   * parallelism belongs to searches and experiments. */
  openblas_set_num_threads(1);
  cp_cli_output_begin();
  if (argc < 2) {
    fputs(usage, stderr);
    return CP_EXIT_BAD_INPUT;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
    fputs(usage, stdout);
    return 0;
  }
  if (!strcmp(cmd, "--version")) {
    printf("complan 0.1.0\n");
    return 0;
  }
  if (!strcmp(cmd, "lcp")) return cp_cli_lcp(argc - 1, argv + 1);
  if (!strcmp(cmd, "solve")) return cp_cli_solve(argc - 1, argv + 1);
  if (!strcmp(cmd, "contacts")) return cp_cli_contacts(argc - 1, argv + 1);
  if (!strcmp(cmd, "simulate")) return cp_cli_simulate(argc - 1, argv + 1);
  if (!strcmp(cmd, "experiment")) return cp_cli_experiment(argc - 1, argv + 1);
  if (!strcmp(cmd, "plan")) return cp_cli_plan(argc - 1, argv + 1);
  if (!strcmp(cmd, "plans")) return cp_cli_plans(argc - 1, argv + 1);
  if (!strcmp(cmd, "replay")) return cp_cli_replay(argc - 1, argv + 1);
  if (!strcmp(cmd, "stability")) return cp_cli_stability(argc - 1, argv + 1);
  if (!strcmp(cmd, "assemble")) return cp_cli_assemble(argc - 1, argv + 1);
  return cp_cli_usage_error(NULL, "unknown command '%s'", cmd);
}
