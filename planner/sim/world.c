// The simulation handle (planner/sim/world.h; formulation §6). One step:
//
//   contacts   the scene's shapes at the current state, generated with a
//              speculative margin (touch_tol + what the bodies can close in
//              one step) so that approaching surfaces are seen one step
//              before they meet; joint limits within the same margin are
//              frictionless unilateral constraints (a column +-e_r of G).
//   system     H, f, G, k of the scene (models/system.h) extended by the
//              limit columns; A = G^T H^-1 G and b by contact/dynamics.h.
//   stepper    acceleration, velocity or quasistatic (see world.h and
//              docs/simulate.md); LCPs by Lemke, warm-started from the
//              basis of the previous step mapped through contact identities.
//   check      every state number finite; contacts at the new state (they are
//              also the next step's) give the penetration; on any failure
//              the state is restored.
//
// Contact identity: the pair (a, b) plus the index of the point within the
// pair's list (models/contactgen.h orders them deterministically); a joint
// limit is (joint row, lower/upper).
#include "planner/sim/world.h"

#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <lapacke.h>

#include "contact/dynamics.h"
#include "contact/lemke.h"
#include "contact/pyramid.h"
#include "contact/quasistatic.h"
#include "models/contactgen.h"
#include "models/grow.h"
#include "models/system.h"
#include "models/vec3.h"
#include "planner/sim/stepcheck.h"

// ---------------------------------------------------------------------------
// Types

typedef struct ckey {
  int a[3], b[3]; // refs (body, manip, link); limits: a = {-2, row, side}
  int idx;        // point index within the pair
} ckey;

// One constraint of a step: a generated contact or an active joint limit.
typedef struct con {
  ckey key;
  int contact;    // index into sc.contacts, or -1 for a limit
  int row;        // limit: joint row (0..n_l-1)
  double sign;    // limit: +1 lower, -1 upper
  double gap;     // >= 0 separation, < 0 overlap
  double mu, e;
} con;

// Warm-start record: a constraint's identity and which of its LCP unknowns
// were basic (slots: acceleration LCP c_n, s+_t, s+_o, a-_t, a-_o;
// velocity LCP p_n, beta_1..4, lambda).
typedef struct wrec {
  ckey key;
  unsigned char kind; // 0 acceleration LCP, 1 velocity LCP
  unsigned char flag[6];
} wrec;

// A slot of the impact memo (memo_find below).
#define CP_WORLD_MEMO_KEY 4096
typedef struct memo_slot {
  uint64_t h;
  int ns, m; // ns = 0: empty
  size_t cap; // doubles at d
  double *d;  // key: Asel (3 ns square), bs (3 ns), mu (ns); then z (m)
} memo_slot;

#define CP_WORLD_MERGE_TOL 1e-7 /* m */
#define WARM_MAGIC 0x636d7731u /* "cmw1" */

struct cp_world {
  cp_scene sc;
  cp_world_options opt;
  double deadline;   // CLOCK_MONOTONIC seconds (cp_world_set_deadline: bounds
                     // the solvers' time); INFINITY: none
  double t;
  uint64_t hash;
  char msg[512];
  int nobj, nl, nu;
  int *row_manip, *row_joint; // [nl]
  double grav_norm;

  // contacts of the current state (valid until the state changes)
  int contacts_valid;
  // constraints of the step
  con *cons;
  int ncon, con_cap;
  // last step's contacts for viewers
  cp_world_contact *wc;
  int nwc, wc_cap;
  // warm start
  wrec *warm, *warm_next;
  int nwarm, nwarm_next, warm_cap;

  // workspaces (grown, never shrunk)
  cp_lemke_ws *ws;
  int ws_cap;
  double *M, *q, *z, *w, *LU, *MB;
  lapack_int *ipiv;
  int lns, lnr; // the friction LCP of lcp_setup: constraints, rolling ones
  int *zidx;
  int lcp_cap;
  unsigned char *basis, *basis0; // basis0: the warm basis as recorded
  double *Gx, *kx, *As, *bs, *c, *cfull, *udot, *u0, *du, *vc, *ud;
  const double *Asel; // the selected A: w->As, or A itself when every
                      // constraint is selected (no copy)
  unsigned char *driven;
  int *sel, *order, *rank;
  cp_pyramid_contact *pc;
  size_t gx_cap;
  int csz_cap;
  double *state0; // state at the step's start
  double energy;
  cp_contact_space cs_keep; // arrays of the last contact space, reused
  cp_contactgen_ws cg_ws;   // contact generation's buffers and ODE geoms
  cp_system_ws sys_ws;      // the step's system arrays (build borrows them)
  memo_slot *memo;          // the impact memo (opt.impact_memo slots)
  // the per-step check (planner/sim/stepcheck.h): velocities at the start and
  // after the step before drift (nu), total impulses (3 ncon), the state
  // at the (sub)step's start, the overlap the drift removed, scratch
  double *ck_u0, *ck_u1, *ck_p, *ck_x0, *ck_x1, *ck_xm, *ck_buf;
  const double *ck_x0p;     // the (sub)step's start: state0 or ck_x0
  int ck_cap;               // doubles of ck_p and ck_buf
  double ck_drift;
  double ck_e1;             // energy after the step (the check's, kept)
  int ck_two_phase;         // the step had an impulse phase
  double *lim_lo, *lim_hi;  // [nl] joint limits (-inf, inf when none)
  int *free_idx;            // [n_bodies] index among free bodies, or -1
  int *manip_r0;            // [n_manips + 1] first joint row of each
  int *ck_blk, nblk;        // diagonal blocks of H (starts, nblk + 1)
  int *ck_rng;              // [4 ncon] dof ranges of G's columns
  int ck_rng_cap;
  double weight;            // total weight of the moving parts (N)
  int all_limits;           // 1: every limit side is a constraint of the
                            // step and a row of its LCPs (a step taken again
                            // after it crossed a limit outside the window)
};

// ---------------------------------------------------------------------------
// Small helpers

static double energy_of(const cp_world *w);

static cp_world_status fail(cp_world *w, cp_world_status s, const char *fmt,
                            ...) {
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
  o.warm_start = 1;
  o.allow_fallback = 1;
  o.compliance = 1e-6;
  o.check = 1;
  return o;
}

static cp_joint *joint_of(cp_world *w, int r) {
  return &w->sc.manips[w->row_manip[r]].joints[w->row_joint[r]];
}

static const cp_joint *cjoint_of(const cp_world *w, int r) {
  return &w->sc.manips[w->row_manip[r]].joints[w->row_joint[r]];
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
    const cp_joint *j = cjoint_of(w, r);
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
    cp_joint *j = joint_of(w, r);
    j->position = *x++;
    j->velocity = *x++;
  }
  w->contacts_valid = 0;
}

// FNV-1a over the 64-bit words of the doubles (n bytes, a multiple of 8):
// every bit counts, and a word at a time the multiply chain is an eighth of
// the bytewise one (3 % of a resting box's step).
static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *s = p;
  for (size_t i = 0; i + 8 <= n; i += 8) {
    uint64_t v;
    memcpy(&v, s + i, 8);
    h ^= v;
    h *= 1099511628211ull;
  }
  return h;
}

static void hash_state(cp_world *w) {
  for (int i = 0; i < w->sc.n_bodies; ++i) {
    const cp_body *b = &w->sc.bodies[i];
    if (b->fixed) continue;
    w->hash = fnv(w->hash, b->x, sizeof b->x);
    w->hash = fnv(w->hash, b->q, sizeof b->q);
    w->hash = fnv(w->hash, b->v, sizeof b->v);
    w->hash = fnv(w->hash, b->w, sizeof b->w);
  }
  for (int r = 0; r < w->nl; ++r) {
    const cp_joint *j = cjoint_of(w, r);
    w->hash = fnv(w->hash, &j->position, sizeof j->position);
    w->hash = fnv(w->hash, &j->velocity, sizeof j->velocity);
  }
}

cp_world_status cp_world_set_state(cp_world *w, const double *x) {
  int n = cp_world_state_size(w);
  for (int i = 0; i < n; ++i)
    if (!isfinite(x[i]))
      return fail(w, CP_WORLD_NONFINITE, "state[%d] is not finite", i);
  for (int i = 0, k = 0; i < w->sc.n_bodies; ++i) {
    if (w->sc.bodies[i].fixed) continue;
    const double *q = x + 13 * k + 3;
    double nq = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
    if (fabs(nq - 1) > 1e-6)
      return fail(w, CP_WORLD_BAD_INPUT,
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
  w->energy = energy_of(w);
  return CP_WORLD_OK;
}

double cp_world_time(const cp_world *w) { return w->t; }
double cp_world_dt(const cp_world *w) { return w->opt.dt; }
void cp_world_set_time(cp_world *w, double t) { w->t = t; }
const char *cp_world_message(const cp_world *w) { return w->msg; }
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
        !strcmp(name + lm + 1, cjoint_of(w, r)->name))
      return r;
  }
  return -1;
}

cp_world_status cp_world_set_effort(cp_world *w, int joint, double effort) {
  if (joint < 0 || joint >= w->nl)
    return fail(w, CP_WORLD_BAD_INPUT, "joint %d: no such joint (0..%d)", joint,
                w->nl - 1);
  if (!isfinite(effort))
    return fail(w, CP_WORLD_NONFINITE, "joint %d: effort is not finite", joint);
  cp_joint *j = joint_of(w, joint);
  if (j->drive == CP_DRIVE_ACCELERATION) j->acceleration = effort;
  else j->effort = effort;
  return CP_WORLD_OK;
}

cp_world_status cp_world_set_joint_velocity(cp_world *w, int joint,
                                            double velocity) {
  if (joint < 0 || joint >= w->nl)
    return fail(w, CP_WORLD_BAD_INPUT, "joint %d: no such joint (0..%d)", joint,
                w->nl - 1);
  if (!isfinite(velocity))
    return fail(w, CP_WORLD_NONFINITE, "joint %d: velocity is not finite",
                joint);
  joint_of(w, joint)->velocity = velocity;
  w->energy = energy_of(w);
  return CP_WORLD_OK;
}

// Kinetic plus gravitational potential energy (fixed bodies excluded: they
// never move). Links from their world kinematics.
static double energy_of(const cp_world *w) {
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

double cp_world_energy(const cp_world *w) { return energy_of(w); }

// ---------------------------------------------------------------------------
// Creation

static void memo_free(cp_world *w) {
  for (int i = 0; w->memo && i < w->opt.impact_memo; ++i) free(w->memo[i].d);
  free(w->memo);
  w->memo = NULL;
}

cp_world_status cp_world_set_impact_memo(cp_world *w, int slots) {
  if (slots < 0)
    return fail(w, CP_WORLD_BAD_INPUT, "impact_memo: must be >= 0, got %d", slots);
  memo_free(w);
  w->opt.impact_memo = 0;
  if (slots == 0) return CP_WORLD_OK;
  if (!(w->memo = calloc((size_t)slots, sizeof *w->memo)))
    return fail(w, CP_WORLD_NOMEM, "out of memory");
  w->opt.impact_memo = slots;
  return CP_WORLD_OK;
}

void cp_world_destroy(cp_world *w) {
  if (!w) return;
  memo_free(w);
  cp_scene_free(&w->sc);
  free(w->row_manip);
  free(w->row_joint);
  free(w->cons);
  free(w->wc);
  free(w->warm);
  free(w->warm_next);
  cp_lemke_ws_destroy(w->ws);
  free(w->M);
  free(w->q);
  free(w->z);
  free(w->w);
  free(w->basis);
  free(w->basis0);
  free(w->LU);
  free(w->MB);
  free(w->ipiv);
  free(w->zidx);
  free(w->Gx);
  free(w->kx);
  free(w->As);
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
  cp_contact_space_free(&w->cs_keep);
  cp_contactgen_ws_free(&w->cg_ws);
  cp_system_ws_free(&w->sys_ws);
  free(w);
}

static cp_world_status gen_contacts(cp_world *w, double pen_limit);

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
  w->hash = 1469598103934665603ull;
  // The scene must start without deep overlap (its own tolerance).
  cp_world_status st = gen_contacts(w, w->sc.penetration_tolerance);
  if (st != CP_WORLD_OK) {
    cp_error_set(err, "contacts", "%s", w->msg);
    cp_world_destroy(w);
    return st == CP_WORLD_PENETRATION ? CP_WORLD_BAD_INPUT : st;
  }
  w->energy = energy_of(w);
  hash_state(w);
  *out = w;
  return CP_WORLD_OK;
}

// ---------------------------------------------------------------------------
// Contacts and constraints

// Radius of a ball about a shape's centre that holds it
// (cp_shape_bounding_radius: a mesh's farthest vertex, every primitive's
// exact bound); a plane, which only fixed bodies have, counts 0.
static double shape_radius(const cp_shape *s) {
  double r = cp_shape_bounding_radius(s);
  return isfinite(r) ? r : 0.0;
}

