/* Issue 24's two largest frictional-contact problems (tests/data/fc, the
 * Siconos sources as the rest of the corpus): RockPile_tob1 (463 contacts,
 * n = 2778) and KaplasTower-i1061-4 (570 contacts, n = 3420), each solved
 * by the library route that answers it, started directly (the ordinary
 * starts that fail before it are skipped through the options; the whole
 * `lcp solve --solver lemke` run is measured by experiments/fc2lcp and
 * recorded in experiments/results/fc_lemke.md). Every answer is checked
 * as test_fc.c checks the corpus: by cp_lcp_check, independently as an LCP
 * (cpt_assert_lcp_solution), and in contact space against the friction
 * box's law (fc_law_violation).
 *
 * RockPile's solve takes about 80 s of CPU in a release build (39 474
 * pivots at n = 2778), ten times that under the sanitizers: that test
 * skips itself under AddressSanitizer (CI runs the suite in both builds).
 * No per-test .timeout (see test_fc.c); meson's timeout bounds the
 * executable. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/lemke.h"
#include "experiments/fcconv.h"
#include "tests/support.h"

#if defined(__SANITIZE_ADDRESS__)
#define CPT_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CPT_SANITIZED 1
#endif
#endif
#ifndef CPT_SANITIZED
#define CPT_SANITIZED 0
#endif

typedef struct large {
  fc_problem p;
  cp_lcp L;
  double *z, *w, *r, *u;
} large;

static void load(const char *name, large *a) {
  char rel[256];
  snprintf(rel, sizeof rel, "fc/%s", name);
  size_t len;
  char *text = cpt_read_file(cpt_data(rel), &len);
  cr_assert(text, "cannot read %s", rel);
  char err[256];
  cr_assert_eq(fc_parse(text, len, &a->p, err, sizeof err), 0, "%s: %s", name, err);
  free(text);
  cr_assert_eq(fc_to_lcp(&a->p, &a->L), 0);
  const size_t n = (size_t)a->L.n, N = (size_t)a->p.d * (size_t)a->p.nc;
  a->z = malloc(sizeof(double) * n);
  a->w = malloc(sizeof(double) * n);
  a->r = malloc(sizeof(double) * N);
  a->u = malloc(sizeof(double) * N);
  cr_assert(a->z && a->w && a->r && a->u);
}

static void release(large *a) {
  free(a->z);
  free(a->w);
  free(a->r);
  free(a->u);
  cp_lcp_free(&a->L);
  fc_free(&a->p);
}

/* The answer in a->z passes the solution check, the independent LCP check
 * and the friction law in contact space. */
static void assert_answer(large *a, const char *name) {
  const int n = a->L.n;
  const double *M = a->L.M, *q = a->L.q;
  cp_check_options co = cp_check_defaults();
  cp_lcp_info ci;
  cr_assert(cp_lcp_check(n, M, q, a->z, NULL, &co, &ci), "%s: %s", name, ci.reason);
  double zmax = 0.0, mmax = 0.0, qmax = 0.0;
  for (int i = 0; i < n; i++) {
    zmax = fmax(zmax, fabs(a->z[i]));
    qmax = fmax(qmax, fabs(q[i]));
  }
  for (size_t i = 0; i < (size_t)n * (size_t)n; i++) mmax = fmax(mmax, fabs(M[i]));
  cr_assert_gt(zmax, 0.0, "%s: z = 0 does not solve it", name); /* min q < 0 */
  cpt_assert_lcp_solution(n, M, q, a->z, 1e-8 * (qmax + mmax * zmax));
  fc_forces(&a->p, a->z, a->r, a->u);
  int where;
  const double v = fc_law_violation(&a->p, a->r, a->u, &where);
  cr_assert_lt(v, 1e-9, "%s: law violated by %g at contact %d", name, v, where);
}

/* 0x9E3779B97F4A7C15: the step of the library's covering-vector generator
 * (splitmix64, contact/lemke.c): one random cover takes n steps, so the
 * seed 1 + n step gives as its first random cover the second one of seed 1. */
#define SPLITMIX_STEP 0x9E3779B97F4A7C15ull

Test(fc_large, rockpile_solved_by_the_classic_pass_skipped_under_sanitizers) {
  if (CPT_SANITIZED) cr_skip_test("about 80 s CPU in release; 10x under ASan");
  large a;
  load("RockPile_tob1.dat", &a);
  const int n = a.L.n;
  cr_assert_eq(n, 2778);
  /* The classic pass alone, from its third start: `lcp solve` runs the
   * cover of ones, then random covers of seed 1; the second random cover
   * is the start that solves it (423, 5500, 39 051 pivots for the three
   * starts; the first one is kept here, 423 pivots). */
  cp_lemke_options o = cp_lemke_defaults();
  o.classic = 2;
  o.restarts = 1;
  o.seed = 1 + (uint64_t)n * SPLITMIX_STEP;
  cp_lemke_ws *ws = cp_lemke_ws_create(n);
  cp_lcp_info info;
  const cp_lcp_status s = cp_lemke_solve(ws, n, a.L.M, a.L.q, &o, NULL, a.z, a.w, &info);
  cr_assert_eq(s, CP_LCP_SOLVED, "RockPile_tob1: %s", info.reason);
  cr_assert_eq(info.starts, 2);
  cp_lemke_stats st;
  cp_lemke_get_stats(ws, &st);
  cr_assert_eq(st.classic_starts, 1);
  cr_assert_eq(st.rescue_starts, 0);
  cr_assert(info.polished);
  assert_answer(&a, "RockPile_tob1");
  cp_lemke_ws_destroy(ws);
  release(&a);
}

Test(fc_large, kaplas_tower_solved_by_the_regularised_route) {
  /* KaplasTower's ordinary starts fail (the first ends after 506 pivots
   * with an answer that fails the check); `lcp solve` runs the
   * regularised route after it (n >= early_n), and its first eps answers:
   * LCP(M + 1e-3 m I, q), then the face crossover of that support on the
   * original problem (docs/solvers.md, "The regularised route"). */
  large a;
  load("KaplasTower-i1061-4.hdf5.dat", &a);
  const int n = a.L.n;
  cr_assert_eq(n, 3420);
  cp_lemke_ws *ws = cp_lemke_ws_create(n);
  cp_lcp_info info;
  cp_lemke_reg_report rep;
  const cp_lcp_status s = cp_lemke_regularised(ws, n, a.L.M, a.L.q, NULL, NULL, a.z,
                                               a.w, &info, &rep);
  cr_assert_eq(s, CP_LCP_SOLVED, "KaplasTower: %s", info.reason);
  cr_assert_eq(rep.tried, 1);
  cr_assert_eq(rep.eps, 1e-3);
  cr_assert_eq(rep.reg_status[0], CP_LCP_SOLVED);
  cr_assert(info.polished);
  assert_answer(&a, "KaplasTower-i1061-4");
  cp_lemke_ws_destroy(ws);
  release(&a);
}
