/* The viewer page's content (planner/view/viewer.h): the data the C side writes
 * into the page, read back with jansson and compared with closed forms
 * written without models/ kinematics; the page is self-contained; bad input
 * and write failures leave nothing behind. The page in a browser:
 * browser_viewer.py. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "models/mesh.h"
#include "tests/support.h"
#include "viewer_fixture.h"

static char *temp_dir(void) {
  char *d = strdup("/tmp/cp_viewer_XXXXXX");
  cr_assert(d && mkdtemp(d), "mkdtemp");
  return d;
}

static int count_files(const char *dir) {
  DIR *d = opendir(dir);
  cr_assert(d);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (e->d_name[0] != '.') ++n;
  closedir(d);
  return n;
}

static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  char p[1024];
  while ((e = readdir(d)))
    if (e->d_name[0] != '.') {
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      unlink(p);
    }
  closedir(d);
  rmdir(dir);
}

/* Writes v's page into a fresh folder; returns the page text (and the data
 * JSON in *data). */
static char *write_and_read(cp_viewer *v, json_t **data, char **dir_out) {
  char *dir = temp_dir();
  char path[1024];
  snprintf(path, sizeof path, "%s/page.html", dir);
  cr_assert_eq(cp_viewer_write(v, path), CP_VIEWER_OK, "%s",
               cp_viewer_message(v));
  cr_assert_eq(count_files(dir), 1, "a temporary file was left behind");
  struct stat st;
  cr_assert_eq(stat(path, &st), 0);
  cr_assert_eq(st.st_mode & 0777, 0644);
  size_t len;
  char *page = cpt_read_file(path, &len);
  cr_assert(page);
  const char *tag = "<script type=\"application/json\" id=\"complan-data\">";
  char *a = strstr(page, tag);
  cr_assert(a, "no data block in the page");
  a += strlen(tag);
  char *b = strstr(a, "</script>");
  cr_assert(b);
  json_error_t je;
  *data = json_loadb(a, (size_t)(b - a), 0, &je);
  cr_assert(*data, "page data is not JSON: %s (line %d)", je.text, je.line);
  *dir_out = dir;
  return page;
}

static double num(json_t *a, size_t i) {
  json_t *x = json_array_get(a, i);
  cr_assert(json_is_number(x), "entry %zu is not a number", i);
  return json_number_value(x);
}

