/* The polygonal cone model: row definitions, k = 4 equals the pyramid's force
 * set, and a pushed point mass whose friction must oppose its acceleration
 * (isotropic Coulomb law), which the pyramid gets wrong and the refined
 * polygon gets right. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/cone.h"
#include "contact/lemke.h"
#include "tests/support.h"

Test(cone, rows_match_definitions) {
  enum { NC = 3, K = 6 };
  uint64_t s = 11;
  double A[81], b[9];
  for (int i = 0; i < 81; i++) A[i] = cpt_uniform(&s, -1, 1);
  for (int i = 0; i < 9; i++) b[i] = cpt_uniform(&s, -1, 1);
  cp_pyramid_contact c[NC] = {{0.4, 0, {0, 0}}, {0.6, 1, {0.3, -0.5}}, {0.9, 0, {0, 0}}};
  int order[NC], rank[NC];
  cp_pyramid_layout lay;
  cp_pyramid_layout_make(NC, c, order, rank, &lay);
  int m = cp_cone_size(&lay, K);
  cr_assert_eq(m, NC + 2 * (K + 1));
  double *M = malloc(sizeof(double) * m * m), *q = malloc(sizeof(double) * m);
  double z[32], w[32], f[9], a[9];
  cp_cone_build(&lay, c, K, A, b, M, q);
  for (int i = 0; i < m; i++) z[i] = cpt_uniform(&s, 0, 1);
  for (int i = 0; i < m; i++) {
    w[i] = q[i];
    for (int j = 0; j < m; j++) w[i] += M[i + j * m] * z[j];
  }
  cp_cone_forces(&lay, c, K, z, f);
  for (int i = 0; i < 9; i++) {
    a[i] = b[i];
    for (int j = 0; j < 9; j++) a[i] += A[i + j * 9] * f[j];
  }
  const double pi = 3.14159265358979323846;
  for (int kk = 0; kk < NC; kk++) cr_assert_float_eq(w[kk], a[3 * order[kk]], 1e-12);
  for (int r = 0; r < lay.nr; r++) {
    int j = order[lay.ns + r];
    double sum = 0, lam = z[NC + lay.nr * K + r];
    for (int i = 0; i < K; i++) {
      double phi = pi / K + 2 * pi * i / K, sc = 1 / cos(pi / K);
      double expect = lam + sc * (cos(phi) * a[3 * j + 1] + sin(phi) * a[3 * j + 2]);
      cr_assert_float_eq(w[NC + r * K + i], expect, 1e-12);
      sum += z[NC + r * K + i];
    }
    cr_assert_float_eq(w[NC + lay.nr * K + r], c[j].mu * z[lay.ns + r] - sum, 1e-12);
  }
  /* The sliding contact's friction is -d c_n. */
  cr_assert_float_eq(f[4], -0.3 * z[0], 1e-14);
  free(M);
  free(q);
}

/* k = 4: the edge vectors are (+-1, +-1): the pyramid's square. */
Test(cone, k4_is_the_pyramid_square) {
  cp_pyramid_contact c[1] = {{0.5, 0, {0, 0}}};
  int order[1], rank[1];
  cp_pyramid_layout lay;
  cp_pyramid_layout_make(1, c, order, rank, &lay);
  for (int i = 0; i < 4; i++) {
    double z[6] = {2.0, 0, 0, 0, 0, 0}, f[3];
    z[1 + i] = 1.0; /* e^T beta = mu c_n: a vertex */
    cp_cone_forces(&lay, c, 4, z, f);
    cr_assert_float_eq(fabs(f[1]), 1.0, 1e-12);
    cr_assert_float_eq(fabs(f[2]), 1.0, 1e-12);
  }
}

/* A unit point mass on a table (A = I), gravity 9.81, pushed horizontally by
 * 8 N at 30 degrees from t, mu = 0.5: it slides with |a_tan| = 8 - 4.905
 * along the push. A k-gon's friction sits at a vertex, at most pi/k off the
 * true direction, so the error is bounded by mu g sin(pi/k) / |a| (7.8 % at
 * k = 64); k = 4 (the pyramid's square) is far off. contact/problem.c makes
 * sliding contacts exact on top of this (tested in test_problem.c). */
Test(cone, pushed_point_mass_isotropic) {
  const double g = 9.81, F = 8.0, mu = 0.5, th = 3.14159265358979323846 / 6;
  double A[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, b[3] = {-g, F * cos(th), F * sin(th)};
  cp_pyramid_contact c[1] = {{mu, 0, {0, 0}}};
  int order[1], rank[1];
  cp_pyramid_layout lay;
  cp_pyramid_layout_make(1, c, order, rank, &lay);
  cp_lemke_ws *ws = cp_lemke_ws_create(200);
  cp_lemke_options opt = cp_lemke_defaults();
  double M[200 * 200], q[200], z[200], w[200], f[3];
  int ks[2] = {4, 64};
  double err[2];
  for (int t = 0; t < 2; t++) {
    int k = ks[t], m = cp_cone_size(&lay, k);
    cp_cone_build(&lay, c, k, A, b, M, q);
    cp_lcp_info info;
    cr_assert_eq(cp_lemke_solve(ws, m, M, q, &opt, NULL, z, w, &info), CP_LCP_SOLVED,
                 "k = %d: %s", k, info.reason);
    cp_cone_forces(&lay, c, k, z, f);
    cr_assert_float_eq(f[0], g, 1e-9);
    double at = b[1] + f[1], ao = b[2] + f[2];
    double expect = F - mu * g;
    err[t] = hypot(at - expect * cos(th), ao - expect * sin(th)) / expect;
  }
  const double bound = mu * g * sin(3.14159265358979323846 / 64) / (F - mu * g);
  cr_assert_lt(err[1], bound, "k = 64 error %g above the polygon bound %g", err[1], bound);
  cr_assert_gt(err[0], 0.05, "k = 4 should show the pyramid's anisotropy (error %g)", err[0]);
  cp_lemke_ws_destroy(ws);
}
