/// \file planner/sim/statelayout.h
/// The one description of the world's state vector (cp_world_get_state,
/// planner/sim/world.h): where each body and joint sits in it and what each
/// entry is called. Everything that indexes a state by hand -- the CSV
/// writers of `simulate --csv` and `replay --csv`, the viewer, replay's
/// verification messages, the plan printout -- asks this layout instead, so
/// that a header and its rows, or an offset and its name, cannot disagree.
///
/// The layout (docs/simulate.md, "State vector"):
///   for each FREE body, in scene order, 13 entries at body_at(b):
///     x y z  qw qx qy qz  vx vy vz  wx wy wz
///   then for each joint ROW (manipulators in scene order, each chain's
///   joints in chain order, mimic followers left out: models/chain.h), two
///   entries at joint_at(m, k): q (position) and qd (velocity).
/// Fixed bodies and mimic followers are not in the state (offset -1): a
/// follower's position is its leader's times the multiplier plus the offset.
///
/// Names: an entry's column name is OWNER.COMPONENT, where OWNER is the
/// body's name or "MANIP/JOINT" and COMPONENT one of the short names above
/// ("box.qw", "arm/elbow.qd"). Names are not length-limited.
///
/// Ownership: a layout holds offsets only (it keeps no pointer into the
/// scene); the functions that produce names take the scene it was made from.
/// Nothing is printed.
#ifndef CP_PLANNER_STATELAYOUT_H
#define CP_PLANNER_STATELAYOUT_H

#include <stddef.h>

#include "models/scene.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Entries per free body and per joint row.
enum { CP_STATE_BODY_SIZE = 13, CP_STATE_JOINT_SIZE = 2 };

typedef struct cp_state_layout {
  int n;            ///< state length: 13 n_free + 2 n_joints
  int n_free;       ///< free bodies
  int n_joints;     ///< joint rows (mimic followers excluded)
  int n_bodies;     ///< scene bodies (fixed ones included)
  int n_manips;
  int *body_at;     ///< [n_bodies]: offset of body b's x, -1 when fixed
  int *free_body;   ///< [n_free]: scene index of the f-th free body
  int *manip_first; ///< [n_manips + 1]: index of chain m's first joint in
                    ///< joint_at (a chain's joints are consecutive)
  int *joint_at;    ///< [total joints]: offset of a joint's position, -1
                    ///< for a mimic follower
  int *row_manip, *row_joint; ///< [n_joints]: the chain and joint of a row
} cp_state_layout;

/// What state entry i is.
typedef struct cp_state_entry {
  int is_joint;               ///< 0: a body's entry, 1: a joint's
  int body;                   ///< scene body index (bodies), else -1
  int manip, joint;           ///< chain and joint index (joints), else -1
  int component;              ///< 0..12 (bodies) or 0..1 (joints)
  const char *component_name; ///< "x" .. "wz", or "q" / "qd"
} cp_state_entry;

/// Builds the layout of scene s. Returns 0, or -1 when out of memory (l is
/// then empty; cp_state_layout_free is still safe).
int cp_state_layout_init(cp_state_layout *l, const cp_scene *s);
void cp_state_layout_free(cp_state_layout *l);

/// Offset of body b's first entry (x), or -1 when b is fixed or not a body.
int cp_state_body_at(const cp_state_layout *l, int b);
/// Offset of joint k of chain m's position (its velocity follows), or -1
/// for a mimic follower or no such joint.
int cp_state_joint_at(const cp_state_layout *l, int m, int k);

/// The joint row (0..n_joints-1) of the joint named "MANIP/JOINT" (names
/// of any length); -1 when the scene has no such joint, -2 for a mimic
/// follower (which has no row; *leader, when not NULL, is then its
/// leader's joint name).
int cp_state_joint_row(const cp_state_layout *l, const cp_scene *s,
                       const char *name, const char **leader);

/// Describes entry i (0 <= i < n). Returns 0, or -1 when i is out of range.
int cp_state_entry_of(const cp_state_layout *l, int i, cp_state_entry *e);

/// The owner of entry i ("box", "arm/elbow") written like snprintf: at most
/// size bytes with the NUL; returns the full length (-1: bad i).
int cp_state_owner_name(const cp_state_layout *l, const cp_scene *s, int i,
                        char *buf, size_t size);
/// The column name of entry i ("box.x", "arm/elbow.q"), like snprintf.
int cp_state_column_name(const cp_state_layout *l, const cp_scene *s, int i,
                         char *buf, size_t size);

#ifdef __cplusplus
}
#endif
#endif
