#include "viewer_fixture.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *const vf_names[VF_BODIES] = {"table", "post", "box", "ball",
                                         "finger/l1", "finger/l2"};

static const char scene_json[] =
    "{\"bodies\": ["
    " {\"name\": \"table\", \"fixed\": true,"
    "  \"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1], \"offset\": 0}},"
    " {\"name\": \"post\", \"fixed\": true, \"position\": [0.4, 0.3, 0.1],"
    "  \"shape\": {\"type\": \"cylinder\", \"radius\": 0.03, \"length\": 0.2}},"
    " {\"name\": \"box\", \"mass\": 1, \"position\": [0.15, 0, 0.02],"
    "  \"shape\": {\"type\": \"box\", \"size\": [0.1, 0.06, 0.04]}},"
    " {\"name\": \"ball\", \"mass\": 0.2, \"position\": [0.2, -0.2, 0.03],"
    "  \"shape\": {\"type\": \"sphere\", \"radius\": 0.03}}],"
    " \"manipulators\": [{\"name\": \"finger\","
    "  \"base\": {\"position\": [-0.3, 0, 0.25], \"orientation\": [1, 0, 0, 0]},"
    "  \"joints\": ["
    "   {\"name\": \"j1\", \"type\": \"revolute\", \"axis\": [0, 1, 0],"
    "    \"link\": {\"name\": \"l1\", \"mass\": 0.05, \"com\": [0, 0, 0.06],"
    "     \"shape\": {\"type\": \"capsule\", \"radius\": 0.01, \"length\": 0.1},"
    "     \"shape_origin\": {\"position\": [0, 0, 0.06]}}},"
    "   {\"name\": \"j2\", \"type\": \"revolute\", \"axis\": [0, 1, 0],"
    "    \"origin\": {\"position\": [0, 0, 0.12], \"orientation\": [1, 0, 0, 0]},"
    "    \"link\": {\"name\": \"l2\", \"mass\": 0.05, \"com\": [0, 0, 0.05],"
    "     \"shape\": {\"type\": \"capsule\", \"radius\": 0.01, \"length\": 0.08}}}"
    "  ]}],"
    " \"contacts\": []}";

int vf_scene(cp_scene *scene, cp_error *err) {
  return cp_scene_parse(scene_json, strlen(scene_json), NULL, NULL, scene,
                        err);
}

static void motion(int i, double *t, double *a, double *th1, double *th2) {
  *t = 0.02 * i;
  *a = 1.5 * *t;
  *th1 = 0.6 + 0.4 * sin(2 * *t);
  *th2 = -0.8 + 0.3 * *t;
}

void vf_state(int i, double *t, double *x) {
  double a, th1, th2;
  motion(i, t, &a, &th1, &th2);
  memset(x, 0, VF_STATE * sizeof *x);
  /* box: on a circle about z, turning with it */
  x[0] = 0.15 * cos(a); x[1] = 0.15 * sin(a); x[2] = 0.02;
  x[3] = cos(0.5 * a); x[6] = sin(0.5 * a);
  x[7] = -0.15 * 1.5 * sin(a); x[8] = 0.15 * 1.5 * cos(a); x[12] = 1.5;
  /* ball: rising along y, spinning about x */
  double *y = x + 13;
  y[0] = 0.2; y[1] = -0.2 + 0.1 * *t; y[2] = 0.03 + 0.05 * sin(3 * *t);
  y[3] = cos(*t); y[4] = sin(*t);
  /* joints */
  x[26] = th1; x[27] = 0.8 * cos(2 * *t);
  x[28] = th2; x[29] = 0.3;
}

int vf_contacts(int i, cp_world_contact *c) {
  double t = 0.02 * i;
  int n = i % 3;
  for (int k = 0; k < n; ++k) {
    memset(&c[k], 0, sizeof c[k]);
    c[k].p[0] = 0.1 * k; c[k].p[1] = 0.05; c[k].p[2] = 0;
    c[k].n[2] = 1;
    c[k].force[0] = 0.1 * (k + 1); c[k].force[2] = 2 + t;
  }
  return n;
}

