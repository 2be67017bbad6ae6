/// \file models/scene.h
/// A scene (docs/formats.md §2): free and fixed bodies, manipulator chains and
/// an explicit contact list, with its state (poses, velocities, joint
/// positions and rates) and inputs (gravity, joint efforts or accelerations,
/// friction). Parsed from JSON and checked; every number that gets past
/// cp_scene_parse is finite and physically meaningful.
///
/// What the parser accepts and decides (beyond docs/formats.md §2):
/// - Top-level keys: gravity (default [0, 0, -9.81]), friction, restitution
///   ({"default": e, "pairs": [{a, b, e}]}, e in [0, 1], default 0: Newton
///   restitution of generated contacts, matched like friction), bodies,
///   manipulators, contacts, velocity_tolerance (default 1e-6 m/s, > 0),
///   penetration_tolerance (default 1e-4 m, >= 0: the deepest overlap that
///   automatic contacts accept), touch_tolerance (default 1e-6 m, >= 0: the
///   largest gap that automatic contacts still count as touching), name and
///   comment (strings, ignored), packages (below). Any other key is an error.
/// - friction: {"default": mu (>= 0; 0.5 when absent), "pairs": [{a, b, mu}]}.
///   Pair names may be bodies, links ("manip/link") or whole manipulators
///   (all of their links). A contact's mu is: its own "mu", else the most
///   specific matching pair (body/link beats manipulator), else the default.
/// - Directions (contact normal and tangent, joint axis, plane normal) may
///   have any non-zero length and are normalised. A given tangent must be
///   orthogonal to the normal to |t.n| <= 1e-3 (after normalising both; it is
///   then made exactly orthogonal) -- a tolerance that admits hand-written
///   4-digit values such as 0.7071.
/// - Quaternions must have |norm - 1| <= 1e-3 (same reason) and are then
///   normalised exactly; a larger deviation is an error.
/// - Inertia matrices must be symmetric (|I - I^T| <= 1e-9 max|I|) and
///   positive definite (Cholesky); masses finite and > 0. Links need a mass
///   and an inertia (or a shape to take it from).
/// - The contact tangent when none is given: the world axis e least aligned
///   with n (first of x, y, z on ties), t = normalise(e - (e.n) n); o = n x t.
/// - Joints: at most one of "effort" and "acceleration"; when neither is given
///   the joint is effort-driven with zero effort (docs/math.md §1 default).
///   Optional "limits": {"lower", "upper", "effort", "velocity"} (all
///   optional; lower and upper go together, lower <= upper; effort and
///   velocity >= 0, 0 when absent) sets cp_joint.has_limits, lower, upper,
///   effort_limit, velocity_limit. A position outside [lower, upper] (1e-9
///   slack) is an error at the joint's `position`.
/// - Links: optional "shape_origin": {"position": [x, y, z], "orientation":
///   [w, x, y, z]} places the link's "shape" (required with it) in the LINK
///   frame: the shape's centre at position (default: the link's "com") with
///   its axes turned by orientation (default identity). It sets
///   cp_link.shape_pos/shape_quat (has_shape_pose = 1; without the key the
///   pose is (com, identity), the former behaviour). A link without
///   "inertia" takes the shape's at uniform density, turned into link axes;
///   that needs the shape centred at "com" (else an error at `inertia`).
/// - Fixed bodies must not have non-zero velocities; mass/inertia on them are
///   checked but unused.
/// - "contacts": "auto" or absent: the contacts are generated from the shapes
///   by cp_scene_generate_contacts (models/contactgen.h: which pairs, a/b,
///   order, frames, friction); deeper penetration than penetration_tolerance
///   is an error at `contacts` naming the pair and the depth. Generated
///   contacts have depth set; explicit ones depth 0.
/// - Manipulators given by "urdf" (models/urdf.h), path relative to base_dir:
///   {"name", "urdf", "base"?, "state"?, "self_contacts"?}; "joints" and
///   "urdf" are exclusive. "state" maps MOVABLE joint names of the URDF to
///   {"position", "velocity", "effort" | "acceleration"} (same rules and
///   defaults as in "joints"); a joint not in the map is at rest at position
///   0, effort-driven with zero effort. Mimic followers are not in the map
///   (an error naming the leader): their state is their leader's through the
///   mimic (cp_chain_apply_mimic). A position outside the URDF's <limit>
///   (revolute, prismatic) is an error, for followers too (the message names
///   the leader and its position). URDF warnings (cp_urdf_model.warnings)
///   are kept in cp_scene.warnings, prefixed with the JSON path and file.
/// - "self_contacts" (manipulators, bool): test pairs of the manipulator's
///   own links (models/contactgen.h); default true for "joints", false for
///   "urdf" (nearby links' meshes overlap by design; ROS lists the pairs to
///   ignore in an SRDF, which complan does not read).
/// - "packages" (top level): {"NAME": "folder"} for package://NAME/... mesh
///   paths in URDFs, folders relative to base_dir; ROS_PACKAGE_PATH is
///   searched after it (models/urdf.h).
/// - Links: "shapes": [{"shape": {...}, "origin": {"position",
///   "orientation"}}, ...] gives several shapes, each posed in the link frame
///   (position default: the link's "com"); exclusive with "shape" and
///   "shape_origin"; such a link needs an "inertia". The URDF's <collision><origin> and <limit> fill the shape
///   pose and joint limits as "shape_origin" and "limits" would. URDF errors are reported at `manipulators[i].urdf` with the
///   URDF file, line and element in the message.
/// - After kinematics, every contact's normal relative speed must be within
///   velocity_tolerance of zero (docs/math.md §2), unless
///   cp_scene_options.check_normal_speed is 0 (impact problems, time
///   stepping). The error is at `contacts[j]` and gives j and the speed (for
///   automatic contacts at `contacts`, naming the generated contact's index
///   and its pair).
///
/// Errors: a cp_error whose `where` is the exact JSON path (`bodies[1].mass`,
/// `manipulators[0].joints[1].link.inertia`, `contacts[2].normal`) or, for
/// malformed JSON, `line L` (the column is in the message).
///
/// Ownership: a cp_scene owns everything it points to; cp_scene_free releases
/// it. On failure cp_scene_parse leaves *scene zeroed (nothing to free). The
/// struct is public so that a time stepper can update the state in place.
#ifndef CP_MODELS_SCENE_H
#define CP_MODELS_SCENE_H

