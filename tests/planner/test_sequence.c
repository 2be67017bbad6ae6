// Assembly tasks executed by the gripper (planner/sequence/sequence.h,
// `complan assemble TASK`, docs/assembly.md "Assembly tasks"): grasp
// ranking against the analytic friction limits, a stage that fails its
// certificate not returned, the bundled tower built end to end (JSON
// contract, database rows, final poses read back from the stored states),
// bad tasks refused with their JSON path and nothing written; the library
// call cp_sequence_run giving the command's document.
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "planner/replay/replay.h"
#include "planner/replay/sequence_run.h"
#include "planner/search/goal.h"
#include "planner/sequence/sequence.h"
#include "synth.h"
#include "tests/support.h"

static const char *tower_task(void) {
  static char path[4096];
  const char *root = getenv("CP_SOURCE_ROOT");
  snprintf(path, sizeof path, "%s/planner/tasks/assembly/tower3.json", root ? root : ".");
  return path;
}

static char *temp_db(void) {
  char *db = strdup("/tmp/cp_seq_XXXXXX");
  int fd = mkstemp(db);
  close(fd);
  unlink(db);
  return db;
}


/* Runs `complan assemble` on a task whose "assembly" is the bundled scene
 * planner/tasks/assembly/SCENE and whose other keys are rest (JSON members
 * after a comma); returns the JSON document (exit 0 asserted). */
