/// \file tests/planner/asm_support.h
/// Scene builders shared by the assembly tests.
#ifndef CP_TESTS_ASM_SUPPORT_H
#define CP_TESTS_ASM_SUPPORT_H
#include <stddef.h>

/// JSON of a 1 kg box (0.2 x 0.2 x 0.1) resting on a plane through the
/// origin tilted by theta about y (downhill is -x), friction mu; into buf.
const char *cpt_slope_scene(double theta, double mu, char *buf, size_t n);

/// JSON of a 1 kg box (0.2 m) jammed between two fixed walls, friction 0.8:
/// weakly stable (friction can hold it, and free fall is a solution too).
const char *cpt_wedged_scene(void);

/// Path of a bundled scene models/scenes/NAME (one of 4 rotating buffers).
const char *cpt_bundled_scene(const char *name);

#endif
