/* Independent items over MPI ranks (planner/plan/mpi.h,
 * cp_plan_mpi_items_run and _serve: the paper study's data sets): rank 0
 * hands item i's request to a free worker rank and takes the answers in
 * whatever order they come; the messages (tags ITEM and ITEM_DONE) are
 * "CPI1", the item's number, then the caller's request or answer bytes.
 * The waits, sends and the workers' quiet signals are mpi.c's
 * (mpi_impl.h). */
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "planner/plan/mpi.h"
#include "planner/plan/mpi_impl.h"

#define ITEM_MAGIC 0x31495043u /* "CPI1" read little-endian */

/* b = the item header (magic, i) and len bytes of p. */
static int item_message(cp_wire_buf *b, int i, const void *p, size_t len,
                        cp_error *err) {
  if (len > (size_t)INT32_MAX - 8)
    return cp_error_setc(err, CP_ERR_INPUT, "mpi", "item %d: %zu bytes are "
                         "too many for one message", i, len);
  if (b->cap < 8 + len) {
    void *q = realloc(b->p, 8 + len);
    if (!q) return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
    b->p = q;
    b->cap = 8 + len;
  }
  uint32_t magic = ITEM_MAGIC;
  int32_t k = i;
  memcpy(b->p, &magic, 4);
  memcpy(b->p + 4, &k, 4);
  if (len) memcpy(b->p + 8, p, len);
  b->len = 8 + len;
  return 0;
}

/* The item number of message b (-1: not an item message). */
static int item_of(const cp_wire_buf *b) {
  uint32_t magic = 0;
  int32_t k = -1;
  if (b->len < 8) return -1;
  memcpy(&magic, b->p, 4);
  memcpy(&k, b->p + 4, 4);
  return magic == ITEM_MAGIC ? k : -1;
}

/* Item i here: request, work, done. */
static int item_here(const cp_plan_mpi_items *it, int i, cp_error *err) {
  void *req = NULL, *ans = NULL;
  size_t len = 0, alen = 0;
  int rc = it->request(it->ctx, i, &req, &len, err);
  if (!rc) rc = it->work(it->ctx, i, req, len, &ans, &alen, err);
  if (!rc) rc = it->done(it->ctx, i, ans, alen, err);
  free(req);
  free(ans);
  return rc;
}

/* Rank 0: item i's request to worker w. */
static int item_send(const cp_plan_mpi_items *it, int i, int w,
                     cp_wire_buf *out, cp_error *err) {
  void *req = NULL;
  size_t len = 0;
  if (it->request(it->ctx, i, &req, &len, err)) return -1;
  int rc = item_message(out, i, req, len, err);
  free(req);
  if (rc) return -1;
  int r = cp_plan_mpi_send_polled(out->p, (int)out->len, w, TAG_ITEM, it->cancel);
  if (r == -1) return -2; /* cancelled: out is MPI's now */
  if (r != MPI_SUCCESS) return cp_plan_mpi_fail(err, r, "sending an item");
  cp_plan_mpi_count((long long)out->len, 0, 1, 0);
  return 0;
}