// Largest speed of any material point of any moving object (bound): for
// every shape of every free body and link, the speed of the shape's centre
// plus |w| times the shape's bounding radius.
static double max_speed(const cp_world *w) {
  const cp_scene *s = &w->sc;
  double vmax = 0;
  for (int i = 0; i < s->n_bodies; ++i) {
    const cp_body *b = &s->bodies[i];
    if (b->fixed) continue;
    double v = cp_v3_norm(b->v) + cp_v3_norm(b->w) * shape_radius(&b->shape);
    if (v > vmax) vmax = v;
  }
  for (int m = 0; m < s->n_manips; ++m) {
    const cp_chain *c = &s->manips[m];
    cp_link_state st[64], *ls = c->n <= 64 ? st : malloc(sizeof *ls * (size_t)c->n);
    if (!ls) return INFINITY;
    cp_chain_kinematics(c, ls);
    for (int k = 0; k < c->n; ++k) {
      const cp_link *l = &c->joints[k].link;
      const double wn = cp_v3_norm(ls[k].w);
      for (int e = 0, ne = cp_link_shape_count(l); e < ne; ++e) {
        cp_link_shape sh;
        cp_link_shape_get(l, e, &sh);
        double r[3], wr[3], vp[3];
        cp_m3_mulv(r, ls[k].R, sh.pos); // shape centre - link origin
        cp_v3_cross(wr, ls[k].w, r);
        cp_v3_add(vp, ls[k].v, wr);
        double v = cp_v3_norm(vp) + wn * shape_radius(&sh.shape);
        if (v > vmax) vmax = v;
      }
    }
    if (ls != st) free(ls);
  }
  return vmax;
}

static double contact_margin(const cp_world *w) {
  double h = w->opt.dt;
  // Two objects may close at twice the fastest speed; gravity adds h^2 g.
  return w->sc.touch_tolerance + 2 * h * max_speed(w) +
         2 * h * h * w->grav_norm;
}

static int same_pair(const cp_contact *x, const cp_contact *y) {
  return x->a.body == y->a.body && x->a.manip == y->a.manip &&
         x->a.link == y->a.link && x->b.body == y->b.body &&
         x->b.manip == y->b.manip && x->b.link == y->b.link;
}

// A pair's contact points within CP_WORLD_MERGE_TOL of another kept one, or
// of a segment between two others of the same pair
// add nothing (the polygon of the pair's points, over which the contact
// forces spread, is the same without them) but make the LCP more degenerate,
// and box-box clipping produces them or not depending on rounding, so that
// contact sets flicker between steps. They are dropped.
static int between(const double *p, const double *a, const double *b) {
  double ab[3], ap[3], x[3];
  cp_v3_sub(ab, b, a);
  cp_v3_sub(ap, p, a);
  double l2 = cp_v3_dot(ab, ab), t = cp_v3_dot(ap, ab);
  if (!(t > 0 && t < l2)) return 0;
  cp_v3_cross(x, ap, ab); // |x| = distance * |ab|; compared squared
  return cp_v3_dot(x, x) <= CP_WORLD_MERGE_TOL * CP_WORLD_MERGE_TOL * l2;
}

static void drop_collinear(cp_scene *s) {
  int out = 0;
  for (int i = 0; i < s->n_contacts;) {
    int e = i + 1;
    while (e < s->n_contacts && same_pair(&s->contacts[e], &s->contacts[i])) ++e;
    unsigned char keep[64];
    int m = e - i < 64 ? e - i : 64;
    for (int k = 0; k < m; ++k) {
      keep[k] = 1;
      for (int a = 0; keep[k] && a < k; ++a) { // near-duplicate of a kept one
        double d[3];
        cp_v3_sub(d, s->contacts[i + k].p, s->contacts[i + a].p);
        if (keep[a] && cp_v3_dot(d, d) <= CP_WORLD_MERGE_TOL * CP_WORLD_MERGE_TOL)
          keep[k] = 0;
      }
      for (int a = 0; keep[k] && a < m; ++a) {
        if (a == k) continue;
        for (int b = a + 1; keep[k] && b < m; ++b)
          if (b != k && between(s->contacts[i + k].p, s->contacts[i + a].p,
                                s->contacts[i + b].p))
            keep[k] = 0;
      }
    }
    for (int k = 0; k < e - i; ++k)
      if (k >= 64 || keep[k]) {
        if (out != i + k) s->contacts[out] = s->contacts[i + k];
        ++out;
      }
    i = e;
  }
  s->n_contacts = out;
}

// Generates the scene's contacts at the current state (margin above) and the
// step's constraint list (contacts, then joint limits within the margin).
static cp_world_status gen_contacts(cp_world *w, double pen_limit) {
  cp_contactgen_options cg = cp_contactgen_scene_options(&w->sc);
  double margin = contact_margin(w);
  cg.touch_tol = margin;
  cg.penetration_tol = pen_limit;
  cp_error err;
  cp_error_clear(&err);
  if (cp_scene_generate_contacts_ws(&w->sc, &cg, &w->cg_ws, &err)) {
    cp_world_status s = err.code == CP_ERR_OVERLAP ? CP_WORLD_PENETRATION
                        : err.code == CP_ERR_NOMEM ? CP_WORLD_NOMEM
                                                   : CP_WORLD_BAD_INPUT;
    char *ex = strstr(err.msg, " exceeds");
    if (s == CP_WORLD_PENETRATION && ex && pen_limit != w->sc.penetration_tolerance) {
      // During a run the generator's limit is the simulator's rejection
      // threshold, not the scene's key: both named, each with its value.
      *ex = 0;
      return fail(w, s,
                  "t = %.9g: %s exceeds the simulator's rejection threshold "
                  "%g m (max(100 x penetration_tolerance, 1 cm); the scene's "
                  "penetration_tolerance is %g m)",
                  w->t, err.msg, pen_limit, w->sc.penetration_tolerance);
    }
    return fail(w, s, "t = %.9g: %s", w->t, err.msg);
  }
  drop_collinear(&w->sc);
  const cp_scene *s = &w->sc;
  int nlim = 0;
  for (int r = 0; r < w->nl; ++r) nlim += 2 * cjoint_of(w, r)->has_limits;
  if (cp_grow((void **)&w->cons, &w->con_cap, s->n_contacts + nlim + 1,
            sizeof *w->cons))
    return fail(w, CP_WORLD_NOMEM, "out of memory");
  int n = 0;
  for (int j = 0; j < s->n_contacts; ++j) {
    const cp_contact *ct = &s->contacts[j];
    con *c = &w->cons[n++];
    memset(c, 0, sizeof *c);
    c->key.a[0] = ct->a.body, c->key.a[1] = ct->a.manip, c->key.a[2] = ct->a.link;
    c->key.b[0] = ct->b.body, c->key.b[1] = ct->b.manip, c->key.b[2] = ct->b.link;
    c->key.idx = (j > 0 && same_pair(ct, &s->contacts[j - 1]))
                     ? w->cons[n - 2].key.idx + 1
                     : 0;
    c->contact = j;
    c->row = -1;
    c->gap = -ct->depth;
    c->mu = ct->mu;
    c->e = ct->restitution;
  }
  for (int r = 0; r < w->nl; ++r) {
    const cp_joint *jt = cjoint_of(w, r);
    if (!jt->has_limits) continue;
    // The window counts the joint's speed only, not what its effort and the
    // contacts may add within the step (a 15 g finger pushed by 10 N covers
    // 8 mm in 5 ms from rest): a side outside it that the step crosses is
    // caught after the step, which is then taken again with every limit
    // (all_limits; cp_world_step).
    double jm = w->sc.touch_tolerance + 2 * w->opt.dt * fabs(jt->velocity) +
                1e-9;
    for (int side = 0; side < 2; ++side) {
      double gap = side ? jt->upper - jt->position : jt->position - jt->lower;
      if (gap > jm && !w->all_limits) continue;
      con *c = &w->cons[n++];
      memset(c, 0, sizeof *c);
      c->key.a[0] = -2, c->key.a[1] = r, c->key.a[2] = side;
      c->key.b[0] = c->key.b[1] = c->key.b[2] = -2;
      c->contact = -1;
      c->row = r;
      c->sign = side ? -1.0 : 1.0;
      c->gap = gap;
    }
  }
  w->ncon = n;
  w->contacts_valid = 1;
  return CP_WORLD_OK;
}

static double max_depth(const cp_world *w) {
  double d = 0;
  for (int j = 0; j < w->sc.n_contacts; ++j)
    if (w->sc.contacts[j].depth > d) d = w->sc.contacts[j].depth;
  return d;
}

// ---------------------------------------------------------------------------
// Workspaces

static cp_world_status ensure(cp_world *w, int ncon, int lcp_n) {
  size_t nu = (size_t)(w->nu > 0 ? w->nu : 1);
  int n3 = 3 * (ncon > 0 ? ncon : 1);
  if (n3 > w->csz_cap) {
    int cap = n3 * 2;
    double *p[6];
    size_t sz[6] = {nu * (size_t)cap, (size_t)cap, (size_t)cap * (size_t)cap,
                    (size_t)cap, (size_t)cap, (size_t)cap};
    double **dst[6] = {&w->Gx, &w->kx, &w->As, &w->bs, &w->c, &w->cfull};
    for (int i = 0; i < 6; ++i) {
      p[i] = realloc(*dst[i], sizeof(double) * sz[i]);
      if (!p[i]) return fail(w, CP_WORLD_NOMEM, "out of memory");
      *dst[i] = p[i];
    }
    int *si = realloc(w->sel, sizeof(int) * (size_t)cap);
    if (!si) return fail(w, CP_WORLD_NOMEM, "out of memory");
    w->sel = si;
    si = realloc(w->order, sizeof(int) * (size_t)cap);
    if (!si) return fail(w, CP_WORLD_NOMEM, "out of memory");
    w->order = si;
    si = realloc(w->rank, sizeof(int) * (size_t)cap);
    if (!si) return fail(w, CP_WORLD_NOMEM, "out of memory");
    w->rank = si;
    cp_pyramid_contact *pc = realloc(w->pc, sizeof *pc * (size_t)cap);
    if (!pc) return fail(w, CP_WORLD_NOMEM, "out of memory");
    w->pc = pc;
    double *vc = realloc(w->vc, sizeof(double) * (size_t)cap);
    if (!vc) return fail(w, CP_WORLD_NOMEM, "out of memory");
    w->vc = vc;
    w->csz_cap = cap;
  }
  if (lcp_n > w->lcp_cap) {
    int cap = lcp_n * 2;
    double **dst[4] = {&w->M, &w->q, &w->z, &w->w};
    size_t sz[4] = {(size_t)cap * (size_t)cap, (size_t)cap, (size_t)cap,
                    (size_t)cap};
    for (int i = 0; i < 4; ++i) {
      double *p = realloc(*dst[i], sizeof(double) * sz[i]);
      if (!p) return fail(w, CP_WORLD_NOMEM, "out of memory");
      *dst[i] = p;
    }
    double *lu = realloc(w->LU, sizeof(double) * (size_t)cap * (size_t)cap);
    if (!lu) return fail(w, CP_WORLD_NOMEM, "out of memory");
    w->LU = lu;
    lu = realloc(w->MB, sizeof(double) * (size_t)cap * (size_t)cap);
    if (!lu) return fail(w, CP_WORLD_NOMEM, "out of memory");
    w->MB = lu;
    lapack_int *ip = realloc(w->ipiv, sizeof(lapack_int) * (size_t)cap);
    if (!ip) return fail(w, CP_WORLD_NOMEM, "out of memory");
    w->ipiv = ip;
    int *zi = realloc(w->zidx, sizeof(int) * (size_t)cap);
    if (!zi) return fail(w, CP_WORLD_NOMEM, "out of memory");
    w->zidx = zi;
    unsigned char *b = realloc(w->basis, (size_t)cap);
    if (!b) return fail(w, CP_WORLD_NOMEM, "out of memory");
    w->basis = b;
    b = realloc(w->basis0, (size_t)cap);
    if (!b) return fail(w, CP_WORLD_NOMEM, "out of memory");
    w->basis0 = b;
    cp_lemke_ws_destroy(w->ws);
    w->ws = cp_lemke_ws_create(cap);
    if (!w->ws) return fail(w, CP_WORLD_NOMEM, "out of memory");
    w->lcp_cap = cap;
  }
  return CP_WORLD_OK;
}

// ---------------------------------------------------------------------------
// Warm starts

static int key_eq(const ckey *x, const ckey *y) {
  return !memcmp(x, y, sizeof *x);
}

// Previous flags of constraint key for the LCP kind, or NULL. The previous
// list is in constraint order, which is stable between steps, so the search
// starts where the last one ended.
static const wrec *warm_find(const cp_world *w, const ckey *k, int kind,
                             int *hint) {
  for (int t = 0; t < w->nwarm; ++t) {
    int i = (*hint + t) % w->nwarm;
    if (w->warm[i].kind == kind && key_eq(&w->warm[i].key, k)) {
      *hint = i + 1;
      return &w->warm[i];
    }
  }
  return NULL;
}

static int warm_push(cp_world *w, const ckey *k, int kind,
                     const unsigned char *flag) {
  const int cap0 = w->warm_cap;
  if (cp_grow((void **)&w->warm_next, &w->warm_cap, w->nwarm_next + 1,
            sizeof *w->warm_next))
    return -1;
  // warm and warm_next share warm_cap: keep both large enough (only when it
  // grew: a realloc per record was a call per contact per step).
  if (w->warm_cap != cap0 || !w->warm) {
    wrec *p = realloc(w->warm, sizeof *p * (size_t)w->warm_cap);
    if (!p) {
      w->warm_cap = cap0; // warm_next is larger, warm still holds cap0
      return -1;
    }
    w->warm = p;
  }
  wrec *r = &w->warm_next[w->nwarm_next++];
  memset(r, 0, sizeof *r);
  r->key = *k;
  r->kind = (unsigned char)kind;
  memcpy(r->flag, flag, 6);
  return 0;
}

static void warm_commit(cp_world *w) {
  wrec *t = w->warm;
  w->warm = w->warm_next;
  w->warm_next = t;
  w->nwarm = w->nwarm_next;
  w->nwarm_next = 0;
}

