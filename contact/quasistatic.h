/// \file contact/quasistatic.h
/// The quasistatic contact problem (docs/math.md §4, last paragraph; paper
/// §2.5 and its reference [22]): inertia dropped, the free objects stay in
/// force balance while the manipulators move kinematically with their given
/// joint rates l' (the scene's joint "velocity"); the unknowns are the
/// objects' twists and the contact forces, and the joint efforts follow.
///
/// Notation as in contact/problem.h: contact space c~ = [c (3 per contact);
/// c_tau (one row, padded to three, per soft finger)], G~ = [G  Gtor_soft]
/// (n_u x mc), split by rows into the objects' G_O (6 n_obj rows) and the
/// joints' G_L (n_l rows); u = [v; l'] with v the object twists
/// (v_i, w_i: centre-of-mass velocity and angular velocity, world frame).
///
///   (Q1) G_O c~ + f_O = 0           force balance, f_O = [m_i g; 0]
///                                   (every inertial term dropped,
///                                   the gyroscopic one included);
///   (Q2) nu = G_O^T v + G_L^T l'    relative contact velocities (n, t, o per
///                                   contact; the relative spin per soft
///                                   finger): nu = G~^T u;
///   (Q3) the friction LCP of contact/problem.h at the VELOCITY level: every
///        contact is treated as rolling (no a-priori sliding set, since the
///        velocities are the unknowns; frictionless contacts keep only c_n,
///        soft fingers with mu_tau = 0 only c_n, c_t, c_o), i.e. in the
///        linear maps of cp_friction_map
///            c~ = C z,   w = R nu + E z,   z >= 0, w >= 0, z^T w = 0,
///        with z = [c_n; s+_t; s+_o; nu-_t; nu-_o; s+_tau; nu-_tau];
///        a sliding contact's friction opposes each tangential velocity
///        component at full magnitude (the pyramid's law);
///   (Q4) tau = g_man(l) - G_L c~    the efforts the joints need (joint rows
///                                   of (E1) with M_man l'' and h_man dropped).
///
/// (Q1)-(Q3) is a mixed LCP: v is free and (Q1) is an equation whose
/// multiplier is v. As a standard LCP (L1) v = v+ - v-, v+/- >= 0, and (Q1)
/// becomes the complementary pair  v+ _|_ -(G_O C z + f_O) >= 0,
/// v- _|_ (G_O C z + f_O) >= 0 (both signs >= 0 force the equation; a
/// solution of the mixed problem gives one of this with v+/- = max(+-v, 0)).
/// Size N = 12 n_obj + mz, unknowns [v+; v-; z]:
///
///     M = [ 0          0          -G_O C ]      q = [ -f_O         ]
///         [ 0          0           G_O C ]          [  f_O         ]   (Q5)
///         [ R G_O^T   -R G_O^T     E     ]          [  R G_L^T l'  ]
///
/// Which solvers apply: frictionless, R = C^T and E = 0, so M is
/// skew-symmetric -- positive semidefinite, the LCP of a linear program
/// (minimise -f_O^T v subject to non-penetration: the objects move to lose
/// potential energy as fast as the kinematic fingers allow) -- and Lemke
/// either solves it or its secondary ray proves that no quasistatic motion
/// exists. With friction R != C^T and M is not copositive in general (the
/// same loss of monotonicity as in the dynamic problem), so Lemke may end
/// on a secondary ray without proof; and FIP never applies: the paired rows
/// of (Q1) cannot both be strictly positive, so its phase I reports "no
/// strictly feasible point" by construction. The default (auto) therefore
/// runs Lemke, then certify (the MILP), which finds a solution or proves
/// that none exists (a jammed push: the fingers' motion is incompatible
/// with any motion of the objects). FIP runs only when asked for by name.
///
/// Outcomes at the velocity level, tol_v = rel_tol max(1, |q|_inf) (the
/// accuracy of the accepted LCP solution): breaking nu_n > tol_v; sliding
/// |nu_tan| > tol_v; rolling (sticking) otherwise.
///
/// The friction model is always the pyramid (opt->friction must be
/// CP_FRICTION_PYRAMID); scene body velocities are ignored (the twists are
/// unknowns); acceleration-driven joints are kinematic like the others.
#ifndef CP_CONTACT_QUASISTATIC_H
#define CP_CONTACT_QUASISTATIC_H

#include "contact/problem.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Everything a quasistatic solve reports. Arrays are owned
/// (cp_quasistatic_result_free); they hold an answer only when solved.
typedef struct cp_quasistatic_result {
  cp_lcp_info info;          ///< status, solver, iterations, starts, reason
  int lcp_size;              ///< N = 12 n_obj + mz
  int nu, nc, n_obj, n_l;
  double *velocity;          ///< [nu] u: object twists found (v_i, w_i),
                             ///< then the given joint rates
  double *force;             ///< [3nc] (n, t, o) per contact, on body a
  double *contact_velocity;  ///< [3nc] relative velocity (n, t, o) = G^T u
  unsigned char *soft;       ///< [nc] 1: soft-finger contact
  double *torsion;           ///< [nc] c_tau (soft only, else 0)
  double *spin;              ///< [nc] relative spin Gtor^T u (soft only)
  double *effort;            ///< [n_l] joint efforts needed (Q4)
  cp_outcome *outcome;       ///< [nc] at the velocity level
  int jacobian_rank;         ///< numerical rank of G_O C: the object
                             ///< wrenches the contact model can exert
                             ///< (frictionless contacts: normals only)
  int full_row_rank;         ///< rank == 6 n_obj; if not, some object
                             ///< motion is resisted by no contact force
                             ///< and the twists are not unique
  double balance_residual;   ///< max |G_O c~ + f_O| of the answer
} cp_quasistatic_result;

/// Solves the quasistatic problem of sys (joint rates from sys->u; soft
/// fingers from opt->mu_torsion; opt->solve, opt->rel_tol). Returns the
/// status (also res->info.status): CP_LCP_SOLVED, CP_LCP_INFEASIBLE when
/// certify proved that no quasistatic motion exists, another status when
/// undecided; CP_LCP_NUMERICAL with a reason for the cone model.
cp_lcp_status cp_problem_quasistatic(const cp_system *sys,
                                     const cp_problem_options *opt,
                                     cp_quasistatic_result *res);

void cp_quasistatic_result_free(cp_quasistatic_result *res);

#ifdef __cplusplus
}
#endif
#endif
