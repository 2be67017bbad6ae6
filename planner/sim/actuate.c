/* Joint position control: PD with gravity and velocity-product
 * compensation, and damped least squares for Cartesian goals
 * (planner/sim/actuate.h). */
#include "planner/sim/actuate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/vec3.h"

int cp_actuate_work_init(cp_actuate_work *w, const cp_scene *s) {
  memset(w, 0, sizeof *w);
  int cap = 1;
  for (int m = 0; m < s->n_manips; ++m)
    if (s->manips[m].n > cap) cap = s->manips[m].n;
  size_t n = (size_t)cap;
  w->cap = cap;
  w->s = malloc(n * sizeof *w->s);
  w->g = malloc(n * sizeof(double));
  w->h = malloc(n * sizeof(double));
  w->comp = malloc(n * sizeof(double));
  w->J = malloc(6 * n * sizeof(double));
  w->Jq = malloc(6 * n * sizeof(double));
  w->M = malloc(n * n * sizeof(double));
  w->Mq = malloc(n * n * sizeof(double));
  w->dof = malloc(n * sizeof(int));
  w->scale = malloc(n * sizeof(double));
  w->act = malloc(n * sizeof(int));
  if (!w->act || !w->s || !w->g || !w->h || !w->comp || !w->J || !w->Jq || !w->M ||
      !w->Mq || !w->dof || !w->scale) {
    cp_actuate_work_free(w);
    return -1;
  }
  return 0;
}

void cp_actuate_work_free(cp_actuate_work *w) {
  free(w->s);
  free(w->g);
  free(w->h);
  free(w->comp);
  free(w->J);
  free(w->Jq);
  free(w->M);
  free(w->Mq);
  free(w->dof);
  free(w->scale);
  free(w->act);
  memset(w, 0, sizeof *w);
}

void cp_actuate_bias(const cp_scene *s, int m, cp_actuate_work *w,
                     double *comp) {
  const cp_chain *c = &s->manips[m];
  cp_chain_kinematics(c, w->s);
  cp_chain_bias_efforts(c, w->s, s->gravity, w->g, w->h);
  cp_chain_dof_map(c, w->dof, w->scale);
  int nd = cp_chain_dofs(c);
  for (int d = 0; d < nd; ++d) comp[d] = 0;
  for (int i = 0; i < c->n; ++i)
    comp[w->dof[i]] += w->scale[i] * (w->g[i] + w->h[i]);
}

void cp_actuate_pd(const cp_scene *s, int n, const cp_actuator *a,
                   cp_actuate_work *w, double *effort) {
  int m = -1;
  for (int i = 0; i < n; ++i) {
    if (a[i].manip != m) {
      m = a[i].manip;
      cp_actuate_bias(s, m, w, w->comp);
    }
    const cp_joint *j = &s->manips[m].joints[a[i].joint];
    double tau = a[i].kp * (a[i].target - j->position) - a[i].kd * j->velocity +
                 w->comp[w->dof[a[i].joint]];
    if (a[i].limit > 0) {
      if (tau > a[i].limit) tau = a[i].limit;
      if (tau < -a[i].limit) tau = -a[i].limit;
    }
    effort[i] = tau;
  }
}

/* Cholesky factor of the n x n symmetric A (column-major) in place, lower
 * triangle; -1 when A is not positive definite. */
static int cholesky(int n, double *A) {
  for (int j = 0; j < n; ++j) {
    double d = A[j + n * j];
    for (int k = 0; k < j; ++k) d -= A[j + n * k] * A[j + n * k];
    if (!(d > 0)) return -1;
    d = sqrt(d);
    A[j + n * j] = d;
    for (int i = j + 1; i < n; ++i) {
      double v = A[i + n * j];
      for (int k = 0; k < j; ++k) v -= A[i + n * k] * A[j + n * k];
      A[i + n * j] = v / d;
    }
  }
  return 0;
}

/* Solves L L^T x = b in place (L from cholesky). */
static void chol_solve(int n, const double *L, double *b) {
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < i; ++k) b[i] -= L[i + n * k] * b[k];
    b[i] /= L[i + n * i];
  }
  for (int i = n - 1; i >= 0; --i) {
    for (int k = i + 1; k < n; ++k) b[i] -= L[k + n * i] * b[k];
    b[i] /= L[i + n * i];
  }
}

/* M_q = P^T M P of chain c at its current configuration into w->Mq (nd x
 * nd, column-major; w->dof and w->scale set); the link states w->s are
 * computed first unless kin_done. Returns nd. */
