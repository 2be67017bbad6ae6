// Contact generation (models/collide.h) against analytic contact points,
// normals and depths, plus the ODE conventions the wrapper relies on.
#include <criterion/criterion.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include <ode/ode.h>

#include "models/collide.h"
#include "models/manifold.h"
#include "models/vec3.h"

#define PI 3.14159265358979323846
#define EXACT 1e-12 // positions/depths that are exact up to rounding

static cp_shape box(double x, double y, double z) {
  cp_shape s = {.type = CP_SHAPE_BOX, .size = {x, y, z}};
  return s;
}
static cp_shape sphere(double r) {
  cp_shape s = {.type = CP_SHAPE_SPHERE, .radius = r};
  return s;
}
static cp_shape capsule(double r, double L) {
  cp_shape s = {.type = CP_SHAPE_CAPSULE, .radius = r, .length = L};
  return s;
}
static cp_shape cylinder(double r, double L) {
  cp_shape s = {.type = CP_SHAPE_CYLINDER, .radius = r, .length = L};
  return s;
}
static cp_shape plane(double nx, double ny, double nz, double off) {
  cp_shape s = {.type = CP_SHAPE_PLANE, .normal = {nx, ny, nz}, .offset = off};
  return s;
}
static cp_collide_object at(const cp_shape *s, double x, double y, double z,
                            const double *q) {
  cp_collide_object o = {s, {x, y, z}, {1, 0, 0, 0}};
  if (q) memcpy(o.q, q, sizeof o.q);
  return o;
}
static void quat(double *q, double ax, double ay, double az, double angle) {
  double axis[3] = {ax, ay, az};
  cp_quat_axis_angle(q, axis, angle);
}

// Collides with default options; asserts success.
static int collide(const cp_collide_object *a, const cp_collide_object *b,
                   cp_collide_contact *c) {
  cp_error err = {0};
  int n = cp_collide_pair(a, b, NULL, c, CP_COLLIDE_MAX_POINTS, &err);
  cr_assert_geq(n, 0, "cp_collide_pair failed: %s: %s", err.where, err.msg);
  return n;
}

static double dist3(const double *a, const double *b) {
  double d[3];
  cp_v3_sub(d, a, b);
  return cp_v3_norm(d);
}

// The contacts are exactly the expected points (any order), each with
// normal nrm and depth dep (tolerance tol on points and depths).
static void expect(const cp_collide_contact *c, int n, const double (*pts)[3],
                   int np, const double *nrm, double dep, double tol) {
  cr_assert_eq(n, np, "got %d contacts, expected %d", n, np);
  for (int i = 0; i < np; ++i) {
    int hits = 0;
    for (int j = 0; j < n; ++j) hits += dist3(c[j].p, pts[i]) <= tol;
    cr_assert_eq(hits, 1, "expected point (%g, %g, %g) matched %d times",
                 pts[i][0], pts[i][1], pts[i][2], hits);
  }
  for (int j = 0; j < n; ++j) {
    cr_assert_leq(dist3(c[j].n, nrm), 1e-12, "normal (%g, %g, %g)", c[j].n[0],
                  c[j].n[1], c[j].n[2]);
    cr_assert_leq(fabs(c[j].depth - dep), tol, "depth %.17g, expected %g",
                  c[j].depth, dep);
  }
}

// Same points and depths (within tol) in both sets, normals opposite
// (within ntol).
static void expect_swapped(const cp_collide_contact *c, int n,
                           const cp_collide_contact *d, int m, double tol,
                           double ntol, const char *what) {
  cr_assert_eq(n, m, "%s: %d contacts, swapped %d", what, n, m);
  for (int i = 0; i < n; ++i) {
    int j = 0;
    while (j < m && dist3(c[i].p, d[j].p) > tol) ++j;
    cr_assert_lt(j, m, "%s: point %d of (a, b) missing from (b, a)", what, i);
    double s[3];
    cp_v3_add(s, c[i].n, d[j].n);
    cr_assert_leq(cp_v3_norm(s), ntol,
                  "%s: normals not opposite: (%g %g %g) (%g %g %g)", what,
                  c[i].n[0], c[i].n[1], c[i].n[2], d[j].n[0], d[j].n[1],
                  d[j].n[2]);
    cr_assert_leq(fabs(c[i].depth - d[j].depth), tol, "%s: depths %g %g",
                  what, c[i].depth, d[j].depth);
  }
}

// Every horizontal direction u: some contact point lies at least frac r
// beyond the centre (cx, cy) along u (the support resists tipping both ways).
static void expect_support(const cp_collide_contact *c, int n, double cx,
                           double cy, double r, double frac) {
  for (int k = 0; k < 360; ++k) {
    double u0 = cos(k * PI / 180), u1 = sin(k * PI / 180), best = -INFINITY;
    for (int i = 0; i < n; ++i)
      best = fmax(best, (c[i].p[0] - cx) * u0 + (c[i].p[1] - cy) * u1);
    cr_assert_geq(best, frac * r, "direction %d deg: support %g", k, best);
  }
}

// ---------------------------------------------------------------------------
// ODE's own conventions (what collide.c assumes).

