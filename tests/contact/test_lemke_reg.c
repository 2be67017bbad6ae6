/* Lemke's regularised route (contact/lemke_reg.c; docs/solvers.md, "The
 * regularised route"): an LCP where Lemke's method ends on a secondary ray
 * (on the exact path too: the GMP oracle) although a face of solutions
 * exists, found by the route and verified; an LCP without solution, where
 * the route finds a regularised answer but no point of its face, and says
 * so; the options; and the route as a step of cp_lcp_solve. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "contact/certify.h"
#include "contact/fip.h"
#include "contact/lemke.h"
#include "contact/solve.h"
#include "tests/contact/lemke_exact.h"

/* M = [[0, 0, 3], [1, 0, -1], [0, 0, 1]] (column-major below), q = (-3, -1,
 * -1): w = (3 z3 - 3, z1 - z3 - 1, z3 - 1). w3 >= 0 and z3 w3 = 0 force
 * z3 = 1, then w1 = 0, and w2 = z1 - 2 >= 0 with z1 w2 = 0 forces z1 = 2;
 * z2's column is zero, so every z = (2, t, 1), t >= 0, solves the LCP (a
 * face of solutions) with w = 0. M is not copositive (z = (0, 2, 1): z^T M
 * z = -1), and Lemke's method ends on a secondary ray: once w2 leaves, z2
 * enters and its column has no positive entry. */
static const double M3[9] = {0, 1, 0, 0, 0, 0, 3, -1, 1};
static const double q3[3] = {-3, -1, -1};

static void assert_on_the_face(const double *z, const double *w) {
  cr_assert_float_eq(z[0], 2.0, 1e-12);
  cr_assert_float_eq(z[2], 1.0, 1e-12);
  cr_assert_geq(z[1], 0.0);
  /* w recomputed here from the data, independently of the solver */
  const double wr[3] = {3 * z[2] - 3, z[0] - z[2] - 1, z[2] - 1};
  for (int i = 0; i < 3; i++) {
    cr_assert_float_eq(wr[i], 0.0, 1e-12, "row %d", i);
    cr_assert_float_eq(w[i], wr[i], 1e-12, "row %d", i);
  }
}

Test(lemke_reg, plain_lemke_ends_on_a_ray_on_the_exact_path_too) {
  double z[3], w[3];
  cp_lemke_ws *ws = cp_lemke_ws_create(3);
  cp_lemke_options lo = cp_lemke_defaults();
  lo.restarts = 0;
  cp_lcp_info info;
  cr_assert_eq(cp_lemke_solve(ws, 3, M3, q3, &lo, NULL, z, w, &info),
               CP_LCP_SECONDARY_RAY);
  lo = cp_lemke_defaults();
  lo.rescue = 1; /* every start, the rescue pass too */
  cr_assert_neq(cp_lemke_solve(ws, 3, M3, q3, &lo, NULL, z, w, &info), CP_LCP_SOLVED);
  cpt_exact_result ex = cpt_lemke_exact(3, M3, q3, NULL, 0, NULL, NULL, 0);
  cr_assert_eq(ex.status, CP_LCP_SECONDARY_RAY, "the ray is the method's, not rounding");
  /* the regularised problem (m = max M_ii = 1, eps = 1e-3) is solved by the
   * exact path as well */
  double Mr[9];
  memcpy(Mr, M3, sizeof Mr);
  for (int i = 0; i < 3; i++) Mr[i * 3 + i] += 1e-3;
  double ze[3];
  ex = cpt_lemke_exact(3, Mr, q3, NULL, 0, ze, NULL, 0);
  cr_assert_eq(ex.status, CP_LCP_SOLVED);
  cr_assert_gt(ze[0], 0.0);
  cr_assert_gt(ze[2], 0.0);
  cp_lemke_ws_destroy(ws);
}

