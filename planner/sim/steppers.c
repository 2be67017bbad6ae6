// The steppers (planner/sim/world.h, docs/simulate.md): acceleration
// (impulses, the acceleration LCP with speculative rows, semi-implicit
// Euler, drift correction), velocity (Stewart-Trinkle / Anitescu-Potra) and
// quasistatic, over the system of stepsys.c and the LCP of lcp.c.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/quasistatic.h"
#include "models/grow.h"
#include "planner/sim/stepcheck.h"
#include "planner/sim/world_impl.h"

// ---------------------------------------------------------------------------
// Steppers

static int velocity_sliding_solve(cp_world *w, const stepsys *s, int ns,
                                  cp_step_info *info, int *warm);

// The velocity stepper (also the acceleration stepper's fallback).
cp_world_status cp_wi_step_velocity(cp_world *w, stepsys *s,
                                     cp_step_info *info) {
  const double h = w->opt.dt;
  const int n3 = 3 * w->ncon, ns = w->ncon;
  double *bv = w->cfull; // velocity of free motion + gap/h on the normals
  for (int i = 0; i < n3; ++i) bv[i] = w->vc[i] + h * (s->cs.b[i] - w->kx[i]);
  for (int j = 0; j < w->ncon; ++j) bv[3 * j] += w->cons[j].gap / h;
  for (int j = 0; j < ns; ++j) w->sel[j] = j;
  w->fix_scale = h; // support points: impulse h fixn (planar.c)
  const double t0 = cp_wi_tic(w);
  cp_wi_extract(w, s->cs.A, bv, ns, w->sel);
  cp_wi_all_rolling(w, ns, w->sel);
  cp_lcp_info li;
  int warm = 0, m;
  if (w->opt.velocity_sliding) { // (on by default; 0: the pyramid's bits)
    m = velocity_sliding_solve(w, s, ns, info, &warm);
    if (m == -2) return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
    if (m > 0) goto solved;
    cp_wi_all_rolling(w, ns, w->sel); // none slides, or a solve failed
    warm = 0;
  }
  m = cp_wi_lcp_setup(w, ns);
  if (m < 0) return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
  cp_wi_lcp_warm(w, ns, w->sel, 1, m);
  info->lcp_solves++;
  if (cp_wi_solve_friction(w, m, &info->pivots, &warm, &li)) {
    // (Out of memory is not retried: the step fails with it.)
    if (li.status == CP_LCP_NOMEM) return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
    // The LCP always has a solution; a Lemke failure is numerical. Let
    // the auto strategy (FIP, more restarts, the MIP) have it -- without
    // its first step when that is the Lemke run that just failed: auto
    // would repeat it (same data, same path) before FIP, and on a 10-box
    // stack that repeat was two thirds of the velocity stepper's time.
    // FIP alone first gives auto's answer bit for bit when it solves.
    cp_solve_options so;
    if (cp_wi_solve_options_now(w, &so))
      return cp_wi_fail(w, CP_WORLD_SOLVER_FAILED,
                        li.status == CP_LCP_TIME_LIMIT
                            ? "t = %.9g: the velocity LCP (size %d) was %s"
                            : "t = %.9g: the velocity LCP (size %d) was not "
                              "solved (%s), and the deadline had passed: no "
                              "other solver was tried",
                        w->t, m, li.reason);
    int lemke_failed = so.solver == CP_SOLVER_LEMKE;
    so.solver = lemke_failed ? CP_SOLVER_FIP : CP_SOLVER_AUTO;
    info->lcp_solves++;
    cp_lcp_status fs =
        cp_lcp_solve(w->ws, m, w->M, w->q, &so, w->z, w->w, &li, NULL);
    if (fs != CP_LCP_SOLVED && lemke_failed) {
      so.solver = CP_SOLVER_AUTO;
      fs = cp_lcp_solve(w->ws, m, w->M, w->q, &so, w->z, w->w, &li, NULL);
    }
    if (fs == CP_LCP_NOMEM) return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
    if (fs != CP_LCP_SOLVED) {
      // Data that overflowed (efforts or speeds near DBL_MAX) is not a
      // solver's failure: the state's numbers are what went wrong.
      int finite = 1;
      for (int i = 0; i < m && finite; ++i) finite = isfinite(w->q[i]);
      for (size_t i = 0; i < (size_t)m * (size_t)m && finite; ++i)
        finite = isfinite(w->M[i]);
      if (!finite)
        return cp_wi_fail(w, CP_WORLD_NONFINITE,
                    "t = %.9g: the velocity LCP (size %d) has data that is not "
                    "finite: the efforts or velocities overflowed (%s)",
                    w->t, m, li.reason);
    }
    if (fs != CP_LCP_SOLVED)
      return cp_wi_fail(w, CP_WORLD_SOLVER_FAILED,
                  "t = %.9g: the velocity LCP (size %d) was not solved: %s",
                  w->t, m, li.reason);
    for (int i = 0; i < m; ++i) w->basis[i] = w->z[i] > 0;
  }
solved:
  cp_wi_toc(w, &w->prof.solve, t0);
  if (w->opt.stepper == CP_STEPPER_VELOCITY) info->warm_started = warm;
  if (cp_wi_lcp_record(w, ns, w->sel, 1)) return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
  cp_wi_lcp_forces(w, ns, w->c);
  cp_wi_scatter(w, ns, w->sel, w->c, w->cfull);
  for (int i = 0; i < n3; ++i) {
    w->ck_p[i] += w->cfull[i];
    w->cfull[i] /= h; // impulse over the step -> force
  }
  cp_world_status st = cp_wi_accel(w, s, w->cfull, w->udot);
  if (st != CP_WORLD_OK) return st;
  cp_wi_get_u(w, w->u0);
  for (int i = 0; i < w->nu; ++i) w->u0[i] += h * w->udot[i];
  cp_wi_set_u(w, w->u0);
  memcpy(w->ck_u1, w->u0, sizeof(double) * (size_t)w->nu);
  cp_wi_move(w, w->u0, h);
  return cp_wi_record_contacts(w, w->cfull);
}