Test(collide, ode_conventions) {
  dInitODE2(0);
  dAllocateODEDataForThread(dAllocateFlagCollisionData);
  // Precision: dReal matches the configuration ODE was built with.
  if (dCheckConfiguration("ODE_double_precision"))
    cr_assert_eq(sizeof(dReal), sizeof(double));
  else
    cr_assert_eq(sizeof(dReal), sizeof(float));
  dGeomID pl = dCreatePlane(0, 0, 0, 1, 0), s = dCreateSphere(0, 0.1);
  dContactGeom c[4];
  // Sphere (g1) 0.01 into the plane (g2): normal from g2 into g1, depth > 0,
  // point = deepest point of the sphere.
  dGeomSetPosition(s, 0.3, 0.2, 0.09);
  cr_assert_eq(dCollide(s, pl, 4, c, sizeof c[0]), 1);
  cr_assert_float_eq(c[0].normal[2], 1.0, 1e-6);
  cr_assert_float_eq(c[0].depth, 0.01, 1e-6);
  cr_assert_float_eq(c[0].pos[2], -0.01, 1e-6);
  cr_assert(c[0].g1 == s && c[0].g2 == pl);
  // Swapped: the normal flips (still into g1, now the plane).
  cr_assert_eq(dCollide(pl, s, 4, c, sizeof c[0]), 1);
  cr_assert_float_eq(c[0].normal[2], -1.0, 1e-6);
  cr_assert(c[0].g1 == pl);
  // A gap: no contact (ODE reports depth >= 0 only).
  dGeomSetPosition(s, 0.3, 0.2, 0.1 + 1e-7);
  cr_assert_eq(dCollide(s, pl, 4, c, sizeof c[0]), 0);
  dGeomDestroy(s);
  dGeomDestroy(pl);
}

// ---------------------------------------------------------------------------
// Box on plane.

Test(collide, box_resting_on_plane) {
  cp_shape b = box(0.2, 0.1, 0.1), p = plane(0, 0, 1, 0);
  cp_collide_object oa = at(&b, 0, 0, 0.05, NULL), ob = at(&p, 0, 0, 0, NULL);
  cp_collide_contact c[CP_COLLIDE_MAX_POINTS];
  int n = collide(&oa, &ob, c);
  // Sorted lexicographically by position.
  const double pts[4][3] = {
      {-0.1, -0.05, 0}, {-0.1, 0.05, 0}, {0.1, -0.05, 0}, {0.1, 0.05, 0}};
  const double up[3] = {0, 0, 1};
  expect(c, n, pts, 4, up, 0, EXACT);
  for (int i = 0; i < 4; ++i)
    cr_assert_leq(dist3(c[i].p, pts[i]), EXACT, "order: contact %d", i);
}

Test(collide, plane_as_a_flips_normal) {
  cp_shape b = box(0.2, 0.1, 0.1), p = plane(0, 0, 1, 0);
  cp_collide_object ob = at(&b, 0, 0, 0.05, NULL), oa = at(&p, 0, 0, 0, NULL);
  cp_collide_contact c[CP_COLLIDE_MAX_POINTS];
  int n = collide(&oa, &ob, c);
  const double pts[4][3] = {
      {-0.1, -0.05, 0}, {-0.1, 0.05, 0}, {0.1, -0.05, 0}, {0.1, 0.05, 0}};
  const double down[3] = {0, 0, -1};
  expect(c, n, pts, 4, down, 0, EXACT);
}

Test(collide, box_near_plane_gap_and_penetration) {
  cp_shape b = box(0.2, 0.1, 0.1), p = plane(0, 0, 1, 0);
  cp_collide_object ob = at(&p, 0, 0, 0, NULL);
  cp_collide_contact c[CP_COLLIDE_MAX_POINTS];
  const double up[3] = {0, 0, 1};
  // Gap 5e-7 < touch_tol: contacts with depth -5e-7 midway in the gap.
  cp_collide_object oa = at(&b, 0.3, -0.2, 0.05 + 5e-7, NULL);
  int n = collide(&oa, &ob, c);
  const double gap[4][3] = {{0.2, -0.25, 2.5e-7},
                            {0.2, -0.15, 2.5e-7},
                            {0.4, -0.25, 2.5e-7},
                            {0.4, -0.15, 2.5e-7}};
  expect(c, n, gap, 4, up, -5e-7, EXACT);
  // Gap 2e-6 > touch_tol: nothing.
  oa.x[2] = 0.05 + 2e-6;
  cr_assert_eq(collide(&oa, &ob, c), 0);
  // Penetration 1e-3: depth reported, points midway between the surfaces.
  oa.x[2] = 0.049;
  n = collide(&oa, &ob, c);
  const double pen[4][3] = {{0.2, -0.25, -5e-4},
                            {0.2, -0.15, -5e-4},
                            {0.4, -0.25, -5e-4},
                            {0.4, -0.15, -5e-4}};
  expect(c, n, pen, 4, up, 1e-3, EXACT);
}

Test(collide, box_on_inclined_plane) {
  // Incline rising along +x at 30 deg: normal N = (-sin, 0, cos). The box's
  // z axis is turned onto N (rotation by -30 deg about y); it rests on its
  // bottom face, centre 0.3 up the slope.
  const double th = PI / 6, h = 0.05;
  const double N[3] = {-sin(th), 0, cos(th)}, T[3] = {cos(th), 0, sin(th)};
  cp_shape b = box(0.2, 0.1, 0.1), p = plane(N[0], N[1], N[2], 0);
  double q[4];
  quat(q, 0, 1, 0, -th);
  double ctr[3];
  for (int i = 0; i < 3; ++i) ctr[i] = 0.3 * T[i] + h * N[i];
  cp_collide_object oa = at(&b, ctr[0], ctr[1], ctr[2], q),
                    ob = at(&p, 0, 0, 0, NULL);
  cp_collide_contact c[CP_COLLIDE_MAX_POINTS];
  int n = collide(&oa, &ob, c);
  double pts[4][3];
  for (int k = 0; k < 4; ++k) {
    double sx = (k & 1) ? 0.1 : -0.1, sy = (k & 2) ? 0.05 : -0.05;
    for (int i = 0; i < 3; ++i)
      pts[k][i] = 0.3 * T[i] + sx * T[i] + (i == 1 ? sy : 0);
  }
  expect(c, n, (const double(*)[3])pts, 4, N, 0, 1e-12);
  for (int i = 0; i < n; ++i)
    cr_assert_leq(fabs(cp_v3_dot(c[i].p, N)), 1e-12, "off the plane");
}

