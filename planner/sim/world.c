// The simulation handle (planner/sim/world.h; formulation §6): creation,
// state, inputs, and the step. One step (take below), phase by phase, each
// in its own file (planner/sim/world_impl.h):
//
//   contacts     constraints.c: the scene's shapes at the current state
//                with a look-ahead margin, reduced (models/manifold.h);
//                joint limits within the margin as unilateral rows.
//   system       stepsys.c: H, f, G, k (models/system.h) with the limit
//                columns; A = G^T H^-1 G and b (contact/dynamics.h).
//   stepper      steppers.c: acceleration, velocity or quasistatic; their
//                LCPs formed and solved in lcp.c, warm-started from the
//                previous step's basis mapped through constraint
//                identities (warm.c).
//   check        every state number finite; the independent step check
//                (worldcheck.c, planner/sim/stepcheck.h).
//   settle       constraints.c: contacts of the new state (the next
//                step's), deep overlap projected out, penetration refused.
//
// cp_world_step retries a failed attempt in substeps and by the velocity
// stepper; on failure the state is restored.
#include "planner/sim/world.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/lemke.h"
#include "models/bigbuf.h"
#include "models/clock.h"
#include "models/hash.h"
#include "models/vec3.h"
#include "planner/sim/world_impl.h"

// ---------------------------------------------------------------------------
// Small helpers

cp_world_status cp_wi_fail(cp_world *w, cp_world_status s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(w->msg, sizeof w->msg, fmt, ap);
  va_end(ap);
  return s;
}

const char *cp_stepper_name(cp_stepper s) {
  switch (s) {
  case CP_STEPPER_ACCELERATION: return "acceleration";
  case CP_STEPPER_VELOCITY: return "velocity";
  case CP_STEPPER_QUASISTATIC: return "quasistatic";
  }
  return "?";
}

int cp_stepper_parse(const char *name, cp_stepper *s) {
  static const cp_stepper all[] = {CP_STEPPER_ACCELERATION, CP_STEPPER_VELOCITY,
                                   CP_STEPPER_QUASISTATIC};
  for (int i = 0; i < 3; ++i)
    if (name && !strcmp(name, cp_stepper_name(all[i]))) {
      *s = all[i];
      return 0;
    }
  return -1;
}

const char *cp_world_status_name(cp_world_status s) {
  switch (s) {
  case CP_WORLD_OK: return "ok";
  case CP_WORLD_NEEDS_FALLBACK: return "needs_fallback";
  case CP_WORLD_PENETRATION: return "penetration";
  case CP_WORLD_JOINT_LIMIT: return "joint_limit";
  case CP_WORLD_NONFINITE: return "nonfinite";
  case CP_WORLD_SOLVER_FAILED: return "solver_failed";
  case CP_WORLD_NOMEM: return "out_of_memory";
  case CP_WORLD_BAD_INPUT: return "bad_input";
  case CP_WORLD_CHECK_FAILED: return "check_failed";
  case CP_WORLD_TIME_LIMIT: return "time_limit";
  }
  return "?";
}

cp_world_options cp_world_defaults(void) {
  cp_world_options o;
  memset(&o, 0, sizeof o);
  o.stepper = CP_STEPPER_ACCELERATION;
  o.dt = 1e-3;
  o.solve = cp_solve_defaults();
  // Lemke with the paper's restarts: a step that it cannot solve is taken
  // by the velocity stepper, which is cheaper than auto's FIP and MIP.
  o.solve.solver = CP_SOLVER_LEMKE;
  // The certificate, the last solver of a failed step's chain, is bounded
  // by work, never by the clock: a step's outcome (and so a planner's tree)
  // must not depend on how fast or how loaded the machine is. 2000
  // branch-and-bound nodes: the Allegro ball's solved certificates took
  // 89-1743 nodes but one (4777); a hopeless one had run 13 001 nodes into
  // the old 60 s limit (docs/simulate.md, "Solver limits"). The node
  // limit decides; the clock is only a safety net for an LP that stalls
  // inside glp_intopt, whose node LPs GLPK gives no iteration limit (one ran
  // for minutes in session 19): such a call ends undecided on any machine.
  o.solve.certify.time_limit_s = CP_WORLD_CERTIFY_SAFETY_S;
  o.solve.certify.node_limit = CP_WORLD_CERTIFY_NODES;
  o.warm_start = 1;
  o.allow_fallback = 1;
  o.compliance = 1e-6;
  o.check = 1;
  // The velocity stepper (the fallback) treats a sliding contact as the
  // acceleration stepper does: Coulomb's circle against the slip, one
  // unknown (docs/simulate.md, "Sliding contacts in the velocity stepper").
  o.velocity_sliding = 1;
  // Sized at creation for the scene's contacts, within a memory cap
  // (docs/simulate.md, "Reserve"): the steps then take no first-touch
  // page faults for them, as MuJoCo's arena; the states are the same.
  o.reserve = CP_WORLD_RESERVE_AUTO;
  return o;
}

