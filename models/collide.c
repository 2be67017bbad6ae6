// Contact generation between two posed shapes through ODE's collision
// library; see models/collide.h for the conventions and the method.
#include "models/collide.h"

#include <float.h>
#include <math.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ode/ode.h>

#include "models/collide_impl.h"
#include "models/mesh.h"
#include "models/vec3.h"

// Positions are rounded to this grid (m) for the deterministic output order.
#define SORT_QUANTUM 1e-9
// How far beyond the closest feature a mesh-primitive pair looks for more
// points when touch_tol is larger (m; see step 1).
#define CP_COLLIDE_MESH_REACH 1e-4

// ---------------------------------------------------------------------------
// Validated object: the shape, its world pose, and for a plane its world
// normal N and offset D ({y : N.y = D}, solid side N.y <= D).

typedef cp_collide_posed obj; // (models/collide_impl.h)

static int bad_num(double v) { return !isfinite(v); }

// The bits of v.
static inline uint64_t bits_of(double v) {
  uint64_t x;
  memcpy(&x, &v, sizeof x);
  return x;
}

// a[0..n) and b[0..n) (n <= 4) hold the same bits; written out so that it
// compiles to a few compares.
static inline int same_bits(const double *a, const double *b, int n) {
  uint64_t d = bits_of(a[0]) ^ bits_of(b[0]);
  if (n > 1) d |= bits_of(a[1]) ^ bits_of(b[1]);
  if (n > 2) d |= bits_of(a[2]) ^ bits_of(b[2]);
  if (n > 3) d |= bits_of(a[3]) ^ bits_of(b[3]);
  return d == 0;
}

// Validates o into w. pose (NULL: none) holds the last quaternion given on
// this side, its normalised value and R (cp_collide_ws.pose): the same bits
// give the same results, so they are copied, not recomputed.
static int check_object(const cp_collide_object *o, const char *name, obj *w,
                        double *pose, int *pose_set, cp_error *err) {
  if (!o || !o->shape)
    return cp_error_set(err, name, "missing object or shape");
  const cp_shape *s = o->shape;
  w->s = s;
  if (s->type == CP_SHAPE_NONE) return 0;
  if (!cp_v3_isfinite(o->x))
    return cp_error_set(err, name, "position is not finite");
  if (pose && *pose_set && same_bits(pose, o->q, 4)) {
    memcpy(w->q, pose + 4, sizeof w->q);
    memcpy(w->R, pose + 8, sizeof w->R);
  } else {
    double qn = sqrt(o->q[0] * o->q[0] + o->q[1] * o->q[1] +
                     o->q[2] * o->q[2] + o->q[3] * o->q[3]);
    if (!isfinite(qn) || qn < 1e-12)
      return cp_error_set(err, name, "orientation is not a nonzero finite "
                                     "quaternion");
    for (int i = 0; i < 4; ++i) w->q[i] = o->q[i] / qn;
    cp_quat_to_mat(w->R, w->q);
    if (pose) {
      memcpy(pose, o->q, sizeof w->q);
      memcpy(pose + 4, w->q, sizeof w->q);
      memcpy(pose + 8, w->R, sizeof w->R);
      *pose_set = 1;
    }
  }
  cp_v3_copy(w->x, o->x);
  switch (s->type) {
  case CP_SHAPE_BOX:
    for (int i = 0; i < 3; ++i)
      if (bad_num(s->size[i]) || s->size[i] <= 0)
        return cp_error_set(err, name, "box size must be positive and finite");
    return 0;
  case CP_SHAPE_SPHERE:
    if (bad_num(s->radius) || s->radius <= 0)
      return cp_error_set(err, name, "sphere radius must be positive");
    return 0;
  case CP_SHAPE_CYLINDER:
  case CP_SHAPE_CAPSULE:
    if (bad_num(s->radius) || s->radius <= 0)
      return cp_error_set(err, name, "%s radius must be positive",
                          cp_shape_type_name(s->type));
    if (bad_num(s->length) || s->length < 0 ||
        (s->type == CP_SHAPE_CYLINDER && s->length == 0))
      return cp_error_set(err, name, "%s length must be %s",
                          cp_shape_type_name(s->type),
                          s->type == CP_SHAPE_CYLINDER ? "positive"
                                                       : "non-negative");
    return 0;
  case CP_SHAPE_MESH:
    if (!s->mesh || !s->mesh->collide)
      return cp_error_set(err, name, "mesh shape without a prepared mesh");
    return 0;
  case CP_SHAPE_PLANE: {
    double nn = cp_v3_norm(s->normal);
    if (!isfinite(nn) || nn < 1e-12 || bad_num(s->offset))
      return cp_error_set(err, name, "plane needs a nonzero finite normal "
                                     "and a finite offset");
    // Owner frame {y : m.y = c} with m = normal/|m|, c = offset/|m|; world
    // point z = x + R y, so N = R m and D = c + N.x.
    double m[3];
    cp_v3_scale(m, s->normal, 1.0 / nn);
    cp_m3_mulv(w->N, w->R, m);
    w->D = s->offset / nn + cp_v3_dot(w->N, w->x);
    return 0;
  }
  case CP_SHAPE_NONE:
    break;
  }
  return cp_error_set(err, name, "unknown shape type %d", (int)s->type);
}

// The interval [lo, hi] of s for which the world point p + s u (|u| = 1) is
// in the shape; 0 if the line misses it. A line grazing a face, edge or
// silhouette within eps counts as a hit (contact points lie exactly on
// edges, up to rounding). lo/hi may be infinite (plane).
static int clip_axis(double l, double d, double h, double eps, double *lo,
                     double *hi) {
  if (fabs(d) < 1e-12) return fabs(l) <= h + eps; // parallel to the slab
  double s1 = (-h - l) / d, s2 = (h - l) / d;
  if (s1 > s2) { double t = s1; s1 = s2; s2 = t; }
  if (s1 > *lo) *lo = s1;
  if (s2 < *hi) *hi = s2;
  return 1;
}

// Ball of radius r at c (local coordinates l relative to c, direction d).
static int ball_interval(const double *l, const double *d, double r,
                         double eps, double *lo, double *hi) {
  double b = cp_v3_dot(l, d), c2 = cp_v3_dot(l, l);
  double dist2 = c2 - b * b; // squared distance of the centre to the line
  if (dist2 > (r + eps) * (r + eps)) return 0;
  double h = sqrt(fmax(r * r - dist2, 0.0));
  *lo = -b - h;
  *hi = -b + h;
  return 1;
}

// Infinite solid cylinder of radius r about the local z axis.
static int tube_interval(const double *l, const double *d, double r,
                         double eps, double *lo, double *hi) {
  double a2 = d[0] * d[0] + d[1] * d[1];
  double c2 = l[0] * l[0] + l[1] * l[1];
  if (a2 < 1e-24) { // line along the axis
    if (c2 > (r + eps) * (r + eps)) return 0;
    *lo = -INFINITY;
    *hi = INFINITY;
    return 1;
  }
  double b = (l[0] * d[0] + l[1] * d[1]) / a2;
  double dist2 = c2 - b * b * a2; // squared distance of the axis to the line
  if (dist2 > (r + eps) * (r + eps)) return 0;
  double h = sqrt(fmax(r * r - dist2, 0.0) / a2);
  *lo = -b - h;
  *hi = -b + h;
  return 1;
}

