/* The viewer page (planner/view/viewer.h): poses by forward kinematics on the C
 * side, one HTML file with three.js, the page's script and the data inlined.
 *
 * The page's pieces are embedded at build time (planner/meson.build runs
 * third_party/three/embed.py): cp_viewer_js_chunks is three.js turned into a
 * classic script, cp_viewer_app_chunks is planner/viewer_app.js. */
#include "planner/view/viewer.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/mesh.h"
#include "models/vec3.h"
#include "planner/io/outfile.h"
#include "planner/sim/statelayout.h"

extern const char *const cp_viewer_js_chunks[];
extern const char *const cp_viewer_app_chunks[];

/* One drawn thing: a body or a manipulator link. Its pose is the frame of
 * cp_scene_frame; its shapes sit at their poses in that frame (a body has
 * one, a link any number). */
typedef struct entry {
  char *name;
  int is_link;
  int fixed;
  int n_shapes;
  cp_link_shape *shapes; /* [n_shapes] (meshes referenced, owned by the
                            scene copy's chains or the caller's scene) */
  double extent;        /* radius of a ball about the frame origin holding
                           the shape (0 for planes and shapeless links) */
  double pose[7];       /* fixed entries: x, y, z, qw, qx, qy, qz */
  int moving;           /* index among moving entries, or -1 */
  int state_at;         /* free body: offset of x in the state */
  int manip, link;      /* link: chain and joint index */
} entry;

struct cp_viewer {
  int n_entries;
  entry *e;
  int n_moving;
  cp_state_layout layout; /* where bodies and joints sit in a state */
  int n_manips;
  cp_chain *chains;      /* deep copies (cp_chain_copy) for kinematics */
  cp_link_state *ls;     /* scratch: the longest chain */
  /* frames */
  int n_frames, cap_frames;
  double *time;          /* [n_frames] */
  double *poses;         /* [n_frames][n_moving][7] */
  size_t *c_start;       /* [n_frames]: first contact number in cdata / 9 */
  int *c_count;          /* [n_frames] */
  double *cdata;         /* contacts: p[3], n[3], force[3] */
  size_t n_c, cap_c;
  /* options */
  char *title;
  int has_goal;
  char *goal_body;
  double goal_c[3], goal_r;
  int tree_n, tree_npath;
  double *tree_pts;
  int *tree_parent, *tree_path;
  /* notes and visibility changes, from a frame on */
  int n_notes;
  int *note_frame;
  char **note_text;
  int n_toggles;
  int *toggle_frame, *toggle_entry, *toggle_visible;
  char msg[512];
};

static cp_viewer_status fail(cp_viewer *v, cp_viewer_status s, const char *fmt,
                             ...) __attribute__((format(printf, 3, 4)));
static cp_viewer_status fail(cp_viewer *v, cp_viewer_status s, const char *fmt,
                             ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(v->msg, sizeof v->msg, fmt, ap);
  va_end(ap);
  return s;
}

cp_viewer_options cp_viewer_defaults(void) {
  cp_viewer_options o;
  memset(&o, 0, sizeof o);
  o.title = "complan";
  return o;
}

/* The quaternion of R with w >= 0: one sign, so that equal rotations print
 * equal numbers. */
static void mat_to_quat(const double *R, double *q) {
  cp_quat_from_mat(R, q);
  if (q[0] < 0)
    for (int i = 0; i < 4; ++i) q[i] = -q[i];
}

/* The rotation taking +z to the unit vector n: q = normalise(1 + z.n, z x n);
 * the half-turn about x when n = -z. */
static void quat_z_to(const double *n, double *q) {
  if (n[2] < -1 + 1e-12) {
    q[0] = 0; q[1] = 1; q[2] = 0; q[3] = 0;
    return;
  }
  q[0] = 1 + n[2]; q[1] = -n[1]; q[2] = n[0]; q[3] = 0;
  double s = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]);
  for (int i = 0; i < 4; ++i) q[i] /= s;
}

