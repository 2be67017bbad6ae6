/// \file tests/contact/test_fip.c
/// Tests of the feasible interior point method (contact/fip.h). Test matrices
/// are generated here (tests/support.h generator), independently of
/// experiments/lcpgen; every answer is verified by cpt_assert_lcp_solution.
/// No per-test .timeout (Criterion's leaks under LeakSanitizer, see
/// test_lemke_degenerate.c): meson's timeout for the executable bounds it.
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <stdio.h>

#include "contact/fip.h"
#include "tests/support.h"

static double qscale(int n, const double *q) {
  double m = 1.0;
  for (int i = 0; i < n; i++)
    if (fabs(q[i]) > m) m = fabs(q[i]);
  return m;
}

static double wtz(int n, const double *w, const double *z) {
  double s = 0.0;
  for (int i = 0; i < n; i++) s += w[i] * z[i];
  return s;
}

/// Monotone LCP with a planted solution: M = B^T B + (C - C^T), entries of
/// B, C uniform in [-1, 1]; z* in [0.1, 2] on a random half of the indices,
/// w* in [0.1, 2] on the others; q = w* - M z*. M is positive definite (B
/// square random), so a strictly feasible point exists.
static void gen_monotone(int n, uint64_t seed, double *M, double *q,
                         double *zstar) {
  uint64_t s = seed * 0x2545F4914F6CDD1Dull + 17;
  double *B = malloc(sizeof(double) * (size_t)n * n * 2);
  cr_assert_not_null(B);
  double *C = B + (size_t)n * n;
  for (size_t k = 0; k < (size_t)n * n; k++) {
    B[k] = cpt_uniform(&s, -1, 1);
    C[k] = cpt_uniform(&s, -1, 1);
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double a = 0.0;
      for (int k = 0; k < n; k++)
        a += B[k + (size_t)i * n] * B[k + (size_t)j * n];
      M[i + (size_t)j * n] = a + C[i + (size_t)j * n] - C[j + (size_t)i * n];
    }
  double *ws = malloc(sizeof(double) * (size_t)n);
  cr_assert_not_null(ws);
  for (int i = 0; i < n; i++) {
    if (cpt_rand(&s) & 1) {
      zstar[i] = cpt_uniform(&s, 0.1, 2);
      ws[i] = 0.0;
    } else {
      zstar[i] = 0.0;
      ws[i] = cpt_uniform(&s, 0.1, 2);
    }
  }
  for (int i = 0; i < n; i++) {
    double a = 0.0;
    for (int j = 0; j < n; j++) a += M[i + (size_t)j * n] * zstar[j];
    q[i] = ws[i] - a;
  }
  free(ws);
  free(B);
}

/// Upper triangular M with diagonal in [1, 2] and off-diagonal entries in
/// [-3, 3]: every principal submatrix is triangular with a positive diagonal,
/// so M is a P-matrix, but its symmetric part is indefinite (not monotone).
static void gen_ptriangular(int n, uint64_t seed, double *M, double *q,
                            double *zstar) {
  uint64_t s = seed + 99;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++)
      M[i + (size_t)j * n] = i == j  ? cpt_uniform(&s, 1, 2)
                             : i < j ? cpt_uniform(&s, -3, 3)
                                     : 0.0;
  for (int i = 0; i < n; i++)
    zstar[i] = (i % 3 == 0) ? 0.0 : cpt_uniform(&s, 0.1, 1);
  for (int i = 0; i < n; i++) {
    double a = zstar[i] == 0.0 ? cpt_uniform(&s, 0.1, 1) : 0.0;
    for (int j = 0; j < n; j++) a -= M[i + (size_t)j * n] * zstar[j];
    q[i] = a;
  }
}

