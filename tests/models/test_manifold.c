// Contact manifolds (models/manifold.h): pair identity and the reduction of
// a pair's points, on hand-worked point sets.
#include <criterion/criterion.h>
#include <string.h>

#include "models/manifold.h"

static const cp_ref box = {0, -1, -1}, table = {1, -1, -1}, tip = {-1, 0, 2},
                    tip3 = {-1, 0, 3};

static cp_contact pt(cp_ref a, cp_ref b, double x, double y, double z) {
  cp_contact c;
  memset(&c, 0, sizeof c);
  c.a = a;
  c.b = b;
  c.p[0] = x, c.p[1] = y, c.p[2] = z;
  c.n[2] = 1;
  return c;
}

Test(manifold, same_pair) {
  cp_contact a = pt(box, table, 0, 0, 0), b = pt(box, table, 1, 2, 3);
  cr_assert(cp_contact_same_pair(&a, &b));
  cp_contact c = pt(table, box, 0, 0, 0); // sides swapped: another pair
  cr_assert(!cp_contact_same_pair(&a, &c));
  cp_contact d = pt(tip, box, 0, 0, 0), e = pt(tip3, box, 0, 0, 0);
  cr_assert(!cp_contact_same_pair(&d, &e)); // links differ only in link index
  cp_contact f = pt(tip, box, 5, 5, 5);
  cr_assert(cp_contact_same_pair(&d, &f));
}

// p on the segment a-b = [0, 1] x {0} x {0}: distance |p_y| (p_z = 0).
Test(manifold, between) {
  const double a[3] = {0, 0, 0}, b[3] = {1, 0, 0};
  const double mid[3] = {0.5, 0, 0}, near[3] = {0.25, 0.5e-7, 0},
               off[3] = {0.25, 2e-7, 0}, end[3] = {1, 0, 0},
               beyond[3] = {1.5, 0, 0}, before[3] = {-1e-9, 0, 0};
  cr_assert(cp_manifold_between(mid, a, b, 1e-7));
  cr_assert(cp_manifold_between(near, a, b, 1e-7));
  cr_assert(!cp_manifold_between(off, a, b, 1e-7));
  cr_assert(cp_manifold_between(off, a, b, 3e-7));
  cr_assert(!cp_manifold_between(end, a, b, 1e-7)); // ends are not between
  cr_assert(!cp_manifold_between(a, a, b, 1e-7));
  cr_assert(!cp_manifold_between(beyond, a, b, 1e-7));
  cr_assert(!cp_manifold_between(before, a, b, 1e-7));
  cr_assert(!cp_manifold_between(mid, a, a, 1e-7)); // degenerate segment
}

// A box face on a table: four corners, the midpoint of an edge and the
// face's centre (on the diagonal of corners 0 and 3). Only the corners
// stay, in order; the points of the next pairs are reduced on their own
// (never compared with the box's).
Test(manifold, reduce_face) {
  cp_contact c[8] = {
      pt(box, table, -0.1, -0.1, 0), pt(box, table, 0.1, -0.1, 0),
      pt(box, table, 0.0, -0.1, 0), // midpoint of corners 0 and 1
      pt(box, table, 0.1, 0.1, 0),
      pt(box, table, 0.0, 0.0, 0), // centre: between corners 0 and 3
      pt(box, table, -0.1, 0.1, 0),
      pt(tip, box, 0.0, -0.1, 0.05), // another pair: kept
      pt(tip, table, 0.0, 0.0, 0.0), // a third pair: kept
  };
  int n = cp_manifold_reduce(c, 8, CP_MANIFOLD_MERGE_TOL);
  cr_assert_eq(n, 6);
  const double want[6][2] = {{-0.1, -0.1}, {0.1, -0.1}, {0.1, 0.1},
                             {-0.1, 0.1}, {0.0, -0.1}, {0.0, 0.0}};
  for (int i = 0; i < 6; ++i) {
    cr_assert_eq(c[i].p[0], want[i][0], "point %d", i);
    cr_assert_eq(c[i].p[1], want[i][1], "point %d", i);
  }
  cr_assert(cp_contact_same_pair(&c[4], &(cp_contact){.a = tip, .b = box}));
  cr_assert(cp_contact_same_pair(&c[5], &(cp_contact){.a = tip, .b = table}));
}

// A point off the segment by more than tol stays: a triangle and a point
// 2 tol inside its edge 0-1; at 0.5 tol it goes.
Test(manifold, reduce_keeps_off_segment) {
  const double t = CP_MANIFOLD_MERGE_TOL;
  cp_contact c[4] = {pt(box, table, 0, 0, 0), pt(box, table, 1, 0, 0),
                     pt(box, table, 0, 1, 0), pt(box, table, 0.5, 2 * t, 0)};
  cr_assert_eq(cp_manifold_reduce(c, 4, t), 4);
  cr_assert_eq(c[3].p[1], 2 * t);
  c[3].p[1] = 0.5 * t;
  cr_assert_eq(cp_manifold_reduce(c, 4, t), 3);
  cr_assert_eq(c[2].p[1], 1);
}

// A pair of two points 5e-8 m apart: the second is a near-duplicate of the
// first (there is no segment for either to lie on) and goes.
Test(manifold, reduce_near_duplicate) {
  cp_contact c[3] = {pt(box, table, 0.2, 0.3, 0), pt(box, table, 0.2 + 5e-8, 0.3, 0),
                     pt(tip, table, 0.2 + 5e-8, 0.3, 0)};
  cr_assert_eq(cp_manifold_reduce(c, 3, CP_MANIFOLD_MERGE_TOL), 2);
  cr_assert_eq(c[0].p[0], 0.2);
  cr_assert(cp_contact_same_pair(&c[1], &(cp_contact){.a = tip, .b = table}));
  c[1] = pt(box, table, 0.2 + 5e-8, 0.3, 0);
  cr_assert_eq(cp_manifold_reduce(c, 2, 1e-8), 2); // 5e-8 > 1e-8: both stay
  cr_assert_eq(c[1].p[0], 0.2 + 5e-8);
}

// Two coincident points: the first stays, the second goes; with tol 0 an
// exact duplicate still goes (distance 0 <= 0) and the rest is untouched.
Test(manifold, reduce_duplicates) {
  cp_contact c[3] = {pt(box, table, 1, 1, 0), pt(box, table, 1, 1, 0),
                     pt(box, table, 2, 1, 0)};
  cr_assert_eq(cp_manifold_reduce(c, 3, 0.0), 2);
  cr_assert_eq(c[1].p[0], 2);
  cr_assert_eq(cp_manifold_reduce(c, 0, 1.0), 0);
}

// Points of a pair beyond CP_MANIFOLD_MAX_POINTS are not examined: a run of
// collinear points keeps its two ends among the first 64 (the 62 inside
// go) and every point after them.
Test(manifold, reduce_long_pair) {
  enum { N = CP_MANIFOLD_MAX_POINTS + 6 };
  cp_contact c[N];
  for (int i = 0; i < N; ++i) c[i] = pt(box, table, i == 1 ? 63.0 : i == 63 ? 1.0 : (double)i, 0, 0);
  // c[0] = 0 and c[1] = 63 are the ends of the first 64; 2..62 and 63 (at
  // 1.0) lie between them.
  int n = cp_manifold_reduce(c, N, CP_MANIFOLD_MERGE_TOL);
  cr_assert_eq(n, 2 + 6);
  cr_assert_eq(c[0].p[0], 0);
  cr_assert_eq(c[1].p[0], 63);
  for (int i = 0; i < 6; ++i) cr_assert_eq(c[2 + i].p[0], 64 + i);
}
