// The bundled scenes of models/scenes/: each parses (normal speeds zero),
// builds its system, and has the physics its name promises.
#include <criterion/criterion.h>
#include <dirent.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/system.h"
#include "models/vec3.h"
#include "tests/models/mtest.h"

static const char *scene_names[] = {
    "box_on_table", "incline_rest", "incline_slide", "box_sliding", "stack",
    "squeeze_grasp", "finger_push", "painleve_rod"};
#define N_SCENES (int)(sizeof scene_names / sizeof *scene_names)

static void load(const char *name, cp_scene *sc, cp_system *sys) {
  const char *root = getenv("CP_SOURCE_ROOT");
  char path[4096];
  snprintf(path, sizeof path, "%s/models/scenes/%s.json", root ? root : ".",
           name);
  cp_error err;
  cr_assert_eq(cp_scene_load(path, NULL, sc, &err), 0, "%s: %s: %s", path,
               err.where, err.msg);
  cr_assert_eq(cp_system_build(sc, sys, &err), 0, "%s: %s", name, err.msg);
}

// X = H^-1 G (n_u x 3 n_c) and y = H^-1 f by Cholesky; A = G^T X, b = G^T y + k.
static void contact_space(const cp_system *s, double *A, double *b) {
  int n = s->n_u, m = 3 * s->n_c;
  double *H = malloc(sizeof(double) * (size_t)(n * n));
  double *X = malloc(sizeof(double) * (size_t)(n * (m + 1)));
  memcpy(H, s->H, sizeof(double) * (size_t)(n * n));
  memcpy(X, s->G, sizeof(double) * (size_t)(n * m));
  memcpy(X + (size_t)n * m, s->f, sizeof(double) * (size_t)n);
  cr_assert_eq(LAPACKE_dposv(LAPACK_COL_MAJOR, 'L', n, m + 1, H, n, X, n), 0);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < m; ++j) {
      double acc = 0;
      for (int r = 0; r < n; ++r) acc += s->G[r + (size_t)i * n] * X[r + (size_t)j * n];
      A[i + j * m] = acc;
    }
    double acc = s->k[i];
    for (int r = 0; r < n; ++r) acc += s->G[r + (size_t)i * n] * X[r + (size_t)m * n];
    b[i] = acc;
  }
  free(H);
  free(X);
}

Test(scenes, all_parse_and_build) {
  for (int i = 0; i < N_SCENES; ++i) {
    cp_scene sc;
    cp_system sys;
    load(scene_names[i], &sc, &sys);
    cr_assert_gt(sys.n_c, 0, "%s", scene_names[i]);
    for (int j = 0; j < sys.n_c; ++j)
      cr_assert_lt(fabs(sys.v[3 * j]), 1e-12, "%s contact %d normal speed %g",
                   scene_names[i], j, sys.v[3 * j]);
    int n = sys.n_u;
    double *L = malloc(sizeof(double) * (size_t)(n * n));
    memcpy(L, sys.H, sizeof(double) * (size_t)(n * n));
    cr_assert_eq(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, L, n), 0,
                 "%s: H not positive definite", scene_names[i]);
    free(L);
    cp_system_free(&sys);
    cp_scene_free(&sc);
  }
  mt_assert_no_leaks();
}

// Every *.json file in models/scenes/ parses and builds (not only the
// listed ones), and the listed ones are all there.
Test(scenes, every_bundled_file) {
  const char *root = getenv("CP_SOURCE_ROOT");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/models/scenes", root ? root : ".");
  DIR *d = opendir(dir);
  cr_assert_not_null(d, "cannot open %s", dir);
  int count = 0, listed = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    size_t n = strlen(e->d_name);
    if (n < 6 || strcmp(e->d_name + n - 5, ".json")) continue;
    char name[256];
    snprintf(name, sizeof name, "%.*s", (int)(n - 5), e->d_name);
    cp_scene sc;
    cp_system sys;
    load(name, &sc, &sys);
    cp_system_free(&sys);
    cp_scene_free(&sc);
    ++count;
    for (int i = 0; i < N_SCENES; ++i) listed += !strcmp(name, scene_names[i]);
  }
  closedir(d);
  cr_assert_eq(listed, N_SCENES, "a listed scene is missing from %s", dir);
  cr_assert_geq(count, N_SCENES);
  mt_assert_no_leaks();
}

