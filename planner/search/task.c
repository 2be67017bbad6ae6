#include "planner/search/task.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "models/jsonread.h"
#include "planner/sim/actuate.h"
#include "planner/search/pinch.h"
#include "planner/search/reach.h"
#include "planner/search/search.h"
#include "planner/search/task_keys.h"
#include "planner/sim/statelayout.h"

static char *dupn(const char *s, size_t n) {
  char *d = malloc(n + 1);
  if (d) {
    memcpy(d, s, n);
    d[n] = '\0';
  }
  return d;
}

static char *dupstr(const char *s) { return dupn(s, strlen(s)); }

/* Directory of a path ("." for a bare name); malloc'd. */
static char *dir_of(const char *path) {
  const char *slash = path ? strrchr(path, '/') : NULL;
  if (!slash) return dupstr(".");
  if (slash == path) return dupstr("/");
  return dupn(path, (size_t)(slash - path));
}

static int number_in(const json_t *v, const char *path, double lo, double hi,
                     int open_lo, double *out, cp_error *err) {
  if (cp_json_number(v, path, out, err)) return -1;
  if (*out < lo || *out > hi || (open_lo && *out == lo)) /* say the range and the value */
    return isinf(hi) ? cp_error_set(err, path, "expected a number %s %g, got %.15g",
                                    open_lo ? ">" : ">=", lo, *out)
                     : cp_error_set(err, path, "expected a number in %c%g, %g], got %.15g",
                                    open_lo ? '(' : '[', lo, hi, *out);
  return 0;
}

static int int_in(const json_t *v, const char *path, long lo, long hi,
                  long *out, cp_error *err) {
  if (!json_is_integer(v))
    return cp_error_set(err, path, "expected an integer in [%ld, %ld]", lo, hi);
  json_int_t x = json_integer_value(v);
  if (x < lo || x > hi)
    return cp_error_set(err, path, "expected an integer in [%ld, %ld], got %lld",
                        lo, hi, (long long)x);
  *out = (long)x;
  return 0;
}

/* A joint name "manip/joint" -> its row in the world's state
 * (planner/sim/statelayout.h: mimic followers have none); -1 when no such joint,
 * -2 for a mimic follower (*leader: its leader's name), -3 out of memory. */
static int joint_row(const cp_scene *s, const char *name, const char **leader) {
  cp_state_layout l;
  if (cp_state_layout_init(&l, s)) return -3;
  int row = cp_state_joint_row(&l, s, name, leader);
  cp_state_layout_free(&l);
  return row;
}

/* Every file read for a task goes through record(): read from the caller's
 * source (or the file system) and kept in the task's files, once per
 * path. */
typedef struct recorder {
  cp_task *t;
  const cp_file_source *src;
} recorder;

static int keep_file(cp_task *t, const char *kind, const char *path,
                     const char *data, size_t n) {
  for (int i = 0; i < t->n_files; ++i)
    if (!strcmp(t->files[i].path, path)) return 0;
  cp_task_file *f = realloc(t->files, (size_t)(t->n_files + 1) * sizeof *f);
  if (!f) return -1;
  t->files = f;
  f += t->n_files;
  memset(f, 0, sizeof *f);
  snprintf(f->kind, sizeof f->kind, "%s", kind);
  f->path = dupstr(path);
  f->data = dupn(data, n);
  f->size = n;
  if (!f->path || !f->data) {
    free(f->path);
    free(f->data);
    return -1;
  }
  cp_sha256_hex(data, n, f->sha256);
  t->n_files++;
  return 0;
}

static char *record(void *ctx, const char *path, const char *kind,
                    size_t *len, cp_error *err) {
  recorder *r = ctx;
  char *b = cp_file_source_read(r->src, path, kind, len, err);
  if (b && keep_file(r->t, kind, path, b, *len)) {
    free(b);
    cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
    return NULL;
  }
  return b;
}

static int rec_is_dir(void *ctx, const char *path) {
  recorder *r = ctx;
  return r->src->is_dir(r->src->ctx, path);
}

static int parse_scene(cp_task *t, const json_t *v, const char *task_dir,
                       const cp_file_source *files, cp_error *err) {
  cp_scene_options so = cp_scene_options_defaults();
  so.files = files;
  /* A planning start state may hold moving contacts: time stepping treats
   * approaching ones as impacts (docs/math.md §6). */
  so.check_normal_speed = 0;
  cp_error e;
  if (json_is_string(v)) {
    const char *rel = json_string_value(v);
    char *path;
    if (rel[0] == '/' || !task_dir) {
      path = dupstr(rel);
    } else {
      size_t n = strlen(task_dir) + strlen(rel) + 2;
      path = malloc(n);
      if (path) snprintf(path, n, "%s/%s", task_dir, rel);
    }
    if (!path) return cp_error_setc(err, CP_ERR_NOMEM, "scene", "out of memory");
    size_t len;
    t->scene_text = cp_file_source_read(files, path, "scene", &len, &e);
    if (!t->scene_text) {
      free(path);
      return cp_error_setc(err, e.code, "scene", "%s", e.msg);
    }
    t->scene_base = dir_of(path);
    if (!t->scene_base) {
      free(path);
      return cp_error_setc(err, CP_ERR_NOMEM, "scene", "out of memory");
    }
    int rc = cp_scene_parse(t->scene_text, len, t->scene_base, &so, &t->scene,
                            &e);
    if (rc) {
      char where[CP_JSON_PATH_MAX];
      snprintf(where, sizeof where, "scene");
      cp_error_setc(err, e.code, where, "scene file %.100s: %.60s: %.200s", path,
                   e.where[0] ? e.where : "-", e.msg);
    }
    free(path);
    return rc;
  }
  if (!json_is_object(v))
    return cp_error_set(err, "scene",
                        "expected a path (string) or a scene object");
  t->scene_text = json_dumps(v, JSON_COMPACT | JSON_REAL_PRECISION(17));
  t->scene_base = task_dir ? dupstr(task_dir) : NULL;
  if (!t->scene_text || (task_dir && !t->scene_base))
    return cp_error_setc(err, CP_ERR_NOMEM, "scene", "out of memory");
  if (cp_scene_parse(t->scene_text, strlen(t->scene_text), t->scene_base, &so,
                     &t->scene, &e)) {
    char where[CP_JSON_PATH_MAX];
    cp_json_path_key(where, "scene", e.where[0] ? e.where : "");
    if (!e.where[0]) snprintf(where, sizeof where, "scene");
    return cp_error_setc(err, e.code, where, "%s", e.msg);
  }
  return 0;
}

