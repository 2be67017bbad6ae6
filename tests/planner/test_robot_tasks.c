/* The robot benchmark tasks (planner/tasks/bench/, issue 23) played by
 * hand. panda-pick-place: a fixed sequence of the task's own actions
 * (grasp, lift, turn, carry, lower, open; written out as input values)
 * takes the Panda through every phase in order, the cube follows each 2 cm
 * step of the hand to within a millimetre, and the goal is met after the
 * last action and not before. The same sequence played twice
 * gives the same states bit for bit. What this proves: the action set can
 * do the task (Cartesian steps of the hand resolved by damped least
 * squares, the finger's target), independently of any search.
 * pang-allegro-ball: the ball laid in the cupped hand comes to rest there. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/plan/plan.h"
#include "planner/search/search.h"
#include "planner/search/task.h"
#include "planner/sim/statelayout.h"

static void task_path(char *out, size_t size, const char *name) {
  const char *root = getenv("CP_SOURCE_ROOT");
  cr_assert(root, "CP_SOURCE_ROOT is not set");
  snprintf(out, size, "%s/planner/tasks/bench/%s", root, name);
}

/* The grid action whose values are v (n_inputs of them). */
static long action_of(const cp_task *t, const double *v) {
  double *w = malloc((size_t)t->n_inputs * sizeof *w);
  cr_assert(w);
  for (long a = 0; a < t->n_actions; ++a) {
    cp_task_action_values(t, a, w);
    int same = 1;
    for (int i = 0; i < t->n_inputs; ++i) same &= fabs(w[i] - v[i]) < 1e-12;
    if (same) {
      free(w);
      return a;
    }
  }
  free(w);
  cr_assert_fail("no action has these values");
  return -1;
}

/* Panda: hand x (m), hand z (m), hand yaw (rad), finger target (m), per
 * action (the input order of the task file): close the hand on the cube,
 * lift 2 x 2 cm, turn 4 x 0.4 rad, carry 10 x 2 cm in +x, lower 2 cm,
 * open. */
static const double PANDA_PLAN[][4] = {
    {0, 0, 0, 0},       {0, 0.02, 0, 0},    {0, 0.02, 0, 0},    {0, 0, 0.4, 0},
    {0, 0, 0.4, 0},     {0, 0, 0.4, 0},     {0, 0, 0.4, 0},     {0.02, 0, 0, 0},
    {0.02, 0, 0, 0},    {0.02, 0, 0, 0},    {0.02, 0, 0, 0},    {0.02, 0, 0, 0},
    {0.02, 0, 0, 0},    {0.02, 0, 0, 0},    {0.02, 0, 0, 0},    {0.02, 0, 0, 0},
    {0.02, 0, 0, 0},    {0, -0.02, 0, 0},   {0, 0, 0, 0.03}};
#define PANDA_STEPS ((int)(sizeof PANDA_PLAN / sizeof PANDA_PLAN[0]))

/* Plays the plan from the start; phase[k] is the phase reached after k
 * actions, goal[k] whether the goal is met, and the final state goes to
 * last (p->n values). */
static void play_panda(const cp_task *t, int *phase, int *goal, double *cube_x,
                       double *last) {
  cp_plan_world *pw;
  cp_error e;
  cr_assert_eq(cp_plan_world_create(t, 1, &pw, &e), 0, "%s", e.msg);
  const cp_search_problem *p = cp_plan_world_problem(pw);
  cp_state_layout l;
  cr_assert_eq(cp_state_layout_init(&l, &t->scene), 0);
  cr_assert_eq(p->n, l.n + 1 + 2, "phase and two contact flags expected");
  double *x = malloc((size_t)p->n * sizeof *x), *y = malloc((size_t)p->n * sizeof *y);
  cr_assert(x && y);
  memcpy(x, cp_plan_world_start(pw), (size_t)p->n * sizeof *x);
  int cube = cp_state_body_at(&l, 1); /* the table is fixed: body 1 */
  phase[0] = (int)x[l.n];
  goal[0] = p->in_goal(p->ctx, x);
  cube_x[0] = x[cube];
  for (int k = 0; k < PANDA_STEPS; ++k) {
    cp_expansion info;
    memset(&info, 0, sizeof info);
    cr_assert_eq(p->expand(p->ctx, x, k * p->duration, NULL, 0,
                           action_of(t, PANDA_PLAN[k]), y, &info), 0);
    cr_assert_eq(info.outcome, CP_EXPAND_OK, "action %d: %s", k + 1, info.message);
    memcpy(x, y, (size_t)p->n * sizeof *x);
    phase[k + 1] = (int)x[l.n];
    goal[k + 1] = p->in_goal(p->ctx, x);
    cube_x[k + 1] = x[cube];
  }
  memcpy(last, x, (size_t)p->n * sizeof *x);
  free(x);
  free(y);
  cp_state_layout_free(&l);
  cp_plan_world_destroy(pw);
}

