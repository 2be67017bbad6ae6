/* The scene loader's warnings (input accepted despite a URDF habit: here a
 * revolute joint with limits 0..0, read as "no limits") reach stderr from
 * every command that loads a scene -- solve, simulate, plan, stability,
 * assemble, contacts -- and never stdout: the --json document is the same
 * as without the habit. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/scene.h"
#include "tests/support.h"

/* tests/data/robots/habits.urdf: a two-joint arm whose first revolute
 * joint has limits 0..0 (a warning, line 6); no shapes: it touches nothing. */
/* A box resting on a table (a friction pair for the two), and the arm of the URDF file when one is given. */
static char *scene_text(const char *urdf_path) {
  char *t = malloc(2048);
  snprintf(t, 2048,
           "{\"friction\": {\"default\": 0.5, \"pairs\": [{\"a\": \"box\", \"b\": "
           "\"table\", \"mu\": 0.3}]}, "
           "\"bodies\": [{\"name\": \"table\", \"fixed\": true, \"shape\": "
           "{\"type\": \"plane\", \"normal\": [0, 0, 1], \"offset\": 0}}, "
           "{\"name\": \"box\", \"mass\": 0.5, \"shape\": {\"type\": \"box\", "
           "\"size\": [0.1, 0.1, 0.1]}, \"position\": [0, 0, 0.05]}]%s%s%s}",
           urdf_path ? ", \"manipulators\": [{\"name\": \"h\", \"urdf\": \"" : "",
           urdf_path ? urdf_path : "", urdf_path ? "\"}]" : "");
  return t;
}

static char *task_file(const char *scene_path) {
  char t[2048];
  snprintf(t, sizeof t,
           "{\"scene\": \"%s\", \"mode\": \"dynamic\", "
           "\"inputs\": {\"h/j2\": {\"values\": [0, 0.1]}}, "
           "\"action\": {\"duration\": 0.01, \"dt\": 0.005}, "
           "\"goal\": {\"body\": \"box\", \"position\": [0.3, 0, 0.05], \"tolerance\": 0.01}, "
           "\"bounds\": {\"min\": [-1, -1, -1], \"max\": [1, 1, 1]}, "
           "\"search\": {\"method\": \"astar\"}, "
           "\"limits\": {\"nodes\": 3, \"seconds\": 10}}",
           scene_path);
  return cpt_temp_file(t, ".json");
}

/* Runs argv; returns stdout, with stderr in *err and the exit status in *rc. */
static char *run(const char *const *argv, int *rc, char **err) {
  char *out;
  *rc = cpt_run(argv, &out, err);
  return out;
}

Test(cli_warnings, every_scene_command) {
  char *u = strdup(cpt_data("robots/habits.urdf"));
  char *with = scene_text(u), *without = scene_text(NULL);
  char *sw = cpt_temp_file(with, ".json"), *so = cpt_temp_file(without, ".json");
  char *tw = task_file(sw);
  char *db = cpt_temp_file("", ".sqlite");
  unlink(db);
  /* argv[2] is the scene (or task) file, swapped per run */
  static const char *cmds[][9] = {
      {"complan", "solve", NULL, "--json"},
      {"complan", "contacts", NULL, "--json"},
      {"complan", "simulate", NULL, "--json", "--duration", "0.01"},
      {"complan", "stability", NULL, "--json"},
      {"complan", "assemble", NULL, "--json", "--no-db"},
      {"complan", "plan", NULL, "--json", "--db", NULL},
  };
  for (size_t k = 0; k < sizeof cmds / sizeof *cmds; k++) {
    const char *argv[9];
    memcpy(argv, cmds[k], sizeof argv);
    if (!strcmp(argv[1], "plan")) argv[5] = db;
    int is_plan = !strcmp(argv[1], "plan");
    /* with the habit */
    argv[2] = is_plan ? tw : sw;
    int rc_w, rc_o;
    char *err_w, *err_o;
    char *out_w = run(argv, &rc_w, &err_w);
    cr_assert(rc_w == 0 || rc_w == 1, "%s: exit %d: %s", argv[1], rc_w, err_w);
    char want[512];
    snprintf(want, sizeof want, "complan: %s: warning: manipulators[0].urdf: %s line 6",
             argv[2], u);
    cr_assert(strstr(err_w, want), "%s: stderr lacks '%s': %s", argv[1], want, err_w);
    cr_assert(strstr(err_w, "no position limits"), "%s: %s", argv[1], err_w);
    cr_assert_null(strstr(out_w, "warning"), "%s: a warning on stdout: %s", argv[1], out_w);
    json_error_t je;
    json_t *doc = json_loads(out_w, 0, &je);
    cr_assert_not_null(doc, "%s: stdout is not one JSON document: %s", argv[1], out_w);
    json_decref(doc);
    free(out_w);
    free(err_w);
    /* the same scene without the arm: no warning at all (a task's inputs
     * name the arm's joint: plan only with it) */
    if (is_plan) continue;
    argv[2] = so;
    char *out_o = run(argv, &rc_o, &err_o);
    cr_assert_eq(rc_o, rc_w, "%s: %s", argv[1], err_o);
    cr_assert_null(strstr(err_o, "warning"), "%s: %s", argv[1], err_o);
    free(out_o);
    free(err_o);
  }
  unlink(db);
  unlink(sw);
  unlink(so);
  unlink(tw);
  free(db);
  free(u);
  free(with);
  free(without);
  free(sw);
  free(so);
  free(tw);
}

/* cp_scene_copy gives the copy its own warnings (the simulator and the
 * planner work on copies; a shared list was freed twice: `complan simulate`
 * crashed on any scene with a warning). */
Test(cli_warnings, scene_copy_owns_its_warnings) {
  char *u = strdup(cpt_data("robots/habits.urdf"));
  char *text = scene_text(u);
  char *f = cpt_temp_file(text, ".json");
  cp_scene_options o = cp_scene_options_defaults();
  cp_scene a, b;
  cp_error e;
  cr_assert_eq(cp_scene_load(f, &o, &a, &e), 0, "%s", e.msg);
  cr_assert_eq(a.n_warnings, 1);
  cr_assert_eq(cp_scene_copy(&a, &b), 0);
  cr_assert_eq(b.n_warnings, 1);
  cr_assert_neq(b.warnings, a.warnings);
  cr_assert_neq(b.warnings[0], a.warnings[0]);
  cr_assert_str_eq(b.warnings[0], a.warnings[0]);
  cr_assert_eq(b.n_pairs, 1); // and the friction pairs, names copied
  cr_assert_neq(b.pairs[0].a, a.pairs[0].a);
  cr_assert_eq(b.pairs[0].mu, 0.3);
  cp_scene_free(&a);
  cr_assert(strstr(b.warnings[0], "no position limits"), "%s", b.warnings[0]);
  cr_assert_str_eq(b.pairs[0].a, "box");
  cr_assert_str_eq(b.pairs[0].b, "table");
  cp_scene_free(&b);
  unlink(f);
  free(u);
  free(text);
  free(f);
}
