/* Planning with MPI (planner/plan/mpi.h, docs/parallel.md): rank 0 runs
 * cp_plan_task with a batch runner that hands the jobs to ranks 1 .. R-1,
 * up to two jobs in flight per worker (the next goes to whichever answers
 * first, so a slow expansion holds no one else up), and runs the jobs not
 * handed out on its own world between looks at the workers' answers; the
 * workers decode a job, run it on their own world under the time the
 * search had left when it was sent (cp_wire_job_run) and send the outcome
 * back. Which rank ran a job changes nothing in its outcome (its inputs
 * are the parent's stored data), so the nodes are those of --threads.
 *
 * Messages (MPI_BYTE on MPI_COMM_WORLD), by tag: HELLO (worker -> 0 at
 * start: i32 status, i32 state size, then the task's key, cp_task_hash,
 * or the reason it could not load it when status != 0),
 * JOB and OUTCOME (planner/plan/wire.h), FAIL (worker -> 0: the reason a
 * job or run could not be run), STOP (0 -> worker, empty), RUN and
 * RUN_DONE (a benchmark's run: cp_plan_mpi_benchmark, wire.h), ITEM and
 * ITEM_DONE (cp_plan_mpi_items_run, mpi_items.c: "CPI1", the item's
 * number, then the caller's request or answer bytes).
 *
 * A worker has up to two jobs in flight (the second waits in its queue
 * while it runs the first), so it goes on to the next job without waiting
 * for rank 0 to see its answer; rank 0, free with jobs left, runs the next
 * one itself, and looks for answers after each step of it too
 * (look_within). A worker waiting for its next job, and rank 0 waiting for
 * the batch's last answers, poll MPI_Iprobe for up to 2 ms before they nap
 * between polls (while every rank here has a core: planner/plan/spin.h).
 *
 * Rank 0 waits for outcomes by polling (MPI_Iprobe and a short sleep)
 * rather than in a blocking receive, so that SIGINT or SIGTERM -- which
 * mpirun sends every rank when one of them dies -- still stops the search:
 * the jobs not back count as not run (rc 1, as a spent budget), the
 * search rolls the batch back and commits, and the run is resumable. */
#include "planner/plan/mpi.h"

#include <math.h>
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "planner/plan/mpi_impl.h"
#include "planner/plan/spin.h"

/* MPI is one per process: this process's rank, the number of ranks, and
 * whether rank 0 has told the workers to stop. */
static int my_rank = -1, n_ranks, stopped;
/* Whether a waiting rank polls a while before it naps (spin.h: no more
 * ranks on this machine than cores). */
static int spin_ok;
/* Whether Open MPI was asked to yield while idle (cp_plan_mpi_start). */
static int yielding = 1;
/* Rank 0: the workers' state size (from their hellos) and the traffic. */
static int worker_n;
static long long traffic_out, traffic_in, traffic_jobs, own_jobs;

int cp_plan_mpi_rank(int *ranks) {
  *ranks = n_ranks;
  return my_rank;
}

void cp_plan_mpi_count(long long sent, long long received, long long jobs,
                       long long own) {
  traffic_out += sent;
  traffic_in += received;
  traffic_jobs += jobs;
  own_jobs += own;
}

int cp_plan_mpi_fail(cp_error *err, int rc, const char *what) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) len = 0;
  text[len] = 0;
  return cp_error_setc(err, CP_ERR_NUMERICAL, "mpi", "%s: %s", what, text);
}

int cp_plan_mpi_start(int *rank, int *ranks, cp_error *err) {
  /* Open MPI polls hard in every call unless it thinks the machine is
   * oversubscribed: our waits (MPI_Iprobe between naps) then cost a rank
   * and its neighbour their cores (mpirun -n 2 on this loaded 2-core
   * machine: push sst 600 nodes 10.5 s against 2.9 s yielding). Yielding
   * is asked for unless the user set it (other MPIs ignore the variable),
   * except where every rank of this machine has a core and the machine is
   * not loaded (spin.h: as for polling): there a yield buys nothing, and
   * every fruitless MPI_Iprobe paid a sched_yield (about 1.2 us of CPU
   * here, against 0.05 us without). Open MPI's mpirun says how many ranks
   * share this machine (OMPI_COMM_WORLD_LOCAL_SIZE); without it, yield. */
  const char *local_size = getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  int on_node = local_size ? atoi(local_size) : 0;
  int yield = on_node <= 0 || !cp_plan_spin_allowed(on_node);
  setenv("OMPI_MCA_mpi_yield_when_idle", yield ? "1" : "0", 0);
  const char *asked = getenv("OMPI_MCA_mpi_yield_when_idle");
  yielding = !asked || strcmp(asked, "0") != 0;
  int rc = MPI_Init(NULL, NULL);
  if (rc != MPI_SUCCESS) return cp_plan_mpi_fail(err, rc, "MPI_Init");
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  MPI_Comm_rank(MPI_COMM_WORLD, &my_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &n_ranks);
  MPI_Comm local;
  int n_local = n_ranks;
  if (MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0,
                          MPI_INFO_NULL, &local) == MPI_SUCCESS) {
    MPI_Comm_size(local, &n_local);
    MPI_Comm_free(&local);
  }
  spin_ok = cp_plan_spin_allowed(n_local);
  *rank = my_rank;
  *ranks = n_ranks;
  return 0;
}

