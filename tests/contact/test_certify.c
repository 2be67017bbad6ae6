/* Tests of contact/certify: the MIP (C1) existence certificate. Every answer
 * reported as solved is re-checked here independently
 * (cpt_assert_lcp_solution); every "no solution" instance is proved
 * infeasible on paper in its comment. M is column-major: M[i + j*n]. */
#include <criterion/criterion.h>
#include <glpk.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/certify.h"
#include "contact/glpkout.h"
#include "contact/lcpio.h"
#include "tests/support.h"

static double tol_for(int n, const double *q) {
  double m = 1.0;
  for (int i = 0; i < n; i++) m = fmax(m, fabs(q[i]));
  return 1e-6 * m;
}

static int support_differs(int n, const double *a, const double *b,
                           double tol) {
  for (int i = 0; i < n; i++)
    if ((a[i] > tol) != (b[i] > tol)) return 1;
  return 0;
}

/* Runs cp_certify and checks the bookkeeping every call must get right. */
static cp_lcp_status run(int n, const double *M, const double *q,
                         const cp_certify_options *opt, double *z, double *w,
                         double *z2, double *w2, cp_certify_result *res,
                         cp_lcp_info *info) {
  cp_lcp_status st = cp_certify(n, M, q, opt, z, w, z2, w2, res, info);
  cr_assert_eq(st, info->status);
  cr_assert_eq(info->solver, CP_SOLVER_CERTIFY);
  cr_assert_eq(info->starts, 1);
  if (st != CP_LCP_NUMERICAL || res->mip_solves > 0) {
    cr_assert_geq(res->mip_solves, 1);
    cr_assert_geq(info->iterations, res->mip_solves,
                  "iterations (B&B nodes, >= 1 per solve) %d < solves %d",
                  info->iterations, res->mip_solves);
  }
  if (st == CP_LCP_SOLVED) {
    cpt_assert_lcp_solution(n, M, q, z, tol_for(n, q));
    cr_assert_gt(res->alpha, 0.0);
  } else {
    cr_assert_neq(info->reason[0], '\0', "a non-solved status needs a reason");
  }
  return st;
}

/* ---- hand-solvable ---------------------------------------------------- */

Test(certify, two_by_two_interior) {
  /* M = [2 1; 1 2] (a P-matrix: unique solution), q = (-5, -6): both z_i > 0,
   * 2 z1 + z2 = 5, z1 + 2 z2 = 6  =>  z = (4/3, 7/3), w = 0. */
  const double M[4] = {2, 1, 1, 2}, q[2] = {-5, -6};
  double z[2], w[2];
  cp_certify_result res;
  cp_lcp_info info;
  cp_certify_options opt = cp_certify_defaults();
  cr_assert_eq(run(2, M, q, &opt, z, w, NULL, NULL, &res, &info), CP_LCP_SOLVED,
               "%s", info.reason);
  cr_assert_float_eq(z[0], 4.0 / 3.0, 1e-12);
  cr_assert_float_eq(z[1], 7.0 / 3.0, 1e-12);
  cr_assert_float_eq(w[0], 0.0, 1e-12);
  cr_assert_float_eq(w[1], 0.0, 1e-12);
  cr_assert_leq(info.complementarity, 1e-12);
}

Test(certify, two_by_two_mixed_support) {
  /* M = [2 1; 1 2], q = (-1, 2): z = (1/2, 0), w = (0, 5/2) (unique). */
  const double M[4] = {2, 1, 1, 2}, q[2] = {-1, 2};
  double z[2], w[2];
  cp_certify_result res;
  cp_lcp_info info;
  cr_assert_eq(run(2, M, q, NULL, z, w, NULL, NULL, &res, &info), CP_LCP_SOLVED,
               "%s", info.reason);
  cr_assert_float_eq(z[0], 0.5, 1e-12);
  cr_assert_float_eq(z[1], 0.0, 1e-12);
  cr_assert_float_eq(w[0], 0.0, 1e-12);
  cr_assert_float_eq(w[1], 2.5, 1e-12);
}

Test(certify, nonnegative_q_gives_zero) {
  /* q >= 0 with M = [1 -3; 4 1] (P-matrix) : the unique solution is z = 0. */
  const double M[4] = {1, 4, -3, 1}, q[2] = {3, 0.5};
  double z[2], w[2];
  cp_certify_result res;
  cp_lcp_info info;
  cr_assert_eq(run(2, M, q, NULL, z, w, NULL, NULL, &res, &info), CP_LCP_SOLVED,
               "%s", info.reason);
  cr_assert_float_eq(z[0], 0.0, 1e-12);
  cr_assert_float_eq(z[1], 0.0, 1e-12);
}

/* ---- no solution ------------------------------------------------------ */

