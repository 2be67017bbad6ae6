/* Task files (planner/search/task.h): the documented example, inputs and actions,
 * defaults, and every bad input with its JSON path. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "planner/search/task.h"
#include "tests/support.h"
#include "tests/planner/finger_scene.h"

static const char good[] =
    "{\"scene\": " SCENE ","
    " \"mode\": \"dynamic\", \"stepper\": \"acceleration\","
    " \"inputs\": {\"finger/j1\": {\"values\": [-2, 0, 2]},"
    "  \"finger/j2\": {\"range\": [-1.5, 1.5], \"samples\": 5}},"
    " \"action\": {\"duration\": 0.1, \"dt\": 0.005},"
    " \"goal\": {\"body\": \"box\", \"position\": [0.4, 0, 0.05],"
    "  \"tolerance\": 0.02, \"orientation\": [1, 0, 0, 0],"
    "  \"angle_tolerance\": 0.2, \"at_rest\": false},"
    " \"bounds\": {\"min\": [-1, -1, 0], \"max\": [1, 1, 1]},"
    " \"cost\": {\"time\": 1.0, \"effort\": 0.01},"
    " \"search\": {\"method\": \"astar\", \"weight\": 1.5, \"resolution\":"
    "  {\"position\": 0.01, \"angle\": 0.05, \"velocity\": 0.05},"
    "  \"goal_bias\": 0.05, \"seed\": 1},"
    " \"limits\": {\"nodes\": 100000, \"seconds\": 60}}";

Test(task, the_documented_example) {
  cp_task t;
  cp_error e;
  cr_assert_eq(cp_task_parse(good, strlen(good), NULL, &t, &e), 0, "%s: %s",
               e.where, e.msg);
  cr_assert_eq(t.n_inputs, 2);
  cr_assert_str_eq(t.inputs[0].joint, "finger/j1");
  cr_assert_eq(t.inputs[0].row, 0);
  cr_assert_eq(t.inputs[1].row, 1);
  cr_assert_eq(t.inputs[1].n_values, 5);
  double want[5] = {-1.5, -0.75, 0, 0.75, 1.5};
  for (int k = 0; k < 5; ++k)
    cr_assert_float_eq(t.inputs[1].values[k], want[k], 1e-15);
  cr_assert_eq(t.n_actions, 15);
  cr_assert_eq(t.steps, 20);
  /* Mixed radix, input 0 fastest: action 7 = (7 % 3, 7 / 3) = (1, 2). */
  double v[2];
  cp_task_action_values(&t, 7, v);
  cr_assert(v[0] == 0 && v[1] == 0);
  cp_task_action_values(&t, 14, v);
  cr_assert(v[0] == 2 && v[1] == 1.5);
  /* Cost: (time + effort |u|^2) T = (1 + 0.01 (4 + 2.25)) 0.1. */
  cr_assert_float_eq(cp_task_action_cost(&t, 14), (1 + 0.01 * 6.25) * 0.1,
                     1e-15);
  cr_assert_eq(t.goal.body_index, 1);
  cr_assert(t.goal.has_orientation && !t.goal.at_rest);
  cr_assert_float_eq(t.goal.angle_tolerance, 0.2, 0);
  cr_assert(t.has_bounds);
  cr_assert_str_eq(t.method, "astar");
  cr_assert_eq(t.seed, 1);
  cr_assert_eq(t.max_nodes, 100000);
  cr_assert_eq(t.drop_rejected, 0);
  cr_assert_str_eq(t.text, good);
  char h1[CP_TASK_KEY_SIZE], h2[CP_TASK_KEY_SIZE];
  cp_task_hash(&t, h1);
  cp_task_free(&t);
  /* Only scene, inputs, action, goal, limits are required. */
  static const char minimal[] =
      "{\"scene\": " SCENE ", \"inputs\": {\"finger/j1\": {\"values\": [1]}},"
      " \"action\": {\"duration\": 0.2}, \"goal\": {\"body\": \"box\","
      " \"position\": [0.1, 0, 0.05], \"tolerance\": 0.01}, \"limits\": {}}";
  cr_assert_eq(cp_task_parse(minimal, strlen(minimal), NULL, &t, &e), 0,
               "%s: %s", e.where, e.msg);
  cr_assert_eq(t.steps, 1);
  cr_assert_float_eq(t.dt, 0.2, 0);
  cr_assert_eq(t.mode, CP_TASK_DYNAMIC);
  cr_assert_eq(t.stepper, CP_TASK_STEPPER_ACCELERATION);
  cr_assert(t.allow_fallback);
  cr_assert_eq(t.velocity_sliding, 1);
  cp_task_hash(&t, h2);
  cr_assert_str_neq(h1, h2);
  cp_task_free(&t);
}