/* Rank 0: the stop message to every worker (once). Not waited for: a
 * worker that died would hold a blocking send forever (MPI_Finalize
 * completes the others'). */
static void stop_workers(void) {
  if (my_rank != 0 || stopped) return;
  stopped = 1;
  for (int w = 1; w < n_ranks; ++w) {
    MPI_Request q;
    if (MPI_Isend(NULL, 0, MPI_BYTE, w, TAG_STOP, MPI_COMM_WORLD, &q) ==
        MPI_SUCCESS)
      MPI_Request_free(&q);
  }
}

void cp_plan_mpi_traffic(long long *jobs, long long *own, long long *sent,
                         long long *received) {
  *jobs = traffic_jobs;
  *own = own_jobs;
  *sent = traffic_out;
  *received = traffic_in;
}

void cp_plan_mpi_stop(void) {
  stop_workers();
  MPI_Finalize();
}

/* Receives the message that MPI_Probe/Iprobe announced in st into b. */
int cp_plan_mpi_receive(cp_wire_buf *b, const MPI_Status *st, cp_error *err) {
  int len = 0;
  MPI_Get_count(st, MPI_BYTE, &len);
  if ((size_t)len > b->cap) {
    void *p = realloc(b->p, (size_t)len);
    if (!p) return cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
    b->p = p;
    b->cap = (size_t)len;
  }
  int rc = MPI_Recv(b->p, len, MPI_BYTE, st->MPI_SOURCE, st->MPI_TAG,
                    MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  if (rc != MPI_SUCCESS) return cp_plan_mpi_fail(err, rc, "receive");
  b->len = (size_t)len;
  return 0;
}

/* MPI_Iprobe polled for up to `seconds` (spin.h); MPI_SUCCESS with *got
 * and st, or an MPI error. */
typedef struct probe {
  int source, tag, rc, *got;
  MPI_Status *st;
} probe;

static int probed(void *ctx) {
  probe *q = ctx;
  q->rc = MPI_Iprobe(q->source, q->tag, MPI_COMM_WORLD, q->got, q->st);
  return q->rc != MPI_SUCCESS || *q->got;
}

static int poll_for(int source, int tag, MPI_Status *st, double seconds,
                    int *got) {
  probe q = {source, tag, MPI_SUCCESS, got, st};
  cp_plan_spin_until(probed, &q, seconds, 16);
  return q.rc;
}

/* MPI_Probe that polls a while (where every rank here has a core:
 * spin_ok), then naps 20 us between MPI_Iprobe calls instead of spinning
 * (Open MPI's blocking calls busy-wait: a rank waiting would take the core
 * of the ranks at work; a nap is 20-80 us, much of a short expansion).
 * Returns MPI_SUCCESS with st, an MPI error, or -1 once *cancel (may be
 * NULL) is set. */
int cp_plan_mpi_wait_for(int source, int tag, MPI_Status *st,
                    volatile sig_atomic_t *cancel) {
  const struct timespec nap = {0, 20000};
  int got = 0;
  if (spin_ok) {
    int rc = poll_for(source, tag, st, CP_PLAN_SPIN_SECONDS, &got);
    if (rc != MPI_SUCCESS || got) return rc;
  }
  for (;;) {
    int rc = MPI_Iprobe(source, tag, MPI_COMM_WORLD, &got, st);
    if (rc != MPI_SUCCESS || got) return rc;
    if (cancel && __atomic_load_n(cancel, __ATOMIC_RELAXED)) return -1;
    nanosleep(&nap, NULL);
  }
}

/* MPI_Send that naps between tests instead of blocking: a send to a rank
 * that died never completes (its shared-memory queue fills up), and the
 * SIGTERM mpirun then sends must still stop the search. Returns
 * MPI_SUCCESS, an MPI error, or -1 once *cancel (may be NULL) is set (the
 * send is then left to MPI; buf must stay allocated). */
int cp_plan_mpi_send_polled(const void *buf, int len, int dest, int tag,
                       volatile sig_atomic_t *cancel) {
  const struct timespec nap = {0, 20000};
  MPI_Request q;
  int rc = MPI_Isend(buf, len, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &q);
  for (int done = 0; rc == MPI_SUCCESS;) {
    rc = MPI_Test(&q, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS || done) return rc;
    if (cancel && __atomic_load_n(cancel, __ATOMIC_RELAXED)) {
      MPI_Request_free(&q);
      return -1;
    }
    nanosleep(&nap, NULL);
  }
  return rc;
}

/* ---- workers ---------------------------------------------------------- */

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
  else cp_task_hash(task, key);
  int n = pw ? cp_plan_world_problem(pw)->n : 0;
  if (hello(pw ? 0 : -1, n, why, err)) {
    cp_plan_world_destroy(pw);
    cp_plan_mpi_quiet_end(&q);
    return -1;
  }
  const cp_search_problem *p = pw ? cp_plan_world_problem(pw) : NULL;
  cp_wire_buf in = {0}, out = {0};
  cp_wire_slot slot = {0};
  MPI_Status st;
  int rc;
  while ((rc = cp_plan_mpi_next_order(&in, &st, err)) > 0) {
    int tag = TAG_OUTCOME;
    if (st.MPI_TAG == TAG_RUN && p) {
      int r = serve_run(task, pw, &in, &out, &e);
      if (r == 1) continue; /* stopped: the stop is the next message */
      tag = r ? TAG_FAIL : TAG_RUN_DONE;
    } else if (st.MPI_TAG != TAG_JOB || !p) {
      cp_error_setc(&e, CP_ERR_INPUT, "mpi", "unexpected message (tag %d)",
                    st.MPI_TAG);
      tag = TAG_FAIL;
    } else if (cp_wire_job_decode(in.p, in.len, n, &slot, &e)) {
      tag = TAG_FAIL;
    } else {
      cp_wire_job_run(p, &slot);
      if (cp_wire_outcome_encode(&slot.job, n, &out, &e)) tag = TAG_FAIL;
    }
    if (cp_plan_mpi_reply(tag, &out, &e, err)) {
      rc = -1;
      break;
    }
  }
  cp_wire_slot_free(&slot);
  cp_wire_buf_free(&in);
  cp_wire_buf_free(&out);
  cp_plan_world_destroy(pw);
  cp_plan_mpi_quiet_end(&q);
  return rc;
}

