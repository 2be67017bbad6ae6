/* Batches (search.batch > 1; planner/search/search_impl.h): the jobs a
 * planner chose from the search as it was before them, simulated together
 * -- by the problem's expand_batch on its workers, else one by one -- and
 * handed back to the planner, which merges them in job order. Nothing in a
 * job's outcome depends on which worker ran it or when (its inputs are the
 * parent's stored state and warm-start data), so the merged nodes are the
 * same for any number of workers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/search/search_impl.h"

struct cp_batch {
  cp_expand_job *jobs;
  long *from;         /* [cap] each job's parent */
  double *y;          /* [cap * n] final states */
  int n_jobs, cap;
  cp_batch_iter *iters;
  double *samples;    /* [batch * m] */
  long *acts;         /* [batch * candidates] */
  int n_iters;
  /* Pipelined batches on workers (cp_search_problem.batch_start): the
   * handle of a batch out (>= 0), NOT_RUN, or RAN (its jobs' outcomes are
   * in); and the started jobs' copies of their parents' data (merging the
   * batch before may move the search's arrays while they run). */
  int handle;
  int in_cap;
  double *x_in;       /* [in_cap * n] */
  void **warm_in;     /* [in_cap] */
  size_t *warm_in_cap;
};

enum { NOT_RUN = -1, RAN = -2 };

void cp_expand_job_run(int (*expand)(void *ctx, const double *x, double t,
                                     const void *warm, size_t warm_size,
                                     long a, double *y, cp_expansion *info),
                       void *ctx, cp_expand_job *j) {
  memset(&j->info, 0, sizeof j->info);
  j->rc = expand(ctx, j->x, j->t, j->warm, j->warm_size, j->a, j->y, &j->info);
  size_t size = j->info.warm_size;
  if (j->rc || !j->info.warm || !size) return;
  if (size > j->keep_cap) {
    void *p = realloc(j->keep, size);
    if (!p) {
      j->rc = -1;
      snprintf(j->info.message, sizeof j->info.message, "out of memory");
      return;
    }
    j->keep = p;
    j->keep_cap = size;
  }
  memcpy(j->keep, j->info.warm, size);
  j->info.warm = j->keep;
}

static struct cp_batch *batch_of(cp_search *s) {
  if (s->batch) return s->batch;
  struct cp_batch *b = calloc(1, sizeof *b);
  int nb = s->opt.batch, k = s->opt.candidates > 0 ? s->opt.candidates : 1;
  if (b) {
    b->handle = NOT_RUN;
    b->iters = malloc((size_t)nb * sizeof *b->iters);
    b->samples = malloc((size_t)nb * (size_t)s->p.m * sizeof *b->samples);
    b->acts = malloc((size_t)nb * (size_t)k * sizeof *b->acts);
  }
  if (!b || !b->iters || !b->samples || !b->acts) {
    if (b) {
      free(b->iters);
      free(b->samples);
      free(b->acts);
      free(b);
    }
    snprintf(s->message, sizeof s->message, "out of memory");
    return NULL;
  }
  return s->batch = b;
}

/* Waits for b if it is out (its jobs' outcomes then in). 0 or -1. */
static int wait_batch(cp_search *s, struct cp_batch *b,
                      const cp_batch_meanwhile *meanwhile) {
  if (!b || b->handle < 0) return 0;
  int h = b->handle;
  b->handle = RAN;
  if (s->p.batch_wait(s->p.ctx, h, meanwhile)) {
    snprintf(s->message, sizeof s->message,
             "the batch's workers could not run it");
    return -1;
  }
  return 0;
}

static void free_batch(cp_search *s, struct cp_batch *b) {
  if (!b) return;
  wait_batch(s, b, NULL); /* no job may run on freed memory */
  for (int k = 0; k < b->in_cap; ++k) free(b->warm_in[k]);
  free(b->x_in);
  free(b->warm_in);
  free(b->warm_in_cap);
  for (int k = 0; k < b->cap; ++k) free(b->jobs[k].keep);
  free(b->jobs);
  free(b->from);
  free(b->y);
  free(b->iters);
  free(b->samples);
  free(b->acts);
  free(b);
}

