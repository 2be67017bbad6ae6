// The simulator at scale (issue 26): islands (planner/sim/islands.c,
// docs/simulate.md "Islands": a step's friction LCP split into independent
// groups of touching bodies, each solved as if alone in the scene) and the
// band factorisation of a tall stack's warm basis (planner/sim/sparse.c).
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/bench_stack.h"
#include "models/bigbuf.h"
#include "planner/sim/world.h"
#include "planner/sim/world_impl.h"
#include "wtest.h"

// A table and stacks: stack s (s < nstacks) of `boxes[s]` boxes of 0.2 x
// 0.2 x 0.1 m and 1 kg at x = 2 s, all sliding along x at v[s], friction
// 0.5 (the boxes stop sliding on the table within the run: the friction
// problem changes its basis). Box i of stack s is named "s<s>b<i>".
static char *stacks_text_at(int nstacks, const int *boxes, const double *v, double lift) {
  size_t cap = 4096;
  for (int s = 0; s < nstacks; ++s) cap += 512 * (size_t)boxes[s];
  char *t = malloc(cap), box[512];
  cr_assert(t);
  int k = snprintf(t, cap, "{\"friction\": {\"default\": 0.5}, \"bodies\": [{\"name\": "
                           "\"table\", \"fixed\": true, \"shape\": {\"type\": \"plane\", "
                           "\"normal\": [0, 0, 1], \"offset\": 0}}");
  for (int s = 0; s < nstacks; ++s)
    for (int i = 0; i < boxes[s]; ++i) {
      char name[32];
      snprintf(name, sizeof name, "s%db%d", s, i);
      wt_box(box, sizeof box, name, 1, 0.2, 0.2, 0.1, 2.0 * s, 0, 0.05 + (0.1 + lift) * i + lift,
             v[s]);
      k += snprintf(t + k, cap - (size_t)k, ", %s", box);
    }
  snprintf(t + k, cap - (size_t)k, "]}");
  return t;
}

static char *stacks_text(int nstacks, const int *boxes, const double *v) {
  return stacks_text_at(nstacks, boxes, v, 0);
}

// Each stack of a two-stack scene moves as the same stack alone, its
// friction LCP solved as a group of its own in every step. Not bit for bit:
// the warm start's tolerances scale with the whole problem's numbers and the
// hold depth with the scene's weight (steppers.c), so rounding differs; the
// twins stay within the hold depth (1e-8 m; measured 8e-11 m acceleration,
// 1.1e-9 m velocity stepper, as the unsplit solve's 1.2e-10 and 1.1e-9).
static void alone_equal_at(cp_stepper stepper, double v0) {
  const int boxes[2] = {3, 2};
  const double v[2] = {v0, -0.5};
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
    cr_assert(!i1.retried && !i2.retried, "v0 %.17g: step %d retried (%d alone, %d twin)", v0,
              step, i1.retried, i2.retried);
    piv += i2.pivots;
    cp_world_get_state(w1, x1);
    cp_world_get_state(w2, x2);
    for (int b = 0; b < 3; ++b) // positions of the first stack's boxes
      for (int d = 0; d < 3; ++d) worst = fmax(worst, fabs(x1[13 * b + d] - x2[13 * b + d]));
  }
  cr_assert_lt(worst, 1e-8, "v0 %.17g: the first stack moved %g m away from its lone twin", v0,
               worst);
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

static void alone_equal(cp_stepper stepper) { alone_equal_at(stepper, 0.3); }

Test(world_scale, stacks_alone_acceleration) { alone_equal(CP_STEPPER_ACCELERATION); }

