/* `complan stability SCENE [--json]`: is the assembly at rest stable
 * (docs/assembly.md, docs/math.md §9). Thin: planner/assembly/assembly.h builds the
 * at-rest copy, contact/stability.h decides. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/scene.h"
#include "models/system.h"
#include "planner/assembly/assembly.h"
#include "planner/cli/commands.h"
#include "planner/cli/flags.h"
#include "planner/cli/output.h"

static const char head[] =
    "Is the assembly stable at rest? With every velocity set to zero, under\n"
    "gravity, the applied loads and the joint efforts, the contact problem is\n"
    "asked whether its solutions have zero accelerations:\n"
    "  strong            every solution has (an equilibrium exists, none moves)\n"
    "  weak              some solution has, another moves\n"
    "  unstable          none has (no equilibrium forces in the friction pyramids)\n"
    "  stable_undecided  an equilibrium exists; a limit left strong/weak open\n"
    "Contacts come from the shapes (\"auto\") or the scene's list; soft fingers\n"
    "and manipulators holding parts count.\n"
    "\n";
static const char tail[] =
    "\n"
    "exit status: 0 answered (strong, weak or unstable), 1 undecided (a limit or\n"
    "a numerical failure), 2 bad input or usage.\n";

/* ctx: an int, 1 while a progress line is open on stderr. */
static void show_progress(void *ctx, int done, int total) {
  fprintf(stderr, "\rstability: exact MILP %d of at most %d   ", done, total);
  *(int *)ctx = 1;
}

static const char *kind_text(cp_stability_kind k) {
  switch (k) {
  case CP_STABILITY_STRONG: return "strongly stable";
  case CP_STABILITY_WEAK: return "weakly stable";
  case CP_STABILITY_UNSTABLE: return "unstable";
  case CP_STABILITY_UNDECIDED: return "stable: in equilibrium (weakly stable at least), strong/weak undecided";
  case CP_STABILITY_FAILED: break;
  }
  return "not decided";
}

/* Name of generalised row r's owner: a free body (rows 6i..6i+5) or a joint
 * (cp_cli_ref_name's slot 2: any length). */
static const char *row_owner(const cp_scene *sc, const cp_system *sys, int r) {
  if (r < 6 * sys->n_obj)
    return cp_cli_ref_name(sc, (cp_ref){sys->obj_body[r / 6], -1, -1}, 2);
  r -= 6 * sys->n_obj;
  return cp_cli_joint_name(sc, sys->joint_manip[r], sys->joint_index[r], 2);
}

