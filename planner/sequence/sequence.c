/* Executing an assembly sequence with the gripper (planner/sequence/
 * sequence.h): the order, then per part the grasps in rank order, each
 * tried through seven planned and simulated phases and certified. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/clock.h"
#include "models/vec3.h"
#include "planner/assembly/assembly.h"
#include "planner/plan/plan.h"
#include "planner/sequence/sequence_impl.h"
#include "planner/sim/statelayout.h"

#define GRIPPER "gripper"
#define ACTION_T 0.2
#define ACTION_DT 0.002

static const char *const phase_names[CP_SEQUENCE_WITHDRAW + 1] = {
    "approach", "grasp", "lift", "turn", "transport", "place", "release", "retreat", "withdraw"};

const char *cp_sequence_phase_name(int k) {
  return k >= 0 && k <= CP_SEQUENCE_WITHDRAW ? phase_names[k] : "?";
}

const char *cp_sequence_status_name(cp_sequence_status s) {
  static const char *const n[] = {"solved", "none", "limit", "failed"};
  return s <= CP_SEQUENCE_FAILED ? n[s] : "?";
}

void cp_sequence_result_free(cp_sequence_result *res) {
  free(res->order);
  free(res->stages);
  memset(res, 0, sizeof *res);
}

/* The simulated world between phases: each part's 13 state numbers (x, q,
 * v, w; placed parts and the part carried), the gripper's joints. */
typedef struct world_state {
  double *part;        /* [13 n_parts] */
  uint64_t placed;     /* parts standing in the assembly */
  int carried;         /* the part being handled */
  double q[5], qd[5];  /* gripper x, y, z, gap, roll (the wrist) */
} world_state;

typedef struct attempt {
  const cp_sequence_task *t;
  cp_store *st;
  const cp_sequence_grasp *g;
  const double *to;    /* where the part goes: x y z qw qx qy qz */
  world_state *w;
  double t0, zt, close, open; /* the gap's targets: closed, open */
  char *hand_text;     /* the Panda hand: this phase's URDF, served as */
  char hand_name[64];  /* this file name */
  int wrist;           /* the grasp turns the part: the chain has a roll joint */
  double roll_at;      /* the Panda's wrist: its absolute target when held */
  const double *withdraw; /* a removal: the horizontal way out (else NULL) */
  double withdraw_dist;   /* how far the part's centre goes along it */
  cp_sequence_result *res;
  int n_plans;
  int64_t plan_ids[CP_SEQUENCE_PHASES];
  unsigned char plan_phase[CP_SEQUENCE_PHASES]; /* each plan's phase index */
  char why[512];
  int limit;
  cp_store *dry;       /* set: phases are planned in this scratch store and
                        * not recorded (the transport servo's trial runs) */
  long nodes;          /* set: the node limit of the phase (else the task's) */
} attempt;

/* Joint k of the gripper's chain -> index into world_state.q. */
static int joint_slot(const attempt *a, int k) {
  static const int plain[] = {0, 1, 2, 3}, wrist[] = {0, 1, 2, 4, 3};
  if (k >= 4 + a->wrist) return -1; /* the Panda's mimic finger: not kept */
  return a->wrist ? wrist[k] : plain[k];
}

static json_t *gripper_json(attempt *a) {
  const cp_sequence_task *t = a->t;
  if (t->gripper.panda)
    return cp_seq_hand_json(&t->gripper, a->g->dir, a->wrist, a->w->q, a->w->qd, &a->hand_text, a->hand_name,
                            sizeof a->hand_name);
  const cp_sequence_gripper *gr = &t->gripper;
  const double M = gr->carriage_mass, zero[3] = {0, 0, 0}, *fs = a->g->finger;
  const double off = a->g->width / 2 + gr->clearance + fs[0] / 2;
  double qf[4], lx[3], rx[3];
  cp_seq_yaw_quat(a->g->dir, qf);
  cp_v3_scale(lx, a->g->dir, -off);
  cp_v3_scale(rx, a->g->dir, off);
  const double ax[3][3] = {{1, 0, 0}, {0, 1, 0}, {0, 0, 1}};
  /* x, y, z carriages; [roll: the wrist about the grasp axis]; the left
   * finger on the last of them; the gap. */
  const int n = a->wrist ? 5 : 4, left = n - 2;
  json_t *joints = json_array();
  for (int k = 0; k < n; k++) {
    const int gap = k == n - 1, roll = a->wrist && k == 3;
    const double m = gap ? CP_SEQ_FINGER_MASS : M, in = gap ? 1e-5 : 1e-3 * M;
    const char *name = gap ? "gap" : roll ? CP_SEQ_WRIST_JOINT : k == 0 ? "x" : k == 1 ? "y" : "z";
    const char *lname = gap ? "rfinger" : k == left ? "lfinger" : k == 0 ? "carriage_x" : k == 1 ? "carriage_y"
                                                                                               : "carriage_z";
    json_t *link = json_pack("{s:s, s:f, s:o, s:[[f,f,f],[f,f,f],[f,f,f]]}", "name", lname, "mass", m, "com",
                             cp_seq_vec(zero, 3), "inertia", in, 0.0, 0.0, 0.0, in, 0.0, 0.0, 0.0, in);
    if (k >= left) {
      json_object_set_new(link, "shape", json_pack("{s:s, s:o}", "type", "box", "size", cp_seq_vec(fs, 3)));
      json_object_set_new(link, "shape_origin", json_pack("{s:o, s:o}", "position",
                                                          cp_seq_vec(k == left ? lx : zero, 3), "orientation",
                                                          cp_seq_vec(qf, 4)));
    }
    const int slot = joint_slot(a, k);
    json_t *j = json_pack("{s:s, s:s, s:o, s:f, s:f, s:o}", "name", name, "type", roll ? "revolute" : "prismatic",
                          "axis", cp_seq_vec(gap || roll ? a->g->dir : ax[k], 3), "position", a->w->q[slot],
                          "velocity", a->w->qd[slot], "link", link);
    if (gap) json_object_set_new(j, "origin", json_pack("{s:o}", "position", cp_seq_vec(rx, 3)));
    json_array_append_new(joints, j);
  }
  return json_pack("{s:s, s:o}", "name", GRIPPER, "joints", joints);
}

/* The phase's scene: fixed bodies as designed, the placed parts and the
 * carried one as simulated, the gripper. */
