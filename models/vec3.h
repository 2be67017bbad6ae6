/// \file models/vec3.h
/// Small fixed-size geometry used throughout models/: 3-vectors, 3x3 matrices
/// and unit quaternions. Header-only (static inline), no allocation.
///
/// Conventions:
/// - a 3-vector is `double[3]`;
/// - a 3x3 matrix is `double[9]`, ROW-MAJOR (m[3*r + c]). This differs from
///   the big matrices of models/system.h, which are column-major for LAPACK;
///   for the symmetric inertia tensors the order does not matter.
/// - a quaternion is `double[4]` = [w, x, y, z] (scalar first, as in scene
///   files) and rotates body-frame vectors into the world frame:
///   x_world = R(q) x_body.
/// - skew(a) b = a x b.
/// Output arguments may alias inputs unless the comment says otherwise.
#ifndef CP_MODELS_VEC3_H
#define CP_MODELS_VEC3_H

#include <math.h>
#include <string.h>

static inline void cp_v3_set(double *o, double x, double y, double z) {
  o[0] = x; o[1] = y; o[2] = z;
}
static inline void cp_v3_copy(double *o, const double *a) {
  o[0] = a[0]; o[1] = a[1]; o[2] = a[2];
}
static inline double cp_v3_dot(const double *a, const double *b) {
  return a[0] * b[0] + a[1] * b[1] + a[2] * b[2];
}
static inline double cp_v3_norm(const double *a) {
  return sqrt(cp_v3_dot(a, a));
}
static inline void cp_v3_add(double *o, const double *a, const double *b) {
  o[0] = a[0] + b[0]; o[1] = a[1] + b[1]; o[2] = a[2] + b[2];
}
static inline void cp_v3_sub(double *o, const double *a, const double *b) {
  o[0] = a[0] - b[0]; o[1] = a[1] - b[1]; o[2] = a[2] - b[2];
}
static inline void cp_v3_scale(double *o, const double *a, double s) {
  o[0] = a[0] * s; o[1] = a[1] * s; o[2] = a[2] * s;
}
/// o = a + s b
static inline void cp_v3_axpy(double *o, const double *a, double s,
                              const double *b) {
  o[0] = a[0] + s * b[0]; o[1] = a[1] + s * b[1]; o[2] = a[2] + s * b[2];
}
/// o = a x b (o may alias a or b).
static inline void cp_v3_cross(double *o, const double *a, const double *b) {
  double x = a[1] * b[2] - a[2] * b[1];
  double y = a[2] * b[0] - a[0] * b[2];
  double z = a[0] * b[1] - a[1] * b[0];
  o[0] = x; o[1] = y; o[2] = z;
}
static inline int cp_v3_isfinite(const double *a) {
  return isfinite(a[0]) && isfinite(a[1]) && isfinite(a[2]);
}