Test(task, sha256_gives_the_standard_digests) {
  /* FIPS 180-2's examples. */
  char h[CP_TASK_KEY_SIZE];
  cp_sha256_hex("abc", 3, h);
  cr_assert_str_eq(h, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  cp_sha256_hex("", 0, h);
  cr_assert_str_eq(h, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

Test(task, scene_path_is_relative_to_the_task) {
  char *scene = cpt_temp_file(SCENE, ".json");
  const char *base = strrchr(scene, '/') + 1;
  char text[1024];
  snprintf(text, sizeof text,
           "{\"scene\": \"%s\", \"inputs\": {\"finger/j2\": {\"values\": [1]}},"
           " \"action\": {\"duration\": 0.1}, \"goal\": {\"body\": \"box\","
           " \"position\": [0.1, 0, 0.05], \"tolerance\": 0.01},"
           " \"limits\": {\"seconds\": 1}}",
           base);
  char *task = cpt_temp_file(text, ".json");
  cp_task t;
  cp_error e;
  /* The temporary files share a directory: the bare name resolves. */
  cr_assert_eq(cp_task_load(task, &t, &e), 0, "%s: %s", e.where, e.msg);
  cr_assert_str_eq(t.scene_text, SCENE);
  cr_assert_eq(t.inputs[0].row, 1);
  /* Both files kept as read, with their SHA-256 (issue 21). */
  cr_assert_eq(t.n_files, 2);
  cr_assert_str_eq(t.files[0].kind, "task");
  cr_assert_str_eq(t.files[0].path, task);
  cr_assert_str_eq(t.files[0].data, text);
  cr_assert_str_eq(t.files[1].kind, "scene");
  cr_assert_str_eq(t.files[1].data, SCENE);
  char sha[CP_TASK_KEY_SIZE], key[CP_TASK_KEY_SIZE], key2[CP_TASK_KEY_SIZE];
  cp_sha256_hex(SCENE, strlen(SCENE), sha);
  cr_assert_str_eq(t.files[1].sha256, sha);
  cp_task_hash(&t, key);
  cr_assert_eq(strlen(key), 64);
  cp_task_free(&t);
  /* The same text with another scene file: another key. */
  FILE *f = fopen(scene, "w");
  fputs(SCENE, f);
  fputs(" ", f);
  fclose(f);
  cr_assert_eq(cp_task_load(task, &t, &e), 0, "%s: %s", e.where, e.msg);
  cp_task_hash(&t, key2);
  cr_assert_str_neq(key, key2);
  cp_task_free(&t);
  unlink(scene);
  /* The scene file is gone: the error names it. */
  cr_assert_eq(cp_task_load(task, &t, &e), -1);
  cr_assert_str_eq(e.where, "scene");
  cr_assert(strstr(e.msg, base), "%s", e.msg);
  unlink(task);
  free(scene);
  free(task);
}

/* Replaces the first occurrence of `from` in the good task by `to` and
 * expects a parse error at `where`. */
static void expect_error(const char *from, const char *to, const char *where,
                         const char *words) {
  const char *at = strstr(good, from);
  cr_assert(at, "no '%s' in the task", from);
  char text[4096];
  snprintf(text, sizeof text, "%.*s%s%s", (int)(at - good), good, to,
           at + strlen(from));
  cp_task t;
  cp_error e;
  cr_assert_eq(cp_task_parse(text, strlen(text), NULL, &t, &e), -1,
               "accepted: %s", text);
  cr_assert_str_eq(e.where, where, "'%s' -> '%s': at %s: %s", from, to,
                   e.where, e.msg);
  if (words) cr_assert(strstr(e.msg, words), "%s", e.msg);
  cr_assert_null(t.text, "nothing kept");
}

Test(task, bad_inputs_name_their_json_path) {
  expect_error("\"mode\"", "\"mood\"", "mood", "unknown key");
  expect_error("\"dynamic\"", "\"kinematic\"", "mode", "quasistatic");
  expect_error("\"stepper\": \"acceleration\"", "\"stepper\": \"quasistatic\"",
               "stepper", "quasistatic");
  expect_error("\"finger/j1\"", "\"finger/j9\"", "inputs.finger/j9", "no joint");
  expect_error("\"samples\": 5", "\"samples\": 0", "inputs.finger/j2.samples",
               "integer");
  expect_error(", \"samples\": 5", "", "inputs.finger/j2.samples", "required");
  expect_error("{\"values\": [-2, 0, 2]}", "{\"values\": [-2], \"range\": [0, 1]}",
               "inputs.finger/j1", "exactly one");
  expect_error("[-2, 0, 2]", "[-2, \"x\", 2]", "inputs.finger/j1.values[1]", NULL);
  expect_error("\"range\": [-1.5, 1.5]", "\"range\": [1.5, -1.5]",
               "inputs.finger/j2.range", "lo <= hi");
  expect_error("\"dt\": 0.005", "\"dt\": 0.5", "action.dt",
               "expected seconds in (0, 0.1] (at most action.duration) and >= 1e-07 (at most "
               "10^6 steps), got 0.5");
  expect_error("\"dt\": 0.005", "\"dt\": 0", "action.dt", "in (0, 0.1]");
  expect_error("\"dt\": 0.005", "\"dt\": 1e-8", "action.dt", ">= 1e-07 (at most 10^6 steps), got 1e-08");
  expect_error("\"dt\": 0.005", "\"dt\": \"x\"", "action.dt", NULL);
  expect_error("\"duration\": 0.1", "\"duration\": -0.1", "action.duration",
               "expected a number in (0, 1e+06], got -0.1");
  expect_error("\"body\": \"box\"", "\"body\": \"table\"", "goal.body",
               "no free body");
  expect_error("\"tolerance\": 0.02", "\"tolerance\": 0", "goal.tolerance", NULL);
  expect_error("\"orientation\": [1, 0, 0, 0]", "\"orientation\": [2, 0, 0, 0]",
               "goal.orientation", "unit quaternion");
  expect_error("\"at_rest\": false", "\"at_rest\": 0", "goal.at_rest", NULL);
  expect_error("\"at_rest\": false", "\"at_ease\": false", "goal.at_ease",
               "unknown key");
  expect_error("\"max\": [1, 1, 1]", "\"max\": [1, -1, 1]", "bounds", "min < max");
  expect_error("\"min\": [-1, -1, 0]", "\"min\": [0.5, -1, 0]", "bounds",
               "outside");
  expect_error("\"effort\": 0.01", "\"effort\": -1", "cost.effort", NULL);
  expect_error("\"astar\"", "\"prm\"", "search.method", "astar");
  expect_error("\"weight\": 1.5", "\"weight\": -1", "search.weight", NULL);
  expect_error("\"position\": 0.01", "\"position\": 0", "search.resolution.position",
               NULL);
  expect_error("\"goal_bias\": 0.05", "\"goal_bias\": 2", "search.goal_bias", NULL);
  expect_error("\"seed\": 1", "\"seed\": 1.5", "search.seed", "integer");
  expect_error("\"seed\": 1", "\"seed\": 1, \"connect\": -1", "search.connect",
               "[0, 1000]");
  expect_error("\"seed\": 1", "\"seed\": 1, \"connect\": 2.5", "search.connect",
               "integer");
  expect_error("\"seed\": 1", "\"seed\": 1, \"goal_k\": -1", "search.goal_k",
               "[0, 10000]");
  expect_error("\"seed\": 1", "\"seed\": 1, \"goal_k\": \"8\"",
               "search.goal_k", "integer");
  { /* search.drop_rejected true is kept */
    const char *at = strstr(good, "\"seed\": 1");
    char text[4096];
    snprintf(text, sizeof text, "%.*s\"seed\": 1, \"drop_rejected\": true%s",
             (int)(at - good), good, at + strlen("\"seed\": 1"));
    cp_task t;
    cp_error e;
    cr_assert_eq(cp_task_parse(text, strlen(text), NULL, &t, &e), 0, "%s", e.msg);
    cr_assert_eq(t.drop_rejected, 1);
    cp_task_free(&t);
  }
  expect_error("\"seed\": 1", "\"seed\": 1, \"drop_rejected\": 1",
               "search.drop_rejected", "true or false");
  { /* search.fresh_actions: opt-in, rrt and sst on a grid */
    cp_task t;
    cp_error e;
    cr_assert_eq(cp_task_parse(good, strlen(good), NULL, &t, &e), 0, "%s", e.msg);
    cr_assert_eq(t.search_fresh_actions, -1);
    cr_assert_eq(cp_task_fresh_actions(&t, "sst"), 0);
    t.search_fresh_actions = 1;
    cr_assert_eq(cp_task_fresh_actions(&t, "sst"), 1);
    cr_assert_eq(cp_task_fresh_actions(&t, "rrt"), 1);
    cr_assert_eq(cp_task_fresh_actions(&t, "astar"), 0);
    cp_task_free(&t);
  }
  expect_error("\"seed\": 1", "\"seed\": 1, \"fresh_actions\": 1",
               "search.fresh_actions", "true or false");
  expect_error("\"astar\", \"weight\"",
               "\"rrt\", \"sampling\": \"continuous\", "
               "\"fresh_actions\": true, \"weight\"",
               "search.fresh_actions", "grid");
  expect_error("\"nodes\": 100000", "\"nodes\": 0", "limits.nodes", NULL);
  expect_error("\"mode\"", "\"velocity_sliding\": 1, \"mode\"", "velocity_sliding",
               "true or false");
  expect_error(", \"limits\": {\"nodes\": 100000, \"seconds\": 60}", "", "limits",
               "required");
  expect_error("\"mass\": 1", "\"mass\": -1", "scene.bodies[1].mass", NULL);
  expect_error("{\"scene\"", "{\n\n\"scene\" x", "line 3", NULL);
}