size_t cp_world_warm_size(const cp_world *w) {
  if (!w->nwarm) return 0;
  return 2 * sizeof(uint32_t) + (size_t)w->nwarm * sizeof(wrec);
}

void cp_world_warm_get(const cp_world *w, void *buf, size_t size) {
  size_t need = cp_world_warm_size(w);
  if (!need || size < need) return;
  uint32_t h[2] = {WARM_MAGIC, (uint32_t)w->nwarm};
  memcpy(buf, h, sizeof h);
  memcpy((char *)buf + sizeof h, w->warm, (size_t)w->nwarm * sizeof(wrec));
}

void cp_world_warm_set(cp_world *w, const void *buf, size_t size) {
  uint32_t h[2];
  if (!buf || size < sizeof h) return;
  memcpy(h, buf, sizeof h);
  if (h[0] != WARM_MAGIC || size != sizeof h + (size_t)h[1] * sizeof(wrec))
    return;
  int n = (int)h[1];
  if (cp_grow((void **)&w->warm_next, &w->warm_cap, n + 1, sizeof *w->warm_next))
    return;
  wrec *p = realloc(w->warm, sizeof *p * (size_t)w->warm_cap);
  if (!p) return;
  w->warm = p;
  if (n > 0) memcpy(w->warm, (const char *)buf + sizeof h, (size_t)n * sizeof(wrec));
  w->nwarm = n;
}

// ---------------------------------------------------------------------------
// LCP solving

static void lcp_column(const cp_world *w, int col, double *out);

// Dense LU with partial pivoting of the k x k column-major A, in place, for
// the warm basis's small systems (a resting box's k is 4, a 3-box stack's
// 12): OpenBLAS's dgesv costs more in call overhead than the factorisation
// there (measured: 2 900 instructions of a 4 x 4 solve). Larger k go to
// LAPACK. Returns 0, or -1 when a pivot is zero (or not a number).
#define CP_WORLD_SMALL_LU 48
// Larger / smaller of two doubles without libm's fmax/fmin calls (not
// inlined under ISO C; a NaN is caught by the isfinite tests after them).
#define MAXD(a, b) ((b) > (a) ? (b) : (a))
#define MIND(a, b) ((b) < (a) ? (b) : (a))
// Nonbasic rows of a warm basis: w_i >= -CP_WORLD_WARM_W s_i (s_i the row's
// scale), far inside the solution check's rel_tol (1e-6): what an
// ill-conditioned stack basis leaves is 1e-11 of the row's terms.
#define CP_WORLD_WARM_W 1e-10
static int lu_small(int k, double *A, lapack_int *piv) {
  for (int j = 0; j < k; ++j) {
    double *cj = A + (size_t)j * k;
    int p = j;
    double best = fabs(cj[j]);
    for (int i = j + 1; i < k; ++i)
      if (fabs(cj[i]) > best) best = fabs(cj[p = i]);
    if (!(best > 0)) return -1;
    piv[j] = p;
    if (p != j)
      for (int c = 0; c < k; ++c) {
        double *cc = A + (size_t)c * k, t = cc[j];
        cc[j] = cc[p];
        cc[p] = t;
      }
    const double d = cj[j];
    for (int i = j + 1; i < k; ++i) cj[i] /= d;
    for (int c = j + 1; c < k; ++c) {
      double *cc = A + (size_t)c * k;
      const double f = cc[j];
      if (f != 0)
        for (int i = j + 1; i < k; ++i) cc[i] -= cj[i] * f;
    }
  }
  return 0;
}

static void lu_small_solve(int k, const double *A, const lapack_int *piv,
                           double *x) {
  for (int j = 0; j < k; ++j)
    if (piv[j] != j) {
      double t = x[j];
      x[j] = x[piv[j]];
      x[piv[j]] = t;
    }
  for (int j = 0; j < k; ++j) { // L, unit diagonal, by columns
    const double *cj = A + (size_t)j * k, xj = x[j];
    if (xj != 0)
      for (int i = j + 1; i < k; ++i) x[i] -= cj[i] * xj;
  }
  for (int j = k - 1; j >= 0; --j) { // U
    const double *cj = A + (size_t)j * k;
    x[j] /= cj[j];
    const double xj = x[j];
    for (int i = 0; i < j; ++i) x[i] -= cj[i] * xj;
  }
}

static int lu_factor(int k, double *A, lapack_int *piv) {
  if (k <= CP_WORLD_SMALL_LU) return lu_small(k, A, piv);
  return LAPACKE_dgetrf_work(LAPACK_COL_MAJOR, k, k, A, k, piv) ? -1 : 0;
}

static int lu_solve(int k, const double *A, const lapack_int *piv, double *x) {
  if (k <= CP_WORLD_SMALL_LU) {
    lu_small_solve(k, A, piv, x);
    return 0;
  }
  return LAPACKE_dgetrs_work(LAPACK_COL_MAJOR, 'N', k, 1, A, k, piv, x, k) ? -1
                                                                           : 0;
}

// The previous step's basis, repaired by a few principal pivots: z_B =
// -M_BB^-1 q_B, z_N = 0 (a small LU of the basic columns, one step of
// iterative refinement: with the compliance a stack's basis is regular but
// ill-conditioned, its redundant corner rows differing by kappa), accepted
// when z_B >= -tol (tol = 1e-11 max(1, |q|_inf); negative parts clamped to
// 0) and, row by row, w = M z + q passes the solution check of docs/math.md
// section 5 with its own scale s_i = sum_j |M_ij| |z_j| + |q_i|: nonbasic
// w_i >= -1e-10 s_i, basic |w_i| <= rel_tol s_i (then reported as 0;
// complementarity is exact by construction), each widened by the check's
// rounding allowance only where the row fails without it (below).
// When the basis does not fit (a contact starts or stops sliding, a new
// contact closes, or in an ill-conditioned resting basis a degenerate
// variable's rounding noise crosses the tolerance), the most negative basic
// z_j leaves the basis, or else the nonbasic w_i most negative relative to
// its scale enters it, and the system is solved again: Murty's principal
// pivoting, at most CP_WORLD_WARM_PIVOTS times (it is not guaranteed to
// terminate on these matrices; on the planner's push most changed bases
// are repaired in one to three pivots instead of a cold solve of twenty),
// and then solve_friction runs Lemke from the recorded basis, then cold.
// At rest the basis fits as it
// is, and that matters beyond saving pivots: with redundant contacts (four
// corners on a face) it holds variables at exactly zero, which rounding in q
// makes -1e-18, and Lemke's warm start would then pivot (and on the paper's
// non-copositive pyramid sometimes end on a secondary ray) for nothing.
// Only the basic columns of M are needed, and M is not formed here: they
// come from lcp_column (the whole n x n matrix and the check's three passes
// over it were a third of a resting stack's step). Call after lcp_setup;
// the principal pivots taken go to *pivots (also when it gives up).
#define CP_WORLD_WARM_PIVOTS 16
// sum_b |M_iB_b| over the k basic columns MB (n x k).
static double row_l1(const double *MB, int n, int k, int i) {
  double s = 0;
  for (int b = 0; b < k; ++b) s += fabs(MB[i + (size_t)b * n]);
  return s;
}

static int warm_accept(cp_world *w, int n, cp_lcp_info *info, int *pivots) {
  int k = 0;
  for (int i = 0; i < n; ++i)
    if (w->basis[i]) w->zidx[k++] = i;
  double *MB = w->MB; // M[:, B], n x k (columns in zidx order)
  for (int b = 0; b < k; ++b) lcp_column(w, w->zidx[b], MB + (size_t)b * n);
  double *zb = w->z, *r = w->w, *sc = w->LU; // z_B in z[0..k); scratch
  double qmax = 1;
  for (int i = 0; i < n; ++i) qmax = MAXD(qmax, fabs(w->q[i]));
  const double tol = 1e-11 * qmax, rel = w->opt.solve.lemke.check.rel_tol;
  *pivots = 0; // also when the repair gives up: they were done
  for (;; ++*pivots) {
    if (k > 0) {
      for (int b = 0; b < k; ++b)
        for (int a = 0; a < k; ++a)
          w->LU[a + (size_t)b * k] = MB[w->zidx[a] + (size_t)b * n];
      for (int a = 0; a < k; ++a) zb[a] = -w->q[w->zidx[a]];
      if (lu_factor(k, w->LU, w->ipiv) || lu_solve(k, w->LU, w->ipiv, zb)) return 0;
      for (int a = 0; a < k; ++a) r[a] = -w->q[w->zidx[a]];
      for (int b = 0; b < k; ++b) {
        const double zv = zb[b], *col = MB + (size_t)b * n;
        for (int a = 0; a < k; ++a) r[a] -= col[w->zidx[a]] * zv;
      }
      if (lu_solve(k, w->LU, w->ipiv, r)) return 0;
    }
    int worst = -1;
    for (int a = 0; a < k; ++a) {
      zb[a] += r[a];
      if (!isfinite(zb[a])) return 0;
      if (!(zb[a] >= -tol) && (worst < 0 || zb[a] < zb[worst])) worst = a;
    }
    if (worst >= 0) { // z_j leaves
      if (*pivots == CP_WORLD_WARM_PIVOTS) return 0;
      w->basis[w->zidx[worst]] = 0;
      for (int b = worst; b + 1 < k; ++b) {
        w->zidx[b] = w->zidx[b + 1];
        zb[b] = zb[b + 1];
        memcpy(MB + (size_t)b * n, MB + (size_t)(b + 1) * n, sizeof(double) * (size_t)n);
      }
      --k;
      continue;
    }
    double zmax = 0;
    for (int a = 0; a < k; ++a) {
      zb[a] = zb[a] > 0 ? zb[a] : 0;
      zmax = MAXD(zmax, zb[a]);
    }
    // w = M_B z_B + q and the row scales, in one pass over the k columns
    // (r = w->w takes w, sc the LU block's storage).
    for (int i = 0; i < n; ++i) {
      r[i] = w->q[i];
      sc[i] = fabs(w->q[i]);
    }
    for (int b = 0; b < k; ++b) {
      const double zv = zb[b], az = fabs(zv), *col = MB + (size_t)b * n;
      if (zv == 0) continue;
      for (int i = 0; i < n; ++i) {
        r[i] += col[i] * zv;
        sc[i] += fabs(col[i]) * az;
      }
    }
    // The check's rounding allowance, 8 n eps |z|_inf |M_iB|_1, added to a
    // row's tolerance when the row fails without it (so formed only then):
    // a row that reads only variables that are 0 up to the solve's noise (a
    // contact without load whose lambda is basic: mu c_n - sum beta, all
    // 1e-30) has a scale of that noise and would fail (or, nonbasic, pivot)
    // on rounding alone. Over the basic columns only, it is never larger
    // than the full check's.
    const double ulp = 8.0 * (double)n * DBL_EPSILON * zmax;
    int enter = -1;
    double most = 0;
    for (int i = 0; i < n; ++i) {
      const double wi = r[i], ti = rel * sc[i];
      if (!isfinite(wi) || !isfinite(ti)) return 0;
      if (w->basis[i]) {
        if (!(fabs(wi) <= ti) && !(fabs(wi) <= ti + ulp * row_l1(MB, n, k, i)))
          return 0; // the solve itself is off
      } else if (!(wi >= -CP_WORLD_WARM_W * sc[i]) &&
                 !(wi >= -(CP_WORLD_WARM_W * sc[i] + ulp * row_l1(MB, n, k, i))) &&
                 wi / sc[i] < most) {
        most = wi / sc[i];
        enter = i;
      }
    }
    if (enter < 0) break;
    // z_i enters, in order (zidx stays increasing).
    if (*pivots == CP_WORLD_WARM_PIVOTS) return 0;
    int at = k;
    while (at > 0 && w->zidx[at - 1] > enter) {
      w->zidx[at] = w->zidx[at - 1];
      memcpy(MB + (size_t)at * n, MB + (size_t)(at - 1) * n, sizeof(double) * (size_t)n);
      --at;
    }
    w->zidx[at] = enter;
    w->basis[enter] = 1;
    lcp_column(w, enter, MB + (size_t)at * n);
    ++k;
  }
  double res = 0, minw = INFINITY;
  for (int i = 0; i < n; ++i) {
    if (w->basis[i]) {
      res = MAXD(res, fabs(r[i]));
      r[i] = 0;
    } else if (r[i] < 0) {
      r[i] = 0;
    }
    minw = MIND(minw, r[i]);
  }
  // Scatter z_B (z[0..k)) from the back: zidx is increasing.
  for (int a = k - 1; a >= 0; --a) {
    const double v = zb[a];
    const int i = w->zidx[a];
    for (int j = a > 0 ? w->zidx[a - 1] + 1 : 0; j < i; ++j) w->z[j] = 0;
    w->z[i] = v;
  }
  for (int j = k > 0 ? w->zidx[k - 1] + 1 : 0; j < n; ++j) w->z[j] = 0;
  cp_lcp_info_clear(info);
  info->status = CP_LCP_SOLVED;
  info->solver = CP_SOLVER_LEMKE;
  info->starts = 1;
  info->iterations = *pivots;
  info->residual = res;
  info->min_z = 0; // z_B was clamped to >= 0, z_N = 0
  info->min_w = minw;
  return 1;
}