// The shape's bounding radius (models/shape.h), 0 for a plane (drawn as a
// finite patch, sized elsewhere).
static double shape_extent(const cp_shape *s) {
  return s->type == CP_SHAPE_PLANE ? 0.0 : cp_shape_bounding_radius(s);
}

void cp_viewer_destroy(cp_viewer *v) {
  if (!v) return;
  for (int i = 0; i < v->n_entries; ++i) {
    free(v->e[i].name);
    free(v->e[i].shapes);
  }
  free(v->e);
  for (int m = 0; m < v->n_manips; ++m) cp_chain_free(&v->chains[m]);
  free(v->chains);
  cp_state_layout_free(&v->layout);
  free(v->ls);
  free(v->time);
  free(v->poses);
  free(v->c_start);
  free(v->c_count);
  free(v->cdata);
  free(v->title);
  free(v->goal_body);
  free(v->tree_pts);
  free(v->tree_parent);
  free(v->tree_path);
  for (int i = 0; i < v->n_notes; ++i) free(v->note_text[i]);
  free(v->note_text);
  free(v->note_frame);
  free(v->toggle_frame);
  free(v->toggle_entry);
  free(v->toggle_visible);
  free(v);
}

static cp_viewer_status create_fail(cp_viewer *v, cp_viewer_status s,
                                    cp_error *err, const char *where,
                                    const char *what) {
  cp_error_setc(err, s == CP_VIEWER_NOMEM ? CP_ERR_NOMEM : CP_ERR_INPUT, where, "%s", what);
  cp_viewer_destroy(v);
  return s;
}

static int copy_tree(cp_viewer *v, const cp_viewer_tree *t, cp_error *err) {
  if (t->n < 0 || (t->n > 0 && (!t->points || !t->parent)) || t->n_path < 0 ||
      t->n_path > t->n || (t->n_path > 0 && !t->path))
    return cp_error_set(err, "tree",
                        "needs n >= 0 points and parents, and a path of at "
                        "most n nodes");
  for (int i = 0; i < t->n; ++i) {
    if (!cp_v3_isfinite(t->points + 3 * i))
      return cp_error_set(err, "tree.points", "node %d: not finite", i);
    if (t->parent[i] < -1 || t->parent[i] >= t->n || t->parent[i] == i)
      return cp_error_set(err, "tree.parent",
                          "node %d: parent %d is not -1 or another node "
                          "(0..%d)", i, t->parent[i], t->n - 1);
  }
  for (int i = 0; i < t->n_path; ++i)
    if (t->path[i] < 0 || t->path[i] >= t->n)
      return cp_error_set(err, "tree.path", "entry %d: node %d is not in "
                          "0..%d", i, t->path[i], t->n - 1);
  v->tree_n = t->n;
  v->tree_npath = t->n_path;
  v->tree_pts = malloc((size_t)(3 * t->n + 1) * sizeof *v->tree_pts);
  v->tree_parent = malloc((size_t)(t->n + 1) * sizeof *v->tree_parent);
  v->tree_path = malloc((size_t)(t->n_path + 1) * sizeof *v->tree_path);
  if (!v->tree_pts || !v->tree_parent || !v->tree_path) return 1;
  if (t->n) {
    memcpy(v->tree_pts, t->points, (size_t)(3 * t->n) * sizeof(double));
    memcpy(v->tree_parent, t->parent, (size_t)t->n * sizeof(int));
  }
  if (t->n_path)
    memcpy(v->tree_path, t->path, (size_t)t->n_path * sizeof(int));
  return 0;
}

