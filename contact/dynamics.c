#include "contact/dynamics.h"

#include <cblas.h>
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>

#include "models/bigbuf.h"
#include "models/vec2.h"

void cp_contact_space_free(cp_contact_space *cs) {
  if (!cs) return;
  /* One buffer holds A, b, L, loff, free_idx, bstart; both are large
   * buffers (models/bigbuf.h: a large scene's on huge pages). */
  cp_bigbuf_free(cs->A);
  cp_bigbuf_free(cs->scratch);
  memset(cs, 0, sizeof *cs);
}

/* A block of at least `need` bytes in *p (capacity *cap), kept when large
 * enough; NULL when out of memory. */
static void *keep_block(void **p, size_t *cap, size_t need) {
  if (*p && *cap >= need) return *p;
  *p = cp_bigbuf_regrow(*p, need); /* (a large one grows in place) */
  *cap = cp_bigbuf_size(*p);
  return *p;
}

/* rhs = f_i - sum_{j driven} H_ij u'_j for free dof i: the generalised force
 * left for the free dofs once the driven dofs' accelerations are accounted
 * for. */
static double free_rhs(const cp_contact_space *cs, int i) {
  double s = cs->f[i];
  if (cs->driven)
    for (int j = 0; j < cs->nu; j++)
      if (cs->driven[j]) s -= cs->H[i + (size_t)j * cs->nu] * cs->udot_driven[j];
  return s;
}

/* The block of a rebuild's results (A first): kept when at least `need`
 * bytes, else grown to at least `need` and half as large again as the old
 * (a bin's A grows over many steps while boxes land: one new block per
 * growth, each zeroed in full, was most of those steps' clearing); a
 * large block grows in place or moves with its pages (models/bigbuf.h),
 * its old part as dirty as it was, the new part zero, else it is a new
 * zeroed block. *dirty: the bytes from the start beyond which the block
 * holds only zeros (0 for a new block). NULL when out of memory. */
static void *keep_zeroed(void **p, size_t *cap, size_t *dirty, size_t need) {
  if (*p && *cap >= need) return *p;
  const size_t grown = *cap + *cap / 2, want = grown > need ? grown : need;
  *p = cp_bigbuf_regrow_zeroed(*p, want, dirty);
  *cap = cp_bigbuf_size(*p);
  return *p;
}

/* Cholesky factor (lower, in place, column-major s x s). Small blocks (a
 * body's 6 x 6) by plain loops: OpenBLAS's dpotrf costs microseconds of call
 * overhead at that size (experiments/bench_contact); larger ones by LAPACK.
 * Returns 0, or -1 when not positive definite. */
static inline __attribute__((always_inline)) int chol_small(int s, double *L) {
  for (int j = 0; j < s; j++) {
    double d = L[j + (size_t)j * s];
    for (int t = 0; t < j; t++) d -= L[j + (size_t)t * s] * L[j + (size_t)t * s];
    if (!(d > 0.0)) return -1;
    d = sqrt(d);
    L[j + (size_t)j * s] = d;
    for (int i = j + 1; i < s; i++) {
      double v = L[i + (size_t)j * s];
      for (int t = 0; t < j; t++) v -= L[i + (size_t)t * s] * L[j + (size_t)t * s];
      L[i + (size_t)j * s] = v / d;
    }
    for (int i = 0; i < j; i++) L[i + (size_t)j * s] = 0.0; /* upper part */
  }
  return 0;
}

/* A body's rotational block (s = 3) and a single dof with s a constant:
 * the loops unrolled, the same operations in the same order. */
static int chol_lower(int s, double *L) {
  if (s > 24) return LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', s, L, s) == 0 ? 0 : -1;
  if (s == 3) return chol_small(3, L);
  if (s == 1) return chol_small(1, L);
  return chol_small(s, L);
}

/* x := L^-1 x and x := L^-T x for a lower factor L (s x s, column-major). */
static void lower_solve(int s, const double *L, double *x) {
  if (s == 3) { /* a body's rotational block: unrolled, the same operations */
    double v0 = x[0], v1 = x[1], v2 = x[2];
    v0 = v0 / L[0];
    v1 -= L[1] * v0;
    v1 = v1 / L[4];
    v2 -= L[2] * v0;
    v2 -= L[5] * v1;
    v2 = v2 / L[8];
    x[0] = v0, x[1] = v1, x[2] = v2;
    return;
  }
  for (int r = 0; r < s; r++) {
    double v = x[r];
    for (int t = 0; t < r; t++) v -= L[r + (size_t)t * s] * x[t];
    x[r] = v / L[r + (size_t)r * s];
  }
}

static inline __attribute__((always_inline)) void lower_t_small(int s, const double *L,
                                                                double *x) {
  for (int r = s - 1; r >= 0; r--) {
    double v = x[r];
    for (int t = r + 1; t < s; t++) v -= L[t + (size_t)r * s] * x[t];
    x[r] = v / L[r + (size_t)r * s];
  }
}

static void lower_t_solve(int s, const double *L, double *x) {
  if (s == 3) lower_t_small(3, L, x); /* unrolled, as lower_solve's */
  else if (s == 1) lower_t_small(1, L, x);
  else lower_t_small(s, L, x);
}

/* From this many rows (3 per contact) a build finds its lists of columns
 * in one pass down G's columns, A's exact footprint may be kept as
 * per-group lists (pattern_lists), and cp_contact_space_accel sums down
 * G's columns. */
#define CP_CONTACT_SPACE_SPARSE_M 96

/* From this many rows a build tracks A's footprint (colmin), and a rebuilt
 * A is cleared on its last footprint rather than in full; with the same
 * sizes as the last build the lower triangle is cleared only where the
 * new footprint does not reach (the mirror overwrites the rest). */
#define CP_CONTACT_SPACE_TRACK_M 24

/* Whether x[0..4) are all zeros of either sign (their bits but the sign's
 * are zero): a run of G or H that no test "!= 0.0" would stop at. */
static inline int zero4(const double *x) {
  uint64_t b[4];
  memcpy(b, x, sizeof b);
  return !((b[0] | b[1] | b[2] | b[3]) << 1);
}

/* The lower triangle of A (m x m) from the upper, in full: for an A that
 * was zeroed whole (below CP_CONTACT_SPACE_SPARSE_M rows), where the
 * footprint bookkeeping (colmin) costs more than it saves. A single box's
 * four contacts (m = 12) with the size a constant. */
static inline __attribute__((always_inline)) void mirror_n(int m, double *A) {
  for (int c = 1; c < m; c++)
    for (int r = 0; r < c; r++) A[c + (size_t)r * m] = A[r + (size_t)c * m];
}

static void mirror_full(int m, double *A) {
  if (m == 12) mirror_n(12, A);
  else mirror_n(m, A);
}

/* The nonzero pattern of H's strict upper triangle (dof a of column b at
 * bit b (b - 1) / 2 + a), for nu <= CP_CONTACT_SPACE_PAT_NU: the blocks of
 * H_FF (no dof driven) depend on nothing else. */
#define CP_CONTACT_SPACE_PAT_NU 11
static inline __attribute__((always_inline)) uint64_t h_pattern_n(int nu, const double *H) {
  uint64_t pat = 0;
  for (int b = 1, bit = 0; b < nu; b++)
    for (int a = 0; a < b; a++, bit++) pat |= (uint64_t)(H[a + (size_t)b * nu] != 0.0) << bit;
  return pat;
}

static uint64_t h_pattern(int nu, const double *H) {
  return nu == 6 ? h_pattern_n(6, H) : h_pattern_n(nu, H); /* a free body */
}

static int uf_find(int *parent, int a) {
  while (parent[a] != a) a = parent[a] = parent[parent[a]];
  return a;
}

static int build_space(int nu, int nc, const double *H, const double *G,
                       const double *f, const double *k,
                       const unsigned char *driven, const double *udot_driven,
                       const cp_contact_sparsity *sp, cp_contact_space *cs, int reuse);

/* The rows of G's column c that can be nonzero, as two ranges, the lower
 * first: [r[0], r[1]) and [r[2], r[3]); every row when no ranges are known. */
static inline void col_rows(const cp_contact_space *cs, int c, int r[4]) {
  if (!cs->range) {
    r[0] = 0, r[1] = r[2] = r[3] = cs->nu;
    return;
  }
  const int *g = cs->range + 4 * (c / 3);
  const int sw = g[2] < g[0];
  r[0] = g[2 * sw], r[1] = g[2 * sw + 1], r[2] = g[2 - 2 * sw], r[3] = g[3 - 2 * sw];
}

int cp_contact_space_build(int nu, int nc, const double *H, const double *G,
                           const double *f, const double *k,
                           const unsigned char *driven,
                           const double *udot_driven, cp_contact_space *cs) {
  memset(cs, 0, sizeof *cs);
  return build_space(nu, nc, H, G, f, k, driven, udot_driven, NULL, cs, 0);
}

