// Triangle meshes read with assimp; see models/mesh.h.
#include "models/mesh.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <assimp/cimport.h>
#include <assimp/postprocess.h>
#include <assimp/scene.h>
#include <libqhull_r/qhull_ra.h>

#include "models/collide.h"
#include "models/grow.h"
#include "models/vec3.h"

// Growable vertex and triangle lists.
typedef struct build {
  double *v;
  int *t;
  int nv, nt, cv, ct;
} build;

static void finish_bounds(cp_mesh *m) {
  m->radius = 0;
  for (int k = 0; k < 3; ++k) m->lo[k] = INFINITY, m->hi[k] = -INFINITY;
  for (int i = 0; i < m->n_vertices; ++i) {
    const double *p = m->vertices + 3 * i;
    m->radius = fmax(m->radius, cp_v3_norm(p));
    for (int k = 0; k < 3; ++k) {
      m->lo[k] = fmin(m->lo[k], p[k]);
      m->hi[k] = fmax(m->hi[k], p[k]);
    }
  }
}

// The convex hull of the vertices with qhull: merged coplanar facets, each
// written as a polygon counter-clockwise about its outward normal. Leaves
// hull_n_planes = 0 when qhull fails (a flat mesh) or memory runs out.
static void compute_hull(cp_mesh *m) {
  qhT qh_qh, *qh = &qh_qh;
  FILE *devnull = fopen("/dev/null", "w"); // qhull reports on a FILE
  if (!devnull) return;
  qh_zero(qh, devnull);
  char cmd[] = "qhull Pp";
  int exitcode = qh_new_qhull(qh, 3, m->n_vertices, m->vertices, False, cmd,
                              NULL, devnull);
  if (!exitcode) {
    int nf = 0, nv = 0, np = 0;
    facetT *facet;
    vertexT *vertex, **vertexp;
    FORALLfacets {
      ++nf;
      np += 1 + qh_setsize(qh, facet->vertices);
    }
    FORALLvertices vertex->id = 0;
    FORALLvertices ++nv;
    m->hull_planes = malloc((size_t)nf * 4 * sizeof(double));
    m->hull_points = malloc((size_t)nv * 3 * sizeof(double));
    m->hull_polygons = malloc((size_t)np * sizeof(unsigned));
    if (m->hull_planes && m->hull_points && m->hull_polygons) {
      int k = 0;
      double *c = m->hull_center;
      FORALLvertices {
        memcpy(m->hull_points + 3 * k, vertex->point, 3 * sizeof(double));
        cp_v3_axpy(c, c, 1.0 / nv, vertex->point);
        vertex->id = (unsigned)k++; // qhull's ids are not needed afterwards
      }
      for (int i = 0; i < nv; ++i)
        cp_v3_sub(m->hull_points + 3 * i, m->hull_points + 3 * i, c);
      int f = 0, w = 0;
      FORALLfacets {
        double *pl = m->hull_planes + 4 * f++;
        cp_v3_copy(pl, facet->normal); // outward for a convex hull
        pl[3] = -facet->offset - cp_v3_dot(pl, c);
        setT *vs = qh_facet3vertex(qh, facet); // in order around the facet
        int cnt = qh_setsize(qh, vs), at = w;
        m->hull_polygons[w++] = (unsigned)cnt;
        FOREACHvertex_(vs) m->hull_polygons[w++] = vertex->id;
        qh_settempfree(qh, &vs);
        // Counter-clockwise about the normal: the polygon's area vector
        // (Newell's sum, robust to collinear neighbours) along n.
        const unsigned *ix = m->hull_polygons + at + 1;
        double area[3] = {0, 0, 0};
        for (int a = 0; a < cnt; ++a) {
          double cr[3];
          cp_v3_cross(cr, m->hull_points + 3 * ix[a],
                      m->hull_points + 3 * ix[(a + 1) % cnt]);
          cp_v3_add(area, area, cr);
        }
        if (cp_v3_dot(area, pl) < 0)
          for (int a = 0, b = cnt - 1; a < b; ++a, --b) {
            unsigned t = m->hull_polygons[at + 1 + a];
            m->hull_polygons[at + 1 + a] = m->hull_polygons[at + 1 + b];
            m->hull_polygons[at + 1 + b] = t;
          }
      }
      m->hull_n_planes = nf;
      m->hull_n_points = nv;
    }
  }
  qh_freeqhull(qh, !qh_ALL);
  int curlong, totlong;
  qh_memfreeshort(qh, &curlong, &totlong);
  fclose(devnull);
  if (!m->hull_n_planes) {
    free(m->hull_planes), free(m->hull_points), free(m->hull_polygons);
    m->hull_planes = m->hull_points = NULL;
    m->hull_polygons = NULL;
  }
}

