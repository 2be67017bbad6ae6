/// \file planner/sim/world_impl.h
/// The world's private parts, shared by the files of planner/sim/ that take
/// a step (not installed; nothing outside planner/sim/ includes it). One
/// step, by phase and file (cp_world_step in world.c is the table of
/// contents):
///
///   world.c        the API: creation, state, inputs, the step's attempts
///                  (take: one attempt; cp_world_step: retries)
///   constraints.c  contacts and joint-limit rows of the current state with
///                  the look-ahead margin; the settling of a step's overlap
///   stepsys.c      the step's system (H, f, G, k; A, b) and workspaces;
///                  velocities and positions in and out of the scene
///   lcp.c          the friction LCP formed and solved (the warm basis's
///                  principal pivots, Lemke, the fallbacks)
///   islands.c      the friction LCP split into independent groups
///   sparse.c       the band LU of a large banded warm basis
///   warmsparse.c   the warm basis of a large LCP on sparse columns
///   warm.c         warm-start records across steps, the impact memo
///   steppers.c     the acceleration, velocity and quasistatic steppers
///   worldcheck.c   the world's side of the independent step check
///   planar.c       planar bodies: their locked coordinates made driven
///
/// The comment on each field of struct cp_world says which phase fills it
/// (as MuJoCo's mjData); "step" fields live for one step (or substep).
#ifndef CP_PLANNER_SIM_WORLD_IMPL_H
#define CP_PLANNER_SIM_WORLD_IMPL_H

#include <lapacke.h>
#include <math.h>

#include "contact/dynamics.h"
#include "contact/pyramid.h"
#include "models/clock.h"
#include "models/contactgen.h"
#include "models/system.h"
#include "planner/sim/world.h"

// ---------------------------------------------------------------------------
// Types

// Contact identity: the pair (a, b) plus the index of the point within the
// pair's list (models/manifold.h); a joint limit is (joint row, lower/upper).
typedef struct ckey {
  int a[3], b[3]; // refs (body, manip, link); limits: a = {-2, row, side}
  int idx;        // point index within the pair
} ckey;

// One constraint of a step: a generated contact, an active joint limit or
// a support point of a planar body on its table (planar.c).
#define CP_CON_LIMIT (-1)
#define CP_CON_SUPPORT (-2)
typedef struct con {
  ckey key;
  int contact;    // index into sc.contacts, or CP_CON_LIMIT, CP_CON_SUPPORT
  int row;        // limit: joint row (0..n_l-1); support: the body's index
                  // among the free bodies
  int sup;        // support: its point's index in w->sup (planar.c)
  double sign;    // limit: +1 lower, -1 upper
  double gap;     // >= 0 separation, < 0 overlap
  double mu, e;
} con;

// A support point's fixed data (planar.c), apart from con so that scenes
// without support pay nothing per constraint.
typedef struct supp {
  double fixn;    // its known normal force (N), > 0
  double mu;      // the body's support friction
  double sp[12];  // offset r from the body's centre, n, t, o (world)
  int body, obj;  // the body's index in the scene and among the free bodies
  int point;      // the point's index on its body
} supp;

// Warm-start record: a constraint's identity and which of its LCP unknowns
// were basic (slots: acceleration LCP c_n, s+_t, s+_o, a-_t, a-_o;
// velocity LCP p_n, beta_1..4, lambda).
typedef struct wrec {
  ckey key;
  unsigned char kind; // 0 acceleration LCP, 1 velocity LCP
  unsigned char flag[6];
} wrec;

// A slot of the impact memo (warm.c).
#define CP_WORLD_MEMO_KEY 4096
typedef struct memo_slot {
  uint64_t h;
  int ns, m; // ns = 0: empty
  size_t cap; // doubles at d
  double *d;  // key: Asel (3 ns square), bs (3 ns), mu (ns); then z (m)
  int pivots; // the pivots of the cold solve that filled the slot
} memo_slot;

#define WARM_MAGIC 0x636d7731u /* "cmw1" */

struct cp_world {
  // creation (world.c): the scene copy whose state the steps advance
  cp_scene sc;
  cp_world_options opt;
  double deadline;   // seconds of the world's clock (cp_world_set_deadline:
                     // bounds the solvers' time); INFINITY: none
  double (*clock)(void *ctx); // the deadline's clock (cp_world_set_clock);
  void *clock_ctx;            // NULL: models/clock.h's monotonic clock
  cp_lemke_poll_fn poll;      // the solves' call-back (cp_world_set_solve_poll,
  void *poll_ctx;             // given to ws: cp_lemke_set_poll); NULL: none
  int poll_period;
  int deadline_hit;  // lcp.c: a solver call of this step was refused because
                     // the deadline had passed (cp_world_step: not retried)
  double t;
  uint64_t hash;     // world.c, after every step
  char msg[512];     // any phase: the last failure's message (cp_wi_fail)
  int nobj, nl, nu;
  int *row_manip, *row_joint; // [nl]
  double grav_norm;

