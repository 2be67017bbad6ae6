/* The OMPL adapter (planner/ompl/ompl.hpp): its propagator steps the world
 * bit for bit as a bare cp_world and as the search's expansion, rejected
 * outcomes are invalid states, an OMPL plan goes into the database and
 * replays bitwise (`complan replay --verify`), the benchmark database holds
 * complan's and OMPL's runs side by side in OMPL's schema, and the command
 * line refuses what it cannot do (exit 2). */
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <jansson.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include <ompl/base/OptimizationObjective.h>
#include <ompl/util/Console.h>

#include "planner/ompl/ompl.hpp"
#include "planner/ompl/run.h"
#include "planner/cli/cli.h"

extern "C" {
#include "synth.h"
#include "tests/support.h"
}

namespace ob = ompl::base;
namespace oc = ompl::control;
using cp_ompl::Mode;
using cp_ompl::Problem;
using cp_ompl::WorldStateSpace;

static std::string task_path(const char *name) {
  return std::string(getenv("CP_SOURCE_ROOT")) + "/planner/tasks/" + name;
}

static void load(const char *name, cp_task *t) {
  cp_error e;
  std::memset(&e, 0, sizeof e);
  cr_assert_eq(cp_task_load(task_path(name).c_str(), t, &e), 0, "%s: %s",
               name, e.msg);
}

static std::unique_ptr<Problem> problem(const cp_task *t, Mode m) {
  cp_error e;
  std::memset(&e, 0, sizeof e);
  ompl::msg::setLogLevel(ompl::msg::LOG_NONE);
  std::unique_ptr<Problem> p = Problem::create(t, m, &e);
  cr_assert(p, "%s", e.msg);
  p->setup().getSpaceInformation()->setup();
  return p;
}

static const WorldStateSpace::StateType *st(const ob::State *s) {
  return static_cast<const WorldStateSpace::StateType *>(s);
}

/* A bare cp_world with the planner's options does each action as the
 * search does (state, time, warm start, efforts, round(T / h) steps); the
 * STEP propagator, one world step per call, gives the same bits after every
 * step, and the same warm start after every action. */
Test(ompl, step_propagation_is_cp_world_bit_for_bit) {
  cp_task task;
  load("push.json", &task);
  auto p = problem(&task, Mode::STEP);
  const oc::SpaceInformationPtr &si = p->setup().getSpaceInformation();
  cr_assert_eq(p->actionSteps(), (unsigned)task.steps);
  cr_assert_eq(si->getPropagationStepSize(), task.dt);

  cp_world_options wo = cp_plan_world_options_of(&task, 1);
  cp_world *w;
  cp_error e;
  cr_assert_eq(cp_world_create(&task.scene, &wo, &w, &e), CP_WORLD_OK);
  int n = cp_world_state_size(w);
  cr_assert_eq(n, p->space()->size());
  std::vector<double> x(n), xs(n), y(n);
  std::vector<unsigned char> warm;
  cp_world_get_state(w, x.data());

  ob::State *s = si->allocState();
  si->copyState(s, p->setup().getProblemDefinition()->getStartState(0));
  p->space()->toVector(s, y.data());
  cr_assert_eq(std::memcmp(x.data(), y.data(), n * sizeof(double)), 0);
  oc::Control *c = si->allocControl();
  const long actions[] = {3, 3, 2, 0, 1};
  double t = 0, value;
  long checked = 0;
  for (long a : actions) {
    cr_assert_eq(cp_world_set_state(w, x.data()), CP_WORLD_OK);
    cp_world_set_time(w, t);
    if (!warm.empty()) cp_world_warm_set(w, warm.data(), warm.size());
    cp_task_action_values(&task, a, &value);
    cr_assert_eq(cp_world_set_effort(w, task.inputs[0].row, value), CP_WORLD_OK);
    p->controls()->setAction(c, a);
    cr_assert_eq(c->as<oc::RealVectorControlSpace::ControlType>()->values[0], value);
    for (int k = 0; k < task.steps; ++k) {
      cp_step_info info;
      cr_assert_eq(cp_world_step(w, &info), CP_WORLD_OK);
      cp_world_get_state(w, xs.data());
      si->propagate(s, c, 1, s);
      cr_assert(si->isValid(s));
      p->space()->toVector(s, y.data());
      cr_assert_eq(std::memcmp(xs.data(), y.data(), n * sizeof(double)), 0,
                   "action %ld step %d differs", a, k + 1);
      cr_assert_eq(st(s)->step, (k + 1) % task.steps);
      ++checked;
    }
    warm.resize(cp_world_warm_size(w));
    cp_world_warm_get(w, warm.data(), warm.size());
    cr_assert(!warm.empty());
    cr_assert(st(s)->warm == warm, "the state carries the world's warm start");
    x = xs;
    t += task.duration;
  }
  cr_assert_eq(checked, 5 * task.steps);
  /* The box moved: the test compared a motion, not a resting state. */
  int o = p->space()->bodyOffset(0);
  cr_assert_gt(std::fabs(x[o] - cp_plan_world_start(p->world())[o]), 1e-3);
  const cp_ompl::Counts &cnt = p->counts();
  cr_assert_eq(cnt.propagations, 5 * task.steps);
  cr_assert_eq(cnt.actions, 5);
  cr_assert_gt(cnt.lcp_solves, 0);
  si->freeControl(c);
  si->freeState(s);
  cp_world_destroy(w);
  p.reset();
  cp_task_free(&task);
}

