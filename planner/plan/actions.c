/* Target and Cartesian inputs applied to a world (planner/plan/actions.h). */
#include "planner/plan/actions.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/vec3.h"
#include "planner/search/pinch.h"
#include "planner/search/reach.h"
#include "planner/sim/statelayout.h"

/* DLS damping (m; rad for rotation rows): below it a singular direction's
 * gain falls off as sigma^2 / (sigma^2 + lambda^2). */
#define CP_PLAN_DLS_LAMBDA 0.01

/* One link driven by input i (finger -1: a reach input; 0 or 1: a pinch's
 * link): its goal and the target actuators on its path. */
static void reach_add(cp_plan_actions *a, const cp_task *t, int i, int finger,
                      int manip, int link, int *used) {
  cp_plan_reach *r = &a->reach[a->n_reach++];
  const cp_chain *ch = &t->scene.manips[manip];
  r->input = i;
  r->finger = finger;
  r->goal.manip = manip;
  r->goal.link = link;
  memcpy(r->goal.point, t->inputs[i].point, sizeof r->goal.point);
  r->goal.lambda = CP_PLAN_DLS_LAMBDA;
  r->first = *used;
  for (int k = 0; k < a->n_act; ++k)
    if (a->act[k].manip == manip && cp_chain_is_ancestor(ch, a->act[k].joint, link))
      a->path[(*used)++] = k;
  r->n = *used - r->first;
}

/* The reach inputs, then the pinch inputs' link pairs (so that an active or
 * held pinch wins over a reach on the same link): each link's goal and the
 * target actuators on its path (cp_reach_check and cp_pinch_check made sure
 * there is one per joint). */
static int reach_init(cp_plan_actions *a, const cp_task *t) {
  int n = 0;
  for (int i = 0; i < t->n_inputs; ++i)
    n += t->inputs[i].kind == CP_INPUT_REACH ? 1
         : t->inputs[i].kind == CP_INPUT_PINCH ? 2 : 0;
  if (!n) return 0;
  a->reach = calloc((size_t)n, sizeof *a->reach);
  a->path = calloc((size_t)n * (size_t)(a->n_act + 1), sizeof *a->path);
  a->rel = calloc((size_t)a->n_act + 1, sizeof *a->rel);
  if (!a->reach || !a->path || !a->rel) return -1;
  int used = 0;
  for (int i = 0; i < t->n_inputs; ++i)
    if (t->inputs[i].kind == CP_INPUT_REACH)
      reach_add(a, t, i, -1, t->inputs[i].manip, t->inputs[i].index, &used);
  for (int i = 0; i < t->n_inputs; ++i) {
    const cp_task_input *in = &t->inputs[i];
    if (in->kind != CP_INPUT_PINCH) continue;
    reach_add(a, t, i, 0, in->manip, in->index, &used);
    reach_add(a, t, i, 1, in->manip2, in->index2, &used);
  }
  return 0;
}

/* A reach input with a value < 0 and a hold distance: the face nearest its
 * point when that is within offset + hold (body frame pb, nb, with the
 * squeeze push[1] as the depth). */
static int reach_held(cp_plan_actions *a, const cp_scene *s,
                      const cp_task_input *in, const cp_plan_reach *r,
                      const double *R, double *pb, double *nb, double *depth) {
  double pw[3], d[3], dist;
  const cp_body *b = &s->bodies[in->body];
  cp_actuate_link_pose(s, r->goal.manip, r->goal.link, in->point, &a->work, pw,
                       NULL);
  cp_v3_sub(d, pw, b->x);
  cp_m3_tmulv(pw, R, d);
  unsigned f = cp_reach_nearest(&b->shape, pw, pb, nb, &dist);
  *depth = in->push[1];
  return (f & in->faces) && dist <= in->offset + in->hold;
}

/* The goals (world) of a point at pb with normal nb (body frame, body at
 * x, R): standoff `approach` in front of the face, and `depth` past it. */
static void contact_goals(const cp_task_input *in, const double *x,
                          const double *R, const double *pb, const double *nb,
                          double depth, double *approach, double *push) {
  double pw[3], nw[3];
  cp_m3_mulv(pw, R, pb);
  cp_v3_add(pw, pw, x);
  cp_m3_mulv(nw, R, nb);
  cp_v3_axpy(approach, pw, in->offset + in->approach, nw);
  cp_v3_axpy(push, pw, in->offset - depth, nw);
}