// cp_collide_ws.flat: counts a box face down on a plane (random planes,
// boxes turned about the plane's normal, lying on any of their six faces,
// tilted below 1e-9 rad, from a gap of 0.9 touch_tol to 1 mm of
// penetration): four points, the face's corners, which the manifold
// reduction keeps. Not counted: a tilt of 1e-6 rad, a face side below
// CP_COLLIDE_FLAT_SIDE, a merge_tol of half that or more, a box on a box.
static double urand(unsigned long long *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*s >> 11) / 9007199254740992.0;
}

Test(collide, face_down_box_counted_flat) {
  unsigned long long seed = 20;
  cp_collide_ws ws = {0};
  cp_collide_options opt = cp_collide_defaults(), coarse = opt;
  opt.touch_tol = coarse.touch_tol = 1e-3;
  coarse.merge_tol = 0.5 * CP_COLLIDE_FLAT_SIDE;
  // The simulator skips the reduction for flat pairs reduced at
  // CP_MANIFOLD_MERGE_TOL: the face's corners must stay unmerged there.
  cr_assert_leq(CP_MANIFOLD_MERGE_TOL, 0.5 * CP_COLLIDE_FLAT_SIDE);
  long flat = 0;
  for (int trial = 0; trial < 200; ++trial) {
    // The plane: a random unit normal N (upper half-sphere), offset D.
    const double az = 2 * PI * urand(&seed), el = 0.3 + 1.2 * urand(&seed);
    const double N[3] = {cos(az) * cos(el), sin(az) * cos(el), sin(el)};
    const double D = urand(&seed) - 0.5;
    cp_shape p = plane(2 * N[0], 2 * N[1], 2 * N[2], 2 * D); // not unit
    cp_shape b = box(0.05 + urand(&seed), 0.05 + urand(&seed), 0.05 + urand(&seed));
    // The box: face f (axis k = f / 2, outward normal e) turned onto -N,
    // yawed about N, tilted by < 1e-9 rad about a random axis (not at all
    // in every third trial).
    const int f = trial % 6, k = f / 2;
    double e[3] = {0, 0, 0}, q0[4], q1[4], q2[4], q[4], ax[3];
    e[k] = f % 2 ? 1 : -1;
    cp_v3_cross(ax, e, N);
    const double sn = cp_v3_norm(ax), cs = cp_v3_dot(e, N);
    cr_assert_gt(sn, 1e-6); // (N is never along an axis here)
    cp_v3_scale(ax, ax, 1 / sn);
    cp_quat_axis_angle(q0, ax, atan2(sn, cs) - PI); // e onto -N
    cp_quat_axis_angle(q1, N, 2 * PI * urand(&seed));
    double ta[3] = {urand(&seed) - 0.5, urand(&seed) - 0.5, urand(&seed) - 0.5};
    cp_v3_scale(ta, ta, 1 / cp_v3_norm(ta));
    cp_quat_axis_angle(q2, ta, 0.5e-9 * urand(&seed) * (trial % 3));
    cp_quat_mul(q, q1, q0);
    cp_quat_mul(q, q2, q);
    // Its centre: half its height above the plane, less the depth, moved
    // along the plane.
    const double depth = -0.9e-3 + 1.9e-3 * urand(&seed);
    double x[3] = {urand(&seed) - 0.5, urand(&seed) - 0.5, 0};
    const double xn = cp_v3_dot(x, N) - (D + 0.5 * b.size[k] - depth);
    for (int i = 0; i < 3; ++i) x[i] -= xn * N[i];
    cp_collide_object oa = at(&b, x[0], x[1], x[2], q), ob = at(&p, 0, 0, 0, NULL);
    cp_collide_contact c[CP_COLLIDE_MAX_POINTS], cg[CP_COLLIDE_MAX_POINTS];
    cp_error err = {0};
    cr_assert_eq(cp_collide_pair_ws(&oa, &ob, &opt, &ws, c, CP_COLLIDE_MAX_POINTS, &err), 4,
                 "trial %d", trial);
    cr_assert_eq(ws.flat, ++flat, "trial %d: not counted", trial);
    // merge_tol 0.5 CP_COLLIDE_FLAT_SIDE: the general path (ODE, line
    // tests, merging), not counted.
    cr_assert_eq(cp_collide_pair_ws(&oa, &ob, &coarse, &ws, cg, CP_COLLIDE_MAX_POINTS, &err), 4);
    cr_assert_eq(ws.flat, flat, "trial %d: counted with merge_tol %g", trial, coarse.merge_tol);
    // Without a workspace: the same answer, bit for bit.
    cp_collide_contact c0[CP_COLLIDE_MAX_POINTS];
    cr_assert_eq(cp_collide_pair(&oa, &ob, &opt, c0, CP_COLLIDE_MAX_POINTS, &err), 4);
    cr_assert(!memcmp(c0, c, 4 * sizeof c[0]), "trial %d: ws and no ws differ", trial);
    // Independently: the face's corners w from the pose. Along the plane
    // the points are the corners; along N halfway between corner and plane,
    // depth D - N.w. Both paths; the general one only along the plane when
    // tilted (step 3's line test divides the rounding of a corner's
    // coordinates by the tilt: not compared), the direct one (c) always.
    double R[9], qn[4], nq = 0;
    for (int i = 0; i < 4; ++i) nq += q[i] * q[i];
    for (int i = 0; i < 4; ++i) qn[i] = q[i] / sqrt(nq);
    cp_quat_to_mat(R, qn);
    const int i1 = (k + 1) % 3, i2 = (k + 2) % 3;
    cp_contact ct[4];
    memset(ct, 0, sizeof ct);
    for (int cnr = 0; cnr < 4; ++cnr) {
      double w[3], want[3];
      for (int i = 0; i < 3; ++i)
        w[i] = x[i] + 0.5 * b.size[k] * e[k] * R[3 * i + k] +
               (cnr & 1 ? 0.5 : -0.5) * b.size[i1] * R[3 * i + i1] +
               (cnr & 2 ? 0.5 : -0.5) * b.size[i2] * R[3 * i + i2];
      const double d = D - cp_v3_dot(N, w);
      cp_v3_axpy(want, w, 0.5 * d, N);
      for (int path = 0; path < 2; ++path) {
        const cp_collide_contact *cc = path ? cg : c;
        int hits = 0;
        for (int j = 0; j < 4; ++j) {
          double dv[3];
          cp_v3_sub(dv, cc[j].p, want);
          const double along = cp_v3_dot(dv, N);
          cp_v3_axpy(dv, dv, -along, N);
          if (cp_v3_norm(dv) <= 1e-12 && fabs(cc[j].depth - d) <= 1e-12 &&
              ((path && trial % 3) || fabs(along) <= 1e-12))
            ++hits;
        }
        cr_assert_eq(hits, 1, "trial %d: %s path: corner %d matched %d times", trial,
                     path ? "general" : "direct", cnr, hits);
      }
    }
    // The reduction keeps them (what constraints.c relies on to skip it).
    for (int j = 0; j < 4; ++j) {
      ct[j].a = (cp_ref){1, -1, -1};
      ct[j].b = (cp_ref){0, -1, -1};
      cp_v3_copy(ct[j].p, c[j].p);
    }
    cr_assert_eq(cp_manifold_reduce(ct, 4, 0.5 * CP_COLLIDE_FLAT_SIDE), 4, "trial %d", trial);
  }
  // Not counted: tilted 1e-6 rad; a face thinner than CP_COLLIDE_FLAT_SIDE
  // (both still four corners); a box on a box.
  cp_shape b = box(0.2, 0.1, 0.1), thin = box(0.2, 0.5e-4, 0.1), p = plane(0, 0, 1, 0);
  cp_collide_object ob = at(&p, 0, 0, 0, NULL), base = at(&b, 0, 0, -0.05, NULL);
  double q[4];
  quat(q, 1, 0, 0, 1e-6);
  cp_collide_object tilted = at(&b, 0, 0, 0.05, q), slab = at(&thin, 0, 0, 0.05, NULL),
                    top = at(&b, 0.05, 0, 0.05, NULL);
  cp_collide_contact c[CP_COLLIDE_MAX_POINTS];
  cp_error err = {0};
  cr_assert_eq(cp_collide_pair_ws(&tilted, &ob, &opt, &ws, c, CP_COLLIDE_MAX_POINTS, &err), 4);
  cr_assert_eq(cp_collide_pair_ws(&slab, &ob, &opt, &ws, c, CP_COLLIDE_MAX_POINTS, &err), 4);
  cr_assert_eq(cp_collide_pair_ws(&top, &base, &opt, &ws, c, CP_COLLIDE_MAX_POINTS, &err), 4);
  cr_assert_eq(ws.flat, flat, "counted a pair it must not");
  cp_collide_ws_free(&ws);
}

