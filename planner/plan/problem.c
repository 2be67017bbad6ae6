/* A task bound to the simulator: the search problem whose expansions step a
 * cp_world (planner/plan/plan.h). States are cp_world_get_state vectors
 * (planner/sim/statelayout.h: per free body x[3], q[4], v[3], w[3]; per
 * joint position, rate), followed, for a task with phases or contact goals,
 * by the goal's own entries: the index of the phase reached, then one flag
 * per contact pair of the goals (1 when the pair touched in the last step).
 * Those are part of the state the search stores, so that resume and replay
 * see them without a column of their own. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models/clock.h"
#include "models/jsonread.h"
#include "planner/plan/actions.h"
#include "planner/plan/plan.h"
#include "planner/plan/pool.h"
#include "planner/sim/statelayout.h"
#include "planner/sim/world.h"

struct cp_plan_world {
  const cp_task *task;
  cp_world *world;
  cp_search_problem problem;
  int n;               /* state size: nw + extra */
  int nw;              /* the world's state size */
  int extra;           /* goal entries: 0, or 1 + contact pairs */
  cp_state_layout lay; /* the world's state layout */
  cp_goal_view view;
  int n_free;          /* free bodies */
  int n_joints;
  int *prismatic;      /* [n_joints] 1 when prismatic */
  double *x0;          /* [n] start */
  double *values;      /* [n_inputs] */
  unsigned char *warm; /* the last expansion's basis */
  size_t warm_cap;
  double seconds;
  int untimed;         /* cp_plan_world_set_timing(pw, 0): no clock reads */
  char options[256];
  void (*observe)(void *ctx, const cp_world *world); /* replay's hook */
  void *observe_ctx;
  const cp_search_budget *budget; /* the search's (NULL: none) */
  cp_plan_actions actions; /* target and Cartesian inputs (none: n_act 0) */
  int warm_start;          /* as created (the workers' worlds likewise) */
  cp_plan_pool *pool;      /* threads > 1: the batch workers (pool.c) */
  /* cp_plan_options.run_batch (MPI), instead of the pool */
  int (*run_batch)(void *ctx, const cp_search_problem *own,
                   const cp_search_budget *budget, cp_expand_job *jobs,
                   int count, const cp_batch_meanwhile *meanwhile);
  int (*run_start)(void *ctx, const cp_search_problem *own,
                   const cp_search_budget *budget, cp_expand_job *jobs,
                   int count);
  int (*run_wait)(void *ctx, const cp_search_problem *own, int handle,
                  const cp_batch_meanwhile *meanwhile);
  void *run_batch_ctx;
};


static cp_expand_outcome outcome_of(cp_world_status s) {
  switch (s) {
  case CP_WORLD_NEEDS_FALLBACK: return CP_EXPAND_FALLBACK;
  case CP_WORLD_PENETRATION: return CP_EXPAND_PENETRATION;
  case CP_WORLD_JOINT_LIMIT: return CP_EXPAND_JOINT_LIMIT;
  case CP_WORLD_NONFINITE:
  case CP_WORLD_BAD_INPUT: return CP_EXPAND_NONFINITE;
  default: return CP_EXPAND_SOLVER_FAILED;
  }
}

/* Offset of the f-th free body and of joint row j in the state. */
static int body_at(const cp_plan_world *pw, int f) {
  return cp_state_body_at(&pw->lay, pw->lay.free_body[f]);
}
static int joint_at(const cp_plan_world *pw, int j) {
  return CP_STATE_BODY_SIZE * pw->n_free + CP_STATE_JOINT_SIZE * j;
}

/* First free body (its free index) out of the task's bounds, or -1. */
static int out_of_bounds(const cp_plan_world *pw, const double *x) {
  const cp_task *t = pw->task;
  if (!t->has_bounds) return -1;
  for (int b = 0; b < pw->n_free; ++b)
    for (int k = 0; k < 3; ++k) {
      double v = x[body_at(pw, b) + k];
      if (v < t->bounds_min[k] || v > t->bounds_max[k]) return b;
    }
  return -1;
}

/* --- goals ---------------------------------------------------------------- */

/* The phase state x has reached (0 without phases). */
static int phase_of(const cp_plan_world *pw, const double *x) {
  return pw->extra ? (int)x[pw->nw] : 0;
}
static const double *contact_flags(const cp_plan_world *pw, const double *x) {
  return pw->extra ? x + pw->nw + 1 : NULL;
}

