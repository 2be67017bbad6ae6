/* Plan shortcutting (docs/planner.md, "Shortcutting"): cut a stretch out of
 * a plan, put nothing or one action in its place, and simulate the rest of
 * its actions again from where the stretch began; keep the result only when a node of it is in the goal and it is
 * cheaper. Every simulated outcome becomes a node (flagged SHORTCUT, child
 * of the node it was simulated from), so the shortened plan is a path of
 * the tree like any other: the store keeps it and replay re-simulates it
 * bit for bit. A plan that fails the goal is never returned: the best node
 * changes only to a node whose own goal test passed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/search/search_impl.h"

/* A cut stretch may be bridged by one action: actions 0 .. this - 1 are
 * tried (all of a grid that small; continuous sampling's first seeds). */
#define CP_SHORTCUT_BRIDGES 64

/* Simulates action `bridge` (when >= 0) and then actions act[k0..n-1] from
 * node `from` as SHORTCUT nodes, until one is rejected or one is in the
 * goal. Returns the goal node, -1 when none, -2 when the budget stopped it,
 * -3 on a fatal error. *spent counts the simulations. */
static long replay_tail(cp_search *s, long from, long bridge, const long *act,
                        long k0, long n, long *spent) {
  for (long k = bridge >= 0 ? k0 - 1 : k0; k < n; ++k) {
    long a = k < k0 ? bridge : act[k];
    cp_expansion info;
    double *y = s->scratch_y;
    int rc = cp_search_simulate(s, from, a, y, &info);
    if (rc == 1) return -2;
    if (rc) return -3;
    ++*spent;
    long id = cp_search_record(s, from, a, y, &info);
    if (id < 0) return -3;
    s->nodes[id].flags |= CP_NODE_SHORTCUT; /* a new row: no journal entry */
    if (info.outcome != CP_EXPAND_OK) return -1;
    if (s->nodes[id].flags & CP_NODE_GOAL) return id;
    from = id;
  }
  return -1;
}

long cp_search_shortcut(cp_search *s, long goal, long max_sims) {
  if (goal < 0 || goal >= s->n_nodes || !(s->nodes[goal].flags & CP_NODE_GOAL))
    return goal;
  long len = cp_search_path(s, goal, NULL, 0);
  long *ids = malloc((size_t)len * sizeof *ids);
  long *act = malloc((size_t)len * sizeof *act);
  if (!ids || !act) {
    free(ids);
    free(act);
    snprintf(s->message, sizeof s->message, "out of memory");
    return -1;
  }
  long spent = 0;
  int improved = 1;
  while (improved && spent < max_sims) {
    improved = 0;
    len = cp_search_path(s, goal, ids, len);
    for (long k = 1; k < len; ++k) act[k] = s->nodes[ids[k]].action;
    /* Cut actions i+1 .. j (nodes ids[i+1..j]), longest cuts first; put
     * nothing or one action (each of the first CP_SHORTCUT_BRIDGES) in
     * their place; then actions j+1 .. len-1 again from ids[i]. */
    long bridges = s->p.n_actions < CP_SHORTCUT_BRIDGES ? s->p.n_actions
                                                        : CP_SHORTCUT_BRIDGES;
    for (long i = 0; i + 2 < len && !improved && spent < max_sims; ++i)
      for (long j = len - 1; j >= i + 2 && !improved && spent < max_sims; --j)
        for (long b = -1; b < bridges && !improved && spent < max_sims; ++b) {
          long g = replay_tail(s, ids[i], b, act, j + 1, len, &spent);
          if (g == -2) goto done;
          if (g == -3) {
            free(ids);
            free(act);
            return -1;
          }
          if (g >= 0 && s->nodes[g].cost < s->nodes[goal].cost) {
            goal = g;
            improved = 1;
          }
        }
  }
done:
  free(ids);
  free(act);
  s->best = goal;
  return goal;
}
