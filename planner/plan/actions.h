/* Applying a task's target and Cartesian inputs to a world (docs/planner.md,
 * "Input kinds"): the joint targets set when an action starts and the PD
 * efforts of planner/sim/actuate.h put into the world before every step.
 * Internal to planner/plan (problem.c); not installed. */
#ifndef CP_PLANNER_PLAN_ACTIONS_H
#define CP_PLANNER_PLAN_ACTIONS_H

#include "models/error.h"
#include "planner/search/task.h"
#include "planner/sim/actuate.h"
#include "planner/sim/world.h"

/* A Cartesian group: the Cartesian inputs on one link and the actuators of
 * the joints on its path. */
typedef struct cp_plan_cartesian {
  cp_cartesian_goal goal;
  int first, n;        /* its actuators: act[first .. first + n - 1] */
} cp_plan_cartesian;

/* A reach input (planner/search/reach.h), or one link of a pinch: when its value is >= 0 its link
 * point is driven to the approach point for the action's first half and
 * to the push point for the rest, overriding the targets of its path's
 * target inputs. */
typedef struct cp_plan_reach {
  int input;           /* the task input */
  int finger;          /* -1: a reach input; 0, 1: a pinch input's first or
                          second link (planner/search/pinch.h) */
  int active;          /* this action's value is >= 0 */
  int held;            /* value < 0 and the point near the body: held at
                          push, moved by its target inputs' relative values
                          (a pinch: by the pair's carry, in push) */
  cp_cartesian_goal goal;
  double approach[3], push[3]; /* the point's goals (world) */
  int first, n;        /* its path's actuators: act[path[first .. +n-1]] */
} cp_plan_reach;

typedef struct cp_plan_actions {
  int n_act;           /* 0: the task has no target or Cartesian input */
  cp_actuator *act;    /* [n_act]: target inputs, then Cartesian joints */
  int *row;            /* [n_act] the joints' system rows */
  int *input;          /* [n_act] the target input, -1 for a Cartesian one */
  double *effort;      /* [n_act] */
  int n_cart;
  cp_plan_cartesian *cart;
  double *targets;     /* [largest chain] */
  int n_reach;
  cp_plan_reach *reach;
  int *path;           /* reach actuator indices, concatenated */
  double *rel;         /* [n_act] relative target values of this action */
  int step, steps;     /* the step within the action, steps per action */
  int implicit;        /* the task's action.pd is "implicit" */
  double dt;           /* the step (implicit law) */
  cp_actuate_work work;
} cp_plan_actions;

/* Builds the actuators of task t (gains of Cartesian joints: the defaults
 * at the start configuration). Returns 0, or -1 with err (out of memory). */
int cp_plan_actions_init(cp_plan_actions *a, const cp_task *t, cp_error *err);
void cp_plan_actions_free(cp_plan_actions *a);

/* At an action's start, s the world's scene in the action's start state
 * and values the action's input values: targets and Cartesian goals. */
void cp_plan_actions_start(cp_plan_actions *a, const cp_task *t,
                           const cp_scene *s, const double *values);

/* Before each step: the PD efforts of the current state into the world. */
cp_world_status cp_plan_actions_apply(cp_plan_actions *a, cp_world *w);

#endif