/* ---- Input kinds (docs/planner.md, "Input kinds") ---- */

static const char *const effort_keys[] = {"kind", "values", "range", "samples",
                                          "acceleration", NULL};
static const char *const target_keys[] = {
    "kind",     "values",  "range",        "samples", "relative",
    "stiffness", "damping", "effort_limit", NULL};
static const char *const cartesian_keys[] = {
    "kind", "values", "range", "samples", "link", "point", "direction", "axis",
    NULL};
static const char *const reach_keys[] = {
    "kind", "values", "range", "samples", "link", "point", "body", "exclude",
    "offset", "approach", "push", "hold", "spread", NULL};
static const char *const *const input_keys[] = {
    effort_keys, target_keys, cartesian_keys, reach_keys, cp_pinch_keys};

/* The input's "kind" and, for a Cartesian input, its link, point and
 * direction (or axis). */
static int parse_input_kind(cp_task *t, cp_task_input *ti, const json_t *in,
                            const char *p, cp_error *err) {
  char q[CP_JSON_PATH_MAX];
  ti->kind = CP_INPUT_EFFORT;
  if (!json_is_object(in)) return 0; /* refused by the keys' check */
  const json_t *k = json_object_get(in, "kind");
  ti->kind = CP_INPUT_EFFORT;
  ti->stiffness = ti->damping = ti->effort_limit = NAN;
  if (k) {
    const char *s;
    if (cp_json_string(k, cp_json_path_key(q, p, "kind"), &s, err)) return -1;
    if (!strcmp(s, "effort")) ti->kind = CP_INPUT_EFFORT;
    else if (!strcmp(s, "target")) ti->kind = CP_INPUT_TARGET;
    else if (!strcmp(s, "cartesian")) ti->kind = CP_INPUT_CARTESIAN;
    else if (!strcmp(s, "reach")) ti->kind = CP_INPUT_REACH;
    else if (!strcmp(s, "pinch")) ti->kind = CP_INPUT_PINCH;
    else
      return cp_error_set(err, q,
                          "unknown input kind \"%.40s\" (expected \"effort\", "
                          "\"target\", \"cartesian\", \"reach\" or \"pinch\")",
                          s);
  }
  if (ti->kind != CP_INPUT_EFFORT && t->mode == CP_TASK_QUASISTATIC)
    return cp_error_set(err, q,
                        "a %s input needs \"mode\": \"dynamic\" (quasistatic "
                        "inputs are joint velocities)",
                        ti->kind == CP_INPUT_TARGET      ? "target"
                        : ti->kind == CP_INPUT_CARTESIAN ? "cartesian"
                        : ti->kind == CP_INPUT_REACH     ? "reach" : "pinch");
  if (ti->kind == CP_INPUT_PINCH) return cp_pinch_parse(t, ti, in, p, err);
  if (ti->kind == CP_INPUT_REACH) return cp_reach_parse(t, ti, in, p, err);
  if (ti->kind != CP_INPUT_CARTESIAN) return 0;
  ti->row = -1;
  const json_t *x = json_object_get(in, "link");
  const char *link;
  cp_json_path_key(q, p, "link");
  if (!x) return cp_error_set(err, q, "required (\"manipulator/link\")");
  if (cp_json_string(x, q, &link, err)) return -1;
  cp_ref r;
  if (cp_scene_find(&t->scene, link, &r) || r.manip < 0)
    return cp_error_set(err, q, "no link \"%.60s\" in the scene (expected "
                                "\"manipulator/link\")", link);
  ti->manip = r.manip;
  ti->index = r.link;
  if ((x = json_object_get(in, "point")) &&
      cp_json_vector(x, cp_json_path_key(q, p, "point"), 3, ti->point, err))
    return -1;
  const json_t *d = json_object_get(in, "direction"), *a = json_object_get(in, "axis");
  if (!!d == !!a)
    return cp_error_set(err, p, "expected exactly one of \"direction\" "
                                "(a displacement in m) and \"axis\" (a "
                                "rotation in rad)");
  ti->rotation = a != NULL;
  cp_json_path_key(q, p, a ? "axis" : "direction");
  if (cp_json_vector(a ? a : d, q, 3, ti->direction, err)) return -1;
  double n = sqrt(ti->direction[0] * ti->direction[0] +
                  ti->direction[1] * ti->direction[1] +
                  ti->direction[2] * ti->direction[2]);
  if (!(n > 0)) return cp_error_set(err, q, "expected a non-zero vector");
  for (int c = 0; c < 3; ++c) ti->direction[c] /= n;
  return 0;
}

/* A joint input's drive: the joint's drive mode against the kind, target
 * limits, relative flag, stiffness, damping and effort limit (gains are
 * resolved once the action's step is known: resolve_gains). */
