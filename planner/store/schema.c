/* The store's versioned schema (docs/database.md): the tables, the
 * migration from version 1, and the check of a file before use. */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

#include "planner/store/store_impl.h"

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
    /* Version 4: a pipelined run's drawn, unmerged batch at its last
     * commit (docs/database.md): a resumed run hands it out first. */
    "CREATE TABLE IF NOT EXISTS pending_batches ("
    " search_id INTEGER PRIMARY KEY REFERENCES searches(id),"
    " iterations INTEGER NOT NULL,"
    " embedding INTEGER NOT NULL,"
    " data BLOB NOT NULL,"
    " rng BLOB);"
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
    " PRIMARY KEY (run_id, step));"
    /* complan assemble TASK: the executed sequence (planner/store/
     * sequence.h, docs/assembly.md); before version 3 these two were
     * created on the first write of a sequence. */
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
    " message TEXT,"
    " backtracks INTEGER);"
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
    " PRIMARY KEY (sequence_id, stage));"
    /* Version 3: each phase plan of a stored sequence with its stage, part,
     * move (0, 1, ...: the moves before a stage's last set the part down
     * for a regrasp) and phase name. */
    "CREATE TABLE IF NOT EXISTS assembly_phases ("
    " plan_id INTEGER PRIMARY KEY REFERENCES plans(id),"
    " sequence_id INTEGER NOT NULL,"
    " stage INTEGER NOT NULL,"
    " step INTEGER NOT NULL,"
    " part TEXT NOT NULL,"
    " move INTEGER NOT NULL,"
    " phase TEXT NOT NULL,"
    " UNIQUE (sequence_id, stage, step),"
    " FOREIGN KEY (sequence_id, stage)"
    "  REFERENCES assembly_stages(sequence_id, stage) ON DELETE CASCADE);";

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

/* Version 2 -> 3: assembly_sequences (when a sequence was stored) gains
 * backtracks if an older complan made it without; assembly_phases (from
 * schema_sql) is filled for every stored stage from its plans' task names
 * ("part phase", as the sequence names its phase tasks). */
static int migrate_v2(cp_store *st) {
  sqlite3_stmt *q;
  int rc = sqlite3_prepare_v2(st->db,
                              "SELECT 1 FROM pragma_table_info('assembly_sequences') WHERE name = 'backtracks'",
                              -1, &q, NULL);
  if (rc) return rc;
  rc = sqlite3_step(q);
  sqlite3_finalize(q);
  if (rc == SQLITE_DONE) rc = cp_store_exec(st, "ALTER TABLE assembly_sequences ADD COLUMN backtracks INTEGER");
  else if (rc == SQLITE_ROW) rc = SQLITE_OK;
  if (rc) return rc;
  return cp_store_exec(st, "INSERT OR IGNORE INTO assembly_phases (plan_id, sequence_id, stage, step, part, move,"
                           " phase) SELECT * FROM (" CP_STORE_PHASES_DERIVED("")
                           ") WHERE plan_id IN (SELECT id FROM plans);");
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
  FILE_OLD,         /* complan's, schema version 1 to 3 (migrated on
                       write, read as it is) */
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
    return cp_store_fail(st, rc, "cannot read the database");
  st->version = version;
  if (tables == 0 && app == 0 && version == 0)
    *kind = FILE_EMPTY;
  else if (app == CP_STORE_APPLICATION_ID && version == CP_STORE_SCHEMA_VERSION)
    *kind = FILE_CURRENT;
  else if (app == CP_STORE_APPLICATION_ID && version >= 1 && version < CP_STORE_SCHEMA_VERSION)
    *kind = FILE_OLD;
  else if (app == 0 && version == 0 && others == 0)
    *kind = FILE_ASSEMBLY;
  else {
    *kind = FILE_FOREIGN;
    if (app != CP_STORE_APPLICATION_ID)
      return cp_store_failf(
          st, CP_STORE_BAD_FILE,
          "an SQLite database of another application (application_id"
          " %d, user_version %d), not complan's; it is left untouched",
          app, version);
    return cp_store_failf(
        st, CP_STORE_BAD_FILE,
        "complan database schema version %d; this complan reads "
        "versions 1 to %d only (a newer complan wrote it); it is left "
        "untouched",
        version, CP_STORE_SCHEMA_VERSION);
  }
  return CP_STORE_OK;
}

