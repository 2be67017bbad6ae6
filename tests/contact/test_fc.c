/* Issue 24's corpus: Siconos' frictional-contact problems (tests/data/fc) as
 * velocity-level pyramid LCPs (experiments/fcconv.c), solved by Lemke. Every
 * answer is checked twice, independently of the solver: as an LCP
 * (cpt_assert_lcp_solution) and in contact space, forces and velocities
 * against the friction box's law (fc_law_violation).
 *
 * No per-test .timeout (Criterion's leaks under LeakSanitizer, see
 * test_lemke_degenerate.c): meson's timeout for the executable bounds it. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/lemke.h"
#include "experiments/fcconv.h"
#include "tests/support.h"

static fc_problem load(const char *name) {
  char rel[256];
  snprintf(rel, sizeof rel, "fc/%s", name);
  size_t len;
  char *text = cpt_read_file(cpt_data(rel), &len);
  cr_assert(text, "cannot read %s", rel);
  fc_problem p;
  char err[256];
  cr_assert_eq(fc_parse(text, len, &p, err, sizeof err), 0, "%s: %s", name, err);
  free(text);
  return p;
}

static int parse_text(const char *text, char *err, size_t errlen) {
  fc_problem p;
  int rc = fc_parse(text, strlen(text), &p, err, errlen);
  if (rc == 0) fc_free(&p);
  return rc;
}

Test(fc, parses_dense_storage) {
  /* FrictionContact3D_1c.dat: 3 1 0 3 3 3 3, W column-major, q, mu. */
  fc_problem p = load("FrictionContact3D_1c.dat");
  cr_assert_eq(p.d, 3);
  cr_assert_eq(p.nc, 1);
  const double W[9] = {15, -1, -2, -1, 14, 1, -2, 1, 16}, q[3] = {-1, 2, 3};
  for (int i = 0; i < 9; i++) cr_assert_eq(p.W[i], W[i]);
  for (int i = 0; i < 3; i++) cr_assert_eq(p.q[i], q[i]);
  cr_assert_eq(p.mu[0], 0.1);
  fc_free(&p);
}

Test(fc, sparse_block_storage_reads_the_same_problem_as_dense) {
  fc_problem a = load("FC3D_Example1.dat"), b = load("FC3D_Example1_SBM.dat");
  cr_assert_eq(a.d, b.d);
  cr_assert_eq(a.nc, b.nc);
  const int N = a.d * a.nc;
  int nonzero = 0;
  for (int i = 0; i < N * N; i++) {
    cr_assert_eq(a.W[i], b.W[i], "W entry %d", i);
    nonzero += a.W[i] != 0.0;
  }
  cr_assert_geq(nonzero, N);
  for (int i = 0; i < N; i++) cr_assert_eq(a.q[i], b.q[i]);
  for (int j = 0; j < a.nc; j++) cr_assert_eq(a.mu[j], b.mu[j]);
  fc_free(&a);
  fc_free(&b);
}

Test(fc, bad_input_names_the_line_and_what_was_expected) {
  char err[256];
  cr_assert_eq(parse_text("3\n1\n0\n3 3\n3 3\n1 0 0\n0 1 0", err, sizeof err), -1);
  cr_assert(strstr(err, "line 7") && strstr(err, "end of input") &&
            strstr(err, "an entry of W"), "%s", err);
  cr_assert_eq(parse_text("4 1 0 3 3", err, sizeof err), -1);
  cr_assert(strstr(err, "line 1") && strstr(err, "the dimension"), "%s", err);
  cr_assert_eq(parse_text("2 1 2 2 2", err, sizeof err), -1);
  cr_assert(strstr(err, "storage type 2"), "%s", err);
  cr_assert_eq(parse_text("3 1 0 3 3 3 3 1 0 0 0 1 0 0 0 1 -1 0 0\n-0.5", err,
                          sizeof err), -1);
  cr_assert(strstr(err, "line 2") && strstr(err, "negative"), "%s", err);
  cr_assert_eq(parse_text("3 1 0 3 3 3 3 1 0 0 0 x 0 0 0 1 -1 0 0 0.5", err,
                          sizeof err), -1);
  cr_assert(strstr(err, "'x' is not a number"), "%s", err);
}

/* Solves the converted LCP with Lemke (defaults); returns the status and
 * leaves the forces in r, the velocities in u (size d nc). */