/* With the defaults, so also after the Lemke guard's 32 starts found
 * nothing (cp_certify_options.lemke_starts): a true verdict stays. */
static void expect_infeasible(int n, const double *M, const double *q) {
  double *buf = malloc(sizeof(double) * 2 * (size_t)n);
  cp_certify_result res;
  cp_lcp_info info;
  cp_lcp_status st = run(n, M, q, NULL, buf, buf + n, NULL, NULL, &res, &info);
  cr_assert_eq(st, CP_LCP_INFEASIBLE, "status %s: %s", cp_lcp_status_name(st),
               info.reason);
  cr_assert_leq(res.alpha, 1e-9);
  cr_assert(strstr(info.reason, "alpha") != NULL, "reason: %s", info.reason);
  cr_assert_geq(res.mip_solves, 2, "the alpha* = 0 verdict is confirmed");
  cr_assert_eq(res.mip_overruled, 0);
  free(buf);
}

Test(certify, infeasible_n1) {
  /* w = -z - 1 < 0 for every z >= 0: not even feasible. */
  const double M[1] = {-1}, q[1] = {-1};
  expect_infeasible(1, M, q);
}

Test(certify, infeasible_psd_sum) {
  /* M = [1 -1; -1 1], q = (-1, -1): w1 + w2 = -2 for every z, so w >= 0 is
   * impossible. */
  const double M[4] = {1, -1, -1, 1}, q[2] = {-1, -1};
  expect_infeasible(2, M, q);
}

Test(certify, infeasible_but_feasible) {
  /* M = [-2 1; -1 1], q = (-2, 0): w1 = -2 z1 + z2 - 2, w2 = -z1 + z2.
   * Feasible (z = (0, 2) gives w = (0, 2) >= 0) but not solvable:
   * w1 >= 0 forces z2 >= 2 + 2 z1 >= 2 > 0, so complementarity needs w2 = 0,
   * i.e. z1 = z2; then w1 = -z2 - 2 < 0. */
  const double M[4] = {-2, -1, 1, 1}, q[2] = {-2, 0};
  expect_infeasible(2, M, q);
}

/* M = [A B; 0 C] with random A, B (8x8, 8x2) and the 2x2 block C, q_C of
 * infeasible_but_feasible in the last two rows: rows 8 and 9 read
 * w_C = C z_C + q_C, which has no complementary solution, whatever A, B and
 * the first eight entries of q are. */
static void block_triangular_n10(double M[100], double q[10]) {
  enum { n = 10 };
  uint64_t s = 77;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++)
      M[i + j * n] = i < 8 ? cpt_uniform(&s, -1, 1) : 0.0;
  M[8 + 8 * n] = -2; M[9 + 8 * n] = -1; M[8 + 9 * n] = 1; M[9 + 9 * n] = 1;
  for (int i = 0; i < 8; i++) q[i] = cpt_uniform(&s, -1, 1);
  q[8] = -2;
  q[9] = 0;
}

Test(certify, infeasible_block_triangular_n10) {
  double M[100], q[10];
  block_triangular_n10(M, q);
  expect_infeasible(10, M, q);
}

/* ---- second solution -------------------------------------------------- */

Test(certify, p_matrix_second_is_decided_none) {
  /* P-matrix: exactly one solution, so the search must prove there is no
   * other support. */
  const double M[4] = {2, 1, 1, 2}, q[2] = {-1, 2};
  double z[2], w[2], z2[2] = {-7, -7}, w2[2] = {-7, -7};
  cp_certify_result res;
  cp_lcp_info info;
  cp_certify_options opt = cp_certify_defaults();
  opt.second = 1;
  cr_assert_eq(run(2, M, q, &opt, z, w, z2, w2, &res, &info), CP_LCP_SOLVED,
               "%s", info.reason);
  cr_assert_eq(res.has_second, 0);
  cr_assert_eq(res.second_decided, 1);
  cr_assert_geq(res.mip_solves, 2);
  cr_assert_float_eq(z[0], 0.5, 1e-12);
}

Test(certify, pd_random_second_is_decided_none) {
  /* M = A^T A + I/2 is positive definite (a P-matrix): unique solution. */
  enum { n = 10 };
  double A[n * n], M[n * n], q[n], z[n], w[n], z2[n], w2[n];
  uint64_t s = 5;
  for (int k = 0; k < n * n; k++) A[k] = cpt_uniform(&s, -1, 1);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      double v = i == j ? 0.5 : 0.0;
      for (int k = 0; k < n; k++) v += A[k + i * n] * A[k + j * n];
      M[i + j * n] = v;
    }
  for (int i = 0; i < n; i++) q[i] = cpt_uniform(&s, -3, 2);
  cp_certify_result res;
  cp_lcp_info info;
  cp_certify_options opt = cp_certify_defaults();
  opt.second = 1;
  cr_assert_eq(run(n, M, q, &opt, z, w, z2, w2, &res, &info), CP_LCP_SOLVED,
               "%s", info.reason);
  cr_assert_eq(res.has_second, 0);
  cr_assert_eq(res.second_decided, 1);
}