void vf_expected(int i, int k, double pos[3], double quat[4]) {
  double t, a, th1, th2;
  motion(i, &t, &a, &th1, &th2);
  quat[0] = 1; quat[1] = quat[2] = quat[3] = 0;
  switch (k) {
  case 0: /* table */
    pos[0] = pos[1] = pos[2] = 0;
    break;
  case 1: /* post */
    pos[0] = 0.4; pos[1] = 0.3; pos[2] = 0.1;
    break;
  case 2: /* box */
    pos[0] = 0.15 * cos(a); pos[1] = 0.15 * sin(a); pos[2] = 0.02;
    quat[0] = cos(0.5 * a); quat[3] = sin(0.5 * a);
    break;
  case 3: /* ball */
    pos[0] = 0.2; pos[1] = -0.2 + 0.1 * t; pos[2] = 0.03 + 0.05 * sin(3 * t);
    quat[0] = cos(t); quat[1] = sin(t);
    break;
  case 4: /* l1: on joint 1's axis at the base, turned th1 about y */
    pos[0] = -0.3; pos[1] = 0; pos[2] = 0.25;
    quat[0] = cos(0.5 * th1); quat[2] = sin(0.5 * th1);
    break;
  default: /* l2: 0.12 along l1's z, turned th1 + th2 about y */
    pos[0] = -0.3 + 0.12 * sin(th1); pos[1] = 0; pos[2] = 0.25 + 0.12 * cos(th1);
    quat[0] = cos(0.5 * (th1 + th2)); quat[2] = sin(0.5 * (th1 + th2));
    break;
  }
}

static double tree_pts[3 * 7] = {0.15, 0, 0.02,   0.1, 0.08, 0.02,
                                 0.05, 0.12, 0.02, 0.2, 0.05, 0.02,
                                 0.0, 0.15, 0.02,  0.25, 0.1, 0.02,
                                 0.02, 0.2, 0.02};
static int tree_parent[7] = {-1, 0, 1, 0, 2, 3, 4};
static int tree_path[4] = {0, 1, 2, 4};
static cp_viewer_tree tree = {7, tree_pts, tree_parent, 4, tree_path};

cp_viewer_options vf_options(void) {
  cp_viewer_options o = cp_viewer_defaults();
  o.title = "viewer fixture <&>";
  o.has_goal = 1;
  o.goal_body = "box";
  o.goal_centre[0] = 0.0; o.goal_centre[1] = 0.15; o.goal_centre[2] = 0.02;
  o.goal_tolerance = 0.03;
  o.tree = &tree;
  return o;
}

cp_viewer *vf_viewer(void) {
  cp_scene scene;
  cp_error err;
  if (vf_scene(&scene, &err)) {
    fprintf(stderr, "fixture scene: %s: %s\n", err.where, err.msg);
    return NULL;
  }
  cp_viewer_options o = vf_options();
  cp_viewer *v = NULL;
  cp_viewer_status s = cp_viewer_create(&scene, &o, &v, &err);
  cp_scene_free(&scene); /* the viewer keeps copies */
  if (s != CP_VIEWER_OK) {
    fprintf(stderr, "cp_viewer_create: %s: %s\n", err.where, err.msg);
    return NULL;
  }
  for (int i = 0; i < VF_FRAMES; ++i) {
    double t, x[VF_STATE];
    cp_world_contact c[2];
    vf_state(i, &t, x);
    int n = vf_contacts(i, c);
    if (cp_viewer_add_frame(v, t, x, n, c) != CP_VIEWER_OK) {
      fprintf(stderr, "cp_viewer_add_frame: %s\n", cp_viewer_message(v));
      cp_viewer_destroy(v);
      return NULL;
    }
  }
  return v;
}