/* Records in y's goal entries which contact pairs touch in the world's last
 * step, then moves y's phase on past every phase y meets (the last phase
 * is the goal itself: it is judged at the node, not passed through). */
static void goal_update(const cp_plan_world *pw, int n_contacts, const cp_world_contact *wc,
                        double *y) {
  const cp_task *t = pw->task;
  if (!pw->extra) return;
  double *flags = y + pw->nw + 1;
  for (int k = 0; k < t->pairs.n; ++k) flags[k] = 0;
  for (int c = 0; c < n_contacts; ++c)
    for (int k = 0; k < t->pairs.n; ++k) {
      cp_ref a = t->pairs.a[k], b = t->pairs.b[k];
      const cp_ref *p = &wc[c].a, *q = &wc[c].b;
      int ab = p->body == a.body && p->manip == a.manip && p->link == a.link &&
               q->body == b.body && q->manip == b.manip && q->link == b.link;
      int ba = p->body == b.body && p->manip == b.manip && p->link == b.link &&
               q->body == a.body && q->manip == a.manip && q->link == a.link;
      if (ab || ba) flags[k] = 1;
    }
  int ph = phase_of(pw, y);
  while (ph < t->n_phases - 1 &&
         cp_goal_met(&t->phases[ph], &pw->view, y, flags))
    ++ph;
  y[pw->nw] = ph;
}

/* The steps of one action (plan.h): static and inlined into the search's
 * expansion, so that its per-step path has no call more than before; the
 * cp_plan_world_* wrappers below give them to the OMPL adapter. */
static inline __attribute__((always_inline)) int
begin(cp_plan_world *pw, const double *x, double t, const void *warm,
      size_t warm_size, long a, cp_expansion *info) {
  const cp_task *task = pw->task;
  cp_world *w = pw->world;
  cp_world_status st = cp_world_set_state(w, x);
  if (st != CP_WORLD_OK) {
    info->outcome = outcome_of(st);
    snprintf(info->message, sizeof info->message, "start state: %s",
             cp_world_message(w));
    return 1;
  }
  cp_world_set_time(w, t);
  /* The solvers of the action's steps get the time left (certify's MIP). */
  cp_world_set_deadline(w, cp_search_budget_left(pw->budget));
  if (warm && warm_size) cp_world_warm_set(w, warm, warm_size);
  cp_task_action_values(task, a, pw->values);
  if (pw->actions.n_act)
    cp_plan_actions_start(&pw->actions, task, cp_world_scene(w), pw->values);
  for (int i = 0; i < task->n_inputs; ++i) {
    if (task->inputs[i].kind != CP_INPUT_EFFORT) continue;
    st = task->mode == CP_TASK_QUASISTATIC
             ? cp_world_set_joint_velocity(w, task->inputs[i].row, pw->values[i])
             : cp_world_set_effort(w, task->inputs[i].row, pw->values[i]);
    if (st != CP_WORLD_OK) {
      snprintf(info->message, sizeof info->message, "input %s: %s",
               task->inputs[i].joint, cp_world_message(w));
      return -1; /* the task was checked against the scene: a bug */
    }
  }
  info->outcome = CP_EXPAND_OK;
  return 0;
}

