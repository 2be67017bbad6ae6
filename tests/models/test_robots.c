// Real robots (issue 14): the Panda and the Allegro hand as their authors
// wrote them; kinematic trees against independent checks (gravity efforts
// against the numerically differentiated potential energy, CRBA against
// RNEA, Jacobians against finite differences); mimic joints; meshes read
// from STL/OBJ/DAE files and collided against analytic cases; package://
// resolution and its errors; a Panda grasp; URDF reading in linear time.
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contact/problem.h"
#include "models/chain.h"
#include "models/clock.h"
#include "models/collide.h"
#include "models/mesh.h"
#include "models/scene.h"
#include "models/system.h"
#include "models/urdf.h"
#include "models/vec3.h"
#include "tests/models/mtest.h"
#include "tests/scene_support.h"
#include "tests/support.h"

#define PANDA "robots/example-robot-data/robots/panda_description/urdf/panda.urdf"
#define PANDA_PRIM \
  "robots/example-robot-data/robots/panda_description/urdf/panda_collision.urdf"
#define PANDA_MESH_FINGERS "robots/panda_mesh_fingers.urdf"
#define ALLEGRO \
  "robots/example-robot-data/robots/allegro_hand_description/urdf/" \
  "allegro_right_hand.urdf"

// --------------------------------------------------------------- helpers --

static char *dup_path(const char *rel) { return strdup(cpt_data(rel)); }

// Scene text: one URDF manipulator "r" (absolute path) with the packages
// map at the bundled collection, extra manipulator keys and extra top-level
// keys (either may be NULL). Without a "state" in manip_extra, the joints
// whose 0 is outside their limits get a state inside them.
static char *robot_scene(const char *rel, const char *manip_extra,
                         const char *top_extra) {
  const char *def = strstr(rel, "allegro")
                        ? "\"state\": {\"joint_12.0\": {\"position\": 0.5}}"
                        : "\"state\": {\"panda_joint4\": {\"position\": -1.5}}";
  char both[16384];
  if (!manip_extra || !strstr(manip_extra, "\"state\"")) {
    snprintf(both, sizeof both, "%s%s%s", manip_extra ? manip_extra : "",
             manip_extra ? ", " : "", def);
    manip_extra = both;
  }
  char *urdf = dup_path(rel);
  char *pk = dup_path("robots/example-robot-data");
  size_t n = 4096 + (manip_extra ? strlen(manip_extra) : 0) +
             (top_extra ? strlen(top_extra) : 0);
  char *t = malloc(n);
  snprintf(t, n,
           "{\"packages\": {\"example-robot-data\": \"%s\"}%s%s, "
           "\"manipulators\": [{\"name\": \"r\", \"urdf\": \"%s\"%s%s}]}",
           pk, top_extra ? ", " : "", top_extra ? top_extra : "", urdf,
           manip_extra ? ", " : "", manip_extra ? manip_extra : "");
  free(urdf);
  free(pk);
  return t;
}

static void parse_ok(const char *text, cp_scene *s) {
  cp_error err = {0};
  cr_assert_eq(cp_scene_parse(text, strlen(text), NULL, NULL, s, &err), 0,
               "%s: %s", err.where, err.msg);
}

static int joint_index(const cp_chain *c, const char *name) {
  for (int i = 0; i < c->n; ++i)
    if (!strcmp(c->joints[i].name, name)) return i;
  cr_assert_fail("no joint %s", name);
  return -1;
}

// A "state" map with every independent joint at a random position within
// its limits (continuous: [-pi, pi]), at rest, acceleration-driven at 0.
static char *random_state(const cp_chain *c, uint64_t *rng) {
  size_t n = 200 + 120 * (size_t)c->n;
  char *t = malloc(n);
  size_t w = (size_t)snprintf(t, n, "\"state\": {");
  for (int i = 0, first = 1; i < c->n; ++i) {
    const cp_joint *j = &c->joints[i];
    if (j->is_mimic) continue;
    double lo = j->has_limits ? j->lower : -3.14159, hi = j->has_limits ? j->upper : 3.14159;
    double x = cpt_uniform(rng, lo + 0.02 * (hi - lo), hi - 0.02 * (hi - lo));
    w += (size_t)snprintf(t + w, n - w,
                          "%s\"%s\": {\"position\": %.17g, \"acceleration\": 0}",
                          first ? "" : ", ", j->name, x);
    first = 0;
  }
  snprintf(t + w, n - w, "}");
  return t;
}

// Potential energy V = -sum m_i g . c_i of the chain at its joints' state.
static double potential(const cp_chain *c, const double *g) {
  cp_link_state *s = malloc((size_t)c->n * sizeof *s);
  cp_chain_kinematics(c, s);
  double V = 0;
  for (int i = 0; i < c->n; ++i)
    V -= c->joints[i].link.mass * cp_v3_dot(g, s[i].com);
  free(s);
  return V;
}

// Holding efforts at random configurations (every joint acceleration-driven
// at zero acceleration, zero velocity, no contacts) equal dV/dq, the
// derivative of the potential energy by central differences in each
// independent coordinate (a mimic leader moves its follower too).
static void check_gravity(const char *rel, const char *base, uint64_t seed) {
  uint64_t rng = seed;
  cp_scene probe;
  char *t0 = robot_scene(rel, base, "\"contacts\": []");
  parse_ok(t0, &probe);
  free(t0);
  for (int trial = 0; trial < 4; ++trial) {
    char *st = random_state(&probe.manips[0], &rng);
    char extra[256 + 16384];
    snprintf(extra, sizeof extra, "%s%s%s", base ? base : "", base ? ", " : "", st);
    free(st);
    char *text = robot_scene(rel, extra, "\"contacts\": []");
    cpt_solved s;
    cpt_solve_text(text, NULL, &s);
    free(text);
    cr_assert_eq(s.res.info.status, CP_LCP_SOLVED);
    cp_chain *c = &s.scene.manips[0];
    double gmax = 0, dmax = 0;
    for (int r = 0; r < s.sys.n_l; ++r) {
      int k = s.sys.joint_index[r];
      double x0 = c->joints[k].position, h = 1e-6;
      c->joints[k].position = x0 + h;
      double vp = potential(c, s.scene.gravity);
      c->joints[k].position = x0 - h;
      double vm = potential(c, s.scene.gravity);
      c->joints[k].position = x0;
      double fd = (vp - vm) / (2 * h);
      double eff = s.res.effort[6 * s.sys.n_obj + r];
      gmax = fmax(gmax, fabs(fd));
      dmax = fmax(dmax, fabs(fd - eff));
    }
    cr_assert(gmax > 0.01, "no gravity effort at all (%g)", gmax);
    cr_assert(dmax <= 1e-6 * gmax, "%s trial %d: |effort - dV/dq| = %g, max %g",
              rel, trial, dmax, gmax);
    cpt_release(&s);
  }
  cp_scene_free(&probe);
}