  // constraints.c: contacts of the current state (valid until the state
  // changes) and the step's constraints
  int contacts_valid;
  con *cons;
  int ncon, con_cap;
  // constraints.c (cp_wi_record_contacts, called by the steppers): last
  // step's contacts for viewers
  cp_world_contact *wc;
  int nwc, wc_cap;
  // warm.c: the records of the last step (warm) and of this one (warm_next)
  wrec *warm, *warm_next;
  int nwarm, nwarm_next, warm_cap;

  // lcp.c: the LCP's workspaces (grown by cp_wi_ensure of stepsys.c, never
  // shrunk)
  cp_lemke_ws *ws;
  int ws_cap;
  double *M, *q, *z, *w, *LU, *MB;
  lapack_int *ipiv;
  // lcp.c (lu_factor_memo): the last small basic block factorised (lum_k
  // its size, -1 none), its factor and pivots (one allocation at lum_in);
  // lum_miss: blocks not found there since the last one that was; lum_hits
  // all found; lum_off: 1: never used (the tests' comparison)
  double *lum_in, *lum_out;
  lapack_int *lum_piv;
  int lum_k, lum_off;
  unsigned lum_miss;
  long lum_hits;
  // lcp.c (warm_accept): lam_off 1: the pass w = M_B z_B + q adds every
  // lambda row (the tests' comparison); lam_taken: passes that left the
  // zero ones out
  int lam_off;
  long lam_taken;
  int lns, lnr; // the friction LCP of lcp_setup: constraints, rolling ones
  int *zidx;
  int lcp_cap;
  unsigned char *basis, *basis0; // basis0: the warm basis as recorded
  // stepsys.c (cp_wi_build): G, k, v of the constraints; lcp.c (extract) the
  // selected block As, bs; steppers.c the forces c, cfull and velocities
  double *Gx, *kx, *As, *bs, *c, *cfull, *udot, *u0, *du, *vc, *ud;
  const double *G;    // stepsys.c: G of the step's constraints (the
                      // system's own, or Gx when limit columns extend it)
  const double *Asel; // the selected A: w->As, or A itself when every
                      // constraint is selected (no copy)
  // lcp.c (extract): As is zero on its first as_zero doubles but for the
  // 3 x 3 blocks of the position pairs as_fp[2i], as_fp[2i+1] (i <
  // as_fp_n) in a (3 as_ns)-square layout; ex_buf: the selection's lists
  // per moving part.
  int *as_fp, *ex_buf;
  int as_fp_n, as_fp_cap, as_ns, ex_cap;
  size_t as_zero;
  unsigned char *driven;
  int *sel, *order, *rank; // steppers.c: selected constraints; lcp.c: rank
  cp_pyramid_contact *pc;  // steppers.c: each selected row's friction data
  size_t gx_cap;
  int csz_cap;
  double *state0; // world.c: state at the step's start
  double energy;  // world.c: energy of the current state
  cp_contact_space cs_keep; // stepsys.c: arrays of the last contact space
  cp_contactgen_ws cg_ws;   // constraints.c: contact generation's buffers
  cp_system_ws sys_ws;      // stepsys.c: the step's system arrays
  memo_slot *memo;          // warm.c: the impact memo (opt.impact_memo slots)
  int memo_pivots;          // 1: a memo hit counts its slot's pivots
                            // (cp_world_set_memo_pivots)
  // worldcheck.c, filled by the steppers (planner/sim/stepcheck.h):
  // velocities at the start and after the step before drift (nu), total
  // impulses (3 ncon), the state at the (sub)step's start, the overlap the
  // drift removed, scratch
  double *ck_u0, *ck_u1, *ck_p, *ck_x0, *ck_x1, *ck_xm, *ck_buf;
  const double *ck_x0p;     // the (sub)step's start: state0 or ck_x0
  int ck_cap;               // doubles of ck_p and ck_buf
  double ck_drift;
  double ck_e1;             // energy after the step (the check's, kept)
  int ck_two_phase;         // the step had an impulse phase
  // creation (world.c): the dof structure the check and limits read
  double *lim_lo, *lim_hi;  // [nl] joint limits (-inf, inf when none)
  int *free_idx;            // [n_bodies] index among free bodies, or -1
  int *manip_r0;            // [n_manips + 1] first joint row of each
  int *ck_blk, nblk;        // diagonal blocks of H (starts, nblk + 1)
  int *ck_rng;              // cp_wi_con_ranges: [4 ncon] dof ranges of G's columns
  int ck_rng_cap;
  int *nb_buf;              // steppers.c: the selection's neighbour lists
  int nb_cap;
  double weight;            // total weight of the moving parts (N)
  int nsup;                 // planar.c: support points of the planar bodies
                            // (constraints after the limits; 0: none)
  supp *sup;                // planar.c: their data [nsup] (NULL: none)
  double fix_scale;         // steppers.c: a support row's normal unknown is
                            // fixed at fix_scale * fixn (1 in the
                            // acceleration LCP, h in the velocity LCP)
  cp_step_profile prof;     // every phase (cp_wi_tic, cp_wi_toc): the step's
                            // phase timings (opt.profile)
  struct cp_wi_islands *isl; // islands.c: the split LCP's workspace (NULL
                             // until a step has several groups)
  struct cp_wi_sparse *spw;  // warmsparse.c: its workspace (NULL until a
                             // large LCP came)
  int sparse_off;            // warmsparse.c: 1: never taken (the tests'
                             // comparison with the dense passes)
  int sparse_memo_off;       // warmsparse.c: 1: the neighbour lists are
                             // always made anew (the tests' comparison)
  int all_limits;           // world.c: 1: every limit side is a constraint
                            // of the step and a row of its LCPs (a step
                            // taken again after it crossed a limit outside
                            // the window)
};

