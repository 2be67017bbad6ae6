/* Benchmarks (cp_plan_benchmark, planner/plan/plan.h): runs of each
 * planner with seeds seed, seed + 1, ..., every run a full search stored as
 * usual and summarised in OMPL's benchmark tables.
 *
 * On several threads (cp_bench_options.threads) each thread owns a world
 * and a connection to the database and takes the next run; a run waits to
 * start its search until the run before it has its row (the `started`
 * hook of cp_plan_options), so the runs get the ids of a one-thread
 * benchmark; the calling thread writes the benchmark rows run by run, in
 * order, as they finish. A run's nodes depend on its planner and seed
 * only, never on which thread searched it.
 *
 * Elsewhere (cp_bench_options.remote: MPI ranks) the runs are searched in
 * other processes' stores and brought into this one in run order
 * (cp_store_import_run), so they get the ids of a one-thread benchmark
 * too. */
#include "contact/glpkout.h"
#include "planner/plan/plan.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sample {
  double t, cost, dist;
  long nodes, expansions;
} sample;

typedef struct series {
  sample *v;
  int n, cap;
} series;

static void record(void *ctx, const cp_plan_progress *p) {
  series *s = ctx;
  if (s->n == s->cap) {
    int cap = s->cap ? 2 * s->cap : 64;
    sample *v = realloc(s->v, (size_t)cap * sizeof *v);
    if (!v) return;
    s->v = v;
    s->cap = cap;
  }
  s->v[s->n++] = (sample){p->elapsed, p->best_cost, p->best_distance,
                          p->nodes, p->expansions};
}

cp_bench_run cp_plan_bench_row(const cp_plan_result *res, double memory) {
  cp_bench_run br = {0};
  br.search_id = res->run_id;
  br.time = res->session_seconds;
  br.memory = memory;
  br.solved = res->status == CP_PLAN_SOLVED;
  br.status = res->status == CP_PLAN_SOLVED  ? 6
              : res->status == CP_PLAN_LIMIT ? 4
                                             : 0;
  br.graph_states = res->nodes;
  br.solution_length = (double)res->length;
  br.best_cost = res->cost;
  br.expansions = res->stats.expansions;
  br.lcp_solves = (long)res->stats.lcp_solves;
  br.lemke_pivots = (long)res->stats.pivots;
  br.fallbacks = (long)res->stats.fallbacks;
  br.steps = (long)res->stats.steps;
  br.duplicates = res->stats.duplicates;
  br.rejected = res->stats.rejected;
  br.best_distance = res->best_distance;
  return br;
}

static cp_plan_status store_failed(cp_store *st, cp_store_status s,
                                   cp_error *err) {
  cp_error_set(err, "", "%s", cp_store_message(st));
  return s == CP_STORE_BAD_FILE || s == CP_STORE_CHANGED ? CP_PLAN_BAD_INPUT
                                                         : CP_PLAN_FAILED;
}

/* What the runs share. */
typedef struct bench_ctx {
  cp_store *st;               /* the caller's */
  const cp_task *task;
  const cp_bench_options *bo;
  const char *const *planners;
  const char *world_options;
  double limit;
  int n_runs;                 /* planners x runs, in order */
  int state_size;
} bench_ctx;

/* One run: which, and what it gave. */
typedef struct run_slot {
  cp_plan_status status;
  cp_plan_result res;
  cp_error err;
  series ser;
  int done;                   /* (threads: under the mutex) */
} run_slot;

/* The options of run k: planner k / runs, seed task->seed + k % runs. */
static cp_plan_options run_options(const bench_ctx *b, int k) {
  cp_plan_options o = cp_plan_defaults();
  o.method = b->planners[k / b->bo->runs];
  o.has_seed = 1;
  o.seed = b->task->seed + (uint64_t)(k % b->bo->runs);
  o.max_seconds = b->limit;
  o.max_nodes = b->task->max_nodes;
  o.task_path = b->bo->task_path;
  o.world_options = b->world_options;
  o.cancel = b->bo->cancel;
  return o;
}