Test(certify, two_isolated_solutions_n1) {
  /* M = [-1], q = [1]: w = 1 - z; z = 0 (w = 1) and z = 1 (w = 0) are the
   * two solutions, with supports {} and {0}. */
  const double M[1] = {-1}, q[1] = {1};
  double z[1], w[1], z2[1], w2[1];
  cp_certify_result res;
  cp_lcp_info info;
  cp_certify_options opt = cp_certify_defaults();
  opt.second = 1;
  cr_assert_eq(run(1, M, q, &opt, z, w, z2, w2, &res, &info), CP_LCP_SOLVED,
               "%s", info.reason);
  cr_assert_eq(res.has_second, 1);
  cr_assert_eq(res.second_decided, 1);
  cpt_assert_lcp_solution(1, M, q, z2, 1e-6);
  cr_assert(fabs(z[0] + z2[0] - 1.0) < 1e-9 && fabs(z[0] * z2[0]) < 1e-9,
            "expected {0, 1}, got z = %g, z2 = %g", z[0], z2[0]);
  cr_assert_float_eq(w2[0], 1.0 - z2[0], 1e-9);
}

Test(certify, four_isolated_solutions_n2) {
  /* M = -I, q = (1, 1): each z_i is 0 or 1 independently (4 solutions). */
  const double M[4] = {-1, 0, 0, -1}, q[2] = {1, 1};
  double z[2], w[2], z2[2], w2[2];
  cp_certify_result res;
  cp_lcp_info info;
  cp_certify_options opt = cp_certify_defaults();
  opt.second = 1;
  cr_assert_eq(run(2, M, q, &opt, z, w, z2, w2, &res, &info), CP_LCP_SOLVED,
               "%s", info.reason);
  cr_assert_eq(res.has_second, 1);
  cpt_assert_lcp_solution(2, M, q, z2, 1e-6);
  cr_assert(support_differs(2, z, z2, 1e-6));
}

Test(certify, continuum_second_has_other_support) {
  /* M = [1 1; 1 1], q = (-1, -1): the solutions are z1 + z2 = 1, z >= 0
   * (w = 0), with supports {0}, {1} and {0, 1}. */
  const double M[4] = {1, 1, 1, 1}, q[2] = {-1, -1};
  double z[2], w[2], z2[2], w2[2];
  cp_certify_result res;
  cp_lcp_info info;
  cp_certify_options opt = cp_certify_defaults();
  opt.second = 1;
  cr_assert_eq(run(2, M, q, &opt, z, w, z2, w2, &res, &info), CP_LCP_SOLVED,
               "%s", info.reason);
  cr_assert_float_eq(z[0] + z[1], 1.0, 1e-9);
  cr_assert_eq(res.has_second, 1);
  cr_assert_eq(res.second_decided, 1);
  cpt_assert_lcp_solution(2, M, q, z2, 1e-6);
  cr_assert_float_eq(z2[0] + z2[1], 1.0, 1e-9);
  cr_assert(support_differs(2, z, z2, 1e-6), "z = (%g, %g), z2 = (%g, %g)",
            z[0], z[1], z2[0], z2[1]);
}

Test(certify, degenerate_continuum_inside_one_pattern) {
  /* M = [1 0; 0 0], q = (-1, 0): w1 = z1 - 1, w2 = 0. Solutions: z1 = 1 and
   * any z2 >= 0, supports {0} and {0, 1}. The pattern x = (1, 1) holds both
   * supports, so cuts on x alone could miss the second one; the
   * fixed-pattern LP must find it. */
  const double M[4] = {1, 0, 0, 0}, q[2] = {-1, 0};
  double z[2], w[2], z2[2], w2[2];
  cp_certify_result res;
  cp_lcp_info info;
  cp_certify_options opt = cp_certify_defaults();
  opt.second = 1;
  cr_assert_eq(run(2, M, q, &opt, z, w, z2, w2, &res, &info), CP_LCP_SOLVED,
               "%s", info.reason);
  cr_assert_float_eq(z[0], 1.0, 1e-9);
  cr_assert_eq(res.has_second, 1);
  cr_assert_eq(res.second_decided, 1);
  cpt_assert_lcp_solution(2, M, q, z2, 1e-6);
  cr_assert(support_differs(2, z, z2, 1e-6), "z = (%g, %g), z2 = (%g, %g)",
            z[0], z[1], z2[0], z2[1]);
}

