/* The LCP type, the acceptance check, basis solves, and the pyramid LCP's
 * assembly checked against a direct evaluation of docs/math.md §4. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "contact/check_impl.h"
#include "contact/lcp.h"
#include "contact/pyramid.h"
#include "tests/support.h"

/* M = [[2, 1], [1, 2]], q = [-5, -6]: z = (4/3, 7/3), w = 0. */
static const double M2[4] = {2, 1, 1, 2};
static const double q2[2] = {-5, -6};

Test(lcp, check_accepts_exact_and_rejects_each_violation) {
  cp_lcp_info info;
  cp_lcp_info_clear(&info);
  double z[2] = {4.0 / 3.0, 7.0 / 3.0};
  cr_assert(cp_lcp_check(2, M2, q2, z, NULL, NULL, &info));
  cr_assert_lt(info.complementarity, 1e-14);

  double zneg[2] = {-1.0, 0.0}; /* w = (-7, -7) too, but z < 0 is found first */
  cr_assert_not(cp_lcp_check(2, M2, q2, zneg, NULL, NULL, &info));
  cr_assert(strstr(info.reason, "z < 0"), "%s", info.reason);

  double zero[2] = {0, 0}; /* w = q < 0 */
  cr_assert_not(cp_lcp_check(2, M2, q2, zero, NULL, NULL, &info));
  cr_assert(strstr(info.reason, "w = M z + q < 0"), "%s", info.reason);

  /* Feasible but not complementary: z = (3, 3), w = (4, 3). */
  double zc[2] = {3, 3};
  cr_assert_not(cp_lcp_check(2, M2, q2, zc, NULL, NULL, &info));
  cr_assert(strstr(info.reason, "z_i w_i"), "%s", info.reason);

  /* A solver's w that does not equal M z + q is rejected. */
  double wbad[2] = {0.0, 1e-3};
  cr_assert_not(cp_lcp_check(2, M2, q2, z, wbad, NULL, &info));
  cr_assert(strstr(info.reason, "differs"), "%s", info.reason);

  double znan[2] = {NAN, 1};
  cr_assert_not(cp_lcp_check(2, M2, q2, znan, NULL, NULL, &info));
  cr_assert(strstr(info.reason, "non-finite"), "%s", info.reason);
}

/* Each row is judged against its own scale |M_i||z| + |q_i| (issue 12):
 * a huge q_1 does not loosen row 2. */
Test(lcp, check_tolerance_is_row_by_row) {
  double M[4] = {1, 0, 0, 1}, q[2] = {1.7e308, -2.10}, z[2] = {0, 0};
  cp_lcp_info info;
  cp_lcp_info_clear(&info);
  cr_assert_not(cp_lcp_check(2, M, q, z, NULL, NULL, &info));
  cr_assert(strstr(info.reason, "row 1") && strstr(info.reason, "w = M z + q < 0"),
            "%s", info.reason);
  z[1] = 2.10; /* the true solution */
  cr_assert(cp_lcp_check(2, M, q, z, NULL, NULL, &info), "%s", info.reason);
  /* Row 2 off by 1e-5 relative to its own scale (2.1 + 2.1): rejected; by
   * 1e-7: accepted. */
  z[1] = 2.10 * (1 - 1e-5);
  cr_assert_not(cp_lcp_check(2, M, q, z, NULL, NULL, &info));
  z[1] = 2.10 * (1 - 1e-7);
  cr_assert(cp_lcp_check(2, M, q, z, NULL, NULL, &info), "%s", info.reason);

  /* A tiny row (entries 1e-9) is judged at its scale: w_2 = -1e-12 is a
   * relative error of 1e-3 there and fails, although |w_2| << 1e-6. */
  double Ms[4] = {1e8, 0, 0, 1e-9}, qs[2] = {-1e8, -1e-9}, zs[2] = {1, 0.999};
  cr_assert_not(cp_lcp_check(2, Ms, qs, zs, NULL, NULL, &info));
  cr_assert(strstr(info.reason, "row 1"), "%s", info.reason);
  zs[1] = 1.0;
  cr_assert(cp_lcp_check(2, Ms, qs, zs, NULL, NULL, &info), "%s", info.reason);

  /* Complementarity: z_i > 0 with w_i clearly positive fails... */
  double M1[1] = {1}, q1[1] = {1}, z1[1] = {1e-3};
  cr_assert_not(cp_lcp_check(1, M1, q1, z1, NULL, NULL, &info));
  cr_assert(strstr(info.reason, "z_i w_i"), "%s", info.reason);
  /* ...unless z_i is negligible in every row it touches. */
  z1[0] = 1e-9;
  cr_assert(cp_lcp_check(1, M1, q1, z1, NULL, NULL, &info), "%s", info.reason);
}