Test(lemke_reg, route_finds_a_verified_point_of_the_face) {
  double z[3], w[3];
  cp_lcp_info info;
  cp_lemke_reg_report rep;
  cr_assert_eq(cp_lemke_regularised(NULL, 3, M3, q3, NULL, NULL, z, w, &info, &rep),
               CP_LCP_SOLVED, "%s", info.reason);
  assert_on_the_face(z, w);
  cr_assert_eq(info.solver, CP_SOLVER_LEMKE);
  cr_assert_eq(rep.tried, 1);
  cr_assert_eq(rep.eps, 1e-3);
  cr_assert_eq(rep.reg_status[0], CP_LCP_SOLVED);
  cr_assert_gt(rep.reg_pivots[0], 0);
  cr_assert_eq(info.iterations, rep.reg_pivots[0]);
  cr_assert_geq(rep.support[0], 2);
  cr_assert_gt(rep.face[0], 0);
  cr_assert_eq(rep.face[0], 2);
  /* no complementary basis solves this face (z2's column is zero, and with
   * w2 basic rows 1 and 3 both read z3 alone): the LP vertex's basis does */
  cr_assert_eq(info.polished, 1);
  cr_assert_leq(info.complementarity, 1e-12);
  cr_assert_leq(info.residual, 1e-12);
  /* the reported measures are those of the original problem's check */
  cp_lcp_info ci;
  cp_lcp_info_clear(&ci);
  cr_assert(cp_lcp_check(3, M3, q3, z, w, NULL, &ci));
  cr_assert_eq(ci.min_w, info.min_w);
}

Test(lemke_reg, face_crossover_on_a_named_face) {
  double z[3] = {0}, w[3] = {0};
  cp_lcp_info info;
  cp_lcp_info_clear(&info);
  const unsigned char P[3] = {1, 0, 1};
  const int c = cp_fip_face_crossover(3, M3, q3, P, 0.0, NULL, z, w, &info);
  cr_assert_eq(c, 2, "got %d", c); /* the LP vertex's own basis, solved */
  assert_on_the_face(z, w);
  cr_assert_eq(z[1], 0.0); /* off P: exactly zero */
  /* the face of P = {} is {z = 0}, where w = q < 0: empty */
  const unsigned char none[3] = {0, 0, 0};
  double z0[3] = {7, 7, 7}, w0[3] = {7, 7, 7};
  cr_assert_eq(cp_fip_face_crossover(3, M3, q3, none, 0.0, NULL, z0, w0, &info), 0);
  cr_assert_eq(z0[0], 7.0, "(z, w) unchanged when no point is found");
  cr_assert_eq(cp_fip_face_crossover(3, M3, q3, P, -1.0, NULL, z, w, &info), 0);
}

/* M = [[0, 1], [0, 0]], q = (-1, 1): w2 = 1 > 0 forces z2 = 0, then w1 = -1:
 * no solution. The regularised problem (m = max |M_ij| = 1, no positive
 * diagonal) has one, z = (1 / eps, 0), whose support {1} names an empty face
 * of the original (w1 = -1 there): the route must fail, never answer. */
Test(lemke_reg, no_solution_route_fails_and_says_why) {
  const double M[4] = {0, 0, 1, 0}, q[2] = {-1, 1};
  double z[2], w[2];
  cp_lcp_info info;
  cp_lemke_reg_report rep;
  cr_assert_eq(cp_lemke_regularised(NULL, 2, M, q, NULL, NULL, z, w, &info, &rep),
               CP_LCP_CHECK_FAILED);
  cr_assert(strstr(info.reason, "no face of the 3 regularised supports"), "%s", info.reason);
  cr_assert_eq(rep.tried, 3);
  cr_assert_eq(rep.eps, 0.0);
  for (int k = 0; k < 3; k++) {
    cr_assert_eq(rep.reg_status[k], CP_LCP_SOLVED, "eps %d", k);
    cr_assert_eq(rep.support[k], 1);
    cr_assert_eq(rep.face[k], 0);
  }
  cr_assert(z[0] == 0.0 && z[1] == 0.0 && w[0] == 0.0 && w[1] == 0.0);
  /* independent: the MIP certificate proves there is no solution */
  cp_certify_options co = cp_certify_defaults();
  cr_assert_eq(cp_certify(2, M, q, &co, z, w, NULL, NULL, NULL, &info), CP_LCP_INFEASIBLE);
}

