/* What the store reads back: runs, nodes, witnesses, plans, the list of
 * runs and the benchmark summary. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/store/store_impl.h"

cp_store_status cp_store_find_resumable(cp_store *st, int64_t task_id,
                                        int64_t *run_id) {
  sqlite3_stmt *q;
  cp_store_status s =
      cp_store_one_row(st,
                       "SELECT id FROM searches WHERE task_id = ? AND"
                       " status IN ('running', 'limit', 'interrupted') AND"
                       " planner NOT LIKE 'ompl:%'" /* OMPL's: not resumable */
                       " ORDER BY id DESC LIMIT 1",
                       &task_id, 1, "cannot look for a run to resume", &q);
  if (s == CP_STORE_NOT_FOUND)
    return cp_store_failf(st, s, "no unfinished run of this task");
  if (s) return s;
  *run_id = sqlite3_column_int64(q, 0);
  sqlite3_finalize(q);
  return CP_STORE_OK;
}

cp_store_status cp_store_load_run(cp_store *st, int64_t run_id,
                                  cp_store_run *run) {
  memset(run, 0, sizeof *run);
  sqlite3_stmt *q;
  cp_store_status rs = cp_store_one_row(
      st,
      "SELECT id, task_id, planner, status, options, seed, state_size,"
      " seconds, rng, expansions, iterations, duplicates, rejected, steps,"
      " lcp_solves, pivots, fallbacks, warm_steps,"
      " (SELECT count(*) FROM nodes WHERE search_id = searches.id)"
      " FROM searches WHERE id = ?",
      &run_id, 1, "cannot read the run", &q);
  if (rs == CP_STORE_NOT_FOUND)
    return cp_store_failf(st, rs, "no run %lld", (long long)run_id);
  if (rs) return rs;
  run->id = sqlite3_column_int64(q, 0);
  run->task_id = sqlite3_column_int64(q, 1);
  snprintf(run->planner, sizeof run->planner, "%s",
           (const char *)sqlite3_column_text(q, 2));
  snprintf(run->status, sizeof run->status, "%s",
           (const char *)sqlite3_column_text(q, 3));
  const char *o = (const char *)sqlite3_column_text(q, 4);
  run->options = strdup(o ? o : "{}");
  run->seed = (uint64_t)sqlite3_column_int64(q, 5);
  run->state_size = sqlite3_column_int(q, 6);
  run->seconds = sqlite3_column_double(q, 7);
  if (sqlite3_column_bytes(q, 8) == (int)sizeof run->rng) {
    memcpy(&run->rng, sqlite3_column_blob(q, 8), sizeof run->rng);
    run->has_rng = 1;
  }
  cp_search_stats *s = &run->stats;
  s->expansions = (long)sqlite3_column_int64(q, 9);
  s->iterations = (long)sqlite3_column_int64(q, 10);
  s->duplicates = (long)sqlite3_column_int64(q, 11);
  s->rejected = (long)sqlite3_column_int64(q, 12);
  s->steps = sqlite3_column_int64(q, 13);
  s->lcp_solves = sqlite3_column_int64(q, 14);
  s->pivots = sqlite3_column_int64(q, 15);
  s->fallbacks = sqlite3_column_int64(q, 16);
  s->warm_steps = sqlite3_column_int64(q, 17);
  run->nodes = (long)sqlite3_column_int64(q, 18);
  sqlite3_finalize(q);
  if (!run->options) return cp_store_failf(st, CP_STORE_NOMEM, "out of memory");
  return CP_STORE_OK;
}

