/* complan's Lemke against its peers (issue 13): Siconos Numerics'
 * lexicographic Lemke (lcp_lexicolemke, from the Debian package; optional:
 * built only when meson finds it) and a plain dense-tableau Lemke
 * (experiments/dense_lemke.c), side by side in one run on
 *   - the Siconos test LCPs bundled in tests/data/siconos,
 *   - the paper study's LCPs (experiments/results/paper/data),
 *   - resting stacks of 1..30 boxes (0.2 m cubes, 4 corner contacts each).
 * For every instance and solver: solved or not, checked here independently
 * (w = M z + q recomputed; z, w >= -tol, |z_i w_i| <= tol, tol = 1e-6
 * max(1, |q|_inf)), the pivots of the first start, and the median thread CPU
 * time of repeated solves. Time ratios complan / peer are taken per
 * instance (both solved) and summarised by their median per size bin.
 * Run from the source root: ./build/experiments/bench_peers [--quick]
 * [--only FAMILY] (siconos, paper or stack: that family alone).
 * Instruction counts: `bench_peers --count SOLVER REPS FILE` only solves FILE
 * REPS times with solver 0 (complan), 1 (dense) or 2 (Siconos; exit status
 * 1 when the first answer fails the independent check), for a run
 * under callgrind; experiments/peers_ir.sh takes the difference of two such
 * runs (instructions per solve, start-up and parsing cancelled).
 * BENCH_PEERS_FIRST_TIME=1 with --count prints the thread CPU time of the
 * process's first solve in microseconds (cold caches, the dynamic linker's
 * first bindings, bench_peers' independent check included).
 * BENCH_SICONOS_DRIVER=1 in the environment calls Siconos through its
 * public entry point, linearComplementarity_driver (its trivial-case test,
 * the solver, its error computation), instead of lcp_lexicolemke alone.
 * BENCH_PEERS_FRESH=1 times the convention of a one-off user (`lcp solve`,
 * a cold restart): every solve makes and releases everything it needs, for
 * every solver alike -- z and w (malloc/free); complan: cp_lemke_ws_create(n),
 * cp_lemke_solve with default options, cp_lemke_ws_destroy; the tableau:
 * cp_dense_lemke_create(n) and its destroy; Siconos: NM_create_from_data (M
 * is not copied), a LinearComplementarityProblem (malloc),
 * solver_options_create(SICONOS_LCP_LEMKE), linearComplementarity_driver,
 * solver_options_delete and free, NM_free, free (implies the driver). Without it the
 * workspaces, z, w and Siconos' options are made once and reused. */
#define _DEFAULT_SOURCE 1 /* getloadavg */
#include <cblas.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "contact/lcpio.h"
#include "contact/lemke.h"
#include "experiments/bench_util.h"
#include "experiments/dense_lemke.h"
#include "experiments/stacklcp.h"
#include "models/error.h"

#ifdef HAVE_SICONOS
#include <LCP_Solvers.h>
#include <LinearComplementarityProblem.h>
#include <NonSmoothDrivers.h>
#include <NumericsMatrix.h>
#include <SolverOptions.h>
#include <lcp_cst.h>
#define NSOLVERS 3
#else
#define NSOLVERS 2
#endif

/* bench_median of nothing is NaN here (a bin without ratios). */
static double median(double *v, int n) { return n ? bench_median(v, n) : NAN; }

typedef struct inst {
  char name[1024];
  const char *family;
  int n;
  double *M, *q;
} inst;

static int ninst, capinst;
static inst *insts;

static void add(const char *family, const char *name, int n, double *M, double *q) {
  if (ninst == capinst) {
    capinst = capinst ? 2 * capinst : 64;
    insts = realloc(insts, sizeof *insts * (size_t)capinst);
  }
  inst *x = &insts[ninst++];
  snprintf(x->name, sizeof x->name, "%s", name);
  x->family = family;
  x->n = n;
  x->M = M;
  x->q = q;
}

