/* The auto strategy and the agreement of all solvers on the Siconos problems.
 *
 * No per-test .timeout (Criterion's leaks under LeakSanitizer, see
 * test_lemke_degenerate.c): meson's timeout for the executable bounds it. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/lcpio.h"
#include "contact/solve.h"
#include "tests/support.h"


/* Every dense Siconos problem: auto and certify agree on whether a solution
 * exists, every solution passes an independent check, and no solver ever
 * reports a solution that is not one. */
Test(solve, siconos_auto_agrees_with_certify) {
  static const char *names[] = {
      "lcp_CPS_1", "lcp_CPS_2", "lcp_CPS_3", "lcp_CPS_4", "lcp_CPS_4bis",
      "lcp_CPS_5", "lcp_Pang_isolated_sol", "lcp_Pang_isolated_sol_perturbed",
      "lcp_deudeu", "lcp_enum_fails", "lcp_exp_murty", "lcp_exp_murty2",
      "lcp_inf_sol_perturbed", "lcp_mmc", "lcp_ortiz", "lcp_tobenna",
      "lcp_trivial"};
  int solvable = 0;
  for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
    char rel[128];
    snprintf(rel, sizeof rel, "siconos/%s.dat", names[k]);
    cp_lcp lcp;
    cpt_load_lcp(rel, &lcp);
    const int n = lcp.n;
    double *z = calloc(2 * (size_t)n, sizeof(double)), *w = z + n;
    cp_solve_options opt = cp_solve_defaults();
    cp_lcp_info ai, ci;
    cp_lcp_solve(NULL, n, lcp.M, lcp.q, &opt, z, w, &ai, NULL);
    if (ai.status == CP_LCP_SOLVED) cpt_assert_lcp_solution(n, lcp.M, lcp.q, z, 1e-5 * (1 + n));
    opt.solver = CP_SOLVER_CERTIFY;
    cp_lcp_solve(NULL, n, lcp.M, lcp.q, &opt, z, w, &ci, NULL);
    cr_assert(ci.status == CP_LCP_SOLVED || ci.status == CP_LCP_INFEASIBLE,
              "%s: certify undecided: %s", rel, ci.reason);
    if (ci.status == CP_LCP_SOLVED) cpt_assert_lcp_solution(n, lcp.M, lcp.q, z, 1e-5 * (1 + n));
    cr_assert_eq(ai.status, ci.status, "%s: auto says '%s', certify says '%s'", rel,
                 cp_lcp_status_name(ai.status), cp_lcp_status_name(ci.status));
    solvable += ci.status == CP_LCP_SOLVED;
    /* The single solvers may fail, but never with a wrong "solved". */
    for (int s = CP_SOLVER_LEMKE; s <= CP_SOLVER_FIP; s++) {
      opt.solver = (cp_lcp_solver)s;
      cp_lcp_info si;
      cp_lcp_solve(NULL, n, lcp.M, lcp.q, &opt, z, w, &si, NULL);
      if (si.status == CP_LCP_SOLVED)
        cpt_assert_lcp_solution(n, lcp.M, lcp.q, z, 1e-5 * (1 + n));
      else
        cr_assert_neq(si.status, CP_LCP_INFEASIBLE, "only certify proves infeasibility");
    }
    free(z);
    cp_lcp_free(&lcp);
  }
  cr_assert_gt(solvable, 10, "only %d of 17 solvable: suspicious", solvable);
}

/* Murty's upper-triangular P-matrix with q = -e: the unique solution is
 * z = (0, ..., 0, 1) (back substitution: z_n = 1 makes w_i = 2 - 1 > 0). */
Test(solve, murty_unique_solution) {
  cp_lcp lcp;
  cpt_load_lcp("siconos/lcp_exp_murty.dat", &lcp);
  double z[6], w[6];
  cp_lcp_info info;
  for (int s = CP_SOLVER_LEMKE; s <= CP_SOLVER_AUTO; s++) {
    cp_solve_options opt = cp_solve_defaults();
    opt.solver = (cp_lcp_solver)s;
    cp_lcp_solve(NULL, 6, lcp.M, lcp.q, &opt, z, w, &info, NULL);
    cr_assert_eq(info.status, CP_LCP_SOLVED, "%s: %s", cp_lcp_solver_name(opt.solver), info.reason);
    for (int i = 0; i < 6; i++)
      cr_assert_float_eq(z[i], i == 5 ? 1.0 : 0.0, 1e-6, "%s z[%d] = %g",
                         cp_lcp_solver_name(opt.solver), i, z[i]);
  }
  cp_lcp_free(&lcp);
}

