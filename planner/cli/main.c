#include "planner/cli/cli.h"
#ifdef CP_HAVE_OMPL
#include "planner/ompl/run.h"
static const cp_cli_ompl ompl = {cp_ompl_methods, cp_ompl_plan_task,
                                 cp_ompl_benchmark};
#endif
int main(int argc, char **argv) {
#ifdef CP_HAVE_OMPL
  cp_cli_set_ompl(&ompl);
#endif
  return cp_cli_main(argc, argv);
}
