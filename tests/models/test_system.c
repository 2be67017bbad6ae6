// The system quantities of docs/math.md §1-§2 (models/system.h): G, k, v
// against finite differences of material points moved along u; H, f by
// their definitions; sliding/rolling classification; a spinning body's k.
#include <criterion/criterion.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/system.h"
#include "models/vec3.h"
#include "tests/models/mtest.h"
#include "tests/support.h"

static void build(const cp_scene *sc, cp_system *sys) {
  cp_error err;
  cr_assert_eq(cp_system_build(sc, sys, &err), 0, "%s", err.msg);
}

// Relative displacement N0^T (P_a(t) - P_b(t)) of contact j's material points.
static void gap_at(cp_scene *sc, const mt_state *st0, int j, const double *la,
                   const double *lb, const double *N0, double t, double *out) {
  mt_restore(sc, st0);
  mt_advance(sc, t);
  double pa[3], pb[3], d[3];
  mt_material_point(sc, sc->contacts[j].a, la, pa);
  mt_material_point(sc, sc->contacts[j].b, lb, pb);
  cp_v3_sub(d, pa, pb);
  for (int c = 0; c < 3; ++c) out[c] = cp_v3_dot(N0 + 3 * c, d);
  mt_restore(sc, st0);
}

// Relative velocity in the frame carried by b: N(t)^T (vel_a - vel_b) at the
// material points, and n(t).(w_a - w_b); velocities held constant (u' = 0).
static void relvel_at(cp_scene *sc, const mt_state *st0, int j,
                      const double *la, const double *lb, const double *N0,
                      const double *Rb0, double t, double *out, double *tor) {
  mt_restore(sc, st0);
  mt_advance(sc, t);
  const cp_contact *c = &sc->contacts[j];
  double pa[3], pb[3], va[3], vb[3], wa[3], wb[3], d[3], dw[3], Rb[9], x[3];
  mt_material_point(sc, c->a, la, pa);
  mt_material_point(sc, c->b, lb, pb);
  cp_scene_point_velocity(sc, c->a, pa, va, wa);
  cp_scene_point_velocity(sc, c->b, pb, vb, wb);
  cp_scene_frame(sc, c->b, Rb, x);
  cp_v3_sub(d, va, vb);
  cp_v3_sub(dw, wa, wb);
  for (int k = 0; k < 3; ++k) {
    double tmp[3], Nk[3];
    cp_m3_tmulv(tmp, Rb0, N0 + 3 * k); // body-b coordinates of the column
    cp_m3_mulv(Nk, Rb, tmp);
    out[k] = cp_v3_dot(Nk, d);
    if (k == 0) *tor = cp_v3_dot(Nk, dw);
  }
  mt_restore(sc, st0);
}

