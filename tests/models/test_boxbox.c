// Step 1 of two boxes without ODE's clipping (models/collide.c,
// box_box_normal) against ODE's own box-box collider on random poses: when
// the fast path answers, ODE finds contacts and its normal has the same
// bits; and it answers for the poses of resting stacks (else it would not
// pay). Poses: boxes resting on one another (exactly touching, within and
// beyond touch_tol, slightly deep), tilted by 1e-13 to 1e-5 rad, offset
// sideways to overhanging, the whole pair turned at random; boxes at random
// (face-face, edge-edge, deep, apart).
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include <stdlib.h>

#include "models/collide.h"
#include "models/collide_impl.h"
#include "models/vec3.h"

static double urand(unsigned long long *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return (double)(*s >> 11) / 9007199254740992.0;
}

// A random unit quaternion (not uniform; any will do).
static void rand_quat(unsigned long long *s, double *q) {
  double n = 0;
  for (int i = 0; i < 4; ++i) q[i] = 2 * urand(s) - 1, n += q[i] * q[i];
  n = sqrt(n);
  for (int i = 0; i < 4; ++i) q[i] /= n;
}

// Quaternion of a rotation by a small random angle of about `ang` rad.
static void small_quat(unsigned long long *s, double ang, double *q) {
  double axis[3] = {2 * urand(s) - 1, 2 * urand(s) - 1, 2 * urand(s) - 1};
  if (cp_v3_norm(axis) < 1e-3) axis[2] = 1;
  cp_quat_axis_angle(q, axis, ang * (0.5 + urand(s)));
}

// Compares both ways for one pose; counts the fast path's answers.
static void check(const cp_collide_object *a, const cp_collide_object *b,
                  double tol, int trial, int *fast, int *ode) {
  double nf[3] = {0, 0, 0}, no[3] = {0, 0, 0};
  int r = cp_collide_box_box_step1(a, b, tol, nf, no);
  cr_assert_geq(r, 0, "trial %d", trial);
  *fast += r & 1;
  *ode += (r & 2) != 0;
  if (!(r & 1)) return;
  cr_assert(r & 2, "trial %d: the fast path answered where ODE finds no contacts", trial);
  cr_assert(!memcmp(nf, no, sizeof nf),
            "trial %d: normal [%.17g %.17g %.17g] against ODE's [%.17g %.17g %.17g]",
            trial, nf[0], nf[1], nf[2], no[0], no[1], no[2]);
}

static const double tols[] = {0, 1e-9, 1e-6, 1e-4, 1e-3, 0.01};

