#include "planner/assembly_store.h"

#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char schema[] =
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

char *cp_assembly_mask_names(const cp_scene *scene, const cp_assembly_result *res,
                             uint64_t mask) {
  json_t *a = json_array();
  if (!a) return NULL;
  for (int k = 0; k < res->n_parts && k < 64; k++)
    if ((mask >> k) & 1u) json_array_append_new(a, json_string(scene->bodies[res->part_body[k]].name));
  char *s = json_dumps(a, JSON_COMPACT);
  json_decref(a);
  return s;
}

static int sql_fail(sqlite3 *db, const char *path, const char *what, cp_error *err) {
  cp_error_set(err, what, "%s: %s", path, db ? sqlite3_errmsg(db) : "cannot open");
  return -1;
}

int cp_assembly_store(const char *db_path, const char *scene_label,
                      const cp_scene *scene, const cp_assembly_result *res,
                      int directions, int64_t *run_id, cp_error *err) {
  sqlite3 *db = NULL;
  sqlite3_stmt *st = NULL;
  char *blocked = NULL;
  int rc = -1;
  if (sqlite3_open_v2(db_path, &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
    sql_fail(db, db_path, "open", err);
    goto out;
  }
  sqlite3_busy_timeout(db, 5000);
  if (sqlite3_exec(db, "PRAGMA journal_mode=WAL; PRAGMA foreign_keys=ON;", NULL, NULL, NULL) !=
          SQLITE_OK ||
      sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
    sql_fail(db, db_path, "begin", err);
    goto out;
  }
  if (sqlite3_exec(db, schema, NULL, NULL, NULL) != SQLITE_OK) {
    sql_fail(db, db_path, "schema", err);
    goto rollback;
  }
  if (res->has_blocked && !(blocked = cp_assembly_mask_names(scene, res, res->blocked))) {
    cp_error_set(err, "", "out of memory");
    goto rollback;
  }
  if (sqlite3_prepare_v2(db,
                         "INSERT INTO assembly_runs (scene, status, parts, directions, explored,"
                         " stability_checks, seconds, blocked) VALUES (?,?,?,?,?,?,?,?)",
                         -1, &st, NULL) != SQLITE_OK) {
    sql_fail(db, db_path, "assembly_runs", err);
    goto rollback;
  }
  sqlite3_bind_text(st, 1, scene_label, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 2, cp_assembly_status_name(res->status), -1, SQLITE_STATIC);
  sqlite3_bind_int(st, 3, res->n_parts);
  sqlite3_bind_int(st, 4, directions);
  sqlite3_bind_int(st, 5, res->explored);
  sqlite3_bind_int(st, 6, res->stability_checks);
  sqlite3_bind_double(st, 7, res->seconds);
  if (blocked) sqlite3_bind_text(st, 8, blocked, -1, SQLITE_TRANSIENT);
  else sqlite3_bind_null(st, 8);
  if (sqlite3_step(st) != SQLITE_DONE) {
    sql_fail(db, db_path, "assembly_runs", err);
    goto rollback;
  }
  sqlite3_finalize(st);
  st = NULL;
  const sqlite3_int64 id = sqlite3_last_insert_rowid(db);
  if (sqlite3_prepare_v2(db,
                         "INSERT INTO assembly_subassemblies (run_id, mask, parts, n_parts,"
                         " stable, feasible, dead_end) VALUES (?,?,?,?,?,?,?)",
                         -1, &st, NULL) != SQLITE_OK) {
    sql_fail(db, db_path, "assembly_subassemblies", err);
    goto rollback;
  }
  for (int i = 0; i < res->n_nodes; i++) {
    const cp_assembly_node *n = &res->nodes[i];
    char hex[24];
    snprintf(hex, sizeof hex, "%llx", (unsigned long long)n->mask);
    char *names = cp_assembly_mask_names(scene, res, n->mask);
    int cnt = 0;
    for (uint64_t m = n->mask; m; m &= m - 1) cnt++;
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_text(st, 2, hex, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(st, 3, names ? names : "[]", -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 4, cnt);
    if (n->stable >= 0) sqlite3_bind_int(st, 5, n->stable);
    else sqlite3_bind_null(st, 5);
    sqlite3_bind_int(st, 6, n->feasible);
    sqlite3_bind_int(st, 7, n->dead_end);
    free(names);
    if (!names || sqlite3_step(st) != SQLITE_DONE) {
      sql_fail(db, db_path, "assembly_subassemblies", err);
      goto rollback;
    }
  }
  sqlite3_finalize(st);
  st = NULL;
  if (sqlite3_prepare_v2(db,
                         "INSERT INTO assembly_steps (run_id, step, part, dx, dy, dz, stability)"
                         " VALUES (?,?,?,?,?,?,?)",
                         -1, &st, NULL) != SQLITE_OK) {
    sql_fail(db, db_path, "assembly_steps", err);
    goto rollback;
  }
  for (int k = 0; k < res->n_steps; k++) {
    const cp_assembly_step *s = &res->steps[k];
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, id);
    sqlite3_bind_int(st, 2, k);
    sqlite3_bind_text(st, 3, scene->bodies[s->body].name, -1, SQLITE_TRANSIENT);
    for (int c = 0; c < 3; c++) sqlite3_bind_double(st, 4 + c, s->direction[c]);
    sqlite3_bind_text(st, 7, cp_stability_kind_name(s->stability), -1, SQLITE_STATIC);
    if (sqlite3_step(st) != SQLITE_DONE) {
      sql_fail(db, db_path, "assembly_steps", err);
      goto rollback;
    }
  }
  sqlite3_finalize(st);
  st = NULL;
  if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
    sql_fail(db, db_path, "commit", err);
    goto rollback;
  }
  if (run_id) *run_id = (int64_t)id;
  rc = 0;
  goto out;
rollback:
  sqlite3_finalize(st);
  st = NULL;
  sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
out:
  sqlite3_finalize(st);
  sqlite3_close(db);
  free(blocked);
  return rc;
}
