/* Local steering's chart of the pose rows (search.steer_rotation "log";
 * docs/planner.md "Local steering"): a pose difference in 6 rows per body
 * instead of the embedding's 7 (position and quaternion).
 *
 * The embedding holds a body's orientation as a quaternion scaled by the
 * metric's angle weight and sign-fixed (w >= 0). Differences of those 4
 * rows are a poor local model far from the node: at half a turn the sign
 * fix jumps and the rows' change is not linear in any input. The chart
 * used instead is the rotation vector of the relative rotation,
 *     v = log(R R0^T)  (axis times angle, |v| <= pi, world frame),
 * scaled by s / 2 where s is the quaternion rows' norm (the weight), so
 * that for small turns its length equals the embedding's chord s |q - q0|
 * to first order: the two charts weigh a small turn alike. */
#include <math.h>

#include "planner/search/search_impl.h"

void cp_steer_rotvec(const double *q, const double *q0, double *v) {
  /* p = q conj(q0), quaternions [w, x, y, z]. */
  double w = q[0] * q0[0] + q[1] * q0[1] + q[2] * q0[2] + q[3] * q0[3];
  double x = -q[0] * q0[1] + q[1] * q0[0] - q[2] * q0[3] + q[3] * q0[2];
  double y = -q[0] * q0[2] + q[1] * q0[3] + q[2] * q0[0] - q[3] * q0[1];
  double z = -q[0] * q0[3] - q[1] * q0[2] + q[2] * q0[1] + q[3] * q0[0];
  if (w < 0) { /* q and -q are one rotation: the shorter way round */
    w = -w;
    x = -x;
    y = -y;
    z = -z;
  }
  double sn = sqrt(x * x + y * y + z * z);
  v[0] = v[1] = v[2] = 0;
  if (!(sn > 0)) return; /* no turn, or a zero quaternion */
  /* The angle 2 atan2(|xyz|, w) is exact near pi as well as near 0, and
   * does not need |p| = 1 (the rows are scaled). */
  double f = 2 * atan2(sn, w) / sn;
  v[0] = f * x;
  v[1] = f * y;
  v[2] = f * z;
}

void cp_steer_pose_diff(int nb, const double *e0, const double *e, double *d) {
  for (int b = 0; b < nb; ++b) {
    const double *a = e0 + 7 * b, *c = e + 7 * b;
    double *o = d + 6 * b;
    for (int k = 0; k < 3; ++k) o[k] = c[k] - a[k];
    double s = sqrt(a[3] * a[3] + a[4] * a[4] + a[5] * a[5] + a[6] * a[6]);
    double sc = sqrt(c[3] * c[3] + c[4] * c[4] + c[5] * c[5] + c[6] * c[6]);
    if (!(s > 0) || !(sc > 0)) {
      o[3] = o[4] = o[5] = 0;
      continue;
    }
    cp_steer_rotvec(c + 3, a + 3, o + 3); /* scale-free: an angle */
    for (int k = 3; k < 6; ++k) o[k] *= s / 2;
  }
}
