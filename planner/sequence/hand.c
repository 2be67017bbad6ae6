/* The Panda hand as the assembly gripper (docs/assembly.md, "The Panda
 * hand"): its links and finger joints taken from the robot's URDF, mounted
 * on the gantry's carriage in a URDF written for each grasp. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/hash.h"
#include "planner/sequence/sequence_impl.h"

/* The elements of the Panda's URDF the hand needs, by name. */
static const char *const hand_links[] = {"panda_hand", "panda_leftfinger", "panda_rightfinger"};
static const char *const hand_joints[] = {"panda_finger_joint1", "panda_finger_joint2"};

/* The element <tag name="name" ...> ... </tag> of text: its start and
 * length, or NULL. */
static const char *element(const char *text, const char *tag, const char *name, size_t *len) {
  char open[160], close[32];
  snprintf(open, sizeof open, "<%s name=\"%s\"", tag, name);
  snprintf(close, sizeof close, "</%s>", tag);
  const char *a = strstr(text, open);
  const char *b = a ? strstr(a, close) : NULL;
  if (!b) return NULL;
  *len = (size_t)(b + strlen(close) - a);
  return a;
}

/* The number of attribute attr="..." inside the element [e, e + len). */
static int attribute(const char *e, size_t len, const char *attr, double *out) {
  char key[48];
  snprintf(key, sizeof key, " %s=\"", attr);
  const char *a = strstr(e, key);
  if (!a || a >= e + len) return -1;
  char *end;
  *out = strtod(a + strlen(key), &end);
  return end == a + strlen(key) ? -1 : 0;
}

int cp_seq_hand_load(cp_sequence_gripper *g, const char *path, const char *where, cp_error *err) {
  size_t n;
  cp_error e;
  char *text = cp_read_file(path, &n, &e);
  if (!text) return cp_error_setc(err, e.code, where, "%s", e.msg);
  size_t cap = 256, used = 0, len;
  char *out = malloc(cap);
  int rc = out ? 0 : cp_error_setc(err, CP_ERR_NOMEM, where, "out of memory");
  for (int i = 0; !rc && i < 5; i++) {
    const char *tag = i < 3 ? "link" : "joint", *name = i < 3 ? hand_links[i] : hand_joints[i - 3];
    const char *el = element(text, tag, name, &len);
    if (!el) {
      rc = cp_error_set(err, where, "%s: no <%s name=\"%s\"> (the Panda hand's links panda_hand, panda_leftfinger,"
                        " panda_rightfinger and joints panda_finger_joint1, 2 are expected)", path, tag, name);
      break;
    }
    if (i == 4 && !strstr(el, "<mimic joint=\"panda_finger_joint1\"")) {
      rc = cp_error_set(err, where, "%s: panda_finger_joint2 does not mimic panda_finger_joint1", path);
      break;
    }
    if (i == 3 && (attribute(el, len, "upper", &g->finger_upper) || attribute(el, len, "effort", &g->finger_effort) ||
                   !(g->finger_upper > 0) || !(g->finger_effort > 0))) {
      rc = cp_error_set(err, where, "%s: panda_finger_joint1 has no <limit upper effort> > 0", path);
      break;
    }
    while (used + len + 2 > cap) {
      char *bigger = realloc(out, cap *= 2);
      if (!bigger) {
        rc = cp_error_setc(err, CP_ERR_NOMEM, where, "out of memory");
        break;
      }
      out = bigger;
    }
    if (rc) break;
    memcpy(out + used, el, len);
    used += len;
    out[used++] = '\n';
    out[used] = 0;
  }
  /* The tool centre point: where the fingertips close, below the hand. */
  const char *tcp = rc ? NULL : element(text, "joint", "panda_hand_tcp_joint", &len);
  const char *xyz = tcp ? strstr(tcp, "xyz=\"") : NULL;
  double v[3];
  if (!rc && (!xyz || xyz > tcp + len || sscanf(xyz + 5, "%lf %lf %lf", v, v + 1, v + 2) != 3 || !(v[2] > 0)))
    rc = cp_error_set(err, where, "%s: no <joint name=\"panda_hand_tcp_joint\"> with <origin xyz> (the tool centre point)",
                      path);
  free(text);
  if (rc) {
    free(out);
    return -1;
  }
  g->tcp = v[2];
  g->hand_urdf = out;
  g->max_opening = 2 * g->finger_upper;
  return 0;
}