static inline __attribute__((always_inline)) int
advance(cp_plan_world *pw, int k, double *y, cp_expansion *info) {
  const cp_task *task = pw->task;
  cp_world *w = pw->world;
  cp_step_info si;
  memset(&si, 0, sizeof si);
  cp_world_status st = pw->actions.n_act
                           ? cp_plan_actions_apply(&pw->actions, w)
                           : CP_WORLD_OK;
  if (st == CP_WORLD_OK) st = cp_world_step(w, &si);
  info->lcp_solves += si.lcp_solves;
  info->lcp_reused += si.lcp_reused;
  info->pivots += si.pivots;
  if (st == CP_WORLD_NOMEM) {
    snprintf(info->message, sizeof info->message, "out of memory");
    return -1;
  }
  if (st == CP_WORLD_TIME_LIMIT) {
    /* The world's deadline (the budget) stopped a solver call: the action
     * is cut short like the budget poll in expand, with no outcome. */
    info->outcome = CP_EXPAND_SOLVER_FAILED;
    snprintf(info->message, sizeof info->message, "step %d: %s", k + 1,
             cp_world_message(w));
    return 2;
  }
  if (st != CP_WORLD_OK) {
    info->outcome = outcome_of(st);
    snprintf(info->message, sizeof info->message, "step %d: %s", k + 1,
             cp_world_message(w));
    return 1;
  }
  info->steps++;
  info->fallbacks += si.fallback;
  info->warm_steps += si.warm_started;
  cp_world_get_state(w, y);
  if (pw->extra) {
    const cp_world_contact *wc;
    int nc = cp_world_contacts(w, &wc);
    goal_update(pw, nc, wc, y);
  }
  if (pw->observe) pw->observe(pw->observe_ctx, w);
  int b = out_of_bounds(pw, y);
  if (b >= 0) {
    info->outcome = CP_EXPAND_OUT_OF_BOUNDS;
    snprintf(info->message, sizeof info->message,
             "step %d: body \"%s\" at (%.4g, %.4g, %.4g) left the bounds",
             k + 1, task->scene.bodies[pw->lay.free_body[b]].name,
             y[body_at(pw, b)], y[body_at(pw, b) + 1], y[body_at(pw, b) + 2]);
    return 1;
  }
  return 0;
}

static inline __attribute__((always_inline)) void
end(cp_plan_world *pw, cp_expansion *info) {
  cp_world *w = pw->world;
  info->warm = NULL;
  info->warm_size = 0;
  size_t ws = cp_world_warm_size(w);
  if (info->outcome == CP_EXPAND_OK && ws > 0) {
    if (ws > pw->warm_cap) {
      unsigned char *p = realloc(pw->warm, ws);
      if (p) {
        pw->warm = p;
        pw->warm_cap = ws;
      }
    }
    if (ws <= pw->warm_cap) {
      cp_world_warm_get(w, pw->warm, ws);
      info->warm = pw->warm;
      info->warm_size = ws;
    }
  }
}

int cp_plan_world_begin(cp_plan_world *pw, const double *x, double t,
                        const void *warm, size_t warm_size, long a,
                        cp_expansion *info) {
  return begin(pw, x, t, warm, warm_size, a, info);
}

int cp_plan_world_advance(cp_plan_world *pw, int k, double *y,
                          cp_expansion *info) {
  return advance(pw, k, y, info);
}

void cp_plan_world_end(cp_plan_world *pw, cp_expansion *info) {
  end(pw, info);
}

/* One action: begin, task->steps advances (polling the budget every
 * CP_PLAN_BUDGET_STEPS steps), end. */
static void spent(cp_plan_world *pw, double t0) {
  if (!pw->untimed) pw->seconds += cp_clock_thread_cpu() - t0;
}

static int expand(void *ctx, const double *x, double t, const void *warm,
                  size_t warm_size, long a, double *y, cp_expansion *info) {
  cp_plan_world *pw = ctx;
  /* Simulation time is the thread's CPU time: on a shared machine
   * wall-clock time mostly measures the other jobs. Unless the world is
   * untimed: reading that clock is a system call (about 1.5 us on a VM). */
  double t0 = pw->untimed ? 0 : cp_clock_thread_cpu();
  memcpy(y, x, (size_t)pw->n * sizeof *y);
  int r = begin(pw, x, t, warm, warm_size, a, info);
  if (r < 0) return -1;
  if (r > 0) {
    spent(pw, t0);
    return 0;
  }
  for (int k = 0; k < pw->task->steps; ++k) {
    /* A long action polls the budget every CP_PLAN_BUDGET_STEPS steps: cut
     * short, it has no outcome (the search simulates it again on resume). */
    if (k > 0 && k % CP_PLAN_BUDGET_STEPS == 0 &&
        cp_search_budget_spent(pw->budget)) {
      spent(pw, t0);
      return 1;
    }
    r = advance(pw, k, y, info);
    if (r < 0) return -1;
    if (r == 2) { /* cut short by the world's deadline: no outcome */
      spent(pw, t0);
      return 1;
    }
    if (r > 0) break;
  }
  end(pw, info);
  spent(pw, t0);
  return 0;
}

