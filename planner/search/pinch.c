/* Pinch inputs: parsing, the antipodal contact and the carry of a held
 * pinch (planner/search/pinch.h). */
#include "planner/search/pinch.h"

#include <math.h>
#include <string.h>

#include "models/hash.h"
#include "models/jsonread.h"
#include "planner/search/reach.h"
#include "planner/search/search.h"

const char *const cp_pinch_keys[] = {
    "kind",   "values",   "range", "samples", "links", "point", "body",
    "exclude", "offset", "approach", "push", "hold", "carry", "turn",
    "axis",   "spread", "still", NULL};

unsigned cp_pinch_faces(const cp_shape *sh, unsigned faces) {
  faces &= cp_reach_shape_faces(sh);
  unsigned pairs = faces & 0x3fu; /* bits 2a and 2a + 1: opposite faces */
  pairs &= ((pairs & 0x15u) << 1) | ((pairs & 0x2au) >> 1);
  return pairs | (faces & (CP_REACH_FACE_SIDE | CP_REACH_FACE_SURFACE));
}

void cp_pinch_antipode(const cp_shape *sh, unsigned f, const double p[3],
                       double q[3], double m[3]) {
  memcpy(q, p, 3 * sizeof *q);
  memset(m, 0, 3 * sizeof *m);
  if (f & 0x3fu) { /* a box face or a cylinder's cap: mirrored on its axis */
    int a = __builtin_ctz(f) / 2;
    q[a] = -p[a];
    m[a] = q[a] < 0 ? -1 : 1;
    return;
  }
  int n = f & CP_REACH_FACE_SIDE ? 2 : 3; /* a side keeps its height */
  for (int k = 0; k < n; ++k) {
    q[k] = -p[k];
    m[k] = q[k] / sh->radius;
  }
}

void cp_pinch_carry(const cp_task_input *in, double v, double delta[3],
                    double *angle) {
  if (v == 0) v = 0; /* -0 and +0: one value */
  cp_rng r;
  cp_rng_seed(&r, cp_fnv_bytes(CP_FNV_OFFSET, &v, sizeof v));
  for (int k = 0; k < 3; ++k)
    delta[k] = in->carry[k] * (2 * cp_rng_uniform(&r) - 1);
  *angle = in->turn * (2 * cp_rng_uniform(&r) - 1);
  /* Drawn after the motion, and only when asked, so that a task without
   * "still" keeps its carries bit for bit. */
  if (in->still > 0 && cp_rng_uniform(&r) < in->still) {
    memset(delta, 0, 3 * sizeof *delta);
    *angle = 0;
  }
}

/* links[k] of the input (path p): a "manipulator/link" name. */
static int parse_link(cp_task *t, const json_t *links, int k, const char *p,
                      int *manip, int *link, cp_error *err) {
  char q[CP_JSON_PATH_MAX];
  const char *name;
  cp_ref r;
  cp_json_path_index(q, p, (size_t)k);
  if (cp_json_string(json_array_get(links, (size_t)k), q, &name, err)) return -1;
  if (cp_scene_find(&t->scene, name, &r) || r.manip < 0)
    return cp_error_set(err, q, "no link \"%.60s\" in the scene (expected "
                                "\"manipulator/link\")", name);
  *manip = r.manip;
  *link = r.link;
  return 0;
}

/* "carry", "turn", "axis" and "still" (the held pair's motion per
 * action). */
