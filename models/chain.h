/// \file models/chain.h
/// Manipulators from a fixed base -- serial chains and kinematic trees:
/// forward kinematics, point Jacobians and their velocity-product terms, the
/// joint-space mass matrix (composite-rigid-body algorithm) and the bias
/// efforts (recursive Newton-Euler) -- the manipulator parts of
/// docs/math.md §1-§2.
///
/// Trees. Each joint i has a parent joint p(i) < i, or -1 for the base
/// (joints are stored parents first). `parent` NULL means a serial chain,
/// p(i) = i - 1, which is what every JSON "joints" list and every chain
/// built by hand (zero-initialised) is. Below, "i-1" in the serial formulas
/// reads p(i), and "links j..n-1" reads "the subtree of j"; a serial chain
/// computes exactly (bit for bit) what it did before trees existed.
///   - the path of link k is k, p(k), p(p(k)), ..., down to the base; only
///     joints on it move link k (Jacobian columns of the others are zero);
///   - CRBA: C_j is link j and the composites of its children;
///     M_ij = S_i . (momentum of C_j under a unit rate of joint j) for i on
///     the path of j, 0 for i neither ancestor nor descendant of j;
///   - RNEA: a joint carries its link and every child's force and moment.
///
/// Mimic joints (URDF <mimic>). A joint with is_mimic = 1 follows its leader
/// joint (mimic_leader, itself not a mimic): l_i = m l_L + b, l'_i = m l'_L,
/// l''_i = m l''_L (m = mimic_multiplier, b = mimic_offset). The functions
/// of this header work on ALL n joints ("full" joint space); kinematics
/// takes a follower's position and rate from its leader (its own `position`
/// and `velocity` fields are ignored; cp_chain_apply_mimic writes them for
/// reporting). The independent coordinates (cp_chain_dofs) are the
/// non-mimic joints in chain order; l = P q + b with P (n x n_dof) holding
/// one 1 (independent joints) or m (followers) per row. Since P is
/// constant, M_q = P^T M P, efforts P^T tau, Jacobians J P, and the
/// velocity products are unchanged (models/system.h does this). A follower
/// has no effort of its own: the leader's effort is the generalised effort
/// of the coupled pair (one motor driving both, as in a parallel gripper),
/// i.e. the leader's effort plus m times the follower's joint effort.
///
/// Geometry. Joint i is placed by its `origin` (position, orientation) in the
/// frame of link p(i) (or the base for p(i) = -1); its axis `axis` is a unit vector
/// in that joint frame. Link i's frame is the joint frame moved by the joint:
/// rotated by l_i about the axis (revolute) or translated by l_i along it
/// (prismatic). A link's centre of mass `com`, inertia (about the com) and
/// shape are given in its link frame. The shape's own frame (models/shape.h:
/// centred, along its axes) is placed in the link frame by the shape pose
/// (shape_pos, shape_quat) when has_shape_pose is 1; when it is 0 (e.g. a
/// zero-initialised link) the shape sits at `com` with the link frame's axes.
/// The world pose of a link's shape is the link frame composed with that
/// pose: x = o_i + R_i shape_pos, orientation R_i R(shape_quat). A link may
/// have further shapes (extra_shapes, each with its own pose in the link
/// frame); cp_link_shape_count / cp_link_shape_get enumerate all of them,
/// the first being `shape` itself. Mesh shapes hold one reference to their
/// cp_mesh (models/mesh.h), released with the chain.
///
/// Joint limits (has_limits) are recorded for the scene layer, which rejects
/// positions outside [lower, upper]; the dynamics do not enforce them.
///
/// All kinematic quantities below are in the WORLD frame:
///
///     o_i   origin of link frame i (a point on joint i's axis)
///     a_i   joint axis,  R_i link orientation,  c_i centre of mass
///     w_i   = w_{i-1} + a_i l'_i                      (revolute; prismatic: w_{i-1})
///     v_i   = v_{i-1} + w_{i-1} x (o_i - o_{i-1}) [+ a_i l'_i if prismatic]
///
/// Velocity-product ("bias") accelerations, i.e. accelerations with l'' = 0
/// (the Jdot l' terms of docs/math.md §2's k):
///
///     dw_i  = dw_{i-1} + w_{i-1} x a_i l'_i           (revolute; prismatic: dw_{i-1})
///     dv_i  = dv_{i-1} + dw_{i-1} x d + w_{i-1} x (w_{i-1} x d)
///             [+ 2 w_{i-1} x a_i l'_i if prismatic],   d = o_i - o_{i-1}
///
/// A point p fixed on link k then has velocity J_k(p) l' with Jacobian columns
/// (i <= k) a_i x (p - o_i) (revolute) or a_i (prismatic), zero for i > k,
/// and velocity-product acceleration
///
///     Jdot_k(p) l' = dv_k + dw_k x r + w_k x (w_k x r),   r = p - o_k.
///
/// Dynamics of the chain alone:  M(l) l'' + h(l, l') + g(l) = tau + J^T F.
/// M by the composite-rigid-body algorithm (CRBA): with C_j the composite of
/// links j..n-1 (mass m_C, centre c_C, inertia I_C about c_C),
/// M_ij = S_i . (momentum of C_j under a unit rate of joint j), i <= j.
/// g and h by recursive Newton-Euler (RNEA) with l'' = 0: g = RNEA(l, 0, 0; g),
/// h = RNEA(l, l', 0; no gravity). g(l) = dV/dl, V = -sum m_i g . c_i.
///
/// Drive modes (paper §2.5, formulation §1): an effort-driven joint has tau
/// known and l'' unknown; an acceleration-driven joint has l'' known and tau
/// unknown. Both are recorded on the joint; the contact layer uses them.
///
/// Ownership: a cp_chain owns its name, its joints array, the parent array,
/// the joint and link names, the links' extra shapes and one reference to
/// every mesh of its shapes (cp_chain_free releases them). Kinematic results go into a
/// caller-provided array of n cp_link_state.
#ifndef CP_MODELS_CHAIN_H
#define CP_MODELS_CHAIN_H

