/* Local steering (search.steer "local"; planner/search/steer_local.c,
 * docs/planner.md "Local steering"): the fitted linear model against known
 * linear maps; the bounded least squares against its optimality conditions;
 * steered action ids round-trip through the task; and on a quasistatic push
 * whose response is known analytically (the box moves v T when the finger
 * touching it moves at v for T) the model's B matches v's effect, and the
 * steered action ends where the model predicts. Bad keys are refused with
 * their JSON path. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/plan/plan.h"
#include "planner/search/search_impl.h"
#include "planner/search/task.h"
#include <jansson.h>

#include "tests/support.h"

#ifndef M_PI
#define M_PI 3.14159265358979323846
#endif

/* Random linear responses df = B du are recovered exactly (to rounding)
 * from k >= n independent inputs. */
Test(steer_local, fit_recovers_a_linear_map) {
  uint64_t rs = 7;
  enum { N = 4, R = 5, K = 9 };
  double B[R * N], du[K * N], df[K * R], g[N * N], b[R * N];
  for (int i = 0; i < R * N; ++i) B[i] = cpt_uniform(&rs, -2, 2);
  for (int j = 0; j < K; ++j) {
    for (int p = 0; p < N; ++p) du[j * N + p] = cpt_uniform(&rs, -1, 1);
    for (int i = 0; i < R; ++i) {
      df[j * R + i] = 0;
      for (int p = 0; p < N; ++p) df[j * R + i] += B[i * N + p] * du[j * N + p];
    }
  }
  cr_assert_eq(cp_steer_fit(N, R, K, du, df, g, b), 0);
  for (int i = 0; i < R * N; ++i)
    cr_assert(fabs(b[i] - B[i]) < 1e-6, "B[%d] %g, want %g", i, b[i], B[i]);
  /* Axis probes: the forward finite difference, column by column. */
  double ax[N * N];
  for (int j = 0; j < N; ++j)
    for (int p = 0; p < N; ++p) ax[j * N + p] = j == p ? 0.5 : 0;
  for (int j = 0; j < N; ++j)
    for (int i = 0; i < R; ++i) df[j * R + i] = 0.5 * B[i * N + j];
  cr_assert_eq(cp_steer_fit(N, R, N, ax, df, g, b), 0);
  for (int i = 0; i < R * N; ++i) cr_assert(fabs(b[i] - B[i]) < 1e-6);
  /* No input spans anything: refused. */
  memset(du, 0, sizeof du);
  cr_assert_eq(cp_steer_fit(N, R, K, du, df, g, b), -1);
}

/* The bounded least squares meets its optimality conditions: for each
 * coordinate, the gradient of |B u - d|^2 (plus the small ridge) vanishes
 * when u_p is inside (-1, 1) and points outwards at a bound. */
Test(steer_local, bounded_least_squares_is_optimal) {
  uint64_t rs = 11;
  enum { N = 6, R = 7 };
  double b[R * N], d[R], q[N * N], c[N], u[N];
  for (int trial = 0; trial < 50; ++trial) {
    for (int i = 0; i < R * N; ++i) b[i] = cpt_uniform(&rs, -1, 1);
    for (int i = 0; i < R; ++i) d[i] = cpt_uniform(&rs, -3, 3);
    cp_steer_solve(N, R, b, d, q, c, u);
    int inside = 0, at_bound = 0;
    for (int p = 0; p < N; ++p) {
      double grad = 0; /* d/du_p of |B u - d|^2 / 2 */
      for (int i = 0; i < R; ++i) {
        double res = -d[i];
        for (int k = 0; k < N; ++k) res += b[i * N + k] * u[k];
        grad += b[i * N + p] * res;
      }
      cr_assert(u[p] >= -1 && u[p] <= 1);
      if (fabs(u[p]) < 1 - 1e-9) {
        inside++;
        cr_assert(fabs(grad) < 1e-4, "interior u %g, gradient %g", u[p], grad);
      } else {
        at_bound++;
        cr_assert(grad * u[p] <= 1e-4, "bound u %g, gradient %g", u[p], grad);
      }
    }
    cr_assert(inside + at_bound == N);
  }
  /* Unbounded optimum inside the box: the plain solution of B u = d. */
  double bi[2 * 2] = {2, 0, 0, 4}, di[2] = {1, -2}, qi[4], ci[2], ui[2];
  cp_steer_solve(2, 2, bi, di, qi, ci, ui);
  cr_assert(fabs(ui[0] - 0.5) < 1e-5 && fabs(ui[1] + 0.5) < 1e-5);
}

