// The system of a step (planner/sim/world_impl.h): H, f, G, k of the scene
// (models/system.h) extended by the joint-limit columns, A = G^T H^-1 G and
// b by contact/dynamics.h, the workspaces the steppers and the LCP share,
// and the generalised velocities and positions moved in and out of the
// scene.
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/bigbuf.h"
#include "models/grow.h"
#include "models/vec3.h"
#include "planner/sim/world_impl.h"

// ---------------------------------------------------------------------------
// Workspaces

// A square scratch matrix grown to n doubles without keeping its contents:
// realloc's copy of the old matrix (M, the LU and M_B of the warm start, As
// are all written before they are read, after every cp_wi_ensure) was half
// of a settling bin's stepping, whose problems grow as boxes land. A large
// one is on huge pages (models/bigbuf.h: a large scene reads these
// matrices a 3 x 3 block at a time, a column per 4 KB page, and the TLB
// misses cost more than the arithmetic); released by cp_bigbuf_free.
static int fresh(double **p, size_t n) {
  *p = cp_bigbuf_regrow(*p, sizeof(double) * n); // (a large one in place)
  return *p ? 0 : -1;
}

// cp_wi_ensure with the growth given: a new capacity is twice what is
// asked (grow 2; a step's) or exactly that (grow 1; a reserve's).
static cp_world_status ensure(cp_world *w, int ncon, int lcp_n, int grow) {
  size_t nu = (size_t)(w->nu > 0 ? w->nu : 1);
  int n3 = 3 * (ncon > 0 ? ncon : 1);
  if (n3 > w->csz_cap) {
    int cap = n3 * grow;
    double *p[6];
    size_t sz[6] = {nu * (size_t)cap, (size_t)cap, (size_t)cap * (size_t)cap,
                    (size_t)cap, (size_t)cap, (size_t)cap};
    double **dst[6] = {&w->Gx, &w->kx, &w->As, &w->bs, &w->c, &w->cfull};
    for (int i = 0; i < 6; ++i) {
      if (i == 2) { // As
        w->as_zero = 0; // (its contents unknown: lcp.c's extract)
        w->as_fp_n = 0;
        if (fresh(&w->As, sz[2])) {
          w->csz_cap = 0; // (As is gone: the next call allocates again)
          return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
        }
        continue;
      }
      p[i] = realloc(*dst[i], sizeof(double) * sz[i]);
      if (!p[i]) return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
      *dst[i] = p[i];
    }
    int *si = realloc(w->sel, sizeof(int) * (size_t)cap);
    if (!si) return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
    w->sel = si;
    si = realloc(w->order, sizeof(int) * (size_t)cap);
    if (!si) return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
    w->order = si;
    si = realloc(w->rank, sizeof(int) * (size_t)cap);
    if (!si) return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
    w->rank = si;
    cp_pyramid_contact *pc = realloc(w->pc, sizeof *pc * (size_t)cap);
    if (!pc) return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
    w->pc = pc;
    double *vc = realloc(w->vc, sizeof(double) * (size_t)cap);
    if (!vc) return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
    w->vc = vc;
    w->csz_cap = cap;
  }
  if (lcp_n > w->lcp_cap) {
    int cap = lcp_n * grow;
    double **dst[3] = {&w->q, &w->z, &w->w};
    for (int i = 0; i < 3; ++i) {
      double *p = realloc(*dst[i], sizeof(double) * (size_t)cap);
      if (!p) return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
      *dst[i] = p;
    }
    const size_t sq = (size_t)cap * (size_t)cap;
    if (fresh(&w->M, sq) || fresh(&w->LU, sq) || fresh(&w->MB, sq)) {
      w->lcp_cap = 0; // (as above)
      return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
    }
    lapack_int *ip = realloc(w->ipiv, sizeof(lapack_int) * (size_t)cap);
    if (!ip) return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
    w->ipiv = ip;
    int *zi = realloc(w->zidx, sizeof(int) * (size_t)cap);
    if (!zi) return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
    w->zidx = zi;
    unsigned char *b = realloc(w->basis, (size_t)cap);
    if (!b) return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
    w->basis = b;
    b = realloc(w->basis0, (size_t)cap);
    if (!b) return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
    w->basis0 = b;
    w->ws = cp_lemke_ws_regrow(w->ws, cap); // (its large blocks in place)
    if (!w->ws) return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
    w->lcp_cap = cap;
  }
  return CP_WORLD_OK;
}

