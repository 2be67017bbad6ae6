/* The workers of a threaded search (planner/plan/pool.h): threads - 1
 * POSIX threads, each owning a cp_plan_world of the task, and the calling
 * thread, which works too. A batch is handed over under the mutex (a new
 * generation); the jobs are taken one at a time from an atomic ticket, so
 * a slow expansion does not hold the others up; the caller waits only for
 * the jobs being run (a worker the scheduler has not woken yet holds
 * nothing up: on a loaded machine waiting for every worker to pass through
 * each batch made 2 threads slower than 1). While there are no more
 * threads than cores, a worker done with a batch polls for the next one
 * for up to 2 ms (the search's serial part between batches is tens of
 * microseconds, a store commit about one millisecond) and the caller
 * polls for the batch's last jobs, before sleeping on the condition
 * variables (planner/plan/spin.h). Which thread ran a job changes nothing
 * in its outcome (its inputs are the parent's stored data), so the
 * search's nodes are the same for any number of threads. */
#include "planner/plan/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "contact/glpkout.h"
#include "planner/plan/spin.h"

typedef struct worker {
  cp_plan_pool *pool;
  cp_plan_world *world;
  pthread_t tid;
} worker;

/* A batch handed to the workers. Two may be out at once (pipelined
 * batches: cp_plan_pool_start, cp_plan_pool_wait); the workers take jobs
 * of the older first. */
typedef struct slot {
  cp_expand_job *jobs;   /* under mu */
  int n_jobs;
  uint32_t gen;          /* the start's generation (under mu); 0: free */
  /* The next job, tagged with the batch's generation (high 32 bits): a
   * worker that looks after its batch is over takes no job of the slot's
   * next batch with the old batch's jobs. */
  _Atomic uint64_t ticket;
  /* Jobs done (counted without mu; the one that completes the batch
   * signals `done` under mu). */
  _Atomic int finished;
} slot;

struct cp_plan_pool {
  int n_worlds;          /* workers with a world */
  int n_workers;         /* workers started */
  worker *workers;
  pthread_mutex_t mu;
  pthread_cond_t go, done;
  /* Counts the starts: changed under mu, read without it by the workers
   * polling for the next batch. */
  _Atomic unsigned long generation;
  int quit;
  slot slots[2];
  int spin; /* whether waits poll first (spin.h: no more threads than cores) */
};

/* Takes one job of s (generation gen, jobs[0..n)) and runs it: 1, or 0
 * when none is left. */
static int take_one(slot *s, const cp_search_problem *p, cp_plan_world *w,
                    uint32_t gen, cp_expand_job *jobs, int n) {
  uint64_t t = atomic_load(&s->ticket);
  for (;;) {
    if ((uint32_t)(t >> 32) != gen || (int)(uint32_t)t >= n) return 0;
    if (atomic_compare_exchange_weak(&s->ticket, &t, t + 1)) break;
  }
  cp_expand_job_run(p->expand, w, &jobs[(uint32_t)t]);
  return 1;
}

/* Takes jobs of generation gen until none is left; returns how many it
 * ran. */
static int work(slot *s, cp_plan_world *w, uint32_t gen, cp_expand_job *jobs,
                int n) {
  const cp_search_problem *p = cp_plan_world_problem(w);
  int ran = 0;
  while (take_one(s, p, w, gen, jobs, n)) ++ran;
  return ran;
}

/* Counts `ran` jobs of s's batch as done (wakes the caller when they are
 * all done). */
static void finish(cp_plan_pool *pool, slot *s, int ran, int n) {
  if (!ran || atomic_fetch_add(&s->finished, ran) + ran != n) return;
  pthread_mutex_lock(&pool->mu);
  pthread_cond_broadcast(&pool->done);
  pthread_mutex_unlock(&pool->mu);
}

/* What a waiting thread polls for (spin.h): a start after generation
 * `seen`, or slot s's n jobs done. */
typedef struct poll_state {
  cp_plan_pool *pool;
  unsigned long seen;
  const slot *s;
  int n;
} poll_state;

static int new_batch(void *ctx) {
  const poll_state *q = ctx;
  return atomic_load(&q->pool->generation) != q->seen;
}

static int batch_done(void *ctx) {
  const poll_state *q = ctx;
  return atomic_load(&q->s->finished) >= q->n;
}

