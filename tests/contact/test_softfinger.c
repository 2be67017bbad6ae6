/* Soft-finger contacts (formulation §4, paper §2.5): a moment c_tau n about
 * the normal with |c_tau| <= mu_tau c_n, its own slack pair when the contact
 * does not spin, -mu_tau c_n sign(spin) when it does. Closed-form answers,
 * and every solution checked independently of the solver: Newton-Euler of
 * each free body from the scene's own data (the torsional moments included)
 * and the torsional friction law contact by contact.
 *
 * No per-test .timeout (Criterion's leaks under LeakSanitizer, see
 * test_lemke_degenerate.c): meson's timeout for the executable bounds it. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/cone.h"
#include "contact/problem.h"
#include "models/scene.h"
#include "models/system.h"
#include "tests/scene_support.h"
#include "tests/support.h"


static const double g = 9.81;

/* Relative spin n.(w_a - w_b) of contact j from the scene (free bodies only:
 * the tests' soft contacts at rest on links have zero link velocities). */
static double spin_of(const cp_scene *sc, int j) {
  const cp_contact *c = &sc->contacts[j];
  double s = 0;
  for (int k = 0; k < 3; k++) {
    double wa = c->a.body >= 0 ? sc->bodies[c->a.body].w[k] : 0.0;
    double wb = c->b.body >= 0 ? sc->bodies[c->b.body].w[k] : 0.0;
    s += c->n[k] * (wa - wb);
  }
  return s;
}

/* The normal complementarity and the torsional law of each soft finger:
 * |c_tau| <= mu_tau c_n; spinning: c_tau = -mu_tau c_n sign(spin); not
 * spinning: c_tau = -+mu_tau c_n when the spin acceleration is +- nonzero. */
static void assert_torsion_law(const cpt_solved *s, double tol) {
  for (int j = 0; j < s->sys.n_c; j++) {
    const double *c = s->res.force + 3 * j, *a = s->res.accel + 3 * j;
    cr_assert_geq(c[0], -tol);
    cr_assert_geq(a[0], -tol);
    cr_assert_leq(fabs(c[0] * a[0]), tol * fmax(1.0, fabs(c[0])));
    const cp_contact *ct = &s->scene.contacts[j];
    cr_assert_eq(s->res.soft[j], ct->has_torsion, "contact %d", j);
    if (!ct->has_torsion) {
      cr_assert_eq(s->res.torsion[j], 0.0);
      continue;
    }
    double lim = ct->mu_torsion * c[0], tau = s->res.torsion[j], sa = s->res.spin_accel[j];
    double om = spin_of(&s->scene, j);
    cr_assert_leq(fabs(tau), lim + tol, "contact %d: torsion %g beyond %g", j, tau, lim);
    if (fabs(om) > s->sys.tol) {
      cr_assert_float_eq(tau, -copysign(lim, om), tol, "contact %d: spinning", j);
      continue;
    }
    if (sa > tol) cr_assert_float_eq(tau, -lim, tol, "contact %d: must oppose spin'", j);
    if (sa < -tol) cr_assert_float_eq(tau, lim, tol, "contact %d: must oppose spin'", j);
  }
}

static void assert_physics(const cpt_solved *s) {
  cr_assert_eq(s->res.info.status, CP_LCP_SOLVED, "%s", s->res.info.reason);
  cpt_assert_newton_euler(s, 1e-7);
  assert_torsion_law(s, 1e-7);
}

/* A 1 kg disc (radius 0.1, thickness 0.02) on a table, one soft contact
 * under its centre, spinning at w about the vertical. */
static char *disc(double w, double mu_tor) {
  static char buf[2048];
  snprintf(buf, sizeof buf,
           "{\"bodies\": [{\"name\": \"table\", \"fixed\": true, \"shape\": {\"type\": \"plane\","
           " \"normal\": [0, 0, 1], \"offset\": 0}},"
           " {\"name\": \"disc\", \"mass\": 1, \"shape\": {\"type\": \"cylinder\", \"radius\": 0.1,"
           " \"length\": 0.02}, \"position\": [0, 0, 0.01], \"angular_velocity\": [0, 0, %.17g]}],"
           " \"contacts\": [{\"a\": \"disc\", \"b\": \"table\", \"point\": [0, 0, 0],"
           " \"normal\": [0, 0, 1], \"mu\": 0.5, \"mu_torsion\": %.17g}]}",
           w, mu_tor);
  return buf;
}