int cp_contact_space_rebuild(int nu, int nc, const double *H, const double *G,
                             const double *f, const double *k,
                             const unsigned char *driven,
                             const double *udot_driven, cp_contact_space *cs) {
  return build_space(nu, nc, H, G, f, k, driven, udot_driven, NULL, cs, 1);
}

int cp_contact_space_rebuild_sparse(int nu, int nc, const double *H, const double *G,
                                    const double *f, const double *k,
                                    const unsigned char *driven,
                                    const double *udot_driven,
                                    const cp_contact_sparsity *sp,
                                    cp_contact_space *cs) {
  return build_space(nu, nc, H, G, f, k, driven, udot_driven, sp, cs, 1);
}

/* Zeroes A (m x m) on the footprint of the build whose colmin is given:
 * column c's rows colmin[c]..c and their mirror. */
static void clear_footprint(int m, const int *colmin, double *A) {
  for (int c = 0; c < m; c++) {
    double *Ac = A + (size_t)c * m;
    memset(Ac + colmin[c], 0, sizeof(double) * (size_t)(c + 1 - colmin[c]));
    for (int r = colmin[c]; r < c; r++) A[c + (size_t)r * m] = 0.0;
  }
}

/* Column c onto block kb's list of columns (colv: m per block, ncol:
 * their lengths), once: a build walks c in increasing order. */
static inline void list_col(int *colv, int *ncol, int m, int kb, int c) {
  int *cv = colv + (size_t)kb * m;
  if (ncol[kb] == 0 || cv[ncol[kb] - 1] != c) cv[ncol[kb]++] = c;
}

/* clear_footprint's upper triangle only (column c's rows colmin[c]..c):
 * the lower one is left to the end of the build (lower_rest). */
static void clear_upper(int m, const int *colmin, double *A) {
  for (int c = 0; c < m; c++)
    memset(A + (size_t)c * m + colmin[c], 0, sizeof(double) * (size_t)(c + 1 - colmin[c]));
}

/* The lower triangle of the last footprint (old, same m) zeroed where the
 * new one (cur: each column's first row, or NULL: none) does not reach:
 * row c's columns old[c] .. min(cur[c], c). */
static void lower_rest(int m, const int *old, const int *cur, double *A) {
  for (int c = 0; c < m; c++) {
    const int end = cur && cur[c] < c ? cur[c] : c;
    for (int r = old[c]; r < end; r++) A[c + (size_t)r * m] = 0.0;
  }
}

/* A's exact footprint for a large build whose constraints' dof ranges are
 * known (the bin of 50: its colmin footprint spans most of the triangle,
 * since a box's contacts with the floor come long before its contacts with
 * its neighbours). Dofs are joined into groups by H's blocks and by the
 * ranges; two constraints can meet in A only when they touch a common
 * group. The lists, kept after colmin: pat[0] the number of groups ng (-1:
 * no lists, colmin is the footprint), pat[1 .. ng + 1] their starts in the
 * entries that follow (constraints, increasing within a group; at most two
 * groups a constraint). Room: pattern_ints(nu1, m1). */
static size_t pattern_ints(size_t nu1, size_t m1) { return nu1 + 2 + m1; }

/* The lists of a build (comp and grp: nu ints each of scratch); returns
 * the sum over groups of their squared lengths (the 3 x 3 blocks a clear
 * writes), or -1 without ranges. */
static long pattern_lists(const cp_contact_space *cs, int *comp, int *grp, int *pat) {
  const int nu = cs->nu, nc = cs->nc;
  pat[0] = -1;
  if (!cs->range || nu <= 0) return -1;
  for (int i = 0; i < nu; i++) comp[i] = i;
  for (int kb = 0; kb < cs->nblocks; kb++) {
    const int *idx = cs->free_idx + cs->bstart[kb];
    for (int t = 1; t < cs->bstart[kb + 1] - cs->bstart[kb]; t++) {
      int a = uf_find(comp, idx[0]), b = uf_find(comp, idx[t]);
      if (a != b) comp[a > b ? a : b] = a < b ? a : b;
    }
  }
  for (int j = 0; j < nc; j++) {
    const int *g = cs->range + 4 * j;
    for (int h = 0; h < 4; h += 2)
      for (int i = g[h] + 1; i < g[h + 1]; i++) {
        int a = uf_find(comp, g[h]), b = uf_find(comp, i);
        if (a != b) comp[a > b ? a : b] = a < b ? a : b;
      }
  }
  int ng = 0;
  for (int i = 0; i < nu; i++) grp[i] = uf_find(comp, i) == i ? ng++ : -1;
  for (int i = 0; i < nu; i++) grp[i] = grp[uf_find(comp, i)];
  int *st = pat + 1, *e = pat + ng + 2;
  for (int g = 0; g <= ng; g++) st[g] = 0;
  for (int pass = 0; pass < 2; pass++) {
    for (int j = 0; j < nc; j++) {
      const int *g = cs->range + 4 * j;
      const int k0 = g[1] > g[0] ? grp[g[0]] : -1;
      const int k1 = g[3] > g[2] && grp[g[2]] != k0 ? grp[g[2]] : -1;
      if (pass == 0) {
        if (k0 >= 0) st[k0 + 1]++;
        if (k1 >= 0) st[k1 + 1]++;
      } else {
        if (k0 >= 0) e[st[k0]++] = j;
        if (k1 >= 0) e[st[k1]++] = j;
      }
    }
    if (pass == 0)
      for (int g = 0; g < ng; g++) st[g + 1] += st[g];
    else
      for (int g = ng; g > 0; g--) st[g] = st[g - 1];
  }
  st[0] = 0;
  pat[0] = ng;
  long cost = 0;
  for (int g = 0; g < ng; g++) cost += (long)(st[g + 1] - st[g]) * (st[g + 1] - st[g]);
  return cost;
}

/* The inputs of the last build's pattern_lists and what it returned,
 * kept after the last footprint's colmin: a resting stack's ranges and
 * H's blocks stay the same step after step, and the union-find over every
 * contact's rows was 2 % of a 10-box step, which then (its lists too dear)
 * only sets colmin's footprint. key[0 .. 5): nu, nc, nblocks and the
 * cost (a long, in two ints); then the ranges [4 nc], bstart [nblocks +
 * 1] and free_idx [nfree]. Room: pattern_key_ints(nu1, m1) (m1 = 3 nc). */
static size_t pattern_key_ints(size_t nu1, size_t m1) { return 6 + 2 * m1 + 2 * nu1; }

/* Whether key holds this build's inputs to pattern_lists (the ranges, H's
 * blocks and sizes); then *cost is what pattern_lists returned for them. */
static int pattern_key_same(const cp_contact_space *cs, const int *key, long *cost) {
  const int nb = cs->nblocks, nf = cs->bstart[nb];
  if (key[0] != cs->nu || key[1] != cs->nc || key[2] != nb) return 0;
  const int *kr = key + 5, *kb = kr + 4 * (size_t)cs->nc, *kf = kb + nb + 1;
  if (memcmp(kr, cs->range, sizeof(int) * 4 * (size_t)cs->nc) ||
      memcmp(kb, cs->bstart, sizeof(int) * ((size_t)nb + 1)) ||
      memcmp(kf, cs->free_idx, sizeof(int) * (size_t)nf))
    return 0;
  memcpy(cost, key + 3, sizeof *cost);
  return 1;
}

static void pattern_key_save(const cp_contact_space *cs, int *key, long cost) {
  const int nb = cs->nblocks, nf = cs->bstart[nb];
  key[0] = cs->nu, key[1] = cs->nc, key[2] = nb;
  memcpy(key + 3, &cost, sizeof cost);
  int *kr = key + 5, *kb = kr + 4 * (size_t)cs->nc, *kf = kb + nb + 1;
  memcpy(kr, cs->range, sizeof(int) * 4 * (size_t)cs->nc);
  memcpy(kb, cs->bstart, sizeof(int) * ((size_t)nb + 1));
  memcpy(kf, cs->free_idx, sizeof(int) * (size_t)nf);
}

/* The entries of colmin's footprint (upper triangle and diagonal). */
static long fcost_of(int m, const int *colmin) {
  long fcost = 0;
  for (int c = 0; c < m; c++) fcost += c + 1 - colmin[c];
  return fcost;
}

/* Zeroes A (m x m) on the footprint the lists give (both triangles). */
static void clear_pattern(int m, const int *pat, double *A) {
  const int ng = pat[0], *st = pat + 1, *e = pat + ng + 2;
  for (int g = 0; g < ng; g++)
    for (int s = st[g]; s < st[g + 1]; s++) {
      double *Ab = A + (size_t)(3 * e[s]) * m;
      for (int t = st[g]; t < st[g + 1]; t++) {
        double *a = Ab + 3 * e[t];
        a[0] = a[1] = a[2] = 0.0;
        a[m] = a[m + 1] = a[m + 2] = 0.0;
        a[2 * m] = a[2 * m + 1] = a[2 * m + 2] = 0.0;
      }
    }
}

/* The lower triangle of A (m x m) from the upper on the lists' footprint.
 * A group's constraints increase strictly: the block of an earlier one is
 * above the diagonal whole (copied as a 3 x 3), a constraint's own block
 * has its three entries above the diagonal. */
