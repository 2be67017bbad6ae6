/* `complan simulate SCENE`: a scene stepped in time (docs/simulate.md,
 * formulation §6). Thin: planner/sim/world.c steps, planner/sim/simulate.c runs;
 * this file parses flags, records frames (CSV) and prints the summary. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/scene.h"
#include "planner/cli/commands.h"
#include "planner/cli/flags.h"
#include "planner/io/csv.h"
#include "planner/io/outfile.h"
#include "planner/cli/output.h"
#include "planner/sim/simulate.h"
#include "planner/sim/statelayout.h"
#include "planner/view/viewer.h"
#include "planner/sim/world.h"

static const char head[] =
    "Steps a scene in time with the contact model (formulation 6): contacts\n"
    "are generated from the shapes at every step, impacts are resolved, and\n"
    "the contact LCP moves the bodies and joints.\n"
    "\n";
static const char tail[] =
    "\n"
    "A scene with an explicit contact list cannot be simulated (its contacts\n"
    "would not move with the bodies) unless --auto-contacts is given.\n"
    "\n"
    "exit status: 0 the run completed, 1 a step failed (the JSON status and\n"
    "message say which and where), 2 bad input or usage, or a CSV or page\n"
    "that cannot be written (then nothing is written, nothing printed).\n";

/* ---- frame recording -------------------------------------------------
 * Every recorder sees each recorded frame through record_frame() below
 * (planner/sim/simulate.h: cp_sim_frame_fn), with the world's state and the
 * last step's contacts valid during the call. The CSV writer is one such
 * recorder. VIEWER HOOK: a `--html FILE` recorder (the viewer) adds its
 * own member to `recorders` and a call in record_frame(); it copies
 * cp_world_get_state() and cp_world_contacts() per frame and writes its
 * page after the run (next to the CSV's temp-file-and-rename). */
typedef struct recorders {
  cp_outfile *csv_out; /* NULL: no CSV; else its temporary file */
  FILE *csv;           /* its stream */
  cp_state_layout layout; /* columns of the header and of every row */
  double *x;           /* state scratch */
  cp_viewer *viewer;   /* NULL: no page (--html) */
} recorders;

static int record_frame(const cp_world *w, long step, void *user) {
  (void)step;
  recorders *r = user;
  if (r->csv) {
    cp_world_get_state(w, r->x);
    cp_csv_state_row(r->csv, &r->layout, cp_world_time(w), r->x);
    if (fputc('\n', r->csv) == EOF) return -1;
  }
  if (r->viewer && cp_viewer_add_world(r->viewer, w) != CP_VIEWER_OK)
    return -1; /* the message stays on the viewer */
  return 0;
}

static void free_recorders(recorders *r) {
  cp_outfile_discard(r->csv_out); /* a committed one is NULL */
  cp_viewer_destroy(r->viewer);
  cp_state_layout_free(&r->layout);
  free(r->x);
}
/* ---- end of frame recording ------------------------------------------ */

static void progress(long step, long steps, void *user) {
  (void)user;
  fprintf(stderr, "\rsimulate: step %ld of %ld (%.0f %%)", step, steps,
          steps ? 100.0 * (double)step / (double)steps : 100.0);
  fflush(stderr);
}

/* The phases of cp_step_profile with their names, in step order. */
static int profile_phases(const cp_step_profile *p, const char **names,
                          double *v) {
  static const char *const n[] = {"collide", "constraints", "assembly",
                                  "solve", "check", "integrate"};
  const double x[] = {p->collide, p->constraints, p->assembly,
                      p->solve, p->check, p->integrate};
  for (int i = 0; i < 6; ++i) names[i] = n[i], v[i] = x[i];
  return 6;
}

static json_t *profile_json(const cp_step_profile *p) {
  const char *names[6];
  double v[6];
  int n = profile_phases(p, names, v);
  json_t *o = json_object();
  for (int i = 0; i < n; ++i) json_object_set_new(o, names[i], cp_json_num(v[i]));
  json_object_set_new(o, "total", cp_json_num(p->total));
  return o;
}

static void print_profile(const cp_step_profile *p) {
  const char *names[6];
  double v[6];
  int n = profile_phases(p, names, v);
  printf("  phases (%% of %.3g s):", p->total);
  for (int i = 0; i < n; ++i)
    printf("%s %s %.0f", i ? "," : "", names[i],
           p->total > 0 ? 100 * v[i] / p->total : 0.0);
  printf("\n");
}

