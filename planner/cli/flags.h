/// \file planner/cli/flags.h
/// The one flag parser of the `complan` commands (planner/cli/flags.c): a
/// command describes its flags in a table, the parser reads argv by it and
/// prints --help from it. Also the strict number parsers it uses.
#ifndef CP_PLANNER_CLI_FLAGS_H
#define CP_PLANNER_CLI_FLAGS_H

#include <stdint.h>
#include <stdio.h>

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
  const char *head; ///< help before the flag list (the description; with
                    ///< usage NULL, the usage line too)
  const char *tail; ///< help after the flag list (notes, exit status)
  const char *operand; ///< "SCENE": exactly one required; NULL: none accepted
  const char **operand_dest;
  const cp_cli_flag *flags;
  int n_flags;
  unsigned mode; ///< selects the flags with a matching `modes` (lcp solve/certify)
  const char *usage; ///< the usage lines without "complan ", one per '\n'
                     ///< (the command table's: planner/cli/commands.h),
                     ///< printed first as "usage: complan LINE"; NULL: none
} cp_cli_spec;

/// cp_cli_parse's answer when the command should go on.
#define CP_CLI_GO (-1)

/// Parses argv[1..argc-1] (argv[0] is the command's name) by spec.
/// Returns CP_CLI_GO when every argument was stored, 0 after printing --help
/// on stdout, or 2 after printing a usage error on stderr.
int cp_cli_parse(const cp_cli_spec *spec, int argc, char **argv);

/// Prints spec's --help: the usage lines, head, the flag list made from the
/// table, tail.
void cp_cli_help(const cp_cli_spec *spec, FILE *out);

/// Prints the usage lines of a command table row ("plan TASK [options]\n
/// plan TASK --benchmark ..."), each as "       complan LINE", the first
/// as "usage: complan LINE" when first is set.
void cp_cli_usage_lines(const char *usage, int first, FILE *out);

/// The --solver names, index = cp_lcp_solver: lemke, fip, certify, auto.
extern const char *const cp_cli_solver_names[];

/* The numeric flag parsers (the one place that parses numbers on the
 * command line). All are strict: the whole string is the number, in plain
 * decimal; no leading or trailing spaces, no '+', no hexadecimal, no inf
 * or nan; out of range or overflow is an error. */

/// A whole number in [lo, hi] (an optional leading '-'). Returns 0 or -1.
int cp_parse_int(const char *s, long lo, long hi, long *out);
/// A whole number in [0, 2^64 - 1] (e.g. a seed). Returns 0 or -1.
int cp_parse_u64(const char *s, uint64_t *out);
/// A finite decimal number (123, -1.5, 2e-3) in [lo, hi]. Returns 0 or -1.
int cp_parse_double(const char *s, double lo, double hi, double *out);

#endif