Test(certify, pang_isolated_degenerate_unique) {
  /* Siconos lcp_Pang_isolated_sol.dat, copied by hand: M = [0 -1 -1; 1 0 0;
   * -1 0 0], q = (0, -1, 1). w1 = -z2 - z3 >= 0 forces z2 = z3 = 0; then
   * w2 = z1 - 1 >= 0 and w3 = 1 - z1 >= 0 force z1 = 1. The unique solution
   * z = (1, 0, 0), w = 0 is degenerate (z_i = w_i = 0 for i = 2, 3), so x
   * patterns larger than the support hold it: the fixed-pattern LPs must
   * find nothing and the answer must still be decided. */
  const double M[9] = {0, 1, -1, -1, 0, 0, -1, 0, 0}, q[3] = {0, -1, 1};
  double z[3], w[3], z2[3], w2[3];
  cp_certify_result res;
  cp_lcp_info info;
  cp_certify_options opt = cp_certify_defaults();
  opt.second = 1;
  cr_assert_eq(run(3, M, q, &opt, z, w, z2, w2, &res, &info), CP_LCP_SOLVED,
               "%s", info.reason);
  cr_assert_float_eq(z[0], 1.0, 1e-9);
  cr_assert_float_eq(z[1], 0.0, 1e-9);
  cr_assert_float_eq(z[2], 0.0, 1e-9);
  cr_assert_eq(res.has_second, 0);
  cr_assert_eq(res.second_decided, 1);
}

Test(certify, max_cuts_zero_leaves_second_undecided) {
  const double M[1] = {-1}, q[1] = {1};
  double z[1], w[1], z2[1], w2[1];
  cp_certify_result res;
  cp_lcp_info info;
  cp_certify_options opt = cp_certify_defaults();
  opt.second = 1;
  opt.max_cuts = 0;
  cr_assert_eq(run(1, M, q, &opt, z, w, z2, w2, &res, &info), CP_LCP_SOLVED);
  cr_assert_eq(res.has_second, 0);
  cr_assert_eq(res.second_decided, 0);
  cr_assert_eq(res.mip_solves, 1);
}

/* ---- random planted instances ----------------------------------------- */

/* kind 0: M uniform in [-1, 1] (no structure: several solutions or none are
 * both possible, but the planted one exists); kind 1: M = A^T A / n + I/10;
 * kind 2: kind 0 with rows scaled by 10^U(-4,4) and columns by 10^U(-3,3)
 * (the LCP with D M E, D q has the solutions E^-1 z).
 * z*_i in [0.1, 2] on a random half of the indices, w*_i likewise on the
 * rest, q = w* - M z*. */
static void plant(uint64_t *s, int n, int kind, double *M, double *q) {
  double *z = malloc(sizeof(double) * 2 * (size_t)n), *w = z + n;
  if (kind == 1) {
    double *A = malloc(sizeof(double) * (size_t)n * (size_t)n);
    for (int k = 0; k < n * n; k++) A[k] = cpt_uniform(s, -1, 1);
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        double v = i == j ? 0.1 : 0.0;
        for (int k = 0; k < n; k++) v += A[k + i * n] * A[k + j * n] / n;
        M[i + j * n] = v;
      }
    free(A);
  } else {
    for (int k = 0; k < n * n; k++) M[k] = cpt_uniform(s, -1, 1);
  }
  for (int i = 0; i < n; i++) {
    int basic = cpt_rand(s) & 1;
    z[i] = basic ? cpt_uniform(s, 0.1, 2) : 0.0;
    w[i] = basic ? 0.0 : cpt_uniform(s, 0.1, 2);
  }
  if (kind == 2) {
    double *d = malloc(sizeof(double) * 2 * (size_t)n), *e = d + n;
    for (int i = 0; i < n; i++) {
      d[i] = pow(10.0, cpt_uniform(s, -4, 4));
      e[i] = pow(10.0, cpt_uniform(s, -3, 3));
    }
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) M[i + j * n] *= d[i] * e[j];
    for (int i = 0; i < n; i++) {
      z[i] /= e[i];
      w[i] *= d[i];
    }
    free(d);
  }
  for (int i = 0; i < n; i++) {
    double v = w[i];
    for (int j = 0; j < n; j++) v -= M[i + j * n] * z[j];
    q[i] = v;
  }
  free(z);
}

