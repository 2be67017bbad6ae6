#include "planner/search/nn.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { LEAF_SIZE = 16 };

/* A tree cell: an inner cell splits on coordinate dim at value split (points
 * with p[dim] < split go left); a leaf (dim < 0) lists point indices. */
typedef struct cell {
  int dim;
  double split;
  int left, right;
  int *idx, n, cap;
} cell;

struct cp_nn {
  int d;
  double *pts;       /* [cap * d] */
  long *ids;         /* [cap] */
  int *leaf_of;      /* [cap] leaf holding the point */
  unsigned char *dead;
  long n, cap, live;
  cell *cells;
  /* [cap_cells * 2 * d] each cell's bounding box (lower corner, then upper
   * corner) of every point ever added under it, removed ones included;
   * empty (+inf / -inf) until the first. */
  double *box;
  int n_cells, cap_cells;
  long long evals;
};

static void box_empty(cp_nn *nn, int c) {
  double *b = nn->box + (size_t)c * 2 * (size_t)nn->d;
  for (int k = 0; k < nn->d; ++k) {
    b[k] = INFINITY;
    b[nn->d + k] = -INFINITY;
  }
}

static void box_grow(cp_nn *nn, int c, const double *p) {
  double *b = nn->box + (size_t)c * 2 * (size_t)nn->d;
  for (int k = 0; k < nn->d; ++k) {
    if (p[k] < b[k]) b[k] = p[k];
    if (p[k] > b[nn->d + k]) b[nn->d + k] = p[k];
  }
}

/* The squared distance from q to cell c's box: no point under c is nearer
 * (INFINITY for an empty cell). */
static double box_dist2(const cp_nn *nn, int c, const double *q) {
  const double *b = nn->box + (size_t)c * 2 * (size_t)nn->d;
  double s = 0;
  for (int k = 0; k < nn->d; ++k) {
    double e = q[k] < b[k] ? b[k] - q[k]
               : q[k] > b[nn->d + k] ? q[k] - b[nn->d + k] : 0;
    s += e * e;
  }
  return b[0] <= b[nn->d] ? s : INFINITY;
}

cp_nn *cp_nn_create(int d) {
  if (d < 1) return NULL;
  cp_nn *nn = calloc(1, sizeof *nn);
  if (!nn) return NULL;
  nn->d = d;
  nn->cells = calloc(8, sizeof *nn->cells);
  if (!nn->cells) {
    free(nn);
    return NULL;
  }
  nn->box = malloc((size_t)8 * 2 * (size_t)d * sizeof *nn->box);
  if (!nn->box) {
    free(nn->cells);
    free(nn);
    return NULL;
  }
  nn->cap_cells = 8;
  nn->n_cells = 1;
  nn->cells[0].dim = -1;
  box_empty(nn, 0);
  return nn;
}

void cp_nn_destroy(cp_nn *nn) {
  if (!nn) return;
  for (int c = 0; c < nn->n_cells; ++c) free(nn->cells[c].idx);
  free(nn->cells);
  free(nn->box);
  free(nn->pts);
  free(nn->ids);
  free(nn->leaf_of);
  free(nn->dead);
  free(nn);
}

static int grow_points(cp_nn *nn) {
  if (nn->n < nn->cap) return 0;
  long cap = nn->cap ? 2 * nn->cap : 256;
  double *p = realloc(nn->pts, (size_t)cap * (size_t)nn->d * sizeof *p);
  if (!p) return -1;
  nn->pts = p;
  long *ids = realloc(nn->ids, (size_t)cap * sizeof *ids);
  if (!ids) return -1;
  nn->ids = ids;
  int *lo = realloc(nn->leaf_of, (size_t)cap * sizeof *lo);
  if (!lo) return -1;
  nn->leaf_of = lo;
  unsigned char *dd = realloc(nn->dead, (size_t)cap);
  if (!dd) return -1;
  nn->dead = dd;
  nn->cap = cap;
  return 0;
}

