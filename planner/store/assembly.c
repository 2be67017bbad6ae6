#include "planner/store/assembly.h"

#include "planner/store/store.h"

#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
  sqlite3_stmt *st = NULL;
  char *blocked = NULL;
  int rc = -1;
  /* Through the store: the file checked, stamped, migrated, in WAL. */
  cp_store *store = NULL;
  char msg[600];
  cp_store_status ss = cp_store_open(db_path, 0, &store, msg, sizeof msg);
  if (ss != CP_STORE_OK) {
    /* msg names the file already */
    cp_error_set(err, ss == CP_STORE_BAD_FILE ? "bad_file" : "open", "%s", msg);
    return -1;
  }
  sqlite3 *db = cp_store_sqlite(store);
  if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) {
    sql_fail(db, db_path, "begin", err);
    goto out;
  }
  if (res->has_blocked && !(blocked = cp_assembly_mask_names(scene, res, res->blocked))) {
    cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
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
  cp_store_close(store);
  free(blocked);
  return rc;
}
