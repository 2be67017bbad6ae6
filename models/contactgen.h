/// \file models/contactgen.h
/// Automatic contacts (`"contacts": "auto"`, the default; docs/formats.md §2):
/// the one function that turns a scene's geometry at its current state into
/// its contact list. The geometry of each pair is models/collide.h's; this
/// module decides which pairs to test, names and orders the contacts, gives
/// them frames and friction, and rejects deep penetration.
///
/// Objects. Every body with a shape, and every shape of every manipulator
/// link (a link may have several: cp_link_shape_count; CP_SHAPE_NONE: no
/// geometry, never in contact). A body's shape sits at its centre of mass x
/// with its axes along R(q); a link's shape k at the link frame composed with
/// its pose in the link frame (cp_link_shape_get: for the first, shape_pos /
/// shape_quat, or (com, link axes) without one), the link frame from
/// cp_chain_kinematics at the chain's current joint positions
/// (models/shape.h, models/chain.h). Meshes are collided as models/collide.h
/// says (triangle meshes against primitives unless opt->mesh_hull).
///
/// Object order (used for pairs and for a/b): bodies in scene order, then the
/// links of manipulator 0 in chain order (each link's shapes in order), then
/// manipulator 1, and so on.
///
/// Pairs tested: every unordered pair of objects except
///   - two fixed bodies (neither moves: no contact force can matter);
///   - two shapes of the same link;
///   - two links of the same manipulator that are ADJACENT in the tree (a
///     link and its parent, k and p(k): their shapes meet at the joint
///     between them, by design). Other links of one chain are tested (a
///     curled finger can touch itself), unless opt->skip_same_manipulator
///     (every manipulator) or the chain's no_self_contacts (that one: the
///     default for URDF manipulators, whose collision meshes of nearby links
///     overlap by design) says to skip every pair within it.
/// A cheap bounding-sphere test (plane: none) skips pairs farther apart than
/// touch_tol before the exact test. From 8 objects on, a sweep over the
/// spheres' boxes (along the axis of largest spread of the centres; its
/// order kept in the workspace) picks the pairs to give that test, with a
/// slack that drops only pairs the test would skip: the same contacts.
///
/// Each contact (docs/math.md §2):
///   a, b   if exactly one of the pair is a fixed body, b is that body and a
///          the moving one; otherwise a is the one earlier in object order.
///          The normal n points from b into a (cp_collide_pair's n with the
///          pair passed as (a, b)).
///   p      cp_collide's point midway between the two surfaces (world).
///   t, o   t = cp_scene_default_tangent(n) (the rule scene.c uses for
///          explicit contacts without a tangent), o = n x t.
///   mu     cp_scene_friction(scene, a, b); no torsion; restitution
///          cp_scene_restitution(scene, a, b) (the scene's "restitution").
///   depth  penetration along n (> 0 overlap, <= 0 touching or a gap of at
///          most touch_tol).
/// Order: pairs in object order (first member, then second), each pair's
/// contacts in cp_collide_pair's deterministic order. So the list depends
/// only on the scene, never on timing or addresses.
///
/// Errors (return -1, err filled, scene->contacts unchanged):
///   - penetration: a contact deeper than penetration_tol; `where` is
///     "contacts", the message names the pair ("box" and "finger/tip") and
///     the depth;
///   - a pair the collision layer cannot handle (message names the pair);
///   - out of memory.
/// The normal-speed check (cp_scene_check_normal_speeds) is NOT done here;
/// the scene parser runs it after generating, as for explicit contacts.
///
/// Ownership: on success scene->contacts is replaced by a new malloc'd array
/// (the old one is freed) and scene->n_contacts set; the scene owns it
/// (cp_scene_generate_contacts_ws may instead overwrite the old array in
/// place).
#ifndef CP_MODELS_CONTACTGEN_H
#define CP_MODELS_CONTACTGEN_H

#include "models/collide.h"
#include "models/error.h"
#include "models/scene.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Default penetration tolerance (m) and touch tolerance (m).
#define CP_CONTACTGEN_PENETRATION_TOL CP_SCENE_PENETRATION_TOL
#define CP_CONTACTGEN_TOUCH_TOL CP_SCENE_TOUCH_TOL

