// Rest, impacts, grasps, Painleve and determinism (issue 8).
#include <cblas.h>
#include <criterion/criterion.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/bench_stack.h"
#include "planner/sim/world.h"
#include "wtest.h"

static const cp_stepper dyn[2] = {CP_STEPPER_ACCELERATION, CP_STEPPER_VELOCITY};

// A stack of n boxes at rest stays at rest: the top box moves <= 1e-6 m in
// 10 s (dt = 5 ms, the benchmark's step).
// accel_rise: the energy gain allowed to the acceleration stepper over the
// run (the velocity stepper is always held to 1e-9 J).
static void stack_rests(const char *rel, const char *top, double accel_rise) {
  for (int s = 0; s < 2; ++s) {
    cp_world *w = wt_world_file(rel, dyn[s], 5e-3);
    int ib = wt_body(w, top), n = cp_world_state_size(w);
    double *x0 = malloc(sizeof(double) * (size_t)n), *x = malloc(sizeof(double) * (size_t)n);
    cp_world_get_state(w, x0);
    double e0 = cp_world_energy(w);
    wt_run(w, 2000, NULL);
    cp_world_get_state(w, x);
    double d = 0;
    for (int i = 0; i < 3; ++i) d += pow(x[ib + i] - x0[ib + i], 2);
    cr_assert(sqrt(d) <= 1e-6, "%s %s: the top box moved %g m",
              cp_stepper_name(dyn[s]), rel, sqrt(d));
    const double rise = dyn[s] == CP_STEPPER_ACCELERATION ? accel_rise : 1e-9;
    cr_assert(cp_world_energy(w) <= e0 + rise, "%s %s: energy rose by %g J",
              cp_stepper_name(dyn[s]), rel, cp_world_energy(w) - e0);
    free(x0);
    free(x);
    cp_world_destroy(w);
  }
}

Test(world_rest, stack5) { stack_rests("stack5.json", "box5", 1e-9); }
// With the rigid model (compliance 0) three acceleration steps of this run
// end with Lemke answers whose refinement stalled on the dependent corner
// rows and fall back, each moving the energy by ~4.6e-8 J; the compliance
// makes those rows independent (docs/simulate.md): no fallback, and the
// same 1e-9 J bound as stack5.
Test(world_rest, stack10) { stack_rests("stack10.json", "box10", 1e-9); }

// A resting stack of `boxes` boxes (the benchmark's scene,
// experiments/bench_stack.h, dt = 5 ms) stepped `steps` times with either
// stepper: the top box's drift and the deepest overlap within the bounds,
// and after the first step at most one Lemke pivot a step on average (the
// warm starts hold).
static void stack_rests_warm(int boxes, int steps, double drift_bound, double overlap_bound) {
  for (int s = 0; s < 2; ++s) {
    cp_world_options o = cp_world_defaults();
    o.dt = 5e-3;
    o.stepper = dyn[s];
    cp_world *w = bench_stack_world(boxes, 0.5, 0, &o, "stack_rests_warm");
    const int n = cp_world_state_size(w), top = 13 * (boxes - 1);
    double *x0 = malloc(sizeof(double) * (size_t)n), *x = malloc(sizeof(double) * (size_t)n);
    cr_assert(x0 && x);
    cp_world_get_state(w, x0);
    long pivots = 0;
    double pen = 0;
    for (int k = 0; k < steps; ++k) {
      cp_step_info si;
      cr_assert_eq(cp_world_step(w, &si), CP_WORLD_OK, "%s, %d boxes: step %d: %s",
                   cp_stepper_name(dyn[s]), boxes, k, cp_world_message(w));
      if (k > 0) pivots += si.pivots;
      pen = fmax(pen, si.max_penetration);
    }
    cp_world_get_state(w, x);
    double d = 0;
    for (int i = 0; i < 3; ++i) d += pow(x[top + i] - x0[top + i], 2);
    d = sqrt(d);
    cr_log_info("%s, %d boxes: drift %.3g m, overlap %.3g m, %ld pivots", cp_stepper_name(dyn[s]),
                boxes, d, pen, pivots);
    cr_assert(d <= drift_bound, "%s, %d boxes: the top box drifted %.3g m in %d steps (bound %.3g)",
              cp_stepper_name(dyn[s]), boxes, d, steps, drift_bound);
    cr_assert(pen <= overlap_bound, "%s, %d boxes: overlap %.3g m (bound %.3g)",
              cp_stepper_name(dyn[s]), boxes, pen, overlap_bound);
    cr_assert(pivots <= steps - 1, "%s, %d boxes: %ld pivots in %d warm steps",
              cp_stepper_name(dyn[s]), boxes, pivots, steps - 1);
    free(x0);
    free(x);
    cp_world_destroy(w);
  }
}

