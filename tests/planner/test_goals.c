/* Goals (planner/search/goal.h) and phases (planner/plan/problem.c): the
 * distance against hand-computed values, half-spaces, joint and contact
 * terms, phases on a small grasp task, and bad goal files with their JSON
 * paths. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "planner/plan/plan.h"
#include "planner/replay/replay.h"
#include "planner/search/goal.h"
#include "planner/search/search.h"
#include "planner/search/task.h"
#include "planner/sim/statelayout.h"
#include "synth.h"
#include "tests/support.h"

#define PI 3.14159265358979323846

#include "tests/planner/finger_scene.h"

static char *task_text(const char *goal) {
  static char buf[8192];
  snprintf(buf, sizeof buf,
           "{\"scene\": " SCENE ", \"inputs\": {\"finger/j1\": {\"values\":"
           " [-1, 1]}}, \"action\": {\"duration\": 0.1, \"dt\": 0.01},"
           " %s, \"limits\": {\"nodes\": 100}}",
           goal);
  return buf;
}

static void parse_ok(const char *goal, cp_task *t) {
  cp_error e;
  const char *s = task_text(goal);
  cr_assert_eq(cp_task_parse(s, strlen(s), NULL, t, &e), 0, "%s: %s", e.where,
               e.msg);
}

static void parse_bad(const char *goal, const char *where, const char *msg) {
  cp_task t;
  cp_error e;
  const char *s = task_text(goal);
  cr_assert_eq(cp_task_parse(s, strlen(s), NULL, &t, &e), -1, "%s parsed",
               goal);
  cr_assert_str_eq(e.where, where, "%s: where %s (%s)", goal, e.where, e.msg);
  if (msg) cr_assert(strstr(e.msg, msg), "%s: message \"%s\"", goal, e.msg);
}

/* The state of the test scene: box at p with rotation angle `turn` about z,
 * joint positions q1, q2. */
static void state(const cp_state_layout *l, const double *p, double turn,
                  double q1, double q2, double *x) {
  memset(x, 0, (size_t)l->n * sizeof *x);
  double *b = x + cp_state_body_at(l, 1);
  memcpy(b, p, 3 * sizeof *p);
  b[3] = cos(turn / 2);
  b[6] = sin(turn / 2);
  x[CP_STATE_BODY_SIZE * l->n_free] = q1;
  x[CP_STATE_BODY_SIZE * l->n_free + CP_STATE_JOINT_SIZE] = q2;
}

Test(goals, se3_distance_against_hand_computed_values) {
  cp_task t;
  parse_ok("\"goal\": {\"body\": \"box\", \"position\": [0.4, 0, 0.05],"
           " \"tolerance\": 0.02, \"orientation\": [1, 0, 0, 0],"
           " \"angle_tolerance\": 0.2}, \"search\": {\"metric\": {\"angle\":"
           " 0.1}}",
           &t);
  cr_assert_eq(t.n_phases, 1);
  cp_state_layout l;
  cr_assert_eq(cp_state_layout_init(&l, &t.scene), 0);
  cp_goal_view v = {&l, t.angle_scale, 0.01};
  double x[64];
  /* 5 cm from the centre (3-4-5), turned 0.5 rad: position excess 3 cm,
   * angle excess 0.3 rad = 3 cm at 0.1 m/rad. */
  state(&l, (double[]){0.43, 0.04, 0.05}, 0.5, 0, 0, x);
  double want = sqrt(0.03 * 0.03 + 0.03 * 0.03);
  cr_assert_float_eq(cp_goal_distance(&t.phases[0], &v, x, NULL), want, 1e-12);
  cr_assert(!cp_goal_met(&t.phases[0], &v, x, NULL));
  cr_assert_float_eq(cp_goal_angle(x + cp_state_body_at(&l, 1) + 3,
                                   t.phases[0].bodies[0].orientation),
                     0.5, 1e-12);
  /* Inside the ball, turned 0.1 rad (< 0.2): met, distance 0. */
  state(&l, (double[]){0.41, 0.01, 0.05}, 0.1, 0, 0, x);
  cr_assert_eq(cp_goal_distance(&t.phases[0], &v, x, NULL), 0);
  cr_assert(cp_goal_met(&t.phases[0], &v, x, NULL));
  /* Inside the ball, turned by pi about z: the angle is pi (q and -q are
   * one rotation, so 2 pi - 0.1 is 0.1). */
  state(&l, (double[]){0.4, 0, 0.05}, 2 * PI - 0.1, 0, 0, x);
  cr_assert(cp_goal_met(&t.phases[0], &v, x, NULL));
  state(&l, (double[]){0.4, 0, 0.05}, PI, 0, 0, x);
  cr_assert_float_eq(cp_goal_distance(&t.phases[0], &v, x, NULL),
                     0.1 * (PI - 0.2), 1e-9);
  /* The summary keeps the one-body form's fields. */
  cr_assert_eq(t.goal.body_index, 1);
  cr_assert_float_eq(t.goal.tolerance, 0.02, 0);
  cp_state_layout_free(&l);
  cp_task_free(&t);
}

