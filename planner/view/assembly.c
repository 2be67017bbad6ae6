#include "planner/view/assembly.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/chain.h"
#include "planner/sim/statelayout.h"

cp_assembly_anim_options cp_assembly_anim_defaults(void) {
  cp_assembly_anim_options o;
  o.frames_per_step = 30;
  o.step_seconds = 1.0;
  o.distance = 0.0;
  o.title = NULL;
  return o;
}

static const cp_assembly_anim_options *opts(const cp_assembly_anim_options *o,
                                            cp_assembly_anim_options *def) {
  *def = cp_assembly_anim_defaults();
  return o ? o : def;
}

int cp_assembly_anim_frames(const cp_assembly_result *res, const cp_assembly_anim_options *opt) {
  cp_assembly_anim_options def;
  opt = opts(opt, &def);
  if (res->status != CP_ASSEMBLY_FOUND || res->n_steps == 0) return 1;
  const int f = opt->frames_per_step > 0 ? opt->frames_per_step : 1;
  return res->n_steps * f + 1;
}

double cp_assembly_anim_distance(const cp_scene *scene, const cp_assembly_anim_options *opt) {
  cp_assembly_anim_options def;
  opt = opts(opt, &def);
  if (opt->distance > 0) return opt->distance;
  double mean[3] = {0, 0, 0}, R = 0.0, rmax = 0.0;
  int n = 0;
  for (int i = 0; i < scene->n_bodies; i++) {
    const cp_body *b = &scene->bodies[i];
    if (b->fixed) continue;
    for (int a = 0; a < 3; a++) mean[a] += b->x[a];
    n++;
  }
  if (n == 0) return 1.0;
  for (int a = 0; a < 3; a++) mean[a] /= n;
  for (int i = 0; i < scene->n_bodies; i++) {
    const cp_body *b = &scene->bodies[i];
    if (b->fixed) continue;
    double r = cp_shape_bounding_radius(&b->shape);
    if (!isfinite(r)) r = 0.0;
    const double d = hypot(hypot(b->x[0] - mean[0], b->x[1] - mean[1]), b->x[2] - mean[2]);
    R = fmax(R, d + r);
    rmax = fmax(rmax, r);
  }
  const double D = 2.0 * R + rmax;
  return D > 0 ? D : 1.0;
}

int cp_assembly_anim_state(const cp_scene *scene, const cp_assembly_result *res,
                           const cp_assembly_anim_options *opt, int frame, double *t,
                           double *state) {
  cp_assembly_anim_options def;
  opt = opts(opt, &def);
  const int nf = cp_assembly_anim_frames(res, opt);
  if (frame < 0 || frame >= nf) return -1;
  const int F = opt->frames_per_step > 0 ? opt->frames_per_step : 1;
  const double dt = (opt->step_seconds > 0 ? opt->step_seconds : 1.0) / F;
  const double D = cp_assembly_anim_distance(scene, opt);
  *t = frame * dt;
  /* Offsets from the state layout (fixed bodies and mimic followers have
   * none). */
  cp_state_layout l;
  if (cp_state_layout_init(&l, scene)) {
    cp_state_layout_free(&l);
    return -1;
  }
  for (int i = 0; i < scene->n_bodies; i++) {
    const cp_body *b = &scene->bodies[i];
    const int at = cp_state_body_at(&l, i);
    if (at < 0) continue;
    double *x = state + at;
    memcpy(x, b->x, 3 * sizeof *x);
    memcpy(x + 3, b->q, 4 * sizeof *x);
    memset(x + 7, 0, 6 * sizeof *x);
    if (nf == 1) continue;
    for (int k = 0; k < res->n_steps; k++) {
      if (res->steps[k].body != i) continue;
      /* fraction of the way still to go: 1 before step k, 0 after it */
      double left = 1.0 - (double)(frame - k * F) / F;
      left = left > 1.0 ? 1.0 : left < 0.0 ? 0.0 : left;
      for (int a = 0; a < 3; a++) x[a] = b->x[a] - left * D * res->steps[k].direction[a];
    }
  }
  for (int m = 0; m < scene->n_manips; m++) {
    const cp_chain *c = &scene->manips[m];
    for (int j = 0; j < c->n; j++) {
      const int at = cp_state_joint_at(&l, m, j);
      if (at < 0) continue;
      state[at] = c->joints[j].position;
      state[at + 1] = 0.0;
    }
  }
  cp_state_layout_free(&l);
  return 0;
}

cp_viewer_status cp_assembly_write_page(const cp_scene *scene, const cp_assembly_result *res,
                                        const cp_assembly_anim_options *opt, const char *path,
                                        cp_error *err) {
  cp_assembly_anim_options def;
  opt = opts(opt, &def);
  cp_viewer_options vo = cp_viewer_defaults();
  vo.title = opt->title ? opt->title : "complan assemble";
  cp_viewer *v = NULL;
  cp_viewer_status st = cp_viewer_create(scene, &vo, &v, err);
  if (st != CP_VIEWER_OK) return st;
  const int n = cp_viewer_state_size(v), nf = cp_assembly_anim_frames(res, opt);
  double *x = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  if (!x) {
    cp_viewer_destroy(v);
    cp_error_setc(err, CP_ERR_NOMEM, path, "out of memory");
    return CP_VIEWER_NOMEM;
  }
  int nomem = 0; /* the frames are in range: a failure is the layout's memory */
  for (int f = 0; f < nf && st == CP_VIEWER_OK && !nomem; f++) {
    double t = 0.0;
    nomem = cp_assembly_anim_state(scene, res, opt, f, &t, x) != 0;
    if (!nomem) st = cp_viewer_add_frame(v, t, x, 0, NULL);
  }
  if (nomem) {
    st = CP_VIEWER_NOMEM;
    cp_error_setc(err, CP_ERR_NOMEM, path, "out of memory");
  } else {
    if (st == CP_VIEWER_OK) st = cp_viewer_write(v, path);
    if (st != CP_VIEWER_OK) cp_error_set(err, path, "%s", cp_viewer_message(v));
  }
  free(x);
  cp_viewer_destroy(v);
  return st;
}
