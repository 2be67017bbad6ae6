/* `complan experiment paper`: the paper's computational study (section 6),
 * reproduced (experiments/study/study.h does the work; this file parses flags and
 * draws the progress bar). */
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "experiments/study/study.h"
#include "models/clock.h"
#include "planner/cli/cli.h"
#include "planner/cli/commands.h"
#include "planner/cli/flags.h"
#include "planner/cli/output.h"
#include "planner/plan/mpi.h"

/* Rank 0 of `--mpi`: SIGINT or SIGTERM (mpirun sends SIGTERM to every
 * rank when one dies) stops the study, which then writes no report. */
static volatile sig_atomic_t paper_cancelled;

static void paper_on_signal(int sig) { cp_search_cancel(&paper_cancelled, sig); }

static const char paper_head[] =
    "Generates the paper's random contact problems (33 problems, LCP sizes 2..170,\n"
    "each at mu = 0.1, ..., 1.0: 330 data sets), runs Lemke (ones, then up to 3\n"
    "random restarts, 100 pivots per start) and FIP (300 iterations, gap 1e-6) as\n"
    "the paper did, the auto strategy, an existence certificate (a verified\n"
    "solution, or the MIP) and a uniqueness check on each, and writes under DIR:\n"
    "  summary.md                 headline numbers against the paper's\n"
    "  table1.md, table1.csv      Table 1 (by size), with the paper's rows\n"
    "  problems.md                every problem in the form of Tables 2-4\n"
    "  datasets.csv               one row per data set\n"
    "  fraction_solved_size.svg, fraction_solved_mu.svg, iterations_mu.svg\n"
    "  data/pNN/muX.scene.json    each data set as a scene ('complan solve' input)\n"
    "  data/pNN/muX.lcp.json      ... and as its LCP ('complan lcp solve' input)\n"
    "\n";
static const char paper_tail[] =
    "\n"
    "exit status: 0 the study ran, 1 it could not finish (a worker died),\n"
    "2 bad usage or an output directory that cannot be written.\n";

typedef struct bar {
  int on;
  double t0;
} bar;

static void progress(void *ctx, int done, int total) {
  bar *b = ctx;
  if (!b->on) return;
  const int width = 30;
  int k = total ? done * width / total : width;
  char fill[64];
  for (int i = 0; i < width; i++) fill[i] = i < k ? '#' : '.';
  fill[width] = '\0';
  double el = cp_clock_now() - b->t0;
  fprintf(stderr, "\r[%s] %d/%d data sets, %d:%02d elapsed", fill, done, total,
          (int)el / 60, (int)el % 60);
  if (done == total) fputc('\n', stderr);
  fflush(stderr);
}

