// URDF manipulators (models/urdf.h): the same chain as the equivalent JSON
// (kinematics, point Jacobians, mass matrix, bias efforts), fixed-joint
// merging against hand-computed mass properties, collision shapes (posed in
// the URDF's link frames), the scene's "state" map and limits, every
// unsupported or malformed input with its file, line and element, and the
// bundled URDF scenes.
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/chain.h"
#include "models/scene.h"
#include "models/system.h"
#include "models/urdf.h"
#include "models/vec3.h"
#include "tests/models/mtest.h"
#include "tests/support.h"

#define PI 3.14159265358979323846
#define TOL 1e-12

// --------------------------------------------------------------- helpers --

// Rotation matrix Rz(y) Ry(p) Rx(r), written out (independent of urdf.c).
static void rpy_matrix(double r, double p, double y, double *R) {
  double cr = cos(r), sr = sin(r), cp = cos(p), sp = sin(p), cy = cos(y),
         sy = sin(y);
  double M[9] = {cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr,
                 sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr,
                 -sp,     cp * sr,                cp * cr};
  memcpy(R, M, sizeof M);
}

// The textbook quaternion of fixed-axis roll-pitch-yaw.
static void rpy_quaternion(double r, double p, double y, double *q) {
  double cr = cos(r / 2), sr = sin(r / 2), cp = cos(p / 2), sp = sin(p / 2),
         cy = cos(y / 2), sy = sin(y / 2);
  q[0] = cr * cp * cy + sr * sp * sy;
  q[1] = sr * cp * cy - cr * sp * sy;
  q[2] = cr * sp * cy + sr * cp * sy;
  q[3] = cr * cp * sy - sr * sp * cy;
}

static char *temp_urdf(const char *text) {
  char *path = cpt_temp_file(text, ".urdf");
  cr_assert_not_null(path);
  return path;
}

// Scene text with one URDF manipulator (absolute path) and extra keys.
static char *urdf_scene(const char *path, const char *extra) {
  char *t = malloc(8192);
  snprintf(t, 8192,
           "{\"contacts\": [], \"manipulators\": [{\"name\": \"arm\", "
           "\"urdf\": \"%s\"%s%s}]}",
           path, extra ? ", " : "", extra ? extra : "");
  return t;
}

// Asserts that the URDF text fails to load through a scene, at
// manipulators[0].urdf, with the file, "line L" and every part in the
// message.
static void urdf_fails(const char *urdf, int line, const char *part1,
                       const char *part2) {
  char *path = temp_urdf(urdf);
  char *scene = urdf_scene(path, NULL);
  cp_scene s;
  cp_error err = {0};
  int rc = cp_scene_parse(scene, strlen(scene), NULL, NULL, &s, &err);
  if (rc == 0) cp_scene_free(&s);
  cr_assert_eq(rc, -1, "accepted: %s", urdf);
  cr_assert_str_eq(err.where, "manipulators[0].urdf", "%s: %s", err.where,
                   err.msg);
  cr_assert(strstr(err.msg, path), "no file in '%s'", err.msg);
  if (line > 0) {
    char l[32];
    snprintf(l, sizeof l, "line %d:", line);
    cr_assert(strstr(err.msg, l), "'%s' lacks '%s'", err.msg, l);
  }
  cr_assert(strstr(err.msg, part1), "'%s' lacks '%s'", err.msg, part1);
  if (part2) cr_assert(strstr(err.msg, part2), "'%s' lacks '%s'", err.msg, part2);
  // The standalone reader reports the same line.
  cp_urdf_model m;
  cp_error e2 = {0};
  cr_assert_eq(cp_urdf_load(path, &m, &e2), -1);
  if (line > 0) {
    char l[32];
    snprintf(l, sizeof l, "line %d", line);
    cr_assert_str_eq(e2.where, l);
  }
  cr_assert_null(m.chain.joints);
  unlink(path);
  free(path);
  free(scene);
}

// ------------------------------------------------- URDF == JSON chain --

// A three-joint chain (revolute, prismatic, continuous) with non-trivial
// origins, axes, inertial frames and shapes.
static const char *arm_urdf =
    "<?xml version=\"1.0\"?>\n"
    "<robot name=\"arm\">\n"
    "  <link name=\"base\"/>\n"
    "  <link name=\"l1\">\n"
    "    <inertial>\n"
    "      <origin xyz=\"0.01 0.02 0.1\" rpy=\"0.1 0.2 0.3\"/>\n"
    "      <mass value=\"1.2\"/>\n"
    "      <inertia ixx=\"0.02\" ixy=\"0.001\" ixz=\"-0.002\" iyy=\"0.03\" "
    "iyz=\"0.0005\" izz=\"0.01\"/>\n"
    "    </inertial>\n"
    "    <collision><origin xyz=\"0.01 0.02 0.1\" rpy=\"0.4 0.5 0.6\"/>"
    "<geometry><sphere radius=\"0.05\"/></geometry></collision>\n"
    "  </link>\n"
    "  <joint name=\"j1\" type=\"revolute\">\n"
    "    <parent link=\"base\"/><child link=\"l1\"/>\n"
    "    <origin xyz=\"0.1 -0.2 0.3\" rpy=\"0.3 -0.4 0.5\"/>\n"
    "    <axis xyz=\"0 0.6 0.8\"/>\n"
    "    <limit lower=\"-3\" upper=\"3\" effort=\"10\" velocity=\"5\"/>\n"
    "  </joint>\n"
    "  <link name=\"l2\">\n"
    "    <inertial><origin xyz=\"0 0 0.15\"/><mass value=\"0.7\"/>\n"
    "      <inertia ixx=\"0.004\" ixy=\"0\" ixz=\"0\" iyy=\"0.004\" iyz=\"0\" "
    "izz=\"0.0002\"/></inertial>\n"
    "    <collision><origin xyz=\"0 0 0.15\"/><geometry><capsule "
    "radius=\"0.02\" length=\"0.2\"/></geometry></collision>\n"
    "  </link>\n"
    "  <joint name=\"j2\" type=\"prismatic\">\n"
    "    <parent link=\"l1\"/><child link=\"l2\"/>\n"
    "    <origin xyz=\"0 0.05 0.25\" rpy=\"-0.2 0.1 0.7\"/>\n"
    "    <axis xyz=\"1 1 0\"/>\n"
    "    <limit lower=\"-0.5\" upper=\"0.5\" effort=\"10\" velocity=\"1\"/>\n"
    "  </joint>\n"
    "  <link name=\"l3\">\n"
    "    <inertial><origin xyz=\"0.05 0 0\"/><mass value=\"0.3\"/>\n"
    "      <inertia ixx=\"0.001\" ixy=\"0\" ixz=\"0\" iyy=\"0.002\" iyz=\"0\" "
    "izz=\"0.002\"/></inertial>\n"
    "    <visual><geometry><mesh filename=\"hand.stl\"/></geometry></visual>\n"
    "  </link>\n"
    "  <joint name=\"j3\" type=\"continuous\">\n"
    "    <parent link=\"l2\"/><child link=\"l3\"/>\n"
    "    <origin xyz=\"0 0 0.3\"/>\n"
    "    <axis xyz=\"0 0 1\"/>\n"
    "  </joint>\n"
    "  <transmission name=\"t1\"><type>simple</type></transmission>\n"
    "</robot>\n";

