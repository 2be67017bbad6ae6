/* Siconos frictional-contact problems as pyramid LCPs (issue 24's corpus).
 *
 * Input: a Siconos Numerics FrictionContactProblem written as text
 * (frictionContact_printInFile: dimension d (2 or 3), number of contacts nc,
 * the Delassus matrix W [d nc x d nc] as a NumericsMatrix in dense (0) or
 * sparse-block (1) storage, the free velocity q [d nc], the friction
 * coefficients mu [nc]). The problem: u = W r + q, r_j in the friction cone
 * of contact j, u_j its velocity in the frame (n, t[, o]).
 *
 * Output: the velocity-level pyramid LCP (Stewart-Trinkle / Anitescu-Potra
 * form) with the friction set of contact/pyramid.c (docs/math.md §3): the
 * box |r_t| <= mu r_n, |r_o| <= mu r_n, spanned by the four diagonal
 * directions D = (1,1), (-1,1), (-1,-1), (1,-1) of the (t, o) plane (in 2D:
 * the two directions +t, -t). Unknowns z, in blocks over the contacts
 * (normals first, as contact/pyramid.c orders them):
 *
 *   r_n [nc] | beta_1 [nc] | ... | beta_K [nc] | lambda [nc]    (K = 4 or 2)
 *
 * complements w:
 *
 *   u_n = (W r + q)_n                       >= 0  _|_ r_n
 *   D_k . u_T + lambda                      >= 0  _|_ beta_k
 *   mu r_n - sum_k beta_k                   >= 0  _|_ lambda
 *
 * with r_T = sum_k beta_k D_k. Any solution gives forces in the box and
 * velocities that obey the box's maximum-dissipation law, which is the law
 * of contact/pyramid.c applied to velocities: each tangential component is
 * at its bound against its own slip, or inside and not slipping. n = 6 nc
 * (3D) or 4 nc (2D).
 *
 * Experiments/tests code: parses memory buffers, no file I/O. */
#ifndef CP_EXPERIMENTS_FCCONV_H
#define CP_EXPERIMENTS_FCCONV_H

#include <stddef.h>
#include "contact/lcp.h"

typedef struct fc_problem {
  int d;       /* 2 or 3 */
  int nc;      /* contacts */
  double *W;   /* [N*N] column-major, N = d nc */
  double *q;   /* [N] */
  double *mu;  /* [nc] */
} fc_problem;

/* Parses the text form. Returns 0, or -1 with a message in err (naming the
 * line and what was expected). */
int fc_parse(const char *text, size_t len, fc_problem *out, char *err,
             size_t errlen);
void fc_free(fc_problem *p);

/* Friction directions per contact (4 in 3D, 2 in 2D) and LCP size. */
int fc_ndir(const fc_problem *p);
int fc_lcp_size(const fc_problem *p);

/* Builds the pyramid LCP above. Returns 0, or -1 when out of memory. */
int fc_to_lcp(const fc_problem *p, cp_lcp *out);

/* Contact forces r [N] and velocities u = W r + q [N] of an LCP answer z. */
void fc_forces(const fc_problem *p, const double *z, double *r, double *u);

/* Independent check of an answer in contact space: for every contact,
 * r_n >= 0, u_n >= 0, r_n u_n = 0; |r_t|, |r_o| <= mu r_n; a tangential
 * component strictly inside its bound leaves that velocity component zero,
 * one at its bound opposes its velocity component. Normwise: forces are
 * measured against |r|_inf, velocities against max(|q|_inf, |W r|_inf).
 * Returns the worst violation in those units (0: exact; a complementarity
 * violation counts as the smaller of the two factors), and the contact where
 * it occurs in *where. */
double fc_law_violation(const fc_problem *p, const double *r, const double *u,
                        int *where);

#endif
