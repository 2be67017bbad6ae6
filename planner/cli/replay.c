/* `complan replay [--db FILE] [--plan ID] [--verify] [--csv FILE]
 * [--html FILE [--tree]] [--json]` (docs/replay.md): thin;
 * planner/replay/replay.h re-simulates and verifies, planner/view/viewer.h draws. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/cli/commands.h"
#include "planner/cli/flags.h"
#include "planner/io/outfile.h"
#include "planner/cli/output.h"
#include "planner/replay/replay.h"
#include "planner/replay/sequence_replay.h"
#include "planner/view/viewer.h"

static const char head[] =
    "Re-simulate a stored plan offline: its task is rebuilt from the database\n"
    "(the stored task and scene texts, not the files), and its actions are\n"
    "simulated one after the other from the stored start state, each exactly\n"
    "as the search simulated it.\n"
    "\n";
static const char tail[] =
    "\n"
    "exit status: 0 replayed (and verified), 1 a mismatch or an action that\n"
    "could not be re-simulated, 2 bad input or usage (no database, no such\n"
    "plan, an output file that cannot be written).\n";

typedef struct sink {
  const cp_replay *r;
  FILE *csv;            /* the stream of csv_out */
  cp_outfile *csv_out;  /* the CSV's temporary file (planner/io/outfile.h) */
  cp_viewer *viewer;
  int failed;           /* the viewer refused a frame */
  char msg[512];
} sink;

static void on_frame(void *ctx, const cp_replay_frame *f) {
  sink *s = ctx;
  if (s->csv) cp_replay_csv_row(s->r, f, s->csv);
  if (s->viewer && !s->failed &&
      cp_viewer_add_frame(s->viewer, f->time, f->state, f->n_contacts,
                          f->contacts) != CP_VIEWER_OK) {
    s->failed = 1;
    snprintf(s->msg, sizeof s->msg, "%s", cp_viewer_message(s->viewer));
  }
}

/* Viewer for the replay's task: its goal region and, with tree, the run's
 * explored tree. */
static int make_viewer(cp_replay *r, int tree, cp_viewer **out) {
  const cp_task *t = cp_replay_task(r);
  char title[160];
  snprintf(title, sizeof title, "complan replay: plan %lld (run %lld)",
           (long long)cp_replay_plan_id(r), (long long)cp_replay_run_id(r));
  cp_viewer_options o = cp_viewer_defaults();
  o.title = title;
  o.has_goal = 1;
  o.goal_body = t->goal.body;
  memcpy(o.goal_centre, t->goal.position, sizeof o.goal_centre);
  o.goal_tolerance = t->goal.tolerance;
  cp_viewer_tree vt;
  double *pts = NULL;
  int *parent = NULL, *path = NULL, n = 0, n_path = 0;
  cp_error err;
  memset(&err, 0, sizeof err);
  if (tree) {
    cp_replay_status ts = cp_replay_tree(r, &pts, &parent, &n, &path, &n_path, &err);
    if (ts != CP_REPLAY_OK) {
      fprintf(stderr, "complan: replay --tree: %s\n", err.msg);
      /* a damaged database is bad input (exit 2) */
      return ts == CP_REPLAY_BAD_INPUT ? CP_EXIT_BAD_INPUT : CP_EXIT_UNDECIDED;
    }
    vt.n = n;
    vt.points = pts;
    vt.parent = parent;
    vt.n_path = n_path;
    vt.path = path;
    o.tree = &vt;
  }
  cp_viewer_status vs = cp_viewer_create(&t->scene, &o, out, &err);
  free(pts);
  free(parent);
  free(path);
  if (vs != CP_VIEWER_OK) {
    fprintf(stderr, "complan: replay --html: %s: %s\n", err.where, err.msg);
    return CP_EXIT_UNDECIDED;
  }
  return 0;
}

/* `replay --sequence ID`: every phase plan of a stored assembly sequence
 * (planner/replay/sequence_replay.h). */
