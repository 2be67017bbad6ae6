// cp_world_options.reserve (docs/simulate.md, "Reserve"): a world sized at
// creation for its contacts and every joint-limit side takes the Allegro
// hand's retaken step (step 35: every limit a row, 4 constraints -> 36)
// without growing any of its arrays, and steps to the same bits as a world
// without it; bad values are refused with the option named.
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/bench_stack.h"
#include "planner/sim/world.h"
#include "planner/sim/world_impl.h"

// Every capacity a step grows with its constraints, and the blocks' places
// (a block regrown in place keeps its address but not its capacity).
typedef struct caps {
  int csz, lcp, ck, con, rng;
  size_t own, scratch, sys;
  const void *A, *S, *blk, *M, *ws;
} caps;

static caps caps_of(const cp_world *w) {
  return (caps){.csz = w->csz_cap, .lcp = w->lcp_cap, .ck = w->ck_cap, .con = w->con_cap,
                .rng = w->ck_rng_cap, .own = w->cs_keep.own_cap,
                .scratch = w->cs_keep.scratch_cap, .sys = w->sys_ws.block_size,
                .A = w->cs_keep.A, .S = w->cs_keep.scratch, .blk = w->sys_ws.block,
                .M = w->M, .ws = w->ws};
}

// The first capacity that differs ("" when none).
static const char *caps_diff(const caps *a, const caps *b) {
  if (a->csz != b->csz) return "csz_cap (G, A's selection)";
  if (a->lcp != b->lcp) return "lcp_cap (M, LU, M_B, Lemke)";
  if (a->ck != b->ck) return "ck_cap (the check)";
  if (a->con != b->con) return "con_cap (constraints)";
  if (a->rng != b->rng) return "ck_rng_cap (ranges)";
  if (a->own != b->own || a->A != b->A) return "the contact space's block";
  if (a->scratch != b->scratch || a->S != b->S) return "the contact space's scratch";
  if (a->sys != b->sys || a->blk != b->blk) return "the system's block";
  if (a->M != b->M || a->ws != b->ws) return "the LCP's squares";
  return "";
}

static void load_hand(cp_scene *sc) {
  const char *data = getenv("CP_TEST_DATA");
  cr_assert(data, "run with meson test");
  char path[1024];
  snprintf(path, sizeof path, "%s/robots/allegro_cube.json", data);
  cp_error err;
  cp_error_clear(&err);
  cr_assert_eq(cp_scene_load(path, NULL, &sc[0], &err), 0, "%s: %s", path, err.msg);
}

static cp_world *hand_world(const cp_scene *sc, cp_stepper st, int reserve) {
  cp_world_options o = cp_world_defaults();
  o.dt = 5e-3;
  o.stepper = st;
  o.reserve = reserve;
  cp_world *w;
  cp_error err;
  cp_error_clear(&err);
  cr_assert_eq(cp_world_create(sc, &o, &w, &err), CP_WORLD_OK, "%s", err.msg);
  return w;
}

// Steps w n times; returns the step whose limits were taken again (-1).
static int run(cp_world *w, int n) {
  int redone = -1;
  for (int k = 0; k < n; ++k) {
    cp_step_info info;
    cr_assert_eq(cp_world_step(w, &info), CP_WORLD_OK, "%s", cp_world_message(w));
    if (info.limits_redone && redone < 0) redone = k;
  }
  return redone;
}

Test(world_reserve, hand_all_limits_step_grows_nothing) {
  cp_scene sc;
  load_hand(&sc);
  cp_world *w = hand_world(&sc, CP_STEPPER_ACCELERATION, CP_WORLD_RESERVE_AUTO);
  cr_assert_gt(w->sc.n_contacts, 0);
  const caps c0 = caps_of(w);
  // The contact space can take every limit side and contact, the LCP a row
  // per constraint and five more per contact (its pyramid).
  const int ncon = 32 + w->sc.n_contacts;
  cr_assert_geq(c0.csz, 3 * ncon);
  cr_assert_geq(c0.lcp, ncon + 5 * w->sc.n_contacts);
  cr_assert_eq(run(w, 36), 35, "the limits were not taken again at step 35");
  caps c1 = caps_of(w);
  cr_assert_str_empty(caps_diff(&c0, &c1), "grown in the steps: %s", caps_diff(&c0, &c1));
  run(w, 164); // the rest of the bench's second
  c1 = caps_of(w);
  cr_assert_str_empty(caps_diff(&c0, &c1), "grown in the steps: %s", caps_diff(&c0, &c1));

  // Without the reserve the same step grows them (what the test guards).
  cp_world *v = hand_world(&sc, CP_STEPPER_ACCELERATION, 0);
  const caps d0 = caps_of(v);
  cr_assert_eq(run(v, 36), 35);
  const caps d1 = caps_of(v);
  cr_assert_str_not_empty(caps_diff(&d0, &d1));
  cr_assert_lt(d0.own, c0.own);
  run(v, 164);
  cr_assert_eq(cp_world_hash(v), cp_world_hash(w), "the reserve changed the states");
  cp_world_destroy(v);
  cp_world_destroy(w);
  cp_scene_free(&sc);
}

