/* `complan assemble SCENE [--db FILE] [--json] [--directions N]`: a stable
 * assembly sequence (docs/assembly.md). Thin: planner/assembly/assembly.h searches,
 * planner/store/assembly.h writes the run to SQLite. Given an assembly TASK
 * (a file with the key "assembly") it plans and executes the sequence with
 * the gripper instead: planner/replay/sequence_run.h plans, verifies every
 * phase's plan by replay, stores the sequence and builds the document. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/scene.h"
#include "planner/assembly/assembly.h"
#include "planner/replay/sequence_run.h"
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
    "takes --db, --json and --html (the page of the whole executed sequence).\n"
    "\n";
static const char tail[] =
    "\n"
    "exit status: 0 answered (a sequence, or none exists), 1 undecided (time\n"
    "limit, numerical failure), 2 bad input or usage.\n";

static void show_progress(void *ctx, int explored, int present) {
  (void)ctx;
  if (explored % 16 == 0) fprintf(stderr, "\rassemble: %d subassemblies explored (%d parts)   ", explored, present);
}

/* `complan assemble TASK`: the sequence executed with the gripper
 * (cp_sequence_run), its document printed or summarised. */
static int assemble_task(const char *file, const char *text, size_t len, const char *db, const char *html,
                         int json) {
  cp_sequence_run_options o = cp_sequence_run_defaults();
  o.path = file;
  o.html = html;
  cp_sequence_run_result out;
  cp_error err;
  cp_sequence_run_status rs = cp_sequence_run(text, len, db, &o, &out, &err);
  if (rs == CP_SEQUENCE_RUN_BAD_TASK) return cp_cli_input_error(file, &err);
  if (rs == CP_SEQUENCE_RUN_BAD_STORE || rs == CP_SEQUENCE_RUN_BAD_OUTPUT) {
    fprintf(stderr, "complan: %s\n", err.msg);
    return CP_EXIT_BAD_INPUT;
  }
  int rc = rs == CP_SEQUENCE_RUN_ANSWERED ? CP_EXIT_ANSWERED : CP_EXIT_UNDECIDED;
  if (out.store_failed) fprintf(stderr, "complan: %s: %s\n", db, out.store_error.msg);
  if (out.sequence == CP_SEQUENCE_FAILED) fprintf(stderr, "complan: %s: %s\n", file, out.plan_error.msg);
  json_t *doc = out.json ? json_loads(out.json, 0, NULL) : NULL;
  if (!doc) {
    fprintf(stderr, "complan: out of memory writing the JSON document\n");
    rc = CP_EXIT_UNDECIDED;
  } else if (json) {
    if (fputs(out.json, stdout) == EOF || fputc('\n', stdout) == EOF) rc = CP_EXIT_UNDECIDED;
  } else {
    json_t *stages = json_object_get(doc, "stages"), *s;
    size_t k;
    int placed = 0;
    json_array_foreach(stages, k, s) placed += json_is_true(json_object_get(s, "certified")) &&
                                               !json_is_true(json_object_get(s, "removal"));
    printf("%s: %s (%d of %d parts placed and certified, %lld plans, %.3g s)\n", file,
           cp_sequence_status_name(out.sequence), placed, out.parts,
           (long long)json_integer_value(json_object_get(doc, "plans")),
           json_real_value(json_object_get(doc, "seconds")));
    json_array_foreach(stages, k, s) {
      if (!json_is_true(json_object_get(s, "certified"))) continue;
      json_t *g = json_object_get(s, "grasp"), *e = json_object_get(s, "pose_error"), *ids = json_object_get(s, "plan_ids");
      if (json_is_true(json_object_get(s, "removal"))) {
        /* a temporary part taken out: the verdict is on the rest */
        json_t *wd = json_object_get(s, "withdraw");
        const double wx = json_real_value(json_array_get(wd, 0)), wy = json_real_value(json_array_get(wd, 1));
        printf("  %2d. %-16s removed along %s%s, rest %s, put down %.3g mm off its staging pose\n", (int)k + 1,
               json_string_value(json_object_get(s, "part")), wx + wy > 0 ? "+" : "-", fabs(wx) > 0.5 ? "x" : "y",
               json_string_value(json_object_get(s, "stability")), 1e3 * json_real_value(json_object_get(e, "position")));
        continue;
      }
      printf("  %2d. %-16s grasp across %s (holds %.3g x), %s, placed %.3g mm / %.3g deg off, plans %lld-%lld\n",
             (int)k + 1, json_string_value(json_object_get(s, "part")), json_string_value(json_object_get(g, "axis")),
             json_real_value(json_object_get(g, "hold")), json_string_value(json_object_get(s, "stability")),
             1e3 * json_real_value(json_object_get(e, "position")),
             json_real_value(json_object_get(e, "angle")) * (180 / 3.14159265358979323846),
             (long long)json_integer_value(json_array_get(ids, 0)),
             (long long)json_integer_value(json_array_get(ids, json_array_size(ids) - 1)));
    }
    int undecided = 0;
    json_array_foreach(stages, k, s) undecided +=
        json_is_true(json_object_get(s, "certified")) &&
        !strcmp(json_string_value(json_object_get(s, "stability")), "stable_undecided");
    if (undecided)
      printf("  stable_undecided (%d stage%s): %s\n", undecided, undecided > 1 ? "s" : "",
             cp_stability_kind_meaning(CP_STABILITY_UNDECIDED));
    json_t *msg = json_object_get(doc, "message");
    if (msg) printf("  note: %s\n", json_string_value(msg));
    printf("  replay: %s\n", out.verified ? "every phase re-simulated bitwise" : out.why);
    if (out.sequence_id >= 0) printf("  stored as sequence %lld in %s\n", (long long)out.sequence_id, db);
    if (html) printf("  page: %s\n", out.page_written ? html : "none (no certified stage to show)");
  }
  json_decref(doc);
  free(out.json);
  return rc;
}

int cp_cli_assemble(const cp_cli_command *cmd, int argc, char **argv) {
  const char *file = NULL, *db = "complan.sqlite", *html = NULL;
  int json = 0, no_db = 0, progress = 0, verbose = 0;
  long ndir = 0, snodes = CP_ASSEMBLY_STABILITY_NODES;
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
      {"--mip-nodes", "N", CP_FLAG_LONG, &snodes,
       "branch-and-bound nodes for each found step's strong/\n"
       "weak MILPs together (default 2000; the same verdict\non any machine)",
       .imin = 1, .imax = 1000000000},
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
    if (no_db || ndir || tlim > 0 || snodes != CP_ASSEMBLY_STABILITY_NODES) {
      fprintf(stderr, "complan: %s: an assembly task takes --db, --json, --html%s\n", file,
              " (and its limits from the task; --no-db, --directions, --time-limit,"
              " --mip-nodes are for a scene)");
      trc = CP_EXIT_BAD_INPUT;
    } else {
      trc = assemble_task(file, text, len, db, html, json);
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
  opt.stability.node_limit = snodes;
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
