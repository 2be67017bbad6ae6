/* bench_sim: the simulator (planner/sim/world.h) against ODE's dWorldStep and
 * dWorldQuickStep on the same scenes, side by side in one run:
 *   - stacks of 1, 3, 5 and 10 boxes (0.2 x 0.2 x 0.1 m, 1 kg, mu 0.5) at
 *     rest on a table, dt = 5 ms, 2000 steps (10 s): us per step (collision
 *     included in both), the top box's drift, the deepest penetration, the
 *     energy change;
 *   - a box sliding at 1 m/s with mu 0.3: stopping-distance error against
 *     v0^2 / (2 mu g);
 *   - warm against cold Lemke starts on the resting stacks: pivots per step;
 *   - complan's velocity stepper on the same stacks;
 *   - where a complan step's time goes, phase by phase (cp_world_profile).
 * Times are thread CPU time: for the resting stacks the best of REPS (7)
 * rounds in which the four engines take turns, elsewhere the best of three
 * identical runs (the runs are
 * deterministic, so only the time differs; the machine is shared).
 * ODE: contact joints from dCollide (up to 8 points a pair), mu as in the
 * scene, friction pyramid approximation (dContactApprox1), default ERP/CFM.
 * Usage: bench_sim [steps] (default 2000). Prints Markdown. */
#include <math.h>
#include <ode/ode.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/scene.h"
#include "planner/sim/world.h"
#include "experiments/bench_stack.h"
#include "experiments/bench_util.h"

/* OpenBLAS (cblas.h clashes with ODE's headers: complex.h's I). */
void openblas_set_num_threads(int n);

#define SX BENCH_STACK_SX
#define SY BENCH_STACK_SY
#define SZ BENCH_STACK_SZ
#define DT 5e-3
#define G 9.81

typedef struct res {
  double us, drift, pen, de, stop_err, pivots;
  long fallbacks;
} res;

/* ---- complan ------------------------------------------------------- */

/* check: the per-step check (planner/sim/stepcheck.h), on by default. */
static res run_complan_check(int n, double mu, double v0, int steps, int warm,
                             cp_stepper stepper, int check) {
  res r = {0};
  cp_world_options o = cp_world_defaults();
  o.dt = DT;
  o.warm_start = warm;
  o.stepper = stepper;
  o.check = check;
  cp_world *w = bench_stack_world(n, mu, v0, &o, "bench_sim");
  int ns = cp_world_state_size(w), top = 13 * (n - 1);
  double *x0 = malloc(sizeof(double) * (size_t)ns), *x = malloc(sizeof(double) * (size_t)ns);
  cp_world_get_state(w, x0);
  double e0 = cp_world_energy(w), t0 = bench_now();
  long piv = 0;
  for (int k = 0; k < steps; ++k) {
    cp_step_info info;
    if (cp_world_step(w, &info)) {
      fprintf(stderr, "step %d: %s\n", k, cp_world_message(w));
      exit(1);
    }
    piv += info.pivots;
    r.fallbacks += info.fallback;
    if (info.max_penetration > r.pen) r.pen = info.max_penetration;
  }
  r.us = 1e6 * (bench_now() - t0) / steps;
  cp_world_get_state(w, x);
  r.drift = sqrt(pow(x[top] - x0[top], 2) + pow(x[top + 1] - x0[top + 1], 2) +
                 pow(x[top + 2] - x0[top + 2], 2));
  r.de = cp_world_energy(w) - e0;
  r.pivots = (double)piv / steps;
  if (v0 > 0) r.stop_err = (x[0] - v0 * v0 / (2 * mu * G)) / (v0 * v0 / (2 * mu * G));
  free(x0);
  free(x);
  cp_world_destroy(w);
  return r;
}

static res run_complan(int n, double mu, double v0, int steps, int warm,
                       cp_stepper stepper) {
  return run_complan_check(n, mu, v0, steps, warm, stepper, 1);
}

/* Phase timings (cp_world_profile) summed over a resting stack's steps,
 * acceleration stepper, warm, check on: into ph[0..6] (collide, constraints,
 * assembly, solve, check, integrate, total), seconds. */
