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
 * job could not be run), STOP (0 -> worker, empty).
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

#include "planner/plan/wire.h"

enum { TAG_HELLO = 1, TAG_JOB, TAG_OUTCOME, TAG_FAIL, TAG_STOP };

/* MPI is one per process: this process's rank, the number of ranks, and
 * whether rank 0 has told the workers to stop. */
static int my_rank = -1, n_ranks, stopped;
/* Rank 0: the workers' state size (from their hellos) and the traffic. */
static int worker_n;
static long long traffic_out, traffic_in, traffic_jobs, own_jobs;

static int mpi_fail(cp_error *err, int rc, const char *what) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) len = 0;
  text[len] = 0;
  return cp_error_setc(err, CP_ERR_IO, "mpi", "%s: %s", what, text);
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
  *rank = my_rank;
  *ranks = n_ranks;
  return 0;
}

/* Rank 0: the stop message to every worker (once). */
static void stop_workers(void) {
  if (my_rank != 0 || stopped) return;
  stopped = 1;
  for (int w = 1; w < n_ranks; ++w)
    MPI_Send(NULL, 0, MPI_BYTE, w, TAG_STOP, MPI_COMM_WORLD);
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

/* MPI_Probe that naps 20 us between MPI_Iprobe calls instead of spinning
 * (Open MPI's blocking calls busy-wait: a rank waiting would take the core
 * of the ranks at work). Returns MPI_SUCCESS with st, an MPI error, or -1
 * once *cancel (may be NULL) is set. */
static int wait_for(int source, int tag, MPI_Status *st,
                    volatile sig_atomic_t *cancel) {
  const struct timespec nap = {0, 20000};
  for (;;) {
    int got = 0;
    int rc = MPI_Iprobe(source, tag, MPI_COMM_WORLD, &got, st);
    if (rc != MPI_SUCCESS || got) return rc;
    if (cancel && __atomic_load_n(cancel, __ATOMIC_RELAXED)) return -1;
    nanosleep(&nap, NULL);
  }
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

int cp_plan_mpi_serve(const cp_task *task, const cp_error *load_err,
                      cp_error *err) {
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
    return -1;
  }
  const cp_search_problem *p = pw ? cp_plan_world_problem(pw) : NULL;
  cp_wire_buf in = {0}, out = {0};
  cp_wire_slot slot = {0};
  int rc = 0;
  for (;;) {
    MPI_Status st;
    int r = wait_for(0, MPI_ANY_TAG, &st, NULL);
    if (r != MPI_SUCCESS) {
      rc = mpi_fail(err, r, "waiting for rank 0");
      break;
    }
    if ((rc = receive(&in, &st, err))) break;
    if (st.MPI_TAG == TAG_STOP) break;
    int tag = TAG_OUTCOME;
    if (st.MPI_TAG != TAG_JOB || !p) {
      cp_error_setc(&e, CP_ERR_INPUT, "mpi", "unexpected message (tag %d)",
                    st.MPI_TAG);
      tag = TAG_FAIL;
    } else if (cp_wire_job_decode(in.p, in.len, n, &slot, &e)) {
      tag = TAG_FAIL;
    } else {
      cp_wire_job_run(p, &slot);
      if (cp_wire_outcome_encode(&slot.job, n, &out, &e)) tag = TAG_FAIL;
    }
    if (tag == TAG_FAIL) {
      char why[sizeof e.where + sizeof e.msg + 2];
      snprintf(why, sizeof why, "%s: %s", e.where, e.msg);
      r = MPI_Send(why, (int)strlen(why), MPI_BYTE, 0, TAG_FAIL,
                   MPI_COMM_WORLD);
    } else {
      r = MPI_Send(out.p, (int)out.len, MPI_BYTE, 0, TAG_OUTCOME,
                   MPI_COMM_WORLD);
    }
    if (r != MPI_SUCCESS) {
      rc = mpi_fail(err, r, "sending to rank 0");
      break;
    }
  }
  cp_wire_slot_free(&slot);
  cp_wire_buf_free(&in);
  cp_wire_buf_free(&out);
  cp_plan_world_destroy(pw);
  return rc;
}

/* ---- rank 0 ----------------------------------------------------------- */

typedef struct remote {
  int *busy;                     /* [n_ranks] the job a worker runs, or -1 */
  cp_wire_buf out, in;
  volatile sig_atomic_t *cancel; /* the search's (NULL: none) */
} remote;

/* Marks job j failed by worker w, with the reason. */
static void job_failed(cp_expand_job *j, int w, const char *fmt,
                       const char *why) {
  j->rc = -1;
  char text[sizeof j->info.message - 32];
  snprintf(text, sizeof text, fmt, why);
  snprintf(j->info.message, sizeof j->info.message, "rank %d: %s", w, text);
}

static int send_job(remote *r, int w, int n, const cp_search_budget *budget,
                    cp_expand_job *jobs, int k) {
  cp_error e;
  if (cp_wire_job_encode(&jobs[k], n, cp_search_budget_left(budget), &r->out,
                         &e)) {
    job_failed(&jobs[k], 0, "%s", e.msg);
    return -1;
  }
  int rc = MPI_Send(r->out.p, (int)r->out.len, MPI_BYTE, w, TAG_JOB,
                    MPI_COMM_WORLD);
  if (rc != MPI_SUCCESS) {
    mpi_fail(&e, rc, "sending a job");
    job_failed(&jobs[k], w, "%s", e.msg);
    return -1;
  }
  traffic_out += (long long)r->out.len;
  traffic_jobs++;
  r->busy[w] = k;
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

/* One job to every worker; then, until the batch is back: an answer that
 * has arrived is collected (its worker gets the next job), else rank 0
 * runs the next job itself, else it waits for an answer. */
static int run_batch(void *ctx, const cp_search_problem *own,
                     const cp_search_budget *budget, cp_expand_job *jobs,
                     int count) {
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
  while (next < count || running) {
    MPI_Status st;
    cp_error e;
    int got = 0, rc = MPI_SUCCESS;
    if (running) rc = MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD,
                                 &got, &st);
    if (rc == MPI_SUCCESS && !got) {
      if (next < count) {
        cp_expand_job_run(own->expand, own->ctx, &jobs[next++]);
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
  if (!r.busy) {
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
  cp_wire_buf_free(&r.in);
  cp_wire_buf_free(&r.out);
  return s;
}
