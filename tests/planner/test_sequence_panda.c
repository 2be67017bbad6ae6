// The Panda hand as the assembly gripper (docs/assembly.md, "The Panda
// hand"): its grasps' hold factors against the friction limits with its
// rubber pads, a part wider than the hand opens refused with the reason,
// a part carried and placed by the hand, the bundled tower built and
// replayed bitwise, bad robot keys refused with their JSON path.
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/mesh.h"
#include "models/urdf.h"
#include "planner/sequence/sequence.h"
#include "planner/sequence/sequence_impl.h"
#include "synth.h"
#include "tests/support.h"

static const char *root(void) {
  const char *r = getenv("CP_SOURCE_ROOT");
  return r ? r : ".";
}

/* The robot object of the Panda hand (absolute paths: the task is inline). */
static const char *panda(char *buf, size_t n, const char *extra) {
  snprintf(buf, n,
           "{\"type\": \"panda_hand\", \"urdf\": \"%s/tests/data/robots/example-robot-data/robots/panda_description/"
           "urdf/panda.urdf\", \"packages\": {\"example-robot-data\": \"%s/tests/data/robots/example-robot-data\"}%s}",
           root(), root(), extra);
  return buf;
}

/* One 0.1 kg cube of side s staged 15 cm along -y of its design pose (the
 * transport along y), held by the Panda hand with friction mu. */
static const char *cube_task(double s, double mu, char *buf, size_t n) {
  char robot[1024], extra[64];
  snprintf(extra, sizeof extra, ", \"mu\": %.17g", mu);
  snprintf(buf, n,
           "{\"assembly\": {\"bodies\": ["
           "{\"name\": \"table\", \"fixed\": true, \"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1], \"offset\": 0}},"
           "{\"name\": \"cube\", \"mass\": 0.1, \"shape\": {\"type\": \"box\", \"size\": [%.17g, %.17g, %.17g]},"
           " \"position\": [0, 0, %.17g]}]},"
           " \"staging\": {\"cube\": {\"position\": [0, -0.15, %.17g]}},"
           " \"robot\": %s, \"transport\": {\"acceleration\": 25}}",
           s, s, s, s / 2, s / 2, panda(robot, sizeof robot, extra));
  return buf;
}

// The hand's limits come from the URDF: 0.04 m per finger (0.08 m
// opening), the 100 N effort limit; the pads are the URDF's rubber tip
// boxes, not cut to the part. The grasp LP's factors: across x (normals
// +-x) weight and transport load (along y) both lie in the faces,
// 2 mu F / (m max(g, a)); across y the load runs along the finger axis,
// 2 mu F / (m g + mu (m + 2 mf) a) (mf = 0.05 kg the LP's sliding finger),
// for the grasps at the cube's centre.
Test(sequence_panda, grasp_holds_the_weight_by_the_friction_limits) {
  char text[4096];
  cp_sequence_task t;
  cp_error err;
  const double mu = 0.3, F = 5, m = 0.1, mf = 0.05, g = 9.81, a = 25;
  cube_task(0.04, mu, text, sizeof text);
  cr_assert_eq(cp_sequence_task_parse(text, strlen(text), NULL, &t, &err), 0, "%s: %s", err.where, err.msg);
  cr_assert(t.gripper.panda);
  cr_assert_float_eq(t.gripper.max_opening, 0.08, 1e-15);
  cr_assert_float_eq(t.gripper.finger_effort, 100, 1e-12);
  cr_assert_float_eq(t.gripper.tcp, 0.1034, 1e-15);
  cp_sequence_grasp gr[6];
  const int n = cp_sequence_grasps(&t, 0, NULL, NULL, 0, gr, 6, &err);
  cr_assert_eq(n, 4, "%s", err.msg);
  for (int k = 0; k < n; k++) {
    cr_assert_float_eq(gr[k].finger[2], 0.0185, 1e-15);
    cr_assert_float_eq(gr[k].finger[0], 0.0152, 1e-15);
    const double expect = gr[k].axis == 0 ? 2 * mu * F / (m * a) : 2 * mu * F / (m * g + mu * (m + 2 * mf) * a);
    // at the centre the closed form; near the top (8.75 mm up) the load
    // along the axis also turns the cube in the pads: no more than that
    if (gr[k].offset == 0.0)
      cr_assert_float_eq(gr[k].hold, expect, 0.004, "axis %d: %g vs %g", gr[k].axis, gr[k].hold, expect);
    else
      cr_assert_leq(gr[k].hold, expect + 0.004, "axis %d: %g vs %g", gr[k].axis, gr[k].hold, expect);
    // across y holds 1.4x the load, across x only 1.2x: both usable
    cr_assert(!gr[k].rejected, "%s", gr[k].reason);
  }
  cr_assert_eq(gr[0].axis, 1);
  cp_sequence_task_free(&t);
}

