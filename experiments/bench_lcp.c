/* bench_lcp: complan's Lemke (revised, structured B^-1) against a dense-tableau
 * Lemke and against this machine's rank-1-update floor; then warm against cold
 * starts on neighbouring contact problems. Output is Markdown (see
 * experiments/results/lemke.md for a committed run).
 *
 *   bench_lcp [--quick] [--wall]
 *
 * Timing: thread CPU time by default (the benchmark machines are shared:
 * wall-clock time of a multi-millisecond solve is inflated by preemption, that
 * of a short floor batch much less, which would bias the ratios); --wall uses
 * CLOCK_MONOTONIC. Within each repetition the complan solve, the dense solve
 * and the floor batches are timed back to back, so all see the same load;
 * medians over repetitions. OpenBLAS on one thread. Every complan answer is
 * checked (cp_lcp_check inside the solver); the dense reference's answers are
 * checked here. */
#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "contact/lemke.h"
#include "models/clock.h"
#include "experiments/dense_lemke.h"
#include "experiments/lcpgen.h"

static int bench_wall = 0; /* --wall: the monotonic clock */

static double now(void) {
  return bench_wall ? cp_clock_now() : cp_clock_thread_cpu();
}

static int cmpd(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmpd);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Repetitions: at least MIN_REPS and MIN_TIME seconds, at most MAX_REPS. */
static int MIN_REPS = 15, MAX_REPS = 301;
static double MIN_TIME = 0.25;

typedef struct instance {
  const char *family;
  int n, nc, ns, nb;
  uint64_t seed;
  double mu;
} instance;

static void generate(const instance *in, double *M, double *q) {
  if (in->nc == 0) cp_gen_monotone(in->n, in->seed, M, q, NULL);
  else cp_gen_contact_like(in->nc, in->ns, in->nb, in->mu, in->seed, M, q);
}

/* One batch of rank-1 updates on an m x k column-major block (ld m): the
 * floor a pivot cannot beat. Returns the time per update. Two versions:
 * cblas_dger (the library's), and a plain loop vectorised by the compiler
 * (same flags as complan), which is faster where OpenBLAS does not recognise
 * the CPU and falls back to generic kernels. The floor is the faster one. */
#define FLOOR_BATCH 20
static double dger_batch(int m, int k, double *A, const double *x,
                         const double *y) {
  double alpha = 1e-3, t0 = now();
  for (int b = 0; b < FLOOR_BATCH; b++) {
    cblas_dger(CblasColMajor, m, k, alpha, x, 1, y, 1, A, m);
    alpha = -alpha; /* keep A bounded */
  }
  return (now() - t0) / FLOOR_BATCH;
}

static void ger_plain(int m, int k, double alpha, const double *restrict x,
                      const double *restrict y, double *restrict A) {
  for (int j = 0; j < k; j++) {
    const double t = alpha * y[j];
    double *restrict c = A + (size_t)j * (size_t)m;
    for (int i = 0; i < m; i++) c[i] += x[i] * t;
  }
}

static double plain_batch(int m, int k, double *A, const double *x,
                          const double *y) {
  double alpha = 1e-3, t0 = now();
  for (int b = 0; b < FLOOR_BATCH; b++) {
    ger_plain(m, k, alpha, x, y, A);
    alpha = -alpha;
  }
  return (now() - t0) / FLOOR_BATCH;
}

typedef struct row {
  int piv_c, piv_d;
  cp_lcp_status st_c, st_d;
  double kavg, tc, td, f_nn, f_nk, p_nn, p_nk;
} row;

static const char *short_status(cp_lcp_status s) {
  return s == CP_LCP_SOLVED ? "" : s == CP_LCP_SECONDARY_RAY ? " ray"
       : s == CP_LCP_CHECK_FAILED ? " check failed" : " failed";
}

/* Per (family, n): medians over instances, for the summary. */
typedef struct summary {
  const char *family;
  int n;
  double speedup, r_dger, r_floor;
} summary;
static summary sums[16];
static int nsums;

