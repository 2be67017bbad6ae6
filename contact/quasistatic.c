#include "contact/quasistatic.h"

#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cp_quasistatic_result_free(cp_quasistatic_result *res) {
  if (!res) return;
  free(res->velocity);
  free(res->force);
  free(res->contact_velocity);
  free(res->soft);
  free(res->torsion);
  free(res->spin);
  free(res->effort);
  free(res->outcome);
  memset(res, 0, sizeof *res);
}

static cp_lcp_status qfail(cp_quasistatic_result *res, cp_lcp_status s,
                           const char *why) {
  res->info.status = s;
  snprintf(res->info.reason, sizeof res->info.reason, "%s", why);
  return s;
}

/* Numerical rank of the r x c matrix X (copied), SVD with the usual
 * max(r, c) eps sigma_max threshold. -1 on failure. */
static int num_rank(int r, int c, const double *X) {
  int k = r < c ? r : c;
  if (k == 0) return 0;
  double *a = malloc(sizeof(double) * ((size_t)r * (size_t)c + 2 * (size_t)k));
  if (!a) return -1;
  memcpy(a, X, sizeof(double) * (size_t)r * (size_t)c);
  double *sv = a + (size_t)r * c, *sup = sv + k;
  int rank = -1;
  if (LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'N', r, c, a, r, sv, NULL, 1, NULL, 1,
                     sup) == 0) {
    double tol = sv[0] * (double)(r > c ? r : c) * DBL_EPSILON;
    rank = 0;
    for (int i = 0; i < k; i++) rank += sv[i] > tol;
  }
  free(a);
  return rank;
}