cp_world_status cp_wi_ensure(cp_world *w, int ncon, int lcp_n) { return ensure(w, ncon, lcp_n, 2); }

// The world sized for ncontacts contacts (cp_world_options.reserve): with
// every limit side and support point, ncon constraints; an LCP has at
// most a row per constraint and five more per contact or support that
// rolls (lcp.c's cp_wi_lcp_setup). Every array a step grows with the
// constraints is made that large now and its pages written once
// (cp_bigbuf_touch), so that steps within it take no new memory and no
// first-touch page faults (docs/simulate.md, "Reserve"). max_lcp > 0
// (CP_WORLD_RESERVE_AUTO) caps the LCP bound: as many of the ncontacts as
// fit within it, and nothing at all when the limits and supports alone do
// not.
cp_world_status cp_wi_reserve(cp_world *w, int ncontacts, int max_lcp) {
  int nlim = 0;
  for (int r = 0; r < w->nl; ++r) nlim += 2 * cp_wi_cjoint_of(w, r)->has_limits;
  if (max_lcp > 0) { // lcp_n below is 6 (ncontacts + nsup) + nlim
    const int fit = (max_lcp - nlim) / 6 - w->nsup;
    if (nlim + 6 * w->nsup > max_lcp) return CP_WORLD_OK;
    if (ncontacts > fit) ncontacts = fit;
  }
  const int nroll = ncontacts + w->nsup, ncon = nroll + nlim, lcp_n = ncon + 5 * nroll;
  if (ensure(w, ncon, lcp_n > 0 ? lcp_n : 1, 1) != CP_WORLD_OK) return CP_WORLD_NOMEM;
  w->ws = cp_lemke_ws_reserve(w->ws, w->lcp_cap);
  if (!w->ws) {
    w->lcp_cap = 0; // (the next cp_wi_ensure makes one)
    return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
  }
  const int nc0 = w->ncon;
  w->ncon = ncon; // (the check's arrays are sized by it)
  cp_world_status st = cp_wi_grow_check(w);
  w->ncon = nc0;
  if (st != CP_WORLD_OK) return st;
  // The constraints, their ranges, the neighbour lists of the warm start
  // and of A's selection (lcp.c, steppers.c), the selection's footprint
  // (at most every pair of constraints), the contacts' record and the warm
  // records (warm.c: warm and warm_next share warm_cap).
  const int nn = w->sc.n_bodies + w->sc.n_manips, wcap0 = w->warm_cap;
  const int pairs = ncon <= 30000 ? 2 * ncon * ncon + 2 : 0; // (an int; beyond: as needed)
  if (cp_grow((void **)&w->cons, &w->con_cap, ncon + 1, sizeof *w->cons) ||
      cp_grow((void **)&w->ck_rng, &w->ck_rng_cap, 4 * ncon + 4, sizeof(int)) ||
      cp_grow((void **)&w->nb_buf, &w->nb_cap, 4 * ncon + nn + 1, sizeof(int)) ||
      cp_grow((void **)&w->ex_buf, &w->ex_cap, 4 * ncon + nn + 1, sizeof(int)) ||
      cp_grow((void **)&w->as_fp, &w->as_fp_cap, pairs, sizeof(int)) ||
      cp_grow((void **)&w->wc, &w->wc_cap, ncontacts + 1, sizeof *w->wc) ||
      cp_grow((void **)&w->warm_next, &w->warm_cap, ncon + 1, sizeof *w->warm_next))
    return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
  if (w->warm_cap != wcap0 || !w->warm) {
    wrec *p = realloc(w->warm, sizeof *p * (size_t)w->warm_cap);
    if (!p) {
      w->warm_cap = wcap0; // (as warm.c's warm_push)
      return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
    }
    w->warm = p;
  }
  // The contact space: H_FF's blocks lie within H's (w->ck_blk), so the
  // squares of those bound its factors'.
  size_t ltot = 0;
  for (int b = 0; b < w->nblk; ++b) {
    const size_t sz = (size_t)(w->ck_blk[b + 1] - w->ck_blk[b]);
    ltot += sz * sz;
  }
  const int cr = cp_contact_space_reserve(&w->cs_keep, w->nu, ncon, ltot);
  if (cr || cp_system_ws_reserve(&w->sc, ncontacts, &w->sys_ws))
    return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
  const size_t nu = (size_t)(w->nu > 0 ? w->nu : 1), cc = (size_t)w->csz_cap,
               lc = (size_t)w->lcp_cap;
  cp_bigbuf_touch(w->Gx, sizeof(double) * nu * cc);
  cp_bigbuf_touch(w->As, sizeof(double) * cc * cc);
  double *vecs[] = {w->kx, w->bs, w->c, w->cfull, w->vc};
  for (size_t i = 0; i < sizeof vecs / sizeof *vecs; ++i)
    cp_bigbuf_touch(vecs[i], sizeof(double) * cc);
  int *ivecs[] = {w->sel, w->order, w->rank};
  for (size_t i = 0; i < sizeof ivecs / sizeof *ivecs; ++i)
    cp_bigbuf_touch(ivecs[i], sizeof(int) * cc);
  cp_bigbuf_touch(w->pc, sizeof *w->pc * cc);
  double *sq[] = {w->M, w->LU, w->MB};
  for (size_t i = 0; i < sizeof sq / sizeof *sq; ++i)
    cp_bigbuf_touch(sq[i], sizeof(double) * lc * lc);
  double *lv[] = {w->q, w->z, w->w};
  for (size_t i = 0; i < sizeof lv / sizeof *lv; ++i)
    cp_bigbuf_touch(lv[i], sizeof(double) * lc);
  cp_bigbuf_touch(w->ipiv, sizeof(lapack_int) * lc);
  cp_bigbuf_touch(w->zidx, sizeof(int) * lc);
  cp_bigbuf_touch(w->basis, lc);
  cp_bigbuf_touch(w->basis0, lc);
  cp_bigbuf_touch(w->ck_p, sizeof(double) * (size_t)w->ck_cap);
  cp_bigbuf_touch(w->ck_buf, sizeof(double) * (size_t)w->ck_cap);
  cp_bigbuf_touch(w->cons, sizeof *w->cons * (size_t)w->con_cap);
  cp_bigbuf_touch(w->ck_rng, sizeof(int) * (size_t)w->ck_rng_cap);
  cp_bigbuf_touch(w->nb_buf, sizeof(int) * (size_t)w->nb_cap);
  cp_bigbuf_touch(w->ex_buf, sizeof(int) * (size_t)w->ex_cap);
  cp_bigbuf_touch(w->as_fp, sizeof(int) * (size_t)w->as_fp_cap);
  cp_bigbuf_touch(w->wc, sizeof *w->wc * (size_t)w->wc_cap);
  cp_bigbuf_touch(w->warm, sizeof *w->warm * (size_t)w->warm_cap);
  cp_bigbuf_touch(w->warm_next, sizeof *w->warm_next * (size_t)w->warm_cap);
  return CP_WORLD_OK;
}