// The solver options for a call made now: certify's time limit cut to
// the time left before the deadline (cp_world_set_deadline), at least
// 1 ms (certify reads <= 0 as no limit).
static double mono_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static cp_solve_options solve_options_now(const cp_world *w) {
  cp_solve_options so = w->opt.solve;
  if (w->deadline < INFINITY) {
    double left = w->deadline - mono_now();
    if (!(left > 1e-3)) left = 1e-3;
    if (!(so.certify.time_limit_s > 0) || so.certify.time_limit_s > left)
      so.certify.time_limit_s = left;
  }
  return so;
}

// Solves the LCP in w->M, w->q (size n) with the world's solver, cold.
// Returns 0 when solved; adds pivots to *piv.
static int solve_lcp(cp_world *w, int n, int *piv, cp_lcp_info *info) {
  cp_lcp_info_clear(info);
  if (n == 0) {
    info->status = CP_LCP_SOLVED;
    return 0;
  }
  cp_lcp_status st;
  if (w->opt.solve.solver == CP_SOLVER_LEMKE) {
    st = cp_lemke_solve(w->ws, n, w->M, w->q, &w->opt.solve.lemke, NULL, w->z,
                        w->w, info);
    if (st == CP_LCP_SOLVED) cp_lemke_basis(w->ws, w->basis);
  } else {
    cp_solve_options so = solve_options_now(w);
    st = cp_lcp_solve(w->ws, n, w->M, w->q, &so, w->z, w->w, info, NULL);
    for (int i = 0; i < n; ++i) w->basis[i] = w->z[i] > 0;
  }
  *piv += info->iterations;
  return st == CP_LCP_SOLVED ? 0 : -1;
}

static void lcp_fill(cp_world *w, int m);

// The friction LCP of lcp_setup (size m), with warm starts on: from the
// warm basis in w->basis (lcp_warm) when warm_accept takes or repairs it (M
// is then never formed), else M is formed for Lemke from that basis, then
// cold. Returns 0 when solved; pivots are added to *piv.
static int solve_friction(cp_world *w, int m, int *piv,
                          int *warm_used, cp_lcp_info *info) {
  cp_lcp_info_clear(info);
  if (m == 0) {
    info->status = CP_LCP_SOLVED;
    return 0;
  }
  if (w->opt.warm_start) {
    memcpy(w->basis0, w->basis, (size_t)m);
    int repair = 0;
    if (warm_accept(w, m, info, &repair)) {
      if (warm_used) *warm_used = 1;
      *piv += repair;
      return 0;
    }
    *piv += repair;
    // Lemke from the recorded basis: once the principal pivots have not
    // repaired it, a warm Lemke start still pivots less than a cold one on
    // the planner's tasks (same expansions: grasp 7.0 -> 5.4 pivots per
    // solve, push 3.8 -> 3.3); a failed warm run is retried cold.
    if (w->opt.solve.solver == CP_SOLVER_LEMKE) {
      lcp_fill(w, m);
      cp_lcp_status st = cp_lemke_solve(w->ws, m, w->M, w->q, &w->opt.solve.lemke,
                                        w->basis0, w->z, w->w, info);
      *piv += info->iterations;
      if (st == CP_LCP_SOLVED) {
        cp_lemke_basis(w->ws, w->basis);
        return 0;
      }
      return solve_lcp(w, m, piv, info);
    }
  }
  lcp_fill(w, m);
  return solve_lcp(w, m, piv, info);
}

// ---------------------------------------------------------------------------
// The system of a step

typedef struct stepsys {
  cp_system sys;
  cp_contact_space cs;
  int built;
} stepsys;

// The contact space's arrays go back to the world (w->cs_keep) for the
// next build instead of the allocator.
static void stepsys_free(cp_world *w, stepsys *s) {
  if (!s->built) return;
  cp_contact_space_free(&w->cs_keep);
  w->cs_keep = s->cs;
  memset(&s->cs, 0, sizeof s->cs);
  cp_system_free(&s->sys);
  s->built = 0;
}

// H, f, G, k of the scene's contacts extended by the limit columns; A, b;
// the constraint velocities vc = G^T u.
static cp_world_status build(cp_world *w, stepsys *s) {
  cp_error err;
  cp_error_clear(&err);
  memset(s, 0, sizeof *s);
  if (cp_system_build_ws(&w->sc, &w->sys_ws, &s->sys, &err))
    return fail(w, CP_WORLD_NOMEM, "%s", err.msg);
  cp_world_status st = ensure(w, w->ncon, 0);
  if (st != CP_WORLD_OK) {
    cp_system_free(&s->sys);
    return st;
  }
  const int nu = w->nu, nc = s->sys.n_c, nca = w->ncon, no = 6 * w->nobj;
  const size_t nuz = (size_t)nu;
  if (nc)
    memcpy(w->Gx, s->sys.G, sizeof(double) * nuz * 3 * (size_t)nc);
  if (nc) {
    memcpy(w->kx, s->sys.k, sizeof(double) * 3 * (size_t)nc);
    memcpy(w->vc, s->sys.v, sizeof(double) * 3 * (size_t)nc);
  }
  // A sphere's contact point is not a material point: it stays under the
  // centre. The normal velocity-product term of models/system.h (the
  // material point's centripetal acceleration w x (w x r), r = p - x) would
  // report the rolling sphere's surface as leaving the plane at R w^2 and
  // the stepper would push the centre into it; for a sphere the gap's
  // second derivative has no such term, so it is taken out.
  for (int j = 0; j < nc; ++j) {
    const cp_contact *ct = &w->sc.contacts[j];
    for (int side = 0; side < 2; ++side) {
      cp_ref r = side ? ct->b : ct->a;
      if (r.body < 0) continue;
      const cp_body *b = &w->sc.bodies[r.body];
      if (b->fixed || b->shape.type != CP_SHAPE_SPHERE) continue;
      double rr[3], wr[3], wwr[3];
      cp_v3_sub(rr, ct->p, b->x);
      cp_v3_cross(wr, b->w, rr);
      cp_v3_cross(wwr, b->w, wr);
      w->kx[3 * j] -= (side ? -1.0 : 1.0) * cp_v3_dot(ct->n, wwr);
    }
  }
  for (int j = nc; j < nca; ++j) {
    const con *c = &w->cons[j];
    double *g = w->Gx + nuz * 3 * (size_t)j;
    memset(g, 0, sizeof(double) * nuz * 3);
    g[no + c->row] = c->sign;
    w->kx[3 * j] = w->kx[3 * j + 1] = w->kx[3 * j + 2] = 0;
    w->vc[3 * j] = c->sign * cjoint_of(w, c->row)->velocity;
    w->vc[3 * j + 1] = w->vc[3 * j + 2] = 0;
  }
  for (int r = 0; r < w->nl; ++r) {
    w->driven[no + r] = s->sys.drive[r] == CP_DRIVE_ACCELERATION;
    w->ud[no + r] = s->sys.qdd[r];
  }
  s->cs = w->cs_keep;
  memset(&w->cs_keep, 0, sizeof w->cs_keep);
  int rc = cp_contact_space_rebuild(nu, nca, s->sys.H, w->Gx, s->sys.f, w->kx,
                                    w->driven, w->ud, &s->cs);
  if (rc) {
    cp_system_free(&s->sys);
    return rc == -1 ? fail(w, CP_WORLD_SOLVER_FAILED,
                           "t = %.9g: the mass matrix is not positive definite",
                           w->t)
                    : fail(w, CP_WORLD_NOMEM, "out of memory");
  }
  s->built = 1;
  return CP_WORLD_OK;
}

// udot = H^-1 (f + G c) (driven dofs: their given acceleration).
static cp_world_status accel(cp_world *w, stepsys *s, const double *c,
                             double *udot) {
  if (cp_contact_space_accel(&s->cs, c, udot, NULL))
    return fail(w, CP_WORLD_NOMEM, "out of memory");
  return CP_WORLD_OK;
}

// Generalised velocity u of the scene's state (the layout of models/system.h).
static void get_u(const cp_world *w, double *u) {
  int k = 0;
  for (int i = 0; i < w->sc.n_bodies; ++i) {
    const cp_body *b = &w->sc.bodies[i];
    if (b->fixed) continue;
    memcpy(u + 6 * k, b->v, 3 * sizeof *u);
    memcpy(u + 6 * k + 3, b->w, 3 * sizeof *u);
    ++k;
  }
  for (int r = 0; r < w->nl; ++r) u[6 * w->nobj + r] = cjoint_of(w, r)->velocity;
}

static void set_u(cp_world *w, const double *u) {
  int k = 0;
  for (int i = 0; i < w->sc.n_bodies; ++i) {
    cp_body *b = &w->sc.bodies[i];
    if (b->fixed) continue;
    memcpy(b->v, u + 6 * k, 3 * sizeof *u);
    memcpy(b->w, u + 6 * k + 3, 3 * sizeof *u);
    ++k;
  }
  for (int r = 0; r < w->nl; ++r) joint_of(w, r)->velocity = u[6 * w->nobj + r];
}

// Positions moved by the generalised displacement h u (quaternions by the
// exponential map, renormalised).
static void move(cp_world *w, const double *u, double h) {
  int k = 0;
  for (int i = 0; i < w->sc.n_bodies; ++i) {
    cp_body *b = &w->sc.bodies[i];
    if (b->fixed) continue;
    cp_v3_axpy(b->x, b->x, h, u + 6 * k);
    cp_quat_integrate(b->q, b->q, u + 6 * k + 3, h);
    double n = sqrt(b->q[0] * b->q[0] + b->q[1] * b->q[1] +
                    b->q[2] * b->q[2] + b->q[3] * b->q[3]);
    for (int t = 0; t < 4; ++t) b->q[t] /= n;
    ++k;
  }
  for (int r = 0; r < w->nl; ++r)
    joint_of(w, r)->position += h * u[6 * w->nobj + r];
  for (int m = 0; m < w->sc.n_manips; ++m) cp_chain_apply_mimic(&w->sc.manips[m]);
}

// The corner directions of the pyramid |c_t| <= mu c_n, |c_o| <= mu c_n:
// its four edges are mu c_n (+-1, +-1) in (t, o).
static const double corner[4][2] = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1}};

static int rolling(const cp_pyramid_contact *p) { return !p->sliding; }

// The rows/columns of the constraints sel[0..ns) of A (3 ncon square) and b
// (3 ncon): w->Asel (3 ns square) and w->bs. When every constraint is
// selected in order (the velocity stepper; a resting acceleration step),
// Asel is A itself: copying it was a twentieth of a 10-box stack's step.
static void extract(cp_world *w, const double *A, const double *b, int ns,
                    const int *sel) {
  const int n3 = 3 * w->ncon, m3 = 3 * ns;
  int identity = ns == w->ncon;
  for (int k = 0; identity && k < ns; ++k) identity = sel[k] == k;
  w->Asel = identity ? A : w->As;
  if (identity) {
    memcpy(w->bs, b, sizeof(double) * (size_t)m3);
    return;
  }
  for (int a = 0; a < m3; ++a) w->bs[a] = b[3 * sel[a / 3] + a % 3];
  for (int bcol = 0; bcol < m3; ++bcol) {
    const double *col = A + (size_t)(3 * sel[bcol / 3] + bcol % 3) * (size_t)n3;
    for (int a = 0; a < m3; ++a)
      w->As[a + (size_t)bcol * m3] = col[3 * sel[a / 3] + a % 3];
  }
}

// The friction LCP of every stepper, over the ns constraints whose
// contact-space quantities are in w->Asel, w->bs (y = Asel c + bs: accelerations
// for the acceleration problem, velocities after the step for the impulse
// and velocity problems) and whose friction data are in w->pc:
//   sliding k (also frictionless: d = 0):  c_t = -d_t c_n, c_o = -d_o c_n
//       (the paper's substitution), one unknown c_n _|_ y_n;
//   rolling k: the pyramid by its four corner directions D (Stewart-Trinkle,
//       Anitescu-Potra): c_tan = D beta, unknowns c_n, beta (4), lambda,
//       0 <= c_n _|_ y_n >= 0,
//       0 <= beta _|_ D^T y_tan + lambda >= 0,
//       0 <= lambda _|_ mu c_n - sum beta >= 0,
//   i.e. each tangential component at full magnitude against its own y
//   when y_tan != 0 (maximal dissipation over the four-sided pyramid: the
//   paper's rolling law). For A positive semidefinite and no sliding
//   contact this LCP is copositive-plus, so Lemke solves it whenever it is
//   solvable, and at the velocity level (gap/h) it always is -- unlike the
//   paper's slack form of the same pyramid, on which Lemke ends on secondary
//   rays for stacks of boxes. Unknowns: z = [c_n (ns); beta (4 nr);
//   lambda (nr)] in constraint order. Fills w->M, w->q; returns the size or
//   -1 (memory).
// lcp_setup fills q and the indexing (w->lns, w->lnr, w->rank: index among
// rolling constraints or -1, w->order: constraint of rolling index f) and
// returns the size (-1: memory); lcp_column writes one column of M in full
// (the warm start needs only its basis's columns); lcp_fill forms M.
static int lcp_setup(cp_world *w, int ns) {
  int nr = 0;
  for (int k = 0; k < ns; ++k) nr += rolling(&w->pc[k]);
  const int m = ns + 5 * nr;
  w->lns = ns;
  w->lnr = nr;
  if (m == 0) return 0;
  if (ensure(w, w->ncon, m) != CP_WORLD_OK) return -1;
  int *ridx = w->rank, *rk = w->order;
  for (int k = 0, f = 0; k < ns; ++k) {
    ridx[k] = rolling(&w->pc[k]) ? f : -1;
    if (ridx[k] >= 0) rk[f++] = k;
  }
  double *q = w->q;
  for (int k = 0; k < ns; ++k) {
    q[k] = w->bs[3 * k];
    int f = ridx[k];
    if (f < 0) continue;
    for (int e = 0; e < 4; ++e)
      q[ns + 4 * f + e] =
          corner[e][0] * w->bs[3 * k + 1] + corner[e][1] * w->bs[3 * k + 2];
    q[ns + 4 * nr + f] = 0;
  }
  return m;
}

