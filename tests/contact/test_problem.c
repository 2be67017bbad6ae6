/* The contact problem against closed-form answers, and every solution checked
 * independently of the solver: Newton-Euler balance of each free body from the
 * scene's own data, and the friction law contact by contact.
 *
 * No per-test .timeout (Criterion's leaks under LeakSanitizer, see
 * test_lemke_degenerate.c): meson's timeout for the executable bounds it. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/problem.h"
#include "models/scene.h"
#include "models/system.h"
#include "tests/scene_support.h"
#include "tests/support.h"


/* The pyramid friction law and complementarity, contact by contact. */
static void assert_friction_law(const cpt_solved *s, double tol) {
  for (int j = 0; j < s->sys.n_c; j++) {
    const double *c = s->res.force + 3 * j, *a = s->res.accel + 3 * j;
    double mu = s->sys.mu[j], lim = mu * c[0];
    cr_assert_geq(c[0], -tol, "contact %d: pulling normal force %g", j, c[0]);
    cr_assert_geq(a[0], -tol, "contact %d: penetrating acceleration %g", j, a[0]);
    cr_assert_leq(fabs(c[0] * a[0]), tol * fmax(1.0, fabs(c[0])), "contact %d: c_n a_n != 0", j);
    if (s->sys.sliding[j]) { /* full friction against the sliding velocity */
      cr_assert_float_eq(c[1], -lim * s->sys.d[2 * j], tol, "contact %d", j);
      cr_assert_float_eq(c[2], -lim * s->sys.d[2 * j + 1], tol, "contact %d", j);
      continue;
    }
    for (int k = 1; k <= 2; k++) {
      cr_assert_leq(fabs(c[k]), lim + tol, "contact %d: outside the pyramid", j);
      if (a[k] > tol) cr_assert_float_eq(c[k], -lim, tol, "contact %d: must oppose a", j);
      if (a[k] < -tol) cr_assert_float_eq(c[k], lim, tol, "contact %d: must oppose a", j);
    }
  }
}

static void assert_physics(const cpt_solved *s) {
  cr_assert_eq(s->res.info.status, CP_LCP_SOLVED, "%s", s->res.info.reason);
  cpt_assert_newton_euler(s, 1e-7);
  assert_friction_law(s, 1e-7);
}

/* A 1 kg box (0.2 x 0.1 x 0.1) on a table with gravity tilted by theta about
 * y: an incline of angle theta, down-slope along +x. Four corner contacts
 * whose tangent is turned by phi from the slope; velocity vx along x. */
static char *incline(double theta, double mu, double phi, double vx) {
  static char buf[4096];
  const double g = 9.81;
  char contacts[2048] = "";
  const double cx[4] = {0.1, 0.1, -0.1, -0.1}, cy[4] = {0.05, -0.05, 0.05, -0.05};
  for (int j = 0; j < 4; j++) {
    char one[256];
    snprintf(one, sizeof one,
             "%s{\"a\": \"box\", \"b\": \"table\", \"point\": [%.17g, %.17g, 0], "
             "\"normal\": [0, 0, 1], \"tangent\": [%.17g, %.17g, 0]}",
             j ? ", " : "", cx[j], cy[j], cos(phi), sin(phi));
    strcat(contacts, one);
  }
  snprintf(buf, sizeof buf,
           "{\"gravity\": [%.17g, 0, %.17g], \"friction\": {\"default\": %.17g},"
           " \"bodies\": [{\"name\": \"table\", \"fixed\": true, \"shape\": {\"type\": \"plane\","
           " \"normal\": [0, 0, 1], \"offset\": 0}},"
           " {\"name\": \"box\", \"mass\": 1, \"shape\": {\"type\": \"box\", \"size\": [0.2, 0.1, 0.1]},"
           " \"position\": [0, 0, 0.05], \"velocity\": [%.17g, 0, 0]}],"
           " \"contacts\": [%s]}",
           g * sin(theta), -g * cos(theta), mu, vx, contacts);
  return buf;
}

Test(problem, incline_at_rest_when_mu_at_least_tan) {
  const double th = 0.35; /* tan = 0.365 */
  double mus[2] = {0.37, 0.8};
  for (int t = 0; t < 2; t++) {
    cpt_solved s;
    cpt_solve_text(incline(th, mus[t], 0, 0), NULL, &s);
    assert_physics(&s);
    for (int k = 0; k < 6; k++) cr_assert_float_eq(s.res.udot[k], 0.0, 1e-9);
    for (int j = 0; j < 4; j++) cr_assert_eq(s.res.outcome[j], CP_OUTCOME_ROLLING);
    cpt_release(&s);
  }
}

