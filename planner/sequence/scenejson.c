/* JSON scenes of the sequence (planner/sequence/sequence_impl.h). */
#include <math.h>
#include <string.h>

#include "models/vec3.h"
#include "planner/sequence/sequence_impl.h"

json_t *cp_seq_vec(const double *a, int n) {
  json_t *v = json_array();
  for (int i = 0; v && i < n; i++) json_array_append_new(v, json_real(a[i]));
  return v;
}

static json_t *shape_json(const cp_shape *s) {
  json_t *o = json_object();
  json_object_set_new(o, "type", json_string(cp_shape_type_name(s->type)));
  switch (s->type) {
  case CP_SHAPE_BOX: json_object_set_new(o, "size", cp_seq_vec(s->size, 3)); break;
  case CP_SHAPE_SPHERE: json_object_set_new(o, "radius", json_real(s->radius)); break;
  case CP_SHAPE_CYLINDER:
  case CP_SHAPE_CAPSULE:
    json_object_set_new(o, "radius", json_real(s->radius));
    json_object_set_new(o, "length", json_real(s->length));
    break;
  case CP_SHAPE_PLANE:
    json_object_set_new(o, "normal", cp_seq_vec(s->normal, 3));
    json_object_set_new(o, "offset", json_real(s->offset));
    break;
  default: json_decref(o); return NULL;
  }
  return o;
}

json_t *cp_seq_body_json(const cp_body *b, const double *x, const double *q,
                         const double *v, const double *w) {
  json_t *shape = shape_json(&b->shape);
  if (!shape) return NULL;
  json_t *o = json_object();
  json_object_set_new(o, "name", json_string(b->name));
  json_object_set_new(o, "shape", shape);
  if (b->fixed) {
    json_object_set_new(o, "fixed", json_true());
  } else {
    json_object_set_new(o, "mass", json_real(b->mass));
    json_t *rows = json_array();
    for (int r = 0; r < 3; r++) json_array_append_new(rows, cp_seq_vec(b->inertia + 3 * r, 3));
    json_object_set_new(o, "inertia", rows);
    if (v) json_object_set_new(o, "velocity", cp_seq_vec(v, 3));
    if (w) json_object_set_new(o, "angular_velocity", cp_seq_vec(w, 3));
  }
  json_object_set_new(o, "position", cp_seq_vec(x, 3));
  json_object_set_new(o, "orientation", cp_seq_vec(q, 4));
  return o;
}

static int present(const json_t *bodies, const char *name) {
  size_t i;
  json_t *b;
  json_array_foreach(bodies, i, b)
    if (!strcmp(json_string_value(json_object_get(b, "name")), name)) return 1;
  return 0;
}

json_t *cp_seq_friction_json(const cp_scene *s, const json_t *bodies, const char *manip, double mu) {
  json_t *f = json_object(), *pairs = json_array();
  json_object_set_new(f, "default", json_real(s->mu_default));
  for (int i = 0; i < s->n_pairs; i++) {
    if (!present(bodies, s->pairs[i].a) || !present(bodies, s->pairs[i].b)) continue;
    json_t *p = json_object();
    json_object_set_new(p, "a", json_string(s->pairs[i].a));
    json_object_set_new(p, "b", json_string(s->pairs[i].b));
    json_object_set_new(p, "mu", json_real(s->pairs[i].mu));
    json_array_append_new(pairs, p);
  }
  size_t i;
  json_t *b;
  json_array_foreach(bodies, i, b) {
    if (!manip || json_is_true(json_object_get(b, "fixed"))) continue;
    json_t *p = json_object();
    json_object_set_new(p, "a", json_object_get(b, "name"));
    json_incref(json_object_get(b, "name"));
    json_object_set_new(p, "b", json_string(manip));
    json_object_set_new(p, "mu", json_real(mu));
    json_array_append_new(pairs, p);
  }
  json_object_set_new(f, "pairs", pairs);
  return f;
}

void cp_seq_yaw_quat(const double *g, double *q) {
  const double a = atan2(g[1], g[0]);
  q[0] = cos(a / 2);
  q[1] = q[2] = 0;
  q[3] = sin(a / 2);
}

void cp_seq_box_aabb(const double *sz, const double *q, double *half) {
  double R[9];
  cp_quat_to_mat(R, q);
  for (int i = 0; i < 3; i++)
    half[i] = 0.5 * (fabs(R[3 * i]) * sz[0] + fabs(R[3 * i + 1]) * sz[1] + fabs(R[3 * i + 2]) * sz[2]);
}

double cp_seq_quat_angle(const double *a, const double *b) {
  double d = fabs(a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3]);
  if (d > 1) d = 1;
  return 2 * acos(d);
}

double cp_seq_part_height(const cp_sequence_task *t, int p, const double *q) {
  const double *sz = t->scene.bodies[t->part_body[p]].shape.size;
  double R[9];
  cp_quat_to_mat(R, q);
  for (int k = 0; k < 3; k++)
    if (fabs(R[6 + k]) > 1 - 1e-6) return sz[k];
  return -1;
}

static double top_of(const cp_body *b, const double *x, const double *q) {
  double half[3];
  switch (b->shape.type) {
  case CP_SHAPE_BOX: cp_seq_box_aabb(b->shape.size, q, half); return x[2] + half[2];
  case CP_SHAPE_SPHERE: return x[2] + b->shape.radius;
  case CP_SHAPE_CYLINDER:
  case CP_SHAPE_CAPSULE: return x[2] + b->shape.radius + b->shape.length;
  default: return -INFINITY; /* planes: below everything that rests on them */
  }
}

double cp_seq_top(const cp_sequence_task *t) {
  double top = 0;
  for (int b = 0; b < t->scene.n_bodies; b++) {
    const cp_body *bd = &t->scene.bodies[b];
    double z = top_of(bd, bd->x, bd->q);
    if (z > top) top = z;
  }
  for (int k = 0; k < t->n_parts; k++) {
    const double *s = t->staged + 7 * k;
    double z = top_of(&t->scene.bodies[t->part_body[k]], s, s + 3);
    if (z > top) top = z;
  }
  return top;
}

double cp_seq_transport_height(const cp_sequence_task *t, int p) {
  double h = cp_seq_part_height(t, p, t->scene.bodies[t->part_body[p]].q);
  return cp_seq_top(t) + t->clearance + 0.5 * (h > 0 ? h : 0);
}