Test(viewer, page_holds_the_closed_form_poses) {
  cp_viewer *v = vf_viewer();
  cr_assert(v);
  cr_assert_eq(cp_viewer_state_size(v), VF_STATE);
  cr_assert_eq(cp_viewer_frame_count(v), VF_FRAMES);
  json_t *data;
  char *dir;
  char *page = write_and_read(v, &data, &dir);

  json_t *bodies = json_object_get(data, "bodies");
  cr_assert_eq(json_array_size(bodies), VF_BODIES);
  json_t *poses = json_object_get(data, "poses");
  json_t *time = json_object_get(data, "time");
  cr_assert_eq(json_array_size(poses), VF_FRAMES);
  cr_assert_eq(json_array_size(time), VF_FRAMES);
  double worst = 0;
  for (int k = 0; k < VF_BODIES; ++k) {
    json_t *b = json_array_get(bodies, (size_t)k);
    cr_assert_str_eq(json_string_value(json_object_get(b, "name")),
                     vf_names[k]);
    cr_assert_eq(json_is_true(json_object_get(b, "link")), k >= 4);
    cr_assert_eq(json_is_true(json_object_get(b, "fixed")), k < 2);
    json_t *fixed_pose = json_object_get(b, "pose");
    json_t *moving = json_object_get(b, "moving");
    cr_assert(k < 2 ? fixed_pose && !moving : !fixed_pose && moving);
    for (int i = 0; i < VF_FRAMES; ++i) {
      double p[3], q[4];
      vf_expected(i, k, p, q);
      json_t *arr = fixed_pose;
      size_t at = 0;
      if (!arr) {
        arr = json_array_get(poses, (size_t)i);
        at = 7 * (size_t)json_integer_value(moving);
      }
      for (int c = 0; c < 3; ++c)
        worst = fmax(worst, fabs(num(arr, at + (size_t)c) - p[c]));
      for (int c = 0; c < 4; ++c)
        worst = fmax(worst, fabs(num(arr, at + 3 + (size_t)c) - q[c]));
    }
  }
  cr_assert_lt(worst, 1e-13, "largest pose deviation %g", worst);

  /* Free bodies are the state's own bits (shortest round-trip printing). */
  for (int i = 0; i < VF_FRAMES; ++i) {
    double t, x[VF_STATE];
    vf_state(i, &t, x);
    cr_assert_eq(num(time, (size_t)i), t);
    json_t *P = json_array_get(poses, (size_t)i);
    for (int c = 0; c < 7; ++c) {
      cr_assert_eq(num(P, 7 * 0 + (size_t)c), x[c]);      /* box */
      cr_assert_eq(num(P, 7 * 1 + (size_t)c), x[13 + c]); /* ball */
    }
  }

  /* Shape offsets: the l1 capsule sits 0.06 up its link frame; the plane's
   * square lies in z = 0 under the view target. */
  json_t *off = json_object_get(
      json_array_get(json_object_get(json_array_get(bodies, 4), "shapes"), 0),
      "offset");
  cr_assert_eq(num(off, 2), 0.06);
  cr_assert_eq(num(off, 3), 1.0);
  json_t *plane = json_array_get(bodies, 0);
  json_t *target = json_object_get(json_object_get(data, "view"), "target");
  off = json_object_get(json_array_get(json_object_get(plane, "shapes"), 0),
                        "offset");
  cr_assert_float_eq(num(off, 0), num(target, 0), 1e-15);
  cr_assert_float_eq(num(off, 1), num(target, 1), 1e-15);
  cr_assert_eq(num(off, 2), 0.0);

  /* Contacts: frame i has i % 3 of them, exactly as given. */
  json_t *contacts = json_object_get(data, "contacts");
  double fmax_ = 0;
  for (int i = 0; i < VF_FRAMES; ++i) {
    cp_world_contact c[2];
    int n = vf_contacts(i, c);
    json_t *C = json_array_get(contacts, (size_t)i);
    cr_assert_eq(json_array_size(C), 9 * (size_t)n);
    for (int k = 0; k < n; ++k) {
      for (int j = 0; j < 3; ++j) {
        cr_assert_eq(num(C, 9 * (size_t)k + (size_t)j), c[k].p[j]);
        cr_assert_eq(num(C, 9 * (size_t)k + 3 + (size_t)j), c[k].n[j]);
        cr_assert_eq(num(C, 9 * (size_t)k + 6 + (size_t)j), c[k].force[j]);
      }
      fmax_ = fmax(fmax_, hypot(c[k].force[0], c[k].force[2]));
    }
  }
  json_t *view = json_object_get(data, "view");
  double radius = json_number_value(json_object_get(view, "radius"));
  cr_assert_float_eq(json_number_value(json_object_get(view, "maxForce")),
                     fmax_, 1e-15);
  cr_assert_float_eq(json_number_value(json_object_get(view, "forceScale")) *
                         fmax_, 0.5 * radius, 1e-15);
  /* The view holds the finger's base (x = -0.3) and the post (x = 0.43). */
  cr_assert_lt(num(target, 0) - radius, -0.3);
  cr_assert_gt(num(target, 0) + radius, 0.43);

  json_t *goal = json_object_get(data, "goal");
  cr_assert_str_eq(json_string_value(json_object_get(goal, "body")), "box");
  cr_assert_eq(json_number_value(json_object_get(goal, "tolerance")), 0.03);
  json_t *tree = json_object_get(data, "tree");
  cr_assert_eq(json_array_size(json_object_get(tree, "points")), 21);
  cr_assert_eq(json_integer_value(json_array_get(json_object_get(tree, "parent"), 6)), 4);
  cr_assert_eq(json_array_size(json_object_get(tree, "path")), 4);

  /* Title: escaped for HTML and for the script block. */
  cr_assert_str_eq(json_string_value(json_object_get(data, "title")),
                   "viewer fixture <&>");
  cr_assert(strstr(page, "<title>viewer fixture &lt;&amp;&gt;</title>"));
  cr_assert(!strstr(strstr(page, "id=\"complan-data\""), "<&>"));

  /* Self-contained: three.js inlined, nothing loaded from elsewhere. */
  cr_assert(strstr(page, "const REVISION = '187'"));
  cr_assert(strstr(page, "OrbitControls"));
  cr_assert(strstr(page, "window.complan"));
  cr_assert(!strstr(page, "<script src"));
  cr_assert(!strstr(page, "<link "));

  free(page);
  json_decref(data);
  remove_dir(dir);
  free(dir);
  cp_viewer_destroy(v);
}

