/// \file contact/problem.h
/// The contact problem of formulation.md §1-§4: given a system's state
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
#ifndef CP_CONTACT_PROBLEM_H
#define CP_CONTACT_PROBLEM_H

#include "contact/dynamics.h"
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
} cp_problem_result;

/// Solves the contact problem of sys. Returns the LCP status (also in
/// res->info.status); when not CP_LCP_SOLVED the arrays hold no answer.
/// CP_LCP_NUMERICAL with reason when H is not positive definite.
cp_lcp_status cp_problem_solve(const cp_system *sys,
                               const cp_problem_options *opt,
                               cp_problem_result *res);

void cp_problem_result_free(cp_problem_result *res);

#ifdef __cplusplus
}
#endif
#endif