#include <stddef.h>

#include "models/chain.h"
#include "models/error.h"
#include "models/shape.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Defaults of the scene keys penetration_tolerance and touch_tolerance (m).
#define CP_SCENE_PENETRATION_TOL 1e-4
#define CP_SCENE_TOUCH_TOL 1e-6

/// A rigid body: free (6 DOF) or fixed (never moves).
typedef struct cp_body {
  char *name;          ///< unique among bodies and links (owned)
  int fixed;           ///< 1: fixed
  cp_shape shape;
  double mass;         ///< free bodies: > 0 (fixed: 0 unless given)
  double inertia[9];   ///< body frame, about the centre of mass, row-major
  int inertia_given;   ///< 0: taken from the shape at uniform density
  double x[3];         ///< position of the centre of mass (world)
  double q[4];         ///< orientation, unit quaternion [w, x, y, z]
  double v[3];         ///< velocity of the centre of mass (world)
  double w[3];         ///< angular velocity (world)
  int base_of;         ///< 0, or 1 + the manipulator whose URDF root link
                       ///< (with the links fixed to it) this fixed body's
                       ///< shape is: named "MANIP:LINK" ("MANIP:LINK:2"
                       ///< for its second shape), added after the bodies
                       ///< of the file; contact generation treats it as
                       ///< the chain's base (models/contactgen.h)
  int planar;          ///< 0: free in 3D; 1 + a: a planar body, kept by
                       ///< the simulator in the plane through its position
                       ///< normal to world axis a (0 x, 1 y, 2 z): no
                       ///< velocity along the axis, angular velocity about
                       ///< it only ("planar" key; docs/formats.md §2)
  double support_mu;   ///< planar bodies: friction with the table the
                       ///< plane lies on (normal force m |g_a|, known);
                       ///< 0: none ("planar.support_friction";
                       ///< docs/simulate.md, "Support friction")
  double support_radius; ///< the support patch's radius (m): 0 one point
                         ///< at the centre, no torsional friction
} cp_body;