static int parse_carry(cp_task_input *ti, const json_t *in, const char *p,
                       cp_error *err) {
  char q[CP_JSON_PATH_MAX];
  const json_t *x;
  for (int k = 0; k < 3; ++k) ti->carry[k] = 0.01;
  ti->turn = 0;
  ti->still = 0;
  memcpy(ti->direction, (double[3]){0, 0, 1}, sizeof ti->direction);
  if ((x = json_object_get(in, "carry"))) {
    if (cp_json_vector(x, cp_json_path_key(q, p, "carry"), 3, ti->carry, err))
      return -1;
    for (int k = 0; k < 3; ++k)
      if (!(ti->carry[k] >= 0 && ti->carry[k] <= 1))
        return cp_error_set(err, q, "expected displacements in [0, 1] m, "
                                    "got %g", ti->carry[k]);
  }
  if ((x = json_object_get(in, "turn"))) {
    if (cp_json_number(x, cp_json_path_key(q, p, "turn"), &ti->turn, err))
      return -1;
    if (!(ti->turn >= 0 && ti->turn <= 3.14159265358979323846))
      return cp_error_set(err, q, "expected an angle in [0, pi] rad, got %g",
                          ti->turn);
  }
  if ((x = json_object_get(in, "still"))) {
    if (cp_json_number(x, cp_json_path_key(q, p, "still"), &ti->still, err))
      return -1;
    if (!(ti->still >= 0 && ti->still <= 1))
      return cp_error_set(err, q, "expected a share of the held actions in "
                                  "[0, 1], got %g", ti->still);
  }
  if ((x = json_object_get(in, "axis"))) {
    if (cp_json_vector(x, cp_json_path_key(q, p, "axis"), 3, ti->direction, err))
      return -1;
    double n = sqrt(ti->direction[0] * ti->direction[0] +
                    ti->direction[1] * ti->direction[1] +
                    ti->direction[2] * ti->direction[2]);
    if (!(n > 0)) return cp_error_set(err, q, "expected a non-zero vector");
    for (int k = 0; k < 3; ++k) ti->direction[k] /= n;
  }
  return 0;
}

int cp_pinch_parse(cp_task *t, cp_task_input *ti, const json_t *in,
                   const char *p, cp_error *err) {
  char q[CP_JSON_PATH_MAX];
  const json_t *links = json_object_get(in, "links");
  cp_json_path_key(q, p, "links");
  if (!links)
    return cp_error_set(err, q, "required ([\"manipulator/link\", "
                                "\"manipulator/link\"]: the two fingers)");
  if (!json_is_array(links) || json_array_size(links) != 2)
    return cp_error_set(err, q, "expected an array of two link names");
  if (parse_link(t, links, 0, q, &ti->manip, &ti->index, err) ||
      parse_link(t, links, 1, q, &ti->manip2, &ti->index2, err))
    return -1;
  if (ti->manip == ti->manip2 && ti->index == ti->index2)
    return cp_error_set(err, q, "expected two different links");
  /* The shared keys are a reach input's: parsed by reach.c on a copy
   * naming the first link. */
  json_t *c = json_copy((json_t *)in);
  if (!c || json_object_set_new(c, "link", json_string(json_string_value(
                                               json_array_get(links, 0)))))
    return json_decref(c), cp_error_setc(err, CP_ERR_NOMEM, p, "out of memory");
  int rc = cp_reach_parse(t, ti, c, p, err);
  json_decref(c);
  if (rc) return -1;
  ti->kind = CP_INPUT_PINCH;
  if (!(ti->faces = cp_pinch_faces(&t->scene.bodies[ti->body].shape, ti->faces)))
    return cp_error_set(err, cp_json_path_key(q, p, "exclude"),
                        "no two opposite faces left to pinch");
  return parse_carry(ti, in, p, err);
}

/* Every joint moving link `link` of chain `manip` is a target input. */
static int path_driven(const cp_task *t, const cp_task_input *a, int manip,
                       int link, cp_error *err) {
  const cp_chain *c = &t->scene.manips[manip];
  const int k = cp_reach_undriven_joint(t, manip, link);
  if (k < 0) return 0;
  char p[CP_JSON_PATH_MAX];
  return cp_error_set(err, cp_json_path_key(p, "inputs", a->joint),
                      "joint \"%.60s/%.60s\" moves a pinching link and is "
                      "not a \"target\" input: a pinch sets the targets of "
                      "every joint on both links' paths",
                      c->name, c->joints[k].name);
}

int cp_pinch_check(const cp_task *t, cp_error *err) {
  for (int i = 0; i < t->n_inputs; ++i) {
    const cp_task_input *a = &t->inputs[i];
    if (a->kind == CP_INPUT_PINCH &&
        (path_driven(t, a, a->manip, a->index, err) ||
         path_driven(t, a, a->manip2, a->index2, err)))
      return -1;
  }
  return 0;
}