Test(lcp, solve_basis_and_polish) {
  unsigned char basis[2] = {1, 1};
  double z[2], w[2];
  cr_assert_eq(cp_lcp_solve_basis(2, M2, q2, basis, z, w), 0);
  cr_assert_float_eq(z[0], 4.0 / 3.0, 1e-14);
  cr_assert_float_eq(z[1], 7.0 / 3.0, 1e-14);
  cpt_assert_lcp_solution(2, M2, q2, z, 1e-12);

  /* A singular basis matrix: M with a zero column. */
  double Ms[4] = {0, 0, 1, 1};
  cr_assert_eq(cp_lcp_solve_basis(2, Ms, q2, basis, z, w), -1);

  /* Polishing an interior-point style approximation snaps to the vertex. */
  double za[2] = {4.0 / 3.0 + 1e-7, 7.0 / 3.0 - 2e-7}, wa[2];
  cp_lcp_eval(2, M2, q2, za, wa);
  wa[0] = fabs(wa[0]) + 1e-8;
  wa[1] = fabs(wa[1]) + 1e-8;
  cr_assert_eq(cp_lcp_polish(2, M2, q2, za, wa, NULL), 1);
  cr_assert_float_eq(za[0], 4.0 / 3.0, 1e-14);
  cr_assert_float_eq(wa[1], 0.0, 1e-14);
}

Test(lcp, names) {
  cp_lcp_solver s;
  cr_assert_eq(cp_lcp_solver_parse("fip", &s), 0);
  cr_assert_eq(s, CP_SOLVER_FIP);
  cr_assert_eq(cp_lcp_solver_parse("simplex", &s), -1);
  cr_assert_str_eq(cp_lcp_status_name(CP_LCP_INFEASIBLE), "no solution");
  cr_assert_str_eq(cp_lcp_solver_name(CP_SOLVER_AUTO), "auto");
}

/* The pyramid LCP (formulation §4), checked without reusing its assembly:
 * for random A, b and a random z, recover the forces, evaluate a = A c + b
 * directly, and compare every row of w = M z + q with its definition. */
Test(lcp, pyramid_rows_match_their_definitions) {
  uint64_t s = 42;
  enum { NC = 5 };
  const int n3 = 3 * NC;
  double A[3 * NC * 3 * NC], b[3 * NC];
  for (int k = 0; k < n3 * n3; k++) A[k] = cpt_uniform(&s, -1, 1);
  for (int k = 0; k < n3; k++) b[k] = cpt_uniform(&s, -1, 1);
  cp_pyramid_contact c[NC];
  for (int j = 0; j < NC; j++) {
    c[j].mu = cpt_uniform(&s, 0.1, 1.0);
    c[j].sliding = (j == 1 || j == 3);
    double ang = cpt_uniform(&s, 0, 6.283185307179586);
    c[j].d[0] = c[j].mu * cos(ang);
    c[j].d[1] = c[j].mu * sin(ang);
  }
  int order[NC], rank[NC];
  cp_pyramid_layout lay;
  cp_pyramid_layout_make(NC, c, order, rank, &lay);
  cr_assert_eq(lay.ns, 2);
  cr_assert_eq(lay.nr, 3);
  cr_assert_eq(lay.m, 2 + 5 * 3); /* nS + 5 nR */
  const int m = lay.m;
  double *M = malloc(sizeof(double) * m * m), *q = malloc(sizeof(double) * m);
  cp_pyramid_build(&lay, c, A, b, M, q);
  double z[17], w[17], force[3 * NC], a[3 * NC];
  for (int k = 0; k < m; k++) z[k] = cpt_uniform(&s, 0, 2);
  cp_lcp_eval(m, M, q, z, w);
  cp_pyramid_forces(&lay, c, z, force);
  for (int i = 0; i < n3; i++) {
    a[i] = b[i];
    for (int j = 0; j < n3; j++) a[i] += A[i + j * n3] * force[j];
  }
  for (int k = 0; k < NC; k++) { /* a_n rows, sliding first */
    int j = order[k];
    cr_assert_float_eq(w[k], a[3 * j], 1e-12);
    if (c[j].sliding) { /* friction opposes sliding at full magnitude */
      cr_assert_float_eq(force[3 * j + 1], -c[j].d[0] * z[k], 1e-14);
      cr_assert_float_eq(force[3 * j + 2], -c[j].d[1] * z[k], 1e-14);
    }
  }
  const int nr = lay.nr, base = NC;
  for (int r = 0; r < nr; r++) {
    int j = order[lay.ns + r], kn = lay.ns + r;
    double cn = z[kn], spt = z[base + r], spo = z[base + nr + r];
    double amt = z[base + 2 * nr + r], amo = z[base + 3 * nr + r];
    cr_assert_float_eq(force[3 * j + 1], spt - c[j].mu * cn, 1e-14);
    cr_assert_float_eq(force[3 * j + 2], spo - c[j].mu * cn, 1e-14);
    cr_assert_float_eq(w[base + r], a[3 * j + 1] + amt, 1e-12);          /* a+_t */
    cr_assert_float_eq(w[base + nr + r], a[3 * j + 2] + amo, 1e-12);     /* a+_o */
    cr_assert_float_eq(w[base + 2 * nr + r], 2 * c[j].mu * cn - spt, 1e-12); /* s-_t */
    cr_assert_float_eq(w[base + 3 * nr + r], 2 * c[j].mu * cn - spo, 1e-12); /* s-_o */
  }
  free(M);
  free(q);
}

