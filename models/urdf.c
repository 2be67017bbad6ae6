// URDF serial chains with libxml2; see models/urdf.h for what is read and
// how it maps onto cp_chain.
#include "models/urdf.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libxml/parser.h>
#include <libxml/tree.h>
#include <libxml/xmlerror.h>

#include "models/vec3.h"

#define PD_TOL 1e-12  // leading minors relative to max|I|^k

enum { J_REVOLUTE, J_CONTINUOUS, J_PRISMATIC, J_FIXED };

typedef struct ulink {
  char *name;
  xmlNode *node;
  int has_inertial;
  double mass, com[3], inertia[9]; // link frame, about com
  xmlNode *coll;                   // the first <collision>, or NULL
  cp_shape shape;
  double cpos[3], cquat[4];        // collision origin in the link frame
  int parent;                      // parent joint, -1 for the root
  int child;                       // first child joint, -1 if none
} ulink;

typedef struct ujoint {
  char *name;
  xmlNode *node;
  int type;
  int parent, child;               // link indices
  double pos[3], quat[4], axis[3];
  cp_urdf_limit lim;
} ujoint;

typedef struct ctx {
  cp_error *err;
  int nl, nj;
  ulink *links;
  ujoint *joints;
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

static int read_geometry(cp_error *err, const xmlNode *coll, cp_shape *s) {
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
                              "cylinder or capsule)");
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
    return xerr(err, e,
                "unsupported: mesh collision geometry (complan collides box, "
                "sphere, cylinder and capsule primitives)");
  } else {
    return xerr(err, e,
                "unknown geometry (expected box, sphere, cylinder or "
                "capsule)");
  }
  if (s->type != CP_SHAPE_BOX && !(s->radius > 0))
    return xerr(err, e, "radius must be positive, got %g", s->radius);
  return 0;
}

static int read_link(ctx *c, xmlNode *n, ulink *L) {
  cp_error *err = c->err;
  L->node = n;
  L->parent = L->child = -1;
  for (xmlNode *k = n->children; k; k = k->next) {
    if (is_elem(k, "inertial")) {
      if (L->has_inertial)
        return xerr(err, k, "a link has at most one <inertial>");
      if (read_inertial(c, L, k)) return -1;
    } else if (is_elem(k, "collision")) {
      if (L->coll)
        return xerr(err, k,
                    "unsupported: a second collision shape of link \"%.60s\" "
                    "(complan gives each link one shape)",
                    L->name);
      L->coll = k;
      if (read_geometry(err, k, &L->shape)) return -1;
      if (read_origin(err, k, L->cpos, L->cquat)) return -1;
    }
  }
  return 0;
}

// ------------------------------------------------------------ joints --

static int find_link(const ctx *c, const char *name) {
  for (int i = 0; i < c->nl; ++i)
    if (!strcmp(c->links[i].name, name)) return i;
  return -1;
}

static int link_ref(ctx *c, const xmlNode *jn, const char *elem, int *out) {
  const xmlNode *e = first_child(jn, elem);
  if (!e) return xerr(c->err, jn, "missing <%s link=\"...\"/>", elem);
  xmlChar *v = xmlGetProp(e, BAD_CAST "link");
  if (!v) return xerr(c->err, e, "missing attribute \"link\"");
  *out = find_link(c, (const char *)v);
  int rc = 0;
  if (*out < 0)
    rc = xerr(c->err, e, "unknown link \"%.60s\"", (const char *)v);
  xmlFree(v);
  return rc;
}

static int read_joint(ctx *c, xmlNode *n, ujoint *J) {
  cp_error *err = c->err;
  J->node = n;
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
  const xmlNode *mim = first_child(n, "mimic");
  if (mim)
    return xerr(err, mim,
                "unsupported: mimic joints (every joint of a complan chain "
                "is independent)");
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
    if (attr_numbers(err, lim, "lower", 1, &J->lim.lower, 0) < 0) return -1;
    if (attr_numbers(err, lim, "upper", 1, &J->lim.upper, 0) < 0) return -1;
    if (!(J->lim.lower <= J->lim.upper))
      return xerr(err, lim, "lower limit %g exceeds upper limit %g",
                  J->lim.lower, J->lim.upper);
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
    rc = xerr(err, n, "out of memory");
  xmlFree(v);
  return rc;
}

