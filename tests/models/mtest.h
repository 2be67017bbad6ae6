/// \file tests/models/mtest.h
/// Helpers shared by the tests of models/: parsing scenes that must parse or
/// must fail at an exact JSON path, a random scene generator (free bodies,
/// fixed bodies and a mixed revolute/prismatic chain with random geometry),
/// and moving a scene's state along its velocities (for finite differences).
#ifndef CP_TESTS_MODELS_MTEST_H
#define CP_TESTS_MODELS_MTEST_H

#include <stdint.h>

#include "models/scene.h"

/// Parses text; asserts success (printing the error). check: normal speeds.
void mt_parse_ok(const char *text, int check, cp_scene *s);

/// Parses text; asserts failure with err.where == where and, if msg_part is
/// not NULL, err.msg containing msg_part.
void mt_parse_fails(const char *text, const char *where, const char *msg_part);

/// A scene with a fixed table, a free box and sphere and a manipulator of
/// n_joints (revolute and prismatic mixed, random origins, axes, masses,
/// inertias, positions, velocities) plus contacts between every kind of pair
/// (free-fixed, free-free, link-free, link-fixed, free-link, link-link).
/// Velocities are random (normal speeds are not zero: parse with check 0).
/// Returns malloc'd JSON text.
char *mt_random_scene(uint64_t seed, int n_joints);

/// Saved positions (body poses and joint positions) of a scene.
typedef struct mt_state {
  int nb, nj;
  double *x, *q, *l;
} mt_state;
void mt_save(const cp_scene *s, mt_state *st);
void mt_restore(cp_scene *s, const mt_state *st);
void mt_state_free(mt_state *st);

/// Moves positions along the current velocities for time dt with velocities
/// held constant: x += v dt, q = exp(w dt) q, l += l' dt.
void mt_advance(cp_scene *s, double dt);

/// World position of the material point of ref whose body-frame coordinates
/// are local[3] (see mt_local).
void mt_material_point(const cp_scene *s, cp_ref r, const double *local,
                       double *p);
/// Body-frame coordinates of the world point p on ref at the current state.
void mt_local(const cp_scene *s, cp_ref r, const double *p, double *local);

/// Under AddressSanitizer: asserts that no heap block allocated so far in
/// this test process is unreachable (LeakSanitizer's recoverable check, run
/// inside the test because Criterion's workers exit before LSan's atexit
/// report). Without ASan it does nothing.
void mt_assert_no_leaks(void);

/// max |a - b| over n entries.
double mt_maxdiff(const double *a, const double *b, int n);

#endif