static void part1(const int *sizes, int nsizes, int nseeds, cp_lemke_ws *ws,
                  cp_dense_lemke *dl, int cap) {
  double *M = malloc(sizeof(double) * cap * cap), *q = malloc(sizeof(double) * cap);
  double *z = malloc(sizeof(double) * cap), *w = malloc(sizeof(double) * cap);
  double *A = malloc(sizeof(double) * cap * cap);
  double *x = malloc(sizeof(double) * cap), *y = malloc(sizeof(double) * cap);
  for (int i = 0; i < cap * cap; i++) A[i] = 1.0 / (1.0 + i % 7);
  for (int i = 0; i < cap; i++) { x[i] = 0.5 - (i % 3) * 0.25; y[i] = 1.0 - (i % 5) * 0.3; }
  const char *families[2] = {"monotone", "contact"};
  printf("## 1. Time per pivot: complan vs dense tableau vs rank-1 floor\n\n");
  printf("Same instance, same start (covering vector e), same lexicographic rule\n"
         "in both solvers. t/piv = median solve time / pivots (the complan time\n"
         "includes the final refinement and cp_lcp_check). k = mean number of\n"
         "dense columns of B^-1 per pivot. Floors: one rank-1 update of an\n"
         "n x n and of an n x round(k) column-major block, by `cblas_dger` and by\n"
         "a plain compiler-vectorised loop; `floor` = the faster of the two.\n"
         "A status after a pivot count means that solve did not end solved.\n\n");
  printf("| family | n | seed | pivots complan / dense | k | complan t/piv (us) "
         "| dense t/piv (us) | speedup | dger n x n (us) | dger n x k (us) | "
         "plain n x k (us) | complan / dger(n x k) | complan / floor(n x k) |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  fflush(stdout);
  double *tc = malloc(sizeof(double) * MAX_REPS), *td = malloc(sizeof(double) * MAX_REPS);
  double *f1 = malloc(sizeof(double) * MAX_REPS), *f2 = malloc(sizeof(double) * MAX_REPS);
  double *f3 = malloc(sizeof(double) * MAX_REPS), *f4 = malloc(sizeof(double) * MAX_REPS);
  for (int f = 0; f < 2; f++)
    for (int si = 0; si < nsizes; si++) {
      const int n = sizes[si];
      row rows[8];
      for (int s = 0; s < nseeds; s++) {
        instance in = {families[f], n, 0, 0, 0, (uint64_t)(s + 1), 0.3};
        if (f == 1) { /* m = ns + 5 (nc - ns) = n */
          in.nc = 6 * n / 25;
          in.ns = n / 20;
          in.nb = in.nc / 2 + 1;
        }
        generate(&in, M, q);
        row *R = &rows[s];
        cp_lcp_info info;
        cp_lemke_stats st;
        R->st_c = cp_lemke_solve(ws, n, M, q, NULL, NULL, z, w, &info);
        R->piv_c = info.iterations;
        cp_lemke_get_stats(ws, &st);
        R->kavg = info.iterations ? (double)st.active_sum / info.iterations : 0.0;
        double kd;
        R->st_d = cp_dense_lemke_solve(dl, n, M, q, 0, z, w, &R->piv_d, &kd);
        if (R->st_d == CP_LCP_SOLVED) {
          cp_lcp_info ci;
          cp_lcp_info_clear(&ci);
          if (!cp_lcp_check(n, M, q, z, NULL, NULL, &ci)) R->st_d = CP_LCP_CHECK_FAILED;
        }
        int kr = (int)lround(R->kavg);
        if (kr < 1) kr = 1;
        /* Interleaved repetitions: every timing below sees the same load. */
        int nr = 0;
        double t0 = now();
        while (nr < MAX_REPS && (nr < MIN_REPS || now() - t0 < MIN_TIME)) {
          double a = now();
          cp_lemke_solve(ws, n, M, q, NULL, NULL, z, w, &info);
          tc[nr] = now() - a;
          a = now();
          int p;
          cp_dense_lemke_solve(dl, n, M, q, 0, z, w, &p, &kd);
          td[nr] = now() - a;
          f1[nr] = dger_batch(n, n, A, x, y);
          f2[nr] = dger_batch(n, kr, A, x, y);
          f3[nr] = plain_batch(n, n, A, x, y);
          f4[nr] = plain_batch(n, kr, A, x, y);
          nr++;
        }
        R->tc = median(tc, nr) / (R->piv_c ? R->piv_c : 1);
        R->td = median(td, nr) / (R->piv_d ? R->piv_d : 1);
        R->f_nn = median(f1, nr);
        R->f_nk = median(f2, nr);
        R->p_nn = median(f3, nr);
        R->p_nk = median(f4, nr);
        const double floor_nk = R->f_nk < R->p_nk ? R->f_nk : R->p_nk;
        printf("| %s | %d | %d | %d%s / %d%s | %.1f | %.3f | %.3f | %.1fx | %.3f "
               "| %.3f | %.3f | %.2f | %.2f |\n",
               in.family, n, s + 1, R->piv_c, short_status(R->st_c), R->piv_d,
               short_status(R->st_d), R->kavg, 1e6 * R->tc, 1e6 * R->td,
               R->td / R->tc, 1e6 * R->f_nn, 1e6 * R->f_nk, 1e6 * R->p_nk,
               R->tc / R->f_nk, R->tc / floor_nk);
        fflush(stdout);
      }
      double sp[8], rd[8], rf[8];
      for (int s = 0; s < nseeds; s++) {
        const double fl = rows[s].f_nk < rows[s].p_nk ? rows[s].f_nk : rows[s].p_nk;
        sp[s] = rows[s].td / rows[s].tc;
        rd[s] = rows[s].tc / rows[s].f_nk;
        rf[s] = rows[s].tc / fl;
      }
      summary *S = &sums[nsums++];
      S->family = families[f];
      S->n = n;
      S->speedup = median(sp, nseeds);
      S->r_dger = median(rd, nseeds);
      S->r_floor = median(rf, nseeds);
    }
  printf("\n### Summary (medians over the %d instances of each row)\n\n", nseeds);
  printf("| family | n | speedup vs dense (target >= 2x) | complan / dger(n x k) "
         "(target <= 1.5x) | complan / floor(n x k) |\n|---|---|---|---|---|\n");
  for (int i = 0; i < nsums; i++)
    printf("| %s | %d | %.1fx %s | %.2f %s | %.2f %s |\n", sums[i].family,
           sums[i].n, sums[i].speedup, sums[i].speedup >= 2.0 ? "met" : "MISSED",
           sums[i].r_dger, sums[i].r_dger <= 1.5 ? "met" : "MISSED",
           sums[i].r_floor, sums[i].r_floor <= 1.5 ? "met" : "MISSED");
  free(tc); free(td); free(f1); free(f2); free(f3); free(f4);
  free(M); free(q); free(z); free(w); free(A); free(x); free(y);
}

static void part2(const int *sizes, int nsizes, int nseeds, int nperturb,
                  cp_lemke_ws *ws, int cap) {
  const double eps[2] = {1e-3, 1e-2};
  const int reps = 5;
  double *M = malloc(sizeof(double) * cap * cap), *q = malloc(sizeof(double) * cap);
  double *z = malloc(sizeof(double) * cap), *w = malloc(sizeof(double) * cap);
  unsigned char *basis = malloc((size_t)cap);
  printf("\n## 2. Warm start on neighbouring contact problems\n\n");
  printf("Contact-like instance (nc = 6n/25 contacts, ns = n/20 sliding,\n"
         "nb = nc/2 + 1 bodies, mu 0.3, seeds 1..%d), solved cold; then b\n"
         "perturbed (cp_gen_contact_like_perturbed, relative eps, perturbation\n"
         "seeds 1..%d) and re-solved cold and warm (from the base solution's\n"
         "basis). Pivots: means over seeds x perturbations (restarts included).\n"
         "Times: per solve, median of %d interleaved repetitions, then mean.\n"
         "`solved` counts solves that ended solved (Lemke, even with restarts,\n"
         "does not solve every contact LCP).\n\n",
         nseeds, nperturb, reps);
  printf("| n | eps | solves | solved cold / warm | mean pivots cold | mean "
         "pivots warm | pivot ratio (target >= 5x) | mean time cold (us) | "
         "mean time warm (us) | time ratio |\n|---|---|---|---|---|---|---|---|---|---|\n");
  for (int si = 0; si < nsizes; si++) {
    const int n = sizes[si], nc = 6 * n / 25, ns = n / 20, nb = nc / 2 + 1;
    for (int e = 0; e < 2; e++) {
      long pc = 0, pw = 0;
      int cnt = 0, okc = 0, okw = 0;
      double tc = 0, tw = 0;
      for (int s = 1; s <= nseeds; s++) {
        cp_lcp_info info;
        cp_gen_contact_like(nc, ns, nb, 0.3, (uint64_t)s, M, q);
        if (cp_lemke_solve(ws, n, M, q, NULL, NULL, z, w, &info) != CP_LCP_SOLVED ||
            cp_lemke_basis(ws, basis) != 0)
          continue;
        for (int t = 1; t <= nperturb; t++) {
          cp_gen_contact_like_perturbed(nc, ns, nb, 0.3, (uint64_t)s, eps[e],
                                        (uint64_t)t, M, q);
          double a, c[8], wm[8];
          for (int r = 0; r < reps; r++) {
            a = now();
            cp_lcp_status sc = cp_lemke_solve(ws, n, M, q, NULL, NULL, z, w, &info);
            c[r] = now() - a;
            if (r == 0) { okc += sc == CP_LCP_SOLVED; pc += info.iterations; }
            a = now();
            cp_lcp_status sw = cp_lemke_solve(ws, n, M, q, NULL, basis, z, w, &info);
            wm[r] = now() - a;
            if (r == 0) { okw += sw == CP_LCP_SOLVED; pw += info.iterations; }
          }
          tc += median(c, reps);
          tw += median(wm, reps);
          cnt++;
        }
      }
      const double mc = cnt ? (double)pc / cnt : 0, mw = cnt ? (double)pw / cnt : 0;
      char ratio[48];
      if (mw > 0) snprintf(ratio, sizeof ratio, "%.0fx %s", mc / mw, mc / mw >= 5 ? "met" : "MISSED");
      else snprintf(ratio, sizeof ratio, "inf (0 pivots) met");
      printf("| %d | %.0e | %d | %d / %d | %.1f | %.2f | %s | %.0f | %.0f | %.1fx |\n",
             n, eps[e], cnt, okc, okw, mc, mw, ratio, cnt ? 1e6 * tc / cnt : 0,
             cnt ? 1e6 * tw / cnt : 0, tw > 0 ? tc / tw : 0.0);
      fflush(stdout);
    }
  }
  free(M); free(q); free(z); free(w); free(basis);
}

static void print_env(const char *when) {
  char buf[256] = "?";
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (!fgets(buf, sizeof buf, f)) buf[0] = '\0';
    fclose(f);
  }
  buf[strcspn(buf, "\n")] = '\0';
  printf("Load average (%s): %s\n\n", when, buf);
}