static void mirror_pattern(int m, const int *pat, double *A) {
  const int ng = pat[0], *st = pat + 1, *e = pat + ng + 2;
  const size_t sm = (size_t)m;
  for (int g = 0; g < ng; g++)
    for (int s = st[g]; s < st[g + 1]; s++) {
      const size_t c0 = 3 * (size_t)e[s];
      const double *restrict up = A + c0 * sm; /* columns c0 .. c0 + 2 */
      for (int t = st[g]; t < s; t++) {
        const size_t r0 = 3 * (size_t)e[t];
        double *restrict lo = A + c0 + r0 * sm; /* rows c0 .., columns r0 .. */
        for (size_t i = 0; i < 3; i++) {
          const double *u = up + r0 + i;
          lo[i * sm] = u[0], lo[i * sm + 1] = u[sm], lo[i * sm + 2] = u[2 * sm];
        }
      }
      A[c0 + 1 + c0 * sm] = A[c0 + (c0 + 1) * sm];
      A[c0 + 2 + c0 * sm] = A[c0 + (c0 + 2) * sm];
      A[c0 + 2 + (c0 + 1) * sm] = A[c0 + 1 + (c0 + 2) * sm];
    }
}

/* The lower triangle of A (m x m, m = 3 nc) from the upper on colmin's
 * footprint, a contact's three columns at a time: row r's three entries
 * of columns c .. c + 2 are adjacent in A's column r, so one pass over the
 * rows stores three (the loop's overhead was most of a per-entry copy).
 * The pass starts at the three columns' smallest colmin; a column whose
 * own starts later reads zeros there (its upper triangle outside the
 * footprint is cleared) and writes them where its lower triangle is zero
 * already (cleared, or lower_rest's): the same A. Columns whose first
 * rows lie far apart are copied one by one, as before. */
#define CP_CONTACT_SPACE_MIRROR_SPREAD 6
static void mirror_colmin(int m, const int *colmin, double *A) {
  const size_t sm = (size_t)m;
  for (int c = 0; c + 2 < m; c += 3) {
    const int a = colmin[c], b = colmin[c + 1], d = colmin[c + 2];
    const int lo = a < b ? (a < d ? a : d) : (b < d ? b : d);
    const int hi = a > b ? (a > d ? a : d) : (b > d ? b : d);
    if (hi - lo > CP_CONTACT_SPACE_MIRROR_SPREAD) {
      for (int t = c; t < c + 3; t++)
        for (int r = colmin[t]; r < t; r++) A[t + (size_t)r * sm] = A[r + (size_t)t * sm];
      continue;
    }
    const double *restrict u0 = A + (size_t)c * sm, *restrict u1 = u0 + sm,
                           *restrict u2 = u1 + sm;
    double *restrict lo_r = A + c + (size_t)lo * sm; /* row c's entry in column lo */
    for (int r = lo; r < c; r++, lo_r += sm) {
      lo_r[0] = u0[r];
      lo_r[1] = u1[r];
      lo_r[2] = u2[r];
    }
    /* the contact's own block: its three entries above the diagonal */
    A[c + 1 + (size_t)c * sm] = u1[c];
    A[c + 2 + (size_t)c * sm] = u2[c];
    A[c + 2 + (size_t)(c + 1) * sm] = u2[c + 1];
  }
}

/* The triangle updates below take a column's rows two at a time
 * (models/vec2.h): each entry gets the multiplies and adds of the scalar
 * loop, in its order, so the same bits. GCC vectorised these loops only
 * behind a per-column aliasing check with a scalar tail, and a column of
 * the triangle is short (a box's 12 or 24 rows at most). */

static inline __attribute__((always_inline)) v2d bc2(double x) { return (v2d){x, x}; }

/* A's upper triangle (lda m, from a0: the block's first column and row)
 * += X^T X for a 3-row X (rows at X, X + p, X + 2p): per entry 0 + x0 x0'
 * + x1 x1' + x2 x2', then added. With p and m constants for a box. */
static inline __attribute__((always_inline)) void rot_update_n(int p, int m, const double *X,
                                                               double *a0) {
  const double *restrict x0 = X, *restrict x1 = X + p, *restrict x2 = X + 2 * (size_t)p;
  const v2d z = {0.0, 0.0};
  for (int c = 0; c < p; c++) {
    const double c0 = x0[c], c1 = x1[c], c2 = x2[c];
    const v2d C0 = bc2(c0), C1 = bc2(c1), C2 = bc2(c2);
    double *restrict ac = a0 + (size_t)c * m;
    int r = 0;
    for (; r < c; r += 2) { /* rows r and r + 1 (<= c) */
      v2d v = z + ld2(x0 + r) * C0;
      v += ld2(x1 + r) * C1;
      v += ld2(x2 + r) * C2;
      st2(ac + r, ld2(ac + r) + v);
    }
    if (r == c) {
      double v = 0.0;
      v += x0[r] * c0;
      v += x1[r] * c1;
      v += x2[r] * c2;
      ac[r] += v;
    }
  }
}

/* rot_update_n on the columns and rows cols[0..p) (increasing) of A. */
static void rot_update_gather(int p, int m, const double *X, const int *cols, double *A) {
  const double *restrict x0 = X, *restrict x1 = X + p, *restrict x2 = X + 2 * (size_t)p;
  for (int c = 0; c < p; c++) {
    const double c0 = x0[c], c1 = x1[c], c2 = x2[c];
    double *restrict ac = A + (size_t)cols[c] * m;
    for (int r = 0; r <= c; r++) {
      double v = 0.0;
      v += x0[r] * c0;
      v += x1[r] * c1;
      v += x2[r] * c2;
      ac[cols[r]] += v;
    }
  }
}

/* A single dof's outer product x x^T (upper triangle) added to A on the
 * columns a0 + st c (c < p): a step of 1 (the dof in every column of its
 * contacts, as a tilted body's) or 3 (one column per contact, as an
 * upright box's). Each entry gets the one product the gathered loop gives
 * it, so the same bits; the indices are computed, not loaded, and a step
 * of 1 runs along contiguous memory. */
static inline __attribute__((always_inline)) void dof_update_n(int st, int p, int m,
                                                               const double *restrict x,
                                                               double *restrict a0) {
  for (int c = 0; c < p; c++) {
    const double xc = x[c];
    double *restrict ac = a0 + (size_t)st * (size_t)c * (size_t)m;
    for (int r = 0; r <= c; r++) ac[st * r] += x[r] * xc;
  }
}

/* rot_update_n with a free body's three translational dofs first: per
 * entry the three products T_t[r] T_t[c] (rows at T, T + p, T + 2p) are
 * added to A one after the other, then the rotational sum, as the single
 * dofs' updates and the block's would add them in turn. */
static inline __attribute__((always_inline)) void body_update_n(int p, int m, const double *X,
                                                                const double *T, double *a0) {
  const double *restrict x0 = X, *restrict x1 = X + p, *restrict x2 = X + 2 * (size_t)p;
  const double *restrict t0 = T, *restrict t1 = T + p, *restrict t2 = T + 2 * (size_t)p;
  const v2d z = {0.0, 0.0};
  for (int c = 0; c < p; c++) {
    const double c0 = x0[c], c1 = x1[c], c2 = x2[c], d0 = t0[c], d1 = t1[c], d2 = t2[c];
    const v2d C0 = bc2(c0), C1 = bc2(c1), C2 = bc2(c2), D0 = bc2(d0), D1 = bc2(d1),
              D2 = bc2(d2);
    double *restrict ac = a0 + (size_t)c * m;
    int r = 0;
    for (; r < c; r += 2) { /* rows r and r + 1 (<= c) */
      v2d a = ld2(ac + r);
      a += ld2(t0 + r) * D0;
      a += ld2(t1 + r) * D1;
      a += ld2(t2 + r) * D2;
      v2d v = z + ld2(x0 + r) * C0;
      v += ld2(x1 + r) * C1;
      v += ld2(x2 + r) * C2;
      st2(ac + r, a + v);
    }
    if (r == c) {
      double a = ac[r];
      a += t0[r] * d0;
      a += t1[r] * d1;
      a += t2[r] * d2;
      double v = 0.0;
      v += x0[r] * c0;
      v += x1[r] * c1;
      v += x2[r] * c2;
      ac[r] = a + v;
    }
  }
}

/* Blocks kb, kb + 1, kb + 2 single dofs and kb + 3 a 3-dof block on
 * contiguous columns (a free body: its translations, then its rotation):
 * when the single dofs' columns are among the block's and dense enough
 * that one pass over the block's triangle costs less than theirs, each
 * single dof's row of X = L^-1 G on the block's columns goes to T (3 p
 * doubles, zeros included) and its terms of b are added, and 1 is
 * returned: the block's update then adds T's products first
 * (body_update_n). Bit for bit: a product with a zero of x is +-0, and A
 * and b, which start at +0 and so are never -0 (round to nearest), are
 * unchanged by it; the products with nonzeros come in the same order per
 * entry. colmin is the block's (a subset's first column is not smaller).
 * Not taken when a value is not finite (inf 0 would be NaN). */
