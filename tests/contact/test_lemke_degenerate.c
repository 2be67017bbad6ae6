/* Lemke on degenerate problems against an exact oracle (issue 13).
 *
 * No per-test .timeout: Criterion 2.4's runner leaks 48 bytes (reported by
 * LeakSanitizer) when tests with timeouts run in parallel; meson's timeout
 * for this executable bounds the run instead.
 *
 * tests/contact/lemke_exact.c runs the same lexicographic Lemke in exact
 * rational arithmetic (GMP): in exact arithmetic every ratio-test decision
 * is unique, so its path is THE lexicographic path. The floating-point
 * solver must reach a solution wherever the exact one does, its first start
 * must solve wherever the exact first start does, and where the data make
 * ties exact (dyadic data) it must follow the exact path pivot by pivot. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/lcpio.h"
#include "contact/lemke.h"
#include "experiments/stacklcp.h"
#include "models/error.h"
#include "models/hash.h"
#include "tests/contact/lemke_exact.h"
#include "tests/support.h"

/* One BLAS thread for every test here, whatever OPENBLAS_NUM_THREADS says
 * (meson sets 1; a run by hand may not): the warm re-solves of the resting
 * stacks factor M_ZZ with LAPACK, and threaded OpenBLAS rounds that LU
 * differently. Its degenerate zeros (the coplanar corners' forces, M_ZZ
 * ill-conditioned) then come out with other signs and sizes; set to 0 they
 * leave residuals of 1e-8 instead of 6e-10 against z = 142 at 30 boxes
 * (docs/solvers.md, "Warm starts and BLAS threads"). complan's command and
 * its Python module set one thread as well. */
void openblas_set_num_threads(int n);
__attribute__((constructor)) static void one_blas_thread(void) { openblas_set_num_threads(1); }

/* ---- helpers ------------------------------------------------------------ */

typedef struct path {
  cp_lemke_step *s;
  int k, cap;
} path;

static void record(void *ctx, const cp_lemke_step *st) {
  path *p = ctx;
  if (p->k < p->cap) p->s[p->k++] = *st;
}

typedef struct lcp_case {
  int n;
  double *M, *q;
} lcp_case;

static lcp_case read_lcp(const char *path_) {
  size_t len = 0;
  cp_error err;
  char *text = cp_read_file(path_, &len, &err);
  cr_assert_not_null(text, "%s: %s", path_, err.msg);
  cp_lcp l;
  int rc = cp_lcp_parse(text, len, &l, &err);
  free(text);
  lcp_case c = {0, NULL, NULL};
  if (rc) return c; /* storage type 1: not read */
  c.n = l.n;
  c.M = l.M;
  c.q = l.q;
  free(l.name);
  return c;
}

static double qtol(int n, const double *q) {
  double s = 1.0;
  for (int i = 0; i < n; i++) s = fmax(s, fabs(q[i]));
  return 1e-7 * s;
}

/* Float Lemke (default options) against the exact oracle on one instance:
 * solved whenever the exact method solves; first start solved whenever the
 * exact first start solves, within twice its pivots. Returns the float
 * first start's pivots (or -1 if the exact method found no solution). */
static int check_against_exact(const char *name, int n, const double *M,
                               const double *q) {
  cpt_exact_result ex = cpt_lemke_exact(n, M, q, NULL, 0, NULL, NULL, 0);
  cp_lemke_ws *ws = cp_lemke_ws_create(n);
  double *z = malloc(sizeof(double) * (size_t)n), *w = malloc(sizeof(double) * (size_t)n);
  cp_lcp_info info;
  cp_lcp_status st = cp_lemke_solve(ws, n, M, q, NULL, NULL, z, w, &info);
  int ret = -1;
  if (ex.status == CP_LCP_SOLVED) {
    cr_assert_eq(st, CP_LCP_SOLVED, "%s (n = %d): exact Lemke solves it in %d pivots, "
                 "float ended %s: %s", name, n, ex.pivots, cp_lcp_status_name(st), info.reason);
    cr_assert_eq(info.starts, 1, "%s: exact first start solves, float needed %d starts",
                 name, info.starts);
    cr_assert_leq(info.first_start_iterations, 2 * ex.pivots,
                  "%s: float first start %d pivots, exact path %d", name,
                  info.first_start_iterations, ex.pivots);
    cpt_assert_lcp_solution(n, M, q, z, qtol(n, q));
    ret = info.first_start_iterations;
  } else if (st == CP_LCP_SOLVED) {
    cpt_assert_lcp_solution(n, M, q, z, qtol(n, q)); /* e.g. after a restart */
  }
  cp_lemke_ws_destroy(ws);
  free(z);
  free(w);
  return ret;
}