Test(system, G_and_k_against_finite_differences) {
  for (uint64_t seed = 1; seed <= 8; ++seed) {
    char *text = mt_random_scene(seed, 4);
    cp_scene sc;
    mt_parse_ok(text, 0, &sc);
    free(text);
    cp_system sys;
    build(&sc, &sys);
    cr_assert_eq(sys.n_obj, 2);
    cr_assert_eq(sys.n_l, 4);
    cr_assert_eq(sys.n_u, 16);
    cr_assert_eq(sys.n_c, 6);
    mt_state st0;
    mt_save(&sc, &st0);
    for (int j = 0; j < sys.n_c; ++j) {
      const cp_contact *c = &sc.contacts[j];
      const double *N0 = sys.frame + 9 * j;
      double la[3], lb[3], Rb0[9], xb[3];
      mt_local(&sc, c->a, c->p, la);
      mt_local(&sc, c->b, c->p, lb);
      cp_scene_frame(&sc, c->b, Rb0, xb);
      // v = G^T u against the derivative of the material gap.
      const double h = 1e-6;
      double gp[3], gm[3], vd[3];
      gap_at(&sc, &st0, j, la, lb, N0, h, gp);
      gap_at(&sc, &st0, j, la, lb, N0, -h, gm);
      for (int k = 0; k < 3; ++k) {
        double fd = (gp[k] - gm[k]) / (2 * h);
        cr_assert_float_eq(sys.v[3 * j + k], fd, 1e-7 * (1 + fabs(fd)),
                           "seed %d contact %d comp %d: G^T u = %g, FD %g",
                           (int)seed, j, k, sys.v[3 * j + k], fd);
      }
      cp_scene_contact_velocity(&sc, j, vd);
      cr_assert_lt(mt_maxdiff(vd, sys.v + 3 * j, 3), 1e-12);
      // k against the derivative of the relative velocity at constant u.
      const double hk = 1e-5;
      double rp[3], rm[3], tp, tm;
      relvel_at(&sc, &st0, j, la, lb, N0, Rb0, hk, rp, &tp);
      relvel_at(&sc, &st0, j, la, lb, N0, Rb0, -hk, rm, &tm);
      for (int k = 0; k < 3; ++k) {
        double fd = (rp[k] - rm[k]) / (2 * hk);
        cr_assert_float_eq(sys.k[3 * j + k], fd, 1e-6 * (1 + fabs(fd)),
                           "seed %d contact %d comp %d: k = %g, FD %g",
                           (int)seed, j, k, sys.k[3 * j + k], fd);
      }
      double fdt = (tp - tm) / (2 * hk);
      cr_assert_float_eq(sys.ktor[j], fdt, 1e-6 * (1 + fabs(fdt)));
      // Torsion column: Gtor^T u = n.(w_a - w_b).
      double r0[3], t0, gt = 0;
      relvel_at(&sc, &st0, j, la, lb, N0, Rb0, 0, r0, &t0);
      for (int r = 0; r < sys.n_u; ++r)
        gt += sys.Gtor[(size_t)j * sys.n_u + r] * sys.u[r];
      cr_assert_float_eq(gt, t0, 1e-12);
    }
    mt_state_free(&st0);
    cp_system_free(&sys);
    cp_scene_free(&sc);
  }
  mt_assert_no_leaks();
}

Test(system, G_column_blocks_by_definition) {
  char *text = mt_random_scene(3, 3);
  cp_scene sc;
  mt_parse_ok(text, 0, &sc);
  free(text);
  cp_system sys;
  build(&sc, &sys);
  // Contact 1: box (object 0) on ball (object 1): [N; r x N] and negatives.
  const cp_contact *c = &sc.contacts[1];
  int nu = sys.n_u;
  for (int k = 0; k < 3; ++k) {
    const double *col = sys.G + (size_t)(3 + k) * nu, *Nk = sys.frame + 9 + 3 * k;
    double ra[3], rb[3], xa[3], xb[3];
    cp_v3_sub(ra, c->p, sc.bodies[1].x);
    cp_v3_sub(rb, c->p, sc.bodies[2].x);
    cp_v3_cross(xa, ra, Nk);
    cp_v3_cross(xb, rb, Nk);
    for (int i = 0; i < 3; ++i) {
      cr_assert_float_eq(col[i], Nk[i], 1e-15);
      cr_assert_float_eq(col[3 + i], xa[i], 1e-15);
      cr_assert_float_eq(col[6 + i], -Nk[i], 1e-15);
      cr_assert_float_eq(col[9 + i], -xb[i], 1e-15);
    }
    for (int r = 12; r < nu; ++r) cr_assert_eq(col[r], 0);
  }
  // Contact 0: box on the fixed table: nothing in the ball's or joint rows.
  for (int k = 0; k < 3; ++k)
    for (int r = 6; r < nu; ++r) cr_assert_eq(sys.G[(size_t)k * nu + r], 0);
  cp_system_free(&sys);
  cp_scene_free(&sc);
  mt_assert_no_leaks();
}

