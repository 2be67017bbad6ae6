// A C++ program outside the tree that plans a complan task with one of
// OMPL's planners (docs/ompl.md): it includes only
// <complan/planner/ompl/ompl.hpp> and links with the flags of the installed
// complan-ompl.pc (install_test.sh builds and runs it).
//   usage: ompl_consumer TASK.json
#include <complan/planner/ompl/ompl.hpp>

#include <ompl/control/planners/rrt/RRT.h>
#include <ompl/util/Console.h>

#include <cstdio>

int main(int argc, char **argv) {
  if (argc != 2) return 2;
  cp_task task;
  cp_error err;
  if (cp_task_load(argv[1], &task, &err)) {
    std::fprintf(stderr, "%s: %s: %s\n", argv[1], err.where, err.msg);
    return 2;
  }
  ompl::msg::setLogLevel(ompl::msg::LOG_WARN);
  // The task as OMPL's problem: state space, controls, propagator
  // (complan's simulator), validity checker, start and goal.
  auto problem = cp_ompl::Problem::create(&task, cp_ompl::Mode::STEP, &err);
  if (!problem) {
    std::fprintf(stderr, "%s: %s\n", argv[1], err.msg);
    return 2;
  }
  ompl::control::SimpleSetup &ss = problem->setup();
  ss.setPlanner(std::make_shared<ompl::control::RRT>(ss.getSpaceInformation()));
  bool solved = ss.solve(60.0) == ompl::base::PlannerStatus::EXACT_SOLUTION;
  if (solved)
    std::printf("RRT: %zu controls, %.2f s of motion, %lld simulation steps\n",
                ss.getSolutionPath().getControlCount(),
                ss.getSolutionPath().length(), problem->counts().steps);
  problem.reset(); // before the task it borrows
  cp_task_free(&task);
  return solved ? 0 : 1;
}