// Takes the arrays of b (triangles of zero area dropped) into a new mesh.
static int make(build *b, const char *path, cp_mesh **out, cp_error *err) {
  int nt = 0;
  for (int i = 0; i < b->nt; ++i) {
    const int *t = b->t + 3 * i;
    double e1[3], e2[3], c[3];
    cp_v3_sub(e1, b->v + 3 * t[1], b->v + 3 * t[0]);
    cp_v3_sub(e2, b->v + 3 * t[2], b->v + 3 * t[0]);
    cp_v3_cross(c, e1, e2);
    if (cp_v3_norm(c) > 0) memmove(b->t + 3 * nt++, t, 3 * sizeof *t);
  }
  if (nt == 0) {
    free(b->v);
    free(b->t);
    return cp_error_set(err, "", "mesh %s has no triangles", path[0] ? path : "(arrays)");
  }
  cp_mesh *m = calloc(1, sizeof *m);
  atomic_int *refs = malloc(sizeof *refs);
  char *pc = malloc(strlen(path) + 1);
  if (!m || !refs || !pc) {
    free(m), free(refs), free(pc), free(b->v), free(b->t);
    return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory reading mesh %s", path);
  }
  strcpy(pc, path);
  atomic_init(refs, 1);
  m->refs_ = refs;
  m->path = pc;
  m->vertices = b->v;
  m->triangles = b->t;
  m->n_vertices = b->nv;
  m->n_triangles = nt;
  finish_bounds(m);
  compute_hull(m);
  if (cp_collide_mesh_prepare(m, err)) {
    cp_mesh_release(m);
    return -1;
  }
  *out = m;
  return 0;
}

int cp_mesh_from_arrays(const double *vertices, int nv, const int *triangles,
                        int nt, cp_mesh **out, cp_error *err) {
  *out = NULL;
  if (nv < 3 || nt < 1 || !vertices || !triangles)
    return cp_error_set(err, "", "a mesh needs at least 3 vertices and 1 triangle");
  for (int i = 0; i < 3 * nv; ++i)
    if (!isfinite(vertices[i]))
      return cp_error_set(err, "", "mesh vertex %d is not finite", i / 3);
  for (int i = 0; i < 3 * nt; ++i)
    if (triangles[i] < 0 || triangles[i] >= nv)
      return cp_error_set(err, "", "mesh triangle %d: vertex index %d out of "
                          "range 0..%d", i / 3, triangles[i], nv - 1);
  build b = {0};
  b.v = malloc((size_t)nv * 3 * sizeof *b.v);
  b.t = malloc((size_t)nt * 3 * sizeof *b.t);
  if (!b.v || !b.t) {
    free(b.v), free(b.t);
    return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  }
  memcpy(b.v, vertices, (size_t)nv * 3 * sizeof *b.v);
  memcpy(b.t, triangles, (size_t)nt * 3 * sizeof *b.t);
  b.nv = nv, b.nt = nt;
  return make(&b, "", out, err);
}

