// The bundled arch (planner/tasks/assembly/arch.json, docs/assembly.md
// "Striking the centering"): three arch stones built on a centering of
// three temporary sections, the sections struck in the order the task
// lists them (under the voussoirs first, the crown prop under the keystone
// last). Solved, every stage certified, the final certificate on the arch
// alone, within the tolerances, and the stored sequence replays bitwise.
// The task's limits are raised out of reach here, so that no outcome
// depends on the machine's speed. The strong/weak verdicts are asserted:
// the certificates' MILPs stop at a count of branch-and-bound nodes
// (limits.stability_nodes, default 2000), their wall-clock cap is out of
// reach too.
#include <criterion/criterion.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contact/stability.h"
#include "synth.h"
#include "tests/support.h"

/* arch.json with its scene path made absolute and limits out of reach. */
static char *arch_task(void) {
  const char *root = getenv("CP_SOURCE_ROOT");
  char path[4096], scene[4096];
  snprintf(path, sizeof path, "%s/planner/tasks/assembly/arch.json", root ? root : ".");
  snprintf(scene, sizeof scene, "%s/planner/tasks/assembly/arch_scene.json", root ? root : ".");
  json_error_t e;
  json_t *t = json_load_file(path, 0, &e);
  cr_assert(t, "%s: %s", path, e.text);
  json_object_set_new(t, "assembly", json_string(scene));
  json_object_set_new(t, "limits", json_pack("{s:f, s:i, s:f}", "seconds", 1e6, "nodes", 2000, "stability", 1e6));
  char *text = json_dumps(t, JSON_COMPACT);
  json_decref(t);
  char *file = cpt_temp_file(text, ".json");
  free(text);
  return file;
}

static double num_at(json_t *o, const char *a, const char *b) {
  return json_number_value(json_object_get(json_object_get(o, a), b));
}

Test(sequence_arch, built_on_its_centering_and_the_centering_struck) {
  char *db = synth_temp_db(), *file = arch_task();
  const char *argv[] = {"complan", "assemble", file, "--db", db, "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  unlink(file);
  free(file);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "solved", "%s",
                   json_string_value(json_object_get(doc, "message")));
  json_t *order = json_object_get(doc, "order"), *stages = json_object_get(doc, "stages");
  cr_assert_eq(json_array_size(order), 6);
  // Six placements, then the three sections removed in the listed order.
  cr_assert_eq(json_array_size(stages), 9);
  const char *removed[] = {"centering_left", "centering_right", "crown_prop"};
  long long plans = 0;
  for (size_t k = 0; k < 9; k++) {
    json_t *s = json_array_get(stages, k);
    const char *part = json_string_value(json_object_get(s, "part"));
    cr_assert(json_is_true(json_object_get(s, "certified")), "stage %zu (%s)", k, part);
    const char *kind = json_string_value(json_object_get(s, "stability"));
    const long nodes = (long)json_integer_value(json_object_get(s, "stability_nodes"));
    // The centering's sections alone are proven strong by the energy test
    // (no MILP); every stage with an arch stone leaves its MILPs
    // undecided: stable_undecided, which certifies an equilibrium. They
    // stop at the node limit (2000 nodes and the children of the last
    // branching). Stage 5's first MILP meets a GLPK internal error at
    // about 700 nodes (GLPK's primal simplex at a near-singular basis,
    // sessions 17-18: experiments/results/assembly_robot.md); it is retried
    // with other settings within the same budget (contact/stability.h), so
    // no stage's reason is GLPK's failure. With the velocity stepper's
    // sliding contacts (the default since session 22) stage 5 instead met
    // a root LP the dual simplex could not settle; the root is now solved
    // again by the primal simplex (docs/assembly.md).
    if (k < 3) {
      cr_assert_str_eq(kind, "strong", "stage %zu", k);
      cr_assert_eq(nodes, 0, "stage %zu", k);
    } else {
      cr_assert_str_eq(kind, "stable_undecided", "stage %zu", k);
      cr_assert(nodes > 2000 && nodes <= 2002, "stage %zu: %ld nodes", k, nodes);
      const char *why = json_string_value(json_object_get(s, "stability_reason"));
      cr_assert(why && strstr(why, "node limit"), "stage %zu: %s", k, why ? why : "(none)");
      cr_assert_str_eq(json_string_value(json_object_get(s, "stability_certifies")),
                       cp_stability_kind_meaning(CP_STABILITY_UNDECIDED));
    }
    cr_assert_eq(json_is_true(json_object_get(s, "removal")), k >= 6);
    if (k >= 6) {
      cr_assert_str_eq(part, removed[k - 6]);
      // out sideways: a horizontal axis direction
      json_t *wd = json_object_get(s, "withdraw");
      cr_assert_float_eq(json_number_value(json_array_get(wd, 2)), 0.0, 1e-12);
      cr_assert_eq(json_array_size(json_object_get(s, "plan_ids")), 8);
    } else {
      // the temporary sections go in before the arch stones resting on them
      cr_assert_eq(!strcmp(part, "centering_left") || !strcmp(part, "centering_right") ||
                       !strcmp(part, "crown_prop"),
                   k < 3, "stage %zu: %s", k, part);
    }
    cr_assert_leq(num_at(s, "pose_error", "position"), 0.002);
    plans += (long long)json_array_size(json_object_get(s, "plan_ids"));
  }
  // The last certificate is the arch alone (piers fixed): within 2 mm / 1 deg.
  cr_assert_leq(num_at(doc, "final_error", "position"), 0.002);
  cr_assert_leq(num_at(doc, "final_error", "angle"), 0.0174533);
  cr_assert(json_is_true(json_object_get(doc, "replay_verified")));
  // Stored: nine stage rows, the sections twice; replayed whole, chained.
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  cr_assert_eq(synth_query_int(h, "SELECT count(*) FROM assembly_stages WHERE certified = 1"), 9);
  cr_assert_eq(synth_query_int(h, "SELECT count(*) FROM assembly_stages WHERE part = 'crown_prop'"), 2);
  sqlite3_close(h);
  synth_assert_sequence_replays(db, doc, plans);
  json_decref(doc);
  synth_remove_db(db);
}
