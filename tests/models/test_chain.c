// Kinematics and dynamics of serial chains (models/chain.h) against
// independent computations: finite differences of forward kinematics, the
// kinetic and potential energies, the Lagrangian, and a pendulum by hand.
#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/chain.h"
#include "models/scene.h"
#include "models/vec3.h"
#include "tests/models/mtest.h"
#include "tests/support.h"

#define NJ 5

static void set_q(cp_chain *c, const double *q) {
  for (int i = 0; i < c->n; ++i) c->joints[i].position = q[i];
}
static void get_q(const cp_chain *c, double *q) {
  for (int i = 0; i < c->n; ++i) q[i] = c->joints[i].position;
}

// Positions of link k's frame and com at configuration q0 + t dq.
static void fk_at(cp_chain *c, const double *q0, const double *dq, double t,
                  cp_link_state *s) {
  double q[NJ];
  for (int i = 0; i < c->n; ++i) q[i] = q0[i] + t * dq[i];
  set_q(c, q);
  cp_chain_kinematics(c, s);
  set_q(c, q0);
}

// Kinetic energy for rates qd from finite differences of forward kinematics
// (independent of the velocity recursion, the Jacobian and CRBA).
static double kinetic_fd(cp_chain *c, const double *qd) {
  const double h = 1e-6;
  double q0[NJ];
  get_q(c, q0);
  cp_link_state sp[NJ], sm[NJ], s0[NJ];
  fk_at(c, q0, qd, h, sp);
  fk_at(c, q0, qd, -h, sm);
  fk_at(c, q0, qd, 0, s0);
  double T = 0;
  for (int i = 0; i < c->n; ++i) {
    const cp_link *L = &c->joints[i].link;
    double v[3], Rd[9], Om[9], w[3], Iw[9], Iww[3];
    for (int k = 0; k < 3; ++k) v[k] = (sp[i].com[k] - sm[i].com[k]) / (2 * h);
    for (int k = 0; k < 9; ++k) Rd[k] = (sp[i].R[k] - sm[i].R[k]) / (2 * h);
    // Omega = Rdot R^T
    for (int r = 0; r < 3; ++r)
      for (int cc = 0; cc < 3; ++cc)
        Om[3 * r + cc] = Rd[3 * r] * s0[i].R[3 * cc] +
                         Rd[3 * r + 1] * s0[i].R[3 * cc + 1] +
                         Rd[3 * r + 2] * s0[i].R[3 * cc + 2];
    cp_v3_set(w, Om[7], Om[2], Om[3]);
    cp_m3_rotate_sym(Iw, s0[i].R, L->inertia);
    cp_m3_mulv(Iww, Iw, w);
    T += 0.5 * L->mass * cp_v3_dot(v, v) + 0.5 * cp_v3_dot(w, Iww);
  }
  return T;
}

static double potential(cp_chain *c, const double *g) {
  cp_link_state s[NJ];
  cp_chain_kinematics(c, s);
  double V = 0;
  for (int i = 0; i < c->n; ++i)
    V -= c->joints[i].link.mass * cp_v3_dot(g, s[i].com);
  return V;
}

static void mass_at(cp_chain *c, const double *q, double *M) {
  double q0[NJ];
  cp_link_state s[NJ];
  get_q(c, q0);
  set_q(c, q);
  cp_chain_kinematics(c, s);
  cp_chain_mass_matrix(c, s, M);
  set_q(c, q0);
}

static void random_chain(uint64_t seed, cp_scene *sc) {
  char *text = mt_random_scene(seed, NJ);
  mt_parse_ok(text, 0, sc);
  free(text);
  cr_assert_eq(sc->manips[0].n, NJ);
}