Test(goals, half_spaces_boxes_and_joint_terms) {
  cp_task t;
  parse_ok("\"goal\": {\"bodies\": [{\"body\": \"box\", \"min\": [null, null,"
           " 0.05]}, {\"body\": \"box\", \"min\": [0.1, -0.05, null], \"max\":"
           " [0.2, 0.05, null]}], \"joints\": [{\"joint\": \"finger/j1\","
           " \"position\": 0.1, \"tolerance\": 0.01}, {\"joint\":"
           " \"finger/j2\", \"position\": 1.0, \"tolerance\": 0.1}]}",
           &t);
  cp_state_layout l;
  cr_assert_eq(cp_state_layout_init(&l, &t.scene), 0);
  cp_goal_view v = {&l, 0.1, 0.01};
  const cp_goal *g = &t.phases[0];
  cr_assert_eq(g->n_bodies, 2);
  cr_assert_eq(g->n_joints, 2);
  double x[64];
  /* z 3 cm: 2 cm under the half-space; x 0.05: 5 cm short of the box; j1
   * 0.13: 2 cm beyond its tolerance; j2 1.3 rad: 0.2 rad beyond, 2 cm at
   * 0.1 m/rad. */
  state(&l, (double[]){0.05, 0, 0.03}, 0, 0.13, 1.3, x);
  double want = sqrt(0.02 * 0.02 + 0.05 * 0.05 + 0.02 * 0.02 + 0.02 * 0.02);
  cr_assert_float_eq(cp_goal_distance(g, &v, x, NULL), want, 1e-12);
  cr_assert(!cp_goal_met(g, &v, x, NULL));
  /* High enough, in the box, joints in tolerance: met whatever else. */
  state(&l, (double[]){0.15, 0.04, 0.5}, 1.0, 0.095, 0.91, x);
  cr_assert_eq(cp_goal_distance(g, &v, x, NULL), 0);
  cr_assert(cp_goal_met(g, &v, x, NULL));
  /* One term missing is enough to fail: j2 just outside. */
  state(&l, (double[]){0.15, 0.04, 0.5}, 1.0, 0.095, 1.11, x);
  cr_assert(!cp_goal_met(g, &v, x, NULL));
  cr_assert_float_eq(cp_goal_distance(g, &v, x, NULL), 0.1 * 0.01, 1e-12);
  cp_state_layout_free(&l);
  cp_task_free(&t);
}

/* A goal "the box above the table" with the rest keys `rest` parsed into *t,
 * its state layout *l, and the state x: the box at rest 5 cm up, joint j1
 * moving fast. */
static void rest_goal(const char *rest, cp_task *t, cp_state_layout *l,
                      double *x) {
  char goal[256];
  snprintf(goal, sizeof goal,
           "\"goal\": {\"body\": \"box\", \"min\": [null, null, 0], %s}",
           rest);
  parse_ok(goal, t);
  cr_assert_eq(cp_state_layout_init(l, &t->scene), 0);
  state(l, (double[]){0, 0, 0.05}, 0, 0, 0, x);
  x[CP_STATE_BODY_SIZE * l->n_free + 1] = 3.0; /* j1 moving fast */
}

