#include "models/chain.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/mesh.h"
#include "models/vec3.h"

void cp_link_free_shapes(cp_link *l) {
  if (l->shape.type == CP_SHAPE_MESH) cp_mesh_release(l->shape.mesh);
  for (int k = 0; k < l->n_extra_shapes; ++k)
    if (l->extra_shapes[k].shape.type == CP_SHAPE_MESH)
      cp_mesh_release(l->extra_shapes[k].shape.mesh);
  free(l->extra_shapes);
  l->extra_shapes = NULL;
  l->n_extra_shapes = 0;
  memset(&l->shape, 0, sizeof l->shape);
}

void cp_chain_free(cp_chain *c) {
  if (!c) return;
  if (c->joints) {
    for (int i = 0; i < c->n; ++i) {
      free(c->joints[i].name);
      free(c->joints[i].link.name);
      cp_link_free_shapes(&c->joints[i].link);
    }
  }
  free(c->joints);
  free(c->parent);
  free(c->name);
  memset(c, 0, sizeof *c);
}

static char *dupstr(const char *s) {
  if (!s) return NULL;
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

int cp_chain_copy(cp_chain *d, const cp_chain *s) {
  memset(d, 0, sizeof *d);
  *d = *s;
  d->name = NULL, d->joints = NULL, d->parent = NULL, d->n = 0;
  int ok = (!s->name || (d->name = dupstr(s->name))) &&
           (d->joints = calloc((size_t)(s->n ? s->n : 1), sizeof *d->joints));
  if (ok && s->parent) {
    ok = (d->parent = malloc((size_t)s->n * sizeof *d->parent)) != NULL;
    if (ok) memcpy(d->parent, s->parent, (size_t)s->n * sizeof *d->parent);
  }
  for (int i = 0; ok && i < s->n; ++i) {
    cp_joint *jd = &d->joints[i];
    const cp_joint *js = &s->joints[i];
    *jd = *js;
    jd->name = NULL, jd->link.name = NULL, jd->link.extra_shapes = NULL;
    jd->link.n_extra_shapes = 0;
    d->n = i + 1; // joint i is now released by cp_chain_free on failure
    if (js->link.shape.type == CP_SHAPE_MESH) cp_mesh_retain(js->link.shape.mesh);
    ok = (!js->name || (jd->name = dupstr(js->name))) &&
         (!js->link.name || (jd->link.name = dupstr(js->link.name)));
    int ne = js->link.n_extra_shapes;
    if (ok && ne > 0) {
      ok = (jd->link.extra_shapes = malloc((size_t)ne * sizeof(cp_link_shape))) != NULL;
      if (ok) {
        memcpy(jd->link.extra_shapes, js->link.extra_shapes,
               (size_t)ne * sizeof(cp_link_shape));
        jd->link.n_extra_shapes = ne;
        for (int k = 0; k < ne; ++k)
          if (js->link.extra_shapes[k].shape.type == CP_SHAPE_MESH)
            cp_mesh_retain(js->link.extra_shapes[k].shape.mesh);
      }
    }
  }
  if (!ok) {
    cp_chain_free(d);
    return -1;
  }
  d->n = s->n;
  return 0;
}

int cp_link_shape_count(const cp_link *l) {
  if (l->shape.type == CP_SHAPE_NONE && l->n_extra_shapes == 0) return 0;
  return 1 + l->n_extra_shapes;
}

void cp_link_shape_get(const cp_link *l, int k, cp_link_shape *out) {
  if (k > 0) {
    *out = l->extra_shapes[k - 1];
    return;
  }
  out->shape = l->shape;
  if (l->has_shape_pose) {
    cp_v3_copy(out->pos, l->shape_pos);
    memcpy(out->quat, l->shape_quat, sizeof out->quat);
  } else {
    cp_v3_copy(out->pos, l->com);
    out->quat[0] = 1, out->quat[1] = out->quat[2] = out->quat[3] = 0;
  }
}

int cp_chain_is_ancestor(const cp_chain *c, int a, int b) {
  for (int i = b; i >= 0; i = cp_chain_parent(c, i))
    if (i == a) return 1;
  return 0;
}

int cp_chain_dofs(const cp_chain *c) {
  int n = 0;
  for (int i = 0; i < c->n; ++i) n += !c->joints[i].is_mimic;
  return n;
}

void cp_chain_dof_map(const cp_chain *c, int *dof, double *scale) {
  // Independent joints are numbered in chain order; followers take their
  // leader's number (leaders may come after them).
  int k = 0;
  for (int i = 0; i < c->n; ++i) {
    if (c->joints[i].is_mimic) continue;
    if (dof) dof[i] = k;
    if (scale) scale[i] = 1;
    ++k;
  }
  for (int i = 0; i < c->n; ++i) {
    const cp_joint *j = &c->joints[i];
    if (!j->is_mimic) continue;
    if (dof) {
      int d = 0;
      for (int t = 0; t < j->mimic_leader; ++t) d += !c->joints[t].is_mimic;
      dof[i] = d;
    }
    if (scale) scale[i] = j->mimic_multiplier;
  }
}

// Position and rate of joint i (followers from their leaders).
static double joint_pos(const cp_chain *c, int i) {
  const cp_joint *j = &c->joints[i];
  if (!j->is_mimic) return j->position;
  return j->mimic_multiplier * c->joints[j->mimic_leader].position +
         j->mimic_offset;
}
static double joint_vel(const cp_chain *c, int i) {
  const cp_joint *j = &c->joints[i];
  if (!j->is_mimic) return j->velocity;
  return j->mimic_multiplier * c->joints[j->mimic_leader].velocity;
}

void cp_chain_apply_mimic(cp_chain *c) {
  for (int i = 0; i < c->n; ++i) {
    cp_joint *j = &c->joints[i];
    if (!j->is_mimic) continue;
    const cp_joint *L = &c->joints[j->mimic_leader];
    j->position = joint_pos(c, i);
    j->velocity = joint_vel(c, i);
    j->acceleration = j->mimic_multiplier * L->acceleration;
    j->drive = L->drive;
    j->effort = 0;
  }
}

// Positions only: R, o, axis, com of every link.
static void chain_positions(const cp_chain *c, cp_link_state *s) {
  double Rb[9];
  cp_quat_to_mat(Rb, c->base_quat);
  for (int i = 0; i < c->n; ++i) {
    const cp_joint *j = &c->joints[i];
    int p = cp_chain_parent(c, i);
    const double *Rp = p < 0 ? Rb : s[p].R, *op = p < 0 ? c->base_pos : s[p].o;
    double Ro[9], Rj[9], d[3], pos = joint_pos(c, i);
    cp_quat_to_mat(Ro, j->origin_quat);
    cp_m3_mul(Rj, Rp, Ro);
    cp_m3_mulv(d, Rp, j->origin_pos);
    cp_v3_add(s[i].o, op, d);
    cp_m3_mulv(s[i].axis, Rj, j->axis);
    if (j->type == CP_JOINT_REVOLUTE) {
      double q[4], Rq[9];
      cp_quat_axis_angle(q, j->axis, pos); // rotation in joint frame
      cp_quat_to_mat(Rq, q);
      cp_m3_mul(s[i].R, Rj, Rq);
    } else {
      memcpy(s[i].R, Rj, sizeof Rj);
      cp_v3_axpy(s[i].o, s[i].o, pos, s[i].axis);
    }
    cp_m3_mulv(d, s[i].R, j->link.com);
    cp_v3_add(s[i].com, s[i].o, d);
  }
}

// Forward recursion of velocities and accelerations (header comment) for
// rates qd (NULL: the joints' own velocities if own_rates, else zero) and
// accelerations qdd (NULL: zero), base acceleration acc0.
// Writes w, v, dw, dv of s (dw, dv include the qdd terms when qdd != NULL).
static void chain_forward(const cp_chain *c, cp_link_state *s,
                          const double *qd, int own_rates, const double *qdd,
                          const double *acc0) {
  static const double zero[3] = {0, 0, 0};
  for (int i = 0; i < c->n; ++i) {
    int p = cp_chain_parent(c, i);
    // The parent's motion (the base: at rest, accelerating at acc0).
    double w[3], v[3], dw[3], dv[3];
    cp_v3_copy(w, p < 0 ? zero : s[p].w);
    cp_v3_copy(v, p < 0 ? zero : s[p].v);
    cp_v3_copy(dw, p < 0 ? zero : s[p].dw);
    cp_v3_copy(dv, p < 0 ? acc0 : s[p].dv);
    const double *op = p < 0 ? c->base_pos : s[p].o;
    const double *a = s[i].axis;
    double rate = qd ? qd[i] : own_rates ? joint_vel(c, i) : 0;
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
  for (int i = k; i >= 0; i = cp_chain_parent(c, i)) {
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
  for (int i = k; i >= 0; i = cp_chain_parent(c, i))
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

// A composite rigid body: mass, centre, inertia about the centre (world).
typedef struct composite {
  double m, c[3], I[9];
  int used;
} composite;

// acc += (m, c, I) about the combined centre. An empty acc takes a plain
// copy, so that a serial chain (one child per link) computes exactly what
// the running composite of the serial algorithm did.
static void composite_add(composite *acc, double m, const double *c,
                          const double *I) {
  if (!acc->used) {
    acc->m = m;
    cp_v3_copy(acc->c, c);
    memcpy(acc->I, I, sizeof acc->I);
    acc->used = 1;
    return;
  }
  double nm = acc->m + m, ncc[3], d[3], Ib[9];
  for (int r = 0; r < 3; ++r) ncc[r] = (acc->m * acc->c[r] + m * c[r]) / nm;
  cp_v3_sub(d, acc->c, ncc);
  add_shift(acc->I, acc->m, d);
  memcpy(Ib, I, sizeof Ib);
  cp_v3_sub(d, c, ncc);
  add_shift(Ib, m, d);
  for (int r = 0; r < 9; ++r) acc->I[r] += Ib[r];
  acc->m = nm;
  cp_v3_copy(acc->c, ncc);
}

void cp_chain_mass_matrix(const cp_chain *c, const cp_link_state *s,
                          double *M) {
  int n = c->n;
  memset(M, 0, (size_t)n * (size_t)n * sizeof *M);
  // acc[j]: composite of the subtrees of j's children, built from the tips
  // inwards (children come after their parents).
  composite *acc = calloc((size_t)(n > 0 ? n : 1), sizeof *acc);
  if (!acc) {
    for (size_t i = 0; i < (size_t)n * (size_t)n; ++i) M[i] = NAN;
    return;
  }
  for (int j = n - 1; j >= 0; --j) {
    const cp_link *L = &c->joints[j].link;
    double mc = acc[j].m, *cc = acc[j].c, *Ic = acc[j].I;
    double Iw[9], m = L->mass, nm = mc + m, ncc[3], d[3];
    for (int r = 0; r < 3; ++r) ncc[r] = (mc * cc[r] + m * s[j].com[r]) / nm;
    cp_m3_rotate_sym(Iw, s[j].R, L->inertia);
    cp_v3_sub(d, cc, ncc);
    add_shift(Ic, mc, d); // the children's composite about the new centre
    cp_v3_sub(d, s[j].com, ncc);
    add_shift(Iw, m, d);
    for (int r = 0; r < 9; ++r) Ic[r] += Iw[r];
    mc = nm;
    cp_v3_copy(cc, ncc);
    acc[j].m = mc;
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
    // Project on every joint i on j's path (moments about o_i for revolute
    // i); joints off the path do not move C_j: M_ij = 0.
    for (int i = j; i >= 0; i = cp_chain_parent(c, i)) {
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
    int pj = cp_chain_parent(c, j);
    if (pj >= 0) composite_add(&acc[pj], mc, cc, Ic);
  }
  free(acc);
}

// RNEA body; own_rates as in chain_forward.
static void rnea(const cp_chain *c, const cp_link_state *pos, const double *qd,
                 int own_rates, const double *qdd, const double *gravity,
                 double *tau) {
  int n = c->n;
  cp_link_state *s = malloc((size_t)(n > 0 ? n : 1) * sizeof *s);
  // Per joint: force and moment (about its o) carried up from its children.
  double *fa = calloc((size_t)(n > 0 ? n : 1) * 7, sizeof *fa);
  if (!s || !fa) {
    for (int i = 0; i < n; ++i) tau[i] = NAN;
    free(s);
    free(fa);
    return;
  }
  memcpy(s, pos, (size_t)n * sizeof *s);
  // Gravity as an upward acceleration of the base (the usual RNEA device).
  double acc0[3] = {0, 0, 0};
  if (gravity) cp_v3_scale(acc0, gravity, -1.0);
  chain_forward(c, s, qd, own_rates, qdd, acc0);
  for (int i = n - 1; i >= 0; --i) {
    const cp_link *L = &c->joints[i].link;
    double *fc = fa + 7 * i, *nc = fc + 3; // fc[6]: 1 once a child added
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
    double nn[3], f[3];
    cp_v3_copy(nn, nc);
    cp_v3_cross(t, rc, F);
    cp_v3_add(nn, nn, t);
    cp_v3_add(nn, nn, N);
    cp_v3_add(f, fc, F);
    tau[i] = c->joints[i].type == CP_JOINT_REVOLUTE
                 ? cp_v3_dot(s[i].axis, nn)
                 : cp_v3_dot(s[i].axis, f);
    int p = cp_chain_parent(c, i);
    if (p < 0) continue;
    // Hand (f, nn) to the parent: moment about o_p = nn + (o_i - o_p) x f.
    double d[3], np[3], *fp = fa + 7 * p, *npp = fp + 3;
    cp_v3_sub(d, s[i].o, s[p].o);
    cp_v3_cross(t, d, f);
    cp_v3_add(np, nn, t);
    if (!fp[6]) {
      cp_v3_copy(fp, f);
      cp_v3_copy(npp, np);
      fp[6] = 1;
    } else {
      cp_v3_add(fp, fp, f);
      cp_v3_add(npp, npp, np);
    }
  }
  free(s);
  free(fa);
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
