/* The quasistatic problem (formulation §4): objects in force balance, the
 * manipulators moving with given joint rates. Closed-form answers, and each
 * solution checked independently of the solver: force and moment balance
 * of every free body from the scene's own data (G_obj c + f_obj = 0), the
 * friction pyramid and complementarity at the velocity level, the contact
 * velocities recomputed from the bodies' twists.
 *
 * No per-test .timeout (Criterion's leaks under LeakSanitizer, see
 * test_lemke_degenerate.c): meson's timeout for the executable bounds it. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/quasistatic.h"
#include "models/scene.h"
#include "models/system.h"
#include "tests/support.h"

static const double g = 9.81;

typedef struct solved {
  cp_scene scene;
  cp_system sys;
  cp_quasistatic_result res;
  double mu_tor[16];
} solved;

static void solve_text(const char *text, const cp_problem_options *opt_in, solved *s) {
  cp_error err;
  cp_scene_options so = cp_scene_options_defaults();
  so.check_normal_speed = 0; /* object velocities are unknowns here */
  cr_assert_eq(cp_scene_parse(text, strlen(text), NULL, &so, &s->scene, &err), 0,
               "%s: %s", err.where, err.msg);
  cr_assert_eq(cp_system_build(&s->scene, &s->sys, &err), 0, "%s", err.msg);
  cr_assert_leq(s->scene.n_contacts, 16);
  cp_problem_options opt = opt_in ? *opt_in : cp_problem_defaults();
  if (cp_problem_torsion_from_scene(&s->scene, s->mu_tor) > 0) opt.mu_torsion = s->mu_tor;
  cp_problem_quasistatic(&s->sys, &opt, &s->res);
}

static void release(solved *s) {
  cp_quasistatic_result_free(&s->res);
  cp_system_free(&s->sys);
  cp_scene_free(&s->scene);
}

static void cross(const double *a, const double *b, double *c) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

/* Force and moment balance of every free body, from the scene:
 * m g + sum F = 0,  sum (p - x) x F + sum n c_tau = 0. */
static void assert_balance(const solved *s, double tol) {
  const cp_scene *sc = &s->scene;
  for (int i = 0; i < s->sys.n_obj; i++) {
    int bi = s->sys.obj_body[i];
    const cp_body *b = &sc->bodies[bi];
    double F[3], T[3] = {0, 0, 0};
    for (int k = 0; k < 3; k++) F[k] = b->mass * sc->gravity[k];
    for (int j = 0; j < sc->n_contacts; j++) {
      const cp_contact *c = &sc->contacts[j];
      double sign = c->a.body == bi ? 1.0 : c->b.body == bi ? -1.0 : 0.0;
      if (sign == 0.0) continue;
      const double *f = s->res.force + 3 * j;
      double Fw[3], r[3], m[3];
      for (int k = 0; k < 3; k++) {
        Fw[k] = sign * (f[0] * c->n[k] + f[1] * c->t[k] + f[2] * c->o[k]);
        r[k] = c->p[k] - b->x[k];
        F[k] += Fw[k];
        if (c->has_torsion) T[k] += sign * s->res.torsion[j] * c->n[k];
      }
      cross(r, Fw, m);
      for (int k = 0; k < 3; k++) T[k] += m[k];
    }
    for (int k = 0; k < 3; k++) {
      cr_assert_float_eq(F[k], 0.0, tol, "%s: force balance axis %d: %g", b->name, k, F[k]);
      cr_assert_float_eq(T[k], 0.0, tol, "%s: moment balance axis %d: %g", b->name, k, T[k]);
    }
  }
  cr_assert_leq(s->res.balance_residual, tol);
}

/* Velocity of the point p of a free body with twist (v, w) at centre x. */
static void point_velocity(const double *v, const double *w, const double *x,
                           const double *p, double *out) {
  double r[3] = {p[0] - x[0], p[1] - x[1], p[2] - x[2]}, wr[3];
  cross(w, r, wr);
  for (int k = 0; k < 3; k++) out[k] = v[k] + wr[k];
}

