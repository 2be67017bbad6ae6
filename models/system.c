#include "models/system.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/bigbuf.h"
#include "models/vec3.h"

void cp_system_free(cp_system *s) {
  if (!s) return;
  cp_bigbuf_free(s->own); // one buffer holds every array (alloc_all); NULL
                          // when they are a workspace's (cp_system_build_ws)
  memset(s, 0, sizeof *s);
}

void cp_system_ws_free(cp_system_ws *ws) {
  if (!ws) return;
  cp_bigbuf_free(ws->block);
  free(ws->scratch);
  free(ws->dirty);
  free(ws->keep_rng);
  memset(ws, 0, sizeof *ws);
}

// *p holds at least need bytes (grown, never shrunk; *size its size) and
// its first need bytes are zero, as calloc would give. 0, or -1. (The
// scratch: small, so simply all zeroed.)
static int zreserve(void **p, size_t *size, size_t need) {
  if (need > *size) {
    free(*p);
    *p = malloc(need);
    *size = *p ? need : 0;
    if (!*p) return -1;
  }
  memset(*p, 0, need);
  return 0;
}

int cp_system_joint_row(const cp_system *s, int m, int k) {
  return 6 * s->n_obj + s->chain_row[s->chain_row_offset[m] + k];
}

// Per-ref data at a contact point: velocity, velocity-product acceleration,
// angular velocity and angular velocity-product acceleration.
typedef struct point_kin {
  double vel[3], acc[3], w[3], dw[3];
} point_kin;

typedef struct build_ctx {
  const cp_scene *scene;
  cp_system *sys;
  cp_link_state *states;  // link states of every chain, chain m's at
  const int *state_off;   // states + state_off[m]
  double *J, *Jw;         // [3 * max chain length] scratch
  int zeroed;             // H, G and Gtor were zeroed as one block (below)
  cp_system_ws *track;    // large: the ranges written into H, G and Gtor
                          // are recorded in track->dirty; else NULL
  int *keep;              // small, kept (keep_hg): each contact's rows, the
                          // last build's until the contact is written
  int kept;               // 1: the region holds the last build's values
                          // (keep's rows), not zeros
} build_ctx;

// The build wrote (or added into) len doubles of H, G or Gtor from off
// (from H's start: the block's).
static inline void wrote(build_ctx *bc, size_t off, size_t len) {
  cp_system_ws *ws = bc->track;
  if (!ws || !len) return;
  ws->dirty[2 * ws->n_dirty] = off;
  ws->dirty[2 * ws->n_dirty + 1] = len;
  ++ws->n_dirty;
}

// One ref of a contact as the build sees it: the rows of u its columns can
// touch, [lo, hi) -- a free body's 6, a chain's independent coordinates,
// none for a fixed body -- and for a free body its lever arm d = p - x.
// Every other row of the contact's columns is an exact +0.
typedef struct side {
  size_t lo, hi;
  const cp_body *body; // the free body, else NULL
  double d[3];
} side;

static inline void side_of(const build_ctx *bc, cp_ref r, const double *p,
                           side *sd) {
  const cp_system *s = bc->sys;
  sd->lo = sd->hi = 0;
  sd->body = NULL;
  if (r.body >= 0) {
    int oi = s->body_obj[r.body];
    if (oi < 0) return; // fixed
    sd->body = &bc->scene->bodies[r.body];
    sd->lo = 6 * (size_t)oi;
    sd->hi = sd->lo + 6;
    cp_v3_sub(sd->d, p, sd->body->x);
    return;
  }
  int m = r.manip;
  sd->lo = (size_t)(6 * s->n_obj + s->joint_offset[m]);
  sd->hi = (size_t)(6 * s->n_obj) +
           (size_t)(m + 1 < bc->scene->n_manips ? s->joint_offset[m + 1]
                                                : s->n_l);
}

// Adds sign * scale * (N^T column) of the full-space Jacobians J, Jw of link
// k into the rows of contact j: each joint on k's path contributes to the
// row of the coordinate that moves it.
static void add_joint_columns(build_ctx *bc, int j, int m, int k, double sign) {
  cp_system *s = bc->sys;
  const cp_chain *ch = &bc->scene->manips[m];
  const double *N = s->frame + 9 * j;
  size_t nu = (size_t)s->n_u;
  const int *row = s->chain_row + s->chain_row_offset[m];
  const double *scale = s->chain_row_scale + s->chain_row_offset[m];
  for (int i = k; i >= 0; i = cp_chain_parent(ch, i)) {
    size_t r = (size_t)(6 * s->n_obj + row[i]);
    double sg = sign * scale[i];
    for (int c = 0; c < 3; ++c)
      s->G[(size_t)(3 * j + c) * nu + r] += sg * cp_v3_dot(bc->J + 3 * i, N + 3 * c);
    s->Gtor[(size_t)j * nu + r] += sg * cp_v3_dot(bc->Jw + 3 * i, N);
  }
}

