/* A stored assembly sequence replayed whole (planner/replay/sequence_replay.h):
 * every phase plan re-simulated, the phases checked to chain, optionally the
 * page of the whole sequence. */
#include "planner/replay/sequence_replay.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/mesh.h"
#include "models/vec3.h"
#include "planner/sequence/sequence.h"
#include "planner/sequence/sequence_impl.h"
#include "planner/sim/statelayout.h"
#include "planner/store/sequence.h"
#include "planner/view/viewer.h"

/* Steps of the simulation per page frame: 25 steps of 2 ms, 20 frames per
 * simulated second. */
#define FRAME_EVERY 25

cp_sequence_replay_options cp_sequence_replay_defaults(void) {
  return (cp_sequence_replay_options){.verify = 0, .tolerance = 0, .html = NULL, .title = NULL};
}

/* What the sequence has left where: a body's 13 state numbers, a joint's
 * position and velocity, by name. */
typedef struct known {
  char name[160];
  double v[13];
  int n;
} known;

typedef struct sheet {
  known *k;
  int n, cap;
} sheet;

static known *find(sheet *s, const char *name) {
  for (int i = 0; i < s->n; i++)
    if (!strcmp(s->k[i].name, name)) return &s->k[i];
  return NULL;
}

static int put(sheet *s, const char *name, const double *v, int n) {
  known *k = find(s, name);
  if (!k) {
    if (s->n == s->cap) {
      const int cap = s->cap ? 2 * s->cap : 32;
      known *g = realloc(s->k, sizeof *g * (size_t)cap);
      if (!g) return -1;
      s->k = g;
      s->cap = cap;
    }
    k = &s->k[s->n++];
    snprintf(k->name, sizeof k->name, "%s", name);
  }
  memcpy(k->v, v, sizeof *v * (size_t)n);
  k->n = n;
  return 0;
}

/* The page's scene: the union of the phases' bodies (in order of first
 * appearance, at their first poses) and a set of gripper boxes per set of
 * sizes met: the gripper's drawn links' box shapes, a mesh by its bounding
 * box (the gantry's fingers "lfinger" and "rfinger"; the Panda hand's
 * palm and its two fingers' four boxes each). */
#define DRAWN_MAX 16
typedef struct page {
  json_t *bodies;       /* the union scene's bodies */
  int n_free;           /* free bodies among them */
  int n_pairs;          /* gripper box sets */
  int pair_n[16];       /* boxes in each set */
  double pair_size[16][3 * DRAWN_MAX];
  char pair_body[16][DRAWN_MAX][96]; /* the sets' page bodies */
  int *plan_pair;       /* [plans]: the pair of each phase plan */
  cp_viewer *v;
  int layout_n;         /* 13 n_free */
  double *state;        /* [layout_n] the page's current state */
  double t0;            /* page time at the current phase's start */
  int shown_pair;       /* the pair visible now, -1 none */
} page;

/* (the Panda's hand is fixed to the carriage: its palm is a shape of the
 * carriage's last link, "carriage_z" or "wrist"; the gantry's have none) */
static const char *const drawn_links[] = {"lfinger", "rfinger", "carriage_z", "wrist", "panda_hand",
                                          "panda_leftfinger", "panda_rightfinger"};

/* Shape s (0 the link's own, then its extra shapes) of link lk, or NULL. */
static const cp_shape *link_shape(const cp_link *lk, int s) {
  return s == 0 ? &lk->shape : s <= lk->n_extra_shapes ? &lk->extra_shapes[s - 1].shape : NULL;
}

/* The drawn boxes of chain c: joint dk[i]'s link, its shape ds[i], size
 * 3i..3i+2 (a mesh: its bounding box). Returns their count. */