static int line_interval(const obj *o, const double *p, const double *u,
                         double eps, double *lo, double *hi) {
  const cp_shape *s = o->s;
  *lo = -INFINITY;
  *hi = INFINITY;
  if (s->type == CP_SHAPE_PLANE) { // N.(p + s u) <= D
    double k = cp_v3_dot(o->N, u), v = o->D - cp_v3_dot(o->N, p);
    if (fabs(k) < 1e-12) return v >= -eps;
    if (k > 0) *hi = v / k; else *lo = v / k;
    return 1;
  }
  double l[3], d[3], t[3];
  cp_v3_sub(t, p, o->x);
  cp_m3_tmulv(l, o->R, t); // body frame
  cp_m3_tmulv(d, o->R, u);
  switch (s->type) {
  case CP_SHAPE_BOX:
    for (int i = 0; i < 3; ++i)
      if (!clip_axis(l[i], d[i], 0.5 * s->size[i], eps, lo, hi)) return 0;
    return *lo <= *hi + eps;
  case CP_SHAPE_SPHERE:
    return ball_interval(l, d, s->radius, eps, lo, hi);
  case CP_SHAPE_CYLINDER:
    if (!tube_interval(l, d, s->radius, eps, lo, hi)) return 0;
    if (!clip_axis(l[2], d[2], 0.5 * s->length, eps, lo, hi)) return 0;
    return *lo <= *hi + eps;
  case CP_SHAPE_MESH: {
    // A convex hull: the intersection of its half-spaces n.y <= d. A
    // triangle mesh is a surface, not a solid: a miss.
    if (!o->hull) return 0;
    const cp_mesh *m = s->mesh;
    double lc[3];
    cp_v3_sub(lc, l, m->hull_center);
    for (int f = 0; f < m->hull_n_planes; ++f) {
      const double *pl = m->hull_planes + 4 * f;
      double k = cp_v3_dot(pl, d), v = pl[3] - cp_v3_dot(pl, lc);
      if (fabs(k) < 1e-12) {
        if (v < -eps) return 0;
        continue;
      }
      if (k > 0) *hi = fmin(*hi, v / k); else *lo = fmax(*lo, v / k);
    }
    return *lo <= *hi + eps;
  }
  case CP_SHAPE_CAPSULE: {
    // Convex: the line meets it in one interval, the hull of its meetings
    // with the tube section and the two end balls.
    double h = 0.5 * s->length, a, b;
    int hit = 0;
    double L = INFINITY, H = -INFINITY;
    if (tube_interval(l, d, s->radius, eps, &a, &b) &&
        clip_axis(l[2], d[2], h, eps, &a, &b) && a <= b + eps) {
      L = fmin(L, a); H = fmax(H, b); hit = 1;
    }
    for (int e = -1; e <= 1; e += 2) {
      double le[3] = {l[0], l[1], l[2] - e * h};
      if (ball_interval(le, d, s->radius, eps, &a, &b)) {
        L = fmin(L, a); H = fmax(H, b); hit = 1;
      }
    }
    *lo = L;
    *hi = H;
    return hit;
  }
  default:
    return 0;
  }
}

// Moves a point outside a cylinder's radius radially onto its rim circle
// (ODE's cylinder-box collider clips a circumscribed octagon of the cap, whose
// vertices lie up to 8% of the radius outside the cylinder).
static void onto_cylinder(const obj *o, double *p) {
  double t[3], l[3];
  cp_v3_sub(t, p, o->x);
  cp_m3_tmulv(l, o->R, t);
  double rho = hypot(l[0], l[1]);
  if (rho <= o->s->radius) return;
  l[0] *= o->s->radius / rho;
  l[1] *= o->s->radius / rho;
  cp_m3_mulv(t, o->R, l);
  cp_v3_add(p, o->x, t);
}

// ---------------------------------------------------------------------------
// ODE geoms (dReal may be float or double: every conversion is explicit).

#define GEOM_NPARAMS CP_COLLIDE_WS_NPARAMS
// Parameter groups: the shape's [0, 4), position [4, 7), quaternion [7, 11).
#define GEOM_POS 4
#define GEOM_QUAT 7

// The ODE parameters of o grown by g (radii + g, extents + 2 g) and
// translated by t[3]: p[0..3] the shape's (box lx, ly, lz; sphere r;
// capsule and cylinder r, length; plane a, b, c, d: not placeable, so world
// parameters, a translation t raising d by N.t), p[4..6] the position,
// p[7..10] the quaternion. Unused entries are 0. Each is rounded to dReal
// here (and kept as a double, which holds a dReal exactly).
static void geom_params(const obj *o, double g, const double *t,
                        double p[GEOM_NPARAMS]) {
  const cp_shape *s = o->s;
  p[0] = p[1] = p[2] = p[3] = 0;
  switch (s->type) {
  case CP_SHAPE_BOX:
    for (int i = 0; i < 3; ++i) p[i] = (dReal)(s->size[i] + 2 * g);
    break;
  case CP_SHAPE_SPHERE:
    p[0] = (dReal)(s->radius + g);
    break;
  case CP_SHAPE_CAPSULE:
    p[0] = (dReal)(s->radius + g);
    p[1] = (dReal)s->length;
    break;
  case CP_SHAPE_CYLINDER:
    p[0] = (dReal)(s->radius + g);
    p[1] = (dReal)(s->length + 2 * g);
    break;
  case CP_SHAPE_MESH: // cannot grow: g is ignored (the caller grows the other)
    break;
  case CP_SHAPE_PLANE:
    for (int i = 0; i < 3; ++i) p[i] = (dReal)o->N[i];
    p[3] = (dReal)(o->D + cp_v3_dot(o->N, t));
    for (int i = GEOM_POS; i < GEOM_NPARAMS; ++i) p[i] = 0;
    return;
  case CP_SHAPE_NONE:
    for (int i = GEOM_POS; i < GEOM_NPARAMS; ++i) p[i] = 0;
    return;
  }
  double x[3];
  cp_v3_add(x, o->x, t);
  if (s->type == CP_SHAPE_MESH && o->hull) { // the hull's origin: its centre
    double c[3];
    cp_m3_mulv(c, o->R, s->mesh->hull_center);
    cp_v3_add(x, x, c);
  }
  for (int i = 0; i < 3; ++i) p[GEOM_POS + i] = (dReal)x[i];
  for (int i = 0; i < 4; ++i) p[GEOM_QUAT + i] = (dReal)o->q[i];
}

// Gives the primitive geom id (of o's type) the parameters p[from, to)
// (whole groups of geom_params).
static void set_geom(dGeomID id, const obj *o, const double *p, int from,
                     int to) {
  if (from < GEOM_POS) {
    switch (o->s->type) {
    case CP_SHAPE_BOX:
      dGeomBoxSetLengths(id, (dReal)p[0], (dReal)p[1], (dReal)p[2]);
      break;
    case CP_SHAPE_SPHERE: dGeomSphereSetRadius(id, (dReal)p[0]); break;
    case CP_SHAPE_CAPSULE:
      dGeomCapsuleSetParams(id, (dReal)p[0], (dReal)p[1]);
      break;
    case CP_SHAPE_CYLINDER:
      dGeomCylinderSetParams(id, (dReal)p[0], (dReal)p[1]);
      break;
    case CP_SHAPE_PLANE:
      dGeomPlaneSetParams(id, (dReal)p[0], (dReal)p[1], (dReal)p[2],
                          (dReal)p[3]);
      return; // not placeable
    default:
      return;
    }
  }
  if (from <= GEOM_POS && to > GEOM_POS)
    dGeomSetPosition(id, (dReal)p[GEOM_POS], (dReal)p[GEOM_POS + 1],
                     (dReal)p[GEOM_POS + 2]);
  if (to > GEOM_QUAT) {
    dQuaternion q = {(dReal)p[GEOM_QUAT], (dReal)p[GEOM_QUAT + 1],
                     (dReal)p[GEOM_QUAT + 2], (dReal)p[GEOM_QUAT + 3]};
    dGeomSetQuaternion(id, q);
  }
}

// A new geom of o with the parameters p (geom_params).
static dGeomID make_geom(const obj *o, const double *p) {
  const cp_shape *s = o->s;
  dGeomID id = 0;
  switch (s->type) {
  case CP_SHAPE_BOX:
    id = dCreateBox(0, (dReal)p[0], (dReal)p[1], (dReal)p[2]);
    break;
  case CP_SHAPE_SPHERE: id = dCreateSphere(0, (dReal)p[0]); break;
  case CP_SHAPE_CAPSULE:
    id = dCreateCapsule(0, (dReal)p[0], (dReal)p[1]);
    break;
  case CP_SHAPE_CYLINDER:
    id = dCreateCylinder(0, (dReal)p[0], (dReal)p[1]);
    break;
  case CP_SHAPE_MESH:
    if (o->hull)
      id = dCreateConvex(0, s->mesh->hull_planes,
                         (unsigned)s->mesh->hull_n_planes,
                         s->mesh->hull_points, (unsigned)s->mesh->hull_n_points,
                         s->mesh->hull_polygons);
    else
      id = dCreateTriMesh(0, (dTriMeshDataID)s->mesh->collide, 0, 0, 0);
    break;
  case CP_SHAPE_PLANE:
    return dCreatePlane(0, (dReal)p[0], (dReal)p[1], (dReal)p[2], (dReal)p[3]);
  case CP_SHAPE_NONE:
    return 0;
  }
  set_geom(id, o, p, GEOM_POS, GEOM_NPARAMS);
  return id;
}