Test(fip, defaults) {
  cp_fip_options o = cp_fip_defaults();
  cr_expect_eq(o.max_iter, 300);
  cr_expect_float_eq(o.gap_tol, 1e-6, 1e-20);
  cr_expect_float_eq(o.beta, 0.1, 1e-15);
  cr_expect_eq(o.zeta, 0.0);
  cr_expect_float_eq(o.kappa, 0.95, 1e-15);
  cr_expect_float_eq(o.rho, 0.5, 1e-15);
  cr_expect_float_eq(o.sigma, 1e-4, 1e-18);
  cr_expect_float_eq(o.nfp_tol, 1e-9, 1e-22);
  cr_expect_eq(o.polish, 1);
  cr_expect_float_eq(o.check.rel_tol, cp_check_defaults().rel_tol, 1e-20);
}

/* M = [[2, 1], [1, 2]] (symmetric), q = (-5, -6): both z positive,
 * 2 z1 + z2 = 5, z1 + 2 z2 = 6 -> z = (4/3, 7/3), w = 0. */
Test(fip, hand_2x2_both_active) {
  const double M[4] = {2, 1, 1, 2};
  const double q[2] = {-5, -6};
  double z[2], w[2];
  cp_lcp_info info;
  cp_lcp_status st = cp_fip_solve(2, M, q, NULL, z, w, &info);
  cr_assert_eq(st, CP_LCP_SOLVED, "status %s: %s", cp_lcp_status_name(st),
               info.reason);
  cr_assert_eq(info.status, st);
  cr_expect_eq(info.solver, CP_SOLVER_FIP);
  cr_expect_eq(info.starts, 1);
  cr_expect(info.iterations >= 1 && info.iterations <= 300);
  cr_expect_float_eq(z[0], 4.0 / 3.0, 1e-9);
  cr_expect_float_eq(z[1], 7.0 / 3.0, 1e-9);
  cpt_assert_lcp_solution(2, M, q, z, 1e-9);
}

/* Same M, q = (-1, 2): z = (1/2, 0), w = (0, 5/2). (Column-major storage
 * is pinned down by the nonsymmetric p_matrix_2x2 below.) */
Test(fip, hand_2x2_one_active) {
  const double M[4] = {2, 1, 1, 2};
  const double q[2] = {-1, 2};
  double z[2], w[2];
  cp_lcp_info info;
  cr_assert_eq(cp_fip_solve(2, M, q, NULL, z, w, &info), CP_LCP_SOLVED, "%s",
               info.reason);
  cr_expect_float_eq(z[0], 0.5, 1e-9);
  cr_expect(fabs(z[1]) <= 1e-9);
  cr_expect_float_eq(w[1], 2.5, 1e-8);
  cpt_assert_lcp_solution(2, M, q, z, 1e-9);
}

/* P-matrix, not monotone: M = [[1, -3], [0, 1]] (row-major view), stored
 * column-major as {1, 0, -3, 1}. Principal minors 1, 1, 1 > 0, x^T M x =
 * x1^2 - 3 x1 x2 + x2^2 is indefinite. q = (-1, -1): z = (4, 1), w = 0
 * (z1 - 3 z2 = 1, z2 = 1). Storing M transposed would give another answer,
 * so this also pins down the column-major convention. */
Test(fip, p_matrix_2x2) {
  const double M[4] = {1, 0, -3, 1};
  const double q[2] = {-1, -1};
  double z[2], w[2];
  cp_lcp_info info;
  cr_assert_eq(cp_fip_solve(2, M, q, NULL, z, w, &info), CP_LCP_SOLVED, "%s",
               info.reason);
  cr_expect_float_eq(z[0], 4.0, 1e-8);
  cr_expect_float_eq(z[1], 1.0, 1e-8);
  cpt_assert_lcp_solution(2, M, q, z, 1e-8);
}

/* Random triangular P-matrices (not monotone) with a planted solution, which
 * is the unique one since M is P. */
