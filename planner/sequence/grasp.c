/* Grasp candidates of a box part and their ranking by the stability LP
 * (planner/sequence/sequence.h, cp_sequence_grasps); the depth-one regrasp
 * search over (stable pose, grasp) pairs (cp_seq_regrasp). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/vec3.h"
#include "planner/assembly/assembly.h"
#include "planner/sequence/sequence_impl.h"

/* The largest multiple of the load the grasp holds (bisection, 0..8). */
#define HOLD_MAX 8.0
#define HOLD_ITERS 12

/* The scene of the grasp LP: the part at the origin, the left finger a
 * fixed box on its -g face, the right finger on a prismatic joint along -g
 * pushing with the squeeze force. */
static int lp_scene(const cp_sequence_task *t, int p, const double *q, const cp_sequence_grasp *gr_,
                    cp_scene *out, cp_error *err) {
  const double *g = gr_->dir, width = gr_->width, offset = gr_->offset;
  const cp_sequence_gripper *gr = &t->gripper;
  const cp_body *b = &t->scene.bodies[t->part_body[p]];
  const double zero[3] = {0, 0, 0};
  double qf[4], fs[3] = {gr_->finger[0], gr_->finger[1], gr_->finger[2]}, lx[3], rx[3], ax[3];
  cp_seq_yaw_quat(g, qf);
  cp_v3_scale(lx, g, -(width + fs[0]) / 2);
  cp_v3_scale(rx, g, (width + fs[0]) / 2);
  cp_v3_scale(ax, g, -1);
  lx[2] += offset;
  rx[2] += offset;
  cp_v3_add(lx, lx, gr_->shift);
  cp_v3_add(rx, rx, gr_->shift);
  json_t *sc = json_object(), *bodies = json_array(), *manips = json_array();
  json_object_set_new(sc, "gravity", cp_seq_vec(t->scene.gravity, 3));
  json_object_set_new(sc, "friction", json_pack("{s:f}", "default", gr->mu));
  json_array_append_new(bodies, cp_seq_body_json(b, zero, q, NULL, NULL));
  json_array_append_new(bodies, json_pack("{s:s, s:b, s:{s:s, s:o}, s:o, s:o}", "name", "grasp_left", "fixed", 1,
                                          "shape", "type", "box", "size", cp_seq_vec(fs, 3), "position",
                                          cp_seq_vec(lx, 3), "orientation", cp_seq_vec(qf, 4)));
  json_t *joint = json_pack("{s:s, s:s, s:o, s:f, s:{s:s, s:f, s:{s:s, s:o}, s:{s:o, s:o}}}", "name", "squeeze",
                            "type", "prismatic", "axis", cp_seq_vec(ax, 3), "effort", gr->squeeze, "link",
                            "name", "finger", "mass", CP_SEQ_FINGER_MASS, "shape", "type", "box", "size", cp_seq_vec(fs, 3),
                            "shape_origin", "position", cp_seq_vec(zero, 3), "orientation", cp_seq_vec(qf, 4));
  json_array_append_new(manips, json_pack("{s:s, s:{s:o}, s:[o]}", "name", "grasp_right", "base", "position",
                                          cp_seq_vec(rx, 3), "joints", joint));
  json_object_set_new(sc, "bodies", bodies);
  json_object_set_new(sc, "manipulators", manips);
  char *text = json_dumps(sc, JSON_COMPACT | JSON_REAL_PRECISION(17));
  json_decref(sc);
  if (!text) return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  cp_scene_options so = cp_scene_options_defaults();
  so.check_normal_speed = 0;
  int rc = cp_scene_parse(text, strlen(text), NULL, &so, out, err);
  free(text);
  return rc;
}

/* 1 when the grasp holds load factor lam in both transport directions. */
static int holds(cp_scene *s, const double *g0, const double *acc, double lam, cp_error *err) {
  cp_stability_options so = cp_stability_defaults();
  so.depth = CP_STABILITY_EQUILIBRIUM;
  for (int sign = -1; sign <= 1; sign += 2) {
    for (int i = 0; i < 3; i++) s->gravity[i] = lam * (g0[i] + sign * acc[i]);
    cp_stability_result r;
    if (cp_assembly_stability(s, ~(uint64_t)0, &so, &r, NULL, NULL, NULL, err)) return -1;
    int ok = r.has_equilibrium && r.kind != CP_STABILITY_FAILED;
    cp_stability_result_free(&r);
    if (!ok) return 0;
  }
  return 1;
}