/* Links turned past a quarter turn about x, y and z: each takes another
 * branch of the matrix-to-quaternion conversion. */
Test(viewer, link_orientations_about_each_axis) {
  static const char json[] =
      "{\"manipulators\": ["
      " {\"name\": \"mx\", \"base\": {\"position\": [0, 0, 0]}, \"joints\": ["
      "  {\"name\": \"j\", \"type\": \"revolute\", \"axis\": [1, 0, 0],"
      "   \"link\": {\"name\": \"l\", \"mass\": 1, \"com\": [0, 0, 0],"
      "    \"inertia\": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}}]},"
      " {\"name\": \"my\", \"base\": {\"position\": [1, 0, 0]}, \"joints\": ["
      "  {\"name\": \"j\", \"type\": \"revolute\", \"axis\": [0, 1, 0],"
      "   \"link\": {\"name\": \"l\", \"mass\": 1, \"com\": [0, 0, 0],"
      "    \"inertia\": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}}]},"
      " {\"name\": \"mz\", \"base\": {\"position\": [2, 0, 0]}, \"joints\": ["
      "  {\"name\": \"j\", \"type\": \"prismatic\", \"axis\": [0, 0, 1],"
      "   \"link\": {\"name\": \"p\", \"mass\": 1, \"com\": [0, 0, 0],"
      "    \"inertia\": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}},"
      "  {\"name\": \"k\", \"type\": \"revolute\", \"axis\": [0, 0, 1],"
      "   \"link\": {\"name\": \"l\", \"mass\": 1, \"com\": [0, 0, 0],"
      "    \"inertia\": [[1, 0, 0], [0, 1, 0], [0, 0, 1]]}}]}],"
      " \"contacts\": []}";
  cp_scene s;
  cp_error err;
  cr_assert_eq(cp_scene_parse(json, strlen(json), NULL, NULL, &s, &err), 0,
               "%s: %s", err.where, err.msg);
  cp_viewer *v;
  cr_assert_eq(cp_viewer_create(&s, NULL, &v, &err), CP_VIEWER_OK);
  cp_scene_free(&s);
  cr_assert_eq(cp_viewer_state_size(v), 8);
  const double th[3] = {2.9, -2.5, 1.9}, slide = 0.25;
  double x[8] = {th[0], 0, th[1], 0, slide, 0, th[2], 0};
  cr_assert_eq(cp_viewer_add_frame(v, 0, x, 0, NULL), CP_VIEWER_OK);
  json_t *data;
  char *dir;
  char *page = write_and_read(v, &data, &dir);
  json_t *P = json_array_get(json_object_get(data, "poses"), 0);
  cr_assert_eq(json_array_size(P), 28);
  /* entries: mx/l, my/l, mz/p, mz/l; expected q = (cos th/2, axis sin th/2)
   * with w >= 0. */
  const int ent[3] = {0, 1, 3};
  for (int a = 0; a < 3; ++a) {
    double q[4] = {cos(0.5 * th[a]), 0, 0, 0};
    q[1 + a] = sin(0.5 * th[a]);
    for (int c = 0; c < 4; ++c)
      cr_assert_float_eq(num(P, 7 * (size_t)ent[a] + 3 + (size_t)c), q[c],
                         1e-14, "axis %d, component %d", a, c);
  }
  cr_assert_float_eq(num(P, 7 * 3 + 2), slide, 1e-15); /* after the slider */
  cr_assert_eq(num(P, 7 * 3 + 0), 2.0);
  /* no goal, no tree, default title */
  cr_assert(json_is_null(json_object_get(data, "goal")));
  cr_assert(json_is_null(json_object_get(data, "tree")));
  cr_assert_str_eq(json_string_value(json_object_get(data, "title")),
                   "complan");
  free(page);
  json_decref(data);
  remove_dir(dir);
  free(dir);
  cp_viewer_destroy(v);
}