/// Options; initialise with cp_contactgen_defaults() or
/// cp_contactgen_scene_options().
typedef struct cp_contactgen_options {
  double penetration_tol;    ///< deepest accepted overlap (m), >= 0; 1e-4
  double touch_tol;          ///< largest gap still a contact (m), >= 0; 1e-6
  double merge_tol;          ///< points of one pair closer than this merge; 1e-9
  int max_points;            ///< per pair, 1..CP_COLLIDE_MAX_POINTS; 16
  int skip_same_manipulator; ///< 1: no pairs within a manipulator; default 0
  int mesh_hull;             ///< meshes against primitives as convex hulls
                             ///< (cp_collide_options.mesh_hull); default
                             ///< CP_COLLIDE_MESH_DEFAULT_HULL
} cp_contactgen_options;

/// penetration_tol 1e-4, touch_tol 1e-6, merge_tol 1e-9, max_points 16,
/// skip_same_manipulator 0.
cp_contactgen_options cp_contactgen_defaults(void);

/// The defaults with the scene's own penetration_tolerance and
/// touch_tolerance (scene keys of the same names).
cp_contactgen_options cp_contactgen_scene_options(const cp_scene *scene);

/// Generates scene->contacts from the shapes at the current state (see the
/// header comment). opt NULL: cp_contactgen_scene_options(scene). Returns 0,
/// or -1 with *err filled (err may be NULL) and the scene unchanged.
int cp_scene_generate_contacts(cp_scene *scene,
                               const cp_contactgen_options *opt,
                               cp_error *err);

/// What cp_scene_generate_contacts_ws keeps between calls: the object list,
/// link states, the contact list being built, and the ODE geoms
/// (cp_collide_ws). Ownership: the caller owns it; zero-initialise it
/// ({0}), use it from one thread at a time (with any scenes), release it
/// with cp_contactgen_ws_free. The scene's contacts are never in it.
/// The overlap that made a generation fail with CP_ERR_OVERLAP: the pair
/// (a, b as a contact's), the depth and the point, so that a caller can say
/// it in its own words (the simulator names its own threshold).
typedef struct cp_contactgen_overlap {
  cp_ref a, b;
  double depth;         ///< penetration (m), > the penetration_tol used
  double p[3];          ///< world point
} cp_contactgen_overlap;

typedef struct cp_contactgen_ws {
  void *obj;            ///< object list (private), obj_cap entries
  int obj_cap;
  int obj_n;            ///< objects of the last call (private: their
                        ///< validated poses are kept when unchanged)
  void *states;         ///< cp_link_state scratch, states_cap entries
  int states_cap;
  cp_contact *list;     ///< contacts being built, list_cap entries
  int list_cap;
  cp_collide_ws collide;///< geoms for cp_collide_pair_ws
  int *order;           ///< the sweep's object order, kept between calls
  int order_n, order_cap; ///< (a step moves the objects little, so the
                        ///< sort starts nearly done); private
  void *pairs;          ///< candidate pairs (private), pairs_cap words
  int pairs_cap;
  cp_contactgen_overlap overlap; ///< the last call's overlap (set when it
                                 ///< failed with CP_ERR_OVERLAP)
  int all_flat;         ///< the last call's contacts all came from pairs
                        ///< of a box face down on a plane (counted by
                        ///< cp_collide_ws.flat): rectangles with sides >=
                        ///< CP_COLLIDE_FLAT_SIDE, which cp_manifold_reduce
                        ///< at a tolerance <= half of that leaves unchanged
} cp_contactgen_ws;

/// cp_scene_generate_contacts reusing ws's buffers and geoms (a simulator
/// generates every step): the same contacts, bit for bit, and the same
/// errors, with scene->contacts unchanged on error. On success the scene
/// owns scene->contacts as before; its old array is reused in place when
/// it holds enough (it has at least the old n_contacts entries), else
/// freed and replaced.
int cp_scene_generate_contacts_ws(cp_scene *scene,
                                  const cp_contactgen_options *opt,
                                  cp_contactgen_ws *ws, cp_error *err);

/// Releases ws's buffers and geoms and zeroes it. Safe on a zeroed one.
void cp_contactgen_ws_free(cp_contactgen_ws *ws);

#ifdef __cplusplus
}
#endif
#endif