static inline void ref_kin(const build_ctx *bc, cp_ref r, const side *sd,
                           const double *p, point_kin *pk) {
  if (r.body >= 0) {
    static const point_kin still; // a fixed body: all +0
    if (!sd->body) {
      *pk = still;
      return;
    }
    const cp_body *b = sd->body;
    double t[3];
    cp_v3_cross(t, b->w, sd->d);
    cp_v3_add(pk->vel, b->v, t);
    cp_v3_cross(pk->acc, b->w, t); // w x (w x r)
    cp_v3_copy(pk->w, b->w);
    cp_v3_set(pk->dw, 0, 0, 0);
    return;
  }
  const cp_link_state *st = bc->states + bc->state_off[r.manip];
  cp_chain_point_velocity(st, r.link, p, pk->vel);
  cp_chain_point_bias(st, r.link, p, pk->acc);
  cp_v3_copy(pk->w, st[r.link].w);
  cp_v3_copy(pk->dw, st[r.link].dw);
}

// acc + sum of g[r] u[r] over the rows [lo, hi), added in row order.
static inline double dot_rows(const double *g, const double *u, size_t lo,
                              size_t hi, double acc) {
  for (size_t r = lo; r < hi; ++r) acc += g[r] * u[r];
  return acc;
}

// Writes sign * (the columns of ref r, side sd) into the rows [sd->lo,
// sd->hi) of contact j's columns of G and Gtor. acc: the rows hold zeros
// and the other ref adds into them too (shared rows); else they are
// written as the sum onto +0 that adding into zeroed rows gives, and
// their terms of G^T u are added to v[0..2] in row order.
static void put_columns(build_ctx *bc, int j, cp_ref r, const side *sd,
                        double sign, int acc, double *v) {
  cp_system *s = bc->sys;
  const double *N = s->frame + 9 * j, *p = s->point + 3 * j;
  size_t nu = (size_t)s->n_u;
  double *G = s->G + (size_t)(3 * j) * nu, *T = s->Gtor + (size_t)j * nu;
  if (sd->body) {
    const double *u = s->u + sd->lo;
    for (int c = 0; c < 3; ++c) { // [N_c; d x N_c]
      const double *Nc = N + 3 * c;
      double rx[3], *col = G + (size_t)c * nu + sd->lo;
      cp_v3_cross(rx, sd->d, Nc);
      double x0 = sign * Nc[0], x1 = sign * Nc[1], x2 = sign * Nc[2],
             x3 = sign * rx[0], x4 = sign * rx[1], x5 = sign * rx[2];
      if (acc) {
        col[0] += x0, col[1] += x1, col[2] += x2;
        col[3] += x3, col[4] += x4, col[5] += x5;
        continue;
      }
      // The values kept in registers for v: a load of what was just stored
      // can stall.
      x0 = 0.0 + x0, x1 = 0.0 + x1, x2 = 0.0 + x2;
      x3 = 0.0 + x3, x4 = 0.0 + x4, x5 = 0.0 + x5;
      col[0] = x0, col[1] = x1, col[2] = x2;
      col[3] = x3, col[4] = x4, col[5] = x5;
      v[c] = v[c] + x0 * u[0] + x1 * u[1] + x2 * u[2] + x3 * u[3] +
             x4 * u[4] + x5 * u[5];
    }
    double *tc = T + sd->lo; // [0; n]
    for (int i = 0; i < 3; ++i) {
      if (!acc) tc[i] = 0;
      tc[3 + i] = (acc ? tc[3 + i] : 0.0) + sign * N[i];
    }
    return;
  }
  if (sd->hi == sd->lo) return; // fixed
  // A link: added along its path into the chain's rows, zeroed with the
  // block (a chain always has it zeroed).
  const cp_chain *ch = &bc->scene->manips[r.manip];
  const cp_link_state *st = bc->states + bc->state_off[r.manip];
  cp_chain_point_jacobian(ch, st, r.link, p, bc->J);
  cp_chain_angular_jacobian(ch, st, r.link, bc->Jw);
  add_joint_columns(bc, j, r.manip, r.link, sign);
  if (!acc)
    for (int c = 0; c < 3; ++c)
      v[c] = dot_rows(G + (size_t)c * nu, s->u, sd->lo, sd->hi, v[c]);
}

// The rows contact columns with refs' sides sa, sb are written in: [r0,
// r1) and [r2, r3), in order (an empty one, a fixed body's, is [0, 0));
// *x, *y: the lower side and the other. Returns 1 when the sides share rows
// (then [r0, r1) spans both and [r2, r3) is empty).
static inline int row_ranges(const side *sa, const side *sb, size_t r[4],
                             const side **x, const side **y) {
  const int shared = sa->lo < sb->hi && sb->lo < sa->hi;
  *x = sa, *y = sb;
  if (sb->lo < sa->lo) *x = sb, *y = sa;
  r[0] = (*x)->lo, r[1] = (*x)->hi, r[2] = (*y)->lo, r[3] = (*y)->hi;
  if (shared) r[1] = r[1] > r[3] ? r[1] : r[3];
  if (shared || (*y)->lo == (*y)->hi) r[2] = r[3] = r[1];
  return shared;
}

