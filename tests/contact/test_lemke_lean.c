/* Lemke's lean path for n = 2..4 (contact/lemke_small.c, cp_lk_lean_solve)
 * against the full path of cp_lemke_solve, bit for bit.
 *
 * The full path is forced by a trace observer (the lean path is not taken
 * while one is set; the observer changes no decision). Every small LCP in
 * the repository (the Siconos test LCPs, tests/data/lcp, the paper study's
 * sets) and random n = 2..4 problems with small integer data (exact ties,
 * zero diagonals, singular blocks, rays) are solved both ways under several
 * options; status, z, w, every field of the info, the basis, the pivots per
 * start and the statistics must be identical. The lean entry is also called
 * directly, to count what it takes and what it hands over. No per-test
 * .timeout (see test_lemke_degenerate.c). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/lcpio.h"
#include "contact/lemke.h"
#include "contact/lemke_impl.h"
#include "models/error.h"
#include "tests/support.h"

static void noop_trace(void *ctx, const cp_lemke_step *st) {
  (void)ctx;
  (void)st;
}

typedef struct outcome {
  cp_lcp_status st;
  cp_lcp_info info;
  double z[8], w[8];
  unsigned char basis[8];
  int has_basis, pps[8], npps;
  cp_lemke_stats stats;
} outcome;

static int same_bits(const double *a, const double *b, int n) {
  return memcmp(a, b, sizeof(double) * (size_t)n) == 0;
}

/* The fields of two outcomes, bit for bit (where: for the message). */
static void assert_same(const outcome *a, const outcome *b, int n, const char *where) {
  cr_assert_eq(a->st, b->st, "%s: status %d vs %d", where, a->st, b->st);
  cr_assert(same_bits(a->z, b->z, n), "%s: z differs", where);
  cr_assert(same_bits(a->w, b->w, n), "%s: w differs", where);
  const cp_lcp_info *x = &a->info, *y = &b->info;
  cr_assert(x->status == y->status && x->solver == y->solver &&
                x->iterations == y->iterations && x->starts == y->starts &&
                x->first_start_iterations == y->first_start_iterations &&
                x->polished == y->polished,
            "%s: info counts differ (%d/%d pivots, %d/%d starts)", where, x->iterations,
            y->iterations, x->starts, y->starts);
  const double mx[4] = {x->complementarity, x->residual, x->min_z, x->min_w};
  const double my[4] = {y->complementarity, y->residual, y->min_z, y->min_w};
  cr_assert(same_bits(mx, my, 4), "%s: the check's measures differ", where);
  cr_assert_str_eq(x->reason, y->reason, "%s: reason", where);
  cr_assert_eq(a->has_basis, b->has_basis, "%s: basis validity", where);
  if (a->has_basis) cr_assert(memcmp(a->basis, b->basis, (size_t)n) == 0, "%s: basis", where);
  cr_assert_eq(a->npps, b->npps, "%s: starts", where);
  for (int s = 0; s < a->npps && s < 8; s++)
    cr_assert_eq(a->pps[s], b->pps[s], "%s: pivots of start %d", where, s);
  cr_assert(memcmp(&a->stats, &b->stats, sizeof a->stats) == 0, "%s: statistics differ", where);
}

static void finish_outcome(cp_lemke_ws *ws, outcome *o) {
  o->has_basis = cp_lemke_basis(ws, o->basis) == 0;
  o->npps = cp_lemke_pivots_per_start(ws, o->pps, 8);
  cp_lemke_get_stats(ws, &o->stats);
}

static void solve(cp_lemke_ws *ws, int n, const double *M, const double *q,
                  const cp_lemke_options *opt, int full, outcome *o) {
  memset(o, 0, sizeof *o);
  /* The lean path does not clear the info (it writes every field of a
   * solution): garbage left there by the caller must not show. */
  memset(&o->info, 0xA5, sizeof o->info);
  cp_lemke_set_trace(ws, full ? noop_trace : NULL, NULL);
  o->st = cp_lemke_solve(ws, n, M, q, opt, NULL, o->z, o->w, &o->info);
  cp_lemke_set_trace(ws, NULL, NULL);
  finish_outcome(ws, o);
}

