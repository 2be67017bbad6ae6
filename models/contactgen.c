// Automatic contacts from shapes; see models/contactgen.h.
#include "models/contactgen.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "models/collide.h"
#include "models/collide_impl.h"
#include "models/grow.h"
#include "models/mesh.h"
#include "models/vec3.h"

cp_contactgen_options cp_contactgen_defaults(void) {
  cp_contactgen_options o = {.penetration_tol = CP_CONTACTGEN_PENETRATION_TOL,
                             .touch_tol = CP_CONTACTGEN_TOUCH_TOL,
                             .merge_tol = 1e-9,
                             .max_points = 16,
                             .skip_same_manipulator = 0,
                             .mesh_hull = CP_COLLIDE_MESH_DEFAULT_HULL};
  return o;
}

cp_contactgen_options cp_contactgen_scene_options(const cp_scene *s) {
  cp_contactgen_options o = cp_contactgen_defaults();
  o.penetration_tol = s->penetration_tolerance;
  o.touch_tol = s->touch_tolerance;
  return o;
}

// One object with geometry at its world pose.
typedef struct gobj {
  cp_ref ref;
  const cp_shape *shape;
  double x[3], q[4];
  int fixed;
  double radius;      // bounding sphere about x (INFINITY for a plane)
  double N[3], D;     // plane: world {y : N.y = D}, solid side N.y <= D
  cp_collide_posed posed; // x, q validated and turned once (models/collide_impl.h)
  cp_shape shape_was;     // the shape's numbers when posed was made
  double lo[3], hi[3]; // the sweep's box (candidate_pairs)
  int special;        // a position or radius not finite: no box
} gobj;

// 1 when the bounding volumes of a and b are farther apart than tol (the
// pair cannot touch), 0 when the exact test is needed.
static int far_apart(const gobj *a, const gobj *b, double tol) {
  if (a->shape->type == CP_SHAPE_PLANE || b->shape->type == CP_SHAPE_PLANE) {
    const gobj *pl = a->shape->type == CP_SHAPE_PLANE ? a : b;
    const gobj *o = pl == a ? b : a;
    if (o->shape->type == CP_SHAPE_PLANE) return 0;
    return cp_v3_dot(pl->N, o->x) - pl->D > o->radius + tol;
  }
  double d[3];
  cp_v3_sub(d, a->x, b->x);
  return cp_v3_norm(d) > a->radius + b->radius + tol;
}

