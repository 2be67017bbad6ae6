/* Tests of contact/lemke.c. Solutions are verified independently with
 * cpt_assert_lcp_solution (tests/support.c), not only with the solver's own
 * cp_lcp_check. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/lemke.h"
#include "experiments/lcpgen.h"
#include "tests/support.h"

/* ---- allocation counter (not under AddressSanitizer, which owns malloc) --
 * The test binary interposes malloc & co. and counts calls made by this
 * thread while `counting` is set: a solve must allocate nothing. */
#if defined(__SANITIZE_ADDRESS__)
#define CPT_COUNT_ALLOCS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CPT_COUNT_ALLOCS 0
#endif
#endif
#ifndef CPT_COUNT_ALLOCS
#define CPT_COUNT_ALLOCS 1
#endif

#if CPT_COUNT_ALLOCS
extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
static _Thread_local int counting;
static _Thread_local long n_allocs;
void *malloc(size_t n) {
  if (counting) n_allocs++;
  return __libc_malloc(n);
}
void *calloc(size_t a, size_t b) {
  if (counting) n_allocs++;
  return __libc_calloc(a, b);
}
void *realloc(void *p, size_t n) {
  if (counting) n_allocs++;
  return __libc_realloc(p, n);
}
#endif

/* ---- helpers ------------------------------------------------------------ */

/* Row-major literal -> column-major M. */
static void colmajor(int n, const double *rows, double *M) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) M[i + j * n] = rows[i * n + j];
}

static double tol_for(int n, const double *q) {
  double s = 1.0;
  for (int i = 0; i < n; i++) s = fmax(s, fabs(q[i]));
  return 1e-8 * s;
}

/* Solves with a fresh workspace and checks SOLVED + independent check. */
static void solve_ok(int n, const double *M, const double *q,
                     const cp_lemke_options *opt, double *z, cp_lcp_info *info) {
  cp_lemke_ws *ws = cp_lemke_ws_create(n);
  cr_assert_not_null(ws);
  double *w = malloc(sizeof(double) * (size_t)n);
  cp_lcp_status st = cp_lemke_solve(ws, n, M, q, opt, NULL, z, w, info);
  cr_assert_eq(st, CP_LCP_SOLVED, "status %s (%s)", cp_lcp_status_name(st),
               info->reason);
  cr_assert_eq(info->status, CP_LCP_SOLVED);
  cr_assert_eq(info->solver, CP_SOLVER_LEMKE);
  cpt_assert_lcp_solution(n, M, q, z, tol_for(n, q));
  free(w);
  cp_lemke_ws_destroy(ws);
}

/* ---- hand-solvable problems -------------------------------------------- */

Test(lemke, trivial_q_nonnegative_takes_no_pivot) {
  const double rows[4] = {1, 2, 3, 4};
  double M[4], q[2] = {0.0, 3.0}, z[2] = {7, 7};
  colmajor(2, rows, M);
  cp_lcp_info info;
  solve_ok(2, M, q, NULL, z, &info);
  cr_assert_eq(z[0], 0.0);
  cr_assert_eq(z[1], 0.0);
  cr_assert_eq(info.iterations, 0);
  cr_assert_eq(info.starts, 1);
}

Test(lemke, two_by_two_known_solution) {
  /* 2 z1 + z2 = 5, z1 + 2 z2 = 6  ->  z = (4/3, 7/3), w = 0. */
  const double rows[4] = {2, 1, 1, 2};
  double M[4], q[2] = {-5, -6}, z[2];
  colmajor(2, rows, M);
  cp_lcp_info info;
  solve_ok(2, M, q, NULL, z, &info);
  cr_assert_float_eq(z[0], 4.0 / 3.0, 1e-12);
  cr_assert_float_eq(z[1], 7.0 / 3.0, 1e-12);
  cr_assert_eq(info.starts, 1);
  cr_assert_eq(info.first_start_iterations, info.iterations);
  cr_assert_gt(info.iterations, 0);
}

Test(lemke, three_by_three_mixed_support) {
  /* Tridiagonal SPD; z2 = 0: 2 z1 = 1, 2 z3 = 1, w2 = 3 - z1 - z3 = 2. */
  const double rows[9] = {2, -1, 0, -1, 2, -1, 0, -1, 2};
  double M[9], q[3] = {-1, 3, -1}, z[3];
  colmajor(3, rows, M);
  cp_lcp_info info;
  solve_ok(3, M, q, NULL, z, &info);
  cr_assert_float_eq(z[0], 0.5, 1e-12);
  cr_assert_float_eq(z[1], 0.0, 1e-12);
  cr_assert_float_eq(z[2], 0.5, 1e-12);
}

Test(lemke, three_by_three_identity) {
  const double rows[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  double M[9], q[3] = {-1, 2, -3}, z[3];
  colmajor(3, rows, M);
  cp_lcp_info info;
  solve_ok(3, M, q, NULL, z, &info);
  cr_assert_float_eq(z[0], 1.0, 1e-14);
  cr_assert_float_eq(z[1], 0.0, 1e-14);
  cr_assert_float_eq(z[2], 3.0, 1e-14);
}

Test(lemke, p_matrix_unique_solution_is_found_exactly) {
  /* M = B^T B + I + (C - C^T) is positive definite, hence a P-matrix: the
   * planted z* is the unique solution. */
  const int n = 25;
  uint64_t s = 42;
  double *M = calloc((size_t)n * n, sizeof(double));
  double *B = malloc(sizeof(double) * (size_t)n * n), q[25], zs[25], ws_[25],
         z[25];
  for (int i = 0; i < n * n; i++) B[i] = cpt_uniform(&s, -1, 1);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double v = i == j ? 1.0 : 0.0;
      for (int k = 0; k < n; k++) v += B[k + i * n] * B[k + j * n];
      M[i + j * n] = v;
    }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < i; j++) {
      double c = cpt_uniform(&s, -1, 1);
      M[i + j * n] += c;
      M[j + i * n] -= c;
    }
  for (int i = 0; i < n; i++) {
    int in = cpt_uniform(&s, 0, 1) < 0.5;
    zs[i] = in ? cpt_uniform(&s, 0.5, 2) : 0.0;
    ws_[i] = in ? 0.0 : cpt_uniform(&s, 0.5, 2);
  }
  for (int i = 0; i < n; i++) {
    q[i] = ws_[i];
    for (int j = 0; j < n; j++) q[i] -= M[i + j * n] * zs[j];
  }
  cp_lcp_info info;
  solve_ok(n, M, q, NULL, z, &info);
  for (int i = 0; i < n; i++) cr_assert_float_eq(z[i], zs[i], 1e-10, "z[%d]", i);
  cr_assert_lt(info.complementarity, 1e-12);
  free(M);
  free(B);
}

