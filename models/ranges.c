#include "models/ranges.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/chain.h"
#include "models/jsonread.h"

/* One failed range: where, what, the value and the range. */
static int out_of_range(cp_error *err, const char *path, const char *what, double v,
                        double lo, double hi, const char *unit) {
  return cp_error_set(err, path, "%s %g is outside the sensible range [%g, %g]%s%s "
                      "(docs/ranges.md)", what, v, lo, hi, *unit ? " " : "", unit);
}

static int in(double v, double lo, double hi) { return v >= lo && v <= hi; }

/* |each component| <= hi. */
static int vec_in(const double *v, int n, double hi, const char *path, const char *what,
                  const char *unit, cp_error *err) {
  for (int i = 0; i < n; i++)
    if (!in(v[i], -hi, hi)) {
      char p[CP_JSON_PATH_MAX];
      return out_of_range(err, cp_json_path_index(p, path, (size_t)i), what, v[i], -hi, hi,
                          unit);
    }
  return 0;
}

static int shape_ok(const cp_shape *sh, const char *path, cp_error *err) {
  const double lo = CP_RANGE_LENGTH_MIN, hi = CP_RANGE_LENGTH_MAX;
  char p[CP_JSON_PATH_MAX], p2[CP_JSON_PATH_MAX];
  switch (sh->type) {
  case CP_SHAPE_BOX:
    for (int i = 0; i < 3; i++)
      if (!in(sh->size[i], lo, hi))
        return out_of_range(err, cp_json_path_index(p2, cp_json_path_key(p, path, "size"),
                                                    (size_t)i),
                            "box size", sh->size[i], lo, hi, "m");
    return 0;
  case CP_SHAPE_CAPSULE:
  case CP_SHAPE_CYLINDER:
    /* A capsule's length may be 0 (a sphere). */
    if (!(in(sh->length, lo, hi) || (sh->type == CP_SHAPE_CAPSULE && sh->length == 0.0)))
      return out_of_range(err, cp_json_path_key(p, path, "length"), "length", sh->length,
                          lo, hi, "m");
    /* fall through */
  case CP_SHAPE_SPHERE:
    if (!in(sh->radius, lo, hi))
      return out_of_range(err, cp_json_path_key(p, path, "radius"), "radius", sh->radius,
                          lo, hi, "m");
    return 0;
  case CP_SHAPE_PLANE:
    if (!in(sh->offset, -CP_RANGE_POSITION_MAX, CP_RANGE_POSITION_MAX))
      return out_of_range(err, cp_json_path_key(p, path, "offset"), "plane offset",
                          sh->offset, -CP_RANGE_POSITION_MAX, CP_RANGE_POSITION_MAX, "m");
    return 0;
  case CP_SHAPE_NONE:
  case CP_SHAPE_MESH: /* vertices come from a mesh file, checked there */
    return 0;
  }
  return 0;
}

/* The shape's bounding radius (models/shape.h); meshes are not range-checked
 * (infinite). */
static double bounding_radius(const cp_shape *sh) {
  return sh->type == CP_SHAPE_MESH ? INFINITY : cp_shape_bounding_radius(sh);
}

static int mass_ok(double m, const char *path, cp_error *err) {
  if (in(m, CP_RANGE_MASS_MIN, CP_RANGE_MASS_MAX)) return 0;
  return out_of_range(err, path, "mass", m, CP_RANGE_MASS_MIN, CP_RANGE_MASS_MAX, "kg");
}

static int inertia_ok(const double *In, const char *path, cp_error *err) {
  char p[CP_JSON_PATH_MAX], p2[CP_JSON_PATH_MAX];
  for (int r = 0; r < 3; r++)
    for (int c = 0; c < 3; c++) {
      const double v = In[3 * r + c];
      const double lo = r == c ? CP_RANGE_INERTIA_MIN : -CP_RANGE_INERTIA_MAX;
      if (!in(v, lo, CP_RANGE_INERTIA_MAX))
        return out_of_range(err, cp_json_path_index(p2, cp_json_path_index(p, path, (size_t)r),
                                                    (size_t)c),
                            r == c ? "moment of inertia" : "product of inertia", v, lo,
                            CP_RANGE_INERTIA_MAX, "kg m^2");
    }
  return 0;
}