/* ---- the oracle itself -------------------------------------------------- */

Test(lemke_exact, oracle_solves_closed_forms_and_finds_rays) {
  /* M = [[2, 1], [1, 2]], q = (-5, -6): z = (4/3, 7/3), both basic. */
  double M[4] = {2, 1, 1, 2}, q[2] = {-5, -6}, z[2];
  cpt_exact_step tr[8];
  cpt_exact_result r = cpt_lemke_exact(2, M, q, NULL, 0, z, tr, 8);
  cr_assert_eq(r.status, CP_LCP_SOLVED);
  cr_assert_float_eq(z[0], 4.0 / 3.0, 1e-15);
  cr_assert_float_eq(z[1], 7.0 / 3.0, 1e-15);
  cr_assert_eq(tr[0].entering, 4, "z0 enters first");
  cr_assert_eq(tr[0].leaving, 1, "row of min q_i / d_i = -6 leaves");
  cr_assert_eq(tr[r.pivots - 1].leaving, 4, "z0 leaves last");
  /* M = [-1], q = -1: no solution (w = -z - 1 < 0): a secondary ray. */
  double m1 = -1.0, q1 = -1.0;
  r = cpt_lemke_exact(1, &m1, &q1, NULL, 0, z, NULL, 0);
  cr_assert_eq(r.status, CP_LCP_SECONDARY_RAY);
  /* Kostreva's cycling example (rows (1 2 0), (0 1 2), (2 0 1), q = -e):
   * every ratio test is degenerate; z = e/3. */
  double K[9] = {1, 0, 2, 2, 1, 0, 0, 2, 1}, qk[3] = {-1, -1, -1}, zk[3];
  r = cpt_lemke_exact(3, K, qk, NULL, 0, zk, NULL, 0);
  cr_assert_eq(r.status, CP_LCP_SOLVED);
  cr_assert_gt(r.ties, 0);
  for (int i = 0; i < 3; i++) cr_assert_float_eq(zk[i], 1.0 / 3.0, 1e-15);
  /* Tiny and huge entries (the integer scaling spans 2^-60 .. 2^60). */
  double Ms[4] = {0x1p-60, 0, 0, 0x1p60}, qs[2] = {-0x1p-61, -3.0}, zs[2];
  r = cpt_lemke_exact(2, Ms, qs, NULL, 0, zs, NULL, 0);
  cr_assert_eq(r.status, CP_LCP_SOLVED);
  cr_assert_float_eq(zs[0], 0.5, 1e-15);
  cr_assert_float_eq(zs[1], 3.0 * 0x1p-60, 1e-30);
  /* Pivot cap. */
  r = cpt_lemke_exact(3, K, qk, NULL, 2, zk, NULL, 0);
  cr_assert_eq(r.status, CP_LCP_PIVOT_CAP);
  cr_assert_eq(r.pivots, 2);
}

/* ---- tobenna: the instrumented case ------------------------------------- */

