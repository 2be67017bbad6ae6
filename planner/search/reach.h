/* Reach inputs (docs/planner.md, "Reach inputs"): a link point (a
 * fingertip) put on a point sampled on a face of a body, with an approach
 * standoff and then a push along the sampled contact normal. This file
 * parses the input's keys and draws the contact point from an action's
 * value; planner/plan/actions.c turns it into joint targets. Internal to
 * the planner (task.c, actions.c, tests); not installed. */
#ifndef CP_PLANNER_SEARCH_REACH_H
#define CP_PLANNER_SEARCH_REACH_H

#include <jansson.h>

#include "models/error.h"
#include "models/shape.h"
#include "planner/search/task.h"

/* Faces, body frame: a box's six, a cylinder's two caps (+z, -z) and its
 * side, a sphere's one surface. */
enum {
  CP_REACH_FACE_XP = 1u << 0, CP_REACH_FACE_XN = 1u << 1,
  CP_REACH_FACE_YP = 1u << 2, CP_REACH_FACE_YN = 1u << 3,
  CP_REACH_FACE_ZP = 1u << 4, CP_REACH_FACE_ZN = 1u << 5,
  CP_REACH_FACE_SIDE = 1u << 6, CP_REACH_FACE_SURFACE = 1u << 7
};
#define CP_REACH_FACES 8

/* The faces a shape has (0: a shape reach cannot sample). */
unsigned cp_reach_shape_faces(const cp_shape *sh);

/* A reach input's keys after its "kind" (ti->kind already CP_INPUT_REACH),
 * p its JSON path. Returns 0, or -1 with err at the key's path. */
int cp_reach_parse(cp_task *t, cp_task_input *ti, const json_t *in,
                   const char *p, cp_error *err);

/* Every joint on each reach input's path must be a target input (the reach
 * overrides their targets while it acts). Returns 0, or -1 with err. */
int cp_reach_check(const cp_task *t, cp_error *err);

/* The first joint (not a mimic) on the path from manipulator manip's root
 * to link `link` that no "target" input drives, or -1 when every one is
 * driven: reach and pinch inputs set the targets of every such joint. */
int cp_reach_undriven_joint(const cp_task *t, int manip, int link);

/* The contact drawn for an action value v >= 0: a face among `faces`
 * (chosen with probability proportional to its area), a point uniform on
 * it (p, body frame), its outward unit normal (n, body frame) and a depth
 * uniform in [push[0], push[1]]. The draw is a function of v's bits alone
 * (FNV-1a of the double seeds the generator of planner/search/search.h):
 * the same value always gives the same contact. Returns the face's bit,
 * or 0 when the shape has none of `faces`. */
unsigned cp_reach_sample(const cp_shape *sh, unsigned faces, double v,
                         const double push[2], double p[3], double n[3],
                         double *depth);

/* Point p (body frame) on face bit f, as cp_reach_sample draws it, pulled
 * towards the body's centre along the face: each body-frame coordinate k
 * that runs along the face (a box face's two, a cap's x and y, a cylinder
 * side's z) times spread[k], the coordinate across the face kept, so the
 * point stays on its face. A sphere's point is left alone, and so is every
 * coordinate whose spread is 1 (bit for bit). */
void cp_reach_spread(const cp_shape *sh, unsigned f, const double spread[3],
                     double p[3]);

/* The face of the shape nearest to point q (body frame): the face whose
 * plane (cap, side; a sphere's surface) q is farthest outside of, or least
 * inside of; p the point of that face nearest to q, n its outward normal.
 * Returns the face's bit (0 for a shape reach cannot sample) and sets *dist
 * to q's signed distance from the face's plane (negative inside; at an
 * edge or corner it is the largest of the planes' distances, which is at
 * most the Euclidean distance). */
unsigned cp_reach_nearest(const cp_shape *sh, const double q[3], double p[3],
                          double n[3], double *dist);

#endif
