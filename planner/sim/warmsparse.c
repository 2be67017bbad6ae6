// The warm basis of a large LCP accepted or repaired on sparse columns
// (planner/sim/world_impl.h, docs/simulate.md "Scaling").
//
// lcp.c's warm_accept forms each basic column of M in full (n entries) and
// checks every row against every basic column: n k work and memory
// traffic, a stack of 100 boxes' n = 2 400 and k = 400. But a column of M
// has entries only in the rows of constraints coupled to its own: those
// acting on a moving part (a free body, a manipulator) it acts on too -- A
// = G^T H^-1 G is zero between constraints on different parts, H being
// block diagonal over them (the coupling islands.c splits by). A box in a
// stack is coupled to the twelve contacts of its three boxes whatever the
// height of the stack. Here the columns are kept as lists of their
// neighbours' rows, and every pass of warm_accept runs over those lists:
// forming the basic columns, the k x k basic block (written straight into
// LAPACK's band storage when it is banded), the refinement's residual, w =
// M z + q with the row scales, and the rounding allowance's row sums.
//
// The arithmetic is warm_accept's, term by term and in its order; only
// terms that are exact zeros (an entry outside the neighbour lists) are
// skipped, and adding such a term does not change a finite sum: the answer
// is the same, bit for bit (the tests compare the two on stacks). Below
// CP_WORLD_SPARSE_N unknowns, or when the columns are not sparse enough to
// pay (a hand whose contacts all act on one manipulator), warm_accept's
// dense passes run instead.
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "models/vec2.h"
#include "planner/sim/world_impl.h"

// Smallest LCP (unknowns) solved on sparse columns, and how much longer
// than the longest column n must be: 3 takes a resting 10-box stack (n =
// 240, columns of 62 rows), 1.9-2.0 % fewer instructions a step than the
// dense passes (4 turned it down).
#define CP_WORLD_SPARSE_N 160
#define CP_WORLD_SPARSE_RATIO 3

struct cp_wi_sparse {
  // Neighbours of selected constraint k: nbr[nstart[k] .. nstart[k + 1]),
  // k itself first. Per node: the constraints acting on it (ncons, from
  // nodestart). mark: the last constraint whose list saw a constraint.
  int *nstart, *nbr, *nodestart, *ncons, *mark;
  // Column pool: slot s holds len[s] entries rows/vals[s cmax ..]; cols[b]
  // is the slot of basic column b; freeslot the unused slots. pos: basic
  // position of row i, or -1. l1: sum of |M_iB| (formed when needed).
  int *slot, *freeslot, *len, *rows, *pos;
  double *vals, *l1;
  // The basic block M_BB on the basic columns' lists (gather): column b's
  // entries bstart[b] .. bstart[b + 1], basic position brow and value bval,
  // in the order of its slot's list.
  int *bstart, *brow;
  double *bval;
  int *ext;  // the small LU's extents (cp_wi_lu_factor_ext): 3 n
  int on_ext; // whether the last factor is cp_wi_lu_factor_ext's

  int cmax;
  long taken; // LCPs solved here (cp_wi_sparse_taken)
  // Two LCPs by all that prepare's lists and decision depend on (skey):
  // the last one whose columns were too long (rej: prepare returned 1)
  // and the one whose lists are above (lst: returned 0).
  struct skey {
    int *v;            // per constraint its two parts and whether it rolls (3 ns)
    int n, ns, nodes;  // its size, constraints and parts; ns -1: none
  } rej, lst;
  long memo_hits; // LCPs that kept the lists (cp_wi_sparse_memo_hits)
  size_t cap[18];
};

enum { C_NSTART, C_NBR, C_NODESTART, C_NCONS, C_MARK, C_SLOT, C_FREE, C_LEN, C_ROWS, C_POS,
       C_VALS, C_L1, C_REJ, C_LST, C_BSTART, C_BROW, C_BVAL, C_EXT,
       C_COUNT };

