/* What the store writes: runs, each batch of nodes, witnesses and plans
 * (one transaction each), and the OMPL benchmark rows. */
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/clock.h"
#include "planner/store/store_impl.h"

cp_store_status cp_store_run_begin(cp_store *st, int64_t task_id,
                                   const char *planner, const char *options,
                                   uint64_t seed, int state_size,
                                   int64_t *run_id) {
  char build[200];
  snprintf(build, sizeof build, "%s, SQLite %s", CP_BUILD, sqlite3_libversion());
  int rc =
      cp_store_run_sql(st,
                       "INSERT INTO searches (task_id, planner, options, seed,"
                       " status, state_size, complan) VALUES (?, ?, ?, ?,"
                       " 'running', ?, ?)",
                       "ittiit", task_id, planner, options, (int64_t)seed,
                       (int64_t)state_size, build);
  if (rc) return cp_store_fail(st, rc, "cannot start a search run");
  *run_id = sqlite3_last_insert_rowid(st->db);
  return CP_STORE_OK;
}

cp_store_status cp_store_run_resumed(cp_store *st, int64_t run_id) {
  int rc = cp_store_run_sql(st,
                            "UPDATE searches SET sessions = sessions + 1,"
                            " updated = datetime('now') WHERE id = ?",
                            "i", run_id);
  return rc ? cp_store_fail(st, rc, "cannot count the session") : CP_STORE_OK;
}

static int bind_node(cp_store *st, int64_t run_id, const cp_task *task,
                     const cp_search *search, long id) {
  sqlite3_stmt *q = st->stmt[S_NODE];
  const cp_search_node *n = cp_search_node_get(search, id);
  int size = cp_search_state_size(search);
  sqlite3_reset(q);
  sqlite3_clear_bindings(q);
  sqlite3_bind_int64(q, 1, run_id);
  sqlite3_bind_int64(q, 2, n->id);
  if (n->parent >= 0) sqlite3_bind_int64(q, 3, n->parent);
  sqlite3_bind_int(q, 4, n->depth);
  sqlite3_bind_double(q, 5, n->time);
  sqlite3_bind_double(q, 6, n->cost);
  sqlite3_bind_blob(q, 7, cp_search_state(search, id),
                    size * (int)sizeof(double), SQLITE_STATIC);
  double values[64];
  if (n->action >= 0) {
    sqlite3_bind_int64(q, 8, n->action);
    if (task && task->n_inputs <= 64) {
      cp_task_action_values(task, n->action, values);
      sqlite3_bind_blob(q, 9, values, task->n_inputs * (int)sizeof(double),
                        SQLITE_TRANSIENT);
    }
    if (task) {
      static const char *const steppers[] = {"acceleration", "velocity",
                                             "quasistatic"};
      sqlite3_bind_double(q, 10, task->duration);
      sqlite3_bind_double(q, 11, task->dt);
      sqlite3_bind_text(q, 12, steppers[task->stepper % 3], -1, SQLITE_STATIC);
    }
  }
  sqlite3_bind_int(q, 13, n->steps);
  sqlite3_bind_int(q, 14, n->lcp_solves);
  sqlite3_bind_int(q, 15, n->pivots);
  sqlite3_bind_int(q, 16, n->fallbacks);
  sqlite3_bind_int(q, 17, n->warm_steps);
  sqlite3_bind_text(q, 18, cp_expand_outcome_name(n->outcome), -1,
                    SQLITE_STATIC);
  if (n->message[0]) sqlite3_bind_text(q, 19, n->message, -1, SQLITE_STATIC);
  sqlite3_bind_int(q, 20, n->flags);
  if (isfinite(n->goal_distance)) sqlite3_bind_double(q, 21, n->goal_distance);
  size_t ws;
  const void *warm = cp_search_warm(search, id, &ws);
  if (warm) sqlite3_bind_blob(q, 22, warm, (int)ws, SQLITE_STATIC);
  int rc = sqlite3_step(q);
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* A pipelined search's pending batch (pr's, else the search's own, saved
 * here), replacing the run's last one. */