// Appends the meshes of node and its children, with T the product of the
// transforms from below the root to node's parent.
static int add_node(const struct aiScene *sc, const struct aiNode *nd,
                    const struct aiMatrix4x4 *T, const double *scale,
                    build *b) {
  struct aiMatrix4x4 M = *T;
  if (nd != sc->mRootNode) aiMultiplyMatrix4(&M, &nd->mTransformation);
  for (unsigned k = 0; k < nd->mNumMeshes; ++k) {
    const struct aiMesh *me = sc->mMeshes[nd->mMeshes[k]];
    int base = b->nv;
    if (me->mNumVertices > (unsigned)(0x7fffffff / 3 - b->nv)) return -1;
    if (cp_grow((void **)&b->v, &b->cv, 3 * (b->nv + (int)me->mNumVertices),
             sizeof *b->v))
      return -1;
    for (unsigned i = 0; i < me->mNumVertices; ++i) {
      struct aiVector3D p = me->mVertices[i];
      aiTransformVecByMatrix4(&p, &M);
      double *o = b->v + 3 * b->nv++;
      o[0] = scale[0] * p.x, o[1] = scale[1] * p.y, o[2] = scale[2] * p.z;
    }
    for (unsigned f = 0; f < me->mNumFaces; ++f) {
      const struct aiFace *fc = &me->mFaces[f];
      if (fc->mNumIndices != 3) continue; // points and lines
      if (cp_grow((void **)&b->t, &b->ct, 3 * (b->nt + 1), sizeof *b->t))
        return -1;
      int *t = b->t + 3 * b->nt++;
      for (int j = 0; j < 3; ++j) t[j] = base + (int)fc->mIndices[j];
    }
  }
  for (unsigned c = 0; c < nd->mNumChildren; ++c)
    if (add_node(sc, nd->mChildren[c], &M, scale, b)) return -1;
  return 0;
}

int cp_mesh_load(const char *path, const double *scale, cp_mesh **out,
                 cp_error *err) {
  return cp_mesh_load_from(NULL, path, scale, out, err);
}

int cp_mesh_load_from(const cp_file_source *files, const char *path,
                      const double *scale, cp_mesh **out, cp_error *err) {
  static const double one[3] = {1, 1, 1};
  *out = NULL;
  if (!scale) scale = one;
  for (int k = 0; k < 3; ++k)
    if (!isfinite(scale[k]) || scale[k] == 0)
      return cp_error_set(err, "", "mesh %s: scale factors must be finite "
                          "and non-zero", path);
  // Triangulate polygons; join duplicates (STL stores 3 vertices a facet);
  // sort out points and lines so only triangles remain.
  const unsigned steps = aiProcess_Triangulate |
                         aiProcess_JoinIdenticalVertices |
                         aiProcess_SortByPType;
  const struct aiScene *sc;
  if (files) {
    size_t len = 0;
    char *bytes = cp_file_source_read(files, path, "mesh", &len, err);
    if (!bytes) return -1;
    const char *dot = strrchr(path, '.');
    const char *hint = dot && !strchr(dot, '/') ? dot + 1 : "";
    sc = len > 0 && len <= 0x7fffffffu
             ? aiImportFileFromMemory(bytes, (unsigned)len, steps, hint)
             : NULL;
    free(bytes);
  } else {
    sc = aiImportFile(path, steps);
  }
  if (!sc || !sc->mRootNode)
    return cp_error_set(err, "", "cannot read mesh %s: %s", path,
                        aiGetErrorString());
  build b = {0};
  struct aiMatrix4x4 I;
  aiIdentityMatrix4(&I);
  int rc = add_node(sc, sc->mRootNode, &I, scale, &b);
  aiReleaseImport(sc);
  if (rc) {
    free(b.v), free(b.t);
    return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory reading mesh %s", path);
  }
  return make(&b, path, out, err);
}

cp_mesh *cp_mesh_retain(cp_mesh *m) {
  if (m) atomic_fetch_add((atomic_int *)m->refs_, 1);
  return m;
}

void cp_mesh_release(cp_mesh *m) {
  if (!m || atomic_fetch_sub((atomic_int *)m->refs_, 1) != 1) return;
  cp_collide_mesh_destroy(m);
  free(m->vertices);
  free(m->triangles);
  free(m->hull_planes);
  free(m->hull_points);
  free(m->hull_polygons);
  free(m->path);
  free(m->refs_);
  free(m);
}
