/* Planning with MPI (planner/plan/mpi.h, docs/parallel.md): rank 0 runs
 * cp_plan_task with a batch runner that hands the jobs to ranks 1 .. R-1,
 * one job per worker at a time (the next goes to whichever answers
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
 * ITEM_DONE (cp_plan_mpi_items_run: "CPI1", the item's number, then the
 * caller's request or answer bytes).
 *
 * Rank 0, free with jobs left, runs one itself unless a worker is about
 * to answer (soon()); a worker waiting for its next job, and rank 0
 * waiting for the batch's last answers, poll MPI_Iprobe for up to 2 ms
 * before they nap between polls (while every rank here has a core:
 * planner/plan/spin.h).
 *
 * Rank 0 waits for outcomes by polling (MPI_Iprobe and a short sleep)
 * rather than in a blocking receive, so that SIGINT or SIGTERM -- which
 * mpirun sends every rank when one of them dies -- still stops the search:
 * the jobs not back count as not run (rc 1, as a spent budget), the
 * search rolls the batch back and commits, and the run is resumable. */
#include "planner/plan/mpi.h"

#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "planner/plan/spin.h"
#include "planner/plan/wire.h"

enum { TAG_HELLO = 1, TAG_JOB, TAG_OUTCOME, TAG_FAIL, TAG_STOP, TAG_RUN,
       TAG_RUN_DONE, TAG_ITEM, TAG_ITEM_DONE };

/* MPI is one per process: this process's rank, the number of ranks, and
 * whether rank 0 has told the workers to stop. */
static int my_rank = -1, n_ranks, stopped;
/* Whether a waiting rank polls a while before it naps (spin.h: no more
 * ranks on this machine than cores). */
static int spin_ok;
/* Rank 0: the workers' state size (from their hellos) and the traffic. */
static int worker_n;
static long long traffic_out, traffic_in, traffic_jobs, own_jobs;

