// Mesh links (issue 20, item 7): every collision shape of every link of a
// six-joint arm with mesh links (tests/data/robots/ur_like: the UR5's
// kinematics, STL and OBJ prisms, a box beside a mesh on two links) gives
// contacts with bodies and planes. The expected answers are computed here
// independently of the library: the mesh files are read by this test's own
// STL and OBJ readers, the link poses by its own forward kinematics of the
// URDF's numbers (written out below), and the lowest vertex of each link
// against a table gives the depth the contacts must report.
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "models/chain.h"
#include "models/collide.h"
#include "models/contactgen.h"
#include "models/mesh.h"
#include "models/scene.h"
#include "models/vec3.h"
#include "tests/support.h"

#define UR "robots/ur_like/urdf/ur_like.urdf"
#define NJ 6

// ------------------------------------------------- the arm, written out --

// Joints of ur_like.urdf: origin xyz, rpy, axis (all revolute).
static const double J_XYZ[NJ][3] = {{0, 0, 0.089159}, {0, 0.13585, 0},
                                    {0, -0.1197, 0.425}, {0, 0, 0.39225},
                                    {0, 0.093, 0},       {0, 0, 0.09465}};
static const double J_RPY[NJ][3] = {{0, 0, 0}, {0, 1.570796326794897, 0},
                                    {0, 0, 0}, {0, 1.570796326794897, 0},
                                    {0, 0, 0}, {0, 0, 0}};
static const double J_AXIS[NJ][3] = {{0, 0, 1}, {0, 1, 0}, {0, 1, 0},
                                     {0, 1, 0}, {0, 0, 1}, {0, 1, 0}};
static const char *LINK[NJ] = {"shoulder_link", "upper_arm_link",
                               "forearm_link",  "wrist_1_link",
                               "wrist_2_link",  "wrist_3_link"};

// Collision shapes per link: a mesh file or a box (full sizes), at a
// position in the link frame, optionally through the fixed joint to
// ee_link (origin (0, 0.0823, 0), yaw pi/2).
typedef struct tshape {
  int link;
  const char *mesh; // NULL: box
  double size[3];
  double pos[3];
  int in_ee;
} tshape;

static const tshape SHAPES[] = {
    {0, "shoulder.stl", {0}, {0, 0, 0}, 0},
    {1, "upperarm.obj", {0}, {0, 0, 0}, 0},
    {1, NULL, {0.1, 0.12, 0.1}, {0, -0.06, 0.425}, 0},
    {2, "forearm.obj", {0}, {0, 0, 0}, 0},
    {3, "wrist1.stl", {0}, {0, 0.06, 0}, 0},
    {4, "wrist2.stl", {0}, {0, 0, 0.06}, 0},
    {5, "wrist3.stl", {0}, {0, 0.05, 0}, 0},
    {5, NULL, {0.01, 0.01, 0.01}, {-0.01, 0, 0}, 1},
};
#define NSHAPES ((int)(sizeof SHAPES / sizeof SHAPES[0]))

// URDF rpy: R = Rz(yaw) Ry(pitch) Rx(roll).
static void rpy(double *R, const double *a) {
  double cr = cos(a[0]), sr = sin(a[0]), cp = cos(a[1]), sp = sin(a[1]),
         cy = cos(a[2]), sy = sin(a[2]);
  double M[9] = {cy * cp, cy * sp * sr - sy * cr, cy * sp * cr + sy * sr,
                 sy * cp, sy * sp * sr + cy * cr, sy * sp * cr - cy * sr,
                 -sp,     cp * sr,                cp * cr};
  memcpy(R, M, sizeof M);
}

// Rotation by angle t about the unit axis u (Rodrigues).
static void axis_angle(double *R, const double *u, double t) {
  double c = cos(t), s = sin(t), C = 1 - c, x = u[0], y = u[1], z = u[2];
  double M[9] = {c + x * x * C,     x * y * C - z * s, x * z * C + y * s,
                 y * x * C + z * s, c + y * y * C,     y * z * C - x * s,
                 z * x * C - y * s, z * y * C + x * s, c + z * z * C};
  memcpy(R, M, sizeof M);
}

