/* Batch jobs and their outcomes as messages (planner/plan/wire.h).
 *
 * Job:     tag "CPJ2", u32 n, f64 t, f64 seconds left, i64 action,
 *          u64 warm bytes, f64 x[n], warm.
 * Outcome: tag "CPO1", u32 n, i32 rc, outcome, steps, lcp_solves, pivots,
 *          fallbacks, warm_steps, lcp_reused, u32 message bytes, u64 warm
 *          bytes, f64 y[n], message, warm.
 * Run:     tag "CPK1", u32 k, u64 seed, f64 max seconds, i64 max nodes,
 *          u32 planner bytes, planner.
 * Run done: tag "CPD1", u32 k, i32 status, u32 result bytes, the result
 *          (cp_plan_result as it is in memory), u32 error code, u32 where
 *          bytes, u32 message bytes, u32 samples, u64 store bytes, where,
 *          message, samples (cp_plan_progress as in memory), store.
 *          Structs travel as their bytes: both sides are the same build (a
 *          size that differs fails to decode).
 * Numbers are in the sender's byte order; the tag is written as a u32, so a
 * receiver of the other byte order sees a wrong tag. */
#include "planner/plan/wire.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TAG_JOB 0x324a5043u     /* "CPJ2" read little-endian */
#define TAG_OUTCOME 0x314f5043u /* "CPO1" */
#define TAG_RUN 0x314b5043u     /* "CPK1" */
#define TAG_RUN_DONE 0x31445043u /* "CPD1" */

void cp_wire_buf_free(cp_wire_buf *b) {
  free(b->p);
  memset(b, 0, sizeof *b);
}

void cp_wire_slot_free(cp_wire_slot *s) {
  free(s->x);
  free(s->y);
  free(s->warm);
  free(s->job.keep);
  memset(s, 0, sizeof *s);
}

/* Grows *p (of *cap bytes) to at least need bytes. 0, or -1. */
static int grow(void **p, size_t *cap, size_t need) {
  if (need <= *cap) return 0;
  size_t c = *cap ? *cap : 64;
  while (c < need) c *= 2;
  void *q = realloc(*p, c);
  if (!q) return -1;
  *p = q;
  *cap = c;
  return 0;
}

static void put(cp_wire_buf *b, const void *src, size_t n) {
  if (n) memcpy(b->p + b->len, src, n);
  b->len += n;
}

static void put_u32(cp_wire_buf *b, uint32_t v) { put(b, &v, sizeof v); }

/* Starts a message of `size` bytes in b. */
static int start(cp_wire_buf *b, size_t size, cp_error *err) {
  b->len = 0;
  void *p = b->p;
  if (grow(&p, &b->cap, size))
    return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  b->p = p;
  return 0;
}

typedef struct reader {
  const unsigned char *p;
  size_t len, at;
  const char *what; /* "job" or "outcome" */
  cp_error *err;
} reader;

static int get(reader *r, void *dst, size_t n) {
  if (n > r->len - r->at)
    return cp_error_setc(r->err, CP_ERR_INPUT, r->what,
                         "message of %zu bytes ends at byte %zu, expected "
                         "%zu more",
                         r->len, r->at, n);
  if (n) memcpy(dst, r->p + r->at, n);
  r->at += n;
  return 0;
}

/* Reads the tag, which must be `tag`, and the u32 after it into *v. */
static int tag_and(reader *r, uint32_t tag, uint32_t *v) {
  uint32_t t = 0;
  if (get(r, &t, sizeof t) || get(r, v, sizeof *v)) return -1;
  if (t != tag)
    return cp_error_setc(r->err, CP_ERR_INPUT, r->what,
                         "expected a %s message (tag 0x%08x), got tag "
                         "0x%08x (another kind, version or byte order)",
                         r->what, tag, t);
  return 0;
}

/* Reads the tag and the state size; checks both. */
static int head(reader *r, uint32_t tag, int n) {
  uint32_t m = 0;
  if (tag_and(r, tag, &m)) return -1;
  if (m != (uint32_t)n)
    return cp_error_setc(r->err, CP_ERR_INPUT, r->what,
                         "expected a state of %d numbers, got %u", n, m);
  return 0;
}