// The cube carried by the hand: the grasp's weight is held through the
// lift and the 15 cm transport in the simulation (each step checked
// against Newton-Euler by the step check), and the cube ends at its
// design pose within the tolerance, strong; 7 phases.
Test(sequence_panda, cube_carried_and_placed) {
  char text[4096], *db = synth_temp_db();
  cp_sequence_task t;
  cp_error err;
  cube_task(0.04, 0.8, text, sizeof text);
  cr_assert_eq(cp_sequence_task_parse(text, strlen(text), NULL, &t, &err), 0, "%s: %s", err.where, err.msg);
  cp_store *st;
  char msg[600];
  cr_assert_eq(cp_store_open(db, 0, &st, msg, sizeof msg), CP_STORE_OK, "%s", msg);
  cp_sequence_result res;
  cr_assert_eq(cp_sequence_plan(st, &t, &res, &err), CP_SEQUENCE_SOLVED, "%s", res.message);
  const cp_sequence_stage *s = &res.stages[0];
  cr_assert(s->certified);
  cr_assert_eq(s->n_plans, 7);
  cr_assert_leq(s->position_error, t.tol_position);
  cr_assert_leq(s->angle_error, t.tol_angle);
  cr_assert(s->stability == CP_STABILITY_STRONG);
  cp_sequence_result_free(&res);
  cp_store_close(st);
  cp_sequence_task_free(&t);
  synth_remove_db(db);
}