static int mpi_fail(cp_error *err, int rc, const char *what) {
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
   * machine: push sst 600 nodes 10.5 s against 2.9 s yielding). Asked
   * for here unless the user set it (other MPIs ignore the variable). */
  setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0);
  int rc = MPI_Init(NULL, NULL);
  if (rc != MPI_SUCCESS) return mpi_fail(err, rc, "MPI_Init");
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
static int receive(cp_wire_buf *b, const MPI_Status *st, cp_error *err) {
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
  if (rc != MPI_SUCCESS) return mpi_fail(err, rc, "receive");
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
static int wait_for(int source, int tag, MPI_Status *st,
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
static int send_polled(const void *buf, int len, int dest, int tag,
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
  return rc == MPI_SUCCESS ? 0 : mpi_fail(err, rc, "hello to rank 0");
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
typedef struct quiet {
  struct sigaction term, intr;
} quiet;

static void quiet_begin(quiet *q) {
  struct sigaction ign;
  memset(&ign, 0, sizeof ign);
  ign.sa_handler = SIG_IGN;
  sigemptyset(&ign.sa_mask);
  sigaction(SIGTERM, &ign, &q->term);
  sigaction(SIGINT, &ign, &q->intr);
}

static void quiet_end(const quiet *q) {
  sigaction(SIGTERM, &q->term, NULL);
  sigaction(SIGINT, &q->intr, NULL);
}

/* A worker: the next message from rank 0 into in (st: its envelope).
 * 1: a message to answer, 0: stop, -1: err (MPI failed). */
static int next_order(cp_wire_buf *in, MPI_Status *st, cp_error *err) {
  int r = wait_for(0, MPI_ANY_TAG, st, NULL);
  if (r != MPI_SUCCESS) return mpi_fail(err, r, "waiting for rank 0");
  if (receive(in, st, err)) return -1;
  return st->MPI_TAG != TAG_STOP;
}

/* A worker's answer to rank 0: out under tag, or for TAG_FAIL the text of
 * e. 0, or -1 with err. */
static int reply(int tag, const cp_wire_buf *out, const cp_error *e,
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
  return r == MPI_SUCCESS ? 0 : mpi_fail(err, r, "sending to rank 0");
}

int cp_plan_mpi_serve(const cp_task *task, const cp_error *load_err,
                      cp_error *err) {
  quiet q;
  quiet_begin(&q);
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
    quiet_end(&q);
    return -1;
  }
  const cp_search_problem *p = pw ? cp_plan_world_problem(pw) : NULL;
  cp_wire_buf in = {0}, out = {0};
  cp_wire_slot slot = {0};
  MPI_Status st;
  int rc;
  while ((rc = next_order(&in, &st, err)) > 0) {
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
    if (reply(tag, &out, &e, err)) {
      rc = -1;
      break;
    }
  }
  cp_wire_slot_free(&slot);
  cp_wire_buf_free(&in);
  cp_wire_buf_free(&out);
  cp_plan_world_destroy(pw);
  quiet_end(&q);
  return rc;
}

/* ---- rank 0 ----------------------------------------------------------- */

typedef struct remote {
  int *busy;                     /* [n_ranks] the job a worker runs, or -1 */
  double *sent;                  /* [n_ranks] when it was sent (s) */
  double own;                    /* rank 0's time per job of its own (s) */
  cp_wire_buf out, in;
  volatile sig_atomic_t *cancel; /* the search's (NULL: none) */
  int abandoned;                 /* a send of `out` was left to MPI */
} remote;

/* Marks job j failed by worker w, with the reason. */
static void job_failed(cp_expand_job *j, int w, const char *fmt,
                       const char *why) {
  j->rc = -1;
  char text[sizeof j->info.message - 32];
  snprintf(text, sizeof text, fmt, why);
  snprintf(j->info.message, sizeof j->info.message, "rank %d: %s", w, text);
}

/* 0, or -1 when the batch must end: a failure (the job says why) or the
 * search's cancel flag (the job is left not run). */
static int send_job(remote *r, int w, int n, const cp_search_budget *budget,
                    cp_expand_job *jobs, int k) {
  cp_error e;
  if (r->abandoned) return -1; /* cancelled: `out` is MPI's now */
  if (cp_wire_job_encode(&jobs[k], n, cp_search_budget_left(budget), &r->out,
                         &e)) {
    job_failed(&jobs[k], 0, "%s", e.msg);
    return -1;
  }
  int rc = send_polled(r->out.p, (int)r->out.len, w, TAG_JOB, r->cancel);
  if (rc == -1) {
    r->abandoned = 1;
    return -1;
  }
  if (rc != MPI_SUCCESS) {
    mpi_fail(&e, rc, "sending a job");
    job_failed(&jobs[k], w, "%s", e.msg);
    return -1;
  }
  traffic_out += (long long)r->out.len;
  traffic_jobs++;
  r->busy[w] = k;
  r->sent[w] = cp_clock_now();
  return 0;
}

/* Receives the message announced in st (an outcome or a failure of the
 * job worker st->MPI_SOURCE runs) into its job; hands that worker the
 * next job, if any. 0, or -1 when the batch must end (the job that says
 * why has rc -1). */
static int collect(remote *r, const MPI_Status *st, int n,
                   const cp_search_budget *budget, cp_expand_job *jobs,
                   int count, int *next, int *running) {
  cp_error e;
  int w = st->MPI_SOURCE, k = w > 0 && w < n_ranks ? r->busy[w] : -1;
  if (receive(&r->in, st, &e)) {
    job_failed(&jobs[k >= 0 ? k : 0], w, "%s", e.msg);
    return -1;
  }
  traffic_in += (long long)r->in.len;
  if (k < 0 || (st->MPI_TAG != TAG_OUTCOME && st->MPI_TAG != TAG_FAIL)) {
    job_failed(&jobs[0], w, "unexpected %s message",
               st->MPI_TAG == TAG_HELLO ? "hello" : "out-of-turn");
    return -1;
  }
  r->busy[w] = -1;
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
  if (*next < count) {
    if (send_job(r, w, n, budget, jobs, (*next)++)) return -1;
    ++*running;
  }
  return 0;
}

/* How long rank 0, free with jobs left, waits for an answer before it
 * runs a job itself (s): a worker whose job has run at least half of
 * rank 0's time per job is about to answer and would otherwise wait for
 * the next job until rank 0 has run a whole one (rank 0 looks at the
 * answers only between its own jobs). 0 while no worker is that far, or
 * when polling would take a core another rank needs (spin_ok). */
static double soon(const remote *r) {
  if (!spin_ok || !(r->own > 0)) return 0;
  double now = cp_clock_now(), ran = 0;
  for (int w = 1; w < n_ranks; ++w)
    if (r->busy[w] >= 0 && now - r->sent[w] > ran) ran = now - r->sent[w];
  return ran >= 0.5 * r->own ? 1.25 * r->own - ran : 0;
}

/* One job to every worker; then, until the batch is back: an answer that
 * has arrived (or arrives soon: soon()) is collected (its worker gets the
 * next job), else rank 0 runs the next job itself, else it waits for an
 * answer. */
static int run_batch(void *ctx, const cp_search_problem *own,
                     const cp_search_budget *budget, cp_expand_job *jobs,
                     int count, const cp_batch_meanwhile *meanwhile) {
  remote *r = ctx;
  int n = own->n, next = 0, running = 0;
  if (n_ranks > 1 && n != worker_n) {
    char why[128];
    snprintf(why, sizeof why, "its world has a state of %d numbers, rank "
             "0's %d (not the same task?)", worker_n, n);
    job_failed(&jobs[0], 1, "%s", why);
    return 0;
  }
  for (int w = 1; w < n_ranks && next < count; ++w, ++next, ++running)
    if (send_job(r, w, n, budget, jobs, next)) return 0;
  /* Rank 0's own work (the store's commit of the batches before) while the
   * workers simulate. */
  if (meanwhile) meanwhile->fn(meanwhile->ctx);
  while (next < count || running) {
    MPI_Status st;
    cp_error e;
    int got = 0, rc = MPI_SUCCESS;
    if (running) rc = MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                                 &got, &st);
    double wait = next < count ? soon(r) : 0;
    if (rc == MPI_SUCCESS && !got && wait > 0)
      rc = poll_for(MPI_ANY_SOURCE, MPI_ANY_TAG, &st, wait, &got);
    if (rc == MPI_SUCCESS && !got) {
      if (next < count) {
        double t0 = cp_clock_now();
        cp_expand_job_run(own->expand, own->ctx, &jobs[next++]);
        double t = cp_clock_now() - t0;
        r->own = r->own > 0 ? 0.8 * r->own + 0.2 * t : t;
        ++own_jobs;
        continue;
      }
      rc = wait_for(MPI_ANY_SOURCE, MPI_ANY_TAG, &st, r->cancel);
    }
    /* Stopped (a signal): the jobs not back are not run; the search rolls
     * the batch back. */
    if (rc == -1) return 0;
    if (rc != MPI_SUCCESS) {
      mpi_fail(&e, rc, "waiting for the workers");
      job_failed(&jobs[0], 0, "%s", e.msg);
      return 0;
    }
    if (collect(r, &st, n, budget, jobs, count, &next, &running)) return 0;
  }
  return 0;
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
      rc = mpi_fail(err, r, "waiting for the workers");
      break;
    }
    if ((rc = receive(&in, &st, err))) break;
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
  r.busy = malloc((size_t)n_ranks * sizeof *r.busy);
  r.sent = calloc((size_t)n_ranks, sizeof *r.sent);
  if (!r.busy || !r.sent) {
    free(r.busy);
    free(r.sent);
    stop_workers();
    cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
    return res->status = CP_PLAN_FAILED;
  }
  for (int w = 0; w < n_ranks; ++w) r.busy[w] = -1;
  cp_plan_options o = opt ? *opt : cp_plan_defaults();
  r.cancel = o.cancel;
  o.run_batch = run_batch;
  o.run_batch_ctx = &r;
  cp_plan_status s = cp_plan_task(st, task, &o, res, err);
  stop_workers();
  free(r.busy);
  free(r.sent);
  cp_wire_buf_free(&r.in);
  if (!r.abandoned) cp_wire_buf_free(&r.out); /* else MPI may still read it */
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
  if (rc != MPI_SUCCESS) return mpi_fail(err, rc, "sending a run");
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
  int rc = wait_for(MPI_ANY_SOURCE, MPI_ANY_TAG, &st, r->cancel);
  if (rc == -1)
    return cp_error_setc(err, CP_ERR_NUMERICAL, "mpi",
                         "stopped by a signal while "
                         "waiting for the workers");
  if (rc != MPI_SUCCESS) return mpi_fail(err, rc, "waiting for the workers");
  if (receive(&r->in, &st, err)) return -1;
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

/* ---- independent items (cp_plan_mpi_items_run) ----------------------------- */

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
  int r = send_polled(out->p, (int)out->len, w, TAG_ITEM, it->cancel);
  if (r == -1) return -2; /* cancelled: out is MPI's now */
  if (r != MPI_SUCCESS) return mpi_fail(err, r, "sending an item");
  traffic_out += (long long)out->len;
  traffic_jobs++;
  return 0;
}