cp_store_status cp_store_load_nodes(cp_store *st, int64_t run_id,
                                    int (*fn)(void *, const cp_search_node *,
                                              const double *, const void *,
                                              size_t),
                                    void *ctx) {
  sqlite3_stmt *q;
  cp_store_status s = cp_store_prepare_ids(
      st,
      "SELECT id, parent, depth, time, cost, state, action, steps,"
      " lcp_solves, pivots, fallbacks, warm_steps, outcome, message, flags,"
      " goal_distance, (SELECT state_size FROM searches WHERE id = ?1), warm"
      " FROM nodes WHERE search_id = ?1 ORDER BY id",
      &run_id, 1, "cannot read the nodes", &q);
  if (s) return s;
  int rc;
  long expect = 0;
  while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
    cp_search_node n;
    memset(&n, 0, sizeof n);
    n.id = (long)sqlite3_column_int64(q, 0);
    n.parent = sqlite3_column_type(q, 1) == SQLITE_NULL
                   ? -1
                   : (long)sqlite3_column_int64(q, 1);
    /* Ids 0, 1, 2, ... and each parent an earlier node: a hostile or
     * damaged file cannot give the search a cycle or a gap. */
    if (n.id != expect++ || (n.id > 0 && (n.parent < 0 || n.parent >= n.id)) ||
        (n.id == 0 && n.parent >= 0)) {
      s = cp_store_failf(st, CP_STORE_BAD_FILE,
                         "node %ld of run %lld: %s (a damaged database)", n.id,
                         (long long)run_id,
                         n.id != expect - 1
                             ? "ids are not 0, 1, 2, ... in order"
                         : n.id == 0 ? "the start node has a parent"
                                     : "its parent is not an earlier node");
      break;
    }
    n.depth = sqlite3_column_int(q, 2);
    n.time = sqlite3_column_double(q, 3);
    n.cost = sqlite3_column_double(q, 4);
    int bytes = sqlite3_column_bytes(q, 5);
    int size = sqlite3_column_int(q, 16);
    if (bytes != size * (int)sizeof(double)) {
      s = cp_store_failf(
          st, CP_STORE_BAD_FILE,
          "node %ld of run %lld: state of %d bytes where %d doubles "
          "were expected",
          n.id, (long long)run_id, bytes, size);
      break;
    }
    if ((size_t)size > st->scratch_n) {
      double *p = realloc(st->scratch, (size_t)size * sizeof *p);
      if (!p) {
        s = cp_store_failf(st, CP_STORE_NOMEM, "out of memory");
        break;
      }
      st->scratch = p;
      st->scratch_n = (size_t)size;
    }
    memcpy(st->scratch, sqlite3_column_blob(q, 5), (size_t)bytes);
    n.action = sqlite3_column_type(q, 6) == SQLITE_NULL
                   ? -1
                   : (long)sqlite3_column_int64(q, 6);
    n.steps = sqlite3_column_int(q, 7);
    n.lcp_solves = sqlite3_column_int(q, 8);
    n.pivots = sqlite3_column_int(q, 9);
    n.fallbacks = sqlite3_column_int(q, 10);
    n.warm_steps = sqlite3_column_int(q, 11);
    const char *oc = (const char *)sqlite3_column_text(q, 12);
    if (!oc || cp_expand_outcome_parse(oc, &n.outcome)) {
      s = cp_store_failf(st, CP_STORE_BAD_FILE,
                         "node %ld: unknown outcome \"%s\"", n.id,
                         oc ? oc : "");
      break;
    }
    const char *m = (const char *)sqlite3_column_text(q, 13);
    n.message = m ? m : "";
    n.flags = sqlite3_column_int(q, 14);
    n.goal_distance = sqlite3_column_type(q, 15) == SQLITE_NULL
                          ? INFINITY
                          : sqlite3_column_double(q, 15);
    if (fn(ctx, &n, st->scratch, sqlite3_column_blob(q, 17),
           (size_t)sqlite3_column_bytes(q, 17))) {
      s = cp_store_failf(
          st, CP_STORE_BAD_FILE,
          "node %ld of run %lld could not be restored (its row does not "
          "fit the run: a damaged database)",
          n.id, (long long)run_id);
      break;
    }
  }
  if (s == CP_STORE_OK && rc != SQLITE_DONE)
    s = cp_store_fail(st, rc, "cannot read the nodes");
  sqlite3_finalize(q);
  return s;
}

