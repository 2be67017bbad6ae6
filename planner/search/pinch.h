/* Pinch inputs (docs/planner.md, "Pinch inputs"): two link points (two
 * fingertips) put on antipodal points of a body and squeezed, and a held
 * pinch carried as a rigid pair. This file parses the input's keys, draws
 * the antipodal contact from an action's value and the carry of a held
 * pinch; planner/plan/actions.c turns them into joint targets. Internal to
 * the planner (task.c, actions.c, tests); not installed. */
#ifndef CP_PLANNER_SEARCH_PINCH_H
#define CP_PLANNER_SEARCH_PINCH_H

#include <jansson.h>

#include "models/error.h"
#include "models/shape.h"
#include "planner/search/task.h"

/* The keys a pinch input takes (NULL-terminated). */
extern const char *const cp_pinch_keys[];

/* A pinch input's keys after its "kind" (ti->kind already CP_INPUT_PINCH),
 * p its JSON path: "links" (two "manipulator/link" names, set into
 * manip/index and manip2/index2), then the reach keys (body, point,
 * exclude, offset, approach, push, hold) and "carry", "turn", "axis", "still".
 * Returns 0, or -1 with err at the key's path. */
int cp_pinch_parse(cp_task *t, cp_task_input *ti, const json_t *in,
                   const char *p, cp_error *err);

/* Every joint on both links' paths must be a target input. Returns 0, or
 * -1 with err at the input's path. */
int cp_pinch_check(const cp_task *t, cp_error *err);

/* The faces among `faces` whose opposite face is also among them (a box's
 * +-x, +-y, +-z pairs, a cylinder's two caps); a cylinder's side and a
 * sphere's surface are their own opposites. */
unsigned cp_pinch_faces(const cp_shape *sh, unsigned faces);

/* The antipode of point p (body frame) on the face opposite to face bit f:
 * a box face's point mirrored through the centre along the face's axis, a
 * cap's point mirrored in z, a side's or a sphere's point mirrored through
 * the axis or the centre; q and m its point and outward normal. */
void cp_pinch_antipode(const cp_shape *sh, unsigned f, const double p[3],
                       double q[3], double m[3]);

/* The carry of a held pinch for an action value v < 0: a displacement
 * uniform in [-carry_k, carry_k] per world axis and an angle uniform in
 * [-turn, turn], drawn from the FNV-1a hash of v's bits (the same value,
 * the same carry); with `still` s > 0, a further uniform draw u < s makes
 * both zero (the pair held where it is). */
void cp_pinch_carry(const cp_task_input *in, double v, double delta[3],
                    double *angle);

#endif
