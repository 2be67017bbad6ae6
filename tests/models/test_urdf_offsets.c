// Link shapes posed in the link frame (cp_link.shape_pos/shape_quat) and
// joint limits on cp_joint: a URDF <collision><origin> offset from the
// <inertial> origin and rotated by rpy, the same link through the JSON
// "shape_origin" key, contacts against a plane at the analytic corners, the
// "limits" key and its errors, and the defaults (shape at com, identity).
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/chain.h"
#include "models/contactgen.h"
#include "models/scene.h"
#include "models/urdf.h"
#include "models/vec3.h"
#include "tests/models/mtest.h"
#include "tests/support.h"

#define PI 3.14159265358979323846

// Rz(y) Ry(p) Rx(r), written out.
static void rpy_matrix(double r, double p, double y, double *R) {
  double cr = cos(r), sr = sin(r), cp = cos(p), sp = sin(p), cy = cos(y),
         sy = sin(y);
  double M[9] = {cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr,
                 sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr,
                 -sp,     cp * sr,                cp * cr};
  memcpy(R, M, sizeof M);
}

static void rpy_quaternion(double r, double p, double y, double *q) {
  double cr = cos(r / 2), sr = sin(r / 2), cp = cos(p / 2), sp = sin(p / 2),
         cy = cos(y / 2), sy = sin(y / 2);
  q[0] = cr * cp * cy + sr * sp * sy;
  q[1] = sr * cp * cy - cr * sp * sy;
  q[2] = cr * sp * cy + sr * cp * sy;
  q[3] = cr * cp * sy - sr * sp * cy;
}

// The link: a slider along world z (joint origin turned by Rz(JYAW)), centre
// of mass at COM, a box of SIZE posed at SPOS with rpy (SROLL, 0, SYAW): the
// roll of pi/2 stands the box's y extent (0.1) upright, so its bottom face is
// 0.05 below SPOS. Base at BASE, joint position Q: bottom face on z = 0.
#define JYAW 0.3
#define SROLL (PI / 2)
#define SYAW 0.5
static const double BASE[3] = {0.1, -0.2, 0.3};
static const double COM[3] = {0.3, 0, 0};
static const double SPOS[3] = {-0.2, 0.1, 0.05};
static const double SIZE[3] = {0.2, 0.1, 0.06};
#define Q (-0.3)

static const char *offset_urdf =
    "<robot name=\"s\"><link name=\"base\"/>\n"
    "<link name=\"slab\"><inertial><origin xyz=\"0.3 0 0\"/><mass "
    "value=\"2\"/><inertia ixx=\"0.01\" ixy=\"0\" ixz=\"0\" iyy=\"0.02\" "
    "iyz=\"0\" izz=\"0.03\"/></inertial>\n"
    "<collision><origin xyz=\"-0.2 0.1 0.05\" rpy=\"1.5707963267948966 0 "
    "0.5\"/><geometry><box size=\"0.2 0.1 0.06\"/></geometry></collision>"
    "</link>\n"
    "<joint name=\"z\" type=\"prismatic\"><parent link=\"base\"/><child "
    "link=\"slab\"/><origin rpy=\"0 0 0.3\"/><axis xyz=\"0 0 1\"/><limit "
    "lower=\"-0.5\" upper=\"0.4\" effort=\"20\" velocity=\"0.7\"/></joint>\n"
    "</robot>\n";

static const char *table =
    "{\"name\": \"table\", \"fixed\": true, \"shape\": {\"type\": \"plane\", "
    "\"normal\": [0, 0, 1]}}";

// The four lowest corners of the posed box (world), analytically.
static void expected_corners(double *P /* [4][3] */) {
  double Rj[9], Rs[9], R[9];
  rpy_matrix(0, 0, JYAW, Rj);
  rpy_matrix(SROLL, 0, SYAW, Rs);
  cp_m3_mul(R, Rj, Rs);
  double o[3] = {BASE[0], BASE[1], BASE[2] + Q}, c[3];
  cp_m3_mulv(c, Rj, SPOS);
  cp_v3_add(c, c, o);
  int k = 0;
  for (int i = 0; i < 8; ++i) {
    double l[3] = {(i & 1 ? 0.5 : -0.5) * SIZE[0],
                   (i & 2 ? 0.5 : -0.5) * SIZE[1],
                   (i & 4 ? 0.5 : -0.5) * SIZE[2]},
           w[3];
    cp_m3_mulv(w, R, l);
    cp_v3_add(w, w, c);
    if (fabs(w[2]) < 1e-9) {
      cr_assert_lt(k, 4);
      cp_v3_copy(P + 3 * k++, w);
    }
  }
  cr_assert_eq(k, 4, "the box's bottom face is not on the plane");
}