Test(goals, at_rest_for_chosen_bodies_leaves_joints_free) {
  cp_task t;
  cp_state_layout l;
  double x[64];
  rest_goal("\"at_rest\": [\"box\"]", &t, &l, x);
  cp_goal_view v = {&l, 0.1, 0.01};
  cr_assert(cp_goal_met(&t.phases[0], &v, x, NULL));
  x[cp_state_body_at(&l, 1) + 7] = 0.02; /* the box at 2 cm/s > 1 cm/s */
  cr_assert(!cp_goal_met(&t.phases[0], &v, x, NULL));
  cp_task_free(&t);
  cp_state_layout_free(&l);
  /* at_rest: true keeps its old meaning: every body and every joint. */
  rest_goal("\"at_rest\": true", &t, &l, x);
  cr_assert(!cp_goal_met(&t.phases[0], &v, x, NULL));
  cp_state_layout_free(&l);
  cp_task_free(&t);
}

/* rest_scale T puts the rest bodies' speed excess into the distance: at the
 * goal's position a box at |v| = 0.31 m/s and |w| = 2.1 rad/s with rest_speed
 * 0.01 and T = 0.5 s is sqrt((0.5 * 0.30)^2 + (0.5 * (0.21 - 0.01))^2) =
 * sqrt(0.0225 + 0.01) m from it; without rest_scale (the default) it is at 0,
 * and at rest it is at 0 either way. */
Test(goals, rest_scale_puts_the_speed_excess_into_the_distance) {
  cp_task t;
  cp_state_layout l;
  double x[64];
  rest_goal("\"at_rest\": [\"box\"], \"rest_scale\": 0.5", &t, &l, x);
  cp_goal_view v = {&l, 0.1, 0.01};
  /* at rest (joints are free): 0 */
  cr_assert_float_eq(cp_goal_distance(&t.phases[0], &v, x, NULL), 0, 1e-15);
  double *b = x + cp_state_body_at(&l, 1);
  b[7] = 0.31 * 0.6, b[8] = 0.31 * 0.8; /* |v| = 0.31 m/s */
  b[12] = 2.1;                           /* |w| = 2.1 rad/s */
  double d = cp_goal_distance(&t.phases[0], &v, x, NULL);
  cr_assert_float_eq(d, sqrt(0.0225 + 0.01), 1e-12, "d %.17g", d);
  cr_assert(!cp_goal_met(&t.phases[0], &v, x, NULL));
  cp_task_free(&t);
  cp_state_layout_free(&l);
  double moving[64];
  rest_goal("\"at_rest\": [\"box\"]", &t, &l, moving);
  memcpy(moving, x, sizeof moving);
  cr_assert_float_eq(cp_goal_distance(&t.phases[0], &v, moving, NULL), 0,
                     1e-15);
  cr_assert(!cp_goal_met(&t.phases[0], &v, moving, NULL));
  cp_state_layout_free(&l);
  cp_task_free(&t);
}

