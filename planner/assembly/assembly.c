#include "planner/assembly/assembly.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/problem.h"
#include "models/clock.h"
#include "models/collide.h"
#include "models/contactgen.h"
#include "models/mesh.h"
#include "models/system.h"
#include "models/vec3.h"

cp_assembly_options cp_assembly_defaults(void) {
  cp_assembly_options o;
  o.stability = cp_stability_defaults();
  /* Each step of a found sequence gets its strong/weak verdict: keep the
   * exact MILPs short there (undecided is reported as such) with a count of
   * branch-and-bound nodes, the same verdict on any machine; the wall clock
   * is only a safety cap. */
  o.stability.node_limit = CP_ASSEMBLY_STABILITY_NODES;
  o.stability.time_limit_s = 600.0;
  o.directions = 0;
  o.sweep_step = 0.0;
  o.sweep_penetration = 1e-5;
  o.time_limit_s = 0.0;
  o.progress = NULL;
  o.progress_ctx = NULL;
  return o;
}

const char *cp_assembly_status_name(cp_assembly_status s) {
  switch (s) {
  case CP_ASSEMBLY_FOUND: return "found";
  case CP_ASSEMBLY_NONE: return "none";
  case CP_ASSEMBLY_LIMIT: return "limit";
  case CP_ASSEMBLY_FAILED: return "failed";
  }
  return "failed";
}

void cp_assembly_result_free(cp_assembly_result *res) {
  if (!res) return;
  free(res->part_body);
  free(res->steps);
  free(res->nodes);
  memset(res, 0, sizeof *res);
}

int cp_assembly_parts(const cp_scene *scene, int *part_body) {
  int n = 0;
  for (int i = 0; i < scene->n_bodies; i++)
    if (!scene->bodies[i].fixed) {
      if (n >= CP_ASSEMBLY_MAX_PARTS) return -1;
      if (part_body) part_body[n] = i;
      n++;
    }
  return n;
}

int cp_assembly_load_scene(const char *path, cp_scene *scene, cp_error *err) {
  cp_scene_options so = cp_scene_options_defaults();
  so.check_normal_speed = 0;
  if (cp_scene_load(path, &so, scene, err)) return -1;
  if (cp_assembly_parts(scene, NULL) < 0) {
    cp_scene_free(scene);
    return cp_error_set(err, "bodies", "at most %d free bodies are supported",
                        CP_ASSEMBLY_MAX_PARTS);
  }
  return 0;
}

/* ------------------------------------------------------------------------ */
/* The scene copy of a subassembly                                          */
/* ------------------------------------------------------------------------ */

/* A copy of the scene with only the fixed bodies, the manipulators and the
 * present parts, all at rest. It shares the original's names and shapes
 * (never cp_scene_free it: view_free releases only what it allocated). */
typedef struct view {
  cp_scene s;
  int *to_orig;   /* [s.n_bodies] original body index */
  int *to_view;   /* [original n_bodies] view index or -1 */
} view;

static void view_free(view *v) {
  for (int m = 0; v->s.manips && m < v->s.n_manips; m++) free(v->s.manips[m].joints);
  free(v->s.manips);
  free(v->s.bodies);
  free(v->s.contacts);
  free(v->to_orig);
  free(v->to_view);
  memset(v, 0, sizeof *v);
}