static int mass_q(const cp_chain *c, cp_actuate_work *w, int kin_done) {
  int n = c->n, nd = cp_chain_dofs(c);
  if (!kin_done) cp_chain_kinematics(c, w->s);
  cp_chain_mass_matrix(c, w->s, w->M);
  cp_chain_dof_map(c, w->dof, w->scale);
  for (int i = 0; i < nd * nd; ++i) w->Mq[i] = 0;
  for (int j = 0; j < n; ++j)
    for (int i = 0; i < n; ++i)
      w->Mq[w->dof[i] + nd * w->dof[j]] +=
          w->scale[i] * w->scale[j] * w->M[i + n * j];
  return nd;
}

/* Solves the ns x ns system B x = b (column-major) in place by Gaussian
 * elimination with partial pivoting; B is overwritten. */
static void lu_solve(int ns, double *B, double *b) {
  for (int k = 0; k < ns; ++k) {
    int p = k;
    for (int i = k + 1; i < ns; ++i)
      if (fabs(B[i + ns * k]) > fabs(B[p + ns * k])) p = i;
    if (p != k) {
      for (int j = 0; j < ns; ++j) {
        double v = B[k + ns * j];
        B[k + ns * j] = B[p + ns * j];
        B[p + ns * j] = v;
      }
      double v = b[k];
      b[k] = b[p];
      b[p] = v;
    }
    for (int i = k + 1; i < ns; ++i) {
      double f = B[i + ns * k] / B[k + ns * k];
      for (int j = k + 1; j < ns; ++j) B[i + ns * j] -= f * B[k + ns * j];
      b[i] -= f * b[k];
    }
  }
  for (int i = ns - 1; i >= 0; --i) {
    for (int j = i + 1; j < ns; ++j) b[i] -= B[i + ns * j] * b[j];
    b[i] /= B[i + ns * i];
  }
}

void cp_actuate_pd_implicit(const cp_scene *s, int n, const cp_actuator *a,
                            double h, cp_actuate_work *w, double *effort) {
  for (int i = 0; i < n; ++i) {
    int m = a[i].manip, first = 1;
    for (int k = 0; k < i; ++k) first &= a[k].manip != m;
    if (!first) continue; /* chain m done with its first actuator */
    const cp_chain *c = &s->manips[m];
    int ns = 0;
    for (int k = i; k < n; ++k)
      if (a[k].manip == m) w->act[ns++] = k;
    cp_actuate_bias(s, m, w, w->comp); /* kinematics, dof map */
    int nd = mass_q(c, w, 1);
    double *B = w->M, *r = w->g, *y = w->h;
    int ok = cholesky(nd, w->Mq) == 0;
    /* r = Kp e - (Kd + h Kp) q'; B = I + C (M_q^-1)_SS, C = h Kd + h^2 Kp. */
    for (int jj = 0; jj < ns; ++jj) {
      const cp_actuator *aj = &a[w->act[jj]];
      const cp_joint *j = &c->joints[aj->joint];
      r[jj] = aj->kp * (aj->target - j->position) -
              (aj->kd + h * aj->kp) * j->velocity;
      for (int d = 0; d < nd; ++d) y[d] = d == w->dof[aj->joint];
      if (ok) chol_solve(nd, w->Mq, y);
      for (int ii = 0; ii < ns; ++ii) {
        const cp_actuator *ai = &a[w->act[ii]];
        double cii = h * ai->kd + h * h * ai->kp;
        B[ii + ns * jj] = (ii == jj) + (ok ? cii * y[w->dof[ai->joint]] : 0);
      }
    }
    lu_solve(ns, B, r);
    for (int ii = 0; ii < ns; ++ii) {
      const cp_actuator *ai = &a[w->act[ii]];
      double tau = r[ii] + w->comp[w->dof[ai->joint]];
      if (ai->limit > 0) {
        if (tau > ai->limit) tau = ai->limit;
        if (tau < -ai->limit) tau = -ai->limit;
      }
      effort[w->act[ii]] = tau;
    }
  }
}

double cp_actuate_inertia(const cp_chain *c, int k, cp_actuate_work *w,
                          double *held) {
  int nd = mass_q(c, w, 0);
  int d = w->dof[k];
  if (held) *held = w->Mq[d + nd * d];
  if (cholesky(nd, w->Mq)) return NAN;
  /* (M_q^-1)_kk = |L^-1 e_k|^2. */
  double *y = w->g;
  for (int i = 0; i < nd; ++i) y[i] = i == d;
  double sum = 0;
  for (int i = 0; i < nd; ++i) {
    for (int t = 0; t < i; ++t) y[i] -= w->Mq[i + nd * t] * y[t];
    y[i] /= w->Mq[i + nd * i];
    sum += y[i] * y[i];
  }
  return 1.0 / sum;
}

void cp_actuate_default_gains(double held, double least, double duration,
                              double dt, double *kp, double *kd) {
  /* s = (held / least) (x^2 + 4 x) with x = w h: x^2 + 4 x <= 0.84 r. */
  double r = least / held;
  double x = -2.0 + sqrt(4.0 + 0.84 * r);
  double wn = fmin(10.0 / duration, x / dt);
  *kp = held * wn * wn;
  *kd = 2.0 * held * wn;
}