// Saturated friction: both stacks slide with one mu everywhere, so the
// friction between their boxes that the deceleration needs is exactly
// mu c_n. Cold Lemke answers step 1's friction LCP with a pyramid edge
// impulse of -4.5e-6 (within Lemke's own acceptance, contact/lcp.h), which
// puts |c_tan| above mu c_n by 2e-6 relative, and the step check (1e-7)
// refused it: the step was retried in substeps and the twins parted by
// 4.6e-5 m. Seen with a box's contacts from its pose (models/collide.c) at
// v0 = 0.3 and -1, +1, +2 ulps of it. The friction LCP's answer is now
// cleaned up by principal pivots (planner/sim/lcp.c, friction_cleanup):
// no step retried, the twins within 1e-8 m, at those speeds and near them.
Test(world_scale, stacks_saturated_no_retry) {
  for (int u = -2; u <= 2; ++u) {
    double v0 = 0.3;
    for (int k = 0; k < abs(u); ++k) v0 = nextafter(v0, u > 0 ? 1.0 : 0.0);
    alone_equal_at(CP_STEPPER_ACCELERATION, v0);
  }
  alone_equal_at(CP_STEPPER_ACCELERATION, 0.29);
  alone_equal_at(CP_STEPPER_ACCELERATION, 0.31);
}
Test(world_scale, stacks_alone_velocity) { alone_equal(CP_STEPPER_VELOCITY); }

// A stack of 40 boxes (the bench's scene) rests on warm starts whose basis
// (its 160 normals) is banded and factorised as a band (sparse.c): a solve
// that was off would fail the warm start's row check and send the step to
// Lemke (tens of pivots), so at most one pivot a step on average after the
// first, and the top box stays within 1e-6 m over 1 s, with either stepper.
Test(world_scale, stack40_band_warm) {
  const cp_stepper dyn[2] = {CP_STEPPER_ACCELERATION, CP_STEPPER_VELOCITY};
  for (int s = 0; s < 2; ++s) {
    cp_world_options o = cp_world_defaults();
    o.dt = 5e-3;
    o.stepper = dyn[s];
    cp_world *w = bench_stack_world(40, 0.5, 0, &o, "stack40_band_warm");
    const int n = cp_world_state_size(w), top = 13 * 39, steps = 200;
    cr_assert_eq(n, 13 * 40);
    double *x0 = malloc(sizeof(double) * (size_t)n), *x = malloc(sizeof(double) * (size_t)n);
    cr_assert(x0 && x);
    cp_world_get_state(w, x0);
    long pivots = 0;
    for (int k = 0; k < steps; ++k) {
      cp_step_info si;
      cr_assert_eq(cp_world_step(w, &si), CP_WORLD_OK, "%s: step %d: %s",
                   cp_stepper_name(dyn[s]), k, cp_world_message(w));
      cr_assert_eq(si.islands, 0, "a stack is one group");
      if (k > 0) pivots += si.pivots;
    }
    cp_world_get_state(w, x);
    double d = 0;
    for (int i = 0; i < 3; ++i) d += pow(x[top + i] - x0[top + i], 2);
    cr_assert(pivots <= steps - 1, "%s: %ld pivots in %d warm steps", cp_stepper_name(dyn[s]),
              pivots, steps - 1);
    cr_assert(sqrt(d) <= 1e-6, "%s: the top box moved %g m", cp_stepper_name(dyn[s]), sqrt(d));
    free(x0);
    free(x);
    cp_world_destroy(w);
  }
}

// Two worlds of a stack, the second with a bit-for-bit shortcut turned off
// (enable(w, 0)), stepped alike: every state equal to the last bit and the
// same pivots, step by step; taken(w) counts the shortcut's uses, at least
// min_taken in the first world and none in the second. Returns the pivots.
typedef struct {
  const char *name;
  void (*enable)(cp_world *w, int on);
  long (*taken)(const cp_world *w);
} shortcut;