Test(viewer, bad_options_are_named) {
  cp_scene s;
  cp_error err;
  cr_assert_eq(vf_scene(&s, &err), 0);
  cp_viewer *v = (cp_viewer *)&s;
  cp_viewer_options o = vf_options();
  o.goal_body = "nothing";
  cr_assert_eq(cp_viewer_create(&s, &o, &v, &err), CP_VIEWER_BAD_INPUT);
  cr_assert_null(v);
  cr_assert_str_eq(err.where, "goal_body");

  o = vf_options();
  o.goal_tolerance = 0;
  cr_assert_eq(cp_viewer_create(&s, &o, &v, &err), CP_VIEWER_BAD_INPUT);
  cr_assert_str_eq(err.where, "goal_tolerance");

  o = vf_options();
  o.goal_centre[1] = NAN;
  cr_assert_eq(cp_viewer_create(&s, &o, &v, &err), CP_VIEWER_BAD_INPUT);
  cr_assert_str_eq(err.where, "goal_centre");

  double pts[6] = {0, 0, 0, 1, 1, 1};
  int parent[2] = {-1, 2}, path[1] = {0};
  cp_viewer_tree t = {2, pts, parent, 1, path};
  o = vf_options();
  o.tree = &t;
  cr_assert_eq(cp_viewer_create(&s, &o, &v, &err), CP_VIEWER_BAD_INPUT);
  cr_assert_str_eq(err.where, "tree.parent");
  cr_assert(strstr(err.msg, "node 1"), "%s", err.msg);
  parent[1] = 0;
  path[0] = 5;
  cr_assert_eq(cp_viewer_create(&s, &o, &v, &err), CP_VIEWER_BAD_INPUT);
  cr_assert_str_eq(err.where, "tree.path");
  path[0] = 1;
  cr_assert_eq(cp_viewer_create(&s, &o, &v, &err), CP_VIEWER_OK);
  cp_viewer_destroy(v);
  cp_scene_free(&s);
}

Test(viewer, bad_frames_are_refused_and_nothing_is_added) {
  cp_viewer *v = vf_viewer();
  cr_assert(v);
  double t, x[VF_STATE];
  vf_state(3, &t, x);
  x[5] = NAN;
  cr_assert_eq(cp_viewer_add_frame(v, 10, x, 0, NULL), CP_VIEWER_BAD_INPUT);
  cr_assert(strstr(cp_viewer_message(v), "frame 50: state entry 5"), "%s",
            cp_viewer_message(v));
  x[5] = 0;
  cr_assert_eq(cp_viewer_add_frame(v, 0.5, x, 0, NULL), CP_VIEWER_BAD_INPUT);
  cr_assert(strstr(cp_viewer_message(v), "before the previous frame"), "%s",
            cp_viewer_message(v));
  cp_world_contact c;
  memset(&c, 0, sizeof c);
  c.force[2] = INFINITY;
  cr_assert_eq(cp_viewer_add_frame(v, 10, x, 1, &c), CP_VIEWER_BAD_INPUT);
  cr_assert(strstr(cp_viewer_message(v), "contact 0"), "%s",
            cp_viewer_message(v));
  cr_assert_eq(cp_viewer_add_frame(v, 10, x, 1, NULL), CP_VIEWER_BAD_INPUT);
  cr_assert_eq(cp_viewer_frame_count(v), VF_FRAMES);
  cr_assert_eq(cp_viewer_add_frame(v, 10, x, 0, NULL), CP_VIEWER_OK);
  cr_assert_str_eq(cp_viewer_message(v), "");
  cr_assert_eq(cp_viewer_frame_count(v), VF_FRAMES + 1);
  cp_viewer_destroy(v);
}

