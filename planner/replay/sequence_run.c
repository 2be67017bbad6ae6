/* An assembly task run end to end (planner/replay/sequence_run.h): plan,
 * verify by replay, store, and the result document of `assemble TASK --json`
 * (docs/assembly.md, "Assembly tasks"). */
#include "planner/replay/sequence_run.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/jsonread.h"
#include "planner/assembly/assembly.h"
#include "planner/io/outfile.h"
#include "planner/replay/replay.h"
#include "planner/replay/sequence_replay.h"
#include "planner/store/sequence.h"

cp_sequence_run_options cp_sequence_run_defaults(void) {
  return (cp_sequence_run_options){.path = NULL, .label = "(task)", .verify = 1, .html = NULL};
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

/* A number as the command line's JSON has it: null when not finite. */
static json_t *num(double x) { return isfinite(x) ? json_real(x) : json_null(); }

static json_t *grasp_json(const cp_sequence_grasp *g) {
  static const char *const axes[] = {"x", "y", "z"};
  json_t *o = json_object(), *dir = json_array();
  for (int i = 0; i < 3; i++) json_array_append_new(dir, num(g->dir[i]));
  json_object_set_new(o, "axis", json_string(axes[g->axis]));
  json_object_set_new(o, "direction", dir);
  json_object_set_new(o, "width", num(g->width));
  json_object_set_new(o, "offset", num(g->offset));
  if (g->shift[0] != 0.0 || g->shift[1] != 0.0 || g->shift[2] != 0.0) {
    json_t *sh = json_array();
    for (int i = 0; i < 3; i++) json_array_append_new(sh, num(g->shift[i]));
    json_object_set_new(o, "shift", sh);
  }
  json_object_set_new(o, "turn", num(g->turn));
  json_object_set_new(o, "hold", num(g->hold));
  if (g->reason[0]) json_object_set_new(o, "reason", json_string(g->reason));
  return o;
}

static json_t *error_json(double position, double angle) {
  json_t *o = json_object();
  json_object_set_new(o, "position", num(position));
  json_object_set_new(o, "angle", num(angle));
  return o;
}

static json_t *plan_ids_json(const cp_sequence_stage *s) {
  json_t *a = json_array();
  for (int ph = 0; s->certified && ph < s->n_plans; ph++) json_array_append_new(a, json_integer(s->plan_ids[ph]));
  return a;
}

/* The phase of each plan, parallel to plan_ids. */
static json_t *phases_json(const cp_sequence_stage *s) {
  json_t *a = json_array();
  for (int ph = 0; s->certified && ph < s->n_plans; ph++)
    json_array_append_new(a, json_string(cp_sequence_phase_name(s->plan_phase[ph])));
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
    if (s->removal) {
      json_t *wd = json_array();
      for (int i = 0; i < 3; i++) json_array_append_new(wd, num(s->withdraw[i]));
      json_object_set_new(o, "removal", json_true());
      json_object_set_new(o, "withdraw", wd);
    }
    json_object_set_new(o, "grasp", s->certified ? grasp_json(&s->grasp) : json_null());
    json_object_set_new(o, "regrasps", json_integer(s->regrasps));
    json_object_set_new(o, "attempts", json_integer(s->attempts));
    json_object_set_new(o, "plan_ids", plan_ids_json(s));
    json_object_set_new(o, "phases", phases_json(s));
    json_object_set_new(o, "stability", s->certified ? json_string(cp_stability_kind_name(s->stability)) : json_null());
    json_object_set_new(o, "stability_nodes", json_integer(s->stability_nodes));
    if (s->certified)
      json_object_set_new(o, "stability_certifies", json_string(cp_stability_kind_meaning(s->stability)));
    if (s->stability_reason[0]) json_object_set_new(o, "stability_reason", json_string(s->stability_reason));
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
  json_object_set_new(doc, "seconds", num(res->seconds));
  json_object_set_new(doc, "lcp_solves", json_integer(res->lcp_solves));
  json_object_set_new(doc, "plans", json_integer(res->plans));
  json_object_set_new(doc, "backtracks", json_integer(res->backtracks));
  if (res->message[0]) json_object_set_new(doc, "message", json_string(res->message));
  return doc;
}

static int store_sequence(cp_store *st, const cp_sequence_task *t, const char *name, const cp_sequence_result *res,
                          json_t *doc, int64_t *id, cp_error *err) {
  /* a stage per part, and a removal stage per temporary part */
  cp_store_stage_row rows[2 * CP_ASSEMBLY_MAX_PARTS];
  char *texts[6 * CP_ASSEMBLY_MAX_PARTS + 1] = {0};
  json_t *stages = json_object_get(doc, "stages");
  for (int k = 0; k < res->n_stages; k++) {
    const cp_sequence_stage *s = &res->stages[k];
    json_t *o = json_array_get(stages, (size_t)k);
    texts[2 * k] = s->certified ? json_dumps(json_object_get(o, "grasp"), JSON_COMPACT) : NULL;
    texts[2 * k + 1] = json_dumps(json_object_get(o, "plan_ids"), JSON_COMPACT);
    texts[4 * CP_ASSEMBLY_MAX_PARTS + 1 + k] = json_dumps(json_object_get(o, "phases"), JSON_COMPACT);
    rows[k] = (cp_store_stage_row){.part = t->scene.bodies[s->body].name, .certified = s->certified,
                                   .grasp = texts[2 * k], .regrasps = s->regrasps, .attempts = s->attempts,
                                   .plan_ids = texts[2 * k + 1] ? texts[2 * k + 1] : "[]",
                                   .phases = texts[4 * CP_ASSEMBLY_MAX_PARTS + 1 + k],
                                   .stability = s->certified ? cp_stability_kind_name(s->stability) : NULL,
                                   .position_error = s->position_error, .angle_error = s->angle_error};
  }
  texts[4 * CP_ASSEMBLY_MAX_PARTS] = json_dumps(json_object_get(doc, "order"), JSON_COMPACT);
  const int solved = res->status == CP_SEQUENCE_SOLVED;
  cp_store_sequence_row row = {.task = name, .status = cp_sequence_status_name(res->status), .parts = t->n_parts,
                               .order = texts[4 * CP_ASSEMBLY_MAX_PARTS] ? texts[4 * CP_ASSEMBLY_MAX_PARTS] : "[]",
                               .final_position_error = solved ? res->final_position_error : NAN,
                               .final_angle_error = solved ? res->final_angle_error : NAN,
                               .seconds = res->seconds, .lcp_solves = res->lcp_solves, .plans = res->plans,
                               .message = res->message[0] ? res->message : NULL,
                               .backtracks = res->backtracks};
  int rc = cp_store_sequence(st, &row, rows, res->n_stages, id, err);
  for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) free(texts[i]);
  return rc;
}

