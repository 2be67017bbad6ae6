/* Assembly sequences in the database (planner/store/sequence.h). */
#include "planner/store/sequence.h"

#include "planner/store/store_impl.h"

#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int fail(sqlite3 *db, const char *what, cp_error *err) {
  cp_error_setc(err, CP_ERR_IO, what, "%s: %s", what, sqlite3_errmsg(db));
  return -1;
}

/* The phase rows of one stage (bound: sequence, stage, part, plan_ids,
 * phases): every plan of plan_ids with the phase at its place in phases
 * ('?' where phases has none), its move counting the "retreat" phases
 * before it. */
static const char phases_sql[] =
    "INSERT INTO assembly_phases (plan_id, sequence_id, stage, step, part, move, phase)"
    " SELECT i.value, ?1, ?2, i.key, ?3,"
    " coalesce(sum(f.value = 'retreat') OVER (ORDER BY i.key ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0),"
    " coalesce(f.value, '?') FROM json_each(?4) i LEFT JOIN json_each(?5) f ON f.key = i.key";

int cp_store_sequence(cp_store *store, const cp_store_sequence_row *row,
                      const cp_store_stage_row *stages, int n_stages,
                      int64_t *id, cp_error *err) {
  sqlite3 *db = cp_store_sqlite(store);
  sqlite3_stmt *st = NULL, *ph = NULL;
  if (sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK) return fail(db, "begin", err);
  if (sqlite3_prepare_v2(db,
                         "INSERT INTO assembly_sequences (task, status, parts, part_order,"
                         " final_position_error, final_angle_error, seconds, lcp_solves, plans, message,"
                         " backtracks) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
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
  sqlite3_bind_int(st, 11, row->backtracks);
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
                         -1, &st, NULL) != SQLITE_OK ||
      sqlite3_prepare_v2(db, phases_sql, -1, &ph, NULL) != SQLITE_OK) {
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
    sqlite3_reset(ph);
    sqlite3_bind_int64(ph, 1, seq);
    sqlite3_bind_int(ph, 2, k);
    sqlite3_bind_text(ph, 3, s->part, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(ph, 4, s->plan_ids, -1, SQLITE_TRANSIENT);
    sqlite3_bind_text(ph, 5, s->phases ? s->phases : "[]", -1, SQLITE_TRANSIENT);
    if (sqlite3_step(ph) != SQLITE_DONE) {
      fail(db, "assembly_phases", err);
      goto rollback;
    }
  }
  sqlite3_finalize(st);
  sqlite3_finalize(ph);
  if (sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK) {
    fail(db, "commit", err);
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
    return -1;
  }
  if (id) *id = seq;
  return 0;
rollback:
  sqlite3_finalize(st);
  sqlite3_finalize(ph);
  sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
  return -1;
}

/* Reading a sequence back. */

static char *dup_text(sqlite3_stmt *st, int col) {
  const unsigned char *s = sqlite3_column_text(st, col);
  if (!s) return NULL;
  const size_t n = strlen((const char *)s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static double real_or_nan(sqlite3_stmt *st, int col) {
  return sqlite3_column_type(st, col) == SQLITE_NULL ? NAN : sqlite3_column_double(st, col);
}

void cp_store_sequence_info_free(cp_store_sequence_info *info) {
  for (int k = 0; info->stages && k < info->n_stages; k++) {
    free(info->stages[k].part);
    free(info->stages[k].stability);
    free(info->stages[k].plan_ids);
    for (int i = 0; info->stages[k].phases && i < info->stages[k].n_plans; i++) free(info->stages[k].phases[i]);
    free(info->stages[k].phases);
    free(info->stages[k].moves);
  }
  free(info->stages);
  free(info->task);
  free(info->status);
  memset(info, 0, sizeof *info);
}

/* A stage's plan_ids text: a JSON array of positive integers. */
static int parse_plan_ids(const char *text, cp_store_stage_info *s) {
  json_t *a = text ? json_loads(text, 0, NULL) : NULL;
  int rc = -1;
  if (json_is_array(a)) {
    s->n_plans = (int)json_array_size(a);
    s->plan_ids = malloc(sizeof *s->plan_ids * (size_t)(s->n_plans + 1));
    rc = s->plan_ids ? 0 : -2;
    for (int i = 0; rc == 0 && i < s->n_plans; i++) {
      json_t *v = json_array_get(a, (size_t)i);
      if (!json_is_integer(v) || json_integer_value(v) <= 0) rc = -1;
      else s->plan_ids[i] = json_integer_value(v);
    }
  }
  json_decref(a);
  return rc;
}

/* Stage `stage` of sequence seq: each plan's phase and move, from
 * assembly_phases (table set) or, in a version-2 file, from its plans' task
 * names. A plan without a row gets "?" and the move before it. 0, -1
 * (SQLite failed), -2 (out of memory). */
static int read_phases(sqlite3 *db, int table, int64_t seq, int stage, cp_store_stage_info *s) {
  static const char stored[] = "SELECT step, move, phase FROM assembly_phases WHERE sequence_id = ?1 AND stage = ?2";
  static const char derived[] =
      "SELECT step, move, phase FROM (" CP_STORE_PHASES_DERIVED("AND s.sequence_id = ?1 AND s.stage = ?2") ")";
  const size_t n = (size_t)s->n_plans + 1;
  s->phases = calloc(n, sizeof *s->phases);
  s->moves = calloc(n, sizeof *s->moves);
  if (!s->phases || !s->moves) return -2;
  for (int i = 0; i < s->n_plans; i++) s->moves[i] = -1;
  sqlite3_stmt *q;
  if (sqlite3_prepare_v2(db, table ? stored : derived, -1, &q, NULL) != SQLITE_OK) return -1;
  sqlite3_bind_int64(q, 1, seq);
  sqlite3_bind_int(q, 2, stage);
  int rc;
  while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
    const int i = sqlite3_column_int(q, 0);
    if (i < 0 || i >= s->n_plans || s->phases[i]) continue;
    s->moves[i] = sqlite3_column_int(q, 1);
    if (!(s->phases[i] = dup_text(q, 2)) && sqlite3_column_type(q, 2) != SQLITE_NULL) rc = SQLITE_NOMEM;
    if (rc == SQLITE_NOMEM) break;
  }
  sqlite3_finalize(q);
  if (rc == SQLITE_NOMEM) return -2;
  if (rc != SQLITE_DONE) return -1;
  for (int i = 0; i < s->n_plans; i++) {
    if (s->moves[i] < 0) s->moves[i] = i ? s->moves[i - 1] : 0;
    if (!s->phases[i] && !(s->phases[i] = strdup("?"))) return -2;
  }
  return 0;
}

/* Whether the database has a table called name (*out 1 or 0). 0, or -1
 * when SQLite failed. */
static int table_exists(sqlite3 *db, const char *name, int *out) {
  sqlite3_stmt *st;
  if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1", -1, &st, NULL) !=
      SQLITE_OK)
    return -1;
  sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
  *out = sqlite3_step(st) == SQLITE_ROW;
  sqlite3_finalize(st);
  return 0;
}

int cp_store_sequence_read(cp_store *store, int64_t id, cp_store_sequence_info *out, cp_error *err) {
  sqlite3 *db = cp_store_sqlite(store);
  sqlite3_stmt *st = NULL;
  memset(out, 0, sizeof *out);
  int has = 0, table = 0;
  if (table_exists(db, "assembly_stages", &has)) return fail(db, "assembly_sequences", err);
  if (has && table_exists(db, "assembly_phases", &table)) return fail(db, "assembly_phases", err);
  if (!has) return cp_error_setc(err, CP_ERR_INPUT, "assembly_sequences", "no assembly sequence is stored"), -1;
  const char *q = id > 0 ? "SELECT id, task, status, parts, final_position_error, final_angle_error"
                           " FROM assembly_sequences WHERE id = ?"
                         : "SELECT id, task, status, parts, final_position_error, final_angle_error"
                           " FROM assembly_sequences ORDER BY id DESC LIMIT 1";
  if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK) return fail(db, "assembly_sequences", err);
  if (id > 0) sqlite3_bind_int64(st, 1, id);
  int rc = sqlite3_step(st);
  if (rc != SQLITE_ROW) {
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE) return fail(db, "assembly_sequences", err);
    /* since version 3 every database has the table: is it empty? */
    int any = 0;
    if (id > 0 && sqlite3_prepare_v2(db, "SELECT 1 FROM assembly_sequences LIMIT 1", -1, &st, NULL) == SQLITE_OK) {
      any = sqlite3_step(st) == SQLITE_ROW;
      sqlite3_finalize(st);
    }
    if (any) cp_error_setc(err, CP_ERR_INPUT, "assembly_sequences", "no assembly sequence %lld", (long long)id);
    else cp_error_setc(err, CP_ERR_INPUT, "assembly_sequences", "no assembly sequence is stored");
    return -1;
  }
  out->id = sqlite3_column_int64(st, 0);
  out->task = dup_text(st, 1);
  out->status = dup_text(st, 2);
  out->parts = sqlite3_column_int(st, 3);
  out->final_position_error = real_or_nan(st, 4);
  out->final_angle_error = real_or_nan(st, 5);
  sqlite3_finalize(st);
  st = NULL;
  if (!out->task || !out->status) goto nomem;
  if (sqlite3_prepare_v2(db,
                         "SELECT stage, part, certified, stability, plan_ids, position_error, angle_error"
                         " FROM assembly_stages WHERE sequence_id = ? ORDER BY stage",
                         -1, &st, NULL) != SQLITE_OK) {
    fail(db, "assembly_stages", err);
    goto failed;
  }
  sqlite3_bind_int64(st, 1, out->id);
  int cap = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    if (out->n_stages == cap) {
      cap = cap ? 2 * cap : 8;
      cp_store_stage_info *g = realloc(out->stages, sizeof *g * (size_t)cap);
      if (!g) goto nomem;
      out->stages = g;
    }
    cp_store_stage_info *s = &out->stages[out->n_stages++];
    memset(s, 0, sizeof *s);
    s->part = dup_text(st, 1);
    s->certified = sqlite3_column_int(st, 2);
    s->stability = dup_text(st, 3);
    s->position_error = real_or_nan(st, 5);
    s->angle_error = real_or_nan(st, 6);
    const int prc = parse_plan_ids((const char *)sqlite3_column_text(st, 4), s);
    if (!s->part || prc == -2) goto nomem;
    if (prc) {
      cp_error_setc(err, CP_ERR_INPUT, "assembly_stages",
                    "sequence %lld, stage %d: plan_ids is not a JSON array of plan ids", (long long)out->id,
                    sqlite3_column_int(st, 0));
      goto failed;
    }
    const int frc = read_phases(db, table, out->id, sqlite3_column_int(st, 0), s);
    if (frc == -2) goto nomem;
    if (frc) {
      fail(db, "assembly_phases", err);
      goto failed;
    }
  }
  if (rc != SQLITE_DONE) {
    fail(db, "assembly_stages", err);
    goto failed;
  }
  sqlite3_finalize(st);
  return 0;
nomem:
  cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
failed:
  sqlite3_finalize(st);
  cp_store_sequence_info_free(out);
  return -1;
}