void cp_wi_sparse_free(cp_world *w) {
  struct cp_wi_sparse *s = w->spw;
  if (!s) return;
  void *p[C_COUNT] = {s->nstart, s->nbr,   s->nodestart, s->ncons, s->mark,   s->slot,
                      s->freeslot, s->len, s->rows,    s->pos,   s->vals,   s->l1,
                      s->rej.v,  s->lst.v, s->bstart,  s->brow,  s->bval,  s->ext};
  for (int i = 0; i < C_COUNT; ++i) free(p[i]);
  free(s);
  w->spw = NULL;
}

void cp_wi_sparse_enable(cp_world *w, int on) { w->sparse_off = !on; }

long cp_wi_sparse_taken(const cp_world *w) { return w->spw ? w->spw->taken : 0; }

void cp_wi_sparse_memo_enable(cp_world *w, int on) { w->sparse_memo_off = !on; }

long cp_wi_sparse_memo_hits(const cp_world *w) { return w->spw ? w->spw->memo_hits : 0; }

// Array i of s holding at least n elements of size sz; 0, or -1.
static int need(struct cp_wi_sparse *s, int i, size_t n, size_t sz) {
  void **arr[C_COUNT] = {(void **)&s->nstart, (void **)&s->nbr,    (void **)&s->nodestart,
                         (void **)&s->ncons,  (void **)&s->mark,   (void **)&s->slot,
                         (void **)&s->freeslot, (void **)&s->len,  (void **)&s->rows,
                         (void **)&s->pos,    (void **)&s->vals,   (void **)&s->l1,
                         (void **)&s->rej.v,  (void **)&s->lst.v,  (void **)&s->bstart,
                         (void **)&s->brow,   (void **)&s->bval,   (void **)&s->ext};
  if (n <= s->cap[i]) return 0;
  const size_t c = 2 * n;
  void *p = realloc(*arr[i], sz * c);
  if (!p) return -1;
  *arr[i] = p;
  s->cap[i] = c;
  return 0;
}

// Whether the LCP (n unknowns, ns constraints, over nodes parts) is the
// one key names (same_structure), by all that prepare reads: then
// prepare's answer is that one's, and for lst the neighbour lists and the
// pool's sizes are this LCP's too. A resting stack keeps its structure
// step after step, and making the lists was a thirty-fifth of a 10-box
// step; finding out that the columns are too long was every step's too
// (a stack of 7 boxes, n = 168, has columns of 62 rows, over a third).
// remember records the LCP under key (key.ns -1 when out of memory).
static int same_structure(const cp_world *w, const struct skey *key, int ns, int n,
                          int nodes) {
  if (key->ns != ns || key->n != n || key->nodes != nodes) return 0;
  for (int k = 0; k < ns; ++k) {
    int nd[2];
    cp_wi_con_nodes(w, &w->cons[w->sel[k]], nd);
    const int *r = key->v + 3 * k;
    if (r[0] != nd[0] || r[1] != nd[1] || r[2] != (w->rank[k] >= 0)) return 0;
  }
  return 1;
}

static void remember(const cp_world *w, struct cp_wi_sparse *s, int which, int ns, int n,
                     int nodes) {
  struct skey *key = which == C_REJ ? &s->rej : &s->lst;
  key->ns = -1;
  if (need(s, which, 3 * (size_t)ns + 1, sizeof(int))) return;
  for (int k = 0; k < ns; ++k) {
    int *r = key->v + 3 * k;
    cp_wi_con_nodes(w, &w->cons[w->sel[k]], r);
    r[2] = w->rank[k] >= 0;
  }
  key->ns = ns;
  key->n = n;
  key->nodes = nodes;
}

