#include "planner/store/store.h"

#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

/* The schema, version CP_STORE_SCHEMA_VERSION (docs/database.md documents
 * every column). The one place the tables are defined: a new database runs
 * all of it, and a migration from an older version runs it after its own
 * ALTERs (hence IF NOT EXISTS and INSERT OR IGNORE). A table added here
 * reaches old files through the migration with no further code. */
#define SEARCHES_COLUMNS                                                    \
  " id INTEGER PRIMARY KEY,"                                                \
  " task_id INTEGER NOT NULL REFERENCES tasks(id),"                        \
  " planner TEXT NOT NULL,"                                                 \
  " options TEXT NOT NULL,"                                                 \
  " seed INTEGER NOT NULL,"                                                 \
  " status TEXT NOT NULL CHECK (status IN"                                  \
  "   ('running', 'solved', 'not_found', 'limit', 'error', 'interrupted',"  \
  "    'failed_expansions')),"                                            \
  " state_size INTEGER NOT NULL,"                                           \
  " started TEXT NOT NULL DEFAULT (datetime('now')),"                       \
  " updated TEXT,"                                                          \
  " seconds REAL NOT NULL DEFAULT 0,"                                       \
  " sessions INTEGER NOT NULL DEFAULT 1,"                                   \
  " nodes INTEGER NOT NULL DEFAULT 0,"                                      \
  " expansions INTEGER NOT NULL DEFAULT 0,"                                 \
  " iterations INTEGER NOT NULL DEFAULT 0,"                                 \
  " duplicates INTEGER NOT NULL DEFAULT 0,"                                 \
  " rejected INTEGER NOT NULL DEFAULT 0,"                                   \
  " steps INTEGER NOT NULL DEFAULT 0,"                                      \
  " lcp_solves INTEGER NOT NULL DEFAULT 0,"                                 \
  " pivots INTEGER NOT NULL DEFAULT 0,"                                     \
  " fallbacks INTEGER NOT NULL DEFAULT 0,"                                  \
  " warm_steps INTEGER NOT NULL DEFAULT 0,"                                 \
  " rng BLOB,"                                                              \
  " complan TEXT"
#define SEARCHES_V1_COLUMNS                                                 \
  "id, task_id, planner, options, seed, status, state_size, started,"       \
  " updated, seconds, sessions, nodes, expansions, iterations, duplicates," \
  " rejected, steps, lcp_solves, pivots, fallbacks, warm_steps, rng"