/* Searches run k of problem p from x0 into st; started (may be NULL)
 * hears of its row. */
static void search_run(const bench_ctx *b, cp_store *st,
                       const cp_search_problem *p, const double *x0, int k,
                       run_slot *slot,
                       void (*started)(void *ctx, int64_t run_id),
                       void *started_ctx) {
  cp_plan_options o = run_options(b, k);
  o.progress = record;
  o.progress_ctx = &slot->ser;
  o.progress_interval = 0.05;
  o.started = started;
  o.started_ctx = started_ctx;
  slot->ser.n = 0;
  slot->status = cp_plan_search(st, b->task, p, x0, &o, &slot->res,
                                &slot->err);
}

/* The benchmark rows of a finished run (run and progress samples) and the
 * caller's progress callback. */
static cp_store_status write_rows(const bench_ctx *b, int64_t eid,
                                  int64_t pid, int k, const run_slot *slot) {
  const cp_plan_result *res = &slot->res;
  cp_bench_run br = cp_plan_bench_row(
      res, (double)res->nodes *
               (double)(sizeof(cp_search_node) +
                        (size_t)b->state_size * sizeof(double)) /
               1048576.0);
  int64_t rid;
  cp_store_status ss = cp_store_bench_run(b->st, eid, pid, &br, &rid);
  for (int i = 0; i < slot->ser.n && !ss; ++i) {
    const sample *s = &slot->ser.v[i];
    ss = cp_store_bench_progress(b->st, rid, s->t, s->cost, s->nodes,
                                 s->expansions, s->dist);
  }
  if (!ss)
    ss = cp_store_bench_progress(b->st, rid, res->session_seconds, res->cost,
                                 res->nodes, res->stats.expansions,
                                 res->best_distance);
  if (b->bo->progress)
    b->bo->progress(b->bo->progress_ctx, b->planners[k / b->bo->runs],
                    k % b->bo->runs, res);
  return ss;
}

/* ---- several threads ---------------------------------------------------- */

typedef struct pool {
  const bench_ctx *b;
  run_slot *slots;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  int next;                   /* the next run to take */
  int started;                /* runs 0 .. started-1 have their rows */
  int stop;                   /* take no more runs */
} pool;

typedef struct starter {
  pool *pl;
  int k;
} starter;

/* Run k has its row (or ended without one): run k + 1 may start. */
static void mark_started(void *ctx, int64_t run_id) {
  (void)run_id;
  starter *s = ctx;
  pthread_mutex_lock(&s->pl->mu);
  if (s->pl->started < s->k + 1) s->pl->started = s->k + 1;
  pthread_cond_broadcast(&s->pl->cv);
  pthread_mutex_unlock(&s->pl->mu);
}