static int parse_input_drive(cp_task *t, cp_task_input *ti, const json_t *in,
                             const char *p, cp_error *err) {
  if (ti->kind >= CP_INPUT_CARTESIAN) return 0; /* a link's input */
  char q[CP_JSON_PATH_MAX];
  cp_state_layout l;
  if (cp_state_layout_init(&l, &t->scene))
    return cp_error_setc(err, CP_ERR_NOMEM, p, "out of memory");
  ti->manip = l.row_manip[ti->row];
  ti->index = l.row_joint[ti->row];
  cp_state_layout_free(&l);
  const cp_joint *j = &t->scene.manips[ti->manip].joints[ti->index];
  int accel = j->drive == CP_DRIVE_ACCELERATION;
  const json_t *x;
  if (ti->kind == CP_INPUT_EFFORT) {
    if ((x = json_object_get(in, "acceleration")) &&
        cp_json_bool(x, cp_json_path_key(q, p, "acceleration"),
                     &ti->acceleration, err))
      return -1;
    if (t->mode == CP_TASK_QUASISTATIC) {
      if (x) return cp_error_set(err, q, "quasistatic inputs are velocities");
      return 0;
    }
    if (accel && !ti->acceleration)
      return cp_error_set(err, p,
                          "joint \"%.60s\" is acceleration-driven in the scene: "
                          "its input would be an acceleration, not an effort "
                          "(say \"acceleration\": true to mean that, or make "
                          "the joint effort-driven)",
                          ti->joint);
    if (!accel && ti->acceleration)
      return cp_error_set(err, q, "joint \"%.60s\" is effort-driven",
                          ti->joint);
    return 0;
  }
  if (accel)
    return cp_error_set(err, p,
                        "joint \"%.60s\" is acceleration-driven in the scene: "
                        "a target input needs an effort-driven joint",
                        ti->joint);
  if ((x = json_object_get(in, "relative")) &&
      cp_json_bool(x, cp_json_path_key(q, p, "relative"), &ti->relative, err))
    return -1;
  if (!ti->relative && j->has_limits)
    for (int k = 0; k < ti->n_values; ++k)
      if (ti->values[k] < j->lower || ti->values[k] > j->upper)
        return cp_error_set(
            err, cp_json_path_key(q, p, json_object_get(in, "values") ? "values" : "range"),
            "target %g is outside the joint's limits [%g, %g]", ti->values[k],
            j->lower, j->upper);
  if ((x = json_object_get(in, "stiffness")) &&
      number_in(x, cp_json_path_key(q, p, "stiffness"), 0, INFINITY, 1,
                &ti->stiffness, err))
    return -1;
  if ((x = json_object_get(in, "damping")) &&
      number_in(x, cp_json_path_key(q, p, "damping"), 0, INFINITY, 0,
                &ti->damping, err))
    return -1;
  ti->effort_limit = j->effort_limit;
  if ((x = json_object_get(in, "effort_limit")) &&
      number_in(x, cp_json_path_key(q, p, "effort_limit"), 0, INFINITY, 1,
                &ti->effort_limit, err))
    return -1;
  return 0;
}

/* Cartesian inputs on one link form a group: one point, and no joint on
 * the link's path driven by another input. */
static int parse_cartesian_groups(cp_task *t, cp_error *err) {
  for (int i = 0; i < t->n_inputs; ++i) {
    const cp_task_input *a = &t->inputs[i];
    if (a->kind != CP_INPUT_CARTESIAN) continue;
    char p[CP_JSON_PATH_MAX];
    cp_json_path_key(p, "inputs", a->joint);
    for (int k = 0; k < i; ++k) {
      const cp_task_input *b = &t->inputs[k];
      if (b->kind == CP_INPUT_CARTESIAN && b->manip == a->manip &&
          b->index == a->index &&
          memcmp(a->point, b->point, sizeof a->point))
        return cp_error_set(err, p,
                            "Cartesian inputs on one link take one \"point\" "
                            "(\"%.60s\" has another)", b->joint);
    }
    const cp_chain *c = &t->scene.manips[a->manip];
    for (int k = 0; k < t->n_inputs; ++k) {
      const cp_task_input *b = &t->inputs[k];
      if (b->kind >= CP_INPUT_CARTESIAN || b->manip != a->manip)
        continue;
      if (cp_chain_is_ancestor(c, b->index, a->index))
        return cp_error_set(err, p,
                            "joint \"%.60s\" moves this link and is an input "
                            "itself: a Cartesian input drives every joint on "
                            "its link's path", b->joint);
    }
  }
  return 0;
}

/* Resolves target inputs' gains (the action's step known): defaults
 * critically damped at the start configuration, and every gain pair
 * checked for the explicit law's stability (planner/sim/actuate.h). */
static int resolve_gains(cp_task *t, cp_error *err) {
  cp_actuate_work w;
  if (cp_actuate_work_init(&w, &t->scene))
    return cp_error_setc(err, CP_ERR_NOMEM, "inputs", "out of memory");
  int rc = 0;
  for (int i = 0; i < t->n_inputs && !rc; ++i) {
    cp_task_input *ti = &t->inputs[i];
    if (ti->kind != CP_INPUT_TARGET) continue;
    char p[CP_JSON_PATH_MAX], q[CP_JSON_PATH_MAX];
    cp_json_path_key(p, "inputs", ti->joint);
    double held, inertia =
        cp_actuate_inertia(&t->scene.manips[ti->manip], ti->index, &w, &held);
    if (!(inertia > 0)) {
      rc = cp_error_set(err, p, "the chain's mass matrix is not positive "
                                "definite at the start");
      break;
    }
    double kp, kd;
    /* The implicit law is stable at any gain: no cap, no refusal. */
    cp_actuate_default_gains(held, t->pd_implicit ? INFINITY : inertia,
                             t->duration, t->dt, &kp, &kd);
    int given = !isnan(ti->stiffness);
    if (given) {
      kp = ti->stiffness;
      kd = 2 * sqrt(kp * inertia);
    }
    if (!isnan(ti->damping)) kd = ti->damping;
    ti->stiffness = kp;
    ti->damping = kd;
    double s = cp_actuate_stability(kp, kd, inertia, t->dt);
    if (!t->pd_implicit && !(s < CP_ACTUATE_STABILITY_MAX))
      rc = cp_error_set(err, cp_json_path_key(q, p, given ? "stiffness" : "damping"),
                        "unstable gains at dt %g: Kp dt^2/I + 2 Kd dt/I = %.3g "
                        "with the joint's inertia I = %.4g at the start "
                        "(explicit PD needs < 4; complan takes < %g): lower "
                        "the gains or the step, or take \"action\": {\"pd\": "
                        "\"implicit\"}",
                        t->dt, s, inertia, CP_ACTUATE_STABILITY_MAX);
  }
  cp_actuate_work_free(&w);
  return rc;
}