static void planted_case(int n, int kind, uint64_t seed) {
  double *M = malloc(sizeof(double) * (size_t)n * (size_t)n);
  double *v = malloc(sizeof(double) * 3 * (size_t)n);
  double *q = v, *z = v + n, *w = v + 2 * n;
  uint64_t s = seed;
  plant(&s, n, kind, M, q);
  cp_certify_result res;
  cp_lcp_info info;
  cp_certify_options opt = cp_certify_defaults();
  cp_lcp_status st = run(n, M, q, &opt, z, w, NULL, NULL, &res, &info);
  cr_assert_eq(st, CP_LCP_SOLVED, "n %d kind %d seed %llu: %s: %s", n, kind,
               (unsigned long long)seed, cp_lcp_status_name(st), info.reason);
  /* The solver's own w is M z + q. */
  for (int i = 0; i < n; i++) {
    double r = q[i];
    for (int j = 0; j < n; j++) r += M[i + j * n] * z[j];
    cr_assert_leq(fabs(r - w[i]), tol_for(n, q));
  }
  free(M);
  free(v);
}

Test(certify, planted_general_n10_to_40) {
  for (int n = 10; n <= 40; n += 10)
    for (uint64_t seed = 1; seed <= 3; seed++) planted_case(n, 0, 100 * n + seed);
}

Test(certify, planted_pd_n10_to_40) {
  for (int n = 10; n <= 40; n += 15)
    for (uint64_t seed = 1; seed <= 2; seed++) planted_case(n, 1, 200 * n + seed);
}

Test(certify, planted_badly_scaled_n10_to_30) {
  for (int n = 10; n <= 30; n += 10)
    for (uint64_t seed = 1; seed <= 3; seed++) planted_case(n, 2, 300 * n + seed);
}

Test(certify, planted_pd_n200) {
  /* The size of the paper's largest problems: must not take long (the root
   * LP's basis reading solves a PD problem) and must not break. */
  planted_case(200, 1, 2024);
}

/* ---- limits and guards ------------------------------------------------ */

Test(certify, tiny_time_limit_never_crashes) {
  enum { n = 200 };
  double *M = malloc(sizeof(double) * n * n), q[n], z[n], w[n], z2[n], w2[n];
  uint64_t s = 4242;
  plant(&s, n, 0, M, q);
  cp_certify_result res;
  cp_lcp_info info;
  cp_certify_options opt = cp_certify_defaults();
  opt.time_limit_s = 1e-3;
  opt.second = 1;
  cp_lcp_status st = run(n, M, q, &opt, z, w, z2, w2, &res, &info);
  cr_assert(st == CP_LCP_SOLVED || st == CP_LCP_TIME_LIMIT, "status %s: %s",
            cp_lcp_status_name(st), info.reason);
  if (st == CP_LCP_SOLVED && res.has_second)
    cpt_assert_lcp_solution(n, M, q, z2, tol_for(n, q));
  if (st == CP_LCP_SOLVED && !res.has_second) cr_assert(!res.second_decided ||
                                                        res.mip_solves >= 2);
  free(M);
}

/* node_limit is a work limit: a budget equal to what an unlimited call
 * used reproduces that call exactly (status, answer bits, second solution);
 * a budget of one node stops every search that needs more, as
 * CP_LCP_ITERATION_CAP with a reason that names the node limit; and no clock
 * is read for it (time_limit_s off, a clock that would say "over" at every
 * read changes nothing). */
static double always_late(void *ctx) {
  int *reads = ctx;
  return 1e9 * (double)++*reads;
}

