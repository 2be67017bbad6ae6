/// \file models/system.h
/// The whole-system quantities of docs/math.md §1-§2 for a scene and its
/// contact list, everything the contact layer needs and nothing it computes
/// (models/ never calls a solver):
///
///     H u' = f + G c                                              (E1)
///     v = G^T u,   a = G^T u' + k                                 (§2)
///
/// from which contact/ forms A = G^T H^-1 G and b = G^T H^-1 f + k
/// (paper 24-26).
///
/// Generalised coordinates, in this order (n_u = 6 n_obj + n_l rows):
///   for each FREE body i in scene order (object index i):
///       rows 6i..6i+2  v_i  (velocity of the centre of mass, world)
///       rows 6i+3..6i+5 w_i (angular velocity, world)
///   then the independent joint coordinates of every manipulator in scene
///   order, each chain's non-mimic joints in chain order (rows 6 n_obj +
///   joint_offset[m] + ...; cp_system_joint_row maps a chain joint to its
///   row). A mimic follower (models/chain.h) has no row: its rate is its
///   leader's times the multiplier, so with P the chain's n x n_dof map
///   (l' = P q'), the chain's blocks below are P^T M P, P^T (tau - g - h)
///   and J P -- the follower's inertia, gravity and contact forces act on
///   its leader's coordinate.
///
///   u = [v_1; w_1; ...; l']
///   H = blockdiag(m_i I3, I_i^w = R_i I_i R_i^T, ..., M_1(l), M_2(l), ...)
///       with M_m from CRBA (models/chain.h); symmetric positive definite.
///   f = [m_i g; -w_i x (I_i^w w_i); ...; tau - g_man(l) - h_man(l, l')]
///       where tau is the given effort of an effort-driven joint and is
///       LEFT OUT (taken as 0) for an acceleration-driven joint, whose effort
///       is an unknown of the contact problem (paper §2.5); `tau`, `qdd`,
///       `drive`, `g_man` and `h_man` are kept separately for that.
///
/// Contacts j = 0..n_c-1 in scene order, frame N_j = [n_j t_j o_j] (o = n x t),
/// n_j from b_j into a_j; contact-space row 3j is n, 3j+1 is t, 3j+2 is o
/// (the layout of contact/pyramid.h).
///
///   G (n_u x 3 n_c, column-major, leading dimension n_u): column block j is
///       [N_j; (p_j - x_a) x N_j]  in a's rows if a is a free body,
///       J_a(p_j)^T N_j            in a's chain's joint rows if a is a link,
///       minus the same for b; fixed bodies have no rows.
///   k (3 n_c): velocity-product terms of the relative acceleration,
///       k_j = N_j^T (abar_a(p_j) - abar_b(p_j)) + (w_b x N_j)^T (vel_a - vel_b)
///       with abar = w x (w x (p - x)) for a free body, Jdot(p) l' for a link,
///       0 for a fixed body; the second term is the rotation of the contact
///       frame with b (n' = w_b x n, likewise t and o). So a = G^T u' + k
///       exactly for points and frames fixed on the bodies.
///   v = G^T u (3 n_c): relative velocity of a with respect to b at p_j in the
///       contact frame: (normal, t, o).
///   sliding[j]: 1 when sqrt(v_t^2 + v_o^2) > tol (set S), else 0 (set R);
///   d[2j], d[2j+1]: v_tan / |v_tan| for sliding contacts (unit, WITHOUT mu;
///       contact/pyramid.h's d is mu times this), 0 for rolling ones.
///   Soft-finger extras (formulation §4): Gtor (n_u x n_c) and ktor (n_c) give
///       the relative angular velocity about the normal, n.(w_a - w_b) =
///       Gtor^T u, and its velocity-product rate (n.(dw_a - dw_b) +
///       (w_b x n).(w_a - w_b)); used only by contacts with has_torsion.
///
/// Ownership: a cp_system from cp_system_build owns its arrays;
/// cp_system_free releases them. One from cp_system_build_ws borrows them
/// from the caller's cp_system_ws (valid until the workspace's next build or
/// its cp_system_ws_free; cp_system_free then only zeroes the struct). Either
/// way it copies what it needs from the scene and does not point into it.
#ifndef CP_MODELS_SYSTEM_H
#define CP_MODELS_SYSTEM_H

