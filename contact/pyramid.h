/// \file contact/pyramid.h
/// The friction-pyramid LCP of docs/math.md §4 (paper eqs. 35-39, 52), built
/// from the contact-space quantities a = A c + b.
///
/// Contact-space layout: contact j owns rows/columns 3j (normal n), 3j+1
/// (tangent t), 3j+2 (tangent o) of A [3nc x 3nc, column-major] and b [3nc].
///
/// Unknowns z (size m = nS + 5 nR), in this order:
///   c_n of every contact, sliding ones first then rolling (nS + nR),
///   s+_t (R), s+_o (R), a-_t (R), a-_o (R);
/// complements w:
///   a_n (all), a+_t (R), a+_o (R), s-_t (R), s-_o (R).
/// Substitutions, j in R: c_t = s+_t - mu c_n, c_o = s+_o - mu c_n,
/// a_t = a+_t - a-_t, s-_t = 2 mu c_n - s+_t (likewise o);
/// j in S: c_t = -d_t c_n, c_o = -d_o c_n with d = mu v_tan / |v_tan|.
#ifndef CP_CONTACT_PYRAMID_H
#define CP_CONTACT_PYRAMID_H

#ifdef __cplusplus
extern "C" {
#endif

/// Per-contact data the pyramid LCP needs.
typedef struct cp_pyramid_contact {
  double mu;      ///< friction coefficient >= 0
  int sliding;    ///< 1: contact in S, 0: in R
  double d[2];    ///< sliding only: (d_t, d_o) = mu v_tan / |v_tan|
} cp_pyramid_contact;

/// Index bookkeeping of one pyramid LCP, filled by cp_pyramid_layout.
typedef struct cp_pyramid_layout {
  int nc, ns, nr, m;   ///< contacts, sliding, rolling, LCP size nS + 5 nR
  int *order;          ///< [nc] contact index of LCP normal row k (S then R)
  int *rank;           ///< [nc] position of contact j among R (-1 if sliding)
} cp_pyramid_layout;

/// Fills *lay for the given contacts. order/rank must have room for nc ints.
void cp_pyramid_layout_make(int nc, const cp_pyramid_contact *c, int *order,
                            int *rank, cp_pyramid_layout *lay);

/// Builds M [m*m column-major] and q [m] from A and b (formulation §4).
void cp_pyramid_build(const cp_pyramid_layout *lay,
                      const cp_pyramid_contact *c, const double *A,
                      const double *b, double *M, double *q);

/// Recovers the contact forces c [3nc] (n, t, o per contact) from z [m].
void cp_pyramid_forces(const cp_pyramid_layout *lay,
                       const cp_pyramid_contact *c, const double *z,
                       double *force);

#ifdef __cplusplus
}
#endif
#endif
