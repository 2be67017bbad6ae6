/* The worker ranks' side of planning with MPI (planner/plan/mpi.h,
 * mpi.c's header comment): a worker greets rank 0 with its task's key,
 * then simulates the jobs (and searches the benchmark runs) rank 0 sends
 * until rank 0 says stop, and sends each answer back. */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "models/clock.h"
#include "planner/plan/mpi.h"
#include "planner/plan/mpi_impl.h"
#include "planner/store/store.h"

static int hello(int status, int n, const char *why, cp_error *err) {
  size_t len = strlen(why);
  unsigned char *m = malloc(8 + len);
  if (!m) return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  int32_t h[2] = {status, n};
  memcpy(m, h, 8);
  memcpy(m + 8, why, len);
  int rc = MPI_Send(m, (int)(8 + len), MPI_BYTE, 0, TAG_HELLO,
                    MPI_COMM_WORLD);
  free(m);
  return rc == MPI_SUCCESS ? 0 : cp_plan_mpi_fail(err, rc, "hello to rank 0");
}

/* A worker's progress reports of the run it searches, and its cancel
 * flag: set when rank 0's stop is waiting (rank 0 stopped the benchmark:
 * a signal, or another rank died), looked for at every report. */
typedef struct reports {
  cp_plan_progress *v;
  int n, cap;
  volatile sig_atomic_t stop;
} reports;

static void report(void *ctx, const cp_plan_progress *p) {
  reports *r = ctx;
  int got = 0;
  if (MPI_Iprobe(0, TAG_STOP, MPI_COMM_WORLD, &got, MPI_STATUS_IGNORE) ==
          MPI_SUCCESS && got)
    cp_search_cancel(&r->stop, SIGTERM);
  if (r->n == r->cap) {
    int cap = r->cap ? 2 * r->cap : 64;
    cp_plan_progress *v = realloc(r->v, (size_t)cap * sizeof *v);
    if (!v) return;
    r->v = v;
    r->cap = cap;
  }
  r->v[r->n++] = *p;
}

/* A benchmark's run (message in): searched into a store in memory, which
 * travels back whole with the result (out). 0, 1 when rank 0 said stop
 * meanwhile (nothing to send: rank 0 waits for no answer then), or -1
 * with err when the run could not be searched at all (a malformed
 * request, no memory). */
static int serve_run(const cp_task *task, cp_plan_world *pw,
                     const cp_wire_buf *in, cp_wire_buf *out, cp_error *err) {
  cp_wire_run run;
  if (cp_wire_run_decode(in->p, in->len, &run, err)) return -1;
  cp_store *st = NULL;
  char msg[512];
  if (cp_store_open(":memory:", 0, &st, msg, sizeof msg))
    return cp_error_setc(err, CP_ERR_IO, "", "%s", msg);
  cp_plan_options o = cp_plan_defaults();
  reports rep = {0};
  o.method = run.method;
  o.has_seed = 1;
  o.seed = run.seed;
  o.max_seconds = run.max_seconds;
  o.max_nodes = run.max_nodes;
  o.world_options = cp_plan_world_options(pw);
  o.progress = report;
  o.progress_ctx = &rep;
  o.progress_interval = 0.05;
  o.cancel = &rep.stop;
  cp_wire_run_done d = {.k = run.k};
  d.status = cp_plan_search(st, task, cp_plan_world_problem(pw),
                            cp_plan_world_start(pw), &o, &d.res, &d.err);
  if (rep.stop) {
    free(rep.v);
    cp_store_close(st);
    return 1;
  }
  d.samples = rep.v;
  d.n_samples = rep.n;
  void *bytes = NULL;
  size_t len = 0;
  int rc = 0;
  if (cp_store_export_runs(st, &bytes, &len))
    rc = cp_error_setc(err, CP_ERR_NOMEM, "", "%s", cp_store_message(st));
  d.store = bytes;
  d.store_len = len;
  if (!rc) rc = cp_wire_run_done_encode(&d, out, err);
  free(bytes);
  free(rep.v);
  cp_store_close(st);
  return rc;
}