void cp_search_batch_drain(cp_search *s) {
  wait_batch(s, s->batch, NULL);
  wait_batch(s, s->pending, NULL);
}

void cp_search_batch_free(cp_search *s) {
  free_batch(s, s->batch);
  free_batch(s, s->pending);
  s->batch = s->pending = NULL;
  s->has_pending = 0;
}

void cp_search_batch_clear(cp_search *s) {
  if (!s->batch) return;
  wait_batch(s, s->batch, NULL); /* never the case: drawn into when back */
  s->batch->n_jobs = s->batch->n_iters = 0;
  s->batch->handle = NOT_RUN;
}

int cp_search_batch_add(cp_search *s, long from, long a) {
  struct cp_batch *b = batch_of(s);
  if (!b) return -1;
  if (b->n_jobs == b->cap) {
    int cap = b->cap ? 2 * b->cap : 16;
    cp_expand_job *j = realloc(b->jobs, (size_t)cap * sizeof *j);
    if (j) {
      memset(j + b->cap, 0, (size_t)(cap - b->cap) * sizeof *j);
      b->jobs = j;
    }
    long *f = j ? realloc(b->from, (size_t)cap * sizeof *f) : NULL;
    if (f) b->from = f;
    double *y = f ? realloc(b->y, (size_t)cap * (size_t)s->p.n * sizeof *y)
                  : NULL;
    if (!y) {
      snprintf(s->message, sizeof s->message, "out of memory");
      return -1;
    }
    b->y = y;
    b->cap = cap;
  }
  int k = b->n_jobs++;
  b->from[k] = from;
  b->jobs[k].a = a;
  return k;
}

void cp_search_set_meanwhile(cp_search *s, void (*fn)(void *ctx),
                             void *ctx) {
  s->meanwhile.fn = fn;
  s->meanwhile.ctx = ctx;
}

cp_expand_job *cp_search_batch_job(cp_search *s, int k) {
  return &s->batch->jobs[k];
}

int cp_search_batch_jobs(const cp_search *s) {
  return s->batch ? s->batch->n_jobs : 0;
}

cp_batch_iter *cp_search_batch_iter(cp_search *s, int i, double **sample,
                                    long **acts) {
  struct cp_batch *b = batch_of(s);
  if (!b) return NULL;
  int k = s->opt.candidates > 0 ? s->opt.candidates : 1;
  *sample = b->samples + (size_t)i * (size_t)s->p.m;
  *acts = b->acts + (size_t)i * (size_t)k;
  return &b->iters[i];
}

int cp_search_batch_iter_end(cp_search *s, int i, long from, int k,
                             int to_goal) {
  struct cp_batch *b = s->batch;
  int kc = s->opt.candidates > 0 ? s->opt.candidates : 1;
  cp_batch_iter *it = &b->iters[i];
  it->from = from;
  it->first = b->n_jobs;
  it->k = k;
  it->to_goal = to_goal;
  for (int c = 0; c < k; ++c)
    if (cp_search_batch_add(s, from, b->acts[(size_t)i * (size_t)kc + c]) < 0)
      return -1;
  b->n_iters = i + 1;
  return 0;
}

static int outcome(cp_search *s, const struct cp_batch *b);

int cp_search_batch_run(cp_search *s) {
  struct cp_batch *b = s->batch;
  int n = b ? b->n_jobs : 0;
  cp_search_view_budget(s);
  for (int k = 0; k < n; ++k) { /* the inputs: the parents' stored data */
    cp_expand_job *j = &b->jobs[k];
    long f = b->from[k];
    j->x = cp_search_state(s, f);
    j->t = s->nodes[f].time;
    j->warm = cp_search_warm(s, f, &j->warm_size);
    j->y = b->y + (size_t)k * (size_t)s->p.n;
    j->rc = 1; /* not run */
  }
  if (s->p.expand_batch && n > 1) {
    if (s->p.expand_batch(s->p.ctx, b->jobs, n,
                          s->meanwhile.fn ? &s->meanwhile : NULL)) {
      snprintf(s->message, sizeof s->message,
               "the batch's workers could not run it");
      return -1;
    }
  } else {
    for (int k = 0; k < n; ++k) {
      cp_expand_job_run(s->p.expand, s->p.ctx, &b->jobs[k]);
      if (b->jobs[k].rc) break;
    }
  }
  return outcome(s, b);
}