Test(goals, bad_goals_name_their_json_path) {
  parse_bad("\"phases\": []", "phases", "non-empty");
  parse_bad("\"phases\": {}", "phases", "non-empty");
  parse_bad("\"phases\": [{\"body\": \"box\", \"min\": [null, null, 0]},"
            " {\"body\": \"box\", \"bogus\": 1}]",
            "phases[1].bogus", NULL);
  parse_bad("\"phases\": [{\"body\": \"box\", \"min\": \"up\"}]",
            "phases[0].min", "null");
  parse_bad("\"phases\": [{\"body\": \"box\", \"min\": [0, 0, \"z\"]}]",
            "phases[0].min[2]", NULL);
  parse_bad("\"goal\": {\"body\": \"box\", \"min\": [0, 0, 1], \"max\": [1,"
            " 1, 0]}",
            "goal.min", "min <= max");
  parse_bad("\"goal\": {\"body\": \"box\"}", "goal.body", "needs");
  parse_bad("\"goal\": {\"body\": \"box\", \"tolerance\": 0.1}",
            "goal.tolerance", "position");
  parse_bad("\"goal\": {\"bodies\": [{\"body\": \"table\", \"min\": [0, 0,"
            " 0]}]}",
            "goal.bodies[0].body", "no free body");
  parse_bad("\"goal\": {\"joints\": [{\"joint\": \"finger/j9\", \"position\":"
            " 0, \"tolerance\": 0.1}]}",
            "goal.joints[0].joint", "no joint");
  parse_bad("\"goal\": {\"joints\": [{\"joint\": \"finger/j1\", \"position\":"
            " 0}]}",
            "goal.joints[0].tolerance", "required");
  parse_bad("\"goal\": {\"contacts\": [[\"box\", \"finger/zz\"]]}",
            "goal.contacts[0][1]", "no body or link");
  parse_bad("\"goal\": {\"contacts\": [[\"box\"]]}", "goal.contacts[0]",
            "two");
  parse_bad("\"goal\": {\"contacts\": [[\"box\", \"box\"]]}",
            "goal.contacts[0]", "itself");
  parse_bad("\"goal\": {\"at_rest\": [\"table\"]}", "goal.at_rest[0]",
            "no free body");
  parse_bad("\"goal\": {\"rest_joints\": true}", "goal.rest_joints",
            "at_rest");
  parse_bad("\"goal\": {\"body\": \"box\", \"min\": [null, null, 0],"
            " \"rest_scale\": 1}",
            "goal.rest_scale", "at_rest");
  parse_bad("\"goal\": {\"body\": \"box\", \"min\": [null, null, 0],"
            " \"at_rest\": true, \"rest_scale\": 0}",
            "goal.rest_scale", "> 0");
  parse_bad("\"goal\": {}", "goal", "at least one term");
  parse_bad("\"goal\": {\"position\": [0, 0, 0], \"tolerance\": 1}",
            "goal.position", "body");
  parse_bad("\"goal\": {\"body\": \"box\", \"min\": [0, 0, 0]}, \"phases\":"
            " [{\"body\": \"box\", \"min\": [0, 0, 0]}]",
            "phases", "not both");
}

/* --- phases and contacts planned on the grasp scene ----------------------- */

static char *grasp_task(const char *goal) {
  static char buf[8192];
  snprintf(buf, sizeof buf,
           "{\"scene\": \"%s/models/scenes/plan_grasp.json\","
           " \"inputs\": {\"hand/lift\": {\"values\": [0, 1.4715, 4.0]},"
           "  \"hand/gap\": {\"values\": [0, -3]}},"
           " \"action\": {\"duration\": 0.1, \"dt\": 0.005}, %s,"
           " \"bounds\": {\"min\": [-0.3, -0.3, 0], \"max\": [0.3, 0.3, 0.4]},"
           " \"search\": {\"weight\": 2.0, \"resolution\": {\"position\":"
           " 0.005}}, \"limits\": {\"nodes\": 3000, \"seconds\": 3600}}",
           getenv("CP_SOURCE_ROOT"), goal);
  return buf;
}

typedef struct planned {
  cp_task task;
  cp_plan_world *pw;
  cp_search *s;
  cp_search_status status;
  long path[256];
  long len;
  int nw; /* world state size */
} planned;

static void plan(const char *goal, planned *r) {
  cp_error e;
  const char *text = grasp_task(goal);
  cr_assert_eq(cp_task_parse(text, strlen(text), NULL, &r->task, &e), 0,
               "%s: %s", e.where, e.msg);
  cr_assert_eq(cp_plan_world_create(&r->task, 1, &r->pw, &e), 0, "%s", e.msg);
  const cp_search_problem *p = cp_plan_world_problem(r->pw);
  cp_search_options o = cp_search_defaults();
  o.weight = r->task.weight;
  o.max_nodes = r->task.max_nodes;
  char msg[256];
  r->s = cp_search_create(p, &o, cp_plan_world_start(r->pw), 0, msg,
                          sizeof msg);
  cr_assert(r->s, "%s", msg);
  do r->status = cp_search_iterate(r->s);
  while (r->status == CP_SEARCH_RUNNING);
  cr_assert_eq(r->status, CP_SEARCH_SOLVED, "status %d after %ld nodes",
               r->status, cp_search_node_count(r->s));
  r->len = cp_search_path(r->s, cp_search_best(r->s), r->path, 256);
  cr_assert(r->len <= 256);
  cp_state_layout l;
  cr_assert_eq(cp_state_layout_init(&l, &r->task.scene), 0);
  r->nw = l.n;
  cp_state_layout_free(&l);
}

