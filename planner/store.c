#include "planner/store.h"

#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Schema version 1 (docs/database.md documents every column). */
static const char schema_sql[] =
    "CREATE TABLE tasks ("
    " id INTEGER PRIMARY KEY,"
    " hash TEXT NOT NULL UNIQUE,"
    " text TEXT NOT NULL,"
    " scene TEXT NOT NULL,"
    " scene_dir TEXT,"
    " path TEXT,"
    " created TEXT NOT NULL DEFAULT (datetime('now')));"
    "CREATE TABLE searches ("
    " id INTEGER PRIMARY KEY,"
    " task_id INTEGER NOT NULL REFERENCES tasks(id),"
    " planner TEXT NOT NULL,"
    " options TEXT NOT NULL,"
    " seed INTEGER NOT NULL,"
    " status TEXT NOT NULL CHECK (status IN"
    "   ('running', 'solved', 'not_found', 'limit', 'error', 'interrupted',"
    "    'failed_expansions')),"
    " state_size INTEGER NOT NULL,"
    " started TEXT NOT NULL DEFAULT (datetime('now')),"
    " updated TEXT,"
    " seconds REAL NOT NULL DEFAULT 0,"
    " sessions INTEGER NOT NULL DEFAULT 1,"
    " nodes INTEGER NOT NULL DEFAULT 0,"
    " expansions INTEGER NOT NULL DEFAULT 0,"
    " iterations INTEGER NOT NULL DEFAULT 0,"
    " duplicates INTEGER NOT NULL DEFAULT 0,"
    " rejected INTEGER NOT NULL DEFAULT 0,"
    " steps INTEGER NOT NULL DEFAULT 0,"
    " lcp_solves INTEGER NOT NULL DEFAULT 0,"
    " pivots INTEGER NOT NULL DEFAULT 0,"
    " fallbacks INTEGER NOT NULL DEFAULT 0,"
    " warm_steps INTEGER NOT NULL DEFAULT 0,"
    " rng BLOB);"
    "CREATE TABLE nodes ("
    " search_id INTEGER NOT NULL REFERENCES searches(id),"
    " id INTEGER NOT NULL,"
    " parent INTEGER,"
    " depth INTEGER NOT NULL,"
    " time REAL NOT NULL,"
    " cost REAL NOT NULL,"
    " state BLOB NOT NULL,"
    " action INTEGER,"
    " inputs BLOB,"
    " duration REAL,"
    " dt REAL,"
    " stepper TEXT,"
    " steps INTEGER NOT NULL DEFAULT 0,"
    " lcp_solves INTEGER NOT NULL DEFAULT 0,"
    " pivots INTEGER NOT NULL DEFAULT 0,"
    " fallbacks INTEGER NOT NULL DEFAULT 0,"
    " warm_steps INTEGER NOT NULL DEFAULT 0,"
    " outcome TEXT NOT NULL,"
    " message TEXT,"
    " flags INTEGER NOT NULL DEFAULT 0,"
    " goal_distance REAL,"
    " warm BLOB,"
    " PRIMARY KEY (search_id, id),"
    " FOREIGN KEY (search_id, parent) REFERENCES nodes(search_id, id));"
    /* SST's witnesses (docs/database.md): kept so that a resumed SST run
     * grows exactly the tree of the uninterrupted run. */
    "CREATE TABLE witnesses ("
    " search_id INTEGER NOT NULL REFERENCES searches(id),"
    " id INTEGER NOT NULL,"
    " point BLOB NOT NULL,"
    " representative INTEGER,"
    " PRIMARY KEY (search_id, id),"
    " FOREIGN KEY (search_id, representative)"
    "  REFERENCES nodes(search_id, id));"
    "CREATE TABLE plans ("
    " id INTEGER PRIMARY KEY,"
    " search_id INTEGER NOT NULL REFERENCES searches(id),"
    " node INTEGER NOT NULL,"
    " cost REAL NOT NULL,"
    " length INTEGER NOT NULL,"
    " duration REAL NOT NULL,"
    " created TEXT NOT NULL DEFAULT (datetime('now')),"
    " FOREIGN KEY (search_id, node) REFERENCES nodes(search_id, id));"
    /* OMPL's benchmark layout (Planner Arena reads it). */
    "CREATE TABLE experiments ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, name VARCHAR(512),"
    " totaltime REAL, timelimit REAL, memorylimit REAL, runcount INTEGER,"
    " version VARCHAR(128), hostname VARCHAR(1024), cpuinfo TEXT,"
    " date DATETIME, seed INTEGER, setup TEXT);"
    "CREATE TABLE plannerConfigs ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, name VARCHAR(512) NOT NULL,"
    " settings TEXT);"
    "CREATE TABLE enums ("
    " name VARCHAR(512), value INTEGER, description TEXT,"
    " PRIMARY KEY (name, value));"
    "CREATE TABLE runs ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, experimentid INTEGER,"
    " plannerid INTEGER,"
    " time REAL, memory REAL, status INTEGER, solved BOOLEAN,"
    " graph_states INTEGER, solution_length REAL, solution_clearance REAL,"
    " best_cost REAL, search_id INTEGER, expansions INTEGER,"
    " lcp_solves INTEGER, lemke_pivots INTEGER, fallbacks INTEGER,"
    " simulation_steps INTEGER, duplicates INTEGER, rejected INTEGER,"
    " best_goal_distance REAL,"
    " FOREIGN KEY (experimentid) REFERENCES experiments(id) ON DELETE CASCADE,"
    " FOREIGN KEY (plannerid) REFERENCES plannerConfigs(id) ON DELETE CASCADE);"
    "CREATE TABLE progress ("
    " runid INTEGER, time REAL, best_cost REAL, graph_states INTEGER,"
    " expansions INTEGER, best_goal_distance REAL,"
    " PRIMARY KEY (runid, time),"
    " FOREIGN KEY (runid) REFERENCES runs(id) ON DELETE CASCADE);"
    "INSERT INTO enums VALUES ('status', 0, 'Unknown status'),"
    " ('status', 1, 'Invalid start'), ('status', 2, 'Invalid goal'),"
    " ('status', 3, 'Unrecognized goal type'), ('status', 4, 'Timeout'),"
    " ('status', 5, 'Approximate solution'), ('status', 6, 'Exact solution'),"
    " ('status', 7, 'Crash'), ('status', 8, 'Abort');";