// ------------------------------------------------------------- loading --

Test(robots, panda_and_allegro_load) {
  cp_scene s;
  char *t = robot_scene(PANDA, NULL, "\"contacts\": []");
  parse_ok(t, &s);
  free(t);
  const cp_chain *c = &s.manips[0];
  cr_assert_eq(c->n, 9, "7 arm joints and 2 fingers, got %d", c->n);
  cr_assert_eq(cp_chain_dofs(c), 8);
  int f1 = joint_index(c, "panda_finger_joint1"),
      f2 = joint_index(c, "panda_finger_joint2"),
      j7 = joint_index(c, "panda_joint7");
  // Both fingers hang off the hand, merged into link 7 by fixed joints.
  cr_assert_eq(cp_chain_parent(c, f1), j7);
  cr_assert_eq(cp_chain_parent(c, f2), j7);
  cr_assert(c->joints[f2].is_mimic && c->joints[f2].mimic_leader == f1);
  cr_assert_eq(c->joints[f2].mimic_multiplier, 1.0);
  // Several boxes per finger; a mesh on the arm links.
  const cp_link *lf = &c->joints[f1].link;
  cr_assert_eq(cp_link_shape_count(lf), 4);
  cr_assert_eq(c->joints[0].link.shape.type, CP_SHAPE_MESH);
  cr_assert_gt(c->joints[0].link.shape.mesh->n_triangles, 10);
  // panda_link7 carries the hand's mesh too (merged through panda_link8).
  cr_assert_eq(cp_link_shape_count(&c->joints[j7].link), 2);
  cr_assert_eq(s.n_warnings, 0);
  cp_scene_free(&s);

  t = robot_scene(PANDA_PRIM, NULL, "\"contacts\": []");
  parse_ok(t, &s);
  free(t);
  cr_assert_eq(s.manips[0].n, 9);
  cr_assert_eq(cp_link_shape_count(&s.manips[0].joints[0].link), 3,
               "panda_link1: a cylinder and two spheres");
  cp_scene_free(&s);

  t = robot_scene(ALLEGRO, NULL, "\"contacts\": []");
  parse_ok(t, &s);
  free(t);
  c = &s.manips[0];
  cr_assert_eq(c->n, 16);
  cr_assert_eq(cp_chain_dofs(c), 16);
  int roots = 0;
  for (int i = 0; i < c->n; ++i) {
    int p = cp_chain_parent(c, i);
    roots += p < 0;
    cr_assert(p < i);
  }
  cr_assert_eq(roots, 4, "four fingers on the palm");
  cp_scene_free(&s);
  mt_assert_no_leaks();
}

// ------------------------------------------------------------- dynamics --

Test(robots, holding_efforts_are_gravity_panda) {
  check_gravity(PANDA, NULL, 11);
}

Test(robots, holding_efforts_are_gravity_allegro_tilted) {
  check_gravity(ALLEGRO,
                "\"base\": {\"orientation\": [0.8, 0.36, 0.48, 0]}", 12);
}

// CRBA of a tree against RNEA with unit accelerations (a different
// algorithm), and point Jacobians against finite differences of the
// kinematics, on the Allegro hand in full joint space.
Test(robots, tree_mass_matrix_and_jacobian) {
  uint64_t rng = 5;
  cp_scene s;
  char *t = robot_scene(ALLEGRO, NULL, "\"contacts\": []");
  parse_ok(t, &s);
  free(t);
  cp_chain *c = &s.manips[0];
  int n = c->n;
  for (int i = 0; i < n; ++i)
    c->joints[i].position = cpt_uniform(&rng, c->joints[i].lower, c->joints[i].upper);
  cp_link_state st[16], sp[16], sm[16];
  double M[256], col[16], e[16], J[48];
  cp_chain_kinematics(c, st);
  cp_chain_mass_matrix(c, st, M);
  double mmax = 0, dmax = 0;
  for (int j = 0; j < n; ++j) {
    memset(e, 0, sizeof e);
    e[j] = 1;
    cp_chain_rnea(c, st, NULL, e, NULL, col);
    for (int i = 0; i < n; ++i) {
      mmax = fmax(mmax, fabs(M[i + 16 * j]));
      dmax = fmax(dmax, fabs(M[i + 16 * j] - col[i]));
    }
  }
  cr_assert(dmax <= 1e-12 * fmax(mmax, 1e-300), "CRBA vs RNEA: %g (max %g)", dmax, mmax);
  // Off-path entries vanish: joints of different fingers do not couple.
  cr_assert_eq(M[0 + 16 * 5], 0.0);
  // Fingertip point of each finger's last link.
  for (int k = 3; k < n; k += 4) {
    double p[3];
    cp_v3_copy(p, st[k].com);
    cp_chain_point_jacobian(c, st, k, p, J);
    double local[3], t3[3];
    cp_v3_sub(t3, p, st[k].o);
    cp_m3_tmulv(local, st[k].R, t3);
    for (int j = 0; j < n; ++j) {
      double x0 = c->joints[j].position, h = 1e-6, pp[3], pm[3], d[3];
      c->joints[j].position = x0 + h;
      cp_chain_kinematics(c, sp);
      c->joints[j].position = x0 - h;
      cp_chain_kinematics(c, sm);
      c->joints[j].position = x0;
      cp_m3_mulv(d, sp[k].R, local);
      cp_v3_add(pp, sp[k].o, d);
      cp_m3_mulv(d, sm[k].R, local);
      cp_v3_add(pm, sm[k].o, d);
      for (int a = 0; a < 3; ++a)
        cr_assert(fabs((pp[a] - pm[a]) / (2 * h) - J[3 * j + a]) < 1e-8,
                  "link %d joint %d", k, j);
    }
  }
  cp_scene_free(&s);
}

// ---------------------------------------------------------------- mimic --