Test(boxbox, resting_poses) {
  unsigned long long seed = 7;
  int fast = 0, ode = 0, resting = 0;
  const int N = 60000;
  for (int trial = 0; trial < N; ++trial) {
    cp_shape sa = {.type = CP_SHAPE_BOX}, sb = {.type = CP_SHAPE_BOX};
    for (int i = 0; i < 3; ++i) {
      sa.size[i] = 0.02 + 0.5 * urand(&seed);
      sb.size[i] = trial % 3 == 0 ? sa.size[i] : 0.02 + 0.5 * urand(&seed);
    }
    if (trial % 5 == 0) memcpy(sa.size, (double[3]){0.2, 0.2, 0.1}, sizeof sa.size),
                        memcpy(sb.size, sa.size, sizeof sb.size);
    const double tol = tols[trial % 6];
    // The gap along z: exactly touching, within tol, beyond it, deep.
    double gap;
    switch ((trial / 6) % 5) {
    case 0: gap = 0; break;
    case 1: gap = tol * urand(&seed); break;
    case 2: gap = -1e-9 * urand(&seed); break;
    case 3: gap = -1e-4 * urand(&seed); break;
    default: gap = tol * (0.5 + urand(&seed)) + 1e-12 * urand(&seed); break;
    }
    // Tilt of each box and their common turn.
    // (none half the time: a simulated stack's boxes keep the identity)
    const double tilt = trial % 2 ? pow(10, -13 + 8 * urand(&seed)) : 0;
    double qa[4] = {1, 0, 0, 0}, qb[4] = {1, 0, 0, 0}, qc[4], qt[4];
    if (tilt > 0) {
      small_quat(&seed, tilt, qa);
      small_quat(&seed, tilt, qb);
    }
    int yawed = trial % 4 == 0;
    if (yawed) {
      // A yaw about z as well (a stack's box turned on the one below).
      double y[4], axis[3] = {0, 0, 1};
      cp_quat_axis_angle(y, axis, 2 * urand(&seed) - 1);
      cp_quat_mul(qt, y, qa);
      memcpy(qa, qt, sizeof qa);
    }
    if (trial % 3 == 0) rand_quat(&seed, qc); else memcpy(qc, (double[4]){1, 0, 0, 0}, sizeof qc);
    double pa[3] = {(urand(&seed) - 0.5) * (trial % 7 == 0 ? sb.size[0] : 1e-3),
                    (urand(&seed) - 0.5) * (trial % 7 == 0 ? sb.size[1] : 1e-3),
                    0.5 * (sa.size[2] + sb.size[2]) + gap};
    double Rc[9], wa[3], wb[3], off[3] = {urand(&seed) - 0.5, urand(&seed) - 0.5, urand(&seed)};
    cp_quat_to_mat(Rc, qc);
    cp_m3_mulv(wa, Rc, pa);
    cp_v3_add(wa, wa, off);
    cp_v3_copy(wb, off);
    cp_collide_object a = {&sa, {wa[0], wa[1], wa[2]}, {0}}, b = {&sb, {wb[0], wb[1], wb[2]}, {0}};
    cp_quat_mul(a.q, qc, qa);
    cp_quat_mul(b.q, qc, qb);
    int f0 = fast;
    if (trial % 5 < 2) check(&a, &b, tol, trial, &fast, &ode);
    else check(&b, &a, tol, trial, &fast, &ode); // the lower box as a
    // A simulated stack's pair: no tilt, no turn of the pair, on one
    // another within the footprint, tol 1e-6 or more.
    const int g = (trial / 6) % 5; // touching exactly or deeper
    if (tilt == 0 && trial % 3 && (g == 0 || g == 2 || g == 3) && tol >= 1e-6 && trial % 7) {
      ++resting;
      cr_assert_eq(fast - f0, 1, "trial %d: a resting pair takes ODE's path", trial);
    }
  }
  cr_log_info("boxbox resting: %d poses, fast %d, ODE contacts %d, resting %d", N, fast, ode, resting);
  cr_assert_gt(resting, 1000);
}

Test(boxbox, random_poses) {
  unsigned long long seed = 11;
  int fast = 0, ode = 0;
  const int N = 60000;
  for (int trial = 0; trial < N; ++trial) {
    cp_shape sa = {.type = CP_SHAPE_BOX}, sb = {.type = CP_SHAPE_BOX};
    for (int i = 0; i < 3; ++i) {
      sa.size[i] = 0.05 + urand(&seed);
      sb.size[i] = 0.05 + urand(&seed);
    }
    cp_collide_object a = {&sa, {0}, {0}}, b = {&sb, {0}, {0}};
    for (int i = 0; i < 3; ++i) a.x[i] = 1.2 * (urand(&seed) - 0.5), b.x[i] = 0.3 * (urand(&seed) - 0.5);
    rand_quat(&seed, a.q);
    if (trial % 3 == 0) { // parallel faces: turned about one axis alike
      double axis[3] = {0, 0, 0};
      axis[trial % 9 / 3] = 1;
      cp_quat_axis_angle(a.q, axis, 6 * urand(&seed));
      memcpy(b.q, a.q, sizeof b.q);
    } else if (trial % 3 == 1) { // a turned about z, b not
      double axis[3] = {0, 0, 1};
      cp_quat_axis_angle(a.q, axis, 6 * urand(&seed));
      memcpy(b.q, (double[4]){1, 0, 0, 0}, sizeof b.q);
    } else {
      rand_quat(&seed, a.q);
      rand_quat(&seed, b.q);
    }
    check(&a, &b, tols[trial % 6], trial, &fast, &ode);
  }
  cr_log_info("boxbox random: %d poses, fast %d, ODE contacts %d", N, fast, ode);
  cr_assert_gt(ode, 1000);
  cr_assert_gt(fast, 1000);
}