static int leaf_push(cell *c, int i) {
  if (c->n == c->cap) {
    int cap = c->cap ? 2 * c->cap : LEAF_SIZE;
    int *p = realloc(c->idx, (size_t)cap * sizeof *p);
    if (!p) return -1;
    c->idx = p;
    c->cap = cap;
  }
  c->idx[c->n++] = i;
  return 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Splits leaf c at the median of its widest coordinate. Leaves whose points
 * all coincide stay leaves (they cannot be separated). */
static void split_leaf(cp_nn *nn, int c) {
  if (nn->n_cells + 2 > nn->cap_cells) {
    int cap = 2 * nn->cap_cells;
    cell *p = realloc(nn->cells, (size_t)cap * sizeof *p);
    if (!p) return; /* stays a (large) leaf: still correct */
    nn->cells = p;
    double *b = realloc(nn->box, (size_t)cap * 2 * (size_t)nn->d * sizeof *b);
    if (!b) return; /* (cap_cells unchanged: the larger cells array is
                       harmless) */
    nn->box = b;
    nn->cap_cells = cap;
  }
  cell *leaf = &nn->cells[c];
  int d = nn->d, best = -1;
  double spread = 0;
  for (int k = 0; k < d; ++k) {
    double lo = INFINITY, hi = -INFINITY;
    for (int j = 0; j < leaf->n; ++j) {
      double v = nn->pts[(size_t)leaf->idx[j] * (size_t)d + (size_t)k];
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
    }
    if (hi - lo > spread) {
      spread = hi - lo;
      best = k;
    }
  }
  if (best < 0) return;
  double vals[256];
  int m = leaf->n < 256 ? leaf->n : 256;
  for (int j = 0; j < m; ++j)
    vals[j] = nn->pts[(size_t)leaf->idx[j] * (size_t)d + (size_t)best];
  qsort(vals, (size_t)m, sizeof *vals, cmp_double);
  double split = vals[m / 2];
  if (split <= vals[0]) { /* median equals the minimum: split above it */
    for (int j = m / 2; j < m; ++j)
      if (vals[j] > vals[0]) {
        split = vals[j];
        break;
      }
  }
  int L = nn->n_cells, R = nn->n_cells + 1;
  memset(&nn->cells[L], 0, 2 * sizeof(cell));
  nn->cells[L].dim = nn->cells[R].dim = -1;
  for (int j = 0; j < leaf->n; ++j) {
    int i = leaf->idx[j];
    int to = nn->pts[(size_t)i * (size_t)d + (size_t)best] < split ? L : R;
    if (leaf_push(&nn->cells[to], i)) { /* undo: keep the leaf */
      free(nn->cells[L].idx);
      free(nn->cells[R].idx);
      return;
    }
  }
  box_empty(nn, L);
  box_empty(nn, R);
  for (int j = 0; j < nn->cells[L].n; ++j) {
    nn->leaf_of[nn->cells[L].idx[j]] = L;
    box_grow(nn, L, nn->pts + (size_t)nn->cells[L].idx[j] * (size_t)d);
  }
  for (int j = 0; j < nn->cells[R].n; ++j) {
    nn->leaf_of[nn->cells[R].idx[j]] = R;
    box_grow(nn, R, nn->pts + (size_t)nn->cells[R].idx[j] * (size_t)d);
  }
  nn->n_cells += 2;
  free(leaf->idx);
  leaf->idx = NULL;
  leaf->n = leaf->cap = 0;
  leaf->dim = best;
  leaf->split = split;
  leaf->left = L;
  leaf->right = R;
}

int cp_nn_add(cp_nn *nn, const double *p, long id) {
  if (grow_points(nn)) return -1;
  int c = 0;
  box_grow(nn, 0, p);
  while (nn->cells[c].dim >= 0) {
    c = p[nn->cells[c].dim] < nn->cells[c].split ? nn->cells[c].left
                                                 : nn->cells[c].right;
    box_grow(nn, c, p);
  }
  int i = (int)nn->n;
  if (leaf_push(&nn->cells[c], i)) return -1;
  memcpy(nn->pts + (size_t)i * (size_t)nn->d, p, (size_t)nn->d * sizeof *p);
  nn->ids[i] = id;
  nn->dead[i] = 0;
  nn->leaf_of[i] = c;
  nn->n++;
  nn->live++;
  if (nn->cells[c].n > LEAF_SIZE && nn->cells[c].n % LEAF_SIZE == 1)
    split_leaf(nn, c);
  return 0;
}

int cp_nn_remove(cp_nn *nn, long id) {
  /* Ids are usually added in increasing order: try the index first. */
  long i = -1;
  if (id >= 0 && id < nn->n && nn->ids[id] == id && !nn->dead[id]) i = id;
  for (long j = 0; i < 0 && j < nn->n; ++j)
    if (nn->ids[j] == id && !nn->dead[j]) i = j;
  if (i < 0) return -1;
  nn->dead[i] = 1;
  nn->live--;
  return 0;
}

long cp_nn_size(const cp_nn *nn) { return nn->live; }

long long cp_nn_evaluations(const cp_nn *nn) { return nn->evals; }

static double dist2(const cp_nn *nn, int i, const double *q) {
  const double *p = nn->pts + (size_t)i * (size_t)nn->d;
  double s = 0;
  for (int k = 0; k < nn->d; ++k) {
    double e = p[k] - q[k];
    s += e * e;
  }
  return s;
}

static void nearest_rec(cp_nn *nn, int c, const double *q, int *best,
                        double *bd2) {
  const cell *x = &nn->cells[c];
  if (x->dim < 0) {
    for (int j = 0; j < x->n; ++j) {
      int i = x->idx[j];
      if (nn->dead[i]) continue;
      nn->evals++;
      double d2 = dist2(nn, i, q);
      if (d2 < *bd2) {
        *bd2 = d2;
        *best = i;
      }
    }
    return;
  }
  /* A child is visited only when its box may hold a point nearer than the
   * best so far (the far child's box lies beyond the split plane, so this
   * prunes at least what the plane's distance does). A skipped cell holds
   * no point strictly nearer, so the answer -- the first point met at the
   * least distance, in this order of visits -- is the one the plane-only
   * search found. */
  double diff = q[x->dim] - x->split;
  int near = diff < 0 ? x->left : x->right, far = diff < 0 ? x->right : x->left;
  if (box_dist2(nn, near, q) < *bd2) nearest_rec(nn, near, q, best, bd2);
  if (diff * diff < *bd2 && box_dist2(nn, far, q) < *bd2)
    nearest_rec(nn, far, q, best, bd2);
}

long cp_nn_nearest(const cp_nn *nn, const double *q, double *d2) {
  int best = -1;
  double bd2 = INFINITY;
  /* Queries count evaluations: the statistic is the one mutable field. */
  nearest_rec((cp_nn *)nn, 0, q, &best, &bd2);
  if (d2) *d2 = bd2;
  return best < 0 ? -1 : nn->ids[best];
}

/* The k nearest so far, sorted by (d2, caller's id): *n <= k of them. Ties
 * go by id, not by insertion index, so that the answer depends on the set
 * of live points only: rrt's fresh actions add a node's unkept children
 * after later nodes, and a resumed search adds them in id order. (For
 * points added in increasing id order the two orders agree.) */
typedef struct knn {
  int *idx;
  double *d2;
  const long *ids; /* the index's ids */
  int k, n;
} knn;

static void knn_offer(knn *h, int i, double d2) {
  const long id = h->ids[i];
  if (h->n == h->k && (d2 > h->d2[h->n - 1] ||
                        (d2 == h->d2[h->n - 1] && id > h->ids[h->idx[h->n - 1]])))
    return;
  int j = h->n < h->k ? h->n++ : h->n - 1;
  while (j > 0 && (h->d2[j - 1] > d2 ||
                   (h->d2[j - 1] == d2 && h->ids[h->idx[j - 1]] > id))) {
    h->idx[j] = h->idx[j - 1];
    h->d2[j] = h->d2[j - 1];
    --j;
  }
  h->idx[j] = i;
  h->d2[j] = d2;
}

static void knearest_rec(cp_nn *nn, int c, const double *q, knn *h) {
  const cell *x = &nn->cells[c];
  if (x->dim < 0) {
    for (int j = 0; j < x->n; ++j) {
      int i = x->idx[j];
      if (nn->dead[i]) continue;
      nn->evals++;
      knn_offer(h, i, dist2(nn, i, q));
    }
    return;
  }
  /* As nearest_rec, children whose box lies farther than the k-th best so
   * far are skipped. A point at the k-th distance itself may still enter
   * (ties go to the smaller id), so only a box strictly beyond it
   * is skipped: the set and its order are the plane-only search's. */
  double diff = q[x->dim] - x->split;
  int near = diff < 0 ? x->left : x->right, far = diff < 0 ? x->right : x->left;
  if (h->n < h->k || box_dist2(nn, near, q) <= h->d2[h->n - 1])
    knearest_rec(nn, near, q, h);
  if (h->n < h->k ||
      (diff * diff < h->d2[h->n - 1] && box_dist2(nn, far, q) <= h->d2[h->n - 1]))
    knearest_rec(nn, far, q, h);
}

int cp_nn_knearest(const cp_nn *nn, const double *q, int k, long *ids,
                   double *d2) {
  if (k < 1) return 0;
  knn h = {malloc((size_t)k * sizeof(int)), malloc((size_t)k * sizeof(double)),
           nn->ids, k, 0};
  if (!h.idx || !h.d2) {
    free(h.idx);
    free(h.d2);
    return -1;
  }
  knearest_rec((cp_nn *)nn, 0, q, &h);
  for (int j = 0; j < h.n; ++j) {
    ids[j] = nn->ids[h.idx[j]];
    if (d2) d2[j] = h.d2[j];
  }
  int n = h.n;
  free(h.idx);
  free(h.d2);
  return n;
}

static void radius_rec(cp_nn *nn, int c, const double *q, double r2,
                       long *ids, long cap, long *count) {
  const cell *x = &nn->cells[c];
  if (x->dim < 0) {
    for (int j = 0; j < x->n; ++j) {
      int i = x->idx[j];
      if (nn->dead[i]) continue;
      nn->evals++;
      if (dist2(nn, i, q) <= r2) {
        if (*count < cap) ids[*count] = nn->ids[i];
        ++*count;
      }
    }
    return;
  }
  /* A child is entered only when its box comes within r (the box's
   * distance is a lower bound of its points', rounding included): the
   * points found, and the order they are found in, are the plane-only
   * search's. */
  double diff = q[x->dim] - x->split;
  if ((diff < 0 || diff * diff <= r2) && box_dist2(nn, x->left, q) <= r2)
    radius_rec(nn, x->left, q, r2, ids, cap, count);
  if ((diff >= 0 || diff * diff <= r2) && box_dist2(nn, x->right, q) <= r2)
    radius_rec(nn, x->right, q, r2, ids, cap, count);
}

long cp_nn_radius(const cp_nn *nn, const double *q, double r, long *ids,
                  long cap) {
  long count = 0;
  radius_rec((cp_nn *)nn, 0, q, r * r, ids, cap, &count);
  return count;
}
