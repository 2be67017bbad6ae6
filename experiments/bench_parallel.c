/* bench_parallel: a search's expansions per second on 1 and 2 threads and
 * on 1, 2 and 4 MPI ranks (issue 27), with the answers checked equal in the
 * same run, the bytes that travel per expansion, and a model of the
 * efficiency at 16 and 64 ranks built from the measured numbers.
 *
 * For each task: the task with search.batch B is written to a temporary
 * file next to the original (so its relative paths hold); the threads runs
 * are made in this process (cp_plan_search on a world with
 * cp_plan_world_set_threads), the ranks runs by `mpirun --oversubscribe
 * --bind-to none -n R complan plan TMP --mpi --threads 1 --json` (stdout:
 * the run; stderr: the `complan: mpi:` traffic line; no binding: on a
 * shared machine a rank pinned to a busy core cannot move). Every run's nodes (every column the
 * tests compare: tests/planner/synth.c) are hashed; "same" means the hash,
 * the node count and the plan cost equal the first 1-thread run's.
 * Expansions per second are wall-clock over the search's own seconds
 * (ranks: rank 0's search, after MPI's start, the task's load and the
 * workers' hellos; that start-up is reported apart, as the wall and CPU
 * seconds of the same mpirun with a 1-node limit), medians
 * of REPEATS rounds (default 5; every configuration once a round, the
 * order reversed every other round); beside them the median and spread of
 * each round's ratio to its 1-thread run, how many rounds reached the
 * target (2 threads 1.8x, 2 ranks 1.7x), the load-independent serial
 * share of the 1-thread run (thread CPU) and Amdahl's bound from it for
 * 2, 16 and 64 workers, the CPU per expansion of all threads or
 * processes against one worker's (CPU efficiency) and the CPU seconds per
 * wall second (docs/parallel.md, "Measured: threads and ranks side by
 * side"). The runs first measure what a user gets by default: pipelined
 * batches (search.pipeline not given: rrt and sst at batch B >= 4 pipeline
 * halves of B / 2 since session 27, the row says 2xH); then, for
 * comparison, plain batches
 * (search.pipeline false; 1 and 2 threads, 1 and 2 ranks): another tree,
 * so their "same", ratios and efficiency are against the plain 1-thread
 * (or 1-rank) run. On a shared machine the speeds say what the load allowed. Load-independent: the 1-thread run's CPU time per expansion and
 * its serial share (CPU outside the simulations: search, merge, store) and
 * the bytes per expansion, which feed the model (printed with its
 * assumptions). The control (session 30): in every round, next to each
 * mode's 1-thread run, two 1-thread searches of the same task started
 * together as two `complan plan TMP --threads 1 --json` processes (each
 * its own database, the same node limit), sharing nothing but the
 * machine; their summed expansions per second over the lone 1-thread
 * run's is what the machine gives two workers that never coordinate, the
 * ceiling of that round's 2-thread and 2-rank rows, which a table of its
 * own divides by it (the code's parallel efficiency with the machine's
 * share taken out), beside each control run's CPU per expansion over the
 * lone run's (the machine's per-core slowdown when both cores are busy)
 * and how much of their searches overlapped. Last, a benchmark's runs over 3 ranks: the bytes of a
 * run's store sent back, at two node limits (fixed and per node).
 *
 * First, load-independent, where the time goes: a 1-thread run of each
 * task at batches 4, 16 and 32 profiled with the thread's CPU clock (every
 * expansion, which formed one batch, the serial time between batches) and
 * the bounds it sets for 2 and 4 workers: Amdahl's, and each batch's jobs
 * handed in order to the worker free first (profile_bound), or longest
 * first (profile_bound_lpt); and for 2 MPI ranks, mpi.c's way of handing
 * out jobs simulated on the profile (profile_bound_mpi); and a model of
 * pipelined batches (profile_bound_pipe). After the timed
 * runs, rank 0's CPU per batch in the ranks runs (own jobs, store,
 * messages, looking, waiting: the `complan: mpi: rank 0` line).
 *
 * Usage (from the source root, after ninja -C build):
 *   build/experiments/bench_parallel [REPEATS [BATCH [profile|timed]]]
 * BATCH replaces the tasks' batch (16) in the timed runs and is profiled
 * beside 4, 16 and 32; "profile" stops
 * after the profile, "timed" skips it.
 * BENCH_TASK=TEXT measures only the tasks whose file name contains TEXT;
 * BENCH_NODES=N gives every task the node limit N (a short run whose
 * speeds mean little: tests/experiments/test_bench_parallel.py).
 * CP_COMPLAN (default build/complan) and CP_MPIRUN (default mpirun) name
 * the programs; as root, Open MPI needs OMPI_ALLOW_RUN_AS_ROOT=1 and
 * OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1.
 */
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "experiments/bench_search.h"
#include "models/hash.h"

void openblas_set_num_threads(int n);

typedef bench_spec spec;

/* Node limits giving about 2 s of 1-thread search on a quiet machine
 * (session 17: push 6000, grasp_lift 2450, the corner pivot 700 expansions
 * a second), so that the search's start and first batches do not decide
 * the ratio. */
static const spec all_specs[] = {
    {"planner/tasks/push.json", "sst", 12000, 16},
    {"planner/tasks/grasp_lift.json", "sst", 5000, 16},
    {"planner/tasks/bench/hidex-corner-pivot.json", "sst", 1500, 16},
};
/* The tasks this run measures: all, or those whose file name contains
 * BENCH_TASK (main). */
static spec specs[sizeof all_specs / sizeof *all_specs];
static size_t n_specs;

/* The configurations: threads (in process) or MPI ranks, with the
 * default pipelined batches (pipe 1: search.pipeline not given) or plain
 * ones (pipe 0: search.pipeline false; another tree, the same on any
 * number of workers, so compared with the plain 1-thread run). */
typedef struct config {
  int threads, ranks, pipe;
} config;
static const config configs[] = {{1, 0, 1}, {2, 0, 1}, {0, 1, 1},
                                 {0, 2, 1}, {0, 4, 1}, {1, 0, 0},
                                 {2, 0, 0}, {0, 1, 0}, {0, 2, 0}};
enum { N_CONFIGS = sizeof configs / sizeof *configs, MAX_REPEATS = 16 };

/* A row's mode: the default's (search.pipeline not given:
 * cp_task_search_mode, pipelined in halves of batch / 2 at batch >= 4 for
 * rrt and sst) with its halves, or plain. */
static const char *mode_label(const config *c, const char *method, int batch,
                              char *buf, size_t size) {
  const cp_task unset = {.search_pipeline = -1};
  int half = batch;
  if (!c->pipe) snprintf(buf, size, ", plain %d", batch);
  else if (cp_task_search_mode(&unset, method, batch, &half))
    snprintf(buf, size, ", default: pipelined 2x%d", half);
  else snprintf(buf, size, ", default: plain %d", batch);
  return buf;
}

/* The run with one worker of c's kind (threads or ranks, plain or
 * pipelined): the base of its CPU efficiency; and the 1-thread run of
 * its mode: the base of "same" and of its speed ratios. */
static int base_of(int c) {
  for (int b = 0; b < N_CONFIGS; ++b)
    if (configs[b].pipe == configs[c].pipe &&
        configs[b].threads == (configs[c].threads ? 1 : 0) &&
        configs[b].ranks == (configs[c].ranks ? 1 : 0))
      return b;
  return 0;
}
static int config_of(int threads, int ranks, int pipe) {
  for (int b = 0; b < N_CONFIGS; ++b)
    if (configs[b].pipe == pipe && configs[b].threads == threads &&
        configs[b].ranks == ranks)
      return b;
  return 0;
}
static int first_of(int c) { return config_of(1, 0, configs[c].pipe); }
/* The plain 1-thread run (the profile's search). */
static int plain_one(void) { return config_of(1, 0, 0); }

/* What one run gave. */
typedef struct outcome {
  double rate;            /* expansions per wall second */
  long nodes, expansions;
  double cost;
  uint64_t digest;        /* of the node rows */
  long long jobs, own, bytes; /* MPI: worker jobs, rank-0 jobs, bytes */
  double cpu, sim;        /* threads: CPU seconds of the run, simulating */
  /* The search's wall seconds, and the CPU seconds of all its threads or
   * processes (ranks: of the whole mpirun, start-up included until main
   * subtracts the start-up run's) */
  double wall, pcpu;
  double spawn_wall;      /* ranks: mpirun's whole wall seconds */
  /* MPI: rank 0 in the batches (the second `complan: mpi:` line): batches,
   * then CPU s in own jobs, store, messages, looking, waiting; the looks
   * with jobs left to hand out and the fruitless ones */
  double r0[6];
  long long looks, fruitless;
  double ended;           /* control runs: when reaped (wall_now) */
} outcome;