/* The drawn antipodal pair (pb, nb: body frame) goes to the links the
 * nearer way round: swapped when the first link is nearer the second
 * point and the second the first (sum of the two distances), so that the
 * fingers do not cross through the body. */
static void pinch_assign(cp_plan_actions *a, const cp_scene *s,
                         const cp_task_input *in, const cp_body *b,
                         const double *R, const cp_plan_reach *r,
                         double pb[2][3], double nb[2][3]) {
  double tip[2][3], w[2][3], d[2] = {0, 0};
  for (int k = 0; k < 2; ++k) {
    cp_actuate_link_pose(s, r[k].goal.manip, r[k].goal.link, in->point,
                         &a->work, tip[k], NULL);
    cp_m3_mulv(w[k], R, pb[k]);
    cp_v3_add(w[k], w[k], b->x);
  }
  for (int k = 0; k < 2; ++k) {
    double e[3], f[3];
    cp_v3_sub(e, tip[k], w[k]);
    cp_v3_sub(f, tip[k], w[1 - k]);
    d[0] += cp_v3_norm(e);
    d[1] += cp_v3_norm(f);
  }
  if (d[1] >= d[0]) return;
  for (int c = 0; c < 3; ++c) {
    double t = pb[0][c];
    pb[0][c] = pb[1][c], pb[1][c] = t;
    t = nb[0][c];
    nb[0][c] = nb[1][c], nb[1][c] = t;
  }
}

/* At an action's start, a pinch input's two links r[0], r[1]: value v >= 0
 * puts them on an antipodal pair drawn from v (approach, then squeeze);
 * v < 0 holds a pair whose points are each near the body on opposite
 * faces, pressed in by push[1], and carries it rigidly by the draw of v:
 * turned by its angle about the input's axis through the pair's midpoint,
 * then displaced. */
static void pinch_start(cp_plan_actions *a, const cp_scene *s,
                        const cp_task_input *in, double v, cp_plan_reach *r) {
  const cp_body *b = &s->bodies[in->body];
  double R[9], pb[2][3], nb[2][3], depth;
  cp_quat_to_mat(R, b->q);
  unsigned f = v >= 0 ? cp_reach_sample(&b->shape, in->faces, v, in->push,
                                        pb[0], nb[0], &depth)
                      : 0;
  r[0].active = r[1].active = f != 0;
  r[0].held = r[1].held =
      !f && in->hold > 0 && reach_held(a, s, in, &r[0], R, pb[0], nb[0], &depth) &&
      reach_held(a, s, in, &r[1], R, pb[1], nb[1], &depth) &&
      cp_v3_dot(nb[0], nb[1]) < -0.5;
  if (f) {
    cp_reach_spread(&b->shape, f, in->spread, pb[0]);
    cp_pinch_antipode(&b->shape, f, pb[0], pb[1], nb[1]);
    pinch_assign(a, s, in, b, R, r, pb, nb);
  }
  if (!f && !r[0].held) return;
  for (int k = 0; k < 2; ++k)
    contact_goals(in, b->x, R, pb[k], nb[k], depth, r[k].approach, r[k].push);
  if (f) return;
  double delta[3], angle, c[3], q[4], T[9];
  cp_pinch_carry(in, v, delta, &angle);
  cp_quat_axis_angle(q, in->direction, angle);
  cp_quat_to_mat(T, q);
  for (int k = 0; k < 3; ++k) c[k] = 0.5 * (r[0].push[k] + r[1].push[k]);
  for (int k = 0; k < 2; ++k) {
    double d[3];
    cp_v3_sub(d, r[k].push, c);
    cp_m3_mulv(r[k].push, T, d);
    cp_v3_add(r[k].push, r[k].push, c);
    cp_v3_add(r[k].push, r[k].push, delta);
  }
}

/* At an action's start: the contact of each active or held reach input,
 * from its body's pose now. */
