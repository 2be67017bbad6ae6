/* `complan solve SCENE`: the contact problem of a scene (docs/outputs.md).
 * Thin: models/ parses and builds the system, contact/problem solves it. */
#include <libgen.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/problem.h"
#include "contact/quasistatic.h"
#include "models/scene.h"
#include "models/system.h"
#include "planner/cli/commands.h"
#include "planner/cli/flags.h"
#include "planner/cli/output.h"

/* The tables for people show rounding-level values (|x| < 1e-10 in SI units)
 * as 0; --json gives the raw numbers. */
static double tidy(double x) { return fabs(x) < 1e-10 ? 0.0 : x; }

static const char head[] =
    "The contact problem of a scene file: accelerations and contact forces, with\n"
    "the model deciding which contacts keep rolling, start sliding, keep sliding\n"
    "or break (the LCP of Trinkle, Pang, Sudarsky and Lo 1995).\n"
    "\n";
static const char tail[] =
    "\n"
    "With --solver certify the answer also says whether the accelerations are\n"
    "unique (another solution with different accelerations is shown if not).\n"
    "\n"
    "JSON contacts carry \"point\" and \"frame\" {\"n\", \"t\", \"o\"} (world\n"
    "unit vectors, n from b into a, o = n x t): \"force\" [c_n, c_t, c_o] is\n"
    "c_n n + c_t t + c_o o on body a at the point (b gets its opposite), and\n"
    "the acceleration or velocity entries are along the same directions.\n"
    "\n"
    "Contacts with \"mu_torsion\" are soft fingers: they also carry a moment\n"
    "about the normal, |torsion| <= mu_torsion c_n; JSON contacts then add\n"
    "\"torsion\" (N m, on body a) and \"spin_acceleration\" (rad/s^2, relative\n"
    "spin of a about the normal) -- with --quasistatic \"torsion\" and\n"
    "\"spin_velocity\".\n"
    "\n"
    "--quasistatic --json: the same top-level keys plus \"quasistatic\": true;\n"
    "bodies carry \"linear_velocity\" and \"angular_velocity\", joints\n"
    "\"velocity\" (given) and \"effort\" (needed), contacts \"outcome\" (at\n"
    "the velocity level: rolling = sticking), \"force\" and \"velocity\"\n"
    "(relative, n, t, o), and diagnostics \"jacobian_rank\" (rank of the\n"
    "object wrenches the contacts can exert), \"full_row_rank\" (false: some\n"
    "object motion meets no resistance, velocities not unique) and\n"
    "\"balance_residual\"; no solution\n"
    "(status no_solution) means that no quasistatic motion is compatible with\n"
    "the manipulators' (e.g. a jammed push).\n"
    "\n"
    "exit status: 0 solved or proven to have no solution, 1 not solved,\n"
    "2 bad input or usage.\n";

static void vec3_json(json_t *obj, const char *key, const double *v) {
  json_object_set_new(obj, key, cp_json_vec(v, 3));
}

static const char *status_word(cp_lcp_status s) {
  return s == CP_LCP_SOLVED ? "solved" : s == CP_LCP_INFEASIBLE ? "no_solution" : "failed";
}

static const char *joint_name(const cp_scene *scene, const cp_system *sys, int r) {
  return cp_cli_joint_name(scene, sys->joint_manip[r], sys->joint_index[r], 0);
}

/* Contact j's point and frame, world frame (models/system.h): "point" and
 * "frame": {"n", "t", "o"}, the unit directions that the three entries of
 * its "force" (c_n, c_t, c_o) and of its acceleration or velocity are
 * measured along, so that force n c_n + t c_t + o c_o acts on body a at
 * the point. */
static void contact_frame_json(json_t *c, const cp_system *sys, int j) {
  vec3_json(c, "point", sys->point + 3 * j);
  json_t *f = json_object();
  vec3_json(f, "n", sys->frame + 9 * j);
  vec3_json(f, "t", sys->frame + 9 * j + 3);
  vec3_json(f, "o", sys->frame + 9 * j + 6);
  json_object_set_new(c, "frame", f);
}

/* The objects' rows of u (6 per object: linear then angular) as JSON, each
 * {"name", lin, ang}. */
static json_t *bodies_json(const cp_scene *scene, const cp_system *sys, const double *u,
                           const char *lin, const char *ang) {
  json_t *bodies = json_array();
  for (int i = 0; i < sys->n_obj; i++) {
    json_t *b = json_object();
    json_object_set_new(b, "name", json_string(scene->bodies[sys->obj_body[i]].name));
    vec3_json(b, lin, u + 6 * i);
    vec3_json(b, ang, u + 6 * i + 3);
    json_array_append_new(bodies, b);
  }
  return bodies;
}

