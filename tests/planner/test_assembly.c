// Assembly stability and sequences (planner/assembly/assembly.h, contact/stability.h;
// docs/math.md §9): closed forms on a slope and an overhang, the arch that
// stands only complete, bottom-up towers, brute-force agreement of the
// sequence planner on small assemblies, the removal sweep, the database.
#include <criterion/criterion.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contact/stability.h"
#include "models/scene.h"
#include "models/system.h"
#include "planner/assembly/assembly.h"
#include "planner/store/assembly.h"
#include "planner/store/store.h"
#include "tests/planner/asm_support.h"
#include "tests/support.h"

static const double G = 9.81;

static void parse(const char *text, cp_scene *sc) {
  cp_scene_options so = cp_scene_options_defaults();
  cp_error err;
  int rc = cp_scene_parse(text, strlen(text), NULL, &so, sc, &err);
  cr_assert_eq(rc, 0, "scene: %s: %s", err.where, err.msg);
}

static void load_bundled(const char *name, cp_scene *sc) {
  const char *path = cpt_bundled_scene(name);
  cp_error err;
  cr_assert_eq(cp_assembly_load_scene(path, sc, &err), 0, "%s: %s: %s", path, err.where, err.msg);
}

static void slope_scene(double theta, double mu, cp_scene *sc) {
  char buf[1024];
  parse(cpt_slope_scene(theta, mu, buf, sizeof buf), sc);
}

static cp_stability_kind decide(const cp_scene *sc, uint64_t mask, cp_stability_result *r,
                                cp_system *sys, const cp_stability_options *opt) {
  cp_error err;
  int rc = cp_assembly_stability(sc, mask, opt, r, sys, NULL, NULL, &err);
  cr_assert_eq(rc, 0, "%s", err.msg);
  cr_assert_neq(r->kind, CP_STABILITY_FAILED, "failed: %s", r->reason);
  return r->kind;
}

/* |H u' - f - G c|_inf of a result's moving solution; *umax = |u'|_inf. */
static double motion_residual(const cp_system *sys, const cp_stability_result *r, double *umax) {
  double res = 0.0;
  *umax = 0.0;
  for (int i = 0; i < sys->n_u; i++) {
    double s = sys->f[i];
    for (int c = 0; c < 3 * sys->n_c; c++) s += sys->G[i + (size_t)c * sys->n_u] * r->motion_force[c];
    for (int k = 0; k < sys->n_u; k++) s -= sys->H[i + (size_t)k * sys->n_u] * r->udot[k];
    res = fmax(res, fabs(s));
    *umax = fmax(*umax, fabs(r->udot[i]));
  }
  return res;
}

static int is_stable(cp_stability_kind k) {
  return k == CP_STABILITY_STRONG || k == CP_STABILITY_WEAK || k == CP_STABILITY_UNDECIDED;
}

Test(assembly, slope_stable_iff_mu_at_least_tan_theta) {
  const double thetas[] = {0.3, 0.5, 0.7};
  for (int i = 0; i < 3; i++) {
    const double th = thetas[i];
    for (int side = 0; side < 2; side++) {
      const double mu = tan(th) * (side ? 1.01 : 0.99);
      cp_scene sc;
      slope_scene(th, mu, &sc);
      cp_stability_result r;
      cp_system sys;
      cp_stability_kind k = decide(&sc, 1, &r, &sys, NULL);
      if (side) {
        cr_assert(is_stable(k), "theta %g mu %g: %s", th, mu, cp_stability_kind_name(k));
        cr_assert(r.has_equilibrium);
        // Closed form: the contact forces add up to m g (normal m g cos,
        // along the slope m g sin): check the world resultant = -m g.
        double F[3] = {0, 0, 0};
        for (int j = 0; j < sys.n_c; j++)
          for (int c = 0; c < 3; c++)
            F[c] += r.force[3 * j] * sys.frame[9 * j + c] + r.force[3 * j + 1] * sys.frame[9 * j + 3 + c] +
                    r.force[3 * j + 2] * sys.frame[9 * j + 6 + c];
        cr_assert_float_eq(F[0], 0.0, 1e-7);
        cr_assert_float_eq(F[2], G, 1e-7);
        // Every force inside its pyramid.
        for (int j = 0; j < sys.n_c; j++) {
          cr_assert_geq(r.force[3 * j], -1e-9);
          cr_assert_leq(fabs(r.force[3 * j + 1]), mu * r.force[3 * j] + 1e-9);
          cr_assert_leq(fabs(r.force[3 * j + 2]), mu * r.force[3 * j] + 1e-9);
        }
      } else {
        cr_assert_eq(k, CP_STABILITY_UNSTABLE, "theta %g mu %g: %s", th, mu, cp_stability_kind_name(k));
        cr_assert(r.has_motion);
        // The block slides down the slope at g (sin - mu cos): the pyramid's
        // face along the slope direction is the Coulomb bound here.
        const double a = hypot(r.udot[0], r.udot[2]), want = G * (sin(th) - mu * cos(th));
        cr_assert_float_eq(a, want, 1e-6 * G, "theta %g: %g vs %g", th, a, want);
        cr_assert_lt(r.udot[0], 0.0); // downhill is -x for this normal
      }
      cp_system_free(&sys);
      cp_stability_result_free(&r);
      cp_scene_free(&sc);
    }
  }
}