static json_t *scene_json(attempt *a) {
  const cp_sequence_task *t = a->t;
  json_t *sc = json_object(), *bodies = json_array();
  json_object_set_new(sc, "gravity", cp_seq_vec(t->scene.gravity, 3));
  for (int b = 0; b < t->scene.n_bodies; b++) {
    const cp_body *bd = &t->scene.bodies[b];
    if (bd->fixed) json_array_append_new(bodies, cp_seq_body_json(bd, bd->x, bd->q, NULL, NULL));
  }
  for (int k = 0; k < t->n_parts; k++) {
    if (!(a->w->placed >> k & 1) && k != a->w->carried) continue;
    const double *s = a->w->part + 13 * k;
    json_array_append_new(bodies, cp_seq_body_json(&t->scene.bodies[t->part_body[k]], s, s + 3, s + 7, s + 10));
  }
  json_object_set_new(sc, "friction", cp_seq_friction_json(&t->scene, bodies, GRIPPER, t->gripper.mu));
  json_object_set_new(sc, "bodies", bodies);
  json_object_set_new(sc, "manipulators", json_pack("[o]", gripper_json(a)));
  if (t->gripper.packages) json_object_set_new(sc, "packages", json_loads(t->gripper.packages, 0, NULL));
  return sc;
}

/* A target input: relative steps (values, n of them) or absolute. */
static json_t *input(const double *values, int n, int relative, double stiffness) {
  json_t *in = json_pack("{s:s, s:o}", "kind", "target", "values", cp_seq_vec(values, n));
  if (relative) json_object_set_new(in, "relative", json_true());
  if (stiffness > 0) json_object_set_new(in, "stiffness", json_real(stiffness));
  return in;
}

/* Inputs of a phase: per carriage axis the relative step (0: held), the
 * gap's absolute target. With ways 2 a moving axis may also hold (choice
 * 0); with ways 1 it has the step alone (every action the same). Every carriage joint is critically damped at
 * w = sqrt(acceleration / step): a step from rest starts at the transport
 * acceleration (w^2 step) and, over an action of 0.2 s, covers all but
 * (1 + 0.2 w) e^(-0.2 w) of itself (5e-4 at the defaults, w = 50). */
static json_t *inputs_json(const attempt *a, const double *step, double gap, int ways) {
  const cp_sequence_task *t = a->t;
  json_t *in = json_object();
  static const char *const names[] = {GRIPPER "/x", GRIPPER "/y", GRIPPER "/z"};
  const double M = t->gripper.carriage_mass, w = sqrt(t->acceleration / t->step);
  const double finger = t->gripper.panda ? CP_SEQ_PANDA_MASS : CP_SEQ_FINGER_MASS;
  for (int k = 0; k < 3; k++) {
    const double v[3] = {step[k], 0, -step[k]};
    const double held = (3 - k + a->wrist) * M + finger;
    const int n = fabs(step[k]) > 1e-12 ? ways : 1;
    json_object_set_new(in, names[k], input(v, n, 1, held * w * w));
  }
  if (a->wrist && t->gripper.panda) {
    /* The Panda's wrist, stiffer than the default gains: the torque of a
     * part held off its centre (which the PD law's gravity term does not
     * know) sags it by ~0.3 mrad a step instead of ~1.5, and relative
     * steps add the sags up. Out of the turn it is held at an absolute
     * target (roll_at), so no sag adds up over a phase's actions. */
    const double turn[2] = {step[3], 0};
    if (fabs(step[3]) > 1e-12)
      json_object_set_new(in, GRIPPER "/roll", input(turn, 2, 1, CP_SEQ_PANDA_WRIST_STIFFNESS));
    else
      json_object_set_new(in, GRIPPER "/roll", input(&a->roll_at, 1, 0, CP_SEQ_PANDA_WRIST_STIFFNESS));
  } else if (a->wrist) {
    /* The wrist: default gains (docs/planner.md), steps or holds. */
    const double v[2] = {step[3], 0};
    json_object_set_new(in, GRIPPER "/roll", input(v, fabs(step[3]) > 1e-12 ? 2 : 1, 1, 0));
  }
  json_object_set_new(in, t->gripper.panda ? GRIPPER "/panda_finger_joint1" : GRIPPER "/gap",
                      input(&gap, 1, 0, t->gripper.stiffness));
  return in;
}

static const char *part_name(const attempt *a) {
  return a->t->scene.bodies[a->t->part_body[a->w->carried]].name;
}