static int body_translations(cp_contact_space *cs, int kb, const int *colv, const int *ncol,
                             int by_col, double *T) {
  const int nu = cs->nu, nc = cs->nc, m = 3 * nc, kr = kb + 3;
  const int *bs = cs->bstart;
  if (kr >= cs->nblocks || bs[kb + 1] - bs[kb] != 1 || bs[kb + 2] - bs[kb + 1] != 1 ||
      bs[kb + 3] - bs[kb + 2] != 1 || bs[kr + 1] - bs[kr] != 3)
    return 0;
  const int p = ncol[kr], *cols = colv + (size_t)kr * m;
  if (p < 3 || cols[p - 1] - cols[0] != p - 1) return 0;
  const int c0 = cols[0], i[3] = {cs->free_idx[bs[kb]], cs->free_idx[bs[kb + 1]],
                                  cs->free_idx[bs[kb + 2]]};
  /* A quick look first: the block's last contact's columns (a box on a
   * table with axis-aligned frames has its translations in a third of
   * them: the pass would cost more). */
  int last = 0;
  for (int t = 0; t < 3; t++) {
    const double *g = cs->G + i[t] + (size_t)(c0 + p - 3) * nu;
    last += (g[0] != 0.0) + (g[nu] != 0.0) + (g[2 * (size_t)nu] != 0.0);
  }
  if (2 * last < 9) return 0;
  /* The single dofs' columns among the block's: their lists' lengths (by
   * column), or with the contacts' row ranges, every contact whose rows
   * hold one of the dofs has its three columns in the block's run; else
   * their nonzeros are counted. */
  int nz[3] = {0, 0, 0};
  const int proved = cs->range && !by_col;
  if (by_col) {
    for (int t = 0; t < 3; t++) nz[t] = ncol[kb + t];
  } else if (proved) {
    for (int j = 0; j < nc; j++) {
      int rr[4];
      col_rows(cs, 3 * j, rr);
      for (int t = 0; t < 3; t++) {
        const int in = (i[t] >= rr[0] && i[t] < rr[1]) || (i[t] >= rr[2] && i[t] < rr[3]);
        if (in && (3 * j < c0 || 3 * j + 2 > c0 + p - 1)) return 0;
      }
    }
  } else {
    for (int j = 0; j < nc; j++)
      for (int t = 0; t < 3; t++) {
        const double *g = cs->G + i[t] + (size_t)(3 * j) * nu;
        nz[t] += (g[0] != 0.0) + (g[nu] != 0.0) + (g[2 * (size_t)nu] != 0.0);
      }
  }
  double y[3], d[3];
  for (int t = 0; t < 3; t++) {
    d[t] = cs->L[cs->loff[kb + t]];
    y[t] = free_rhs(cs, i[t]) / d[t];
  }
  double *restrict x0 = T, *restrict x1 = T + p, *restrict x2 = T + 2 * (size_t)p;
  int n[3] = {0, 0, 0};
  double chk = 0.0 * y[0] + 0.0 * y[1] + 0.0 * y[2]; /* NaN when one is not finite */
  for (int c = 0; c < p; c++) {
    const double *g = cs->G + (size_t)(c0 + c) * nu;
    const double v0 = g[i[0]] / d[0], v1 = g[i[1]] / d[1], v2 = g[i[2]] / d[2];
    x0[c] = v0, x1[c] = v1, x2[c] = v2;
    n[0] += v0 != 0.0, n[1] += v1 != 0.0, n[2] += v2 != 0.0;
    chk += (0.0 * v0 + 0.0 * v1) + 0.0 * v2;
  }
  if (chk != 0.0) return 0;
  long cost = 0;
  for (int t = 0; t < 3; t++) {
    if (!proved && n[t] != nz[t]) return 0; /* (a column of its own) */
    cost += (long)n[t] * (n[t] + 1);
  }
  if (cost <= (long)p * (p + 1)) return 0;
  double *restrict b = cs->b + c0;
  for (int c = 0; c < p; c++) {
    double v = b[c];
    v += x0[c] * y[0];
    v += x1[c] * y[1];
    v += x2[c] * y[2];
    b[c] = v;
  }
  return 1;
}

/* cols[0..p) (increasing) as an arithmetic progression of step 1 or 3:
 * that step, or 0 (none of them). */
static int dof_step(int p, const int *cols) {
  if (p < 2) return 0;
  const int st = cols[1] - cols[0];
  if (st == 1) return cols[p - 1] - cols[0] == p - 1; /* increasing: contiguous */
  if (st != 3 || cols[p - 1] - cols[0] != 3 * (p - 1)) return 0;
  for (int c = 2; c < p; c++)
    if (cols[c] - cols[c - 1] != 3) return 0;
  return 3;
}

/* Bytes of a build's scratch (below) before colmin, for nu1, m1 >= 1. */
static size_t scratch_size(size_t nu1, size_t m1) {
  return sizeof(double) * (nu1 * m1 + m1 + nu1) + sizeof(int) * (6 * (nu1 + 1) + nu1 * m1);
}

/* The kept scratch of a rebuild: scratch_size, then colmin [m1], the
 * lists (pattern_ints), the last footprint's colmin [m1] and the lists'
 * key (pattern_key_ints) (below). */
static size_t kept_scratch_size(size_t nu1, size_t m1) {
  return scratch_size(nu1, m1) +
         sizeof(int) * (2 * m1 + pattern_ints(nu1, m1) + pattern_key_ints(nu1, m1));
}

/* The doubles of the result's block before its indices: A, b, then the
 * blocks' factors (ltot: the sum of their squared sizes). */
static size_t own_doubles(size_t m1, size_t ltot) { return m1 * m1 + m1 + (ltot > 0 ? ltot : 1); }

/* Bytes of the result's block: those doubles, then loff [nu1], free_idx
 * [nu1] and bstart [nu1 + 1]. */
static size_t own_size(size_t nu1, size_t m1, size_t ltot) {
  return sizeof(double) * own_doubles(m1, ltot) + sizeof(size_t) * nu1 +
         sizeof(int) * (2 * nu1 + 1);
}

int cp_contact_space_reserve(cp_contact_space *cs, int nu, int nc, size_t ltot) {
  if (nu < 0 || nc < 0) return -1;
  const size_t nu1 = (size_t)(nu > 0 ? nu : 1), m1 = (size_t)(3 * nc > 0 ? 3 * nc : 1);
  const size_t own = own_size(nu1, m1, ltot), keep = kept_scratch_size(nu1, m1);
  /* The result's block (kept zeroed beyond own_dirty), then the scratch. */
  void *blk[2] = {cs->A, cs->scratch};
  size_t *cap[2] = {&cs->own_cap, &cs->scratch_cap};
  const size_t need[2] = {own, keep};
  int grown = 0;
  for (int i = 0; i < 2; i++) {
    if (blk[i] && *cap[i] >= need[i]) continue;
    blk[i] = i ? cp_bigbuf_regrow(blk[i], need[i])
               : cp_bigbuf_regrow_zeroed(blk[i], need[i], &cs->own_dirty);
    if (!blk[i]) { /* (the old block is gone) */
      cp_bigbuf_free(blk[1 - i]);
      memset(cs, 0, sizeof *cs);
      return -2;
    }
    *cap[i] = cp_bigbuf_size(blk[i]);
    grown = 1;
  }
  cs->A = blk[0];
  cs->scratch = blk[1];
  if (grown) {
    /* What a rebuild would take from the old blocks (the last footprint,
     * in the scratch; the blocks of H_FF, in both) may be gone: it clears
     * A up to own_dirty instead and finds the blocks again. */
    cs->fp_kept = 0;
    cs->hpat_ok = 0;
  }
  /* No result any more: only the blocks, for the next rebuild. */
  cs->b = cs->L = NULL;
  cs->loff = NULL;
  cs->free_idx = cs->bstart = NULL;
  cp_bigbuf_touch(cs->A, own);
  cp_bigbuf_touch(cs->scratch, keep);
  return 0;
}

