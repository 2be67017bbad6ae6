/* `complan assemble SCENE [--db FILE] [--json] [--directions N]`: a stable
 * assembly sequence (docs/assembly.md). Thin: planner/assembly/assembly.h searches,
 * planner/store/assembly.h writes the run to SQLite. Given an assembly TASK
 * (a file with the key "assembly") it plans and executes the sequence with
 * the gripper instead: planner/sequence/sequence.h plans, planner/store/
 * sequence.h stores, planner/replay/replay.h verifies every phase's plan. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/scene.h"
#include "planner/assembly/assembly.h"
#include "planner/replay/replay.h"
#include "planner/sequence/sequence.h"
#include "planner/store/sequence.h"
#include "planner/store/assembly.h"
#include "planner/view/assembly.h"
#include "planner/cli/commands.h"
#include "planner/cli/flags.h"
#include "planner/cli/output.h"

static const char head[] =
    "Plan an order in which to place the scene's free bodies (the parts) so that\n"
    "every intermediate subassembly is stable (has equilibrium contact forces at\n"
    "rest). The search runs backwards: it removes one part at a time along a\n"
    "collision-free straight line (the part's shape swept with the collision\n"
    "library) from a set of candidate directions, keeping only stable\n"
    "remainders, and memoises subassemblies. Fixed bodies and manipulators stay.\n"
    "\n"
    "Given an assembly TASK instead (a file with the key \"assembly\": the design\n"
    "scene, staging poses, a parallel gripper, tolerances), the sequence is also\n"
    "executed: every part carried by the gripper through planned, simulated\n"
    "phases, every stage certified (docs/assembly.md, \"Assembly tasks\"); it\n"
    "takes --db and --json only.\n"
    "\n";
static const char tail[] =
    "\n"
    "exit status: 0 answered (a sequence, or none exists), 1 undecided (time\n"
    "limit, numerical failure), 2 bad input or usage.\n";

static void show_progress(void *ctx, int explored, int present) {
  (void)ctx;
  if (explored % 16 == 0) fprintf(stderr, "\rassemble: %d subassemblies explored (%d parts)   ", explored, present);
}

/* Every phase plan of the certified stages re-simulated and compared
 * bitwise with the stored nodes: 1 all verified, 0 not (why says which). */
static int verify_plans(cp_store *st, const cp_sequence_result *res, char *why, size_t size) {
  for (int k = 0; k < res->n_stages; k++) {
    const cp_sequence_stage *s = &res->stages[k];
    for (int ph = 0; s->certified && ph < s->n_plans; ph++) {
      cp_replay *r;
      cp_error e;
      if (cp_replay_open(st, s->plan_ids[ph], &r, &e) != CP_REPLAY_OK) {
        snprintf(why, size, "plan %lld: %s", (long long)s->plan_ids[ph], e.msg);
        return 0;
      }
      cp_replay_options o = cp_replay_defaults();
      o.verify = 1;
      cp_replay_result rr;
      cp_replay_status rs = cp_replay_run(r, &o, &rr);
      cp_replay_close(r);
      if (rs != CP_REPLAY_OK || !rr.verified) {
        snprintf(why, size, "plan %lld does not replay: %s", (long long)s->plan_ids[ph],
                 rr.message[0] ? rr.message : rr.first_where);
        return 0;
      }
    }
  }
  return 1;
}

static json_t *grasp_json(const cp_sequence_grasp *g) {
  static const char *const axes[] = {"x", "y", "z"};
  json_t *o = json_object();
  json_object_set_new(o, "axis", json_string(axes[g->axis]));
  json_object_set_new(o, "direction", cp_json_vec(g->dir, 3));
  json_object_set_new(o, "width", cp_json_num(g->width));
  json_object_set_new(o, "offset", cp_json_num(g->offset));
  json_object_set_new(o, "turn", cp_json_num(g->turn));
  json_object_set_new(o, "hold", cp_json_num(g->hold));
  if (g->reason[0]) json_object_set_new(o, "reason", json_string(g->reason));
  return o;
}