/* Relative contact velocities recomputed from the twists (free bodies and
 * fixed ones; links by the system's G, which the models tests verify), and
 * the pyramid law at the velocity level: c_n >= 0, nu_n >= 0, c_n nu_n = 0,
 * |c_t|, |c_o| <= mu c_n, each opposing its own nonzero velocity at full
 * magnitude. */
static void assert_velocity_law(const solved *s, double tol) {
  const cp_scene *sc = &s->scene;
  for (int j = 0; j < s->sys.n_c; j++) {
    const cp_contact *c = &sc->contacts[j];
    const double *f = s->res.force + 3 * j, *nu = s->res.contact_velocity + 3 * j;
    if (c->a.body >= 0 && c->b.body >= 0) {
      double va[3] = {0, 0, 0}, vb[3] = {0, 0, 0};
      int oa = s->sys.body_obj[c->a.body], ob = s->sys.body_obj[c->b.body];
      if (oa >= 0) point_velocity(s->res.velocity + 6 * oa, s->res.velocity + 6 * oa + 3,
                                  sc->bodies[c->a.body].x, c->p, va);
      if (ob >= 0) point_velocity(s->res.velocity + 6 * ob, s->res.velocity + 6 * ob + 3,
                                  sc->bodies[c->b.body].x, c->p, vb);
      const double *N[3] = {c->n, c->t, c->o};
      for (int k = 0; k < 3; k++) {
        double d = 0;
        for (int i = 0; i < 3; i++) d += N[k][i] * (va[i] - vb[i]);
        cr_assert_float_eq(nu[k], d, tol, "contact %d: velocity component %d", j, k);
      }
    }
    const double mu = s->sys.mu[j], lim = mu * f[0];
    cr_assert_geq(f[0], -tol, "contact %d: pulling", j);
    cr_assert_geq(nu[0], -tol, "contact %d: penetrating at %g", j, nu[0]);
    cr_assert_leq(fabs(f[0] * nu[0]), tol * fmax(1.0, f[0]), "contact %d: c_n nu_n", j);
    for (int k = 1; k <= 2; k++) {
      cr_assert_leq(fabs(f[k]), lim + tol, "contact %d: outside the pyramid", j);
      if (nu[k] > tol) cr_assert_float_eq(f[k], -lim, tol, "contact %d: must oppose nu", j);
      if (nu[k] < -tol) cr_assert_float_eq(f[k], lim, tol, "contact %d: must oppose nu", j);
    }
    if (c->has_torsion) {
      const double lt = c->mu_torsion * f[0], tau = s->res.torsion[j], sp = s->res.spin[j];
      cr_assert_leq(fabs(tau), lt + tol);
      if (sp > tol) cr_assert_float_eq(tau, -lt, tol);
      if (sp < -tol) cr_assert_float_eq(tau, lt, tol);
    }
  }
}

static void assert_physics(const solved *s) {
  cr_assert_eq(s->res.info.status, CP_LCP_SOLVED, "%s", s->res.info.reason);
  assert_balance(s, 1e-7);
  assert_velocity_law(s, 1e-7);
}

/* A box (mass m, 0.2 x 0.1 x 0.1) on a table (friction mu), four corner
 * contacts; a prismatic pusher along x at rate V touching the -x face at
 * height h with friction muf; optionally a fixed wall touching the +x face. */