static long same_bits_worlds(shortcut sc, cp_stepper stepper, cp_world *ws, cp_world *wd,
                             int boxes, int steps, long min_taken) {
  sc.enable(wd, 0);
  const int n = cp_world_state_size(ws);
  double *xs = malloc(sizeof(double) * (size_t)n), *xd = malloc(sizeof(double) * (size_t)n);
  cr_assert(xs && xd);
  long pivots = 0;
  for (int k = 0; k < steps; ++k) {
    cp_step_info is, id;
    cr_assert_eq(cp_world_step(ws, &is), CP_WORLD_OK, "%s", cp_world_message(ws));
    cr_assert_eq(cp_world_step(wd, &id), CP_WORLD_OK, "%s", cp_world_message(wd));
    cr_assert_eq(is.pivots, id.pivots, "%s, %s step %d: %d pivots with it, %d without",
                 sc.name, cp_stepper_name(stepper), k, is.pivots, id.pivots);
    pivots += is.pivots;
    cp_world_get_state(ws, xs);
    cp_world_get_state(wd, xd);
    cr_assert(!memcmp(xs, xd, sizeof(double) * (size_t)n), "%s, %s step %d: the states differ",
              sc.name, cp_stepper_name(stepper), k);
  }
  cr_assert(sc.taken(ws) >= min_taken, "%s, %s, %d boxes: taken %ld times", sc.name,
            cp_stepper_name(stepper), boxes, sc.taken(ws));
  cr_assert_eq(sc.taken(wd), 0);
  free(xs);
  free(xd);
  cp_world_destroy(ws);
  cp_world_destroy(wd);
  return pivots;
}

static long same_bits_vs(shortcut sc, cp_stepper stepper, int boxes, double v0, int steps,
                         long min_taken, int velocity_sliding) {
  cp_world_options o = cp_world_defaults();
  o.dt = 5e-3;
  o.stepper = stepper;
  o.velocity_sliding = velocity_sliding;
  cp_world *ws = bench_stack_world(boxes, 0.5, v0, &o, sc.name),
           *wd = bench_stack_world(boxes, 0.5, v0, &o, sc.name);
  return same_bits_worlds(sc, stepper, ws, wd, boxes, steps, min_taken);
}

static long same_bits(shortcut sc, cp_stepper stepper, int boxes, double v0, int steps,
                      long min_taken) {
  return same_bits_vs(sc, stepper, boxes, v0, steps, min_taken, 1);
}

// The warm basis of a large LCP solved on sparse columns (warmsparse.c)
// gives warm_accept's dense answer bit for bit: two worlds, one with the
// sparse path turned off, step alike (every state equal to the last bit,
// the same pivots) with either stepper, on a resting stack of 40 boxes (n
// = 960 unknowns, the basis banded), of 10 (n = 240, its columns a
// quarter of n and more) and on a stack of 20 boxes launched
// sliding along the table at 0.3 m/s (its friction bases change while it
// stops: the principal pivots are taken on sparse columns too).
static void sparse_same(cp_stepper stepper, int boxes, double v0, int steps) {
  const shortcut sc = {"sparse warm start", cp_wi_sparse_enable, cp_wi_sparse_taken};
  const long pivots = same_bits(sc, stepper, boxes, v0, steps, steps / 2);
  if (v0 > 0) cr_assert_gt(pivots, 0, "the bases never changed");
}

Test(world_scale, sparse_warm_same_bits) {
  sparse_same(CP_STEPPER_ACCELERATION, 40, 0, 60);
  sparse_same(CP_STEPPER_VELOCITY, 40, 0, 60);
  sparse_same(CP_STEPPER_ACCELERATION, 10, 0, 60); // columns of 62 rows of 240
  sparse_same(CP_STEPPER_VELOCITY, 10, 0, 60);
  sparse_same(CP_STEPPER_ACCELERATION, 20, 0.3, 40);
  sparse_same(CP_STEPPER_VELOCITY, 20, 0.3, 40);
}