static json_t *run_task(const char *scene, const char *rest, const char *db) {
  char text[4096];
  const char *root = getenv("CP_SOURCE_ROOT");
  snprintf(text, sizeof text, "{\"assembly\": \"%s/planner/tasks/assembly/%s\", %s}", root ? root : ".", scene,
           rest);
  char *file = cpt_temp_file(text, ".json");
  const char *argv[] = {"complan", "assemble", file, "--db", db, "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  unlink(file);
  free(file);
  return doc;
}

/* One 0.1 kg part 2 x 8 x 4 cm staged 15 cm along -y of its design pose:
 * transport is along y. Gripper squeeze 5 N, friction mu. */
static const char *long_part_task(double mu, char *buf, size_t n) {
  snprintf(buf, n,
           "{\"assembly\": {\"bodies\": ["
           "{\"name\": \"table\", \"fixed\": true, \"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1], \"offset\": 0}},"
           "{\"name\": \"bar\", \"mass\": 0.1, \"shape\": {\"type\": \"box\", \"size\": [0.02, 0.08, 0.04]},"
           " \"position\": [0, 0, 0.02]}]},"
           " \"staging\": {\"bar\": {\"position\": [0, -0.15, 0.02]}},"
           " \"robot\": {\"type\": \"parallel_gripper\", \"squeeze\": 5, \"mu\": %.17g, \"finger\": [0.01, 0.015, 0.024]},"
           " \"transport\": {\"acceleration\": 25}}",
           mu);
  return buf;
}

// The LP's load factor of each side-face pair against the analytic
// answer. Across x (normals +-x) the weight (z) and the transport load
// (y, 25 m/s^2) both lie in the faces: with the friction pyramid each
// tangential component is bounded by mu N on its own, so the factor is
// 2 mu F / (m max(g, a)) = 2 mu F / (m a). Across y the transport load
// lies along the fingers' axis. In the worse direction it pushes the part
// and the sliding finger (mass mf = 0.05 kg) against that finger's effort
// F: the finger presses with F - lam mf a, the other with
// F - lam (m + mf) a, and friction on both holds the weight:
// lam = 2 mu F / (m g + mu (m + 2 mf) a).
Test(sequence, grasp_hold_factors_match_friction_limits) {
  char text[2048];
  cp_sequence_task t;
  cp_error err;
  const double mu = 0.2, F = 5, m = 0.1, mf = 0.05, g = 9.81, a = 25;
  long_part_task(mu, text, sizeof text);
  cr_assert_eq(cp_sequence_task_parse(text, strlen(text), NULL, &t, &err), 0, "%s: %s", err.where, err.msg);
  cp_sequence_grasp gr[6];
  int n = cp_sequence_grasps(&t, 0, NULL, NULL, 0, gr, 6, &err);
  // Two face pairs, each at the centre and near the top (4 cm tall part,
  // 2.4 cm fingers: 6 mm up): the fingers' height does not change what the
  // pyramids hold (the weight's line passes between the patches).
  cr_assert_eq(n, 4, "%s", err.msg);
  // Ranked: the usable grasps (across y) first, then the rejected ones.
  for (int k = 0; k < 4; k++) {
    const int across_y = k < 2;
    cr_assert_eq(gr[k].axis, across_y ? 1 : 0);
    cr_assert_eq(gr[k].rejected, !across_y);
    cr_assert_float_eq(gr[k].hold, across_y ? 2 * mu * F / (m * g + mu * (m + 2 * mf) * a) : 2 * mu * F / (m * a),
                       0.004);
    cr_assert_float_eq(gr[k].width, across_y ? 0.08 : 0.02, 1e-15);
    if (!across_y) cr_assert(strstr(gr[k].reason, "friction"), "%s", gr[k].reason);
  }
  cr_assert(gr[0].offset == 0.0 || gr[1].offset == 0.0);
  cr_assert_float_eq(gr[0].offset + gr[1].offset, 0.02 - 0.012 - 0.002, 1e-12);
  cp_sequence_task_free(&t);
  // With enough friction both hold, and the x grasp ranks by its factor.
  long_part_task(0.8, text, sizeof text);
  cr_assert_eq(cp_sequence_task_parse(text, strlen(text), NULL, &t, &err), 0);
  n = cp_sequence_grasps(&t, 0, NULL, NULL, 0, gr, 6, &err);
  cr_assert_eq(n, 4);
  for (int k = 0; k < 4; k++) cr_assert(!gr[k].rejected);
  for (int k = 0; k + 1 < 4; k++) cr_assert_geq(gr[k].hold, gr[k + 1].hold);
  cp_sequence_task_free(&t);
}

// The grasp with too little friction is rejected by the contact model and
// the part is carried with the other one: planned, simulated, certified.
Test(sequence, low_friction_grasp_rejected_other_used) {
  char text[2048], *db = temp_db();
  cp_sequence_task t;
  cp_error err;
  long_part_task(0.2, text, sizeof text);
  cr_assert_eq(cp_sequence_task_parse(text, strlen(text), NULL, &t, &err), 0, "%s: %s", err.where, err.msg);
  cp_store *st;
  char msg[600];
  cr_assert_eq(cp_store_open(db, 0, &st, msg, sizeof msg), CP_STORE_OK, "%s", msg);
  cp_sequence_result res;
  cr_assert_eq(cp_sequence_plan(st, &t, &res, &err), CP_SEQUENCE_SOLVED, "%s", res.message);
  cr_assert_eq(res.n_stages, 1);
  const cp_sequence_stage *s = &res.stages[0];
  cr_assert(s->certified);
  cr_assert_eq(s->grasp.axis, 1);
  cr_assert_eq(s->attempts, 1); // the x grasp was never executed
  cr_assert_leq(s->position_error, t.tol_position);
  cr_assert_leq(s->angle_error, t.tol_angle);
  cr_assert(s->stability == CP_STABILITY_STRONG);
  cr_assert_eq(res.plans, 7);
  cr_assert_eq(s->n_plans, 7);
  cp_sequence_result_free(&res);
  cp_store_close(st);
  cp_sequence_task_free(&t);
  synth_remove_db(db);
}

// A stage outside the placement tolerance is a failed certificate: every
// grasp is tried, then the sequence is not returned (none), and the
// stored row says so.
Test(sequence, stage_outside_tolerance_not_returned) {
  char *db = temp_db();
  json_t *doc = run_task("tower3_scene.json",
                         "\"staging\": {\"block0\": {\"position\": [0.12, -0.08, 0.02]},"
                         " \"block1\": {\"position\": [0.12, 0, 0.02]}, \"block2\": {\"position\": [0.12, 0.08, 0.02]}},"
                         " \"robot\": {\"type\": \"parallel_gripper\", \"finger\": [0.01, 0.03, 0.024]},"
                         " \"tolerance\": {\"position\": 1e-6}",
                         db);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "none");
  json_t *stages = json_object_get(doc, "stages");
  cr_assert_eq(json_array_size(stages), 1);
  json_t *s0 = json_array_get(stages, 0);
  cr_assert(json_is_false(json_object_get(s0, "certified")));
  // Every grasp (two face pairs, each at the centre and near the top) was
  // executed and failed its certificate.
  json_t *cand = json_object_get(s0, "candidates");
  cr_assert_eq(json_integer_value(json_object_get(s0, "attempts")), 4);
  cr_assert_eq(json_array_size(cand), 4);
  for (size_t k = 0; k < 4; k++)
    cr_assert(strstr(json_string_value(json_object_get(json_array_get(cand, k), "reason")), "from its design pose"));
  cr_assert(json_is_null(json_object_get(doc, "final_error")));
  cr_assert(strstr(json_string_value(json_object_get(doc, "message")), "from its design pose"));
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  sqlite3_stmt *q;
  cr_assert_eq(sqlite3_prepare_v2(h, "SELECT status, (SELECT count(*) FROM assembly_stages WHERE certified = 1)"
                                     " FROM assembly_sequences", -1, &q, NULL), SQLITE_OK);
  cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
  cr_assert_str_eq((const char *)sqlite3_column_text(q, 0), "none");
  cr_assert_eq(sqlite3_column_int(q, 1), 0);
  sqlite3_finalize(q);
  sqlite3_close(h);
  json_decref(doc);
  synth_remove_db(db);
}