static void reach_start(cp_plan_actions *a, const cp_task *t,
                        const cp_scene *s, const double *values) {
  a->step = 0;
  if (!a->n_reach) return;
  for (int k = 0; k < a->n_act; ++k)
    a->rel[k] = a->input[k] >= 0 && t->inputs[a->input[k]].relative
                    ? values[a->input[k]]
                    : 0;
  for (int g = 0; g < a->n_reach; ++g) {
    cp_plan_reach *r = &a->reach[g];
    const cp_task_input *in = &t->inputs[r->input];
    const cp_body *b = &s->bodies[in->body];
    double pb[3], nb[3], depth, R[9];
    if (r->finger >= 0) { /* a pinch: both links at once */
      pinch_start(a, s, in, values[r->input], r);
      ++g;
      continue;
    }
    cp_quat_to_mat(R, b->q);
    unsigned f = values[r->input] >= 0
                     ? cp_reach_sample(&b->shape, in->faces, values[r->input],
                                       in->push, pb, nb, &depth)
                     : 0;
    if (f) cp_reach_spread(&b->shape, f, in->spread, pb);
    r->active = f != 0;
    r->held = !r->active && in->hold > 0 &&
              reach_held(a, s, in, r, R, pb, nb, &depth);
    if (!r->active && !r->held) continue;
    contact_goals(in, b->x, R, pb, nb, depth, r->approach, r->push);
  }
}

/* Before a step: the active reach inputs' joint targets, by damped least
 * squares towards the approach point (first half) or the push point. */
static void reach_apply(cp_plan_actions *a, const cp_scene *s) {
  int pushing = 2 * a->step >= a->steps;
  for (int g = 0; g < a->n_reach; ++g) {
    cp_plan_reach *r = &a->reach[g];
    if (!r->active && !r->held) continue;
    memcpy(r->goal.position, pushing || r->held ? r->push : r->approach,
           sizeof r->goal.position);
    cp_actuate_cartesian(s, &r->goal, &a->work, a->targets);
    for (int k = r->first; k < r->first + r->n; ++k) {
      int i = a->path[k];
      a->act[i].target = a->targets[a->act[i].joint] +
                         (r->held && r->finger < 0 ? a->rel[i] : 0);
    }
  }
  a->step++;
}

static int nomem(cp_plan_actions *a, cp_error *err) {
  cp_plan_actions_free(a);
  return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
}

int cp_plan_actions_init(cp_plan_actions *a, const cp_task *t, cp_error *err) {
  memset(a, 0, sizeof *a);
  const cp_scene *s = &t->scene;
  int n_target = 0, cap = 0;
  for (int i = 0; i < t->n_inputs; ++i) n_target += t->inputs[i].kind == CP_INPUT_TARGET;
  for (int i = 0; i < t->n_inputs; ++i)
    if (t->inputs[i].kind == CP_INPUT_CARTESIAN)
      cap += s->manips[t->inputs[i].manip].n;
  if (n_target + cap == 0) return 0;
  a->implicit = t->pd_implicit;
  a->dt = t->dt;
  a->steps = t->steps;
  size_t n = (size_t)(n_target + cap);
  a->act = calloc(n, sizeof *a->act);
  a->row = calloc(n, sizeof *a->row);
  a->input = calloc(n, sizeof *a->input);
  a->effort = calloc(n, sizeof *a->effort);
  a->cart = calloc((size_t)t->n_inputs, sizeof *a->cart);
  if (!a->act || !a->row || !a->input || !a->effort || !a->cart ||
      cp_actuate_work_init(&a->work, s))
    return nomem(a, err);
  a->targets = malloc((size_t)a->work.cap * sizeof *a->targets);
  cp_state_layout l;
  if (!a->targets || cp_state_layout_init(&l, s)) return nomem(a, err);
  for (int i = 0; i < t->n_inputs; ++i) {
    const cp_task_input *in = &t->inputs[i];
    if (in->kind != CP_INPUT_TARGET) continue;
    cp_actuator *c = &a->act[a->n_act];
    c->manip = in->manip;
    c->joint = in->index;
    c->kp = in->stiffness;
    c->kd = in->damping;
    c->limit = in->effort_limit;
    a->row[a->n_act] = in->row;
    a->input[a->n_act++] = i;
  }
  for (int i = 0; i < t->n_inputs; ++i) {
    const cp_task_input *in = &t->inputs[i];
    if (in->kind != CP_INPUT_CARTESIAN) continue;
    int g = 0;
    while (g < a->n_cart && (a->cart[g].goal.manip != in->manip ||
                             a->cart[g].goal.link != in->index))
      ++g;
    if (g < a->n_cart) continue; /* the group exists */
    cp_plan_cartesian *cg = &a->cart[a->n_cart++];
    cg->goal.manip = in->manip;
    cg->goal.link = in->index;
    memcpy(cg->goal.point, in->point, sizeof in->point);
    cg->goal.lambda = CP_PLAN_DLS_LAMBDA;
    cg->first = a->n_act;
    const cp_chain *ch = &s->manips[in->manip];
    for (int k = 0; k < ch->n; ++k) {
      const cp_joint *j = &ch->joints[k];
      if (j->is_mimic || !cp_chain_is_ancestor(ch, k, in->index)) continue;
      cp_actuator *c = &a->act[a->n_act];
      c->manip = in->manip;
      c->joint = k;
      double held, inertia = cp_actuate_inertia(ch, k, &a->work, &held);
      /* The implicit law is stable at any gain: no cap from the least
       * inertia. */
      cp_actuate_default_gains(held, t->pd_implicit ? INFINITY : inertia,
                               t->duration, t->dt, &c->kp, &c->kd);
      c->limit = j->effort_limit;
      a->row[a->n_act] =
          (l.joint_at[l.manip_first[in->manip] + k] - 13 * l.n_free) / 2;
      a->input[a->n_act++] = -1;
      cg->n++;
    }
  }
  cp_state_layout_free(&l);
  if (reach_init(a, t)) return nomem(a, err);
  return 0;
}