// The sparse warm start's neighbour lists, kept while the LCP's structure
// (its constraints' parts and which of them roll) stays the same
// (warmsparse.c, same_structure): with the memo on and off the same states
// and pivots, step by step, with both steppers, at rest (10 and 40 boxes:
// the lists kept on nearly every step) and on a 20-box stack sliding to
// rest (contacts change from sliding to rolling: the structure changes).
// The velocity stepper's slide runs with every contact in the pyramid
// (velocity_sliding 0), where its sliding contacts take the sparse path and
// the lists are kept once the stack has stopped; with the default sliding
// substitution the same slide keeps no lists (the memo is not hit within
// its 40 steps), so there only the bits are compared.
static void lists_same(cp_stepper stepper, int boxes, double v0, int steps, long min_hits) {
  const shortcut sc = {"sparse lists memo", cp_wi_sparse_memo_enable, cp_wi_sparse_memo_hits};
  const int velocity_slide = stepper == CP_STEPPER_VELOCITY && v0 > 0;
  same_bits_vs(sc, stepper, boxes, v0, steps, min_hits, !velocity_slide);
  if (velocity_slide) same_bits(sc, stepper, boxes, v0, steps, 0);
}

Test(world_scale, sparse_lists_memo_same_bits) {
  lists_same(CP_STEPPER_ACCELERATION, 10, 0, 60, 50);
  lists_same(CP_STEPPER_VELOCITY, 10, 0, 60, 50);
  lists_same(CP_STEPPER_ACCELERATION, 40, 0, 30, 25);
  lists_same(CP_STEPPER_VELOCITY, 40, 0, 30, 25);
  lists_same(CP_STEPPER_ACCELERATION, 20, 0.3, 40, 1);
  lists_same(CP_STEPPER_VELOCITY, 20, 0.3, 40, 1);
}

// Two resting stacks of 8 boxes (two groups, each an LCP of n = 192 on
// sparse columns, solved in turn): the second stack's boxes are listed top
// first, so its constraints come in another order (the table's first, then
// the top pair's) and its neighbour lists differ from the first stack's
// with the same n and number of constraints. The lists must not be kept
// from one group for the other: with the memo on and off the same states
// and pivots step by step (keeping them when only n and the number of
// constraints match fails this).
static char *two_stacks_reversed(void) {
  char *t = malloc(16384), box[512];
  cr_assert(t);
  int k = snprintf(t, 16384, "{\"friction\": {\"default\": 0.5}, \"bodies\": [{\"name\": "
                             "\"table\", \"fixed\": true, \"shape\": {\"type\": \"plane\", "
                             "\"normal\": [0, 0, 1], \"offset\": 0}}");
  for (int s = 0; s < 2; ++s)
    for (int j = 0; j < 8; ++j) {
      const int i = s == 0 ? j : 7 - j; // the second stack from its top
      char name[32];
      snprintf(name, sizeof name, "s%db%d", s, i);
      wt_box(box, sizeof box, name, 1, 0.2, 0.2, 0.1, 2.0 * s, 0, 0.05 + 0.1 * i, 0);
      k += snprintf(t + k, 16384 - (size_t)k, ", %s", box);
    }
  snprintf(t + k, 16384 - (size_t)k, "]}");
  return t;
}

Test(world_scale, sparse_lists_memo_two_groups) {
  const shortcut sc = {"sparse lists memo", cp_wi_sparse_memo_enable, cp_wi_sparse_memo_hits};
  const cp_stepper dyn[2] = {CP_STEPPER_ACCELERATION, CP_STEPPER_VELOCITY};
  char *text = two_stacks_reversed();
  for (int s = 0; s < 2; ++s) {
    cp_world *ws = wt_world(text, dyn[s], 5e-3), *wd = wt_world(text, dyn[s], 5e-3);
    sc.enable(wd, 0);
    cp_step_info si;
    cr_assert_eq(cp_world_step(ws, &si), CP_WORLD_OK, "%s", cp_world_message(ws));
    cr_assert_eq(si.islands, 2, "two stacks are two groups");
    cr_assert_eq(cp_wi_sparse_taken(ws), 2, "each group's LCP on sparse columns");
    cr_assert_eq(cp_world_step(wd, &si), CP_WORLD_OK, "%s", cp_world_message(wd));
    same_bits_worlds(sc, dyn[s], ws, wd, 16, 40, 0);
  }
  free(text);
}