/* gen: 1 to give the copy its contacts (generated or filtered). */
static int view_make(const cp_scene *sc, uint64_t mask, int gen, view *v, cp_error *err) {
  memset(v, 0, sizeof *v);
  v->s = *sc;
  v->s.bodies = NULL;
  v->s.manips = NULL;
  v->s.contacts = NULL;
  v->s.n_contacts = 0;
  const size_t nb = (size_t)(sc->n_bodies > 0 ? sc->n_bodies : 1);
  v->s.bodies = malloc(nb * sizeof(cp_body));
  v->to_orig = malloc(nb * sizeof(int));
  v->to_view = malloc(nb * sizeof(int));
  v->s.manips = calloc((size_t)(sc->n_manips > 0 ? sc->n_manips : 1), sizeof(cp_chain));
  if (!v->s.bodies || !v->to_orig || !v->to_view || !v->s.manips) goto nomem;
  int n = 0, part = 0;
  for (int i = 0; i < sc->n_bodies; i++) {
    const cp_body *b = &sc->bodies[i];
    int present = b->fixed || (part < 64 && ((mask >> part) & 1u));
    if (!b->fixed) part++;
    v->to_view[i] = -1;
    if (!present) continue;
    v->s.bodies[n] = *b;
    memset(v->s.bodies[n].v, 0, sizeof b->v);
    memset(v->s.bodies[n].w, 0, sizeof b->w);
    v->to_orig[n] = i;
    v->to_view[i] = n++;
  }
  v->s.n_bodies = n;
  for (int m = 0; m < sc->n_manips; m++) {
    const cp_chain *c = &sc->manips[m];
    v->s.manips[m] = *c;
    v->s.manips[m].joints = malloc(sizeof(cp_joint) * (size_t)(c->n > 0 ? c->n : 1));
    if (!v->s.manips[m].joints) {
      v->s.n_manips = m;
      goto nomem;
    }
    memcpy(v->s.manips[m].joints, c->joints, sizeof(cp_joint) * (size_t)c->n);
    for (int k = 0; k < c->n; k++) v->s.manips[m].joints[k].velocity = 0.0;
  }
  if (!gen) return 0;
  if (sc->contacts_auto) {
    if (cp_scene_generate_contacts(&v->s, NULL, err)) {
      view_free(v);
      return -1;
    }
    return 0;
  }
  v->s.contacts = malloc(sizeof(cp_contact) * (size_t)(sc->n_contacts > 0 ? sc->n_contacts : 1));
  if (!v->s.contacts) goto nomem;
  for (int j = 0; j < sc->n_contacts; j++) {
    cp_contact c = sc->contacts[j];
    if ((c.a.body >= 0 && v->to_view[c.a.body] < 0) || (c.b.body >= 0 && v->to_view[c.b.body] < 0))
      continue;
    if (c.a.body >= 0) c.a.body = v->to_view[c.a.body];
    if (c.b.body >= 0) c.b.body = v->to_view[c.b.body];
    v->s.contacts[v->s.n_contacts++] = c;
  }
  return 0;
nomem:
  view_free(v);
  return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
}

int cp_assembly_stability(const cp_scene *scene, uint64_t mask,
                          const cp_stability_options *opt,
                          cp_stability_result *res, cp_system *sys_out,
                          cp_contact **view_contacts, int *n_view_contacts,
                          cp_error *err) {
  memset(res, 0, sizeof *res);
  view v;
  if (view_make(scene, mask, 1, &v, err)) return -1;
  cp_system sys;
  if (cp_system_build(&v.s, &sys, err)) {
    view_free(&v);
    return -1;
  }
  cp_stability_options o = opt ? *opt : cp_stability_defaults();
  double *mut = malloc(sizeof(double) * (size_t)(v.s.n_contacts > 0 ? v.s.n_contacts : 1));
  if (!mut) {
    cp_system_free(&sys);
    view_free(&v);
    return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  }
  o.mu_torsion = cp_problem_torsion_from_scene(&v.s, mut) > 0 ? mut : NULL;
  cp_stability_decide(&sys, &o, res);
  free(mut);
  if (view_contacts) {
    /* Back to the original scene's body indices. */
    for (int j = 0; j < v.s.n_contacts; j++) {
      cp_contact *c = &v.s.contacts[j];
      if (c->a.body >= 0) c->a.body = v.to_orig[c->a.body];
      if (c->b.body >= 0) c->b.body = v.to_orig[c->b.body];
    }
    *view_contacts = v.s.contacts;
    *n_view_contacts = v.s.n_contacts;
    v.s.contacts = NULL;
  }
  if (sys_out) *sys_out = sys;
  else cp_system_free(&sys);
  view_free(&v);
  return 0;
}