/* A diagonally dominant M (a P-matrix) and q with a planted solution. */
static void planted_problem(uint64_t *s, int n, double *M, double *q, double *zs) {
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) M[i + (size_t)j * n] = i == j ? 0.0 : cpt_uniform(s, -1, 1) / n;
  for (int i = 0; i < n; i++) M[i + (size_t)i * n] = cpt_uniform(s, 1.5, 3);
  for (int i = 0; i < n; i++) {
    const int in = cpt_uniform(s, 0, 1) < 0.5;
    zs[i] = in ? cpt_uniform(s, 0.5, 2) : 0.0;
    q[i] = in ? 0.0 : cpt_uniform(s, 0.5, 2);
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) q[i] -= M[i + (size_t)j * n] * zs[j];
}

/* cp_lemke_ws_regrow: a workspace grown twice (its square blocks from the
 * heap to a mapping of their own, then that mapping grown or moved with
 * the previous solves' numbers in it) solves as a fresh one does, bit for
 * bit, pivot for pivot; NULL grows like create; capacity 0 releases. */
Test(lemke, regrown_workspace_solves_as_a_fresh_one) {
  enum { N = 600 };
  uint64_t s = 77;
  double *M = malloc(sizeof(double) * N * N), *q = malloc(sizeof(double) * N),
         *zs = malloc(sizeof(double) * N), *z1 = malloc(sizeof(double) * N),
         *z2 = malloc(sizeof(double) * N), *w = malloc(sizeof(double) * N);
  cr_assert(M && q && zs && z1 && z2 && w);
  cp_lemke_ws *ws = cp_lemke_ws_regrow(NULL, 120);
  cr_assert_not_null(ws);
  static const int caps[] = {120, 400, N}, sizes[] = {110, 390, N - 10};
  for (int r = 0; r < 3; r++) {
    if (r) ws = cp_lemke_ws_regrow(ws, caps[r]);
    cr_assert_not_null(ws);
    const int n = sizes[r];
    planted_problem(&s, n, M, q, zs);
    cp_lcp_info i1, i2;
    cr_assert_eq(cp_lemke_solve(ws, n, M, q, NULL, NULL, z1, w, &i1), CP_LCP_SOLVED, "round %d", r);
    cp_lemke_ws *fresh = cp_lemke_ws_create(caps[r]);
    cr_assert_not_null(fresh);
    cr_assert_eq(cp_lemke_solve(fresh, n, M, q, NULL, NULL, z2, w, &i2), CP_LCP_SOLVED);
    cp_lemke_ws_destroy(fresh);
    cr_assert_eq(i1.iterations, i2.iterations, "round %d", r);
    cr_assert_gt(i1.iterations, n / 4);
    for (int i = 0; i < n; i++) {
      cr_assert(z1[i] == z2[i], "round %d z[%d]: %.17g != %.17g", r, i, z1[i], z2[i]);
      cr_assert_float_eq(z1[i], zs[i], 1e-9, "round %d z[%d]", r, i);
    }
  }
  cr_assert_null(cp_lemke_ws_regrow(ws, 0), "capacity 0: released, NULL");
  free(M), free(q), free(zs), free(z1), free(z2), free(w);
}

/* ---- degeneracy and cycling -------------------------------------------- */

/* Kostreva (1979): a degenerate LCP on which Lemke's method without a
 * tie-breaking rule can cycle. Unique solution z = (1/3, 1/3, 1/3). */
static const double kostreva_rows[9] = {1, 2, 0, 0, 1, 2, 2, 0, 1};

Test(lemke, kostreva_cycling_example_lexicographic_solves) {
  double M[9], q[3] = {-1, -1, -1}, z[3], w[3];
  colmajor(3, kostreva_rows, M);
  cp_lemke_ws *ws = cp_lemke_ws_create(3);
  cp_lemke_options o = cp_lemke_defaults();
  o.restarts = 0;
  cp_lcp_info info;
  cr_assert_eq(cp_lemke_solve(ws, 3, M, q, &o, NULL, z, w, &info),
               CP_LCP_SOLVED, "%s", info.reason);
  cpt_assert_lcp_solution(3, M, q, z, 1e-12);
  for (int i = 0; i < 3; i++) cr_assert_float_eq(z[i], 1.0 / 3.0, 1e-12);
  cp_lemke_stats st;
  cp_lemke_get_stats(ws, &st);
  cr_assert_gt(st.lex_ties, 0, "the degenerate tie branch was not reached");
  cr_assert_lt(info.iterations, 20);
  cp_lemke_ws_destroy(ws);
}