static void set_budget(void *ctx, const cp_search_budget *budget) {
  cp_plan_world *pw = ctx;
  pw->budget = budget;
  if (!budget) cp_world_set_deadline(pw->world, INFINITY);
  cp_plan_pool_set_budget(pw->pool, budget);
}

/* A search of batches of several jobs shares them out over worlds (threads,
 * MPI ranks) whose impact memos hold what each world solved before, so a
 * memo hit counts the pivots of the solve it stands for: a node's pivots
 * are then the same whichever world made it. Batches of one keep the count
 * of the pivots done (the planners' original numbers). Every search starts
 * with empty memos, as in a new process: a benchmark's run then counts the
 * pivots of a lone `plan --seed S` run, whichever runs its thread or rank
 * made before. */
static void set_batch(void *ctx, int batch) {
  cp_plan_world_set_memo_pivots(ctx, batch > 1);
  cp_plan_world_clear_impact_memo(ctx);
}

void cp_plan_world_clear_impact_memo(cp_plan_world *pw) {
  cp_world_clear_impact_memo(pw->world);
  cp_plan_pool_clear_impact_memo(pw->pool);
}

void cp_plan_world_set_memo_pivots(cp_plan_world *pw, int on) {
  cp_world_set_memo_pivots(pw->world, on);
  cp_plan_pool_set_memo_pivots(pw->pool, on);
}

static int expand_batch(void *ctx, cp_expand_job *jobs, int n,
                        const cp_batch_meanwhile *meanwhile) {
  cp_plan_world *pw = ctx;
  if (pw->run_batch)
    return pw->run_batch(pw->run_batch_ctx, &pw->problem, pw->budget, jobs, n,
                         meanwhile);
  return cp_plan_pool_run(pw->pool, pw, jobs, n, meanwhile);
}

static int batch_start(void *ctx, cp_expand_job *jobs, int n) {
  cp_plan_world *pw = ctx;
  if (pw->run_start)
    return pw->run_start(pw->run_batch_ctx, &pw->problem, pw->budget, jobs,
                         n);
  return cp_plan_pool_start(pw->pool, jobs, n);
}

static int batch_wait(void *ctx, int handle,
                      const cp_batch_meanwhile *meanwhile) {
  cp_plan_world *pw = ctx;
  if (pw->run_wait)
    return pw->run_wait(pw->run_batch_ctx, &pw->problem, handle, meanwhile);
  return cp_plan_pool_wait(pw->pool, pw, handle, meanwhile);
}

int cp_plan_world_set_threads(cp_plan_world *pw, int threads, cp_error *err) {
  if (threads < 1 || threads > CP_PLAN_MAX_THREADS)
    return cp_error_set(err, "threads", "expected 1 to %d threads, got %d",
                        CP_PLAN_MAX_THREADS, threads);
  cp_plan_pool_destroy(pw->pool);
  pw->pool = NULL;
  pw->run_batch = NULL;
  pw->run_start = NULL;
  pw->run_wait = NULL;
  pw->problem.expand_batch = NULL;
  pw->problem.batch_start = NULL;
  pw->problem.batch_wait = NULL;
  if (threads == 1) return 0;
  if (cp_plan_pool_create(pw->task, pw->warm_start, threads, &pw->pool, err))
    return -1;
  cp_plan_pool_set_budget(pw->pool, pw->budget);
  cp_plan_pool_set_timing(pw->pool, !pw->untimed);
  pw->problem.expand_batch = expand_batch;
  pw->problem.batch_start = batch_start;
  pw->problem.batch_wait = batch_wait;
  return 0;
}

static double action_cost(void *ctx, long a) {
  return cp_task_action_cost(((cp_plan_world *)ctx)->task, a);
}

/* The action's cost plus cost.path times the distance the chosen bodies'
 * centres moved from x to y. */
static double edge_cost(void *ctx, const double *x, long a, const double *y) {
  cp_plan_world *pw = ctx;
  const cp_task *t = pw->task;
  double len = 0;
  for (int i = 0; i < t->n_path_bodies; ++i) {
    int o = cp_state_body_at(&pw->lay, t->path_bodies[i]);
    len += sqrt((y[o] - x[o]) * (y[o] - x[o]) +
                (y[o + 1] - x[o + 1]) * (y[o + 1] - x[o + 1]) +
                (y[o + 2] - x[o + 2]) * (y[o + 2] - x[o + 2]));
  }
  return cp_task_action_cost(t, a) + t->cost_path * len;
}