/* ---- rank 0 ----------------------------------------------------------- */

/* The jobs a worker has in flight at most: while it runs one, the next
 * waits in its queue, so it starts that one the moment it has sent the
 * outcome back, instead of waiting until rank 0 (running a job of its own,
 * or writing the store) sees the answer and sends another. */
enum { DEPTH = 2 };

/* A job in flight: its index in the batch, its message and the send's
 * request (the message stays until the send is complete: at the latest
 * when the job's answer is back). */
typedef struct flight {
  int job;
  MPI_Request q;
  cp_wire_buf out;
} flight;

typedef struct remote {
  flight *fly;                   /* [n_ranks * DEPTH] worker w's jobs, in
                                    the order sent: w * DEPTH + (head[w] +
                                    i) % DEPTH for i < depth[w] */
  int *head, *depth;             /* [n_ranks] */
  cp_wire_buf in;
  volatile sig_atomic_t *cancel; /* the search's (NULL: none) */
  /* The batch under way, for look_within: its jobs, count, state size,
   * budget, and batch()'s next and running. */
  cp_expand_job *jobs;
  int count, n, *next, *running;
  const cp_search_budget *budget;
  int failed;                    /* look_within met a failure */
  double *due;                   /* [n_ranks] when worker w's oldest answer
                                    is expected (monotonic s) */
  double next_look;              /* when rank 0 looks next (monotonic s) */
  double within;                 /* its looks in the current own job (s:
                                    look_within says on which clock) */
  double log_job;                /* the mean log of the wall time of rank
                                    0's own jobs (s): a worker's, on the
                                    same machine */
  double job;                    /* exp(log_job): a typical job (s) */
} remote;

/* Rank 0's time in the batches (cp_plan_mpi_rank0_times). */
static cp_plan_mpi_rank0 rank0;

void cp_plan_mpi_rank0_times(cp_plan_mpi_rank0 *t) { *t = rank0; }

/* Worker w's oldest job in flight. */
static flight *oldest(remote *r, int w) {
  return &r->fly[w * DEPTH + r->head[w]];
}

