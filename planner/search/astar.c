/* Weighted A* (docs/math.md §8): best-first on f = g + w h over the
 * candidate actions, with duplicate detection by the state's cell at the
 * task's resolution. A node is expanded with every action at once. The
 * goal test is made twice: when a node is generated (the cheapest goal node
 * generated so far is the search's best: a limit that ends the search
 * returns it) and when it is popped (the search stops: with w = 1 and a
 * consistent h the first goal popped is an optimal one).
 *
 * A node is flagged EXPANDED once every action has been simulated from it.
 * A limit or the budget may stop the search between two of its actions:
 * the node and its next action are then the cursor, and the next iteration
 * goes on from there. A resumed search finds the cursor again from what the
 * store keeps (astar_rebuild): the next action is the expansion count
 * modulo the action count (every finished node took all actions), and the
 * node is the one that was popped -- the least (f, id) among the open nodes
 * whose parent is expanded (the unfinished node's own children are the only
 * open nodes whose parent is not). */
#include <stdlib.h>
#include <string.h>
#include <stdio.h>

#include "models/hash.h"
#include "planner/search/search_impl.h"

typedef struct entry {
  double f;
  long id;
} entry;

typedef struct astar {
  entry *heap;
  long n_heap, cap_heap;
  long *table;      /* open addressing: node ids, -1 empty */
  long table_cap;   /* power of two */
  long table_used;
  int64_t *keys;    /* [key_cap * key_n] cell keys of the nodes */
  long key_cap;
  int64_t *key;     /* scratch [key_n] */
  long cursor;      /* node being expanded, -1 none */
  long next_action; /* its next action */
} astar;

static int heap_push(astar *a, double f, long id) {
  if (a->n_heap == a->cap_heap) {
    long cap = a->cap_heap ? 2 * a->cap_heap : 1024;
    entry *h = realloc(a->heap, (size_t)cap * sizeof *h);
    if (!h) return -1;
    a->heap = h;
    a->cap_heap = cap;
  }
  long i = a->n_heap++;
  /* Ties go to the older node: deterministic order. */
  while (i > 0) {
    long p = (i - 1) / 2;
    if (a->heap[p].f < f || (a->heap[p].f == f && a->heap[p].id < id)) break;
    a->heap[i] = a->heap[p];
    i = p;
  }
  a->heap[i].f = f;
  a->heap[i].id = id;
  return 0;
}

static long heap_pop(astar *a) {
  if (a->n_heap == 0) return -1;
  long top = a->heap[0].id;
  entry last = a->heap[--a->n_heap];
  long i = 0, n = a->n_heap;
  for (;;) {
    long c = 2 * i + 1;
    if (c >= n) break;
    if (c + 1 < n && (a->heap[c + 1].f < a->heap[c].f ||
                      (a->heap[c + 1].f == a->heap[c].f &&
                       a->heap[c + 1].id < a->heap[c].id)))
      ++c;
    if (last.f < a->heap[c].f ||
        (last.f == a->heap[c].f && last.id < a->heap[c].id))
      break;
    a->heap[i] = a->heap[c];
    i = c;
  }
  a->heap[i] = last;
  return top;
}

/* FNV-1a over the key's words, with a shift mixed in after each word (the
 * high bits reach the low ones the table indexes by). */
static uint64_t key_hash(const int64_t *k, int n) {
  uint64_t h = CP_FNV_OFFSET;
  for (int i = 0; i < n; ++i) {
    h ^= (uint64_t)k[i];
    h *= CP_FNV_PRIME;
    h ^= h >> 29;
  }
  return h;
}

static int store_key(cp_search *s, astar *a, long id, const int64_t *key) {
  int kn = s->p.key_n;
  if (id >= a->key_cap) {
    long cap = a->key_cap ? 2 * a->key_cap : 1024;
    while (cap <= id) cap *= 2;
    int64_t *k = realloc(a->keys, (size_t)cap * (size_t)kn * sizeof *k);
    if (!k) return -1;
    a->keys = k;
    a->key_cap = cap;
  }
  memcpy(a->keys + (size_t)id * (size_t)kn, key, (size_t)kn * sizeof *key);
  return 0;
}

/* Slot of key in the table: the slot holding it, or the empty slot where it
 * would go. */
static long slot_of(cp_search *s, astar *a, const int64_t *key) {
  int kn = s->p.key_n;
  long mask = a->table_cap - 1;
  long i = (long)(key_hash(key, kn) & (uint64_t)mask);
  while (a->table[i] >= 0 &&
         memcmp(a->keys + (size_t)a->table[i] * (size_t)kn, key,
                (size_t)kn * sizeof *key))
    i = (i + 1) & mask;
  return i;
}