cp_store_status cp_store_load_node(cp_store *st, int64_t run_id, long id,
                                   cp_search_node *n, double *x, int cap,
                                   double *values, int cap_v, int *n_v) {
  sqlite3_stmt *q;
  const int64_t ids[2] = {run_id, id};
  cp_store_status rs = cp_store_one_row(
      st,
      "SELECT parent, depth, time, cost, state, action, inputs, steps,"
      " lcp_solves, pivots, fallbacks, warm_steps, outcome, message, flags,"
      " goal_distance, (SELECT state_size FROM searches WHERE id = search_id)"
      " FROM nodes WHERE search_id = ? AND id = ?",
      ids, 2, "cannot read a node", &q);
  if (rs == CP_STORE_NOT_FOUND)
    return cp_store_failf(st, rs, "no node %ld in run %lld", id,
                          (long long)run_id);
  if (rs) return rs;
  memset(n, 0, sizeof *n);
  n->id = id;
  n->parent = sqlite3_column_type(q, 0) == SQLITE_NULL
                  ? -1
                  : (long)sqlite3_column_int64(q, 0);
  n->depth = sqlite3_column_int(q, 1);
  n->time = sqlite3_column_double(q, 2);
  n->cost = sqlite3_column_double(q, 3);
  n->action = sqlite3_column_type(q, 5) == SQLITE_NULL
                  ? -1 : (long)sqlite3_column_int64(q, 5);
  /* Blob sizes against the layout: the run's state_size doubles of state;
   * cap_v input values (the task's inputs) for a node made by an action. */
  int xb = sqlite3_column_bytes(q, 4), vb = sqlite3_column_bytes(q, 6);
  int size = sqlite3_column_int(q, 16);
  const char *bad = NULL;
  int got = 0, want = 0;
  if (xb != size * (int)sizeof(double)) {
    bad = "state";
    got = xb, want = size;
  } else if (values && n->action >= 0 && vb != cap_v * (int)sizeof(double)) {
    bad = "inputs";
    got = vb, want = cap_v;
  }
  if (bad) {
    sqlite3_finalize(q);
    return cp_store_failf(
        st, CP_STORE_BAD_FILE,
        "node %ld of run %lld: %s of %d bytes where %d doubles were "
        "expected (a damaged database)",
        id, (long long)run_id, bad, got, want);
  }
  int nx = xb / (int)sizeof(double);
  if (x)
    memcpy(x, sqlite3_column_blob(q, 4),
           (size_t)(nx < cap ? nx : cap) * sizeof(double));
  int nv = vb / (int)sizeof(double);
  if (n_v) *n_v = nv;
  if (values && nv > 0)
    memcpy(values, sqlite3_column_blob(q, 6),
           (size_t)(nv < cap_v ? nv : cap_v) * sizeof(double));
  n->steps = sqlite3_column_int(q, 7);
  n->lcp_solves = sqlite3_column_int(q, 8);
  n->pivots = sqlite3_column_int(q, 9);
  n->fallbacks = sqlite3_column_int(q, 10);
  n->warm_steps = sqlite3_column_int(q, 11);
  const char *oc = (const char *)sqlite3_column_text(q, 12);
  if (!oc || cp_expand_outcome_parse(oc, &n->outcome)) {
    cp_store_status s =
        cp_store_failf(st, CP_STORE_BAD_FILE,
                       "node %ld of run %lld: unknown outcome \"%.40s\" "
                       "(a damaged database)",
                       id, (long long)run_id, oc ? oc : "");
    sqlite3_finalize(q);
    return s;
  }
  const char *m = (const char *)sqlite3_column_text(q, 13);
  free(st->node_message);
  st->node_message = strdup(m ? m : "");
  n->message = st->node_message ? st->node_message : "";
  n->flags = sqlite3_column_int(q, 14);
  n->goal_distance = sqlite3_column_double(q, 15);
  sqlite3_finalize(q);
  return CP_STORE_OK;
}