/* A threads run in this process. */
static int run_threads(const cp_task *task, const spec *sp, int threads,
                       outcome *out) {
  char db[64];
  cp_plan_result r;
  long n;
  double p0 = bench_process_cpu();
  if (bench_temp_db(db, "bench_parallel") ||
      bench_search_run("bench_parallel", task, sp, threads, db, &r, &out->cpu,
                       &out->sim) ||
      bench_run_digest(db, &out->digest, &n)) {
    bench_remove_db(db);
    return -1;
  }
  out->pcpu = bench_process_cpu() - p0;
  bench_remove_db(db);
  out->wall = r.session_seconds;
  out->rate = (double)r.stats.expansions / r.session_seconds;
  out->nodes = r.nodes;
  out->expansions = r.stats.expansions;
  out->cost = r.cost;
  out->jobs = out->own = out->bytes = 0;
  return 0;
}

/* The load-independent profile of a 1-thread run: the CPU time (this
 * thread's clock) of every expansion, which expansions were simulated
 * together (one batch), and the whole search's. The search's problem is a
 * copy of the world's whose expand and expand_batch time the jobs and
 * then run them as the 1-thread search would (one by one, in order), so
 * the nodes are the same. */
typedef struct profile {
  const cp_search_problem *p; /* the world's problem */
  double *job;                /* [n_jobs] CPU s of each expansion */
  double *est;                /* [n_jobs] its parent's (est_slot) */
  long *action;               /* [n_jobs] its action */
  long n_jobs, job_cap;
  long *first;                /* [n_batches] each batch's first job */
  long n_batches, batch_cap;
  int in_batch;
  double *gap;                /* [n_batches] CPU s before each batch */
  double *meanwhile;          /* [n_batches] CPU s of the caller's work
                                 during each batch (the store's commits) */
  double last;                /* when the last batch ended */
  double total;               /* CPU s of the whole search */
} profile;

static profile prof; /* the timed expand has no context of its own */

static int push_long(long **v, long *n, long *cap, long x) {
  if (*n == *cap) {
    long c = *cap ? 2 * *cap : 1024;
    long *p = realloc(*v, (size_t)c * sizeof *p);
    if (!p) return -1;
    *v = p;
    *cap = c;
  }
  (*v)[(*n)++] = x;
  return 0;
}

/* Starts a batch at the next job, begun at CPU time t0. */
static int new_batch(double t0) {
  long cap = prof.batch_cap;
  if (push_long(&prof.first, &prof.n_batches, &prof.batch_cap, prof.n_jobs))
    return -1;
  if (cap != prof.batch_cap) {
    double *g = realloc(prof.gap, (size_t)prof.batch_cap * sizeof *g);
    if (g) prof.gap = g;
    double *m = g ? realloc(prof.meanwhile, (size_t)prof.batch_cap * sizeof *m)
                  : NULL;
    if (!m) return -1;
    prof.meanwhile = m;
  }
  prof.gap[prof.n_batches - 1] = t0 - prof.last;
  prof.meanwhile[prof.n_batches - 1] = 0;
  return 0;
}

/* The CPU time of the expansion that made each state (by the hash of its
 * numbers; open addressing): a job's estimate is its parent's cost, all
 * a scheduler could know before running it (0 for the start state's). */
enum { EST_SLOTS = 1 << 14 };
static uint64_t est_key[EST_SLOTS];
static double est_cost[EST_SLOTS];

static uint64_t state_key(const double *x) {
  uint64_t h = cp_fnv_bytes(CP_FNV_OFFSET, x, (size_t)prof.p->n * sizeof *x);
  return h ? h : 1;
}

static double *est_slot(uint64_t h) {
  for (size_t i = h % EST_SLOTS, k = 0; k < EST_SLOTS;
       ++k, i = (i + 1) % EST_SLOTS)
    if (est_key[i] == h || !est_key[i]) {
      est_key[i] = h;
      return &est_cost[i];
    }
  return NULL;
}

static int timed_expand(void *ctx, const double *x, double t,
                        const void *warm, size_t warm_size, long a, double *y,
                        cp_expansion *info) {
  double *pe = est_slot(state_key(x)), est = pe ? *pe : 0;
  double c0 = bench_now();
  int rc = prof.p->expand(ctx, x, t, warm, warm_size, a, y, info);
  double dt = bench_now() - c0;
  if (!rc && (pe = est_slot(state_key(y)))) *pe = dt;
  if (prof.n_jobs == prof.job_cap) {
    long c = prof.job_cap ? 2 * prof.job_cap : 1024;
    double *v = realloc(prof.job, (size_t)c * sizeof *v);
    double *e = v ? realloc(prof.est, (size_t)c * sizeof *e) : NULL;
    long *ac = e ? realloc(prof.action, (size_t)c * sizeof *ac) : NULL;
    if (v) prof.job = v;
    if (e) prof.est = e;
    if (!ac) return -1;
    prof.action = ac;
    prof.job_cap = c;
  }
  /* An expansion outside a batch of several is a batch of its own. */
  if (!prof.in_batch && new_batch(c0)) return -1;
  prof.est[prof.n_jobs] = est;
  prof.action[prof.n_jobs] = a;
  prof.job[prof.n_jobs++] = dt;
  if (!prof.in_batch) prof.last = bench_now();
  return rc;
}

static int timed_batch(void *ctx, cp_expand_job *jobs, int n,
                       const cp_batch_meanwhile *meanwhile) {
  if (new_batch(bench_now())) return -1;
  /* The caller's work during the batch (the store's commit of the batches
   * before): timed apart, as the workers would simulate meanwhile. */
  double m0 = bench_now();
  if (meanwhile) meanwhile->fn(meanwhile->ctx);
  prof.meanwhile[prof.n_batches - 1] = bench_now() - m0;
  prof.in_batch = 1;
  for (int k = 0; k < n; ++k) {
    cp_expand_job_run(timed_expand, ctx, &jobs[k]);
    if (jobs[k].rc) break;
  }
  prof.in_batch = 0;
  prof.last = bench_now();
  return 0;
}

/* The profiled 1-thread run of sp (nodes hashed like run_threads'). */
static int run_profiled(const cp_task *task, const spec *sp, outcome *out) {
  char db[64], msg[600];
  cp_store *st = NULL;
  cp_plan_world *pw = NULL;
  cp_plan_result r;
  cp_error err;
  cp_plan_status s = CP_PLAN_FAILED;
  long n;
  free(prof.job);
  free(prof.est);
  free(prof.action);
  memset(est_key, 0, sizeof est_key);
  free(prof.first);
  free(prof.gap);
  free(prof.meanwhile);
  memset(&prof, 0, sizeof prof);
  if (bench_temp_db(db, "bench_parallel")) return -1;
  if (cp_store_open(db, 0, &st, msg, sizeof msg)) {
    fprintf(stderr, "bench_parallel: %s\n", msg);
    return -1;
  }
  if (!cp_plan_world_create(task, 1, &pw, &err)) {
    cp_search_problem p = *cp_plan_world_problem(pw);
    prof.p = cp_plan_world_problem(pw);
    p.expand = timed_expand;
    p.expand_batch = timed_batch;
    cp_plan_options o = cp_plan_defaults();
    o.method = sp->method;
    o.max_nodes = sp->nodes;
    o.max_seconds = 1e6;
    o.search_batch = sp->batch;
    o.world_options = cp_plan_world_options(pw);
    double c0 = bench_now();
    prof.last = c0;
    s = cp_plan_search(st, task, &p, cp_plan_world_start(pw), &o, &r, &err);
    prof.total = bench_now() - c0;
  }
  cp_plan_world_destroy(pw);
  cp_store_close(st);
  int ok = (s == CP_PLAN_SOLVED || s == CP_PLAN_LIMIT) &&
           !bench_run_digest(db, &out->digest, &n);
  bench_remove_db(db);
  if (!ok) {
    fprintf(stderr, "bench_parallel: %s: profile: %s\n", sp->task, err.msg);
    return -1;
  }
  out->nodes = r.nodes;
  out->expansions = r.stats.expansions;
  out->cost = r.cost;
  return 0;
}

/* The profile's bound for w workers: its CPU time over the serial part
 * plus, per batch, the time the batch's jobs take when each goes, in
 * order, to the worker free first (the pool's ticket, rank 0's dispatch),
 * the calling thread starting after its work during the batch (the
 * store's commit); no cost of waking or messages. *imbalance: the share of
 * the workers' time in the batches spent waiting for the batch's last
 * job. */
static double profile_bound(int w, double *imbalance) {
  double jobs = 0, span = 0, free_at[64];
  if (w > 64) w = 64;
  for (long b = 0; b < prof.n_batches; ++b) {
    long end = b + 1 < prof.n_batches ? prof.first[b + 1] : prof.n_jobs;
    for (int k = 0; k < w; ++k) free_at[k] = 0;
    free_at[0] = prof.meanwhile[b];
    jobs += prof.meanwhile[b];
    for (long j = prof.first[b]; j < end; ++j) {
      int k0 = 0;
      for (int k = 1; k < w; ++k)
        if (free_at[k] < free_at[k0]) k0 = k;
      free_at[k0] += prof.job[j];
      jobs += prof.job[j];
    }
    double m = 0;
    for (int k = 0; k < w; ++k)
      if (free_at[k] > m) m = free_at[k];
    span += m;
  }
  *imbalance = span > 0 ? 1 - jobs / (w * span) : 0;
  return prof.total / (prof.total - jobs + span);
}