Test(fip, p_matrix_random) {
  for (int n = 3; n <= 15; n += 4) {
    double *M = malloc(sizeof(double) * (size_t)n * n);
    double *q = malloc(sizeof(double) * (size_t)n * 3);
    cr_assert(M && q);
    double *zs = q + n, *z = zs + n;
    double w[15];
    gen_ptriangular(n, (uint64_t)n, M, q, zs);
    cp_lcp_info info;
    cp_lcp_status st = cp_fip_solve(n, M, q, NULL, z, w, &info);
    cr_assert_eq(st, CP_LCP_SOLVED, "n=%d: %s: %s", n, cp_lcp_status_name(st),
                 info.reason);
    cpt_assert_lcp_solution(n, M, q, z, 1e-6 * qscale(n, q));
    for (int i = 0; i < n; i++)
      cr_expect(fabs(z[i] - zs[i]) <= 1e-6 * (1 + fabs(zs[i])),
                "n=%d z[%d] = %g, planted %g", n, i, z[i], zs[i]);
    free(M);
    free(q);
  }
}

/* The main property: random monotone planted LCPs, n = 5..80, reach
 * w^T z <= 1e-6 within 300 Newton steps before any polishing, and the
 * polished answer is a solution as well. */
Test(fip, random_monotone) {
  static const int sizes[] = {5, 10, 20, 40, 80};
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
    const int n = sizes[si];
    double *M = malloc(sizeof(double) * (size_t)n * n);
    double *v = malloc(sizeof(double) * (size_t)n * 4);
    cr_assert(M && v);
    double *q = v, *zs = v + n, *z = v + 2 * n, *w = v + 3 * n;
    for (uint64_t seed = 1; seed <= 4; seed++) {
      gen_monotone(n, seed, M, q, zs);
      cp_fip_options o = cp_fip_defaults();
      o.polish = 0;
      cp_lcp_info info;
      cp_lcp_status st = cp_fip_solve(n, M, q, &o, z, w, &info);
      cr_assert_eq(st, CP_LCP_SOLVED, "n=%d seed=%d: %s: %s", n, (int)seed,
                   cp_lcp_status_name(st), info.reason);
      cr_expect(info.iterations >= 1 && info.iterations <= 300);
      /* Regression guard: these take 10-20 steps with the defaults. */
      cr_expect(info.iterations <= 40, "n=%d seed=%d: %d iterations", n,
                (int)seed, info.iterations);
      for (int i = 0; i < n; i++)
        cr_assert(z[i] > 0.0 && w[i] > 0.0,
                  "unpolished iterate must be interior");
      const double g = wtz(n, w, z);
      cr_assert(g <= 1e-6, "n=%d seed=%d: w^T z = %g", n, (int)seed, g);
      cpt_assert_lcp_solution(n, M, q, z, 1e-6 * qscale(n, q));

      st = cp_fip_solve(n, M, q, NULL, z, w, &info);
      cr_assert_eq(st, CP_LCP_SOLVED, "polished n=%d: %s", n, info.reason);
      cpt_assert_lcp_solution(n, M, q, z, 1e-9 * qscale(n, q));
    }
    free(M);
    free(v);
  }
}

/* The polished answer is exact to rounding: complementarity far below the
 * interior point's own 1e-6. */
Test(fip, polish_tightens) {
  const int n = 20;
  double M[400], q[20], zs[20], z[20], w[20];
  gen_monotone(n, 7, M, q, zs);
  cp_lcp_info info;
  cr_assert_eq(cp_fip_solve(n, M, q, NULL, z, w, &info), CP_LCP_SOLVED);
  cr_expect(info.complementarity <= 1e-12, "comp %g", info.complementarity);
  for (int i = 0; i < n; i++)
    cr_expect(fabs(z[i] - zs[i]) <= 1e-8, "z[%d] %g vs %g", i, z[i], zs[i]);
}

/* Opposing fingers: w1 = z1 - z2 and w2 = z2 - z1, so w1 + w2 = 0 and the
 * two gaps cannot both be positive: phase I has t* = 0. (The LCP itself is
 * solvable, e.g. z = 0: NFP is about the method, not the problem.) */
