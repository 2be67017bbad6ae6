#include "contact/problem.h"

#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/cone.h"
#include "contact/pyramid.h"

cp_problem_options cp_problem_defaults(void) {
  cp_problem_options o;
  o.solve = cp_solve_defaults();
  o.friction = CP_FRICTION_PYRAMID;
  o.cone_k0 = 8;
  o.cone_kmax = 256;
  o.cone_tol = 1e-3;
  o.rel_tol = 1e-6;
  o.check_unique = 0;
  o.mu_torsion = NULL;
  return o;
}

const char *cp_outcome_name(cp_outcome o) {
  switch (o) {
  case CP_OUTCOME_ROLLING: return "rolling";
  case CP_OUTCOME_SLIDING: return "sliding";
  case CP_OUTCOME_BREAKING: return "breaking";
  }
  return "unknown";
}

void cp_problem_result_free(cp_problem_result *res) {
  if (!res) return;
  free(res->force);
  free(res->accel);
  free(res->udot);
  free(res->effort);
  free(res->outcome);
  free(res->udot_other);
  free(res->soft);
  free(res->torsion);
  free(res->spin_accel);
  memset(res, 0, sizeof *res);
}

int cp_problem_torsion_from_scene(const cp_scene *scene, double *mu_torsion) {
  int n = 0;
  for (int j = 0; j < scene->n_contacts; j++) {
    const cp_contact *c = &scene->contacts[j];
    mu_torsion[j] = c->has_torsion ? c->mu_torsion : -1.0;
    n += c->has_torsion != 0;
  }
  return n;
}

void cp_friction_map_free(cp_friction_map *fm) {
  if (!fm) return;
  free(fm->tor_row);
  free(fm->C);
  free(fm->R);
  free(fm->E);
  memset(fm, 0, sizeof *fm);
}

