// The world's side of the independent step check (planner/sim/stepcheck.h):
// the step's data handed to cp_stepcheck_run, a failure named by body,
// contact or joint; whether a step crossed a joint limit.
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "models/grow.h"
#include "planner/sim/stepcheck.h"
#include "planner/sim/world_impl.h"

// The name of constraint j of the step ("box"/"table" point 2, or joint
// "m/j" lower limit) into buf.
static const char *con_name(const cp_world *w, int j, char *buf, size_t n) {
  const con *c = &w->cons[j];
  if (c->contact == CP_CON_SUPPORT) {
    snprintf(buf, n, "support of planar body \"%s\" point %d",
             w->sc.bodies[c->key.a[1]].name, c->key.idx);
    return buf;
  }
  if (c->contact < 0) {
    snprintf(buf, n, "joint \"%s/%s\" %s limit",
             w->sc.manips[w->row_manip[c->row]].name, cp_wi_cjoint_of(w, c->row)->name,
             c->sign > 0 ? "lower" : "upper");
    return buf;
  }
  const cp_contact *ct = &w->sc.contacts[c->contact];
  char a[128], b[128];
  cp_scene_ref_name(&w->sc, ct->a, a, sizeof a);
  cp_scene_ref_name(&w->sc, ct->b, b, sizeof b);
  snprintf(buf, n, "contact \"%s\"/\"%s\" point %d", a, b, c->key.idx);
  return buf;
}

// The name of free body b (0-based among the free bodies) into buf.
static const char *free_body_name(const cp_world *w, int b, char *buf, size_t n) {
  for (int i = 0, k = 0; i < w->sc.n_bodies; ++i) {
    if (w->sc.bodies[i].fixed) continue;
    if (k++ == b) {
      snprintf(buf, n, "body \"%s\"", w->sc.bodies[i].name);
      return buf;
    }
  }
  snprintf(buf, n, "body %d", b);
  return buf;
}

static const char *joint_name(const cp_world *w, int r, char *buf, size_t n) {
  snprintf(buf, n, "joint \"%s/%s\"", w->sc.manips[w->row_manip[r]].name,
           cp_wi_cjoint_of(w, r)->name);
  return buf;
}

// The independent check (planner/sim/stepcheck.h) of the step just taken over
// the system s. CP_WORLD_CHECK_FAILED names the law and where.
cp_world_status cp_wi_check_step(cp_world *w, stepsys *s, int accel_k) {
  const int nc = w->ncon, nu = w->nu;
  // Per constraint: gap, mu, compliance (scratch after 2 nu + 3 nc).
  double *gap = w->ck_buf + 2 * nu + 7 * nc, *mu = gap + nc, *cn = mu + nc,
         *ct = cn + nc, *e = ct + nc;
  const double kap = w->opt.compliance;
  const double *A = s->cs.A;
  const size_t n3 = 3 * (size_t)nc;
  for (int j = 0; j < nc; ++j) {
    const con *c = &w->cons[j];
    gap[j] = c->gap;
    mu[j] = c->contact != CP_CON_LIMIT ? c->mu : 0;
    e[j] = c->e;
    const size_t d = 3 * (size_t)j;
    cn[j] = c->contact >= 0 ? kap * A[d + d * n3] : 0;
    const double att = A[d + 1 + (d + 1) * n3], aoo = A[d + 2 + (d + 2) * n3];
    ct[j] = kap * (att > aoo ? att : aoo);
  }
  if (cp_wi_con_ranges(w)) return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
  cp_world_get_state(w, w->ck_x1);
  cp_stepcheck_step cs = {
      .nu = nu, .nc = nc, .nbody = w->nobj, .njoint = w->nl,
      .h = w->opt.dt, .accel_k = accel_k, .two_phase = w->ck_two_phase, .slide_tol = s->sys.tol, .H = s->sys.H, .f = s->sys.f,
      .G = w->G, .range = w->ck_rng, .nblock = w->nblk, .block = w->ck_blk,
      .k = w->kx, .driven = w->driven, .u0 = w->ck_u0,
      .u1 = w->ck_u1, .p = w->ck_p, .gap0 = gap, .mu = mu, .rest = e, .comp_n = cn,
      .comp_t = ct, .x0 = w->ck_x0p, .x1 = w->ck_x1,
      .xm = w->ck_drift > 0 ? w->ck_xm : w->ck_x1, .lower = w->lim_lo,
      .upper = w->lim_hi, .effort = s->sys.tau, .e0 = w->energy,
      .e1 = w->ck_e1, .drift_depth = w->ck_drift, .weight = w->weight};
  cp_stepcheck_report rep;
  if (cp_stepcheck_run(&cs, NULL, w->ck_buf, &rep) == CP_CHECK_OK)
    return CP_WORLD_OK;
  char where[300];
  switch (rep.law) {
  case CP_CHECK_NEWTON_EULER:
    if (rep.index < 6 * w->nobj) {
      char b[200];
      snprintf(where, sizeof where, "%s, %s component %d",
               free_body_name(w, rep.index / 6, b, sizeof b),
               rep.index % 6 < 3 ? "linear" : "angular", rep.index % 3);
    } else {
      joint_name(w, rep.index - 6 * w->nobj, where, sizeof where);
    }
    break;
  case CP_CHECK_MOTION:
    if (rep.index < w->nobj) free_body_name(w, rep.index, where, sizeof where);
    else joint_name(w, rep.index - w->nobj, where, sizeof where);
    break;
  case CP_CHECK_JOINT_LIMIT: joint_name(w, rep.index, where, sizeof where); break;
  case CP_CHECK_ENERGY: snprintf(where, sizeof where, "whole scene"); break;
  default: con_name(w, rep.index, where, sizeof where); break;
  }
  return cp_wi_fail(w, CP_WORLD_CHECK_FAILED,
              "t = %.9g: the step check failed: %s at %s: %.6g against the "
              "bound %.6g (%s stepper%s)",
              w->t, cp_stepcheck_law_name(rep.law), where, rep.value, rep.limit,
              accel_k ? "acceleration" : "velocity",
              rep.law == CP_CHECK_ENERGY ? ", inputs' work included" : "");
}

// Whether a joint ended beyond a limit by more than 1e-9 m (rad) and more
// than it started.
int cp_wi_limit_crossed(const cp_world *w) {
  for (int r = 0; r < w->nl; ++r) {
    const double q1 = cp_wi_cjoint_of(w, r)->position, q0 = w->ck_x0p[13 * w->nobj + 2 * r];
    const double b0 = fmax(w->lim_lo[r] - q0, q0 - w->lim_hi[r]);
    const double b1 = fmax(w->lim_lo[r] - q1, q1 - w->lim_hi[r]);
    if (b1 > 1e-9 && b1 > b0) return 1;
  }
  return 0;
}

cp_world_status cp_wi_grow_check(cp_world *w) {
  const int need = 2 * w->nu + 12 * w->ncon + 1;
  if (need <= w->ck_cap) return CP_WORLD_OK;
  int cap = 2 * need;
  double *p = realloc(w->ck_p, sizeof(double) * (size_t)cap);
  if (!p) return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
  w->ck_p = p;
  p = realloc(w->ck_buf, sizeof(double) * (size_t)cap);
  if (!p) return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
  w->ck_buf = p;
  w->ck_cap = cap;
  return CP_WORLD_OK;
}