int cp_wi_con_ranges(cp_world *w) {
  const int nc = w->ncon;
  if (cp_grow((void **)&w->ck_rng, &w->ck_rng_cap, 4 * nc + 4, sizeof(int))) return -1;
  const int no = 6 * w->nobj;
  for (int j = 0; j < nc; ++j) {
    const con *c = &w->cons[j];
    int *rg = w->ck_rng + 4 * j;
    rg[0] = rg[1] = rg[2] = rg[3] = 0;
    if (c->contact == CP_CON_SUPPORT) { // its body's six coordinates
      rg[0] = 6 * c->row, rg[1] = rg[0] + 6;
      continue;
    }
    if (c->contact < 0) {
      rg[0] = no + c->row, rg[1] = no + c->row + 1;
      continue;
    }
    const cp_contact *ct = &w->sc.contacts[c->contact];
    for (int side = 0; side < 2; ++side) {
      const cp_ref r = side ? ct->b : ct->a;
      if (r.body >= 0 && w->free_idx[r.body] >= 0) {
        rg[2 * side] = 6 * w->free_idx[r.body];
        rg[2 * side + 1] = rg[2 * side] + 6;
      } else if (r.body < 0 && r.manip >= 0) {
        rg[2 * side] = no + w->manip_r0[r.manip];
        rg[2 * side + 1] = no + w->manip_r0[r.manip + 1];
      }
    }
    if (rg[2] == rg[0] && rg[3] == rg[1]) rg[2] = rg[3] = 0; // one manipulator
  }
  return 0;
}

