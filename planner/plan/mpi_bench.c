/* Benchmarks over MPI ranks (planner/plan/mpi.h, cp_plan_mpi_benchmark;
 * docs/parallel.md): rank 0 runs cp_plan_benchmark with a remote that
 * sends a run (tag RUN) to every idle worker rank; the worker searches it
 * into a store in memory and sends the store back whole (RUN_DONE, mpi.c's
 * serve_run), which rank 0 imports in run order. Split from mpi.c; the
 * hellos, waits, stops and traffic counts are mpi.c's (mpi_impl.h). */
#include <mpi.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/plan/mpi.h"
#include "planner/plan/mpi_impl.h"

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
  int n_ranks, w = 1;
  cp_plan_mpi_rank(&n_ranks);
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
  cp_plan_mpi_count((long long)r->out.len, 0, 1, 0);
  r->busy[w] = k;
  return 0;
}

static int bench_wait(void *ctx, int *k, cp_plan_status *status,
                      cp_plan_result *res, cp_error *run_err,
                      const cp_plan_progress **samples, int *n_samples,
                      cp_error *err) {
  bench_remote *r = ctx;
  MPI_Status st;
  int n_ranks;
  cp_plan_mpi_rank(&n_ranks);
  *k = -1;
  int rc = cp_plan_mpi_wait_for(MPI_ANY_SOURCE, MPI_ANY_TAG, &st, r->cancel);
  if (rc == -1)
    return cp_error_setc(err, CP_ERR_NUMERICAL, "mpi",
                         "stopped by a signal while "
                         "waiting for the workers");
  if (rc != MPI_SUCCESS) return cp_plan_mpi_fail(err, rc, "waiting for the workers");
  if (cp_plan_mpi_receive(&r->in, &st, err)) return -1;
  cp_plan_mpi_count(0, (long long)r->in.len, 0, 0);
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
  int n_ranks, my_rank = cp_plan_mpi_rank(&n_ranks);
  if (my_rank != 0) {
    cp_error_setc(err, CP_ERR_INPUT, "mpi",
                  "an MPI benchmark runs on rank 0 (this is rank %d of %d)",
                  my_rank, n_ranks);
    return CP_PLAN_BAD_INPUT;
  }
  if (cp_plan_mpi_greet(task, err)) {
    cp_plan_mpi_stop_workers();
    return err->code == CP_ERR_INPUT ? CP_PLAN_BAD_INPUT : CP_PLAN_FAILED;
  }
  cp_bench_options o = *bo;
  if (n_ranks == 1) { /* no worker: one run after another, here */
    o.threads = 1;
    cp_plan_status s = cp_plan_benchmark(st, task, p, x0, world_options, &o,
                                         experiment_id, err);
    cp_plan_mpi_stop_workers();
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
  cp_plan_mpi_stop_workers();
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