int cp_plan_mpi_items_run(const cp_plan_mpi_items *it, cp_error *err) {
  if (my_rank != 0)
    return cp_error_setc(err, CP_ERR_INPUT, "mpi", "the items are handed "
                         "out by rank 0 (this is rank %d of %d)", my_rank,
                         n_ranks);
  if (n_ranks == 1) {
    for (int i = 0; i < it->count; ++i) {
      if (item_here(it, i, err)) return -1;
      ++own_jobs;
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
    int r = wait_for(MPI_ANY_SOURCE, MPI_ANY_TAG, &st, it->cancel);
    if (r == -1) {
      rc = -2;
      break;
    }
    if (r != MPI_SUCCESS) {
      rc = mpi_fail(err, r, "waiting for the workers");
      break;
    }
    if ((rc = receive(&in, &st, err))) break;
    traffic_in += (long long)in.len;
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
  quiet q;
  quiet_begin(&q);
  cp_wire_buf in = {0}, out = {0};
  MPI_Status st;
  int rc;
  while ((rc = next_order(&in, &st, err)) > 0) {
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
    if (reply(tag, &out, &e, err)) {
      rc = -1;
      break;
    }
  }
  cp_wire_buf_free(&in);
  cp_wire_buf_free(&out);
  quiet_end(&q);
  return rc ? -1 : 0;
}