/* Distance to the goal: the current phase's and every later one's, each
 * measured from x (planner/search/goal.h), summed. */
static double goal_dist(void *ctx, const double *x) {
  cp_plan_world *pw = ctx;
  const cp_task *t = pw->task;
  const double *flags = contact_flags(pw, x);
  double d = 0;
  for (int k = phase_of(pw, x); k < t->n_phases; ++k)
    d += cp_goal_distance(&t->phases[k], &pw->view, x, flags);
  return d;
}

static int in_goal(void *ctx, const double *x) {
  cp_plan_world *pw = ctx;
  const cp_task *t = pw->task;
  return phase_of(pw, x) == t->n_phases - 1 &&
         cp_goal_met(&t->phases[t->n_phases - 1], &pw->view, x,
                     contact_flags(pw, x));
}

static double heuristic(void *ctx, const double *x) {
  cp_plan_world *pw = ctx;
  return pw->task->cost_time * goal_dist(ctx, x) / pw->task->speed;
}

/* The quaternion's sign chosen with w >= 0 (q and -q are one rotation). */
static double qsign(const double *q) { return q[0] < 0 ? -1.0 : 1.0; }

/* The goal entries' embedding: a phase is 1 m (position units) away from
 * the next, a contact flag res_position. */
static double extra_scale(const cp_plan_world *pw, int i) {
  return i == pw->nw ? pw->task->metric[0] : pw->task->res_position;
}

static void embed(void *ctx, const double *x, double *e) {
  cp_plan_world *pw = ctx;
  const double *m = pw->task->metric;
  for (int b = 0; b < pw->n_free; ++b) {
    const double *s = x + body_at(pw, b);
    double *o = e + body_at(pw, b), sg = qsign(s + 3);
    for (int k = 0; k < 3; ++k) o[k] = m[0] * s[k];
    for (int k = 0; k < 4; ++k) o[3 + k] = m[1] * sg * s[3 + k];
    for (int k = 0; k < 3; ++k) o[7 + k] = m[2] * s[7 + k];
    for (int k = 0; k < 3; ++k) o[10 + k] = m[2] * 0.1 * s[10 + k];
  }
  for (int j = 0; j < pw->n_joints; ++j) {
    const double *s = x + joint_at(pw, j);
    double *o = e + joint_at(pw, j);
    o[0] = (pw->prismatic[j] ? m[0] : m[3]) * s[0] * pw->task->metric_robot;
    o[1] = (pw->prismatic[j] ? m[2] : m[4]) * s[1] * pw->task->metric_robot;
  }
  for (int i = pw->nw; i < pw->n; ++i) e[i] = extra_scale(pw, i) * x[i];
}

static int64_t cell(double v, double res) { return (int64_t)floor(v / res); }

static void discretise(void *ctx, const double *x, int64_t *key) {
  cp_plan_world *pw = ctx;
  const cp_task *t = pw->task;
  double rp = t->res_position, ra = t->res_angle, rv = t->res_velocity;
  for (int b = 0; b < pw->n_free; ++b) {
    const double *s = x + body_at(pw, b);
    int64_t *o = key + body_at(pw, b);
    double sg = qsign(s + 3);
    for (int k = 0; k < 3; ++k) o[k] = cell(s[k], rp);
    /* A quaternion component moves by about half the angle. */
    for (int k = 0; k < 4; ++k) o[3 + k] = cell(sg * s[3 + k], 0.5 * ra);
    for (int k = 0; k < 3; ++k) o[7 + k] = cell(s[7 + k], rv);
    for (int k = 0; k < 3; ++k) o[10 + k] = cell(s[10 + k], rv / 0.1);
  }
  for (int j = 0; j < pw->n_joints; ++j) {
    const double *s = x + joint_at(pw, j);
    int64_t *o = key + joint_at(pw, j);
    o[0] = cell(s[0], pw->prismatic[j] ? rp : ra);
    o[1] = cell(s[1], pw->prismatic[j] ? rv : rv / 0.1);
  }
  for (int i = pw->nw; i < pw->n; ++i) key[i] = (int64_t)x[i];
}