/* A 0.3 m block on a fixed 0.2 m support (edge at x = 0.1), centre at x. */
static void overhang_scene(double x, cp_scene *sc) {
  char buf[1024];
  snprintf(buf, sizeof buf,
           "{\"bodies\": [{\"name\": \"support\", \"fixed\": true, \"shape\": {\"type\": "
           "\"box\", \"size\": [0.2, 0.2, 0.2]}, \"position\": [0, 0, 0.1]},"
           "{\"name\": \"block\", \"mass\": 2, \"shape\": {\"type\": \"box\", \"size\": "
           "[0.3, 0.1, 0.1]}, \"position\": [%.17g, 0, 0.25]}]}",
           x);
  parse(buf, sc);
}

Test(assembly, overhang_unstable_iff_centre_beyond_edge) {
  const double xs[] = {0.0, 0.05, 0.09, 0.099, 0.101, 0.11, 0.2};
  for (int i = 0; i < 7; i++) {
    cp_scene sc;
    overhang_scene(xs[i], &sc);
    cp_stability_result r;
    cp_stability_kind k = decide(&sc, 1, &r, NULL, NULL);
    if (xs[i] < 0.1) {
      cr_assert_eq(k, CP_STABILITY_STRONG, "x = %g: %s", xs[i], cp_stability_kind_name(k));
      cr_assert_str_eq(r.method, "energy");
    } else {
      cr_assert_eq(k, CP_STABILITY_UNSTABLE, "x = %g: %s", xs[i], cp_stability_kind_name(k));
      cr_assert(r.has_motion);
      cr_assert_gt(r.udot[4], 0.0, "tips about the edge (positive y rotation)");
    }
    // Sequencing agrees: a block that cannot stand has no sequence, and
    // the whole assembly is what blocks.
    cp_assembly_result res;
    cp_assembly_status st = cp_assembly_plan(&sc, NULL, &res);
    cr_assert_eq(st, xs[i] < 0.1 ? CP_ASSEMBLY_FOUND : CP_ASSEMBLY_NONE);
    if (st == CP_ASSEMBLY_NONE) {
      cr_assert(res.has_blocked && res.blocked == 1u);
      cr_assert_neq(res.message[0], '\0');
    }
    cp_assembly_result_free(&res);
    cp_stability_result_free(&r);
    cp_scene_free(&sc);
  }
}

Test(assembly, arch_stands_only_complete) {
  cp_scene sc;
  load_bundled("arch.json", &sc);
  cr_assert_eq(cp_assembly_parts(&sc, NULL), 3);
  cp_stability_options o = cp_stability_defaults();
  o.time_limit_s = 1.0;
  for (uint64_t m = 1; m <= 7; m++) {
    cp_stability_result r;
    cp_stability_kind k = decide(&sc, m, &r, NULL, &o);
    if (m == 7) cr_assert(is_stable(k), "complete arch: %s", cp_stability_kind_name(k));
    else cr_assert_eq(k, CP_STABILITY_UNSTABLE, "subset %llx: %s", (unsigned long long)m, cp_stability_kind_name(k));
    cp_stability_result_free(&r);
  }
  cp_assembly_result res;
  cr_assert_eq(cp_assembly_plan(&sc, NULL, &res), CP_ASSEMBLY_NONE);
  cr_assert(res.has_blocked);
  cr_assert_eq(res.blocked, 7u, "every voussoir is needed");
  cp_assembly_result_free(&res);
  cp_scene_free(&sc);
  // With the temporary centering (a fixed support) a sequence exists.
  load_bundled("arch_centering.json", &sc);
  cr_assert_eq(cp_assembly_plan(&sc, NULL, &res), CP_ASSEMBLY_FOUND);
  cr_assert_eq(res.n_steps, 3);
  cp_assembly_result_free(&res);
  cp_scene_free(&sc);
}

Test(assembly, friction_stack_needs_friction) {
  cp_scene sc;
  load_bundled("friction_stack.json", &sc);
  cp_stability_options o = cp_stability_defaults();
  o.time_limit_s = 1.0;
  cp_stability_result r;
  cr_assert(is_stable(decide(&sc, 3, &r, NULL, &o)));
  cp_stability_result_free(&r);
  // Lower friction everywhere (the stack's slope is 25 degrees): unstable.
  sc.mu_default = 0.9 * tan(25.0 * acos(-1.0) / 180.0);
  for (int j = 0; j < sc.n_contacts; j++) sc.contacts[j].mu = sc.mu_default;
  cr_assert_eq(decide(&sc, 3, &r, NULL, &o), CP_STABILITY_UNSTABLE);
  cp_stability_result_free(&r);
  cp_scene_free(&sc);
}

Test(assembly, tower_sequenced_bottom_up) {
  cp_scene sc;
  load_bundled("tower.json", &sc);
  int pb[8];
  const int n = cp_assembly_parts(&sc, pb);
  cr_assert_eq(n, 4);
  cp_assembly_result res;
  cr_assert_eq(cp_assembly_plan(&sc, NULL, &res), CP_ASSEMBLY_FOUND);
  cr_assert_eq(res.n_steps, n);
  for (int k = 0; k < n; k++) {
    cr_assert_eq(res.steps[k].body, pb[k], "step %d places %s", k, sc.bodies[res.steps[k].body].name);
    cr_assert_eq(res.steps[k].stability, CP_STABILITY_STRONG);
    // Each block is lowered onto the one below it.
    cr_assert_float_eq(res.steps[k].direction[2], -1.0, 1e-12);
  }
  cr_assert_eq(res.has_blocked, 0);
  cp_assembly_result_free(&res);
  cp_scene_free(&sc);
}