/* ------------------------------------------------------------------------ */
/* Removal directions and sweeps                                            */
/* ------------------------------------------------------------------------ */

void cp_assembly_directions(int extra, double *dirs) {
  static const double axes[6][3] = {{1, 0, 0}, {-1, 0, 0}, {0, 1, 0},
                                    {0, -1, 0}, {0, 0, 1}, {0, 0, -1}};
  memcpy(dirs, axes, sizeof axes);
  /* A Fibonacci lattice: near-uniform points, deterministic. */
  const double golden = acos(-1.0) * (3.0 - sqrt(5.0));
  for (int i = 0; i < extra; i++) {
    double z = 1.0 - 2.0 * (i + 0.5) / extra, r = sqrt(fmax(0.0, 1.0 - z * z));
    double *d = dirs + 3 * (6 + i);
    d[0] = r * cos(golden * i);
    d[1] = r * sin(golden * i);
    d[2] = z;
  }
}

static double bound_radius(const cp_shape *s) {
  switch (s->type) {
  case CP_SHAPE_BOX: return 0.5 * cp_v3_norm(s->size);
  case CP_SHAPE_SPHERE: return s->radius;
  case CP_SHAPE_CYLINDER: return hypot(s->radius, 0.5 * s->length);
  case CP_SHAPE_CAPSULE: return 0.5 * s->length + s->radius;
  case CP_SHAPE_MESH: return s->mesh ? s->mesh->radius : INFINITY;
  default: return INFINITY;
  }
}

/* The thickness below which a sweep sample could miss a shape. */
static double thin_dim(const cp_shape *s) {
  switch (s->type) {
  case CP_SHAPE_BOX: return fmin(s->size[0], fmin(s->size[1], s->size[2]));
  case CP_SHAPE_SPHERE: return 2.0 * s->radius;
  case CP_SHAPE_CYLINDER: return fmin(2.0 * s->radius, s->length);
  case CP_SHAPE_CAPSULE: return 2.0 * s->radius;
  case CP_SHAPE_MESH: /* a surface: its smallest bounding-box extent */
    return s->mesh ? fmin(s->mesh->hi[0] - s->mesh->lo[0],
                          fmin(s->mesh->hi[1] - s->mesh->lo[1], s->mesh->hi[2] - s->mesh->lo[2]))
                   : INFINITY;
  default: return INFINITY;
  }
}

/* Deepest overlap of object a with the manipulators' links (0 without
 * manipulators). The link poses come from contact generation on a scene
 * copy holding a alone, so the kinematics is models/'s. -1 on error. */
static int links_depth(const cp_scene *sc, const cp_body *moved, double *depth, cp_error *err) {
  *depth = -INFINITY;
  if (sc->n_manips == 0) return 0;
  cp_scene s = *sc;
  cp_body b = *moved;
  b.fixed = 0;
  s.bodies = &b;
  s.n_bodies = 1;
  s.contacts = NULL;
  s.n_contacts = 0;
  cp_contactgen_options o = cp_contactgen_scene_options(sc);
  o.penetration_tol = 1e30; /* depth is the answer here, not an error */
  o.skip_same_manipulator = 1;
  if (cp_scene_generate_contacts(&s, &o, err)) return -1;
  for (int j = 0; j < s.n_contacts; j++)
    if (s.contacts[j].a.body == 0 || s.contacts[j].b.body == 0)
      *depth = fmax(*depth, s.contacts[j].depth);
  free(s.contacts);
  return 0;
}