Test(viewer, write_failures_leave_nothing) {
  cp_scene s;
  cp_error err;
  cr_assert_eq(vf_scene(&s, &err), 0);
  cp_viewer *v;
  cr_assert_eq(cp_viewer_create(&s, NULL, &v, &err), CP_VIEWER_OK);
  cp_scene_free(&s);
  char *dir = temp_dir();
  char path[1024];
  snprintf(path, sizeof path, "%s/page.html", dir);
  cr_assert_eq(cp_viewer_write(v, path), CP_VIEWER_BAD_INPUT);
  cr_assert(strstr(cp_viewer_message(v), "at least one frame"));
  cr_assert_eq(count_files(dir), 0);

  double t, x[VF_STATE];
  vf_state(0, &t, x);
  cr_assert_eq(cp_viewer_add_frame(v, t, x, 0, NULL), CP_VIEWER_OK);
  snprintf(path, sizeof path, "%s/missing/page.html", dir);
  cr_assert_eq(cp_viewer_write(v, path), CP_VIEWER_IO);
  cr_assert(strstr(cp_viewer_message(v), path), "%s", cp_viewer_message(v));
  /* A full disk, by a file size limit far below the page's size (this
   * test runs in its own process): the half-written temporary is removed. */
  snprintf(path, sizeof path, "%s/page.html", dir);
  struct rlimit old, small;
  cr_assert_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
  small.rlim_cur = 100000;
  small.rlim_max = old.rlim_max;
  signal(SIGXFSZ, SIG_IGN);
  cr_assert_eq(setrlimit(RLIMIT_FSIZE, &small), 0);
  cp_viewer_status st = cp_viewer_write(v, path);
  cr_assert_eq(setrlimit(RLIMIT_FSIZE, &old), 0);
  cr_assert_eq(st, CP_VIEWER_IO);
  cr_assert(strstr(cp_viewer_message(v), "cannot write"), "%s",
            cp_viewer_message(v));
  cr_assert_eq(count_files(dir), 0);
  cr_assert_eq(cp_viewer_write(v, path), CP_VIEWER_OK, "%s",
               cp_viewer_message(v));
  cr_assert_eq(count_files(dir), 1);
  remove_dir(dir);
  free(dir);
  cp_viewer_destroy(v);
}

/* Frames from a real world: a ball sent sliding along a plane. Every
 * frame's pose is the world's state, with the step's floor contact. */
Test(viewer, frames_from_a_world) {
  static const char json[] =
      "{\"bodies\": ["
      " {\"name\": \"floor\", \"fixed\": true,"
      "  \"shape\": {\"type\": \"plane\", \"normal\": [0, 0, 1], \"offset\": 0}},"
      " {\"name\": \"ball\", \"mass\": 1, \"position\": [0, 0, 0.05],"
      "  \"velocity\": [0.3, 0, 0],"
      "  \"shape\": {\"type\": \"sphere\", \"radius\": 0.05}}]}";
  cp_scene s;
  cp_error err;
  cr_assert_eq(cp_scene_parse(json, strlen(json), NULL, NULL, &s, &err), 0,
               "%s: %s", err.where, err.msg);
  cp_world_options wo = cp_world_defaults();
  wo.dt = 0.002;
  cp_world *w;
  cr_assert_eq(cp_world_create(&s, &wo, &w, &err), CP_WORLD_OK, "%s",
               err.msg);
  cp_viewer *v;
  cr_assert_eq(cp_viewer_create(&s, NULL, &v, &err), CP_VIEWER_OK);
  cp_scene_free(&s);
  double x[60][13];
  int contacts_seen = 0;
  cr_assert_eq(cp_viewer_add_world(v, w), CP_VIEWER_OK);
  cp_world_get_state(w, x[0]);
  for (int k = 1; k < 60; ++k) {
    cr_assert_eq(cp_world_step(w, NULL), CP_WORLD_OK, "%s",
                 cp_world_message(w));
    cr_assert_eq(cp_viewer_add_world(v, w), CP_VIEWER_OK);
    cp_world_get_state(w, x[k]);
    const cp_world_contact *c;
    contacts_seen += cp_world_contacts(w, &c) > 0;
  }
  cr_assert_eq(contacts_seen, 59, "steps with a floor contact");
  json_t *data;
  char *dir;
  char *page = write_and_read(v, &data, &dir);
  json_t *poses = json_object_get(data, "poses");
  cr_assert_eq(json_array_size(poses), 60);
  for (int k = 0; k < 60; ++k)
    for (int i = 0; i < 7; ++i)
      cr_assert_eq(num(json_array_get(poses, (size_t)k), (size_t)i), x[k][i],
                   "frame %d entry %d", k, i);
  /* The ball moved along x. */
  cr_assert_gt(x[59][0], x[0][0] + 0.01);
  size_t with_contacts = 0;
  json_t *contacts = json_object_get(data, "contacts");
  for (size_t k = 0; k < json_array_size(contacts); ++k)
    with_contacts += json_array_size(json_array_get(contacts, k)) > 0;
  cr_assert_eq(with_contacts, (size_t)contacts_seen);
  free(page);
  json_decref(data);
  remove_dir(dir);
  free(dir);
  cp_viewer_destroy(v);
  cp_world_destroy(w);
}