// A tall stack (25 boxes, the bench's scene) rests on warm starts: after the
// first (cold) step at most one pivot a step on average with either
// stepper, no drift projection's cold LCP on every step (issue 26: from
// about 20 boxes the compliance's settling at the foot of the stack went
// past the fixed hold depth, and the acceleration stepper spent 60 pivots a
// step projecting it back), and the top box stays within 1e-6 m over 2 s.
Test(world_rest, tall_stack_warm) { stack_rests_warm(25, 400, 1e-6, 1e-6); }

// The step after a stack is put down (a 25-box stack: 100 contacts, past
// CP_WORLD_IMPACT_WARM): every contact has settled into its compliance in
// the first step and is met as an impact in the second, whose large impact
// problem is taken from the basis of the normal impulses without a Lemke
// pivot. Its answer is checked against a world whose LCPs are all solved
// cold (warm starts off: Lemke from the start, an independent solve): the
// velocities after each of the two steps agree to 1e-12 m/s (the normal
// impulses of a face on four corners are not unique; the velocities are).
Test(world_rest, large_impact_warm_matches_cold) {
  const int boxes = 25;
  cp_world *wv[2];
  for (int c = 0; c < 2; ++c) {
    cp_world_options o = cp_world_defaults();
    o.dt = 5e-3;
    o.warm_start = c == 0;
    wv[c] = bench_stack_world(boxes, 0.5, 0, &o, "large_impact_warm_matches_cold");
  }
  const int n = cp_world_state_size(wv[0]);
  double *xa = malloc(sizeof(double) * (size_t)n), *xb = malloc(sizeof(double) * (size_t)n);
  cr_assert(xa && xb);
  for (int k = 0; k < 2; ++k) {
    cp_step_info si[2];
    for (int c = 0; c < 2; ++c)
      cr_assert_eq(cp_world_step(wv[c], &si[c]), CP_WORLD_OK, "step %d: %s", k,
                   cp_world_message(wv[c]));
    if (k == 1) {
      cr_assert_eq(si[0].impacts, 4 * boxes, "impacts %d", si[0].impacts);
      cr_assert_eq(si[1].impacts, 4 * boxes, "impacts (cold) %d", si[1].impacts);
      cr_assert_eq(si[0].pivots, 0, "the impact step took %d pivots", si[0].pivots);
      cr_assert(si[1].pivots > 0); // the cold world really pivoted
    }
    cp_world_get_state(wv[0], xa);
    cp_world_get_state(wv[1], xb);
    for (int b = 0; b < boxes; ++b)
      for (int i = 7; i < 13; ++i) { // a body's state: x, q, v, omega
        const double va = xa[13 * b + i], vb = xb[13 * b + i];
        cr_assert(fabs(va - vb) <= 1e-12, "step %d, box %d, entry %d: %.17g warm, %.17g cold",
                  k, b, i, va, vb);
      }
  }
  free(xa);
  free(xb);
  for (int c = 0; c < 2; ++c) cp_world_destroy(wv[c]);
}

// Issue 26's fidelity figures, held by a test so that a regression fails
// CI: the benchmark's resting stacks (experiments/bench_stack.h, bench_mujoco's
// scene, dt = 5 ms) over its 10 s. The top box's drift and the deepest
// overlap, both steppers, as bench_mujoco prints them (experiments/results/
// mujoco.md, the same to the printed digits since session 11): drift
// 3.6e-10, 3.2e-9, 8.9e-9, 3.6e-8, 1.4e-7 m and overlap 3.6e-10, 1.4e-9,
// 2.8e-9, 6.4e-9, 1.4e-8 m for 1, 3, 5, 10, 20 boxes. The bounds are three
// times those (world_rest's older bound, 1e-6 m, is 7 to 2800 times the
// figures and would let them grow unseen). The warm starts hold at every
// size (at most one pivot a step).
Test(world_rest, stack_fidelity_small) {
  stack_rests_warm(1, 2000, 3 * 3.6e-10, 3 * 3.6e-10);
  stack_rests_warm(3, 2000, 3 * 3.2e-9, 3 * 1.4e-9);
  stack_rests_warm(5, 2000, 3 * 8.9e-9, 3 * 2.8e-9);
}
Test(world_rest, stack_fidelity_10) { stack_rests_warm(10, 2000, 3 * 3.6e-8, 3 * 6.4e-9); }
Test(world_rest, stack_fidelity_20) { stack_rests_warm(20, 2000, 3 * 1.4e-7, 3 * 1.4e-8); }