int cp_assembly_removable(const cp_scene *scene, uint64_t mask, int part,
                          const double *d, const cp_assembly_options *opt,
                          cp_error *err) {
  cp_assembly_options def = cp_assembly_defaults();
  if (!opt) opt = &def;
  int pb[CP_ASSEMBLY_MAX_PARTS];
  int np = cp_assembly_parts(scene, pb);
  if (np < 0 || part < 0 || part >= np) return cp_error_set(err, "", "no part %d", part);
  const cp_body *mb = &scene->bodies[pb[part]];
  if (mb->shape.type == CP_SHAPE_NONE || mb->shape.type == CP_SHAPE_PLANE) return 1;
  /* The others present: fixed bodies and the parts of mask but `part`. */
  cp_collide_object *oth = malloc(sizeof *oth * (size_t)(scene->n_bodies > 0 ? scene->n_bodies : 1));
  double *rad = malloc(sizeof(double) * (size_t)(scene->n_bodies > 0 ? scene->n_bodies : 1));
  if (!oth || !rad) {
    free(oth);
    free(rad);
    return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  }
  int no = 0;
  const double rp = bound_radius(&mb->shape);
  double h = thin_dim(&mb->shape), L = 0.0;
  for (int i = 0, k = 0; i < scene->n_bodies; i++) {
    const cp_body *b = &scene->bodies[i];
    int present = b->fixed || ((mask >> k) & 1u);
    if (!b->fixed) k++;
    if (!present || b == mb || b->shape.type == CP_SHAPE_NONE) continue;
    oth[no] = (cp_collide_object){&b->shape, {b->x[0], b->x[1], b->x[2]},
                                  {b->q[0], b->q[1], b->q[2], b->q[3]}};
    rad[no] = bound_radius(&b->shape);
    if (isfinite(rad[no])) {
      double rel[3];
      cp_v3_sub(rel, b->x, mb->x);
      L = fmax(L, cp_v3_dot(rel, d) + rad[no] + rp);
      h = fmin(h, thin_dim(&b->shape));
    }
    no++;
  }
  for (int m = 0; m < scene->n_manips; m++)
    for (int l = 0; l < scene->manips[m].n; l++) {
      const cp_link *lk = &scene->manips[m].joints[l].link;
      const int ns = cp_link_shape_count(lk);
      if (ns == 0) continue;
      double R[9], x[3], rel[3];
      cp_scene_frame(scene, (cp_ref){-1, m, l}, R, x);
      cp_v3_sub(rel, x, mb->x);
      for (int k = 0; k < ns; k++) {
        cp_link_shape ls;
        cp_link_shape_get(lk, k, &ls);
        if (ls.shape.type == CP_SHAPE_NONE) continue;
        const double r = bound_radius(&ls.shape);
        /* A link shape without a finite bound leaves L as it is: the sweep
         * then ends where the bodies' bounds say (documented). */
        if (isfinite(r)) L = fmax(L, cp_v3_dot(rel, d) + cp_v3_norm(ls.pos) + r + rp);
        h = fmin(h, thin_dim(&ls.shape));
      }
    }
  if (opt->sweep_step > 0) h = opt->sweep_step;
  else h *= 0.5;
  L += h;
  cp_collide_options co = cp_collide_defaults();
  co.touch_tol = scene->touch_tolerance;
  cp_collide_contact cc[CP_COLLIDE_MAX_POINTS];
  cp_collide_object me = {&mb->shape, {mb->x[0], mb->x[1], mb->x[2]},
                          {mb->q[0], mb->q[1], mb->q[2], mb->q[3]}};
  int ok = 1;
  /* s = 0: every touching contact must open or slide along d. */
  for (int o = 0; o < no && ok; o++) {
    int nc = cp_collide_pair(&me, &oth[o], &co, cc, CP_COLLIDE_MAX_POINTS, err);
    if (nc < 0) { ok = -1; break; }
    for (int j = 0; j < nc && j < CP_COLLIDE_MAX_POINTS; j++)
      if (cp_v3_dot(cc[j].n, d) < -1e-9) ok = 0;
  }
  const int nsamp = (int)ceil(L / h);
  for (int k = 1; k <= nsamp && ok == 1; k++) {
    const double s = fmin(k * h, L);
    cp_v3_axpy(me.x, mb->x, s, d);
    for (int o = 0; o < no && ok == 1; o++) {
      if (isfinite(rad[o])) {
        double rel[3];
        cp_v3_sub(rel, oth[o].x, me.x);
        if (cp_v3_norm(rel) > rp + rad[o] + 1e-6) continue;
      }
      int nc = cp_collide_pair(&me, &oth[o], &co, cc, CP_COLLIDE_MAX_POINTS, err);
      if (nc < 0) { ok = -1; break; }
      for (int j = 0; j < nc && j < CP_COLLIDE_MAX_POINTS; j++)
        if (cc[j].depth > opt->sweep_penetration) ok = 0;
    }
    if (ok == 1 && scene->n_manips) {
      cp_body moved = *mb;
      cp_v3_copy(moved.x, me.x);
      double dep;
      if (links_depth(scene, &moved, &dep, err)) ok = -1;
      else if (dep > opt->sweep_penetration) ok = 0;
    }
  }
  free(oth);
  free(rad);
  return ok;
}