/* The stored state of the last node of plan plan_id. */
static void last_state(sqlite3 *h, long long plan_id, double *x, int n) {
  sqlite3_stmt *q;
  cr_assert_eq(sqlite3_prepare_v2(h, "SELECT n.state FROM plans p JOIN nodes n ON n.search_id = p.search_id"
                                     " AND n.id = p.node WHERE p.id = ?", -1, &q, NULL), SQLITE_OK,
               "%s", sqlite3_errmsg(h));
  sqlite3_bind_int64(q, 1, plan_id);
  cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
  cr_assert_geq(sqlite3_column_bytes(q, 0), (int)sizeof *x * n);
  memcpy(x, sqlite3_column_blob(q, 0), sizeof *x * (size_t)n);
  sqlite3_finalize(q);
}

Test(sequence, tower_built_certified_and_replayed) {
  char *db = temp_db();
  const char *argv[] = {"complan", "assemble", tower_task(), "--db", db, "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "solved");
  json_t *order = json_object_get(doc, "order");
  cr_assert_eq(json_array_size(order), 3);
  for (int k = 0; k < 3; k++) {
    char name[16];
    snprintf(name, sizeof name, "block%d", k);
    cr_assert_str_eq(json_string_value(json_array_get(order, (size_t)k)), name);
  }
  json_t *stages = json_object_get(doc, "stages");
  cr_assert_eq(json_array_size(stages), 3);
  long long last_plan = -1;
  for (size_t k = 0; k < 3; k++) {
    json_t *s = json_array_get(stages, k);
    cr_assert_str_eq(json_string_value(json_object_get(s, "part")), json_string_value(json_array_get(order, k)));
    cr_assert_str_eq(json_string_value(json_object_get(s, "stability")), "strong");
    cr_assert_eq(json_integer_value(json_object_get(s, "regrasps")), 0);
    json_t *ids = json_object_get(s, "plan_ids");
    cr_assert_eq(json_array_size(ids), 7); // no turn
    last_plan = json_integer_value(json_array_get(ids, 6));
    json_t *pe = json_object_get(s, "pose_error");
    cr_assert_leq(json_number_value(json_object_get(pe, "position")), 0.002);
    cr_assert_leq(json_number_value(json_object_get(pe, "angle")), 0.0175);
    cr_assert(json_is_object(json_object_get(s, "grasp")));
  }
  json_t *fe = json_object_get(doc, "final_error");
  cr_assert_leq(json_number_value(json_object_get(fe, "position")), 0.002);
  cr_assert_gt(json_integer_value(json_object_get(doc, "lcp_solves")), 0);
  cr_assert(json_is_number(json_object_get(doc, "seconds")));
  cr_assert(json_is_true(json_object_get(doc, "replay_verified")));
  // Independently of the sequence's own bookkeeping: the last stored state
  // holds the three blocks (13 numbers each, ground fixed) at the tower's
  // design positions to 2 mm, upright.
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  double x[3 * 13];
  last_state(h, last_plan, x, 3 * 13);
  for (int k = 0; k < 3; k++) {
    const double *b = x + 13 * k;
    cr_assert_leq(hypot(b[0], b[1]), 0.002, "block%d at %g %g", k, b[0], b[1]);
    cr_assert_float_eq(b[2], 0.02 + 0.04 * k, 0.002);
    cr_assert_geq(fabs(b[3]), cos(0.0175 / 2));
  }
  sqlite3_stmt *q;
  cr_assert_eq(sqlite3_prepare_v2(h, "SELECT count(*), sum(certified), min(stability), max(stability)"
                                     " FROM assembly_stages", -1, &q, NULL), SQLITE_OK);
  cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
  cr_assert_eq(sqlite3_column_int(q, 0), 3);
  cr_assert_eq(sqlite3_column_int(q, 1), 3);
  cr_assert_str_eq((const char *)sqlite3_column_text(q, 2), "strong");
  cr_assert_str_eq((const char *)sqlite3_column_text(q, 3), "strong");
  sqlite3_finalize(q);
  sqlite3_close(h);
  json_decref(doc);
  // complan replay re-simulates a phase plan bitwise from the database.
  char id[32], *out, *err;
  snprintf(id, sizeof id, "%lld", last_plan);
  const char *rv[] = {"complan", "replay", "--db", db, "--plan", id, "--verify", NULL};
  int rc = cpt_run(rv, &out, &err);
  cr_assert_eq(rc, 0, "%s%s", out, err);
  free(out);
  free(err);
  synth_remove_db(db);
}

static void bad(const char *text, const char *where) {
  char *db = temp_db();
  char *file = cpt_temp_file(text, ".json");
  const char *argv[] = {"complan", "assemble", file, "--db", db, "--json", NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(argv, &out, &err), 2, "%s: %s", text, err);
  cr_assert_str_eq(out, "");
  char expect[512];
  snprintf(expect, sizeof expect, "%s: %s:", file, where);
  cr_assert(strstr(err, expect), "expected \"%s\" in: %s", expect, err);
  cr_assert_neq(access(db, F_OK), 0, "nothing written");
  free(out);
  free(err);
  unlink(file);
  free(file);
  synth_remove_db(db);
}

#define SCENE "{\"bodies\": [{\"name\": \"t\", \"fixed\": true, \"shape\": {\"type\": \"plane\", \"normal\": [0,0,1], \"offset\": 0}}," \
              " {\"name\": \"b\", \"mass\": 0.1, \"shape\": {\"type\": \"box\", \"size\": [0.04,0.04,0.04]}, \"position\": [0,0,0.02]}]}"
#define ROBOT "\"robot\": {\"type\": \"parallel_gripper\"}"

Test(sequence, bad_tasks_exit_2_with_json_path) {
  bad("{\"assembly\": " SCENE ", " ROBOT "}", "staging");
  bad("{\"assembly\": " SCENE ", \"staging\": {\"b\": {\"position\": [0.1, 0, 0.02]}, \"c\": {\"position\": [0,0,0]}}, " ROBOT "}",
      "staging.c");
  bad("{\"assembly\": " SCENE ", \"staging\": {\"b\": {\"position\": [0.1, 0]}}, " ROBOT "}", "staging.b.position");
  bad("{\"assembly\": " SCENE ", \"staging\": {\"b\": {\"position\": [0.1, 0, 0.02]}},"
      " \"robot\": {\"type\": \"panda\"}}", "robot.type");
  bad("{\"assembly\": " SCENE ", \"staging\": {\"b\": {\"position\": [0.1, 0, 0.02]}}, " ROBOT ","
      " \"tolerance\": {\"position\": -1}}", "tolerance.position");
  bad("{\"assembly\": " SCENE ", \"staging\": {\"b\": {\"position\": [0.1, 0, 0.02]}}, "
      "\"robot\": {\"type\": \"parallel_gripper\", \"finger\": [0.01, 0, 0.02]}}", "robot.finger");
  bad("{\"assembly\": {\"bodies\": [{\"name\": \"b\", \"mass\": -1, \"shape\": {\"type\": \"box\", \"size\": [1,1,1]}}]},"
      " \"staging\": {}, " ROBOT "}", "assembly.bodies[0].mass");
  bad("{\"assembly\": " SCENE ", \"staging\": {\"b\": {\"position\": [0.1, 0, 0.02]}}, " ROBOT ", \"extra\": 1}",
      "extra");  // "temporary": an array of part names, each once, staged as designed,
  // and at least one part left that stays
#define STAGED_B "\"staging\": {\"b\": {\"position\": [0.1, 0, 0.02]}}, "
  bad("{\"assembly\": " SCENE ", " STAGED_B ROBOT ", \"temporary\": \"b\"}", "temporary");
  bad("{\"assembly\": " SCENE ", " STAGED_B ROBOT ", \"temporary\": [1]}", "temporary[0]");
  bad("{\"assembly\": " SCENE ", " STAGED_B ROBOT ", \"temporary\": [\"c\"]}", "temporary[0]");
  bad("{\"assembly\": " SCENE ", " STAGED_B ROBOT ", \"temporary\": [\"b\", \"b\"]}", "temporary[1]");
  bad("{\"assembly\": " SCENE ", " STAGED_B ROBOT ", \"temporary\": [\"b\"]}", "temporary");
  bad("{\"assembly\": " SCENE ", \"staging\": {\"b\": {\"position\": [0.1, 0, 0.02], \"orientation\": [0, 1, 0, 0]}}, "
      ROBOT ", \"temporary\": [\"b\"]}", "temporary[0]");
  bad("{\"assembly\": " SCENE ", " STAGED_B ROBOT ", \"limits\": {\"stability\": 0}}", "limits.stability");
  bad("{\"assembly\": " SCENE ", " STAGED_B ROBOT ", \"limits\": {\"stability_nodes\": 0}}", "limits.stability_nodes");
  bad("{\"assembly\": " SCENE ", " STAGED_B ROBOT ", \"limits\": {\"stability_nodes\": 2.5}}", "limits.stability_nodes");
#undef STAGED_B
}

// The peg goes into a hole with 1 mm of clearance per side: grasps at the
// peg's centre are refused (a finger would meet the hole's walls on the
// way down), the grasp near its top places it within the 1 mm tolerance.
Test(sequence, peg_inserted_with_the_top_grasp) {
  char *db = temp_db(), path[4096];
  const char *root = getenv("CP_SOURCE_ROOT");
  snprintf(path, sizeof path, "%s/planner/tasks/assembly/peg_hole.json", root ? root : ".");
  const char *argv[] = {"complan", "assemble", path, "--db", db, "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "solved");
  json_t *s = json_array_get(json_object_get(doc, "stages"), 0);
  cr_assert_float_eq(json_number_value(json_object_get(json_object_get(s, "grasp"), "offset")),
                     0.04 - 0.012 - 0.002, 1e-12);
  int refused = 0;
  size_t i;
  json_t *c;
  json_array_foreach(json_object_get(s, "candidates"), i, c) {
    const json_t *r = json_object_get(c, "reason");
    if (json_number_value(json_object_get(c, "offset")) == 0.0) {
      cr_assert(r && strstr(json_string_value(r), "finger would meet"));
      refused++;
    }
  }
  cr_assert_eq(refused, 2);
  cr_assert_leq(json_number_value(json_object_get(json_object_get(s, "pose_error"), "position")), 0.001);
  cr_assert(json_is_true(json_object_get(doc, "replay_verified")));
  json_decref(doc);
  synth_remove_db(db);
}

/* The turn phase's goal holds the part (docs/assembly.md, "The phases"):
 * the stored turn plan (plan_id) ends with both fingers touching the bar
 * above everything; the same state with the bar dropped on the table in
 * its goal orientation, at rest and touching no finger, meets the
 * orientation-only goal of before but not the turn's. */
static void assert_turn_goal_holds_the_part(const char *db, long long plan_id) {
  cp_store *st;
  char msg[512];
  cr_assert_eq(cp_store_open(db, 1, &st, msg, sizeof msg), CP_STORE_OK, "%s", msg);
  cp_replay *r;
  cp_error e;
  cr_assert_eq(cp_replay_open(st, plan_id, &r, &e), CP_REPLAY_OK, "%s", e.msg);
  const cp_task *t = cp_replay_task(r);
  cr_assert_eq(t->n_phases, 1);
  const cp_goal *g = &t->phases[0];
  cr_assert_eq(g->n_bodies, 1);
  cr_assert_eq(g->n_contacts, 2, "both fingers");
  cr_assert(g->bodies[0].has_orientation && g->bodies[0].has_box);
  // everything's top: 6 cm (the bar standing, staged and designed); its
  // half height upright 3 cm; half the 2 cm clearance
  cr_assert_float_eq(g->bodies[0].lo[2], 0.06 + 0.03 + 0.01, 1e-9);
  cp_state_layout l;
  cr_assert_eq(cp_state_layout_init(&l, &t->scene), 0);
  const int n = l.n + 1 + t->pairs.n, at = cp_state_body_at(&l, g->bodies[0].body_index);
  double *x = calloc((size_t)n, sizeof *x), *y = calloc((size_t)n, sizeof *y);
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  last_state(h, plan_id, x, n);
  sqlite3_close(h);
  const cp_goal_view view = {&l, t->angle_scale, t->res_position};
  cr_assert(cp_goal_met(g, &view, x, x + l.n + 1), "the turn ended holding the bar");
  cr_assert_eq(x[l.n + 1], 1);
  cr_assert_eq(x[l.n + 2], 1);
  // dropped: on the table (z = its half height), in the goal orientation,
  // at rest, out of the fingers
  memcpy(y, x, sizeof *x * (size_t)n);
  y[at + 2] = 0.03;
  memcpy(y + at + 3, g->bodies[0].orientation, sizeof *y * 4);
  for (int k = 7; k < 13; k++) y[at + k] = 0;
  y[l.n + 1] = y[l.n + 2] = 0;
  cr_assert_not(cp_goal_met(g, &view, y, y + l.n + 1), "the dropped bar is no turn");
  // held again but low, touching the table: refused as well
  y[l.n + 1] = y[l.n + 2] = 1;
  cr_assert_not(cp_goal_met(g, &view, y, y + l.n + 1));
  // still high but out of the fingers: refused
  memcpy(y, x, sizeof *x * (size_t)n);
  y[l.n + 1] = 0;
  cr_assert_not(cp_goal_met(g, &view, y, y + l.n + 1));
  // the goal of before (orientation only) took the dropped bar
  json_t *old = json_pack("{s:s, s:[f,f,f,f], s:f}", "body", g->bodies[0].body, "orientation",
                          g->bodies[0].orientation[0], g->bodies[0].orientation[1], g->bodies[0].orientation[2],
                          g->bodies[0].orientation[3], "angle_tolerance", g->bodies[0].angle_tolerance);
  cp_goal og;
  cp_goal_pairs pairs = {0};
  cr_assert_eq(cp_goal_parse(old, "goal", &t->scene, &pairs, &og, &e), 0, "%s", e.msg);
  memcpy(y, x, sizeof *x * (size_t)n);
  y[at + 2] = 0.03;
  memcpy(y + at + 3, g->bodies[0].orientation, sizeof *y * 4);
  cr_assert(cp_goal_met(&og, &view, y, NULL));
  cp_goal_free(&og);
  cp_goal_pairs_free(&pairs);
  json_decref(old);
  free(x);
  free(y);
  cp_state_layout_free(&l);
  cp_replay_close(r);
  cp_store_close(st);
}

// A bar staged upside down (180 degrees about x) is grasped across x (the
// axis of that rotation), lifted, turned by the wrist, and placed upright:
// eight phases, the final state read back from the database upright. The
// turn's goal required the bar held (above).
Test(sequence, upside_down_part_turned) {
  char *db = temp_db();
  json_t *doc = run_task("bar_turn_scene.json",
                         "\"staging\": {\"bar\": {\"position\": [0.1, -0.05, 0.03], \"orientation\": [0, 1, 0, 0]}},"
                         " \"robot\": {\"type\": \"parallel_gripper\", \"finger\": [0.01, 0.03, 0.024]}",
                         db);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "solved",
                   "%s", json_string_value(json_object_get(doc, "message")));
  json_t *s = json_array_get(json_object_get(doc, "stages"), 0);
  json_t *g = json_object_get(s, "grasp");
  cr_assert_str_eq(json_string_value(json_object_get(g, "axis")), "x");
  cr_assert_float_eq(fabs(json_number_value(json_object_get(g, "turn"))), 3.14159265358979323846, 1e-9);
  json_t *ids = json_object_get(s, "plan_ids");
  cr_assert_eq(json_array_size(ids), 8);
  cr_assert_leq(json_number_value(json_object_get(json_object_get(s, "pose_error"), "angle")), 0.0175);
  cr_assert(json_is_true(json_object_get(doc, "replay_verified")));
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  double x[13];
  last_state(h, json_integer_value(json_array_get(ids, 7)), x, 13);
  cr_assert_geq(fabs(x[3]), cos(0.0175 / 2), "q = %g %g %g %g", x[3], x[4], x[5], x[6]);
  cr_assert_float_eq(x[2], 0.03, 0.002);
  sqlite3_close(h);
  json_t *ph = json_object_get(s, "phases");
  cr_assert_eq(json_array_size(ph), 8);
  cr_assert_str_eq(json_string_value(json_array_get(ph, 3)), "turn");
  assert_turn_goal_holds_the_part(db, json_integer_value(json_array_get(ids, 3)));
  json_decref(doc);
  synth_remove_db(db);
}

// The bundled regrasp: the bar is staged lying along x with its 3 cm side
// vertical; no one turn about a horizontal face axis stands it up, so it is
// set down once in between (one regrasp: two moves, 16 plans) and then
// placed upright within the tolerances.
Test(sequence, bar_regrasped_through_an_intermediate_pose) {
  char *db = temp_db(), path[4096];
  const char *root = getenv("CP_SOURCE_ROOT");
  snprintf(path, sizeof path, "%s/planner/tasks/assembly/bar_regrasp.json", root ? root : ".");
  const char *argv[] = {"complan", "assemble", path, "--db", db, "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "solved",
                   "%s", json_string_value(json_object_get(doc, "message")));
  json_t *s = json_array_get(json_object_get(doc, "stages"), 0);
  cr_assert_eq(json_integer_value(json_object_get(s, "regrasps")), 1);
  json_t *ids = json_object_get(s, "plan_ids");
  cr_assert_eq(json_array_size(ids), 16);
  cr_assert_str_eq(json_string_value(json_object_get(s, "stability")), "strong");
  cr_assert_leq(json_number_value(json_object_get(json_object_get(s, "pose_error"), "position")), 0.002);
  cr_assert(json_is_true(json_object_get(doc, "replay_verified")));
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  double x[13];
  // After the first move (8 plans) the bar rests in between, turned away
  // from both its staged and its design orientation; at the end upright.
  last_state(h, json_integer_value(json_array_get(ids, 7)), x, 13);
  cr_assert_lt(fabs(x[3] * 0.5 + x[4] * 0.5 + x[5] * 0.5 + x[6] * 0.5), cos(0.1));
  cr_assert_lt(fabs(x[3]), cos(0.1));
  last_state(h, json_integer_value(json_array_get(ids, 15)), x, 13);
  // the stored phases: two moves of eight, each with its turn
  cr_assert_eq(synth_query_int(h, "SELECT count(*) FROM assembly_phases WHERE move = 0 AND step < 8"), 8);
  cr_assert_eq(synth_query_int(h, "SELECT count(*) FROM assembly_phases WHERE move = 1 AND step >= 8"), 8);
  cr_assert_eq(synth_query_int(h, "SELECT count(*) FROM assembly_phases WHERE phase = 'turn' AND step % 8 = 3"), 2);
  cr_assert_geq(fabs(x[3]), cos(0.0175 / 2), "q = %g %g %g %g", x[3], x[4], x[5], x[6]);
  cr_assert_float_eq(x[2], 0.03, 0.002);
  sqlite3_close(h);
  json_decref(doc);
  synth_remove_db(db);
}

// One database for both forms: a file written by `assemble SCENE` (its
// sequence tables empty) takes a sequence and keeps its scene run.
Test(sequence, scene_database_gains_sequence_tables) {
  char *db = temp_db();
  const char *root = getenv("CP_SOURCE_ROOT");
  char scene[4096];
  snprintf(scene, sizeof scene, "%s/planner/tasks/assembly/bar_turn_scene.json", root ? root : ".");
  const char *a1[] = {"complan", "assemble", scene, "--db", db, "--json", NULL};
  json_t *doc = cpt_run_json(a1, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "found");
  json_decref(doc);
  sqlite3 *h;
  sqlite3_stmt *q;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  // since schema version 3 the sequence tables are the store's: there, empty
  cr_assert_eq(sqlite3_prepare_v2(h, "SELECT count(*) FROM assembly_sequences", -1, &q, NULL), SQLITE_OK);
  cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
  cr_assert_eq(sqlite3_column_int(q, 0), 0);
  sqlite3_finalize(q);
  sqlite3_close(h);
  doc = run_task("bar_turn_scene.json",
                 "\"staging\": {\"bar\": {\"position\": [0.1, 0.05, 0.03]}},"
                 " \"robot\": {\"type\": \"parallel_gripper\", \"finger\": [0.01, 0.03, 0.024]}",
                 db);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "solved");
  cr_assert_eq(json_integer_value(json_object_get(doc, "sequence_id")), 1);
  json_decref(doc);
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  cr_assert_eq(sqlite3_prepare_v2(h, "SELECT (SELECT count(*) FROM assembly_runs), (SELECT count(*) FROM"
                                     " assembly_sequences), (SELECT count(*) FROM assembly_stages)", -1, &q, NULL),
               SQLITE_OK);
  cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
  cr_assert_eq(sqlite3_column_int(q, 0), 1);
  cr_assert_eq(sqlite3_column_int(q, 1), 1);
  cr_assert_eq(sqlite3_column_int(q, 2), 1);
  sqlite3_finalize(q);
  sqlite3_close(h);
  synth_remove_db(db);
}