static int parse_inputs(cp_task *t, const json_t *v, cp_error *err) {
  if (!json_is_object(v) || json_object_size(v) == 0)
    return cp_error_set(err, "inputs",
                        "expected a non-empty object {\"manip/joint\": ...}");
  t->n_inputs = (int)json_object_size(v);
  t->inputs = calloc((size_t)t->n_inputs, sizeof *t->inputs);
  if (!t->inputs) return cp_error_setc(err, CP_ERR_NOMEM, "inputs", "out of memory");
  const char *key;
  json_t *in;
  int i = 0;
  t->n_actions = 1;
  json_object_foreach((json_t *)v, key, in) {
    char p[CP_JSON_PATH_MAX], q[CP_JSON_PATH_MAX];
    cp_json_path_key(p, "inputs", key);
    cp_task_input *ti = &t->inputs[i++];
    if (!(ti->joint = dupstr(key))) return cp_error_setc(err, CP_ERR_NOMEM, p, "out of memory");
    if (parse_input_kind(t, ti, in, p, err)) return -1;
    if (ti->kind < CP_INPUT_CARTESIAN) { /* a joint's input */
      const char *leader = NULL;
      ti->row = joint_row(&t->scene, key, &leader);
      if (ti->row == -3) return cp_error_setc(err, CP_ERR_NOMEM, p, "out of memory");
      if (ti->row == -2)
        return cp_error_set(err, p,
                            "joint \"%.60s\" mimics \"%.60s\": an input goes "
                            "on the leader (the follower moves with it)",
                            key, leader);
      if (ti->row < 0)
        return cp_error_set(err, p,
                            "no joint \"%.60s\" in the scene (expected "
                            "\"manipulator/joint\")",
                            key);
      for (int k = 0; k < i - 1; ++k)
        if (t->inputs[k].row == ti->row)
          return cp_error_set(err, p, "joint given twice");
    }
    if (cp_json_check_object(in, p, input_keys[ti->kind], err)) return -1;
    const json_t *vals = json_object_get(in, "values");
    const json_t *range = json_object_get(in, "range");
    const json_t *samples = json_object_get(in, "samples");
    if (!!vals == !!range)
      return cp_error_set(err, p,
                          "expected exactly one of \"values\" and \"range\"");
    if (vals) {
      cp_json_path_key(q, p, "values");
      if (samples)
        return cp_error_set(err, cp_json_path_key(q, p, "samples"),
                            "\"samples\" goes with \"range\", not \"values\"");
      size_t n = json_is_array(vals) ? json_array_size(vals) : 0;
      if (n == 0 || n > 1000)
        return cp_error_set(err, q, "expected an array of 1 to 1000 numbers");
      ti->n_values = (int)n;
      if (!(ti->values = malloc(n * sizeof *ti->values)))
        return cp_error_setc(err, CP_ERR_NOMEM, q, "out of memory");
      if (cp_json_vector(vals, q, (int)n, ti->values, err)) return -1;
    } else {
      double r[2];
      long ns = 0;
      if (cp_json_vector(range, cp_json_path_key(q, p, "range"), 2, r, err))
        return -1;
      if (r[0] > r[1])
        return cp_error_set(err, q, "expected [lo, hi] with lo <= hi");
      if (!samples)
        return cp_error_set(err, cp_json_path_key(q, p, "samples"),
                            "required with \"range\"");
      if (int_in(samples, cp_json_path_key(q, p, "samples"), 1, 1000, &ns, err))
        return -1;
      ti->has_range = 1; /* continuous sampling draws from [lo, hi] */
      ti->lo = r[0];
      ti->hi = r[1];
      ti->n_values = (int)ns;
      if (!(ti->values = malloc((size_t)ns * sizeof *ti->values)))
        return cp_error_setc(err, CP_ERR_NOMEM, q, "out of memory");
      for (long k = 0; k < ns; ++k)
        ti->values[k] = ns == 1 ? 0.5 * (r[0] + r[1])
                                : r[0] + (r[1] - r[0]) * (double)k /
                                             (double)(ns - 1);
    }
    if (t->n_actions > 1000000 / ti->n_values)
      return cp_error_set(err, p,
                          "more than 10^6 candidate actions in all (the "
                          "product of the inputs' value counts)");
    t->n_actions *= ti->n_values;
    if (parse_input_drive(t, ti, in, p, err)) return -1;
  }
  if (parse_cartesian_groups(t, err)) return -1;
  return cp_reach_check(t, err) || cp_pinch_check(t, err) ? -1 : 0;
}

static int parse_action(cp_task *t, const json_t *v, cp_error *err) {
  static const char *const keys[] = {"duration", "dt", "pd", NULL};
  if (cp_json_check_object(v, "action", keys, err)) return -1;
  const json_t *pd = json_object_get(v, "pd");
  if (pd) {
    const char *law = json_string_value(pd);
    if (!law || (strcmp(law, "explicit") && strcmp(law, "implicit")))
      return cp_error_set(err, "action.pd",
                          "expected \"explicit\" or \"implicit\"");
    t->pd_implicit = !strcmp(law, "implicit");
  }
  const json_t *d = json_object_get(v, "duration"), *h = json_object_get(v, "dt");
  if (!d) return cp_error_set(err, "action.duration", "required (seconds > 0)");
  if (number_in(d, "action.duration", 0, 1e6, 1, &t->duration, err)) return -1;
  t->dt = t->duration; /* at most the action, split into at most 10^6 steps */
  if (h && cp_json_number(h, "action.dt", &t->dt, err)) return -1;
  const double n = round(t->duration / t->dt);
  if (!(t->dt > 0 && t->dt <= t->duration && n <= 1e6))
    return cp_error_set(err, "action.dt", "expected seconds in (0, %g] (at most action.duration) and "
                        ">= %g (at most 10^6 steps), got %.15g", t->duration, t->duration / 1e6, t->dt);
  t->steps = n < 1 ? 1 : (int)n;
  return 0;
}