// The JSON twin: quaternions from the textbook rpy formula, the first
// link's inertia rotated into the link frame with the written-out matrix.
static char *arm_json(double q1, double q2, double q3) {
  double o1[4], o2[4], R[9], Iin[9] = {0.02, 0.001, -0.002, 0.001, 0.03,
                                       0.0005, -0.002, 0.0005, 0.01};
  rpy_quaternion(0.3, -0.4, 0.5, o1);
  rpy_quaternion(-0.2, 0.1, 0.7, o2);
  rpy_matrix(0.1, 0.2, 0.3, R);
  double In[9];
  cp_m3_rotate_sym(In, R, Iin);
  char *t = malloc(8192);
  snprintf(
      t, 8192,
      "{\"contacts\": [], \"manipulators\": [{\"name\": \"arm\", \"base\": "
      "{\"position\": [0.5, -0.1, 0.2], \"orientation\": [0.8, 0.0, 0.6, 0]}, "
      "\"joints\": ["
      "{\"name\": \"j1\", \"type\": \"revolute\", \"axis\": [0, 0.6, 0.8], "
      "\"origin\": {\"position\": [0.1, -0.2, 0.3], \"orientation\": [%.17g, "
      "%.17g, %.17g, %.17g]}, \"position\": %.17g, \"velocity\": 0.3, "
      "\"effort\": 0.5, \"link\": {\"name\": \"l1\", \"mass\": 1.2, \"com\": "
      "[0.01, 0.02, 0.1], \"inertia\": [[%.17g, %.17g, %.17g], [%.17g, "
      "%.17g, %.17g], [%.17g, %.17g, %.17g]], \"shape\": {\"type\": "
      "\"sphere\", \"radius\": 0.05}}}, "
      "{\"name\": \"j2\", \"type\": \"prismatic\", \"axis\": [1, 1, 0], "
      "\"origin\": {\"position\": [0, 0.05, 0.25], \"orientation\": [%.17g, "
      "%.17g, %.17g, %.17g]}, \"position\": %.17g, \"velocity\": -0.2, "
      "\"acceleration\": 1.5, \"link\": {\"name\": \"l2\", \"mass\": 0.7, "
      "\"com\": [0, 0, 0.15], \"inertia\": [[0.004, 0, 0], [0, 0.004, 0], "
      "[0, 0, 0.0002]], \"shape\": {\"type\": \"capsule\", \"radius\": 0.02, "
      "\"length\": 0.2}}}, "
      "{\"name\": \"j3\", \"type\": \"revolute\", \"axis\": [0, 0, 1], "
      "\"origin\": {\"position\": [0, 0, 0.3]}, \"position\": %.17g, "
      "\"velocity\": 0.7, \"link\": {\"name\": \"l3\", \"mass\": 0.3, "
      "\"com\": [0.05, 0, 0], \"inertia\": [[0.001, 0, 0], [0, 0.002, 0], "
      "[0, 0, 0.002]]}}]}]}",
      o1[0], o1[1], o1[2], o1[3], q1, In[0], In[1], In[2], In[3], In[4],
      In[5], In[6], In[7], In[8], o2[0], o2[1], o2[2], o2[3], q2, q3);
  return t;
}

static char *arm_urdf_scene(const char *path, double q1, double q2,
                            double q3) {
  char extra[1024];
  snprintf(extra, sizeof extra,
           "\"base\": {\"position\": [0.5, -0.1, 0.2], \"orientation\": "
           "[0.8, 0.0, 0.6, 0]}, \"state\": {\"j1\": {\"position\": %.17g, "
           "\"velocity\": 0.3, \"effort\": 0.5}, \"j2\": {\"position\": "
           "%.17g, \"velocity\": -0.2, \"acceleration\": 1.5}, \"j3\": "
           "{\"position\": %.17g, \"velocity\": 0.7}}",
           q1, q2, q3);
  return urdf_scene(path, extra);
}