static int build_space(int nu, int nc, const double *H, const double *G,
                       const double *f, const double *k,
                       const unsigned char *driven, const double *udot_driven,
                       const cp_contact_sparsity *sp, cp_contact_space *cs, int reuse) {
  void *own_keep = cs->A, *scratch_keep = cs->scratch;
  size_t own_cap = cs->own_cap, scratch_cap = cs->scratch_cap, own_dirty = cs->own_dirty;
  /* The previous build's sizes: with the same ones its A (zero outside its
   * footprint, colmin) is cleared on that footprint only (below). */
  const int prev_nu = own_keep ? cs->nu : -1, prev_nc = own_keep ? cs->nc : -1;
  /* A large previous rebuild's A is zero outside its footprint (its colmin,
   * in its scratch block): it is cleared on that footprint now, in its own
   * layout, with its b, whatever the new sizes (boxes settling in a bin
   * change their number of contacts nearly every step, and clearing a new
   * A whole was most of such a step); the block then reads zero on its
   * first zero_to bytes. */
  size_t zero_to = 0;
  /* The kept scratch: its temporaries (scratch_size), then colmin [m1],
   * the lists (pattern_ints) and the last footprint's colmin [m1] while
   * its lower triangle waits for the end of the build (defer). */
  const size_t nu1 = (size_t)(nu > 0 ? nu : 1), m1 = (size_t)(3 * nc > 0 ? 3 * nc : 1);
  const size_t scratch_bytes = scratch_size(nu1, m1);
  const size_t keep_bytes = kept_scratch_size(nu1, m1);
  int defer = 0;
  if (reuse && own_keep && cs->fp_kept && scratch_keep) {
    const size_t pm1 = 3 * (size_t)prev_nc, pn1 = (size_t)(prev_nu > 0 ? prev_nu : 1);
    if (pm1 > 0) {
      const int *pcolmin = (const int *)((const char *)scratch_keep + scratch_size(pn1, pm1));
      const int *ppat = pcolmin + pm1;
      /* The same sizes: the same layout of A and of the kept scratch. */
      defer = ppat[0] < 0 && prev_nu == nu && prev_nc == nc && scratch_cap >= keep_bytes;
      if (ppat[0] >= 0) clear_pattern((int)pm1, ppat, own_keep);
      else if (!defer) clear_footprint((int)pm1, pcolmin, own_keep);
      else {
        clear_upper((int)pm1, pcolmin, own_keep);
        memcpy((int *)ppat + pattern_ints(pn1, pm1), pcolmin, sizeof(int) * pm1);
      }
      memset((double *)own_keep + pm1 * pm1, 0, sizeof(double) * pm1);
      zero_to = sizeof(double) * (pm1 * pm1 + pm1);
    }
  }
  /* The previous rebuild's blocks of H_FF (free_idx, bstart, loff in the
   * kept block; size in the scratch), valid for the same sizes, no dof
   * driven and the same pattern of H. */
  const int prev_pat_ok = own_keep && cs->hpat_ok, prev_nf = cs->nfree, prev_nb = cs->nblocks,
            prev_fp_kept = own_keep && cs->fp_kept;
  const uint64_t prev_pat = cs->hpat;
  memset(cs, 0, sizeof *cs);
  /* No dof driven is the same as no mask, and the loops over the mask
   * (nu per contact column and per free dof) were a tenth of a stack's
   * build. */
  if (driven) {
    int any = 0;
    for (int i = 0; i < nu && !any; i++) any = driven[i];
    if (!any) driven = NULL;
  }
  const int m = 3 * nc;
  cs->nu = nu;
  cs->nc = nc;
  cs->H = H;
  cs->G = G;
  cs->f = f;
  cs->k = k;
  cs->driven = driven;
  cs->udot_driven = udot_driven;
  cs->range = sp ? sp->range : NULL;
  /* One scratch allocation for every temporary (a planner forms thousands
   * of these; at a body's size the allocator's calls were a fifth of the
   * time): doubles X [nu m + m], y [nu]; ints free_list, parent, blk,
   * size, fill, ncol [nu + 1 each] and colv [nu m]. */
  const size_t nd = nu1 * m1 + m1 + nu1;
  /* Small problems (a few bodies) take their scratch from the stack. */
  double stack_scratch[512];
  /* Reused: scratch, colmin, ... in the kept block (keep_bytes, above). */
  const int scratch_kept = scratch_keep && scratch_cap >= keep_bytes; /* colmin kept */
  double *scratch = reuse ? keep_block(&scratch_keep, &scratch_cap, keep_bytes)
                    : scratch_bytes <= sizeof stack_scratch ? stack_scratch
                                                            : cp_bigbuf_alloc(scratch_bytes);
  if (!scratch) { cp_bigbuf_free(own_keep); return -2; }
  cs->scratch = reuse ? scratch_keep : NULL;
  cs->scratch_cap = reuse ? scratch_cap : 0;
  double *X = scratch, *y = X + nu1 * m1 + m1;
  int colmin_stack[128];
  int *colmin = reuse ? (int *)((char *)scratch + scratch_bytes)
                : m <= 128 ? colmin_stack : malloc(sizeof(int) * m1);
  if (!colmin) { if (scratch != stack_scratch) cp_bigbuf_free(scratch); return -2; }
  int *free_list = (int *)(scratch + nd), *parent = free_list + nu1 + 1, *blk = parent + nu1 + 1,
      *size = blk + nu1 + 1, *fill = size + nu1 + 1, *ncol = fill + nu1 + 1,
      *colv = ncol + nu1 + 1;
  int rc = -2;

  const int use_pat = reuse && !driven && nu <= CP_CONTACT_SPACE_PAT_NU;
  const uint64_t pat = use_pat ? h_pattern(nu, H) : 0;
  const int same_blocks = use_pat && prev_pat_ok && scratch_kept && prev_nu == nu &&
                          prev_nc == nc && prev_pat == pat;
  int nf = 0, nb = 0;
  size_t ltot = 0;
  if (same_blocks) {
    nf = prev_nf;
    nb = prev_nb;
    for (int kb = 0; kb < nb; kb++) ltot += (size_t)size[kb] * (size_t)size[kb];
    goto blocks_known;
  }
  for (int i = 0; i < nu; i++)
    if (!driven || !driven[i]) free_list[nf++] = i;
  /* The diagonal blocks of H_FF: connected components of its nonzero
   * pattern (union-find; each root is its component's smallest member, so
   * blocks come in order of their first dof, dofs increasing within). */
  for (int a = 0; a < nf; a++) parent[a] = a;
  /* With H's blocks known, column b is scanned from a0: the first free dof
   * of dof free_list[b]'s block (the rows above are zeros). */
  const int *hblk = sp && sp->block ? sp->block : NULL;
  for (int b = 1, hb = 0, a0 = 0; b < nf; b++) { /* upper triangle, column by column */
    const double *Hb = H + (size_t)free_list[b] * nu;
    if (hblk) {
      while (free_list[b] >= hblk[hb + 1]) hb++;
      while (free_list[a0] < hblk[hb]) a0++;
    }
    for (int a = a0; a < b; a++) {
      if (!driven && a + 4 <= b && zero4(Hb + a)) { /* (no mask: dof a is free a) */
        a += 3;
        continue;
      }
      if ((driven ? Hb[free_list[a]] : Hb[a]) != 0.0) {
        int ra = uf_find(parent, a), rb = uf_find(parent, b);
        if (ra != rb) parent[ra > rb ? ra : rb] = ra < rb ? ra : rb;
      }
    }
  }
  for (int a = 0; a < nf; a++) blk[a] = uf_find(parent, a) == a ? nb++ : -1;
  for (int a = 0; a < nf; a++) blk[a] = blk[uf_find(parent, a)];
  for (int kb = 0; kb < nb; kb++) size[kb] = fill[kb] = 0;
  for (int a = 0; a < nf; a++) size[blk[a]]++;
  for (int kb = 0; kb < nb; kb++) ltot += (size_t)size[kb] * (size_t)size[kb];
blocks_known:
  cs->nfree = nf;
  cs->nblocks = nb;

  /* What the result owns, in one allocation too: A, b, L, loff, free_idx,
   * bstart (cp_contact_space_free releases cs->A, the start of it). */
  const size_t od = own_doubles(m1, ltot);
  /* Only A's upper triangle (with the diagonal) is accumulated, and the
   * lower one mirrored at the end; colmin[c] is the first row of column c
   * that can be nonzero (A is sparse when contacts touch few bodies). */
  const size_t own_bytes = own_size(nu1, m1, ltot);
  double *own;
  if (reuse) {
    /* Only A and b accumulate; L, loff, free_idx and bstart are written in
     * full below. A large previous A was cleared on its footprint above
     * (a stack of 100 boxes' A is 11 MB, of which a few per cent is
     * written): only what the new A and b reach beyond it is cleared. */
    /* The kept block is zero on its first zero_to bytes (cleared above)
     * and beyond own_dirty (never written since it was zeroed): only the
     * rest of what A and b cover is cleared. A new block is all zeros. */
    own = keep_zeroed(&own_keep, &own_cap, &own_dirty, own_bytes);
    const size_t ab = sizeof(double) * (m1 * m1 + m1);
    const size_t ab_dirty = ab < own_dirty ? ab : own_dirty;
    if (own && ab_dirty > zero_to) memset((char *)own + zero_to, 0, ab_dirty - zero_to);
    /* What this build writes lies below own_bytes (A and b, then L and the
     * indices); what lay beyond A and b before is still there when A and b
     * stop short of it. */
    own_dirty = ab >= own_dirty || own_bytes > own_dirty ? own_bytes : own_dirty;
    cs->own_cap = own_cap;
    cs->own_dirty = own_dirty;
  } else {
    own = cp_bigbuf_calloc(own_bytes);
  }
  if (!own) goto out;
  /* colmin (the footprint) only where A is cleared on it: from
   * CP_CONTACT_SPACE_SPARSE_M rows; a smaller A was zeroed whole and is
   * mirrored whole. */
  const int track = m >= CP_CONTACT_SPACE_TRACK_M;
  if (track)
    for (int c = 0; c < m; c++) colmin[c] = c;
  cs->A = own;
  cs->b = own + m1 * m1;
  cs->L = cs->b + m1;
  cs->loff = (size_t *)(own + od);
  cs->free_idx = (int *)(cs->loff + nu1);
  cs->bstart = cs->free_idx + nu1;
  if (!same_blocks) { /* (else kept from the previous rebuild, same layout) */
    cs->bstart[0] = 0;
    for (int kb = 0, acc = 0; kb < nb; kb++) {
      cs->bstart[kb + 1] = cs->bstart[kb] + size[kb];
      cs->loff[kb] = (size_t)acc;
      acc += size[kb] * size[kb];
    }
    for (int a = 0; a < nf; a++) cs->free_idx[cs->bstart[blk[a]] + fill[blk[a]]++] = free_list[a];
  }
  for (int kb = 0; kb < nb; kb++) {
    const int sz = size[kb], *idx = cs->free_idx + cs->bstart[kb];
    double *Lk = cs->L + cs->loff[kb];
    if (sz == 1) { /* a single dof (H diagonal there): its square root */
      Lk[0] = H[idx[0] + (size_t)idx[0] * nu];
      if (chol_lower(1, Lk) != 0) { rc = -1; goto out; }
      continue;
    }
    if (sz == 3) /* a body's rotational block */
      for (int c = 0; c < 3; c++)
        for (int r = 0; r < 3; r++) Lk[r + (size_t)c * 3] = H[idx[r] + (size_t)idx[c] * nu];
    else
      for (int c = 0; c < sz; c++)
        for (int r = 0; r < sz; r++) Lk[r + (size_t)c * sz] = H[idx[r] + (size_t)idx[c] * nu];
    if (chol_lower(sz, Lk) != 0) { rc = -1; goto out; }
  }

  /* The contact columns each multi-dof block's dofs appear in (nonzero in
   * some row of the block), found column by column, so each list comes out
   * in increasing order. H is often diagonal (a box's m I3 and
   * principal-axis inertia), so blocks may be single dofs: those are
   * gathered row by row below. Block kb's columns are
   * colv[kb * m .. kb * m + ncol[kb]). */
  const int by_col = m >= CP_CONTACT_SPACE_SPARSE_M;
  if (by_col) {
    /* Large problems: every block's list, single dofs' too, in one pass
     * down G's columns (contiguous; runs of zeros skipped four at a time),
     * not block by block across them (a stride of nu: at 100 boxes most
     * of the build). The same lists. parent[] is free now: dof i's block,
     * or -1 (driven). */
    int *dblk = parent;
    for (int i = 0; i < nu; i++) dblk[i] = -1;
    for (int kb = 0; kb < nb; kb++) {
      ncol[kb] = 0;
      for (int r = cs->bstart[kb]; r < cs->bstart[kb + 1]; r++) dblk[cs->free_idx[r]] = kb;
    }
    for (int j = 0; j < nc; j++) {
      /* A contact's three columns have the same rows (its ranges), and
       * whether a range is a free body's six rows (below) is found once
       * for the three; the columns, and the lists, in the same order. */
      int rr[4], body[2];
      col_rows(cs, 3 * j, rr);
      for (int h = 0; h < 4; h += 2) {
        const int lo = rr[h];
        body[h / 2] = rr[h + 1] - lo == 6 && dblk[lo + 3] >= 0 && dblk[lo + 4] == dblk[lo + 3] &&
                      dblk[lo + 5] == dblk[lo + 3];
      }
      for (int c = 3 * j; c < 3 * j + 3; c++) {
        const double *g = G + (size_t)c * nu;
        for (int h = 0; h < 4; h += 2) {
          const int lo = rr[h], hi = rr[h + 1];
          if (body[h / 2]) {
            /* A free body's six rows whose last three are one block (its
             * rotational one): the first three each on their own, the block
             * once for the three. The same lists as the loop below. */
            const double *gl = g + lo;
            for (int t = 0; t < 3; t++) {
              const int kb = dblk[lo + t];
              if (kb >= 0 && gl[t] != 0.0) list_col(colv, ncol, m, kb, c);
            }
            if ((gl[3] != 0.0) | (gl[4] != 0.0) | (gl[5] != 0.0))
              list_col(colv, ncol, m, dblk[lo + 3], c);
            continue;
          }
          for (int i = lo; i < hi; i++) {
            if (i + 4 <= hi && zero4(g + i)) {
              i += 3;
              continue;
            }
            const int kb = dblk[i];
            if (kb >= 0 && g[i] != 0.0) list_col(colv, ncol, m, kb, c);
          }
        }
      }
    }
  } else {
    for (int kb = 0; kb < nb; kb++) {
      const int sz = size[kb], *idx = cs->free_idx + cs->bstart[kb];
      int *cv = colv + (size_t)kb * m, n = 0;
      if (sz == 3) { /* a body's rotational block: its three rows at once */
        const double *g0 = G + idx[0], *g1 = G + idx[1], *g2 = G + idx[2];
        for (int c = 0; c < m; c++) {
          const size_t o = (size_t)c * nu;
          if ((g0[o] != 0.0) | (g1[o] != 0.0) | (g2[o] != 0.0)) cv[n++] = c;
        }
      } else if (sz > 1)
        for (int c = 0; c < m; c++) {
          const double *g = G + (size_t)c * nu;
          for (int r = 0; r < sz; r++)
            if (g[idx[r]] != 0.0) { cv[n++] = c; break; }
        }
      ncol[kb] = n;
    }
  }
  /* A free body's translations, when taken with its rotation (below):
   * their rows of X on its block's columns, after the block's 4 p. */
  double *trans = NULL;
  for (int kb = 0; kb < cs->nblocks; kb++) {
    const int s = cs->bstart[kb + 1] - cs->bstart[kb], *idx = cs->free_idx + cs->bstart[kb];
    const double *Lk = cs->L + cs->loff[kb];
    if (s == 1 && !driven) {
      double *T = X + 4 * (size_t)ncol[kb + 3 < cs->nblocks ? kb + 3 : kb];
      if (kb + 3 < cs->nblocks && body_translations(cs, kb, colv, ncol, by_col, T)) {
        trans = T;
        kb += 2; /* to the rotation's block */
        continue;
      }
    }
    if (s == 1) {
      /* A single dof i (H diagonal there, as for a free box): its row of
       * X = L^-1 G is G[i, :] / L_ii, gathered on its nonzeros (increasing
       * columns), and A gets that row's outer product: upper triangle only. */
      const int i = idx[0];
      const double d = Lk[0], yi = free_rhs(cs, i) / d;
      double *x = X;
      int *cols = colv, p = 0;
      if (by_col) { /* its list from the pass above */
        cols = colv + (size_t)kb * m;
        for (p = 0; p < ncol[kb]; p++) x[p] = G[i + (size_t)cols[p] * nu] / d;
      } else
      for (int j = 0; j < nc; j++) { /* by contact: most rows touch few */
        const double *g = G + i + (size_t)(3 * j) * nu;
        const double g0 = g[0], g1 = g[nu], g2 = g[2 * (size_t)nu];
        if (g0 != 0.0) { x[p] = g0 / d; cols[p++] = 3 * j; }
        if (g1 != 0.0) { x[p] = g1 / d; cols[p++] = 3 * j + 1; }
        if (g2 != 0.0) { x[p] = g2 / d; cols[p++] = 3 * j + 2; }
      }
      for (int c = 0; track && c < p; c++)
        if (cols[0] < colmin[cols[c]]) colmin[cols[c]] = cols[0];
      const int st = dof_step(p, cols);
      if (st) {
        for (int c = 0; c < p; c++) cs->b[cols[c]] += x[c] * yi;
        double *a0 = cs->A + (size_t)cols[0] * m + cols[0];
        if (st == 1) dof_update_n(1, p, m, x, a0);
        else dof_update_n(3, p, m, x, a0);
        continue;
      }
      for (int c = 0; c < p; c++) {
        const double xc = x[c];
        double *Ac = cs->A + (size_t)cols[c] * m;
        cs->b[cols[c]] += xc * yi;
        for (int r = 0; r <= c; r++) Ac[cols[r]] += x[r] * xc;
      }
      continue;
    }
    const int p = ncol[kb];
    const int *cols = colv + (size_t)kb * m;
    for (int r = 0; r < s; r++) y[r] = free_rhs(cs, idx[r]);
    lower_solve(s, Lk, y);
    if (p == 0) continue;
    /* X = L^-1 G[block, cols], stored by rows (row t at X + t p) so that
     * each step below runs along contiguous columns: forward substitution
     * for all columns at once, then per column c of A the products with
     * every r <= c. Each entry gets exactly the operations, in the order,
     * of a column-by-column substitution and dot product. */
    if (s == 3) { /* a body's rotational block: unrolled, the same operations */
      const double l0 = Lk[0], l1 = Lk[1], l2 = Lk[2], l4 = Lk[4], l5 = Lk[5], l8 = Lk[8];
      const double *g0 = G + idx[0], *g1 = G + idx[1], *g2 = G + idx[2];
      double *restrict x0 = X, *restrict x1 = X + p, *restrict x2 = X + 2 * (size_t)p;
      const v2d L0 = bc2(l0), L1 = bc2(l1), L2 = bc2(l2), L4 = bc2(l4), L5 = bc2(l5),
                L8 = bc2(l8), Y0 = bc2(y[0]), Y1 = bc2(y[1]), Y2 = bc2(y[2]), z = {0.0, 0.0};
      /* Two columns at a time (v2d; an odd last column in both lanes):
       * per lane the operations of one column, in its order. */
      for (int c = 0; c < p; c += 2) {
        const int two = c + 1 < p;
        const size_t o = (size_t)cols[c] * nu, q = (size_t)cols[c + two] * nu;
        v2d v0 = {g0[o], g0[q]}, v1 = {g1[o], g1[q]}, v2 = {g2[o], g2[q]};
        v0 = v0 / L0;
        v1 -= L1 * v0;
        v1 = v1 / L4;
        v2 -= L2 * v0;
        v2 -= L5 * v1;
        v2 = v2 / L8;
        v2d bc = z + v0 * Y0;
        bc += v1 * Y1;
        bc += v2 * Y2;
        cs->b[cols[c]] += bc[0];
        if (two) {
          st2(x0 + c, v0), st2(x1 + c, v1), st2(x2 + c, v2);
          cs->b[cols[c + 1]] += bc[1];
        } else {
          x0[c] = v0[0], x1[c] = v1[0], x2[c] = v2[0];
        }
      }
    } else {
      for (int t = 0; t < s; t++) {
        double *restrict xt = X + (size_t)t * p;
        const double *g = G + idx[t];
        for (int c = 0; c < p; c++) xt[c] = g[(size_t)cols[c] * nu];
      }
      for (int t = 0; t < s; t++) {
        double *restrict xt = X + (size_t)t * p;
        for (int u = 0; u < t; u++) {
          const double *restrict xu = X + (size_t)u * p;
          const double l = Lk[t + (size_t)u * s];
          for (int c = 0; c < p; c++) xt[c] -= l * xu[c];
        }
        const double d = Lk[t + (size_t)t * s];
        for (int c = 0; c < p; c++) xt[c] = xt[c] / d;
      }
      for (int c = 0; c < p; c++) {
        double bc = 0.0;
        for (int t = 0; t < s; t++) bc += X[(size_t)t * p + c] * y[t];
        cs->b[cols[c]] += bc;
      }
    }
    /* cols is increasing: cols[0] is the first row any of them meets. */
    for (int c = 0; track && c < p; c++)
      colmin[cols[c]] = cols[0] < colmin[cols[c]] ? cols[0] : colmin[cols[c]];
    double *restrict acc = X + (size_t)s * p; /* p entries */
    const int contiguous = cols[p - 1] - cols[0] == p - 1;
    if (s == 3 && contiguous) { /* a body's rotational block: fused */
      double *a0 = cs->A + (size_t)cols[0] * m + cols[0];
      if (trans) body_update_n(p, m, X, trans, a0); /* its translations first */
      else if (p == 12 && m == 12) rot_update_n(12, 12, X, a0); /* a box on four points */
      else rot_update_n(p, m, X, a0);
      trans = NULL;
      continue;
    }
    if (s == 3) { /* the same, on gathered columns (a box in a bin) */
      rot_update_gather(p, m, X, cols, cs->A);
      continue;
    }
    for (int c = 0; c < p; c++) {
      double *Ac = cs->A + (size_t)cols[c] * m;
      const double x0c = X[c];
      for (int r = 0; r <= c; r++) acc[r] = 0.0 + X[r] * x0c;
      for (int t = 1; t < s; t++) {
        const double *restrict xt = X + (size_t)t * p;
        const double xc = xt[c];
        for (int r = 0; r <= c; r++) acc[r] += xt[r] * xc;
      }
      if (contiguous) {
        double *restrict a0 = Ac + cols[0];
        for (int r = 0; r <= c; r++) a0[r] += acc[r];
      } else {
        for (int r = 0; r <= c; r++) Ac[cols[r]] += acc[r];
      }
    }
  }
  if (!driven && k) { /* (the same sums, the tests hoisted) */
    for (int c = 0; c < m; c++) cs->b[c] += k[c];
  } else {
    for (int c = 0; c < m; c++) {
      double s = k ? k[c] : 0.0;
      int rr[4];
      col_rows(cs, c, rr);
      for (int h = 0; driven && h < 4; h += 2)
        for (int i = rr[h]; i < rr[h + 1]; i++)
          if (driven[i]) s += G[i + (size_t)c * nu] * udot_driven[i];
      cs->b[c] += s;
    }
  }
  if (track) {
    /* The lower triangle from the upper, on the smaller footprint: colmin's
     * or the lists' (kept for the next build's clear). The last build's
     * lower triangle (defer) is zeroed first where this mirror will not
     * write. */
    int *pat = colmin + m1;
    const int *old = defer ? pat + pattern_ints(nu1, m1) : NULL;
    /* The last build's lists' key: its block of the kept scratch when it
     * had these sizes (the same layout) and built the lists or their cost
     * (reuse, m at least CP_CONTACT_SPACE_SPARSE_M: fp_kept). Its lists
     * are still in pat when it took them (pat[0] >= 0); when it did not,
     * and they would be taken now, they are made again. */
    int *key = pat + pattern_ints(nu1, m1) + m1;
    const int big = reuse && m >= CP_CONTACT_SPACE_SPARSE_M && cs->range && nu > 0;
    const long fcost = fcost_of(m, colmin);
    long pcost = -1;
    if (big) {
      const int kept = prev_fp_kept && scratch_kept && prev_nu == nu && prev_nc == nc &&
                       pattern_key_same(cs, key, &pcost);
      if (!kept || (pat[0] < 0 && pcost >= 0 && 9 * pcost < 2 * fcost)) {
        pcost = pattern_lists(cs, blk, fill, pat);
        pattern_key_save(cs, key, pcost);
      }
    }
    if (pcost >= 0 && 9 * pcost < 2 * fcost) {
      if (old) lower_rest(m, old, NULL, cs->A);
      mirror_pattern(m, pat, cs->A);
      cs->fp_lists = 1;
    } else {
      if (reuse) pat[0] = -1;
      if (old) lower_rest(m, old, colmin, cs->A);
      mirror_colmin(m, colmin, cs->A);
    }
  } else {
    mirror_full(m, cs->A);
  }
  cs->hpat = pat;
  cs->hpat_ok = use_pat;
  cs->fp_kept = reuse && track;
  rc = 0;
out:
  if (!reuse) {
    if (scratch != stack_scratch) cp_bigbuf_free(scratch);
    if (colmin != colmin_stack) free(colmin);
  }
  if (rc) cp_contact_space_free(cs);
  return rc;
}