// ---------------------------------------------------------------------------
// Box on box.

Test(collide, box_overhanging_box_edge) {
  // Base 1 x 1 x 0.2 (top at z = 0.2); 0.2 cube centred at x = 0.45 so that
  // it overhangs the edge x = 0.5: patch x in [0.35, 0.5], y in [-0.1, 0.1].
  cp_shape base = box(1, 1, 0.2), cube = box(0.2, 0.2, 0.2);
  cp_collide_object oa = at(&cube, 0.45, 0, 0.3, NULL),
                    ob = at(&base, 0, 0, 0.1, NULL);
  cp_collide_contact c[CP_COLLIDE_MAX_POINTS], d[CP_COLLIDE_MAX_POINTS];
  int n = collide(&oa, &ob, c);
  const double pts[4][3] = {
      {0.35, -0.1, 0.2}, {0.35, 0.1, 0.2}, {0.5, -0.1, 0.2}, {0.5, 0.1, 0.2}};
  const double up[3] = {0, 0, 1};
  expect(c, n, pts, 4, up, 0, EXACT);
  int m = collide(&ob, &oa, d);
  expect_swapped(c, n, d, m, EXACT, 1e-12, "swapped");
}

Test(collide, yawed_box_on_box) {
  cp_shape base = box(1, 1, 0.2), cube = box(0.2, 0.2, 0.2);
  cp_collide_contact c[CP_COLLIDE_MAX_POINTS];
  const double up[3] = {0, 0, 1};
  for (int deg = 15; deg <= 45; deg += 15) {
    double th = deg * PI / 180, q[4];
    quat(q, 0, 0, 1, th);
    cp_collide_object oa = at(&cube, 0.1, -0.2, 0.3, q),
                      ob = at(&base, 0, 0, 0.1, NULL);
    int n = collide(&oa, &ob, c);
    double pts[4][3];
    for (int k = 0; k < 4; ++k) {
      double sx = (k & 1) ? 0.1 : -0.1, sy = (k & 2) ? 0.1 : -0.1;
      pts[k][0] = 0.1 + cos(th) * sx - sin(th) * sy;
      pts[k][1] = -0.2 + sin(th) * sx + cos(th) * sy;
      pts[k][2] = 0.2;
    }
    expect(c, n, (const double(*)[3])pts, 4, up, 0, EXACT);
  }
}