Test(system, H_and_f_by_definition) {
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    char *text = mt_random_scene(seed, 4);
    cp_scene sc;
    mt_parse_ok(text, 0, &sc);
    free(text);
    cp_system sys;
    build(&sc, &sys);
    int n = sys.n_u;
    // Symmetric positive definite (Cholesky succeeds).
    double *L = malloc(sizeof(double) * (size_t)(n * n));
    memcpy(L, sys.H, sizeof(double) * (size_t)(n * n));
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j)
        cr_assert_eq(sys.H[i + j * n], sys.H[j + i * n]);
    cr_assert_eq(LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, L, n), 0);
    free(L);
    // Object blocks.
    for (int o = 0; o < 2; ++o) {
      const cp_body *b = &sc.bodies[sys.obj_body[o]];
      double R[9], Iw[9], Iww[3], gy[3];
      cp_quat_to_mat(R, b->q);
      cp_m3_rotate_sym(Iw, R, b->inertia);
      cp_m3_mulv(Iww, Iw, b->w);
      cp_v3_cross(gy, b->w, Iww);
      for (int i = 0; i < 3; ++i) {
        cr_assert_float_eq(sys.H[(6 * o + i) * (n + 1)], b->mass, 0);
        cr_assert_float_eq(sys.f[6 * o + i], b->mass * sc.gravity[i], 1e-15);
        cr_assert_float_eq(sys.f[6 * o + 3 + i], -gy[i], 1e-14);
        cr_assert_eq(sys.u[6 * o + i], b->v[i]);
        cr_assert_eq(sys.u[6 * o + 3 + i], b->w[i]);
        for (int j = 0; j < 3; ++j)
          cr_assert_float_eq(sys.H[(6 * o + 3 + i) + (6 * o + 3 + j) * n],
                             Iw[3 * i + j], 1e-15);
      }
    }
    // Joint block: CRBA, f = tau - g - h, the acceleration-driven joint's
    // effort left out.
    const cp_chain *ch = &sc.manips[0];
    cp_link_state s[4];
    double M[16], g[4], h[4];
    cp_chain_kinematics(ch, s);
    cp_chain_mass_matrix(ch, s, M);
    cp_chain_bias_efforts(ch, s, sc.gravity, g, h);
    int r0 = cp_system_joint_row(&sys, 0, 0);
    cr_assert_eq(r0, 12);
    for (int i = 0; i < 4; ++i) {
      for (int j = 0; j < 4; ++j)
        cr_assert_eq(sys.H[(r0 + i) + (r0 + j) * n], M[i + 4 * j]);
      cr_assert_eq(sys.H[(r0 + i) + 0 * n], 0);
      cr_assert_eq(sys.drive[i], ch->joints[i].drive);
      double tau = ch->joints[i].drive == CP_DRIVE_EFFORT ? ch->joints[i].effort : 0;
      cr_assert_float_eq(sys.f[r0 + i], tau - g[i] - h[i], 1e-13);
      cr_assert_float_eq(sys.g_man[i], g[i], 0);
      cr_assert_float_eq(sys.h_man[i], h[i], 0);
      cr_assert_eq(sys.joint_manip[i], 0);
      cr_assert_eq(sys.joint_index[i], i);
    }
    cr_assert_eq(sys.drive[3], CP_DRIVE_ACCELERATION);
    cr_assert_eq(sys.tau[3], 0);
    cr_assert_eq(sys.qdd[3], ch->joints[3].acceleration);
    cr_assert_neq(sys.qdd[3], 0);
    cr_assert_eq(sys.drive[0], CP_DRIVE_EFFORT);
    cr_assert_eq(sys.tau[0], ch->joints[0].effort);
    cp_system_free(&sys);
    cp_scene_free(&sc);
  }
  mt_assert_no_leaks();
}