static json_t *final_json(const cp_world *w) {
  const cp_scene *s = cp_world_scene(w);
  json_t *fin = json_object();
  json_object_set_new(fin, "time", cp_json_num(cp_world_time(w)));
  json_t *bodies = json_array();
  for (int i = 0; i < s->n_bodies; ++i) {
    const cp_body *b = &s->bodies[i];
    if (b->fixed) continue;
    json_t *o = json_object();
    json_object_set_new(o, "name", json_string(b->name));
    json_object_set_new(o, "position", cp_json_vec(b->x, 3));
    json_object_set_new(o, "orientation", cp_json_vec(b->q, 4));
    json_object_set_new(o, "linear_velocity", cp_json_vec(b->v, 3));
    json_object_set_new(o, "angular_velocity", cp_json_vec(b->w, 3));
    json_array_append_new(bodies, o);
  }
  json_object_set_new(fin, "bodies", bodies);
  json_t *joints = json_array();
  for (int m = 0; m < s->n_manips; ++m)
    for (int k = 0; k < s->manips[m].n; ++k) {
      const cp_joint *j = &s->manips[m].joints[k];
      json_t *o = json_object();
      json_object_set_new(o, "name", json_string(cp_cli_joint_name(s, m, k, 0)));
      json_object_set_new(o, "position", cp_json_num(j->position));
      json_object_set_new(o, "velocity", cp_json_num(j->velocity));
      json_array_append_new(joints, o);
    }
  json_object_set_new(fin, "joints", joints);
  return fin;
}