Test(assembly, wedged_block_weak_by_milp_and_by_solve) {
  // A block jammed between two fixed walls: friction can hold it (any
  // normal force is admissible) and free fall is a solution too: weak.
  cp_scene sc;
  parse(cpt_wedged_scene(), &sc);
  for (int via_milp = 0; via_milp < 2; via_milp++) {
    cp_stability_options o = cp_stability_defaults();
    o.try_solve = !via_milp;
    cp_stability_result r;
    cp_system sys;
    cr_assert_eq(decide(&sc, 1, &r, &sys, &o), CP_STABILITY_WEAK);
    cr_assert_str_eq(r.method, via_milp ? "milp" : "solve");
    cr_assert(r.has_equilibrium && r.has_motion);
    // Independent check of the moving solution: H u' = f + G c.
    double umax = 0.0, maxres = motion_residual(&sys, &r, &umax);
    cr_assert_lt(maxres, 1e-6);
    cr_assert_gt(umax, 1e-3);
    for (int j = 0; j < sys.n_c; j++) cr_assert_geq(r.motion_force[3 * j], -1e-9);
    cp_system_free(&sys);
    cp_stability_result_free(&r);
  }
  cp_scene_free(&sc);
}

Test(assembly, slope_strong_by_milp) {
  // Frictionless sliding would gain energy, so the energy test cannot
  // decide; the MILP proves no solution moves.
  cp_scene sc;
  slope_scene(0.4, 1.2 * tan(0.4), &sc);
  cp_stability_result r;
  cr_assert_eq(decide(&sc, 1, &r, NULL, NULL), CP_STABILITY_STRONG);
  cr_assert_str_eq(r.method, "milp");
  cr_assert_gt(r.mip_solves, 0);
  cp_stability_result_free(&r);
  cp_scene_free(&sc);
}

Test(assembly, undecided_is_reported_not_guessed) {
  cp_scene sc;
  load_bundled("arch.json", &sc);
  cp_stability_options o = cp_stability_defaults();
  o.time_limit_s = 1e-3; // far too short for the arch's MILPs
  o.try_solve = 0;
  cp_stability_result r;
  cp_stability_kind k = decide(&sc, 7, &r, NULL, &o);
  cr_assert(k == CP_STABILITY_UNDECIDED || k == CP_STABILITY_WEAK, "%s", cp_stability_kind_name(k));
  if (k == CP_STABILITY_UNDECIDED) {
    cr_assert(r.has_equilibrium);
    cr_assert_neq(r.reason[0], '\0');
  }
  cp_stability_result_free(&r);
  cp_scene_free(&sc);
}

Test(assembly, removal_sweep_geometry) {
  // A 0.2 m block on the ground between a tall fixed wall on its left and
  // a low one (5 cm) on its right, both touching it, with a free lid on its
  // top-left half. By hand: +x and -x cut into the walls, -z into the
  // ground, +y and -y slide along every face; +z is free without the lid.
  cp_scene sc;
  parse("{\"bodies\": [{\"name\": \"ground\", \"fixed\": true, \"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1]}},"
        "{\"name\": \"wall_l\", \"fixed\": true, \"shape\": {\"type\": \"box\", \"size\": [0.1, 0.4, 0.3]}, \"position\": [-0.15, 0, 0.15]},"
        "{\"name\": \"wall_r\", \"fixed\": true, \"shape\": {\"type\": \"box\", \"size\": [0.1, 0.4, 0.05]}, \"position\": [0.15, 0, 0.025]},"
        "{\"name\": \"block\", \"mass\": 1, \"shape\": {\"type\": \"box\", \"size\": [0.2, 0.2, 0.2]}, \"position\": [0, 0, 0.1]},"
        "{\"name\": \"lid\", \"mass\": 1, \"shape\": {\"type\": \"box\", \"size\": [0.1, 0.2, 0.05]}, \"position\": [-0.05, 0, 0.225]}]}",
        &sc);
  double dirs[18];
  cp_assembly_directions(0, dirs);
  //   dir   +x  -x  +y  -y  +z  -z
  const int with_lid[6] = {0, 0, 1, 1, 0, 0};
  const int without_lid[6] = {0, 0, 1, 1, 1, 0};
  for (int k = 0; k < 6; k++) {
    cp_error err;
    int r = cp_assembly_removable(&sc, 3, 0, dirs + 3 * k, NULL, &err);
    cr_assert_eq(r, with_lid[k], "with lid, direction %d: %d", k, r);
    r = cp_assembly_removable(&sc, 1, 0, dirs + 3 * k, NULL, &err);
    cr_assert_eq(r, without_lid[k], "without lid, direction %d: %d", k, r);
  }
  // The automatic sweep step (half the thinnest shape) does not jump a
  // 1 cm plate 0.4 m away.
  cp_scene_free(&sc);
  parse("{\"bodies\": [{\"name\": \"plate\", \"fixed\": true, \"shape\": {\"type\": \"box\", \"size\": [0.01, 1, 1]}, \"position\": [0.5, 0, 0]},"
        "{\"name\": \"ball\", \"mass\": 1, \"shape\": {\"type\": \"sphere\", \"radius\": 0.1}, \"position\": [0, 0, 0]}]}",
        &sc);
  cr_assert_eq(cp_assembly_removable(&sc, 1, 0, dirs + 0, NULL, NULL), 0, "+x hits the plate");
  cr_assert_eq(cp_assembly_removable(&sc, 1, 0, dirs + 3, NULL, NULL), 1, "-x is free");
  cp_scene_free(&sc);
}

/* ---- brute force ------------------------------------------------------- */

static int bf_stable(const cp_scene *sc, uint64_t m) {
  if (!m) return 1;
  cp_stability_options o = cp_stability_defaults();
  o.depth = CP_STABILITY_EQUILIBRIUM;
  o.try_solve = 0;
  cp_stability_result r;
  cp_error err;
  cr_assert_eq(cp_assembly_stability(sc, m, &o, &r, NULL, NULL, NULL, &err), 0);
  int s = r.kind != CP_STABILITY_UNSTABLE;
  cr_assert_neq(r.kind, CP_STABILITY_FAILED);
  cp_stability_result_free(&r);
  return s;
}