// The warm basis's LU, remembered (lcp.c, lu_factor_memo): a resting 3-box
// stack's basic block comes out bit for bit the same on most steps and its
// factor is copied back instead of computed. With the memo on and off the
// same states and pivots, step by step, with both steppers: at rest (3 and
// 5 boxes, k = 12 and 20) and sliding to rest (the bases change, the memo
// misses and is refilled).
static void memo_same(cp_stepper stepper, int boxes, double v0, int steps, long min_hits) {
  const shortcut sc = {"LU memo", cp_wi_lu_memo_enable, cp_wi_lu_memo_hits};
  same_bits(sc, stepper, boxes, v0, steps, min_hits);
}

Test(world_scale, lu_memo_same_bits) {
  memo_same(CP_STEPPER_ACCELERATION, 3, 0, 100, 50);
  memo_same(CP_STEPPER_VELOCITY, 3, 0, 100, 50);
  memo_same(CP_STEPPER_ACCELERATION, 5, 0, 60, 1);
  memo_same(CP_STEPPER_VELOCITY, 5, 0, 60, 1);
  memo_same(CP_STEPPER_ACCELERATION, 3, 0.3, 60, 0);
  memo_same(CP_STEPPER_VELOCITY, 3, 0.3, 60, 0);
}

// The acceleration stepper's impact LCP (boxes landing) is split into
// groups too, each solved cold (steppers.c, islands.c): two stacks dropped
// with 2 mm gaps under each box land with impacts in several steps; the
// two-stack world's impact problems are solved split (the lone stack's
// never: one group), no step is retried, the first stack lands as its lone
// twin does (within the hold depth, as above) and both come to rest.
Test(world_scale, impacts_split) {
  const int boxes[2] = {3, 2};
  const double v[2] = {0, 0};
  char *both = stacks_text_at(2, boxes, v, 2e-3), *one = stacks_text_at(1, boxes, v, 2e-3);
  cp_world *w2 = wt_world(both, CP_STEPPER_ACCELERATION, 5e-3),
           *w1 = wt_world(one, CP_STEPPER_ACCELERATION, 5e-3);
  free(both);
  free(one);
  double x1[13 * 3], x2[13 * 5], worst = 0;
  int impact_steps = 0;
  for (int step = 0; step < 100; ++step) {
    cp_step_info i1, i2;
    cr_assert_eq(cp_world_step(w1, &i1), CP_WORLD_OK, "%s", cp_world_message(w1));
    cr_assert_eq(cp_world_step(w2, &i2), CP_WORLD_OK, "%s", cp_world_message(w2));
    cr_assert(!i1.retried && !i2.retried, "step %d retried (%d alone, %d twin)", step,
              i1.retried, i2.retried);
    impact_steps += i2.impacts > 0;
    cp_world_get_state(w1, x1);
    cp_world_get_state(w2, x2);
    for (int b = 0; b < 3; ++b)
      for (int d = 0; d < 3; ++d) worst = fmax(worst, fabs(x1[13 * b + d] - x2[13 * b + d]));
  }
  cr_assert_geq(impact_steps, 2, "only %d steps with impacts", impact_steps);
  cr_assert_geq(cp_wi_islands_cold_taken(w2), 1, "no impact LCP was split");
  cr_assert_eq(cp_wi_islands_cold_taken(w1), 0, "a lone stack's impact LCP was split");
  cr_assert_lt(worst, 1e-8, "the first stack moved %g m away from its lone twin", worst);
  for (int b = 0; b < 5; ++b) { // at rest, each box on the one below
    const double *xb = x2 + 13 * b;
    cr_assert_lt(fabs(xb[7]) + fabs(xb[8]) + fabs(xb[9]), 1e-6, "box %d still moves", b);
    const int level = b < 3 ? b : b - 3;
    cr_assert_lt(fabs(xb[2] - (0.05 + 0.1 * level)), 1e-6, "box %d at z = %.9g", b, xb[2]);
  }
  cp_world_destroy(w1);
  cp_world_destroy(w2);
}

