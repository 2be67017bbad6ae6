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
 * number, then the caller's request or answer bytes). Benchmarks over
 * ranks: mpi_bench.c; the workers' side: mpi_serve.c.
 *
 * A worker has up to two jobs in flight (the second waits in its queue
 * while it runs the first), so it goes on to the next job without waiting
 * for rank 0 to see its answer; rank 0, free with jobs left, runs the next
 * one itself, and looks for answers after each step of it too
 * (look_within) and every few dozen pivots of its long LCP solves
 * (look_solve). A worker waiting for its next job, and rank 0 waiting for
 * the batch's last answers, poll MPI_Iprobe for up to 2 ms before they nap
 * between polls (while every rank here has a core: planner/plan/spin.h).
 *
 * Pipelined batches (search.pipeline): a batch is started (its jobs
 * handed out behind those of the batch out before it) and waited for
 * apart (batch_start / batch_wait), so two can be out at once; waiting
 * for the older, rank 0 runs jobs of the newer once the older has none
 * left to hand out. A plain batch is a start and a wait.
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
#ifdef __linux__
#include <sys/prctl.h>
#endif

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
  /* COMPLAN_MPI_POLL=1 polls (and does not ask MPI to yield) whatever the
   * machine, 0 never polls; unset or empty: decided here as below. */
  const char *poll = getenv("COMPLAN_MPI_POLL");
  int forced = poll && *poll ? strcmp(poll, "0") != 0 : -1;
  int yield = forced >= 0 ? !forced
                          : on_node <= 0 || !cp_plan_spin_allowed(on_node);
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
  spin_ok = forced >= 0 ? forced : cp_plan_spin_allowed(n_local);
#ifdef __linux__
  /* A rank's naps (nap()) are 20 us asked; Linux adds the thread's timer
   * slack, 50 us by default, so each nap slept 96 us here (median of
   * 2 000) and ended a wait up to that late. With a slack of 1 ns the
   * same nap sleeps 46 us. Only this (the calling) thread's timers. */
  prctl(PR_SET_TIMERSLACK, 1UL, 0UL, 0UL, 0UL);
#endif
  *rank = my_rank;
  *ranks = n_ranks;
  return 0;
}

/* Rank 0: the stop message to every worker (once). Not waited for: a
 * worker that died would hold a blocking send forever (MPI_Finalize
 * completes the others'). */
