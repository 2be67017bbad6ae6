/* Assembly task files (docs/assembly.md, "Assembly tasks"): the final
 * assembly scene, the staging poses, the gripper, tolerances and limits. */
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/jsonread.h"
#include "models/vec3.h"
#include "planner/assembly/assembly.h"
#include "planner/sequence/sequence_impl.h"

int cp_sequence_is_task(const char *text, size_t len) {
  json_error_t je;
  json_t *root = json_loadb(text, len, 0, &je);
  int yes = json_is_object(root) && json_object_get(root, "assembly") != NULL;
  json_decref(root);
  return yes;
}

static char *dir_of(const char *path) {
  const char *slash = path ? strrchr(path, '/') : NULL;
  if (!slash) return strdup(".");
  char *d = strdup(path);
  if (d) d[slash - path] = 0;
  if (d && !d[0]) strcpy(d, "/");
  return d;
}

/* An optional positive number under obj.key (path parent). */
static int opt_pos(const json_t *obj, const char *parent, const char *key,
                   double *out, cp_error *err) {
  const json_t *v = json_object_get(obj, key);
  if (!v) return 0;
  char p[CP_JSON_PATH_MAX];
  cp_json_path_key(p, parent, key);
  if (cp_json_number(v, p, out, err)) return -1;
  if (!(*out > 0)) return cp_error_set(err, p, "expected a number > 0");
  return 0;
}

static int parse_scene(cp_sequence_task *t, const json_t *v, const char *task_dir,
                       cp_error *err) {
  cp_scene_options so = cp_scene_options_defaults();
  so.check_normal_speed = 0;
  cp_error e;
  char *base = NULL;
  size_t len = 0;
  if (json_is_string(v)) {
    const char *rel = json_string_value(v);
    size_t n = strlen(task_dir) + strlen(rel) + 2;
    char *path = malloc(n);
    if (!path) return cp_error_setc(err, CP_ERR_NOMEM, "assembly", "out of memory");
    if (rel[0] == '/') snprintf(path, n, "%s", rel);
    else snprintf(path, n, "%s/%s", task_dir, rel);
    t->scene_text = cp_read_file(path, &len, &e);
    base = dir_of(path);
    free(path);
    if (!t->scene_text) {
      free(base);
      return cp_error_setc(err, e.code, "assembly", "%s", e.msg);
    }
  } else if (json_is_object(v)) {
    t->scene_text = json_dumps(v, JSON_COMPACT | JSON_REAL_PRECISION(17));
    base = strdup(task_dir);
    len = t->scene_text ? strlen(t->scene_text) : 0;
  } else {
    return cp_error_set(err, "assembly", "expected a scene path (string) or a scene object");
  }
  if (!t->scene_text || !base) {
    free(base);
    return cp_error_setc(err, CP_ERR_NOMEM, "assembly", "out of memory");
  }
  int rc = cp_scene_parse(t->scene_text, len, base, &so, &t->scene, &e);
  free(base);
  if (rc) {
    char where[CP_JSON_PATH_MAX];
    cp_json_path_key(where, "assembly", e.where[0] ? e.where : "");
    if (!e.where[0]) snprintf(where, sizeof where, "assembly");
    return cp_error_setc(err, e.code, where, "%s", e.msg);
  }
  if (!t->scene.contacts_auto)
    return cp_error_set(err, "assembly.contacts", "expected \"auto\": the stages' contacts come from the shapes");
  if (t->scene.n_manips > 0)
    return cp_error_set(err, "assembly.manipulators", "expected none: the robot is given by \"robot\"");
  t->n_parts = cp_assembly_parts(&t->scene, NULL);
  if (t->n_parts < 1 || t->n_parts > CP_ASSEMBLY_MAX_PARTS)
    return cp_error_set(err, "assembly.bodies", "expected 1 to %d free bodies (the parts)",
                        CP_ASSEMBLY_MAX_PARTS);
  t->part_body = malloc(sizeof *t->part_body * (size_t)t->n_parts);
  t->staged = malloc(sizeof *t->staged * 7 * (size_t)t->n_parts);
  if (!t->part_body || !t->staged) return cp_error_setc(err, CP_ERR_NOMEM, "assembly", "out of memory");
  cp_assembly_parts(&t->scene, t->part_body);
  for (int p = 0; p < t->n_parts; p++) {
    const cp_body *b = &t->scene.bodies[t->part_body[p]];
    if (b->shape.type != CP_SHAPE_BOX)
      return cp_error_set(err, "assembly.bodies",
                          "part \"%.60s\" is not a box: grasps are planned for boxes only", b->name);
  }
  return 0;
}

