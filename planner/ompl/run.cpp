// OMPL's planners on a complan task: one run stored as a complan search run
// (its plan re-simulated by complan's expansion), benchmark runs in OMPL's
// tables (planner/ompl/run.h, planner/ompl/ompl.hpp).
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include <ompl/base/PlannerData.h>
#include <ompl/base/PlannerTerminationCondition.h>
#include <ompl/util/Console.h>
#include <ompl/util/Exception.h>
#include <ompl/util/RandomNumbers.h>

#include "planner/ompl/ompl.hpp"
#include "planner/ompl/run.h"

namespace ob = ompl::base;
namespace oc = ompl::control;

namespace cp_ompl {

namespace {

const char *const METHODS[] = {"ompl:RRT", "ompl:EST", "ompl:KPIECE1",
                               "ompl:PDST", "ompl:SST", nullptr};
const char PREFIX[] = "ompl:";

/* KPIECE1 and PDST cut a motion at any of its propagation steps and grow
 * new controls from there; complan's plans are whole actions, so those two
 * propagate one action per step. */
Mode mode_of(const std::string &name) {
  return name == "KPIECE1" || name == "PDST" ? Mode::ACTION : Mode::STEP;
}

cp_plan_status store_failed(cp_store *st, cp_store_status s, cp_error *err) {
  cp_error_setc(err, CP_ERR_IO, "", "%s", cp_store_message(st));
  return s == CP_STORE_BAD_FILE ? CP_PLAN_BAD_INPUT : CP_PLAN_FAILED;
}

// JSON string of s (names and values of OMPL's parameters: plain text).
std::string quoted(const std::string &s) {
  std::string o = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') o += '\\';
    if ((unsigned char)c >= 0x20) o += c;
  }
  return o + "\"";
}

std::string params_json(const ob::PlannerPtr &planner) {
  std::map<std::string, std::string> params;
  planner->params().getParams(params);
  std::string o = "{";
  for (const auto &kv : params) {
    if (o.size() > 1) o += ", ";
    o += quoted(kv.first) + ": " + quoted(kv.second);
  }
  return o + "}";
}

/* OMPL's seed for a run's 64-bit seed: its two halves XORed (OMPL's seeds
 * are 32-bit and never 0; 0 becomes 0x9e3779b9). */
std::uint32_t ompl_seed(std::uint64_t seed) {
  std::uint32_t s = (std::uint32_t)seed ^ (std::uint32_t)(seed >> 32);
  return s ? s : 0x9e3779b9u;
}

/* One progress sample of a run (the benchmark's progress table). */
struct Sample {
  double t, cost, dist;
  long nodes, expansions;
};

/* A run's progress. The termination condition polls it (in the planner's
 * own thread, once per iteration): every interval seconds it reports to the
 * caller's progress function and keeps a sample for the benchmark. Each
 * plan the goal sees found (the first, and SST's cheaper ones: OMPL 1.5's
 * control planners report none themselves) is a sample at once, so that
 * the progress table has the time it was found. */
class Tracker {
public:
  Tracker(Problem &p, const cp_plan_options &o, std::vector<Sample> *series)
      : p_(p), o_(o), series_(series),
        goal_(static_cast<const TaskGoal *>(p.setup().getGoal().get())),
        on_(o.progress || series), t0_(cp_search_budget_now(nullptr)),
        next_(t0_ + o.progress_interval) {}
  void poll() {
    if (!on_) return;
    double t = cp_search_budget_now(nullptr);
    if (t < next_) return;
    report(t - t0_);
    next_ = t + o_.progress_interval;
  }
  /* A plan (or a cheaper one) found while the planner goes on: a sample
   * at once, so that the progress table has the time it was found. */
  void solution() {
    if (on_) report(cp_search_budget_now(nullptr) - t0_);
  }
  void report(double elapsed) {
    const Counts &c = p_.counts();
    cp_plan_progress pg;
    pg.nodes = c.actions - c.rejected;
    pg.expansions = c.actions;
    pg.expansions_per_second = elapsed > 0 ? c.actions / elapsed : 0;
    pg.best_distance = goal_->bestDistance();
    pg.best_cost = goal_->bestCost();
    pg.elapsed = elapsed;
    if (o_.progress) o_.progress(o_.progress_ctx, &pg);
    if (series_)
      series_->push_back({elapsed, pg.best_cost, pg.best_distance, pg.nodes,
                          pg.expansions});
  }

private:
  const Problem &p_;
  const cp_plan_options &o_;
  std::vector<Sample> *series_;
  const TaskGoal *goal_;
  bool on_;
  double t0_, next_;
};

/* The bits of a state vector: the key of a stored node by its state. */
std::string state_key(const double *x, int n) {
  return std::string(reinterpret_cast<const char *>(x), (size_t)n * sizeof *x);
}

/* One action of the plan, simulated again by complan: its node (id and
 * parent not yet set), the state it ends in, its warm start. */
struct PlanStep {
  cp_search_node node;
  std::vector<double> y;
  std::vector<unsigned char> warm;
};

int adopt_step(cp_search *s, PlanStep &step, long parent) {
  step.node.id = cp_search_node_count(s);
  step.node.parent = parent;
  return cp_search_adopt(s, &step.node, step.y.data(), step.warm.data(),
                         step.warm.size());
}

/* OMPL's tree (tree: planner data of p's planner) as nodes of s after its
 * start, node 0: each vertex reached from the start by the tree's edges
 * that is a state between actions, parents first, with what its state
 * carries (the action that made it, complan's cost, its warm start; its
 * time as the search counts it). The plan's actions are the tree's
 * vertices that end in the plan's states one after the other from the
 * start (OMPL's path is a branch of its tree): those nodes get the plan's
 * records (the simulation counts of each action); the others' counts are
 * not known (0: the run's totals are). Returns the plan's last node (-1
 * when the plan is no branch of the tree; 0 for an empty plan), or -2 out
 * of memory. */
long adopt_tree(cp_search *s, const Problem &p, const ob::PlannerData &tree,
                std::vector<PlanStep> &plan) {
  const cp_search_problem *sp = cp_plan_world_problem(p.world());
  if (tree.numStartVertices() == 0) return plan.empty() ? 0 : -1;
  /* The vertices to store, parents first, with their states' keys. A
   * state is one node however many vertices hold it (PDST keeps a copy of
   * its parent's end state as each motion's start). */
  unsigned nv = tree.numVertices();
  std::vector<long> parent(nv, -1), depth(nv, 0), step(nv, -1);
  std::vector<std::string> key(nv);
  std::vector<double> x((size_t)sp->n);
  std::unordered_map<std::string, std::vector<unsigned>> holders;
  for (unsigned v = 0; v < nv; ++v) {
    const auto *ws = static_cast<const WorldStateSpace::StateType *>(
        tree.getVertex(v).getState());
    if (ws->outcome != CP_EXPAND_OK || ws->step != 0) continue;
    p.space()->toVector(ws, x.data());
    key[v] = state_key(x.data(), sp->n);
    holders[key[v]].push_back(v);
  }
  std::vector<unsigned> order(1, tree.getStartIndex(0)), out;
  std::vector<char> seen(nv, 0);
  for (unsigned h : holders[key[order[0]]]) seen[h] = 1;
  for (size_t q = 0; q < order.size(); ++q)
    for (unsigned u : holders[key[order[q]]]) {
      tree.getEdges(u, out);
      for (unsigned v : out) {
        const auto *ws = static_cast<const WorldStateSpace::StateType *>(
            tree.getVertex(v).getState());
        if (seen[v] || key[v].empty() || ws->action < 0) continue;
        for (unsigned h : holders[key[v]]) seen[h] = 1;
        parent[v] = order[q];
        depth[v] = depth[order[q]] + 1;
        order.push_back(v);
      }
    }
  /* The branch that is the plan, found from its end. */
  long end = plan.empty() ? (long)order[0] : -1;
  if (!plan.empty()) {
    std::string last = state_key(plan.back().y.data(), sp->n);
    for (size_t k = 1; k < order.size() && end < 0; ++k) {
      long v = order[k], j = (long)plan.size() - 1;
      if (depth[v] != (long)plan.size() || key[v] != last) continue;
      while (j >= 0 && key[v] == state_key(plan[j].y.data(), sp->n)) {
        v = parent[v];
        --j;
      }
      if (j < 0) end = order[k];
    }
    for (long v = end, j = (long)plan.size() - 1; v >= 0 && j >= 0; --j) {
      step[v] = j;
      v = parent[v];
    }
  }
  std::vector<long> node(nv, -1);
  node[order[0]] = 0;
  for (size_t k = 1; k < order.size(); ++k) {
    unsigned v = order[k];
    long pid = node[parent[v]];
    if (step[v] >= 0) {
      if (adopt_step(s, plan[step[v]], pid)) return -2;
      node[v] = plan[step[v]].node.id;
      continue;
    }
    const auto *ws = static_cast<const WorldStateSpace::StateType *>(
        tree.getVertex(v).getState());
    std::memcpy(x.data(), key[v].data(), key[v].size());
    const cp_search_node *pn = cp_search_node_get(s, pid);
    cp_search_node n;
    std::memset(&n, 0, sizeof n);
    n.id = cp_search_node_count(s);
    n.parent = pid;
    n.depth = pn->depth + 1;
    n.time = pn->time + sp->duration;
    n.cost = ws->cost;
    n.action = ws->action;
    n.outcome = CP_EXPAND_OK;
    n.flags = sp->in_goal(sp->ctx, x.data()) ? CP_NODE_GOAL : 0;
    n.goal_distance = sp->goal_distance(sp->ctx, x.data());
    n.message = "";
    if (cp_search_adopt(s, &n, x.data(), ws->warm.data(), ws->warm.size()))
      return -2;
    node[v] = n.id;
  }
  return end < 0 ? -1 : node[end];
}

/* The run of p (status, with path's actions as its plan when path is not
 * null, with OMPL's tree when tree is not null) as a complan search run:
 * see storePath. */
cp_plan_status store_run(cp_store *st, Problem &p, const oc::PathControl *path,
                         const ob::PlannerData *tree, const char *planner,
                         const char *options, const char *task_path,
                         std::uint64_t seed, const char *status,
                         double seconds, cp_plan_result *res, cp_error *err) {
  const cp_task *task = p.task();
  const cp_search_problem *sp = cp_plan_world_problem(p.world());
  const double *x0 = cp_plan_world_start(p.world());
  /* The path's actions, and for each the index of the path state it ends
   * in (-1 inside a control held for several actions). */
  std::vector<long> acts;
  std::vector<long> ends;
  double h = p.setup().getSpaceInformation()->getPropagationStepSize();
  unsigned int per = p.actionSteps();
  for (size_t i = 0; path && i < path->getControlCount(); ++i) {
    long steps = std::lround(path->getControlDuration(i) / h);
    if (steps <= 0 || steps % per) {
      cp_error_set(err, "", "%s held control %zu for %ld steps of %g s, not "
                   "whole actions of %u steps: not a complan plan",
                   planner, i, steps, h, per);
      return CP_PLAN_FAILED;
    }
    long a = static_cast<const ActionControlSpace::ControlType *>(
                 path->getControl(i))->action;
    for (long r = 0; r < steps / per; ++r) {
      acts.push_back(a);
      ends.push_back(r == steps / per - 1 ? (long)i + 1 : -1);
    }
  }
  int64_t task_id, run_id;
  cp_store_status ss = cp_store_task(st, task, task_path, &task_id);
  if (!ss)
    ss = cp_store_run_begin(st, task_id, planner, options, seed, sp->n, &run_id);
  if (ss) return store_failed(st, ss, err);
  res->run_id = run_id;
  cp_search_options so = cp_search_defaults();
  so.method = "rrt"; // a container of nodes: it never iterates
  so.seed = seed;
  so.max_nodes = LONG_MAX;
  char msg[256];
  cp_search *s = cp_search_create(sp, &so, x0, 0, msg, sizeof msg);
  if (!s) {
    cp_error_setc(err, CP_ERR_NOMEM, "", "%s", msg);
    return CP_PLAN_FAILED;
  }
  cp_store_progress pr = {"running", seconds, nullptr, nullptr, nullptr, 0, 0};
  if ((ss = cp_store_write_batch(st, run_id, task, s, &pr, -1, nullptr))) {
    cp_search_destroy(s);
    return store_failed(st, ss, err);
  }
  const Counts &c = p.counts();
  cp_search_stats stats;
  std::memset(&stats, 0, sizeof stats);
  stats.expansions = c.actions;
  stats.rejected = c.rejected;
  stats.steps = c.steps;
  stats.lcp_solves = c.lcp_solves;
  stats.pivots = c.pivots;
  stats.fallbacks = c.fallbacks;
  stats.warm_steps = c.warm_steps;
  cp_search_set_stats(s, &stats);

  /* Each action re-simulated by the search's expansion from its parent
   * (with its warm start) and compared with OMPL's state. */
  std::vector<double> x(x0, x0 + sp->n), z((size_t)sp->n);
  std::vector<PlanStep> plan(acts.size());
  cp_expansion info;
  double t = 0, cost = 0;
  const unsigned char *warm = nullptr;
  size_t warm_size = 0;
  cp_plan_status result = CP_PLAN_SOLVED;
  for (size_t j = 0; j < acts.size() && result == CP_PLAN_SOLVED; ++j) {
    std::memset(&info, 0, sizeof info);
    std::vector<double> &y = plan[j].y;
    y.resize((size_t)sp->n);
    int r = sp->expand(sp->ctx, x.data(), t, warm, warm_size, acts[j], y.data(),
                       &info);
    if (r != 0 || info.outcome != CP_EXPAND_OK) {
      cp_error_set(err, "", "%s's action %zu (%ld) is rejected when complan "
                   "simulates it again: %s", planner, j + 1, acts[j],
                   r < 0 ? info.message : cp_expand_outcome_name(info.outcome));
      result = CP_PLAN_FAILED;
      break;
    }
    if (ends[j] >= 0) {
      p.space()->toVector(path->getState((size_t)ends[j]), z.data());
      if (std::memcmp(z.data(), y.data(), y.size() * sizeof(double))) {
        cp_error_set(err, "", "%s's state after action %zu differs from "
                     "complan's simulation of it (the propagator is not the "
                     "search's expansion)", planner, j + 1);
        result = CP_PLAN_FAILED;
        break;
      }
    }
    cost += sp->edge_cost ? sp->edge_cost(sp->ctx, x.data(), acts[j], y.data())
                          : sp->action_cost(sp->ctx, acts[j]);
    const auto *w = static_cast<const unsigned char *>(info.warm);
    plan[j].warm.assign(w, w + info.warm_size);
    warm = plan[j].warm.data();
    warm_size = plan[j].warm.size();
    cp_search_node &n = plan[j].node;
    std::memset(&n, 0, sizeof n);
    n.depth = (int)j + 1;
    n.time = t + sp->duration;
    n.cost = cost;
    n.action = acts[j];
    n.outcome = CP_EXPAND_OK;
    n.steps = info.steps;
    n.lcp_solves = info.lcp_solves;
    n.pivots = info.pivots;
    n.fallbacks = info.fallbacks;
    n.warm_steps = info.warm_steps;
    n.flags = sp->in_goal(sp->ctx, y.data()) ? CP_NODE_GOAL : 0;
    n.goal_distance = sp->goal_distance(sp->ctx, y.data());
    n.message = "";
    x = y;
    t = n.time;
  }
  if (result != CP_PLAN_SOLVED) plan.clear();
  /* OMPL's tree with the plan as its branch; or the plan alone. */
  long prev = tree ? adopt_tree(s, p, *tree, plan) : -1;
  if (prev == -1) { // the plan alone, from the start
    prev = 0;
    for (size_t j = 0; j < plan.size() && prev >= 0; ++j)
      prev = adopt_step(s, plan[j], prev) ? -2 : plan[j].node.id;
  }
  if (prev == -2) {
    cp_search_destroy(s);
    cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory storing the run");
    return CP_PLAN_FAILED;
  }
  long goal = acts.empty() ? -1 : prev;
  if (result == CP_PLAN_SOLVED && goal >= 0 &&
      !(cp_search_node_get(s, goal)->flags & CP_NODE_GOAL)) {
    cp_error_set(err, "", "%s's path does not end in the goal when complan "
                 "simulates it", planner);
    result = CP_PLAN_FAILED;
  }
  if (result != CP_PLAN_SOLVED) goal = -1;
  pr.status = result == CP_PLAN_SOLVED ? status : "error";
  ss = cp_store_write_batch(st, run_id, task, s, &pr, goal, &res->plan_id);
  if (goal >= 0 && !ss) {
    const cp_search_node *g = cp_search_node_get(s, goal);
    res->goal_node = goal;
    res->cost = g->cost;
    res->length = g->depth;
  }
  cp_search_destroy(s);
  if (ss) return store_failed(st, ss, err);
  return result;
}

/* One run: OMPL's planner `name` on a fresh Problem; *settings gets the
 * planner's parameters (JSON) when not null, *series the run's progress
 * samples (every opt->progress_interval seconds) when not null. */
cp_plan_status run(cp_store *st, const cp_task *task, const char *method,
                   const cp_plan_options *opt, cp_plan_result *res,
                   std::string *settings, std::vector<Sample> *series,
                   cp_error *err) {
  cp_plan_options o = opt ? *opt : cp_plan_defaults();
  std::memset(res, 0, sizeof *res);
  res->plan_id = res->goal_node = res->best_node = -1;
  res->cost = NAN;
  res->best_distance = NAN;
  std::snprintf(res->planner, sizeof res->planner, "%s", method);
  if (std::strncmp(method, PREFIX, sizeof PREFIX - 1)) {
    cp_error_set(err, "search.method", "\"%s\" is not an OMPL planner", method);
    return res->status = CP_PLAN_BAD_INPUT;
  }
  if (o.resume) {
    cp_error_set(err, "", "an OMPL planner's run cannot be resumed (OMPL "
                 "keeps nothing to resume from)");
    return res->status = CP_PLAN_BAD_INPUT;
  }
  std::string name = method + sizeof PREFIX + -1;
  ompl::msg::setLogLevel(ompl::msg::LOG_NONE);
  std::uint64_t seed = o.has_seed ? o.seed : task->seed;
  if (o.progress_interval <= 0) o.progress_interval = 0.5;
  /* OMPL seeds every generator (the planner's, the samplers', ours) from
   * one process-wide sequence, as each is made. Seeding that sequence
   * again here, before this run makes any, gives the run the same
   * generators whatever ran before it in the process (OMPL 1.5 reseeds the
   * sequence even after its first use, logging an error we silence). Not
   * for two runs at once in one process: the sequence is shared. */
  ompl::RNG::setSeed(ompl_seed(seed));
  std::unique_ptr<Problem> p = Problem::create(task, mode_of(name), err);
  if (!p) return res->status = CP_PLAN_BAD_INPUT;
  ob::PlannerPtr planner = p->planner(name);
  if (!planner) {
    cp_error_set(err, "search.method", "unknown OMPL planner \"%s\" (expected "
                 "ompl:RRT, ompl:EST, ompl:KPIECE1, ompl:PDST or ompl:SST)",
                 method);
    return res->status = CP_PLAN_BAD_INPUT;
  }
  p->setup().setPlanner(planner);
  p->setup().setup();
  std::string params = params_json(planner);
  if (settings) *settings = params;
  double max_seconds = o.max_seconds > 0 ? o.max_seconds : task->max_seconds;
  long max_nodes = o.max_nodes > 0 ? o.max_nodes : task->max_nodes;
  volatile sig_atomic_t *cancel = o.cancel;
  Problem *raw = p.get();
  Tracker tracker(*p, o, series);
  Tracker *tr = &tracker;
  static_cast<TaskGoal *>(p->setup().getGoal().get())->onPlan =
      [tr](double) { tr->solution(); };
  ob::PlannerTerminationCondition ptc = ob::plannerOrTerminationCondition(
      ob::timedPlannerTerminationCondition(max_seconds),
      ob::PlannerTerminationCondition([cancel, raw, max_nodes, tr] {
        tr->poll();
        return (cancel && *cancel) || raw->counts().actions >= max_nodes;
      }));
  double t0 = cp_search_budget_now(nullptr);
  /* The simulator's solvers get the time left too (certify's MIP would
   * take up to a minute per call): a step stopped by it makes an invalid
   * state, and OMPL's planner stops at its next check. */
  const cp_search_problem *sp = cp_plan_world_problem(p->world());
  cp_search_budget budget;
  std::memset(&budget, 0, sizeof budget);
  budget.has_deadline = 1;
  budget.deadline = t0 + max_seconds;
  budget.cancel = cancel;
  if (sp->set_budget) sp->set_budget(sp->ctx, &budget);
  ob::PlannerStatus ps = p->setup().solve(ptc);
  double seconds = cp_search_budget_now(nullptr) - t0;
  if (sp->set_budget) sp->set_budget(sp->ctx, nullptr); // storing: no limit
  static_cast<TaskGoal *>(p->setup().getGoal().get())->onPlan = nullptr;
  bool exact = ps == ob::PlannerStatus::EXACT_SOLUTION;
  char options[2048];
  std::snprintf(options, sizeof options,
                "{\"method\": \"%s\", \"propagation\": \"%s\", \"step_size\": "
                "%.17g, \"control_steps\": %u, \"max_seconds\": %.17g, "
                "\"max_nodes\": %ld, \"ompl\": %s, \"world\": %s}",
                method, p->mode() == Mode::STEP ? "step" : "action",
                p->setup().getSpaceInformation()->getPropagationStepSize(),
                p->actionSteps(), max_seconds, max_nodes, params.c_str(),
                cp_plan_world_options(p->world()));
  cp_plan_status status =
      exact ? CP_PLAN_SOLVED
            : cancel && *cancel ? CP_PLAN_INTERRUPTED : CP_PLAN_LIMIT;
  const oc::PathControl *path = nullptr;
  if (exact) path = &p->setup().getSolutionPath();
  ob::PlannerData pd(p->setup().getSpaceInformation());
  p->setup().getPlannerData(pd);
  cp_plan_status s = store_run(st, *p, path, &pd, method, options, o.task_path,
                               seed, cp_plan_status_name(status), seconds,
                               res, err);
  const Counts &c = p->counts();
  res->nodes = (long)pd.numVertices();
  res->stats.expansions = c.actions;
  res->stats.rejected = c.rejected;
  res->stats.steps = c.steps;
  res->stats.lcp_solves = c.lcp_solves;
  res->stats.pivots = c.pivots;
  res->stats.fallbacks = c.fallbacks;
  res->stats.warm_steps = c.warm_steps;
  res->seconds = res->session_seconds = seconds;
  double best = static_cast<const TaskGoal *>(p->setup().getGoal().get())
                    ->bestDistance();
  res->best_distance = exact ? 0.0 : std::isfinite(best) ? best : NAN;
  if (s != CP_PLAN_SOLVED) return res->status = s;
  return res->status = status;
}

} // namespace

