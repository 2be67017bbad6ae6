// The order search of an executed assembly sequence (planner/sequence/
// sequence.h, docs/assembly.md "Other orders"): when a stage cannot be
// done, the placed stages are taken back and other orders tried; an order
// whose subassembly has no equilibrium is never tried, let alone returned.
#include <criterion/criterion.h>
#include <jansson.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "synth.h"
#include "tests/support.h"

static json_t *assemble(const char *text, const char *db) {
  char *file = cpt_temp_file(text, ".json");
  const char *argv[] = {"complan", "assemble", file, "--db", db, "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  unlink(file);
  free(file);
  return doc;
}

static const char *part_of(json_t *doc, size_t k) {
  return json_string_value(json_object_get(json_array_get(json_object_get(doc, "stages"), k), "part"));
}

// A slab 12 cm deep (wider than the gripper opens: held only across x) and
// a cube 4 mm from its +x face. The order search places the lower cube
// first; then no grasp of the slab fits (a finger across x would go into
// the 4 mm gap). The cube's stage is taken back and the slab placed first;
// the cube then goes in held across y.
Test(sequence_order, stage_without_grasp_sends_the_search_to_another_order) {
  const char *task =
      "{\"assembly\": {\"bodies\": ["
      "{\"name\": \"table\", \"fixed\": true, \"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1], \"offset\": 0}},"
      "{\"name\": \"slab\", \"mass\": 0.08, \"shape\": {\"type\": \"box\", \"size\": [0.04, 0.12, 0.06]},"
      " \"position\": [0, 0, 0.03]},"
      "{\"name\": \"cube\", \"mass\": 0.1, \"shape\": {\"type\": \"box\", \"size\": [0.04, 0.04, 0.04]},"
      " \"position\": [0.044, 0, 0.02]}]},"
      " \"staging\": {\"slab\": {\"position\": [0.25, -0.12, 0.03]}, \"cube\": {\"position\": [0.25, 0.12, 0.02]}},"
      " \"robot\": {\"type\": \"parallel_gripper\", \"finger\": [0.01, 0.03, 0.024]}}";
  char *db = synth_temp_db();
  json_t *doc = assemble(task, db);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "solved", "%s",
                   json_string_value(json_object_get(doc, "message")));
  json_t *order = json_object_get(doc, "order");
  cr_assert_eq(json_array_size(order), 2);
  cr_assert_str_eq(json_string_value(json_array_get(order, 0)), "slab");
  cr_assert_str_eq(json_string_value(json_array_get(order, 1)), "cube");
  cr_assert_eq(json_integer_value(json_object_get(doc, "backtracks")), 1);
  // The cube's first stage (7 phases) was executed and taken back.
  cr_assert_eq(json_integer_value(json_object_get(doc, "plans")), 21);
  json_t *stages = json_object_get(doc, "stages");
  for (size_t k = 0; k < 2; k++) {
    json_t *s = json_array_get(stages, k);
    cr_assert(json_is_true(json_object_get(s, "certified")));
    cr_assert_str_eq(json_string_value(json_object_get(s, "stability")), "strong");
    cr_assert_eq(json_array_size(json_object_get(s, "plan_ids")), 7);
  }
  cr_assert_str_eq(json_string_value(json_object_get(json_object_get(json_array_get(stages, 0), "grasp"), "axis")), "x");
  cr_assert_str_eq(json_string_value(json_object_get(json_object_get(json_array_get(stages, 1), "grasp"), "axis")), "y");
  // The cube's x grasps are refused now that the slab stands next to it.
  json_t *cand = json_object_get(json_array_get(stages, 1), "candidates"), *c;
  size_t i;
  int refused = 0;
  json_array_foreach(cand, i, c) if (!strcmp(json_string_value(json_object_get(c, "axis")), "x")) {
    cr_assert(strstr(json_string_value(json_object_get(c, "reason")), "would meet a placed part"));
    refused++;
  }
  cr_assert_eq(refused, 2);
  cr_assert(json_is_true(json_object_get(doc, "replay_verified")));
  cr_assert_leq(json_number_value(json_object_get(json_object_get(doc, "final_error"), "position")), 0.002);
  // The stored sequence is the returned one, and replays whole.
  char sid[32];
  snprintf(sid, sizeof sid, "%lld", (long long)json_integer_value(json_object_get(doc, "sequence_id")));
  const char *rv[] = {"complan", "replay", "--db", db, "--sequence", sid, "--verify", "--json", NULL};
  json_t *r = cpt_run_json(rv, 0);
  cr_assert_eq(json_integer_value(json_object_get(r, "plans")), 14);
  cr_assert(json_is_true(json_object_get(r, "verified")));
  cr_assert(json_is_true(json_object_get(r, "chained")));
  json_decref(r);
  json_decref(doc);
  synth_remove_db(db);
}

// A base too wide for the gripper either way, a cube standing on it: the
// base cannot be placed, and the only other order starts with the cube
// alone in the air (no equilibrium): it is never tried, nothing is
// executed, and no sequence is returned.
Test(sequence_order, order_through_an_unstable_stage_never_tried) {
  const char *task =
      "{\"assembly\": {\"bodies\": ["
      "{\"name\": \"table\", \"fixed\": true, \"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1], \"offset\": 0}},"
      "{\"name\": \"base\", \"mass\": 0.1, \"shape\": {\"type\": \"box\", \"size\": [0.12, 0.12, 0.04]},"
      " \"position\": [0, 0, 0.02]},"
      "{\"name\": \"top\", \"mass\": 0.1, \"shape\": {\"type\": \"box\", \"size\": [0.04, 0.04, 0.04]},"
      " \"position\": [0, 0, 0.06]}]},"
      " \"staging\": {\"base\": {\"position\": [0.3, 0, 0.02]}, \"top\": {\"position\": [0, 0.3, 0.02]}},"
      " \"robot\": {\"type\": \"parallel_gripper\"}}";
  char *db = synth_temp_db();
  json_t *doc = assemble(task, db);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "none");
  cr_assert_eq(json_array_size(json_object_get(doc, "stages")), 1);
  cr_assert_str_eq(part_of(doc, 0), "base");
  cr_assert(json_is_false(json_object_get(json_array_get(json_object_get(doc, "stages"), 0), "certified")));
  cr_assert(strstr(json_string_value(json_object_get(doc, "message")), "stage 1 (base): no usable grasp of base"));
  cr_assert_eq(json_integer_value(json_object_get(doc, "plans")), 0);
  cr_assert_eq(json_integer_value(json_object_get(doc, "backtracks")), 0);
  cr_assert(json_is_null(json_object_get(doc, "final_error")));
  json_decref(doc);
  synth_remove_db(db);
}