static int bf_insertable(const cp_scene *sc, uint64_t m, int p) {
  double dirs[18];
  cp_assembly_directions(0, dirs);
  for (int k = 0; k < 6; k++)
    if (cp_assembly_removable(sc, m, p, dirs + 3 * k, NULL, NULL) == 1) return 1;
  return 0;
}

/* Every placing order of n parts: valid when each subassembly built is
 * stable and each part can come in along a direction (the reverse of a
 * removal). Returns the number of valid orders. */
static int brute_force(const cp_scene *sc, int n, int *valid_first, uint64_t *seen_valid) {
  int perm[6], count = 0;
  for (int i = 0; i < n; i++) perm[i] = i;
  // Heap's algorithm, iterative.
  int c[6] = {0};
  int i = 0;
  for (;;) {
    uint64_t m = 0;
    int ok = 1;
    for (int k = 0; k < n && ok; k++) {
      m |= (uint64_t)1 << perm[k];
      ok = bf_stable(sc, m) && bf_insertable(sc, m, perm[k]);
    }
    if (ok) {
      if (!count) memcpy(valid_first, perm, sizeof(int) * (size_t)n);
      uint64_t code = 0;
      for (int k = 0; k < n; k++) code = code * 8 + (uint64_t)perm[k];
      seen_valid[count % 720] = code;
      count++;
    }
    while (i < n && c[i] >= i) c[i++] = 0;
    if (i >= n) break;
    if (i % 2 == 0) { int t = perm[0]; perm[0] = perm[i]; perm[i] = t; }
    else { int t = perm[c[i]]; perm[c[i]] = perm[i]; perm[i] = t; }
    c[i]++;
    i = 0;
  }
  return count;
}

static void agree(const char *scene_text, const char *bundled) {
  cp_scene sc;
  if (bundled) load_bundled(bundled, &sc);
  else parse(scene_text, &sc);
  const int n = cp_assembly_parts(&sc, NULL);
  cr_assert(n >= 1 && n <= 5);
  int first[6];
  uint64_t valid[720];
  int count = brute_force(&sc, n, first, valid);
  cp_assembly_result res;
  cp_assembly_status st = cp_assembly_plan(&sc, NULL, &res);
  cr_assert(st == CP_ASSEMBLY_FOUND || st == CP_ASSEMBLY_NONE);
  cr_assert_eq(st == CP_ASSEMBLY_FOUND, count > 0, "%s: planner %s, brute force %d orders",
               bundled ? bundled : "inline", cp_assembly_status_name(st), count);
  if (st == CP_ASSEMBLY_FOUND) {
    uint64_t code = 0;
    for (int k = 0; k < n; k++) code = code * 8 + (uint64_t)res.steps[k].part;
    int found = 0;
    for (int k = 0; k < count && k < 720; k++) found |= valid[k] == code;
    cr_assert(found, "the planner's order is one of the brute-force orders");
  }
  cp_assembly_result_free(&res);
  cp_scene_free(&sc);
}

Test(assembly, brute_force_agreement_bundled) {
  agree(NULL, "tower.json");
  agree(NULL, "arch.json");
  agree(NULL, "arch_centering.json");
  agree(NULL, "no_sequence.json");
  agree(NULL, "friction_stack.json");
}

Test(assembly, brute_force_agreement_walls) {
  // A 2 x 2 wall of blocks, and a bridge: a beam across two posts (the
  // beam stands only when both posts do) with a block on the beam.
  agree("{\"bodies\": [{\"name\": \"ground\", \"fixed\": true, \"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1]}},"
        "{\"name\": \"a\", \"mass\": 1, \"shape\": {\"type\": \"box\", \"size\": [0.2, 0.2, 0.1]}, \"position\": [-0.1, 0, 0.05]},"
        "{\"name\": \"b\", \"mass\": 1, \"shape\": {\"type\": \"box\", \"size\": [0.2, 0.2, 0.1]}, \"position\": [0.1, 0, 0.05]},"
        "{\"name\": \"c\", \"mass\": 1, \"shape\": {\"type\": \"box\", \"size\": [0.2, 0.2, 0.1]}, \"position\": [-0.1, 0, 0.15]},"
        "{\"name\": \"d\", \"mass\": 1, \"shape\": {\"type\": \"box\", \"size\": [0.2, 0.2, 0.1]}, \"position\": [0.1, 0, 0.15]}]}",
        NULL);
  agree("{\"bodies\": [{\"name\": \"ground\", \"fixed\": true, \"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1]}},"
        "{\"name\": \"post_l\", \"mass\": 1, \"shape\": {\"type\": \"box\", \"size\": [0.1, 0.1, 0.3]}, \"position\": [-0.3, 0, 0.15]},"
        "{\"name\": \"post_r\", \"mass\": 1, \"shape\": {\"type\": \"box\", \"size\": [0.1, 0.1, 0.3]}, \"position\": [0.3, 0, 0.15]},"
        "{\"name\": \"beam\", \"mass\": 1, \"shape\": {\"type\": \"box\", \"size\": [0.8, 0.1, 0.05]}, \"position\": [0, 0, 0.325]},"
        "{\"name\": \"top\", \"mass\": 1, \"shape\": {\"type\": \"box\", \"size\": [0.1, 0.1, 0.1]}, \"position\": [0, 0, 0.4]}]}",
        NULL);
}