/* Both modes against the search's own expansion (a second world) on tasks
 * with target inputs (PD, set when an action starts), phases and contact
 * flags (the goal's entries), and the quasistatic stepper. */
static void matches_expansion(const char *name, Mode mode) {
  cp_task task;
  load(name, &task);
  auto p = problem(&task, mode);
  const oc::SpaceInformationPtr &si = p->setup().getSpaceInformation();
  cp_plan_world *ref;
  cp_error e;
  cr_assert_eq(cp_plan_world_create(&task, 1, &ref, &e), 0);
  const cp_search_problem *sp = cp_plan_world_problem(ref);
  int n = sp->n;
  cr_assert_eq(n, p->space()->size());
  std::vector<double> x(cp_plan_world_start(ref), cp_plan_world_start(ref) + n),
      y(n), z(n);
  std::vector<unsigned char> warm;
  ob::State *s = si->allocState();
  si->copyState(s, p->setup().getProblemDefinition()->getStartState(0));
  oc::Control *c = si->allocControl();
  double t = 0;
  for (int j = 0; j < 6; ++j) {
    long a = (7 * j + 3) % task.n_actions;
    cp_expansion info;
    std::memset(&info, 0, sizeof info);
    cr_assert_eq(sp->expand(sp->ctx, x.data(), t, warm.data(), warm.size(), a,
                            y.data(), &info), 0);
    p->controls()->setAction(c, a);
    unsigned cd = si->propagateWhileValid(s, c, (int)p->actionSteps(), s);
    if (info.outcome != CP_EXPAND_OK) { // rejected both ways
      cr_assert_lt(cd, p->actionSteps(), "%s action %d", name, j);
      break;
    }
    cr_assert_eq(cd, p->actionSteps(), "%s action %d", name, j);
    p->space()->toVector(s, z.data());
    cr_assert_eq(std::memcmp(y.data(), z.data(), n * sizeof(double)), 0,
                 "%s (%s) action %d differs", name,
                 mode == Mode::STEP ? "step" : "action", j + 1);
    const auto *w = static_cast<const unsigned char *>(info.warm);
    warm.assign(w, w + info.warm_size);
    cr_assert(st(s)->warm == warm);
    x = y;
    t += task.duration;
  }
  si->freeControl(c);
  si->freeState(s);
  cp_plan_world_destroy(ref);
  p.reset();
  cp_task_free(&task);
}

Test(ompl, propagation_is_the_search_expansion) {
  const char *tasks[] = {"push.json", "grasp_lift_targets.json",
                         "grasp_place.json", "quasistatic_push.json"};
  for (const char *t : tasks) {
    matches_expansion(t, Mode::STEP);
    matches_expansion(t, Mode::ACTION);
  }
}

/* A rejected step makes an invalid state: bounds that the pushed box
 * leaves (0.5 mm ahead of where it starts), and every failure outcome
 * complan has. */