/* Rank 0 looks for answers only when one may be due (look_due; the why
 * and the figures: docs/parallel.md, "MPI"): half a typical job -- the
 * geometric mean of the wall times of rank 0's own jobs -- after a worker
 * began its oldest job (sent to it idle, or queued behind the answer
 * that came last); after a fruitless look, again every 1/LOOK_PARTS of a
 * typical job, never sooner than LOOK_EVERY s; never while no job is left
 * to hand out. A fruitless MPI_Iprobe costs a sched_yield under
 * mpi_yield_when_idle, and timing it two thread-CPU clock syscalls. */
#define LOOK_EVERY 50e-6
#define LOOK_PARTS 16

/* Worker w's oldest job was begun now: its answer is due half a typical
 * job on. */
static void expect(remote *r, int w, double now) {
  r->due[w] = now + 0.5 * r->job;
  if (r->due[w] < r->next_look) r->next_look = r->due[w];
}

/* Whether rank 0 should look for answers now (see above). */
static int look_due(const remote *r, double now) {
  return *r->running && *r->next < r->count && now >= r->next_look;
}

/* An answer came: rank 0 looks next when the first one is due. */
static void reschedule(remote *r) {
  r->next_look = 1e300;
  for (int w = 1; w < n_ranks; ++w)
    if (r->depth[w] && r->due[w] < r->next_look) r->next_look = r->due[w];
}

/* A look at `now` (got: it found an answer, which collect reschedules);
 * after a fruitless one, when to look again. */
static void looked(remote *r, double now, int got) {
  rank0.looks++;
  if (got) return;
  rank0.fruitless++;
  double wait = r->job / LOOK_PARTS;
  r->next_look = now + (wait > LOOK_EVERY ? wait : LOOK_EVERY);
}

/* Marks job j failed by worker w, with the reason. */
static void job_failed(cp_expand_job *j, int w, const char *fmt,
                       const char *why) {
  j->rc = -1;
  char text[sizeof j->info.message - 32];
  snprintf(text, sizeof text, fmt, why);
  snprintf(j->info.message, sizeof j->info.message, "rank %d: %s", w, text);
}

/* Job k to worker w, behind the jobs it has in flight. 0, or -1 when the
 * batch must end (the job says why). */
static int send_job(remote *r, int w, int n, const cp_search_budget *budget,
                    cp_expand_job *jobs, int k) {
  cp_error e;
  flight *f = &r->fly[w * DEPTH + (r->head[w] + r->depth[w]) % DEPTH];
  if (cp_wire_job_encode(&jobs[k], n, cp_search_budget_left(budget), &f->out,
                         &e)) {
    job_failed(&jobs[k], 0, "%s", e.msg);
    return -1;
  }
  /* Not waited for: a worker that died never takes it, and a large job
   * (beyond MPI's eager limit) would hold rank 0 until the worker has
   * finished the job before it. */
  int rc = MPI_Isend(f->out.p, (int)f->out.len, MPI_BYTE, w, TAG_JOB,
                     MPI_COMM_WORLD, &f->q);
  if (rc != MPI_SUCCESS) {
    cp_plan_mpi_fail(&e, rc, "sending a job");
    job_failed(&jobs[k], w, "%s", e.msg);
    return -1;
  }
  traffic_out += (long long)f->out.len;
  traffic_jobs++;
  f->job = k;
  if (!r->depth[w]++) expect(r, w, cp_clock_now());
  return 0;
}

/* Tops worker w's jobs in flight up from the batch's next ones: to one,
 * and on to `upto` (<= DEPTH) while a job is left for rank 0 besides (the
 * batch's last job is rank 0's when it is free, rather than queued behind
 * a worker's). 0, or -1 as send_job. */
static int refill(remote *r, int w, int upto, int n,
                  const cp_search_budget *budget, cp_expand_job *jobs,
                  int count, int *next, int *running) {
  while (*next < count && r->depth[w] < upto &&
         (!r->depth[w] || count - *next >= 2)) {
    if (send_job(r, w, n, budget, jobs, *next)) return -1;
    ++*next;
    ++*running;
  }
  return 0;
}

/* Receives the message announced in st (an outcome or a failure of the
 * oldest job worker st->MPI_SOURCE has in flight) into its job; tops that
 * worker's jobs up (refill). 0, or -1 when the batch must end (the job
 * that says why has rc -1). */