// A box dropped corner first (e = 0) settles on the table: penetration
// <= 1e-4 m at every step, no step without input gains energy beyond
// rounding, and it ends at rest on a face.
Test(world_rest, box_drop_settles) {
  for (int s = 0; s < 2; ++s) {
    cp_world *w = wt_world_file("box_drop.json", dyn[s], 1e-3);
    double e = cp_world_energy(w), pen = 0, rise = 0;
    for (int k = 0; k < 1500; ++k) {
      cp_step_info info;
      cr_assert_eq(cp_world_step(w, &info), CP_WORLD_OK, "%s",
                   cp_world_message(w));
      pen = fmax(pen, info.max_penetration);
      rise = fmax(rise, info.energy - e);
      e = info.energy;
    }
    double x[13];
    cp_world_get_state(w, x);
    cr_assert(pen <= 1e-4, "%s: penetration %g", cp_stepper_name(dyn[s]), pen);
    // Velocity stepper: rounding. Acceleration stepper: the drift
    // projection at rest may lift the box out of an overlap left by the
    // corner impacts (docs/simulate.md); bounded by m g times 1e-5 m.
    double allow = s == 0 ? 1e-9 + 9.81 * 1e-5 : 1e-9;
    cr_assert(rise <= allow, "%s: energy rose by %g in a step",
              cp_stepper_name(dyn[s]), rise);
    // At rest on its 0.1 m face: centre at z = 0.05.
    cr_assert(fabs(x[2] - 0.05) <= 1e-4, "%s: z = %g", cp_stepper_name(dyn[s]),
              x[2]);
    cr_assert(sqrt(x[7] * x[7] + x[8] * x[8] + x[9] * x[9]) <= 1e-6);
    cp_world_destroy(w);
  }
}

// A box dropped flat with restitution e (the scene's "restitution" table)
// leaves the table at e times its impact speed sqrt(2 g d) (acceleration
// stepper: Newton's law in the impulse LCP; the impact is seen within one
// step, so the speeds agree to g dt).
Test(world_rest, restitution_bounce) {
  const char *text =
      "{\"restitution\": {\"default\": 0.1, \"pairs\": [{\"a\": \"box\", "
      "\"b\": \"table\", \"e\": 0.5}]}, \"bodies\": [{\"name\": \"table\", "
      "\"fixed\": true, \"shape\": {\"type\": \"plane\", \"normal\": [0, 0, "
      "1], \"offset\": 0}}, {\"name\": \"box\", \"mass\": 1, \"shape\": "
      "{\"type\": \"box\", \"size\": [0.2, 0.1, 0.1]}, \"position\": [0, 0, "
      "0.25]}]}";
  const double h = 1e-3;
  cp_world *w = wt_world(text, CP_STEPPER_ACCELERATION, h);
  double x[13], vin = 0, vout = 0;
  for (int k = 0; k < 400; ++k) {
    cp_world_get_state(w, x);
    double before = x[9];
    wt_run(w, 1, NULL);
    cp_world_get_state(w, x);
    if (before < 0 && x[9] > 0 && vout == 0) vin = -before, vout = x[9];
  }
  double v = sqrt(2 * 9.81 * 0.2);
  cr_assert(fabs(vin - v) <= 9.81 * h + 1e-9, "impact at %g, expected %g", vin, v);
  // (+ 1e-5: the compliance of docs/simulate.md takes kappa (1 + e) v_in
  // times the contact's mass ratio off the rebound: 4e-6 m/s here.)
  cr_assert(fabs(vout - 0.5 * vin) <= 9.81 * h + 1e-5, "left at %g, expected %g",
            vout, 0.5 * vin);
  const cp_scene *sc = cp_world_scene(w);
  (void)sc;
  cp_world_destroy(w);
}