Test(problem, incline_slides_at_closed_form) {
  const double th = 0.35, mu = 0.2, g = 9.81;
  const double expect = g * (sin(th) - mu * cos(th));
  double v0[3] = {0.0, 0.3, -0.3}; /* from rest, sliding down, sliding up */
  for (int t = 0; t < 3; t++) {
    cpt_solved s;
    cpt_solve_text(incline(th, mu, 0, v0[t]), NULL, &s);
    assert_physics(&s);
    double ax = t == 2 ? g * (sin(th) + mu * cos(th)) : expect;
    cr_assert_float_eq(s.res.udot[0], ax, 1e-9, "case %d: a = %g, expected %g", t, s.res.udot[0], ax);
    cr_assert_float_eq(s.res.udot[2], 0.0, 1e-9);
    for (int j = 0; j < 4; j++) {
      cr_assert_eq(s.res.outcome[j], CP_OUTCOME_SLIDING);
      cr_assert_eq(s.sys.sliding[j], t != 0);
    }
    cpt_release(&s);
  }
}

Test(problem, bundled_inclines_and_sliding_box) {
  cpt_solved s;
  cpt_solve_file("incline_rest.json", NULL, &s);
  assert_physics(&s);
  for (int k = 0; k < 6; k++) cr_assert_float_eq(s.res.udot[k], 0.0, 1e-9);
  cpt_release(&s);
  cpt_solve_file("incline_slide.json", NULL, &s);
  assert_physics(&s);
  const double th = 20 * 3.14159265358979323846 / 180;
  double along = hypot(s.res.udot[0], s.res.udot[2]);
  cr_assert_float_eq(along, 9.81 * (sin(th) - 0.2 * cos(th)), 1e-9);
  cpt_release(&s);
  /* Sliding on a table decelerates at mu g against the velocity. */
  cpt_solve_file("box_sliding.json", NULL, &s);
  assert_physics(&s);
  double vx = s.scene.bodies[1].v[0], vy = s.scene.bodies[1].v[1], vn = hypot(vx, vy);
  double mu = s.sys.mu[0];
  cr_assert_float_eq(s.res.udot[0], -mu * 9.81 * vx / vn, 1e-9);
  cr_assert_float_eq(s.res.udot[1], -mu * 9.81 * vy / vn, 1e-9);
  cpt_release(&s);
}

/* Frictionless stack: the accelerations are unique (zero) while the corner
 * forces are not: different solvers give different force distributions, and
 * certify proves u' unique (the LCP is A_nn's: symmetric PSD). */
Test(problem, frictionless_stack_unique_accelerations) {
  size_t len;
  char path[1024];
  snprintf(path, sizeof path, "%s/models/scenes/stack.json", getenv("CP_SOURCE_ROOT"));
  char *text = cpt_read_file(path, &len);
  char *p = strstr(text, "\"default\": 0.5");
  cr_assert_not_null(p, "stack.json: friction default not found");
  memcpy(p, "\"default\": 0.0", 14);
  cp_problem_options opt = cp_problem_defaults();
  cpt_solved s[2];
  cp_lcp_solver which[2] = {CP_SOLVER_LEMKE, CP_SOLVER_FIP};
  for (int t = 0; t < 2; t++) {
    opt.solve.solver = which[t];
    cpt_solve_text(text, &opt, &s[t]);
    assert_physics(&s[t]);
    for (int k = 0; k < s[t].sys.n_u; k++) cr_assert_float_eq(s[t].res.udot[k], 0.0, 1e-7);
  }
  double diff = 0;
  for (int j = 0; j < 3 * s[0].sys.n_c; j++) diff = fmax(diff, fabs(s[0].res.force[j] - s[1].res.force[j]));
  cr_assert_gt(diff, 1e-3, "the two solvers gave the same forces: indeterminacy not shown");
  cr_assert_eq(s[0].res.lcp_size, 12, "frictionless contacts keep only c_n");
  opt.solve.solver = CP_SOLVER_CERTIFY;
  opt.check_unique = 1;
  cpt_solved c;
  cpt_solve_text(text, &opt, &c);
  assert_physics(&c);
  cr_assert(c.res.unique_decided && c.res.unique, "certify did not prove u' unique");
  cpt_release(&c);
  cpt_release(&s[0]);
  cpt_release(&s[1]);
  free(text);
}