Test(chain, jacobian_matches_fd_of_forward_kinematics) {
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    cp_scene sc;
    random_chain(seed, &sc);
    cp_chain *c = &sc.manips[0];
    cp_link_state s[NJ];
    cp_chain_kinematics(c, s);
    double q0[NJ];
    get_q(c, q0);
    for (int k = 0; k < NJ; ++k) {
      // A point fixed on link k: local (0.1, -0.2, 0.05) in the link frame.
      double loc[3] = {0.1, -0.2, 0.05}, p[3], J[3 * NJ];
      cp_m3_mulv(p, s[k].R, loc);
      cp_v3_add(p, p, s[k].o);
      cp_chain_point_jacobian(c, s, k, p, J);
      for (int i = 0; i < NJ; ++i) {
        double e[NJ] = {0}, pp[3], pm[3];
        cp_link_state t[NJ];
        e[i] = 1;
        const double h = 1e-6;
        fk_at(c, q0, e, h, t);
        cp_m3_mulv(pp, t[k].R, loc);
        cp_v3_add(pp, pp, t[k].o);
        fk_at(c, q0, e, -h, t);
        cp_m3_mulv(pm, t[k].R, loc);
        cp_v3_add(pm, pm, t[k].o);
        for (int r = 0; r < 3; ++r)
          cr_assert_float_eq(J[3 * i + r], (pp[r] - pm[r]) / (2 * h), 1e-7,
                             "seed %d link %d joint %d row %d", (int)seed, k,
                             i, r);
      }
      // Velocity recursion agrees with J l'.
      double qd[NJ], vel[3], Jq[3] = {0, 0, 0};
      for (int i = 0; i < NJ; ++i) qd[i] = c->joints[i].velocity;
      for (int i = 0; i < NJ; ++i) cp_v3_axpy(Jq, Jq, qd[i], J + 3 * i);
      cp_chain_point_velocity(s, k, p, vel);
      cr_assert_lt(mt_maxdiff(vel, Jq, 3), 1e-12);
      // Angular Jacobian against the recursion too.
      double Jw[3 * NJ], wq[3] = {0, 0, 0};
      cp_chain_angular_jacobian(c, s, k, Jw);
      for (int i = 0; i < NJ; ++i) cp_v3_axpy(wq, wq, qd[i], Jw + 3 * i);
      cr_assert_lt(mt_maxdiff(wq, s[k].w, 3), 1e-12);
    }
    cp_scene_free(&sc);
  }
  mt_assert_no_leaks();
}

Test(chain, jdot_qd_matches_second_difference) {
  for (uint64_t seed = 11; seed <= 15; ++seed) {
    cp_scene sc;
    random_chain(seed, &sc);
    cp_chain *c = &sc.manips[0];
    cp_link_state s[NJ], t[NJ];
    cp_chain_kinematics(c, s);
    double q0[NJ], qd[NJ];
    get_q(c, q0);
    for (int i = 0; i < NJ; ++i) qd[i] = c->joints[i].velocity;
    for (int k = 0; k < NJ; ++k) {
      double loc[3] = {-0.07, 0.03, 0.12}, p[3], acc[3], pp[3], pm[3];
      cp_m3_mulv(p, s[k].R, loc);
      cp_v3_add(p, p, s[k].o);
      cp_chain_point_bias(s, k, p, acc);
      const double h = 1e-4;
      fk_at(c, q0, qd, h, t);
      cp_m3_mulv(pp, t[k].R, loc);
      cp_v3_add(pp, pp, t[k].o);
      fk_at(c, q0, qd, -h, t);
      cp_m3_mulv(pm, t[k].R, loc);
      cp_v3_add(pm, pm, t[k].o);
      for (int r = 0; r < 3; ++r) {
        double fd = (pp[r] - 2 * p[r] + pm[r]) / (h * h);
        cr_assert_float_eq(acc[r], fd, 2e-5 * (1 + fabs(fd)),
                           "seed %d link %d: %g vs %g", (int)seed, k, acc[r],
                           fd);
      }
      // Angular velocity-product term: d/dt w_k at l'' = 0 from the FD of
      // J_w(q(t)) l'.
      double Jp[3 * NJ], Jm[3 * NJ], wp[3] = {0}, wm[3] = {0};
      fk_at(c, q0, qd, h, t);
      cp_chain_angular_jacobian(c, t, k, Jp);
      fk_at(c, q0, qd, -h, t);
      cp_chain_angular_jacobian(c, t, k, Jm);
      for (int i = 0; i < NJ; ++i) {
        cp_v3_axpy(wp, wp, qd[i], Jp + 3 * i);
        cp_v3_axpy(wm, wm, qd[i], Jm + 3 * i);
      }
      for (int r = 0; r < 3; ++r)
        cr_assert_float_eq(s[k].dw[r], (wp[r] - wm[r]) / (2 * h), 1e-6);
    }
    cp_scene_free(&sc);
  }
  mt_assert_no_leaks();
}