static void planned_free(planned *r) {
  cp_search_destroy(r->s);
  cp_plan_world_destroy(r->pw);
  cp_task_free(&r->task);
}

static double box_z(const planned *r, long k) {
  return cp_search_state(r->s, r->path[k])[2]; /* the box is free body 0 */
}

Test(goals, contact_goal_needs_both_fingers_on_the_box) {
  planned r;
  plan("\"goal\": {\"contacts\": [[\"box\", \"hand/lfinger\"], [\"box\","
       " \"hand/rfinger\"]]}",
       &r);
  /* Goal entries: the phase, then one flag per pair. */
  cr_assert_eq(cp_search_state_size(r.s), r.nw + 3);
  cr_assert_eq(r.task.pairs.n, 2);
  const double *x = cp_search_state(r.s, r.path[r.len - 1]);
  cr_assert(x[r.nw + 1] == 1 && x[r.nw + 2] == 1);
  /* The start touches neither (the fingers start 1 cm away), so the plan
   * has at least one action, and the last one squeezes (gap -3 N). */
  const double *x0 = cp_search_state(r.s, 0);
  cr_assert(x0[r.nw + 1] == 0 && x0[r.nw + 2] == 0);
  cr_assert(r.len >= 2);
  double u[2];
  cp_task_action_values(&r.task, cp_search_node_get(r.s, r.path[r.len - 1])->action,
                        u);
  cr_assert_eq(u[1], -3.0);
  planned_free(&r);
}

Test(goals, phases_lift_then_set_down_in_order) {
  /* The last phase alone (the box low) holds at the start; with the lift
   * first, a plan must raise the box 2 cm and bring it back down. */
  planned r;
  plan("\"phases\": [{\"body\": \"box\", \"min\": [null, null, 0.05]},"
       " {\"body\": \"box\", \"max\": [null, null, 0.0305]}]",
       &r);
  cr_assert_eq(cp_search_state_size(r.s), r.nw + 1);
  cr_assert_eq(cp_search_state(r.s, 0)[r.nw], 0); /* start: phase 0 */
  double top = 0;
  long reached = -1;
  for (long k = 0; k < r.len; ++k) {
    double ph = cp_search_state(r.s, r.path[k])[r.nw];
    if (ph == 1 && reached < 0) reached = k;
    if (box_z(&r, k) > top) top = box_z(&r, k);
    if (k > 0) /* the phase never goes back */
      cr_assert(ph >= cp_search_state(r.s, r.path[k - 1])[r.nw]);
  }
  cr_assert(reached > 0, "phase 1 never reached");
  /* Phase 0 was met inside an action at the latest: the box rose past
   * 5 cm at some step (the node ending that action may be lower again). */
  cr_assert(top > 0.04, "top %g", top);
  cr_assert_leq(box_z(&r, r.len - 1), 0.0305);
  cr_assert_eq(cp_search_state(r.s, r.path[r.len - 1])[r.nw], 1);
  planned_free(&r);
}