cp_store_status cp_store_load_pending(
    cp_store *st, int64_t run_id,
    int (*fn)(void *ctx, long iters, int m, const void *data, size_t size,
              const cp_rng *rng),
    void *ctx) {
  if (st->version < 4) return CP_STORE_NOT_FOUND; /* no such table yet */
  sqlite3_stmt *q;
  cp_store_status s = cp_store_one_row(
      st,
      "SELECT iterations, embedding, data, rng FROM pending_batches WHERE"
      " search_id = ?1",
      &run_id, 1, "cannot read the pending batch", &q);
  if (s) return s;
  long iters = (long)sqlite3_column_int64(q, 0);
  int m = sqlite3_column_int(q, 1);
  const void *data = sqlite3_column_blob(q, 2);
  size_t size = (size_t)sqlite3_column_bytes(q, 2);
  cp_rng rng;
  int has_rng = sqlite3_column_bytes(q, 3) == (int)sizeof rng;
  if (has_rng) memcpy(&rng, sqlite3_column_blob(q, 3), sizeof rng);
  if ((sqlite3_column_type(q, 3) != SQLITE_NULL && !has_rng) ||
      fn(ctx, iters, m, data, size, has_rng ? &rng : NULL))
    s = cp_store_failf(st, CP_STORE_BAD_FILE,
                       "run %lld: its pending batch (%ld iterations, %zu"
                       " bytes) does not fit the search",
                       (long long)run_id, iters, size);
  sqlite3_finalize(q);
  return s;
}

cp_store_status cp_store_load_witnesses(
    cp_store *st, int64_t run_id,
    int (*fn)(void *ctx, long id, const double *point, int m, long rep),
    void *ctx) {
  sqlite3_stmt *q;
  cp_store_status s = cp_store_prepare_ids(
      st,
      "SELECT id, point, representative FROM witnesses WHERE search_id = ?1"
      " ORDER BY id",
      &run_id, 1, "cannot read the witnesses", &q);
  if (s) return s;
  int rc;
  double *buf = NULL;
  size_t cap = 0;
  while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
    long id = (long)sqlite3_column_int64(q, 0);
    int bytes = sqlite3_column_bytes(q, 1);
    if (bytes <= 0 || bytes % (int)sizeof(double)) {
      s = cp_store_failf(st, CP_STORE_BAD_FILE,
                         "witness %ld of run %lld: a point of %d bytes", id,
                         (long long)run_id, bytes);
      break;
    }
    size_t m = (size_t)bytes / sizeof(double);
    if (m > cap) { /* a copy: the blob need not be aligned for doubles */
      double *p = realloc(buf, m * sizeof *p);
      if (!p) {
        s = cp_store_failf(st, CP_STORE_NOMEM, "out of memory");
        break;
      }
      buf = p;
      cap = m;
    }
    memcpy(buf, sqlite3_column_blob(q, 1), (size_t)bytes);
    long rep = sqlite3_column_type(q, 2) == SQLITE_NULL
                   ? -1
                   : (long)sqlite3_column_int64(q, 2);
    if (fn(ctx, id, buf, (int)m, rep)) {
      s = cp_store_failf(st, CP_STORE_BAD_FILE,
                         "witness %ld of run %lld could not be restored", id,
                         (long long)run_id);
      break;
    }
  }
  if (s == CP_STORE_OK && rc != SQLITE_DONE)
    s = cp_store_fail(st, rc, "cannot read the witnesses");
  sqlite3_finalize(q);
  free(buf);
  return s;
}