static int cmpstr(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every file under dir whose name ends with suffix (sorted), recursively one
 * level deep when `sub`. */
static void add_files(const char *family, const char *dir, const char *suffix, int sub) {
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "bench_peers: cannot open %s (run from the source root)\n", dir);
    exit(2);
  }
  char *names[4096];
  int k = 0;
  struct dirent *e;
  while ((e = readdir(d)) && k < 4096) {
    if (e->d_name[0] == '.') continue;
    names[k++] = strdup(e->d_name);
  }
  closedir(d);
  qsort(names, (size_t)k, sizeof *names, cmpstr);
  for (int i = 0; i < k; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    size_t ln = strlen(names[i]), ls = strlen(suffix);
    if (sub) {
      DIR *t = opendir(path);
      if (t) {
        closedir(t);
        add_files(family, path, suffix, 0);
      }
    } else if (ln > ls && !strcmp(names[i] + ln - ls, suffix)) {
      size_t len;
      cp_error err;
      char *text = cp_read_file(path, &len, &err);
      cp_lcp l;
      if (text && cp_lcp_parse(text, len, &l, &err) == 0) {
        const char *p = strstr(path, "data/");
        add(family, p ? p + 5 : path, l.n, l.M, l.q);
        free(l.name);
      }
      free(text);
    }
    free(names[i]);
  }
}

/* Independent check of an answer. */
static int check(int n, const double *M, const double *q, const double *z) {
  double s = 1.0;
  for (int i = 0; i < n; i++) s = fmax(s, fabs(q[i]));
  const double tol = 1e-6 * s;
  for (int i = 0; i < n; i++) {
    double w = q[i];
    for (int j = 0; j < n; j++) w += M[i + (size_t)j * n] * z[j];
    if (!isfinite(z[i]) || !isfinite(w) || z[i] < -tol || w < -tol ||
        fabs(z[i] * w) > tol * fmax(1.0, fabs(z[i]) + fabs(w)))
      return 0;
  }
  return 1;
}

typedef struct workspaces {
  cp_lemke_ws *lw;
  cp_dense_lemke *dl;
  double *z, *w;
#ifdef HAVE_SICONOS
  SolverOptions *so;
#endif
  int driver; /* BENCH_SICONOS_DRIVER=1: linearComplementarity_driver */
  int fresh;  /* BENCH_PEERS_FRESH=1: everything made per solve */
} workspaces;

/* BENCH_PEERS_FRESH=1: the per-problem convention (header comment). */
static int peers_fresh(void) {
  const char *e = getenv("BENCH_PEERS_FRESH");
  return e && e[0] == '1';
}

#ifdef HAVE_SICONOS
/* BENCH_SICONOS_DRIVER=1: Siconos through its public driver. */
static int siconos_driver(void) {
  const char *e = getenv("BENCH_SICONOS_DRIVER");
  return e && e[0] == '1';
}
#endif

/* One solve by solver s; returns the pivots of the first start, -1 when not
 * solved (status other than solved, or, with `chk`, the independent check
 * fails; the timed repetitions leave the check out). */
static int solve_fresh(workspaces *W, int s, const inst *x, int chk);