Test(collide, yawed_box_overhanging_edge_gives_overlap_polygon) {
  // The 45-deg cube is a diamond |x - 0.45| + |y| <= 0.1 sqrt 2 cut by the
  // base's edge x = 0.5: a pentagon.
  cp_shape base = box(1, 1, 0.2), cube = box(0.2, 0.2, 0.2);
  double q[4], s = 0.1 * sqrt(2.0);
  quat(q, 0, 0, 1, PI / 4);
  cp_collide_object oa = at(&cube, 0.45, 0, 0.3, q),
                    ob = at(&base, 0, 0, 0.1, NULL);
  cp_collide_contact c[CP_COLLIDE_MAX_POINTS], d[CP_COLLIDE_MAX_POINTS];
  int n = collide(&oa, &ob, c);
  const double pts[5][3] = {{0.45 - s, 0, 0.2},
                            {0.45, -s, 0.2},
                            {0.45, s, 0.2},
                            {0.5, -(s - 0.05), 0.2},
                            {0.5, s - 0.05, 0.2}};
  const double up[3] = {0, 0, 1};
  expect(c, n, pts, 5, up, 0, EXACT);
  int m = collide(&ob, &oa, d);
  expect_swapped(c, n, d, m, EXACT, 1e-12, "swapped");
  // Sunk 1e-3: same polygon midway (z = 0.1995) whichever box is a (ODE puts
  // its points on whichever face is "incident", which depends on the order).
  oa.x[2] = 0.299;
  n = collide(&oa, &ob, c);
  double sunk[5][3];
  memcpy(sunk, pts, sizeof sunk);
  for (int i = 0; i < 5; ++i) sunk[i][2] = 0.1995;
  expect(c, n, (const double(*)[3])sunk, 5, up, 1e-3, EXACT);
  m = collide(&ob, &oa, d);
  expect_swapped(c, n, d, m, EXACT, 1e-12, "swapped");
}

Test(collide, equal_boxes_stacked_no_duplicates) {
  cp_shape cube = box(0.2, 0.2, 0.2);
  cp_collide_object oa = at(&cube, 0, 0, 0.2, NULL),
                    ob = at(&cube, 0, 0, 0, NULL);
  cp_collide_contact c[CP_COLLIDE_MAX_POINTS];
  int n = collide(&oa, &ob, c);
  const double pts[4][3] = {
      {-0.1, -0.1, 0.1}, {-0.1, 0.1, 0.1}, {0.1, -0.1, 0.1}, {0.1, 0.1, 0.1}};
  const double up[3] = {0, 0, 1};
  expect(c, n, pts, 4, up, 0, EXACT);
}

// ---------------------------------------------------------------------------
// Spheres, capsules, cylinders.

Test(collide, sphere_on_plane) {
  cp_shape s = sphere(0.1), p = plane(0, 0, 1, 0);
  cp_collide_object oa = at(&s, 0.3, 0.2, 0.1, NULL),
                    ob = at(&p, 0, 0, 0, NULL);
  cp_collide_contact c[CP_COLLIDE_MAX_POINTS];
  const double up[3] = {0, 0, 1};
  const double touch[1][3] = {{0.3, 0.2, 0}};
  expect(c, collide(&oa, &ob, c), touch, 1, up, 0, EXACT);
  oa.x[2] = 0.1 + 1e-7; // gap within touch_tol
  const double gap[1][3] = {{0.3, 0.2, 5e-8}};
  expect(c, collide(&oa, &ob, c), gap, 1, up, -1e-7, EXACT);
  oa.x[2] = 0.2;
  cr_assert_eq(collide(&oa, &ob, c), 0);
  // Also with touch_tol = 0 the 1e-7 gap is no contact.
  oa.x[2] = 0.1 + 1e-7;
  cp_collide_options o = cp_collide_defaults();
  o.touch_tol = 0;
  cr_assert_eq(cp_collide_pair(&oa, &ob, &o, c, 4, NULL), 0);
}