// A world's first step with contacts has no warm records: its basis is then
// every normal force (planner/sim/warm.c), which a resting stack's LCP
// takes as it is. So the first step of a stack of 5 or 40 boxes is warm
// started without a pivot, with either stepper, and lands where the same
// first step solved cold (warm starts off: 58-161 Lemke pivots) lands:
// within 4e-14 m with the acceleration stepper, 1.5e-10 m with the velocity
// one (Lemke's answer is held to 1e-6 of each row's scale, the warm LU's
// is refined), so 1e-9 m.
Test(world_scale, first_step_warm) {
  const cp_stepper dyn[2] = {CP_STEPPER_ACCELERATION, CP_STEPPER_VELOCITY};
  const int sizes[2] = {5, 40};
  for (int s = 0; s < 2; ++s)
    for (int z = 0; z < 2; ++z) {
      cp_world_options o = cp_world_defaults();
      o.dt = 5e-3;
      o.stepper = dyn[s];
      cp_world *w = bench_stack_world(sizes[z], 0.5, 0, &o, "first_step_warm");
      o.warm_start = 0;
      cp_world *c = bench_stack_world(sizes[z], 0.5, 0, &o, "first_step_warm");
      cp_step_info iw, ic;
      cr_assert_eq(cp_world_step(w, &iw), CP_WORLD_OK, "%s", cp_world_message(w));
      cr_assert_eq(cp_world_step(c, &ic), CP_WORLD_OK, "%s", cp_world_message(c));
      cr_assert_eq(iw.warm_started, 1, "%s, %d boxes: not warm", cp_stepper_name(dyn[s]),
                   sizes[z]);
      cr_assert_eq(iw.pivots, 0, "%s, %d boxes: %d pivots", cp_stepper_name(dyn[s]), sizes[z],
                   iw.pivots);
      cr_assert_gt(ic.pivots, 0, "the cold step pivots");
      const int n = cp_world_state_size(w);
      double *xw = malloc(sizeof(double) * (size_t)n), *xc = malloc(sizeof(double) * (size_t)n);
      cr_assert(xw && xc);
      cp_world_get_state(w, xw);
      cp_world_get_state(c, xc);
      double d = 0;
      for (int i = 0; i < n; ++i) d = fmax(d, fabs(xw[i] - xc[i]));
      cr_assert(d <= 1e-9, "%s, %d boxes: warm and cold first steps differ by %g",
                cp_stepper_name(dyn[s]), sizes[z], d);
      free(xw);
      free(xc);
      cp_world_destroy(w);
      cp_world_destroy(c);
    }
}

// A step that crossed a joint limit outside the window is taken again with
// every limit a row of its LCPs (world.c, limits_redone): on the Allegro
// hand (16 joints, 32 limit sides) over its cube, the acceleration
// stepper's 36th step. Its acceleration LCP has one unknown per limit side
// and at most six per contact, and the world's LCP workspaces (M, the warm
// LU, M_B, Lemke's square blocks) are sized to that problem (twice it, the
// growth rule of cp_wi_ensure). They used to be sized to the bound of six
// unknowns per constraint, 432^2 doubles for a problem of 56: six buffers
// of 1.5 MB on huge pages, whose first touch is most of that step's time
// (experiments/results/mujoco.md, session 23).
Test(world_scale, all_limits_step_small_workspace) {
  const char *data = getenv("CP_TEST_DATA");
  cr_assert(data, "run with meson test");
  char path[1024];
  snprintf(path, sizeof path, "%s/robots/allegro_cube.json", data);
  cp_scene sc;
  cp_error err;
  cp_error_clear(&err);
  cr_assert_eq(cp_scene_load(path, NULL, &sc, &err), 0, "%s: %s", path, err.msg);
  int sides = 0;
  for (int m = 0; m < sc.n_manips; ++m)
    for (int j = 0; j < sc.manips[m].n; ++j) sides += 2 * (sc.manips[m].joints[j].has_limits != 0);
  cr_assert_eq(sides, 32);
  cp_world_options o = cp_world_defaults();
  o.dt = 5e-3;
  o.stepper = CP_STEPPER_ACCELERATION;
  cp_world *w;
  cr_assert_eq(cp_world_create(&sc, &o, &w, &err), CP_WORLD_OK, "%s", err.msg);
  cp_scene_free(&sc);
  int redone = -1;
  cp_step_info info;
  for (int k = 0; k < 60 && redone < 0; ++k) {
    cr_assert_eq(cp_world_step(w, &info), CP_WORLD_OK, "%s", cp_world_message(w));
    if (info.limits_redone) redone = k;
  }
  cr_assert_eq(redone, 35, "the limits were taken again at step %d", redone);
  cr_assert_eq(info.fallback, 0);
  const int bound = sides + 6 * info.contacts;
  cr_assert(w->lcp_cap <= 2 * bound, "LCP workspaces of %d for a problem of at most %d",
            w->lcp_cap, bound);
  cr_assert(!cp_bigbuf_huge(w->M) && !cp_bigbuf_huge(w->LU) && !cp_bigbuf_huge(w->MB));
  cp_world_destroy(w);
}