Test(lemke_reg, invalid_options) {
  double z[3], w[3];
  cp_lcp_info info;
  cp_lemke_reg_options ro = cp_lemke_reg_defaults();
  cr_assert_eq(ro.neps, 3);
  cr_assert(ro.eps[0] == 1e-3 && ro.eps[1] == 1e-4 && ro.eps[2] == 1e-5);
  cr_assert_eq(ro.face_time_limit, 0.0);
  ro.eps[1] = 1e-2; /* not decreasing */
  cr_assert_eq(cp_lemke_regularised(NULL, 3, M3, q3, NULL, &ro, z, w, &info, NULL),
               CP_LCP_NUMERICAL);
  cr_assert(strstr(info.reason, "eps must decrease"), "%s", info.reason);
  ro = cp_lemke_reg_defaults();
  ro.neps = 0;
  cr_assert_eq(cp_lemke_regularised(NULL, 3, M3, q3, NULL, &ro, z, w, &info, NULL),
               CP_LCP_NUMERICAL);
  ro = cp_lemke_reg_defaults();
  ro.eps[0] = 1.0;
  cr_assert_eq(cp_lemke_regularised(NULL, 3, M3, q3, NULL, &ro, z, w, &info, NULL),
               CP_LCP_NUMERICAL);
  ro = cp_lemke_reg_defaults();
  ro.face_time_limit = -1.0;
  cr_assert_eq(cp_lemke_regularised(NULL, 3, M3, q3, NULL, &ro, z, w, &info, NULL),
               CP_LCP_NUMERICAL);
  /* FIP's face time limit is validated too */
  cp_fip_options fo = cp_fip_defaults();
  cr_assert_eq(fo.face_time_limit, 0.0);
  fo.face_time_limit = -1.0;
  cr_assert_eq(cp_fip_solve(3, M3, q3, &fo, z, w, &info), CP_LCP_NUMERICAL);
}

Test(lemke_reg, a_step_of_auto_and_of_lemke_when_asked) {
  double z[3], w[3];
  cp_lcp_info info;
  cp_solve_trail trail;
  cp_solve_options so = cp_solve_defaults();
  cr_assert_eq(so.regularise, 0, "off by default: the simulator's solves stay as they are");
  so.lemke.rescue = 1;
  so.regularise = 1;
  cr_assert_eq(cp_lcp_solve(NULL, 3, M3, q3, &so, z, w, &info, &trail), CP_LCP_SOLVED);
  assert_on_the_face(z, w);
  cr_assert_eq(info.solver, CP_SOLVER_LEMKE);
  cr_assert_eq(trail.route, 1);
  cr_assert_eq(trail.reg.eps, 1e-3);
  cr_assert_eq(trail.ran[CP_SOLVER_FIP], 0, "the route answered before FIP");
  cr_assert_gt(info.starts, 1); /* Lemke's own starts and the route's */

  so.solver = CP_SOLVER_LEMKE;
  cr_assert_eq(cp_lcp_solve(NULL, 3, M3, q3, &so, z, w, &info, &trail), CP_LCP_SOLVED);
  assert_on_the_face(z, w);
  cr_assert_eq(trail.route, 1);
  so.regularise = 0;
  cr_assert_neq(cp_lcp_solve(NULL, 3, M3, q3, &so, z, w, &info, &trail), CP_LCP_SOLVED);
  cr_assert_eq(trail.route, 0);
  cr_assert_eq(trail.reg.tried, 0);

  /* a problem Lemke solves directly never reaches the route */
  const double Mp[4] = {2, 1, 1, 2}, qp[2] = {-5, -6};
  so.regularise = 1;
  so.solver = CP_SOLVER_AUTO;
  cr_assert_eq(cp_lcp_solve(NULL, 2, Mp, qp, &so, z, w, &info, &trail), CP_LCP_SOLVED);
  cr_assert_eq(trail.route, 0);
  cr_assert_eq(trail.reg.tried, 0);
}