// Compliance (docs/simulate.md, "Compliance"): y_n gains kappa A_nn c_n.
// The rigid problem leaves the split of a face's pressure over its corner
// points open (the rows of coplanar points are dependent), and a pivoting
// solver returns a vertex of that set: the whole load on one corner, about
// which a grasped box is then free to twist or hinge -- a motion the rigid
// model allows and no real face does. The small diagonal makes the split
// unique (spread as on a stiff elastic foundation); what it costs is an
// approach of kappa A_nn c_n per loaded contact, kappa relative to the
// contact's own acceleration scale, which drift correction removes.
// The same holds for the friction of a rolling contact whose tangential
// motion other constraints already fix (a pusher on a prismatic joint
// pressing a box onto the table: how much of the box's weight the pusher's
// friction carries is open, and with it the table's sliding friction): the
// tangential rows get kappa A_tt c_tan too, through the pyramid's corner
// form (y_beta += kappa D^T diag(A_tt, A_oo) D beta), so that such friction
// is the least the motion needs.
static void lcp_column(const cp_world *w, int col, double *out) {
  const int ns = w->lns, nr = w->lnr, m3 = 3 * ns, nb = ns + 4 * nr;
  const int *ridx = w->rank, *rk = w->order;
  const double kap = w->opt.compliance;
  if (col >= nb) { // lambda_f: + lambda in rolling f's four corner rows
    const int f = col - nb;
    memset(out, 0, sizeof(double) * (size_t)(nb + nr));
    for (int e = 0; e < 4; ++e) out[ns + 4 * f + e] = 1.0;
    return;
  }
  // The column of Asel C (C: the unknown's direction in contact space)
  // computed row by row into the rows of M that read it.
  int k0, i = 0;
  double ct = 0, co = 0, s0 = 0, s1 = 0;
  const double *an = NULL, *at, *ao;
  if (col < ns) {
    k0 = col;
    const cp_pyramid_contact *p = &w->pc[k0];
    ct = p->sliding ? -p->d[0] : 0;
    co = p->sliding ? -p->d[1] : 0;
    an = w->Asel + (size_t)(3 * k0) * m3;
    at = an + m3;
  } else {
    k0 = rk[(col - ns) / 4];
    i = (col - ns) % 4;
    s0 = corner[i][0];
    s1 = corner[i][1];
    at = w->Asel + (size_t)(3 * k0 + 1) * m3;
  }
  ao = at + m3;
  for (int k = 0; k < ns; ++k) {
    // The +-1 products written as signs (exact: the same bits).
    double cn, a, b;
    if (an) {
      cn = an[3 * k] + ct * at[3 * k] + co * ao[3 * k];
      a = an[3 * k + 1] + ct * at[3 * k + 1] + co * ao[3 * k + 1];
      b = an[3 * k + 2] + ct * at[3 * k + 2] + co * ao[3 * k + 2];
    } else {
      cn = (s0 > 0 ? at[3 * k] : -at[3 * k]) + (s1 > 0 ? ao[3 * k] : -ao[3 * k]);
      a = (s0 > 0 ? at[3 * k + 1] : -at[3 * k + 1]) +
          (s1 > 0 ? ao[3 * k + 1] : -ao[3 * k + 1]);
      b = (s0 > 0 ? at[3 * k + 2] : -at[3 * k + 2]) +
          (s1 > 0 ? ao[3 * k + 2] : -ao[3 * k + 2]);
    }
    out[k] = cn;
    if (ridx[k] < 0) continue;
    double *rows = out + ns + 4 * ridx[k];
    rows[0] = a + b;
    rows[1] = a + -b;
    rows[2] = -a + b;
    rows[3] = -a + -b;
  }
  // The lambda rows: mu c_n - sum beta.
  for (int f = 0; f < nr; ++f) out[nb + f] = 0;
  if (col < ns) {
    if (ridx[col] >= 0) out[nb + ridx[col]] = w->pc[col].mu;
    // Joint limits get no compliance: a limit is one constraint on one
    // coordinate (nothing to spread), and it holds to rounding.
    if (kap > 0 && w->cons[w->sel[col]].contact >= 0) out[col] += kap * an[3 * col];
  } else {
    const int f = ridx[k0];
    out[nb + f] = -1.0;
    if (kap > 0) {
      const double *a = w->Asel + (size_t)(3 * k0) * m3 + 3 * k0;
      const double att = kap * a[m3 + 1], aoo = kap * a[2 * m3 + 2];
      for (int e = 0; e < 4; ++e)
        out[ns + 4 * f + e] += corner[e][0] * s0 * att + corner[e][1] * s1 * aoo;
    }
  }
}

static void lcp_fill(cp_world *w, int m) {
  for (int col = 0; col < m; ++col) lcp_column(w, col, w->M + (size_t)col * m);
}

// Contact-space forces (or impulses) c [3 ns] from the LCP's z.
static void lcp_forces(cp_world *w, int ns, double *c) {
  for (int k = 0, f = 0; k < ns; ++k) {
    const cp_pyramid_contact *p = &w->pc[k];
    double cn = w->z[k];
    c[3 * k] = cn;
    if (p->sliding) {
      c[3 * k + 1] = -p->d[0] * cn;
      c[3 * k + 2] = -p->d[1] * cn;
      continue;
    }
    c[3 * k + 1] = c[3 * k + 2] = 0;
    for (int e = 0; e < 4; ++e) {
      double b = w->z[ns + 4 * f + e];
      c[3 * k + 1] += corner[e][0] * b;
      c[3 * k + 2] += corner[e][1] * b;
    }
    ++f;
  }
}

// Warm basis of lcp_setup's problem from the previous step's flags (slots:
// 0 c_n, 1-4 beta, 5 lambda) of the same LCP kind.
static void lcp_warm(cp_world *w, int ns, const int *sel, int kind, int m) {
  int nr = (m - ns) / 5, hint = 0;
  if (m == 0) return;
  memset(w->basis, 0, (size_t)m);
  for (int k = 0, f = 0; k < ns; ++k) {
    const wrec *rec = warm_find(w, &w->cons[sel[k]].key, kind, &hint);
    const unsigned char *fl = rec ? rec->flag : NULL;
    int r = rolling(&w->pc[k]);
    if (fl) {
      w->basis[k] = fl[0];
      for (int e = 0; r && e < 4; ++e) w->basis[ns + 4 * f + e] = fl[1 + e];
      if (r) w->basis[ns + 4 * nr + f] = fl[5];
    }
    f += r;
  }
}

// Returns -1 when out of memory (the step then fails: dropping the record
// would change the next step's warm start, hence its answer).
// Call after the solve of lcp_setup's problem over these ns constraints
// (its rolling count w->lnr).
static int lcp_record(cp_world *w, int ns, const int *sel, int kind) {
  const int nr = w->lnr;
  // Degenerate basic variables (z_i = 0 at rounding level, w_i = 0 too)
  // are recorded as nonbasic: the same answer, with w_i basic instead. The
  // next step's basis is then smaller (a resting box's Lemke basis holds
  // seven degenerate friction variables beside its four normals: a 11 x 11
  // system instead of 4 x 4) and better conditioned.
  // A principal submatrix M_BB can turn singular when a variable leaves B,
  // so only those whose leaving keeps each contact's block regular go:
  // degenerate betas when lambda is degenerate or nonbasic (a basic
  // lambda's column lives in its beta rows only); then a degenerate lambda
  // unless two opposite corners stay basic (their columns differ only in
  // the lambda row); a degenerate c_n when nothing of its contact's
  // friction stays basic.
  const int m = ns + 5 * nr;
  double zmax = 0;
  for (int i = 0; i < m; ++i) zmax = MAXD(zmax, fabs(w->z[i]));
  const double zt = 1e-12 * zmax;
#define DEGEN(i) (w->basis[i] && !(w->z[i] > zt))
  for (int k = 0, f = 0; k < ns; ++k) {
    int fric = 0;
    if (rolling(&w->pc[k])) {
      const int lam = ns + 4 * nr + f, b0 = ns + 4 * f;
      if (!w->basis[lam] || DEGEN(lam)) {
        for (int e = 0; e < 4; ++e)
          if (DEGEN(b0 + e)) w->basis[b0 + e] = 0;
        // corners 0 and 3, 1 and 2 are opposite (corner[] above)
        const int opp = (w->basis[b0] && w->basis[b0 + 3]) ||
                        (w->basis[b0 + 1] && w->basis[b0 + 2]);
        if (!opp && DEGEN(lam)) w->basis[lam] = 0;
      } else {
        // lambda > 0 (at the friction limit): its degenerate corners go
        // while a corner with force stays basic to carry lambda's column.
        int pos = 0;
        for (int e = 0; e < 4; ++e) pos |= w->basis[b0 + e] && !DEGEN(b0 + e);
        for (int e = 0; pos && e < 4; ++e)
          if (DEGEN(b0 + e)) w->basis[b0 + e] = 0;
      }
      for (int e = 0; e < 5; ++e) fric |= w->basis[e < 4 ? b0 + e : lam];
      ++f;
    }
    if (!fric && DEGEN(k)) w->basis[k] = 0;
  }
#undef DEGEN
  for (int k = 0, f = 0; k < ns; ++k) {
    unsigned char fl[6] = {w->basis[k], 0, 0, 0, 0, 0};
    if (rolling(&w->pc[k])) {
      for (int e = 0; e < 4; ++e) fl[1 + e] = w->basis[ns + 4 * f + e];
      fl[5] = w->basis[ns + 4 * nr + f];
      ++f;
    }
    if (warm_push(w, &w->cons[sel[k]].key, kind, fl)) return -1;
  }
  return 0;
}

// Friction data with every frictional constraint rolling (impulse and
// velocity problems).
static void all_rolling(cp_world *w, int ns, const int *sel) {
  for (int k = 0; k < ns; ++k) {
    const con *c = &w->cons[sel[k]];
    cp_pyramid_contact *p = &w->pc[k];
    memset(p, 0, sizeof *p);
    p->mu = c->contact >= 0 ? c->mu : 0;
    p->sliding = p->mu == 0; // frictionless: c_n only
  }
}

// The impact memo (cp_world_options.impact_memo). An impact LCP is fixed
// by the selected contact-space block Asel, the right-hand side bs and the
// contacts' friction (all rolling: mu alone), the compliance and solver
// options being the world's: that key, bit for bit, and the solution z
// are kept in slot hash % slots (one problem a slot, the newest). A hit
// is checked on the whole key, not the hash, and returns what the cold
// solve returned for it (Lemke's starts are deterministic), so the memo
// changes no answer. Keys of more than CP_WORLD_MEMO_KEY doubles (over 21
// contacts) are not kept: a slot stays under 40 kB.
static size_t memo_key_len(int ns) {
  return (size_t)9 * (size_t)ns * (size_t)ns + 4 * (size_t)ns;
}

static uint64_t memo_hash(const cp_world *w, int ns) {
  const size_t m3 = 3 * (size_t)ns;
  uint64_t h = fnv(1469598103934665603ull ^ (uint64_t)ns, w->Asel,
                   sizeof(double) * m3 * m3);
  h = fnv(h, w->bs, sizeof(double) * m3);
  for (int k = 0; k < ns; ++k) h = fnv(h, &w->pc[k].mu, sizeof(double));
  return h;
}

// The slot of the problem of size m over ns constraints (its hash in *h),
// or NULL when the memo is off or the key too long; *hit tells whether it
// holds that very problem (its z then copied to w->z).
static memo_slot *memo_find(cp_world *w, int ns, int m, uint64_t *h, int *hit) {
  *hit = 0;
  if (!w->memo || ns == 0 || memo_key_len(ns) > CP_WORLD_MEMO_KEY) return NULL;
  *h = memo_hash(w, ns);
  memo_slot *e = &w->memo[*h % (uint64_t)w->opt.impact_memo];
  const size_t m3 = 3 * (size_t)ns, a = m3 * m3;
  if (e->ns == ns && e->m == m && e->h == *h &&
      !memcmp(e->d, w->Asel, sizeof(double) * a) &&
      !memcmp(e->d + a, w->bs, sizeof(double) * m3)) {
    int same = 1;
    for (int k = 0; same && k < ns; ++k)
      same = !memcmp(&e->d[a + m3 + (size_t)k], &w->pc[k].mu, sizeof(double));
    if (same) {
      memcpy(w->z, e->d + memo_key_len(ns), sizeof(double) * (size_t)m);
      *hit = 1;
    }
  }
  return e;
}

// Keeps the solved problem (w->z, hash h) in its slot (from memo_find, same
// step); out of memory, the slot is left empty (the memo only saves work).
static void memo_keep(cp_world *w, memo_slot *e, uint64_t h, int ns, int m) {
  const size_t m3 = 3 * (size_t)ns, a = m3 * m3, kl = memo_key_len(ns);
  const size_t need = kl + (size_t)m;
  e->ns = 0;
  if (e->cap < need) {
    free(e->d);
    e->d = malloc(sizeof(double) * need);
    e->cap = e->d ? need : 0;
    if (!e->d) return;
  }
  memcpy(e->d, w->Asel, sizeof(double) * a);
  memcpy(e->d + a, w->bs, sizeof(double) * m3);
  for (int k = 0; k < ns; ++k) e->d[a + m3 + (size_t)k] = w->pc[k].mu;
  memcpy(e->d + kl, w->z, sizeof(double) * (size_t)m);
  e->h = h;
  e->ns = ns;
  e->m = m;
}