enum {
  S_NODE,
  S_FLAGS,
  S_RUN,
  S_PLAN,
  S_WITNESS,
  S_WITNESS_REP,
  S_BEGIN,
  S_COMMIT,
  S_COUNT
};

static const char *const stmt_sql[S_COUNT] = {
    "INSERT INTO nodes (search_id, id, parent, depth, time, cost, state,"
    " action, inputs, duration, dt, stepper, steps, lcp_solves, pivots,"
    " fallbacks, warm_steps, outcome, message, flags, goal_distance, warm)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14,"
    " ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22)",
    "UPDATE nodes SET flags = ?3 WHERE search_id = ?1 AND id = ?2",
    "UPDATE searches SET status = ?2, seconds = ?3, nodes = ?4,"
    " expansions = ?5, iterations = ?6, duplicates = ?7, rejected = ?8,"
    " steps = ?9, lcp_solves = ?10, pivots = ?11, fallbacks = ?12,"
    " warm_steps = ?13, rng = ?14, updated = datetime('now') WHERE id = ?1",
    "INSERT INTO plans (search_id, node, cost, length, duration)"
    " VALUES (?1, ?2, ?3, ?4, ?5)",
    "INSERT INTO witnesses (search_id, id, point, representative)"
    " VALUES (?1, ?2, ?3, ?4)",
    "UPDATE witnesses SET representative = ?3 WHERE search_id = ?1 AND"
    " id = ?2",
    "BEGIN IMMEDIATE",
    "COMMIT"};