char *cp_seq_hand_urdf(const cp_sequence_gripper *g, const double *dir, int wrist, char *name, size_t name_size) {
  const double M = g->carriage_mass, in = 1e-3 * M;
  /* hand z down, hand y (the left finger's way out) along -dir: the
   * rotation R_z(psi) R_x(pi), psi the yaw taking -y to -dir */
  const double psi = atan2(dir[1], dir[0]) - 1.5707963267948966;
  const size_t cap = strlen(g->hand_urdf) + 4096;
  char *u = malloc(cap);
  if (!u) return NULL;
  static const char *const axes[3] = {"1 0 0", "0 1 0", "0 0 1"}, *const jn[3] = {"x", "y", "z"},
                           *const ln[3] = {"carriage_x", "carriage_y", "carriage_z"};
  size_t n = (size_t)snprintf(u, cap, "<?xml version=\"1.0\"?>\n<robot name=\"panda_hand_gantry\">\n<link name=\"gantry\"/>\n");
  for (int k = 0; k < 3 + wrist; k++) {
    const int roll = k == 3;
    char axis[96];
    if (roll) snprintf(axis, sizeof axis, "%.17g %.17g %.17g", dir[0], dir[1], dir[2]);
    n += (size_t)snprintf(u + n, cap - n,
                          "<joint name=\"%s\" type=\"%s\"><parent link=\"%s\"/><child link=\"%s\"/>"
                          "<axis xyz=\"%s\"/><limit lower=\"%s\" upper=\"%s\" effort=\"1e6\" velocity=\"100\"/></joint>\n"
                          "<link name=\"%s\"><inertial><mass value=\"%.17g\"/><inertia ixx=\"%.17g\" ixy=\"0\" "
                          "ixz=\"0\" iyy=\"%.17g\" iyz=\"0\" izz=\"%.17g\"/></inertial></link>\n",
                          roll ? CP_SEQ_WRIST_JOINT : jn[k], roll ? "revolute" : "prismatic", k ? (roll ? ln[2] : ln[k - 1]) : "gantry",
                          roll ? "wrist" : ln[k], roll ? axis : axes[k], roll ? "-7" : "-10", roll ? "7" : "10",
                          roll ? "wrist" : ln[k], M, in, in, in);
  }
  n += (size_t)snprintf(u + n, cap - n,
                        "<joint name=\"hand_mount\" type=\"fixed\"><parent link=\"%s\"/><child link=\"panda_hand\"/>"
                        "<origin xyz=\"0 0 %.17g\" rpy=\"3.141592653589793 0 %.17g\"/></joint>\n%s</robot>\n",
                        wrist ? "wrist" : "carriage_z", g->tcp, psi, g->hand_urdf);
  /* Named by its content: a phase task's recorded files are keyed by path. */
  snprintf(name, name_size, "complan_panda_hand_%016llx.urdf",
           (unsigned long long)cp_fnv_bytes(CP_FNV_OFFSET, u, n));
  return u;
}

/* A file source serving the hand's URDF (ctx: a cp_seq_hand_file) at its
 * name, every other file from the file system. */
char *cp_seq_hand_read(void *ctx, const char *path, const char *kind, size_t *len, cp_error *err) {
  const cp_seq_hand_file *f = ctx;
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  if (f && f->text && !strcmp(base, f->name)) {
    *len = strlen(f->text);
    char *copy = malloc(*len + 1);
    if (!copy) cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
    else memcpy(copy, f->text, *len + 1);
    return copy;
  }
  (void)kind;
  return cp_read_file(path, len, err);
}

json_t *cp_seq_hand_json(const cp_sequence_gripper *g, const double *dir, int wrist, const double *q,
                         const double *qd, char **text, char *name, size_t name_size) {
  if (!(*text = cp_seq_hand_urdf(g, dir, wrist, name, name_size))) return NULL;
  /* the joints' positions and rates: x, y, z, [roll,] the leader finger */
  static const char *const jn[5] = {"x", "y", "z", CP_SEQ_WRIST_JOINT, "panda_finger_joint1"};
  static const int slot[5] = {0, 1, 2, 4, 3};
  json_t *state = json_object();
  for (int k = 0; k < 5; k++)
    if (k != 3 || wrist)
      json_object_set_new(state, jn[k], json_pack("{s:f, s:f}", "position", q[slot[k]], "velocity", qd[slot[k]]));
  const double zero[3] = {0, 0, 0};
  return json_pack("{s:s, s:s, s:{s:o}, s:o}", "name", "gripper", "urdf", name, "base", "position",
                   cp_seq_vec(zero, 3), "state", state);
}
