/// \file planner/view/assembly.h
/// An assembly sequence shown in the viewer page (planner/view/viewer.h,
/// docs/assembly.md "Seeing a sequence").
///
/// The animation. Steps k = 0 .. n-1 of a found sequence (placing order)
/// each take frames_per_step frames and step_seconds seconds: during step k
/// part P_k moves in a straight line along its approach direction d_k (the
/// opposite of the direction it was removed in) from its start P_k's final
/// pose - D d_k to its final pose, linearly in time; parts of later steps
/// wait at their starts, parts of earlier steps stand in place. Frame
/// k * frames_per_step is the start of step k; the last frame (n *
/// frames_per_step) shows the assembly complete. Orientations never change
/// (removal is a translation). Fixed bodies and manipulators stay as in the
/// scene (joints at their scene positions). Without a sequence (status none,
/// limit, failed) the page has one frame: the assembly as given.
///
/// D (distance) defaults to 2 R + r_max: R the radius of the ball about the
/// parts' mean position holding every part's bounding sphere, r_max the
/// largest part's bounding radius, so that a waiting part is clear of the
/// assembly's ball.
///
/// State vectors are in cp_viewer's layout (planner/view/viewer.h): per free body
/// x[3], q[4], v[3] = 0, w[3] = 0, then per independent joint position,
/// velocity = 0. Nothing here prints; the page is written through
/// cp_viewer_write (temporary file, renamed).
#ifndef CP_PLANNER_ASSEMBLY_VIEW_H
#define CP_PLANNER_ASSEMBLY_VIEW_H

#include "models/error.h"
#include "models/scene.h"
#include "planner/assembly/assembly.h"
#include "planner/view/viewer.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cp_assembly_anim_options {
  int frames_per_step;   ///< >= 1; default 30
  double step_seconds;   ///< > 0; default 1
  double distance;       ///< D (m); <= 0: automatic (header); default 0
  const char *title;     ///< page title; NULL: "complan assemble"
} cp_assembly_anim_options;

cp_assembly_anim_options cp_assembly_anim_defaults(void);

/// Number of frames of the animation of res (1 without a sequence).
int cp_assembly_anim_frames(const cp_assembly_result *res, const cp_assembly_anim_options *opt);

/// The distance D actually used for scene (opt->distance when > 0).
double cp_assembly_anim_distance(const cp_scene *scene, const cp_assembly_anim_options *opt);

/// Time *t and state (cp_viewer_state_size numbers, see header) of frame
/// `frame` (0 .. frames - 1), at the offsets of the state layout
/// (planner/sim/statelayout.h). 0 ok, -1 frame out of range or out of memory.
int cp_assembly_anim_state(const cp_scene *scene, const cp_assembly_result *res,
                           const cp_assembly_anim_options *opt, int frame, double *t,
                           double *state);

/// Writes the page animating res to path. Returns the viewer's status; err
/// (may be NULL) gets the message with err->where = path on failure.
cp_viewer_status cp_assembly_write_page(const cp_scene *scene, const cp_assembly_result *res,
                                        const cp_assembly_anim_options *opt, const char *path,
                                        cp_error *err);

#ifdef __cplusplus
}
#endif
#endif