static const char schema_sql[] =
    "CREATE TABLE IF NOT EXISTS tasks ("
    " id INTEGER PRIMARY KEY,"
    " hash TEXT NOT NULL UNIQUE,"
    " text TEXT NOT NULL,"
    " scene TEXT NOT NULL,"
    " scene_dir TEXT,"
    " path TEXT,"
    " created TEXT NOT NULL DEFAULT (datetime('now')),"
    " inputs_stored INTEGER NOT NULL DEFAULT 0);"
    /* Content-addressed input files: each distinct content once. */
    "CREATE TABLE IF NOT EXISTS blobs ("
    " sha256 TEXT PRIMARY KEY,"
    " size INTEGER NOT NULL,"
    " data BLOB NOT NULL);"
    "CREATE TABLE IF NOT EXISTS task_files ("
    " task_id INTEGER NOT NULL REFERENCES tasks(id),"
    " seq INTEGER NOT NULL,"
    " kind TEXT NOT NULL,"
    " path TEXT NOT NULL,"
    " sha256 TEXT NOT NULL REFERENCES blobs(sha256),"
    " PRIMARY KEY (task_id, seq));"
    "CREATE TABLE IF NOT EXISTS searches (" SEARCHES_COLUMNS ");"
    "CREATE TABLE IF NOT EXISTS nodes ("
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
    "CREATE TABLE IF NOT EXISTS witnesses ("
    " search_id INTEGER NOT NULL REFERENCES searches(id),"
    " id INTEGER NOT NULL,"
    " point BLOB NOT NULL,"
    " representative INTEGER,"
    " PRIMARY KEY (search_id, id),"
    " FOREIGN KEY (search_id, representative)"
    "  REFERENCES nodes(search_id, id));"
    "CREATE TABLE IF NOT EXISTS plans ("
    " id INTEGER PRIMARY KEY,"
    " search_id INTEGER NOT NULL REFERENCES searches(id),"
    " node INTEGER NOT NULL,"
    " cost REAL NOT NULL,"
    " length INTEGER NOT NULL,"
    " duration REAL NOT NULL,"
    " created TEXT NOT NULL DEFAULT (datetime('now')),"
    " FOREIGN KEY (search_id, node) REFERENCES nodes(search_id, id));"
    /* OMPL's benchmark layout (Planner Arena reads it). */
    "CREATE TABLE IF NOT EXISTS experiments ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, name VARCHAR(512),"
    " totaltime REAL, timelimit REAL, memorylimit REAL, runcount INTEGER,"
    " version VARCHAR(128), hostname VARCHAR(1024), cpuinfo TEXT,"
    " date DATETIME, seed INTEGER, setup TEXT);"
    "CREATE TABLE IF NOT EXISTS plannerConfigs ("
    " id INTEGER PRIMARY KEY AUTOINCREMENT, name VARCHAR(512) NOT NULL,"
    " settings TEXT);"
    "CREATE TABLE IF NOT EXISTS enums ("
    " name VARCHAR(512), value INTEGER, description TEXT,"
    " PRIMARY KEY (name, value));"
    "CREATE TABLE IF NOT EXISTS runs ("
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
    "CREATE TABLE IF NOT EXISTS progress ("
    " runid INTEGER, time REAL, best_cost REAL, graph_states INTEGER,"
    " expansions INTEGER, best_goal_distance REAL,"
    " PRIMARY KEY (runid, time),"
    " FOREIGN KEY (runid) REFERENCES runs(id) ON DELETE CASCADE);"
    "INSERT OR IGNORE INTO enums VALUES ('status', 0, 'Unknown status'),"
    " ('status', 1, 'Invalid start'), ('status', 2, 'Invalid goal'),"
    " ('status', 3, 'Unrecognized goal type'), ('status', 4, 'Timeout'),"
    " ('status', 5, 'Approximate solution'), ('status', 6, 'Exact solution'),"
    " ('status', 7, 'Crash'), ('status', 8, 'Abort');"
    /* complan assemble (planner/store/assembly.h, docs/assembly.md). */
    "CREATE TABLE IF NOT EXISTS assembly_runs ("
    " id INTEGER PRIMARY KEY,"
    " created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),"
    " scene TEXT NOT NULL,"
    " status TEXT NOT NULL,"
    " parts INTEGER NOT NULL,"
    " directions INTEGER NOT NULL,"
    " explored INTEGER NOT NULL,"
    " stability_checks INTEGER NOT NULL,"
    " seconds REAL NOT NULL,"
    " blocked TEXT);"
    "CREATE TABLE IF NOT EXISTS assembly_subassemblies ("
    " run_id INTEGER NOT NULL REFERENCES assembly_runs(id) ON DELETE CASCADE,"
    " mask TEXT NOT NULL,"
    " parts TEXT NOT NULL,"
    " n_parts INTEGER NOT NULL,"
    " stable INTEGER,"
    " feasible INTEGER NOT NULL,"
    " dead_end INTEGER NOT NULL,"
    " PRIMARY KEY (run_id, mask));"
    "CREATE TABLE IF NOT EXISTS assembly_steps ("
    " run_id INTEGER NOT NULL REFERENCES assembly_runs(id) ON DELETE CASCADE,"
    " step INTEGER NOT NULL,"
    " part TEXT NOT NULL,"
    " dx REAL NOT NULL, dy REAL NOT NULL, dz REAL NOT NULL,"
    " stability TEXT NOT NULL,"
    " PRIMARY KEY (run_id, step));";

/* Version 1 -> 2: tasks gain inputs_stored (0: the run's files were not
 * stored; replay reads them from disk), searches gain complan (the build)
 * and the 'interrupted' status (a CHECK constraint: the table is rebuilt,
 * SQLite's documented procedure, with foreign keys off). The new tables come
 * from schema_sql. */
static const char migrate_v1_sql[] =
    "ALTER TABLE tasks ADD COLUMN inputs_stored INTEGER NOT NULL DEFAULT 0;"
    "CREATE TABLE searches_v2 (" SEARCHES_COLUMNS ");"
    "INSERT INTO searches_v2 (" SEARCHES_V1_COLUMNS ") SELECT "
    SEARCHES_V1_COLUMNS " FROM searches;"
    "DROP TABLE searches;"
    "ALTER TABLE searches_v2 RENAME TO searches;";

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
  int version;           /* the file's schema version (1 read-only, or 2) */
  char *node_message;  /* cp_store_load_node's message */
};