static int table_grow(cp_search *s, astar *a) {
  if (2 * (a->table_used + 1) <= a->table_cap) return 0;
  long cap = a->table_cap ? 2 * a->table_cap : 4096;
  long *old = a->table, old_cap = a->table_cap;
  a->table = malloc((size_t)cap * sizeof *a->table);
  if (!a->table) {
    a->table = old;
    return -1;
  }
  for (long i = 0; i < cap; ++i) a->table[i] = -1;
  a->table_cap = cap;
  for (long i = 0; i < old_cap; ++i)
    if (old[i] >= 0)
      a->table[slot_of(s, a, a->keys + (size_t)old[i] * (size_t)s->p.key_n)] =
          old[i];
  free(old);
  return 0;
}

static double f_of(cp_search *s, long id) {
  return s->nodes[id].cost +
         s->opt.weight * s->p.heuristic(s->p.ctx, cp_search_state(s, id));
}

/* Puts node id into its cell (replacing a costlier occupant) and the open
 * list. */
static int admit(cp_search *s, astar *a, long id, const int64_t *key) {
  if (store_key(s, a, id, key) || table_grow(s, a)) return -1;
  long slot = slot_of(s, a, key);
  if (a->table[slot] < 0) a->table_used++;
  a->table[slot] = id;
  if (!(s->nodes[id].flags & CP_NODE_EXPANDED))
    return heap_push(a, f_of(s, id), id);
  return 0;
}

static int astar_init(cp_search *s) {
  astar *a = calloc(1, sizeof *a);
  if (!a || !(a->key = malloc((size_t)(s->p.key_n > 0 ? s->p.key_n : 1) *
                              sizeof *a->key))) {
    free(a);
    snprintf(s->message, sizeof s->message, "out of memory");
    return -1;
  }
  if (s->p.key_n < 1 || !s->p.discretise || !s->p.heuristic ||
      s->p.n_actions > 1000000) {
    free(a->key);
    free(a);
    snprintf(s->message, sizeof s->message,
             s->p.n_actions > 1000000
                 ? "astar expands every action: it needs a grid of at most "
                   "10^6 actions (continuous sampling is for rrt and sst)"
                 : "astar needs a discretisation and a heuristic");
    return -1;
  }
  s->state = a;
  a->cursor = -1;
  if (!s->resuming) { /* a fresh search: the start node */
    s->p.discretise(s->p.ctx, cp_search_state(s, 0), a->key);
    if (admit(s, a, 0, a->key)) {
      snprintf(s->message, sizeof s->message, "out of memory");
      return -1;
    }
  }
  return 0;
}

static int astar_rebuild(cp_search *s) {
  astar *a = s->state;
  for (long id = 0; id < s->n_nodes; ++id) {
    const cp_search_node *n = &s->nodes[id];
    if (n->outcome != CP_EXPAND_OK ||
        (n->flags & (CP_NODE_SUPERSEDED | CP_NODE_DISCARDED | CP_NODE_SHORTCUT)))
      continue;
    s->p.discretise(s->p.ctx, cp_search_state(s, id), a->key);
    if (admit(s, a, id, a->key)) {
      snprintf(s->message, sizeof s->message, "out of memory");
      return -1;
    }
  }
  /* The unfinished node, if the last session stopped inside one. */
  long done = s->stats.expansions % s->p.n_actions;
  if (done == 0) return 0;
  double best_f = 0;
  for (long id = 0; id < s->n_nodes; ++id) {
    const cp_search_node *n = &s->nodes[id];
    if (n->outcome != CP_EXPAND_OK ||
        (n->flags & (CP_NODE_SUPERSEDED | CP_NODE_DISCARDED |
                     CP_NODE_EXPANDED)) ||
        (n->parent >= 0 && !(s->nodes[n->parent].flags & CP_NODE_EXPANDED)))
      continue;
    double f = f_of(s, id);
    if (a->cursor < 0 || f < best_f) { /* ids ascend: ties keep the older */
      a->cursor = id;
      best_f = f;
    }
  }
  if (a->cursor < 0) {
    snprintf(s->message, sizeof s->message,
             "resume: %ld expansions leave a node unfinished, but no open "
             "node can be it", s->stats.expansions);
    return -1;
  }
  a->next_action = done;
  return 0;
}

/* The outcome of action act from node id (ending in y): a duplicate is
 * dropped, else recorded (superseding a costlier node of its cell) and
 * opened. 0, or -1 (message set). */