Test(scenes, box_on_table_and_sliding) {
  cp_scene sc;
  cp_system sys;
  load("box_on_table", &sc, &sys);
  cr_assert_eq(sys.n_c, 4);
  for (int j = 0; j < 4; ++j) cr_assert(!sys.sliding[j]);
  double A[144], b[12];
  contact_space(&sys, A, b);
  for (int j = 0; j < 4; ++j) { // free fall: b = (-g, 0, 0) at every corner
    cr_assert_float_eq(b[3 * j], -9.81, 1e-12);
    cr_assert_float_eq(b[3 * j + 1], 0, 1e-12);
  }
  cp_system_free(&sys);
  cp_scene_free(&sc);
  load("box_sliding", &sc, &sys);
  for (int j = 0; j < 4; ++j) {
    cr_assert(sys.sliding[j]);
    cr_assert_float_eq(sys.d[2 * j], 1, 1e-15);
    cr_assert_float_eq(sys.v[3 * j + 1], 1, 1e-15);
  }
  cp_system_free(&sys);
  cp_scene_free(&sc);
  mt_assert_no_leaks();
}

static void incline_check(const char *name, int mu_holds) {
  cp_scene sc;
  cp_system sys;
  load(name, &sc, &sys);
  cr_assert_eq(sys.n_c, 4);
  double tan_th = fabs(sc.contacts[0].n[0]) / sc.contacts[0].n[2];
  double th = atan(tan_th);
  cr_assert_float_eq(th, 20 * 3.14159265358979323846 / 180, 1e-12);
  for (int j = 0; j < 4; ++j) {
    cr_assert(!sys.sliding[j]);
    cr_assert_eq(sys.mu[j] >= tan_th, mu_holds, "%s mu %g tan %g", name,
                 sys.mu[j], tan_th);
  }
  // Without contact forces the corners accelerate at g sin th downhill
  // (t points downhill) and g cos th into the ramp.
  double A[144], b[12];
  contact_space(&sys, A, b);
  for (int j = 0; j < 4; ++j) {
    cr_assert_float_eq(b[3 * j], -9.81 * cos(th), 1e-12);
    cr_assert_float_eq(b[3 * j + 1], 9.81 * sin(th), 1e-12);
    cr_assert_float_eq(b[3 * j + 2], 0, 1e-12);
  }
  cp_system_free(&sys);
  cp_scene_free(&sc);
}

Test(scenes, inclines) {
  incline_check("incline_rest", 1);
  incline_check("incline_slide", 0);
  mt_assert_no_leaks();
}

Test(scenes, stack) {
  cp_scene sc;
  cp_system sys;
  load("stack", &sc, &sys);
  cr_assert_eq(sys.n_obj, 3);
  cr_assert_eq(sys.n_c, 12);
  // Static equilibrium exists: c_n = (weight above) / 4 at each corner.
  double *c = calloc(36, sizeof(double)), res[18];
  for (int j = 0; j < 12; ++j) c[3 * j] = (3 - j / 4) * 9.81 / 4;
  for (int r = 0; r < 18; ++r) {
    res[r] = sys.f[r];
    for (int k = 0; k < 36; ++k) res[r] += sys.G[r + 18 * k] * c[k];
    cr_assert_float_eq(res[r], 0, 1e-12, "row %d residual %g", r, res[r]);
  }
  free(c);
  cp_system_free(&sys);
  cp_scene_free(&sc);
  mt_assert_no_leaks();
}