Test(ompl, rejected_outcomes_are_invalid) {
  cp_task task;
  load("push.json", &task);
  double x0;
  {
    auto p = problem(&task, Mode::STEP);
    x0 = cp_plan_world_start(p->world())[p->space()->bodyOffset(0)];
  }
  cp_task_free(&task);
  char *text = cpt_read_file(task_path("push.json").c_str(), nullptr);
  std::string s(text);
  free(text);
  const char *from = "\"max\": [0.5, 0.5, 0.5]";
  size_t at = s.find(from);
  cr_assert_neq(at, std::string::npos);
  char to[128];
  std::snprintf(to, sizeof to, "\"max\": [%.17g, 0.5, 0.5]", x0 + 5e-4);
  s.replace(at, std::strlen(from), to);
  cp_error e;
  cr_assert_eq(cp_task_parse(s.c_str(), s.size(), task_path("push.json").c_str(),
                             &task, &e), 0, "%s", e.msg);
  for (Mode m : {Mode::STEP, Mode::ACTION}) {
    auto p = problem(&task, m);
    const oc::SpaceInformationPtr &si = p->setup().getSpaceInformation();
    ob::State *s0 = si->allocState(), *r = si->allocState();
    si->copyState(s0, p->setup().getProblemDefinition()->getStartState(0));
    oc::Control *c = si->allocControl();
    p->controls()->setAction(c, 3); /* 4 N forward */
    int j = 0;
    unsigned cd = p->actionSteps();
    for (; j < 20 && cd == p->actionSteps(); ++j) {
      cr_assert(si->isValid(s0));
      cd = si->propagateWhileValid(s0, c, (int)p->actionSteps(), r);
      if (cd == p->actionSteps()) si->copyState(s0, r);
    }
    cr_assert_lt(cd, p->actionSteps(), "the box never left the bounds");
    cr_assert_eq(p->counts().rejected, 1);
    /* propagateWhileValid keeps the last valid state; the steps from it
     * show the rejection. */
    si->copyState(r, s0);
    for (unsigned k = 0; k < p->actionSteps() && si->isValid(r); ++k)
      si->propagate(r, c, 1, r);
    cr_assert_not(si->isValid(r));
    cr_assert_eq(st(r)->outcome, CP_EXPAND_OUT_OF_BOUNDS);
    /* Nothing grows from a rejected state. */
    long before = p->counts().steps;
    si->propagate(r, c, 1, r);
    cr_assert_eq(st(r)->outcome, CP_EXPAND_OUT_OF_BOUNDS);
    cr_assert_eq(p->counts().steps, before);
    auto *w = static_cast<WorldStateSpace::StateType *>(r);
    for (int o = CP_EXPAND_JOINT_LIMIT; o < CP_EXPAND_COUNT; ++o) {
      w->outcome = o;
      cr_assert_not(si->isValid(r), "%s", cp_expand_outcome_name((cp_expand_outcome)o));
      cr_assert_not(p->setup().getGoal()->isSatisfied(r));
    }
    w->outcome = CP_EXPAND_OK;
    cr_assert(si->isValid(r));
    si->freeControl(c);
    si->freeState(r);
    si->freeState(s0);
  }
  cp_task_free(&task);
}

/* A run's budget reaches into the simulator: once it is spent, a whole
 * action (ACTION mode: the search's expansion, which polls the budget
 * every CP_PLAN_BUDGET_STEPS steps) is cut short, which makes an invalid
 * state but no rejection (no outcome); without the budget the same
 * propagation is valid. (In STEP mode the budget bounds the certify
 * solver's calls, which push never makes; OMPL checks the limit between
 * actions.) */
Test(ompl, spent_budget_cuts_an_action) {
  cp_task task;
  load("push.json", &task);
  cr_assert_gt(task.steps, CP_PLAN_BUDGET_STEPS);
  {
    auto p = problem(&task, Mode::ACTION);
    const oc::SpaceInformationPtr &si = p->setup().getSpaceInformation();
    const cp_search_problem *sp = cp_plan_world_problem(p->world());
    cr_assert(sp->set_budget);
    cp_search_budget spent;
    std::memset(&spent, 0, sizeof spent);
    spent.has_deadline = 1;
    spent.deadline = cp_search_budget_now(nullptr) - 1;
    ob::State *r = si->allocState();
    oc::Control *c = si->allocControl();
    p->controls()->setAction(c, 3);
    const ob::State *start = p->setup().getProblemDefinition()->getStartState(0);
    sp->set_budget(sp->ctx, &spent);
    unsigned cd = si->propagateWhileValid(start, c, (int)p->actionSteps(), r);
    cr_assert_lt(cd, p->actionSteps());
    cr_assert_eq(p->counts().rejected, 0);
    cr_assert_eq(p->counts().actions, 1);
    sp->set_budget(sp->ctx, nullptr);
    cd = si->propagateWhileValid(start, c, (int)p->actionSteps(), r);
    cr_assert_eq(cd, p->actionSteps());
    cr_assert(si->isValid(r));
    si->freeControl(c);
    si->freeState(r);
  }
  cp_task_free(&task);
}