Test(collide, sphere_on_sphere_and_box) {
  cp_shape s = sphere(0.1), t = sphere(0.05), base = box(1, 1, 0.2);
  cp_collide_contact c[CP_COLLIDE_MAX_POINTS];
  // Along the diagonal direction u, touching: point r_b u from b's centre.
  double u[3] = {1, 2, 2};
  cp_v3_scale(u, u, 1.0 / 3);
  cp_collide_object oa = at(&s, 0.15 * u[0], 0.15 * u[1], 0.15 * u[2], NULL),
                    ob = at(&t, 0, 0, 0, NULL);
  const double p1[1][3] = {{0.05 * u[0], 0.05 * u[1], 0.05 * u[2]}};
  expect(c, collide(&oa, &ob, c), p1, 1, u, 0, EXACT);
  // Penetrating by 0.01: depth 0.01, point midway, 0.045 from b's centre.
  for (int i = 0; i < 3; ++i) oa.x[i] = 0.14 * u[i];
  const double p2[1][3] = {{0.045 * u[0], 0.045 * u[1], 0.045 * u[2]}};
  expect(c, collide(&oa, &ob, c), p2, 1, u, 0.01, EXACT);
  // Sphere on the box's top face and on its edge x = 0.5, z = 0.2.
  oa = at(&s, 0.1, 0.2, 0.3, NULL);
  ob = at(&base, 0, 0, 0.1, NULL);
  const double up[3] = {0, 0, 1}, p3[1][3] = {{0.1, 0.2, 0.2}};
  expect(c, collide(&oa, &ob, c), p3, 1, up, 0, EXACT);
  double e = 0.1 / sqrt(2.0), diag[3] = {sqrt(0.5), 0, sqrt(0.5)};
  oa = at(&s, 0.5 + e, 0, 0.2 + e, NULL);
  const double p4[1][3] = {{0.5, 0, 0.2}};
  expect(c, collide(&oa, &ob, c), p4, 1, diag, 0, EXACT);
}

Test(collide, capsule_lying_on_plane_and_box) {
  // r = 0.05, L = 0.3, axis turned from z onto x: line contact from
  // x = -0.15 to 0.15, two contacts at its ends.
  cp_shape cap = capsule(0.05, 0.3), p = plane(0, 0, 1, 0),
           base = box(1, 1, 0.2);
  double q[4];
  quat(q, 0, 1, 0, PI / 2);
  cp_collide_object oa = at(&cap, 0, 0, 0.05, q), ob = at(&p, 0, 0, 0, NULL);
  cp_collide_contact c[CP_COLLIDE_MAX_POINTS];
  const double up[3] = {0, 0, 1};
  const double pts[2][3] = {{-0.15, 0, 0}, {0.15, 0, 0}};
  expect(c, collide(&oa, &ob, c), pts, 2, up, 0, EXACT);
  // On the box top (z = 0.2): also two (ODE alone gives one; the end balls
  // add the other).
  oa = at(&cap, 0.1, 0.1, 0.25, q);
  ob = at(&base, 0, 0, 0.1, NULL);
  const double pb[2][3] = {{-0.05, 0.1, 0.2}, {0.25, 0.1, 0.2}};
  expect(c, collide(&oa, &ob, c), pb, 2, up, 0, EXACT);
  // Tilted 0.3 rad, resting on its lower end: one contact.
  quat(q, 0, 1, 0, PI / 2 + 0.3);
  double dz = 0.15 * sin(0.3);
  oa = at(&cap, 0.1, 0.1, 0.25 + dz, q);
  int n = collide(&oa, &ob, c);
  cr_assert_eq(n, 1);
  const double end[3] = {0.1 + 0.15 * cos(0.3), 0.1, 0.2};
  cr_assert_leq(dist3(c[0].p, end), EXACT);
  cr_assert_leq(fabs(c[0].depth), EXACT);
}

Test(collide, cylinder_upright_on_plane) {
  // Flat face down: every contact on the rim circle at z = 0, and together
  // they resist tipping in every direction.
  cp_shape cyl = cylinder(0.1, 0.2), p = plane(0, 0, 1, 0);
  cp_collide_object oa = at(&cyl, 0.2, -0.1, 0.1, NULL),
                    ob = at(&p, 0, 0, 0, NULL);
  cp_collide_contact c[CP_COLLIDE_MAX_POINTS];
  int n = collide(&oa, &ob, c);
  cr_assert_geq(n, 3);
  for (int i = 0; i < n; ++i) {
    cr_assert_leq(fabs(c[i].p[2]), EXACT);
    cr_assert_leq(fabs(hypot(c[i].p[0] - 0.2, c[i].p[1] + 0.1) - 0.1), EXACT);
    cr_assert_leq(fabs(c[i].depth), EXACT);
    cr_assert_float_eq(c[i].n[2], 1.0, 1e-12);
  }
  // ODE gives the 4 rim points on the cylinder's x and y axes: the support
  // square reaches r cos 45 deg in the worst direction.
  expect_support(c, n, 0.2, -0.1, 0.1, 0.7);
}

Test(collide, cylinder_lying_and_tilted_on_plane) {
  cp_shape cyl = cylinder(0.1, 0.2), p = plane(0, 0, 1, 0);
  cp_collide_contact c[CP_COLLIDE_MAX_POINTS];
  const double up[3] = {0, 0, 1};
  // On its side, axis along x: line contact x in [-0.1, 0.1].
  double q[4];
  quat(q, 0, 1, 0, PI / 2);
  cp_collide_object oa = at(&cyl, 0, 0, 0.1, q), ob = at(&p, 0, 0, 0, NULL);
  const double pts[2][3] = {{-0.1, 0, 0}, {0.1, 0, 0}};
  expect(c, collide(&oa, &ob, c), pts, 2, up, 0, EXACT);
  // Tilted by a about y, resting on its rim: one contact at the lowest rim
  // point x = r cos a - (L/2) sin a.
  double a = 0.4;
  quat(q, 0, 1, 0, a);
  oa = at(&cyl, 0, 0, 0.1 * cos(a) + 0.1 * sin(a), q);
  const double rim[1][3] = {{0.1 * cos(a) - 0.1 * sin(a), 0, 0}};
  expect(c, collide(&oa, &ob, c), rim, 1, up, 0, EXACT);
}