/// Names a body or a manipulator link.
typedef struct cp_ref {
  int body;   ///< index into bodies, or -1 for a link
  int manip;  ///< link: manipulator index (else -1)
  int link;   ///< link: joint/link index in that manipulator (else -1)
} cp_ref;

typedef struct cp_contact {
  cp_ref a, b;          ///< the normal points from b into a
  double p[3];          ///< contact point (world)
  double n[3];          ///< unit normal
  double t[3];          ///< unit tangent, orthogonal to n
  double o[3];          ///< n x t
  double mu;            ///< resolved friction coefficient, >= 0
  double mu_torsion;    ///< soft-finger coefficient (valid if has_torsion)
  int has_torsion;      ///< 1 when "mu_torsion" was given
  double restitution;   ///< Newton restitution in [0, 1] (default 0)
  double depth;         ///< generated contacts: penetration (> 0 overlap,
                        ///< <= 0 touching / small gap); explicit: 0
} cp_contact;

typedef struct cp_friction_pair {
  char *a, *b;          ///< names as written (body, "manip/link" or manip)
  double mu;
} cp_friction_pair;

typedef struct cp_scene {
  double gravity[3];
  double mu_default;
  int n_pairs;
  cp_friction_pair *pairs;     ///< [n_pairs]
  double e_default;            ///< "restitution": {"default"} (0 when absent)
  int n_epairs;
  cp_friction_pair *epairs;    ///< [n_epairs] restitution pairs (mu holds e)
  int n_bodies;
  cp_body *bodies;             ///< [n_bodies], scene order
  int n_manips;
  cp_chain *manips;            ///< [n_manips], scene order
  int n_contacts;
  cp_contact *contacts;        ///< [n_contacts], scene order
  double velocity_tolerance;   ///< m/s, > 0
  int contacts_auto;           ///< 1: contacts came from the geometry
  double penetration_tolerance;///< m, >= 0 (automatic contacts)
  double touch_tolerance;      ///< m, >= 0 (automatic contacts)
  char *base_dir;              ///< directory for relative paths (owned, may be NULL)
  int n_warnings;              ///< input accepted with a warning (URDF habits)
  char **warnings;             ///< [n_warnings] messages with their JSON path
                               ///< and URDF line (owned)
  int n_ignore;                ///< pairs of "ignore_pairs", resolved
  cp_ref *ignore;              ///< [2 n_ignore]: pair i is ignore[2i],
                               ///< ignore[2i+1] (owned); contact generation
                               ///< skips them
} cp_scene;

/// Parser options; initialise with cp_scene_options_defaults().
typedef struct cp_scene_options {
  int check_normal_speed;      ///< 1 (default): reject non-zero normal speeds
  /// The URDF and mesh files' bytes (NULL, the default: the file system);
  /// models/error.h.
  const cp_file_source *files;
} cp_scene_options;

cp_scene_options cp_scene_options_defaults(void);

/// Parses and checks a scene from JSON text (len bytes, need not be
/// NUL-terminated). base_dir (may be NULL) resolves relative paths. opts may
/// be NULL (defaults). Returns 0, or -1 with *err filled and *scene zeroed.
/// With "contacts": "auto" the contacts are then generated
/// (cp_scene_generate_contacts) and their normal speeds checked: this
/// function and cp_scene_load live in models/sceneload.c, on top of the
/// parser (scene.c) and the generator (contactgen.c), so that neither of
/// those two depends on the other's caller.
int cp_scene_parse(const char *text, size_t len, const char *base_dir,
                   const cp_scene_options *opts, cp_scene *scene,
                   cp_error *err);