// Scatters subset forces c [3 ns] into cfull [3 ncon].
static void scatter(cp_world *w, int ns, const int *sel, const double *c,
                    double *cfull) {
  memset(cfull, 0, sizeof(double) * 3 * (size_t)w->ncon);
  for (int k = 0; k < ns; ++k)
    for (int d = 0; d < 3; ++d) cfull[3 * sel[k] + d] = c[3 * k + d];
}


// Viewer/log record of the step's constraints with their forces (contacts
// only; limits are not contacts).
static cp_world_status record_contacts(cp_world *w, const double *force) {
  int nc = 0;
  for (int j = 0; j < w->ncon; ++j) nc += w->cons[j].contact >= 0;
  if (cp_grow((void **)&w->wc, &w->wc_cap, nc + 1, sizeof *w->wc))
    return fail(w, CP_WORLD_NOMEM, "out of memory");
  w->nwc = 0;
  for (int j = 0; j < w->ncon; ++j) {
    const con *c = &w->cons[j];
    if (c->contact < 0) continue;
    const cp_contact *ct = &w->sc.contacts[c->contact];
    cp_world_contact *o = &w->wc[w->nwc++];
    o->a = ct->a;
    o->b = ct->b;
    cp_v3_copy(o->p, ct->p);
    cp_v3_copy(o->n, ct->n);
    for (int d = 0; d < 3; ++d)
      o->force[d] = force[3 * j] * ct->n[d] + force[3 * j + 1] * ct->t[d] +
                    force[3 * j + 2] * ct->o[d];
    o->depth = ct->depth;
  }
  return CP_WORLD_OK;
}

int cp_world_contacts(const cp_world *w, const cp_world_contact **out) {
  *out = w->wc;
  return w->nwc;
}

// ---------------------------------------------------------------------------
// Steppers

// The velocity stepper (also the acceleration stepper's fallback).
static cp_world_status step_velocity(cp_world *w, stepsys *s,
                                     cp_step_info *info) {
  const double h = w->opt.dt;
  const int n3 = 3 * w->ncon, ns = w->ncon;
  double *bv = w->cfull; // velocity of free motion + gap/h on the normals
  for (int i = 0; i < n3; ++i) bv[i] = w->vc[i] + h * (s->cs.b[i] - w->kx[i]);
  for (int j = 0; j < w->ncon; ++j) bv[3 * j] += w->cons[j].gap / h;
  for (int j = 0; j < ns; ++j) w->sel[j] = j;
  extract(w, s->cs.A, bv, ns, w->sel);
  all_rolling(w, ns, w->sel);
  int m = lcp_setup(w, ns);
  if (m < 0) return fail(w, CP_WORLD_NOMEM, "out of memory");
  lcp_warm(w, ns, w->sel, 1, m);
  cp_lcp_info li;
  int warm = 0;
  info->lcp_solves++;
  if (solve_friction(w, m, &info->pivots, &warm, &li)) {
    // (Out of memory is not retried: the step fails with it.)
    if (li.status == CP_LCP_NOMEM) return fail(w, CP_WORLD_NOMEM, "out of memory");
    // The LCP always has a solution; a Lemke failure is numerical. Let
    // the auto strategy (FIP, more restarts, the MIP) have it -- without
    // its first step when that is the Lemke run that just failed: auto
    // would repeat it (same data, same path) before FIP, and on a 10-box
    // stack that repeat was two thirds of the velocity stepper's time.
    // FIP alone first gives auto's answer bit for bit when it solves.
    cp_solve_options so = solve_options_now(w);
    int lemke_failed = so.solver == CP_SOLVER_LEMKE;
    so.solver = lemke_failed ? CP_SOLVER_FIP : CP_SOLVER_AUTO;
    info->lcp_solves++;
    cp_lcp_status fs =
        cp_lcp_solve(w->ws, m, w->M, w->q, &so, w->z, w->w, &li, NULL);
    if (fs != CP_LCP_SOLVED && lemke_failed) {
      so.solver = CP_SOLVER_AUTO;
      fs = cp_lcp_solve(w->ws, m, w->M, w->q, &so, w->z, w->w, &li, NULL);
    }
    if (fs == CP_LCP_NOMEM) return fail(w, CP_WORLD_NOMEM, "out of memory");
    if (fs != CP_LCP_SOLVED) {
      // Data that overflowed (efforts or speeds near DBL_MAX) is not a
      // solver's failure: the state's numbers are what went wrong.
      int finite = 1;
      for (int i = 0; i < m && finite; ++i) finite = isfinite(w->q[i]);
      for (size_t i = 0; i < (size_t)m * (size_t)m && finite; ++i)
        finite = isfinite(w->M[i]);
      if (!finite)
        return fail(w, CP_WORLD_NONFINITE,
                    "t = %.9g: the velocity LCP (size %d) has data that is not "
                    "finite: the efforts or velocities overflowed (%s)",
                    w->t, m, li.reason);
    }
    if (fs != CP_LCP_SOLVED)
      return fail(w, CP_WORLD_SOLVER_FAILED,
                  "t = %.9g: the velocity LCP (size %d) was not solved: %s",
                  w->t, m, li.reason);
    for (int i = 0; i < m; ++i) w->basis[i] = w->z[i] > 0;
  }
  if (w->opt.stepper == CP_STEPPER_VELOCITY) info->warm_started = warm;
  if (lcp_record(w, ns, w->sel, 1)) return fail(w, CP_WORLD_NOMEM, "out of memory");
  lcp_forces(w, ns, w->c);
  scatter(w, ns, w->sel, w->c, w->cfull);
  for (int i = 0; i < n3; ++i) {
    w->ck_p[i] += w->cfull[i];
    w->cfull[i] /= h; // impulse over the step -> force
  }
  cp_world_status st = accel(w, s, w->cfull, w->udot);
  if (st != CP_WORLD_OK) return st;
  get_u(w, w->u0);
  for (int i = 0; i < w->nu; ++i) w->u0[i] += h * w->udot[i];
  set_u(w, w->u0);
  memcpy(w->ck_u1, w->u0, sizeof(double) * (size_t)w->nu);
  move(w, w->u0, h);
  return record_contacts(w, w->cfull);
}

static int touching(const cp_world *w, const con *c) {
  return c->gap <= w->sc.touch_tolerance;
}

// u^T H u with H of the step's start (the mass matrix of models/system.h).
static double kinetic(const cp_world *w, const stepsys *s, const double *u) {
  const int nu = w->nu;
  double e = 0;
  for (int j = 0; j < nu; ++j) {
    double hu = 0;
    for (int i = 0; i < nu; ++i) hu += s->sys.H[i + (size_t)j * nu] * u[i];
    e += u[j] * hu;
  }
  return e;
}

// Drift correction (formulation §6 step 4): the predicted gaps of the
// persistent constraints sel after the step, g = gap + h v+_n; if any is
// below -CP_WORLD_DRIFT_TOL the positions are projected back along the
// normals: delta = H^-1 G_n lambda, 0 <= lambda _|_ A_nn lambda + g >= 0
// (velocities untouched, so rest stays rest and no kinetic energy is made).
#define CP_WORLD_DRIFT_TOL 1e-8
#define CP_WORLD_HOLD CP_WORLD_DRIFT_TOL
static cp_world_status project(cp_world *w, stepsys *s, int ns,
                               const int *sel, const double *gp,
                               cp_step_info *info);
static cp_world_status drift(cp_world *w, stepsys *s, int ns, const int *sel,
                             const double *vn_new, cp_step_info *info) {
  const double h = w->opt.dt;
  double worst = 0;
  double gs[1024], *gp = ns <= 1024 ? gs : malloc(sizeof(double) * (size_t)ns);
  if (!gp) return fail(w, CP_WORLD_NOMEM, "out of memory");
  for (int k = 0; k < ns; ++k) {
    gp[k] = w->cons[sel[k]].gap + h * vn_new[k];
    if (gp[k] < worst) worst = gp[k];
  }
  cp_world_status st = worst >= -CP_WORLD_DRIFT_TOL
                           ? CP_WORLD_OK
                           : project(w, s, ns, sel, gp, info);
  if (gp != gs) free(gp);
  return st;
}

// Moves the positions by delta = H^-1 G_n lambda, 0 <= lambda _|_ A_nn
// lambda + g >= 0, for the constraints sel[0..ns) with gaps g (s: the system
// of the positions being moved); the potential energy this adds is taken
// from the kinetic energy.
static cp_world_status project(cp_world *w, stepsys *s, int ns,
                               const int *sel, const double *gp,
                               cp_step_info *info) {
  cp_world_status st = ensure(w, w->ncon, ns);
  if (st != CP_WORLD_OK) return st;
  const int n3 = 3 * w->ncon;
  for (int a = 0; a < ns; ++a) {
    for (int b = 0; b < ns; ++b)
      w->M[a + (size_t)b * ns] =
          s->cs.A[3 * sel[a] + (size_t)(3 * sel[b]) * (size_t)n3];
    w->q[a] = gp[a];
  }
  cp_lcp_info li;
  info->lcp_solves++;
  if (solve_lcp(w, ns, &info->pivots, &li)) return CP_WORLD_OK;
  double worst = 0; // the deepest predicted gap (the check's drift depth)
  for (int k = 0; k < ns; ++k)
    if (gp[k] < worst) worst = gp[k];
  w->ck_drift = -worst;
  cp_world_get_state(w, w->ck_xm); // before the projection (the check)
  // delta = H^-1 G_n lambda: the difference of two accelerations.
  memset(w->c, 0, sizeof(double) * (size_t)n3);
  for (int k = 0; k < ns; ++k) w->c[3 * sel[k]] = w->z[k];
  double *d0 = w->du;
  if ((st = accel(w, s, w->c, w->udot)) != CP_WORLD_OK) return st;
  memset(w->c, 0, sizeof(double) * (size_t)n3);
  if ((st = accel(w, s, w->c, d0)) != CP_WORLD_OK) return st;
  for (int i = 0; i < w->nu; ++i) d0[i] = w->udot[i] - d0[i];
  for (int r = 0; r < w->nl; ++r)
    if (w->driven[6 * w->nobj + r]) d0[6 * w->nobj + r] = 0;
  // The projection must not make energy: what it adds to the potential
  // energy is taken from the kinetic energy (velocities scaled), so that a
  // step without input never gains energy (at rest there is none to take,
  // and the overlap removed there is at rounding level).
  double e0 = energy_of(w);
  move(w, d0, 1.0);
  double rise = energy_of(w) - e0;
  if (rise > 0) {
    get_u(w, w->u0);
    double ke = 0.5 * kinetic(w, s, w->u0);
    double f = ke > rise ? sqrt((ke - rise) / ke) : 0.0;
    if (ke > 0) {
      for (int i = 0; i < w->nu; ++i) w->u0[i] *= f;
      set_u(w, w->u0);
    }
  }
  return CP_WORLD_OK;
}

// Whether open constraint j would close within the step at its current
// normal speed and free acceleration.
static int closes(const cp_world *w, const stepsys *s, int j) {
  const double h = w->opt.dt;
  return w->cons[j].gap + h * (w->vc[3 * j] + h * s->cs.b[3 * j]) < 0;
}

// The constraints left out of the acceleration problem over sel[0..ns)
// (its forces in w->c) whose gap at the end of the step, gap + h (v_n + h
// a_n) with a_n under those forces, would be negative join it: sel gains
// them, in constraint order, and *ns its new count. Returns how many
// joined. (w->rank is lcp_setup's, rewritten before it is read again.)
#define CP_WORLD_SPEC_ROUNDS 8
static int join_closing(cp_world *w, const stepsys *s, int *ns) {
  const double h = w->opt.dt;
  const size_t n3 = 3 * (size_t)w->ncon;
  int *out = w->rank, m = 0, p = 0;
  for (int j = 0; j < w->ncon; ++j) {
    if (p < *ns && w->sel[p] == j) {
      out[m++] = j;
      ++p;
      continue;
    }
    double a = s->cs.b[3 * j];
    for (int k = 0; k < *ns; ++k) {
      const double *col = s->cs.A + (size_t)(3 * w->sel[k]) * n3 + 3 * j;
      a += col[0] * w->c[3 * k] + col[n3] * w->c[3 * k + 1] +
           col[2 * n3] * w->c[3 * k + 2];
    }
    if (w->cons[j].gap + h * (w->vc[3 * j] + h * a) < 0) out[m++] = j;
  }
  int joined = m - *ns;
  if (joined) memcpy(w->sel, out, sizeof(int) * (size_t)m);
  *ns = m;
  return joined;
}

