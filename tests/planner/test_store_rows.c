/* The store's lookups of one row by id (planner/store/store.c, one_row): each
 * finds its row, says what is missing when there is none (NOT_FOUND, the
 * database and the id in the message), and reports SQLite's failure as
 * "cannot read ..." when the query itself fails. */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "planner/store/store.h"
#include "planner/search/task.h"
#include "tests/support.h"
#include "synth.h"

static void expect_missing(cp_store *st, cp_store_status s, const char *db, const char *what) {
  cr_assert_eq(s, CP_STORE_NOT_FOUND, "%s", cp_store_message(st));
  char want[512];
  snprintf(want, sizeof want, "%s: %s", db, what);
  cr_assert_str_eq(cp_store_message(st), want);
}

Test(store_rows, found_missing_and_failing) {
  char *db = synth_temp_db();
  cp_task task;
  synth_load_task(&task);
  cp_store *st;
  char msg[512];
  cr_assert_eq(cp_store_open(db, 0, &st, msg, sizeof msg), CP_STORE_OK, "%s", msg);
  int64_t task_id, run_id, found = -1;
  cr_assert_eq(cp_store_task(st, &task, "t.json", &task_id), CP_STORE_OK);
  cr_assert_eq(cp_store_run_begin(st, task_id, "astar", "{}", 7, 13, &run_id), CP_STORE_OK);

  /* found */
  cr_assert_eq(cp_store_find_resumable(st, task_id, &found), CP_STORE_OK);
  cr_assert_eq(found, run_id);
  cp_store_run run;
  cr_assert_eq(cp_store_load_run(st, run_id, &run), CP_STORE_OK, "%s", cp_store_message(st));
  cr_assert_eq(run.id, run_id);
  cr_assert_eq(run.task_id, task_id);
  cr_assert_str_eq(run.planner, "astar");
  cr_assert_str_eq(run.status, "running");
  cr_assert_eq(run.seed, 7);
  cr_assert_eq(run.state_size, 13);
  cr_assert_eq(run.nodes, 0);
  free(run.options);
  cp_store_task_row row;
  cr_assert_eq(cp_store_load_task(st, task_id, &row), CP_STORE_OK);
  cr_assert_str_eq(row.path, "t.json");
  cr_assert(strstr(row.scene, "\"box\""), "%s", row.scene);
  cp_store_task_row_free(&row);

  /* missing: the message says which */
  char what[128];
  expect_missing(st, cp_store_find_resumable(st, task_id + 1, &found), db,
                 "no unfinished run of this task");
  snprintf(what, sizeof what, "no run %lld", (long long)run_id + 5);
  expect_missing(st, cp_store_load_run(st, run_id + 5, &run), db, what);
  cp_search_node node;
  snprintf(what, sizeof what, "no node 0 in run %lld", (long long)run_id);
  expect_missing(st, cp_store_load_node(st, run_id, 0, &node, NULL, 0, NULL, 0, NULL), db, what);
  snprintf(what, sizeof what, "no task %lld", (long long)task_id + 9);
  expect_missing(st, cp_store_load_task(st, task_id + 9, &row), db, what);

  /* the query fails: another process renamed the table under the store */
  sqlite3 *raw;
  cr_assert_eq(sqlite3_open(db, &raw), SQLITE_OK);
  cr_assert_eq(sqlite3_exec(raw, "ALTER TABLE searches RENAME TO gone", NULL, NULL, NULL),
               SQLITE_OK, "%s", sqlite3_errmsg(raw));
  sqlite3_close(raw);
  /* a stamped file without complan's tables is damaged: bad input (exit 2,
   * issue 21), not a failure of the run */
  cr_assert_eq(cp_store_load_run(st, run_id, &run), CP_STORE_BAD_FILE);
  cr_assert(strstr(cp_store_message(st), "cannot read the run: no such table: searches"),
            "%s", cp_store_message(st));
  cr_assert_eq(cp_store_find_resumable(st, task_id, &found), CP_STORE_BAD_FILE);
  cr_assert(strstr(cp_store_message(st), "cannot look for a run to resume"), "%s",
            cp_store_message(st));

  cp_store_close(st);
  cp_task_free(&task);
  synth_remove_db(db);
}
