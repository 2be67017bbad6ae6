/// \file experiments/lcpgen.h
/// Deterministic generators of test and benchmark LCPs, shared by tests/ and
/// experiments/ so that both use the same instances.
#ifndef CP_EXPERIMENTS_LCPGEN_H
#define CP_EXPERIMENTS_LCPGEN_H

#include <stdint.h>

/// Monotone LCP with a planted solution: M = B^T B + (C - C^T) with B, C
/// random n x n (entries uniform in [-1, 1]), z* >= 0 and w* >= 0 random with
/// complementary supports (each index in z*'s support with probability 1/2),
/// q = w* - M z*. M [n*n] column-major, q [n], zstar [n] (may be NULL).
void cp_gen_monotone(int n, uint64_t seed, double *M, double *q, double *zstar);

/// Size of the contact-like LCP of cp_gen_contact_like: ns + 5 (nc - ns).
int cp_gen_contact_like_size(int nc, int ns);

/// Contact-like pyramid LCP (docs/math.md §4): nb free bodies (6 dof each,
/// unit-ish random masses and inertias), nc contacts at random points with
/// random frames, G built as in formulation §2, A = G^T H^-1 G, b random
/// (gravity-like: mostly pulling contacts together), the first ns contacts
/// sliding in random directions, the rest rolling, all with friction mu; M
/// and q from contact/pyramid.h. M [m*m], q [m], m = cp_gen_contact_like_size.
void cp_gen_contact_like(int nc, int ns, int nb, double mu, uint64_t seed,
                         double *M, double *q);

/// Same instance as cp_gen_contact_like(…, seed, …) but with b perturbed by a
/// relative amount eps (a "neighbouring state": same M, new q).
void cp_gen_contact_like_perturbed(int nc, int ns, int nb, double mu,
                                   uint64_t seed, double eps, uint64_t pseed,
                                   double *M, double *q);

#endif