Test(robot_tasks, panda_pick_place_by_hand_passes_every_phase) {
  char path[4096];
  task_path(path, sizeof path, "panda-pick-place.json");
  cp_task t;
  cp_error e;
  cr_assert_eq(cp_task_load(path, &t, &e), 0, "%s: %s", e.where, e.msg);
  cr_assert_eq(t.n_inputs, 4);
  cr_assert_eq(t.n_phases, 3);
  int phase[PANDA_STEPS + 1], goal[PANDA_STEPS + 1];
  int phase2[PANDA_STEPS + 1], goal2[PANDA_STEPS + 1];
  double cx[PANDA_STEPS + 1], cx2[PANDA_STEPS + 1];
  cp_plan_world *pw;
  cr_assert_eq(cp_plan_world_create(&t, 1, &pw, &e), 0, "%s", e.msg);
  int n = cp_plan_world_problem(pw)->n;
  cp_plan_world_destroy(pw);
  double *a = malloc((size_t)n * sizeof *a), *b = malloc((size_t)n * sizeof *b);
  cr_assert(a && b);
  play_panda(&t, phase, goal, cx, a);
  /* Phase 0 (both fingers on the cube) is passed by the first action, which
   * closes the hand; phase 1 (the cube 3 cm up) by the second lift (the
   * first gives 2 cm); the goal (placed, turned, at rest, hand open) holds
   * after the last action only. */
  cr_assert_eq(phase[0], 0);
  cr_assert_eq(phase[1], 1, "fingers not both on the cube after closing");
  cr_assert_eq(phase[2], 1, "the cube 3 cm up after one 2 cm lift");
  for (int k = 3; k <= PANDA_STEPS; ++k)
    cr_assert_eq(phase[k], 2, "phase %d after action %d", phase[k], k);
  /* The carried cube follows the hand's 2 cm steps (first carry steps, away
   * from the arm's reach limit). */
  for (int k = 8; k <= 13; ++k)
    cr_assert(fabs(cx[k] - cx[k - 1] - 0.02) < 1e-3, "step %d moved %g m", k,
              cx[k] - cx[k - 1]);
  for (int k = 0; k < PANDA_STEPS; ++k)
    cr_assert_eq(goal[k], 0, "goal met early, after action %d", k);
  cr_assert_eq(goal[PANDA_STEPS], 1, "goal not met after the last action");
  /* Reproducible: the same actions, the same states, bit for bit. */
  play_panda(&t, phase2, goal2, cx2, b);
  cr_assert_eq(memcmp(a, b, (size_t)n * sizeof *a), 0);
  free(a);
  free(b);
  cp_task_free(&t);
}

/* Allegro: the scene of pang-allegro-ball cups the ball. With every joint
 * holding its position (relative targets 0 at the task's Kp 100, implicit
 * PD) for 1 s, the ball laid on the fingers settles within 2 cm of where it
 * was placed and comes to rest there, above the fingers. (With the ball on
 * the back of the hand, as the scene had it before, it rolled 7.5 cm
 * towards the fingertips in that second and kept going.) */
Test(robot_tasks, allegro_ball_settles_in_the_cupped_hand) {
  const char *root = getenv("CP_SOURCE_ROOT");
  cr_assert(root, "CP_SOURCE_ROOT is not set");
  char inputs[4096] = "";
  size_t len = 0;
  for (int j = 0; j < 16; ++j)
    len += (size_t)snprintf(inputs + len, sizeof inputs - len,
                            "%s\"hand/joint_%d.0\": {\"kind\": \"target\", "
                            "\"relative\": true, \"values\": [0], "
                            "\"stiffness\": 100}",
                            j ? ", " : "", j);
  char text[8192];
  snprintf(text, sizeof text,
           "{\"name\": \"settle\", \"scene\": "
           "\"%s/planner/tasks/bench/scenes/pang-allegro-ball.json\", "
           "\"mode\": \"dynamic\", \"inputs\": {%s}, \"action\": {\"duration\": "
           "0.1, \"dt\": 0.002, \"pd\": \"implicit\"}, \"goal\": {\"body\": "
           "\"ball\", \"position\": [-0.05, 0.001, 0.2708], \"tolerance\": "
           "0.03}, \"limits\": {\"nodes\": 10}}",
           root, inputs);
  cp_task t;
  cp_error e;
  cr_assert_eq(cp_task_parse(text, strlen(text), NULL, &t, &e), 0, "%s: %s",
               e.where, e.msg);
  cr_assert_eq(t.n_actions, 1);
  cp_plan_world *pw;
  cr_assert_eq(cp_plan_world_create(&t, 1, &pw, &e), 0, "%s", e.msg);
  const cp_search_problem *p = cp_plan_world_problem(pw);
  cp_state_layout l;
  cr_assert_eq(cp_state_layout_init(&l, &t.scene), 0);
  int o = cp_state_body_at(&l, 0);
  double *x = malloc((size_t)p->n * sizeof *x), *y = malloc((size_t)p->n * sizeof *y);
  cr_assert(x && y);
  memcpy(x, cp_plan_world_start(pw), (size_t)p->n * sizeof *x);
  double x0[3] = {x[o], x[o + 1], x[o + 2]};
  for (int k = 0; k < 10; ++k) {
    cp_expansion info;
    memset(&info, 0, sizeof info);
    cr_assert_eq(p->expand(p->ctx, x, k * p->duration, NULL, 0, 0, y, &info), 0);
    cr_assert_eq(info.outcome, CP_EXPAND_OK, "action %d: %s", k + 1, info.message);
    memcpy(x, y, (size_t)p->n * sizeof *x);
  }
  double d = sqrt((x[o] - x0[0]) * (x[o] - x0[0]) + (x[o + 1] - x0[1]) * (x[o + 1] - x0[1]) +
                  (x[o + 2] - x0[2]) * (x[o + 2] - x0[2]));
  double v = sqrt(x[o + 7] * x[o + 7] + x[o + 8] * x[o + 8] + x[o + 9] * x[o + 9]);
  cr_assert(d < 0.02, "the ball moved %g m", d);
  cr_assert(v < 0.02, "the ball still moves at %g m/s", v);
  cr_assert(x[o + 2] > 0.25, "the ball fell to z = %g", x[o + 2]);
  free(x);
  free(y);
  cp_state_layout_free(&l);
  cp_plan_world_destroy(pw);
  cp_task_free(&t);
}
