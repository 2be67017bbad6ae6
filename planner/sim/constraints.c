// The constraints of a step (planner/sim/world_impl.h): the scene's contacts
// at the current state, generated with a look-ahead margin (touch_tol plus
// what the bodies can close in one step, from every shape's bounding
// radius) so that approaching surfaces are seen one step before they meet,
// reduced by models/manifold.h; joint limits within the same margin as
// frictionless unilateral rows (a column +-e_r of G). After a step: its
// contacts again, deep overlap settled (cp_wi_settle), and the record of the
// contacts with their forces for viewers.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/grow.h"
#include "models/manifold.h"
#include "models/vec3.h"
#include "planner/sim/world_impl.h"

// ---------------------------------------------------------------------------
// Contacts and constraints

// Largest speed of any material point of any moving object (bound): for
// every shape of every free body and link, the speed of the shape's centre
// plus |w| times the shape's bounding radius.
static double max_speed(const cp_world *w) {
  const cp_scene *s = &w->sc;
  double vmax = 0;
  for (int i = 0; i < s->n_bodies; ++i) {
    const cp_body *b = &s->bodies[i];
    if (b->fixed) continue;
    double v = cp_v3_norm(b->v) + cp_v3_norm(b->w) * cp_shape_bounding_radius(&b->shape);
    if (v > vmax) vmax = v;
  }
  for (int m = 0; m < s->n_manips; ++m) {
    const cp_chain *c = &s->manips[m];
    cp_link_state st[64], *ls = c->n <= 64 ? st : malloc(sizeof *ls * (size_t)c->n);
    if (!ls) return INFINITY;
    cp_chain_kinematics(c, ls);
    for (int k = 0; k < c->n; ++k) {
      const cp_link *l = &c->joints[k].link;
      const double wn = cp_v3_norm(ls[k].w);
      for (int e = 0, ne = cp_link_shape_count(l); e < ne; ++e) {
        cp_link_shape sh;
        cp_link_shape_get(l, e, &sh);
        double r[3], wr[3], vp[3];
        cp_m3_mulv(r, ls[k].R, sh.pos); // shape centre - link origin
        cp_v3_cross(wr, ls[k].w, r);
        cp_v3_add(vp, ls[k].v, wr);
        double v = cp_v3_norm(vp) + wn * cp_shape_bounding_radius(&sh.shape);
        if (v > vmax) vmax = v;
      }
    }
    if (ls != st) free(ls);
  }
  return vmax;
}

static double contact_margin(const cp_world *w) {
  double h = w->opt.dt;
  // Two objects may close at twice the fastest speed; gravity adds h^2 g.
  return w->sc.touch_tolerance + 2 * h * max_speed(w) +
         2 * h * h * w->grav_norm;
}