cp_viewer_status cp_viewer_create(const cp_scene *scene,
                                  const cp_viewer_options *opt,
                                  cp_viewer **out, cp_error *err) {
  *out = NULL;
  cp_viewer_options d = cp_viewer_defaults();
  if (!opt) opt = &d;
  if (!scene) {
    cp_error_set(err, "scene", "no scene");
    return CP_VIEWER_BAD_INPUT;
  }
  cp_viewer *v = calloc(1, sizeof *v);
  if (!v) {
    cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
    return CP_VIEWER_NOMEM;
  }
  int n_links = 0, max_n = 1; /* every joint has a link, mimic or not */
  for (int m = 0; m < scene->n_manips; ++m) n_links += scene->manips[m].n;
  v->e = calloc((size_t)(scene->n_bodies + n_links + 1), sizeof *v->e);
  v->n_manips = scene->n_manips;
  v->chains = calloc((size_t)scene->n_manips + 1, sizeof *v->chains);
  v->title = strdup(opt->title ? opt->title : "complan");
  if (!v->e || !v->chains || !v->title ||
      cp_state_layout_init(&v->layout, scene))
    return create_fail(v, CP_VIEWER_NOMEM, err, "", "out of memory");

  for (int b = 0; b < scene->n_bodies; ++b) {
    const cp_body *bd = &scene->bodies[b];
    entry *e = &v->e[v->n_entries++];
    e->name = strdup(bd->name);
    if (!e->name)
      return create_fail(v, CP_VIEWER_NOMEM, err, "", "out of memory");
    e->fixed = bd->fixed;
    if (bd->shape.type != CP_SHAPE_NONE) {
      e->shapes = calloc(1, sizeof *e->shapes);
      if (!e->shapes)
        return create_fail(v, CP_VIEWER_NOMEM, err, "", "out of memory");
      e->n_shapes = 1;
      e->shapes[0].shape = bd->shape;
      e->shapes[0].quat[0] = 1;
      if (bd->shape.type == CP_SHAPE_PLANE) {
        /* Where on the plane the square is drawn is decided at write time
         * (under the scene); the rotation is fixed. */
        cp_v3_scale(e->shapes[0].pos, bd->shape.normal, bd->shape.offset);
        quat_z_to(bd->shape.normal, e->shapes[0].quat);
      }
    }
    e->extent = shape_extent(&bd->shape);
    e->moving = -1;
    if (bd->fixed) {
      cp_v3_copy(e->pose, bd->x);
      memcpy(e->pose + 3, bd->q, 4 * sizeof(double));
    } else {
      e->state_at = cp_state_body_at(&v->layout, b);
    }
  }
  for (int m = 0; m < scene->n_manips; ++m) {
    const cp_chain *c = &scene->manips[m];
    cp_chain *cc = &v->chains[m];
    if (cp_chain_copy(cc, c))
      return create_fail(v, CP_VIEWER_NOMEM, err, "", "out of memory");
    if (c->n > max_n) max_n = c->n;
    for (int j = 0; j < c->n; ++j) {
      const cp_link *l = &cc->joints[j].link;
      entry *e = &v->e[v->n_entries++];
      size_t len = strlen(c->name) + strlen(l->name) + 2;
      e->name = malloc(len);
      if (!e->name)
        return create_fail(v, CP_VIEWER_NOMEM, err, "", "out of memory");
      snprintf(e->name, len, "%s/%s", c->name, l->name);
      e->is_link = 1;
      int ns = cp_link_shape_count(l);
      e->shapes = calloc((size_t)ns + 1, sizeof *e->shapes);
      if (!e->shapes)
        return create_fail(v, CP_VIEWER_NOMEM, err, "", "out of memory");
      for (int k = 0; k < ns; ++k) {
        cp_link_shape ls;
        cp_link_shape_get(l, k, &ls);
        if (ls.shape.type == CP_SHAPE_NONE) continue;
        e->shapes[e->n_shapes++] = ls;
        e->extent = fmax(e->extent,
                         cp_v3_norm(ls.pos) + shape_extent(&ls.shape));
      }
      e->manip = m;
      e->link = j;
    }
  }
  for (int i = 0; i < v->n_entries; ++i)
    if (!v->e[i].fixed) v->e[i].moving = v->n_moving++;
  v->ls = malloc((size_t)max_n * sizeof *v->ls);
  if (!v->ls) return create_fail(v, CP_VIEWER_NOMEM, err, "", "out of memory");

  if (opt->has_goal) {
    cp_ref r;
    if (!opt->goal_body || cp_scene_find(scene, opt->goal_body, &r))
      return create_fail(v, CP_VIEWER_BAD_INPUT, err, "goal_body",
                         "the goal's body is not a body or link of the scene");
    if (!cp_v3_isfinite(opt->goal_centre))
      return create_fail(v, CP_VIEWER_BAD_INPUT, err, "goal_centre",
                         "not finite");
    if (!(opt->goal_tolerance > 0) || !isfinite(opt->goal_tolerance))
      return create_fail(v, CP_VIEWER_BAD_INPUT, err, "goal_tolerance",
                         "expected a finite number > 0");
    v->has_goal = 1;
    v->goal_body = strdup(opt->goal_body);
    if (!v->goal_body)
      return create_fail(v, CP_VIEWER_NOMEM, err, "", "out of memory");
    cp_v3_copy(v->goal_c, opt->goal_centre);
    v->goal_r = opt->goal_tolerance;
  }
  if (opt->tree) {
    int rc = copy_tree(v, opt->tree, err);
    if (rc < 0) {
      cp_viewer_destroy(v);
      return CP_VIEWER_BAD_INPUT;
    }
    if (rc > 0)
      return create_fail(v, CP_VIEWER_NOMEM, err, "", "out of memory");
  }
  *out = v;
  return CP_VIEWER_OK;
}