cp_lcp_status cp_problem_quasistatic(const cp_system *sys,
                                     const cp_problem_options *opt,
                                     cp_quasistatic_result *res) {
  cp_problem_options def = cp_problem_defaults();
  if (!opt) opt = &def;
  memset(res, 0, sizeof *res);
  cp_lcp_info_clear(&res->info);
  res->info.solver = opt->solve.solver;
  const int nu = sys->n_u, nc = sys->n_c, n3 = 3 * nc, no = sys->n_obj, nl = sys->n_l;
  const int n6 = 6 * no;
  res->nu = nu;
  res->nc = nc;
  res->n_obj = no;
  res->n_l = nl;
  if (opt->friction != CP_FRICTION_PYRAMID)
    return qfail(res, CP_LCP_NUMERICAL, "the quasistatic problem uses the friction pyramid only");
  int nsoft = 0;
  for (int j = 0; opt->mu_torsion && j < nc; j++) nsoft += opt->mu_torsion[j] >= 0.0;
  const int mc = 3 * (nc + nsoft);
  const size_t nc1 = (size_t)(nc > 0 ? nc : 1);

  cp_pyramid_contact *pc = calloc(nc1, sizeof *pc);
  cp_torsion_contact *tc = calloc(nc1, sizeof *tc);
  int *order = malloc(sizeof(int) * 2 * nc1), *rank = order + nc1;
  double *Ga = calloc((size_t)(nu > 0 ? nu : 1) * (size_t)(mc > 0 ? mc : 1), sizeof(double));
  double *cv = calloc(2 * (size_t)(mc > 0 ? mc : 1), sizeof(double)), *nuv = cv + (mc > 0 ? mc : 1);
  res->velocity = calloc((size_t)(nu > 0 ? nu : 1), sizeof(double));
  res->force = calloc((size_t)(n3 > 0 ? n3 : 1), sizeof(double));
  res->contact_velocity = calloc((size_t)(n3 > 0 ? n3 : 1), sizeof(double));
  res->soft = calloc(nc1, 1);
  res->torsion = calloc(nc1, sizeof(double));
  res->spin = calloc(nc1, sizeof(double));
  res->effort = calloc((size_t)(nl > 0 ? nl : 1), sizeof(double));
  res->outcome = calloc(nc1, sizeof(cp_outcome));
  cp_friction_map fm;
  memset(&fm, 0, sizeof fm);
  double *M = NULL, *q = NULL, *z = NULL, *w = NULL, *GOC = NULL, *RGOT = NULL;
  cp_lcp_status st = CP_LCP_NOMEM;
  if (!pc || !tc || !order || !Ga || !cv || !res->velocity || !res->force ||
      !res->contact_velocity || !res->soft || !res->torsion || !res->spin ||
      !res->effort || !res->outcome) {
    qfail(res, st, "out of memory");
    goto done;
  }

  /* G~ = [G | per soft finger: Gtor_j, 0, 0] as in contact/problem.h. */
  memcpy(Ga, sys->G, sizeof(double) * (size_t)nu * (size_t)n3);
  for (int j = 0, s = 0; j < nc; j++) {
    pc[j].mu = sys->mu[j];
    /* Velocities are unknowns: no a-priori sliding set. A frictionless
     * contact keeps only c_n ("sliding" with d = 0, as in problem.c). */
    pc[j].sliding = sys->mu[j] == 0.0;
    if (!opt->mu_torsion || !(opt->mu_torsion[j] >= 0.0)) continue;
    memcpy(Ga + (size_t)(3 * (nc + s++)) * nu, sys->Gtor + (size_t)j * nu,
           sizeof(double) * (size_t)nu);
    res->soft[j] = 1;
    tc[j].soft = 1;
    tc[j].mu = opt->mu_torsion[j];
    tc[j].spinning = tc[j].mu == 0.0; /* d = 0: no moment, no unknowns */
  }
  cp_pyramid_layout lay;
  cp_pyramid_layout_make(nc, pc, order, rank, &lay);
  if (cp_friction_map_build(&lay, pc, 0, 4, nsoft ? tc : NULL, &fm)) {
    qfail(res, st, "out of memory");
    goto done;
  }
  const int mz = fm.mz, N = 2 * n6 + mz;
  res->lcp_size = N;
  M = calloc((size_t)(N > 0 ? N : 1) * (size_t)(N > 0 ? N : 1), sizeof(double));
  q = calloc((size_t)(N > 0 ? N : 1), sizeof(double));
  z = calloc((size_t)(N > 0 ? N : 1), sizeof(double));
  w = calloc((size_t)(N > 0 ? N : 1), sizeof(double));
  GOC = calloc((size_t)(n6 > 0 ? n6 : 1) * (size_t)(mz > 0 ? mz : 1), sizeof(double));
  RGOT = calloc((size_t)(mz > 0 ? mz : 1) * (size_t)(n6 > 0 ? n6 : 1), sizeof(double));
  if (!M || !q || !z || !w || !GOC || !RGOT) {
    qfail(res, st, "out of memory");
    goto done;
  }
  /* G_O C (n6 x mz) and R G_O^T (mz x n6): G_O is the first n6 rows of G~
   * (leading dimension nu). */
  if (n6 > 0 && mz > 0 && mc > 0) {
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, n6, mz, mc, 1.0, Ga,
                nu, fm.C, mc, 0.0, GOC, n6);
    cblas_dgemm(CblasColMajor, CblasNoTrans, CblasTrans, mz, n6, mc, 1.0, fm.R,
                mz, Ga, nu, 0.0, RGOT, mz);
  }
  /* nu_L = G_L^T l': the contact velocities the fingers make on their own. */
  for (int col = 0; col < mc; col++) {
    double s = 0.0;
    for (int r = n6; r < nu; r++) s += Ga[r + (size_t)col * nu] * sys->u[r];
    nuv[col] = s;
  }
  /* (Q5). f_O = [m_i g; 0]: sys->f's force rows (its moment rows hold the
   * gyroscopic term, an inertial one). */
#define MM(i, j) M[(size_t)(i) + (size_t)(j) * (size_t)N]
  for (int i = 0; i < no; i++)
    for (int k = 0; k < 3; k++) {
      q[6 * i + k] = -sys->f[6 * i + k];
      q[n6 + 6 * i + k] = sys->f[6 * i + k];
    }
  for (int c = 0; c < mz; c++)
    for (int r = 0; r < n6; r++) {
      double g = GOC[r + (size_t)c * n6];
      MM(r, 2 * n6 + c) = -g;
      MM(n6 + r, 2 * n6 + c) = g;
    }
  for (int c = 0; c < n6; c++)
    for (int r = 0; r < mz; r++) {
      double g = RGOT[r + (size_t)c * mz];
      MM(2 * n6 + r, c) = g;
      MM(2 * n6 + r, n6 + c) = -g;
    }
  for (int c = 0; c < mz; c++)
    for (int r = 0; r < mz; r++) MM(2 * n6 + r, 2 * n6 + c) = fm.E[r + (size_t)c * mz];