int cp_plan_mpi_items_run(const cp_plan_mpi_items *it, cp_error *err) {
  int n_ranks, my_rank = cp_plan_mpi_rank(&n_ranks);
  if (my_rank != 0)
    return cp_error_setc(err, CP_ERR_INPUT, "mpi", "the items are handed "
                         "out by rank 0 (this is rank %d of %d)", my_rank,
                         n_ranks);
  if (n_ranks == 1) {
    for (int i = 0; i < it->count; ++i) {
      if (item_here(it, i, err)) return -1;
      cp_plan_mpi_count(0, 0, 0, 1);
    }
    return 0;
  }
  int *busy = malloc((size_t)n_ranks * sizeof *busy);
  if (!busy) return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  for (int w = 0; w < n_ranks; ++w) busy[w] = -1;
  cp_wire_buf in = {0}, out = {0};
  int next = 0, running = 0, rc = 0, done = 0, abandoned = 0;
  while (!rc && (next < it->count || running)) {
    if (it->cancel && __atomic_load_n(it->cancel, __ATOMIC_RELAXED)) {
      rc = -2;
      break;
    }
    for (int w = 1; !rc && w < n_ranks && next < it->count; ++w) {
      if (busy[w] >= 0) continue;
      if (!(rc = item_send(it, next, w, &out, err))) {
        busy[w] = next++;
        ++running;
      }
    }
    if (rc || !running) break;
    MPI_Status st;
    int r = cp_plan_mpi_wait_for(MPI_ANY_SOURCE, MPI_ANY_TAG, &st, it->cancel);
    if (r == -1) {
      rc = -2;
      break;
    }
    if (r != MPI_SUCCESS) {
      rc = cp_plan_mpi_fail(err, r, "waiting for the workers");
      break;
    }
    if ((rc = cp_plan_mpi_receive(&in, &st, err))) break;
    cp_plan_mpi_count(0, (long long)in.len, 0, 0);
    int w = st.MPI_SOURCE, i = w > 0 && w < n_ranks ? busy[w] : -1;
    if (i < 0) {
      rc = cp_error_setc(err, CP_ERR_NUMERICAL, "mpi",
                         "rank %d: a message (tag "
                         "%d) out of turn", w, st.MPI_TAG);
    } else if (st.MPI_TAG == TAG_FAIL) {
      rc = cp_error_setc(err, CP_ERR_NUMERICAL, "mpi",
                         "rank %d: item %d: %.*s", w,
                         i, (int)in.len, (char *)in.p);
    } else if (st.MPI_TAG != TAG_ITEM_DONE || item_of(&in) != i) {
      rc = cp_error_setc(err, CP_ERR_NUMERICAL, "mpi",
                         "rank %d: item %d: %s", w,
                         i, st.MPI_TAG != TAG_ITEM_DONE
                                ? "an unexpected message"
                                : "another item's answer");
    } else {
      busy[w] = -1;
      --running;
      rc = it->done(it->ctx, i, in.p + 8, in.len - 8, err);
      ++done;
    }
  }
  if (rc == -2) { /* cancelled; a send of `out` may be left to MPI */
    abandoned = 1;
    cp_error_setc(err, CP_ERR_NUMERICAL, "mpi",
                  "stopped by a signal with %d of %d "
                  "items done", done, it->count);
  }
  free(busy);
  cp_wire_buf_free(&in);
  if (!abandoned) cp_wire_buf_free(&out);
  return rc ? -1 : 0;
}

int cp_plan_mpi_items_serve(const cp_plan_mpi_items *it, cp_error *err) {
  cp_plan_mpi_quiet q;
  cp_plan_mpi_quiet_begin(&q);
  cp_wire_buf in = {0}, out = {0};
  MPI_Status st;
  int rc;
  while ((rc = cp_plan_mpi_next_order(&in, &st, err)) > 0) {
    int i = st.MPI_TAG == TAG_ITEM ? item_of(&in) : -1;
    void *ans = NULL;
    size_t alen = 0;
    cp_error e;
    int tag = TAG_FAIL;
    if (i < 0)
      cp_error_setc(&e, CP_ERR_INPUT, "mpi", "unexpected message (tag %d)",
                    st.MPI_TAG);
    else if (!it->work(it->ctx, i, in.p + 8, in.len - 8, &ans, &alen, &e) &&
             !item_message(&out, i, ans, alen, &e))
      tag = TAG_ITEM_DONE;
    free(ans);
    if (cp_plan_mpi_reply(tag, &out, &e, err)) {
      rc = -1;
      break;
    }
  }
  cp_wire_buf_free(&in);
  cp_wire_buf_free(&out);
  cp_plan_mpi_quiet_end(&q);
  return rc ? -1 : 0;
}