/* Plans one phase and moves the world to its plan's last state. */
static int run_phase(attempt *a, int phase, json_t *inputs, json_t *goal) {
  const cp_sequence_task *t = a->t;
  const double left = t->seconds - (cp_clock_now() - a->t0);
  if (left <= 0) {
    json_decref(inputs);
    json_decref(goal);
    a->limit = 1;
    snprintf(a->why, sizeof a->why, "the time limit (%.4g s) ran out", t->seconds);
    return -1;
  }
  char name[128];
  snprintf(name, sizeof name, "%s %s", part_name(a), phase_names[phase]);
  double lo[3], hi[3];
  for (int i = 0; i < 3; i++) lo[i] = -10, hi[i] = 10;
  lo[2] = -0.05;
  json_t *task = json_pack("{s:s, s:o, s:s, s:o, s:{s:f, s:f}, s:o, s:{s:o, s:o}, s:{s:f},"
                           " s:{s:s, s:f, s:{s:f, s:f, s:f}, s:f, s:i}, s:{s:i, s:f}}",
                           "name", name, "scene", scene_json(a), "mode", "dynamic", "inputs", inputs, "action",
                           "duration", ACTION_T, "dt", ACTION_DT, "goal", goal, "bounds", "min", cp_seq_vec(lo, 3),
                           "max", cp_seq_vec(hi, 3), "cost", "time", 1.0, "search", "method", "astar", "weight",
                           2.0, "resolution", "position", 0.001, "angle", 0.02, "velocity", 0.02, "speed", t->step / ACTION_T,
                           "seed", 1, "limits", "nodes", (int)(a->nodes ? a->nodes : t->nodes), "seconds", left);
  char *text = task ? json_dumps(task, JSON_COMPACT | JSON_REAL_PRECISION(17)) : NULL;
  json_decref(task);
  if (!text) {
    free(a->hand_text);
    a->hand_text = NULL;
    snprintf(a->why, sizeof a->why, "out of memory");
    return -2;
  }
  cp_task pt;
  cp_error e;
  /* the Panda hand's URDF is served from memory (and recorded with the plan) */
  cp_seq_hand_file hf = {a->hand_name, a->hand_text};
  const cp_file_source src = {cp_seq_hand_read, NULL, &hf};
  int rc = cp_task_parse_from(text, strlen(text), t->path, a->hand_text ? &src : NULL, &pt, &e);
  free(text);
  free(a->hand_text);
  a->hand_text = NULL;
  if (rc) {
    snprintf(a->why, sizeof a->why, "%s: phase task refused at %.60s: %.100s", name, e.where, e.msg);
    return -2;
  }
  cp_plan_options po = cp_plan_defaults();
  po.task_path = t->path;
  cp_plan_result pr;
  cp_store *st = a->dry ? a->dry : a->st;
  cp_plan_status ps = cp_plan_task(st, &pt, &po, &pr, &e);
  a->res->plans += !a->dry;
  a->res->lcp_solves += pr.stats.lcp_solves;
  if (ps == CP_PLAN_FAILED || ps == CP_PLAN_BAD_INPUT) {
    snprintf(a->why, sizeof a->why, "%s: %.150s", name, e.msg);
    cp_task_free(&pt);
    return -2;
  }
  if (ps != CP_PLAN_SOLVED) {
    snprintf(a->why, sizeof a->why, "%s: no plan (%s after %ld nodes)", name, cp_plan_status_name(ps), pr.nodes);
    a->limit = ps == CP_PLAN_LIMIT && cp_clock_now() - a->t0 >= t->seconds;
    cp_task_free(&pt);
    return -1;
  }
  if (!a->dry) {
    a->plan_phase[a->n_plans] = (unsigned char)phase;
    a->plan_ids[a->n_plans++] = pr.plan_id;
  }
  /* The plan's last state. */
  cp_state_layout l;
  long *ids = NULL, n = 0;
  int64_t run;
  double *x = NULL;
  rc = -2;
  if (!cp_state_layout_init(&l, &pt.scene) && (x = malloc(sizeof *x * (size_t)l.n)) &&
      cp_store_plan_nodes(st, pr.plan_id, &run, &ids, &n) == CP_STORE_OK && n > 0) {
    cp_search_node node;
    if (cp_store_load_node(st, run, ids[n - 1], &node, x, l.n, NULL, 0, NULL) == CP_STORE_OK) {
      for (int b = 0; b < pt.scene.n_bodies; b++) {
        const int at = cp_state_body_at(&l, b);
        if (at < 0) continue;
        for (int k = 0; k < t->n_parts; k++)
          if (!strcmp(t->scene.bodies[t->part_body[k]].name, pt.scene.bodies[b].name))
            memcpy(a->w->part + 13 * k, x + at, sizeof *x * 13);
      }
      for (int k = 0; k < pt.scene.manips[0].n; k++) {
        const int at = cp_state_joint_at(&l, 0, k), slot = joint_slot(a, k);
        if (at < 0) continue; /* the Panda's mimic finger */
        a->w->q[slot] = x[at];
        a->w->qd[slot] = x[at + 1];
      }
      rc = 0;
    }
  }
  if (rc) snprintf(a->why, sizeof a->why, "%s: reading the plan back failed: %.120s", name, cp_store_message(st));
  free(ids);
  free(x);
  cp_state_layout_free(&l);
  cp_task_free(&pt);
  return rc;
}

static json_t *joint_goal(const char *joint, double position, json_t *extra) {
  json_t *g = json_pack("{s:[{s:s, s:f, s:f}]}", "joints", "joint", joint, "position", position, "tolerance",
                        0.001);
  if (extra) {
    json_object_update(g, extra);
    json_decref(extra);
  }
  return g;
}

/* n equal relative steps covering d with none longer than step. */
static double step_of(double d, double step) {
  const double n = fmax(1, ceil(fabs(d) / step - 1e-9));
  return d / n;
}

/* The transport at a straight line: n equal carriage moves (x, y) adding
 * up to d from the carriage's position q0, every action the same; the
 * phase ends when both carriage joints are within a quarter move of q0 + d
 * (after the n-th action; n + 2 nodes at most). */
static int straight(attempt *a, const double *d, double n, const double *q0) {
  const double mv[4] = {d[0] / n, d[1] / n, 0, 0};
  const double tol = fmax(1e-6, 0.25 * fmax(fabs(mv[0]), fabs(mv[1])));
  json_t *g = json_pack("{s:[{s:s, s:f, s:f}, {s:s, s:f, s:f}]}", "joints", "joint", GRIPPER "/x", "position",
                        q0[0] + d[0], "tolerance", tol, "joint", GRIPPER "/y", "position", q0[1] + d[1],
                        "tolerance", tol);
  a->nodes = (long)n + 2;
  const int rc = run_phase(a, 4, inputs_json(a, mv, a->close, 1), g);
  a->nodes = 0;
  return rc;
}

/* The transport servo (docs/assembly.md, "Transport"): the carried part
 * goes above its place on a straight carriage line; where it ends is
 * measured in the simulated state, the line's end is moved by the
 * remaining error and the line simulated again (with the contact model,
 * in a scratch store), up to SERVO_RUNS times, until the part ends within
 * half of tol (per axis) of the place; the best line (within tol) is then
 * planned into the store, which reproduces the trial bitwise. 0, -1 (why),
 * -2 as run_phase. */
#define SERVO_RUNS 5
static int transport(attempt *a, double tol) {
  const cp_sequence_task *t = a->t;
  world_state *w = a->w;
  const int p = w->carried;
  const size_t bytes = sizeof *w->part * 13 * (size_t)t->n_parts;
  double *part0 = malloc(bytes), q[5], qd[5];
  cp_store *scratch = NULL;
  char msg[256];
  if (!part0 || cp_store_open(":memory:", 0, &scratch, msg, sizeof msg) != CP_STORE_OK) {
    free(part0);
    snprintf(a->why, sizeof a->why, "transport servo: %s", part0 ? msg : "out of memory");
    return -2;
  }
  memcpy(part0, w->part, bytes);
  memcpy(q, w->q, sizeof q);
  memcpy(qd, w->qd, sizeof qd);
  const double *x0 = part0 + 13 * p, *to = a->to;
  double d[2] = {to[0] - x0[0], to[1] - x0[1]}, best_d[2] = {d[0], d[1]}, best = INFINITY;
  const double n = fmax(1, ceil(fmax(fabs(d[0]), fabs(d[1])) / t->step - 1e-9));
  int rc = 0, runs = 0;
  while (rc == 0 && runs < SERVO_RUNS && best > 0.5 * tol) {
    memcpy(w->part, part0, bytes);
    memcpy(w->q, q, sizeof q);
    memcpy(w->qd, qd, sizeof qd);
    a->dry = scratch;
    rc = straight(a, d, n, q);
    a->dry = NULL;
    runs++;
    if (rc) break;
    const double *x = w->part + 13 * p, e[2] = {to[0] - x[0], to[1] - x[1]};
    const double err = fmax(fabs(e[0]), fabs(e[1]));
    if (err < best) best = err, best_d[0] = d[0], best_d[1] = d[1];
    /* a part that lags a whole step has slipped in the grasp: no servo */
    if (err > t->step) break;
    d[0] += e[0];
    d[1] += e[1];
  }
  cp_store_close(scratch);
  memcpy(w->part, part0, bytes);
  memcpy(w->q, q, sizeof q);
  memcpy(w->qd, qd, sizeof qd);
  free(part0);
  if (rc) return rc;
  if (best > tol) {
    snprintf(a->why, sizeof a->why, "%s transport: the part ends %.3g mm from above its place after %d servo runs",
             part_name(a), 1e3 * best, runs);
    return -1;
  }
  return straight(a, best_d, n, q);
}