static void check_contacts(const cp_scene *s) {
  double P[12];
  expected_corners(P);
  cr_assert_eq(s->n_contacts, 4);
  int seen[4] = {0};
  for (int j = 0; j < 4; ++j) {
    const cp_contact *c = &s->contacts[j];
    cr_assert_eq(c->a.manip, 0);
    cr_assert_eq(c->a.link, 0);
    cr_assert_eq(c->b.body, 0);
    cr_assert_float_eq(c->n[2], 1, 1e-12);
    int hit = -1;
    for (int k = 0; k < 4; ++k)
      if (mt_maxdiff(c->p, P + 3 * k, 3) < 1e-9) hit = k;
    cr_assert_geq(hit, 0, "contact %d at [%g, %g, %g] is no corner", j,
                  c->p[0], c->p[1], c->p[2]);
    cr_assert_eq(seen[hit], 0);
    seen[hit] = 1;
    cr_assert_lt(fabs(c->depth), 1e-9);
  }
}

static char *urdf_scene_text(const char *path, double q) {
  char *t = malloc(4096);
  snprintf(t, 4096,
           "{\"bodies\": [%s], \"manipulators\": [{\"name\": \"m\", "
           "\"urdf\": \"%s\", \"base\": {\"position\": [%.17g, %.17g, "
           "%.17g]}, \"state\": {\"z\": {\"position\": %.17g}}}]}",
           table, path, BASE[0], BASE[1], BASE[2], q);
  return t;
}

// The same manipulator in JSON; `link_extra` and `joint_extra` are spliced
// into the link and joint objects.
static char *json_scene_text(const char *link_extra, const char *joint_extra,
                             double q) {
  double qs[4], qj[4];
  rpy_quaternion(SROLL, 0, SYAW, qs);
  rpy_quaternion(0, 0, JYAW, qj);
  char *t = malloc(8192);
  snprintf(
      t, 8192,
      "{\"bodies\": [%s], \"manipulators\": [{\"name\": \"m\", \"base\": "
      "{\"position\": [%.17g, %.17g, %.17g]}, \"joints\": [{\"name\": \"z\", "
      "\"type\": \"prismatic\", \"axis\": [0, 0, 1], \"origin\": "
      "{\"orientation\": [%.17g, %.17g, %.17g, %.17g]}, \"position\": %.17g%s, "
      "\"link\": {\"name\": \"slab\", \"mass\": 2, \"com\": [0.3, 0, 0], "
      "\"inertia\": [[0.01, 0, 0], [0, 0.02, 0], [0, 0, 0.03]], \"shape\": "
      "{\"type\": \"box\", \"size\": [0.2, 0.1, 0.06]}, \"shape_origin\": "
      "{\"position\": [-0.2, 0.1, 0.05], \"orientation\": [%.17g, %.17g, "
      "%.17g, %.17g]}%s}}]}]}",
      table, BASE[0], BASE[1], BASE[2], qj[0], qj[1], qj[2], qj[3], q,
      joint_extra ? joint_extra : "", qs[0], qs[1], qs[2], qs[3],
      link_extra ? link_extra : "");
  return t;
}