/* Under mu: the slot of the oldest batch with jobs not yet taken, or -1. */
static int open_slot(cp_plan_pool *pool) {
  int best = -1;
  for (int k = 0; k < 2; ++k) {
    slot *s = &pool->slots[k];
    uint64_t t = atomic_load(&s->ticket);
    if (!s->gen || (uint32_t)(t >> 32) != s->gen ||
        (int)(uint32_t)t >= s->n_jobs)
      continue;
    if (best < 0 || (int32_t)(s->gen - pool->slots[best].gen) < 0) best = k;
  }
  return best;
}

static void *worker_main(void *arg) {
  worker *me = arg;
  cp_plan_pool *pool = me->pool;
  pthread_mutex_lock(&pool->mu);
  for (;;) {
    if (pool->quit) break;
    int k = open_slot(pool);
    if (k < 0) {
      unsigned long seen = pool->generation;
      if (pool->spin) {
        /* The next batch comes after the search's serial part: poll for
         * it a while rather than sleep through the start of it. */
        pthread_mutex_unlock(&pool->mu);
        poll_state q = {pool, seen, NULL, 0};
        cp_plan_spin_until(new_batch, &q, CP_PLAN_SPIN_SECONDS, 64);
        pthread_mutex_lock(&pool->mu);
      }
      while (!pool->quit && pool->generation == seen)
        pthread_cond_wait(&pool->go, &pool->mu);
      continue;
    }
    slot *s = &pool->slots[k];
    cp_expand_job *jobs = s->jobs;
    int n = s->n_jobs;
    uint32_t gen = s->gen;
    pthread_mutex_unlock(&pool->mu);
    finish(pool, s, work(s, me->world, gen, jobs, n), n);
    pthread_mutex_lock(&pool->mu);
  }
  pthread_mutex_unlock(&pool->mu);
  cp_glpk_thread_end(); /* the thread's GLPK environment, if a step made one */
  return NULL;
}

int cp_plan_pool_create(const cp_task *task, int warm_start, int threads,
                        cp_plan_pool **out, cp_error *err) {
  *out = NULL;
  cp_plan_pool *pool = calloc(1, sizeof *pool);
  if (!pool) return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  int n = threads - 1, started = 0;
  pool->workers = calloc((size_t)(n > 0 ? n : 1), sizeof *pool->workers);
  if (!pool->workers) {
    free(pool);
    return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  }
  pool->spin = cp_plan_spin_allowed(threads);
  pthread_mutex_init(&pool->mu, NULL);
  pthread_cond_init(&pool->go, NULL);
  pthread_cond_init(&pool->done, NULL);
  for (; pool->n_worlds < n; ++pool->n_worlds)
    if (cp_plan_world_create(task, warm_start,
                             &pool->workers[pool->n_worlds].world, err))
      goto fail;
  for (; started < n; ++started) {
    worker *w = &pool->workers[started];
    w->pool = pool;
    if (pthread_create(&w->tid, NULL, worker_main, w)) {
      cp_error_setc(err, CP_ERR_NOMEM, "threads",
                    "cannot start worker thread %d of %d", started + 2,
                    threads);
      goto fail;
    }
    pool->n_workers = started + 1;
  }
  *out = pool;
  return 0;
fail:
  pool->n_workers = started;
  cp_plan_pool_destroy(pool);
  return -1;
}

void cp_plan_pool_destroy(cp_plan_pool *pool) {
  if (!pool) return;
  pthread_mutex_lock(&pool->mu);
  pool->quit = 1;
  atomic_fetch_add(&pool->generation, 1); /* ends the workers' polling */
  pthread_cond_broadcast(&pool->go);
  pthread_mutex_unlock(&pool->mu);
  for (int k = 0; k < pool->n_workers; ++k)
    pthread_join(pool->workers[k].tid, NULL);
  for (int k = 0; k < pool->n_worlds; ++k)
    cp_plan_world_destroy(pool->workers[k].world);
  pthread_mutex_destroy(&pool->mu);
  pthread_cond_destroy(&pool->go);
  pthread_cond_destroy(&pool->done);
  free(pool->workers);
  free(pool);
}