static int done(reader *r) {
  if (r->at == r->len) return 0;
  return cp_error_setc(r->err, CP_ERR_INPUT, r->what,
                       "%zu bytes left over after a message of %zu",
                       r->len - r->at, r->at);
}

int cp_wire_job_encode(const cp_expand_job *j, int n, double left,
                       cp_wire_buf *b, cp_error *err) {
  size_t warm = j->warm ? j->warm_size : 0;
  int64_t a = j->a;
  uint64_t w = warm;
  if (start(b, 8 + sizeof j->t + sizeof left + sizeof a + sizeof w +
                   (size_t)n * sizeof(double) + warm,
            err))
    return -1;
  put_u32(b, TAG_JOB);
  put_u32(b, (uint32_t)n);
  put(b, &j->t, sizeof j->t);
  put(b, &left, sizeof left);
  put(b, &a, sizeof a);
  put(b, &w, sizeof w);
  put(b, j->x, (size_t)n * sizeof(double));
  put(b, j->warm, warm);
  return 0;
}

/* Makes s's state buffers hold n doubles. */
static int slot_states(cp_wire_slot *s, int n, cp_error *err) {
  if (n <= s->n_cap) return 0;
  double *x = realloc(s->x, (size_t)n * sizeof *x);
  if (x) s->x = x;
  double *y = x ? realloc(s->y, (size_t)n * sizeof *y) : NULL;
  if (y) s->y = y;
  if (!x || !y) return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  s->n_cap = n;
  return 0;
}

int cp_wire_job_decode(const void *msg, size_t len, int n, cp_wire_slot *s,
                       cp_error *err) {
  reader r = {msg, len, 0, "job", err};
  int64_t a = 0;
  uint64_t w = 0;
  double t = 0, left = 0;
  if (head(&r, TAG_JOB, n) || get(&r, &t, sizeof t) ||
      get(&r, &left, sizeof left) || get(&r, &a, sizeof a) ||
      get(&r, &w, sizeof w))
    return -1;
  if (isnan(left))
    return cp_error_setc(err, CP_ERR_INPUT, "job",
                         "expected the seconds left, got NaN");
  if (w > len - r.at)
    return cp_error_setc(err, CP_ERR_INPUT, "job",
                         "warm-start data of %llu bytes in a message of %zu",
                         (unsigned long long)w, len);
  if (slot_states(s, n, err)) return -1;
  void *warm = s->warm;
  if (grow(&warm, &s->warm_cap, (size_t)w))
    return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  s->warm = warm;
  if (get(&r, s->x, (size_t)n * sizeof(double)) ||
      get(&r, s->warm, (size_t)w) || done(&r))
    return -1;
  cp_expand_job *j = &s->job;
  j->x = s->x;
  j->t = t;
  j->warm = w ? s->warm : NULL;
  j->warm_size = (size_t)w;
  j->a = (long)a;
  j->y = s->y;
  j->rc = 0;
  s->left = left;
  return 0;
}

void cp_wire_job_run(const cp_search_problem *p, cp_wire_slot *s) {
  cp_search_budget b = {0};
  if (isfinite(s->left) && p->set_budget) {
    b.has_deadline = 1;
    b.deadline = cp_search_budget_now(&b) + s->left;
    p->set_budget(p->ctx, &b);
  }
  cp_expand_job_run(p->expand, p->ctx, &s->job);
  if (b.has_deadline) p->set_budget(p->ctx, NULL);
}

int cp_wire_outcome_encode(const cp_expand_job *j, int n, cp_wire_buf *b,
                           cp_error *err) {
  const cp_expansion *e = &j->info;
  size_t msg = strnlen(e->message, sizeof e->message - 1);
  size_t warm = !j->rc && e->warm ? e->warm_size : 0;
  int32_t v[8] = {j->rc,      (int32_t)e->outcome, e->steps,
                  e->lcp_solves, e->pivots,        e->fallbacks,
                  e->warm_steps, e->lcp_reused};
  uint64_t w = warm;
  if (start(b, 8 + sizeof v + 4 + sizeof w + (size_t)n * sizeof(double) +
                   msg + warm,
            err))
    return -1;
  put_u32(b, TAG_OUTCOME);
  put_u32(b, (uint32_t)n);
  put(b, v, sizeof v);
  put_u32(b, (uint32_t)msg);
  put(b, &w, sizeof w);
  put(b, j->y, (size_t)n * sizeof(double));
  put(b, e->message, msg);
  put(b, e->warm, warm);
  return 0;
}