int cp_viewer_state_size(const cp_viewer *v) { return v->layout.n; }
int cp_viewer_frame_count(const cp_viewer *v) { return v->n_frames; }
const char *cp_viewer_message(const cp_viewer *v) { return v->msg; }

static int grow(void **p, size_t n, size_t size) {
  void *q = realloc(*p, n * size);
  if (!q) return -1;
  *p = q;
  return 0;
}

cp_viewer_status cp_viewer_add_frame(cp_viewer *v, double t,
                                     const double *state, int n_contacts,
                                     const cp_world_contact *contacts) {
  v->msg[0] = '\0';
  int f = v->n_frames;
  if (!isfinite(t))
    return fail(v, CP_VIEWER_BAD_INPUT, "frame %d: time is not finite", f);
  if (f > 0 && t < v->time[f - 1])
    return fail(v, CP_VIEWER_BAD_INPUT,
                "frame %d: time %.17g is before the previous frame's %.17g",
                f, t, v->time[f - 1]);
  if (v->layout.n > 0 && !state)
    return fail(v, CP_VIEWER_BAD_INPUT, "frame %d: no state", f);
  for (int i = 0; i < v->layout.n; ++i)
    if (!isfinite(state[i]))
      return fail(v, CP_VIEWER_BAD_INPUT,
                  "frame %d: state entry %d is not finite", f, i);
  if (n_contacts < 0 || (n_contacts > 0 && !contacts))
    return fail(v, CP_VIEWER_BAD_INPUT, "frame %d: bad contact list", f);
  for (int k = 0; k < n_contacts; ++k) {
    const cp_world_contact *c = &contacts[k];
    if (!cp_v3_isfinite(c->p) || !cp_v3_isfinite(c->n) ||
        !cp_v3_isfinite(c->force))
      return fail(v, CP_VIEWER_BAD_INPUT,
                  "frame %d: contact %d has a non-finite point, normal or "
                  "force", f, k);
  }

  if (f == v->cap_frames) {
    size_t cap = v->cap_frames ? 2 * (size_t)v->cap_frames : 64;
    if (grow((void **)&v->time, cap, sizeof *v->time) ||
        grow((void **)&v->poses, cap * (size_t)(7 * v->n_moving + 1),
             sizeof *v->poses) ||
        grow((void **)&v->c_start, cap, sizeof *v->c_start) ||
        grow((void **)&v->c_count, cap, sizeof *v->c_count))
      return fail(v, CP_VIEWER_NOMEM, "out of memory");
    v->cap_frames = (int)cap;
  }
  if (v->n_c + (size_t)n_contacts > v->cap_c) {
    size_t cap = v->cap_c ? 2 * v->cap_c : 64;
    while (cap < v->n_c + (size_t)n_contacts) cap *= 2;
    if (grow((void **)&v->cdata, 9 * cap, sizeof *v->cdata))
      return fail(v, CP_VIEWER_NOMEM, "out of memory");
    v->cap_c = cap;
  }

  double *P = v->poses + (size_t)f * (size_t)(7 * v->n_moving);
  for (int i = 0; i < v->n_entries; ++i) {
    const entry *e = &v->e[i];
    if (e->moving < 0 || e->is_link) continue;
    memcpy(P + 7 * e->moving, state + e->state_at, 7 * sizeof(double));
  }
  /* Links: forward kinematics of each chain at this frame's joint
   * positions (link entries come chain by chain, in chain order). */
  int last_manip = -1;
  for (int i = 0; i < v->n_entries; ++i) {
    const entry *e = &v->e[i];
    if (!e->is_link) continue;
    if (e->manip != last_manip) {
      cp_chain *c = &v->chains[e->manip];
      for (int j = 0; j < c->n; ++j) { /* mimic followers: not in x */
        int at = cp_state_joint_at(&v->layout, e->manip, j);
        if (at >= 0) c->joints[j].position = state[at];
      }
      cp_chain_apply_mimic(c);
      cp_chain_kinematics(c, v->ls);
      last_manip = e->manip;
    }
    double *p = P + 7 * e->moving;
    cp_v3_copy(p, v->ls[e->link].o);
    mat_to_quat(v->ls[e->link].R, p + 3);
  }

  v->time[f] = t;
  v->c_start[f] = v->n_c;
  v->c_count[f] = n_contacts;
  for (int k = 0; k < n_contacts; ++k) {
    double *c = v->cdata + 9 * (v->n_c + (size_t)k);
    cp_v3_copy(c, contacts[k].p);
    cp_v3_copy(c + 3, contacts[k].n);
    cp_v3_copy(c + 6, contacts[k].force);
  }
  v->n_c += (size_t)n_contacts;
  v->n_frames++;
  return CP_VIEWER_OK;
}

