/* Where a second thread's extra CPU goes (issue 27): on these 2-vCPU
 * machines, 2 threads on grasp_lift spent about 1/0.75 of one thread's CPU
 * seconds for the same tree. Two measurements, both in CPU seconds of the
 * threads concerned (so that they mean something on a loaded machine too):
 *
 * 1. The machine alone, no complan: fixed work (a kernel) timed on one
 *    thread, then on two threads at once, each its own copy. The ratio
 *    "together / alone" of CPU seconds per kernel is what running on both
 *    vCPUs costs any code: below 1.05 the vCPUs do not slow each other,
 *    above it they share something (the host's core, its caches, its
 *    clock boost). Kernels: "fma" (independent multiply-adds, bound by
 *    the core's arithmetic), "chase-4M" (a random pointer chase in 4 MB,
 *    bound by the caches), "chase-256M" (in 256 MB, by memory).
 * 2. The search: a task searched with 1 and 2 threads, and with 1 thread
 *    beside a second thread that multiplies matrices or polls (same tree: the
 *    node rows' digest is compared), its CPU seconds per expansion in the
 *    expansions (cp_plan_world_seconds: the threads' CPU inside jobs) and
 *    in the whole process (the expansions, the calling thread's search,
 *    merge and store, and any polling of a waiting thread; whether the
 *    pool polls is decided from the load when it starts, planner/plan/
 *    spin.h: below twice the cores).
 *
 * Usage (from the source root, native release build):
 *   bench_cpu_share [ROUNDS [NODES]]      (default 3 rounds, 5000 nodes)
 * Results: experiments/results/parallel.md. */
#include <pthread.h>
#include <sqlite3.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "experiments/bench_search.h"
#include "models/hash.h"

enum { MAX_ROUNDS = 16 };

void openblas_set_num_threads(int n);

static double loadavg(void) {
  double l = -1;
  FILE *f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf", &l) != 1) l = -1;
    fclose(f);
  }
  return l;
}

/* ---- 1. the machine ---- */

typedef struct kernel_job {
  int kind;          /* 0 fma, 1 chase-4M, 2 chase-256M, 3 matmul-64 */
  uint32_t *ring;    /* the chase's permutation (a single cycle) */
  size_t n;
  pthread_barrier_t *start;
  double cpu;        /* out: thread CPU seconds */
  double sink;       /* out: keeps the work alive */
} kernel_job;

/* C += A B for 64 x 64 matrices, `reps` times (in the caches, bound by the
 * core's arithmetic throughput like the solver's dense LU and products). */
static double matmul64(long reps) {
  enum { N = 64 };
  static _Thread_local double a[N * N], b[N * N], c[N * N];
  for (int i = 0; i < N * N; ++i) {
    a[i] = 1e-3 * (i % 17);
    b[i] = 1e-3 * (i % 13);
    c[i] = 0;
  }
  for (long r = 0; r < reps; ++r)
    for (int i = 0; i < N; ++i)
      for (int k = 0; k < N; ++k) {
        double x = a[i * N + k];
        for (int j = 0; j < N; ++j) c[i * N + j] += x * b[k * N + j];
      }
  return c[N + 1];
}

/* Set to stop the noise thread of the search section. */
static volatile int noise_stop;

/* The noise thread beside a 1-thread search: matrix products, or polling
 * as the pool's waiting threads do (planner/plan/spin.h: a pause
 * instruction per poll, the clock every 64). */
typedef struct noise {
  int polling;
  double sink;
} noise;

static void *noise_run(void *arg) {
  noise *n = arg;
  for (unsigned k = 1; !noise_stop; ++k) {
    if (!n->polling) {
      n->sink += matmul64(10);
      continue;
    }
    if (!(k & 63)) n->sink += cp_clock_now();
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
  }
  return NULL;
}

static void *kernel_run(void *arg) {
  kernel_job *j = arg;
  if (j->start) pthread_barrier_wait(j->start);
  double t0 = bench_now();
  if (j->kind == 3) {
    j->sink = matmul64(20000);
  } else if (j->kind == 0) {
    double a[16];
    for (int k = 0; k < 16; ++k) a[k] = 1.0 + 1e-9 * k;
    for (long i = 0; i < 400000000L; ++i)
      for (int k = 0; k < 16; ++k) a[k] = a[k] * 0.9999999 + 1e-7;
    double s = 0;
    for (int k = 0; k < 16; ++k) s += a[k];
    j->sink = s;
  } else {
    uint32_t p = 0;
    long steps = j->kind == 1 ? 10000000L : 2000000L;
    for (long i = 0; i < steps; ++i) p = j->ring[p];
    j->sink = p;
  }
  j->cpu = bench_now() - t0;
  return NULL;
}

/* A random single cycle over n slots (Sattolo's shuffle). */
static uint32_t *ring_new(size_t n, uint64_t seed) {
  uint32_t *r = malloc(n * sizeof *r);
  if (!r) return NULL;
  for (size_t i = 0; i < n; ++i) r[i] = (uint32_t)i;
  for (size_t i = n - 1; i > 0; --i) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    size_t k = (size_t)((seed >> 33) % i);
    uint32_t t = r[i];
    r[i] = r[k];
    r[k] = t;
  }
  return r;
}