Test(problem, squeeze_grasp_holds_and_slips) {
  cpt_solved s;
  cpt_solve_file("squeeze_grasp.json", NULL, &s);
  cr_assert_eq(s.res.info.status, CP_LCP_SOLVED);
  cpt_assert_newton_euler(&s, 1e-7);
  assert_friction_law(&s, 1e-7);
  for (int k = 0; k < s.sys.n_u; k++) cr_assert_float_eq(s.res.udot[k], 0.0, 1e-8, "dof %d", k);
  for (int j = 0; j < 2; j++) {
    cr_assert_eq(s.res.outcome[j], CP_OUTCOME_ROLLING);
    cr_assert_float_eq(s.res.force[3 * j], 5.0, 1e-9);
    cr_assert_float_eq(s.res.force[3 * j + 1], 0.2 * 9.81 / 2, 1e-9);
  }
  cpt_release(&s);
  /* 1 N squeeze: friction can carry 2 x 0.8 x c_n < m g: the box slips down. */
  cpt_solve_file("squeeze_slip.json", NULL, &s);
  cpt_assert_newton_euler(&s, 1e-7);
  assert_friction_law(&s, 1e-7);
  cr_assert_lt(s.res.udot[2], -0.1, "box must fall, a_z = %g", s.res.udot[2]);
  for (int j = 0; j < 2; j++) {
    cr_assert_eq(s.res.outcome[j], CP_OUTCOME_SLIDING);
    cr_assert_float_eq(s.res.force[3 * j + 1], 0.8 * s.res.force[3 * j], 1e-9);
  }
  cpt_release(&s);
}

/* Tangents turned 30 degrees from the slope: the pyramid's friction acts per
 * component and deviates from the isotropic answer (known anisotropy); the
 * refined cone is within 1 % of g (sin - mu cos) along the slope. */
Test(problem, turned_tangents_pyramid_vs_cone) {
  const double th = 0.5, mu = 0.3, g = 9.81, phi = 3.14159265358979323846 / 6;
  const double expect = g * (sin(th) - mu * cos(th));
  cpt_solved p, c;
  cp_problem_options opt = cp_problem_defaults();
  cpt_solve_text(incline(th, mu, phi, 0), &opt, &p);
  assert_physics(&p);
  double perr = hypot(p.res.udot[0] - expect, p.res.udot[1]) / expect;
  cr_assert_gt(perr, 0.02, "pyramid error %g: anisotropy expected", perr);
  opt.friction = CP_FRICTION_CONE;
  cpt_solve_text(incline(th, mu, phi, 0), &opt, &c);
  cr_assert_eq(c.res.info.status, CP_LCP_SOLVED, "%s", c.res.info.reason);
  cpt_assert_newton_euler(&c, 1e-7);
  double cerr = hypot(c.res.udot[0] - expect, c.res.udot[1]) / expect;
  cr_assert_lt(cerr, 0.01, "cone error %g with %d edges", cerr, c.res.cone_edges);
  cr_assert_leq(c.res.cone_violation, 1e-3);
  cpt_release(&p);
  cpt_release(&c);
}

/* All bundled scenes that have a solution: Newton-Euler and friction law. */
Test(problem, bundled_scenes_balance) {
  const char *names[] = {"box_on_table.json", "box_sliding.json", "stack.json",
                         "finger_push.json", "squeeze_grasp.json", "incline_rest.json",
                         "incline_slide.json"};
  for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
    cpt_solved s;
    cpt_solve_file(names[k], NULL, &s);
    assert_physics(&s);
    cpt_release(&s);
  }
}

/* The Painleve rod (theta = 60 deg, mu = 2, sliding): the certificate decides
 * the LCP; its answer is either a proof of no solution or a verified one. */
Test(problem, painleve_rod_decided) {
  cp_problem_options opt = cp_problem_defaults();
  opt.solve.solver = CP_SOLVER_CERTIFY;
  cpt_solved s;
  cpt_solve_file("painleve_rod.json", &opt, &s);
  cr_assert_eq(s.res.info.status, CP_LCP_INFEASIBLE, "%s", cp_lcp_status_name(s.res.info.status));
  cpt_release(&s);
}