double cp_actuate_stability(double kp, double kd, double inertia, double dt) {
  return (kp * dt * dt + 2.0 * kd * dt) / inertia;
}

void cp_actuate_link_pose(const cp_scene *s, int m, int k,
                          const double *point, cp_actuate_work *w, double *p,
                          double *R) {
  cp_chain_kinematics(&s->manips[m], w->s);
  double r[3];
  cp_m3_mulv(r, w->s[k].R, point);
  cp_v3_add(p, w->s[k].o, r);
  if (R) memcpy(R, w->s[k].R, 9 * sizeof *R);
}

/* Rotation vector of the rotation R (row-major): axis times angle. */
static void rotation_vector(const double *R, double *v) {
  double c = 0.5 * (R[0] + R[4] + R[8] - 1);
  c = c > 1 ? 1 : c < -1 ? -1 : c;
  double ang = acos(c);
  double ax[3] = {R[7] - R[5], R[2] - R[6], R[3] - R[1]};
  double sn = sin(ang);
  if (sn > 1e-9) {
    cp_v3_scale(v, ax, 0.5 * ang / sn);
  } else if (ang < 1.0) { /* near identity: the skew part is 2 v */
    cp_v3_scale(v, ax, 0.5);
  } else { /* near pi: axis from the symmetric part */
    double d[3] = {R[0], R[4], R[8]};
    int i = d[0] >= d[1] && d[0] >= d[2] ? 0 : d[1] >= d[2] ? 1 : 2;
    double a[3];
    a[i] = sqrt(fmax(0, 0.5 * (d[i] + 1)));
    for (int j = 0; j < 3; ++j)
      if (j != i) a[j] = 0.5 * (R[3 * i + j] + R[3 * j + i]) / (2 * a[i]);
    cp_v3_scale(v, a, ang);
  }
}

void cp_actuate_cartesian(const cp_scene *s, const cp_cartesian_goal *g,
                          cp_actuate_work *w, double *targets) {
  const cp_chain *c = &s->manips[g->manip];
  int n = c->n, nd = cp_chain_dofs(c), k = g->link;
  int rows = g->has_rotation ? 6 : 3;
  double p[3], e[6];
  cp_actuate_link_pose(s, g->manip, k, g->point, w, p, NULL);
  cp_v3_sub(e, g->position, p);
  if (g->has_rotation) { /* R* R^T as a rotation vector */
    double Rt[9], D[9];
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j) Rt[3 * i + j] = w->s[k].R[3 * j + i];
    cp_m3_mul(D, g->rotation, Rt);
    rotation_vector(D, e + 3);
  }
  /* J (rows x n, column-major with leading dimension 6), then J P. */
  double *J = w->J, *Jq = w->Jq;
  for (int i = 0; i < 6 * n; ++i) J[i] = 0;
  cp_chain_point_jacobian(c, w->s, k, p, Jq); /* Jq as 3 x n scratch */
  for (int i = 0; i < n; ++i)
    for (int r = 0; r < 3; ++r) J[r + 6 * i] = Jq[r + 3 * i];
  if (g->has_rotation) {
    cp_chain_angular_jacobian(c, w->s, k, Jq);
    for (int i = 0; i < n; ++i)
      for (int r = 0; r < 3; ++r) J[3 + r + 6 * i] = Jq[r + 3 * i];
  }
  cp_chain_dof_map(c, w->dof, w->scale);
  for (int i = 0; i < 6 * nd; ++i) Jq[i] = 0;
  for (int i = 0; i < n; ++i)
    for (int r = 0; r < 6; ++r) Jq[r + 6 * w->dof[i]] += w->scale[i] * J[r + 6 * i];
  /* (J J^T + lambda^2 I) y = e; dq = J^T y. */
  double A[36];
  for (int a = 0; a < rows; ++a)
    for (int b = 0; b < rows; ++b) {
      double v = a == b ? g->lambda * g->lambda : 0;
      for (int d = 0; d < nd; ++d) v += Jq[a + 6 * d] * Jq[b + 6 * d];
      A[a + rows * b] = v;
    }
  double y[6];
  memcpy(y, e, sizeof y);
  if (cholesky(rows, A) == 0) chol_solve(rows, A, y);
  else
    for (int a = 0; a < rows; ++a) y[a] = 0;
  for (int i = 0; i < n; ++i) {
    const cp_joint *j = &c->joints[i];
    double t = j->position;
    if (!j->is_mimic) {
      double dq = 0;
      for (int a = 0; a < rows; ++a) dq += Jq[a + 6 * w->dof[i]] * y[a];
      t += dq;
      if (j->has_limits) t = t < j->lower ? j->lower : t > j->upper ? j->upper : t;
    }
    targets[i] = t;
  }
}