int cp_wire_outcome_decode(const void *msg, size_t len, int n,
                           cp_expand_job *j, cp_error *err) {
  reader r = {msg, len, 0, "outcome", err};
  int32_t v[8] = {0};
  uint32_t m = 0;
  uint64_t w = 0;
  if (head(&r, TAG_OUTCOME, n) || get(&r, v, sizeof v) ||
      get(&r, &m, sizeof m) || get(&r, &w, sizeof w))
    return -1;
  cp_expansion *e = &j->info;
  if (m >= sizeof e->message)
    return cp_error_setc(err, CP_ERR_INPUT, "outcome",
                         "expected a message of at most %zu bytes, got %u",
                         sizeof e->message - 1, m);
  if (v[0] < -1 || v[0] > 1 || v[1] < 0 || v[1] >= CP_EXPAND_COUNT)
    return cp_error_setc(err, CP_ERR_INPUT, "outcome",
                         "expected rc -1, 0 or 1 and an outcome below %d, "
                         "got rc %d and outcome %d",
                         (int)CP_EXPAND_COUNT, (int)v[0], (int)v[1]);
  if (w > len - r.at)
    return cp_error_setc(err, CP_ERR_INPUT, "outcome",
                         "warm-start data of %llu bytes in a message of %zu",
                         (unsigned long long)w, len);
  if (grow(&j->keep, &j->keep_cap, (size_t)w))
    return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  memset(e, 0, sizeof *e);
  if (get(&r, j->y, (size_t)n * sizeof(double)) ||
      get(&r, e->message, m) || get(&r, j->keep, (size_t)w) || done(&r))
    return -1;
  e->message[m] = 0;
  j->rc = v[0];
  e->outcome = (cp_expand_outcome)v[1];
  e->steps = v[2];
  e->lcp_solves = v[3];
  e->pivots = v[4];
  e->fallbacks = v[5];
  e->warm_steps = v[6];
  e->lcp_reused = v[7];
  e->warm = w ? j->keep : NULL;
  e->warm_size = (size_t)w;
  return 0;
}

/* ---- benchmark runs ------------------------------------------------------ */

/* The tag and the first u32 (k) of a run message. */
static int run_head(reader *r, uint32_t tag, int *k) {
  uint32_t v = 0;
  if (tag_and(r, tag, &v)) return -1;
  if (v > (uint32_t)INT32_MAX)
    return cp_error_setc(r->err, CP_ERR_INPUT, r->what,
                         "expected a run number, got %u", v);
  *k = (int)v;
  return 0;
}

int cp_wire_run_encode(const cp_wire_run *r, cp_wire_buf *b, cp_error *err) {
  size_t m = strnlen(r->method, sizeof r->method - 1);
  int64_t nodes = r->max_nodes;
  if (start(b, 8 + sizeof r->seed + sizeof r->max_seconds + sizeof nodes + 4 +
                   m,
            err))
    return -1;
  put_u32(b, TAG_RUN);
  put_u32(b, (uint32_t)r->k);
  put(b, &r->seed, sizeof r->seed);
  put(b, &r->max_seconds, sizeof r->max_seconds);
  put(b, &nodes, sizeof nodes);
  put_u32(b, (uint32_t)m);
  put(b, r->method, m);
  return 0;
}

int cp_wire_run_decode(const void *msg, size_t len, cp_wire_run *r,
                       cp_error *err) {
  reader rd = {msg, len, 0, "run", err};
  int64_t nodes = 0;
  uint32_t m = 0;
  memset(r, 0, sizeof *r);
  if (run_head(&rd, TAG_RUN, &r->k) || get(&rd, &r->seed, sizeof r->seed) ||
      get(&rd, &r->max_seconds, sizeof r->max_seconds) ||
      get(&rd, &nodes, sizeof nodes) || get(&rd, &m, sizeof m))
    return -1;
  if (m >= sizeof r->method)
    return cp_error_setc(err, CP_ERR_INPUT, "run",
                         "expected a planner name of at most %zu bytes, got "
                         "%u",
                         sizeof r->method - 1, m);
  if (get(&rd, r->method, m) || done(&rd)) return -1;
  r->method[m] = 0;
  r->max_nodes = (long)nodes;
  return 0;
}