// Two fingers squeezing a 0.2 kg box: 5 N each (2 mu F = 8 N >= m g) holds
// it; 0.1 N each (0.16 N < 1.96 N) drops it.
Test(world_rest, grasp_holds_and_drops) {
  for (int s = 0; s < 2; ++s) {
    cp_world *w = wt_world_file("grasp_hold.json", dyn[s], 1e-3);
    int ib = wt_body(w, "box");
    wt_run(w, 500, NULL);
    double x[64];
    cp_world_get_state(w, x);
    cr_assert(fabs(x[ib + 2] - 0.2) <= 1e-4, "%s: held box at z = %g",
              cp_stepper_name(dyn[s]), x[ib + 2]);
    cp_world_destroy(w);
    w = wt_world_file("grasp_drop.json", dyn[s], 1e-3);
    wt_run(w, 200, NULL);
    cp_world_get_state(w, x);
    cr_assert(x[ib + 2] < 0.2 - 0.05, "%s: dropped box still at z = %g",
              cp_stepper_name(dyn[s]), x[ib + 2]);
    cp_world_destroy(w);
  }
}

// grasp_hold.json after time t: the box's height change (m). kappa: the
// compliance; kick: the box's initial upward speed (m/s; the first step's
// impact shares it with the fingers).
static double grasp_rise(cp_stepper stp, double h, double kappa, double kick,
                         double t) {
  cp_scene sc;
  wt_scene_file("grasp_hold.json", &sc);
  cp_world_options o = cp_world_defaults();
  o.stepper = stp;
  o.dt = h;
  o.compliance = kappa;
  cp_world *w = NULL;
  cp_error err = {0};
  cr_assert_eq(cp_world_create(&sc, &o, &w, &err), CP_WORLD_OK, "%s", err.msg);
  cp_scene_free(&sc);
  int ib = wt_body(w, "box");
  double x[64];
  cr_assert(cp_world_state_size(w) <= 64);
  cp_world_get_state(w, x);
  x[ib + 9] = kick;
  cr_assert_eq(cp_world_set_state(w, x), CP_WORLD_OK);
  wt_run(w, (int)lround(t / h), NULL);
  cp_world_get_state(w, x);
  cp_world_destroy(w);
  return x[ib + 2] - 0.2;
}