void cp_plan_actions_free(cp_plan_actions *a) {
  free(a->act);
  free(a->row);
  free(a->input);
  free(a->effort);
  free(a->cart);
  free(a->targets);
  free(a->reach);
  free(a->path);
  free(a->rel);
  cp_actuate_work_free(&a->work);
  memset(a, 0, sizeof *a);
}

void cp_plan_actions_start(cp_plan_actions *a, const cp_task *t,
                           const cp_scene *s, const double *values) {
  for (int k = 0; k < a->n_act; ++k) {
    if (a->input[k] < 0) continue;
    const cp_task_input *in = &t->inputs[a->input[k]];
    const cp_joint *j = &s->manips[in->manip].joints[in->index];
    double q = values[a->input[k]];
    if (in->relative) {
      q += j->position;
      if (j->has_limits) q = q < j->lower ? j->lower : q > j->upper ? j->upper : q;
    }
    a->act[k].target = q;
  }
  for (int g = 0; g < a->n_cart; ++g) {
    cp_cartesian_goal *goal = &a->cart[g].goal;
    double R0[9], rot[3] = {0, 0, 0};
    cp_actuate_link_pose(s, goal->manip, goal->link, goal->point, &a->work,
                         goal->position, R0);
    goal->has_rotation = 0;
    for (int i = 0; i < t->n_inputs; ++i) {
      const cp_task_input *in = &t->inputs[i];
      if (in->kind != CP_INPUT_CARTESIAN || in->manip != goal->manip ||
          in->index != goal->link)
        continue;
      if (in->rotation) {
        goal->has_rotation = 1;
        cp_v3_axpy(rot, rot, values[i], in->direction);
      } else {
        cp_v3_axpy(goal->position, goal->position, values[i], in->direction);
      }
    }
    if (goal->has_rotation) {
      double ang = cp_v3_norm(rot), axis[3] = {1, 0, 0}, q[4], D[9];
      if (ang > 0) cp_v3_scale(axis, rot, 1.0 / ang);
      cp_quat_axis_angle(q, axis, ang);
      cp_quat_to_mat(D, q);
      cp_m3_mul(goal->rotation, D, R0);
    }
  }
  reach_start(a, t, s, values);
}

cp_world_status cp_plan_actions_apply(cp_plan_actions *a, cp_world *w) {
  if (a->n_act == 0) return CP_WORLD_OK;
  const cp_scene *s = cp_world_scene(w);
  for (int g = 0; g < a->n_cart; ++g) {
    const cp_plan_cartesian *cg = &a->cart[g];
    cp_actuate_cartesian(s, &cg->goal, &a->work, a->targets);
    for (int k = cg->first; k < cg->first + cg->n; ++k)
      a->act[k].target = a->targets[a->act[k].joint];
  }
  if (a->n_reach) reach_apply(a, s);
  if (a->implicit)
    cp_actuate_pd_implicit(s, a->n_act, a->act, a->dt, &a->work, a->effort);
  else
    cp_actuate_pd(s, a->n_act, a->act, &a->work, a->effort);
  for (int k = 0; k < a->n_act; ++k) {
    cp_world_status st = cp_world_set_effort(w, a->row[k], a->effort[k]);
    if (st != CP_WORLD_OK) return st;
  }
  return CP_WORLD_OK;
}