static void run_phases(int n, int steps, double ph[7]) {
  cp_world_options o = cp_world_defaults();
  o.dt = DT;
  o.profile = 1;
  cp_world *w = bench_stack_world(n, 0.5, 0, &o, "bench_sim");
  for (int i = 0; i < 7; ++i) ph[i] = 0;
  for (int k = 0; k < steps; ++k) {
    if (cp_world_step(w, NULL)) {
      fprintf(stderr, "step %d: %s\n", k, cp_world_message(w));
      exit(1);
    }
    const cp_step_profile p = cp_world_profile(w);
    const double v[7] = {p.collide, p.constraints, p.assembly, p.solve,
                         p.check, p.integrate, p.total};
    for (int i = 0; i < 7; ++i) ph[i] += v[i];
  }
  cp_world_destroy(w);
}

/* Rounds of the resting-stack comparison (each engine's best time). */
#define REPS 7

/* The best time of three runs of the same deterministic configuration. */
static res best_complan(int n, double mu, double v0, int steps, int warm,
                        cp_stepper stepper) {
  res r = run_complan(n, mu, v0, steps, warm, stepper);
  for (int i = 0; i < 2; ++i) {
    res t = run_complan(n, mu, v0, steps, warm, stepper);
    if (t.us < r.us) r.us = t.us;
  }
  return r;
}

/* ---- ODE ----------------------------------------------------------- */

typedef struct ode_ctx {
  dWorldID world;
  dJointGroupID group;
  double mu, pen;
} ode_ctx;

static void near_cb(void *data, dGeomID a, dGeomID b) {
  ode_ctx *c = data;
  dContact ct[8];
  memset(ct, 0, sizeof ct);
  int k = dCollide(a, b, 8, &ct[0].geom, sizeof ct[0]);
  for (int i = 0; i < k; ++i) {
    ct[i].surface.mode = dContactApprox1;
    ct[i].surface.mu = c->mu;
    if (ct[i].geom.depth > c->pen) c->pen = ct[i].geom.depth;
    dJointID j = dJointCreateContact(c->world, c->group, &ct[i]);
    dJointAttach(j, dGeomGetBody(a), dGeomGetBody(b));
  }
}

static double ode_energy(dBodyID *b, int n) {
  double e = 0;
  for (int i = 0; i < n; ++i) {
    const dReal *v = dBodyGetLinearVel(b[i]), *w = dBodyGetAngularVel(b[i]),
                *p = dBodyGetPosition(b[i]);
    dMass m;
    dBodyGetMass(b[i], &m);
    /* world inertia R I R^T */
    const dReal *R = dBodyGetRotation(b[i]);
    double Iw[3] = {0, 0, 0};
    for (int r = 0; r < 3; ++r) {
      double lw = 0; /* (R^T w)_r */
      for (int s = 0; s < 3; ++s) lw += R[4 * s + r] * w[s];
      Iw[r] = m.I[4 * r + r] * lw;
      e += 0.5 * lw * Iw[r];
    }
    e += 0.5 * m.mass * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + m.mass * G * p[2];
  }
  return e;
}