Test(chain, crba_matches_kinetic_energy_polarisation) {
  for (uint64_t seed = 21; seed <= 25; ++seed) {
    cp_scene sc;
    random_chain(seed, &sc);
    cp_chain *c = &sc.manips[0];
    cp_link_state s[NJ];
    cp_chain_kinematics(c, s);
    double M[NJ * NJ], T1[NJ], mx = 0;
    cp_chain_mass_matrix(c, s, M);
    for (int i = 0; i < NJ * NJ; ++i) mx = fmax(mx, fabs(M[i]));
    for (int i = 0; i < NJ; ++i) {
      double e[NJ] = {0};
      e[i] = 1;
      T1[i] = kinetic_fd(c, e);
    }
    for (int i = 0; i < NJ; ++i)
      for (int j = 0; j < NJ; ++j) {
        double Mij;
        if (i == j) {
          Mij = 2 * T1[i];
        } else {
          double e[NJ] = {0};
          e[i] = e[j] = 1;
          Mij = kinetic_fd(c, e) - T1[i] - T1[j];
        }
        cr_assert_float_eq(M[i + NJ * j], Mij, 1e-7 * (1 + mx),
                           "seed %d M[%d][%d] = %g, energy gives %g",
                           (int)seed, i, j, M[i + NJ * j], Mij);
        cr_assert_eq(M[i + NJ * j], M[j + NJ * i]);
      }
    // A random l': 1/2 l'^T M l' equals the kinetic energy.
    double qd[NJ], Mq = 0;
    for (int i = 0; i < NJ; ++i) qd[i] = c->joints[i].velocity;
    for (int i = 0; i < NJ; ++i)
      for (int j = 0; j < NJ; ++j) Mq += 0.5 * qd[i] * M[i + NJ * j] * qd[j];
    cr_assert_float_eq(Mq, kinetic_fd(c, qd), 1e-7 * (1 + Mq));
    cp_scene_free(&sc);
  }
  mt_assert_no_leaks();
}

Test(chain, rnea_gravity_is_gradient_of_potential) {
  for (uint64_t seed = 31; seed <= 35; ++seed) {
    cp_scene sc;
    random_chain(seed, &sc);
    cp_chain *c = &sc.manips[0];
    cp_link_state s[NJ];
    cp_chain_kinematics(c, s);
    double g[NJ], h[NJ], q0[NJ];
    cp_chain_bias_efforts(c, s, sc.gravity, g, h);
    get_q(c, q0);
    for (int i = 0; i < NJ; ++i) {
      const double eps = 1e-6;
      double q[NJ];
      memcpy(q, q0, sizeof q);
      q[i] += eps;
      set_q(c, q);
      double Vp = potential(c, sc.gravity);
      q[i] -= 2 * eps;
      set_q(c, q);
      double Vm = potential(c, sc.gravity);
      set_q(c, q0);
      cr_assert_float_eq(g[i], (Vp - Vm) / (2 * eps), 1e-6,
                         "seed %d joint %d: %g vs %g", (int)seed, i, g[i],
                         (Vp - Vm) / (2 * eps));
    }
    cp_scene_free(&sc);
  }
  mt_assert_no_leaks();
}