Test(collide, cylinder_on_box_points_on_rim) {
  // ODE's cylinder-box clips a circumscribed octagon; collide.c moves the
  // octagon's vertices onto the rim.
  cp_shape cyl = cylinder(0.1, 0.2), base = box(1, 1, 0.2);
  cp_collide_object oa = at(&cyl, 0.1, 0.05, 0.3, NULL),
                    ob = at(&base, 0, 0, 0.1, NULL);
  cp_collide_contact c[CP_COLLIDE_MAX_POINTS], d[CP_COLLIDE_MAX_POINTS];
  int n = collide(&oa, &ob, c);
  cr_assert_geq(n, 4);
  for (int i = 0; i < n; ++i) {
    cr_assert_leq(fabs(c[i].p[2] - 0.2), EXACT);
    cr_assert_leq(fabs(hypot(c[i].p[0] - 0.1, c[i].p[1] - 0.05) - 0.1), EXACT);
  }
  expect_support(c, n, 0.1, 0.05, 0.1, 0.9);
  int m = collide(&ob, &oa, d);
  expect_swapped(c, n, d, m, EXACT, 1e-12, "swapped");
}

// ---------------------------------------------------------------------------
// Conventions over many pairs: n points from b into a, swapping a and b
// flips n and keeps the points, output is repeatable.

Test(collide, normal_convention_all_pairs) {
  cp_shape shapes[4] = {box(0.2, 0.16, 0.12), sphere(0.08), cylinder(0.07, 0.2),
                        capsule(0.05, 0.15)};
  double q[4], R[9];
  double ax[3] = {0.3, -0.5, 0.8};
  cp_v3_scale(ax, ax, 1.0 / cp_v3_norm(ax));
  quat(q, ax[0], ax[1], ax[2], 0.7);
  cp_quat_to_mat(R, q);
  // Half-heights: of a (turned by q) below its centre, of b (upright) above.
  double below[4], above[4];
  for (int i = 0; i < 4; ++i) {
    const cp_shape *s = &shapes[i];
    double az = fabs(R[8]);
    switch (s->type) {
    case CP_SHAPE_BOX:
      below[i] = 0.5 * (fabs(R[6]) * s->size[0] + fabs(R[7]) * s->size[1] +
                        az * s->size[2]);
      above[i] = 0.5 * s->size[2];
      break;
    case CP_SHAPE_SPHERE: below[i] = above[i] = s->radius; break;
    case CP_SHAPE_CYLINDER:
      below[i] = s->radius * sqrt(1 - az * az) + 0.5 * s->length * az;
      above[i] = 0.5 * s->length;
      break;
    default: // capsule
      below[i] = s->radius + 0.5 * s->length * az;
      above[i] = s->radius + 0.5 * s->length;
    }
  }
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 4; ++j) {
      // a above b (lowered from where their extents touch until they
      // overlap by 2 mm: the lowest points need not be vertically aligned).
      double z = above[j] + below[i];
      cp_collide_object oa = at(&shapes[i], 0.01, 0.02, z, q),
                        ob = at(&shapes[j], 0, 0, 0, NULL);
      cp_collide_contact c[CP_COLLIDE_MAX_POINTS], d[CP_COLLIDE_MAX_POINTS];
      int n = 0;
      for (int it = 0; it < 200; ++it, oa.x[2] -= 5e-4) {
        n = collide(&oa, &ob, c);
        if (n > 0 && c[0].depth > 2e-3) break;
      }
      cr_assert_gt(n, 0, "%s over %s: no contact",
                   cp_shape_type_name(shapes[i].type),
                   cp_shape_type_name(shapes[j].type));
      for (int k = 0; k < n; ++k) {
        cr_assert_gt(c[k].n[2], 0.3, "%s over %s: normal z %g",
                     cp_shape_type_name(shapes[i].type),
                     cp_shape_type_name(shapes[j].type), c[k].n[2]);
        cr_assert_float_eq(cp_v3_norm(c[k].n), 1.0, 1e-12);
        cr_assert_gt(c[k].depth, 0);
      }
      // With 2 mm of overlap a curved pair's point is somewhere in the
      // overlap, not unique (ODE's cylinder-cylinder moves it by 1e-4 when
      // the order changes): compare to the overlap's size. ODE's
      // cylinder-cylinder and capsule-cylinder colliders are iterative (MPR):
      // their normals depend on the order, by ~1e-2 at this overlap.
      int m = collide(&ob, &oa, d);
      char what[64];
      snprintf(what, sizeof what, "%s over %s",
               cp_shape_type_name(shapes[i].type),
               cp_shape_type_name(shapes[j].type));
      int cyl = (shapes[i].type == CP_SHAPE_CYLINDER) +
                (shapes[j].type == CP_SHAPE_CYLINDER);
      int mpr = cyl == 2 || (cyl == 1 && (shapes[i].type == CP_SHAPE_CAPSULE ||
                                          shapes[j].type == CP_SHAPE_CAPSULE));
      expect_swapped(c, n, d, m, 2e-3, mpr ? 2e-2 : 1e-9, what);
      int n2 = collide(&oa, &ob, d);
      cr_assert_eq(n2, n);
      cr_assert(memcmp(c, d, (size_t)n * sizeof c[0]) == 0, "not repeatable");
    }
}

// ---------------------------------------------------------------------------
// Options, capacity, errors.