static int drawn_list(const cp_chain *c, int *dk, int *ds, double *size) {
  int n = 0;
  for (int k = 0; k < c->n; k++) {
    const cp_link *lk = &c->joints[k].link;
    int named = 0;
    for (size_t i = 0; i < sizeof drawn_links / sizeof *drawn_links; i++) named |= !strcmp(lk->name, drawn_links[i]);
    for (int sh = 0; named && sh <= lk->n_extra_shapes && n < DRAWN_MAX; sh++) {
      const cp_shape *x = link_shape(lk, sh);
      if (x->type == CP_SHAPE_BOX) memcpy(size + 3 * n, x->size, 3 * sizeof *size);
      else if (x->type == CP_SHAPE_MESH && x->mesh) cp_v3_sub(size + 3 * n, x->mesh->hi, x->mesh->lo);
      else continue;
      dk[n] = k;
      ds[n++] = sh;
    }
  }
  return n;
}

/* Box i's pose in its link's frame (a mesh's bounding box centred). */
static void drawn_pose(const cp_link *lk, int sh, double *pos, double *quat) {
  static const double one[4] = {1, 0, 0, 0};
  const cp_shape *x = link_shape(lk, sh);
  if (sh == 0) {
    memcpy(pos, lk->has_shape_pose ? lk->shape_pos : lk->com, 3 * sizeof *pos);
    memcpy(quat, lk->has_shape_pose ? lk->shape_quat : one, 4 * sizeof *quat);
  } else {
    memcpy(pos, lk->extra_shapes[sh - 1].pos, 3 * sizeof *pos);
    memcpy(quat, lk->extra_shapes[sh - 1].quat, 4 * sizeof *quat);
  }
  if (x->type == CP_SHAPE_MESH && x->mesh) {
    double c[3], R[9], d[3];
    for (int i = 0; i < 3; i++) c[i] = 0.5 * (x->mesh->lo[i] + x->mesh->hi[i]);
    cp_quat_to_mat(R, quat);
    cp_m3_mulv(d, R, c);
    cp_v3_add(pos, pos, d);
  }
}

static int has_body(const json_t *bodies, const char *name) {
  size_t i;
  json_t *b;
  json_array_foreach(bodies, i, b) if (!strcmp(json_string_value(json_object_get(b, "name")), name)) return 1;
  return 0;
}

/* The page body of box i (of link `link`, its shape sh) of set `pair`:
 * gripper_LINK_SET, gripper_LINK.SH_SET for a link's further shapes. */
static void pair_name(char *buf, size_t n, const char *link, int sh, int pair) {
  if (!strcmp(link, "carriage_z") || !strcmp(link, "wrist")) link = "hand";
  if (sh) snprintf(buf, n, "gripper_%s.%d_%d", link, sh, pair + 1);
  else snprintf(buf, n, "gripper_%s_%d", link, pair + 1);
}

/* Pass 1 for the page: phase plan j's scene joins the union. */
static int page_collect(page *pg, const cp_scene *s, int j) {
  for (int b = 0; b < s->n_bodies; b++) {
    const cp_body *bd = &s->bodies[b];
    if (has_body(pg->bodies, bd->name)) continue;
    json_t *o = cp_seq_body_json(bd, bd->x, bd->q, NULL, NULL);
    if (!o || json_array_append_new(pg->bodies, o)) return -1;
    pg->n_free += !bd->fixed;
  }
  pg->plan_pair[j] = -1;
  if (s->n_manips < 1) return 0;
  const cp_chain *c = &s->manips[0];
  int dk[DRAWN_MAX], ds[DRAWN_MAX];
  double sz[3 * DRAWN_MAX];
  const int nd = drawn_list(c, dk, ds, sz);
  if (nd < 2) return 0;
  const size_t bytes = 3 * sizeof *sz * (size_t)nd;
  int p = 0;
  while (p < pg->n_pairs && (pg->pair_n[p] != nd || memcmp(pg->pair_size[p], sz, bytes))) p++;
  if (p == pg->n_pairs) {
    if (p == 16) return 0; /* not drawn: more finger sizes than a task makes */
    memcpy(pg->pair_size[p], sz, bytes);
    pg->pair_n[p] = nd;
    pg->n_pairs++;
    for (int side = 0; side < nd; side++) {
      char *name = pg->pair_body[p][side];
      pair_name(name, sizeof pg->pair_body[p][side], c->joints[dk[side]].link.name, ds[side], p);
      const double x[3] = {0, 0, 0}, q[4] = {1, 0, 0, 0};
      json_t *o = json_pack("{s:s, s:f, s:{s:s, s:o}, s:o, s:o}", "name", name, "mass", 1.0, "shape", "type", "box",
                            "size", cp_seq_vec(sz + 3 * side, 3), "position", cp_seq_vec(x, 3), "orientation",
                            cp_seq_vec(q, 4));
      if (!o || json_array_append_new(pg->bodies, o)) return -1;
      pg->n_free++;
    }
  }
  pg->plan_pair[j] = p;
  return 0;
}

