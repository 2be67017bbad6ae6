/* bench_parallel_mpi: what one message costs between two MPI ranks on
 * this machine (docs/parallel.md, "Distributing the search itself"): the
 * round trip of a message of 64 B, of a job's ~800 B and of 8 kB, rank 0
 * sending and rank 1 answering with as many bytes, waited for
 * (a) by a blocking MPI_Recv (Open MPI spins) and (b) as complan's ranks
 * wait (MPI_Iprobe, a 20 us nap between looks; planner/plan/mpi.c).
 * Printed: median microseconds per round trip over 5 rounds of N trips,
 * and the messages per second one rank can answer that way.
 *
 * Usage: mpirun -n 2 build/experiments/bench_parallel_mpi [N]
 *   N: round trips per round (default 2000).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "experiments/bench_util.h"

/* A receive of len bytes from peer: blocking, or napping between probes. */
static void get(void *buf, int len, int peer, int nap) {
  if (nap) {
    const struct timespec t = {0, 20000};
    int got = 0;
    MPI_Status st;
    while (MPI_Iprobe(peer, 0, MPI_COMM_WORLD, &got, &st) == MPI_SUCCESS &&
           !got)
      nanosleep(&t, NULL);
  }
  MPI_Recv(buf, len, MPI_BYTE, peer, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
}

int main(int argc, char **argv) {
  setenv("OMPI_MCA_mpi_yield_when_idle", "1", 0); /* as complan does */
  MPI_Init(&argc, &argv);
  int rank, ranks;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  if (ranks != 2) {
    if (!rank) fprintf(stderr, "bench_parallel_mpi: run it on 2 ranks\n");
    MPI_Finalize();
    return 2;
  }
  int n = (int)bench_positive_arg(argc, argv, 1, 2000,
                                  "mpirun -n 2 bench_parallel_mpi [N]");
  const int sizes[3] = {64, 800, 8192};
  char *buf = calloc(8192, 1);
  if (!rank)
    printf("| message | wait | us per round trip (median of 5 x %d) | "
           "round trips/s |\n|---|---|---|---|\n", n);
  for (int s = 0; s < 3; ++s)
    for (int nap = 0; nap < 2; ++nap) {
      double t[5];
      for (int round = 0; round < 5; ++round) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (int i = 0; i < n; ++i) {
          if (!rank) {
            MPI_Send(buf, sizes[s], MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            get(buf, sizes[s], 1, nap);
          } else {
            get(buf, sizes[s], 0, nap);
            MPI_Send(buf, sizes[s], MPI_BYTE, 0, 0, MPI_COMM_WORLD);
          }
        }
        t[round] = (MPI_Wtime() - t0) / n;
      }
      double us = 1e6 * bench_median(t, 5);
      if (!rank)
        printf("| %d B | %s | %.1f | %.0f |\n", sizes[s],
               nap ? "probe + 20 us nap (complan)" : "blocking MPI_Recv", us,
               1e6 / us);
    }
  free(buf);
  MPI_Finalize();
  return 0;
}
