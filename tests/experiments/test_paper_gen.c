/* The paper's problem generator (experiments/study/study.h): determinism, sizes,
 * scenes that pass the scene checker and rebuild to the same LCP, geometry
 * that is physically consistent, and the size-2 problem of Table 3. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contact/lcpio.h"
#include "experiments/study/study.h"
#include "models/vec3.h"
#include "tests/support.h"

static cp_paper_problem gen(int k, uint64_t seed) {
  cp_paper_problem p;
  cp_error e;
  int rc = cp_paper_generate(k, seed, &p, &e);
  cr_assert_eq(rc, 0, "problem %d: %s", k + 1, e.msg);
  return p;
}

static char *lcp_text(const char *scene) {
  cp_paper_instance in;
  cp_error e;
  cr_assert_eq(cp_paper_instance_build(scene, &in, &e), 0, "%s: %s", e.where, e.msg);
  char *t = cp_lcp_format_json(&in.lcp);
  cr_assert_not_null(t);
  cp_paper_instance_free(&in);
  return t;
}

Test(paper_gen, same_seed_same_bytes) {
  const int ks[] = {0, 6, 13, 22, CP_PAPER_PROBLEMS - 1};
  for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
    cp_paper_problem a = gen(ks[i], 7), b = gen(ks[i], 7);
    cr_assert_str_eq(a.scene_json, b.scene_json, "problem %d: scene differs", ks[i] + 1);
    for (int j = 0; j < CP_PAPER_NMU; j += 4) {
      char *sa = cp_paper_scene_text(&a, cp_paper_mu(j)), *sb = cp_paper_scene_text(&b, cp_paper_mu(j));
      cr_assert_str_eq(sa, sb);
      char *la = lcp_text(sa), *lb = lcp_text(sb);
      cr_assert_str_eq(la, lb, "problem %d mu %.1f: LCP bytes differ", ks[i] + 1, cp_paper_mu(j));
      free(sa);
      free(sb);
      free(la);
      free(lb);
    }
    cp_paper_problem c = gen(ks[i], 8);
    cr_assert_str_neq(a.scene_json, c.scene_json, "another seed gives the same scene");
    cp_paper_problem_free(&a);
    cp_paper_problem_free(&b);
    cp_paper_problem_free(&c);
  }
}

Test(paper_gen, sizes_match_specs) {
  int sizes_seen[200] = {0};
  for (int k = 0; k < CP_PAPER_PROBLEMS; k++) {
    cp_paper_problem p = gen(k, CP_PAPER_DEFAULT_SEED);
    cp_paper_spec sp = cp_paper_problem_spec(k);
    cr_assert_eq(p.size, sp.size, "problem %d", k + 1);
    cr_assert_eq(p.size, p.ns + 5 * p.nr, "problem %d: %d != %d + 5 * %d", k + 1, p.size, p.ns, p.nr);
    cr_assert_eq(p.nc, p.ns + p.nr);
    if (sp.nb > 0) cr_assert_eq(p.nb, sp.nb, "problem %d nb", k + 1);
    if (sp.ns >= 0) cr_assert_eq(p.ns, sp.ns, "problem %d nS", k + 1);
    cr_assert_geq(p.nb, 1);
    cr_assert_geq(p.n_fixed, 1, "the ground at least");
    cr_assert_eq(p.n_u, 6 * p.nb + p.n_joints);
    for (int j = 0; j < CP_PAPER_NMU; j += 9) {
      char *s = cp_paper_scene_text(&p, cp_paper_mu(j));
      cp_paper_instance in;
      cp_error e;
      cr_assert_eq(cp_paper_instance_build(s, &in, &e), 0, "%s", e.msg);
      cr_assert_eq(in.lcp.n, p.size);
      cr_assert_eq(in.ns, p.ns);
      cr_assert_eq(in.nr, p.nr);
      cr_assert_eq(in.nb, p.nb);
      cp_paper_instance_free(&in);
      free(s);
    }
    sizes_seen[p.size] = 1;
    cp_paper_problem_free(&p);
  }
  /* The paper's Table 1 sizes are all there. */
  const int t1[] = {2, 10, 16, 30, 50, 90, 120, 150, 170};
  for (size_t i = 0; i < sizeof t1 / sizeof t1[0]; i++)
    cr_assert(sizes_seen[t1[i]], "no problem of size %d", t1[i]);
  cr_assert_eq(CP_PAPER_PROBLEMS * CP_PAPER_NMU, 330);
}