static int hold_factor(const cp_sequence_task *t, int p, const double *q, const cp_sequence_grasp *g,
                       const double *acc, double *hold, cp_error *err) {
  cp_scene s;
  if (lp_scene(t, p, q, g, &s, err)) return -1;
  double lo = 0, hi = HOLD_MAX;
  int rc = holds(&s, t->scene.gravity, acc, hi, err);
  if (rc == 1) lo = hi;
  for (int it = 0; rc == 0 && it < HOLD_ITERS; it++) {
    const double mid = 0.5 * (lo + hi);
    int r = holds(&s, t->scene.gravity, acc, mid, err);
    if (r < 0) rc = -1;
    else if (r) lo = mid;
    else hi = mid;
  }
  cp_scene_free(&s);
  *hold = lo;
  return rc < 0 ? -1 : 0;
}

/* 1 when the box [c - h, c + h] overlaps an object other than part p:
 * a part of placed, or a fixed body that is not a plane. */
static int overlaps(const cp_sequence_task *t, int p, uint64_t placed, const double *c, const double *h) {
  for (int b = 0; b < t->scene.n_bodies; b++) {
    const cp_body *bd = &t->scene.bodies[b];
    if (bd->shape.type == CP_SHAPE_PLANE) continue;
    if (!bd->fixed) {
      int k = 0;
      while (k < t->n_parts && t->part_body[k] != b) k++;
      if (k == p || !(placed >> k & 1)) continue;
    }
    double bh[3];
    if (bd->shape.type == CP_SHAPE_BOX) cp_seq_box_aabb(bd->shape.size, bd->q, bh);
    else bh[0] = bh[1] = bh[2] = bd->shape.radius + bd->shape.length;
    int sep = 0;
    for (int i = 0; i < 3; i++)
      if (fabs(c[i] - bd->x[i]) >= h[i] + bh[i] - 1e-9) sep = 1;
    if (!sep) return 1;
  }
  return 0;
}

/* The axis-aligned box (centre c, half extents h) swept by the Panda's
 * palm from the grasp at the pose `to` (the fingers' centre at to + rd)
 * up to the transport height zt of the part's centre, the hand turned by
 * `turn` about the grasp axis dir. Unturned, the palm spans
 * CP_SEQ_PANDA_PALM_LO..HI above the fingers' centre, +-PALM_X across
 * dir and +-PALM_Y along it. */
static void palm_box(const double *dir, double turn, const double *to, const double *rd, double zt, double *c,
                     double *h) {
  double r[4], R[9], e[3], up[3] = {0, 0, 1}, e0[3];
  const double z[3] = {0, 0, 1};
  cp_v3_cross(e0, dir, z);
  cp_quat_axis_angle(r, dir, turn);
  cp_quat_to_mat(R, r);
  cp_m3_mulv(e, R, e0);
  for (int i = 0; i < 3; i++) up[i] = R[3 * i + 2]; /* R's third column */
  const double mid = 0.5 * (CP_SEQ_PANDA_PALM_LO + CP_SEQ_PANDA_PALM_HI), hz = 0.5 * (CP_SEQ_PANDA_PALM_HI - CP_SEQ_PANDA_PALM_LO);
  for (int i = 0; i < 3; i++) {
    c[i] = to[i] + rd[i] + mid * up[i];
    h[i] = CP_SEQ_PANDA_PALM_X * fabs(e[i]) + CP_SEQ_PANDA_PALM_Y * fabs(dir[i]) + hz * fabs(up[i]);
  }
  /* swept straight up until the part's centre is at zt */
  const double rise = fmax(0, zt - to[2]);
  c[2] += 0.5 * rise;
  h[2] += 0.5 * rise;
}

/* The geometric refusals (see cp_sequence_grasps): 1 and g->reason set
 * when refused. fs: the finger's size. */
