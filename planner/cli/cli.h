/// \file planner/cli/cli.h
/// The `complan` command line: one executable, subcommands. main() only calls
/// cp_cli_main, which finds the command in the table of
/// planner/cli/commands.h and runs it; each command (one file) parses its
/// flags (planner/cli/flags.h) and calls into the modules.
/// Exit status: 0 answered, 1 undecided, 2 bad input or usage.
#ifndef CP_PLANNER_CLI_H
#define CP_PLANNER_CLI_H

/// Runs complan with the given arguments; returns the exit status.
int cp_cli_main(int argc, char **argv);

#endif