// The neighbour lists of the ns selected constraints and the column pool
// for an LCP of n unknowns. Returns 0, 1 when the columns are too long to
// pay, -1 when out of memory.
static int prepare(cp_world *w, int ns, int n) {
  if (!w->spw && !(w->spw = calloc(1, sizeof *w->spw))) return -1;
  struct cp_wi_sparse *s = w->spw;
  if (!s->rej.v) s->rej.ns = -1; // (a new struct: nothing remembered yet)
  if (!s->lst.v) s->lst.ns = -1;
  const int nodes = w->sc.n_bodies + w->sc.n_manips;
  if (same_structure(w, &s->rej, ns, n, nodes)) return 1;
  if (!w->sparse_memo_off && same_structure(w, &s->lst, ns, n, nodes)) {
    ++s->memo_hits;
    return 0;
  }
  s->lst.ns = -1; // (the lists are about to change)
  if (need(s, C_NODESTART, (size_t)nodes + 2, sizeof(int)) ||
      need(s, C_NCONS, 2 * (size_t)ns + 1, sizeof(int)) ||
      need(s, C_NSTART, (size_t)ns + 1, sizeof(int)) ||
      need(s, C_MARK, (size_t)ns + 1, sizeof(int)))
    return -1;
  int *ns0 = s->nodestart;
  memset(ns0, 0, sizeof(int) * ((size_t)nodes + 2));
  for (int k = 0; k < ns; ++k) {
    int nd[2];
    cp_wi_con_nodes(w, &w->cons[w->sel[k]], nd);
    if (nd[0] >= 0) ns0[nd[0] + 2]++;
    if (nd[1] >= 0 && nd[1] != nd[0]) ns0[nd[1] + 2]++;
  }
  for (int v = 0; v < nodes; ++v) ns0[v + 2] += ns0[v + 1];
  for (int k = 0; k < ns; ++k) { // constraints of node v: ncons[ns0[v] .. ns0[v + 1])
    int nd[2];
    cp_wi_con_nodes(w, &w->cons[w->sel[k]], nd);
    if (nd[0] >= 0) s->ncons[ns0[nd[0] + 1]++] = k;
    if (nd[1] >= 0 && nd[1] != nd[0]) s->ncons[ns0[nd[1] + 1]++] = k;
  }
  // Lengths first (an upper bound: a constraint on both of two nodes is
  // counted twice), then the lists.
  size_t total = 0;
  for (int k = 0; k < ns; ++k) {
    int nd[2];
    cp_wi_con_nodes(w, &w->cons[w->sel[k]], nd);
    total += 1;
    for (int e = 0; e < 2; ++e)
      if (nd[e] >= 0 && (e == 0 || nd[1] != nd[0])) total += (size_t)(ns0[nd[e] + 1] - ns0[nd[e]]);
  }
  if (need(s, C_NBR, total, sizeof(int))) return -1;
  for (int k = 0; k < ns; ++k) s->mark[k] = -1;
  const int *ridx = w->rank;
  int p = 0, cmax = 4;
  for (int k = 0; k < ns; ++k) {
    int nd[2];
    cp_wi_con_nodes(w, &w->cons[w->sel[k]], nd);
    s->nstart[k] = p;
    s->nbr[p++] = k;
    s->mark[k] = k;
    int rows = 2 + 4 * (ridx[k] >= 0); // its own rows and a lambda row
    for (int e = 0; e < 2; ++e) {
      if (nd[e] < 0 || (e == 1 && nd[1] == nd[0])) continue;
      for (int t = ns0[nd[e]]; t < ns0[nd[e] + 1]; ++t) {
        const int j = s->ncons[t];
        if (s->mark[j] == k) continue;
        s->mark[j] = k;
        s->nbr[p++] = j;
        rows += 1 + 4 * (ridx[j] >= 0);
      }
    }
    if (rows > cmax) cmax = rows;
  }
  s->nstart[ns] = p;
  if ((size_t)cmax * CP_WORLD_SPARSE_RATIO > (size_t)n) {
    remember(w, s, C_REJ, ns, n, nodes);
    return 1;
  }
  s->cmax = cmax;
  const size_t nn = (size_t)n;
  if (need(s, C_SLOT, nn + 1, sizeof(int)) || need(s, C_FREE, nn + 1, sizeof(int)) ||
      need(s, C_LEN, nn + 1, sizeof(int)) || need(s, C_POS, nn, sizeof(int)) ||
      need(s, C_L1, nn, sizeof(double)) || need(s, C_ROWS, nn * (size_t)cmax, sizeof(int)) ||
      need(s, C_VALS, nn * (size_t)cmax, sizeof(double)) ||
      need(s, C_BSTART, nn + 1, sizeof(int)) ||
      need(s, C_BROW, nn * (size_t)cmax, sizeof(int)) ||
      need(s, C_BVAL, nn * (size_t)cmax, sizeof(double)) || need(s, C_EXT, 3 * nn, sizeof(int)))
    return -1;
  if (!w->sparse_memo_off) remember(w, s, C_LST, ns, n, nodes);
  return 0;
}

