/* The field's benchmark tasks (planner/tasks/bench/, issue 23): every task
 * file there loads (cp_task_load, scene included), binds to the simulator,
 * cites a public source in its comment, and its goal is not met at the
 * start (a positive goal distance). A copy of one task whose goal is put at
 * the object's start is seen as met, so the check can fail. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "planner/plan/plan.h"
#include "planner/search/search.h"
#include "planner/search/task.h"

static void bench_dir(char *out, size_t size) {
  const char *root = getenv("CP_SOURCE_ROOT");
  cr_assert(root, "CP_SOURCE_ROOT is not set");
  snprintf(out, size, "%s/planner/tasks/bench", root);
}

/* Goal test and goal distance of the task at path, at its start state. */
static void start_goal(const char *path, int *met, double *dist) {
  cp_task task;
  cp_error err;
  cr_assert_eq(cp_task_load(path, &task, &err), 0, "%s: %s: %s", path,
               err.where, err.msg);
  cp_plan_world *pw;
  cr_assert_eq(cp_plan_world_create(&task, 1, &pw, &err), 0, "%s: %s", path,
               err.msg);
  const cp_search_problem *p = cp_plan_world_problem(pw);
  const double *x0 = cp_plan_world_start(pw);
  *met = p->in_goal(p->ctx, x0);
  *dist = p->goal_distance(p->ctx, x0);
  cp_plan_world_destroy(pw);
  cp_task_free(&task);
}

Test(bench_tasks, every_task_loads_cites_its_source_and_starts_off_goal) {
  char dir[1024];
  bench_dir(dir, sizeof dir);
  DIR *d = opendir(dir);
  cr_assert(d, "cannot open %s", dir);
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    size_t len = strlen(e->d_name);
    if (len <= 5 || strcmp(e->d_name + len - 5, ".json")) continue;
    char path[1400];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    json_error_t je;
    json_t *doc = json_load_file(path, 0, &je);
    cr_assert(doc, "%s: %s", path, je.text);
    const char *comment = json_string_value(json_object_get(doc, "comment"));
    cr_assert(comment, "%s: no comment", path);
    cr_expect(strstr(comment, "github.com/"), "%s: the comment cites no repository", path);
    cr_expect(strstr(comment, "Differences"), "%s: the comment says nothing of what differs", path);
    json_decref(doc);
    int met;
    double dist;
    start_goal(path, &met, &dist);
    cr_expect_eq(met, 0, "%s: the goal holds at the start", path);
    cr_expect_gt(dist, 0.0, "%s: goal distance %g at the start", path, dist);
    ++n;
  }
  closedir(d);
  cr_expect_geq(n, 6, "only %d task files in %s", n, dir);
}

Test(bench_tasks, a_goal_put_at_the_start_is_met) {
  char dir[1024], path[1400], scene[1400];
  bench_dir(dir, sizeof dir);
  snprintf(path, sizeof path, "%s/cmgmp-ledge.json", dir);
  snprintf(scene, sizeof scene, "%s/scenes/cmgmp-ledge.json", dir);
  json_error_t je;
  json_t *doc = json_load_file(path, 0, &je);
  cr_assert(doc, "%s: %s", path, je.text);
  json_t *sc = json_load_file(scene, 0, &je);
  cr_assert(sc, "%s: %s", scene, je.text);
  /* The cube's start position (the scene's body named "cube"). */
  json_t *pos = NULL, *b;
  size_t i;
  json_array_foreach(json_object_get(sc, "bodies"), i, b)
    if (!strcmp(json_string_value(json_object_get(b, "name")), "cube"))
      pos = json_object_get(b, "position");
  cr_assert(pos);
  json_t *goal = json_object_get(doc, "goal");
  json_object_set(goal, "position", pos);
  json_object_set_new(doc, "scene", json_string(scene));
  char tmp[] = "/tmp/test_bench_tasks_XXXXXX";
  int fd = mkstemp(tmp);
  cr_assert(fd >= 0);
  close(fd);
  cr_assert_eq(json_dump_file(doc, tmp, 0), 0);
  json_decref(doc);
  json_decref(sc);
  int met;
  double dist;
  start_goal(tmp, &met, &dist);
  unlink(tmp);
  cr_expect_eq(met, 1, "a goal at the cube's start is not met");
  cr_expect_eq(dist, 0.0);
}