// The acceleration stepper. Returns CP_WORLD_NEEDS_FALLBACK when a problem
// had no answer (the caller restores the state and takes a velocity step).
static cp_world_status step_acceleration(cp_world *w, stepsys *s,
                                         cp_step_info *info) {
  const double h = w->opt.dt, tol = s->sys.tol;
  const int n3 = 3 * w->ncon;
  cp_world_status st;
  // 1. Impacts: touching constraints approaching faster than tol, and
  // constraints with a gap that would close within the step. The impulse
  // problem holds every touching, non-separating constraint too, so that an
  // impact propagates through a stack.
  // A constraint that is not touching but would close within the step
  // bounces off it when it has restitution (an impact now, Newton's law
  // applied to its approach speed); without restitution it is left to the
  // acceleration problem (step 2), which stops it at zero gap only if the
  // forces of the step really bring it there (b alone, the free
  // acceleration, ignores what holds the body: a box lifted in a grasp
  // would be kicked upwards off the table it has just left).
  int ns = 0, any = 0;
  for (int j = 0; j < w->ncon; ++j) {
    const con *c = &w->cons[j];
    double vn = w->vc[3 * j];
    if (touching(w, c)) {
      if (vn <= tol) w->sel[ns++] = j;
      any |= vn < -tol;
    } else if (c->e > 0 && closes(w, s, j)) {
      w->sel[ns++] = j;
      any = 1;
    }
  }
  if (any) {
    double *bv = w->cfull;
    for (int i = 0; i < n3; ++i) bv[i] = w->vc[i];
    for (int k = 0; k < ns; ++k) {
      int j = w->sel[k];
      const con *c = &w->cons[j];
      double vn = w->vc[3 * j];
      // v+_n >= -e v-_n (touching and approaching, or closing with e > 0)
      if (!touching(w, c) || vn < -tol) bv[3 * j] += c->e * vn;
    }
    extract(w, s->cs.A, bv, ns, w->sel);
    all_rolling(w, ns, w->sel);
    int m = lcp_setup(w, ns), hit;
    if (m < 0) return fail(w, CP_WORLD_NOMEM, "out of memory");
    cp_lcp_info li;
    info->lcp_solves++;
    uint64_t key = 0;
    memo_slot *slot = memo_find(w, ns, m, &key, &hit);
    if (hit) {
      info->lcp_reused++;
    } else {
      lcp_fill(w, m);
      if (solve_lcp(w, m, &info->pivots, &li))
        return li.status == CP_LCP_NOMEM ? fail(w, CP_WORLD_NOMEM, "out of memory") :
        fail(w, CP_WORLD_NEEDS_FALLBACK,
                    "t = %.9g: the impact LCP (size %d) was not solved: %s",
                    w->t, m, li.reason);
      if (slot) memo_keep(w, slot, key, ns, m);
    }
    info->impacts = 0;
    for (int k = 0; k < ns; ++k) info->impacts += w->z[k] > 0;
    lcp_forces(w, ns, w->c);
    scatter(w, ns, w->sel, w->c, w->cfull);
    for (int i = 0; i < n3; ++i) w->ck_p[i] += w->cfull[i];
    w->ck_two_phase = 1;
    // u += H^-1 G p: the difference of two accelerations.
    double *d0 = w->du;
    if ((st = accel(w, s, w->cfull, w->udot)) != CP_WORLD_OK) return st;
    memset(w->cfull, 0, sizeof(double) * (size_t)n3);
    if ((st = accel(w, s, w->cfull, d0)) != CP_WORLD_OK) return st;
    get_u(w, w->u0);
    for (int i = 0; i < w->nu; ++i) w->u0[i] += w->udot[i] - d0[i];
    set_u(w, w->u0);
    // New velocities: new b, k, sliding split.
    stepsys_free(w, s);
    if ((st = build(w, s)) != CP_WORLD_OK) return st;
  }
  // 2. The acceleration LCP over the touching, non-separating constraints
  // and the open ones that would close within the step (speculative: their
  // row asks for gap + h v+_n >= 0 at the end of the step, so they push only
  // if the step's motion would carry them through).
  // Which open constraints close depends on the forces found, not only on
  // the free motion (a box landing on one corner swings its other corners
  // down): after a solve, those left out whose gap at the end of the step
  // would be negative join as speculative rows and it is solved again
  // (join_closing).
  // A touching constraint that separates now may still close within the
  // step (a rod resting on its limit under an effort: rounding gives it a
  // separating speed above tol, and without its row the effort carried it
  // 1.25 mm through the limit in one step); it is selected as speculative.
  // With all_limits every limit side is selected.
  ns = 0;
  for (int j = 0; j < w->ncon; ++j)
    if ((touching(w, &w->cons[j]) && w->vc[3 * j] <= tol) || closes(w, s, j) ||
        (w->all_limits && w->cons[j].contact < 0))
      w->sel[ns++] = j;
  int m3, warm = 0, joins = 0;
  cp_lcp_info li;
again:
  if ((st = ensure(w, w->ncon, 6 * ns)) != CP_WORLD_OK) return st;
  m3 = 3 * ns;
  extract(w, s->cs.A, s->cs.b, ns, w->sel);
  // Velocity-consistent right-hand side: the normal rows and the rolling
  // contacts' tangential rows ask for v + h a (not a) to be complementary,
  // so residual speeds within the tolerance are removed instead of
  // integrated (rest stays rest; a stopping contact stops at zero).
  // Open constraints (speculative) and touching ones within
  // CP_WORLD_HOLD of zero gap also ask for gap + h v+_n >= 0 at the end of
  // the step: the compliance's small settling (kappa A_nn c_n h^2) is held
  // at that depth instead of accumulating; deeper overlaps are left to the
  // drift projection (step 4), which makes no energy.
  for (int k = 0; k < ns; ++k) {
    const con *c = &w->cons[w->sel[k]];
    w->bs[3 * k] += w->vc[3 * w->sel[k]] / h;
    if (c->gap >= -CP_WORLD_HOLD) w->bs[3 * k] += c->gap / (h * h);
  }
  for (int k = 0; k < ns; ++k) {
    int j = w->sel[k];
    const con *c = &w->cons[j];
    cp_pyramid_contact *p = &w->pc[k];
    memset(p, 0, sizeof *p);
    double vt = w->vc[3 * j + 1], vo = w->vc[3 * j + 2];
    double sp = sqrt(vt * vt + vo * vo);
    p->mu = c->contact >= 0 ? c->mu : 0;
    if (p->mu == 0) {
      p->sliding = 1; // frictionless: c_n only (contact/problem.h)
    } else if (sp > tol) {
      p->sliding = 1;
      p->d[0] = p->mu * vt / sp;
      p->d[1] = p->mu * vo / sp;
    } else {
      w->bs[3 * k + 1] += vt / h;
      w->bs[3 * k + 2] += vo / h;
    }
  }
  for (int pass = 0;; ++pass) {
    int m = lcp_setup(w, ns);
    if (m < 0) return fail(w, CP_WORLD_NOMEM, "out of memory");
    lcp_warm(w, ns, w->sel, 0, m);
    info->lcp_solves++;
    if (solve_friction(w, m, &info->pivots, pass || joins ? NULL : &warm, &li))
      return li.status == CP_LCP_NOMEM ? fail(w, CP_WORLD_NOMEM, "out of memory") :
      fail(w, CP_WORLD_NEEDS_FALLBACK,
                  "t = %.9g: the acceleration LCP (size %d) has no solution "
                  "found (%s)",
                  w->t, m, li.reason);
    lcp_forces(w, ns, w->c);
    // A sliding contact whose tangential velocity would reverse within the
    // step stops in it instead: it is made rolling (velocity-consistent)
    // and the problem solved again.
    int changed = 0;
    for (int k = 0; k < ns && pass < 4; ++k) {
      if (!w->pc[k].sliding || w->pc[k].mu == 0) continue;
      int j = w->sel[k];
      double vt = w->vc[3 * j + 1], vo = w->vc[3 * j + 2], at = w->bs[3 * k + 1],
             ao = w->bs[3 * k + 2];
      for (int i = 0; i < m3; ++i) {
        at += w->Asel[i + (size_t)(3 * k + 1) * m3] * w->c[i]; // A symmetric:
        ao += w->Asel[i + (size_t)(3 * k + 2) * m3] * w->c[i]; // the column
      }
      if ((vt + h * at) * vt + (vo + h * ao) * vo > 0) continue;
      w->pc[k].sliding = 0;
      w->pc[k].d[0] = w->pc[k].d[1] = 0;
      w->bs[3 * k + 1] += vt / h;
      w->bs[3 * k + 2] += vo / h;
      changed = 1;
    }
    if (!changed) break;
  }
  if (joins++ < CP_WORLD_SPEC_ROUNDS && join_closing(w, s, &ns)) goto again;
  info->warm_started = warm;
  if (lcp_record(w, ns, w->sel, 0)) return fail(w, CP_WORLD_NOMEM, "out of memory");
  scatter(w, ns, w->sel, w->c, w->cfull);
  for (int i = 0; i < n3; ++i) w->ck_p[i] += h * w->cfull[i];
  if ((st = accel(w, s, w->cfull, w->udot)) != CP_WORLD_OK) return st;
  // Normal velocity after the step of each persistent constraint:
  // v_n + h a_n = h (A c + b + v_n / h)_n (the shifted rows above).
  double vns[1024], *vn = ns <= 1024 ? vns : malloc(sizeof(double) * (size_t)ns);
  if (!vn) return fail(w, CP_WORLD_NOMEM, "out of memory");
  for (int k = 0; k < ns; ++k) {
    double a = w->bs[3 * k];
    // Row 3k of A c, read down column 3k (A is symmetric: the same terms).
    for (int i = 0; i < m3; ++i) a += w->Asel[i + (size_t)(3 * k) * m3] * w->c[i];
    vn[k] = h * a;
    const con *c = &w->cons[w->sel[k]];
    if (c->gap >= -CP_WORLD_HOLD) vn[k] -= c->gap / h; // the rows' gap shift
  }
  // 3. Semi-implicit Euler.
  get_u(w, w->u0);
  for (int i = 0; i < w->nu; ++i) w->u0[i] += h * w->udot[i];
  set_u(w, w->u0);
  memcpy(w->ck_u1, w->u0, sizeof(double) * (size_t)w->nu);
  move(w, w->u0, h);
  // 4. Drift.
  st = drift(w, s, ns, w->sel, vn, info);
  if (vn != vns) free(vn);
  if (st != CP_WORLD_OK) return st;
  return record_contacts(w, w->cfull);
}
static cp_world_status step_quasistatic(cp_world *w, cp_step_info *info) {
  // Only touching contacts: the quasistatic problem has no gaps.
  cp_scene *sc = &w->sc;
  int k = 0;
  for (int j = 0; j < sc->n_contacts; ++j)
    if (-sc->contacts[j].depth <= sc->touch_tolerance)
      sc->contacts[k++] = sc->contacts[j];
  sc->n_contacts = k;
  w->contacts_valid = 0;
  cp_system sys;
  cp_error err;
  cp_error_clear(&err);
  if (cp_system_build_ws(sc, &w->sys_ws, &sys, &err))
    return fail(w, CP_WORLD_NOMEM, "%s", err.msg);
  cp_problem_options po = cp_problem_defaults();
  po.solve = solve_options_now(w);
  // Lemke may end on a secondary ray without proof here (quasistatic.h):
  // the MIP decides those.
  if (po.solve.solver == CP_SOLVER_LEMKE) po.solve.solver = CP_SOLVER_AUTO;
  cp_quasistatic_result res;
  cp_lcp_status ls = cp_problem_quasistatic(&sys, &po, &res);
  info->lcp_solves++;
  info->pivots += res.info.iterations;
  cp_world_status st = CP_WORLD_OK;
  if (ls != CP_LCP_SOLVED) {
    st = fail(w, CP_WORLD_SOLVER_FAILED,
              "t = %.9g: the quasistatic problem has no answer (%s%s%s)", w->t,
              cp_lcp_status_name(ls), res.info.reason[0] ? ": " : "",
              res.info.reason);
  } else {
    set_u(w, res.velocity);
    move(w, res.velocity, w->opt.dt);
    // record contacts: forces in contact frames
    w->ncon = 0;
    for (int j = 0; j < sc->n_contacts; ++j) {
      if (cp_grow((void **)&w->cons, &w->con_cap, j + 1, sizeof *w->cons)) break;
      memset(&w->cons[j], 0, sizeof(con));
      w->cons[j].contact = j;
      w->ncon = j + 1;
    }
    st = record_contacts(w, res.force);
  }
  cp_quasistatic_result_free(&res);
  cp_system_free(&sys);
  return st;
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
      return fail(w, CP_WORLD_NONFINITE,
                  "t = %.9g: body \"%s\": %s is not finite after the step",
                  w->t, b->name, what);
  }
  for (int r = 0; r < w->nl; ++r) {
    const cp_joint *j = cjoint_of(w, r);
    if (!isfinite(j->position) || !isfinite(j->velocity))
      return fail(w, CP_WORLD_NONFINITE,
                  "t = %.9g: joint \"%s/%s\": %s is not finite after the step",
                  w->t, w->sc.manips[w->row_manip[r]].name, j->name,
                  isfinite(j->position) ? "velocity" : "position");
  }
  return CP_WORLD_OK;
}

// Overlap accepted during a simulation before the step is refused.
static double pen_limit(const cp_world *w) {
  return fmax(100 * w->sc.penetration_tolerance, 1e-2);
}