/* The joints as JSON, each {"name", key: value[r], "effort": effort[r]}. */
static json_t *joints_json(const cp_scene *scene, const cp_system *sys, const char *key,
                           const double *value, const double *effort) {
  json_t *joints = json_array();
  for (int r = 0; r < sys->n_l; r++) {
    json_t *j = json_object();
    json_object_set_new(j, "name", json_string(joint_name(scene, sys, r)));
    json_object_set_new(j, key, cp_json_num(value[r]));
    json_object_set_new(j, "effort", cp_json_num(effort[r]));
    json_array_append_new(joints, j);
  }
  return joints;
}

/* The tables of the objects' rows of u and of the joints (value, effort)
 * for people, under the given column titles. */
static void print_bodies_joints(const cp_scene *scene, const cp_system *sys, const double *u,
                                const char *lin, const char *ang, const double *effort,
                                const char *value_title, const char *effort_title) {
  if (sys->n_obj) {
    printf("\n%-16s %32s %32s\n", "body", lin, ang);
    for (int i = 0; i < sys->n_obj; i++) {
      const double *v = u + 6 * i;
      printf("%-16s %10.4g %10.4g %10.4g %10.4g %10.4g %10.4g\n",
             scene->bodies[sys->obj_body[i]].name, tidy(v[0]), tidy(v[1]), tidy(v[2]),
             tidy(v[3]), tidy(v[4]), tidy(v[5]));
    }
  }
  if (sys->n_l) {
    printf("\n%-24s %14s %14s\n", "joint", value_title, effort_title);
    for (int r = 0; r < sys->n_l; r++)
      printf("%-24s %14.6g %14.6g\n", joint_name(scene, sys, r),
             tidy(u[6 * sys->n_obj + r]), tidy(effort[r]));
  }
}

/* `--quasistatic`: solve and print (JSON or text). Returns the exit status. */
static int quasistatic(const char *file, const cp_scene *scene, const cp_system *sys,
                       const cp_problem_options *opt, int json) {
  cp_quasistatic_result res;
  cp_problem_quasistatic(sys, opt, &res);
  const int solved = res.info.status == CP_LCP_SOLVED;
  const char *status = status_word(res.info.status);
  int rc = solved || res.info.status == CP_LCP_INFEASIBLE ? CP_EXIT_ANSWERED : CP_EXIT_UNDECIDED;
  const char *reason = res.info.reason[0] ? res.info.reason : cp_lcp_status_name(res.info.status);
  if (json) {
    json_t *doc = json_object();
    json_object_set_new(doc, "status", json_string(status));
    json_object_set_new(doc, "solver", json_string(cp_lcp_solver_name(res.info.solver)));
    json_object_set_new(doc, "friction", json_string("pyramid"));
    json_object_set_new(doc, "quasistatic", json_true());
    json_object_set_new(doc, "lcp_size", json_integer(res.lcp_size));
    json_object_set_new(doc, "iterations", json_integer(res.info.iterations));
    json_object_set_new(doc, "starts", json_integer(res.info.starts));
    if (!solved) json_object_set_new(doc, "reason", json_string(reason));
    if (solved) {
      json_object_set_new(doc, "bodies",
                          bodies_json(scene, sys, res.velocity, "linear_velocity", "angular_velocity"));
      json_object_set_new(doc, "joints", joints_json(scene, sys, "velocity",
                                                     res.velocity + 6 * sys->n_obj, res.effort));
      json_t *contacts = json_array();
      for (int j = 0; j < sys->n_c; j++) {
        json_t *c = json_object();
        json_object_set_new(c, "a", json_string(cp_cli_ref_name(scene, scene->contacts[j].a, 0)));
        json_object_set_new(c, "b", json_string(cp_cli_ref_name(scene, scene->contacts[j].b, 1)));
        json_object_set_new(c, "outcome", json_string(cp_outcome_name(res.outcome[j])));
        vec3_json(c, "force", res.force + 3 * j);
        vec3_json(c, "velocity", res.contact_velocity + 3 * j);
        contact_frame_json(c, sys, j);
        if (res.soft[j]) {
          json_object_set_new(c, "torsion", cp_json_num(res.torsion[j]));
          json_object_set_new(c, "spin_velocity", cp_json_num(res.spin[j]));
        }
        json_array_append_new(contacts, c);
      }
      json_object_set_new(doc, "contacts", contacts);
      json_t *diag = json_object();
      json_object_set_new(diag, "jacobian_rank", json_integer(res.jacobian_rank));
      json_object_set_new(diag, "full_row_rank", json_boolean(res.full_row_rank));
      json_object_set_new(diag, "balance_residual", cp_json_num(res.balance_residual));
      json_object_set_new(doc, "diagnostics", diag);
    }
    if (cp_json_print(doc)) rc = CP_EXIT_UNDECIDED;
    json_decref(doc);
  } else {
    printf("%s: quasistatic, %s by %s (pyramid friction, LCP size %d, %d iteration%s, %d start%s)\n",
           file, status, cp_lcp_solver_name(res.info.solver), res.lcp_size, res.info.iterations,
           res.info.iterations == 1 ? "" : "s", res.info.starts, res.info.starts == 1 ? "" : "s");
    if (!solved) {
      printf("reason: %s\n", reason);
      if (res.info.status == CP_LCP_INFEASIBLE)
        printf("no quasistatic motion of the objects is compatible with the manipulators' velocities\n");
    } else {
      print_bodies_joints(scene, sys, res.velocity, "linear velocity [m/s]",
                          "angular velocity [rad/s]", res.effort, "velocity", "effort needed");
      if (sys->n_c) {
        printf("\n%-3s %-14s %-14s %-9s %30s %30s\n", "#", "a", "b", "outcome",
               "force (n, t, o) [N]", "velocity (n, t, o) [m/s]");
        for (int j = 0; j < sys->n_c; j++) {
          const double *f = res.force + 3 * j, *v = res.contact_velocity + 3 * j;
          printf("%-3d %-14s %-14s %-9s %10.4g %9.4g %9.4g %10.4g %9.4g %9.4g", j,
                 cp_cli_ref_name(scene, scene->contacts[j].a, 0),
                 cp_cli_ref_name(scene, scene->contacts[j].b, 1),
                 cp_outcome_name(res.outcome[j]), tidy(f[0]), tidy(f[1]), tidy(f[2]), tidy(v[0]), tidy(v[1]), tidy(v[2]));
          if (res.soft[j]) printf("   torsion %.4g N m, spin %.4g rad/s", res.torsion[j], res.spin[j]);
          printf("\n");
        }
      }
      printf("\ndiagnostics: rank of the contact wrenches on the objects = %d (%s), force balance residual %.3g\n",
             res.jacobian_rank, res.full_row_rank ? "full row rank" : "object motions unconstrained: velocities not unique",
             res.balance_residual);
    }
  }
  cp_quasistatic_result_free(&res);
  return rc;
}