int cp_cli_experiment_paper(const cp_cli_command *cmd, int argc, char **argv) {
  cp_paper_options opt = cp_paper_defaults();
  const char *out = "experiments/results/paper";
  int force_progress = 0, no_data = 0, use_mpi = 0;
  const cp_cli_flag flags[] = {
      {"--out", "DIR", CP_FLAG_PATH, &out, "output directory (default experiments/results/paper)",
       .expect = "a directory name"},
      CP_CLI_VALUE("--seed", "S", CP_FLAG_U64, &opt.seed,
                   "generator seed (default 1995); same seed, same data sets"),
      {"--jobs", "N", CP_FLAG_INT, &opt.jobs,
       "worker processes (default: the number of online cores);\n"
       "the results do not depend on N",
       .imin = 1, .imax = 256},
      {"--node-limit", "N", CP_FLAG_LONG, &opt.node_limit,
       "certificate MIP limit per data set in branch-and-bound\nnodes (default 10000)",
       .imin = 1, .imax = 1000000000, .expect = "a whole number >= 1"},
      {"--unique-node-limit", "N", CP_FLAG_LONG, &opt.unique_node_limit,
       "per certify call of the uniqueness search (default 2000)", .imin = 1,
       .imax = 1000000000, .expect = "a whole number >= 1"},
      {"--time-limit", "T", CP_FLAG_DOUBLE, &opt.time_limit_s,
       "certificate MIP's safety net per data set in s (default 300;\n"
       "the node limit decides, the same on any machine)", .dmin = 0.01, .dmax = 86400.0,
       .expect = "seconds in [0.01, 86400]"},
      {"--unique-time-limit", "T", CP_FLAG_DOUBLE, &opt.unique_time_limit_s,
       "safety net per certify call of the uniqueness search (default 60)", .dmin = 0.01,
       .dmax = 86400.0, .expect = "seconds in [0.01, 86400]"},
      CP_CLI_BOOL("--mip-all", &opt.mip_all,
                  "run the certificate MIP on every data set (default: only\n"
                  "where no solver found a verified solution)"),
      CP_CLI_BOOL("--no-data", &no_data, "do not write the data/ files"),
      CP_CLI_BOOL("--progress", &force_progress,
                  "progress bar on stderr even when it is not a terminal"),
      {"--problems", "N", CP_FLAG_INT, &opt.problems,
       "only the N smallest problems (for tests; default 33)", .imin = 1,
       .imax = CP_PAPER_PROBLEMS},
      CP_CLI_BOOL("--mpi", &use_mpi,
                  "run under mpirun: rank 0 writes the results, ranks\n"
                  "1 .. R-1 solve the data sets (instead of --jobs);\n"
                  "the same results as --jobs 1"),
  };
  const cp_cli_spec spec = {cmd->name, paper_head, paper_tail, NULL, NULL, flags,
                            sizeof flags / sizeof *flags, 0, cmd->usage};
  int prc = cp_cli_parse(&spec, argc, argv);
  if (prc != CP_CLI_GO) return prc;
  if (no_data) opt.write_data = 0;
  const cp_cli_mpi *mpi = use_mpi ? cp_cli_get_mpi() : NULL;
  if (use_mpi && !mpi)
    return cp_cli_usage_error("experiment paper ", "--mpi: this complan was built without MPI "
                              "(install libopenmpi-dev and rebuild)");
  cp_error err;
  int rank = 0, ranks = 1;
  if (mpi && mpi->start(&rank, &ranks, &err)) {
    fprintf(stderr, "complan: experiment paper: %s\n", err.msg);
    return CP_EXIT_UNDECIDED;
  }
  if (rank > 0) { /* a worker: solves rank 0's data sets, prints nothing */
    cp_plan_mpi_items items;
    cp_paper_worker_items(&items);
    int rc = mpi->items_serve(&items, &err);
    mpi->stop();
    if (rc) fprintf(stderr, "complan: experiment paper: rank %d: %s\n", rank, err.msg);
    return rc ? CP_EXIT_UNDECIDED : CP_EXIT_ANSWERED;
  }
  if (mpi) {
    opt.spread = mpi->items_run;
    opt.jobs = ranks > 1 ? ranks - 1 : 1; /* for the reports: who solved */
    opt.cancel = &paper_cancelled;
    cp_cli_catch_signals(paper_on_signal);
  }
  /* The command line, for the reports: "complan experiment paper ARGS". */
  char line[512];
  snprintf(line, sizeof line, "complan %s", cmd->name);
  for (int i = 1; i < argc; i++) {
    size_t l = strlen(line);
    snprintf(line + l, sizeof line - l, " %s", argv[i]);
  }
  bar b = {force_progress || isatty(STDERR_FILENO), cp_clock_now()};
  cp_paper_study st;
  int failed = cp_paper_study_run(&opt, out, line, progress, &b, &st, &err);
  int sig = __atomic_load_n(&paper_cancelled, __ATOMIC_RELAXED);
  if (mpi) cp_cli_release_signals();
  if (failed && sig) {
    /* Said before MPI is stopped: with a rank dead, MPI_Finalize may wait
     * until mpirun kills this rank. */
    if (b.on) fputc('\n', stderr);
    fprintf(stderr, "complan: experiment paper: interrupted by %s (under mpirun: mpirun sends "
            "SIGTERM when a rank fails, and names that rank): %s; no report written\n",
            sig == SIGTERM ? "SIGTERM" : "SIGINT", err.msg);
  }
  if (mpi) {
    long long items, own, sent, received;
    mpi->traffic(&items, &own, &sent, &received);
    mpi->stop();
    fprintf(stderr, "complan: mpi: %d worker rank%s solved %lld data sets, rank 0 %lld; "
            "%lld bytes sent, %lld received\n", ranks - 1, ranks == 2 ? "" : "s", items, own,
            sent, received);
  }
  if (failed && sig) return CP_EXIT_UNDECIDED;
  if (failed) {
    if (b.on) fputc('\n', stderr);
    fprintf(stderr, "complan: experiment paper: %s%s%s\n", err.where, err.where[0] ? ": " : "",
            err.msg);
    /* An output that cannot be written is bad input; anything else
     * (memory, a worker) could not finish. */
    return err.code == CP_ERR_IO || err.code == CP_ERR_INPUT ? CP_EXIT_BAD_INPUT
                                                             : CP_EXIT_UNDECIDED;
  }
  char *headline = cp_paper_format_headline(&st, out);
  cp_paper_study_free(&st);
  if (!headline) {
    fprintf(stderr, "complan: experiment paper: out of memory (the reports are written)\n");
    return CP_EXIT_UNDECIDED;
  }
  fputs(headline, stdout);
  free(headline);
  return CP_EXIT_ANSWERED;
}