// The geom of o grown by g and translated by t (see geom_params), of the
// kind `kind` (cp_collide_ws: 0 a, 1 b, 2 grown): with a workspace, the
// primitive's geom kept in ws, created on first use and then given only the
// groups of parameters that changed since it was last set (the setters
// store exactly what the constructors do, so dCollide cannot tell the
// difference); otherwise, and for meshes, a new one (put_geom destroys it).
static dGeomID get_geom(cp_collide_ws *ws, int kind, const obj *o, double g,
                        const double *t) {
  cp_shape_type ty = o->s->type;
  double p[GEOM_NPARAMS];
  geom_params(o, g, t, p);
  if (!ws || ty == CP_SHAPE_MESH || ty == CP_SHAPE_NONE) return make_geom(o, p);
  void **slot = &ws->geom[kind][ty];
  double *last = ws->param[kind][ty];
  if (!*slot) {
    *slot = make_geom(o, p);
    memcpy(last, p, sizeof p);
    return (dGeomID)*slot;
  }
  dGeomID id = (dGeomID)*slot;
  if (!same_bits(p, last, GEOM_POS)) {
    set_geom(id, o, p, 0, GEOM_POS);
    memcpy(last, p, GEOM_POS * sizeof p[0]);
  }
  if (ty == CP_SHAPE_PLANE) return id; // not placeable
  if (!same_bits(p + GEOM_POS, last + GEOM_POS, GEOM_QUAT - GEOM_POS)) {
    set_geom(id, o, p, GEOM_POS, GEOM_QUAT);
    memcpy(last + GEOM_POS, p + GEOM_POS, (GEOM_QUAT - GEOM_POS) * sizeof p[0]);
  }
  if (!same_bits(p + GEOM_QUAT, last + GEOM_QUAT, GEOM_NPARAMS - GEOM_QUAT)) {
    set_geom(id, o, p, GEOM_QUAT, GEOM_NPARAMS);
    memcpy(last + GEOM_QUAT, p + GEOM_QUAT,
           (GEOM_NPARAMS - GEOM_QUAT) * sizeof p[0]);
  }
  return id;
}

// Done with a geom of get_geom: destroys it unless ws keeps it.
static void put_geom(const cp_collide_ws *ws, const obj *o, dGeomID id) {
  cp_shape_type ty = o->s->type;
  if (!ws || ty == CP_SHAPE_MESH || ty == CP_SHAPE_NONE) dGeomDestroy(id);
}

void cp_collide_ws_free(cp_collide_ws *ws) {
  if (!ws) return;
  for (int kind = 0; kind < CP_COLLIDE_WS_KINDS; ++kind)
    for (int t = 0; t < CP_COLLIDE_WS_TYPES; ++t)
      if (ws->geom[kind][t]) dGeomDestroy((dGeomID)ws->geom[kind][t]);
  memset(ws, 0, sizeof *ws);
}

// ---------------------------------------------------------------------------
// Initialisation: ODE once per process, its thread data once per thread, and
// a probe of which type pairs ODE has a collider for (dCollide returns 0 both
// for "apart" and for "no collider", so each pair is tried once overlapping).

#define NTYPES (CP_SHAPE_MESH + 1)
_Static_assert(NTYPES <= CP_COLLIDE_WS_TYPES, "cp_collide_ws has a slot per type");
static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static int g_ok;
static unsigned char g_supported[2][NTYPES][NTYPES]; // [hull][a][b]
static _Thread_local int t_ready;
static _Thread_local int t_checked; // this thread passed ensure_init once

// The probe's mesh: a closed cube of side 0.8 (built in init_once without
// cp_mesh, whose preparation needs the initialisation being done).
static const double g_cube_v[24] = {-.4, -.4, -.4, .4, -.4, -.4, .4, .4, -.4,
                                    -.4, .4,  -.4, -.4, -.4, .4, .4, -.4, .4,
                                    .4,  .4,  .4,  -.4, .4,  .4};
static const int g_cube_t[36] = {0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7,
                                 0, 1, 5, 0, 5, 4, 1, 2, 6, 1, 6, 5,
                                 2, 3, 7, 2, 7, 6, 3, 0, 4, 3, 4, 7};
// Its hull: the six faces (n, d) and their corners counter-clockwise.
static const double g_cube_planes[24] = {1, 0, 0, .4, -1, 0, 0, .4,
                                         0, 1, 0, .4, 0, -1, 0, .4,
                                         0, 0, 1, .4, 0, 0, -1, .4};
static const unsigned g_cube_polys[30] = {4, 1, 2, 6, 5, 4, 0, 4, 7, 3,
                                          4, 2, 3, 7, 6, 4, 0, 1, 5, 4,
                                          4, 4, 5, 6, 7, 4, 0, 3, 2, 1};
static cp_mesh g_probe_mesh;

static void *trimesh_data(const double *v, int nv, const int *t, int nt) {
  dTriMeshDataID d = dGeomTriMeshDataCreate();
  if (!d) return NULL;
  // ODE keeps pointers to the arrays (the mesh owns them) and needs
  // dTriIndex (32-bit unsigned in Debian's build) indices.
  _Static_assert(sizeof(dTriIndex) == sizeof(int), "32-bit triangle indices");
#ifdef dDOUBLE
  dGeomTriMeshDataBuildDouble(d, v, 3 * (int)sizeof(double), nv, t, 3 * nt,
                              3 * (int)sizeof(int));
#else
#error "complan needs ODE built in double precision for meshes"
#endif
  return d;
}

static void probe_shape(cp_shape *s, cp_shape_type t) {
  memset(s, 0, sizeof *s);
  s->type = t;
  s->mesh = &g_probe_mesh;
  s->size[0] = 1.0; s->size[1] = 0.8; s->size[2] = 0.6;
  s->radius = 0.4;
  s->length = 0.5;
  s->normal[2] = 1.0;
  s->offset = 0.1;
}

static int probe_pair(cp_shape_type ta, cp_shape_type tb, int hull) {
  cp_shape sa, sb;
  probe_shape(&sa, ta);
  probe_shape(&sb, tb);
  // A triangle mesh is a surface: put the other shape across it.
  int mesh = ta == CP_SHAPE_MESH || tb == CP_SHAPE_MESH;
  cp_collide_object oa = {&sa, {0, 0, 0}, {1, 0, 0, 0}};
  cp_collide_object ob = {&sb, {mesh ? 0.45 : 0.05, 0.03, 0.02},
                          {mesh ? 1 : 0.9, mesh ? 0 : 0.1, mesh ? 0 : 0.3,
                           mesh ? 0 : 0.2}};
  obj wa, wb;
  if (check_object(&oa, "a", &wa, NULL, NULL, NULL) ||
      check_object(&ob, "b", &wb, NULL, NULL, NULL))
    return 0;
  wa.hull = wb.hull = hull;
  static const double zero[3] = {0, 0, 0};
  dGeomID ga = get_geom(NULL, 0, &wa, 0, zero),
          gb = get_geom(NULL, 1, &wb, 0, zero);
  dContactGeom c[8];
  int k1 = dCollide(ga, gb, 8, c, (int)sizeof c[0]);
  int k2 = dCollide(gb, ga, 8, c, (int)sizeof c[0]);
  dGeomDestroy(ga);
  dGeomDestroy(gb);
  return k1 > 0 && k2 > 0;
}

