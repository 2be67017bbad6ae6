/// \file planner/cli/cli.h
/// The `complan` command line: one executable, subcommands. main() only calls
/// cp_cli_main; each subcommand parses its flags and calls into the modules.
/// Exit status: 0 answered, 1 undecided, 2 bad input or usage.
#ifndef CP_PLANNER_CLI_H
#define CP_PLANNER_CLI_H

#include <stdio.h>

/// Runs complan with the given arguments; returns the exit status.
int cp_cli_main(int argc, char **argv);

/// `complan lcp ...` (planner/cli/lcp.c). argv[0] is "lcp".
int cp_cli_lcp(int argc, char **argv);

/// `complan solve ...` (planner/cli/solve.c). argv[0] is "solve".
int cp_cli_solve(int argc, char **argv);

/// `complan contacts ...` (planner/cli/contacts.c). argv[0] is "contacts".
int cp_cli_contacts(int argc, char **argv);

/// `complan experiment ...` (planner/cli/experiment.c). argv[0] is
/// "experiment".
int cp_cli_experiment(int argc, char **argv);

/// `complan plan ...` (planner/cli/plan.c). argv[0] is "plan".
int cp_cli_plan(int argc, char **argv);

/// `complan plans ...` (planner/cli/plans.c). argv[0] is "plans".
int cp_cli_plans(int argc, char **argv);

/// `complan replay ...` (planner/cli/replay.c). argv[0] is "replay".
int cp_cli_replay(int argc, char **argv);
/// `complan simulate ...` (planner/cli/simulate.c). argv[0] is "simulate".
int cp_cli_simulate(int argc, char **argv);

/// `complan stability ...` (planner/cli/stability.c). argv[0] is "stability".
int cp_cli_stability(int argc, char **argv);

/// `complan assemble ...` (planner/cli/assemble.c). argv[0] is "assemble".
int cp_cli_assemble(int argc, char **argv);

/* --- one flag parser for every command ------------------------------------
 * Each command describes its flags in a table (cp_cli_flag, in the order its
 * --help lists them) and hands it with its help texts to cp_cli_parse, which
 * reads argv, stores each value through the entry's destination and prints
 * --help from the table. The rules are the same for every command:
 *   --flag VALUE and --flag=VALUE; a bool flag takes no value;
 *   -h / --help anywhere prints the help and ends the command (exit 0) --
 *   arguments before it are parsed first, so a bad one is reported instead;
 *   numbers are strict (cp_parse_int and friends below) and range-checked;
 *   an unknown flag, a missing or bad value, a path flag given twice, a
 *   missing or second operand are usage errors: `complan: MESSAGE` naming
 *   the flag and what it expects, then a pointer to --help, exit 2;
 *   other repeated flags: the last one counts.
 * The table's destinations are the caller's variables; the parser owns
 * nothing and allocates nothing. */

/// What a flag's value is, and the type its destination points to.
typedef enum cp_cli_kind {
  CP_FLAG_BOOL,   ///< no value; int *dest = 1
  CP_FLAG_STRING, ///< any text; const char **dest (points into argv)
  CP_FLAG_PATH,   ///< a non-empty file or directory name, at most once;
                  ///< const char **dest
  CP_FLAG_INT,    ///< whole number in [imin, imax]; int *dest
  CP_FLAG_LONG,   ///< whole number in [imin, imax]; long *dest
  CP_FLAG_U64,    ///< whole number 0 .. 2^64 - 1; uint64_t *dest
  CP_FLAG_DOUBLE, ///< finite decimal number in [dmin, dmax]; double *dest
  CP_FLAG_ENUM    ///< one of names; int *dest = its index in names
} cp_cli_kind;

/// One row of a command's flag table.
typedef struct cp_cli_flag {
  const char *name; ///< "--solver"
  const char *arg;  ///< the value's placeholder in --help ("NAME"); NULL: bool
  cp_cli_kind kind;
  void *dest;       ///< where the value goes (type: see cp_cli_kind)
  const char *help; ///< --help text; '\n' starts an indented continuation line
  long imin, imax;  ///< CP_FLAG_INT, CP_FLAG_LONG: the accepted range
  double dmin, dmax;          ///< CP_FLAG_DOUBLE: the accepted range
  const char *const *names;   ///< CP_FLAG_ENUM: NULL-terminated names
  const char *expect; ///< what a value must be, for messages ("seconds > 0");
                      ///< NULL: said from the kind and range
  unsigned modes;     ///< 0: always; else only when spec->mode & modes
} cp_cli_flag;

/* Rows of kinds that need no range or names (a positional initializer that
 * stops early would trip -Wmissing-field-initializers). */
#define CP_CLI_BOOL(NAME, DEST, HELP) \
  { .name = (NAME), .kind = CP_FLAG_BOOL, .dest = (DEST), .help = (HELP) }
#define CP_CLI_VALUE(NAME, ARG, KIND, DEST, HELP) \
  { .name = (NAME), .arg = (ARG), .kind = (KIND), .dest = (DEST), .help = (HELP) }

/// A command's command line: its help texts, operand and flag table.
typedef struct cp_cli_spec {
  const char *cmd;  ///< "lcp solve": messages point to 'complan lcp solve --help'
  const char *head; ///< help before the flag list (usage line, description)
  const char *tail; ///< help after the flag list (notes, exit status)
  const char *operand; ///< "SCENE": exactly one required; NULL: none accepted
  const char **operand_dest;
  const cp_cli_flag *flags;
  int n_flags;
  unsigned mode; ///< selects the flags with a matching `modes` (lcp solve/certify)
} cp_cli_spec;

/// cp_cli_parse's answer when the command should go on.
#define CP_CLI_GO (-1)

/// Parses argv[1..argc-1] (argv[0] is the command's name) by spec.
/// Returns CP_CLI_GO when every argument was stored, 0 after printing --help
/// on stdout, or 2 after printing a usage error on stderr.
int cp_cli_parse(const cp_cli_spec *spec, int argc, char **argv);

/// Prints spec's --help: head, the flag list made from the table, tail.
void cp_cli_help(const cp_cli_spec *spec, FILE *out);

/// The --solver names, index = cp_lcp_solver: lemke, fip, certify, auto.
extern const char *const cp_cli_solver_names[];

/// Sends GLPK's terminal output to stderr (it is dropped otherwise; stdout
/// only ever holds the command's own output): `--verbose` of every command
/// that solves.
void cp_cli_verbose(void);

#endif
