// URDF manipulators (serial chains and trees) with libxml2; see
// models/urdf.h for what is read and how it maps onto cp_chain.
#include "models/urdf.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <libxml/hash.h>
#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include "models/mesh.h"
#include "models/vec3.h"

#define PD_TOL 1e-12  // leading minors relative to max|I|^k

enum { J_REVOLUTE, J_CONTINUOUS, J_PRISMATIC, J_FIXED };

// One <collision> of a link: its shape and origin in the link frame.
typedef struct ucoll {
  xmlNode *node;
  cp_shape shape; // a mesh holds one reference (released with the ctx)
  double pos[3], quat[4];
} ucoll;

typedef struct ulink {
  char *name;
  xmlNode *node;
  int has_inertial;
  double mass, com[3], inertia[9]; // link frame, about com
  int ncoll;
  ucoll *coll;                     // [ncoll] in document order
  int parent;                      // parent joint, -1 for the root
  int first_child;                 // first child joint, -1 if none
} ulink;

typedef struct ujoint {
  char *name;
  xmlNode *node;
  int type;
  int parent, child;               // link indices
  int next_sibling;                // next joint with the same parent link
  double pos[3], quat[4], axis[3];
  cp_urdf_limit lim;
  xmlNode *mimic;                  // <mimic>, or NULL
  int leader;                      // mimic: leader joint index (-1: none)
  double mult, offset;             // mimic multiplier and offset
} ujoint;

typedef struct ctx {
  cp_error *err;
  const cp_urdf_options *opt;
  cp_urdf_model *model;            // for warnings
  int nl, nj;
  ulink *links;
  ujoint *joints;
  xmlHashTablePtr link_index;      // name -> index + 1
  xmlHashTablePtr joint_index;     // name -> index + 1
  xmlHashTablePtr meshes;          // "path|sx|sy|sz" -> cp_mesh* (one ref)
} ctx;

// ------------------------------------------------------------ helpers --