Test(chain, rnea_coriolis_matches_lagrangian) {
  for (uint64_t seed = 41; seed <= 45; ++seed) {
    cp_scene sc;
    random_chain(seed, &sc);
    cp_chain *c = &sc.manips[0];
    cp_link_state s[NJ];
    cp_chain_kinematics(c, s);
    double g[NJ], h[NJ], q0[NJ], qd[NJ];
    cp_chain_bias_efforts(c, s, sc.gravity, g, h);
    get_q(c, q0);
    for (int i = 0; i < NJ; ++i) qd[i] = c->joints[i].velocity;
    // h = Mdot l' - 1/2 d/dl (l'^T M l'), derivatives by central differences
    // of the (separately validated) CRBA mass matrix.
    const double eps = 1e-6;
    double Mp[NJ * NJ], Mm[NJ * NJ], q[NJ], hl[NJ];
    for (int i = 0; i < NJ; ++i) q[i] = q0[i] + eps * qd[i];
    mass_at(c, q, Mp);
    for (int i = 0; i < NJ; ++i) q[i] = q0[i] - eps * qd[i];
    mass_at(c, q, Mm);
    for (int i = 0; i < NJ; ++i) {
      hl[i] = 0;
      for (int j = 0; j < NJ; ++j)
        hl[i] += (Mp[i + NJ * j] - Mm[i + NJ * j]) / (2 * eps) * qd[j];
    }
    for (int i = 0; i < NJ; ++i) {
      memcpy(q, q0, sizeof q);
      q[i] += eps;
      mass_at(c, q, Mp);
      q[i] -= 2 * eps;
      mass_at(c, q, Mm);
      double d = 0;
      for (int a = 0; a < NJ; ++a)
        for (int b = 0; b < NJ; ++b)
          d += qd[a] * (Mp[a + NJ * b] - Mm[a + NJ * b]) / (2 * eps) * qd[b];
      hl[i] -= 0.5 * d;
    }
    for (int i = 0; i < NJ; ++i)
      cr_assert_float_eq(h[i], hl[i], 1e-6 * (1 + fabs(hl[i])),
                         "seed %d joint %d: RNEA %g, Lagrangian %g", (int)seed,
                         i, h[i], hl[i]);
    // Full inverse dynamics = M qdd + h + g.
    double qdd[NJ], tau[NJ], M[NJ * NJ];
    uint64_t r = seed;
    for (int i = 0; i < NJ; ++i) qdd[i] = cpt_uniform(&r, -2, 2);
    cp_chain_mass_matrix(c, s, M);
    cp_chain_rnea(c, s, qd, qdd, sc.gravity, tau);
    for (int i = 0; i < NJ; ++i) {
      double e = h[i] + g[i];
      for (int j = 0; j < NJ; ++j) e += M[i + NJ * j] * qdd[j];
      cr_assert_float_eq(tau[i], e, 1e-9 * (1 + fabs(e)));
    }
    cp_scene_free(&sc);
  }
  mt_assert_no_leaks();
}

static const char *pendulum =
    "{\"gravity\": [0, 0, -9.81], \"contacts\": [], \"manipulators\": ["
    "{\"name\": \"p\", \"base\": {\"position\": [0.3, 0, 1]}, \"joints\": ["
    "{\"name\": \"j\", \"type\": \"revolute\", \"axis\": [0, 1, 0],"
    " \"position\": 0.7, \"velocity\": 1.3, \"effort\": 0,"
    " \"link\": {\"name\": \"rod\", \"mass\": 2.0, \"com\": [0, 0, -0.5],"
    "  \"inertia\": [[0.05, 0, 0], [0, 0.04, 0], [0, 0, 0.01]]}}]}]}";

Test(chain, single_pendulum_analytic) {
  cp_scene sc;
  mt_parse_ok(pendulum, 1, &sc);
  cp_chain *c = &sc.manips[0];
  cp_link_state s[1];
  cp_chain_kinematics(c, s);
  double m = 2, l = 0.5, th = 0.7, thd = 1.3, M, g, h;
  // com = base + Ry(th) (0, 0, -l) = (0.3 - l sin th, 0, 1 - l cos th)
  cr_assert_float_eq(s[0].com[0], 0.3 - l * sin(th), 1e-14);
  cr_assert_float_eq(s[0].com[2], 1 - l * cos(th), 1e-14);
  cp_chain_mass_matrix(c, s, &M);
  cr_assert_float_eq(M, m * l * l + 0.04, 1e-14);
  cp_chain_bias_efforts(c, s, sc.gravity, &g, &h);
  cr_assert_float_eq(g, m * 9.81 * l * sin(th), 1e-12);
  cr_assert_float_eq(h, 0, 1e-14);
  // The com's velocity-product acceleration is centripetal: thd^2 l inward.
  double acc[3];
  cp_chain_point_bias(s, 0, s[0].com, acc);
  cr_assert_float_eq(cp_v3_norm(acc), thd * thd * l, 1e-12);
  double toward[3];
  cp_v3_sub(toward, c->base_pos, s[0].com);
  cr_assert_float_eq(cp_v3_dot(acc, toward) / cp_v3_norm(toward),
                     thd * thd * l, 1e-12);
  // Drive mode: effort-driven.
  cr_assert_eq(c->joints[0].drive, CP_DRIVE_EFFORT);
  cp_scene_free(&sc);
  mt_assert_no_leaks();
}