Test(lemke, kostreva_cycling_example_plain_rule_cycles_into_the_cap) {
  double M[9], q[3] = {-1, -1, -1}, z[3], w[3];
  colmajor(3, kostreva_rows, M);
  cp_lemke_ws *ws = cp_lemke_ws_create(3);
  cp_lemke_options o = cp_lemke_defaults();
  o.restarts = 0;
  o.lexicographic = 0;
  o.max_pivots = 1000;
  cp_lcp_info info;
  cp_lcp_status st = cp_lemke_solve(ws, 3, M, q, &o, NULL, z, w, &info);
  cr_assert_eq(st, CP_LCP_PIVOT_CAP, "plain rule ended with %s after %d",
               cp_lcp_status_name(st), info.iterations);
  cr_assert_eq(info.iterations, 1000);
  /* With the automatic cap the ordinary start runs into 50 (n+1) + 100 =
   * 300 pivots, each start of the rescue pass into 5 (n+1) + 100 = 120 at
   * most (there may be a random cover that solves it). */
  o.max_pivots = 0;
  o.rescue = 1;
  o.small_n = -1;
  st = cp_lemke_solve(ws, 3, M, q, &o, NULL, z, w, &info);
  int pps[16];
  const int ns = cp_lemke_pivots_per_start(ws, pps, 16);
  cr_assert_geq(ns, 2);
  if (st != CP_LCP_SOLVED) cr_assert_eq(ns, 1 + 12);
  else cpt_assert_lcp_solution(3, M, q, z, 1e-12);
  cr_assert_eq(pps[0], 300, "first start: %d pivots", pps[0]);
  for (int i = 1; i < ns; i++) cr_assert_leq(pps[i], 120, "start %d: %d pivots", i, pps[i]);
  cp_lemke_ws_destroy(ws);
}

Test(lemke, degenerate_planted_problem_uses_tie_breaking) {
  /* Planted with z*_i = w*_i = 0 on a third of the indices: a degenerate
   * solution; start from q with zero entries (ties at the first pivot). */
  const int n = 30;
  double *M = malloc(sizeof(double) * n * n), q[30], z[30], zs[30];
  cp_gen_monotone(n, 77, M, q, zs);
  /* Recompute q = w* - M z* with a degenerate (w*, z*). */
  uint64_t s = 5;
  double wsv[30];
  for (int i = 0; i < n; i++) {
    double u = cpt_uniform(&s, 0, 1);
    zs[i] = u < 0.33 ? 1.0 : 0.0;
    wsv[i] = u > 0.66 ? 1.0 : 0.0;
  }
  for (int i = 0; i < n; i++) {
    q[i] = wsv[i];
    for (int j = 0; j < n; j++) q[i] -= M[i + j * n] * zs[j];
  }
  double qmin = 0.0;
  for (int i = 0; i < n; i++) qmin = fmin(qmin, q[i]);
  q[0] = q[1] = q[2] = qmin - 1.0; /* first pivot: a three-way tie */
  cp_lemke_ws *ws = cp_lemke_ws_create(n);
  double w[30];
  cp_lcp_info info;
  cr_assert_eq(cp_lemke_solve(ws, n, M, q, NULL, NULL, z, w, &info),
               CP_LCP_SOLVED, "%s", info.reason);
  cpt_assert_lcp_solution(n, M, q, z, 1e-8);
  cp_lemke_stats st;
  cp_lemke_get_stats(ws, &st);
  cr_assert_gt(st.lex_ties, 0);
  cp_lemke_ws_destroy(ws);
  free(M);
}

/* ---- failures: secondary ray, pivot cap, restarts ---------------------- */

Test(lemke, infeasible_problem_ends_on_secondary_ray_after_restarts) {
  /* Row 1 reads w1 = -z1 - 1 < 0 for every z >= 0: no solution. */
  const double rows[4] = {-1, 0, 1, 1};
  double M[4], q[2] = {-1, 2}, z[2], w[2];
  colmajor(2, rows, M);
  cp_lemke_ws *ws = cp_lemke_ws_create(2);
  cp_lcp_info info;
  cp_lcp_status st = cp_lemke_solve(ws, 2, M, q, NULL, NULL, z, w, &info);
  cr_assert_eq(st, CP_LCP_SECONDARY_RAY);
  cr_assert_eq(info.status, CP_LCP_SECONDARY_RAY);
  cr_assert_eq(info.starts, 4, "1 + 3 restarts, got %d", info.starts);
  cr_assert_neq(info.reason[0], '\0');
  cr_assert_not_null(strstr(info.reason, "secondary ray"), "%s", info.reason);
  int pps[8];
  cr_assert_eq(cp_lemke_pivots_per_start(ws, pps, 8), 4);
  int total = 0;
  for (int i = 0; i < 4; i++) total += pps[i];
  cr_assert_eq(total, info.iterations);
  cr_assert_eq(pps[0], info.first_start_iterations);
  unsigned char basis[2];
  cr_assert_eq(cp_lemke_basis(ws, basis), -1);
  cp_lemke_ws_destroy(ws);
}

Test(lemke, single_variable_no_solution) {
  double M[1] = {-1}, q[1] = {-1}, z[1], w[1];
  cp_lemke_ws *ws = cp_lemke_ws_create(1);
  cp_lcp_info info;
  cr_assert_eq(cp_lemke_solve(ws, 1, M, q, NULL, NULL, z, w, &info),
               CP_LCP_SECONDARY_RAY);
  cr_assert_eq(info.starts, 4);
  cp_lemke_ws_destroy(ws);
}

Test(lemke, pivot_cap_status_and_counts) {
  const int n = 40;
  double *M = malloc(sizeof(double) * n * n), q[40], z[40], w[40];
  cp_gen_monotone(n, 3, M, q, NULL);
  cp_lemke_ws *ws = cp_lemke_ws_create(n);
  cp_lemke_options o = cp_lemke_defaults();
  o.max_pivots = 3;
  o.restarts = 0;
  cp_lcp_info info;
  cr_assert_eq(cp_lemke_solve(ws, n, M, q, &o, NULL, z, w, &info),
               CP_LCP_PIVOT_CAP);
  cr_assert_eq(info.iterations, 3);
  cr_assert_eq(info.starts, 1);
  o.restarts = 2;
  cr_assert_eq(cp_lemke_solve(ws, n, M, q, &o, NULL, z, w, &info),
               CP_LCP_PIVOT_CAP);
  cr_assert_eq(info.iterations, 9);
  cr_assert_eq(info.starts, 3);
  cr_assert_eq(info.first_start_iterations, 3);
  cr_assert_not_null(strstr(info.reason, "cap"), "%s", info.reason);
  /* The automatic cap 50 (n+1) + 100 is ample for this problem. */
  cr_assert_eq(cp_lemke_solve(ws, n, M, q, NULL, NULL, z, w, &info),
               CP_LCP_SOLVED);
  cpt_assert_lcp_solution(n, M, q, z, 1e-8);
  cp_lemke_ws_destroy(ws);
  free(M);
}