static char *push(double m, double mu, double V, double h, double muf, int wall) {
  static char buf[4096];
  snprintf(buf, sizeof buf,
           "{\"friction\": {\"default\": %.17g},"
           " \"bodies\": [{\"name\": \"table\", \"fixed\": true, \"shape\": {\"type\": \"plane\","
           " \"normal\": [0, 0, 1], \"offset\": 0}},"
           " {\"name\": \"wall\", \"fixed\": true, \"shape\": {\"type\": \"plane\","
           " \"normal\": [-1, 0, 0], \"offset\": -0.1}},"
           " {\"name\": \"box\", \"mass\": %.17g, \"shape\": {\"type\": \"box\", \"size\": [0.2, 0.1, 0.1]},"
           " \"position\": [0, 0, 0.05]}],"
           " \"manipulators\": [{\"name\": \"pusher\", \"base\": {\"position\": [-0.3, 0, %.17g]},"
           " \"joints\": [{\"name\": \"slide\", \"type\": \"prismatic\", \"axis\": [1, 0, 0],"
           " \"velocity\": %.17g, \"link\": {\"name\": \"rod\", \"mass\": 0.1, \"com\": [0.1, 0, 0],"
           " \"inertia\": [[1e-5, 0, 0], [0, 1e-4, 0], [0, 0, 1e-4]]}}]}],"
           " \"contacts\": ["
           "{\"a\": \"box\", \"b\": \"table\", \"point\": [0.1, 0.05, 0], \"normal\": [0, 0, 1], \"tangent\": [1, 0, 0]},"
           "{\"a\": \"box\", \"b\": \"table\", \"point\": [0.1, -0.05, 0], \"normal\": [0, 0, 1], \"tangent\": [1, 0, 0]},"
           "{\"a\": \"box\", \"b\": \"table\", \"point\": [-0.1, 0.05, 0], \"normal\": [0, 0, 1], \"tangent\": [1, 0, 0]},"
           "{\"a\": \"box\", \"b\": \"table\", \"point\": [-0.1, -0.05, 0], \"normal\": [0, 0, 1], \"tangent\": [1, 0, 0]},"
           "{\"a\": \"box\", \"b\": \"pusher/rod\", \"point\": [-0.1, 0, %.17g], \"normal\": [1, 0, 0],"
           " \"tangent\": [0, 1, 0], \"mu\": %.17g}%s]}",
           mu, m, h, V, h, muf,
           wall ? ", {\"a\": \"box\", \"b\": \"wall\", \"point\": [0.1, 0, 0.05], \"normal\": [-1, 0, 0],"
                  " \"tangent\": [0, 1, 0], \"mu\": 0.3}"
                : "");
  return buf;
}

/* The box moves with the fingertip: v = (V, 0, 0), w = 0; every table
 * contact slides along +x with friction -mu c_n; with a frictionless finger
 * it pushes with mu m g, which is the effort its joint needs. */
Test(quasistatic, finger_pushes_box_at_its_speed) {
  struct { double m, mu, V, h; } cases[] = {
      {1.0, 0.3, 0.05, 0.05}, {2.0, 0.5, 0.2, 0.05}, {1.0, 0.3, 0.05, 0.08}, {0.5, 0.8, 1.0, 0.02}};
  cp_lcp_solver which[3] = {CP_SOLVER_AUTO, CP_SOLVER_LEMKE, CP_SOLVER_CERTIFY};
  for (size_t t = 0; t < sizeof cases / sizeof *cases; t++)
    for (int sv = 0; sv < 3; sv++) {
      cp_problem_options opt = cp_problem_defaults();
      opt.solve.solver = which[sv];
      solved s;
      solve_text(push(cases[t].m, cases[t].mu, cases[t].V, cases[t].h, 0.0, 0), &opt, &s);
      assert_physics(&s);
      const double V = cases[t].V, push_force = cases[t].mu * cases[t].m * g;
      cr_assert_float_eq(s.res.velocity[0], V, 1e-9, "case %zu solver %d: v_x %g", t, sv,
                         s.res.velocity[0]);
      for (int k = 1; k < 6; k++)
        cr_assert_float_eq(s.res.velocity[k], 0.0, 1e-9, "case %zu solver %d: dof %d", t, sv, k);
      cr_assert_float_eq(s.res.velocity[6], V, 0.0, "joint rate as given");
      cr_assert_float_eq(s.res.force[12], push_force, 1e-9, "case %zu: push force", t);
      cr_assert_float_eq(s.res.effort[0], push_force, 1e-9, "case %zu: joint effort", t);
      double sum_n = 0;
      for (int j = 0; j < 4; j++) {
        cr_assert_eq(s.res.outcome[j], CP_OUTCOME_SLIDING, "case %zu contact %d", t, j);
        cr_assert_float_eq(s.res.contact_velocity[3 * j + 1], V, 1e-9);
        sum_n += s.res.force[3 * j];
      }
      cr_assert_float_eq(sum_n, cases[t].m * g, 1e-9);
      cr_assert_eq(s.res.outcome[4], CP_OUTCOME_ROLLING, "the fingertip sticks to the box");
      cr_assert(s.res.full_row_rank);
      cr_assert_eq(s.res.lcp_size, 12 + 4 * 5 + 1, "v+/-, four rolling pyramids, one c_n");
      release(&s);
    }
}

