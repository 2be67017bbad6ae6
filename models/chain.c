#include "models/chain.h"

#include <stdlib.h>
#include <string.h>

#include "models/vec3.h"

void cp_chain_free(cp_chain *c) {
  if (!c) return;
  if (c->joints) {
    for (int i = 0; i < c->n; ++i) {
      free(c->joints[i].name);
      free(c->joints[i].link.name);
    }
  }
  free(c->joints);
  free(c->name);
  memset(c, 0, sizeof *c);
}

// Positions only: R, o, axis, com of every link.
static void chain_positions(const cp_chain *c, cp_link_state *s) {
  double Rp[9], op[3];
  cp_quat_to_mat(Rp, c->base_quat);
  cp_v3_copy(op, c->base_pos);
  for (int i = 0; i < c->n; ++i) {
    const cp_joint *j = &c->joints[i];
    double Ro[9], Rj[9], d[3];
    cp_quat_to_mat(Ro, j->origin_quat);
    cp_m3_mul(Rj, Rp, Ro);
    cp_m3_mulv(d, Rp, j->origin_pos);
    cp_v3_add(s[i].o, op, d);
    cp_m3_mulv(s[i].axis, Rj, j->axis);
    if (j->type == CP_JOINT_REVOLUTE) {
      double q[4], Rq[9];
      cp_quat_axis_angle(q, j->axis, j->position); // rotation in joint frame
      cp_quat_to_mat(Rq, q);
      cp_m3_mul(s[i].R, Rj, Rq);
    } else {
      memcpy(s[i].R, Rj, sizeof Rj);
      cp_v3_axpy(s[i].o, s[i].o, j->position, s[i].axis);
    }
    cp_m3_mulv(d, s[i].R, j->link.com);
    cp_v3_add(s[i].com, s[i].o, d);
    memcpy(Rp, s[i].R, sizeof Rp);
    cp_v3_copy(op, s[i].o);
  }
}

// Forward recursion of velocities and accelerations (header comment) for
// rates qd (NULL: the joints' own velocities if own_rates, else zero) and
// accelerations qdd (NULL: zero), base acceleration acc0.
// Writes w, v, dw, dv of s (dw, dv include the qdd terms when qdd != NULL).
static void chain_forward(const cp_chain *c, cp_link_state *s,
                          const double *qd, int own_rates, const double *qdd,
                          const double *acc0) {
  double w[3] = {0, 0, 0}, v[3] = {0, 0, 0}, dw[3] = {0, 0, 0}, dv[3];
  double op[3];
  cp_v3_copy(dv, acc0);
  cp_v3_copy(op, c->base_pos);
  for (int i = 0; i < c->n; ++i) {
    const double *a = s[i].axis;
    double rate = qd ? qd[i] : own_rates ? c->joints[i].velocity : 0;
    double acc = qdd ? qdd[i] : 0;
    double d[3], t[3], wa[3];
    cp_v3_sub(d, s[i].o, op);
    cp_v3_cross(wa, w, a); // w_{i-1} x a_i
    // linear (uses the parent's w, dw)
    double nv[3], ndv[3];
    cp_v3_cross(t, w, d);
    cp_v3_add(nv, v, t);
    cp_v3_cross(t, dw, d);
    cp_v3_add(ndv, dv, t);
    cp_v3_cross(t, w, d);
    cp_v3_cross(t, w, t);
    cp_v3_add(ndv, ndv, t);
    if (c->joints[i].type == CP_JOINT_PRISMATIC) {
      cp_v3_axpy(nv, nv, rate, a);
      cp_v3_axpy(ndv, ndv, 2 * rate, wa);
      cp_v3_axpy(ndv, ndv, acc, a);
    } else {
      cp_v3_axpy(dw, dw, rate, wa);
      cp_v3_axpy(dw, dw, acc, a);
      cp_v3_axpy(w, w, rate, a);
    }
    cp_v3_copy(v, nv);
    cp_v3_copy(dv, ndv);
    cp_v3_copy(s[i].w, w);
    cp_v3_copy(s[i].v, v);
    cp_v3_copy(s[i].dw, dw);
    cp_v3_copy(s[i].dv, dv);
    cp_v3_copy(op, s[i].o);
  }
}