Test(lemke_exact, tobenna_first_start_follows_the_exact_path) {
  lcp_case c = read_lcp(cpt_data("siconos/lcp_tobenna.dat"));
  cr_assert_eq(c.n, 40);
  cpt_exact_step ex[4096];
  cpt_exact_result r = cpt_lemke_exact(c.n, c.M, c.q, NULL, 0, NULL, ex, 4096);
  cr_assert_eq(r.status, CP_LCP_SOLVED);
  cr_assert_gt(r.ties, r.pivots / 2, "tobenna is degenerate: ties at most pivots");
  path p = {malloc(sizeof(cp_lemke_step) * 8192), 0, 8192};
  cp_lemke_ws *ws = cp_lemke_ws_create(c.n);
  cp_lemke_set_trace(ws, record, &p);
  double z[40], w[40];
  cp_lcp_info info;
  cr_assert_eq(cp_lemke_solve(ws, c.n, c.M, c.q, NULL, NULL, z, w, &info), CP_LCP_SOLVED,
               "%s", info.reason);
  cr_assert_eq(info.starts, 1);
  cr_assert_eq(p.k, r.pivots, "float %d pivots, exact %d", p.k, r.pivots);
  for (int t = 0; t < p.k; t++) {
    cr_assert_eq(p.s[t].start, 0);
    cr_assert_eq(p.s[t].pivot, t);
    cr_assert(p.s[t].entering == ex[t].entering && p.s[t].leaving == ex[t].leaving,
              "pivot %d: float %d in / %d out, exact %d in / %d out", t,
              p.s[t].entering, p.s[t].leaving, ex[t].entering, ex[t].leaving);
  }
  cpt_assert_lcp_solution(c.n, c.M, c.q, z, 1e-8);
  /* Removing the observer: later solves are not traced. */
  cp_lemke_set_trace(ws, NULL, NULL);
  p.k = 0;
  cr_assert_eq(cp_lemke_solve(ws, c.n, c.M, c.q, NULL, NULL, z, w, &info), CP_LCP_SOLVED);
  cr_assert_eq(p.k, 0);
  cp_lemke_ws_destroy(ws);
  free(p.s);
  free(c.M);
  free(c.q);
}

/* ---- every bundled problem and the paper study's LCPs ------------------- */

Test(lemke_exact, bundled_data_float_solves_where_exact_solves) {
  const char *names[] = {"CPS_1", "CPS_2", "CPS_3", "CPS_4", "CPS_4bis", "CPS_5",
                         "Pang_isolated_sol", "Pang_isolated_sol_perturbed", "deudeu",
                         "enum_fails", "exp_murty", "exp_murty2", "inf_sol_perturbed",
                         "mmc", "ortiz", "tobenna", "trivial"};
  int solved = 0;
  for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
    char rel[64];
    snprintf(rel, sizeof rel, "siconos/lcp_%s.dat", names[k]);
    lcp_case c = read_lcp(cpt_data(rel));
    cr_assert_gt(c.n, 0, "%s not read", rel);
    solved += check_against_exact(rel, c.n, c.M, c.q) >= 0;
    free(c.M);
    free(c.q);
  }
  cr_assert_geq(solved, 14, "the exact method solves most of them (%d)", solved);
  lcp_case c = read_lcp(cpt_data("lcp/noisy_q_p10_mu0.1.json"));
  cr_assert_eq(c.n, 14);
  check_against_exact("lcp/noisy_q_p10_mu0.1.json", c.n, c.M, c.q);
  free(c.M);
  free(c.q);
}

Test(lemke_exact, paper_study_lcps_float_first_start_where_exact_first_start) {
  /* The committed data sets of the paper's study with n <= 60. */
  int checked = 0, solved = 0;
  for (int p = 1; p <= 33; p++)
    for (int m = 1; m <= 10; m++) {
      char path_[512];
      snprintf(path_, sizeof path_, "%s/experiments/results/paper/data/p%02d/mu%d.%d.lcp.json",
               getenv("CP_SOURCE_ROOT"), p, m / 10, m % 10);
      FILE *f = fopen(path_, "r");
      if (!f) continue;
      fclose(f);
      lcp_case c = read_lcp(path_);
      if (c.n > 60 || c.n == 0) { free(c.M); free(c.q); continue; }
      checked++;
      solved += check_against_exact(path_, c.n, c.M, c.q) >= 0;
      free(c.M);
      free(c.q);
    }
  cr_assert_geq(checked, 200, "paper data sets with n <= 60 found: %d", checked);
  cr_assert_geq(solved, checked * 9 / 10, "exact first start solves %d of %d", solved, checked);
}

/* ---- resting stacks ----------------------------------------------------- */