static int check(const cp_sequence_task *t, int p, const double *from, const double *to, uint64_t placed,
                 cp_sequence_grasp *g, double turn, double zt) {
  const double *fs = g->finger;
  const cp_sequence_gripper *gr = &t->gripper;
  /* rd: the fingers' centre from the part's at the pose it goes to */
  double Rt[9], rs[3] = {g->shift[0], g->shift[1], g->shift[2] + g->offset}, rd[3] = {rs[0], rs[1], rs[2]};
  double pc[3], ph[3];
  g->rejected = 1;
  if (turn > t->tol_angle) {
    /* Staged in another orientation: the wrist turns the part about the
     * grasp axis, when the rotation is one about it (grasped at the
     * centre). q_rel = q_design q_staged^-1 = (cos a/2, sin a/2 u). */
    const double *qs = from + 3, *qd = to + 3;
    const double cs[4] = {qs[0], -qs[1], -qs[2], -qs[3]};
    double qr[4];
    cp_quat_mul(qr, qd, cs);
    const double along = cp_v3_dot(qr + 1, g->dir);
    double perp[3];
    cp_v3_axpy(perp, qr + 1, -along, g->dir);
    if (cp_v3_norm(perp) > 1e-6 || g->offset != 0.0) {
      snprintf(g->reason, sizeof g->reason,
               "staged %.3g rad from where it goes, not about this grasp axis (needs a regrasp)",
               turn);
      return 1;
    }
    g->turn = 2 * atan2(along, qr[0]);
    cp_quat_to_mat(Rt, qr);
    cp_m3_mulv(rd, Rt, rs);
    if (gr->panda) {
      /* The wrist turns the hand with the part: the palm (its box across
       * the grasp axis and above the pads) swings down beside the part
       * and must stay a margin above the part's bottom at the pose it
       * goes to, and sweep up from there clear of placed parts and
       * supports. */
      const double hd = cp_seq_part_height(t, p, to + 3);
      palm_box(g->dir, g->turn, to, rd, zt, pc, ph);
      const double low = pc[2] - ph[2] - (to[2] - 0.5 * hd) - CP_SEQ_PANDA_PALM_MARGIN;
      if (hd > 0 && low < 0) {
        const double above = low + CP_SEQ_PANDA_PALM_MARGIN;
        if (above < 0)
          snprintf(g->reason, sizeof g->reason, "turned, the Panda's palm would reach %.3g mm below the part's bottom",
                   -1e3 * above);
        else
          snprintf(g->reason, sizeof g->reason, "turned, the Panda's palm would pass %.3g mm above the part's bottom"
                   " (%.3g mm kept)", 1e3 * above, 1e3 * CP_SEQ_PANDA_PALM_MARGIN);
        return 1;
      }
      if (overlaps(t, p, placed, pc, ph)) {
        snprintf(g->reason, sizeof g->reason, "turned, the Panda's palm would meet a placed part or a support");
        return 1;
      }
    }
  }
  if (g->width + 2 * gr->clearance > gr->max_opening) {
    snprintf(g->reason, sizeof g->reason, "%.4g m wide (+ %.4g m clearance per side): the %s opens %.4g m", g->width,
             gr->clearance, gr->panda ? "Panda hand" : "gripper", gr->max_opening);
    return 1;
  }
  /* The fingers at the design pose, swept up to the transport height (the
   * Panda's: their whole extent, from the pad's bottom up to the palm). */
  double qf[4], fh[3], fb[3] = {fs[0], fs[1], fs[2]};
  if (gr->panda) fb[0] = CP_SEQ_PANDA_FINGER_OUT, fb[1] = CP_SEQ_PANDA_FINGER_W;
  cp_seq_yaw_quat(g->dir, qf);
  cp_seq_box_aabb(fb, qf, fh);
  for (int side = -1; side <= 1; side += 2) {
    double c[3], hh[3] = {fh[0], fh[1], 0};
    cp_v3_axpy(c, to, side * (g->width / 2 + gr->clearance + fb[0] / 2), g->dir);
    c[0] += rd[0];
    c[1] += rd[1];
    const double lo = c[2] + rd[2] - 0.5 * fs[2], hi = zt + rd[2] + (gr->panda ? CP_SEQ_PANDA_PALM_LO : fh[2]);
    c[2] = 0.5 * (lo + hi);
    hh[2] = 0.5 * (hi - lo);
    if (overlaps(t, p, placed, c, hh)) {
      snprintf(g->reason, sizeof g->reason, "a finger would meet a placed part or a support");
      return 1;
    }
  }
  if (gr->panda && g->turn == 0.0) {
    /* The palm above the fingers, from the part's design pose up (a
     * turning grasp's was checked above). */
    const double palm[3] = {2 * CP_SEQ_PANDA_PALM_Y, 2 * CP_SEQ_PANDA_PALM_X, 0};
    double c[3] = {to[0], to[1], 0}, hh[3];
    cp_seq_box_aabb(palm, qf, hh);
    const double lo = to[2] + g->offset + CP_SEQ_PANDA_PALM_LO, hi = zt + g->offset + CP_SEQ_PANDA_PALM_HI;
    c[2] = 0.5 * (lo + hi);
    hh[2] = 0.5 * (hi - lo);
    if (overlaps(t, p, placed, c, hh)) {
      snprintf(g->reason, sizeof g->reason, "the Panda's palm would meet a placed part or a support");
      return 1;
    }
  }
  g->rejected = 0;
  return 0;
}