/// For a single-state analysis (`solve`, `stability`), which treats every
/// free body as free in 3D: 0 when no body is planar, else -1 with *err at
/// "bodies[i].planar" saying that `what` does not support the key (the
/// planar constraint is the simulator's).
int cp_scene_refuse_planar(const cp_scene *scene, const char *what,
                           cp_error *err);

/// Only the parsing and checking of cp_scene_parse (models/scene.c): an
/// automatic scene comes back with contacts_auto = 1 and no contacts (the
/// simulator generates them at every step).
int cp_scene_parse_geometry(const char *text, size_t len, const char *base_dir,
                            const cp_scene_options *opts, cp_scene *scene,
                            cp_error *err);

/// Reads and parses a scene file; base_dir is the file's directory. On a read
/// failure err->where is "" and the message names the file.
int cp_scene_load(const char *path, const cp_scene_options *opts,
                  cp_scene *scene, cp_error *err);

/// Deep copy of *src into *dst (models/sceneload.c). Returns 0, or -1 (out
/// of memory) with *dst zeroed.
int cp_scene_copy(const cp_scene *src, cp_scene *dst);

/// Releases what *scene owns and zeroes it. Safe on a zeroed struct.
void cp_scene_free(cp_scene *scene);

/// Looks up a body ("box"), link ("finger/l1"); returns 0 and sets *ref, or -1.
int cp_scene_find(const cp_scene *scene, const char *name, cp_ref *ref);

/// Writes the name of ref ("box" or "finger/l1") into buf; returns buf.
const char *cp_scene_ref_name(const cp_scene *scene, cp_ref ref, char *buf,
                              size_t size);

/// 1 when ref is a fixed body (links and free bodies move).
int cp_scene_ref_fixed(const cp_scene *scene, cp_ref ref);

/// Newton restitution of the pair (a, b) from the scene's "restitution"
/// table ({"default": e, "pairs": [{"a", "b", "e"}]}, e in [0, 1], matched
/// like friction pairs); generated contacts take it.
double cp_scene_restitution(const cp_scene *scene, cp_ref a, cp_ref b);

/// Friction coefficient of the pair (a, b) from the scene's table (without a
/// contact's own override).
double cp_scene_friction(const cp_scene *scene, cp_ref a, cp_ref b);

/// World pose of ref's frame: rotation R [9] (row-major) and origin x [3]
/// (for a body its centre of mass, for a link its link frame origin).
/// Computes the manipulator's forward kinematics (O(n)).
void cp_scene_frame(const cp_scene *scene, cp_ref ref, double *R, double *x);

/// Velocity of the material point of ref at world point p, and ref's angular
/// velocity w (either output may be NULL). Fixed bodies: zero.
void cp_scene_point_velocity(const cp_scene *scene, cp_ref ref,
                             const double *p, double *vel, double *w);

/// Relative velocity of contact j in its frame: vc = [n t o]^T (vel_a - vel_b)
/// at p_j.
void cp_scene_contact_velocity(const cp_scene *scene, int j, double *vc);

/// The contact tangent used when none is given: the world axis e least
/// aligned with the unit normal n (first of x, y, z on ties),
/// t = normalise(e - (e.n) n). Shared by explicit and generated contacts.
void cp_scene_default_tangent(const double *n, double *t);

/// Checks every contact's normal relative speed against velocity_tolerance;
/// returns 0, or -1 with err at `contacts[j]` naming j and the speed.
int cp_scene_check_normal_speeds(const cp_scene *scene, cp_error *err);

/// Total number of independent joint coordinates over all manipulators
/// (n_l; mimic followers are not counted, models/chain.h).
int cp_scene_joint_count(const cp_scene *scene);

#ifdef __cplusplus
}
#endif
#endif