// Contacts of the state a step reached (the penetration check and the next
// step's), with the penetration the step left settled. The steppers' rows
// are linear in the step: a body turning at w moves its points h^2 |w|^2 r
// / 2 off the straight line they predict (0.3-0.6 mm for a box landing on
// a corner at 5 ms), and a box tumbling onto another at 3 m/s can end a
// step centimetres in. In a dynamic step, contacts deeper than
// CP_WORLD_SETTLE times the scene's penetration_tolerance (at least
// CP_WORLD_SETTLE_MIN) are projected out with every constraint of the new
// state, open ones too, which a push may close (project: positions only,
// no energy made), and the contacts generated again, at most
// CP_WORLD_SETTLE_ROUNDS times (each round is linear too: a sphere pushed
// off a box's edge turns its normal). Only what is still deeper than
// pen_limit after that is refused (gen_contacts' penetration error).
#define CP_WORLD_SETTLE 0.5
#define CP_WORLD_SETTLE_MIN 1e-7 /* m: above the compliance's settling */
#define CP_WORLD_SETTLE_ROUNDS 8
#define CP_WORLD_NO_LIMIT 1e300 /* m: contacts of any depth, no error */
static cp_world_status settle(cp_world *w, cp_step_info *info, int *moved) {
  *moved = 0;
  if (w->opt.stepper == CP_STEPPER_QUASISTATIC)
    return gen_contacts(w, pen_limit(w));
  const double lim =
      fmax(CP_WORLD_SETTLE * w->sc.penetration_tolerance, CP_WORLD_SETTLE_MIN);
  const int all_limits = w->all_limits;
  cp_world_status st = gen_contacts(w, CP_WORLD_NO_LIMIT);
  for (int r = 0; st == CP_WORLD_OK && r < CP_WORLD_SETTLE_ROUNDS &&
                  max_depth(w) > lim;
       ++r) {
    if (!w->all_limits) {
      // Every limit side constrains the push-out, not only those within
      // the step's window: a finger pushed out of a box must not be pushed
      // through its limit.
      w->all_limits = 1;
      w->contacts_valid = 0;
      if ((st = gen_contacts(w, CP_WORLD_NO_LIMIT)) != CP_WORLD_OK) break;
    }
    stepsys s;
    if ((st = build(w, &s)) != CP_WORLD_OK) break;
    double gs[256], *g = w->ncon <= 256 ? gs : malloc(sizeof(double) * (size_t)w->ncon);
    if (!g) {
      stepsys_free(w, &s);
      st = fail(w, CP_WORLD_NOMEM, "out of memory");
      break;
    }
    // Gaps within CP_WORLD_HOLD of zero count as zero: at rounding level
    // (1e-15) they made Lemke's solution check fail on its own noise.
    int ns = 0;
    for (int j = 0; j < w->ncon; ++j) {
      w->sel[ns] = j;
      g[ns++] = fabs(w->cons[j].gap) <= CP_WORLD_HOLD ? 0.0 : w->cons[j].gap;
    }
    st = project(w, &s, ns, w->sel, g, info);
    if (g != gs) free(g);
    stepsys_free(w, &s);
    if (st != CP_WORLD_OK) break;
    *moved = 1;
    w->contacts_valid = 0;
    st = gen_contacts(w, CP_WORLD_NO_LIMIT);
  }
  if (w->all_limits != all_limits) { // the next step's constraints
    w->all_limits = all_limits;
    w->contacts_valid = 0;
    if (st == CP_WORLD_OK) st = gen_contacts(w, CP_WORLD_NO_LIMIT);
  }
  if (st == CP_WORLD_OK && max_depth(w) > pen_limit(w))
    st = gen_contacts(w, pen_limit(w)); // the error naming the pair
  return st;
}

// The name of constraint j of the step ("box"/"table" point 2, or joint
// "m/j" lower limit) into buf.
static const char *con_name(const cp_world *w, int j, char *buf, size_t n) {
  const con *c = &w->cons[j];
  if (c->contact < 0) {
    snprintf(buf, n, "joint \"%s/%s\" %s limit",
             w->sc.manips[w->row_manip[c->row]].name, cjoint_of(w, c->row)->name,
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
           cjoint_of(w, r)->name);
  return buf;
}

// The independent check (planner/sim/stepcheck.h) of the step just taken over
// the system s. CP_WORLD_CHECK_FAILED names the law and where.
static cp_world_status check_step(cp_world *w, stepsys *s, int accel_k) {
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
    mu[j] = c->contact >= 0 ? c->mu : 0;
    e[j] = c->e;
    const size_t d = 3 * (size_t)j;
    cn[j] = c->contact >= 0 ? kap * A[d + d * n3] : 0;
    const double att = A[d + 1 + (d + 1) * n3], aoo = A[d + 2 + (d + 2) * n3];
    ct[j] = kap * (att > aoo ? att : aoo);
  }
  if (cp_grow((void **)&w->ck_rng, &w->ck_rng_cap, 4 * nc + 4, sizeof(int)))
    return fail(w, CP_WORLD_NOMEM, "out of memory");
  const int no = 6 * w->nobj;
  for (int j = 0; j < nc; ++j) {
    const con *c = &w->cons[j];
    int *rg = w->ck_rng + 4 * j;
    rg[0] = rg[1] = rg[2] = rg[3] = 0;
    if (c->contact < 0) {
      rg[0] = no + c->row, rg[1] = no + c->row + 1;
      continue;
    }
    const cp_contact *ct = &w->sc.contacts[c->contact];
    for (int side = 0; side < 2; ++side) {
      const cp_ref r = side ? ct->b : ct->a;
      if (r.body >= 0 && w->free_idx[r.body] >= 0) {
        rg[2 * side] = 6 * w->free_idx[r.body];
        rg[2 * side + 1] = rg[2 * side] + 6;
      } else if (r.body < 0 && r.manip >= 0) {
        rg[2 * side] = no + w->manip_r0[r.manip];
        rg[2 * side + 1] = no + w->manip_r0[r.manip + 1];
      }
    }
    if (rg[2] == rg[0] && rg[3] == rg[1]) rg[2] = rg[3] = 0; // one manipulator
  }
  cp_world_get_state(w, w->ck_x1);
  cp_stepcheck_step cs = {
      .nu = nu, .nc = nc, .nbody = w->nobj, .njoint = w->nl,
      .h = w->opt.dt, .accel_k = accel_k, .two_phase = w->ck_two_phase, .slide_tol = s->sys.tol, .H = s->sys.H, .f = s->sys.f,
      .G = w->Gx, .range = w->ck_rng, .nblock = w->nblk, .block = w->ck_blk,
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
  return fail(w, CP_WORLD_CHECK_FAILED,
              "t = %.9g: the step check failed: %s at %s: %.6g against the "
              "bound %.6g (%s stepper%s)",
              w->t, cp_stepcheck_law_name(rep.law), where, rep.value, rep.limit,
              accel_k ? "acceleration" : "velocity",
              rep.law == CP_CHECK_ENERGY ? ", inputs' work included" : "");
}

// Whether a joint ended beyond a limit by more than 1e-9 m (rad) and more
// than it started.
static int limit_crossed(const cp_world *w) {
  for (int r = 0; r < w->nl; ++r) {
    const double q1 = cjoint_of(w, r)->position, q0 = w->ck_x0p[13 * w->nobj + 2 * r];
    const double b0 = fmax(w->lim_lo[r] - q0, q0 - w->lim_hi[r]);
    const double b1 = fmax(w->lim_lo[r] - q1, q1 - w->lim_hi[r]);
    if (b1 > 1e-9 && b1 > b0) return 1;
  }
  return 0;
}

static cp_world_status grow_check(cp_world *w) {
  const int need = 2 * w->nu + 12 * w->ncon + 1;
  if (need <= w->ck_cap) return CP_WORLD_OK;
  int cap = 2 * need;
  double *p = realloc(w->ck_p, sizeof(double) * (size_t)cap);
  if (!p) return fail(w, CP_WORLD_NOMEM, "out of memory");
  w->ck_p = p;
  p = realloc(w->ck_buf, sizeof(double) * (size_t)cap);
  if (!p) return fail(w, CP_WORLD_NOMEM, "out of memory");
  w->ck_buf = p;
  w->ck_cap = cap;
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
  if (!w->contacts_valid && (st = gen_contacts(w, pen_limit(w))) != CP_WORLD_OK)
    return st;
  info->contacts = w->sc.n_contacts;
  w->nwarm_next = 0;
  int checked = 0;
  if (stp == CP_STEPPER_QUASISTATIC) {
    if ((st = step_quasistatic(w, info)) != CP_WORLD_OK) return st;
    if ((st = check_finite(w)) != CP_WORLD_OK) return st;
    for (int r = 0; r < w->nl; ++r) {
      const cp_joint *j = cjoint_of(w, r);
      double slack = 1e-3 * fmax(1.0, fabs(j->upper - j->lower));
      if (j->has_limits &&
          (j->position < j->lower - slack || j->position > j->upper + slack))
        return fail(w, CP_WORLD_JOINT_LIMIT,
                    "t = %.9g: joint \"%s/%s\" at %.9g left its limits [%g, %g]",
                    w->t, w->sc.manips[w->row_manip[r]].name, j->name,
                    j->position, j->lower, j->upper);
    }
  } else {
    if ((st = grow_check(w)) != CP_WORLD_OK) return st;
    get_u(w, w->ck_u0);
    memset(w->ck_p, 0, sizeof(double) * 3 * (size_t)w->ncon);
    w->ck_drift = 0;
    w->ck_two_phase = 0;
    stepsys s;
    if ((st = build(w, &s)) != CP_WORLD_OK) return st;
    int accel_k = stp == CP_STEPPER_ACCELERATION;
    st = accel_k ? step_acceleration(w, &s, info) : step_velocity(w, &s, info);
    if (st == CP_WORLD_NEEDS_FALLBACK && w->opt.allow_fallback) {
      // Painleve / inconsistent: the velocity stepper from the start.
      stepsys_free(w, &s);
      put_state(w, w->ck_x0p);
      w->contacts_valid = 1; // the constraints are the start state's
      w->nwarm_next = 0;
      memset(w->ck_p, 0, sizeof(double) * 3 * (size_t)w->ncon);
      w->ck_drift = 0;
    w->ck_two_phase = 0;
      accel_k = 0;
      st = build(w, &s);
      if (st == CP_WORLD_OK) st = step_velocity(w, &s, info);
      info->fallback = 1;
    }
    if (st == CP_WORLD_OK && !w->all_limits && limit_crossed(w)) {
      // A limit outside the window (or not selected) was crossed: the step
      // again with every limit a constraint and a row of its LCPs.
      stepsys_free(w, &s);
      put_state(w, w->ck_x0p);
      w->all_limits = 1;
      info->limits_redone = 1;
      st = take(w, stp, info, whole);
      w->all_limits = 0;
      return st;
    }
    if (st == CP_WORLD_OK) st = check_finite(w);
    if (st == CP_WORLD_OK && w->opt.check) {
      w->ck_e1 = energy_of(w);
      st = check_step(w, &s, accel_k);
      checked = st == CP_WORLD_OK;
    }
    stepsys_free(w, &s);
    if (st != CP_WORLD_OK) return st;
  }
  // Contacts of the new state (the penetration check and the next step's),
  // the step's overlap settled; a settled state's energy is its own (the
  // next step's check starts from it).
  w->contacts_valid = 0;
  int moved;
  if ((st = settle(w, info, &moved)) != CP_WORLD_OK) return st;
  warm_commit(w);
  w->t += w->opt.dt;
  w->energy = checked && !moved ? w->ck_e1 : energy_of(w);
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
  int n; // substeps
} try_t;

cp_world_status cp_world_step(cp_world *w, cp_step_info *out) {
  cp_step_info info;
  memset(&info, 0, sizeof info);
  w->msg[0] = 0;
  cp_world_get_state(w, w->state0);
  const double t0 = w->t, h = w->opt.dt;
  const cp_stepper primary = w->opt.stepper;
  // Attempts: the step as asked; then (checked dynamic steppers) in
  // substeps, then by the velocity stepper whole and in substeps (it always
  // has a solution), each with every joint limit a constraint.
  try_t tries[4] = {{primary, 1}};
  int ntries = 1;
  if (w->opt.check && primary != CP_STEPPER_QUASISTATIC) {
    tries[ntries++] = (try_t){primary, CP_WORLD_SUBSTEPS};
    if (primary == CP_STEPPER_ACCELERATION && w->opt.allow_fallback) {
      tries[ntries++] = (try_t){CP_STEPPER_VELOCITY, 1};
      tries[ntries++] = (try_t){CP_STEPPER_VELOCITY, CP_WORLD_SUBSTEPS};
    }
  }
  char first[512] = "";
  cp_world_status st = CP_WORLD_OK, st0 = CP_WORLD_OK;
  int a;
  for (a = 0; a < ntries; ++a) {
    if (a > 0) {
      put_state(w, w->state0);
      w->t = t0;
      w->all_limits = 1;
      info.retried = 1;
    }
    w->opt.dt = h / tries[a].n;
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
    if (st == CP_WORLD_OK) break;
    if (a == 0) {
      st0 = st;
      snprintf(first, sizeof first, "%s", w->msg);
    }
    if (!retryable(st)) break;
  }
  w->all_limits = 0;
  if (st != CP_WORLD_OK) {
    if (a > 0 && a >= ntries) {
      // Every retry failed: the first failure, and what the last said.
      char last[512];
      snprintf(last, sizeof last, "%s", w->msg);
      snprintf(w->msg, sizeof w->msg,
               "%.240s; taken again in %d substeps and by the velocity "
               "stepper: %.200s",
               first, CP_WORLD_SUBSTEPS, last);
      st = st0;
    }
    put_state(w, w->state0);
    w->t = t0;
    w->nwarm_next = 0;
    w->energy = energy_of(w);
    if (out) *out = info;
    return st;
  }
  w->t = t0 + h;
  hash_state(w);
  info.max_penetration = max_depth(w);
  info.energy = w->energy;
  if (out) *out = info;
  return CP_WORLD_OK;
}

void cp_world_set_deadline(cp_world *w, double seconds) {
  w->deadline = seconds < INFINITY ? mono_now() + seconds : INFINITY;
}