Test(fip, no_strict_feasible_opposing) {
  const double M[4] = {1, -1, -1, 1};
  const double q[2] = {0, 0};
  double z[2], w[2];
  cp_lcp_info info;
  cp_lcp_status st = cp_fip_solve(2, M, q, NULL, z, w, &info);
  cr_assert_eq(st, CP_LCP_NO_STRICT_FEASIBLE, "%s: %s",
               cp_lcp_status_name(st), info.reason);
  cr_expect_eq(info.status, st);
  cr_expect_eq(info.iterations, 0);
  cr_expect_eq(info.solver, CP_SOLVER_FIP);
  cr_expect(strstr(info.reason, "no strictly feasible point (phase I t* =") !=
                NULL,
            "reason: %s", info.reason);
  cr_expect(strstr(info.reason, "rounding") == NULL, "reason: %s",
            info.reason);
}

/* Nearly opposing fingers: w1 + w2 = 2 eps, so t* = eps exactly (z1 = z2
 * large, w = (eps, eps)). With the default nfp_tol the method runs (z = 0
 * solves it); with nfp_tol above eps the phase I value itself must trigger
 * NFP, and the reason reports t*. */
Test(fip, nfp_tol_option) {
  const double eps = 1e-6;
  const double M[4] = {1, -1, -1, 1};
  const double q[2] = {eps, eps};
  double z[2], w[2];
  cp_lcp_info info;
  cp_lcp_status st = cp_fip_solve(2, M, q, NULL, z, w, &info);
  cr_assert_eq(st, CP_LCP_SOLVED, "%s: %s", cp_lcp_status_name(st),
               info.reason);
  cpt_assert_lcp_solution(2, M, q, z, 1e-9);

  cp_fip_options o = cp_fip_defaults();
  o.nfp_tol = 1e-5;
  st = cp_fip_solve(2, M, q, &o, z, w, &info);
  cr_assert_eq(st, CP_LCP_NO_STRICT_FEASIBLE, "%s", cp_lcp_status_name(st));
  cr_expect(strstr(info.reason, "(phase I t* = 1e-06)") != NULL, "%s",
            info.reason);
}

/* Grasp-like: a random 6x6 LCP whose rows 0 and 1 are negatives of each
 * other (q too), so w0 + w1 == 0 identically. */
Test(fip, no_strict_feasible_grasp) {
  const int n = 6;
  double M[36], q[6], z[6], w[6];
  uint64_t s = 5;
  for (int k = 0; k < n * n; k++) M[k] = cpt_uniform(&s, -1, 1);
  for (int i = 0; i < n; i++) {
    M[i + i * n] += 3.0;
    q[i] = cpt_uniform(&s, -1, 1);
  }
  for (int j = 0; j < n; j++) M[1 + j * n] = -M[0 + j * n];
  q[1] = -q[0];
  cp_lcp_info info;
  cp_lcp_status st = cp_fip_solve(n, M, q, NULL, z, w, &info);
  cr_assert_eq(st, CP_LCP_NO_STRICT_FEASIBLE, "%s: %s",
               cp_lcp_status_name(st), info.reason);
  cr_expect(strstr(info.reason, "no strictly feasible point") != NULL);
}

/* Infeasible: w = -z - 1 < 0 for all z >= 0; the phase I LP itself is
 * infeasible. */
Test(fip, infeasible_1x1) {
  const double M[1] = {-1};
  const double q[1] = {-1};
  double z[1], w[1];
  cp_lcp_info info;
  cp_lcp_status st = cp_fip_solve(1, M, q, NULL, z, w, &info);
  cr_assert_eq(st, CP_LCP_NO_STRICT_FEASIBLE, "%s: %s",
               cp_lcp_status_name(st), info.reason);
  cr_expect(strstr(info.reason, "no strictly feasible point") != NULL);
}

/* Infeasible in a larger problem: row 2 of w is -sum z - 1. */
Test(fip, infeasible_row) {
  const int n = 4;
  double M[16], q[4] = {1, 1, -1, 1}, z[4], w[4];
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) M[i + j * n] = i == 2 ? -1.0 : (i == j);
  cp_lcp_info info;
  cr_assert_eq(cp_fip_solve(n, M, q, NULL, z, w, &info),
               CP_LCP_NO_STRICT_FEASIBLE, "%s", info.reason);
}