// lcp.c's lcp_column (every column of M through cp_wi_lcp_fill) sums a
// column's normal and first tangential entries as the two lanes of one
// vector and writes a rolling constraint's corner rows as two pairs. It must
// give the scalar formula's bits (world_impl.h's cp_wi_colsrc_at, the
// corner rows a + b, a + -b, -a + b, -a + -b, the lambda rows and the
// compliance), formed here independently. A 5-box stack after one step
// supplies the constraints; its Asel is then replaced by random entries of
// every sign and size, exact zeros of both signs and infinities among them
// (the not-a-numbers these make are compared as such, not by their bits),
// and its contacts' friction by random mu, some sliding (d of either sign),
// some frictionless: 50 draws, every column compared to the last bit.
static void scalar_column(const cp_world *w, int col, double *out) {
  const int ns = w->lns, nr = w->lnr, nb = ns + 4 * nr, n = nb + nr;
  for (int i = 0; i < n; ++i) out[i] = 0;
  if (col >= nb) {
    for (int e = 0; e < 4; ++e) out[ns + 4 * (col - nb) + e] = 1.0;
    return;
  }
  cp_wi_colsrc src;
  cp_wi_colsrc_init(w, col, &src);
  for (int k = 0; k < ns; ++k) {
    double cn, a, b;
    cp_wi_colsrc_at(&src, k, &cn, &a, &b);
    out[k] = cn;
    if (w->rank[k] < 0) continue;
    double *rows = out + ns + 4 * w->rank[k];
    rows[0] = a + b;
    rows[1] = a + -b;
    rows[2] = -a + b;
    rows[3] = -a + -b;
  }
  if (col < ns) {
    if (w->rank[col] >= 0) out[nb + w->rank[col]] = w->pc[col].mu;
  } else {
    out[nb + w->rank[src.k0]] = -1.0;
  }
  double add[4];
  const int comp = cp_wi_colsrc_comp(w, col, &src, add);
  if (comp == 1) out[col] += add[0];
  for (int e = 0; comp == 4 && e < 4; ++e) out[ns + 4 * w->rank[src.k0] + e] += add[e];
}

static double odd_double(unsigned *seed) {
  const int r = rand_r(seed) % 16;
  const double u = (double)rand_r(seed) / RAND_MAX - 0.5;
  switch (r) {
  case 0: return 0.0;
  case 1: return -0.0;
  case 2: return INFINITY;
  case 3: return -INFINITY;
  case 4: return u * 1e-300;
  case 5: return u * 1e300;
  default: return u * pow(10.0, rand_r(seed) % 9 - 4);
  }
}