// Same motion: every link's origin, axis, centre of mass, velocities,
// point Jacobians, the mass matrix and bias efforts; link frames R too.
static void compare_chains(const cp_chain *a, const cp_chain *b) {
  cr_assert_eq(a->n, b->n);
  int n = a->n;
  cp_link_state sa[8], sb[8];
  cp_chain_kinematics(a, sa);
  cp_chain_kinematics(b, sb);
  for (int k = 0; k < n; ++k) {
    cr_assert_lt(mt_maxdiff(sa[k].R, sb[k].R, 9), TOL, "link %d R", k);
    cr_assert_lt(mt_maxdiff(sa[k].o, sb[k].o, 3), TOL, "link %d o", k);
    cr_assert_lt(mt_maxdiff(sa[k].com, sb[k].com, 3), TOL, "link %d com", k);
    cr_assert_lt(mt_maxdiff(sa[k].axis, sb[k].axis, 3), TOL);
    cr_assert_lt(mt_maxdiff(sa[k].w, sb[k].w, 3), TOL);
    cr_assert_lt(mt_maxdiff(sa[k].v, sb[k].v, 3), TOL);
    cr_assert_lt(mt_maxdiff(sa[k].dv, sb[k].dv, 3), TOL);
    double p[3] = {0.1 * k, -0.2, 0.3}, Ja[24], Jb[24], Wa[24], Wb[24];
    cp_chain_point_jacobian(a, sa, k, p, Ja);
    cp_chain_point_jacobian(b, sb, k, p, Jb);
    cr_assert_lt(mt_maxdiff(Ja, Jb, 3 * n), TOL, "link %d Jacobian", k);
    cp_chain_angular_jacobian(a, sa, k, Wa);
    cp_chain_angular_jacobian(b, sb, k, Wb);
    cr_assert_lt(mt_maxdiff(Wa, Wb, 3 * n), TOL);
  }
  double Ma[64], Mb[64], g[3] = {0, 0, -9.81}, ga[8], gb[8], ha[8], hb[8];
  cp_chain_mass_matrix(a, sa, Ma);
  cp_chain_mass_matrix(b, sb, Mb);
  cr_assert_lt(mt_maxdiff(Ma, Mb, n * n), TOL, "mass matrix");
  cp_chain_bias_efforts(a, sa, g, ga, ha);
  cp_chain_bias_efforts(b, sb, g, gb, hb);
  cr_assert_lt(mt_maxdiff(ga, gb, n), TOL);
  cr_assert_lt(mt_maxdiff(ha, hb, n), TOL);
}

Test(urdf, same_chain_as_json) {
  char *path = temp_urdf(arm_urdf);
  uint64_t seed = 7;
  for (int trial = 0; trial < 5; ++trial) {
    double q1 = cpt_uniform(&seed, -3, 3), q2 = cpt_uniform(&seed, -0.5, 0.5),
           q3 = cpt_uniform(&seed, -10, 10);
    char *tj = arm_json(q1, q2, q3), *tu = arm_urdf_scene(path, q1, q2, q3);
    cp_scene sj, su;
    mt_parse_ok(tj, 1, &sj);
    mt_parse_ok(tu, 1, &su);
    const cp_chain *cj = &sj.manips[0], *cu = &su.manips[0];
    cr_assert_str_eq(cu->name, "arm");
    for (int k = 0; k < 3; ++k) {
      const cp_joint *a = &cj->joints[k], *b = &cu->joints[k];
      cr_assert_str_eq(a->name, b->name);
      cr_assert_str_eq(a->link.name, b->link.name);
      cr_assert_eq(a->type, b->type);
      cr_assert_eq(a->drive, b->drive);
      cr_assert_eq(a->position, b->position);
      cr_assert_eq(a->velocity, b->velocity);
      cr_assert_eq(a->effort, b->effort);
      cr_assert_eq(a->acceleration, b->acceleration);
      cr_assert_lt(mt_maxdiff(a->axis, b->axis, 3), TOL);
      cr_assert_lt(mt_maxdiff(a->origin_pos, b->origin_pos, 3), TOL);
      double Ra[9], Rb[9];
      cp_quat_to_mat(Ra, a->origin_quat);
      cp_quat_to_mat(Rb, b->origin_quat);
      cr_assert_lt(mt_maxdiff(Ra, Rb, 9), TOL, "joint %d origin", k);
      cr_assert_eq(a->link.mass, b->link.mass);
      cr_assert_lt(mt_maxdiff(a->link.com, b->link.com, 3), TOL);
      cr_assert_lt(mt_maxdiff(a->link.inertia, b->link.inertia, 9), TOL);
      cr_assert_eq(memcmp(&a->link.shape, &b->link.shape, sizeof(cp_shape)),
                   0, "joint %d shape", k);
    }
    // URDF rpy is R = Rz(y) Ry(p) Rx(r).
    double Rj[9], Rexp[9];
    cp_quat_to_mat(Rj, cu->joints[0].origin_quat);
    rpy_matrix(0.3, -0.4, 0.5, Rexp);
    cr_assert_lt(mt_maxdiff(Rj, Rexp, 9), TOL);
    compare_chains(cj, cu);
    // And the whole system (H, f; no contacts).
    cp_system ya, yb;
    cp_error err;
    cr_assert_eq(cp_system_build(&sj, &ya, &err), 0);
    cr_assert_eq(cp_system_build(&su, &yb, &err), 0);
    cr_assert_lt(mt_maxdiff(ya.H, yb.H, 9), TOL);
    cr_assert_lt(mt_maxdiff(ya.f, yb.f, 3), TOL);
    cp_system_free(&ya);
    cp_system_free(&yb);
    cp_scene_free(&sj);
    cp_scene_free(&su);
    free(tj);
    free(tu);
  }
  unlink(path);
  free(path);
  mt_assert_no_leaks();
}

Test(urdf, model_limits_and_lines) {
  cp_urdf_model m;
  cp_error err = {0};
  cr_assert_eq(cp_urdf_parse(arm_urdf, strlen(arm_urdf), &m, &err), 0,
               "%s: %s", err.where, err.msg);
  cr_assert_str_eq(m.robot, "arm");
  cr_assert_str_eq(m.root, "base");
  cr_assert_null(m.chain.name);
  cr_assert_eq(m.chain.n, 3);
  cr_assert_eq(m.chain.base_quat[0], 1);
  cr_assert_eq(m.limits[0].bounded, 1);
  cr_assert_eq(m.limits[0].lower, -3);
  cr_assert_eq(m.limits[0].upper, 3);
  cr_assert_eq(m.limits[0].effort, 10);
  cr_assert_eq(m.limits[1].velocity, 1);
  cr_assert_eq(m.limits[2].bounded, 0); // continuous
  // The same limits on the chain's joints.
  for (int k = 0; k < 3; ++k) {
    const cp_joint *j = &m.chain.joints[k];
    cr_assert_eq(j->has_limits, m.limits[k].bounded);
    cr_assert_eq(j->lower, m.limits[k].lower);
    cr_assert_eq(j->upper, m.limits[k].upper);
    cr_assert_eq(j->effort_limit, m.limits[k].effort);
    cr_assert_eq(j->velocity_limit, m.limits[k].velocity);
  }
  cr_assert_eq(m.chain.joints[0].lower, -3);
  cr_assert_eq(m.chain.joints[0].upper, 3);
  cr_assert_eq(m.chain.joints[0].effort_limit, 10);
  cr_assert_eq(m.chain.joints[1].velocity_limit, 1);
  cr_assert_eq(m.joint_line[0], 12);
  cr_assert_eq(m.joint_line[1], 23);
  cr_assert_eq(m.joint_line[2], 34);
  // The continuous joint is a revolute one; no shape on l3 (visual only).
  cr_assert_eq(m.chain.joints[2].type, CP_JOINT_REVOLUTE);
  cr_assert_eq(m.chain.joints[2].link.shape.type, CP_SHAPE_NONE);
  cp_urdf_free(&m);
  cp_urdf_free(&m); // safe twice
  mt_assert_no_leaks();
}