int cp_cli_stability(const cp_cli_command *cmd, int argc, char **argv) {
  const char *file = NULL;
  int json = 0, progress = 0, verbose = 0;
  double tlim = -1.0; /* not given: 60 s, or none with --node-limit */
  long nlim = 0;
  const cp_cli_flag flags[] = {
      CP_CLI_BOOL("--json", &json,
                  "one JSON document: {\"stable\", \"kind\", \"moving\",\n"
                  "\"contacts\", ...} (docs/assembly.md)"),
      {"--time-limit", "S", CP_FLAG_DOUBLE, &tlim,
       "seconds (wall clock) for all the exact MILPs together\n"
       "(default 60, none with --node-limit; 0: no limit)", .dmin = 0.0,
       .dmax = 1e9, .expect = "seconds >= 0"},
      {"--node-limit", "N", CP_FLAG_LONG, &nlim,
       "branch-and-bound nodes for all the exact MILPs\n"
       "together: the same verdict on any machine (default\n0: none)",
       .imin = 0, .imax = 1000000000},
      CP_CLI_BOOL("--progress", &progress,
                  "show the MILPs' progress on stderr even when it is not\na terminal"),
      CP_CLI_BOOL("--verbose", &verbose, "GLPK's own messages on stderr (dropped otherwise)"),
  };
  const cp_cli_spec spec = {cmd->name, head, tail, "SCENE", &file, flags,
                            sizeof flags / sizeof *flags, 0, cmd->usage};
  int prc = cp_cli_parse(&spec, argc, argv);
  if (prc != CP_CLI_GO) return prc;
  if (verbose) cp_cli_verbose();
  cp_scene scene;
  cp_error err;
  memset(&err, 0, sizeof err);
  if (cp_assembly_load_scene(file, &scene, &err)) return cp_cli_input_error(file, &err);
  if (cp_scene_refuse_planar(&scene, "stability", &err)) {
    cp_scene_free(&scene);
    return cp_cli_input_error(file, &err);
  }
  cp_cli_scene_warnings(file, &scene);
  const int np = cp_assembly_parts(&scene, NULL);
  const uint64_t all = np >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << np) - 1);
  cp_stability_options opt = cp_stability_defaults();
  opt.time_limit_s = tlim >= 0.0 ? tlim : nlim > 0 ? 0.0 : 60.0;
  opt.node_limit = nlim;
  int line_open = 0;
  if (progress || isatty(STDERR_FILENO)) {
    opt.progress = show_progress;
    opt.progress_ctx = &line_open;
  }
  cp_stability_result r;
  cp_system sys;
  cp_contact *con = NULL;
  int ncon = 0;
  if (cp_assembly_stability(&scene, all, &opt, &r, &sys, &con, &ncon, &err)) {
    cp_scene_free(&scene);
    return cp_cli_input_error(file, &err);
  }
  if (line_open) fputc('\n', stderr);
  const int stable = r.kind == CP_STABILITY_STRONG || r.kind == CP_STABILITY_WEAK ||
                     r.kind == CP_STABILITY_UNDECIDED;
  int rc = (r.kind == CP_STABILITY_UNDECIDED || r.kind == CP_STABILITY_FAILED)
               ? CP_EXIT_UNDECIDED : CP_EXIT_ANSWERED;
  /* Moving owners: rows of the moving solution above the tolerance. */
  json_t *moving = json_array();
  for (int i = 0; r.has_motion && i < sys.n_u; i++) {
    if (!(fabs(r.udot[i]) > r.acc_tol)) continue;
    const char *name = row_owner(&scene, &sys, i);
    size_t n = json_array_size(moving);
    if (n && !strcmp(json_string_value(json_array_get(moving, n - 1)), name)) continue;
    json_array_append_new(moving, json_string(name));
  }
  if (json) {
    json_t *doc = json_object();
    json_object_set_new(doc, "stable", json_boolean(stable));
    json_object_set_new(doc, "kind", json_string(cp_stability_kind_name(r.kind)));
    json_object_set_new(doc, "moving", moving);
    json_object_set_new(doc, "method", json_string(r.method));
    json_object_set_new(doc, "mip_nodes", json_integer(r.mip_nodes));
    if (r.reason[0]) json_object_set_new(doc, "reason", json_string(r.reason));
    json_t *cl = json_array();
    for (int j = 0; j < ncon; j++) {
      json_t *o = json_object();
      json_object_set_new(o, "a", json_string(cp_cli_ref_name(&scene, con[j].a, 0)));
      json_object_set_new(o, "b", json_string(cp_cli_ref_name(&scene, con[j].b, 1)));
      json_object_set_new(o, "point", cp_json_vec(con[j].p, 3));
      json_object_set_new(o, "normal", cp_json_vec(con[j].n, 3));
      json_object_set_new(o, "force", r.has_equilibrium ? cp_json_vec(r.force + 3 * j, 3) : json_null());
      if (con[j].has_torsion)
        json_object_set_new(o, "torsion", r.has_equilibrium ? cp_json_num(r.torsion[j]) : json_null());
      json_array_append_new(cl, o);
    }
    json_object_set_new(doc, "contacts", cl);
    if (r.has_equilibrium) json_object_set_new(doc, "equilibrium_residual", cp_json_num(r.residual));
    if (r.has_motion) {
      json_t *mo = json_object(), *bl = json_array(), *jl = json_array(), *fl = json_array();
      for (int i = 0; i < sys.n_obj; i++) {
        json_t *b = json_object();
        json_object_set_new(b, "name", json_string(scene.bodies[sys.obj_body[i]].name));
        json_object_set_new(b, "linear_acceleration", cp_json_vec(r.udot + 6 * i, 3));
        json_object_set_new(b, "angular_acceleration", cp_json_vec(r.udot + 6 * i + 3, 3));
        json_array_append_new(bl, b);
      }
      for (int k = 0; k < sys.n_l; k++) {
        json_t *jj = json_object();
        json_object_set_new(jj, "name", json_string(row_owner(&scene, &sys, 6 * sys.n_obj + k)));
        json_object_set_new(jj, "acceleration", cp_json_num(r.udot[6 * sys.n_obj + k]));
        json_array_append_new(jl, jj);
      }
      for (int j = 0; j < ncon; j++) json_array_append_new(fl, cp_json_vec(r.motion_force + 3 * j, 3));
      json_object_set_new(mo, "bodies", bl);
      json_object_set_new(mo, "joints", jl);
      json_object_set_new(mo, "forces", fl);
      json_object_set_new(doc, "motion", mo);
    } else {
      json_object_set_new(doc, "motion", json_null());
    }
    if (cp_json_print(doc)) rc = CP_EXIT_UNDECIDED;
    json_decref(doc);
  } else {
    printf("%s: %s (decided by %s; %d contact%s", file, kind_text(r.kind), r.method, ncon,
           ncon == 1 ? "" : "s");
    if (r.mip_solves) printf("; %d MILP%s, %ld nodes", r.mip_solves, r.mip_solves == 1 ? "" : "s", r.mip_nodes);
    printf(")\n");
    if (r.reason[0]) printf("  note: %s\n", r.reason);
    if (json_array_size(moving)) {
      printf("  moving in a solution:");
      for (size_t k = 0; k < json_array_size(moving); k++)
        printf(" %s", json_string_value(json_array_get(moving, k)));
      printf("\n");
      for (int i = 0; i < sys.n_obj; i++) {
        const double *u = r.udot + 6 * i;
        if (fmax(fmax(fabs(u[0]), fabs(u[1])), fmax(fabs(u[2]), fmax(fabs(u[3]), fmax(fabs(u[4]), fabs(u[5]))))) <= r.acc_tol)
          continue;
        printf("    %-16s a = [%.4g, %.4g, %.4g] m/s^2  alpha = [%.4g, %.4g, %.4g] rad/s^2\n",
               scene.bodies[sys.obj_body[i]].name, u[0], u[1], u[2], u[3], u[4], u[5]);
      }
    }
    if (r.has_equilibrium) {
      printf("  equilibrium contact forces (n, t, o) [N]:\n");
      for (int j = 0; j < ncon; j++)
        printf("    %-16s on %-16s [%.4g, %.4g, %.4g]\n",
               cp_cli_ref_name(&scene, con[j].a, 0),
               cp_cli_ref_name(&scene, con[j].b, 1), fabs(r.force[3 * j]) < 1e-10 ? 0.0 : r.force[3 * j],
               fabs(r.force[3 * j + 1]) < 1e-10 ? 0.0 : r.force[3 * j + 1],
               fabs(r.force[3 * j + 2]) < 1e-10 ? 0.0 : r.force[3 * j + 2]);
    }
    json_decref(moving);
  }
  free(con);
  cp_system_free(&sys);
  cp_stability_result_free(&r);
  cp_scene_free(&scene);
  return rc;
}