/* The seven phases of one grasp. 0, -1 (a phase found no plan: the
 * grasp fails) or -2 (storage, memory: the whole sequence fails). */
static int execute(attempt *a) {
  const cp_sequence_task *t = a->t;
  world_state *w = a->w;
  const int p = w->carried;
  const char *part = t->scene.bodies[t->part_body[p]].name;
  const double *to = a->to;
  double *s = w->part + 13 * p, dz[4] = {0, 0, 0, 0};
  const double open = a->open;
  const int panda = t->gripper.panda;
  const char *lf = panda ? GRIPPER "/panda_leftfinger" : GRIPPER "/lfinger";
  const char *rf = panda ? GRIPPER "/panda_rightfinger" : GRIPPER "/rfinger";
  int rc;
  /* the grasp point's height above the part's centre (a shifted grasp's
   * vertical part) */
  const double off = a->g->offset + a->g->shift[2];
  /* approach: down to the grasp height */
  dz[2] = step_of(s[2] + off - w->q[2], t->step);
  if ((rc = run_phase(a, 0, inputs_json(a, dz, open, 2), joint_goal(GRIPPER "/z", s[2] + off, NULL)))) return rc;
  /* grasp: close until both fingers touch and the part is at rest */
  dz[2] = 0;
  json_t *g = json_pack("{s:[[s,s],[s,s]], s:[s]}", "contacts", part, lf, part, rf, "at_rest", part);
  if ((rc = run_phase(a, 1, inputs_json(a, dz, a->close, 2), g))) return rc;
  if (a->withdraw) {
    /* withdraw: along the free horizontal axis until the part is clear */
    const int ax = fabs(a->withdraw[0]) > 0.5 ? 0 : 1;
    const double sign = a->withdraw[ax] > 0 ? 1 : -1, target = s[ax] + sign * a->withdraw_dist;
    double mv[4] = {0, 0, 0, 0};
    mv[ax] = step_of(sign * a->withdraw_dist, t->step);
    json_t *lim = json_pack("[n,n,n]");
    json_array_set_new(lim, (size_t)ax, json_real(target - sign * 0.005));
    g = json_pack("{s:s, s:o}", "body", part, sign > 0 ? "min" : "max", lim);
    if ((rc = run_phase(a, CP_SEQUENCE_WITHDRAW, inputs_json(a, mv, a->close, 2), g))) return rc;
  }
  /* lift to the transport height */
  dz[2] = step_of(a->zt + off - w->q[2], t->step);
  g = json_pack("{s:s, s:[n,n,f]}", "body", part, "min", a->zt - 0.005);
  if ((rc = run_phase(a, 2, inputs_json(a, dz, a->close, 2), g))) return rc;
  dz[2] = 0;
  /* turn: the wrist rolls the part into its design orientation, held: both
   * fingers touch it at the goal node and its bottom is clear (half the
   * clearance) above everything it could rest on, so a part flung out of
   * the fingers that lands in that orientation is no turn */
  if (a->wrist) {
    dz[3] = step_of(a->g->turn, 0.2);
    double half[3];
    cp_seq_box_aabb(t->scene.bodies[t->part_body[p]].shape.size, to + 3, half);
    g = json_pack("{s:s, s:o, s:f, s:[n,n,f], s:[[s,s],[s,s]]}", "body", part, "orientation", cp_seq_vec(to + 3, 4),
                  "angle_tolerance", fmax(0.5 * t->tol_angle, 0.005), "min",
                  cp_seq_top(t) + half[2] + 0.5 * t->clearance, "contacts", part, lf, part, rf);
    if ((rc = run_phase(a, 3, inputs_json(a, dz, a->close, 2), g))) return rc;
    dz[3] = 0;
    a->roll_at = a->g->turn;
  }
  /* transport above the design pose */
  /* The phases aim at half the placement tolerance (at least 0.5 mm, what
   * the carriage's steps resolve); the certificate checks the tolerance. */
  const double tol = fmax(0.5 * t->tol_position, 5e-4);
  if ((rc = transport(a, tol))) return rc;
  /* place: down along the approach direction to the design pose */
  dz[2] = step_of(to[2] - s[2], t->step);
  g = json_pack("{s:s, s:o, s:f, s:[s]}", "body", part, "position", cp_seq_vec(to, 3), "tolerance", tol,
                "at_rest", part);
  if ((rc = run_phase(a, 5, inputs_json(a, dz, a->close, 2), g))) return rc;
  /* release: open, everything at rest */
  dz[2] = 0;
  if ((rc = run_phase(a, 6, inputs_json(a, dz, open, 2), joint_goal(panda ? GRIPPER "/panda_finger_joint1" : GRIPPER "/gap", open, json_pack("{s:b}", "at_rest", 1)))))
    return rc;
  /* retreat: back up to the transport height */
  dz[2] = step_of(a->zt + off - w->q[2], t->step);
  return run_phase(a, 7, inputs_json(a, dz, open, 2), joint_goal(GRIPPER "/z", a->zt + off, NULL));
}

/* The certificate after a stage: the subassembly's verdict on the
 * simulated poses and every placed part's pose error. 0 certified, -1
 * not (a->why says why), -2 failure. */
