// GLPK internal errors in the stability decision (contact/stability.h,
// issue 25): an LP or MILP that fails inside GLPK is retried with other
// settings and the verdict is the one an unfailed run gives; only when every
// setting fails is the question left open, and then it says so. Faults are
// injected through contact/glpkout.h (a genuine glp_error at the point where
// the problem is loaded); the last test is a real failure of GLPK's simplex
// on the arch's simulated stage 5 (issue 25, session 17).
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/glpkout.h"
#include "contact/stability.h"
#include "models/scene.h"
#include "models/system.h"
#include "planner/assembly/assembly.h"
#include "tests/planner/asm_support.h"

/* Fails the calls of `where` numbered first..last (0-based, in order). */
typedef struct fault_plan {
  const char *where;
  int first, last;
  int seen, raised;
} fault_plan;

static int plan_fault(void *ctx, const char *where) {
  fault_plan *p = ctx;
  if (strcmp(where, p->where) != 0) return 0;
  const int k = p->seen++;
  const int fail = k >= p->first && k <= p->last;
  p->raised += fail;
  return fail;
}

static void parse(const char *text, cp_scene *sc) {
  cp_scene_options so = cp_scene_options_defaults();
  cp_error err;
  cr_assert_eq(cp_scene_parse(text, strlen(text), NULL, &so, sc, &err), 0, "%s", err.msg);
}

static void slope(cp_scene *sc) {
  char buf[1024];
  parse(cpt_slope_scene(0.4, 1.2 * tan(0.4), buf, sizeof buf), sc);
}

/* The verdict on all parts of sc, with the fault plan p (NULL: none). */
static cp_stability_kind run(const cp_scene *sc, const cp_stability_options *o, fault_plan *p,
                             cp_stability_result *r) {
  cp_error err;
  cp_glpk_set_fault(p ? plan_fault : NULL, p);
  const int rc = cp_assembly_stability(sc, 1, o, r, NULL, NULL, NULL, &err);
  cp_glpk_set_fault(NULL, NULL);
  cr_assert_eq(rc, 0, "%s", err.msg);
  return r->kind;
}

static cp_stability_options milp_only(void) {
  cp_stability_options o = cp_stability_defaults();
  o.try_solve = 0;
  o.time_limit_s = 0.0;
  o.node_limit = 100000;
  return o;
}

Test(stability_glpk, failed_milp_is_retried_to_the_same_verdict) {
  cp_scene sc;
  slope(&sc);
  const cp_stability_options o = milp_only();
  cp_stability_result clean, r;
  cr_assert_eq(run(&sc, &o, NULL, &clean), CP_STABILITY_STRONG);
  cr_assert_eq(clean.glpk_failures, 0);
  // The first and then the first two attempts at the first MILP fail.
  for (int last = 0; last < 2; last++) {
    fault_plan p = {"stability milp", 0, last, 0, 0};
    cr_assert_eq(run(&sc, &o, &p, &r), CP_STABILITY_STRONG, "%s", r.reason);
    cr_assert_str_eq(r.method, "milp");
    cr_assert_eq(p.raised, last + 1);
    cr_assert_eq(r.glpk_failures, last + 1);
    cr_assert_eq(r.mip_solves, clean.mip_solves + last + 1);
    cr_assert_str_eq(r.reason, "");
    cp_stability_result_free(&r);
  }
  cp_stability_result_free(&clean);
  cp_scene_free(&sc);
}

Test(stability_glpk, weak_found_after_a_failed_milp) {
  // The wedged block: friction holds it, and free fall is a solution too;
  // without the contact solve only the MILP can show the motion.
  cp_scene sc;
  parse(cpt_wedged_scene(), &sc);
  const cp_stability_options o = milp_only();
  fault_plan p = {"stability milp", 0, 0, 0, 0};
  cp_stability_result r;
  cr_assert_eq(run(&sc, &o, &p, &r), CP_STABILITY_WEAK, "%s", r.reason);
  cr_assert(r.has_motion);
  cr_assert_eq(r.glpk_failures, 1);
  double umax = 0.0;
  for (int i = 0; i < 6; i++) umax = fmax(umax, fabs(r.udot[i]));
  cr_assert_gt(umax, r.acc_tol);
  cp_stability_result_free(&r);
  cp_scene_free(&sc);
}