typedef struct tally {
  int compared, lean, handed;
  int expanded; /* lean answers whose start left the condensed tableau */
  int rules;    /* lean answers with a z_i < 0: the judge's full rules ran */
} tally;

/* One instance under the option variants: the default path (lean where
 * eligible) against the full path; the lean entry itself against the full
 * path where it answers. */
static void compare_instance(cp_lemke_ws *ws, int n, const double *M, const double *q,
                             const char *name, tally *t) {
  for (int v = 0; v < 5; v++) {
    cp_lemke_options o = cp_lemke_defaults();
    if (v == 1) o.rescue = 1;
    if (v == 2) o.check.rel_tol = 1e-14; /* failed checks: handed over */
    if (v == 3) o.max_pivots = 2;        /* the cap: handed over */
    if (v == 4) o.small_n = 8;           /* explicit small path: still lean */
    char where[256];
    snprintf(where, sizeof where, "%s (n = %d), options %d", name, n, v);
    outcome a, b, c;
    solve(ws, n, M, q, v ? &o : NULL, 0, &a);
    solve(ws, n, M, q, v ? &o : NULL, 1, &b);
    assert_same(&a, &b, n, where);
    t->compared++;
    if (n < 2 || n > CP_LK_LEAN_N) continue;
    memset(&c, 0, sizeof c);
    memset(&c.info, 0x5A, sizeof c.info); /* see solve() */
    const long ex0 = ws->cond_expands;
    if (cp_lk_lean_solve(ws, n, M, q, &o, c.z, c.w, &c.info)) {
      c.st = CP_LCP_SOLVED;
      finish_outcome(ws, &c);
      assert_same(&c, &b, n, where);
      t->lean++;
      t->expanded += ws->cond_expands > ex0;
      t->rules += c.info.min_z < 0.0;
    } else {
      cr_assert(b.st != CP_LCP_SOLVED || b.info.starts > 1 || b.stats.z0_backups > 0 ||
                    b.stats.lu_polish || b.info.iterations == 0,
                "%s: the lean path handed over a first-start solution", where);
      t->handed++;
    }
  }
}

static void compare_file(cp_lemke_ws *ws, const char *path, tally *t) {
  FILE *f = fopen(path, "r");
  if (!f) return;
  fclose(f);
  size_t len = 0;
  cp_error err;
  char *text = cp_read_file(path, &len, &err);
  cr_assert_not_null(text, "%s: %s", path, err.msg);
  cp_lcp l;
  const int rc = cp_lcp_parse(text, len, &l, &err);
  free(text);
  if (rc) return; /* a storage type the reader does not take */
  if (l.n <= 8) compare_instance(ws, l.n, l.M, l.q, path, t);
  free(l.M);
  free(l.q);
  free(l.name);
}

Test(lemke_lean, same_answers_as_the_full_path_on_the_bundled_lcps) {
  static const char *sic[] = {"CPS_1", "CPS_2", "CPS_3", "CPS_4", "CPS_4bis", "CPS_5",
                              "Pang_isolated_sol", "Pang_isolated_sol_perturbed", "deudeu",
                              "inf_sol_perturbed", "ortiz", "exp_murty", "trivial"};
  static const char *own[] = {"fip_indeterminate", "incline_rest_mu1e12", "incline_rest_mu1e20",
                              "incline_rest_mu1e300", "noisy_q_p10_mu0.1"};
  cp_lemke_ws *ws = cp_lemke_ws_create(8);
  tally t = {0, 0, 0, 0, 0};
  char p[512];
  for (size_t k = 0; k < sizeof sic / sizeof sic[0]; k++) {
    snprintf(p, sizeof p, "%s/tests/data/siconos/lcp_%s.dat", getenv("CP_SOURCE_ROOT"), sic[k]);
    compare_file(ws, p, &t);
  }
  for (size_t k = 0; k < sizeof own / sizeof own[0]; k++) {
    snprintf(p, sizeof p, "%s/tests/data/lcp/%s.json", getenv("CP_SOURCE_ROOT"), own[k]);
    compare_file(ws, p, &t);
  }
  for (int k = 0; k < 330; k++) {
    snprintf(p, sizeof p, "%s/experiments/results/paper/data/p%02d/mu%d.%d.lcp.json",
             getenv("CP_SOURCE_ROOT"), k / 10 + 1, (k % 10 + 1) / 10, (k % 10 + 1) % 10);
    compare_file(ws, p, &t);
  }
  cr_log_info("bundled: %d compared, lean %d (%d left the condensed tableau, %d through "
              "the check's full rules), handed over %d",
              t.compared, t.lean, t.expanded, t.rules, t.handed);
  /* Both sides occur: lean answers, and hand-overs (tight checks, caps). */
  cr_assert_geq(t.lean, 100);
  /* Lean answers the check's fast pass declines (lcp_CPS_4bis: z_3 =
   * -4.4e-16) go straight on to its full rules: the same verdict. */
  cr_assert_geq(t.rules, 1);
  cr_assert_geq(t.handed, 20);
  cp_lemke_ws_destroy(ws);
}