int main(int argc, char **argv) {
  int quick = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) quick = 1;
    else if (strcmp(argv[i], "--wall") == 0) bench_wall = 1;
    else {
      fprintf(stderr, "usage: bench_lcp [--quick] [--wall]\n");
      return 2;
    }
  }
  openblas_set_num_threads(1);
  static const int sizes_full[3] = {100, 200, 400}, sizes_quick[2] = {100, 200};
  const int *sizes = quick ? sizes_quick : sizes_full;
  const int nsizes = quick ? 2 : 3, nseeds = 3, nperturb = quick ? 3 : 5;
  if (quick) { MIN_REPS = 5; MIN_TIME = 0.05; }
  const int cap = sizes[nsizes - 1];
  char cpu[256] = "unknown", line[512];
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (f) {
    while (fgets(line, sizeof line, f))
      if (strncmp(line, "model name", 10) == 0) {
        const char *c = strchr(line, ':');
        if (c) snprintf(cpu, sizeof cpu, "%s", c + 2);
        cpu[strcspn(cpu, "\n")] = '\0';
        break;
      }
    fclose(f);
  }
  time_t now_t = time(NULL);
  char date[64];
  strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S %Z", localtime(&now_t));
  printf("# bench_lcp%s%s\n\n", quick ? " --quick" : "",
         bench_wall ? " --wall" : "");
  printf("CPU: %s; date: %s; clock: %s.\n", cpu, date,
         bench_wall ? "wall (CLOCK_MONOTONIC)"
                                        : "thread CPU time (CLOCK_THREAD_CPUTIME_ID)");
  printf("OpenBLAS: %s, core %s, threads 1.\n\n", openblas_get_config(),
         openblas_get_corename());
  print_env("start");
  printf("Parameters: sizes");
  for (int i = 0; i < nsizes; i++) printf(" %d", sizes[i]);
  printf("; instance seeds 1..%d; monotone = cp_gen_monotone(n, seed);\n"
         "contact = cp_gen_contact_like(nc = 6n/25, ns = n/20, nb = nc/2 + 1, "
         "mu = 0.3, seed) (LCP size exactly n);\n"
         "complan options: cp_lemke_defaults() (cover e, lexicographic, "
         "restarts 3, seed 1); repetitions per timing: >= %d and >= %.2f s "
         "(max %d), median.\n\n",
         nseeds, MIN_REPS, MIN_TIME, MAX_REPS);
  cp_lemke_ws *ws = cp_lemke_ws_create(cap);
  cp_dense_lemke *dl = cp_dense_lemke_create(cap);
  if (!ws || !dl) return 1;
  part1(sizes, nsizes, nseeds, ws, dl, cap);
  part2(sizes, nsizes, nseeds, nperturb, ws, cap);
  printf("\n");
  print_env("end");
  cp_lemke_ws_destroy(ws);
  cp_dense_lemke_destroy(dl);
  return 0;
}