static json_t *error_json(double position, double angle) {
  json_t *o = json_object();
  json_object_set_new(o, "position", cp_json_num(position));
  json_object_set_new(o, "angle", cp_json_num(angle));
  return o;
}

static json_t *plan_ids_json(const cp_sequence_stage *s) {
  json_t *a = json_array();
  for (int ph = 0; s->certified && ph < s->n_plans; ph++) json_array_append_new(a, json_integer(s->plan_ids[ph]));
  return a;
}

/* The result document (docs/assembly.md, "Assembly tasks"). */
static json_t *sequence_json(const cp_sequence_task *t, const cp_sequence_result *res) {
  json_t *doc = json_object(), *order = json_array(), *stages = json_array();
  json_object_set_new(doc, "status", json_string(cp_sequence_status_name(res->status)));
  for (int k = 0; k < res->n_order; k++)
    json_array_append_new(order, json_string(t->scene.bodies[t->part_body[res->order[k]]].name));
  for (int k = 0; k < res->n_stages; k++) {
    const cp_sequence_stage *s = &res->stages[k];
    json_t *o = json_object(), *cand = json_array();
    json_object_set_new(o, "part", json_string(t->scene.bodies[s->body].name));
    json_object_set_new(o, "certified", json_boolean(s->certified));
    json_object_set_new(o, "grasp", s->certified ? grasp_json(&s->grasp) : json_null());
    json_object_set_new(o, "regrasps", json_integer(s->regrasps));
    json_object_set_new(o, "attempts", json_integer(s->attempts));
    json_object_set_new(o, "plan_ids", plan_ids_json(s));
    json_object_set_new(o, "stability", s->certified ? json_string(cp_stability_kind_name(s->stability)) : json_null());
    json_object_set_new(o, "pose_error", s->certified ? error_json(s->position_error, s->angle_error) : json_null());
    for (int c = 0; c < s->n_candidates; c++) json_array_append_new(cand, grasp_json(&s->candidates[c]));
    json_object_set_new(o, "candidates", cand);
    json_array_append_new(stages, o);
  }
  json_object_set_new(doc, "order", order);
  json_object_set_new(doc, "stages", stages);
  json_object_set_new(doc, "final_error", res->status == CP_SEQUENCE_SOLVED
                                              ? error_json(res->final_position_error, res->final_angle_error)
                                              : json_null());
  json_object_set_new(doc, "seconds", cp_json_num(res->seconds));
  json_object_set_new(doc, "lcp_solves", json_integer(res->lcp_solves));
  json_object_set_new(doc, "plans", json_integer(res->plans));
  if (res->message[0]) json_object_set_new(doc, "message", json_string(res->message));
  return doc;
}