// Zeroes the rows [r[0], r[1]) and [r[2], r[3]) of a contact's three G
// columns (from G, nu apart) and its Gtor column T.
static void clear_rows(double *G, double *T, size_t nu, const int r[4]) {
  for (int h = 0; h < 4; h += 2)
    for (int i = r[h]; i < r[h + 1]; ++i)
      G[i] = G[nu + (size_t)i] = G[2 * nu + (size_t)i] = T[i] = 0.0;
}

// A kept build's (keep_hg) contact j, about to be written on the rows r
// (row_ranges): its column cleared on the last build's rows when they
// differ (or the refs share rows: added into zeros), and r kept.
static __attribute__((noinline)) void keep_rows(build_ctx *bc, int j, const size_t r[4],
                                                int shared) {
  const size_t nu = (size_t)bc->sys->n_u;
  double *G = bc->sys->G + (size_t)(3 * j) * nu, *T = bc->sys->Gtor + (size_t)j * nu;
  int *o = bc->keep + 4 * j;
  if (bc->kept && (shared || o[0] != (int)r[0] || o[1] != (int)r[1] ||
                   o[2] != (int)r[2] || o[3] != (int)r[3]))
    clear_rows(G, T, nu, o); // the last build's rows
  for (int t = 0; t < 4; ++t) o[t] = (int)r[t];
  if (shared) clear_rows(G, T, nu, o); // added into
}

// Contact j's columns of G and Gtor -- the refs' rows written, every other
// row zero -- and v = G^T u over the refs' rows, in row order. When both
// refs share rows (two links of one chain; the same body twice, which
// scenes refuse) the rows hold zeros and a and b are added in turn. Returns
// the number of rows left out of v's sums.
//
// Leaving rows out gives the same bits as summing over every row when u is
// finite: each left-out term is g u = +0 u = +-0, and adding +-0 to the
// sum, which starts at +0 and so is never -0 in round-to-nearest, leaves
// it as it is. (An inf or NaN in u would make such a term NaN: the caller
// sums every row then.)
static size_t contact_columns(build_ctx *bc, int j, const cp_contact *ct,
                              const side *sa, const side *sb) {
  cp_system *s = bc->sys;
  size_t nu = (size_t)s->n_u;
  double *G = s->G + (size_t)(3 * j) * nu, *v = s->v + 3 * j;
  size_t r[4];
  const side *x, *y;
  const int shared = row_ranges(sa, sb, r, &x, &y);
  size_t left_out = nu - (r[1] - r[0]) - (r[3] - r[2]);
  if (bc->keep) keep_rows(bc, j, r, shared); // the region's zeros kept
  if (!bc->zeroed && (shared || left_out)) { // one body: a rare column
    memset(G, 0, sizeof(double) * 3 * nu);
    memset(s->Gtor + (size_t)j * nu, 0, sizeof(double) * nu);
  }
  v[0] = v[1] = v[2] = 0;
  if (shared) {
    put_columns(bc, j, ct->a, sa, +1.0, 1, v);
    put_columns(bc, j, ct->b, sb, -1.0, 1, v);
    for (int c = 0; c < 3; ++c)
      v[c] = dot_rows(G + (size_t)c * nu, s->u, r[0], r[1], 0);
  } else { // the lower rows first: v's terms in row order; fixed: none
    if (x->hi > x->lo)
      put_columns(bc, j, x == sa ? ct->a : ct->b, x, x == sa ? 1.0 : -1.0, 0,
                  v);
    if (y->hi > y->lo)
      put_columns(bc, j, y == sa ? ct->a : ct->b, y, y == sa ? 1.0 : -1.0, 0,
                  v);
  }
  return left_out;
}

// A tracked build's record of the contacts' columns (their rows in G's 3
// columns and Gtor's: contact_columns writes only those).
static __attribute__((noinline)) void record_contacts(build_ctx *bc) {
  const cp_system *s = bc->sys;
  const size_t nu = (size_t)s->n_u;
  for (int j = 0; j < s->n_c; ++j) {
    const cp_contact *ct = &bc->scene->contacts[j];
    side sa, sb;
    side_of(bc, ct->a, ct->p, &sa);
    side_of(bc, ct->b, ct->p, &sb);
    size_t r[4];
    const side *x, *y;
    row_ranges(&sa, &sb, r, &x, &y);
    const size_t g0 = (size_t)(s->G - s->H) + (size_t)(3 * j) * nu,
                 t0 = (size_t)(s->Gtor - s->H) + (size_t)j * nu;
    for (int c = 0; c < 4; ++c) {
      const size_t o = c < 3 ? g0 + (size_t)c * nu : t0;
      wrote(bc, o + r[0], r[1] - r[0]);
      wrote(bc, o + r[2], r[3] - r[2]);
    }
  }
}