Test(goals, path_length_cost_is_the_chosen_bodys_chord_per_action) {
  planned r;
  plan("\"goal\": {\"body\": \"box\", \"min\": [null, null, 0.04]},"
       " \"cost\": {\"time\": 1.0, \"path\": 10.0, \"path_bodies\": [\"box\"]}",
       &r);
  cr_assert(r.len >= 2);
  double total = 0;
  for (long k = 1; k < r.len; ++k) {
    const double *a = cp_search_state(r.s, r.path[k - 1]);
    const double *b = cp_search_state(r.s, r.path[k]);
    /* The box is free body 0: its centre is entries 0..2. */
    double moved = sqrt((b[0] - a[0]) * (b[0] - a[0]) +
                        (b[1] - a[1]) * (b[1] - a[1]) +
                        (b[2] - a[2]) * (b[2] - a[2]));
    double step = cp_search_node_get(r.s, r.path[k])->cost -
                  cp_search_node_get(r.s, r.path[k - 1])->cost;
    cr_assert_float_eq(step, 1.0 * 0.1 + 10.0 * moved, 1e-12);
    total += moved;
  }
  cr_assert_gt(total, 0.01, "the box rose 1 cm at least");
  planned_free(&r);
}

Test(goals, bad_costs_name_their_json_path) {
  parse_bad("\"goal\": {\"body\": \"box\", \"min\": [0, 0, 0]}, \"cost\":"
            " {\"path\": 1, \"path_bodies\": [\"table\"]}",
            "cost.path_bodies[0]", "no free body");
  parse_bad("\"goal\": {\"body\": \"box\", \"min\": [0, 0, 0]}, \"cost\":"
            " {\"path\": -1}",
            "cost.path", NULL);
  parse_bad("\"goal\": {\"body\": \"box\", \"min\": [0, 0, 0]}, \"cost\":"
            " {\"path_bodies\": []}",
            "cost.path_bodies", "non-empty");
}

/* The command: a bad phase list exits 2 naming the file and the JSON path,
 * and writes no database. */
static void cli_bad(const char *goal, const char *where) {
  char *task = cpt_temp_file(grasp_task(goal), ".json");
  char *db = synth_temp_db();
  const char *argv[] = {"complan", "plan", task, "--db", db, NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(argv, &out, &err), 2, "stderr: %s", err);
  cr_assert_str_eq(out, "");
  cr_assert(strstr(err, task), "no file name in: %s", err);
  cr_assert(strstr(err, where), "'%s' not in: %s", where, err);
  cr_assert_neq(access(db, F_OK), 0, "a database was written");
  free(out);
  free(err);
  unlink(task);
  free(task);
  synth_remove_db(db);
}

Test(goals, cli_bad_phases_exit_2_with_the_json_path) {
  cli_bad("\"phases\": []", "phases");
  cli_bad("\"phases\": [{\"body\": \"box\", \"min\": [0, 0, 0]},"
          " {\"body\": \"box\", \"bogus\": 1}]",
          "phases[1].bogus");
  cli_bad("\"phases\": [{\"contacts\": [[\"box\", 7]]}]",
          "phases[0].contacts[0][1]");
}

Test(goals, cli_bad_rest_scale_exits_2_with_the_json_path) {
  cli_bad("\"goal\": {\"body\": \"box\", \"min\": [null, null, 0.05],"
          " \"rest_scale\": 0.1}",
          "goal.rest_scale");
  cli_bad("\"goal\": {\"body\": \"box\", \"min\": [null, null, 0.05],"
          " \"at_rest\": [\"box\"], \"rest_scale\": -1}",
          "goal.rest_scale");
}

/* --- a stored plan with phases, shortened, replayed bitwise ---------------- */

/* Parses text into *t and opens a fresh database (*db its path). */
static cp_store *task_and_store(const char *text, cp_task *t, char **db) {
  cp_error e;
  cr_assert_eq(cp_task_parse(text, strlen(text), NULL, t, &e), 0, "%s: %s",
               e.where, e.msg);
  *db = synth_temp_db();
  cp_store *st;
  char msg[512];
  cr_assert_eq(cp_store_open(*db, 0, &st, msg, sizeof msg), CP_STORE_OK, "%s",
               msg);
  return st;
}