/* The builders are linear: M = R A C + E, q = R b with the probed maps.
 * Checked against cp_pyramid_build and cp_cone_build for a random A, b
 * and a mix of rolling, sliding and frictionless contacts. */
Test(softfinger, friction_map_reproduces_the_builders) {
  enum { NC = 4 };
  const int n3 = 3 * NC;
  uint64_t seed = 7;
  double A[n3 * n3], b[n3];
  for (int i = 0; i < n3 * n3; i++) A[i] = cpt_uniform(&seed, -1, 1);
  for (int i = 0; i < n3; i++) b[i] = cpt_uniform(&seed, -1, 1);
  cp_pyramid_contact pc[NC] = {{0.4, 0, {0, 0}}, {0.6, 1, {0.3, -0.5}}, {0.9, 0, {0, 0}},
                               {0.0, 1, {0, 0}}};
  int order[NC], rank[NC];
  cp_pyramid_layout lay;
  cp_pyramid_layout_make(NC, pc, order, rank, &lay);
  for (int cone = 0; cone < 2; cone++) {
    const int k = cone ? 8 : 4, m = cone ? cp_cone_size(&lay, k) : lay.m;
    double *M1 = malloc(sizeof(double) * (size_t)m * m), *M2 = malloc(sizeof(double) * (size_t)m * m);
    double *q1 = malloc(sizeof(double) * m), *q2 = malloc(sizeof(double) * m);
    if (cone) cp_cone_build(&lay, pc, k, A, b, M1, q1);
    else cp_pyramid_build(&lay, pc, A, b, M1, q1);
    cp_friction_map fm;
    cr_assert_eq(cp_friction_map_build(&lay, pc, cone, k, NULL, &fm), 0);
    cr_assert_eq(fm.mz, m);
    cr_assert_eq(fm.mc, n3);
    cr_assert_eq(cp_friction_map_lcp(&fm, A, b, M2, q2), 0);
    for (int i = 0; i < m * m; i++) cr_assert_float_eq(M1[i], M2[i], 1e-13, "cone %d: M[%d]", cone, i);
    for (int i = 0; i < m; i++) cr_assert_float_eq(q1[i], q2[i], 1e-13, "cone %d: q[%d]", cone, i);
    cp_friction_map_free(&fm);
    free(M1);
    free(M2);
    free(q1);
    free(q2);
  }
}

/* The torsion rows of the map, entry by entry, for one rolling contact with
 * a non-spinning soft finger: z = [c_n, s+_t, s+_o, a-_t, a-_o, s+_tau,
 * a-_tau], contact space [n, t, o, tau, pad, pad]. */