/* The goal is complan's: distance and membership of the search's problem. */
Test(ompl, goal_is_the_task_goal) {
  cp_task task;
  load("push.json", &task);
  auto p = problem(&task, Mode::STEP);
  const oc::SpaceInformationPtr &si = p->setup().getSpaceInformation();
  auto goal = std::static_pointer_cast<cp_ompl::TaskGoal>(p->setup().getGoal());
  ob::State *s = si->allocState();
  std::vector<double> x(cp_plan_world_start(p->world()),
                        cp_plan_world_start(p->world()) + p->space()->size());
  int o = p->space()->bodyOffset(0);
  p->space()->fromVector(x.data(), s);
  double d;
  cr_assert_not(goal->isSatisfied(s, &d));
  /* The box at (0.15, 0, 0.05), the goal's centre: distance 0, satisfied;
   * 3 cm off (tolerance 2 cm): 1 cm away. */
  x[o] = 0.15;
  x[o + 1] = 0;
  x[o + 2] = 0.05;
  p->space()->fromVector(x.data(), s);
  cr_assert(goal->isSatisfied(s, &d));
  cr_assert_float_eq(d, 0.0, 1e-12);
  x[o] = 0.18;
  p->space()->fromVector(x.data(), s);
  cr_assert_not(goal->isSatisfied(s, &d));
  cr_assert_float_eq(d, 0.01, 1e-12);
  cr_assert_float_eq(goal->distanceGoal(s), 0.01, 1e-12);
  /* The space's distance is the task metric: 3 cm of position. */
  ob::State *q = si->allocState();
  x[o] = 0.15;
  p->space()->fromVector(x.data(), q);
  cr_assert_float_eq(si->distance(s, q), task.metric[0] * 0.03, 1e-12);
  si->freeState(q);
  si->freeState(s);
  p.reset();
  cp_task_free(&task);
}

/* The optimisation objective (OMPL's SST) is complan's cost: a motion
 * costs the action that made its end state; push's actions cost
 * cost.time T + cost.effort u^2 T = 0.1 + 0.01 u^2 0.1. */
Test(ompl, objective_is_the_task_cost) {
  cp_task task;
  load("push.json", &task);
  cr_assert_eq(task.cost_path, 0);
  auto p = problem(&task, Mode::ACTION);
  const oc::SpaceInformationPtr &si = p->setup().getSpaceInformation();
  const ob::OptimizationObjectivePtr &obj =
      p->setup().getProblemDefinition()->getOptimizationObjective();
  cr_assert(obj);
  ob::State *a = si->allocState(), *b = si->allocState();
  si->copyState(a, p->setup().getProblemDefinition()->getStartState(0));
  cr_assert_eq(obj->motionCost(a, a).value(), 0.0, "the start: no action");
  oc::Control *c = si->allocControl();
  for (long k = 0; k < task.n_actions; ++k) {
    p->controls()->setAction(c, k);
    si->propagate(a, c, 1, b);
    double u;
    cp_task_action_values(&task, k, &u);
    cr_assert_float_eq(obj->motionCost(a, b).value(),
                       task.cost_time * 0.1 + task.cost_effort * u * u * 0.1,
                       1e-12, "action %ld", k);
  }
  si->freeControl(c);
  si->freeState(a);
  si->freeState(b);
  p.reset();
  cp_task_free(&task);
}

/* With continuous sampling a control is a seed of the task's generator:
 * the sampler draws seeds, and a control's values are the seed's (inside
 * the range, which is the control space's bounds). */
