/// \file planner/plan/mpi_impl.h
/// Inside planner/plan: what mpi.c (planning and benchmarks over MPI
/// ranks) shares with mpi_items.c (independent items over the ranks): the
/// message tags, the process's rank, the traffic counts, and the waits and
/// sends that a signal can still stop. Needs MPI's header; not installed.
#ifndef CP_PLANNER_PLAN_MPI_IMPL_H
#define CP_PLANNER_PLAN_MPI_IMPL_H

#include <mpi.h>
#include <signal.h>

#include "models/error.h"
#include "planner/plan/wire.h"

/// The tags of the messages on MPI_COMM_WORLD (mpi.c's header comment).
enum { TAG_HELLO = 1, TAG_JOB, TAG_OUTCOME, TAG_FAIL, TAG_STOP, TAG_RUN,
       TAG_RUN_DONE, TAG_ITEM, TAG_ITEM_DONE };

/// This process's rank (-1 before cp_plan_mpi_start) and *ranks, their
/// number.
int cp_plan_mpi_rank(int *ranks);
/// Adds to rank 0's traffic (cp_plan_mpi_traffic): bytes sent and
/// received, jobs sent to workers, jobs run by rank 0.
void cp_plan_mpi_count(long long sent, long long received, long long jobs,
                       long long own);
/// Rank 0: every worker's hello; 0, or -1 with err naming the first that
/// could not load the task or loaded another one.
int cp_plan_mpi_greet(const cp_task *task, cp_error *err);
/// Rank 0: the stop message to every worker (once; not waited for).
void cp_plan_mpi_stop_workers(void);
/// err = MPI's text for rc after `what`; returns -1.
int cp_plan_mpi_fail(cp_error *err, int rc, const char *what);
/// Receives the message that MPI_Probe/Iprobe announced in st into b.
int cp_plan_mpi_receive(cp_wire_buf *b, const MPI_Status *st, cp_error *err);
/// MPI_Iprobe, and once more when it found nothing (Open MPI's probe
/// matches before it takes in what has arrived: mpi.c). MPI_SUCCESS with
/// *got and st, or an MPI error.
int cp_plan_mpi_look(int source, int tag, int *got, MPI_Status *st);
/// MPI_Probe that polls, then naps, between MPI_Iprobe calls: MPI_SUCCESS
/// with st, an MPI error, or -1 once *cancel (may be NULL) is set.
int cp_plan_mpi_wait_for(int source, int tag, MPI_Status *st,
                         volatile sig_atomic_t *cancel);
/// MPI_Send that naps between tests: MPI_SUCCESS, an MPI error, or -1
/// once *cancel is set (the send is then left to MPI: buf must stay).
int cp_plan_mpi_send_polled(const void *buf, int len, int dest, int tag,
                            volatile sig_atomic_t *cancel);

/// This rank's wait counts (cp_plan_mpi_wait_times), to add to.
cp_plan_mpi_waits *cp_plan_mpi_waits_of(void);

/// A worker ignores SIGINT and SIGTERM while it serves (mpi.c says why).
typedef struct cp_plan_mpi_quiet {
  struct sigaction term, intr;
} cp_plan_mpi_quiet;
void cp_plan_mpi_quiet_begin(cp_plan_mpi_quiet *q);
void cp_plan_mpi_quiet_end(const cp_plan_mpi_quiet *q);

/// A worker: the next message from rank 0 into in (st: its envelope). 1: a
/// message to answer, 0: stop, -1: err.
int cp_plan_mpi_next_order(cp_wire_buf *in, MPI_Status *st, cp_error *err);
/// A worker's answer to rank 0: out under tag, or for TAG_FAIL the text of
/// e. 0, or -1 with err.
int cp_plan_mpi_reply(int tag, const cp_wire_buf *out, const cp_error *e,
                      cp_error *err);

#endif