/* How long a second process waits for a lock (ms). */
enum { BUSY_MS = 5000 };

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Maps an SQLite result code to a store status, with the message. */
static cp_store_status fail(cp_store *st, int rc, const char *what) {
  int base = rc & 0xff;
  cp_store_status s = CP_STORE_FAILED;
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
  case SQLITE_MISMATCH:
    s = CP_STORE_BAD_FILE;
    hint = " (a damaged database)";
    break;
  case SQLITE_ERROR:
    /* A stamped file without complan's tables or columns: damaged. */
    if (st->db && (strstr(sqlite3_errmsg(st->db), "no such table") ||
                   strstr(sqlite3_errmsg(st->db), "no such column"))) {
      s = CP_STORE_BAD_FILE;
      hint = " (the file's tables are not complan's: a damaged database)";
    }
    break;
  case SQLITE_TOOBIG: s = CP_STORE_BAD_FILE; break;
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

/* What the file holds before complan writes into it. */
typedef enum file_kind {
  FILE_EMPTY,       /* no table: a new file */
  FILE_CURRENT,     /* complan's, this schema version */
  FILE_V1,          /* complan's, schema version 1 (migrated on write) */
  FILE_ASSEMBLY,    /* unstamped, only assembly_* tables: written by an
                       earlier `complan assemble` (adopted on write) */
  FILE_FOREIGN      /* another application's or another version: refused */
} file_kind;

/* Classifies the open database; inside a transaction when writing, so that
 * no other process creates or changes it between the reads. */
static cp_store_status classify(cp_store *st, file_kind *kind) {
  int rc, version = 0, app = 0, tables = 0, others = 0;
  if ((rc = pragma_int(st, "PRAGMA user_version", &version)) ||
      (rc = pragma_int(st, "PRAGMA application_id", &app)) ||
      (rc = pragma_int(st, "SELECT count(*) FROM sqlite_master", &tables)) ||
      (rc = pragma_int(st,
                       "SELECT count(*) FROM sqlite_master WHERE name NOT LIKE"
                       " 'assembly\\_%' ESCAPE '\\' AND name NOT LIKE"
                       " 'sqlite\\_autoindex\\_assembly\\_%' ESCAPE '\\'",
                       &others)))
    return fail(st, rc, "cannot read the database");
  st->version = version;
  if (tables == 0 && app == 0 && version == 0) *kind = FILE_EMPTY;
  else if (app == CP_STORE_APPLICATION_ID && version == CP_STORE_SCHEMA_VERSION)
    *kind = FILE_CURRENT;
  else if (app == CP_STORE_APPLICATION_ID && version == 1) *kind = FILE_V1;
  else if (app == 0 && version == 0 && others == 0) *kind = FILE_ASSEMBLY;
  else {
    *kind = FILE_FOREIGN;
    if (app != CP_STORE_APPLICATION_ID)
      return failf(st, CP_STORE_BAD_FILE,
                   "an SQLite database of another application (application_id"
                   " %d, user_version %d), not complan's; it is left untouched",
                   app, version);
    return failf(st, CP_STORE_BAD_FILE,
                 "complan database schema version %d; this complan reads "
                 "versions 1 to %d only; it is left untouched",
                 version, CP_STORE_SCHEMA_VERSION);
  }
  return CP_STORE_OK;
}

/* PRAGMA quick_check: "ok", or the first problem in msg. */
static cp_store_status quick_check(cp_store *st) {
  sqlite3_stmt *q;
  int rc = sqlite3_prepare_v2(st->db, "PRAGMA quick_check(1)", -1, &q, NULL);
  if (rc) return fail(st, rc, "cannot check the database");
  rc = sqlite3_step(q);
  char first[256] = "";
  if (rc == SQLITE_ROW) {
    const char *t = (const char *)sqlite3_column_text(q, 0);
    snprintf(first, sizeof first, "%s", t ? t : "");
  }
  sqlite3_finalize(q);
  if (rc != SQLITE_ROW) return fail(st, rc, "cannot check the database");
  if (strcmp(first, "ok"))
    return failf(st, CP_STORE_BAD_FILE,
                 "damaged: PRAGMA quick_check says \"%.200s\"; nothing was "
                 "written (copy what you need with sqlite3's .recover)",
                 first);
  return CP_STORE_OK;
}

/* The schema created, migrated or checked, in one transaction taken before
 * the first read (BEGIN IMMEDIATE waits for a writer under the busy
 * timeout): two processes creating the same file both succeed, one after
 * the other; a foreign file is rolled back untouched. */
static cp_store_status prepare_schema(cp_store *st) {
  int rc;
  file_kind kind;
  cp_store_status s;
  /* The common case first, under a read lock only (a writer elsewhere does
   * not hold it up): a current complan file, checked. */
  if ((rc = exec(st, "BEGIN"))) return fail(st, rc, "cannot read the database");
  s = classify(st, &kind);
  if (!s && kind == FILE_CURRENT) s = quick_check(st);
  exec(st, "COMMIT");
  if (s || kind == FILE_CURRENT) return s;
  /* Anything to write: decided again under the write lock. */
  if ((rc = exec(st, "BEGIN IMMEDIATE")))
    return fail(st, rc, "cannot open for writing");
  s = classify(st, &kind);
  if (!s && kind != FILE_EMPTY) s = quick_check(st);
  const char *what = "cannot create the schema";
  if (!s && kind != FILE_CURRENT) {
    if (kind == FILE_V1) {
      what = "cannot migrate the database from schema version 1";
      rc = exec(st, migrate_v1_sql);
    }
    char sql[96];
    snprintf(sql, sizeof sql,
             "PRAGMA user_version = %d; PRAGMA application_id = %d;",
             CP_STORE_SCHEMA_VERSION, CP_STORE_APPLICATION_ID);
    if (!rc) rc = exec(st, schema_sql);
    if (!rc) rc = exec(st, sql);
    if (rc) s = fail(st, rc, what);
    st->version = CP_STORE_SCHEMA_VERSION;
  }
  if (!s && (rc = exec(st, "COMMIT"))) s = fail(st, rc, what);
  if (s && !sqlite3_get_autocommit(st->db)) exec(st, "ROLLBACK");
  return s;
}

/* PRAGMA journal_mode = WAL needs every other connection to let go of the
 * file for a moment; SQLite does not wait for that under the busy timeout,
 * so the switch is retried here for as long. */
static cp_store_status switch_to_wal(cp_store *st) {
  double t0 = now();
  for (;;) {
    sqlite3_stmt *q;
    int rc = sqlite3_prepare_v2(st->db, "PRAGMA journal_mode = WAL", -1, &q,
                                NULL);
    if (rc) return fail(st, rc, "cannot switch to WAL");
    rc = sqlite3_step(q);
    int wal = rc == SQLITE_ROW &&
              !sqlite3_stricmp((const char *)sqlite3_column_text(q, 0), "wal");
    sqlite3_finalize(q);
    if (wal) return CP_STORE_OK;
    int base = rc & 0xff;
    int retry = rc == SQLITE_ROW || base == SQLITE_BUSY || base == SQLITE_LOCKED;
    if (!retry) return fail(st, rc, "cannot switch to WAL");
    if (now() - t0 > BUSY_MS / 1000.0)
      return rc == SQLITE_ROW
                 ? failf(st, CP_STORE_BUSY,
                         "cannot switch to WAL: another process keeps the "
                         "database open in another journal mode")
                 : fail(st, rc, "cannot switch to WAL");
    sqlite3_sleep(5);
  }
}

static cp_store_status setup(cp_store *st, int read_only) {
  int rc;
  sqlite3_busy_timeout(st->db, BUSY_MS);
  cp_store_status s;
  if (read_only) {
    file_kind kind;
    if ((rc = exec(st, "BEGIN"))) return fail(st, rc, "cannot read the database");
    s = classify(st, &kind);
    exec(st, "COMMIT");
    if (s) return s;
    if (kind == FILE_EMPTY || kind == FILE_ASSEMBLY)
      return failf(st, CP_STORE_BAD_FILE,
                   "%s: not a complan planner database",
                   kind == FILE_EMPTY ? "empty" : "only assembly runs");
    return CP_STORE_OK;
  }
  if ((s = prepare_schema(st))) return s;
  if ((s = switch_to_wal(st))) return s;
  if ((rc = exec(st, "PRAGMA synchronous = NORMAL")))
    return fail(st, rc, "cannot set synchronous");
  if ((rc = exec(st, "PRAGMA foreign_keys = ON")))
    return fail(st, rc, "cannot enable foreign keys");
  for (int k = 0; k < S_COUNT; ++k)
    if ((rc = sqlite3_prepare_v3(st->db, stmt_sql[k], -1,
                                 SQLITE_PREPARE_PERSISTENT, &st->stmt[k],
                                 NULL)))
      return fail(st, rc, "cannot prepare a statement");
  return CP_STORE_OK;
}

/* A database is a regular file (or a new one): a FIFO would block SQLite's
 * open, a directory or device is not a database. */
static cp_store_status check_file_type(cp_store *st, const char *path) {
  struct stat sb;
  if (stat(path, &sb) != 0) return CP_STORE_OK; /* absent: SQLite says */
  if (S_ISREG(sb.st_mode)) return CP_STORE_OK;
  const char *what = S_ISFIFO(sb.st_mode)  ? "a FIFO"
                     : S_ISDIR(sb.st_mode) ? "a directory"
                     : S_ISCHR(sb.st_mode) ? "a character device"
                     : S_ISBLK(sb.st_mode) ? "a block device"
                     : S_ISSOCK(sb.st_mode) ? "a socket"
                                            : "not a regular file";
  return failf(st, CP_STORE_BAD_FILE,
               "it is %s; a database is a regular file", what);
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
  cp_store_status s = check_file_type(st, path);
  if (s == CP_STORE_OK) {
    int flags = read_only ? SQLITE_OPEN_READONLY
                          : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
    int rc = sqlite3_open_v2(path, &st->db, flags, NULL);
    s = rc ? fail(st, rc, "cannot open") : setup(st, read_only);
  }
  if (s != CP_STORE_OK) {
    snprintf(msg, size, "%s", st->message);
    cp_store_close(st);
    return s;
  }
  *out = st;
  return CP_STORE_OK;
}

struct sqlite3 *cp_store_sqlite(cp_store *st) { return st->db; }

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
 * text, 'i' int64, 'd' double, 'b' blob (pointer and size_t), 'n' null. Returns the SQLite code
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
    case 'b': { /* a blob: pointer, then size_t size */
      const void *b = va_arg(ap, const void *);
      size_t n = va_arg(ap, size_t);
      sqlite3_bind_blob64(q, k + 1, b, n, SQLITE_STATIC);
      break;
    }
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

/* The task row with this key: its id, or CP_STORE_NOT_FOUND. */
static cp_store_status task_by_key(cp_store *st, const char *key,
                                   int64_t *task_id) {
  sqlite3_stmt *q;
  int rc = sqlite3_prepare_v2(st->db, "SELECT id FROM tasks WHERE hash = ?",
                              -1, &q, NULL);
  if (rc) return fail(st, rc, "cannot read the task");
  sqlite3_bind_text(q, 1, key, -1, SQLITE_TRANSIENT);
  rc = sqlite3_step(q);
  if (rc == SQLITE_ROW) *task_id = sqlite3_column_int64(q, 0);
  sqlite3_finalize(q);
  return rc == SQLITE_ROW   ? CP_STORE_OK
         : rc == SQLITE_DONE ? CP_STORE_NOT_FOUND
                             : fail(st, rc, "cannot read the task");
}

cp_store_status cp_store_task(cp_store *st, const cp_task *task,
                              const char *path, int64_t *task_id) {
  char key[CP_TASK_KEY_SIZE];
  cp_task_hash(task, key);
  if (!key[0]) return failf(st, CP_STORE_NOMEM, "out of memory");
  cp_store_status s = task_by_key(st, key, task_id);
  if (s != CP_STORE_NOT_FOUND) return s;
  /* New inputs: the row, each file's bytes (once per content) and the
   * list of files, in one transaction. */
  int rc;
  if ((rc = exec(st, "BEGIN IMMEDIATE")))
    return fail(st, rc, "cannot store the task");
  const char *what = "cannot store the task";
  rc = run_sql(st,
               "INSERT OR IGNORE INTO tasks (hash, text, scene, scene_dir,"
               " path, inputs_stored) VALUES (?, ?, ?, ?, ?, 1)",
               "ttttt", key, task->text, task->scene_text,
               task->scene_base ? task->scene_base : "", path ? path : "");
  int fresh = !rc && sqlite3_changes(st->db) == 1;
  int64_t id = sqlite3_last_insert_rowid(st->db);
  what = "cannot store the task's files";
  for (int i = 0; !rc && fresh && i < task->n_files; ++i) {
    const cp_task_file *f = &task->files[i];
    rc = run_sql(st,
                 "INSERT OR IGNORE INTO blobs (sha256, size, data)"
                 " VALUES (?, ?, ?)",
                 "tib", f->sha256, (int64_t)f->size, (const void *)f->data,
                 f->size);
    if (!rc)
      rc = run_sql(st,
                   "INSERT INTO task_files (task_id, seq, kind, path, sha256)"
                   " VALUES (?, ?, ?, ?, ?)",
                   "iittt", id, (int64_t)i, f->kind, f->path, f->sha256);
  }
  if (!rc) rc = exec(st, "COMMIT");
  if (rc) {
    s = fail(st, rc, what);
    if (!sqlite3_get_autocommit(st->db)) exec(st, "ROLLBACK");
    return s;
  }
  return task_by_key(st, key, task_id) == CP_STORE_OK
             ? CP_STORE_OK
             : failf(st, CP_STORE_FAILED, "the stored task vanished");
}

cp_store_status cp_store_task_files(cp_store *st, int64_t task_id,
                                    cp_store_file **files, int *n) {
  *files = NULL;
  *n = 0;
  if (st->version < 2) return CP_STORE_OK; /* read-only version 1 */
  sqlite3_stmt *q;
  cp_store_status s = prepare_ids(
      st,
      "SELECT f.kind, f.path, f.sha256, b.data, b.size FROM task_files f"
      " LEFT JOIN blobs b ON b.sha256 = f.sha256 WHERE f.task_id = ?"
      " ORDER BY f.seq",
      &task_id, 1, "cannot read the task's files", &q);
  if (s) return s;
  int rc, cap = 0;
  while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
    const char *kind = (const char *)sqlite3_column_text(q, 0);
    const char *path = (const char *)sqlite3_column_text(q, 1);
    const char *sha = (const char *)sqlite3_column_text(q, 2);
    const void *data = sqlite3_column_blob(q, 3);
    size_t size = (size_t)sqlite3_column_bytes(q, 3);
    char check[CP_TASK_KEY_SIZE];
    cp_sha256_hex(data ? data : "", size, check);
    if (!path || !sha || sqlite3_column_type(q, 3) == SQLITE_NULL ||
        strcmp(check, sha) || sqlite3_column_int64(q, 4) != (int64_t)size) {
      s = failf(st, CP_STORE_BAD_FILE,
                "task %lld: the stored file %.200s is missing or does not "
                "match its SHA-256 (damaged database)",
                (long long)task_id, path ? path : "(no path)");
      break;
    }
    if (*n == cap) {
      cap = cap ? 2 * cap : 8;
      cp_store_file *p = realloc(*files, (size_t)cap * sizeof *p);
      if (!p) {
        s = failf(st, CP_STORE_NOMEM, "out of memory");
        break;
      }
      *files = p;
    }
    cp_store_file *f = &(*files)[*n];
    memset(f, 0, sizeof *f);
    snprintf(f->kind, sizeof f->kind, "%s", kind ? kind : "");
    snprintf(f->sha256, sizeof f->sha256, "%s", sha);
    f->path = strdup(path);
    f->data = malloc(size + 1);
    if (!f->path || !f->data) {
      free(f->path);
      free(f->data);
      s = failf(st, CP_STORE_NOMEM, "out of memory");
      break;
    }
    if (size) memcpy(f->data, data, size);
    f->data[size] = '\0';
    f->size = size;
    ++*n;
  }
  if (!s && rc != SQLITE_DONE) s = fail(st, rc, "cannot read the task's files");
  sqlite3_finalize(q);
  if (s) {
    cp_store_files_free(*files, *n);
    *files = NULL;
    *n = 0;
  }
  return s;
}

