/* Property tests of the LCP solvers across scales (issue 12): random LCPs
 * with entries from 1e-8 to 1e8 and badly scaled rows and columns.
 *  - every "solved" answer of every solver passes an independent row check
 *    (long double arithmetic, written here, not contact/lcp.c's);
 *  - every "no_solution" is confirmed independently: for these small
 *    generic problems every solution is a complementary basic solution, so
 *    enumerating all 2^n bases (solved in long double) must find none. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/solve.h"
#include "tests/support.h"

enum { NMAX = 6 };

/* The row-by-row acceptance rule of contact/lcp.h restated in long double:
 * tolerances rel (|M_i||z| + |q_i|) plus a rounding allowance for z's
 * noise, z_i measured in units of the rows it moves. */
static int row_check(int n, const double *M, const double *q, const double *z, double rel,
                     char *why, size_t wl) {
  long double zmax = 0, tol[NMAX];
  for (int j = 0; j < n; j++) zmax = fmaxl(zmax, fabsl(z[j]));
  for (int k = 0; k < n; k++) {
    long double sk = fabsl(q[k]), lk = 0;
    for (int j = 0; j < n; j++) {
      sk += fabsl((long double)M[k + j * n] * z[j]);
      lk += fabsl((long double)M[k + j * n]);
    }
    tol[k] = rel * sk + 8.0L * n * 2.220446049250313e-16L * lk * zmax;
  }
  for (int i = 0; i < n; i++) {
    long double w = q[i];
    for (int j = 0; j < n; j++) w += (long double)M[i + j * n] * z[j];
    /* z_i in units of the tolerances of the rows it moves */
    long double units = z[i] == 0 ? 0 : -1;
    for (int k = 0; k < n; k++)
      if (M[k + i * n] != 0)
        units = fmaxl(units, fabsl((long double)M[k + i * n] * z[i]) / tol[k]);
    if (units < 0) units = INFINITY;
    if ((z[i] < 0 && units > 1) || w < -tol[i] ||
        (w > tol[i] && z[i] > 0 && z[i] * w > tol[i] * zmax && units * (w / tol[i]) * rel > 1)) {
      snprintf(why, wl, "row %d: z = %.3g, w = %.3Lg, tol %.3Lg", i, z[i], w, tol[i]);
      return 0;
    }
  }
  return 1;
}

/* Solves the complementary basis `mask` (bit i: z_i basic) in long double
 * with partial pivoting; returns 1 and the pair when it is a solution:
 * z, w >= -1e-9 of their rows' scale. */
static int basis_solution(int n, const double *M, const double *q, unsigned mask) {
  long double A[NMAX][NMAX + 1];
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++)
      A[i][j] = (mask >> j & 1) ? -(long double)M[i + j * n] : (i == j ? 1.0L : 0.0L);
    A[i][n] = q[i];
  }
  for (int c = 0; c < n; c++) {
    int p = c;
    for (int r = c + 1; r < n; r++)
      if (fabsl(A[r][c]) > fabsl(A[p][c])) p = r;
    long double amax = 0;
    for (int r = 0; r < n; r++) amax = fmaxl(amax, fabsl(A[r][c]));
    if (fabsl(A[p][c]) <= 1e-15L * amax || amax == 0) return 0; /* singular */
    for (int j = 0; j <= n; j++) {
      long double t = A[c][j]; A[c][j] = A[p][j]; A[p][j] = t;
    }
    for (int r = 0; r < n; r++) {
      if (r == c) continue;
      long double f = A[r][c] / A[c][c];
      for (int j = c; j <= n; j++) A[r][j] -= f * A[c][j];
    }
  }
  long double x[NMAX], z[NMAX];
  for (int i = 0; i < n; i++) x[i] = A[i][n] / A[i][i];
  for (int j = 0; j < n; j++) z[j] = (mask >> j & 1) ? x[j] : 0.0L;
  for (int i = 0; i < n; i++) {
    long double w = q[i], s = fabsl(q[i]);
    for (int j = 0; j < n; j++) {
      w += (long double)M[i + j * n] * z[j];
      s += fabsl((long double)M[i + j * n] * z[j]);
    }
    if ((mask >> i & 1) ? z[i] < -1e-9L * fmaxl(1e-300L, fabsl(x[i]) + s) : w < -1e-9L * s)
      return 0;
  }
  return 1;
}

static int has_basic_solution(int n, const double *M, const double *q) {
  for (unsigned mask = 0; mask < (1u << n); mask++)
    if (basis_solution(n, M, q, mask)) return 1;
  return 0;
}