static void *runner(void *arg) {
  pool *pl = arg;
  const bench_ctx *b = pl->b;
  cp_store *st = NULL;
  cp_plan_world *pw = NULL;
  cp_error setup;
  char msg[512];
  int ok = 0;
  if (cp_store_open(b->bo->db, 0, &st, msg, sizeof msg))
    cp_error_setc(&setup, CP_ERR_IO, "", "%s", msg);
  else if (!cp_plan_world_create(b->task, 1, &pw, &setup)) {
    cp_plan_world_set_timing(pw, 0); /* the runs' seconds are the budget's */
    ok = 1;
  }
  for (;;) {
    pthread_mutex_lock(&pl->mu);
    int k = pl->next;
    if (pl->stop || k >= b->n_runs) {
      pthread_mutex_unlock(&pl->mu);
      break;
    }
    pl->next++;
    while (pl->started < k && !pl->stop) pthread_cond_wait(&pl->cv, &pl->mu);
    int skip = pl->stop;
    pthread_mutex_unlock(&pl->mu);
    run_slot *slot = &pl->slots[k];
    starter s = {pl, k};
    if (!ok) { /* this thread has no connection or world */
      slot->status = CP_PLAN_FAILED;
      slot->err = setup;
    } else if (skip) { /* an earlier run failed: the benchmark ends there */
      slot->status = CP_PLAN_FAILED;
      cp_error_set(&slot->err, "", "benchmark stopped");
    } else {
      search_run(b, st, cp_plan_world_problem(pw), cp_plan_world_start(pw),
                 k, slot, mark_started, &s);
    }
    mark_started(&s, -1);
    pthread_mutex_lock(&pl->mu);
    slot->done = 1;
    if (slot->status == CP_PLAN_BAD_INPUT || slot->status == CP_PLAN_FAILED ||
        slot->status == CP_PLAN_INTERRUPTED)
      pl->stop = 1;
    pthread_cond_broadcast(&pl->cv);
    pthread_mutex_unlock(&pl->mu);
  }
  cp_plan_world_destroy(pw);
  if (st) cp_store_close(st);
  cp_glpk_thread_end(); /* the thread's GLPK environment, if a run made one */
  return NULL;
}

/* ---- elsewhere (cp_bench_remote) ---------------------------------------- */

/* Stopped by bo->cancel (a rank died, or the user): runs from..next-1
 * that ended are brought into the store with their rows (in run order);
 * each one still under way gets its row and start node, stored as
 * interrupted by a search under the set cancel flag (its nodes were in the
 * searching process, lost); err says so. */
static cp_plan_status interrupt_runs(const bench_ctx *b, run_slot *slots,
                                     int from, int next,
                                     const cp_search_problem *p,
                                     const double *x0, const int64_t *pids,
                                     int64_t eid, cp_store_status *ss,
                                     cp_error *err) {
  const cp_bench_remote *r = b->bo->remote;
  int kept = from, stored = 0;
  for (int k = from; k < next && !*ss; ++k) {
    run_slot *slot = &slots[k];
    if (slot->done && slot->status != CP_PLAN_BAD_INPUT &&
        slot->status != CP_PLAN_FAILED) {
      if (r->import(r->ctx, b->st, k, &slot->res, err)) return CP_PLAN_FAILED;
      *ss = write_rows(b, eid, pids[k / b->bo->runs], k, slot);
      ++kept;
      continue;
    }
    cp_plan_options o = run_options(b, k); /* its cancel flag is set */
    cp_plan_result res;
    cp_error e;
    cp_plan_status s = cp_plan_search(b->st, b->task, p, x0, &o, &res, &e);
    if (s != CP_PLAN_INTERRUPTED) {
      *err = e;
      return s == CP_PLAN_BAD_INPUT ? s : CP_PLAN_FAILED;
    }
    ++stored;
  }
  cp_error_setc(err, CP_ERR_IO, "benchmark",
                "benchmark stopped: %d run%s kept, %d run%s under way stored "
                "as interrupted (plan --resume continues the last), %d not "
                "started", kept, kept == 1 ? "" : "s", stored,
                stored == 1 ? "" : "s", b->n_runs - kept - stored);
  return CP_PLAN_INTERRUPTED;
}

/* The runs on bo->remote: up to its slots under way; each ended run is
 * brought into the store and its benchmark rows written in run order.
 * Before returning, every run under way is waited for, unless bo->cancel
 * stopped the wait (interrupt_runs). */
