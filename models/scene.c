#include "models/scene.h"
#include "models/ranges.h"

#include <errno.h>
#include <fnmatch.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/jsonread.h"
#include "models/mesh.h"
#include "models/urdf.h"
#include "models/vec3.h"

#define PATHBUF CP_JSON_PATH_MAX
#define UNIT_TOL 1e-3       // quaternion norm, tangent orthogonality
#define SYM_TOL 1e-9        // inertia symmetry, relative to max |J_ij|
#define DEFAULT_MU 0.5
#define LIMIT_TOL 1e-9      // joint position vs its limits
#define DEFAULT_VEL_TOL 1e-6

cp_scene_options cp_scene_options_defaults(void) {
  cp_scene_options o = {.check_normal_speed = 1};
  return o;
}

static char *dupstr(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

// ---------------------------------------------------------------- readers --

static const json_t *member(const json_t *obj, const char *key) {
  return json_object_get(obj, key);
}

// Optional number: leaves *out unchanged when absent.
static int opt_number(const json_t *obj, const char *key, const char *path,
                      double *out, cp_error *err) {
  const json_t *v = member(obj, key);
  if (!v) return 0;
  char p[PATHBUF];
  return cp_json_number(v, cp_json_path_key(p, path, key), out, err);
}

static int opt_vector(const json_t *obj, const char *key, const char *path,
                      int n, double *out, cp_error *err) {
  const json_t *v = member(obj, key);
  if (!v) return 0;
  char p[PATHBUF];
  return cp_json_vector(v, cp_json_path_key(p, path, key), n, out, err);
}

// A direction: any non-zero finite length, normalised.
static int read_direction(const json_t *v, const char *path, double *d,
                          cp_error *err) {
  if (cp_json_vector(v, path, 3, d, err)) return -1;
  double n = cp_v3_norm(d);
  if (!(n > 1e-12) || !isfinite(n))
    return cp_error_set(err, path, "expected a non-zero direction vector");
  cp_v3_scale(d, d, 1.0 / n);
  return 0;
}

// A unit quaternion [w, x, y, z] to within UNIT_TOL, normalised.
static int read_quat(const json_t *v, const char *path, double *q,
                     cp_error *err) {
  if (cp_json_vector(v, path, 4, q, err)) return -1;
  double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (!(fabs(n - 1) <= UNIT_TOL))
    return cp_error_set(err, path,
                        "expected a unit quaternion [w, x, y, z]; its norm is "
                        "%.9g (allowed deviation from 1: %g)",
                        n, UNIT_TOL);
  for (int i = 0; i < 4; ++i) q[i] /= n;
  return 0;
}

static int positive(const json_t *v, const char *path, double *out,
                    cp_error *err) {
  if (cp_json_number(v, path, out, err)) return -1;
  if (!(*out > 0)) return cp_error_set(err, path, "expected a positive number, got %g", *out);
  return 0;
}

static int nonnegative(const json_t *v, const char *path, double *out,
                       cp_error *err) {
  if (cp_json_number(v, path, out, err)) return -1;
  if (!(*out >= 0))
    return cp_error_set(err, path, "expected a number >= 0, got %g", *out);
  return 0;
}

// Symmetric (relative SYM_TOL) and positive definite (Cholesky); symmetrised.
static int check_inertia(double *In, const char *path, cp_error *err) {
  double mx = 0;
  for (int i = 0; i < 9; ++i) mx = fmax(mx, fabs(In[i]));
  for (int r = 0; r < 3; ++r)
    for (int c = r + 1; c < 3; ++c) {
      if (fabs(In[3 * r + c] - In[3 * c + r]) > SYM_TOL * mx)
        return cp_error_set(err, path,
                            "inertia must be symmetric: element [%d][%d] = %g "
                            "but [%d][%d] = %g",
                            r, c, In[3 * r + c], c, r, In[3 * c + r]);
      In[3 * r + c] = In[3 * c + r] = 0.5 * (In[3 * r + c] + In[3 * c + r]);
    }
  // 3x3 Cholesky; a pivot below 1e-12 of the largest entry is not definite.
  double L[9] = {0};
  for (int j = 0; j < 3; ++j) {
    double d = In[3 * j + j];
    for (int k = 0; k < j; ++k) d -= L[3 * j + k] * L[3 * j + k];
    if (!(d > 1e-12 * mx))
      return cp_error_set(err, path,
                          "inertia must be symmetric positive definite");
    L[3 * j + j] = sqrt(d);
    for (int i = j + 1; i < 3; ++i) {
      double s = In[3 * i + j];
      for (int k = 0; k < j; ++k) s -= L[3 * i + k] * L[3 * j + k];
      L[3 * i + j] = s / L[3 * j + j];
    }
  }
  return 0;
}

static int read_inertia(const json_t *v, const char *path, double *In,
                        cp_error *err) {
  if (cp_json_mat3(v, path, In, err)) return -1;
  return check_inertia(In, path, err);
}

// Name for bodies, manipulators, links, joints: non-empty, no '/'.
static int read_name(const json_t *obj, const char *path, char **out,
                     cp_error *err) {
  char p[PATHBUF];
  cp_json_path_key(p, path, "name");
  const json_t *v = member(obj, "name");
  if (!v) return cp_error_set(err, p, "missing required key \"name\"");
  const char *s;
  if (cp_json_string(v, p, &s, err)) return -1;
  if (strchr(s, '/'))
    return cp_error_set(err, p,
                        "names may not contain '/' (it separates manipulator "
                        "and link names)");
  if (!(*out = dupstr(s))) return cp_error_setc(err, CP_ERR_NOMEM, p, "out of memory");
  return 0;
}

static int read_shape(const json_t *v, const char *path, int allow_plane,
                      cp_shape *s, cp_error *err) {
  char p[PATHBUF], p2[PATHBUF];
  memset(s, 0, sizeof *s);
  if (!json_is_object(v))
    return cp_error_set(err, path, "expected a shape object with a \"type\"");
  const char *type;
  const json_t *t = member(v, "type");
  cp_json_path_key(p, path, "type");
  if (!t) return cp_error_set(err, p, "missing required key \"type\"");
  if (cp_json_string(t, p, &type, err)) return -1;
  static const char *const kbox[] = {"type", "size", NULL};
  static const char *const ksphere[] = {"type", "radius", NULL};
  static const char *const kcyl[] = {"type", "radius", "length", NULL};
  static const char *const kplane[] = {"type", "normal", "offset", NULL};
  const char *const *keys;
  if (!strcmp(type, "box")) s->type = CP_SHAPE_BOX, keys = kbox;
  else if (!strcmp(type, "sphere")) s->type = CP_SHAPE_SPHERE, keys = ksphere;
  else if (!strcmp(type, "cylinder")) s->type = CP_SHAPE_CYLINDER, keys = kcyl;
  else if (!strcmp(type, "capsule")) s->type = CP_SHAPE_CAPSULE, keys = kcyl;
  else if (!strcmp(type, "plane")) s->type = CP_SHAPE_PLANE, keys = kplane;
  else
    return cp_error_set(err, p,
                        "unknown shape type \"%.40s\" (expected box, sphere, "
                        "cylinder, capsule or plane)",
                        type);
  if (s->type == CP_SHAPE_PLANE && !allow_plane)
    return cp_error_set(err, p,
                        "a plane can only be the shape of a fixed body");
  if (cp_json_check_object(v, path, keys, err)) return -1;
  for (const char *const *k = keys + 1; *k; ++k)
    if (!member(v, *k) && strcmp(*k, "offset"))
      return cp_error_set(err, cp_json_path_key(p, path, *k),
                          "missing required key \"%s\" of a %s", *k, type);
  switch (s->type) {
  case CP_SHAPE_BOX:
    if (cp_json_vector(member(v, "size"), cp_json_path_key(p, path, "size"), 3,
                       s->size, err))
      return -1;
    for (int i = 0; i < 3; ++i)
      if (!(s->size[i] > 0))
        return cp_error_set(err, cp_json_path_index(p2, p, (size_t)i),
                            "box extents must be positive, got %g",
                            s->size[i]);
    break;
  case CP_SHAPE_SPHERE:
  case CP_SHAPE_CYLINDER:
  case CP_SHAPE_CAPSULE:
    if (positive(member(v, "radius"), cp_json_path_key(p, path, "radius"),
                 &s->radius, err))
      return -1;
    if (s->type == CP_SHAPE_CYLINDER &&
        positive(member(v, "length"), cp_json_path_key(p, path, "length"),
                 &s->length, err))
      return -1;
    if (s->type == CP_SHAPE_CAPSULE &&
        nonnegative(member(v, "length"), cp_json_path_key(p, path, "length"),
                    &s->length, err))
      return -1;
    break;
  case CP_SHAPE_PLANE:
    if (read_direction(member(v, "normal"), cp_json_path_key(p, path, "normal"),
                       s->normal, err))
      return -1;
    if (opt_number(v, "offset", path, &s->offset, err)) return -1;
    break;
  case CP_SHAPE_MESH: // not a JSON type (meshes come from URDF files)
  case CP_SHAPE_NONE:
    break;
  }
  return 0;
}

// {position, orientation}: defaults zero / identity.
static int read_pose(const json_t *v, const char *path, double *pos,
                     double *quat, cp_error *err) {
  static const char *const keys[] = {"position", "orientation", NULL};
  char p[PATHBUF];
  cp_v3_set(pos, 0, 0, 0);
  quat[0] = 1, quat[1] = quat[2] = quat[3] = 0;
  if (cp_json_check_object(v, path, keys, err)) return -1;
  if (opt_vector(v, "position", path, 3, pos, err)) return -1;
  const json_t *q = member(v, "orientation");
  if (q && read_quat(q, cp_json_path_key(p, path, "orientation"), quat, err))
    return -1;
  return 0;
}

// ----------------------------------------------------------------- bodies --

// "planar": {"normal": [..]} of the body at path (velocities read): a
// coordinate axis of the world (either sign); the body's velocity along it
// and its angular velocity about the other two axes must be zero.
static int read_planar(const json_t *v, const char *path, const char *bpath,
                       cp_body *b, cp_error *err) {
  static const char *const keys[] = {"normal", "support_friction",
                                     "support_radius", NULL};
  char p[PATHBUF];
  if (b->fixed)
    return cp_error_set(err, path, "a fixed body cannot be planar (it never "
                                   "moves)");
  if (!json_is_object(v))
    return cp_error_set(err, path, "expected an object {\"normal\": [x, y, z]}");
  if (cp_json_check_object(v, path, keys, err)) return -1;
  const json_t *nv = member(v, "normal");
  cp_json_path_key(p, path, "normal");
  if (!nv) return cp_error_set(err, p, "missing required key \"normal\"");
  double n[3];
  if (read_direction(nv, p, n, err)) return -1;
  int axis = -1;
  for (int a = 0; a < 3; ++a)
    if (fabs(n[a]) == 1 && n[(a + 1) % 3] == 0 && n[(a + 2) % 3] == 0) axis = a;
  if (axis < 0)
    return cp_error_set(err, p,
                        "expected a world axis ([1, 0, 0], [0, 1, 0] or "
                        "[0, 0, 1], either sign): a tilted plane is not "
                        "supported (turn the scene instead)");
  if (b->v[axis] != 0)
    return cp_error_set(err, cp_json_path_key(p, bpath, "velocity"),
                        "a planar body cannot move along its normal: "
                        "component %d must be 0, got %g", axis, b->v[axis]);
  for (int a = 0; a < 3; ++a)
    if (a != axis && b->w[a] != 0)
      return cp_error_set(err, cp_json_path_key(p, bpath, "angular_velocity"),
                          "a planar body turns only about its normal: "
                          "component %d must be 0, got %g", a, b->w[a]);
  b->planar = 1 + axis;
  // Support friction (docs/simulate.md, "Support friction"): the plane
  // lies on a table; both keys >= 0, the radius only with a friction.
  const json_t *sf = member(v, "support_friction"), *sr = member(v, "support_radius");
  if (sf && nonnegative(sf, cp_json_path_key(p, path, "support_friction"),
                        &b->support_mu, err))
    return -1;
  if (sr) {
    cp_json_path_key(p, path, "support_radius");
    if (!sf) return cp_error_set(err, p, "needs \"support_friction\"");
    if (nonnegative(sr, p, &b->support_radius, err)) return -1;
  }
  return 0;
}

int cp_scene_refuse_planar(const cp_scene *sc, const char *what,
                           cp_error *err) {
  char p[PATHBUF];
  for (int i = 0; i < sc->n_bodies; ++i)
    if (sc->bodies[i].planar) {
      snprintf(p, sizeof p, "bodies[%d].planar", i);
      return cp_error_setc(err, CP_ERR_UNSUPPORTED, p,
                           "body \"%s\" is planar: %s does not support "
                           "planar bodies (the constraint is the "
                           "simulator's: simulate, plan, replay)",
                           sc->bodies[i].name, what);
    }
  return 0;
}

static int parse_body(const json_t *v, const char *path, cp_body *b,
                      cp_error *err) {
  static const char *const keys[] = {
      "name", "fixed", "shape", "mass", "inertia", "position", "orientation",
      "velocity", "angular_velocity", "planar", NULL};
  char p[PATHBUF];
  b->q[0] = 1;
  if (cp_json_check_object(v, path, keys, err)) return -1;
  if (read_name(v, path, &b->name, err)) return -1;
  const json_t *f = member(v, "fixed");
  if (f && cp_json_bool(f, cp_json_path_key(p, path, "fixed"), &b->fixed, err))
    return -1;
  const json_t *s = member(v, "shape");
  cp_json_path_key(p, path, "shape");
  if (!s) return cp_error_set(err, p, "missing required key \"shape\"");
  if (read_shape(s, p, b->fixed, &b->shape, err)) return -1;
  const json_t *m = member(v, "mass");
  cp_json_path_key(p, path, "mass");
  if (m) {
    if (positive(m, p, &b->mass, err)) return -1;
  } else if (!b->fixed) {
    return cp_error_set(err, p, "a free body needs a \"mass\" (kg, > 0)");
  }
  const json_t *In = member(v, "inertia");
  if (In) {
    if (read_inertia(In, cp_json_path_key(p, path, "inertia"), b->inertia, err))
      return -1;
    b->inertia_given = 1;
  } else if (b->mass > 0) {
    cp_shape_inertia(&b->shape, b->mass, b->inertia); // plane: zero
  }
  if (opt_vector(v, "position", path, 3, b->x, err)) return -1;
  const json_t *q = member(v, "orientation");
  if (q && read_quat(q, cp_json_path_key(p, path, "orientation"), b->q, err))
    return -1;
  if (opt_vector(v, "velocity", path, 3, b->v, err)) return -1;
  if (opt_vector(v, "angular_velocity", path, 3, b->w, err)) return -1;
  if (b->fixed) {
    if (cp_v3_norm(b->v) != 0)
      return cp_error_set(err, cp_json_path_key(p, path, "velocity"),
                          "a fixed body cannot move: velocity must be zero");
    if (cp_v3_norm(b->w) != 0)
      return cp_error_set(err, cp_json_path_key(p, path, "angular_velocity"),
                          "a fixed body cannot move: angular velocity must be "
                          "zero");
  }
  const json_t *pl = member(v, "planar");
  if (pl && read_planar(pl, cp_json_path_key(p, path, "planar"), path, b, err))
    return -1;
  return 0;
}

// ----------------------------------------------------------- manipulators --

// "shapes": [{"shape": {...}, "origin": {"position", "orientation"}}, ...]:
// several shapes, each posed in the link frame (position default: the
// link's com; orientation default: identity). The first is cp_link.shape.
static int read_link_shapes(const json_t *v, const char *path, cp_link *L,
                            cp_error *err) {
  static const char *const keys[] = {"shape", "origin", NULL};
  char p[PATHBUF], q[PATHBUF];
  size_t n = json_array_size(v);
  if (!json_is_array(v) || n == 0)
    return cp_error_set(err, path,
                        "expected a non-empty array of {\"shape\", "
                        "\"origin\"} objects");
  if (n > 100000) return cp_error_set(err, path, "too many shapes");
  if (n > 1 && !(L->extra_shapes = calloc(n - 1, sizeof *L->extra_shapes)))
    return cp_error_setc(err, CP_ERR_NOMEM, path, "out of memory");
  for (size_t i = 0; i < n; ++i) {
    const json_t *e = json_array_get(v, i);
    cp_json_path_index(p, path, i);
    if (cp_json_check_object(e, p, keys, err)) return -1;
    cp_link_shape ls = {.quat = {1, 0, 0, 0}};
    const json_t *sh = member(e, "shape");
    if (!sh)
      return cp_error_set(err, cp_json_path_key(q, p, "shape"),
                          "missing required key \"shape\"");
    if (read_shape(sh, cp_json_path_key(q, p, "shape"), 0, &ls.shape, err))
      return -1;
    cp_v3_copy(ls.pos, L->com);
    const json_t *o = member(e, "origin");
    if (o) {
      if (read_pose(o, cp_json_path_key(q, p, "origin"), ls.pos, ls.quat, err))
        return -1;
      if (!member(o, "position")) cp_v3_copy(ls.pos, L->com);
    }
    if (i == 0) {
      L->shape = ls.shape;
      cp_v3_copy(L->shape_pos, ls.pos);
      memcpy(L->shape_quat, ls.quat, sizeof ls.quat);
    } else {
      L->extra_shapes[L->n_extra_shapes++] = ls;
    }
  }
  return 0;
}

static int parse_link(const json_t *v, const char *path, cp_link *L,
                      cp_error *err) {
  static const char *const keys[] = {"name",  "mass",         "com", "inertia",
                                     "shape", "shape_origin", "shapes", NULL};
  char p[PATHBUF];
  if (cp_json_check_object(v, path, keys, err)) return -1;
  if (read_name(v, path, &L->name, err)) return -1;
  cp_json_path_key(p, path, "mass");
  const json_t *m = member(v, "mass");
  if (!m) return cp_error_set(err, p, "a link needs a \"mass\" (kg, > 0)");
  if (positive(m, p, &L->mass, err)) return -1;
  if (opt_vector(v, "com", path, 3, L->com, err)) return -1;
  const json_t *shapes = member(v, "shapes");
  if (shapes) {
    L->has_shape_pose = 1;
    cp_json_path_key(p, path, "shapes");
    if (member(v, "shape") || member(v, "shape_origin"))
      return cp_error_set(err, p,
                          "give \"shapes\" or \"shape\" (with "
                          "\"shape_origin\"), not both");
    if (read_link_shapes(shapes, p, L, err)) return -1;
    const json_t *In = member(v, "inertia");
    cp_json_path_key(p, path, "inertia");
    if (!In)
      return cp_error_set(err, p, "a link with \"shapes\" needs an "
                                  "\"inertia\"");
    return read_inertia(In, p, L->inertia, err);
  }
  const json_t *s = member(v, "shape");
  if (s && read_shape(s, cp_json_path_key(p, path, "shape"), 0, &L->shape, err))
    return -1;
  // Shape pose in the link frame: default at the centre of mass, link axes.
  L->has_shape_pose = 1;
  cp_v3_copy(L->shape_pos, L->com);
  L->shape_quat[0] = 1;
  const json_t *so = member(v, "shape_origin");
  if (so) {
    cp_json_path_key(p, path, "shape_origin");
    if (!s)
      return cp_error_set(err, p,
                          "\"shape_origin\" places the link's \"shape\", "
                          "which is missing");
    if (read_pose(so, p, L->shape_pos, L->shape_quat, err)) return -1;
    if (!member(so, "position")) cp_v3_copy(L->shape_pos, L->com);
  }
  const json_t *In = member(v, "inertia");
  if (In) {
    if (read_inertia(In, cp_json_path_key(p, path, "inertia"), L->inertia, err))
      return -1;
  } else if (L->shape.type != CP_SHAPE_NONE) {
    double d[3];
    cp_v3_sub(d, L->shape_pos, L->com);
    if (cp_v3_norm(d) > 0)
      return cp_error_set(err, cp_json_path_key(p, path, "inertia"),
                          "a link whose shape is not centred at its \"com\" "
                          "(\"shape_origin\") needs an \"inertia\"");
    cp_shape_inertia(&L->shape, L->mass, L->inertia);
    if (so) { // shape axes -> link axes
      double Is[9], R[9];
      memcpy(Is, L->inertia, sizeof Is);
      cp_quat_to_mat(R, L->shape_quat);
      cp_m3_rotate_sym(L->inertia, R, Is);
    }
  } else {
    return cp_error_set(err, cp_json_path_key(p, path, "inertia"),
                        "a link needs an \"inertia\" or a \"shape\" to take it "
                        "from");
  }
  return 0;
}

// The state and drive of a joint: position, velocity, and at most one of
// effort and acceleration (neither: effort-driven, zero effort). Shared by
// "joints" entries and the "state" map of URDF manipulators.
static int read_joint_state(const json_t *v, const char *path, cp_joint *j,
                            cp_error *err) {
  char p[PATHBUF];
  if (opt_number(v, "position", path, &j->position, err)) return -1;
  if (opt_number(v, "velocity", path, &j->velocity, err)) return -1;
  const json_t *e = member(v, "effort"), *acc = member(v, "acceleration");
  if (e && acc)
    return cp_error_set(err, cp_json_path_key(p, path, "acceleration"),
                        "give exactly one of \"effort\" (effort-driven) and "
                        "\"acceleration\" (acceleration-driven), not both");
  j->drive = acc ? CP_DRIVE_ACCELERATION : CP_DRIVE_EFFORT;
  if (opt_number(v, "effort", path, &j->effort, err)) return -1;
  if (opt_number(v, "acceleration", path, &j->acceleration, err)) return -1;
  return 0;
}

// "limits": {"lower", "upper", "effort", "velocity"}, all optional; lower
// and upper go together (has_limits), lower <= upper; effort, velocity >= 0.
static int read_limits(const json_t *v, const char *path, cp_joint *j,
                       cp_error *err) {
  static const char *const keys[] = {"lower", "upper", "effort", "velocity",
                                     NULL};
  char p[PATHBUF];
  if (cp_json_check_object(v, path, keys, err)) return -1;
  const json_t *lo = member(v, "lower"), *up = member(v, "upper");
  if (!lo != !up)
    return cp_error_set(err, cp_json_path_key(p, path, lo ? "upper" : "lower"),
                        "give both \"lower\" and \"upper\" (position "
                        "limits) or neither");
  if (lo) {
    if (opt_number(v, "lower", path, &j->lower, err)) return -1;
    if (opt_number(v, "upper", path, &j->upper, err)) return -1;
    if (!(j->lower <= j->upper))
      return cp_error_set(err, cp_json_path_key(p, path, "upper"),
                          "lower limit %g exceeds upper limit %g", j->lower,
                          j->upper);
    j->has_limits = 1;
  }
  const json_t *e = member(v, "effort"), *vel = member(v, "velocity");
  if (e && nonnegative(e, cp_json_path_key(p, path, "effort"),
                       &j->effort_limit, err))
    return -1;
  if (vel && nonnegative(vel, cp_json_path_key(p, path, "velocity"),
                         &j->velocity_limit, err))
    return -1;
  return 0;
}

static int parse_joint(const json_t *v, const char *path, cp_joint *j,
                       cp_error *err) {
  static const char *const keys[] = {
      "name", "type", "axis", "origin", "position", "velocity", "effort",
      "acceleration", "limits", "link", NULL};
  char p[PATHBUF];
  j->origin_quat[0] = 1;
  if (cp_json_check_object(v, path, keys, err)) return -1;
  if (read_name(v, path, &j->name, err)) return -1;
  const json_t *t = member(v, "type");
  cp_json_path_key(p, path, "type");
  const char *type;
  if (!t) return cp_error_set(err, p, "missing required key \"type\"");
  if (cp_json_string(t, p, &type, err)) return -1;
  if (!strcmp(type, "revolute")) j->type = CP_JOINT_REVOLUTE;
  else if (!strcmp(type, "prismatic")) j->type = CP_JOINT_PRISMATIC;
  else
    return cp_error_set(err, p,
                        "unknown joint type \"%.40s\" (expected revolute or "
                        "prismatic)",
                        type);
  const json_t *a = member(v, "axis");
  cp_json_path_key(p, path, "axis");
  if (!a) return cp_error_set(err, p, "missing required key \"axis\"");
  if (read_direction(a, p, j->axis, err)) return -1;
  const json_t *o = member(v, "origin");
  if (o && read_pose(o, cp_json_path_key(p, path, "origin"), j->origin_pos,
                     j->origin_quat, err))
    return -1;
  if (read_joint_state(v, path, j, err)) return -1;
  const json_t *lim = member(v, "limits");
  if (lim && read_limits(lim, cp_json_path_key(p, path, "limits"), j, err))
    return -1;
  if (j->has_limits && !(j->position >= j->lower - LIMIT_TOL &&
                         j->position <= j->upper + LIMIT_TOL))
    return cp_error_set(err, cp_json_path_key(p, path, "position"),
                        "joint \"%.60s\" is at position %g%s, outside its "
                        "limits [%g, %g]",
                        j->name, j->position,
                        member(v, "position") ? "" : " (the default)",
                        j->lower, j->upper);
  const json_t *l = member(v, "link");
  cp_json_path_key(p, path, "link");
  if (!l) return cp_error_set(err, p, "missing required key \"link\"");
  return parse_link(l, p, &j->link, err);
}

// Keeps a copy of a warning on the scene (dropped if out of memory: a
// warning is not worth failing the parse for).
static void scene_warn(cp_scene *s, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void scene_warn(cp_scene *s, const char *fmt, ...) {
  char **w = realloc(s->warnings, (size_t)(s->n_warnings + 1) * sizeof *w);
  if (!w) return;
  s->warnings = w;
  char buf[600];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  if ((w[s->n_warnings] = dupstr(buf))) ++s->n_warnings;
}

// A manipulator from a URDF file (models/urdf.h): the chain, then the
// "state" map of joint states (mimic followers are not in it: they move
// with their leaders), then the URDF position limits of every joint.
// The URDF root link's collision shapes (and those of links fixed to it)
// as fixed bodies "MANIP:LINK" of manipulator m (cp_body.base_of), placed
// by the manipulator's base.
static int add_base_bodies(cp_scene *sc, int m, cp_urdf_model *um,
                           const char *path, cp_error *err) {
  if (um->n_base_shapes == 0) return 0;
  const cp_chain *c = &sc->manips[m];
  char p[PATHBUF];
  cp_json_path_key(p, path, "urdf");
  cp_body *b = realloc(sc->bodies, (size_t)(sc->n_bodies + um->n_base_shapes) *
                                       sizeof *b);
  if (!b) return cp_error_setc(err, CP_ERR_NOMEM, p, "out of memory");
  sc->bodies = b;
  double R[9];
  cp_quat_to_mat(R, c->base_quat);
  for (int e = 0; e < um->n_base_shapes; ++e) {
    const cp_link_shape *ls = &um->base_shapes[e];
    cp_body *d = &sc->bodies[sc->n_bodies];
    memset(d, 0, sizeof *d);
    size_t n = strlen(c->name) + strlen(um->root) + 24;
    if (!(d->name = malloc(n)))
      return cp_error_setc(err, CP_ERR_NOMEM, p, "out of memory");
    if (e == 0) snprintf(d->name, n, "%s:%s", c->name, um->root);
    else snprintf(d->name, n, "%s:%s:%d", c->name, um->root, e + 1);
    sc->n_bodies++;
    for (int k = 0; k < sc->n_bodies - 1; ++k)
      if (!strcmp(sc->bodies[k].name, d->name))
        return cp_error_set(err, p,
                            "the root link's geometry would be the fixed body "
                            "\"%.100s\", a name bodies[%d] has already",
                            d->name, k);
    d->fixed = 1;
    d->base_of = m + 1;
    d->shape = ls->shape;
    if (d->shape.type == CP_SHAPE_MESH) cp_mesh_retain(d->shape.mesh);
    double r[3];
    cp_m3_mulv(r, R, ls->pos);
    cp_v3_add(d->x, c->base_pos, r);
    cp_quat_mul(d->q, c->base_quat, ls->quat);
  }
  return 0;
}

static int parse_urdf_manip(cp_scene *sc, const json_t *v, const char *path,
                            const char *base_dir, const cp_urdf_options *uo,
                            cp_chain *c, cp_error *err) {
  static const char *const skeys[] = {"position", "velocity", "effort",
                                      "acceleration", NULL};
  char p[PATHBUF], q[PATHBUF];
  const char *file;
  cp_json_path_key(p, path, "urdf");
  if (cp_json_string(member(v, "urdf"), p, &file, err)) return -1;
  size_t nd = base_dir && file[0] != '/' ? strlen(base_dir) : 0;
  char *full = malloc(nd + strlen(file) + 2);
  if (!full) return cp_error_setc(err, CP_ERR_NOMEM, p, "out of memory");
  if (nd)
    sprintf(full, "%s/%s", base_dir, file);
  else
    strcpy(full, file);
  cp_urdf_model um;
  cp_error uerr = {0};
  int rc = cp_urdf_load_opts(full, uo, &um, &uerr);
  free(full);
  if (rc) {
    if (uerr.where[0])
      return cp_error_setc(err, uerr.code, p, "%.100s %.30s: %s", file, uerr.where,
                           uerr.msg);
    return cp_error_setc(err, uerr.code, p, "%s", uerr.msg);
  }
  for (int i = 0; i < um.n_warnings; ++i)
    scene_warn(sc, "%s: %s %s", p, file, um.warnings[i]);
  // Take the chain over, keeping the name and base read from the scene.
  c->n = um.chain.n;
  c->joints = um.chain.joints;
  c->parent = um.chain.parent;
  um.chain.joints = NULL;
  um.chain.parent = NULL;
  um.chain.n = 0;
  const json_t *st = member(v, "state");
  cp_json_path_key(p, path, "state");
  if (st) {
    if (!json_is_object(st)) {
      cp_urdf_free(&um);
      return cp_error_set(err, p,
                          "expected an object mapping joint names to "
                          "{\"position\", \"velocity\", \"effort\" | "
                          "\"acceleration\"}");
    }
    const char *key;
    const json_t *js;
    json_object_foreach((json_t *)st, key, js) {
      cp_json_path_key(q, p, key);
      int k = 0;
      while (k < c->n && strcmp(c->joints[k].name, key)) ++k;
      if (k < c->n && c->joints[k].is_mimic) {
        rc = cp_error_set(err, q,
                          "joint \"%.60s\" mimics \"%.60s\" (%.100s line "
                          "%d): give the leader's state; the follower moves "
                          "with it",
                          key, c->joints[c->joints[k].mimic_leader].name, file,
                          um.joint_line[k]);
        cp_urdf_free(&um);
        return rc;
      }
      if (k == c->n) {
        char names[200] = "";
        for (int i = 0; i < c->n; ++i) {
          size_t len = strlen(names);
          if (!c->joints[i].is_mimic)
            snprintf(names + len, sizeof names - len, "%s%s", len ? ", " : "",
                     c->joints[i].name);
        }
        cp_urdf_free(&um);
        return cp_error_set(err, q,
                            "unknown joint \"%.60s\" (the movable joints of "
                            "the URDF are: %s)",
                            key, names);
      }
      if (cp_json_check_object(js, q, skeys, err) ||
          read_joint_state(js, q, &c->joints[k], err)) {
        cp_urdf_free(&um);
        return -1;
      }
    }
  }
  cp_chain_apply_mimic(c);
  for (int k = 0; k < c->n; ++k) {
    const cp_urdf_limit *lim = &um.limits[k];
    const cp_joint *jk = &c->joints[k];
    double x = jk->position;
    if (!lim->bounded ||
        (x >= lim->lower - LIMIT_TOL && x <= lim->upper + LIMIT_TOL))
      continue;
    // A follower's position comes from its leader's entry.
    const char *named = jk->is_mimic ? c->joints[jk->mimic_leader].name : jk->name;
    const json_t *js = st ? member(st, named) : NULL;
    char r[PATHBUF], mim[200] = "";
    if (js && member(js, "position"))
      cp_json_path_key(q, cp_json_path_key(r, p, named), "position");
    else
      cp_json_path_key(q, path, "urdf");
    if (jk->is_mimic)
      snprintf(mim, sizeof mim, " (it mimics \"%.60s\" at %g)",
               c->joints[jk->mimic_leader].name,
               c->joints[jk->mimic_leader].position);
    rc = cp_error_set(err, q,
                      "joint \"%.60s\"%s is at position %g%s, outside its "
                      "URDF limits [%g, %g] (%.100s line %d)",
                      jk->name, mim, x,
                      js && member(js, "position") ? "" : " (no state given)",
                      lim->lower, lim->upper, file, um.joint_line[k]);
    break;
  }
  if (!rc) rc = add_base_bodies(sc, (int)(c - sc->manips), &um, path, err);
  cp_urdf_free(&um);
  return rc;
}

static int parse_manip(cp_scene *sc, const json_t *v, const char *path,
                       const char *base_dir, const cp_urdf_options *uo,
                       cp_chain *c, cp_error *err) {
  static const char *const keys[] = {"name", "base", "joints", "urdf", "state",
                                     "self_contacts", NULL};
  char p[PATHBUF];
  c->base_quat[0] = 1;
  if (cp_json_check_object(v, path, keys, err)) return -1;
  if (read_name(v, path, &c->name, err)) return -1;
  // Pairs within the manipulator: on for "joints" chains, off for URDF
  // ones (their meshes of nearby links overlap by design; ROS lists the
  // pairs to ignore in an SRDF, which complan does not read).
  int self = !member(v, "urdf");
  const json_t *sc_v = member(v, "self_contacts");
  if (sc_v && cp_json_bool(sc_v, cp_json_path_key(p, path, "self_contacts"),
                           &self, err))
    return -1;
  c->no_self_contacts = !self;
  const json_t *b = member(v, "base");
  if (b && read_pose(b, cp_json_path_key(p, path, "base"), c->base_pos,
                     c->base_quat, err))
    return -1;
  if (member(v, "urdf")) {
    if (member(v, "joints"))
      return cp_error_set(err, cp_json_path_key(p, path, "joints"),
                          "give either \"joints\" or \"urdf\", not both");
    return parse_urdf_manip(sc, v, path, base_dir, uo, c, err);
  }
  if (member(v, "state"))
    return cp_error_set(err, cp_json_path_key(p, path, "state"),
                        "\"state\" goes with \"urdf\"; give the joint states "
                        "inside \"joints\"");
  const json_t *js = member(v, "joints");
  cp_json_path_key(p, path, "joints");
  if (!js) return cp_error_set(err, p, "missing required key \"joints\"");
  if (!json_is_array(js) || json_array_size(js) == 0)
    return cp_error_set(err, p, "expected a non-empty array of joints");
  size_t n = json_array_size(js);
  if (n > 100000) return cp_error_set(err, p, "too many joints");
  c->joints = calloc(n, sizeof *c->joints);
  if (!c->joints) return cp_error_setc(err, CP_ERR_NOMEM, p, "out of memory");
  c->n = (int)n;
  for (size_t i = 0; i < n; ++i) {
    char q[PATHBUF];
    if (parse_joint(json_array_get(js, i), cp_json_path_index(q, p, i),
                    &c->joints[i], err))
      return -1;
  }
  // Joint and link names unique within the manipulator.
  for (int i = 0; i < c->n; ++i)
    for (int k = 0; k < i; ++k) {
      char q[PATHBUF], r[PATHBUF];
      cp_json_path_index(q, p, (size_t)i);
      if (!strcmp(c->joints[i].name, c->joints[k].name))
        return cp_error_set(err, cp_json_path_key(r, q, "name"),
                            "duplicate joint name \"%.60s\" in manipulator "
                            "\"%.60s\"",
                            c->joints[i].name, c->name);
      if (!strcmp(c->joints[i].link.name, c->joints[k].link.name)) {
        cp_json_path_key(r, q, "link");
        return cp_error_set(err, cp_json_path_key(q, r, "name"),
                            "duplicate link name \"%.60s\" in manipulator "
                            "\"%.60s\"",
                            c->joints[i].link.name, c->name);
      }
    }
  return 0;
}

// ---------------------------------------------------------------- lookups --

int cp_scene_find(const cp_scene *s, const char *name, cp_ref *ref) {
  const char *slash = strchr(name, '/');
  if (!slash) {
    for (int i = 0; i < s->n_bodies; ++i)
      if (!strcmp(s->bodies[i].name, name)) {
        *ref = (cp_ref){i, -1, -1};
        return 0;
      }
    return -1;
  }
  size_t ml = (size_t)(slash - name);
  for (int m = 0; m < s->n_manips; ++m) {
    const cp_chain *c = &s->manips[m];
    if (strlen(c->name) != ml || strncmp(c->name, name, ml)) continue;
    for (int k = 0; k < c->n; ++k)
      if (!strcmp(c->joints[k].link.name, slash + 1)) {
        *ref = (cp_ref){-1, m, k};
        return 0;
      }
  }
  return -1;
}

const char *cp_scene_ref_name(const cp_scene *s, cp_ref r, char *buf,
                              size_t size) {
  if (r.body >= 0)
    snprintf(buf, size, "%s", s->bodies[r.body].name);
  else
    snprintf(buf, size, "%s/%s", s->manips[r.manip].name,
             s->manips[r.manip].joints[r.link].link.name);
  return buf;
}

int cp_scene_ref_fixed(const cp_scene *s, cp_ref r) {
  return r.body >= 0 && s->bodies[r.body].fixed;
}

int cp_scene_joint_count(const cp_scene *s) {
  int n = 0;
  for (int m = 0; m < s->n_manips; ++m) n += cp_chain_dofs(&s->manips[m]);
  return n;
}

// How specifically a pair name matches ref: 2 body/link, 1 manipulator, 0 no.
static int name_match(const cp_scene *s, const char *name, cp_ref r) {
  if (r.body >= 0) return strcmp(s->bodies[r.body].name, name) ? 0 : 2;
  const cp_chain *c = &s->manips[r.manip];
  if (!strcmp(c->name, name)) return 1;
  size_t ml = strlen(c->name);
  if (!strncmp(name, c->name, ml) && name[ml] == '/' &&
      !strcmp(name + ml + 1, c->joints[r.link].link.name))
    return 2;
  return 0;
}

// The most specific entry of a pair table matching (a, b), else def.
static double pair_lookup(const cp_scene *s, const cp_friction_pair *pairs,
                          int n, double def, cp_ref a, cp_ref b) {
  double mu = def;
  int best = 0;
  for (int i = 0; i < n; ++i) {
    const cp_friction_pair *fp = &pairs[i];
    int m1a = name_match(s, fp->a, a), m1b = name_match(s, fp->b, b);
    int m2a = name_match(s, fp->b, a), m2b = name_match(s, fp->a, b);
    int sc1 = m1a && m1b ? m1a + m1b : 0, sc2 = m2a && m2b ? m2a + m2b : 0;
    int sc = sc1 > sc2 ? sc1 : sc2;
    if (sc > best) best = sc, mu = fp->mu;
  }
  return mu;
}

double cp_scene_friction(const cp_scene *s, cp_ref a, cp_ref b) {
  return pair_lookup(s, s->pairs, s->n_pairs, s->mu_default, a, b);
}

double cp_scene_restitution(const cp_scene *s, cp_ref a, cp_ref b) {
  return pair_lookup(s, s->epairs, s->n_epairs, s->e_default, a, b);
}

// -------------------------------------------------------------- kinematics --

void cp_scene_frame(const cp_scene *s, cp_ref r, double *R, double *x) {
  if (r.body >= 0) {
    cp_quat_to_mat(R, s->bodies[r.body].q);
    cp_v3_copy(x, s->bodies[r.body].x);
    return;
  }
  const cp_chain *c = &s->manips[r.manip];
  cp_link_state *st = malloc((size_t)c->n * sizeof *st);
  if (!st) {
    for (int i = 0; i < 9; ++i) R[i] = NAN;
    cp_v3_set(x, NAN, NAN, NAN);
    return;
  }
  cp_chain_kinematics(c, st);
  memcpy(R, st[r.link].R, sizeof st[r.link].R);
  cp_v3_copy(x, st[r.link].o);
  free(st);
}

void cp_scene_point_velocity(const cp_scene *s, cp_ref r, const double *p,
                             double *vel, double *w) {
  double vv[3] = {0, 0, 0}, ww[3] = {0, 0, 0};
  if (r.body >= 0) {
    const cp_body *b = &s->bodies[r.body];
    if (!b->fixed) {
      double d[3], t[3];
      cp_v3_sub(d, p, b->x);
      cp_v3_cross(t, b->w, d);
      cp_v3_add(vv, b->v, t);
      cp_v3_copy(ww, b->w);
    }
  } else {
    const cp_chain *c = &s->manips[r.manip];
    cp_link_state *st = malloc((size_t)c->n * sizeof *st);
    if (st) {
      cp_chain_kinematics(c, st);
      cp_chain_point_velocity(st, r.link, p, vv);
      cp_v3_copy(ww, st[r.link].w);
      free(st);
    } else {
      cp_v3_set(vv, NAN, NAN, NAN);
      cp_v3_set(ww, NAN, NAN, NAN);
    }
  }
  if (vel) cp_v3_copy(vel, vv);
  if (w) cp_v3_copy(w, ww);
}

void cp_scene_contact_velocity(const cp_scene *s, int j, double *vc) {
  const cp_contact *c = &s->contacts[j];
  double va[3], vb[3], d[3];
  cp_scene_point_velocity(s, c->a, c->p, va, NULL);
  cp_scene_point_velocity(s, c->b, c->p, vb, NULL);
  cp_v3_sub(d, va, vb);
  vc[0] = cp_v3_dot(c->n, d);
  vc[1] = cp_v3_dot(c->t, d);
  vc[2] = cp_v3_dot(c->o, d);
}

int cp_scene_check_normal_speeds(const cp_scene *s, cp_error *err) {
  for (int j = 0; j < s->n_contacts; ++j) {
    double vc[3];
    cp_scene_contact_velocity(s, j, vc);
    // The state is finite (ranges): NaN is cp_scene_point_velocity's sign
    // that its scratch allocation failed.
    if (isnan(vc[0])) return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory checking contact speeds");
    if (!(fabs(vc[0]) <= s->velocity_tolerance)) {
      char p[PATHBUF], an[96], bn[96];
      cp_json_path_index(p, "contacts", (size_t)j);
      return cp_error_set(
          err, p,
          "contact %d (%s on %s): normal relative speed %.6g m/s (%s) exceeds "
          "the tolerance %g m/s; a contact must neither approach (an impact) "
          "nor separate",
          j, cp_scene_ref_name(s, s->contacts[j].a, an, sizeof an),
          cp_scene_ref_name(s, s->contacts[j].b, bn, sizeof bn), vc[0],
          vc[0] < 0 ? "approaching" : "separating", s->velocity_tolerance);
    }
  }
  return 0;
}

// -------------------------------------------------------------- contacts --

// Deterministic tangent: the world axis least aligned with n.
void cp_scene_default_tangent(const double *n, double *t) {
  int k = 0;
  for (int i = 1; i < 3; ++i)
    if (fabs(n[i]) < fabs(n[k])) k = i;
  // t = e_k - (e_k . n) n with the unit vector e_k written out (the same
  // operations as with an array e: a store to e[k] between zeroing e and
  // reading it back stalled store forwarding, 4 % of a resting box's step).
  const double nk = n[k];
  for (int i = 0; i < 3; ++i) t[i] = (i == k ? 1.0 : 0.0) + -nk * n[i];
  cp_v3_scale(t, t, 1.0 / cp_v3_norm(t));
}

static int read_ref(const cp_scene *s, const json_t *v, const char *path,
                    const char *key, cp_ref *r, cp_error *err) {
  char p[PATHBUF];
  const char *name;
  cp_json_path_key(p, path, key);
  const json_t *x = member(v, key);
  if (!x) return cp_error_set(err, p, "missing required key \"%s\"", key);
  if (cp_json_string(x, p, &name, err)) return -1;
  if (cp_scene_find(s, name, r))
    return cp_error_set(err, p,
                        "unknown body or link \"%.80s\" (links are named "
                        "\"manipulator/link\")",
                        name);
  return 0;
}

static int parse_contact(cp_scene *s, const json_t *v, const char *path,
                         cp_contact *c, cp_error *err) {
  static const char *const keys[] = {"a", "b", "point", "normal", "tangent",
                                     "mu", "mu_torsion", "restitution", NULL};
  char p[PATHBUF];
  if (cp_json_check_object(v, path, keys, err)) return -1;
  if (read_ref(s, v, path, "a", &c->a, err)) return -1;
  if (read_ref(s, v, path, "b", &c->b, err)) return -1;
  if (c->a.body == c->b.body && c->a.manip == c->b.manip &&
      c->a.link == c->b.link)
    return cp_error_set(err, cp_json_path_key(p, path, "b"),
                        "a contact joins two different bodies; a and b are "
                        "the same");
  if (cp_scene_ref_fixed(s, c->a) && cp_scene_ref_fixed(s, c->b))
    return cp_error_set(err, path,
                        "contact between two fixed bodies (\"%.60s\" and "
                        "\"%.60s\"): at least one must move",
                        s->bodies[c->a.body].name, s->bodies[c->b.body].name);
  const json_t *x = member(v, "point");
  cp_json_path_key(p, path, "point");
  if (!x) return cp_error_set(err, p, "missing required key \"point\"");
  if (cp_json_vector(x, p, 3, c->p, err)) return -1;
  x = member(v, "normal");
  cp_json_path_key(p, path, "normal");
  if (!x) return cp_error_set(err, p, "missing required key \"normal\"");
  if (read_direction(x, p, c->n, err)) return -1;
  x = member(v, "tangent");
  if (x) {
    cp_json_path_key(p, path, "tangent");
    if (read_direction(x, p, c->t, err)) return -1;
    double d = cp_v3_dot(c->t, c->n);
    if (!(fabs(d) <= UNIT_TOL))
      return cp_error_set(err, p,
                          "the tangent must be orthogonal to the normal: "
                          "cos(angle) = %.6g (allowed: %g)",
                          d, UNIT_TOL);
    cp_v3_axpy(c->t, c->t, -d, c->n);
    cp_v3_scale(c->t, c->t, 1.0 / cp_v3_norm(c->t));
  } else {
    cp_scene_default_tangent(c->n, c->t);
  }
  cp_v3_cross(c->o, c->n, c->t);
  c->mu = cp_scene_friction(s, c->a, c->b);
  x = member(v, "mu");
  if (x && nonnegative(x, cp_json_path_key(p, path, "mu"), &c->mu, err))
    return -1;
  x = member(v, "mu_torsion");
  if (x) {
    if (nonnegative(x, cp_json_path_key(p, path, "mu_torsion"), &c->mu_torsion,
                    err))
      return -1;
    c->has_torsion = 1;
  }
  x = member(v, "restitution");
  if (x) {
    cp_json_path_key(p, path, "restitution");
    if (cp_json_number(x, p, &c->restitution, err)) return -1;
    if (!(c->restitution >= 0 && c->restitution <= 1))
      return cp_error_set(err, p, "restitution must be in [0, 1], got %g",
                          c->restitution);
  }
  return 0;
}

// ------------------------------------------------------------ the scene --

static int check_names(const cp_scene *s, cp_error *err) {
  char p[PATHBUF], q[PATHBUF];
  for (int i = 0; i < s->n_bodies; ++i)
    for (int k = 0; k < i; ++k)
      if (!strcmp(s->bodies[i].name, s->bodies[k].name)) {
        cp_json_path_index(q, "bodies", (size_t)i);
        return cp_error_set(err, cp_json_path_key(p, q, "name"),
                            "duplicate name \"%.60s\" (also bodies[%d])",
                            s->bodies[i].name, k);
      }
  for (int m = 0; m < s->n_manips; ++m) {
    cp_json_path_index(q, "manipulators", (size_t)m);
    cp_json_path_key(p, q, "name");
    for (int k = 0; k < m; ++k)
      if (!strcmp(s->manips[m].name, s->manips[k].name))
        return cp_error_set(err, p,
                            "duplicate manipulator name \"%.60s\" (also "
                            "manipulators[%d])",
                            s->manips[m].name, k);
    for (int k = 0; k < s->n_bodies; ++k)
      if (!strcmp(s->manips[m].name, s->bodies[k].name))
        return cp_error_set(err, p,
                            "name \"%.60s\" is used by bodies[%d] too; names "
                            "must be unique",
                            s->manips[m].name, k);
  }
  return 0;
}

// A per-pair coefficient table {"default": x, "pairs": [{a, b, KEY}]}
// (top-level "friction" with KEY "mu", "restitution" with KEY "e"); values
// >= 0, and <= hi. Fills *def, *pairs and *np (mu holds the value).
static int parse_pair_table(cp_scene *s, const json_t *v, const char *section,
                            const char *key, double hi, double *def,
                            cp_friction_pair **pairs_out, int *np,
                            cp_error *err) {
  const char *const keys[] = {"default", "pairs", NULL};
  const char *const pkeys[] = {"a", "b", key, NULL};
  char p[PATHBUF], q[PATHBUF];
  if (cp_json_check_object(v, section, keys, err)) return -1;
  const json_t *d = member(v, "default");
  cp_json_path_key(p, section, "default");
  if (d && nonnegative(d, p, def, err)) return -1;
  if (d && *def > hi)
    return cp_error_set(err, p, "must be <= %g, got %g", hi, *def);
  const json_t *pairs = member(v, "pairs");
  if (!pairs) return 0;
  cp_json_path_key(q, section, "pairs");
  char pp[PATHBUF];
  snprintf(pp, sizeof pp, "%s", q);
  if (!json_is_array(pairs))
    return cp_error_set(err, pp, "expected an array of pairs");
  size_t n = json_array_size(pairs);
  if (n == 0) return 0;
  cp_friction_pair *tab = calloc(n, sizeof *tab);
  if (!tab) return cp_error_setc(err, CP_ERR_NOMEM, pp, "out of memory");
  *pairs_out = tab;
  for (size_t i = 0; i < n; ++i) {
    const json_t *e = json_array_get(pairs, i);
    cp_json_path_index(p, pp, i);
    cp_friction_pair *fp = &tab[i];
    *np = (int)i + 1;
    if (cp_json_check_object(e, p, pkeys, err)) return -1;
    const char *names[2];
    for (int k = 0; k < 2; ++k) {
      const char *nk = k ? "b" : "a";
      cp_json_path_key(q, p, nk);
      const json_t *x = member(e, nk);
      if (!x) return cp_error_set(err, q, "missing required key \"%s\"", nk);
      if (cp_json_string(x, q, &names[k], err)) return -1;
      cp_ref r;
      int known = !cp_scene_find(s, names[k], &r);
      for (int m = 0; m < s->n_manips && !known; ++m)
        known = !strcmp(s->manips[m].name, names[k]);
      if (!known)
        return cp_error_set(err, q,
                            "unknown body, link or manipulator \"%.80s\"",
                            names[k]);
    }
    if (!(fp->a = dupstr(names[0])) || !(fp->b = dupstr(names[1])))
      return cp_error_setc(err, CP_ERR_NOMEM, p, "out of memory");
    cp_json_path_key(q, p, key);
    const json_t *x = member(e, key);
    if (!x) return cp_error_set(err, q, "missing required key \"%s\"", key);
    if (nonnegative(x, q, &fp->mu, err)) return -1;
    if (fp->mu > hi)
      return cp_error_set(err, q, "must be <= %g, got %g", hi, fp->mu);
    for (size_t k = 0; k < i; ++k) {
      const cp_friction_pair *o = &tab[k];
      if ((!strcmp(o->a, fp->a) && !strcmp(o->b, fp->b)) ||
          (!strcmp(o->a, fp->b) && !strcmp(o->b, fp->a)))
        return cp_error_set(err, p,
                            "duplicate %s pair (\"%.60s\", \"%.60s\"), "
                            "also %s[%zu]",
                            section, fp->a, fp->b, pp, k);
    }
  }
  return 0;
}

static int parse_friction(cp_scene *s, const json_t *v, cp_error *err) {
  return parse_pair_table(s, v, "friction", "mu", INFINITY, &s->mu_default,
                          &s->pairs, &s->n_pairs, err);
}

// "packages": {"NAME": "dir", ...}, folders relative to base_dir, for the
// package:// paths of URDF meshes (models/urdf.h). Fills pk[0..n-1] with
// malloc'd folder strings (freed by the caller) pointing at the JSON names.
static int parse_packages(const json_t *v, const char *base_dir,
                          cp_urdf_package **out, int *n_out, cp_error *err) {
  *out = NULL;
  *n_out = 0;
  if (!json_is_object(v))
    return cp_error_set(err, "packages",
                        "expected an object mapping ROS package names to "
                        "folders");
  size_t n = json_object_size(v);
  if (n == 0) return 0;
  cp_urdf_package *pk = calloc(n, sizeof *pk);
  if (!pk) return cp_error_setc(err, CP_ERR_NOMEM, "packages", "out of memory");
  *out = pk;
  const char *key;
  const json_t *d;
  char p[PATHBUF];
  json_object_foreach((json_t *)v, key, d) {
    const char *dir;
    cp_json_path_key(p, "packages", key);
    if (!*key || strchr(key, '/'))
      return cp_error_set(err, p, "a package name is non-empty, without '/'");
    if (cp_json_string(d, p, &dir, err)) return -1;
    if (!*dir) return cp_error_set(err, p, "expected a folder, got \"\"");
    size_t nb = base_dir && dir[0] != '/' ? strlen(base_dir) : 0;
    char *full = malloc(nb + strlen(dir) + 2);
    if (!full) return cp_error_setc(err, CP_ERR_NOMEM, p, "out of memory");
    if (nb) sprintf(full, "%s/%s", base_dir, dir);
    else strcpy(full, dir);
    pk[*n_out].name = key;
    pk[*n_out].dir = full;
    ++*n_out;
  }
  return 0;
}

static int parse_scene_body(const json_t *root, const cp_scene_options *opts,
                            const char *base_dir, const cp_urdf_options *uo,
                            cp_scene *s, cp_error *err);

static int parse_scene(const json_t *root, const cp_scene_options *opts,
                       const char *base_dir, cp_scene *s, cp_error *err) {
  cp_urdf_options uo = cp_urdf_defaults();
  cp_urdf_package *pk = NULL;
  int rc = 0;
  const json_t *pv = json_is_object(root) ? member(root, "packages") : NULL;
  if (pv) rc = parse_packages(pv, base_dir, &pk, &uo.n_packages, err);
  uo.packages = pk;
  uo.files = opts->files;
  if (!rc) rc = parse_scene_body(root, opts, base_dir, &uo, s, err);
  for (int i = 0; i < uo.n_packages; ++i) free((char *)pk[i].dir);
  free(pk);
  return rc;
}

// The objects (bodies, "manip/link" links) whose names match pattern
// (fnmatch: *, ?, [..]) into refs (up to cap); returns how many, -1 when
// more than cap.
static int match_objects(const cp_scene *s, const char *pattern, cp_ref *refs,
                         int cap) {
  int n = 0;
  for (int i = 0; i < s->n_bodies; ++i)
    if (!fnmatch(pattern, s->bodies[i].name, 0)) {
      if (n == cap) return -1;
      refs[n++] = (cp_ref){i, -1, -1};
    }
  for (int m = 0; m < s->n_manips; ++m)
    for (int k = 0; k < s->manips[m].n; ++k) {
      char name[512];
      snprintf(name, sizeof name, "%s/%s", s->manips[m].name,
               s->manips[m].joints[k].link.name);
      if (!fnmatch(pattern, name, 0)) {
        if (n == cap) return -1;
        refs[n++] = (cp_ref){-1, m, k};
      }
    }
  return n;
}

// "ignore_pairs": [[A, B], ...], each name a body, "manip/link" or a
// pattern of them: every matching pair (an object with itself excepted) is
// kept in s->ignore for contact generation to skip.
static int parse_ignore_pairs(cp_scene *s, const json_t *v, cp_error *err) {
  if (!json_is_array(v))
    return cp_error_set(err, "ignore_pairs",
                        "expected an array of [name, name] pairs");
  int cap = s->n_bodies + 1;
  for (int m = 0; m < s->n_manips; ++m) cap += s->manips[m].n;
  cp_ref *ra = malloc(2 * (size_t)cap * sizeof *ra), *rb = ra + cap;
  if (!ra) return cp_error_setc(err, CP_ERR_NOMEM, "ignore_pairs", "out of memory");
  int rc = 0;
  for (size_t i = 0; i < json_array_size(v) && !rc; ++i) {
    char p[PATHBUF], q[PATHBUF];
    cp_json_path_index(p, "ignore_pairs", i);
    const json_t *pr = json_array_get(v, i);
    if (!json_is_array(pr) || json_array_size(pr) != 2 ||
        !json_is_string(json_array_get(pr, 0)) ||
        !json_is_string(json_array_get(pr, 1))) {
      rc = cp_error_set(err, p, "expected [name, name] (bodies, "
                                "\"manipulator/link\", * patterns)");
      break;
    }
    int na = 0, nb = 0;
    for (int side = 0; side < 2 && !rc; ++side) {
      const char *pat = json_string_value(json_array_get(pr, (size_t)side));
      int n = match_objects(s, pat, side ? rb : ra, cap);
      if (n == 0)
        rc = cp_error_set(err, cp_json_path_index(q, p, (size_t)side),
                          "\"%.100s\" names no body and no link of the scene",
                          pat);
      if (side) nb = n;
      else na = n;
    }
    if (rc) break;
    if ((long)s->n_ignore + (long)na * nb > 1000000) {
      rc = cp_error_set(err, p, "more than 10^6 ignored pairs in all");
      break;
    }
    cp_ref *g = realloc(s->ignore, 2 * (size_t)(s->n_ignore + na * nb) * sizeof *g);
    if (!g) {
      rc = cp_error_setc(err, CP_ERR_NOMEM, p, "out of memory");
      break;
    }
    s->ignore = g;
    for (int a = 0; a < na; ++a)
      for (int b = 0; b < nb; ++b) {
        g[2 * s->n_ignore] = ra[a];
        g[2 * s->n_ignore + 1] = rb[b];
        s->n_ignore++;
      }
  }
  free(ra);
  return rc;
}

static int parse_scene_body(const json_t *root, const cp_scene_options *opts,
                            const char *base_dir, const cp_urdf_options *uo,
                            cp_scene *s, cp_error *err) {
  static const char *const keys[] = {
      "gravity", "friction", "bodies", "manipulators", "contacts",
      "velocity_tolerance", "penetration_tolerance", "touch_tolerance", "name",
      "comment", "packages", "restitution", "ignore_pairs", NULL};
  if (cp_json_check_object(root, "", keys, err)) return -1;
  const char *str;
  if (member(root, "name") && cp_json_string(member(root, "name"), "name", &str, err))
    return -1;
  if (member(root, "comment") && !json_is_string(member(root, "comment")))
    return cp_error_set(err, "comment", "expected a string");
  cp_v3_set(s->gravity, 0, 0, -9.81);
  s->mu_default = DEFAULT_MU;
  s->velocity_tolerance = DEFAULT_VEL_TOL;
  if (opt_vector(root, "gravity", "", 3, s->gravity, err)) return -1;
  const json_t *vt = member(root, "velocity_tolerance");
  if (vt && positive(vt, "velocity_tolerance", &s->velocity_tolerance, err))
    return -1;
  s->penetration_tolerance = CP_SCENE_PENETRATION_TOL;
  s->touch_tolerance = CP_SCENE_TOUCH_TOL;
  const json_t *pt = member(root, "penetration_tolerance");
  if (pt && nonnegative(pt, "penetration_tolerance",
                        &s->penetration_tolerance, err))
    return -1;
  const json_t *tt = member(root, "touch_tolerance");
  if (tt && nonnegative(tt, "touch_tolerance", &s->touch_tolerance, err))
    return -1;

  const json_t *bodies = member(root, "bodies");
  if (bodies) {
    if (!json_is_array(bodies))
      return cp_error_set(err, "bodies", "expected an array of bodies");
    size_t n = json_array_size(bodies);
    if (n > 1000000) return cp_error_set(err, "bodies", "too many bodies");
    if (n) {
      s->bodies = calloc(n, sizeof *s->bodies);
      if (!s->bodies) return cp_error_setc(err, CP_ERR_NOMEM, "bodies", "out of memory");
    }
    for (size_t i = 0; i < n; ++i) {
      char p[PATHBUF];
      s->n_bodies = (int)i + 1;
      if (parse_body(json_array_get(bodies, i),
                     cp_json_path_index(p, "bodies", i), &s->bodies[i], err))
        return -1;
    }
  }
  const json_t *manips = member(root, "manipulators");
  if (manips) {
    if (!json_is_array(manips))
      return cp_error_set(err, "manipulators",
                          "expected an array of manipulators");
    size_t n = json_array_size(manips);
    if (n > 100000)
      return cp_error_set(err, "manipulators", "too many manipulators");
    if (n) {
      s->manips = calloc(n, sizeof *s->manips);
      if (!s->manips) return cp_error_setc(err, CP_ERR_NOMEM, "manipulators", "out of memory");
    }
    for (size_t i = 0; i < n; ++i) {
      char p[PATHBUF];
      s->n_manips = (int)i + 1;
      if (parse_manip(s, json_array_get(manips, i),
                      cp_json_path_index(p, "manipulators", i), base_dir, uo,
                      &s->manips[i], err))
        return -1;
    }
  }
  if (check_names(s, err)) return -1;
  const json_t *ig = member(root, "ignore_pairs");
  if (ig && parse_ignore_pairs(s, ig, err)) return -1;
  const json_t *fr = member(root, "friction");
  if (fr && parse_friction(s, fr, err)) return -1;
  const json_t *rs = member(root, "restitution");
  if (rs && parse_pair_table(s, rs, "restitution", "e", 1.0, &s->e_default,
                             &s->epairs, &s->n_epairs, err))
    return -1;

  const json_t *contacts = member(root, "contacts");
  if (!contacts || (json_is_string(contacts) &&
                    !strcmp(json_string_value(contacts), "auto"))) {
    // Contacts come from the geometry: models/sceneload.c generates them
    // after parsing (contact generation depends on the scene, not the
    // other way round).
    s->contacts_auto = 1;
    return 0;
  }
  if (!json_is_array(contacts))
    return cp_error_set(err, "contacts",
                        "expected \"auto\" or an array of contacts");
  size_t n = json_array_size(contacts);
  if (n > 1000000) return cp_error_set(err, "contacts", "too many contacts");
  if (n) {
    s->contacts = calloc(n, sizeof *s->contacts);
    if (!s->contacts) return cp_error_setc(err, CP_ERR_NOMEM, "contacts", "out of memory");
  }
  s->n_contacts = (int)n;
  for (size_t i = 0; i < n; ++i) {
    char p[PATHBUF];
    if (parse_contact(s, json_array_get(contacts, i),
                      cp_json_path_index(p, "contacts", i), &s->contacts[i],
                      err))
      return -1;
  }
  if (opts->check_normal_speed && cp_scene_check_normal_speeds(s, err))
    return -1;
  return 0;
}

int cp_scene_parse_geometry(const char *text, size_t len, const char *base_dir,
                            const cp_scene_options *opts, cp_scene *scene,
                            cp_error *err) {
  cp_scene_options def = cp_scene_options_defaults();
  if (!opts) opts = &def;
  memset(scene, 0, sizeof *scene);
  json_t *root;
  if (cp_json_parse(text, len, &root, err)) return -1;
  int rc = parse_scene(root, opts, base_dir, scene, err);
  /* Physical values outside their sensible ranges (models/ranges.h). */
  if (!rc) rc = cp_scene_check_ranges(scene, root, err);
  json_decref(root);
  if (!rc && base_dir && !(scene->base_dir = dupstr(base_dir)))
    rc = cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  if (rc) cp_scene_free(scene);
  return rc;
}

void cp_scene_free(cp_scene *s) {
  if (!s) return;
  for (int i = 0; i < s->n_bodies; ++i) {
    free(s->bodies[i].name);
    if (s->bodies[i].shape.type == CP_SHAPE_MESH)
      cp_mesh_release(s->bodies[i].shape.mesh);
  }
  free(s->bodies);
  free(s->ignore);
  for (int i = 0; i < s->n_manips; ++i) cp_chain_free(&s->manips[i]);
  free(s->manips);
  for (int i = 0; i < s->n_pairs; ++i) {
    free(s->pairs[i].a);
    free(s->pairs[i].b);
  }
  free(s->pairs);
  for (int i = 0; i < s->n_epairs; ++i) {
    free(s->epairs[i].a);
    free(s->epairs[i].b);
  }
  free(s->epairs);
  free(s->contacts);
  free(s->base_dir);
  for (int i = 0; i < s->n_warnings; ++i) free(s->warnings[i]);
  free(s->warnings);
  memset(s, 0, sizeof *s);
}
