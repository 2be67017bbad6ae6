/* A task's action ids (planner/search/task.h): the values and cost of an
 * action on the grid, sampled (continuous sampling) or steered (search.steer
 * "local": the key, and the ids the search makes from a normalised input u,
 * which the store, resume and replay decode like any other action id). */
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/jsonread.h"
#include "planner/search/search.h"
#include "planner/search/task.h"
#include "planner/search/task_keys.h"

/* Levels per steered input: at most this many (a resolution of 0.2 % of
 * the range is finer than any task needs). */
#define CP_STEER_MAX_LEVELS 1001

/* The largest odd L <= CP_STEER_MAX_LEVELS with CP_TASK_CONTINUOUS_ACTIONS
 * + L^n <= LONG_MAX, or 0 when not even 3 levels fit. */
static long levels_for(int n) {
  long best = 0;
  for (long L = 3; L <= CP_STEER_MAX_LEVELS; L += 2) {
    double room = (double)(LONG_MAX - CP_TASK_CONTINUOUS_ACTIONS), p = 1;
    for (int i = 0; i < n && p <= room; ++i) p *= (double)L;
    if (p > room * (1 - 1e-12)) return best; /* doubles: a safe margin */
    best = L;
  }
  return best;
}

/* The inputs local steering moves: every input with a range but reach
 * inputs (the others keep their single value; reach inputs take -1). */
static int steered(const cp_task_input *in) {
  return in->kind != CP_INPUT_REACH && in->has_range && in->hi > in->lo;
}

/* search.steer_rotation ("quaternion", default, or "log": the chart of
 * planner/search/steer_chart.c) and search.steer_probe (a number in (0, 1]:
 * coordinate probes; absent: none). */
static int parse_steer_options(cp_task *t, const json_t *v, cp_error *err) {
  const json_t *x = json_object_get(v, "steer_rotation");
  if (x) {
    const char *m;
    if (cp_json_string(x, "search.steer_rotation", &m, err)) return -1;
    if (strcmp(m, "quaternion") && strcmp(m, "log"))
      return cp_error_set(err, "search.steer_rotation",
                          "expected \"quaternion\" or \"log\", got \"%.40s\"", m);
    t->steer_log = !strcmp(m, "log");
  }
  if ((x = json_object_get(v, "steer_probe"))) {
    if (!json_is_number(x) || !(json_number_value(x) > 0) ||
        !(json_number_value(x) <= 1))
      return cp_error_set(err, "search.steer_probe",
                          "expected a number in (0, 1] (the probe's "
                          "normalised input)");
    t->steer_probe = json_number_value(x);
  }
  return 0;
}

int cp_task_parse_steer(cp_task *t, const json_t *v, cp_error *err) {
  const json_t *x = json_object_get(v, "steer");
  const char *m = "sample";
  if (x && cp_json_string(x, "search.steer", &m, err)) return -1;
  if (strcmp(m, "sample") && strcmp(m, "local"))
    return cp_error_set(err, "search.steer",
                        "expected \"sample\" or \"local\", got \"%.40s\"", m);
  if (!strcmp(m, "sample")) {
    if (json_object_get(v, "steer_rotation") || json_object_get(v, "steer_probe"))
      return cp_error_set(err, json_object_get(v, "steer_probe")
                                   ? "search.steer_probe"
                                   : "search.steer_rotation",
                          "goes with \"steer\": \"local\"");
    return 0;
  }
  if (!t->continuous || (strcmp(t->method, "rrt") && strcmp(t->method, "sst")))
    return cp_error_set(err, "search.steer",
                        "local steering goes with method \"rrt\" or "
                        "\"sst\" and sampling \"continuous\"");
  int n = 0;
  for (int i = 0; i < t->n_inputs; ++i) {
    const cp_task_input *in = &t->inputs[i];
    if (in->kind == CP_INPUT_PINCH) {
      char where[CP_JSON_PATH_MAX];
      snprintf(where, sizeof where, "inputs.%.150s", in->joint);
      return cp_error_set(err, where, "local steering does not take \"pinch\" inputs (yet): use \"sample\"");
    }
    if (steered(in)) {
      ++n;
    } else if (in->kind != CP_INPUT_REACH && in->n_values != 1) {
      char where[CP_JSON_PATH_MAX];
      snprintf(where, sizeof where, "inputs.%.150s", in->joint);
      return cp_error_set(err, where,
                          "local steering needs a \"range\" [lo, hi] with "
                          "lo < hi, or a single value, on every input but "
                          "reach inputs");
    }
  }
  long L = levels_for(n);
  if (n == 0 || L == 0)
    return cp_error_set(err, "search.steer",
                        "local steering needs 1 to 39 inputs with a range "
                        "(besides reach inputs), the task has %d", n);
  t->steer_local = 1;
  t->n_steer = n;
  t->steer_levels = L;
  return parse_steer_options(t, v, err);
}