/* The check in two parts (contact/check_impl.h, Lemke's small path uses
 * it): scan then judge gives cp_lcp_check's verdict, measures and reason;
 * a rescan that keeps the row norms (norms = 0) leaves the same buffer as a
 * fresh one; accepted pairs report the measures of a direct evaluation,
 * also when a negligible negative z_i sends the judge through its full
 * row rules. Sizes 2-4 (the constant-size copies), 5 (the plain scan) and
 * 12 (the vectorised one). */
Test(lcp, check_in_two_parts_matches_the_check) {
  static const int sizes[] = {2, 3, 4, 5, 12};
  for (int k = 0; k < 5; k++) {
    const int n = sizes[k];
    double *M = malloc(sizeof(double) * (size_t)(n * n));
    double q[12], z[12], w[12], buf[36], buf2[36];
    uint64_t s = 12345;
    for (int i = 0; i < n * n; i++) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      M[i] = (double)(s >> 11) * 0x1.0p-53 - 0.5;
    }
    for (int i = 0; i < n; i++) M[i + i * n] += n; /* positive definite */
    /* z > 0 on the even rows with w = 0 there, z = 0 and w = 1 on the odd:
     * q = w - M z. Row 1 then gets z = -1e-14, negligible. */
    for (int i = 0; i < n; i++) z[i] = i % 2 ? 0.0 : 1.0 + i;
    for (int i = 0; i < n; i++) {
      q[i] = i % 2 ? 1.0 : 0.0;
      for (int j = 0; j < n; j++) q[i] -= M[i + j * n] * z[j];
    }
    for (int pass = 0; pass < 3; pass++) {
      if (pass == 1) z[1] = -1e-14;          /* negligible: accepted */
      if (pass == 2) z[1] = -1e-3;           /* not negligible: rejected */
      cp_lcp_eval(n, M, q, z, w);
      cp_lcp_info a, b;
      cp_lcp_info_clear(&a);
      cp_lcp_info_clear(&b);
      const int ok = cp_lcp_check(n, M, q, z, w, NULL, &a);
      const double zmax = cp_lcp_check_scan(n, M, q, z, buf, 1);
      memcpy(buf2, buf, sizeof buf);
      cr_assert_eq(cp_lcp_check_scan(n, M, q, z, buf2, 0), zmax);
      cr_assert_eq(memcmp(buf, buf2, sizeof(double) * 3 * (size_t)n), 0);
      cr_assert_eq(cp_lcp_check_judge(n, M, z, w, buf, zmax, NULL, &b), ok);
      cr_assert_eq(ok, pass < 2, "n %d pass %d: %s", n, pass, a.reason);
      cr_assert_eq(a.complementarity, b.complementarity);
      cr_assert_eq(a.residual, b.residual);
      cr_assert_eq(a.min_z, b.min_z);
      cr_assert_eq(a.min_w, b.min_w);
      cr_assert_str_eq(a.reason, b.reason);
      double comp = 0.0, minz = INFINITY, minw = INFINITY;
      for (int i = 0; i < n; i++) {
        comp = fmax(comp, fabs(z[i] * w[i]));
        minz = fmin(minz, z[i]);
        minw = fmin(minw, w[i]);
      }
      cr_assert_float_eq(a.complementarity, comp, 1e-12 * (1.0 + comp));
      cr_assert_eq(a.min_z, minz);
      cr_assert_float_eq(a.min_w, minw, 1e-12);
      cr_assert_eq(a.residual, 0.0); /* w is what the check recomputes */
      if (pass == 2) cr_assert(strstr(a.reason, "solution check failed at row"), "%s", a.reason);
    }
    free(M);
  }
}
