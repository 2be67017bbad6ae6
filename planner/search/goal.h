/// \file planner/search/goal.h
/// Goals of a planning task (docs/planner.md, "Goals"): what a state must
/// satisfy, and how far it is from satisfying it.
///
/// A goal is a conjunction of terms:
///   - body terms: a free body's centre within `tolerance` of `position`
///     (a ball) and/or within per-axis bounds `min`/`max` (a box whose sides
///     may be missing: half-spaces such as z >= 0.05), and/or its rotation
///     from `orientation` at most `angle_tolerance`;
///   - joint terms: a joint's position within `tolerance` of `position`;
///   - contact terms: "A touches B" (bodies or links), judged from the
///     contacts of the last simulated step (the caller supplies one flag per
///     contact pair of the task);
///   - `at_rest`: the chosen free bodies (all of them for `true`) slower
///     than rest_speed (turning slower than rest_speed / 0.1 m); robot
///     joints too when rest_joints is set (always for `at_rest: true`).
/// A task has one goal or an ordered list of them (phases).
///
/// Distance to a goal (m, >= 0): the Euclidean norm over the terms of each
/// term's excess: a ball's |p - c| - tol, a box's per-axis overshoot, an
/// angle's (theta - angle_tolerance) times angle_scale (m per rad), a
/// joint's |q - q*| - tol (revolute ones times angle_scale), a missing
/// contact `contact_miss`. at_rest is not a distance (a state may be at
/// distance 0 and still moving) unless `rest_scale` T (s) is given: then
/// each rest body adds T max(0, |v| - rest_speed) and
/// T 0.1 m max(0, |w| - rest_speed / 0.1 m), so a fast state is far.
///
/// Ownership: a cp_goal owns its arrays and names; cp_goal_free releases
/// them.
#ifndef CP_PLANNER_GOAL_H
#define CP_PLANNER_GOAL_H

#include <jansson.h>

#include "models/error.h"
#include "models/scene.h"
#include "planner/sim/statelayout.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cp_goal_body {
  char *body;               ///< a free body's name (owned)
  int body_index;           ///< index into scene.bodies
  int has_ball;
  double position[3];       ///< ball centre
  double tolerance;         ///< ball radius (m, > 0)
  int has_box;
  double lo[3], hi[3];      ///< box sides (-INFINITY / INFINITY: none)
  int has_orientation;
  double orientation[4];    ///< unit quaternion [w, x, y, z]
  double angle_tolerance;   ///< rad, > 0 (default 0.1)
} cp_goal_body;

typedef struct cp_goal_joint {
  char *joint;              ///< "manip/joint" (owned)
  int row;                  ///< joint row (planner/sim/statelayout.h)
  int prismatic;
  double position, tolerance;
} cp_goal_joint;

typedef struct cp_goal_contact {
  char *a, *b;              ///< body or "manip/link" names (owned)
  cp_ref ra, rb;
  int pair;                 ///< index into the task's contact pairs
} cp_goal_contact;

typedef struct cp_goal {
  int n_bodies;
  cp_goal_body *bodies;
  int n_joints;
  cp_goal_joint *joints;
  int n_contacts;
  cp_goal_contact *contacts;
  int at_rest;              ///< 1: the rest bodies (and joints) still
  int n_rest;               ///< rest bodies (scene indices)
  int *rest_bodies;
  int rest_joints;          ///< joint rates below rest_speed / 0.1 m too
  double rest_speed;        ///< m/s (default 0.01)
  double rest_scale;        ///< s: rest bodies' speed excess in the distance
                            ///< (0, the default: rest is no distance)
} cp_goal;

/// The contact pairs a task's goals name (each pair once, in order of
/// appearance): the flags handed to the evaluation are indexed by them.
typedef struct cp_goal_pairs {
  int n;
  cp_ref *a, *b;
} cp_goal_pairs;

/// Parses goal v found at JSON path `path` against scene s; contact terms
/// get their pair index in *pairs (extended). Returns 0, or -1 with err
/// (where = the JSON path) and g zeroed.
int cp_goal_parse(const json_t *v, const char *path, const cp_scene *s,
                  cp_goal_pairs *pairs, cp_goal *g, cp_error *err);
void cp_goal_free(cp_goal *g);
void cp_goal_pairs_free(cp_goal_pairs *p);

/// How a goal reads a state: the state layout of the scene, the scales.
typedef struct cp_goal_view {
  const cp_state_layout *layout;
  double angle_scale;       ///< m per rad (search.metric.angle)
  double contact_miss;      ///< m added for a missing contact
} cp_goal_view;

/// Rotation angle between two unit quaternions, 2 acos |q . r| in [0, pi].
double cp_goal_angle(const double *q, const double *r);
/// Distance of state x (contact flags: one per pair, 1 touching; may be
/// NULL when the goal has no contact term) to goal g (see the file
/// comment).
double cp_goal_distance(const cp_goal *g, const cp_goal_view *v,
                        const double *x, const double *contacts);
/// 1 when state x satisfies every term of g (and at_rest).
int cp_goal_met(const cp_goal *g, const cp_goal_view *v, const double *x,
                const double *contacts);
/// A point of body term t's region nearest p (the ball's centre, clamped
/// into the box): where a goal sample puts the body.
void cp_goal_body_target(const cp_goal_body *t, const double *p, double *out);

#ifdef __cplusplus
}
#endif
#endif
