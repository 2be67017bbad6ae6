/* Reach inputs: parsing and the contact sampler (planner/search/reach.h). */
#include "planner/search/reach.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/hash.h"
#include "models/jsonread.h"
#include "planner/search/search.h"

#define CP_REACH_PI 3.14159265358979323846

static const char *const face_names[CP_REACH_FACES] = {
    "+x", "-x", "+y", "-y", "+z", "-z", "side", "surface"};

unsigned cp_reach_shape_faces(const cp_shape *sh) {
  switch (sh->type) {
  case CP_SHAPE_BOX: return 0x3fu;
  case CP_SHAPE_CYLINDER:
    return CP_REACH_FACE_ZP | CP_REACH_FACE_ZN | CP_REACH_FACE_SIDE;
  case CP_SHAPE_SPHERE: return CP_REACH_FACE_SURFACE;
  default: break;
  }
  return 0;
}

/* Area of face f (its bit index) of the shape. */
static double face_area(const cp_shape *sh, int f) {
  if (sh->type == CP_SHAPE_BOX) {
    int a = f / 2;
    return sh->size[(a + 1) % 3] * sh->size[(a + 2) % 3];
  }
  if (sh->type == CP_SHAPE_SPHERE) return 4 * CP_REACH_PI * sh->radius * sh->radius;
  if (f == 6) return 2 * CP_REACH_PI * sh->radius * sh->length; /* side */
  return CP_REACH_PI * sh->radius * sh->radius; /* a cap */
}

unsigned cp_reach_sample(const cp_shape *sh, unsigned faces, double v,
                         const double push[2], double p[3], double n[3],
                         double *depth) {
  faces &= cp_reach_shape_faces(sh);
  if (!faces) return 0;
  if (v == 0) v = 0; /* -0 and +0: one value */
  cp_rng r;
  cp_rng_seed(&r, cp_fnv_bytes(CP_FNV_OFFSET, &v, sizeof v));
  double total = 0;
  for (int f = 0; f < CP_REACH_FACES; ++f)
    if (faces & (1u << f)) total += face_area(sh, f);
  double pick = cp_rng_uniform(&r) * total;
  int face = -1;
  for (int f = 0; f < CP_REACH_FACES; ++f) {
    if (!(faces & (1u << f))) continue;
    face = f; /* the last allowed face takes rounding's remainder */
    if ((pick -= face_area(sh, f)) < 0) break;
  }
  double u = cp_rng_uniform(&r), w = cp_rng_uniform(&r);
  memset(n, 0, 3 * sizeof *n);
  if (sh->type == CP_SHAPE_BOX) {
    int a = face / 2, b = (a + 1) % 3, c = (a + 2) % 3;
    double s = face % 2 ? -1 : 1;
    n[a] = s;
    p[a] = s * 0.5 * sh->size[a];
    p[b] = (u - 0.5) * sh->size[b];
    p[c] = (w - 0.5) * sh->size[c];
  } else if (sh->type == CP_SHAPE_SPHERE) {
    double z = 2 * u - 1, rho = sqrt(fmax(0, 1 - z * z)), phi = 2 * CP_REACH_PI * w;
    n[0] = rho * cos(phi);
    n[1] = rho * sin(phi);
    n[2] = z;
    for (int k = 0; k < 3; ++k) p[k] = sh->radius * n[k];
  } else if (face == 6) { /* cylinder side: angle u, height w */
    double phi = 2 * CP_REACH_PI * u;
    n[0] = cos(phi);
    n[1] = sin(phi);
    p[0] = sh->radius * n[0];
    p[1] = sh->radius * n[1];
    p[2] = (w - 0.5) * sh->length;
  } else { /* a cap: uniform on the disc */
    double rho = sh->radius * sqrt(u), phi = 2 * CP_REACH_PI * w;
    n[2] = face == 4 ? 1 : -1;
    p[0] = rho * cos(phi);
    p[1] = rho * sin(phi);
    p[2] = n[2] * 0.5 * sh->length;
  }
  *depth = push[0] + (push[1] - push[0]) * cp_rng_uniform(&r);
  return 1u << face;
}

void cp_reach_spread(const cp_shape *sh, unsigned f, const double spread[3],
                     double p[3]) {
  if (sh->type == CP_SHAPE_SPHERE) return;
  int across = f & 0x3fu ? __builtin_ctz(f) / 2 : -1; /* a face's normal axis */
  for (int k = 0; k < 3; ++k) {
    if (k == across || spread[k] == 1) continue;
    if (across < 0 && k < 2) continue; /* a cylinder's side: its height only */
    p[k] *= spread[k];
  }
}