/* A model of pipelined batches (issue 27; search.pipeline): w workers, the
 * calling thread one of them, each batch's jobs released once the caller
 * has done the serial work before it (the profile's gap; then it writes
 * the commit due, the batch's jobs already out, as today), which may start
 * only once batch b - lag is all done
 * (lag 1: today's batches; lag 2: batch b + 1 chosen from the tree as
 * merged up to batch b - 1, so the workers go on to it while batch b's
 * last job runs). Jobs go in order, batch by batch, to whoever can start
 * them first; the caller does its serial work as soon as it may (it never
 * stops a job half-way). On the profile's 1-thread tree: a pipelined
 * search grows another tree (each iteration sees a tree 1-2 batches
 * older), so this is the schedule's bound, not a measured speed. */
static double profile_bound_pipe(int w, int lag) {
  enum { MAXW = 64 };
  double fr[MAXW] = {0}, jobs = 0, serial = 0;
  if (w > MAXW) w = MAXW;
  long nb = prof.n_batches, next = 0, released = 0; /* jobs [0, released) */
  double *done = calloc((size_t)nb + 1, sizeof *done);
  double *rel = calloc((size_t)nb + 1, sizeof *rel);
  if (!done || !rel) {
    free(done);
    free(rel);
    return 0;
  }
  long b_next = 0; /* the next batch whose serial work is to do */
#define END(b) ((b) + 1 < nb ? prof.first[(b) + 1] : prof.n_jobs)
#define BATCH_OF(j, bj) while (END(bj) <= (j)) ++(bj)
  long bj = 0; /* the batch of job next */
  while (next < prof.n_jobs || b_next < nb) {
    /* The caller's serial work: may it start, and when? */
    double ts = INFINITY;
    if (b_next < nb && (b_next < lag || END(b_next - lag) <= next))
      ts = fmax(fr[0], b_next >= lag ? done[b_next - lag] : 0);
    /* The next job: who can start it first, and when? */
    double tj = INFINITY;
    int kj = -1;
    if (next < released) {
      BATCH_OF(next, bj);
      for (int k = 0; k < w; ++k) {
        double t = fmax(fr[k], rel[bj]);
        if (t < tj) {
          tj = t;
          kj = k;
        }
      }
    }
    if (ts <= tj && ts < INFINITY) {
      /* The work before the batch, then the commit written during it. */
      rel[b_next] = ts + prof.gap[b_next];
      fr[0] = rel[b_next] + prof.meanwhile[b_next];
      serial += prof.gap[b_next] + prof.meanwhile[b_next];
      released = END(b_next);
      ++b_next;
      continue;
    }
    if (kj < 0) break; /* not reached */
    fr[kj] = tj + prof.job[next];
    jobs += prof.job[next];
    if (fr[kj] > done[bj]) done[bj] = fr[kj];
    ++next;
  }
#undef BATCH_OF
#undef END
  double span = 0;
  for (int k = 0; k < w; ++k) span = fmax(span, fr[k]);
  free(done);
  free(rel);
  /* The search's CPU outside the batches and their serial work. */
  double rest = prof.total - jobs - serial;
  return prof.total / (span + (rest > 0 ? rest : 0));
}

/* The profile's bound for w workers when each batch's jobs are handed out
 * longest first (the pool free first takes the longest job left), with
 * every job's cost known in advance: what any order within a batch could
 * gain at most over profile_bound's (the batches and their merge order
 * unchanged). */
typedef struct costed {
  double key, cost;
  long j;
} costed;

static int by_key_desc(const void *a, const void *b) {
  const costed *x = a, *y = b;
  if (x->key != y->key) return x->key < y->key ? 1 : -1;
  return (x->j > y->j) - (x->j < y->j);
}

/* estimated: 0 ordered by the job's own cost, 1 by its parent's
 * (prof.est), 2 by the mean cost of its action over the batches before
 * (unknown actions first). */
static double profile_bound_lpt(int w, int estimated) {
  double span = 0, jobs = 0, free_at[64];
  costed *v = NULL;
  /* Actions beyond 2^16 share buckets (a task with many actions). */
  long cap = 0, na = prof.p->n_actions < 65536 ? prof.p->n_actions : 65536;
  double *sum = calloc((size_t)na + 1, sizeof *sum);
  long *cnt = calloc((size_t)na + 1, sizeof *cnt);
  if (!sum || !cnt) {
    free(sum);
    free(cnt);
    return 0;
  }
  if (w > 64) w = 64;
  for (long b = 0; b < prof.n_batches; ++b) {
    long end = b + 1 < prof.n_batches ? prof.first[b + 1] : prof.n_jobs;
    long n = end - prof.first[b];
    if (n > cap) {
      costed *q = realloc(v, (size_t)n * sizeof *q);
      if (!q) break;
      v = q;
      cap = n;
    }
    for (long j = 0; j < n; ++j) {
      long i = prof.first[b] + j;
      long a = prof.action[i] >= 0 ? prof.action[i] % na : na;
      double key = estimated == 0   ? prof.job[i]
                   : estimated == 1 ? prof.est[i]
                   : cnt[a]         ? sum[a] / (double)cnt[a]
                                    : INFINITY;
      v[j] = (costed){key, prof.job[i], j};
    }
    for (long j = 0; j < n; ++j) {
      long i = prof.first[b] + j;
      long a = prof.action[i] >= 0 ? prof.action[i] % na : na;
      sum[a] += prof.job[i];
      ++cnt[a];
    }
    qsort(v, (size_t)n, sizeof *v, by_key_desc);
    for (int k = 0; k < w; ++k) free_at[k] = 0;
    free_at[0] = prof.meanwhile[b];
    jobs += prof.meanwhile[b];
    for (long j = 0; j < n; ++j) {
      int k0 = 0;
      for (int k = 1; k < w; ++k)
        if (free_at[k] < free_at[k0]) k0 = k;
      free_at[k0] += v[j].cost;
      jobs += v[j].cost;
    }
    double m = 0;
    for (int k = 0; k < w; ++k)
      if (free_at[k] > m) m = free_at[k];
    span += m;
  }
  free(v);
  free(sum);
  free(cnt);
  return prof.total / (prof.total - jobs + span);
}

/* The profile's bound for rank 0 and `workers` MPI ranks, each worker with
 * up to `depth` jobs in flight, simulated the way mpi.c hands them out:
 * rank 0 sends every worker one job, then up to `depth` (beyond one only
 * while a job is left for rank 0), writes the store's commit, and then
 * collects an answer that has arrived (topping that worker up) or else
 * runs the next job itself, or waits for the next answer. A worker runs
 * its jobs in the order received. slices: rank 0 looks for answers (and
 * tops workers up) that many times within a job of its own, between equal
 * parts (1: only between jobs, as mpi.c did until session 15; 20: at
 * every step of a 20-step action, as it does now). msg: rank 0's CPU per
 * worker job (send and receive), look: per look for an answer, lat: a
 * message's one-way time (s). */
static double profile_bound_mpi(int workers, int depth, int slices,
                                double msg, double look, double lat) {
  enum { MAXW = 8, MAXD = 4 };
  double span = 0, jobs = 0;
  if (workers > MAXW) workers = MAXW;
  if (depth > MAXD) depth = MAXD;
  for (long b = 0; b < prof.n_batches; ++b) {
    long first = prof.first[b];
    long n = (b + 1 < prof.n_batches ? prof.first[b + 1] : prof.n_jobs) -
             first;
    double t = 0, free_at[MAXW] = {0}, back[MAXW][MAXD] = {{0}};
    int head[MAXW] = {0}, in[MAXW] = {0}, running = 0;
    long next = 0;
    double part = 0, left = 0; /* rank 0's own job: a part, what is left */
    /* Job next to worker k: it runs after its previous one; its answer is
     * back at rank 0 at back[][]. */
#define SEND(k)                                                             \
  do {                                                                      \
    t += msg / 2;                                                           \
    double at = t + lat, st = free_at[k] > at ? free_at[k] : at;            \
    free_at[k] = st + prof.job[first + next++];                             \
    back[k][(head[k] + in[k]++) % MAXD] = free_at[k] + lat;                 \
    ++running;                                                              \
  } while (0)
#define TOP_UP(k, upto)                                                     \
  while (next < n && in[k] < (upto) && (!in[k] || n - next >= 2)) SEND(k)
    for (int upto = 1; upto <= depth; ++upto)
      for (int k = 0; k < workers; ++k) TOP_UP(k, upto);
    t += prof.meanwhile[b];
    while (next < n || running || left > 0) {
      /* The earliest answer not yet collected. */
      int k0 = -1;
      for (int k = 0; k < workers; ++k)
        if (in[k] && (k0 < 0 || back[k][head[k]] < back[k0][head[k0]]))
          k0 = k;
      if (running) t += look;
      if (left > 0 && (k0 < 0 || back[k0][head[k0]] > t)) {
        double d = part < left ? part : left;
        t += d;
        left -= d;
        if (left < 1e-12) left = 0;
        continue;
      }
      if (next < n && (k0 < 0 || back[k0][head[k0]] > t)) {
        left = prof.job[first + next++];
        part = left / slices;
        continue;
      }
      if (k0 < 0) break; /* not reached: running > 0 here */
      if (back[k0][head[k0]] > t) t = back[k0][head[k0]];
      head[k0] = (head[k0] + 1) % MAXD;
      --in[k0];
      --running;
      t += msg / 2;
      TOP_UP(k0, depth);
    }
#undef TOP_UP
#undef SEND
    for (long j = 0; j < n; ++j) jobs += prof.job[first + j];
    jobs += prof.meanwhile[b];
    span += t;
  }
  return prof.total / (prof.total - jobs + span);
}