// The library call behind `complan assemble TASK` (planner/replay/
// sequence_run.h): the CLI's document exactly (timing aside), verification
// off reported as null, a bad task and an unusable database refused before
// anything is written.
static json_t *without_seconds(const char *text) {
  json_t *doc = json_loads(text, 0, NULL);
  cr_assert(doc, "the document parses: %s", text);
  cr_assert(json_is_number(json_object_get(doc, "seconds")));
  json_object_del(doc, "seconds");
  return doc;
}

Test(sequence, run_api_gives_the_commands_document) {
  char *db = temp_db(), *db2 = temp_db();
  const char *argv[] = {"complan", "assemble", tower_task(), "--db", db, "--json", NULL};
  json_t *cli = cpt_run_json(argv, 0);
  json_object_del(cli, "seconds");
  size_t len;
  char *text = cpt_read_file(tower_task(), &len);
  cp_sequence_run_options o = cp_sequence_run_defaults();
  cr_assert(o.verify == 1 && o.path == NULL);
  o.path = tower_task();
  cp_sequence_run_result out;
  cp_error err;
  cr_assert_eq(cp_sequence_run(text, len, db2, &o, &out, &err), CP_SEQUENCE_RUN_ANSWERED);
  cr_assert(out.json && out.verified && !out.store_failed);
  cr_assert_eq(out.sequence, CP_SEQUENCE_SOLVED);
  cr_assert_eq(out.parts, 3);
  cr_assert_eq(out.sequence_id, 1);
  json_t *lib = without_seconds(out.json);
  cr_assert(json_equal(lib, cli), "library: %s", out.json);
  json_decref(lib);
  free(out.json);
  // verification off: the same plans, "replay_verified" null, stored again
  o.verify = 0;
  cr_assert_eq(cp_sequence_run(text, len, db2, &o, &out, &err), CP_SEQUENCE_RUN_ANSWERED);
  lib = without_seconds(out.json);
  cr_assert(json_is_null(json_object_get(lib, "replay_verified")));
  cr_assert_eq(json_integer_value(json_object_get(lib, "sequence_id")), 2);
  cr_assert_eq(out.sequence_id, 2);
  json_object_del(lib, "replay_verified");
  json_object_del(lib, "sequence_id");
  json_object_del(lib, "stages"); // plan ids continue from the first run's
  json_object_del(cli, "replay_verified");
  json_object_del(cli, "sequence_id");
  json_object_del(cli, "stages");
  cr_assert(json_equal(lib, cli), "library: %s", out.json);
  json_decref(lib);
  free(out.json);
  json_decref(cli);
  free(text);
  synth_remove_db(db);
  synth_remove_db(db2);
}