/* The union scene's viewer. */
static int page_create(page *pg, const char *title, cp_error *err) {
  json_t *doc = json_pack("{s:O, s:[]}", "bodies", pg->bodies, "contacts");
  char *text = doc ? json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
  json_decref(doc);
  if (!text) return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory"), -1;
  cp_scene s;
  cp_scene_options so = cp_scene_options_defaults();
  so.check_normal_speed = 0;
  const int rc = cp_scene_parse(text, strlen(text), NULL, &so, &s, err);
  free(text);
  if (rc) return -1;
  cp_viewer_options o = cp_viewer_defaults();
  o.title = title;
  const cp_viewer_status vs = cp_viewer_create(&s, &o, &pg->v, err);
  if (vs == CP_VIEWER_OK) {
    pg->layout_n = cp_viewer_state_size(pg->v);
    pg->state = calloc((size_t)pg->layout_n, sizeof *pg->state);
    /* Every body at its first pose, at rest. */
    int f = 0;
    for (int b = 0; b < s.n_bodies && pg->state; b++) {
      if (s.bodies[b].fixed) continue;
      memcpy(pg->state + 13 * f, s.bodies[b].x, 3 * sizeof(double));
      memcpy(pg->state + 13 * f + 3, s.bodies[b].q, 4 * sizeof(double));
      f++;
    }
  }
  cp_scene_free(&s);
  if (vs != CP_VIEWER_OK) return -1;
  if (!pg->state) return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory"), -1;
  return 0;
}

/* Offset in the page's state of free body `name`, or -1. */
static int page_at(const page *pg, const char *name) {
  size_t i;
  json_t *b;
  int f = 0;
  json_array_foreach(pg->bodies, i, b) {
    if (json_is_true(json_object_get(b, "fixed"))) continue;
    if (!strcmp(json_string_value(json_object_get(b, "name")), name)) return 13 * f;
    f++;
  }
  return -1;
}

/* One phase being replayed. */
typedef struct phase {
  const cp_scene *scene;
  cp_state_layout l;
  cp_chain chain;       /* copy for the fingers' kinematics */
  int has_chain;
  cp_link_state *ls;
  int n_drawn, dk[DRAWN_MAX], ds[DRAWN_MAX]; /* the drawn boxes (drawn_list) */
  int *at;              /* [n_bodies] the page state offset of each body */
  int finger_at[DRAWN_MAX]; /* page offsets of the active set's boxes */
  sheet *sh;
  int compare_joints;   /* not the first phase of a move */
  int broken;           /* the start did not match */
  char why[400];
  double *last;         /* the last frame's state (the search's state: the
                           world's, then the inputs' extra entries) */
  int n_last;
  page *pg;
  int page_failed;
  int nomem;
  double t_end;
} phase;

static void joint_name(const phase *ph, int k, char *buf, size_t n) {
  snprintf(buf, n, "%s/%s", ph->chain.name, ph->chain.joints[k].name);
}

/* A body's 13 state numbers as the next phase's scene holds them: the
 * phase is planned from a scene whose orientation the scene reader divides
 * by its norm (models/scene.c), which moves the last bits of a quaternion
 * the simulation left a rounding off unit length. */
static void as_read(const double *v, double *out) {
  memcpy(out, v, 13 * sizeof *v);
  double *q = out + 3;
  const double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  for (int i = 0; i < 4; ++i) q[i] /= n;
}

/* The start: every body the sequence has left somewhere (its orientation
 * as a scene reads it back), and the gripper's joints inside a move,
 * bitwise where they were left. */