void cp_chain_kinematics(const cp_chain *c, cp_link_state *s) {
  static const double zero[3] = {0, 0, 0};
  chain_positions(c, s);
  chain_forward(c, s, NULL, 1, NULL, zero);
}

void cp_chain_point_velocity(const cp_link_state *s, int k, const double *p,
                             double *vel) {
  double r[3], t[3];
  cp_v3_sub(r, p, s[k].o);
  cp_v3_cross(t, s[k].w, r);
  cp_v3_add(vel, s[k].v, t);
}

void cp_chain_point_jacobian(const cp_chain *c, const cp_link_state *s, int k,
                             const double *p, double *J) {
  memset(J, 0, (size_t)(3 * c->n) * sizeof *J);
  for (int i = 0; i <= k; ++i) {
    if (c->joints[i].type == CP_JOINT_PRISMATIC) {
      cp_v3_copy(J + 3 * i, s[i].axis);
    } else {
      double r[3];
      cp_v3_sub(r, p, s[i].o);
      cp_v3_cross(J + 3 * i, s[i].axis, r);
    }
  }
}

void cp_chain_angular_jacobian(const cp_chain *c, const cp_link_state *s,
                               int k, double *Jw) {
  memset(Jw, 0, (size_t)(3 * c->n) * sizeof *Jw);
  for (int i = 0; i <= k; ++i)
    if (c->joints[i].type == CP_JOINT_REVOLUTE) cp_v3_copy(Jw + 3 * i, s[i].axis);
}

void cp_chain_point_bias(const cp_link_state *s, int k, const double *p,
                         double *acc) {
  double r[3], t[3];
  cp_v3_sub(r, p, s[k].o);
  cp_v3_cross(t, s[k].dw, r);
  cp_v3_add(acc, s[k].dv, t);
  cp_v3_cross(t, s[k].w, r);
  cp_v3_cross(t, s[k].w, t);
  cp_v3_add(acc, acc, t);
}

// J += m (|d|^2 I3 - d d^T): the parallel-axis shift.
static void add_shift(double *In, double m, const double *d) {
  double dd = cp_v3_dot(d, d);
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      In[3 * r + c] += m * ((r == c ? dd : 0) - d[r] * d[c]);
}

void cp_chain_mass_matrix(const cp_chain *c, const cp_link_state *s,
                          double *M) {
  int n = c->n;
  memset(M, 0, (size_t)n * (size_t)n * sizeof *M);
  // Composite of links j..n-1, built from the tip inwards.
  double mc = 0, cc[3] = {0, 0, 0}, Ic[9] = {0};
  for (int j = n - 1; j >= 0; --j) {
    const cp_link *L = &c->joints[j].link;
    double Iw[9], m = L->mass, nm = mc + m, ncc[3], d[3];
    for (int r = 0; r < 3; ++r) ncc[r] = (mc * cc[r] + m * s[j].com[r]) / nm;
    cp_m3_rotate_sym(Iw, s[j].R, L->inertia);
    cp_v3_sub(d, cc, ncc);
    add_shift(Ic, mc, d); // previous composite about the new centre
    cp_v3_sub(d, s[j].com, ncc);
    add_shift(Iw, m, d);
    for (int r = 0; r < 9; ++r) Ic[r] += Iw[r];
    mc = nm;
    cp_v3_copy(cc, ncc);
    // Momentum of C_j under a unit rate of joint j: linear p, angular about cc.
    const double *a = s[j].axis;
    double p[3], L0[3] = {0, 0, 0}, r[3];
    if (c->joints[j].type == CP_JOINT_REVOLUTE) {
      cp_v3_sub(r, cc, s[j].o);
      cp_v3_cross(p, a, r);
      cp_v3_scale(p, p, mc);
      cp_m3_mulv(L0, Ic, a);
    } else {
      cp_v3_scale(p, a, mc);
    }
    // Project on every joint i <= j (moments about o_i for revolute i).
    for (int i = 0; i <= j; ++i) {
      double val;
      if (c->joints[i].type == CP_JOINT_REVOLUTE) {
        double t[3], La[3];
        cp_v3_sub(r, cc, s[i].o);
        cp_v3_cross(t, r, p);
        cp_v3_add(La, L0, t);
        val = cp_v3_dot(s[i].axis, La);
      } else {
        val = cp_v3_dot(s[i].axis, p);
      }
      M[i + (size_t)j * n] = val;
      M[j + (size_t)i * n] = val;
    }
  }
}