Test(sequence, run_api_refuses_bad_task_and_database) {
  char *db = temp_db();
  const char *task = "{\"assembly\": " SCENE ", \"staging\": {\"b\": {\"position\": [0.1, 0]}}, " ROBOT "}";
  cp_sequence_run_result out;
  cp_error err;
  cr_assert_eq(cp_sequence_run(task, strlen(task), db, NULL, &out, &err), CP_SEQUENCE_RUN_BAD_TASK);
  cr_assert_eq(err.code, CP_ERR_INPUT);
  cr_assert_str_eq(err.where, "staging.b.position");
  cr_assert(!out.json && out.sequence_id == -1);
  cr_assert_neq(access(db, F_OK), 0, "nothing written");
  // a file that is not a complan database: refused, left as it was
  char *notdb = cpt_temp_file("not a database\n", ".sqlite");
  const char *good = "{\"assembly\": " SCENE ", \"staging\": {\"b\": {\"position\": [0.1, 0, 0.02]}}, " ROBOT "}";
  cr_assert_eq(cp_sequence_run(good, strlen(good), notdb, NULL, &out, &err), CP_SEQUENCE_RUN_BAD_STORE);
  cr_assert_eq(err.code, CP_ERR_INPUT);
  cr_assert(strstr(err.msg, notdb), "the message names the file: %s", err.msg);
  cr_assert(!out.json);
  size_t len;
  char *kept = cpt_read_file(notdb, &len);
  cr_assert_str_eq(kept, "not a database\n");
  free(kept);
  // a database in a folder that does not exist: an I/O failure
  cr_assert_eq(cp_sequence_run(good, strlen(good), "/nonexistent-cp/x.sqlite", NULL, &out, &err),
               CP_SEQUENCE_RUN_BAD_STORE);
  cr_assert_eq(err.code, CP_ERR_IO);
  unlink(notdb);
  free(notdb);
  synth_remove_db(db);
}