/* Snaps data to multiples of 2^-20: ties of the model (four symmetric
 * corners) become exact ties in the doubles, so both methods see the same
 * ties and the exact path is the one the float method must follow. */
static void snap(int n, double *M, double *q) {
  for (int i = 0; i < n * n; i++) M[i] = ldexp(round(ldexp(M[i], 20)), -20);
  for (int i = 0; i < n; i++) q[i] = ldexp(round(ldexp(q[i], 20)), -20);
}

Test(lemke_exact, dyadic_resting_stacks_follow_the_exact_path) {
  for (int nb = 1; nb <= 3; nb++) {
    double *M, *q;
    const int n = cp_resting_stack_lcp(nb, 0.2, &M, &q);
    cr_assert_eq(n, 20 * nb);
    snap(n, M, q);
    cpt_exact_step *ex = malloc(sizeof *ex * 4096);
    cpt_exact_result r = cpt_lemke_exact(n, M, q, NULL, 0, NULL, ex, 4096);
    cr_assert_eq(r.status, CP_LCP_SOLVED);
    cr_assert_gt(r.ties, 0);
    path p = {malloc(sizeof(cp_lemke_step) * 4096), 0, 4096};
    cp_lemke_ws *ws = cp_lemke_ws_create(n);
    cp_lemke_set_trace(ws, record, &p);
    double *z = malloc(sizeof(double) * (size_t)n), *w = malloc(sizeof(double) * (size_t)n);
    cp_lcp_info info;
    cr_assert_eq(cp_lemke_solve(ws, n, M, q, NULL, NULL, z, w, &info), CP_LCP_SOLVED);
    cr_assert_eq(p.k, r.pivots, "%d boxes: float %d pivots, exact %d", nb, p.k, r.pivots);
    for (int t = 0; t < p.k; t++)
      cr_assert(p.s[t].entering == ex[t].entering && p.s[t].leaving == ex[t].leaving,
                "%d boxes, pivot %d differs from the exact path", nb, t);
    cp_lemke_ws_destroy(ws);
    free(p.s); free(ex); free(z); free(w); free(M); free(q);
  }
}

/* A resting stack solves in one start, and re-solving it from its own basis
 * (the simulator's next step at rest) takes 0 pivots, also when gravity
 * changes slightly (q scaled: the same basis stays optimal). */
static void resting_stack_case(int nb) {
  double *M, *q;
  const int n = cp_resting_stack_lcp(nb, 0.2, &M, &q);
  cr_assert_eq(n, 20 * nb);
  cp_lemke_ws *ws = cp_lemke_ws_create(n);
  double *z = malloc(sizeof(double) * (size_t)n), *w = malloc(sizeof(double) * (size_t)n);
  double *z2 = malloc(sizeof(double) * (size_t)n);
  unsigned char *basis = malloc((size_t)n);
  cp_lcp_info info;
  cr_assert_eq(cp_lemke_solve(ws, n, M, q, NULL, NULL, z, w, &info), CP_LCP_SOLVED,
               "%d boxes: %s", nb, info.reason);
  cr_assert_eq(info.starts, 1, "%d boxes: %d starts (%d pivots)", nb, info.starts,
               info.iterations);
  cpt_assert_lcp_solution(n, M, q, z, qtol(n, q));
  /* Independent check of the physics: the normal forces carry the stack's
   * weight, (nb + nb-1 + ... + 1) m g summed over all levels. */
  double fn = 0.0;
  for (int j = 0; j < 4 * nb; j++) fn += z[j];
  cr_assert_float_eq(fn, 9.81 * nb * (nb + 1) / 2.0, 1e-6 * fn);
  cr_assert_eq(cp_lemke_basis(ws, basis), 0);
  cr_assert_eq(cp_lemke_solve(ws, n, M, q, NULL, basis, z2, w, &info), CP_LCP_SOLVED);
  cr_assert_eq(info.iterations, 0, "%d boxes: warm re-solve took %d pivots", nb,
               info.iterations);
  /* Same basis, same forces (to the conditioning of the coplanar corners). */
  for (int i = 0; i < n; i++) cr_assert_float_eq(z2[i], z[i], 1e-7 * (1.0 + fn));
  for (int i = 0; i < n; i++) q[i] *= 1.001;
  cr_assert_eq(cp_lemke_solve(ws, n, M, q, NULL, basis, z2, w, &info), CP_LCP_SOLVED);
  cr_assert_eq(info.iterations, 0, "%d boxes, g * 1.001: %d pivots", nb, info.iterations);
  cpt_assert_lcp_solution(n, M, q, z2, qtol(n, q));
  cp_lemke_ws_destroy(ws);
  free(z); free(z2); free(w); free(basis); free(M); free(q);
}

