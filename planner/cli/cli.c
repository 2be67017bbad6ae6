/* The dispatcher of `complan` (planner/cli/cli.h): the command table and
 * the help made from it. The commands live one per file
 * (planner/cli/commands.h). */
#include "planner/cli/cli.h"

#include <cblas.h>
#include <stdio.h>
#include <string.h>

#include "planner/cli/commands.h"
#include "planner/cli/flags.h"
#include "planner/cli/output.h"
#include "planner/io/outfile.h"

/* One row per command, in the order of `complan --help`. */
const cp_cli_command cp_cli_commands[] = {
    {"solve", "SCENE", "the contact problem: accelerations and contact forces",
     "solve SCENE [options]", cp_cli_solve},
    {"contacts", "SCENE", "list the contacts generated from the shapes",
     "contacts SCENE [options]", cp_cli_contacts},
    {"simulate", "SCENE", "step a scene in time (contacts, impacts, friction)",
     "simulate SCENE [options]", cp_cli_simulate},
    {"lcp solve", "FILE", "solve a raw LCP (JSON or Siconos .dat)",
     "lcp solve FILE [options]", cp_cli_lcp_solve},
    {"lcp certify", "FILE", "decide exactly whether an LCP has a solution (MILP)",
     "lcp certify FILE [--second] [options]", cp_cli_lcp_certify},
    {"experiment paper", "", "reproduce the paper's computational study (section 6)",
     "experiment paper [--out DIR] [--seed S] [--jobs N] [options]",
     cp_cli_experiment_paper},
    {"plan", "TASK", "plan a task; every explored state goes to SQLite",
     "plan TASK [options]\n"
     "plan TASK --benchmark RUNS [--planners a,b] [--db FILE]",
     cp_cli_plan},
    {"plans", "", "list the runs and plans in a planner database",
     "plans [--db FILE] [--json]", cp_cli_plans},
    {"replay", "", "re-simulate a stored plan, verify, export, view", "replay [options]",
     cp_cli_replay},
    {"stability", "SCENE", "is the assembly at rest strongly/weakly stable or not",
     "stability SCENE [options]", cp_cli_stability},
    {"assemble", "SCENE", "plan a stable assembly sequence (SQLite, --db)",
     "assemble SCENE [options]", cp_cli_assemble},
};
const int cp_cli_n_commands = (int)(sizeof cp_cli_commands / sizeof *cp_cli_commands);

static const char intro[] =
    "Planning robot manipulation through contact: the rigid-body contact model\n"
    "of Trinkle, Pang, Sudarsky and Lo (1995) with Coulomb friction, solved as a\n"
    "linear complementarity problem (LCP).\n"
    "\n";
static const char options[] =
    "\n"
    "options:\n"
    "  -h, --help         this text; 'complan COMMAND --help' for a command\n"
    "  help COMMAND       the same as 'complan COMMAND --help'\n"
    "  --version          print the version\n"
    "\n"
    "exit status: 0 answered (including a proof that no solution exists),\n"
    "1 undecided (iteration cap, numerical failure), 2 bad input or usage.\n";

/* Length of a name's first word ("lcp" of "lcp solve"). */
static size_t group_len(const char *name) { return strcspn(name, " "); }

/* The command's word within its group ("solve" of "lcp solve"); "" for a
 * command of one word. */
static const char *sub_name(const cp_cli_command *c) {
  const char *sp = strchr(c->name, ' ');
  return sp ? sp + 1 : "";
}

/* Does row c belong to the group (first word) g? */
static int in_group(const cp_cli_command *c, const char *g) {
  size_t n = group_len(c->name);
  return strlen(g) == n && !strncmp(c->name, g, n);
}

/* The list of commands: every row, or those of group g. */
static void list_commands(const char *g, FILE *out) {
  fputs("commands:\n", out);
  for (int k = 0; k < cp_cli_n_commands; k++) {
    const cp_cli_command *c = &cp_cli_commands[k];
    if (g && !in_group(c, g)) continue;
    char left[64];
    snprintf(left, sizeof left, "%s%s%s", c->name, c->operand[0] ? " " : "", c->operand);
    fprintf(out, "  %-18s %s\n", left, c->summary);
  }
}