static void node_budget_case(int n, const double *M, const double *q, int second) {
  double *v = malloc(sizeof(double) * 8 * (size_t)n);
  double *z0 = v, *w0 = v + n, *z20 = v + 2 * n, *w20 = v + 3 * n;
  double *z = v + 4 * n, *w = v + 5 * n, *z2 = v + 6 * n, *w2 = v + 7 * n;
  cp_certify_result r0, r;
  cp_lcp_info i0, info;
  cp_certify_options opt = cp_certify_defaults();
  opt.time_limit_s = 0;
  opt.second = second;
  const cp_lcp_status s0 = run(n, M, q, &opt, z0, w0, z20, w20, &r0, &i0);
  cr_assert(s0 == CP_LCP_SOLVED || s0 == CP_LCP_INFEASIBLE, "%s: %s",
            cp_lcp_status_name(s0), i0.reason);
  cr_assert_gt(i0.iterations, 1, "the instance needs more than one node");
  /* The exact budget: the same call, bit for bit. */
  int reads = 0;
  opt.node_limit = i0.iterations;
  opt.clock = always_late;
  opt.clock_ctx = &reads;
  const cp_lcp_status s1 = run(n, M, q, &opt, z, w, z2, w2, &r, &info);
  cr_assert_eq(s1, s0, "%s: %s", cp_lcp_status_name(s1), info.reason);
  cr_assert_eq(info.iterations, i0.iterations);
  cr_assert_eq(r.mip_solves, r0.mip_solves);
  cr_assert_eq(reads, 0, "no clock read without a time limit");
  if (s0 == CP_LCP_SOLVED) {
    cr_assert(memcmp(z, z0, sizeof(double) * (size_t)n) == 0);
    cr_assert_eq(r.has_second, r0.has_second);
    cr_assert_eq(r.second_decided, r0.second_decided);
    if (r0.has_second) cr_assert(memcmp(z2, z20, sizeof(double) * (size_t)n) == 0);
  }
  /* One node: a search that needed more ends undecided at the limit. */
  opt.node_limit = 1;
  const cp_lcp_status s2 = run(n, M, q, &opt, z, w, z2, w2, &r, &info);
  if (s0 == CP_LCP_INFEASIBLE) {
    cr_assert_eq(s2, CP_LCP_ITERATION_CAP, "%s: %s", cp_lcp_status_name(s2),
                 info.reason);
    cr_assert(strstr(info.reason, "node limit (1 ") != NULL, "%s", info.reason);
  } else {
    /* Either the root's heuristics found the answer (then the second
     * search is what the limit stops) or the call is undecided. */
    cr_assert(s2 == CP_LCP_SOLVED || s2 == CP_LCP_ITERATION_CAP, "%s: %s",
              cp_lcp_status_name(s2), info.reason);
    if (s2 == CP_LCP_SOLVED && second && !r0.second_decided) cr_assert(!r.second_decided);
    if (s2 == CP_LCP_SOLVED && second && r0.second_decided && r0.has_second == 0)
      cr_assert(!r.second_decided || info.iterations == i0.iterations);
  }
  cr_assert_leq(info.iterations, i0.iterations);
  free(v);
}

Test(certify, node_limit_is_a_work_limit_infeasible) {
  double M[100], q[10];
  block_triangular_n10(M, q);
  node_budget_case(10, M, q, 0);
}

Test(certify, node_limit_is_a_work_limit_second_solution) {
  enum { n = 25 };
  double *M = malloc(sizeof(double) * n * n), q[n];
  uint64_t s = 2 * n + 7;
  plant(&s, n, 0, M, q);
  node_budget_case(n, M, q, 1);
  free(M);
}

Test(certify, rejects_bad_input) {
  double M[4] = {1, 0, 0, 1}, q[2] = {-1, -1}, z[2], w[2];
  cp_certify_result res;
  cp_lcp_info info;
  M[1] = NAN;
  cr_assert_eq(cp_certify(2, M, q, NULL, z, w, NULL, NULL, &res, &info),
               CP_LCP_NUMERICAL);
  cr_assert(strstr(info.reason, "non-finite") != NULL, "%s", info.reason);
  M[1] = 0;
  q[1] = INFINITY;
  cr_assert_eq(cp_certify(2, M, q, NULL, z, w, NULL, NULL, &res, &info),
               CP_LCP_NUMERICAL);
  q[1] = -1;
  cr_assert_eq(cp_certify(0, M, q, NULL, z, w, NULL, NULL, &res, &info),
               CP_LCP_NUMERICAL);
  cp_certify_options opt = cp_certify_defaults();
  opt.second = 1;
  cr_assert_eq(cp_certify(2, M, q, &opt, z, w, NULL, NULL, &res, &info),
               CP_LCP_NUMERICAL);
  cr_assert_eq(res.mip_solves, 0);
}

Test(certify, glpk_internal_error_is_recovered) {
  /* A GLPK memory limit of 1 MB makes glp_alloc fail inside the solve of an
   * n = 200 problem; GLPK then calls its error routine, which would abort
   * the process. The guard must turn that into CP_LCP_NUMERICAL, release
   * GLPK's environment (the limit goes with it) and leave the next call
   * working. */
  enum { n = 200 };
  double *M = malloc(sizeof(double) * n * n), q[n], z[n], w[n];
  uint64_t s = 99;
  plant(&s, n, 1, M, q);
  cp_certify_result res;
  cp_lcp_info info;
  glp_mem_limit(1);
  cp_lcp_status st = cp_certify(n, M, q, NULL, z, w, NULL, NULL, &res, &info);
  cr_assert_eq(st, CP_LCP_NUMERICAL, "status %s: %s", cp_lcp_status_name(st),
               info.reason);
  cr_assert(strstr(info.reason, "GLPK internal error") != NULL, "%s",
            info.reason);
  st = run(n, M, q, NULL, z, w, NULL, NULL, &res, &info);
  cr_assert_eq(st, CP_LCP_SOLVED, "after recovery: %s", info.reason);
  free(M);
}

