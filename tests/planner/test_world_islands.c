// Islands (planner/sim/islands.c, docs/simulate.md "Islands"): a step's
// friction LCP split into independent groups of touching bodies, each
// solved as if it were alone in the scene.
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/sim/world.h"
#include "wtest.h"

// A table and stacks: stack s (s < nstacks) of `boxes[s]` boxes of 0.2 x
// 0.2 x 0.1 m and 1 kg at x = 2 s, all sliding along x at v[s], friction
// 0.5 (the boxes stop sliding on the table within the run: the friction
// problem changes its basis). Box i of stack s is named "s<s>b<i>".
static char *stacks_text(int nstacks, const int *boxes, const double *v) {
  size_t cap = 4096;
  char *t = malloc(cap), box[512];
  cr_assert(t);
  int k = snprintf(t, cap, "{\"friction\": {\"default\": 0.5}, \"bodies\": [{\"name\": "
                           "\"table\", \"fixed\": true, \"shape\": {\"type\": \"plane\", "
                           "\"normal\": [0, 0, 1], \"offset\": 0}}");
  for (int s = 0; s < nstacks; ++s)
    for (int i = 0; i < boxes[s]; ++i) {
      char name[32];
      snprintf(name, sizeof name, "s%db%d", s, i);
      wt_box(box, sizeof box, name, 1, 0.2, 0.2, 0.1, 2.0 * s, 0, 0.05 + 0.1 * i, v[s]);
      k += snprintf(t + k, cap - (size_t)k, ", %s", box);
    }
  snprintf(t + k, cap - (size_t)k, "]}");
  return t;
}

// Each stack of a two-stack scene moves as the same stack alone, its
// friction LCP solved as a group of its own in every step. Not bit for bit:
// the warm start's tolerances scale with the whole problem's numbers and the
// hold depth with the scene's weight (steppers.c), so rounding differs; the
// twins stay within the hold depth (1e-8 m; measured 8e-11 m acceleration,
// 1.1e-9 m velocity stepper, as the unsplit solve's 1.2e-10 and 1.1e-9).
static void alone_equal(cp_stepper stepper) {
  const int boxes[2] = {3, 2};
  const double v[2] = {0.3, -0.5};
  char *both = stacks_text(2, boxes, v), *one = stacks_text(1, boxes, v);
  cp_world *w2 = wt_world(both, stepper, 5e-3), *w1 = wt_world(one, stepper, 5e-3);
  free(both);
  free(one);
  const int n2 = cp_world_state_size(w2), n1 = cp_world_state_size(w1);
  cr_assert_eq(n1, 13 * 3);
  cr_assert_eq(n2, 13 * 5);
  double x1[13 * 3], x2[13 * 5], worst = 0;
  long piv = 0;
  for (int step = 0; step < 100; ++step) {
    cp_step_info i1, i2;
    cr_assert_eq(cp_world_step(w1, &i1), CP_WORLD_OK, "%s", cp_world_message(w1));
    cr_assert_eq(cp_world_step(w2, &i2), CP_WORLD_OK, "%s", cp_world_message(w2));
    cr_assert_eq(i1.islands, 0, "step %d: one stack is one group", step);
    cr_assert_eq(i2.islands, 2, "step %d: two stacks are two groups", step);
    piv += i2.pivots;
    cp_world_get_state(w1, x1);
    cp_world_get_state(w2, x2);
    for (int b = 0; b < 3; ++b) // positions of the first stack's boxes
      for (int d = 0; d < 3; ++d) worst = fmax(worst, fabs(x1[13 * b + d] - x2[13 * b + d]));
  }
  cr_assert_lt(worst, 1e-8, "the first stack moved %g m away from its lone twin", worst);
  cr_assert_gt(piv, 0); // the friction problems changed their bases
  // The stacks came to rest on the table, sliding no more: the bottom
  // box's x stopped at v^2 / (2 mu g) within the first order of the step.
  const double g = 9.81, mu = 0.5;
  for (int s = 0; s < 2; ++s) {
    char name[32];
    snprintf(name, sizeof name, "s%db0", s);
    const int i = wt_body(w2, name);
    cr_assert_lt(fabs(x2[i + 7]) + fabs(x2[i + 8]) + fabs(x2[i + 9]), 1e-9, "%s still moves", name);
    const double d = v[s] * v[s] / (2 * mu * g), moved = fabs(x2[i] - 2.0 * s);
    cr_assert_lt(fabs(moved - d), 0.02 * d + 5e-3 * fabs(v[s]), "%s slid %g m, not %g", name,
                 moved, d);
  }
  cp_world_destroy(w1);
  cp_world_destroy(w2);
}

Test(world_islands, stacks_alone_acceleration) { alone_equal(CP_STEPPER_ACCELERATION); }
Test(world_islands, stacks_alone_velocity) { alone_equal(CP_STEPPER_VELOCITY); }