Test(softfinger, friction_map_torsion_rows) {
  cp_pyramid_contact pc[1] = {{0.5, 0, {0, 0}}};
  cp_torsion_contact tc[1] = {{1, 0.03, 0, 0.0}};
  int order[1], rank[1];
  cp_pyramid_layout lay;
  cp_pyramid_layout_make(1, pc, order, rank, &lay);
  cp_friction_map fm;
  cr_assert_eq(cp_friction_map_build(&lay, pc, 0, 4, tc, &fm), 0);
  cr_assert_eq(fm.mc, 6);
  cr_assert_eq(fm.mz, 7);
  cr_assert_eq(fm.tor_row[0], 3);
#define C(i, j) fm.C[(i) + (j) * fm.mc]
#define R(i, j) fm.R[(i) + (j) * fm.mz]
#define E(i, j) fm.E[(i) + (j) * fm.mz]
  cr_assert_float_eq(C(3, 0), -0.03, 1e-15);  /* c_tau = s+_tau - mu_tau c_n */
  cr_assert_float_eq(C(3, 5), 1.0, 1e-15);
  cr_assert_float_eq(C(1, 0), -0.5, 1e-15);   /* c_t = s+_t - mu c_n */
  cr_assert_float_eq(R(5, 3), 1.0, 1e-15);    /* a+_tau = a_tau + a-_tau */
  cr_assert_float_eq(E(5, 6), 1.0, 1e-15);
  cr_assert_float_eq(E(6, 0), 0.06, 1e-15);   /* s-_tau = 2 mu_tau c_n - s+_tau */
  cr_assert_float_eq(E(6, 5), -1.0, 1e-15);
  for (int i = 0; i < fm.mz; i++) cr_assert_eq(R(i, 4), 0.0); /* pads unread */
#undef C
#undef R
#undef E
  cp_friction_map_free(&fm);
  /* Spinning: no unknowns, c_tau = -d c_n. */
  tc[0].spinning = 1;
  tc[0].d = -0.03;
  cr_assert_eq(cp_friction_map_build(&lay, pc, 0, 4, tc, &fm), 0);
  cr_assert_eq(fm.mz, 5);
  cr_assert_float_eq(fm.C[3 + 0 * fm.mc], 0.03, 1e-15);
  cp_friction_map_free(&fm);
}

/* Spinning on one central soft contact: alpha_z = -sign(w) mu_tau m g / I_zz,
 * the contact keeps rolling, c = (m g, 0, 0), c_tau = -sign(w) mu_tau m g. */
Test(softfinger, spin_decelerates_at_closed_form) {
  const double ws[] = {2.0, -3.0}, mts[] = {0.05, 0.01};
  for (int t = 0; t < 2; t++) {
    cpt_solved s;
    cpt_solve_text(disc(ws[t], mts[t]), NULL, &s);
    assert_physics(&s);
    const double Izz = s.scene.bodies[1].inertia[8], sgn = ws[t] > 0 ? 1.0 : -1.0;
    cr_assert_float_eq(Izz, 0.5 * 0.1 * 0.1, 1e-12, "cylinder I_zz");
    const double alpha = -sgn * mts[t] * g / Izz;
    cr_assert_float_eq(s.res.udot[5], alpha, 1e-9, "alpha %g, expected %g", s.res.udot[5], alpha);
    cr_assert_float_eq(s.res.spin_accel[0], alpha, 1e-9);
    cr_assert_float_eq(s.res.torsion[0], -sgn * mts[t] * g, 1e-9);
    cr_assert_float_eq(s.res.force[0], g, 1e-9);
    for (int k = 0; k < 5; k++) cr_assert_float_eq(s.res.udot[k], 0.0, 1e-9, "dof %d", k);
    cr_assert_eq(s.res.outcome[0], CP_OUTCOME_ROLLING);
    cr_assert(s.res.diag.full_column_rank && s.res.diag.jacobian_rank == 4);
    cr_assert_eq(s.res.lcp_size, 5, "spinning: c_n and the four pyramid slacks only");
    cpt_release(&s);
  }
  /* The bundled scene is the first case. */
  cpt_solved s;
  cpt_solve_file("softfinger_spin.json", NULL, &s);
  assert_physics(&s);
  cr_assert_float_eq(s.res.udot[5], -98.1, 1e-9);
  cpt_release(&s);
}

/* No spin and nothing to twist: c_tau = 0, at rest; the soft finger's own
 * slack pair is in the LCP (size 5 + 2). */
Test(softfinger, rolling_soft_finger_without_torque_carries_none) {
  cpt_solved s;
  cpt_solve_text(disc(0.0, 0.05), NULL, &s);
  assert_physics(&s);
  cr_assert_eq(s.res.lcp_size, 7);
  cr_assert_float_eq(s.res.torsion[0], 0.0, 1e-12);
  cr_assert_float_eq(s.res.spin_accel[0], 0.0, 1e-12);
  for (int k = 0; k < 6; k++) cr_assert_float_eq(s.res.udot[k], 0.0, 1e-12);
  cr_assert_eq(s.res.outcome[0], CP_OUTCOME_ROLLING);
  cpt_release(&s);
}