/* ------------------------------------------------------------------------ */
/* The search                                                               */
/* ------------------------------------------------------------------------ */

typedef struct node {
  uint64_t mask;
  signed char used, stable, feasible, dead_end;
  signed char part;     /* feasible: the part removed first */
  int dir;              /* its direction index */
} node;

typedef struct search {
  const cp_scene *scene;
  const cp_assembly_options *opt;
  int np;
  int *part_body;
  int *order;           /* parts from the highest down */
  int ndir;
  double *dirs;
  node *tab;
  size_t cap, used;
  int explored, checks;
  int failed, limit;
  char msg[256];
  double t0; /* cp_clock_now() at the start */
  int has_blocked;
  uint64_t blocked;
} search;

static double elapsed(const double *t0) { return cp_clock_now() - *t0; }

static size_t hash64(uint64_t x) {
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return (size_t)x;
}

/* The node of mask, created (unknown) when absent; NULL when out of memory. */
static node *lookup(search *S, uint64_t mask) {
  if (2 * (S->used + 1) > S->cap) {
    size_t cap = S->cap ? 2 * S->cap : 256;
    node *t = calloc(cap, sizeof *t);
    if (!t) return NULL;
    for (size_t i = 0; i < S->cap; i++)
      if (S->tab[i].used) {
        size_t k = hash64(S->tab[i].mask) & (cap - 1);
        while (t[k].used) k = (k + 1) & (cap - 1);
        t[k] = S->tab[i];
      }
    free(S->tab);
    S->tab = t;
    S->cap = cap;
  }
  size_t k = hash64(mask) & (S->cap - 1);
  while (S->tab[k].used && S->tab[k].mask != mask) k = (k + 1) & (S->cap - 1);
  node *n = &S->tab[k];
  if (!n->used) {
    memset(n, 0, sizeof *n);
    n->used = 1;
    n->mask = mask;
    n->stable = -1;
    n->feasible = -1;
    n->part = -1;
    S->used++;
  }
  return n;
}

/* 1 equilibrium, 0 none, -1 failure (S->msg). */
static int stable(search *S, uint64_t mask) {
  node *n = lookup(S, mask);
  if (!n) {
    snprintf(S->msg, sizeof S->msg, "out of memory");
    return -1;
  }
  if (n->stable >= 0) return n->stable;
  if (mask == 0) return n->stable = 1;
  cp_stability_options o = S->opt->stability;
  o.depth = CP_STABILITY_EQUILIBRIUM;
  o.try_solve = 0;
  cp_stability_result r;
  cp_error err;
  memset(&err, 0, sizeof err);
  S->checks++;
  if (cp_assembly_stability(S->scene, mask, &o, &r, NULL, NULL, NULL, &err)) {
    snprintf(S->msg, sizeof S->msg, "contacts of a subassembly: %.200s", err.msg);
    return -1;
  }
  int k = r.kind;
  if (k == CP_STABILITY_FAILED) snprintf(S->msg, sizeof S->msg, "stability: %.200s", r.reason);
  cp_stability_result_free(&r);
  if (k == CP_STABILITY_FAILED) return -1;
  n = lookup(S, mask); /* the table may have moved */
  return n->stable = (k != CP_STABILITY_UNSTABLE);
}

static int popcount64(uint64_t x) {
  int c = 0;
  for (; x; x &= x - 1) c++;
  return c;
}