static int touching(const cp_world *w, const con *c) {
  return c->gap <= w->sc.touch_tolerance;
}

// The compliance's settling allowance of constraint j (m): the hold and
// drift tolerances of the acceleration stepper are CP_WORLD_HOLD plus it.
// Under load a contact settles kappa A_nn c_n h^2 deep per step and is held
// there (docs/simulate.md, "Compliance"); at the foot of a tall stack that
// is past the fixed 1e-8 m (at 5 ms from about 20 boxes), and the contact,
// no longer held, sank by that much every step and was projected back by a
// cold drift LCP on every step. The bound takes c_n <= the whole weight W
// of the scene's moving parts: 2 kappa h^2 W A_nn, stateless, so that
// replays and restored states decide alike; in a 1 kg scene at 5 ms it is
// about 2e-9 m. Limits (no compliance) get none. *wk caches 2 kappa h^2 W
// over a step (< 0: not yet formed); only gaps deeper than CP_WORLD_HOLD
// need it (hold_deeper), so a shallow step never forms it.
static double hold_tol(const cp_world *w, const stepsys *s, double *wk, int j) {
  if (w->cons[j].contact < 0) return CP_WORLD_HOLD;
  if (*wk < 0) {
    const cp_scene *sc = &w->sc;
    double m = 0;
    for (int i = 0; i < sc->n_bodies; ++i)
      if (!sc->bodies[i].fixed) m += sc->bodies[i].mass;
    for (int i = 0; i < sc->n_manips; ++i)
      for (int k = 0; k < sc->manips[i].n; ++k) m += sc->manips[i].joints[k].link.mass;
    const double *g = sc->gravity, h = w->opt.dt;
    *wk = 2 * w->opt.compliance * h * h * m * sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
  }
  const size_t d = 3 * (size_t)j;
  return CP_WORLD_HOLD + *wk * s->cs.A[d + d * 3 * (size_t)w->ncon];
}