int cp_friction_map_build(const cp_pyramid_layout *lay,
                          const cp_pyramid_contact *pc, int cone, int k,
                          const cp_torsion_contact *tc, cp_friction_map *fm) {
  memset(fm, 0, sizeof *fm);
  const int nc = lay->nc, n3 = 3 * nc;
  int nsoft = 0, nq = 0;
  for (int j = 0; tc && j < nc; j++)
    if (tc[j].soft) {
      nsoft++;
      nq += !tc[j].spinning;
    }
  const int mt = cone ? cp_cone_size(lay, k) : lay->m, mc = 3 * (nc + nsoft);
  const int mz = mt + 2 * nq;
  fm->nc = nc;
  fm->nsoft = nsoft;
  fm->mc = mc;
  fm->mt = mt;
  fm->nq = nq;
  fm->mz = mz;
  fm->tor_row = malloc(sizeof(int) * (size_t)(nc > 0 ? nc : 1));
  fm->C = calloc((size_t)(mc * mz > 0 ? mc * mz : 1), sizeof(double));
  fm->R = calloc((size_t)(mc * mz > 0 ? mc * mz : 1), sizeof(double));
  fm->E = calloc((size_t)(mz > 0 ? mz * mz : 1), sizeof(double));
  double *A0 = calloc((size_t)(n3 > 0 ? n3 * n3 : 1), sizeof(double));
  double *Mt = malloc(sizeof(double) * (size_t)(mt > 0 ? mt * mt : 1));
  double *bt = calloc((size_t)(n3 > 0 ? n3 : 1) + (size_t)(mt > 0 ? 2 * mt : 2), sizeof(double));
  if (!fm->tor_row || !fm->C || !fm->R || !fm->E || !A0 || !Mt || !bt) {
    free(A0);
    free(Mt);
    free(bt);
    cp_friction_map_free(fm);
    return -2;
  }
  double *qt = bt + n3, *zt = qt + mt;
#define CC(i, j) fm->C[(size_t)(i) + (size_t)(j) * (size_t)mc]
#define RR(i, j) fm->R[(size_t)(i) + (size_t)(j) * (size_t)mz]
#define EE(i, j) fm->E[(size_t)(i) + (size_t)(j) * (size_t)mz]
  if (mt > 0) {
    /* E_T: the builder with A = 0, b = 0; R_T column i: b = e_i. */
    if (cone) cp_cone_build(lay, pc, k, A0, bt, Mt, qt);
    else cp_pyramid_build(lay, pc, A0, bt, Mt, qt);
    for (int c = 0; c < mt; c++)
      for (int r = 0; r < mt; r++) EE(r, c) = Mt[r + (size_t)c * mt];
    for (int i = 0; i < n3; i++) {
      bt[i] = 1.0;
      if (cone) cp_cone_build(lay, pc, k, A0, bt, Mt, qt);
      else cp_pyramid_build(lay, pc, A0, bt, Mt, qt);
      bt[i] = 0.0;
      for (int r = 0; r < mt; r++) RR(r, i) = qt[r];
    }
    /* C_T column i: the forces of z = e_i. */
    double *ct = A0; /* A0 is no longer needed: n3 >= 3 scratch entries */
    for (int i = 0; i < mt; i++) {
      zt[i] = 1.0;
      if (cone) cp_cone_forces(lay, pc, k, zt, ct);
      else cp_pyramid_forces(lay, pc, zt, ct);
      zt[i] = 0.0;
      for (int r = 0; r < n3; r++) CC(r, i) = ct[r];
    }
  }
  for (int j = 0, s = 0, qi = 0; j < nc; j++) {
    fm->tor_row[j] = -1;
    if (!tc || !tc[j].soft) continue;
    const int tr = 3 * (nc + s++);
    fm->tor_row[j] = tr;
    if (tc[j].spinning) {
      for (int i = 0; i < mt; i++) CC(tr, i) = -tc[j].d * CC(3 * j, i);
      continue;
    }
    const int sp = mt + qi, am = mt + nq + qi; /* s+_tau, a-_tau columns */
    for (int i = 0; i < mt; i++) {
      CC(tr, i) = -tc[j].mu * CC(3 * j, i);
      EE(am, i) = 2.0 * tc[j].mu * CC(3 * j, i); /* row s-_tau */
    }
    CC(tr, sp) = 1.0;
    RR(sp, tr) = 1.0;   /* row a+_tau reads a_tau ... */
    EE(sp, am) = 1.0;   /* ... plus a-_tau */
    EE(am, sp) = -1.0;  /* row s-_tau: 2 mu c_n - s+_tau */
    qi++;
  }
#undef CC
#undef RR
#undef EE
  free(A0);
  free(Mt);
  free(bt);
  return 0;
}

int cp_friction_map_lcp(const cp_friction_map *fm, const double *A,
                        const double *b, double *M, double *q) {
  const int mc = fm->mc, mz = fm->mz;
  if (mz == 0) return 0;
  memcpy(M, fm->E, sizeof(double) * (size_t)mz * (size_t)mz);
  if (mc == 0) {
    memset(q, 0, sizeof(double) * (size_t)mz);
    return 0;
  }
  double *AC = malloc(sizeof(double) * (size_t)mc * (size_t)mz);
  if (!AC) return -2;
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, mc, mz, mc, 1.0, A, mc,
              fm->C, mc, 0.0, AC, mc);
  cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, mz, mz, mc, 1.0, fm->R,
              mz, AC, mc, 1.0, M, mz);
  cblas_dgemv(CblasColMajor, CblasNoTrans, mz, mc, 1.0, fm->R, mz, b, 1, 0.0, q, 1);
  free(AC);
  return 0;
}

static cp_lcp_status fail(cp_problem_result *res, cp_lcp_status s,
                          const char *why) {
  res->info.status = s;
  snprintf(res->info.reason, sizeof res->info.reason, "%s", why);
  return s;
}

/* What one solve of the contact problem works with: the contact space
 * (augmented by the soft fingers' torsion rows when there are any), their
 * torsional data and map, and the contact-space force and acceleration of
 * the current answer. */
typedef struct ctx {
  const cp_contact_space *cs;
  const cp_torsion_contact *tc; /* [nc], NULL without soft fingers */
  int nc, nsoft;
  cp_friction_map fm;           /* soft fingers: the map of the current LCP */
  double *c, *a;                /* [3 cs->nc] */
} ctx;