/* ---- database ---------------------------------------------------------- */

static int count_rows(sqlite3 *db, const char *sql) {
  sqlite3_stmt *st;
  cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &st, NULL), SQLITE_OK, "%s", sqlite3_errmsg(db));
  cr_assert_eq(sqlite3_step(st), SQLITE_ROW);
  int n = sqlite3_column_int(st, 0);
  sqlite3_finalize(st);
  return n;
}

Test(assembly, store_runs_steps_subassemblies) {
  cp_scene sc;
  load_bundled("tower.json", &sc);
  cp_assembly_result res;
  cr_assert_eq(cp_assembly_plan(&sc, NULL, &res), CP_ASSEMBLY_FOUND);
  char path[] = "/tmp/cp_asm_dbXXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  close(fd);
  unlink(path);
  int64_t id1 = 0, id2 = 0;
  cp_error err;
  cr_assert_eq(cp_assembly_store(path, "tower.json", &sc, &res, 6, &id1, &err), 0, "%s", err.msg);
  cr_assert_eq(cp_assembly_store(path, "tower.json", &sc, &res, 6, &id2, &err), 0, "%s", err.msg);
  cr_assert_eq(id2, id1 + 1);
  sqlite3 *db;
  cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
  cr_assert_eq(count_rows(db, "SELECT count(*) FROM assembly_runs"), 2);
  cr_assert_eq(count_rows(db, "SELECT count(*) FROM assembly_steps WHERE run_id = 1"), 4);
  cr_assert_eq(count_rows(db, "SELECT count(*) FROM assembly_subassemblies WHERE run_id = 1"), res.n_nodes);
  cr_assert_eq(count_rows(db, "SELECT count(*) FROM assembly_steps WHERE run_id = 1 AND step = 0 AND part = 'block0'"), 1);
  cr_assert_eq(count_rows(db, "PRAGMA user_version"), CP_STORE_SCHEMA_VERSION, "stamped by the store");
  cr_assert_eq(count_rows(db, "PRAGMA application_id"), CP_STORE_APPLICATION_ID);
  sqlite3_close(db);
  // A database that cannot be opened: an error, nothing stored.
  cr_assert_eq(cp_assembly_store("/nonexistent-dir/x.sqlite", "t", &sc, &res, 6, NULL, &err), -1);
  cr_assert_neq(err.msg[0], '\0');
  unlink(path);
  char wal[64];
  snprintf(wal, sizeof wal, "%s-wal", path);
  unlink(wal);
  snprintf(wal, sizeof wal, "%s-shm", path);
  unlink(wal);
  cp_assembly_result_free(&res);
  cp_scene_free(&sc);
}

Test(assembly, explicit_contacts_filtered_by_presence) {
  // stack.json lists its contacts (four corners under each of three
  // boxes): a subassembly keeps the listed contacts whose ends are present.
  cp_scene sc;
  load_bundled("stack.json", &sc);
  cr_assert_eq(sc.contacts_auto, 0);
  cp_stability_result r;
  cp_contact *con = NULL;
  int ncon = 0;
  cp_error err;
  cr_assert_eq(cp_assembly_stability(&sc, 7, NULL, &r, NULL, &con, &ncon, &err), 0);
  cr_assert_eq(r.kind, CP_STABILITY_STRONG);
  cr_assert_eq(ncon, 12);
  cp_stability_result_free(&r);
  free(con);
  // Without the middle box: the top box has no listed support: unstable,
  // and it falls freely (no contact of its own remains).
  cr_assert_eq(cp_assembly_stability(&sc, 5, NULL, &r, NULL, &con, &ncon, &err), 0);
  cr_assert_eq(r.kind, CP_STABILITY_UNSTABLE);
  cr_assert_eq(ncon, 4);
  cr_assert(r.has_motion);
  cr_assert_float_eq(r.udot[6 + 2], -9.81, 1e-9, "top box in free fall");
  cp_stability_result_free(&r);
  free(con);
  cp_assembly_result res;
  cr_assert_eq(cp_assembly_plan(&sc, NULL, &res), CP_ASSEMBLY_FOUND);
  for (int k = 0; k < 3; k++) cr_assert_eq(res.steps[k].part, k, "bottom-up");
  cp_assembly_result_free(&res);
  cp_scene_free(&sc);
}

Test(assembly, removal_sweep_meets_manipulator_links) {
  // squeeze_grasp.json: a box squeezed between two finger tips along x.
  // It cannot leave through a finger (+x, -x) but can be lifted out (+z).
  cp_scene sc;
  load_bundled("squeeze_grasp.json", &sc);
  cr_assert_eq(cp_assembly_parts(&sc, NULL), 1);
  double dirs[18];
  cp_assembly_directions(0, dirs);
  cp_error err;
  cr_assert_eq(cp_assembly_removable(&sc, 1, 0, dirs + 0, NULL, &err), 0, "+x: right tip");
  cr_assert_eq(cp_assembly_removable(&sc, 1, 0, dirs + 3, NULL, &err), 0, "-x: left tip");
  cr_assert_eq(cp_assembly_removable(&sc, 1, 0, dirs + 12, NULL, &err), 1, "+z: free");
  // Held by the fingers' efforts: stable with the manipulators in the
  // contact problem.
  cp_stability_result r;
  cr_assert(is_stable(decide(&sc, 1, &r, NULL, NULL)));
  cp_stability_result_free(&r);
  cp_scene_free(&sc);
}

/* squeeze_grasp.json with every joint acceleration-driven at `acc` (the
 * efforts become unknowns of the contact problem). */