static int parse_staging(cp_sequence_task *t, const json_t *v, cp_error *err) {
  if (!json_is_object(v))
    return cp_error_set(err, "staging", "expected an object: part name -> {\"position\", \"orientation\"?}");
  const char *key;
  json_t *val;
  char p[CP_JSON_PATH_MAX], q[CP_JSON_PATH_MAX];
  json_object_foreach((json_t *)v, key, val) {
    cp_json_path_key(p, "staging", key);
    int part = -1;
    for (int k = 0; k < t->n_parts; k++)
      if (!strcmp(t->scene.bodies[t->part_body[k]].name, key)) part = k;
    if (part < 0) return cp_error_set(err, p, "no part (free body) \"%.60s\" in the assembly", key);
    static const char *const keys[] = {"position", "orientation", NULL};
    if (cp_json_check_object(val, p, keys, err)) return -1;
    double *s = t->staged + 7 * part;
    if (cp_json_vector(json_object_get(val, "position"), cp_json_path_key(q, p, "position"), 3, s, err))
      return -1;
    const json_t *o = json_object_get(val, "orientation");
    s[3] = 1;
    s[4] = s[5] = s[6] = 0;
    if (o) {
      cp_json_path_key(q, p, "orientation");
      if (cp_json_vector(o, q, 4, s + 3, err)) return -1;
      double n = sqrt(s[3] * s[3] + s[4] * s[4] + s[5] * s[5] + s[6] * s[6]);
      if (fabs(n - 1) > 1e-3) return cp_error_set(err, q, "expected a unit quaternion [w, x, y, z] (norm %.6g)", n);
      for (int i = 3; i < 7; i++) s[i] /= n;
    }
  }
  for (int k = 0; k < t->n_parts; k++)
    if (!json_object_get(v, t->scene.bodies[t->part_body[k]].name))
      return cp_error_set(err, "staging", "part \"%.60s\" has no staging pose",
                          t->scene.bodies[t->part_body[k]].name);
  return 0;
}

/* "type": "panda_hand": the Panda hand from its URDF ("urdf", relative
 * to the task; "packages" for its package:// meshes). */
static int parse_panda(cp_sequence_task *t, const json_t *v, const char *task_dir, cp_error *err) {
  static const char *const keys[] = {"type", "urdf", "packages", "squeeze", "stiffness", "mu", "clearance",
                                     "carriage_mass", NULL};
  if (cp_json_check_object(v, "robot", keys, err)) return -1;
  cp_sequence_gripper *g = &t->gripper;
  g->panda = 1;
  g->stiffness = 1000;
  g->finger[0] = CP_SEQ_PANDA_PAD_T;
  g->finger[1] = CP_SEQ_PANDA_PAD_W;
  g->finger[2] = CP_SEQ_PANDA_PAD_H;
  const char *rel;
  if (cp_json_string(json_object_get(v, "urdf"), "robot.urdf", &rel, err)) return -1;
  const json_t *pk = json_object_get(v, "packages");
  if (pk) {
    const char *key;
    json_t *val;
    char p[CP_JSON_PATH_MAX];
    if (!json_is_object(pk)) return cp_error_set(err, "robot.packages", "expected an object: package name -> folder");
    json_object_foreach((json_t *)pk, key, val) {
      const char *dir;
      if (cp_json_string(val, cp_json_path_key(p, "robot.packages", key), &dir, err)) return -1;
    }
    if (!(g->packages = json_dumps(pk, JSON_COMPACT)))
      return cp_error_setc(err, CP_ERR_NOMEM, "robot.packages", "out of memory");
  }
  const size_t n = strlen(task_dir) + strlen(rel) + 2;
  char *path = malloc(n);
  if (!path) return cp_error_setc(err, CP_ERR_NOMEM, "robot.urdf", "out of memory");
  if (rel[0] == '/') snprintf(path, n, "%s", rel);
  else snprintf(path, n, "%s/%s", task_dir, rel);
  const int rc = cp_seq_hand_load(g, path, "robot.urdf", err);
  free(path);
  if (rc) return -1;
  if (opt_pos(v, "robot", "squeeze", &g->squeeze, err) || opt_pos(v, "robot", "stiffness", &g->stiffness, err) ||
      opt_pos(v, "robot", "mu", &g->mu, err) || opt_pos(v, "robot", "clearance", &g->clearance, err) ||
      opt_pos(v, "robot", "carriage_mass", &g->carriage_mass, err))
    return -1;
  if (g->squeeze > g->finger_effort)
    return cp_error_set(err, "robot.squeeze", "expected at most the finger joints' effort limit %.4g N (the URDF's)",
                        g->finger_effort);
  return 0;
}