#include "models/shape.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cp_joint_type {
  CP_JOINT_REVOLUTE = 0,
  CP_JOINT_PRISMATIC
} cp_joint_type;

typedef enum cp_joint_drive {
  CP_DRIVE_EFFORT = 0,     ///< tau given, l'' unknown (default)
  CP_DRIVE_ACCELERATION    ///< l'' given, tau unknown
} cp_joint_drive;

/// A collision shape placed in its link's frame.
typedef struct cp_link_shape {
  cp_shape shape;
  double pos[3];  ///< shape centre (mesh: its origin), link frame
  double quat[4]; ///< shape axes in the link frame, unit [w, x, y, z]
} cp_link_shape;

/// The rigid link moved by a joint.
typedef struct cp_link {
  char *name;          ///< link name without the manipulator prefix (owned)
  double mass;         ///< > 0
  double com[3];       ///< centre of mass, link frame
  double inertia[9];   ///< about com, link-frame axes, symmetric positive definite
  cp_shape shape;      ///< CP_SHAPE_NONE when the scene gives none
  int has_shape_pose;  ///< 1: shape_pos/shape_quat valid; 0: at com, link axes
  double shape_pos[3]; ///< shape centre, link frame
  double shape_quat[4];///< shape axes in the link frame, unit [w, x, y, z]
  int n_extra_shapes;  ///< further shapes besides `shape` (0 usually)
  cp_link_shape *extra_shapes; ///< [n_extra_shapes] (owned)
} cp_link;

typedef struct cp_joint {
  char *name;             ///< joint name (owned)
  cp_joint_type type;
  double axis[3];         ///< unit, joint frame
  double origin_pos[3];   ///< joint frame in the previous link's (or base) frame
  double origin_quat[4];  ///< unit [w, x, y, z]
  double position;        ///< l_i (rad or m)
  double velocity;        ///< l'_i
  cp_joint_drive drive;
  double effort;          ///< tau_i if effort-driven (else 0: unknown)
  double acceleration;    ///< l''_i if acceleration-driven (else 0: unknown)
  int has_limits;         ///< 1: lower <= upper bound the position
  double lower, upper;    ///< position limits (rad or m), valid if has_limits
  double effort_limit;    ///< maximum |effort| (0: not given)
  double velocity_limit;  ///< maximum |velocity| (0: not given)
  int is_mimic;           ///< 1: follows joint mimic_leader (header comment)
  int mimic_leader;       ///< index of the leader joint (not itself a mimic)
  double mimic_multiplier;///< l = multiplier l_leader + offset
  double mimic_offset;
  cp_link link;
} cp_joint;

typedef struct cp_chain {
  char *name;             ///< manipulator name (owned)
  double base_pos[3];     ///< fixed base frame in the world
  double base_quat[4];
  int n;                  ///< number of joints (= links), >= 1
  cp_joint *joints;       ///< [n] (owned)
  int *parent;            ///< [n] parent joint p(i) < i, -1: the base;
                          ///< NULL: serial, p(i) = i - 1 (owned)
  int no_self_contacts;   ///< 1: contact generation skips pairs of this
                          ///< chain's links (models/contactgen.h)
} cp_chain;