// ------------------------------------------------------- fixed joints --

static const char *merge_urdf =
    "<robot name=\"m\">\n"
    "  <link name=\"base\"/>\n"
    "  <link name=\"mount\"><inertial><mass value=\"5\"/><inertia ixx=\"1\" "
    "ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial>"
    "<collision><geometry><box size=\"1 1 1\"/></geometry></collision>"
    "</link>\n"
    "  <joint name=\"fix0\" type=\"fixed\"><parent link=\"base\"/><child "
    "link=\"mount\"/><origin xyz=\"0 0 0.5\" rpy=\"0 0 1.5707963267948966\"/>"
    "</joint>\n"
    "  <link name=\"a\"><inertial><origin xyz=\"0 0 0.1\"/><mass value=\"1\"/>"
    "<inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.02\" iyz=\"0\" "
    "izz=\"0.03\"/></inertial></link>\n"
    "  <joint name=\"j1\" type=\"revolute\"><parent link=\"mount\"/><child "
    "link=\"a\"/><origin xyz=\"0.1 0 0\"/><axis xyz=\"0 0 1\"/><limit "
    "effort=\"1\" velocity=\"1\" lower=\"-1\" upper=\"1\"/></joint>\n"
    "  <link name=\"b\"><inertial><origin rpy=\"0 0 1.5707963267948966\"/>"
    "<mass value=\"1\"/><inertia ixx=\"0.004\" ixy=\"0\" ixz=\"0\" "
    "iyy=\"0.005\" iyz=\"0\" izz=\"0.006\"/></inertial>"
    "<collision><origin xyz=\"0 0 -0.05\"/><geometry><sphere "
    "radius=\"0.01\"/></geometry></collision></link>\n"
    "  <joint name=\"fix1\" type=\"fixed\"><parent link=\"a\"/><child "
    "link=\"b\"/><origin xyz=\"0 0 0.2\"/></joint>\n"
    "  <link name=\"c\"/>\n"
    "  <joint name=\"fix2\" type=\"fixed\"><parent link=\"b\"/><child "
    "link=\"c\"/></joint>\n"
    "</robot>\n";

Test(urdf, fixed_joints_merge_mass_properties) {
  cp_urdf_model m;
  cp_error err = {0};
  cr_assert_eq(cp_urdf_parse(merge_urdf, strlen(merge_urdf), &m, &err), 0,
               "%s: %s", err.where, err.msg);
  cr_assert_eq(m.chain.n, 1);
  const cp_joint *j = &m.chain.joints[0];
  cr_assert_str_eq(j->name, "j1");
  cr_assert_str_eq(j->link.name, "a");
  // Base-side fixed joint composed into j1's origin: (0, 0, 0.5) +
  // Rz(90) (0.1, 0, 0), rotation Rz(90).
  double exp_pos[3] = {0, 0.1, 0.5};
  cr_assert_lt(mt_maxdiff(j->origin_pos, exp_pos, 3), TOL);
  cr_assert_float_eq(j->origin_quat[0], sqrt(0.5), TOL);
  cr_assert_float_eq(j->origin_quat[3], sqrt(0.5), TOL);
  // a (1 kg at z 0.1) + b (1 kg at z 0.2, inertia turned by Rz(90)):
  // 2 kg at z 0.15; diag(0.01, 0.02, 0.03) + diag(0.005, 0.004, 0.006) +
  // parallel axis 2 * 1 * 0.05^2 about x and y.
  cr_assert_float_eq(j->link.mass, 2, TOL);
  double com[3] = {0, 0, 0.15};
  cr_assert_lt(mt_maxdiff(j->link.com, com, 3), TOL);
  double In[9] = {0.02, 0, 0, 0, 0.029, 0, 0, 0, 0.036};
  cr_assert_lt(mt_maxdiff(j->link.inertia, In, 9), TOL);
  // b's sphere at b's origin - 0.05 z = the merged centre of mass: kept.
  // The mount's box (merged into the fixed base) is ignored.
  cr_assert_eq(j->link.shape.type, CP_SHAPE_SPHERE);
  cp_urdf_free(&m);
  mt_assert_no_leaks();
}

// ----------------------------------------------------- collision frames --