static int parse_robot(cp_sequence_task *t, const json_t *v, const char *task_dir, cp_error *err) {
  static const char *const keys[] = {"type", "squeeze", "stiffness", "mu", "finger", "max_opening",
                                     "clearance", "carriage_mass", NULL};
  if (!json_is_object(v)) return cp_error_set(err, "robot", "expected an object {\"type\": \"parallel_gripper\", ...}");
  const char *type;
  if (cp_json_string(json_object_get(v, "type"), "robot.type", &type, err)) return -1;
  if (!strcmp(type, "panda_hand")) return parse_panda(t, v, task_dir, err);
  if (strcmp(type, "parallel_gripper"))
    return cp_error_setc(err, CP_ERR_UNSUPPORTED, "robot.type",
                         "expected \"parallel_gripper\" or \"panda_hand\", not \"%.40s\"", type);
  if (cp_json_check_object(v, "robot", keys, err)) return -1;
  cp_sequence_gripper *g = &t->gripper;
  if (opt_pos(v, "robot", "squeeze", &g->squeeze, err) || opt_pos(v, "robot", "stiffness", &g->stiffness, err) ||
      opt_pos(v, "robot", "mu", &g->mu, err) || opt_pos(v, "robot", "max_opening", &g->max_opening, err) ||
      opt_pos(v, "robot", "clearance", &g->clearance, err) ||
      opt_pos(v, "robot", "carriage_mass", &g->carriage_mass, err))
    return -1;
  const json_t *f = json_object_get(v, "finger");
  if (f) {
    if (cp_json_vector(f, "robot.finger", 3, g->finger, err)) return -1;
    if (!(g->finger[0] > 0 && g->finger[1] > 0 && g->finger[2] > 0))
      return cp_error_set(err, "robot.finger", "expected [thickness, width, height] > 0 (m)");
  }
  return 0;
}

/* "temporary": names of parts removed after the last permanent one, in
 * the order listed. */
static int parse_temporary(cp_sequence_task *t, const json_t *v, cp_error *err) {
  if (!json_is_array(v)) return cp_error_set(err, "temporary", "expected an array of part names");
  size_t i;
  json_t *e;
  char p[CP_JSON_PATH_MAX];
  json_array_foreach((json_t *)v, i, e) {
    snprintf(p, sizeof p, "temporary[%zu]", i);
    const char *name;
    if (cp_json_string(e, p, &name, err)) return -1;
    int part = -1;
    for (int k = 0; k < t->n_parts; k++)
      if (!strcmp(t->scene.bodies[t->part_body[k]].name, name)) part = k;
    if (part < 0) return cp_error_set(err, p, "no part (free body) \"%.60s\" in the assembly", name);
    if (t->temporary >> part & 1) return cp_error_set(err, p, "part \"%.60s\" is listed twice", name);
    t->temporary |= (uint64_t)1 << part;
    t->temporary_order[t->n_temporary++] = part;
    /* It is put back where it was staged, as it was staged. */
    const double *sq = t->staged + 7 * part + 3, *dq = t->scene.bodies[t->part_body[part]].q;
    if (fabs(sq[0] * dq[0] + sq[1] * dq[1] + sq[2] * dq[2] + sq[3] * dq[3]) < 1 - 1e-9)
      return cp_error_set(err, p, "part \"%.60s\" is staged in another orientation than its design one:"
                          " a temporary part must be staged as it stands in the assembly", name);
  }
  const uint64_t all = t->n_parts == 64 ? ~(uint64_t)0 : ((uint64_t)1 << t->n_parts) - 1;
  if (t->temporary == all) return cp_error_set(err, "temporary", "expected at least one part to stay (not temporary)");
  return 0;
}