static void check_start(phase *ph, const double *x) {
  const cp_scene *s = ph->scene;
  for (int b = 0; b < s->n_bodies && !ph->broken; b++) {
    const int at = cp_state_body_at(&ph->l, b);
    const known *k = at >= 0 ? find(ph->sh, s->bodies[b].name) : NULL;
    double left[13];
    if (k) as_read(k->v, left);
    if (k && memcmp(left, x + at, 13 * sizeof *x)) {
      ph->broken = 1;
      snprintf(ph->why, sizeof ph->why, "body \"%.100s\" does not start where the previous phase left it",
               s->bodies[b].name);
    }
  }
  for (int j = 0; ph->compare_joints && ph->has_chain && j < ph->chain.n && !ph->broken; j++) {
    char name[200];
    joint_name(ph, j, name, sizeof name);
    const int at = cp_state_joint_at(&ph->l, 0, j);
    const known *k = at >= 0 ? find(ph->sh, name) : NULL;
    if (k && memcmp(k->v, x + at, 2 * sizeof *x)) {
      ph->broken = 1;
      snprintf(ph->why, sizeof ph->why, "joint \"%.100s\" does not start where the previous phase left it", name);
    }
  }
}

/* The page's frame from the phase's state x. */
static void page_frame(phase *ph, const cp_replay_frame *f) {
  page *pg = ph->pg;
  const cp_scene *s = ph->scene;
  for (int b = 0; b < s->n_bodies; b++) {
    const int at = cp_state_body_at(&ph->l, b);
    if (at >= 0 && ph->at[b] >= 0) memcpy(pg->state + ph->at[b], f->state + at, 13 * sizeof(double));
  }
  if (ph->finger_at[0] >= 0) {
    for (int j = 0; j < ph->chain.n; j++) {
      const int at = cp_state_joint_at(&ph->l, 0, j);
      if (at >= 0) {
        ph->chain.joints[j].position = f->state[at];
        ph->chain.joints[j].velocity = f->state[at + 1];
      }
    }
    cp_chain_apply_mimic(&ph->chain);
    cp_chain_kinematics(&ph->chain, ph->ls);
    for (int side = 0; side < ph->n_drawn; side++) {
      if (ph->finger_at[side] < 0) continue;
      const cp_link *lk = &ph->chain.joints[ph->dk[side]].link;
      const cp_link_state *ls = &ph->ls[ph->dk[side]];
      double *o = pg->state + ph->finger_at[side], Rq[4], d[3], sp[3], sq[4];
      const double zero[3] = {0, 0, 0};
      drawn_pose(lk, ph->ds[side], sp, sq);
      cp_m3_mulv(d, ls->R, sp);
      cp_v3_add(o, ls->o, d);
      cp_quat_from_mat(ls->R, Rq);
      cp_quat_mul(o + 3, Rq, sq);
      memcpy(o + 7, zero, sizeof zero);
      memcpy(o + 10, zero, sizeof zero);
    }
  }
  if (cp_viewer_add_frame(pg->v, pg->t0 + f->time, pg->state, 0, NULL) != CP_VIEWER_OK) ph->page_failed = 1;
}

static void on_frame(void *ctx, const cp_replay_frame *f) {
  phase *ph = ctx;
  if (f->step == 0) check_start(ph, f->state);
  if (f->n > ph->n_last) {
    double *g = realloc(ph->last, sizeof *g * (size_t)f->n);
    if (!g) {
      ph->nomem = 1;
      return;
    }
    ph->last = g;
    ph->n_last = f->n;
  }
  memcpy(ph->last, f->state, sizeof *f->state * (size_t)f->n);
  ph->t_end = f->time;
  if (ph->pg && !ph->page_failed && (f->step % FRAME_EVERY == 0)) page_frame(ph, f);
}

