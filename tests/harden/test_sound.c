/* Sound answers at every scale (issue 12): certify's "no solution" is never
 * a product of bad scaling or of a GLPK failure; a "solved" contact problem
 * never shows bodies accelerating into each other; GLPK never writes to
 * stdout. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "contact/certify.h"
#include "contact/glpkout.h"
#include "contact/lcpio.h"
#include "contact/problem.h"
#include "models/scene.h"
#include "models/system.h"
#include "tests/support.h"

static void load_lcp(const char *rel, cp_lcp *lcp) {
  size_t len;
  char *text = cpt_read_file(cpt_data(rel), &len);
  cr_assert_not_null(text, "cannot read %s", rel);
  cp_error err;
  cr_assert_eq(cp_lcp_parse(text, len, lcp, &err), 0, "%s: %s", err.where, err.msg);
  free(text);
}

/* The incline at rest with mu = 1e12, 1e20, 1e300: the box can rest, so
 * certify must not say no_solution. Before issue 12 all three did (1e300
 * right after a GLPK error). Now: a verified solution or undecided. */
Test(sound, certify_not_fooled_by_huge_mu, .timeout = 120) {
  const char *files[] = {"lcp/incline_rest_mu1e12.json", "lcp/incline_rest_mu1e20.json",
                         "lcp/incline_rest_mu1e300.json"};
  for (int f = 0; f < 3; f++) {
    cp_lcp lcp;
    load_lcp(files[f], &lcp);
    const int n = lcp.n;
    double *z = calloc(4 * (size_t)n, sizeof(double)), *w = z + n;
    cp_certify_options o = cp_certify_defaults();
    o.time_limit_s = 20;
    cp_lcp_info info;
    cp_certify_result res;
    cp_lcp_status st = cp_certify(n, lcp.M, lcp.q, &o, z, w, NULL, NULL, &res, &info);
    cr_assert_neq(st, CP_LCP_INFEASIBLE, "%s: %s", files[f], info.reason);
    if (st == CP_LCP_SOLVED) {
      cp_lcp_info chk;
      cp_lcp_info_clear(&chk);
      cr_assert(cp_lcp_check(n, lcp.M, lcp.q, z, NULL, NULL, &chk), "%s", chk.reason);
    } else {
      cr_assert(strstr(info.reason, "undecided"), "%s: %s", files[f], info.reason);
    }
    /* The whole auto chain agrees. */
    cp_solve_options so = cp_solve_defaults();
    so.certify.time_limit_s = 20;
    st = cp_lcp_solve(NULL, n, lcp.M, lcp.q, &so, z, w, &info, NULL);
    cr_assert_neq(st, CP_LCP_INFEASIBLE, "%s (auto): %s", files[f], info.reason);
    free(z);
    cp_lcp_free(&lcp);
  }
}

/* A truly infeasible LCP is still proven so, also when it is badly scaled
 * by rows and columns (the proof survives exact power-of-two scaling and
 * scaling by 1e6 / 1e-6 that is not a power of two). */
Test(sound, infeasible_proofs_survive_scaling) {
  /* w1 + w2 = -2 for every z: no solution. */
  const double base[4] = {1, -1, -1, 1}, qb[2] = {-1, -1};
  const double rs[3][2] = {{1, 1}, {1e6, 1e-6}, {3e-7, 7e5}};
  const double cs[3][2] = {{1, 1}, {1e-6, 1e6}, {5e5, 2e-6}};
  for (int k = 0; k < 3; k++) {
    double M[4], q[2], z[2], w[2];
    for (int j = 0; j < 2; j++)
      for (int i = 0; i < 2; i++) M[i + 2 * j] = rs[k][i] * base[i + 2 * j] * cs[k][j];
    for (int i = 0; i < 2; i++) q[i] = rs[k][i] * qb[i];
    cp_lcp_info info;
    cp_lcp_status st = cp_certify(2, M, q, NULL, z, w, NULL, NULL, NULL, &info);
    cr_assert_eq(st, CP_LCP_INFEASIBLE, "scaling %d: %s (%s)", k, cp_lcp_status_name(st),
                 info.reason);
    cr_assert(strstr(info.reason, "relaxed by rounding"), "%s", info.reason);
  }
}

/* GLPK's text never reaches stdout: FIP's phase I on the mu = 1e300 LCP
 * makes GLPK fail ("invalid scale factor"); stdout holds exactly the JSON
 * document, stderr nothing from GLPK unless --verbose. */