/* The goal ("goal": one phase) or the phases ("phases": a list of goals),
 * planner/search/goal.h; then the one-body summary (task.h). */
static int parse_goal(cp_task *t, const json_t *goal, const json_t *phases,
                      cp_error *err) {
  if (!!goal == !!phases)
    return cp_error_set(err, goal ? "phases" : "goal",
                        goal ? "give \"goal\" or \"phases\", not both"
                             : "required key missing (or \"phases\")");
  if (phases && (!json_is_array(phases) || json_array_size(phases) == 0 ||
                 json_array_size(phases) > 100))
    return cp_error_set(err, "phases",
                        "expected a non-empty array of 1 to 100 goals");
  int n = phases ? (int)json_array_size(phases) : 1;
  if (!(t->phases = calloc((size_t)n, sizeof *t->phases)))
    return cp_error_setc(err, CP_ERR_NOMEM, "goal", "out of memory");
  for (int k = 0; k < n; ++k) {
    char p[CP_JSON_PATH_MAX];
    if (phases) cp_json_path_index(p, "phases", (size_t)k);
    else snprintf(p, sizeof p, "goal");
    if (cp_goal_parse(phases ? json_array_get(phases, (size_t)k) : goal, p,
                      &t->scene, &t->pairs, &t->phases[k], err))
      return -1;
    t->n_phases = k + 1;
  }
  /* The summary: the last phase's first body term. */
  const cp_goal *last = &t->phases[n - 1];
  cp_task_goal *g = &t->goal;
  g->body_index = -1;
  for (int b = 0; b < t->scene.n_bodies && g->body_index < 0; ++b)
    if (!t->scene.bodies[b].fixed) g->body_index = b;
  if (g->body_index < 0)
    return cp_error_set(err, phases ? "phases" : "goal",
                        "the scene has no free body");
  const cp_body *start = &t->scene.bodies[g->body_index];
  memcpy(g->position, start->x, sizeof g->position);
  g->tolerance = 0.01; /* shown as a 1 cm ball (the viewer draws spheres) */
  if (last->n_bodies > 0) {
    const cp_goal_body *b = &last->bodies[0];
    g->body_index = b->body_index;
    cp_goal_body_target(b, t->scene.bodies[b->body_index].x, g->position);
    /* A box shows as a ball of half its narrowest finite side (1 cm when
     * it has none): the viewer draws the goal as a sphere. */
    for (int k = 0; k < 3 && !b->has_ball; ++k)
      if (isfinite(b->hi[k] - b->lo[k]) && b->hi[k] > b->lo[k] &&
          0.5 * (b->hi[k] - b->lo[k]) < g->tolerance)
        g->tolerance = 0.5 * (b->hi[k] - b->lo[k]);
    if (b->has_ball) g->tolerance = b->tolerance;
    g->has_orientation = b->has_orientation;
    memcpy(g->orientation, b->orientation, sizeof g->orientation);
    g->angle_tolerance = b->angle_tolerance;
  }
  g->at_rest = last->at_rest;
  g->rest_speed = last->rest_speed;
  if (!(g->body = dupstr(t->scene.bodies[g->body_index].name)))
    return cp_error_setc(err, CP_ERR_NOMEM, "goal", "out of memory");
  return 0;
}

/* cost.path_bodies: free body names (absent: every free body). */
static int parse_path_bodies(cp_task *t, const json_t *v, cp_error *err) {
  const cp_scene *s = &t->scene;
  size_t n = v ? json_array_size(v) : (size_t)s->n_bodies;
  if (v && (!json_is_array(v) || n == 0))
    return cp_error_set(err, "cost.path_bodies",
                        "expected a non-empty array of free body names");
  if (!(t->path_bodies = malloc((n + 1) * sizeof *t->path_bodies)))
    return cp_error_setc(err, CP_ERR_NOMEM, "cost", "out of memory");
  for (size_t k = 0; k < n; ++k) {
    if (!v) {
      if (!s->bodies[k].fixed) t->path_bodies[t->n_path_bodies++] = (int)k;
      continue;
    }
    char p[CP_JSON_PATH_MAX];
    const char *name;
    cp_json_path_index(p, "cost.path_bodies", k);
    if (cp_json_string(json_array_get(v, k), p, &name, err)) return -1;
    int b = -1;
    for (int i = 0; i < s->n_bodies; ++i)
      if (!s->bodies[i].fixed && !strcmp(s->bodies[i].name, name)) b = i;
    if (b < 0)
      return cp_error_set(err, p, "no free body \"%.60s\" in the scene", name);
    t->path_bodies[t->n_path_bodies++] = b;
  }
  return 0;
}