Test(ompl, continuous_controls_are_seeds) {
  char *text = cpt_read_file(task_path("push.json").c_str(), nullptr);
  std::string s(text);
  free(text);
  const char *from[] = {"{\"values\": [-2, 0, 2, 4]}",
                        "\"method\": \"astar\""};
  const char *to[] = {"{\"range\": [-2, 4], \"samples\": 7}",
                      "\"method\": \"rrt\", \"sampling\": \"continuous\""};
  for (int k = 0; k < 2; ++k) {
    size_t at = s.find(from[k]);
    cr_assert_neq(at, std::string::npos, "%s", from[k]);
    s.replace(at, std::strlen(from[k]), to[k]);
  }
  cp_task task;
  cp_error e;
  cr_assert_eq(cp_task_parse(s.c_str(), s.size(), task_path("push.json").c_str(),
                             &task, &e), 0, "%s: %s", e.where, e.msg);
  cr_assert(task.continuous);
  auto p = problem(&task, Mode::STEP);
  const oc::SpaceInformationPtr &si = p->setup().getSpaceInformation();
  const ob::RealVectorBounds &b = p->controls()->getBounds();
  cr_assert_eq(b.low[0], -2.0);
  cr_assert_eq(b.high[0], 4.0);
  oc::ControlSamplerPtr cs = si->allocControlSampler();
  oc::Control *c = si->allocControl();
  double lo = 4, hi = -2;
  for (int k = 0; k < 200; ++k) {
    cs->sample(c);
    long a = static_cast<cp_ompl::ActionControlSpace::ControlType *>(c)->action;
    cr_assert(a >= 0 && a < task.n_actions);
    double u, v = c->as<oc::RealVectorControlSpace::ControlType>()->values[0];
    cp_task_action_values(&task, a, &u);
    cr_assert_eq(u, v);
    cr_assert(v >= -2 && v <= 4);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  cr_assert(lo < -1.5 && hi > 3.5, "spread over the range: [%g, %g]", lo, hi);
  si->freeControl(c);
  cs.reset();
  p.reset();
  cp_task_free(&task);
}

static json_t *plan_json(const char *db, const char *task, const char *method,
                         const char *nodes) {
  std::string tp = task_path(task);
  const char *argv[] = {"complan", "plan", tp.c_str(), "--db", db, "--method",
                        method, "--seed", "5", "--max-nodes", nodes,
                        /* no wall-time limit: sanitizer builds are slow */
                        "--max-seconds", "3600", "--json", nullptr};
  return cpt_run_json(argv, 0);
}

/* OMPL's plans are complan plans: stored, replayed and verified bitwise. */
static void plan_replays(const char *method) {
  char *db = synth_temp_db();
  json_t *doc = plan_json(db, "quasistatic_push.json", method, "20000");
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "solved",
                   "%s", method);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "planner")), method);
  long long len = json_integer_value(json_object_get(doc, "length"));
  cr_assert_geq(len, 5, "10 cm at most 2 cm per action");
  cr_assert_gt(json_integer_value(json_object_get(doc, "lcp_solves")), 0);
  const char *argv[] = {"complan", "replay", "--db", db, "--verify", "--json",
                        nullptr};
  json_t *r = cpt_run_json(argv, 0);
  cr_assert(json_is_true(json_object_get(r, "verified")));
  cr_assert_eq(json_number_value(json_object_get(r, "deviation")), 0.0);
  cr_assert_eq(json_integer_value(json_object_get(r, "length")), len);
  json_decref(r);
  sqlite3 *s;
  sqlite3_open(db, &s);
  char q[256];
  std::snprintf(q, sizeof q, "SELECT count(*) FROM searches WHERE planner = '%s'"
                " AND status = 'solved'", method);
  cr_assert_eq(synth_query_int(s, q), 1);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM plans"), 1);
  /* OMPL's tree is stored (a state once), the plan one of its branches
   * (PDST's planner data can leave the plan's motions out: then the plan's
   * nodes are stored beside the tree) */
  long long stored = synth_query_int(s, "SELECT count(*) FROM nodes");
  long long vertices = json_integer_value(json_object_get(doc, "nodes"));
  cr_assert_geq(stored, len + 1);
  cr_assert_leq(stored, vertices + len);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM nodes WHERE lcp_solves > 0"),
               len, "the plan's actions carry their simulation counts");
  if (std::strcmp(method, "ompl:PDST"))
    cr_assert_leq(stored, vertices, "the plan is a branch of the tree");
  sqlite3_close(s);
  json_decref(doc);
  synth_remove_db(db);
}

Test(ompl, rrt_plan_replays_and_verifies) { plan_replays("ompl:RRT"); }
/* KPIECE1 and PDST grow new controls from any propagation step of a
 * motion; they run with one propagation step per action (Mode::ACTION), so
 * their plans are whole actions too. */
Test(ompl, kpiece_plan_replays_and_verifies) { plan_replays("ompl:KPIECE1"); }
Test(ompl, pdst_plan_replays_and_verifies) { plan_replays("ompl:PDST"); }