/* The sheet after a phase: every body and joint as the phase left it. */
static int remember(phase *ph) {
  const cp_scene *s = ph->scene;
  for (int b = 0; b < s->n_bodies; b++) {
    const int at = cp_state_body_at(&ph->l, b);
    if (at >= 0 && put(ph->sh, s->bodies[b].name, ph->last + at, 13)) return -1;
  }
  for (int j = 0; ph->has_chain && j < ph->chain.n; j++) {
    char name[200];
    joint_name(ph, j, name, sizeof name);
    const int at = cp_state_joint_at(&ph->l, 0, j);
    if (at >= 0 && put(ph->sh, name, ph->last + at, 2)) return -1;
  }
  return 0;
}

/* Replays phase plan `pid` (the j-th of the sequence). */
static cp_replay_status replay_phase(cp_store *st, int64_t pid, int j, int compare_joints, sheet *sh, page *pg,
                                     const cp_sequence_replay_options *o, cp_sequence_replay_result *res,
                                     cp_error *err) {
  cp_replay *r;
  cp_replay_status rs = cp_replay_open(st, pid, &r, err);
  if (rs != CP_REPLAY_OK) return rs;
  phase ph = {.scene = &cp_replay_task(r)->scene, .sh = sh, .compare_joints = compare_joints, .pg = pg};
  const cp_scene *s = ph.scene;
  for (int i = 0; i < DRAWN_MAX; i++) ph.finger_at[i] = -1;
  int nomem = cp_state_layout_init(&ph.l, s);
  if (!nomem && s->n_manips > 0) {
    nomem = cp_chain_copy(&ph.chain, &s->manips[0]) != 0;
    ph.has_chain = !nomem;
    nomem = nomem || !(ph.ls = malloc(sizeof *ph.ls * (size_t)ph.chain.n));
    double sz[3 * DRAWN_MAX];
    ph.n_drawn = ph.has_chain ? drawn_list(&ph.chain, ph.dk, ph.ds, sz) : 0;
  }
  if (!nomem && pg) {
    nomem = !(ph.at = malloc(sizeof *ph.at * (size_t)(s->n_bodies + 1)));
    for (int b = 0; !nomem && b < s->n_bodies; b++) ph.at[b] = page_at(pg, s->bodies[b].name);
    const int p = pg->plan_pair[j];
    if (!nomem && p >= 0 && ph.n_drawn >= 2) {
      char name[96];
      for (int side = 0; side < ph.n_drawn; side++) {
        pair_name(name, sizeof name, ph.chain.joints[ph.dk[side]].link.name, ph.ds[side], p);
        ph.finger_at[side] = page_at(pg, name);
      }
    }
  }
  cp_replay_result rr;
  memset(&rr, 0, sizeof rr);
  if (nomem) {
    rs = CP_REPLAY_NOMEM;
    cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  } else {
    cp_replay_options ro = cp_replay_defaults();
    ro.verify = o->verify;
    ro.tolerance = o->tolerance;
    ro.frame = on_frame;
    ro.ctx = &ph;
    rs = cp_replay_run(r, &ro, &rr);
    res->plans++;
    res->steps += rr.steps;
    if (o->verify) res->max_deviation = fmax(res->max_deviation, rr.max_deviation);
    if (pg) pg->t0 += ph.t_end;
    if (rs == CP_REPLAY_MISMATCH && !res->first_plan) {
      res->first_plan = pid;
      snprintf(res->message, sizeof res->message, "plan %lld does not replay as stored: %.500s", (long long)pid,
               rr.message);
    } else if (rs == CP_REPLAY_FAILED || rs == CP_REPLAY_NOMEM) {
      snprintf(res->message, sizeof res->message, "plan %lld: %.500s", (long long)pid, rr.message);
    }
    if (rs == CP_REPLAY_OK || rs == CP_REPLAY_MISMATCH) {
      res->duration += ph.t_end;
      if (ph.broken && res->chained) {
        res->chained = 0;
        if (!res->first_plan) {
          res->first_plan = pid;
          snprintf(res->message, sizeof res->message, "plan %lld: %s", (long long)pid, ph.why);
        }
      }
      if (ph.nomem || !ph.last || remember(&ph)) {
        rs = CP_REPLAY_NOMEM;
        cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
      }
      if (ph.page_failed) {
        rs = CP_REPLAY_FAILED;
        snprintf(res->message, sizeof res->message, "the page refused a frame: %.500s", cp_viewer_message(pg->v));
      }
    }
  }
  free(ph.at);
  free(ph.ls);
  free(ph.last);
  if (ph.has_chain) cp_chain_free(&ph.chain);
  cp_state_layout_free(&ph.l);
  cp_replay_close(r);
  return rs;
}