/* L^n: the number of steered actions. */
static long steered_count(const cp_task *t) {
  long c = 1;
  for (int i = 0; i < t->n_steer; ++i) c *= t->steer_levels;
  return c;
}

int cp_task_action_is_steered(const cp_task *t, long a) {
  return t->steer_local && a >= CP_TASK_CONTINUOUS_ACTIONS &&
         a - CP_TASK_CONTINUOUS_ACTIONS < steered_count(t);
}

int cp_task_action_valid(const cp_task *t, long a) {
  return (a >= 0 && a < t->n_actions) || cp_task_action_is_steered(t, a);
}

long cp_task_steer_action(const cp_task *t, const double *u) {
  long a = 0, L = t->steer_levels;
  for (int i = t->n_steer - 1; i >= 0; --i) {
    double v = u[i] < -1 ? -1 : u[i] > 1 ? 1 : u[i];
    long level = lround((v + 1) * 0.5 * (double)(L - 1));
    a = a * L + level;
  }
  return CP_TASK_CONTINUOUS_ACTIONS + a;
}

/* Steered input i's value in action a (rest: the mixed-radix remainder,
 * carried from one steered input to the next). */
static double steered_value(const cp_task_input *in, long L, long *rest) {
  double u = 2.0 * (double)(*rest % L) / (double)(L - 1) - 1;
  *rest /= L;
  return 0.5 * (in->lo + in->hi) + 0.5 * (in->hi - in->lo) * u;
}

/* Input in's value in a steered action: its level (steered), -1 (reach:
 * no new contact; a touching point is held) or its single value. */
static double steer_value(const cp_task_input *in, long L, long *rest) {
  if (steered(in)) return steered_value(in, L, rest);
  return in->kind == CP_INPUT_REACH ? -1 : in->values[0];
}

static void steer_values(const cp_task *t, long a, double *out) {
  long rest = a - CP_TASK_CONTINUOUS_ACTIONS;
  for (int i = 0; i < t->n_inputs; ++i)
    out[i] = steer_value(&t->inputs[i], t->steer_levels, &rest);
}

static double steer_cost(const cp_task *t, long a) {
  long rest = a - CP_TASK_CONTINUOUS_ACTIONS;
  double sq = 0;
  for (int i = 0; i < t->n_inputs; ++i) {
    double v = steer_value(&t->inputs[i], t->steer_levels, &rest);
    if (t->inputs[i].kind < CP_INPUT_REACH) sq += v * v; /* else a label */
  }
  return (t->cost_time + t->cost_effort * sq) * t->duration;
}

void cp_task_steer_coords(const cp_task *t, const double *values, double *u) {
  int k = 0;
  for (int i = 0; i < t->n_inputs; ++i) {
    const cp_task_input *in = &t->inputs[i];
    if (!steered(in)) continue;
    u[k++] = (2 * values[i] - in->lo - in->hi) / (in->hi - in->lo);
  }
}

/* Input i's value in action a; *rest carries the mixed-radix remainder
 * (grid) or the generator (continuous) from one input to the next. */
static double input_value(const cp_task *t, int i, long *rest, cp_rng *r) {
  const cp_task_input *in = &t->inputs[i];
  if (!t->continuous) {
    double v = in->values[*rest % in->n_values];
    *rest /= in->n_values;
    return v;
  }
  double u = cp_rng_uniform(r);
  if (in->has_range) return in->lo + (in->hi - in->lo) * u;
  int k = (int)(u * in->n_values);
  return in->values[k < in->n_values ? k : in->n_values - 1];
}

void cp_task_action_values(const cp_task *t, long a, double *out) {
  if (cp_task_action_is_steered(t, a)) {
    steer_values(t, a, out);
    return;
  }
  cp_rng r;
  if (t->continuous) cp_rng_seed(&r, (uint64_t)a);
  for (int i = 0; i < t->n_inputs; ++i) out[i] = input_value(t, i, &a, &r);
}

double cp_task_action_cost(const cp_task *t, long a) {
  if (cp_task_action_is_steered(t, a)) return steer_cost(t, a);
  double sq = 0;
  cp_rng r;
  if (t->continuous) cp_rng_seed(&r, (uint64_t)a);
  for (int i = 0; i < t->n_inputs; ++i) {
    double v = input_value(t, i, &a, &r);
    if (t->inputs[i].kind < CP_INPUT_REACH) sq += v * v; /* else a label */
  }
  return (t->cost_time + t->cost_effort * sq) * t->duration;
}