Test(certify, glpk_terminal_state_restored) {
  /* cp_certify must leave GLPK's global terminal switch as it found it. */
  const double M[1] = {2}, q[1] = {-1};
  double z[1], w[1];
  cp_certify_result res;
  cp_lcp_info info;
  glp_term_out(GLP_OFF);
  cr_assert_eq(cp_certify(1, M, q, NULL, z, w, NULL, NULL, &res, &info),
               CP_LCP_SOLVED);
  cr_assert_eq(glp_term_out(GLP_ON), GLP_OFF);
  cr_assert_eq(cp_certify(1, M, q, NULL, z, w, NULL, NULL, &res, &info),
               CP_LCP_SOLVED);
  cr_assert_eq(glp_term_out(GLP_ON), GLP_ON);
  cr_assert_float_eq(z[0], 0.5, 1e-12);
  glp_free_env();
}

/* Regression (found by the paper's study, data set p10 mu = 0.1): q holds
 * rounding noise (entries ~1e-15 |q|) and GLPK returned an "optimal" MIP
 * point that broke its own equality rows; cp_certify retries on the cleaned
 * q and the answer must verify on the original data. */
Test(certify, rounding_noise_in_q) {
  cp_lcp lcp;
  cpt_load_lcp("lcp/noisy_q_p10_mu0.1.json", &lcp);
  double qmax = 0, tiny = 0;
  for (int i = 0; i < lcp.n; i++) qmax = fmax(qmax, fabs(lcp.q[i]));
  for (int i = 0; i < lcp.n; i++)
    if (lcp.q[i] != 0 && fabs(lcp.q[i]) < 1e-12 * qmax) tiny++;
  cr_assert_gt(tiny, 0, "the file no longer has rounding-level entries in q");
  double *z = calloc(2 * (size_t)lcp.n, sizeof(double)), *w = z + lcp.n;
  cp_certify_options opt = cp_certify_defaults();
  cp_certify_result res;
  cp_lcp_info info;
  cr_assert_eq(cp_certify(lcp.n, lcp.M, lcp.q, &opt, z, w, NULL, NULL, &res, &info),
               CP_LCP_SOLVED, "%s", info.reason);
  cpt_assert_lcp_solution(lcp.n, lcp.M, lcp.q, z, 1e-6 * fmax(1, qmax));
  free(z);
  cp_lcp_free(&lcp);
}

/* ---- one time budget per call ---------------------------------------- */

/* A scripted clock: reads return now; the GLPK test hook (contact/glpkout.h),
 * asked once per MIP solve with its problem loaded, moves it on by jump (the
 * solve "takes" jump seconds) and fails the first solve with a GLPK error,
 * so that cp_certify retries on cleaned q (its second MIP). */
typedef struct {
  double now, jump;
  int solves;
} script_clock;

static double script_read(void *ctx) { return ((script_clock *)ctx)->now; }

static int script_fault(void *ctx, const char *where) {
  script_clock *c = ctx;
  if (strcmp(where, "certify")) return 0;
  c->now += c->jump;
  return c->solves++ == 0;
}

/* M = diag(2, 1), q = (-1, 1e-15): q's second entry is rounding-level, so a
 * failed first solve is retried on q = (-1, 0). */
static cp_lcp_status budget_run(double limit, double jump, script_clock *c,
                                cp_certify_result *res, cp_lcp_info *info, double *z) {
  static const double M[4] = {2, 0, 0, 1}, q[2] = {-1, 1e-15};
  double w[2];
  memset(c, 0, sizeof *c);
  c->jump = jump;
  cp_certify_options opt = cp_certify_defaults();
  opt.time_limit_s = limit;
  opt.clock = script_read;
  opt.clock_ctx = c;
  cp_glpk_set_fault(script_fault, c);
  cp_lcp_status st = cp_certify(2, M, q, &opt, z, w, NULL, NULL, res, info);
  cp_glpk_set_fault(NULL, NULL);
  return st;
}

/* The retry's MIP gets only what is left of the call's time_limit_s: after a
 * first solve that used 11 of 10 s it is not made at all (TIME_LIMIT, one
 * solve, GLPK asked once); after one that used 4 s it runs and solves. With
 * no limit the retry always runs. No wall time is measured. */