// Collects the objects with geometry in object order into ws->obj; *n_out
// set. Returns 0, or -1 when out of memory.
static int collect(const cp_scene *s, cp_contactgen_ws *ws, int *n_out) {
  int n = s->n_bodies, maxl = 0;
  for (int m = 0; m < s->n_manips; ++m) {
    if (s->manips[m].n > maxl) maxl = s->manips[m].n;
    for (int l = 0; l < s->manips[m].n; ++l)
      n += cp_link_shape_count(&s->manips[m].joints[l].link);
  }
  *n_out = 0;
  if (n == 0) return 0;
  if (cp_grow(&ws->obj, &ws->obj_cap, n, sizeof(gobj)) ||
      cp_grow(&ws->states, &ws->states_cap, maxl, sizeof(cp_link_state)))
    return -1;
  gobj *g = ws->obj;
  int k = 0;
  for (int i = 0; i < s->n_bodies; ++i) {
    const cp_body *b = &s->bodies[i];
    if (b->shape.type == CP_SHAPE_NONE) continue;
    gobj *o = &g[k++]; // every field is written (N, D: 0 but for a plane)
    o->ref = (cp_ref){i, -1, -1};
    o->shape = &b->shape;
    o->fixed = b->fixed;
    cp_v3_copy(o->x, b->x);
    memcpy(o->q, b->q, sizeof o->q);
    o->radius = cp_shape_bounding_radius(&b->shape);
    if (b->shape.type == CP_SHAPE_PLANE) {
      // Owner frame {y : m.y = c}; world z = x + R y: N = R m, D = c + N.x.
      double R[9];
      cp_quat_to_mat(R, b->q);
      cp_m3_mulv(o->N, R, b->shape.normal);
      o->D = b->shape.offset + cp_v3_dot(o->N, b->x);
    } else {
      o->N[0] = o->N[1] = o->N[2] = o->D = 0;
    }
  }
  for (int m = 0; m < s->n_manips; ++m) {
    const cp_chain *c = &s->manips[m];
    cp_link_state *st = ws->states;
    cp_chain_kinematics(c, st);
    for (int l = 0; l < c->n; ++l) {
      const cp_link *lk = &c->joints[l].link;
      int ns = cp_link_shape_count(lk);
      double lq[4];
      if (ns > 0) cp_quat_from_mat(st[l].R, lq);
      for (int e = 0; e < ns; ++e) {
        // The shape's pose in the link frame (models/chain.h).
        const cp_shape *sh =
            e == 0 ? &lk->shape : &lk->extra_shapes[e - 1].shape;
        if (sh->type == CP_SHAPE_NONE) continue;
        cp_link_shape ls;
        cp_link_shape_get(lk, e, &ls);
        gobj *o = &g[k++];
        o->ref = (cp_ref){-1, m, l};
        o->shape = sh;
        o->fixed = 0;
        // World pose = link frame (o_l, R_l) composed with the shape pose.
        double d[3];
        cp_m3_mulv(d, st[l].R, ls.pos);
        cp_v3_add(o->x, st[l].o, d);
        cp_quat_mul(o->q, lq, ls.quat);
        o->radius = cp_shape_bounding_radius(sh);
        o->N[0] = o->N[1] = o->N[2] = o->D = 0; // planes are fixed bodies
      }
    }
  }
  for (int i = 0; i < k; ++i) {
    gobj *o = &g[i];
    // The last call's posed object of this slot is kept when what it is
    // made of has the same bits: the shape (pointer and numbers; a mesh's
    // data is not compared, so a mesh is posed again), position and
    // quaternion (a fixed table, a body at rest to the last bit).
    if (i < ws->obj_n && !memcmp(o->posed.o.x, o->x, sizeof o->x) && // (moving: differs)
        !memcmp(o->posed.o.q, o->q, sizeof o->q) && o->posed.o.shape == o->shape &&
        o->shape->type != CP_SHAPE_MESH &&
        !memcmp(&o->shape_was, o->shape, sizeof o->shape_was))
      continue;
    cp_collide_object co = {o->shape, {0}, {0}};
    cp_v3_copy(co.x, o->x);
    memcpy(co.q, o->q, sizeof co.q);
    cp_collide_pose(&co, &o->posed);
    memcpy(&o->shape_was, o->shape, sizeof o->shape_was);
  }
  ws->obj_n = k;
  *n_out = k;
  return 0;
}

static int same_ref(cp_ref a, cp_ref b) {
  return a.body == b.body && a.manip == b.manip && a.link == b.link;
}

// A fixed body that is manipulator m's root-link geometry against one of
// m's links: skipped where the chain skips its own pairs, and for the links
// on the base (they meet it at their joint by design).
static int skip_base(const cp_scene *s, const gobj *base, const gobj *link) {
  if (base->ref.body < 0 || link->ref.body >= 0) return 0;
  int m = s->bodies[base->ref.body].base_of - 1;
  if (m < 0 || m != link->ref.manip) return 0;
  const cp_chain *c = &s->manips[m];
  return c->no_self_contacts || cp_chain_parent(c, link->ref.link) < 0;
}

static int skip_pair(const cp_scene *s, const gobj *a, const gobj *b,
                     const cp_contactgen_options *opt) {
  if (a->fixed && b->fixed) return 1;
  if (skip_base(s, a, b) || skip_base(s, b, a)) return 1;
  for (int i = 0; i < s->n_ignore; ++i) {
    cp_ref x = s->ignore[2 * i], y = s->ignore[2 * i + 1];
    if ((same_ref(x, a->ref) && same_ref(y, b->ref)) ||
        (same_ref(x, b->ref) && same_ref(y, a->ref)))
      return 1;
  }
  if (a->ref.body < 0 && b->ref.body < 0 && a->ref.manip == b->ref.manip) {
    // Two shapes of one link, or of a link and its parent (they meet at
    // the joint between them by design).
    const cp_chain *c = &s->manips[a->ref.manip];
    int la = a->ref.link, lb = b->ref.link;
    return opt->skip_same_manipulator || c->no_self_contacts || la == lb ||
           cp_chain_parent(c, la) == lb || cp_chain_parent(c, lb) == la;
  }
  return 0;
}