/* PRAGMA quick_check: "ok", or the first problem in msg. */
static cp_store_status quick_check(cp_store *st) {
  sqlite3_stmt *q;
  int rc = sqlite3_prepare_v2(st->db, "PRAGMA quick_check(1)", -1, &q, NULL);
  if (rc) return cp_store_fail(st, rc, "cannot check the database");
  rc = sqlite3_step(q);
  char first[256] = "";
  if (rc == SQLITE_ROW) {
    const char *t = (const char *)sqlite3_column_text(q, 0);
    snprintf(first, sizeof first, "%s", t ? t : "");
  }
  sqlite3_finalize(q);
  if (rc != SQLITE_ROW)
    return cp_store_fail(st, rc, "cannot check the database");
  if (strcmp(first, "ok"))
    return cp_store_failf(
        st, CP_STORE_BAD_FILE,
        "damaged: PRAGMA quick_check says \"%.200s\"; nothing was "
        "written (copy what you need with sqlite3's .recover)",
        first);
  return CP_STORE_OK;
}

/* Classifies the file under a read lock only (a writer elsewhere does not
 * hold it up); a current complan file is also checked when check is set. */
static cp_store_status classify_read(cp_store *st, file_kind *kind,
                                     int check) {
  int rc;
  if ((rc = cp_store_exec(st, "BEGIN")))
    return cp_store_fail(st, rc, "cannot read the database");
  cp_store_status s = classify(st, kind);
  if (!s && check && *kind == FILE_CURRENT) s = quick_check(st);
  cp_store_exec(st, "COMMIT");
  return s;
}

/* The schema created, migrated or checked, in one transaction taken before
 * the first read (BEGIN IMMEDIATE waits for a writer under the busy
 * timeout): two processes creating the same file both succeed, one after
 * the other; a foreign file is rolled back untouched. */
cp_store_status cp_store_schema_write(cp_store *st) {
  int rc;
  file_kind kind = FILE_FOREIGN;
  cp_store_status s;
  /* The common case first, under a read lock: a current file, checked. */
  s = classify_read(st, &kind, 1);
  if (s || kind == FILE_CURRENT) return s;
  /* Anything to write: decided again under the write lock. */
  if ((rc = cp_store_exec(st, "BEGIN IMMEDIATE")))
    return cp_store_fail(st, rc, "cannot open for writing");
  s = classify(st, &kind);
  if (!s && kind != FILE_EMPTY) s = quick_check(st);
  const char *what = "cannot create the schema";
  char migrating[64];
  if (!s && kind != FILE_CURRENT) {
    char sql[96];
    if (kind == FILE_OLD) {
      snprintf(migrating, sizeof migrating, "cannot migrate the database from schema version %d", st->version);
      what = migrating;
      if (st->version == 1) rc = cp_store_exec(st, migrate_v1_sql);
    }
    if (!rc) rc = cp_store_exec(st, schema_sql);
    if (!rc && kind == FILE_OLD && st->version <= 2) rc = migrate_v2(st);
    if (rc) s = cp_store_fail(st, rc, what);
    snprintf(sql, sizeof sql,
             "PRAGMA user_version = %d; PRAGMA application_id = %d;",
             CP_STORE_SCHEMA_VERSION, CP_STORE_APPLICATION_ID);
    if (!s && (rc = cp_store_exec(st, sql))) s = cp_store_fail(st, rc, "cannot stamp the schema version");
    st->version = CP_STORE_SCHEMA_VERSION;
  }
  if (!s && (rc = cp_store_exec(st, "COMMIT"))) s = cp_store_fail(st, rc, what);
  if (s && !sqlite3_get_autocommit(st->db)) cp_store_exec(st, "ROLLBACK");
  return s;
}

/* A file opened read-only: complan's planner database of version 1, 2 or
 * the current one (nothing is migrated or written). */
cp_store_status cp_store_schema_read(cp_store *st) {
  file_kind kind = FILE_FOREIGN;
  cp_store_status s = classify_read(st, &kind, 0);
  if (s) return s;
  if (kind == FILE_EMPTY || kind == FILE_ASSEMBLY)
    return cp_store_failf(st, CP_STORE_BAD_FILE,
                          "%s: not a complan planner database",
                          kind == FILE_EMPTY ? "empty" : "only assembly runs");
  return CP_STORE_OK;
}