/* A removal stage (docs/assembly.md, "Temporary parts"): its part was
 * placed by an earlier stage of the sequence. */
static int is_removal(const cp_store_sequence_info *info, int k) {
  for (int i = 0; i < k; i++)
    if (!strcmp(info->stages[i].part, info->stages[k].part)) return 1;
  return 0;
}

/* The page's note for plan i of stage k: the stage, the part, the move
 * and the stored phase; the certificate from the last move's release on. */
static void note(const cp_store_sequence_info *info, int k, int i, int removal, char *buf, size_t n) {
  const cp_store_stage_info *s = &info->stages[k];
  const int move = s->moves[i], moves = s->n_plans ? s->moves[s->n_plans - 1] + 1 : 1;
  int w = snprintf(buf, n, "stage %d of %d: %s, %s%s", k + 1, info->n_stages, s->part,
                   removal ? "removal, " : moves > 1 ? (move + 1 < moves ? "regrasp move, " : "final move, ") : "",
                   s->phases[i]);
  const int released = move + 1 == moves && (!strcmp(s->phases[i], "release") || !strcmp(s->phases[i], "retreat"));
  if (released && s->certified && w > 0 && (size_t)w < n)
    w += snprintf(buf + w, n - (size_t)w, " -- certified %s, %.3g mm / %.3g deg from %s", s->stability ? s->stability : "?",
                  1e3 * s->position_error, s->angle_error * (180 / 3.14159265358979323846),
                  removal ? "its staging pose" : "design");
  /* What an undecided verdict does certify, and what it leaves open. */
  if (released && s->certified && s->stability && !strcmp(s->stability, "stable_undecided") && w > 0 &&
      (size_t)w < n)
    snprintf(buf + w, n - (size_t)w, " (an equilibrium: weakly stable at least; strong vs weak open)");
}