static int collect(remote *r, const MPI_Status *st, int n,
                   const cp_search_budget *budget, cp_expand_job *jobs,
                   int count, int *next, int *running) {
  cp_error e;
  int w = st->MPI_SOURCE;
  int k = w > 0 && w < n_ranks && r->depth[w] ? oldest(r, w)->job : -1;
  if (cp_plan_mpi_receive(&r->in, st, &e)) {
    job_failed(&jobs[k >= 0 ? k : 0], w, "%s", e.msg);
    return -1;
  }
  traffic_in += (long long)r->in.len;
  if (k < 0 || (st->MPI_TAG != TAG_OUTCOME && st->MPI_TAG != TAG_FAIL)) {
    job_failed(&jobs[0], w, "unexpected %s message",
               st->MPI_TAG == TAG_HELLO ? "hello" : "out-of-turn");
    return -1;
  }
  /* The worker answered the job, so it has its message: the send is done
   * (MPI_Wait only completes it on this side). */
  MPI_Wait(&oldest(r, w)->q, MPI_STATUS_IGNORE);
  r->head[w] = (r->head[w] + 1) % DEPTH;
  if (--r->depth[w]) expect(r, w, cp_clock_now());
  --*running;
  if (st->MPI_TAG == TAG_FAIL) {
    char why[512];
    snprintf(why, sizeof why, "%.*s", (int)r->in.len, (char *)r->in.p);
    job_failed(&jobs[k], w, "%s", why);
    return -1;
  }
  if (cp_wire_outcome_decode(r->in.p, r->in.len, n, &jobs[k], &e)) {
    job_failed(&jobs[k], w, "%s", e.msg);
    return -1;
  }
  int rc = refill(r, w, DEPTH, n, budget, jobs, count, next, running);
  reschedule(r);
  return rc;
}

/* Rank 0 within a job of its own, after every world step (through
 * cp_plan_world_observe): when an answer is due (look_due), the answers
 * that have arrived are collected and their workers topped up, so that a
 * worker done with its jobs does not wait for rank 0's long job to end. A
 * failure is left in its job and ends the batch after this job. */
static void look_within(void *ctx, const cp_world *world) {
  remote *r = ctx;
  (void)world;
  double now = cp_clock_now();
  if (r->failed || !look_due(r, now)) return;
  /* Timed on the thread-CPU clock where MPI yields (a yield on a loaded
   * machine can last a scheduling round, not CPU), else on the monotonic
   * one (the same for calls that neither block nor yield, and no system
   * call). */
  double c = yielding ? cp_clock_thread_cpu() : now;
  int got = 0;
  while (*r->running) {
    MPI_Status st;
    int one = 0;
    if (MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &one, &st) !=
            MPI_SUCCESS ||
        !one)
      break;
    ++got;
    if (collect(r, &st, r->n, r->budget, r->jobs, r->count, r->next,
                r->running)) {
      r->failed = 1;
      break;
    }
  }
  looked(r, now, got);
  r->within += (yielding ? cp_clock_thread_cpu() : cp_clock_now()) - c;
}

/* Jobs to every worker (DEPTH each while enough are left); then, until
 * the batch is back: an answer that has arrived is collected (its worker
 * is topped up), else rank 0 runs the next job itself, else it waits for
 * an answer. Rank 0's thread CPU goes to `rank0`: its own jobs, the
 * caller's work during the batch, the waits, and the rest (the messages). */
static int batch(remote *r, const cp_search_problem *own,
                 const cp_search_budget *budget, cp_expand_job *jobs,
                 int count, const cp_batch_meanwhile *meanwhile) {
  int n = own->n, next = 0, running = 0;
  r->jobs = jobs;
  r->count = count;
  r->n = n;
  r->next = &next;
  r->running = &running;
  r->budget = budget;
  r->failed = 0;
  r->next_look = 1e300;
  if (n_ranks > 1 && n != worker_n) {
    char why[128];
    snprintf(why, sizeof why, "its world has a state of %d numbers, rank "
             "0's %d (not the same task?)", worker_n, n);
    job_failed(&jobs[0], 1, "%s", why);
    return 0;
  }
  for (int upto = 1; upto <= DEPTH; ++upto)
    for (int w = 1; w < n_ranks && next < count; ++w)
      if (refill(r, w, upto, n, budget, jobs, count, &next, &running))
        return 0;
  /* Rank 0's own work (the store's commit of the batches before) while the
   * workers simulate. */
  if (meanwhile) {
    double c = cp_clock_thread_cpu();
    meanwhile->fn(meanwhile->ctx);
    rank0.store += cp_clock_thread_cpu() - c;
  }
  /* The thread-CPU clock is a system call (1-2 us): read once between
   * the parts of the loop, each part measured from the last reading. */
  double mark = cp_clock_thread_cpu();
  while (next < count || running) {
    MPI_Status st;
    cp_error e;
    int got = 0, rc = MPI_SUCCESS;
    double now = cp_clock_now();
    if (look_due(r, now)) {
      rc = MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &got, &st);
      looked(r, now, got);
      double c = cp_clock_thread_cpu();
      rank0.looking += c - mark;
      mark = c;
    }
    if (rc == MPI_SUCCESS && !got) {
      if (next < count) {
        r->within = 0;
        now = cp_clock_now();
        cp_expand_job_run(own->expand, own->ctx, &jobs[next++]);
        double c = cp_clock_thread_cpu();
        double span = cp_clock_now() - now - r->within;
        if (span > 1e-7) {
          double l = log(span);
          r->log_job = r->job > 0 ? 0.9 * r->log_job + 0.1 * l : l;
          r->job = exp(r->log_job);
        }
        rank0.own += c - mark - r->within;
        rank0.looking += r->within;
        mark = c;
        ++own_jobs;
        if (r->failed) return 0;
        continue;
      }
      rc = cp_plan_mpi_wait_for(MPI_ANY_SOURCE, MPI_ANY_TAG, &st, r->cancel);
      double c = cp_clock_thread_cpu();
      rank0.waiting += c - mark;
      rank0.waiting_wall += cp_clock_now() - now;
      mark = c;
    }
    /* Stopped (a signal): the jobs not back are not run; the search rolls
     * the batch back. */
    if (rc == -1) return 0;
    if (rc != MPI_SUCCESS) {
      cp_plan_mpi_fail(&e, rc, "waiting for the workers");
      job_failed(&jobs[0], 0, "%s", e.msg);
      return 0;
    }
    if (collect(r, &st, n, budget, jobs, count, &next, &running)) return 0;
    mark = cp_clock_thread_cpu(); /* the message's CPU: the rest */
  }
  return 0;
}

