/* A search run copied in from another store file (cp_store_import_run,
 * store.h): its searches row under a new id and the given task, then its
 * nodes, witnesses, pending batch (a pipelined run) and plans under that
 * id, in one transaction. The
 * columns are this store's (PRAGMA table_info), so a column added to the
 * schema is copied with no change here; the other file must have the same
 * schema version. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/store/store_impl.h"

enum { IMPORT_SQL = 4096 };

/* Copies the rows of `table` whose `key` column is ?1 from cp_import into
 * main: `search_id` becomes ?2, `task_id` ?3, and the column `skip` (may
 * be NULL) is left to SQLite (a new row id). */
static cp_store_status copy_rows(cp_store *st, const char *table,
                                 const char *key, const char *skip,
                                 const int64_t ids[3]) {
  char sql[IMPORT_SQL + 256], cols[IMPORT_SQL / 2], vals[IMPORT_SQL / 2],
      what[64];
  snprintf(sql, sizeof sql, "PRAGMA main.table_info(%s)", table);
  snprintf(what, sizeof what, "cannot copy the run's %s", table);
  sqlite3_stmt *q;
  int rc = sqlite3_prepare_v2(st->db, sql, -1, &q, NULL);
  if (rc) return cp_store_fail(st, rc, what);
  size_t nc = 0, nv = 0;
  cols[0] = vals[0] = 0;
  while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
    const char *c = (const char *)sqlite3_column_text(q, 1);
    if (!c || (skip && !strcmp(c, skip))) continue;
    const char *v = !strcmp(c, "search_id") ? "?2"
                    : !strcmp(c, "task_id") ? "?3"
                                            : c;
    int a = snprintf(cols + nc, sizeof cols - nc, "%s\"%s\"", nc ? "," : "", c);
    int b = snprintf(vals + nv, sizeof vals - nv, "%s%s%s%s", nv ? "," : "",
                     v[0] == '?' ? "" : "\"", v, v[0] == '?' ? "" : "\"");
    if (a < 0 || b < 0 || (size_t)a >= sizeof cols - nc ||
        (size_t)b >= sizeof vals - nv) {
      sqlite3_finalize(q);
      return cp_store_failf(st, CP_STORE_FAILED, "%s: too many columns", what);
    }
    nc += (size_t)a;
    nv += (size_t)b;
  }
  sqlite3_finalize(q);
  if (rc != SQLITE_DONE) return cp_store_fail(st, rc, what);
  int len = snprintf(sql, sizeof sql,
                     "INSERT INTO main.%s (%s) SELECT %s FROM cp_import.%s"
                     " WHERE %s = ?1 ORDER BY rowid",
                     table, cols, vals, table, key);
  if (len < 0 || (size_t)len >= sizeof sql)
    return cp_store_failf(st, CP_STORE_FAILED, "%s: too many columns", what);
  rc = sqlite3_prepare_v2(st->db, sql, -1, &q, NULL);
  if (rc) return cp_store_fail(st, rc, what);
  int params = sqlite3_bind_parameter_count(q);
  for (int k = 0; k < params && k < 3; ++k)
    sqlite3_bind_int64(q, k + 1, ids[k]);
  rc = sqlite3_step(q);
  sqlite3_finalize(q);
  return rc == SQLITE_DONE ? CP_STORE_OK : cp_store_fail(st, rc, what);
}

static cp_store_status import_version(cp_store *st, const char *path) {
  sqlite3_stmt *q;
  int rc = sqlite3_prepare_v2(st->db, "PRAGMA cp_import.user_version", -1, &q,
                              NULL);
  if (rc) return cp_store_fail(st, rc, "cannot read the imported file");
  int v = sqlite3_step(q) == SQLITE_ROW ? sqlite3_column_int(q, 0) : -1;
  sqlite3_finalize(q);
  if (v != st->version)
    return cp_store_failf(st, CP_STORE_BAD_FILE,
                          "%s has schema version %d, this store %d", path, v,
                          st->version);
  return CP_STORE_OK;
}

cp_store_status cp_store_export(cp_store *st, void **bytes, size_t *len) {
  sqlite3_int64 n = 0;
  unsigned char *p = sqlite3_serialize(st->db, "main", &n, 0);
  *bytes = NULL;
  *len = 0;
  if (!p) return cp_store_failf(st, CP_STORE_NOMEM, "cannot export the store");
  *bytes = malloc((size_t)n ? (size_t)n : 1);
  if (*bytes) memcpy(*bytes, p, (size_t)n);
  sqlite3_free(p);
  if (!*bytes) return cp_store_failf(st, CP_STORE_NOMEM, "out of memory");
  *len = (size_t)n;
  return CP_STORE_OK;
}