// Column col of M on its nonzero pattern (lcp.c's lcp_column, the same
// operations on the neighbours' rows): rows ri, values v; returns how many.
// Corner rows (ns .. ns + 4 nr) come in whole groups of four, in order:
// the rolling constraint's four, as cp_wi_scatter_runs takes them.
static int column(const cp_world *w, const struct cp_wi_sparse *s, int col, int *ri,
                  double *v) {
  const int ns = w->lns, nr = w->lnr, nb = ns + 4 * nr;
  const int *ridx = w->rank;
  int p = 0;
  if (col >= nb) { // lambda_f: + lambda in rolling f's four corner rows
    const int f = col - nb;
    for (int e = 0; e < 4; ++e) {
      ri[p] = ns + 4 * f + e;
      v[p++] = 1.0;
    }
    return p;
  }
  if (cp_wi_fixed_col(w, col)) { // a support's known c_n (lcp.c's fixed_q)
    ri[0] = col;
    v[0] = 1.0;
    return 1;
  }
  cp_wi_colsrc src;
  cp_wi_colsrc_init(w, col, &src);
  // k0 is its own first neighbour: its rows come first (c_n at 0, its
  // corners at 1..4 when rolling).
  const int k0 = src.k0;
  for (int t = s->nstart[k0]; t < s->nstart[k0 + 1]; ++t) {
    const int k = s->nbr[t];
    double cn, a, b;
    cp_wi_colsrc_at(&src, k, &cn, &a, &b);
    ri[p] = k;
    v[p++] = cn;
    if (ridx[k] < 0) continue;
    const int r0 = ns + 4 * ridx[k];
    const double rv[4] = {a + b, a + -b, -a + b, -a + -b};
    for (int e = 0; e < 4; ++e) {
      ri[p] = r0 + e;
      v[p++] = rv[e];
    }
  }
  if (col < ns) {
    if (ridx[col] >= 0) {
      ri[p] = nb + ridx[col];
      v[p++] = w->pc[col].mu;
    }
  } else {
    ri[p] = nb + ridx[k0];
    v[p++] = -1.0;
  }
  double add[4];
  const int comp = cp_wi_colsrc_comp(w, col, &src, add);
  if (comp == 1) v[0] += add[0];
  for (int e = 0; comp == 4 && e < 4; ++e) v[1 + e] += add[e];
  return p;
}

#define ROWS(sl) (s->rows + (size_t)(sl) * (size_t)s->cmax)
#define VALS(sl) (s->vals + (size_t)(sl) * (size_t)s->cmax)

void cp_wi_scatter_runs(int len, const int *ri, const double *v, int lo, int hi, double zv,
                        double *r, double *sc) {
  const double az = fabs(zv);
  const v2d Z = {zv, zv}, AZ = {az, az};
  const unsigned span = (unsigned)(hi - lo);
  for (int t = 0; t < len;) {
    const int i = ri[t];
    if ((unsigned)(i - lo) >= span) {
      r[i] += v[t] * zv;
      sc[i] += fabs(v[t]) * az;
      ++t;
      continue;
    }
    // Rows i .. i + 3: each lane the scalar loop's operations.
    double *restrict rr = r + i, *restrict ss = sc + i;
    const v2d v0 = ld2(v + t), v1 = ld2(v + t + 2);
    const v2d a0 = {fabs(v0[0]), fabs(v0[1])}, a1 = {fabs(v1[0]), fabs(v1[1])};
    st2(rr, ld2(rr) + v0 * Z);
    st2(rr + 2, ld2(rr + 2) + v1 * Z);
    st2(ss, ld2(ss) + a0 * AZ);
    st2(ss + 2, ld2(ss + 2) + a1 * AZ);
    t += 4;
  }
}