/* CPU seconds (user + system) of the children this process has waited
 * for, and of the descendants they waited for. */
static double children_cpu(void) {
  struct rusage ru;
  getrusage(RUSAGE_CHILDREN, &ru);
  return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         1e-6 * (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

static double wall_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Starts argv with stdout and stderr into files (and nothing on stdin):
 * its process id, or -1. */
static pid_t start_child(char *const *argv, const char *out,
                         const char *err) {
  pid_t pid = fork();
  if (pid == 0) {
    int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int nul = open("/dev/null", O_RDONLY);
    if (o < 0 || e < 0 || nul < 0) _exit(127);
    dup2(nul, 0);
    dup2(o, 1);
    dup2(e, 2);
    execvp(argv[0], argv);
    _exit(127);
  }
  return pid;
}

/* Runs argv with stdout and stderr into files; exit status (-1: not run).
 * *cpu (if cpu): the CPU seconds (user + system) of the child and of every
 * descendant it waited for (mpirun waits for its ranks); *wall (if wall):
 * the child's wall seconds, fork to exit. */
static int spawn(char *const *argv, const char *out, const char *err,
                 double *cpu, double *wall) {
  double w0 = wall_now();
  pid_t pid = start_child(argv, out, err);
  if (pid < 0) return -1;
  int st;
  double c0 = children_cpu();
  if (waitpid(pid, &st, 0) < 0) return -1;
  if (cpu) *cpu = children_cpu() - c0;
  if (wall) *wall = wall_now() - w0;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static char *slurp(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  char *buf = NULL;
  size_t len = 0, cap = 0, got;
  char chunk[4096];
  while ((got = fread(chunk, 1, sizeof chunk, f)) > 0) {
    if (len + got + 1 > cap) {
      cap = 2 * (len + got + 1);
      char *p = realloc(buf, cap);
      if (!p) break;
      buf = p;
    }
    memcpy(buf + len, chunk, got);
    len += got;
  }
  fclose(f);
  if (buf) buf[len] = 0;
  return buf;
}

/* The figures of `complan plan --json`'s document doc into out: the
 * search's expansions, nodes, plan cost, seconds (rank 0's search under
 * MPI) and expansions per second. */
static void read_plan_json(json_t *doc, outcome *out) {
  double secs = json_number_value(json_object_get(doc, "seconds"));
  out->expansions = (long)json_integer_value(json_object_get(doc, "expansions"));
  out->nodes = (long)json_integer_value(json_object_get(doc, "nodes"));
  json_t *c = json_object_get(doc, "cost");
  out->cost = json_is_number(c) ? json_number_value(c) : NAN;
  out->rate = (double)out->expansions / secs;
  out->wall = secs;
}

/* An MPI run: mpirun -n ranks complan plan task_file --mpi. */
static int run_ranks(const char *task_file, const spec *sp, int ranks,
                     outcome *out) {
  const char *complan = getenv("CP_COMPLAN"), *mpirun = getenv("CP_MPIRUN");
  char n[16], nodes[32], dbp[64];
  if (bench_temp_db(dbp, "bench_parallel")) return -1;
  snprintf(n, sizeof n, "%d", ranks);
  snprintf(nodes, sizeof nodes, "%ld", sp->nodes);
  char *argv[] = {(char *)(mpirun ? mpirun : "mpirun"), "--oversubscribe",
                  "--bind-to", "none", "-n", n, (char *)(complan ? complan : "build/complan"),
                  "plan", (char *)task_file, "--db", dbp, "--method",
                  (char *)sp->method, "--max-nodes", nodes, "--max-seconds",
                  "1000000", "--threads", "1", "--mpi", "--json", NULL};
  char outp[80], errp[80];
  snprintf(outp, sizeof outp, "%s.out", dbp);
  snprintf(errp, sizeof errp, "%s.err", dbp);
  int rc = spawn(argv, outp, errp, &out->pcpu, &out->spawn_wall);
  char *text = slurp(outp), *err = slurp(errp);
  json_t *doc = text ? json_loads(text, 0, NULL) : NULL;
  const char *line = err ? strstr(err, "complan: mpi: ") : NULL;
  int ok = (rc == 0 || rc == 1) && doc && line;
  if (ok) {
    read_plan_json(doc, out);
    long long sent = 0, received = 0;
    const char *at = strstr(line, " ran ");
    out->jobs = at ? atoll(at + 5) : 0;
    at = strstr(line, "rank 0 ran ");
    out->own = at ? atoll(at + 11) : 0;
    at = at ? strstr(at, "; ") : NULL;
    if (at) sscanf(at, "; %lld bytes sent, %lld received", &sent, &received);
    out->bytes = sent + received;
    at = strstr(line, "rank 0 in ");
    double cpu = 0;
    if (!at || sscanf(at, "rank 0 in %lf batches: %lf s CPU: %lf own jobs, "
                      "%lf store, %lf messages, %lf looking, %lf waiting",
                      &out->r0[0], &cpu, &out->r0[1], &out->r0[2],
                      &out->r0[3], &out->r0[4], &out->r0[5]) != 7)
      memset(out->r0, 0, sizeof out->r0);
    at = at ? strstr(at, "); ") : NULL;
    if (!at || sscanf(at, "); %lld looks, %lld found nothing", &out->looks,
                      &out->fruitless) != 2)
      out->looks = out->fruitless = -1;
    long nn;
    ok = !bench_run_digest(dbp, &out->digest, &nn);
  } else {
    fprintf(stderr, "bench_parallel: mpirun -n %d: exit %d\n%s\n", ranks, rc,
            err ? err : "");
  }
  json_decref(doc);
  free(text);
  free(err);
  unlink(outp);
  unlink(errp);
  bench_remove_db(dbp);
  out->cpu = out->sim = 0;
  return ok ? 0 : -1;
}

/* The "2 independent runs" control: two `complan plan task_file --threads
 * 1 --json` processes forked one after the other and waited for together,
 * each into its own database, sharing nothing but the machine. out[k]: the
 * search's figures from its JSON (expansions, nodes, cost, seconds), its
 * nodes' digest, the process's CPU seconds (pcpu: user + system, start-up
 * included; the caller subtracts a 1-node pair's), and when it was reaped
 * (ended; wall_now). 0, or -1 said on stderr. */
static int run_pair(const char *task_file, const spec *sp, outcome out[2]) {
  const char *complan = getenv("CP_COMPLAN");
  char nodes[32], db[2][64], outp[2][160], errp[2][160];
  pid_t pid[2] = {-1, -1};
  int rc[2] = {-1, -1}, ok = 1;
  snprintf(nodes, sizeof nodes, "%ld", sp->nodes);
  for (int k = 0; k < 2; ++k) {
    memset(&out[k], 0, sizeof out[k]);
    db[k][0] = 0;
    if (ok && bench_temp_db(db[k], "bench_parallel")) ok = 0;
    snprintf(outp[k], sizeof outp[k], "%s.out", db[k]);
    snprintf(errp[k], sizeof errp[k], "%s.err", db[k]);
  }
  for (int k = 0; k < 2 && ok; ++k) {
    char *argv[] = {(char *)(complan ? complan : "build/complan"), "plan",
                    (char *)task_file, "--db", db[k], "--method",
                    (char *)sp->method, "--max-nodes", nodes, "--max-seconds",
                    "1000000", "--threads", "1", "--json", NULL};
    pid[k] = start_child(argv, outp[k], errp[k]);
    ok = pid[k] > 0;
  }
  /* Reaped in the order they end, so that each one's end is its own; its
   * CPU is what reaping it adds to the children's. */
  double c0 = children_cpu();
  for (int left = (pid[0] > 0) + (pid[1] > 0); left > 0; --left) {
    int st;
    pid_t p = waitpid(-1, &st, 0);
    int k = p == pid[0] ? 0 : p == pid[1] ? 1 : -1;
    double c1 = children_cpu();
    if (p < 0) {
      ok = 0;
      break;
    }
    if (k < 0) {
      ++left; /* not one of ours (the bench has no other children) */
      c0 = c1;
      continue;
    }
    out[k].ended = wall_now();
    out[k].pcpu = c1 - c0;
    c0 = c1;
    rc[k] = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  }
  for (int k = 0; k < 2; ++k) {
    char *text = db[k][0] ? slurp(outp[k]) : NULL;
    json_t *doc = text ? json_loads(text, 0, NULL) : NULL;
    long n;
    if (ok && (rc[k] == 0 || rc[k] == 1) && doc) {
      read_plan_json(doc, &out[k]);
      ok = !bench_run_digest(db[k], &out[k].digest, &n);
    } else if (ok) {
      char *err = slurp(errp[k]);
      fprintf(stderr, "bench_parallel: control run %d (%s plan %s "
              "--threads 1): exit %d\n%s\n", k + 1,
              complan ? complan : "build/complan", task_file, rc[k],
              err ? err : "");
      free(err);
      ok = 0;
    }
    json_decref(doc);
    free(text);
    if (db[k][0]) {
      unlink(outp[k]);
      unlink(errp[k]);
      bench_remove_db(db[k]);
    }
  }
  if (pid[0] <= 0 || pid[1] <= 0)
    fprintf(stderr, "bench_parallel: control runs: cannot start them\n");
  return ok ? 0 : -1;
}

/* The share of the union of the two control runs' searches during which
 * both ran: each search taken as the `seconds` before its process ended
 * (what follows a search -- the last commit's close, the JSON -- is
 * short). */
static double pair_overlap(const outcome o[2]) {
  double s0 = o[0].ended - o[0].wall, s1 = o[1].ended - o[1].wall;
  double both = fmin(o[0].ended, o[1].ended) - fmax(s0, s1);
  double span = fmax(o[0].ended, o[1].ended) - fmin(s0, s1);
  return span > 0 && both > 0 ? both / span : 0;
}

/* A benchmark over ranks: mpirun -n ranks complan plan task --benchmark
 * runs --planners sst --max-nodes nodes --mpi; *received the bytes of the
 * runs' stores back (the `complan: mpi:` line). 0, or -1. */
static int bench_ranks_bytes(const char *task, int ranks, int runs,
                             long nodes, long long *received) {
  const char *complan = getenv("CP_COMPLAN"), *mpirun = getenv("CP_MPIRUN");
  char n[16], r[16], nn[32], dbp[64], outp[80], errp[80];
  if (bench_temp_db(dbp, "bench_parallel")) return -1;
  snprintf(n, sizeof n, "%d", ranks);
  snprintf(r, sizeof r, "%d", runs);
  snprintf(nn, sizeof nn, "%ld", nodes);
  char *argv[] = {(char *)(mpirun ? mpirun : "mpirun"), "--oversubscribe",
                  "--bind-to", "none", "-n", n,
                  (char *)(complan ? complan : "build/complan"), "plan",
                  (char *)task, "--db", dbp, "--benchmark", r, "--planners",
                  "sst", "--max-nodes", nn, "--mpi", NULL};
  snprintf(outp, sizeof outp, "%s.out", dbp);
  snprintf(errp, sizeof errp, "%s.err", dbp);
  int rc = spawn(argv, outp, errp, NULL, NULL);
  char *err = slurp(errp);
  const char *at = err ? strstr(err, "runs; ") : NULL;
  long long sent = 0;
  int ok = rc == 0 && at &&
           sscanf(at, "runs; %lld bytes sent, %lld received", &sent,
                  received) == 2;
  if (!ok)
    fprintf(stderr, "bench_parallel: benchmark on %d ranks: exit %d\n%s\n",
            ranks, rc, err ? err : "");
  free(err);
  unlink(outp);
  unlink(errp);
  bench_remove_db(dbp);
  return ok ? 0 : -1;
}

/* The task with search.batch = batch, in a temporary file next to it:
 * pipe 1, search.pipeline removed (its default: cp_task_search_mode);
 * pipe 0, search.pipeline false (plain batches). */
static char *task_with_batch(const char *path, int batch, int pipe) {
  json_error_t je;
  json_t *t = json_load_file(path, 0, &je);
  json_t *s = t ? json_object_get(t, "search") : NULL;
  if (!s) {
    fprintf(stderr, "bench_parallel: %s: no search object\n", path);
    json_decref(t);
    return NULL;
  }
  json_object_set_new(s, "batch", json_integer(batch));
  if (pipe) json_object_del(s, "pipeline");
  else json_object_set_new(s, "pipeline", json_false());
  const char *slash = strrchr(path, '/');
  size_t len = strlen(path) + 40;
  char *tmp = malloc(len);
  snprintf(tmp, len, "%.*s.bench_parallel_XXXXXX", (int)(slash - path + 1),
           path);
  int fd = mkstemp(tmp);
  if (fd < 0 || json_dumpfd(t, fd, JSON_INDENT(1))) {
    fprintf(stderr, "bench_parallel: cannot write %s\n", tmp);
    if (fd >= 0) close(fd);
    free(tmp);
    json_decref(t);
    return NULL;
  }
  close(fd);
  json_decref(t);
  return tmp;
}

static int same(const outcome *a, const outcome *b) {
  return a->digest == b->digest && a->nodes == b->nodes &&
         a->expansions == b->expansions &&
         (a->cost == b->cost || (isnan(a->cost) && isnan(b->cost)));
}

/* Amdahl's bound on w workers for a serial share s. */
static double amdahl_bound(double s, int w) { return 1 / (s + (1 - s) / w); }

/* Efficiency model (docs/parallel.md): R ranks, rank 0 dispatches and
 * merges, workers simulate one job at a time. t: CPU s per expansion on
 * one thread, s: its serial share, b: bytes per expansion, lat: a job's
 * network round trip (s), bw: rank 0's link (bytes/s), o: rank 0's CPU
 * per message pair (s), batch: jobs in flight at most. */
static double efficiency(int R, double t, double s, double b, double lat,
                         double bw, double o, int batch) {
  double tc = (1 - s) * t, ts = s * t;
  int busy = R - 1 < batch ? R - 1 : batch;
  double workers = busy / (tc + lat);    /* expansions/s the workers give */
  double rank0 = 1 / (ts + o + b / bw);  /* expansions/s rank 0 can take */
  double x = workers < rank0 ? workers : rank0;
  return x * t / R;
}

/* The MPI schedule's assumed costs (profile_bound_mpi): rank 0's CPU per
 * worker job, per look for an answer, a message's one-way time (shared
 * memory; session 15 measured rank 0's per-job and per-look CPU on the
 * loaded machine at about 20 and 9 us: the "rank 0 per batch" table). */
#define MPI_MSG 10e-6
#define MPI_LOOK 1e-6
#define MPI_LAT 2e-6

/* A row of the profile table: sp's profiled 1-thread run (its nodes into
 * *o) and the bounds it sets. 0, or -1 said on stderr. */
static int profile_table_row(const spec *sp, outcome *o) {
  cp_task task;
  cp_error err;
  if (cp_task_load(sp->task, &task, &err)) {
    fprintf(stderr, "bench_parallel: %s: %s: %s\n", sp->task, err.where,
            err.msg);
    return -1;
  }
  task.search_pipeline = 0; /* the profile is of plain batches */
  int rc = run_profiled(&task, sp, o);
  cp_task_free(&task);
  if (rc) return -1;
  double jobs = 0, mw = 0, idle2, idle4;
  for (long j = 0; j < prof.n_jobs; ++j) jobs += prof.job[j];
  for (long b = 0; b < prof.n_batches; ++b) mw += prof.meanwhile[b];
  /* The commits written while a batch is simulated are not serial. */
  double s = 1 - (jobs + mw) / prof.total;
  double b2 = profile_bound(2, &idle2), b4 = profile_bound(4, &idle4);
  double gaps = 0;
  for (long b = 0; b < prof.n_batches; ++b) gaps += prof.gap[b];
  gaps /= (double)prof.n_batches;
  printf("| %s | %d | %ld | %ld | %.3f | %.1f%% | %.1f%% | %.0f / %.0f | "
         "%.2fx | %.2fx | %.0f%% | %.2fx | %.2fx | %.2fx | %.2fx | %.2fx | "
         "%.2fx | %.2fx | %.2fx | %.2fx | %.2fx | %.2fx |\n",
         strrchr(sp->task, '/') + 1, sp->batch, prof.n_jobs, prof.n_batches,
         1e3 * prof.total / (double)prof.n_jobs, 100 * s,
         100 * mw / prof.total,
         1e6 * bench_median(prof.gap, (int)prof.n_batches), 1e6 * gaps,
         amdahl_bound(s, 2), b2, 100 * idle2, b4, profile_bound_lpt(2, 0),
         profile_bound_lpt(2, 1), profile_bound_lpt(2, 2),
         profile_bound_mpi(1, 1, 1, MPI_MSG, MPI_LOOK, MPI_LAT),
         profile_bound_mpi(1, 2, 1, MPI_MSG, MPI_LOOK, MPI_LAT),
         profile_bound_mpi(1, 2, 1, 0, 0, 0),
         profile_bound_mpi(1, 2, 20, MPI_MSG, MPI_LOOK, MPI_LAT),
         profile_bound_pipe(2, 1), profile_bound_pipe(2, 2),
         profile_bound_pipe(4, 2));
  fflush(stdout);
    return 0;
}

int main(int argc, char **argv) {
  const char *usage = "bench_parallel [REPEATS [BATCH [profile|timed]]]";
  int repeats = (int)bench_positive_arg(argc, argv, 1, 5, usage);
  int batch = (int)bench_positive_arg(argc, argv, 2, 0, usage);
  int profile_only = argc > 3 && !strcmp(argv[3], "profile");
  int timed_only = argc > 3 && !strcmp(argv[3], "timed");
  if (argc > 3 && !profile_only && !timed_only) {
    fprintf(stderr, "bench_parallel: bad argument '%s' (profile or timed)\n"
            "usage: %s\n", argv[3], usage);
    return 2;
  }
  if (repeats > MAX_REPEATS) repeats = MAX_REPEATS;
  const char *only = getenv("BENCH_TASK");
  for (size_t k = 0; k < sizeof all_specs / sizeof *all_specs; ++k)
    if (!only || strstr(strrchr(all_specs[k].task, '/') + 1, only)) specs[n_specs++] = all_specs[k];
  if (!n_specs) {
    fprintf(stderr, "bench_parallel: BENCH_TASK='%s' names none of the tasks\nusage: %s\n", only,
            usage);
    return 2;
  }
  /* BENCH_NODES: every task's node limit (a short run, for the tests). */
  const char *nodes_env = getenv("BENCH_NODES");
  if (nodes_env) {
    char *end;
    long v = strtol(nodes_env, &end, 10);
    if (end == nodes_env || *end || v < 1) {
      fprintf(stderr, "bench_parallel: BENCH_NODES='%s': expected a node "
              "limit, a whole number >= 1\nusage: %s\n", nodes_env, usage);
      return 2;
    }
    for (size_t k = 0; k < n_specs; ++k) specs[k].nodes = v;
  }
  openblas_set_num_threads(1);
  /* Where the time goes, load-independent: a profiled 1-thread run of
   * each task (thread CPU time), its serial share and the bounds it sets
   * on 2 and 4 workers. */
  if (!timed_only)
    printf("Where the time goes (1 thread, CPU time of this thread; "
           "load-independent): serial = the search outside the simulations "
           "(choosing, merging, nearest queries, the store's commits between "
           "batches); store during batches = the commits written while a "
           "batch is simulated (by the calling thread, before it takes jobs); "
           "the bounds: Amdahl 1 / (s + (1 - s) / w), and the same with each "
           "batch's jobs handed in order to the worker free first (no cost of "
           "waking or messages); longest first: each batch's jobs handed out "
           "longest first, their costs known (the most any order within a "
           "batch gains), or ordered by their parent's cost (known when the batch "
           "is chosen), or by their action's mean cost in the batches before; "
           "2 ranks: rank 0 and one worker rank with 1 or 2 "
           "jobs in flight, handed out as planner/plan/mpi.c does (rank 0 "
           "runs the jobs not handed out, looks for answers between them), "
           "rank 0 paying %.0f us CPU per worker job and %.0f us per look, "
           "messages %.0f us one way, and with no such costs; looking 20 "
           "times within each job of its own as well (mpi.c looks every "
           "1/16 of rank 0's mean job, at most every 50 us, between steps); "
           "pipelined (a model): batch b + 1 chosen while batch "
           "b's last jobs run (from the tree merged up to batch b - 1), the "
           "caller's serial work between batches on its own thread, on this "
           "1-thread run's jobs (lag 1: the same model with today's batches)"
           "\n\n"
           "| task | batch | expansions | batches | CPU ms/expansion | serial "
           "share | store during batches | serial per batch, median / mean "
           "(us) | Amdahl 2 | batches 2 | idle in batches, 2 | batches 4 | "
           "batches 2, longest first | batches 2, longest parent first | "
           "batches 2, longest action first | "
           "2 ranks, 1 in flight | 2 ranks, 2 in "
           "flight | 2 ranks, 2 in flight, no message costs | 2 ranks, 2 in "
           "flight, looking within own jobs | model 2, lag 1 | pipelined 2 | "
           "pipelined 4 |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
           "---|---|---|---|---|---|\n", 1e6 * MPI_MSG, 1e6 * MPI_LOOK, 1e6 * MPI_LAT);
  /* Batches 4, 16 and 32, and BATCH when it is none of them. */
  enum { N_SPECS = sizeof specs / sizeof *specs, MAX_PROFILED = 4 };
  int profiled[MAX_PROFILED] = {4, 16, 32, batch}, n_profiled = 3;
  if (batch && batch != 4 && batch != 16 && batch != 32) n_profiled = 4;
  outcome prof_out[N_SPECS][MAX_PROFILED];
  for (size_t k = 0; k < n_specs && !timed_only; ++k)
    for (int q = 0; q < n_profiled; ++q) {
      spec sp = specs[k];
      sp.batch = profiled[q];
      if (profile_table_row(&sp, &prof_out[k][q])) return 1;
    }
  if (!timed_only) printf("\n");
  if (profile_only) return 0;
  printf("Timed runs, in %d rounds (each configuration once per round, "
         "the order reversed every other round). vs 1 thread: the median "
         "speeds' ratio; per round: the median of each round's ratio to "
         "that round's 1-thread run [least-most]. CPU efficiency: CPU "
         "seconds per expansion of the round's 1-thread (threads) or "
         "1-rank (ranks) run over this run's, all threads or processes "
         "(ranks: mpirun's whole CPU less that of a 1-node start-up run "
         "made just before), median of the rounds; threads: in parentheses "
         "the same for the threads' CPU inside the expansions only "
         "(cp_plan_world_seconds), which leaves out polling and the "
         "search's serial part. CPU busy: those CPU "
         "seconds per wall second of the search (1 thread: about 1; a "
         "round's speed ratio is exactly efficiency x busy / the 1-thread "
         "run's busy, so a loaded machine shows in busy, work the parallel "
         "code adds in efficiency). Default rows: what a user gets "
         "(search.pipeline not given: rrt and sst at batch B >= 4 pipeline "
         "halves of B / 2, 2xH in the row, batch k + 1 chosen before batch "
         "k is merged, B jobs in flight); plain rows "
         "(search.pipeline false: another tree, the same for any number of "
         "workers): their speed ratios, \"same\" and CPU efficiency are "
         "against the plain 1-thread (or 1-rank) run. Expansions per second are the "
         "search's: its expansions over its own seconds (cp_plan_search, "
         "from its start to its last commit; ranks: rank 0's, which begins "
         "after MPI's start, the task's load, the worlds and the workers' "
         "hellos). That start-up is reported apart: the wall and CPU "
         "seconds of the whole mpirun with a 1-node limit, made just before "
         "each ranks run (median of the rounds). Rounds at the target: "
         "the rounds whose ratio reached 1.8x (2 threads) or 1.7x (2 "
         "ranks). Load-independent beside them: the serial share of the "
         "mode's 1-thread run (its thread's CPU outside the expansions: "
         "choosing, merging, the store's commits -- which workers overlap, "
         "so the bound is a little low -- median of the rounds) and "
         "Amdahl's bound 1 / (s + (1 - s) / w) for 2, 16 and 64 workers\n\n"
         "| task | planner | batch | nodes | run | processes/threads on 2 "
         "cores | expansions/s (median) | vs 1 thread | vs 1 thread per "
         "round, median [least-most] | rounds at the target | serial share "
         "of 1 thread: Amdahl 2 / 16 / 64 | CPU efficiency | CPU busy | same "
         "nodes and plan | jobs: workers / rank 0 | bytes per worker "
         "expansion | MPI start-up: 1-node mpirun, wall s / CPU s |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
         "---|\n",
         repeats);
  double model_in[sizeof specs / sizeof *specs][3];
  /* Rank 0 in the batches, per task and ranks configuration (first
   * repeat), and the jobs its workers ran. */
  outcome rank0_of[sizeof specs / sizeof *specs][N_CONFIGS];
  /* The control's table: per task, its default and plain rows. */
  char ctl_rows[sizeof specs / sizeof *specs][2][512];
  int batch_of[sizeof specs / sizeof *specs];
  for (size_t k = 0; k < n_specs; ++k) {
    spec sp1 = specs[k];
    if (batch) sp1.batch = batch;
    const spec *sp = &sp1;
    cp_task task;
    cp_error err;
    if (cp_task_load(sp->task, &task, &err)) {
      fprintf(stderr, "bench_parallel: %s: %s: %s\n", sp->task, err.where,
              err.msg);
      return 1;
    }
    char *tmp = task_with_batch(sp->task, sp->batch, 0);
    char *tmp_pipe = tmp ? task_with_batch(sp->task, sp->batch, 1) : NULL;
    if (!tmp_pipe) {
      if (tmp) unlink(tmp);
      return 1;
    }
    cp_task task_pipe = task; /* the same task: the default, pipelined */
    task_pipe.search_pipeline = -1;
    task.search_pipeline = 0; /* and plain */
    outcome res[N_CONFIGS][MAX_REPEATS];
    /* Ranks: the start-up run's wall and CPU seconds, per round. */
    double up_wall[N_CONFIGS][MAX_REPEATS], up_cpu[N_CONFIGS][MAX_REPEATS];
    int ok[N_CONFIGS];
    for (int c = 0; c < N_CONFIGS; ++c) ok[c] = 1;
    /* Rounds: every configuration once, forwards in even rounds and
     * backwards in odd ones (so no configuration always runs next to the
     * 1-thread run), each ranks run after a start-up run of its own (the
     * same mpirun with a 1-node limit: MPI's start, the task's load, the
     * worlds) whose CPU is subtracted from the run's. */
    spec sp_start = *sp;
    sp_start.nodes = 1;
    /* The steps of a round: the configurations, each mode's control (two
     * independent 1-thread runs at once, run_pair; step -1 - pipe) right
     * after its 1-thread run (right before it in backward rounds). */
    int step[N_CONFIGS + 2], n_steps = 0;
    for (int c = 0; c < N_CONFIGS; ++c) {
      step[n_steps++] = c;
      if (first_of(c) == c) step[n_steps++] = -1 - configs[c].pipe;
    }
    outcome ctl[2][MAX_REPEATS][2];
    int ctl_ok[2] = {1, 1};
    for (int i = 0; i < repeats; ++i)
      for (int q = 0; q < n_steps; ++q) {
        int c = step[i % 2 ? n_steps - 1 - q : q];
        if (c < 0) {
          /* The control, after a 1-node pair made the same way whose
           * CPU (the processes' start-up: the task's load, the world, the
           * store) is subtracted from each run's. */
          int pipe = -1 - c;
          outcome *two = ctl[pipe][i], up[2];
          if (run_pair(pipe ? tmp_pipe : tmp, &sp_start, up) ||
              run_pair(pipe ? tmp_pipe : tmp, sp, two)) {
            unlink(tmp);
            unlink(tmp_pipe);
            return 1;
          }
          for (int j = 0; j < 2; ++j) {
            two[j].pcpu -= up[j].pcpu;
            ctl_ok[pipe] &= same(&res[config_of(1, 0, pipe)][0], &two[j]);
          }
          continue;
        }
        outcome *o = &res[c][i], start;
        const char *file = configs[c].pipe ? tmp_pipe : tmp;
        int rc = configs[c].threads
                     ? run_threads(configs[c].pipe ? &task_pipe : &task, sp,
                                   configs[c].threads, o)
                     : run_ranks(file, &sp_start, configs[c].ranks, &start) ||
                           run_ranks(file, sp, configs[c].ranks, o);
        if (rc) {
          unlink(tmp);
          unlink(tmp_pipe);
          return 1;
        }
        if (!configs[c].threads) {
          o->pcpu -= start.pcpu;
          up_wall[c][i] = start.spawn_wall;
          up_cpu[c][i] = start.pcpu;
        }
        /* Round 0's 1-thread run of the mode (plain or pipelined; round
         * 0 runs forwards, so it came first) is the reference of "same". */
        if (i || c != first_of(c)) ok[c] &= same(&res[first_of(c)][0], o);
      }
    /* The profiled run (its timing wrappers) made the same search. */
    for (int q = 0; q < n_profiled && !timed_only; ++q)
      if (profiled[q] == sp->batch)
        ok[plain_one()] &= same(&res[plain_one()][0], &prof_out[k][q]);
    unlink(tmp);
    free(tmp);
    unlink(tmp_pipe);
    free(tmp_pipe);
    double r1[2] = {0, 0}, cpu[MAX_REPEATS], serial[MAX_REPEATS], bytes = 0;
    for (int i = 0; i < repeats; ++i) {
      cpu[i] = res[0][i].cpu / (double)res[0][i].expansions;
      serial[i] = 1 - res[0][i].sim / res[0][i].cpu;
    }
    for (int c = 0; c < N_CONFIGS; ++c) {
      /* Per round: the speed against that round's 1-thread run, and its
       * two factors (CPU per expansion against the round's run with one
       * worker of the same kind; CPU seconds per wall second against the
       * 1-thread run's): ratio = efficiency x (busy / busy of 1 thread). */
      double rate[MAX_REPEATS], ratio[MAX_REPEATS], eff[MAX_REPEATS],
          busy[MAX_REPEATS], esim[MAX_REPEATS];
      int base = base_of(c), one = first_of(c);
      for (int i = 0; i < repeats; ++i) {
        const outcome *o = &res[c][i], *b = &res[base][i];
        rate[i] = o->rate;
        ratio[i] = o->rate / res[one][i].rate;
        eff[i] = (b->pcpu / (double)b->expansions) /
                 (o->pcpu / (double)o->expansions);
        busy[i] = o->pcpu / o->wall;
        /* Threads: the same within the expansions only (the threads' CPU
         * inside jobs), which leaves out a waiting thread's polling. */
        esim[i] = configs[c].threads ? (b->sim / (double)b->expansions) /
                                           (o->sim / (double)o->expansions)
                                     : 0;
      }
      /* Load-independent, beside the ratio: the serial share of the
       * mode's 1-thread run (its thread's CPU outside the expansions)
       * and the bounds it sets (Amdahl); and how many rounds reached the
       * target (2 threads 1.8x, 2 ranks 1.7x). */
      double ser[MAX_REPEATS];
      int at_target = 0;
      const double target = configs[c].threads ? 1.8 : 1.7;
      for (int i = 0; i < repeats; ++i) {
        ser[i] = 1 - res[one][i].sim / res[one][i].cpu;
        at_target += ratio[i] >= target;
      }
      double smed = bench_median(ser, repeats);
      double r = bench_median(rate, repeats);
      double rmed = bench_median(ratio, repeats);
      double emed = bench_median(eff, repeats);
      double bmed = bench_median(busy, repeats);
      if (c == one) r1[configs[c].pipe] = r;
      const outcome *o = &res[c][0];
      char run[48], procs[48], jobs[48], per[32];
      int count = configs[c].threads ? configs[c].threads : configs[c].ranks;
      char mode[48];
      snprintf(run, sizeof run, "%d %s%s", count,
               configs[c].threads ? (count == 1 ? "thread" : "threads")
                                  : (count == 1 ? "rank" : "ranks"),
               mode_label(&configs[c], sp->method, sp->batch, mode,
                          sizeof mode));
      snprintf(procs, sizeof procs, "%d%s", count,
               count > 2 ? " (oversubscribed)" : "");
      snprintf(jobs, sizeof jobs, "%s", "-");
      snprintf(per, sizeof per, "%s", "-");
      if (configs[c].ranks) {
        snprintf(jobs, sizeof jobs, "%lld / %lld", o->jobs, o->own);
        if (o->jobs) {
          snprintf(per, sizeof per, "%.0f", (double)o->bytes / (double)o->jobs);
          if (configs[c].ranks == 2 && configs[c].pipe)
            bytes = (double)o->bytes / (double)o->jobs;
        }
      }
      char eff_s[32] = "-", up[48] = "-";
      if (c != base && configs[c].threads)
        snprintf(eff_s, sizeof eff_s, "%.0f%% (in expansions %.0f%%)",
                 100 * emed, 100 * bench_median(esim, repeats));
      else if (c != base)
        snprintf(eff_s, sizeof eff_s, "%.0f%%", 100 * emed);
      if (configs[c].ranks)
        snprintf(up, sizeof up, "%.2f / %.2f",
                 bench_median(up_wall[c], repeats),
                 bench_median(up_cpu[c], repeats));
      char amdahl[96] = "-", reached[48] = "-";
      if (c != one)
        snprintf(amdahl, sizeof amdahl, "%.1f%%: %.2fx / %.1fx / %.1fx",
                 100 * smed, amdahl_bound(smed, 2), amdahl_bound(smed, 16),
                 amdahl_bound(smed, 64));
      if (count == 2)
        snprintf(reached, sizeof reached, "%d of %d (%.1fx)", at_target,
                 repeats, target);
      printf("| %s | %s | %d | %ld | %s | %s | %.0f | %.2fx | %.2fx "
             "[%.2f-%.2f] | %s | %s | %s | %.2f | %s | %s | %s | %s |\n",
             strrchr(sp->task, '/') + 1, sp->method, sp->batch, o->nodes, run,
             procs, r, r / r1[configs[c].pipe], rmed, ratio[0],
             ratio[repeats - 1], reached, amdahl, eff_s, bmed,
             ok[c] ? "yes" : "NO", jobs, per, up);
      fflush(stdout);
    }
    /* The control of each mode (default first, as in the table above):
     * what two workers that never coordinate get from this machine, the
     * ceiling of the 2-thread and 2-rank rows of that round. */
    for (int pipe = 1; pipe >= 0; --pipe) {
      int one = config_of(1, 0, pipe), t2 = config_of(2, 0, pipe),
          r2 = config_of(0, 2, pipe);
      double ratio[MAX_REPEATS], slow[2][MAX_REPEATS], both[MAX_REPEATS],
          over_t[MAX_REPEATS], over_r[MAX_REPEATS];
      for (int i = 0; i < repeats; ++i) {
        const outcome *lone = &res[one][i], *two = ctl[pipe][i];
        double sum = two[0].rate + two[1].rate;
        ratio[i] = sum / lone->rate;
        for (int j = 0; j < 2; ++j)
          slow[j][i] = (two[j].pcpu / (double)two[j].expansions) /
                       (lone->cpu / (double)lone->expansions);
        both[i] = pair_overlap(two);
        over_t[i] = res[t2][i].rate / sum;
        over_r[i] = res[r2][i].rate / sum;
      }
      char mode[48];
      mode_label(&configs[one], sp->method, sp->batch, mode, sizeof mode);
      double rmed = bench_median(ratio, repeats);
      double s0 = bench_median(slow[0], repeats);
      double s1 = bench_median(slow[1], repeats);
      double bmed = bench_median(both, repeats);
      double tmed = bench_median(over_t, repeats);
      double qmed = bench_median(over_r, repeats);
      snprintf(ctl_rows[k][1 - pipe], sizeof ctl_rows[k][1 - pipe],
               "| %s | %s | %d | %s | %ld / %ld | %.2fx [%.2f-%.2f] | "
               "%.2f / %.2f | %.0f%% [%.0f%%] | %s | %.2f [%.2f-%.2f] | "
               "%.2f [%.2f-%.2f] |\n",
               strrchr(sp->task, '/') + 1, sp->method, sp->batch, mode + 2,
               ctl[pipe][0][0].nodes, ctl[pipe][0][1].nodes, rmed, ratio[0],
               ratio[repeats - 1], s0, s1, 100 * bmed, 100 * both[0],
               ctl_ok[pipe] ? "yes" : "NO", tmed, over_t[0],
               over_t[repeats - 1], qmed, over_r[0], over_r[repeats - 1]);
    }
    for (int c = 0; c < N_CONFIGS; ++c) rank0_of[k][c] = res[c][0];
    batch_of[k] = sp->batch;
    model_in[k][0] = bench_median(cpu, repeats);
    model_in[k][1] = bench_median(serial, repeats);
    model_in[k][2] = bytes;
    cp_task_free(&task);
  }
  printf("\nThe control: in every round, next to the mode's 1-thread "
         "run, two 1-thread searches of the same task at once, as two "
         "processes (`complan plan TASK --threads 1 --json`, each its own "
         "database) that share nothing but the machine. Control: their "
         "summed expansions per second over the lone 1-thread run's, per "
         "round, median [least-most]: what this machine gives two workers "
         "that never coordinate, the ceiling of the 2-thread and 2-rank "
         "rows. CPU per expansion: each control run's CPU seconds per "
         "expansion (the process's, less that of a 1-node pair started the "
         "same way) over the lone run's (its thread's, in the search), "
         "median of the rounds: the machine's per-core slowdown when both "
         "cores are busy. Both searching: the share of the two searches' "
         "span during which both ran (each search the `seconds` before its "
         "process ended), median [least]. Over the control: the 2-thread "
         "and 2-rank rows' expansions per second over the control's summed "
         "ones in the same round, median [least-most]: the parallel code's "
         "efficiency with the machine's share taken out (1.00: as good as "
         "two runs that never coordinate)\n\n"
         "| task | planner | batch | mode | nodes (first round) | control: "
         "2 runs / lone 1 thread | CPU per expansion over the lone run's, "
         "run 1 / run 2 | both searching | same nodes and plan | 2 threads "
         "over the control | 2 ranks over the control |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (size_t k = 0; k < n_specs; ++k)
    printf("%s%s", ctl_rows[k][0], ctl_rows[k][1]);
  /* Rank 0's CPU in the batches (thread CPU: less load-bound than the
   * speeds, though a loaded machine's caches and wake-ups still show). */
  printf("\nRank 0 in the batches of the ranks runs (first repeat; thread "
         "CPU per batch, us): the jobs it ran itself, the store's commits, "
         "the messages (encoding and sending jobs, receiving and decoding "
         "outcomes), looking for answers between its jobs (MPI_Iprobe), "
         "waiting for the last answers; and the messages and looking per "
         "job a worker ran, and the looks (made while jobs were left to hand "
         "out) and fruitless looks per worker job\n\n"
         "| task | batch | ranks | batches | own jobs | store | messages | "
         "looking | waiting | messages + looking per worker job (us) | "
         "looks / fruitless per worker job |\n"
         "|---|---|---|---|---|---|---|---|---|---|---|\n");
  for (size_t k = 0; k < n_specs; ++k)
    for (int c = 0; c < N_CONFIGS; ++c) {
      const outcome *o = &rank0_of[k][c];
      if (!configs[c].ranks || !(o->r0[0] > 0)) continue;
      double b = o->r0[0];
      char per[32] = "-", looks[48] = "-", mode[48];
      if (o->jobs)
        snprintf(per, sizeof per, "%.1f",
                 1e6 * (o->r0[3] + o->r0[4]) / (double)o->jobs);
      if (o->jobs && o->looks >= 0)
        snprintf(looks, sizeof looks, "%.1f / %.1f",
                 (double)o->looks / (double)o->jobs,
                 (double)o->fruitless / (double)o->jobs);
      printf("| %s | %d | %d%s | %.0f | %.0f | %.0f | %.0f | %.0f | %.0f | "
             "%s | %s |\n",
             strrchr(specs[k].task, '/') + 1, batch_of[k], configs[c].ranks,
             mode_label(&configs[c], specs[k].method, batch_of[k], mode,
                        sizeof mode),
             b, 1e6 * o->r0[1] / b, 1e6 * o->r0[2] / b, 1e6 * o->r0[3] / b,
             1e6 * o->r0[4] / b, 1e6 * o->r0[5] / b, per, looks);
    }
  /* The model: two networks, batch 4 (as measured) and batch = ranks. */
  printf("\nModel (see docs/parallel.md): rank 0 per message pair o = 5 us "
         "CPU; gigabit Ethernet: 50 us round trip, 117 MB/s; InfiniBand-"
         "class: 3 us, 10 GB/s.\n\n"
         "| task | CPU ms/expansion (1 thread) | serial share | bytes/"
         "expansion | E(16), 1 GbE, batch 4 | E(16), 1 GbE, batch 16 | "
         "E(64), 1 GbE, batch 64 | E(64), IB, batch 64 |\n"
         "|---|---|---|---|---|---|---|---|\n");
  for (size_t k = 0; k < n_specs; ++k) {
    double t = model_in[k][0], s = model_in[k][1], b = model_in[k][2];
    printf("| %s | %.3f | %.1f%% | %.0f | %.0f%% | %.0f%% | %.0f%% | %.0f%% "
           "|\n",
           strrchr(specs[k].task, '/') + 1, 1e3 * t, 100 * s, b,
           100 * efficiency(16, t, s, b, 50e-6, 117e6, 5e-6, 4),
           100 * efficiency(16, t, s, b, 50e-6, 117e6, 5e-6, 16),
           100 * efficiency(64, t, s, b, 50e-6, 117e6, 5e-6, 64),
           100 * efficiency(64, t, s, b, 3e-6, 10e9, 5e-6, 64));
  }
  /* `--benchmark --mpi`: what a run's store costs to send back, fixed and
   * per node (two node limits, the difference per node). */
  const long lim[2] = {200, 600};
  long long got[2];
  for (int i = 0; i < 2; ++i)
    if (bench_ranks_bytes(specs[0].task, 3, 4, lim[i], &got[i])) return 1;
  double per_node = (double)(got[1] - got[0]) / 4.0 / (double)(lim[1] - lim[0]);
  printf("\nBenchmark over ranks (`mpirun -n 3 complan plan %s --benchmark 4 "
         "--planners sst --mpi`): bytes of the runs' stores back per run\n\n"
         "| node limit | bytes per run |\n|---|---|\n"
         "| %ld | %.0f |\n| %ld | %.0f |\n\n"
         "per node %.0f bytes, fixed per run %.0f bytes\n",
         strrchr(specs[0].task, '/') + 1, lim[0], (double)got[0] / 4.0,
         lim[1], (double)got[1] / 4.0, per_node,
         (double)got[0] / 4.0 - per_node * (double)lim[0]);
  return 0;
}