static int mu_ok(double mu, const char *path, cp_error *err) {
  if (in(mu, 0.0, CP_RANGE_MU_MAX)) return 0;
  return out_of_range(err, path, "friction coefficient", mu, 0.0, CP_RANGE_MU_MAX, "");
}

/* The JSON path of manipulator i's joint j (or a description of it when the
 * chain came from URDF, which has no JSON path below the manipulator). */
static const char *joint_path(char *out, const json_t *root, int i, int j,
                              const cp_chain *c) {
  char m[CP_JSON_PATH_MAX];
  cp_json_path_index(m, "manipulators", (size_t)i);
  const json_t *mj = json_array_get(json_object_get(root, "manipulators"), (size_t)i);
  if (json_object_get(mj, "urdf")) {
    snprintf(out, CP_JSON_PATH_MAX, "%.100s (URDF joint '%.60s')", m, c->joints[j].name);
    return out;
  }
  char js[CP_JSON_PATH_MAX];
  return cp_json_path_index(out, cp_json_path_key(js, m, "joints"), (size_t)j);
}

static int chain_ok(const cp_chain *c, int i, const json_t *root, cp_error *err) {
  char m[CP_JSON_PATH_MAX], p[CP_JSON_PATH_MAX], p2[CP_JSON_PATH_MAX], p3[CP_JSON_PATH_MAX];
  cp_json_path_index(m, "manipulators", (size_t)i);
  if (vec_in(c->base_pos, 3, CP_RANGE_POSITION_MAX,
             cp_json_path_key(p2, cp_json_path_key(p, m, "base"), "position"), "position",
             "m", err))
    return -1;
  for (int j = 0; j < c->n; j++) {
    const cp_joint *J = &c->joints[j];
    char jp[CP_JSON_PATH_MAX];
    joint_path(jp, root, i, j, c);
    const int urdf = strchr(jp, '(') != NULL;
    const char *ang = J->type == CP_JOINT_REVOLUTE ? "rad" : "m";
#define SUB(key) (urdf ? jp : cp_json_path_key(p, jp, key))
    if (!in(J->position, -CP_RANGE_JOINT_POSITION_MAX, CP_RANGE_JOINT_POSITION_MAX))
      return out_of_range(err, SUB("position"), "joint position", J->position,
                          -CP_RANGE_JOINT_POSITION_MAX, CP_RANGE_JOINT_POSITION_MAX, ang);
    const double vmax = J->type == CP_JOINT_REVOLUTE ? CP_RANGE_ANGULAR_SPEED_MAX
                                                     : CP_RANGE_SPEED_MAX;
    if (!in(J->velocity, -vmax, vmax))
      return out_of_range(err, SUB("velocity"), "joint velocity", J->velocity, -vmax, vmax,
                          J->type == CP_JOINT_REVOLUTE ? "rad/s" : "m/s");
    if (!in(J->effort, -CP_RANGE_EFFORT_MAX, CP_RANGE_EFFORT_MAX))
      return out_of_range(err, SUB("effort"), "joint effort", J->effort,
                          -CP_RANGE_EFFORT_MAX, CP_RANGE_EFFORT_MAX,
                          J->type == CP_JOINT_REVOLUTE ? "N m" : "N");
    if (!in(J->acceleration, -CP_RANGE_JOINT_ACCEL_MAX, CP_RANGE_JOINT_ACCEL_MAX))
      return out_of_range(err, SUB("acceleration"), "joint acceleration", J->acceleration,
                          -CP_RANGE_JOINT_ACCEL_MAX, CP_RANGE_JOINT_ACCEL_MAX,
                          J->type == CP_JOINT_REVOLUTE ? "rad/s^2" : "m/s^2");
    if (vec_in(J->origin_pos, 3, CP_RANGE_LENGTH_MAX,
               urdf ? jp : cp_json_path_key(p2, SUB("origin"), "position"),
               "joint origin offset", "m", err))
      return -1;
    const cp_link *L = &J->link;
    char lp[CP_JSON_PATH_MAX];
    if (urdf)
      snprintf(lp, sizeof lp, "%.100s (URDF link '%.60s')", m, L->name);
    else
      cp_json_path_key(lp, jp, "link");
#undef SUB
#define LSUB(key) (urdf ? lp : cp_json_path_key(p3, lp, key))
    /* A massless link (URDF: no <inertial> or mass 0) is exactly 0. */
    if (L->mass != 0.0 && mass_ok(L->mass, LSUB("mass"), err)) return -1;
    if (L->mass != 0.0 && inertia_ok(L->inertia, LSUB("inertia"), err)) return -1;
    if (vec_in(L->com, 3, CP_RANGE_LENGTH_MAX, LSUB("com"), "centre of mass offset", "m",
               err))
      return -1;
    if (shape_ok(&L->shape, LSUB("shape"), err)) return -1;
    if (L->has_shape_pose &&
        vec_in(L->shape_pos, 3, CP_RANGE_LENGTH_MAX, LSUB("shape_origin"),
               "shape offset", "m", err))
      return -1;
#undef LSUB
  }
  return 0;
}

