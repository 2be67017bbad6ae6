/* The store's connection: open (file checks, schema, WAL, statements),
 * close, and the SQL helpers the other store files share (store_impl.h). */
#include "planner/store/store.h"

#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "models/clock.h"
#include "planner/store/store_impl.h"

/* The statements every connection prepares once (write.c runs them). */
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
    "INSERT OR REPLACE INTO pending_batches (search_id, iterations,"
    " embedding, data, rng) VALUES (?1, ?2, ?3, ?4, ?5)",
    "BEGIN IMMEDIATE",
    "COMMIT"};

/* Maps an SQLite result code to a store status, with the message. */
cp_store_status cp_store_fail(cp_store *st, int rc, const char *what) {
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

cp_store_status cp_store_failf(cp_store *st, cp_store_status s, const char *fmt,
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
cp_store_status cp_store_prepare_ids(cp_store *st, const char *sql,
                                     const int64_t *ids, int n,
                                     const char *what, sqlite3_stmt **q) {
  int rc = sqlite3_prepare_v2(st->db, sql, -1, q, NULL);
  if (rc) return cp_store_fail(st, rc, what);
  for (int i = 0; i < n; i++) sqlite3_bind_int64(*q, i + 1, ids[i]);
  return CP_STORE_OK;
}

/* The one row of a lookup by id (prepare_ids, then a step). Returns
 * CP_STORE_OK with *q on the row (the caller reads and finalizes it);
 * CP_STORE_NOT_FOUND without a row and without a message (the caller says
 * what is missing); or the SQLite failure as prepare_ids. *q is finalized
 * unless CP_STORE_OK. */
cp_store_status cp_store_one_row(cp_store *st, const char *sql,
                                 const int64_t *ids, int n, const char *what,
                                 sqlite3_stmt **q) {
  cp_store_status s = cp_store_prepare_ids(st, sql, ids, n, what, q);
  if (s) return s;
  int rc = sqlite3_step(*q);
  if (rc == SQLITE_ROW) return CP_STORE_OK;
  sqlite3_finalize(*q);
  *q = NULL;
  return rc == SQLITE_DONE ? CP_STORE_NOT_FOUND : cp_store_fail(st, rc, what);
}

int cp_store_exec(cp_store *st, const char *sql) {
  return sqlite3_exec(st->db, sql, NULL, NULL, NULL);
}

/* PRAGMA journal_mode = WAL needs every other connection to let go of the
 * file for a moment; SQLite does not wait for that under the busy timeout,
 * so the switch is retried here for as long. */
static cp_store_status switch_to_wal(cp_store *st) {
  /* An in-memory database (":memory:", "") has no file to share and keeps
   * its journal in memory: there is no WAL to switch to. */
  const char *file = sqlite3_db_filename(st->db, "main");
  if (!file || !file[0]) return CP_STORE_OK;
  double t0 = cp_clock_now();
  for (;;) {
    sqlite3_stmt *q;
    int rc = sqlite3_prepare_v2(st->db, "PRAGMA journal_mode = WAL", -1, &q,
                                NULL);
    if (rc) return cp_store_fail(st, rc, "cannot switch to WAL");
    rc = sqlite3_step(q);
    int wal = rc == SQLITE_ROW &&
              !sqlite3_stricmp((const char *)sqlite3_column_text(q, 0), "wal");
    sqlite3_finalize(q);
    if (wal) return CP_STORE_OK;
    int base = rc & 0xff;
    int retry = rc == SQLITE_ROW || base == SQLITE_BUSY || base == SQLITE_LOCKED;
    if (!retry) return cp_store_fail(st, rc, "cannot switch to WAL");
    if (cp_clock_now() - t0 > st->busy_ms / 1000.0)
      return rc == SQLITE_ROW
                 ? cp_store_failf(
                       st, CP_STORE_BUSY,
                       "cannot switch to WAL: another process keeps the "
                       "database open in another journal mode")
                 : cp_store_fail(st, rc, "cannot switch to WAL");
    sqlite3_sleep(5);
  }
}

static cp_store_status setup(cp_store *st, int read_only) {
  int rc;
  st->busy_ms = BUSY_MS;
  sqlite3_busy_timeout(st->db, st->busy_ms);
  cp_store_status s;
  if (read_only) return cp_store_schema_read(st);
  if ((s = cp_store_schema_write(st))) return s;
  if ((s = switch_to_wal(st))) return s;
  if ((rc = cp_store_exec(st, "PRAGMA synchronous = NORMAL")))
    return cp_store_fail(st, rc, "cannot set synchronous");
  if ((rc = cp_store_exec(st, "PRAGMA foreign_keys = ON")))
    return cp_store_fail(st, rc, "cannot enable foreign keys");
  if ((s = cp_store_set_checkpoints(st, CP_STORE_CHECKPOINT_PAGES))) return s;
  for (int k = 0; k < S_COUNT; ++k)
    if ((rc =
             sqlite3_prepare_v3(st->db, stmt_sql[k], -1,
                                SQLITE_PREPARE_PERSISTENT, &st->stmt[k], NULL)))
      return cp_store_fail(st, rc, "cannot prepare a statement");
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
  return cp_store_failf(st, CP_STORE_BAD_FILE,
                        "it is %s; a database is a regular file", what);
}

cp_store_status cp_store_open(const char *path, int read_only, cp_store **out,
                              char *msg, size_t size) {
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
    s = rc ? cp_store_fail(st, rc, "cannot open") : setup(st, read_only);
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
  /* The helper's connection first: the writer's, closing last, then
   * checkpoints the whole WAL into the file and removes it. */
  if (st->db) cp_store_checkpoints_end(st);
  for (int k = 0; k < S_COUNT; ++k) sqlite3_finalize(st->stmt[k]);
  sqlite3_close(st->db);
  free(st->scratch);
  free(st->node_message);
  free(st->pending);
  free(st);
}

const char *cp_store_message(const cp_store *st) { return st->message; }
double cp_store_seconds(const cp_store *st) { return st->seconds; }

void cp_store_set_busy_timeout(cp_store *st, double seconds) {
  if (!(seconds >= 0)) seconds = 0;
  st->busy_ms = seconds > 86400 ? 86400000 : (int)(seconds * 1000 + 0.5);
  sqlite3_busy_timeout(st->db, st->busy_ms);
}

static int progress_call(void *ctx) {
  cp_store *st = ctx;
  st->progress(st->progress_ctx);
  return 0; /* never interrupts the statement */
}

void cp_store_set_progress(cp_store *st, int every, void (*fn)(void *ctx),
                           void *ctx) {
  st->progress = fn;
  st->progress_ctx = ctx;
  if (fn && every > 0)
    sqlite3_progress_handler(st->db, every, progress_call, st);
  else
    sqlite3_progress_handler(st->db, 0, NULL, NULL);
}

/* Runs a one-row statement with text/int bindings given as a format: 't'
 * text, 'i' int64, 'd' double, 'b' blob (pointer and size_t), 'n' null.
 * Returns the SQLite code
 * (SQLITE_DONE / SQLITE_ROW are mapped to SQLITE_OK). */
int cp_store_run_sql(cp_store *st, const char *sql, const char *fmt, ...) {
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