// Every array in one block, ws->block (a simulator builds a system per
// step; 26 calls to the allocator were a tenth of a small scene's step,
// and with a workspace there are none): doubles first, then the int-sized
// arrays; each at least one element, so that empty arrays are non-NULL too.
// The build writes every element of every array (H, G and Gtor zeroed
// first in one go, or with a single free body and no chain written in full)
// except g_man and h_man, which it accumulates into and so are zeroed by
// alloc_all, and the placeholder element of an empty array, zeroed by
// layout: the block reads as a calloc'd one would. layout places the
// arrays; alloc_all keeps the places in ws->layout and reuses them while
// the sizes stay the same.
#define CP_SYSTEM_DOUBLES(X)                                                   \
  X(H, nu * nu) X(G, nu * 3 * nc) X(Gtor, nu * nc) X(g_man, nl) X(h_man, nl)  \
  X(d, 2 * nc) X(u, nu) X(chain_row_scale, nfull) X(f, nu) X(tau, nl)         \
  X(qdd, nl) X(k, 3 * nc) X(v, 3 * nc) X(ktor, nc) X(frame, 9 * nc)           \
  X(point, 3 * nc) X(mu, nc)
#define CP_SYSTEM_INTS(X)                                                      \
  X(obj_body, (size_t)s->n_obj) X(body_obj, nb) X(joint_manip, nl)             \
  X(joint_index, nl) X(joint_offset, nm) X(chain_row, nfull)                   \
  X(chain_row_offset, nm) X(sliding, nc)
#define CP_ATLEAST1(n) ((n) > 0 ? (size_t)(n) : 1)
// The block's bytes for s's sizes (n_u, n_c, n_l, n_obj).
static size_t layout_bytes(const cp_system *s, int n_bodies, int n_manips, int n_full) {
  const size_t nu = (size_t)s->n_u, nc = (size_t)s->n_c, nl = (size_t)s->n_l,
               nb = (size_t)n_bodies, nm = (size_t)n_manips,
               nfull = (size_t)n_full;
  size_t nd = 0, ni = 0;
#define COUNT_D(name, n) nd += CP_ATLEAST1(n);
#define COUNT_I(name, n) ni += CP_ATLEAST1(n);
  CP_SYSTEM_DOUBLES(COUNT_D)
  CP_SYSTEM_INTS(COUNT_I)
  return sizeof(double) * nd + sizeof(int) * ni + sizeof(cp_joint_drive) * CP_ATLEAST1(nl);
}

static int layout(cp_system *s, cp_system_ws *ws, int n_bodies,
                  int n_manips, int n_full) {
  const size_t nu = (size_t)s->n_u, nc = (size_t)s->n_c, nl = (size_t)s->n_l,
               nb = (size_t)n_bodies, nm = (size_t)n_manips,
               nfull = (size_t)n_full;
  const size_t bytes = layout_bytes(s, n_bodies, n_manips, n_full);
  if (bytes > ws->block_size) {
    ws->zero_end = 0; // a grown block: nothing known of it
    ws->block = cp_bigbuf_regrow(ws->block, bytes); // (large: in place)
    ws->block_size = cp_bigbuf_size(ws->block);
    if (!ws->block) return -1;
  }
  double *dq = ws->block;
#define TAKE_D(name, n)                                                        \
  s->name = dq;                                                                \
  if ((n) == 0) *dq = 0;                                                       \
  dq += CP_ATLEAST1(n);
  CP_SYSTEM_DOUBLES(TAKE_D)
  int *q = (int *)dq;
#define TAKE_I(name, n)                                                        \
  s->name = q;                                                                 \
  if ((n) == 0) *q = 0;                                                        \
  q += CP_ATLEAST1(n);
  CP_SYSTEM_INTS(TAKE_I)
  s->drive = (cp_joint_drive *)q;
  if (!nl) memset(s->drive, 0, sizeof *s->drive);
  return 0;
}

static int alloc_all(cp_system *s, cp_system_ws *ws, int n_bodies,
                     int n_manips, int n_full) {
  const size_t nl = (size_t)s->n_l;
  const int key[6] = {s->n_obj, n_bodies, s->n_l, s->n_c, n_manips, n_full};
  if (ws->layout.H && !memcmp(key, ws->layout_key, sizeof key)) {
    // The sizes of the last build: its places (and its zeroed placeholders,
    // which nothing writes: their arrays are empty).
    double tol = s->tol;
    *s = ws->layout;
    s->tol = tol;
  } else if (layout(s, ws, n_bodies, n_manips, n_full)) {
    return -1;
  } else {
    ws->layout = *s;
    memcpy(ws->layout_key, key, sizeof key);
  }
  if (nl) {
    memset(s->g_man, 0, sizeof(double) * nl);
    memset(s->h_man, 0, sizeof(double) * nl);
  }
  return 0;
}