/* CPU s of one kernel alone (*alone) and the mean of two at once. */
static int kernel_pair(int kind, double *alone, double *together) {
  size_t n = kind == 0 || kind == 3 ? 0 : kind == 1 ? (4u << 20) / 4 : (256u << 20) / 4;
  kernel_job j[2];
  memset(j, 0, sizeof j);
  for (int t = 0; t < 2; ++t) {
    j[t].kind = kind;
    j[t].n = n;
    if (n && !(j[t].ring = ring_new(n, 7 + (uint64_t)t))) return -1;
  }
  kernel_run(&j[0]);
  *alone = j[0].cpu;
  pthread_barrier_t b;
  pthread_barrier_init(&b, NULL, 2);
  pthread_t th[2];
  for (int t = 0; t < 2; ++t) {
    j[t].start = &b;
    pthread_create(&th[t], NULL, kernel_run, &j[t]);
  }
  for (int t = 0; t < 2; ++t) pthread_join(th[t], NULL);
  pthread_barrier_destroy(&b);
  *together = 0.5 * (j[0].cpu + j[1].cpu);
  for (int t = 0; t < 2; ++t) free(j[t].ring);
  return 0;
}

/* ---- 2. the search ---- */

typedef struct search_out {
  double sim, caller, pcpu, load;
  long expansions, nodes;
  uint64_t digest;
} search_out;

static int search_once(const cp_task *task, const bench_spec *sp, int threads,
                       search_out *o) {
  char db[64];
  cp_plan_result r;
  o->load = loadavg();
  double p0 = bench_process_cpu();
  if (bench_temp_db(db, "bench_cpu_share") ||
      bench_search_run("bench_cpu_share", task, sp, threads, db, &r, &o->caller,
                       &o->sim) ||
      (o->pcpu = bench_process_cpu() - p0, bench_run_digest(db, &o->digest, &o->nodes))) {
    bench_remove_db(db);
    return -1;
  }
  o->expansions = r.stats.expansions;
  bench_remove_db(db);
  return 0;
}

int main(int argc, char **argv) {
  const char *usage = "bench_cpu_share [ROUNDS [NODES]]";
  int rounds = (int)bench_positive_arg(argc, argv, 1, 3, usage);
  long nodes = (long)bench_positive_arg(argc, argv, 2, 5000, usage);
  if (rounds > MAX_ROUNDS) rounds = MAX_ROUNDS;
  openblas_set_num_threads(1); /* as complan plan does (cli.c) */
  printf("bench_cpu_share: %d rounds, load %.1f at the start, %ld cores\n\n",
         rounds, loadavg(), sysconf(_SC_NPROCESSORS_ONLN));

  static const char *kname[] = {"fma", "chase-4M", "chase-256M", "matmul-64"};
  printf("| kernel | CPU s alone | CPU s each, two at once | together / alone"
         " (median [least-most]) |\n|---|---|---|---|\n");
  for (int k = 0; k < 4; ++k) {
    double a[MAX_ROUNDS], t[MAX_ROUNDS], q[MAX_ROUNDS];
    for (int i = 0; i < rounds; ++i) {
      if (kernel_pair(k, &a[i], &t[i])) return 1;
      q[i] = t[i] / a[i];
    }
    double ma = bench_median(a, rounds), mt = bench_median(t, rounds);
    double lo = q[0], hi = q[0];
    for (int i = 1; i < rounds; ++i) {
      lo = q[i] < lo ? q[i] : lo;
      hi = q[i] > hi ? q[i] : hi;
    }
    printf("| %s | %.3f | %.3f | %.2f [%.2f-%.2f] |\n", kname[k], ma, mt,
           bench_median(q, rounds), lo, hi);
    fflush(stdout);
  }

  bench_spec sp = {"planner/tasks/grasp_lift.json", "sst", nodes, 16};
  cp_task task;
  cp_error err;
  if (cp_task_load(sp.task, &task, &err)) {
    fprintf(stderr, "bench_cpu_share: %s\n", err.msg);
    return 1;
  }
  printf("\n%s, %s, batch %d, %ld nodes; CPU ms per expansion\n\n", sp.task,
         sp.method, sp.batch, nodes);
  printf("| round | run | load | pool polls | in expansions | calling"
         " thread | process | same tree |\n|---|---|---|---|---|---|---|---|\n");
  static const char *rname[] = {"1 thread", "2 threads",
                                "1 thread, matmul-64 beside",
                                "1 thread, a poller beside"};
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  int bad = 0;
  for (int i = 0; i < rounds; ++i) {
    search_out o[4];
    for (int t = 0; t < 4; ++t) {
      /* Runs 3 and 4: one search thread while a second thread of this
       * process multiplies matrices (the other vCPU busy with arithmetic)
       * or polls (busy the way a waiting pool thread is). */
      pthread_t th;
      noise nz = {t == 3, 0};
      noise_stop = 0;
      if (t >= 2) pthread_create(&th, NULL, noise_run, &nz);
      int rc = search_once(&task, &sp, t == 1 ? 2 : 1, &o[t]);
      if (t >= 2) {
        noise_stop = 1;
        pthread_join(th, NULL);
      }
      if (rc) {
        cp_task_free(&task);
        return 1;
      }
      double e = 1e3 / (double)o[t].expansions;
      int same = o[t].digest == o[0].digest;
      char proc[32] = "-"; /* runs 3, 4: it counts the noise thread too */
      if (t < 2) snprintf(proc, sizeof proc, "%.3f", o[t].pcpu * e);
      printf("| %d | %s | %.1f | %s | %.3f | %.3f | %s | %s |\n", i + 1,
             rname[t], o[t].load,
             t != 1 ? "-" : o[t].load < 2.0 * (double)cores ? "yes" : "no",
             o[t].sim * e, o[t].caller * e, proc,
             t == 0 ? "-" : same ? "yes" : "NO");
      bad |= !same;
      fflush(stdout);
    }
  }
  cp_task_free(&task);
  return bad;
}