/* Accelerations of the solution with forces c: a = A c + b, and u'. */
static int recover(const cp_contact_space *cs, const double *c, double *a,
                   double *udot, double *effort) {
  const int m = 3 * cs->nc;
  for (int i = 0; i < m; i++) {
    double s = cs->b[i];
    for (int j = 0; j < m; j++) s += cs->A[i + (size_t)j * m] * c[j];
    a[i] = s;
  }
  return cp_contact_space_accel(cs, c, udot, effort);
}

/* Contact-space forces of an LCP solution z: the model's own recovery, or
 * c~ = C z through the friction map when there are soft fingers. */
static void forces_of(const ctx *x, const cp_pyramid_layout *lay,
                      const cp_pyramid_contact *pc, int cone, int k,
                      const double *z, double *c) {
  if (x->nsoft) {
    const cp_friction_map *fm = &x->fm;
    if (fm->mz > 0)
      cblas_dgemv(CblasColMajor, CblasNoTrans, fm->mc, fm->mz, 1.0, fm->C, fm->mc,
                  z, 1, 0.0, c, 1);
    else memset(c, 0, sizeof(double) * (size_t)fm->mc);
  } else if (cone) {
    cp_cone_forces(lay, pc, k, z, c);
  } else {
    cp_pyramid_forces(lay, pc, z, c);
  }
}

/* Copies the contact-space answer into the result's per-contact arrays. */
static void publish(const ctx *x, cp_problem_result *res) {
  const int n3 = 3 * x->nc;
  memcpy(res->force, x->c, sizeof(double) * (size_t)n3);
  memcpy(res->accel, x->a, sizeof(double) * (size_t)n3);
  for (int j = 0; x->nsoft && j < x->nc; j++) {
    int tr = x->fm.tor_row[j];
    res->torsion[j] = tr >= 0 ? x->c[tr] : 0.0;
    res->spin_accel[j] = tr >= 0 ? x->a[tr] : 0.0;
  }
}

/* Uniqueness of u' (certify):
 * - M symmetric PSD (e.g. every contact frictionless, M = A_nn): for a
 *   monotone LCP with symmetric M, M z is the same for every solution, so
 *   A_nn c_n = G_n^T H^-1 G_n c_n is, hence G_n c_n (x^T A x = 0 implies
 *   H^-1/2 G x = 0) and u': unique;
 * - a second solution with another support and a different u' settles "not
 *   unique";
 * - when every solution shares this support and its basis matrix is
 *   nonsingular, z (so u') is unique;
 * - otherwise undecided. */
static void decide_unique(const ctx *x, const cp_pyramid_layout *lay,
                          const cp_pyramid_contact *pc, int m, const double *M,
                          const double *q, const cp_problem_options *opt,
                          const double *z, cp_problem_result *res) {
  const cp_contact_space *cs = x->cs;
  const int nu = cs->nu, n3 = 3 * cs->nc;
  double *buf = malloc(sizeof(double) * ((size_t)4 * m + (size_t)n3 * 2 + nu));
  unsigned char *basis = malloc((size_t)m + 1);
  res->udot_other = malloc(sizeof(double) * (size_t)(nu > 0 ? nu : 1));
  if (!buf || !basis || !res->udot_other) goto done;
  if (cp_lcp_symmetric_psd(m, M)) {
    res->unique_decided = 1;
    res->unique = 1;
    goto done;
  }
  double *z1 = buf, *w1 = z1 + m, *z2 = w1 + m, *w2 = z2 + m;
  double *c2 = w2 + m, *a2 = c2 + n3, *e2 = a2 + n3;
  cp_certify_options co = opt->solve.certify;
  co.second = 1;
  cp_certify_result cr;
  cp_lcp_info info;
  cp_certify(m, M, q, &co, z1, w1, z2, w2, &cr, &info);
  if (info.status != CP_LCP_SOLVED) goto done;
  double scale = 1.0;
  for (int i = 0; i < nu; i++) scale = fmax(scale, fabs(res->udot[i]));
  if (cr.has_second) {
    /* Compare both certified solutions with the reported one. */
    for (int t = 0; t < 2; t++) {
      forces_of(x, lay, pc, 0, 4, t ? z2 : z1, c2);
      recover(cs, c2, a2, res->udot_other, e2);
      for (int i = 0; i < nu; i++)
        if (fabs(res->udot_other[i] - res->udot[i]) > 1e-6 * scale) {
          res->unique_decided = 1;
          res->unique = 0;
          goto done;
        }
    }
    goto done; /* same u' from another support: undecided without more work */
  }
  if (!cr.second_decided) goto done;
  /* Every solution shares z's support: z is unique iff that basis is. */
  double zmax = 0.0;
  for (int i = 0; i < m; i++) zmax = fmax(zmax, fabs(z[i]));
  for (int i = 0; i < m; i++) basis[i] = z[i] > 1e-12 * fmax(1.0, zmax);
  double *zt = z2, *wt = w2;
  if (cp_lcp_solve_basis(m, M, q, basis, zt, wt) == 0) {
    /* A nonsingular basis: the solution on this support is a single point. */
    res->unique_decided = 1;
    res->unique = 1;
  }
done:
  if (!(res->unique_decided && !res->unique)) {
    free(res->udot_other);
    res->udot_other = NULL;
  }
  free(buf);
  free(basis);
}