// The same states bit for bit, both steppers, with the scene's contacts,
// a larger budget and none.
Test(world_reserve, same_bits_both_steppers) {
  cp_scene sc;
  load_hand(&sc);
  for (int s = 0; s < 2; ++s) {
    const cp_stepper st = s ? CP_STEPPER_VELOCITY : CP_STEPPER_ACCELERATION;
    uint64_t h[3];
    const int reserve[3] = {0, CP_WORLD_RESERVE_AUTO, 40};
    for (int r = 0; r < 3; ++r) {
      cp_world *w = hand_world(&sc, st, reserve[r]);
      run(w, 200);
      h[r] = cp_world_hash(w);
      cp_world_destroy(w);
    }
    cr_assert_eq(h[1], h[0], "%s stepper: reserve -1 changed the states", cp_stepper_name(st));
    cr_assert_eq(h[2], h[0], "%s stepper: reserve 40 changed the states", cp_stepper_name(st));
  }
  cp_scene_free(&sc);
}

Test(world_reserve, bad_values_are_refused) {
  cp_scene sc;
  load_hand(&sc);
  const int bad[2] = {-2, CP_WORLD_RESERVE_MAX + 1};
  for (int i = 0; i < 2; ++i) {
    cp_world_options o = cp_world_defaults();
    o.reserve = bad[i];
    cp_world *w = (cp_world *)&o; // (must come back NULL)
    cp_error err;
    cp_error_clear(&err);
    cr_assert_eq(cp_world_create(&sc, &o, &w, &err), CP_WORLD_BAD_INPUT);
    cr_assert_null(w);
    cr_assert_str_eq(err.where, "reserve");
    char got[32];
    snprintf(got, sizeof got, "got %d", bad[i]);
    cr_assert(strstr(err.msg, got), "%s", err.msg);
  }
  cp_scene_free(&sc);
}

// The default is the scene's contacts (the hand: sized at creation for its
// contacts and every limit side), capped at CP_WORLD_RESERVE_AUTO_LCP
// unknowns: a stack of 100 boxes (400 contacts, 2400 unknowns) gets as many
// of its contacts as fit, an explicit budget is not capped.
Test(world_reserve, default_is_the_capped_auto) {
  cr_assert_eq(cp_world_defaults().reserve, CP_WORLD_RESERVE_AUTO);
  cp_scene sc;
  load_hand(&sc);
  cp_world *w = hand_world(&sc, CP_STEPPER_ACCELERATION, cp_world_defaults().reserve);
  cr_assert_geq(w->lcp_cap, 32 + 6 * w->sc.n_contacts);
  cp_world_destroy(w);
  cp_scene_free(&sc);

  cp_world_options o = cp_world_defaults();
  o.dt = 5e-3;
  w = bench_stack_world(100, 0.5, 0, &o, "default_is_the_capped_auto");
  cr_assert_eq(w->sc.n_contacts, 400);
  cr_assert_leq(w->lcp_cap, CP_WORLD_RESERVE_AUTO_LCP);
  cr_assert_geq(w->lcp_cap, CP_WORLD_RESERVE_AUTO_LCP - 5, "%d", w->lcp_cap);
  cr_assert_geq(w->con_cap, CP_WORLD_RESERVE_AUTO_LCP / 6);
  cp_world_destroy(w);
  o.reserve = 60;
  w = bench_stack_world(100, 0.5, 0, &o, "default_is_the_capped_auto");
  cr_assert_geq(w->lcp_cap, 360);
  cp_world_destroy(w);
}

// Where the cap bites (a resting stack of 12: 48 contacts, 288 unknowns,
// sized for 42 of them), the states are those of no reserve, both
// steppers.
Test(world_reserve, capped_default_same_bits) {
  for (int s = 0; s < 2; ++s) {
    uint64_t h[2];
    for (int r = 0; r < 2; ++r) {
      cp_world_options o = cp_world_defaults();
      o.dt = 5e-3;
      o.stepper = s ? CP_STEPPER_VELOCITY : CP_STEPPER_ACCELERATION;
      if (r) o.reserve = 0;
      cp_world *w = bench_stack_world(12, 0.5, 0, &o, "capped_default_same_bits");
      if (!r) {
        cr_assert_eq(w->sc.n_contacts, 48);
        cr_assert_leq(w->lcp_cap, CP_WORLD_RESERVE_AUTO_LCP);
        cr_assert_geq(w->lcp_cap, CP_WORLD_RESERVE_AUTO_LCP - 5);
      }
      run(w, 40);
      h[r] = cp_world_hash(w);
      cp_world_destroy(w);
    }
    cr_assert_eq(h[0], h[1], "stepper %d: the capped reserve changed the states", s);
  }
}