/* With friction at the fingertip the forces are no longer unique (the
 * sticking fingertip can carry any admissible vertical force), but the
 * motion is: the box still moves at V, and every law holds. */
Test(quasistatic, frictional_fingertip_same_motion) {
  solved s;
  solve_text(push(1.0, 0.3, 0.05, 0.05, 0.5, 0), NULL, &s);
  assert_physics(&s);
  cr_assert_float_eq(s.res.velocity[0], 0.05, 1e-9);
  for (int k = 1; k < 6; k++) cr_assert_float_eq(s.res.velocity[k], 0.0, 1e-9);
  release(&s);
}

/* A finger at rest touching the box: nothing moves, forces balance gravity. */
Test(quasistatic, still_finger_box_at_rest) {
  solved s;
  solve_text(push(1.0, 0.3, 0.0, 0.05, 0.5, 0), NULL, &s);
  assert_physics(&s);
  for (int k = 0; k < 7; k++) cr_assert_float_eq(s.res.velocity[k], 0.0, 1e-12, "dof %d", k);
  double sum_n = 0;
  for (int j = 0; j < 4; j++) {
    sum_n += s.res.force[3 * j];
    cr_assert_eq(s.res.outcome[j], CP_OUTCOME_ROLLING);
  }
  cr_assert_float_eq(sum_n + s.res.force[14], g, 1e-9, "vertical balance (fingertip o = z)");
  release(&s);
}

/* A box against a wall pushed by the finger: no quasistatic motion is
 * possible (v_x >= V and v_x <= 0). Lemke gives up, certify proves it. */
Test(quasistatic, jammed_push_has_no_solution) {
  solved s;
  solve_text(push(1.0, 0.3, 0.05, 0.05, 0.0, 1), NULL, &s);
  cr_assert_eq(s.res.info.status, CP_LCP_INFEASIBLE, "%s (%s)",
               cp_lcp_status_name(s.res.info.status), s.res.info.reason);
  cr_assert_eq(s.res.info.solver, CP_SOLVER_CERTIFY);
  release(&s);
  /* The finger moving away instead: it separates, the box stays. */
  solve_text(push(1.0, 0.3, -0.05, 0.05, 0.0, 1), NULL, &s);
  assert_physics(&s);
  cr_assert_float_eq(s.res.velocity[0], 0.0, 1e-9);
  cr_assert_eq(s.res.outcome[4], CP_OUTCOME_BREAKING);
  cr_assert_float_eq(s.res.force[12], 0.0, 1e-9);
  release(&s);
}

/* Frictionless everywhere: M is skew-symmetric (the LCP of a linear
 * program), Lemke decides it alone. The box is pushed with no force (nothing
 * resists), may run ahead of the finger (v_x >= V), and its sideways motion
 * is undetermined (rank of G_obj < 6). */
Test(quasistatic, frictionless_skew_symmetric) {
  cp_problem_options opt = cp_problem_defaults();
  opt.solve.solver = CP_SOLVER_LEMKE;
  solved s;
  solve_text(push(1.0, 0.0, 0.05, 0.05, 0.0, 0), &opt, &s);
  assert_physics(&s);
  cr_assert_geq(s.res.velocity[0], 0.05 - 1e-9);
  cr_assert_float_eq(s.res.force[12], 0.0, 1e-9);
  cr_assert(!s.res.full_row_rank);
  cr_assert_eq(s.res.lcp_size, 12 + 5);
  release(&s);
}

/* Soft fingers take part: a disc on a soft-finger table contact pushed
 * sideways through its centre translates without spinning, and the
 * torsional law holds. */