cp_store_status cp_store_list(cp_store *st, json_t **out) {
  *out = NULL;
  sqlite3_stmt *q, *p;
  int rc = sqlite3_prepare_v2(
      st->db,
      "SELECT s.id, s.task_id, t.hash, s.planner, s.status, s.seed,"
      " s.seconds, s.nodes, s.expansions, s.lcp_solves, t.path, s.options"
      " FROM searches s JOIN tasks t ON t.id = s.task_id ORDER BY s.id",
      -1, &q, NULL);
  if (rc) return cp_store_fail(st, rc, "cannot list the runs");
  rc = sqlite3_prepare_v2(st->db,
                          "SELECT id, node, cost, length, duration FROM plans"
                          " WHERE search_id = ? ORDER BY id",
                          -1, &p, NULL);
  if (rc) {
    sqlite3_finalize(q);
    return cp_store_fail(st, rc, "cannot list the plans");
  }
  json_t *runs = json_array();
  while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
    json_t *r = json_object();
    json_object_set_new(r, "id", json_integer(sqlite3_column_int64(q, 0)));
    json_object_set_new(r, "task_id", json_integer(sqlite3_column_int64(q, 1)));
    json_object_set_new(r, "task_hash",
                        json_string((const char *)sqlite3_column_text(q, 2)));
    json_object_set_new(r, "task_path",
                        json_string((const char *)sqlite3_column_text(q, 10)));
    json_object_set_new(r, "planner",
                        json_string((const char *)sqlite3_column_text(q, 3)));
    json_object_set_new(r, "status",
                        json_string((const char *)sqlite3_column_text(q, 4)));
    json_object_set_new(r, "seed", json_integer(sqlite3_column_int64(q, 5)));
    json_object_set_new(r, "seconds", json_real(sqlite3_column_double(q, 6)));
    json_object_set_new(r, "nodes", json_integer(sqlite3_column_int64(q, 7)));
    json_object_set_new(r, "expansions",
                        json_integer(sqlite3_column_int64(q, 8)));
    json_object_set_new(r, "lcp_solves",
                        json_integer(sqlite3_column_int64(q, 9)));
    /* How it ran its batches (docs/planner.md, "Batches"): search_batch is
     * a pipelined run's half; runs stored before there were batches ran
     * one expansion at a time. A value outside 1..CP_SEARCH_MAX_BATCH (a
     * damaged or hand-edited file) is read as 1, as `plan --resume` reads
     * it (planner/plan/plan.c, run_search_mode), so the list never shows a
     * batch the run cannot have had. */
    const char *text = (const char *)sqlite3_column_text(q, 11);
    json_t *o = text ? json_loads(text, 0, NULL) : NULL,
           *b = json_object_get(o, "search_batch");
    json_int_t batch = json_is_integer(b) ? json_integer_value(b) : 1;
    if (batch < 1 || batch > CP_SEARCH_MAX_BATCH) batch = 1;
    json_object_set_new(r, "search_batch", json_integer(batch));
    json_object_set_new(r, "search_pipeline",
                        json_boolean(json_is_true(
                            json_object_get(o, "search_pipeline"))));
    /* rrt and sst runs since session 28 never repeat a (node, action). */
    json_object_set_new(r, "search_fresh_actions",
                        json_boolean(json_is_true(
                            json_object_get(o, "search_fresh_actions"))));
    json_decref(o);
    json_t *plans = json_array();
    sqlite3_reset(p);
    sqlite3_bind_int64(p, 1, sqlite3_column_int64(q, 0));
    while (sqlite3_step(p) == SQLITE_ROW) {
      json_t *x = json_object();
      json_object_set_new(x, "id", json_integer(sqlite3_column_int64(p, 0)));
      json_object_set_new(x, "node", json_integer(sqlite3_column_int64(p, 1)));
      json_object_set_new(x, "cost", json_real(sqlite3_column_double(p, 2)));
      json_object_set_new(x, "length",
                          json_integer(sqlite3_column_int64(p, 3)));
      json_object_set_new(x, "duration",
                          json_real(sqlite3_column_double(p, 4)));
      json_array_append_new(plans, x);
    }
    json_object_set_new(r, "plans", plans);
    json_array_append_new(runs, r);
  }
  sqlite3_finalize(p);
  sqlite3_finalize(q);
  if (rc != SQLITE_DONE) {
    json_decref(runs);
    return cp_store_fail(st, rc, "cannot list the runs");
  }
  *out = json_object();
  json_object_set_new(*out, "runs", runs);
  return CP_STORE_OK;
}