struct cp_store {
  sqlite3 *db;
  sqlite3_stmt *stmt[S_COUNT];
  char path[512];
  char message[512];
  double seconds;
  double *scratch;
  size_t scratch_n;
  char *node_message;  /* cp_store_load_node's message */
};

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Maps an SQLite result code to a store status, with the message. */
static cp_store_status fail(cp_store *st, int rc, const char *what) {
  int base = rc & 0xff;
  cp_store_status s = CP_STORE_ERROR;
  const char *hint = "";
  switch (base) {
  case SQLITE_NOTADB:
  case SQLITE_CORRUPT:
    s = CP_STORE_BAD_FILE;
    hint = " (not a complan SQLite database, or damaged)";
    break;
  case SQLITE_BUSY:
  case SQLITE_LOCKED:
    s = CP_STORE_BUSY;
    hint = " (another process is writing it: wait for it or use another "
           "--db)";
    break;
  case SQLITE_READONLY:
  case SQLITE_FULL:
  case SQLITE_IOERR:
  case SQLITE_CANTOPEN:
  case SQLITE_PERM:
    s = CP_STORE_IO;
    break;
  case SQLITE_NOMEM: s = CP_STORE_NOMEM; break;
  case SQLITE_CONSTRAINT:
    hint = " (is another process extending the same run? resume it from "
           "one process only)";
    break;
  default: break;
  }
  snprintf(st->message, sizeof st->message, "%.200s: %s: %.200s%s", st->path, what,
           st->db ? sqlite3_errmsg(st->db) : sqlite3_errstr(rc), hint);
  return s;
}

static cp_store_status failf(cp_store *st, cp_store_status s, const char *fmt,
                             ...) __attribute__((format(printf, 3, 4)));
static cp_store_status failf(cp_store *st, cp_store_status s, const char *fmt,
                             ...) {
  char buf[400];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  snprintf(st->message, sizeof st->message, "%.100s: %.400s", st->path, buf);
  return s;
}

/* A query by id: prepares sql and binds ids[0..n-1] to its parameters.
 * Returns CP_STORE_OK with *q ready to step, or the SQLite failure with
 * its message starting with what ("cannot read the run"). */
static cp_store_status prepare_ids(cp_store *st, const char *sql, const int64_t *ids, int n,
                                   const char *what, sqlite3_stmt **q) {
  int rc = sqlite3_prepare_v2(st->db, sql, -1, q, NULL);
  if (rc) return fail(st, rc, what);
  for (int i = 0; i < n; i++) sqlite3_bind_int64(*q, i + 1, ids[i]);
  return CP_STORE_OK;
}

/* The one row of a lookup by id (prepare_ids, then a step). Returns
 * CP_STORE_OK with *q on the row (the caller reads and finalizes it);
 * CP_STORE_NOT_FOUND without a row and without a message (the caller says
 * what is missing); or the SQLite failure as prepare_ids. *q is finalized
 * unless CP_STORE_OK. */
static cp_store_status one_row(cp_store *st, const char *sql, const int64_t *ids, int n,
                               const char *what, sqlite3_stmt **q) {
  cp_store_status s = prepare_ids(st, sql, ids, n, what, q);
  if (s) return s;
  int rc = sqlite3_step(*q);
  if (rc == SQLITE_ROW) return CP_STORE_OK;
  sqlite3_finalize(*q);
  *q = NULL;
  return rc == SQLITE_DONE ? CP_STORE_NOT_FOUND : fail(st, rc, what);
}

static int exec(cp_store *st, const char *sql) {
  return sqlite3_exec(st->db, sql, NULL, NULL, NULL);
}

static int pragma_int(cp_store *st, const char *sql, int *out) {
  sqlite3_stmt *q;
  int rc = sqlite3_prepare_v2(st->db, sql, -1, &q, NULL);
  if (rc) return rc;
  rc = sqlite3_step(q);
  if (rc == SQLITE_ROW) {
    *out = sqlite3_column_int(q, 0);
    rc = SQLITE_OK;
  }
  sqlite3_finalize(q);
  return rc;
}