/* A box on a table (mu 0.3) touched by a one-joint prismatic finger along
 * +x; quasistatic: the input is the finger's velocity in [0, 0.2] m/s,
 * held 0.1 s, so the box moves 0.1 v: 0.01 + 0.01 u for the normalised
 * input u. A second input (a joint of a finger far away) moves nothing. */
#define PUSH_SCENE                                                           \
  "{\"gravity\": [0, 0, -9.81], \"friction\": {\"default\": 0.3},"           \
  " \"bodies\": ["                                                           \
  " {\"name\": \"table\", \"fixed\": true, \"shape\": {\"type\": \"plane\"," \
  "  \"normal\": [0, 0, 1], \"offset\": 0}},"                                \
  " {\"name\": \"box\", \"mass\": 0.5, \"shape\": {\"type\": \"box\","       \
  "  \"size\": [0.1, 0.1, 0.1]}, \"position\": [0, 0, 0.05]}],"              \
  " \"manipulators\": ["                                                     \
  "  {\"name\": \"finger\", \"base\": {\"position\": [-0.25, 0, 0.05]},"     \
  "   \"joints\": [{\"name\": \"slide\", \"type\": \"prismatic\","           \
  "   \"axis\": [1, 0, 0], \"limits\": {\"lower\": -0.1, \"upper\": 0.5},"   \
  "   \"link\": {\"name\": \"rod\", \"mass\": 0.1, \"com\": [0.1, 0, 0],"    \
  "   \"shape\": {\"type\": \"box\", \"size\": [0.2, 0.02, 0.02]}}}]},"       \
  "  {\"name\": \"other\", \"base\": {\"position\": [0, 0.5, 0.3]},"         \
  "   \"joints\": [{\"name\": \"slide\", \"type\": \"prismatic\","           \
  "   \"axis\": [0, 0, 1], \"limits\": {\"lower\": -0.2, \"upper\": 0.2},"   \
  "   \"link\": {\"name\": \"rod2\", \"mass\": 0.1, \"shape\": {\"type\":"   \
  "   \"box\", \"size\": [0.02, 0.02, 0.02]}}}]}]}"

/* extra: more search keys (each with a leading comma), or "". */
static char *push_task_ext(double goal_x, const char *steer,
                           const char *method, const char *other,
                           const char *extra) {
  char *buf = malloc(8192);
  snprintf(buf, 8192,
           "{\"scene\": %s, \"mode\": \"quasistatic\","
           " \"inputs\": {\"finger/slide\": {\"range\": [0, 0.2], \"samples\": 1},"
           "  \"other/slide\": {%s}},"
           " \"action\": {\"duration\": 0.1, \"dt\": 0.01},"
           " \"goal\": {\"body\": \"box\", \"position\": [%.17g, 0, 0.05],"
           "  \"tolerance\": 0.0002},"
           " \"bounds\": {\"min\": [-1, -1, 0], \"max\": [1, 1, 1]},"
           " \"search\": {\"method\": \"%s\", \"sampling\": \"continuous\","
           "  \"goal_bias\": 1, \"candidates\": 4, \"steer\": \"%s\"%s},"
           " \"limits\": {\"nodes\": 100}}",
           PUSH_SCENE, other, goal_x, method, steer, extra);
  return buf;
}

static char *push_task_other(double goal_x, const char *steer,
                             const char *method, const char *other) {
  return push_task_ext(goal_x, steer, method, other, "");
}

static char *push_task(double goal_x, const char *steer, const char *method) {
  return push_task_other(goal_x, steer, method,
                         "\"range\": [-0.1, 0.1], \"samples\": 1");
}

static void parse(const char *text, cp_task *t) {
  cp_error e;
  cr_assert_eq(cp_task_parse(text, strlen(text), NULL, t, &e), 0, "%s: %s",
               e.where, e.msg);
}