/* mu_tau = 0 is a soft finger that carries nothing: spin unaffected. */
Test(softfinger, zero_mu_torsion) {
  cpt_solved s;
  cpt_solve_text(disc(2.0, 0.0), NULL, &s);
  assert_physics(&s);
  cr_assert_eq(s.res.soft[0], 1);
  cr_assert_float_eq(s.res.torsion[0], 0.0, 1e-15);
  cr_assert_float_eq(s.res.udot[5], 0.0, 1e-12);
  cpt_release(&s);
}

/* A driver (prismatic joint along -z with effort F, then a revolute joint
 * about z with effort T) presses on a disc lying on a table; soft fingers
 * over and under the disc's centre (mu_tau1 driver-disc, mu_tau2
 * disc-table). N1 = F + (m_slide + m_tip) g, N2 = N1 + m_disc g.
 *   T <= mu2 N2, T <= mu1 N1: at rest, c_tau = -T at both contacts;
 *   mu2 N2 < T, grip holds: together, alpha = (T - mu2 N2) / (I_d + I_tip);
 *   mu1 N1 < T, mu1 N1 < mu2 N2: the driver slips, the disc stays,
 *                                alpha_tip = (T - mu1 N1) / I_tip. */
static char *driver(double F, double T, double mu1, double mu2) {
  static char buf[4096];
  snprintf(buf, sizeof buf,
           "{\"bodies\": [{\"name\": \"table\", \"fixed\": true, \"shape\": {\"type\": \"plane\","
           " \"normal\": [0, 0, 1], \"offset\": 0}},"
           " {\"name\": \"disc\", \"mass\": 1, \"shape\": {\"type\": \"cylinder\", \"radius\": 0.1,"
           " \"length\": 0.02}, \"position\": [0, 0, 0.01]}],"
           " \"manipulators\": [{\"name\": \"driver\", \"base\": {\"position\": [0, 0, 0.2]},"
           " \"joints\": [{\"name\": \"press\", \"type\": \"prismatic\", \"axis\": [0, 0, -1],"
           " \"effort\": %.17g, \"link\": {\"name\": \"slide\", \"mass\": 0.1, \"com\": [0, 0, 0],"
           " \"inertia\": [[1e-4, 0, 0], [0, 1e-4, 0], [0, 0, 1e-4]]}},"
           " {\"name\": \"twist\", \"type\": \"revolute\", \"axis\": [0, 0, 1],"
           " \"origin\": {\"position\": [0, 0, -0.1]}, \"effort\": %.17g,"
           " \"link\": {\"name\": \"tip\", \"mass\": 0.1, \"com\": [0, 0, 0],"
           " \"inertia\": [[1e-3, 0, 0], [0, 1e-3, 0], [0, 0, 1e-3]]}}]}],"
           " \"contacts\": [{\"a\": \"disc\", \"b\": \"table\", \"point\": [0, 0, 0],"
           " \"normal\": [0, 0, 1], \"mu\": 0.5, \"mu_torsion\": %.17g},"
           " {\"a\": \"disc\", \"b\": \"driver/tip\", \"point\": [0, 0, 0.02],"
           " \"normal\": [0, 0, -1], \"mu\": 0.5, \"mu_torsion\": %.17g}]}",
           F, T, mu2, mu1);
  return buf;
}