static int parse_search(cp_task *t, const json_t *v, cp_error *err) {
  static const char *const keys[] = {
      "method", "weight",  "resolution", "goal_bias", "seed",  "candidates",
      "speed",  "delta_bn", "delta_s",   "metric",    "sampling",
      "shortcut", "batch", "connect", "goal_k", "steer", "steer_rotation",
      "steer_probe", "pipeline", "drop_rejected", "fresh_actions", NULL};
  if (cp_json_check_object(v, "search", keys, err)) return -1;
  const json_t *x;
  if ((x = json_object_get(v, "method"))) {
    const char *m;
    if (cp_json_string(x, "search.method", &m, err)) return -1;
    if (strcmp(m, "astar") && strcmp(m, "rrt") && strcmp(m, "sst"))
      return cp_error_set(err, "search.method",
                          "expected \"astar\", \"rrt\" or \"sst\", got "
                          "\"%.40s\"",
                          m);
    snprintf(t->method, sizeof t->method, "%s", m);
  }
  if ((x = json_object_get(v, "sampling"))) {
    const char *m;
    if (cp_json_string(x, "search.sampling", &m, err)) return -1;
    if (strcmp(m, "grid") && strcmp(m, "continuous"))
      return cp_error_set(err, "search.sampling",
                          "expected \"grid\" or \"continuous\", got "
                          "\"%.40s\"", m);
    t->continuous = !strcmp(m, "continuous");
    if (t->continuous && !strcmp(t->method, "astar"))
      return cp_error_set(err, "search.sampling",
                          "continuous sampling goes with \"rrt\" or \"sst\" "
                          "(astar expands every action of a grid)");
    if (t->continuous) t->n_actions = CP_TASK_CONTINUOUS_ACTIONS;
  }
  if ((x = json_object_get(v, "weight")) &&
      number_in(x, "search.weight", 0, 1e6, 0, &t->weight, err))
    return -1;
  if ((x = json_object_get(v, "resolution"))) {
    static const char *const rk[] = {"position", "angle", "velocity", NULL};
    if (cp_json_check_object(x, "search.resolution", rk, err)) return -1;
    const json_t *y;
    if ((y = json_object_get(x, "position")) &&
        number_in(y, "search.resolution.position", 0, INFINITY, 1,
                  &t->res_position, err))
      return -1;
    if ((y = json_object_get(x, "angle")) &&
        number_in(y, "search.resolution.angle", 0, INFINITY, 1, &t->res_angle,
                  err))
      return -1;
    if ((y = json_object_get(x, "velocity")) &&
        number_in(y, "search.resolution.velocity", 0, INFINITY, 1,
                  &t->res_velocity, err))
      return -1;
  }
  if ((x = json_object_get(v, "goal_bias")) &&
      number_in(x, "search.goal_bias", 0, 1, 0, &t->goal_bias, err))
    return -1;
  long l = 0;
  if ((x = json_object_get(v, "seed"))) {
    if (int_in(x, "search.seed", 0, 0x7fffffffffffffffL, &l, err)) return -1;
    t->seed = (uint64_t)l;
  }
  if ((x = json_object_get(v, "candidates"))) {
    if (int_in(x, "search.candidates", 1, 10000, &l, err)) return -1;
    t->candidates = (int)l;
  }
  if ((x = json_object_get(v, "batch"))) {
    if (int_in(x, "search.batch", 1, 4096, &l, err)) return -1;
    t->search_batch = (int)l;
  }
  if ((x = json_object_get(v, "pipeline")) &&
      cp_json_bool(x, "search.pipeline", &t->search_pipeline, err))
    return -1;
  if ((x = json_object_get(v, "shortcut")) &&
      int_in(x, "search.shortcut", 0, 100000000, &t->shortcut, err))
    return -1;
  if ((x = json_object_get(v, "speed")) &&
      number_in(x, "search.speed", 0, INFINITY, 1, &t->speed, err))
    return -1;
  if ((x = json_object_get(v, "delta_bn")) &&
      number_in(x, "search.delta_bn", 0, INFINITY, 1, &t->delta_bn, err))
    return -1;
  if ((x = json_object_get(v, "delta_s")) &&
      number_in(x, "search.delta_s", 0, INFINITY, 1, &t->delta_s, err))
    return -1;
  if ((x = json_object_get(v, "metric"))) {
    static const char *const mk[] = {"position", "orientation", "velocity",
                                     "joint_position", "joint_velocity",
                                     "angle", "robot", NULL};
    if (cp_json_check_object(x, "search.metric", mk, err)) return -1;
    const json_t *ang = json_object_get(x, "angle");
    if (ang && number_in(ang, "search.metric.angle", 0, INFINITY, 1,
                         &t->angle_scale, err))
      return -1;
    const json_t *rob = json_object_get(x, "robot");
    if (rob && number_in(rob, "search.metric.robot", 0, 1, 0, &t->metric_robot,
                         err))
      return -1;
    for (int k = 0; k < 5; ++k) {
      const json_t *y = json_object_get(x, mk[k]);
      char p[CP_JSON_PATH_MAX];
      if (y && number_in(y, cp_json_path_key(p, "search.metric", mk[k]), 0,
                         INFINITY, 0, &t->metric[k], err))
        return -1;
    }
  }
  return cp_task_parse_search_keys(t, v, err);
}