Test(lemke_exact, resting_stack_5_one_start_warm_zero_pivots) { resting_stack_case(5); }
Test(lemke_exact, resting_stack_10_one_start_warm_zero_pivots) { resting_stack_case(10); }
Test(lemke_exact, resting_stack_20_one_start_warm_zero_pivots) {
  resting_stack_case(20);
}
Test(lemke_exact, resting_stack_30_one_start_warm_zero_pivots) {
  resting_stack_case(30);
}

/* ---- property tests: random degenerate contact LCPs ---------------------- */

/* Random degenerate scene: 1..3 boxes stacked at rest on a table (random
 * sizes), friction 0 or random, each box's corner contacts possibly
 * duplicated (the same contact twice) or doubled by a coincident contact
 * with a rotated tangent frame; LCP size <= 60 for the exact oracle. */
static char *random_scene(uint64_t *rs) {
  const int nb = 1 + (int)(cpt_rand(rs) % 3);
  const int dup = nb == 1 && cpt_uniform(rs, 0, 1) < 0.5;     /* 8 contacts */
  const int coinc = nb == 1 && !dup && cpt_uniform(rs, 0, 1) < 0.5;
  const double mu = cpt_uniform(rs, 0, 1) < 0.3 ? 0.0 : cpt_uniform(rs, 0.1, 1.0);
  char *s = malloc(16384), *p = s;
  p += sprintf(p, "{\"gravity\": [0, 0, -9.81], \"friction\": {\"default\": %.17g}, "
                  "\"bodies\": [{\"name\": \"table\", \"fixed\": true, \"shape\": "
                  "{\"type\": \"plane\", \"normal\": [0, 0, 1], \"offset\": 0}}", mu);
  double z0 = 0.0, hx[3], hy[3], h[3];
  for (int i = 0; i < nb; i++) {
    hx[i] = cpt_uniform(rs, 0.05, 0.3);
    hy[i] = cpt_uniform(rs, 0.05, 0.3);
    h[i] = cpt_uniform(rs, 0.05, 0.3);
    p += sprintf(p, ", {\"name\": \"b%d\", \"mass\": %.17g, \"shape\": {\"type\": \"box\", "
                    "\"size\": [%.17g, %.17g, %.17g]}, \"position\": [0, 0, %.17g]}",
                 i, cpt_uniform(rs, 0.5, 3.0), 2 * hx[i], 2 * hy[i], h[i], z0 + h[i] / 2);
    z0 += h[i];
  }
  p += sprintf(p, "], \"contacts\": [");
  z0 = 0.0;
  int first = 1;
  for (int i = 0; i < nb; i++) {
    /* Corners of the smaller footprint of the two touching bodies. */
    double ex = i ? fmin(hx[i], hx[i - 1]) : hx[i], ey = i ? fmin(hy[i], hy[i - 1]) : hy[i];
    for (int c = 0; c < 4; c++)
      for (int rep = 0; rep < 1 + dup + coinc; rep++) {
        const double ang = rep && coinc ? 0.7 : 0.0;
        char below[16];
        if (i == 0) snprintf(below, sizeof below, "table");
        else snprintf(below, sizeof below, "b%d", i - 1);
        p += sprintf(p, "%s{\"a\": \"b%d\", \"b\": \"%s\", \"point\": [%.17g, %.17g, %.17g], "
                        "\"normal\": [0, 0, 1], \"tangent\": [%.17g, %.17g, 0]}",
                     first ? "" : ", ", i, below, c & 1 ? ex : -ex, c & 2 ? ey : -ey, z0,
                     cos(ang), sin(ang));
        first = 0;
      }
    z0 += h[i];
  }
  sprintf(p, "]}");
  return s;
}