static int store_sequence(cp_store *st, const cp_sequence_task *t, const char *file, const cp_sequence_result *res,
                          json_t *doc, int64_t *id, cp_error *err) {
  cp_store_stage_row rows[CP_ASSEMBLY_MAX_PARTS];
  char *texts[2 * CP_ASSEMBLY_MAX_PARTS + 1] = {0};
  json_t *stages = json_object_get(doc, "stages");
  for (int k = 0; k < res->n_stages; k++) {
    const cp_sequence_stage *s = &res->stages[k];
    json_t *o = json_array_get(stages, (size_t)k);
    texts[2 * k] = s->certified ? json_dumps(json_object_get(o, "grasp"), JSON_COMPACT) : NULL;
    texts[2 * k + 1] = json_dumps(json_object_get(o, "plan_ids"), JSON_COMPACT);
    rows[k] = (cp_store_stage_row){.part = t->scene.bodies[s->body].name, .certified = s->certified,
                                   .grasp = texts[2 * k], .regrasps = s->regrasps, .attempts = s->attempts,
                                   .plan_ids = texts[2 * k + 1] ? texts[2 * k + 1] : "[]",
                                   .stability = s->certified ? cp_stability_kind_name(s->stability) : NULL,
                                   .position_error = s->position_error, .angle_error = s->angle_error};
  }
  texts[2 * CP_ASSEMBLY_MAX_PARTS] = json_dumps(json_object_get(doc, "order"), JSON_COMPACT);
  const int solved = res->status == CP_SEQUENCE_SOLVED;
  cp_store_sequence_row row = {.task = file, .status = cp_sequence_status_name(res->status), .parts = t->n_parts,
                               .order = texts[2 * CP_ASSEMBLY_MAX_PARTS] ? texts[2 * CP_ASSEMBLY_MAX_PARTS] : "[]",
                               .final_position_error = solved ? res->final_position_error : NAN,
                               .final_angle_error = solved ? res->final_angle_error : NAN,
                               .seconds = res->seconds, .lcp_solves = res->lcp_solves, .plans = res->plans,
                               .message = res->message[0] ? res->message : NULL};
  int rc = cp_store_sequence(st, &row, rows, res->n_stages, id, err);
  for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) free(texts[i]);
  return rc;
}

/* `complan assemble TASK`: the sequence executed with the gripper. */
static int assemble_task(const char *file, const char *text, size_t len, const char *db, int json) {
  cp_sequence_task t;
  cp_error err;
  memset(&err, 0, sizeof err);
  if (cp_sequence_task_parse(text, len, file, &t, &err)) return cp_cli_input_error(file, &err);
  cp_store *st = NULL;
  char msg[600];
  if (cp_store_open(db, 0, &st, msg, sizeof msg) != CP_STORE_OK) {
    fprintf(stderr, "complan: %s\n", msg);
    cp_sequence_task_free(&t);
    return CP_EXIT_BAD_INPUT;
  }
  cp_sequence_result res;
  cp_sequence_status ss = cp_sequence_plan(st, &t, &res, &err);
  int rc = ss == CP_SEQUENCE_SOLVED || ss == CP_SEQUENCE_NONE ? CP_EXIT_ANSWERED : CP_EXIT_UNDECIDED;
  char why[700] = "";
  const int verified = verify_plans(st, &res, why, sizeof why);
  if (!verified) rc = CP_EXIT_UNDECIDED;
  json_t *doc = sequence_json(&t, &res);
  json_object_set_new(doc, "replay_verified", json_boolean(verified));
  int64_t id = -1;
  if (store_sequence(st, &t, file, &res, doc, &id, &err)) {
    fprintf(stderr, "complan: %s: %s\n", db, err.msg);
    rc = CP_EXIT_UNDECIDED;
  }
  json_object_set_new(doc, "sequence_id", id >= 0 ? json_integer(id) : json_null());
  if (ss == CP_SEQUENCE_FAILED) fprintf(stderr, "complan: %s: %s\n", file, err.msg);
  if (json) {
    if (cp_json_print(doc)) rc = CP_EXIT_UNDECIDED;
  } else {
    int placed = 0;
    for (int k = 0; k < res.n_stages; k++) placed += res.stages[k].certified;
    printf("%s: %s (%d of %d parts placed and certified, %ld plans, %.3g s)\n", file,
           cp_sequence_status_name(res.status), placed, t.n_parts, res.plans, res.seconds);
    for (int k = 0; k < res.n_stages; k++) {
      const cp_sequence_stage *s = &res.stages[k];
      if (!s->certified) continue;
      printf("  %2d. %-16s grasp across %c (holds %.3g x), %s, placed %.3g mm / %.3g deg off, plans %lld-%lld\n",
             k + 1, t.scene.bodies[s->body].name, "xyz"[s->grasp.axis], s->grasp.hold,
             cp_stability_kind_name(s->stability), 1e3 * s->position_error, s->angle_error * (180 / 3.14159265358979323846),
             (long long)s->plan_ids[0], (long long)s->plan_ids[s->n_plans - 1]);
    }
    if (res.message[0]) printf("  note: %s\n", res.message);
    printf("  replay: %s\n", verified ? "every phase re-simulated bitwise" : why);
    if (id >= 0) printf("  stored as sequence %lld in %s\n", (long long)id, db);
  }
  json_decref(doc);
  cp_sequence_result_free(&res);
  cp_store_close(st);
  cp_sequence_task_free(&t);
  return rc;
}