// The basic block M_BB gathered from the k basic columns' lists (basic
// positions in s->pos): of each column the entries in basic rows, in its
// list's order, so that the factorisation's scatter and the refinement's
// residual run over the block's own entries (a resting 10-box stack: 12 of
// a column's 62 rows) instead of filtering every list in each pass.
static void gather(struct cp_wi_sparse *s, int k) {
  int p = 0;
  for (int b = 0; b < k; ++b) {
    const int sl = s->slot[b], *ri = ROWS(sl);
    const double *v = VALS(sl);
    s->bstart[b] = p;
    for (int t = 0; t < s->len[sl]; ++t) {
      const int a = s->pos[ri[t]];
      if (a < 0) continue;
      s->brow[p] = a;
      s->bval[p++] = v[t];
    }
  }
  s->bstart[k] = p;
}

// LU of the k x k basic block M_BB (gathered) into w->LU, as lcp.c's
// lu_factor would factor it formed dense: a band wider than sparse.c
// takes, or k within the small LU's reach, is formed dense and given to
// it; a narrow band is written straight into band storage. The small LU
// runs on the block's extents (cp_wi_lu_factor_ext, the same bits) unless
// an entry is -0 (a resting 10-box stack: k = 40, rows and columns of
// about 12 nonzeros).
static int factor(cp_world *w, struct cp_wi_sparse *s, int k, int band[2]) {
  int kl = 0, ku = 0;
  s->on_ext = 0;
  for (int b = 0; b < k; ++b)
    for (int t = s->bstart[b]; t < s->bstart[b + 1]; ++t) {
      const int a = s->brow[t];
      if (s->bval[t] == 0) continue;
      if (a - b > kl) kl = a - b;
      if (b - a > ku) ku = b - a;
    }
  const int ldab = 2 * kl + ku + 1;
  const int banded = k > CP_WORLD_SMALL_LU && cp_wi_band_fits(k, kl, ku);
  const size_t ld = banded ? (size_t)ldab : (size_t)k, off = banded ? (size_t)(kl + ku) : 0;
  memset(w->LU, 0, sizeof(double) * ld * (size_t)k);
  if (!banded && k <= CP_WORLD_SMALL_LU) {
    int *rl = s->ext, *cl = rl + k, negz = 0;
    for (int a = 0; a < k; ++a) rl[a] = -1;
    for (int b = 0; b < k; ++b) {
      double *c = w->LU + (size_t)b * ld;
      cl[b] = -1;
      for (int t = s->bstart[b]; t < s->bstart[b + 1]; ++t) {
        const int a = s->brow[t];
        const double v = s->bval[t];
        c[a] = v;
        if (v == 0) {
          negz |= signbit(v);
          continue;
        }
        if (a > cl[b]) cl[b] = a;
        if (b > rl[a]) rl[a] = b;
      }
    }
    if (negz) return cp_wi_lu_factor(k, w->LU, w->ipiv, band);
    band[0] = band[1] = -1;
    s->on_ext = 1;
    return cp_wi_lu_factor_ext(k, w->LU, w->ipiv, rl, cl, cl + k);
  }
  for (int b = 0; b < k; ++b) {
    double *c = w->LU + (size_t)b * ld + off - (banded ? (size_t)b : 0);
    for (int t = s->bstart[b]; t < s->bstart[b + 1]; ++t) c[s->brow[t]] = s->bval[t];
  }
  if (!banded) return cp_wi_lu_factor(k, w->LU, w->ipiv, band);
  return cp_wi_band_factor_stored(k, kl, ku, w->LU, w->ipiv, band);
}

// x = M_BB^-1 x by factor's LU.
static int solve(cp_world *w, const struct cp_wi_sparse *s, int k, const int band[2], double *x) {
  if (!s->on_ext) return cp_wi_lu_solve(k, w->LU, w->ipiv, band, x);
  cp_wi_lu_solve_ext(k, w->LU, w->ipiv, s->ext + k, s->ext + 2 * k, x);
  return 0;
}

// The rows' sums |M_iB|_1 over the k basic columns (slots in order), all
// formed into s->l1 on the first call (cp_wi_warm_check's allowance).
typedef struct {
  struct cp_wi_sparse *s;
  int n, k, have;
} sparse_l1;