cp_viewer_status cp_viewer_add_world(cp_viewer *v, const cp_world *w) {
  if (cp_world_state_size(w) != v->layout.n)
    return fail(v, CP_VIEWER_BAD_INPUT,
                "the world's state has %d numbers, the viewer's scene %d",
                cp_world_state_size(w), v->layout.n);
  double *x = malloc((size_t)(v->layout.n + 1) * sizeof *x);
  if (!x) return fail(v, CP_VIEWER_NOMEM, "out of memory");
  cp_world_get_state(w, x);
  const cp_world_contact *c = NULL;
  int nc = cp_world_contacts(w, &c);
  cp_viewer_status s = cp_viewer_add_frame(v, cp_world_time(w), x, nc, c);
  free(x);
  return s;
}

/* ---- writing ---------------------------------------------------------- */

/* Shortest of %.15g, %.16g, %.17g that reads back as the same double, so
 * that the page holds exactly the numbers computed here. */
cp_viewer_status cp_viewer_note(cp_viewer *v, const char *text) {
  v->msg[0] = '\0';
  const int n = v->n_notes;
  char *t = strdup(text ? text : "");
  if (!t || grow((void **)&v->note_text, (size_t)n + 1, sizeof *v->note_text) ||
      grow((void **)&v->note_frame, (size_t)n + 1, sizeof *v->note_frame)) {
    free(t);
    return fail(v, CP_VIEWER_NOMEM, "out of memory");
  }
  v->note_text[n] = t;
  v->note_frame[n] = v->n_frames;
  v->n_notes++;
  return CP_VIEWER_OK;
}