Test(stability_glpk, every_setting_failing_is_reported_as_such) {
  cp_scene sc;
  slope(&sc);
  const cp_stability_options o = milp_only();
  fault_plan p = {"stability milp", 0, 1000, 0, 0};
  cp_stability_result r;
  cr_assert_eq(run(&sc, &o, &p, &r), CP_STABILITY_UNDECIDED);
  cr_assert(r.has_equilibrium, "an equilibrium is still certified");
  cr_assert_eq(r.glpk_failures, 3);
  cr_assert_eq(r.mip_solves, 3, "three settings, then the question stays open");
  cr_assert(strstr(r.reason, "not solved by GLPK with any of 3 settings (3 internal errors") != NULL,
            "%s", r.reason);
  cp_stability_result_free(&r);
  cp_scene_free(&sc);
}

Test(stability_glpk, failed_lp_gets_an_exact_third_solve) {
  // A block whose centre is beyond its support's edge: no equilibrium.
  // "Unstable" needs two solves saying "infeasible"; with one of them
  // failed inside GLPK, the exact simplex is the second.
  cp_scene sc;
  parse("{\"bodies\": [{\"name\": \"support\", \"fixed\": true, \"shape\": {\"type\": "
        "\"box\", \"size\": [0.2, 0.2, 0.2]}, \"position\": [0, 0, 0.1]},"
        "{\"name\": \"block\", \"mass\": 2, \"shape\": {\"type\": \"box\", \"size\": "
        "[0.3, 0.1, 0.1]}, \"position\": [0.2, 0, 0.25]}]}",
        &sc);
  cp_stability_result r;
  for (int which = 0; which < 2; which++) {
    fault_plan p = {"stability lp", which, which, 0, 0};
    cr_assert_eq(run(&sc, NULL, &p, &r), CP_STABILITY_UNSTABLE, "fault %d: %s", which, r.reason);
    cr_assert_eq(r.glpk_failures, 1);
    cr_assert_eq(r.lp_solves, 3);
    cp_stability_result_free(&r);
  }
  // Both simplex solves fail: one exact "infeasible" is no verdict.
  fault_plan p = {"stability lp", 0, 1, 0, 0};
  cr_assert_eq(run(&sc, NULL, &p, &r), CP_STABILITY_FAILED);
  cr_assert_eq(r.glpk_failures, 2);
  cr_assert(strstr(r.reason, "GLPK failed") != NULL, "%s", r.reason);
  cp_stability_result_free(&r);
  // The same block on its support: the equilibrium is found and checked
  // although the first LP failed, and the energy test still proves strong.
  cp_scene_free(&sc);
  parse("{\"bodies\": [{\"name\": \"support\", \"fixed\": true, \"shape\": {\"type\": "
        "\"box\", \"size\": [0.2, 0.2, 0.2]}, \"position\": [0, 0, 0.1]},"
        "{\"name\": \"block\", \"mass\": 2, \"shape\": {\"type\": \"box\", \"size\": "
        "[0.3, 0.1, 0.1]}, \"position\": [0.05, 0, 0.25]}]}",
        &sc);
  for (int which = 0; which < 4; which++) {
    fault_plan q = {"stability lp", which, which, 0, 0};
    cr_assert_eq(run(&sc, NULL, &q, &r), CP_STABILITY_STRONG, "fault %d: %s", which, r.reason);
    cr_assert_str_eq(r.method, "energy");
    cr_assert(r.has_equilibrium && r.residual < 1e-9);
    cr_assert_eq(r.glpk_failures, q.raised);
    cp_stability_result_free(&r);
  }
  cp_scene_free(&sc);
}

/* The parts of `scene` moved to stage k (0-based) of a pose file ("stage
 * MASK" lines, each followed by "name x y z qw qx qy qz" lines); returns
 * the stage's mask of parts. */
static uint64_t stage_poses(cp_scene *sc, const char *file, int k) {
  FILE *f = fopen(file, "r");
  cr_assert(f != NULL, "%s", file);
  char line[1024], name[256];
  unsigned long long mask = 0, m;
  int at = -1;
  while (fgets(line, sizeof line, f) && at <= k) {
    double v[7];
    if (sscanf(line, "stage %llu", &m) == 1) {
      if (++at == k) mask = m;
      continue;
    }
    if (at != k || sscanf(line, "%255s %lf %lf %lf %lf %lf %lf %lf", name, &v[0], &v[1], &v[2],
                          &v[3], &v[4], &v[5], &v[6]) != 8)
      continue;
    for (int b = 0; b < sc->n_bodies; b++) {
      if (strcmp(sc->bodies[b].name, name) != 0) continue;
      for (int d = 0; d < 3; d++) sc->bodies[b].x[d] = v[d];
      for (int d = 0; d < 4; d++) sc->bodies[b].q[d] = v[3 + d];
    }
  }
  fclose(f);
  cr_assert_geq(at, k, "stage %d in %s", k, file);
  return mask;
}