Test(softfinger, driver_holds_twists_and_slips) {
  const double F = 5.0, N1 = F + 0.2 * g, N2 = N1 + g, Id = 0.005, It = 1e-3;
  const int tw = 6 + 1; /* u row of the twist joint; press is row 6 */
  struct { double T, mu1, mu2; int kase; } cases[] = {
      {0.1, 0.05, 0.02, 0}, {-0.1, 0.05, 0.02, 0}, {0.5, 0.1, 0.02, 1}, {0.5, 0.05, 0.1, 2}};
  for (size_t t = 0; t < sizeof cases / sizeof *cases; t++) {
    const double T = cases[t].T, mu1 = cases[t].mu1, mu2 = cases[t].mu2;
    cpt_solved s;
    cpt_solve_text(driver(F, T, mu1, mu2), NULL, &s);
    assert_physics(&s);
    cr_assert_float_eq(s.res.force[0], N2, 1e-9, "case %zu: N2", t);
    cr_assert_float_eq(s.res.force[3], N1, 1e-9, "case %zu: N1", t);
    cr_assert_float_eq(s.res.udot[6], 0.0, 1e-9, "case %zu: press joint", t);
    double ad = s.res.udot[5], at = s.res.udot[tw];
    switch (cases[t].kase) {
    case 0:
      cr_assert_float_eq(ad, 0.0, 1e-9, "case %zu", t);
      cr_assert_float_eq(at, 0.0, 1e-9, "case %zu", t);
      cr_assert_float_eq(s.res.torsion[0], -T, 1e-9, "case %zu: table torsion", t);
      cr_assert_float_eq(s.res.torsion[1], -T, 1e-9, "case %zu: driver torsion", t);
      break;
    case 1: {
      double alpha = (T - mu2 * N2) / (Id + It);
      cr_assert_float_eq(ad, alpha, 1e-9, "case %zu: disc %g vs %g", t, ad, alpha);
      cr_assert_float_eq(at, alpha, 1e-9, "case %zu: driver", t);
      cr_assert_float_eq(s.res.torsion[0], -mu2 * N2, 1e-9);
      cr_assert_float_eq(s.res.spin_accel[0], alpha, 1e-9);
      cr_assert_float_eq(s.res.spin_accel[1], 0.0, 1e-9);
      /* Driver: I_tip alpha = T + c_tau1 (its moment is +c_tau1 z). */
      cr_assert_float_eq(It * alpha, T + s.res.torsion[1], 1e-9);
      break;
    }
    case 2: {
      double alpha = (T - mu1 * N1) / It;
      cr_assert_float_eq(ad, 0.0, 1e-9, "case %zu", t);
      cr_assert_float_eq(at, alpha, 1e-9, "case %zu: driver %g vs %g", t, at, alpha);
      /* Relative spin of the disc over the driver about n = -z: +alpha. */
      cr_assert_float_eq(s.res.spin_accel[1], alpha, 1e-9);
      cr_assert_float_eq(s.res.torsion[1], -mu1 * N1, 1e-9);
      cr_assert_float_eq(s.res.torsion[0], -mu1 * N1, 1e-9);
      break;
    }
    }
    /* The driver's joint equation from the scene: I_tip at = T + c_tau1. */
    cr_assert_float_eq(It * at, T + s.res.torsion[1], 1e-9, "case %zu", t);
    cpt_release(&s);
  }
  cpt_solved s;
  cpt_solve_file("softfinger_screwdriver.json", NULL, &s);
  assert_physics(&s);
  cr_assert_float_eq(s.res.udot[5], (0.5 - 0.02 * N2) / (Id + It), 1e-9);
  cpt_release(&s);
}

/* Every solver and the cone model agree on the closed forms. */
Test(softfinger, solvers_and_cone_agree) {
  const double Id = 0.005, It = 1e-3, N1 = 5 + 0.2 * g, N2 = N1 + g;
  cp_lcp_solver which[3] = {CP_SOLVER_LEMKE, CP_SOLVER_FIP, CP_SOLVER_CERTIFY};
  for (int cone = 0; cone < 2; cone++)
    for (int t = 0; t < 3; t++) {
      cp_problem_options opt = cp_problem_defaults();
      opt.solve.solver = which[t];
      opt.friction = cone ? CP_FRICTION_CONE : CP_FRICTION_PYRAMID;
      cpt_solved s;
      cpt_solve_text(disc(2.0, 0.05), &opt, &s);
      cr_assert_eq(s.res.info.status, CP_LCP_SOLVED, "solver %d cone %d: %s", t, cone,
                   s.res.info.reason);
      cpt_assert_newton_euler(&s, 1e-6);
      cr_assert_float_eq(s.res.udot[5], -98.1, 1e-6, "solver %d cone %d", t, cone);
      cpt_release(&s);
      cpt_solve_text(driver(5.0, 0.5, 0.1, 0.02), &opt, &s);
      cr_assert_eq(s.res.info.status, CP_LCP_SOLVED, "solver %d cone %d: %s", t, cone,
                   s.res.info.reason);
      cpt_assert_newton_euler(&s, 1e-6);
      cr_assert_float_eq(s.res.udot[5], (0.5 - 0.02 * N2) / (Id + It), 1e-6,
                         "solver %d cone %d", t, cone);
      cpt_release(&s);
    }
}

