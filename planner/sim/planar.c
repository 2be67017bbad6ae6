// Planar bodies (docs/simulate.md, "Planar bodies"): a free body whose scene
// entry has "planar" (models/scene.h, cp_body.planar) moves in the plane
// through its position normal to a world axis a. Its velocity along a and
// its angular velocity about the two other axes are three of its six
// generalised coordinates (models/system.h: v and w in world axes), so the
// constraint is exactly "these three coordinates have zero acceleration":
// the world marks them driven with u' = 0 (w->driven, w->ud), the set D of
// contact/dynamics.h. The contact problem is then formed over the free
// coordinates F only (A = G_F^T H_FF^-1 G_F: the reduced-coordinate
// dynamics of the planar body, H_FF = diag(m, m, I_aa) with I_aa the world
// inertia about a), the steppers leave the driven coordinates unchanged
// (exactly 0: the body never leaves its plane, not even by rounding), and
// the step check skips their Newton-Euler rows, whose residual is the
// constraint's force and torque. Nothing is added to the per-step path.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/vec3.h"
#include "planner/sim/world_impl.h"

static const char *const axis_name[3] = {"x", "y", "z"};
static cp_world_status support_init(cp_world *w, cp_error *err);

// The driven rows of planar bodies; refuses the quasistatic stepper (its
// problem, contact/quasistatic.h, balances every coordinate of a body) and
// a state already moving out of the plane.
cp_world_status cp_wi_planar_init(cp_world *w, cp_error *err) {
  char path[64];
  for (int i = 0, k = 0; i < w->sc.n_bodies; ++i) {
    const cp_body *b = &w->sc.bodies[i];
    if (b->fixed) continue;
    const int a = b->planar - 1, r0 = 6 * k++;
    if (a < 0) continue;
    if (a > 2) {
      snprintf(path, sizeof path, "bodies[%d].planar", i);
      cp_error_set(err, path, "body \"%s\": planar must be 0..3, got %d",
                   b->name, b->planar);
      return CP_WORLD_BAD_INPUT;
    }
    if (w->opt.stepper == CP_STEPPER_QUASISTATIC) {
      snprintf(path, sizeof path, "bodies[%d].planar", i);
      cp_error_setc(err, CP_ERR_UNSUPPORTED, path,
                    "body \"%s\" is planar: the quasistatic stepper does not "
                    "support planar bodies (use the acceleration or velocity "
                    "stepper)",
                    b->name);
      return CP_WORLD_BAD_INPUT;
    }
    if (cp_wi_planar_check_state(w, NULL) != CP_WORLD_OK) {
      cp_error_set(err, "bodies", "%s", w->msg);
      return CP_WORLD_BAD_INPUT;
    }
    w->driven[r0 + a] = 1;
    w->driven[r0 + 3 + (a + 1) % 3] = 1;
    w->driven[r0 + 3 + (a + 2) % 3] = 1;
  }
  return support_init(w, err);
}

// Whether the state x (the layout of cp_world_get_state; NULL: the world's
// own) keeps every planar body's velocity in its plane: exactly zero along
// the normal and about the in-plane axes (the steppers keep them so; a
// nonzero one would never change).
cp_world_status cp_wi_planar_check_state(cp_world *w, const double *x) {
  for (int i = 0, k = 0; i < w->sc.n_bodies; ++i) {
    const cp_body *b = &w->sc.bodies[i];
    if (b->fixed) continue;
    const int a = b->planar - 1, o = 13 * k++;
    if (a < 0 || a > 2) continue;
    const double *v = x ? x + o + 7 : b->v, *om = x ? x + o + 10 : b->w;
    if (v[a] != 0)
      return cp_wi_fail(w, CP_WORLD_BAD_INPUT,
                        "body \"%s\" is planar (normal %s): its velocity "
                        "along %s must be 0, got %g%s",
                        b->name, axis_name[a], axis_name[a], v[a],
                        x ? " (state)" : "");
    for (int c = 0; c < 3; ++c)
      if (c != a && om[c] != 0)
        return cp_wi_fail(w, CP_WORLD_BAD_INPUT,
                          "body \"%s\" is planar (normal %s): its angular "
                          "velocity about %s must be 0, got %g%s",
                          b->name, axis_name[a], axis_name[c], om[c],
                          x ? " (state)" : "");
  }
  return CP_WORLD_OK;
}

// ---------------------------------------------------------------------------
// Support friction (docs/simulate.md, "Support friction"): a planar body
// whose scene entry has "support_friction" mu_s lies on a table normal to
// its plane's axis, on the side gravity points to. The table presses with
// the known force N = m |g_a| (the planar constraint carries it), spread
// over a patch: one point at the centre (support_radius 0) or four points
// at rho = 2 R / 3 along the two in-plane axes, N / 4 each, so that a pure
// spin meets the torque mu_s N rho = (2/3) mu_s N R of a uniformly pressed
// disc of radius R. Each point is a constraint of the step's friction LCP
// like a contact (pyramid when it sticks, mu_s c_n against its sliding
// direction when it slides), except that its normal unknown is fixed at its
// share of N (cp_wi_fixed_col and lcp_setup: the row c_n - N >= 0 _|_
// c_n >= 0, what c_n gives the other rows in q), and it takes no impulse.
// The points' data (N_i, mu_s, r and the frame) are fixed: w->sup, made
// once here; the step's constraint records point into it (con.sup).