/* Pipelined batches on workers: gives b's jobs copies of their parents'
 * data and hands them out. The budget the jobs see (s->view) is written
 * only while no batch is out (it changes once, when the session has made
 * progress: the other batch is then waited for first). 0 or -1. */
static int start_batch(cp_search *s, struct cp_batch *b,
                       struct cp_batch *other) {
  int n = b->n_jobs, nx = s->p.n;
  if (b->in_cap < b->cap) {
    double *x = realloc(b->x_in, (size_t)b->cap * (size_t)nx * sizeof *x);
    if (x) b->x_in = x;
    void **w = x ? realloc(b->warm_in, (size_t)b->cap * sizeof *w) : NULL;
    if (w) b->warm_in = w;
    size_t *c = w ? realloc(b->warm_in_cap, (size_t)b->cap * sizeof *c)
                  : NULL;
    if (!c) {
      snprintf(s->message, sizeof s->message, "out of memory");
      return -1;
    }
    b->warm_in_cap = c;
    for (int k = b->in_cap; k < b->cap; ++k) {
      w[k] = NULL;
      c[k] = 0;
    }
    b->in_cap = b->cap;
  }
  if (s->opt.budget) {
    cp_search_budget v = *s->opt.budget;
    if (!s->progressed) v.has_deadline = 0;
    const cp_search_budget *o = &s->view;
    if (v.has_deadline != o->has_deadline || v.deadline != o->deadline ||
        v.clock != o->clock || v.clock_ctx != o->clock_ctx ||
        v.cancel != o->cancel) {
      if (wait_batch(s, other, NULL)) return -1;
      s->view = v;
    }
  }
  for (int k = 0; k < n; ++k) {
    cp_expand_job *j = &b->jobs[k];
    long f = b->from[k];
    size_t size;
    const void *warm = cp_search_warm(s, f, &size);
    double *x = b->x_in + (size_t)k * (size_t)nx;
    memcpy(x, cp_search_state(s, f), (size_t)nx * sizeof *x);
    if (warm && size > b->warm_in_cap[k]) {
      void *p = realloc(b->warm_in[k], size);
      if (!p) {
        snprintf(s->message, sizeof s->message, "out of memory");
        return -1;
      }
      b->warm_in[k] = p;
      b->warm_in_cap[k] = size;
    }
    if (warm) memcpy(b->warm_in[k], warm, size);
    j->x = x;
    j->t = s->nodes[f].time;
    j->warm = warm ? b->warm_in[k] : NULL;
    j->warm_size = warm ? size : 0;
    j->y = b->y + (size_t)k * (size_t)nx;
    j->rc = 1; /* not run */
  }
  int h = s->p.batch_start(s->p.ctx, b->jobs, n);
  if (h < 0) {
    snprintf(s->message, sizeof s->message,
             "the batch's workers could not take it");
    return -1;
  }
  b->handle = h;
  return 0;
}

/* The jobs of s->batch run (waited for when out; started first, or run
 * here, when not yet run): as cp_search_batch_run. */
static int finish_batch(cp_search *s) {
  struct cp_batch *b = s->batch;
  if (!s->p.batch_start || !s->opt.pipeline) return cp_search_batch_run(s);
  if (b->handle == NOT_RUN && start_batch(s, b, s->pending)) return -1;
  if (wait_batch(s, b, s->meanwhile.fn ? &s->meanwhile : NULL)) return -1;
  return outcome(s, b);
}

/* The jobs' outcomes: the number of jobs done before the first one the
 * budget stopped, or -1 (a fatal error, message set). */