Test(chain, prismatic_lift_analytic) {
  const char *t =
      "{\"contacts\": [], \"manipulators\": [{\"name\": \"lift\", \"joints\": "
      "[{\"name\": \"z\", \"type\": \"prismatic\", \"axis\": [0, 0, 2],"
      " \"position\": 0.25, \"velocity\": 0.5, \"acceleration\": 1.5,"
      " \"link\": {\"name\": \"plate\", \"mass\": 3.0,"
      "  \"shape\": {\"type\": \"box\", \"size\": [0.2, 0.2, 0.02]}}}]}]}";
  cp_scene sc;
  mt_parse_ok(t, 1, &sc);
  cp_chain *c = &sc.manips[0];
  cp_link_state s[1];
  cp_chain_kinematics(c, s);
  double M, g, h;
  cr_assert_float_eq(s[0].o[2], 0.25, 1e-15); // axis normalised
  cp_chain_mass_matrix(c, s, &M);
  cr_assert_float_eq(M, 3.0, 1e-15);
  cp_chain_bias_efforts(c, s, sc.gravity, &g, &h);
  cr_assert_float_eq(g, 3.0 * 9.81, 1e-12);
  cr_assert_float_eq(h, 0, 1e-15);
  cr_assert_eq(c->joints[0].drive, CP_DRIVE_ACCELERATION);
  cr_assert_float_eq(c->joints[0].acceleration, 1.5, 0);
  cp_scene_free(&sc);
  mt_assert_no_leaks();
}

// Two-link planar arm (both revolute about y, links along z): the textbook
// mass matrix with the coupling term m2 l1 lc2 cos(q2).
Test(chain, two_link_planar_mass_matrix) {
  const char *t =
      "{\"gravity\": [0, 0, 0], \"contacts\": [], \"manipulators\": ["
      "{\"name\": \"a\", \"joints\": ["
      "{\"name\": \"j1\", \"type\": \"revolute\", \"axis\": [0, 1, 0],"
      " \"position\": 0.4, \"velocity\": 0.9,"
      " \"link\": {\"name\": \"l1\", \"mass\": 1.5, \"com\": [0, 0, 0.3],"
      "  \"inertia\": [[0.02, 0, 0], [0, 0.03, 0], [0, 0, 0.01]]}},"
      "{\"name\": \"j2\", \"type\": \"revolute\", \"axis\": [0, 1, 0],"
      " \"origin\": {\"position\": [0, 0, 0.7]}, \"position\": -1.1,"
      " \"velocity\": -0.6,"
      " \"link\": {\"name\": \"l2\", \"mass\": 0.8, \"com\": [0, 0, 0.25],"
      "  \"inertia\": [[0.01, 0, 0], [0, 0.015, 0], [0, 0, 0.004]]}}]}]}";
  cp_scene sc;
  mt_parse_ok(t, 1, &sc);
  cp_link_state s[2];
  cp_chain_kinematics(&sc.manips[0], s);
  double M[4], g[2], h[2];
  cp_chain_mass_matrix(&sc.manips[0], s, M);
  double m1 = 1.5, m2 = 0.8, l1 = 0.7, c1 = 0.3, c2 = 0.25, I1 = 0.03,
         I2 = 0.015, q2 = -1.1, qd1 = 0.9, qd2 = -0.6;
  double m11 = I1 + I2 + m1 * c1 * c1 + m2 * (l1 * l1 + c2 * c2 +
                                               2 * l1 * c2 * cos(q2));
  double m12 = I2 + m2 * (c2 * c2 + l1 * c2 * cos(q2)), m22 = I2 + m2 * c2 * c2;
  cr_assert_float_eq(M[0], m11, 1e-13);
  cr_assert_float_eq(M[2], m12, 1e-13);
  cr_assert_float_eq(M[1], m12, 1e-13);
  cr_assert_float_eq(M[3], m22, 1e-13);
  // Coriolis: h1 = -m2 l1 c2 sin q2 (2 qd1 qd2 + qd2^2), h2 = m2 l1 c2 sin q2 qd1^2.
  cp_chain_bias_efforts(&sc.manips[0], s, sc.gravity, g, h);
  double k = m2 * l1 * c2 * sin(q2);
  cr_assert_float_eq(h[0], -k * (2 * qd1 * qd2 + qd2 * qd2), 1e-13);
  cr_assert_float_eq(h[1], k * qd1 * qd1, 1e-13);
  cr_assert_float_eq(g[0], 0, 1e-15);
  cp_scene_free(&sc);
  mt_assert_no_leaks();
}