static int merge(cp_search *s, astar *a, long id, long act, const double *y,
                 const cp_expansion *info) {
  long old = -1;
  if (info->outcome == CP_EXPAND_OK) {
    s->p.discretise(s->p.ctx, y, a->key);
    if (table_grow(s, a)) goto nomem;
    long slot = slot_of(s, a, a->key);
    old = a->table[slot];
    double g = s->nodes[id].cost + cp_search_edge_cost(s, id, act, y);
    if (old >= 0 && (s->nodes[old].cost <= g ||
                     (s->nodes[old].flags & CP_NODE_EXPANDED))) {
      s->stats.duplicates++;
      return 0;
    }
  }
  long child = cp_search_record(s, id, act, y, info);
  if (child < 0) return -1;
  /* The goal test at generation: the cheapest goal node generated is the
   * plan a limit returns; the search still stops only when it pops one
   * (so that w = 1 keeps its optimality). */
  if ((s->nodes[child].flags & CP_NODE_GOAL) &&
      (s->best < 0 || s->nodes[child].cost < s->nodes[s->best].cost))
    s->best = child;
  if (info->outcome == CP_EXPAND_OK) {
    if (old >= 0 && cp_search_flag(s, old, CP_NODE_SUPERSEDED, 0)) return -1;
    if (admit(s, a, child, a->key)) goto nomem;
  }
  return 0;
nomem:
  snprintf(s->message, sizeof s->message, "out of memory");
  return -1;
}

/* Batches (search.batch > 1): the popped node's actions `batch` at a time,
 * simulated together and merged in action order -- the nodes of batch 1,
 * since siblings do not depend on one another. */
static cp_search_status expand_batched(cp_search *s, astar *a, long id,
                                       long act) {
  while (act < s->p.n_actions) {
    a->next_action = act;
    long room = s->opt.max_nodes - s->n_nodes, k = s->opt.batch;
    if (room <= 0) return CP_SEARCH_NODE_LIMIT;
    if (k > s->p.n_actions - act) k = s->p.n_actions - act;
    if (k > room) k = room; /* a merge adds at most one node */
    cp_search_batch_clear(s);
    for (long j = 0; j < k; ++j)
      if (cp_search_batch_add(s, id, act + j) < 0) return CP_SEARCH_FAILED;
    int done = cp_search_batch_run(s);
    if (done < 0) return CP_SEARCH_FAILED;
    for (int j = 0; j < done; ++j) {
      cp_expand_job *job = cp_search_batch_job(s, j);
      cp_search_count(s, &job->info);
      s->progressed = 1;
      if (merge(s, a, id, act + j, job->y, &job->info))
        return CP_SEARCH_FAILED;
    }
    act += done;
    if (done < k || (act < s->p.n_actions && cp_search_stop_requested(s))) {
      a->next_action = act; /* this action again on resume */
      return CP_SEARCH_STOPPED;
    }
  }
  a->cursor = -1;
  if (cp_search_flag(s, id, CP_NODE_EXPANDED, 0)) return CP_SEARCH_FAILED;
  return CP_SEARCH_RUNNING;
}

static cp_search_status astar_iterate(cp_search *s) {
  astar *a = s->state;
  long id = a->cursor, act = a->next_action;
  if (id < 0) {
    do {
      id = heap_pop(a);
      if (id < 0) return CP_SEARCH_EXHAUSTED;
    } while (s->nodes[id].flags & (CP_NODE_EXPANDED | CP_NODE_SUPERSEDED));
    if (s->nodes[id].flags & CP_NODE_GOAL) {
      /* A goal node generated earlier may be cheaper (w > 1). */
      if (s->best < 0 || s->nodes[id].cost <= s->nodes[s->best].cost)
        s->best = id;
      return CP_SEARCH_SOLVED;
    }
    act = 0;
  }
  a->cursor = id;
  if (s->opt.batch > 1) return expand_batched(s, a, id, act);
  double *y = s->scratch_y;
  for (; act < s->p.n_actions; ++act) {
    a->next_action = act;
    if (s->n_nodes >= s->opt.max_nodes) return CP_SEARCH_NODE_LIMIT;
    cp_expansion info;
    int rc = cp_search_simulate(s, id, act, y, &info);
    if (rc == 1) return CP_SEARCH_STOPPED; /* this action again on resume */
    if (rc) return CP_SEARCH_FAILED;
    s->progressed = 1;
    int stop = act + 1 < s->p.n_actions && cp_search_stop_requested(s);
    if (merge(s, a, id, act, y, &info)) return CP_SEARCH_FAILED;
    if (stop) {
      a->next_action = act + 1;
      return CP_SEARCH_STOPPED;
    }
  }
  a->cursor = -1;
  if (cp_search_flag(s, id, CP_NODE_EXPANDED, 0)) return CP_SEARCH_FAILED;
  return CP_SEARCH_RUNNING;
}

static void astar_destroy(cp_search *s) {
  astar *a = s->state;
  if (!a) return;
  free(a->heap);
  free(a->table);
  free(a->keys);
  free(a->key);
  free(a);
  s->state = NULL;
}

const cp_planner_impl cp_planner_astar = {"astar", astar_init, astar_rebuild,
                                          astar_iterate, astar_destroy};