/* Feasible but only on the boundary: w1 = -z1 >= 0 forces z1 = 0, so
 * t* = 0 although z = 0 solves the LCP. */
Test(fip, feasible_not_strictly) {
  const double M[4] = {-1, 0, 0, 1};
  const double q[2] = {0, 1};
  double z[2], w[2];
  cp_lcp_info info;
  cr_assert_eq(cp_fip_solve(2, M, q, NULL, z, w, &info),
               CP_LCP_NO_STRICT_FEASIBLE, "%s", info.reason);
  cr_expect(strstr(info.reason, "t* =") != NULL, "%s", info.reason);
}

Test(fip, iteration_cap) {
  const int n = 20;
  double M[400], q[20], zs[20], z[20], w[20];
  gen_monotone(n, 3, M, q, zs);
  cp_fip_options o = cp_fip_defaults();
  o.max_iter = 2;
  cp_lcp_info info;
  cp_lcp_status st = cp_fip_solve(n, M, q, &o, z, w, &info);
  cr_assert_eq(st, CP_LCP_ITERATION_CAP, "%s: %s", cp_lcp_status_name(st),
               info.reason);
  cr_expect_eq(info.iterations, 2);
  cr_expect(strlen(info.reason) > 0);
  /* The reported pair is the last (interior, feasible) iterate. */
  for (int i = 0; i < n; i++) cr_expect(z[i] > 0 && w[i] > 0);
  cr_expect(info.residual <= 1e-9, "residual %g", info.residual);
  cr_expect(wtz(n, w, z) > 1e-6);

  o.max_iter = 0;
  cr_assert_eq(cp_fip_solve(n, M, q, &o, z, w, &info), CP_LCP_ITERATION_CAP);
  cr_expect_eq(info.iterations, 0);
}

/* gap_tol is honoured: a loose tolerance stops earlier with a larger gap, a
 * tight one reaches a smaller gap. */
Test(fip, gap_tol_option) {
  const int n = 30;
  double *M = malloc(sizeof(double) * n * n);
  cr_assert_not_null(M);
  double q[30], zs[30], z[30], w[30];
  gen_monotone(n, 11, M, q, zs);
  cp_fip_options o = cp_fip_defaults();
  o.polish = 0;
  cp_lcp_info info;

  o.gap_tol = 1e-10;
  cr_assert_eq(cp_fip_solve(n, M, q, &o, z, w, &info), CP_LCP_SOLVED, "%s",
               info.reason);
  const int it_tight = info.iterations;
  cr_expect(wtz(n, w, z) <= 1e-10, "gap %g", wtz(n, w, z));

  o.gap_tol = 1e-2;
  o.check.rel_tol = 1e-2; /* the check must not reject the loose answer */
  cr_assert_eq(cp_fip_solve(n, M, q, &o, z, w, &info), CP_LCP_SOLVED, "%s",
               info.reason);
  const double g = wtz(n, w, z);
  cr_expect(g <= 1e-2, "gap %g", g);
  cr_expect(info.iterations < it_tight, "%d vs %d", info.iterations,
            it_tight);

  /* Loose stop, no polish, default (tight) check: max_i z_i w_i >= w^T z / n
   * exceeds the check's tolerance, so the candidate must be rejected, not
   * reported as solved. */
  o.check = cp_check_defaults();
  cr_assert(g / n > 1e-6 * qscale(n, q), "instance too easy: gap %g", g);
  cp_lcp_status st = cp_fip_solve(n, M, q, &o, z, w, &info);
  cr_expect_eq(st, CP_LCP_CHECK_FAILED, "%s", cp_lcp_status_name(st));
  cr_expect(strlen(info.reason) > 0);
  free(M);
}