Test(lemke_exact, random_degenerate_contact_lcps_match_the_oracle) {
  uint64_t rs = 2026;
  int solved = 0;
  for (int t = 0; t < 40; t++) {
    char *text = random_scene(&rs);
    double *M, *q;
    const int n = cp_scene_lcp(text, &M, &q);
    cr_assert_gt(n, 0, "scene %d did not build", t);
    cr_assert_leq(n, 60);
    char name[32];
    snprintf(name, sizeof name, "random scene %d", t);
    solved += check_against_exact(name, n, M, q) >= 0;
    free(text);
    free(M);
    free(q);
  }
  /* Resting scenes always have a solution (the weights are carried). */
  cr_assert_eq(solved, 40);
}

/* ---- the small path ----------------------------------------------------- */

/* Pivots of one solve with the given small_n, into p; returns the status. */
static cp_lcp_status traced_solve(cp_lemke_ws *ws, int n, const double *M, const double *q,
                                  int small_n, path *p, cp_lemke_stats *st) {
  cp_lemke_options o = cp_lemke_defaults();
  o.small_n = small_n;
  double *z = malloc(sizeof(double) * (size_t)n), *w = malloc(sizeof(double) * (size_t)n);
  cp_lcp_info info;
  p->k = 0;
  cp_lemke_set_trace(ws, record, p);
  cp_lcp_status s = cp_lemke_solve(ws, n, M, q, &o, NULL, z, w, &info);
  cp_lemke_set_trace(ws, NULL, NULL);
  cp_lemke_get_stats(ws, st);
  if (s == CP_LCP_SOLVED) cpt_assert_lcp_solution(n, M, q, z, qtol(n, q));
  free(z);
  free(w);
  return s;
}

Test(lemke_exact, small_path_takes_the_structured_paths_decisions) {
  /* Every bundled and paper LCP of size <= 64: the dense-tableau path
   * (small_n = 64) and the structured path (small_n = -1) take the same
   * pivots, restarts included, and end the same way. */
  cp_lemke_ws *ws = cp_lemke_ws_create(64);
  path a = {malloc(sizeof(cp_lemke_step) * 20000), 0, 20000};
  path b = {malloc(sizeof(cp_lemke_step) * 20000), 0, 20000};
  int compared = 0;
  for (int k = 0; k < 33 * 10 + 3; k++) {
    char path_[512];
    lcp_case c = {0, NULL, NULL};
    if (k < 330) {
      snprintf(path_, sizeof path_, "%s/experiments/results/paper/data/p%02d/mu%d.%d.lcp.json",
               getenv("CP_SOURCE_ROOT"), k / 10 + 1, (k % 10 + 1) / 10, (k % 10 + 1) % 10);
      FILE *f = fopen(path_, "r");
      if (!f) continue;
      fclose(f);
      c = read_lcp(path_);
    } else {
      c.n = cp_resting_stack_lcp(k - 329, 0.2, &c.M, &c.q);
    }
    if (c.n >= 1 && c.n <= 64) {
      cp_lemke_stats sa, sb;
      cp_lcp_status s1 = traced_solve(ws, c.n, c.M, c.q, 64, &a, &sa);
      cp_lcp_status s2 = traced_solve(ws, c.n, c.M, c.q, -1, &b, &sb);
      cr_assert_eq(s1, s2, "instance %d: small %s, structured %s", k, cp_lcp_status_name(s1),
                   cp_lcp_status_name(s2));
      cr_assert_gt(sa.small_starts, 0);
      cr_assert_eq(sb.small_starts, 0);
      cr_assert_eq(a.k, b.k, "instance %d (n = %d): %d vs %d pivots", k, c.n, a.k, b.k);
      for (int t = 0; t < a.k; t++)
        cr_assert(a.s[t].entering == b.s[t].entering && a.s[t].leaving == b.s[t].leaving &&
                  a.s[t].start == b.s[t].start, "instance %d: pivot %d differs", k, t);
      compared++;
    }
    free(c.M);
    free(c.q);
  }
  cr_assert_geq(compared, 200);
  free(a.s);
  free(b.s);
  cp_lemke_ws_destroy(ws);
}