static void sample_bounds(void *ctx, double *lo, double *hi) {
  cp_plan_world *pw = ctx;
  const cp_task *t = pw->task;
  if (!t->has_bounds) return;
  for (int b = 0; b < pw->n_free; ++b)
    for (int k = 0; k < 3; ++k) {
      lo[body_at(pw, b) + k] = t->metric[0] * t->bounds_min[k];
      hi[body_at(pw, b) + k] = t->metric[0] * t->bounds_max[k];
    }
}

/* e (the embedding of the node nearest the goal) moved into the goal of
 * the phase it has reached: each body term's body to the nearest point of
 * its region, turned to its orientation; the rest bodies stopped; the
 * joints of joint terms to their targets. */
static void goal_sample(void *ctx, double *e) {
  cp_plan_world *pw = ctx;
  const cp_task *t = pw->task;
  const double *m = t->metric;
  int ph = pw->extra ? (int)(e[pw->nw] / extra_scale(pw, pw->nw) + 0.5) : 0;
  if (ph < 0) ph = 0;
  if (ph > t->n_phases - 1) ph = t->n_phases - 1;
  const cp_goal *g = &t->phases[ph];
  for (int i = 0; i < g->n_bodies; ++i) {
    const cp_goal_body *b = &g->bodies[i];
    double *o = e + cp_state_body_at(&pw->lay, b->body_index), p[3];
    for (int k = 0; k < 3; ++k) p[k] = o[k] / m[0];
    cp_goal_body_target(b, p, p);
    for (int k = 0; k < 3; ++k) o[k] = m[0] * p[k];
    if (b->has_orientation) {
      /* q and -q are one goal; take the one nearer the node's (sign-fixed)
       * quaternion, or a half-turn goal (w = 0) reached by turning the
       * other way would sample the goal across the embedding from it. */
      double sg = qsign(b->orientation), dot = 0;
      for (int k = 0; k < 4; ++k) dot += o[3 + k] * sg * b->orientation[k];
      if (dot < 0) sg = -sg;
      for (int k = 0; k < 4; ++k) o[3 + k] = m[1] * sg * b->orientation[k];
    }
  }
  for (int i = 0; i < g->n_joints; ++i) {
    const cp_goal_joint *j = &g->joints[i];
    e[joint_at(pw, j->row)] =
        (j->prismatic ? m[0] : m[3]) * j->position * pw->task->metric_robot;
  }
  for (int i = 0; i < g->n_bodies; ++i)
    for (int r = 0; g->at_rest && r < g->n_rest; ++r)
      if (g->rest_bodies[r] == g->bodies[i].body_index) {
        double *o = e + cp_state_body_at(&pw->lay, g->rest_bodies[r]);
        for (int k = 7; k < 13; ++k) o[k] = 0;
      }
}

/* Local steering (search.steer "local"; planner/search/steer_local.c):
 * the task's steered actions, and the free bodies' position and
 * orientation rows of the embedding as the rows it fits. */
static long steer_action(void *ctx, const double *u) {
  return cp_task_steer_action(((cp_plan_world *)ctx)->task, u);
}
static void steer_coords(void *ctx, long a, double *u) {
  cp_plan_world *pw = ctx;
  cp_task_action_values(pw->task, a, pw->values);
  cp_task_steer_coords(pw->task, pw->values, u);
}
static int steer_rows(void *ctx, int *rows) {
  cp_plan_world *pw = ctx;
  int r = 0;
  for (int b = 0; b < pw->n_free; ++b)
    for (int k = 0; k < 7; ++k) rows[r++] = body_at(pw, b) + k;
  return r;
}

cp_world_options cp_plan_world_options_of(const cp_task *task, int warm_start) {
  cp_world_options wo = cp_world_defaults();
  wo.stepper = (cp_stepper)task->stepper;
  wo.dt = task->dt;
  wo.warm_start = warm_start;
  // Siblings share the first step's impacts (they depend on the state, not
  // the action): with warm starts on, each is solved once (docs/plan.md).
  wo.impact_memo = warm_start ? CP_PLAN_IMPACT_MEMO : 0;
  wo.allow_fallback = task->allow_fallback;
  wo.velocity_sliding = task->velocity_sliding;
  return wo;
}

