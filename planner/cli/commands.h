/// \file planner/cli/commands.h
/// The table of complan's commands (defined in planner/cli/cli.c) and the
/// handlers it points to, one file per command (planner/cli/NAME.c).
///
/// The table is the one source of `complan --help` (the command list),
/// `complan help COMMAND` and `complan COMMAND --help` (the usage lines
/// come from the row, the rest from the command's flag table) and of the
/// usage printed for an incomplete command line (`complan`, `complan lcp`).
/// Adding a command: a file with its handler, a declaration below, a row
/// in the table (docs/cli.md).
#ifndef CP_PLANNER_CLI_COMMANDS_H
#define CP_PLANNER_CLI_COMMANDS_H

typedef struct cp_cli_command cp_cli_command;

/// Runs a command. argv[0] is its last word ("simulate", or "solve" of
/// "lcp solve"); its arguments follow. Returns the exit status.
typedef int (*cp_cli_handler)(const cp_cli_command *cmd, int argc, char **argv);

/// One row of the table.
struct cp_cli_command {
  const char *name;    ///< "simulate", or a group and its command: "lcp solve"
  const char *operand; ///< for the list: "SCENE", "FILE"; "" when none
  const char *summary; ///< one line for the list of `complan --help`
  const char *usage;   ///< usage lines without "complan ", '\n' between
                       ///< them (cp_cli_usage_lines, planner/cli/flags.h)
  cp_cli_handler run;
};

/// The table, in the order `complan --help` lists it; n rows.
extern const cp_cli_command cp_cli_commands[];
extern const int cp_cli_n_commands;

/* The handlers (each in planner/cli/<its first word>.c). */
int cp_cli_solve(const cp_cli_command *cmd, int argc, char **argv);
int cp_cli_contacts(const cp_cli_command *cmd, int argc, char **argv);
int cp_cli_simulate(const cp_cli_command *cmd, int argc, char **argv);
int cp_cli_lcp_solve(const cp_cli_command *cmd, int argc, char **argv);
int cp_cli_lcp_certify(const cp_cli_command *cmd, int argc, char **argv);
int cp_cli_experiment_paper(const cp_cli_command *cmd, int argc, char **argv);
int cp_cli_plan(const cp_cli_command *cmd, int argc, char **argv);
int cp_cli_plans(const cp_cli_command *cmd, int argc, char **argv);
int cp_cli_replay(const cp_cli_command *cmd, int argc, char **argv);
int cp_cli_stability(const cp_cli_command *cmd, int argc, char **argv);
int cp_cli_assemble(const cp_cli_command *cmd, int argc, char **argv);

#endif