unsigned cp_reach_nearest(const cp_shape *sh, const double q[3], double p[3],
                          double n[3], double *dist) {
  memset(n, 0, 3 * sizeof *n);
  if (sh->type == CP_SHAPE_SPHERE) {
    double r = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
    for (int k = 0; k < 3; ++k) n[k] = r > 0 ? q[k] / r : k == 2;
    for (int k = 0; k < 3; ++k) p[k] = sh->radius * n[k];
    *dist = r - sh->radius;
    return CP_REACH_FACE_SURFACE;
  }
  if (sh->type == CP_SHAPE_BOX) {
    int a = 0;
    double best = -INFINITY;
    for (int k = 0; k < 3; ++k) {
      double h = 0.5 * sh->size[k], e = fabs(q[k]) - h;
      p[k] = q[k] < -h ? -h : q[k] > h ? h : q[k];
      if (e > best) best = e, a = k;
    }
    n[a] = q[a] < 0 ? -1 : 1;
    p[a] = n[a] * 0.5 * sh->size[a];
    *dist = best;
    return 1u << (2 * a + (q[a] < 0));
  }
  if (sh->type != CP_SHAPE_CYLINDER) return 0;
  double rho = hypot(q[0], q[1]), er = rho - sh->radius,
         ez = fabs(q[2]) - 0.5 * sh->length;
  double s = rho > sh->radius ? sh->radius / rho : 1;
  p[0] = q[0] * s;
  p[1] = q[1] * s;
  p[2] = fmax(-0.5 * sh->length, fmin(0.5 * sh->length, q[2]));
  if (er > ez) {
    n[0] = rho > 0 ? q[0] / rho : 1;
    n[1] = rho > 0 ? q[1] / rho : 0;
    p[0] = sh->radius * n[0];
    p[1] = sh->radius * n[1];
    *dist = er;
    return CP_REACH_FACE_SIDE;
  }
  n[2] = q[2] < 0 ? -1 : 1;
  p[2] = n[2] * 0.5 * sh->length;
  *dist = ez;
  return q[2] < 0 ? CP_REACH_FACE_ZN : CP_REACH_FACE_ZP;
}

static int exclude_faces(cp_task_input *ti, const cp_shape *sh,
                         const json_t *x, const char *p, cp_error *err) {
  char q[CP_JSON_PATH_MAX];
  cp_json_path_key(q, p, "exclude");
  if (!json_is_array(x))
    return cp_error_set(err, q, "expected an array of face names");
  for (size_t k = 0; k < json_array_size(x); ++k) {
    char e[CP_JSON_PATH_MAX];
    const char *name;
    cp_json_path_index(e, q, k);
    if (cp_json_string(json_array_get(x, k), e, &name, err)) return -1;
    int f = 0;
    while (f < CP_REACH_FACES && strcmp(face_names[f], name)) ++f;
    if (f == CP_REACH_FACES || !(cp_reach_shape_faces(sh) & (1u << f)))
      return cp_error_set(err, e,
                          "no face \"%.20s\" on a %s (a box has +x, -x, +y, "
                          "-y, +z, -z; a cylinder +z, -z, side; a sphere "
                          "surface)",
                          name, cp_shape_type_name(sh->type));
    ti->faces &= ~(1u << f);
  }
  if (!ti->faces)
    return cp_error_set(err, q, "every face is excluded: nothing to reach");
  return 0;
}

/* "spread": one share for every body axis, or [sx, sy, sz]; each in
 * [0, 1] (default 1). */
static int parse_spread(cp_task_input *ti, const json_t *x, const char *p,
                        cp_error *err) {
  char q[CP_JSON_PATH_MAX];
  for (int k = 0; k < 3; ++k) ti->spread[k] = 1;
  if (!x) return 0;
  cp_json_path_key(q, p, "spread");
  if (json_is_number(x)) {
    if (cp_json_number(x, q, &ti->spread[0], err)) return -1;
    ti->spread[1] = ti->spread[2] = ti->spread[0];
  } else if (cp_json_vector(x, q, 3, ti->spread, err)) {
    return -1;
  }
  for (int k = 0; k < 3; ++k)
    if (!(ti->spread[k] >= 0 && ti->spread[k] <= 1))
      return cp_error_set(err, q, "expected shares of the body's extent in "
                                  "[0, 1] (a number or [x, y, z]), got %g",
                          ti->spread[k]);
  return 0;
}

