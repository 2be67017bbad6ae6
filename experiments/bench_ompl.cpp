// The OMPL adapter's cost per propagation step over bare cp_world_step
// (issue 29's target: <= 5 %). Run from the source root:
//   ./build/experiments/bench_ompl [TASK [ACTIONS [TRIALS]]]
// All three simulate the same actions from the task's start, each action
// as the search does it (state, warm start, inputs, round(T / h) steps):
//   bare:      cp_world_set_state / warm_set / set_effort, cp_world_step
//   expansion: the search's expansion (cp_plan_world's problem): the same,
//              plus what complan does after every step (the state read
//              back, the goal's contact flags, the bounds check)
//   adapter:   OMPL's SpaceInformation::propagateWhileValid with the
//              adapter's control, one propagate call per world step
//              (Mode::STEP): the state space's conversions, the propagator
//              and the expansion's own step code.
// Times are the thread's CPU time; the machine is shared, so each trial runs
// the three one after the other and the overheads printed are the medians of
// the trials' ratios (and the per-step times the least over the trials);
// results in experiments/results/ompl.md.
#include <algorithm>
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
  int n_actions = argc > 2 ? std::atoi(argv[2]) : 16;
  int trials = argc > 3 ? std::atoi(argv[3]) : 21;
  if (n_actions < 1 || trials < 1) return 2;
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
  for (int j = 0; j < n_actions; ++j) acts.push_back(j % task.n_actions);
  cp_plan_world *pw;
  if (cp_plan_world_create(&task, 1, &pw, &err)) return 2;
  const cp_search_problem *sp = cp_plan_world_problem(pw);
  std::vector<double> ex(sp->n), ey(sp->n);

  double best_bare = 1e30, best_ompl = 1e30, best_exp = 1e30;
  std::vector<double> r_exp, r_ompl, r_oe;
  long steps_bare = 0, steps_ompl = 0, steps_exp = 0;
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
    /* the search's expansion */
    t0 = cp_clock_thread_cpu();
    long esteps = 0;
    std::copy(cp_plan_world_start(pw), cp_plan_world_start(pw) + sp->n, ex.begin());
    warm.clear();
    double t = 0;
    for (long a : acts) {
      cp_expansion info;
      std::memset(&info, 0, sizeof info);
      if (sp->expand(sp->ctx, ex.data(), t, warm.data(), warm.size(), a,
                     ey.data(), &info) || info.outcome != CP_EXPAND_OK)
        break;
      esteps += info.steps;
      const auto *wb = static_cast<const unsigned char *>(info.warm);
      warm.assign(wb, wb + info.warm_size);
      ex.swap(ey);
      t += task.duration;
    }
    double expansion = cp_clock_thread_cpu() - t0;
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
    if (expansion / esteps < best_exp) best_exp = expansion / esteps;
    steps_exp = esteps;
    if (adapter / p->counts().steps < best_ompl)
      best_ompl = adapter / p->counts().steps;
    steps_bare = steps;
    steps_ompl = p->counts().steps;
    r_exp.push_back((expansion / esteps) / (bare / steps));
    r_ompl.push_back((adapter / steps_ompl) / (bare / steps));
    r_oe.push_back((adapter / steps_ompl) / (expansion / esteps));
  }
  std::printf("task %s: %d actions of %d steps, least of %d trials\n", path,
              n_actions, task.steps, trials);
  std::printf("  bare cp_world_step:   %ld steps, %.2f us/step\n", steps_bare,
              1e6 * best_bare);
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::printf("  search's expansion:   %ld steps, %.2f us/step (median %+.2f %% over bare)\n",
              steps_exp, 1e6 * best_exp, 100 * (median(r_exp) - 1));
  std::printf("  adapter (Mode::STEP): %ld steps, %.2f us/step (median %+.2f %% over bare, "
              "%+.2f %% over the expansion)\n", steps_ompl, 1e6 * best_ompl,
              100 * (median(r_ompl) - 1), 100 * (median(r_oe) - 1));
  si->freeState(s);
  si->freeControl(c);
  cp_world_destroy(w);
  cp_plan_world_destroy(pw);
  p.reset();
  cp_task_free(&task);
  return steps_bare == steps_ompl && steps_exp == steps_ompl ? 0 : 1;
}