static int certify(attempt *a, cp_sequence_stage *stage, double *worst_pos, double *worst_ang) {
  const cp_sequence_task *t = a->t;
  cp_scene s = t->scene; /* shallow: only the bodies array is replaced */
  s.bodies = malloc(sizeof *s.bodies * (size_t)t->scene.n_bodies);
  if (!s.bodies) return -2;
  memcpy(s.bodies, t->scene.bodies, sizeof *s.bodies * (size_t)t->scene.n_bodies);
  *worst_pos = *worst_ang = 0;
  /* The placed part moved most beyond the tolerances (relative to them),
   * other than this stage's: a part the stage knocked. */
  int knocked = -1;
  double knocked_by = 1, knocked_pos = 0, knocked_ang = 0;
  for (int k = 0; k < t->n_parts; k++) {
    if (!(a->w->placed >> k & 1)) continue;
    cp_body *bd = &s.bodies[t->part_body[k]];
    const double *x = a->w->part + 13 * k, *d = t->scene.bodies[t->part_body[k]].x;
    const double e[3] = {x[0] - d[0], x[1] - d[1], x[2] - d[2]};
    const double ep = cp_v3_norm(e), ea = cp_seq_quat_angle(x + 3, bd->q);
    *worst_pos = fmax(*worst_pos, ep);
    *worst_ang = fmax(*worst_ang, ea);
    const double by = fmax(ep / t->tol_position, ea / t->tol_angle);
    if (k != stage->part && by > knocked_by) {
      knocked = k;
      knocked_by = by;
      knocked_pos = ep;
      knocked_ang = ea;
    }
    if (k == stage->part) {
      stage->position_error = ep;
      stage->angle_error = ea;
      memcpy(stage->pose, x, sizeof stage->pose);
    }
    memcpy(bd->x, x, sizeof bd->x);
    memcpy(bd->q, x + 3, sizeof bd->q);
  }
  if (knocked >= 0) {
    /* Named before the verdict: a knocked part also leaves the
     * subassembly unstable, and the knock is the cause. */
    free(s.bodies);
    snprintf(a->why, sizeof a->why, "%s %.60s knocked %.60s: it is %.3g mm / %.3g deg from its design pose",
             a->withdraw ? "removing" : "placing", part_name(a), t->scene.bodies[t->part_body[knocked]].name, 1e3 * knocked_pos,
             knocked_ang * (180 / 3.14159265358979323846));
    return -1;
  }
  /* Resting contacts sit within the simulator's drift of touching. */
  s.touch_tolerance = fmax(s.touch_tolerance, 1e-4);
  s.contacts = NULL;
  s.n_contacts = 0;
  cp_assembly_options ao = cp_assembly_defaults();
  /* The node budget decides (the same verdict on any machine); the wall
   * clock is only a safety cap. */
  ao.stability.node_limit = t->stability_nodes;
  ao.stability.time_limit_s = t->stability_seconds;
  cp_stability_result r;
  cp_error e;
  int rc = cp_assembly_stability(&s, a->w->placed, &ao.stability, &r, NULL, NULL, NULL, &e);
  free(s.bodies);
  if (rc) {
    snprintf(a->why, sizeof a->why, "stability of the stage: %.150s", e.msg);
    return -1;
  }
  stage->stability = r.kind;
  stage->stability_nodes = r.mip_nodes;
  snprintf(stage->stability_reason, sizeof stage->stability_reason, "%.119s",
           r.kind == CP_STABILITY_UNDECIDED ? r.reason : "");
  cp_stability_result_free(&r);
  if (stage->stability == CP_STABILITY_UNSTABLE || stage->stability == CP_STABILITY_FAILED) {
    snprintf(a->why, sizeof a->why, "the subassembly after %s %.60s is %s", a->withdraw ? "removing" : "placing",
             part_name(a),
             cp_stability_kind_name(stage->stability));
    return -1;
  }
  if (*worst_pos > t->tol_position || *worst_ang > t->tol_angle) {
    snprintf(a->why, sizeof a->why, "a placed part is %.3g mm / %.3g deg from its design pose", 1e3 * *worst_pos,
             *worst_ang * (180 / 3.14159265358979323846));
    return -1;
  }
  return 0;
}

/* How far part p's centre must go along the horizontal axis direction d
 * for its box to be clear of every other body's in the world (fixed ones
 * as designed, placed parts as simulated) that overlaps it across d, plus
 * a finger's thickness and clearance, so that the trailing finger clears
 * too and the part can then be lifted. */
static double withdraw_distance(const cp_sequence_task *t, const world_state *w, int p, const double *d) {
  const int ax = fabs(d[0]) > 0.5 ? 0 : 1, across = 1 - ax;
  const double sign = d[ax] > 0 ? 1 : -1, *x = w->part + 13 * p;
  double h[3], need = 0;
  cp_seq_box_aabb(t->scene.bodies[t->part_body[p]].shape.size, x + 3, h);
  for (int b = 0; b < t->scene.n_bodies; b++) {
    const cp_body *bd = &t->scene.bodies[b];
    if (bd->shape.type == CP_SHAPE_PLANE || b == t->part_body[p]) continue;
    const double *c = bd->x, *q = bd->q;
    if (!bd->fixed) {
      int k = 0;
      while (k < t->n_parts && t->part_body[k] != b) k++;
      if (!(w->placed >> k & 1)) continue;
      c = w->part + 13 * k;
      q = c + 3;
    }
    double bh[3];
    if (bd->shape.type == CP_SHAPE_BOX) cp_seq_box_aabb(bd->shape.size, q, bh);
    else bh[0] = bh[1] = bh[2] = bd->shape.radius + bd->shape.length;
    if (fabs(c[across] - x[across]) >= h[across] + bh[across]) continue;
    need = fmax(need, sign * (c[ax] - x[ax]) + bh[ax] + h[ax]);
  }
  return need + t->gripper.finger[0] + t->gripper.clearance + 0.005;
}

/* Kinds of a move. */
enum { MOVE_TABLE, MOVE_PLACE, MOVE_REMOVE };

/* One move of the carried part from `from` (its simulated state, 13
 * numbers) to `to` (pose) with the grasps g[0..n) in rank order, every
 * attempt from the same start. final: MOVE_PLACE the move into the
 * assembly, certified with the subassembly; MOVE_TABLE a placement on the
 * table, checked for its orientation; MOVE_REMOVE a placed temporary part
 * withdrawn along stage->withdraw and put down at `to`, the rest
 * certified without it. 0 done, -1 no grasp worked (why), -2 failure, -3
 * time limit. */
