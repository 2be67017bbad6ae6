/// \file planner/plan/wire.h
/// Inside planner/plan: a batch job (cp_expand_job) as bytes, for workers
/// in other processes (MPI ranks, docs/parallel.md). A job message carries
/// the inputs (parent state, time, action, the parent's warm-start data); an
/// outcome message carries what the worker's expansion gave back (rc, the
/// final state, the counters, the outcome and its message, the new
/// warm-start data). Doubles travel as their bytes in the sender's byte
/// order: every message starts with a tag that a process of the other byte
/// order (or a message of another kind or version) fails to decode, rather
/// than reading wrong numbers. Not a public header.
#ifndef CP_PLANNER_PLAN_WIRE_H
#define CP_PLANNER_PLAN_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "models/error.h"
#include "planner/plan/plan.h"
#include "planner/search/search.h"

/// A growable byte buffer (the messages are built and read in it).
typedef struct cp_wire_buf {
  unsigned char *p;
  size_t len, cap;
} cp_wire_buf;

void cp_wire_buf_free(cp_wire_buf *b);

/// Writes job j's inputs (state of n doubles) and the seconds left of the
/// search's time limit (INFINITY: none) to b (replacing its bytes). 0, or
/// -1 with err (out of memory).
int cp_wire_job_encode(const cp_expand_job *j, int n, double left,
                       cp_wire_buf *b, cp_error *err);

/// A job as a worker decodes it: its inputs point into the slot's own
/// buffers (x, warm), its outputs (y, keep) are the slot's too. Reused from
/// job to job; zero it before the first use.
typedef struct cp_wire_slot {
  cp_expand_job job;
  double left; ///< the seconds the job's search had left when it was sent
  double *x, *y;
  int n_cap;
  unsigned char *warm;
  size_t warm_cap;
} cp_wire_slot;

void cp_wire_slot_free(cp_wire_slot *s);

/// Reads a job message of len bytes into slot s (a state of n doubles is
/// expected). 0, or -1 with err naming what is wrong (CP_ERR_INPUT for a
/// malformed message, CP_ERR_NOMEM).
int cp_wire_job_decode(const void *msg, size_t len, int n, cp_wire_slot *s,
                       cp_error *err);

/// Runs the decoded job of slot s with problem p (a worker's world) under
/// a time limit of s->left seconds from now on this process's clock (none
/// when infinite): a long action polls it as the search's own budget
/// (CP_PLAN_BUDGET_STEPS), so a job the deadline overtakes comes back with
/// rc 1 (no outcome), as on rank 0's threads.
void cp_wire_job_run(const cp_search_problem *p, cp_wire_slot *s);

/// Writes what job j gave back (after cp_expand_job_run) to b.
int cp_wire_outcome_encode(const cp_expand_job *j, int n, cp_wire_buf *b,
                           cp_error *err);

/// Reads an outcome message into job j, as cp_expand_job_run would have
/// left it: j->y (n doubles), j->rc, j->info (its warm pointing into
/// j->keep, grown as needed). 0, or -1 with err.
int cp_wire_outcome_decode(const void *msg, size_t len, int n,
                           cp_expand_job *j, cp_error *err);

/// A benchmark's run as a message (cp_bench_remote over MPI ranks): the
/// request carries what the searching rank needs beyond the task it loaded
/// itself (run k, planner, seed, limits); the answer what the run gave
/// (status, result, error, progress reports) and the searching rank's
/// whole store (cp_store_export), from which rank 0 imports the run.
typedef struct cp_wire_run {
  int k;
  char method[16];
  uint64_t seed;
  double max_seconds;
  long max_nodes;
} cp_wire_run;

int cp_wire_run_encode(const cp_wire_run *r, cp_wire_buf *b, cp_error *err);
int cp_wire_run_decode(const void *msg, size_t len, cp_wire_run *r,
                       cp_error *err);

/// A run's answer as read back: samples and store point into the message.
typedef struct cp_wire_run_done {
  int k;
  cp_plan_status status;
  cp_plan_result res;
  cp_error err;
  const cp_plan_progress *samples; ///< n_samples (aligned copy: see below)
  int n_samples;
  const void *store;               ///< store_len bytes
  size_t store_len;
} cp_wire_run_done;

int cp_wire_run_done_encode(const cp_wire_run_done *d, cp_wire_buf *b,
                            cp_error *err);
/// Reads an answer; the samples are copied to *samples (grown, of
/// *samples_cap; free()), the store points into msg.
int cp_wire_run_done_decode(const void *msg, size_t len, cp_wire_run_done *d,
                            cp_plan_progress **samples, int *samples_cap,
                            cp_error *err);

#endif