cp_store_status cp_store_export_runs(cp_store *st, void **bytes,
                                     size_t *len) {
  *bytes = NULL;
  *len = 0;
  /* Every table import does not read goes (each costs a page or more even
   * when empty: 28 pages of 4 KiB made ~115 kB of every run's store); the
   * tasks rows stay for the runs' foreign keys, without their texts. The
   * store is closed after this, so its foreign keys are off for the
   * drops (a table's drop deletes its rows, checked against tables gone
   * before it). */
  char drop[2048] = "";
  sqlite3_stmt *q;
  int rc = sqlite3_prepare_v2(
      st->db, "SELECT name FROM sqlite_schema WHERE type = 'table' AND name"
      " NOT IN ('tasks', 'searches', 'nodes', 'witnesses', 'pending_batches',"
      " 'plans') AND name"
      " NOT LIKE 'sqlite_%' ORDER BY name", -1, &q, NULL);
  size_t at = 0;
  while (!rc && sqlite3_step(q) == SQLITE_ROW) {
    int n = snprintf(drop + at, sizeof drop - at, "%s%s", at ? " " : "",
                     (const char *)sqlite3_column_text(q, 0));
    if (n < 0 || (size_t)n >= sizeof drop - at) break;
    at += (size_t)n;
  }
  if (!rc) rc = sqlite3_finalize(q);
  const char *const empty[] = {"PRAGMA foreign_keys = OFF",
                               "DELETE FROM task_files",
                               "UPDATE tasks SET text = '', scene = ''"};
  for (size_t k = 0; !rc && k < sizeof empty / sizeof *empty; ++k)
    rc = cp_store_run_sql(st, empty[k], "");
  for (char *name = strtok(drop, " "); !rc && name; name = strtok(NULL, " ")) {
    char sql[160];
    snprintf(sql, sizeof sql, "DROP TABLE \"%s\"", name);
    rc = cp_store_run_sql(st, sql, "");
  }
  if (!rc) rc = cp_store_run_sql(st, "PRAGMA page_size = 1024", "");
  if (!rc) rc = cp_store_run_sql(st, "VACUUM", "");
  if (rc) return cp_store_fail(st, rc, "cannot shrink the store to its runs");
  return cp_store_export(st, bytes, len);
}

cp_store_status cp_store_import_run(cp_store *st, const void *bytes,
                                    size_t len, int64_t from, int64_t task_id,
                                    int64_t *run_id, int64_t *plan_id) {
  const char *path = "the imported store";
  *run_id = *plan_id = -1;
  int rc = cp_store_run_sql(st, "ATTACH DATABASE ':memory:' AS cp_import", "");
  if (rc) return cp_store_fail(st, rc, "cannot attach the run to import");
  /* Read-only over the caller's bytes (no copy; they outlive the DETACH). */
  rc = sqlite3_deserialize(st->db, "cp_import", (unsigned char *)bytes,
                           (sqlite3_int64)len, (sqlite3_int64)len,
                           SQLITE_DESERIALIZE_READONLY);
  cp_store_status s = CP_STORE_OK;
  if (rc) s = cp_store_fail(st, rc, "cannot read the run to import");
  if (!s) s = import_version(st, path);
  /* Deferred: IMMEDIATE would want a write lock on the read-only copy. */
  if (!s && (rc = cp_store_run_sql(st, "BEGIN", "")))
    s = cp_store_fail(st, rc, "cannot start the import");
  int64_t ids[3] = {from, -1, task_id};
  if (!s) s = copy_rows(st, "searches", "id", "id", ids);
  if (!s) {
    ids[1] = sqlite3_last_insert_rowid(st->db);
    s = copy_rows(st, "nodes", "search_id", NULL, ids);
  }
  if (!s) s = copy_rows(st, "witnesses", "search_id", NULL, ids);
  /* A pipelined run's batch drawn and not merged: without it the run
   * cannot be resumed (a run that ended at its node limit continues from
   * it with a larger limit). */
  if (!s) s = copy_rows(st, "pending_batches", "search_id", NULL, ids);
  if (!s) s = copy_rows(st, "plans", "search_id", "id", ids);
  if (!s) {
    sqlite3_stmt *q;
    s = cp_store_one_row(st, "SELECT max(id) FROM plans WHERE search_id = ?",
                         &ids[1], 1, "cannot read the imported plan", &q);
    if (!s) {
      if (sqlite3_column_type(q, 0) != SQLITE_NULL)
        *plan_id = sqlite3_column_int64(q, 0);
      sqlite3_finalize(q);
    }
  }
  if (!s && (rc = cp_store_run_sql(st, "COMMIT", "")))
    s = cp_store_fail(st, rc, "cannot commit the import");
  if (s) cp_store_run_sql(st, "ROLLBACK", "");
  else *run_id = ids[1];
  cp_store_run_sql(st, "DETACH DATABASE cp_import", "");
  return s;
}
