/* The paper's random problems (experiments/study/study.h): geometry, velocities,
 * the scene as JSON, and the LCP through models/ and contact/.
 *
 * Every random draw comes from a splitmix64 stream seeded by (seed, problem,
 * attempt), in a fixed order, so a (problem, seed) pair always gives the same
 * scene text. The geometry is built move by move; a move that overlaps
 * anything, touches anything it does not list a contact with, or overshoots
 * the contact budget is undone. */
#include "experiments/study/study.h"

#include <jansson.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/problem.h"
#include "models/collide.h"
#include "models/vec3.h"

/* ------------------------------------------------------------------------ */
/* The study's problems                                                     */
/* ------------------------------------------------------------------------ */

/* Sizes spread over 2..170 like the paper's Table 1 (its sizes 2, 10, 16,
 * 30, 50, 90, 120, 150, 170 with about the paper's numbers of problems), the
 * three problems of Tables 2-4 with their nb, nS, nR, and sizes in between.
 * Ordered by size, so that `--problems N` runs the N smallest. */
static const cp_paper_spec specs[CP_PAPER_PROBLEMS] = {
    {2, 1, 2, "paper Table 3 (size 2)"},
    {2, 0, -1, NULL},
    {6, 0, -1, NULL},
    {10, 0, -1, NULL},
    {10, 0, -1, NULL},
    {10, 0, -1, NULL},
    {10, 0, -1, NULL},
    {10, 0, -1, NULL},
    {10, 0, -1, NULL},
    {14, 0, -1, NULL},
    {16, 0, -1, NULL},
    {20, 0, -1, NULL},
    {22, 0, -1, NULL},
    {26, 4, 6, "paper Table 2"},
    {26, 0, -1, NULL},
    {30, 5, 5, "paper Table 3 (size 30)"},
    {30, 0, -1, NULL},
    {30, 0, -1, NULL},
    {38, 0, -1, NULL},
    {42, 0, -1, NULL},
    {50, 0, -1, NULL},
    {50, 0, -1, NULL},
    {55, 1, 5, "paper Table 4"},
    {66, 0, -1, NULL},
    {74, 0, -1, NULL},
    {90, 0, -1, NULL},
    {90, 0, -1, NULL},
    {100, 0, -1, NULL},
    {110, 0, -1, NULL},
    {120, 0, -1, NULL},
    {134, 0, -1, NULL},
    {150, 0, -1, NULL},
    {170, 0, -1, NULL},
};

cp_paper_spec cp_paper_problem_spec(int k) {
  if (k < 0 || k >= CP_PAPER_PROBLEMS) {
    cp_paper_spec none = {0, 0, -1, NULL};
    return none;
  }
  return specs[k];
}

double cp_paper_mu(int j) { return (double)(j + 1) / 10.0; }

/* ------------------------------------------------------------------------ */
/* Random numbers and small geometry                                        */
/* ------------------------------------------------------------------------ */