static const char *mimic_urdf =
    "<robot name=\"g\">\n"
    "<link name=\"base\"/>\n"
    "<link name=\"a\"><inertial><mass value=\"0.5\"/><inertia ixx=\"1e-3\" "
    "ixy=\"0\" ixz=\"0\" iyy=\"1e-3\" iyz=\"0\" izz=\"1e-3\"/></inertial></link>\n"
    "<link name=\"b\"><inertial><mass value=\"0.25\"/><inertia ixx=\"1e-3\" "
    "ixy=\"0\" ixz=\"0\" iyy=\"1e-3\" iyz=\"0\" izz=\"1e-3\"/></inertial></link>\n"
    "<joint name=\"lead\" type=\"prismatic\"><parent link=\"base\"/><child "
    "link=\"a\"/><axis xyz=\"1 0 0\"/><limit lower=\"-1\" upper=\"1\" "
    "effort=\"10\" velocity=\"1\"/></joint>\n"
    "<joint name=\"follow\" type=\"prismatic\"><parent link=\"base\"/><child "
    "link=\"b\"/><axis xyz=\"0 1 0\"/><limit lower=\"-0.2\" upper=\"0.5\" "
    "effort=\"10\" velocity=\"1\"/>\n<mimic joint=\"lead\" multiplier=\"-2\" "
    "offset=\"0.1\"/></joint>\n"
    "</robot>\n";

Test(robots, mimic_follows_its_leader) {
  char *u = cpt_temp_file(mimic_urdf, ".urdf");
  char text[2048];
  snprintf(text, sizeof text,
           "{\"contacts\": [], \"gravity\": [0, -9.81, 0], \"manipulators\": "
           "[{\"name\": \"g\", \"urdf\": \"%s\", \"state\": {\"lead\": "
           "{\"position\": 0.1, \"velocity\": 0.3, \"acceleration\": 0.7}}}]}",
           u);
  cpt_solved s;
  cpt_solve_text(text, NULL, &s);
  const cp_chain *c = &s.scene.manips[0];
  // l_f = -2 l + 0.1, rates and accelerations times -2.
  cr_assert_float_eq(c->joints[1].position, -0.1, 1e-15);
  cr_assert_float_eq(c->joints[1].velocity, -0.6, 1e-15);
  cp_link_state st[2];
  cp_chain_kinematics(c, st);
  cr_assert_float_eq(st[1].o[1], -0.1, 1e-15);
  cr_assert_float_eq(st[1].v[1], -0.6, 1e-15);
  // One coordinate: H = m_a + 4 m_b; the effort holding it at 0.7 m/s^2
  // against gravity along -y: m_a 0.7 + m_b (-2)(-2 * 0.7 + 9.81).
  cr_assert_eq(s.sys.n_l, 1);
  cr_assert_float_eq(s.sys.H[0], 0.5 + 4 * 0.25, 1e-12);
  cr_assert_eq(s.res.info.status, CP_LCP_SOLVED);
  cr_assert_float_eq(s.res.effort[0], 0.5 * 0.7 + 0.25 * -2 * (-2 * 0.7 + 9.81),
                     1e-12);
  cpt_release(&s);
  // The follower is not in "state"; its limits are checked.
  snprintf(text, sizeof text,
           "{\"contacts\": [], \"manipulators\": [{\"name\": \"g\", \"urdf\": "
           "\"%s\", \"state\": {\"follow\": {\"position\": 0.1}}}]}", u);
  mt_parse_fails(text, "manipulators[0].state.follow", "mimics \"lead\"");
  snprintf(text, sizeof text,
           "{\"contacts\": [], \"manipulators\": [{\"name\": \"g\", \"urdf\": "
           "\"%s\", \"state\": {\"lead\": {\"position\": -0.3}}}]}", u);
  mt_parse_fails(text, "manipulators[0].state.lead.position",
                 "joint \"follow\" (it mimics \"lead\" at -0.3) is at position 0.7");
  unlink(u);
  free(u);
  mt_assert_no_leaks();
}

Test(robots, panda_fingers_move_together) {
  cp_scene s;
  char *t = robot_scene(PANDA, "\"state\": {\"panda_finger_joint1\": "
                        "{\"position\": 0.03, \"velocity\": 0.01}, "
                        "\"panda_joint4\": {\"position\": -1}}",
                        "\"contacts\": []");
  parse_ok(t, &s);
  free(t);
  const cp_chain *c = &s.manips[0];
  int f1 = joint_index(c, "panda_finger_joint1"),
      f2 = joint_index(c, "panda_finger_joint2");
  cp_link_state st[9];
  cp_chain_kinematics(c, st);
  // The fingers' origins are 2 x 0.03 apart, moving apart at 2 x 0.01.
  double d[3], v[3];
  cp_v3_sub(d, st[f1].o, st[f2].o);
  cp_v3_sub(v, st[f1].v, st[f2].v);
  cr_assert_float_eq(cp_v3_norm(d), 0.06, 1e-12);
  cr_assert_float_eq(cp_v3_norm(v), 0.02, 1e-12);
  // In the system the pair is one coordinate with the mass of both.
  cp_system sys;
  cp_error err;
  cr_assert_eq(cp_system_build(&s, &sys, &err), 0);
  int r = cp_system_joint_row(&sys, 0, f1);
  cr_assert_eq(r, cp_system_joint_row(&sys, 0, f2));
  cr_assert_float_eq(sys.H[r + (size_t)r * (size_t)sys.n_u], 0.03, 1e-12);
  cp_system_free(&sys);
  cp_scene_free(&s);
}

// ------------------------------------------------------ package:// paths --

#define J4 "\"state\": {\"panda_joint4\": {\"position\": -1}}"

Test(robots, packages_map_and_ros_package_path) {
  // Through ROS_PACKAGE_PATH only (the first folder lacks the package).
  char env[4096];
  snprintf(env, sizeof env, "/nonexistent:%s", cpt_data("robots"));
  setenv("ROS_PACKAGE_PATH", env, 1);
  char *urdf = dup_path(PANDA);
  char text[8192];
  snprintf(text, sizeof text,
           "{\"contacts\": [], \"manipulators\": [{\"name\": \"r\", \"urdf\": "
           "\"%s\", " J4 "}]}", urdf);
  cp_scene s;
  parse_ok(text, &s);
  cr_assert_eq(s.manips[0].joints[0].link.shape.type, CP_SHAPE_MESH);
  cp_scene_free(&s);
  // Not found anywhere: the URDF line of the <mesh> and the folders tried.
  setenv("ROS_PACKAGE_PATH", "/nonexistent/a:/nonexistent/b", 1);
  mt_parse_fails(text, "manipulators[0].urdf", "line 15: <mesh>: package "
                 "\"example-robot-data\" not found");
  mt_parse_fails(text, "manipulators[0].urdf",
                 "tried /nonexistent/a/example-robot-data, "
                 "/nonexistent/b/example-robot-data");
  unsetenv("ROS_PACKAGE_PATH");
  mt_parse_fails(text, "manipulators[0].urdf", "ROS_PACKAGE_PATH is not set");
  // A package folder without the mesh: the path tried.
  snprintf(text, sizeof text,
           "{\"packages\": {\"example-robot-data\": \"/tmp\"}, \"contacts\": [], "
           "\"manipulators\": [{\"name\": \"r\", \"urdf\": \"%s\"}]}", urdf);
  mt_parse_fails(text, "manipulators[0].urdf",
                 "cannot read mesh /tmp/robots/panda_description/meshes/"
                 "collision/link0.stl");
  // A relative package folder is relative to the scene file.
  snprintf(text, sizeof text,
           "{\"packages\": {\"example-robot-data\": \"example-robot-data\"}, "
           "\"contacts\": [], \"manipulators\": [{\"name\": \"r\", \"urdf\": "
           "\"example-robot-data/robots/panda_description/urdf/panda.urdf\", "
           J4 "}]}");
  cp_error err = {0};
  cr_assert_eq(cp_scene_parse(text, strlen(text), cpt_data("robots"), NULL, &s,
                              &err), 0, "%s: %s", err.where, err.msg);
  cp_scene_free(&s);
  mt_parse_fails("{\"packages\": [1]}", "packages", "expected an object");
  free(urdf);
  mt_assert_no_leaks();
}