// ---------------------------------------------------------------------------
// The system of a step

// The contact space's arrays go back to the world (w->cs_keep) for the
// next build instead of the allocator.
void cp_wi_stepsys_free(cp_world *w, stepsys *s) {
  if (!s->built) return;
  cp_contact_space_free(&w->cs_keep);
  w->cs_keep = s->cs;
  memset(&s->cs, 0, sizeof s->cs);
  cp_system_free(&s->sys);
  s->built = 0;
}

// H, f, G, k of the scene's contacts extended by the limit columns; A, b;
// the constraint velocities vc = G^T u.
static cp_world_status build(cp_world *w, stepsys *s) {
  cp_error err;
  cp_error_clear(&err);
  memset(s, 0, sizeof *s);
  if (cp_system_build_ws(&w->sc, &w->sys_ws, &s->sys, &err))
    return cp_wi_fail(w, CP_WORLD_NOMEM, "%s", err.msg);
  cp_world_status st = cp_wi_ensure(w, w->ncon, 0);
  if (st != CP_WORLD_OK) {
    cp_system_free(&s->sys);
    return st;
  }
  const int nu = w->nu, nc = s->sys.n_c, nca = w->ncon, no = 6 * w->nobj;
  const size_t nuz = (size_t)nu;
  // G of the constraints: the system's own when there are no limit
  // columns (not copied: at 100 boxes 5.8 MB a step), else extended in Gx.
  w->G = nc && nca == nc ? s->sys.G : w->Gx;
  if (nc && nca > nc)
    memcpy(w->Gx, s->sys.G, sizeof(double) * nuz * 3 * (size_t)nc);
  if (nc) {
    memcpy(w->kx, s->sys.k, sizeof(double) * 3 * (size_t)nc);
    memcpy(w->vc, s->sys.v, sizeof(double) * 3 * (size_t)nc);
  }
  // A sphere's contact point is not a material point: it stays under the
  // centre. The normal velocity-product term of models/system.h (the
  // material point's centripetal acceleration w x (w x r), r = p - x) would
  // report the rolling sphere's surface as leaving the plane at R w^2 and
  // the stepper would push the centre into it; for a sphere the gap's
  // second derivative has no such term, so it is taken out.
  for (int j = 0; j < nc; ++j) {
    const cp_contact *ct = &w->sc.contacts[j];
    for (int side = 0; side < 2; ++side) {
      cp_ref r = side ? ct->b : ct->a;
      if (r.body < 0) continue;
      const cp_body *b = &w->sc.bodies[r.body];
      if (b->fixed || b->shape.type != CP_SHAPE_SPHERE) continue;
      double rr[3], wr[3], wwr[3];
      cp_v3_sub(rr, ct->p, b->x);
      cp_v3_cross(wr, b->w, rr);
      cp_v3_cross(wwr, b->w, wr);
      w->kx[3 * j] -= (side ? -1.0 : 1.0) * cp_v3_dot(ct->n, wwr);
    }
  }
  for (int j = nc; j < nca; ++j) {
    const con *c = &w->cons[j];
    double *g = w->Gx + nuz * 3 * (size_t)j;
    memset(g, 0, sizeof(double) * nuz * 3);
    if (c->contact == CP_CON_SUPPORT) {
      cp_wi_support_columns(w, c, g, w->kx + 3 * j, w->vc + 3 * j);
      continue;
    }
    g[no + c->row] = c->sign;
    w->kx[3 * j] = w->kx[3 * j + 1] = w->kx[3 * j + 2] = 0;
    w->vc[3 * j] = c->sign * cp_wi_cjoint_of(w, c->row)->velocity;
    w->vc[3 * j + 1] = w->vc[3 * j + 2] = 0;
  }
  for (int r = 0; r < w->nl; ++r) {
    w->driven[no + r] = s->sys.drive[r] == CP_DRIVE_ACCELERATION;
    w->ud[no + r] = s->sys.qdd[r];
  }
  // Where H and G can be nonzero: H's blocks are the free bodies' and the
  // manipulators' (w->ck_blk), G's columns the constraints' dof ranges.
  if (cp_wi_con_ranges(w)) {
    cp_system_free(&s->sys);
    return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
  }
  const cp_contact_sparsity sp = {.nblock = w->nblk, .block = w->ck_blk, .range = w->ck_rng};
  s->cs = w->cs_keep;
  memset(&w->cs_keep, 0, sizeof w->cs_keep);
  int rc = cp_contact_space_rebuild_sparse(nu, nca, s->sys.H, w->G, s->sys.f, w->kx,
                                           w->driven, w->ud, &sp, &s->cs);
  if (rc) {
    cp_system_free(&s->sys);
    return rc == -1 ? cp_wi_fail(w, CP_WORLD_SOLVER_FAILED,
                           "t = %.9g: the mass matrix is not positive definite",
                           w->t)
                    : cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
  }
  s->built = 1;
  return CP_WORLD_OK;
}