void cp_store_files_free(cp_store_file *files, int n) {
  for (int i = 0; i < n; ++i) {
    free(files[i].path);
    free(files[i].data);
  }
  free(files);
}

/* The first difference between the stored files and the task's, as a
 * phrase ("the scene file models/x.json changed"); "" when none. */
static void first_change(const cp_task *task, const char *stored_text,
                         const cp_store_file *f, int n, char *out,
                         size_t size) {
  out[0] = '\0';
  for (int i = 0; i < task->n_files && !out[0]; ++i) {
    const cp_task_file *c = &task->files[i];
    int k = 0;
    while (k < n && strcmp(f[k].path, c->path)) ++k;
    if (k == n)
      snprintf(out, size, "the %s file %.200s was not read by that run",
               c->kind, c->path);
    else if (strcmp(f[k].sha256, c->sha256))
      snprintf(out, size, "the %s file %.200s changed (SHA-256 %.12s... "
               "then, %.12s... now)", c->kind, c->path, f[k].sha256,
               c->sha256);
  }
  for (int k = 0; k < n && !out[0]; ++k) {
    int i = 0;
    while (i < task->n_files && strcmp(f[k].path, task->files[i].path)) ++i;
    if (i == task->n_files)
      snprintf(out, size, "the %s file %.200s is no longer read", f[k].kind,
               f[k].path);
  }
  if (!out[0] && strcmp(stored_text, task->text ? task->text : ""))
    snprintf(out, size, "the task text changed");
  if (!out[0]) snprintf(out, size, "the files were moved or renamed");
}