int cp_cli_simulate(const cp_cli_command *cmd, int argc, char **argv) {
  const char *file = NULL, *csv = NULL, *html = NULL;
  int json = 0, force_progress = 0, auto_contacts = 0, cold = 0, profile = 0,
      pyramid_sliding = 0;
  cp_world_options wo = cp_world_defaults();
  cp_sim_options so = cp_sim_defaults();
  int stepper = (int)wo.stepper, solver = (int)wo.solve.solver;
  static const char *const steppers[] = {"acceleration", "velocity", "quasistatic",
                                         NULL}; // index = cp_stepper
  const cp_cli_flag flags[] = {
      {"--duration", "T", CP_FLAG_DOUBLE, &so.duration, "simulated time in seconds (default 1)",
       .dmin = 0, .dmax = 1e9, .expect = "a finite number of seconds >= 0"},
      /* > 0: the smallest positive double is the lower bound */
      {"--dt", "H", CP_FLAG_DOUBLE, &wo.dt, "time step in seconds, > 0 (default 0.001)",
       .dmin = DBL_TRUE_MIN, .dmax = 1e3, .expect = "a finite time step > 0"},
      {"--stepper", "NAME", CP_FLAG_ENUM, &stepper,
       "acceleration (default; the paper's model: impulse\n"
       "LCP for impacts with the scene's restitution, then\n"
       "the acceleration LCP; a step whose acceleration\n"
       "problem has no solution is taken by the velocity\n"
       "stepper and counted) | velocity (Stewart-Trinkle /\n"
       "Anitescu-Potra impulses over the step: always\n"
       "solvable) | quasistatic (force balance per step,\n"
       "joints moving at their given velocities)",
       .names = steppers},
      {"--solver", "NAME", CP_FLAG_ENUM, &solver,
       "lemke (default, with the paper's restarts) | auto |\nfip | certify",
       .names = cp_cli_solver_names},
      {"--compliance", "K", CP_FLAG_DOUBLE, &wo.compliance,
       "relative normal compliance of the contacts (default\n"
       "1e-6): decides how a face's load spreads over its\n"
       "corner points where the rigid model leaves it open;\n"
       "0 = the rigid model, any of its answers\n"
       "(docs/simulate.md, Compliance)",
       .dmin = 0, .dmax = 1e-2, .expect = "a number in [0, 0.01]"},
      CP_CLI_BOOL("--no-warm-start", &cold, "every LCP from a cold start"),
      CP_CLI_BOOL("--no-velocity-sliding", &pyramid_sliding,
                  "the velocity stepper keeps sliding contacts in the\n"
                  "pyramid (complan before session 22) instead of\n"
                  "Coulomb's law against the slip (docs/simulate.md)"),
      CP_CLI_BOOL("--auto-contacts", &auto_contacts,
                  "ignore the scene's explicit contact list and\n"
                  "generate contacts from the shapes"),
      CP_CLI_VALUE("--csv", "FILE", CP_FLAG_PATH, &csv,
                   "one row per recorded step: t, per free body NAME.x\n"
                   "NAME.y NAME.z NAME.qw NAME.qx NAME.qy NAME.qz\n"
                   "NAME.vx NAME.vy NAME.vz NAME.wx NAME.wy NAME.wz, per\n"
                   "joint NAME.q NAME.qd"),
      CP_CLI_VALUE("--html", "FILE", CP_FLAG_PATH, &html,
                   "the viewer page of the run (docs/viewer.md): one\n"
                   "self-contained HTML file with the shapes in 3D, the\n"
                   "contacts and forces of each recorded step, play,\n"
                   "time slider and speed"),
      {"--every", "K", CP_FLAG_INT, &so.every,
       "record every K-th step in the CSV and the page\n(default 1)", .imin = 1,
       .imax = 1000000000, .expect = "an integer >= 1"},
      CP_CLI_BOOL("--json", &json, "print one JSON document (docs/simulate.md)"),
      CP_CLI_BOOL("--progress", &force_progress,
                  "progress on stderr even when it is not a terminal"),
      CP_CLI_BOOL("--profile", &profile,
                  "time each step's phases (collide, constraints,\n"
                  "assembly, solve, check, integrate) and report\n"
                  "their sums (docs/simulate.md, Phase timings)"),
  };
  const cp_cli_spec spec = {cmd->name, head, tail, "SCENE", &file, flags,
                            sizeof flags / sizeof *flags, 0, cmd->usage};
  int prc = cp_cli_parse(&spec, argc, argv);
  if (prc != CP_CLI_GO) return prc;
  wo.stepper = (cp_stepper)stepper;
  wo.solve.solver = (cp_lcp_solver)solver;
  if (cold) wo.warm_start = 0;
  if (pyramid_sliding) wo.velocity_sliding = 0;
  wo.profile = profile;

  cp_scene_options po = cp_scene_options_defaults();
  po.check_normal_speed = 0; // approaching contacts are impacts here
  cp_scene scene;
  cp_error err = {0};
  if (cp_scene_load(file, &po, &scene, &err)) return cp_cli_input_error(file, &err);
  cp_cli_scene_warnings(file, &scene);
  if (auto_contacts && !scene.contacts_auto) {
    free(scene.contacts);
    scene.contacts = NULL;
    scene.n_contacts = 0;
    scene.contacts_auto = 1;
  }
  /* The world refuses an explicit contact list (planner/sim/world.h): the
   * scene says whether it has one, and the refusal names the "contacts". */
  const int explicit_list = !scene.contacts_auto;
  cp_world *w = NULL;
  cp_world_status ws = cp_world_create(&scene, &wo, &w, &err);
  cp_scene_free(&scene);
  if (ws != CP_WORLD_OK) {
    if (ws == CP_WORLD_NOMEM) {
      fprintf(stderr, "complan: out of memory\n");
      return CP_EXIT_UNDECIDED;
    }
    if (explicit_list && !strcmp(err.where, "contacts"))
      snprintf(err.msg + strlen(err.msg), sizeof err.msg - strlen(err.msg),
               " (or pass --auto-contacts)");
    return cp_cli_input_error(file, &err);
  }

  recorders rec = {0};
  int rc = CP_EXIT_ANSWERED;
  if (csv) {
    int nomem = cp_state_layout_init(&rec.layout, cp_world_scene(w)) ||
                !(rec.x = malloc(sizeof(double) * (size_t)(rec.layout.n + 1)));
    rec.csv_out = nomem ? NULL : cp_outfile_open(csv, &err);
    if (!rec.csv_out) {
      if (nomem) cp_error_setc(&err, CP_ERR_NOMEM, "", "out of memory");
      fprintf(stderr, "complan: %s\n", err.msg);
      free_recorders(&rec);
      cp_world_destroy(w);
      return cp_cli_exit_of(&err);
    }
    rec.csv = cp_outfile_stream(rec.csv_out);
    if (cp_csv_state_header(rec.csv, &rec.layout, cp_world_scene(w))) {
      fprintf(stderr, "complan: out of memory\n");
      free_recorders(&rec);
      cp_world_destroy(w);
      return CP_EXIT_UNDECIDED;
    }
    fputc('\n', rec.csv);
  }
  if (html) {
    char title[256];
    snprintf(title, sizeof title, "complan simulate: %s", file);
    cp_viewer_options vo = cp_viewer_defaults();
    vo.title = title;
    if (cp_viewer_create(cp_world_scene(w), &vo, &rec.viewer, &err) !=
        CP_VIEWER_OK) {
      fprintf(stderr, "complan: %s: %s\n", html, err.msg);
      free_recorders(&rec);
      cp_world_destroy(w);
      return CP_EXIT_UNDECIDED;
    }
  }
  so.frame = csv || html ? record_frame : NULL;
  so.user = &rec;
  long nsteps = (long)llround(so.duration / wo.dt);
  int show = force_progress || isatty(2);
  // Progress only for runs that last: the callback fires after 1/20 s of
  // stepping at the earliest; it is silent for the first second.
  so.progress = show ? progress : NULL;
  cp_sim_result res;
  cp_simulate(w, &so, &res);
  if (show && res.time_us_per_step * (double)res.steps > 1e6)
    fputc('\n', stderr);
  if (res.status != CP_WORLD_OK) rc = CP_EXIT_UNDECIDED;
  /* The outputs show the run up to where it stopped. The page first: when
   * it cannot be written the CSV is discarded too. A file that cannot be
   * written is exit 2 with nothing on stdout (docs/outputs.md). */
  int unwritten = 0;
  if (rec.viewer) {
    cp_viewer_status vs = cp_viewer_message(rec.viewer)[0]
                              ? CP_VIEWER_BAD_INPUT /* a frame refused */
                              : cp_viewer_write(rec.viewer, html);
    if (vs != CP_VIEWER_OK) {
      const char *m = cp_viewer_message(rec.viewer);
      if (vs == CP_VIEWER_IO) fprintf(stderr, "complan: %s\n", m);
      else fprintf(stderr, "complan: %s: %s\n", html, m);
      unwritten = 1;
      rc = vs == CP_VIEWER_IO ? CP_EXIT_BAD_INPUT : CP_EXIT_UNDECIDED;
    }
    cp_viewer_destroy(rec.viewer);
    rec.viewer = NULL;
  }
  if (rec.csv_out && !unwritten) {
    cp_outfile *o = rec.csv_out;
    rec.csv_out = NULL; /* committed or removed: not discarded again */
    if (cp_outfile_commit(o, &err)) {
      fprintf(stderr, "complan: %s\n", err.msg);
      rc = cp_cli_exit_of(&err);
    }
  }
  if (rc == CP_EXIT_BAD_INPUT) {
    free_recorders(&rec);
    cp_world_destroy(w);
    return rc;
  }
  char hash[17];
  snprintf(hash, sizeof hash, "%016" PRIx64, res.hash);
  if (json) {
    json_t *doc = json_object();
    json_object_set_new(doc, "status", json_string(cp_world_status_name(res.status)));
    if (res.status != CP_WORLD_OK)
      json_object_set_new(doc, "message", json_string(res.message));
    json_object_set_new(doc, "stepper", json_string(cp_stepper_name(wo.stepper)));
    json_object_set_new(doc, "steps", json_integer(res.steps));
    json_object_set_new(doc, "dt", cp_json_num(wo.dt));
    json_object_set_new(doc, "time_us_per_step", cp_json_num(res.time_us_per_step));
    json_object_set_new(doc, "fallback_steps", json_integer(res.fallback_steps));
    json_object_set_new(doc, "checked_steps", json_integer(res.checked_steps));
    json_object_set_new(doc, "retried_steps", json_integer(res.retried_steps));
    json_object_set_new(doc, "lcp_pivots", json_integer(res.lcp_pivots));
    json_object_set_new(doc, "max_penetration", cp_json_num(res.max_penetration));
    json_t *en = json_object();
    json_object_set_new(en, "initial", cp_json_num(res.energy_initial));
    json_object_set_new(en, "final", cp_json_num(res.energy_final));
    json_object_set_new(en, "max_step_increase", cp_json_num(res.max_step_increase));
    json_object_set_new(doc, "energy", en);
    json_object_set_new(doc, "hash", json_string(hash));
    if (profile) json_object_set_new(doc, "profile", profile_json(&res.profile));
    json_object_set_new(doc, "final", final_json(w));
    if (cp_json_print(doc)) rc = CP_EXIT_UNDECIDED;
    json_decref(doc);
  } else {
    printf("%s: %s, %ld of %ld steps of %g s (%s stepper)\n", file,
           cp_world_status_name(res.status), res.steps, nsteps, wo.dt,
           cp_stepper_name(wo.stepper));
    if (res.status != CP_WORLD_OK) printf("  %s\n", res.message);
    printf("  %.3g us per step, %ld fallback steps, %ld Lemke pivots "
           "(%.3g per step)\n",
           res.time_us_per_step, res.fallback_steps, res.lcp_pivots,
           res.steps ? (double)res.lcp_pivots / (double)res.steps : 0.0);
    printf("  %ld steps checked, %ld taken again\n", res.checked_steps,
           res.retried_steps);
    printf("  max penetration %.3g m; energy %.9g -> %.9g J (largest rise "
           "in a step %.3g J)\n",
           res.max_penetration, res.energy_initial, res.energy_final,
           res.max_step_increase);
    printf("  hash %s\n", hash);
    if (profile) print_profile(&res.profile);
    const cp_scene *s = cp_world_scene(w);
    for (int i = 0; i < s->n_bodies; ++i) {
      const cp_body *b = &s->bodies[i];
      if (b->fixed) continue;
      printf("  %-12s x [%.6g, %.6g, %.6g]  v [%.6g, %.6g, %.6g]\n", b->name,
             b->x[0], b->x[1], b->x[2], b->v[0], b->v[1], b->v[2]);
    }
  }
  free_recorders(&rec);
  cp_world_destroy(w);
  return rc;
}