static res run_ode(int n, double mu, double v0, int steps, int quick) {
  res r = {0};
  ode_ctx c = {dWorldCreate(), dJointGroupCreate(0), mu, 0};
  dWorldSetGravity(c.world, 0, 0, -G);
  if (quick) dWorldSetQuickStepNumIterations(c.world, 20);
  dSpaceID space = dSimpleSpaceCreate(0);
  dCreatePlane(space, 0, 0, 1, 0);
  dBodyID *b = malloc(sizeof *b * (size_t)n);
  for (int i = 0; i < n; ++i) {
    b[i] = dBodyCreate(c.world);
    dMass m;
    dMassSetBoxTotal(&m, 1.0, SX, SY, SZ);
    dBodySetMass(b[i], &m);
    dBodySetPosition(b[i], 0, 0, SZ / 2 + SZ * i);
    dBodySetLinearVel(b[i], v0, 0, 0);
    dGeomID g = dCreateBox(space, SX, SY, SZ);
    dGeomSetBody(g, b[i]);
  }
  const dReal *p = dBodyGetPosition(b[n - 1]);
  double x0[3] = {p[0], p[1], p[2]}, e0 = ode_energy(b, n), t0 = bench_now();
  for (int k = 0; k < steps; ++k) {
    dSpaceCollide(space, &c, near_cb);
    if (quick) dWorldQuickStep(c.world, DT);
    else dWorldStep(c.world, DT);
    dJointGroupEmpty(c.group);
  }
  r.us = 1e6 * (bench_now() - t0) / steps;
  p = dBodyGetPosition(b[n - 1]);
  r.drift = sqrt(pow(p[0] - x0[0], 2) + pow(p[1] - x0[1], 2) + pow(p[2] - x0[2], 2));
  r.pen = c.pen;
  r.de = ode_energy(b, n) - e0;
  if (v0 > 0) {
    p = dBodyGetPosition(b[0]);
    r.stop_err = (p[0] - v0 * v0 / (2 * mu * G)) / (v0 * v0 / (2 * mu * G));
  }
  free(b);
  dSpaceDestroy(space);
  dJointGroupDestroy(c.group);
  dWorldDestroy(c.world);
  return r;
}

static res best_ode(int n, double mu, double v0, int steps, int quick) {
  res r = run_ode(n, mu, v0, steps, quick);
  for (int i = 0; i < 2; ++i) {
    res t = run_ode(n, mu, v0, steps, quick);
    if (t.us < r.us) r.us = t.us;
  }
  return r;
}