Test(collide, capacity_and_culling) {
  cp_shape b = box(0.2, 0.1, 0.1), p = plane(0, 0, 1, 0);
  cp_collide_object oa = at(&b, 0, 0, 0.05, NULL), ob = at(&p, 0, 0, 0, NULL);
  cp_collide_contact c[4];
  memset(c, 0x55, sizeof c);
  cp_collide_contact sentinel = c[2];
  // cap 2 < 4 contacts: returns 4, writes 2.
  cr_assert_eq(cp_collide_pair(&oa, &ob, NULL, c, 2, NULL), 4);
  cr_assert(memcmp(&c[2], &sentinel, sizeof sentinel) == 0);
  cr_assert_eq(cp_collide_pair(&oa, &ob, NULL, NULL, 0, NULL), 4);
  // max_points 2: two corners, spread out (a diagonal).
  cp_collide_options o = cp_collide_defaults();
  o.max_points = 2;
  int n = cp_collide_pair(&oa, &ob, &o, c, 4, NULL);
  cr_assert_eq(n, 2);
  cr_assert_float_eq(dist3(c[0].p, c[1].p), sqrt(0.2 * 0.2 + 0.1 * 0.1), 1e-12);
  // A quaternion that is not unit is normalised.
  double q2[4] = {2, 0, 0, 0};
  cp_collide_object os = at(&b, 0, 0, 0.05, q2);
  cr_assert_eq(cp_collide_pair(&os, &ob, NULL, c, 4, NULL), 4);
}

Test(collide, errors_and_unsupported) {
  cp_shape p = plane(0, 0, 1, 0), q = plane(0, 1, 0, 0.5),
           b = box(0.1, 0.1, 0.1),
           none = {.type = CP_SHAPE_NONE};
  cp_collide_object op = at(&p, 0, 0, 0, NULL), oq = at(&q, 0, 0, 0, NULL),
                    ob = at(&b, 0, 0, 0.05, NULL),
                    on = at(&none, 0, 0, 0, NULL);
  cp_collide_contact c[8];
  cp_error err;
  cr_assert_eq(cp_collide_pair(&op, &oq, NULL, c, 8, &err), -1);
  cr_assert(strstr(err.msg, "plane-plane"), "%s", err.msg);
  cr_assert_eq(cp_collide_supported(CP_SHAPE_PLANE, CP_SHAPE_PLANE), 0);
  for (int i = CP_SHAPE_BOX; i <= CP_SHAPE_PLANE; ++i)
    for (int j = CP_SHAPE_BOX; j <= CP_SHAPE_CAPSULE; ++j) {
      cr_assert_eq(cp_collide_supported((cp_shape_type)i, (cp_shape_type)j), 1,
                   "%d-%d", i, j);
      cr_assert_eq(cp_collide_supported((cp_shape_type)j, (cp_shape_type)i), 1);
    }
  // NONE has no geometry.
  cr_assert_eq(cp_collide_pair(&on, &ob, NULL, c, 8, &err), 0);
  // Invalid shapes, poses, options.
  cp_shape bad = box(0.1, -0.1, 0.1);
  cp_collide_object obad = at(&bad, 0, 0, 0, NULL);
  cr_assert_eq(cp_collide_pair(&ob, &obad, NULL, c, 8, &err), -1);
  cr_assert_str_eq(err.where, "b");
  double zq[4] = {0, 0, 0, 0};
  cp_collide_object oz = at(&b, 0, 0, 0, zq);
  cr_assert_eq(cp_collide_pair(&oz, &op, NULL, c, 8, &err), -1);
  cr_assert_str_eq(err.where, "a");
  cp_collide_object onan = at(&b, NAN, 0, 0, NULL);
  cr_assert_eq(cp_collide_pair(&onan, &op, NULL, c, 8, &err), -1);
  cp_shape zn = plane(0, 0, 0, 0);
  cp_collide_object ozn = at(&zn, 0, 0, 0, NULL);
  cr_assert_eq(cp_collide_pair(&ob, &ozn, NULL, c, 8, &err), -1);
  cp_collide_options o = cp_collide_defaults();
  o.max_points = 0;
  cr_assert_eq(cp_collide_pair(&ob, &op, &o, c, 8, &err), -1);
  cr_assert_str_eq(err.where, "options");
  o = cp_collide_defaults();
  o.touch_tol = -1;
  cr_assert_eq(cp_collide_pair(&ob, &op, &o, c, 8, &err), -1);
  cr_assert_eq(cp_collide_pair(&ob, &op, NULL, NULL, 8, &err), -1);
  // err may be NULL.
  cr_assert_eq(cp_collide_pair(&op, &oq, NULL, c, 8, NULL), -1);
}

// ---------------------------------------------------------------------------
// Threads: concurrent calls give the single-threaded answer.

typedef struct job {
  int n;
  cp_collide_contact c[CP_COLLIDE_MAX_POINTS];
} job;

static void *worker(void *arg) {
  job *j = arg;
  cp_shape base = box(1, 1, 0.2), cube = box(0.2, 0.2, 0.2);
  double q[4];
  quat(q, 0, 0, 1, PI / 4);
  cp_collide_object oa = at(&cube, 0.45, 0, 0.299, q),
                    ob = at(&base, 0, 0, 0.1, NULL);
  for (int it = 0; it < 200; ++it)
    j->n = cp_collide_pair(&oa, &ob, NULL, j->c, CP_COLLIDE_MAX_POINTS, NULL);
  return NULL;
}

Test(collide, threads) {
  job ref, jobs[4];
  worker(&ref);
  pthread_t th[4];
  for (int i = 0; i < 4; ++i) pthread_create(&th[i], NULL, worker, &jobs[i]);
  for (int i = 0; i < 4; ++i) pthread_join(th[i], NULL);
  for (int i = 0; i < 4; ++i) {
    cr_assert_eq(jobs[i].n, ref.n);
    cr_assert(memcmp(jobs[i].c, ref.c, (size_t)ref.n * sizeof ref.c[0]) == 0);
  }
}