/* v + sum_j G[i, j] c[j] (j increasing) along dof i's row g = G + i (a
 * stride of nu); a single box's four contacts (nu = 6, m = 12) with the
 * sizes constants. */
static inline __attribute__((always_inline)) double gdot_n(int nu, int m, const double *g,
                                                           const double *c, double v) {
  for (int j = 0; j < m; j++) v += g[(size_t)j * nu] * c[j];
  return v;
}

static double gdot(int nu, int m, const double *g, const double *c, double v) {
  if (nu == 6 && m == 12) return gdot_n(6, 12, g, c, v);
  return gdot_n(nu, m, g, c, v);
}

int cp_contact_space_accel(const cp_contact_space *cs, const double *c,
                           double *udot, double *tau_driven) {
  const int nu = cs->nu, m = 3 * cs->nc;
  double stack_rhs[256]; /* a simulator calls this a few times per step */
  /* Large problems: f + G c accumulated for every dof in one pass down G's
   * columns (contiguous) instead of along each dof's row (a stride of nu:
   * at 100 boxes most of this function; with the constraints' dof ranges
   * known, from 48 rows: a stack of 5 boxes' dofs each meet a fifth of
   * its columns; at 3 boxes the rows' passes cost less). Each dof's sum
   * gets the same terms in the same order (j increasing): the same bits. */
  const int by_col = m >= CP_CONTACT_SPACE_SPARSE_M || (cs->range && m >= 48);
  const size_t nrhs = (size_t)nu * (by_col ? 2 : 1);
  double *rhs = nrhs <= 256 ? stack_rhs : malloc(sizeof(double) * nrhs);
  if (!rhs) return -2;
  double *acc = rhs + nu; /* by_col: f + G c of dof i at acc[i] */
  for (int i = 0; i < nu; i++) udot[i] = cs->driven && cs->driven[i] ? cs->udot_driven[i] : 0.0;
  if (by_col) {
    for (int i = 0; i < nu; i++) acc[i] = 0.0;
    for (int a = 0; a < cs->nfree; a++) acc[cs->free_idx[a]] = free_rhs(cs, cs->free_idx[a]);
    /* A contact's three columns have the same rows; each range's rows
     * are taken two at a time (v2d: the same product and add per row). */
    for (int j = 0; j < m; j += 3) {
      int rr[4];
      col_rows(cs, j, rr);
      for (int t = j; t < j + 3; t++) {
        const double *restrict g = cs->G + (size_t)t * nu, cj = c[t];
        const v2d cv = bc2(cj);
        for (int h = 0; h < 4; h += 2) {
          int i = rr[h];
          for (; i + 1 < rr[h + 1]; i += 2) st2(acc + i, ld2(acc + i) + ld2(g + i) * cv);
          if (i < rr[h + 1]) acc[i] += g[i] * cj;
        }
      }
    }
  }
  for (int kb = 0; kb < cs->nblocks; kb++) {
    const int s = cs->bstart[kb + 1] - cs->bstart[kb], *idx = cs->free_idx + cs->bstart[kb];
    if (by_col)
      for (int r = 0; r < s; r++) rhs[r] = acc[idx[r]];
    else
      for (int r = 0; r < s; r++) rhs[r] = gdot(nu, m, cs->G + idx[r], c, free_rhs(cs, idx[r]));
    lower_solve(s, cs->L + cs->loff[kb], rhs);
    lower_t_solve(s, cs->L + cs->loff[kb], rhs);
    for (int r = 0; r < s; r++) udot[idx[r]] = rhs[r];
  }
  if (tau_driven) {
    for (int i = 0; i < nu; i++) {
      tau_driven[i] = 0.0;
      if (!cs->driven || !cs->driven[i]) continue;
      /* Row i of (E1) solved for the effort it lacks. */
      double s = -cs->f[i];
      for (int j = 0; j < nu; j++) s += cs->H[i + (size_t)j * nu] * udot[j];
      for (int j = 0; j < m; j++) s -= cs->G[i + (size_t)j * nu] * c[j];
      tau_driven[i] = s;
    }
  }
  if (rhs != stack_rhs) free(rhs);
  return 0;
}

