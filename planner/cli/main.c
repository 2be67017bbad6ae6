#include "planner/cli/cli.h"
#ifdef CP_HAVE_OMPL
#include "planner/ompl/run.h"
static const cp_cli_ompl ompl = {cp_ompl_methods, cp_ompl_plan_task,
                                 cp_ompl_benchmark};
#endif
#ifdef CP_HAVE_MPI
#include "planner/plan/mpi.h"
static const cp_cli_mpi mpi = {cp_plan_mpi_start, cp_plan_mpi_stop,
                               cp_plan_mpi_task, cp_plan_mpi_serve,
                               cp_plan_mpi_traffic,
                               cp_plan_mpi_rank0_times,
                               cp_plan_mpi_wait_times,
                               cp_plan_mpi_benchmark,
                               cp_plan_mpi_items_run,
                               cp_plan_mpi_items_serve};
#endif
int main(int argc, char **argv) {
#ifdef CP_HAVE_OMPL
  cp_cli_set_ompl(&ompl);
#endif
#ifdef CP_HAVE_MPI
  cp_cli_set_mpi(&mpi);
#endif
  return cp_cli_main(argc, argv);
}