static int parse_root(cp_task *t, const json_t *root, const char *dir,
                      const cp_file_source *files, cp_error *err) {
  static const char *const keys[] = {
      "scene",  "mode",  "stepper", "inputs",  "action", "goal",
      "bounds", "cost",  "search",  "limits",  "allow_fallback", "storage",
      "name",   "comment", "phases", "velocity_sliding", NULL};
  if (cp_json_check_object(root, "", keys, err)) return -1;
  static const char *const required[] = {"scene", "inputs", "action",
                                         "limits"};
  for (int k = 0; k < 4; ++k)
    if (!json_object_get(root, required[k]))
      return cp_error_set(err, required[k], "required key missing");
  const json_t *x;
  if (parse_scene(t, json_object_get(root, "scene"), dir, files, err)) return -1;
  if (t->scene.n_manips == 0)
    return cp_error_set(err, "scene", "the scene has no manipulator to plan for");
  if ((x = json_object_get(root, "mode"))) {
    const char *m;
    if (cp_json_string(x, "mode", &m, err)) return -1;
    if (!strcmp(m, "dynamic")) t->mode = CP_TASK_DYNAMIC;
    else if (!strcmp(m, "quasistatic")) t->mode = CP_TASK_QUASISTATIC;
    else
      return cp_error_set(err, "mode",
                          "expected \"dynamic\" or \"quasistatic\", got "
                          "\"%.40s\"",
                          m);
  }
  t->stepper = t->mode == CP_TASK_QUASISTATIC ? CP_TASK_STEPPER_QUASISTATIC
                                              : CP_TASK_STEPPER_ACCELERATION;
  if ((x = json_object_get(root, "stepper"))) {
    const char *s;
    if (cp_json_string(x, "stepper", &s, err)) return -1;
    if (!strcmp(s, "acceleration")) t->stepper = CP_TASK_STEPPER_ACCELERATION;
    else if (!strcmp(s, "velocity")) t->stepper = CP_TASK_STEPPER_VELOCITY;
    else if (!strcmp(s, "quasistatic")) t->stepper = CP_TASK_STEPPER_QUASISTATIC;
    else
      return cp_error_set(err, "stepper",
                          "expected \"acceleration\", \"velocity\" or "
                          "\"quasistatic\", got \"%.40s\"",
                          s);
    if ((t->stepper == CP_TASK_STEPPER_QUASISTATIC) !=
        (t->mode == CP_TASK_QUASISTATIC))
      return cp_error_set(err, "stepper",
                          "the quasistatic stepper goes with \"mode\": "
                          "\"quasistatic\" and only with it");
  }
  if (parse_inputs(t, json_object_get(root, "inputs"), err)) return -1;
  if (parse_action(t, json_object_get(root, "action"), err)) return -1;
  if (resolve_gains(t, err)) return -1;
  if (parse_goal(t, json_object_get(root, "goal"),
                 json_object_get(root, "phases"), err))
    return -1;
  if ((x = json_object_get(root, "bounds"))) {
    static const char *const bk[] = {"min", "max", NULL};
    if (cp_json_check_object(x, "bounds", bk, err)) return -1;
    const json_t *lo = json_object_get(x, "min"), *hi = json_object_get(x, "max");
    if (!lo || !hi)
      return cp_error_set(err, lo ? "bounds.max" : "bounds.min",
                          "required ([x, y, z])");
    if (cp_json_vector(lo, "bounds.min", 3, t->bounds_min, err) ||
        cp_json_vector(hi, "bounds.max", 3, t->bounds_max, err))
      return -1;
    for (int k = 0; k < 3; ++k)
      if (t->bounds_min[k] >= t->bounds_max[k])
        return cp_error_set(err, "bounds", "expected min < max on every axis");
    t->has_bounds = 1;
    for (int ph = 0; ph < t->n_phases; ++ph)
      for (int i = 0; i < t->phases[ph].n_bodies; ++i) {
        const cp_body *b = &t->scene.bodies[t->phases[ph].bodies[i].body_index];
        for (int k = 0; k < 3; ++k)
          if (b->x[k] < t->bounds_min[k] || b->x[k] > t->bounds_max[k])
            return cp_error_set(err, "bounds",
                                "goal body \"%.60s\" starts outside the "
                                "bounds", b->name);
      }
  }
  if ((x = json_object_get(root, "cost"))) {
    static const char *const ck[] = {"time", "effort", "path", "path_bodies",
                                     NULL};
    if (cp_json_check_object(x, "cost", ck, err)) return -1;
    const json_t *y;
    if ((y = json_object_get(x, "time")) &&
        number_in(y, "cost.time", 0, INFINITY, 0, &t->cost_time, err))
      return -1;
    if ((y = json_object_get(x, "effort")) &&
        number_in(y, "cost.effort", 0, INFINITY, 0, &t->cost_effort, err))
      return -1;
    if ((y = json_object_get(x, "path")) &&
        number_in(y, "cost.path", 0, INFINITY, 0, &t->cost_path, err))
      return -1;
    if (parse_path_bodies(t, json_object_get(x, "path_bodies"), err))
      return -1;
    if (t->cost_time == 0 && t->cost_effort == 0)
      return cp_error_set(err, "cost", "time and effort weights are both 0");
  }
  if ((x = json_object_get(root, "search")) && parse_search(t, x, err))
    return -1;
  x = json_object_get(root, "limits");
  static const char *const lk[] = {"nodes", "seconds", NULL};
  if (cp_json_check_object(x, "limits", lk, err)) return -1;
  const json_t *y;
  if ((y = json_object_get(x, "nodes")) &&
      int_in(y, "limits.nodes", 1, 100000000, &t->max_nodes, err))
    return -1;
  if ((y = json_object_get(x, "seconds")) &&
      number_in(y, "limits.seconds", 0, 1e7, 1, &t->max_seconds, err))
    return -1;
  if ((x = json_object_get(root, "allow_fallback")) &&
      cp_json_bool(x, "allow_fallback", &t->allow_fallback, err))
    return -1;
  if ((x = json_object_get(root, "velocity_sliding")) &&
      cp_json_bool(x, "velocity_sliding", &t->velocity_sliding, err))
    return -1;
  if ((x = json_object_get(root, "storage"))) {
    static const char *const sk[] = {"batch", NULL};
    long b = 0;
    if (cp_json_check_object(x, "storage", sk, err)) return -1;
    if ((y = json_object_get(x, "batch"))) {
      if (int_in(y, "storage.batch", 1, 1000000, &b, err)) return -1;
      t->batch = (int)b;
    }
  }
  if ((x = json_object_get(root, "name")) && !json_is_string(x))
    return cp_error_set(err, "name", "expected a string");
  if ((x = json_object_get(root, "comment")) && !json_is_string(x))
    return cp_error_set(err, "comment", "expected a string");
  return 0;
}

int cp_task_parse(const char *text, size_t len, const char *path,
                  cp_task *task, cp_error *err) {
  return cp_task_parse_from(text, len, path, NULL, task, err);
}

/* cp_task_parse_from, keeping the files already recorded in *task (the
 * task file itself, read by cp_task_load_from). */