static cp_store_status setup(cp_store *st, int read_only) {
  int rc, version = 0, app = 0, tables = 0;
  sqlite3_busy_timeout(st->db, 5000);
  if ((rc = pragma_int(st, "PRAGMA user_version", &version)))
    return fail(st, rc, "cannot read the database");
  if ((rc = pragma_int(st, "PRAGMA application_id", &app)))
    return fail(st, rc, "cannot read the database");
  if ((rc = pragma_int(st, "SELECT count(*) FROM sqlite_master", &tables)))
    return fail(st, rc, "cannot read the database");
  if (tables > 0 && app != CP_STORE_APPLICATION_ID)
    return failf(st, CP_STORE_BAD_FILE,
                 "an SQLite database of another application (application_id "
                 "%d), not complan's",
                 app);
  if (tables > 0 && version != CP_STORE_SCHEMA_VERSION)
    return failf(st, CP_STORE_BAD_FILE,
                 "complan database schema version %d; this complan reads "
                 "version %d only",
                 version, CP_STORE_SCHEMA_VERSION);
  if ((rc = exec(st, "PRAGMA foreign_keys = ON")))
    return fail(st, rc, "cannot enable foreign keys");
  if (read_only && tables == 0)
    return failf(st, CP_STORE_BAD_FILE, "empty: not a complan database");
  if (read_only) return CP_STORE_OK;
  if ((rc = exec(st, "PRAGMA journal_mode = WAL")))
    return fail(st, rc, "cannot switch to WAL");
  if ((rc = exec(st, "PRAGMA synchronous = NORMAL")))
    return fail(st, rc, "cannot set synchronous");
  if (tables == 0) {
    /* Create the schema once, atomically, even with two processes racing. */
    if ((rc = exec(st, "BEGIN IMMEDIATE")))
      return fail(st, rc, "cannot create the schema");
    if ((rc = pragma_int(st, "SELECT count(*) FROM sqlite_master", &tables))) {
      exec(st, "ROLLBACK");
      return fail(st, rc, "cannot create the schema");
    }
    if (tables == 0) {
      char sql[96];
      snprintf(sql, sizeof sql,
               "PRAGMA user_version = %d; PRAGMA application_id = %d;",
               CP_STORE_SCHEMA_VERSION, CP_STORE_APPLICATION_ID);
      if ((rc = exec(st, schema_sql)) || (rc = exec(st, sql))) {
        cp_store_status s = fail(st, rc, "cannot create the schema");
        exec(st, "ROLLBACK");
        return s;
      }
    }
    if ((rc = exec(st, "COMMIT"))) {
      cp_store_status s = fail(st, rc, "cannot create the schema");
      exec(st, "ROLLBACK");
      return s;
    }
  }
  for (int k = 0; k < S_COUNT; ++k)
    if ((rc = sqlite3_prepare_v3(st->db, stmt_sql[k], -1,
                                 SQLITE_PREPARE_PERSISTENT, &st->stmt[k],
                                 NULL)))
      return fail(st, rc, "cannot prepare a statement");
  return CP_STORE_OK;
}

cp_store_status cp_store_open(const char *path, int read_only,
                              cp_store **out, char *msg, size_t size) {
  *out = NULL;
  cp_store *st = calloc(1, sizeof *st);
  if (!st) {
    snprintf(msg, size, "%s: out of memory", path);
    return CP_STORE_NOMEM;
  }
  snprintf(st->path, sizeof st->path, "%s", path);
  int flags = read_only ? SQLITE_OPEN_READONLY
                        : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  int rc = sqlite3_open_v2(path, &st->db, flags, NULL);
  cp_store_status s;
  if (rc) {
    s = fail(st, rc, "cannot open");
  } else {
    s = setup(st, read_only);
  }
  if (s != CP_STORE_OK) {
    snprintf(msg, size, "%s", st->message);
    cp_store_close(st);
    return s;
  }
  *out = st;
  return CP_STORE_OK;
}

void cp_store_close(cp_store *st) {
  if (!st) return;
  for (int k = 0; k < S_COUNT; ++k) sqlite3_finalize(st->stmt[k]);
  sqlite3_close(st->db);
  free(st->scratch);
  free(st->node_message);
  free(st);
}

const char *cp_store_message(const cp_store *st) { return st->message; }
double cp_store_seconds(const cp_store *st) { return st->seconds; }

/* Runs a one-row statement with text/int bindings given as a format: 't'
 * text, 'i' int64, 'd' double, 'n' null. Returns the SQLite code
 * (SQLITE_DONE / SQLITE_ROW are mapped to SQLITE_OK). */
static int run_sql(cp_store *st, const char *sql, const char *fmt, ...) {
  sqlite3_stmt *q;
  int rc = sqlite3_prepare_v2(st->db, sql, -1, &q, NULL);
  if (rc) return rc;
  va_list ap;
  va_start(ap, fmt);
  for (int k = 0; fmt[k]; ++k) {
    switch (fmt[k]) {
    case 't': sqlite3_bind_text(q, k + 1, va_arg(ap, const char *), -1,
                                SQLITE_TRANSIENT); break;
    case 'i': sqlite3_bind_int64(q, k + 1, va_arg(ap, int64_t)); break;
    case 'd': {
      double v = va_arg(ap, double);
      if (isfinite(v)) sqlite3_bind_double(q, k + 1, v);
      else sqlite3_bind_null(q, k + 1);
      break;
    }
    default: (void)va_arg(ap, void *); sqlite3_bind_null(q, k + 1); break;
    }
  }
  va_end(ap);
  rc = sqlite3_step(q);
  sqlite3_finalize(q);
  return rc == SQLITE_DONE || rc == SQLITE_ROW ? SQLITE_OK : rc;
}

