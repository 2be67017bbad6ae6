// The OMPL adapter's spaces, propagator, validity checker and goal
// (planner/ompl/ompl.hpp).
#include "planner/ompl/ompl.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <ompl/base/OptimizationObjective.h>
#include <ompl/control/planners/est/EST.h>
#include <ompl/control/planners/kpiece/KPIECE1.h>
#include <ompl/control/planners/pdst/PDST.h>
#include <ompl/control/planners/rrt/RRT.h>
#include <ompl/control/planners/sst/SST.h>

namespace ob = ompl::base;
namespace oc = ompl::control;

namespace cp_ompl {

namespace {

// Sampling bounds of what the task does not bound: speeds (m/s; angular
// ones rad/s, ten times as much, as the metric's 0.1 m lever arm), a joint
// without limits, and the workspace of a task without bounds (this far
// around the start).
const double SPEED = 2.0, ANGULAR = 20.0, JOINT_RANGE = M_PI, REACH = 1.0;

// Components per free body: SE(3), then the velocities.
int velocity_component(int f) { return 2 * f + 1; }

void set_bounds(ob::RealVectorBounds &b, int i, double lo, double hi) {
  if (!(hi > lo)) hi = lo + 1e-9; // a degenerate side (one phase)
  b.setLow(i, lo);
  b.setHigh(i, hi);
}

// The goal body's position: KPIECE1's, EST's and PDST's projection.
class BodyProjection : public ob::ProjectionEvaluator {
public:
  BodyProjection(const ob::StateSpace *space, int component, double cell)
      : ob::ProjectionEvaluator(space), component_(component), cell_(cell) {}
  unsigned int getDimension() const override { return 3; }
  void defaultCellSizes() override { cellSizes_.assign(3, cell_); }
  void project(const ob::State *s,
               Eigen::Ref<Eigen::VectorXd> out) const override {
    const auto *se3 = s->as<ob::CompoundState>()
                          ->as<ob::SE3StateSpace::StateType>(component_);
    out[0] = se3->getX();
    out[1] = se3->getY();
    out[2] = se3->getZ();
  }

private:
  int component_;
  double cell_;
};

// Draws one of the task's actions, as complan's samplers do: a grid index
// uniformly, or with continuous sampling a seed (52 bits).
class ActionSampler : public oc::ControlSampler {
public:
  ActionSampler(const ActionControlSpace *space, const cp_task *task)
      : oc::ControlSampler(space), cs_(space), task_(task) {}
  void sample(oc::Control *c) override {
    long a;
    if (task_->n_actions <= 0x7fffffffL) {
      a = rng_.uniformInt(0, (int)(task_->n_actions - 1));
    } else {
      uint64_t hi = (uint64_t)rng_.uniformInt(0, (1 << 26) - 1),
               lo = (uint64_t)rng_.uniformInt(0, (1 << 26) - 1);
      a = (long)(((hi << 26) | lo) % (uint64_t)task_->n_actions);
    }
    cs_->setAction(c, a);
  }

private:
  const ActionControlSpace *cs_;
  const cp_task *task_;
};

// complan's cost (planner/search/task.h): a motion costs the action that
// made its end state (which the state carries), plus cost.path times the
// path bodies' travel; OMPL's SST optimises it (its default is the
// state-space length).
class ActionCostObjective : public ob::OptimizationObjective {
public:
  ActionCostObjective(const ob::SpaceInformationPtr &si, const Problem *p)
      : ob::OptimizationObjective(si), p_(p), x_((size_t)p->space()->size()),
        y_(x_.size()) {
    description_ = "complan's action cost";
  }
  ob::Cost stateCost(const ob::State *) const override { return identityCost(); }
  ob::Cost motionCost(const ob::State *a, const ob::State *b) const override {
    long act = static_cast<const WorldStateSpace::StateType *>(b)->action;
    if (act < 0) return identityCost();
    const cp_search_problem *sp = cp_plan_world_problem(p_->world());
    if (!sp->edge_cost) return ob::Cost(sp->action_cost(sp->ctx, act));
    p_->space()->toVector(a, x_.data());
    p_->space()->toVector(b, y_.data());
    return ob::Cost(sp->edge_cost(sp->ctx, x_.data(), act, y_.data()));
  }

private:
  const Problem *p_;
  mutable std::vector<double> x_, y_;
};

} // namespace

/* --- the state space ----------------------------------------------------- */

WorldStateSpace::WorldStateSpace(const cp_task *task,
                                 const cp_search_problem *problem,
                                 const double *x0)
    : task_(task), problem_(problem) {
  setName("complan_world");
  std::memset(&lay_, 0, sizeof lay_);
  if (cp_state_layout_init(&lay_, &task->scene)) throw std::bad_alloc();
  n_ = problem->n;
  nw_ = lay_.n;
  n_joints_ = lay_.n_joints;
  xa_.resize(n_);
  xb_.resize(n_);
  ea_.resize(problem->m);
  eb_.resize(problem->m);
  const cp_scene *sc = &task->scene;
  goal_free_ = 0;
  for (int f = 0; f < lay_.n_free; ++f) {
    int b = lay_.free_body[f];
    if (b == task->goal.body_index) goal_free_ = f;
    auto se3 = std::make_shared<ob::SE3StateSpace>();
    ob::RealVectorBounds pb(3);
    for (int k = 0; k < 3; ++k) {
      double p = x0[cp_state_body_at(&lay_, b) + k];
      if (task->has_bounds)
        set_bounds(pb, k, task->bounds_min[k], task->bounds_max[k]);
      else
        set_bounds(pb, k, p - REACH, p + REACH);
    }
    se3->setBounds(pb);
    auto vel = std::make_shared<ob::RealVectorStateSpace>(6);
    ob::RealVectorBounds vb(6);
    for (int k = 0; k < 6; ++k)
      set_bounds(vb, k, k < 3 ? -SPEED : -ANGULAR, k < 3 ? SPEED : ANGULAR);
    vel->setBounds(vb);
    addSubspace(se3, 1.0);
    addSubspace(vel, 1.0);
  }
  if (n_joints_ > 0) {
    auto js = std::make_shared<ob::RealVectorStateSpace>(2 * n_joints_);
    ob::RealVectorBounds jb(2 * n_joints_);
    for (int r = 0; r < n_joints_; ++r) {
      const cp_joint *j = &sc->manips[lay_.row_manip[r]].joints[lay_.row_joint[r]];
      int prismatic = j->type == CP_JOINT_PRISMATIC;
      double range = prismatic ? REACH : JOINT_RANGE;
      if (j->has_limits)
        set_bounds(jb, 2 * r, j->lower, j->upper);
      else
        set_bounds(jb, 2 * r, j->position - range, j->position + range);
      double rate = prismatic ? SPEED : ANGULAR;
      set_bounds(jb, 2 * r + 1, -rate, rate);
    }
    js->setBounds(jb);
    addSubspace(js, 1.0);
  }
  if (n_ > nw_) {
    auto gs = std::make_shared<ob::RealVectorStateSpace>(n_ - nw_);
    ob::RealVectorBounds gb(n_ - nw_);
    set_bounds(gb, 0, 0, task->n_phases - 1);
    for (int i = 1; i < n_ - nw_; ++i) set_bounds(gb, i, 0, 1);
    gs->setBounds(gb);
    addSubspace(gs, 1.0);
  }
  lock();
}

WorldStateSpace::~WorldStateSpace() { cp_state_layout_free(&lay_); }

int WorldStateSpace::bodyOffset(int f) const {
  return cp_state_body_at(&lay_, lay_.free_body[f]);
}

void WorldStateSpace::toVector(const ob::State *s, double *x) const {
  const auto *cs = s->as<ob::CompoundState>();
  for (int f = 0; f < lay_.n_free; ++f) {
    double *o = x + bodyOffset(f);
    const auto *p = cs->as<ob::SE3StateSpace::StateType>(2 * f);
    const auto &q = p->rotation();
    o[0] = p->getX();
    o[1] = p->getY();
    o[2] = p->getZ();
    o[3] = q.w;
    o[4] = q.x;
    o[5] = q.y;
    o[6] = q.z;
    const double *v =
        cs->as<ob::RealVectorStateSpace::StateType>(velocity_component(f))->values;
    std::memcpy(o + 7, v, 6 * sizeof *v);
  }
  int c = 2 * lay_.n_free;
  if (n_joints_ > 0)
    std::memcpy(x + CP_STATE_BODY_SIZE * lay_.n_free,
                cs->as<ob::RealVectorStateSpace::StateType>(c++)->values,
                (size_t)(2 * n_joints_) * sizeof *x);
  if (n_ > nw_)
    std::memcpy(x + nw_, cs->as<ob::RealVectorStateSpace::StateType>(c)->values,
                (size_t)(n_ - nw_) * sizeof *x);
}

void WorldStateSpace::fromVector(const double *x, ob::State *s) const {
  auto *cs = s->as<ob::CompoundState>();
  for (int f = 0; f < lay_.n_free; ++f) {
    const double *o = x + bodyOffset(f);
    auto *p = cs->as<ob::SE3StateSpace::StateType>(2 * f);
    auto &q = p->rotation();
    p->setXYZ(o[0], o[1], o[2]);
    q.w = o[3];
    q.x = o[4];
    q.y = o[5];
    q.z = o[6];
    std::memcpy(
        cs->as<ob::RealVectorStateSpace::StateType>(velocity_component(f))->values,
        o + 7, 6 * sizeof *o);
  }
  int c = 2 * lay_.n_free;
  if (n_joints_ > 0)
    std::memcpy(cs->as<ob::RealVectorStateSpace::StateType>(c++)->values,
                x + CP_STATE_BODY_SIZE * lay_.n_free,
                (size_t)(2 * n_joints_) * sizeof *x);
  if (n_ > nw_)
    std::memcpy(cs->as<ob::RealVectorStateSpace::StateType>(c)->values,
                x + nw_, (size_t)(n_ - nw_) * sizeof *x);
}

// complan's metric: the Euclidean distance of the search's embeddings.
double WorldStateSpace::distance(const ob::State *a, const ob::State *b) const {
  toVector(a, xa_.data());
  toVector(b, xb_.data());
  problem_->embed(problem_->ctx, xa_.data(), ea_.data());
  problem_->embed(problem_->ctx, xb_.data(), eb_.data());
  double d = 0;
  for (size_t k = 0; k < ea_.size(); ++k)
    d += (ea_[k] - eb_[k]) * (ea_[k] - eb_[k]);
  return std::sqrt(d);
}

ob::State *WorldStateSpace::allocState() const {
  auto *s = new StateType();
  allocStateComponents(s);
  return s;
}

void WorldStateSpace::freeState(ob::State *s) const {
  auto *st = static_cast<StateType *>(s);
  for (unsigned int i = 0; i < componentCount_; ++i)
    components_[i]->freeState(st->components[i]);
  delete[] st->components;
  delete st;
}

void WorldStateSpace::copyState(ob::State *dst, const ob::State *src) const {
  ob::CompoundStateSpace::copyState(dst, src);
  auto *d = static_cast<StateType *>(dst);
  const auto *s = static_cast<const StateType *>(src);
  d->step = s->step;
  d->action = s->action;
  d->outcome = s->outcome;
  d->time = s->time;
  d->cost = s->cost;
  d->warm = s->warm;
}

bool WorldStateSpace::equalStates(const ob::State *a, const ob::State *b) const {
  const auto *x = static_cast<const StateType *>(a);
  const auto *y = static_cast<const StateType *>(b);
  return x->step == y->step && x->outcome == y->outcome &&
         ob::CompoundStateSpace::equalStates(a, b);
}

void WorldStateSpace::registerProjections() {
  double cell = task_->has_bounds
                    ? (task_->bounds_max[0] - task_->bounds_min[0]) / 20
                    : 0.05;
  if (lay_.n_free > 0)
    registerDefaultProjection(
        std::make_shared<BodyProjection>(this, 2 * goal_free_, cell));
}

/* --- the control space --------------------------------------------------- */

ActionControlSpace::ActionControlSpace(const ob::StateSpacePtr &space,
                                       const cp_task *task)
    : oc::RealVectorControlSpace(space, (unsigned)task->n_inputs), task_(task) {
  setName("complan_actions");
  ob::RealVectorBounds b((unsigned)task->n_inputs);
  for (int i = 0; i < task->n_inputs; ++i) {
    const cp_task_input *in = &task->inputs[i];
    double lo = in->has_range ? in->lo : in->values[0], hi = in->has_range ? in->hi : lo;
    for (int k = 0; !in->has_range && k < in->n_values; ++k) {
      lo = std::min(lo, in->values[k]);
      hi = std::max(hi, in->values[k]);
    }
    set_bounds(b, i, lo, hi);
  }
  setBounds(b);
}

void ActionControlSpace::setAction(oc::Control *c, long a) const {
  auto *ct = static_cast<ControlType *>(c);
  ct->action = a;
  cp_task_action_values(task_, a, ct->values);
}

oc::Control *ActionControlSpace::allocControl() const {
  auto *c = new ControlType();
  c->values = new double[dimension_];
  return c;
}

void ActionControlSpace::freeControl(oc::Control *c) const {
  auto *ct = static_cast<ControlType *>(c);
  delete[] ct->values;
  delete ct;
}

void ActionControlSpace::copyControl(oc::Control *dst, const oc::Control *src) const {
  oc::RealVectorControlSpace::copyControl(dst, src);
  static_cast<ControlType *>(dst)->action =
      static_cast<const ControlType *>(src)->action;
}

bool ActionControlSpace::equalControls(const oc::Control *a,
                                       const oc::Control *b) const {
  return static_cast<const ControlType *>(a)->action ==
             static_cast<const ControlType *>(b)->action &&
         oc::RealVectorControlSpace::equalControls(a, b);
}

void ActionControlSpace::nullControl(oc::Control *c) const { setAction(c, 0); }

oc::ControlSamplerPtr ActionControlSpace::allocDefaultControlSampler() const {
  return std::make_shared<ActionSampler>(this, task_);
}

/* --- propagation --------------------------------------------------------- */

WorldPropagator::WorldPropagator(Problem *p)
    : oc::StatePropagator(p->setup().getSpaceInformation().get()), p_(p) {}

// One world step (STEP) or one action (ACTION) from state under control.
// Continuing the action in progress from the state the world holds (the
// usual case: OMPL propagates a control step after step), the world is
// stepped on as the search's expansion does; otherwise the action begins
// here: state, time, warm start and inputs are set as the search sets them.
// result may be state.
void WorldPropagator::propagate(const ob::State *state, const oc::Control *control,
                                double duration, ob::State *result) const {
  (void)duration; // OMPL's step size: one step of the mode's kind
  Problem &p = *p_;
  const WorldStateSpace &sp = *p.space_;
  const auto *in = static_cast<const WorldStateSpace::StateType *>(state);
  auto *out = static_cast<WorldStateSpace::StateType *>(result);
  long a = static_cast<const ActionControlSpace::ControlType *>(control)->action;
  const cp_task *task = p.task_;
  cp_expansion &info = p.info_;
  Counts &n = p.counts_;
  n.propagations++;
  if (in->outcome != CP_EXPAND_OK) { // nothing grows from a rejected state
    if (result != state) sp.copyState(result, state);
    return;
  }
  const size_t bytes = p.x_.size() * sizeof(double);
  sp.toVector(state, p.x_.data());
  info.outcome = CP_EXPAND_OK;
  info.steps = info.lcp_solves = info.pivots = info.fallbacks = 0;
  info.warm_steps = info.lcp_reused = 0;
  info.message[0] = '\0';
  int r = 0, k = in->step;
  double t = in->time, cost = in->cost;
  const cp_search_problem *sp_ = cp_plan_world_problem(p.pw_);
  if (p.mode_ == Mode::ACTION) {
    n.actions++;
    r = sp_->expand(sp_->ctx, p.x_.data(), t, in->warm.data(), in->warm.size(),
                    a, p.y_.data(), &info);
    if (r == 1) r = 2; // the run's budget cut the action short
    else if (r == 0 && info.outcome != CP_EXPAND_OK) r = 1;
    k = task->steps - 1;
    t += task->duration;
  } else {
    bool cont = k > 0 && p.has_cur_ && p.cur_action_ == a &&
                std::memcmp(p.x_.data(), p.cur_.data(), bytes) == 0;
    if (!cont) {
      k = 0;
      n.actions++;
      std::memcpy(p.start_.data(), p.x_.data(), bytes);
      p.start_cost_ = cost;
      r = cp_plan_world_begin(p.pw_, p.x_.data(), t, in->warm.data(),
                              in->warm.size(), a, &info);
    }
    if (r == 0) {
      std::memcpy(p.y_.data(), p.x_.data(), bytes);
      r = cp_plan_world_advance(p.pw_, k, p.y_.data(), &info);
    }
    t += task->dt;
  }
  n.steps += info.steps;
  n.lcp_solves += info.lcp_solves;
  n.pivots += info.pivots;
  n.fallbacks += info.fallbacks;
  n.warm_steps += info.warm_steps;
  /* Rejected (1), cut short by the run's budget (2: no outcome; the run
   * ends) or a fatal error (-1): no state to build on. */
  if (r != 0) {
    p.has_cur_ = false;
    if (r == 1) n.rejected++;
    if (result != state) sp.copyState(result, state);
    out->outcome = r == 1 ? info.outcome : CP_EXPAND_SOLVER_FAILED;
    return;
  }
  sp.fromVector(p.y_.data(), result);
  out->outcome = CP_EXPAND_OK;
  out->action = a;
  out->time = t;
  if (p.mode_ == Mode::STEP) cost = p.start_cost_;
  if (k + 1 >= task->steps) { // the action is over: its cost, warm start
    const double *x0 = p.mode_ == Mode::STEP ? p.start_.data() : p.x_.data();
    out->cost = cost + (sp_->edge_cost
                            ? sp_->edge_cost(sp_->ctx, x0, a, p.y_.data())
                            : sp_->action_cost(sp_->ctx, a));
    if (p.mode_ == Mode::STEP) cp_plan_world_end(p.pw_, &info);
    const auto *w = static_cast<const unsigned char *>(info.warm);
    out->warm.assign(w, w + info.warm_size);
    out->step = 0;
  } else {
    out->cost = cost;
    out->warm.clear();
    out->step = k + 1;
  }
  p.cur_.swap(p.y_);
  p.has_cur_ = p.mode_ == Mode::STEP;
  p.cur_action_ = a;
}

bool WorldValidityChecker::isValid(const ob::State *s) const {
  return static_cast<const WorldStateSpace::StateType *>(s)->outcome ==
         CP_EXPAND_OK;
}

TaskGoal::TaskGoal(const ob::SpaceInformationPtr &si, Problem *p)
    : ob::GoalRegion(si), p_(p), x_((size_t)p->space()->size()),
      best_(INFINITY), best_cost_(NAN) {
  setThreshold(0);
}

double TaskGoal::distanceGoal(const ob::State *s) const {
  const cp_search_problem *sp = cp_plan_world_problem(p_->world());
  p_->space()->toVector(s, x_.data());
  return sp->goal_distance(sp->ctx, x_.data());
}

bool TaskGoal::isSatisfied(const ob::State *s, double *distance) const {
  const cp_search_problem *sp = cp_plan_world_problem(p_->world());
  p_->space()->toVector(s, x_.data());
  double d = sp->goal_distance(sp->ctx, x_.data());
  if (distance) *distance = d;
  const auto *ws = static_cast<const WorldStateSpace::StateType *>(s);
  bool valid = ws->outcome == CP_EXPAND_OK;
  if (valid && d < best_) best_ = d;
  if (!valid || !sp->in_goal(sp->ctx, x_.data())) return false;
  if (ws->step == 0 && !(ws->cost >= best_cost_)) { // a cheaper plan
    best_cost_ = ws->cost;
    if (onPlan) onPlan(best_cost_);
  }
  return true;
}

/* --- the problem --------------------------------------------------------- */

std::unique_ptr<Problem> Problem::create(const cp_task *task, Mode mode,
                                         cp_error *err) {
  std::unique_ptr<Problem> p(new Problem());
  p->task_ = task;
  p->mode_ = mode;
  if (cp_plan_world_create(task, 1, &p->pw_, err)) return nullptr;
  const cp_search_problem *sp = cp_plan_world_problem(p->pw_);
  p->space_ = std::make_shared<WorldStateSpace>(task, sp,
                                                cp_plan_world_start(p->pw_));
  p->cspace_ = std::make_shared<ActionControlSpace>(p->space_, task);
  p->ss_.reset(new oc::SimpleSetup(p->cspace_));
  p->cur_.resize((size_t)sp->n);
  p->start_.resize((size_t)sp->n);
  p->x_.resize((size_t)sp->n);
  p->y_.resize((size_t)sp->n);
  std::memset(&p->info_, 0, sizeof p->info_);
  const oc::SpaceInformationPtr &si = p->ss_->getSpaceInformation();
  Problem *raw = p.get();
  p->ss_->setStatePropagator(std::make_shared<WorldPropagator>(raw));
  p->ss_->setStateValidityChecker(std::make_shared<WorldValidityChecker>(si));
  si->setPropagationStepSize(mode == Mode::STEP ? task->dt : task->duration);
  si->setMinMaxControlDuration(raw->actionSteps(), raw->actionSteps());
  ob::ScopedState<> start(p->space_);
  p->space_->fromVector(cp_plan_world_start(p->pw_), start.get());
  p->ss_->setStartState(start);
  p->ss_->setGoal(std::make_shared<TaskGoal>(si, raw));
  p->ss_->setOptimizationObjective(
      std::make_shared<ActionCostObjective>(si, raw));
  return p;
}

Problem::~Problem() {
  ss_.reset(); // OMPL's objects hold pointers into the world
  cp_plan_world_destroy(pw_);
}

unsigned int Problem::actionSteps() const {
  return mode_ == Mode::STEP ? (unsigned)task_->steps : 1u;
}

namespace {
template <class P> ob::PlannerPtr with_bias(const oc::SpaceInformationPtr &si,
                                           double bias) {
  auto q = std::make_shared<P>(si);
  q->setGoalBias(bias);
  return q;
}
} // namespace

ob::PlannerPtr Problem::planner(const std::string &name) const {
  const oc::SpaceInformationPtr &si = ss_->getSpaceInformation();
  double bias = task_->goal_bias;
  if (name == "RRT") return with_bias<oc::RRT>(si, bias);
  if (name == "EST") return with_bias<oc::EST>(si, bias);
  if (name == "KPIECE1") return with_bias<oc::KPIECE1>(si, bias);
  if (name == "PDST") return with_bias<oc::PDST>(si, bias);
  if (name == "SST") {
    ob::PlannerPtr q = with_bias<oc::SST>(si, bias);
    auto *sst = static_cast<oc::SST *>(q.get());
    sst->setSelectionRadius(task_->delta_bn);
    sst->setPruningRadius(task_->delta_s);
    return q;
  }
  return nullptr;
}

} // namespace cp_ompl