cp_replay_status cp_sequence_replay(cp_store *st, int64_t id, const cp_sequence_replay_options *opt,
                                    cp_sequence_replay_result *res, cp_error *err) {
  const cp_sequence_replay_options o = opt ? *opt : cp_sequence_replay_defaults();
  memset(res, 0, sizeof *res);
  res->verified = -1;
  res->chained = 1;
  cp_store_sequence_info info;
  if (cp_store_sequence_read(st, id, &info, err))
    return err->code == CP_ERR_INPUT ? CP_REPLAY_BAD_INPUT : err->code == CP_ERR_NOMEM ? CP_REPLAY_NOMEM : CP_REPLAY_FAILED;
  res->sequence_id = info.id;
  res->stages = info.n_stages;
  int total = 0;
  for (int k = 0; k < info.n_stages; k++) total += info.stages[k].n_plans;
  sheet sh = {0};
  page pg = {0};
  page *pp = NULL;
  cp_replay_status rs = CP_REPLAY_OK;
  char title[200];
  if (o.html && total == 0) {
    cp_error_setc(err, CP_ERR_INPUT, "assembly_stages", "sequence %lld has no certified stage: nothing to draw",
                  (long long)info.id);
    cp_store_sequence_info_free(&info);
    return CP_REPLAY_BAD_INPUT;
  }
  if (o.html) {
    pp = &pg;
    pg.bodies = json_array();
    pg.plan_pair = malloc(sizeof *pg.plan_pair * (size_t)(total + 1));
    pg.shown_pair = -1;
    if (!pg.bodies || !pg.plan_pair) {
      rs = CP_REPLAY_NOMEM;
      cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
    }
    for (int k = 0, j = 0; rs == CP_REPLAY_OK && k < info.n_stages; k++)
      for (int i = 0; rs == CP_REPLAY_OK && i < info.stages[k].n_plans; i++, j++) {
        cp_replay *r;
        rs = cp_replay_open(st, info.stages[k].plan_ids[i], &r, err);
        if (rs != CP_REPLAY_OK) break;
        if (page_collect(&pg, &cp_replay_task(r)->scene, j)) {
          rs = CP_REPLAY_NOMEM;
          cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
        }
        cp_replay_close(r);
      }
    snprintf(title, sizeof title, "complan replay: sequence %lld", (long long)info.id);
    if (rs == CP_REPLAY_OK && page_create(&pg, o.title ? o.title : title, err))
      rs = err->code == CP_ERR_NOMEM ? CP_REPLAY_NOMEM : CP_REPLAY_FAILED;
  }
  int mismatch = 0;
  for (int k = 0, j = 0; (rs == CP_REPLAY_OK || rs == CP_REPLAY_MISMATCH) && k < info.n_stages; k++) {
    const cp_store_stage_info *s = &info.stages[k];
    const int removal = is_removal(&info, k);
    /* the stored moves: a new move starts the gripper afresh above the
     * part, so its joints are compared only inside a move */
    for (int i = 0; (rs == CP_REPLAY_OK || rs == CP_REPLAY_MISMATCH) && i < s->n_plans; i++, j++) {
      if (pp) {
        char text[400];
        note(&info, k, i, removal, text, sizeof text);
        const int p = pg.plan_pair[j];
        if (p != pg.shown_pair) {
          for (int q = 0; q < pg.n_pairs; q++)
            for (int side = 0; side < pg.pair_n[q]; side++) cp_viewer_show(pg.v, pg.pair_body[q][side], q == p);
          pg.shown_pair = p;
        }
        cp_viewer_note(pg.v, text);
      }
      rs = replay_phase(st, s->plan_ids[i], j, i > 0 && s->moves[i] == s->moves[i - 1], &sh, pp, &o, res, err);
      if (rs == CP_REPLAY_MISMATCH) mismatch = 1, rs = CP_REPLAY_OK;
    }
  }
  if (rs == CP_REPLAY_OK && mismatch) rs = CP_REPLAY_MISMATCH;
  if (o.verify && (rs == CP_REPLAY_OK || rs == CP_REPLAY_MISMATCH)) res->verified = !mismatch;
  if (rs == CP_REPLAY_OK && !res->chained) rs = CP_REPLAY_MISMATCH;
  if (pp && pg.v) {
    res->frames = cp_viewer_frame_count(pg.v);
    if (rs == CP_REPLAY_OK || rs == CP_REPLAY_MISMATCH) {
      const cp_viewer_status vs = cp_viewer_write(pg.v, o.html);
      if (vs != CP_VIEWER_OK) {
        cp_error_setc(err, vs == CP_VIEWER_NOMEM ? CP_ERR_NOMEM : CP_ERR_IO, o.html, "%s",
                      cp_viewer_message(pg.v));
        rs = vs == CP_VIEWER_NOMEM ? CP_REPLAY_NOMEM : CP_REPLAY_BAD_INPUT;
      }
    }
    cp_viewer_destroy(pg.v);
  }
  json_decref(pg.bodies);
  free(pg.plan_pair);
  free(pg.state);
  free(sh.k);
  cp_store_sequence_info_free(&info);
  return rs;
}

char *cp_sequence_phases_json(cp_store *st, int64_t id, cp_error *err) {
  cp_store_sequence_info info;
  if (cp_store_sequence_read(st, id, &info, err)) return NULL;
  json_t *a = json_array();
  for (int k = 0; a && k < info.n_stages; k++) {
    const cp_store_stage_info *s = &info.stages[k];
    for (int i = 0; i < s->n_plans; i++)
      json_array_append_new(a, json_pack("{s:I, s:i, s:s, s:i, s:s}", "plan", (json_int_t)s->plan_ids[i], "stage", k,
                                         "part", s->part, "move", s->moves[i], "phase", s->phases[i]));
  }
  cp_store_sequence_info_free(&info);
  char *text = a ? json_dumps(a, JSON_COMPACT) : NULL;
  json_decref(a);
  if (!text) cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  return text;
}