static const int support_points[2] = {1, 4};

// The support points of the scene's planar bodies (w->nsup, w->sup);
// refuses a support without gravity into the table (its normal force
// would be 0).
static cp_world_status support_init(cp_world *w, cp_error *err) {
  char path[96];
  const double *g = w->sc.gravity;
  w->nsup = 0;
  for (int i = 0; i < w->sc.n_bodies; ++i) {
    const cp_body *b = &w->sc.bodies[i];
    if (b->fixed || !b->planar || !(b->support_mu > 0)) continue;
    const int a = b->planar - 1;
    if (!(fabs(g[a]) > 0)) {
      snprintf(path, sizeof path, "bodies[%d].planar.support_friction", i);
      cp_error_set(err, path,
                   "body \"%s\": support friction needs gravity along the "
                   "plane's normal (%s), which presses the body on its table; "
                   "the scene's gravity has none",
                   b->name, axis_name[a]);
      return CP_WORLD_BAD_INPUT;
    }
    w->nsup += support_points[b->support_radius > 0];
  }
  if (!w->nsup) return CP_WORLD_OK;
  if (!(w->sup = calloc((size_t)w->nsup, sizeof *w->sup))) {
    cp_error_set(err, "bodies", "out of memory");
    return CP_WORLD_NOMEM;
  }
  int n = 0;
  for (int i = 0, k = 0; i < w->sc.n_bodies; ++i) {
    const cp_body *b = &w->sc.bodies[i];
    if (b->fixed) continue;
    const int obj = k++;
    if (!b->planar || !(b->support_mu > 0)) continue;
    const int a = b->planar - 1, np = support_points[b->support_radius > 0];
    const double rho = 2.0 * b->support_radius / 3.0;
    for (int p = 0; p < np; ++p) {
      supp *c = &w->sup[n++];
      c->body = i, c->obj = obj, c->point = p;
      c->mu = b->support_mu;
      c->fixn = b->mass * fabs(g[a]) / np;
      // n from the table into the body (against gravity), t and o the
      // plane's axes with n x t = o; the points at +-rho t, +-rho o.
      double *r = c->sp, *nn = c->sp + 3, *t = c->sp + 6, *o = c->sp + 9;
      nn[a] = g[a] < 0 ? 1.0 : -1.0;
      t[(a + 1) % 3] = 1.0;
      o[(a + 2) % 3] = nn[a];
      if (np > 1) {
        const double s = p < 2 ? rho : -rho;
        const double *d = p % 2 ? o : t;
        for (int e = 0; e < 3; ++e) r[e] = s * d[e];
      }
    }
  }
  return CP_WORLD_OK;
}

void cp_wi_support_cons(const cp_world *w, con *out) {
  for (int n = 0; n < w->nsup; ++n) {
    const supp *s = &w->sup[n];
    con *c = &out[n];
    memset(c, 0, sizeof *c);
    c->key.a[0] = -3, c->key.a[1] = s->body, c->key.a[2] = 0;
    c->key.b[0] = c->key.b[1] = c->key.b[2] = -3;
    c->key.idx = s->point;
    c->contact = CP_CON_SUPPORT;
    c->row = s->obj;
    c->sup = n;
    c->mu = s->mu;
  }
}

// Column c of G for the body's coordinates (v, w at 6 row): the point's
// velocity v + w x r read along n, t and o, i.e. (d; r x d) per direction.
void cp_wi_support_columns(const cp_world *w, const con *c, double *g,
                           double *k, double *v) {
  const size_t nu = (size_t)w->nu;
  const cp_body *b = &w->sc.bodies[c->key.a[1]];
  const double *r = w->sup[c->sup].sp;
  double wr[3], wwr[3], vp[3];
  cp_v3_cross(wr, b->w, r);
  cp_v3_cross(wwr, b->w, wr); // the point's centripetal acceleration
  cp_v3_add(vp, b->v, wr);
  for (int d = 0; d < 3; ++d) {
    const double *dir = r + 3 + 3 * d;
    double *col = g + (size_t)d * nu + 6 * (size_t)c->row, rxd[3];
    cp_v3_cross(rxd, r, dir);
    for (int e = 0; e < 3; ++e) {
      col[e] = dir[e];
      col[3 + e] = rxd[e];
    }
    k[d] = cp_v3_dot(dir, wwr);
    v[d] = cp_v3_dot(dir, vp);
  }
}