// Link frames (origin o, rotation R) at joint positions q, base at the
// world origin.
static void fk(const double *q, double o[NJ][3], double R[NJ][9]) {
  double Rc[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, oc[3] = {0, 0, 0}, T[9], d[3];
  for (int j = 0; j < NJ; ++j) {
    cp_m3_mulv(d, Rc, J_XYZ[j]);
    for (int i = 0; i < 3; ++i) oc[i] += d[i];
    rpy(T, J_RPY[j]);
    cp_m3_mul(Rc, Rc, T);
    axis_angle(T, J_AXIS[j], q[j]);
    cp_m3_mul(Rc, Rc, T);
    memcpy(o[j], oc, sizeof oc);
    memcpy(R[j], Rc, sizeof Rc);
  }
}

// ------------------------------------------------- mesh files, read here --

// Vertices of a binary STL or an OBJ file (as floats are stored: the STL's
// single precision values widened exactly). Returns the count; *v malloc'd.
static int read_vertices(const char *name, double **v) {
  char rel[256];
  snprintf(rel, sizeof rel, "robots/ur_like/meshes/%s", name);
  size_t len;
  char *data = cpt_read_file(cpt_data(rel), &len);
  cr_assert_not_null(data, "%s", rel);
  int n = 0;
  if (strstr(name, ".stl")) {
    unsigned nt;
    cr_assert(len >= 84);
    memcpy(&nt, data + 80, 4);
    cr_assert_eq(len, 84 + 50 * (size_t)nt, "%s: not a binary STL", rel);
    *v = malloc(sizeof(double) * 9 * nt);
    for (unsigned t = 0; t < nt; ++t)
      for (int k = 0; k < 9; ++k) {
        float f;
        memcpy(&f, data + 84 + 50 * t + 12 + 4 * k, 4);
        (*v)[9 * t + (unsigned)k] = f; // vertex k / 3, coordinate k % 3
      }
    n = 3 * (int)nt;
  } else {
    *v = malloc(sizeof(double) * 3 * (len / 6 + 1));
    for (char *line = strtok(data, "\n"); line; line = strtok(NULL, "\n"))
      if (line[0] == 'v' && line[1] == ' ') {
        double *p = *v + 3 * n;
        cr_assert_eq(sscanf(line + 2, "%lf %lf %lf", p, p + 1, p + 2), 3);
        ++n;
      }
  }
  free(data);
  return n;
}

// World vertices of shape s at link frames (o, R): *v malloc'd, count
// returned.
static int shape_world(const tshape *s, double o[NJ][3], double R[NJ][9],
                       double **v) {
  int n;
  if (s->mesh) {
    n = read_vertices(s->mesh, v);
  } else {
    n = 8;
    *v = malloc(sizeof(double) * 24);
    for (int c = 0; c < 8; ++c)
      for (int i = 0; i < 3; ++i)
        (*v)[3 * c + i] = ((c >> i) & 1 ? 0.5 : -0.5) * s->size[i];
  }
  double Re[9], ee[3] = {0, 0.0823, 0}, yaw[3] = {0, 0, 1.570796326794897};
  rpy(Re, yaw);
  for (int k = 0; k < n; ++k) {
    double *p = *v + 3 * k, t[3];
    for (int i = 0; i < 3; ++i) p[i] += s->pos[i];
    if (s->in_ee) { // ee_link frame -> wrist_3_link frame
      cp_m3_mulv(t, Re, p);
      for (int i = 0; i < 3; ++i) p[i] = t[i] + ee[i];
    }
    cp_m3_mulv(t, R[s->link], p);
    for (int i = 0; i < 3; ++i) p[i] = t[i] + o[s->link][i];
  }
  return n;
}

// Lowest world z of each link's shapes at q; also the lowest vertices of
// link `which` (within 1e-9 m of its lowest) into low[] (count *nlow, at
// most 64).
static void lowest(const double *q, double zmin[NJ], int which,
                   double low[64][3], int *nlow) {
  double o[NJ][3], R[NJ][9];
  fk(q, o, R);
  for (int l = 0; l < NJ; ++l) zmin[l] = INFINITY;
  double *vs[NSHAPES];
  int ns[NSHAPES];
  for (int s = 0; s < NSHAPES; ++s) {
    ns[s] = shape_world(&SHAPES[s], o, R, &vs[s]);
    for (int k = 0; k < ns[s]; ++k)
      zmin[SHAPES[s].link] = fmin(zmin[SHAPES[s].link], vs[s][3 * k + 2]);
  }
  if (nlow) *nlow = 0;
  for (int s = 0; s < NSHAPES && nlow; ++s) {
    if (SHAPES[s].link != which) continue;
    for (int k = 0; k < ns[s]; ++k) {
      const double *p = vs[s] + 3 * k;
      if (p[2] > zmin[which] + 1e-9) continue;
      int dup = 0;
      for (int i = 0; i < *nlow && !dup; ++i)
        dup = fabs(low[i][0] - p[0]) + fabs(low[i][1] - p[1]) < 1e-9;
      if (!dup && *nlow < 64) memcpy(low[(*nlow)++], p, sizeof low[0]);
    }
  }
  for (int s = 0; s < NSHAPES; ++s) free(vs[s]);
}

// ------------------------------------------------------------- scenes --

static const char *JOINT[NJ] = {"shoulder_pan_joint", "shoulder_lift_joint",
                                "elbow_joint",        "wrist_1_joint",
                                "wrist_2_joint",      "wrist_3_joint"};

// Scene text: the arm at q and one fixed body (JSON text of its "shape",
// "position"), penetration tolerance pen.
static char *arm_scene(const double *q, const char *table, double pen) {
  char state[2048];
  size_t w = 0;
  for (int j = 0; j < NJ; ++j)
    w += (size_t)snprintf(state + w, sizeof state - w,
                          "%s\"%s\": {\"position\": %.17g}", j ? ", " : "",
                          JOINT[j], q[j]);
  char *t = malloc(8192);
  snprintf(t, 8192,
           "{\"penetration_tolerance\": %.17g, \"bodies\": [{\"name\": "
           "\"table\", \"fixed\": true, %s}], \"manipulators\": [{\"name\": "
           "\"ur\", \"urdf\": \"%s\", \"state\": {%s}}]}",
           pen, table, cpt_data(UR), state);
  return t;
}

static void parse(const char *text, cp_scene *s) {
  cp_error err = {0};
  cr_assert_eq(cp_scene_parse(text, strlen(text), NULL, NULL, s, &err), 0,
               "%s: %s", err.where, err.msg);
}

// The library's link frames agree with this test's kinematics (so that a
// disagreement below is about shapes, not poses).
static void same_frames(const cp_scene *s, const double *q) {
  double o[NJ][3], R[NJ][9];
  fk(q, o, R);
  cp_link_state st[NJ];
  cr_assert_eq(s->manips[0].n, NJ);
  cp_chain_kinematics(&s->manips[0], st);
  for (int l = 0; l < NJ; ++l)
    for (int i = 0; i < 9; ++i) {
      cr_assert(fabs(st[l].R[i] - R[l][i]) < 1e-12, "link %d R", l);
      if (i < 3) cr_assert(fabs(st[l].o[i] - o[l][i]) < 1e-12, "link %d o", l);
    }
}

// Deepest contact of link l with the table (-INFINITY: none) and the
// number of its contacts.
static double link_depth(const cp_scene *s, int l, int *count) {
  double d = -INFINITY;
  *count = 0;
  for (int j = 0; j < s->n_contacts; ++j) {
    const cp_contact *c = &s->contacts[j];
    if (c->a.manip != 0 || c->a.link != l) continue;
    cr_assert_eq(c->b.body, 0, "only the table is in contact");
    ++*count;
    d = fmax(d, c->depth);
  }
  return d;
}

// Wrist down over a table box: the UR5's "wrist touching the table" pose.
static const double WRIST_DOWN[NJ] = {0, -1.5707963267948966,
                                      1.5707963267948966, 0,
                                      -1.5707963267948966, 0.3};

// The wrist's lowest vertices touch a box table (gap 0), press into it by
// less than the tolerance, or stand off within the touch tolerance: the
// wrist's contacts are listed with that depth, at those vertices (points
// midway between the surfaces), normal +z; beyond the touch tolerance
// there are none.
Test(mesh_links, wrist_touches_box_table) {
  double zmin[NJ], low[64][3];
  int nlow;
  lowest(WRIST_DOWN, zmin, 5, low, &nlow);
  cr_assert(nlow >= 1);
  const double depths[] = {0, 5e-5, -5e-7, -3e-6};
  for (int c = 0; c < 4; ++c) {
    const double d = depths[c], top = zmin[5] + d;
    char table[512];
    snprintf(table, sizeof table,
             "\"shape\": {\"type\": \"box\", \"size\": [0.3, 0.3, 0.1]}, "
             "\"position\": [%.17g, %.17g, %.17g]",
             low[0][0], low[0][1], top - 0.05);
    char *text = arm_scene(WRIST_DOWN, table, 1e-4);
    cp_scene s;
    parse(text, &s);
    free(text);
    if (c == 0) same_frames(&s, WRIST_DOWN);
    int n;
    double got = link_depth(&s, 5, &n);
    if (d < -1e-6) {
      cr_assert_eq(s.n_contacts, 0, "gap %g: %d contacts", -d, s.n_contacts);
    } else {
      cr_assert_eq(s.n_contacts, n, "only the wrist touches");
      cr_assert_eq(n, nlow, "depth %g: %d contacts, %d lowest vertices", d, n,
                   nlow);
      cr_assert(fabs(got - d) < 1e-8, "depth %g reported %g", d, got);
      for (int j = 0; j < n; ++j) {
        const cp_contact *ct = &s.contacts[j];
        cr_assert(fabs(ct->n[2] - 1) < 1e-12);
        cr_assert(fabs(ct->p[2] - (top - 0.5 * ct->depth)) < 1e-8);
        int at = 0;
        for (int i = 0; i < nlow && !at; ++i)
          at = hypot(ct->p[0] - low[i][0], ct->p[1] - low[i][1]) < 1e-8;
        cr_assert(at, "contact %d at [%g, %g] is not a lowest vertex", j,
                  ct->p[0], ct->p[1]);
      }
    }
    cp_scene_free(&s);
  }
}

// Random poses over a table plane at a random height through the arm
// (penetration tolerance 1 m so that deep overlaps are listed, not
// refused): every link whose lowest vertex (of any of its shapes: meshes,
// and the boxes of the upper arm and of ee_link on the wrist) is under the
// plane has contacts whose deepest is the plane's height minus that
// vertex's; every link above it by more than the touch tolerance has none.
Test(mesh_links, every_shape_of_every_link_on_a_plane) {
  uint64_t rng = 20;
  int seen[NJ] = {0};
  for (int trial = 0; trial < 40; ++trial) {
    double q[NJ], zmin[NJ];
    for (int j = 0; j < NJ; ++j) q[j] = cpt_uniform(&rng, -3.1, 3.1);
    lowest(q, zmin, -1, NULL, NULL);
    double lo = INFINITY, hi = -INFINITY;
    for (int l = 0; l < NJ; ++l) lo = fmin(lo, zmin[l]), hi = fmax(hi, zmin[l]);
    const double zp = cpt_uniform(&rng, lo, hi);
    char table[256];
    snprintf(table, sizeof table,
             "\"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1], "
             "\"offset\": %.17g}",
             zp);
    char *text = arm_scene(q, table, 1.0);
    cp_scene s;
    parse(text, &s);
    free(text);
    for (int l = 0; l < NJ; ++l) {
      int n;
      double got = link_depth(&s, l, &n);
      if (zmin[l] < zp) {
        cr_assert(n > 0, "trial %d: %s is %g m under the plane, no contact",
                  trial, LINK[l], zp - zmin[l]);
        cr_assert(fabs(got - (zp - zmin[l])) < 1e-7,
                  "trial %d: %s: depth %.9g, its lowest vertex %.9g", trial,
                  LINK[l], got, zp - zmin[l]);
        seen[l] = 1;
      } else if (zmin[l] > zp + 2e-6) {
        cr_assert_eq(n, 0, "trial %d: %s is above the plane", trial, LINK[l]);
      }
    }
    cp_scene_free(&s);
  }
  for (int l = 0; l < NJ; ++l) cr_assert(seen[l], "%s never dipped", LINK[l]);
}

// The same through `complan contacts --json`: the wrist 50 um into the box
// table, its contacts named after the link.
Test(mesh_links, cli_lists_wrist_contacts) {
  double zmin[NJ], low[64][3];
  int nlow;
  lowest(WRIST_DOWN, zmin, 5, low, &nlow);
  char table[512];
  snprintf(table, sizeof table,
           "\"shape\": {\"type\": \"box\", \"size\": [0.3, 0.3, 0.1]}, "
           "\"position\": [%.17g, %.17g, %.17g]",
           low[0][0], low[0][1], zmin[5] + 5e-5 - 0.05);
  char *text = arm_scene(WRIST_DOWN, table, 1e-4);
  char *f = cpt_temp_file(text, ".json");
  free(text);
  const char *argv[] = {"complan", "contacts", f, "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  json_t *list = json_object_get(doc, "contacts");
  cr_assert_eq((int)json_array_size(list), nlow);
  for (size_t j = 0; j < json_array_size(list); ++j) {
    json_t *c = json_array_get(list, j);
    cr_assert_str_eq(json_string_value(json_object_get(c, "a")),
                     "ur/wrist_3_link");
    cr_assert_str_eq(json_string_value(json_object_get(c, "b")), "table");
    cr_assert(fabs(json_real_value(json_object_get(c, "depth")) - 5e-5) < 1e-8);
  }
  json_decref(doc);
  unlink(f);
  free(f);
}

// A mesh bar (2 x 2 x 20 cm) standing 7 mm beside a box, collided with a
// touch tolerance of 1.4 cm (a simulator's look-ahead at 1 m/s and 5 ms
// steps): the contacts are the facing faces' points at a gap of 7 mm,
// normal along x. (Shifting the box by the whole tolerance buried the bar's
// side faces in it, and ODE reported them as overlaps along +-y.)
Test(mesh_links, mesh_beside_box_with_a_wide_touch_tolerance) {
  static const double V[24] = {-0.01, -0.01, 0,    0.01, -0.01, 0,
                               0.01,  0.01,  0,    -0.01, 0.01, 0,
                               -0.01, -0.01, -0.2, 0.01, -0.01, -0.2,
                               0.01,  0.01,  -0.2, -0.01, 0.01, -0.2};
  static const int T[36] = {0, 2, 1, 0, 3, 2, 4, 5, 6, 4, 6, 7,
                            0, 1, 5, 0, 5, 4, 1, 2, 6, 1, 6, 5,
                            2, 3, 7, 2, 7, 6, 3, 0, 4, 3, 4, 7};
  cp_mesh *m;
  cp_error err = {0};
  cr_assert_eq(cp_mesh_from_arrays(V, 8, T, 12, &m, &err), 0, "%s", err.msg);
  cp_shape bar = {.type = CP_SHAPE_MESH, .mesh = m};
  cp_shape box = {.type = CP_SHAPE_BOX, .size = {0.05, 0.05, 0.05}};
  const double gap = 0.007;
  for (int order = 0; order < 2; ++order) {
    // The bar's -x face at x = 0, the box's +x face at -gap.
    cp_collide_object ob = {&box, {-gap - 0.025, 0, 0.025}, {1, 0, 0, 0}},
                      om = {&bar, {0.01, 0, 0.23}, {1, 0, 0, 0}};
    cp_collide_options o = cp_collide_defaults();
    o.touch_tol = 0.0137;
    cp_collide_contact pts[CP_COLLIDE_MAX_POINTS];
    int n = order ? cp_collide_pair(&om, &ob, &o, pts, CP_COLLIDE_MAX_POINTS, &err)
                  : cp_collide_pair(&ob, &om, &o, pts, CP_COLLIDE_MAX_POINTS, &err);
    cr_assert(n >= 1, "order %d: %d contacts: %s", order, n, err.msg);
    for (int j = 0; j < n; ++j) {
      cr_assert(fabs(fabs(pts[j].n[0]) - 1) < 1e-9, "order %d: normal [%g, %g, %g]",
                order, pts[j].n[0], pts[j].n[1], pts[j].n[2]);
      cr_assert(fabs(pts[j].depth + gap) < 1e-8, "order %d: depth %g", order,
                pts[j].depth);
      cr_assert(fabs(pts[j].p[0] + 0.5 * gap) < 1e-8, "order %d: x %g", order,
                pts[j].p[0]);
    }
  }
  cp_mesh_release(m);
}