// Generates the scene's contacts at the current state (margin above) and the
// step's constraint list (contacts, then joint limits within the margin).
cp_world_status cp_wi_gen_contacts(cp_world *w, double pen_limit) {
  cp_contactgen_options cg = cp_contactgen_scene_options(&w->sc);
  double margin = contact_margin(w);
  cg.touch_tol = margin;
  cg.penetration_tol = pen_limit;
  cp_error err;
  cp_error_clear(&err);
  const double t0 = cp_wi_tic(w);
  if (cp_scene_generate_contacts_ws(&w->sc, &cg, &w->cg_ws, &err)) {
    cp_wi_toc(w, &w->prof.collide, t0);
    cp_world_status s = err.code == CP_ERR_OVERLAP ? CP_WORLD_PENETRATION
                        : err.code == CP_ERR_NOMEM ? CP_WORLD_NOMEM
                                                   : CP_WORLD_BAD_INPUT;
    if (s == CP_WORLD_PENETRATION && pen_limit != w->sc.penetration_tolerance) {
      // During a run the generator's limit is the simulator's rejection
      // threshold, not the scene's key: both named, each with its value
      // (the pair, depth and point from the generator's overlap report).
      const cp_contactgen_overlap *o = &w->cg_ws.overlap;
      char an[160], bn[160];
      return cp_wi_fail(
          w, s,
          "t = %.9g: \"%s\" and \"%s\" overlap: penetration %.6g m at [%.6g, "
          "%.6g, %.6g] exceeds the simulator's rejection threshold %g m "
          "(max(100 x penetration_tolerance, 1 cm); the scene's "
          "penetration_tolerance is %g m)",
          w->t, cp_scene_ref_name(&w->sc, o->a, an, sizeof an),
          cp_scene_ref_name(&w->sc, o->b, bn, sizeof bn), o->depth, o->p[0],
          o->p[1], o->p[2], pen_limit, w->sc.penetration_tolerance);
    }
    return cp_wi_fail(w, s, "t = %.9g: %s", w->t, err.msg);
  }
  // When every pair is a box face down on a plane, its four corners (a
  // rectangle with sides >= CP_COLLIDE_FLAT_SIDE) are what the reduction
  // would keep: it is skipped (a resting box's 1 100 instructions). That
  // needs CP_MANIFOLD_MERGE_TOL <= CP_COLLIDE_FLAT_SIDE / 2, which
  // collide/face_down_box_counted_flat asserts (clang does not take a
  // floating comparison in _Static_assert).
  if (!w->cg_ws.all_flat)
    w->sc.n_contacts =
        cp_manifold_reduce(w->sc.contacts, w->sc.n_contacts, CP_MANIFOLD_MERGE_TOL);
  const double t1 = cp_wi_tic(w);
  if (w->opt.profile) w->prof.collide += t1 - t0;
  const cp_scene *s = &w->sc;
  int nlim = 0;
  for (int r = 0; r < w->nl; ++r) nlim += 2 * cp_wi_cjoint_of(w, r)->has_limits;
  if (cp_grow((void **)&w->cons, &w->con_cap, s->n_contacts + nlim + w->nsup + 1,
            sizeof *w->cons))
    return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
  int n = 0;
  for (int j = 0; j < s->n_contacts; ++j) {
    const cp_contact *ct = &s->contacts[j];
    con *c = &w->cons[n++];
    memset(c, 0, sizeof *c);
    c->key.a[0] = ct->a.body, c->key.a[1] = ct->a.manip, c->key.a[2] = ct->a.link;
    c->key.b[0] = ct->b.body, c->key.b[1] = ct->b.manip, c->key.b[2] = ct->b.link;
    c->key.idx = (j > 0 && cp_contact_same_pair(ct, &s->contacts[j - 1]))
                     ? w->cons[n - 2].key.idx + 1
                     : 0;
    c->contact = j;
    c->row = -1;
    c->gap = -ct->depth;
    c->mu = ct->mu;
    c->e = ct->restitution;
  }
  for (int r = 0; r < w->nl; ++r) {
    const cp_joint *jt = cp_wi_cjoint_of(w, r);
    if (!jt->has_limits) continue;
    // The window counts the joint's speed only, not what its effort and the
    // contacts may add within the step (a 15 g finger pushed by 10 N covers
    // 8 mm in 5 ms from rest): a side outside it that the step crosses is
    // caught after the step, which is then taken again with every limit
    // (all_limits; cp_world_step).
    double jm = w->sc.touch_tolerance + 2 * w->opt.dt * fabs(jt->velocity) +
                1e-9;
    for (int side = 0; side < 2; ++side) {
      double gap = side ? jt->upper - jt->position : jt->position - jt->lower;
      if (gap > jm && !w->all_limits) continue;
      con *c = &w->cons[n++];
      memset(c, 0, sizeof *c);
      c->key.a[0] = -2, c->key.a[1] = r, c->key.a[2] = side;
      c->key.b[0] = c->key.b[1] = c->key.b[2] = -2;
      c->contact = -1;
      c->row = r;
      c->sign = side ? -1.0 : 1.0;
      c->gap = gap;
    }
  }
  if (w->nsup) { // support points of planar bodies on their tables
    cp_wi_support_cons(w, w->cons + n);
    n += w->nsup;
  }
  w->ncon = n;
  w->contacts_valid = 1;
  cp_wi_toc(w, &w->prof.constraints, t1);
  return CP_WORLD_OK;
}

double cp_wi_max_depth(const cp_world *w) {
  double d = 0;
  for (int j = 0; j < w->sc.n_contacts; ++j)
    if (w->sc.contacts[j].depth > d) d = w->sc.contacts[j].depth;
  return d;
}

// Overlap accepted during a simulation before the step is refused.
double cp_wi_pen_limit(const cp_world *w) {
  return fmax(100 * w->sc.penetration_tolerance, 1e-2);
}