#include "models/chain.h"
#include "models/error.h"
#include "models/scene.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cp_system {
  int n_obj;            ///< free bodies
  int n_l;              ///< joints over all manipulators
  int n_u;              ///< 6 n_obj + n_l
  int n_c;              ///< contacts
  double tol;           ///< velocity tolerance used for sliding / rolling
  int *obj_body;        ///< [n_obj] scene body index of object i
  int *body_obj;        ///< [n_bodies] object index of body i, -1 if fixed
  int *joint_manip;     ///< [n_l] manipulator of joint row r
  int *joint_index;     ///< [n_l] index of joint row r within its chain
  int *joint_offset;    ///< [n_manips] first joint row of each chain (0-based
                        ///< within the joint block: add 6 n_obj)
  int *chain_row;       ///< [sum of chain lengths] row (within the joint
                        ///< block) moving each chain joint: its own, or its
                        ///< leader's for a mimic follower; chain m's joints
                        ///< start at chain_row_offset[m]
  double *chain_row_scale; ///< [same] 1, or the follower's multiplier
  int *chain_row_offset;///< [n_manips]
  double *u;            ///< [n_u]
  double *H;            ///< [n_u*n_u] column-major, symmetric
  double *f;            ///< [n_u]
  cp_joint_drive *drive;///< [n_l]
  double *tau;          ///< [n_l] given effort (effort-driven), else 0
  double *qdd;          ///< [n_l] given acceleration (acceleration-driven), else 0
  double *g_man;        ///< [n_l] gravity efforts g_man(l)
  double *h_man;        ///< [n_l] Coriolis/centrifugal efforts h_man(l, l')
  double *G;            ///< [n_u * 3 n_c] column-major
  double *k;            ///< [3 n_c]
  double *v;            ///< [3 n_c] = G^T u
  double *Gtor;         ///< [n_u * n_c] column-major
  double *ktor;         ///< [n_c]
  double *frame;        ///< [9 n_c] N_j column-major: n (0..2), t, o
  double *point;        ///< [3 n_c] p_j
  double *mu;           ///< [n_c] resolved friction coefficients
  int *sliding;         ///< [n_c] 1: S, 0: R
  double *d;            ///< [2 n_c] unit sliding direction (t, o); 0 if rolling
  void *own;            ///< the allocation holding the arrays, freed by
                        ///< cp_system_free; NULL when a cp_system_ws has them
} cp_system;

/// Storage kept between cp_system_build_ws calls (a simulator builds a
/// system every step): the block of the system's arrays and the build's
/// scratch, grown as needed and never shrunk. Ownership: the caller owns
/// it; zero-initialise it ({0}), use it from one thread at a time, release
/// it with cp_system_ws_free (after the last use of a system built in it).
typedef struct cp_system_ws {
  void *block;          ///< the arrays of the last system built
  size_t block_size;    ///< bytes
  void *scratch;        ///< link states, Jacobians, chain blocks
  size_t scratch_size;  ///< bytes
  int layout_key[6];    ///< the sizes `layout` was made for
  cp_system layout;     ///< where each array lies in block for those sizes
                        ///< (H NULL: none yet); a step's sizes rarely change
  /// Large systems: H, G and Gtor lie at the block's start, and the first
  /// zero_end doubles of the block are zero except the ranges the last
  /// build wrote (dirty: n_dirty pairs of offset, length in doubles); the
  /// next build clears those instead of the whole n_u (n_u + 4 n_c)
  /// doubles (10 MB at 100 boxes). 0: nothing known (the block is cleared
  /// whole). So a system's arrays are read, never written, by its users
  /// (a caller that writes into the block sets zero_end to 0).
  size_t zero_end;
  size_t *dirty;
  size_t n_dirty, dirty_cap;
  /// Systems of free bodies only (more than one; no chain), small or
  /// large, keep their zeros with no record of ranges (n_dirty is then
  /// (size_t)-1; a large one with other sizes is cleared on these rows
  /// and its bodies' blocks, in the last build's layout): H is
  /// their blocks, written whole, and a contact column is cleared only
  /// where its rows moved since the last build, whose rows per contact
  /// (4 each: two ranges) are in keep_rng, for keep_nu dofs and keep_nc
  /// contacts.
  int *keep_rng;
  int keep_cap, keep_nu, keep_nc;
} cp_system_ws;

/// Builds the system of the scene's current state and contact list. Returns 0,
/// or -1 (out of memory) with *err filled and *sys zeroed.
int cp_system_build(const cp_scene *scene, cp_system *sys, cp_error *err);

/// cp_system_build with the arrays in ws's block instead of a new
/// allocation: the same numbers, bit for bit. *sys borrows the block (see
/// Ownership above); building again with ws invalidates the previous
/// system. Returns 0, or -1 (out of memory) with *err filled and *sys zeroed.
int cp_system_build_ws(const cp_scene *scene, cp_system_ws *ws,
                       cp_system *sys, cp_error *err);

/// Sizes ws for builds of the scene's bodies and chains with up to
/// n_contacts contacts (the block, the chains' scratch, a large system's
/// record of its writes), so that such builds take no new memory, and
/// writes every page of it once (models/bigbuf.h's cp_bigbuf_touch): a
/// simulator does it where it is created, so the page faults come there
/// and not in its steps. What is already large enough is kept. Builds give
/// the same systems with or without it. Returns 0, -1 for n_contacts < 0,
/// -2 when out of memory (ws stays valid for cp_system_ws_free).
int cp_system_ws_reserve(const cp_scene *scene, int n_contacts, cp_system_ws *ws);

/// Releases ws's storage and zeroes it. Safe on a zeroed workspace.
void cp_system_ws_free(cp_system_ws *ws);

/// Releases the arrays *sys owns (none when built with cp_system_build_ws)
/// and zeroes it. Safe on a zeroed struct.
void cp_system_free(cp_system *sys);

/// Row in u of the coordinate that moves joint k (chain index) of
/// manipulator m: 6 n_obj + joint_offset[m] + (k's independent index); for
/// a mimic follower, its leader's row. Serial chains without mimics:
/// 6 n_obj + joint_offset[m] + k.
int cp_system_joint_row(const cp_system *sys, int m, int k);

#ifdef __cplusplus
}
#endif
#endif