Test(lemke_lean, same_answers_as_the_full_path_on_random_lcps) {
  /* n = 2..4, small integer data: many exact ties (first pivot and later,
   * z0 among them), zero diagonals, singular blocks and rays. */
  uint64_t rs = 5;
  cp_lemke_ws *ws = cp_lemke_ws_create(4);
  tally t = {0, 0, 0, 0, 0};
  for (int k = 0; k < 1200; k++) {
    const int n = 2 + k % 3;
    double M[16], q[4];
    for (int i = 0; i < n * n; i++) M[i] = (double)((int)(cpt_rand(&rs) % 7) - 2);
    for (int i = 0; i < n; i++) {
      if (k % 4 == 0) M[i + i * n] = fabs(M[i + i * n]) + 1.0;
      q[i] = (double)((int)(cpt_rand(&rs) % 9) - 5);
      if (k % 5 == 0) q[i] *= 0.1; /* inexact data */
    }
    /* Inexact M too: pivots p with p (1/p) != 1, where the lean start
     * goes on on the full tableau (contact/lemke_small.c, cond_pivot). */
    if (k % 7 == 3)
      for (int i = 0; i < n * n; i++) M[i] *= 0.7 + 0.01 * (double)(i + k % 11);
    char name[64];
    snprintf(name, sizeof name, "random case %d", k);
    compare_instance(ws, n, M, q, name, &t);
  }
  cr_log_info("random: %d compared, lean %d (%d left the condensed tableau), handed over %d",
              t.compared, t.lean, t.expanded, t.handed);
  cr_assert_geq(t.lean, 1000);
  /* Both ways of the condensed tableau occur and give the full path's bits. */
  cr_assert_geq(t.expanded, 20);
  cr_assert_geq(t.lean - t.expanded, 500);
  cr_assert_geq(t.handed, 1000);
  cp_lemke_ws_destroy(ws);
}

