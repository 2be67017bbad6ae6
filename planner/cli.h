/// \file planner/cli.h
/// The `complan` command line: one executable, subcommands. main() only calls
/// cp_cli_main; each subcommand parses its flags and calls into the modules.
/// Exit status: 0 answered, 1 undecided, 2 bad input or usage.
#ifndef CP_PLANNER_CLI_H
#define CP_PLANNER_CLI_H

/// Runs complan with the given arguments; returns the exit status.
int cp_cli_main(int argc, char **argv);

/// `complan lcp ...` (planner/cli_lcp.c). argv[0] is "lcp".
int cp_cli_lcp(int argc, char **argv);

/// `complan solve ...` (planner/cli_solve.c). argv[0] is "solve".
int cp_cli_solve(int argc, char **argv);

/// `complan contacts ...` (planner/cli_contacts.c). argv[0] is "contacts".
int cp_cli_contacts(int argc, char **argv);

/// `complan experiment ...` (planner/cli_experiment.c). argv[0] is
/// "experiment".
int cp_cli_experiment(int argc, char **argv);

/// `complan plan ...` (planner/cli_plan.c). argv[0] is "plan".
int cp_cli_plan(int argc, char **argv);

/// `complan plans ...` (planner/cli_plans.c). argv[0] is "plans".
int cp_cli_plans(int argc, char **argv);

/// `complan replay ...` (planner/cli_replay.c). argv[0] is "replay".
int cp_cli_replay(int argc, char **argv);
/// `complan simulate ...` (planner/cli_simulate.c). argv[0] is "simulate".
int cp_cli_simulate(int argc, char **argv);

/// `complan stability ...` (planner/cli_stability.c). argv[0] is "stability".
int cp_cli_stability(int argc, char **argv);

/// `complan assemble ...` (planner/cli_assemble.c). argv[0] is "assemble".
int cp_cli_assemble(int argc, char **argv);

/// Fetches the value of a flag at argv[*i]: accepts `--flag VALUE` and
/// `--flag=VALUE`. Returns the value and advances *i, or NULL when argv[*i]
/// is not this flag. Sets *missing when the flag is present without a value.
const char *cp_cli_flag_value(int argc, char **argv, int *i, const char *flag,
                              int *missing);

/// When arg is "--verbose": sends GLPK's terminal output to stderr (it is
/// dropped otherwise; stdout only ever holds the command's own output) and
/// returns 1. Returns 0 for any other argument. Accepted by every command
/// that solves.
int cp_cli_verbose_flag(const char *arg);

#endif