// ---------------------------------------------------------------------------
// State

int cp_world_state_size(const cp_world *w) { return 13 * w->nobj + 2 * w->nl; }

void cp_world_get_state(const cp_world *w, double *x) {
  for (int i = 0; i < w->sc.n_bodies; ++i) {
    const cp_body *b = &w->sc.bodies[i];
    if (b->fixed) continue;
    memcpy(x, b->x, 3 * sizeof *x);
    memcpy(x + 3, b->q, 4 * sizeof *x);
    memcpy(x + 7, b->v, 3 * sizeof *x);
    memcpy(x + 10, b->w, 3 * sizeof *x);
    x += 13;
  }
  for (int r = 0; r < w->nl; ++r) {
    const cp_joint *j = cp_wi_cjoint_of(w, r);
    *x++ = j->position;
    *x++ = j->velocity;
  }
}

// Writes x into the scene without checks (x comes from get_state).
static void put_state(cp_world *w, const double *x) {
  for (int i = 0; i < w->sc.n_bodies; ++i) {
    cp_body *b = &w->sc.bodies[i];
    if (b->fixed) continue;
    memcpy(b->x, x, 3 * sizeof *x);
    memcpy(b->q, x + 3, 4 * sizeof *x);
    memcpy(b->v, x + 7, 3 * sizeof *x);
    memcpy(b->w, x + 10, 3 * sizeof *x);
    x += 13;
  }
  for (int r = 0; r < w->nl; ++r) {
    cp_joint *j = cp_wi_joint_of(w, r);
    j->position = *x++;
    j->velocity = *x++;
  }
  w->contacts_valid = 0;
}

static void hash_state(cp_world *w) {
  for (int i = 0; i < w->sc.n_bodies; ++i) {
    const cp_body *b = &w->sc.bodies[i];
    if (b->fixed) continue;
    w->hash = cp_fnv_words(w->hash, b->x, sizeof b->x);
    w->hash = cp_fnv_words(w->hash, b->q, sizeof b->q);
    w->hash = cp_fnv_words(w->hash, b->v, sizeof b->v);
    w->hash = cp_fnv_words(w->hash, b->w, sizeof b->w);
  }
  for (int r = 0; r < w->nl; ++r) {
    const cp_joint *j = cp_wi_cjoint_of(w, r);
    w->hash = cp_fnv_words(w->hash, &j->position, sizeof j->position);
    w->hash = cp_fnv_words(w->hash, &j->velocity, sizeof j->velocity);
  }
}

cp_world_status cp_world_set_state(cp_world *w, const double *x) {
  int n = cp_world_state_size(w);
  for (int i = 0; i < n; ++i)
    if (!isfinite(x[i]))
      return cp_wi_fail(w, CP_WORLD_NONFINITE, "state[%d] is not finite", i);
  cp_world_status pst = cp_wi_planar_check_state(w, x); // planar.c
  if (pst != CP_WORLD_OK) return pst;
  for (int i = 0, k = 0; i < w->sc.n_bodies; ++i) {
    if (w->sc.bodies[i].fixed) continue;
    const double *q = x + 13 * k + 3;
    double nq = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (fabs(nq - 1) > 1e-6)
      return cp_wi_fail(w, CP_WORLD_BAD_INPUT,
                  "body \"%s\": orientation norm %.9g is not 1 (state[%d..%d])",
                  w->sc.bodies[i].name, nq, 13 * k + 3, 13 * k + 6);
    ++k;
  }
  put_state(w, x);
  for (int i = 0; i < w->sc.n_bodies; ++i) {
    cp_body *b = &w->sc.bodies[i];
    if (b->fixed) continue;
    double nq = sqrt(b->q[0] * b->q[0] + b->q[1] * b->q[1] +
                     b->q[2] * b->q[2] + b->q[3] * b->q[3]);
    for (int k = 0; k < 4; ++k) b->q[k] /= nq;
  }
  hash_state(w);
  w->nwarm = 0;
  w->msg[0] = 0;
  w->energy = cp_wi_energy_of(w);
  return CP_WORLD_OK;
}

double cp_world_time(const cp_world *w) { return w->t; }
double cp_world_dt(const cp_world *w) { return w->opt.dt; }
void cp_world_set_time(cp_world *w, double t) { w->t = t; }
const char *cp_world_message(const cp_world *w) { return w->msg; }
cp_step_profile cp_world_profile(const cp_world *w) { return w->prof; }
const cp_scene *cp_world_scene(const cp_world *w) { return &w->sc; }
uint64_t cp_world_hash(const cp_world *w) { return w->hash; }
int cp_world_joint_count(const cp_world *w) { return w->nl; }

