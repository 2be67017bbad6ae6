/// \file models/collide.h
/// Contact points between two posed shapes (models/shape.h), computed with the
/// collision library of ODE (Open Dynamics Engine, linked privately: no ODE
/// type appears here). This is the geometric half of `"contacts": "auto"`
/// (docs/formats.md §2); deciding which pairs to test and what to do with deep
/// penetration is the caller's business.
///
/// Conventions (docs/formats.md §2):
///   - a shape is centred at its object's position x with its axes along R(q)
///     (q = [w, x, y, z], normalised here); cylinder and capsule axes are the
///     local z axis; a plane {y : N.y = offset} is given in the object's frame
///     and is a HALF-SPACE: its solid side is N.y <= offset (a table top).
///   - n is the unit contact normal pointing FROM b INTO a: the normal force on
///     a is c_n n. Moving a by depth along n separates the shapes.
///   - depth is the penetration along n: > 0 overlapping, 0 touching,
///     < 0 a gap no larger than touch_tol (reported as a contact).
///   - p (world frame) is the midpoint of the contact: halfway between the
///     surface of a and the surface of b along the line through p along n.
///     For touching contacts it is on both surfaces; for a face contact the
///     points are the vertices of the contact patch (box on plane: the 4
///     corners of the bottom face; box on a box edge: the corners of the
///     overlap).
///
/// Method (per pair):
///   0. Two boxes, or a box and a plane, farther apart than touch_tol by
///      more than 1e-9 m (plus 1e-12 of their positions and sizes): no
///      contacts, without asking ODE (whose tests in steps 1 and 2 would
///      find none: the same separating axes, far beyond rounding).
///   1. Direction. If one shape is a plane, n is its normal (oriented from b
///      into a). Otherwise ODE collides a copy of a grown by touch_tol (box
///      sides + 2 tol; radii + tol; cylinder length + 2 tol) with b; no
///      contact means the shapes are farther apart than touch_tol: return 0.
///      Otherwise n is the normal of the deepest contact. Two boxes whose
///      faces are parallel to within 1e-6 rad and whose grown copy overlaps
///      well beyond that tilt skip ODE here when a face axis wins: ODE's
///      15 separating axes are evaluated with its own expressions (the
///      winning axis and its sign, so n is the same bits; a resting
///      stack's pairs; other poses ask ODE).
///   2. Contacts. ODE collides a TRANSLATED by -touch_tol n (a plane a is
///      moved by raising its offset) with b, sizes unchanged, so that touching
///      and near-touching (gap <= touch_tol) features overlap by touch_tol and
///      every point of a face contact is found (ODE drops points of depth < 0,
///      and at exactly zero depth rounding loses some: a box resting exactly
///      on a plane gives 3 corners, not 4). Tangential positions are
///      unaffected by the shift. Reported depth = ODE depth - touch_tol.
///      ODE's capsule-box and capsule-cylinder colliders give ONE point, so a
///      capsule facing a box or cylinder is also collided as the two balls at
///      its ends: a capsule lying on a box gets both ends of its line contact.
///   3. Point. A point outside a cylinder's radius is moved radially onto its
///      rim (ODE's cylinder-box collider clips a circumscribed octagon of the
///      cap, whose vertices lie up to 8% of r outside the cylinder). Then,
///      with the shapes at their true poses, the line through the point
///      along n enters a at s_a and leaves b at s_b (exact line-shape
///      intersections; grazing an edge within 1e-9 m counts) and the point
///      moves to the midpoint p + n (s_a + s_b) / 2. If the line misses one
///      shape, the other's surface +- depth/2 is used. (ODE puts its points on
///      a's surface, on b's, or halfway between edges, depending on the pair
///      and even on the order of the pair: this makes p independent of that.)
///   4. Points closer than merge_tol are merged (the deeper one is kept). If
///      more than max_points remain, the deepest is kept and then repeatedly
///      the one farthest from those kept. The result is sorted
///      lexicographically by position rounded to 1e-9 m (then depth), so the
///      output is deterministic.
///   A box lying face down on a plane (its face within 1e-9 rad of
///   parallel, sides >= CP_COLLIDE_FLAT_SIDE, merge_tol below half of that)
///   skips steps 1-3 and the merge: its points are the face's corners
///   within touch_tol of the plane, from the pose, each moved halfway to
///   the plane (where step 3 puts them), then culled and sorted as in 4.
///
/// ODE conventions relied on (tests/models/test_collide.c checks them):
/// ODE's normal points from its second geom into its first ("into g1"), ODE
/// reports only depth >= 0, ODE quaternions are [w, x, y, z], its capsule
/// length excludes the caps (as ours), and its reals (dReal) may be single or
/// double precision (Debian 12 builds double; both are converted to double;
/// in single precision touch_tol 1e-6 is near float resolution at 1 m).
///
/// What ODE gives (Debian's libode 0.16; see the tests): box-plane, box-box:
/// the vertices of the contact polygon (box-box up to 8); capsule-plane and
/// parallel capsule-capsule: the 2 ends; sphere-anything: 1; a cylinder on
/// its flat face: on a plane 4 rim points (on the cylinder's x and y axes:
/// the support square reaches r cos 45 deg in the worst direction), on a box
/// 8 rim points, on a coaxial cylinder 8. Cylinder-cylinder at an angle and
/// capsule-cylinder go through ODE's iterative (MPR) collider: one point
/// (plus the capsule's end balls), normal accurate to ~1e-6 when touching and
/// ~1e-2 at millimetres of penetration (and dependent on the order of a, b).
///
/// Pairs: every pair of box, sphere, cylinder, capsule, plane, mesh except
/// plane-plane, provided ODE has a collider for it (checked once at start-up;
/// see cp_collide_supported). A shape of type NONE has no geometry: 0 contacts.
///
/// Meshes (models/mesh.h) are ODE triangle meshes (dTriMesh with its OPCODE
/// bounding-volume tree, built once per mesh by cp_collide_mesh_prepare and
/// shared). They follow the same steps with three differences: a mesh
/// cannot be grown, so in step 1 the OTHER shape is grown by touch_tol (two
/// meshes: neither, so two meshes count as touching only once they overlap
/// by at least ODE's rounding; the shift of step 2 still reports gaps up to
/// touch_tol between a mesh and a primitive); a mesh is a surface, not a
/// solid, for the line of step 3 (the point is placed from the other
/// shape's surface, or left where ODE put it for mesh-mesh); and ODE gives
/// one point per penetrating triangle feature, which step 4 merges and
/// culls. A cube mesh on a plane gives its 4 bottom corners, as a box does.
/// A mesh against a primitive other than a plane is shifted in step 2 by
/// min(touch_tol, gap + min(touch_tol, 1e-4 m)) with the gap step 1
/// measured, not by touch_tol: ODE scores each buried triangle by its axis
/// of least overlap, so a shift larger than the mesh's features (a
/// simulator's look-ahead margin) turned the sides of a bar standing beside
/// a box into overlaps across its width. Points farther than 1e-4 m beyond
/// the closest feature are then not reported when touch_tol is larger.
/// Triangle meshes were chosen over convex hulls by measurement (see
/// docs/robots.md and experiments/results/collide.md).
///
/// Threads: ODE is initialised once per process (pthread_once) and its
/// per-thread data once per calling thread; calls from several threads are
/// safe. ODE is never closed (its few global allocations live until exit),
/// so other code in the process must not call dCloseODE. cp_collide_pair
/// creates and destroys its own ODE geoms; nothing else is kept.
/// cp_collide_pair_ws keeps its primitive geoms (and what it last set them
/// to) in a caller's workspace instead: the results are bit for bit those
/// of cp_collide_pair.
#ifndef CP_MODELS_COLLIDE_H
#define CP_MODELS_COLLIDE_H