/* How far a turning Panda grasp across the part's axis k can hold it from
 * its centre along up (a unit vector across the grasp axis, staged world
 * frame) with the pads (fs: thickness, width across, height) 2 mm inside
 * the face: as high as it goes at the pose after the turn. R: the staged
 * orientation. <= 0 when not across the grasp axis. */
static double high_shift(const cp_body *b, const double *R, int k, const double *up, const double *fs) {
  if (fabs(up[0] * R[k] + up[1] * R[3 + k] + up[2] * R[6 + k]) > 1e-6) return 0;
  double best = INFINITY;
  for (int j = 0; j < 3; j++) {
    if (j == k) continue;
    const double a = fabs(up[0] * R[j] + up[1] * R[3 + j] + up[2] * R[6 + j]);
    /* the pad's extent along the part's axis j: its height when that axis
     * is vertical in the staged pose, else its width */
    const double pad = fabs(R[6 + j]) > 0.5 ? fs[2] : fs[1];
    if (a > 1e-9) best = fmin(best, (0.5 * b->shape.size[j] - 0.5 * pad - 0.002) / a);
  }
  return isfinite(best) ? best : 0;
}

static int cmp_grasp(const void *a, const void *b) {
  const cp_sequence_grasp *x = a, *y = b;
  if (x->rejected != y->rejected) return x->rejected - y->rejected;
  if (x->hold != y->hold) return x->hold < y->hold ? 1 : -1;
  if (x->axis != y->axis) return x->axis - y->axis;
  if (x->offset != y->offset) return (x->offset > y->offset) - (x->offset < y->offset);
  const double sx = cp_v3_norm(x->shift), sy = cp_v3_norm(y->shift);
  return (sx > sy) - (sx < sy);
}

