// The OMPL adapter's cost per propagation step over bare cp_world_step
// (issue 29's target: <= 5 %). Run from the source root:
//   ./build/experiments/bench_ompl [TASK [ACTIONS [TRIALS]]]
// Both sides simulate the same actions from the task's start, each action
// as the search does it (state, warm start, inputs, round(T / h) steps):
//   bare:    cp_world_set_state / warm_set / set_effort, cp_world_step
//   adapter: OMPL's SpaceInformation::propagate with the adapter's control,
//            one call per world step (Mode::STEP), through the state space's
//            conversions, the propagator and the planner's action code.
// Times are the thread's CPU time, the least of TRIALS trials (the machine
// is shared); results in experiments/results/ompl.md.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <ompl/util/Console.h>

#include "models/clock.h"
#include "planner/ompl/ompl.hpp"

namespace ob = ompl::base;
namespace oc = ompl::control;

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "planner/tasks/push.json";
  int n_actions = argc > 2 ? std::atoi(argv[2]) : 40;
  int trials = argc > 3 ? std::atoi(argv[3]) : 7;
  ompl::msg::setLogLevel(ompl::msg::LOG_NONE);
  cp_task task;
  cp_error err;
  if (cp_task_load(path, &task, &err)) {
    std::fprintf(stderr, "%s: %s: %s\n", path, err.where, err.msg);
    return 2;
  }
  for (int i = 0; i < task.n_inputs; ++i)
    if (task.inputs[i].kind != CP_INPUT_EFFORT) {
      std::fprintf(stderr, "%s: the bare loop sets efforts only\n", path);
      return 2;
    }
  auto p = cp_ompl::Problem::create(&task, cp_ompl::Mode::STEP, &err);
  if (!p) {
    std::fprintf(stderr, "%s: %s\n", path, err.msg);
    return 2;
  }
  const oc::SpaceInformationPtr &si = p->setup().getSpaceInformation();
  si->setup();
  cp_world_options wo = cp_plan_world_options_of(&task, 1);
  cp_world *w;
  if (cp_world_create(&task.scene, &wo, &w, &err) != CP_WORLD_OK) return 2;
  int n = cp_world_state_size(w);
  std::vector<double> x0(n), x(n), values((size_t)task.n_inputs);
  cp_world_get_state(w, x0.data());
  std::vector<long> acts;
  for (int j = 0; j < n_actions; ++j) acts.push_back((5 * j + 1) % task.n_actions);

  double best_bare = 1e30, best_ompl = 1e30;
  long steps_bare = 0, steps_ompl = 0;
  ob::State *s = si->allocState();
  oc::Control *c = si->allocControl();
  std::vector<unsigned char> warm;
  for (int trial = 0; trial < trials; ++trial) {
    /* bare */
    double t0 = cp_clock_thread_cpu();
    long steps = 0;
    x = x0;
    warm.clear();
    for (long a : acts) {
      if (cp_world_set_state(w, x.data()) != CP_WORLD_OK) break;
      if (!warm.empty()) cp_world_warm_set(w, warm.data(), warm.size());
      cp_task_action_values(&task, a, values.data());
      for (int i = 0; i < task.n_inputs; ++i)
        if (task.mode == CP_TASK_QUASISTATIC)
          cp_world_set_joint_velocity(w, task.inputs[i].row, values[i]);
        else
          cp_world_set_effort(w, task.inputs[i].row, values[i]);
      int k = 0;
      cp_step_info info;
      for (; k < task.steps && cp_world_step(w, &info) == CP_WORLD_OK; ++k) ++steps;
      if (k < task.steps) break;
      cp_world_get_state(w, x.data());
      warm.resize(cp_world_warm_size(w));
      cp_world_warm_get(w, warm.data(), warm.size());
    }
    double bare = cp_clock_thread_cpu() - t0;
    /* adapter */
    si->copyState(s, p->setup().getProblemDefinition()->getStartState(0));
    p->resetCounts();
    t0 = cp_clock_thread_cpu();
    for (long a : acts) {
      p->controls()->setAction(c, a);
      if (si->propagateWhileValid(s, c, task.steps, s) < (unsigned)task.steps) break;
    }
    double adapter = cp_clock_thread_cpu() - t0;
    if (bare / steps < best_bare) best_bare = bare / steps;
    if (adapter / p->counts().steps < best_ompl)
      best_ompl = adapter / p->counts().steps;
    steps_bare = steps;
    steps_ompl = p->counts().steps;
  }
  std::printf("task %s: %d actions of %d steps, least of %d trials\n", path,
              n_actions, task.steps, trials);
  std::printf("  bare cp_world_step:   %ld steps, %.2f us/step\n", steps_bare,
              1e6 * best_bare);
  std::printf("  adapter (Mode::STEP): %ld steps, %.2f us/step\n", steps_ompl,
              1e6 * best_ompl);
  std::printf("  overhead: %+.2f %%\n", 100 * (best_ompl / best_bare - 1));
  si->freeState(s);
  si->freeControl(c);
  cp_world_destroy(w);
  p.reset();
  cp_task_free(&task);
  return steps_bare == steps_ompl ? 0 : 1;
}