int cp_cli_solve(const cp_cli_command *cmd, int argc, char **argv) {
  const char *file = NULL;
  int json = 0, quasi = 0, verbose = 0;
  cp_problem_options opt = cp_problem_defaults();
  int solver = (int)opt.solve.solver, friction = (int)opt.friction;
  static const char *const frictions[] = {"pyramid", "cone", NULL}; // index = cp_friction_model
  const cp_cli_flag flags[] = {
      {"--solver", "NAME", CP_FLAG_ENUM, &solver, "lemke | fip | certify | auto (default auto)",
       .names = cp_cli_solver_names},
      {"--friction", "MODEL", CP_FLAG_ENUM, &friction,
       "pyramid (default; the paper's four-sided pyramid) |\n"
       "cone (polygons refined until every rolling force lies\n"
       "in the Coulomb cone to --cone-tol)",
       .names = frictions},
      {"--cone-tol", "T", CP_FLAG_DOUBLE, &opt.cone_tol,
       "relative cone violation accepted (default 1e-3)", .dmin = 1e-12, .dmax = 1.0,
       .expect = "a number in (0, 1]"},
      CP_CLI_BOOL("--quasistatic", &quasi,
       "the quasistatic problem instead: inertia dropped, the\n"
       "objects in force balance while the manipulators move\n"
       "with their given joint velocities; finds the objects'\n"
       "velocities, the contact forces and the joint efforts\n"
       "needed (pyramid friction only; body velocities in the\n"
       "scene are ignored and normal speeds are not checked)"),
      CP_CLI_BOOL("--json", &json,
                  "print one JSON document (docs/outputs.md); without it,\n"
                  "a table for people (values below 1e-10 shown as 0)"),
      CP_CLI_BOOL("--verbose", &verbose, "GLPK's own messages on stderr (dropped otherwise)"),
  };
  const cp_cli_spec spec = {cmd->name, head, tail, "SCENE", &file, flags, sizeof flags / sizeof *flags, 0, cmd->usage};
  int prc = cp_cli_parse(&spec, argc, argv);
  if (prc != CP_CLI_GO) return prc;
  if (verbose) cp_cli_verbose();
  opt.solve.solver = (cp_lcp_solver)solver;
  opt.friction = (cp_friction_model)friction;
  if (quasi && opt.friction != CP_FRICTION_PYRAMID)
    return cp_cli_usage_error("solve ", "--quasistatic uses the friction pyramid: --friction cone is not supported");
  opt.check_unique = opt.solve.solver == CP_SOLVER_CERTIFY && !quasi;

  size_t len;
  char *text;
  int read_rc = cp_cli_read_input(file, &text, &len);
  if (read_rc) return read_rc;
  char *dircopy = strdup(file);
  cp_scene scene;
  cp_error err;
  /* Quasistatic: object velocities are unknowns, so the scene's initial
   * normal speeds mean nothing and are not checked. */
  cp_scene_options sopt = cp_scene_options_defaults();
  sopt.check_normal_speed = !quasi;
  prc = cp_scene_parse(text, len, dircopy ? dirname(dircopy) : ".", &sopt, &scene, &err);
  free(text);
  free(dircopy);
  if (prc) return cp_cli_input_error(file, &err);
  if (cp_scene_refuse_planar(&scene, "solve", &err)) {
    cp_scene_free(&scene);
    return cp_cli_input_error(file, &err);
  }
  cp_cli_scene_warnings(file, &scene);
  cp_system sys;
  if (cp_system_build(&scene, &sys, &err)) {
    cp_scene_free(&scene);
    return cp_cli_input_error(file, &err);
  }
  /* Soft fingers: models/system.h does not carry mu_torsion, the scene does. */
  double *mu_tor = malloc(sizeof(double) * (size_t)(scene.n_contacts > 0 ? scene.n_contacts : 1));
  if (!mu_tor) {
    fprintf(stderr, "complan solve: out of memory\n");
    cp_system_free(&sys);
    cp_scene_free(&scene);
    return CP_EXIT_UNDECIDED;
  }
  if (cp_problem_torsion_from_scene(&scene, mu_tor) > 0) opt.mu_torsion = mu_tor;
  if (quasi) {
    int qrc = quasistatic(file, &scene, &sys, &opt, json);
    free(mu_tor);
    cp_system_free(&sys);
    cp_scene_free(&scene);
    return qrc;
  }
  cp_problem_result res;
  cp_problem_solve(&sys, &opt, &res);
  const int solved = res.info.status == CP_LCP_SOLVED;
  const char *status = status_word(res.info.status);
  int rc = solved || res.info.status == CP_LCP_INFEASIBLE ? CP_EXIT_ANSWERED : CP_EXIT_UNDECIDED;

  if (json) {
    json_t *doc = json_object();
    json_object_set_new(doc, "status", json_string(status));
    json_object_set_new(doc, "solver", json_string(cp_lcp_solver_name(res.info.solver)));
    json_object_set_new(doc, "friction", json_string(opt.friction == CP_FRICTION_CONE ? "cone" : "pyramid"));
    json_object_set_new(doc, "lcp_size", json_integer(res.lcp_size));
    json_object_set_new(doc, "iterations", json_integer(res.info.iterations));
    json_object_set_new(doc, "starts", json_integer(res.info.starts));
    if (!solved)
      json_object_set_new(doc, "reason", json_string(res.info.reason[0] ? res.info.reason
                                                     : cp_lcp_status_name(res.info.status)));
    if (solved) {
      json_object_set_new(doc, "bodies", bodies_json(&scene, &sys, res.udot, "linear_acceleration",
                                                     "angular_acceleration"));
      const int nu = 6 * sys.n_obj;
      json_object_set_new(doc, "joints", joints_json(&scene, &sys, "acceleration", res.udot + nu,
                                                     res.effort + nu));
      json_t *contacts = json_array();
      for (int j = 0; j < sys.n_c; j++) {
        json_t *c = json_object();
        json_object_set_new(c, "a", json_string(cp_cli_ref_name(&scene, scene.contacts[j].a, 0)));
        json_object_set_new(c, "b", json_string(cp_cli_ref_name(&scene, scene.contacts[j].b, 1)));
        json_object_set_new(c, "initial", json_string(sys.sliding[j] ? "sliding" : "rolling"));
        json_object_set_new(c, "outcome", json_string(cp_outcome_name(res.outcome[j])));
        vec3_json(c, "force", res.force + 3 * j);
        vec3_json(c, "acceleration", res.accel + 3 * j);
        contact_frame_json(c, &sys, j);
        if (res.soft[j]) {
          json_object_set_new(c, "torsion", cp_json_num(res.torsion[j]));
          json_object_set_new(c, "spin_acceleration", cp_json_num(res.spin_accel[j]));
        }
        json_array_append_new(contacts, c);
      }
      json_object_set_new(doc, "contacts", contacts);
      if (opt.friction == CP_FRICTION_CONE) {
        json_object_set_new(doc, "cone_edges", json_integer(res.cone_edges));
        json_object_set_new(doc, "cone_violation", json_real(res.cone_violation));
      }
      if (opt.check_unique) {
        json_object_set_new(doc, "unique", res.unique_decided ? json_boolean(res.unique) : json_null());
        if (res.udot_other) json_object_set_new(doc, "other_acceleration", cp_json_vec(res.udot_other, sys.n_u));
      }
    }
    json_t *diag = json_object();
    json_object_set_new(diag, "jacobian_rank", json_integer(res.diag.jacobian_rank));
    json_object_set_new(diag, "full_column_rank", json_boolean(res.diag.full_column_rank));
    json_object_set_new(diag, "a_positive_definite", json_boolean(res.diag.a_positive_definite));
    json_object_set_new(diag, "friction_bound", cp_json_num(res.diag.friction_bound));
    json_object_set_new(diag, "within_friction_bound", json_boolean(res.diag.within_friction_bound));
    json_object_set_new(doc, "diagnostics", diag);
    if (cp_json_print(doc)) rc = CP_EXIT_UNDECIDED;
    json_decref(doc);
  } else {
    printf("%s: %s by %s (%s friction, LCP size %d, %d iteration%s, %d start%s)\n", file,
           status, cp_lcp_solver_name(res.info.solver),
           opt.friction == CP_FRICTION_CONE ? "cone" : "pyramid", res.lcp_size,
           res.info.iterations, res.info.iterations == 1 ? "" : "s", res.info.starts,
           res.info.starts == 1 ? "" : "s");
    if (!solved) {
      printf("reason: %s\n", res.info.reason[0] ? res.info.reason : cp_lcp_status_name(res.info.status));
    } else {
      print_bodies_joints(&scene, &sys, res.udot, "linear acceleration [m/s^2]",
                          "angular acceleration [rad/s^2]", res.effort + 6 * sys.n_obj,
                          "acceleration", "effort");
      if (sys.n_c) {
        printf("\n%-3s %-14s %-14s %-8s %-9s %30s %30s\n", "#", "a", "b", "initial", "outcome",
               "force (n, t, o) [N]", "acceleration (n, t, o)");
        for (int j = 0; j < sys.n_c; j++) {
          const double *f = res.force + 3 * j, *a = res.accel + 3 * j;
          printf("%-3d %-14s %-14s %-8s %-9s %10.4g %9.4g %9.4g %10.4g %9.4g %9.4g\n", j,
                 cp_cli_ref_name(&scene, scene.contacts[j].a, 0),
                 cp_cli_ref_name(&scene, scene.contacts[j].b, 1),
                 sys.sliding[j] ? "sliding" : "rolling", cp_outcome_name(res.outcome[j]),
                 tidy(f[0]), tidy(f[1]), tidy(f[2]), tidy(a[0]), tidy(a[1]), tidy(a[2]));
          if (res.soft[j])
            printf("    soft finger: torsion %.4g N m, spin acceleration %.4g rad/s^2\n",
                   res.torsion[j], res.spin_accel[j]);
        }
      }
      if (opt.friction == CP_FRICTION_CONE)
        printf("\ncone: %d edges, largest violation %.3g\n", res.cone_edges, res.cone_violation);
      if (opt.check_unique)
        printf("accelerations unique: %s\n", !res.unique_decided ? "undecided" : res.unique ? "yes" : "no (another solution accelerates differently)");
    }
    char bound[32];
    if (isinf(res.diag.friction_bound)) snprintf(bound, sizeof bound, "none (nothing slides)");
    else snprintf(bound, sizeof bound, "%.4g", res.diag.friction_bound);
    printf("\ndiagnostics: rank(G) = %d (%s), A %s, Proposition 3 friction bound %s, %s\n",
           res.diag.jacobian_rank, res.diag.full_column_rank ? "full column rank" : "rank deficient",
           res.diag.a_positive_definite ? "positive definite" : "singular", bound,
           res.diag.within_friction_bound ? "sliding friction within it" : "sliding friction not within it");
  }
  cp_problem_result_free(&res);
  free(mu_tor);
  cp_system_free(&sys);
  cp_scene_free(&scene);
  return rc;
}
