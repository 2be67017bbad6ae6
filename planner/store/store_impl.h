/* planner/store/store_impl.h: what the store's files share (not installed).
 * The store is split by concern: store.c (the connection: open, close, WAL,
 * the statements and the SQL helpers below), schema.c (the versioned schema,
 * its migration and the check of a file before use), provenance.c (tasks and
 * their input files), write.c (runs, nodes, plans, benchmark rows) and
 * read.c (everything read back). Nothing here is API. */
#ifndef CP_PLANNER_STORE_IMPL_H
#define CP_PLANNER_STORE_IMPL_H

#include <sqlite3.h>
#include <stddef.h>

#include "planner/store/store.h"

/* The statements prepared once per connection (store.c) and reused by the
 * writer (write.c). */
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
  int busy_ms;         /* lock wait (ms), BUSY_MS unless set */
};

/* How long a process waits by default for another one's lock (ms):
 * cp_store_set_busy_timeout changes it per connection. A minute, because a
 * writer's transactions are short (one batch of nodes) and a wait only
 * grows that long on a machine loaded far beyond its cores. */
enum { BUSY_MS = 60000 };

/* Maps an SQLite result code to a store status and keeps the message
 * ("path: what: SQLite's words (hint)") on the handle. */
cp_store_status cp_store_fail(cp_store *st, int rc, const char *what);
/* A failure of status s with a formatted message after the path. */
cp_store_status cp_store_failf(cp_store *st, cp_store_status s, const char *fmt,
                            ...) __attribute__((format(printf, 3, 4)));
/* A query by id, and the one row of a lookup by id (store.c says more). */
cp_store_status cp_store_prepare_ids(cp_store *st, const char *sql,
                                  const int64_t *ids, int n, const char *what,
                                  sqlite3_stmt **q);
cp_store_status cp_store_one_row(cp_store *st, const char *sql,
                              const int64_t *ids, int n, const char *what,
                              sqlite3_stmt **q);
/* sqlite3_exec without callbacks: the SQLite code. */
int cp_store_exec(cp_store *st, const char *sql);
/* A one-row statement with bindings given as a format (store.c). */
int cp_store_run_sql(cp_store *st, const char *sql, const char *fmt, ...);

/* schema.c: a file opened for writing gets the current schema (created,
 * migrated from version 1, or checked), in one transaction; a file opened
 * read-only is checked to be complan's planner database. */
cp_store_status cp_store_schema_write(cp_store *st);
cp_store_status cp_store_schema_read(cp_store *st);

#endif
