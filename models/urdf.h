/// \file models/urdf.h
/// Manipulators -- serial chains and kinematic trees -- read from URDF (the
/// ROS Unified Robot Description Format) with libxml2, mapped onto cp_chain
/// (models/chain.h) exactly as a scene's JSON "joints" list would give a
/// serial one. docs/robots.md describes the same for users.
///
/// What is read:
///   <robot>            root element (its name is kept).
///   <link name>        <inertial> (<origin xyz rpy>? <mass value>
///                      <inertia ixx ixy ixz iyy iyz izz>), every
///                      <collision> (<origin>? <geometry> with one of <box
///                      size>, <sphere radius>, <cylinder radius length>,
///                      <capsule radius length> -- length between the cap
///                      centres, as in models/shape.h -- or <mesh filename
///                      scale?>: STL, OBJ or DAE read by models/mesh.h).
///                      <visual> is ignored (any geometry).
///   <joint name type>  revolute, continuous (= revolute without limits),
///                      prismatic, fixed; <parent link>, <child link>,
///                      <origin xyz rpy>? (default identity), <axis xyz>?
///                      (default 1 0 0; normalised, non-zero), <limit lower
///                      upper effort velocity> (required for revolute and
///                      prismatic as in the URDF spec; lower/upper default 0;
///                      lower <= upper, effort and velocity >= 0; stored on
///                      cp_joint and in cp_urdf_limit), <mimic joint
///                      multiplier? offset?> (defaults 1, 0). <dynamics>,
///                      <calibration>, <safety_controller> are ignored.
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
/// Structure. The links and joints must form one tree (each link the child
/// of at most one joint, one root link that is no joint's child, every link
/// reached from it); the root is the manipulator's fixed base (a "world"
/// link is just such a root). The chain's joints are the movable
/// (revolute, continuous, prismatic) joints in depth-first order from the
/// root, children in document order, so a parent always comes before its
/// children (cp_chain.parent; a serial chain comes out in path order); at
/// least one is required. Name lookups go through hash tables and every
/// pass is linear in the number of links and joints.
///
/// Fixed joints merge their child link into its parent: the merged link has
/// the summed mass, the mass-weighted centre and the inertia of the union
/// about that centre (parallel axis theorem), and the name of the link after
/// the movable joint (links merged into it keep no name). Links merged into
/// the ROOT join the fixed base: their fixed-joint origins are composed into
/// the first movable joints' origins, and their inertial and collision data
/// are not part of the chain (a base does not move): they are kept in
/// base_shapes, which the scene makes fixed bodies of the manipulator
/// (models/scene.h, cp_body.base_of).
///
/// Mass. A movable link may be massless (no <inertial>, or mass 0: links
/// that only carry a frame) when something it carries has mass; a joint
/// whose link and whole subtree are massless would give H a zero row: an
/// error at that link ("moves no mass ... needs mass"). A link with mass
/// needs a positive definite inertia after merging.
///
/// Mimic joints. <mimic joint="L" multiplier="m" offset="b"> makes the
/// joint follow L (cp_joint.is_mimic, mimic_leader, mimic_multiplier,
/// mimic_offset; models/chain.h): l = m l_L + b. A mimic of a mimic is
/// resolved to the first joint that is not one, composing m and b; a cycle,
/// an unknown or fixed leader are errors at the <mimic>.
///
/// Collision shapes. Every <collision> of every URDF link merged into a
/// movable link becomes one of that link's shapes (the first in
/// cp_link.shape, the rest in extra_shapes; depth-first link order, then
/// document order), posed in the link frame by its <origin> composed with
/// the fixed-joint origins from the movable link's frame to the URDF link
/// holding it. Without any <collision> the link has no shape (pose (com,
/// identity)). Meshes: <mesh filename> is package://NAME/PATH (the options'
/// packages map first, then the folders of ROS_PACKAGE_PATH, each of which
/// may hold a folder NAME), file://PATH, an absolute path, or a path
/// relative to base_dir; scale (3 factors, non-zero) multiplies the
/// vertices. A mesh file used several times (with one scale) is read once.
/// Errors name the <mesh> line and the path tried: "package \"NAME\" not
/// found: ... (tried A/NAME, B/NAME)" or "cannot read mesh PATH: ...".
///
/// Joint limits. cp_joint.has_limits is 1 for revolute and prismatic joints
/// (lower, upper from <limit>); effort_limit and velocity_limit are the
/// <limit>'s effort and velocity (0 for a continuous joint without <limit>).
/// They are also in cp_urdf_model.limits. Exporters write <limit lower="0"
/// upper="0"> on revolute joints whose limits they never set: read as NO
/// position limits, with a warning in cp_urdf_model.warnings ("line L:
/// ..."), since taken literally the joint could never move.
/// Names must not contain '/'.
///
/// Unsupported (error "unsupported: ..." naming the element and its line):
/// floating and planar joints. Errors: err->where is "line L" (the line of
/// the element at fault; for malformed XML the line of the syntax error) and
/// err->msg begins with the element (`<joint name="j2">: ...`). No message
/// is printed.
///
/// Ownership: a cp_urdf_model owns its strings, chain, arrays and warnings;
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
  const cp_file_source *files; ///< the URDF and mesh files' bytes (NULL:
                              ///< the file system; models/error.h)
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
  int n_base_shapes;      ///< <collision> shapes of the root link and the
                          ///< links fixed to it
  cp_link_shape *base_shapes; ///< [n_base_shapes], posed in the base frame
                          ///< (owned; one reference to each mesh)
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