static void init_once(void) {
  if (!dInitODE2(0) || !dAllocateODEDataForThread(dAllocateFlagCollisionData))
    return;
  t_ready = 1;
  g_probe_mesh.collide = trimesh_data(g_cube_v, 8, g_cube_t, 12);
  if (!g_probe_mesh.collide) return;
  g_probe_mesh.hull_n_planes = 6;
  g_probe_mesh.hull_n_points = 8;
  g_probe_mesh.hull_planes = (double *)g_cube_planes; // read only
  g_probe_mesh.hull_points = (double *)g_cube_v;
  g_probe_mesh.hull_polygons = (unsigned *)g_cube_polys;
  for (int h = 0; h < 2; ++h)
    for (int i = CP_SHAPE_BOX; i < NTYPES; ++i)
      for (int j = CP_SHAPE_BOX; j < NTYPES; ++j)
        g_supported[h][i][j] =
            (i == CP_SHAPE_PLANE && j == CP_SHAPE_PLANE) ||
                    (h && i != CP_SHAPE_MESH && j != CP_SHAPE_MESH)
                ? (h ? g_supported[0][i][j] : 0)
                : (unsigned char)probe_pair((cp_shape_type)i,
                                            (cp_shape_type)j, h);
  g_ok = 1;
}

static int ensure_init(cp_error *err) {
  // Every pair calls this: after the first success on a thread, the
  // initialisation (and g_ok) is known to be visible to it.
  if (t_checked) return 0;
  pthread_once(&g_once, init_once);
  if (!g_ok) return cp_error_set(err, "", "ODE initialisation failed");
  if (!t_ready) {
    if (!dAllocateODEDataForThread(dAllocateFlagCollisionData))
      return cp_error_set(err, "", "ODE thread data allocation failed");
    t_ready = 1;
  }
  t_checked = 1;
  return 0;
}

int cp_collide_mesh_prepare(cp_mesh *m, cp_error *err) {
  if (ensure_init(err)) return -1;
  m->collide = trimesh_data(m->vertices, m->n_vertices, m->triangles,
                            m->n_triangles);
  if (!m->collide)
    return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory preparing mesh %s", m->path);
  return 0;
}

void cp_collide_mesh_destroy(cp_mesh *m) {
  if (m && m->collide) dGeomTriMeshDataDestroy((dTriMeshDataID)m->collide);
  if (m) m->collide = NULL;
}

int cp_collide_supported(cp_shape_type a, cp_shape_type b) {
  if ((int)a < 0 || (int)a >= NTYPES || (int)b < 0 || (int)b >= NTYPES)
    return 0;
  if (a == CP_SHAPE_NONE || b == CP_SHAPE_NONE) return 1;
  if (ensure_init(NULL)) return 0;
  return g_supported[CP_COLLIDE_MESH_DEFAULT_HULL][a][b];
}

// ---------------------------------------------------------------------------

cp_collide_options cp_collide_defaults(void) {
  cp_collide_options o = {.touch_tol = 1e-6, .merge_tol = 1e-9,
                          .max_points = 16,
                          .mesh_hull = CP_COLLIDE_MESH_DEFAULT_HULL};
  return o;
}

// llround(v / SORT_QUANTUM), inline: below 2^52 the fraction x - trunc(x)
// is exact, and halves round away from zero as llround does.
static long long round_key(double v) {
  double x = v / SORT_QUANTUM;
  if (!(fabs(x) < 0x1p52)) return llround(x);
  long long t = (long long)x;
  double f = x - (double)t;
  return t + (f >= 0.5) - (f <= -0.5);
}

// Compares the keys round_key(u) and round_key(v) (-1, 0, 1). Most pairs
// are settled by u and v: within 1e6 m of the origin v / SORT_QUANTUM is
// within 0.11 of its exact value, so coordinates more than 4 quanta apart
// have keys at least 3 apart in the same order (rounding is monotone).
static inline int cmp_key(double u, double v) {
  if (u == v) return 0; // (corners of a face often share a coordinate)
  if (fabs(u) < 1e6 && fabs(v) < 1e6) {
    double d = u - v;
    if (d > 4 * SORT_QUANTUM) return 1;
    if (d < -4 * SORT_QUANTUM) return -1;
  }
  long long ku = round_key(u), kv = round_key(v);
  return ku < kv ? -1 : ku > kv;
}

// The output order: positions rounded to SORT_QUANTUM, lexicographically;
// then the deeper first; then the normal.
static inline int cmp_contact(const cp_collide_contact *a,
                       const cp_collide_contact *b) {
  for (int i = 0; i < 3; ++i) {
    int c = cmp_key(a->p[i], b->p[i]);
    if (c) return c;
  }
  if (a->depth != b->depth) return a->depth > b->depth ? -1 : 1;
  for (int i = 0; i < 3; ++i)
    if (a->n[i] != b->n[i]) return a->n[i] < b->n[i] ? -1 : 1;
  return 0;
}

// Sorts r[0..m) by cmp_contact, stably (equal ones keep their order, as
// with glibc's merge-sort qsort used before). Insertion: a pair has a few
// points, often already in order.
static void sort_contacts(cp_collide_contact *r, int m) {
  for (int i = 1; i < m; ++i) {
    if (cmp_contact(&r[i - 1], &r[i]) <= 0) continue;
    cp_collide_contact c = r[i];
    int j = i;
    for (; j > 0 && cmp_contact(&r[j - 1], &c) > 0; --j) r[j] = r[j - 1];
    r[j] = c;
  }
}

// 1 when box lies on the plane pl with a face down: that face within
// CP_COLLIDE_FLAT rad of parallel to the plane, its sides at least
// CP_COLLIDE_FLAT_SIDE long and projecting onto the plane's normal less
// than half as far as the box's height does (so that ODE's box-plane
// collider, which starts at the deepest corner and walks along the two
// sides of least projection, reports that face's corners).
#define CP_COLLIDE_FLAT 1e-9
static int face_down(const obj *box, const obj *pl) {
  const double *N = pl->N, *R = box->R, *sz = box->s->size;
  double aQ[3];
  int k = 0; // the axis along N
  for (int j = 0; j < 3; ++j) {
    aQ[j] = fabs(N[0] * R[j] + N[1] * R[3 + j] + N[2] * R[6 + j]);
    if (aQ[j] > aQ[k]) k = j;
  }
  const int i1 = k == 0 ? 1 : 0, i2 = k == 2 ? 1 : 2;
  return aQ[i1] <= CP_COLLIDE_FLAT && aQ[i2] <= CP_COLLIDE_FLAT &&
         sz[i1] >= CP_COLLIDE_FLAT_SIDE && sz[i2] >= CP_COLLIDE_FLAT_SIDE &&
         sz[k] * aQ[k] > 2 * (sz[i1] * aQ[i1] + sz[i2] * aQ[i2]);
}

// The contacts of a box lying face down on a plane (face_down), straight
// from the pose: the corners c of the face towards the plane that lie
// within tol of it, each with depth D - N.c and moved halfway to the plane
// (c + N depth / 2), normal N. Step 3 would put ODE's points there too (the
// line along N from a corner enters the box at that corner and leaves the
// plane at the plane); this skips ODE, the line tests and the merge (the
// corners are >= CP_COLLIDE_FLAT_SIDE apart, more than twice merge_tol:
// the caller checks that). Writes up to 4 contacts to r; returns how many.
static int face_down_contacts(const obj *box, const obj *pl, double tol,
                              cp_collide_contact *r) {
  const double *N = pl->N, *R = box->R, *sz = box->s->size;
  double dQ[3], aQ[3];
  int k = 0;
  for (int j = 0; j < 3; ++j) {
    dQ[j] = N[0] * R[j] + N[1] * R[3 + j] + N[2] * R[6 + j];
    aQ[j] = fabs(dQ[j]);
    if (aQ[j] > aQ[k]) k = j;
  }
  const int i1 = k == 0 ? 1 : 0, i2 = k == 2 ? 1 : 2;
  double loc[3];
  loc[k] = dQ[k] > 0 ? -0.5 * sz[k] : 0.5 * sz[k]; // the face towards -N
  int m = 0;
  for (int c = 0; c < 4; ++c) {
    loc[i1] = (c & 1) ? 0.5 * sz[i1] : -0.5 * sz[i1];
    loc[i2] = (c & 2) ? 0.5 * sz[i2] : -0.5 * sz[i2];
    double p[3];
    cp_m3_mulv(p, R, loc);
    cp_v3_add(p, p, box->x);
    const double depth = pl->D - cp_v3_dot(N, p);
    if (!(depth >= -tol)) continue; // farther than touch_tol
    cp_collide_contact *o = &r[m++];
    cp_v3_axpy(o->p, p, 0.5 * depth, N);
    cp_v3_copy(o->n, N);
    o->depth = depth;
  }
  return m;
}