cp_store_status cp_store_task(cp_store *st, const cp_task *task,
                              const char *path, int64_t *task_id) {
  char hash[17];
  cp_task_hash(task, hash);
  int rc = run_sql(st,
                   "INSERT OR IGNORE INTO tasks (hash, text, scene, scene_dir,"
                   " path) VALUES (?, ?, ?, ?, ?)",
                   "ttttt", hash, task->text, task->scene_text,
                   task->scene_base ? task->scene_base : "",
                   path ? path : "");
  if (rc) return fail(st, rc, "cannot store the task");
  sqlite3_stmt *q;
  if ((rc = sqlite3_prepare_v2(st->db, "SELECT id FROM tasks WHERE hash = ?",
                               -1, &q, NULL)))
    return fail(st, rc, "cannot read the task");
  sqlite3_bind_text(q, 1, hash, -1, SQLITE_TRANSIENT);
  rc = sqlite3_step(q);
  if (rc == SQLITE_ROW) *task_id = sqlite3_column_int64(q, 0);
  sqlite3_finalize(q);
  return rc == SQLITE_ROW ? CP_STORE_OK : fail(st, rc, "cannot read the task");
}

cp_store_status cp_store_run_begin(cp_store *st, int64_t task_id,
                                   const char *planner, const char *options,
                                   uint64_t seed, int state_size,
                                   int64_t *run_id) {
  int rc = run_sql(st,
                   "INSERT INTO searches (task_id, planner, options, seed,"
                   " status, state_size) VALUES (?, ?, ?, ?, 'running', ?)",
                   "ittii", task_id, planner, options, (int64_t)seed,
                   (int64_t)state_size);
  if (rc) return fail(st, rc, "cannot start a search run");
  *run_id = sqlite3_last_insert_rowid(st->db);
  return CP_STORE_OK;
}

cp_store_status cp_store_find_resumable(cp_store *st, int64_t task_id,
                                        int64_t *run_id) {
  sqlite3_stmt *q;
  cp_store_status s = one_row(st,
                              "SELECT id FROM searches WHERE task_id = ? AND"
                              " status IN ('running', 'limit', 'interrupted')"
                              " ORDER BY id DESC LIMIT 1",
                              &task_id, 1, "cannot look for a run to resume", &q);
  if (s == CP_STORE_NOT_FOUND) return failf(st, s, "no unfinished run of this task");
  if (s) return s;
  *run_id = sqlite3_column_int64(q, 0);
  sqlite3_finalize(q);
  return CP_STORE_OK;
}

cp_store_status cp_store_load_run(cp_store *st, int64_t run_id,
                                  cp_store_run *run) {
  memset(run, 0, sizeof *run);
  sqlite3_stmt *q;
  cp_store_status rs = one_row(
      st,
      "SELECT id, task_id, planner, status, options, seed, state_size,"
      " seconds, rng, expansions, iterations, duplicates, rejected, steps,"
      " lcp_solves, pivots, fallbacks, warm_steps,"
      " (SELECT count(*) FROM nodes WHERE search_id = searches.id)"
      " FROM searches WHERE id = ?",
      &run_id, 1, "cannot read the run", &q);
  if (rs == CP_STORE_NOT_FOUND) return failf(st, rs, "no run %lld", (long long)run_id);
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
  if (!run->options) return failf(st, CP_STORE_NOMEM, "out of memory");
  return CP_STORE_OK;
}

