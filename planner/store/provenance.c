/* Tasks and their provenance: the task row, its input files stored once
 * per content (blobs), and the check that a resumed run reads the same. */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/store/store_impl.h"

/* The task row with this key: its id, or CP_STORE_NOT_FOUND. */
static cp_store_status task_by_key(cp_store *st, const char *key,
                                   int64_t *task_id) {
  sqlite3_stmt *q;
  int rc = sqlite3_prepare_v2(st->db, "SELECT id FROM tasks WHERE hash = ?",
                              -1, &q, NULL);
  if (rc) return cp_store_fail(st, rc, "cannot read the task");
  sqlite3_bind_text(q, 1, key, -1, SQLITE_TRANSIENT);
  rc = sqlite3_step(q);
  if (rc == SQLITE_ROW) *task_id = sqlite3_column_int64(q, 0);
  sqlite3_finalize(q);
  return rc == SQLITE_ROW    ? CP_STORE_OK
         : rc == SQLITE_DONE ? CP_STORE_NOT_FOUND
                             : cp_store_fail(st, rc, "cannot read the task");
}

cp_store_status cp_store_task(cp_store *st, const cp_task *task,
                              const char *path, int64_t *task_id) {
  char key[CP_TASK_KEY_SIZE];
  cp_task_hash(task, key);
  if (!key[0]) return cp_store_failf(st, CP_STORE_NOMEM, "out of memory");
  cp_store_status s = task_by_key(st, key, task_id);
  if (s != CP_STORE_NOT_FOUND) return s;
  /* New inputs: the row, each file's bytes (once per content) and the
   * list of files, in one transaction. */
  int rc;
  if ((rc = cp_store_exec(st, "BEGIN IMMEDIATE")))
    return cp_store_fail(st, rc, "cannot store the task");
  const char *what = "cannot store the task";
  rc = cp_store_run_sql(
      st,
      "INSERT OR IGNORE INTO tasks (hash, text, scene, scene_dir,"
      " path, inputs_stored) VALUES (?, ?, ?, ?, ?, 1)",
      "ttttt", key, task->text, task->scene_text,
      task->scene_base ? task->scene_base : "", path ? path : "");
  int fresh = !rc && sqlite3_changes(st->db) == 1;
  int64_t id = sqlite3_last_insert_rowid(st->db);
  what = "cannot store the task's files";
  for (int i = 0; !rc && fresh && i < task->n_files; ++i) {
    const cp_task_file *f = &task->files[i];
    rc = cp_store_run_sql(st,
                          "INSERT OR IGNORE INTO blobs (sha256, size, data)"
                          " VALUES (?, ?, ?)",
                          "tib", f->sha256, (int64_t)f->size,
                          (const void *)f->data, f->size);
    if (!rc)
      rc = cp_store_run_sql(
          st,
          "INSERT INTO task_files (task_id, seq, kind, path, sha256)"
          " VALUES (?, ?, ?, ?, ?)",
          "iittt", id, (int64_t)i, f->kind, f->path, f->sha256);
  }
  if (!rc) rc = cp_store_exec(st, "COMMIT");
  if (rc) {
    s = cp_store_fail(st, rc, what);
    if (!sqlite3_get_autocommit(st->db)) cp_store_exec(st, "ROLLBACK");
    return s;
  }
  return task_by_key(st, key, task_id) == CP_STORE_OK
             ? CP_STORE_OK
             : cp_store_failf(st, CP_STORE_FAILED, "the stored task vanished");
}

cp_store_status cp_store_task_files(cp_store *st, int64_t task_id,
                                    cp_store_file **files, int *n) {
  *files = NULL;
  *n = 0;
  if (st->version < 2) return CP_STORE_OK; /* read-only version 1 */
  sqlite3_stmt *q;
  cp_store_status s = cp_store_prepare_ids(
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
      s = cp_store_failf(
          st, CP_STORE_BAD_FILE,
          "task %lld: the stored file %.200s is missing or does not "
          "match its SHA-256 (damaged database)",
          (long long)task_id, path ? path : "(no path)");
      break;
    }
    if (*n == cap) {
      cap = cap ? 2 * cap : 8;
      cp_store_file *p = realloc(*files, (size_t)cap * sizeof *p);
      if (!p) {
        s = cp_store_failf(st, CP_STORE_NOMEM, "out of memory");
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
      s = cp_store_failf(st, CP_STORE_NOMEM, "out of memory");
      break;
    }
    if (size) memcpy(f->data, data, size);
    f->data[size] = '\0';
    f->size = size;
    ++*n;
  }
  if (!s && rc != SQLITE_DONE)
    s = cp_store_fail(st, rc, "cannot read the task's files");
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
  if (rc) return cp_store_fail(st, rc, "cannot look for a run to resume");
  sqlite3_bind_int64(q, 1, task_id);
  sqlite3_bind_text(q, 2, task->text ? task->text : "", -1, SQLITE_STATIC);
  sqlite3_bind_text(q, 3, path ? path : "", -1, SQLITE_STATIC);
  rc = sqlite3_step(q);
  if (rc != SQLITE_ROW) {
    sqlite3_finalize(q);
    return rc == SQLITE_DONE
               ? CP_STORE_OK
               : cp_store_fail(st, rc, "cannot look for a run to resume");
  }
  int64_t run = sqlite3_column_int64(q, 0), old = sqlite3_column_int64(q, 1);
  const char *t = (const char *)sqlite3_column_text(q, 2);
  char *text = strdup(t ? t : "");
  int stored = sqlite3_column_int(q, 3);
  int scene_same =
      task->scene_text &&
      !strcmp((const char *)sqlite3_column_text(q, 4), task->scene_text);
  sqlite3_finalize(q);
  if (!text) return cp_store_failf(st, CP_STORE_NOMEM, "out of memory");
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
  return cp_store_failf(
      st, CP_STORE_CHANGED,
      "--resume: run %lld was planned from other inputs: %s; "
      "resuming would mix two problems in one run (plan without "
      "--resume for a new run)",
      (long long)run, what);
}

cp_store_status cp_store_load_task(cp_store *st, int64_t task_id,
                                   cp_store_task_row *row) {
  memset(row, 0, sizeof *row);
  sqlite3_stmt *q;
  cp_store_status rs = cp_store_one_row(
      st,
      st->version >= 2
          ? "SELECT text, scene, scene_dir, path, inputs_stored FROM tasks"
            " WHERE id = ?"
          : "SELECT text, scene, scene_dir, path, 0 FROM tasks WHERE id = ?",
      &task_id, 1, "cannot read the task", &q);
  if (rs == CP_STORE_NOT_FOUND)
    return cp_store_failf(st, rs, "no task %lld", (long long)task_id);
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
    return cp_store_failf(st, CP_STORE_NOMEM, "out of memory");
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