// 1 when a and b are certainly farther apart than tol, so that ODE finds
// no contact: for two boxes, step 1's box-box test of a grown by tol and b
// (ODE's dBoxBox returns nothing as soon as one axis separates them; these
// are its six face axes); for a box and a plane, step 2's (ODE's box-plane
// test returns nothing when the box's lowest point, moved by tol towards
// the plane, is above it). "Certainly": by more than margin, far above the
// rounding of either computation (1e-16 relative). Other pairs: 0.
// The margin of clearly_apart: 1e-9 m plus 1e-12 of the positions, sizes
// and tol (whose rounding is 1e-16 of them).
static double apart_margin(const obj *a, const obj *b, double tol) {
  double scale = tol;
  for (int i = 0; i < 3; ++i)
    scale += fabs(a->x[i]) + fabs(b->x[i]) + a->s->size[i] + b->s->size[i];
  if (a->s->type == CP_SHAPE_PLANE) scale += fabs(a->D);
  if (b->s->type == CP_SHAPE_PLANE) scale += fabs(b->D);
  return 1e-9 + 1e-12 * scale;
}

static int clearly_apart(const obj *a, const obj *b, double tol) {
  cp_shape_type ta = a->s->type, tb = b->s->type;
  if (ta == CP_SHAPE_BOX && tb == CP_SHAPE_BOX) {
    double c[3];
    cp_v3_sub(c, b->x, a->x);
    // Axes e_i (a's, R's columns) and f_j (b's); Q_ij = |e_i . f_j|; half
    // sizes ha of a grown by tol, hb of b.
    // Row i of Q is computed when a's axis i is tried (most pairs are
    // settled by their first axes); the answer does not depend on the
    // order of the axes, and every number is the same expression.
    double ha[3], hb[3], Q[3][3], margin = -1;
    for (int i = 0; i < 3; ++i) {
      ha[i] = 0.5 * a->s->size[i] + tol;
      hb[i] = 0.5 * b->s->size[i];
    }
    for (int i = 0; i < 3; ++i) {
      for (int j = 0; j < 3; ++j)
        Q[i][j] = fabs(a->R[i] * b->R[j] + a->R[3 + i] * b->R[3 + j] +
                       a->R[6 + i] * b->R[6 + j]);
      double ca = c[0] * a->R[i] + c[1] * a->R[3 + i] + c[2] * a->R[6 + i];
      double gap = fabs(ca) - ha[i] -
                   (hb[0] * Q[i][0] + hb[1] * Q[i][1] + hb[2] * Q[i][2]);
      if (gap > 1e-9 && gap > (margin < 0 ? (margin = apart_margin(a, b, tol)) : margin))
        return 1;
    }
    for (int j = 0; j < 3; ++j) {
      double cb = c[0] * b->R[j] + c[1] * b->R[3 + j] + c[2] * b->R[6 + j];
      double gap = fabs(cb) - hb[j] -
                   (ha[0] * Q[0][j] + ha[1] * Q[1][j] + ha[2] * Q[2][j]);
      if (gap > 1e-9 && gap > (margin < 0 ? (margin = apart_margin(a, b, tol)) : margin))
        return 1;
    }
    return 0;
  }
  if ((ta == CP_SHAPE_BOX && tb == CP_SHAPE_PLANE) ||
      (ta == CP_SHAPE_PLANE && tb == CP_SHAPE_BOX)) {
    const obj *box = ta == CP_SHAPE_BOX ? a : b, *pl = box == a ? b : a;
    double h = cp_v3_dot(pl->N, box->x) - pl->D - tol;
    for (int j = 0; j < 3; ++j)
      h -= 0.5 * box->s->size[j] *
           fabs(pl->N[0] * box->R[j] + pl->N[1] * box->R[3 + j] +
                pl->N[2] * box->R[6 + j]);
    return h > 1e-9 && h > apart_margin(a, b, tol);
  }
  return 0;
}

// Step 1 for two boxes without ODE's clipping. ODE's box-box collider
// (dBoxBox) tries 15 separating axes, the 6 face normals and then the 9
// edge-edge cross products (their separation divided by the axis's length,
// skipped when that is below DBL_EPSILON, and compared scaled by 1.05 so
// that a face wins a near-tie), returns nothing when one separates the
// boxes, and gives every contact the normal of the axis of least overlap.
// Step 1 keeps only that normal, yet ODE also clips the faces to find the
// points. Here the 15 axes are evaluated with the expressions ODE's
// collider uses (the same products and sums in the same order, on the
// geoms' own position, rotation and lengths), so the winner, its sign and
// the normal are ODE's bits (tests/models/test_boxbox.c). The answer is
// given only for a face winner (ODE then clips the faces), when the faces
// are parallel to within 1e-6 rad and the overlap far exceeds that tilt
// times the boxes' size: every point of the incident face then lies below
// the reference face and the faces' overlap is not empty, so ODE's clipping
// finds points. Then *n is the
// normal ODE gives the contacts (from b into a) and 1 is returned; 0 means
// "ask ODE".
static int box_box_normal(dGeomID ga, dGeomID gb, double *n) {
  const dReal *p1 = dGeomGetPosition(ga), *R1 = dGeomGetRotation(ga),
              *p2 = dGeomGetPosition(gb), *R2 = dGeomGetRotation(gb);
  dVector3 s1, s2;
  dGeomBoxGetLengths(ga, s1);
  dGeomBoxGetLengths(gb, s2);
  dReal p[3], pp[3], A[3], B[3], R[3][3], Q[3][3];
  for (int i = 0; i < 3; ++i) p[i] = p2[i] - p1[i];
  for (int i = 0; i < 3; ++i) {
    pp[i] = R1[i] * p[0] + R1[i + 4] * p[1] + R1[i + 8] * p[2];
    A[i] = s1[i] * (dReal)0.5;
    B[i] = s2[i] * (dReal)0.5;
  }
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      R[i][j] = R1[i] * R2[j] + R1[i + 4] * R2[j + 4] + R1[i + 8] * R2[j + 8];
      Q[i][j] = fabs(R[i][j]);
    }
  // The face axes in ODE's order: a's 0, 1, 2, then b's.
  dReal s = -INFINITY;
  int win = -1, inv = 0;
  for (int k = 0; k < 6; ++k) {
    dReal x, r;
    if (k < 3) {
      x = pp[k];
      r = A[k] + B[0] * Q[k][0] + B[1] * Q[k][1] + B[2] * Q[k][2];
    } else {
      const int j = k - 3;
      x = R2[j] * p[0] + R2[j + 4] * p[1] + R2[j + 8] * p[2];
      r = A[0] * Q[0][j] + A[1] * Q[1][j] + A[2] * Q[2][j] + B[j];
    }
    const dReal s2k = fabs(x) - r;
    if (s2k > 0) return 0; // separated (ODE: no contacts; the caller asks it)
    if (s2k > s) s = s2k, win = k, inv = x < 0;
  }
  // The edge axes e_i x f_j in ODE's order (i, then j), in a's frame
  // (f_j = column j of R); the terms of the sums in increasing index.
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) {
      const int i1 = (i + 1) % 3, i2 = (i + 2) % 3, ilo = i1 < i2 ? i1 : i2,
                ihi = i1 ^ i2 ^ ilo, j1 = (j + 1) % 3, j2 = (j + 2) % 3,
                jlo = j1 < j2 ? j1 : j2, jhi = j1 ^ j2 ^ jlo;
      const dReal x = pp[i2] * R[i1][j] - pp[i1] * R[i2][j];
      const dReal r = A[ilo] * Q[ihi][j] + A[ihi] * Q[ilo][j] +
                      B[jlo] * Q[i][jhi] + B[jhi] * Q[i][jlo];
      dReal ax[3];
      ax[i] = 0;
      ax[i1] = -R[i2][j];
      ax[i2] = R[i1][j];
      dReal s2e = fabs(x) - r;
      if (s2e > DBL_EPSILON) return 0;
      const dReal l = sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);
      if (!(l > DBL_EPSILON)) continue;
      s2e /= l;
      if (s2e * (dReal)1.05 > s) s = s2e, win = 6 + 3 * i + j;
    }
  if (win >= 6) return 0; // an edge (ODE may yet find no contact: ask it)
  {
    // A face: only when ODE's clipping certainly finds points.
    double size = 0;
    for (int i = 0; i < 3; ++i) size += s1[i] + s2[i];
    const double marg = 1e-9 + 1e-12 * (size + fabs(pp[0]) + fabs(pp[1]) + fabs(pp[2]));
    double qmax = 0; // the winner's axis against the other box's nearest
    for (int j = 0; j < 3; ++j)
      qmax = fmax(qmax, win < 3 ? Q[win][j] : Q[j][win - 3]);
    const double tilt = sqrt(fmax(0.0, 2 * (1 - qmax))) + 1e-12;
    if (!(tilt < 1e-6) || !(-s > marg + 4 * tilt * size)) return 0;
    const dReal *col = win < 3 ? R1 + win : R2 + (win - 3);
    for (int i = 0; i < 3; ++i) n[i] = (double)col[4 * i];
  }
  // ODE's normal is minus this when the offset along the axis is negative;
  // its contacts carry the opposite.
  if (!inv)
    for (int i = 0; i < 3; ++i) n[i] = -n[i];
  return 1;
}