Test(world_scale, lcp_columns_same_bits) {
  cp_world_options o = cp_world_defaults();
  o.dt = 5e-3;
  cp_world *w = bench_stack_world(5, 0.5, 0, &o, "columns");
  cp_step_info si;
  cr_assert_eq(cp_world_step(w, &si), CP_WORLD_OK, "%s", cp_world_message(w));
  const int ns = w->lns;
  cr_assert_eq(ns, 20, "a 5-box stack's 20 contacts");
  const size_t m3 = 3 * (size_t)ns;
  double *A = malloc(sizeof(double) * m3 * m3), *ref = malloc(sizeof(double) * 5 * (size_t)ns);
  cr_assert(A && ref);
  const double *Asel0 = w->Asel;
  unsigned seed = 7;
  long sliding = 0, rolling = 0, zeros = 0;
  for (int draw = 0; draw < 50; ++draw) {
    for (size_t i = 0; i < m3 * m3; ++i) A[i] = odd_double(&seed);
    w->Asel = A;
    for (int k = 0; k < ns; ++k) {
      cp_pyramid_contact *p = &w->pc[k];
      const int r = rand_r(&seed) % 4;
      p->mu = r == 0 ? 0 : 0.1 + (double)rand_r(&seed) / RAND_MAX;
      p->sliding = r == 0 || r == 1;
      p->d[0] = p->sliding && p->mu > 0 ? odd_double(&seed) : 0;
      p->d[1] = p->sliding && p->mu > 0 ? odd_double(&seed) : 0;
    }
    const int m = cp_wi_lcp_setup(w, ns);
    cr_assert_eq(m, ns + 5 * w->lnr);
    sliding += ns - w->lnr;
    rolling += w->lnr;
    cp_wi_lcp_fill(w, m);
    for (int col = 0; col < m; ++col) {
      scalar_column(w, col, ref);
      const double *got = w->M + (size_t)col * (size_t)m;
      for (int i = 0; i < m; ++i) {
        zeros += ref[i] == 0 && signbit(ref[i]);
        // (A NaN's sign is not kept by the compiler: -a + -b may be
        // formed as -(a + b). Any NaN then matches any NaN.)
        cr_assert(isnan(got[i]) ? isnan(ref[i]) : !memcmp(&got[i], &ref[i], sizeof(double)),
                  "draw %d, column %d, row %d: %.17g, the scalar formula %.17g", draw, col, i,
                  got[i], ref[i]);
      }
    }
  }
  cr_assert_gt(sliding, 0);
  cr_assert_gt(rolling, 0);
  cr_assert_gt(zeros, 0, "no -0 entry was compared");
  w->Asel = Asel0;
  free(A);
  free(ref);
  cp_world_destroy(w);
}

// The warm start's pass w = M_B z_B + q adds, of a column's lambda rows,
// only the one that is not +0 (lcp.c, warm_accept): with the shortcut on
// and off the same states and pivots step by step, with both steppers, at
// rest (1, 3 and 5 boxes: the bases hold normals) and sliding to rest (3
// and 5 boxes launched at 0.3 m/s: corner and lambda columns enter the
// bases, and their lambda rows are the ones added).
static void lambda_same(cp_stepper stepper, int boxes, double v0, int steps) {
  const shortcut sc = {"lambda rows", cp_wi_lambda_skip_enable, cp_wi_lambda_skip_taken};
  const long pivots = same_bits(sc, stepper, boxes, v0, steps, steps / 2);
  if (v0 > 0) cr_assert_gt(pivots, 0, "the bases never changed");
}

Test(world_scale, lambda_rows_same_bits) {
  const cp_stepper dyn[2] = {CP_STEPPER_ACCELERATION, CP_STEPPER_VELOCITY};
  for (int s = 0; s < 2; ++s) {
    lambda_same(dyn[s], 1, 0, 60);
    lambda_same(dyn[s], 3, 0, 100);
    lambda_same(dyn[s], 5, 0, 60);
    lambda_same(dyn[s], 3, 0.3, 80);
    lambda_same(dyn[s], 5, 0.3, 80);
  }
}