Test(goals, phased_shortcut_plan_is_stored_and_replays_bitwise) {
  cp_task t;
  cp_error e;
  char goal[1024];
  snprintf(goal, sizeof goal,
           "\"phases\": [{\"body\": \"box\", \"min\": [null, null, 0.05]},"
           " {\"body\": \"box\", \"max\": [null, null, 0.0305]}]");
  const char *text = grasp_task(goal);
  /* rrt with continuous sampling and shortcutting (the grasp task's
   * search section is replaced: the last key wins in no JSON, so build it
   * anew). */
  char buf[8192];
  const char *at = strstr(text, "\"search\":");
  cr_assert(at);
  snprintf(buf, sizeof buf,
           "%.*s\"search\": {\"method\": \"rrt\", \"seed\": 3, \"goal_bias\":"
           " 0.2, \"shortcut\": 400, \"sampling\": \"continuous\"},"
           " \"limits\": {\"nodes\": 4000, \"seconds\": 600}}",
           (int)(at - text), text);
  char *db;
  cp_store *st = task_and_store(buf, &t, &db);
  cp_plan_result res;
  cr_assert_eq(cp_plan_task(st, &t, NULL, &res, &e), CP_PLAN_SOLVED,
               "%s (%ld nodes)", e.msg, res.nodes);
  cp_replay *r;
  cr_assert_eq(cp_replay_open(st, res.plan_id, &r, &e), CP_REPLAY_OK, "%s",
               e.msg);
  cp_replay_options o = cp_replay_defaults();
  o.verify = 1;
  cp_replay_result rr;
  cr_assert_eq(cp_replay_run(r, &o, &rr), CP_REPLAY_OK, "%s", rr.message);
  cr_assert(rr.verified, "%s", rr.message);
  cr_assert_eq(cp_replay_length(r), res.length);
  cp_replay_close(r);
  cp_store_close(st);
  synth_remove_db(db);
  cp_task_free(&t);
}

/* A phased run stopped by its node limit resumes into the run that was not
 * stopped: the phase entries come back with the stored states. */
Test(goals, a_phased_run_resumes_into_the_uninterrupted_one) {
  cp_task t;
  cp_error e;
  const char *text = grasp_task(
      "\"phases\": [{\"body\": \"box\", \"min\": [null, null, 0.05]},"
      " {\"body\": \"box\", \"max\": [null, null, 0.0305]}]");
  char *db;
  cp_store *st = task_and_store(text, &t, &db);
  cp_plan_result whole, part;
  cr_assert_eq(cp_plan_task(st, &t, NULL, &whole, &e), CP_PLAN_SOLVED, "%s",
               e.msg);
  cr_assert_gt(whole.nodes, 40);
  cp_plan_options o = cp_plan_defaults();
  o.max_nodes = 20; /* before the first goal node (75 here) */
  cp_plan_status s = cp_plan_task(st, &t, &o, &part, &e);
  cr_assert_eq(s, CP_PLAN_LIMIT, "%s: %s (%ld of %ld nodes)",
               cp_plan_status_name(s), e.msg, part.nodes, whole.nodes);
  o.max_nodes = 0;
  o.resume = 1;
  cr_assert_eq(cp_plan_task(st, &t, &o, &part, &e), CP_PLAN_SOLVED, "%s",
               e.msg);
  cr_assert_eq(part.resumed, 1);
  cr_assert_eq(part.run_id, whole.run_id + 1);
  cr_assert_eq(part.nodes, whole.nodes);
  cr_assert_eq(part.goal_node, whole.goal_node);
  cr_assert(part.cost == whole.cost);
  /* The goal node's stored state, phase entry included, is the same. */
  cp_search_node n;
  double a[32], b[32];
  cr_assert_eq(cp_store_load_node(st, whole.run_id, whole.goal_node, &n, a, 32,
                                  NULL, 0, NULL), CP_STORE_OK);
  cr_assert_eq(cp_store_load_node(st, part.run_id, part.goal_node, &n, b, 32,
                                  NULL, 0, NULL), CP_STORE_OK);
  cr_assert_eq(memcmp(a, b, 20 * sizeof *a), 0);
  cr_assert_eq(a[19], 1.0, "the goal node is in the last phase");
  cp_store_close(st);
  synth_remove_db(db);
  cp_task_free(&t);
}