cp_plan_status storePath(cp_store *st, Problem &p, const oc::PathControl &path,
                         const char *planner, const char *options,
                         const char *task_path, std::uint64_t seed,
                         double seconds, cp_plan_result *res, cp_error *err) {
  std::memset(res, 0, sizeof *res);
  res->plan_id = res->goal_node = -1;
  res->cost = NAN;
  return res->status = store_run(st, p, &path, nullptr, planner, options, task_path,
                                 seed, "solved", seconds, res, err);
}

} // namespace cp_ompl

extern "C" {

const char *const *cp_ompl_methods(void) { return cp_ompl::METHODS; }

cp_plan_status cp_ompl_plan_task(cp_store *st, const cp_task *task,
                                 const char *method,
                                 const cp_plan_options *opt,
                                 cp_plan_result *res, cp_error *err) {
  try {
    return cp_ompl::run(st, task, method, opt, res, nullptr, nullptr, err);
  } catch (const std::bad_alloc &) {
    cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  } catch (const std::exception &e) {
    cp_error_setc(err, CP_ERR_UNSUPPORTED, "", "OMPL: %s", e.what());
  }
  return res->status = CP_PLAN_FAILED;
}

cp_plan_status cp_ompl_benchmark(cp_store *st, const cp_task *task,
                                 const char *const *methods,
                                 const cp_bench_options *bo,
                                 double seconds_before,
                                 int64_t *experiment_id, cp_error *err) {
  double limit = bo->max_seconds > 0 ? bo->max_seconds : task->max_seconds;
  double t0 = cp_search_budget_now(nullptr);
  cp_store_status ss = CP_STORE_OK;
  if (*experiment_id <= 0) {
    char hash[CP_TASK_KEY_SIZE], name[96];
    cp_task_hash(task, hash);
    std::snprintf(name, sizeof name, "complan task %s", hash);
    ss = cp_store_bench_experiment(st, name, task->text, limit, bo->runs,
                                   task->seed, experiment_id);
  }
  cp_plan_status result = CP_PLAN_SOLVED;
  for (int pi = 0; !ss && methods[pi] && result == CP_PLAN_SOLVED; ++pi) {
    int64_t pid = -1;
    for (int r = 0; r < bo->runs; ++r) {
      cp_plan_options o = cp_plan_defaults();
      o.has_seed = 1;
      o.seed = task->seed + (uint64_t)r;
      o.max_seconds = limit;
      o.task_path = bo->task_path;
      o.progress_interval = 0.05; // as complan's planners' benchmark runs
      cp_plan_result res;
      std::string settings;
      std::vector<cp_ompl::Sample> series;
      cp_plan_status s;
      try {
        s = cp_ompl::run(st, task, methods[pi], &o, &res, &settings, &series,
                         err);
      } catch (const std::exception &e) {
        cp_error_setc(err, CP_ERR_UNSUPPORTED, "", "OMPL: %s", e.what());
        s = CP_PLAN_FAILED;
      }
      if (s == CP_PLAN_BAD_INPUT || s == CP_PLAN_FAILED) {
        result = s;
        break;
      }
      if (pid < 0) { // OMPL's name for the planner, its parameters
        std::string pname = std::string("control_") + (methods[pi] + 5);
        if ((ss = cp_store_bench_planner(st, pname.c_str(), settings.c_str(),
                                         &pid)))
          break;
      }
      cp_bench_run br = cp_plan_bench_row(&res, 0);
      if (s != CP_PLAN_SOLVED) // OMPL's approximate solution, or none
        br.status = std::isfinite(res.best_distance) ? 5 : 4;
      int64_t rid;
      if ((ss = cp_store_bench_run(st, *experiment_id, pid, &br, &rid))) break;
      for (size_t k = 0; k < series.size() && !ss; ++k)
        ss = cp_store_bench_progress(st, rid, series[k].t, series[k].cost,
                                     series[k].nodes, series[k].expansions,
                                     series[k].dist);
      if (!ss)
        ss = cp_store_bench_progress(st, rid, res.session_seconds, res.cost,
                                     res.nodes, res.stats.expansions,
                                     res.best_distance);
      if (bo->progress) bo->progress(bo->progress_ctx, methods[pi], r, &res);
      if (ss) break;
    }
  }
  if (!ss)
    ss = cp_store_bench_finish(st, *experiment_id,
                               seconds_before + cp_search_budget_now(nullptr) - t0);
  if (ss) return cp_ompl::store_failed(st, ss, err);
  return result;
}

} // extern "C"