static void rigid_grasp(double acc, cp_scene *sc) {
  size_t len;
  char *text = cpt_read_file(cpt_bundled_scene("squeeze_grasp.json"), &len);
  cr_assert_not_null(text);
  char *out = malloc(len + 256), *o = out;
  for (const char *p = text; *p;) {
    if (!strncmp(p, "\"effort\":", 9)) {
      o += sprintf(o, "\"acceleration\": %.17g", acc);
      p += 9;
      while (*p == ' ' || *p == '-' || *p == '.' || (*p >= '0' && *p <= '9') || *p == 'e') p++;
    } else {
      *o++ = *p++;
    }
  }
  *o = '\0';
  parse(out, sc);
  free(text);
  free(out);
}

Test(assembly, acceleration_driven_joints) {
  // Fingers held rigid (acceleration 0, efforts free): the box is jammed,
  // so friction may hold it with any squeeze and free fall is a solution
  // too: weak.
  cp_scene sc;
  rigid_grasp(0.0, &sc);
  cp_stability_result r;
  cr_assert_eq(decide(&sc, 1, &r, NULL, NULL), CP_STABILITY_WEAK);
  cr_assert(r.has_equilibrium && r.has_motion);
  cp_stability_result_free(&r);
  cp_scene_free(&sc);
  // Fingers driven to accelerate: the contacts accelerate (a0 != 0) and
  // the box cannot stay at rest.
  rigid_grasp(2.0, &sc);
  cr_assert_eq(decide(&sc, 1, &r, NULL, NULL), CP_STABILITY_UNSTABLE);
  cr_assert_eq(r.has_equilibrium, 0);
  cp_stability_result_free(&r);
  cp_scene_free(&sc);
}

/* ---- The one-MILP-then-band decision (issue 11 follow-up) against an
 * independent oracle: every contact mode enumerated. ---- */

#include <glpk.h>

static int quiet(void *info, const char *s) {
  (void)info;
  (void)s;
  return 1;
}

/* Does the contact problem at rest of sys (every dof free, k = 0) have a
 * solution with u' != 0? For each assignment of modes (a contact either
 * separates, c = 0 and a_n >= 0, or touches, a_n = 0, with each tangential
 * component sticking, a_e = 0 and |c_e| <= mu c_n, or sliding either way on
 * the opposing pyramid face), one LP: max f^T u' subject to H u' = f + G c
 * and the mode. By the energy identity a solution moves iff f^T u' > 0
 * (and |u'_i| <= 1e3 keeps the LP bounded). Returns 1 moving, 0 not. */
static int brute_moving(const cp_system *sys, double thr) {
  const int nu = sys->n_u, nc = sys->n_c, nv = nu + 3 * nc;
  int modes = 1;
  for (int j = 0; j < nc; j++) modes *= 10;
  glp_term_hook(quiet, NULL);
  int moving = 0;
  for (int m = 0; m < modes && !moving; m++) {
    glp_prob *P = glp_create_prob();
    glp_set_obj_dir(P, GLP_MAX);
    glp_add_cols(P, nv);
    for (int i = 0; i < nu; i++) {
      glp_set_col_bnds(P, i + 1, GLP_DB, -1e3, 1e3);
      glp_set_obj_coef(P, i + 1, sys->f[i]);
    }
    int *ia = malloc(sizeof(int) * (size_t)(nv * (nu + 1) * 4 + 1));
    int *ja = malloc(sizeof(int) * (size_t)(nv * (nu + 1) * 4 + 1));
    double *ar = malloc(sizeof(double) * (size_t)(nv * (nu + 1) * 4 + 1));
    int nz = 0, r = 0;
    glp_add_rows(P, nu);
    for (int i = 0; i < nu; i++) { /* H u' - G c = f */
      r++;
      glp_set_row_bnds(P, r, GLP_FX, sys->f[i], sys->f[i]);
      for (int k = 0; k < nu; k++) {
        nz++; ia[nz] = r; ja[nz] = k + 1; ar[nz] = sys->H[i + (size_t)k * nu];
      }
      for (int c = 0; c < 3 * nc; c++) {
        nz++; ia[nz] = r; ja[nz] = nu + c + 1; ar[nz] = -sys->G[i + (size_t)c * nu];
      }
    }
    for (int j = 0, mm = m; j < nc; j++, mm /= 10) {
      const int mode = mm % 10, n = 3 * j;
      const double mu = sys->mu[j];
      /* a_col = G[:, col]^T u' as a row with bounds (type, lo, hi) */
#define AROW(col, type, lo, hi)                                                 \
  do {                                                                        \
    r = glp_add_rows(P, 1);                                                   \
    glp_set_row_bnds(P, r, (type), (lo), (hi));                               \
    for (int k = 0; k < nu; k++) {                                            \
      nz++; ia[nz] = r; ja[nz] = k + 1; ar[nz] = sys->G[k + (size_t)(col) * nu]; \
    }                                                                         \
  } while (0)
#define CROW(e, sgn_e, sgn_n, type)                                             \
  do { /* sgn_e c_e + sgn_n mu c_n (type) 0 */                                \
    r = glp_add_rows(P, 1);                                                   \
    glp_set_row_bnds(P, r, (type), 0.0, 0.0);                                 \
    nz++; ia[nz] = r; ja[nz] = nu + (e) + 1; ar[nz] = (sgn_e);                \
    nz++; ia[nz] = r; ja[nz] = nu + n + 1; ar[nz] = (sgn_n) * mu;             \
  } while (0)
      if (mode == 0) {
        for (int q = 0; q < 3; q++) glp_set_col_bnds(P, nu + n + q + 1, GLP_FX, 0.0, 0.0);
        AROW(n, GLP_LO, 0.0, 0.0);
        continue;
      }
      glp_set_col_bnds(P, nu + n + 1, GLP_LO, 0.0, 0.0);
      AROW(n, GLP_FX, 0.0, 0.0);
      const int tm[2] = {(mode - 1) % 3, (mode - 1) / 3};
      for (int q = 0; q < 2; q++) {
        const int e = n + 1 + q;
        glp_set_col_bnds(P, nu + e + 1, GLP_FR, 0.0, 0.0);
        if (tm[q] == 0) {
          AROW(e, GLP_FX, 0.0, 0.0);
          CROW(e, 1.0, -1.0, GLP_UP);
          CROW(e, -1.0, -1.0, GLP_UP);
        } else if (tm[q] == 1) { /* slides +: c_e = -mu c_n */
          AROW(e, GLP_LO, 0.0, 0.0);
          CROW(e, 1.0, 1.0, GLP_FX);
        } else { /* slides -: c_e = mu c_n */
          AROW(e, GLP_UP, 0.0, 0.0);
          CROW(e, 1.0, -1.0, GLP_FX);
        }
      }
#undef AROW
#undef CROW
    }
    glp_load_matrix(P, nz, ia, ja, ar);
    glp_smcp sp;
    glp_init_smcp(&sp);
    sp.msg_lev = GLP_MSG_OFF;
    sp.presolve = GLP_ON;
    if (glp_simplex(P, &sp) == 0 && glp_get_status(P) == GLP_OPT && glp_get_obj_val(P) > thr)
      moving = 1;
    glp_delete_prob(P);
    free(ia);
    free(ja);
    free(ar);
  }
  glp_term_hook(NULL, NULL);
  return moving;
}

