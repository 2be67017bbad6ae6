/* Contact generation for the Panda hand closing on a box: meshes against
 * primitives (issue 14: "meshes within 10x of primitives").
 *
 * The Panda arm (STL collision meshes on every arm link and on the hand)
 * points down; its fingers are 2 x q apart and a 0.1 kg box is squeezed
 * between the finger pads. The same scene with three finger models:
 *   primitives  panda.urdf as published: four boxes per finger;
 *   trimesh     panda_mesh_fingers.urdf: the finger.stl mesh, collided as an
 *               ODE triangle mesh (complan's default for mesh-primitive);
 *   hull        the same mesh collided as its convex hull (ODE dConvex).
 * For each, side by side in one run: microseconds per call of
 * cp_scene_generate_contacts on the whole scene (kinematics, bounding
 * spheres, every pair) and of cp_collide_pair for one finger against the
 * box, plus the contacts found (count, deepest). Times are medians over
 * repeats of thread CPU time (the machine is shared).
 *
 *   ./build/experiments/bench_collide [DATA_DIR] > experiments/results/collide.md
 * DATA_DIR defaults to tests/data/robots (run from the source root). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "models/chain.h"
#include "models/collide.h"
#include "models/contactgen.h"
#include "models/mesh.h"
#include "experiments/bench_util.h"
#include "models/scene.h"
#include "models/vec3.h"


static const char *ARM =
    "\"panda_joint1\": {\"position\": 0}, \"panda_joint2\": {\"position\": 0}, "
    "\"panda_joint3\": {\"position\": 0}, "
    "\"panda_joint4\": {\"position\": -1.5707963267948966}, "
    "\"panda_joint5\": {\"position\": 0}, "
    "\"panda_joint6\": {\"position\": 1.5707963267948966}, "
    "\"panda_joint7\": {\"position\": 0.7853981633974483}";

static char *scene_text(const char *dir, const char *urdf, double q,
                        const char *body) {
  size_t cap = 8192;
  char *t = malloc(cap);
  snprintf(t, cap,
           "{\"packages\": {\"example-robot-data\": \"%s/example-robot-data\"}, "
           "\"penetration_tolerance\": 0.001, \"bodies\": [%s], "
           "\"manipulators\": [{\"name\": \"panda\", \"urdf\": \"%s/%s\", "
           "\"state\": {%s, \"panda_finger_joint1\": {\"position\": %.17g}}}]}",
           dir, body ? body : "", dir, urdf, ARM, q);
  return t;
}

static int load(const char *text, cp_scene *s) {
  cp_error err;
  if (cp_scene_parse(text, strlen(text), NULL, NULL, s, &err)) {
    fprintf(stderr, "bench_collide: %s: %s\n", err.where, err.msg);
    return -1;
  }
  return 0;
}

// The innermost point of a finger (link frame): over the corners of its
// boxes and the vertices of its meshes, the extreme along sign * y (the
// mean of the points within 1e-9 m of it: a pad face's centre).
static void pad(const cp_link *l, double sign, double *out) {
  double best = INFINITY, acc[3] = {0, 0, 0};
  int cnt = 0;
  for (int pass = 0; pass < 2; ++pass)
    for (int e = 0; e < cp_link_shape_count(l); ++e) {
      cp_link_shape ls;
      cp_link_shape_get(l, e, &ls);
      double R[9], pts[3 * 64];
      int np = 0;
      cp_quat_to_mat(R, ls.quat);
      if (ls.shape.type == CP_SHAPE_BOX) {
        for (int k = 0; k < 8; ++k) {
          double c[3] = {(k & 1 ? 0.5 : -0.5) * ls.shape.size[0],
                         (k & 2 ? 0.5 : -0.5) * ls.shape.size[1],
                         (k & 4 ? 0.5 : -0.5) * ls.shape.size[2]};
          cp_m3_mulv(pts + 3 * np, R, c);
          cp_v3_add(pts + 3 * np, pts + 3 * np, ls.pos);
          ++np;
        }
      } else if (ls.shape.type == CP_SHAPE_MESH) {
        const cp_mesh *m = ls.shape.mesh;
        for (int k = 0; k < m->n_vertices && np < 64; ++k, ++np) {
          cp_m3_mulv(pts + 3 * np, R, m->vertices + 3 * k);
          cp_v3_add(pts + 3 * np, pts + 3 * np, ls.pos);
        }
      }
      for (int k = 0; k < np; ++k) {
        double y = sign * pts[3 * k + 1];
        if (pass == 0) best = fmin(best, y);
        else if (y <= best + 1e-9) cp_v3_add(acc, acc, pts + 3 * k), ++cnt;
      }
    }
  cp_v3_scale(out, acc, 1.0 / cnt);
}

// World rotation matrix -> quaternion [w, x, y, z] (R near any rotation).
static void mat_quat(const double *R, double *q) {
  q[0] = 0.5 * sqrt(fmax(0, 1 + R[0] + R[4] + R[8]));
  q[1] = copysign(0.5 * sqrt(fmax(0, 1 + R[0] - R[4] - R[8])), R[7] - R[5]);
  q[2] = copysign(0.5 * sqrt(fmax(0, 1 - R[0] + R[4] - R[8])), R[2] - R[6]);
  q[3] = copysign(0.5 * sqrt(fmax(0, 1 - R[0] - R[4] + R[8])), R[3] - R[1]);
}

// The box squeezed between the pads of the fingers of `urdf` at opening q:
// its faces through each finger's innermost point, its axes the hand's.
static int box_json(const char *dir, const char *urdf, double q, char *out,
                    size_t n) {
  char *t = scene_text(dir, urdf, q, NULL);
  cp_scene s;
  int rc = load(t, &s);
  free(t);
  if (rc) return -1;
  const cp_chain *c = &s.manips[0];
  int f1 = 7, f2 = 8;
  cp_link_state st[9];
  cp_chain_kinematics(c, st);
  double vl[3], vr[3], pl[3], pr[3], d[3];
  pad(&c->joints[f1].link, 1, vl);
  pad(&c->joints[f2].link, -1, vr);
  cp_m3_mulv(d, st[f1].R, vl);
  cp_v3_add(pl, st[f1].o, d);
  cp_m3_mulv(d, st[f2].R, vr);
  cp_v3_add(pr, st[f2].o, d);
  const double *R = st[f1].R;
  double w = 0, ctr[3], qq[4];
  for (int k = 0; k < 3; ++k) {
    ctr[k] = 0.5 * (pl[k] + pr[k]);
    w += (pl[k] - pr[k]) * R[3 * k + 1];
  }
  mat_quat(R, qq);
  snprintf(out, n,
           "{\"name\": \"box\", \"mass\": 0.1, \"shape\": {\"type\": \"box\", "
           "\"size\": [0.03, %.17g, 0.03]}, \"position\": [%.17g, %.17g, %.17g], "
           "\"orientation\": [%.17g, %.17g, %.17g, %.17g]}",
           w, ctr[0], ctr[1], ctr[2], qq[0], qq[1], qq[2], qq[3]);
  cp_scene_free(&s);
  return 0;
}

typedef struct variant {
  const char *name, *urdf;
  int hull;
} variant;

// What one timed call does.
typedef struct job {
  cp_scene *s;
  const cp_contactgen_options *o;
  int ns;
  const cp_collide_object *box, *parts;
  const cp_collide_options *co;
} job;

static void job_scene(const job *j) {
  cp_error err;
  cp_scene_generate_contacts(j->s, j->o, &err);
}

static void job_pair(const job *j) {
  cp_collide_contact pts[CP_COLLIDE_MAX_POINTS];
  for (int e = 0; e < j->ns; ++e)
    cp_collide_pair(j->box, &j->parts[e], j->co, pts, CP_COLLIDE_MAX_POINTS, NULL);
}

// Median microseconds per call over `reps` batches of `calls`.
static double time_us(void (*f)(const job *), const job *j, int reps, int calls) {
  double t[64];
  for (int r = 0; r < reps; ++r) {
    double t0 = bench_now();
    for (int k = 0; k < calls; ++k) f(j);
    t[r] = 1e6 * (bench_now() - t0) / calls;
  }
  return bench_median(t, reps);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : "tests/data/robots";
  const variant vs[3] = {{"primitives (4 boxes a finger)", "example-robot-data/robots/panda_description/urdf/panda.urdf", 0},
                         {"mesh, ODE triangle mesh", "panda_mesh_fingers.urdf", 0},
                         {"mesh, convex hull (dConvex)", "panda_mesh_fingers.urdf", 1}};
  const double qs[2] = {0.02, 0.015};
  const int reps = 15, calls = 200;
  printf("# Contact generation: Panda hand closing on a box, meshes vs primitives\n\n");
  printf("Command: `./build/experiments/bench_collide > experiments/results/collide.md`"
         " (release build, from the source root).\n");
  printf("Times: median of %d batches of %d calls, thread CPU time, microseconds per call.\n\n",
         reps, calls);
  printf("| finger opening q | fingers | scene us/call | ratio | finger-box us/call | ratio | contacts (scene) | finger-box contacts | deepest (m) |\n");
  printf("|---|---|---|---|---|---|---|---|---|\n");
  for (int qi = 0; qi < 2; ++qi) {
    double base_scene = 0, base_pair = 0;
    for (int vi = 0; vi < 3; ++vi) {
      char box[1024];
      if (box_json(dir, vs[vi].urdf, qs[qi], box, sizeof box)) return 1;
      char *t = scene_text(dir, vs[vi].urdf, qs[qi], box);
      cp_scene s;
      if (load(t, &s)) return 1;
      free(t);
      cp_contactgen_options o = cp_contactgen_scene_options(&s);
      o.mesh_hull = vs[vi].hull;
      cp_error err;
      if (cp_scene_generate_contacts(&s, &o, &err)) {
        fprintf(stderr, "bench_collide: %s\n", err.msg);
        return 1;
      }
      int nc = s.n_contacts;
      double deepest = -INFINITY;
      for (int j = 0; j < nc; ++j) deepest = fmax(deepest, s.contacts[j].depth);
      job js = {.s = &s, .o = &o};
      double us = time_us(job_scene, &js, reps, calls);
      // One finger (all its shapes) against the box.
      const cp_chain *c = &s.manips[0];
      const cp_link *lf = &c->joints[7].link;
      cp_link_state st[9];
      cp_chain_kinematics(c, st);
      int ns = cp_link_shape_count(lf), npair = 0;
      cp_collide_object ob[8], bx = {&s.bodies[0].shape, {0}, {0}};
      cp_v3_copy(bx.x, s.bodies[0].x);
      memcpy(bx.q, s.bodies[0].q, sizeof bx.q);
      cp_link_shape ls[8];
      double lq[4];
      mat_quat(st[7].R, lq);
      for (int e = 0; e < ns && e < 8; ++e) {
        double d[3];
        cp_link_shape_get(lf, e, &ls[e]);
        ob[e].shape = e ? &lf->extra_shapes[e - 1].shape : &lf->shape;
        cp_m3_mulv(d, st[7].R, ls[e].pos);
        cp_v3_add(ob[e].x, st[7].o, d);
        cp_quat_mul(ob[e].q, lq, ls[e].quat);
      }
      cp_collide_options co = cp_collide_defaults();
      co.touch_tol = o.touch_tol;
      co.mesh_hull = vs[vi].hull;
      cp_collide_contact pts[CP_COLLIDE_MAX_POINTS];
      for (int e = 0; e < ns && e < 8; ++e)
        npair += cp_collide_pair(&bx, &ob[e], &co, pts, CP_COLLIDE_MAX_POINTS, NULL);
      job jp = {.ns = ns < 8 ? ns : 8, .box = &bx, .parts = ob, .co = &co};
      double usp = time_us(job_pair, &jp, reps, calls);
      if (vi == 0) base_scene = us, base_pair = usp;
      printf("| %.3f | %s | %.1f | %.2f | %.1f | %.2f | %d | %d | %.3g |\n", qs[qi],
             vs[vi].name, us, us / base_scene, usp, usp / base_pair, nc, npair, deepest);
      cp_scene_free(&s);
    }
  }
  printf("\nratio: time over the primitives' in the same row group (same run).\n");
  return 0;
}