/* w1 + w2 = 0 for every z: no strictly feasible point. With Lemke forced to
 * fail, FIP reports NFP, and auto still answers, through certify. */
Test(solve, auto_falls_back_past_nfp) {
  double M[4] = {1, -1, -1, 1}, q[2] = {-1, 1}, z[2], w[2];
  cp_solve_options opt = cp_solve_defaults();
  opt.lemke.max_pivots = 1;
  opt.lemke.restarts = 0;
  cp_lcp_info info;
  cp_solve_trail trail;
  cp_lcp_solve(NULL, 2, M, q, &opt, z, w, &info, &trail);
  cr_assert_eq(info.status, CP_LCP_SOLVED, "%s", info.reason);
  cr_assert(trail.ran[CP_SOLVER_LEMKE] && trail.ran[CP_SOLVER_FIP] && trail.ran[CP_SOLVER_CERTIFY]);
  cr_assert_eq(trail.status[CP_SOLVER_FIP], CP_LCP_NO_STRICT_FEASIBLE);
  cr_assert_eq(info.solver, CP_SOLVER_CERTIFY);
  cpt_assert_lcp_solution(2, M, q, z, 1e-9);
  cr_assert_float_eq(z[0] - z[1], 1.0, 1e-9); /* w1 = 0 */

  /* With its defaults Lemke answers first. */
  opt = cp_solve_defaults();
  cp_lcp_solve(NULL, 2, M, q, &opt, z, w, &info, &trail);
  cr_assert_eq(info.status, CP_LCP_SOLVED);
  cr_assert_eq(info.solver, CP_SOLVER_LEMKE);
  cr_assert_not(trail.ran[CP_SOLVER_FIP]);
}

/* w = -z - 1 < 0 for every z >= 0: no solution. Lemke ends on a secondary
 * ray, FIP finds no strictly feasible point, certify proves infeasibility. */
Test(solve, no_solution_is_proven) {
  double M[1] = {-1}, q[1] = {-1}, z[1], w[1];
  cp_solve_options opt = cp_solve_defaults();
  cp_lcp_info info;
  cp_solve_trail trail;
  cp_lcp_solve(NULL, 1, M, q, &opt, z, w, &info, &trail);
  cr_assert_eq(info.status, CP_LCP_INFEASIBLE, "%s", cp_lcp_status_name(info.status));
  cr_assert_eq(info.solver, CP_SOLVER_CERTIFY);
  cr_assert_eq(trail.status[CP_SOLVER_LEMKE], CP_LCP_SECONDARY_RAY);
  cr_assert_eq(trail.status[CP_SOLVER_FIP], CP_LCP_NO_STRICT_FEASIBLE);
}

/* With Lemke's rescue pass on (as `complan lcp solve` sets it), an LCP
 * without solution costs step 1's starts (restarts + 1, then the rescue
 * pass's max(restarts + 1, 12)) and step 3's extra_restarts + 1 ordinary
 * ones: step 3 does not repeat the rescue pass (it used to: 418 starts with
 * the defaults). The workspace keeps the count of its last Lemke run. */
Test(solve, auto_bounds_lemke_starts_without_solution) {
  double M[1] = {-1}, q[1] = {-1}, z[1], w[1];
  cp_solve_options opt = cp_solve_defaults();
  opt.lemke.rescue = 1;
  cp_lemke_ws *ws = cp_lemke_ws_create(1);
  cr_assert_not_null(ws);
  cp_lcp_info info;
  cp_solve_trail trail;
  int per[512];
  /* Step 1 alone: 4 ordinary starts and 12 rescue starts. */
  cp_lcp_info li;
  cr_assert_eq(cp_lemke_solve(ws, 1, M, q, &opt.lemke, NULL, z, w, &li),
               CP_LCP_SECONDARY_RAY);
  cr_assert_eq(cp_lemke_pivots_per_start(ws, per, 512), 16);
  cp_lcp_solve(ws, 1, M, q, &opt, z, w, &info, &trail);
  cr_assert_eq(info.status, CP_LCP_INFEASIBLE, "%s", cp_lcp_status_name(info.status));
  cr_assert(trail.ran[CP_SOLVER_LEMKE] && trail.ran[CP_SOLVER_FIP]);
  /* The last Lemke run is step 3's: extra_restarts + 1 starts, no rescue. */
  cr_assert_eq(cp_lemke_pivots_per_start(ws, per, 512), opt.extra_restarts + 1);
  cp_lemke_stats st;
  cp_lemke_get_stats(ws, &st);
  cr_assert_eq(st.rescue_starts, 0);
  cp_lemke_ws_destroy(ws);
}
