/// \file planner/ompl/ompl.hpp
/// complan inside OMPL (docs/ompl.md): a planning task (planner/search/task.h)
/// bound to the simulator (cp_plan_world, planner/plan/plan.h) as OMPL's
/// control-based planning problem, so that OMPL's planners (RRT, EST,
/// KPIECE1, PDST, SST, or a program's own) plan through contact with
/// complan's model, and their plans go into complan's database.
///
/// The pieces:
///   - WorldStateSpace: the world state as OMPL components, per free body an
///     SE(3) component (position within the task's bounds, rotation) and a
///     6-vector of linear and angular velocity; one vector of joint
///     positions and rates; one of the goal's entries (phase, contact
///     flags) when the task has them. A state also carries what OMPL does
///     not see: the step reached inside the action in progress, that
///     action, the outcome of the step that made it, its time and the LCP
///     warm start (the world's basis after the action that made it).
///     Distances are complan's task metric (the search's embedding).
///   - ActionControlSpace: the task's inputs as a real vector (each input
///     between its least and greatest value); every control is one of the
///     task's actions (a grid index, or with continuous sampling a seed) and
///     carries its index, so that a control's values are exactly the
///     action's (cp_task_action_values).
///   - WorldPropagator: one OMPL propagation step. Mode STEP: one world step
///     (the propagation step size is the task's dt and a control lasts the
///     task's round(T / h) steps); mode ACTION: one whole action (step size
///     T, a control lasts one step). Both go through the planner's own
///     action code (cp_plan_world_begin / advance / end), so trajectories
///     are bitwise those of cp_world and of complan's search.
///   - WorldValidityChecker: a state made by a rejected step (penetration,
///     joint limit, out of bounds, fallback not allowed, solver failure,
///     non-finite) is invalid.
///   - TaskGoal: the task's goal terms (distanceGoal: complan's goal
///     distance; satisfied: complan's in_goal, at_rest and phases included).
///   - an optimisation objective of complan's cost (the action that made a
///     state, plus cost.path), which OMPL's SST minimises.
///   - Problem: all of it over one cp_plan_world, with OMPL's SimpleSetup.
///
/// Ownership: a Problem owns its cp_plan_world; it borrows the task, which
/// must outlive it. Nothing here prints (OMPL's own log is the caller's to
/// set; the C entry points silence it).
#ifndef CP_PLANNER_OMPL_HPP
#define CP_PLANNER_OMPL_HPP

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <ompl/base/ProjectionEvaluator.h>
#include <ompl/base/StateValidityChecker.h>
#include <ompl/base/goals/GoalRegion.h>
#include <ompl/base/spaces/SE3StateSpace.h>
#include <ompl/base/spaces/RealVectorStateSpace.h>
#include <ompl/control/SimpleSetup.h>
#include <ompl/control/StatePropagator.h>
#include <ompl/control/spaces/RealVectorControlSpace.h>

#include "planner/plan/plan.h"
#include "planner/sim/statelayout.h"
#include "planner/store/store.h"

namespace cp_ompl {

/// What one OMPL propagation step is (see the file comment).
enum class Mode { STEP, ACTION };

/// Counts over a Problem's life (reset with Problem::resetCounts).
struct Counts {
  long propagations = 0; ///< StatePropagator::propagate calls
  long actions = 0;      ///< actions begun (complan's expansions)
  long rejected = 0;     ///< propagations that ended in a rejected step
  long long steps = 0, lcp_solves = 0, pivots = 0, fallbacks = 0,
            warm_steps = 0;
};

class WorldStateSpace : public ompl::base::CompoundStateSpace {
public:
  class StateType : public ompl::base::CompoundStateSpace::StateType {
  public:
    int step = 0;      ///< world steps taken in `action` (0: between actions)
    long action = -1;  ///< the action in progress, or that made the state
    int outcome = 0;   ///< cp_expand_outcome of the step that made it
    double time = 0;   ///< s
    /// complan's cost of the path to this state from the start (the
    /// actions that made it, cost.path included; inside an action: the
    /// cost before it)
    double cost = 0;
    std::vector<unsigned char> warm; ///< LCP warm start (after an action)
  };

  /// The space of task's world; problem is cp_plan_world_problem of a
  /// world of that task (its embedding is the distance), x0 its start (a
  /// task without bounds gets its bodies' start +- 1 m).
  WorldStateSpace(const cp_task *task, const cp_search_problem *problem,
                  const double *x0);
  ~WorldStateSpace() override;

  /// complan's state vector (the problem's n numbers) of s, and back.
  void toVector(const ompl::base::State *s, double *x) const;
  void fromVector(const double *x, ompl::base::State *s) const;
  int size() const { return n_; }
  /// Offset of free body f in the state vector, its SE(3) component.
  int bodyOffset(int f) const;