static int solve_once(workspaces *W, int s, const inst *x, int chk) {
  if (W->fresh) return solve_fresh(W, s, x, chk);
  const int n = x->n;
  int piv = -1;
  if (s == 0) {
    cp_lcp_info info;
    if (cp_lemke_solve(W->lw, n, x->M, x->q, NULL, NULL, W->z, W->w, &info) ==
            CP_LCP_SOLVED &&
        info.starts == 1)
      piv = info.first_start_iterations;
    else if (info.status == CP_LCP_SOLVED)
      piv = -2 - info.first_start_iterations; /* solved after a restart */
  } else if (s == 1) {
    int p;
    double ka;
    if (cp_dense_lemke_solve(W->dl, n, x->M, x->q, 0, W->z, W->w, &p, &ka) ==
        CP_LCP_SOLVED)
      piv = p;
  }
#ifdef HAVE_SICONOS
  else {
    NumericsMatrix *Mn = NM_create_from_data(NM_DENSE, n, n, x->M);
    LinearComplementarityProblem prob = {n, Mn, x->q};
    int info = 0;
    memset(W->z, 0, sizeof(double) * (size_t)n);
    W->so->iparam[SICONOS_IPARAM_MAX_ITER] = 50 * (n + 1) + 100;
    if (W->driver)
      info = linearComplementarity_driver(&prob, W->z, W->w, W->so);
    else
      lcp_lexicolemke(&prob, W->z, W->w, &info, W->so);
    if (info == 0) piv = W->so->iparam[SICONOS_IPARAM_ITER_DONE];
    Mn->matrix0 = NULL; /* the data are ours */
    NM_free(Mn); /* frees the struct too */
  }
#endif
  if (piv == -1) return -1;
  if (chk && !check(n, x->M, x->q, W->z)) return -1;
  return piv;
}

/* One solve as a one-off user makes it (BENCH_PEERS_FRESH=1): every object
 * the solver needs is made for this problem and released after it; results
 * as solve_once. */
static int solve_fresh(workspaces *W, int s, const inst *x, int chk) {
  const int n = x->n;
  int piv = -1;
  double *z = malloc(sizeof(double) * (size_t)n), *w = malloc(sizeof(double) * (size_t)n);
  if (!z || !w) {
    free(z);
    free(w);
    return -1;
  }
  (void)W;
  if (s == 0) {
    cp_lemke_ws *lw = cp_lemke_ws_create(n);
    cp_lcp_info info;
    if (lw && cp_lemke_solve(lw, n, x->M, x->q, NULL, NULL, z, w, &info) == CP_LCP_SOLVED)
      piv = info.starts == 1 ? info.first_start_iterations : -2 - info.first_start_iterations;
    cp_lemke_ws_destroy(lw);
  } else if (s == 1) {
    cp_dense_lemke *dl = cp_dense_lemke_create(n);
    int p;
    double ka;
    if (dl && cp_dense_lemke_solve(dl, n, x->M, x->q, 0, z, w, &p, &ka) == CP_LCP_SOLVED) piv = p;
    cp_dense_lemke_destroy(dl);
  }
#ifdef HAVE_SICONOS
  else {
    NumericsMatrix *Mn = NM_create_from_data(NM_DENSE, n, n, x->M);
    LinearComplementarityProblem *prob = malloc(sizeof *prob);
    SolverOptions *so = solver_options_create(SICONOS_LCP_LEMKE);
    if (Mn && prob && so) {
      prob->size = n;
      prob->M = Mn;
      prob->q = x->q;
      memset(z, 0, sizeof(double) * (size_t)n);
      so->iparam[SICONOS_IPARAM_MAX_ITER] = 50 * (n + 1) + 100;
      if (linearComplementarity_driver(prob, z, w, so) == 0) piv = so->iparam[SICONOS_IPARAM_ITER_DONE];
    }
    if (so) solver_options_delete(so); /* its arrays; Siconos 4.4 leaves the struct */
    free(so);
    free(prob);
    if (Mn) {
      Mn->matrix0 = NULL; /* the data are the caller's */
      NM_free(Mn);
    }
  }
#endif
  if (piv != -1 && chk && !check(n, x->M, x->q, z)) piv = -1;
  free(z);
  free(w);
  return piv;
}

/* --count SOLVER REPS FILE: REPS solves of FILE by one solver, nothing
 * printed (the instructions are counted from outside, by callgrind). */
