/* Steering for the sampling planners (rrt.c, sst.c): k candidate actions
 * from one node, the one ending nearest the sample kept (planner/search/
 * search_impl.h, cp_search_steer). */
#include <stdio.h>

#include "planner/search/search_impl.h"

int cp_search_pick_actions(cp_search *s, long *out, int k) {
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

static double dist2(const double *a, const double *b, int m) {
  double d = 0;
  for (int k = 0; k < m; ++k) d += (a[k] - b[k]) * (a[k] - b[k]);
  return d;
}

/* Candidate id (recorded, ending in y) against the one kept so far: a
 * candidate in the goal is kept whatever the sample; towards a goal sample
 * the candidates are steered by the goal distance (position and angle)
 * instead of the whole embedding's. */
static void consider(cp_search *s, long id, const double *y,
                     const double *sample, int to_goal, double *e, long *kept,
                     double *kept_d2) {
  if (s->nodes[id].outcome != CP_EXPAND_OK) return;
  double d2 = (s->nodes[id].flags & CP_NODE_GOAL) ? -1
              : to_goal ? s->nodes[id].goal_distance
                        : (s->p.embed(s->p.ctx, y, e), dist2(e, sample, s->p.m));
  if (*kept < 0 || d2 < *kept_d2) {
    *kept = id;
    *kept_d2 = d2;
  }
}

/* The other accepted candidates since `first` are discarded; e receives
 * the kept one's embedding. */
static void keep(cp_search *s, long first, long kept, double *e) {
  for (long id = first; id < s->n_nodes; ++id)
    if (id != kept && s->nodes[id].outcome == CP_EXPAND_OK)
      s->nodes[id].flags |= CP_NODE_DISCARDED; /* new rows: no journal entry */
  if (kept >= 0) s->p.embed(s->p.ctx, cp_search_state(s, kept), e);
}

cp_search_status cp_search_steer(cp_search *s, long from, const long *acts,
                                 int k, const double *sample, int to_goal,
                                 double *e, long *kept) {
  if (s->opt.steer_local) /* search.steer "local" (steer_local.c) */
    return cp_search_steer_local(s, from, acts, k, sample, to_goal, e, kept);
  long first = s->n_nodes;
  double kept_d2 = 0;
  *kept = -1;
  /* An iteration is whole or not at all: one the node limit would cut is
   * undone, so that a run resumed with a higher limit draws it again and
   * grows the uninterrupted run's tree. */
  if (s->n_nodes + k > s->opt.max_nodes) {
    cp_search_rollback(s);
    return CP_SEARCH_NODE_LIMIT;
  }
  for (int c = 0; c < k; ++c) {
    cp_expansion info;
    double *y = s->scratch_y;
    int rc = cp_search_simulate(s, from, acts[c], y, &info);
    if (rc < 0) return CP_SEARCH_FAILED;
    /* Stopped inside the iteration: undone, drawn again on resume. */
    if (rc == 1 || (c + 1 < k && cp_search_stop_requested(s))) {
      cp_search_rollback(s);
      *kept = -1;
      return CP_SEARCH_STOPPED;
    }
    long id = cp_search_record(s, from, acts[c], y, &info);
    if (id < 0) return CP_SEARCH_FAILED;
    consider(s, id, y, sample, to_goal, e, kept, &kept_d2);
  }
  keep(s, first, *kept, e);
  return CP_SEARCH_RUNNING;
}

cp_search_status cp_search_steer_merge(cp_search *s, const cp_batch_iter *it,
                                       const double *sample, double *e,
                                       long *kept) {
  long first = s->n_nodes;
  double kept_d2 = 0;
  *kept = -1;
  for (int c = 0; c < it->k; ++c) {
    cp_expand_job *j = cp_search_batch_job(s, it->first + c);
    cp_search_count(s, &j->info);
    long id = cp_search_record(s, it->from, j->a, j->y, &j->info);
    if (id < 0) return CP_SEARCH_FAILED;
    consider(s, id, j->y, sample, it->to_goal, e, kept, &kept_d2);
  }
  keep(s, first, *kept, e);
  return CP_SEARCH_RUNNING;
}

/* --- for local steering (steer_local.c) ---------------------------------- */

void cp_search_steer_consider(cp_search *s, long id, const double *y,
                              const double *sample, int to_goal, double *e,
                              long *kept, double *kept_d2) {
  consider(s, id, y, sample, to_goal, e, kept, kept_d2);
}

void cp_search_steer_keep(cp_search *s, long first, long kept, double *e) {
  keep(s, first, kept, e);
}