cp_store_status cp_store_plan_nodes(cp_store *st, int64_t plan_id,
                                    int64_t *run_id, long **ids, long *n) {
  *ids = NULL;
  *n = 0;
  sqlite3_stmt *q;
  /* The walk from the plan's node to the start, guarded against a hostile
   * or damaged file: each step must go to a smaller id (nodes are stored in
   * creation order, a parent before its children), so a cycle cannot be
   * followed, and it stops after as many steps as the run has nodes. */
  cp_store_status ps = cp_store_prepare_ids(
      st,
      "WITH RECURSIVE path(id, parent, k) AS ("
      " SELECT n.id, n.parent, 0 FROM nodes n JOIN plans p"
      "  ON p.search_id = n.search_id AND p.node = n.id WHERE p.id = ?1"
      " UNION ALL SELECT n.id, n.parent, path.k + 1 FROM nodes n JOIN path"
      "  ON n.id = path.parent AND path.parent < path.id"
      "  AND n.search_id = (SELECT search_id FROM plans WHERE id = ?1)"
      "  WHERE path.k < (SELECT count(*) FROM nodes WHERE search_id ="
      "   (SELECT search_id FROM plans WHERE id = ?1)))"
      " SELECT id, (SELECT search_id FROM plans WHERE id = ?1), parent FROM "
      "path"
      " ORDER BY k DESC",
      &plan_id, 1, "cannot read the plan", &q);
  if (ps) return ps;
  int rc;
  long cap = 0;
  int64_t first_parent = -1;
  while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
    if (*n == cap) {
      cap = cap ? 2 * cap : 64;
      long *p = realloc(*ids, (size_t)cap * sizeof *p);
      if (!p) {
        sqlite3_finalize(q);
        free(*ids);
        *ids = NULL;
        return cp_store_failf(st, CP_STORE_NOMEM, "out of memory");
      }
      *ids = p;
    }
    if (*n == 0)
      first_parent = sqlite3_column_type(q, 2) == SQLITE_NULL
                         ? -1
                         : sqlite3_column_int64(q, 2);
    (*ids)[(*n)++] = (long)sqlite3_column_int64(q, 0);
    *run_id = sqlite3_column_int64(q, 1);
  }
  sqlite3_finalize(q);
  if (rc != SQLITE_DONE) {
    free(*ids);
    *ids = NULL;
    *n = 0;
    return cp_store_fail(st, rc, "cannot read the plan");
  }
  if (*n > 0 && (first_parent >= 0 || (*ids)[0] != 0)) {
    long at = (*ids)[0];
    free(*ids);
    *ids = NULL;
    *n = 0;
    return cp_store_failf(
        st, CP_STORE_BAD_FILE,
        "plan %lld: the path does not lead back to the start node 0: "
        "node %ld's parent %lld is %s (a damaged database)",
        (long long)plan_id, at, (long long)first_parent,
        first_parent >= at ? "not an earlier node (a cycle)" : "missing");
  }
  if (*n == 0)
    return cp_store_failf(st, CP_STORE_NOT_FOUND, "no plan %lld",
                          (long long)plan_id);
  return CP_STORE_OK;
}

cp_store_status cp_store_bench_summary(cp_store *st, int64_t experiment_id,
                                       json_t **out) {
  *out = NULL;
  sqlite3_stmt *q;
  cp_store_status ps = cp_store_prepare_ids(
      st,
      "SELECT c.name, count(*), sum(r.solved), avg(r.time),"
      " avg(CASE WHEN r.solved THEN r.best_cost END), avg(r.graph_states),"
      " avg(r.expansions), avg(r.lcp_solves), avg(r.simulation_steps)"
      " FROM runs r JOIN plannerConfigs c ON c.id = r.plannerid"
      " WHERE r.experimentid = ? GROUP BY c.id ORDER BY c.id",
      &experiment_id, 1, "cannot summarise the benchmark", &q);
  if (ps) return ps;
  int rc;
  json_t *list = json_array();
  while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
    json_t *p = json_object();
    const char *name = (const char *)sqlite3_column_text(q, 0);
    const char *prefix = "control_complan_";
    if (name && !strncmp(name, prefix, strlen(prefix))) name += strlen(prefix);
    json_object_set_new(p, "planner", json_string(name ? name : ""));
    json_object_set_new(p, "runs", json_integer(sqlite3_column_int64(q, 1)));
    json_object_set_new(p, "solved", json_integer(sqlite3_column_int64(q, 2)));
    static const char *const keys[] = {"time", "best_cost", "graph_states",
                                       "expansions", "lcp_solves",
                                       "simulation_steps"};
    for (int k = 0; k < 6; ++k)
      json_object_set_new(p, keys[k],
                          sqlite3_column_type(q, 3 + k) == SQLITE_NULL
                              ? json_null()
                              : json_real(sqlite3_column_double(q, 3 + k)));
    json_array_append_new(list, p);
  }
  sqlite3_finalize(q);
  if (rc != SQLITE_DONE) {
    json_decref(list);
    return cp_store_fail(st, rc, "cannot summarise the benchmark");
  }
  *out = json_object();
  json_object_set_new(*out, "experiment", json_integer(experiment_id));
  json_object_set_new(*out, "planners", list);
  return CP_STORE_OK;
}
