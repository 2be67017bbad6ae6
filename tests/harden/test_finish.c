/* Issue 12, second part: FIP's exact finish (crossover, contact/fip.c) and
 * the rule that GLPK errors never end in a proof (certify) or a crash
 * (FIP), exercised through contact/glpkout.h's fault hook. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/certify.h"
#include "contact/fip.h"
#include "contact/glpkout.h"
#include "contact/lcpio.h"
#include "tests/support.h"

static cp_lcp load(const char *rel) {
  size_t len;
  char *text = cpt_read_file(cpt_data(rel), &len);
  cr_assert_not_null(text, "%s", rel);
  cp_lcp lcp;
  cp_error err;
  memset(&err, 0, sizeof err);
  cr_assert_eq(cp_lcp_parse(text, len, &lcp, &err), 0, "%s: %s", rel, err.msg);
  free(text);
  return lcp;
}

/* Largest complementarity defect of z, in long double, each row against its
 * own scale: min(z_i / |z|_inf, w_i / s_i) with s_i = |M_i||z| + |q_i|
 * (0 for an exact complementary pair, about the solver's gap for an
 * interior answer); also asserts z >= 0 and w >= -1e-12 s_i. */
static double defect(const cp_lcp *l, const double *z) {
  const int n = l->n;
  long double zmax = 0;
  for (int i = 0; i < n; i++) {
    cr_assert(z[i] >= 0.0, "z[%d] = %g", i, z[i]);
    if (z[i] > zmax) zmax = z[i];
  }
  double worst = 0.0;
  for (int i = 0; i < n; i++) {
    long double w = l->q[i], s = fabsl((long double)l->q[i]);
    for (int j = 0; j < n; j++) {
      w += (long double)l->M[i + (size_t)j * n] * z[j];
      s += fabsl((long double)l->M[i + (size_t)j * n] * z[j]);
    }
    cr_assert(w >= -1e-12L * s, "w[%d] = %Lg (scale %Lg)", i, w, s);
    const long double a = zmax > 0 ? z[i] / zmax : 0, b = s > 0 ? w / s : 0;
    const double d = (double)(a < b ? a : b);
    if (d > worst) worst = d;
  }
  return worst;
}

/* A paper-study data set (p13, mu = 0.5, n = 22) whose contact forces are
 * indeterminate: FIP converges (w^T z <= 1e-6) to an interior point of the
 * solution set, which the row-by-row check rejects. The crossover must turn
 * it into an exact solution. */
Test(fip_finish, crossover_recovers_indeterminate_forces) {
  cp_lcp l = load("lcp/fip_indeterminate.json");
  double *z = malloc(sizeof(double) * l.n), *w = malloc(sizeof(double) * l.n);
  cp_fip_options o = cp_fip_defaults();
  cp_lcp_info info;
  o.crossover = 0;
  cr_assert_eq(cp_fip_solve(l.n, l.M, l.q, &o, z, w, &info), CP_LCP_CHECK_FAILED,
               "%s", info.reason);
  const int iters = info.iterations;
  cr_assert_gt(defect(&l, z), 1e-9, "the interior answer is not complementary");
  o.crossover = 1;
  cr_assert_eq(cp_fip_solve(l.n, l.M, l.q, &o, z, w, &info), CP_LCP_SOLVED, "%s",
               info.reason);
  cr_assert_eq(info.iterations, iters); /* same Newton steps, exact finish */
  cr_assert_lt(defect(&l, z), 1e-12);
  free(z);
  free(w);
  cp_lcp_free(&l);
}

/* Fault hook: fails the `target`-th guarded GLPK call whose name starts
 * with `prefix`; counts the calls. */
typedef struct fault {
  const char *prefix;
  int target, calls;
} fault;

static int fault_fn(void *ctx, const char *where) {
  fault *f = ctx;
  if (strncmp(where, f->prefix, strlen(f->prefix))) return 0;
  return ++f->calls == f->target;
}