Test(scenes, squeeze_grasp_efforts_balance_the_squeeze) {
  cp_scene sc;
  cp_system sys;
  load("squeeze_grasp", &sc, &sys);
  cr_assert_eq(sys.n_obj, 1);
  cr_assert_eq(sys.n_l, 4);
  cr_assert_eq(sys.n_c, 2);
  cr_assert_eq(sc.contacts[0].b.manip, 0);
  cr_assert_eq(sc.contacts[1].b.manip, 1);
  cr_assert_float_eq(cp_v3_dot(sc.contacts[0].n, sc.contacts[1].n), -1, 0);
  // With 5 N normal forces and tangential (+z) forces carrying half the
  // box's weight each, everything is in equilibrium: f + G c = 0 in every
  // row (the efforts include the lift).
  double lift = 0.2 * 9.81 / 2;
  cr_assert_float_eq(sc.contacts[0].t[2], 1.0, 1e-12);
  double c[6] = {5, lift, 0, 5, lift, 0};
  for (int r = 0; r < sys.n_u; ++r) {
    double res = sys.f[r];
    for (int k = 0; k < 6; ++k) res += sys.G[r + (size_t)sys.n_u * k] * c[k];
    cr_assert_float_eq(res, 0, 1e-12, "row %d residual %g", r, res);
  }
  // Friction can carry the weight: 2 mu c_n > m g.
  cr_assert_gt(2 * sys.mu[0] * 5, sc.bodies[0].mass * 9.81);
  cp_system_free(&sys);
  cp_scene_free(&sc);
  mt_assert_no_leaks();
}

Test(scenes, finger_push_slides_on_the_face) {
  cp_scene sc;
  cp_system sys;
  load("finger_push", &sc, &sys);
  cr_assert_eq(sys.n_c, 5);
  for (int j = 0; j < 4; ++j) cr_assert(!sys.sliding[j]);
  cr_assert(sys.sliding[4]);
  // Box relative to the finger: up (the cap centre moves down at 0.05 m/s;
  // the contact point, r off the centre, also turns with the tip link).
  cr_assert_gt(sys.v[13], 0.02);
  cr_assert_float_eq(sys.v[14], 0, 1e-15);
  cr_assert_float_eq(sys.d[8], 1, 1e-12);
  cr_assert_float_eq(sys.mu[4], 0.5, 0);
  // Joint rows: tau - g_man + J^T N c = 0 with c = (2, 0, 0) at the finger.
  for (int k = 0; k < 2; ++k) {
    int r = 6 + k;
    double res = sys.tau[k] - sys.g_man[k] + 2 * sys.G[r + (size_t)sys.n_u * 12];
    cr_assert_float_eq(res, 0, 1e-12);
    cr_assert_neq(sys.h_man[k], 0); // the finger moves
  }
  cp_system_free(&sys);
  cp_scene_free(&sc);
  mt_assert_no_leaks();
}

Test(scenes, painleve_rod_has_negative_normal_coefficient) {
  cp_scene sc;
  cp_system sys;
  load("painleve_rod", &sc, &sys);
  cr_assert_eq(sys.n_c, 1);
  cr_assert(sys.sliding[0]);
  double A[9], b[3];
  contact_space(&sys, A, b);
  // Sliding: c_t = -mu d_t c_n, c_o = -mu d_o c_n, so
  // a_n = (A_nn - mu (d_t A_nt + d_o A_no)) c_n + b_n.
  double mu = sys.mu[0], dt = sys.d[0], d_o = sys.d[1];
  double coef = A[0] - mu * (dt * A[3] + d_o * A[6]);
  cr_assert_lt(coef, 0, "coefficient %g", coef);
  cr_assert_lt(b[0], 0);
  // Thin-rod estimate: (1 + 3 c^2 - 3 mu c s) / m at 60 degrees.
  double c = 0.5, s = sqrt(3) / 2;
  cr_assert_float_eq(coef, 1 + 3 * c * c - 3 * mu * c * s, 0.1);
  cp_system_free(&sys);
  cp_scene_free(&sc);
  mt_assert_no_leaks();
}