/// o = m a (o may alias a).
static inline void cp_m3_mulv(double *o, const double *m, const double *a) {
  double x = m[0] * a[0] + m[1] * a[1] + m[2] * a[2];
  double y = m[3] * a[0] + m[4] * a[1] + m[5] * a[2];
  double z = m[6] * a[0] + m[7] * a[1] + m[8] * a[2];
  o[0] = x; o[1] = y; o[2] = z;
}
/// o = m^T a (o may alias a).
static inline void cp_m3_tmulv(double *o, const double *m, const double *a) {
  double x = m[0] * a[0] + m[3] * a[1] + m[6] * a[2];
  double y = m[1] * a[0] + m[4] * a[1] + m[7] * a[2];
  double z = m[2] * a[0] + m[5] * a[1] + m[8] * a[2];
  o[0] = x; o[1] = y; o[2] = z;
}
/// o = a b (o may alias a or b).
static inline void cp_m3_mul(double *o, const double *a, const double *b) {
  double t[9];
  for (int r = 0; r < 3; ++r)
    for (int c = 0; c < 3; ++c)
      t[3 * r + c] = a[3 * r] * b[c] + a[3 * r + 1] * b[3 + c] +
                     a[3 * r + 2] * b[6 + c];
  memcpy(o, t, sizeof t);
}
static inline void cp_m3_identity(double *o) {
  static const double id[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  memcpy(o, id, sizeof id);
}
/// o = R In R^T (the world-frame inertia of a body-frame inertia In; not
/// named I because complex.h, included by lapacke.h, defines I). The result
/// is made exactly symmetric.
static inline void cp_m3_rotate_sym(double *o, const double *R,
                                    const double *In) {
  // Written out (the loops of cp_m3_mul and R^T, same products and sums in
  // the same order): -O2 keeps small loops, and a simulator rotates every
  // body's inertia every step.
  double t0 = R[0] * In[0] + R[1] * In[3] + R[2] * In[6];
  double t1 = R[0] * In[1] + R[1] * In[4] + R[2] * In[7];
  double t2 = R[0] * In[2] + R[1] * In[5] + R[2] * In[8];
  double t3 = R[3] * In[0] + R[4] * In[3] + R[5] * In[6];
  double t4 = R[3] * In[1] + R[4] * In[4] + R[5] * In[7];
  double t5 = R[3] * In[2] + R[4] * In[5] + R[5] * In[8];
  double t6 = R[6] * In[0] + R[7] * In[3] + R[8] * In[6];
  double t7 = R[6] * In[1] + R[7] * In[4] + R[8] * In[7];
  double t8 = R[6] * In[2] + R[7] * In[5] + R[8] * In[8];
  // u = t R^T: u_rc = t_r . R_c (rows of t and R)
  double u00 = t0 * R[0] + t1 * R[1] + t2 * R[2];
  double u01 = t0 * R[3] + t1 * R[4] + t2 * R[5];
  double u02 = t0 * R[6] + t1 * R[7] + t2 * R[8];
  double u10 = t3 * R[0] + t4 * R[1] + t5 * R[2];
  double u11 = t3 * R[3] + t4 * R[4] + t5 * R[5];
  double u12 = t3 * R[6] + t4 * R[7] + t5 * R[8];
  double u20 = t6 * R[0] + t7 * R[1] + t8 * R[2];
  double u21 = t6 * R[3] + t7 * R[4] + t8 * R[5];
  double u22 = t6 * R[6] + t7 * R[7] + t8 * R[8];
  double s01 = 0.5 * (u01 + u10), s02 = 0.5 * (u02 + u20),
         s12 = 0.5 * (u12 + u21);
  o[0] = u00; o[1] = s01; o[2] = s02;
  o[3] = s01; o[4] = u11; o[5] = s12;
  o[6] = s02; o[7] = s12; o[8] = u22;
}

/// Rotation matrix of a unit quaternion [w, x, y, z].
static inline void cp_quat_to_mat(double *R, const double *q) {
  double w = q[0], x = q[1], y = q[2], z = q[3];
  R[0] = 1 - 2 * (y * y + z * z); R[1] = 2 * (x * y - w * z);
  R[2] = 2 * (x * z + w * y);
  R[3] = 2 * (x * y + w * z); R[4] = 1 - 2 * (x * x + z * z);
  R[5] = 2 * (y * z - w * x);
  R[6] = 2 * (x * z - w * y); R[7] = 2 * (y * z + w * x);
  R[8] = 1 - 2 * (x * x + y * y);
}
/// Unit quaternion [w, x, y, z] of a rotation matrix R (row-major), by
/// Shepperd's method: divide by the largest of the four candidates
/// (4 w^2, 4 x^2, 4 y^2, 4 z^2) for accuracy. The sign is whichever the
/// branch gives (q and -q are the same rotation).
static inline void cp_quat_from_mat(const double *R, double *q) {
  double tr = R[0] + R[4] + R[8];
  if (tr >= R[0] && tr >= R[4] && tr >= R[8]) {
    double s = 2 * sqrt(1 + tr);
    q[0] = 0.25 * s;
    q[1] = (R[7] - R[5]) / s;
    q[2] = (R[2] - R[6]) / s;
    q[3] = (R[3] - R[1]) / s;
  } else if (R[0] >= R[4] && R[0] >= R[8]) {
    double s = 2 * sqrt(1 + R[0] - R[4] - R[8]);
    q[0] = (R[7] - R[5]) / s;
    q[1] = 0.25 * s;
    q[2] = (R[1] + R[3]) / s;
    q[3] = (R[2] + R[6]) / s;
  } else if (R[4] >= R[8]) {
    double s = 2 * sqrt(1 + R[4] - R[0] - R[8]);
    q[0] = (R[2] - R[6]) / s;
    q[1] = (R[1] + R[3]) / s;
    q[2] = 0.25 * s;
    q[3] = (R[5] + R[7]) / s;
  } else {
    double s = 2 * sqrt(1 + R[8] - R[0] - R[4]);
    q[0] = (R[3] - R[1]) / s;
    q[1] = (R[2] + R[6]) / s;
    q[2] = (R[5] + R[7]) / s;
    q[3] = 0.25 * s;
  }
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  for (int i = 0; i < 4; ++i) q[i] /= n;
}
/// o = a * b (Hamilton product; o may alias a or b). R(a*b) = R(a) R(b).
static inline void cp_quat_mul(double *o, const double *a, const double *b) {
  double w = a[0] * b[0] - a[1] * b[1] - a[2] * b[2] - a[3] * b[3];
  double x = a[0] * b[1] + a[1] * b[0] + a[2] * b[3] - a[3] * b[2];
  double y = a[0] * b[2] - a[1] * b[3] + a[2] * b[0] + a[3] * b[1];
  double z = a[0] * b[3] + a[1] * b[2] - a[2] * b[1] + a[3] * b[0];
  o[0] = w; o[1] = x; o[2] = y; o[3] = z;
}
/// Quaternion of a rotation by `angle` about the unit vector `axis`.
static inline void cp_quat_axis_angle(double *q, const double *axis,
                                      double angle) {
  double s = sin(0.5 * angle);
  q[0] = cos(0.5 * angle);
  q[1] = axis[0] * s; q[2] = axis[1] * s; q[3] = axis[2] * s;
}
/// Exact update of an orientation under a constant WORLD-frame angular
/// velocity w for time dt: o = exp(w dt) * q (o may alias q).
static inline void cp_quat_integrate(double *o, const double *q,
                                     const double *w, double dt) {
  double n = cp_v3_norm(w), d[4] = {1, 0, 0, 0};
  if (n > 0) {
    double axis[3];
    cp_v3_scale(axis, w, 1.0 / n);
    cp_quat_axis_angle(d, axis, n * dt);
  }
  cp_quat_mul(o, d, q);
}

#endif