/* 1 the subassembly can be taken apart stably, 0 not, -1 failure/limit. */
static int feasible(search *S, uint64_t mask) {
  if (mask == 0) return 1;
  node *n = lookup(S, mask);
  if (!n) {
    snprintf(S->msg, sizeof S->msg, "out of memory");
    return -1;
  }
  if (n->feasible >= 0) return n->feasible;
  if (S->opt->time_limit_s > 0 && elapsed(&S->t0) > S->opt->time_limit_s) {
    S->limit = 1;
    snprintf(S->msg, sizeof S->msg, "time limit of %g s reached", S->opt->time_limit_s);
    return -1;
  }
  S->explored++;
  if (S->opt->progress) S->opt->progress(S->opt->progress_ctx, S->explored, popcount64(mask));
  int any = 0;
  for (int oi = 0; oi < S->np; oi++) {
    const int p = S->order[oi];
    if (!((mask >> p) & 1u)) continue;
    const uint64_t rem = mask & ~((uint64_t)1 << p);
    int st = stable(S, rem);
    if (st < 0) return -1;
    if (!st) continue;
    int dir = -1;
    for (int k = 0; k < S->ndir && dir < 0; k++) {
      cp_error err;
      memset(&err, 0, sizeof err);
      int r = cp_assembly_removable(S->scene, mask, p, S->dirs + 3 * k, S->opt, &err);
      if (r < 0) {
        snprintf(S->msg, sizeof S->msg, "sweep: %.200s", err.msg);
        return -1;
      }
      if (r) dir = k;
    }
    if (dir < 0) continue;
    any = 1;
    int f = feasible(S, rem);
    if (f < 0) return -1;
    if (f) {
      n = lookup(S, mask);
      n->feasible = 1;
      n->part = (signed char)p;
      n->dir = dir;
      return 1;
    }
  }
  n = lookup(S, mask);
  n->feasible = 0;
  if (!any) {
    n->dead_end = 1;
    if (!S->has_blocked || popcount64(mask) < popcount64(S->blocked)) {
      S->has_blocked = 1;
      S->blocked = mask;
    }
  }
  return 0;
}