Test(lemke, rescue_pass_runs_at_least_twelve_capped_starts_then_the_classic) {
  /* No solution: every start ends on a ray. With the rescue pass, the four
   * ordinary starts are followed by max(restarts + 1, 12) rescue starts;
   * with restarts 15, by 16. */
  const double rows[4] = {-1, 0, 1, 1};
  double M[4], q[2] = {-1, 2}, z[2], w[2];
  colmajor(2, rows, M);
  cp_lemke_ws *ws = cp_lemke_ws_create(2);
  cp_lemke_options o = cp_lemke_defaults();
  o.rescue = 1;
  cp_lcp_info info;
  cp_lemke_stats st;
  cr_assert_eq(cp_lemke_solve(ws, 2, M, q, &o, NULL, z, w, &info), CP_LCP_SECONDARY_RAY);
  cr_assert_eq(info.starts, 4 + 12, "got %d", info.starts);
  cp_lemke_get_stats(ws, &st);
  cr_assert_eq(st.rescue_starts, 1);
  o.restarts = 15;
  cr_assert_eq(cp_lemke_solve(ws, 2, M, q, &o, NULL, z, w, &info), CP_LCP_SECONDARY_RAY);
  cr_assert_eq(info.starts, 16 + 16, "got %d", info.starts);
  cr_assert_eq(st.classic_starts, 0);
  /* The classic pass (off by default) adds restarts + 1 starts after the
   * rescue pass; classic = 2 runs its starts alone. */
  cr_assert_eq(cp_lemke_defaults().classic, 0);
  o.restarts = 3;
  o.classic = 1;
  cr_assert_eq(cp_lemke_solve(ws, 2, M, q, &o, NULL, z, w, &info), CP_LCP_SECONDARY_RAY);
  cr_assert_eq(info.starts, 4 + 12 + 4, "got %d", info.starts);
  cp_lemke_get_stats(ws, &st);
  cr_assert_eq(st.rescue_starts, 1);
  cr_assert_eq(st.classic_starts, 1);
  o.classic = 2;
  cr_assert_eq(cp_lemke_solve(ws, 2, M, q, &o, NULL, z, w, &info), CP_LCP_SECONDARY_RAY);
  cr_assert_eq(info.starts, 4, "got %d", info.starts);
  cp_lemke_get_stats(ws, &st);
  cr_assert_eq(st.rescue_starts, 0);
  cr_assert_eq(st.classic_starts, 1);
  cp_lemke_ws_destroy(ws);
}

Test(lemke, restarts_are_deterministic_under_a_seed) {
  /* A cap small enough that the first start fails; the restarts use random
   * covering vectors. Same seed: same pivot counts; the answer solves. */
  const int n = 30;
  double *M = malloc(sizeof(double) * n * n), q[30], z[30], w[30];
  cp_gen_monotone(n, 11, M, q, NULL);
  cp_lemke_ws *ws = cp_lemke_ws_create(n);
  cp_lemke_options o = cp_lemke_defaults();
  cp_lcp_info info;
  cr_assert_eq(cp_lemke_solve(ws, n, M, q, &o, NULL, z, w, &info), CP_LCP_SOLVED);
  const int need = info.iterations;
  o.max_pivots = need - 1; /* first start (ones) just misses */
  o.restarts = 6;
  o.seed = 1234;
  int a[8] = {0}, b[8] = {0}, c[8] = {0};
  cp_lcp_status s1 = cp_lemke_solve(ws, n, M, q, &o, NULL, z, w, &info);
  int na = cp_lemke_pivots_per_start(ws, a, 8);
  cr_assert_geq(na, 2);
  cr_assert_eq(a[0], need - 1);
  if (s1 == CP_LCP_SOLVED) cpt_assert_lcp_solution(n, M, q, z, 1e-8);
  cp_lcp_status s2 = cp_lemke_solve(ws, n, M, q, &o, NULL, z, w, &info);
  int nb = cp_lemke_pivots_per_start(ws, b, 8);
  cr_assert_eq(s1, s2);
  cr_assert_eq(na, nb);
  for (int i = 0; i < na && i < 8; i++) cr_assert_eq(a[i], b[i], "start %d", i);
  /* Another seed draws other covering vectors: other pivot counts. */
  o.seed = 99;
  cp_lemke_solve(ws, n, M, q, &o, NULL, z, w, &info);
  int nc = cp_lemke_pivots_per_start(ws, c, 8);
  int differ = nc != na;
  for (int i = 1; i < na && i < nc && i < 8; i++) differ |= a[i] != c[i];
  cr_assert(differ, "seed does not influence the restarts");
  cp_lemke_ws_destroy(ws);
  free(M);
}

/* ---- warm starts -------------------------------------------------------- */

Test(lemke, warm_start_from_own_basis_takes_at_most_one_pivot) {
  const int n = 40;
  double *M = malloc(sizeof(double) * n * n), q[40], z[40], w[40], z2[40];
  cp_gen_monotone(n, 21, M, q, NULL);
  cp_lemke_ws *ws = cp_lemke_ws_create(n);
  cp_lcp_info info;
  cr_assert_eq(cp_lemke_solve(ws, n, M, q, NULL, NULL, z, w, &info), CP_LCP_SOLVED);
  cr_assert_gt(info.iterations, 5);
  unsigned char basis[40];
  cr_assert_eq(cp_lemke_basis(ws, basis), 0);
  int nz = 0;
  for (int i = 0; i < n; i++) nz += basis[i];
  cr_assert_gt(nz, 0);
  cr_assert_eq(cp_lemke_solve(ws, n, M, q, NULL, basis, z2, w, &info),
               CP_LCP_SOLVED);
  cr_assert_leq(info.iterations, 1, "warm start took %d pivots", info.iterations);
  cpt_assert_lcp_solution(n, M, q, z2, 1e-8);
  for (int i = 0; i < n; i++) cr_assert_float_eq(z2[i], z[i], 1e-10);
  cp_lemke_stats st;
  cp_lemke_get_stats(ws, &st);
  cr_assert_eq(st.warm_fallbacks, 0);
  if (info.iterations == 0) cr_assert_eq(st.lu_polish, 1); /* LU path */
  cp_lemke_ws_destroy(ws);
  free(M);
}

