/// \file contact/problem.h
/// The contact problem of docs/math.md §1-§4: given a system's state
/// (models/system.h: H, f, G, k, the sliding/rolling split), predict the
/// contact forces, contact accelerations, body and joint accelerations and
/// the efforts of acceleration-driven joints, with the LCP deciding which
/// contacts keep rolling, start sliding, keep sliding or break.
///
/// Steps: A, b by Cholesky (contact/dynamics.h); the pyramid LCP
/// (contact/pyramid.h) or the polygonal cone LCP (contact/cone.h), solved by
/// the chosen solver (contact/solve.h); forces c from z; a = A c + b;
/// u' = H^-1 (f + G c) with driven joints moved across; each contact's
/// outcome. This is the one module that knows both a contact set and an LCP.
///
/// Outcomes, with tol_a = rel_tol max(1, |b|_inf) (accelerations):
///   breaking  a_n > tol_a (then c = 0 by complementarity);
///   sliding   a sliding contact that does not break, or a rolling contact
///             whose tangential acceleration |a_tan| > tol_a;
///   rolling   a rolling contact with a = 0 (to tol_a).
///
/// Cone model: polygons of k = cone_k0, 2 cone_k0, ... edges until the
/// largest relative violation of the quadratic cone by a rolling contact's
/// force is <= cone_tol, or k reaches cone_kmax (then the result says so).
///
/// Soft-finger contacts (formulation §4, paper §2.5; options.mu_torsion):
/// contact j also transmits a moment c_tau,j n_j about its normal (on a; b
/// gets the negative), with |c_tau| <= mu_tau c_n. Contact space gains one
/// row per soft finger: the column Gtor_j of models/system.h (n_j in a's
/// angular rows, -n_j in b's, the links' angular Jacobians), so that
///     spin_j = Gtor_j^T u,   spin'_j = Gtor_j^T u' + ktor_j,
/// and with G~ = [G  Gtor_soft], k~ = [k; ktor_soft] (E1) becomes
/// H u' = f + G~ c~ and a~ = A~ c~ + b~, A~ = G~^T H^-1 G~,
/// b~ = G~^T H^-1 f + k~ (same Cholesky route; in the arrays each soft
/// finger's row is padded by two zero rows so that contact/dynamics.h sees
/// whole "contacts": see tor_row below). The torsional law is the pyramid's,
/// one more component:
///   spinning (|spin_j| > sys->tol, read as rad/s):
///       c_tau = -dtau c_n,   dtau = mu_tau sign(spin_j)          (like S)
///   not spinning: two more unknowns and complements, exactly like t and o,
///       z: s+_tau, a-_tau      w: a+_tau, s-_tau
///       c_tau = s+_tau - mu_tau c_n,  a_tau = a+_tau - a-_tau,
///       s-_tau = 2 mu_tau c_n - s+_tau.
/// A soft finger with mu_tau = 0 is "spinning" with dtau = 0 (c_tau = 0;
/// the two slacks would pin each other, as for frictionless contacts).
/// The LCP is then assembled through cp_friction_map (below), which works
/// for the pyramid and for the cone polygons alike; problems WITHOUT soft
/// fingers are built exactly as before (cp_pyramid_build / cp_cone_build).
/// outcome[] stays the translational verdict; torsion[] and spin_accel[]
/// report the torsional part. Diagnostics then refer to the augmented
/// space: rank of G~ (its real columns, 3 nc + soft fingers), A~ positive
/// definite, and Proposition 3 by the same perturbation argument: B~ gains
/// the non-spinning torsion rows, the spinning ones' columns perturb it like
/// the sliding t, o columns, and within_friction_bound tests
///     max_S mu (delta_t + delta_o) + max_spinning mu_tau delta_tau
///         < lambda_min(B~)
/// (friction_bound stays lambda_min(B~) / (delta_t + delta_o)).
#ifndef CP_CONTACT_PROBLEM_H
#define CP_CONTACT_PROBLEM_H

#include "contact/dynamics.h"
#include "contact/pyramid.h"
#include "contact/solve.h"
#include "models/system.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cp_friction_model {
  CP_FRICTION_PYRAMID = 0, ///< the paper's four-sided pyramid (default)
  CP_FRICTION_CONE         ///< refined polygons approaching the Coulomb cone
} cp_friction_model;

typedef struct cp_problem_options {
  cp_solve_options solve;     ///< solver choice and options (default auto)
  cp_friction_model friction; ///< default pyramid
  int cone_k0;                ///< first polygon, default 8
  int cone_kmax;              ///< cap, default 256
  double cone_tol;            ///< accepted relative cone violation, 1e-3
  double rel_tol;             ///< outcome tolerance, default 1e-6
  int check_unique;           ///< certify only: decide uniqueness of u'
  /// [n_c] soft-finger coefficients mu_tau >= 0 of the system's contacts,
  /// a negative entry for an ordinary (three-component) contact; NULL: no
  /// soft fingers. Borrowed. (cp_system does not carry the scene contacts'
  /// has_torsion / mu_torsion: fill this with cp_problem_torsion_from_scene.)
  const double *mu_torsion;
} cp_problem_options;

cp_problem_options cp_problem_defaults(void);

typedef enum cp_outcome {
  CP_OUTCOME_ROLLING = 0,
  CP_OUTCOME_SLIDING,
  CP_OUTCOME_BREAKING
} cp_outcome;

/// "rolling", "sliding", "breaking".
const char *cp_outcome_name(cp_outcome o);