Test(quasistatic, soft_finger_table_contact) {
  const char *text =
      "{\"friction\": {\"default\": 0.4},"
      " \"bodies\": [{\"name\": \"table\", \"fixed\": true, \"shape\": {\"type\": \"plane\","
      " \"normal\": [0, 0, 1], \"offset\": 0}},"
      " {\"name\": \"disc\", \"mass\": 1, \"shape\": {\"type\": \"cylinder\", \"radius\": 0.1,"
      " \"length\": 0.02}, \"position\": [0, 0, 0.01]}],"
      " \"manipulators\": [{\"name\": \"pusher\", \"base\": {\"position\": [-0.3, 0, 0.01]},"
      " \"joints\": [{\"name\": \"slide\", \"type\": \"prismatic\", \"axis\": [1, 0, 0],"
      " \"velocity\": 0.1, \"link\": {\"name\": \"rod\", \"mass\": 0.1, \"com\": [0.1, 0, 0],"
      " \"inertia\": [[1e-5, 0, 0], [0, 1e-4, 0], [0, 0, 1e-4]]}}]}],"
      " \"contacts\": ["
      "{\"a\": \"disc\", \"b\": \"table\", \"point\": [0.05, 0, 0], \"normal\": [0, 0, 1], \"mu_torsion\": 0.02},"
      "{\"a\": \"disc\", \"b\": \"table\", \"point\": [-0.05, 0.05, 0], \"normal\": [0, 0, 1]},"
      "{\"a\": \"disc\", \"b\": \"table\", \"point\": [-0.05, -0.05, 0], \"normal\": [0, 0, 1]},"
      "{\"a\": \"disc\", \"b\": \"pusher/rod\", \"point\": [-0.1, 0, 0.01], \"normal\": [1, 0, 0], \"mu\": 0}]}";
  solved s;
  solve_text(text, NULL, &s);
  assert_physics(&s);
  cr_assert_eq(s.res.soft[0], 1);
  cr_assert_float_eq(s.res.velocity[0], 0.1, 1e-9);
  for (int k = 1; k < 6; k++) cr_assert_float_eq(s.res.velocity[k], 0.0, 1e-9, "dof %d", k);
  cr_assert_float_eq(s.res.spin[0], 0.0, 1e-12);
  cr_assert_float_eq(s.res.force[9], 0.4 * g, 1e-9, "push force mu m g");
  release(&s);
}

Test(quasistatic, cone_model_refused) {
  cp_problem_options opt = cp_problem_defaults();
  opt.friction = CP_FRICTION_CONE;
  solved s;
  solve_text(push(1.0, 0.3, 0.05, 0.05, 0.0, 0), &opt, &s);
  cr_assert_eq(s.res.info.status, CP_LCP_NUMERICAL);
  release(&s);
}

/* `complan solve SCENE --quasistatic --json` on the bundled push scene. */
Test(quasistatic, cli_json) {
  char path[1024];
  snprintf(path, sizeof path, "%s/models/scenes/quasistatic_push.json", getenv("CP_SOURCE_ROOT"));
  const char *argv[] = {"complan", "solve", path, "--quasistatic", "--json", NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(argv, &out, &err), 0, "%s", err);
  json_error_t je;
  json_t *doc = json_loads(out, 0, &je);
  cr_assert_not_null(doc, "%s", je.text);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "solved");
  cr_assert(json_is_true(json_object_get(doc, "quasistatic")));
  json_t *box = json_array_get(json_object_get(doc, "bodies"), 0);
  cr_assert_float_eq(json_number_value(json_array_get(json_object_get(box, "linear_velocity"), 0)),
                     0.05, 1e-9);
  cr_assert_null(json_object_get(box, "linear_acceleration"));
  json_t *joint = json_array_get(json_object_get(doc, "joints"), 0);
  cr_assert_float_eq(json_number_value(json_object_get(joint, "effort")), 0.3 * g, 1e-9);
  json_t *c4 = json_array_get(json_object_get(doc, "contacts"), 4);
  cr_assert_str_eq(json_string_value(json_object_get(c4, "outcome")), "rolling");
  cr_assert(json_is_array(json_object_get(c4, "velocity")));
  cr_assert(json_is_object(json_object_get(doc, "diagnostics")));
  json_decref(doc);
  free(out);
  free(err);
  const char *bad[] = {"complan", "solve", path, "--quasistatic", "--friction", "cone", NULL};
  cr_assert_eq(cpt_run(bad, &out, &err), 2);
  free(out);
  free(err);
  const char *help[] = {"complan", "solve", "--help", NULL};
  cr_assert_eq(cpt_run(help, &out, &err), 0);
  cr_assert_not_null(strstr(out, "--quasistatic"));
  free(out);
  free(err);
}