cp_viewer_status cp_viewer_show(cp_viewer *v, const char *name, int visible) {
  v->msg[0] = '\0';
  int i = 0;
  while (i < v->n_entries && (!name || strcmp(v->e[i].name, name))) ++i;
  if (i == v->n_entries)
    return fail(v, CP_VIEWER_BAD_INPUT, "no body or link \"%s\" to show or hide", name ? name : "(null)");
  const int n = v->n_toggles;
  if (grow((void **)&v->toggle_frame, (size_t)n + 1, sizeof(int)) ||
      grow((void **)&v->toggle_entry, (size_t)n + 1, sizeof(int)) ||
      grow((void **)&v->toggle_visible, (size_t)n + 1, sizeof(int)))
    return fail(v, CP_VIEWER_NOMEM, "out of memory");
  v->toggle_frame[n] = v->n_frames;
  v->toggle_entry[n] = i;
  v->toggle_visible[n] = visible != 0;
  v->n_toggles++;
  return CP_VIEWER_OK;
}

static void put_num(FILE *f, double x) {
  char buf[40];
  for (int prec = 15; prec <= 17; ++prec) {
    snprintf(buf, sizeof buf, "%.*g", prec, x);
    if (prec == 17 || strtod(buf, NULL) == x) break;
  }
  fputs(buf, f);
}

static void put_nums(FILE *f, const double *x, int n) {
  for (int i = 0; i < n; ++i) {
    if (i) fputc(',', f);
    put_num(f, x[i]);
  }
}

static void put_vec(FILE *f, const double *x, int n) {
  fputc('[', f);
  put_nums(f, x, n);
  fputc(']', f);
}

/* A JSON string that is also safe inside <script>: '<', '>' and '&' as
 * \u escapes, so that no "</script" or "<!--" can appear. */
static void put_str(FILE *f, const char *s) {
  fputc('"', f);
  for (const unsigned char *p = (const unsigned char *)s; *p; ++p) {
    if (*p == '"' || *p == '\\')
      fprintf(f, "\\%c", *p);
    else if (*p < 0x20 || *p == '<' || *p == '>' || *p == '&')
      fprintf(f, "\\u%04x", *p);
    else
      fputc(*p, f);
  }
  fputc('"', f);
}

static void put_html_text(FILE *f, const char *s) {
  for (; *s; ++s) {
    switch (*s) {
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '&': fputs("&amp;", f); break;
    case '"': fputs("&quot;", f); break;
    default: fputc(*s, f);
    }
  }
}

/* {"type", its dimensions, "offset": the shape's pose in its owner's frame
 * [x, y, z, qw, qx, qy, qz]}. */
static void put_shape(FILE *f, const cp_shape *s, double plane_size,
                      const double *off) {
  fprintf(f, "{\"type\":");
  put_str(f, cp_shape_type_name(s->type));
  switch (s->type) {
  case CP_SHAPE_BOX:
    fputs(",\"size\":", f);
    put_vec(f, s->size, 3);
    break;
  case CP_SHAPE_SPHERE:
    fputs(",\"radius\":", f);
    put_num(f, s->radius);
    break;
  case CP_SHAPE_CYLINDER:
  case CP_SHAPE_CAPSULE:
    fputs(",\"radius\":", f);
    put_num(f, s->radius);
    fputs(",\"length\":", f);
    put_num(f, s->length);
    break;
  case CP_SHAPE_PLANE:
    fputs(",\"size\":", f);
    put_num(f, plane_size);
    break;
  case CP_SHAPE_MESH:
    fputs(",\"vertices\":", f);
    put_vec(f, s->mesh->vertices, 3 * s->mesh->n_vertices);
    fputs(",\"triangles\":[", f);
    for (int i = 0; i < 3 * s->mesh->n_triangles; ++i)
      fprintf(f, i ? ",%d" : "%d", s->mesh->triangles[i]);
    fputc(']', f);
    break;
  default:
    break;
  }
  fputs(",\"offset\":", f);
  put_vec(f, off, 7);
  fputc('}', f);
}

static void grow_box(double *lo, double *hi, const double *p, double r) {
  for (int k = 0; k < 3; ++k) {
    if (p[k] - r < lo[k]) lo[k] = p[k] - r;
    if (p[k] + r > hi[k]) hi[k] = p[k] + r;
  }
}