/* Builds and solves the LCP of the current split (pyramid, or cone with k
 * edges; through the friction map when there are soft fingers), then
 * recovers forces, contact and generalised accelerations.
 * Returns 0, or -1 with res->info holding the failure. */
/* Makes M [m*m], q, z, w [m] and the Lemke workspace hold LCPs of size m,
 * growing them (contents are not kept) when *cap < m. Returns 0 or -1. */
static int lcp_buffers(int m, int *cap, double **M, double **q, double **z, double **w,
                       cp_lemke_ws **ws) {
  if (m < 1) m = 1;
  if (m <= *cap) return 0;
  free(*M);
  free(*q);
  free(*z);
  free(*w);
  cp_lemke_ws_destroy(*ws);
  *M = malloc(sizeof(double) * (size_t)m * (size_t)m);
  *q = malloc(sizeof(double) * (size_t)m);
  *z = calloc((size_t)m, sizeof(double));
  *w = calloc((size_t)m, sizeof(double));
  *ws = cp_lemke_ws_create(m);
  if (!*M || !*q || !*z || !*w || !*ws) {
    *cap = 0;
    return -1;
  }
  *cap = m;
  return 0;
}

static int solve_current(ctx *x, const cp_pyramid_layout *lay,
                         const cp_pyramid_contact *pc, int cone, int k,
                         const cp_problem_options *opt, double *M, double *q,
                         double *z, double *w, cp_lemke_ws *ws,
                         cp_problem_result *res) {
  const cp_contact_space *cs = x->cs;
  if (x->nsoft) {
    cp_friction_map_free(&x->fm);
    if (cp_friction_map_build(lay, pc, cone, k, x->tc, &x->fm) ||
        cp_friction_map_lcp(&x->fm, cs->A, cs->b, M, q)) {
      fail(res, CP_LCP_NOMEM, "out of memory");
      return -1;
    }
  }
  const int m = x->nsoft ? x->fm.mz : cone ? cp_cone_size(lay, k) : lay->m;
  res->lcp_size = m;
  if (m == 0) { /* no contacts: free motion */
    cp_lcp_info_clear(&res->info);
    res->info.status = CP_LCP_SOLVED;
    res->info.solver = opt->solve.solver;
    res->info.starts = 1;
    memset(x->c, 0, sizeof(double) * (size_t)(3 * cs->nc));
  } else {
    if (x->nsoft) { /* M, q made above */
    } else if (cone) cp_cone_build(lay, pc, k, cs->A, cs->b, M, q);
    else cp_pyramid_build(lay, pc, cs->A, cs->b, M, q);
    cp_lcp_solve(ws, m, M, q, &opt->solve, z, w, &res->info, NULL);
    if (res->info.status != CP_LCP_SOLVED) return -1;
    forces_of(x, lay, pc, cone, k, z, x->c);
  }
  if (recover(cs, x->c, x->a, res->udot, res->effort)) {
    fail(res, CP_LCP_NOMEM, "out of memory");
    return -1;
  }
  publish(x, res);
  return 0;
}