int cp_wire_run_done_encode(const cp_wire_run_done *d, cp_wire_buf *b,
                            cp_error *err) {
  size_t where = strnlen(d->err.where, sizeof d->err.where - 1),
         text = strnlen(d->err.msg, sizeof d->err.msg - 1),
         samples = (size_t)d->n_samples * sizeof *d->samples;
  uint64_t store = d->store_len;
  if (start(b, 8 + 4 + 4 + sizeof d->res + 4 * 4 + sizeof store + where +
                   text + samples + d->store_len,
            err))
    return -1;
  put_u32(b, TAG_RUN_DONE);
  put_u32(b, (uint32_t)d->k);
  put_u32(b, (uint32_t)d->status);
  put_u32(b, (uint32_t)sizeof d->res);
  put(b, &d->res, sizeof d->res);
  put_u32(b, (uint32_t)d->err.code);
  put_u32(b, (uint32_t)where);
  put_u32(b, (uint32_t)text);
  put_u32(b, (uint32_t)d->n_samples);
  put(b, &store, sizeof store);
  put(b, d->err.where, where);
  put(b, d->err.msg, text);
  put(b, d->samples, samples);
  put(b, d->store, d->store_len);
  return 0;
}

int cp_wire_run_done_decode(const void *msg, size_t len, cp_wire_run_done *d,
                            cp_plan_progress **samples, int *samples_cap,
                            cp_error *err) {
  reader r = {msg, len, 0, "run result", err};
  uint32_t status = 0, size = 0, code = 0, where = 0, text = 0, n = 0;
  uint64_t store = 0;
  memset(d, 0, sizeof *d);
  if (run_head(&r, TAG_RUN_DONE, &d->k) || get(&r, &status, 4) ||
      get(&r, &size, 4))
    return -1;
  if (size != sizeof d->res)
    return cp_error_setc(err, CP_ERR_INPUT, "run result",
                         "expected a result of %zu bytes, got %u (another "
                         "build of complan?)",
                         sizeof d->res, size);
  if (get(&r, &d->res, sizeof d->res) || get(&r, &code, 4) ||
      get(&r, &where, 4) || get(&r, &text, 4) || get(&r, &n, 4) ||
      get(&r, &store, sizeof store))
    return -1;
  if (status > (uint32_t)CP_PLAN_FAILED_EXPANSIONS ||
      where >= sizeof d->err.where || text >= sizeof d->err.msg ||
      n > (uint32_t)(INT32_MAX / (int)sizeof **samples))
    return cp_error_setc(err, CP_ERR_INPUT, "run result",
                         "expected a status of at most %d and texts that "
                         "fit, got status %u, %u + %u bytes of error, %u "
                         "samples",
                         (int)CP_PLAN_FAILED_EXPANSIONS, status, where, text,
                         n);
  if ((int)n > *samples_cap) {
    void *p = realloc(*samples, (size_t)n * sizeof **samples);
    if (!p) return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
    *samples = p;
    *samples_cap = (int)n;
  }
  if (get(&r, d->err.where, where) || get(&r, d->err.msg, text) ||
      get(&r, *samples, (size_t)n * sizeof **samples))
    return -1;
  if (store != len - r.at)
    return cp_error_setc(err, CP_ERR_INPUT, "run result",
                         "expected a store of %llu bytes, %zu are left",
                         (unsigned long long)store, len - r.at);
  d->err.where[where] = 0;
  d->err.msg[text] = 0;
  d->err.code = (cp_error_code)code;
  d->status = (cp_plan_status)status;
  d->samples = *samples;
  d->n_samples = (int)n;
  d->store = (const unsigned char *)msg + r.at;
  d->store_len = (size_t)store;
  return 0;
}