Test(fip_finish, glpk_error_in_crossover_keeps_interior_status) {
  cp_lcp l = load("lcp/fip_indeterminate.json");
  double *z = malloc(sizeof(double) * l.n), *w = malloc(sizeof(double) * l.n);
  fault f = {"fip crossover", 1, 0};
  cp_glpk_set_fault(fault_fn, &f);
  cp_lcp_info info;
  cp_lcp_status st = cp_fip_solve(l.n, l.M, l.q, NULL, z, w, &info);
  cp_glpk_set_fault(NULL, NULL);
  cr_assert_eq(f.calls, 1);
  cr_assert_eq(st, CP_LCP_CHECK_FAILED, "%s", info.reason);
  /* and GLPK works again afterwards (its environment was freed cleanly) */
  cr_assert_eq(cp_fip_solve(l.n, l.M, l.q, NULL, z, w, &info), CP_LCP_SOLVED);
  free(z);
  free(w);
  cp_lcp_free(&l);
}

Test(fip_finish, glpk_error_in_phase1_is_numerical) {
  const double M[4] = {2, 1, 1, 2}, q[2] = {-1, -1};
  double z[2], w[2];
  fault f = {"fip phase I", 1, 0};
  cp_glpk_set_fault(fault_fn, &f);
  cp_lcp_info info;
  cp_lcp_status st = cp_fip_solve(2, M, q, NULL, z, w, &info);
  cp_glpk_set_fault(NULL, NULL);
  cr_assert_eq(st, CP_LCP_NUMERICAL);
  cr_assert(strstr(info.reason, "GLPK"), "%s", info.reason);
  cr_assert_eq(cp_fip_solve(2, M, q, NULL, z, w, &info), CP_LCP_SOLVED);
  cr_assert_float_eq(z[0], 1.0 / 3, 1e-12);
  cr_assert_float_eq(z[1], 1.0 / 3, 1e-12);
}

/* certify (contact/certify.c): "never no_solution after a GLPK error". Two
 * LCPs without solution: w = -1 whatever z (n = 1), and a 3 x 3 one where
 * every complementary basis fails (checked by enumeration below). Each
 * guarded MIP solve of a normal run is failed in turn: the answer must never
 * be INFEASIBLE, and nothing else may break. */
static void certify_sweep(int n, const double *M, const double *q) {
  double z[3], w[3];
  cp_certify_result res;
  cp_lcp_info info;
  fault f = {"certify", 0, 0};
  cp_glpk_set_fault(fault_fn, &f); /* target 0: count only */
  cr_assert_eq(cp_certify(n, M, q, NULL, z, w, NULL, NULL, &res, &info),
               CP_LCP_INFEASIBLE, "%s", info.reason);
  const int calls = f.calls;
  cr_assert_geq(calls, 2, "a proof takes two agreeing solves");
  for (int k = 1; k <= calls; k++) {
    f.target = k;
    f.calls = 0;
    cp_lcp_status st = cp_certify(n, M, q, NULL, z, w, NULL, NULL, &res, &info);
    cr_assert_neq(st, CP_LCP_INFEASIBLE, "GLPK failed at solve %d of %d, yet "
                  "'no solution' was reported", k, calls);
    cr_assert_neq(st, CP_LCP_SOLVED, "an LCP without solution 'solved'");
    cr_assert(info.reason[0], "no reason given");
  }
  cp_glpk_set_fault(NULL, NULL);
  cr_assert_eq(cp_certify(n, M, q, NULL, z, w, NULL, NULL, &res, &info),
               CP_LCP_INFEASIBLE);
}

Test(certify_glpk_error, never_no_solution_n1) {
  const double M[1] = {0}, q[1] = {-1};
  certify_sweep(1, M, q);
}

Test(certify_glpk_error, never_no_solution_n3) {
  /* w = M z + q, column-major. Row 0: w_0 = -z_1 - 1 < 0 always. */
  const double M[9] = {0, 1, 0, -1, 2, 1, 0, 1, 3}, q[3] = {-1, -1, 2};
  for (int b = 0; b < 8; b++) { /* no complementary basis solves it */
    unsigned char basis[3] = {b & 1, (b >> 1) & 1, (b >> 2) & 1};
    double z[3], w[3];
    if (cp_lcp_solve_basis(3, M, q, basis, z, w) != 0) continue;
    int ok = 1;
    for (int i = 0; i < 3; i++) ok &= z[i] >= -1e-12 && w[i] >= -1e-12;
    cr_assert(!ok, "basis %d solves it", b);
  }
  certify_sweep(3, M, q);
}