static int outcome(cp_search *s, const struct cp_batch *b) {
  int n = b->n_jobs;
  for (int k = 0; k < n; ++k)
    if (b->jobs[k].rc < 0) {
      snprintf(s->message, sizeof s->message, "expansion failed: %.200s",
               b->jobs[k].info.message[0] ? b->jobs[k].info.message
                                          : "out of memory");
      return -1;
    }
  for (int k = 0; k < n; ++k)
    if (b->jobs[k].rc) return k;
  return n;
}

/* Draws a batch into s->batch: 0, or the status that ends the search. */
static cp_search_status draw_batch(cp_search *s,
                                   int (*draw)(cp_search *s, int i)) {
  if (!batch_of(s)) return CP_SEARCH_FAILED;
  cp_search_batch_clear(s);
  for (int i = 0; i < s->opt.batch; ++i) {
    int r = draw(s, i);
    if (r < 0) return CP_SEARCH_FAILED;
    /* No node to grow from. With fresh_actions the batch's earlier draws
     * may have taken the last untried actions (a tree of one node and
     * fewer actions than the batch): the batch is short, not the search
     * over; the next batch draws from the tree they grow. */
    if (r > 0) return i > 0 && s->fresh ? CP_SEARCH_RUNNING
                                        : CP_SEARCH_EXHAUSTED;
  }
  return CP_SEARCH_RUNNING;
}

static cp_search_status run_and_merge(
    cp_search *s, cp_search_status (*merge)(cp_search *s,
                                            const cp_batch_iter *it,
                                            const double *sample));

/* Pipelined batches (cp_search_options.pipeline): the batch drawn now
 * comes from the tree as merged up to the batch before the pending one;
 * with workers that take batches asynchronously (batch_start) it is handed
 * out at once, then the pending batch is waited for (run) and merged while
 * the new one runs. The first call draws two batches from the start tree.
 * A new batch that the node limit would cut with the pending one is undone
 * (the generator too), the pending one merged, and the search ends. A
 * batch out when the search ends or stops is waited for (its outcomes
 * dropped: a stopped search draws it again). */
static cp_search_status pipelined_calls(
    cp_search *s, int (*draw)(cp_search *s, int i),
    cp_search_status (*merge)(cp_search *s, const cp_batch_iter *it,
                              const double *sample));

/* fresh_actions: the pending batch's pairs stay tried, whatever a rollback
 * of this call undid (they were drawn by an earlier call, or, on the first
 * call, by this one: a stop there keeps the first batch pending). */
static cp_search_status pipelined(
    cp_search *s, int (*draw)(cp_search *s, int i),
    cp_search_status (*merge)(cp_search *s, const cp_batch_iter *it,
                              const double *sample)) {
  cp_search_status st = pipelined_calls(s, draw, merge);
  if (s->fresh && s->has_pending && s->pending)
    for (int k = 0; k < s->pending->n_jobs; ++k)
      if (cp_search_try(s, s->pending->from[k], s->pending->jobs[k].a))
        return CP_SEARCH_FAILED;
  return st;
}

/* The pending batch run and merged with no batch drawn after it (the one
 * just drawn is dropped); a stop leaves it pending, as before the call. */
static cp_search_status merge_pending_alone(
    cp_search *s, cp_search_status (*merge)(cp_search *s,
                                            const cp_batch_iter *it,
                                            const double *sample)) {
  struct cp_batch *b = s->batch;
  s->batch = s->pending;
  s->pending = b;
  s->has_pending = 0;
  cp_search_status st = run_and_merge(s, merge);
  if (st == CP_SEARCH_STOPPED) { /* as before this call */
    s->batch->handle = NOT_RUN;
    b = s->batch;
    s->batch = s->pending;
    s->pending = b;
    s->has_pending = 1;
  }
  return st;
}

