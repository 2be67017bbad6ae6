/// \file contact/cone.h
/// The friction-cone model (docs/math.md §4, paper §2.4) by polygons: each
/// rolling contact's friction circle is replaced by a k-gon circumscribing it,
/// in the Stewart-Trinkle form with edge multipliers beta >= 0:
///
///     c_tan = D beta,   D = [d_1 .. d_k],
///     d_i = (cos phi_i, sin phi_i) / cos(pi/k),  phi_i = pi/k + 2 pi i/k,
///
/// so that {D beta : beta >= 0, e^T beta <= mu c_n} is the k-gon whose sides
/// touch the circle of radius mu c_n (k = 4 is exactly the pyramid
/// |c_t|, |c_o| <= mu c_n). Complementarity, rolling contact j:
///
///     a_n >= 0                    _|_  c_n >= 0
///     lambda e + D^T a_tan >= 0   _|_  beta >= 0       (k rows)
///     mu c_n - e^T beta >= 0      _|_  lambda >= 0
///
/// (lambda is the magnitude of the tangential acceleration once the contact
/// slides: friction then opposes it, maximal dissipation over the polygon).
/// Sliding contacts are as in the pyramid LCP: c_tan = -d c_n.
///
/// Unknowns z (size m = nc + nr (k + 1)): c_n of all contacts (sliding then
/// rolling, as cp_pyramid_layout orders them), then beta of each rolling
/// contact (k each, contact-major), then lambda of each rolling contact.
/// Contact space layout of A and b as in contact/pyramid.h.
#ifndef CP_CONTACT_CONE_H
#define CP_CONTACT_CONE_H

#include "contact/pyramid.h"

#ifdef __cplusplus
extern "C" {
#endif

/// LCP size for k edges: nc + nr (k + 1).
int cp_cone_size(const cp_pyramid_layout *lay, int k);

/// Builds M [m*m column-major] and q [m] for a k-gon (k >= 3).
void cp_cone_build(const cp_pyramid_layout *lay, const cp_pyramid_contact *c,
                   int k, const double *A, const double *b, double *M,
                   double *q);

/// Contact forces force [3nc] (n, t, o per contact) from z [m].
void cp_cone_forces(const cp_pyramid_layout *lay, const cp_pyramid_contact *c,
                    int k, const double *z, double *force);

/// Largest relative violation of the quadratic cone over the rolling
/// contacts: max_j (|c_tan,j| - mu_j c_n,j) / max(mu_j c_n,j, scale), 0 when
/// every force is inside. `scale` guards contacts carrying (almost) no load.
double cp_cone_violation(const cp_pyramid_layout *lay,
                         const cp_pyramid_contact *c, const double *force,
                         double scale);

#ifdef __cplusplus
}
#endif
#endif
