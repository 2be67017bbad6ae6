/* Kinodynamic RRT (LaValle and Kuffner 2001; docs/math.md §8): sample a
 * state embedding (goal-biased), take the nearest tree node under the
 * weighted metric (k-d tree, planner/search/nn.h), simulate k candidate actions
 * from it and keep the one ending nearest the sample (for a goal sample:
 * the one of least goal distance, i.e. steering by the goal metric). The other candidates
 * are stored as DISCARDED nodes (every explored state is data). The search
 * stops at the first node in the goal region. When the budget stops it
 * between two candidates, the iteration is undone (cp_search_rollback) and
 * drawn again when the search resumes.
 *
 * Greedy extension (search.connect = L > 0): when a goal sample's
 * iteration kept a node nearer the goal than the node it grew from, up to
 * L more goal-steered extensions follow from the node just kept, while
 * each comes nearer still (the "connect" of RRT-Connect, towards the goal
 * region). They belong to the iteration: its nodes join the k-d tree only
 * when it is whole, so an iteration undone by a limit or a stop leaves the
 * index as it was and a resumed search draws it again, bit for bit.
 *
 * Dropping dead nodes (search.drop_rejected): a node from which a whole
 * iteration kept nothing (every candidate rejected) is flagged DROPPED and
 * removed from the k-d tree. A resumed search adds the tree's nodes in id
 * order and then removes the dropped ones; removal only marks a point dead,
 * so the index has the uninterrupted run's shape and answers alike.
 *
 * Fresh actions (search.fresh_actions): an iteration's candidates are
 * drawn among its node's untried actions, and a node every action of which
 * has been tried (exhausted) is passed by when the nearest are looked for;
 * it stays in the k-d tree (search.c, cp_search_fresh_near). Once its node
 * is exhausted, an unkept candidate could never be reached again (no
 * iteration grows from its node): so, when a whole iteration leaves its
 * node exhausted, the node's unkept candidates that ended ok are kept
 * after all (DISCARDED cleared, a stored flag change) and join the k-d
 * tree (search.fresh_revive; rrt_revive). The k-d tree answers the nearest
 * by (distance, id), so a resumed search, which adds the tree's nodes in
 * id order, finds the nodes the uninterrupted one found. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/search/search_impl.h"

typedef struct rrt {
  cp_nn *nn;
  double *sample, *e; /* [m] */
  double *e_revive;   /* [m] rrt_revive's scratch */
  long *actions;      /* [k] */
  long *chain;        /* [connect] nodes kept by a greedy extension */
  long *knear;        /* [goal_k] a goal sample's nearest nodes */
} rrt;

static int rrt_init(cp_search *s) {
  rrt *r = calloc(1, sizeof *r);
  if (!r) goto nomem;
  s->state = r;
  r->nn = cp_nn_create(s->p.m);
  r->sample = malloc((size_t)s->p.m * sizeof(double));
  r->e = malloc((size_t)s->p.m * sizeof(double));
  r->e_revive = malloc((size_t)s->p.m * sizeof(double));
  r->actions = malloc((size_t)(s->opt.candidates > 0 ? s->opt.candidates : 1) *
                      sizeof(long));
  r->chain = malloc((size_t)(s->opt.connect > 0 ? s->opt.connect : 1) *
                    sizeof(long));
  r->knear = malloc((size_t)(s->opt.goal_k > 1 ? s->opt.goal_k : 1) *
                    sizeof(long));
  if (!r->nn || !r->sample || !r->e || !r->e_revive || !r->actions || !r->chain || !r->knear)
    goto nomem;
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
  for (long id = 0; id < s->n_nodes; ++id)
    if (s->nodes[id].flags & CP_NODE_DROPPED) cp_nn_remove(r->nn, id);
  return 0;
}

/* search.drop_rejected: an iteration from `from` kept no candidate; the
 * node leaves the k-d tree (once; never the start). 0, or -1 on failure. */