static cp_store *open_store(const char *db) {
  cp_store *st;
  char msg[256];
  cr_assert_eq(cp_store_open(db, 0, &st, msg, sizeof msg), CP_STORE_OK, "%s", msg);
  return st;
}

/* A path holding a control for part of an action is no complan plan:
 * storing it fails, saying so, and writes nothing. */
Test(ompl, partial_action_is_not_stored) {
  cp_task task;
  load("push.json", &task);
  auto p = problem(&task, Mode::STEP);
  const oc::SpaceInformationPtr &si = p->setup().getSpaceInformation();
  oc::PathControl path(si);
  ob::State *s = si->allocState();
  si->copyState(s, p->setup().getProblemDefinition()->getStartState(0));
  oc::Control *c = si->allocControl();
  p->controls()->setAction(c, 1);
  path.append(s);
  si->propagate(s, c, task.steps - 1, s);
  path.append(s, c, (task.steps - 1) * task.dt);
  char *db = synth_temp_db();
  cp_store *store = open_store(db);
  cp_plan_result res;
  cp_error e;
  std::memset(&e, 0, sizeof e);
  cr_assert_eq(cp_ompl::storePath(store, *p, path, "ompl:RRT", "{}", nullptr,
                                  1, 0.0, &res, &e), CP_PLAN_FAILED);
  cr_assert(std::strstr(e.msg, "not whole actions"), "%s", e.msg);
  cr_assert_eq(res.plan_id, -1);
  cp_store_close(store);
  sqlite3 *q;
  sqlite3_open(db, &q);
  cr_assert_eq(synth_query_int(q, "SELECT count(*) FROM searches"), 0);
  cr_assert_eq(synth_query_int(q, "SELECT count(*) FROM nodes"), 0);
  sqlite3_close(q);
  synth_remove_db(db);
  si->freeState(s);
  si->freeControl(c);
  p.reset();
  cp_task_free(&task);
}

/* The actions of run `run`'s nodes (OMPL's tree and the plan), in order. */
static std::string run_actions(const char *db, long long run) {
  sqlite3 *q;
  sqlite3_open(db, &q);
  char sql[160];
  std::snprintf(sql, sizeof sql, "SELECT ifnull(action, -1) FROM nodes WHERE "
                "search_id = %lld ORDER BY id", run);
  sqlite3_stmt *st;
  cr_assert_eq(sqlite3_prepare_v2(q, sql, -1, &st, nullptr), SQLITE_OK);
  std::string out;
  while (sqlite3_step(st) == SQLITE_ROW)
    out += std::to_string(sqlite3_column_int64(st, 0)) + " ";
  sqlite3_finalize(st);
  sqlite3_close(q);
  return out;
}

/* Each run seeds OMPL's generators itself: in one process, a run with seed
 * 11 after one with seed 12 is the run with seed 11 before it, action for
 * action (and seed 12 explores differently). Node limits only: a time
 * limit would make the test depend on the machine. */
static void reproducible_in_process(const char *method) {
  cp_task task;
  load("quasistatic_push.json", &task);
  char *db = synth_temp_db();
  cp_store *store = open_store(db);
  const std::uint64_t seeds[3] = {11, 12, 11};
  cp_plan_result r[3];
  for (int k = 0; k < 3; ++k) {
    cp_plan_options o = cp_plan_defaults();
    o.has_seed = 1;
    o.seed = seeds[k];
    o.max_seconds = 3600;
    o.max_nodes = 20000;
    cp_error e;
    std::memset(&e, 0, sizeof e);
    cr_assert_eq(cp_ompl_plan_task(store, &task, method, &o, &r[k], &e),
                 CP_PLAN_SOLVED, "%s seed %d: %s", method, (int)seeds[k], e.msg);
  }
  cp_store_close(store);
  std::string a0 = run_actions(db, r[0].run_id), a1 = run_actions(db, r[1].run_id),
              a2 = run_actions(db, r[2].run_id);
  cr_assert_str_eq(a2.c_str(), a0.c_str(), "%s", method);
  cr_assert_eq(r[2].stats.expansions, r[0].stats.expansions);
  cr_assert_eq(r[2].stats.lcp_solves, r[0].stats.lcp_solves);
  cr_assert_eq(r[2].nodes, r[0].nodes);
  cr_assert_eq(r[2].cost, r[0].cost);
  cr_assert(a1 != a0 || r[1].stats.expansions != r[0].stats.expansions,
            "%s: seeds 11 and 12 ran alike", method);
  synth_remove_db(db);
  cp_task_free(&task);
}