static char *frame_urdf(const char *coll_rpy, const char *geometry,
                        int with_collision) {
  char *t = malloc(4096);
  char coll[512] = "";
  if (with_collision)
    snprintf(coll, sizeof coll,
             "<collision><origin xyz=\"0 0 0.1\" rpy=\"%s\"/><geometry>%s"
             "</geometry></collision>",
             coll_rpy, geometry);
  snprintf(t, 4096,
           "<robot name=\"f\"><link name=\"base\"/>\n"
           "<link name=\"l1\"><inertial><origin xyz=\"0 0 0.1\" rpy=\"0.2 0 "
           "0\"/><mass value=\"1\"/><inertia ixx=\"0.01\" ixy=\"0.001\" "
           "ixz=\"0\" iyy=\"0.02\" iyz=\"0\" izz=\"0.005\"/></inertial>%s"
           "</link>\n"
           "<joint name=\"j1\" type=\"revolute\"><parent link=\"base\"/>"
           "<child link=\"l1\"/><origin xyz=\"0 0 0.3\" rpy=\"0.1 0.2 0.3\"/>"
           "<axis xyz=\"0 1 0\"/><limit effort=\"1\" velocity=\"1\" "
           "lower=\"-4\" upper=\"4\"/></joint>\n"
           "<link name=\"l2\"><inertial><origin xyz=\"0.02 0 0.05\"/><mass "
           "value=\"0.5\"/><inertia ixx=\"0.001\" ixy=\"0\" ixz=\"0\" "
           "iyy=\"0.001\" iyz=\"0\" izz=\"0.001\"/></inertial></link>\n"
           "<joint name=\"j2\" type=\"prismatic\"><parent link=\"l1\"/>"
           "<child link=\"l2\"/><origin xyz=\"0.05 0.02 0.2\" rpy=\"-0.3 0.4 "
           "0.1\"/><axis xyz=\"0 0 1\"/><limit effort=\"1\" velocity=\"1\" "
           "lower=\"-1\" upper=\"1\"/></joint>\n"
           "</robot>\n",
           coll);
  return t;
}

static void load_model(const char *text, cp_urdf_model *m) {
  cp_error err = {0};
  cr_assert_eq(cp_urdf_parse(text, strlen(text), m, &err), 0, "%s: %s",
               err.where, err.msg);
}

// The quaternions q and -q are the same rotation.
static double quat_diff(const double *a, const double *b) {
  double dp = 0, dm = 0;
  for (int i = 0; i < 4; ++i) {
    dp = fmax(dp, fabs(a[i] - b[i]));
    dm = fmax(dm, fabs(a[i] + b[i]));
  }
  return fmin(dp, dm);
}

Test(urdf, shape_rotations_are_kept_in_the_shape_pose) {
  cp_urdf_model m;
  // A box turned 90 degrees about z: extents as written, the rotation in
  // the shape pose, the link frame unchanged.
  char *t = frame_urdf("0 0 1.5707963267948966",
                       "<box size=\"0.1 0.2 0.3\"/>", 1);
  load_model(t, &m);
  const cp_link *lk = &m.chain.joints[0].link;
  cr_assert_eq(lk->shape.type, CP_SHAPE_BOX);
  cr_assert_eq(lk->shape.size[0], 0.1);
  cr_assert_eq(lk->shape.size[1], 0.2);
  cr_assert_eq(lk->shape.size[2], 0.3);
  cr_assert_eq(lk->has_shape_pose, 1);
  double pos[3] = {0, 0, 0.1}, q[4];
  cr_assert_lt(mt_maxdiff(lk->shape_pos, pos, 3), TOL);
  rpy_quaternion(0, 0, PI / 2, q);
  cr_assert_lt(quat_diff(lk->shape_quat, q), TOL);
  cr_assert_eq(m.chain.joints[0].axis[1], 1);
  // No collision on l2: default pose at its centre of mass.
  const cp_link *l2 = &m.chain.joints[1].link;
  cr_assert_eq(l2->shape.type, CP_SHAPE_NONE);
  cr_assert_lt(mt_maxdiff(l2->shape_pos, l2->com, 3), TOL);
  cr_assert_eq(l2->shape_quat[0], 1);
  cp_urdf_free(&m);
  free(t);
  mt_assert_no_leaks();
}

Test(urdf, shape_rotations_keep_the_urdf_frames) {
  // A cylinder along the link's x axis (rpy 0 pi/2 0) and a tilted box: the
  // chain is exactly the one without the collision element (same link
  // frames, centres of mass, Jacobians, mass matrix, bias efforts); the
  // shape's world axes are R_link R_c.
  const char *cases[2][2] = {
      {"0 1.5707963267948966 0", "<cylinder radius=\"0.02\" length=\"0.2\"/>"},
      {"0.3 1.1 -0.4", "<box size=\"0.1 0.2 0.3\"/>"}};
  for (int c = 0; c < 2; ++c) {
    char *t1 = frame_urdf(cases[c][0], cases[c][1], 1);
    char *t0 = frame_urdf(cases[c][0], cases[c][1], 0);
    cp_urdf_model m1, m0;
    load_model(t1, &m1);
    load_model(t0, &m0);
    cr_assert_eq(m0.chain.joints[0].link.shape.type, CP_SHAPE_NONE);
    cr_assert_neq(m1.chain.joints[0].link.shape.type, CP_SHAPE_NONE);
    uint64_t seed = 3;
    for (int trial = 0; trial < 3; ++trial) {
      for (int k = 0; k < 2; ++k) {
        double q = cpt_uniform(&seed, -1, 1), v = cpt_uniform(&seed, -1, 1);
        m0.chain.joints[k].position = m1.chain.joints[k].position = q;
        m0.chain.joints[k].velocity = m1.chain.joints[k].velocity = v;
      }
      cp_link_state s0[2], s1[2];
      cp_chain_kinematics(&m0.chain, s0);
      cp_chain_kinematics(&m1.chain, s1);
      double Rc[9], Rs[9], want[9], got[9];
      if (c == 0)
        rpy_matrix(0, PI / 2, 0, Rc);
      else
        rpy_matrix(0.3, 1.1, -0.4, Rc);
      cp_quat_to_mat(Rs, m1.chain.joints[0].link.shape_quat);
      cr_assert_lt(mt_maxdiff(Rs, Rc, 9), TOL);
      cp_m3_mul(want, s0[0].R, Rc);
      cp_m3_mul(got, s1[0].R, Rs);
      cr_assert_lt(mt_maxdiff(got, want, 9), TOL);
      compare_chains(&m0.chain, &m1.chain);
    }
    cp_urdf_free(&m0);
    cp_urdf_free(&m1);
    free(t0);
    free(t1);
  }
  mt_assert_no_leaks();
}