Test(lemke_exact, small_path_is_automatic_below_the_crossover_only) {
  /* Default options: a size-4 problem runs on the tableau, size 5 not;
   * small_n larger than the tableau's capacity (64) is clamped. */
  for (int n = 4; n <= 5; n++) {
    double *M = calloc((size_t)n * n, sizeof(double)), *q = malloc(sizeof(double) * n);
    for (int i = 0; i < n; i++) {
      M[i + i * n] = 2.0;
      if (i + 1 < n) M[i + (i + 1) * n] = M[i + 1 + i * n] = -1.0;
      q[i] = i % 3 ? -1.0 : 0.5;
    }
    cp_lemke_ws *ws = cp_lemke_ws_create(n);
    path p = {malloc(sizeof(cp_lemke_step) * 1000), 0, 1000};
    cp_lemke_stats st;
    cr_assert_eq(traced_solve(ws, n, M, q, 0, &p, &st), CP_LCP_SOLVED);
    cr_assert_eq(st.small_starts, n <= 4, "n = %d: small starts %d", n, st.small_starts);
    cr_assert_eq(traced_solve(ws, n, M, q, 1000, &p, &st), CP_LCP_SOLVED);
    cr_assert_eq(st.small_starts, 1);
    cp_lemke_ws_destroy(ws);
    free(p.s);
    free(M);
    free(q);
  }
}

/* ---- the small path's answers, bit for bit -------------------------------- */

/* FNV-1a over every solve of a small LCP (n <= 8) with the default options
 * and with the rescue pass: status, starts, pivots, z, w and the check's
 * measures, bit for bit. */
static uint64_t small_fingerprint(uint64_t h, cp_lemke_ws *ws, const lcp_case *c, int *solves) {
  double *z = malloc(sizeof(double) * 2 * (size_t)c->n), *w = z + c->n;
  for (int rescue = 0; rescue <= 1; rescue++) {
    cp_lemke_options o = cp_lemke_defaults();
    o.rescue = rescue;
    cp_lcp_info info;
    const int st = cp_lemke_solve(ws, c->n, c->M, c->q, rescue ? &o : NULL, NULL, z, w, &info);
    const int head[3] = {st, info.starts, info.iterations};
    const double meas[4] = {info.complementarity, info.residual, info.min_z, info.min_w};
    h = cp_fnv_bytes(h, head, sizeof head);
    h = cp_fnv_words(h, z, sizeof(double) * 2 * (size_t)c->n);
    h = cp_fnv_words(h, meas, sizeof meas);
    ++*solves;
  }
  free(z);
  return h;
}

Test(lemke_exact, small_answers_are_the_committed_bits) {
  /* The Siconos test LCPs and the paper study's LCPs with n <= 8 (the
   * small path's sizes, n <= 4 by default): their answers are those of the
   * small path before it was compiled per size (commit b16eaba), bit for
   * bit. Update SMALL_BITS only with a change of the method that is meant
   * to change answers (docs/solvers.md, "Small problems"), or of these
   * inputs: session 20 regenerated the paper study's data (the generator's
   * arithmetic had moved entries in the last bits since it was committed),
   * and the code from before that session's Lemke changes gives the same
   * new fingerprint on them. */
  static const char *sic[] = {"CPS_1", "CPS_2", "CPS_3", "CPS_4", "CPS_4bis", "CPS_5",
                              "Pang_isolated_sol", "Pang_isolated_sol_perturbed", "deudeu",
                              "enum_fails", "exp_murty", "exp_murty2", "inf_sol_perturbed",
                              "ortiz", "trivial"};
  const uint64_t SMALL_BITS = 0xd350d73b74f2c269ull;
  cp_lemke_ws *ws = cp_lemke_ws_create(8);
  uint64_t h = CP_FNV_OFFSET;
  int solves = 0;
  const int nsic = (int)(sizeof sic / sizeof sic[0]);
  for (int k = 0; k < nsic + 330; k++) {
    char p[512];
    if (k < nsic)
      snprintf(p, sizeof p, "%s/tests/data/siconos/lcp_%s.dat", getenv("CP_SOURCE_ROOT"), sic[k]);
    else
      snprintf(p, sizeof p, "%s/experiments/results/paper/data/p%02d/mu%d.%d.lcp.json",
               getenv("CP_SOURCE_ROOT"), (k - nsic) / 10 + 1, ((k - nsic) % 10 + 1) / 10,
               ((k - nsic) % 10 + 1) % 10);
    FILE *f = fopen(p, "r");
    if (!f) continue;
    fclose(f);
    lcp_case c = read_lcp(p);
    if (c.n >= 1 && c.n <= 8) h = small_fingerprint(h, ws, &c, &solves);
    free(c.M);
    free(c.q);
  }
  cr_log_info("small LCPs: %d solves, fingerprint 0x%016llx", solves, (unsigned long long)h);
  cr_assert_geq(solves, 2 * 40);
  cr_assert_eq(h, SMALL_BITS, "small answers changed: 0x%016llx", (unsigned long long)h);
  cp_lemke_ws_destroy(ws);
}