int cp_plan_world_create(const cp_task *task, int warm_start,
                         cp_plan_world **out, cp_error *err) {
  *out = NULL;
  cp_plan_world *pw = calloc(1, sizeof *pw);
  if (!pw) return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  pw->task = task;
  pw->warm_start = warm_start;
  cp_world_options wo = cp_plan_world_options_of(task, warm_start);
  cp_error e;
  memset(&e, 0, sizeof e);
  cp_world_status st = cp_world_create(&task->scene, &wo, &pw->world, &e);
  if (st != CP_WORLD_OK) {
    cp_error_setc(err,
                  st == CP_WORLD_NOMEM ? CP_ERR_NOMEM
                  : e.code != CP_ERR_NONE ? e.code
                                          : CP_ERR_INPUT,
                  "scene", "cannot simulate the scene: %s%s%s",
                 e.where[0] ? e.where : "", e.where[0] ? ": " : "",
                 e.msg[0] ? e.msg : cp_world_status_name(st));
    free(pw);
    return -1;
  }
  const cp_scene *sc = &task->scene;
  pw->nw = cp_world_state_size(pw->world);
  pw->extra = task->n_phases > 1 || task->pairs.n > 0 ? 1 + task->pairs.n : 0;
  pw->n = pw->nw + pw->extra;
  pw->n_joints = cp_world_joint_count(pw->world);
  pw->prismatic = calloc((size_t)pw->n_joints + 1, sizeof(int));
  pw->x0 = malloc((size_t)pw->n * sizeof(double));
  pw->values = malloc((size_t)task->n_inputs * sizeof(double));
  if (!pw->prismatic || !pw->x0 || !pw->values) {
    cp_plan_world_destroy(pw);
    return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  }
  /* Bodies, joint rows and input rows from the state layout
   * (planner/sim/statelayout.h: mimic followers have no row; names of any
   * length). */
  cp_state_layout lay;
  if (cp_state_layout_init(&pw->lay, cp_world_scene(pw->world))) {
    cp_plan_world_destroy(pw);
    return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  }
  lay = pw->lay;
  pw->n_free = lay.n_free;
  pw->view.layout = &pw->lay;
  pw->view.angle_scale = task->angle_scale;
  pw->view.contact_miss = task->res_position;
  for (int r = 0; r < lay.n_joints && r < pw->n_joints; ++r)
    pw->prismatic[r] = sc->manips[lay.row_manip[r]].joints[lay.row_joint[r]]
                           .type == CP_JOINT_PRISMATIC;
  int bad_input = -1;
  for (int i = 0; i < task->n_inputs && bad_input < 0; ++i)
    if (task->inputs[i].kind < CP_INPUT_CARTESIAN && /* a joint's input */
        cp_state_joint_row(&lay, cp_world_scene(pw->world),
                           task->inputs[i].joint, NULL) != task->inputs[i].row)
      bad_input = i;
  if (pw->nw != lay.n || lay.n_joints != pw->n_joints) {
    cp_plan_world_destroy(pw);
    return cp_error_set(err, "scene",
                        "the world's state layout (%d numbers) does not match "
                        "the scene", pw->nw);
  }
  if (bad_input >= 0) {
    char where[CP_JSON_PATH_MAX];
    snprintf(where, sizeof where, "inputs.%.150s",
             task->inputs[bad_input].joint);
    cp_plan_world_destroy(pw);
    return cp_error_set(err, where, "the world does not know this joint");
  }
  if (cp_plan_actions_init(&pw->actions, task, err)) {
    cp_plan_world_destroy(pw);
    return -1;
  }
  cp_world_get_state(pw->world, pw->x0);
  for (int i = pw->nw; i < pw->n; ++i) pw->x0[i] = 0;
  goal_update(pw, 0, NULL, pw->x0); /* phases the start already meets */
  cp_search_problem *p = &pw->problem;
  p->n = p->m = p->key_n = pw->n;
  p->n_actions = task->n_actions;
  p->duration = task->duration;
  p->ctx = pw;
  p->expand = expand;
  p->action_cost = action_cost;
  if (task->cost_path > 0) p->edge_cost = edge_cost;
  p->in_goal = in_goal;
  p->heuristic = heuristic;
  p->goal_distance = goal_dist;
  p->embed = embed;
  p->discretise = discretise;
  p->sample_bounds = sample_bounds;
  p->goal_sample = goal_sample;
  p->set_budget = set_budget;
  p->set_batch = set_batch;
  if (task->steer_local) {
    p->n_steer = task->n_steer;
    p->steer_action = steer_action;
    p->steer_coords = steer_coords;
    p->steer_rows = steer_rows;
    p->steer_pose = 1; /* 7 rows per free body: position, quaternion */
  }
  snprintf(pw->options, sizeof pw->options,
           "{\"stepper\": \"%s\", \"dt\": %.17g, \"steps_per_action\": %d, "
           "\"warm_start\": %d, \"allow_fallback\": %d, \"solver\": \"%s\", "
           "\"velocity_sliding\": %d}",
           cp_stepper_name(wo.stepper), wo.dt, task->steps, wo.warm_start,
           wo.allow_fallback, cp_lcp_solver_name(wo.solve.solver),
           wo.velocity_sliding);
  *out = pw;
  return 0;
}