Test(steer_local, steered_ids_round_trip) {
  char *text = push_task(0.013, "local", "rrt");
  cp_task t;
  parse(text, &t);
  free(text);
  cr_assert_eq(t.steer_local, 1);
  cr_assert_eq(t.n_steer, 2);
  cr_assert(t.steer_levels >= 3 && t.steer_levels % 2 == 1);
  double u[2] = {0.3, -1}, v[2], w[2];
  long a = cp_task_steer_action(&t, u);
  cr_assert(cp_task_action_is_steered(&t, a) && cp_task_action_valid(&t, a));
  cr_assert(!cp_task_action_is_steered(&t, 12345));
  cr_assert(cp_task_action_valid(&t, 12345));
  cr_assert(!cp_task_action_valid(&t, -1));
  cp_task_action_values(&t, a, v);
  double step = 2.0 / (double)(t.steer_levels - 1);
  cr_assert(fabs(v[0] - (0.1 + 0.1 * 0.3)) <= 0.1 * step / 2 + 1e-15, "%g", v[0]);
  cr_assert_eq(v[1], -0.1);
  cp_task_steer_coords(&t, v, w);
  cr_assert(fabs(w[0] - 0.3) <= step / 2 + 1e-15 && w[1] == -1);
  /* Quantised values are fixed points. */
  cr_assert_eq(cp_task_steer_action(&t, w), a);
  double zero[2] = {0, 0};
  cp_task_action_values(&t, cp_task_steer_action(&t, zero), v);
  cr_assert(fabs(v[0] - 0.1) < 1e-15 && fabs(v[1]) < 1e-15);
  cr_assert(cp_task_action_cost(&t, a) > 0);
  cp_task_free(&t);
}

/* One iteration from the start: node 1 the zero input, nodes 2..5 the
 * candidates, node 6 the steered input. */
static void one_iteration(double goal_x, double *dx_steered, double *b_x,
                          long *steered_action, cp_task *t) {
  char *text = push_task(goal_x, "local", "rrt");
  parse(text, t);
  free(text);
  cp_error e;
  cp_plan_world *pw;
  cr_assert_eq(cp_plan_world_create(t, 1, &pw, &e), 0, "%s", e.msg);
  const cp_search_problem *p = cp_plan_world_problem(pw);
  cp_search_options o = cp_search_defaults();
  o.method = "rrt";
  o.goal_bias = 1;
  o.candidates = 4;
  o.steer_local = 1;
  char msg[256];
  cp_search *s = cp_search_create(p, &o, cp_plan_world_start(pw), 0, msg,
                                  sizeof msg);
  cr_assert(s, "%s", msg);
  cp_search_status st = cp_search_iterate(s);
  cr_assert(st == CP_SEARCH_RUNNING || st == CP_SEARCH_SOLVED);
  cr_assert_eq(cp_search_node_count(s), 7);
  /* The box's x in each outcome against the analytic 0.1 v. */
  double du[4], df[4], g[1], bfit[1];
  double x0 = cp_search_state(s, 1)[0];
  cr_assert(fabs(x0 - 0.01) < 2e-4, "zero input moved the box %g", x0);
  for (int j = 0; j < 4; ++j) {
    const cp_search_node *nd = cp_search_node_get(s, 2 + j);
    double vals[2];
    cp_task_action_values(t, nd->action, vals);
    double x = cp_search_state(s, 2 + j)[0];
    cr_assert(fabs(x - 0.1 * vals[0]) < 2e-4, "v %g: box at %g", vals[0], x);
    du[j] = (2 * vals[0] - 0.2) / 0.2;
    df[j] = x - x0;
  }
  /* B's x entry (1 input here: finger only) against 0.01 m per unit u. */
  cr_assert_eq(cp_steer_fit(1, 1, 4, du, df, g, bfit), 0);
  *b_x = bfit[0];
  const cp_search_node *sn = cp_search_node_get(s, 6);
  *steered_action = sn->action;
  *dx_steered = cp_search_state(s, 6)[0];
  cp_search_destroy(s);
  cp_plan_world_destroy(pw);
}

Test(steer_local, push_model_matches_the_analytic_response) {
  cp_task t;
  double x, bx;
  long a;
  /* Within one action's reach: the steered input puts the box on the goal
   * (u = 0.3 -> v = 0.13 m/s -> 0.013 m). */
  one_iteration(0.013, &x, &bx, &a, &t);
  cr_assert(fabs(bx - 0.01) < 2e-4, "B %g, analytic 0.01", bx);
  cr_assert(cp_task_action_is_steered(&t, a));
  double v[2];
  cp_task_action_values(&t, a, v);
  cr_assert(fabs(v[0] - 0.13) < 2e-3, "steered velocity %g", v[0]);
  cr_assert(fabs(x - 0.013) < 2e-4, "steered box at %g, predicted 0.013", x);
  cp_task_free(&t);
  /* Beyond it: the input is clamped to the range's end (v = 0.2), and the
   * box moves the predicted 0.02 of the 0.05. */
  one_iteration(0.05, &x, &bx, &a, &t);
  cp_task_action_values(&t, a, v);
  cr_assert(fabs(v[0] - 0.2) < 1e-12, "clamped velocity %g", v[0]);
  cr_assert(fabs(x - 0.02) < 2e-4, "steered box at %g, predicted 0.02", x);
  cp_task_free(&t);
}