// Below this many objects every pair is a candidate (no sweep).
#define SWEEP_MIN 8

// Marks the pairs (i < j) that may touch in ws->pairs, a bit matrix of
// n rows of *words 64-bit words (bit j of row i). Every pair that far_apart
// would not skip is marked: with SWEEP_MIN objects or more, a sweep along
// the axis of largest spread of the centres drops the pairs whose bounding
// spheres' boxes, grown by s, [x_d - r - s, x_d + r + s + tol] on any axis
// d, are disjoint (s = 1e-9 m plus 1e-12 of |x_d|, r and tol: far above
// the rounding of these sums and of far_apart's, so that such a pair's
// centres are farther apart than r_a + r_b + tol and far_apart skips it
// too). An object with a non-finite position or radius (a plane) is
// paired with every other. The sweep's order is kept in ws between calls
// and sorted again by insertion (a step moves the objects little).
// Returns 0, -1 out of memory.
static int candidate_pairs(gobj *g, int n, double tol, cp_contactgen_ws *ws,
                           int *words) {
  const int W = (n + 63) / 64;
  *words = n < 2 ? 0 : W; // (no pairs: no rows to read)
  if (n < 2) return 0;
  if (cp_grow((void **)&ws->pairs, &ws->pairs_cap, n * W, sizeof(uint64_t)))
    return -1;
  uint64_t *bits = ws->pairs;
  if (n < SWEEP_MIN) {
    for (int i = 0; i < n; ++i) bits[i] = ((uint64_t)1 << n) - ((uint64_t)2 << i);
    return 0;
  }
  memset(bits, 0, (size_t)n * (size_t)W * sizeof *bits);
  // The axis: largest spread of the finite centres.
  double mn[3] = {INFINITY, INFINITY, INFINITY}, mx[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int i = 0; i < n; ++i) {
    gobj *o = &g[i];
    o->special = !(cp_v3_isfinite(o->x) && isfinite(o->radius));
    if (o->special) continue;
    for (int d = 0; d < 3; ++d) {
      if (o->x[d] < mn[d]) mn[d] = o->x[d];
      if (o->x[d] > mx[d]) mx[d] = o->x[d];
      const double c = o->x[d], e = 1e-9 + 1e-12 * (fabs(c) + o->radius + tol);
      o->lo[d] = c - o->radius - e;
      o->hi[d] = c + o->radius + e + tol;
    }
  }
  int ax = 0;
  for (int d = 1; d < 3; ++d)
    if (mx[d] - mn[d] > mx[ax] - mn[ax]) ax = d;
  const int a1 = ax == 0 ? 1 : 0, a2 = ax == 2 ? 1 : 2;
  // The order: last call's when it is of as many objects, else 0..n-1;
  // the finite objects sorted by lo[ax] (insertion) to its front.
  if (cp_grow((void **)&ws->order, &ws->order_cap, n, sizeof(int))) return -1;
  int *ord = ws->order;
  if (ws->order_n != n)
    for (int i = 0; i < n; ++i) ord[i] = i;
  ws->order_n = n;
  int nf = 0;
  for (int p = 0; p < n; ++p) { // writes only at or before p
    const int i = ord[p];
    if (g[i].special) continue;
    int q = nf++;
    for (; q > 0 && g[ord[q - 1]].lo[ax] > g[i].lo[ax]; --q) ord[q] = ord[q - 1];
    ord[q] = i;
  }
  for (int i = 0, q = nf; i < n; ++i) // the special ones after them
    if (g[i].special) ord[q++] = i;
#define MARK(i, j) (bits[(size_t)(i) * (size_t)W + (size_t)(j) / 64] |= (uint64_t)1 << ((j) % 64))
  for (int p = 0; p < nf; ++p) {
    const int i = ord[p];
    const gobj *o = &g[i];
    for (int q = p + 1; q < nf; ++q) {
      const int j = ord[q];
      const gobj *u = &g[j];
      if (u->lo[ax] > o->hi[ax]) break;
      if (u->lo[a1] > o->hi[a1] || o->lo[a1] > u->hi[a1] || u->lo[a2] > o->hi[a2] ||
          o->lo[a2] > u->hi[a2])
        continue;
      if (i < j) MARK(i, j); else MARK(j, i);
    }
  }
  for (int p = nf; p < n; ++p) {
    const int i = ord[p];
    for (int j = 0; j < n; ++j) {
      if (j == i) continue;
      if (i < j) MARK(i, j); else MARK(j, i);
    }
  }
#undef MARK
  return 0;
}