int cp_sequence_grasps(const cp_sequence_task *t, int p, const double *from, const double *to, uint64_t placed,
                       cp_sequence_grasp *out, int cap, cp_error *err) {
  const cp_body *b = &t->scene.bodies[t->part_body[p]];
  double design[7];
  memcpy(design, b->x, sizeof b->x);
  memcpy(design + 3, b->q, sizeof b->q);
  const double *st = from ? from : t->staged + 7 * p;
  if (!to) to = design;
  const cp_sequence_gripper *gr = &t->gripper;
  double R[9], acc[3] = {to[0] - st[0], to[1] - st[1], 0};
  cp_quat_to_mat(R, st + 3);
  const double d = cp_v3_norm(acc);
  cp_v3_scale(acc, acc, d > 1e-9 ? t->acceleration / d : 0.0);
  const double turn = cp_seq_quat_angle(st + 3, to + 3);
  const double zt = cp_seq_transport_height(t, p);
  const double h = cp_seq_part_height(t, p, st + 3);
  int n = 0;
  if (h < 0) return 0; /* no face of the staged part is horizontal */
  /* The Panda's rubber pads are what they are; the gantry's fingers are
   * cut to 0.6 of the part's height. */
  double fs[3] = {gr->finger[0], gr->finger[1], gr->panda ? gr->finger[2] : fmin(gr->finger[2], 0.6 * h)};
  const double top = 0.5 * h - 0.5 * fs[2] - 0.002; /* fingers 2 mm below the top */
  /* A turning Panda grasp is also held high: the staged direction that
   * becomes straight up at the pose it goes to (R_rel^T z). */
  const int high = gr->panda && turn > t->tol_angle;
  double up[3] = {0, 0, 0};
  if (high) {
    const double cs[4] = {st[3], -st[4], -st[5], -st[6]};
    double qr[4], Rr[9];
    cp_quat_mul(qr, to + 3, cs);
    cp_quat_to_mat(Rr, qr);
    for (int i = 0; i < 3; i++) up[i] = Rr[6 + i];
  }
  for (int k = 0; k < 3; k++) {
    double dir[3] = {R[k], R[3 + k], R[6 + k]};
    if (fabs(dir[2]) > 1e-6) continue; /* not a pair of side faces */
    for (int level = 0; level < 2 && n < cap; level++) {
      const double o = high ? high_shift(b, R, k, up, fs) : top;
      if (level == 1 && !(o > 1e-3)) continue;
      cp_sequence_grasp *g = &out[n++];
      memset(g, 0, sizeof *g);
      g->axis = k;
      memcpy(g->dir, dir, sizeof dir);
      g->width = b->shape.size[k];
      g->offset = level && !high ? top : 0.0;
      if (level && high) cp_v3_scale(g->shift, up, o);
      memcpy(g->finger, fs, sizeof fs);
      /* A finger wider than the face it presses on is narrowed to the
       * face less the clearance on either side: sticking out past the
       * face, it would slide along the faces of the part's neighbours
       * (a keystone between voussoirs). */
      for (int j = 0; j < 3 && !gr->panda; j++)
        if (j != k && fabs(R[6 + j]) < 1e-6 && g->finger[1] > b->shape.size[j])
          g->finger[1] = fmax(b->shape.size[j] - 2 * gr->clearance, 0.5 * b->shape.size[j]);
      if (turn > t->tol_angle && !gr->panda) {
        /* Turned fingers: a square section no taller than 0.6 of the part
         * either way up. */
        const double hd = cp_seq_part_height(t, p, to + 3);
        g->finger[1] = g->finger[2] = fmin(fmin(fs[1], fs[2]), 0.6 * (hd > 0 ? fmin(h, hd) : h));
      }
      if (check(t, p, st, to, placed, g, turn, zt)) continue;
      if (hold_factor(t, p, st + 3, g, acc, &g->hold, err)) return -1;
      if (g->hold < 1) {
        g->rejected = 1;
        snprintf(g->reason, sizeof g->reason,
                 "the contact model holds only %.3g x the weight and transport load (friction)", g->hold);
      }
    }
  }
  qsort(out, (size_t)n, sizeof *out, cmp_grasp);
  return n;
}

int cp_seq_usable(const cp_sequence_grasp *g, int n) {
  int k = 0;
  for (int c = 0; c < n; c++) k += !g[c].rejected;
  return k;
}

/* A regrasp: an orientation q1 one wrist turn (+-90 or 180 degrees about
 * world x or y) from the part's, resting at the same place, from which
 * the design orientation is one turn away with a usable grasp. Fills to1
 * (pose on the table) and the grasps of both moves. 1 found, 0 none, -1
 * failure. */
int cp_seq_regrasp(const cp_sequence_task *t, int p, uint64_t placed, const double *from, double *to1,
                   cp_sequence_grasp *g1, int *n1, cp_sequence_grasp *g2, int *n2, cp_error *err) {
  static const double axes[2][3] = {{1, 0, 0}, {0, 1, 0}};
  static const double angles[3] = {1.5707963267948966, -1.5707963267948966, 3.141592653589793};
  for (int i = 0; i < 2; i++) {
    for (int j = 0; j < 3; j++) {
      double r[4], q1[4];
      cp_quat_axis_angle(r, axes[i], angles[j]);
      cp_quat_mul(q1, r, from + 3);
      double mid[7] = {from[0], from[1], 0, q1[0], q1[1], q1[2], q1[3]};
      const double h = cp_seq_part_height(t, p, q1);
      if (h < 0) continue;
      /* resting on the table the part stands on now */
      mid[2] = from[2] - 0.5 * cp_seq_part_height(t, p, from + 3) + 0.5 * h + 1e-4;
      if ((*n1 = cp_sequence_grasps(t, p, from, mid, placed, g1, 6, err)) < 0) return -1;
      if (!cp_seq_usable(g1, *n1)) continue;
      if ((*n2 = cp_sequence_grasps(t, p, mid, NULL, placed, g2, 6, err)) < 0) return -1;
      if (!cp_seq_usable(g2, *n2)) continue;
      memcpy(to1, mid, sizeof mid);
      return 1;
    }
  }
  return 0;
}