int cp_world_joint_index(const cp_world *w, const char *name) {
  // "manipulator/joint" compared in place: names of any length, and no
  // truncated name that would match another's prefix.
  for (int r = 0; r < w->nl; ++r) {
    const char *m = w->sc.manips[w->row_manip[r]].name;
    const size_t lm = strlen(m);
    if (!strncmp(name, m, lm) && name[lm] == '/' &&
        !strcmp(name + lm + 1, cp_wi_cjoint_of(w, r)->name))
      return r;
  }
  return -1;
}

cp_world_status cp_world_set_effort(cp_world *w, int joint, double effort) {
  if (joint < 0 || joint >= w->nl)
    return cp_wi_fail(w, CP_WORLD_BAD_INPUT, "joint %d: no such joint (0..%d)", joint,
                w->nl - 1);
  if (!isfinite(effort))
    return cp_wi_fail(w, CP_WORLD_NONFINITE, "joint %d: effort is not finite", joint);
  cp_joint *j = cp_wi_joint_of(w, joint);
  if (j->drive == CP_DRIVE_ACCELERATION) j->acceleration = effort;
  else j->effort = effort;
  return CP_WORLD_OK;
}

cp_world_status cp_world_set_joint_velocity(cp_world *w, int joint,
                                            double velocity) {
  if (joint < 0 || joint >= w->nl)
    return cp_wi_fail(w, CP_WORLD_BAD_INPUT, "joint %d: no such joint (0..%d)", joint,
                w->nl - 1);
  if (!isfinite(velocity))
    return cp_wi_fail(w, CP_WORLD_NONFINITE, "joint %d: velocity is not finite",
                joint);
  cp_wi_joint_of(w, joint)->velocity = velocity;
  w->energy = cp_wi_energy_of(w);
  return CP_WORLD_OK;
}

// Kinetic plus gravitational potential energy (fixed bodies excluded: they
// never move). Links from their world kinematics.
double cp_wi_energy_of(const cp_world *w) {
  const cp_scene *s = &w->sc;
  double e = 0;
  for (int i = 0; i < s->n_bodies; ++i) {
    const cp_body *b = &s->bodies[i];
    if (b->fixed) continue;
    double R[9], Iw[9], Iww[3];
    cp_quat_to_mat(R, b->q);
    cp_m3_rotate_sym(Iw, R, b->inertia);
    cp_m3_mulv(Iww, Iw, b->w);
    e += 0.5 * b->mass * cp_v3_dot(b->v, b->v) + 0.5 * cp_v3_dot(b->w, Iww) -
         b->mass * cp_v3_dot(s->gravity, b->x);
  }
  for (int m = 0; m < s->n_manips; ++m) {
    const cp_chain *c = &s->manips[m];
    cp_link_state st[64], *ls = c->n <= 64 ? st : malloc(sizeof *ls * (size_t)c->n);
    if (!ls) return NAN;
    cp_chain_kinematics(c, ls);
    for (int k = 0; k < c->n; ++k) {
      const cp_link *l = &c->joints[k].link;
      double r[3], vc[3], wr[3], Iw[9], Iww[3];
      cp_v3_sub(r, ls[k].com, ls[k].o);
      cp_v3_cross(wr, ls[k].w, r);
      cp_v3_add(vc, ls[k].v, wr);
      cp_m3_rotate_sym(Iw, ls[k].R, l->inertia);
      cp_m3_mulv(Iww, Iw, ls[k].w);
      e += 0.5 * l->mass * cp_v3_dot(vc, vc) + 0.5 * cp_v3_dot(ls[k].w, Iww) -
           l->mass * cp_v3_dot(s->gravity, ls[k].com);
    }
    if (ls != st) free(ls);
  }
  return e;
}

double cp_world_energy(const cp_world *w) { return cp_wi_energy_of(w); }

// ---------------------------------------------------------------------------
// Creation

static void memo_free(cp_world *w) {
  for (int i = 0; w->memo && i < w->opt.impact_memo; ++i) free(w->memo[i].d);
  free(w->memo);
  w->memo = NULL;
}

cp_world_status cp_world_set_impact_memo(cp_world *w, int slots) {
  if (slots < 0)
    return cp_wi_fail(w, CP_WORLD_BAD_INPUT, "impact_memo: must be >= 0, got %d", slots);
  memo_free(w);
  w->opt.impact_memo = 0;
  if (slots == 0) return CP_WORLD_OK;
  if (!(w->memo = calloc((size_t)slots, sizeof *w->memo)))
    return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
  w->opt.impact_memo = slots;
  return CP_WORLD_OK;
}

void cp_world_set_memo_pivots(cp_world *w, int on) {
  w->memo_pivots = on != 0;
}