static int count_mode(const char *solver, const char *reps, const char *file) {
  const int s = atoi(solver), r = atoi(reps);
  size_t len;
  cp_error err;
  cp_lcp l;
  if (s < 0 || s >= NSOLVERS || r < 0) {
    fprintf(stderr, "bench_peers --count: SOLVER must be 0..%d and REPS >= 0\n", NSOLVERS - 1);
    return 2;
  }
  char *text = cp_read_file(file, &len, &err);
  if (!text || cp_lcp_parse(text, len, &l, &err)) {
    fprintf(stderr, "bench_peers --count: %s: %s%s%s\n", file, err.where, err.where[0] ? ": " : "",
            err.msg);
    free(text);
    return 2;
  }
  free(text);
  inst x = {.family = "count", .n = l.n, .M = l.M, .q = l.q};
  workspaces W = {cp_lemke_ws_create(l.n), cp_dense_lemke_create(l.n),
                  malloc(sizeof(double) * (size_t)l.n), malloc(sizeof(double) * (size_t)l.n)
#ifdef HAVE_SICONOS
                  , solver_options_create(SICONOS_LCP_LEMKE)
#endif
                  , 0, peers_fresh()};
#ifdef HAVE_SICONOS
  W.driver = siconos_driver();
#endif
  int ok = 1;
  const char *ft = getenv("BENCH_PEERS_FIRST_TIME");
  for (int k = 0; k < r; k++) {
    const double a = bench_now();
    ok &= solve_once(&W, s, &x, k == 0) != -1; /* first: checked */
    if (k == 0 && ft && ft[0] == '1') printf("%.3f\n", (bench_now() - a) * 1e6);
  }
  cp_lemke_ws_destroy(W.lw);
  cp_dense_lemke_destroy(W.dl);
  free(W.z);
  free(W.w);
#ifdef HAVE_SICONOS
  solver_options_delete(W.so);
  free(W.so);
#endif
  cp_lcp_free(&l);
  return ok ? 0 : 1;
}

static int bin_of(int n) { return n <= 10 ? 0 : n <= 40 ? 1 : n <= 150 ? 2 : n <= 500 ? 3 : 4; }
static const char *bin_names[5] = {"n <= 10", "11-40", "41-150", "151-500", "> 500"};

