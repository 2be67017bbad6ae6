/* Internal to planner/sequence: building the JSON scenes of the grasp LP and
 * of the phases, and the geometry of box parts. Not installed. */
#ifndef CP_PLANNER_SEQUENCE_IMPL_H
#define CP_PLANNER_SEQUENCE_IMPL_H

#include <jansson.h>

#include "planner/sequence/sequence.h"

/* Mass of the sliding (right) finger, kg: in the grasp LP and in the
 * phases' gripper alike. */
#define CP_SEQ_FINGER_MASS 0.05

/* A JSON array of n doubles. */
json_t *cp_seq_vec(const double *a, int n);
/* The JSON object of body b (shape, mass, inertia) at pose x, q with
 * velocities v, w (NULL: at rest); NULL for a mesh (unsupported) or when
 * out of memory. The inertia is written out, so the body reads back with
 * the same numbers. */
json_t *cp_seq_body_json(const cp_body *b, const double *x, const double *q,
                         const double *v, const double *w);
/* The friction object of scene s for the bodies present (a JSON array of
 * body objects): s's pairs whose two ends are present, plus each free body
 * with manip (may be NULL) at mu. */
json_t *cp_seq_friction_json(const cp_scene *s, const json_t *bodies, const char *manip, double mu);
/* The rotation about z taking the x axis to the horizontal unit g. */
void cp_seq_yaw_quat(const double *g, double *q);
/* Half extents of the axis-aligned box around a box of size sz at q. */
void cp_seq_box_aabb(const double *sz, const double *q, double *half);
/* Angle (rad) between two unit quaternions. */
double cp_seq_quat_angle(const double *a, const double *b);
/* The transport height of part p's centre: everything's top plus the
 * clearance plus half the part's height (the part upright). */
double cp_seq_transport_height(const cp_sequence_task *t, int p);
/* Part p's height along world z at orientation q (its vertical axis's
 * size), or -1 when no axis of it is vertical. */
double cp_seq_part_height(const cp_sequence_task *t, int p, const double *q);

#endif
