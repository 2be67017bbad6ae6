/// \file models/shape.h
/// Collision/visual primitives of bodies and links, and the inertia tensor of
/// each at uniform density (used when a scene gives a mass but no inertia).
///
/// Every shape is centred at its owner's reference point with its axes along
/// the owner's frame: for a body the centre of mass and body frame, for a
/// manipulator link the link's centre of mass (`com`) with the link frame's
/// axes.
///
/// Uniform-density inertias about the centre of mass, body frame, mass m
/// (docs/math.md §1 needs I_i; docs/formats.md §2 makes these the default):
///
///     box (full extents a, b, c):  m/12 diag(b^2 + c^2, a^2 + c^2, a^2 + b^2)
///     sphere (radius r):           2/5 m r^2 I3
///     cylinder (r, length L, axis z):
///                                  diag(m (3 r^2 + L^2) / 12, same, m r^2 / 2)
///     capsule (r, length L = distance between the centres of its two
///              hemispherical caps; total extent L + 2 r; axis z):
///         with mc = m L / (L + 4 r / 3) (cylinder), ms = m - mc (both caps),
///         Izz = mc r^2 / 2 + ms 2 r^2 / 5
///         Ixx = Iyy = mc (L^2/12 + r^2/4) + ms (2 r^2/5 + L^2/4 + 3 L r/8)
///     plane: no inertia (fixed bodies only).
///
/// A plane is {x : normal . x = offset} in its owner's frame (for a body
/// without position or orientation, the world frame); normal is unit.
///
/// A mesh (CP_SHAPE_MESH) is a triangle mesh (models/mesh.h) whose vertex
/// coordinates are in the shape's frame (already multiplied by its scale);
/// it has no uniform-density inertia here (give one explicitly). The shape
/// points at the mesh; whoever owns the shape (a link) holds one reference.
#ifndef CP_MODELS_SHAPE_H
#define CP_MODELS_SHAPE_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cp_shape_type {
  CP_SHAPE_NONE = 0, ///< no geometry (links may omit their shape)
  CP_SHAPE_BOX,
  CP_SHAPE_SPHERE,
  CP_SHAPE_CYLINDER,
  CP_SHAPE_CAPSULE,
  CP_SHAPE_PLANE,
  CP_SHAPE_MESH      ///< triangle mesh (models/mesh.h)
} cp_shape_type;

struct cp_mesh;

typedef struct cp_shape {
  cp_shape_type type;
  double size[3];   ///< box: full extents along x, y, z
  double radius;    ///< sphere, cylinder, capsule
  double length;    ///< cylinder, capsule (see above)
  double normal[3]; ///< plane: unit normal
  double offset;    ///< plane: normal . x = offset
  struct cp_mesh *mesh; ///< mesh: the triangles (reference held by the owner)
} cp_shape;

/// "box", "sphere", "cylinder", "capsule", "plane", "mesh" ("none" for NONE).
const char *cp_shape_type_name(cp_shape_type t);

/// Body-frame inertia In[9] ("In", not "I": complex.h defines I) (row-major 3x3) about the centre of the shape for
/// mass m at uniform density. Returns 0, or -1 for NONE and PLANE (no volume).
int cp_shape_inertia(const cp_shape *s, double m, double *In);

/// Radius of a ball about the shape's centre that holds it: half the box's
/// diagonal, the sphere's radius, hypot(r, l/2) for a cylinder, l/2 + r for a
/// capsule, the mesh's largest vertex distance (0 without a mesh); INFINITY
/// for a plane, 0 for NONE. The one bounding radius of contact generation,
/// the value-range checks and the viewer.
double cp_shape_bounding_radius(const cp_shape *s);

#ifdef __cplusplus
}
#endif
#endif