// An independent linearisation of grasp_hold.json's symmetric motions
// (planar x-z, the scene's numbers copied): each finger's fingertip cap
// (centre 0.1 m along the tip link, radius r) rolls without slipping on
// the box's face x = -+0.05, the box moves along z only. The constraints
// cap_x + r = -0.05 and cap_z - r (q1 + q2) - z_box = const leave one
// degree of freedom, q1 (left finger; the right one mirrors it). Returns
// lambda^2 = -V'' / M along it (V: the constant efforts' and gravity's
// potential, M: the kinetic energy's mass), so lambda^2 > 0 is an unstable
// equilibrium growing as exp(lambda t).
typedef struct { double c1[2], c2[2], cap[2], th; } grasp_kin;
static const double G_B[2] = {-0.15, 0.35}, G_R = 0.01;
static const double G_Q1 = 3.1862427044555015, G_Q2 = -1.3094997509706783;
static grasp_kin grasp_kin_of(double q1, double q2) {
  grasp_kin k;
  k.th = q1 + q2;
  const double j2[2] = {G_B[0] + 0.12 * sin(q1), G_B[1] + 0.12 * cos(q1)};
  for (int i = 0; i < 2; ++i) {
    const double s1 = i ? cos(q1) : sin(q1), st = i ? cos(k.th) : sin(k.th);
    k.c1[i] = G_B[i] + 0.06 * s1;
    k.c2[i] = j2[i] + 0.05 * st;
    k.cap[i] = j2[i] + 0.1 * st;
  }
  return k;
}
// The two constraints' residuals at (q1, q2, zb); K: the rolling invariant.
static void grasp_cons(double q1, double q2, double zb, double K, double f[2]) {
  grasp_kin k = grasp_kin_of(q1, q2);
  f[0] = k.cap[0] + G_R + 0.05;
  f[1] = k.cap[1] - G_R * k.th - zb - K;
}
// q2 and the box height zb on the constraints at q1 (Newton).
static void grasp_conf(double q1, double K, double *q2, double *zb) {
  *q2 = G_Q2;
  *zb = 0.2;
  for (int it = 0; it < 40; ++it) {
    double f[2], a[2], b[2];
    const double e = 1e-7;
    grasp_cons(q1, *q2, *zb, K, f);
    grasp_cons(q1, *q2 + e, *zb, K, a);
    grasp_cons(q1, *q2, *zb + e, K, b);
    const double j00 = (a[0] - f[0]) / e, j01 = (b[0] - f[0]) / e,
                 j10 = (a[1] - f[1]) / e, j11 = (b[1] - f[1]) / e;
    const double det = j00 * j11 - j01 * j10;
    *q2 += (-f[0] * j11 + f[1] * j01) / det;
    *zb += (-j00 * f[1] + j10 * f[0]) / det;
  }
}
static double grasp_potential(double q1, double K) {
  const double g = 9.81, t1 = -0.8675452711615365, t2 = -0.2773385608517344;
  double q2, zb;
  grasp_conf(q1, K, &q2, &zb);
  grasp_kin k = grasp_kin_of(q1, q2);
  return 2 * (-t1 * q1 - t2 * q2 + 0.05 * g * k.c1[1] + 0.05 * g * k.c2[1]) +
         0.2 * g * zb;
}
static double grasp_lambda2(void) {
  grasp_kin k0 = grasp_kin_of(G_Q1, G_Q2);
  cr_assert(fabs(k0.cap[0] + G_R + 0.05) <= 1e-12, "the cap does not touch the face");
  const double K = k0.cap[1] - G_R * k0.th - 0.2, e = 1e-4, d = 1e-6;
  const double v2 = (grasp_potential(G_Q1 + e, K) - 2 * grasp_potential(G_Q1, K) +
                     grasp_potential(G_Q1 - e, K)) / (e * e);
  double qa, za, qb, zb;
  grasp_conf(G_Q1 - d, K, &qa, &za);
  grasp_conf(G_Q1 + d, K, &qb, &zb);
  grasp_kin ka = grasp_kin_of(G_Q1 - d, qa), kb = grasp_kin_of(G_Q1 + d, qb);
  const double w2 = 1 + (qb - qa) / (2 * d), vz = (zb - za) / (2 * d);
  double m = 2 * (6e-5 + 4.166666666666668e-05 * w2 * w2) + 0.2 * vz * vz;
  for (int i = 0; i < 2; ++i) {
    const double v1 = (kb.c1[i] - ka.c1[i]) / (2 * d), v2i = (kb.c2[i] - ka.c2[i]) / (2 * d);
    m += 2 * 0.05 * (v1 * v1 + v2i * v2i);
  }
  return -v2 / m;
}