// Large systems (need, the doubles of H, G and Gtor, at least
// CP_SYSTEM_TRACK) are not cleared whole each build: the ranges the last
// build wrote are (ws->dirty, below ws->zero_end; the rest of the region
// stays zero), and the build records its own (wrote(), bc->track set).
// Then the region reads as one memset would leave it. Smaller ones, or
// when the record cannot be kept, take the one memset (and ws->zero_end 0).
#define CP_SYSTEM_TRACK 4096
#define CP_SYSTEM_KEPT ((size_t)-1) // ws->n_dirty after a kept build (keep_hg)
static void zero_hg(build_ctx *bc, cp_system_ws *ws, size_t need) {
  cp_system *s = bc->sys;
  const size_t cap = 6 * (size_t)s->n_obj + (size_t)s->n_l + 8 * (size_t)s->n_c;
  double *z = s->H;
  if (need >= CP_SYSTEM_TRACK && cap > ws->dirty_cap) {
    free(ws->dirty); // the old record goes: clear the region whole
    ws->dirty = malloc(2 * sizeof(size_t) * cap);
    ws->dirty_cap = ws->dirty ? cap : 0;
    ws->zero_end = ws->n_dirty = 0;
  }
  if (need < CP_SYSTEM_TRACK || !ws->dirty || !ws->zero_end || ws->n_dirty == CP_SYSTEM_KEPT) {
    memset(z, 0, sizeof(double) * need);
  } else {
    for (size_t e = 0; e < ws->n_dirty; ++e) {
      double *p = z + ws->dirty[2 * e];
      for (size_t t = 0, len = ws->dirty[2 * e + 1]; t < len; ++t) p[t] = 0;
    }
    if (need > ws->zero_end) // what lay past the region (other arrays)
      memset(z + ws->zero_end, 0, sizeof(double) * (need - ws->zero_end));
  }
  ws->zero_end = ws->n_dirty = 0; // set again when the build ends
  if (need >= CP_SYSTEM_TRACK && ws->dirty) bc->track = ws;
}

// Systems of free bodies only, more than one, keep their zeros between
// builds with no clearing at all when their contacts' rows stay as they
// were (a resting stack: the 3-box stack's clear was 9.5 KB a step, the
// 10-box stack's tracked clear and record 10 K instructions): every column
// of H is a body's block, written whole, so H's other entries stay zero,
// and a contact column is written on its refs' rows only (contact_columns),
// so only a column whose rows differ from the last build's is cleared, on
// the last build's rows, before it is written. The region then reads as
// the one memset would leave it. It needs the same n_u and n_c as the last
// build, made this way (n_dirty CP_SYSTEM_KEPT; zero_end set: a caller
// that writes into the block sets it to 0, and a new block does). Other
// sizes: a small region (below CP_SYSTEM_TRACK) takes the one memset, a
// large one is cleared on the last build's rows (clear_kept: its bodies'
// blocks and its contacts' rows, in its layout; a settling bin's contacts
// change nearly every step, and a memset of the region would be megabytes)
// and past them. Returns 1 when the last build's values are kept
// (bc->kept), 0 when the region was cleared here, -1 when this build is
// not one of these (the caller clears: zero_hg). cp_system_build's one-off
// workspace (keep_nc -1) keeps nothing.
static void clear_kept(cp_system_ws *ws) {
  const size_t nu = (size_t)ws->keep_nu, nc = (size_t)ws->keep_nc;
  double *H = ws->block, *G = H + nu * nu, *T = G + 3 * nc * nu;
  for (size_t r0 = 0; r0 < nu; r0 += 6) // the bodies' blocks (nu = 6 n_obj)
    for (size_t c = 0; c < 6; ++c) memset(H + (r0 + c) * nu + r0, 0, 6 * sizeof *H);
  for (size_t j = 0; j < nc; ++j)
    clear_rows(G + 3 * j * nu, T + j * nu, nu, ws->keep_rng + 4 * j);
}

static int keep_hg(build_ctx *bc, cp_system_ws *ws, size_t need) {
  const cp_system *s = bc->sys;
  if (bc->scene->n_manips || s->n_u <= 6 || ws->keep_nc < 0) return -1;
  const int known = ws->zero_end && ws->n_dirty == CP_SYSTEM_KEPT;
  if (s->n_c > ws->keep_cap) { // grown, the last build's rows kept
    const int cap = s->n_c > 2 * ws->keep_cap ? s->n_c : 2 * ws->keep_cap;
    int *p = realloc(ws->keep_rng, 4 * sizeof(int) * (size_t)cap);
    if (!p) return -1; // (zero_hg: a memset when known)
    ws->keep_rng = p;
    ws->keep_cap = cap;
  }
  bc->keep = ws->keep_rng;
  bc->kept = known && ws->zero_end == need && ws->keep_nu == s->n_u &&
             ws->keep_nc == s->n_c;
  if (!bc->kept) {
    if (need < CP_SYSTEM_TRACK || !known) {
      memset(s->H, 0, sizeof(double) * need);
    } else { // the last build's rows, and what lay past its region
      clear_kept(ws);
      if (need > ws->zero_end)
        memset(s->H + ws->zero_end, 0, sizeof(double) * (need - ws->zero_end));
    }
  }
  ws->zero_end = 0; // set again when the build ends
  ws->n_dirty = 0;
  return bc->kept;
}