/* The view: a box around every shape in every frame, the goal and the tree;
 * target its centre, radius half its diagonal. */
static void view(const cp_viewer *v, double *target, double *radius) {
  double lo[3] = {INFINITY, INFINITY, INFINITY};
  double hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int i = 0; i < v->n_entries; ++i) {
    const entry *e = &v->e[i];
    if (e->n_shapes && e->shapes[0].shape.type == CP_SHAPE_PLANE) continue;
    if (e->moving < 0) {
      grow_box(lo, hi, e->pose, e->extent);
      continue;
    }
    for (int f = 0; f < v->n_frames; ++f)
      grow_box(lo, hi,
               v->poses + (size_t)f * (size_t)(7 * v->n_moving) +
                   7 * e->moving,
               e->extent);
  }
  if (v->has_goal) grow_box(lo, hi, v->goal_c, v->goal_r);
  for (int i = 0; i < v->tree_n; ++i) grow_box(lo, hi, v->tree_pts + 3 * i, 0);
  if (!(lo[0] <= hi[0])) { /* nothing but planes */
    cp_v3_set(lo, -0.5, -0.5, -0.5);
    cp_v3_set(hi, 0.5, 0.5, 0.5);
  }
  double d[3];
  cp_v3_sub(d, hi, lo);
  for (int k = 0; k < 3; ++k) target[k] = 0.5 * (lo[k] + hi[k]);
  *radius = fmax(0.5 * cp_v3_norm(d), 0.05);
}

static void write_data(const cp_viewer *v, FILE *f) {
  double target[3], radius;
  view(v, target, &radius);
  double fmax_ = 0;
  for (size_t k = 0; k < v->n_c; ++k)
    fmax_ = fmax(fmax_, cp_v3_norm(v->cdata + 9 * k + 6));
  double plane_size = 8 * radius;

  fputs("{\"title\":", f);
  put_str(f, v->title);
  fputs(",\"view\":{\"target\":", f);
  put_vec(f, target, 3);
  fputs(",\"radius\":", f);
  put_num(f, radius);
  fputs(",\"forceScale\":", f);
  put_num(f, fmax_ > 0 ? 0.5 * radius / fmax_ : 0);
  fputs(",\"maxForce\":", f);
  put_num(f, fmax_);
  fputs(",\"markerSize\":", f);
  put_num(f, 0.015 * radius);
  fputs("},\"bodies\":[", f);
  for (int i = 0; i < v->n_entries; ++i) {
    const entry *e = &v->e[i];
    if (i) fputc(',', f);
    fputs("{\"name\":", f);
    put_str(f, e->name);
    fprintf(f, ",\"link\":%s,\"fixed\":%s,\"shapes\":[",
            e->is_link ? "true" : "false", e->fixed ? "true" : "false");
    for (int k = 0; k < e->n_shapes; ++k) {
      const cp_link_shape *ls = &e->shapes[k];
      double off[7];
      cp_v3_copy(off, ls->pos);
      memcpy(off + 3, ls->quat, 4 * sizeof(double));
      if (ls->shape.type == CP_SHAPE_PLANE) {
        /* Centre the drawn square under the view target: the target in
         * the body frame, projected on the plane n.x = offset. */
        const cp_shape *sh = &ls->shape;
        double R[9], d[3], t[3];
        cp_quat_to_mat(R, e->pose + 3);
        cp_v3_sub(d, target, e->pose);
        cp_m3_tmulv(t, R, d);
        double sd = cp_v3_dot(sh->normal, t) - sh->offset;
        cp_v3_axpy(off, t, -sd, sh->normal);
      }
      if (k) fputc(',', f);
      put_shape(f, &ls->shape, plane_size, off);
    }
    fputc(']', f);
    if (e->moving < 0) {
      fputs(",\"pose\":", f);
      put_vec(f, e->pose, 7);
    } else {
      fprintf(f, ",\"moving\":%d", e->moving);
    }
    fputc('}', f);
  }
  fputs("],\"time\":", f);
  put_vec(f, v->time, v->n_frames);
  fputs(",\"poses\":[", f);
  for (int fr = 0; fr < v->n_frames; ++fr) {
    if (fr) fputs(",\n", f);
    put_vec(f, v->poses + (size_t)fr * (size_t)(7 * v->n_moving),
            7 * v->n_moving);
  }
  fputs("],\"contacts\":[", f);
  for (int fr = 0; fr < v->n_frames; ++fr) {
    if (fr) fputs(",\n", f);
    if (v->c_count[fr])
      put_vec(f, v->cdata + 9 * v->c_start[fr], 9 * v->c_count[fr]);
    else
      fputs("[]", f);
  }
  fputs("],\"goal\":", f);
  if (v->has_goal) {
    fputs("{\"body\":", f);
    put_str(f, v->goal_body);
    fputs(",\"centre\":", f);
    put_vec(f, v->goal_c, 3);
    fputs(",\"tolerance\":", f);
    put_num(f, v->goal_r);
    fputc('}', f);
  } else {
    fputs("null", f);
  }
  fputs(",\"tree\":", f);
  if (v->tree_pts) {
    fputs("{\"points\":", f);
    put_vec(f, v->tree_pts, 3 * v->tree_n);
    fputs(",\"parent\":[", f);
    for (int i = 0; i < v->tree_n; ++i)
      fprintf(f, i ? ",%d" : "%d", v->tree_parent[i]);
    fputs("],\"path\":[", f);
    for (int i = 0; i < v->tree_npath; ++i)
      fprintf(f, i ? ",%d" : "%d", v->tree_path[i]);
    fputs("]}", f);
  } else {
    fputs("null", f);
  }
  fputs(",\"notes\":[", f);
  for (int i = 0; i < v->n_notes; ++i) {
    fprintf(f, i ? ",[%d," : "[%d,", v->note_frame[i]);
    put_str(f, v->note_text[i]);
    fputc(']', f);
  }
  fputs("],\"visibility\":[", f);
  for (int i = 0; i < v->n_toggles; ++i)
    fprintf(f, i ? ",[%d,%d,%d]" : "[%d,%d,%d]", v->toggle_frame[i], v->toggle_entry[i], v->toggle_visible[i]);
  fputs("]}", f);
}