// The parts ODE is asked about for o when its partner has type other: o
// itself, and for a capsule against a box or cylinder also the balls at its
// two ends (ODE's capsule-box and capsule-cylinder colliders give a single
// point, so a capsule lying on a face would get one contact, not the two
// ends of its line contact). Points out[] at 1 or 3 parts: o, then ends[0]
// and ends[1]; *ball is the balls' shape (ends and ball must live as long
// as out).
static int parts(const obj *o, cp_shape_type other, const obj **out,
                 obj *ends, cp_shape *ball) {
  out[0] = o;
  if (o->s->type != CP_SHAPE_CAPSULE ||
      (other != CP_SHAPE_BOX && other != CP_SHAPE_CYLINDER))
    return 1;
  memset(ball, 0, sizeof *ball);
  ball->type = CP_SHAPE_SPHERE;
  ball->radius = o->s->radius;
  for (int e = 0; e < 2; ++e) {
    obj *b = &ends[e];
    *b = *o;
    b->s = ball;
    double h = (e ? -0.5 : 0.5) * o->s->length;
    // end = x + h * (R z)
    for (int i = 0; i < 3; ++i) b->x[i] = o->x[i] + h * o->R[3 * i + 2];
    out[1 + e] = b;
  }
  return 3;
}

// Keeps k of the m contacts: the deepest, then repeatedly the one farthest
// from those kept (deterministic: ties go to the earlier one).
static int cull(cp_collide_contact *r, int m, int k) {
  cp_collide_contact keep[CP_COLLIDE_MAX_POINTS];
  unsigned char used[4 * CP_COLLIDE_MAX_POINTS] = {0};
  int first = 0;
  for (int i = 1; i < m; ++i)
    if (r[i].depth > r[first].depth) first = i;
  keep[0] = r[first];
  used[first] = 1;
  for (int n = 1; n < k; ++n) {
    int best = -1;
    double bestd = -1;
    for (int i = 0; i < m; ++i) {
      if (used[i]) continue;
      double dmin = INFINITY;
      for (int j = 0; j < n; ++j) {
        double d[3];
        cp_v3_sub(d, r[i].p, keep[j].p);
        dmin = fmin(dmin, cp_v3_norm(d));
      }
      if (dmin > bestd) { bestd = dmin; best = i; }
    }
    keep[n] = r[best];
    used[best] = 1;
  }
  memcpy(r, keep, (size_t)k * sizeof r[0]);
  return k;
}

// r[m] is a new contact: merges it into an earlier one closer than
// merge_tol (keeping the deeper) or keeps it. Returns the new count.
static int merge_last(cp_collide_contact *r, int m, double merge_tol) {
  // |d| >= |d_i| in floating point too (sqrt(fl(x x)) = |x| when x x
  // neither underflows nor overflows; adding squares only grows the sum):
  // a coordinate differing by more than lim settles "not within merge_tol"
  // without the norm.
  const double lim = merge_tol > 1e-150 ? merge_tol : 1e-150;
  for (int j = 0; j < m; ++j) {
    double d[3];
    cp_v3_sub(d, r[j].p, r[m].p);
    if (fabs(d[0]) > lim || fabs(d[1]) > lim || fabs(d[2]) > lim) continue;
    if (cp_v3_norm(d) <= merge_tol) {
      if (r[m].depth > r[j].depth) r[j] = r[m];
      return m;
    }
  }
  return m + 1;
}

// Step 4's ending: the deterministic order, culling to max_points, copy.
static int finish(cp_collide_contact *r, int m, const cp_collide_options *opt,
                  cp_collide_contact *out, int cap) {
  sort_contacts(r, m);
  if (m > opt->max_points) {
    m = cull(r, m, opt->max_points);
    sort_contacts(r, m);
  }
  if (m > 0 && cap > 0)
    memcpy(out, r, (size_t)(m < cap ? m : cap) * sizeof r[0]);
  return m;
}

// ---------------------------------------------------------------------------
// Two meshes: their convex hulls, by separating axes over the hulls' face
// normals and the vertices of each hull that lie within touch_tol of the
// other (ODE's triangle-mesh pair gives normals along edges with depths of
// the meshes' size, and its convex pair one point for a face contact).

// World coordinates of a hull's vertices (malloc'd [3 n]) and planes
// (malloc'd [4 nf], world n.x = d).
static int hull_world(const obj *o, double **pts, double **pls) {
  const cp_mesh *m = o->s->mesh;
  *pts = malloc((size_t)m->hull_n_points * 3 * sizeof **pts);
  *pls = malloc((size_t)m->hull_n_planes * 4 * sizeof **pls);
  if (!*pts || !*pls) {
    free(*pts), free(*pls);
    return -1;
  }
  double c[3]; // world position of the hull's centre
  cp_m3_mulv(c, o->R, m->hull_center);
  cp_v3_add(c, c, o->x);
  for (int i = 0; i < m->hull_n_points; ++i) {
    double t[3];
    cp_m3_mulv(t, o->R, m->hull_points + 3 * i);
    cp_v3_add(*pts + 3 * i, c, t);
  }
  for (int f = 0; f < m->hull_n_planes; ++f) {
    double *w = *pls + 4 * f;
    cp_m3_mulv(w, o->R, m->hull_planes + 4 * f);
    w[3] = m->hull_planes[4 * f + 3] + cp_v3_dot(w, c);
  }
  return 0;
}

// Largest signed separation along the outward face normals of P (planes pl,
// nf) of the points q (nq): max_f (min_j n_f.q_j - d_f); *best = f.
static double face_separation(const double *pl, int nf, const double *q,
                              int nq, int *best) {
  double sep = -INFINITY;
  for (int f = 0; f < nf; ++f) {
    double mn = INFINITY;
    for (int j = 0; j < nq; ++j) mn = fmin(mn, cp_v3_dot(pl + 4 * f, q + 3 * j));
    if (mn - pl[4 * f + 3] > sep) sep = mn - pl[4 * f + 3], *best = f;
  }
  return sep;
}