Test(urdf_offsets, urdf_offset_rotated_box_on_plane) {
  cp_urdf_model m;
  cp_error err = {0};
  cr_assert_eq(cp_urdf_parse(offset_urdf, strlen(offset_urdf), &m, &err), 0,
               "%s: %s", err.where, err.msg);
  const cp_link *lk = &m.chain.joints[0].link;
  cr_assert_lt(mt_maxdiff(lk->com, COM, 3), 1e-15);
  cr_assert_eq(lk->has_shape_pose, 1);
  cr_assert_lt(mt_maxdiff(lk->shape_pos, SPOS, 3), 1e-15);
  double Rs[9], Rexp[9];
  cp_quat_to_mat(Rs, lk->shape_quat);
  rpy_matrix(SROLL, 0, SYAW, Rexp);
  cr_assert_lt(mt_maxdiff(Rs, Rexp, 9), 1e-12);
  cr_assert_eq(lk->shape.size[0], 0.2); // extents as written
  cr_assert_eq(lk->shape.size[1], 0.1);
  // The link frame is the URDF's: the joint origin is untouched.
  double Rj[9], Rjexp[9];
  cp_quat_to_mat(Rj, m.chain.joints[0].origin_quat);
  rpy_matrix(0, 0, JYAW, Rjexp);
  cr_assert_lt(mt_maxdiff(Rj, Rjexp, 9), 1e-12);
  cp_urdf_free(&m);

  char *path = cpt_temp_file(offset_urdf, ".urdf");
  cr_assert_not_null(path);
  char *text = urdf_scene_text(path, Q);
  cp_scene s;
  mt_parse_ok(text, 1, &s);
  check_contacts(&s);
  // cp_scene_frame reports the URDF link frame: at base + (0, 0, Q), Rz(JYAW).
  double R[9], x[3], ox[3] = {BASE[0], BASE[1], BASE[2] + Q};
  cp_scene_frame(&s, (cp_ref){-1, 0, 0}, R, x);
  cr_assert_lt(mt_maxdiff(x, ox, 3), 1e-12);
  cr_assert_lt(mt_maxdiff(R, Rjexp, 9), 1e-12);
  cp_scene_free(&s);
  free(text);
  // Lifted by 1 cm: no contact; lowered by 1 cm: penetration error.
  text = urdf_scene_text(path, Q + 0.01);
  mt_parse_ok(text, 1, &s);
  cr_assert_eq(s.n_contacts, 0);
  cp_scene_free(&s);
  free(text);
  text = urdf_scene_text(path, Q - 0.01);
  mt_parse_fails(text, "contacts", "overlap");
  free(text);
  unlink(path);
  free(path);
  mt_assert_no_leaks();
}

Test(urdf_offsets, json_shape_origin_matches_urdf) {
  char *path = cpt_temp_file(offset_urdf, ".urdf");
  cr_assert_not_null(path);
  char *tu = urdf_scene_text(path, Q);
  char *tj = json_scene_text(NULL, NULL, Q);
  cp_scene su, sj;
  mt_parse_ok(tu, 1, &su);
  mt_parse_ok(tj, 1, &sj);
  check_contacts(&sj);
  cr_assert_eq(sj.n_contacts, su.n_contacts);
  for (int j = 0; j < sj.n_contacts; ++j) {
    cr_assert_lt(mt_maxdiff(sj.contacts[j].p, su.contacts[j].p, 3), 1e-12);
    cr_assert_lt(mt_maxdiff(sj.contacts[j].n, su.contacts[j].n, 3), 1e-12);
  }
  const cp_link *a = &sj.manips[0].joints[0].link,
                *b = &su.manips[0].joints[0].link;
  cr_assert_lt(mt_maxdiff(a->shape_pos, b->shape_pos, 3), 1e-15);
  double Ra[9], Rb[9];
  cp_quat_to_mat(Ra, a->shape_quat);
  cp_quat_to_mat(Rb, b->shape_quat);
  cr_assert_lt(mt_maxdiff(Ra, Rb, 9), 1e-12);
  cp_scene_free(&su);
  cp_scene_free(&sj);
  free(tu);
  free(tj);
  unlink(path);
  free(path);
  mt_assert_no_leaks();
}