static int build(ctx *c, xmlNode *robot, cp_urdf_model *m) {
  cp_error *err = c->err;
  // Tree structure: each link has at most one parent and one child joint.
  for (int j = 0; j < c->nj; ++j) {
    ujoint *J = &c->joints[j];
    ulink *P = &c->links[J->parent], *C = &c->links[J->child];
    if (C->parent >= 0)
      return xerr(err, J->node,
                  "link \"%.60s\" is already the child of joint \"%.60s\" "
                  "(line %ld): not a tree",
                  C->name, c->joints[C->parent].name,
                  xmlGetLineNo(c->joints[C->parent].node));
    if (P->child >= 0)
      return xerr(err, J->node,
                  "unsupported: branching tree: link \"%.60s\" already has "
                  "the child joint \"%.60s\" (line %ld); complan reads serial "
                  "chains only (give each branch its own URDF and "
                  "manipulator)",
                  P->name, c->joints[P->child].name,
                  xmlGetLineNo(c->joints[P->child].node));
    C->parent = j;
    P->child = j;
  }
  int root = -1;
  for (int i = 0; i < c->nl; ++i)
    if (c->links[i].parent < 0) {
      if (root >= 0)
        return xerr(err, c->links[i].node,
                    "a second root link (no parent joint; the first is "
                    "\"%.60s\"): the links must form one chain",
                    c->links[root].name);
      root = i;
    }
  if (root < 0)
    return xerr(err, robot, "no root link: the joints form a cycle");
  // Walk the chain from the root; every link must be reached.
  int *seq = malloc((size_t)(c->nj + 1) * sizeof *seq);
  int *owner = malloc((size_t)c->nl * sizeof *owner);
  double *T = malloc((size_t)c->nl * 7 * sizeof *T); // pos[3], quat[4]
  int rc = 0, ns = 0, n_mov = 0;
  if (!seq || !owner || !T) {
    rc = xerr(err, robot, "out of memory");
    goto done;
  }
  for (int L = root, reached = 1;; ++reached) {
    int j = c->links[L].child;
    if (j < 0) {
      if (reached != c->nl) {
        for (int i = 0; i < c->nl; ++i) {
          int on = i == root;
          for (int k = 0; k < ns && !on; ++k) on = c->joints[seq[k]].child == i;
          if (!on) {
            rc = xerr(err, c->links[i].node,
                      "link not connected to the root \"%.60s\" (the joints "
                      "form a cycle)",
                      c->links[root].name);
            goto done;
          }
        }
      }
      break;
    }
    seq[ns++] = j;
    if (c->joints[j].type != J_FIXED) ++n_mov;
    L = c->joints[j].child;
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
  m->limits = calloc((size_t)n_mov, sizeof *m->limits);
  m->joint_line = calloc((size_t)n_mov, sizeof *m->joint_line);
  int *first_link = malloc((size_t)n_mov * sizeof *first_link);
  if (!ch->joints || !m->limits || !m->joint_line || !first_link) {
    free(first_link);
    rc = xerr(err, robot, "out of memory");
    goto done;
  }
  ch->n = n_mov;
  owner[root] = -1;
  memset(T + 7 * root, 0, 7 * sizeof *T);
  T[7 * root + 3] = 1;
  for (int s = 0, k = -1; s < ns; ++s) {
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
    cp_joint *cj = &ch->joints[++k];
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
    m->joint_line[k] = (int)xmlGetLineNo(J->node);
    if (!(cj->name = dupstr(J->name)) ||
        !(cj->link.name = dupstr(c->links[J->child].name))) {
      rc = xerr(err, J->node, "out of memory");
      break;
    }
  }

  // Mass properties and the one shape of every movable link, in chain order.
  for (int k = 0; k < n_mov && !rc; ++k) {
    cp_link *lk = &ch->joints[k].link;
    const ulink *head = &c->links[first_link[k]];
    double msum = 0, mc[3] = {0, 0, 0}, In[9] = {0};
    int n_in = 0, single = -1;
    for (int L = 0; L < c->nl; ++L) {
      if (owner[L] != k || !c->links[L].has_inertial) continue;
      const ulink *u = &c->links[L];
      double R[9], cw[3];
      cp_quat_to_mat(R, T + 7 * L + 3);
      cp_m3_mulv(cw, R, u->com);
      cp_v3_add(cw, cw, T + 7 * L);
      msum += u->mass;
      cp_v3_axpy(mc, mc, u->mass, cw);
      ++n_in, single = L;
    }
    if (!(msum > 0)) {
      rc = xerr(err, head->node,
                "a moving link needs mass: give it an <inertial> with "
                "<mass value> > 0");
      break;
    }
    if (n_in == 1) {
      // One inertial: copy it, so that the URDF gives exactly the numbers
      // a JSON chain would.
      const ulink *u = &c->links[single];
      double R[9];
      cp_quat_to_mat(R, T + 7 * single + 3);
      cp_m3_mulv(lk->com, R, u->com);
      cp_v3_add(lk->com, lk->com, T + 7 * single);
      cp_m3_rotate_sym(In, R, u->inertia);
    } else {
      cp_v3_scale(lk->com, mc, 1.0 / msum);
      for (int L = 0; L < c->nl; ++L) {
        if (owner[L] != k || !c->links[L].has_inertial) continue;
        const ulink *u = &c->links[L];
        double R[9], cw[3], d[3], Iw[9];
        cp_quat_to_mat(R, T + 7 * L + 3);
        cp_m3_mulv(cw, R, u->com);
        cp_v3_add(cw, cw, T + 7 * L);
        cp_v3_sub(d, cw, lk->com);
        cp_m3_rotate_sym(Iw, R, u->inertia);
        double d2 = cp_v3_dot(d, d);
        for (int r = 0; r < 3; ++r)
          for (int s = 0; s < 3; ++s)
            In[3 * r + s] += Iw[3 * r + s] +
                             u->mass * ((r == s ? d2 : 0) - d[r] * d[s]);
      }
    }
    lk->mass = msum;
    memcpy(lk->inertia, In, sizeof In);
    if (!inertia_pd(In)) {
      rc = xerr(err, head->node,
                "the link's inertia (after merging fixed joints) is not "
                "positive definite");
      break;
    }
    // The shape: at most one <collision> over the merged URDF links, posed
    // in the link frame by its <origin> (default: at the centre of mass).
    cp_v3_copy(lk->shape_pos, lk->com);
    lk->shape_quat[0] = 1;
    lk->has_shape_pose = 1;
    const ulink *with = NULL;
    for (int s = 0; s < ns && !rc; ++s) {
      int L = c->joints[seq[s]].child;
      if (owner[L] != k || !c->links[L].coll) continue;
      const ulink *u = &c->links[L];
      if (with) {
        rc = xerr(err, u->coll,
                  "unsupported: a second collision shape for link \"%.60s\" "
                  "(link \"%.60s\" is merged into it by a fixed joint; the "
                  "first is link \"%.60s\"'s, line %ld); complan gives each "
                  "link one shape",
                  head->name, u->name, with->name, xmlGetLineNo(with->coll));
        break;
      }
      with = u;
      compose(T + 7 * L, T + 7 * L + 3, u->cpos, u->cquat, lk->shape_pos,
              lk->shape_quat);
      lk->shape = u->shape;
    }
  }
  free(first_link);
  if (!rc && !(m->root = dupstr(c->links[root].name)))
    rc = xerr(err, robot, "out of memory");
done:
  free(seq);
  free(owner);
  free(T);
  return rc;
}

static int read_robot(ctx *c, xmlNode *robot, cp_urdf_model *m) {
  cp_error *err = c->err;
  if (!robot || !is_elem(robot, "robot"))
    return xerr(err, robot, "the root element must be <robot>");
  xmlChar *rn = xmlGetProp(robot, BAD_CAST "name");
  m->robot = dupstr(rn ? (const char *)rn : "");
  xmlFree(rn);
  if (!m->robot) return xerr(err, robot, "out of memory");
  int nl = 0, nj = 0;
  for (xmlNode *k = robot->children; k; k = k->next)
    nl += is_elem(k, "link"), nj += is_elem(k, "joint");
  if (nl == 0) return xerr(err, robot, "no <link> elements");
  c->links = calloc((size_t)nl, sizeof *c->links);
  c->joints = calloc((size_t)(nj ? nj : 1), sizeof *c->joints);
  if (!c->links || !c->joints) return xerr(err, robot, "out of memory");
  for (xmlNode *k = robot->children; k; k = k->next) {
    if (!is_elem(k, "link")) continue;
    ulink *L = &c->links[c->nl];
    if (check_name(err, k, &L->name)) return -1;
    ++c->nl;
    for (int i = 0; i < c->nl - 1; ++i)
      if (!strcmp(c->links[i].name, L->name))
        return xerr(err, k, "duplicate link name (also at line %ld)",
                    xmlGetLineNo(c->links[i].node));
    if (read_link(c, k, L)) return -1;
  }
  for (xmlNode *k = robot->children; k; k = k->next) {
    if (!is_elem(k, "joint")) continue;
    ujoint *J = &c->joints[c->nj];
    if (check_name(err, k, &J->name)) return -1;
    ++c->nj;
    for (int i = 0; i < c->nj - 1; ++i)
      if (!strcmp(c->joints[i].name, J->name))
        return xerr(err, k, "duplicate joint name (also at line %ld)",
                    xmlGetLineNo(c->joints[i].node));
    if (read_joint(c, k, J)) return -1;
  }
  return build(c, robot, m);
}

// ------------------------------------------------------------- entry --

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static void init_once(void) { xmlInitParser(); }

// The FIRST syntax error (libxml2 keeps only the last one on the context,
// and later ones are often consequences such as "premature end of data").
typedef struct first_error {
  int have, line;
  char msg[256];
} first_error;

static void keep_first_error(void *data, xmlErrorPtr e) {
  xmlParserCtxtPtr px = data;
  first_error *fe = px ? px->_private : NULL;
  if (!fe || fe->have || !e) return;
  fe->have = 1;
  fe->line = e->line;
  snprintf(fe->msg, sizeof fe->msg, "%s", e->message ? e->message : "error");
  size_t n = strlen(fe->msg);
  while (n && (fe->msg[n - 1] == '\n' || fe->msg[n - 1] == ' '))
    fe->msg[--n] = 0;
}

int cp_urdf_parse(const char *text, size_t len, cp_urdf_model *m,
                  cp_error *err) {
  memset(m, 0, sizeof *m);
  if (!text) return cp_error_set(err, "", "no text to parse");
  if (len > 0x7fffffff) return cp_error_set(err, "", "URDF text too large");
  pthread_once(&g_once, init_once);
  xmlParserCtxtPtr px = xmlNewParserCtxt();
  if (!px) return cp_error_set(err, "", "out of memory");
  first_error fe = {0, 0, ""};
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
    char where[32] = "";
    if (fe.have) snprintf(where, sizeof where, "line %d", fe.line);
    xmlFreeDoc(doc);
    xmlFreeParserCtxt(px);
    return cp_error_set(err, where, "invalid XML: %s",
                        fe.have ? fe.msg : "unknown error");
  }
  ctx c = {.err = err};
  int rc = read_robot(&c, xmlDocGetRootElement(doc), m);
  for (int i = 0; i < c.nl; ++i) free(c.links[i].name);
  for (int i = 0; i < c.nj; ++i) free(c.joints[i].name);
  free(c.links);
  free(c.joints);
  xmlFreeDoc(doc);
  xmlFreeParserCtxt(px);
  if (rc) cp_urdf_free(m);
  return rc ? -1 : 0;
}

int cp_urdf_load(const char *path, cp_urdf_model *m, cp_error *err) {
  memset(m, 0, sizeof *m);
  size_t n = 0;
  char *buf = cp_read_file(path, &n, err);
  if (!buf) return -1;
  int rc = cp_urdf_parse(buf, n, m, err);
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
  memset(m, 0, sizeof *m);
}