/* Singular values (descending) of an r x c matrix, copied; sv [min(r, c)]. */
static int svals(int r, int c, const double *X, double *sv) {
  int k = r < c ? r : c;
  if (k == 0) return 0;
  double *a = malloc(sizeof(double) * ((size_t)r * (size_t)c + (size_t)k));
  if (!a) return -2;
  memcpy(a, X, sizeof(double) * (size_t)r * (size_t)c);
  int rc = LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'N', 'N', r, c, a, r, sv, NULL, 1,
                          NULL, 1, a + (size_t)r * c) == 0 ? 0 : -1;
  free(a);
  return rc;
}

/* Extreme eigenvalues of the principal submatrix A[idx, idx] (lda m). */
static int sub_eigs(int m, const double *A, int n, const int *idx, double *lmin,
                    double *lmax) {
  if (n == 0) { *lmin = *lmax = 0.0; return 0; }
  double *a = malloc(sizeof(double) * (size_t)n * (size_t)(n + 1));
  if (!a) return -2;
  for (int c = 0; c < n; c++)
    for (int r = 0; r < n; r++) a[r + (size_t)c * n] = A[idx[r] + (size_t)idx[c] * m];
  int rc = LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'U', n, a, n, a + (size_t)n * n) == 0 ? 0 : -1;
  if (rc == 0) { *lmin = a[(size_t)n * n]; *lmax = a[(size_t)n * n + n - 1]; }
  free(a);
  return rc;
}