static int write_pending(cp_store *st, int64_t run_id, const cp_search *search,
                         const cp_store_progress *pr, const char **what) {
  *what = "cannot store the pending batch";
  const void *data = pr->pending;
  size_t size = pr->pending_size;
  long iters = pr->pending_iters;
  const cp_rng *rng = NULL;
  if (!data) {
    iters = cp_search_pending_save(search, &st->pending, &st->pending_cap,
                                   &size, &rng);
    if (iters < 0) return SQLITE_NOMEM;
    data = st->pending;
  }
  sqlite3_stmt *q = st->stmt[S_PENDING];
  sqlite3_reset(q);
  sqlite3_bind_int64(q, 1, run_id);
  sqlite3_bind_int64(q, 2, iters);
  sqlite3_bind_int(q, 3, cp_search_embedding_size(search));
  sqlite3_bind_blob(q, 4, size ? data : "", (int)size, SQLITE_STATIC);
  if (rng) sqlite3_bind_blob(q, 5, rng, (int)sizeof *rng, SQLITE_STATIC);
  else sqlite3_bind_null(q, 5);
  int rc = sqlite3_step(q);
  return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

/* Writes the search's journal (new nodes, flag changes, new witnesses and
 * changed representatives) and the run's row inside the open transaction;
 * *what says what failed. Returns the SQLite code. */
static int write_journal(cp_store *st, int64_t run_id, const cp_task *task,
                         cp_search *search, const cp_store_progress *pr,
                         long plan_node, int64_t *plan_id, const char **what) {
  int rc;
  *what = "cannot write nodes";
  long n = cp_search_node_count(search);
  for (long id = cp_search_journal_first(search); id < n; ++id)
    if ((rc = bind_node(st, run_id, task, search, id))) return rc;
  long nu;
  const long *upd = cp_search_journal_updates(search, &nu);
  sqlite3_stmt *q = st->stmt[S_FLAGS];
  *what = "cannot update nodes";
  for (long k = 0; k < nu; ++k) {
    sqlite3_reset(q);
    sqlite3_bind_int64(q, 1, run_id);
    sqlite3_bind_int64(q, 2, upd[k]);
    sqlite3_bind_int(q, 3, cp_search_node_get(search, upd[k])->flags);
    if ((rc = sqlite3_step(q)) != SQLITE_DONE) return rc;
  }
  *what = "cannot write witnesses";
  long nw = cp_search_witness_count(search);
  for (long w = cp_search_witness_first(search); w < nw; ++w) {
    long rep;
    const double *e = cp_search_witness(search, w, &rep);
    q = st->stmt[S_WITNESS];
    sqlite3_reset(q);
    sqlite3_clear_bindings(q);
    sqlite3_bind_int64(q, 1, run_id);
    sqlite3_bind_int64(q, 2, w);
    sqlite3_bind_blob(q, 3, e,
                      cp_search_embedding_size(search) * (int)sizeof(double),
                      SQLITE_STATIC);
    if (rep >= 0) sqlite3_bind_int64(q, 4, rep);
    if ((rc = sqlite3_step(q)) != SQLITE_DONE) return rc;
  }
  upd = cp_search_witness_updates(search, &nu);
  q = st->stmt[S_WITNESS_REP];
  for (long k = 0; k < nu; ++k) {
    long rep;
    cp_search_witness(search, upd[k], &rep);
    sqlite3_reset(q);
    sqlite3_bind_int64(q, 1, run_id);
    sqlite3_bind_int64(q, 2, upd[k]);
    sqlite3_bind_int64(q, 3, rep);
    if ((rc = sqlite3_step(q)) != SQLITE_DONE) return rc;
  }
  *what = "cannot update the run";
  const cp_search_stats *s =
      pr->stats ? pr->stats : cp_search_get_stats(search);
  q = st->stmt[S_RUN];
  sqlite3_reset(q);
  sqlite3_bind_int64(q, 1, run_id);
  sqlite3_bind_text(q, 2, pr->status, -1, SQLITE_STATIC);
  sqlite3_bind_double(q, 3, pr->seconds);
  sqlite3_bind_int64(q, 4, n);
  sqlite3_bind_int64(q, 5, s->expansions);
  sqlite3_bind_int64(q, 6, s->iterations);
  sqlite3_bind_int64(q, 7, s->duplicates);
  sqlite3_bind_int64(q, 8, s->rejected);
  sqlite3_bind_int64(q, 9, s->steps);
  sqlite3_bind_int64(q, 10, s->lcp_solves);
  sqlite3_bind_int64(q, 11, s->pivots);
  sqlite3_bind_int64(q, 12, s->fallbacks);
  sqlite3_bind_int64(q, 13, s->warm_steps);
  sqlite3_bind_blob(q, 14, pr->rng ? pr->rng : cp_search_rng(search),
                    (int)sizeof(cp_rng), SQLITE_STATIC);
  if ((rc = sqlite3_step(q)) != SQLITE_DONE) return rc;
  if (cp_search_pipelined(search) && (rc = write_pending(st, run_id, search,
                                                         pr, what)))
    return rc;
  if (plan_node >= 0) {
    *what = "cannot store the plan";
    const cp_search_node *g = cp_search_node_get(search, plan_node);
    q = st->stmt[S_PLAN];
    sqlite3_reset(q);
    sqlite3_bind_int64(q, 1, run_id);
    sqlite3_bind_int64(q, 2, plan_node);
    sqlite3_bind_double(q, 3, g->cost);
    sqlite3_bind_int(q, 4, g->depth);
    sqlite3_bind_double(q, 5, g->time);
    if ((rc = sqlite3_step(q)) != SQLITE_DONE) return rc;
    if (plan_id) *plan_id = sqlite3_last_insert_rowid(st->db);
  }
  return SQLITE_OK;
}

/* One transaction: body (the run's row when starting), then the journal.
 * Clears the journal on success. */
static cp_store_status journal_transaction(
    cp_store *st, int64_t *run_id, const char *insert_run, const char *types,
    const char *planner, const char *options, int64_t task_id, uint64_t seed,
    const cp_task *task, cp_search *search, const cp_store_progress *pr,
    long plan_node, int64_t *plan_id) {
  double t0 = cp_clock_now();
  int rc;
  const char *what = "cannot begin a transaction";
  sqlite3_reset(st->stmt[S_BEGIN]);
  if ((rc = sqlite3_step(st->stmt[S_BEGIN])) != SQLITE_DONE) goto rollback;
  if (insert_run) {
    what = "cannot start a search run";
    if ((rc = cp_store_run_sql(st, insert_run, types, task_id, planner, options,
                               (int64_t)seed,
                               (int64_t)cp_search_state_size(search))))
      goto rollback;
    *run_id = sqlite3_last_insert_rowid(st->db);
  }
  if ((rc = write_journal(st, *run_id, task, search, pr, plan_node, plan_id,
                          &what)))
    goto rollback;
  sqlite3_reset(st->stmt[S_COMMIT]);
  what = "cannot commit";
  if ((rc = sqlite3_step(st->stmt[S_COMMIT])) != SQLITE_DONE) goto rollback;
  cp_search_journal_clear(search);
  st->seconds += cp_clock_now() - t0;
  return CP_STORE_OK;
rollback: {
  cp_store_status ret = cp_store_fail(st, rc, what);
  for (int k = 0; k < S_COUNT; ++k) sqlite3_reset(st->stmt[k]);
  if (!sqlite3_get_autocommit(st->db)) cp_store_exec(st, "ROLLBACK");
  st->seconds += cp_clock_now() - t0;
  return ret;
}
}

cp_store_status cp_store_write_batch(cp_store *st, int64_t run_id,
                                     const cp_task *task, cp_search *search,
                                     const cp_store_progress *pr,
                                     long plan_node, int64_t *plan_id) {
  return journal_transaction(st, &run_id, NULL, NULL, NULL, NULL, 0, 0, task,
                             search, pr, plan_node, plan_id);
}

cp_store_status cp_store_run_start(cp_store *st, int64_t task_id,
                                   const char *options, uint64_t seed,
                                   const cp_task *task, cp_search *search,
                                   int64_t *run_id) {
  const cp_store_progress pr = {.status = "running"};
  return journal_transaction(
      st, run_id,
      "INSERT INTO searches (task_id, planner, options, seed, status,"
      " state_size) VALUES (?, ?, ?, ?, 'running', ?)",
      "ittii", cp_search_method(search), options, task_id, seed, task,
      search, &pr, -1, NULL);
}

/* --- OMPL benchmark tables ------------------------------------------------ */

cp_store_status cp_store_bench_experiment(cp_store *st, const char *name,
                                          const char *setup, double timelimit,
                                          int runcount, uint64_t seed,
                                          int64_t *experiment_id) {
  char host[256] = "unknown";
  FILE *f = fopen("/etc/hostname", "r");
  if (f) {
    if (fgets(host, sizeof host, f)) host[strcspn(host, "\n")] = '\0';
    fclose(f);
  }
  int rc = cp_store_run_sql(
      st,
      "INSERT INTO experiments (name, totaltime, timelimit,"
      " memorylimit, runcount, version, hostname, cpuinfo, date,"
      " seed, setup) VALUES (?, 0, ?, 0, ?, 'complan 0.1.0', ?,"
      " '', datetime('now'), ?, ?)",
      "tditit", name, timelimit, (int64_t)runcount, host, (int64_t)seed, setup);
  if (rc) return cp_store_fail(st, rc, "cannot store the experiment");
  *experiment_id = sqlite3_last_insert_rowid(st->db);
  return CP_STORE_OK;
}

cp_store_status cp_store_bench_planner(cp_store *st, const char *name,
                                       const char *settings,
                                       int64_t *planner_id) {
  int rc = cp_store_run_sql(st,
                            "INSERT INTO plannerConfigs (name, settings)"
                            " VALUES (?, ?)",
                            "tt", name, settings);
  if (rc) return cp_store_fail(st, rc, "cannot store the planner");
  *planner_id = sqlite3_last_insert_rowid(st->db);
  return CP_STORE_OK;
}

cp_store_status cp_store_bench_run(cp_store *st, int64_t experiment_id,
                                   int64_t planner_id, const cp_bench_run *r,
                                   int64_t *run_id) {
  int rc = cp_store_run_sql(
      st,
      "INSERT INTO runs (experimentid, plannerid, time, memory, status,"
      " solved, graph_states, solution_length, solution_clearance,"
      " best_cost, search_id, expansions, lcp_solves, lemke_pivots,"
      " fallbacks, simulation_steps, duplicates, rejected,"
      " best_goal_distance)"
      " VALUES (?, ?, ?, ?, ?, ?, ?, ?, NULL, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
      "iiddiiiddiiiiiiiid", experiment_id, planner_id, r->time, r->memory,
      (int64_t)r->status, (int64_t)r->solved, (int64_t)r->graph_states,
      r->solved ? r->solution_length : NAN, r->solved ? r->best_cost : NAN,
      r->search_id, (int64_t)r->expansions, (int64_t)r->lcp_solves,
      (int64_t)r->lemke_pivots, (int64_t)r->fallbacks, (int64_t)r->steps,
      (int64_t)r->duplicates, (int64_t)r->rejected, r->best_distance);
  if (rc) return cp_store_fail(st, rc, "cannot store the benchmark run");
  *run_id = sqlite3_last_insert_rowid(st->db);
  return CP_STORE_OK;
}

cp_store_status cp_store_bench_progress(cp_store *st, int64_t run_id,
                                        double time, double best_cost,
                                        long nodes, long expansions,
                                        double best_distance) {
  int rc = cp_store_run_sql(
      st,
      "INSERT OR REPLACE INTO progress (runid, time, best_cost,"
      " graph_states, expansions, best_goal_distance)"
      " VALUES (?, ?, ?, ?, ?, ?)",
      "iddiid", run_id, time, best_cost, (int64_t)nodes, (int64_t)expansions,
      best_distance);
  return rc ? cp_store_fail(st, rc, "cannot store progress") : CP_STORE_OK;
}

cp_store_status cp_store_bench_finish(cp_store *st, int64_t experiment_id,
                                      double totaltime) {
  int rc =
      cp_store_run_sql(st, "UPDATE experiments SET totaltime = ? WHERE id = ?",
                       "di", totaltime, experiment_id);
  return rc ? cp_store_fail(st, rc, "cannot finish the experiment")
            : CP_STORE_OK;
}