/* Grows the task's tree twice from its seed with local steering (method,
 * goal bias 0.5, 4 candidates, the task's probe and chart, 60 nodes): each
 * run's node count and the last node's first state entry. */
static void grow_twice(const cp_task *t, const char *method, long count[2],
                       double last[2]) {
  for (int run = 0; run < 2; ++run) {
    cp_error e;
    cp_plan_world *pw;
    cr_assert_eq(cp_plan_world_create(t, 1, &pw, &e), 0, "%s", e.msg);
    cp_search_options o = cp_search_defaults();
    o.method = method;
    o.goal_bias = 0.5;
    o.candidates = 4;
    o.steer_local = 1;
    o.steer_probe = t->steer_probe;
    o.steer_log = t->steer_log;
    o.max_nodes = 60;
    char msg[256];
    cp_search *s = cp_search_create(cp_plan_world_problem(pw), &o,
                                    cp_plan_world_start(pw), 0, msg, sizeof msg);
    cr_assert(s, "%s", msg);
    while (cp_search_iterate(s) == CP_SEARCH_RUNNING) {
    }
    count[run] = cp_search_node_count(s);
    last[run] = cp_search_state(s, count[run] - 1)[0];
    cp_search_destroy(s);
    cp_plan_world_destroy(pw);
  }
}

/* The same seed grows the same tree (no extra random numbers). */
Test(steer_local, reproducible_from_the_seed) {
  char *text = push_task(0.047, "local", "rrt");
  cp_task t;
  parse(text, &t);
  free(text);
  long count[2];
  double last[2];
  grow_twice(&t, "rrt", count, last);
  cr_assert_eq(count[0], count[1]);
  cr_assert_eq(last[0], last[1]);
  cp_task_free(&t);
}

static void refused(const char *text, const char *where, const char *what) {
  cp_task t;
  cp_error e;
  cr_assert_eq(cp_task_parse(text, strlen(text), NULL, &t, &e), -1);
  cr_assert_str_eq(e.where, where);
  cr_assert(strstr(e.msg, what), "%s", e.msg);
}

Test(steer_local, bad_keys_are_refused_with_their_path) {
  char *text = push_task(0.013, "bogus", "rrt");
  refused(text, "search.steer", "expected \"sample\" or \"local\"");
  free(text);
  const char *other = "\"range\": [-0.1, 0.1], \"samples\": 1";
  text = push_task_ext(0.013, "local", "rrt", other, ", \"steer_probe\": 0");
  refused(text, "search.steer_probe", "(0, 1]");
  free(text);
  text = push_task_ext(0.013, "local", "rrt", other, ", \"steer_probe\": \"x\"");
  refused(text, "search.steer_probe", "(0, 1]");
  free(text);
  text = push_task_ext(0.013, "local", "rrt", other,
                       ", \"steer_rotation\": \"euler\"");
  refused(text, "search.steer_rotation", "\"quaternion\" or \"log\"");
  free(text);
  text = push_task_ext(0.013, "sample", "rrt", other, ", \"steer_probe\": 0.5");
  refused(text, "search.steer_probe", "\"local\"");
  free(text);
  text = push_task_ext(0.013, "sample", "rrt", other,
                       ", \"steer_rotation\": \"log\"");
  refused(text, "search.steer_rotation", "\"local\"");
  free(text);
  text = push_task_ext(0.013, "local", "rrt", other, ", \"steer_bogus\": 1");
  refused(text, "search.steer_bogus", "");
  free(text);
  text = push_task_other(0.013, "local", "rrt", "\"values\": [-0.1, 0.1]");
  refused(text, "inputs.other/slide", "range");
  free(text);
  /* A single value is kept in every steered action. */
  text = push_task_other(0.013, "local", "rrt", "\"values\": [0.05]");
  cp_task t1;
  parse(text, &t1);
  free(text);
  cr_assert_eq(t1.n_steer, 1);
  double u1 = -1, v1[2];
  cp_task_action_values(&t1, cp_task_steer_action(&t1, &u1), v1);
  cr_assert(v1[0] == 0 && v1[1] == 0.05, "%g %g", v1[0], v1[1]);
  cp_task_free(&t1);
  /* sample: plain rrt (no steered ids). */
  text = push_task(0.013, "sample", "rrt");
  cp_task t;
  parse(text, &t);
  free(text);
  cr_assert_eq(t.steer_local, 0);
  cr_assert(!cp_task_action_is_steered(&t, CP_TASK_CONTINUOUS_ACTIONS));
  cp_task_free(&t);
}