// RNEA body; own_rates as in chain_forward.
static void rnea(const cp_chain *c, const cp_link_state *pos, const double *qd,
                 int own_rates, const double *qdd, const double *gravity,
                 double *tau) {
  int n = c->n;
  cp_link_state *s = malloc((size_t)(n > 0 ? n : 1) * sizeof *s);
  if (!s) {
    for (int i = 0; i < n; ++i) tau[i] = NAN;
    return;
  }
  memcpy(s, pos, (size_t)n * sizeof *s);
  // Gravity as an upward acceleration of the base (the usual RNEA device).
  double acc0[3] = {0, 0, 0};
  if (gravity) cp_v3_scale(acc0, gravity, -1.0);
  chain_forward(c, s, qd, own_rates, qdd, acc0);
  double f[3] = {0, 0, 0}, nm[3] = {0, 0, 0}, onext[3] = {0, 0, 0};
  for (int i = n - 1; i >= 0; --i) {
    const cp_link *L = &c->joints[i].link;
    double rc[3], ac[3], t[3], F[3], N[3], Iw[9], Iww[3];
    cp_v3_sub(rc, s[i].com, s[i].o);
    cp_v3_cross(t, s[i].dw, rc);
    cp_v3_add(ac, s[i].dv, t);
    cp_v3_cross(t, s[i].w, rc);
    cp_v3_cross(t, s[i].w, t);
    cp_v3_add(ac, ac, t);
    cp_v3_scale(F, ac, L->mass);
    cp_m3_rotate_sym(Iw, s[i].R, L->inertia);
    cp_m3_mulv(N, Iw, s[i].dw);
    cp_m3_mulv(Iww, Iw, s[i].w);
    cp_v3_cross(t, s[i].w, Iww);
    cp_v3_add(N, N, t);
    // Moment about o_i of everything carried by joint i.
    double d[3], nn[3];
    if (i < n - 1) {
      cp_v3_sub(d, onext, s[i].o);
      cp_v3_cross(t, d, f);
      cp_v3_add(nn, nm, t);
    } else {
      cp_v3_set(nn, 0, 0, 0);
    }
    cp_v3_cross(t, rc, F);
    cp_v3_add(nn, nn, t);
    cp_v3_add(nn, nn, N);
    cp_v3_add(f, f, F);
    cp_v3_copy(nm, nn);
    cp_v3_copy(onext, s[i].o);
    tau[i] = c->joints[i].type == CP_JOINT_REVOLUTE
                 ? cp_v3_dot(s[i].axis, nm)
                 : cp_v3_dot(s[i].axis, f);
  }
  free(s);
}

void cp_chain_rnea(const cp_chain *c, const cp_link_state *s, const double *qd,
                   const double *qdd, const double *gravity, double *tau) {
  rnea(c, s, qd, 0, qdd, gravity, tau);
}

void cp_chain_bias_efforts(const cp_chain *c, const cp_link_state *s,
                           const double *gravity, double *g, double *h) {
  if (g) rnea(c, s, NULL, 0, NULL, gravity, g);
  if (h) rnea(c, s, NULL, 1, NULL, NULL, h);
}