/* kind 0: a random matrix scaled by rows and columns (10^[-4, 4] each);
 * kind 1: every entry of its own magnitude 10^[-8, 8];
 * kind 2: a scaled positive definite matrix (always solvable). */
static void generate(int kind, int n, uint64_t *st, double *M, double *q) {
  double r[NMAX], c[NMAX];
  for (int i = 0; i < n; i++) {
    r[i] = pow(10.0, cpt_uniform(st, -4, 4));
    c[i] = pow(10.0, cpt_uniform(st, -4, 4));
  }
  if (kind == 2) {
    double B[NMAX * NMAX];
    for (int k = 0; k < n * n; k++) B[k] = cpt_uniform(st, -1, 1);
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        double s = i == j ? 0.1 : 0.0;
        for (int k = 0; k < n; k++) s += B[k + i * n] * B[k + j * n];
        /* D (B'B) D stays positive definite: rows and columns by the same r */
        M[i + j * n] = r[i] * s * r[j];
      }
    for (int i = 0; i < n; i++) q[i] = r[i] * cpt_uniform(st, -1, 1);
    return;
  }
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      double g = cpt_uniform(st, -1, 1);
      M[i + j * n] = kind == 0 ? r[i] * g * c[j] : copysign(pow(10.0, cpt_uniform(st, -8, 8)), g);
    }
  for (int i = 0; i < n; i++)
    q[i] = kind == 0 ? r[i] * cpt_uniform(st, -1, 1)
                     : copysign(pow(10.0, cpt_uniform(st, -8, 8)), cpt_uniform(st, -1, 1));
}

Test(properties, solvers_across_scales, .timeout = 600) {
  uint64_t st = 20261203;
  int counts[4][3] = {{0}}; /* solver x {solved, no_solution, other} */
  cp_lemke_ws *ws = cp_lemke_ws_create(NMAX);
  for (int trial = 0; trial < 240; trial++) {
    const int kind = trial % 3, n = 2 + (int)(cpt_rand(&st) % (NMAX - 1));
    double M[NMAX * NMAX], q[NMAX], z[NMAX], w[NMAX];
    generate(kind, n, &st, M, q);
    for (int s = 0; s < 4; s++) {
      cp_solve_options o = cp_solve_defaults();
      o.solver = (cp_lcp_solver)s;
      o.certify.time_limit_s = 5;
      o.extra_restarts = 20;
      cp_lcp_info info;
      cp_lcp_status r = cp_lcp_solve(ws, n, M, q, &o, z, w, &info, NULL);
      char why[160];
      if (r == CP_LCP_SOLVED) {
        counts[s][0]++;
        cr_assert(row_check(n, M, q, z, o.lemke.check.rel_tol, why, sizeof why),
                  "trial %d (kind %d, n %d) %s: accepted but %s", trial, kind, n,
                  cp_lcp_solver_name((cp_lcp_solver)s), why);
      } else if (r == CP_LCP_INFEASIBLE) {
        counts[s][1]++;
        cr_assert(s == CP_SOLVER_CERTIFY || s == CP_SOLVER_AUTO,
                  "only certify proves infeasibility");
        cr_assert_not(has_basic_solution(n, M, q),
                      "trial %d (kind %d, n %d): no_solution but a basis solves it", trial,
                      kind, n);
      } else {
        counts[s][2]++;
      }
      if (kind == 2)
        cr_assert_neq(r, CP_LCP_INFEASIBLE, "a positive definite LCP always has a solution");
    }
    /* The enumerator itself finds the solution every positive definite LCP
     * has (else its "none" would prove nothing). */
    if (kind == 2) cr_assert(has_basic_solution(n, M, q), "trial %d: enumeration missed", trial);
  }
  cp_lemke_ws_destroy(ws);
  /* The test must have exercised both verdicts. */
  cr_assert_gt(counts[CP_SOLVER_LEMKE][0], 100, "Lemke solved only %d", counts[0][0]);
  cr_assert_gt(counts[CP_SOLVER_CERTIFY][1], 5, "certify proved only %d infeasible",
               counts[CP_SOLVER_CERTIFY][1]);
  cr_log_info("solved/no_solution/other: lemke %d/%d/%d fip %d/%d/%d certify %d/%d/%d "
              "auto %d/%d/%d", counts[0][0], counts[0][1], counts[0][2], counts[1][0],
              counts[1][1], counts[1][2], counts[2][0], counts[2][1], counts[2][2],
              counts[3][0], counts[3][1], counts[3][2]);
}