/* Through the command: a plan of several steered pushes (the goal is 4.7 cm
 * away, an action moves the box at most 2 cm) replays bit for bit, its
 * actions steered ids (>= 2^52 in the CSV's action column); a bad key
 * exits 2 naming the file and the path. */
static void steered_plan_replays(char *text) {
  char *path = cpt_temp_file(text, ".json");
  char *db = cpt_temp_file("", ".sqlite"), *csv = cpt_temp_file("", ".csv");
  remove(db);
  const char *plan[] = {"complan", "plan", path, "--db", db, "--json", NULL};
  json_t *j = cpt_run_json(plan, 0);
  cr_assert_str_eq(json_string_value(json_object_get(j, "status")), "solved");
  json_decref(j);
  const char *rp[] = {"complan", "replay", "--db", db, "--verify", "--csv", csv,
                      NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(rp, &out, &err), 0, "%s", err);
  free(out);
  free(err);
  /* The action column: the last but two (two inputs follow it). */
  char *data = cpt_read_file(csv, NULL);
  int steered = 0, rows = 0;
  for (char *line = strchr(data, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
    char *end = strchr(line + 1, '\n'), *c = end ? end : line + strlen(line);
    int commas = 0;
    while (c > line && commas < 3) commas += *--c == ',';
    long a = strtol(c + 1, NULL, 10);
    rows++;
    steered += a >= CP_TASK_CONTINUOUS_ACTIONS;
  }
  cr_assert(rows > 0 && steered > 0, "%d of %d steps steered", steered, rows);
  free(data);
  remove(csv);
  remove(db);
  remove(path);
  free(path);
  free(text);
  free(csv);
  free(db);
}

Test(steer_local, a_steered_plan_replays_bitwise) {
  steered_plan_replays(push_task(0.047, "local", "rrt"));
  /* sst, with coordinate probes and the rotation chart (a goal within one
   * action: sst grows from the cheapest node near its sample, the start). */
  steered_plan_replays(push_task_ext(0.013, "local", "sst",
                                     "\"range\": [-0.1, 0.1], \"samples\": 1",
                                     ", \"steer_probe\": 0.5, "
                                     "\"steer_rotation\": \"log\""));
  char *out, *err;
  char *text = push_task(0.047, "bogus", "rrt");
  char *path = cpt_temp_file(text, ".json");
  const char *bad[] = {"complan", "plan", path, NULL};
  cr_assert_eq(cpt_run(bad, &out, &err), 2, "%s", err);
  cr_assert(strstr(err, "search.steer") && strstr(err, path), "%s", err);
  free(out);
  free(err);
  remove(path);
  free(path);
  free(text);
}

/* A run stopped by its node limit and resumed with a higher one grows the
 * uninterrupted run's tree: same nodes, LCP solves and best distance. */
/* part: the first session's node limit, one an iteration would pass. */
static void resumed_equals_uninterrupted(char *text, const char *part_limit) {
  char *path = cpt_temp_file(text, ".json");
  char *db1 = cpt_temp_file("", ".sqlite"), *db2 = cpt_temp_file("", ".sqlite");
  remove(db1);
  remove(db2);
  const char *whole[] = {"complan", "plan", path, "--db", db1, "--json",
                         "--max-nodes", "80", NULL};
  const char *part[] = {"complan", "plan", path, "--db", db2, "--json",
                        "--max-nodes", part_limit, NULL};
  const char *rest[] = {"complan", "plan", path, "--db", db2, "--json",
                        "--max-nodes", "80", "--resume", NULL};
  json_t *a = cpt_run_json(whole, 1), *p = cpt_run_json(part, 1),
         *b = cpt_run_json(rest, 1);
  cr_assert(json_integer_value(json_object_get(p, "nodes")) < atol(part_limit));
  cr_assert(json_is_true(json_object_get(b, "resumed")));
  const char *keys[] = {"nodes", "lcp_solves", "expansions"};
  for (int k = 0; k < 3; ++k)
    cr_assert_eq(json_integer_value(json_object_get(a, keys[k])),
                 json_integer_value(json_object_get(b, keys[k])), "%s", keys[k]);
  cr_assert_eq(json_real_value(json_object_get(a, "best_distance")),
               json_real_value(json_object_get(b, "best_distance")));
  json_decref(a);
  json_decref(p);
  json_decref(b);
  remove(db1);
  remove(db2);
  remove(path);
  free(db1);
  free(db2);
  free(path);
  free(text);
}

Test(steer_local, a_resumed_run_equals_the_uninterrupted_one) {
  resumed_equals_uninterrupted(push_task(0.3, "local", "rrt"), "33");
  /* sst: 8 nodes per iteration (zero, 2 probes, 4 candidates, model). */
  resumed_equals_uninterrupted(push_task_ext(
      0.3, "local", "sst", "\"range\": [-0.1, 0.1], \"samples\": 1",
      ", \"steer_probe\": 0.5, \"steer_rotation\": \"log\""), "36");
}

/* --- the rotation chart (steer_chart.c) --------------------------------- */

static void qmul(const double *a, const double *b, double *o) {
  o[0] = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  o[1] = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  o[2] = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  o[3] = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
}

/* Rotation matrix of the unit quaternion q. */
static void qmat(const double *q, double r[9]) {
  double w = q[0], x = q[1], y = q[2], z = q[3];
  double m[9] = {1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
                 2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
                 2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)};
  memcpy(r, m, sizeof m);
}