/* Without soft fingers nothing changes: mu_torsion all negative gives the
 * very numbers of mu_torsion = NULL on the bundled scenes. */
Test(softfinger, ordinary_contacts_unchanged) {
  const char *names[] = {"box_on_table.json", "box_sliding.json", "finger_push.json",
                         "squeeze_grasp.json", "incline_slide.json"};
  for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
    char *text = cpt_scene_text(names[k]);
    cp_scene sc;
    cp_system sys;
    cp_error err;
    cr_assert_eq(cp_scene_parse(text, strlen(text), NULL, NULL, &sc, &err), 0);
    cr_assert_eq(cp_system_build(&sc, &sys, &err), 0);
    double neg[32];
    for (int j = 0; j < sys.n_c; j++) neg[j] = -1.0;
    cp_problem_options o1 = cp_problem_defaults(), o2 = o1;
    o2.mu_torsion = neg;
    cp_problem_result r1, r2;
    cp_problem_solve(&sys, &o1, &r1);
    cp_problem_solve(&sys, &o2, &r2);
    cr_assert_eq(r1.info.status, CP_LCP_SOLVED);
    cr_assert_eq(r1.lcp_size, r2.lcp_size);
    cr_assert_eq(memcmp(r1.force, r2.force, sizeof(double) * 3 * (size_t)sys.n_c), 0, "%s", names[k]);
    cr_assert_eq(memcmp(r1.udot, r2.udot, sizeof(double) * (size_t)sys.n_u), 0, "%s", names[k]);
    for (int j = 0; j < sys.n_c; j++) cr_assert_eq(r1.soft[j], 0);
    cp_problem_result_free(&r1);
    cp_problem_result_free(&r2);
    cp_system_free(&sys);
    cp_scene_free(&sc);
    free(text);
  }
}

/* `complan solve --json`: "torsion" and "spin_acceleration" on soft-finger
 * contacts only. */
Test(softfinger, cli_json_keys) {
  char path[1024];
  snprintf(path, sizeof path, "%s/models/scenes/softfinger_screwdriver.json", getenv("CP_SOURCE_ROOT"));
  const char *argv[] = {"complan", "solve", path, "--json", NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(argv, &out, &err), 0, "%s", err);
  json_error_t je;
  json_t *doc = json_loads(out, 0, &je);
  cr_assert_not_null(doc, "%s", je.text);
  json_t *cs = json_object_get(doc, "contacts");
  cr_assert_eq(json_array_size(cs), 2);
  for (size_t j = 0; j < 2; j++) {
    json_t *c = json_array_get(cs, j);
    cr_assert(json_is_number(json_object_get(c, "torsion")));
    cr_assert(json_is_number(json_object_get(c, "spin_acceleration")));
  }
  cr_assert_float_eq(json_number_value(json_object_get(json_array_get(cs, 0), "torsion")),
                     -0.02 * (5 + 0.2 * g + g), 1e-9);
  json_decref(doc);
  free(out);
  free(err);
  snprintf(path, sizeof path, "%s/models/scenes/box_on_table.json", getenv("CP_SOURCE_ROOT"));
  cr_assert_eq(cpt_run(argv, &out, &err), 0, "%s", err);
  doc = json_loads(out, 0, &je);
  cr_assert_not_null(doc);
  cs = json_object_get(doc, "contacts");
  for (size_t j = 0; j < json_array_size(cs); j++) {
    cr_assert_null(json_object_get(json_array_get(cs, j), "torsion"));
    cr_assert_null(json_object_get(json_array_get(cs, j), "spin_acceleration"));
  }
  json_decref(doc);
  free(out);
  free(err);
}