Test(lemke_exact, small_path_matches_the_structured_path_on_random_lcps) {
  /* Random LCPs of n = 1..8 with small integer data (many exact ties,
   * zero diagonals, singular blocks, rays): the small path (small_n = 8)
   * and the structured path (small_n = -1) take the same pivots and end
   * the same way; both answers pass the check and agree to rounding. */
  uint64_t rs = 24;
  cp_lemke_ws *ws = cp_lemke_ws_create(8);
  path a = {malloc(sizeof(cp_lemke_step) * 4000), 0, 4000};
  path b = {malloc(sizeof(cp_lemke_step) * 4000), 0, 4000};
  int solved = 0, failed = 0;
  for (int t = 0; t < 1600; t++) {
    const int n = 1 + t % 8;
    double M[64], q[8], za[8], wa[8], zb[8], wb[8];
    for (int i = 0; i < n * n; i++) M[i] = (double)((int)(cpt_rand(&rs) % 7) - 2);
    for (int i = 0; i < n; i++) {
      if (t % 3 == 0) M[i + i * n] = fabs(M[i + i * n]) + 1.0; /* some P-ish */
      q[i] = (double)((int)(cpt_rand(&rs) % 9) - 5);
    }
    cp_lemke_options o = cp_lemke_defaults();
    cp_lcp_info ia, ib;
    o.small_n = 8;
    a.k = 0;
    cp_lemke_set_trace(ws, record, &a);
    const cp_lcp_status sa = cp_lemke_solve(ws, n, M, q, &o, NULL, za, wa, &ia);
    o.small_n = -1;
    b.k = 0;
    cp_lemke_set_trace(ws, record, &b);
    const cp_lcp_status sb = cp_lemke_solve(ws, n, M, q, &o, NULL, zb, wb, &ib);
    cp_lemke_set_trace(ws, NULL, NULL);
    cr_assert_eq(sa, sb, "case %d (n = %d): small %s, structured %s", t, n,
                 cp_lcp_status_name(sa), cp_lcp_status_name(sb));
    cr_assert_eq(a.k, b.k, "case %d: %d vs %d pivots", t, a.k, b.k);
    for (int s = 0; s < a.k; s++)
      cr_assert(a.s[s].entering == b.s[s].entering && a.s[s].leaving == b.s[s].leaving,
                "case %d: pivot %d differs", t, s);
    if (sa == CP_LCP_SOLVED) {
      cpt_assert_lcp_solution(n, M, q, za, qtol(n, q));
      for (int i = 0; i < n; i++)
        cr_assert_float_eq(za[i], zb[i], 1e-9 * (1.0 + fabs(zb[i])), "case %d z%d", t, i);
      solved++;
    } else {
      failed++;
    }
  }
  /* Both kinds of outcome occur (the rays are the method's on these data). */
  cr_assert_gt(solved, 800);
  cr_assert_gt(failed, 10);
  free(a.s);
  free(b.s);
  cp_lemke_ws_destroy(ws);
}