cp_store_status cp_store_resume_check(cp_store *st, const cp_task *task,
                                      const char *path, int64_t task_id) {
  sqlite3_stmt *q;
  int rc = sqlite3_prepare_v2(
      st->db,
      "SELECT s.id, t.id, t.text, t.inputs_stored, t.scene FROM searches s"
      " JOIN tasks t ON t.id = s.task_id"
      " WHERE s.status IN ('running', 'limit', 'interrupted') AND t.id <> ?1"
      " AND (t.text = ?2 OR (?3 <> '' AND t.path = ?3))"
      " ORDER BY s.id DESC LIMIT 1",
      -1, &q, NULL);
  if (rc) return fail(st, rc, "cannot look for a run to resume");
  sqlite3_bind_int64(q, 1, task_id);
  sqlite3_bind_text(q, 2, task->text ? task->text : "", -1, SQLITE_STATIC);
  sqlite3_bind_text(q, 3, path ? path : "", -1, SQLITE_STATIC);
  rc = sqlite3_step(q);
  if (rc != SQLITE_ROW) {
    sqlite3_finalize(q);
    return rc == SQLITE_DONE ? CP_STORE_OK
                             : fail(st, rc, "cannot look for a run to resume");
  }
  int64_t run = sqlite3_column_int64(q, 0), old = sqlite3_column_int64(q, 1);
  const char *t = (const char *)sqlite3_column_text(q, 2);
  char *text = strdup(t ? t : "");
  int stored = sqlite3_column_int(q, 3);
  int scene_same = task->scene_text &&
                   !strcmp((const char *)sqlite3_column_text(q, 4),
                           task->scene_text);
  sqlite3_finalize(q);
  if (!text) return failf(st, CP_STORE_NOMEM, "out of memory");
  char what[400];
  cp_store_file *f = NULL;
  int n = 0;
  cp_store_status s = CP_STORE_OK;
  if (stored) {
    s = cp_store_task_files(st, old, &f, &n);
    if (!s) first_change(task, text, f, n, what, sizeof what);
    cp_store_files_free(f, n);
  } else {
    /* A version-1 task: only its texts were stored. */
    snprintf(what, sizeof what, "%s",
             strcmp(text, task->text ? task->text : "") ? "the task text changed"
             : !scene_same ? "the scene changed"
                           : "it was stored by an older complan (schema "
                             "version 1) without its URDF and mesh files, so "
                             "its inputs cannot be checked");
  }
  free(text);
  if (s) return s;
  return failf(st, CP_STORE_CHANGED,
               "--resume: run %lld was planned from other inputs: %s; "
               "resuming would mix two problems in one run (plan without "
               "--resume for a new run)",
               (long long)run, what);
}