static int parse_keeping(const char *text, size_t len, const char *path,
                         const cp_file_source *src, cp_task *task,
                         cp_error *err) {
  int n_files = task->n_files;
  cp_task_file *files = task->files;
  memset(task, 0, sizeof *task);
  task->n_files = n_files;
  task->files = files;
  recorder rec = {task, src};
  const cp_file_source recording = {record, src && src->is_dir ? rec_is_dir : NULL,
                                    &rec};
  task->mode = CP_TASK_DYNAMIC;
  task->duration = task->dt = 0.1;
  task->cost_time = 1.0;
  task->cost_effort = 0.0;
  snprintf(task->method, sizeof task->method, "astar");
  task->weight = 1.5;
  task->res_position = 0.01;
  task->res_angle = 0.05;
  task->res_velocity = 0.05;
  task->goal_bias = 0.05;
  task->seed = 1;
  task->candidates = 8;
  task->search_batch = 1;
  task->search_pipeline = -1; /* unset: cp_task_search_mode decides */
  task->search_fresh_actions = -1; /* unset: cp_task_fresh_actions decides */
  task->speed = 0.5;
  task->delta_bn = 0.05;
  task->delta_s = 0.02;
  task->metric[0] = 1.0;   /* m per m */
  task->metric[1] = 0.05;  /* m per quaternion component (about rad / 2) */
  task->metric[2] = 0.1;   /* m per m/s */
  task->metric[3] = 0.02;  /* m per rad */
  task->metric[4] = 0.005; /* m per rad/s */
  task->metric_robot = 1.0;
  task->angle_scale = 0.1; /* m per rad of a goal's angle (a 10 cm arm) */
  task->max_nodes = 100000;
  task->max_seconds = 60;
  task->allow_fallback = 1;
  task->velocity_sliding = 1;
  task->batch = 64;
  json_t *root;
  if (cp_json_parse(text, len, &root, err)) {
    cp_task_free(task);
    return -1;
  }
  char *dir = path ? dir_of(path) : NULL;
  int rc = path && !dir ? cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory")
                        : parse_root(task, root, dir, &recording, err);
  free(dir);
  json_decref(root);
  if (!rc && !(task->text = dupn(text, len)))
    rc = cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  if (rc) cp_task_free(task);
  return rc;
}

int cp_task_parse_from(const char *text, size_t len, const char *path,
                       const cp_file_source *src, cp_task *task,
                       cp_error *err) {
  memset(task, 0, sizeof *task);
  return parse_keeping(text, len, path, src, task, err);
}

int cp_task_load(const char *path, cp_task *task, cp_error *err) {
  return cp_task_load_from(path, NULL, task, err);
}

int cp_task_load_from(const char *path, const cp_file_source *src,
                      cp_task *task, cp_error *err) {
  memset(task, 0, sizeof *task);
  size_t len;
  char *text = cp_file_source_read(src, path, "task", &len, err);
  if (!text) {
    if (err) err->where[0] = '\0';
    return -1;
  }
  int rc = keep_file(task, "task", path, text, len)
               ? cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory")
               : parse_keeping(text, len, path, src, task, err);
  free(text);
  return rc;
}

void cp_task_free(cp_task *t) {
  if (!t) return;
  free(t->text);
  free(t->scene_text);
  free(t->scene_base);
  cp_scene_free(&t->scene);
  for (int i = 0; i < t->n_inputs && t->inputs; ++i) {
    free(t->inputs[i].joint);
    free(t->inputs[i].values);
  }
  free(t->inputs);
  free(t->goal.body);
  for (int k = 0; k < t->n_phases; ++k) cp_goal_free(&t->phases[k]);
  free(t->phases);
  cp_goal_pairs_free(&t->pairs);
  free(t->path_bodies);
  for (int i = 0; i < t->n_files; ++i) {
    free(t->files[i].path);
    free(t->files[i].data);
  }
  free(t->files);
  memset(t, 0, sizeof *t);
}

void cp_sha256_hex(const void *data, size_t n, char out[CP_TASK_KEY_SIZE]) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  if (!EVP_Digest(data, n, md, &len, EVP_sha256(), NULL) || len != 32) {
    out[0] = '\0'; /* libcrypto failed (out of memory): no key */
    return;
  }
  for (unsigned i = 0; i < 32; ++i) snprintf(out + 2 * i, 3, "%02x", md[i]);
}

int cp_task_search_mode(const cp_task *task, const char *method, int batch,
                        int *search_batch) {
  int pipeline = task->search_pipeline, half = batch;
  if (pipeline < 0) { /* the default: as many jobs in flight as the batch */
    pipeline = batch >= 4 && method &&
               (!strcmp(method, "rrt") || !strcmp(method, "sst"));
    if (pipeline) half = batch / 2;
  }
  if (search_batch) *search_batch = half;
  return pipeline != 0;
}

void cp_task_hash(const cp_task *t, char out[CP_TASK_KEY_SIZE]) {
  /* A manifest of digests, itself digested: the text's, then each file's
   * with its kind (the task file's bytes are the text). */
  size_t cap = 96 + (size_t)t->n_files * 80, n = 0;
  char *m = malloc(cap);
  if (!m) {
    out[0] = '\0';
    return;
  }
  char h[CP_TASK_KEY_SIZE];
  cp_sha256_hex(t->text ? t->text : "", t->text ? strlen(t->text) : 0, h);
  n += (size_t)snprintf(m + n, cap - n, "complan task 2\ntext %s\n", h);
  for (int i = 0; i < t->n_files; ++i)
    if (strcmp(t->files[i].kind, "task"))
      n += (size_t)snprintf(m + n, cap - n, "%s %s\n", t->files[i].kind,
                            t->files[i].sha256);
  cp_sha256_hex(m, n, out);
  free(m);
}

int cp_task_fresh_actions(const cp_task *task, const char *method) {
  if (!method || (strcmp(method, "rrt") && strcmp(method, "sst"))) return 0;
  /* Opt-in for now (docs/planner.md, "Fresh actions": known problems). */
  return task->search_fresh_actions > 0 && !task->continuous &&
         task->n_actions <= CP_SEARCH_MAX_FRESH_ACTIONS;
}