cp_sequence_run_status cp_sequence_run(const char *text, size_t len, const char *db,
                                       const cp_sequence_run_options *opt,
                                       cp_sequence_run_result *out, cp_error *err) {
  const cp_sequence_run_options o = opt ? *opt : cp_sequence_run_defaults();
  memset(out, 0, sizeof *out);
  out->sequence = CP_SEQUENCE_FAILED;
  out->sequence_id = -1;
  cp_error local;
  if (!err) err = &local;
  memset(err, 0, sizeof *err);
  cp_sequence_task t;
  if (cp_sequence_task_parse(text, len, o.path, &t, err)) return CP_SEQUENCE_RUN_BAD_TASK;
  out->parts = t.n_parts;
  if (o.html) {
    /* The page's file must be writable before hours are spent planning. */
    cp_outfile *probe = cp_outfile_open(o.html, err);
    if (!probe) {
      cp_sequence_task_free(&t);
      return CP_SEQUENCE_RUN_BAD_OUTPUT;
    }
    cp_outfile_discard(probe);
  }
  cp_store *st = NULL;
  cp_store_status os = cp_store_open(db, 0, &st, err->msg, sizeof err->msg);
  if (os != CP_STORE_OK) {
    err->code = os == CP_STORE_BAD_FILE ? CP_ERR_INPUT : CP_ERR_IO;
    err->where[0] = '\0';
    cp_sequence_task_free(&t);
    return CP_SEQUENCE_RUN_BAD_STORE;
  }
  const unsigned long failures = cp_json_alloc_failures();
  cp_sequence_result res;
  cp_sequence_status ss = cp_sequence_plan(st, &t, &res, &out->plan_error);
  out->sequence = ss;
  cp_sequence_run_status rc = ss == CP_SEQUENCE_SOLVED || ss == CP_SEQUENCE_NONE ? CP_SEQUENCE_RUN_ANSWERED
                                                                                 : CP_SEQUENCE_RUN_UNDECIDED;
  out->verified = o.verify ? verify_plans(st, &res, out->why, sizeof out->why) : 1;
  if (!out->verified) rc = CP_SEQUENCE_RUN_UNDECIDED;
  json_t *doc = sequence_json(&t, &res);
  json_object_set_new(doc, "replay_verified", o.verify ? json_boolean(out->verified) : json_null());
  const char *name = o.path ? o.path : o.label ? o.label : "(task)";
  if (store_sequence(st, &t, name, &res, doc, &out->sequence_id, &out->store_error)) {
    out->store_failed = 1;
    out->sequence_id = -1;
    rc = CP_SEQUENCE_RUN_UNDECIDED;
  }
  json_object_set_new(doc, "sequence_id", out->sequence_id >= 0 ? json_integer(out->sequence_id) : json_null());
  int shown = 0;
  for (int k = 0; k < res.n_stages; k++) shown += res.stages[k].certified;
  if (o.html && out->sequence_id >= 0 && shown) {
    cp_sequence_replay_options po = cp_sequence_replay_defaults();
    po.html = o.html;
    cp_sequence_replay_result pr;
    cp_replay_status ps = cp_sequence_replay(st, out->sequence_id, &po, &pr, err);
    out->page_written = ps == CP_REPLAY_OK;
    if (ps != CP_REPLAY_OK) {
      if (!err->msg[0]) cp_error_setc(err, CP_ERR_IO, o.html, "%s: %s", o.html, pr.message);
      json_decref(doc);
      cp_sequence_result_free(&res);
      cp_store_close(st);
      cp_sequence_task_free(&t);
      return CP_SEQUENCE_RUN_BAD_OUTPUT;
    }
  }
  json_object_set_new(doc, "html", out->page_written ? json_string(o.html) : json_null());
  /* The whole document or none: jansson drops keys silently when short of memory. */
  out->json = cp_json_alloc_failures() == failures
                  ? json_dumps(doc, JSON_REAL_PRECISION(17) | JSON_INDENT(0) | JSON_COMPACT)
                  : NULL;
  if (out->json && cp_json_alloc_failures() != failures) {
    free(out->json);
    out->json = NULL;
  }
  if (!out->json) {
    cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory writing the JSON document");
    rc = CP_SEQUENCE_RUN_UNDECIDED;
  }
  json_decref(doc);
  cp_sequence_result_free(&res);
  cp_store_close(st);
  cp_sequence_task_free(&t);
  return rc;
}
