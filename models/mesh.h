/// \file models/mesh.h
/// Triangle meshes for collision shapes (CP_SHAPE_MESH, models/shape.h):
/// read from STL (binary and ASCII), OBJ and COLLADA (DAE) files with assimp
/// (libassimp, a maintained importer; linked privately: no assimp type
/// appears here), or built from arrays (tests, generated geometry).
///
/// What a loaded mesh is. Every mesh of the file's scene, each placed by the
/// transforms of the nodes that reference it, multiplied by `scale` per axis,
/// triangulated, as one list of triangles in the shape's frame. The root
/// node's own transform is NOT applied: COLLADA exporters put the file's
/// up-axis conversion there, and ROS tools (rviz, MoveIt's mesh loader)
/// drop it, so robot descriptions are written for vertices as stored.
/// Degenerate triangles (zero area) are dropped; a file with no triangle
/// left is an error. Identical vertices are joined.
///
/// Convex hull. At creation the hull of the vertices is computed with qhull
/// (libqhull_r; facets merged where coplanar, each a convex polygon with its
/// outward plane n.x = d and its vertices counter-clockwise seen from
/// outside). A flat or degenerate mesh has no hull (hull_n_planes = 0).
///
/// Collision data. At creation the mesh is handed to the collision layer
/// (models/collide.h: an ODE triangle-mesh data set with its bounding-volume
/// tree), built once and shared by every shape that uses the mesh.
///
/// Ownership. A cp_mesh is reference counted (atomically: shapes in several
/// threads' scene copies may share it): cp_mesh_load / cp_mesh_from_arrays
/// return one reference, cp_mesh_retain adds one, cp_mesh_release drops one
/// and frees the mesh at zero. The arrays are read-only after creation.
#ifndef CP_MODELS_MESH_H
#define CP_MODELS_MESH_H

#include "models/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cp_mesh {
  int n_vertices;
  int n_triangles;
  double *vertices;  ///< [3 n_vertices] shape frame (scaled)
  int *triangles;    ///< [3 n_triangles] vertex indices, counter-clockwise
                     ///< seen from outside (as the file gives them)
  double radius;     ///< max |v| over the vertices (bounding sphere about 0)
  double lo[3], hi[3]; ///< axis-aligned bounds in the shape frame
  int hull_n_planes; ///< hull facets (0: no hull)
  int hull_n_points; ///< hull vertices
  double hull_center[3]; ///< mean of the hull's vertices (shape frame);
                         ///< the arrays below are relative to it (ODE's
                         ///< convex geom wants its origin inside)
  double *hull_planes;  ///< [4 hull_n_planes] (n, d): n.p = d for p
                        ///< relative to hull_center, n outward
  double *hull_points;  ///< [3 hull_n_points] relative to hull_center
  unsigned *hull_polygons; ///< per facet: count, then that many indices
                           ///< into hull_points (ODE's convex layout)
  char *path;        ///< the file read ("" when built from arrays)
  void *collide;     ///< collision data (models/collide.c; opaque)
  void *refs_;       ///< reference count (private)
} cp_mesh;

/// Reads a mesh file and scales it (scale NULL: 1, 1, 1; every factor must
/// be finite and non-zero). Returns 0 with *out holding one reference, or -1
/// with *err filled: where "" and a message naming the path and what went
/// wrong (unreadable, not a mesh format, no triangles).
int cp_mesh_load(const char *path, const double *scale, cp_mesh **out,
                 cp_error *err);

/// cp_mesh_load with the file's bytes from files (models/error.h; NULL:
/// the file system, as cp_mesh_load): read whole, then imported from
/// memory with the path's extension telling the format.
int cp_mesh_load_from(const cp_file_source *files, const char *path,
                      const double *scale, cp_mesh **out, cp_error *err);

/// A mesh from nv vertices [3 nv] and nt triangles [3 nt] (indices < nv),
/// copied. Returns 0 with *out holding one reference, or -1 with *err.
int cp_mesh_from_arrays(const double *vertices, int nv, const int *triangles,
                        int nt, cp_mesh **out, cp_error *err);

/// Adds a reference; returns m (NULL stays NULL).
cp_mesh *cp_mesh_retain(cp_mesh *m);

/// Drops a reference; frees the mesh when it was the last. NULL is a no-op.
void cp_mesh_release(cp_mesh *m);

#ifdef __cplusplus
}
#endif
#endif