Test(urdf, rotated_cylinder_lies_on_the_table) {
  // A cylinder along the link x axis, the link lowered by a prismatic joint
  // onto the table: contacts along its bottom line, |x| <= half length.
  const char *urdf =
      "<robot name=\"r\"><link name=\"base\"/>"
      "<link name=\"roller\"><inertial><mass value=\"1\"/><inertia "
      "ixx=\"0.001\" ixy=\"0\" ixz=\"0\" iyy=\"0.004\" iyz=\"0\" "
      "izz=\"0.004\"/></inertial><collision><origin rpy=\"0 "
      "1.5707963267948966 0\"/><geometry><cylinder radius=\"0.05\" "
      "length=\"0.2\"/></geometry></collision></link>"
      "<joint name=\"z\" type=\"prismatic\"><parent link=\"base\"/><child "
      "link=\"roller\"/><axis xyz=\"0 0 1\"/><limit effort=\"1\" "
      "velocity=\"1\" lower=\"-1\" upper=\"1\"/></joint></robot>";
  char *path = temp_urdf(urdf);
  char text[2048];
  snprintf(text, sizeof text,
           "{\"bodies\": [{\"name\": \"table\", \"fixed\": true, \"shape\": "
           "{\"type\": \"plane\", \"normal\": [0, 0, 1]}}], "
           "\"manipulators\": [{\"name\": \"r\", \"urdf\": \"%s\", \"base\": "
           "{\"position\": [0, 0, 0.15]}, \"state\": {\"z\": {\"position\": "
           "-0.1}}}]}",
           path);
  cp_scene s;
  mt_parse_ok(text, 1, &s);
  cr_assert_geq(s.n_contacts, 2);
  double lo = 1, hi = -1;
  for (int j = 0; j < s.n_contacts; ++j) {
    const cp_contact *c = &s.contacts[j];
    cr_assert_float_eq(c->p[2], 0, 1e-9);
    cr_assert_float_eq(c->p[1], 0, 1e-9);
    cr_assert_float_eq(c->n[2], 1, TOL);
    cr_assert_eq(c->a.manip, 0);
    lo = fmin(lo, c->p[0]);
    hi = fmax(hi, c->p[0]);
  }
  cr_assert_float_eq(lo, -0.1, 1e-9);
  cr_assert_float_eq(hi, 0.1, 1e-9);
  cp_scene_free(&s);
  unlink(path);
  free(path);
  mt_assert_no_leaks();
}

// ------------------------------------------------- errors in the URDF --

#define HEAD "<?xml version=\"1.0\"?>\n<robot name=\"bad\">\n"
#define LINK(n)                                                              \
  "<link name=\"" n "\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" "   \
  "ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial></link>\n"
#define JOINT(n, type, p, c)                                                 \
  "<joint name=\"" n "\" type=\"" type "\"><parent link=\"" p "\"/><child "  \
  "link=\"" c "\"/><limit effort=\"1\" velocity=\"1\" lower=\"-1\" "         \
  "upper=\"1\"/></joint>\n"

Test(urdf_errors, malformed_xml) {
  urdf_fails(HEAD "<link name=\"a\">\n</robot>\n", 4, "invalid XML", NULL);
  urdf_fails("", 0, "invalid XML", NULL);
  urdf_fails("<?xml version=\"1.0\"?>\n<model name=\"x\"/>\n", 2,
             "<model name=\"x\">", "must be <robot>");
}

Test(urdf_errors, missing_and_bad_numbers) {
  urdf_fails(HEAD "<link name=\"base\"/>\n"
                  "<link name=\"a\">\n  <inertial>\n    <inertia ixx=\"1\" "
                  "ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/>\n"
                  "  </inertial>\n</link>\n" JOINT("j", "revolute", "base",
                                                   "a") "</robot>\n",
             5, "<inertial>", "missing <mass");
  urdf_fails(HEAD "<link name=\"base\"/>\n<link name=\"a\"><inertial>\n"
                  "<mass value=\"heavy\"/></inertial></link>\n</robot>\n",
             5, "<mass>", "value=\"heavy\": expected 1 finite number");
  urdf_fails(HEAD "<link name=\"base\"/>\n<link name=\"a\"><inertial>\n"
                  "<mass value=\"1\"/><inertia ixx=\"1\"/></inertial>"
                  "</link>\n</robot>\n",
             5, "<inertia>", "missing attribute \"ixy\"");
  urdf_fails(HEAD "<link name=\"base\"/>\n" LINK("a")
             "<joint name=\"j\" type=\"revolute\"><parent link=\"base\"/>"
             "<child link=\"a\"/></joint>\n</robot>\n",
             5, "<joint name=\"j\">", "missing <limit");
  urdf_fails(HEAD "<link name=\"base\"/>\n" LINK("a")
             "<joint name=\"j\" type=\"revolute\"><parent link=\"base\"/>"
             "<child link=\"a\"/><limit effort=\"1\" velocity=\"1\" "
             "lower=\"1\" upper=\"-1\"/></joint>\n</robot>\n",
             5, "<limit>", "lower limit 1 exceeds upper limit -1");
  urdf_fails(HEAD "<link name=\"base\"/>\n" LINK("a")
             "<joint name=\"j\" type=\"continuous\"><parent link=\"base\"/>"
             "<child link=\"a\"/>\n<axis xyz=\"0 0 0\"/></joint>\n</robot>\n",
             6, "<axis>", "non-zero");
  urdf_fails(HEAD "<link name=\"base\"/>\n" LINK("a")
             "<joint name=\"j\" type=\"continuous\"><parent link=\"base\"/>"
             "<child link=\"a\"/>\n<origin xyz=\"0 0\"/></joint>\n</robot>\n",
             6, "<origin>", "expected 3 finite numbers");
}

