/// \file tests/planner/viewer_fixture.h
/// A scene with every kind of drawn thing (plane, fixed cylinder, free box
/// and sphere, a two-link planar finger) and synthetic frames whose poses are
/// known in closed form, for the viewer's Criterion test and its browser
/// test (tests/planner/viewer_page.c + browser_viewer.py).
#ifndef CP_TESTS_VIEWER_FIXTURE_H
#define CP_TESTS_VIEWER_FIXTURE_H

#include "models/scene.h"
#include "planner/view/viewer.h"

#define VF_FRAMES 50
#define VF_STATE 30   /* 2 free bodies x 13 + 2 joints x 2 */
#define VF_BODIES 6

/// Names in the page's order: bodies in scene order, then links.
extern const char *const vf_names[VF_BODIES];

/// Parses the fixture scene; returns 0 or -1 (err filled).
int vf_scene(cp_scene *scene, cp_error *err);

/// Frame i: its time and state (VF_STATE numbers, cp_world_get_state
/// layout).
void vf_state(int i, double *t, double *x);

/// Frame i's contacts (at most 2); returns how many.
int vf_contacts(int i, cp_world_contact *c);

/// The closed-form world pose of body/link `k` (index into vf_names) at
/// frame i: a body's centre and orientation, a link's frame (origin on its
/// joint axis) -- written without models/ kinematics.
void vf_expected(int i, int k, double pos[3], double quat[4]);

/// The goal and a small tree used in the pages (options point into static
/// storage).
cp_viewer_options vf_options(void);

/// Builds the fixture's viewer with every frame added; NULL on failure (a
/// message on stderr).
cp_viewer *vf_viewer(void);

#endif