// Why the squeeze grasp creeps (issue 26; experiments/results/mujoco.md,
// session 30, grip32). Its start is an equilibrium of the model (complan
// solve: accelerations 0, both contacts rolling), but under constant
// efforts an unstable one: a 1e-6 m/s kick grows as exp(17.9 t) in the
// rigid model (compliance 0) at every dt. What seeds it is the
// compliance's creep of a sticking contact that carries friction (h kappa
// A_tt c_t, docs/simulate.md "Compliance"), first order in h and linear in
// kappa. Without it and without a kick the rigid model keeps the start bit
// for bit (its velocities stay at rounding level, 1e-15 m/s, and h times
// that is below a position's last bit: no seed at all). Pinned here: (1)
// compliance 0 holds the box (0 m measured; the default moves it 1.3e-5 m
// in the same 0.4 s at 5 ms); (2) the kicked rigid grasp grows at
// the rate of the independent linearisation above (17.90/s; measured
// 17.90/s at 5 and 1 ms, from 0.2 to 0.4 s: a property of the model, not
// of the step); (3) the default's rise is proportional to h (2 ms / 5 ms: 0.39)
// and to kappa (1e-7 / 1e-6: 0.100).
Test(world_rest, grasp_creep_is_seeded_by_the_compliance) {
  for (int s = 0; s < 2; ++s) {
    const char *sn = cp_stepper_name(dyn[s]);
    const double rigid = grasp_rise(dyn[s], 5e-3, 0, 0, 0.4);
    const double d5 = grasp_rise(dyn[s], 5e-3, 1e-6, 0, 0.4);
    cr_assert(fabs(rigid) <= 1e-12, "%s: rigid grasp moved %g m", sn, rigid);
    cr_assert(d5 > 1e-6, "%s: compliant grasp moved only %g m", sn, d5);
    double rate[2];
    const double hs[2] = {5e-3, 1e-3};
    for (int k = 0; k < 2; ++k)
      rate[k] = log(grasp_rise(dyn[s], hs[k], 0, 1e-6, 0.4) /
                    grasp_rise(dyn[s], hs[k], 0, 1e-6, 0.2)) / 0.2;
    const double lam2 = grasp_lambda2();
    cr_assert(lam2 > 0, "the linearisation says stable (lambda^2 = %g)", lam2);
    for (int k = 0; k < 2; ++k)
      cr_assert(fabs(rate[k] / sqrt(lam2) - 1) <= 0.01,
                "%s: kicked rigid grasp grows at %g/s at dt %g s, the "
                "linearisation at %g/s", sn, rate[k], hs[k], sqrt(lam2));
    const double d2 = grasp_rise(dyn[s], 2e-3, 1e-6, 0, 0.4);
    const double dk = grasp_rise(dyn[s], 5e-3, 1e-7, 0, 0.4);
    cr_assert(d2 / d5 >= 0.3 && d2 / d5 <= 0.5, "%s: rise %g m at 2 ms, %g m at 5 ms",
              sn, d2, d5);
    cr_assert(fabs(dk / d5 - 0.1) <= 0.01, "%s: rise %g m at kappa 1e-7, %g m at 1e-6",
              sn, dk, d5);
  }
}

// Grasp and lift (planner/tasks/grasp_lift.json's scene): the fingers close
// on the 0.2 kg box with 3 N (effort on 'gap') for 0.3 s, then the lift
// pulls with 4 N for 0.2 s. mu = 0.8 gives 2 x 2.4 N >= the 2.29 N the box
// needs, so the grasp sticks and hand and box rise together at
// a = (4 - 0.35 g) / 0.35 = 1.6186 m/s^2, with no rotation and no sideways
// motion. Two defects this catches: the rigid model lets each pad's
// pressure sit on one corner, about which the box may hinge -- Lemke took
// that answer and the box spun at up to 9 rad/s (fixed by the compliance of
// docs/simulate.md); and the table left behind was treated as an impact
// predicted from gravity alone, which kicked box and hand upwards (the box
// rose 11 % too far). Every step is also checked against Newton's law for
// the box: the recorded contact forces plus its weight give m dv/h.
Test(world_rest, grasp_lifts_without_spin) {
  const double a = (4.0 - 0.35 * 9.81) / 0.35, h = 5e-3, m = 0.2;
  for (int s = 0; s < 2; ++s)
    for (int warm = 0; warm < 2; ++warm) {
      cp_scene sc;
      wt_scene_file("plan_grasp.json", &sc);
      cp_world_options o = cp_world_defaults();
      o.stepper = dyn[s];
      o.dt = h;
      o.warm_start = warm;
      cp_world *w;
      cp_error err;
      cr_assert_eq(cp_world_create(&sc, &o, &w, &err), CP_WORLD_OK);
      cp_scene_free(&sc);
      int ib = wt_body(w, "box"), lift = cp_world_joint_index(w, "hand/lift"),
          gap = cp_world_joint_index(w, "hand/gap");
      cr_assert(lift >= 0 && gap >= 0);
      cr_assert_eq(cp_world_set_effort(w, gap, -3.0), CP_WORLD_OK);
      double x[64], x0[64], z0 = 0;
      const char *sn = cp_stepper_name(dyn[s]);
      for (int k = 0; k < 100; ++k) {
        if (k == 60) {
          cr_assert_eq(cp_world_set_effort(w, lift, 4.0), CP_WORLD_OK);
          cp_world_get_state(w, x);
          z0 = x[ib + 2];
        }
        cp_world_get_state(w, x0);
        cp_step_info info;
        cr_assert_eq(cp_world_step(w, &info), CP_WORLD_OK, "%s",
                     cp_world_message(w));
        cp_world_get_state(w, x);
        cr_assert(fabs(x[ib + 1]) <= 1e-6, "%s warm %d step %d: box y = %g m",
                  sn, warm, k, x[ib + 1]);
        for (int i = 10; i < 13; ++i)
          cr_assert(fabs(x[ib + i]) <= 1e-5,
                    "%s warm %d step %d: box angular velocity (%g, %g, %g)",
                    sn, warm, k, x[ib + 10], x[ib + 11], x[ib + 12]);
        if (info.impacts || info.fallback) continue;
        const cp_world_contact *c;
        int nc = cp_world_contacts(w, &c);
        double f[3] = {0, 0, -m * 9.81};
        for (int i = 0; i < nc; ++i)
          for (int d = 0; d < 3; ++d) f[d] += c[i].force[d]; // a = box
        for (int d = 0; d < 3; ++d) {
          double mdv = m * (x[ib + 7 + d] - x0[ib + 7 + d]) / h;
          // To 1e-5 of the weight: the box settling kappa-deep into the
          // table (compliance, docs/simulate.md) shows at kappa m g.
          cr_assert(fabs(f[d] - mdv) <= 1e-5 * m * 9.81 + 1e-6 * fabs(mdv),
                    "%s warm %d step %d axis %d: contact forces + weight %g N, "
                    "m dv/h %g N",
                    sn, warm, k, d, f[d], mdv);
        }
      }
      // 40 steps of semi-implicit Euler from rest: z = a h^2 n (n + 1) / 2.
      const double rise = a * h * h * 40 * 41 / 2;
      cr_assert(fabs(x[ib + 2] - z0 - rise) <= 0.01 * rise,
                "%s warm %d: the box rose %g m, expected %g m", sn, warm,
                x[ib + 2] - z0, rise);
      cp_world_destroy(w);
    }
}

