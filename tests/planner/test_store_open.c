/* Who opens the database (issue 22 item 3): every command goes through the
 * store, so `complan plan` then `complan assemble` share the default
 * complan.sqlite (the other order is cli_plan's test), and an in-memory
 * store (":memory:", no file, hence no WAL) opens and holds a search. */
#include <criterion/criterion.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "planner/plan/plan.h"
#include "planner/store/store.h"
#include "synth.h"
#include "tests/support.h"

static int count_node(void *ctx, const cp_search_node *n, const double *x,
                      const void *warm, size_t warm_size) {
  (void)x, (void)warm, (void)warm_size;
  long *count = ctx;
  cr_assert_eq(n->id, *count, "nodes come back in order");
  ++*count;
  return 0;
}

Test(store_open, an_in_memory_store_holds_a_search) {
  cp_store *st;
  char msg[512];
  cr_assert_eq(cp_store_open(":memory:", 0, &st, msg, sizeof msg), CP_STORE_OK,
               "%s", msg);
  cp_task task;
  synth_load_task(&task);
  task.weight = 1.0;
  synth_grid g = synth_maze_grid();
  cp_search_problem p = synth_grid_problem(&g);
  double x0[2] = {g.start[0], g.start[1]};
  cp_plan_options o = cp_plan_defaults();
  o.method = "astar";
  cp_plan_result r;
  cp_error e;
  cr_assert_eq(cp_plan_search(st, &task, &p, x0, &o, &r, &e), CP_PLAN_SOLVED,
               "%s", e.msg);
  cr_assert_float_eq(r.cost, synth_grid_dijkstra(&g), 1e-12);
  long n = 0;
  cr_assert_eq(cp_store_load_nodes(st, r.run_id, count_node, &n), CP_STORE_OK,
               "%s", cp_store_message(st));
  cr_assert_eq(n, r.nodes);
  cp_store_run run;
  cr_assert_eq(cp_store_load_run(st, r.run_id, &run), CP_STORE_OK);
  cr_assert_str_eq(run.status, "solved");
  free(run.options);
  cp_store_close(st);
  cp_task_free(&task);
}

static long long count_rows(sqlite3 *db, const char *sql) {
  return synth_query_int(db, sql);
}

Test(store_open, plan_then_assemble_share_the_default_database) {
  char dir[] = "/tmp/cp_planasmXXXXXX";
  cr_assert(mkdtemp(dir));
  cr_assert_eq(chdir(dir), 0);
  const char *root = getenv("CP_SOURCE_ROOT");
  cr_assert(root);
  char task[1024], scene[1024];
  snprintf(task, sizeof task, "%s/planner/tasks/push.json", root);
  snprintf(scene, sizeof scene, "%s/models/scenes/tower.json", root);
  char *out, *err;
  const char *plan_argv[] = {"complan", "plan", task, "--max-nodes", "40",
                             "--max-seconds", "3600", NULL};
  int rc = cpt_run(plan_argv, &out, &err);
  cr_assert(rc == 0 || rc == 1, "plan: exit %d: %s", rc, err);
  free(out), free(err);
  const char *asm_argv[] = {"complan", "assemble", scene, NULL};
  rc = cpt_run(asm_argv, &out, &err);
  cr_assert_eq(rc, 0, "assemble after plan: exit %d: %s", rc, err);
  free(out), free(err);
  /* The planner's runs are still listed after the assembly wrote. */
  const char *plans_argv[] = {"complan", "plans", NULL};
  rc = cpt_run(plans_argv, &out, &err);
  cr_assert_eq(rc, 0, "plans: exit %d: %s", rc, err);
  free(out), free(err);
  sqlite3 *db;
  cr_assert_eq(sqlite3_open("complan.sqlite", &db), SQLITE_OK);
  cr_assert_eq(count_rows(db, "SELECT count(*) FROM searches"), 1);
  cr_assert_eq(count_rows(db, "SELECT count(*) FROM assembly_runs"), 1);
  cr_assert(count_rows(db, "SELECT count(*) FROM assembly_steps") > 0);
  cr_assert_eq(count_rows(db, "PRAGMA application_id"), CP_STORE_APPLICATION_ID);
  cr_assert_eq(count_rows(db, "PRAGMA user_version"), CP_STORE_SCHEMA_VERSION);
  cr_assert_eq(count_rows(db, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
  sqlite3_close(db);
  const char *files[] = {"complan.sqlite", "complan.sqlite-wal",
                         "complan.sqlite-shm"};
  for (int i = 0; i < 3; ++i) unlink(files[i]);
  cr_assert_eq(chdir("/"), 0);
  rmdir(dir);
}