void cp_world_clear_impact_memo(cp_world *w) {
  for (int i = 0; w->memo && i < w->opt.impact_memo; ++i) w->memo[i].ns = 0;
}

void cp_world_destroy(cp_world *w) {
  if (!w) return;
  memo_free(w);
  cp_wi_islands_free(w);
  cp_wi_sparse_free(w);
  cp_scene_free(&w->sc);
  free(w->row_manip);
  free(w->row_joint);
  free(w->cons);
  free(w->sup);
  free(w->wc);
  free(w->warm);
  free(w->warm_next);
  cp_lemke_ws_destroy(w->ws);
  cp_bigbuf_free(w->M);
  free(w->q);
  free(w->z);
  free(w->w);
  free(w->basis);
  free(w->basis0);
  cp_bigbuf_free(w->LU);
  free(w->lum_in);
  cp_bigbuf_free(w->MB);
  free(w->ipiv);
  free(w->zidx);
  free(w->Gx);
  free(w->kx);
  cp_bigbuf_free(w->As);
  free(w->bs);
  free(w->c);
  free(w->cfull);
  free(w->udot);
  free(w->u0);
  free(w->du);
  free(w->vc);
  free(w->ud);
  free(w->driven);
  free(w->sel);
  free(w->order);
  free(w->rank);
  free(w->pc);
  free(w->state0);
  free(w->ck_u0);
  free(w->ck_u1);
  free(w->ck_p);
  free(w->ck_x0);
  free(w->ck_x1);
  free(w->ck_xm);
  free(w->ck_buf);
  free(w->lim_lo);
  free(w->lim_hi);
  free(w->free_idx);
  free(w->manip_r0);
  free(w->ck_blk);
  free(w->ck_rng);
  free(w->nb_buf);
  free(w->as_fp);
  free(w->ex_buf);
  cp_contact_space_free(&w->cs_keep);
  cp_contactgen_ws_free(&w->cg_ws);
  cp_system_ws_free(&w->sys_ws);
  free(w);
}