int cp_plan_world_set_impact_memo(cp_plan_world *pw, int slots) {
  if (cp_world_set_impact_memo(pw->world, slots) != CP_WORLD_OK) return -1;
  return cp_plan_pool_set_impact_memo(pw->pool, slots);
}

void cp_plan_world_destroy(cp_plan_world *pw) {
  if (!pw) return;
  cp_plan_pool_destroy(pw->pool);
  cp_world_destroy(pw->world);
  cp_plan_actions_free(&pw->actions);
  cp_state_layout_free(&pw->lay);
  free(pw->prismatic);
  free(pw->x0);
  free(pw->values);
  free(pw->warm);
  free(pw);
}

const cp_search_problem *cp_plan_world_problem(const cp_plan_world *pw) {
  return &pw->problem;
}
const double *cp_plan_world_start(const cp_plan_world *pw) { return pw->x0; }
const char *cp_plan_world_options(const cp_plan_world *pw) {
  return pw->options;
}
void cp_plan_world_set_timing(cp_plan_world *pw, int on) {
  pw->untimed = !on;
  cp_plan_pool_set_timing(pw->pool, on);
}

double cp_plan_world_seconds(const cp_plan_world *pw) {
  return pw->seconds + cp_plan_pool_seconds(pw->pool);
}

cp_plan_status cp_plan_task(cp_store *st, const cp_task *task,
                            const cp_plan_options *opt, cp_plan_result *res,
                            cp_error *err) {
  cp_plan_world *pw;
  if (cp_plan_world_create(task, 1, &pw, err)) {
    memset(res, 0, sizeof *res);
    res->plan_id = -1;
    return res->status = CP_PLAN_BAD_INPUT;
  }
  cp_plan_world_set_timing(pw, 0); /* its seconds are not reported */
  cp_plan_options o = opt ? *opt : cp_plan_defaults();
  int batch = o.search_batch > 0 ? o.search_batch : task->search_batch;
  if (!o.run_batch && o.threads > 1 && batch > 1 &&
      cp_plan_world_set_threads(pw, o.threads, err)) {
    cp_plan_world_destroy(pw);
    memset(res, 0, sizeof *res);
    res->plan_id = -1;
    return res->status = err->code == CP_ERR_NOMEM ? CP_PLAN_FAILED
                                                    : CP_PLAN_BAD_INPUT;
  }
  if (o.run_batch) {
    pw->run_batch = o.run_batch;
    pw->run_batch_ctx = o.run_batch_ctx;
    pw->problem.expand_batch = expand_batch;
    if (o.run_batch_start && o.run_batch_wait) { /* pipelined batches */
      pw->run_start = o.run_batch_start;
      pw->run_wait = o.run_batch_wait;
      pw->problem.batch_start = batch_start;
      pw->problem.batch_wait = batch_wait;
    }
  }
  o.world_options = cp_plan_world_options(pw);
  cp_plan_status s = cp_plan_search(st, task, cp_plan_world_problem(pw),
                                    cp_plan_world_start(pw), &o, res, err);
  cp_plan_world_destroy(pw);
  return s;
}


void cp_plan_world_observe(cp_plan_world *pw,
                           void (*fn)(void *ctx, const cp_world *world),
                           void *ctx) {
  pw->observe = fn;
  pw->observe_ctx = ctx;
}

int cp_plan_world_set_solve_poll(cp_plan_world *pw, void (*fn)(void *ctx),
                                 void *ctx, int period) {
  return cp_world_set_solve_poll(pw->world, fn, ctx, period) == CP_WORLD_OK ? 0 : -1;
}