/* The verdict with the MILP deciding (no contact solve first). */
static cp_stability_kind decide_milp(const cp_scene *sc, cp_stability_milp how, cp_system *sys,
                                     cp_stability_result *r) {
  cp_stability_options o = cp_stability_defaults();
  o.try_solve = 0;
  o.time_limit_s = 0.0;
  o.milp = how;
  return decide(sc, 1, r, sys, &o);
}

static void agree_with_oracle(const cp_scene *sc, const char *what, int expect_moving) {
  cp_stability_result r1, r2;
  cp_system sys;
  cp_stability_kind k1 = decide_milp(sc, CP_STABILITY_MILP_ENERGY, &sys, &r1);
  cp_stability_kind k2 = decide_milp(sc, CP_STABILITY_MILP_PER_COORD, NULL, &r2);
  const int moving = brute_moving(&sys, 1e-6);
  cr_assert_eq(moving, expect_moving, "%s: the mode enumeration says %d", what, moving);
  cr_assert_eq(k1, moving ? CP_STABILITY_WEAK : CP_STABILITY_STRONG, "%s: one MILP says %s, modes say %s",
               what, cp_stability_kind_name(k1), moving ? "moving" : "none moves");
  cr_assert_eq(k2, k1, "%s: per-dof MILPs %s, one MILP %s", what, cp_stability_kind_name(k2),
               cp_stability_kind_name(k1));
  cr_assert_str_eq(r1.method, "milp");
  if (moving) { /* the reported motion: H u' = f + G c, and it moves */
    double umax = 0.0, res = motion_residual(&sys, &r1, &umax);
    cr_assert_lt(res, 1e-6, "%s", what);
    cr_assert_gt(umax, r1.acc_tol, "%s", what);
  } else {
    cr_assert_eq(r1.has_motion, 0);
  }
  cp_system_free(&sys);
  cp_stability_result_free(&r1);
  cp_stability_result_free(&r2);
}

Test(assembly, one_milp_agrees_with_mode_enumeration) {
  // A box on slopes, friction just above and well above tan(theta): strong.
  const double th[] = {0.2, 0.45}, fac[] = {1.02, 1.6};
  for (int a = 0; a < 2; a++)
    for (int b = 0; b < 2; b++) {
      cp_scene sc;
      slope_scene(th[a], fac[b] * tan(th[a]), &sc);
      char what[64];
      snprintf(what, sizeof what, "slope %g mu %g tan", th[a], fac[b]);
      agree_with_oracle(&sc, what, 0);
      cp_scene_free(&sc);
    }
  // A ball jammed between two walls: friction can hold it, and it can
  // fall: weak, found by the MILP.
  const double mus[] = {0.3, 1.0};
  for (int a = 0; a < 2; a++) {
    char text[1024];
    snprintf(text, sizeof text,
             "{\"friction\": {\"default\": %g}, \"bodies\": ["
             "{\"name\": \"left\", \"fixed\": true, \"shape\": {\"type\": \"box\", \"size\": [0.1, 0.4, 0.4]}, \"position\": [-0.15, 0, 0.5]},"
             "{\"name\": \"right\", \"fixed\": true, \"shape\": {\"type\": \"box\", \"size\": [0.1, 0.4, 0.4]}, \"position\": [0.15, 0, 0.5]},"
             "{\"name\": \"ball\", \"mass\": 1, \"shape\": {\"type\": \"sphere\", \"radius\": 0.1}, \"position\": [0, 0, 0.5]}]}",
             mus[a]);
    cp_scene sc;
    parse(text, &sc);
    agree_with_oracle(&sc, mus[a] < 0.5 ? "ball between walls, mu 0.3" : "ball between walls, mu 1", 1);
    cp_scene_free(&sc);
  }
}

/* ---- The sequence in the viewer page (planner/view/assembly.h) ---- */

#include "planner/view/assembly.h"