// Raw contacts (point, normal n from b into a) of two hulls into c[0..cap):
// the vertices of each inside the other grown by tol. Returns the count, 0
// when a separating face normal keeps them farther apart than tol, -1 out
// of memory.
static int hull_pair(const obj *a, const obj *b, double tol, double *n,
                     cp_collide_contact *c, int cap) {
  double *pa, *la, *pb, *lb;
  if (hull_world(a, &pa, &la)) return -1;
  if (hull_world(b, &pb, &lb)) {
    free(pa), free(la);
    return -1;
  }
  const cp_mesh *ma = a->s->mesh, *mb = b->s->mesh;
  int fa = 0, fb = 0, k = 0;
  double sa = face_separation(la, ma->hull_n_planes, pb, mb->hull_n_points, &fa);
  double sb = face_separation(lb, mb->hull_n_planes, pa, ma->hull_n_points, &fb);
  if (sa > tol || sb > tol) goto done;
  // n from b into a: b's outward normal, or minus a's.
  if (sb >= sa) cp_v3_copy(n, lb + 4 * fb);
  else cp_v3_scale(n, la + 4 * fa, -1.0);
  for (int side = 0; side < 2; ++side) {
    const double *P = side ? pb : pa, *L = side ? la : lb;
    int np = side ? mb->hull_n_points : ma->hull_n_points;
    int nf = side ? ma->hull_n_planes : mb->hull_n_planes;
    for (int i = 0; i < np && k < cap; ++i) {
      int in = 1;
      for (int f = 0; f < nf && in; ++f)
        in = cp_v3_dot(L + 4 * f, P + 3 * i) - L[4 * f + 3] <= tol;
      if (!in) continue;
      cp_v3_copy(c[k].p, P + 3 * i);
      cp_v3_copy(c[k].n, n);
      c[k++].depth = 0; // found from the shapes below
    }
  }
done:
  free(pa), free(la), free(pb), free(lb);
  return k;
}

// Two meshes with hulls (see hull_pair): points moved to the midpoint of
// the surfaces along n, depth the overlap along n; then merged, sorted and
// culled as in step 4.
static int mesh_pair(obj *wa, obj *wb, const cp_collide_options *opt,
                     cp_collide_contact *out, int cap, cp_error *err) {
  enum { NBUF = 4 * CP_COLLIDE_MAX_POINTS };
  const double eps = 1e-9;
  cp_collide_contact raw[NBUF], r[NBUF];
  double n[3];
  wa->hull = wb->hull = 1;
  int k = hull_pair(wa, wb, opt->touch_tol, n, raw, NBUF);
  if (k < 0) return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  int m = 0;
  for (int i = 0; i < k; ++i) {
    cp_collide_contact *o = &r[m];
    *o = raw[i];
    double la, ha, lb, hb;
    if (!line_interval(wa, o->p, n, eps, &la, &ha) ||
        !line_interval(wb, o->p, n, eps, &lb, &hb))
      continue; // a vertex grazing the other hull's silhouette
    o->depth = hb - la;
    if (o->depth < -opt->touch_tol) continue;
    cp_v3_axpy(o->p, o->p, 0.5 * (la + hb), n);
    m = merge_last(r, m, opt->merge_tol);
  }
  return finish(r, m, opt, out, cap);
}

static int pair_checked(const obj *wa, const obj *wb, const cp_collide_options *opt,
                        cp_collide_ws *ws, cp_collide_contact *out, int cap,
                        cp_error *err);

int cp_collide_pair(const cp_collide_object *a, const cp_collide_object *b,
                    const cp_collide_options *opt, cp_collide_contact *out,
                    int cap, cp_error *err) {
  return cp_collide_pair_ws(a, b, opt, NULL, out, cap, err);
}

int cp_collide_pair_ws(const cp_collide_object *a, const cp_collide_object *b,
                       const cp_collide_options *opt, cp_collide_ws *ws,
                       cp_collide_contact *out, int cap, cp_error *err) {
  cp_collide_options def = cp_collide_defaults();
  if (!opt) opt = &def;
  if (!isfinite(opt->touch_tol) || opt->touch_tol < 0 ||
      !isfinite(opt->merge_tol) || opt->merge_tol < 0 || opt->max_points < 1 ||
      opt->max_points > CP_COLLIDE_MAX_POINTS)
    return cp_error_set(err, "options",
                        "need touch_tol >= 0, merge_tol >= 0 and "
                        "1 <= max_points <= %d",
                        CP_COLLIDE_MAX_POINTS);
  if (cap < 0 || (cap > 0 && !out))
    return cp_error_set(err, "out", "need cap >= 0 and an output array");
  obj wa, wb;
  if (check_object(a, "a", &wa, ws ? ws->pose[0] : NULL,
                   ws ? &ws->pose_set[0] : NULL, err) ||
      check_object(b, "b", &wb, ws ? ws->pose[1] : NULL,
                   ws ? &ws->pose_set[1] : NULL, err))
    return -1;
  return pair_checked(&wa, &wb, opt, ws, out, cap, err);
}

int cp_collide_box_box_step1(const cp_collide_object *a,
                             const cp_collide_object *b, double tol,
                             double n_fast[3], double n_ode[3]) {
  obj wa, wb;
  if (!a || !b || !a->shape || !b->shape || a->shape->type != CP_SHAPE_BOX ||
      b->shape->type != CP_SHAPE_BOX ||
      check_object(a, "a", &wa, NULL, NULL, NULL) ||
      check_object(b, "b", &wb, NULL, NULL, NULL) || ensure_init(NULL))
    return -1;
  static const double zero[3] = {0, 0, 0};
  dGeomID ga = get_geom(NULL, 2, &wa, tol, zero), gb = get_geom(NULL, 1, &wb, 0, zero);
  int r = box_box_normal(ga, gb, n_fast) ? 1 : 0;
  dContactGeom c[CP_COLLIDE_MAX_POINTS];
  int k = dCollide(ga, gb, CP_COLLIDE_MAX_POINTS, c, (int)sizeof c[0]), deepest = -1;
  for (int i = 0; i < k; ++i)
    if (deepest < 0 || c[i].depth > c[deepest].depth) deepest = i;
  if (deepest >= 0) {
    for (int i = 0; i < 3; ++i) n_ode[i] = (double)c[deepest].normal[i];
    r |= 2;
  }
  dGeomDestroy(ga);
  dGeomDestroy(gb);
  return r;
}

void cp_collide_pose(const cp_collide_object *o, cp_collide_posed *p) {
  memset(p, 0, sizeof *p);
  if (o) p->o = *o;
  p->valid = o && !check_object(o, "a", p, NULL, NULL, NULL);
}

int cp_collide_pair_posed(const cp_collide_posed *a, const cp_collide_posed *b,
                          const cp_collide_options *opt, cp_collide_ws *ws,
                          cp_collide_contact *out, int cap, cp_error *err) {
  if (!opt || !a->valid || !b->valid || cap < 0 || (cap > 0 && !out) ||
      !isfinite(opt->touch_tol) || opt->touch_tol < 0 ||
      !isfinite(opt->merge_tol) || opt->merge_tol < 0 || opt->max_points < 1 ||
      opt->max_points > CP_COLLIDE_MAX_POINTS) // its checks and errors
    return cp_collide_pair_ws(&a->o, &b->o, opt, ws, out, cap, err);
  return pair_checked(a, b, opt, ws, out, cap, err);
}