/* `complan --help`, and `complan` alone (on stderr). */
static void top_usage(FILE *out) {
  fputs("usage: complan COMMAND [ARGS]\n\n", out);
  fputs(intro, out);
  list_commands(NULL, out);
  fputs(options, out);
}

/* A group's usage (`complan lcp`): its rows' usage lines and list. */
static void group_usage(const char *g, FILE *out) {
  int first = 1;
  for (int k = 0; k < cp_cli_n_commands; k++)
    if (in_group(&cp_cli_commands[k], g)) {
      cp_cli_usage_lines(cp_cli_commands[k].usage, first, out);
      first = 0;
    }
  fputc('\n', out);
  list_commands(g, out);
  fprintf(out, "\n'complan %s COMMAND --help' for a command's flags.\n", g);
}

/* The second words of group g's rows, "solve or certify", for a message. */
static void group_words(const char *g, char *buf, size_t n) {
  int count = 0, seen = 0;
  for (int k = 0; k < cp_cli_n_commands; k++) count += in_group(&cp_cli_commands[k], g);
  size_t used = 0;
  buf[0] = '\0';
  for (int k = 0; k < cp_cli_n_commands && used < n; k++) {
    const cp_cli_command *c = &cp_cli_commands[k];
    if (!in_group(c, g)) continue;
    const char *sep = seen == 0 ? "" : seen == count - 1 ? " or " : ", ";
    int w = snprintf(buf + used, n - used, "%s%s", sep, sub_name(c));
    if (w < 0) break;
    used += (size_t)w;
    seen++;
  }
}

static int is_help(const char *a) { return !strcmp(a, "-h") || !strcmp(a, "--help"); }

/* Runs the command named by argv[1] (and argv[2] for a group). */
static int dispatch(int argc, char **argv) {
  const char *first = argv[1];
  const cp_cli_command *row = NULL;
  for (int k = 0; k < cp_cli_n_commands && !row; k++)
    if (in_group(&cp_cli_commands[k], first)) row = &cp_cli_commands[k];
  if (!row) return cp_cli_usage_error(NULL, "unknown command '%s'", first);
  if (!*sub_name(row)) return row->run(row, argc - 1, argv + 1);
  /* A group: its command is the next word. */
  if (argc < 3 || is_help(argv[2])) {
    group_usage(first, argc < 3 ? stderr : stdout);
    return argc < 3 ? CP_EXIT_BAD_INPUT : CP_EXIT_ANSWERED;
  }
  for (int k = 0; k < cp_cli_n_commands; k++) {
    const cp_cli_command *c = &cp_cli_commands[k];
    if (in_group(c, first) && !strcmp(sub_name(c), argv[2]))
      return c->run(c, argc - 2, argv + 2);
  }
  char words[256], cmd[64];
  group_words(first, words, sizeof words);
  snprintf(cmd, sizeof cmd, "%s ", first);
  return cp_cli_usage_error(cmd, "unknown %s command '%s' (expected %s)", first, argv[2], words);
}

int cp_cli_main(int argc, char **argv) {
  /* At the sizes complan works with, BLAS threads cost more than they give;
   * parallelism belongs to searches and experiments. */
  openblas_set_num_threads(1);
  cp_cli_output_begin();
  /* An interrupted command leaves no temporary file (planner/io/outfile.h). */
  cp_outfile_catch_signals();
  if (argc < 2) {
    top_usage(stderr);
    return CP_EXIT_BAD_INPUT;
  }
  const char *cmd = argv[1];
  if (is_help(cmd) || (!strcmp(cmd, "help") && argc == 2)) {
    top_usage(stdout);
    return CP_EXIT_ANSWERED;
  }
  if (!strcmp(cmd, "--version")) {
    printf("complan 0.1.0\n");
    return CP_EXIT_ANSWERED;
  }
  if (!strcmp(cmd, "help")) {
    /* `complan help A [B]` is `complan A [B] --help`. */
    if (argc > 4) return cp_cli_usage_error(NULL, "help takes a command, found '%s'", argv[4]);
    char *args[5] = {argv[0]};
    int n = 1;
    for (int i = 2; i < argc; i++) args[n++] = argv[i];
    args[n++] = "--help";
    return dispatch(n, args);
  }
  return dispatch(argc, argv);
}