#include "models/error.h"
#include "models/shape.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Upper bound of cp_collide_options.max_points.
#define CP_COLLIDE_MAX_POINTS 64
/// The shortest side of a box face whose four corners on a plane
/// cp_collide_ws.flat counts (m): they are then farther apart than any
/// merge or reduction tolerance used with them (<= half of it).
#define CP_COLLIDE_FLAT_SIDE 1e-4

/// A shape at a world pose (not owned: shape must outlive the call).
typedef struct cp_collide_object {
  const cp_shape *shape;
  double x[3]; ///< world position of the shape's frame (the shape's centre)
  double q[4]; ///< world orientation [w, x, y, z]; nonzero, normalised here
} cp_collide_object;

typedef struct cp_collide_contact {
  double p[3];  ///< world point, midway between the surfaces (see above)
  double n[3];  ///< unit normal from b into a
  double depth; ///< penetration >= 0, or -gap with gap <= touch_tol
} cp_collide_contact;

/// Default of cp_collide_options.mesh_hull (see docs/robots.md for the
/// measurement behind it).
#define CP_COLLIDE_MESH_DEFAULT_HULL 0

typedef struct cp_collide_options {
  double touch_tol; ///< gap (m) still counted as contact; >= 0; default 1e-6
  double merge_tol; ///< points closer than this (m) merge; >= 0; default 1e-9
  int max_points;   ///< per pair, 1..CP_COLLIDE_MAX_POINTS; default 16
  int mesh_hull;    ///< 1: meshes collide as their convex hulls (ODE
                    ///< dConvex); 0: as triangle meshes (dTriMesh);
                    ///< default CP_COLLIDE_MESH_DEFAULT_HULL
} cp_collide_options;