// cp_collide_pair_ws once the options and both objects are checked.
static int pair_checked(const obj *wa, const obj *wb, const cp_collide_options *opt,
                        cp_collide_ws *ws, cp_collide_contact *out, int cap,
                        cp_error *err) {
  cp_shape_type ta = wa->s->type, tb = wb->s->type;
  obj ma, mb; // copies of a pair with a mesh (its hull flag is set below)
  if (ta == CP_SHAPE_MESH || tb == CP_SHAPE_MESH) {
    ma = *wa, mb = *wb;
    wa = &ma, wb = &mb;
  }
  if (ta == CP_SHAPE_NONE || tb == CP_SHAPE_NONE) return 0;
  if (ensure_init(err)) return -1;
  // Two meshes: their hulls, always (see mesh_pair).
  if (ta == CP_SHAPE_MESH && tb == CP_SHAPE_MESH &&
      wa->s->mesh->hull_n_planes && wb->s->mesh->hull_n_planes)
    return mesh_pair(&ma, &mb, opt, out, cap, err);
  // Mesh and primitive: hulls when asked for and the mesh has one (a flat
  // mesh has none and stays a triangle mesh).
  int hull = opt->mesh_hull != 0;
  if (ta == CP_SHAPE_MESH && !wa->s->mesh->hull_n_planes) hull = 0;
  if (tb == CP_SHAPE_MESH && !wb->s->mesh->hull_n_planes) hull = 0;
  if (ta == CP_SHAPE_MESH) ma.hull = hull;
  if (tb == CP_SHAPE_MESH) mb.hull = hull;
  int has_mesh = ta == CP_SHAPE_MESH || tb == CP_SHAPE_MESH;
  if (!g_supported[has_mesh && hull][ta][tb])
    return cp_error_set(err, "", "no contact generation for the pair %s-%s",
                        cp_shape_type_name(ta), cp_shape_type_name(tb));

  const double tol = opt->touch_tol;
  if (clearly_apart(wa, wb, tol)) return 0; // what ODE would find, sooner
  // A box face down on a plane: its corners from the pose (no ODE).
  if (ta == CP_SHAPE_BOX && tb == CP_SHAPE_PLANE &&
      opt->merge_tol < 0.5 * CP_COLLIDE_FLAT_SIDE && face_down(wa, wb)) {
    cp_collide_contact r[4];
    const int m = finish(r, face_down_contacts(wa, wb, tol, r), opt, out, cap);
    if (ws && m == 4) ++ws->flat;
    return m;
  }
  // Lines through contact points graze edges to within rounding.
  const double eps = 1e-9;
  static const double zero[3] = {0, 0, 0};
  enum { NBUF = 4 * CP_COLLIDE_MAX_POINTS };
  dContactGeom c[NBUF];
  const int skip = (int)sizeof c[0];

  // 1. Direction n (from b into a).
  double n[3];
  double shift = tol; // step 2's (below)
  int b_posed = 0; // ws's geom of b already has step 2's parameters
  if (tb == CP_SHAPE_PLANE) {
    cp_v3_copy(n, wb->N);
  } else if (ta == CP_SHAPE_PLANE) {
    cp_v3_scale(n, wa->N, -1.0);
  } else {
    // Grow a by tol; a mesh cannot grow, so grow b instead (two meshes:
    // neither -- they must overlap, not merely come within tol).
    // The grown one has its own kind of kept geom (2): step 2 collides its
    // true size, and the next pair most likely has the same grown size.
    int grow_b = ta == CP_SHAPE_MESH, gb_grown = grow_b && tb != CP_SHAPE_MESH;
    dGeomID ga = get_geom(ws, grow_b ? 0 : 2, wa, grow_b ? 0 : tol, zero),
            gb = get_geom(ws, gb_grown ? 2 : 1, wb, gb_grown ? tol : 0, zero);
    // Two boxes: the normal without ODE's clipping when that is certain.
    const int bb = ta == CP_SHAPE_BOX && tb == CP_SHAPE_BOX && box_box_normal(ga, gb, n);
    int k = bb ? 1 : dCollide(ga, gb, CP_COLLIDE_MAX_POINTS, c, skip);
    put_geom(ws, wa, ga);
    put_geom(ws, wb, gb);
    b_posed = !gb_grown;
    int deepest = -1;
    for (int i = 0; i < k && !bb; ++i)
      if (deepest < 0 || c[i].depth > c[deepest].depth) deepest = i;
    if (!bb && deepest < 0) return 0; // farther apart than touch_tol
    if (!bb)
      cp_v3_set(n, (double)c[deepest].normal[0], (double)c[deepest].normal[1],
                (double)c[deepest].normal[2]);
    double nn = cp_v3_norm(n);
    if (!isfinite(nn) || nn < 0.5)
      return cp_error_set(err, "", "ODE returned a degenerate normal");
    cp_v3_scale(n, n, 1.0 / nn);
    // A triangle mesh against a primitive: ODE gives each triangle that
    // overlaps the other shape the axis of its least overlap, so a shift
    // by a tol larger than the mesh's features (a simulator's look-ahead:
    // centimetres) buries whole faces and reports their sides as overlaps
    // along the sides' normals (a bar passing beside a box "1.3 mm into"
    // it across its width). The shift is cut to the gap step 1 measured
    // (tol - its depth) plus CP_COLLIDE_MESH_REACH: the closest features
    // and those within that reach of them.
    if (has_mesh)
      shift = fmin(tol, fmax(0.0, tol - c[deepest].depth) +
                            fmin(tol, CP_COLLIDE_MESH_REACH));
  }

  // 2. Contacts with a moved by -shift n, part by part (see parts()).
  double t[3];
  cp_v3_scale(t, n, -shift);
  const obj *pa[3], *pb[3];
  obj enda[2], endb[2];
  cp_shape balla, ballb;
  int na = parts(wa, tb, pa, enda, &balla),
      nb = parts(wb, ta, pb, endb, &ballb);
  // With ws, b itself (part 0, a primitive: its own slot) is posed once
  // here, or not at all when step 1 left its geom as needed. (A capsule's
  // two end balls share the sphere slot: they are posed in turn below.)
  dGeomID gbs[3] = {0, 0, 0};
  if (ws && tb != CP_SHAPE_MESH)
    gbs[0] = b_posed ? (dGeomID)ws->geom[1][tb] : get_geom(ws, 1, pb[0], 0, zero);
  int k = 0;
  for (int i = 0; i < na; ++i)
    for (int j = 0; j < nb; ++j) {
      // Ask for all ODE has (culled below), so that ODE's own culling
      // (box-plane keeps the deepest corner and its neighbours) never acts.
      int room = NBUF - k < CP_COLLIDE_MAX_POINTS ? NBUF - k
                                                  : CP_COLLIDE_MAX_POINTS;
      if (room < 1) continue;
      dGeomID ga = get_geom(ws, 0, pa[i], 0, t),
              gb = gbs[j] ? gbs[j] : get_geom(ws, 1, pb[j], 0, zero);
      k += dCollide(ga, gb, room, c + k, skip);
      put_geom(ws, pa[i], ga);
      if (!gbs[j]) put_geom(ws, pb[j], gb);
    }

  // 3. Convert; move each point to the midpoint of the surfaces along n.
  obj was; // a cylinder a where ODE saw it
  if (ta == CP_SHAPE_CYLINDER) {
    was = *wa;
    cp_v3_add(was.x, wa->x, t);
  }
  cp_collide_contact r[NBUF];
  int m = 0;
  for (int i = 0; i < k; ++i) {
    cp_collide_contact *o = &r[m];
    for (int j = 0; j < 3; ++j) {
      o->p[j] = (double)c[i].pos[j];
      o->n[j] = (double)c[i].normal[j];
    }
    o->depth = (double)c[i].depth - shift;
    double nn = cp_v3_norm(o->n);
    if (!cp_v3_isfinite(o->p) || !isfinite(o->depth) || !isfinite(nn) ||
        nn < 0.5)
      return cp_error_set(err, "", "ODE returned a degenerate contact");
    // ODE's mesh colliders also report features that merely meet (depth
    // 0 after the shift, up to rounding): a gap of exactly touch_tol,
    // duplicates of the true points. Keep what overlaps after the shift by
    // more than a thousandth of it.
    if (has_mesh && !(c[i].depth > 1e-3 * shift)) continue;
    cp_v3_scale(o->n, o->n, 1.0 / nn);
    if (ta == CP_SHAPE_CYLINDER) onto_cylinder(&was, o->p); // as ODE saw a
    if (tb == CP_SHAPE_CYLINDER) onto_cylinder(wb, o->p);
    // Along the line p + s n, a's surface facing b is where the line enters
    // a (sa), b's surface facing a where it leaves b (sb).
    double la, ha, lb, hb;
    int hita = line_interval(wa, o->p, o->n, eps, &la, &ha) && isfinite(la);
    int hitb = line_interval(wb, o->p, o->n, eps, &lb, &hb) && isfinite(hb);
    double mv = 0;
    if (hita && hitb)
      mv = 0.5 * (la + hb);
    else if (hita)
      mv = la + 0.5 * o->depth;
    else if (hitb)
      mv = hb - 0.5 * o->depth;
    cp_v3_axpy(o->p, o->p, mv, o->n);
    // 4. Merge with an earlier point closer than merge_tol (keep the deeper).
    m = merge_last(r, m, opt->merge_tol);
  }
  m = finish(r, m, opt, out, cap);
  // A box face down on a plane: its four corners, a rectangle that no
  // merge (merge_tol below half its shortest side) has touched. Counted for
  // the caller (cp_collide_ws.flat).
  if (ws && m == 4 && ta == CP_SHAPE_BOX && tb == CP_SHAPE_PLANE &&
      opt->merge_tol < 0.5 * CP_COLLIDE_FLAT_SIDE && face_down(wa, wb))
    ++ws->flat;
  return m;
}