// The chains' scratch of a build (link states, J, Jw, Mm, gf, hf, the
// chains' state offsets; 0 without chains); *maxn, *n_full: the longest
// chain's joints (at least 1) and all chains' joints.
static size_t chain_scratch(const cp_scene *sc, int *maxn, int *n_full) {
  *maxn = 1, *n_full = 0;
  for (int m = 0; m < sc->n_manips; ++m) {
    if (sc->manips[m].n > *maxn) *maxn = sc->manips[m].n;
    *n_full += sc->manips[m].n;
  }
  if (!sc->n_manips) return 0;
  const size_t mx = (size_t)*maxn, nsd = 6 * mx + mx * mx + 2 * mx;
  return (size_t)*n_full * sizeof(cp_link_state) + nsd * sizeof(double) +
         (size_t)(sc->n_manips + 1) * sizeof(int);
}

int cp_system_ws_reserve(const cp_scene *sc, int n_contacts, cp_system_ws *ws) {
  if (n_contacts < 0) return -1;
  int maxn, n_full;
  const size_t sb = chain_scratch(sc, &maxn, &n_full);
  if (sb > ws->scratch_size) {
    free(ws->scratch);
    ws->scratch = malloc(sb);
    ws->scratch_size = ws->scratch ? sb : 0;
    if (!ws->scratch) return -2;
  }
  cp_system s = {.n_l = cp_scene_joint_count(sc), .n_c = n_contacts};
  for (int i = 0; i < sc->n_bodies; ++i) s.n_obj += !sc->bodies[i].fixed;
  s.n_u = 6 * s.n_obj + s.n_l;
  const size_t bytes = layout_bytes(&s, sc->n_bodies, sc->n_manips, n_full);
  if (bytes > ws->block_size) { // as layout's growth: nothing known of it
    ws->zero_end = 0;
    ws->block = cp_bigbuf_regrow(ws->block, bytes);
    ws->block_size = cp_bigbuf_size(ws->block);
    if (!ws->block) return -2;
  }
  // zero_hg's record of a large system's writes, for that many contacts
  const size_t nu = (size_t)s.n_u;
  const size_t cap = 6 * (size_t)s.n_obj + (size_t)s.n_l + 8 * (size_t)n_contacts;
  if (nu * (nu + 4 * (size_t)n_contacts) >= CP_SYSTEM_TRACK && cap > ws->dirty_cap) {
    free(ws->dirty); // (as zero_hg: the old record goes)
    ws->dirty = malloc(2 * sizeof(size_t) * cap);
    ws->dirty_cap = ws->dirty ? cap : 0;
    ws->zero_end = ws->n_dirty = 0;
    if (!ws->dirty) return -2;
  }
  cp_bigbuf_touch(ws->scratch, sb);
  cp_bigbuf_touch(ws->block, bytes);
  if (ws->dirty) cp_bigbuf_touch(ws->dirty, 2 * sizeof(size_t) * ws->dirty_cap);
  return 0;
}

int cp_system_build(const cp_scene *sc, cp_system *s, cp_error *err) {
  cp_system_ws ws = {.keep_nc = -1}; // (one build: nothing to keep)
  int rc = cp_system_build_ws(sc, &ws, s, err);
  if (!rc) { // the system keeps the block
    s->own = ws.block;
    ws.block = NULL;
  }
  cp_system_ws_free(&ws);
  return rc;
}