cp_store_status cp_store_run_begin(cp_store *st, int64_t task_id,
                                   const char *planner, const char *options,
                                   uint64_t seed, int state_size,
                                   int64_t *run_id) {
  char build[200];
  snprintf(build, sizeof build, "%s, SQLite %s", CP_BUILD, sqlite3_libversion());
  int rc = run_sql(st,
                   "INSERT INTO searches (task_id, planner, options, seed,"
                   " status, state_size, complan) VALUES (?, ?, ?, ?,"
                   " 'running', ?, ?)",
                   "ittiit", task_id, planner, options, (int64_t)seed,
                   (int64_t)state_size, build);
  if (rc) return fail(st, rc, "cannot start a search run");
  *run_id = sqlite3_last_insert_rowid(st->db);
  return CP_STORE_OK;
}

cp_store_status cp_store_run_resumed(cp_store *st, int64_t run_id) {
  int rc = run_sql(st,
                   "UPDATE searches SET sessions = sessions + 1,"
                   " updated = datetime('now') WHERE id = ?",
                   "i", run_id);
  return rc ? fail(st, rc, "cannot count the session") : CP_STORE_OK;
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
      s = failf(st, CP_STORE_BAD_FILE,
                "node %ld of run %lld: %s (a damaged database)", n.id,
                (long long)run_id,
                n.id != expect - 1 ? "ids are not 0, 1, 2, ... in order"
                : n.id == 0        ? "the start node has a parent"
                                   : "its parent is not an earlier node");
      break;
    }
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
      s = failf(st, CP_STORE_BAD_FILE,
                "node %ld of run %lld could not be restored (its row does not "
                "fit the run: a damaged database)", n.id, (long long)run_id);
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
      " goal_distance, (SELECT state_size FROM searches WHERE id = search_id)"
      " FROM nodes WHERE search_id = ? AND id = ?",
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
    return failf(st, CP_STORE_BAD_FILE,
                 "node %ld of run %lld: %s of %d bytes where %d doubles were "
                 "expected (a damaged database)",
                 id, (long long)run_id, bad, got, want);
  }
  int nx = xb / (int)sizeof(double);
  if (x) memcpy(x, sqlite3_column_blob(q, 4),
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
    cp_store_status s = failf(st, CP_STORE_BAD_FILE,
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
  /* The walk from the plan's node to the start, guarded against a hostile
   * or damaged file: each step must go to a smaller id (nodes are stored in
   * creation order, a parent before its children), so a cycle cannot be
   * followed, and it stops after as many steps as the run has nodes. */
  cp_store_status ps = prepare_ids(
      st,
      "WITH RECURSIVE path(id, parent, k) AS ("
      " SELECT n.id, n.parent, 0 FROM nodes n JOIN plans p"
      "  ON p.search_id = n.search_id AND p.node = n.id WHERE p.id = ?1"
      " UNION ALL SELECT n.id, n.parent, path.k + 1 FROM nodes n JOIN path"
      "  ON n.id = path.parent AND path.parent < path.id"
      "  AND n.search_id = (SELECT search_id FROM plans WHERE id = ?1)"
      "  WHERE path.k < (SELECT count(*) FROM nodes WHERE search_id ="
      "   (SELECT search_id FROM plans WHERE id = ?1)))"
      " SELECT id, (SELECT search_id FROM plans WHERE id = ?1), parent FROM path"
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
        return failf(st, CP_STORE_NOMEM, "out of memory");
      }
      *ids = p;
    }
    if (*n == 0)
      first_parent = sqlite3_column_type(q, 2) == SQLITE_NULL
                         ? -1 : sqlite3_column_int64(q, 2);
    (*ids)[(*n)++] = (long)sqlite3_column_int64(q, 0);
    *run_id = sqlite3_column_int64(q, 1);
  }
  sqlite3_finalize(q);
  if (rc != SQLITE_DONE) {
    free(*ids);
    *ids = NULL;
    *n = 0;
    return fail(st, rc, "cannot read the plan");
  }
  if (*n > 0 && (first_parent >= 0 || (*ids)[0] != 0)) {
    long at = (*ids)[0];
    free(*ids);
    *ids = NULL;
    *n = 0;
    return failf(st, CP_STORE_BAD_FILE,
                 "plan %lld: the path does not lead back to the start node 0: "
                 "node %ld's parent %lld is %s (a damaged database)",
                 (long long)plan_id, at, (long long)first_parent,
                 first_parent >= at ? "not an earlier node (a cycle)"
                                    : "missing");
  }
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
  cp_store_status rs = one_row(
      st,
      st->version >= 2
          ? "SELECT text, scene, scene_dir, path, inputs_stored FROM tasks"
            " WHERE id = ?"
          : "SELECT text, scene, scene_dir, path, 0 FROM tasks WHERE id = ?",
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
  row->inputs_stored = sqlite3_column_int(q, 4);
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