cp_world_status cp_world_create(const cp_scene *scene,
                                const cp_world_options *opt, cp_world **out,
                                cp_error *err) {
  *out = NULL;
  cp_world_options def = cp_world_defaults();
  if (!opt) opt = &def;
  if (!scene->contacts_auto) {
    cp_error_set(err, "contacts",
                 "a scene with an explicit contact list cannot be simulated: "
                 "contacts must come from shapes (\"contacts\": \"auto\") to "
                 "move with the bodies");
    return CP_WORLD_BAD_INPUT;
  }
  if (!(opt->dt > 0) || !isfinite(opt->dt)) {
    cp_error_set(err, "dt", "the time step must be a finite number > 0, got %g",
                 opt->dt);
    return CP_WORLD_BAD_INPUT;
  }
  if (!(opt->compliance >= 0) || !(opt->compliance <= 1e-2)) {
    cp_error_set(err, "compliance",
                 "the relative compliance must be a number in [0, 0.01], "
                 "got %g",
                 opt->compliance);
    return CP_WORLD_BAD_INPUT;
  }
  if (opt->stepper != CP_STEPPER_ACCELERATION &&
      opt->stepper != CP_STEPPER_VELOCITY &&
      opt->stepper != CP_STEPPER_QUASISTATIC) {
    cp_error_set(err, "stepper", "unknown stepper %d", (int)opt->stepper);
    return CP_WORLD_BAD_INPUT;
  }
  if (opt->impact_memo < 0) {
    cp_error_set(err, "impact_memo", "must be >= 0, got %d", opt->impact_memo);
    return CP_WORLD_BAD_INPUT;
  }
  if (opt->reserve < CP_WORLD_RESERVE_AUTO || opt->reserve > CP_WORLD_RESERVE_MAX) {
    cp_error_set(err, "reserve",
                 "must be -1 (the scene's contacts), 0 (none) or a number of "
                 "contacts from 1 to %d, got %d",
                 CP_WORLD_RESERVE_MAX, opt->reserve);
    return CP_WORLD_BAD_INPUT;
  }
  cp_world *w = calloc(1, sizeof *w);
  if (!w || cp_scene_copy(scene, &w->sc)) {
    free(w);
    cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
    return CP_WORLD_NOMEM;
  }
  w->opt = *opt;
  w->deadline = INFINITY;
  if (cp_world_set_impact_memo(w, opt->impact_memo) != CP_WORLD_OK) {
    cp_world_destroy(w);
    cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
    return CP_WORLD_NOMEM;
  }
  for (int i = 0; i < w->sc.n_bodies; ++i) w->nobj += !w->sc.bodies[i].fixed;
  w->nl = cp_scene_joint_count(&w->sc);
  w->nu = 6 * w->nobj + w->nl;
  w->grav_norm = cp_v3_norm(w->sc.gravity);
  int n1 = w->nl > 0 ? w->nl : 1;
  w->row_manip = malloc(sizeof(int) * (size_t)n1);
  w->row_joint = malloc(sizeof(int) * (size_t)n1);
  w->state0 = malloc(sizeof(double) * (size_t)(cp_world_state_size(w) + 1));
  size_t nu1 = (size_t)(w->nu > 0 ? w->nu : 1);
  w->udot = malloc(sizeof(double) * nu1);
  w->u0 = malloc(sizeof(double) * nu1);
  w->du = malloc(sizeof(double) * nu1);
  w->ud = calloc(nu1, sizeof(double));
  w->driven = calloc(nu1, 1);
  w->ck_u0 = malloc(sizeof(double) * nu1);
  w->ck_u1 = malloc(sizeof(double) * nu1);
  w->ck_x0 = malloc(sizeof(double) * (size_t)(cp_world_state_size(w) + 1));
  w->ck_x1 = malloc(sizeof(double) * (size_t)(cp_world_state_size(w) + 1));
  w->ck_xm = malloc(sizeof(double) * (size_t)(cp_world_state_size(w) + 1));
  w->lim_lo = malloc(sizeof(double) * (size_t)n1);
  w->lim_hi = malloc(sizeof(double) * (size_t)n1);
  w->free_idx = malloc(sizeof(int) * (size_t)(w->sc.n_bodies + 1));
  w->manip_r0 = malloc(sizeof(int) * (size_t)(w->sc.n_manips + 1));
  w->ck_blk = malloc(sizeof(int) * (size_t)(w->nobj + w->sc.n_manips + 1));
  if (!w->row_manip || !w->row_joint || !w->state0 || !w->udot || !w->u0 ||
      !w->du || !w->ud || !w->driven || !w->ck_u0 || !w->ck_u1 || !w->ck_x0 ||
      !w->ck_x1 || !w->ck_xm || !w->lim_lo || !w->lim_hi || !w->free_idx ||
      !w->manip_r0 || !w->ck_blk) {
    cp_world_destroy(w);
    cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
    return CP_WORLD_NOMEM;
  }
  // Joint rows: each chain's independent (non-mimic) joints in chain order
  // (models/system.h); mimic followers are moved with their leaders.
  // The dof structure of the per-step check: H's diagonal blocks (each
  // free body, each manipulator) and which dofs a contact's side moves.
  for (int i = 0, k = 0; i < w->sc.n_bodies; ++i)
    w->free_idx[i] = w->sc.bodies[i].fixed ? -1 : k++;
  for (int k = 0; k <= w->nobj; ++k) w->ck_blk[k] = 6 * k;
  w->nblk = w->nobj;
  for (int m = 0, r = 0; m < w->sc.n_manips; ++m) {
    w->manip_r0[m] = r;
    for (int k = 0; k < w->sc.manips[m].n; ++k) r += !w->sc.manips[m].joints[k].is_mimic;
    w->manip_r0[m + 1] = r;
    if (w->manip_r0[m + 1] > w->manip_r0[m]) w->ck_blk[++w->nblk] = 6 * w->nobj + r;
  }
  for (int m = 0, r = 0; m < w->sc.n_manips; ++m)
    for (int k = 0; k < w->sc.manips[m].n; ++k) {
      if (w->sc.manips[m].joints[k].is_mimic) continue;
      w->row_manip[r] = m;
      w->row_joint[r] = k;
      const cp_joint *jt = &w->sc.manips[m].joints[k];
      w->lim_lo[r] = jt->has_limits ? jt->lower : -INFINITY;
      w->lim_hi[r] = jt->has_limits ? jt->upper : INFINITY;
      ++r;
    }
  for (int i = 0; i < w->sc.n_bodies; ++i)
    if (!w->sc.bodies[i].fixed) w->weight += w->sc.bodies[i].mass * w->grav_norm;
  for (int m = 0; m < w->sc.n_manips; ++m)
    for (int k = 0; k < w->sc.manips[m].n; ++k)
      w->weight += w->sc.manips[m].joints[k].link.mass * w->grav_norm;
  w->hash = CP_FNV_OFFSET;
  cp_world_status st = cp_wi_planar_init(w, err); // planar.c
  if (st != CP_WORLD_OK) {
    cp_world_destroy(w);
    return st;
  }
  // The scene must start without deep overlap (its own tolerance).
  st = cp_wi_gen_contacts(w, w->sc.penetration_tolerance);
  if (st != CP_WORLD_OK) {
    cp_error_set(err, "contacts", "%s", w->msg);
    cp_world_destroy(w);
    return st == CP_WORLD_PENETRATION ? CP_WORLD_BAD_INPUT : st;
  }
  if (opt->reserve &&
      (st = opt->reserve > 0 ? cp_wi_reserve(w, opt->reserve, 0)
                             : cp_wi_reserve(w, w->sc.n_contacts, CP_WORLD_RESERVE_AUTO_LCP)) !=
          CP_WORLD_OK) {
    cp_error_setc(err, CP_ERR_NOMEM, "reserve", "out of memory: %s", w->msg);
    cp_world_destroy(w);
    return st;
  }
  w->energy = cp_wi_energy_of(w);
  hash_state(w);
  memset(&w->prof, 0, sizeof w->prof); // the first step's profile starts here
  *out = w;
  return CP_WORLD_OK;
}

