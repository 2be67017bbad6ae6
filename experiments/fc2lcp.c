/* Siconos frictional-contact problems as pyramid LCPs (issue 24).
 *
 *   fc2lcp IN.dat OUT.dat      convert one problem (experiments/fcconv.h)
 *                              into an LCP in Siconos' LCP .dat form, which
 *                              `complan lcp solve` reads
 *   fc2lcp --solve IN.dat ...  solve each converted problem with Lemke
 *                              (as complan lcp solve: library defaults,
 *                              the rescue pass and the classic pass) and
 *                              print one Markdown row per problem: size,
 *                              status, the passes that ran (first,
 *                              ordinary, rescue, classic or both), starts, pivots
 *                              of the first start and in all, thread
 *                              CPU time, the LCP check's complementarity and
 *                              the contact-space law violation
 *                              (fc_law_violation, independent of the LCP);
 *                              FC2LCP_DETAIL=1 prints the contact where the
 *                              law is violated most (above 1e-6) on stderr
 *
 * Bad input: a message naming the file and the line, exit status 2. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/lcpio.h"
#include "contact/lemke.h"
#include "experiments/bench_util.h"
#include "experiments/fcconv.h"
#include "models/error.h"

static int load(const char *path, fc_problem *p) {
  size_t len;
  cp_error e;
  cp_error_clear(&e);
  char *text = cp_read_file(path, &len, &e);
  if (!text) {
    fprintf(stderr, "fc2lcp: %s: %s\n", path, e.msg);
    return -1;
  }
  char err[256];
  int rc = fc_parse(text, len, p, err, sizeof err);
  free(text);
  if (rc) fprintf(stderr, "fc2lcp: %s: %s\n", path, err);
  return rc;
}

static int solve_one(const char *path) {
  fc_problem p;
  if (load(path, &p)) return 2;
  cp_lcp L;
  if (fc_to_lcp(&p, &L)) {
    fprintf(stderr, "fc2lcp: out of memory\n");
    return 2;
  }
  const int n = L.n;
  cp_lemke_ws *ws = cp_lemke_ws_create(n);
  double *z = malloc(sizeof(double) * (size_t)n * 2), *w = z + n;
  double *r = malloc(sizeof(double) * (size_t)p.d * (size_t)p.nc * 2);
  double *u = r + p.d * p.nc;
  if (!ws || !z || !r) {
    fprintf(stderr, "fc2lcp: out of memory\n");
    return 2;
  }
  cp_lcp_info info;
  cp_lemke_options o = cp_lemke_defaults();
  o.rescue = 1; /* as complan lcp solve */
  o.classic = 1;
  const double t0 = bench_now();
  cp_lemke_solve(ws, n, L.M, L.q, &o, NULL, z, w, &info);
  const double dt = bench_now() - t0;
  cp_lemke_stats st;
  cp_lemke_get_stats(ws, &st);
  /* The passes that ran: the last of them answered (or failed last). */
  const char *pass = st.classic_starts && st.rescue_starts ? "rescue+classic"
                     : st.classic_starts                  ? "classic"
                     : st.rescue_starts                   ? "rescue"
                     : info.starts == 1                   ? "first"
                                                          : "ordinary";
  const char *name = strrchr(path, '/');
  name = name ? name + 1 : path;
  double viol = NAN;
  int where = -1;
  if (info.status == CP_LCP_SOLVED) {
    fc_forces(&p, z, r, u);
    viol = fc_law_violation(&p, r, u, &where);
    if (viol > 1e-6 && getenv("FC2LCP_DETAIL"))
      for (int a = 0; a < p.d; a++)
        fprintf(stderr, "contact %d mu %g: r[%d] = %.17g u = %.17g\n", where,
                p.mu[where], a, r[p.d * where + a], u[p.d * where + a]);
  }
  printf("| %s | %d | %d | %s | %s | %d | %d | %d | %.3f | %.2g | %.2g | %s |\n",
         name, p.d, n, cp_lcp_status_name(info.status), pass, info.starts,
         info.first_start_iterations, info.iterations, dt * 1e3,
         info.complementarity, viol,
         info.status == CP_LCP_SOLVED ? "" : info.reason);
  fflush(stdout);
  cp_lemke_ws_destroy(ws);
  free(z);
  free(r);
  cp_lcp_free(&L);
  fc_free(&p);
  return info.status == CP_LCP_SOLVED ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc >= 2 && !strcmp(argv[1], "--solve")) {
    printf("| problem | d | n | status | pass | starts | first-start pivots "
           "| pivots | ms | max z_i w_i | law violation | reason |\n");
    printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    int rc = 0, solved = 0;
    for (int i = 2; i < argc; i++) {
      int s = solve_one(argv[i]);
      if (s == 2) return 2;
      solved += s == 0;
      rc |= s;
    }
    printf("\nsolved %d of %d\n", solved, argc - 2);
    return rc;
  }
  if (argc != 3) {
    fprintf(stderr, "usage: fc2lcp IN.dat OUT.dat | fc2lcp --solve IN.dat ...\n");
    return 2;
  }
  fc_problem p;
  if (load(argv[1], &p)) return 2;
  cp_lcp L;
  char *text = NULL;
  if (fc_to_lcp(&p, &L) || !(text = cp_lcp_format_dat(&L))) {
    fprintf(stderr, "fc2lcp: out of memory\n");
    return 2;
  }
  FILE *f = fopen(argv[2], "w");
  if (!f || fputs(text, f) == EOF || fclose(f)) {
    fprintf(stderr, "fc2lcp: %s: cannot write\n", argv[2]);
    remove(argv[2]);
    return 2;
  }
  free(text);
  cp_lcp_free(&L);
  fc_free(&p);
  return 0;
}
