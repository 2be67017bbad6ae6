/// \file planner/view/viewer.h
/// The viewer page (docs/viewer.md): ONE self-contained
/// HTML file, readable offline from disk, that shows a scene's motion in 3D
/// with three.js (vendored under third_party/three/, MIT licence, embedded in
/// the library at build time and inlined into every page).
///
/// The page computes nothing the C side can give it. For every frame the
/// viewer writes the WORLD pose of every body and manipulator link (the frame
/// cp_scene_frame reports: a body's centre of mass and body axes, a link's
/// link frame, found by forward kinematics of models/chain.h from the frame's
/// joint positions), and once per body/link the pose of its shape in that
/// frame (identity for body shapes, the link's shape pose for links, a point
/// of the plane and the rotation taking z to its normal for planes). three.js
/// only composes and draws them. Contact points, normals and forces are drawn
/// as given; the C side also picks the camera target, view radius, force
/// arrow scale and plane size.
///
/// Usage: cp_viewer_create (scene + options), cp_viewer_add_frame per frame
/// (time, state in cp_world_get_state's layout, contacts), cp_viewer_write.
///
/// State layout (planner/sim/world.h, planner/sim/statelayout.h): for each FREE body in scene order
/// x[3], q[4] (w, x, y, z), v[3], w[3]; then for each joint (manipulators in
/// scene order, each chain's joints in order) position, velocity; length
/// cp_viewer_state_size() = 13 n_free + 2 n_joints. Velocities are not drawn.
///
/// The page's script API (for tests in a headless browser):
///   window.complan = {frames: N, time: [t_0 .. t_N-1], bodies: [names],
///                     seek(i), bodyPose(name) -> {position: [x, y, z],
///                     orientation: [w, x, y, z]} }
/// bodies lists every body then every link ("manip/link") in scene order;
/// bodyPose reads back the displayed object's pose (bitwise what the C side
/// wrote: numbers are printed in shortest round-trip form).
///
/// Ownership: create reads the scene and copies what it needs (the caller may
/// free the scene afterwards); options' strings and arrays are copied too.
/// Messages are kept on the handle (cp_viewer_message); nothing is printed.
#ifndef CP_PLANNER_VIEWER_H
#define CP_PLANNER_VIEWER_H

#include "models/error.h"
#include "models/scene.h"
#include "planner/sim/world.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cp_viewer_status {
  CP_VIEWER_OK = 0,
  CP_VIEWER_BAD_INPUT,   ///< a bad argument; the message says which
  CP_VIEWER_NOMEM,
  CP_VIEWER_IO           ///< the page could not be written (nothing left)
} cp_viewer_status;

/// The explored tree of a search (`complan replay --tree`): node positions
/// (the object's position per node), parents and the plan's path.
typedef struct cp_viewer_tree {
  int n;                ///< nodes
  const double *points; ///< [3 n] world positions
  const int *parent;    ///< [n]: the parent's index, or -1 for a root
  int n_path;           ///< nodes on the highlighted path (0: none)
  const int *path;      ///< [n_path] node indices, root first
} cp_viewer_tree;

/// Options; initialise with cp_viewer_defaults().
typedef struct cp_viewer_options {
  const char *title;          ///< page title (default "complan")
  int has_goal;               ///< 1: draw the goal region below
  const char *goal_body;      ///< body that must reach it (a scene name)
  double goal_centre[3];      ///< centre of the goal sphere (world)
  double goal_tolerance;      ///< its radius, > 0
  const cp_viewer_tree *tree; ///< NULL: no tree view
} cp_viewer_options;

cp_viewer_options cp_viewer_defaults(void);

typedef struct cp_viewer cp_viewer;

/// Creates a page builder for the scene. opt NULL: defaults. Returns a
/// status and *out (NULL on failure, with err filled when err is not NULL:
/// err->where names the option at fault).
cp_viewer_status cp_viewer_create(const cp_scene *scene,
                                  const cp_viewer_options *opt,
                                  cp_viewer **out, cp_error *err);

void cp_viewer_destroy(cp_viewer *v);

/// Length of the state vectors cp_viewer_add_frame expects.
int cp_viewer_state_size(const cp_viewer *v);

/// Appends a frame: time t (not below the previous frame's), the state
/// (cp_viewer_state_size() numbers) and the frame's contacts (n_contacts,
/// contacts may be NULL when 0; a, b and depth are not used). Non-finite
/// numbers and decreasing times are CP_VIEWER_BAD_INPUT naming the frame and
/// the entry; nothing is appended then.
cp_viewer_status cp_viewer_add_frame(cp_viewer *v, double t,
                                     const double *state, int n_contacts,
                                     const cp_world_contact *contacts);

/// Appends the world's current frame: its time, state and the contacts
/// (with forces) of its last step -- what a simulation loop calls after
/// each cp_world_step (and once before the first, for the start).
cp_viewer_status cp_viewer_add_world(cp_viewer *v, const cp_world *w);

/// Number of frames added so far.
int cp_viewer_frame_count(const cp_viewer *v);

/// A note shown on the page (under its title) from the next frame added on,
/// until the next note: what a sequence of phases says about each
/// (window.complan.note is the note of the frame shown, noteAt(i) frame
/// i's). NULL or "": none.
cp_viewer_status cp_viewer_note(cp_viewer *v, const char *text);

/// From the next frame added on, the body or link ("manip/link") `name` is
/// drawn (visible 1, the default) or hidden (0); window.complan.visible(name)
/// says which at the frame shown. An unknown name is CP_VIEWER_BAD_INPUT.
cp_viewer_status cp_viewer_show(cp_viewer *v, const char *name, int visible);

/// Writes the page to path (through a temporary file in the same folder,
/// renamed into place: on failure nothing is left behind). A page needs at
/// least one frame.
cp_viewer_status cp_viewer_write(cp_viewer *v, const char *path);

/// The message of the last non-OK status ("" when none).
const char *cp_viewer_message(const cp_viewer *v);

#ifdef __cplusplus
}
#endif
#endif