cp_store_status cp_store_load_nodes(cp_store *st, int64_t run_id,
                                    int (*fn)(void *, const cp_search_node *,
                                              const double *, const void *,
                                              size_t),
                                    void *ctx) {
  sqlite3_stmt *q;
  cp_store_status s = prepare_ids(
      st,
      "SELECT id, parent, depth, time, cost, state, action, steps,"
      " lcp_solves, pivots, fallbacks, warm_steps, outcome, message, flags,"
      " goal_distance, (SELECT state_size FROM searches WHERE id = ?1), warm"
      " FROM nodes WHERE search_id = ?1 ORDER BY id",
      &run_id, 1, "cannot read the nodes", &q);
  if (s) return s;
  int rc;
  while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
    cp_search_node n;
    memset(&n, 0, sizeof n);
    n.id = (long)sqlite3_column_int64(q, 0);
    n.parent = sqlite3_column_type(q, 1) == SQLITE_NULL
                   ? -1
                   : (long)sqlite3_column_int64(q, 1);
    n.depth = sqlite3_column_int(q, 2);
    n.time = sqlite3_column_double(q, 3);
    n.cost = sqlite3_column_double(q, 4);
    int bytes = sqlite3_column_bytes(q, 5);
    int size = sqlite3_column_int(q, 16);
    if (bytes != size * (int)sizeof(double)) {
      s = failf(st, CP_STORE_BAD_FILE,
                "node %ld of run %lld: state of %d bytes where %d doubles "
                "were expected",
                n.id, (long long)run_id, bytes, size);
      break;
    }
    if ((size_t)size > st->scratch_n) {
      double *p = realloc(st->scratch, (size_t)size * sizeof *p);
      if (!p) {
        s = failf(st, CP_STORE_NOMEM, "out of memory");
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
      s = failf(st, CP_STORE_BAD_FILE, "node %ld: unknown outcome \"%s\"",
                n.id, oc ? oc : "");
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
      s = failf(st, CP_STORE_ERROR, "node %ld could not be restored", n.id);
      break;
    }
  }
  if (s == CP_STORE_OK && rc != SQLITE_DONE) s = fail(st, rc, "cannot read the nodes");
  sqlite3_finalize(q);
  return s;
}