/* Other parameters change the path but not the answer. */
Test(fip, parameters) {
  const int n = 25;
  double *M = malloc(sizeof(double) * n * n);
  cr_assert_not_null(M);
  double q[25], zs[25], z[25], w[25];
  gen_monotone(n, 2, M, q, zs);
  const double betas[] = {0.05, 0.3, 0.5, 0.9};
  for (int k = 0; k < 4; k++) {
    cp_fip_options o = cp_fip_defaults();
    o.beta = betas[k];
    o.zeta = k == 0 ? 1.0 : 2.0 * n;
    o.kappa = k == 1 ? 0.5 : 0.99;
    o.rho = k == 2 ? 0.8 : 0.3;
    cp_lcp_info info;
    cp_lcp_status st = cp_fip_solve(n, M, q, &o, z, w, &info);
    cr_assert_eq(st, CP_LCP_SOLVED, "beta %g: %s", betas[k], info.reason);
    cpt_assert_lcp_solution(n, M, q, z, 1e-6 * qscale(n, q));
  }
  free(M);
}

/* Bad options are reported, not crashed on. */
Test(fip, invalid_options) {
  const double M[1] = {1}, q[1] = {-1};
  double z[1], w[1];
  cp_lcp_info info;
  cp_fip_options o = cp_fip_defaults();
  o.beta = 1.0;
  cr_expect_eq(cp_fip_solve(1, M, q, &o, z, w, &info), CP_LCP_NUMERICAL);
  o = cp_fip_defaults();
  o.kappa = 1.0;
  cr_expect_eq(cp_fip_solve(1, M, q, &o, z, w, &info), CP_LCP_NUMERICAL);
  o = cp_fip_defaults();
  o.gap_tol = 0.0;
  cr_expect_eq(cp_fip_solve(1, M, q, &o, z, w, &info), CP_LCP_NUMERICAL);
  cr_expect(strlen(info.reason) > 0);
  const double Mn[1] = {NAN};
  cr_expect_eq(cp_fip_solve(1, Mn, q, NULL, z, w, &info), CP_LCP_NUMERICAL);
  cr_expect_eq(cp_fip_solve(0, M, q, NULL, z, w, &info), CP_LCP_NUMERICAL);
  /* And a valid 1x1 for contrast: z = 1, w = 0. */
  cr_assert_eq(cp_fip_solve(1, M, q, NULL, z, w, &info), CP_LCP_SOLVED);
  cr_expect_float_eq(z[0], 1.0, 1e-9);
}

/* q >= 0 with M positive definite: the solution is z = 0; the interior
 * method drives z to 0 rather than starting there. Also large q scale. */
Test(fip, trivial_and_scaled) {
  const int n = 10;
  double M[100], q[10], zs[10], z[10], w[10];
  gen_monotone(n, 4, M, q, zs);
  for (int i = 0; i < n; i++) q[i] = 1.0 + i;
  cp_lcp_info info;
  cr_assert_eq(cp_fip_solve(n, M, q, NULL, z, w, &info), CP_LCP_SOLVED, "%s",
               info.reason);
  for (int i = 0; i < n; i++) cr_expect(fabs(z[i]) <= 1e-9);

  gen_monotone(n, 4, M, q, zs);
  for (int i = 0; i < n; i++) q[i] *= 1e3;
  cr_assert_eq(cp_fip_solve(n, M, q, NULL, z, w, &info), CP_LCP_SOLVED, "%s",
               info.reason);
  cpt_assert_lcp_solution(n, M, q, z, 1e-6 * qscale(n, q));
}

/* ---- crossover: exact to rounding, or flagged (issue 24) ---------------- */

/* z1 + z2 = 1 is a whole face of solutions of M = [[1,1],[1,1]], q = -e: the
 * interior point ends inside it, where the support basis {1, 2} is
 * singular. */
static const double face_M[4] = {1, 1, 1, 1}, face_q[2] = {-1, -1};

Test(fip_crossover, face_of_solutions_ends_on_a_polished_vertex) {
  double z[2], w[2];
  cp_lcp_info info;
  cp_fip_options o = cp_fip_defaults();
  cr_assert_eq(cp_fip_solve(2, face_M, face_q, &o, z, w, &info), CP_LCP_SOLVED, "%s",
               info.reason);
  cr_assert_eq(info.polished, 1);
  /* A vertex of the face, exactly: one of (1, 0), (0, 1). */
  cr_assert(z[0] * z[1] == 0.0 && z[0] + z[1] == 1.0, "z = (%g, %g)", z[0], z[1]);
  cr_assert_eq(info.complementarity, 0.0);
}