Test(urdf_offsets, json_shape_origin_defaults_and_errors) {
  // Orientation only: the position defaults to com; no inertia: the shape's,
  // turned into link axes.
  const char *t =
      "{\"contacts\": [], \"manipulators\": [{\"name\": \"m\", \"joints\": "
      "[{\"name\": \"j\", \"type\": \"revolute\", \"axis\": [0, 0, 1], "
      "\"link\": {\"name\": \"l\", \"mass\": 1, \"com\": [0.1, 0.2, 0.3], "
      "\"shape\": {\"type\": \"box\", \"size\": [0.1, 0.2, 0.3]}, "
      "\"shape_origin\": {\"orientation\": [0.7071067811865476, 0, 0, "
      "0.7071067811865476]}}}]}]}";
  cp_scene s;
  mt_parse_ok(t, 1, &s);
  const cp_link *lk = &s.manips[0].joints[0].link;
  cr_assert_eq(lk->has_shape_pose, 1);
  cr_assert_lt(mt_maxdiff(lk->shape_pos, lk->com, 3), 1e-15);
  // Box inertia diag(m/12 (b^2+c^2), ...) with x and y swapped by Rz(90).
  double Ix = (0.04 + 0.09) / 12, Iy = (0.01 + 0.09) / 12,
         Iz = (0.01 + 0.04) / 12, In[9] = {Iy, 0, 0, 0, Ix, 0, 0, 0, Iz};
  cr_assert_lt(mt_maxdiff(lk->inertia, In, 9), 1e-15);
  cp_scene_free(&s);
  // No shape_origin: at com with identity (the old behaviour).
  const char *t0 =
      "{\"contacts\": [], \"manipulators\": [{\"name\": \"m\", \"joints\": "
      "[{\"name\": \"j\", \"type\": \"revolute\", \"axis\": [0, 0, 1], "
      "\"link\": {\"name\": \"l\", \"mass\": 1, \"com\": [0.1, 0.2, 0.3], "
      "\"shape\": {\"type\": \"sphere\", \"radius\": 0.1}}}]}]}";
  mt_parse_ok(t0, 1, &s);
  lk = &s.manips[0].joints[0].link;
  cr_assert_lt(mt_maxdiff(lk->shape_pos, lk->com, 3), 1e-15);
  cr_assert_eq(lk->shape_quat[0], 1);
  cr_assert_eq(lk->shape_quat[1], 0);
  cr_assert_eq(s.manips[0].joints[0].has_limits, 0);
  cp_scene_free(&s);
  // Errors.
  // Offset shape, no inertia: an error (no uniform-density guess).
  const char *t1 =
      "{\"contacts\": [], \"manipulators\": [{\"name\": \"m\", \"joints\": "
      "[{\"name\": \"j\", \"type\": \"revolute\", \"axis\": [0, 0, 1], "
      "\"link\": {\"name\": \"l\", \"mass\": 1, \"shape\": {\"type\": "
      "\"sphere\", \"radius\": 0.1}, \"shape_origin\": {\"position\": [0.1, "
      "0, 0]}}}]}]}";
  mt_parse_fails(t1, "manipulators[0].joints[0].link.inertia",
                 "needs an \"inertia\"");
  const char *t2 =
      "{\"contacts\": [], \"manipulators\": [{\"name\": \"m\", \"joints\": "
      "[{\"name\": \"j\", \"type\": \"revolute\", \"axis\": [0, 0, 1], "
      "\"link\": {\"name\": \"l\", \"mass\": 1, \"inertia\": [[1, 0, 0], [0, "
      "1, 0], [0, 0, 1]], \"shape_origin\": {\"position\": [0.1, 0, 0]}}}]}]}";
  mt_parse_fails(t2, "manipulators[0].joints[0].link.shape_origin",
                 "missing");
  const char *t3 =
      "{\"contacts\": [], \"manipulators\": [{\"name\": \"m\", \"joints\": "
      "[{\"name\": \"j\", \"type\": \"revolute\", \"axis\": [0, 0, 1], "
      "\"link\": {\"name\": \"l\", \"mass\": 1, \"shape\": {\"type\": "
      "\"sphere\", \"radius\": 0.1}, \"shape_origin\": {\"orientation\": [2, "
      "0, 0, 0]}}}]}]}";
  mt_parse_fails(t3, "manipulators[0].joints[0].link.shape_origin.orientation",
                 "unit quaternion");
  const char *t4 =
      "{\"contacts\": [], \"manipulators\": [{\"name\": \"m\", \"joints\": "
      "[{\"name\": \"j\", \"type\": \"revolute\", \"axis\": [0, 0, 1], "
      "\"link\": {\"name\": \"l\", \"mass\": 1, \"shape\": {\"type\": "
      "\"sphere\", \"radius\": 0.1}, \"shape_origin\": {\"rpy\": [0, 0, "
      "0]}}}]}]}";
  mt_parse_fails(t4, "manipulators[0].joints[0].link.shape_origin.rpy",
                 "unknown key");
  mt_assert_no_leaks();
}