// The system of a step (stepsys.c): the scene's system and its contact
// space; built marks arrays to hand back (cp_wi_stepsys_free).
typedef struct stepsys {
  cp_system sys;
  cp_contact_space cs;
  int built;
} stepsys;

// Larger / smaller of two doubles without libm's fmax/fmin calls (not
// inlined under ISO C; a NaN is caught by the isfinite tests after them).
#define MAXD(a, b) ((b) > (a) ? (b) : (a))
#define MIND(a, b) ((b) < (a) ? (b) : (a))

// Drift correction's tolerance (steppers.c): predicted gaps below
// -CP_WORLD_DRIFT_TOL are projected out; touching rows within CP_WORLD_HOLD
// of zero gap hold their gap (steppers.c, constraints.c).
#define CP_WORLD_DRIFT_TOL 1e-8
#define CP_WORLD_HOLD CP_WORLD_DRIFT_TOL

// The shared functions below are the library's internals: hidden, so that
// calls within a file stay direct (and inlinable) under -fPIC, as the
// static functions they were.
#define CPW_HIDDEN __attribute__((visibility("hidden")))

// ---------------------------------------------------------------------------
// Small helpers (inline: on the step's path)

static inline cp_joint *cp_wi_joint_of(cp_world *w, int r) {
  return &w->sc.manips[w->row_manip[r]].joints[w->row_joint[r]];
}

static inline const cp_joint *cp_wi_cjoint_of(const cp_world *w, int r) {
  return &w->sc.manips[w->row_manip[r]].joints[w->row_joint[r]];
}

static inline int cp_wi_rolling(const cp_pyramid_contact *p) { return !p->sliding; }

// The world's clock (cp_world_set_clock): what the deadline is read with.
static inline double cp_wi_now(const cp_world *w) {
  return w->clock ? w->clock(w->clock_ctx) : cp_clock_now();
}

// Phase timings (opt.profile, w->prof): cp_wi_tic reads the clock only when
// profiling; cp_wi_toc adds the time since t0 to a phase; cp_wi_toc_rest adds
// it less what the phases took meanwhile (in0 = cp_wi_phases at t0), for a
// phase that encloses others. Off, each costs a test of opt.profile.
static inline double cp_wi_tic(const cp_world *w) {
  return w->opt.profile ? cp_clock_now() : 0.0;
}

static inline void cp_wi_toc(cp_world *w, double *phase, double t0) {
  if (w->opt.profile) *phase += cp_clock_now() - t0;
}

static inline double cp_wi_phases(const cp_world *w) {
  if (!w->opt.profile) return 0.0;
  const cp_step_profile *p = &w->prof;
  return p->collide + p->constraints + p->assembly + p->solve + p->check +
         p->integrate;
}

static inline void cp_wi_toc_rest(cp_world *w, double *phase, double t0,
                                double in0) {
  if (!w->opt.profile) return;
  const double d = (cp_clock_now() - t0) - (cp_wi_phases(w) - in0);
  if (d > 0) *phase += d;
}

// ---------------------------------------------------------------------------
// world.c