/* Spectral norm of A[rows, cols] (lda m). */
static int sub_norm(int m, const double *A, int nr, const int *rows, int ncl,
                    const int *cols, double *out) {
  *out = 0.0;
  if (nr == 0 || ncl == 0) return 0;
  int k = nr < ncl ? nr : ncl;
  double *X = malloc(sizeof(double) * ((size_t)nr * (size_t)ncl + (size_t)k));
  if (!X) return -2;
  for (int c = 0; c < ncl; c++)
    for (int r = 0; r < nr; r++) X[r + (size_t)c * nr] = A[rows[r] + (size_t)cols[c] * m];
  int rc = svals(nr, ncl, X, X + (size_t)nr * ncl);
  if (rc == 0) *out = X[(size_t)nr * ncl];
  free(X);
  return rc;
}

/* formulation §5's diagnostics over the augmented contact space (the real
 * rows: 3 per contact, one torsion row per soft finger; the pads left out).
 * Proposition 3 extended by the same perturbation argument: B~ holds the
 * normals, the rolling contacts' tangents and the non-spinning soft fingers'
 * torsion rows; the sliding contacts' t, o columns (delta_t, delta_o) and
 * the spinning soft fingers' torsion columns (delta_x) perturb it, so
 * Theorem 1 applies when max_S mu (delta_t + delta_o) + max_X mu_tau delta_x
 * < lambda_min(B~). friction_bound stays lambda_min / (delta_t + delta_o). */
int cp_contact_diagnostics_ext(const cp_contact_space *cs, int nc, const int *tor_row,
                               const unsigned char *sliding, const double *mu,
                               const unsigned char *spinning, const double *mu_tor,
                               cp_contact_diag *d) {
  memset(d, 0, sizeof *d);
  int nsoft = 0;
  for (int j = 0; tor_row && j < nc; j++) nsoft += tor_row[j] >= 0;
  const int ma = 3 * cs->nc, nr = 3 * nc + nsoft, nf = cs->nfree;
  int *idx = malloc(sizeof(int) * (size_t)(4 * nr + 1));
  int kmin = nf < nr ? nf : nr;
  double *GF = malloc(sizeof(double) * ((size_t)nf * (size_t)nr + (size_t)kmin + 1));
  int rc = -2;
  if (!idx || !GF) goto done;
  int *bt = idx + nr, *st = bt + nr, *xt = st + nr, nb = 0, ns = 0, nx = 0;
  for (int j = 0; j < 3 * nc; j++) idx[j] = j;
  for (int j = 0, s = 3 * nc; j < nc; j++)
    if (tor_row && tor_row[j] >= 0) idx[s++] = tor_row[j];
  double *sv = GF + (size_t)nf * nr;
  for (int c = 0; c < nr; c++)
    for (int r = 0; r < nf; r++)
      GF[r + (size_t)c * nf] = cs->G[cs->free_idx[r] + (size_t)idx[c] * cs->nu];
  if ((rc = svals(nf, nr, GF, sv)) != 0) goto done;
  double tol = (kmin > 0 ? sv[0] : 0.0) * (double)(nf > nr ? nf : nr) * DBL_EPSILON;
  for (int i = 0; i < kmin; i++) d->jacobian_rank += sv[i] > tol;
  d->full_column_rank = d->jacobian_rank == nr;
  double lmin, lmax;
  if ((rc = sub_eigs(ma, cs->A, nr, idx, &lmin, &lmax)) != 0) goto done;
  d->a_positive_definite = nr == 0 || lmin > (double)nr * DBL_EPSILON * fabs(lmax) * 16;
  double musl = 0.0, mux = 0.0;
  for (int j = 0; j < nc; j++) {
    bt[nb++] = 3 * j;
    if (!sliding[j]) { bt[nb++] = 3 * j + 1; bt[nb++] = 3 * j + 2; }
    else { musl = fmax(musl, mu[j]); ns++; }
    int tr = tor_row ? tor_row[j] : -1;
    if (tr < 0) continue;
    if (!spinning[j]) bt[nb++] = tr;
    else { xt[nx++] = tr; mux = fmax(mux, mu_tor[j]); }
  }
  if ((rc = sub_eigs(ma, cs->A, nb, bt, &lmin, &lmax)) != 0) goto done;
  int bt_pd = nb == 0 || lmin > (double)nb * DBL_EPSILON * fabs(lmax) * 16;
  if (ns == 0 && nx == 0) {
    d->friction_bound = INFINITY;
    d->within_friction_bound = bt_pd;
  } else if (!bt_pd) {
    d->friction_bound = 0.0;
    d->within_friction_bound = 0;
  } else {
    double delta[3];
    for (int comp = 1; comp <= 2; comp++) {
      int n = 0;
      for (int j = 0; j < nc; j++)
        if (sliding[j]) st[n++] = 3 * j + comp;
      if ((rc = sub_norm(ma, cs->A, nb, bt, n, st, &delta[comp - 1])) != 0) goto done;
    }
    if ((rc = sub_norm(ma, cs->A, nb, bt, nx, xt, &delta[2])) != 0) goto done;
    double den = delta[0] + delta[1];
    d->friction_bound = ns > 0 && den > 0 ? lmin / den : INFINITY;
    d->within_friction_bound = musl * den + mux * delta[2] < lmin;
  }
  rc = 0;
done:
  free(idx);
  free(GF);
  return rc;
}

int cp_contact_diagnostics(const cp_contact_space *cs,
                           const unsigned char *sliding, const double *mu,
                           cp_contact_diag *d) {
  return cp_contact_diagnostics_ext(cs, cs->nc, NULL, sliding, mu, NULL, NULL, d);
}