/* Centre and bounding radius of what a contact names (a body or a link);
 * radius infinite when unknown or unbounded. */
static void ref_ball(const cp_scene *s, cp_ref r, cp_link_state **ks, double *c,
                     double *rad) {
  *rad = INFINITY;
  if (r.body >= 0 && r.body < s->n_bodies) {
    const cp_body *b = &s->bodies[r.body];
    memcpy(c, b->x, sizeof(double) * 3);
    *rad = bounding_radius(&b->shape);
    return;
  }
  if (r.manip < 0 || r.manip >= s->n_manips) return;
  const cp_chain *ch = &s->manips[r.manip];
  if (r.link < 0 || r.link >= ch->n) return;
  if (!ks[r.manip]) {
    ks[r.manip] = malloc(sizeof(cp_link_state) * (size_t)ch->n);
    if (!ks[r.manip]) return;
    cp_chain_kinematics(ch, ks[r.manip]);
  }
  const cp_link_state *st = &ks[r.manip][r.link];
  const cp_link *L = &ch->joints[r.link].link;
  /* The ball about the link's centre of mass that holds its shape wherever
   * the shape sits in the link frame. */
  double off = 0.0;
  if (L->has_shape_pose) {
    double d[3];
    for (int k = 0; k < 3; k++) d[k] = L->shape_pos[k] - L->com[k];
    off = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
  }
  memcpy(c, st->com, sizeof(double) * 3);
  /* Links without a shape or with several are not checked. */
  *rad = L->shape.type == CP_SHAPE_NONE || L->n_extra_shapes > 0
             ? INFINITY
             : bounding_radius(&L->shape) + off;
}