/* Stage 5 of the arch (all six parts) from a pose file, H and G entries
 * below clean times their matrix's largest zeroed (0: none), decided with
 * the sequence certificates' node limit (2000). */
static void arch_stage_five(const char *file, double clean) {
  const char *root = getenv("CP_SOURCE_ROOT");
  char scene[4096], poses[4096];
  snprintf(scene, sizeof scene, "%s/planner/tasks/assembly/arch_scene.json", root ? root : ".");
  snprintf(poses, sizeof poses, "%s/experiments/%s", root ? root : ".", file);
  cp_scene sc;
  cp_error err;
  cr_assert_eq(cp_assembly_load_scene(scene, &sc, &err), 0, "%s: %s", scene, err.msg);
  const uint64_t mask = stage_poses(&sc, poses, 5);
  cr_assert_eq(mask, 63u);
  sc.touch_tolerance = fmax(sc.touch_tolerance, 1e-4); /* as the sequence's certificates */
  cp_stability_options eo = cp_stability_defaults();
  eo.depth = CP_STABILITY_EQUILIBRIUM;
  cp_stability_result r;
  cp_system sys;
  cr_assert_eq(cp_assembly_stability(&sc, mask, &eo, &r, &sys, NULL, NULL, &err), 0, "%s", err.msg);
  cr_assert_eq(r.kind, CP_STABILITY_UNDECIDED, "an equilibrium: %s", r.reason);
  cp_stability_result_free(&r);
  double hm = 0.0, gm = 0.0;
  const size_t nh = (size_t)sys.n_u * (size_t)sys.n_u, ng = (size_t)sys.n_u * 3 * (size_t)sys.n_c;
  for (size_t e = 0; e < nh; e++) hm = fmax(hm, fabs(sys.H[e]));
  for (size_t e = 0; e < ng; e++) gm = fmax(gm, fabs(sys.G[e]));
  for (size_t e = 0; e < nh; e++)
    if (fabs(sys.H[e]) < clean * hm) sys.H[e] = 0.0;
  for (size_t e = 0; e < ng; e++)
    if (fabs(sys.G[e]) < clean * gm) sys.G[e] = 0.0;
  cp_stability_options o = cp_stability_defaults();
  o.node_limit = 2000;
  o.time_limit_s = 0.0;
  cp_stability_decide(&sys, &o, &r);
  cr_log_info("arch stage 5 of %s (clean %g): %s, %ld nodes, %d MILPs, %d GLPK failures: %s", file, clean,
              cp_stability_kind_name(r.kind), r.mip_nodes, r.mip_solves, r.glpk_failures, r.reason);
  cr_assert(strstr(r.reason, "GLPK with any") == NULL, "%s", r.reason);
  cr_assert_neq(r.kind, CP_STABILITY_FAILED, "%s", r.reason);
  cr_assert(r.has_equilibrium);
  cr_assert_geq(r.glpk_failures, 1, "the failure this test is about no longer happens");
  if (r.kind == CP_STABILITY_UNDECIDED) {
    cr_assert(strstr(r.reason, "node limit") != NULL, "%s", r.reason);
    cr_assert(r.mip_nodes > 2000 && r.mip_nodes <= 2002, "%ld nodes", r.mip_nodes);
  }
  cp_stability_result_free(&r);
  cp_system_free(&sys);
  cp_scene_free(&sc);
}

Test(stability_glpk, arch_stage_five_survives_glpk) {
  // The arch's stage 5 (all six parts) as tests/planner/sequence_arch
  // simulates it (session 18): with Debian's GLPK 5.0 a node LP of the
  // first per-dof MILP meets a basis "singular to working precision" and
  // GLPK's primal simplex fails its assertion teta_lim >= 0.0 after about
  // 700 nodes; before session 18 that stage's verdict said "MILP failed
  // inside GLPK". Also session 15's poses with the rounding-size entries of
  // H and G (below 1e-14 of the largest) zeroed, which fail at about 1 400
  // nodes (experiments/results/assembly_robot.md). The retry ends at the
  // node limit: undecided for a stated reason, not for GLPK's failure.
  arch_stage_five("arch_stage_poses_s18.txt", 0.0);
  arch_stage_five("arch_stage_poses.txt", 1e-14);
}
