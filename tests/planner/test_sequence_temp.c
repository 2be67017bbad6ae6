// Temporary parts of an executed assembly sequence (planner/sequence/
// sequence.h, docs/assembly.md "Temporary parts"): a part placed like the
// others and removed again after the last permanent one, in a removal
// stage whose certificate is on the rest without it.
#include <criterion/criterion.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "synth.h"
#include "tests/support.h"

// A fixed pillar (x in [-5, -1] cm, 6 cm tall), a temporary prop beside it
// (x in [1, 5] cm) and an 8 cm plank on both, its centre at x = PLANK_X.
// The plank overlaps the prop by 1 cm (x in [1, 2] cm) at PLANK_X = -0.02:
// its centre is then over the pillar and it stands alone. The prop's shortest way out is +x
// (1 cm under the plank, against 4 cm along y; -x is the pillar). Limits
// that no run reaches: the outcome cannot depend on the machine's speed.
static char *prop_task(double plank_x) {
  char *t = malloc(4096);
  snprintf(t, 4096,
           "{\"assembly\": {\"friction\": {\"default\": 0.8, \"pairs\": [{\"a\": \"plank\", \"b\": \"prop\", \"mu\": 0.2}]},"
           " \"bodies\": ["
           "{\"name\": \"table\", \"fixed\": true, \"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1], \"offset\": 0}},"
           "{\"name\": \"pillar\", \"fixed\": true, \"shape\": {\"type\": \"box\", \"size\": [0.04, 0.04, 0.06]},"
           " \"position\": [-0.03, 0, 0.03]},"
           "{\"name\": \"prop\", \"mass\": 0.1, \"shape\": {\"type\": \"box\", \"size\": [0.04, 0.04, 0.06]},"
           " \"position\": [0.03, 0, 0.03]},"
           "{\"name\": \"plank\", \"mass\": 0.1, \"shape\": {\"type\": \"box\", \"size\": [0.08, 0.04, 0.02]},"
           " \"position\": [%.17g, 0, 0.07]}]},"
           " \"temporary\": [\"prop\"],"
           " \"staging\": {\"prop\": {\"position\": [0.2, -0.1, 0.03]}, \"plank\": {\"position\": [0.2, 0.1, 0.01]}},"
           " \"robot\": {\"type\": \"parallel_gripper\", \"finger\": [0.01, 0.03, 0.024]},"
           " \"limits\": {\"seconds\": 100000, \"nodes\": 2000}}",
           plank_x);
  return t;
}

static json_t *assemble(double plank_x, const char *db) {
  char *text = prop_task(plank_x);
  char *file = cpt_temp_file(text, ".json");
  const char *argv[] = {"complan", "assemble", file, "--db", db, "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  unlink(file);
  free(file);
  free(text);
  return doc;
}

static double num_at(json_t *o, const char *a, const char *b) {
  return json_number_value(json_object_get(json_object_get(o, a), b));
}

Test(sequence_temp, prop_removed_and_the_rest_certified_without_it) {
  char *db = synth_temp_db();
  json_t *doc = assemble(-0.02, db);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "solved", "%s",
                   json_string_value(json_object_get(doc, "message")));
  // The order places the prop first (the plank needs it); the removal
  // comes after the last permanent part as a third stage.
  json_t *order = json_object_get(doc, "order"), *stages = json_object_get(doc, "stages");
  cr_assert_eq(json_array_size(order), 2);
  cr_assert_str_eq(json_string_value(json_array_get(order, 0)), "prop");
  cr_assert_str_eq(json_string_value(json_array_get(order, 1)), "plank");
  cr_assert_eq(json_array_size(stages), 3);
  for (size_t k = 0; k < 3; k++) {
    json_t *s = json_array_get(stages, k);
    cr_assert(json_is_true(json_object_get(s, "certified")));
    cr_assert_str_eq(json_string_value(json_object_get(s, "stability")), "strong");
    cr_assert_eq(json_is_true(json_object_get(s, "removal")), k == 2);
    cr_assert_eq(json_array_size(json_object_get(s, "plan_ids")), k == 2 ? 8 : 7);
    cr_assert_leq(num_at(s, "pose_error", "position"), 0.002);
  }
  json_t *rm = json_array_get(stages, 2), *wd = json_object_get(rm, "withdraw");
  cr_assert_str_eq(json_string_value(json_object_get(rm, "part")), "prop");
  cr_assert_float_eq(json_number_value(json_array_get(wd, 0)), 1.0, 1e-12);
  cr_assert_float_eq(json_number_value(json_array_get(wd, 1)), 0.0, 1e-12);
  // Held across y: the x grasps' fingers would meet the plank above.
  cr_assert_str_eq(json_string_value(json_object_get(json_object_get(rm, "grasp"), "axis")), "y");
  // The final verdict is on the plank alone, within the tolerance.
  cr_assert_leq(num_at(doc, "final_error", "position"), 0.002);
  cr_assert(json_is_true(json_object_get(doc, "replay_verified")));
  // Stored: three stages, the prop twice; the whole sequence replays
  // bitwise and its phases chain (the removal's eight as one move).
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  sqlite3_stmt *q;
  cr_assert_eq(sqlite3_prepare_v2(h, "SELECT part FROM assembly_stages ORDER BY stage", -1, &q, NULL), SQLITE_OK);
  const char *want[] = {"prop", "plank", "prop"};
  int n = 0;
  while (sqlite3_step(q) == SQLITE_ROW) cr_assert_str_eq((const char *)sqlite3_column_text(q, 0), want[n++]);
  cr_assert_eq(n, 3);
  sqlite3_finalize(q);
  sqlite3_close(h);
  synth_assert_sequence_replays(db, doc, 22);
  json_decref(doc);
  synth_remove_db(db);
}

// The plank's centre 1 cm beyond the pillar's edge: it stands on pillar
// and prop (the order search's design check passes) but not on the pillar
// alone. The removal is executed, the plank falls, and the stage is
// refused naming it; no other order exists (the plank cannot go first),
// so the sequence is not returned.
Test(sequence_temp, removal_that_leaves_the_rest_unstable_is_refused) {
  char *db = synth_temp_db();
  json_t *doc = assemble(0.0, db);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "none");
  const char *msg = json_string_value(json_object_get(doc, "message"));
  cr_assert(strstr(msg, "stage 3 (prop): removing prop knocked plank"), "%s", msg);
  json_t *stages = json_object_get(doc, "stages");
  cr_assert_eq(json_array_size(stages), 3);
  json_t *rm = json_array_get(stages, 2);
  cr_assert(json_is_true(json_object_get(rm, "removal")));
  cr_assert(json_is_false(json_object_get(rm, "certified")));
  cr_assert(json_is_null(json_object_get(doc, "final_error")));
  json_decref(doc);
  synth_remove_db(db);
}