static void write_page(const cp_viewer *v, FILE *f) {
  fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, "
        "initial-scale=1\">\n<meta name=\"generator\" content=\"complan\">\n"
        "<title>", f);
  put_html_text(f, v->title);
  fputs("</title>\n</head>\n<body>\n"
        "<!-- three.js r187 (MIT licence, Copyright 2010-2026 three.js "
        "authors; see the licence text in complan's "
        "third_party/three/LICENSE), embedded by complan -->\n<script>\n", f);
  for (const char *const *c = cp_viewer_js_chunks; *c; ++c) fputs(*c, f);
  fputs("</script>\n<script type=\"application/json\" id=\"complan-data\">",
        f);
  write_data(v, f);
  fputs("</script>\n<script>\n", f);
  for (const char *const *c = cp_viewer_app_chunks; *c; ++c) fputs(*c, f);
  fputs("</script>\n</body>\n</html>\n", f);
}

cp_viewer_status cp_viewer_write(cp_viewer *v, const char *path) {
  v->msg[0] = '\0';
  if (!path || !*path)
    return fail(v, CP_VIEWER_BAD_INPUT, "no output file name");
  if (v->n_frames == 0)
    return fail(v, CP_VIEWER_BAD_INPUT, "%s: a page needs at least one frame",
                path);
  /* A temporary file renamed into place, with the user's umask
   * (planner/io/outfile.h). */
  cp_error err;
  cp_outfile *o = cp_outfile_open(path, &err);
  if (o) {
    write_page(v, cp_outfile_stream(o));
    if (!cp_outfile_commit(o, &err)) return CP_VIEWER_OK;
  }
  return fail(v, err.code == CP_ERR_NOMEM ? CP_VIEWER_NOMEM : CP_VIEWER_IO,
              "%s", err.msg);
}