void cp_plan_mpi_stop_workers(void) {
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
  cp_plan_mpi_stop_workers();
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

/* One look for a message: MPI_Iprobe, and once more when it found
 * nothing. Open MPI 4.1's MPI_Iprobe (ob1) matches against the messages
 * already taken in and only then makes progress, which takes in what has
 * arrived since the last MPI call: a message that arrived meanwhile is
 * found only by the next probe. Rank 0 looks every 50 us or more while it
 * runs jobs of its own (look_due), so a single probe found a worker's
 * answer one look late: 46 us after it was sent (median) a fruitless look,
 * collected a median 102 us after it was sent (push, 2 ranks; a test
 * program looking every 50 us: 73-92 us with one probe against 13-48 us
 * with two). The second probe, after the first one's progress, finds it;
 * it costs what a fruitless probe costs (0.05 us, 1.2 us where MPI
 * yields). */
int cp_plan_mpi_look(int source, int tag, int *got, MPI_Status *st) {
  int rc = MPI_Iprobe(source, tag, MPI_COMM_WORLD, got, st);
  if (rc == MPI_SUCCESS && !*got)
    rc = MPI_Iprobe(source, tag, MPI_COMM_WORLD, got, st);
  return rc;
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

/* This rank's waits (cp_plan_mpi_wait_times). */
static cp_plan_mpi_waits waits;

void cp_plan_mpi_wait_times(cp_plan_mpi_waits *w) { *w = waits; }

cp_plan_mpi_waits *cp_plan_mpi_waits_of(void) { return &waits; }

/* The nap between two polls of a rank that waits without polling (its
 * ranks outnumber the cores here, or the machine is loaded) or has polled
 * CP_PLAN_SPIN_SECONDS: 20 us asked, as slept about 45 us on these
 * machines since cp_plan_mpi_start sets the timer slack (96 us before:
 * Linux's default slack of 50 us comes on top). */
static void nap(void) {
  const struct timespec t = {0, 20000};
  double c = cp_clock_now();
  nanosleep(&t, NULL);
  waits.naps++;
  waits.nap_wall += cp_clock_now() - c;
}

/* MPI_Probe that polls a while (where every rank here has a core:
 * spin_ok), then naps between MPI_Iprobe calls instead of spinning (Open
 * MPI's blocking calls busy-wait: a rank waiting would take the core of
 * the ranks at work). Returns MPI_SUCCESS with st, an MPI error, or -1
 * once *cancel (may be NULL) is set. Counted in `waits` when the first
 * look finds nothing. */
int cp_plan_mpi_wait_for(int source, int tag, MPI_Status *st,
                    volatile sig_atomic_t *cancel) {
  int got = 0;
  int rc = cp_plan_mpi_look(source, tag, &got, st);
  if (rc != MPI_SUCCESS || got) return rc;
  double t = cp_clock_now();
  waits.waits++;
  if (spin_ok) {
    rc = poll_for(source, tag, st, CP_PLAN_SPIN_SECONDS, &got);
    double c = cp_clock_now();
    waits.polling += c - t;
    if (rc != MPI_SUCCESS || got) {
      waits.wall += c - t;
      return rc;
    }
  }
  for (;;) {
    rc = cp_plan_mpi_look(source, tag, &got, st);
    if (rc != MPI_SUCCESS || got) break;
    if (cancel && __atomic_load_n(cancel, __ATOMIC_RELAXED)) {
      rc = -1;
      break;
    }
    nap();
  }
  waits.wall += cp_clock_now() - t;
  return rc;
}

/* MPI_Send that naps between tests instead of blocking: a send to a rank
 * that died never completes (its shared-memory queue fills up), and the
 * SIGTERM mpirun then sends must still stop the search. Returns
 * MPI_SUCCESS, an MPI error, or -1 once *cancel (may be NULL) is set (the
 * send is then left to MPI; buf must stay allocated). */
int cp_plan_mpi_send_polled(const void *buf, int len, int dest, int tag,
                       volatile sig_atomic_t *cancel) {
  MPI_Request q;
  int rc = MPI_Isend(buf, len, MPI_BYTE, dest, tag, MPI_COMM_WORLD, &q);
  double t = 0;
  for (int done = 0; rc == MPI_SUCCESS;) {
    rc = MPI_Test(&q, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS || done) break;
    if (cancel && __atomic_load_n(cancel, __ATOMIC_RELAXED)) {
      MPI_Request_free(&q);
      rc = -1;
      break;
    }
    if (t == 0) { /* a wait (counted as cp_plan_mpi_wait_for's) */
      t = cp_clock_now();
      waits.waits++;
    }
    nap();
  }
  if (t != 0) waits.wall += cp_clock_now() - t;
  return rc;
}

/* ---- workers: mpi_serve.c ---------------------------------------------- */

/* ---- rank 0 ----------------------------------------------------------- */

/* The jobs a worker has in flight at most: while it runs one, the next
 * waits in its queue, so it starts that one the moment it has sent the
 * outcome back, instead of waiting until rank 0 (running a job of its own,
 * or writing the store) sees the answer and sends another. */
enum { DEPTH = 2 };

/* A job in flight: its batch's slot and its index there, its message and
 * the send's request (the message stays until the send is complete: at
 * the latest when the job's answer is back). */
typedef struct flight {
  int slot, job;
  MPI_Request q;
  cp_wire_buf out;
} flight;

/* A batch out on the ranks (started, not yet waited for): its jobs, their
 * number, the next one to hand out, and how many are on workers. */
typedef struct out_batch {
  cp_expand_job *jobs;
  int count, next, running, out;
} out_batch;

typedef struct remote {
  flight *fly;                   /* [n_ranks * DEPTH] worker w's jobs, in
                                    the order sent: w * DEPTH + (head[w] +
                                    i) % DEPTH for i < depth[w] */
  int *head, *depth;             /* [n_ranks] */
  cp_wire_buf in;
  volatile sig_atomic_t *cancel; /* the search's (NULL: none) */
  /* The batches out: one, or two with pipelined batches (the older one's
   * jobs are handed out first); the state size and the search's budget. */
  out_batch b[2];
  int older, n;
  const cp_search_budget *budget;
  int failed;                    /* a job failed: every wait ends */
  cp_expand_job *fail;           /* that job */
  double *due;                   /* [n_ranks] when worker w's oldest answer
                                    is expected (monotonic s) */
  double next_look;              /* when rank 0 looks next (monotonic s) */
  double within;                 /* its looks in the current own job (s:
                                    look_within says on which clock) */
  double log_job;                /* the mean log of the wall time of rank
                                    0's own jobs (s): a worker's, on the
                                    same machine */
  double job;                    /* exp(log_job): a typical job (s) */
  cp_store *store;               /* rank 0's (NULL: no workers) */
} remote;

/* Rank 0's time in the batches (cp_plan_mpi_rank0_times). */
static cp_plan_mpi_rank0 rank0;

void cp_plan_mpi_rank0_times(cp_plan_mpi_rank0 *t) { *t = rank0; }

/* Worker w's oldest job in flight. */
static flight *oldest(remote *r, int w) {
  return &r->fly[w * DEPTH + r->head[w]];
}

/* Jobs of the batches out not yet handed out, and on workers. */
static int left(const remote *r, int s) {
  return r->b[s].out ? r->b[s].count - r->b[s].next : 0;
}
static int left_all(const remote *r) { return left(r, 0) + left(r, 1); }
static int running_all(const remote *r) {
  return r->b[0].running + r->b[1].running;
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
  return running_all(r) && left_all(r) && now >= r->next_look;
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

/* Marks job j failed by worker w, with the reason; every wait ends. */
static void job_failed(remote *r, cp_expand_job *j, int w, const char *fmt,
                       const char *why) {
  j->rc = -1;
  char text[sizeof j->info.message - 32];
  snprintf(text, sizeof text, fmt, why);
  snprintf(j->info.message, sizeof j->info.message, "rank %d: %s", w, text);
  r->failed = 1;
  r->fail = j;
}

/* Job k of slot s to worker w, behind the jobs it has in flight. 0, or -1
 * when the batches must end (the job says why). */
static int send_job(remote *r, int w, int s, int k) {
  cp_error e;
  cp_expand_job *j = &r->b[s].jobs[k];
  flight *f = &r->fly[w * DEPTH + (r->head[w] + r->depth[w]) % DEPTH];
  if (cp_wire_job_encode(j, r->n, cp_search_budget_left(r->budget), &f->out,
                         &e)) {
    job_failed(r, j, 0, "%s", e.msg);
    return -1;
  }
  /* Not waited for: a worker that died never takes it, and a large job
   * (beyond MPI's eager limit) would hold rank 0 until the worker has
   * finished the job before it. */
  int rc = MPI_Isend(f->out.p, (int)f->out.len, MPI_BYTE, w, TAG_JOB,
                     MPI_COMM_WORLD, &f->q);
  if (rc != MPI_SUCCESS) {
    cp_plan_mpi_fail(&e, rc, "sending a job");
    job_failed(r, j, w, "%s", e.msg);
    return -1;
  }
  traffic_out += (long long)f->out.len;
  traffic_jobs++;
  f->slot = s;
  f->job = k;
  if (!r->depth[w]++) expect(r, w, cp_clock_now());
  return 0;
}

/* Tops worker w's jobs in flight up from the batches' next ones (the
 * older batch's first): to one, and on to `upto` (<= DEPTH) while a job
 * is left for rank 0 besides (a batch's last job is rank 0's when it is
 * free, rather than queued behind a worker's: a job queued second comes
 * from the newer batch when the older has one job left). 0, or -1 as
 * send_job. */
static int refill(remote *r, int w, int upto) {
  while (r->depth[w] < upto) {
    int all = left_all(r);
    if (!all || (r->depth[w] && all < 2)) break;
    int s = left(r, r->older) ? r->older : !r->older;
    if (r->depth[w] && left(r, s) == 1 && left(r, !s)) s = !s;
    if (send_job(r, w, s, r->b[s].next)) return -1;
    r->b[s].next++;
    r->b[s].running++;
  }
  return 0;
}

/* Receives the message announced in st (an outcome or a failure of the
 * oldest job worker st->MPI_SOURCE has in flight) into its job; tops that
 * worker's jobs up (refill). 0, or -1 when the batches must end (the job
 * that says why has rc -1). */
static int collect(remote *r, const MPI_Status *st) {
  cp_error e;
  int w = st->MPI_SOURCE;
  flight *f = w > 0 && w < n_ranks && r->depth[w] ? oldest(r, w) : NULL;
  cp_expand_job *j = f ? &r->b[f->slot].jobs[f->job] : NULL;
  cp_expand_job *any = j ? j : &r->b[r->older].jobs[0];
  if (cp_plan_mpi_receive(&r->in, st, &e)) {
    job_failed(r, any, w, "%s", e.msg);
    return -1;
  }
  traffic_in += (long long)r->in.len;
  if (!j || (st->MPI_TAG != TAG_OUTCOME && st->MPI_TAG != TAG_FAIL)) {
    job_failed(r, any, w, "unexpected %s message",
               st->MPI_TAG == TAG_HELLO ? "hello" : "out-of-turn");
    return -1;
  }
  /* The worker answered the job, so it has its message: the send is done
   * (MPI_Wait only completes it on this side). */
  MPI_Wait(&f->q, MPI_STATUS_IGNORE);
  r->b[f->slot].running--;
  r->head[w] = (r->head[w] + 1) % DEPTH;
  if (--r->depth[w]) expect(r, w, cp_clock_now());
  if (st->MPI_TAG == TAG_FAIL) {
    char why[512];
    snprintf(why, sizeof why, "%.*s", (int)r->in.len, (char *)r->in.p);
    job_failed(r, j, w, "%s", why);
    return -1;
  }
  if (cp_wire_outcome_decode(r->in.p, r->in.len, r->n, j, &e)) {
    job_failed(r, j, w, "%s", e.msg);
    return -1;
  }
  int rc = refill(r, w, DEPTH);
  reschedule(r);
  return rc;
}

/* Rank 0 within a job of its own, after every world step (through
 * cp_plan_world_observe), and within its store's commits (look_store):
 * when an answer is due (look_due), the answers that have arrived are
 * collected and their workers topped up, so that a worker done with its
 * jobs does not wait for rank 0's long job (or commit) to end. A failure
 * is left in its job and ends the batch after this job. */
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
  while (running_all(r)) {
    MPI_Status st;
    int one = 0;
    if (cp_plan_mpi_look(MPI_ANY_SOURCE, MPI_ANY_TAG, &one, &st) !=
            MPI_SUCCESS ||
        !one)
      break;
    ++got;
    if (collect(r, &st)) break;
  }
  looked(r, now, got);
  r->within += (yielding ? cp_clock_thread_cpu() : cp_clock_now()) - c;
}

/* Rank 0 within its store's commit (cp_store_set_progress: every
 * STORE_LOOK_STEPS steps of SQLite's machine, a few microseconds): as
 * within a job of its own. A commit of 64 nodes is about 1 ms of SQLite's
 * CPU, five of push's expansions, and rank 0 looked at no answer during
 * it: the worker, its two jobs done, waited (push, 2 ranks, 4 000 nodes:
 * 64-76 waits a run with rank 0 in its commit, 0.043-0.050 s of the
 * worker's 0.06-0.08 s of waiting). Not within a single step: the commit's
 * page writes, a checkpoint. */
enum { STORE_LOOK_STEPS = 100 };

static void look_store(void *ctx) {
  long long looks = rank0.looks;
  look_within(ctx, NULL);
  rank0.store_looks += rank0.looks - looks;
}

/* Rank 0 within one LCP solve of a job of its own (cp_plan_world_set_solve_
 * poll: every LOOK_PIVOTS Lemke pivots, every FIP iteration): as after a
 * step. One step of grasp_lift lasts up to 12 ms (a velocity-stepper fallback of ~1 000
 * pivots), and its worker, done with its two jobs, waited for rank 0 to
 * come out of it (docs/parallel.md, "Looks within a solve"). A call that
 * finds no answer due costs a clock read; the solve is not touched. */
enum { LOOK_PIVOTS = 16 };

static void look_solve(void *ctx) {
  long long looks = rank0.looks;
  rank0.solve_polls++;
  look_within(ctx, NULL);
  rank0.solve_looks += rank0.looks - looks;
}

/* A batch out: jobs to every worker (DEPTH each while enough are left,
 * behind the jobs of a batch out before it). Returns its slot (the
 * handle), or -1 when two are out already. A failure to hand a job out
 * is left in that job (the wait returns it). */
static int batch_start(remote *r, const cp_search_problem *own,
                       const cp_search_budget *budget, cp_expand_job *jobs,
                       int count) {
  int s = r->b[0].out ? 1 : 0;
  if (r->b[s].out) return -1;
  r->b[s] = (out_batch){jobs, count, 0, 0, 1};
  if (!r->b[!s].out) r->older = s;
  r->n = own->n;
  r->budget = budget;
  if (!r->b[!s].out) r->next_look = 1e300;
  if (n_ranks > 1 && own->n != worker_n) {
    char why[128];
    snprintf(why, sizeof why, "its world has a state of %d numbers, rank "
             "0's %d (not the same task?)", worker_n, own->n);
    job_failed(r, &jobs[0], 1, "%s", why);
  }
  for (int upto = 1; upto <= DEPTH && !r->failed; ++upto)
    for (int w = 1; w < n_ranks && left_all(r); ++w)
      if (refill(r, w, upto)) break;
  return s;
}

/* Batch h waited for: until its jobs are back, an answer that has arrived
 * is collected (its worker is topped up), else rank 0 runs h's next job
 * itself, or, with h's jobs all out, the next job of the other batch out
 * (pipelined batches), else it waits for an answer. 0 (a job's failure is
 * its rc: then h's first job says why). Rank 0's thread CPU goes to
 * `rank0`: its own jobs, the caller's work during the batch, the waits,
 * and the rest (the messages). */
static int batch_wait(remote *r, const cp_search_problem *own, int h,
                      const cp_batch_meanwhile *meanwhile) {
  out_batch *b = &r->b[h], *o = &r->b[!h];
  /* Rank 0's own work (the store's commit of the batches before) while the
   * workers simulate. */
  if (meanwhile && !r->failed) {
    double c = cp_clock_thread_cpu();
    r->within = 0;
    if (r->store)
      cp_store_set_progress(r->store, STORE_LOOK_STEPS, look_store, r);
    meanwhile->fn(meanwhile->ctx);
    if (r->store) cp_store_set_progress(r->store, 0, NULL, NULL);
    rank0.store += cp_clock_thread_cpu() - c - r->within;
    rank0.looking += r->within;
  }
  /* The thread-CPU clock is a system call (1-2 us): read once between
   * the parts of the loop, each part measured from the last reading. */
  double mark = cp_clock_thread_cpu();
  while (!r->failed && (b->next < b->count || b->running)) {
    MPI_Status st;
    cp_error e;
    int got = 0, rc = MPI_SUCCESS;
    double now = cp_clock_now();
    if (look_due(r, now)) {
      rc = cp_plan_mpi_look(MPI_ANY_SOURCE, MPI_ANY_TAG, &got, &st);
      looked(r, now, got);
      double c = cp_clock_thread_cpu();
      rank0.looking += c - mark;
      mark = c;
    }
    if (rc == MPI_SUCCESS && !got) {
      out_batch *run = b->next < b->count ? b
                       : left(r, !h) && !(r->cancel && cp_search_cancelled(r->cancel))
                           ? o
                                                                        : NULL;
      if (run) {
        r->within = 0;
        now = cp_clock_now();
        cp_expand_job_run(own->expand, own->ctx, &run->jobs[run->next++]);
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
        if (run == o) ++rank0.ahead;
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
    if (rc == -1) break;
    if (rc != MPI_SUCCESS) {
      cp_plan_mpi_fail(&e, rc, "waiting for the workers");
      job_failed(r, &b->jobs[0], 0, "%s", e.msg);
      break;
    }
    collect(r, &st);
    mark = cp_clock_thread_cpu(); /* the message's CPU: the rest */
  }
  /* A failure in the other batch's job fails this one too. */
  int mine = 0;
  for (int k = 0; r->failed && k < b->count && !mine; ++k)
    mine = r->fail == &b->jobs[k];
  if (r->failed && !mine) {
    b->jobs[0].rc = -1;
    memcpy(b->jobs[0].info.message, r->fail->info.message,
           sizeof b->jobs[0].info.message);
  }
  b->out = 0;
  if (r->older == h) r->older = !h;
  return 0;
}

/* The problem's batch calls (cp_plan_options.run_batch and run_batch_start
 * / _wait): rank 0's clocks around them, and its look within own jobs. */
static void rank0_begin(const cp_search_problem *own, void *ctx,
                        double *c, double *t) {
  *c = cp_clock_thread_cpu();
  *t = cp_clock_now();
  /* own->ctx is the world of cp_plan_task (cp_plan_world_problem). */
  if (n_ranks > 1) {
    cp_plan_world_observe(own->ctx, look_within, ctx);
    cp_plan_world_set_solve_poll(own->ctx, look_solve, ctx, LOOK_PIVOTS);
  }
}

static void rank0_end(const cp_search_problem *own, double c, double t,
                      int batches) {
  cp_plan_world_observe(own->ctx, NULL, NULL);
  cp_plan_world_set_solve_poll(own->ctx, NULL, NULL, 0);
  rank0.cpu += cp_clock_thread_cpu() - c;
  rank0.wall += cp_clock_now() - t;
  rank0.batches += batches;
}

static int run_batch(void *ctx, const cp_search_problem *own,
                     const cp_search_budget *budget, cp_expand_job *jobs,
                     int count, const cp_batch_meanwhile *meanwhile) {
  double c, t;
  rank0_begin(own, ctx, &c, &t);
  int h = batch_start(ctx, own, budget, jobs, count);
  int rc = h < 0 ? -1 : batch_wait(ctx, own, h, meanwhile);
  rank0_end(own, c, t, 1);
  return rc;
}

static int run_batch_start(void *ctx, const cp_search_problem *own,
                           const cp_search_budget *budget,
                           cp_expand_job *jobs, int count) {
  double c, t;
  rank0_begin(own, ctx, &c, &t);
  int h = batch_start(ctx, own, budget, jobs, count);
  rank0_end(own, c, t, 0);
  return h;
}

static int run_batch_wait(void *ctx, const cp_search_problem *own,
                          int handle, const cp_batch_meanwhile *meanwhile) {
  remote *r = ctx;
  if (handle < 0 || handle > 1 || !r->b[handle].out) return -1;
  double c, t;
  rank0_begin(own, ctx, &c, &t);
  int rc = batch_wait(r, own, handle, meanwhile);
  rank0_end(own, c, t, 1);
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
int cp_plan_mpi_greet(const cp_task *task, cp_error *err) {
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
  if (cp_plan_mpi_greet(task, err)) {
    cp_plan_mpi_stop_workers();
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
    cp_plan_mpi_stop_workers();
    cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
    return res->status = CP_PLAN_FAILED;
  }
  for (int k = 0; k < n_ranks * DEPTH; ++k) r.fly[k].q = MPI_REQUEST_NULL;
  cp_plan_options o = opt ? *opt : cp_plan_defaults();
  r.cancel = o.cancel;
  if (n_ranks > 1) r.store = st;
  o.run_batch = run_batch;
  o.run_batch_start = run_batch_start;
  o.run_batch_wait = run_batch_wait;
  o.run_batch_ctx = &r;
  cp_plan_status s = cp_plan_task(st, task, &o, res, err);
  cp_plan_mpi_stop_workers();
  remote_free(&r);
  return s;
}