static int rrt_drop(cp_search *s, rrt *r, long from, long kept) {
  if (!s->opt.drop_rejected || kept >= 0 || from <= 0 ||
      (s->nodes[from].flags & CP_NODE_DROPPED))
    return 0;
  if (cp_search_flag(s, from, CP_NODE_DROPPED, 0)) {
    snprintf(s->message, sizeof s->message, "out of memory");
    return -1;
  }
  cp_nn_remove(r->nn, from);
  return 0;
}

/* search.fresh_revive: after a whole iteration from `from`, when `from`
 * is exhausted, its unkept ok children are kept after all and join the
 * k-d tree (rrt.c's opening comment). Its children have larger ids; a node
 * is exhausted once, so the scan runs once per node (and once more per
 * later iteration a batch drew from it before). 0, or -1 on failure. */
static int rrt_revive(cp_search *s, rrt *r, long from) {
  if (!s->opt.fresh_revive || !cp_search_exhausted(s, from)) return 0;
  for (long id = from + 1; id < s->n_nodes; ++id) {
    const cp_search_node *n = &s->nodes[id];
    if (n->parent != from || n->outcome != CP_EXPAND_OK ||
        (n->flags & (CP_NODE_DISCARDED | CP_NODE_SHORTCUT)) !=
            CP_NODE_DISCARDED)
      continue;
    s->p.embed(s->p.ctx, cp_search_state(s, id), r->e_revive);
    if (cp_search_flag(s, id, 0, CP_NODE_DISCARDED) ||
        cp_nn_add(r->nn, r->e_revive, id)) {
      snprintf(s->message, sizeof s->message, "out of memory");
      return -1;
    }
  }
  return 0;
}