static cp_search_status pipelined_calls(
    cp_search *s, int (*draw)(cp_search *s, int i),
    cp_search_status (*merge)(cp_search *s, const cp_batch_iter *it,
                              const double *sample)) {
  const int async = s->p.batch_start != NULL;
  for (;;) {
    cp_search_status st = draw_batch(s, draw);
    if (st == CP_SEARCH_EXHAUSTED && s->fresh && s->has_pending) {
      /* fresh_actions: the pending batch drew every untried action left;
       * it is merged alone (no batch waits after it), and the next call
       * draws two batches from the tree it grew, as a first call does. */
      return merge_pending_alone(s, merge);
    }
    if (st != CP_SEARCH_RUNNING) {
      if (s->has_pending && wait_batch(s, s->pending, NULL))
        return CP_SEARCH_FAILED;
      return st;
    }
    long pend = s->has_pending ? s->pending->n_jobs : 0;
    if (s->n_nodes + pend + s->batch->n_jobs > s->opt.max_nodes) {
      const cp_rng after = s->rng;
      cp_search_rollback(s);
      if (!s->has_pending) return CP_SEARCH_NODE_LIMIT;
      st = merge_pending_alone(s, merge);
      if (st != CP_SEARCH_RUNNING) return st;
      /* The undone draw, kept for a resume with a larger limit. */
      s->undone = 1;
      s->undone_rng = after;
      return CP_SEARCH_NODE_LIMIT;
    }
    /* The new batch waits (out on the workers); the pending one (if any)
     * is run. */
    struct cp_batch *b = s->batch;
    s->batch = s->pending;
    s->pending = b;
    if (async && start_batch(s, s->pending, s->batch)) {
      if (s->has_pending) wait_batch(s, s->batch, NULL);
      return CP_SEARCH_FAILED;
    }
    if (!s->has_pending) {
      s->has_pending = 1;
      continue; /* the first call: a second batch from the start tree */
    }
    st = run_and_merge(s, merge);
    if (st != CP_SEARCH_RUNNING && wait_batch(s, s->pending, NULL))
      st = CP_SEARCH_FAILED;
    if (st == CP_SEARCH_STOPPED) { /* the new draw undone: as before it */
      s->batch->handle = NOT_RUN; /* the stopped one runs again */
      b = s->batch;
      s->batch = s->pending;
      s->pending = b;
    }
    return st;
  }
}

cp_search_status cp_search_batch_iterate(
    cp_search *s, int (*draw)(cp_search *s, int i),
    cp_search_status (*merge)(cp_search *s, const cp_batch_iter *it,
                              const double *sample)) {
  if (s->opt.pipeline) return pipelined(s, draw, merge);
  cp_search_status st = draw_batch(s, draw);
  if (st != CP_SEARCH_RUNNING) return st;
  /* A batch is whole or not at all (as an iteration is): one the node
   * limit would cut is undone, and a resumed run draws it again. */
  if (s->n_nodes + s->batch->n_jobs > s->opt.max_nodes) {
    cp_search_rollback(s);
    return CP_SEARCH_NODE_LIMIT;
  }
  return run_and_merge(s, merge);
}

/* Simulates s->batch and merges it in job order. */
static cp_search_status run_and_merge(
    cp_search *s, cp_search_status (*merge)(cp_search *s,
                                            const cp_batch_iter *it,
                                            const double *sample)) {
  struct cp_batch *b = s->batch;
  int done = finish_batch(s);
  if (done < 0) return CP_SEARCH_FAILED;
  if (done < b->n_jobs) {
    cp_search_rollback(s);
    return CP_SEARCH_STOPPED;
  }
  int m = s->p.m;
  for (int i = 0; i < b->n_iters; ++i) {
    if (i > 0) s->stats.iterations++;
    cp_search_status st =
        merge(s, &b->iters[i], b->samples + (size_t)i * (size_t)m);
    if (st != CP_SEARCH_RUNNING) return st;
  }
  return CP_SEARCH_RUNNING;
}

/* --- the pending selection of a pipelined search (resume) ----------------- */

int cp_search_pipelined(const cp_search *s) { return s->opt.pipeline != 0; }

/* Per iteration: node, to_goal, k (int64), the sample (m doubles), the k
 * actions (int64). */
