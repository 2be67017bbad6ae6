/* Goals (planner/search/goal.h): parsing one goal object and evaluating it
 * on a state through the state layout. */
#include "planner/search/goal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/jsonread.h"
#include "models/vec3.h"

static char *dupstr(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

static int nomem(cp_error *err, const char *path) {
  return cp_error_setc(err, CP_ERR_NOMEM, path, "out of memory");
}

static int positive(const json_t *v, const char *path, double hi, double *out,
                    cp_error *err) {
  if (cp_json_number(v, path, out, err)) return -1;
  if (!(*out > 0) || *out > hi)
    return cp_error_set(err, path, "expected a number > 0%s, got %g",
                        isinf(hi) ? "" : " and at most pi", *out);
  return 0;
}

/* "min"/"max": [x, y, z] of numbers or null (no side on that axis). */
static int parse_side(const json_t *v, const char *path, double none,
                      double *out, cp_error *err) {
  if (!json_is_array(v) || json_array_size(v) != 3)
    return cp_error_set(err, path,
                        "expected [x, y, z] of numbers or null (no bound)");
  for (size_t k = 0; k < 3; ++k) {
    const json_t *e = json_array_get(v, k);
    char p[CP_JSON_PATH_MAX];
    cp_json_path_index(p, path, k);
    if (json_is_null(e)) out[k] = none;
    else if (cp_json_number(e, p, &out[k], err)) return -1;
  }
  return 0;
}

static const char *const body_keys[] = {"body", "position", "tolerance",
                                        "orientation", "angle_tolerance",
                                        "min", "max", NULL};

/* A body term from the keys of object v (a "bodies" entry, or the goal
 * itself for the one-body form). */
static int parse_body(const json_t *v, const char *path, const cp_scene *s,
                      cp_goal_body *t, cp_error *err) {
  char p[CP_JSON_PATH_MAX];
  const json_t *x;
  const char *name;
  if (!(x = json_object_get(v, "body")))
    return cp_error_set(err, cp_json_path_key(p, path, "body"),
                        "required (a free body's name)");
  if (cp_json_string(x, cp_json_path_key(p, path, "body"), &name, err))
    return -1;
  t->body_index = -1;
  for (int b = 0; b < s->n_bodies; ++b)
    if (!strcmp(s->bodies[b].name, name)) t->body_index = b;
  if (t->body_index < 0 || s->bodies[t->body_index].fixed)
    return cp_error_set(err, p, "no free body \"%.60s\" in the scene", name);
  if (!(t->body = dupstr(name))) return nomem(err, p);
  if ((x = json_object_get(v, "position"))) {
    if (cp_json_vector(x, cp_json_path_key(p, path, "position"), 3,
                       t->position, err))
      return -1;
    if (!(x = json_object_get(v, "tolerance")))
      return cp_error_set(err, cp_json_path_key(p, path, "tolerance"),
                          "required with \"position\" (m > 0)");
    if (positive(x, cp_json_path_key(p, path, "tolerance"), INFINITY,
                 &t->tolerance, err))
      return -1;
    t->has_ball = 1;
  } else if (json_object_get(v, "tolerance")) {
    return cp_error_set(err, cp_json_path_key(p, path, "tolerance"),
                        "goes with \"position\"");
  }
  for (int k = 0; k < 3; ++k) {
    t->lo[k] = -INFINITY;
    t->hi[k] = INFINITY;
  }
  if ((x = json_object_get(v, "min"))) {
    if (parse_side(x, cp_json_path_key(p, path, "min"), -INFINITY, t->lo, err))
      return -1;
    t->has_box = 1;
  }
  if ((x = json_object_get(v, "max"))) {
    if (parse_side(x, cp_json_path_key(p, path, "max"), INFINITY, t->hi, err))
      return -1;
    t->has_box = 1;
  }
  for (int k = 0; k < 3 && t->has_box; ++k)
    if (t->lo[k] > t->hi[k])
      return cp_error_set(err, cp_json_path_key(p, path, "min"),
                          "expected min <= max on every axis");
  if ((x = json_object_get(v, "orientation"))) {
    cp_json_path_key(p, path, "orientation");
    if (cp_json_vector(x, p, 4, t->orientation, err)) return -1;
    double n = sqrt(t->orientation[0] * t->orientation[0] +
                    t->orientation[1] * t->orientation[1] +
                    t->orientation[2] * t->orientation[2] +
                    t->orientation[3] * t->orientation[3]);
    if (fabs(n - 1) > 1e-3)
      return cp_error_set(err, p,
                          "expected a unit quaternion [w, x, y, z], norm %g", n);
    for (int k = 0; k < 4; ++k) t->orientation[k] /= n;
    t->has_orientation = 1;
    t->angle_tolerance = 0.1;
  }
  if ((x = json_object_get(v, "angle_tolerance"))) {
    cp_json_path_key(p, path, "angle_tolerance");
    if (!t->has_orientation)
      return cp_error_set(err, p, "needs \"orientation\"");
    if (positive(x, p, 3.14159265358979323846, &t->angle_tolerance, err))
      return -1;
  }
  if (!t->has_ball && !t->has_box && !t->has_orientation)
    return cp_error_set(err, cp_json_path_key(p, path, "body"),
                        "a body term needs \"position\" and \"tolerance\", "
                        "\"min\"/\"max\" or \"orientation\"");
  return 0;
}

static int parse_joint(const json_t *v, const char *path, const cp_scene *s,
                       cp_goal_joint *t, cp_error *err) {
  static const char *const keys[] = {"joint", "position", "tolerance", NULL};
  char p[CP_JSON_PATH_MAX];
  if (cp_json_check_object(v, path, keys, err)) return -1;
  const json_t *x;
  const char *name;
  if (!(x = json_object_get(v, "joint")))
    return cp_error_set(err, cp_json_path_key(p, path, "joint"),
                        "required (\"manipulator/joint\")");
  if (cp_json_string(x, cp_json_path_key(p, path, "joint"), &name, err))
    return -1;
  cp_state_layout l;
  if (cp_state_layout_init(&l, s)) return nomem(err, p);
  const char *leader = NULL;
  t->row = cp_state_joint_row(&l, s, name, &leader);
  if (t->row >= 0)
    t->prismatic = s->manips[l.row_manip[t->row]].joints[l.row_joint[t->row]]
                       .type == CP_JOINT_PRISMATIC;
  cp_state_layout_free(&l);
  if (t->row == -2)
    return cp_error_set(err, p,
                        "joint \"%.60s\" mimics \"%.60s\": a goal goes on the "
                        "leader", name, leader);
  if (t->row < 0)
    return cp_error_set(err, p, "no joint \"%.60s\" in the scene (expected "
                        "\"manipulator/joint\")", name);
  if (!(t->joint = dupstr(name))) return nomem(err, p);
  if (!(x = json_object_get(v, "position")))
    return cp_error_set(err, cp_json_path_key(p, path, "position"),
                        "required (m or rad)");
  if (cp_json_number(x, cp_json_path_key(p, path, "position"), &t->position,
                     err))
    return -1;
  if (!(x = json_object_get(v, "tolerance")))
    return cp_error_set(err, cp_json_path_key(p, path, "tolerance"),
                        "required (m or rad > 0)");
  return positive(x, cp_json_path_key(p, path, "tolerance"), INFINITY,
                  &t->tolerance, err);
}

static int same_ref(cp_ref a, cp_ref b) {
  return a.body == b.body && a.manip == b.manip && a.link == b.link;
}

static int parse_contact(const json_t *v, const char *path, const cp_scene *s,
                         cp_goal_pairs *pairs, cp_goal_contact *t,
                         cp_error *err) {
  if (!json_is_array(v) || json_array_size(v) != 2)
    return cp_error_set(err, path,
                        "expected [\"A\", \"B\"]: two body or "
                        "\"manipulator/link\" names");
  char p[CP_JSON_PATH_MAX];
  const char *na, *nb;
  if (cp_json_string(json_array_get(v, 0), cp_json_path_index(p, path, 0), &na,
                     err))
    return -1;
  if (cp_scene_find(s, na, &t->ra))
    return cp_error_set(err, p, "no body or link \"%.60s\" in the scene", na);
  if (cp_json_string(json_array_get(v, 1), cp_json_path_index(p, path, 1), &nb,
                     err))
    return -1;
  if (cp_scene_find(s, nb, &t->rb))
    return cp_error_set(err, p, "no body or link \"%.60s\" in the scene", nb);
  if (same_ref(t->ra, t->rb))
    return cp_error_set(err, path, "a body or link cannot touch itself");
  if (!(t->a = dupstr(na)) || !(t->b = dupstr(nb))) return nomem(err, path);
  for (int k = 0; k < pairs->n; ++k)
    if ((same_ref(pairs->a[k], t->ra) && same_ref(pairs->b[k], t->rb)) ||
        (same_ref(pairs->a[k], t->rb) && same_ref(pairs->b[k], t->ra))) {
      t->pair = k;
      return 0;
    }
  cp_ref *a = realloc(pairs->a, (size_t)(pairs->n + 1) * sizeof *a);
  if (!a) return nomem(err, path);
  pairs->a = a;
  cp_ref *b = realloc(pairs->b, (size_t)(pairs->n + 1) * sizeof *b);
  if (!b) return nomem(err, path);
  pairs->b = b;
  a[pairs->n] = t->ra;
  b[pairs->n] = t->rb;
  t->pair = pairs->n++;
  return 0;
}

/* A non-empty array at key of v, or NULL (absent); -1 on a bad value. */
static int array_at(const json_t *v, const char *key, const char *path,
                    const json_t **out, cp_error *err) {
  *out = json_object_get(v, key);
  if (!*out) return 0;
  char p[CP_JSON_PATH_MAX];
  if (!json_is_array(*out) || json_array_size(*out) == 0 ||
      json_array_size(*out) > 1000)
    return cp_error_set(err, cp_json_path_key(p, path, key),
                        "expected an array of 1 to 1000 terms");
  return 0;
}

static int parse_rest(const json_t *v, const char *path, const cp_scene *s,
                      cp_goal *g, cp_error *err) {
  char p[CP_JSON_PATH_MAX];
  const json_t *x = json_object_get(v, "at_rest");
  cp_json_path_key(p, path, "at_rest");
  if (x && json_is_array(x)) {
    size_t n = json_array_size(x);
    if (n == 0)
      return cp_error_set(err, p, "expected true, false or a non-empty array "
                          "of free body names");
    if (!(g->rest_bodies = malloc(n * sizeof *g->rest_bodies)))
      return nomem(err, p);
    for (size_t k = 0; k < n; ++k) {
      char q[CP_JSON_PATH_MAX];
      const char *name;
      if (cp_json_string(json_array_get(x, k), cp_json_path_index(q, p, k),
                         &name, err))
        return -1;
      int b = -1;
      for (int i = 0; i < s->n_bodies; ++i)
        if (!strcmp(s->bodies[i].name, name) && !s->bodies[i].fixed) b = i;
      if (b < 0)
        return cp_error_set(err, q, "no free body \"%.60s\" in the scene",
                            name);
      g->rest_bodies[g->n_rest++] = b;
    }
    g->at_rest = 1;
  } else if (x) {
    if (cp_json_bool(x, p, &g->at_rest, err)) return -1;
    if (g->at_rest) { /* every free body and every joint */
      if (!(g->rest_bodies = malloc((size_t)(s->n_bodies + 1) * sizeof(int))))
        return nomem(err, p);
      for (int b = 0; b < s->n_bodies; ++b)
        if (!s->bodies[b].fixed) g->rest_bodies[g->n_rest++] = b;
      g->rest_joints = 1;
    }
  }
  if ((x = json_object_get(v, "rest_joints"))) {
    cp_json_path_key(p, path, "rest_joints");
    if (!g->at_rest) return cp_error_set(err, p, "needs \"at_rest\"");
    if (cp_json_bool(x, p, &g->rest_joints, err)) return -1;
  }
  g->rest_speed = 0.01;
  if ((x = json_object_get(v, "rest_speed")) &&
      positive(x, cp_json_path_key(p, path, "rest_speed"), INFINITY,
               &g->rest_speed, err))
    return -1;
  if ((x = json_object_get(v, "rest_scale"))) {
    cp_json_path_key(p, path, "rest_scale");
    if (!g->at_rest) return cp_error_set(err, p, "needs \"at_rest\"");
    if (positive(x, p, INFINITY, &g->rest_scale, err)) return -1;
  }
  return 0;
}

int cp_goal_parse(const json_t *v, const char *path, const cp_scene *s,
                  cp_goal_pairs *pairs, cp_goal *g, cp_error *err) {
  static const char *const keys[] = {
      "body",   "position", "tolerance",  "orientation", "angle_tolerance",
      "min",    "max",      "bodies",     "joints",      "contacts",
      "at_rest", "rest_joints", "rest_speed", "rest_scale", NULL};
  memset(g, 0, sizeof *g);
  char p[CP_JSON_PATH_MAX];
  const json_t *bodies, *joints, *contacts;
  int one_body = json_is_object(v) && !!json_object_get(v, "body");
  int rc = cp_json_check_object(v, path, keys, err);
  if (!rc && !one_body)
    for (int k = 1; body_keys[k] && !rc; ++k)
      if (json_object_get(v, body_keys[k]))
        rc = cp_error_set(err, cp_json_path_key(p, path, body_keys[k]),
                          "goes with \"body\" (or inside a \"bodies\" term)");
  if (rc || array_at(v, "bodies", path, &bodies, err) ||
      array_at(v, "joints", path, &joints, err) ||
      array_at(v, "contacts", path, &contacts, err))
    goto fail;
  g->n_bodies = one_body + (bodies ? (int)json_array_size(bodies) : 0);
  g->n_joints = joints ? (int)json_array_size(joints) : 0;
  g->n_contacts = contacts ? (int)json_array_size(contacts) : 0;
  g->bodies = calloc((size_t)g->n_bodies + 1, sizeof *g->bodies);
  g->joints = calloc((size_t)g->n_joints + 1, sizeof *g->joints);
  g->contacts = calloc((size_t)g->n_contacts + 1, sizeof *g->contacts);
  if (!g->bodies || !g->joints || !g->contacts) {
    nomem(err, path);
    goto fail;
  }
  if (one_body && parse_body(v, path, s, &g->bodies[0], err)) goto fail;
  for (int k = one_body; k < g->n_bodies; ++k) {
    const json_t *e = json_array_get(bodies, (size_t)(k - one_body));
    char q[CP_JSON_PATH_MAX];
    cp_json_path_index(q, cp_json_path_key(p, path, "bodies"),
                       (size_t)(k - one_body));
    if (cp_json_check_object(e, q, body_keys, err) ||
        parse_body(e, q, s, &g->bodies[k], err))
      goto fail;
  }
  for (int k = 0; k < g->n_joints; ++k) {
    char q[CP_JSON_PATH_MAX];
    cp_json_path_index(q, cp_json_path_key(p, path, "joints"), (size_t)k);
    if (parse_joint(json_array_get(joints, (size_t)k), q, s, &g->joints[k],
                    err))
      goto fail;
  }
  for (int k = 0; k < g->n_contacts; ++k) {
    char q[CP_JSON_PATH_MAX];
    cp_json_path_index(q, cp_json_path_key(p, path, "contacts"), (size_t)k);
    if (parse_contact(json_array_get(contacts, (size_t)k), q, s, pairs,
                      &g->contacts[k], err))
      goto fail;
  }
  if (parse_rest(v, path, s, g, err)) goto fail;
  if (g->n_bodies + g->n_joints + g->n_contacts == 0 && !g->at_rest) {
    cp_error_set(err, path,
                 "expected at least one term: \"body\", \"bodies\", "
                 "\"joints\", \"contacts\" or \"at_rest\"");
    goto fail;
  }
  return 0;
fail:
  cp_goal_free(g);
  return -1;
}

void cp_goal_free(cp_goal *g) {
  if (!g) return;
  for (int k = 0; k < g->n_bodies && g->bodies; ++k) free(g->bodies[k].body);
  for (int k = 0; k < g->n_joints && g->joints; ++k) free(g->joints[k].joint);
  for (int k = 0; k < g->n_contacts && g->contacts; ++k) {
    free(g->contacts[k].a);
    free(g->contacts[k].b);
  }
  free(g->bodies);
  free(g->joints);
  free(g->contacts);
  free(g->rest_bodies);
  memset(g, 0, sizeof *g);
}

void cp_goal_pairs_free(cp_goal_pairs *p) {
  free(p->a);
  free(p->b);
  memset(p, 0, sizeof *p);
}

/* --- evaluation ----------------------------------------------------------- */

double cp_goal_angle(const double *q, const double *r) {
  double dot = fabs(q[0] * r[0] + q[1] * r[1] + q[2] * r[2] + q[3] * r[3]);
  return 2 * acos(dot > 1 ? 1 : dot);
}

static double sq(double v) { return v * v; }

/* Squared excess of body term t at state x. */
static double body_excess2(const cp_goal_body *t, const cp_goal_view *v,
                           const double *x) {
  const double *p = x + cp_state_body_at(v->layout, t->body_index);
  double d2 = 0;
  if (t->has_ball) {
    double r = sqrt(sq(p[0] - t->position[0]) + sq(p[1] - t->position[1]) +
                    sq(p[2] - t->position[2])) -
               t->tolerance;
    if (r > 0) d2 += r * r;
  }
  if (t->has_box)
    for (int k = 0; k < 3; ++k) {
      if (p[k] < t->lo[k]) d2 += sq(t->lo[k] - p[k]);
      if (p[k] > t->hi[k]) d2 += sq(p[k] - t->hi[k]);
    }
  if (t->has_orientation) {
    double a = cp_goal_angle(p + 3, t->orientation) - t->angle_tolerance;
    if (a > 0) d2 += sq(v->angle_scale * a);
  }
  return d2;
}

static double joint_excess(const cp_goal_joint *t, const cp_goal_view *v,
                           const double *x) {
  const double *q = x + CP_STATE_BODY_SIZE * v->layout->n_free +
                    CP_STATE_JOINT_SIZE * t->row;
  double e = fabs(q[0] - t->position) - t->tolerance;
  return e > 0 ? (t->prismatic ? 1.0 : v->angle_scale) * e : 0;
}

/* Squared rest excess of the rest bodies at x, scaled by rest_scale T (s):
 * T max(0, |v| - vmax) and T 0.1 m max(0, |w| - vmax / 0.1 m) per body
 * (0 without rest_scale). */
static double rest_excess2(const cp_goal *g, const cp_goal_view *v,
                           const double *x) {
  if (!(g->rest_scale > 0)) return 0;
  double vmax = g->rest_speed, d2 = 0;
  for (int k = 0; k < g->n_rest; ++k) {
    const double *s = x + cp_state_body_at(v->layout, g->rest_bodies[k]);
    double ev = cp_v3_norm(s + 7) - vmax, ew = 0.1 * cp_v3_norm(s + 10) - vmax;
    if (ev > 0) d2 += sq(g->rest_scale * ev);
    if (ew > 0) d2 += sq(g->rest_scale * ew);
  }
  return d2;
}

double cp_goal_distance(const cp_goal *g, const cp_goal_view *v,
                        const double *x, const double *contacts) {
  double d2 = rest_excess2(g, v, x);
  for (int k = 0; k < g->n_bodies; ++k) d2 += body_excess2(&g->bodies[k], v, x);
  for (int k = 0; k < g->n_joints; ++k)
    d2 += sq(joint_excess(&g->joints[k], v, x));
  for (int k = 0; k < g->n_contacts; ++k)
    if (!contacts || contacts[g->contacts[k].pair] == 0)
      d2 += sq(v->contact_miss);
  return sqrt(d2);
}

static int at_rest(const cp_goal *g, const cp_goal_view *v, const double *x) {
  double vmax = g->rest_speed, wmax = g->rest_speed / 0.1;
  for (int k = 0; k < g->n_rest; ++k) {
    const double *s = x + cp_state_body_at(v->layout, g->rest_bodies[k]);
    if (cp_v3_norm(s + 7) > vmax || cp_v3_norm(s + 10) > wmax) return 0;
  }
  if (g->rest_joints) {
    const double *q = x + CP_STATE_BODY_SIZE * v->layout->n_free;
    for (int j = 0; j < v->layout->n_joints; ++j)
      if (fabs(q[CP_STATE_JOINT_SIZE * j + 1]) > wmax) return 0;
  }
  return 1;
}

int cp_goal_met(const cp_goal *g, const cp_goal_view *v, const double *x,
                const double *contacts) {
  for (int k = 0; k < g->n_bodies; ++k)
    if (body_excess2(&g->bodies[k], v, x) > 0) return 0;
  for (int k = 0; k < g->n_joints; ++k)
    if (joint_excess(&g->joints[k], v, x) > 0) return 0;
  for (int k = 0; k < g->n_contacts; ++k)
    if (!contacts || contacts[g->contacts[k].pair] == 0) return 0;
  return !g->at_rest || at_rest(g, v, x);
}

void cp_goal_body_target(const cp_goal_body *t, const double *p, double *out) {
  for (int k = 0; k < 3; ++k) {
    double c = t->has_ball ? t->position[k] : p[k];
    if (t->has_box) c = c < t->lo[k] ? t->lo[k] : c > t->hi[k] ? t->hi[k] : c;
    out[k] = c;
  }
}