cp_assembly_status cp_assembly_plan(const cp_scene *scene,
                                    const cp_assembly_options *opt,
                                    cp_assembly_result *res) {
  cp_assembly_options def = cp_assembly_defaults();
  if (!opt) opt = &def;
  memset(res, 0, sizeof *res);
  search S;
  memset(&S, 0, sizeof S);
  S.scene = scene;
  S.opt = opt;
  S.t0 = cp_clock_now();
  S.np = cp_assembly_parts(scene, NULL);
  if (S.np < 0) {
    res->status = CP_ASSEMBLY_FAILED;
    snprintf(res->message, sizeof res->message, "more than %d parts", CP_ASSEMBLY_MAX_PARTS);
    return res->status;
  }
  const int extra = opt->directions > 0 ? opt->directions : 0;
  S.ndir = 6 + extra;
  S.part_body = malloc(sizeof(int) * (size_t)(S.np > 0 ? S.np : 1));
  S.order = malloc(sizeof(int) * (size_t)(S.np > 0 ? S.np : 1));
  S.dirs = malloc(sizeof(double) * 3 * (size_t)S.ndir);
  res->steps = calloc((size_t)(S.np > 0 ? S.np : 1), sizeof(cp_assembly_step));
  if (!S.part_body || !S.order || !S.dirs || !res->steps) {
    free(S.part_body); free(S.order); free(S.dirs);
    res->status = CP_ASSEMBLY_FAILED;
    snprintf(res->message, sizeof res->message, "out of memory");
    return res->status;
  }
  cp_assembly_parts(scene, S.part_body);
  cp_assembly_directions(extra, S.dirs);
  /* Lifting off (against gravity) is tried first, then sideways, then
   * downwards: the order only decides which of several valid sequences is
   * reported. Stable insertion sort keeps ties in the listed order. */
  double gd[3] = {0, 0, -1};
  if (cp_v3_norm(scene->gravity) > 0) cp_v3_scale(gd, scene->gravity, 1.0 / cp_v3_norm(scene->gravity));
  for (int i = 1; i < S.ndir; i++) {
    double d[3];
    cp_v3_copy(d, S.dirs + 3 * i);
    int k = i;
    while (k > 0 && cp_v3_dot(S.dirs + 3 * (k - 1), gd) > cp_v3_dot(d, gd) + 1e-12) {
      cp_v3_copy(S.dirs + 3 * k, S.dirs + 3 * (k - 1));
      k--;
    }
    cp_v3_copy(S.dirs + 3 * k, d);
  }
  /* Highest parts first: a tower comes apart top-down at once. */
  double gdir[3] = {0, 0, -1};
  if (cp_v3_norm(scene->gravity) > 0) cp_v3_scale(gdir, scene->gravity, 1.0 / cp_v3_norm(scene->gravity));
  for (int i = 0; i < S.np; i++) {
    /* insertion sort by height, ties in part order (deterministic) */
    const double hi = -cp_v3_dot(scene->bodies[S.part_body[i]].x, gdir);
    int k = i;
    while (k > 0 && -cp_v3_dot(scene->bodies[S.part_body[S.order[k - 1]]].x, gdir) < hi) {
      S.order[k] = S.order[k - 1];
      k--;
    }
    S.order[k] = i;
  }
  res->n_parts = S.np;
  res->part_body = S.part_body;
  const uint64_t all = S.np == 64 ? ~(uint64_t)0 : (((uint64_t)1 << S.np) - 1);
  int f;
  int st = stable(&S, all);
  if (st < 0) f = -1;
  else if (!st) {
    f = 0;
    S.has_blocked = 1;
    S.blocked = all;
    snprintf(S.msg, sizeof S.msg, "the complete assembly is not stable");
    node *n = lookup(&S, all);
    if (n) n->feasible = 0, n->dead_end = 1;
  } else f = feasible(&S, all);

  if (f == 1) {
    /* Removal order from the whole assembly, placed in reverse. */
    uint64_t mask = all;
    int k = S.np;
    while (mask) {
      node *n = lookup(&S, mask);
      cp_assembly_step *step = &res->steps[--k];
      step->part = n->part;
      step->body = S.part_body[n->part];
      for (int c = 0; c < 3; c++) step->direction[c] = 0.0 - S.dirs[3 * n->dir + c];
      cp_stability_result r;
      cp_error err;
      memset(&err, 0, sizeof err);
      step->stability = CP_STABILITY_FAILED;
      if (!cp_assembly_stability(scene, mask, &opt->stability, &r, NULL, NULL, NULL, &err)) {
        step->stability = r.kind;
        cp_stability_result_free(&r);
      }
      mask &= ~((uint64_t)1 << n->part);
    }
    res->n_steps = S.np;
    res->status = CP_ASSEMBLY_FOUND;
  } else if (f == 0) {
    res->status = CP_ASSEMBLY_NONE;
    snprintf(res->message, sizeof res->message, "%s", S.msg); /* "" or why */
  } else {
    res->status = S.limit ? CP_ASSEMBLY_LIMIT : CP_ASSEMBLY_FAILED;
    snprintf(res->message, sizeof res->message, "%s", S.msg);
  }
  res->explored = S.explored;
  res->stability_checks = S.checks;
  res->has_blocked = res->status == CP_ASSEMBLY_NONE && S.has_blocked;
  res->blocked = S.blocked;
  res->nodes = malloc(sizeof(cp_assembly_node) * (S.used > 0 ? S.used : 1));
  if (res->nodes)
    for (size_t i = 0; i < S.cap; i++) {
      const node *n = &S.tab[i];
      if (!n->used) continue;
      res->nodes[res->n_nodes++] = (cp_assembly_node){n->mask, n->stable, n->feasible == 1,
                                                      n->dead_end};
    }
  free(S.tab);
  free(S.order);
  free(S.dirs);
  res->seconds = elapsed(&S.t0);
  return res->status;
}