#undef MM
  if (mz > 0 && mc > 0)
    cblas_dgemv(CblasColMajor, CblasNoTrans, mz, mc, 1.0, fm.R, mz, nuv, 1, 0.0,
                q + 2 * n6, 1);

  if (N == 0) {
    res->info.status = CP_LCP_SOLVED;
    res->info.starts = 1;
  } else if (opt->solve.solver == CP_SOLVER_AUTO) {
    /* Lemke, then the MILP: FIP's phase I cannot succeed here (header). */
    cp_solve_options so = opt->solve;
    so.solver = CP_SOLVER_LEMKE;
    cp_lcp_solve(NULL, N, M, q, &so, z, w, &res->info, NULL);
    if (res->info.status != CP_LCP_SOLVED && res->info.status != CP_LCP_NOMEM) {
      so.solver = CP_SOLVER_CERTIFY;
      cp_lcp_solve(NULL, N, M, q, &so, z, w, &res->info, NULL);
    }
  } else {
    cp_lcp_solve(NULL, N, M, q, &opt->solve, z, w, &res->info, NULL);
  }
  st = res->info.status;
  if (st != CP_LCP_SOLVED) goto done;

  /* Recover v, c~ = C z, nu = G~^T u, the efforts and the balance. */
  for (int i = 0; i < n6; i++) res->velocity[i] = z[i] - z[n6 + i];
  for (int r = n6; r < nu; r++) res->velocity[r] = sys->u[r];
  if (mz > 0 && mc > 0)
    cblas_dgemv(CblasColMajor, CblasNoTrans, mc, mz, 1.0, fm.C, mc, z + 2 * n6, 1,
                0.0, cv, 1);
  if (mc > 0 && nu > 0)
    cblas_dgemv(CblasColMajor, CblasTrans, nu, mc, 1.0, Ga, nu, res->velocity, 1,
                0.0, nuv, 1);
  memcpy(res->force, cv, sizeof(double) * (size_t)n3);
  memcpy(res->contact_velocity, nuv, sizeof(double) * (size_t)n3);
  for (int j = 0; j < nc; j++) {
    int tr = fm.tor_row[j];
    if (tr < 0) continue;
    res->torsion[j] = cv[tr];
    res->spin[j] = nuv[tr];
  }
  for (int r = 0; r < nl; r++) {
    double s = sys->g_man[r];
    for (int col = 0; col < mc; col++) s -= Ga[n6 + r + (size_t)col * nu] * cv[col];
    res->effort[r] = s;
  }
  res->balance_residual = 0.0;
  for (int r = 0; r < n6; r++) {
    double s = r % 6 < 3 ? sys->f[r] : 0.0;
    for (int col = 0; col < mc; col++) s += Ga[r + (size_t)col * nu] * cv[col];
    res->balance_residual = fmax(res->balance_residual, fabs(s));
  }
  double qmax = 1.0;
  for (int i = 0; i < N; i++) qmax = fmax(qmax, fabs(q[i]));
  const double tol_v = opt->rel_tol * qmax;
  for (int j = 0; j < nc; j++) {
    const double *v = nuv + 3 * j;
    if (v[0] > tol_v) res->outcome[j] = CP_OUTCOME_BREAKING;
    else if (hypot(v[1], v[2]) > tol_v) res->outcome[j] = CP_OUTCOME_SLIDING;
    else res->outcome[j] = CP_OUTCOME_ROLLING;
  }
  /* Rank of G_O C: the object wrenches the contact model can exert
   * (frictionless contacts contribute their normals only). */
  res->jacobian_rank = num_rank(n6, mz, GOC);
  res->full_row_rank = res->jacobian_rank == n6;
done:
  res->info.status = st;
  free(pc);
  free(tc);
  free(order);
  free(Ga);
  free(cv);
  free(M);
  free(q);
  free(z);
  free(w);
  free(GOC);
  free(RGOT);
  cp_friction_map_free(&fm);
  return st;
}