Test(assembly, animation_moves_each_part_along_its_approach) {
  cp_scene sc;
  load_bundled("tower.json", &sc);
  cp_assembly_result res;
  cr_assert_eq(cp_assembly_plan(&sc, NULL, &res), CP_ASSEMBLY_FOUND);
  cp_assembly_anim_options o = cp_assembly_anim_defaults();
  o.frames_per_step = 4;
  o.step_seconds = 2.0;
  const int n = res.n_steps, nf = cp_assembly_anim_frames(&res, &o);
  cr_assert_eq(nf, 4 * n + 1);
  // Automatic distance: the four 0.1 m-high blocks of the tower (centres
  // 0.05 .. 0.35, half-diagonal r) -> 2 (0.15 + r) + r.
  const double r = cp_shape_bounding_radius(&sc.bodies[res.steps[0].body].shape);
  const double D = cp_assembly_anim_distance(&sc, &o);
  cr_assert_float_eq(D, 2.0 * (0.15 + r) + r, 1e-12);
  double x[13 * 8], t;
  for (int f = 0; f < nf; f++) {
    cr_assert_eq(cp_assembly_anim_state(&sc, &res, &o, f, &t, x), 0);
    cr_assert_float_eq(t, 0.5 * f, 1e-12);
    for (int k = 0; k < n; k++) {
      const int b = res.steps[k].body;
      int slot = 0; // the body's place among the free bodies
      for (int i = 0; i < b; i++) slot += !sc.bodies[i].fixed;
      // Before its step: waiting D above (the tower is built from above);
      // during it: on the way down; after it: in place.
      const double left = f <= 4 * k ? 1.0 : f >= 4 * (k + 1) ? 0.0 : 1.0 - (f - 4 * k) / 4.0;
      cr_assert_float_eq(x[13 * slot + 2], sc.bodies[b].x[2] + left * D, 1e-12, "frame %d part %d", f, k);
      cr_assert_float_eq(x[13 * slot + 0], sc.bodies[b].x[0], 1e-12);
      for (int a = 0; a < 4; a++) cr_assert_eq(x[13 * slot + 3 + a], sc.bodies[b].q[a]);
    }
  }
  cr_assert_eq(cp_assembly_anim_state(&sc, &res, &o, nf, &t, x), -1);
  cr_assert_eq(cp_assembly_anim_state(&sc, &res, &o, -1, &t, x), -1);
  // An unwritable path: an error naming it, nothing written.
  cp_error err;
  cr_assert_neq(cp_assembly_write_page(&sc, &res, &o, "/nonexistent-dir/page.html", &err), CP_VIEWER_OK);
  cr_assert_str_eq(err.where, "/nonexistent-dir/page.html");
  cp_assembly_result_free(&res);
  // No sequence (the arch alone): one frame, the assembly as given.
  cp_scene_free(&sc);
  load_bundled("arch.json", &sc);
  cr_assert_eq(cp_assembly_plan(&sc, NULL, &res), CP_ASSEMBLY_NONE);
  cr_assert_eq(cp_assembly_anim_frames(&res, &o), 1);
  cr_assert_eq(cp_assembly_anim_state(&sc, &res, &o, 0, &t, x), 0);
  for (int i = 0, slot = 0; i < sc.n_bodies; i++)
    if (!sc.bodies[i].fixed) {
      for (int a = 0; a < 3; a++) cr_assert_eq(x[13 * slot + a], sc.bodies[i].x[a]);
      slot++;
    }
  cp_assembly_result_free(&res);
  cp_scene_free(&sc);
}

/* The strong/weak MILPs' work limit (cp_stability_options.node_limit): a
 * count of branch-and-bound nodes, so the verdict it gives is the same on
 * every machine. The wall-clock limit is off here (0): nothing below
 * depends on speed. */
Test(assembly, node_limit_is_a_work_limit) {
  // The slope of strict_friction_needs_the_milp: strong, proven by the
  // MILPs in a few hundred nodes (413 with Debian's GLPK 5.0).
  cp_scene sc;
  slope_scene(0.4, 1.2 * tan(0.4), &sc);
  cp_stability_options o = cp_stability_defaults();
  o.time_limit_s = 0.0;
  o.try_solve = 0;
  cp_stability_result r[2];
  o.node_limit = 100000;
  cr_assert_eq(decide(&sc, 1, &r[0], NULL, &o), CP_STABILITY_STRONG);
  const long need = r[0].mip_nodes;
  cr_assert_gt(need, 100, "%ld nodes", need);
  cr_assert_gt(r[0].mip_solves, 1);
  cp_stability_result_free(&r[0]);
  // Too few nodes: undecided, stopped right after the budget (GLPK counts
  // the two children of the node it branched on), twice the same.
  o.node_limit = 100;
  for (int k = 0; k < 2; k++) {
    cr_assert_eq(decide(&sc, 1, &r[k], NULL, &o), CP_STABILITY_UNDECIDED);
    cr_assert(r[k].has_equilibrium);
    cr_assert(r[k].mip_nodes > 100 && r[k].mip_nodes <= 102, "%ld nodes", r[k].mip_nodes);
  }
  cr_assert_eq(r[0].mip_nodes, r[1].mip_nodes);
  cr_assert_eq(r[0].mip_solves, r[1].mip_solves);
  cp_stability_result_free(&r[0]);
  cp_stability_result_free(&r[1]);
  // Exactly the nodes it needs: decided again, with the same count.
  o.node_limit = need;
  cr_assert_eq(decide(&sc, 1, &r[0], NULL, &o), CP_STABILITY_STRONG);
  cr_assert_eq(r[0].mip_nodes, need);
  cp_stability_result_free(&r[0]);
  cp_scene_free(&sc);
}