Test(robots, cli_missing_package_exits_2) {
  char *urdf = dup_path(PANDA);
  char text[8192];
  snprintf(text, sizeof text,
           "{\"packages\": {\"other\": \"/tmp\"}, \"manipulators\": "
           "[{\"name\": \"r\", \"urdf\": \"%s\"}]}", urdf);
  char *f = cpt_temp_file(text, ".json");
  const char *argv[] = {"complan", "contacts", f, "--json", NULL};
  char *out, *err;
  unsetenv("ROS_PACKAGE_PATH");
  int rc = cpt_run(argv, &out, &err);
  cr_assert_eq(rc, 2, "exit %d: %s", rc, err);
  cr_assert_str_eq(out, "");
  cr_assert(strstr(err, "manipulators[0].urdf") && strstr(err, "line 15") &&
                strstr(err, "package \"example-robot-data\" not found"),
            "%s", err);
  free(out);
  free(err);
  unlink(f);
  free(f);
  free(urdf);
}

// -------------------------------------------------------- mesh files --

static const double CUBE_V[24] = {-.1, -.1, -.1, .1, -.1, -.1, .1, .1, -.1,
                                  -.1, .1,  -.1, -.1, -.1, .1, .1, -.1, .1,
                                  .1,  .1,  .1,  -.1, .1,  .1};
static const int CUBE_T[36] = {0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7,
                               0, 1, 5, 0, 5, 4, 1, 2, 6, 1, 6, 5,
                               2, 3, 7, 2, 7, 6, 3, 0, 4, 3, 4, 7};

static void write_file(const char *path, const void *data, size_t n) {
  FILE *f = fopen(path, "wb");
  cr_assert_not_null(f);
  cr_assert_eq(fwrite(data, 1, n, f), n);
  fclose(f);
}