/* A URDF robot with triangle-mesh links (the Panda with mesh fingers): every
 * shape of every link reaches the page, meshes with their vertices and
 * triangles as loaded. */
Test(viewer, mesh_links_of_a_urdf_robot) {
  char text[2048], urdf[512], pk[512];
  snprintf(urdf, sizeof urdf, "%s/robots/panda_mesh_fingers.urdf",
           getenv("CP_TEST_DATA"));
  snprintf(pk, sizeof pk, "%s/robots/example-robot-data",
           getenv("CP_TEST_DATA"));
  snprintf(text, sizeof text,
           "{\"packages\": {\"example-robot-data\": \"%s\"},"
           " \"manipulators\": [{\"name\": \"r\", \"urdf\": \"%s\","
           "  \"state\": {\"panda_joint4\": {\"position\": -1.5}}}],"
           " \"contacts\": []}", pk, urdf);
  cp_scene s;
  cp_error err;
  cr_assert_eq(cp_scene_parse(text, strlen(text), NULL, NULL, &s, &err), 0,
               "%s: %s", err.where, err.msg);
  cp_viewer *v;
  cr_assert_eq(cp_viewer_create(&s, NULL, &v, &err), CP_VIEWER_OK, "%s",
               err.msg);
  int n = cp_viewer_state_size(v);
  double *x = calloc((size_t)n + 1, sizeof *x);
  const cp_chain *c = &s.manips[0];
  for (int j = 0, k = 0; j < c->n; ++j)
    if (!c->joints[j].is_mimic) x[2 * k++] = c->joints[j].position;
  cr_assert_eq(cp_viewer_add_frame(v, 0, x, 0, NULL), CP_VIEWER_OK, "%s",
               cp_viewer_message(v));
  json_t *data;
  char *dir;
  char *page = write_and_read(v, &data, &dir);
  json_t *bodies = json_object_get(data, "bodies");
  /* The scene's bodies first: here the root link's geometry (issue 23),
   * one fixed body per collision shape of panda_link0. */
  cr_assert_eq(s.n_bodies, 1);
  cr_assert_str_eq(s.bodies[0].name, "r:panda_link0");
  cr_assert_eq((int)json_array_size(bodies), s.n_bodies + c->n);
  int meshes = 0;
  for (int j = 0; j < c->n; ++j) {
    const cp_link *l = &c->joints[j].link;
    json_t *shapes = json_object_get(
        json_array_get(bodies, (size_t)(s.n_bodies + j)), "shapes");
    int want = 0;
    for (int k = 0; k < cp_link_shape_count(l); ++k) {
      cp_link_shape ls;
      cp_link_shape_get(l, k, &ls);
      if (ls.shape.type == CP_SHAPE_NONE) continue;
      json_t *sh = json_array_get(shapes, (size_t)want++);
      cr_assert_str_eq(json_string_value(json_object_get(sh, "type")),
                       cp_shape_type_name(ls.shape.type));
      if (ls.shape.type == CP_SHAPE_MESH) {
        ++meshes;
        cr_assert_eq((int)json_array_size(json_object_get(sh, "vertices")),
                     3 * ls.shape.mesh->n_vertices);
        cr_assert_eq((int)json_array_size(json_object_get(sh, "triangles")),
                     3 * ls.shape.mesh->n_triangles);
      }
    }
    cr_assert_eq((int)json_array_size(shapes), want, "link %d", j);
  }
  cr_assert_gt(meshes, 0, "no mesh reached the page");
  free(x);
  free(page);
  json_decref(data);
  remove_dir(dir);
  free(dir);
  cp_viewer_destroy(v);
  cp_scene_free(&s);
}