// ---------------------------------------------------------------------------
// The step

// Checks the state for NaN/infinity; names the first offender.
static cp_world_status check_finite(cp_world *w) {
  for (int i = 0; i < w->sc.n_bodies; ++i) {
    const cp_body *b = &w->sc.bodies[i];
    if (b->fixed) continue;
    const char *what = !cp_v3_isfinite(b->x) ? "position"
                       : !(isfinite(b->q[0]) && isfinite(b->q[1]) &&
                           isfinite(b->q[2]) && isfinite(b->q[3]))
                           ? "orientation"
                       : !cp_v3_isfinite(b->v) ? "linear velocity"
                       : !cp_v3_isfinite(b->w) ? "angular velocity"
                                               : NULL;
    if (what)
      return cp_wi_fail(w, CP_WORLD_NONFINITE,
                  "t = %.9g: body \"%s\": %s is not finite after the step",
                  w->t, b->name, what);
  }
  for (int r = 0; r < w->nl; ++r) {
    const cp_joint *j = cp_wi_cjoint_of(w, r);
    if (!isfinite(j->position) || !isfinite(j->velocity))
      return cp_wi_fail(w, CP_WORLD_NONFINITE,
                  "t = %.9g: joint \"%s/%s\": %s is not finite after the step",
                  w->t, w->sc.manips[w->row_manip[r]].name, j->name,
                  isfinite(j->position) ? "velocity" : "position");
  }
  return CP_WORLD_OK;
}

// One step of w->opt.dt by stepper stp from the current state: contacts,
// the system, the stepper (the acceleration stepper's fallback), a step
// that crossed a joint limit taken again with every limit, the finite and
// independent checks, the contacts of the new state (penetration). On
// success the warm records are committed and the time advanced; on failure
// the state is whatever the attempt left (the caller restores it).
static cp_world_status take(cp_world *w, cp_stepper stp, cp_step_info *info,
                            int whole) {
  // whole: the step is taken in one piece from w->state0 (its start state
  // is already there)
  if (whole) {
    w->ck_x0p = w->state0;
  } else {
    cp_world_get_state(w, w->ck_x0);
    w->ck_x0p = w->ck_x0;
  }
  cp_world_status st = CP_WORLD_OK;
  if (!w->contacts_valid && (st = cp_wi_gen_contacts(w, cp_wi_pen_limit(w))) != CP_WORLD_OK)
    return st;
  info->contacts = w->sc.n_contacts;
  w->nwarm_next = 0;
  int checked = 0;
  double t0 = cp_wi_tic(w), in0 = cp_wi_phases(w);
  if (stp == CP_STEPPER_QUASISTATIC) {
    st = cp_wi_step_quasistatic(w, info);
    cp_wi_toc_rest(w, &w->prof.integrate, t0, in0);
    if (st != CP_WORLD_OK) return st;
    t0 = cp_wi_tic(w);
    st = check_finite(w);
    cp_wi_toc(w, &w->prof.check, t0);
    if (st != CP_WORLD_OK) return st;
    for (int r = 0; r < w->nl; ++r) {
      const cp_joint *j = cp_wi_cjoint_of(w, r);
      double slack = 1e-3 * fmax(1.0, fabs(j->upper - j->lower));
      if (j->has_limits &&
          (j->position < j->lower - slack || j->position > j->upper + slack))
        return cp_wi_fail(w, CP_WORLD_JOINT_LIMIT,
                    "t = %.9g: joint \"%s/%s\" at %.9g left its limits [%g, %g]",
                    w->t, w->sc.manips[w->row_manip[r]].name, j->name,
                    j->position, j->lower, j->upper);
    }
  } else {
    if ((st = cp_wi_grow_check(w)) != CP_WORLD_OK) return st;
    cp_wi_get_u(w, w->ck_u0);
    memset(w->ck_p, 0, sizeof(double) * 3 * (size_t)w->ncon);
    w->ck_drift = 0;
    w->ck_two_phase = 0;
    stepsys s;
    if ((st = cp_wi_build(w, &s)) != CP_WORLD_OK) return st;
    int accel_k = stp == CP_STEPPER_ACCELERATION;
    st = accel_k ? cp_wi_step_acceleration(w, &s, info) : cp_wi_step_velocity(w, &s, info);
    if (st == CP_WORLD_NEEDS_FALLBACK && w->opt.allow_fallback) {
      // Painleve / inconsistent: the velocity stepper from the start.
      cp_wi_stepsys_free(w, &s);
      put_state(w, w->ck_x0p);
      w->contacts_valid = 1; // the constraints are the start state's
      w->nwarm_next = 0;
      memset(w->ck_p, 0, sizeof(double) * 3 * (size_t)w->ncon);
      w->ck_drift = 0;
    w->ck_two_phase = 0;
      accel_k = 0;
      st = cp_wi_build(w, &s);
      if (st == CP_WORLD_OK) st = cp_wi_step_velocity(w, &s, info);
      info->fallback = 1;
    }
    cp_wi_toc_rest(w, &w->prof.integrate, t0, in0);
    if (st == CP_WORLD_OK && !w->all_limits && cp_wi_limit_crossed(w)) {
      // A limit outside the window (or not selected) was crossed: the step
      // again with every limit a constraint and a row of its LCPs.
      cp_wi_stepsys_free(w, &s);
      put_state(w, w->ck_x0p);
      w->all_limits = 1;
      info->limits_redone = 1;
      st = take(w, stp, info, whole);
      w->all_limits = 0;
      return st;
    }
    t0 = cp_wi_tic(w);
    if (st == CP_WORLD_OK) st = check_finite(w);
    if (st == CP_WORLD_OK && w->opt.check) {
      w->ck_e1 = cp_wi_energy_of(w);
      st = cp_wi_check_step(w, &s, accel_k);
      checked = st == CP_WORLD_OK;
    }
    cp_wi_toc(w, &w->prof.check, t0);
    cp_wi_stepsys_free(w, &s);
    if (st != CP_WORLD_OK) return st;
  }
  // Contacts of the new state (the penetration check and the next step's),
  // the step's overlap settled; a settled state's energy is its own (the
  // next step's check starts from it).
  w->contacts_valid = 0;
  int moved;
  if ((st = cp_wi_settle(w, info, &moved)) != CP_WORLD_OK) return st;
  cp_wi_warm_commit(w);
  w->t += w->opt.dt;
  w->energy = checked && !moved ? w->ck_e1 : cp_wi_energy_of(w);
  info->checked = checked;
  return CP_WORLD_OK;
}