Test(paper_gen, size_two_problem) {
  cp_paper_problem p = gen(0, CP_PAPER_DEFAULT_SEED);
  cr_assert_eq(p.size, 2);
  cr_assert_eq(p.nb, 1);
  cr_assert_eq(p.ns, 2);
  cr_assert_eq(p.nr, 0);
  cp_paper_problem_free(&p);
}

static double sd_box(const cp_body *b, const double *p) {
  double R[9], d[3], l[3], out = 0, in = -1e300;
  cp_quat_to_mat(R, b->q);
  cp_v3_sub(d, p, b->x);
  cp_m3_tmulv(l, R, d);
  for (int i = 0; i < 3; i++) {
    double qv = fabs(l[i]) - 0.5 * b->shape.size[i];
    if (qv > 0) out += qv * qv;
    in = fmax(in, qv);
  }
  return out > 0 ? sqrt(out) : in;
}

Test(paper_gen, scenes_pass_the_checker_and_rebuild) {
  for (int k = 0; k < CP_PAPER_PROBLEMS; k++) {
    cp_paper_problem p = gen(k, CP_PAPER_DEFAULT_SEED);
    const double mu = cp_paper_mu(k % CP_PAPER_NMU);
    char *s = cp_paper_scene_text(&p, mu);
    /* Through a file, as `complan solve` reads it. */
    char *path = cpt_temp_file(s, ".json");
    cp_scene sc;
    cp_error e;
    cr_assert_eq(cp_scene_load(path, NULL, &sc, &e), 0, "problem %d: %s: %s", k + 1, e.where, e.msg);
    cr_assert_eq(sc.contacts_auto, 0, "an explicit contact list");
    cr_assert_eq(cp_scene_check_normal_speeds(&sc, &e), 0, "%s", e.msg);
    int sliding = 0;
    for (int j = 0; j < sc.n_contacts; j++) {
      double vc[3];
      cp_scene_contact_velocity(&sc, j, vc);
      cr_assert_lt(fabs(vc[0]), 1e-9, "problem %d contact %d normal speed %g", k + 1, j, vc[0]);
      double vt = hypot(vc[1], vc[2]);
      cr_assert(vt < 1e-9 || vt >= 1e-3, "problem %d contact %d: ambiguous speed %g", k + 1, j, vt);
      sliding += vt >= 1e-3;
      cr_assert_float_eq(sc.contacts[j].mu, mu, 0.0);
      /* Geometry: the point is on the surface of every box it joins. */
      const cp_ref r2[2] = {sc.contacts[j].a, sc.contacts[j].b};
      for (int s2 = 0; s2 < 2; s2++) {
        if (r2[s2].body < 0) continue;
        const cp_body *b = &sc.bodies[r2[s2].body];
        if (b->shape.type == CP_SHAPE_BOX)
          cr_assert_lt(fabs(sd_box(b, sc.contacts[j].p)), 1e-9, "problem %d contact %d", k + 1, j);
        else if (b->shape.type == CP_SHAPE_PLANE)
          cr_assert_lt(fabs(sc.contacts[j].p[2]), 1e-12);
      }
    }
    cr_assert_eq(sliding, p.ns, "problem %d", k + 1);
    /* The file rebuilds to the LCP the study writes, byte for byte. */
    size_t len;
    char *again = cpt_read_file(path, &len);
    char *l1 = lcp_text(s), *l2 = lcp_text(again);
    cr_assert_str_eq(l1, l2);
    cp_lcp back;
    cr_assert_eq(cp_lcp_parse_json(l1, strlen(l1), &back, &e), 0, "%s", e.msg);
    cr_assert_eq(back.n, p.size);
    cp_lcp_free(&back);
    free(l1);
    free(l2);
    free(again);
    cp_scene_free(&sc);
    unlink(path);
    free(path);
    free(s);
    cp_paper_problem_free(&p);
  }
}

Test(paper_gen, complan_solve_reproduces_the_lcp) {
  cp_paper_problem p = gen(13, CP_PAPER_DEFAULT_SEED); /* the Table 2 mirror */
  char *s = cp_paper_scene_text(&p, 0.3);
  char *path = cpt_temp_file(s, ".json");
  const char *argv[] = {"complan", "solve", path, "--json", NULL};
  char *out, *err;
  int rc = cpt_run(argv, &out, &err);
  cr_assert_eq(rc, 0, "stderr: %s", err);
  json_error_t je;
  json_t *doc = json_loads(out, 0, &je);
  cr_assert_not_null(doc, "%s", je.text);
  cr_assert_eq(json_integer_value(json_object_get(doc, "lcp_size")), p.size);
  json_decref(doc);
  free(out);
  free(err);
  unlink(path);
  free(path);
  free(s);
  cp_paper_problem_free(&p);
}
