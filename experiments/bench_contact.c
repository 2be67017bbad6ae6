/* Forming the contact LCP versus solving it (issue: "forming must not
 * dominate"). Scenes: stacks of 1..10 boxes on a table, four corner contacts
 * under each box (4 to 40 contacts); every other box slides on the one below,
 * so the LCP mixes sliding and rolling contacts. For each scene, side by side
 * in one run: parse (JSON to cp_scene), form (cp_system_build: kinematics, H,
 * f, G, k; then A, b by Cholesky; then the pyramid M, q) and solve (the auto
 * strategy: Lemke answers all of these). Times are medians of repeated runs
 * in thread CPU time (the machine is shared). */
#include <cblas.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "contact/dynamics.h"
#include "contact/solve.h"
#include "experiments/bench_util.h"
#include "experiments/stacklcp.h"
#include "models/scene.h"
#include "models/system.h"



int main(void) {
  openblas_set_num_threads(1);
  const int sizes[] = {1, 2, 4, 6, 8, 10};
  const int reps = getenv("BENCH_REPS") ? atoi(getenv("BENCH_REPS")) : 201;
  time_t t = time(NULL);
  char date[64];
  strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", gmtime(&t));
  printf("# bench_contact: forming the contact LCP vs solving it\n\n");
  printf("date: %s; clock: thread CPU time; %d repetitions, medians.\n", date, reps);
  printf("Scenes: stacks of n boxes on a table, 4 corner contacts per box (mu = 0.5): first\n"
         "all at rest (every contact rolling), then every other box sliding on the one below. form = cp_system_build + A, b (Cholesky) +\n"
         "pyramid M, q; solve = cp_lcp_solve (auto; the solver that answered is shown).\n"
         "The scene is parsed once (parse is timed in a loop of its own), then formed and\n"
         "solved repeatedly, as a planner does state after state.\n\n");
  printf("| bodies | contacts | sliding | LCP size | parse (us) | form (us): system + A,b + M,q | solve (us) | solver, pivots | form / solve |\n");
  printf("|---|---|---|---|---|---|---|---|---|\n");
  int fail = 0;
  for (size_t k = 0; k < 2 * sizeof sizes / sizeof *sizes; k++) {
    int n = sizes[k % (sizeof sizes / sizeof *sizes)], sliding = k >= sizeof sizes / sizeof *sizes;
    /* boxes 0.2 x 0.2 x 0.1 (1 kg), mu 0.5 */
    char *text = cp_stack_scene(n, 0.2, 0.1, 0.5, sliding);
    double *tp = malloc(sizeof(double) * reps), *tf = malloc(sizeof(double) * reps),
           *ts = malloc(sizeof(double) * reps), *tsys = malloc(sizeof(double) * reps),
           *tab = malloc(sizeof(double) * reps);
    int m = 0, ns = 0, iters = 0;
    cp_lcp_solver who = CP_SOLVER_AUTO;
    /* Parsing is timed on its own: a planner parses a scene once and then
     * forms and solves the LCP of state after state (it updates the scene's
     * state in place). Timing parse, form and solve in one loop also charged
     * "form" with glibc consolidating the blocks the parse had just freed
     * (about 11k instructions at 1 box, measured with callgrind). */
    cp_scene scene;
    cp_error err;
    for (int r = 0; r < reps; r++) {
      double t0 = bench_now();
      if (cp_scene_parse(text, strlen(text), NULL, NULL, &scene, &err)) {
        fprintf(stderr, "bench_contact: scene %d: %s: %s\n", n, err.where, err.msg);
        return 2;
      }
      tp[r] = bench_now() - t0;
      if (r + 1 < reps) cp_scene_free(&scene);
    }
    for (int r = 0; r < reps; r++) {
      cp_system sys;
      double t1 = bench_now();
      cp_system_build(&scene, &sys, &err);
      double t1a = bench_now();
      cp_contact_space cs;
      cp_contact_space_build(sys.n_u, sys.n_c, sys.H, sys.G, sys.f, sys.k, NULL, NULL, &cs);
      double t1b = bench_now();
      double *M, *q;
      m = cp_system_pyramid_lcp(&sys, &cs, &M, &q);
      double t2 = bench_now();
      if (m < 0) {
        fprintf(stderr, "bench_contact: out of memory\n");
        return 2;
      }
      ns = 0;
      for (int j = 0; j < sys.n_c; j++) ns += sys.sliding[j];
      double *z = malloc(sizeof(double) * 2 * (size_t)m);
      cp_solve_options opt = cp_solve_defaults();
      cp_lcp_info info;
      cp_lcp_solve(NULL, m, M, q, &opt, z, z + m, &info, NULL);
      double t3 = bench_now();
      if (info.status != CP_LCP_SOLVED) fail = 1;
      iters = info.iterations;
      who = info.solver;
      tf[r] = t2 - t1;
      tsys[r] = t1a - t1;
      tab[r] = t1b - t1a;
      ts[r] = t3 - t2;
      free(z);
      free(M);
      free(q);
      cp_contact_space_free(&cs);
      cp_system_free(&sys);
    }
    cp_scene_free(&scene);
    double p = bench_median(tp, reps) * 1e6, f = bench_median(tf, reps) * 1e6, s = bench_median(ts, reps) * 1e6;
    double fs = bench_median(tsys, reps) * 1e6, fa = bench_median(tab, reps) * 1e6;
    printf("| %d | %d | %d | %d | %.1f | %.1f (%.1f + %.1f + %.1f) | %.1f | %s, %d | %.2f |\n", n,
           4 * n, ns, m, p, f, fs, fa, f - fs - fa, s, cp_lcp_solver_name(who), iters, f / s);
    free(tsys);
    free(tab);
    free(tp);
    free(tf);
    free(ts);
    free(text);
  }
  if (fail) printf("\nNOTE: some solve did not end solved.\n");
  return 0;
}