static int check_options(const cp_contactgen_options *o, cp_error *err) {
  if (!(o->penetration_tol >= 0) || !isfinite(o->penetration_tol))
    return cp_error_set(err, "penetration_tolerance",
                        "must be a finite number >= 0, got %g",
                        o->penetration_tol);
  if (!(o->touch_tol >= 0) || !isfinite(o->touch_tol))
    return cp_error_set(err, "touch_tolerance",
                        "must be a finite number >= 0, got %g", o->touch_tol);
  if (!(o->merge_tol >= 0) || !isfinite(o->merge_tol))
    return cp_error_set(err, "", "contact generation: merge_tol must be >= 0");
  if (o->max_points < 1 || o->max_points > CP_COLLIDE_MAX_POINTS)
    return cp_error_set(err, "",
                        "contact generation: max_points must be in 1..%d",
                        CP_COLLIDE_MAX_POINTS);
  return 0;
}

static int generate(cp_scene *s, const cp_contactgen_options *opt,
                    cp_contactgen_ws *ws, int in_place, cp_error *err);

int cp_scene_generate_contacts(cp_scene *s, const cp_contactgen_options *opt,
                               cp_error *err) {
  cp_contactgen_ws ws = {0};
  int rc = generate(s, opt, &ws, 0, err);
  cp_contactgen_ws_free(&ws);
  return rc;
}

void cp_contactgen_ws_free(cp_contactgen_ws *ws) {
  if (!ws) return;
  free(ws->obj);
  free(ws->states);
  free(ws->list);
  free(ws->order);
  free(ws->pairs);
  cp_collide_ws_free(&ws->collide);
  memset(ws, 0, sizeof *ws);
}

int cp_scene_generate_contacts_ws(cp_scene *s, const cp_contactgen_options *opt,
                                  cp_contactgen_ws *ws, cp_error *err) {
  return generate(s, opt, ws, 1, err);
}