static double wrap_angle(double a) {
  const double pi = 3.14159265358979323846;
  while (a > pi) a -= 2 * pi;
  while (a < -pi) a += 2 * pi;
  return a;
}

/* The cone model's sliding contacts, made exact. A polygon's friction force
 * sits at a vertex, so a contact that starts to slide gets a direction that
 * is off by up to pi/k -- a relative error of order mu g (pi/k) / |a| in the
 * acceleration, too large for any affordable k. So: the contacts the polygon
 * solution shows sliding (|a_tan| > tol_a) become sliding contacts with
 * friction -mu c_n (cos th, sin th), and the angles th solve the fixed point
 * th = angle of a_tan(th) (friction exactly opposite the acceleration, the
 * Coulomb cone's law). Plain iteration of that map diverges when mu c_n >
 * |a_tan| (its gain is about -mu c_n / |a_tan|), so the angles are found by
 * a secant step per contact, started with a damped step. */
static cp_lcp_status refine_sliding(ctx *x, cp_pyramid_layout *lay,
                                    cp_pyramid_contact *pc, int *order, int *rank,
                                    int k, double tol_a,
                                    const cp_problem_options *opt, double *M,
                                    double *q, double *z, double *w, cp_lemke_ws *ws,
                                    cp_problem_result *res) {
  const int nc = x->nc;
  double *th = malloc(sizeof(double) * 4 * (size_t)(nc > 0 ? nc : 1));
  unsigned char *conv = calloc((size_t)(nc > 0 ? nc : 1), 1);
  if (!th || !conv) {
    free(th);
    free(conv);
    return fail(res, CP_LCP_NOMEM, "out of memory");
  }
  double *th_prev = th + nc, *r_prev = th_prev + nc, *r = r_prev + nc;
  int any = 0;
  for (int j = 0; j < nc; j++) {
    if (pc[j].sliding) continue;
    const double *a = res->accel + 3 * j;
    if (hypot(a[1], a[2]) > tol_a) {
      conv[j] = 1;
      any = 1;
      th[j] = atan2(a[2], a[1]);
    }
  }
  cp_lcp_status st = CP_LCP_SOLVED;
  for (int it = 0; any && it < 60; it++) {
    for (int j = 0; j < nc; j++)
      if (conv[j]) {
        pc[j].sliding = 1;
        pc[j].d[0] = pc[j].mu * cos(th[j]);
        pc[j].d[1] = pc[j].mu * sin(th[j]);
      }
    cp_pyramid_layout_make(nc, pc, order, rank, lay);
    if (solve_current(x, lay, pc, 1, k, opt, M, q, z, w, ws, res)) {
      st = res->info.status;
      break;
    }
    double worst = 0.0;
    for (int j = 0; j < nc; j++) {
      if (!conv[j]) continue;
      const double *a = res->accel + 3 * j;
      /* A contact that stops sliding (or separates) is exact as it is. */
      r[j] = hypot(a[1], a[2]) > tol_a ? wrap_angle(atan2(a[2], a[1]) - th[j]) : 0.0;
      worst = fmax(worst, fabs(r[j]));
    }
    if (worst < 1e-12) break;
    for (int j = 0; j < nc; j++) {
      if (!conv[j]) continue;
      double step = 0.5 * r[j];
      if (it > 0 && fabs(r[j] - r_prev[j]) > 1e-15)
        step = -r[j] * (th[j] - th_prev[j]) / (r[j] - r_prev[j]);
      th_prev[j] = th[j];
      r_prev[j] = r[j];
      th[j] = wrap_angle(th[j] + step);
    }
  }
  free(th);
  free(conv);
  return st;
}