static char *dupstr(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static int is_elem(const xmlNode *n, const char *name) {
  return n->type == XML_ELEMENT_NODE && !xmlStrcmp(n->name, BAD_CAST name);
}

static xmlNode *first_child(const xmlNode *n, const char *name) {
  for (xmlNode *c = n->children; c; c = c->next)
    if (is_elem(c, name)) return c;
  return NULL;
}

// Error at node: where "line L", message "<elem name="x">: ...".
static int xerr(cp_error *err, const xmlNode *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int xerr(cp_error *err, const xmlNode *n, const char *fmt, ...) {
  char where[32] = "", what[300], elem[120];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  if (!n) return cp_error_set(err, "", "%s", what);
  snprintf(where, sizeof where, "line %ld", xmlGetLineNo(n));
  xmlChar *nm = xmlGetProp(n, BAD_CAST "name");
  if (nm)
    snprintf(elem, sizeof elem, "<%.30s name=\"%.60s\">", (const char *)n->name,
             (const char *)nm);
  else
    snprintf(elem, sizeof elem, "<%.30s>", (const char *)n->name);
  xmlFree(nm);
  return cp_error_set(err, where, "%s: %s", elem, what);
}

/* xerr's "out of memory", with the code that says so. */
static int xnomem(cp_error *err, const xmlNode *n) {
  xerr(err, n, "out of memory");
  if (err) err->code = CP_ERR_NOMEM;
  return -1;
}

// Parses exactly n finite numbers separated by white space.
static int parse_numbers(const char *s, int n, double *out) {
  const char *p = s;
  for (int i = 0; i < n; ++i) {
    char *end;
    errno = 0;
    double v = strtod(p, &end);
    if (end == p || errno == ERANGE || !isfinite(v)) return -1;
    out[i] = v;
    p = end;
  }
  while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r') ++p;
  return *p ? -1 : 0;
}

// Attribute `attr` of n as n_num numbers. Absent: 1 (out untouched) unless
// required (then an error). Returns 0 read, 1 absent, -1 error.
static int attr_numbers(cp_error *err, const xmlNode *n, const char *attr,
                        int n_num, double *out, int required) {
  xmlChar *v = xmlGetProp(n, BAD_CAST attr);
  if (!v) {
    if (required)
      return xerr(err, n, "missing attribute \"%s\"", attr);
    return 1;
  }
  int rc = parse_numbers((const char *)v, n_num, out);
  if (rc)
    xerr(err, n, "attribute %s=\"%.60s\": expected %d finite number%s", attr,
         (const char *)v, n_num, n_num == 1 ? "" : "s");
  xmlFree(v);
  return rc;
}

// R = Rz(yaw) Ry(pitch) Rx(roll) as a quaternion qz * qy * qx.
static void rpy_quat(const double *rpy, double *q) {
  static const double ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0}, ez[3] = {0, 0, 1};
  double qx[4], qy[4], qz[4];
  cp_quat_axis_angle(qx, ex, rpy[0]);
  cp_quat_axis_angle(qy, ey, rpy[1]);
  cp_quat_axis_angle(qz, ez, rpy[2]);
  cp_quat_mul(q, qz, qy);
  cp_quat_mul(q, q, qx);
}

// <origin xyz rpy> (either may be absent: zero). Missing element: identity.
static int read_origin(cp_error *err, const xmlNode *parent, double *pos,
                       double *quat) {
  cp_v3_set(pos, 0, 0, 0);
  quat[0] = 1, quat[1] = quat[2] = quat[3] = 0;
  const xmlNode *o = first_child(parent, "origin");
  if (!o) return 0;
  double rpy[3] = {0, 0, 0};
  if (attr_numbers(err, o, "xyz", 3, pos, 0) < 0) return -1;
  if (attr_numbers(err, o, "rpy", 3, rpy, 0) < 0) return -1;
  rpy_quat(rpy, quat);
  return 0;
}

// Composition of poses: (p, q) = (pa, qa) o (pb, qb).
static void compose(const double *pa, const double *qa, const double *pb,
                    const double *qb, double *p, double *q) {
  double R[9], d[3], t[4];
  cp_quat_to_mat(R, qa);
  cp_m3_mulv(d, R, pb);
  cp_v3_add(p, pa, d);
  cp_quat_mul(t, qa, qb);
  memcpy(q, t, sizeof t);
}

// Positive definite by Sylvester's criterion with a relative tolerance.
static int inertia_pd(const double *In) {
  double mx = 0;
  for (int i = 0; i < 9; ++i) mx = fmax(mx, fabs(In[i]));
  if (!(mx > 0) || !isfinite(mx)) return 0;
  double d1 = In[0];
  double d2 = In[0] * In[4] - In[1] * In[3];
  double d3 = In[0] * (In[4] * In[8] - In[5] * In[7]) -
              In[1] * (In[3] * In[8] - In[5] * In[6]) +
              In[2] * (In[3] * In[7] - In[4] * In[6]);
  return d1 > PD_TOL * mx && d2 > PD_TOL * mx * mx && d3 > PD_TOL * mx * mx * mx;
}

// --------------------------------------------------------- warnings --

static void warn(ctx *c, const xmlNode *n, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void warn(ctx *c, const xmlNode *n, const char *fmt, ...) {
  cp_urdf_model *m = c->model;
  char what[300], *line = malloc(360);
  char **w = realloc(m->warnings, (size_t)(m->n_warnings + 1) * sizeof *w);
  if (!line || !w) { // a lost warning is not worth failing the parse for
    free(line);
    if (w) m->warnings = w;
    return;
  }
  m->warnings = w;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(what, sizeof what, fmt, ap);
  va_end(ap);
  snprintf(line, 360, "line %ld: %s", n ? xmlGetLineNo(n) : 0L, what);
  m->warnings[m->n_warnings++] = line;
}

// ------------------------------------------------------------- meshes --

static int is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

static char *join2(const char *a, const char *b) {
  size_t na = strlen(a), nb = strlen(b);
  char *r = malloc(na + nb + 2);
  if (!r) return NULL;
  memcpy(r, a, na);
  r[na] = '/';
  memcpy(r + na + 1, b, nb + 1);
  return r;
}

// The file a <mesh filename> names: package://NAME/REST through the
// packages map, then the folders of ROS_PACKAGE_PATH (each may hold NAME);
// file://PATH; an absolute path; else relative to base_dir. Returns a
// malloc'd path, or NULL with the error set (at the <mesh> element).
static char *resolve_mesh(ctx *c, const xmlNode *e, const char *fn) {
  const cp_urdf_options *o = c->opt;
  if (!strncmp(fn, "file://", 7)) fn += 7;
  if (strncmp(fn, "package://", 10)) {
    char *r = fn[0] == '/' || !o->base_dir ? dupstr(fn) : join2(o->base_dir, fn);
    if (!r) xnomem(c->err, e);
    return r;
  }
  const char *name = fn + 10, *slash = strchr(name, '/');
  if (!slash || slash == name || !slash[1]) {
    xerr(c->err, e, "\"%.100s\": expected package://NAME/PATH", fn);
    return NULL;
  }
  size_t nn = (size_t)(slash - name);
  char pkg[256];
  if (nn >= sizeof pkg) {
    xerr(c->err, e, "package name too long in \"%.100s\"", fn);
    return NULL;
  }
  memcpy(pkg, name, nn);
  pkg[nn] = 0;
  for (int i = 0; i < o->n_packages; ++i)
    if (!strcmp(o->packages[i].name, pkg)) {
      char *r = join2(o->packages[i].dir, slash + 1);
      if (!r) xnomem(c->err, e);
      return r;
    }
  const char *rpp = o->ros_package_path ? o->ros_package_path
                                        : getenv("ROS_PACKAGE_PATH");
  char tried[240] = "";
  if (rpp) {
    for (const char *p = rpp; *p;) {
      const char *q = strchr(p, ':');
      size_t len = q ? (size_t)(q - p) : strlen(p);
      if (len > 0 && len < 4000) {
        char dir[4096 + 256];
        snprintf(dir, sizeof dir, "%.*s/%s", (int)len, p, pkg);
        if (o->files && o->files->is_dir ? o->files->is_dir(o->files->ctx, dir)
                                         : is_dir(dir)) {
          char *r = join2(dir, slash + 1);
          if (!r) xnomem(c->err, e);
          return r;
        }
        size_t tl = strlen(tried);
        // (a long list is cut short: the message only needs the first)
        if (snprintf(tried + tl, sizeof tried - tl, "%s%s", tl ? ", " : "", dir) < 0)
          tried[tl] = '\0';
      }
      if (!q) break;
      p = q + 1;
    }
  }
  xerr(c->err, e,
       "package \"%.60s\" not found: not in the scene's \"packages\" and %s%s%s",
       pkg, rpp ? "not under ROS_PACKAGE_PATH (tried " : "ROS_PACKAGE_PATH is not set",
       rpp ? (tried[0] ? tried : "no folder") : "", rpp ? ")" : "");
  return NULL;
}

static void release_mesh(void *payload, const xmlChar *name) {
  (void)name;
  cp_mesh_release(payload);
}

// <mesh filename scale?>: the mesh (one new reference in s->mesh), shared
// with earlier uses of the same file and scale.
static int read_mesh(ctx *c, const xmlNode *e, cp_shape *s) {
  double scale[3] = {1, 1, 1};
  if (attr_numbers(c->err, e, "scale", 3, scale, 0) < 0) return -1;
  for (int k = 0; k < 3; ++k)
    if (scale[k] == 0) return xerr(c->err, e, "scale factors must be non-zero");
  xmlChar *fn = xmlGetProp(e, BAD_CAST "filename");
  if (!fn || !*fn) {
    xmlFree(fn);
    return xerr(c->err, e, "missing attribute \"filename\"");
  }
  char *path = resolve_mesh(c, e, (const char *)fn);
  xmlFree(fn);
  if (!path) return -1;
  size_t kn = strlen(path) + 80;
  char *key = malloc(kn);
  if (!key) {
    free(path);
    return xnomem(c->err, e);
  }
  snprintf(key, kn, "%s|%.17g|%.17g|%.17g", path, scale[0], scale[1], scale[2]);
  cp_mesh *m = xmlHashLookup(c->meshes, BAD_CAST key);
  int rc = 0;
  if (!m) {
    cp_error merr = {0};
    if (cp_mesh_load_from(c->opt->files, path, scale, &m, &merr)) {
      rc = xerr(c->err, e, "%s", merr.msg);
      if (c->err) c->err->code = merr.code; /* out of memory stays so */
    }
    else if (xmlHashAddEntry(c->meshes, BAD_CAST key, m)) {
      cp_mesh_release(m);
      rc = xnomem(c->err, e);
    }
  }
  free(key);
  free(path);
  if (rc) return -1;
  s->type = CP_SHAPE_MESH;
  s->mesh = cp_mesh_retain(m);
  return 0;
}

// ------------------------------------------------------------- links --

static int read_inertial(ctx *c, ulink *L, const xmlNode *in) {
  cp_error *err = c->err;
  double pos[3], quat[4];
  if (read_origin(err, in, pos, quat)) return -1;
  const xmlNode *m = first_child(in, "mass");
  if (!m) return xerr(err, in, "missing <mass value=\"...\"/> (kg)");
  if (attr_numbers(err, m, "value", 1, &L->mass, 1)) return -1;
  if (!(L->mass >= 0))
    return xerr(err, m, "mass must be >= 0, got %g", L->mass);
  const xmlNode *i = first_child(in, "inertia");
  if (!i)
    return xerr(err, in,
                "missing <inertia ixx ixy ixz iyy iyz izz/> (kg m^2)");
  static const char *const names[6] = {"ixx", "ixy", "ixz", "iyy", "iyz",
                                       "izz"};
  double v[6];
  for (int k = 0; k < 6; ++k)
    if (attr_numbers(err, i, names[k], 1, &v[k], 1)) return -1;
  double In[9] = {v[0], v[1], v[2], v[1], v[3], v[4], v[2], v[4], v[5]};
  double R[9];
  cp_quat_to_mat(R, quat);
  cp_m3_rotate_sym(L->inertia, R, In); // inertial axes -> link axes
  cp_v3_copy(L->com, pos);
  L->has_inertial = 1;
  return 0;
}

static int read_geometry(ctx *c, const xmlNode *coll, cp_shape *s) {
  cp_error *err = c->err;
  const xmlNode *g = first_child(coll, "geometry");
  if (!g) return xerr(err, coll, "missing <geometry>");
  const xmlNode *e = NULL;
  for (xmlNode *k = g->children; k; k = k->next)
    if (k->type == XML_ELEMENT_NODE) {
      if (e)
        return xerr(err, k, "a <geometry> holds exactly one shape");
      e = k;
    }
  if (!e) return xerr(err, g, "empty <geometry> (expected box, sphere, "
                              "cylinder, capsule or mesh)");
  memset(s, 0, sizeof *s);
  if (is_elem(e, "box")) {
    s->type = CP_SHAPE_BOX;
    if (attr_numbers(err, e, "size", 3, s->size, 1)) return -1;
    for (int i = 0; i < 3; ++i)
      if (!(s->size[i] > 0))
        return xerr(err, e, "box extents must be positive, got %g",
                    s->size[i]);
  } else if (is_elem(e, "sphere")) {
    s->type = CP_SHAPE_SPHERE;
    if (attr_numbers(err, e, "radius", 1, &s->radius, 1)) return -1;
  } else if (is_elem(e, "cylinder") || is_elem(e, "capsule")) {
    s->type = is_elem(e, "cylinder") ? CP_SHAPE_CYLINDER : CP_SHAPE_CAPSULE;
    if (attr_numbers(err, e, "radius", 1, &s->radius, 1)) return -1;
    if (attr_numbers(err, e, "length", 1, &s->length, 1)) return -1;
    if (s->type == CP_SHAPE_CYLINDER ? !(s->length > 0) : !(s->length >= 0))
      return xerr(err, e, "length must be %s, got %g",
                  s->type == CP_SHAPE_CYLINDER ? "positive" : ">= 0",
                  s->length);
  } else if (is_elem(e, "mesh")) {
    return c->opt->load_meshes ? read_mesh(c, e, s) : 0;
  } else {
    return xerr(err, e,
                "unknown geometry (expected box, sphere, cylinder, capsule "
                "or mesh)");
  }
  if (s->type != CP_SHAPE_BOX && !(s->radius > 0))
    return xerr(err, e, "radius must be positive, got %g", s->radius);
  return 0;
}


static int read_link(ctx *c, xmlNode *n, ulink *L) {
  cp_error *err = c->err;
  L->node = n;
  L->parent = L->first_child = -1;
  int nc = 0;
  for (xmlNode *k = n->children; k; k = k->next) nc += is_elem(k, "collision");
  if (nc && !(L->coll = calloc((size_t)nc, sizeof *L->coll)))
    return xnomem(err, n);
  for (xmlNode *k = n->children; k; k = k->next) {
    if (is_elem(k, "inertial")) {
      if (L->has_inertial)
        return xerr(err, k, "a link has at most one <inertial>");
      if (read_inertial(c, L, k)) return -1;
    } else if (is_elem(k, "collision")) {
      ucoll *u = &L->coll[L->ncoll++];
      u->node = k;
      if (read_geometry(c, k, &u->shape)) return -1;
      if (read_origin(err, k, u->pos, u->quat)) return -1;
    }
  }
  return 0;
}

// ------------------------------------------------------------ joints --

// Index of a name in a table (name -> index + 1), or -1.
static int lookup(xmlHashTablePtr t, const char *name) {
  return (int)(intptr_t)xmlHashLookup(t, BAD_CAST name) - 1;
}

static int link_ref(ctx *c, const xmlNode *jn, const char *elem, int *out) {
  const xmlNode *e = first_child(jn, elem);
  if (!e) return xerr(c->err, jn, "missing <%s link=\"...\"/>", elem);
  xmlChar *v = xmlGetProp(e, BAD_CAST "link");
  if (!v) return xerr(c->err, e, "missing attribute \"link\"");
  *out = lookup(c->link_index, (const char *)v);
  int rc = 0;
  if (*out < 0)
    rc = xerr(c->err, e, "unknown link \"%.60s\"", (const char *)v);
  xmlFree(v);
  return rc;
}

static int read_joint(ctx *c, xmlNode *n, ujoint *J) {
  cp_error *err = c->err;
  J->node = n;
  J->leader = -1;
  xmlChar *t = xmlGetProp(n, BAD_CAST "type");
  if (!t) return xerr(err, n, "missing attribute \"type\"");
  const char *ts = (const char *)t;
  int rc = 0;
  if (!strcmp(ts, "revolute")) J->type = J_REVOLUTE;
  else if (!strcmp(ts, "continuous")) J->type = J_CONTINUOUS;
  else if (!strcmp(ts, "prismatic")) J->type = J_PRISMATIC;
  else if (!strcmp(ts, "fixed")) J->type = J_FIXED;
  else if (!strcmp(ts, "floating") || !strcmp(ts, "planar"))
    rc = xerr(err, n,
              "unsupported: %s joint (complan reads revolute, continuous, "
              "prismatic and fixed joints)",
              ts);
  else
    rc = xerr(err, n,
              "unknown joint type \"%.40s\" (expected revolute, continuous, "
              "prismatic or fixed)",
              ts);
  xmlFree(t);
  if (rc) return -1;
  if (link_ref(c, n, "parent", &J->parent)) return -1;
  if (link_ref(c, n, "child", &J->child)) return -1;
  if (J->parent == J->child)
    return xerr(err, n, "parent and child are the same link");
  if (read_origin(err, n, J->pos, J->quat)) return -1;
  cp_v3_set(J->axis, 1, 0, 0); // the URDF default
  const xmlNode *ax = first_child(n, "axis");
  if (ax && J->type != J_FIXED) {
    if (attr_numbers(err, ax, "xyz", 3, J->axis, 1)) return -1;
    double nn = cp_v3_norm(J->axis);
    if (!(nn > 1e-12)) return xerr(err, ax, "the axis must be non-zero");
    cp_v3_scale(J->axis, J->axis, 1.0 / nn);
  }
  J->mimic = first_child(n, "mimic");
  J->mult = 1, J->offset = 0;
  if (J->mimic) {
    if (J->type == J_FIXED)
      return xerr(err, J->mimic, "a fixed joint cannot mimic another");
    if (attr_numbers(err, J->mimic, "multiplier", 1, &J->mult, 0) < 0 ||
        attr_numbers(err, J->mimic, "offset", 1, &J->offset, 0) < 0)
      return -1;
    xmlChar *ln = xmlGetProp(J->mimic, BAD_CAST "joint");
    if (!ln) return xerr(err, J->mimic, "missing attribute \"joint\"");
    xmlFree(ln); // resolved once every joint is known (read_robot)
  }
  const xmlNode *lim = first_child(n, "limit");
  J->lim.bounded = J->type == J_REVOLUTE || J->type == J_PRISMATIC;
  if (J->type == J_FIXED) return 0;
  if (!lim) {
    if (J->lim.bounded)
      return xerr(err, n,
                  "missing <limit lower upper effort velocity/> (required "
                  "for revolute and prismatic joints)");
    return 0;
  }
  if (attr_numbers(err, lim, "effort", 1, &J->lim.effort, 1)) return -1;
  if (attr_numbers(err, lim, "velocity", 1, &J->lim.velocity, 1)) return -1;
  if (!(J->lim.effort >= 0) || !(J->lim.velocity >= 0))
    return xerr(err, lim, "effort and velocity limits must be >= 0");
  if (J->lim.bounded) {
    int has_lo = attr_numbers(err, lim, "lower", 1, &J->lim.lower, 0);
    int has_up = attr_numbers(err, lim, "upper", 1, &J->lim.upper, 0);
    if (has_lo < 0 || has_up < 0) return -1;
    if (!(J->lim.lower <= J->lim.upper))
      return xerr(err, lim, "lower limit %g exceeds upper limit %g",
                  J->lim.lower, J->lim.upper);
    // Exporters write lower = upper = 0 (or leave both out) on revolute
    // joints whose limits they never set; taken literally the joint could
    // not move. Read it as "no position limits" and say so.
    if (J->type == J_REVOLUTE && J->lim.lower == 0 && J->lim.upper == 0) {
      J->lim.bounded = 0;
      warn(c, lim,
           "<joint name=\"%.60s\">: revolute limits lower = upper = 0 read "
           "as unset: the joint has no position limits",
           J->name);
    }
  }
  return 0;
}

// Resolves every <mimic joint>: the leader, followed through mimics of
// mimics (multipliers and offsets composed) to a joint that is not one.
static int resolve_mimics(ctx *c) {
  for (int j = 0; j < c->nj; ++j) {
    ujoint *J = &c->joints[j];
    if (!J->mimic) continue;
    xmlChar *ln = xmlGetProp(J->mimic, BAD_CAST "joint");
    int L = lookup(c->joint_index, (const char *)ln);
    int rc = 0;
    if (L < 0)
      rc = xerr(c->err, J->mimic, "unknown joint \"%.60s\"", (const char *)ln);
    else if (L == j)
      rc = xerr(c->err, J->mimic, "a joint cannot mimic itself");
    else if (c->joints[L].type == J_FIXED)
      rc = xerr(c->err, J->mimic, "joint \"%.60s\" is fixed: nothing to mimic",
                (const char *)ln);
    xmlFree(ln);
    if (rc) return -1;
    J->leader = L;
  }
  // Compose chains of mimics; a cycle never reaches a non-mimic joint.
  for (int j = 0; j < c->nj; ++j) {
    ujoint *J = &c->joints[j];
    if (!J->mimic) continue;
    int steps = 0;
    while (c->joints[J->leader].mimic) {
      const ujoint *M = &c->joints[J->leader];
      if (++steps > c->nj)
        return xerr(c->err, J->mimic, "mimic joints form a cycle");
      J->offset += J->mult * M->offset;
      J->mult *= M->mult;
      J->leader = M->leader;
    }
  }
  return 0;
}

// ------------------------------------------------------------- build --

static int check_name(cp_error *err, const xmlNode *n, char **out) {
  xmlChar *v = xmlGetProp(n, BAD_CAST "name");
  if (!v || !*v) {
    xmlFree(v);
    return xerr(err, n, "missing attribute \"name\"");
  }
  int rc = 0;
  if (strchr((const char *)v, '/'))
    rc = xerr(err, n,
              "names may not contain '/' (it separates manipulator and link "
              "names)");
  else if (!(*out = dupstr((const char *)v)))
    rc = xnomem(err, n);
  xmlFree(v);
  return rc;
}

// Appends a shape at pose (pos, quat) to a link (the first fills `shape`);
// takes a new reference to a mesh.
static int link_add_shape(cp_link *lk, const cp_shape *sh, const double *pos,
                          const double *quat) {
  if (sh->type == CP_SHAPE_NONE) return 0;
  if (lk->shape.type == CP_SHAPE_NONE) {
    lk->shape = *sh;
    cp_v3_copy(lk->shape_pos, pos);
    memcpy(lk->shape_quat, quat, 4 * sizeof *quat);
  } else {
    cp_link_shape *e = realloc(lk->extra_shapes, (size_t)(lk->n_extra_shapes + 1) *
                                                     sizeof *e);
    if (!e) return -1;
    lk->extra_shapes = e;
    e += lk->n_extra_shapes++;
    e->shape = *sh;
    cp_v3_copy(e->pos, pos);
    memcpy(e->quat, quat, 4 * sizeof *quat);
  }
  if (sh->type == CP_SHAPE_MESH) cp_mesh_retain(sh->mesh);
  return 0;
}

// A collision shape of the root (or a link fixed to it), in the base frame.
static int base_add_shape(cp_urdf_model *m, const cp_shape *sh,
                          const double *pos, const double *quat) {
  if (sh->type == CP_SHAPE_NONE) return 0;
  cp_link_shape *e =
      realloc(m->base_shapes, (size_t)(m->n_base_shapes + 1) * sizeof *e);
  if (!e) return -1;
  m->base_shapes = e;
  e += m->n_base_shapes++;
  e->shape = *sh;
  cp_v3_copy(e->pos, pos);
  memcpy(e->quat, quat, 4 * sizeof *quat);
  if (sh->type == CP_SHAPE_MESH) cp_mesh_retain(sh->mesh);
  return 0;
}

static int build(ctx *c, xmlNode *robot, cp_urdf_model *m) {
  cp_error *err = c->err;
  // Tree structure: each link has at most one parent joint; children are
  // kept in document order (a list through next_sibling).
  int *last_child = malloc((size_t)c->nl * sizeof *last_child);
  if (!last_child) return xnomem(err, robot);
  for (int i = 0; i < c->nl; ++i) last_child[i] = -1;
  for (int j = 0; j < c->nj; ++j) {
    ujoint *J = &c->joints[j];
    ulink *P = &c->links[J->parent], *C = &c->links[J->child];
    if (C->parent >= 0) {
      free(last_child);
      return xerr(err, J->node,
                  "link \"%.60s\" is already the child of joint \"%.60s\" "
                  "(line %ld): not a tree",
                  C->name, c->joints[C->parent].name,
                  xmlGetLineNo(c->joints[C->parent].node));
    }
    C->parent = j;
    J->next_sibling = -1;
    if (last_child[J->parent] < 0) P->first_child = j;
    else c->joints[last_child[J->parent]].next_sibling = j;
    last_child[J->parent] = j;
  }
  free(last_child);
  int root = -1;
  for (int i = 0; i < c->nl; ++i)
    if (c->links[i].parent < 0) {
      if (root >= 0)
        return xerr(err, c->links[i].node,
                    "a second root link (no parent joint; the first is "
                    "\"%.60s\"): the links must form one tree",
                    c->links[root].name);
      root = i;
    }
  if (root < 0)
    return xerr(err, robot, "no root link: the joints form a cycle");

  // Depth-first from the root (parents before children, each branch's
  // joints together): seq lists the joints in that order.
  int *seq = malloc((size_t)(c->nj + 1) * sizeof *seq);
  int *stack = malloc((size_t)(c->nj + 1) * sizeof *stack);
  int *owner = malloc((size_t)c->nl * sizeof *owner);
  int *mov = malloc((size_t)(c->nj + 1) * sizeof *mov); // joint -> chain index
  double *T = malloc((size_t)c->nl * 7 * sizeof *T);    // pos[3], quat[4]
  int rc = 0, ns = 0, n_mov = 0, sp = 0;
  if (!seq || !stack || !owner || !mov || !T) {
    rc = xnomem(err, robot);
    goto done;
  }
  for (int j = c->links[root].first_child; j >= 0; j = c->joints[j].next_sibling)
    stack[sp++] = j;
  // Push children in reverse so that the first child is visited first.
  for (int a = 0, b = sp - 1; a < b; ++a, --b) {
    int t = stack[a]; stack[a] = stack[b]; stack[b] = t;
  }
  while (sp > 0) {
    int j = stack[--sp];
    seq[ns++] = j;
    mov[j] = -1;
    if (c->joints[j].type != J_FIXED) mov[j] = n_mov++;
    int first = sp;
    for (int k = c->links[c->joints[j].child].first_child; k >= 0;
         k = c->joints[k].next_sibling)
      stack[sp++] = k;
    for (int a = first, b = sp - 1; a < b; ++a, --b) {
      int t = stack[a]; stack[a] = stack[b]; stack[b] = t;
    }
  }
  if (ns != c->nj) { // some link hangs off a cycle, unreachable from the root
    char *seen = calloc((size_t)c->nl, 1);
    if (!seen) { rc = xnomem(err, robot); goto done; }
    seen[root] = 1;
    for (int s = 0; s < ns; ++s) seen[c->joints[seq[s]].child] = 1;
    for (int i = 0; i < c->nl; ++i)
      if (!seen[i]) {
        rc = xerr(err, c->links[i].node,
                  "link not connected to the root \"%.60s\" (the joints "
                  "form a cycle)",
                  c->links[root].name);
        break;
      }
    free(seen);
    goto done;
  }
  if (n_mov == 0) {
    rc = xerr(err, robot,
              "no revolute, continuous or prismatic joint: a manipulator "
              "needs at least one");
    goto done;
  }

  // Merge fixed joints: owner[L] is the movable joint whose link L belongs
  // to (-1: the base), T[L] the pose of L's frame in that link's frame.
  cp_chain *ch = &m->chain;
  ch->base_quat[0] = 1;
  ch->joints = calloc((size_t)n_mov, sizeof *ch->joints);
  ch->parent = malloc((size_t)n_mov * sizeof *ch->parent);
  m->limits = calloc((size_t)n_mov, sizeof *m->limits);
  m->joint_line = calloc((size_t)n_mov, sizeof *m->joint_line);
  int *first_link = malloc((size_t)n_mov * sizeof *first_link);
  // Per chain link: mass sums and the single inertial (or -1 / -2: none /
  // several), then the inertia about the merged centre.
  double *msum = calloc((size_t)n_mov * 5, sizeof *msum);
  int *single = malloc((size_t)n_mov * sizeof *single);
  if (!ch->joints || !ch->parent || !m->limits || !m->joint_line ||
      !first_link || !msum || !single) {
    free(first_link), free(msum), free(single);
    rc = xnomem(err, robot);
    goto done;
  }
  ch->n = n_mov;
  owner[root] = -1;
  memset(T + 7 * root, 0, 7 * sizeof *T);
  T[7 * root + 3] = 1;
  for (int s = 0; s < ns && !rc; ++s) {
    const ujoint *J = &c->joints[seq[s]];
    double *tp = T + 7 * J->parent, *tc = T + 7 * J->child;
    double pos[3], quat[4];
    compose(tp, tp + 3, J->pos, J->quat, pos, quat);
    if (J->type == J_FIXED) {
      owner[J->child] = owner[J->parent];
      cp_v3_copy(tc, pos);
      memcpy(tc + 3, quat, sizeof quat);
      continue;
    }
    int k = mov[seq[s]];
    cp_joint *cj = &ch->joints[k];
    ch->parent[k] = owner[J->parent];
    first_link[k] = J->child;
    owner[J->child] = k;
    memset(tc, 0, 7 * sizeof *T);
    tc[3] = 1;
    cj->type = J->type == J_PRISMATIC ? CP_JOINT_PRISMATIC : CP_JOINT_REVOLUTE;
    cp_v3_copy(cj->axis, J->axis);
    cp_v3_copy(cj->origin_pos, pos);
    memcpy(cj->origin_quat, quat, sizeof quat);
    cj->drive = CP_DRIVE_EFFORT;
    m->limits[k] = J->lim;
    cj->has_limits = J->lim.bounded;
    cj->lower = J->lim.lower;
    cj->upper = J->lim.upper;
    cj->effort_limit = J->lim.effort;
    cj->velocity_limit = J->lim.velocity;
    if (J->mimic) {
      cj->is_mimic = 1;
      cj->mimic_leader = mov[J->leader];
      cj->mimic_multiplier = J->mult;
      cj->mimic_offset = J->offset;
    }
    m->joint_line[k] = (int)xmlGetLineNo(J->node);
    if (!(cj->name = dupstr(J->name)) ||
        !(cj->link.name = dupstr(c->links[J->child].name)))
      rc = xnomem(err, J->node);
  }

  // Mass properties, one pass over the links for the sums and one for the
  // inertias (linear in the number of links).
  for (int k = 0; k < n_mov; ++k) single[k] = -1;
  for (int L = 0; L < c->nl && !rc; ++L) {
    int k = owner[L];
    const ulink *u = &c->links[L];
    if (k < 0 || !u->has_inertial) continue;
    double R[9], cw[3], *ms = msum + 5 * k;
    cp_quat_to_mat(R, T + 7 * L + 3);
    cp_m3_mulv(cw, R, u->com);
    cp_v3_add(cw, cw, T + 7 * L);
    ms[0] += u->mass;
    cp_v3_axpy(ms + 1, ms + 1, u->mass, cw);
    single[k] = single[k] == -1 ? L : -2;
  }
  for (int k = 0; k < n_mov && !rc; ++k) {
    cp_link *lk = &ch->joints[k].link;
    lk->mass = msum[5 * k];
    if (single[k] >= 0) {
      // One inertial: copy it, so that the URDF gives exactly the numbers
      // a JSON chain would.
      const ulink *u = &c->links[single[k]];
      double R[9];
      cp_quat_to_mat(R, T + 7 * single[k] + 3);
      cp_m3_mulv(lk->com, R, u->com);
      cp_v3_add(lk->com, lk->com, T + 7 * single[k]);
      cp_m3_rotate_sym(lk->inertia, R, u->inertia);
    } else if (lk->mass > 0) {
      cp_v3_scale(lk->com, msum + 5 * k + 1, 1.0 / lk->mass);
    }
  }
  for (int L = 0; L < c->nl && !rc; ++L) {
    int k = owner[L];
    const ulink *u = &c->links[L];
    if (k < 0 || !u->has_inertial || single[k] >= 0) continue;
    cp_link *lk = &ch->joints[k].link;
    double R[9], cw[3], d[3], Iw[9];
    cp_quat_to_mat(R, T + 7 * L + 3);
    cp_m3_mulv(cw, R, u->com);
    cp_v3_add(cw, cw, T + 7 * L);
    cp_v3_sub(d, cw, lk->com);
    cp_m3_rotate_sym(Iw, R, u->inertia);
    double d2 = cp_v3_dot(d, d);
    for (int r = 0; r < 3; ++r)
      for (int s = 0; s < 3; ++s)
        lk->inertia[3 * r + s] += Iw[3 * r + s] +
                                  u->mass * ((r == s ? d2 : 0) - d[r] * d[s]);
  }
  // A massless link is fine when something it carries has mass (an
  // intermediate link of a two-axis wrist); a massless subtree makes the
  // joint's row of H zero: reject it, naming the link.
  for (int k = n_mov - 1; k >= 0 && !rc; --k) { // subtree masses in msum[5k+4]
    msum[5 * k + 4] += msum[5 * k];
    int p = ch->parent[k];
    if (p >= 0) msum[5 * p + 4] += msum[5 * k + 4];
  }
  for (int k = 0; k < n_mov && !rc; ++k) {
    const cp_link *lk = &ch->joints[k].link;
    const ulink *head = &c->links[first_link[k]];
    if (!(msum[5 * k + 4] > 0))
      rc = xerr(err, head->node,
                "joint \"%.60s\" moves no mass (this link and every link it "
                "carries are massless: the mass matrix would be singular): "
                "the link needs mass, an <inertial> with <mass value> > 0",
                ch->joints[k].name);
    else if (lk->mass > 0 && !inertia_pd(lk->inertia))
      rc = xerr(err, head->node,
                "the link's inertia (after merging fixed joints) is not "
                "positive definite");
  }
  free(msum);
  free(single);

  // Shapes: every <collision> of every URDF link merged into a chain link,
  // in depth-first link order, each posed in the chain link's frame by its
  // <origin> composed with the fixed-joint origins. Shapes of links merged
  // into the base go to m->base_shapes (fixed geometry of the manipulator).
  for (int s = -1; s < ns && !rc; ++s) {
    int L = s < 0 ? root : c->joints[seq[s]].child, k = owner[L];
    const ulink *u = &c->links[L];
    for (int e = 0; e < u->ncoll && !rc; ++e) {
      double pos[3], quat[4];
      compose(T + 7 * L, T + 7 * L + 3, u->coll[e].pos, u->coll[e].quat, pos,
              quat);
      if (k < 0 ? base_add_shape(m, &u->coll[e].shape, pos, quat)
                : link_add_shape(&ch->joints[k].link, &u->coll[e].shape, pos,
                                 quat))
        rc = xnomem(err, u->coll[e].node);
    }
  }
  for (int k = 0; k < n_mov; ++k) {
    cp_link *lk = &ch->joints[k].link;
    lk->has_shape_pose = 1;
    if (lk->shape.type == CP_SHAPE_NONE) { // no geometry: (com, identity)
      cp_v3_copy(lk->shape_pos, lk->com);
      lk->shape_quat[0] = 1;
    }
  }
  free(first_link);
  if (!rc && !(m->root = dupstr(c->links[root].name)))
    rc = xnomem(err, robot);
done:
  free(seq);
  free(stack);
  free(owner);
  free(mov);
  free(T);
  return rc;
}

// Adds name -> index + 1 to a table; a duplicate is an error naming the
// line of the first.
static int add_name(ctx *c, xmlHashTablePtr t, const char *name, int index,
                    xmlNode *n, const char *what, xmlNode *(*node_of)(ctx *, int)) {
  int old = lookup(t, name);
  if (old >= 0)
    return xerr(c->err, n, "duplicate %s name (also at line %ld)", what,
                xmlGetLineNo(node_of(c, old)));
  if (xmlHashAddEntry(t, BAD_CAST name, (void *)(intptr_t)(index + 1)))
    return xnomem(c->err, n);
  return 0;
}
static xmlNode *link_node(ctx *c, int i) { return c->links[i].node; }
static xmlNode *joint_node(ctx *c, int i) { return c->joints[i].node; }

static int read_robot(ctx *c, xmlNode *robot, cp_urdf_model *m) {
  cp_error *err = c->err;
  if (!robot || !is_elem(robot, "robot"))
    return xerr(err, robot, "the root element must be <robot>");
  xmlChar *rn = xmlGetProp(robot, BAD_CAST "name");
  m->robot = dupstr(rn ? (const char *)rn : "");
  xmlFree(rn);
  if (!m->robot) return xnomem(err, robot);
  int nl = 0, nj = 0;
  for (xmlNode *k = robot->children; k; k = k->next)
    nl += is_elem(k, "link"), nj += is_elem(k, "joint");
  if (nl == 0) return xerr(err, robot, "no <link> elements");
  c->links = calloc((size_t)nl, sizeof *c->links);
  c->joints = calloc((size_t)(nj ? nj : 1), sizeof *c->joints);
  c->link_index = xmlHashCreate(nl);
  c->joint_index = xmlHashCreate(nj ? nj : 1);
  if (!c->links || !c->joints || !c->link_index || !c->joint_index)
    return xnomem(err, robot);
  for (xmlNode *k = robot->children; k; k = k->next) {
    if (!is_elem(k, "link")) continue;
    ulink *L = &c->links[c->nl];
    L->node = k;
    if (check_name(err, k, &L->name)) return -1;
    ++c->nl;
    if (add_name(c, c->link_index, L->name, c->nl - 1, k, "link", link_node))
      return -1;
    if (read_link(c, k, L)) return -1;
  }
  for (xmlNode *k = robot->children; k; k = k->next) {
    if (!is_elem(k, "joint")) continue;
    ujoint *J = &c->joints[c->nj];
    J->node = k;
    if (check_name(err, k, &J->name)) return -1;
    ++c->nj;
    if (add_name(c, c->joint_index, J->name, c->nj - 1, k, "joint", joint_node))
      return -1;
    if (read_joint(c, k, J)) return -1;
  }
  if (resolve_mimics(c)) return -1;
  return build(c, robot, m);
}

// ------------------------------------------------------------- entry --

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
/* libxml2 reports some failures (a parser context it cannot allocate) only
 * through its generic error channel, which prints to stderr: the library
 * never prints, and those failures are seen through NULL returns anyway. */
static void silent(void *ctx, const char *fmt, ...) {
  (void)ctx;
  (void)fmt;
}

/* libxml2's allocations pass through these (xmlMemSetup), so that a parse
 * that failed for want of memory is told from bad XML or a missing
 * attribute (xmlGetProp returns NULL for both). Per-thread flag. */
static _Thread_local int xml_nomem;

static void *xml_malloc(size_t size) {
  void *p = malloc(size);
  if (!p) xml_nomem = 1;
  return p;
}

static void *xml_realloc(void *q, size_t size) {
  void *p = realloc(q, size);
  if (!p) xml_nomem = 1;
  return p;
}

static char *xml_strdup(const char *str) {
  size_t n = strlen(str) + 1;
  char *p = xml_malloc(n);
  if (p) memcpy(p, str, n);
  return p;
}

static void init_once(void) {
  xmlMemSetup(free, xml_malloc, xml_realloc, xml_strdup);
  xmlInitParser();
  xmlSetGenericErrorFunc(NULL, silent);
}

// The FIRST syntax error (libxml2 keeps only the last one on the context,
// and later ones are often consequences such as "premature end of data").
typedef struct first_error {
  int have, line;
  int nomem;  // libxml2 ran out of memory (at any point)
  char msg[256];
} first_error;

static void keep_first_error(void *data, xmlErrorPtr e) {
  xmlParserCtxtPtr px = data;
  first_error *fe = px ? px->_private : NULL;
  if (fe && e && e->code == XML_ERR_NO_MEMORY) fe->nomem = 1;
  if (!fe || fe->have || !e) return;
  fe->have = 1;
  fe->line = e->line;
  snprintf(fe->msg, sizeof fe->msg, "%s", e->message ? e->message : "error");
  size_t n = strlen(fe->msg);
  while (n && (fe->msg[n - 1] == '\n' || fe->msg[n - 1] == ' '))
    fe->msg[--n] = 0;
}

cp_urdf_options cp_urdf_defaults(void) {
  cp_urdf_options o = {.base_dir = NULL, .packages = NULL, .n_packages = 0,
                       .ros_package_path = NULL, .load_meshes = 1};
  return o;
}

int cp_urdf_parse(const char *text, size_t len, cp_urdf_model *m,
                  cp_error *err) {
  return cp_urdf_parse_opts(text, len, NULL, m, err);
}

static void free_ctx(ctx *c) {
  for (int i = 0; i < c->nl; ++i) {
    free(c->links[i].name);
    for (int e = 0; e < c->links[i].ncoll; ++e)
      if (c->links[i].coll[e].shape.type == CP_SHAPE_MESH)
        cp_mesh_release(c->links[i].coll[e].shape.mesh);
    free(c->links[i].coll);
  }
  for (int i = 0; i < c->nj; ++i) free(c->joints[i].name);
  free(c->links);
  free(c->joints);
  if (c->link_index) xmlHashFree(c->link_index, NULL);
  if (c->joint_index) xmlHashFree(c->joint_index, NULL);
  if (c->meshes) xmlHashFree(c->meshes, release_mesh);
}

int cp_urdf_parse_opts(const char *text, size_t len,
                       const cp_urdf_options *opt, cp_urdf_model *m,
                       cp_error *err) {
  cp_urdf_options def = cp_urdf_defaults();
  if (!opt) opt = &def;
  memset(m, 0, sizeof *m);
  if (!text) return cp_error_set(err, "", "no text to parse");
  if (len > 0x7fffffff) return cp_error_set(err, "", "URDF text too large");
  pthread_once(&g_once, init_once);
  xml_nomem = 0;
  xmlParserCtxtPtr px = xmlNewParserCtxt();
  if (!px) return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  first_error fe = {0, 0, 0, ""};
  px->_private = &fe;
  px->sax->serror = keep_first_error; // called with data = px (userData)
  // No network, no entity expansion, no messages on stderr (errors are kept
  // on the context and reported through err).
  xmlDocPtr doc = xmlCtxtReadMemory(
      px, text, (int)len, NULL, NULL,
      XML_PARSE_NONET | XML_PARSE_NOERROR | XML_PARSE_NOWARNING |
          XML_PARSE_BIG_LINES);
  if (!doc || fe.have) {
    if (!fe.have) { // no error reported through the handler
      xmlErrorPtr e = xmlCtxtGetLastError(px);
      keep_first_error(px, e);
    }
    const int nomem = fe.nomem || xml_nomem || px->errNo == XML_ERR_NO_MEMORY;
    char where[32] = "";
    if (fe.have && !nomem) snprintf(where, sizeof where, "line %d", fe.line);
    xmlFreeDoc(doc);
    xmlFreeParserCtxt(px);
    if (nomem) return cp_error_setc(err, CP_ERR_NOMEM, where, "out of memory reading XML");
    return cp_error_set(err, where, "invalid XML: %s",
                        fe.have ? fe.msg : "unknown error");
  }
  ctx c = {.err = err, .opt = opt, .model = m, .meshes = xmlHashCreate(16)};
  int rc = c.meshes ? read_robot(&c, xmlDocGetRootElement(doc), m)
                    : cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  free_ctx(&c);
  xmlFreeDoc(doc);
  xmlFreeParserCtxt(px);
  if (!rc && xml_nomem) rc = -1; /* libxml2 absorbed a failure: parts may be missing */
  if (rc) cp_urdf_free(m);
  if (rc && xml_nomem) cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory reading the URDF");
  return rc ? -1 : 0;
}

int cp_urdf_load(const char *path, cp_urdf_model *m, cp_error *err) {
  return cp_urdf_load_opts(path, NULL, m, err);
}

int cp_urdf_load_opts(const char *path, const cp_urdf_options *opt,
                      cp_urdf_model *m, cp_error *err) {
  memset(m, 0, sizeof *m);
  cp_urdf_options o = opt ? *opt : cp_urdf_defaults();
  size_t n = 0;
  char *buf = cp_file_source_read(o.files, path, "urdf", &n, err);
  if (!buf) return -1;
  // Relative mesh paths: the URDF file's folder unless the caller says.
  char *dir = NULL;
  if (!o.base_dir) {
    const char *slash = strrchr(path, '/');
    dir = slash ? strndup(path, (size_t)(slash - path) + (slash == path))
                : strdup(".");
    if (!dir) {
      free(buf);
      return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
    }
    o.base_dir = dir;
  }
  int rc = cp_urdf_parse_opts(buf, n, &o, m, err);
  free(dir);
  free(buf);
  return rc;
}

void cp_urdf_free(cp_urdf_model *m) {
  if (!m) return;
  free(m->robot);
  free(m->root);
  cp_chain_free(&m->chain);
  free(m->limits);
  free(m->joint_line);
  for (int i = 0; i < m->n_warnings; ++i) free(m->warnings[i]);
  free(m->warnings);
  for (int i = 0; i < m->n_base_shapes; ++i)
    if (m->base_shapes[i].shape.type == CP_SHAPE_MESH)
      cp_mesh_release(m->base_shapes[i].shape.mesh);
  free(m->base_shapes);
  memset(m, 0, sizeof *m);
}