/// Parent joint of joint i (-1: the base).
static inline int cp_chain_parent(const cp_chain *c, int i) {
  return c->parent ? c->parent[i] : i - 1;
}

/// World-frame kinematic state of one link (see the header comment).
typedef struct cp_link_state {
  double R[9];    ///< link orientation, row-major
  double o[3];    ///< link frame origin (on the joint axis)
  double axis[3]; ///< joint axis a_i
  double com[3];  ///< centre of mass c_i
  double w[3];    ///< angular velocity
  double v[3];    ///< velocity of the point o
  double dw[3];   ///< angular acceleration at l'' = 0
  double dv[3];   ///< acceleration of o at l'' = 0
} cp_link_state;

/// Releases what *c owns and zeroes it. Safe on a zeroed struct.
void cp_chain_free(cp_chain *c);

/// Deep copy of src into *dst (names, parent array, extra shapes; meshes are
/// shared by reference counting). Returns 0, or -1 (out of memory) with *dst
/// zeroed.
int cp_chain_copy(cp_chain *dst, const cp_chain *src);

/// Releases a link's extra shapes and its meshes' references (not its name).
void cp_link_free_shapes(cp_link *l);

/// Number of shapes of a link: 0 when `shape` is NONE and there are no
/// extras, else 1 + n_extra_shapes.
int cp_link_shape_count(const cp_link *l);

/// Shape k (0 <= k < cp_link_shape_count) with its pose in the link frame
/// (shape 0 is `shape`, at (com, identity) when has_shape_pose is 0).
void cp_link_shape_get(const cp_link *l, int k, cp_link_shape *out);

/// 1 when joint a is joint b or one of its ancestors.
int cp_chain_is_ancestor(const cp_chain *c, int a, int b);

/// Number of independent joint coordinates (joints that are not mimics).
int cp_chain_dofs(const cp_chain *c);

/// For every joint i: dof[i], the independent coordinate that moves it
/// (its own, or its leader's), and scale[i] (1, or the mimic multiplier),
/// so that l'_i = scale[i] q'_{dof[i]}. Either output may be NULL.
void cp_chain_dof_map(const cp_chain *c, int *dof, double *scale);

/// Writes every follower's position, velocity and acceleration from its
/// leader's (header comment), so that the joint fields are consistent.
void cp_chain_apply_mimic(cp_chain *c);

/// Forward kinematics and velocities at the joints' current position and
/// velocity (followers: from their leaders): fills s[0..n-1].
void cp_chain_kinematics(const cp_chain *c, cp_link_state *s);

/// Velocity of the point p (world) fixed on link k: v_k + w_k x (p - o_k).
void cp_chain_point_velocity(const cp_link_state *s, int k, const double *p,
                             double *vel);

/// Linear Jacobian of the point p (world) fixed on link k: J [3*n],
/// column-major 3 x n (column i at J + 3 i); columns of joints not on the
/// path of k are zero.
void cp_chain_point_jacobian(const cp_chain *c, const cp_link_state *s, int k,
                             const double *p, double *J);

/// Angular Jacobian of link k: w_k = Jw l'; Jw [3*n] column-major 3 x n.
void cp_chain_angular_jacobian(const cp_chain *c, const cp_link_state *s,
                               int k, double *Jw);

/// Velocity-product acceleration Jdot_k(p) l' of the point p fixed on link k.
void cp_chain_point_bias(const cp_link_state *s, int k, const double *p,
                         double *acc);

/// Joint-space mass matrix by CRBA: M [n*n], column-major, symmetric.
/// Trees allocate O(n) scratch; if that fails, M is filled with NaN.
void cp_chain_mass_matrix(const cp_chain *c, const cp_link_state *s,
                          double *M);

/// Recursive Newton-Euler inverse dynamics at the configuration of s:
/// tau [n] = M(l) qdd + h(l, qd) + g(l) for the given rates qd [n] and
/// accelerations qdd [n] (either may be NULL: zero) and gravity [3] (NULL: no
/// gravity). Only the positions in s (R, o, axis, com) are used. Allocates
/// O(n) scratch; if that fails, tau is filled with NaN.
void cp_chain_rnea(const cp_chain *c, const cp_link_state *s, const double *qd,
                   const double *qdd, const double *gravity, double *tau);

/// Gravity efforts g [n] = RNEA(l, 0, 0; gravity) and Coriolis/centrifugal
/// efforts h [n] = RNEA(l, l', 0; none) at the chain's current state.
void cp_chain_bias_efforts(const cp_chain *c, const cp_link_state *s,
                           const double *gravity, double *g, double *h);

#ifdef __cplusplus
}
#endif
#endif