// A box spinning about the table normal through its centre: every corner
// slides, k = N^T w x (w x r) = -omega^2 (r_x, r_y, 0) in (n, t, o) = (z, x, y).
Test(system, spinning_box_k_is_centripetal) {
  const char *t =
      "{\"gravity\": [0, 0, -9.81], \"bodies\": ["
      "{\"name\": \"table\", \"fixed\": true, \"shape\": {\"type\": \"plane\", "
      "\"normal\": [0, 0, 1]}},"
      "{\"name\": \"box\", \"mass\": 2, \"shape\": {\"type\": \"box\", "
      "\"size\": [0.4, 0.2, 0.1]}, \"position\": [0, 0, 0.05],"
      " \"angular_velocity\": [0, 0, 3]}],"
      " \"contacts\": ["
      "{\"a\": \"box\", \"b\": \"table\", \"point\": [0.2, 0.1, 0], \"normal\": "
      "[0, 0, 1]},"
      "{\"a\": \"box\", \"b\": \"table\", \"point\": [-0.2, 0.1, 0], "
      "\"normal\": [0, 0, 1]},"
      "{\"a\": \"box\", \"b\": \"table\", \"point\": [0, 0, 0], \"normal\": "
      "[0, 0, 1]}]}";
  cp_scene sc;
  mt_parse_ok(t, 1, &sc);
  cp_system sys;
  build(&sc, &sys);
  double w = 3, pts[3][2] = {{0.2, 0.1}, {-0.2, 0.1}, {0, 0}};
  for (int j = 0; j < 3; ++j) {
    double rx = pts[j][0], ry = pts[j][1];
    cr_assert_float_eq(sys.k[3 * j], 0, 1e-15);
    cr_assert_float_eq(sys.k[3 * j + 1], -w * w * rx, 1e-14);
    cr_assert_float_eq(sys.k[3 * j + 2], -w * w * ry, 1e-14);
    // v = w x r = omega (-r_y, r_x, 0).
    cr_assert_float_eq(sys.v[3 * j], 0, 1e-15);
    cr_assert_float_eq(sys.v[3 * j + 1], -w * ry, 1e-15);
    cr_assert_float_eq(sys.v[3 * j + 2], w * rx, 1e-15);
  }
  cr_assert(sys.sliding[0] && sys.sliding[1]);
  cr_assert(!sys.sliding[2]); // the centre does not move
  double sp = w * hypot(0.2, 0.1);
  cr_assert_float_eq(sys.d[0], -w * 0.1 / sp, 1e-15);
  cr_assert_float_eq(sys.d[1], w * 0.2 / sp, 1e-15);
  cr_assert_eq(sys.d[4], 0);
  cr_assert_eq(sys.d[5], 0);
  // Torsion: relative spin about the normal.
  double gt = 0;
  for (int r = 0; r < sys.n_u; ++r) gt += sys.Gtor[r] * sys.u[r];
  cr_assert_float_eq(gt, 3, 1e-15);
  cp_system_free(&sys);
  cp_scene_free(&sc);
  mt_assert_no_leaks();
}

Test(system, sliding_threshold_follows_velocity_tolerance) {
  const char *fmt =
      "{\"velocity_tolerance\": %g, \"bodies\": ["
      "{\"name\": \"table\", \"fixed\": true, \"shape\": {\"type\": \"plane\", "
      "\"normal\": [0, 0, 1]}},"
      "{\"name\": \"box\", \"mass\": 1, \"shape\": {\"type\": \"box\", "
      "\"size\": [0.1, 0.1, 0.1]}, \"position\": [0, 0, 0.05], \"velocity\": "
      "[%g, 0, 0]}], \"contacts\": [{\"a\": \"box\", \"b\": \"table\", "
      "\"point\": [0.05, 0.05, 0], \"normal\": [0, 0, 1], \"tangent\": [0, "
      "-1, 0]}]}";
  char t[1024];
  double cases[][3] = {{1e-6, 5e-7, 0}, {1e-6, 2e-6, 1}, {1e-3, 5e-4, 0},
                       {1e-3, 0.1, 1}};
  for (int i = 0; i < 4; ++i) {
    snprintf(t, sizeof t, fmt, cases[i][0], cases[i][1]);
    cp_scene sc;
    mt_parse_ok(t, 1, &sc);
    cp_system sys;
    build(&sc, &sys);
    cr_assert_eq(sys.sliding[0], (int)cases[i][2], "case %d", i);
    cr_assert_float_eq(sys.tol, cases[i][0], 0);
    if (sys.sliding[0]) {
      // velocity along +x = -o when t = -y (o = n x t = z x -y = x).
      cr_assert_float_eq(sys.d[0], 0, 1e-15);
      cr_assert_float_eq(sys.d[1], 1, 1e-15);
    }
    cp_system_free(&sys);
    cp_scene_free(&sc);
  }
  mt_assert_no_leaks();
}

Test(system, empty_contact_list_and_no_objects) {
  const char *t = "{\"contacts\": [], \"bodies\": [{\"name\": \"b\", \"mass\": "
                  "1, \"shape\": {\"type\": \"sphere\", \"radius\": 1}}]}";
  cp_scene sc;
  mt_parse_ok(t, 1, &sc);
  cp_system sys;
  build(&sc, &sys);
  cr_assert_eq(sys.n_c, 0);
  cr_assert_eq(sys.n_u, 6);
  cr_assert_float_eq(sys.f[2], -9.81, 0);
  cp_system_free(&sys);
  cp_system_free(&sys);
  cp_scene_free(&sc);
  mt_assert_no_leaks();
}