// Painleve's rod: the acceleration problem has no solution while the rod
// slides; the acceleration stepper falls back (counted) and runs through.
Test(world_rest, painleve_falls_back) {
  cp_world *w = wt_world_file("painleve_slide.json", CP_STEPPER_ACCELERATION, 1e-3);
  int fb = wt_run(w, 300, NULL);
  cr_assert(fb > 0, "no fallback step");
  cp_world_destroy(w);
  // Without fallback the step reports it and leaves the state unchanged.
  cp_scene sc;
  wt_scene_file("painleve_slide.json", &sc);
  cp_world_options o = cp_world_defaults();
  o.allow_fallback = 0;
  cp_error err;
  cr_assert_eq(cp_world_create(&sc, &o, &w, &err), CP_WORLD_OK);
  cp_scene_free(&sc);
  int n = cp_world_state_size(w);
  double x0[13], x[13];
  cr_assert_eq(n, 13);
  cp_world_get_state(w, x0);
  cp_step_info info;
  cr_assert_eq(cp_world_step(w, &info), CP_WORLD_NEEDS_FALLBACK);
  cr_assert(strstr(cp_world_message(w), "acceleration LCP") != NULL, "%s",
            cp_world_message(w));
  cp_world_get_state(w, x);
  cr_assert_eq(memcmp(x, x0, sizeof x), 0);
  cr_assert_eq(cp_world_time(w), 0.0);
  cp_world_destroy(w);
}

// Determinism: the same scene twice gives the same hash; a committed hash
// catches accidental changes in the numerics (docs/simulate.md says how to
// update it on purpose).
#define COMMITTED_HASH UINT64_C(0x273906120a2f91cf)
Test(world_rest, determinism) {
  // The hash is of single-threaded BLAS (as complan runs it): threaded
  // OpenBLAS sums in another order.
  openblas_set_num_threads(1);
  uint64_t h[2];
  for (int r = 0; r < 2; ++r) {
    cp_world *w = wt_world_file("box_drop.json", CP_STEPPER_ACCELERATION, 1e-3);
    wt_run(w, 400, NULL);
    h[r] = cp_world_hash(w);
    cp_world_destroy(w);
  }
  cr_assert_eq(h[0], h[1]);
  cr_assert_eq(h[0], COMMITTED_HASH, "box_drop hash %016" PRIx64
               " differs from the committed one", h[0]);
}