Test(certify, retry_shares_the_call_budget) {
  script_clock c;
  cp_certify_result res;
  cp_lcp_info info;
  double z[2];
  cp_lcp_status st = budget_run(10, 11, &c, &res, &info, z);
  cr_assert_eq(st, CP_LCP_TIME_LIMIT, "%s: %s", cp_lcp_status_name(st), info.reason);
  cr_assert(strstr(info.reason, "time limit"), "%s", info.reason);
  cr_assert_eq(c.solves, 1, "GLPK asked %d times", c.solves);
  cr_assert_eq(res.mip_solves, 1);

  st = budget_run(10, 4, &c, &res, &info, z);
  cr_assert_eq(st, CP_LCP_SOLVED, "%s: %s", cp_lcp_status_name(st), info.reason);
  cr_assert_eq(c.solves, 2);
  cr_assert_eq(res.mip_solves, 2);
  cr_assert_gt(res.q_cleaned, 0);
  cr_assert_float_eq(z[0], 0.5, 1e-12);
  cr_assert_eq(z[1], 0);

  st = budget_run(0, 1e9, &c, &res, &info, z); /* no limit */
  cr_assert_eq(st, CP_LCP_SOLVED, "%s: %s", cp_lcp_status_name(st), info.reason);
  cr_assert_eq(c.solves, 2);
}

/* The confirming solve of an alpha* = 0 verdict (the second MIP of one
 * attempt) is bounded by the same deadline: the infeasible M = [-1],
 * q = [-1] needs both MIPs for its proof, and when the first used the whole
 * budget the answer is TIME_LIMIT, not a verdict. */
static int jump_only(void *ctx, const char *where) {
  script_clock *c = ctx;
  if (!strcmp(where, "certify")) {
    c->now += c->jump;
    c->solves++;
  }
  return 0;
}

Test(certify, confirming_solve_shares_the_call_budget) {
  const double M[1] = {-1}, q[1] = {-1};
  double z[1], w[1];
  script_clock c;
  cp_certify_result res;
  cp_lcp_info info;
  for (int late = 0; late < 2; ++late) {
    memset(&c, 0, sizeof c);
    c.jump = late ? 11 : 4;
    cp_certify_options opt = cp_certify_defaults();
    opt.time_limit_s = 10;
    opt.clock = script_read;
    opt.clock_ctx = &c;
    cp_glpk_set_fault(jump_only, &c);
    cp_lcp_status st = cp_certify(1, M, q, &opt, z, w, NULL, NULL, &res, &info);
    cp_glpk_set_fault(NULL, NULL);
    cr_assert_eq(st, late ? CP_LCP_TIME_LIMIT : CP_LCP_INFEASIBLE, "late %d: %s: %s",
                 late, cp_lcp_status_name(st), info.reason);
    cr_assert_eq(c.solves, late ? 1 : 2, "late %d: %d solves", late, c.solves);
    cr_assert_eq(res.mip_solves, late ? 1 : 2);
  }
}

/* ---- a "no solution" verdict that Lemke overrules ---------------------- */

/* The paper study's p22 at mu = 1.0 (session 20's copy): a solution exists
 * (Lemke finds one that passes the check), yet GLPK 5.0 ends both MIP solves
 * at alpha* = 0: without the guard that wrong verdict is the answer (if a
 * later GLPK decides it right, this test says so and needs another
 * instance). With the default lemke_starts the answer is the solution,
 * flagged mip_overruled, verified here independently. */
Test(certify, lemke_overrules_a_wrong_no_solution) {
  cp_lcp lcp;
  cpt_load_lcp("lcp/glpk_false_none_p22_mu1.0.json", &lcp);
  const int n = lcp.n;
  double qmax = 1;
  for (int i = 0; i < n; i++) qmax = fmax(qmax, fabs(lcp.q[i]));
  double *z = calloc(4 * (size_t)n, sizeof(double)), *w = z + n, *z2 = w + n, *w2 = z2 + n;
  cp_certify_options opt = cp_certify_defaults();
  cr_assert_eq(opt.lemke_starts, 32);
  cp_certify_result res;
  cp_lcp_info info;
  opt.lemke_starts = 0;
  const cp_lcp_status raw = cp_certify(n, lcp.M, lcp.q, &opt, z, w, NULL, NULL, &res, &info);
  cr_assert_eq(res.mip_overruled, 0);
  cr_assert_eq(raw, CP_LCP_INFEASIBLE,
               "GLPK now decides this data set right (%s): the guard's test needs "
               "another instance that it gets wrong", cp_lcp_status_name(raw));
  opt.lemke_starts = 32;
  opt.second = 1;
  cr_assert_eq(cp_certify(n, lcp.M, lcp.q, &opt, z, w, z2, w2, &res, &info), CP_LCP_SOLVED,
               "%s", info.reason);
  cpt_assert_lcp_solution(n, lcp.M, lcp.q, z, 1e-6 * qmax);
  cr_assert_eq(info.solver, CP_SOLVER_CERTIFY);
  cr_assert_eq(res.mip_overruled, 1);
  /* the MIPs cannot be trusted here: no verdict on a second solution */
  cr_assert_eq(res.has_second, 0);
  cr_assert_eq(res.second_decided, 0);
  cr_assert_leq(res.alpha, opt.alpha_tol);
  free(z);
  cp_lcp_free(&lcp);
}
