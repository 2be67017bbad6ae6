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

#include "planner/sim/world_impl.h"

static const char *const axis_name[3] = {"x", "y", "z"};

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
  return CP_WORLD_OK;
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