// Contacts of the state a step reached (the penetration check and the next
// step's), with the penetration the step left settled. The steppers' rows
// are linear in the step: a body turning at w moves its points h^2 |w|^2 r
// / 2 off the straight line they predict (0.3-0.6 mm for a box landing on
// a corner at 5 ms), and a box tumbling onto another at 3 m/s can end a
// step centimetres in. In a dynamic step, contacts deeper than
// CP_WORLD_SETTLE times the scene's penetration_tolerance (at least
// CP_WORLD_SETTLE_MIN) are projected out with every constraint of the new
// state, open ones too, which a push may close (project: positions only,
// no energy made), and the contacts generated again, at most
// CP_WORLD_SETTLE_ROUNDS times (each round is linear too: a sphere pushed
// off a box's edge turns its normal). Only what is still deeper than
// pen_limit after that is refused (gen_contacts' penetration error).
#define CP_WORLD_SETTLE 0.5
#define CP_WORLD_SETTLE_MIN 1e-7 /* m: above the compliance's settling */
#define CP_WORLD_SETTLE_ROUNDS 8
#define CP_WORLD_NO_LIMIT 1e300 /* m: contacts of any depth, no error */
cp_world_status cp_wi_settle(cp_world *w, cp_step_info *info, int *moved) {
  *moved = 0;
  if (w->opt.stepper == CP_STEPPER_QUASISTATIC)
    return cp_wi_gen_contacts(w, cp_wi_pen_limit(w));
  const double lim =
      fmax(CP_WORLD_SETTLE * w->sc.penetration_tolerance, CP_WORLD_SETTLE_MIN);
  const int all_limits = w->all_limits;
  const double t0 = cp_wi_tic(w), in0 = cp_wi_phases(w);
  cp_world_status st = cp_wi_gen_contacts(w, CP_WORLD_NO_LIMIT);
  for (int r = 0; st == CP_WORLD_OK && r < CP_WORLD_SETTLE_ROUNDS &&
                  cp_wi_max_depth(w) > lim;
       ++r) {
    if (!w->all_limits) {
      // Every limit side constrains the push-out, not only those within
      // the step's window: a finger pushed out of a box must not be pushed
      // through its limit.
      w->all_limits = 1;
      w->contacts_valid = 0;
      if ((st = cp_wi_gen_contacts(w, CP_WORLD_NO_LIMIT)) != CP_WORLD_OK) break;
    }
    stepsys s;
    if ((st = cp_wi_build(w, &s)) != CP_WORLD_OK) break;
    double gs[256], *g = w->ncon <= 256 ? gs : malloc(sizeof(double) * (size_t)w->ncon);
    if (!g) {
      cp_wi_stepsys_free(w, &s);
      st = cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
      break;
    }
    // Gaps within CP_WORLD_HOLD of zero count as zero: at rounding level
    // (1e-15) they made Lemke's solution check fail on its own noise.
    int ns = 0;
    for (int j = 0; j < w->ncon; ++j) {
      w->sel[ns] = j;
      g[ns++] = fabs(w->cons[j].gap) <= CP_WORLD_HOLD ? 0.0 : w->cons[j].gap;
    }
    st = cp_wi_project(w, &s, ns, w->sel, g, info);
    if (g != gs) free(g);
    cp_wi_stepsys_free(w, &s);
    if (st != CP_WORLD_OK) break;
    *moved = 1;
    w->contacts_valid = 0;
    st = cp_wi_gen_contacts(w, CP_WORLD_NO_LIMIT);
  }
  if (w->all_limits != all_limits) { // the next step's constraints
    w->all_limits = all_limits;
    w->contacts_valid = 0;
    if (st == CP_WORLD_OK) st = cp_wi_gen_contacts(w, CP_WORLD_NO_LIMIT);
  }
  if (st == CP_WORLD_OK && cp_wi_max_depth(w) > cp_wi_pen_limit(w))
    st = cp_wi_gen_contacts(w, cp_wi_pen_limit(w)); // the error naming the pair
  cp_wi_toc_rest(w, &w->prof.constraints, t0, in0);
  return st;
}

// Viewer/log record of the step's constraints with their forces (contacts
// only; limits are not contacts).
cp_world_status cp_wi_record_contacts(cp_world *w, const double *force) {
  int nc = 0;
  for (int j = 0; j < w->ncon; ++j) nc += w->cons[j].contact >= 0;
  if (cp_grow((void **)&w->wc, &w->wc_cap, nc + 1, sizeof *w->wc))
    return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
  w->nwc = 0;
  for (int j = 0; j < w->ncon; ++j) {
    const con *c = &w->cons[j];
    if (c->contact < 0) continue;
    const cp_contact *ct = &w->sc.contacts[c->contact];
    cp_world_contact *o = &w->wc[w->nwc++];
    o->a = ct->a;
    o->b = ct->b;
    cp_v3_copy(o->p, ct->p);
    cp_v3_copy(o->n, ct->n);
    for (int d = 0; d < 3; ++d)
      o->force[d] = force[3 * j] * ct->n[d] + force[3 * j + 1] * ct->t[d] +
                    force[3 * j + 2] * ct->o[d];
    o->depth = ct->depth;
  }
  return CP_WORLD_OK;
}

int cp_world_contacts(const cp_world *w, const cp_world_contact **out) {
  *out = w->wc;
  return w->nwc;
}