int cp_system_build_ws(const cp_scene *sc, cp_system_ws *ws, cp_system *s,
                       cp_error *err) {
  // Every other field is set below (alloc_all takes every array).
  s->n_obj = 0;
  s->own = NULL;
  for (int i = 0; i < sc->n_bodies; ++i) s->n_obj += !sc->bodies[i].fixed;
  s->n_l = cp_scene_joint_count(sc);
  s->n_u = 6 * s->n_obj + s->n_l;
  s->n_c = sc->n_contacts;
  s->tol = sc->velocity_tolerance;
  size_t nu = (size_t)s->n_u;
  int maxn = 1, n_full = 0;
  for (int m = 0; m < sc->n_manips; ++m) {
    if (sc->manips[m].n > maxn) maxn = sc->manips[m].n;
    n_full += sc->manips[m].n;
  }
  build_ctx bc = {.scene = sc, .sys = s};
  // Scratch (zeroed), for chains only: link states of every chain
  // [n_full], J, Jw [3 maxn each], Mm [maxn^2], gf, hf [maxn each], the
  // chains' state offsets.
  double *Mm = NULL, *gf = NULL, *hf = NULL;
  int *state_off = NULL, ok = 1;
  if (sc->n_manips) {
    const size_t mx = (size_t)maxn, nst = (size_t)n_full;
    const size_t nsd = 6 * mx + mx * mx + 2 * mx;
    ok = !zreserve(&ws->scratch, &ws->scratch_size,
                   nst * sizeof(cp_link_state) + nsd * sizeof(double) +
                       (size_t)(sc->n_manips + 1) * sizeof(int));
    if (ok) {
      bc.states = ws->scratch;
      double *tmp = (double *)(bc.states + nst);
      bc.J = tmp;
      bc.Jw = tmp + 3 * mx;
      Mm = tmp + 6 * mx;
      gf = Mm + mx * mx;
      hf = gf + mx;
      state_off = (int *)(tmp + nsd);
      for (int m = 0, o = 0; m < sc->n_manips; o += sc->manips[m].n, ++m)
        state_off[m] = o;
      bc.state_off = state_off;
    }
  }
  if (ok) ok = !alloc_all(s, ws, sc->n_bodies, sc->n_manips, n_full);
  if (!ok) {
    cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory building the system");
    goto done;
  }

  // H, G and Gtor (one after the other in the block) are zeroed in one go
  // unless there is no chain and at most one free body: then every H
  // column is the body's block, written below in full, and a contact's
  // columns are the body's rows unless both refs are fixed or the same
  // (contact_columns zeroes those). Zeroing the rows no ref touches column
  // by column instead took more time from 3 boxes on (many short memsets
  // against one long one), though valgrind counts fewer instructions for
  // it (it counts each byte of a long memset's rep stosb). From
  // CP_SYSTEM_TRACK doubles on, zero_hg clears only what the last build
  // wrote (a body's or contact's few rows per column): the same zeros.
  bc.zeroed = nu > 6 || sc->n_manips;
  if (bc.zeroed && keep_hg(&bc, ws, nu * (nu + 4 * (size_t)s->n_c)) < 0)
    zero_hg(&bc, ws, nu * (nu + 4 * (size_t)s->n_c));
  else
    ws->zero_end = 0; // written in full below: no zeros to keep
  // Free bodies: rows, H block, f.
  for (int i = 0, oi = 0; i < sc->n_bodies; ++i) {
    const cp_body *b = &sc->bodies[i];
    if (b->fixed) { s->body_obj[i] = -1; continue; }
    s->body_obj[i] = oi;
    s->obj_body[oi] = i;
    size_t r0 = 6 * (size_t)oi;
    double R[9], Iw[9], Iww[3], gyro[3];
    cp_quat_to_mat(R, b->q);
    cp_m3_rotate_sym(Iw, R, b->inertia);
    for (int c = 0; c < 6; ++c) {
      double *col = s->H + (r0 + (size_t)c) * nu + r0;
      if (c < 3) { // m I3 over zeros
        memset(col, 0, 6 * sizeof *col);
        col[c] = b->mass;
      } else { // zeros over the world inertia
        cp_v3_set(col, 0, 0, 0);
        for (int k = 0; k < 3; ++k) col[3 + k] = Iw[3 * k + (c - 3)];
      }
    }
    if (bc.track) // the body's block of H
      for (size_t c = 0; c < 6; ++c) wrote(&bc, (r0 + c) * nu + r0, 6);
    for (int k = 0; k < 3; ++k) {
      s->u[r0 + k] = b->v[k];
      s->u[r0 + 3 + k] = b->w[k];
      s->f[r0 + k] = b->mass * sc->gravity[k];
    }
    cp_m3_mulv(Iww, Iw, b->w);
    cp_v3_cross(gyro, b->w, Iww);
    for (int k = 0; k < 3; ++k) s->f[r0 + 3 + k] = -gyro[k];
    ++oi;
  }

  // Manipulators: kinematics, CRBA block, bias efforts, f -- in the full
  // joint space of the chain, then reduced to its independent coordinates
  // (P^T M P, P^T g, P^T h; P from cp_chain_dof_map). Without mimic joints
  // P = I and the blocks are copied unchanged (added into H's zeros).
  for (int m = 0, off = 0, foff = 0; m < sc->n_manips; ++m) {
    const cp_chain *c = &sc->manips[m];
    int *row = s->chain_row + foff;
    double *scale = s->chain_row_scale + foff;
    s->joint_offset[m] = off;
    s->chain_row_offset[m] = foff;
    cp_chain_dof_map(c, row, scale);
    for (int i = 0; i < c->n; ++i) row[i] += off;
    cp_link_state *st = bc.states + state_off[m];
    cp_chain_kinematics(c, st);
    cp_chain_mass_matrix(c, st, Mm);
    cp_chain_bias_efforts(c, st, sc->gravity, gf, hf);
    // Both say "out of memory" by NaN (models/chain.h); inputs are finite.
    if (isnan(Mm[0]) || isnan(gf[0]) || isnan(hf[0])) {
      cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory building the system");
      ok = 0;
      goto done;
    }
    size_t rb = 6 * (size_t)s->n_obj;
    for (int a = 0; a < c->n; ++a) {
      size_t ra = rb + (size_t)row[a];
      for (int b = 0; b < c->n; ++b)
        s->H[ra + (rb + (size_t)row[b]) * nu] +=
            scale[a] * scale[b] * Mm[a + (size_t)b * (size_t)c->n];
      s->g_man[row[a]] += scale[a] * gf[a];
      s->h_man[row[a]] += scale[a] * hf[a];
    }
    int nd = 0;
    for (int k = 0; k < c->n; ++k) {
      const cp_joint *jt = &c->joints[k];
      if (jt->is_mimic) continue;
      int r = off + nd++;
      s->joint_manip[r] = m;
      s->joint_index[r] = k;
      s->drive[r] = jt->drive;
      s->tau[r] = jt->drive == CP_DRIVE_EFFORT ? jt->effort : 0;
      s->qdd[r] = jt->drive == CP_DRIVE_ACCELERATION ? jt->acceleration : 0;
      s->u[rb + (size_t)r] = jt->velocity;
      s->f[rb + (size_t)r] = s->tau[r] - s->g_man[r] - s->h_man[r];
    }
    for (int b = 0; b < nd; ++b) // the chain's block of H
      wrote(&bc, (rb + (size_t)(off + b)) * nu + rb + (size_t)off, (size_t)nd);
    off += nd;
    foff += c->n;
  }

  // Contacts: frames, G, Gtor, v = G^T u (contact_columns), k, ktor.
  int u_finite = -1; // not known yet: needed only when rows are left out
  for (int j = 0; j < s->n_c; ++j) {
    const cp_contact *ct = &sc->contacts[j];
    double *N = s->frame + 9 * j;
    cp_v3_copy(N, ct->n);
    cp_v3_copy(N + 3, ct->t);
    cp_v3_copy(N + 6, ct->o);
    cp_v3_copy(s->point + 3 * j, ct->p);
    s->mu[j] = ct->mu;
    side sa, sb;
    side_of(&bc, ct->a, ct->p, &sa);
    side_of(&bc, ct->b, ct->p, &sb);
    if (contact_columns(&bc, j, ct, &sa, &sb)) { // rows left out of v
      if (u_finite < 0) {
        u_finite = 1;
        for (size_t r = 0; r < nu; ++r) u_finite &= isfinite(s->u[r]) != 0;
      }
      for (int c = 0; c < 3 && !u_finite; ++c)
        s->v[3 * j + c] =
            dot_rows(s->G + (size_t)(3 * j + c) * nu, s->u, 0, nu, 0);
    }
    point_kin ka, kb;
    ref_kin(&bc, ct->a, &sa, ct->p, &ka);
    ref_kin(&bc, ct->b, &sb, ct->p, &kb);
    double dv[3], da[3], dw[3], ddw[3];
    cp_v3_sub(dv, ka.vel, kb.vel);
    cp_v3_sub(da, ka.acc, kb.acc);
    cp_v3_sub(dw, ka.w, kb.w);
    cp_v3_sub(ddw, ka.dw, kb.dw);
    for (int c = 0; c < 3; ++c) {
      double Nd[3]; // rate of the frame column: w_b x N_c
      cp_v3_cross(Nd, kb.w, N + 3 * c);
      s->k[3 * j + c] = cp_v3_dot(N + 3 * c, da) + cp_v3_dot(Nd, dv);
    }
    double nd[3];
    cp_v3_cross(nd, kb.w, N);
    s->ktor[j] = cp_v3_dot(N, ddw) + cp_v3_dot(nd, dw);
  }

  if (bc.track) record_contacts(&bc);

  // Sliding / rolling, directions.
  for (int j = 0; j < s->n_c; ++j) {
    double vt = s->v[3 * j + 1], vo = s->v[3 * j + 2];
    s->d[2 * j] = s->d[2 * j + 1] = 0;
    // |vt| + |vo| bounds the speed: below tol / 2 it is rolling without
    // hypot (slow on the 1e-17 speeds of contacts at rest).
    if (fabs(vt) + fabs(vo) <= 0.5 * s->tol) {
      s->sliding[j] = 0;
      continue;
    }
    double sp = hypot(vt, vo);
    s->sliding[j] = sp > s->tol;
    if (s->sliding[j]) {
      s->d[2 * j] = vt / sp;
      s->d[2 * j + 1] = vo / sp;
    }
  }

  if (bc.track) ws->zero_end = nu * (nu + 4 * (size_t)s->n_c);
  if (bc.keep) {
    ws->zero_end = nu * (nu + 4 * (size_t)s->n_c);
    ws->n_dirty = CP_SYSTEM_KEPT;
    ws->keep_nu = s->n_u;
    ws->keep_nc = s->n_c;
  }

done:
  if (!ok) {
    memset(s, 0, sizeof *s); // the block stays ws's
    ws->zero_end = 0;        // (what this build wrote is not known)
  }
  return ok ? 0 : -1;
}