static int run_batch(void *ctx, const cp_search_problem *own,
                     const cp_search_budget *budget, cp_expand_job *jobs,
                     int count, const cp_batch_meanwhile *meanwhile) {
  double c = cp_clock_thread_cpu(), t = cp_clock_now();
  /* own->ctx is the world of cp_plan_task (cp_plan_world_problem). */
  cp_plan_world *pw = own->ctx;
  if (n_ranks > 1) cp_plan_world_observe(pw, look_within, ctx);
  int rc = batch(ctx, own, budget, jobs, count, meanwhile);
  cp_plan_world_observe(pw, NULL, NULL);
  rank0.cpu += cp_clock_thread_cpu() - c;
  rank0.wall += cp_clock_now() - t;
  rank0.batches++;
  return rc;
}

/* Frees r's messages; one whose send is not complete (a batch that ended
 * early: a failure, a signal) is left to MPI. */
static void remote_free(remote *r) {
  for (int s = 0; r->fly && s < n_ranks * DEPTH; ++s) {
    flight *f = &r->fly[s];
    int done = 1;
    if (f->q != MPI_REQUEST_NULL &&
        (MPI_Test(&f->q, &done, MPI_STATUS_IGNORE) != MPI_SUCCESS || !done))
      MPI_Request_free(&f->q);
    if (done) cp_wire_buf_free(&f->out);
  }
  free(r->fly);
  free(r->due);
  free(r->head);
  free(r->depth);
  cp_wire_buf_free(&r->in);
}

/* Rank 0: every worker's hello; 0, or -1 with err naming the first that
 * could not load the task or loaded another one (its key, cp_task_hash:
 * the bytes of the task and every file it read, differs from task's). */
static int greet(const cp_task *task, cp_error *err) {
  cp_wire_buf in = {0};
  char key[CP_TASK_KEY_SIZE];
  cp_task_hash(task, key);
  int rc = 0;
  for (int w = 1; w < n_ranks; ++w) {
    MPI_Status st;
    int r = MPI_Probe(w, TAG_HELLO, MPI_COMM_WORLD, &st);
    if (r != MPI_SUCCESS) {
      rc = cp_plan_mpi_fail(err, r, "waiting for the workers");
      break;
    }
    if ((rc = cp_plan_mpi_receive(&in, &st, err))) break;
    int32_t h[2] = {-1, 0};
    if (in.len >= 8) memcpy(h, in.p, 8);
    const char *text = in.len > 8 ? (const char *)in.p + 8 : "";
    size_t len = in.len > 8 ? in.len - 8 : 0;
    if (!h[0] && (len != strlen(key) || memcmp(text, key, len))) {
      rc = cp_error_setc(err, CP_ERR_INPUT, "mpi",
                         "rank %d loaded another task than rank 0 (the task "
                         "or a file it reads differs: key %.12s... against "
                         "%.12s...)", w, len >= 12 ? text : "?", key);
      break;
    }
    worker_n = h[1];
    if (h[0]) {
      rc = cp_error_setc(err, CP_ERR_INPUT, "mpi",
                         "rank %d could not load the task: %.*s", w,
                         (int)(in.len > 8 ? in.len - 8 : 0),
                         (char *)in.p + 8);
      break;
    }
  }
  cp_wire_buf_free(&in);
  return rc;
}