static int contacts_ok(const cp_scene *s, cp_error *err) {
  if (s->contacts_auto) return 0;
  cp_link_state **ks = calloc((size_t)(s->n_manips > 0 ? s->n_manips : 1), sizeof *ks);
  if (!ks) return cp_error_setc(err, CP_ERR_NOMEM, "contacts", "out of memory");
  int rc = 0;
  char p[CP_JSON_PATH_MAX], p2[CP_JSON_PATH_MAX];
  for (int k = 0; k < s->n_contacts && !rc; k++) {
    const cp_contact *ct = &s->contacts[k];
    cp_json_path_index(p, "contacts", (size_t)k);
    if (vec_in(ct->p, 3, CP_RANGE_POSITION_MAX, cp_json_path_key(p2, p, "point"), "position",
               "m", err)) {
      rc = -1;
      break;
    }
    if (mu_ok(ct->mu, cp_json_path_key(p2, p, "mu"), err)) { rc = -1; break; }
    if (ct->has_torsion && !in(ct->mu_torsion, 0.0, CP_RANGE_MU_TORSION_MAX)) {
      rc = out_of_range(err, cp_json_path_key(p2, p, "mu_torsion"), "mu_torsion",
                        ct->mu_torsion, 0.0, CP_RANGE_MU_TORSION_MAX, "m");
      break;
    }
    const cp_ref refs[2] = {ct->a, ct->b};
    for (int e = 0; e < 2 && !rc; e++) {
      double c[3], rad;
      ref_ball(s, refs[e], ks, c, &rad);
      if (!isfinite(rad)) continue;
      const double d = sqrt((ct->p[0] - c[0]) * (ct->p[0] - c[0]) +
                            (ct->p[1] - c[1]) * (ct->p[1] - c[1]) +
                            (ct->p[2] - c[2]) * (ct->p[2] - c[2]));
      const double lim = CP_RANGE_CONTACT_RADII * rad + CP_RANGE_CONTACT_SLACK;
      if (!(d <= lim))
        rc = cp_error_set(err, cp_json_path_key(p2, p, "point"),
                          "the point is %g m from the centre of '%s', whose shape reaches "
                          "%g m from it: at most %g m (%g bounding radii + %g m) is "
                          "accepted (docs/ranges.md)", d, e ? "b" : "a", rad, lim,
                          CP_RANGE_CONTACT_RADII, CP_RANGE_CONTACT_SLACK);
    }
  }
  for (int i = 0; i < s->n_manips; i++) free(ks[i]);
  free(ks);
  return rc;
}

int cp_scene_check_ranges(const cp_scene *s, const json_t *root, cp_error *err) {
  if (vec_in(s->gravity, 3, CP_RANGE_GRAVITY_MAX, "gravity", "gravity", "m/s^2", err))
    return -1;
  if (mu_ok(s->mu_default, "friction.default", err)) return -1;
  char p[CP_JSON_PATH_MAX], p2[CP_JSON_PATH_MAX];
  for (int i = 0; i < s->n_pairs; i++)
    if (mu_ok(s->pairs[i].mu,
              cp_json_path_key(p2, cp_json_path_index(p, "friction.pairs", (size_t)i), "mu"),
              err))
      return -1;
  for (int i = 0; i < s->n_bodies; i++) {
    const cp_body *b = &s->bodies[i];
    cp_json_path_index(p, "bodies", (size_t)i);
    if (shape_ok(&b->shape, cp_json_path_key(p2, p, "shape"), err)) return -1;
    if (vec_in(b->x, 3, CP_RANGE_POSITION_MAX, cp_json_path_key(p2, p, "position"),
               "position", "m", err))
      return -1;
    if (b->fixed) continue;
    if (mass_ok(b->mass, cp_json_path_key(p2, p, "mass"), err)) return -1;
    if (inertia_ok(b->inertia, cp_json_path_key(p2, p, "inertia"), err)) return -1;
    if (vec_in(b->v, 3, CP_RANGE_SPEED_MAX, cp_json_path_key(p2, p, "velocity"), "velocity",
               "m/s", err) ||
        vec_in(b->w, 3, CP_RANGE_ANGULAR_SPEED_MAX,
               cp_json_path_key(p2, p, "angular_velocity"), "angular velocity", "rad/s", err))
      return -1;
  }
  for (int i = 0; i < s->n_manips; i++)
    if (chain_ok(&s->manips[i], i, root, err)) return -1;
  return contacts_ok(s, err);
}