Test(urdf_errors, structure) {
  // (Branching trees are read since issue 14: tests/models/test_robots.c.)
  urdf_fails(HEAD "<link name=\"base\"/>\n" LINK("a")
             JOINT("j1", "revolute", "base", "nowhere") "</robot>\n",
             5, "<child>", "unknown link \"nowhere\"");
  urdf_fails(HEAD "<link name=\"base\"/>\n" LINK("a")
             JOINT("j1", "fixed", "base", "a") "</robot>\n",
             2, "<robot name=\"bad\">", "no revolute, continuous or prismatic");
  urdf_fails(HEAD "<link name=\"base\"/>\n" LINK("a") LINK("b")
             JOINT("j1", "revolute", "base", "a") "</robot>\n",
             5, "<link name=\"b\">", "a second root link");
  urdf_fails(HEAD "<link name=\"base\"/>\n" LINK("a") LINK("b")
             JOINT("j1", "revolute", "base", "a")
             JOINT("j2", "revolute", "b", "a") "</robot>\n",
             7, "<joint name=\"j2\">", "not a tree");
  urdf_fails(HEAD "<link name=\"base\"/>\n" LINK("a") LINK("a") "</robot>\n",
             5, "<link name=\"a\">", "duplicate link name");
  urdf_fails(HEAD "<link name=\"base\"/>\n" LINK("a/b") "</robot>\n", 4,
             "<link name=\"a/b\">", "'/'");
  urdf_fails(HEAD "<link name=\"base\"/>\n<link name=\"a\"/>\n"
             JOINT("j1", "revolute", "base", "a") "</robot>\n",
             4, "<link name=\"a\">", "needs mass");
  urdf_fails(HEAD "<link name=\"base\"/>\n" LINK("a")
             "<joint name=\"j\" type=\"ball\"><parent link=\"base\"/>"
             "<child link=\"a\"/></joint>\n</robot>\n",
             5, "<joint name=\"j\">", "unknown joint type \"ball\"");
}

Test(urdf_errors, unsupported_features) {
  urdf_fails(HEAD "<link name=\"base\"/>\n<link name=\"a\">\n<collision>"
                  "<geometry>\n<mesh filename=\"a.stl\"/></geometry>"
                  "</collision></link>\n</robot>\n",
             6, "<mesh>", "cannot read mesh");
  urdf_fails(HEAD "<link name=\"base\"/>\n" LINK("a")
             "<joint name=\"free\" type=\"floating\"><parent link=\"base\"/>"
             "<child link=\"a\"/></joint>\n</robot>\n",
             5, "<joint name=\"free\">", "unsupported: floating joint");
  urdf_fails(HEAD "<link name=\"base\"/>\n" LINK("a")
             "<joint name=\"j\" type=\"continuous\"><parent link=\"base\"/>"
             "<child link=\"a\"/>\n<mimic joint=\"k\"/></joint>\n</robot>\n",
             6, "<mimic>", "unknown joint \"k\"");
  // (Several shapes per link are read since issue 14.)
  // Inertia not positive definite.
  urdf_fails(HEAD "<link name=\"base\"/>\n"
                  "<link name=\"a\"><inertial><mass value=\"1\"/><inertia "
                  "ixx=\"1\" ixy=\"0\" ixz=\"0\" iyy=\"0\" iyz=\"0\" "
                  "izz=\"1\"/></inertial></link>\n"
             JOINT("j", "revolute", "base", "a") "</robot>\n",
             4, "<link name=\"a\">", "not positive definite");
  // A missing file.
  cp_scene s;
  cp_error err;
  char *t = urdf_scene("/nonexistent/arm.urdf", NULL);
  cr_assert_eq(cp_scene_parse(t, strlen(t), NULL, NULL, &s, &err), -1);
  cr_assert_str_eq(err.where, "manipulators[0].urdf");
  cr_assert(strstr(err.msg, "cannot open /nonexistent/arm.urdf"), "%s",
            err.msg);
  free(t);
  mt_assert_no_leaks();
}

// ------------------------------------------------------- scene "state" --

static void state_fails(const char *extra, const char *where,
                        const char *part) {
  char *path = temp_urdf(arm_urdf);
  char *t = urdf_scene(path, extra);
  mt_parse_fails(t, where, part);
  free(t);
  unlink(path);
  free(path);
}

Test(urdf_scene, state_map_errors) {
  state_fails("\"state\": {\"j9\": {}}", "manipulators[0].state.j9",
              "movable joints of the URDF are: j1, j2, j3");
  state_fails("\"state\": {\"j1\": {\"position\": 0, \"force\": 1}}",
              "manipulators[0].state.j1.force", NULL);
  state_fails("\"state\": {\"j1\": {\"effort\": 0, \"acceleration\": 1}}",
              "manipulators[0].state.j1.acceleration", "exactly one");
  state_fails("\"state\": {\"j1\": {\"position\": \"up\"}}",
              "manipulators[0].state.j1.position", "number");
  state_fails("\"state\": [1]", "manipulators[0].state", "object");
  state_fails("\"state\": {\"j2\": {\"position\": 0.7}}",
              "manipulators[0].state.j2.position",
              "outside its URDF limits [-0.5, 0.5]");
  state_fails("\"joints\": []", "manipulators[0].joints", "not both");
  state_fails("\"base\": {\"position\": [0, 0]}",
              "manipulators[0].base.position", "3 numbers");
  mt_parse_fails("{\"contacts\": [], \"manipulators\": [{\"name\": \"m\", "
                 "\"state\": {}, \"joints\": []}]}",
                 "manipulators[0].state", "goes with \"urdf\"");
  // Defaults: at rest at 0, effort-driven; a 0 outside the limits is an
  // error naming the URDF line.
  char *path = temp_urdf(HEAD "<link name=\"base\"/>\n" LINK("a")
                         "<joint name=\"j\" type=\"prismatic\"><parent "
                         "link=\"base\"/><child link=\"a\"/><limit "
                         "effort=\"1\" velocity=\"1\" lower=\"0.1\" "
                         "upper=\"0.2\"/></joint>\n</robot>\n");
  char *t = urdf_scene(path, NULL);
  mt_parse_fails(t, "manipulators[0].urdf", "is at position 0 (no state given)");
  mt_parse_fails(t, "manipulators[0].urdf", "line 5");
  free(t);
  unlink(path);
  free(path);
  path = temp_urdf(arm_urdf);
  t = urdf_scene(path, NULL);
  cp_scene s;
  mt_parse_ok(t, 1, &s);
  for (int k = 0; k < 3; ++k) {
    const cp_joint *j = &s.manips[0].joints[k];
    cr_assert_eq(j->position, 0);
    cr_assert_eq(j->velocity, 0);
    cr_assert_eq(j->drive, CP_DRIVE_EFFORT);
    cr_assert_eq(j->effort, 0);
  }
  cr_assert_eq(s.manips[0].base_quat[0], 1);
  cp_scene_free(&s);
  free(t);
  unlink(path);
  free(path);
  mt_assert_no_leaks();
}

