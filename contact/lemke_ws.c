/* Lemke's method (contact/lemke.c): the workspace, the default options and
 * the accessors of the last solve. */
#include "contact/lemke_impl.h"

#include <stdlib.h>

#include "models/bigbuf.h"

/* The defaults, once: cp_lemke_solve(..., NULL, ...) reads them here
 * instead of building the struct on every solve. */
const cp_lemke_options cp_lk_defaults = {
    .cover = NULL,
    .max_pivots = 0,
    .restarts = 3,
    .seed = 1,
    .pivot_tol = 1e-12,
    .lexicographic = 1,
    .small_n = 0,
    .rescue = 0,
    .classic = 0,
    .check = {.rel_tol = CP_CHECK_REL_TOL_DEFAULT},
};

cp_lemke_options cp_lemke_defaults(void) { return cp_lk_defaults; }

/* A workspace of capacity; its three square blocks taken from old's
 * (grown, models/bigbuf.h) when old is given, which is then released. */
static cp_lemke_ws *make(int capacity, cp_lemke_ws *old) {
  void *sq[3] = {NULL, NULL, NULL};
  /* The poll hook stays with the workspace (its owner sets it once; a
   * simulator regrows its workspace as its problems grow). */
  cp_lemke_poll_fn poll = NULL;
  void *poll_ctx = NULL;
  int poll_period = 0;
  if (old) {
    poll = old->poll, poll_ctx = old->poll_ctx, poll_period = old->poll_period;
    sq[0] = old->Bact, sq[1] = old->T1, sq[2] = old->T2;
    old->Bact = old->T1 = old->T2 = NULL;
    cp_lemke_ws_destroy(old);
  }
  cp_lemke_ws *ws = capacity < 1 ? NULL : calloc(1, sizeof *ws);
  if (!ws) {
    for (int i = 0; i < 3; i++) cp_bigbuf_free(sq[i]);
    return NULL;
  }
  const size_t c = (size_t)capacity, cc = c * c;
  /* Vectors of the small path's tableau are padded to a multiple of 4
   * (tld): each vector of the qbar block gets a stride of c + 3 or more. */
  const size_t cv = (c + 7) & ~(size_t)7;
  ws->cap = capacity;
  ws->poll = poll;
  ws->poll_ctx = poll_ctx;
  ws->poll_period = poll_period;
  /* The square blocks: on huge pages when large (models/bigbuf.h; a bin's
   * pivots read them a column at a time). */
  ws->Bact = cp_bigbuf_regrow(sq[0], sizeof(double) * cc);
  ws->T1 = cp_bigbuf_regrow(sq[1], sizeof(double) * cc);
  ws->T2 = cp_bigbuf_regrow(sq[2], sizeof(double) * cc);
  ws->qbar = calloc(cv * 14, sizeof(double));
  ws->basic = malloc(sizeof(int) * c * 11);
  ws->ipiv = malloc(sizeof(lapack_int) * c * 2);
  ws->basis = calloc(2 * c, 1);
  ws->scap = capacity < SMALL_N_MAX ? capacity : SMALL_N_MAX;
  const size_t sc = (size_t)ws->scap;
  ws->tab = malloc(sizeof(double) * (sc + 3) * (2 * sc + 1));
  if (!ws->Bact || !ws->T1 || !ws->T2 || !ws->qbar || !ws->basic ||
      !ws->ipiv || !ws->basis || !ws->tab) {
    cp_lemke_ws_destroy(ws);
    return NULL;
  }
  /* Carve the vectors out of two blocks (fewer allocations, same sizes). */
  ws->col = ws->qbar + cv;
  ws->nxt = ws->col + cv;
  ws->d = ws->nxt + cv;
  ws->as = ws->d + cv;
  ws->lexv = ws->as + cv;
  ws->work = ws->lexv + cv; /* 4c */
  ws->wrow = ws->basic + c;
  ws->zrow = ws->wrow + c;
  ws->slot_col = ws->zrow + c;
  ws->col_slot = ws->slot_col + c;
  ws->cand = ws->col_slot + c;
  ws->cand2 = ws->cand + c;
  ws->kidx = ws->cand2 + c;
  ws->widx = ws->kidx + c;
  ws->gidx = ws->widx + c;
  ws->ratio = ws->work + 4 * cv;
  ws->chk = ws->ratio + cv; /* 3 cv */
  ws->wbas = ws->basis + c;
  ws->iwork = ws->ipiv + c;
  return ws;
}

cp_lemke_ws *cp_lemke_ws_create(int capacity) { return make(capacity, NULL); }

cp_lemke_ws *cp_lemke_ws_regrow(cp_lemke_ws *ws, int capacity) { return make(capacity, ws); }

cp_lemke_ws *cp_lemke_ws_reserve(cp_lemke_ws *ws, int capacity) {
  if (capacity < 1) return NULL;
  if (!ws || ws->cap < capacity) ws = make(capacity, ws);
  if (!ws) return NULL;
  /* make's sizes, every array */
  const size_t c = (size_t)ws->cap, cc = c * c, cv = (c + 7) & ~(size_t)7, sc = (size_t)ws->scap;
  cp_bigbuf_touch(ws->Bact, sizeof(double) * cc);
  cp_bigbuf_touch(ws->T1, sizeof(double) * cc);
  cp_bigbuf_touch(ws->T2, sizeof(double) * cc);
  cp_bigbuf_touch(ws->qbar, sizeof(double) * cv * 14);
  cp_bigbuf_touch(ws->basic, sizeof(int) * c * 11);
  cp_bigbuf_touch(ws->ipiv, sizeof(lapack_int) * c * 2);
  cp_bigbuf_touch(ws->basis, 2 * c);
  cp_bigbuf_touch(ws->tab, sizeof(double) * (sc + 3) * (2 * sc + 1));
  return ws;
}

void cp_lemke_ws_destroy(cp_lemke_ws *ws) {
  if (!ws) return;
  cp_bigbuf_free(ws->Bact);
  cp_bigbuf_free(ws->T1);
  cp_bigbuf_free(ws->T2);
  free(ws->qbar);
  free(ws->basic);
  free(ws->ipiv);
  free(ws->basis);
  free(ws->tab);
  free(ws);
}

int cp_lemke_basis(const cp_lemke_ws *ws, unsigned char *basis) {
  if (!ws || !ws->basis_valid) return -1;
  memcpy(basis, ws->basis, (size_t)ws->n);
  return 0;
}

int cp_lemke_pivots_per_start(const cp_lemke_ws *ws, int *per_start, int cap) {
  if (!ws) return 0;
  int m = ws->nstarts < LEMKE_MAX_STARTS ? ws->nstarts : LEMKE_MAX_STARTS;
  for (int i = 0; i < m && i < cap; i++) per_start[i] = ws->pps[i];
  return ws->nstarts;
}

void cp_lemke_set_trace(cp_lemke_ws *ws, cp_lemke_trace_fn fn, void *ctx) {
  if (!ws) return;
  ws->trace = fn;
  ws->trace_ctx = ctx;
}

int cp_lemke_set_poll(cp_lemke_ws *ws, cp_lemke_poll_fn fn, void *ctx,
                      int period) {
  if (!ws || (fn && period < 1)) return -1;
  ws->poll = fn;
  ws->poll_ctx = fn ? ctx : NULL;
  ws->poll_period = fn ? period : 0;
  ws->poll_left = ws->poll_period;
  return 0;
}

void cp_lemke_get_stats(const cp_lemke_ws *ws, cp_lemke_stats *st) {
  if (ws) *st = ws->st;
  else memset(st, 0, sizeof *st);
}