int main(int argc, char **argv) {
  openblas_set_num_threads(1);
  int quick = 0;
  const char *only = NULL;
  if (argc == 5 && !strcmp(argv[1], "--count")) return count_mode(argv[2], argv[3], argv[4]);
  for (int a = 1; a < argc; a++) {
    if (!strcmp(argv[a], "--quick")) quick = 1;
    else if (!strcmp(argv[a], "--only") && a + 1 < argc) only = argv[++a];
    else {
      fprintf(stderr, "usage: bench_peers [--quick] [--only siconos|paper|stack]\n"
                      "       bench_peers --count SOLVER(0 complan, 1 dense, 2 siconos) REPS FILE\n");
      return 2;
    }
  }
  const double budget = quick ? 2e-3 : 10e-3; /* seconds per instance and solver */
  if (!only || !strcmp(only, "siconos")) add_files("siconos", "tests/data/siconos", ".dat", 0);
  if (!only || !strcmp(only, "paper"))
    add_files("paper", "experiments/results/paper/data", ".lcp.json", 1);
  for (int b = 1; b <= 30 && (!only || !strcmp(only, "stack")); b++) {
    double *M, *q;
    const int n = cp_resting_stack_lcp(b, 0.2, &M, &q);
    char name[32];
    snprintf(name, sizeof name, "resting stack %d", b);
    if (n > 0) add("stack", name, n, M, q);
  }
  int nmax = 1;
  for (int i = 0; i < ninst; i++) nmax = insts[i].n > nmax ? insts[i].n : nmax;
  workspaces W;
  W.lw = cp_lemke_ws_create(nmax);
  W.dl = cp_dense_lemke_create(nmax);
  W.z = malloc(sizeof(double) * (size_t)nmax);
  W.w = malloc(sizeof(double) * (size_t)nmax);
  W.driver = 0;
  W.fresh = peers_fresh();
#ifdef HAVE_SICONOS
  W.so = solver_options_create(SICONOS_LCP_LEMKE);
  W.driver = siconos_driver();
#endif
  FILE *tty = isatty(2) ? stderr : NULL;

  double load0 = NAN;
  getloadavg(&load0, 1);
  time_t tt = time(NULL);
  char date[64];
  strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", gmtime(&tt));
  printf("# bench_peers: complan's Lemke vs %s the dense tableau\n\n",
         NSOLVERS == 3 ? (W.driver || W.fresh ? "Siconos Numerics' linearComplementarity_driver (lexicolemke) and"
                                   : "Siconos Numerics' lexicolemke and")
                       : "(Siconos not found at build time)");
  if (W.fresh)
    printf("BENCH_PEERS_FRESH=1: per problem, every solver makes and releases its workspace, z, w "
           "(Siconos: matrix, problem, options; through its driver) inside the timed solve.\n\n");
  printf("date: %s; clock: thread CPU time; per instance and solver: repeated solves for >= %.0f ms "
         "(at least 3; batches of >= 20 us, the solvers interleaved batch by batch, the independent check outside the timing), median. Instances: %d.\n\n", date, budget * 1e3, ninst);

  int solved[3][5] = {{0}}, count[5] = {0}, first[3][5] = {{0}};
  double *ratio[3][5];
  int nratio[3][5] = {{0}};
  for (int s = 0; s < 3; s++)
    for (int b = 0; b < 5; b++) ratio[s][b] = malloc(sizeof(double) * (size_t)ninst);
  double *tm[3];
  for (int s = 0; s < 3; s++) tm[s] = malloc(sizeof(double) * 100000);
  printf("## Per instance\n\npivots: first start (complan: `+r` = solved only after restarts; `-` not solved); "
         "times in microseconds.\n\n| instance | n | pivots complan | pivots dense | pivots siconos | "
         "t complan | t dense | t siconos | complan/dense | complan/siconos |\n|---|---|---|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < ninst; i++) {
    const inst *x = &insts[i];
    const int b = bin_of(x->n);
    count[b]++;
    int piv[3] = {-1, -1, -1}, batch[3] = {1, 1, 1}, reps[3] = {0, 0, 0};
    double t[3] = {NAN, NAN, NAN}, tot[3] = {0.0, 0.0, 0.0};
    /* The checked solve; an unsolved instance enters no ratio and its one
     * (often long, pivot cap) run is its time. */
    for (int s = 0; s < NSOLVERS; s++) {
      const double a = bench_now();
      piv[s] = solve_once(&W, s, x, 1);
      t[s] = bench_now() - a;
    }
    /* Solves of a few hundred nanoseconds are timed in batches: the
     * thread CPU clock is a system call costing about a microsecond,
     * which timed alone would be most of such a solve's measured time
     * and pull every ratio towards 1. The batch doubles until one lasts
     * >= 20 us, measured on warm repetitions (the first, checked solve
     * pays cold caches and page faults: sized from it, the batches of
     * the smallest problems came out as single solves). */
    for (int s = 0; s < NSOLVERS; s++) {
      if (piv[s] == -1) continue;
      for (;;) {
        const double a = bench_now();
        for (int k = 0; k < batch[s]; k++) solve_once(&W, s, x, 0);
        if (bench_now() - a >= 20e-6 || batch[s] >= 65536) break;
        batch[s] *= 2;
      }
    }
    /* Interleaved rounds: one batch of each solver in turn, so that the
     * machine's load (shared, it changes by the second) weighs on all of
     * them alike; each solver's median over its batches. */
    for (int more = 1; more;) {
      more = 0;
      for (int s = 0; s < NSOLVERS; s++) {
        if (piv[s] == -1 || (reps[s] >= 3 && tot[s] >= budget) || reps[s] >= 100000) continue;
        const double a = bench_now();
        for (int k = 0; k < batch[s]; k++) solve_once(&W, s, x, 0);
        const double e = bench_now() - a;
        tm[s][reps[s]++] = e / batch[s];
        tot[s] += e;
        more = 1;
      }
    }
    for (int s = 0; s < NSOLVERS; s++) {
      if (reps[s] > 0) t[s] = median(tm[s], reps[s]);
      if (piv[s] >= 0 || piv[s] <= -2) solved[s][b]++;
      if (piv[s] >= 0) first[s][b]++;
    }
    char pc[3][24];
    for (int s = 0; s < 3; s++) {
      if (s >= NSOLVERS) snprintf(pc[s], sizeof pc[s], "n/a");
      else if (piv[s] >= 0) snprintf(pc[s], sizeof pc[s], "%d", piv[s]);
      else if (piv[s] <= -2) snprintf(pc[s], sizeof pc[s], "%d+r", -2 - piv[s]);
      else snprintf(pc[s], sizeof pc[s], "-");
    }
    double r1 = NAN, r2 = NAN;
    const int ok0 = piv[0] != -1;
    if (ok0 && piv[1] != -1) ratio[1][b][nratio[1][b]++] = r1 = t[0] / t[1];
    if (NSOLVERS == 3 && ok0 && piv[2] != -1) ratio[2][b][nratio[2][b]++] = r2 = t[0] / t[2];
    printf("| %s | %d | %s | %s | %s | %.2f | %.2f | %.2f | %.2f | %.2f |\n", x->name, x->n, pc[0],
           pc[1], pc[2], t[0] * 1e6, t[1] * 1e6, t[2] * 1e6, r1, r2);
    if (tty) fprintf(tty, "\rbench_peers: %d/%d instances", i + 1, ninst);
  }
  if (tty) fprintf(tty, "\n");
  printf("\n## Summary by size bin\n\nsolved: answers that pass the independent check (any start for complan; "
         "first-start count in parentheses). Ratios: median over the instances both solvers solved of "
         "complan's time / the peer's time (below 1: complan faster).\n\n"
         "| size bin | instances | solved complan (first start) | solved dense | solved siconos | "
         "median complan/dense | median complan/siconos |\n|---|---|---|---|---|---|---|\n");
  for (int b = 0; b < 5; b++) {
    if (!count[b]) continue;
    char sic[32] = "n/a";
    if (NSOLVERS == 3) snprintf(sic, sizeof sic, "%d", solved[2][b]);
    printf("| %s | %d | %d (%d) | %d | %s | %.2f (%d) | ", bin_names[b], count[b], solved[0][b],
           first[0][b], solved[1][b], sic, median(ratio[1][b], nratio[1][b]), nratio[1][b]);
    if (NSOLVERS == 3) printf("%.2f (%d) |\n", median(ratio[2][b], nratio[2][b]), nratio[2][b]);
    else printf("n/a |\n");
  }
  /* Issue 24's targets are stated for n <= 40: the first two bins together. */
  double *r40 = malloc(sizeof(double) * (size_t)(ninst + 1));
  printf("\nn <= 40 (issue 24's targets <= 1.0 and <= 0.5): median complan/dense ");
  for (int s = 1; s < NSOLVERS; s++) {
    int m = 0;
    for (int b = 0; b < 2; b++)
      for (int k = 0; k < nratio[s][b]; k++) r40[m++] = ratio[s][b][k];
    printf(s == 1 ? "%.2f (%d)" : ", complan/siconos %.2f (%d)", median(r40, m), m);
  }
  double la[3] = {NAN, NAN, NAN};
  getloadavg(la, 3);
  printf("; load average at the end %.1f (at the start %.1f).\n", la[0], load0);
  free(r40);
  for (int s = 0; s < 3; s++) {
    free(tm[s]);
    for (int b = 0; b < 5; b++) free(ratio[s][b]);
  }
  cp_lemke_ws_destroy(W.lw);
  cp_dense_lemke_destroy(W.dl);
  free(W.z);
  free(W.w);
#ifdef HAVE_SICONOS
  solver_options_delete(W.so);
  free(W.so);
#endif
  return 0;
}
