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
  S_PENDING,
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
  int version;           /* the file's schema version (1 to 3 read-only, or 4) */
  char *node_message;  /* cp_store_load_node's message */
  int busy_ms;         /* lock wait (ms), BUSY_MS unless set */
  unsigned char *pending; /* a pipelined search's pending batch (write.c) */
  size_t pending_cap;
  void (*progress)(void *ctx); /* cp_store_set_progress's (NULL: none) */
  void *progress_ctx;
  struct cp_store_ckpt *ckpt; /* the background checkpoints (checkpoint.c) */
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

/* The phases of stored sequence stages as a version-2 file knows them
 * (schema.c's migration to version 3, and sequence.c reading a version-2
 * file opened read-only): one row per plan of a stage's plan_ids, (plan_id,
 * sequence_id, stage, step, part, move, phase), the phase read from the
 * plan's task name "PART PHASE" ('?' when the task is missing or named
 * otherwise), the move counting the stage's "retreat" phases before it.
 * WHERE is more conditions on the stage row s (starting with AND). */
#define CP_STORE_PHASES_DERIVED(WHERE)                                       \
  "WITH d AS (SELECT i.value AS plan_id, s.sequence_id AS sequence_id,"     \
  " s.stage AS stage, i.key AS step, s.part AS part,"                       \
  " coalesce(CASE WHEN json_valid(t.text) THEN CASE WHEN"                  \
  " substr(json_extract(t.text, '$.name'), 1, length(s.part) + 1) ="       \
  " s.part || ' ' THEN substr(json_extract(t.text, '$.name'),"              \
  " length(s.part) + 2) END END, '?') AS phase"                             \
  " FROM assembly_stages s, json_each(coalesce(CASE WHEN"                   \
  " json_valid(s.plan_ids) THEN CASE WHEN json_type(s.plan_ids) = 'array'"  \
  " THEN s.plan_ids END END, '[]')) i"                                      \
  " LEFT JOIN plans p ON p.id = i.value"                                    \
  " LEFT JOIN searches r ON r.id = p.search_id"                             \
  " LEFT JOIN tasks t ON t.id = r.task_id WHERE 1 " WHERE ")"               \
  " SELECT plan_id, sequence_id, stage, step, part,"                        \
  " coalesce(sum(phase = 'retreat') OVER (PARTITION BY sequence_id, stage"  \
  " ORDER BY step ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0)"    \
  " AS move, phase FROM d"

/* schema.c: a file opened for writing gets the current schema (created,
 * migrated from version 1, or checked), in one transaction; a file opened
 * read-only is checked to be complan's planner database. */
cp_store_status cp_store_schema_write(cp_store *st);
cp_store_status cp_store_schema_read(cp_store *st);

/* checkpoint.c: stops and joins the checkpoint thread, if any, and
 * removes the WAL hook (cp_store_close, before the writer's connection
 * closes). */
void cp_store_checkpoints_end(cp_store *st);

#endif