/* Under mpirun, SIGTERM reaches every rank when one of them fails (or
 * mpirun itself is interrupted): Open MPI sends it, sleeps
 * odls_base_sigkill_timeout (1 s) and then sends SIGKILL -- but a child
 * that exits during that second cuts the sleep short, and everyone is
 * killed at once. A worker therefore ignores SIGINT and SIGTERM while it
 * serves, which leaves rank 0 the second to roll its batch back and
 * commit the run as interrupted; then rank 0 stops the workers, or
 * mpirun kills them. */

void cp_plan_mpi_quiet_begin(cp_plan_mpi_quiet *q) {
  struct sigaction ign;
  memset(&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  sigaction(SIGTERM, &ign, &q->term);
  sigaction(SIGINT, &ign, &q->intr);
}

void cp_plan_mpi_quiet_end(const cp_plan_mpi_quiet *q) {
  sigaction(SIGTERM, &q->term, NULL);
  sigaction(SIGINT, &q->intr, NULL);
}

/* A worker: the next message from rank 0 into in (st: its envelope).
 * 1: a message to answer, 0: stop, -1: err (MPI failed). */
int cp_plan_mpi_next_order(cp_wire_buf *in, MPI_Status *st, cp_error *err) {
  int r = cp_plan_mpi_wait_for(0, MPI_ANY_TAG, st, NULL);
  if (r != MPI_SUCCESS) return cp_plan_mpi_fail(err, r, "waiting for rank 0");
  if (cp_plan_mpi_receive(in, st, err)) return -1;
  return st->MPI_TAG != TAG_STOP;
}

/* A worker's answer to rank 0: out under tag, or for TAG_FAIL the text of
 * e. 0, or -1 with err. */
int cp_plan_mpi_reply(int tag, const cp_wire_buf *out, const cp_error *e,
                 cp_error *err) {
  int r;
  if (tag == TAG_FAIL) {
    char why[sizeof e->where + sizeof e->msg + 2];
    snprintf(why, sizeof why, "%s%s%s", e->where, e->where[0] ? ": " : "",
             e->msg);
    r = MPI_Send(why, (int)strlen(why), MPI_BYTE, 0, TAG_FAIL,
                 MPI_COMM_WORLD);
  } else {
    r = MPI_Send(out->p, (int)out->len, MPI_BYTE, 0, tag, MPI_COMM_WORLD);
  }
  return r == MPI_SUCCESS ? 0 : cp_plan_mpi_fail(err, r, "sending to rank 0");
}

/* A worker's outcomes on their way to rank 0. Open MPI 4.1's MPI_Send of
 * a message above 256 bytes (an outcome is 400-900) returns only once the
 * receiver calls MPI (a 300-4000 byte send to a rank computing for 2 ms
 * took 1.9 ms; 256 bytes or less, 0.3 us), so a blocking send held the
 * worker until rank 0's next look -- between the steps of its own job, or
 * after its merge, draw and commit: grasp_lift, 2 ranks, 50 us a send
 * (median), a fifth of the worker's time, while its next job waited in
 * its queue (docs/parallel.md, "Waiting for messages"). MPI_Isend returns
 * at once and rank 0 sees the message at its next look all the same, so
 * the worker goes on to its queued job and completes the send later: a
 * ring of OUTBOX sends (rank 0 holds at most two jobs, mpi.c's DEPTH, on
 * a worker, so by the time a slot comes round again rank 0 has taken its
 * outcome in). */
enum { OUTBOX = 4 };
typedef struct outbox {
  cp_wire_buf buf[OUTBOX];
  MPI_Request q[OUTBOX];
  int next;
} outbox;

/* The next free slot's buffer (its earlier send completed first). */
static cp_wire_buf *outbox_slot(outbox *o) {
  MPI_Request *q = &o->q[o->next];
  if (*q != MPI_REQUEST_NULL) {
    double t = cp_clock_now();
    MPI_Wait(q, MPI_STATUS_IGNORE);
    cp_plan_mpi_waits_of()->sending += cp_clock_now() - t;
  }
  return &o->buf[o->next];
}

/* Sends the slot's buffer (filled since outbox_slot) to rank 0 under
 * TAG_OUTCOME without waiting. 0, or -1 with err. */
static int outbox_send(outbox *o, cp_error *err) {
  double t = cp_clock_now();
  cp_wire_buf *b = &o->buf[o->next];
  int r = MPI_Isend(b->p, (int)b->len, MPI_BYTE, 0, TAG_OUTCOME,
                    MPI_COMM_WORLD, &o->q[o->next]);
  cp_plan_mpi_waits_of()->sending += cp_clock_now() - t;
  if (r != MPI_SUCCESS) return cp_plan_mpi_fail(err, r, "sending to rank 0");
  o->next = (o->next + 1) % OUTBOX;
  return 0;
}

/* Completes every send still under way (rank 0 takes them in at the
 * latest in MPI_Finalize) and frees the buffers. */
static void outbox_free(outbox *o) {
  for (int k = 0; k < OUTBOX; ++k) {
    if (o->q[k] != MPI_REQUEST_NULL) MPI_Wait(&o->q[k], MPI_STATUS_IGNORE);
    cp_wire_buf_free(&o->buf[k]);
  }
}

int cp_plan_mpi_serve(const cp_task *task, const cp_error *load_err,
                      cp_error *err) {
  cp_plan_mpi_quiet q;
  cp_plan_mpi_quiet_begin(&q);
  cp_plan_world *pw = NULL;
  cp_error e;
  char key[CP_TASK_KEY_SIZE];
  const char *why = key;
  if (!task) why = load_err->msg;
  else if (cp_plan_world_create(task, 1, &pw, &e)) why = e.msg;
  else {
    cp_task_hash(task, key);
    cp_plan_world_set_timing(pw, 0); /* job_cpu times the jobs */
    /* Jobs come from searches of batches of several only (rank 0 runs
     * batches of one itself): count as their worlds do. */
    cp_plan_world_set_memo_pivots(pw, 1);
  }
  int n = pw ? cp_plan_world_problem(pw)->n : 0;
  if (hello(pw ? 0 : -1, n, why, err)) {
    cp_plan_world_destroy(pw);
    cp_plan_mpi_quiet_end(&q);
    return -1;
  }
  const cp_search_problem *p = pw ? cp_plan_world_problem(pw) : NULL;
  cp_wire_buf in = {0}, out = {0};
  outbox box = {.next = 0};
  for (int k = 0; k < OUTBOX; ++k) box.q[k] = MPI_REQUEST_NULL;
  cp_wire_slot slot = {0};
  MPI_Status st;
  int rc;
  while ((rc = cp_plan_mpi_next_order(&in, &st, err)) > 0) {
    int tag = TAG_OUTCOME;
    cp_wire_buf *o = &out;
    if (st.MPI_TAG == TAG_RUN && p) {
      int r = serve_run(task, pw, &in, &out, &e);
      if (r == 1) continue; /* stopped: the stop is the next message */
      tag = r ? TAG_FAIL : TAG_RUN_DONE;
    } else if (st.MPI_TAG != TAG_JOB || !p) {
      cp_error_setc(&e, CP_ERR_INPUT, "mpi", "unexpected message (tag %d)",
                    st.MPI_TAG);
      tag = TAG_FAIL;
    } else {
      double c = cp_clock_thread_cpu();
      if (cp_wire_job_decode(in.p, in.len, n, &slot, &e)) {
        tag = TAG_FAIL;
      } else {
        cp_wire_job_run(p, &slot);
        cp_plan_mpi_waits_of()->jobs++;
        o = outbox_slot(&box);
        if (cp_wire_outcome_encode(&slot.job, n, o, &e)) tag = TAG_FAIL;
      }
      cp_plan_mpi_waits_of()->job_cpu += cp_clock_thread_cpu() - c;
    }
    /* An outcome goes without waiting (outbox); a failure, a benchmark's
     * run and the rest as before: blocking, in the order posted (MPI
     * keeps the order of two messages to the same rank). */
    double t = cp_clock_now();
    int r = tag == TAG_OUTCOME ? outbox_send(&box, err)
                               : cp_plan_mpi_reply(tag, &out, &e, err);
    if (tag != TAG_OUTCOME) cp_plan_mpi_waits_of()->sending += cp_clock_now() - t;
    if (r) {
      rc = -1;
      break;
    }
  }
  outbox_free(&box);
  cp_wire_slot_free(&slot);
  cp_wire_buf_free(&in);
  cp_wire_buf_free(&out);
  cp_plan_world_destroy(pw);
  cp_plan_mpi_quiet_end(&q);
  return rc;
}