long cp_search_pending_save(const cp_search *s, unsigned char **buf,
                            size_t *cap, size_t *size, const cp_rng **rng) {
  *size = 0;
  *rng = NULL;
  const struct cp_batch *b = s->pending;
  if (!s->opt.pipeline || !(s->has_pending || s->undone) || !b) return 0;
  if (!s->has_pending) *rng = &s->undone_rng;
  int m = s->p.m, kc = s->opt.candidates > 0 ? s->opt.candidates : 1;
  size_t need = 0;
  for (int i = 0; i < b->n_iters; ++i)
    need += 3 * sizeof(int64_t) + (size_t)m * sizeof(double) +
            (size_t)b->iters[i].k * sizeof(int64_t);
  if (need > *cap) {
    unsigned char *p = realloc(*buf, need);
    if (!p) return -1;
    *buf = p;
    *cap = need;
  }
  unsigned char *o = *buf;
  for (int i = 0; i < b->n_iters; ++i) {
    const cp_batch_iter *it = &b->iters[i];
    int64_t head[3] = {it->from, it->to_goal, it->k};
    memcpy(o, head, sizeof head);
    o += sizeof head;
    memcpy(o, b->samples + (size_t)i * (size_t)m, (size_t)m * sizeof(double));
    o += (size_t)m * sizeof(double);
    for (int c = 0; c < it->k; ++c) {
      int64_t a = b->acts[(size_t)i * (size_t)kc + c];
      memcpy(o, &a, sizeof a);
      o += sizeof a;
    }
  }
  *size = need;
  return b->n_iters;
}

static int pending_bad(cp_search *s, long i, const char *what) {
  snprintf(s->message, sizeof s->message,
           "the stored pending batch does not fit the search: iteration "
           "%ld %s", i, what);
  cp_search_batch_clear(s);
  return -1;
}

int cp_search_pending_load(cp_search *s, const void *data, size_t size,
                           long iters, const cp_rng *rng) {
  if (!s->opt.pipeline || iters < 0 || iters > s->opt.batch)
    return pending_bad(s, iters, "is beyond the search's batch");
  if (iters == 0) return size ? pending_bad(s, 0, "has extra bytes") : 0;
  if (!batch_of(s)) return -1;
  cp_search_batch_clear(s);
  int m = s->p.m, kc = s->opt.candidates > 0 ? s->opt.candidates : 1;
  const unsigned char *p = data, *end = p + size;
  for (int i = 0; i < iters; ++i) {
    int64_t head[3];
    if ((size_t)(end - p) < sizeof head + (size_t)m * sizeof(double))
      return pending_bad(s, i, "is cut short");
    memcpy(head, p, sizeof head);
    p += sizeof head;
    if (head[0] < 0 || head[0] >= s->n_nodes)
      return pending_bad(s, i, "grows from a node that is not stored");
    if (head[2] < 0 || head[2] > kc || (head[1] != 0 && head[1] != 1))
      return pending_bad(s, i, "has a bad candidate count or goal flag");
    double *sample;
    long *acts;
    if (!cp_search_batch_iter(s, i, &sample, &acts)) return -1;
    memcpy(sample, p, (size_t)m * sizeof(double));
    p += (size_t)m * sizeof(double);
    if ((size_t)(end - p) < (size_t)head[2] * sizeof(int64_t))
      return pending_bad(s, i, "is cut short");
    for (int c = 0; c < (int)head[2]; ++c) {
      int64_t a;
      memcpy(&a, p, sizeof a);
      p += sizeof a;
      if (a < 0 || a >= s->p.n_actions)
        return pending_bad(s, i, "has an action out of range");
      acts[c] = (long)a;
      if (cp_search_try(s, (long)head[0], acts[c])) return -1;
    }
    if (cp_search_batch_iter_end(s, i, (long)head[0], (int)head[2],
                                 (int)head[1]))
      return -1;
  }
  if (p != end) return pending_bad(s, iters, "is followed by extra bytes");
  /* The drawn batch waits, as after the call that drew it. */
  struct cp_batch *b = s->batch;
  s->batch = s->pending;
  s->pending = b;
  s->has_pending = 1;
  if (rng) { /* drawn by the call that ended at the node limit */
    s->rng = *rng;
    s->stats.iterations++; /* that call, its count undone with the draw */
  }
  return 0;
}