static int move(cp_store *st, const cp_sequence_task *t, world_state *w, double t0, cp_sequence_result *res,
                const double *from, const double *to, int final, cp_sequence_grasp *gs, int n,
                cp_sequence_stage *stage, char *why, size_t why_size, cp_error *err) {
  const int p = w->carried;
  /* Every attempt starts from the world as it stands now: a failed one may
   * have moved placed parts, and those moves are undone. */
  const size_t bytes = sizeof *w->part * 13 * (size_t)t->n_parts;
  double *before = malloc(bytes);
  if (!before) return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory"), -2;
  memcpy(before, w->part, bytes);
  const uint64_t placed = w->placed;
  int out = -1;
  for (int c = 0; c < n; c++) {
    cp_sequence_grasp *g = &gs[c];
    if (g->rejected) continue;
    /* Fresh start: the part where it lies, the gripper open above it. */
    memcpy(w->part, before, bytes);
    memcpy(w->part + 13 * p, from, sizeof *from * 13);
    attempt a = {.t = t, .st = st, .g = g, .to = to, .w = w, .t0 = t0, .res = res, .wrist = g->turn != 0.0};
    w->placed = placed;
    if (final == MOVE_REMOVE) {
      a.withdraw = stage->withdraw;
      a.withdraw_dist = withdraw_distance(t, w, p, stage->withdraw);
      w->placed &= ~((uint64_t)1 << p);
    }
    a.zt = cp_seq_transport_height(t, p);
    if (a.wrist) {
      /* Turning sweeps the part's half diagonal across the grasp axis. */
      const double *sz = t->scene.bodies[t->part_body[p]].shape.size;
      const double u = sz[(g->axis + 1) % 3], v = sz[(g->axis + 2) % 3];
      a.zt += fmax(0, 0.5 * sqrt(u * u + v * v) - 0.5 * cp_seq_part_height(t, p, t->scene.bodies[t->part_body[p]].q));
      /* held off its centre, the part swings about the fingers: it may
       * come down by as much as the shift */
      a.zt += cp_v3_norm(g->shift);
    }
    a.close = -2 * t->gripper.clearance - t->gripper.squeeze / t->gripper.stiffness;
    if (t->gripper.panda) {
      /* Both fingers move (a mimic pair, one coordinate): its effort is
       * twice a finger's push. Open: the clearance outside the faces. */
      a.open = fmin(t->gripper.finger_upper, 0.5 * g->width + t->gripper.clearance);
      a.close = fmax(0, 0.5 * g->width - 2 * t->gripper.squeeze / t->gripper.stiffness);
    }
    w->q[0] = from[0] + g->shift[0];
    w->q[1] = from[1] + g->shift[1];
    w->q[2] = a.zt + g->offset + g->shift[2];
    w->q[3] = a.open;
    w->q[4] = 0;
    memset(w->qd, 0, sizeof w->qd);
    stage->attempts++;
    int rc = execute(&a);
    if (rc == 0 && final == MOVE_REMOVE) {
      double wp, wa;
      rc = certify(&a, stage, &wp, &wa);
      if (rc == 0) {
        res->final_position_error = wp;
        res->final_angle_error = wa;
        const double *x = w->part + 13 * p, e[3] = {x[0] - to[0], x[1] - to[1], x[2] - to[2]};
        stage->position_error = cp_v3_norm(e);
        stage->angle_error = cp_seq_quat_angle(x + 3, to + 3);
        memcpy(stage->pose, x, sizeof stage->pose);
      }
    } else if (rc == 0 && final) {
      w->placed |= (uint64_t)1 << p;
      double wp, wa;
      rc = certify(&a, stage, &wp, &wa);
      if (rc == 0) {
        res->final_position_error = wp;
        res->final_angle_error = wa;
      } else {
        w->placed &= ~((uint64_t)1 << p);
      }
    } else if (rc == 0) {
      const double ang = cp_seq_quat_angle(w->part + 13 * p + 3, to + 3);
      if (ang > t->tol_angle) {
        snprintf(a.why, sizeof a.why, "the part came to rest %.3g rad from the intermediate orientation", ang);
        rc = -1;
      }
    }
    if (rc == 0) {
      if (final) stage->grasp = *g;

      memcpy(stage->plan_ids + stage->n_plans, a.plan_ids, sizeof *a.plan_ids * (size_t)a.n_plans);
      memcpy(stage->plan_phase + stage->n_plans, a.plan_phase, (size_t)a.n_plans);
      stage->n_plans += a.n_plans;
      out = 0;
      break;
    }
    snprintf(g->reason, sizeof g->reason, "%.95s", a.why);
    snprintf(why, why_size, "%s", a.why);
    if (rc == -2) {
      cp_error_setc(err, CP_ERR_IO, "", "%s", a.why);
      out = -2;
      break;
    }
    if (a.limit) {
      out = -3;
      break;
    }
  }
  if (out) {
    memcpy(w->part, before, bytes);
    w->placed = placed;
  }
  free(before);
  return out;
}

/* One stage: the carried part into the assembly, through one regrasp
 * when no grasp takes it there directly. 0 certified, -1 none worked, -2
 * failure, -3 time limit. */
static int stage_run(cp_store *st, const cp_sequence_task *t, world_state *w, double t0, cp_sequence_result *res,
                     cp_sequence_stage *stage, char *why, size_t why_size, cp_error *err) {
  const int p = w->carried;
  const cp_body *b = &t->scene.bodies[t->part_body[p]];
  double from[13] = {0}, design[7];
  memcpy(from, t->staged + 7 * p, sizeof *from * 7);
  memcpy(design, b->x, sizeof b->x);
  memcpy(design + 3, b->q, sizeof b->q);
  stage->n_candidates = cp_sequence_grasps(t, p, from, NULL, w->placed, stage->candidates, 6, err);
  if (stage->n_candidates < 0) return -2;
  snprintf(why, why_size, "no usable grasp of %s", t->scene.bodies[t->part_body[p]].name);
  if (!cp_seq_usable(stage->candidates, stage->n_candidates)) {
    double mid[7];
    cp_sequence_grasp g1[6], g2[6];
    int n1, n2;
    int r = cp_seq_regrasp(t, p, w->placed, from, mid, g1, &n1, g2, &n2, err);
    if (r < 0) return -2;
    if (r == 0) return -1;
    int rc = move(st, t, w, t0, res, from, mid, 0, g1, n1, stage, why, why_size, err);
    if (rc) return rc;
    stage->regrasps = 1;
    memcpy(from, w->part + 13 * p, sizeof from);
    memcpy(stage->candidates, g2, sizeof *g2 * (size_t)n2);
    stage->n_candidates = n2;
  }
  int rc = move(st, t, w, t0, res, from, design, 1, stage->candidates, stage->n_candidates, stage, why, why_size, err);
  if (rc == 0) stage->certified = 1;
  return rc;
}

