/// \file models/urdf.h
/// Serial manipulator chains read from URDF (the ROS Unified Robot
/// Description Format) with libxml2, mapped onto cp_chain (models/chain.h)
/// exactly as a scene's JSON "joints" list would give them.
///
/// What is read:
///   <robot>            root element (its name is kept).
///   <link name>        <inertial> (<origin xyz rpy>? <mass value>
///                      <inertia ixx ixy ixz iyy iyz izz>), <collision>
///                      (<origin>? <geometry> with one of <box size>,
///                      <sphere radius>, <cylinder radius length>,
///                      <capsule radius length> -- length between the cap
///                      centres, as in models/shape.h). <visual> is ignored
///                      (any geometry, meshes included).
///   <joint name type>  revolute, continuous (= revolute without limits),
///                      prismatic, fixed; <parent link>, <child link>,
///                      <origin xyz rpy>? (default identity), <axis xyz>?
///                      (default 1 0 0; normalised, non-zero), <limit lower
///                      upper effort velocity> (required for revolute and
///                      prismatic as in the URDF spec; lower/upper default 0;
///                      lower <= upper, effort and velocity >= 0; stored on
///                      cp_joint and in cp_urdf_limit).
///                      <dynamics>, <calibration>, <safety_controller> are
///                      ignored.
///   Other children of <robot> (<material>, <transmission>, <gazebo>, ...)
///   are ignored.
///
/// Conventions (URDF -> cp_chain). URDF rpy is fixed-axis roll, pitch, yaw:
/// R = Rz(yaw) Ry(pitch) Rx(roll). A joint's origin is the joint frame in its
/// PARENT LINK's frame and the child link's frame is the joint frame moved
/// by the joint -- exactly cp_joint's origin_pos/origin_quat and link frame.
/// <inertial><origin> places the centre of mass (cp_link.com = xyz) and the
/// axes of <inertia> (cp_link.inertia = R_rpy I R_rpy^T, link-frame axes).
///
/// Structure. The links and joints must form one tree whose root (the link
/// that is no joint's child) is the manipulator's fixed base, and the tree
/// must be a single path (a serial chain): a link with two child joints is
/// an error ("unsupported: branching ...") at the second joint. The chain's
/// joints are the movable (revolute, continuous, prismatic) joints from the
/// root outwards; at least one is required.
///
/// Fixed joints merge their child link into its parent: the merged link has
/// the summed mass, the mass-weighted centre and the inertia of the union
/// about that centre (parallel axis theorem), and the name of the link after
/// the movable joint (links merged into it keep no name). Links merged into
/// the ROOT join the fixed base: their fixed-joint origins are composed into
/// the first movable joint's origin, and their inertial and collision data
/// are ignored (a base does not move and cp_chain has no base geometry; model
/// fixed obstacles as scene bodies).
///
/// Collision shapes. cp_link carries ONE shape, placed in the link frame by
/// its shape pose (cp_link.shape_pos, shape_quat; has_shape_pose = 1):
///   - a merged link may have at most one <collision> element among all its
///     URDF links (a second one is an error "unsupported: ... second
///     collision shape", at its line); none is fine (no contacts);
///   - the shape pose is the <collision><origin xyz rpy> composed with the
///     fixed-joint origins from the movable link's frame to the URDF link
///     holding it; it need not be at the centre of mass. Link frames are the
///     URDF's frames (cp_scene_frame reports them); the shape's extents are
///     kept as written. Without a <collision> the pose is (com, identity).
/// Joint limits. cp_joint.has_limits is 1 for revolute and prismatic joints
/// (lower, upper from <limit>); effort_limit and velocity_limit are the
/// <limit>'s effort and velocity (0 for a continuous joint without <limit>).
/// They are also in cp_urdf_model.limits.
/// Movable links need mass > 0 and a positive definite inertia after
/// merging (error at the link's line). Names must not contain '/'.
///
/// Unsupported (error "unsupported: ..." naming the element and its line):
/// <mesh> collision geometry, floating and planar joints, <mimic>, branching
/// trees. Errors: err->where is "line L" (the line of the element at fault;
/// for malformed XML the line of the syntax error) and err->msg begins with
/// the element (`<joint name="j2">: ...`). No message is printed.
///
/// Ownership: a cp_urdf_model owns its strings, chain and arrays;
/// cp_urdf_free releases them. On failure the model is left zeroed.
#ifndef CP_MODELS_URDF_H
#define CP_MODELS_URDF_H

#include <stddef.h>

#include "models/chain.h"
#include "models/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/// A movable joint's <limit> as read.
typedef struct cp_urdf_limit {
  int bounded;       ///< 1: revolute/prismatic (lower, upper valid); 0: continuous
  double lower, upper;
  double effort;     ///< maximum effort (0 when no <limit> on a continuous joint)
  double velocity;   ///< maximum speed (likewise)
} cp_urdf_limit;

/// A ROS package name and the folder that holds it (package://NAME/...).
typedef struct cp_urdf_package {
  const char *name;
  const char *dir;
} cp_urdf_package;

/// Options of the URDF reader; initialise with cp_urdf_defaults().
typedef struct cp_urdf_options {
  const char *base_dir;       ///< folder of relative mesh paths; NULL: "."
                              ///< (cp_urdf_load_opts: the URDF's folder)
  const cp_urdf_package *packages; ///< [n_packages] searched first
  int n_packages;
  const char *ros_package_path; ///< ':'-separated folders holding packages;
                              ///< NULL: the ROS_PACKAGE_PATH environment
                              ///< variable at parse time
  int load_meshes;            ///< 1 (default): read mesh files; 0: a mesh
                              ///< <collision> gives no shape
} cp_urdf_options;

/// base_dir NULL, no packages, ros_package_path NULL, load_meshes 1.
cp_urdf_options cp_urdf_defaults(void);

typedef struct cp_urdf_model {
  char *robot;            ///< <robot name> (owned; "" when absent)
  char *root;             ///< root link name (owned)
  cp_chain chain;         ///< name NULL, base identity, joints at rest,
                          ///< effort-driven with zero effort
  cp_urdf_limit *limits;  ///< [chain.n] (owned)
  int *joint_line;        ///< [chain.n] line of each movable <joint> (owned)
  int n_warnings;         ///< habits accepted with a warning (see above)
  char **warnings;        ///< [n_warnings] "line L: ..." (owned)
} cp_urdf_model;

/// Parses URDF text (len bytes) with options opt (NULL: defaults). Returns
/// 0, or -1 with *err filled.
int cp_urdf_parse_opts(const char *text, size_t len,
                       const cp_urdf_options *opt, cp_urdf_model *model,
                       cp_error *err);

/// cp_urdf_parse_opts with the defaults.
int cp_urdf_parse(const char *text, size_t len, cp_urdf_model *model,
                  cp_error *err);

/// Reads and parses a URDF file (opt NULL: defaults, relative mesh paths
/// from the file's folder).
int cp_urdf_load_opts(const char *path, const cp_urdf_options *opt,
                      cp_urdf_model *model, cp_error *err);

/// Reads and parses a URDF file. A read failure has err->where "" and the
/// message names the path.
int cp_urdf_load(const char *path, cp_urdf_model *model, cp_error *err);

/// Releases what *model owns and zeroes it. Safe on a zeroed struct.
void cp_urdf_free(cp_urdf_model *model);

#ifdef __cplusplus
}
#endif
#endif