int main(int argc, char **argv) {
  int steps = (int)bench_positive_arg(argc, argv, 1, 2000, "bench_sim [STEPS]  (default 2000)");
  openblas_set_num_threads(1); /* as complan runs it */
  dInitODE2(0);
  static const int sizes[] = {1, 3, 5, 10};
  printf("## Resting stacks (dt = %g s, %d steps = %g s)\n\n", DT, steps, DT * steps);
  printf("| boxes | engine | us/step | top drift (m) | max penetration (m) | "
         "energy change (J) | pivots/step | fallbacks | time vs dWorldStep |\n");
  printf("|---|---|---|---|---|---|---|---|---|\n");
  for (int s = 0; s < 4; ++s) {
    int n = sizes[s];
    /* The four engines in turn, REPS rounds, the best time of each: the
     * machine's speed drifts during a run (ODE's 1-box step measured 2.5
     * us in one run and 3.6 in the next with three runs each, one engine
     * after the other), and taking turns exposes both to the same drift. */
    res ode = run_ode(n, 0.5, 0, steps, 0), odq = run_ode(n, 0.5, 0, steps, 1);
    res cw = run_complan(n, 0.5, 0, steps, 1, CP_STEPPER_ACCELERATION);
    res cv = run_complan(n, 0.5, 0, steps, 1, CP_STEPPER_VELOCITY);
    for (int r = 1; r < REPS; ++r) {
      res t = run_ode(n, 0.5, 0, steps, 0);
      ode.us = fmin(ode.us, t.us);
      t = run_complan(n, 0.5, 0, steps, 1, CP_STEPPER_ACCELERATION);
      cw.us = fmin(cw.us, t.us);
      t = run_ode(n, 0.5, 0, steps, 1);
      odq.us = fmin(odq.us, t.us);
      t = run_complan(n, 0.5, 0, steps, 1, CP_STEPPER_VELOCITY);
      cv.us = fmin(cv.us, t.us);
    }
    printf("| %d | complan (acceleration, warm) | %.1f | %.2g | %.2g | %.2g | %.2f | %ld | %.2f |\n",
           n, cw.us, cw.drift, cw.pen, cw.de, cw.pivots, cw.fallbacks, cw.us / ode.us);
    printf("| %d | complan (velocity, warm) | %.1f | %.2g | %.2g | %.2g | %.2f | | %.2f |\n",
           n, cv.us, cv.drift, cv.pen, cv.de, cv.pivots, cv.us / ode.us);
    printf("| %d | ODE dWorldStep | %.1f | %.2g | %.2g | %.2g | | | 1 |\n", n, ode.us,
           ode.drift, ode.pen, ode.de);
    printf("| %d | ODE dWorldQuickStep (20 it.) | %.1f | %.2g | %.2g | %.2g | | | %.2f |\n", n,
           odq.us, odq.drift, odq.pen, odq.de, odq.us / ode.us);
    fflush(stdout);
  }
  printf("\n## Warm against cold Lemke starts (resting stacks, %d steps)\n\n", steps);
  printf("| boxes | pivots/step warm | pivots/step cold | cold/warm | us/step warm | us/step cold |\n");
  printf("|---|---|---|---|---|---|\n");
  for (int s = 1; s < 4; ++s) {
    int n = sizes[s];
    res w = best_complan(n, 0.5, 0, steps, 1, CP_STEPPER_ACCELERATION),
        c = best_complan(n, 0.5, 0, steps, 0, CP_STEPPER_ACCELERATION);
    printf("| %d | %.2f | %.2f | %.1f | %.1f | %.1f |\n", n, w.pivots, c.pivots,
           w.pivots > 0 ? c.pivots / w.pivots : INFINITY, w.us, c.us);
    fflush(stdout);
  }
  printf("\n## The per-step check's cost (resting stacks, warm, %d steps; "
         "turns over %d rounds, best of each)\n\n", steps, REPS);
  printf("| boxes | stepper | us/step checked | us/step unchecked | check (us/step) | "
         "check (%% of the step) |\n|---|---|---|---|---|---|\n");
  for (int s = 0; s < 4; ++s)
    for (int v = 0; v < 2; ++v) {
      int n = sizes[s];
      cp_stepper st = v ? CP_STEPPER_VELOCITY : CP_STEPPER_ACCELERATION;
      double on = INFINITY, off = INFINITY;
      for (int rep = 0; rep < REPS; ++rep) {
        res a = run_complan_check(n, 0.5, 0, steps, 1, st, 1),
            b = run_complan_check(n, 0.5, 0, steps, 1, st, 0);
        if (a.us < on) on = a.us;
        if (b.us < off) off = b.us;
      }
      printf("| %d | %s | %.2f | %.2f | %.2f | %.1f |\n", n, cp_stepper_name(st), on,
             off, on - off, 100 * (on - off) / on);
      fflush(stdout);
    }
  printf("\n## Where a step's time goes (resting stacks, acceleration, warm, "
         "%d steps; cp_world_profile, %% of the step)\n\n", steps);
  printf("| boxes | us/step | collide | constraints | assembly | solve | check | "
         "integrate | other |\n|---|---|---|---|---|---|---|---|---|\n");
  for (int s = 0; s < 4; ++s) {
    double ph[7];
    run_phases(sizes[s], steps, ph);
    double rest = ph[6];
    printf("| %d | %.2f |", sizes[s], 1e6 * ph[6] / steps);
    for (int i = 0; i < 6; ++i) {
      printf(" %.1f |", 100 * ph[i] / ph[6]);
      rest -= ph[i];
    }
    printf(" %.1f |\n", 100 * rest / ph[6]);
    fflush(stdout);
  }
  printf("\n## Sliding box (v0 = 1 m/s, mu = 0.3, dt = %g s, 1 s)\n\n", DT);
  printf("| engine | us/step | stopping distance error (relative) |\n|---|---|---|\n");
  res cs = best_complan(1, 0.3, 1.0, 200, 1, CP_STEPPER_ACCELERATION),
      os = best_ode(1, 0.3, 1.0, 200, 0),
      oq = best_ode(1, 0.3, 1.0, 200, 1);
  printf("| complan (acceleration) | %.1f | %+.2g |\n", cs.us, cs.stop_err);
  printf("| ODE dWorldStep | %.1f | %+.2g |\n", os.us, os.stop_err);
  printf("| ODE dWorldQuickStep | %.1f | %+.2g |\n", oq.us, oq.stop_err);
  dCloseODE();
  return 0;
}