Test(ompl, runs_are_reproducible_in_process) {
  reproducible_in_process("ompl:RRT");
  reproducible_in_process("ompl:PDST");
}

/* A benchmark's run r (seed S + r) is the single run with that seed, in
 * another process: each benchmark run can be repeated by itself. */
Test(ompl, benchmark_run_repeats_alone) {
  char *db = synth_temp_db();
  std::string tp = task_path("quasistatic_push.json");
  const char *argv[] = {"complan", "plan", tp.c_str(), "--db", db,
                        "--benchmark", "2", "--planners", "ompl:EST",
                        "--seed", "5", "--max-seconds", "3600", "--json",
                        nullptr};
  json_decref(cpt_run_json(argv, 0));
  json_t *one = plan_json(db, "quasistatic_push.json", "ompl:EST", "20000");
  /* plan_json uses seed 5: the benchmark's first run; its second (seed 6)
   * against a run of seed 6. */
  const char *argv6[] = {"complan", "plan", tp.c_str(), "--db", db, "--method",
                         "ompl:EST", "--seed", "6", "--max-seconds", "3600",
                         "--json", nullptr};
  json_t *six = cpt_run_json(argv6, 0);
  sqlite3 *q;
  sqlite3_open(db, &q);
  long long e5 = synth_query_int(q, "SELECT expansions FROM runs ORDER BY id LIMIT 1");
  long long e6 = synth_query_int(q, "SELECT expansions FROM runs ORDER BY id LIMIT 1 OFFSET 1");
  long long l5 = synth_query_int(q, "SELECT lcp_solves FROM runs ORDER BY id LIMIT 1");
  long long l6 = synth_query_int(q, "SELECT lcp_solves FROM runs ORDER BY id LIMIT 1 OFFSET 1");
  sqlite3_close(q);
  cr_assert_eq(json_integer_value(json_object_get(one, "expansions")), e5);
  cr_assert_eq(json_integer_value(json_object_get(one, "lcp_solves")), l5);
  cr_assert_eq(json_integer_value(json_object_get(six, "expansions")), e6);
  cr_assert_eq(json_integer_value(json_object_get(six, "lcp_solves")), l6);
  /* the plans, action for action: benchmark runs are searches 1 and 2 */
  std::string b5 = run_actions(db, 1), b6 = run_actions(db, 2),
              s5 = run_actions(db, json_integer_value(json_object_get(one, "run_id"))),
              s6 = run_actions(db, json_integer_value(json_object_get(six, "run_id")));
  cr_assert_str_eq(s5.c_str(), b5.c_str());
  cr_assert_str_eq(s6.c_str(), b6.c_str());
  cr_assert_gt(b5.size(), 10);
  json_decref(one);
  json_decref(six);
  synth_remove_db(db);
}

struct progress_log {
  std::vector<cp_plan_progress> v;
};

static void log_progress(void *ctx, const cp_plan_progress *p) {
  static_cast<progress_log *>(ctx)->v.push_back(*p);
}

/* An OMPL run reports progress as complan's planners do: actions simulated
 * growing, the least goal distance shrinking, and SST's plans as it finds
 * them (their cost is the stored plan's, which complan computed again). */
Test(ompl, progress_is_reported) {
  cp_task task;
  load("push.json", &task);
  char *db = synth_temp_db();
  cp_store *store = open_store(db);
  progress_log log;
  cp_plan_options o = cp_plan_defaults();
  o.has_seed = 1;
  o.seed = 3;
  o.max_seconds = 3600;
  o.max_nodes = 1500;
  o.progress = log_progress;
  o.progress_ctx = &log;
  o.progress_interval = 1e-9; // every poll: once per planner iteration
  cp_plan_result r;
  cp_error e;
  std::memset(&e, 0, sizeof e);
  cr_assert_eq(cp_ompl_plan_task(store, &task, "ompl:SST", &o, &r, &e),
               CP_PLAN_SOLVED, "%s", e.msg);
  cp_store_close(store);
  cr_assert_gt(log.v.size(), 100);
  double least_cost = INFINITY;
  for (size_t k = 1; k < log.v.size(); ++k) {
    cr_assert_geq(log.v[k].expansions, log.v[k - 1].expansions);
    cr_assert_leq(log.v[k].best_distance, log.v[k - 1].best_distance);
    cr_assert_leq(log.v[k].nodes, log.v[k].expansions);
    if (std::isfinite(log.v[k].best_cost))
      least_cost = std::min(least_cost, log.v[k].best_cost);
  }
  cr_assert_leq(log.v.back().expansions, r.stats.expansions);
  cr_assert_eq(log.v.back().best_distance, 0.0, "SST reached the goal");
  cr_assert(std::isfinite(least_cost), "SST's plans were reported");
  cr_assert_float_eq(least_cost, r.cost, 1e-12 * r.cost);
  synth_remove_db(db);
  cp_task_free(&task);
}