void cp_problem_pyramid_contacts(const cp_system *sys, cp_pyramid_contact *pc) {
  for (int j = 0; j < sys->n_c; j++) {
    pc[j].mu = sys->mu[j];
    pc[j].sliding = sys->sliding[j] || sys->mu[j] == 0.0;
    pc[j].d[0] = sys->mu[j] * sys->d[2 * j];
    pc[j].d[1] = sys->mu[j] * sys->d[2 * j + 1];
  }
}

cp_lcp_status cp_problem_solve(const cp_system *sys,
                               const cp_problem_options *opt,
                               cp_problem_result *res) {
  cp_problem_options def = cp_problem_defaults();
  if (!opt) opt = &def;
  memset(res, 0, sizeof *res);
  cp_lcp_info_clear(&res->info);
  res->info.solver = opt->solve.solver;
  const int nu = sys->n_u, nc = sys->n_c, n3 = 3 * nc, nobj = sys->n_obj;
  res->nu = nu;
  res->nc = nc;
  int nsoft = 0;
  for (int j = 0; opt->mu_torsion && j < nc; j++) nsoft += opt->mu_torsion[j] >= 0.0;
  const int nca = nc + nsoft, ma = 3 * nca; /* augmented contact space */

  /* Acceleration-driven joints: their u' is given, their effort unknown. */
  unsigned char *driven = calloc((size_t)(nu > 0 ? nu : 1), 1);
  double *ud = calloc((size_t)(nu > 0 ? nu : 1), sizeof(double));
  cp_pyramid_contact *pc = calloc((size_t)(nc > 0 ? nc : 1), sizeof *pc);
  cp_torsion_contact *tc = calloc((size_t)(nc > 0 ? nc : 1), sizeof *tc);
  int *order = malloc(sizeof(int) * (size_t)(nc > 0 ? nc : 1));
  int *rank = malloc(sizeof(int) * (size_t)(nc > 0 ? nc : 1));
  unsigned char *sl = malloc(2 * (size_t)(nc > 0 ? nc : 1)), *spin = sl + (nc > 0 ? nc : 1);
  double *cbuf = calloc(2 * (size_t)(ma > 0 ? ma : 1), sizeof(double));
  double *Ga = NULL, *ka = NULL;
  res->force = calloc((size_t)(n3 > 0 ? n3 : 1), sizeof(double));
  res->accel = calloc((size_t)(n3 > 0 ? n3 : 1), sizeof(double));
  res->udot = calloc((size_t)(nu > 0 ? nu : 1), sizeof(double));
  res->effort = calloc((size_t)(nu > 0 ? nu : 1), sizeof(double));
  res->outcome = calloc((size_t)(nc > 0 ? nc : 1), sizeof(cp_outcome));
  res->soft = calloc((size_t)(nc > 0 ? nc : 1), 1);
  res->torsion = calloc((size_t)(nc > 0 ? nc : 1), sizeof(double));
  res->spin_accel = calloc((size_t)(nc > 0 ? nc : 1), sizeof(double));
  double *M = NULL, *q = NULL, *z = NULL, *w = NULL;
  cp_contact_space cs;
  memset(&cs, 0, sizeof cs);
  ctx x;
  memset(&x, 0, sizeof x);
  cp_lemke_ws *ws = NULL;
  cp_lcp_status st = CP_LCP_NOMEM;
  if (!driven || !ud || !pc || !tc || !order || !rank || !sl || !cbuf || !res->force ||
      !res->accel || !res->udot || !res->effort || !res->outcome || !res->soft ||
      !res->torsion || !res->spin_accel) {
    fail(res, CP_LCP_NOMEM, "out of memory");
    goto done;
  }
  for (int r = 0; r < sys->n_l; r++)
    if (sys->drive[r] == CP_DRIVE_ACCELERATION) {
      driven[6 * nobj + r] = 1;
      ud[6 * nobj + r] = sys->qdd[r];
    }
  const double *G = sys->G, *kv = sys->k;
  if (nsoft) {
    /* G~ = [G | per soft finger: Gtor_j, 0, 0], k~ likewise (the pads make
     * whole three-row "contacts" for contact/dynamics.h). */
    Ga = calloc((size_t)(nu > 0 ? nu : 1) * (size_t)ma, sizeof(double));
    ka = calloc((size_t)ma, sizeof(double));
    if (!Ga || !ka) { fail(res, CP_LCP_NOMEM, "out of memory"); goto done; }
    memcpy(Ga, sys->G, sizeof(double) * (size_t)nu * (size_t)n3);
    memcpy(ka, sys->k, sizeof(double) * (size_t)n3);
    for (int j = 0, s = 0; j < nc; j++) {
      if (!(opt->mu_torsion[j] >= 0.0)) continue;
      const int tr = 3 * (nc + s++);
      memcpy(Ga + (size_t)tr * nu, sys->Gtor + (size_t)j * nu, sizeof(double) * (size_t)nu);
      ka[tr] = sys->ktor[j];
    }
    G = Ga;
    kv = ka;
  }
  int rc = cp_contact_space_build(nu, nca, sys->H, G, sys->f, kv, driven, ud, &cs);
  if (rc == -1) {
    st = fail(res, CP_LCP_NUMERICAL, "the generalised mass matrix is not positive definite");
    goto done;
  }
  if (rc) { st = fail(res, CP_LCP_NOMEM, "out of memory"); goto done; }
  x.cs = &cs;
  x.nc = nc;
  x.nsoft = nsoft;
  x.tc = nsoft ? tc : NULL;
  x.c = cbuf;
  x.a = cbuf + ma;

  cp_problem_pyramid_contacts(sys, pc);
  for (int j = 0; j < nc; j++) {
    sl[j] = (unsigned char)sys->sliding[j];
    spin[j] = 0;
    if (!nsoft || !(opt->mu_torsion[j] >= 0.0)) continue;
    /* The relative spin n.(w_a - w_b) = Gtor_j^T u decides spinning; a
     * zero mu_tau is "spinning" with no moment, as frictionless above. */
    double om = 0.0;
    for (int i = 0; i < nu; i++) om += sys->Gtor[i + (size_t)j * nu] * sys->u[i];
    res->soft[j] = 1;
    tc[j].soft = 1;
    tc[j].mu = opt->mu_torsion[j];
    spin[j] = fabs(om) > sys->tol;
    tc[j].spinning = spin[j] || tc[j].mu == 0.0;
    tc[j].d = spin[j] ? copysign(tc[j].mu, om) : 0.0;
  }
  cp_pyramid_layout lay;
  cp_pyramid_layout_make(nc, pc, order, rank, &lay);
  if (nsoft) {
    /* The map gives tor_row (and is rebuilt by every solve). */
    if (cp_friction_map_build(&lay, pc, 0, 4, tc, &x.fm) ||
        cp_contact_diagnostics_ext(&cs, nc, x.fm.tor_row, sl, sys->mu, spin, opt->mu_torsion, &res->diag)) {
      st = fail(res, CP_LCP_NOMEM, "out of memory");
      goto done;
    }
  } else if (cp_contact_diagnostics(&cs, sl, sys->mu, &res->diag)) {
    st = fail(res, CP_LCP_NOMEM, "out of memory");
    goto done;
  }

  const int cone = opt->friction == CP_FRICTION_CONE;
  int k = cone ? (opt->cone_k0 >= 3 ? opt->cone_k0 : 3) : 4;
  const int kmax = cone ? (opt->cone_kmax > k ? opt->cone_kmax : k) : 4;
  int nq = 0;
  for (int j = 0; j < nc; j++) nq += tc[j].soft && !tc[j].spinning;
  /* LCP buffers sized for the polygon in use and grown as it is refined
   * (sizing them for cone_kmax up front meant n = nc + 257 nr: 845 MB of M
   * for 40 rolling contacts, mostly never used). */
  int cap = 0;

  /* Polygon refinement (cone) or the single pyramid solve. */
  for (;;) {
    if (lcp_buffers(((cone ? cp_cone_size(&lay, k) : lay.m) + 2 * nq), &cap, &M, &q, &z, &w,
                    &ws)) {
      st = fail(res, CP_LCP_NOMEM, "out of memory");
      goto done;
    }
    if (solve_current(&x, &lay, pc, cone, k, opt, M, q, z, w, ws, res)) {
      st = res->info.status;
      goto done;
    }
    if (!cone) break;
    double fscale = 0.0;
    for (int j = 0; j < nc; j++) fscale = fmax(fscale, fabs(res->force[3 * j]));
    res->cone_edges = k;
    res->cone_violation = cp_cone_violation(&lay, pc, res->force, 1e-9 * fmax(1.0, fscale));
    if (res->cone_violation <= opt->cone_tol || k >= kmax) break;
    k = 2 * k > kmax ? kmax : 2 * k;
  }
  double bmax = 1.0;
  for (int i = 0; i < ma; i++) bmax = fmax(bmax, fabs(cs.b[i]));
  const double tol_a = opt->rel_tol * bmax;
  if (cone) {
    st = refine_sliding(&x, &lay, pc, order, rank, k, tol_a, opt, M, q, z, w, ws, res);
    if (st != CP_LCP_SOLVED) goto done;
  }
  /* The contact-level check (issue 12): whatever the LCP's own check
   * accepted, a "solved" answer never shows bodies accelerating into each
   * other (a_n < 0; c_n >= 0 is z >= 0, which the LCP check covers), judged
   * against the contact's own row of a = A c + b: tol_j = rel_tol (|A_j||c| + |b_j|) plus
   * rounding (64 m eps (|A_j|_1 |c|_inf + |b|_inf)). An ill-scaled LCP (mu = 1e12, a point far from its body) can
   * pass the LCP check row by row and still give such an answer. */
  {
    double cmax = 0.0, bmax_all = 0.0;
    for (int i = 0; i < ma; i++) {
      cmax = fmax(cmax, fabs(x.c[i]));
      bmax_all = fmax(bmax_all, fabs(cs.b[i]));
    }
    for (int j = 0; j < nc; j++) {
      const int r = 3 * j;
      double sc = fabs(cs.b[r]), l1 = 0.0;
      for (int i = 0; i < ma; i++) {
        const double aij = fabs(cs.A[r + (size_t)i * (size_t)ma]);
        sc += aij * fabs(x.c[i]);
        l1 += aij;
      }
      /* plus rounding: b itself is a sum of terms (G^T H^-1 f + k) whose
       * size b's largest entry stands for, so a normal that b says is
       * exactly 0 (a block falling between walls) may read -1e-15. */
      const double tol = opt->rel_tol * sc +
                         64.0 * ma * 2.220446049250313e-16 * (l1 * cmax + bmax_all);
      const double an = x.a[r];
      if (!(an >= -tol)) {
        char why[160];
        snprintf(why, sizeof why, "contact %d: normal acceleration into the other body %.3g "
                 "(tolerance %.3g): the LCP's answer fails the contact check (badly scaled "
                 "data?)", j, an, tol);
        st = fail(res, CP_LCP_CHECK_FAILED, why);
        goto done;
      }
    }
  }
  /* Effort-driven joints report their given effort. */
  for (int r = 0; r < sys->n_l; r++)
    if (!driven[6 * nobj + r]) res->effort[6 * nobj + r] = sys->tau[r];

  for (int j = 0; j < nc; j++) {
    double an = res->accel[3 * j], at = hypot(res->accel[3 * j + 1], res->accel[3 * j + 2]);
    if (an > tol_a) res->outcome[j] = CP_OUTCOME_BREAKING;
    else if (sys->sliding[j] || at > tol_a) res->outcome[j] = CP_OUTCOME_SLIDING;
    else res->outcome[j] = CP_OUTCOME_ROLLING;
  }
  if (opt->check_unique && !cone && res->lcp_size > 0)
    decide_unique(&x, &lay, pc, res->lcp_size, M, q, opt, z, res);
  st = CP_LCP_SOLVED;
done:
  res->info.status = st;
  free(driven);
  free(ud);
  free(pc);
  free(tc);
  free(order);
  free(rank);
  free(sl);
  free(cbuf);
  free(M);
  free(q);
  free(z);
  free(w);
  cp_lemke_ws_destroy(ws);
  cp_friction_map_free(&x.fm);
  cp_contact_space_free(&cs);
  free(Ga);
  free(ka);
  return st;
}