Test(urdf_offsets, json_limits) {
  char *t = json_scene_text(NULL,
                            ", \"limits\": {\"lower\": -0.5, \"upper\": 0.4, "
                            "\"effort\": 20, \"velocity\": 0.7}",
                            Q);
  cp_scene s;
  mt_parse_ok(t, 1, &s);
  const cp_joint *j = &s.manips[0].joints[0];
  cr_assert_eq(j->has_limits, 1);
  cr_assert_eq(j->lower, -0.5);
  cr_assert_eq(j->upper, 0.4);
  cr_assert_eq(j->effort_limit, 20);
  cr_assert_eq(j->velocity_limit, 0.7);
  // The URDF gives the same.
  char *path = cpt_temp_file(offset_urdf, ".urdf");
  char *tu = urdf_scene_text(path, Q);
  cp_scene su;
  mt_parse_ok(tu, 1, &su);
  const cp_joint *ju = &su.manips[0].joints[0];
  cr_assert_eq(ju->has_limits, 1);
  cr_assert_eq(ju->lower, j->lower);
  cr_assert_eq(ju->upper, j->upper);
  cr_assert_eq(ju->effort_limit, j->effort_limit);
  cr_assert_eq(ju->velocity_limit, j->velocity_limit);
  cp_scene_free(&su);
  cp_scene_free(&s);
  free(tu);
  free(t);
  // Effort and velocity only: no position limits.
  t = json_scene_text(NULL, ", \"limits\": {\"effort\": 3}", Q);
  mt_parse_ok(t, 1, &s);
  cr_assert_eq(s.manips[0].joints[0].has_limits, 0);
  cr_assert_eq(s.manips[0].joints[0].effort_limit, 3);
  cp_scene_free(&s);
  free(t);
  // Errors.
  struct {
    const char *extra, *where, *part;
  } bad[] = {
      {", \"limits\": {\"lower\": 1, \"upper\": 0}", "limits.upper",
       "exceeds upper limit"},
      {", \"limits\": {\"lower\": -1}", "limits.upper", "both"},
      {", \"limits\": {\"upper\": 1}", "limits.lower", "both"},
      {", \"limits\": {\"lower\": -1, \"upper\": 1, \"effort\": -2}",
       "limits.effort", ">= 0"},
      {", \"limits\": {\"lower\": -1, \"upper\": 1, \"velocity\": -2}",
       "limits.velocity", ">= 0"},
      {", \"limits\": {\"min\": 0}", "limits.min", "unknown key"},
      {", \"limits\": [0, 1]", "limits", ""},
      {", \"limits\": {\"lower\": -0.1, \"upper\": 0.1}", "position",
       "outside its limits [-0.1, 0.1]"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; ++i) {
    t = json_scene_text(NULL, bad[i].extra, Q);
    char where[128];
    snprintf(where, sizeof where, "manipulators[0].joints[0].%s",
             bad[i].where);
    mt_parse_fails(t, where, bad[i].part);
    free(t);
  }
  unlink(path);
  free(path);
  mt_assert_no_leaks();
}

Test(urdf_offsets, merged_fixed_link_shape_pose) {
  // The shape sits on a link merged by a fixed joint: its pose composes the
  // fixed origin (turned by Rz(90)) with its own <origin>.
  const char *u =
      "<robot name=\"r\"><link name=\"base\"/>"
      "<link name=\"a\"><inertial><mass value=\"1\"/><inertia ixx=\"1\" "
      "ixy=\"0\" ixz=\"0\" iyy=\"1\" iyz=\"0\" izz=\"1\"/></inertial></link>"
      "<joint name=\"j\" type=\"continuous\"><parent link=\"base\"/><child "
      "link=\"a\"/></joint>"
      "<link name=\"tip\"><collision><origin xyz=\"0.1 0 0\" rpy=\"0 0 "
      "0.2\"/><geometry><sphere radius=\"0.01\"/></geometry></collision>"
      "</link>"
      "<joint name=\"f\" type=\"fixed\"><parent link=\"a\"/><child "
      "link=\"tip\"/><origin xyz=\"0 0 0.5\" rpy=\"0 0 1.5707963267948966\"/>"
      "</joint></robot>";
  cp_urdf_model m;
  cp_error err = {0};
  cr_assert_eq(cp_urdf_parse(u, strlen(u), &m, &err), 0, "%s: %s", err.where,
               err.msg);
  const cp_link *lk = &m.chain.joints[0].link;
  cr_assert_eq(lk->shape.type, CP_SHAPE_SPHERE);
  double pos[3] = {0, 0.1, 0.5}, R[9], Rexp[9];
  cr_assert_lt(mt_maxdiff(lk->shape_pos, pos, 3), 1e-12);
  cp_quat_to_mat(R, lk->shape_quat);
  rpy_matrix(0, 0, PI / 2 + 0.2, Rexp);
  cr_assert_lt(mt_maxdiff(R, Rexp, 9), 1e-12);
  cr_assert_eq(m.chain.joints[0].has_limits, 0); // continuous
  cr_assert_eq(m.chain.joints[0].effort_limit, 0);
  cp_urdf_free(&m);
  mt_assert_no_leaks();
}
