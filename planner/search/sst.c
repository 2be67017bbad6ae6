/* Stable Sparse RRT (Li, Littlefield and Bekris 2016; docs/math.md §8).
 *
 * Selection: sample s; among the ACTIVE nodes within delta_bn of s take the
 * cheapest (best-near), or the nearest when none is that close. Propagation:
 * one random action; for a goal sample (goal_bias), the best of `candidates`
 * random actions by the goal distance (goal steering, cp_search_steer; the
 * others are DISCARDED nodes). Sparsity: witnesses are points at least delta_s apart;
 * each holds a representative, the cheapest node seen in its cell. A new
 * node that is not cheaper than its witness's representative is DISCARDED;
 * a cheaper one replaces it, the old one becomes INACTIVE, and inactive
 * leaves are PRUNED recursively up the tree. The search keeps improving the
 * best goal cost until a limit ends it (asymptotically near-optimal).
 *
 * The witnesses and their representatives live in the search (cp_search
 * witnesses) so that the store keeps them: a resumed search rebuilds the
 * same witness index (points inserted in id order) and the same index of
 * active nodes (every node that was ever active inserted in id order, the
 * inactive ones then removed: the k-d tree's shape depends only on the
 * insertion order), hence grows the uninterrupted run's tree bit for bit.
 *
 * Fresh actions (search.fresh_actions): propagation draws among the
 * selected node's untried actions, and selection passes exhausted nodes
 * by (every action tried); the tried pairs are the search's (search.c),
 * rebuilt on a resume from the stored nodes' (parent, action). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/search/search_impl.h"

typedef struct sst {
  cp_nn *active;     /* embeddings of the active nodes */
  cp_nn *witnesses;  /* witness points, ids = witness index */
  long *children;    /* [cap_c] live (non-pruned, kept) children per node */
  long cap_c;
  double *sample, *e;
  long *actions;     /* [candidates] */
  long *near;        /* radius query buffer */
  long cap_near;
} sst;

static int grow_children(sst *t, long n) {
  if (n <= t->cap_c) return 0;
  long cap = t->cap_c ? t->cap_c : 1024;
  while (cap < n) cap *= 2;
  if (cp_search_grow_zeroed((void **)&t->children, t->cap_c, cap,
                            sizeof *t->children))
    return -1;
  t->cap_c = cap;
  return 0;
}

/* The witness of embedding e: the nearest within delta_s, else a new one. */
static long witness_of(cp_search *s, sst *t, const double *e) {
  double d2;
  long w = cp_nn_nearest(t->witnesses, e, &d2);
  if (w >= 0 && d2 <= s->opt.delta_s * s->opt.delta_s) return w;
  w = cp_search_witness_add(s, e);
  if (w >= 0 && cp_nn_add(t->witnesses, e, w)) return -1;
  return w;
}

static int sst_init(cp_search *s) {
  sst *t = calloc(1, sizeof *t);
  if (!t) goto nomem;
  s->state = t;
  t->active = cp_nn_create(s->p.m);
  t->witnesses = cp_nn_create(s->p.m);
  t->sample = malloc((size_t)s->p.m * sizeof(double));
  t->e = malloc((size_t)s->p.m * sizeof(double));
  t->actions = malloc((size_t)(s->opt.candidates > 0 ? s->opt.candidates : 1) *
                      sizeof(long));
  t->cap_near = 256;
  t->near = malloc((size_t)t->cap_near * sizeof(long));
  if (!t->active || !t->witnesses || !t->sample || !t->e || !t->actions || !t->near ||
      grow_children(t, 1024))
    goto nomem;
  if (!s->resuming) {
    s->p.embed(s->p.ctx, cp_search_state(s, 0), t->e);
    long w = witness_of(s, t, t->e);
    if (w < 0 || cp_nn_add(t->active, t->e, 0)) goto nomem;
    if (cp_search_witness_set_rep(s, w, 0)) goto nomem;
    if (s->nodes[0].flags & CP_NODE_GOAL) s->best = 0;
  }
  return 0;
nomem:
  snprintf(s->message, sizeof s->message, "out of memory");
  return -1;
}

static int in_tree(const cp_search_node *n) {
  return n->outcome == CP_EXPAND_OK &&
         !(n->flags & (CP_NODE_DISCARDED | CP_NODE_PRUNED | CP_NODE_SHORTCUT));
}

static int ever_active(const cp_search_node *n) {
  return n->outcome == CP_EXPAND_OK &&
         !(n->flags & (CP_NODE_DISCARDED | CP_NODE_SHORTCUT));
}