// A 9 cm cube: wider than the hand opens (0.08 m with the clearance on
// either side); every grasp refused with the reason, no sequence.
Test(sequence_panda, part_wider_than_the_hand_refused) {
  char text[4096], *db = synth_temp_db();
  cp_sequence_task t;
  cp_error err;
  cube_task(0.09, 0.8, text, sizeof text);
  cr_assert_eq(cp_sequence_task_parse(text, strlen(text), NULL, &t, &err), 0, "%s: %s", err.where, err.msg);
  cp_sequence_grasp gr[6];
  const int n = cp_sequence_grasps(&t, 0, NULL, NULL, 0, gr, 6, &err);
  cr_assert_geq(n, 2);
  for (int k = 0; k < n; k++) {
    cr_assert(gr[k].rejected);
    cr_assert(strstr(gr[k].reason, "0.09 m wide") && strstr(gr[k].reason, "the Panda hand opens 0.08 m"), "%s",
              gr[k].reason);
  }
  cp_sequence_task_free(&t);
  char *file = cpt_temp_file(text, ".json");
  const char *argv[] = {"complan", "assemble", file, "--db", db, "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "none");
  const char *m = json_string_value(json_object_get(doc, "message"));
  cr_assert(m && strstr(m, "cube"), "%s", m);
  json_decref(doc);
  unlink(file);
  free(file);
  synth_remove_db(db);
}

// The bundled tower built by the hand: every stage strong, within 2 mm /
// 1 deg, and the stored sequence replays bitwise and chained.
Test(sequence_panda, tower_built_and_replayed_bitwise) {
  char *db = synth_temp_db(), path[4096];
  snprintf(path, sizeof path, "%s/planner/tasks/assembly/tower3_panda.json", root());
  const char *argv[] = {"complan", "assemble", path, "--db", db, "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "solved");
  json_t *stages = json_object_get(doc, "stages");
  cr_assert_eq(json_array_size(stages), 3);
  for (size_t i = 0; i < 3; i++) {
    json_t *s = json_array_get(stages, i);
    cr_assert_str_eq(json_string_value(json_object_get(s, "stability")), "strong");
    cr_assert_eq(json_array_size(json_object_get(s, "plan_ids")), 7);
  }
  json_t *fe = json_object_get(doc, "final_error");
  cr_assert_leq(json_number_value(json_object_get(fe, "position")), 0.002);
  cr_assert_leq(json_number_value(json_object_get(fe, "angle")), 0.0174533);
  cr_assert(json_is_true(json_object_get(doc, "replay_verified")));
  synth_assert_sequence_replays(db, doc, 21);
  json_decref(doc);
  synth_remove_db(db);
}

static void bad(const char *robot, const char *where, const char *what) {
  char text[4096], *db = synth_temp_db();
  snprintf(text, sizeof text,
           "{\"assembly\": {\"bodies\": [{\"name\": \"b\", \"mass\": 0.1, \"shape\": {\"type\": \"box\", \"size\": "
           "[0.04, 0.04, 0.04]}, \"position\": [0, 0, 0.02]}]}, \"staging\": {\"b\": {\"position\": [0.1, 0, 0.02]}},"
           " \"robot\": %s}", robot);
  char *file = cpt_temp_file(text, ".json");
  const char *argv[] = {"complan", "assemble", file, "--db", db, "--json", NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(argv, &out, &err), 2, "%s: %s", text, err);
  cr_assert_str_eq(out, "");
  char expect[512];
  snprintf(expect, sizeof expect, "%s: %s:", file, where);
  cr_assert(strstr(err, expect), "expected \"%s\" in: %s", expect, err);
  cr_assert(strstr(err, what), "expected \"%s\" in: %s", what, err);
  cr_assert_neq(access(db, F_OK), 0, "nothing written");
  free(out);
  free(err);
  unlink(file);
  free(file);
  synth_remove_db(db);
}

Test(sequence_panda, bad_robot_keys_exit_2_with_json_path) {
  char r[2048];
  bad("{\"type\": \"panda_hand\"}", "robot.urdf", "expected");
  bad("{\"type\": \"panda_hand\", \"urdf\": \"/nonexistent/panda.urdf\"}", "robot.urdf", "/nonexistent/panda.urdf");
  char other[1024];
  snprintf(other, sizeof other, "{\"type\": \"panda_hand\", \"urdf\": \"%s/models/scenes/gripper.urdf\"}", root());
  bad(other, "robot.urdf", "panda_hand");
  bad(panda(r, sizeof r, ", \"finger\": [0.01, 0.02, 0.02]"), "robot.finger", "");
  bad(panda(r, sizeof r, ", \"squeeze\": 150"), "robot.squeeze", "effort limit 100 N");
  bad(panda(r, sizeof r, ", \"mu\": -1"), "robot.mu", "> 0");
  bad("{\"type\": \"panda_hand\", \"urdf\": \"x.urdf\", \"packages\": [1]}", "robot.packages", "object");
  bad("{\"type\": \"kuka_hand\"}", "robot.type", "panda_hand");
}

// A fixed pillar 2 cm beside the cube's design place along x, 12 cm tall:
// held across x the fingers (2.64 cm out from the faces) clear it, but the
// palm (20.8 cm along the finger axis, 3.7 cm above the pads' centre) would
// come down on it; held across y the palm is 6.3 cm wide across it and
// clear. The x grasps are refused for the palm, the y grasps kept.
Test(sequence_panda, palm_must_not_meet_a_neighbour) {
  char text[4096], robot[1024];
  snprintf(text, sizeof text,
           "{\"assembly\": {\"bodies\": ["
           "{\"name\": \"table\", \"fixed\": true, \"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1], \"offset\": 0}},"
           "{\"name\": \"pillar\", \"fixed\": true, \"shape\": {\"type\": \"box\", \"size\": [0.02, 0.02, 0.12]},"
           " \"position\": [0.07, 0, 0.06]},"
           "{\"name\": \"cube\", \"mass\": 0.1, \"shape\": {\"type\": \"box\", \"size\": [0.04, 0.04, 0.04]},"
           " \"position\": [0, 0, 0.02]}]},"
           " \"staging\": {\"cube\": {\"position\": [0, -0.15, 0.02]}}, \"robot\": %s}",
           panda(robot, sizeof robot, ""));
  cp_sequence_task t;
  cp_error err;
  cr_assert_eq(cp_sequence_task_parse(text, strlen(text), NULL, &t, &err), 0, "%s: %s", err.where, err.msg);
  cp_sequence_grasp gr[6];
  const int n = cp_sequence_grasps(&t, 0, NULL, NULL, 0, gr, 6, &err);
  cr_assert_eq(n, 4);
  for (int k = 0; k < n; k++) {
    cr_assert_eq(gr[k].rejected, gr[k].axis == 0, "axis %d: %s", gr[k].axis, gr[k].reason);
    if (gr[k].axis == 0) cr_assert(strstr(gr[k].reason, "palm"), "%s", gr[k].reason);
  }
  cp_sequence_task_free(&t);
}

// The bar of bar_turn.json (2 x 3 x 6 cm) staged lying, to stand: the
// wrist turns it -90 deg about the grasp axis (y), and the Panda's palm
// with it. Held at the bar's centre (3 cm above its bottom once standing)
// the palm's box (3.17 cm either side across the grasp axis) would reach
// 1.7 mm below the bar's bottom, into the ground: refused. Held high, the
// pad's centre 2 mm + half the pad's width (1.75 cm) inside the bar's end,
// i.e. 3 - 0.2 - 0.875 = 1.925 cm along +x from its centre as staged (the
// direction the turn takes straight up), the grasp point is 4.925 cm above
// the bottom once standing and the palm's lowest point 4.925 - 3.17 =
// 1.755 cm above the ground, more than the 5 mm margin: kept.
Test(sequence_panda, turned_palm_below_the_part_refused_grasp_held_high_kept) {
  char text[4096], robot[1024];
  snprintf(text, sizeof text,
           "{\"assembly\": \"%s/planner/tasks/assembly/bar_turn_scene.json\","
           " \"staging\": {\"bar\": {\"position\": [0.12, 0.05, 0.01], \"orientation\": [0.7071067811865476, 0,"
           " 0.7071067811865476, 0]}}, \"robot\": %s}",
           root(), panda(robot, sizeof robot, ""));
  cp_sequence_task t;
  cp_error err;
  cr_assert_eq(cp_sequence_task_parse(text, strlen(text), NULL, &t, &err), 0, "%s: %s", err.where, err.msg);
  cp_sequence_grasp gr[6];
  const int n = cp_sequence_grasps(&t, 0, NULL, NULL, 0, gr, 6, &err);
  int palm = 0, high = 0;
  for (int k = 0; k < n; k++) {
    palm += strstr(gr[k].reason, "turned, the Panda's palm would reach 1.7 mm below") != NULL;
    if (gr[k].rejected) continue;
    high++;
    cr_assert_eq(gr[k].axis, 1);
    cr_assert_float_eq(gr[k].shift[0], 0.03 - 0.002 - 0.5 * CP_SEQ_PANDA_PAD_W, 1e-12);
    cr_assert_float_eq(gr[k].shift[1], 0, 1e-12);
    cr_assert_float_eq(gr[k].shift[2], 0, 1e-12);
    cr_assert_float_eq(gr[k].turn, -1.5707963267948966, 1e-9);
    cr_assert_eq(gr[k].offset, 0);
    cr_assert_geq(0.03 + gr[k].shift[0] - CP_SEQ_PANDA_PALM_X, CP_SEQ_PANDA_PALM_MARGIN);
  }
  cr_assert_eq(palm, 1);
  cr_assert_eq(high, 1);
  cp_sequence_task_free(&t);
}

/* The last row of `complan replay --plan ID --csv`: the plan re-simulated
 * from the database; its columns 1..7 are the first free body's pose. */
static void replayed_pose(const char *db, long long plan, double *pose) {
  char id[32], *csv = cpt_temp_file("", ".csv");
  snprintf(id, sizeof id, "%lld", plan);
  const char *argv[] = {"complan", "replay", "--db", db, "--plan", id, "--csv", csv, NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(argv, &out, &err), 0, "%s", err);
  FILE *f = fopen(csv, "r");
  cr_assert(f);
  char line[8192], last[8192] = "";
  while (fgets(line, sizeof line, f)) memcpy(last, line, sizeof line);
  fclose(f);
  char *p = strchr(last, ',');
  for (int i = 0; i < 7; i++) {
    cr_assert(p);
    pose[i] = strtod(p + 1, &p);
  }
  free(out);
  free(err);
  unlink(csv);
  free(csv);
}

// The bundled regrasp for the hand (bar_regrasp_panda.json): a 5 x 6 x 7
// cm block staged with its long axis along x and its 6 cm side up; no one
// turn about a horizontal face axis stands it on its 5 x 6 cm face, and
// every turn must end with the grasp high enough for the turned palm. It
// is set down once in between (one regrasp, 16 plans), every grasp held
// high (a shift, no offset), and placed strong within the tolerances.
// Independently of the run's own numbers: the last plan re-simulated by
// `replay --plan` leaves the block within 2 mm / 1 deg of its design pose
// (0, 0, 0.035, identity), and `complan stability` on the design scene
// with the block at that replayed pose says strong.
Test(sequence_panda, block_regrasped_by_the_hand_and_replayed) {
  char *db = synth_temp_db(), path[4096];
  snprintf(path, sizeof path, "%s/planner/tasks/assembly/bar_regrasp_panda.json", root());
  const char *argv[] = {"complan", "assemble", path, "--db", db, "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "solved", "%s",
                   json_string_value(json_object_get(doc, "message")));
  json_t *s = json_array_get(json_object_get(doc, "stages"), 0);
  cr_assert_eq(json_integer_value(json_object_get(s, "regrasps")), 1);
  cr_assert_str_eq(json_string_value(json_object_get(s, "stability")), "strong");
  json_t *ids = json_object_get(s, "plan_ids"), *g = json_object_get(s, "grasp");
  cr_assert_eq(json_array_size(ids), 16);
  cr_assert(json_is_array(json_object_get(g, "shift")), "the final grasp is held high");
  cr_assert_float_eq(json_number_value(json_object_get(g, "turn")), -1.5707963267948966, 1e-9);
  cr_assert(json_is_true(json_object_get(doc, "replay_verified")));
  synth_assert_sequence_replays(db, doc, 16);
  double x[7];
  replayed_pose(db, json_integer_value(json_array_get(ids, 15)), x);
  const double e = sqrt(x[0] * x[0] + x[1] * x[1] + (x[2] - 0.035) * (x[2] - 0.035));
  const double ang = 2 * acos(fmin(1, fabs(x[3]) / sqrt(x[3] * x[3] + x[4] * x[4] + x[5] * x[5] + x[6] * x[6])));
  cr_assert_leq(e, 0.002, "replayed %g mm from design", 1e3 * e);
  cr_assert_leq(ang, 0.0174533, "replayed %g rad from design", ang);
  char scene[2048];
  snprintf(scene, sizeof scene,
           "{\"gravity\": [0, 0, -9.81], \"friction\": {\"default\": 0.5}, \"touch_tolerance\": 1e-4, \"bodies\": ["
           "{\"name\": \"ground\", \"fixed\": true, \"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1], \"offset\": 0}},"
           "{\"name\": \"block\", \"mass\": 0.1, \"shape\": {\"type\": \"box\", \"size\": [0.05, 0.06, 0.07]},"
           " \"position\": [%.17g, %.17g, %.17g], \"orientation\": [%.17g, %.17g, %.17g, %.17g]}]}",
           x[0], x[1], x[2], x[3], x[4], x[5], x[6]);
  char *file = cpt_temp_file(scene, ".json");
  const char *stab[] = {"complan", "stability", file, "--json", "--node-limit", "2000", NULL};
  json_t *v = cpt_run_json(stab, 0);
  cr_assert_str_eq(json_string_value(json_object_get(v, "kind")), "strong");
  json_decref(v);
  unlink(file);
  free(file);
  json_decref(doc);
  synth_remove_db(db);
}

// The boxes the grasp filter sweeps (sequence_impl.h) against the URDF
// read by models/: the rubber pad's box, every finger box within the
// finger's extent, the hand mesh's bounds within the palm's box (the hand
// is merged into panda_link7; the tool centre point 0.1034 m below it).
Test(sequence_panda, hand_boxes_cover_the_urdf_geometry) {
  char path[4096], pk[4096];
  snprintf(path, sizeof path, "%s/tests/data/robots/example-robot-data/robots/panda_description/urdf/panda.urdf",
           root());
  snprintf(pk, sizeof pk, "%s/tests/data/robots/example-robot-data", root());
  const cp_urdf_package pkg = {"example-robot-data", pk};
  cp_urdf_options o = cp_urdf_defaults();
  o.packages = &pkg;
  o.n_packages = 1;
  cp_urdf_model m;
  cp_error err;
  cr_assert_eq(cp_urdf_load_opts(path, &o, &m, &err), 0, "%s", err.msg);
  int pads = 0, hands = 0;
  for (int k = 0; k < m.chain.n; k++) {
    const cp_link *l = &m.chain.joints[k].link;
    for (int i = -1; i < l->n_extra_shapes; i++) {
      const cp_shape *sh = i < 0 ? &l->shape : &l->extra_shapes[i].shape;
      const double *pos = i < 0 ? l->shape_pos : l->extra_shapes[i].pos;
      if (!strcmp(l->name, "panda_leftfinger") && sh->type == CP_SHAPE_BOX) {
        // every box within the finger's extent out from the pad's face
        // (y = 0) and across (x); the pad itself
        cr_assert_leq(pos[1] + 0.5 * sh->size[1], CP_SEQ_PANDA_FINGER_OUT + 1e-12);
        cr_assert_leq(sh->size[0], CP_SEQ_PANDA_FINGER_W + 1e-12);
        if (fabs(pos[2] - 0.04525) < 1e-9) {
          pads++;
          cr_assert_float_eq(sh->size[0], CP_SEQ_PANDA_PAD_W, 1e-12);
          cr_assert_float_eq(sh->size[1], CP_SEQ_PANDA_PAD_T, 1e-12);
          cr_assert_float_eq(sh->size[2], CP_SEQ_PANDA_PAD_H, 1e-12);
        }
      }
      if (sh->type == CP_SHAPE_MESH && strstr(sh->mesh->path, "hand.stl")) {
        hands++;
        // the mesh in the hand frame (no origin in the URDF); seen from
        // the tool centre point the hand frame is 0.1034 m up, z down
        cr_assert_leq(fmax(-sh->mesh->lo[0], sh->mesh->hi[0]), CP_SEQ_PANDA_PALM_X);
        cr_assert_leq(fmax(-sh->mesh->lo[1], sh->mesh->hi[1]), CP_SEQ_PANDA_PALM_Y);
        cr_assert_geq(0.1034 - sh->mesh->hi[2], CP_SEQ_PANDA_PALM_LO - 1e-4);
        cr_assert_leq(0.1034 - sh->mesh->lo[2], CP_SEQ_PANDA_PALM_HI);
      }
    }
  }
  cr_assert_eq(pads, 1);
  cr_assert_eq(hands, 1);
  cp_urdf_free(&m);
}
