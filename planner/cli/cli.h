/// \file planner/cli/cli.h
/// The `complan` command line: one executable, subcommands. main() only calls
/// cp_cli_main, which finds the command in the table of
/// planner/cli/commands.h and runs it; each command (one file) parses its
/// flags (planner/cli/flags.h) and calls into the modules.
/// Exit status: 0 answered, 1 undecided, 2 bad input or usage.
#ifndef CP_PLANNER_CLI_H
#define CP_PLANNER_CLI_H

#include <stdint.h>

#include "planner/plan/plan.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Runs complan with the given arguments; returns the exit status.
int cp_cli_main(int argc, char **argv);

/// Planners from outside the C library: OMPL's, through the adapter
/// (planner/ompl/run.h, C++). The executable registers them at start when
/// it is built with OMPL (planner/cli/main.c); without them `plan` refuses
/// the "ompl:" methods with exit status 2, and the C library never depends
/// on C++.
typedef struct cp_cli_ompl {
  const char *const *(*methods)(void);
  cp_plan_status (*plan)(cp_store *st, const cp_task *task,
                         const char *method, const cp_plan_options *opt,
                         cp_plan_result *res, cp_error *err);
  cp_plan_status (*benchmark)(cp_store *st, const cp_task *task,
                              const char *const *methods,
                              const cp_bench_options *bo,
                              double seconds_before, int64_t *experiment_id,
                              cp_error *err);
} cp_cli_ompl;

/// Registers (NULL: removes) the OMPL planners.
void cp_cli_set_ompl(const cp_cli_ompl *ompl);

struct cp_plan_mpi_items; /* planner/plan/mpi.h */
struct cp_plan_mpi_rank0;
struct cp_plan_mpi_waits;

/// MPI planning (planner/plan/mpi.h), registered by an executable built
/// with MPI; without it `plan --mpi` is a usage error (exit status 2).
typedef struct cp_cli_mpi {
  int (*start)(int *rank, int *ranks, cp_error *err);
  void (*stop)(void);
  cp_plan_status (*plan)(cp_store *st, const cp_task *task,
                         const cp_plan_options *opt, cp_plan_result *res,
                         cp_error *err);
  int (*serve)(const cp_task *task, const cp_error *load_err, cp_error *err);
  void (*traffic)(long long *jobs, long long *own, long long *sent,
                  long long *received);
  /// Rank 0's time in the batches (cp_plan_mpi_rank0_times).
  void (*rank0)(struct cp_plan_mpi_rank0 *t);
  /// This rank's waits for messages (cp_plan_mpi_wait_times).
  void (*waits)(struct cp_plan_mpi_waits *w);
  cp_plan_status (*benchmark)(cp_store *st, const cp_task *task,
                              const cp_search_problem *p, const double *x0,
                              const char *world_options,
                              const cp_bench_options *opt,
                              int64_t *experiment_id, cp_error *err);
  /// `experiment paper --mpi`: independent items over the ranks.
  int (*items_run)(const struct cp_plan_mpi_items *items, cp_error *err);
  int (*items_serve)(const struct cp_plan_mpi_items *items, cp_error *err);
} cp_cli_mpi;

/// Registers (NULL: removes) MPI planning.
void cp_cli_set_mpi(const cp_cli_mpi *mpi);
/// The registered MPI planning (NULL: none).
const cp_cli_mpi *cp_cli_get_mpi(void);

#ifdef __cplusplus
}
#endif

#endif