/* Rodrigues: the rotation matrix exp([v]x). */
static void rodrigues(const double *v, double r[9]) {
  double t = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
  double a[3] = {0, 0, 0};
  if (t > 0)
    for (int k = 0; k < 3; ++k) a[k] = v[k] / t;
  double c = cos(t), s = sin(t), K[9] = {0, -a[2], a[1], a[2], 0, -a[0], -a[1], a[0], 0};
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      double kk = 0;
      for (int l = 0; l < 3; ++l) kk += K[i * 3 + l] * K[l * 3 + j];
      r[i * 3 + j] = (i == j) + s * K[i * 3 + j] + (1 - c) * kk;
    }
}

/* v = log(R R0^T): the known axis and angle of a turn applied to any q0
 * (incl. within 1e-9 of half a turn), for quaternions of any scale and
 * sign; and against an independent check, Rodrigues' exp(v) R0 = R, for
 * random pairs. */
Test(steer_local, rotation_log_map_against_known_rotations) {
  const double q0[4] = {0.5, -0.5, 0.5, 0.5};
  const double axis[3] = {0.6, 0, 0.8};
  const double angles[] = {0, 1e-8, 0.3, 1.0, 2.5, M_PI - 1e-3, M_PI - 1e-9};
  for (size_t i = 0; i < sizeof angles / sizeof *angles; ++i) {
    double t = angles[i], turn[4] = {cos(t / 2), sin(t / 2) * axis[0],
                                     sin(t / 2) * axis[1], sin(t / 2) * axis[2]};
    double q[4], v[3];
    qmul(turn, q0, q);
    for (int sgn = -1; sgn <= 1; sgn += 2) {
      double qs[4], q0s[4];
      for (int k = 0; k < 4; ++k) {
        qs[k] = sgn * 3.0 * q[k];  /* scaled, either sign */
        q0s[k] = 0.25 * q0[k];
      }
      cp_steer_rotvec(qs, q0s, v);
      for (int k = 0; k < 3; ++k)
        cr_assert(fabs(v[k] - t * axis[k]) < 1e-12, "angle %g: v[%d] %.17g, "
                  "expected %.17g", t, k, v[k], t * axis[k]);
    }
  }
  /* Exactly half a turn: either direction, |v| = pi along the axis. */
  double half[4] = {0, axis[0], axis[1], axis[2]}, q[4], v[3];
  qmul(half, q0, q);
  cp_steer_rotvec(q, q0, v);
  double dot = v[0] * axis[0] + v[1] * axis[1] + v[2] * axis[2];
  cr_assert(fabs(fabs(dot) - M_PI) < 1e-12, "half turn: v.axis %g", dot);
  /* A zero quaternion: no turn. */
  const double zero[4] = {0, 0, 0, 0};
  cp_steer_rotvec(zero, q0, v);
  cr_assert(v[0] == 0 && v[1] == 0 && v[2] == 0);
  /* Random pairs: exp(v) R0 = R. */
  srand(7);
  for (int trial = 0; trial < 200; ++trial) {
    double a[4], b[4], na = 0, nb = 0;
    for (int k = 0; k < 4; ++k) {
      a[k] = rand() / (double)RAND_MAX - 0.5;
      b[k] = rand() / (double)RAND_MAX - 0.5;
      na += a[k] * a[k];
      nb += b[k] * b[k];
    }
    for (int k = 0; k < 4; ++k) {
      a[k] /= sqrt(na);
      b[k] /= sqrt(nb);
    }
    cp_steer_rotvec(a, b, v);
    cr_assert(sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) <= M_PI + 1e-12);
    double ra[9], rb[9], rv[9];
    qmat(a, ra);
    qmat(b, rb);
    rodrigues(v, rv);
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) {
        double x = 0;
        for (int l = 0; l < 3; ++l) x += rv[i * 3 + l] * rb[l * 3 + j];
        cr_assert(fabs(x - ra[i * 3 + j]) < 1e-9, "trial %d: (%d, %d) %g vs %g",
                  trial, i, j, x, ra[i * 3 + j]);
      }
  }
}