Test(lemke, warm_start_on_perturbed_contact_problem) {
  const int nc = 12, ns = 3, nb = 7;
  const int m = cp_gen_contact_like_size(nc, ns);
  double *M = malloc(sizeof(double) * m * m), *q = malloc(sizeof(double) * m);
  double *z = malloc(sizeof(double) * m), *w = malloc(sizeof(double) * m);
  unsigned char *basis = malloc((size_t)m);
  cp_gen_contact_like(nc, ns, nb, 0.3, 8, M, q);
  cp_lemke_ws *ws = cp_lemke_ws_create(m);
  cp_lcp_info info;
  cr_assert_eq(cp_lemke_solve(ws, m, M, q, NULL, NULL, z, w, &info),
               CP_LCP_SOLVED, "%s", info.reason);
  const int cold0 = info.iterations;
  cr_assert_eq(cp_lemke_basis(ws, basis), 0);
  long cold = 0, warm = 0;
  int warm_pivoted = 0; /* warm solves that needed pivots (explicit inverse) */
  for (int t = 1; t <= 10; t++) {
    cp_gen_contact_like_perturbed(nc, ns, nb, 0.3, 8, t <= 5 ? 1e-3 : 3e-2,
                                  (uint64_t)t, M, q);
    cr_assert_eq(cp_lemke_solve(ws, m, M, q, NULL, NULL, z, w, &info),
                 CP_LCP_SOLVED, "%s", info.reason);
    cold += info.iterations;
    cpt_assert_lcp_solution(m, M, q, z, tol_for(m, q));
    cr_assert_eq(cp_lemke_solve(ws, m, M, q, NULL, basis, z, w, &info),
                 CP_LCP_SOLVED, "%s", info.reason);
    warm += info.iterations;
    warm_pivoted += info.iterations > 0 && info.starts == 1;
    cpt_assert_lcp_solution(m, M, q, z, tol_for(m, q));
  }
  cr_assert_gt(cold0, 0);
  cr_assert_gt(warm_pivoted, 0, "no warm solve needed pivots");
  cr_assert_lt(warm, cold, "warm %ld pivots, cold %ld", warm, cold);
  cp_lemke_ws_destroy(ws);
  free(M); free(q); free(z); free(w); free(basis);
}

Test(lemke, warm_start_with_singular_basis_falls_back_cold) {
  /* Column 1 of M is zero: any basis with z1 basic is singular. */
  const double rows[4] = {0, 1, 0, 2};
  double M[4], q[2] = {1, -1}, z[2], w[2];
  colmajor(2, rows, M);
  unsigned char warm[2] = {1, 0};
  cp_lemke_ws *ws = cp_lemke_ws_create(2);
  cp_lcp_info info;
  cr_assert_eq(cp_lemke_solve(ws, 2, M, q, NULL, warm, z, w, &info),
               CP_LCP_SOLVED, "%s", info.reason);
  cpt_assert_lcp_solution(2, M, q, z, 1e-12);
  cr_assert_float_eq(z[1], 0.5, 1e-14);
  cp_lemke_stats st;
  cp_lemke_get_stats(ws, &st);
  cr_assert_eq(st.warm_fallbacks, 1);
  unsigned char basis[2];
  cr_assert_eq(cp_lemke_basis(ws, basis), 0);
  cr_assert_eq(basis[0], 0);
  cr_assert_eq(basis[1], 1);
  cp_lemke_ws_destroy(ws);
}

/* ---- workspace ---------------------------------------------------------- */