/// Everything a solve reports. Arrays are owned (cp_problem_result_free).
typedef struct cp_problem_result {
  cp_lcp_info info;      ///< status, solver, iterations, starts, reason
  int lcp_size;          ///< size of the (last) LCP solved
  int nu, nc;
  double *force;         ///< [3nc] (n, t, o) per contact, on body a
  double *accel;         ///< [3nc] relative acceleration (n, t, o)
  double *udot;          ///< [nu] generalised acceleration
  double *effort;        ///< [nu] joint rows: driven joints' efforts found
  cp_outcome *outcome;   ///< [nc]
  cp_contact_diag diag;
  int cone_edges;        ///< cone model: k used (0 for the pyramid)
  double cone_violation; ///< cone model: largest relative violation
  int unique_decided;    ///< check_unique: 1 when uniqueness was decided
  int unique;            ///< check_unique: 1 when every solution has this u'
  double *udot_other;    ///< [nu] check_unique: a different u' (or NULL)
  unsigned char *soft;   ///< [nc] 1: soft-finger contact
  double *torsion;       ///< [nc] c_tau, the moment about n on a (soft only,
                         ///< else 0)
  double *spin_accel;    ///< [nc] relative spin acceleration
                         ///< n.(dw_a - dw_b) + ktor (soft only, else 0)
} cp_problem_result;

/// Solves the contact problem of sys. Returns the LCP status (also in
/// res->info.status); when not CP_LCP_SOLVED the arrays hold no answer.
/// CP_LCP_NUMERICAL with reason when H is not positive definite.
/// The pyramid LCP's per-contact data of a system (pc [sys->n_c]): mu, the
/// sliding/rolling split, d = mu v_tan / |v_tan| for sliding contacts. A
/// frictionless contact is modelled as "sliding" with d = 0, so it keeps only
/// c_n (the pyramid's four slacks would pin s+ = s- = 0 and leave no strictly
/// feasible point). The one place that turns a cp_system into pyramid input.
void cp_problem_pyramid_contacts(const cp_system *sys, cp_pyramid_contact *pc);

cp_lcp_status cp_problem_solve(const cp_system *sys,
                               const cp_problem_options *opt,
                               cp_problem_result *res);

void cp_problem_result_free(cp_problem_result *res);

/// Fills mu_torsion [scene->n_contacts] from the scene's contact list (the
/// contacts of a cp_system built from it, in the same order): mu_torsion of
/// a contact with has_torsion, -1 otherwise. Returns the number of
/// soft-finger contacts.
int cp_problem_torsion_from_scene(const cp_scene *scene, double *mu_torsion);

/// Torsional data of one contact for cp_friction_map.
typedef struct cp_torsion_contact {
  int soft;       ///< 1: soft finger (has a torsion row), 0: ordinary
  double mu;      ///< mu_tau >= 0
  int spinning;   ///< 1: c_tau = -d c_n (no unknowns); 0: the slack pair
  double d;       ///< spinning: mu_tau sign(spin) (0 when mu_tau = 0)
} cp_torsion_contact;

/// A friction LCP (pyramid, or cone with k edges) with soft-finger rows,
/// written as three linear maps of the contact-space quantities:
///
///     c~ = C z,     w = R a~ + E z,     a~ = A~ c~ + b~,
///     so  M = R A~ C + E,   q = R b~.                              (F1)
///
/// Contact space (size mc = 3 (nc + nsoft)): rows 3j..3j+2 the (n, t, o) of
/// contact j, then for the s-th soft finger (in contact order) a block of
/// three rows 3 (nc + s) + {0, 1, 2}: its torsion and two zero pads;
/// tor_row[j] = 3 (nc + s) (-1 for ordinary contacts). The translational
/// maps C_T, R_T, E_T are read off the translational builder by linearity
/// (cp_pyramid_build / cp_cone_build with A = 0 give M = E_T, q = R_T b;
/// cp_pyramid_forces / cp_cone_forces of unit vectors give C_T), so the
/// torsion rows extend either model without touching it:
///   z = [z_T; s+_tau (Q); a-_tau (Q)]  (Q: soft, not spinning; nq of them)
///   C:  translational rows C_T; torsion row of j:
///           -d_j (C_T)_{3j,:}                      (spinning)
///           -mu_j (C_T)_{3j,:} + e_{s+_tau,j}      (Q)
///   R:  R_T on the translational columns; row a+_tau,j = e_{tor_row[j]}^T;
///       rows s-_tau zero;
///   E:  E_T; row a+_tau,j: +1 at a-_tau,j; row s-_tau,j:
///       2 mu_j (C_T)_{3j,:} - e_{s+_tau,j}.
/// Sizes: mt translational LCP size, mz = mt + 2 nq. C [mc*mz], R [mz*mc],
/// E [mz*mz], column-major. Owned (cp_friction_map_free).
typedef struct cp_friction_map {
  int nc, nsoft, mc, mt, nq, mz;
  int *tor_row;   ///< [nc]
  double *C, *R, *E;
} cp_friction_map;

/// Builds the maps for the layout/contacts (cone != 0: the k-gon model) and
/// the torsional data tc [nc] (NULL: no soft fingers). Returns 0 or -2
/// (memory; *fm left empty).
int cp_friction_map_build(const cp_pyramid_layout *lay,
                          const cp_pyramid_contact *pc, int cone, int k,
                          const cp_torsion_contact *tc, cp_friction_map *fm);

void cp_friction_map_free(cp_friction_map *fm);

/// M = R A C + E and q = R b (F1) for a contact-space A [mc*mc], b [mc].
/// M [mz*mz], q [mz]. Returns 0 or -2 (memory).
int cp_friction_map_lcp(const cp_friction_map *fm, const double *A,
                        const double *b, double *M, double *q);

#ifdef __cplusplus
}
#endif
#endif