// Statuses after which a step is taken again (retry) rather than refused.
static int retryable(cp_world_status st) {
  return st == CP_WORLD_CHECK_FAILED || st == CP_WORLD_NONFINITE ||
         st == CP_WORLD_PENETRATION || st == CP_WORLD_JOINT_LIMIT ||
         st == CP_WORLD_SOLVER_FAILED;
}

#define CP_WORLD_SUBSTEPS 4

typedef struct try_t {
  cp_stepper s;
  int n;       // substeps
  int pyramid; // the velocity stepper with velocity_sliding off
} try_t;

cp_world_status cp_world_step(cp_world *w, cp_step_info *out) {
  cp_step_info info;
  memset(&info, 0, sizeof info);
  w->msg[0] = 0;
  if (w->poll) cp_lemke_set_poll(w->ws, w->poll, w->poll_ctx, w->poll_period);
  const double tstep = cp_wi_tic(w);
  if (w->opt.profile) memset(&w->prof, 0, sizeof w->prof);
  cp_world_get_state(w, w->state0);
  const double t0 = w->t, h = w->opt.dt;
  const cp_stepper primary = w->opt.stepper;
  // Attempts: the step as asked; then (checked dynamic steppers) in
  // substeps, then by the velocity stepper whole and in substeps (it always
  // has a solution), each with every joint limit a constraint. Last, when
  // the velocity stepper writes sliding contacts with Coulomb's law against
  // the slip at the step's start (velocity_sliding), the velocity stepper
  // with the pyramid, whole and in substeps: a slip that turns within the
  // step meets that friction a step late, which the check's friction test
  // can refuse, while the pyramid's friction (maximal dissipation, found
  // with the step's own velocities) dissipates by construction.
  try_t tries[6] = {{primary, 1, 0}};
  int ntries = 1;
  if (w->opt.check && primary != CP_STEPPER_QUASISTATIC) {
    tries[ntries++] = (try_t){primary, CP_WORLD_SUBSTEPS, 0};
    const int fallback = primary == CP_STEPPER_ACCELERATION && w->opt.allow_fallback;
    if (fallback) {
      tries[ntries++] = (try_t){CP_STEPPER_VELOCITY, 1, 0};
      tries[ntries++] = (try_t){CP_STEPPER_VELOCITY, CP_WORLD_SUBSTEPS, 0};
    }
    if (w->opt.velocity_sliding && (fallback || primary == CP_STEPPER_VELOCITY)) {
      tries[ntries++] = (try_t){CP_STEPPER_VELOCITY, 1, 1};
      tries[ntries++] = (try_t){CP_STEPPER_VELOCITY, CP_WORLD_SUBSTEPS, 1};
    }
  }
  const int velocity_sliding = w->opt.velocity_sliding;
  char first[512];
  first[0] = 0;
  cp_world_status st = CP_WORLD_OK, st0 = CP_WORLD_OK;
  w->deadline_hit = 0;
  int a;
  for (a = 0; a < ntries; ++a) {
    if (a > 0) {
      put_state(w, w->state0);
      w->t = t0;
      w->all_limits = 1;
      info.retried = 1;
    }
    w->opt.dt = h / tries[a].n;
    if (tries[a].pyramid) w->opt.velocity_sliding = 0;
    for (int k = 0; k < tries[a].n; ++k) {
      cp_step_info sub;
      memset(&sub, 0, sizeof sub);
      st = take(w, tries[a].s, &sub, tries[a].n == 1);
      info.contacts = k == 0 ? sub.contacts : info.contacts;
      info.impacts += sub.impacts;
      info.lcp_solves += sub.lcp_solves;
      info.pivots += sub.pivots;
      info.lcp_reused += sub.lcp_reused;
      info.warm_started |= sub.warm_started;
      info.fallback |= sub.fallback || tries[a].s != primary;
      info.limits_redone |= sub.limits_redone;
      info.checked = sub.checked;
      if (st != CP_WORLD_OK) break;
    }
    w->opt.dt = h;
    w->opt.velocity_sliding = velocity_sliding;
    if (st == CP_WORLD_OK) break;
    if (a == 0) {
      st0 = st;
      snprintf(first, sizeof first, "%s", w->msg);
    }
    if (w->deadline_hit && st != CP_WORLD_NOMEM) {
      // A solver call was refused: the deadline has passed, so no retry
      // (each would meet it again).
      char why[512];
      snprintf(why, sizeof why, "%s", w->msg);
      cp_wi_fail(w, CP_WORLD_TIME_LIMIT,
                 "t = %.9g: the step was stopped at its deadline "
                 "(cp_world_set_deadline) after %d attempt%s: %.400s",
                 t0, a + 1, a ? "s" : "", why);
      st = CP_WORLD_TIME_LIMIT;
      break;
    }
    if (!retryable(st)) break;
  }
  w->all_limits = 0;
  info.islands = cp_wi_islands_taken(w);
  if (st != CP_WORLD_OK) {
    if (st != CP_WORLD_TIME_LIMIT && a > 0 && a >= ntries) {
      // Every retry failed: the first failure, and what the last said.
      char last[512];
      snprintf(last, sizeof last, "%s", w->msg);
      snprintf(w->msg, sizeof w->msg,
               "%.216s; taken again in %d substeps and by the velocity "
               "stepper%s: %.200s",
               first, CP_WORLD_SUBSTEPS,
               tries[ntries - 1].pyramid ? " (also with the pyramid)" : "", last);
      st = st0;
    }
    put_state(w, w->state0);
    w->t = t0;
    w->nwarm_next = 0;
    w->energy = cp_wi_energy_of(w);
    cp_wi_toc(w, &w->prof.total, tstep);
    if (out) *out = info;
    return st;
  }
  w->t = t0 + h;
  hash_state(w);
  info.max_penetration = cp_wi_max_depth(w);
  info.energy = w->energy;
  cp_wi_toc(w, &w->prof.total, tstep);
  if (out) *out = info;
  return CP_WORLD_OK;
}

void cp_world_set_deadline(cp_world *w, double seconds) {
  w->deadline = seconds < INFINITY ? cp_wi_now(w) + seconds : INFINITY;
}

void cp_world_set_clock(cp_world *w, double (*clock)(void *ctx), void *ctx) {
  w->clock = clock;
  w->clock_ctx = clock ? ctx : NULL;
}

cp_world_status cp_world_set_solve_poll(cp_world *w, void (*fn)(void *ctx),
                                        void *ctx, int period) {
  if (fn && period < 1)
    return cp_wi_fail(w, CP_WORLD_BAD_INPUT,
                      "the solve poll's period is %d pivots (expected >= 1)",
                      period);
  w->poll = fn;
  w->poll_ctx = fn ? ctx : NULL;
  w->poll_period = fn ? period : 0;
  // (The world's workspace is made with its first contacts: each step
  // gives it the hook, cp_world_step.)
  if (w->ws) cp_lemke_set_poll(w->ws, fn, ctx, period);
  return CP_WORLD_OK;
}