Test(lemke, size_above_capacity_is_nomem) {
  double M[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, q[3] = {-1, -1, -1}, z[3], w[3];
  cp_lemke_ws *ws = cp_lemke_ws_create(2);
  cp_lcp_info info;
  cr_assert_eq(cp_lemke_solve(ws, 3, M, q, NULL, NULL, z, w, &info), CP_LCP_NOMEM);
  cr_assert_eq(info.status, CP_LCP_NOMEM);
  cr_assert_not_null(strstr(info.reason, "capacity"), "%s", info.reason);
  cp_lemke_ws_destroy(ws);
}

Test(lemke, workspace_reused_over_100_solves_allocates_nothing) {
  const int cap = 50;
  double *M = malloc(sizeof(double) * cap * cap);
  double *Ms = malloc(sizeof(double) * 100 * cap * cap);
  double q[100][50], z[100][50], w[50], z2[50];
  int sz[100];
  unsigned char basis[50];
  for (int t = 0; t < 100; t++) {
    sz[t] = 10 + (t * 7) % 41;
    cp_gen_monotone(sz[t], 1000 + (uint64_t)t, Ms + (size_t)t * cap * cap, q[t], NULL);
  }
  cp_lemke_ws *ws = cp_lemke_ws_create(cap);
  cp_lcp_status st[100];
  int warm_ok = 0;
#if CPT_COUNT_ALLOCS
  { /* the counter itself works */
    static void *volatile sink;
    n_allocs = 0;
    counting = 1;
    sink = malloc(16);
    counting = 0;
    free(sink);
    cr_assert_eq(n_allocs, 1, "allocation counter is not wired in");
  }
  n_allocs = 0;
  counting = 1;
#endif
  for (int t = 0; t < 100; t++) {
    cp_lcp_info info;
    const double *Mt = Ms + (size_t)t * cap * cap;
    st[t] = cp_lemke_solve(ws, sz[t], Mt, q[t], NULL, NULL, z[t], w, &info);
    /* And a warm re-solve from its own basis (LAPACK path). */
    if (st[t] == CP_LCP_SOLVED && cp_lemke_basis(ws, basis) == 0 &&
        cp_lemke_solve(ws, sz[t], Mt, q[t], NULL, basis, z2, w, &info) ==
            CP_LCP_SOLVED)
      warm_ok++;
  }
#if CPT_COUNT_ALLOCS
  counting = 0;
  cr_assert_eq(n_allocs, 0, "%ld allocations during 200 solves", n_allocs);
#endif
  cr_assert_eq(warm_ok, 100);
  for (int t = 0; t < 100; t++) {
    cr_assert_eq(st[t], CP_LCP_SOLVED, "solve %d", t);
    cpt_assert_lcp_solution(sz[t], Ms + (size_t)t * cap * cap, q[t], z[t],
                            tol_for(sz[t], q[t]));
  }
  cp_lemke_ws_destroy(ws);
  free(M);
  free(Ms);
}

/* ---- random families ------------------------------------------------------ */

Test(lemke, random_monotone_planted_instances) {
  cp_lemke_ws *ws = cp_lemke_ws_create(60);
  double *M = malloc(sizeof(double) * 60 * 60), q[60], z[60], w[60], zs[60];
  for (int n = 10; n <= 60; n += 5)
    for (uint64_t seed = 1; seed <= 4; seed++) {
      cp_gen_monotone(n, seed, M, q, zs);
      cp_lcp_info info;
      cr_assert_eq(cp_lemke_solve(ws, n, M, q, NULL, NULL, z, w, &info),
                   CP_LCP_SOLVED, "n %d seed %d: %s", n, (int)seed, info.reason);
      cr_assert_eq(info.starts, 1);
      cpt_assert_lcp_solution(n, M, q, z, tol_for(n, q));
    }
  cp_lemke_ws_destroy(ws);
  free(M);
}

Test(lemke, plain_rule_agrees_on_nondegenerate_problems) {
  const int n = 35;
  double *M = malloc(sizeof(double) * n * n), q[35], z[35], z2[35], w[35];
  cp_gen_monotone(n, 9, M, q, NULL);
  cp_lemke_ws *ws = cp_lemke_ws_create(n);
  cp_lemke_options o = cp_lemke_defaults();
  cp_lcp_info a, b;
  cr_assert_eq(cp_lemke_solve(ws, n, M, q, &o, NULL, z, w, &a), CP_LCP_SOLVED);
  o.lexicographic = 0;
  cr_assert_eq(cp_lemke_solve(ws, n, M, q, &o, NULL, z2, w, &b), CP_LCP_SOLVED);
  cr_assert_eq(a.iterations, b.iterations);
  for (int i = 0; i < n; i++) cr_assert_float_eq(z[i], z2[i], 1e-12);
  cp_lemke_ws_destroy(ws);
  free(M);
}

Test(lemke, contact_like_instances) {
  struct { int nc, ns, nb; double mu; } cfg[] = {
      {2, 0, 1, 0.5}, {4, 1, 2, 0.3}, {6, 2, 3, 0.5},
      {10, 2, 5, 0.2}, {16, 4, 8, 0.3}, {20, 5, 11, 0.3}};
  const int cap = cp_gen_contact_like_size(20, 0);
  cp_lemke_ws *ws = cp_lemke_ws_create(cap);
  double *M = malloc(sizeof(double) * cap * cap), *q = malloc(sizeof(double) * cap);
  double *z = malloc(sizeof(double) * cap), *w = malloc(sizeof(double) * cap);
  int solved = 0, total = 0;
  long z0_ties = 0;
  for (size_t c = 0; c < sizeof cfg / sizeof cfg[0]; c++)
    for (uint64_t seed = 1; seed <= 3; seed++) {
      const int m = cp_gen_contact_like_size(cfg[c].nc, cfg[c].ns);
      cp_gen_contact_like(cfg[c].nc, cfg[c].ns, cfg[c].nb, cfg[c].mu, seed, M, q);
      cp_lcp_info info;
      cp_lcp_status st = cp_lemke_solve(ws, m, M, q, NULL, NULL, z, w, &info);
      total++;
      cr_assert(st == CP_LCP_SOLVED, "config %d seed %d (m %d): %s (%s)",
                (int)c, (int)seed, m, cp_lcp_status_name(st), info.reason);
      solved++;
      cpt_assert_lcp_solution(m, M, q, z, tol_for(m, q));
      cp_lemke_stats cs;
      cp_lemke_get_stats(ws, &cs);
      z0_ties += cs.z0_ties;
    }
  cr_assert_eq(solved, total);
  /* Pyramid LCPs end degenerate (rolling contacts: a+ = a- = 0): the branch
   * that lets z0 leave on a ratio tie must have been taken. */
  cr_assert_gt(z0_ties, 0);
  cp_lemke_ws_destroy(ws);
  free(M); free(q); free(z); free(w);
}

Test(lemke, invalid_covering_vector_is_rejected) {
  double M[1] = {1}, q[1] = {-1}, z[1], w[1], d[1] = {0.0};
  cp_lemke_ws *ws = cp_lemke_ws_create(1);
  cp_lemke_options o = cp_lemke_defaults();
  o.cover = d;
  cp_lcp_info info;
  cr_assert_neq(cp_lemke_solve(ws, 1, M, q, &o, NULL, z, w, &info), CP_LCP_SOLVED);
  d[0] = 2.5; /* a custom positive cover works */
  cr_assert_eq(cp_lemke_solve(ws, 1, M, q, &o, NULL, z, w, &info), CP_LCP_SOLVED);
  cr_assert_float_eq(z[0], 1.0, 1e-14);
  cp_lemke_ws_destroy(ws);
}

Test(lemke, non_finite_data_is_never_reported_solved) {
  const double rows[4] = {2, 1, 1, 2};
  double M[4], q[2] = {-5, NAN}, z[2], w[2];
  colmajor(2, rows, M);
  cp_lemke_ws *ws = cp_lemke_ws_create(2);
  cp_lcp_info info;
  cr_assert_eq(cp_lemke_solve(ws, 2, M, q, NULL, NULL, z, w, &info),
               CP_LCP_NUMERICAL);
  q[1] = -6;
  M[2] = NAN; /* M(0,1) */
  cp_lcp_status st = cp_lemke_solve(ws, 2, M, q, NULL, NULL, z, w, &info);
  cr_assert_neq(st, CP_LCP_SOLVED, "NaN in M reported as solved");
  cr_assert_neq(info.reason[0], '\0');
  cp_lemke_ws_destroy(ws);
}

/* The first pivot's lexicographic tie from the all-w basis (B^-1 = I,
 * decided without reading B^-1 on both paths): q = -(1, 2, 1.5) over the
 * cover d = (1, 2, 1.5) ties all three rows at q_i / d_i = -1; the rows of
 * B^-1 / d are e_i / d_i, whose lexicographic minimum is the last row (rows
 * 1 and 2 lose at their own columns). Then M = I solves it: z = -q. */
typedef struct first_piv { int seen, row, ties; } first_piv;
static void note_first(void *ctx, const cp_lemke_step *s) {
  first_piv *f = ctx;
  if (f->seen++) return;
  f->row = s->row;
  f->ties = s->ties;
}
Test(lemke, first_pivot_tie_on_the_identity_basis) {
  const double M[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, q[3] = {-1, -2, -1.5};
  const double d[3] = {1, 2, 1.5};
  for (int small = -1; small <= 3; small += 4) { /* structured, tableau */
    cp_lemke_ws *ws = cp_lemke_ws_create(3);
    cp_lemke_options o = cp_lemke_defaults();
    o.cover = d;
    o.small_n = small;
    first_piv f = {0, -1, 0};
    cp_lemke_set_trace(ws, note_first, &f);
    double z[3], w[3];
    cp_lcp_info info;
    cr_assert_eq(cp_lemke_solve(ws, 3, M, q, &o, NULL, z, w, &info), CP_LCP_SOLVED);
    cr_assert_eq(f.ties, 3, "small_n %d", small);
    cr_assert_eq(f.row, 2, "small_n %d: row %d", small, f.row);
    cp_lemke_stats st;
    cp_lemke_get_stats(ws, &st);
    cr_assert_eq(st.small_starts, small > 0);
    for (int i = 0; i < 3; i++) cr_assert_float_eq(z[i], -q[i], 1e-14);
    cp_lemke_ws_destroy(ws);
  }
}

/* The end of a structured start forms M z + q once, with the check's own
 * scan, and hands its row scales to the check's judge (contact/lemke.c,
 * cp_lk_finish): the verdict and the reported measures must be those of
 * cp_lcp_check on the returned pair, and w that pair's M z + q (0 where
 * z_i > 0), with or without a refinement step before it. Sizes 5..40
 * (the structured path) over planted and contact-like problems (a probe
 * counted 13 of the 47 finishes with a refinement step, 34 without). */
Test(lemke, structured_finish_reports_what_the_check_reports) {
  const int cap = 40;
  cp_lemke_ws *ws = cp_lemke_ws_create(cap);
  double *M = malloc(sizeof(double) * cap * cap), q[40], z[40], w[40];
  int count = 0;
  /* Planted monotone problems (n = 5..40) and contact-like ones (nc = 1..8
   * contacts, m = 5 nc). */
  for (int n = 5; n <= cap; n += 5)
    for (uint64_t seed = 1; seed <= 6; seed++) {
      const int nc = n / 5, m = seed <= 3 ? n : cp_gen_contact_like_size(nc, 0);
      if (seed <= 3) cp_gen_monotone(n, seed, M, q, NULL);
      else cp_gen_contact_like(nc, 0, nc, 0.4, seed, M, q);
      cp_lcp_info a, b;
      cr_assert_eq(cp_lemke_solve(ws, m, M, q, NULL, NULL, z, w, &a),
                   CP_LCP_SOLVED, "m %d seed %d: %s", m, (int)seed, a.reason);
      cr_assert(cp_lcp_check(m, M, q, z, w, NULL, &b));
      cr_assert_eq(a.complementarity, b.complementarity, "m %d seed %d", m, (int)seed);
      cr_assert_eq(a.residual, b.residual);
      cr_assert_eq(a.min_z, b.min_z);
      cr_assert_eq(a.min_w, b.min_w);
      for (int i = 0; i < m; i++) {
        double s = q[i];
        for (int j = 0; j < m; j++) s += M[i + j * m] * z[j];
        if (z[i] > 0.0) cr_assert_eq(w[i], 0.0);
        else cr_assert_float_eq(w[i], s, 1e-12 * (1.0 + fabs(s)), "m %d row %d", m, i);
      }
      cpt_assert_lcp_solution(m, M, q, z, tol_for(m, q));
      count++;
    }
  cr_assert_eq(count, 48);
  cp_lemke_ws_destroy(ws);
  free(M);
}

Test(lemke, classic_pass_keeps_the_rules_before_the_error_bounds) {
  /* lcp_tobenna (n = 40) is what the error bounds were made for: under
   * the rules before them (the classic pass) its first start leaves the
   * exact path on noise and wanders into the pivot cap, 50 (n + 1) + 100
   * = 2150 pivots, and the first random cover solves it (2299 pivots in
   * two starts, commit f641725's message); the ordinary pass solves it
   * in its first start, 127 pivots. */
  cp_lcp L;
  cpt_load_lcp("siconos/lcp_tobenna.dat", &L);
  const int n = L.n;
  double *z = malloc(sizeof(double) * 2 * (size_t)n), *w = z + n;
  cp_lemke_ws *ws = cp_lemke_ws_create(n);
  cp_lemke_options o = cp_lemke_defaults();
  cp_lcp_info info;
  cr_assert_eq(cp_lemke_solve(ws, n, L.M, L.q, &o, NULL, z, w, &info), CP_LCP_SOLVED);
  cr_assert_eq(info.starts, 1);
  cr_assert_eq(info.iterations, 127);
  o.classic = 2;
  cr_assert_eq(cp_lemke_solve(ws, n, L.M, L.q, &o, NULL, z, w, &info), CP_LCP_SOLVED,
               "%s", info.reason);
  int pps[4];
  cr_assert_eq(cp_lemke_pivots_per_start(ws, pps, 4), 2);
  cr_assert_eq(pps[0], 50 * (n + 1) + 100);
  cr_assert_eq(info.iterations, 2299, "got %d", info.iterations);
  cpt_assert_lcp_solution(n, L.M, L.q, z, 1e-8);
  cp_lemke_ws_destroy(ws);
  free(z);
  cp_lcp_free(&L);
}

/* ---- the poll hook (cp_lemke_set_poll) ------------------------------------ */

typedef struct polls {
  long calls;
} polls;

static void count_poll(void *ctx) { ((polls *)ctx)->calls++; }

/* A planted problem of N = 390 rows (planted_problem, seed) and room for
 * two answers. */
enum { POLL_N = 390 };
typedef struct poll_lcp {
  double *M, *q, *zs, *z0, *z1, *w;
} poll_lcp;

static poll_lcp poll_problem(uint64_t seed) {
  const size_t n = POLL_N;
  poll_lcp p = {malloc(sizeof(double) * n * n), malloc(sizeof(double) * n),
                malloc(sizeof(double) * n),     malloc(sizeof(double) * n),
                malloc(sizeof(double) * n),     malloc(sizeof(double) * n)};
  cr_assert(p.M && p.q && p.zs && p.z0 && p.z1 && p.w);
  planted_problem(&seed, POLL_N, p.M, p.q, p.zs);
  return p;
}

static void poll_problem_free(poll_lcp *p) {
  free(p->M), free(p->q), free(p->zs), free(p->z0), free(p->z1), free(p->w);
}

/* A long cold solve (n = 390, hundreds of pivots) with the hook every 7
 * and every pivot: the same status, pivots and z, bit for bit, as without
 * it; the hook called floor(pivots / period) times. */
Test(lemke, poll_hook_is_called_every_period_and_changes_nothing) {
  enum { N = POLL_N };
  poll_lcp P = poll_problem(78);
  double *M = P.M, *q = P.q, *z0 = P.z0, *z1 = P.z1, *w = P.w;
  cp_lemke_ws *ws = cp_lemke_ws_create(N);
  cr_assert_not_null(ws);
  cp_lcp_info i0, i1;
  cr_assert_eq(cp_lemke_solve(ws, N, M, q, NULL, NULL, z0, w, &i0), CP_LCP_SOLVED);
  cr_assert_gt(i0.iterations, 100, "a long solve: %d pivots", i0.iterations);
  static const int periods[] = {7, 1, 1000000};
  for (int k = 0; k < 3; k++) {
    polls p = {0};
    cr_assert_eq(cp_lemke_set_poll(ws, count_poll, &p, periods[k]), 0);
    cr_assert_eq(cp_lemke_solve(ws, N, M, q, NULL, NULL, z1, w, &i1), CP_LCP_SOLVED);
    cr_assert_eq(i1.iterations, i0.iterations, "period %d", periods[k]);
    cr_assert_eq(i1.starts, i0.starts);
    for (int i = 0; i < N; i++)
      cr_assert(z1[i] == z0[i], "period %d z[%d]: %.17g != %.17g", periods[k], i,
                z1[i], z0[i]);
    cr_assert_eq(p.calls, i0.iterations / periods[k], "period %d: %ld calls, %d pivots",
                 periods[k], p.calls, i0.iterations);
  }
  /* Removed: no more calls. */
  polls p = {0};
  cr_assert_eq(cp_lemke_set_poll(ws, count_poll, &p, 5), 0);
  cr_assert_eq(cp_lemke_set_poll(ws, NULL, NULL, 0), 0);
  cr_assert_eq(cp_lemke_solve(ws, N, M, q, NULL, NULL, z1, w, &i1), CP_LCP_SOLVED);
  cr_assert_eq(p.calls, 0);
  /* Bad settings change nothing. */
  cr_assert_eq(cp_lemke_set_poll(ws, count_poll, &p, 0), -1);
  cr_assert_eq(cp_lemke_set_poll(NULL, count_poll, &p, 3), -1);
  cr_assert_eq(cp_lemke_solve(ws, N, M, q, NULL, NULL, z1, w, &i1), CP_LCP_SOLVED);
  cr_assert_eq(p.calls, 0);
  cp_lemke_ws_destroy(ws);
  poll_problem_free(&P);
}

/* Pivots are counted over a solve's starts (four starts capped at 40
 * pivots: 160 pivots, 22 calls at period 7, where per start it would be
 * 20), from 0 at each solve; the hook moves with cp_lemke_ws_regrow. */
Test(lemke, poll_hook_counts_over_starts_and_survives_regrow) {
  enum { N = POLL_N };
  poll_lcp P = poll_problem(79);
  double *M = P.M, *q = P.q, *z0 = P.z0, *z1 = P.z1, *w = P.w;
  cp_lemke_options o = cp_lemke_defaults();
  o.max_pivots = 40;
  cp_lemke_ws *ws = cp_lemke_ws_create(N);
  cr_assert_not_null(ws);
  cp_lcp_info i0, i1;
  cr_assert_eq(cp_lemke_solve(ws, N, M, q, &o, NULL, z0, w, &i0), CP_LCP_PIVOT_CAP);
  cr_assert_eq(i0.starts, 4);
  cr_assert_eq(i0.iterations, 160);
  polls p = {0};
  cr_assert_eq(cp_lemke_set_poll(ws, count_poll, &p, 7), 0);
  for (int round = 1; round <= 2; round++) {
    cr_assert_eq(cp_lemke_solve(ws, N, M, q, &o, NULL, z1, w, &i1), CP_LCP_PIVOT_CAP);
    cr_assert_eq(i1.iterations, 160);
    cr_assert_eq(p.calls, round * 22, "round %d: %ld calls", round, p.calls);
    for (int i = 0; i < N; i++) cr_assert(z1[i] == z0[i], "z[%d]", i);
  }
  ws = cp_lemke_ws_regrow(ws, N + 10);
  cr_assert_not_null(ws);
  p.calls = 0;
  cr_assert_eq(cp_lemke_solve(ws, N, M, q, NULL, NULL, z1, w, &i1), CP_LCP_SOLVED);
  cr_assert_gt(i1.iterations, 100);
  cr_assert_eq(p.calls, i1.iterations / 7, "after regrow: %ld calls, %d pivots",
               p.calls, i1.iterations);
  cp_lemke_ws_destroy(ws);
  poll_problem_free(&P);
}