int cp_reach_parse(cp_task *t, cp_task_input *ti, const json_t *in,
                   const char *p, cp_error *err) {
  char q[CP_JSON_PATH_MAX];
  const json_t *x;
  const char *name;
  cp_ref r;
  ti->row = -1;
  cp_json_path_key(q, p, "link");
  if (!(x = json_object_get(in, "link")))
    return cp_error_set(err, q, "required (\"manipulator/link\")");
  if (cp_json_string(x, q, &name, err)) return -1;
  if (cp_scene_find(&t->scene, name, &r) || r.manip < 0)
    return cp_error_set(err, q, "no link \"%.60s\" in the scene (expected "
                                "\"manipulator/link\")", name);
  ti->manip = r.manip;
  ti->index = r.link;
  if ((x = json_object_get(in, "point")) &&
      cp_json_vector(x, cp_json_path_key(q, p, "point"), 3, ti->point, err))
    return -1;
  cp_json_path_key(q, p, "body");
  if (!(x = json_object_get(in, "body")))
    return cp_error_set(err, q, "required (the body to touch)");
  if (cp_json_string(x, q, &name, err)) return -1;
  if (cp_scene_find(&t->scene, name, &r) || r.body < 0)
    return cp_error_set(err, q, "no body \"%.60s\" in the scene", name);
  ti->body = r.body;
  const cp_shape *sh = &t->scene.bodies[r.body].shape;
  if (!(ti->faces = cp_reach_shape_faces(sh)))
    return cp_error_set(err, q,
                        "body \"%.60s\" is a %s: a reach input samples a "
                        "box, a sphere or a cylinder",
                        name, cp_shape_type_name(sh->type));
  if ((x = json_object_get(in, "exclude")) && exclude_faces(ti, sh, x, p, err))
    return -1;
  ti->offset = 0;
  ti->approach = 0.02;
  ti->push[0] = 0;
  ti->push[1] = 0.01;
  static const char *const dist_keys[3] = {"offset", "approach", "hold"};
  double *dist[3] = {&ti->offset, &ti->approach, &ti->hold};
  ti->hold = 0;
  for (int k = 0; k < 3; ++k) {
    if (!(x = json_object_get(in, dist_keys[k]))) continue;
    if (cp_json_number(x, cp_json_path_key(q, p, dist_keys[k]), dist[k], err))
      return -1;
    if (!(*dist[k] >= 0 && *dist[k] <= 10))
      return cp_error_set(err, q, "expected a distance in [0, 10] m, got %g",
                          *dist[k]);
  }
  if ((x = json_object_get(in, "push"))) {
    if (cp_json_vector(x, cp_json_path_key(q, p, "push"), 2, ti->push, err))
      return -1;
    if (ti->push[0] > ti->push[1])
      return cp_error_set(err, q, "expected [lo, hi] with lo <= hi (m)");
  }
  return parse_spread(ti, json_object_get(in, "spread"), p, err);
}

int cp_reach_check(const cp_task *t, cp_error *err) {
  for (int i = 0; i < t->n_inputs; ++i) {
    const cp_task_input *a = &t->inputs[i];
    if (a->kind != CP_INPUT_REACH) continue;
    const cp_chain *c = &t->scene.manips[a->manip];
    const int k = cp_reach_undriven_joint(t, a->manip, a->index);
    if (k < 0) continue;
    char p[CP_JSON_PATH_MAX];
    return cp_error_set(err, cp_json_path_key(p, "inputs", a->joint),
                        "joint \"%.60s/%.60s\" moves this link and is not a "
                        "\"target\" input: a reach input sets the targets "
                        "of every joint on its link's path",
                        c->name, c->joints[k].name);
  }
  return 0;
}

int cp_reach_undriven_joint(const cp_task *t, int manip, int link) {
  const cp_chain *c = &t->scene.manips[manip];
  for (int k = 0; k < c->n; ++k) {
    if (c->joints[k].is_mimic || !cp_chain_is_ancestor(c, k, link)) continue;
    int driven = 0;
    for (int j = 0; j < t->n_inputs && !driven; ++j)
      driven = t->inputs[j].kind == CP_INPUT_TARGET &&
               t->inputs[j].manip == manip && t->inputs[j].index == k;
    if (!driven) return k;
  }
  return -1;
}