// Appends printf-formatted text at buf + *w (cap bytes in all).
static void put(char *buf, size_t cap, size_t *w, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void put(char *buf, size_t cap, size_t *w, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(buf + *w, cap - *w, fmt, ap);
  va_end(ap);
  cr_assert(n >= 0 && (size_t)n < cap - *w, "buffer too small");
  *w += (size_t)n;
}

// The cube in every format assimp is asked to read for complan.
static char *cube_file(const char *ext) {
  char tmpl[] = "/tmp/cpmeshXXXXXX";
  int fd = mkstemp(tmpl);
  cr_assert(fd >= 0);
  close(fd);
  unlink(tmpl);
  char *path = malloc(strlen(tmpl) + strlen(ext) + 2);
  sprintf(path, "%s.%s", tmpl, ext);
  char buf[8192];
  size_t w = 0;
  if (!strcmp(ext, "stl")) { // binary
    unsigned char b[84 + 50 * 12] = {0};
    unsigned n = 12;
    memcpy(b + 80, &n, 4);
    for (int t = 0; t < 12; ++t)
      for (int k = 0; k < 3; ++k)
        for (int a = 0; a < 3; ++a) {
          float v = (float)CUBE_V[3 * CUBE_T[3 * t + k] + a];
          memcpy(b + 84 + 50 * t + 12 + 12 * k + 4 * a, &v, 4);
        }
    write_file(path, b, sizeof b);
    return path;
  }
  if (!strcmp(ext, "ascii.stl")) {
    put(buf, sizeof buf, &w, "solid cube\n");
    for (int t = 0; t < 12; ++t) {
      put(buf, sizeof buf, &w, "facet normal 0 0 0\nouter loop\n");
      for (int k = 0; k < 3; ++k) {
        const double *v = CUBE_V + 3 * CUBE_T[3 * t + k];
        put(buf, sizeof buf, &w, "vertex %g %g %g\n",
                              v[0], v[1], v[2]);
      }
      put(buf, sizeof buf, &w, "endloop\nendfacet\n");
    }
    put(buf, sizeof buf, &w, "endsolid cube\n");
  } else if (!strcmp(ext, "obj")) {
    for (int i = 0; i < 8; ++i)
      put(buf, sizeof buf, &w, "v %g %g %g\n",
                            CUBE_V[3 * i], CUBE_V[3 * i + 1], CUBE_V[3 * i + 2]);
    // Quads (triangulated on reading).
    static const int q[24] = {1, 4, 3, 2, 5, 6, 7, 8, 1, 2, 6, 5,
                              2, 3, 7, 6, 3, 4, 8, 7, 4, 1, 5, 8};
    for (int f = 0; f < 6; ++f)
      put(buf, sizeof buf, &w, "f %d %d %d %d\n",
                            q[4 * f], q[4 * f + 1], q[4 * f + 2], q[4 * f + 3]);
  } else { // dae: a cube translated by a child node (the root's is dropped)
    put(buf, sizeof buf, &w, "<?xml version=\"1.0\"?>\n<COLLADA xmlns=\"http://www.collada.org/"
        "2005/11/COLLADASchema\" version=\"1.4.1\">\n<asset><unit meter=\"1\"/>"
        "<up_axis>Z_UP</up_axis></asset>\n<library_geometries><geometry "
        "id=\"c\"><mesh><source id=\"p\"><float_array id=\"pa\" count=\"24\">");
    for (int i = 0; i < 24; ++i)
      put(buf, sizeof buf, &w, "%g ", CUBE_V[i]);
    put(buf, sizeof buf, &w, "</float_array><technique_common><accessor source=\"#pa\" count=\"8\" "
        "stride=\"3\"><param name=\"X\" type=\"float\"/><param name=\"Y\" "
        "type=\"float\"/><param name=\"Z\" type=\"float\"/></accessor>"
        "</technique_common></source><vertices id=\"v\"><input "
        "semantic=\"POSITION\" source=\"#p\"/></vertices><triangles "
        "count=\"12\"><input semantic=\"VERTEX\" source=\"#v\" offset=\"0\"/>"
        "<p>");
    for (int i = 0; i < 36; ++i)
      put(buf, sizeof buf, &w, "%d ", CUBE_T[i]);
    put(buf, sizeof buf, &w, "</p></triangles></mesh></geometry></library_geometries>\n"
        "<library_visual_scenes><visual_scene id=\"s\"><node id=\"n\">"
        "<translate>0 0 0.5</translate><instance_geometry url=\"#c\"/></node>"
        "</visual_scene></library_visual_scenes>\n<scene><instance_visual_scene "
        "url=\"#s\"/></scene></COLLADA>\n");
  }
  write_file(path, buf, w);
  return path;
}

Test(robots, mesh_files_stl_obj_dae) {
  const char *exts[] = {"stl", "ascii.stl", "obj", "dae"};
  for (int e = 0; e < 4; ++e) {
    char *path = cube_file(exts[e]);
    double scale[3] = {2, 1, 0.5};
    cp_mesh *m;
    cp_error err = {0};
    cr_assert_eq(cp_mesh_load(path, scale, &m, &err), 0, "%s: %s", exts[e], err.msg);
    cr_assert_eq(m->n_triangles, 12, "%s: %d triangles", exts[e], m->n_triangles);
    double dz = !strcmp(exts[e], "dae") ? 0.5 * 0.5 : 0; // the node's move
    double lo[3] = {-0.2, -0.1, -0.05 + dz}, hi[3] = {0.2, 0.1, 0.05 + dz};
    for (int k = 0; k < 3; ++k) {
      cr_assert_float_eq(m->lo[k], lo[k], 1e-7, "%s axis %d", exts[e], k);
      cr_assert_float_eq(m->hi[k], hi[k], 1e-7, "%s axis %d", exts[e], k);
    }
    cr_assert_eq(m->hull_n_planes, 6, "%s: hull of a box has 6 faces", exts[e]);
    cp_mesh_release(m);
    unlink(path);
    free(path);
  }
  cp_mesh *m;
  cp_error err = {0};
  cr_assert_eq(cp_mesh_load("/nonexistent/x.stl", NULL, &m, &err), -1);
  cr_assert(strstr(err.msg, "/nonexistent/x.stl"), "%s", err.msg);
  mt_assert_no_leaks();
}

// ------------------------------------------- mesh contacts, analytic --

static cp_mesh *cube_mesh(void) {
  cp_mesh *m;
  cp_error err;
  cr_assert_eq(cp_mesh_from_arrays(CUBE_V, 8, CUBE_T, 12, &m, &err), 0);
  return m;
}

// Asserts the contacts are exactly the four points (x_i, y_i, z) with
// normal +z and depth d (any order).
static void assert_square(const cp_collide_contact *c, int n, double x0,
                          double x1, double y0, double y1, double z, double d,
                          double tol) {
  cr_assert_eq(n, 4, "%d contacts", n);
  int seen = 0;
  for (int i = 0; i < n; ++i) {
    cr_assert(fabs(c[i].n[2] - 1) < 1e-9, "normal %g %g %g", c[i].n[0],
              c[i].n[1], c[i].n[2]);
    cr_assert(fabs(c[i].depth - d) < tol, "depth %g, want %g", c[i].depth, d);
    cr_assert(fabs(c[i].p[2] - z) < tol, "z %g, want %g", c[i].p[2], z);
    int ix = fabs(c[i].p[0] - x0) < tol ? 0 : fabs(c[i].p[0] - x1) < tol ? 1 : -1;
    int iy = fabs(c[i].p[1] - y0) < tol ? 0 : fabs(c[i].p[1] - y1) < tol ? 1 : -1;
    cr_assert(ix >= 0 && iy >= 0, "point %g %g", c[i].p[0], c[i].p[1]);
    seen |= 1 << (2 * ix + iy);
  }
  cr_assert_eq(seen, 15, "not the four corners");
}

Test(robots, mesh_contacts_analytic) {
  cp_mesh *m = cube_mesh();
  cp_shape cube = {.type = CP_SHAPE_MESH, .mesh = m};
  cp_shape plane = {.type = CP_SHAPE_PLANE, .normal = {0, 0, 1}};
  cp_shape box = {.type = CP_SHAPE_BOX, .size = {1, 1, 0.1}};
  cp_shape prim = {.type = CP_SHAPE_BOX, .size = {0.2, 0.2, 0.2}};
  cp_collide_contact c[CP_COLLIDE_MAX_POINTS], cb[CP_COLLIDE_MAX_POINTS];
  cp_error err;
  const double tol = 1e-8; // ODE's mesh tree works in single precision
  for (int i = 0; i < 3; ++i) {
    // Resting, penetrating by 5e-5, and a 5e-7 gap (within touch_tol).
    double pen = i == 0 ? 0 : i == 1 ? 5e-5 : -5e-7;
    cp_collide_object a = {&cube, {0.3, -0.2, 0.1 - pen}, {1, 0, 0, 0}};
    cp_collide_object p = {&plane, {0, 0, 0}, {1, 0, 0, 0}};
    int n = cp_collide_pair(&a, &p, NULL, c, CP_COLLIDE_MAX_POINTS, &err);
    assert_square(c, n, 0.2, 0.4, -0.3, -0.1, -pen / 2, pen, tol);
    // Like the box primitive at the same pose.
    cp_collide_object ab = {&prim, {0.3, -0.2, 0.1 - pen}, {1, 0, 0, 0}};
    int nb = cp_collide_pair(&ab, &p, NULL, cb, CP_COLLIDE_MAX_POINTS, &err);
    cr_assert_eq(nb, 4);
    for (int k = 0; k < 4; ++k)
      for (int a3 = 0; a3 < 3; ++a3)
        cr_assert(fabs(c[k].p[a3] - cb[k].p[a3]) < tol);
    // On a box's top face.
    cp_collide_object b = {&box, {0, 0, -0.05}, {1, 0, 0, 0}};
    n = cp_collide_pair(&a, &b, NULL, c, CP_COLLIDE_MAX_POINTS, &err);
    assert_square(c, n, 0.2, 0.4, -0.3, -0.1, -pen / 2, pen, tol);
    // On another cube mesh shifted by 0.05 in x: the overlap's corners.
    cp_collide_object a2 = {&cube, {0.35, -0.2, -0.1}, {1, 0, 0, 0}};
    n = cp_collide_pair(&a, &a2, NULL, c, CP_COLLIDE_MAX_POINTS, &err);
    assert_square(c, n, 0.25, 0.4, -0.3, -0.1, -pen / 2, pen, 1e-12);
  }
  // A gap of 2e-6 (beyond touch_tol 1e-6): nothing, for every partner.
  cp_collide_object a = {&cube, {0, 0, 0.1 + 2e-6}, {1, 0, 0, 0}};
  cp_collide_object p = {&plane, {0, 0, 0}, {1, 0, 0, 0}};
  cp_collide_object b = {&box, {0, 0, -0.05}, {1, 0, 0, 0}};
  cp_collide_object a2 = {&cube, {0.05, 0, -0.1}, {1, 0, 0, 0}};
  cr_assert_eq(cp_collide_pair(&a, &p, NULL, c, 16, &err), 0);
  cr_assert_eq(cp_collide_pair(&a, &b, NULL, c, 16, &err), 0);
  cr_assert_eq(cp_collide_pair(&a, &a2, NULL, c, 16, &err), 0);
  // Turned by 90 degrees about z the cube is the same square.
  double h = sqrt(0.5);
  cp_collide_object ar = {&cube, {0, 0, 0.1}, {h, 0, 0, h}};
  int n = cp_collide_pair(&ar, &p, NULL, c, 16, &err);
  assert_square(c, n, -0.1, 0.1, -0.1, 0.1, 0, 0, tol);
  // A sphere on the cube's top face: one point, its depth.
  cp_shape sph = {.type = CP_SHAPE_SPHERE, .radius = 0.05};
  cp_collide_object s = {&sph, {0.02, 0.03, 0.25 - 1e-5}, {1, 0, 0, 0}};
  cp_collide_object top = {&cube, {0, 0, 0.1}, {1, 0, 0, 0}};
  n = cp_collide_pair(&s, &top, NULL, c, 16, &err);
  cr_assert_eq(n, 1);
  cr_assert(fabs(c[0].depth - 1e-5) < tol && fabs(c[0].p[0] - 0.02) < tol &&
            fabs(c[0].p[2] - (0.2 - 5e-6)) < tol && fabs(c[0].n[2] - 1) < 1e-9,
            "%g at %g %g %g", c[0].depth, c[0].p[0], c[0].p[1], c[0].p[2]);
  cp_mesh_release(m);
}

// ------------------------------------------------ several shapes (JSON) --

Test(robots, json_link_with_several_shapes) {
  const char *text =
      "{\"bodies\": [{\"name\": \"floor\", \"fixed\": true, \"shape\": "
      "{\"type\": \"plane\", \"normal\": [0, 0, 1]}}], \"manipulators\": "
      "[{\"name\": \"m\", \"joints\": [{\"name\": \"j\", \"type\": "
      "\"prismatic\", \"axis\": [0, 0, 1], \"origin\": {\"position\": [0, 0, "
      "0.05]}, \"link\": {\"name\": \"l\", \"mass\": 1, \"inertia\": [[1, 0, "
      "0], [0, 1, 0], [0, 0, 1]], \"shapes\": [{\"shape\": {\"type\": "
      "\"box\", \"size\": [0.1, 0.1, 0.1]}, \"origin\": {\"position\": [-1, "
      "0, 0]}}, {\"shape\": {\"type\": \"sphere\", \"radius\": 0.05}, "
      "\"origin\": {\"position\": [1, 0, 0]}}]}}]}]}";
  cp_scene s;
  mt_parse_ok(text, 1, &s);
  cr_assert_eq(cp_link_shape_count(&s.manips[0].joints[0].link), 2);
  cr_assert_eq(s.n_contacts, 5, "4 box corners and the sphere");
  int sphere = 0;
  for (int j = 0; j < s.n_contacts; ++j) sphere += fabs(s.contacts[j].p[0] - 1) < 1e-9;
  cr_assert_eq(sphere, 1);
  cp_scene_free(&s);
  mt_parse_fails("{\"manipulators\": [{\"name\": \"m\", \"joints\": [{\"name\": "
                 "\"j\", \"type\": \"revolute\", \"axis\": [0, 0, 1], \"link\": "
                 "{\"name\": \"l\", \"mass\": 1, \"shapes\": [{\"shape\": "
                 "{\"type\": \"sphere\", \"radius\": 1}}]}}]}]}",
                 "manipulators[0].joints[0].link.inertia", "needs an \"inertia\"");
  mt_parse_fails("{\"manipulators\": [{\"name\": \"m\", \"joints\": [{\"name\": "
                 "\"j\", \"type\": \"revolute\", \"axis\": [0, 0, 1], \"link\": "
                 "{\"name\": \"l\", \"mass\": 1, \"shapes\": [{\"form\": 1}]}}]}]}",
                 "manipulators[0].joints[0].link.shapes[0].form", NULL);
}

// ------------------------------------------------------------ URDF habits --

Test(robots, urdf_habits) {
  // Revolute limits 0..0 (unset by an exporter): no limits, a warning.
  // A massless intermediate link is fine; a massless leaf is not.
  // (tests/data/robots/habits.urdf also has <gazebo> and <transmission>.)
  char text[1024];
  snprintf(text, sizeof text,
           "{\"contacts\": [], \"manipulators\": [{\"name\": \"h\", \"urdf\": "
           "\"%s\", \"state\": {\"j1\": {\"position\": 1.2}}}]}",
           cpt_data("robots/habits.urdf"));
  cp_scene s;
  parse_ok(text, &s);
  cr_assert_eq(s.manips[0].joints[0].has_limits, 0);
  cr_assert_eq(s.n_warnings, 1);
  cr_assert(strstr(s.warnings[0], "manipulators[0].urdf") &&
                strstr(s.warnings[0], "line 6") &&
                strstr(s.warnings[0], "no position limits"),
            "%s", s.warnings[0]);
  cp_scene_free(&s);
  const char *u2 =
      "<robot name=\"h\">\n<link name=\"base\"><inertial><mass value=\"0\"/>"
      "<inertia ixx=\"0\" ixy=\"0\" ixz=\"0\" iyy=\"0\" iyz=\"0\" izz=\"0\"/>"
      "</inertial></link>\n<link name=\"a\"/>\n"
      "<joint name=\"j1\" type=\"continuous\"><parent link=\"base\"/><child "
      "link=\"a\"/></joint>\n</robot>\n";
  char *f = cpt_temp_file(u2, ".urdf");
  snprintf(text, sizeof text,
           "{\"contacts\": [], \"manipulators\": [{\"name\": \"h\", \"urdf\": "
           "\"%s\"}]}", f);
  mt_parse_fails(text, "manipulators[0].urdf", "line 3: <link name=\"a\">: "
                 "joint \"j1\" moves no mass");
  unlink(f);
  free(f);
}

// ------------------------------------------------------------- the grasp --

// The Panda (finger meshes) pointing down with its fingers 2 x 0.02 apart;
// a box between the pads, its faces through each pad's innermost vertex.
typedef struct grasp {
  char *text;
  double pl[3], pr[3], y[3];
} grasp;

static const char *ARM =
    "\"panda_joint1\": {\"position\": 0, \"acceleration\": 0}, "
    "\"panda_joint2\": {\"position\": 0, \"acceleration\": 0}, "
    "\"panda_joint3\": {\"position\": 0, \"acceleration\": 0}, "
    "\"panda_joint4\": {\"position\": -1.5707963267948966, \"acceleration\": 0}, "
    "\"panda_joint5\": {\"position\": 0, \"acceleration\": 0}, "
    "\"panda_joint6\": {\"position\": 1.5707963267948966, \"acceleration\": 0}, "
    "\"panda_joint7\": {\"position\": 0.7853981633974483, \"acceleration\": 0}";

static void make_grasp(grasp *g, double finger_effort, double squeeze) {
  char manip[2048];
  snprintf(manip, sizeof manip,
           "\"state\": {%s, \"panda_finger_joint1\": {\"position\": 0.02}}", ARM);
  char *t = robot_scene(PANDA_MESH_FINGERS, manip, "\"contacts\": []");
  cp_scene s;
  parse_ok(t, &s);
  free(t);
  const cp_chain *c = &s.manips[0];
  int f1 = joint_index(c, "panda_finger_joint1"), f2 = f1 + 1;
  cp_link_state st[9];
  cp_chain_kinematics(c, st);
  // Innermost pad vertex of each finger (its link frame: the mesh's; the
  // right finger's mesh is turned by pi about z).
  const cp_mesh *m = c->joints[f1].link.shape.mesh;
  int vmin = 0;
  for (int i = 1; i < m->n_vertices; ++i)
    if (m->vertices[3 * i + 1] < m->vertices[3 * vmin + 1]) vmin = i;
  const double *v = m->vertices + 3 * vmin;
  double vl[3] = {v[0], v[1], v[2]}, vr[3] = {-v[0], -v[1], v[2]}, d[3];
  cp_m3_mulv(d, st[f1].R, vl);
  cp_v3_add(g->pl, st[f1].o, d);
  cp_m3_mulv(d, st[f2].R, vr);
  cp_v3_add(g->pr, st[f2].o, d);
  for (int k = 0; k < 3; ++k) g->y[k] = st[f1].R[3 * k + 1]; // hand y axis
  // Box centre midway, axes the hand's, width the pads' distance along y.
  double ctr[3], w = 0;
  for (int k = 0; k < 3; ++k) ctr[k] = 0.5 * (g->pl[k] + g->pr[k]);
  for (int k = 0; k < 3; ++k) w += (g->pl[k] - g->pr[k]) * g->y[k];
  w += 2 * squeeze; // into each pad
  // Hand frame quaternion: R of the finger link (prismatic: the hand's).
  const double *R = st[f1].R;
  double q[4];
  q[0] = 0.5 * sqrt(fmax(0, 1 + R[0] + R[4] + R[8]));
  q[1] = copysign(0.5 * sqrt(fmax(0, 1 + R[0] - R[4] - R[8])), R[7] - R[5]);
  q[2] = copysign(0.5 * sqrt(fmax(0, 1 - R[0] + R[4] - R[8])), R[2] - R[6]);
  q[3] = copysign(0.5 * sqrt(fmax(0, 1 - R[0] - R[4] + R[8])), R[3] - R[1]);
  cp_scene_free(&s);
  char extra[4096], top[2048];
  snprintf(extra, sizeof extra,
           "\"state\": {%s, \"panda_finger_joint1\": {\"position\": 0.02, "
           "\"effort\": %.17g}}", ARM, finger_effort);
  snprintf(top, sizeof top,
           "\"bodies\": [{\"name\": \"box\", \"mass\": 0.1, \"shape\": "
           "{\"type\": \"box\", \"size\": [0.03, %.17g, 0.03]}, \"position\": "
           "[%.17g, %.17g, %.17g], \"orientation\": [%.17g, %.17g, %.17g, "
           "%.17g]}], \"friction\": {\"default\": 0.5}",
           w, ctr[0], ctr[1], ctr[2], q[0], q[1], q[2], q[3]);
  g->text = robot_scene(PANDA_MESH_FINGERS, extra, top);
}

Test(robots, panda_fingers_grasp_a_box) {
  grasp g;
  make_grasp(&g, -20, 0); // closing: 20 N on the pair (about 10 N a pad)
  cpt_solved s;
  cpt_solve_text(g.text, NULL, &s);
  // One contact on each finger's mesh, at its innermost vertex, normals
  // along the hand's y axis pushing the box away from each finger.
  cr_assert_eq(s.scene.n_contacts, 2, "%d contacts", s.scene.n_contacts);
  int seen = 0;
  for (int j = 0; j < 2; ++j) {
    const cp_contact *c = &s.scene.contacts[j];
    char an[128], bn[128];
    cp_scene_ref_name(&s.scene, c->a, an, sizeof an);
    cp_scene_ref_name(&s.scene, c->b, bn, sizeof bn);
    cr_assert_str_eq(an, "box");
    int left = !strcmp(bn, "r/panda_leftfinger");
    cr_assert(left || !strcmp(bn, "r/panda_rightfinger"), "%s", bn);
    seen |= 1 << left;
    const double *p = left ? g.pl : g.pr;
    double d[3];
    cp_v3_sub(d, c->p, p);
    cr_assert(cp_v3_norm(d) < 1e-6, "contact %g mm off", 1e3 * cp_v3_norm(d));
    cr_assert(fabs(cp_v3_dot(c->n, g.y) - (left ? -1 : 1)) < 1e-6);
  }
  cr_assert_eq(seen, 3);
  // Held: the box does not accelerate; each pad presses with ~10 N.
  cr_assert_eq(s.res.info.status, CP_LCP_SOLVED);
  int ob = 6 * s.sys.body_obj[0];
  for (int k = 0; k < 6; ++k)
    cr_assert(fabs(s.res.udot[ob + k]) < 1e-6, "box accel %g", s.res.udot[ob + k]);
  for (int j = 0; j < 2; ++j) {
    cr_assert_eq(s.res.outcome[j], CP_OUTCOME_ROLLING);
    cr_assert(s.res.force[3 * j] > 5, "normal force %g", s.res.force[3 * j]);
  }
  cpt_assert_newton_euler(&s, 1e-6);
  cpt_release(&s);
  free(g.text);
  // Too weak a squeeze (friction 0.5 x 0.25 N a pad < half the weight): it
  // slips and falls.
  make_grasp(&g, -0.5, 0);
  cpt_solve_text(g.text, NULL, &s);
  cr_assert_eq(s.res.info.status, CP_LCP_SOLVED);
  double vz = s.res.udot[6 * s.sys.body_obj[0] + 2];
  cr_assert(vz < -1, "box accel z %g", vz);
  cpt_release(&s);
  free(g.text);
}

// ----------------------------------------------------- linear-time URDF --

// A chain of nf fixed joints between two revolute joints, as URDF text.
static char *long_urdf(int nf, size_t *len) {
  size_t cap = (size_t)nf * 400 + 4096, w = 0;
  char *t = malloc(cap);
  w += (size_t)snprintf(t + w, cap - w, "<robot name=\"big\">\n<link name=\"base\"/>\n");
  for (int i = 0; i <= nf + 1; ++i)
    w += (size_t)snprintf(t + w, cap - w,
                          "<link name=\"l%d\"><inertial><mass value=\"0.001\"/>"
                          "<inertia ixx=\"1e-6\" ixy=\"0\" ixz=\"0\" iyy=\"1e-6\" "
                          "iyz=\"0\" izz=\"1e-6\"/></inertial></link>\n", i);
  w += (size_t)snprintf(t + w, cap - w,
                        "<joint name=\"r0\" type=\"continuous\"><parent "
                        "link=\"base\"/><child link=\"l0\"/></joint>\n");
  for (int i = 1; i <= nf; ++i)
    w += (size_t)snprintf(t + w, cap - w,
                          "<joint name=\"f%d\" type=\"fixed\"><parent link=\"l%d\"/>"
                          "<child link=\"l%d\"/><origin xyz=\"0 0 0.001\"/></joint>\n",
                          i, i - 1, i);
  w += (size_t)snprintf(t + w, cap - w,
                        "<joint name=\"r1\" type=\"continuous\"><parent "
                        "link=\"l%d\"/><child link=\"l%d\"/></joint>\n</robot>\n",
                        nf, nf + 1);
  *len = w;
  return t;
}

// Parses the chain of nf fixed joints, checks the merge, returns the thread
// CPU seconds of the parse.
static double parse_long_urdf(int nf) {
  size_t w = 0;
  char *t = long_urdf(nf, &w);
  cp_urdf_model m;
  cp_error err = {0};
  const double t0 = cp_clock_thread_cpu();
  cr_assert_eq(cp_urdf_parse(t, w, &m, &err), 0, "%s: %s", err.where, err.msg);
  const double sec = cp_clock_thread_cpu() - t0;
  cr_assert_eq(m.chain.n, 2);
  cr_assert_float_eq(m.chain.joints[0].link.mass, 0.001 * (nf + 1), 1e-9);
  cr_assert_float_eq(m.chain.joints[1].origin_pos[2], 0.001 * nf, 1e-9);
  cp_urdf_free(&m);
  free(t);
  return sec;
}

// 50 000 fixed joints (issue 12 measured 95 s for this with quadratic name
// lookups): every link's mass merged, and the reader's cost linear in the
// file. The check is a ratio of thread CPU times taken in this run (10x the
// joints; the best of three runs of each size), so it does not depend on
// the machine's speed. Quadratic lookups give about 100; linear reading
// measures 9-12 (release and ASan builds; a single first run of each size
// measured 26, its fresh memory's page faults, hence the best of three);
// the bound 60 leaves a factor 5 for a loaded machine. No Criterion .timeout (it leaks under
// LeakSanitizer); meson's timeout bounds the run.
Test(robots, large_urdf_reads_in_linear_time) {
  double small = INFINITY, large = INFINITY;
  for (int k = 0; k < 3; ++k) {
    small = fmin(small, parse_long_urdf(5000));
    large = fmin(large, parse_long_urdf(50000));
  }
  const double ratio = large / fmax(small, 1e-4); // 1e-4: the clock's useful resolution
  cr_assert_lt(ratio, 60.0, "50 000 joints took %.4f s, 5 000 took %.4f s: ratio %.1f, not linear",
               large, small, ratio);
}

// The grasp's mesh contacts through the command line, like any others.
Test(robots, cli_contacts_lists_mesh_contacts) {
  grasp g;
  make_grasp(&g, -20, 0);
  char *f = cpt_temp_file(g.text, ".json");
  const char *argv[] = {"complan", "contacts", f, "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  json_t *list = json_object_get(doc, "contacts");
  cr_assert_eq(json_array_size(list), 2);
  for (size_t j = 0; j < 2; ++j) {
    json_t *c = json_array_get(list, j);
    cr_assert_str_eq(json_string_value(json_object_get(c, "a")), "box");
    const char *b = json_string_value(json_object_get(c, "b"));
    cr_assert(!strcmp(b, "r/panda_leftfinger") || !strcmp(b, "r/panda_rightfinger"), "%s", b);
  }
  json_decref(doc);
  unlink(f);
  free(f);
  free(g.text);
}

// A deep copy shares the meshes and outlives the original.
Test(robots, chain_copy_keeps_tree_mimic_and_meshes) {
  cp_scene s;
  char *t = robot_scene(PANDA, NULL, "\"contacts\": []");
  parse_ok(t, &s);
  free(t);
  cp_chain c;
  cr_assert_eq(cp_chain_copy(&c, &s.manips[0]), 0);
  cp_link_state a[9], b[9];
  cp_chain_kinematics(&s.manips[0], a);
  const cp_mesh *m = s.manips[0].joints[0].link.shape.mesh;
  int ntri = m->n_triangles;
  cp_scene_free(&s);
  cp_chain_kinematics(&c, b);
  cr_assert_eq(memcmp(a, b, sizeof a), 0);
  cr_assert_eq(c.joints[0].link.shape.mesh->n_triangles, ntri);
  cr_assert_eq(cp_link_shape_count(&c.joints[7].link), 4);
  cr_assert(c.joints[8].is_mimic && c.parent[8] == 6);
  cp_chain_free(&c);
  mt_assert_no_leaks();
}

// Mesh contacts keep the scene's tolerances: 0.5 mm into each pad is deeper
// than penetration_tolerance (0.1 mm): an error naming the pair.
Test(robots, mesh_penetration_is_an_error) {
  grasp g;
  make_grasp(&g, 0, 5e-4);
  mt_parse_fails(g.text, "contacts", "\"box\" and \"r/panda_");
  mt_parse_fails(g.text, "contacts", "exceeds the penetration tolerance");
  free(g.text);
}