static cp_plan_status remote_runs(const bench_ctx *b, run_slot *slots,
                                  const cp_search_problem *p,
                                  const double *x0, const int64_t *pids,
                                  int64_t eid, cp_store_status *ss,
                                  cp_error *err) {
  const cp_bench_remote *r = b->bo->remote;
  int next = 0, running = 0, written = 0;
  cp_plan_status result = CP_PLAN_SOLVED;
  while (result == CP_PLAN_SOLVED && !*ss && written < b->n_runs) {
    while (next < b->n_runs && running < r->slots) {
      cp_plan_options o = run_options(b, next);
      if (r->start(r->ctx, next, &o, err)) {
        result = CP_PLAN_FAILED;
        break;
      }
      ++next;
      ++running;
    }
    for (; result == CP_PLAN_SOLVED && !*ss && written < next &&
           slots[written].done;
         ++written) {
      run_slot *slot = &slots[written];
      if (slot->status == CP_PLAN_BAD_INPUT ||
          slot->status == CP_PLAN_FAILED) {
        result = slot->status;
        *err = slot->err;
      } else if (r->import(r->ctx, b->st, written, &slot->res, err)) {
        result = CP_PLAN_FAILED;
      } else {
        *ss = write_rows(b, eid, pids[written / b->bo->runs], written, slot);
      }
    }
    if (result != CP_PLAN_SOLVED || *ss || written == b->n_runs) break;
    if (!running) { /* cannot happen: a run not done is under way */
      cp_error_setc(err, CP_ERR_IO, "benchmark", "no run under way");
      result = CP_PLAN_FAILED;
      break;
    }
    int k = -1;
    cp_plan_status st;
    cp_plan_result res;
    cp_error run_err = {0};
    const cp_plan_progress *sv = NULL;
    int ns = 0;
    int failed = r->wait(r->ctx, &k, &st, &res, &run_err, &sv, &ns, err);
    if (failed && b->bo->cancel && cp_search_cancelled(b->bo->cancel))
      return interrupt_runs(b, slots, written, next, p, x0, pids, eid, ss,
                            err);
    if (failed || k < 0 || k >= next || slots[k].done) {
      if (k >= 0 && (k >= next || slots[k].done))
        cp_error_setc(err, CP_ERR_IO, "benchmark",
                      "run %d came back but was not under way", k);
      result = CP_PLAN_FAILED;
      --running; /* a run came back failed; the others are let finish */
      break;
    }
    --running;
    run_slot *slot = &slots[k];
    slot->status = st;
    slot->res = res;
    slot->err = run_err;
    slot->ser.n = 0;
    for (int i = 0; i < ns; ++i) record(&slot->ser, &sv[i]);
    slot->done = 1;
  }
  /* Stopped early: the runs under way are let finish (and dropped). */
  while (running-- > 0) {
    int k;
    cp_plan_status st;
    cp_plan_result res;
    cp_error run_err, e;
    const cp_plan_progress *sv;
    int ns;
    if (r->wait(r->ctx, &k, &st, &res, &run_err, &sv, &ns, &e)) break;
  }
  return result;
}