/* The candidate kept by an iteration (-1: none) joins the tree. */
static cp_search_status rrt_keep(cp_search *s, rrt *r, long kept) {
  if (kept >= 0) {
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

/* The greedy extension after a goal sample's steering from `from` kept
 * *kept (rrt.c's opening comment); the chain's nodes but the last join the
 * k-d tree here, the last (*kept) in rrt_keep. */
static cp_search_status rrt_connect(cp_search *s, rrt *r, long from,
                                    long *kept) {
  int n = 0;
  double d = s->nodes[from].goal_distance;
  while (n < s->opt.connect && *kept >= 0 &&
         !(s->nodes[*kept].flags & CP_NODE_GOAL) &&
         s->nodes[*kept].goal_distance < d) {
    d = s->nodes[*kept].goal_distance;
    r->chain[n++] = *kept;
    int k = s->fresh ? cp_search_pick_fresh(s, *kept, r->actions,
                                            s->opt.candidates)
                     : cp_search_pick_actions(s, r->actions, s->opt.candidates);
    if (k < 0) return CP_SEARCH_FAILED;
    cp_search_status st =
        cp_search_steer(s, *kept, r->actions, k, r->sample, 1, r->e, kept);
    if (st != CP_SEARCH_RUNNING) return st; /* undone whole, or failed */
  }
  double *e = r->sample; /* the sample is spent: its buffer is free */
  for (int i = 0; i < n; ++i) {
    s->p.embed(s->p.ctx, cp_search_state(s, r->chain[i]), e);
    if (cp_nn_add(r->nn, e, r->chain[i])) {
      snprintf(s->message, sizeof s->message, "out of memory");
      return CP_SEARCH_FAILED;
    }
  }
  for (int i = 0; s->fresh && i < n; ++i) /* each grew the next */
    if (rrt_revive(s, r, r->chain[i])) return CP_SEARCH_FAILED;
  if (*kept >= 0) s->p.embed(s->p.ctx, cp_search_state(s, *kept), r->e);
  return CP_SEARCH_RUNNING;
}

/* The node an iteration grows from: the nearest the sample, or, for a goal
 * sample with goal_k > 1, one drawn uniformly among the goal_k nearest
 * (search.h). -1: the tree is empty; -2: out of memory. */
static long rrt_from(cp_search *s, rrt *r, const double *sample, int to_goal) {
  if (s->fresh) { /* as below, among the nodes not exhausted */
    const long *ids;
    const double *d2;
    int want = to_goal && s->opt.goal_k > 1 ? s->opt.goal_k : 1;
    int n = cp_search_fresh_near(s, r->nn, sample, want, &ids, &d2);
    if (n <= 0) return n < 0 ? -2 : -1;
    if (want == 1) return ids[0];
    int j = (int)(cp_rng_uniform(&s->rng) * n);
    return ids[j < n ? j : n - 1];
  }
  if (!to_goal || s->opt.goal_k <= 1) return cp_nn_nearest(r->nn, sample, NULL);
  int n = cp_nn_knearest(r->nn, sample, s->opt.goal_k, r->knear, NULL);
  if (n <= 0) return n < 0 ? -2 : -1;
  int j = (int)(cp_rng_uniform(&s->rng) * n);
  return r->knear[j < n ? j : n - 1];
}

/* Batches (search.batch > 1): iteration i drawn from the tree as it was
 * before the batch, merged in order. */
static int rrt_draw(cp_search *s, int i) {
  rrt *r = s->state;
  double *sample;
  long *acts;
  if (!cp_search_batch_iter(s, i, &sample, &acts)) return -1;
  int to_goal = cp_search_sample(s, sample);
  long near = rrt_from(s, r, sample, to_goal);
  if (near == -2) snprintf(s->message, sizeof s->message, "out of memory");
  if (near < 0) return near == -2 ? -1 : 1;
  int k = s->fresh ? cp_search_pick_fresh(s, near, acts, s->opt.candidates)
                   : cp_search_pick_actions(s, acts, s->opt.candidates);
  if (k < 0) return -1;
  return cp_search_batch_iter_end(s, i, near, k, to_goal);
}

static cp_search_status rrt_merge(cp_search *s, const cp_batch_iter *it,
                                  const double *sample) {
  rrt *r = s->state;
  long kept;
  cp_search_status st = cp_search_steer_merge(s, it, sample, r->e, &kept);
  if (st == CP_SEARCH_RUNNING && it->k > 0 && rrt_drop(s, r, it->from, kept))
    return CP_SEARCH_FAILED;
  if (st == CP_SEARCH_RUNNING && s->fresh && rrt_revive(s, r, it->from))
    return CP_SEARCH_FAILED;
  return st != CP_SEARCH_RUNNING ? st : rrt_keep(s, r, kept);
}

static cp_search_status rrt_iterate(cp_search *s) {
  rrt *r = s->state;
  if (s->opt.batch > 1) return cp_search_batch_iterate(s, rrt_draw, rrt_merge);
  int to_goal = cp_search_sample(s, r->sample);
  long near = rrt_from(s, r, r->sample, to_goal);
  if (near == -2) {
    snprintf(s->message, sizeof s->message, "out of memory");
    return CP_SEARCH_FAILED;
  }
  if (near < 0) return CP_SEARCH_EXHAUSTED;
  int k = s->fresh ? cp_search_pick_fresh(s, near, r->actions, s->opt.candidates)
                   : cp_search_pick_actions(s, r->actions, s->opt.candidates);
  if (k < 0) return CP_SEARCH_FAILED;
  long kept;
  cp_search_status st =
      cp_search_steer(s, near, r->actions, k, r->sample, to_goal, r->e, &kept);
  if (st == CP_SEARCH_RUNNING && k > 0 && rrt_drop(s, r, near, kept))
    return CP_SEARCH_FAILED;
  if (st == CP_SEARCH_RUNNING && to_goal && s->opt.connect > 0)
    st = rrt_connect(s, r, near, &kept);
  if (st == CP_SEARCH_RUNNING && s->fresh && rrt_revive(s, r, near))
    return CP_SEARCH_FAILED;
  return st != CP_SEARCH_RUNNING ? st : rrt_keep(s, r, kept);
}

static void rrt_destroy(cp_search *s) {
  rrt *r = s->state;
  if (!r) return;
  cp_nn_destroy(r->nn);
  free(r->sample);
  free(r->e);
  free(r->e_revive);
  free(r->actions);
  free(r->chain);
  free(r->knear);
  free(r);
  s->state = NULL;
}

const cp_planner_impl cp_planner_rrt = {"rrt", rrt_init, rrt_rebuild,
                                        rrt_iterate, rrt_destroy};
