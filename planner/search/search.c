#include "planner/search/search.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/clock.h"
#include "planner/search/search_impl.h"

/* The planner table: adding a planner is one more file and one more row. */
static const cp_planner_impl *const planners[] = {
    &cp_planner_astar, &cp_planner_rrt, &cp_planner_sst};
static const char *const method_names[] = {"astar", "rrt", "sst", NULL};

const char *const *cp_search_methods(void) { return method_names; }

/* --- generator ------------------------------------------------------------ */

static uint64_t splitmix(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void cp_rng_seed(cp_rng *r, uint64_t seed) {
  for (int k = 0; k < 4; ++k) r->s[k] = splitmix(&seed);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t cp_rng_next(cp_rng *r) {
  uint64_t *s = r->s;
  uint64_t out = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return out;
}

double cp_rng_uniform(cp_rng *r) {
  return (double)(cp_rng_next(r) >> 11) * 0x1.0p-53;
}

/* --- outcomes ------------------------------------------------------------- */

static const char *const outcome_names[CP_EXPAND_COUNT] = {
    "ok",       "joint_limit", "out_of_bounds", "penetration",
    "fallback", "nonfinite",   "solver_failed"};

const char *cp_expand_outcome_name(cp_expand_outcome o) {
  return (unsigned)o < CP_EXPAND_COUNT ? outcome_names[o] : "unknown";
}

int cp_expand_outcome_is_failure(cp_expand_outcome o) {
  return o == CP_EXPAND_SOLVER_FAILED || o == CP_EXPAND_NONFINITE;
}

/* --- budget --------------------------------------------------------------- */

double cp_search_budget_now(const cp_search_budget *b) {
  if (b && b->clock) return b->clock(b->clock_ctx);
  return cp_clock_now();
}

int cp_search_budget_spent(const cp_search_budget *b) {
  if (!b) return 0;
  if (b->cancel && cp_search_cancelled(b->cancel)) return 1;
  return b->has_deadline && cp_search_budget_now(b) >= b->deadline;
}

int cp_search_cancelled(const volatile sig_atomic_t *flag) {
  return __atomic_load_n(flag, __ATOMIC_RELAXED) != 0;
}

double cp_search_budget_left(const cp_search_budget *b) {
  if (!b || !b->has_deadline) return INFINITY;
  return b->deadline - cp_search_budget_now(b);
}

int cp_expand_outcome_parse(const char *name, cp_expand_outcome *o) {
  for (int k = 0; k < CP_EXPAND_COUNT; ++k)
    if (!strcmp(name, outcome_names[k])) {
      *o = (cp_expand_outcome)k;
      return 0;
    }
  return -1;
}

cp_search_options cp_search_defaults(void) {
  cp_search_options o = {.method = "astar",
                         .weight = 1.5,
                         .goal_bias = 0.05,
                         .candidates = 8,
                         .delta_bn = 0.05,
                         .delta_s = 0.02,
                         .seed = 1,
                         .max_nodes = 100000,
                         .batch = 1,
                         .fresh_revive = 1};
  return o;
}

/* --- nodes ---------------------------------------------------------------- */

static int grow_nodes(cp_search *s) {
  if (s->n_nodes < s->cap) return 0;
  long cap = s->cap ? 2 * s->cap : 1024;
  size_t n = (size_t)s->p.n;
  cp_search_node *nodes = realloc(s->nodes, (size_t)cap * sizeof *nodes);
  if (!nodes) return -1;
  s->nodes = nodes;
  double *x = realloc(s->x, (size_t)cap * n * sizeof *x);
  if (!x) return -1;
  s->x = x;
  void **w = realloc(s->warm, (size_t)cap * sizeof *w);
  if (!w) return -1;
  s->warm = w;
  size_t *ws = realloc(s->warm_size, (size_t)cap * sizeof *ws);
  if (!ws) return -1;
  s->warm_size = ws;
  s->cap = cap;
  return 0;
}

/* The message of a node without one (never freed). */
static const char no_message[] = "";

static void free_node(cp_search *s, long id) {
  free(s->warm[id]);
  if (s->nodes[id].message != no_message) free((char *)s->nodes[id].message);
}

static long add_node(cp_search *s, const cp_search_node *node, const double *y,
                     const void *warm, size_t warm_size) {
  char *msg = NULL;
  if (grow_nodes(s) ||
      (node->message && node->message[0] && !(msg = strdup(node->message)))) {
    snprintf(s->message, sizeof s->message, "out of memory at %ld nodes",
             s->n_nodes);
    return -1;
  }
  long id = s->n_nodes;
  s->nodes[id] = *node;
  s->nodes[id].id = id;
  s->nodes[id].message = msg ? msg : no_message;
  memcpy(s->x + (size_t)id * (size_t)s->p.n, y, (size_t)s->p.n * sizeof *y);
  s->warm[id] = NULL;
  s->warm_size[id] = 0;
  if (warm && warm_size && (s->warm[id] = malloc(warm_size))) {
    memcpy(s->warm[id], warm, warm_size);
    s->warm_size[id] = warm_size;
  }
  s->n_nodes++;
  const cp_search_node *n = &s->nodes[id];
  if ((unsigned)n->outcome < CP_EXPAND_COUNT &&
      cp_expand_outcome_is_failure(n->outcome))
    s->failed[n->outcome]++;
  if (n->outcome == CP_EXPAND_OK) {
    if (n->goal_distance < s->best_distance) {
      s->best_distance = n->goal_distance;
      s->nearest_goal = id;
    }
    s->p.embed(s->p.ctx, y, s->scratch_e);
    for (int k = 0; k < s->p.m; ++k) {
      double e = s->scratch_e[k];
      if (e < s->lo[k]) s->lo[k] = e;
      if (e > s->hi[k]) s->hi[k] = e;
    }
  }
  return id;
}

int cp_search_simulate(cp_search *s, long from, long a, double *y,
                       cp_expansion *info) {
  memset(info, 0, sizeof *info);
  cp_search_view_budget(s);
  const cp_search_node *f = &s->nodes[from];
  int rc = s->p.expand(s->p.ctx, s->x + (size_t)from * (size_t)s->p.n, f->time,
                       s->warm[from], s->warm_size[from], a, y, info);
  if (rc == 1) return 1; /* the budget stopped it mid-action */
  if (rc) {
    snprintf(s->message, sizeof s->message, "expansion failed: %.200s",
             info->message[0] ? info->message : "out of memory");
    return -1;
  }
  cp_search_count(s, info);
  return 0;
}

void cp_search_count(cp_search *s, const cp_expansion *info) {
  s->stats.expansions++;
  s->stats.steps += info->steps;
  s->stats.lcp_solves += info->lcp_solves;
  s->stats.pivots += info->pivots;
  s->stats.fallbacks += info->fallbacks;
  s->stats.warm_steps += info->warm_steps;
  if (info->outcome != CP_EXPAND_OK) s->stats.rejected++;
}

void cp_search_view_budget(cp_search *s) {
  if (s->opt.budget) { /* the deadline waits for the session's progress */
    s->view = *s->opt.budget;
    if (!s->progressed) s->view.has_deadline = 0;
  }
}

double cp_search_edge_cost(const cp_search *s, long from, long a,
                           const double *y) {
  if (!s->p.edge_cost) return s->p.action_cost(s->p.ctx, a);
  return s->p.edge_cost(s->p.ctx, s->x + (size_t)from * (size_t)s->p.n, a, y);
}

long cp_search_record(cp_search *s, long from, long a, const double *y,
                      const cp_expansion *info) {
  const cp_search_node *f = &s->nodes[from];
  cp_search_node n;
  memset(&n, 0, sizeof n);
  n.parent = from;
  n.depth = f->depth + 1;
  n.time = f->time + s->p.duration;
  n.cost = f->cost + cp_search_edge_cost(s, from, a, y);
  n.action = a;
  n.outcome = info->outcome;
  n.steps = info->steps;
  n.lcp_solves = info->lcp_solves;
  n.pivots = info->pivots;
  n.fallbacks = info->fallbacks;
  n.warm_steps = info->warm_steps;
  n.goal_distance = s->p.goal_distance(s->p.ctx, y);
  n.message = info->message;
  if (n.outcome == CP_EXPAND_OK && s->p.in_goal(s->p.ctx, y))
    n.flags |= CP_NODE_GOAL;
  if (s->fresh && cp_search_try(s, from, a)) return -1;
  return add_node(s, &n, y, n.outcome == CP_EXPAND_OK ? info->warm : NULL,
                  info->warm_size);
}

/* --- fresh actions (cp_search_options.fresh_actions) ---------------------- */

static int grow_tried(cp_search *s, long id) {
  if (id < s->cap_tried) return 0;
  long cap = s->cap_tried ? s->cap_tried : 1024;
  while (cap <= id) cap *= 2;
  size_t w = (size_t)s->tried_words;
  if (cp_search_grow_zeroed((void **)&s->tried, s->cap_tried, cap,
                            w * sizeof *s->tried) ||
      cp_search_grow_zeroed((void **)&s->n_tried, s->cap_tried, cap,
                            sizeof *s->n_tried))
    return -1;
  s->cap_tried = cap;
  return 0;
}

static int is_tried(const cp_search *s, long id, long a) {
  if (id >= s->cap_tried) return 0;
  return (int)((s->tried[(size_t)id * (size_t)s->tried_words + (size_t)(a >> 6)] >>
                (a & 63)) & 1u);
}

int cp_search_exhausted(const cp_search *s, long id) {
  return s->fresh && id < s->cap_tried && s->n_tried[id] >= s->p.n_actions;
}

int cp_search_try(cp_search *s, long from, long a) {
  if (!s->fresh || is_tried(s, from, a)) return 0;
  if (grow_tried(s, from)) goto nomem;
  if (s->n_log == s->cap_log) {
    long cap = s->cap_log ? 2 * s->cap_log : 256;
    long *l = realloc(s->tried_log, 2 * (size_t)cap * sizeof *l);
    if (!l) goto nomem;
    s->tried_log = l;
    s->cap_log = cap;
  }
  s->tried[(size_t)from * (size_t)s->tried_words + (size_t)(a >> 6)] |=
      (uint64_t)1 << (a & 63);
  s->n_tried[from]++;
  s->tried_log[2 * s->n_log] = from;
  s->tried_log[2 * s->n_log + 1] = a;
  s->n_log++;
  return 0;
nomem:
  snprintf(s->message, sizeof s->message, "out of memory");
  return -1;
}

/* The r-th untried action of node id (0 <= r < untried count). */
static long untried_action(const cp_search *s, long id, long r) {
  for (long a = 0; a < s->p.n_actions; ++a)
    if (!is_tried(s, id, a) && r-- == 0) return a;
  return -1;
}

int cp_search_pick_fresh(cp_search *s, long from, long *out, int k) {
  long left = s->p.n_actions - (from < s->cap_tried ? s->n_tried[from] : 0);
  int c = 0;
  if (left <= k) { /* every untried action, in order */
    for (long a = 0; a < s->p.n_actions; ++a)
      if (!is_tried(s, from, a)) out[c++] = a;
  } else { /* marked as drawn: the next draw is among the ones left */
    while (c < k) {
      long r = (long)(cp_rng_next(&s->rng) % (uint64_t)left);
      out[c] = untried_action(s, from, r);
      if (cp_search_try(s, from, out[c])) return -1;
      left--;
      c++;
    }
    return c;
  }
  for (int j = 0; j < c; ++j)
    if (cp_search_try(s, from, out[j])) return -1;
  return c;
}

int cp_search_fresh_near(cp_search *s, const cp_nn *nn, const double *q,
                         int want, const long **ids, const double **d2) {
  long live = cp_nn_size(nn);
  int k = want;
  for (;;) {
    int kq = live < k ? (int)live : k;
    if (kq > s->cap_near) {
      long *i = realloc(s->near_ids, (size_t)kq * sizeof *i);
      if (i) s->near_ids = i;
      double *d = i ? realloc(s->near_d2, (size_t)kq * sizeof *d) : NULL;
      if (!d) goto nomem;
      s->near_d2 = d;
      s->cap_near = kq;
    }
    int n = kq > 0 ? cp_nn_knearest(nn, q, kq, s->near_ids, s->near_d2) : 0;
    if (n < 0) goto nomem;
    int c = 0;
    for (int j = 0; j < n && c < want; ++j)
      if (!cp_search_exhausted(s, s->near_ids[j])) {
        s->near_ids[c] = s->near_ids[j];
        s->near_d2[c] = s->near_d2[j];
        c++;
      }
    if (c >= want || n < kq || kq >= live) {
      *ids = s->near_ids;
      *d2 = s->near_d2;
      return c;
    }
    k = k > INT32_MAX / 4 ? INT32_MAX : 4 * k;
  }
nomem:
  snprintf(s->message, sizeof s->message, "out of memory");
  return -1;
}

/* Appends id to a journal list (once). */
static int journal_add(cp_search *s, long **list, long *n, long *cap,
                       long id) {
  for (long k = 0; k < *n; ++k)
    if ((*list)[k] == id) return 0;
  if (*n == *cap) {
    long c = *cap ? 2 * *cap : 256;
    long *u = realloc(*list, (size_t)c * sizeof *u);
    if (!u) {
      snprintf(s->message, sizeof s->message, "out of memory");
      return -1;
    }
    *list = u;
    *cap = c;
  }
  (*list)[(*n)++] = id;
  return 0;
}

int cp_search_flag(cp_search *s, long id, int set, int clear) {
  int f = (s->nodes[id].flags | set) & ~clear;
  if (f == s->nodes[id].flags) return 0;
  s->nodes[id].flags = f;
  if (id >= s->journal_first) return 0; /* new rows carry their flags */
  return journal_add(s, &s->updates, &s->n_updates, &s->cap_updates, id);
}

int cp_search_stop_requested(const cp_search *s) {
  return s->progressed && cp_search_budget_spent(s->opt.budget);
}

void cp_search_mark(cp_search *s) {
  s->n_log = 0;
  s->mark.n_nodes = s->n_nodes;
  s->mark.best = s->best;
  s->mark.nearest_goal = s->nearest_goal;
  s->mark.iterations = s->stats.iterations;
  s->mark.best_distance = s->best_distance;
  s->mark.rng = s->rng;
  s->mark.stats = s->stats;
  memcpy(s->mark.failed, s->failed, sizeof s->failed);
  memcpy(s->mark_lo, s->lo, (size_t)s->p.m * sizeof *s->lo);
  memcpy(s->mark_hi, s->hi, (size_t)s->p.m * sizeof *s->hi);
}

void cp_search_rollback(cp_search *s) {
  for (long j = s->n_log - 1; j >= 0; --j) { /* the pairs marked since */
    long id = s->tried_log[2 * j], a = s->tried_log[2 * j + 1];
    s->tried[(size_t)id * (size_t)s->tried_words + (size_t)(a >> 6)] &=
        ~((uint64_t)1 << (a & 63));
    s->n_tried[id]--;
  }
  s->n_log = 0;
  for (long id = s->mark.n_nodes; id < s->n_nodes; ++id) free_node(s, id);
  s->n_nodes = s->mark.n_nodes;
  if (s->journal_first > s->n_nodes) s->journal_first = s->n_nodes;
  s->best = s->mark.best;
  s->nearest_goal = s->mark.nearest_goal;
  s->best_distance = s->mark.best_distance;
  s->rng = s->mark.rng;
  s->stats = s->mark.stats;
  memcpy(s->failed, s->mark.failed, sizeof s->failed);
  memcpy(s->lo, s->mark_lo, (size_t)s->p.m * sizeof *s->lo);
  memcpy(s->hi, s->mark_hi, (size_t)s->p.m * sizeof *s->hi);
}

long cp_search_witness_add(cp_search *s, const double *e) {
  if (s->n_w == s->cap_w) {
    long cap = s->cap_w ? 2 * s->cap_w : 256;
    double *x = realloc(s->w_x, (size_t)cap * (size_t)s->p.m * sizeof *x);
    if (x) s->w_x = x;
    long *r = x ? realloc(s->w_rep, (size_t)cap * sizeof *r) : NULL;
    if (!r) {
      snprintf(s->message, sizeof s->message, "out of memory");
      return -1;
    }
    s->w_rep = r;
    s->cap_w = cap;
  }
  memcpy(s->w_x + (size_t)s->n_w * (size_t)s->p.m, e,
         (size_t)s->p.m * sizeof *e);
  s->w_rep[s->n_w] = -1;
  return s->n_w++;
}

int cp_search_witness_set_rep(cp_search *s, long w, long rep) {
  s->w_rep[w] = rep;
  if (w >= s->w_first) return 0; /* new rows carry their representative */
  return journal_add(s, &s->w_updates, &s->n_wu, &s->cap_wu, w);
}

long cp_search_witness_count(const cp_search *s) { return s->n_w; }

const double *cp_search_witness(const cp_search *s, long id, long *rep) {
  if (id < 0 || id >= s->n_w) return NULL;
  if (rep) *rep = s->w_rep[id];
  return s->w_x + (size_t)id * (size_t)s->p.m;
}

long cp_search_witness_first(const cp_search *s) { return s->w_first; }

const long *cp_search_witness_updates(const cp_search *s, long *n) {
  *n = s->n_wu;
  return s->w_updates;
}

int cp_search_adopt_witness(cp_search *s, long id, const double *point,
                            int m, long rep) {
  if (id != s->n_w || m != s->p.m || rep < -1 || rep >= s->n_nodes) {
    snprintf(s->message, sizeof s->message,
             "resume: witness %ld (%d numbers, representative %ld) given "
             "where witness %ld of %d numbers was expected",
             id, m, rep, s->n_w, s->p.m);
    return -1;
  }
  if (cp_search_witness_add(s, point) < 0) return -1;
  s->w_rep[id] = rep;
  return 0;
}

long cp_search_failures(const cp_search *s, long *by_outcome) {
  long total = 0;
  for (int k = 0; k < CP_EXPAND_COUNT; ++k) {
    total += s->failed[k];
    if (by_outcome) by_outcome[k] = s->failed[k];
  }
  return total;
}

int cp_search_sample(cp_search *s, double *e) {
  int m = s->p.m;
  if (s->nearest_goal >= 0 && cp_rng_uniform(&s->rng) < s->opt.goal_bias) {
    s->p.embed(s->p.ctx, s->x + (size_t)s->nearest_goal * (size_t)s->p.n, e);
    s->p.goal_sample(s->p.ctx, e);
    return 1;
  }
  double *lo = s->scratch_e, *hi = s->scratch_e + m;
  for (int k = 0; k < m; ++k) {
    /* Widen the tree's box so that samples pull it outwards. */
    double w = 0.25 * (s->hi[k] - s->lo[k]) + 0.02;
    lo[k] = s->lo[k] - w;
    hi[k] = s->hi[k] + w;
  }
  s->p.sample_bounds(s->p.ctx, lo, hi);
  for (int k = 0; k < m; ++k)
    e[k] = lo[k] + (hi[k] - lo[k]) * cp_rng_uniform(&s->rng);
  return 0;
}

/* --- life cycle ----------------------------------------------------------- */

cp_search *cp_search_create(const cp_search_problem *p,
                            const cp_search_options *opt, const double *x0,
                            int resume, char *msg, size_t size) {
  cp_search_options o = opt ? *opt : cp_search_defaults();
  if (o.connect < 0 || (o.connect > 0 && o.batch > 1)) {
    snprintf(msg, size, "search connect %d: expected >= 0, and batch 1 with "
             "connect > 0", o.connect);
    return NULL;
  }
  if (o.drop_rejected != 0 && o.drop_rejected != 1) {
    snprintf(msg, size, "search drop_rejected %d: expected 0 or 1",
             o.drop_rejected);
    return NULL;
  }
  if (o.fresh_actions != 0 && o.fresh_actions != 1) {
    snprintf(msg, size, "search fresh_actions %d: expected 0 or 1",
             o.fresh_actions);
    return NULL;
  }
  if (o.fresh_revive != 0 && o.fresh_revive != 1) {
    snprintf(msg, size, "search fresh_revive %d: expected 0 or 1",
             o.fresh_revive);
    return NULL;
  }
  if (o.goal_k < 0 || o.goal_k > CP_SEARCH_MAX_GOAL_K) {
    snprintf(msg, size, "search goal_k %d is not in 0 .. %d", o.goal_k,
             CP_SEARCH_MAX_GOAL_K);
    return NULL;
  }
  if (o.batch < 1 || o.batch > CP_SEARCH_MAX_BATCH) {
    snprintf(msg, size, "search batch %d is not in 1 .. %d", o.batch,
             CP_SEARCH_MAX_BATCH);
    return NULL;
  }
  if (o.pipeline && (o.batch < 2 || !o.method || !strcmp(o.method, "astar"))) {
    snprintf(msg, size, "search pipeline needs method rrt or sst and batch "
             ">= 2 (method %s, batch %d)", o.method ? o.method : "(null)",
             o.batch);
    return NULL;
  }
  const cp_planner_impl *impl = NULL;
  for (size_t k = 0; k < sizeof planners / sizeof *planners; ++k)
    if (o.method && !strcmp(o.method, planners[k]->name)) impl = planners[k];
  if (!impl) {
    snprintf(msg, size, "unknown search method \"%s\" (expected astar, rrt "
             "or sst)", o.method ? o.method : "(null)");
    return NULL;
  }
  if (p->n < 1 || p->m < 1 || p->n_actions < 1 || !p->expand) {
    snprintf(msg, size, "bad search problem (no state, metric or action)");
    return NULL;
  }
  if (o.fresh_actions && impl != &cp_planner_astar &&
      p->n_actions > CP_SEARCH_MAX_FRESH_ACTIONS) {
    snprintf(msg, size, "search fresh_actions needs at most %d actions (the "
             "problem has %ld; continuous sampling does not repeat actions)",
             CP_SEARCH_MAX_FRESH_ACTIONS, p->n_actions);
    return NULL;
  }
  if (o.steer_local &&
      (impl == &cp_planner_astar || o.batch > 1 || p->n_steer < 1 ||
       !p->steer_action || !p->steer_coords || !p->steer_rows)) {
    snprintf(msg, size, "local steering needs method rrt or sst, batch 1 "
             "and a problem that can be steered (n_steer > 0)");
    return NULL;
  }
  if (!(o.steer_probe >= 0 && o.steer_probe <= 1) ||
      ((o.steer_probe > 0 || o.steer_log) && !o.steer_local) ||
      (o.steer_log && !p->steer_pose)) {
    snprintf(msg, size, "steer_probe %g (expected in [0, 1]) and steer_log "
             "%d go with local steering, steer_log with pose rows",
             o.steer_probe, o.steer_log);
    return NULL;
  }
  cp_search *s = calloc(1, sizeof *s);
  if (!s) {
    snprintf(msg, size, "out of memory");
    return NULL;
  }
  s->p = *p;
  s->opt = o;
  s->opt.method = impl->name;
  s->impl = impl;
  s->fresh = o.fresh_actions && impl != &cp_planner_astar;
  s->opt.fresh_actions = s->fresh;
  s->tried_words = (p->n_actions + 63) / 64;
  s->best = -1;
  s->nearest_goal = -1;
  s->best_distance = INFINITY;
  cp_rng_seed(&s->rng, o.seed);
  s->scratch_y = malloc((size_t)p->n * sizeof(double));
  s->lo = malloc((size_t)p->m * sizeof(double));
  s->hi = malloc((size_t)p->m * sizeof(double));
  s->scratch_e = malloc(2 * (size_t)p->m * sizeof(double));
  s->mark_lo = malloc((size_t)p->m * sizeof(double));
  s->mark_hi = malloc((size_t)p->m * sizeof(double));
  if (!s->scratch_y || !s->lo || !s->hi || !s->scratch_e || !s->mark_lo ||
      !s->mark_hi)
    goto nomem;
  for (int k = 0; k < p->m; ++k) {
    s->lo[k] = INFINITY;
    s->hi[k] = -INFINITY;
  }
  if (p->set_batch) p->set_batch(p->ctx, o.batch);
  if (!resume) {
    cp_search_node n;
    memset(&n, 0, sizeof n);
    n.parent = -1;
    n.action = -1;
    n.goal_distance = p->goal_distance(p->ctx, x0);
    if (p->in_goal(p->ctx, x0)) n.flags |= CP_NODE_GOAL;
    if (add_node(s, &n, x0, NULL, 0) < 0) goto nomem;
    if (impl->init(s)) goto fail;
  }
  if (p->set_budget) p->set_budget(p->ctx, o.budget ? &s->view : NULL);
  return s;
nomem:
  snprintf(s->message, sizeof s->message, "out of memory");
fail:
  snprintf(msg, size, "%s", s->message);
  cp_search_destroy(s);
  return NULL;
}

void cp_search_destroy(cp_search *s) {
  if (!s) return;
  cp_search_batch_drain(s); /* before the workers' budget goes */
  if (s->p.set_budget) s->p.set_budget(s->p.ctx, NULL);
  if (s->impl && s->impl->destroy) s->impl->destroy(s);
  cp_search_batch_free(s);
  for (long k = 0; k < s->n_nodes; ++k) free_node(s, k);
  free(s->warm);
  free(s->warm_size);
  free(s->nodes);
  free(s->x);
  free(s->updates);
  free(s->scratch_y);
  free(s->scratch_e);
  free(s->lo);
  free(s->hi);
  free(s->mark_lo);
  free(s->mark_hi);
  free(s->w_x);
  free(s->w_rep);
  free(s->w_updates);
  free(s->tried);
  free(s->n_tried);
  free(s->tried_log);
  free(s->near_ids);
  free(s->near_d2);
  free(s);
}

int cp_search_adopt(cp_search *s, const cp_search_node *node,
                    const double *x, const void *warm, size_t warm_size) {
  if (node->id != s->n_nodes) {
    snprintf(s->message, sizeof s->message,
             "resume: node %ld given where %ld was expected", node->id,
             s->n_nodes);
    return -1;
  }
  if (node->parent >= node->id || (node->id > 0 && node->parent < 0)) {
    snprintf(s->message, sizeof s->message,
             "resume: node %ld has parent %ld", node->id, node->parent);
    return -1;
  }
  return add_node(s, node, x, warm, warm_size) < 0 ? -1 : 0;
}

int cp_search_resume(cp_search *s, const cp_rng *rng,
                     const cp_search_stats *stats) {
  if (s->n_nodes == 0) {
    snprintf(s->message, sizeof s->message, "resume: no stored nodes");
    return -1;
  }
  if (rng) s->rng = *rng;
  if (stats) s->stats = *stats;
  s->journal_first = s->n_nodes;
  s->w_first = s->n_w;
  s->resuming = 1;
  /* fresh_actions: every stored node's (parent, action) pair was tried. */
  for (long k = 1; k < s->n_nodes; ++k)
    if (s->fresh && s->nodes[k].action >= 0 &&
        s->nodes[k].action < s->p.n_actions &&
        cp_search_try(s, s->nodes[k].parent, s->nodes[k].action))
      return -1;
  s->n_log = 0;
  for (long k = 0; k < s->n_nodes; ++k) {
    const cp_search_node *n = &s->nodes[k];
    /* astar's best is the cheapest goal node generated, superseded or not
     * (its path is a plan all the same); the others' a node of the tree. */
    int astar = !strcmp(s->impl->name, "astar");
    if ((n->flags & CP_NODE_GOAL) && n->outcome == CP_EXPAND_OK &&
        !(n->flags & (CP_NODE_DISCARDED | (astar ? 0 : CP_NODE_SUPERSEDED))) &&
        (s->best < 0 || n->cost < s->nodes[s->best].cost))
      s->best = k;
  }
  if (s->impl->init(s) || s->impl->rebuild(s)) return -1;
  return 0;
}

void cp_search_set_stats(cp_search *s, const cp_search_stats *stats) {
  s->stats = *stats;
}

cp_search_status cp_search_iterate(cp_search *s) {
  if (s->n_nodes >= s->opt.max_nodes) return CP_SEARCH_NODE_LIMIT;
  cp_search_mark(s);
  s->stats.iterations++;
  cp_search_status st = s->impl->iterate(s);
  if (st != CP_SEARCH_STOPPED) s->progressed = 1;
  return st;
}

long cp_search_node_count(const cp_search *s) { return s->n_nodes; }

const cp_search_node *cp_search_node_get(const cp_search *s, long id) {
  return id >= 0 && id < s->n_nodes ? &s->nodes[id] : NULL;
}

const double *cp_search_state(const cp_search *s, long id) {
  return id >= 0 && id < s->n_nodes ? s->x + (size_t)id * (size_t)s->p.n
                                    : NULL;
}

int cp_search_state_size(const cp_search *s) { return s->p.n; }
int cp_search_embedding_size(const cp_search *s) { return s->p.m; }

const void *cp_search_warm(const cp_search *s, long id, size_t *size) {
  *size = id >= 0 && id < s->n_nodes ? s->warm_size[id] : 0;
  return *size ? s->warm[id] : NULL;
}
long cp_search_best(const cp_search *s) { return s->best; }
double cp_search_best_distance(const cp_search *s) { return s->best_distance; }
long cp_search_nearest(const cp_search *s) { return s->nearest_goal; }
const cp_search_stats *cp_search_get_stats(const cp_search *s) {
  return &s->stats;
}
const cp_rng *cp_search_rng(const cp_search *s) { return &s->rng; }
const char *cp_search_message(const cp_search *s) { return s->message; }
const char *cp_search_method(const cp_search *s) { return s->impl->name; }
int cp_search_fresh_actions(const cp_search *s) { return s->fresh; }

long cp_search_path(const cp_search *s, long id, long *ids, long cap) {
  long len = 0;
  for (long k = id; k >= 0; k = s->nodes[k].parent) ++len;
  long i = len;
  for (long k = id; k >= 0; k = s->nodes[k].parent)
    if (--i < cap) ids[i] = k;
  return len;
}

long cp_search_journal_first(const cp_search *s) { return s->journal_first; }

const long *cp_search_journal_updates(const cp_search *s, long *n) {
  *n = s->n_updates;
  return s->updates;
}

void cp_search_journal_clear(cp_search *s) {
  s->journal_first = s->n_nodes;
  s->n_updates = 0;
  s->w_first = s->n_w;
  s->n_wu = 0;
}