Test(fip_crossover, unpolishable_answer_is_flagged_with_its_complementarity) {
  double z[2], w[2];
  cp_lcp_info info;
  cp_fip_options o = cp_fip_defaults();
  o.polish = 0; /* the raw interior answer */
  cr_assert_eq(cp_fip_solve(2, face_M, face_q, &o, z, w, &info), CP_LCP_SOLVED, "%s",
               info.reason);
  cr_assert_eq(info.polished, 0);
  cr_assert(z[0] > 0.1 && z[1] > 0.1, "inside the face: z = (%g, %g)", z[0], z[1]);
  cr_assert_gt(info.complementarity, 0.0);
  double wr[2];
  cp_lcp_eval(2, face_M, face_q, z, wr);
  const double c = fmax(fabs(z[0] * wr[0]), fabs(z[1] * wr[1]));
  cr_assert(fabs(info.complementarity - c) <= 1e-3 * c, "%g vs %g", info.complementarity, c);
  /* Its support basis is singular: the generic crossover declines and
   * leaves everything as it was. */
  const double z0 = z[0];
  cr_assert_eq(cp_lcp_crossover(2, face_M, face_q, z, w, &o.check, &info), 0);
  cr_assert_eq(info.polished, 0);
  cr_assert_eq(z[0], z0);
}

Test(fip_crossover, generic_crossover_solves_the_support_exactly) {
  /* M = I, q = (-1, 1): z = (1, 0), w = (0, 1). An approximate answer
   * accepted by the check becomes the exact one. */
  const double M[4] = {1, 0, 0, 1}, q[2] = {-1, 1};
  double z[2] = {1 + 1e-9, 1e-9}, w[2];
  cp_lcp_eval(2, M, q, z, w);
  cp_lcp_info info;
  cp_lcp_info_clear(&info);
  cp_check_options chk = cp_check_defaults();
  cr_assert(cp_lcp_check(2, M, q, z, w, &chk, &info));
  cr_assert_eq(info.polished, 0);
  cr_assert_eq(cp_lcp_crossover(2, M, q, z, w, &chk, &info), 1);
  cr_assert_eq(info.polished, 1);
  cr_assert(z[0] == 1.0 && z[1] == 0.0 && w[0] == 0.0 && w[1] == 1.0);
  cr_assert_eq(info.complementarity, 0.0);
}