/// touch_tol 1e-6, merge_tol 1e-9, max_points 16, mesh_hull default.
cp_collide_options cp_collide_defaults(void);

struct cp_mesh;

/// Builds the collision data of a mesh (m->collide); called once by
/// models/mesh.c when a mesh is created. Returns 0, or -1 with err.
int cp_collide_mesh_prepare(struct cp_mesh *m, cp_error *err);

/// Frees m->collide (models/mesh.c, when the last reference goes).
void cp_collide_mesh_destroy(struct cp_mesh *m);

/// 1 if cp_collide_pair handles shapes of types a and b (in either order),
/// 0 if not (plane-plane; a pair ODE has no collider for). NONE counts as
/// supported (it gives no contacts).
int cp_collide_supported(cp_shape_type a, cp_shape_type b);

/// Contacts between a and b (opt NULL: defaults). Returns the number n of
/// contacts found (0 <= n <= opt->max_points) and writes the first min(n, cap)
/// of them, in the order described above, to out[] (out may be NULL when
/// cap == 0). Returns -1 with err set (err may be NULL) for an unsupported
/// pair, an invalid shape (non-positive or non-finite size, zero normal), a
/// non-finite or zero quaternion, non-finite position, or invalid options.
/// Penetration is not an error: it is reported in depth.
int cp_collide_pair(const cp_collide_object *a, const cp_collide_object *b,
                    const cp_collide_options *opt, cp_collide_contact *out,
                    int cap, cp_error *err);

/// Slots of cp_collide_ws.geom per kind (at least one per cp_shape_type).
#define CP_COLLIDE_WS_TYPES 8
/// Kinds of geom kept: 0 side a of a pair, 1 side b, 2 the side grown by
/// touch_tol in step 1 (a, or b when a is a mesh).
#define CP_COLLIDE_WS_KINDS 3
/// Parameters of a kept geom: its shape's 4 (box lengths, radius/length,
/// plane), position 3, quaternion 4.
#define CP_COLLIDE_WS_NPARAMS 11

/// What cp_collide_pair_ws keeps between calls (a simulator collides the
/// same shapes every step):
///   - for each kind of geom and each primitive type, one ODE geom (opaque
///     here), made on first use, with the parameters it was last given: a
///     later call sets only the parameters that changed (size, position,
///     orientation; ODE stores what it is given, so a geom given the same
///     numbers again is the same geom). Meshes are still made and destroyed
///     per call.
///   - for each side, the last quaternion it was given with its normalised
///     value and rotation matrix (a fixed table's pose does not change).
/// Everything kept is a pure function of the numbers it is keyed on, which
/// is why the results are those of a fresh call, bit for bit.
/// Ownership: the caller owns the workspace; zero-initialise it ({0}), use
/// it from one thread at a time, release it with cp_collide_ws_free.
typedef struct cp_collide_ws {
  void *geom[CP_COLLIDE_WS_KINDS][CP_COLLIDE_WS_TYPES];
  double param[CP_COLLIDE_WS_KINDS][CP_COLLIDE_WS_TYPES][CP_COLLIDE_WS_NPARAMS];
  double pose[2][17]; ///< per side: q given, q normalised, R(q) (private)
  int pose_set[2];    ///< per side: pose[] holds a pose
  long flat;          ///< calls whose answer was a box face down on a plane
                      ///< (within 1e-9 rad): its four corners, a rectangle
                      ///< with sides >= CP_COLLIDE_FLAT_SIDE, unmerged
                      ///< (merge_tol < half of that)
} cp_collide_ws;

/// cp_collide_pair with the geoms of ws (NULL: exactly cp_collide_pair).
/// Same results, bit for bit, and same errors.
int cp_collide_pair_ws(const cp_collide_object *a, const cp_collide_object *b,
                       const cp_collide_options *opt, cp_collide_ws *ws,
                       cp_collide_contact *out, int cap, cp_error *err);

/// Destroys the geoms of ws and zeroes it. Safe on a zeroed workspace.
void cp_collide_ws_free(cp_collide_ws *ws);

#ifdef __cplusplus
}
#endif
#endif