Test(urdf_scene, relative_paths_from_the_scene_directory) {
  char *path = temp_urdf(arm_urdf);
  const char *base = strrchr(path, '/') + 1;
  char text[1024];
  snprintf(text, sizeof text,
           "{\"contacts\": [], \"manipulators\": [{\"name\": \"arm\", "
           "\"urdf\": \"%s\"}]}",
           base);
  char *scene = cpt_temp_file(text, ".json");
  cp_scene s;
  cp_error err;
  cr_assert_eq(cp_scene_load(scene, NULL, &s, &err), 0, "%s: %s", err.where,
               err.msg);
  cr_assert_eq(s.manips[0].n, 3);
  cp_scene_free(&s);
  // The same text parsed with another base directory does not find it.
  cr_assert_eq(cp_scene_parse(text, strlen(text), "/nonexistent", NULL, &s,
                              &err),
               -1);
  cr_assert_str_eq(err.where, "manipulators[0].urdf");
  unlink(scene);
  unlink(path);
  free(scene);
  free(path);
  mt_assert_no_leaks();
}

// --------------------------------------------------- bundled scenes --

static void load_bundled(const char *name, cp_scene *sc, cp_system *sys) {
  const char *root = getenv("CP_SOURCE_ROOT");
  char path[4096];
  snprintf(path, sizeof path, "%s/models/scenes/%s.json", root ? root : ".",
           name);
  cp_error err;
  cr_assert_eq(cp_scene_load(path, NULL, sc, &err), 0, "%s: %s: %s", path,
               err.where, err.msg);
  cr_assert_eq(cp_system_build(sc, sys, &err), 0);
}

Test(urdf_scene, bundled_finger_push) {
  cp_scene sc;
  cp_system sys;
  load_bundled("urdf_finger_push", &sc, &sys);
  cr_assert_eq(sc.contacts_auto, 1);
  cr_assert_eq(sc.manips[0].n, 3); // two fixed joints merged away
  cr_assert_str_eq(sc.manips[0].joints[2].link.name, "distal");
  cr_assert_eq(sys.n_c, 5);
  for (int j = 0; j < 4; ++j) {
    cr_assert_eq(sc.contacts[j].b.body, 0); // the table
    cr_assert(!sys.sliding[j]);
    cr_assert_float_eq(sys.mu[j], 0.3, 0);
  }
  // The fingertip cap on the box face at mid-height, sliding down it.
  const cp_contact *c = &sc.contacts[4];
  char bn[64];
  cr_assert_str_eq(cp_scene_ref_name(&sc, c->b, bn, sizeof bn),
                   "finger/distal");
  cr_assert_eq(c->a.body, 1);
  double p[3] = {-0.05, 0, 0.05}, n[3] = {1, 0, 0};
  cr_assert_lt(mt_maxdiff(c->p, p, 3), 1e-9);
  cr_assert_lt(mt_maxdiff(c->n, n, 3), TOL);
  cr_assert_float_eq(sys.mu[4], 0.5, 0); // the (box, finger) pair
  cr_assert(sys.sliding[4]);
  cr_assert_float_eq(fabs(sys.v[3 * 4]), 0, 1e-12);
  // Joint rows: tau - g_man + 2 N along the normal on the finger = 0.
  for (int k = 0; k < 3; ++k) {
    int r = 6 + k;
    double res = sys.tau[k] - sys.g_man[k] + 2 * sys.G[r + (size_t)sys.n_u * 12];
    cr_assert_float_eq(res, 0, 1e-12, "joint %d residual %g", k, res);
  }
  cp_system_free(&sys);
  cp_scene_free(&sc);
  mt_assert_no_leaks();
}

Test(urdf_scene, bundled_gripper_holds_the_box) {
  cp_scene sc;
  cp_system sys;
  load_bundled("gripper_box", &sc, &sys);
  cr_assert_eq(sc.n_manips, 2);
  cr_assert_eq(sys.n_l, 4);
  cr_assert_eq(sys.n_c, 12);
  // 4 box-table corners, then each pad's 4 corners on the box faces.
  for (int j = 4; j < 12; ++j) {
    const cp_contact *c = &sc.contacts[j];
    int side = j < 8 ? -1 : 1; // left pad at y = -0.03, right at +0.03
    cr_assert_eq(c->b.manip, j < 8 ? 0 : 1);
    cr_assert_float_eq(c->p[1], 0.03 * side, 1e-9);
    cr_assert_float_eq(fabs(c->p[0]), 0.02, 1e-9);
    cr_assert(fabs(c->p[2] - 0.01) < 1e-9 || fabs(c->p[2] - 0.05) < 1e-9);
    cr_assert_float_eq(c->n[1], -side, TOL);
  }
  // Equilibrium: each pad presses 5 N (1.25 N per corner) and carries half
  // the box's weight (force on the box along +z); the table carries nothing.
  // f + G c = 0 in every row, the joint rows included (efforts = gravity
  // compensation + squeeze / lift).
  double c[36] = {0};
  for (int j = 4; j < 12; ++j) {
    const double *o = sc.contacts[j].o, up = 0.2 * 9.81 / 2 / 4;
    c[3 * j] = 1.25;
    cr_assert_float_eq(fabs(o[2]), 1, TOL); // t = x, o = n x t = -+z
    c[3 * j + 2] = up * o[2];
  }
  for (int r = 0; r < sys.n_u; ++r) {
    double res = sys.f[r];
    for (int k = 0; k < 36; ++k) res += sys.G[r + (size_t)sys.n_u * k] * c[k];
    cr_assert_float_eq(res, 0, 1e-12, "row %d residual %g", r, res);
  }
  cp_system_free(&sys);
  cp_scene_free(&sc);
  mt_assert_no_leaks();
}
