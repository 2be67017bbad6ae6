/// \file tests/planner/wtest.h
/// Helpers of the simulator tests: scenes from JSON text, worlds from them,
/// running a world for a while.
#ifndef CP_TESTS_PLANNER_WTEST_H
#define CP_TESTS_PLANNER_WTEST_H

#include "models/scene.h"
#include "planner/sim/world.h"

/// Parses scene text (asserts success).
void wt_scene(const char *text, cp_scene *sc);

/// Parses a bundled scene models/scenes/REL (asserts success).
void wt_scene_file(const char *rel, cp_scene *sc);

/// A world of the scene text with the stepper and dt (asserts success).
cp_world *wt_world(const char *text, cp_stepper stepper, double dt);

/// A world of the bundled scene models/scenes/REL (asserts success).
cp_world *wt_world_file(const char *rel, cp_stepper stepper, double dt);

/// Steps n times, asserting every step is OK; returns the number of steps
/// that fell back and accumulates pivots into *pivots (may be NULL).
int wt_run(cp_world *w, int n, long *pivots);

/// Index of free body `name` in the state vector (13 numbers each).
int wt_body(const cp_world *w, const char *name);

/// A box of full extents (sx, sy, sz) and mass m at (x, y, z) in JSON,
/// optional velocity; written into buf.
const char *wt_box(char *buf, size_t n, const char *name, double m, double sx,
                   double sy, double sz, double x, double y, double z,
                   double vx);

#endif