static int sst_rebuild(cp_search *s) {
  sst *t = s->state;
  if (grow_children(t, s->n_nodes)) goto nomem;
  for (long id = 1; id < s->n_nodes; ++id)
    if (in_tree(&s->nodes[id])) t->children[s->nodes[id].parent]++;
  /* Every node that was ever active, in id order; the inactive removed. */
  for (long id = 0; id < s->n_nodes; ++id) {
    if (!ever_active(&s->nodes[id])) continue;
    s->p.embed(s->p.ctx, cp_search_state(s, id), t->e);
    if (cp_nn_add(t->active, t->e, id)) goto nomem;
  }
  for (long id = 0; id < s->n_nodes; ++id)
    if (ever_active(&s->nodes[id]) && (s->nodes[id].flags & CP_NODE_INACTIVE))
      cp_nn_remove(t->active, id);
  long n_w = cp_search_witness_count(s);
  if (n_w > 0) { /* the stored witnesses */
    for (long w = 0; w < n_w; ++w)
      if (cp_nn_add(t->witnesses, cp_search_witness(s, w, NULL), w))
        goto nomem;
    return 0;
  }
  /* A run stored without its witnesses: rebuilt from the active nodes (a
   * search that goes on, but not the uninterrupted run's). */
  for (long id = 0; id < s->n_nodes; ++id) {
    const cp_search_node *n = &s->nodes[id];
    if (!in_tree(n) || (n->flags & CP_NODE_INACTIVE)) continue;
    s->p.embed(s->p.ctx, cp_search_state(s, id), t->e);
    long w = witness_of(s, t, t->e);
    if (w < 0) goto nomem;
    long rep;
    cp_search_witness(s, w, &rep);
    if ((rep < 0 || n->cost < s->nodes[rep].cost) &&
        cp_search_witness_set_rep(s, w, id))
      goto nomem;
  }
  return 0;
nomem:
  snprintf(s->message, sizeof s->message, "out of memory");
  return -1;
}

/* Best-near selection. The nearest active node first: when it lies beyond
 * delta_bn, so does every node, and the radius query would find none (it
 * compares the same squared distances with delta_bn * delta_bn), so it is
 * not made. A sample in the whole state bounds mostly lies far from a
 * tree on a thin sheet of them (push: 95 % of the samples). With
 * fresh_actions, exhausted nodes are passed by (they stay in the index,
 * which keeps its shape on a resume). -1: no node; -2: out of memory. */
static long select_node(cp_search *s, sst *t, const double *sample) {
  double d2;
  long nearest;
  if (s->fresh) { /* the nearest active node not exhausted */
    const long *ids;
    const double *dd;
    int n = cp_search_fresh_near(s, t->active, sample, 1, &ids, &dd);
    if (n < 0) return -2;
    nearest = n ? ids[0] : -1;
    d2 = n ? dd[0] : 0;
  } else {
    nearest = cp_nn_nearest(t->active, sample, &d2);
  }
  if (nearest < 0 || d2 > s->opt.delta_bn * s->opt.delta_bn) return nearest;
  long cnt = cp_nn_radius(t->active, sample, s->opt.delta_bn, t->near,
                          t->cap_near);
  if (cnt > t->cap_near) {
    long *p = realloc(t->near, (size_t)cnt * sizeof *p);
    if (p) {
      t->near = p;
      t->cap_near = cnt;
      cnt = cp_nn_radius(t->active, sample, s->opt.delta_bn, t->near, cnt);
    } else {
      cnt = t->cap_near;
    }
  }
  long best = -1;
  for (long k = 0; k < cnt; ++k)
    if (cp_search_exhausted(s, t->near[k])) {
      continue;
    } else if (best < 0 || s->nodes[t->near[k]].cost < s->nodes[best].cost ||
        (s->nodes[t->near[k]].cost == s->nodes[best].cost && t->near[k] < best))
      best = t->near[k];
  return best < 0 ? nearest : best;
}

static cp_search_status sst_accept(cp_search *s, sst *t, long from, long id);

/* Batches (search.batch > 1): iteration i selected from the tree as it was
 * before the batch, merged in order (a node made inactive or pruned by an
 * earlier iteration of the batch keeps the child it was already given). */
static int sst_draw(cp_search *s, int i) {
  sst *t = s->state;
  double *sample;
  long *acts;
  if (!cp_search_batch_iter(s, i, &sample, &acts)) return -1;
  int to_goal = cp_search_sample(s, sample);
  long from = select_node(s, t, sample);
  if (from == -2) return -1;
  if (from < 0) return 1;
  int k = 1;
  if (s->fresh)
    k = cp_search_pick_fresh(s, from, acts,
                             to_goal && s->opt.candidates > 1
                                 ? s->opt.candidates : 1);
  else if (to_goal && s->opt.candidates > 1)
    k = cp_search_pick_actions(s, acts, s->opt.candidates);
  else
    acts[0] = (long)(cp_rng_next(&s->rng) % (uint64_t)s->p.n_actions);
  if (k < 0) return -1;
  return cp_search_batch_iter_end(s, i, from, k,
                                  to_goal && s->opt.candidates > 1);
}