/* A pose difference: position rows as they are; the turn's rows have the
 * length s theta / 2 (s the weight, the norm of the quaternion rows), which
 * for a small turn equals the embedding's chord s |q - q0| to first order. */
Test(steer_local, pose_difference_weighs_a_small_turn_as_the_embedding) {
  const double s = 0.25, t = 1e-4;
  double e0[14] = {1, 2, 3, s, 0, 0, 0, 0, 0, 0, 0, 0, 0, s};
  double e[14] = {1.5, 2, 2, s * cos(t / 2), 0, s * sin(t / 2), 0,
                  0, 0, 0, -s * cos(1.0), 0, 0, s * sin(1.0)};
  double d[12];
  cp_steer_pose_diff(2, e0, e, d);
  cr_assert(d[0] == 0.5 && d[1] == 0 && d[2] == -1);
  cr_assert(fabs(d[4] - s * t / 2) < 1e-15 && d[3] == 0 && d[5] == 0);
  double chord = 0;
  for (int k = 3; k < 7; ++k) chord += (e[k] - e0[k]) * (e[k] - e0[k]);
  cr_assert(fabs(sqrt(chord) - d[4]) < 1e-3 * d[4], "chord %g, rows %g",
            sqrt(chord), d[4]);
  /* Body 2: zero position rows, and its turn's rows are rotvec's times
   * s / 2 (a turn of 2 (pi - 1) rad about z, the quaternion's sign
   * negative). */
  double v[3];
  cp_steer_rotvec(e + 10, e0 + 10, v);
  for (int k = 0; k < 3; ++k) cr_assert(fabs(d[9 + k] - s / 2 * v[k]) < 1e-15);
}

/* Coordinate probes recover the push's B exactly, both columns (the finger
 * moves the box 0.01 m per unit u; the far finger nothing), from one random
 * candidate only, and the steered input then puts the box on the goal. The
 * iteration is the zero input (node 1), the two probes (2, 3), the
 * candidate (4) and the model's input (5). With the rotation chart too:
 * the box does not turn, so it steers alike. */
Test(steer_local, coordinate_probes_recover_a_linear_model) {
  for (int chart = 0; chart <= 1; ++chart) {
    char *text = push_task(0.013, "local", "rrt");
    cp_task t;
    parse(text, &t);
    free(text);
    cp_error e;
    cp_plan_world *pw;
    cr_assert_eq(cp_plan_world_create(&t, 1, &pw, &e), 0, "%s", e.msg);
    cp_search_options o = cp_search_defaults();
    o.method = "rrt";
    o.goal_bias = 1;
    o.candidates = 1;
    o.steer_local = 1;
    o.steer_probe = 0.5;
    o.steer_log = chart;
    char msg[256];
    cp_search *s = cp_search_create(cp_plan_world_problem(pw), &o,
                                    cp_plan_world_start(pw), 0, msg, sizeof msg);
    cr_assert(s, "%s", msg);
    cp_search_status st = cp_search_iterate(s);
    cr_assert(st == CP_SEARCH_RUNNING || st == CP_SEARCH_SOLVED);
    cr_assert_eq(cp_search_node_count(s), 6);
    double x0 = cp_search_state(s, 1)[0], v[2];
    for (int i = 0; i < 2; ++i) {
      const cp_search_node *nd = cp_search_node_get(s, 2 + i);
      cp_task_action_values(&t, nd->action, v);
      double u = i == 0 ? (2 * v[0] - 0.2) / 0.2 : v[1] / 0.1;
      cr_assert(fabs(u - 0.5) < 1e-2, "probe %d at u %g", i, u);
      double b = (cp_search_state(s, 2 + i)[0] - x0) / u;
      cr_assert(fabs(b - (i == 0 ? 0.01 : 0)) < 2e-4, "B column %d: %g", i, b);
    }
    const cp_search_node *sn = cp_search_node_get(s, 5);
    cr_assert(cp_task_action_is_steered(&t, sn->action));
    cp_task_action_values(&t, sn->action, v);
    double x = cp_search_state(s, 5)[0];
    cr_assert(fabs(x - 0.013) < 2e-4, "chart %d: steered box at %g (v %g %g)",
              chart, x, v[0], v[1]);
    cr_assert(fabs(v[1]) < 2e-2, "chart %d: the idle input steered to %g", chart,
              v[1]);
    cp_search_destroy(s);
    /* Bad options are refused by the search. */
    o.steer_probe = 1.5;
    cr_assert_null(cp_search_create(cp_plan_world_problem(pw), &o,
                                    cp_plan_world_start(pw), 0, msg, sizeof msg));
    cr_assert(strstr(msg, "steer_probe"), "%s", msg);
    cp_plan_world_destroy(pw);
    cp_task_free(&t);
  }
}

