/// \file models/manifold.h
/// Contact manifolds: the points one pair of objects touches at, as
/// models/contactgen.h lists them (a pair's points next to each other, in a
/// deterministic order). Two small things the simulator needs of them:
///
/// Pair identity. Two contacts belong to the same pair when their sides a
/// and b are the same references (body, manipulator, link: cp_ref). The
/// simulator names a contact across steps by its pair and its index within
/// the pair's list (its warm starts map LCP bases through these names).
///
/// Reduction. Within a pair, a point within tol of a point kept before it,
/// or within tol of the segment between two other points of the pair
/// (strictly between its ends), adds nothing: the polygon over which the
/// pair's forces spread is the same without it. Such points make the
/// contact LCP more degenerate, and box-box clipping produces them or not
/// depending on rounding, so that contact sets flicker between steps; they
/// are dropped. Only a pair's first CP_MANIFOLD_MAX_POINTS points are
/// examined; any beyond are kept as they are.
#ifndef CP_MODELS_MANIFOLD_H
#define CP_MODELS_MANIFOLD_H

#include "models/scene.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The simulator's reduction distance (m).
#define CP_MANIFOLD_MERGE_TOL 1e-7
/// Points of a pair that the reduction examines.
#define CP_MANIFOLD_MAX_POINTS 64

/// 1 when x and y are contacts of the same pair (same a and same b).
static inline int cp_contact_same_pair(const cp_contact *x, const cp_contact *y) {
  return x->a.body == y->a.body && x->a.manip == y->a.manip &&
         x->a.link == y->a.link && x->b.body == y->b.body &&
         x->b.manip == y->b.manip && x->b.link == y->b.link;
}

/// 1 when p lies within tol of the segment a-b, strictly between its ends
/// (its projection falls inside the open segment); 0 for a degenerate
/// segment (a = b).
int cp_manifold_between(const double p[3], const double a[3], const double b[3],
                        double tol);

/// Drops, pair by pair, the points of c[0..n) that the reduction above
/// removes, keeping the others in order (in place). Returns the new count.
int cp_manifold_reduce(cp_contact *c, int n, double tol);

#ifdef __cplusplus
}
#endif
#endif