static uint64_t sm64(uint64_t *s) {
  uint64_t x = (*s += 0x9E3779B97F4A7C15ull);
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

static uint64_t mix2(uint64_t a, uint64_t b) {
  uint64_t s = a ^ (b * 0xD6E8FEB86659FD93ull);
  sm64(&s);
  return sm64(&s);
}

static double unif(uint64_t *s, double lo, double hi) {
  return lo + (hi - lo) * (double)(sm64(s) >> 11) * 0x1.0p-53;
}

static int irand(uint64_t *s, int n) { /* 0..n-1 */
  return (int)(unif(s, 0.0, 1.0) * n) % n;
}

static void normalize(double *v) {
  double n = cp_v3_norm(v);
  cp_v3_scale(v, v, 1.0 / n);
}

static void rand_unit(uint64_t *s, double *v) {
  for (;;) {
    for (int i = 0; i < 3; i++) v[i] = unif(s, -1.0, 1.0);
    double n = cp_v3_norm(v);
    if (n > 0.1 && n <= 1.0) {
      cp_v3_scale(v, v, 1.0 / n);
      return;
    }
  }
}

/* A random unit vector orthogonal to the unit vector n. */
static void rand_perp(uint64_t *s, const double *n, double *t) {
  for (;;) {
    double r[3];
    rand_unit(s, r);
    cp_v3_axpy(t, r, -cp_v3_dot(r, n), n);
    if (cp_v3_norm(t) > 0.2) {
      normalize(t);
      return;
    }
  }
}

/* Column c of a row-major rotation (body axis c in the world). */
static void col(const double *R, int c, double *v) {
  v[0] = R[c];
  v[1] = R[3 + c];
  v[2] = R[6 + c];
}

static void set_col(double *R, int c, const double *v) {
  R[c] = v[0];
  R[3 + c] = v[1];
  R[6 + c] = v[2];
}

/* Unit quaternion [w, x, y, z] of a rotation matrix (Shepperd), w >= 0. */
static void quat_from_mat(double *q, const double *R) {
  double tr = R[0] + R[4] + R[8], s;
  if (tr > 0) {
    s = 2.0 * sqrt(tr + 1.0);
    q[0] = 0.25 * s;
    q[1] = (R[7] - R[5]) / s;
    q[2] = (R[2] - R[6]) / s;
    q[3] = (R[3] - R[1]) / s;
  } else if (R[0] > R[4] && R[0] > R[8]) {
    s = 2.0 * sqrt(1.0 + R[0] - R[4] - R[8]);
    q[0] = (R[7] - R[5]) / s;
    q[1] = 0.25 * s;
    q[2] = (R[1] + R[3]) / s;
    q[3] = (R[2] + R[6]) / s;
  } else if (R[4] > R[8]) {
    s = 2.0 * sqrt(1.0 + R[4] - R[0] - R[8]);
    q[0] = (R[2] - R[6]) / s;
    q[1] = (R[1] + R[3]) / s;
    q[2] = 0.25 * s;
    q[3] = (R[5] + R[7]) / s;
  } else {
    s = 2.0 * sqrt(1.0 + R[8] - R[0] - R[4]);
    q[0] = (R[3] - R[1]) / s;
    q[1] = (R[2] + R[6]) / s;
    q[2] = (R[5] + R[7]) / s;
    q[3] = 0.25 * s;
  }
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (q[0] < 0) n = -n;
  for (int i = 0; i < 4; i++) q[i] /= n;
}

/* Shortest-arc rotation taking unit a to unit b. */
static void quat_between(double *q, const double *a, const double *b) {
  double c[3];
  cp_v3_cross(c, a, b);
  double d = cp_v3_dot(a, b);
  if (d < -1.0 + 1e-12) { /* opposite: any perpendicular axis */
    double p[3] = {1, 0, 0};
    if (fabs(a[0]) > 0.9) p[0] = 0, p[1] = 1;
    double ax[3];
    cp_v3_cross(ax, a, p);
    normalize(ax);
    cp_quat_axis_angle(q, ax, 3.14159265358979323846);
    return;
  }
  q[0] = 1.0 + d;
  q[1] = c[0];
  q[2] = c[1];
  q[3] = c[2];
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  for (int i = 0; i < 4; i++) q[i] /= n;
}

/* ------------------------------------------------------------------------ */
/* The world under construction                                             */
/* ------------------------------------------------------------------------ */

enum { OB_PLANE = 0, OB_BOX, OB_LINK };
#define MAXOBJ 96
#define MAXCON 128
#define MAXFING 8
#define MAXJ 3

typedef struct gobj {
  int kind, fixed;
  double h[3];          /* box half extents */
  double radius, len;   /* link capsule: radius, cap-centre distance */
  double x[3], q[4], R[9];
  int upright;          /* box standing face-down on the ground */
  int finger, link;     /* OB_LINK */
  char name[48];
} gobj;

typedef struct gcon {
  int a, b;             /* object indices; normal from b into a */
  double p[3], n[3], t[3];
} gcon;

typedef struct gfinger {
  int nj;
  double bx[3], bq[4];
  double len[MAXJ], mass[MAXJ], pos[MAXJ], effort[MAXJ];
  int axis[MAXJ];       /* joint axis: 0 x, 1 y, 2 z (joint frame) */
  double rad;
  int obj0;             /* object index of link 0 */
  char name[32];
} gfinger;

typedef struct world {
  gobj o[MAXOBJ];
  int no;
  gcon c[MAXCON];
  int nc;
  gfinger f[MAXFING];
  int nf;
  int nbox, nblock, nwall;
  uint64_t rng;
} world;

typedef struct snap { int no, nc, nf, nbox, nblock, nwall; } snap;

static snap take(const world *W) {
  snap s = {W->no, W->nc, W->nf, W->nbox, W->nblock, W->nwall};
  return s;
}

static void restore(world *W, snap s) {
  W->no = s.no;
  W->nc = s.nc;
  W->nf = s.nf;
  W->nbox = s.nbox;
  W->nblock = s.nblock;
  W->nwall = s.nwall;
}

static void set_pose(gobj *o, const double *x, const double *q) {
  cp_v3_copy(o->x, x);
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  for (int i = 0; i < 4; i++) o->q[i] = q[i] / n;
  cp_quat_to_mat(o->R, o->q);
}

static int add_contact(world *W, int a, int b, const double *p, const double *n) {
  if (W->nc >= MAXCON) return -1;
  gcon *c = &W->c[W->nc++];
  c->a = a;
  c->b = b;
  cp_v3_copy(c->p, p);
  cp_v3_copy(c->n, n);
  rand_perp(&W->rng, n, c->t);
  return 0;
}

static int designed(const world *W, int i, int j) {
  for (int k = 0; k < W->nc; k++)
    if ((W->c[k].a == i && W->c[k].b == j) || (W->c[k].a == j && W->c[k].b == i)) return 1;
  return 0;
}

static void shape_of(const gobj *o, cp_shape *s, cp_collide_object *co) {
  memset(s, 0, sizeof *s);
  co->shape = s;
  if (o->kind == OB_PLANE) {
    s->type = CP_SHAPE_PLANE;
    cp_v3_set(s->normal, 0, 0, 1);
    s->offset = 0.0;
    cp_v3_set(co->x, 0, 0, 0);
    co->q[0] = 1, co->q[1] = co->q[2] = co->q[3] = 0;
    return;
  }
  if (o->kind == OB_BOX) {
    s->type = CP_SHAPE_BOX;
    for (int i = 0; i < 3; i++) s->size[i] = 2.0 * o->h[i];
  } else {
    s->type = CP_SHAPE_CAPSULE;
    s->radius = o->radius;
    s->length = o->len;
  }
  cp_v3_copy(co->x, o->x);
  memcpy(co->q, o->q, sizeof co->q);
}

/* Objects first..no-1 are new: each must not overlap anything, and touch
 * only what it has a contact with (fixed-fixed pairs may touch: walls and
 * pedestals stand on the ground). Returns 0 when the world is consistent. */
static int check_new(const world *W, int first) {
  cp_collide_contact out[CP_COLLIDE_MAX_POINTS];
  for (int i = first; i < W->no; i++)
    for (int j = 0; j < i; j++) {
      const gobj *a = &W->o[i], *b = &W->o[j];
      if (a->kind == OB_LINK && b->kind == OB_LINK && a->finger == b->finger &&
          abs(a->link - b->link) == 1)
        continue; /* adjacent links meet at their joint by design */
      cp_shape sa, sb;
      cp_collide_object ca, cb;
      shape_of(a, &sa, &ca);
      shape_of(b, &sb, &cb);
      int n = cp_collide_pair(&ca, &cb, NULL, out, CP_COLLIDE_MAX_POINTS, NULL);
      if (n < 0) return -1;
      if (n == 0) continue;
      const int may_touch = designed(W, i, j) || (a->fixed && b->fixed);
      if (!may_touch) return -1;
      for (int k = 0; k < n && k < CP_COLLIDE_MAX_POINTS; k++)
        if (out[k].depth > 1e-6) return -1;
    }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Supports and box placement                                               */
/* ------------------------------------------------------------------------ */

typedef struct support {
  int obj;
  double c[3], n[3], u[3], v[3]; /* (u, v, n) right-handed, n outward */
  double hu, hv;
  int infinite;
} support;

static void box_face(const gobj *b, int f, int obj, support *s) {
  int k = f / 2, k1 = (k + 1) % 3;
  double sg = (f % 2) ? -1.0 : 1.0, ax[3];
  col(b->R, k, ax);
  cp_v3_scale(s->n, ax, sg);
  cp_v3_axpy(s->c, b->x, sg * b->h[k], ax);
  col(b->R, k1, s->u);
  cp_v3_cross(s->v, s->n, s->u);
  s->hu = b->h[k1];
  s->hv = b->h[(k + 2) % 3];
  s->infinite = 0;
  s->obj = obj;
}

static void ground_support(double X, double Y, support *s) {
  cp_v3_set(s->c, X, Y, 0);
  cp_v3_set(s->n, 0, 0, 1);
  cp_v3_set(s->u, 1, 0, 0);
  cp_v3_set(s->v, 0, 1, 0);
  s->hu = s->hv = INFINITY;
  s->infinite = 1;
  s->obj = 0;
}

/* Sutherland-Hodgman clip of a convex polygon (2D) by |x| <= hu, |y| <= hv. */
static int clip_rect(double (*P)[2], int n, double hu, double hv) {
  double tmp[16][2];
  for (int side = 0; side < 4; side++) {
    int axis = side / 2;
    double sgn = (side % 2) ? -1.0 : 1.0, lim = axis ? hv : hu;
    int m = 0;
    for (int i = 0; i < n; i++) {
      const double *A = P[i], *B = P[(i + 1) % n];
      double da = lim - sgn * A[axis], db = lim - sgn * B[axis];
      if (da >= 0) {
        tmp[m][0] = A[0];
        tmp[m][1] = A[1];
        m++;
      }
      if ((da >= 0) != (db >= 0)) {
        double t = da / (da - db);
        tmp[m][0] = A[0] + t * (B[0] - A[0]);
        tmp[m][1] = A[1] + t * (B[1] - A[1]);
        m++;
      }
    }
    n = m;
    memcpy(P, tmp, sizeof(double) * 2 * (size_t)n);
    if (n == 0) return 0;
  }
  return n;
}

static double poly_area(double (*P)[2], int n) {
  double a = 0;
  for (int i = 0; i < n; i++)
    a += P[i][0] * P[(i + 1) % n][1] - P[(i + 1) % n][0] * P[i][1];
  return 0.5 * fabs(a);
}

/* Merges polygon vertices closer than tol (keeps the first). */
static int merge_close(double (*P)[2], int n, double tol) {
  int m = 0;
  for (int i = 0; i < n; i++) {
    int dup = 0;
    for (int k = 0; k < m; k++)
      if (hypot(P[i][0] - P[k][0], P[i][1] - P[k][1]) < tol) dup = 1;
    if (!dup) {
      P[m][0] = P[i][0];
      P[m][1] = P[i][1];
      m++;
    }
  }
  return m;
}

static void to2d(const support *s, const double *p, double *xy) {
  double d[3];
  cp_v3_sub(d, p, s->c);
  xy[0] = cp_v3_dot(d, s->u);
  xy[1] = cp_v3_dot(d, s->v);
}

static void to3d(const support *s, const double *xy, double *p) {
  double t[3];
  cp_v3_axpy(t, s->c, xy[0], s->u);
  cp_v3_axpy(p, t, xy[1], s->v);
}

enum { MODE_FACE = 0, MODE_EDGE, MODE_VERTEX };

/* Box vertices (8) of o. */
static void box_vertices(const gobj *o, double (*V)[3]) {
  for (int i = 0; i < 8; i++) {
    double l[3] = {(i & 1) ? o->h[0] : -o->h[0], (i & 2) ? o->h[1] : -o->h[1],
                   (i & 4) ? o->h[2] : -o->h[2]}, w[3];
    cp_m3_mulv(w, o->R, l);
    cp_v3_add(V[i], o->x, w);
  }
}

/* Height of the box's lowest vertex above the support plane, excluding the
 * pivot vertices (whose heights are 0 by construction). */
static double min_lift(const gobj *o, const support *s, const double (*piv)[3], int npiv) {
  double V[8][3], m = INFINITY;
  box_vertices(o, V);
  for (int i = 0; i < 8; i++) {
    int is_piv = 0;
    for (int k = 0; k < npiv; k++) {
      double d[3];
      cp_v3_sub(d, V[i], piv[k]);
      if (cp_v3_norm(d) < 1e-9) is_piv = 1;
    }
    if (is_piv) continue;
    double d[3];
    cp_v3_sub(d, V[i], s->c);
    m = fmin(m, cp_v3_dot(d, s->n));
  }
  return m;
}

/* Rotates o about the axis through P with unit direction w by angle phi. */
static void rotate_about(gobj *o, const double *P, const double *w, double phi) {
  double qr[4], Rr[9], d[3], e[3], x[3], q[4];
  cp_quat_axis_angle(qr, w, phi);
  cp_quat_to_mat(Rr, qr);
  cp_v3_sub(d, o->x, P);
  cp_m3_mulv(e, Rr, d);
  cp_v3_add(x, P, e);
  cp_quat_mul(q, qr, o->q);
  set_pose(o, x, q);
}

/* Places a new box of half extents hA against support s: its face g lies on
 * the support face, turned by theta about the normal and offset by (ou, ov)
 * in the face; then, for EDGE / VERTEX, tipped about one edge / vertex of
 * that face so that only the edge / vertex touches. Appends the box and its
 * contacts (a = the new box, b = the support, normal = s->n). Returns the
 * new object's index, or -1 (nothing appended: no support area, or the
 * contact budget cap would be exceeded). */
static int place_box(world *W, const support *s, const double *hA, int fixed,
                     int mode, int g, double theta, double ou, double ov,
                     int max_contacts) {
  if (W->no >= MAXOBJ) return -1;
  const int kg = g / 2, k1 = (kg + 1) % 3, k2 = (kg + 2) % 3;
  const double sg = (g % 2) ? -1.0 : 1.0;
  double R[9], ckg[3], ck1[3], ck2[3], t1[3], t2[3];
  cp_v3_scale(ckg, s->n, -sg);
  cp_v3_scale(t1, s->u, cos(theta));
  cp_v3_scale(t2, s->v, sin(theta));
  cp_v3_add(ck1, t1, t2);
  cp_v3_cross(ck2, ckg, ck1);
  set_col(R, kg, ckg);
  set_col(R, k1, ck1);
  set_col(R, k2, ck2);
  double q[4], x[3], fc[3];
  quat_from_mat(q, R);
  cp_v3_axpy(t1, s->c, ou, s->u);
  cp_v3_axpy(fc, t1, ov, s->v);
  cp_v3_axpy(x, fc, hA[kg], s->n);
  gobj *o = &W->o[W->no];
  memset(o, 0, sizeof *o);
  o->kind = OB_BOX;
  o->fixed = fixed;
  cp_v3_copy(o->h, hA);
  set_pose(o, x, q);
  /* The face's corners, in cyclic order. */
  double C[4][3];
  const double sgn1[4] = {1, -1, -1, 1}, sgn2[4] = {1, 1, -1, -1};
  col(o->R, k1, ck1);
  col(o->R, k2, ck2);
  for (int i = 0; i < 4; i++) {
    cp_v3_axpy(t1, fc, sgn1[i] * hA[k1], ck1);
    cp_v3_axpy(C[i], t1, sgn2[i] * hA[k2], ck2);
  }
  double P[16][2];
  int np = 0;
  double pts[8][3];
  int npts = 0;
  if (mode == MODE_FACE) {
    for (int i = 0; i < 4; i++) to2d(s, C[i], P[i]);
    np = 4;
    const double areaA = 4.0 * hA[k1] * hA[k2];
    if (!s->infinite) {
      np = clip_rect(P, np, s->hu, s->hv);
      if (np < 3) return -1;
      double area = poly_area(P, np);
      if (area < 0.15 * fmin(areaA, 4.0 * s->hu * s->hv)) return -1;
    }
    np = merge_close(P, np, 3e-3);
    if (np < 3) return -1;
    for (int i = 0; i < np; i++) to3d(s, P[i], pts[i]);
    npts = np;
  } else if (mode == MODE_EDGE) {
    int e = irand(&W->rng, 4);
    double A2[2], B2[2];
    to2d(s, C[e], A2);
    to2d(s, C[(e + 1) % 4], B2);
    /* Liang-Barsky clip of the edge to the support face. */
    double t0 = 0.0, t1c = 1.0, d[2] = {B2[0] - A2[0], B2[1] - A2[1]};
    if (!s->infinite) {
      const double lim[2] = {s->hu, s->hv};
      for (int ax = 0; ax < 2; ax++)
        for (int sgn = -1; sgn <= 1; sgn += 2) {
          /* sgn * (A + t d)[ax] <= lim */
          double p = sgn * d[ax], r = lim[ax] - sgn * A2[ax];
          if (fabs(p) < 1e-15) {
            if (r < 0) return -1;
          } else if (p > 0) {
            t1c = fmin(t1c, r / p);
          } else {
            t0 = fmax(t0, r / p);
          }
        }
      if (t1c - t0 < 0.3) return -1;
    }
    double L = hypot(d[0], d[1]) * (t1c - t0);
    if (L < 0.01) return -1;
    double Q0[2] = {A2[0] + t0 * d[0], A2[1] + t0 * d[1]};
    double Q1[2] = {A2[0] + t1c * d[0], A2[1] + t1c * d[1]};
    double w[3], piv[2][3];
    cp_v3_sub(w, C[(e + 1) % 4], C[e]);
    normalize(w);
    cp_v3_copy(piv[0], C[e]);
    cp_v3_copy(piv[1], C[(e + 1) % 4]);
    double phi = unif(&W->rng, 0.15, 0.9);
    gobj keep = *o;
    rotate_about(o, C[e], w, phi);
    if (min_lift(o, s, (const double(*)[3])piv, 2) < 1e-4) {
      *o = keep;
      rotate_about(o, C[e], w, -phi);
      if (min_lift(o, s, (const double(*)[3])piv, 2) < 1e-4) return -1;
    }
    to3d(s, Q0, pts[0]);
    to3d(s, Q1, pts[1]);
    npts = 2;
  } else {
    int e = irand(&W->rng, 4);
    double V2[2];
    to2d(s, C[e], V2);
    if (!s->infinite && (fabs(V2[0]) > 0.9 * s->hu || fabs(V2[1]) > 0.9 * s->hv)) return -1;
    double e1[3], e2[3], piv[1][3];
    cp_v3_sub(e1, C[(e + 1) % 4], C[e]);
    cp_v3_sub(e2, C[(e + 3) % 4], C[e]);
    normalize(e1);
    normalize(e2);
    cp_v3_copy(piv[0], C[e]);
    double beta = unif(&W->rng, 0.3, 1.27), phi = unif(&W->rng, 0.2, 0.8);
    gobj keep = *o;
    int ok = 0;
    for (int trial = 0; trial < 4 && !ok; trial++) {
      double w[3], a[3], b[3];
      const double *f1 = (trial < 2) ? e1 : e2, *f2 = (trial < 2) ? e2 : e1;
      cp_v3_scale(a, f1, cos(beta));
      cp_v3_scale(b, f2, -sin(beta));
      cp_v3_add(w, a, b);
      normalize(w);
      *o = keep;
      rotate_about(o, C[e], w, (trial % 2) ? -phi : phi);
      ok = min_lift(o, s, (const double(*)[3])piv, 1) >= 1e-4;
    }
    if (!ok) return -1;
    cp_v3_copy(pts[0], C[e]);
    npts = 1;
  }
  if (W->nc + npts > max_contacts || W->nc + npts > MAXCON) return -1;
  const int idx = W->no++;
  for (int i = 0; i < npts; i++) {
    if (s->obj == 0) pts[i][2] = 0.0; /* exactly on the ground */
    add_contact(W, idx, s->obj, pts[i], s->n);
  }
  return idx;
}

static void rand_half_extents(uint64_t *r, double *h) {
  for (int i = 0; i < 3; i++) h[i] = unif(r, 0.03, 0.13);
}

static void name_box(world *W, int idx) {
  if (W->o[idx].fixed)
    snprintf(W->o[idx].name, sizeof W->o[idx].name, "block%d", ++W->nblock);
  else
    snprintf(W->o[idx].name, sizeof W->o[idx].name, "box%d", ++W->nbox);
}

static int pick_mode(uint64_t *r, double pface, double pedge) {
  double u = unif(r, 0.0, 1.0);
  return u < pface ? MODE_FACE : (u < pface + pedge ? MODE_EDGE : MODE_VERTEX);
}

/* A free box on the ground, face-, edge- or vertex-down. */
static int move_ground(world *W, int mode, int cap) {
  uint64_t *r = &W->rng;
  support s;
  ground_support(unif(r, -0.7, 0.7), unif(r, -0.7, 0.7), &s);
  double h[3];
  rand_half_extents(r, h);
  int first = W->no;
  int idx = place_box(W, &s, h, 0, mode, irand(r, 6), unif(r, 0, 6.283185307179586),
                      0.0, 0.0, cap);
  if (idx < 0) return -1;
  W->o[idx].upright = mode == MODE_FACE;
  name_box(W, idx);
  return check_new(W, first);
}

/* A free box on the most upward face of an existing box (free or fixed). */
static int move_stack(world *W, int mode, int cap) {
  uint64_t *r = &W->rng;
  int cand[MAXOBJ], nc = 0;
  for (int i = 1; i < W->no; i++)
    if (W->o[i].kind == OB_BOX) cand[nc++] = i;
  if (!nc) return -1;
  int b = cand[irand(r, nc)];
  support best, s;
  memset(&best, 0, sizeof best);
  double bestz = -2;
  for (int f = 0; f < 6; f++) {
    box_face(&W->o[b], f, b, &s);
    if (s.n[2] > bestz) bestz = s.n[2], best = s;
  }
  if (bestz < 0.3) return -1;
  double h[3];
  rand_half_extents(r, h);
  int first = W->no;
  int idx = place_box(W, &best, h, 0, mode, irand(r, 6), unif(r, 0, 6.283185307179586),
                      unif(r, -0.6, 0.6) * best.hu, unif(r, -0.6, 0.6) * best.hv, cap);
  if (idx < 0) return -1;
  name_box(W, idx);
  return check_new(W, first);
}

/* A box (free, or a fixed wall) standing on the ground against a side face of
 * an upright box, itself upright. A free one also rests on the ground. */
static int move_side(world *W, int fixed, int cap) {
  uint64_t *r = &W->rng;
  int cand[MAXOBJ], nc = 0;
  for (int i = 1; i < W->no; i++)
    if (W->o[i].kind == OB_BOX && W->o[i].upright && !W->o[i].fixed) cand[nc++] = i;
  if (!nc) return -1;
  int b = cand[irand(r, nc)];
  const gobj *B = &W->o[b];
  int vert = 0;
  for (int k = 0; k < 3; k++)
    if (fabs(B->R[6 + k]) > 0.5) vert = k;
  int f;
  do f = irand(r, 6); while (f / 2 == vert);
  support s;
  box_face(B, f, b, &s);
  double h[3];
  rand_half_extents(r, h);
  if (fixed) h[irand(r, 3)] = unif(r, 0.01, 0.03); /* a wall: thin */
  int g = irand(r, 6);
  double theta = 1.5707963267948966 * irand(r, 4);
  /* Orientation first (as place_box makes it) to know the box's height. */
  const int kg = g / 2, k1 = (kg + 1) % 3;
  const double sg = (g % 2) ? -1.0 : 1.0;
  double Rt[9], ckg[3], ck1[3], ck2[3], t1[3], t2[3];
  cp_v3_scale(ckg, s.n, -sg);
  cp_v3_scale(t1, s.u, cos(theta));
  cp_v3_scale(t2, s.v, sin(theta));
  cp_v3_add(ck1, t1, t2);
  cp_v3_cross(ck2, ckg, ck1);
  set_col(Rt, kg, ckg);
  set_col(Rt, k1, ck1);
  set_col(Rt, (kg + 2) % 3, ck2);
  double hz = 0;
  for (int k = 0; k < 3; k++) hz += h[k] * fabs(Rt[6 + k]);
  /* Offsets: the in-face direction that is vertical gets the one that puts
   * the bottom at z = 0, the horizontal one a random overlap. */
  double ou, ov;
  if (fabs(s.u[2]) > 0.5) {
    ov = unif(r, -0.8, 0.8) * s.hv;
    ou = (hz - s.c[2] - ov * s.v[2]) / s.u[2];
  } else {
    ou = unif(r, -0.8, 0.8) * s.hu;
    ov = (hz - s.c[2] - ou * s.u[2]) / s.v[2];
  }
  int first = W->no;
  int idx = place_box(W, &s, h, fixed, MODE_FACE, g, theta, ou, ov, cap);
  if (idx < 0) return -1;
  gobj *A = &W->o[idx];
  name_box(W, idx);
  if (fixed) {
    W->nwall++;
    return check_new(W, first);
  }
  A->upright = 1;
  /* Its bottom face on the ground: 4 contacts. */
  int kb = 0;
  for (int k = 0; k < 3; k++)
    if (fabs(A->R[6 + k]) > 0.5) kb = k;
  double sb = A->R[6 + kb] > 0 ? -1.0 : 1.0, ax[3], fcb[3], c1[3], c2[3];
  const int kb1 = (kb + 1) % 3, kb2 = (kb + 2) % 3;
  col(A->R, kb, ax);
  cp_v3_axpy(fcb, A->x, sb * A->h[kb], ax);
  col(A->R, kb1, c1);
  col(A->R, kb2, c2);
  if (W->nc + 4 > cap) return -1;
  const double up[3] = {0, 0, 1};
  for (int i = 0; i < 4; i++) {
    double p[3], t[3];
    cp_v3_axpy(t, fcb, ((i & 1) ? 1 : -1) * A->h[kb1], c1);
    cp_v3_axpy(p, t, ((i & 2) ? 1 : -1) * A->h[kb2], c2);
    p[2] = 0.0;
    add_contact(W, idx, 0, p, up);
  }
  return check_new(W, first);
}

/* A fixed pedestal standing on the ground with a free box on its top. */
static int move_pedestal(world *W, int mode, int cap) {
  uint64_t *r = &W->rng;
  support s;
  ground_support(unif(r, -0.7, 0.7), unif(r, -0.7, 0.7), &s);
  double h[3];
  rand_half_extents(r, h);
  int first = W->no;
  int ped = place_box(W, &s, h, 1, MODE_FACE, irand(r, 6), unif(r, 0, 6.283185307179586),
                      0.0, 0.0, MAXCON);
  if (ped < 0) return -1;
  W->nc -= 4; /* fixed on fixed: no contacts */
  name_box(W, ped);
  support top, t;
  memset(&top, 0, sizeof top);
  double bestz = -2;
  for (int f = 0; f < 6; f++) {
    box_face(&W->o[ped], f, ped, &t);
    if (t.n[2] > bestz) bestz = t.n[2], top = t;
  }
  rand_half_extents(r, h);
  int idx = place_box(W, &top, h, 0, mode, irand(r, 6), unif(r, 0, 6.283185307179586),
                      unif(r, -0.5, 0.5) * top.hu, unif(r, -0.5, 0.5) * top.hv, cap);
  if (idx < 0) return -1;
  name_box(W, idx);
  return check_new(W, first);
}

/* Forward kinematics of a finger with its base at the origin: link frames
 * (origin o, orientation q). */
static void finger_fk(const gfinger *F, double (*o)[3], double (*qk)[4]) {
  double x[3] = {0, 0, 0}, q[4] = {1, 0, 0, 0};
  for (int i = 0; i < F->nj; i++) {
    if (i > 0) { /* joint i at [0, 0, len_{i-1}] in link i-1's frame */
      double R[9], d[3], l[3] = {0, 0, F->len[i - 1]};
      cp_quat_to_mat(R, q);
      cp_m3_mulv(d, R, l);
      cp_v3_add(x, x, d);
    }
    double ax[3] = {0, 0, 0}, qj[4];
    ax[F->axis[i]] = 1.0;
    cp_quat_axis_angle(qj, ax, F->pos[i]);
    cp_quat_mul(q, q, qj);
    cp_v3_copy(o[i], x);
    memcpy(qk[i], q, sizeof(double) * 4);
  }
}

/* A finger whose tip ball touches a face point of a free box (a = the box,
 * b = the tip link, normal into the box). */
static int move_finger(world *W, int cap) {
  uint64_t *r = &W->rng;
  if (W->nf >= MAXFING || W->no + MAXJ > MAXOBJ || W->nc + 1 > cap) return -1;
  int cand[MAXOBJ], nc = 0;
  for (int i = 1; i < W->no; i++)
    if (W->o[i].kind == OB_BOX && !W->o[i].fixed) cand[nc++] = i;
  if (!nc) return -1;
  int b = cand[irand(r, nc)];
  support s;
  box_face(&W->o[b], irand(r, 6), b, &s);
  if (s.n[2] < -0.3) return -1; /* not from below */
  double p[3], t1[3];
  cp_v3_axpy(t1, s.c, unif(r, -0.7, 0.7) * s.hu, s.u);
  cp_v3_axpy(p, t1, unif(r, -0.7, 0.7) * s.hv, s.v);
  gfinger *F = &W->f[W->nf];
  memset(F, 0, sizeof *F);
  F->nj = 2 + irand(r, 2);
  F->rad = 0.01;
  for (int i = 0; i < F->nj; i++) {
    F->len[i] = unif(r, 0.06, 0.14);
    F->mass[i] = unif(r, 0.05, 0.2);
    F->axis[i] = i == 0 ? 2 : 1;
    F->pos[i] = i == 0 ? unif(r, -3.14, 3.14) : unif(r, -1.2, 1.2);
    F->effort[i] = unif(r, -0.3, 0.3);
  }
  double o[MAXJ][3], qk[MAXJ][4];
  finger_fk(F, o, qk);
  const int L = F->nj - 1;
  double RL[9], dl[3], tip[3], ez[3] = {0, 0, 1}, tl[3] = {0, 0, F->len[L]};
  cp_quat_to_mat(RL, qk[L]);
  cp_m3_mulv(dl, RL, ez);
  cp_m3_mulv(tip, RL, tl);
  cp_v3_add(tip, tip, o[L]);
  /* The last link points into the face, tilted at most ~30 degrees. */
  double tang[3], dw[3], qa[4], qg[4], qb[4];
  rand_perp(r, s.n, tang);
  cp_v3_scale(dw, s.n, -1.0);
  cp_v3_axpy(dw, dw, unif(r, 0.0, 0.55), tang);
  normalize(dw);
  quat_between(qa, dl, dw);
  cp_quat_axis_angle(qg, dw, unif(r, 0, 6.283185307179586));
  cp_quat_mul(qb, qg, qa);
  double Rb[9], ct[3], d[3];
  cp_quat_to_mat(Rb, qb);
  cp_v3_axpy(ct, p, F->rad, s.n); /* the tip ball's centre */
  cp_m3_mulv(d, Rb, tip);
  cp_v3_sub(F->bx, ct, d);
  memcpy(F->bq, qb, sizeof qb);
  snprintf(F->name, sizeof F->name, "finger%d", W->nf + 1);
  const int first = W->no;
  F->obj0 = first;
  for (int i = 0; i < F->nj; i++) {
    gobj *lk = &W->o[W->no++];
    memset(lk, 0, sizeof *lk);
    lk->kind = OB_LINK;
    lk->radius = F->rad;
    lk->len = F->len[i];
    lk->finger = W->nf;
    lk->link = i;
    double cl[3] = {0, 0, 0.5 * F->len[i]}, Rk[9], w1[3], w2[3], x[3], q[4];
    cp_quat_to_mat(Rk, qk[i]);
    cp_m3_mulv(w1, Rk, cl);
    cp_v3_add(w1, w1, o[i]);
    cp_m3_mulv(w2, Rb, w1);
    cp_v3_add(x, F->bx, w2);
    cp_quat_mul(q, qb, qk[i]);
    set_pose(lk, x, q);
    char fname[32];
    memcpy(fname, F->name, sizeof fname);
    snprintf(lk->name, sizeof lk->name, "%.20s/l%d", fname, i + 1);
  }
  W->nf++;
  double n[3];
  cp_v3_scale(n, s.n, -1.0);
  add_contact(W, b, first + L, p, n);
  return check_new(W, first);
}

/* Builds a structure with exactly nc contacts and nb free boxes. */
static int build_structure(world *W, int nc, int nb) {
  uint64_t *r = &W->rng;
  memset(&W->o[0], 0, sizeof W->o[0]);
  W->o[0].kind = OB_PLANE;
  W->o[0].fixed = 1;
  snprintf(W->o[0].name, sizeof W->o[0].name, "ground");
  W->no = 1;
  W->nc = W->nf = W->nbox = W->nblock = W->nwall = 0;
  for (int tries = 0; tries < 600; tries++) {
    if (W->nbox == nb && W->nc == nc) return 0;
    snap sn = take(W);
    const int boxes_left = nb - W->nbox;
    const int remaining = nc - W->nc;
    int rc;
    if (boxes_left > 0) {
      /* Every later box needs at least one contact. */
      const int cap = nc - (boxes_left - 1);
      const double big = remaining >= 4 * boxes_left ? 0.55 : 0.2;
      const int mode = pick_mode(r, big, 0.25);
      const double u = unif(r, 0.0, 1.0);
      if (W->nbox == 0)
        rc = u < 0.8 ? move_ground(W, mode, cap) : move_pedestal(W, mode, cap);
      else if (u < 0.3)
        rc = move_ground(W, mode, cap);
      else if (u < 0.65)
        rc = move_stack(W, mode, cap);
      else if (u < 0.87)
        rc = move_side(W, 0, cap);
      else
        rc = move_pedestal(W, mode, cap);
    } else {
      const double u = unif(r, 0.0, 1.0);
      if (remaining >= 2 && u < 0.4 && W->nwall < 4)
        rc = move_side(W, 1, nc);
      else
        rc = W->nf < 6 ? move_finger(W, nc) : -1;
    }
    if (rc) restore(W, sn);
  }
  return -1;
}

/* ------------------------------------------------------------------------ */
/* The scene as JSON                                                        */
/* ------------------------------------------------------------------------ */

static json_t *jvec(const double *v, int n) {
  json_t *a = json_array();
  for (int i = 0; i < n; i++) json_array_append_new(a, json_real(v[i]));
  return a;
}

/* The scene of W with generalised velocity u (NULL: at rest). */
static json_t *world_json(const world *W, const double *u, double mu, const char *name,
                          const char *comment) {
  json_t *doc = json_object();
  json_object_set_new(doc, "name", json_string(name));
  json_object_set_new(doc, "comment", json_string(comment));
  const double g[3] = {0, 0, -9.81};
  json_object_set_new(doc, "gravity", jvec(g, 3));
  json_t *fr = json_object();
  json_object_set_new(fr, "default", json_real(mu));
  json_object_set_new(doc, "friction", fr);
  json_t *bodies = json_array();
  int obj = 0;
  const double zero[3] = {0, 0, 0};
  for (int i = 0; i < W->no; i++) {
    const gobj *o = &W->o[i];
    if (o->kind == OB_LINK) continue;
    json_t *b = json_object(), *sh = json_object();
    json_object_set_new(b, "name", json_string(o->name));
    if (o->fixed) json_object_set_new(b, "fixed", json_true());
    if (o->kind == OB_PLANE) {
      const double n[3] = {0, 0, 1};
      json_object_set_new(sh, "type", json_string("plane"));
      json_object_set_new(sh, "normal", jvec(n, 3));
      json_object_set_new(sh, "offset", json_real(0.0));
      json_object_set_new(b, "shape", sh);
    } else {
      double size[3] = {2 * o->h[0], 2 * o->h[1], 2 * o->h[2]};
      if (!o->fixed)
        json_object_set_new(b, "mass", json_real(500.0 * size[0] * size[1] * size[2]));
      json_object_set_new(sh, "type", json_string("box"));
      json_object_set_new(sh, "size", jvec(size, 3));
      json_object_set_new(b, "shape", sh);
      json_object_set_new(b, "position", jvec(o->x, 3));
      json_object_set_new(b, "orientation", jvec(o->q, 4));
      if (!o->fixed) {
        json_object_set_new(b, "velocity", jvec(u ? u + 6 * obj : zero, 3));
        json_object_set_new(b, "angular_velocity", jvec(u ? u + 6 * obj + 3 : zero, 3));
        obj++;
      }
    }
    json_array_append_new(bodies, b);
  }
  json_object_set_new(doc, "bodies", bodies);
  json_t *manips = json_array();
  int row = 6 * obj;
  for (int m = 0; m < W->nf; m++) {
    const gfinger *F = &W->f[m];
    json_t *mj = json_object(), *base = json_object(), *joints = json_array();
    json_object_set_new(mj, "name", json_string(F->name));
    json_object_set_new(base, "position", jvec(F->bx, 3));
    json_object_set_new(base, "orientation", jvec(F->bq, 4));
    json_object_set_new(mj, "base", base);
    for (int i = 0; i < F->nj; i++) {
      json_t *j = json_object(), *org = json_object(), *lk = json_object(), *sh = json_object();
      char nm[16];
      snprintf(nm, sizeof nm, "j%d", i + 1);
      json_object_set_new(j, "name", json_string(nm));
      json_object_set_new(j, "type", json_string("revolute"));
      double ax[3] = {0, 0, 0}, op[3] = {0, 0, i ? F->len[i - 1] : 0.0};
      const double oq[4] = {1, 0, 0, 0};
      ax[F->axis[i]] = 1.0;
      json_object_set_new(j, "axis", jvec(ax, 3));
      json_object_set_new(org, "position", jvec(op, 3));
      json_object_set_new(org, "orientation", jvec(oq, 4));
      json_object_set_new(j, "origin", org);
      json_object_set_new(j, "position", json_real(F->pos[i]));
      json_object_set_new(j, "velocity", json_real(u ? u[row] : 0.0));
      json_object_set_new(j, "effort", json_real(F->effort[i]));
      row++;
      snprintf(nm, sizeof nm, "l%d", i + 1);
      json_object_set_new(lk, "name", json_string(nm));
      json_object_set_new(lk, "mass", json_real(F->mass[i]));
      double com[3] = {0, 0, 0.5 * F->len[i]};
      json_object_set_new(lk, "com", jvec(com, 3));
      json_object_set_new(sh, "type", json_string("capsule"));
      json_object_set_new(sh, "radius", json_real(F->rad));
      json_object_set_new(sh, "length", json_real(F->len[i]));
      json_object_set_new(lk, "shape", sh);
      json_object_set_new(j, "link", lk);
      json_array_append_new(joints, j);
    }
    json_object_set_new(mj, "joints", joints);
    json_array_append_new(manips, mj);
  }
  json_object_set_new(doc, "manipulators", manips);
  json_t *cons = json_array();
  for (int k = 0; k < W->nc; k++) {
    const gcon *c = &W->c[k];
    json_t *cj = json_object();
    json_object_set_new(cj, "a", json_string(W->o[c->a].name));
    json_object_set_new(cj, "b", json_string(W->o[c->b].name));
    json_object_set_new(cj, "point", jvec(c->p, 3));
    json_object_set_new(cj, "normal", jvec(c->n, 3));
    json_object_set_new(cj, "tangent", jvec(c->t, 3));
    json_array_append_new(cons, cj);
  }
  json_object_set_new(doc, "contacts", cons);
  return doc;
}

static char *dump(json_t *doc) {
  return json_dumps(doc, JSON_INDENT(1) | JSON_REAL_PRECISION(17));
}

/* ------------------------------------------------------------------------ */
/* The LCP through the real pipeline                                        */
/* ------------------------------------------------------------------------ */

void cp_paper_instance_free(cp_paper_instance *in) {
  if (!in) return;
  cp_contact_space_free(&in->cs);
  cp_system_free(&in->sys);
  cp_scene_free(&in->scene);
  free(in->driven);
  free(in->udot_driven);
  free(in->pc);
  free(in->order);
  free(in->rank);
  cp_lcp_free(&in->lcp);
  memset(in, 0, sizeof *in);
}

int cp_paper_instance_build(const char *text, cp_paper_instance *in, cp_error *err) {
  memset(in, 0, sizeof *in);
  if (cp_scene_parse(text, strlen(text), NULL, NULL, &in->scene, err)) return -1;
  if (cp_system_build(&in->scene, &in->sys, err)) {
    cp_paper_instance_free(in);
    return -1;
  }
  const cp_system *sys = &in->sys;
  const int nu = sys->n_u, nc = sys->n_c;
  if (nc < 1) {
    cp_paper_instance_free(in);
    return cp_error_set(err, "contacts", "a data set needs at least one contact");
  }
  in->driven = calloc((size_t)(nu > 0 ? nu : 1), 1);
  in->udot_driven = calloc((size_t)(nu > 0 ? nu : 1), sizeof(double));
  in->pc = calloc((size_t)nc, sizeof *in->pc);
  in->order = malloc(sizeof(int) * (size_t)nc);
  in->rank = malloc(sizeof(int) * (size_t)nc);
  if (!in->driven || !in->udot_driven || !in->pc || !in->order || !in->rank) {
    cp_paper_instance_free(in);
    return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  }
  /* Exactly contact/problem.c's steps. */
  for (int r = 0; r < sys->n_l; r++)
    if (sys->drive[r] == CP_DRIVE_ACCELERATION) {
      in->driven[6 * sys->n_obj + r] = 1;
      in->udot_driven[6 * sys->n_obj + r] = sys->qdd[r];
    }
  int rc = cp_contact_space_build(nu, nc, sys->H, sys->G, sys->f, sys->k, in->driven,
                                  in->udot_driven, &in->cs);
  if (rc) {
    cp_paper_instance_free(in);
    return rc == -1 ? cp_error_setc(err, CP_ERR_NUMERICAL, "",
                                    "the mass matrix is not positive definite")
                    : cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  }
  cp_problem_pyramid_contacts(sys, in->pc);
  cp_pyramid_layout_make(nc, in->pc, in->order, in->rank, &in->lay);
  if (cp_lcp_init(&in->lcp, in->lay.m)) {
    cp_paper_instance_free(in);
    return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  }
  cp_pyramid_build(&in->lay, in->pc, in->cs.A, in->cs.b, in->lcp.M, in->lcp.q);
  in->nb = sys->n_obj;
  in->ns = in->lay.ns;
  in->nr = in->lay.nr;
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Velocities                                                               */
/* ------------------------------------------------------------------------ */

/* u := the projection of u0 onto the null space of the constraint rows: the
 * normal row of every contact and the tangential rows of the rolling ones
 * (rows of G^T, i.e. columns of G). Returns 0 or -1 (LAPACK failure). */
static int project(const cp_system *sys, const unsigned char *roll, const double *u0,
                   double *u, double *work, int lwork_doubles) {
  const int nu = sys->n_u, nc = sys->n_c;
  int m = 0;
  for (int j = 0; j < nc; j++) m += roll[j] ? 3 : 1;
  /* C (m x nu, column-major), singular values, VT (nu x nu), superb. */
  const size_t need = (size_t)m * nu + (size_t)(m < nu ? m : nu) + (size_t)nu * nu +
                      (size_t)(m < nu ? m : nu);
  if ((size_t)lwork_doubles < need) return -1;
  double *C = work, *s = C + (size_t)m * nu, *VT = s + (m < nu ? m : nu);
  double *superb = VT + (size_t)nu * nu;
  int row = 0;
  for (int j = 0; j < nc; j++)
    for (int c = 0; c < (roll[j] ? 3 : 1); c++, row++)
      for (int i = 0; i < nu; i++) C[row + (size_t)i * m] = sys->G[i + (size_t)nu * (3 * j + c)];
  if (LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'A', m, nu, C, m, s, NULL, 1, VT, nu, superb))
    return -1;
  const int k = m < nu ? m : nu;
  memcpy(u, u0, sizeof(double) * (size_t)nu);
  for (int i = 0; i < k; i++) {
    if (!(s[i] > 1e-10 * s[0])) break;
    double c = 0;
    for (int t = 0; t < nu; t++) c += VT[i + (size_t)t * nu] * u[t];
    for (int t = 0; t < nu; t++) u[t] -= c * VT[i + (size_t)t * nu];
  }
  return 0;
}

static double tan_speed(const cp_system *sys, const double *u, int j) {
  double vt = 0, vo = 0;
  const int nu = sys->n_u;
  for (int i = 0; i < nu; i++) {
    vt += sys->G[i + (size_t)nu * (3 * j + 1)] * u[i];
    vo += sys->G[i + (size_t)nu * (3 * j + 2)] * u[i];
  }
  return hypot(vt, vo);
}

/* Finds u with zero normal speeds and exactly nr rolling contacts (tangential
 * speed zero on purpose), the rest sliding at >= 1e-3 m/s. Returns 0 and
 * fills u, or -1. */
static int choose_velocity(const cp_system *sys, int nr, uint64_t *r, double *u) {
  const int nu = sys->n_u, nc = sys->n_c;
  const int nobj = sys->n_obj;
  const int lw = 3 * nc * nu + 2 * (3 * nc + nu) + nu * nu + 16;
  double *work = malloc(sizeof(double) * (size_t)(lw + 2 * nu));
  unsigned char *roll = malloc((size_t)nc);
  if (!work || !roll) {
    free(work);
    free(roll);
    return -1;
  }
  double *u0 = work + lw;
  int ok = -1;
  for (int tr = 0; tr < 24 && ok; tr++) {
    for (int i = 0; i < nobj; i++) {
      for (int c = 0; c < 3; c++) u0[6 * i + c] = unif(r, -0.5, 0.5);
      for (int c = 3; c < 6; c++) u0[6 * i + c] = unif(r, -2.0, 2.0);
    }
    for (int i = 6 * nobj; i < nu; i++) u0[i] = unif(r, -1.5, 1.5);
    memset(roll, 0, (size_t)nc);
    for (;;) {
      if (project(sys, roll, u0, u, work, lw)) break;
      int changed = 0, count = 0;
      for (int j = 0; j < nc; j++)
        if (!roll[j] && tan_speed(sys, u, j) < 1e-3) roll[j] = 1, changed = 1;
      if (changed) continue;
      for (int j = 0; j < nc; j++) count += roll[j];
      if (count == nr) {
        ok = 0;
        break;
      }
      if (count > nr) break;
      int free_c = nc - count, pick = irand(r, free_c);
      for (int j = 0; j < nc; j++)
        if (!roll[j] && pick-- == 0) {
          roll[j] = 1;
          break;
        }
    }
  }
  free(work);
  free(roll);
  return ok;
}

/* ------------------------------------------------------------------------ */
/* Generation                                                               */
/* ------------------------------------------------------------------------ */

void cp_paper_problem_free(cp_paper_problem *p) {
  if (!p) return;
  free(p->scene_json);
  memset(p, 0, sizeof *p);
}

static char *scene_text_of(const world *W, const double *u, double mu, int k, uint64_t seed,
                           const cp_paper_spec *sp) {
  char name[64], comment[256];
  snprintf(name, sizeof name, "paper-p%02d", k + 1);
  snprintf(comment, sizeof comment,
           "complan experiment paper: problem %d of the reproduced study of Trinkle, Pang, "
           "Sudarsky and Lo (1995) section 6; seed %llu; target size %d%s%s",
           k + 1, (unsigned long long)seed, sp->size, sp->note ? "; " : "",
           sp->note ? sp->note : "");
  json_t *doc = world_json(W, u, mu, name, comment);
  char *t = dump(doc);
  json_decref(doc);
  return t;
}

/* Checks that every finger tip ball touches its contact point in the model's
 * own kinematics (models/scene.h), i.e. that the generator's forward
 * kinematics and the scene format agree. */
static int check_tips(const world *W, const cp_scene *sc) {
  for (int k = 0; k < W->nc; k++) {
    const gcon *c = &W->c[k];
    const gobj *b = &W->o[c->b];
    if (b->kind != OB_LINK) continue;
    cp_ref ref;
    if (cp_scene_find(sc, b->name, &ref)) return -1;
    double R[9], x[3], tl[3] = {0, 0, b->len}, d[3], tip[3];
    cp_scene_frame(sc, ref, R, x);
    cp_m3_mulv(d, R, tl);
    cp_v3_add(tip, x, d);
    cp_v3_sub(d, tip, c->p);
    if (fabs(cp_v3_norm(d) - b->radius) > 1e-9) return -1;
  }
  return 0;
}

int cp_paper_generate(int k, uint64_t seed, cp_paper_problem *p, cp_error *err) {
  memset(p, 0, sizeof *p);
  if (k < 0 || k >= CP_PAPER_PROBLEMS)
    return cp_error_set(err, "", "problem %d out of range 1..%d", k + 1, CP_PAPER_PROBLEMS);
  const cp_paper_spec sp = specs[k];
  world *W = malloc(sizeof *W);
  if (!W) return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  const uint64_t base = mix2(seed ^ 0x5452494E4B4C4531ull /* "TRINKLE1" */, (uint64_t)k);
  /* size = nS + 5 nR = 5 nc - 4 nS: nS = size (mod 5), nc = (size + 4 nS) / 5.
   * The candidates: nS = size mod 5 + 5 i, i = 0, 1, 2 (the paper's examples
   * have a few sliding contacts: nS 5-6 of 10-15 contacts). The problem
   * keeps its first choice for 300 attempts (so that easy splits do not
   * crowd out the others), then draws again per attempt. */
  int opts[3], no = 0;
  for (int s = sp.size % 5; s <= 20 && no < 3; s += 5) {
    int nc = (sp.size + 4 * s) / 5;
    if (s <= nc && nc >= 1) opts[no++] = s;
  }
  uint64_t pr = mix2(base, 0xFFFFFFFFull);
  const int ns_first = no ? opts[irand(&pr, no)] : 0;
  int done = 0;
  for (int attempt = 0; attempt < 3000 && !done && (no || sp.ns >= 0); attempt++) {
    W->rng = mix2(base, (uint64_t)attempt);
    uint64_t *r = &W->rng;
    int ns = sp.ns;
    if (ns < 0) ns = attempt < 300 ? ns_first : opts[irand(r, no)];
    const int nc = (sp.size + 4 * ns) / 5, nr = nc - ns;
    if (nc > MAXCON || 5 * nc - 4 * ns != sp.size) continue;
    int nb = sp.nb;
    if (nb <= 0) {
      nb = (int)lround(nc / unif(r, 2.2, 4.0));
      if (nb < 1) nb = 1;
      if (nb > nc) nb = nc;
      if (nb > 14) nb = 14;
    }
    if (build_structure(W, nc, nb)) continue;
    /* At rest first: G depends on the positions only. */
    char *t0 = scene_text_of(W, NULL, 0.5, k, seed, &sp);
    if (!t0) break;
    cp_scene sc;
    cp_system sys;
    cp_error e2;
    if (cp_scene_parse(t0, strlen(t0), NULL, NULL, &sc, &e2)) {
      free(t0);
      continue;
    }
    free(t0);
    if (check_tips(W, &sc) || cp_system_build(&sc, &sys, &e2)) {
      cp_scene_free(&sc);
      continue;
    }
    double *u = malloc(sizeof(double) * (size_t)sys.n_u);
    int vrc = u ? choose_velocity(&sys, nr, r, u) : -1;
    cp_system_free(&sys);
    cp_scene_free(&sc);
    if (vrc) {
      free(u);
      continue;
    }
    char *t1 = scene_text_of(W, u, 0.5, k, seed, &sp);
    free(u);
    if (!t1) break;
    cp_paper_instance in;
    if (cp_paper_instance_build(t1, &in, &e2)) {
      free(t1);
      continue;
    }
    if (in.lcp.n == sp.size && in.ns == ns && in.nr == nr && in.nb == nb &&
        (sp.nb <= 0 || in.nb == sp.nb)) {
      p->index = k;
      p->spec = sp;
      p->seed = seed;
      p->size = in.lcp.n;
      p->nb = in.nb;
      p->ns = in.ns;
      p->nr = in.nr;
      p->nc = in.sys.n_c;
      p->n_u = in.sys.n_u;
      p->n_joints = in.sys.n_l;
      p->n_fingers = in.scene.n_manips;
      p->n_fixed = in.scene.n_bodies - in.nb;
      p->attempts = attempt + 1;
      p->scene_json = t1;
      done = 1;
    } else {
      free(t1);
    }
    cp_paper_instance_free(&in);
  }
  free(W);
  if (!done)
    return cp_error_setc(err, CP_ERR_NUMERICAL, "", "problem %d: no attempt met the target size %d", k + 1,
                        sp.size);
  return 0;
}

char *cp_paper_scene_text(const cp_paper_problem *p, double mu) {
  json_error_t je;
  json_t *doc = json_loads(p->scene_json, 0, &je);
  if (!doc) return NULL;
  json_t *fr = json_object();
  json_object_set_new(fr, "default", json_real(mu));
  json_object_set_new(doc, "friction", fr);
  char name[64];
  snprintf(name, sizeof name, "paper-p%02d-mu%.1f", p->index + 1, mu);
  json_object_set_new(doc, "name", json_string(name));
  char *t = dump(doc);
  json_decref(doc);
  return t;
}