static cp_search_status sst_merge(cp_search *s, const cp_batch_iter *it,
                                  const double *sample) {
  sst *t = s->state;
  long id;
  cp_search_status st = cp_search_steer_merge(s, it, sample, t->e, &id);
  return st != CP_SEARCH_RUNNING ? st : sst_accept(s, t, it->from, id);
}

static cp_search_status sst_iterate(cp_search *s) {
  sst *t = s->state;
  if (s->opt.batch > 1) return cp_search_batch_iterate(s, sst_draw, sst_merge);
  int to_goal = cp_search_sample(s, t->sample);
  long from = select_node(s, t, t->sample);
  if (from == -2) return CP_SEARCH_FAILED;
  if (from < 0) return CP_SEARCH_EXHAUSTED;
  /* Propagation: one random action; towards a goal sample, the best of
   * `candidates` by the goal distance (goal steering, as rrt). With
   * fresh_actions, among the node's untried actions. */
  long id;
  cp_search_status st;
  if (s->fresh) {
    int g = to_goal && s->opt.candidates > 1;
    int k = cp_search_pick_fresh(s, from, t->actions,
                                 g ? s->opt.candidates : 1);
    if (k < 0) return CP_SEARCH_FAILED;
    st = cp_search_steer(s, from, t->actions, k, t->sample, g, t->e, &id);
  } else if (to_goal && s->opt.candidates > 1) {
    int k = cp_search_pick_actions(s, t->actions, s->opt.candidates);
    st = cp_search_steer(s, from, t->actions, k, t->sample, 1, t->e, &id);
  } else {
    t->actions[0] = (long)(cp_rng_next(&s->rng) % (uint64_t)s->p.n_actions);
    st = cp_search_steer(s, from, t->actions, 1, t->sample, 0, t->e, &id);
  }
  if (st != CP_SEARCH_RUNNING) return st;
  return sst_accept(s, t, from, id);
}

/* Node id (-1: none), propagated from `from`, against its witness's
 * representative: kept (the old one made inactive, inactive leaves pruned)
 * or discarded. */
static cp_search_status sst_accept(cp_search *s, sst *t, long from, long id) {
  if (grow_children(t, s->n_nodes)) goto nomem;
  if (id < 0) return CP_SEARCH_RUNNING;
  long w = witness_of(s, t, t->e);
  if (w < 0) goto nomem;
  long old;
  cp_search_witness(s, w, &old);
  double cost = s->nodes[id].cost;
  if (old >= 0 && s->nodes[old].cost <= cost) {
    s->nodes[id].flags |= CP_NODE_DISCARDED; /* new row: no journal entry */
    return CP_SEARCH_RUNNING;
  }
  if (cp_nn_add(t->active, t->e, id)) goto nomem;
  t->children[from]++;
  if (cp_search_witness_set_rep(s, w, id)) return CP_SEARCH_FAILED;
  if (old >= 0) {
    if (cp_search_flag(s, old, CP_NODE_INACTIVE, 0)) return CP_SEARCH_FAILED;
    cp_nn_remove(t->active, old);
    /* Prune inactive leaves up the tree. */
    long v = old;
    while (v > 0 && t->children[v] == 0 &&
           (s->nodes[v].flags & CP_NODE_INACTIVE) &&
           !(s->nodes[v].flags & CP_NODE_PRUNED)) {
      if (cp_search_flag(s, v, CP_NODE_PRUNED, 0)) return CP_SEARCH_FAILED;
      long p = s->nodes[v].parent;
      t->children[p]--;
      v = p;
    }
  }
  if ((s->nodes[id].flags & CP_NODE_GOAL) &&
      (s->best < 0 || cost < s->nodes[s->best].cost))
    s->best = id;
  return CP_SEARCH_RUNNING;
nomem:
  snprintf(s->message, sizeof s->message, "out of memory");
  return CP_SEARCH_FAILED;
}

static void sst_destroy(cp_search *s) {
  sst *t = s->state;
  if (!t) return;
  cp_nn_destroy(t->active);
  cp_nn_destroy(t->witnesses);
  free(t->children);
  free(t->sample);
  free(t->e);
  free(t->actions);
  free(t->near);
  free(t);
  s->state = NULL;
}

const cp_planner_impl cp_planner_sst = {"sst", sst_init, sst_rebuild,
                                        sst_iterate, sst_destroy};
