/* Lemke's regularised route on LCP files (issue 24; docs/solvers.md, "The
 * regularised route").
 *
 *   lcp_reg FILE... [--eps E1,E2,...]
 *
 * For each file: plain Lemke (cover ones, one start, no rescue pass), then
 * cp_lemke_regularised with the library's defaults (or the given eps
 * sequence); one Markdown row per file with the route's outcome, eps, the
 * regularised pivots and support per eps, thread CPU time, and the
 * original problem's check measures of the answer. This is the bench-only
 * check of the two large Siconos problems (KaplasTower-i1061-4, n = 3420,
 * and RockPile_tob1, n = 2778: 30 MB and 18 MB as LCP files, too big for
 * tests/data), converted by fc2lcp (experiments/results/fc_lemke.md).
 *
 * Bad input: a message naming the file, exit status 2. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/lcpio.h"
#include "contact/lemke.h"
#include "experiments/bench_util.h"
#include "models/error.h"

static int parse_eps(const char *s, cp_lemke_reg_options *ro) {
  ro->neps = 0;
  while (*s) {
    char *end;
    const double e = strtod(s, &end);
    if (end == s || ro->neps == CP_LEMKE_REG_MAX_EPS) return -1;
    ro->eps[ro->neps++] = e;
    s = *end == ',' ? end + 1 : end;
    if (*end && *end != ',') return -1;
  }
  return ro->neps > 0 ? 0 : -1;
}

static int run(const char *path, const cp_lemke_reg_options *ro) {
  size_t len;
  cp_error e;
  cp_error_clear(&e);
  char *text = cp_read_file(path, &len, &e);
  if (!text) {
    fprintf(stderr, "lcp_reg: %s: %s\n", path, e.msg);
    return 2;
  }
  cp_lcp L;
  int rc = cp_lcp_parse(text, len, &L, &e);
  free(text);
  if (rc) {
    fprintf(stderr, "lcp_reg: %s: %s\n", path, e.msg);
    return 2;
  }
  const int n = L.n;
  double *z = malloc(sizeof(double) * 2 * (size_t)n), *w = z ? z + n : NULL;
  cp_lemke_ws *ws = cp_lemke_ws_create(n);
  if (!z || !ws) {
    fprintf(stderr, "lcp_reg: out of memory\n");
    return 2;
  }
  cp_lemke_options lo = cp_lemke_defaults();
  lo.restarts = 0;
  cp_lcp_info info;
  double t0 = bench_now();
  cp_lemke_solve(ws, n, L.M, L.q, &lo, NULL, z, w, &info);
  const double t_plain = bench_now() - t0;
  const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
  printf("| %s | %d | plain: %s, %d pivots, %.1f s |", base, n,
         cp_lcp_status_name(info.status), info.iterations, t_plain);
  cp_lemke_reg_report rep;
  t0 = bench_now();
  cp_lemke_regularised(ws, n, L.M, L.q, &lo, ro, z, w, &info, &rep);
  const double t_reg = bench_now() - t0;
  printf(" %s |", cp_lcp_status_name(info.status));
  for (int k = 0; k < rep.tried; k++)
    printf("%s%g: %s, %d pivots, |P| = %d, face %d", k ? "; " : " ", ro->eps[k],
           cp_lcp_status_name((cp_lcp_status)rep.reg_status[k]),
           rep.reg_pivots[k], rep.support[k], rep.face[k]);
  if (info.status == CP_LCP_SOLVED)
    printf(" | %g | %s | %.1f s | %.3g | %.3g | %.3g | %.3g |\n", rep.eps,
           info.polished ? "yes" : "no", t_reg, info.complementarity,
           info.min_z, info.min_w, info.residual);
  else
    printf(" | - | - | %.1f s | %s | | | |\n", t_reg, info.reason);
  fflush(stdout);
  free(z);
  cp_lemke_ws_destroy(ws);
  cp_lcp_free(&L);
  return info.status == CP_LCP_SOLVED ? 0 : 1;
}

int main(int argc, char **argv) {
  cp_lemke_reg_options ro = cp_lemke_reg_defaults();
  int files = 0, worst = 0;
  for (int i = 1; i < argc; i++)
    if (!strcmp(argv[i], "--eps")) {
      if (i + 1 >= argc || parse_eps(argv[i + 1], &ro)) {
        fprintf(stderr, "lcp_reg: --eps wants a list like 1e-3,1e-4\n");
        return 2;
      }
      i++;
    }
  printf("| problem | n | plain Lemke (one start) | route | per eps: Lemke on M + eps m I, support, face crossover (2 basis, 1 LP vertex, 0 none) | eps | polished | route CPU | complementarity | min z | min w | residual |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--eps")) {
      i++;
      continue;
    }
    files++;
    const int rc = run(argv[i], &ro);
    if (rc > worst) worst = rc;
  }
  if (!files) {
    fprintf(stderr, "usage: lcp_reg FILE... [--eps E1,E2,...]\n");
    return 2;
  }
  return worst;
}