/* sst with local steering: the same seed grows the same tree. */
Test(steer_local, sst_reproducible_from_the_seed) {
  char *text = push_task_ext(0.047, "local", "sst",
                             "\"range\": [-0.1, 0.1], \"samples\": 1",
                             ", \"steer_probe\": 0.5, \"steer_rotation\": \"log\"");
  cp_task t;
  parse(text, &t);
  free(text);
  long count[2];
  double last[2];
  grow_twice(&t, "sst", count, last);
  cr_assert(count[0] > 10);
  cr_assert_eq(count[0], count[1]);
  cr_assert_eq(last[0], last[1]);
  cp_task_free(&t);
}

/* A goal sample turns the body to the goal's orientation, taking of q and
 * -q the one nearer the node's sign-fixed quaternion (planner/plan/
 * problem.c). With a half-turn goal (yaw pi: w = 0) a box turned 2.84 rad
 * either way is 0.3 rad from the goal; its goal sample must lie that near
 * it in the embedding (chord 2 sin(0.075) of the unit quaternions), not
 * across it (2 cos(0.075)). A quarter-turn goal keeps its own sign. */
static void goal_sample_near(const char *goal_q, double yaw, double want_z,
                             double want_w) {
  char *buf = malloc(8192);
  snprintf(buf, 8192,
           "{\"scene\": %s, \"mode\": \"quasistatic\","
           " \"inputs\": {\"finger/slide\": {\"range\": [0, 0.2], \"samples\": 1}},"
           " \"action\": {\"duration\": 0.1, \"dt\": 0.01},"
           " \"goal\": {\"body\": \"box\", \"position\": [0, 0, 0.05],"
           "  \"tolerance\": 0.01, \"orientation\": %s,"
           "  \"angle_tolerance\": 0.1},"
           " \"search\": {\"method\": \"rrt\"},"
           " \"limits\": {\"nodes\": 100}}",
           PUSH_SCENE, goal_q);
  cp_task t;
  parse(buf, &t);
  free(buf);
  cp_error e;
  cp_plan_world *pw;
  cr_assert_eq(cp_plan_world_create(&t, 1, &pw, &e), 0, "%s", e.msg);
  const cp_search_problem *p = cp_plan_world_problem(pw);
  double *x = malloc((size_t)p->n * sizeof *x);
  double *g = malloc((size_t)p->m * sizeof *g);
  memcpy(x, cp_plan_world_start(pw), (size_t)p->n * sizeof *x);
  x[3] = cos(yaw / 2), x[4] = 0, x[5] = 0, x[6] = sin(yaw / 2);
  p->embed(p->ctx, x, g);
  double m1 = g[3] / fabs(x[3]); /* the orientation weight */
  p->goal_sample(p->ctx, g);
  cr_assert(fabs(g[3] - m1 * want_w) < 1e-15 && g[4] == 0 && g[5] == 0 &&
                fabs(g[6] - m1 * want_z) < 1e-15,
            "yaw %g: goal rows %g %g %g %g", yaw, g[3], g[4], g[5], g[6]);
  free(x);
  free(g);
  cp_plan_world_destroy(pw);
  cp_task_free(&t);
}

Test(steer_local, goal_sample_takes_the_nearer_sign_of_the_goal) {
  double a = M_PI - 0.3, h = sqrt(0.5);
  goal_sample_near("[0, 0, 0, 1]", a, 1, 0);
  goal_sample_near("[0, 0, 0, 1]", -a, -1, 0);
  goal_sample_near("[0, 0, 0, -1]", -a, -1, 0);
  goal_sample_near("[0, 0, 0, -1]", a, 1, 0);
  /* Quarter turn +z against a box at -0.4 rad: the dot is positive. */
  goal_sample_near("[0.7071067811865476, 0, 0, 0.7071067811865476]", -0.4,
                   h, h);
  /* Nearer a quarter turn the other way than this one: still w >= 0. At
   * yaw -2.5 the node's quaternion (0.32, 0, 0, -0.95) has a negative dot
   * with (0.71, 0, 0, 0.71), so the goal's rows are -q's. */
  goal_sample_near("[0.7071067811865476, 0, 0, 0.7071067811865476]", -2.5,
                   -h, -h);
}