/* One OMPL benchmark database with both kinds of runs: complan's planners
 * named control_complan_*, OMPL's by OMPL's names with OMPL's parameters.
 * Each planner here stops at its first plan (the time limit is only a
 * safety net). */
Test(ompl, benchmark_holds_both_kinds) {
  char *db = synth_temp_db();
  std::string tp = task_path("quasistatic_push.json");
  const char *argv[] = {"complan", "plan", tp.c_str(), "--db", db,
                        "--benchmark", "2", "--planners",
                        "astar,ompl:RRT,ompl:PDST", "--max-seconds", "600",
                        "--json", nullptr};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert_eq(json_array_size(json_object_get(doc, "planners")), 3);
  json_decref(doc);
  sqlite3 *s;
  sqlite3_open(db, &s);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM experiments"), 1);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM plannerConfigs"), 3);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM plannerConfigs WHERE"
                                  " name IN ('control_RRT', 'control_PDST')"
                                  " AND settings LIKE '%goal_bias%'"), 2);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM runs"), 6);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM runs r JOIN searches s"
                                  " ON s.id = r.search_id WHERE s.planner LIKE"
                                  " 'ompl:%'"), 4);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM runs WHERE"
                                  " lcp_solves > 0 AND expansions > 0"), 6);
  /* OMPL's runs sample their progress too: every run has rows, its last
   * one with its plan's cost */
  cr_assert_eq(synth_query_int(s, "SELECT count(DISTINCT p.runid) FROM progress p"
                                  " JOIN runs r ON r.id = p.runid JOIN"
                                  " plannerConfigs c ON c.id = r.plannerid WHERE"
                                  " c.name = 'control_RRT'"), 2);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM runs r WHERE best_cost ="
                                  " (SELECT best_cost FROM progress p WHERE"
                                  " p.runid = r.id ORDER BY time DESC LIMIT 1)"), 6);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM runs WHERE solved"), 6);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM plans p JOIN searches s"
                                  " ON s.id = p.search_id WHERE s.planner LIKE"
                                  " 'ompl:%'"), 4);
  sqlite3_close(s);
  synth_remove_db(db);
}

static void refused(const char *const *argv, const char *what) {
  char *out, *err;
  cr_assert_eq(cpt_run(argv, &out, &err), 2, "stderr: %s", err);
  cr_assert(std::strstr(err, what), "'%s' not in: %s", what, err);
  free(out);
  free(err);
}

Test(ompl, bad_methods_exit_2) {
  char *db = synth_temp_db();
  std::string tp = task_path("push.json");
  const char *a1[] = {"complan", "plan", tp.c_str(), "--db", db, "--method",
                      "ompl:FMT", nullptr};
  refused(a1, "ompl:FMT");
  const char *a2[] = {"complan", "plan", tp.c_str(), "--db", db, "--method",
                      "ompl:RRT", "--resume", nullptr};
  refused(a2, "resumed");
  const char *a3[] = {"complan", "plan", tp.c_str(), "--db", db,
                      "--benchmark", "1", "--planners", "astar,ompl:Foo",
                      nullptr};
  refused(a3, "ompl:Foo");
  synth_remove_db(db);
  /* A command line without OMPL's planners registered (what an executable
   * built without OMPL has) refuses them, saying why. */
  cp_cli_set_ompl(nullptr);
  db = synth_temp_db();
  const char *a4[] = {"complan", "plan", tp.c_str(), "--db", db, "--method",
                      "ompl:RRT", nullptr};
  cr_redirect_stderr();
  cr_assert_eq(cp_cli_main(7, const_cast<char **>(a4)), 2);
  std::fflush(stderr);
  cr_assert_stderr_neq_str("");
  synth_remove_db(db);
}