/// Formats the world's message; returns s.
CPW_HIDDEN cp_world_status cp_wi_fail(cp_world *w, cp_world_status s, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/// Kinetic plus gravitational potential energy of the current state.
CPW_HIDDEN double cp_wi_energy_of(const cp_world *w);

// ---------------------------------------------------------------------------
// constraints.c

/// The scene's contacts at the current state (look-ahead margin) and the
/// step's constraint list (contacts, then joint limits within the margin);
/// overlaps deeper than pen_limit are CP_WORLD_PENETRATION.
CPW_HIDDEN cp_world_status cp_wi_gen_contacts(cp_world *w, double pen_limit);
/// Deepest overlap of the scene's contacts (>= 0).
CPW_HIDDEN double cp_wi_max_depth(const cp_world *w);
/// Overlap accepted during a simulation before a step is refused.
CPW_HIDDEN double cp_wi_pen_limit(const cp_world *w);
/// Contacts of the state a step reached, its overlap settled; *moved: 1
/// when the positions were projected.
CPW_HIDDEN cp_world_status cp_wi_settle(cp_world *w, cp_step_info *info, int *moved);
/// The viewers' record of the step's contacts with their forces.
CPW_HIDDEN cp_world_status cp_wi_record_contacts(cp_world *w, const double *force);

// ---------------------------------------------------------------------------
// stepsys.c

CPW_HIDDEN cp_world_status cp_wi_ensure(cp_world *w, int ncon, int lcp_n);
/// The world sized for ncontacts contacts (cp_world_options.reserve),
/// its pages written once (stepsys.c).
CPW_HIDDEN cp_world_status cp_wi_reserve(cp_world *w, int ncontacts, int max_lcp);
// w->ck_rng: per constraint the two ranges of dofs its columns of G can be
// nonzero in (a free body's 6, a manipulator's joint rows, a limit's one
// row; lo = hi: none). Returns 0, -1 when out of memory.
CPW_HIDDEN int cp_wi_con_ranges(cp_world *w);
CPW_HIDDEN cp_world_status cp_wi_build(cp_world *w, stepsys *s);
CPW_HIDDEN void cp_wi_stepsys_free(cp_world *w, stepsys *s);
CPW_HIDDEN cp_world_status cp_wi_accel(cp_world *w, stepsys *s, const double *c,
                          double *udot);
CPW_HIDDEN void cp_wi_get_u(const cp_world *w, double *u);
CPW_HIDDEN void cp_wi_set_u(cp_world *w, const double *u);
CPW_HIDDEN void cp_wi_move(cp_world *w, const double *u, double h);

// ---------------------------------------------------------------------------
// lcp.c

/// The world's solver options for a call made now, certify's time limit
/// cut to what is left before the deadline. Returns -1 (and marks the step
/// w->deadline_hit) when the deadline has passed: no such call is made.
CPW_HIDDEN int cp_wi_solve_options_now(cp_world *w, cp_solve_options *so);
CPW_HIDDEN int cp_wi_solve_lcp(cp_world *w, int n, int *piv, cp_lcp_info *info);
/// The friction LCP of lcp_setup (size m, M formed by cp_wi_lcp_fill) solved
/// cold, a Lemke answer with z below -1e-11 max(1, |q|_inf) cleaned up by
/// principal pivots (lcp.c, friction_cleanup). 0 when solved.
CPW_HIDDEN int cp_wi_solve_friction_cold(cp_world *w, int m, int *piv, cp_lcp_info *info);
CPW_HIDDEN int cp_wi_solve_friction(cp_world *w, int m, int *piv, int *warm_used,
                       cp_lcp_info *info);
CPW_HIDDEN void cp_wi_extract(cp_world *w, const double *A, const double *b, int ns,
                 const int *sel);
CPW_HIDDEN int cp_wi_lcp_setup(cp_world *w, int ns);
CPW_HIDDEN void cp_wi_lcp_fill(cp_world *w, int m);
CPW_HIDDEN void cp_wi_lcp_forces(cp_world *w, int ns, double *c);
CPW_HIDDEN void cp_wi_all_rolling(cp_world *w, int ns, const int *sel);
CPW_HIDDEN void cp_wi_scatter(cp_world *w, int ns, const int *sel, const double *c,
                 double *cfull);
// One column of the friction LCP's M (lcp.c's lcp_column forms it in
// full, warmsparse.c on its nonzero rows, with these same operations):
// unknown col < ns + 4 nr (a c_n, or a corner beta of rolling constraint
// k0) reads the contact-space columns an (c_n only), at, ao of Asel.
typedef struct {
  const double *an, *at, *ao;
  double ct, co, s0, s1;
  int k0;
} cp_wi_colsrc;

// The corner directions of the pyramid |c_t| <= mu c_n, |c_o| <= mu c_n:
// its four edges are mu c_n (+-1, +-1) in (t, o).
static const double cp_wi_corner[4][2] = {{1, 1}, {1, -1}, {-1, 1}, {-1, -1}};

static inline __attribute__((always_inline)) void
cp_wi_colsrc_init(const cp_world *w, int col, cp_wi_colsrc *c) {
  const int ns = w->lns, m3 = 3 * ns;
  c->ct = c->co = c->s0 = c->s1 = 0;
  c->an = NULL;
  if (col < ns) {
    c->k0 = col;
    const cp_pyramid_contact *p = &w->pc[col];
    c->ct = p->sliding ? -p->d[0] : 0;
    c->co = p->sliding ? -p->d[1] : 0;
    c->an = w->Asel + (size_t)(3 * col) * m3;
    c->at = c->an + m3;
  } else {
    c->k0 = w->order[(col - ns) / 4];
    const int i = (col - ns) % 4;
    c->s0 = cp_wi_corner[i][0];
    c->s1 = cp_wi_corner[i][1];
    c->at = w->Asel + (size_t)(3 * c->k0 + 1) * m3;
  }
  c->ao = c->at + m3;
}

// The column's contact-space entries at constraint k: normal cn and the
// tangential a, b (the corner rows read a + b, a - b, -a + b, -a - b).
static inline __attribute__((always_inline)) void
cp_wi_colsrc_at(const cp_wi_colsrc *c, int k, double *cn, double *a, double *b) {
  const double *an = c->an, *at = c->at, *ao = c->ao;
  if (an) {
    const double ct = c->ct, co = c->co;
    *cn = an[3 * k] + ct * at[3 * k] + co * ao[3 * k];
    *a = an[3 * k + 1] + ct * at[3 * k + 1] + co * ao[3 * k + 1];
    *b = an[3 * k + 2] + ct * at[3 * k + 2] + co * ao[3 * k + 2];
  } else { // the +-1 products written as signs (exact: the same bits)
    const double s0 = c->s0, s1 = c->s1;
    *cn = (s0 > 0 ? at[3 * k] : -at[3 * k]) + (s1 > 0 ? ao[3 * k] : -ao[3 * k]);
    *a = (s0 > 0 ? at[3 * k + 1] : -at[3 * k + 1]) + (s1 > 0 ? ao[3 * k + 1] : -ao[3 * k + 1]);
    *b = (s0 > 0 ? at[3 * k + 2] : -at[3 * k + 2]) + (s1 > 0 ? ao[3 * k + 2] : -ao[3 * k + 2]);
  }
}

// A support point's c_n (planar.c) is known: fix_scale fixn. lcp_setup
// moves what it contributes to the other rows (a sliding point's -d c_n,
// a sticking point's mu c_n in its lambda row) into q, and its column of M
// is the unit column of its own row (zero in A: its normal is the planar
// constraint's), whose q is minus the known value: 0 <= c_n _|_ c_n -
// fix_scale fixn >= 0. 1 when col is such a column.
static inline int cp_wi_fixed_col(const cp_world *w, int col) {
  return w->nsup && col < w->lns && w->cons[w->sel[col]].contact == CP_CON_SUPPORT;
}

// The compliance's terms of the column (lcp.c, "Compliance"): 1 when
// add[0] goes to the c_n row of col, 4 when add[0..3] go to k0's four
// corner rows, 0 when none.
static inline __attribute__((always_inline)) int
cp_wi_colsrc_comp(const cp_world *w, int col, const cp_wi_colsrc *c, double add[4]) {
  const double kap = w->opt.compliance;
  // Joint limits get no compliance: a limit is one constraint on one
  // coordinate (nothing to spread), and it holds to rounding. (A support
  // point's c_n column never comes here: cp_wi_fixed_col.)
  if (c->an && w->cons[w->sel[col]].contact < 0) return 0;
  if (!(kap > 0)) return 0;
  if (c->an) {
    add[0] = kap * c->an[3 * col];
    return 1;
  }
  const int m3 = 3 * w->lns;
  const double *a = w->Asel + (size_t)(3 * c->k0) * m3 + 3 * c->k0;
  const double att = kap * a[m3 + 1], aoo = kap * a[2 * m3 + 2];
  for (int e = 0; e < 4; ++e)
    add[e] = cp_wi_corner[e][0] * c->s0 * att + cp_wi_corner[e][1] * c->s1 * aoo;
  return 4;
}

// The warm basis's solve (lcp.c, shared with warmsparse.c): below
// CP_WORLD_SMALL_LU a small dense LU, above it a band or LAPACK's LU
// (band[]: the band's widths, or -1); nonbasic rows accepted at w_i >=
// -CP_WORLD_WARM_W s_i (s_i the row's scale: far inside the solution
// check's rel_tol, 1e-6; an ill-conditioned stack basis leaves 1e-11 of the
// row's terms); at most CP_WORLD_WARM_PIVOTS principal pivots.
#define CP_WORLD_SMALL_LU 48
#define CP_WORLD_WARM_W 1e-10
#define CP_WORLD_WARM_PIVOTS 16
CPW_HIDDEN int cp_wi_lu_factor(int k, double *A, lapack_int *piv, int band[2]);
// The small LU's row interchanges (piv[j]: the row swapped with j at step
// j) applied to x, as the solves' first step.
static inline __attribute__((always_inline)) void cp_wi_lu_permute(int k, const lapack_int *piv,
                                                                  double *x) {
  for (int j = 0; j < k; ++j)
    if (piv[j] != j) {
      double t = x[j];
      x[j] = x[piv[j]];
      x[piv[j]] = t;
    }
}
CPW_HIDDEN int cp_wi_lu_solve(int k, const double *A, const lapack_int *piv,
                              const int band[2], double *x);
// Steps of the warm start shared by lcp.c's dense passes and warmsparse.c
// (z_B in zb[0..k), the basic unknowns in w->zidx, increasing).
// The warm basis's unknowns into w->zidx (their count in *k); returns the
// tolerance of z_B >= -tol, 1e-11 max(1, |q|_inf).
static inline __attribute__((always_inline)) double cp_wi_warm_basis(cp_world *w, int n, int *k) {
  *k = 0;
  for (int i = 0; i < n; ++i)
    if (w->basis[i]) w->zidx[(*k)++] = i;
  double qmax = 1;
  for (int i = 0; i < n; ++i) qmax = MAXD(qmax, fabs(w->q[i]));
  return 1e-11 * qmax;
}

// z_B += r (the refinement); returns the basic position of the most
// negative z_b below -tol, -1 when none, -2 when one is not finite.
static inline __attribute__((always_inline)) int cp_wi_warm_refine(double *zb, const double *r,
                                                                   int k, double tol) {
  int worst = -1;
  for (int a = 0; a < k; ++a) {
    zb[a] += r[a];
    if (!isfinite(zb[a])) return -2;
    if (!(zb[a] >= -tol) && (worst < 0 || zb[a] < zb[worst])) worst = a;
  }
  return worst;
}

// Basic position at leaves the basis (zidx and zb shifted down over it).
static inline __attribute__((always_inline)) void cp_wi_warm_leave(cp_world *w, double *zb,
                                                                   int k, int at) {
  w->basis[w->zidx[at]] = 0;
  for (int b = at; b + 1 < k; ++b) {
    w->zidx[b] = w->zidx[b + 1];
    zb[b] = zb[b + 1];
  }
}

// z_B clamped to >= 0 (returns its largest), and w = q, its scales |q|
// (n rows) as the start of w = M_B z_B + q.
static inline __attribute__((always_inline)) double
cp_wi_warm_clamp(const cp_world *w, int n, int k, double *zb, double *r, double *sc) {
  double zmax = 0;
  for (int a = 0; a < k; ++a) {
    zb[a] = zb[a] > 0 ? zb[a] : 0;
    zmax = MAXD(zmax, zb[a]);
  }
  for (int i = 0; i < n; ++i) {
    r[i] = w->q[i];
    sc[i] = fabs(w->q[i]);
  }
  return zmax;
}

// Unknown i enters the basis of k at the position that keeps zidx
// increasing (those after it shifted up); returns that position.
static inline __attribute__((always_inline)) int cp_wi_warm_enter(cp_world *w, int k, int i) {
  int at = k;
  while (at > 0 && w->zidx[at - 1] > i) {
    w->zidx[at] = w->zidx[at - 1];
    --at;
  }
  w->zidx[at] = i;
  w->basis[i] = 1;
  return at;
}

// The warm start's row check, once w = M_B z_B + q and its row scales sc
// are formed (n rows): a basic row must have |w_i| <= rel sc_i, a nonbasic
// one w_i >= -CP_WORLD_WARM_W sc_i. A row that fails is tried again with
// the rounding allowance ulp |M_iB|_1 added to its tolerance, the row sum
// given by l1(ctx, i) (lcp.c forms it from the dense basic columns row by
// row, warmsparse.c from its sparse columns for every row at once): a row
// that reads only variables that are 0 up to the solve's noise has a scale
// of that noise and would otherwise fail (or, nonbasic, pivot) on rounding
// alone. Returns the nonbasic row to enter (the most negative w_i / sc_i),
// -1 when the basis is accepted, -2 when a basic row is off (the solve
// itself) or a value is not finite. l1 is called only for failing rows, in
// increasing i.
typedef double (*cp_wi_rowsum)(void *ctx, int i);
static inline __attribute__((always_inline)) int
cp_wi_warm_check(const cp_world *w, int n, const double *r, const double *sc, double rel,
                 double ulp, cp_wi_rowsum l1, void *ctx) {
  const unsigned char *basis = w->basis;
  int enter = -1;
  double most = 0;
  for (int i = 0; i < n; ++i) {
    const double wi = r[i], ti = rel * sc[i];
    if (!isfinite(wi) || !isfinite(ti)) return -2;
    const int basic = basis[i];
    if (basic ? fabs(wi) <= ti : wi >= -CP_WORLD_WARM_W * sc[i]) continue;
    const double allow = ulp * l1(ctx, i);
    if (basic) {
      if (!(fabs(wi) <= ti + allow)) return -2;
    } else if (!(wi >= -(CP_WORLD_WARM_W * sc[i] + allow)) && wi / sc[i] < most) {
      most = wi / sc[i];
      enter = i;
    }
  }
  return enter;
}

/// The end of an accepted warm basis (k basic unknowns in w->zidx, z_B in
/// z[0..k), w in w->w): basic rows' w reported as residual and set to 0, z
/// scattered, info filled.
CPW_HIDDEN void cp_wi_warm_finish(cp_world *w, int n, int k, int pivots, cp_lcp_info *info);

// ---------------------------------------------------------------------------
// islands.c

/// The friction LCP of lcp_setup (size m) solved group by group when its
/// constraints fall into several independent groups (islands.c): 0 when
/// solved (z, w, basis as cp_wi_solve_friction leaves them), 1 when not
/// split or not solved so (the world's LCP state untouched: solve it whole).
CPW_HIDDEN int cp_wi_solve_islands(cp_world *w, int m, int *piv, int *warm_used,
                                   cp_lcp_info *info);
/// The same split for a problem solved cold (the acceleration stepper's
/// impact LCP, M not formed): each group by cp_wi_solve_friction_cold.
CPW_HIDDEN int cp_wi_solve_islands_cold(cp_world *w, int m, int *piv, cp_lcp_info *info);
/// How many impact LCPs were solved split so far (tests).
CPW_HIDDEN long cp_wi_islands_cold_taken(const cp_world *w);
CPW_HIDDEN void cp_wi_islands_free(cp_world *w);
/// The most groups an LCP was split into since the last call (0: none);
/// resets the count (cp_world_step's info.islands).
CPW_HIDDEN int cp_wi_islands_taken(cp_world *w);
/// The moving parts constraint c acts on (a free body's index, a
/// manipulator's n_bodies + index; -1: none or fixed), the nodes of the
/// coupling islands and warmsparse.c read.
CPW_HIDDEN void cp_wi_con_nodes(const cp_world *w, const con *c, int nd[2]);

// ---------------------------------------------------------------------------
// sparse.c

/// LU of the k x k column-major A when it is banded narrowly enough to pay
/// (then A holds LAPACK's band factor, band[] its widths kl, ku; returns 0),
/// 1 when it is not (A untouched, band[] = -1), -1 when singular.
CPW_HIDDEN int cp_wi_band_factor(int k, double *A, lapack_int *piv, int band[2]);
/// Whether widths kl, ku are narrow enough for the band LU at size k.
CPW_HIDDEN int cp_wi_band_fits(int k, int kl, int ku);
/// The band LU of A already in LAPACK's band storage (ldab = 2 kl + ku +
/// 1); band[] = kl, ku. 0, or -1 (singular).
CPW_HIDDEN int cp_wi_band_factor_stored(int k, int kl, int ku, double *A, lapack_int *piv,
                                        int band[2]);
/// lcp.c's small dense LU (k <= CP_WORLD_SMALL_LU) of the column-major A,
/// the same bits, with the operations on entries that stay zero skipped:
/// rl[i] (cl[j]) the last column (row) holding a nonzero in row i (column
/// j), -1 for none. A must hold no -0 (the skipped operations could turn a
/// -0 into +0). 0, or -1 when a pivot is zero. On 0 the factor's extents
/// for cp_wi_lu_solve_ext: cl[j] the first row of U's column j, le[j] (k
/// ints) the last row of L's column j that can be nonzero.
CPW_HIDDEN int cp_wi_lu_factor_ext(int k, double *A, lapack_int *piv, int *rl, int *cl,
                                   int *le);
/// lcp.c's small LU solve of cp_wi_lu_factor_ext's factor (uf: its cl, le),
/// the same bits, x overwritten by the solution.
CPW_HIDDEN void cp_wi_lu_solve_ext(int k, const double *A, const lapack_int *piv,
                                   const int *uf, const int *le, double *x);

// ---------------------------------------------------------------------------
// warmsparse.c

/// lcp.c's warm_accept on sparse columns for a large LCP of n unknowns:
/// 1 accepted (answer in z, w, info), 0 not (as warm_accept), -1 when it
/// does not apply (small or dense: warm_accept's dense passes then run).
CPW_HIDDEN int cp_wi_warm_accept_sparse(cp_world *w, int n, cp_lcp_info *info, int *pivots);
// r[ri[t]] += v[t] zv and sc[ri[t]] += |v[t]| |zv| for t < len, t
// increasing (warmsparse.c's pass forming w = M z + q and its row
// scales). Rows in [lo, hi) (a friction LCP's corner rows) must come in
// whole runs of four consecutive rows, in order (ri[t] .. ri[t] + 3 at
// places t .. t + 3): those are taken two at a time, each entry by the
// same operations. r and sc do not overlap.
CPW_HIDDEN void cp_wi_scatter_runs(int len, const int *ri, const double *v, int lo, int hi,
                                   double zv, double *r, double *sc);
CPW_HIDDEN void cp_wi_sparse_free(cp_world *w);
/// lcp.c's remembered LU of the small warm basis on (1, the default) or
/// off, and the factorisations it saved so far (the tests' comparison).
CPW_HIDDEN void cp_wi_lu_memo_enable(cp_world *w, int on);
CPW_HIDDEN long cp_wi_lu_memo_hits(const cp_world *w);
/// The warm start's pass w = M_B z_B + q over each column's one nonzero
/// lambda row only (1, the default) or over every row, and how many passes
/// took the short way so far (the tests' comparison).
CPW_HIDDEN void cp_wi_lambda_skip_enable(cp_world *w, int on);
CPW_HIDDEN long cp_wi_lambda_skip_taken(const cp_world *w);
/// Whether warm bases may be solved on sparse columns (default 1); the
/// tests turn it off to compare with the dense passes.
CPW_HIDDEN void cp_wi_sparse_enable(cp_world *w, int on);
/// How many warm starts were tried on sparse columns (the tests' check).
CPW_HIDDEN long cp_wi_sparse_taken(const cp_world *w);
/// Whether the sparse warm start may keep the last LCP's neighbour lists
/// for an LCP of the same structure (default 1), and how many times it
/// did (the tests' comparison).
CPW_HIDDEN void cp_wi_sparse_memo_enable(cp_world *w, int on);
CPW_HIDDEN long cp_wi_sparse_memo_hits(const cp_world *w);
/// x := A^-1 x with a band factor of cp_wi_band_factor; 0, or -1.
CPW_HIDDEN int cp_wi_band_solve(int k, const double *A, const lapack_int *piv,
                                const int band[2], double *x);

// ---------------------------------------------------------------------------
// warm.c

CPW_HIDDEN void cp_wi_warm_commit(cp_world *w);
CPW_HIDDEN void cp_wi_lcp_warm(cp_world *w, int ns, const int *sel, int kind, int m);
CPW_HIDDEN int cp_wi_lcp_record(cp_world *w, int ns, const int *sel, int kind);
CPW_HIDDEN memo_slot *cp_wi_memo_find(cp_world *w, int ns, int m, uint64_t *h, int *hit);
CPW_HIDDEN void cp_wi_memo_keep(cp_world *w, memo_slot *e, uint64_t h, int ns, int m);

// ---------------------------------------------------------------------------
// steppers.c

CPW_HIDDEN cp_world_status cp_wi_step_velocity(cp_world *w, stepsys *s, cp_step_info *info);
CPW_HIDDEN cp_world_status cp_wi_step_acceleration(cp_world *w, stepsys *s,
                                      cp_step_info *info);
CPW_HIDDEN cp_world_status cp_wi_step_quasistatic(cp_world *w, cp_step_info *info);
CPW_HIDDEN cp_world_status cp_wi_project(cp_world *w, stepsys *s, int ns, const int *sel,
                            const double *gp, cp_step_info *info);

// ---------------------------------------------------------------------------
// planar.c

/// Marks the planar bodies' locked coordinates driven (zero acceleration);
/// CP_WORLD_BAD_INPUT (err filled) for the quasistatic stepper or a
/// velocity out of a body's plane.
CPW_HIDDEN cp_world_status cp_wi_planar_init(cp_world *w, cp_error *err);
/// CP_WORLD_BAD_INPUT (w->msg) when the state x (NULL: the world's) moves a
/// planar body out of its plane.
CPW_HIDDEN cp_world_status cp_wi_planar_check_state(cp_world *w, const double *x);
/// Writes the w->nsup support constraints of the current state at out.
CPW_HIDDEN void cp_wi_support_cons(const cp_world *w, con *out);
/// Their columns of G (nu each, 3 per constraint, zeroed first), velocity
/// products k and velocities G^T u, for constraint j = c.
CPW_HIDDEN void cp_wi_support_columns(const cp_world *w, const con *c, double *g,
                                      double *k, double *v);

// ---------------------------------------------------------------------------
// worldcheck.c

CPW_HIDDEN cp_world_status cp_wi_grow_check(cp_world *w);
CPW_HIDDEN cp_world_status cp_wi_check_step(cp_world *w, stepsys *s, int accel_k);
CPW_HIDDEN int cp_wi_limit_crossed(const cp_world *w);

#endif