static int replay_sequence(cp_store *st, const char *db, long id, int verify, double tolerance, const char *html,
                           int json) {
  cp_sequence_replay_options o = cp_sequence_replay_defaults();
  o.verify = verify;
  o.tolerance = tolerance;
  o.html = html;
  cp_sequence_replay_result res;
  cp_error err;
  memset(&err, 0, sizeof err);
  cp_replay_status rs = cp_sequence_replay(st, id, &o, &res, &err);
  cp_error perr;
  char *phases = json && (rs == CP_REPLAY_OK || rs == CP_REPLAY_MISMATCH)
                     ? cp_sequence_phases_json(st, res.sequence_id, &perr) : NULL;
  cp_store_close(st);
  if (rs == CP_REPLAY_BAD_INPUT || rs == CP_REPLAY_NOMEM || (rs == CP_REPLAY_FAILED && err.msg[0])) {
    const int page = html && !strcmp(err.where, html);
    fprintf(stderr, "complan: %s%s%s\n", page ? "" : db, page ? "" : ": ", err.msg);
    return rs == CP_REPLAY_BAD_INPUT ? CP_EXIT_BAD_INPUT : CP_EXIT_UNDECIDED;
  }
  if (rs != CP_REPLAY_OK) fprintf(stderr, "complan: replay --sequence %lld: %s\n", (long long)res.sequence_id, res.message);
  if (rs == CP_REPLAY_FAILED) return CP_EXIT_UNDECIDED;
  if (json) {
    json_t *doc = json_object();
    json_object_set_new(doc, "sequence", json_integer(res.sequence_id));
    json_object_set_new(doc, "stages", json_integer(res.stages));
    json_object_set_new(doc, "plans", json_integer(res.plans));
    json_object_set_new(doc, "steps", json_integer(res.steps));
    json_object_set_new(doc, "duration", cp_json_num(res.duration));
    json_object_set_new(doc, "deviation", verify ? cp_json_num(res.max_deviation) : json_null());
    json_object_set_new(doc, "verified", verify ? json_boolean(res.verified == 1) : json_null());
    json_object_set_new(doc, "chained", json_boolean(res.chained));
    json_object_set_new(doc, "mismatch", rs == CP_REPLAY_MISMATCH ? json_string(res.message) : json_null());
    json_t *ph = phases ? json_loads(phases, 0, NULL) : NULL;
    free(phases);
    phases = NULL;
    json_object_set_new(doc, "phases", ph ? ph : json_null());
    if (html) json_object_set_new(doc, "html", json_string(html));
    if (cp_json_print(doc)) rs = CP_REPLAY_FAILED;
    json_decref(doc);
  } else {
    printf("sequence %lld: %d stages, %d phase plans, %ld simulation steps, %.6g s\n", (long long)res.sequence_id,
           res.stages, res.plans, res.steps, res.duration);
    if (verify)
      printf("verify: %s (largest deviation %.3g)\n", res.verified == 1 ? "every node state as stored" : "MISMATCH",
             res.max_deviation);
    printf("chain: %s\n", res.chained ? "every phase starts where the previous one left its bodies and joints"
                                       : "BROKEN");
    if (html) printf("html: %s\n", html);
  }
  return rs == CP_REPLAY_OK ? CP_EXIT_ANSWERED : CP_EXIT_UNDECIDED;
}