cp_world_status cp_wi_build(cp_world *w, stepsys *s) {
  const double t0 = cp_wi_tic(w);
  const cp_world_status st = build(w, s);
  cp_wi_toc(w, &w->prof.assembly, t0);
  return st;
}

// udot = H^-1 (f + G c) (driven dofs: their given acceleration).
cp_world_status cp_wi_accel(cp_world *w, stepsys *s, const double *c,
                             double *udot) {
  if (cp_contact_space_accel(&s->cs, c, udot, NULL))
    return cp_wi_fail(w, CP_WORLD_NOMEM, "out of memory");
  return CP_WORLD_OK;
}

// Generalised velocity u of the scene's state (the layout of models/system.h).
void cp_wi_get_u(const cp_world *w, double *u) {
  int k = 0;
  for (int i = 0; i < w->sc.n_bodies; ++i) {
    const cp_body *b = &w->sc.bodies[i];
    if (b->fixed) continue;
    memcpy(u + 6 * k, b->v, 3 * sizeof *u);
    memcpy(u + 6 * k + 3, b->w, 3 * sizeof *u);
    ++k;
  }
  for (int r = 0; r < w->nl; ++r) u[6 * w->nobj + r] = cp_wi_cjoint_of(w, r)->velocity;
}

void cp_wi_set_u(cp_world *w, const double *u) {
  int k = 0;
  for (int i = 0; i < w->sc.n_bodies; ++i) {
    cp_body *b = &w->sc.bodies[i];
    if (b->fixed) continue;
    memcpy(b->v, u + 6 * k, 3 * sizeof *u);
    memcpy(b->w, u + 6 * k + 3, 3 * sizeof *u);
    ++k;
  }
  for (int r = 0; r < w->nl; ++r) cp_wi_joint_of(w, r)->velocity = u[6 * w->nobj + r];
}

// Positions moved by the generalised displacement h u (quaternions by the
// exponential map, renormalised).
void cp_wi_move(cp_world *w, const double *u, double h) {
  int k = 0;
  for (int i = 0; i < w->sc.n_bodies; ++i) {
    cp_body *b = &w->sc.bodies[i];
    if (b->fixed) continue;
    cp_v3_axpy(b->x, b->x, h, u + 6 * k);
    cp_quat_integrate(b->q, b->q, u + 6 * k + 3, h);
    double n = sqrt(b->q[0] * b->q[0] + b->q[1] * b->q[1] +
                    b->q[2] * b->q[2] + b->q[3] * b->q[3]);
    for (int t = 0; t < 4; ++t) b->q[t] /= n;
    ++k;
  }
  for (int r = 0; r < w->nl; ++r)
    cp_wi_joint_of(w, r)->position += h * u[6 * w->nobj + r];
  for (int m = 0; m < w->sc.n_manips; ++m) cp_chain_apply_mimic(&w->sc.manips[m]);
}