cp_plan_status cp_plan_mpi_task(cp_store *st, const cp_task *task,
                                const cp_plan_options *opt,
                                cp_plan_result *res, cp_error *err) {
  memset(res, 0, sizeof *res);
  res->plan_id = -1;
  if (my_rank != 0) {
    cp_error_setc(err, CP_ERR_INPUT, "mpi",
                  "planning with MPI runs the search on rank 0 (this is "
                  "rank %d of %d)",
                  my_rank, n_ranks);
    return res->status = CP_PLAN_BAD_INPUT;
  }
  if (greet(task, err)) {
    stop_workers();
    return res->status =
               err->code == CP_ERR_INPUT ? CP_PLAN_BAD_INPUT : CP_PLAN_FAILED;
  }
  remote r = {0};
  r.fly = calloc((size_t)n_ranks * DEPTH, sizeof *r.fly);
  r.head = calloc((size_t)n_ranks, sizeof *r.head);
  r.depth = calloc((size_t)n_ranks, sizeof *r.depth);
  r.due = calloc((size_t)n_ranks, sizeof *r.due);
  if (!r.fly || !r.head || !r.depth || !r.due) {
    remote_free(&r);
    stop_workers();
    cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
    return res->status = CP_PLAN_FAILED;
  }
  for (int k = 0; k < n_ranks * DEPTH; ++k) r.fly[k].q = MPI_REQUEST_NULL;
  cp_plan_options o = opt ? *opt : cp_plan_defaults();
  r.cancel = o.cancel;
  o.run_batch = run_batch;
  o.run_batch_ctx = &r;
  cp_plan_status s = cp_plan_task(st, task, &o, res, err);
  stop_workers();
  remote_free(&r);
  return s;
}

/* ---- benchmarks (rank 0) ------------------------------------------------- */

/* cp_bench_remote over the worker ranks: a run to every idle worker; the
 * answers (a store each) wait in `done` until the benchmark imports them
 * in run order. */
typedef struct bench_remote {
  const cp_task *task;
  const char *task_path;
  volatile sig_atomic_t *cancel; /* cp_bench_options.cancel (may be NULL) */
  int *busy;                 /* [n_ranks] the run a worker searches, or -1 */
  unsigned char **stores;    /* [runs] the answer's message, until imported */
  size_t *store_at, *store_len;
  int n_runs;
  cp_wire_buf in, out;
  cp_plan_progress *samples;
  int samples_cap;
} bench_remote;

static int bench_start(void *ctx, int k, const cp_plan_options *o,
                       cp_error *err) {
  bench_remote *r = ctx;
  int w = 1;
  while (w < n_ranks && r->busy[w] >= 0) ++w;
  if (w == n_ranks || k < 0 || k >= r->n_runs)
    return cp_error_setc(err, CP_ERR_NUMERICAL, "mpi",
                         "no idle rank for run %d", k);
  cp_wire_run run = {.k = k, .seed = o->seed, .max_seconds = o->max_seconds,
                     .max_nodes = o->max_nodes};
  snprintf(run.method, sizeof run.method, "%s", o->method ? o->method : "");
  if (cp_wire_run_encode(&run, &r->out, err)) return -1;
  int rc = MPI_Send(r->out.p, (int)r->out.len, MPI_BYTE, w, TAG_RUN,
                    MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS) return cp_plan_mpi_fail(err, rc, "sending a run");
  traffic_out += (long long)r->out.len;
  traffic_jobs++;
  r->busy[w] = k;
  return 0;
}