int cp_plan_pool_start(cp_plan_pool *pool, cp_expand_job *jobs, int n) {
  pthread_mutex_lock(&pool->mu);
  int k = pool->slots[0].gen ? 1 : 0;
  slot *s = &pool->slots[k];
  if (s->gen) { /* both out: the caller must wait for one first */
    pthread_mutex_unlock(&pool->mu);
    return -1;
  }
  s->jobs = jobs;
  s->n_jobs = n;
  atomic_store(&s->finished, 0);
  uint32_t gen = (uint32_t)(atomic_fetch_add(&pool->generation, 1) + 1);
  if (!gen) gen = (uint32_t)(atomic_fetch_add(&pool->generation, 1) + 1);
  s->gen = gen;
  atomic_store(&s->ticket, (uint64_t)gen << 32);
  pthread_cond_broadcast(&pool->go);
  pthread_mutex_unlock(&pool->mu);
  return k;
}

int cp_plan_pool_wait(cp_plan_pool *pool, cp_plan_world *own, int k,
                      const cp_batch_meanwhile *meanwhile) {
  if (k < 0 || k > 1) return -1;
  slot *s = &pool->slots[k], *o = &pool->slots[1 - k];
  pthread_mutex_lock(&pool->mu);
  uint32_t gen = s->gen, ogen = o->gen;
  cp_expand_job *jobs = s->jobs, *ojobs = o->jobs;
  int n = s->n_jobs, on = o->n_jobs;
  pthread_mutex_unlock(&pool->mu);
  if (!gen) return -1;
  /* The caller's own work first (the store's commit of the batches before:
   * the workers simulate meanwhile), then it takes jobs too. */
  if (meanwhile) meanwhile->fn(meanwhile->ctx);
  const cp_search_problem *p = cp_plan_world_problem(own);
  atomic_fetch_add(&s->finished, work(s, own, gen, jobs, n));
  /* Its batch's last jobs are being run elsewhere: the caller takes jobs
   * of the other batch out (if any) one at a time meanwhile, then waits
   * only for jobs a worker is running (a worker that has not woken yet
   * holds nothing up): polling a while (the last job's rest), then
   * asleep. */
  while (atomic_load(&s->finished) < n && ogen &&
         take_one(o, p, own, ogen, ojobs, on))
    finish(pool, o, 1, on);
  poll_state q = {pool, 0, s, n};
  if (pool->spin && !batch_done(&q))
    cp_plan_spin_until(batch_done, &q, CP_PLAN_SPIN_SECONDS, 64);
  pthread_mutex_lock(&pool->mu);
  while (atomic_load(&s->finished) < n)
    pthread_cond_wait(&pool->done, &pool->mu);
  s->gen = 0;
  s->jobs = NULL;
  pthread_mutex_unlock(&pool->mu);
  return 0;
}

int cp_plan_pool_run(cp_plan_pool *pool, cp_plan_world *own,
                     cp_expand_job *jobs, int n,
                     const cp_batch_meanwhile *meanwhile) {
  int k = cp_plan_pool_start(pool, jobs, n);
  return k < 0 ? -1 : cp_plan_pool_wait(pool, own, k, meanwhile);
}

void cp_plan_pool_set_budget(cp_plan_pool *pool,
                             const cp_search_budget *budget) {
  for (int k = 0; pool && k < pool->n_workers; ++k) {
    cp_plan_world *w = pool->workers[k].world;
    cp_plan_world_problem(w)->set_budget(w, budget);
  }
}

int cp_plan_pool_set_impact_memo(cp_plan_pool *pool, int slots) {
  for (int k = 0; pool && k < pool->n_workers; ++k)
    if (cp_plan_world_set_impact_memo(pool->workers[k].world, slots))
      return -1;
  return 0;
}

void cp_plan_pool_set_memo_pivots(cp_plan_pool *pool, int on) {
  for (int k = 0; pool && k < pool->n_workers; ++k)
    cp_plan_world_set_memo_pivots(pool->workers[k].world, on);
}

void cp_plan_pool_clear_impact_memo(cp_plan_pool *pool) {
  for (int k = 0; pool && k < pool->n_workers; ++k)
    cp_plan_world_clear_impact_memo(pool->workers[k].world);
}

void cp_plan_pool_set_timing(cp_plan_pool *pool, int on) {
  for (int k = 0; pool && k < pool->n_workers; ++k)
    cp_plan_world_set_timing(pool->workers[k].world, on);
}

double cp_plan_pool_seconds(const cp_plan_pool *pool) {
  double t = 0;
  for (int k = 0; pool && k < pool->n_workers; ++k)
    t += cp_plan_world_seconds(pool->workers[k].world);
  return t;
}