cp_plan_status cp_plan_benchmark(cp_store *st, const cp_task *task,
                                 const cp_search_problem *p, const double *x0,
                                 const char *world_options,
                                 const cp_bench_options *bo,
                                 int64_t *experiment_id, cp_error *err) {
  const char *const own[] = {task->method, NULL};
  bench_ctx b = {st, task, bo, bo->planners ? bo->planners : own,
                 world_options,
                 bo->max_seconds > 0 ? bo->max_seconds : task->max_seconds, 0,
                 p->n};
  int n_planners = 0;
  while (b.planners[n_planners]) ++n_planners;
  b.n_runs = n_planners * bo->runs;
  int threads = bo->remote ? 1
                : bo->threads < b.n_runs ? bo->threads
                                         : b.n_runs;
  if (threads > 1 && !bo->db) {
    cp_error_set(err, "threads", "a benchmark on %d threads needs the "
                 "database's path", threads);
    return CP_PLAN_BAD_INPUT;
  }
  char hash[CP_TASK_KEY_SIZE], name[96];
  cp_task_hash(task, hash);
  snprintf(name, sizeof name, "complan task %s", hash);
  cp_store_status ss = cp_store_bench_experiment(
      st, name, task->text, b.limit, bo->runs, task->seed, experiment_id);
  /* The planners' rows first (the same ids as one after another). */
  int64_t *pids = calloc((size_t)(n_planners ? n_planners : 1), sizeof *pids);
  run_slot *slots = calloc((size_t)(b.n_runs ? b.n_runs : 1), sizeof *slots);
  if (!pids || !slots) {
    free(pids);
    free(slots);
    cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
    return CP_PLAN_FAILED;
  }
  for (int pi = 0; !ss && pi < n_planners; ++pi) {
    char pname[64], settings[256];
    snprintf(pname, sizeof pname, "control_complan_%s", b.planners[pi]);
    snprintf(settings, sizeof settings,
             "{\"method\": \"%s\", \"weight\": %g, \"goal_bias\": %g, "
             "\"candidates\": %d, \"delta_bn\": %g, \"delta_s\": %g}",
             b.planners[pi], task->weight, task->goal_bias, task->candidates,
             task->delta_bn, task->delta_s);
    ss = cp_store_bench_planner(st, pname, settings, &pids[pi]);
  }
  cp_plan_status result = CP_PLAN_SOLVED;
  double t0 = cp_search_budget_now(NULL);
  pool pl = {.b = &b, .slots = slots};
  pthread_t *tids = NULL;
  int started = 0;
  if (!ss && threads > 1) {
    pthread_mutex_init(&pl.mu, NULL);
    pthread_cond_init(&pl.cv, NULL);
    tids = calloc((size_t)threads, sizeof *tids);
    for (; tids && started < threads; ++started)
      if (pthread_create(&tids[started], NULL, runner, &pl)) break;
    if (!started) {
      cp_error_setc(err, CP_ERR_NOMEM, "threads", "cannot start a thread");
      result = CP_PLAN_FAILED;
    }
  }
  if (!ss && bo->remote)
    result = remote_runs(&b, slots, p, x0, pids, *experiment_id, &ss, err);
  for (int k = 0; !bo->remote && !ss && result == CP_PLAN_SOLVED &&
                  k < b.n_runs;
       ++k) {
    run_slot *slot = &slots[k];
    if (started) {
      pthread_mutex_lock(&pl.mu);
      while (!slot->done) pthread_cond_wait(&pl.cv, &pl.mu);
      pthread_mutex_unlock(&pl.mu);
    } else {
      search_run(&b, st, p, x0, k, slot, NULL, NULL);
    }
    if (slot->status == CP_PLAN_BAD_INPUT || slot->status == CP_PLAN_FAILED) {
      result = slot->status;
      *err = slot->err;
      break;
    }
    if (slot->status == CP_PLAN_INTERRUPTED) { /* bo->cancel */
      result = CP_PLAN_INTERRUPTED;
      cp_error_setc(err, CP_ERR_IO, "benchmark", "benchmark stopped: %d "
                    "run%s kept, the runs under way stored as interrupted "
                    "(plan --resume continues the last)", k,
                    k == 1 ? "" : "s");
      break;
    }
    ss = write_rows(&b, *experiment_id, pids[k / bo->runs], k, slot);
  }
  if (started) {
    pthread_mutex_lock(&pl.mu);
    pl.stop = 1;
    pthread_cond_broadcast(&pl.cv);
    pthread_mutex_unlock(&pl.mu);
    for (int t = 0; t < started; ++t) pthread_join(tids[t], NULL);
    pthread_mutex_destroy(&pl.mu);
    pthread_cond_destroy(&pl.cv);
  }
  free(tids);
  for (int k = 0; k < b.n_runs; ++k) free(slots[k].ser.v);
  free(slots);
  free(pids);
  if (!ss && result != CP_PLAN_INTERRUPTED) /* else: its time stays unset */
    ss = cp_store_bench_finish(st, *experiment_id,
                               cp_search_budget_now(NULL) - t0);
  if (ss) return store_failed(st, ss, err);
  return result;
}