int cp_cli_replay(const cp_cli_command *cmd, int argc, char **argv) {
  const char *db = "complan.sqlite", *csv_path = NULL, *html_path = NULL;
  int json = 0, verify = 0, tree = 0;
  long plan_id = 0, sequence_id = 0;
  double tolerance = 0;
  const cp_cli_flag flags[] = {
      CP_CLI_VALUE("--db", "FILE", CP_FLAG_PATH, &db, "database (default complan.sqlite)"),
      {"--plan", "ID", CP_FLAG_LONG, &plan_id, "the plan (default: the latest)", .imin = 1,
       .imax = 1L << 62, .expect = "a plan id >= 1"},
      {"--sequence", "ID", CP_FLAG_LONG, &sequence_id,
       "a stored assembly sequence (complan assemble TASK):\n"
       "replay its phase plans in order, check that each\n"
       "starts where the last left its bodies, --html draws\n"
       "the whole sequence (docs/assembly.md)",
       .imin = 1, .imax = 1L << 62, .expect = "a sequence id >= 1"},
      CP_CLI_BOOL("--verify", &verify,
                  "compare every re-simulated node state with the stored\n"
                  "one; on the same build they must be bitwise equal.\n"
                  "Exit 1 naming the first plan step, body or joint and\n"
                  "component that differs"),
      {"--tolerance", "X", CP_FLAG_DOUBLE, &tolerance,
       "with --verify: allow deviations up to X (default 0:\n"
       "any bit counts), e.g. for a database from another\n"
       "machine",
       .dmin = 0, .dmax = 1e300, .expect = "a number >= 0"},
      CP_CLI_VALUE("--csv", "FILE", CP_FLAG_PATH, &csv_path,
                   "the trajectory at every simulation step: t, per free\n"
                   "body NAME.x .. NAME.wz, per joint NAME.q NAME.qd (the\n"
                   "simulate --csv columns), then action (its index, -1\n"
                   "at the start) and per input JOINT.input"),
      CP_CLI_VALUE("--html", "FILE", CP_FLAG_PATH, &html_path,
                   "the viewer page of the replay (docs/viewer.md)"),
      CP_CLI_BOOL("--tree", &tree,
                  "with --html: add the explored tree of the plan's run\n"
                  "(every node's goal-body position, edges to parents,\n"
                  "the plan in red)"),
      CP_CLI_BOOL("--json", &json,
                  "print one JSON document: {\"plan\", \"run\", \"length\",\n"
                  "\"steps\", \"duration\", \"deviation\", \"verified\",\n"
                  "\"mismatch\"}"),
  };
  const cp_cli_spec spec = {cmd->name, head, tail, NULL, NULL, flags, sizeof flags / sizeof *flags, 0, cmd->usage};
  int prc = cp_cli_parse(&spec, argc, argv);
  if (prc != CP_CLI_GO) return prc;
  if (tree && !html_path)
    return cp_cli_usage_error("replay ", "--tree goes with --html FILE");
  if (tolerance > 0 && !verify)
    return cp_cli_usage_error("replay ", "--tolerance goes with --verify");

  if (sequence_id && (plan_id || csv_path || tree))
    return cp_cli_usage_error("replay ", "--sequence goes with --verify, --tolerance, --html and --json only");

  cp_store *st;
  int orc = cp_cli_open_store(db, 1, &st);
  if (orc) return orc;
  if (sequence_id) return replay_sequence(st, db, sequence_id, verify, tolerance, html_path, json);
  cp_replay *r;
  cp_error err;
  memset(&err, 0, sizeof err);
  cp_replay_status rs = cp_replay_open(st, plan_id, &r, &err);
  if (rs != CP_REPLAY_OK) {
    /* the store's messages (CP_ERR_IO) name the file already */
    const int named = err.code == CP_ERR_IO;
    fprintf(stderr, "complan: %s%s%s%s%s\n", named ? "" : db, named ? "" : ": ",
            err.where, err.where[0] ? ": " : "", err.msg);
    cp_store_close(st);
    return rs == CP_REPLAY_BAD_INPUT ? CP_EXIT_BAD_INPUT : CP_EXIT_UNDECIDED;
  }

  int rc = 0;
  sink s;
  memset(&s, 0, sizeof s);
  s.r = r;
  if (html_path) rc = make_viewer(r, tree, &s.viewer);
  if (!rc && csv_path) {
    s.csv_out = cp_outfile_open(csv_path, &err);
    if (!s.csv_out) {
      fprintf(stderr, "complan: %s\n", err.msg);
      rc = cp_cli_exit_of(&err);
    } else {
      s.csv = cp_outfile_stream(s.csv_out);
      if (cp_replay_csv_header(r, s.csv)) {
        fprintf(stderr, "complan: out of memory\n");
        rc = CP_EXIT_UNDECIDED;
      }
    }
  }
  cp_replay_result res;
  memset(&res, 0, sizeof res);
  int ran = 0;
  if (!rc) {
    ran = 1;
    cp_replay_options o = cp_replay_defaults();
    o.verify = verify;
    o.tolerance = tolerance;
    o.frame = on_frame;
    o.ctx = &s;
    rs = cp_replay_run(r, &o, &res);
    if (rs == CP_REPLAY_FAILED || rs == CP_REPLAY_NOMEM) {
      fprintf(stderr, "complan: replay: %s\n", res.message);
      rc = CP_EXIT_UNDECIDED;
    } else if (rs == CP_REPLAY_MISMATCH) {
      fprintf(stderr, "complan: replay --verify: plan %lld does not replay "
              "as stored: %s\n", (long long)cp_replay_plan_id(r),
              res.message);
      rc = CP_EXIT_UNDECIDED;
    }
  }
  /* Outputs of a complete re-simulation (also after a mismatch: they show
   * what the plan does now); nothing of a failed one. The page first: when
   * it cannot be written, the CSV is discarded too. */
  int complete = ran && (rs == CP_REPLAY_OK || rs == CP_REPLAY_MISMATCH);
  int written = complete;
  if (s.viewer) {
    if (s.failed) {
      fprintf(stderr, "complan: %s: %s\n", html_path, s.msg);
      rc = CP_EXIT_UNDECIDED;
      written = 0;
    } else if (complete) {
      cp_viewer_status vs = cp_viewer_write(s.viewer, html_path);
      if (vs != CP_VIEWER_OK) {
        fprintf(stderr, "complan: %s\n", cp_viewer_message(s.viewer));
        rc = vs == CP_VIEWER_NOMEM ? CP_EXIT_UNDECIDED : CP_EXIT_BAD_INPUT;
        written = 0;
      }
    }
    cp_viewer_destroy(s.viewer);
  }
  if (s.csv_out) {
    if (!written) {
      cp_outfile_discard(s.csv_out);
    } else if (cp_outfile_commit(s.csv_out, &err)) {
      fprintf(stderr, "complan: %s\n", err.msg);
      rc = CP_EXIT_BAD_INPUT;
      written = 0;
    }
  }

  /* The summary only when every output was written: never on stdout with
   * exit status 2 (docs/outputs.md). */
  if (written) {
    if (json) {
      json_t *doc = json_object();
      json_object_set_new(doc, "plan", json_integer(cp_replay_plan_id(r)));
      json_object_set_new(doc, "run", json_integer(cp_replay_run_id(r)));
      json_object_set_new(doc, "length", json_integer(cp_replay_length(r)));
      json_object_set_new(doc, "steps", json_integer(res.steps));
      json_object_set_new(doc, "duration", cp_json_num(res.duration));
      json_object_set_new(doc, "deviation", verify
                                                ? cp_json_num(res.max_deviation)
                                                : json_null());
      json_object_set_new(doc, "verified",
                          verify ? json_boolean(res.verified) : json_null());
      json_object_set_new(doc, "tolerance", json_real(tolerance));
      if (verify && !res.verified) {
        json_t *m = json_object();
        json_object_set_new(m, "plan_step", json_integer(res.first_plan_step));
        json_object_set_new(m, "where", json_string(res.first_where));
        json_object_set_new(m, "entry", json_integer(res.first_entry));
        json_object_set_new(m, "deviation", cp_json_num(res.first_deviation));
        json_object_set_new(doc, "mismatch", m);
      } else {
        json_object_set_new(doc, "mismatch", json_null());
      }
      if (csv_path) json_object_set_new(doc, "csv", json_string(csv_path));
      if (html_path) json_object_set_new(doc, "html", json_string(html_path));
      if (cp_json_print(doc)) rc = CP_EXIT_UNDECIDED;
      json_decref(doc);
    } else {
      printf("plan %lld (run %lld): %ld actions, %ld simulation steps, "
             "%.6g s\n", (long long)cp_replay_plan_id(r),
             (long long)cp_replay_run_id(r), cp_replay_length(r), res.steps,
             res.duration);
      if (verify)
        printf("verify: %s (largest deviation %.3g; allowed %g%s)\n",
               res.verified ? "every node state as stored" : "MISMATCH",
               res.max_deviation, tolerance,
               tolerance > 0 ? "" : ": bitwise");
      if (csv_path) printf("csv: %s\n", csv_path);
      if (html_path) printf("html: %s\n", html_path);
    }
  }
  cp_replay_close(r);
  cp_store_close(st);
  return rc;
}