/* The horizontal axis direction (+-x, +-y) along which temporary part p
 * leaves the parts placed (the removal sweep of planner/assembly at the
 * design poses) with the shortest withdrawal. 1 found, 0 none, -1 failure. */
static int withdraw_way(const cp_sequence_task *t, const world_state *w, int p, double *dir, cp_error *err) {
  static const double ways[4][3] = {{0, 1, 0}, {0, -1, 0}, {1, 0, 0}, {-1, 0, 0}};
  cp_assembly_options ao = cp_assembly_defaults();
  double best = INFINITY;
  for (int i = 0; i < 4; i++) {
    const int r = cp_assembly_removable(&t->scene, w->placed, p, ways[i], &ao, err);
    if (r < 0) return -1;
    const double dist = r ? withdraw_distance(t, w, p, ways[i]) : INFINITY;
    if (dist < best) {
      best = dist;
      memcpy(dir, ways[i], sizeof ways[i]);
    }
  }
  return best < INFINITY;
}

/* The removal stage of temporary part p (placed): grasped where it
 * stands, withdrawn along a free horizontal direction, lifted, put down at
 * its staging pose; the rest is certified without it. 0, -1 (why), -2, -3
 * as stage_run. */
static int removal_run(cp_store *st, const cp_sequence_task *t, world_state *w, double t0, cp_sequence_result *res,
                       cp_sequence_stage *stage, char *why, size_t why_size, cp_error *err) {
  const int p = w->carried;
  const char *name = t->scene.bodies[t->part_body[p]].name;
  const int r = withdraw_way(t, w, p, stage->withdraw, err);
  if (r < 0) return -2;
  if (r == 0) {
    snprintf(why, why_size, "no horizontal way out of the assembly for %s", name);
    return -1;
  }
  double from[13], to[7];
  memcpy(from, w->part + 13 * p, sizeof from);
  memcpy(to, t->staged + 7 * p, sizeof to);
  stage->n_candidates = cp_sequence_grasps(t, p, from, from, w->placed & ~((uint64_t)1 << p), stage->candidates, 6, err);
  if (stage->n_candidates < 0) return -2;
  snprintf(why, why_size, "no usable grasp of %s where it stands", name);
  const int rc = move(st, t, w, t0, res, from, to, MOVE_REMOVE, stage->candidates, stage->n_candidates, stage, why,
                      why_size, err);
  if (rc == 0) stage->certified = 1;
  return rc;
}

/* The order search: depth first over placing orders. At depth d (the parts
 * of `placed` standing), the candidates are the order search's d-th part
 * when the parts placed so far are its first d, then every other part not
 * placed, lowest design centre first; a candidate is tried only when the
 * subassembly it completes has an equilibrium at the design poses (the LP)
 * and it can come down from straight above into it (the removal sweep
 * upwards). A candidate whose stage is not certified, or after which the
 * rest cannot be completed, is taken back (the world restored) and the
 * next one tried. Subassemblies from which no completion was found are
 * remembered and not tried again. */
typedef struct order_search {
  cp_store *st;
  const cp_sequence_task *t;
  world_state *w;
  double t0;
  cp_sequence_result *res;
  cp_error *err;
  const cp_assembly_result *ar;
  cp_assembly_options ao;
  uint64_t *dead;              /* subassemblies without a completion */
  int n_dead, cap_dead;
  cp_sequence_stage *best;     /* the deepest failed path: stages 0..best_n-1 */
  int *best_order, best_n;
  char best_msg[256];
} order_search;

static int is_dead(const order_search *o, uint64_t m) {
  for (int i = 0; i < o->n_dead; i++)
    if (o->dead[i] == m) return 1;
  return 0;
}

/* 1: part p may be placed onto the parts of `placed` (equilibrium and a
 * way down from above), 0 not, -1 failure (err). */
static int placeable(order_search *o, uint64_t placed, int p) {
  const cp_sequence_task *t = o->t;
  const uint64_t m = placed | (uint64_t)1 << p;
  static const double up[3] = {0, 0, 1};
  int r = cp_assembly_removable(&t->scene, m, p, up, &o->ao, o->err);
  if (r != 1) return r;
  cp_stability_options so = o->ao.stability;
  so.depth = CP_STABILITY_EQUILIBRIUM;
  cp_stability_result sr;
  if (cp_assembly_stability(&t->scene, m, &so, &sr, NULL, NULL, NULL, o->err)) return -1;
  r = sr.kind != CP_STABILITY_UNSTABLE && sr.kind != CP_STABILITY_FAILED;
  cp_stability_result_free(&sr);
  return r;
}

/* The candidates at depth d, in the order tried; returns their count. */
static int candidates(const order_search *o, int d, int *c) {
  const cp_sequence_task *t = o->t;
  const uint64_t placed = o->w->placed;
  int n = 0, first = -1;
  uint64_t prefix = 0;
  for (int k = 0; k < d && k < o->ar->n_steps; k++) prefix |= (uint64_t)1 << o->ar->steps[k].part;
  if (d < o->ar->n_steps && prefix == placed) c[n++] = first = o->ar->steps[d].part;
  for (int p = 0; p < t->n_parts; p++) {
    if (placed >> p & 1 || p == first) continue;
    /* insertion by design height, then index */
    const double z = t->scene.bodies[t->part_body[p]].x[2];
    int at = n;
    while (at > (first >= 0) && t->scene.bodies[t->part_body[c[at - 1]]].x[2] > z) at--;
    memmove(c + at + 1, c + at, sizeof *c * (size_t)(n - at));
    c[at] = p;
    n++;
  }
  return n;
}

/* Keeps the path of a failed stage at depth d when it is the deepest so far. */
static void keep_failure(order_search *o, int d, const char *why) {
  if (d + 1 < o->best_n) return;
  o->best_n = d + 1;
  memcpy(o->best, o->res->stages, sizeof *o->best * (size_t)(d + 1));
  memcpy(o->best_order, o->res->order, sizeof *o->best_order * (size_t)(d + 1));
  const cp_sequence_task *t = o->t;
  snprintf(o->best_msg, sizeof o->best_msg, "stage %d (%s): %.200s", d + 1,
           t->scene.bodies[o->res->stages[d].body].name, why);
}

/* With every part placed (stages 0..d-1), the temporary ones removed in
 * the order the task lists them, one stage each. 0 done, -1 a removal
 * failed (the caller takes the last stage back), -2, -3. */