Test(lemke_lean, hands_over_what_it_does_not_take) {
  /* Non-finite q, q >= 0, a warm basis and a trace are the full path's:
   * the lean entry refuses the first two itself, cp_lemke_solve the rest. */
  const double M[4] = {2.0, 1.0, 1.0, 2.0};
  const double qn[2] = {-1.0, NAN}, qi[2] = {-1.0, -INFINITY}, qp[2] = {1.0, 0.0};
  double z[2], w[2];
  cp_lcp_info info;
  cp_lemke_ws *ws = cp_lemke_ws_create(2);
  const cp_lemke_options o = cp_lemke_defaults();
  cr_assert_eq(cp_lk_lean_solve(ws, 2, M, qn, &o, z, w, &info), 0);
  cr_assert_eq(cp_lk_lean_solve(ws, 2, M, qi, &o, z, w, &info), 0);
  cr_assert_eq(cp_lk_lean_solve(ws, 2, M, qp, &o, z, w, &info), 0);
  cr_assert_eq(cp_lemke_solve(ws, 2, M, qn, NULL, NULL, z, w, &info), CP_LCP_NUMERICAL);
  cr_assert(strstr(info.reason, "q[1] is not finite"), "%s", info.reason);
  cr_assert_eq(cp_lemke_solve(ws, 2, M, qp, NULL, NULL, z, w, &info), CP_LCP_SOLVED);
  cr_assert(z[0] == 0.0 && z[1] == 0.0 && info.iterations == 0);
  cp_lemke_options cov = o;
  const double d[2] = {1.0, 2.0};
  cov.cover = d;
  const double q[2] = {-1.0, -1.0};
  cr_assert_eq(cp_lk_lean_solve(ws, 2, M, q, &cov, z, w, &info), 0);
  cov = o;
  cov.lexicographic = 0;
  cr_assert_eq(cp_lk_lean_solve(ws, 2, M, q, &cov, z, w, &info), 0);
  cov = o;
  cov.small_n = -1;
  cr_assert_eq(cp_lk_lean_solve(ws, 2, M, q, &cov, z, w, &info), 0);
  /* The analytic answer of the taken case: z = (1/3, 1/3), w = 0. */
  cr_assert_eq(cp_lk_lean_solve(ws, 2, M, q, &o, z, w, &info), 1);
  cr_assert_float_eq(z[0], 1.0 / 3.0, 1e-15);
  cr_assert_float_eq(z[1], 1.0 / 3.0, 1e-15);
  cr_assert(w[0] == 0.0 && w[1] == 0.0 && info.status == CP_LCP_SOLVED && info.polished);
  cp_lemke_ws_destroy(ws);
}

Test(lemke_lean, first_pivot_ties_leave_the_last_row) {
  /* q = -e: every row ties at the first pivot. The lexicographic rule on
   * the rows of the identity (B^-1 at the start) takes the largest index;
   * the lean start (contact/lemke_small.c, first_row_e) decides it without
   * the rule's arithmetic and must agree with the full path in every bit,
   * statistics included. M = diag(2, 4, 6, ..) + J (the rows differ, so a
   * wrong choice shows in the pivots): z_i = c / (2 i + 2) with
   * c = 1 / (1 + sum_k 1 / (2 k + 2)), w = 0. */
  for (int n = 2; n <= CP_LK_LEAN_N; n++) {
    double M[16], q[4];
    for (int j = 0; j < n; j++) {
      q[j] = -1.0;
      for (int i = 0; i < n; i++) M[i + j * n] = (i == j ? 2.0 * j + 3.0 : 1.0);
    }
    cp_lemke_ws *ws = cp_lemke_ws_create(n);
    outcome a, b;
    solve(ws, n, M, q, NULL, 0, &a);
    solve(ws, n, M, q, NULL, 1, &b);
    char where[64];
    snprintf(where, sizeof where, "q = -e, n = %d", n);
    assert_same(&a, &b, n, where);
    cr_assert_eq(a.st, CP_LCP_SOLVED);
    cr_assert_eq(a.stats.small_starts, 1, "%s: not the lean start", where);
    cr_assert_geq(a.stats.lex_ties, 1, "%s: no tie resolved", where);
    double c = 1.0;
    for (int k = 0; k < n; k++) c += 1.0 / (2.0 * k + 2.0);
    c = 1.0 / c;
    for (int i = 0; i < n; i++) {
      cr_assert_float_eq(a.z[i], c / (2.0 * i + 2.0), 1e-15, "%s: z[%d] = %g", where, i, a.z[i]);
      cr_assert(fabs(a.w[i]) <= 1e-15, "%s: w[%d] = %g", where, i, a.w[i]);
    }
    /* The row itself: stopped by the cap after its first pivot, the lean
     * start has z0 basic in the last row. */
    cp_lemke_options one = cp_lemke_defaults();
    one.max_pivots = 1;
    cr_assert_eq(cp_lk_lean_solve(ws, n, M, q, &one, a.z, a.w, &a.info), 0);
    cr_assert_eq(ws->basic[n - 1], VZ0(n), "%s: z0 not in the last row", where);
    cp_lemke_ws_destroy(ws);
  }
}