int cp_cli_assemble(const cp_cli_command *cmd, int argc, char **argv) {
  const char *file = NULL, *db = "complan.sqlite", *html = NULL;
  int json = 0, no_db = 0, progress = 0, verbose = 0;
  long ndir = 0;
  double tlim = 0.0;
  const cp_cli_flag flags[] = {
      CP_CLI_VALUE("--db", "FILE", CP_FLAG_PATH, &db,
                   "SQLite database for the run (default complan.sqlite;\n"
                   "tables assembly_runs, assembly_subassemblies,\n"
                   "assembly_steps)"),
      CP_CLI_BOOL("--no-db", &no_db, "do not write a database"),
      {"--directions", "N", CP_FLAG_LONG, &ndir,
       "N candidate directions beyond the six axes, spread on\nthe sphere (default 0)",
       .imin = 0, .imax = 10000},
      {"--time-limit", "S", CP_FLAG_DOUBLE, &tlim, "seconds for the whole search (default: none)",
       .dmin = 0.0, .dmax = 1e9, .expect = "seconds >= 0"},
      CP_CLI_BOOL("--json", &json,
                  "one JSON document: {\"status\": \"found\" | \"none\",\n"
                  "\"sequence\", \"steps\", \"explored\", \"blocked\", ...}"),
      CP_CLI_BOOL("--progress", &progress, "progress on stderr even when it is not a terminal"),
      CP_CLI_VALUE("--html", "FILE", CP_FLAG_PATH, &html,
                   "write the viewer page animating the sequence (each\n"
                   "part along its approach direction; docs/assembly.md)"),
      CP_CLI_BOOL("--verbose", &verbose, "GLPK's own messages on stderr (dropped otherwise)"),
  };
  const cp_cli_spec spec = {cmd->name, head, tail, "SCENE", &file, flags,
                            sizeof flags / sizeof *flags, 0, cmd->usage};
  int prc = cp_cli_parse(&spec, argc, argv);
  if (prc != CP_CLI_GO) return prc;
  if (verbose) cp_cli_verbose();
  size_t len;
  char *text = cp_cli_read_file(file, &len);
  if (!text) return CP_EXIT_BAD_INPUT;
  if (cp_sequence_is_task(text, len)) {
    int trc;
    if (no_db || html || ndir || tlim > 0) {
      fprintf(stderr, "complan: %s: an assembly task takes --db, --json%s\n", file,
              " (and its limits from the task; --no-db, --html, --directions, --time-limit are for a scene)");
      trc = CP_EXIT_BAD_INPUT;
    } else {
      trc = assemble_task(file, text, len, db, json);
    }
    free(text);
    return trc;
  }
  free(text);
  const int use_db = !no_db;
  cp_scene scene;
  cp_error err;
  memset(&err, 0, sizeof err);
  if (cp_assembly_load_scene(file, &scene, &err)) return cp_cli_input_error(file, &err);
  cp_cli_scene_warnings(file, &scene);
  cp_assembly_options opt = cp_assembly_defaults();
  opt.directions = (int)ndir;
  opt.time_limit_s = tlim;
  if (progress || isatty(STDERR_FILENO)) opt.progress = show_progress;
  cp_assembly_result res;
  cp_assembly_plan(&scene, &opt, &res);
  if (opt.progress) fprintf(stderr, "\n");
  int rc = (res.status == CP_ASSEMBLY_FOUND || res.status == CP_ASSEMBLY_NONE)
               ? CP_EXIT_ANSWERED : CP_EXIT_UNDECIDED;
  if (html) {
    char title[512];
    snprintf(title, sizeof title, "complan assemble %s", file);
    cp_assembly_anim_options ao = cp_assembly_anim_defaults();
    ao.title = title;
    if (cp_assembly_write_page(&scene, &res, &ao, html, &err) != CP_VIEWER_OK) {
      fprintf(stderr, "complan: %s\n", err.msg); /* the message names the file */
      cp_assembly_result_free(&res);
      cp_scene_free(&scene);
      return CP_EXIT_BAD_INPUT;
    }
  }
  int64_t run_id = -1;
  if (use_db && cp_assembly_store(db, file, &scene, &res, 6 + (int)ndir, &run_id, &err)) {
    if (!strcmp(err.where, "bad_file") || !strcmp(err.where, "open")) fprintf(stderr, "complan: %s\n", err.msg);
    else fprintf(stderr, "complan: %s: %s: %s\n", db, err.where, err.msg);
    cp_assembly_result_free(&res);
    cp_scene_free(&scene);
    return CP_EXIT_BAD_INPUT;
  }
  char *blocked = res.has_blocked ? cp_assembly_mask_names(&scene, &res, res.blocked) : NULL;
  if (json) {
    json_t *doc = json_object(), *seq = json_array(), *steps = json_array();
    json_object_set_new(doc, "status", json_string(cp_assembly_status_name(res.status)));
    for (int k = 0; k < res.n_steps; k++) {
      const cp_assembly_step *s = &res.steps[k];
      json_array_append_new(seq, json_string(scene.bodies[s->body].name));
      json_t *o = json_object();
      json_object_set_new(o, "place", json_string(scene.bodies[s->body].name));
      json_object_set_new(o, "direction", cp_json_vec(s->direction, 3));
      json_object_set_new(o, "stability", json_string(cp_stability_kind_name(s->stability)));
      json_array_append_new(steps, o);
    }
    json_object_set_new(doc, "sequence", seq);
    json_object_set_new(doc, "steps", steps);
    json_object_set_new(doc, "explored", json_integer(res.explored));
    json_object_set_new(doc, "blocked", blocked ? json_loads(blocked, 0, NULL) : json_null());
    json_object_set_new(doc, "stability_checks", json_integer(res.stability_checks));
    json_object_set_new(doc, "seconds", cp_json_num(res.seconds));
    json_object_set_new(doc, "run_id", run_id >= 0 ? json_integer(run_id) : json_null());
    if (res.message[0]) json_object_set_new(doc, "message", json_string(res.message));
    if (cp_json_print(doc)) rc = CP_EXIT_UNDECIDED;
    json_decref(doc);
  } else {
    printf("%s: %s (%d parts, %d subassemblies explored, %.3g s)\n", file,
           res.status == CP_ASSEMBLY_FOUND  ? "stable sequence found"
           : res.status == CP_ASSEMBLY_NONE ? "no stable sequence"
                                            : "undecided",
           res.n_parts, res.explored, res.seconds);
    for (int k = 0; k < res.n_steps; k++) {
      const cp_assembly_step *s = &res.steps[k];
      printf("  %2d. place %-16s moving along [%.3g, %.3g, %.3g]  -> %s\n", k + 1,
             scene.bodies[s->body].name, s->direction[0], s->direction[1], s->direction[2],
             cp_stability_kind_name(s->stability));
    }
    if (blocked) printf("  blocked at %s: no part can leave it with a stable remainder\n", blocked);
    if (res.message[0]) printf("  note: %s\n", res.message);
    if (run_id >= 0) printf("  stored as run %lld in %s\n", (long long)run_id, db);
  }
  free(blocked);
  cp_assembly_result_free(&res);
  cp_scene_free(&scene);
  return rc;
}
