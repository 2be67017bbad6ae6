#include "contact/problem.h"

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
  memset(res, 0, sizeof *res);
}

static cp_lcp_status fail(cp_problem_result *res, cp_lcp_status s,
                          const char *why) {
  res->info.status = s;
  snprintf(res->info.reason, sizeof res->info.reason, "%s", why);
  return s;
}

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

/* 1 when M is symmetric positive semidefinite (to rounding). */
static int symmetric_psd(int m, const double *M) {
  double mmax = 0.0;
  for (size_t i = 0; i < (size_t)m * (size_t)m; i++) mmax = fmax(mmax, fabs(M[i]));
  for (int j = 0; j < m; j++)
    for (int i = j + 1; i < m; i++)
      if (fabs(M[i + (size_t)j * m] - M[j + (size_t)i * m]) > 1e-12 * fmax(1.0, mmax)) return 0;
  double *a = malloc(sizeof(double) * (size_t)m * (size_t)(m + 1));
  if (!a) return 0;
  memcpy(a, M, sizeof(double) * (size_t)m * (size_t)m);
  int ok = LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'U', m, a, m, a + (size_t)m * m) == 0 &&
           a[(size_t)m * m] >= -1e-10 * fmax(1.0, fabs(a[(size_t)m * m + m - 1]));
  free(a);
  return ok;
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
static void decide_unique(const cp_contact_space *cs, const cp_pyramid_layout *lay,
                          const cp_pyramid_contact *pc, int m, const double *M,
                          const double *q, const cp_problem_options *opt,
                          const double *z, cp_problem_result *res) {
  const int nu = cs->nu, n3 = 3 * cs->nc;
  double *buf = malloc(sizeof(double) * ((size_t)4 * m + (size_t)n3 * 2 + nu));
  unsigned char *basis = malloc((size_t)m + 1);
  res->udot_other = malloc(sizeof(double) * (size_t)(nu > 0 ? nu : 1));
  if (!buf || !basis || !res->udot_other) goto done;
  if (symmetric_psd(m, M)) {
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
      cp_pyramid_forces(lay, pc, t ? z2 : z1, c2);
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
 * edges), then recovers forces, contact and generalised accelerations.
 * Returns 0, or -1 with res->info holding the failure. */
static int solve_current(const cp_contact_space *cs, const cp_pyramid_layout *lay,
                         const cp_pyramid_contact *pc, int cone, int k,
                         const cp_problem_options *opt, double *M, double *q,
                         double *z, double *w, cp_lemke_ws *ws,
                         cp_problem_result *res) {
  const int m = cone ? cp_cone_size(lay, k) : lay->m;
  res->lcp_size = m;
  if (m == 0) { /* no contacts: free motion */
    cp_lcp_info_clear(&res->info);
    res->info.status = CP_LCP_SOLVED;
    res->info.solver = opt->solve.solver;
    res->info.starts = 1;
  } else {
    if (cone) cp_cone_build(lay, pc, k, cs->A, cs->b, M, q);
    else cp_pyramid_build(lay, pc, cs->A, cs->b, M, q);
    cp_lcp_solve(ws, m, M, q, &opt->solve, z, w, &res->info, NULL);
    if (res->info.status != CP_LCP_SOLVED) return -1;
    if (cone) cp_cone_forces(lay, pc, k, z, res->force);
    else cp_pyramid_forces(lay, pc, z, res->force);
  }
  if (recover(cs, res->force, res->accel, res->udot, res->effort)) {
    fail(res, CP_LCP_NOMEM, "out of memory");
    return -1;
  }
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
static cp_lcp_status refine_sliding(const cp_system *sys, const cp_contact_space *cs,
                                    cp_pyramid_layout *lay, cp_pyramid_contact *pc,
                                    int *order, int *rank, int k, double tol_a,
                                    const cp_problem_options *opt, double *M,
                                    double *q, double *z, double *w, cp_lemke_ws *ws,
                                    cp_problem_result *res) {
  const int nc = sys->n_c;
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
    if (solve_current(cs, lay, pc, 1, k, opt, M, q, z, w, ws, res)) {
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

  /* Acceleration-driven joints: their u' is given, their effort unknown. */
  unsigned char *driven = calloc((size_t)(nu > 0 ? nu : 1), 1);
  double *ud = calloc((size_t)(nu > 0 ? nu : 1), sizeof(double));
  cp_pyramid_contact *pc = calloc((size_t)(nc > 0 ? nc : 1), sizeof *pc);
  int *order = malloc(sizeof(int) * (size_t)(nc > 0 ? nc : 1));
  int *rank = malloc(sizeof(int) * (size_t)(nc > 0 ? nc : 1));
  unsigned char *sl = malloc((size_t)(nc > 0 ? nc : 1));
  res->force = calloc((size_t)(n3 > 0 ? n3 : 1), sizeof(double));
  res->accel = calloc((size_t)(n3 > 0 ? n3 : 1), sizeof(double));
  res->udot = calloc((size_t)(nu > 0 ? nu : 1), sizeof(double));
  res->effort = calloc((size_t)(nu > 0 ? nu : 1), sizeof(double));
  res->outcome = calloc((size_t)(nc > 0 ? nc : 1), sizeof(cp_outcome));
  double *M = NULL, *q = NULL, *z = NULL, *w = NULL;
  cp_contact_space cs;
  memset(&cs, 0, sizeof cs);
  cp_lemke_ws *ws = NULL;
  cp_lcp_status st = CP_LCP_NOMEM;
  if (!driven || !ud || !pc || !order || !rank || !sl || !res->force ||
      !res->accel || !res->udot || !res->effort || !res->outcome) {
    fail(res, CP_LCP_NOMEM, "out of memory");
    goto done;
  }
  for (int r = 0; r < sys->n_l; r++)
    if (sys->drive[r] == CP_DRIVE_ACCELERATION) {
      driven[6 * nobj + r] = 1;
      ud[6 * nobj + r] = sys->qdd[r];
    }
  int rc = cp_contact_space_build(nu, nc, sys->H, sys->G, sys->f, sys->k,
                                  driven, ud, &cs);
  if (rc == -1) {
    st = fail(res, CP_LCP_NUMERICAL, "the generalised mass matrix is not positive definite");
    goto done;
  }
  if (rc) { st = fail(res, CP_LCP_NOMEM, "out of memory"); goto done; }

  for (int j = 0; j < nc; j++) {
    pc[j].mu = sys->mu[j];
    /* A frictionless contact needs no tangential unknowns: modelled as
     * "sliding" with d = 0 it keeps only c_n (the pyramid's four slacks
     * would pin s+ = s- = 0 and leave no strictly feasible point). */
    pc[j].sliding = sys->sliding[j] || sys->mu[j] == 0.0;
    sl[j] = (unsigned char)sys->sliding[j];
    pc[j].d[0] = sys->mu[j] * sys->d[2 * j];
    pc[j].d[1] = sys->mu[j] * sys->d[2 * j + 1];
  }
  if (cp_contact_diagnostics(&cs, sl, sys->mu, &res->diag)) {
    st = fail(res, CP_LCP_NOMEM, "out of memory");
    goto done;
  }
  cp_pyramid_layout lay;
  cp_pyramid_layout_make(nc, pc, order, rank, &lay);

  const int cone = opt->friction == CP_FRICTION_CONE;
  int k = cone ? (opt->cone_k0 >= 3 ? opt->cone_k0 : 3) : 4;
  const int kmax = cone ? (opt->cone_kmax > k ? opt->cone_kmax : k) : 4;
  const int mmax = cone ? cp_cone_size(&lay, kmax) : lay.m;
  M = malloc(sizeof(double) * (size_t)(mmax > 0 ? mmax : 1) * (size_t)(mmax > 0 ? mmax : 1));
  q = malloc(sizeof(double) * (size_t)(mmax > 0 ? mmax : 1));
  z = calloc((size_t)(mmax > 0 ? mmax : 1), sizeof(double));
  w = calloc((size_t)(mmax > 0 ? mmax : 1), sizeof(double));
  ws = cp_lemke_ws_create(mmax > 0 ? mmax : 1);
  if (!M || !q || !z || !w || !ws) { st = fail(res, CP_LCP_NOMEM, "out of memory"); goto done; }

  /* Polygon refinement (cone) or the single pyramid solve. */
  for (;;) {
    if (solve_current(&cs, &lay, pc, cone, k, opt, M, q, z, w, ws, res)) {
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
  for (int i = 0; i < n3; i++) bmax = fmax(bmax, fabs(cs.b[i]));
  const double tol_a = opt->rel_tol * bmax;
  if (cone) {
    st = refine_sliding(sys, &cs, &lay, pc, order, rank, k, tol_a, opt, M, q, z, w, ws, res);
    if (st != CP_LCP_SOLVED) goto done;
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
  if (opt->check_unique && !cone && lay.m > 0)
    decide_unique(&cs, &lay, pc, lay.m, M, q, opt, z, res);
  st = CP_LCP_SOLVED;
done:
  res->info.status = st;
  free(driven);
  free(ud);
  free(pc);
  free(order);
  free(rank);
  free(sl);
  free(M);
  free(q);
  free(z);
  free(w);
  cp_lemke_ws_destroy(ws);
  cp_contact_space_free(&cs);
  return st;
}