Test(fip_crossover, cli_json_reports_polished_and_residuals) {
  char *path = cpt_temp_file("{\"M\": [[1,1],[1,1]], \"q\": [-1,-1]}", ".json");
  const char *argv[] = {"complan", "lcp", "solve", path, "--solver", "fip", "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert(json_is_true(json_object_get(doc, "polished")));
  cr_assert_eq(json_real_value(json_object_get(doc, "complementarity")), 0.0);
  cr_assert(json_is_number(json_object_get(doc, "residual")));
  cr_assert_geq(json_number_value(json_object_get(doc, "min_z")), 0.0);
  cr_assert_geq(json_number_value(json_object_get(doc, "min_w")), 0.0);
  json_decref(doc);
  remove(path);
  free(path);
}

/* ---- the poll hook (cp_fip_options.poll) ----------------------------------- */

static void count_poll(void *ctx) { ++*(int *)ctx; }

/* One solve with and without the hook: the same status, iterations, measures
 * and (z, w) bit for bit; the hook called once per phase II iteration. */
static void solve_both(int n, const double *M, const double *q,
                       cp_fip_options o, int *iterations, cp_lcp_status *status) {
  double *v = malloc(sizeof(double) * (size_t)n * 4);
  cr_assert_not_null(v);
  double *z0 = v, *w0 = v + n, *z1 = v + 2 * n, *w1 = v + 3 * n;
  cp_lcp_info a, b;
  o.poll = NULL;
  o.poll_ctx = NULL;
  const cp_lcp_status s0 = cp_fip_solve(n, M, q, &o, z0, w0, &a);
  int calls = 0;
  o.poll = count_poll;
  o.poll_ctx = &calls;
  const cp_lcp_status s1 = cp_fip_solve(n, M, q, &o, z1, w1, &b);
  cr_assert_eq(s0, s1, "n=%d: %s / %s", n, cp_lcp_status_name(s0),
               cp_lcp_status_name(s1));
  cr_assert_eq(a.iterations, b.iterations);
  cr_assert_eq(a.polished, b.polished);
  cr_assert_eq(memcmp(z0, z1, sizeof(double) * (size_t)n), 0, "n=%d: z differs", n);
  cr_assert_eq(memcmp(w0, w1, sizeof(double) * (size_t)n), 0, "n=%d: w differs", n);
  cr_assert(a.residual == b.residual && a.complementarity == b.complementarity);
  cr_assert_eq(calls, b.iterations, "n=%d: %d calls, %d iterations", n, calls,
               b.iterations);
  *iterations = b.iterations;
  *status = s1;
  free(v);
}

Test(fip_poll, same_answer_one_call_per_iteration) {
  static const int sizes[] = {5, 20, 72};
  for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
    const int n = sizes[si];
    double *M = malloc(sizeof(double) * (size_t)n * n);
    double *v = malloc(sizeof(double) * (size_t)n * 2);
    cr_assert(M && v);
    for (uint64_t seed = 1; seed <= 3; seed++) {
      gen_monotone(n, seed, M, v, v + n);
      int it;
      cp_lcp_status st;
      solve_both(n, M, v, cp_fip_defaults(), &it, &st); /* polished */
      cr_assert_eq(st, CP_LCP_SOLVED);
      cr_expect(it >= 1, "n=%d seed=%d: %d iterations", n, (int)seed, it);
      cp_fip_options o = cp_fip_defaults();
      o.polish = 0; /* the raw iterate: every bit of phase II's arithmetic */
      solve_both(n, M, v, o, &it, &st);
      cr_assert_eq(st, CP_LCP_SOLVED);
    }
    free(M);
    free(v);
  }
}

/* The hook's rule at the ends: an iteration cap of k makes k calls (0 for
 * a cap of 0), the crossover (a face of solutions) none beyond the
 * iterations, and a solve that never reaches phase II (no strictly feasible
 * point, invalid options) none. */
Test(fip_poll, caps_crossover_and_early_ends) {
  const int n = 20;
  double M[400], q[20], zs[20];
  gen_monotone(n, 3, M, q, zs);
  cp_fip_options o = cp_fip_defaults();
  int it;
  cp_lcp_status st;
  o.max_iter = 2;
  solve_both(n, M, q, o, &it, &st);
  cr_assert_eq(st, CP_LCP_ITERATION_CAP);
  cr_assert_eq(it, 2);
  o.max_iter = 0;
  solve_both(n, M, q, o, &it, &st);
  cr_assert_eq(st, CP_LCP_ITERATION_CAP);
  cr_assert_eq(it, 0);

  solve_both(2, face_M, face_q, cp_fip_defaults(), &it, &st);
  cr_assert_eq(st, CP_LCP_SOLVED);
  cr_expect(it >= 1);

  const double M1[1] = {-1.0}, q1[1] = {-1.0}; /* w = -z - 1 < 0: infeasible */
  solve_both(1, M1, q1, cp_fip_defaults(), &it, &st);
  cr_assert_eq(st, CP_LCP_NO_STRICT_FEASIBLE);
  cr_assert_eq(it, 0);

  o = cp_fip_defaults();
  o.kappa = 1.0; /* refused before phase I */
  solve_both(n, M, q, o, &it, &st);
  cr_assert_eq(st, CP_LCP_NUMERICAL);
  cr_assert_eq(it, 0);
}