/* The early route (cp_lemke_reg_options.early_n): from that n on, the
 * route runs right after Lemke's first start fails. On M3 the route then
 * answers after 1 Lemke start instead of 4 + 12 (ordinary and rescue
 * starts), with the same kind of answer; the start counts are checked
 * against each part run alone. */
Test(lemke_reg, early_route_after_the_first_start) {
  double z[3], w[3];
  cp_lcp_info info, alone;
  cp_solve_trail trail;
  cp_solve_options so = cp_solve_defaults();
  cr_assert_eq(so.reg.early_n, 2000);
  so.solver = CP_SOLVER_LEMKE;
  so.lemke.rescue = 1;
  so.regularise = 1;
  /* the parts alone: Lemke's whole run, the route */
  cp_lemke_ws *ws = cp_lemke_ws_create(3);
  cp_lemke_solve(ws, 3, M3, q3, &so.lemke, NULL, z, w, &alone);
  cp_lemke_ws_destroy(ws);
  const int lemke_starts = alone.starts;
  cr_assert_eq(lemke_starts, 4 + 12);
  cp_lemke_regularised(NULL, 3, M3, q3, &so.lemke, &so.reg, z, w, &alone, NULL);
  cr_assert_eq(alone.status, CP_LCP_SOLVED);
  const int route_starts = alone.starts;

  so.reg.early_n = 0; /* never early: Lemke's whole run, then the route */
  cr_assert_eq(cp_lcp_solve(NULL, 3, M3, q3, &so, z, w, &info, &trail), CP_LCP_SOLVED);
  assert_on_the_face(z, w);
  cr_assert_eq(trail.route, 1);
  cr_assert_eq(info.starts, lemke_starts + route_starts);
  so.reg.early_n = 4; /* n = 3 is below it: the same */
  cr_assert_eq(cp_lcp_solve(NULL, 3, M3, q3, &so, z, w, &info, &trail), CP_LCP_SOLVED);
  cr_assert_eq(info.starts, lemke_starts + route_starts);
  so.reg.early_n = 3;
  cr_assert_eq(cp_lcp_solve(NULL, 3, M3, q3, &so, z, w, &info, &trail), CP_LCP_SOLVED);
  assert_on_the_face(z, w);
  cr_assert_eq(trail.route, 1);
  cr_assert_eq(info.solver, CP_SOLVER_LEMKE);
  cr_assert_eq(info.starts, 1 + route_starts);
}

/* When the early route fails too, Lemke's whole run follows: its status is
 * the run's without the early route, and its pivots count the first start
 * twice (it ran twice). */
Test(lemke_reg, early_route_that_fails_falls_back_to_the_whole_run) {
  const double M[4] = {0, 0, 1, 0}, q[2] = {-1, 1}; /* no solution (above) */
  double z[2], w[2];
  cp_lcp_info info, late;
  cp_solve_trail trail;
  cp_solve_options so = cp_solve_defaults();
  so.solver = CP_SOLVER_LEMKE;
  so.lemke.rescue = 1;
  so.regularise = 1;
  so.reg.early_n = 0;
  const cp_lcp_status st = cp_lcp_solve(NULL, 2, M, q, &so, z, w, &late, &trail);
  cr_assert_neq(st, CP_LCP_SOLVED);
  cr_assert_eq(trail.reg.tried, 3);
  so.reg.early_n = 2;
  cr_assert_eq(cp_lcp_solve(NULL, 2, M, q, &so, z, w, &info, &trail), st);
  cr_assert_eq(trail.route, 0);
  cr_assert_eq(trail.reg.tried, 3, "the route ran (early)");
  cr_assert_eq(info.starts, late.starts);
  cp_lemke_options first = so.lemke;
  first.restarts = 0;
  first.rescue = 0;
  cp_lemke_ws *ws = cp_lemke_ws_create(2);
  cp_lcp_info one;
  cp_lemke_solve(ws, 2, M, q, &first, NULL, z, w, &one);
  cp_lemke_ws_destroy(ws);
  cr_assert_eq(info.iterations, late.iterations + one.iterations);
}
