/// \file tests/scene_support.h
/// Shared by the contact-problem tests: solving bundled or inline scenes
/// through the real pipeline (parse, system, contact problem) and checking
/// the answer independently of the solver (Newton-Euler of every free body
/// from the scene's own data).
#ifndef CP_TESTS_SCENE_SUPPORT_H
#define CP_TESTS_SCENE_SUPPORT_H

#include "contact/problem.h"
#include "models/scene.h"
#include "models/system.h"

typedef struct cpt_solved {
  cp_scene scene;
  cp_system sys;
  cp_problem_result res;
  double *mu_tor; ///< [n_contacts] soft-finger coefficients (owned)
} cpt_solved;

/// Text of models/scenes/REL (malloc'd); asserts it can be read.
char *cpt_scene_text(const char *rel);

/// Parses, builds and solves (soft-finger coefficients taken from the
/// scene); asserts that parsing and building succeed. opt may be NULL.
void cpt_solve_text(const char *text, const cp_problem_options *opt, cpt_solved *s);

/// cpt_solve_text on models/scenes/REL.
void cpt_solve_file(const char *rel, const cp_problem_options *opt, cpt_solved *s);

void cpt_release(cpt_solved *s);

/// m a = m g + sum F and I_w alpha + w x I_w w = sum (p - x) x F + sum n c_tau
/// for every free body, from the scene (not from H or G).
void cpt_assert_newton_euler(const cpt_solved *s, double tol);

#endif