static int remove_temporary(order_search *o, int d) {
  const cp_sequence_task *t = o->t;
  for (int i = 0; i < t->n_temporary; i++) {
    const int p = t->temporary_order[i];
    cp_sequence_stage *stage = &o->res->stages[d];
    memset(stage, 0, sizeof *stage);
    stage->part = p;
    stage->body = t->part_body[p];
    stage->removal = 1;
    o->res->order[d] = p;
    o->w->carried = p;
    char why[512];
    const int rc = removal_run(o->st, t, o->w, o->t0, o->res, stage, why, sizeof why, o->err);
    if (rc) {
      if (rc != -1) o->best_n = 0;
      keep_failure(o, d, why);
      return rc;
    }
    d++;
  }
  return 0;
}

/* Places parts from depth d on. 0 all placed, -1 no completion, -2
 * failure, -3 time limit. */
static int place_from(order_search *o, int d) {
  const cp_sequence_task *t = o->t;
  world_state *w = o->w;
  if (d == t->n_parts) return remove_temporary(o, d);
  if (is_dead(o, w->placed)) return -1;
  int *c = malloc(sizeof *c * (size_t)t->n_parts);
  double *saved = malloc(sizeof *saved * 13 * (size_t)t->n_parts);
  if (!c || !saved) {
    free(c);
    free(saved);
    cp_error_setc(o->err, CP_ERR_NOMEM, "", "out of memory");
    return -2;
  }
  const uint64_t placed = w->placed;
  memcpy(saved, w->part, sizeof *saved * 13 * (size_t)t->n_parts);
  const int n = candidates(o, d, c);
  int rc = -1, tried = 0;
  for (int i = 0; i < n && rc == -1; i++) {
    const int p = c[i];
    if (is_dead(o, placed | (uint64_t)1 << p)) continue;
    const int ok = placeable(o, placed, p);
    if (ok < 0) {
      rc = -2;
      o->best_n = 0;
      snprintf(o->best_msg, sizeof o->best_msg, "placing %.60s: %.180s", t->scene.bodies[t->part_body[p]].name,
               o->err->msg);
      break;
    }
    if (!ok) continue;
    tried++;
    cp_sequence_stage *stage = &o->res->stages[d];
    memset(stage, 0, sizeof *stage);
    stage->part = p;
    stage->body = t->part_body[p];
    o->res->order[d] = p;
    w->carried = p;
    char why[512];
    rc = stage_run(o->st, t, w, o->t0, o->res, stage, why, sizeof why, o->err);
    if (rc == -1) keep_failure(o, d, why);
    if (rc == -2 || rc == -3) {
      o->best_n = 0; /* the path where it stopped */
      keep_failure(o, d, why);
    }
    if (rc == 0) {
      rc = place_from(o, d + 1);
      if (rc == -1) o->res->backtracks++;
    }
    if (rc == -1) {
      /* take the stage back */
      w->placed = placed;
      memcpy(w->part, saved, sizeof *saved * 13 * (size_t)t->n_parts);
    }
  }
  if (rc == -1 && !tried && d + 1 > o->best_n && o->best_n == 0)
    snprintf(o->best_msg, sizeof o->best_msg, "no part can be placed from straight above onto a stable subassembly");
  if (rc == -1 && o->n_dead < o->cap_dead) o->dead[o->n_dead++] = placed;
  free(c);
  free(saved);
  return rc;
}

cp_sequence_status cp_sequence_plan(cp_store *st, const cp_sequence_task *t,
                                    cp_sequence_result *res, cp_error *err) {
  memset(res, 0, sizeof *res);
  const double t0 = cp_clock_now();
  cp_assembly_options ao = cp_assembly_defaults();
  ao.time_limit_s = t->seconds;
  cp_assembly_result ar;
  cp_assembly_plan(&t->scene, &ao, &ar);
  world_state w = {.carried = -1};
  order_search o = {.st = st, .t = t, .w = &w, .t0 = t0, .res = res, .err = err, .ar = &ar, .ao = ao,
                    .cap_dead = 4096};
  /* a stage per part, then one per temporary part (its removal) */
  int n_temp = 0;
  for (int p = 0; p < t->n_parts; p++) n_temp += (int)(t->temporary >> p & 1);
  const size_t n_st = (size_t)(t->n_parts + n_temp);
  res->order = malloc(sizeof *res->order * n_st);
  res->stages = calloc(n_st, sizeof *res->stages);
  w.part = calloc((size_t)t->n_parts * 13, sizeof *w.part);
  o.dead = malloc(sizeof *o.dead * (size_t)o.cap_dead);
  o.best = calloc(n_st, sizeof *o.best);
  o.best_order = calloc(n_st, sizeof *o.best_order);
  if (!res->order || !res->stages || !w.part || !o.dead || !o.best || !o.best_order) {
    cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
    res->status = CP_SEQUENCE_FAILED;
    goto done;
  }
  if (ar.status != CP_ASSEMBLY_FOUND) {
    res->status = ar.status == CP_ASSEMBLY_NONE ? CP_SEQUENCE_NONE
                  : ar.status == CP_ASSEMBLY_LIMIT ? CP_SEQUENCE_LIMIT : CP_SEQUENCE_FAILED;
    snprintf(res->message, sizeof res->message, "order search: %s%s%.200s", cp_assembly_status_name(ar.status),
             ar.message[0] ? ": " : "", ar.message);
    if (res->status == CP_SEQUENCE_FAILED) cp_error_setc(err, CP_ERR_NUMERICAL, "", "%s", res->message);
    goto done;
  }
  const int rc = place_from(&o, 0);
  if (rc == 0) {
    res->status = CP_SEQUENCE_SOLVED;
    res->n_order = t->n_parts;
    res->n_stages = t->n_parts + n_temp;
  } else {
    res->status = rc == -2 ? CP_SEQUENCE_FAILED : rc == -3 ? CP_SEQUENCE_LIMIT : CP_SEQUENCE_NONE;
    /* the deepest failed path, the failed stage last with its candidates */
    memcpy(res->stages, o.best, sizeof *o.best * (size_t)o.best_n);
    memcpy(res->order, o.best_order, sizeof *o.best_order * (size_t)o.best_n);
    res->n_stages = o.best_n;
    res->n_order = o.best_n < t->n_parts ? o.best_n : t->n_parts;
    snprintf(res->message, sizeof res->message, "%s", o.best_msg);
  }
done:
  res->seconds = cp_clock_now() - t0;
  free(w.part);
  free(o.dead);
  free(o.best);
  free(o.best_order);
  cp_assembly_result_free(&ar);
  return res->status;
}