// Whether gap g of constraint j is held (within its hold tolerance).
static int held(const cp_world *w, const stepsys *s, double *wk, int j, double g) {
  return g >= -CP_WORLD_HOLD || g >= -hold_tol(w, s, wk, j);
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
// below -CP_WORLD_DRIFT_TOL (plus its settling allowance, hold_tol) the
// positions are projected back along the
// normals: delta = H^-1 G_n lambda, 0 <= lambda _|_ A_nn lambda + g >= 0
// (velocities untouched, so rest stays rest and no kinetic energy is made).
static cp_world_status drift(cp_world *w, stepsys *s, int ns, const int *sel,
                             const double *vn_new, double *wk, cp_step_info *info) {
  const double h = w->opt.dt;
  int deep = 0;
  double gs[1024], *gp = ns <= 1024 ? gs : malloc(sizeof(double) * (size_t)ns);
  if (!gp) return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
  for (int k = 0; k < ns; ++k) {
    gp[k] = w->cons[sel[k]].gap + h * vn_new[k];
    deep |= gp[k] < -CP_WORLD_DRIFT_TOL &&
            gp[k] < -(CP_WORLD_DRIFT_TOL - CP_WORLD_HOLD + hold_tol(w, s, wk, sel[k]));
  }
  cp_world_status st = !deep ? CP_WORLD_OK : cp_wi_project(w, s, ns, sel, gp, info);
  if (gp != gs) free(gp);
  return st;
}

// Moves the positions by delta = H^-1 G_n lambda, 0 <= lambda _|_ A_nn
// lambda + g >= 0, for the constraints sel[0..ns) with gaps g (s: the system
// of the positions being moved); the potential energy this adds is taken
// from the kinetic energy.
cp_world_status cp_wi_project(cp_world *w, stepsys *s, int ns,
                               const int *sel, const double *gp,
                               cp_step_info *info) {
  cp_world_status st = cp_wi_ensure(w, w->ncon, ns);
  if (st != CP_WORLD_OK) return st;
  const int n3 = 3 * w->ncon;
  for (int a = 0; a < ns; ++a) {
    for (int b = 0; b < ns; ++b)
      w->M[a + (size_t)b * ns] =
          s->cs.A[3 * sel[a] + (size_t)(3 * sel[b]) * (size_t)n3];
    w->q[a] = gp[a];
    // A support point's row is zero (its normal is the planar
    // constraint's): lambda = 0 there.
    if (w->cons[sel[a]].contact == CP_CON_SUPPORT) w->M[a + (size_t)a * ns] = 1.0;
  }
  cp_lcp_info li;
  info->lcp_solves++;
  const double t0 = cp_wi_tic(w);
  const int unsolved = cp_wi_solve_lcp(w, ns, &info->pivots, &li);
  cp_wi_toc(w, &w->prof.solve, t0);
  if (unsolved) return CP_WORLD_OK;
  double worst = 0; // the deepest predicted gap (the check's drift depth)
  for (int k = 0; k < ns; ++k)
    if (gp[k] < worst) worst = gp[k];
  w->ck_drift = -worst;
  cp_world_get_state(w, w->ck_xm); // before the projection (the check)
  // delta = H^-1 G_n lambda: the difference of two accelerations.
  memset(w->c, 0, sizeof(double) * (size_t)n3);
  for (int k = 0; k < ns; ++k) w->c[3 * sel[k]] = w->z[k];
  double *d0 = w->du;
  if ((st = cp_wi_accel(w, s, w->c, w->udot)) != CP_WORLD_OK) return st;
  memset(w->c, 0, sizeof(double) * (size_t)n3);
  if ((st = cp_wi_accel(w, s, w->c, d0)) != CP_WORLD_OK) return st;
  for (int i = 0; i < w->nu; ++i) d0[i] = w->udot[i] - d0[i];
  for (int r = 0; r < w->nl; ++r)
    if (w->driven[6 * w->nobj + r]) d0[6 * w->nobj + r] = 0;
  // The projection must not make energy: what it adds to the potential
  // energy is taken from the kinetic energy (velocities scaled), so that a
  // step without input never gains energy (at rest there is none to take,
  // and the overlap removed there is at rounding level).
  double e0 = cp_wi_energy_of(w);
  cp_wi_move(w, d0, 1.0);
  double rise = cp_wi_energy_of(w) - e0;
  if (rise > 0) {
    cp_wi_get_u(w, w->u0);
    double ke = 0.5 * kinetic(w, s, w->u0);
    double f = ke > rise ? sqrt((ke - rise) / ke) : 0.0;
    if (ke > 0) {
      for (int i = 0; i < w->nu; ++i) w->u0[i] *= f;
      cp_wi_set_u(w, w->u0);
    }
  }
  return CP_WORLD_OK;
}

// The selected constraints' neighbours: for each position k of sel, the
// moving parts (cp_wi_con_nodes) its constraint acts on, nd[2k], nd[2k+1]
// (-1: none), and per moving part the positions acting on it, increasing:
// list[start[n] .. start[n+1]). Two constraints that share no moving part
// have a zero entry in A (H is block diagonal over the parts), so a sum
// down a column of A over every row is the sum over the column's
// neighbours. (The cost of a step's sums of A c goes from the square of the
// constraints to their number times the contacts per body.)
// A small selection (at most CP_WORLD_NBR_DENSE constraints: a stack of 4
// boxes) has no lists (nd NULL): its sums run over every row (dense, 3 ns
// rows), which costs less than making the lists and merging them there
// (a 3-box stack's 12 constraints: 4.4 thousand instructions a step for
// the lists and their merges).
typedef struct nbr {
  int *nd, *start, *list;
  int dense; // > 0: no lists, the sums over every row (that many)
} nbr;

#define CP_WORLD_NBR_DENSE 16

static int nbr_build(cp_world *w, int ns, const int *sel, nbr *nb) {
  nb->dense = ns <= CP_WORLD_NBR_DENSE ? 3 * ns : 0;
  if (nb->dense) {
    nb->nd = nb->start = nb->list = NULL;
    return 0;
  }
  const int nn = w->sc.n_bodies + w->sc.n_manips;
  if (cp_grow((void **)&w->nb_buf, &w->nb_cap, 4 * ns + nn + 1, sizeof(int))) return -1;
  nb->nd = w->nb_buf;
  nb->start = nb->nd + 2 * ns;
  nb->list = nb->start + nn + 1;
  int *st = nb->start;
  memset(st, 0, sizeof(int) * (size_t)(nn + 1));
  for (int k = 0; k < ns; ++k) {
    int *nd = nb->nd + 2 * k;
    cp_wi_con_nodes(w, &w->cons[sel[k]], nd);
    if (nd[1] == nd[0]) nd[1] = -1;
    for (int t = 0; t < 2; ++t)
      if (nd[t] >= 0) ++st[nd[t] + 1];
  }
  for (int n = 0; n < nn; ++n) st[n + 1] += st[n];
  for (int k = 0; k < ns; ++k) // st[n] runs to the end of part n's list
    for (int t = 0; t < 2; ++t)
      if (nb->nd[2 * k + t] >= 0) nb->list[st[nb->nd[2 * k + t]]++] = k;
  for (int n = nn; n > 0; --n) st[n] = st[n - 1];
  st[0] = 0;
  return 0;
}

// a + sum_i col[i] c[i] over every row i of an Asel column of position k
// (col: the column), i increasing, the zero rows left out: the rows of
// k's neighbours (the two parts' lists merged). The same terms in the same
// order as the sum over every row, so the same value (each left-out term is
// a zero). A dense nb: the sum over every row.
static double nbr_dot(const nbr *nb, int k, const double *col, const double *c, double a) {
  if (nb->dense) {
    for (int i = 0; i < nb->dense; ++i) a += col[i] * c[i];
    return a;
  }
  const int *nd = nb->nd + 2 * k;
  const int *p = nb->list, *pe = p, *q = p, *qe = p;
  if (nd[0] >= 0) p = nb->list + nb->start[nd[0]], pe = nb->list + nb->start[nd[0] + 1];
  if (nd[1] >= 0) q = nb->list + nb->start[nd[1]], qe = nb->list + nb->start[nd[1] + 1];
  while (p < pe || q < qe) {
    int l;
    if (q == qe || (p < pe && *p < *q)) l = *p++;
    else if (p == pe || *q < *p) l = *q++;
    else l = *p++, ++q;
    const size_t i = 3 * (size_t)l;
    a += col[i] * c[i];
    a += col[i + 1] * c[i + 1];
    a += col[i + 2] * c[i + 2];
  }
  return a;
}

// Whether the per-step check judges sliding constraint j's friction by its
// slip at the step's start (vt, vo): that slip above the check's v_tol for
// the start and end (at, ao) speeds and the friction impulse's size mu cn
// (stepcheck.h). Below it the check judges by the end slip alone, which the
// start direction need not oppose (a slip turning within the step); such a
// contact is better left to the pyramid, whose friction is found with the
// step's own velocities.
static int judged_by_start(const cp_world *w, const stepsys *s, int j, double vt, double vo,
                           double at, double ao, double mu, double cn,
                           const cp_stepcheck_options *ck) {
  const size_t n3 = 3 * (size_t)w->ncon;
  const double s0 = sqrt(vt * vt + vo * vo), s1 = sqrt(at * at + ao * ao);
  const double att = s->cs.A[(3 * j + 1) * (n3 + 1)], aoo = s->cs.A[(3 * j + 2) * (n3 + 1)];
  const double ct = w->opt.compliance * (att > aoo ? att : aoo);
  const double vtol = s->sys.tol + ck->vel_abs + ck->vel_rel * (s0 + s1) + ct * mu * cn;
  return s0 > vtol * (1 + 1e-3);
}

// The velocity LCP (y = Asel c + bs: velocities after the step) with each
// contact that slides at the step's start (tangential speed above the
// tolerance) written with the sliding substitution c_tan = -mu c_n v/|v|
// (cp_world_options.velocity_sliding; the others stay the pyramid of
// cp_wi_all_rolling). A sliding contact whose tangential velocity after the
// step would stop or reverse (v+ . v <= 0), or whose start slip is not above
// the per-step check's v_tol (stepcheck.h), is made rolling and the problem
// solved again, as the acceleration stepper does. Returns the LCP's size
// with w->z, w->basis solved; 0 when no contact slides, -1 when a solve
// failed (the caller solves the all-rolling problem), -2 out of memory.
static int velocity_sliding_solve(cp_world *w, const stepsys *s, int ns,
                                  cp_step_info *info, int *warm) {
  const double tol = s->sys.tol;
  int any = 0;
  for (int k = 0; k < ns; ++k) {
    cp_pyramid_contact *p = &w->pc[k];
    if (p->mu == 0) continue;
    const int j = w->sel[k];
    const double vt = w->vc[3 * j + 1], vo = w->vc[3 * j + 2];
    const double sp = sqrt(vt * vt + vo * vo);
    if (!(sp > tol)) continue;
    p->sliding = 1;
    p->d[0] = p->mu * vt / sp;
    p->d[1] = p->mu * vo / sp;
    any = 1;
  }
  if (!any) return 0;
  nbr nb;
  if (nbr_build(w, ns, w->sel, &nb)) return -2;
  const size_t m3 = 3 * (size_t)ns;
  const cp_stepcheck_options ck = cp_stepcheck_defaults();
  for (int pass = 0;; ++pass) {
    const int m = cp_wi_lcp_setup(w, ns);
    if (m < 0) return -2;
    cp_wi_lcp_warm(w, ns, w->sel, 1, m);
    cp_lcp_info li;
    info->lcp_solves++;
    if (cp_wi_solve_friction(w, m, &info->pivots, pass ? NULL : warm, &li))
      return li.status == CP_LCP_NOMEM ? -2 : -1;
    cp_wi_lcp_forces(w, ns, w->c);
    int changed = 0;
    for (int k = 0; k < ns && pass < 4; ++k) {
      cp_pyramid_contact *p = &w->pc[k];
      if (!p->sliding || p->mu == 0) continue;
      const int j = w->sel[k];
      const double vt = w->vc[3 * j + 1], vo = w->vc[3 * j + 2];
      // Rows 3k+1, 3k+2 of Asel c + bs, read down the columns (symmetric).
      const double *col = w->Asel + (size_t)(3 * k + 1) * m3;
      const double at = nbr_dot(&nb, k, col, w->c, w->bs[3 * k + 1]),
                   ao = nbr_dot(&nb, k, col + m3, w->c, w->bs[3 * k + 2]);
      if (at * vt + ao * vo > 0 &&
          judged_by_start(w, s, j, vt, vo, at, ao, p->mu, fabs(w->c[3 * k]), &ck))
        continue;
      p->sliding = 0;
      p->d[0] = p->d[1] = 0;
      changed = 1;
    }
    if (!changed) return m;
  }
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

// Impact problems over more constraints than this are first tried warm
// (cp_wi_step_acceleration, step 1).
#define CP_WORLD_IMPACT_WARM 21

// The acceleration stepper. Returns CP_WORLD_NEEDS_FALLBACK when a problem
// had no answer (the caller restores the state and takes a velocity step).
cp_world_status cp_wi_step_acceleration(cp_world *w, stepsys *s,
                                         cp_step_info *info) {
  const double h = w->opt.dt, tol = s->sys.tol;
  double wk = -1; // hold_tol's cache
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
  // Support points (planar.c) carry a finite force: no impulse.
  int ns = 0, any = 0;
  for (int j = 0; j < w->ncon; ++j) {
    const con *c = &w->cons[j];
    double vn = w->vc[3 * j];
    if (c->contact == CP_CON_SUPPORT) continue;
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
    const double t0 = cp_wi_tic(w);
    cp_wi_extract(w, s->cs.A, bv, ns, w->sel);
    cp_wi_all_rolling(w, ns, w->sel);
    int m = cp_wi_lcp_setup(w, ns), hit;
    if (m < 0) return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
    cp_lcp_info li;
    info->lcp_solves++;
    uint64_t key = 0;
    memo_slot *slot = cp_wi_memo_find(w, ns, m, &key, &hit);
    if (hit) {
      info->lcp_reused++;
      if (w->memo_pivots) info->pivots += slot->pivots;
    } else {
      const int pivots0 = info->pivots;
      // Independent groups (boxes landing apart in a bin) solved apart,
      // each cold. One group (or a split that failed) is solved whole: a
      // large one (past what the memo keeps) first from the basis of every
      // normal impulse and nothing else (a stack stopping a settling: rest
      // impulses, no friction) by the warm start's principal pivots
      // (cp_wi_solve_friction, which falls back to Lemke from that basis,
      // then cold); otherwise cold. Solved cold, the step after a 100-box
      // stack is put down (every contact settles into its compliance in
      // the first step and meets the second as an impact) was a Lemke run
      // of 401 pivots over 2400 unknowns.
      int unsolved = cp_wi_solve_islands_cold(w, m, &info->pivots, &li);
      if (unsolved && ns > CP_WORLD_IMPACT_WARM && w->opt.warm_start) {
        memset(w->basis, 0, (size_t)m);
        memset(w->basis, 1, (size_t)ns);
        unsolved = cp_wi_solve_friction(w, m, &info->pivots, NULL, &li);
        if (unsolved && li.status == CP_LCP_NOMEM)
          return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
      }
      if (unsolved) {
        cp_wi_lcp_fill(w, m);
        if (cp_wi_solve_friction_cold(w, m, &info->pivots, &li))
          return li.status == CP_LCP_NOMEM ? cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory") :
        cp_wi_fail(w, CP_WORLD_NEEDS_FALLBACK,
                    "t = %.9g: the impact LCP (size %d) was not solved: %s",
                    w->t, m, li.reason);
      }
      if (slot) {
        cp_wi_memo_keep(w, slot, key, ns, m);
        slot->pivots = info->pivots - pivots0;
      }
    }
    cp_wi_toc(w, &w->prof.solve, t0);
    info->impacts = 0;
    for (int k = 0; k < ns; ++k) info->impacts += w->z[k] > 0;
    cp_wi_lcp_forces(w, ns, w->c);
    cp_wi_scatter(w, ns, w->sel, w->c, w->cfull);
    for (int i = 0; i < n3; ++i) w->ck_p[i] += w->cfull[i];
    w->ck_two_phase = 1;
    // u += H^-1 G p: the difference of two accelerations.
    double *d0 = w->du;
    if ((st = cp_wi_accel(w, s, w->cfull, w->udot)) != CP_WORLD_OK) return st;
    memset(w->cfull, 0, sizeof(double) * (size_t)n3);
    if ((st = cp_wi_accel(w, s, w->cfull, d0)) != CP_WORLD_OK) return st;
    cp_wi_get_u(w, w->u0);
    for (int i = 0; i < w->nu; ++i) w->u0[i] += w->udot[i] - d0[i];
    cp_wi_set_u(w, w->u0);
    // New velocities: new b, k, sliding split.
    cp_wi_stepsys_free(w, s);
    if ((st = cp_wi_build(w, s)) != CP_WORLD_OK) return st;
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
  w->fix_scale = 1.0; // support points: force fixn (planar.c)
  for (int j = 0; j < w->ncon; ++j)
    if ((touching(w, &w->cons[j]) && w->vc[3 * j] <= tol) || closes(w, s, j) ||
        (w->all_limits && w->cons[j].contact == CP_CON_LIMIT))
      w->sel[ns++] = j;
  int m3, warm = 0, joins = 0;
  cp_lcp_info li;
  nbr nb;
again:
  // (The LCP's arrays are sized by cp_wi_lcp_setup to the problem's own
  // size, ns + 5 rolling; asking here for its bound 6 ns made a step with
  // every limit a row, 32 on the Allegro hand, grow six square workspaces
  // to 432^2 doubles on huge pages for a problem of 56.)
  m3 = 3 * ns;
  cp_wi_extract(w, s->cs.A, s->cs.b, ns, w->sel);
  if (nbr_build(w, ns, w->sel, &nb)) return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
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
    if (held(w, s, &wk, w->sel[k], c->gap)) w->bs[3 * k] += c->gap / (h * h);
  }
  for (int k = 0; k < ns; ++k) {
    int j = w->sel[k];
    const con *c = &w->cons[j];
    cp_pyramid_contact *p = &w->pc[k];
    memset(p, 0, sizeof *p);
    double vt = w->vc[3 * j + 1], vo = w->vc[3 * j + 2];
    double sp = sqrt(vt * vt + vo * vo);
    p->mu = c->contact != CP_CON_LIMIT ? c->mu : 0;
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
    const double t0 = cp_wi_tic(w);
    int m = cp_wi_lcp_setup(w, ns);
    if (m < 0) return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
    cp_wi_lcp_warm(w, ns, w->sel, 0, m);
    info->lcp_solves++;
    if (cp_wi_solve_friction(w, m, &info->pivots, pass || joins ? NULL : &warm, &li))
      return li.status == CP_LCP_NOMEM ? cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory") :
      cp_wi_fail(w, CP_WORLD_NEEDS_FALLBACK,
                  "t = %.9g: the acceleration LCP (size %d) has no solution "
                  "found (%s)",
                  w->t, m, li.reason);
    cp_wi_lcp_forces(w, ns, w->c);
    cp_wi_toc(w, &w->prof.solve, t0);
    // A sliding contact whose tangential velocity would reverse within the
    // step stops in it instead: it is made rolling (velocity-consistent)
    // and the problem solved again.
    int changed = 0;
    for (int k = 0; k < ns && pass < 4; ++k) {
      if (!w->pc[k].sliding || w->pc[k].mu == 0) continue;
      int j = w->sel[k];
      double vt = w->vc[3 * j + 1], vo = w->vc[3 * j + 2];
      // Rows 3k+1, 3k+2 of A c, read down the columns (A is symmetric).
      const double *col = w->Asel + (size_t)(3 * k + 1) * m3;
      const double at = nbr_dot(&nb, k, col, w->c, w->bs[3 * k + 1]),
                   ao = nbr_dot(&nb, k, col + m3, w->c, w->bs[3 * k + 2]);
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
  if (cp_wi_lcp_record(w, ns, w->sel, 0)) return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
  cp_wi_scatter(w, ns, w->sel, w->c, w->cfull);
  for (int i = 0; i < n3; ++i) w->ck_p[i] += h * w->cfull[i];
  if ((st = cp_wi_accel(w, s, w->cfull, w->udot)) != CP_WORLD_OK) return st;
  // Normal velocity after the step of each persistent constraint:
  // v_n + h a_n = h (A c + b + v_n / h)_n (the shifted rows above).
  double vns[1024], *vn = ns <= 1024 ? vns : malloc(sizeof(double) * (size_t)ns);
  if (!vn) return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
  for (int k = 0; k < ns; ++k) {
    // Row 3k of A c, read down column 3k (A is symmetric: the same terms).
    const double a = nbr_dot(&nb, k, w->Asel + (size_t)(3 * k) * m3, w->c, w->bs[3 * k]);
    vn[k] = h * a;
    const con *c = &w->cons[w->sel[k]];
    if (held(w, s, &wk, w->sel[k], c->gap)) vn[k] -= c->gap / h; // the rows' gap shift
  }
  // 3. Semi-implicit Euler.
  cp_wi_get_u(w, w->u0);
  for (int i = 0; i < w->nu; ++i) w->u0[i] += h * w->udot[i];
  cp_wi_set_u(w, w->u0);
  memcpy(w->ck_u1, w->u0, sizeof(double) * (size_t)w->nu);
  cp_wi_move(w, w->u0, h);
  // 4. Drift.
  st = drift(w, s, ns, w->sel, vn, &wk, info);
  if (vn != vns) free(vn);
  if (st != CP_WORLD_OK) return st;
  return cp_wi_record_contacts(w, w->cfull);
}
cp_world_status cp_wi_step_quasistatic(cp_world *w, cp_step_info *info) {
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
  const double t0 = cp_wi_tic(w);
  if (cp_system_build_ws(sc, &w->sys_ws, &sys, &err))
    return cp_wi_fail(w, CP_WORLD_NOMEM, "%s", err.msg);
  const double t1 = cp_wi_tic(w);
  if (w->opt.profile) w->prof.assembly += t1 - t0;
  cp_problem_options po = cp_problem_defaults();
  if (cp_wi_solve_options_now(w, &po.solve)) {
    cp_system_free(&sys);
    return cp_wi_fail(w, CP_WORLD_SOLVER_FAILED,
                      "t = %.9g: the quasistatic problem was not solved: the "
                      "deadline had passed",
                      w->t);
  }
  // Lemke may end on a secondary ray without proof here (quasistatic.h):
  // the MIP decides those.
  if (po.solve.solver == CP_SOLVER_LEMKE) po.solve.solver = CP_SOLVER_AUTO;
  cp_quasistatic_result res;
  cp_lcp_status ls = cp_problem_quasistatic(&sys, &po, &res);
  cp_wi_toc(w, &w->prof.solve, t1);
  info->lcp_solves++;
  info->pivots += res.info.iterations;
  cp_world_status st = CP_WORLD_OK;
  if (ls != CP_LCP_SOLVED) {
    st = cp_wi_fail(w, CP_WORLD_SOLVER_FAILED,
              "t = %.9g: the quasistatic problem has no answer (%s%s%s)", w->t,
              cp_lcp_status_name(ls), res.info.reason[0] ? ": " : "",
              res.info.reason);
  } else {
    cp_wi_set_u(w, res.velocity);
    cp_wi_move(w, res.velocity, w->opt.dt);
    // record contacts: forces in contact frames
    w->ncon = 0;
    for (int j = 0; j < sc->n_contacts; ++j) {
      if (cp_grow((void **)&w->cons, &w->con_cap, j + 1, sizeof *w->cons)) break;
      memset(&w->cons[j], 0, sizeof(con));
      w->cons[j].contact = j;
      w->ncon = j + 1;
    }
    st = cp_wi_record_contacts(w, res.force);
  }
  cp_quasistatic_result_free(&res);
  cp_system_free(&sys);
  return st;
}