static int bench_wait(void *ctx, int *k, cp_plan_status *status,
                      cp_plan_result *res, cp_error *run_err,
                      const cp_plan_progress **samples, int *n_samples,
                      cp_error *err) {
  bench_remote *r = ctx;
  MPI_Status st;
  *k = -1;
  int rc = cp_plan_mpi_wait_for(MPI_ANY_SOURCE, MPI_ANY_TAG, &st, r->cancel);
  if (rc == -1)
    return cp_error_setc(err, CP_ERR_NUMERICAL, "mpi",
                         "stopped by a signal while "
                         "waiting for the workers");
  if (rc != MPI_SUCCESS) return cp_plan_mpi_fail(err, rc, "waiting for the workers");
  if (cp_plan_mpi_receive(&r->in, &st, err)) return -1;
  traffic_in += (long long)r->in.len;
  int w = st.MPI_SOURCE;
  if (w <= 0 || w >= n_ranks || r->busy[w] < 0)
    return cp_error_setc(err, CP_ERR_NUMERICAL, "mpi",
                         "rank %d: a message (tag %d) out of turn", w,
                         st.MPI_TAG);
  int run = r->busy[w];
  r->busy[w] = -1;
  if (st.MPI_TAG == TAG_FAIL)
    return cp_error_setc(err, CP_ERR_NUMERICAL, "mpi",
                         "rank %d: run %d: %.*s", w,
                         run, (int)r->in.len, (char *)r->in.p);
  cp_wire_run_done d;
  cp_error e;
  if (st.MPI_TAG != TAG_RUN_DONE ||
      cp_wire_run_done_decode(r->in.p, r->in.len, &d, &r->samples,
                              &r->samples_cap, &e) ||
      d.k != run)
    return cp_error_setc(err, CP_ERR_NUMERICAL, "mpi",
                         "rank %d: run %d: %s", w, run,
                         st.MPI_TAG != TAG_RUN_DONE ? "an unexpected message"
                         : d.k != run               ? "another run's answer"
                                                    : e.msg);
  /* The message is kept (its store is imported later); the buffer is
   * handed over and a new one grows for the next answer. */
  r->stores[run] = r->in.p;
  r->store_at[run] = (size_t)((const unsigned char *)d.store - r->in.p);
  r->store_len[run] = d.store_len;
  memset(&r->in, 0, sizeof r->in);
  *k = run;
  *status = d.status;
  *res = d.res;
  *run_err = d.err;
  *samples = d.samples;
  *n_samples = d.n_samples;
  return 0;
}

static int bench_import(void *ctx, cp_store *st, int k, cp_plan_result *res,
                        cp_error *err) {
  bench_remote *r = ctx;
  int64_t task_id, run_id, plan_id;
  cp_store_status s = cp_store_task(st, r->task, r->task_path, &task_id);
  if (!s && res->run_id >= 0)
    s = cp_store_import_run(st, r->stores[k] + r->store_at[k],
                            r->store_len[k], res->run_id, task_id, &run_id,
                            &plan_id);
  free(r->stores[k]);
  r->stores[k] = NULL;
  if (s) return cp_error_setc(err, CP_ERR_IO, "", "%s", cp_store_message(st));
  if (res->run_id >= 0) {
    res->run_id = run_id;
    res->plan_id = plan_id;
  }
  return 0;
}

cp_plan_status cp_plan_mpi_benchmark(cp_store *st, const cp_task *task,
                                     const cp_search_problem *p,
                                     const double *x0,
                                     const char *world_options,
                                     const cp_bench_options *bo,
                                     int64_t *experiment_id, cp_error *err) {
  if (my_rank != 0) {
    cp_error_setc(err, CP_ERR_INPUT, "mpi",
                  "an MPI benchmark runs on rank 0 (this is rank %d of %d)",
                  my_rank, n_ranks);
    return CP_PLAN_BAD_INPUT;
  }
  if (greet(task, err)) {
    stop_workers();
    return err->code == CP_ERR_INPUT ? CP_PLAN_BAD_INPUT : CP_PLAN_FAILED;
  }
  cp_bench_options o = *bo;
  if (n_ranks == 1) { /* no worker: one run after another, here */
    o.threads = 1;
    cp_plan_status s = cp_plan_benchmark(st, task, p, x0, world_options, &o,
                                         experiment_id, err);
    stop_workers();
    return s;
  }
  int runs = o.runs;
  int planners = 0;
  while (o.planners && o.planners[planners]) ++planners;
  int n_runs = (planners ? planners : 1) * runs;
  bench_remote r = {.task = task, .task_path = o.task_path,
                    .cancel = o.cancel, .n_runs = n_runs};
  r.busy = malloc((size_t)n_ranks * sizeof *r.busy);
  r.stores = calloc((size_t)(n_runs ? n_runs : 1), sizeof *r.stores);
  r.store_at = calloc((size_t)(n_runs ? n_runs : 1), sizeof *r.store_at);
  r.store_len = calloc((size_t)(n_runs ? n_runs : 1), sizeof *r.store_len);
  cp_plan_status s = CP_PLAN_FAILED;
  if (!r.busy || !r.stores || !r.store_at || !r.store_len) {
    cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  } else {
    for (int w = 0; w < n_ranks; ++w) r.busy[w] = -1;
    cp_bench_remote remote = {n_ranks - 1, &r, bench_start, bench_wait,
                              bench_import};
    o.remote = &remote;
    s = cp_plan_benchmark(st, task, p, x0, world_options, &o, experiment_id,
                          err);
  }
  stop_workers();
  for (int k = 0; r.stores && k < n_runs; ++k) free(r.stores[k]);
  free(r.stores);
  free(r.store_at);
  free(r.store_len);
  free(r.busy);
  free(r.samples);
  cp_wire_buf_free(&r.in);
  cp_wire_buf_free(&r.out);
  return s;
}