  double distance(const ompl::base::State *a,
                  const ompl::base::State *b) const override;
  ompl::base::State *allocState() const override;
  void freeState(ompl::base::State *s) const override;
  void copyState(ompl::base::State *dst,
                 const ompl::base::State *src) const override;
  bool equalStates(const ompl::base::State *a,
                   const ompl::base::State *b) const override;
  void registerProjections() override;

private:
  const cp_task *task_;
  const cp_search_problem *problem_;
  cp_state_layout lay_;
  int n_, nw_, n_joints_;
  int goal_free_; ///< free index of the goal body (projection)
  mutable std::vector<double> xa_, xb_, ea_, eb_;
};

class ActionControlSpace : public ompl::control::RealVectorControlSpace {
public:
  class ControlType : public ompl::control::RealVectorControlSpace::ControlType {
  public:
    long action = 0; ///< the task's action (grid index or seed)
  };
  ActionControlSpace(const ompl::base::StateSpacePtr &space,
                     const cp_task *task);
  /// Makes c action a (its index and its values).
  void setAction(ompl::control::Control *c, long a) const;
  ompl::control::Control *allocControl() const override;
  void freeControl(ompl::control::Control *c) const override;
  void copyControl(ompl::control::Control *dst,
                   const ompl::control::Control *src) const override;
  bool equalControls(const ompl::control::Control *a,
                     const ompl::control::Control *b) const override;
  void nullControl(ompl::control::Control *c) const override;
  ompl::control::ControlSamplerPtr allocDefaultControlSampler() const override;

private:
  const cp_task *task_;
};

class Problem;

class WorldPropagator : public ompl::control::StatePropagator {
public:
  WorldPropagator(Problem *p);
  void propagate(const ompl::base::State *state,
                 const ompl::control::Control *control, double duration,
                 ompl::base::State *result) const override;

private:
  Problem *p_;
};

class WorldValidityChecker : public ompl::base::StateValidityChecker {
public:
  explicit WorldValidityChecker(const ompl::base::SpaceInformationPtr &si)
      : ompl::base::StateValidityChecker(si) {}
  bool isValid(const ompl::base::State *s) const override;
};

class TaskGoal : public ompl::base::GoalRegion {
public:
  TaskGoal(const ompl::base::SpaceInformationPtr &si, Problem *p);
  double distanceGoal(const ompl::base::State *s) const override;
  bool isSatisfied(const ompl::base::State *s, double *distance) const override;
  /// The least goal distance of the valid states isSatisfied was asked
  /// about (every planner asks about each state it keeps; infinity before
  /// any): a run's progress, at no extra cost.
  double bestDistance() const { return best_; }
  /// The cheapest plan so far: the least cost of a state between actions
  /// found in the goal (NaN before any). A planner that goes on after a
  /// plan (SST) finds cheaper ones; each calls onPlan(cost) when set.
  double bestCost() const { return best_cost_; }
  std::function<void(double)> onPlan;

private:
  Problem *p_;
  mutable std::vector<double> x_;
  mutable double best_, best_cost_;
};

/// A task as an OMPL control problem. After create(), setup() is OMPL's
/// SimpleSetup with the space, the propagator, the validity checker, the
/// start state (the task's) and the goal set; choose a planner (planner()
/// or your own) and solve.
class Problem {
public:
  /// Builds the world of task (cp_plan_world_create, warm starts on).
  /// Returns nullptr with err set when the task cannot be simulated.
  static std::unique_ptr<Problem> create(const cp_task *task, Mode mode,
                                         cp_error *err);
  ~Problem();
  Problem(const Problem &) = delete;
  Problem &operator=(const Problem &) = delete;

  ompl::control::SimpleSetup &setup() { return *ss_; }
  const std::shared_ptr<WorldStateSpace> &space() const { return space_; }
  const std::shared_ptr<ActionControlSpace> &controls() const { return cspace_; }
  const cp_task *task() const { return task_; }
  cp_plan_world *world() const { return pw_; }
  Mode mode() const { return mode_; }
  /// Control steps in one of the task's actions (STEP: round(T / h);
  /// ACTION: 1).
  unsigned int actionSteps() const;
  const Counts &counts() const { return counts_; }
  void resetCounts() { counts_ = Counts(); }

  /// One of OMPL's control planners by name ("RRT", "EST", "KPIECE1",
  /// "PDST", "SST"), set up with the task's goal bias (and SST's radii from
  /// the task's delta_bn, delta_s); nullptr for another name.
  ompl::base::PlannerPtr planner(const std::string &name) const;

private:
  Problem() = default;
  friend class WorldPropagator;
  const cp_task *task_ = nullptr;
  cp_plan_world *pw_ = nullptr;
  Mode mode_ = Mode::STEP;
  std::shared_ptr<WorldStateSpace> space_;
  std::shared_ptr<ActionControlSpace> cspace_;
  std::unique_ptr<ompl::control::SimpleSetup> ss_;
  /* The propagator's memory: the state the world holds after the last
   * step (so a propagation that continues it does not set the state
   * again), scratch vectors, the last expansion's record. */
  mutable Counts counts_;
  mutable std::vector<double> cur_, x_, y_;
  /* The action in progress (STEP): the state it began in, and its cost. */
  mutable std::vector<double> start_;
  mutable double start_cost_ = 0;
  mutable bool has_cur_ = false;
  mutable long cur_action_ = -1;
  mutable cp_expansion info_;
};

/// The path OMPL found (a solution path of p's setup) as a complan plan in
/// st: the task's row, a search run of `planner` (options: JSON text), its
/// start node and one node per action of the path, each re-simulated by
/// the search's own expansion from its parent (with the parent's warm
/// start) and checked bitwise against the path's state; the run's totals
/// are p's counts. `replay --verify` and the viewer then work on it.
/// Returns CP_PLAN_SOLVED with res->plan_id; CP_PLAN_FAILED when a control
/// is not held for whole actions, a re-simulated state differs from OMPL's
/// (err names the action) or the store fails.
cp_plan_status storePath(cp_store *st, Problem &p,
                         const ompl::control::PathControl &path,
                         const char *planner, const char *options,
                         const char *task_path, std::uint64_t seed,
                         double seconds, cp_plan_result *res, cp_error *err);

} // namespace cp_ompl

#endif