static __attribute__((noinline)) void sparse_l1_form(sparse_l1 *c) {
  struct cp_wi_sparse *s = c->s;
  memset(s->l1, 0, sizeof(double) * (size_t)c->n);
  for (int b = 0; b < c->k; ++b) {
    const int sl = s->slot[b], *ri = ROWS(sl);
    const double *v = VALS(sl);
    for (int t = 0; t < s->len[sl]; ++t) s->l1[ri[t]] += fabs(v[t]);
  }
  c->have = 1;
}

static inline __attribute__((always_inline)) double sparse_row_l1(void *ctx, int i) {
  sparse_l1 *c = ctx;
  if (!c->have) sparse_l1_form(c);
  return c->s->l1[i];
}

int cp_wi_warm_accept_sparse(cp_world *w, int n, cp_lcp_info *info, int *pivots) {
  if (n < CP_WORLD_SPARSE_N || w->sparse_off) return -1;
  const int prep = prepare(w, w->lns, n);
  if (prep) return -1;
  struct cp_wi_sparse *s = w->spw;
  ++s->taken;
  int k;
  const double tol = cp_wi_warm_basis(w, n, &k), rel = w->opt.solve.lemke.check.rel_tol;
  int nfree = 0;
  for (int sl = n - 1; sl >= k; --sl) s->freeslot[nfree++] = sl;
  for (int b = 0; b < k; ++b) {
    s->slot[b] = b;
    s->len[b] = column(w, s, w->zidx[b], ROWS(b), VALS(b));
  }
  double *zb = w->z, *r = w->w, *sc = w->LU; // z_B in z[0..k); scratch
  *pivots = 0;
  for (;; ++*pivots) {
    if (k > 0) {
      for (int i = 0; i < n; ++i) s->pos[i] = -1;
      for (int a = 0; a < k; ++a) s->pos[w->zidx[a]] = a;
      for (int a = 0; a < k; ++a) zb[a] = -w->q[w->zidx[a]];
      int band[2];
      gather(s, k);
      if (factor(w, s, k, band) || solve(w, s, k, band, zb)) return 0;
      for (int a = 0; a < k; ++a) r[a] = -w->q[w->zidx[a]];
      for (int b = 0; b < k; ++b) {
        const double zv = zb[b];
        for (int t = s->bstart[b]; t < s->bstart[b + 1]; ++t) r[s->brow[t]] -= s->bval[t] * zv;
      }
      if (solve(w, s, k, band, r)) return 0;
    }
    const int worst = cp_wi_warm_refine(zb, r, k, tol);
    if (worst == -2) return 0;
    if (worst >= 0) { // z_j leaves
      if (*pivots == CP_WORLD_WARM_PIVOTS) return 0;
      s->freeslot[nfree++] = s->slot[worst];
      cp_wi_warm_leave(w, zb, k, worst);
      memmove(s->slot + worst, s->slot + worst + 1, sizeof(int) * (size_t)(k - 1 - worst));
      --k;
      continue;
    }
    const double zmax = cp_wi_warm_clamp(w, n, k, zb, r, sc);
    for (int b = 0; b < k; ++b) {
      const int sl = s->slot[b];
      if (zb[b] == 0) continue;
      cp_wi_scatter_runs(s->len[sl], ROWS(sl), VALS(sl), w->lns, w->lns + 4 * w->lnr, zb[b], r,
                         sc);
    }
    // The check (cp_wi_warm_check); the rounding allowance's row sums
    // |M_iB|_1 formed for every row once one needs them.
    const double ulp = 8.0 * (double)n * DBL_EPSILON * zmax;
    sparse_l1 l1 = {s, n, k, 0};
    const int enter = cp_wi_warm_check(w, n, r, sc, rel, ulp, sparse_row_l1, &l1);
    if (enter == -2) return 0;
    if (enter < 0) break;
    if (*pivots == CP_WORLD_WARM_PIVOTS) return 0;
    const int at = cp_wi_warm_enter(w, k, enter);
    memmove(s->slot + at + 1, s->slot + at, sizeof(int) * (size_t)(k - at));
    const int sl = s->freeslot[--nfree];
    s->slot[at] = sl;
    s->len[sl] = column(w, s, enter, ROWS(sl), VALS(sl));
    ++k;
  }
  cp_wi_warm_finish(w, n, k, *pivots, info);
  return 1;
}