cp_store_status cp_store_load_node(cp_store *st, int64_t run_id, long id,
                                   cp_search_node *n, double *x, int cap,
                                   double *values, int cap_v, int *n_v) {
  sqlite3_stmt *q;
  const int64_t ids[2] = {run_id, id};
  cp_store_status rs = one_row(
      st,
      "SELECT parent, depth, time, cost, state, action, inputs, steps,"
      " lcp_solves, pivots, fallbacks, warm_steps, outcome, message, flags,"
      " goal_distance FROM nodes WHERE search_id = ? AND id = ?",
      ids, 2, "cannot read a node", &q);
  if (rs == CP_STORE_NOT_FOUND)
    return failf(st, rs, "no node %ld in run %lld", id, (long long)run_id);
  if (rs) return rs;
  memset(n, 0, sizeof *n);
  n->id = id;
  n->parent = sqlite3_column_type(q, 0) == SQLITE_NULL
                  ? -1 : (long)sqlite3_column_int64(q, 0);
  n->depth = sqlite3_column_int(q, 1);
  n->time = sqlite3_column_double(q, 2);
  n->cost = sqlite3_column_double(q, 3);
  int nx = sqlite3_column_bytes(q, 4) / (int)sizeof(double);
  if (x) memcpy(x, sqlite3_column_blob(q, 4),
                (size_t)(nx < cap ? nx : cap) * sizeof(double));
  n->action = sqlite3_column_type(q, 5) == SQLITE_NULL
                  ? -1 : (long)sqlite3_column_int64(q, 5);
  int nv = sqlite3_column_bytes(q, 6) / (int)sizeof(double);
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
  if (!oc || cp_expand_outcome_parse(oc, &n->outcome))
    n->outcome = CP_OUTCOME_SOLVER_FAILED;
  const char *m = (const char *)sqlite3_column_text(q, 13);
  free(st->node_message);
  st->node_message = strdup(m ? m : "");
  n->message = st->node_message ? st->node_message : "";
  n->flags = sqlite3_column_int(q, 14);
  n->goal_distance = sqlite3_column_double(q, 15);
  sqlite3_finalize(q);
  return CP_STORE_OK;
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
  const cp_search_stats *s = cp_search_get_stats(search);
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
  sqlite3_bind_blob(q, 14, cp_search_rng(search), (int)sizeof(cp_rng),
                    SQLITE_STATIC);
  if ((rc = sqlite3_step(q)) != SQLITE_DONE) return rc;
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
  double t0 = now();
  int rc;
  const char *what = "cannot begin a transaction";
  sqlite3_reset(st->stmt[S_BEGIN]);
  if ((rc = sqlite3_step(st->stmt[S_BEGIN])) != SQLITE_DONE) goto rollback;
  if (insert_run) {
    what = "cannot start a search run";
    if ((rc = run_sql(st, insert_run, types, task_id, planner, options,
                      (int64_t)seed, (int64_t)cp_search_state_size(search))))
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
  st->seconds += now() - t0;
  return CP_STORE_OK;
rollback: {
  cp_store_status ret = fail(st, rc, what);
  for (int k = 0; k < S_COUNT; ++k) sqlite3_reset(st->stmt[k]);
  if (!sqlite3_get_autocommit(st->db)) exec(st, "ROLLBACK");
  st->seconds += now() - t0;
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
  const cp_store_progress pr = {"running", 0};
  return journal_transaction(
      st, run_id,
      "INSERT INTO searches (task_id, planner, options, seed, status,"
      " state_size) VALUES (?, ?, ?, ?, 'running', ?)",
      "ittii", cp_search_method(search), options, task_id, seed, task,
      search, &pr, -1, NULL);
}

cp_store_status cp_store_load_witnesses(
    cp_store *st, int64_t run_id,
    int (*fn)(void *ctx, long id, const double *point, int m, long rep),
    void *ctx) {
  sqlite3_stmt *q;
  cp_store_status s = prepare_ids(
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
      s = failf(st, CP_STORE_BAD_FILE,
                "witness %ld of run %lld: a point of %d bytes", id,
                (long long)run_id, bytes);
      break;
    }
    size_t m = (size_t)bytes / sizeof(double);
    if (m > cap) { /* a copy: the blob need not be aligned for doubles */
      double *p = realloc(buf, m * sizeof *p);
      if (!p) {
        s = failf(st, CP_STORE_NOMEM, "out of memory");
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
      s = failf(st, CP_STORE_BAD_FILE,
                "witness %ld of run %lld could not be restored", id,
                (long long)run_id);
      break;
    }
  }
  if (s == CP_STORE_OK && rc != SQLITE_DONE)
    s = fail(st, rc, "cannot read the witnesses");
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
      " s.seconds, s.nodes, s.expansions, s.lcp_solves, t.path"
      " FROM searches s JOIN tasks t ON t.id = s.task_id ORDER BY s.id",
      -1, &q, NULL);
  if (rc) return fail(st, rc, "cannot list the runs");
  rc = sqlite3_prepare_v2(st->db,
                          "SELECT id, node, cost, length, duration FROM plans"
                          " WHERE search_id = ? ORDER BY id",
                          -1, &p, NULL);
  if (rc) {
    sqlite3_finalize(q);
    return fail(st, rc, "cannot list the plans");
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
    return fail(st, rc, "cannot list the runs");
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
  cp_store_status ps = prepare_ids(
      st,
      "WITH RECURSIVE path(id, parent, depth) AS ("
      " SELECT n.id, n.parent, n.depth FROM nodes n JOIN plans p"
      "  ON p.search_id = n.search_id AND p.node = n.id WHERE p.id = ?1"
      " UNION ALL SELECT n.id, n.parent, n.depth FROM nodes n JOIN path"
      "  ON n.id = path.parent"
      "  AND n.search_id = (SELECT search_id FROM plans WHERE id = ?1))"
      " SELECT id, (SELECT search_id FROM plans WHERE id = ?1) FROM path"
      " ORDER BY depth",
      &plan_id, 1, "cannot read the plan", &q);
  if (ps) return ps;
  int rc;
  long cap = 0;
  while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
    if (*n == cap) {
      cap = cap ? 2 * cap : 64;
      long *p = realloc(*ids, (size_t)cap * sizeof *p);
      if (!p) {
        sqlite3_finalize(q);
        free(*ids);
        *ids = NULL;
        return failf(st, CP_STORE_NOMEM, "out of memory");
      }
      *ids = p;
    }
    (*ids)[(*n)++] = (long)sqlite3_column_int64(q, 0);
    *run_id = sqlite3_column_int64(q, 1);
  }
  sqlite3_finalize(q);
  if (rc != SQLITE_DONE) return fail(st, rc, "cannot read the plan");
  if (*n == 0)
    return failf(st, CP_STORE_NOT_FOUND, "no plan %lld", (long long)plan_id);
  return CP_STORE_OK;
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
  int rc = run_sql(st,
                   "INSERT INTO experiments (name, totaltime, timelimit,"
                   " memorylimit, runcount, version, hostname, cpuinfo, date,"
                   " seed, setup) VALUES (?, 0, ?, 0, ?, 'complan 0.1.0', ?,"
                   " '', datetime('now'), ?, ?)",
                   "tditit", name, timelimit, (int64_t)runcount, host,
                   (int64_t)seed, setup);
  if (rc) return fail(st, rc, "cannot store the experiment");
  *experiment_id = sqlite3_last_insert_rowid(st->db);
  return CP_STORE_OK;
}

cp_store_status cp_store_bench_planner(cp_store *st, const char *name,
                                       const char *settings,
                                       int64_t *planner_id) {
  int rc = run_sql(st, "INSERT INTO plannerConfigs (name, settings) VALUES (?, ?)",
                   "tt", name, settings);
  if (rc) return fail(st, rc, "cannot store the planner");
  *planner_id = sqlite3_last_insert_rowid(st->db);
  return CP_STORE_OK;
}

cp_store_status cp_store_bench_run(cp_store *st, int64_t experiment_id,
                                   int64_t planner_id, const cp_bench_run *r,
                                   int64_t *run_id) {
  int rc = run_sql(
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
  if (rc) return fail(st, rc, "cannot store the benchmark run");
  *run_id = sqlite3_last_insert_rowid(st->db);
  return CP_STORE_OK;
}

cp_store_status cp_store_bench_progress(cp_store *st, int64_t run_id,
                                        double time, double best_cost,
                                        long nodes, long expansions,
                                        double best_distance) {
  int rc = run_sql(st,
                   "INSERT OR REPLACE INTO progress (runid, time, best_cost,"
                   " graph_states, expansions, best_goal_distance)"
                   " VALUES (?, ?, ?, ?, ?, ?)",
                   "iddiid", run_id, time, best_cost, (int64_t)nodes,
                   (int64_t)expansions, best_distance);
  return rc ? fail(st, rc, "cannot store progress") : CP_STORE_OK;
}

cp_store_status cp_store_bench_finish(cp_store *st, int64_t experiment_id,
                                      double totaltime) {
  int rc = run_sql(st, "UPDATE experiments SET totaltime = ? WHERE id = ?",
                   "di", totaltime, experiment_id);
  return rc ? fail(st, rc, "cannot finish the experiment") : CP_STORE_OK;
}

cp_store_status cp_store_bench_summary(cp_store *st, int64_t experiment_id,
                                       json_t **out) {
  *out = NULL;
  sqlite3_stmt *q;
  cp_store_status ps = prepare_ids(
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
    return fail(st, rc, "cannot summarise the benchmark");
  }
  *out = json_object();
  json_object_set_new(*out, "experiment", json_integer(experiment_id));
  json_object_set_new(*out, "planners", list);
  return CP_STORE_OK;
}

cp_store_status cp_store_load_task(cp_store *st, int64_t task_id,
                                   cp_store_task_row *row) {
  memset(row, 0, sizeof *row);
  sqlite3_stmt *q;
  cp_store_status rs =
      one_row(st, "SELECT text, scene, scene_dir, path FROM tasks WHERE id = ?",
              &task_id, 1, "cannot read the task", &q);
  if (rs == CP_STORE_NOT_FOUND) return failf(st, rs, "no task %lld", (long long)task_id);
  if (rs) return rs;
  char **out[4] = {&row->text, &row->scene, &row->scene_dir, &row->path};
  int bad = 0;
  for (int i = 0; i < 4; ++i) {
    const char *t = (const char *)sqlite3_column_text(q, i);
    *out[i] = strdup(t ? t : "");
    bad |= !*out[i];
  }
  sqlite3_finalize(q);
  if (bad) {
    cp_store_task_row_free(row);
    return failf(st, CP_STORE_NOMEM, "out of memory");
  }
  return CP_STORE_OK;
}

void cp_store_task_row_free(cp_store_task_row *row) {
  free(row->text);
  free(row->scene);
  free(row->scene_dir);
  free(row->path);
  memset(row, 0, sizeof *row);
}
