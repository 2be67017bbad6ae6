/* Assembly sequences in the database (planner/store/sequence.h). */
#include "planner/store/sequence.h"

#include <sqlite3.h>
#include <stdio.h>

static const char sequence_sql[] =
    "CREATE TABLE IF NOT EXISTS assembly_sequences ("
    " id INTEGER PRIMARY KEY,"
    " created TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),"
    " task TEXT NOT NULL,"
    " status TEXT NOT NULL,"
    " parts INTEGER NOT NULL,"
    " part_order TEXT NOT NULL,"
    " final_position_error REAL,"
    " final_angle_error REAL,"
    " seconds REAL NOT NULL,"
    " lcp_solves INTEGER NOT NULL,"
    " plans INTEGER NOT NULL,"
    " message TEXT);"
    "CREATE TABLE IF NOT EXISTS assembly_stages ("
    " sequence_id INTEGER NOT NULL REFERENCES assembly_sequences(id) ON DELETE CASCADE,"
    " stage INTEGER NOT NULL,"
    " part TEXT NOT NULL,"
    " certified INTEGER NOT NULL,"
    " grasp TEXT,"
    " regrasps INTEGER NOT NULL,"
    " attempts INTEGER NOT NULL,"
    " plan_ids TEXT NOT NULL,"
    " stability TEXT,"
    " position_error REAL,"
    " angle_error REAL,"
    " PRIMARY KEY (sequence_id, stage));";

static int fail(sqlite3 *db, const char *what, cp_error *err) {
  cp_error_setc(err, CP_ERR_IO, what, "%s: %s", what, sqlite3_errmsg(db));
  return -1;
}

int cp_store_sequence(cp_store *store, const cp_store_sequence_row *row,
                      const cp_store_stage_row *stages, int n_stages,
                      int64_t *id, cp_error *err) {
  sqlite3 *db = cp_store_sqlite(store);
  sqlite3_stmt *st = NULL;
  if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) return fail(db, "begin", err);
  if (sqlite3_exec(db, sequence_sql, NULL, NULL, NULL) != SQLITE_OK) {
    fail(db, "assembly_sequences", err);
    goto rollback;
  }
  if (sqlite3_prepare_v2(db,
                         "INSERT INTO assembly_sequences (task, status, parts, part_order,"
                         " final_position_error, final_angle_error, seconds, lcp_solves, plans, message)"
                         " VALUES (?,?,?,?,?,?,?,?,?,?)",
                         -1, &st, NULL) != SQLITE_OK) {
    fail(db, "assembly_sequences", err);
    goto rollback;
  }
  sqlite3_bind_text(st, 1, row->task, -1, SQLITE_TRANSIENT);
  sqlite3_bind_text(st, 2, row->status, -1, SQLITE_TRANSIENT);
  sqlite3_bind_int(st, 3, row->parts);
  sqlite3_bind_text(st, 4, row->order, -1, SQLITE_TRANSIENT);
  sqlite3_bind_double(st, 5, row->final_position_error);
  sqlite3_bind_double(st, 6, row->final_angle_error);
  sqlite3_bind_double(st, 7, row->seconds);
  sqlite3_bind_int64(st, 8, row->lcp_solves);
  sqlite3_bind_int64(st, 9, row->plans);
  if (row->message) sqlite3_bind_text(st, 10, row->message, -1, SQLITE_TRANSIENT);
  else sqlite3_bind_null(st, 10);
  if (sqlite3_step(st) != SQLITE_DONE) {
    fail(db, "assembly_sequences", err);
    goto rollback;
  }
  sqlite3_finalize(st);
  st = NULL;
  const int64_t seq = sqlite3_last_insert_rowid(db);
  if (sqlite3_prepare_v2(db,
                         "INSERT INTO assembly_stages (sequence_id, stage, part, certified, grasp, regrasps,"
                         " attempts, plan_ids, stability, position_error, angle_error)"
                         " VALUES (?,?,?,?,?,?,?,?,?,?,?)",
                         -1, &st, NULL) != SQLITE_OK) {
    fail(db, "assembly_stages", err);
    goto rollback;
  }
  for (int k = 0; k < n_stages; k++) {
    const cp_store_stage_row *s = &stages[k];
    sqlite3_reset(st);
    sqlite3_bind_int64(st, 1, seq);
    sqlite3_bind_int(st, 2, k);
    sqlite3_bind_text(st, 3, s->part, -1, SQLITE_TRANSIENT);
    sqlite3_bind_int(st, 4, s->certified);
    if (s->grasp) sqlite3_bind_text(st, 5, s->grasp, -1, SQLITE_TRANSIENT);
    else sqlite3_bind_null(st, 5);
    sqlite3_bind_int(st, 6, s->regrasps);
    sqlite3_bind_int(st, 7, s->attempts);
    sqlite3_bind_text(st, 8, s->plan_ids, -1, SQLITE_TRANSIENT);
    if (s->stability) sqlite3_bind_text(st, 9, s->stability, -1, SQLITE_TRANSIENT);
    else sqlite3_bind_null(st, 9);
    if (s->certified) {
      sqlite3_bind_double(st, 10, s->position_error);
      sqlite3_bind_double(st, 11, s->angle_error);
    } else {
      sqlite3_bind_null(st, 10);
      sqlite3_bind_null(st, 11);
    }
    if (sqlite3_step(st) != SQLITE_DONE) {
      fail(db, "assembly_stages", err);
      goto rollback;
    }
  }
  sqlite3_finalize(st);
  if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
    fail(db, "commit", err);
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
  }
  if (id) *id = seq;
  return 0;
rollback:
  sqlite3_finalize(st);
  sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
  return -1;
}