static cp_lcp_status solve(const fc_problem *p, double *r, double *u,
                           cp_lcp_info *info, cp_lemke_stats *st) {
  cp_lcp L;
  cr_assert_eq(fc_to_lcp(p, &L), 0);
  const int n = L.n;
  cr_assert_eq(n, fc_lcp_size(p));
  cr_assert_eq(n, (p->d == 3 ? 6 : 4) * p->nc);
  double *z = malloc(sizeof(double) * (size_t)n), *w = malloc(sizeof(double) * (size_t)n);
  cp_lemke_ws *ws = cp_lemke_ws_create(n);
  cp_lemke_options o = cp_lemke_defaults();
  o.rescue = 1; /* as complan lcp solve */
  cp_lcp_status s = cp_lemke_solve(ws, n, L.M, L.q, &o, NULL, z, w, info);
  if (st) cp_lemke_get_stats(ws, st);
  if (s == CP_LCP_SOLVED) {
    double zmax = 0.0, mmax = 0.0, qmax = 0.0;
    for (int i = 0; i < n; i++) {
      zmax = fmax(zmax, fabs(z[i]));
      qmax = fmax(qmax, fabs(L.q[i]));
    }
    for (size_t i = 0; i < (size_t)n * (size_t)n; i++) mmax = fmax(mmax, fabs(L.M[i]));
    cpt_assert_lcp_solution(n, L.M, L.q, z, 1e-8 * (qmax + mmax * zmax));
    fc_forces(p, z, r, u);
  }
  cp_lemke_ws_destroy(ws);
  free(z);
  free(w);
  cp_lcp_free(&L);
  return s;
}

Test(fc, one_sliding_contact_analytic) {
  /* W = I, q = (-1, 0.5, 0), mu = 0.1: the contact closes (r_n = 1,
   * u_n = 0), slides along t against the friction bound (r_t = -0.1,
   * u_t = 0.4) and sticks along o (r_o = 0, u_o = 0). In 2D the same
   * without o. */
  for (int d = 2; d <= 3; d++) {
    const char *text = d == 3 ? "3 1 0 3 3 3 3 1 0 0 0 1 0 0 0 1 -1 0.5 0 0.1"
                              : "2 1 0 2 2 2 2 1 0 0 1 -1 0.5 0.1";
    fc_problem p;
    char err[256];
    cr_assert_eq(fc_parse(text, strlen(text), &p, err, sizeof err), 0, "%s", err);
    double r[3], u[3];
    cp_lcp_info info;
    cr_assert_eq(solve(&p, r, u, &info, NULL), CP_LCP_SOLVED, "%s", info.reason);
    cr_assert_float_eq(r[0], 1.0, 1e-12);
    cr_assert_float_eq(r[1], -0.1, 1e-12);
    cr_assert_float_eq(u[0], 0.0, 1e-12);
    cr_assert_float_eq(u[1], 0.4, 1e-12);
    if (d == 3) {
      cr_assert_float_eq(r[2], 0.0, 1e-12);
      cr_assert_float_eq(u[2], 0.0, 1e-12);
    }
    cr_assert_lt(fc_law_violation(&p, r, u, NULL), 1e-14);
    /* The law check sees a wrong answer: friction with the slip. */
    r[1] = 0.1;
    int where;
    cr_assert_gt(fc_law_violation(&p, r, u, &where), 0.05);
    cr_assert_eq(where, 0);
    fc_free(&p);
  }
}

/* The committed corpus: every problem solved by Lemke, with forces and
 * velocities that obey the law to rounding. `first` lists the problems the
 * first start solves (the rest need the rescue pass after the ordinary
 * start failed: docs/solvers.md, "Frictional-contact problems"). */
static const struct {
  const char *name;
  int first;
} corpus[] = {
    {"FrictionContact3D_1c.dat", 1},
    {"Rover4396.dat", 1},
    {"Rover1039.dat", 1},
    {"FC2D_SliderCrankLagrangian00000.dat", 1},
    {"FC3D_Example1.dat", 1},
    {"FC3D_Example1_SBM.dat", 1},
    {"Confeti-ex13-4contact-Fc3D-SBM.dat", 1},
    {"FrictionContactProblem00031.dat", 1},
    {"FrictionContactProblem00071.dat", 1},
    {"FrictionContactProblem00374.dat", 1},
    {"NESpheres_10_1.dat", 1},
    {"OneObject-i1028-138.hdf5.dat", 1},
    {"FrictionContactProblem00394.dat", 0},
    {"Confeti-ex03-Fc3D-SBM.dat", 0},
    {"FrictionContactProblem00237.dat", 0},
    {"FrictionContactProblem00727.dat", 0},
    {"Capsules-i101-404.dat", 0},
    {"BoxesStack1-i100000-32.hdf5.dat", 0},
};

Test(fc, committed_corpus_solved_by_lemke_and_obeys_the_law) {
  for (size_t k = 0; k < sizeof corpus / sizeof corpus[0]; k++) {
    fc_problem p = load(corpus[k].name);
    const int N = p.d * p.nc;
    double *r = malloc(sizeof(double) * (size_t)N), *u = malloc(sizeof(double) * (size_t)N);
    cp_lcp_info info;
    cp_lemke_stats st;
    cp_lcp_status s = solve(&p, r, u, &info, &st);
    cr_assert_eq(s, CP_LCP_SOLVED, "%s: %s", corpus[k].name, info.reason);
    cr_assert_eq(info.starts == 1, corpus[k].first, "%s: %d starts", corpus[k].name,
                 info.starts);
    cr_assert_eq(st.rescue_starts, !corpus[k].first, "%s", corpus[k].name);
    int where;
    const double v = fc_law_violation(&p, r, u, &where);
    cr_assert_lt(v, 1e-9, "%s: law violated by %g at contact %d", corpus[k].name, v, where);
    free(r);
    free(u);
    fc_free(&p);
  }
}
