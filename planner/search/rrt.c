/* Kinodynamic RRT (LaValle and Kuffner 2001; docs/math.md §8): sample a
 * state embedding (goal-biased), take the nearest tree node under the
 * weighted metric (k-d tree, planner/search/nn.h), simulate k candidate actions
 * from it and keep the one ending nearest the sample (for a goal sample:
 * the one of least goal distance, i.e. steering by the goal metric). The other candidates
 * are stored as DISCARDED nodes (every explored state is data). The search
 * stops at the first node in the goal region. When the budget stops it
 * between two candidates, the iteration is undone (cp_search_rollback) and
 * drawn again when the search resumes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/search/search_impl.h"

typedef struct rrt {
  cp_nn *nn;
  double *sample, *e; /* [m] */
  long *actions;      /* [k] */
} rrt;

static int rrt_init(cp_search *s) {
  rrt *r = calloc(1, sizeof *r);
  if (!r) goto nomem;
  s->state = r;
  r->nn = cp_nn_create(s->p.m);
  r->sample = malloc((size_t)s->p.m * sizeof(double));
  r->e = malloc((size_t)s->p.m * sizeof(double));
  r->actions = malloc((size_t)(s->opt.candidates > 0 ? s->opt.candidates : 1) *
                      sizeof(long));
  if (!r->nn || !r->sample || !r->e || !r->actions) goto nomem;
  if (!s->resuming) {
    s->p.embed(s->p.ctx, cp_search_state(s, 0), r->e);
    if (cp_nn_add(r->nn, r->e, 0)) goto nomem;
  }
  return 0;
nomem:
  snprintf(s->message, sizeof s->message, "out of memory");
  return -1;
}

static int rrt_rebuild(cp_search *s) {
  rrt *r = s->state;
  for (long id = 0; id < s->n_nodes; ++id) {
    const cp_search_node *n = &s->nodes[id];
    if (n->outcome != CP_EXPAND_OK ||
        (n->flags & (CP_NODE_DISCARDED | CP_NODE_SHORTCUT)))
      continue;
    s->p.embed(s->p.ctx, cp_search_state(s, id), r->e);
    if (cp_nn_add(r->nn, r->e, id)) {
      snprintf(s->message, sizeof s->message, "out of memory");
      return -1;
    }
  }
  return 0;
}

static double dist2(const double *a, const double *b, int m) {
  double d = 0;
  for (int k = 0; k < m; ++k) d += (a[k] - b[k]) * (a[k] - b[k]);
  return d;
}

/* k distinct random actions (all of them when there are at most k). */
static int pick_actions(cp_search *s, long *out, int k) {
  long na = s->p.n_actions;
  if (na <= k) {
    for (long a = 0; a < na; ++a) out[a] = a;
    return (int)na;
  }
  int c = 0;
  while (c < k) {
    long a = (long)(cp_rng_next(&s->rng) % (uint64_t)na);
    int dup = 0;
    for (int j = 0; j < c; ++j) dup |= out[j] == a;
    if (!dup) out[c++] = a;
  }
  return c;
}

static cp_search_status rrt_iterate(cp_search *s) {
  rrt *r = s->state;
  int m = s->p.m;
  int to_goal = cp_search_sample(s, r->sample);
  long near = cp_nn_nearest(r->nn, r->sample, NULL);
  if (near < 0) return CP_SEARCH_EXHAUSTED;
  int k = pick_actions(s, r->actions, s->opt.candidates);
  long kept = -1;
  double kept_d2 = 0;
  long first = s->n_nodes;
  for (int c = 0; c < k; ++c) {
    if (s->n_nodes >= s->opt.max_nodes) break;
    cp_expansion info;
    double *y = s->scratch_y;
    int rc = cp_search_simulate(s, near, r->actions[c], y, &info);
    if (rc < 0) return CP_SEARCH_FAILED;
    /* Stopped inside the iteration: undone, drawn again on resume. */
    if (rc == 1 || (c + 1 < k && cp_search_stop_requested(s))) {
      cp_search_rollback(s);
      return CP_SEARCH_STOPPED;
    }
    long id = cp_search_record(s, near, r->actions[c], y, &info);
    if (id < 0) return CP_SEARCH_FAILED;
    if (info.outcome != CP_EXPAND_OK) continue;
    /* A candidate in the goal is kept whatever the sample. Towards a goal
     * sample the candidates are steered by the goal distance (position and
     * angle) instead of the whole embedding's. */
    s->p.embed(s->p.ctx, y, r->e);
    double d2 = (s->nodes[id].flags & CP_NODE_GOAL) ? -1
                : to_goal ? s->nodes[id].goal_distance
                          : dist2(r->e, r->sample, m);
    if (kept < 0 || d2 < kept_d2) {
      kept = id;
      kept_d2 = d2;
    }
  }
  for (long id = first; id < s->n_nodes; ++id)
    if (id != kept && s->nodes[id].outcome == CP_EXPAND_OK)
      s->nodes[id].flags |= CP_NODE_DISCARDED; /* new rows: no journal entry */
  if (kept >= 0) {
    s->p.embed(s->p.ctx, cp_search_state(s, kept), r->e);
    if (cp_nn_add(r->nn, r->e, kept)) {
      snprintf(s->message, sizeof s->message, "out of memory");
      return CP_SEARCH_FAILED;
    }
    if (s->nodes[kept].flags & CP_NODE_GOAL) {
      s->best = kept;
      return CP_SEARCH_SOLVED;
    }
  }
  if (s->n_nodes >= s->opt.max_nodes) return CP_SEARCH_NODE_LIMIT;
  return CP_SEARCH_RUNNING;
}

static void rrt_destroy(cp_search *s) {
  rrt *r = s->state;
  if (!r) return;
  cp_nn_destroy(r->nn);
  free(r->sample);
  free(r->e);
  free(r->actions);
  free(r);
  s->state = NULL;
}

const cp_planner_impl cp_planner_rrt = {"rrt", rrt_init, rrt_rebuild,
                                        rrt_iterate, rrt_destroy};