static int parse_root(cp_sequence_task *t, const json_t *root, const char *path, cp_error *err) {
  static const char *const keys[] = {"name", "comment", "assembly", "staging", "robot", "temporary",
                                     "tolerance", "transport", "limits", NULL};
  if (cp_json_check_object(root, "", keys, err)) return -1;
  char *dir = dir_of(path);
  if (!dir) return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  const json_t *a = json_object_get(root, "assembly");
  int rc = a ? parse_scene(t, a, dir, err) : cp_error_set(err, "assembly", "missing: the final assembly (a scene)");
  free(dir);
  if (rc) return -1;
  const json_t *s = json_object_get(root, "staging");
  if (!s) return cp_error_set(err, "staging", "missing: where each part starts");
  if (parse_staging(t, s, err)) return -1;
  const json_t *tmp = json_object_get(root, "temporary");
  if (tmp && parse_temporary(t, tmp, err)) return -1;
  const json_t *r = json_object_get(root, "robot");
  if (!r) return cp_error_set(err, "robot", "missing: the gripper");
  char *rdir = dir_of(path);
  rc = rdir ? parse_robot(t, r, rdir, err) : cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  free(rdir);
  if (rc) return -1;
  const json_t *v;
  if ((v = json_object_get(root, "tolerance"))) {
    static const char *const tk[] = {"position", "angle", NULL};
    if (cp_json_check_object(v, "tolerance", tk, err) || opt_pos(v, "tolerance", "position", &t->tol_position, err) ||
        opt_pos(v, "tolerance", "angle", &t->tol_angle, err))
      return -1;
  }
  if ((v = json_object_get(root, "transport"))) {
    static const char *const tk[] = {"step", "clearance", "acceleration", NULL};
    if (cp_json_check_object(v, "transport", tk, err) || opt_pos(v, "transport", "step", &t->step, err) ||
        opt_pos(v, "transport", "clearance", &t->clearance, err) ||
        opt_pos(v, "transport", "acceleration", &t->acceleration, err))
      return -1;
  }
  if ((v = json_object_get(root, "limits"))) {
    static const char *const tk[] = {"seconds", "nodes", "stability", "stability_nodes", NULL};
    double nodes = (double)t->nodes, snodes = (double)t->stability_nodes;
    if (cp_json_check_object(v, "limits", tk, err) || opt_pos(v, "limits", "seconds", &t->seconds, err) ||
        opt_pos(v, "limits", "nodes", &nodes, err) || opt_pos(v, "limits", "stability", &t->stability_seconds, err) ||
        opt_pos(v, "limits", "stability_nodes", &snodes, err))
      return -1;
    if (nodes != floor(nodes) || nodes > 1e9) return cp_error_set(err, "limits.nodes", "expected a whole number up to 1e9");
    if (snodes != floor(snodes) || snodes > 1e9)
      return cp_error_set(err, "limits.stability_nodes", "expected a whole number up to 1e9");
    t->nodes = (long)nodes;
    t->stability_nodes = (long)snodes;
  }
  return 0;
}

int cp_sequence_task_parse(const char *text, size_t len, const char *path,
                           cp_sequence_task *t, cp_error *err) {
  memset(t, 0, sizeof *t);
  t->gripper = (cp_sequence_gripper){.squeeze = 5, .stiffness = 300, .mu = 0.8,
                                     .finger = {0.01, 0.03, 0.03}, .max_opening = 0.1,
                                     .clearance = 0.002, .carriage_mass = 1};
  t->tol_position = 0.002;
  t->tol_angle = (3.14159265358979323846 / 180);
  t->step = 0.01;
  t->clearance = 0.02;
  t->acceleration = 25;
  t->seconds = 600;
  t->nodes = 2000;
  t->stability_nodes = 2000;
  t->stability_seconds = 600;
  json_t *root;
  if (cp_json_parse(text, len, &root, err)) return -1;
  int rc = parse_root(t, root, path, err);
  json_decref(root);
  if (!rc && path && !(t->path = strdup(path))) rc = cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  if (rc) cp_sequence_task_free(t);
  return rc;
}

int cp_sequence_task_load(const char *path, cp_sequence_task *t, cp_error *err) {
  memset(t, 0, sizeof *t);
  size_t len;
  char *text = cp_read_file(path, &len, err);
  if (!text) return -1;
  int rc = cp_sequence_task_parse(text, len, path, t, err);
  free(text);
  return rc;
}

void cp_sequence_task_free(cp_sequence_task *t) {
  free(t->path);
  free(t->scene_text);
  cp_scene_free(&t->scene);
  free(t->part_body);
  free(t->staged);
  free(t->gripper.hand_urdf);
  free(t->gripper.packages);
  memset(t, 0, sizeof *t);
}
