/// \file models/chain.h
/// Serial manipulator chains from a fixed base: forward kinematics, point
/// Jacobians and their velocity-product terms, the joint-space mass matrix
/// (composite-rigid-body algorithm) and the bias efforts (recursive
/// Newton-Euler) -- the manipulator parts of formulation.md §1-§2.
///
/// Geometry. Joint i is placed by its `origin` (position, orientation) in the
/// frame of link i-1 (or the base for i = 0); its axis `axis` is a unit vector
/// in that joint frame. Link i's frame is the joint frame moved by the joint:
/// rotated by l_i about the axis (revolute) or translated by l_i along it
/// (prismatic). A link's centre of mass `com`, inertia (about the com) and
/// shape are given in its link frame. The shape's own frame (models/shape.h:
/// centred, along its axes) is placed in the link frame by the shape pose
/// (shape_pos, shape_quat) when has_shape_pose is 1; when it is 0 (e.g. a
/// zero-initialised link) the shape sits at `com` with the link frame's axes.
/// The world pose of a link's shape is the link frame composed with that
/// pose: x = o_i + R_i shape_pos, orientation R_i R(shape_quat).
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
/// (the Jdot l' terms of formulation.md §2's k):
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
/// Ownership: a cp_chain owns its name, its joints array and the joint and
/// link names (cp_chain_free releases them). Kinematic results go into a
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
  cp_link link;
} cp_joint;

typedef struct cp_chain {
  char *name;             ///< manipulator name (owned)
  double base_pos[3];     ///< fixed base frame in the world
  double base_quat[4];
  int n;                  ///< number of joints (= links), >= 1
  cp_joint *joints;       ///< [n] (owned)
} cp_chain;

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

/// Forward kinematics and velocities at the joints' current position and
/// velocity: fills s[0..n-1].
void cp_chain_kinematics(const cp_chain *c, cp_link_state *s);

/// Velocity of the point p (world) fixed on link k: v_k + w_k x (p - o_k).
void cp_chain_point_velocity(const cp_link_state *s, int k, const double *p,
                             double *vel);

/// Linear Jacobian of the point p (world) fixed on link k: J [3*n],
/// column-major 3 x n (column i at J + 3 i); columns i > k are zero.
void cp_chain_point_jacobian(const cp_chain *c, const cp_link_state *s, int k,
                             const double *p, double *J);

/// Angular Jacobian of link k: w_k = Jw l'; Jw [3*n] column-major 3 x n.
void cp_chain_angular_jacobian(const cp_chain *c, const cp_link_state *s,
                               int k, double *Jw);

/// Velocity-product acceleration Jdot_k(p) l' of the point p fixed on link k.
void cp_chain_point_bias(const cp_link_state *s, int k, const double *p,
                         double *acc);

/// Joint-space mass matrix by CRBA: M [n*n], column-major, symmetric.
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
