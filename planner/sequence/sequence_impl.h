/* Internal to planner/sequence: building the JSON scenes of the grasp LP and
 * of the phases, and the geometry of box parts. Not installed. */
#ifndef CP_PLANNER_SEQUENCE_IMPL_H
#define CP_PLANNER_SEQUENCE_IMPL_H

#include <jansson.h>

#include "planner/sequence/sequence.h"

/* Mass of the sliding (right) finger, kg: in the grasp LP and in the
 * phases' gripper alike. */
/* The wrist joint's name in every gripper chain the sequence builds (box
 * fingers and the Panda hand); replay tells a move of eight phases (with
 * the turn) from one of seven by it. */
#define CP_SEQ_WRIST_JOINT "roll"
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
/* The highest top of the design's bodies and of the staged parts (0 at
 * least): whatever a part could come to rest on is below it. */
double cp_seq_top(const cp_sequence_task *t);
/* The transport height of part p's centre: everything's top plus the
 * clearance plus half the part's height (the part upright). */
double cp_seq_transport_height(const cp_sequence_task *t, int p);
/* Part p's height along world z at orientation q (its vertical axis's
 * size), or -1 when no axis of it is vertical. */
double cp_seq_part_height(const cp_sequence_task *t, int p, const double *q);

/* How many of the n grasps are not rejected (grasp.c). */
int cp_seq_usable(const cp_sequence_grasp *g, int n);
/* A regrasp (grasp.c): an orientation one wrist turn (+-90 or 180 degrees
 * about world x or y) from the part's at `from`, resting at the same place,
 * into which a usable grasp turns it and from which the design orientation
 * is one turn away with a usable grasp. Fills to1 (the pose on the table)
 * and both moves' grasps (6 each). 1 found, 0 none, -1 failure. */
int cp_seq_regrasp(const cp_sequence_task *t, int p, uint64_t placed, const double *from, double *to1,
                   cp_sequence_grasp *g1, int *n1, cp_sequence_grasp *g2, int *n2, cp_error *err);

/* The Panda hand (hand.c). Reads the hand's elements, the finger limits
 * and the tool centre point from the URDF at path into g (where: the JSON
 * path of errors). 0, or -1 with err. */
int cp_seq_hand_load(cp_sequence_gripper *g, const char *path, const char *where, cp_error *err);
/* The URDF of the gantry carrying the hand with its fingers closing along
 * dir (left finger on -dir), [a wrist about dir]; its file name (by its
 * content) in name. malloc'd, NULL when out of memory. */
char *cp_seq_hand_urdf(const cp_sequence_gripper *g, const double *dir, int wrist, char *name, size_t name_size);
/* The gripper manipulator of a phase scene for the Panda hand: the URDF
 * (*text, malloc'd, to serve under name) and its state from q, qd (x, y,
 * z, gap, roll as the sequence keeps them). NULL when out of memory. */
json_t *cp_seq_hand_json(const cp_sequence_gripper *g, const double *dir, int wrist, const double *q,
                         const double *qd, char **text, char *name, size_t name_size);
typedef struct cp_seq_hand_file {
  const char *name, *text;
} cp_seq_hand_file;
/* cp_file_source read: the file named ctx->name (any folder) is ctx->text,
 * others come from the file system. */
char *cp_seq_hand_read(void *ctx, const char *path, const char *kind, size_t *len, cp_error *err);
/* Panda hand geometry around the tool centre point (m), from panda.urdf's
 * finger boxes and hand.stl's bounds: the rubber pad; a finger's whole
 * extent out from its pad face and up from the pad's bottom; the palm's
 * half extents across and along the finger axis and its height span above
 * the tool centre point. */
#define CP_SEQ_PANDA_PAD_T 0.0152
#define CP_SEQ_PANDA_PAD_W 0.0175
#define CP_SEQ_PANDA_PAD_H 0.0185
#define CP_SEQ_PANDA_FINGER_OUT 0.0264
#define CP_SEQ_PANDA_FINGER_W 0.022
#define CP_SEQ_PANDA_PALM_X 0.0317
#define CP_SEQ_PANDA_PALM_Y 0.104
#define CP_SEQ_PANDA_PALM_LO 0.0374
#define CP_SEQ_PANDA_PALM_HI 0.1294
/* what a turned palm keeps above the part's bottom at the pose it goes
 * to (the table, or what it is placed on) */
#define CP_SEQ_PANDA_PALM_MARGIN 0.005
/* the stiffness of the Panda's wrist servo (N m/rad, about 4 times the
 * default gains for the hand's inertia about the grasp axis) */
#define CP_SEQ_PANDA_WRIST_STIFFNESS 50.0
/* hand 0.73 kg and two fingers of 0.015 kg */
#define CP_SEQ_PANDA_MASS 0.76

#endif