// Both entry points; in_place: the scene's old array may be overwritten
// (the _ws variant) instead of always replaced.
static int generate(cp_scene *s, const cp_contactgen_options *opt,
                    cp_contactgen_ws *ws, int in_place, cp_error *err) {
  cp_contactgen_options def;
  if (!opt) {
    def = cp_contactgen_scene_options(s);
    opt = &def;
  }
  if (check_options(opt, err)) return -1;
  int n;
  int W;
  if (collect(s, ws, &n) || candidate_pairs(ws->obj, n, opt->touch_tol, ws, &W))
    return cp_error_setc(err, CP_ERR_NOMEM, "contacts", "out of memory");
  const gobj *g = ws->obj;

  cp_collide_options co = cp_collide_defaults();
  co.touch_tol = opt->touch_tol;
  co.merge_tol = opt->merge_tol;
  co.max_points = opt->max_points;
  co.mesh_hull = opt->mesh_hull;

  int count = 0, rc = 0, touching = 0; // touching: pairs with points
  const long flat0 = ws->collide.flat;
  ws->all_flat = 0;
  cp_collide_contact pts[CP_COLLIDE_MAX_POINTS];
  const uint64_t *bits = ws->pairs;
  for (int i = 0; i < n && !rc; ++i) {
    // The candidates j > i of row i in increasing j (candidate_pairs).
    for (int j = i;;) {
      {
        int wd = (j + 1) / 64;
        uint64_t word = wd < W ? bits[(size_t)i * (size_t)W + (size_t)wd] &
                                     (~(uint64_t)0 << ((j + 1) % 64))
                               : 0;
        while (!word && ++wd < W) word = bits[(size_t)i * (size_t)W + (size_t)wd];
        if (!word) break;
        j = wd * 64 + __builtin_ctzll(word);
      }
      if (rc) break;
      if (skip_pair(s, &g[i], &g[j], opt) ||
          far_apart(&g[i], &g[j], opt->touch_tol))
        continue;
      // a: the moving one when the other is fixed, else the earlier one.
      const gobj *a = &g[i], *b = &g[j];
      if (a->fixed) a = &g[j], b = &g[i];
      cp_error cerr;
      cp_error_clear(&cerr);
      int m = cp_collide_pair_posed(&a->posed, &b->posed, &co, &ws->collide, pts,
                                    CP_COLLIDE_MAX_POINTS, &cerr);
      char an[160], bn[160];
      if (m < 0) {
        rc = cp_error_setc(err, cerr.code ? cerr.code : CP_ERR_INPUT, "contacts",
                           "cannot collide \"%s\" with \"%s\": %s%s%s",
                           cp_scene_ref_name(s, a->ref, an, sizeof an),
                           cp_scene_ref_name(s, b->ref, bn, sizeof bn),
                           cerr.where, cerr.where[0] ? ": " : "", cerr.msg);
        break;
      }
      if (m > CP_COLLIDE_MAX_POINTS) m = CP_COLLIDE_MAX_POINTS;
      touching += m > 0;
      int old_cap = ws->list_cap;
      if (m > 0 && cp_grow((void **)&ws->list, &ws->list_cap, count + m,
                           sizeof *ws->list)) {
        rc = cp_error_setc(err, CP_ERR_NOMEM, "contacts", "out of memory");
        break;
      }
      if (ws->list_cap > old_cap) // zero padding (see below)
        memset(ws->list + old_cap, 0,
               (size_t)(ws->list_cap - old_cap) * sizeof *ws->list);
      // Friction and restitution depend on the pair only.
      double mu = 0, e = 0;
      if (m > 0) {
        mu = cp_scene_friction(s, a->ref, b->ref);
        e = cp_scene_restitution(s, a->ref, b->ref);
      }
      // A pair's points mostly share their normal: n (unit, no negative
      // zero), t and o are computed once per distinct normal pc->n.
      double n[3], t[3], o[3];
      const double *n_of = NULL; // the pc->n that n, t, o are for
      for (int k = 0; k < m && !rc; ++k) {
        const cp_collide_contact *pc = &pts[k];
        if (pc->depth > opt->penetration_tol) {
          ws->overlap.a = a->ref;
          ws->overlap.b = b->ref;
          ws->overlap.depth = pc->depth;
          cp_v3_copy(ws->overlap.p, pc->p);
          rc = cp_error_setc(
              err, CP_ERR_OVERLAP, "contacts",
              "\"%s\" and \"%s\" overlap: penetration %.6g m at [%.6g, %.6g, "
              "%.6g] exceeds the penetration tolerance %g m "
              "(\"penetration_tolerance\")",
              cp_scene_ref_name(s, a->ref, an, sizeof an),
              cp_scene_ref_name(s, b->ref, bn, sizeof bn), pc->depth, pc->p[0],
              pc->p[1], pc->p[2], opt->penetration_tol);
          break;
        }
        if (!n_of || memcmp(n_of, pc->n, sizeof n)) {
          cp_v3_scale(n, pc->n, 1.0 / cp_v3_norm(pc->n));
          for (int i = 0; i < 3; ++i) n[i] += 0.0; // no negative zeros
          cp_scene_default_tangent(n, t);
          cp_v3_cross(o, n, t);
          n_of = pc->n;
        }
        // Every field is written; the padding stays as zeroed when the
        // list grew (the bytes are compared in tests).
        cp_contact *c = &ws->list[count++];
        c->a = a->ref;
        c->b = b->ref;
        for (int i = 0; i < 3; ++i) c->p[i] = pc->p[i] + 0.0;
        cp_v3_copy(c->n, n);
        cp_v3_copy(c->t, t);
        cp_v3_copy(c->o, o);
        c->mu = mu;
        c->mu_torsion = 0;
        c->has_torsion = 0;
        c->restitution = e;
        c->depth = pc->depth;
      }
    }
  }
  if (rc) return -1;
  ws->all_flat = ws->collide.flat - flat0 == touching;
  // Into the scene: in place when its array is long enough (it holds at
  // least n_contacts), else a new exact-size array; none for no contacts.
  if (count == 0) {
    free(s->contacts);
    s->contacts = NULL;
  } else if (!in_place || count > s->n_contacts || !s->contacts) {
    cp_contact *t = malloc((size_t)count * sizeof *t);
    if (!t) return cp_error_setc(err, CP_ERR_NOMEM, "contacts", "out of memory");
    free(s->contacts);
    s->contacts = t;
  }
  if (count) memcpy(s->contacts, ws->list, (size_t)count * sizeof *ws->list);
  s->n_contacts = count;
  return 0;
}