Test(sound, glpk_text_off_stdout, .timeout = 120) {
  const char *f = cpt_data("lcp/incline_rest_mu1e300.json");
  char *path = strdup(f);
  const char *a1[] = {"complan", "lcp", "solve", path, "--solver", "fip", "--json", NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(a1, &out, &err), 1);
  json_error_t je;
  json_t *doc = json_loads(out, 0, &je);
  cr_assert_not_null(doc, "stdout is not one JSON document: %s", out);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "failed");
  cr_assert(strstr(json_string_value(json_object_get(doc, "reason")), "GLPK"), "%s", out);
  json_decref(doc);
  cr_assert_null(strstr(err, "glp_"), "GLPK text on stderr without --verbose: %s", err);
  free(out);
  free(err);
  const char *a2[] = {"complan", "lcp",  "solve",     path,
                      "--solver", "fip", "--verbose", "--json", NULL};
  cr_assert_eq(cpt_run(a2, &out, &err), 1);
  cr_assert_not_null(json_loads(out, 0, &je), "stdout: %s", out);
  cr_assert(strstr(err, "invalid scale factor"), "--verbose: stderr lacks GLPK's text: %s",
            err);
  cr_assert_null(strstr(out, "glp_"));
  free(out);
  free(err);
  free(path);
}

/* The sink API itself: text goes where it is sent, nowhere by default. */
static void collect(void *ctx, const char *text) { strncat(ctx, text, 255 - strlen(ctx)); }
Test(sound, glpk_sink) {
  char buf[256] = "";
  cr_assert_eq(cp_glpk_forward(NULL, "dropped"), 1);
  cp_glpk_set_sink(collect, buf);
  cp_lcp lcp;
  load_lcp("lcp/incline_rest_mu1e300.json", &lcp);
  double z[64], w[64];
  cp_fip_options fo = cp_fip_defaults();
  cp_lcp_info info;
  cp_fip_solve(lcp.n, lcp.M, lcp.q, &fo, z, w, &info);
  cp_glpk_set_sink(NULL, NULL);
  cr_assert(strstr(buf, "invalid scale factor"), "sink got '%s'", buf);
  cp_lcp_free(&lcp);
}

/* The contact problem's own check: a contact point 1e12 m from its body
 * (so the LCP's rows are dominated by 1e24 terms) may fail, but never
 * "solves" with a body accelerating into another or a pulling force. */
Test(sound, contact_answers_checked, .timeout = 120) {
  size_t len;
  char *text = cpt_read_file(cpt_data("../../models/scenes/incline_rest.json"), &len);
  cr_assert_not_null(text);
  cp_scene sc;
  cp_error err;
  cr_assert_eq(cp_scene_parse(text, len, NULL, NULL, &sc, &err), 0, "%s", err.msg);
  free(text);
  for (int variant = 0; variant < 3; variant++) {
    cp_system sys;
    cp_scene s2 = sc; /* shallow: only a contact point and mu change */
    cp_contact saved = sc.contacts[0];
    if (variant == 0) for (int k = 0; k < 3; k++) sc.contacts[0].p[k] += 1e12 * sc.contacts[0].t[k];
    if (variant == 1) sc.contacts[0].mu = 1e12;
    if (variant == 2) sc.contacts[0].mu = 1e20;
    cr_assert_eq(cp_system_build(&s2, &sys, &err), 0, "%s", err.msg);
    for (int solver = 0; solver < 3; solver++) {
      cp_problem_options o = cp_problem_defaults();
      o.solve.solver = solver == 0 ? CP_SOLVER_AUTO : solver == 1 ? CP_SOLVER_LEMKE
                                                                  : CP_SOLVER_CERTIFY;
      o.solve.certify.time_limit_s = 10;
      cp_problem_result r;
      cp_lcp_status st = cp_problem_solve(&sys, &o, &r);
      cr_assert_neq(st, CP_LCP_INFEASIBLE, "variant %d solver %d: %s", variant, solver,
                    r.info.reason);
      if (st == CP_LCP_SOLVED)
        for (int j = 0; j < r.nc; j++) {
          cr_assert_geq(r.force[3 * j], -1e-9, "variant %d: pulling force", variant);
          cr_assert_geq(r.accel[3 * j], -1e-3, "variant %d solver %d: a_n = %g", variant,
                        solver, r.accel[3 * j]);
        }
      cp_problem_result_free(&r);
    }
    sc.contacts[0] = saved;
    cp_system_free(&sys);
  }
  cp_scene_free(&sc);
}
