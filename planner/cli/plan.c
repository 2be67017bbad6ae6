/* `complan plan TASK ...`: plan a task into the database and print the plan
 * (docs/planner.md, docs/database.md); with --benchmark, repeated runs in OMPL's tables.
 * Thin: planner/plan/plan.h does the work. */
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "planner/cli/cli.h"
#include "planner/cli/commands.h"
#include "planner/cli/flags.h"
#include "planner/cli/output.h"
#include "planner/plan/mpi.h"
#include "planner/plan/plan.h"
#include "planner/sim/statelayout.h"
#include "planner/store/store.h"
#include "planner/search/task.h"

static const char head[] =
    "Search for a sequence of joint efforts (or, in quasistatic mode, joint\n"
    "velocities) that brings the task's goal body into its goal region,\n"
    "predicting every action's outcome with the contact simulator. Every\n"
    "explored state and the plan go to an SQLite database (docs/database.md).\n"
    "The task file format is in docs/planner.md; bundled tasks are in\n"
    "planner/tasks/.\n"
    "\n";
static const char tail[] =
    "\n"
    "SIGINT or SIGTERM stops the search after the action it is simulating:\n"
    "what it explored is committed, the run is stored as interrupted and\n"
    "--resume continues it (a second signal ends the process at once).\n"
    "\n"
    "exit status: 0 solved, or the search space exhausted without a plan\n"
    "(not_found: no expansion failed); 1 a limit ended the search first\n"
    "(\"actions_exhausted\": true when, with search.fresh_actions, every\n"
    "node had tried all its actions: no proof that no plan exists), it\n"
    "was interrupted by a signal, the space was exhausted but some\n"
    "expansions failed (failed_expansions: the solver failed or the state\n"
    "went non-finite, so it is no proof that no plan exists), or the\n"
    "database could not be written; 2 bad input or usage (the task's JSON\n"
    "path is named; a database of another kind or version is refused).\n";

/* OMPL's planners, when the executable has them (cli.h). */
static const cp_cli_ompl *ompl_planners;

void cp_cli_set_ompl(const cp_cli_ompl *ompl) { ompl_planners = ompl; }

/* MPI planning, when the executable has it (cli.h). */
static const cp_cli_mpi *mpi_impl;

void cp_cli_set_mpi(const cp_cli_mpi *mpi) { mpi_impl = mpi; }

const cp_cli_mpi *cp_cli_get_mpi(void) { return mpi_impl; }

/* This rank's waits for messages (cp_plan_mpi_waits), one line on
 * stderr: `complan: mpi rank R waits: ...` (not "mpi:", the prefix of
 * rank 0's lines). */
static void mpi_waits_line(int rank) {
  cp_plan_mpi_waits w;
  mpi_impl->waits(&w);
  fprintf(stderr, "complan: mpi rank %d waits: %lld waits, %.6f s wall, "
          "%.6f polling; %lld naps, %.6f s; %lld jobs, %.6f s CPU, "
          "%.6f s sending\n", rank, w.waits, w.wall, w.polling, w.naps,
          w.nap_wall, w.jobs, w.job_cpu, w.sending);
}

/* --mpi on a rank other than 0: simulates rank 0's batches (the task as
 * this rank loaded it, or why it could not); then prints its waits (or
 * why MPI failed). */
static int mpi_worker(const char *file, int rank, const cp_task *task,
                      const cp_error *load_err) {
  cp_error err;
  int rc = mpi_impl->serve(task, load_err, &err);
  if (!rc) mpi_waits_line(rank);
  mpi_impl->stop();
  if (rc) fprintf(stderr, "complan: %s: %s\n", file, err.msg);
  return rc ? CP_EXIT_UNDECIDED : CP_EXIT_ANSWERED;
}

static int is_ompl(const char *m) { return !strncmp(m, "ompl:", 5); }

/* 0 when m is a planner this complan has (complan's or OMPL's), else a
 * usage error naming `flag` (exit status 2). */
static int check_method(const char *flag, const char *m) {
  for (const char *const *k = cp_search_methods(); *k; ++k)
    if (!strcmp(*k, m)) return 0;
  if (is_ompl(m) && !ompl_planners)
    return cp_cli_usage_error("plan ", "%s %s: this complan was built without "
                              "OMPL (install libompl-dev and rebuild)", flag, m);
  if (is_ompl(m))
    for (const char *const *k = ompl_planners->methods(); *k; ++k)
      if (!strcmp(*k, m)) return 0;
  return cp_cli_usage_error("plan ", "unknown planner '%s' in %s (astar, rrt, "
                            "sst, or ompl:RRT, ompl:EST, ompl:KPIECE1, "
                            "ompl:PDST, ompl:SST)", m, flag);
}

/* Set by SIGINT/SIGTERM; the search polls it after every action. */
static volatile sig_atomic_t cancelled;

static void on_signal(int sig) { cp_search_cancel(&cancelled, sig); }

/* SIGINT and SIGTERM set `cancelled` once (a second ends the process). */
static void catch_signals(void) { cp_cli_catch_signals(on_signal); }

static void release_signals(void) { cp_cli_release_signals(); }

typedef struct progress_ctx {
  int shown;
} progress_ctx;

static void show_progress(void *ctx, const cp_plan_progress *p) {
  progress_ctx *pc = ctx;
  char cost[32] = "none";
  if (isfinite(p->best_cost)) snprintf(cost, sizeof cost, "%.4g", p->best_cost);
  fprintf(stderr,
          "\rnodes %ld  expansions %ld (%.0f/s)  best distance %.4g m  best "
          "cost %s  %.1f s   ",
          p->nodes, p->expansions, p->expansions_per_second, p->best_distance,
          cost, p->elapsed);
  pc->shown = 1;
}

static int exit_of(cp_plan_status s) {
  switch (s) {
  case CP_PLAN_SOLVED:
  case CP_PLAN_NOT_FOUND: return CP_EXIT_ANSWERED;
  case CP_PLAN_BAD_INPUT: return CP_EXIT_BAD_INPUT;
  default: return CP_EXIT_UNDECIDED;
  }
}

/* Prints the plan read back from the database: one line per action. */
static int print_plan(cp_store *st, const cp_task *task,
                      const cp_plan_result *r, const char *db) {
  long *ids = NULL, n = 0;
  int64_t run;
  if (cp_store_plan_nodes(st, r->plan_id, &run, &ids, &n)) {
    fprintf(stderr, "complan: %s\n", cp_store_message(st));
    return -1;
  }
  cp_state_layout lay;
  int nomem = cp_state_layout_init(&lay, &task->scene);
  int size = lay.n, slot = cp_state_body_at(&lay, task->goal.body_index);
  cp_state_layout_free(&lay);
  double *x = nomem ? NULL : malloc((size_t)(size + 1) * sizeof *x);
  double *v = malloc((size_t)(task->n_inputs + 1) * sizeof *v);
  if (slot < 0) slot = 0; /* a free body (cp_plan_world checks) */
  printf("plan %lld (run %lld in %s): %ld action%s, cost %.6g, %.3g s of "
         "motion\n",
         (long long)r->plan_id, (long long)r->run_id, db, n - 1,
         n == 2 ? "" : "s", r->cost, (double)(n - 1) * task->duration);
  printf("  %4s %8s  %-*s  %s\n", "step", "t (s)", 14 * task->n_inputs,
         "inputs", task->goal.body);
  int rc = 0;
  for (long k = 0; k < n && x && v; ++k) {
    cp_search_node node;
    int nv = 0;
    if (cp_store_load_node(st, run, ids[k], &node, x, size, v,
                           task->n_inputs, &nv)) {
      fprintf(stderr, "complan: %s\n", cp_store_message(st));
      rc = -1;
      break;
    }
    /* The inputs whole (names of any length), padded to their column. */
    printf("  %4ld %8.3f  ", k, node.time);
    int w = k == 0 ? printf("(start)") : 0;
    for (int i = 0; k > 0 && i < nv && i < task->n_inputs; ++i)
      w += printf("%s%s=%.4g", i ? " " : "", task->inputs[i].joint, v[i]);
    const double *p = x + slot;
    printf("%*s  (%.4f, %.4f, %.4f)\n", w < 14 * task->n_inputs ? 14 * task->n_inputs - w : 0,
           "", p[0], p[1], p[2]);
  }
  free(x);
  free(v);
  free(ids);
  return rc;
}

static void show_run(void *ctx, const char *planner, int run,
                     const cp_plan_result *r) {
  (void)ctx;
  fprintf(stderr, "%s run %d: %s, %ld nodes, %.2f s\n", planner, run + 1,
          cp_plan_status_name(r->status), r->nodes, r->session_seconds);
}

/* --threads' default: the machine's cores (online processors). */
static long default_threads(void) {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > CP_PLAN_MAX_THREADS ? CP_PLAN_MAX_THREADS : n;
}

/* A benchmark the signal stopped (cp_bench_options.cancel): what became of
 * its runs (err), said before MPI is stopped (see cp_cli_plan). */
static void bench_interrupted(const cp_error *err, int use_mpi) {
  fprintf(stderr, "complan: interrupted by %s: %s%s\n",
          __atomic_load_n(&cancelled, __ATOMIC_RELAXED) == SIGTERM ? "SIGTERM"
                                                                  : "SIGINT",
          err->msg,
          use_mpi ? " (under mpirun: mpirun sends SIGTERM when a rank fails, "
                    "and names that rank)" : "");
}

static int benchmark(const char *file, const cp_task *task, const char *db,
                     long runs, const char *planners, double max_seconds,
                     int json, int progress, int threads, int use_mpi) {
  char buf[256];
  const char *list[16], *olist[16];
  int n = 0, no = 0;
  if (planners) {
    snprintf(buf, sizeof buf, "%s", planners);
    for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
      int bad = check_method("--planners", tok);
      if (bad && use_mpi) mpi_impl->stop();
      if (bad) return bad;
      if (is_ompl(tok) && no < 15) olist[no++] = tok;
      else if (!is_ompl(tok) && n < 15) list[n++] = tok;
    }
  }
  list[n] = NULL;
  olist[no] = NULL;
  cp_plan_world *pw;
  cp_error err;
  if (use_mpi && no) {
    mpi_impl->stop();
    return cp_cli_usage_error("plan ", "--mpi runs complan's own planners "
                              "(not %s)", olist[0]);
  }
  if (cp_plan_world_create(task, 1, &pw, &err)) {
    if (use_mpi) mpi_impl->stop();
    return cp_cli_input_error(file, &err);
  }
  cp_plan_world_set_timing(pw, 0); /* nothing here reports its seconds */
  /* Several runs: they are spread over the threads (one world each);
   * one run: its search.batch is. */
  long total = runs * (n ? n : !no);
  if (total < 2 && task->search_batch > 1 && threads > 1 && !use_mpi &&
      cp_plan_world_set_threads(pw, threads, &err)) {
    cp_plan_world_destroy(pw);
    fprintf(stderr, "complan: %s: %s\n", file, err.msg);
    return CP_EXIT_UNDECIDED;
  }
  cp_store *st;
  int rc = cp_cli_open_store(db, 0, &st);
  if (rc) {
    if (use_mpi) mpi_impl->stop();
    cp_plan_world_destroy(pw);
    return rc;
  }
  cp_bench_options bo = {.runs = (int)runs,
                         .planners = n ? list : NULL,
                         .max_seconds = max_seconds,
                         .task_path = file,
                         .progress = progress ? show_run : NULL,
                         .threads = total > 1 ? threads : 1,
                         .db = db,
                         .cancel = &cancelled};
  int64_t eid = -1;
  /* complan's planners (or the task's method when only OMPL's are not
   * listed), then OMPL's into the same experiment. */
  double t0 = cp_search_budget_now(NULL);
  cp_plan_status s = CP_PLAN_SOLVED;
  catch_signals();
  if (use_mpi) {
    s = mpi_impl->benchmark(st, task, cp_plan_world_problem(pw),
                            cp_plan_world_start(pw),
                            cp_plan_world_options(pw), &bo, &eid, &err);
    release_signals();
    if (s == CP_PLAN_INTERRUPTED) bench_interrupted(&err, 1);
    long long jobs, own, sent, received;
    mpi_impl->traffic(&jobs, &own, &sent, &received);
    mpi_impl->stop();
    fprintf(stderr, "complan: mpi: the worker ranks searched %lld runs; "
            "%lld bytes sent, %lld received (the runs' stores)\n", jobs, sent,
            received);
  } else if (n || !no) {
    s = cp_plan_benchmark(st, task, cp_plan_world_problem(pw),
                          cp_plan_world_start(pw), cp_plan_world_options(pw),
                          &bo, &eid, &err);
    if (s == CP_PLAN_INTERRUPTED) bench_interrupted(&err, 0);
  }
  release_signals();
  cp_plan_world_destroy(pw);
  if (s == CP_PLAN_SOLVED && no)
    s = ompl_planners->benchmark(st, task, olist, &bo,
                                 cp_search_budget_now(NULL) - t0, &eid, &err);
  if (s != CP_PLAN_SOLVED) {
    if (s != CP_PLAN_INTERRUPTED) /* else said above */
      fprintf(stderr, "complan: %s: %s\n", file, err.msg);
    cp_store_close(st);
    return exit_of(s);
  }
  json_t *summary = NULL;
  /* Summaries straight from OMPL's tables (what Planner Arena shows). */
  cp_store_status ss = cp_store_bench_summary(st, eid, &summary);
  cp_store_close(st);
  if (ss || !summary) {
    fprintf(stderr, "complan: %s: cannot summarise the benchmark\n", db);
    json_decref(summary);
    return CP_EXIT_UNDECIDED;
  }
  if (json) {
    rc = cp_json_print(summary) ? CP_EXIT_UNDECIDED : CP_EXIT_ANSWERED;
  } else {
    printf("experiment %lld in %s (OMPL benchmark tables): %ld run%s per "
           "planner\n",
           (long long)eid, db, runs, runs == 1 ? "" : "s");
    printf("  %-8s %7s %10s %10s %10s %12s\n", "planner", "solved",
           "time (s)", "cost", "states", "lcp solves");
    size_t i;
    json_t *p;
    json_array_foreach(json_object_get(summary, "planners"), i, p) {
      printf("  %-8s %3lld/%-3lld %10.3f %10.4g %10.0f %12.0f\n",
             json_string_value(json_object_get(p, "planner")),
             json_integer_value(json_object_get(p, "solved")),
             json_integer_value(json_object_get(p, "runs")),
             json_number_value(json_object_get(p, "time")),
             json_number_value(json_object_get(p, "best_cost")),
             json_number_value(json_object_get(p, "graph_states")),
             json_number_value(json_object_get(p, "lcp_solves")));
    }
  }
  json_decref(summary);
  return rc;
}

int cp_cli_plan(const cp_cli_command *cmd, int argc, char **argv) {
  const char *file = NULL, *db = "complan.sqlite", *method = NULL,
             *planners = NULL;
  int json = 0, resume = 0, progress = 0, use_mpi = 0;
  int rc = 0;
  long max_nodes = 0, bench = 0, threads = 0;
  const char *seed_text = NULL; /* --seed: any of 0 .. 2^64 - 1 */
  uint64_t seed = 0;
  double max_seconds = 0;
  const cp_cli_flag flags[] = {
      CP_CLI_VALUE("--db", "FILE", CP_FLAG_PATH, &db,
                   "database (default complan.sqlite; created if absent)"),
      CP_CLI_BOOL("--resume", &resume,
                  "continue the task's last unfinished run (stopped by a\n"
                  "limit or killed) from what the database committed"),
      CP_CLI_VALUE("--seed", "S", CP_FLAG_STRING, &seed_text,
                   "random seed, 0 to 18446744073709551615 (default:\nthe task's search.seed)"),
      CP_CLI_VALUE("--method", "M", CP_FLAG_STRING, &method,
                   "astar, rrt or sst (default: the task's search.method);\n"
                   "or an OMPL planner through complan's simulator:\n"
                   "ompl:RRT, ompl:EST, ompl:KPIECE1, ompl:PDST, ompl:SST\n"
                   "(when complan is built with OMPL, docs/ompl.md)"),
      {"--max-seconds", "S", CP_FLAG_DOUBLE, &max_seconds,
       "time limit (default: the task's limits.seconds)", .dmin = 1e-6, .dmax = 1e7,
       .expect = "a number of seconds from 1e-6 to 1e7"},
      {"--max-nodes", "N", CP_FLAG_LONG, &max_nodes, "node limit (default: the task's limits.nodes)",
       .imin = 1, .imax = 100000000, .expect = "an integer >= 1"},
      {"--threads", "N", CP_FLAG_LONG, &threads,
       "threads simulating the task's search.batch, or with\n"
       "--benchmark running its runs (default: the machine's\n"
       "cores; the answers do not depend on it)",
       .imin = 1, .imax = CP_PLAN_MAX_THREADS,
       .expect = "a number of threads from 1 to 256"},
      CP_CLI_BOOL("--mpi", &use_mpi,
                  "run under mpirun: rank 0 searches and writes the\n"
                  "database, all ranks simulate its search.batch; with\n"
                  "--benchmark the other ranks search its runs\n"
                  "(docs/parallel.md; the answers do not depend on it)"),
      CP_CLI_BOOL("--json", &json,
                  "print one JSON document: {\"status\", \"run_id\",\n"
                  "\"plan_id\", \"planner\", \"nodes\", \"expansions\",\n"
                  "\"lcp_solves\", \"seconds\", \"cost\", \"length\", ...}"),
      CP_CLI_BOOL("--progress", &progress, "progress on stderr even when it is not a terminal"),
      {"--benchmark", "RUNS", CP_FLAG_LONG, &bench,
       "RUNS runs per planner (seeds S, S+1, ...; S from\n"
       "--seed or the task) written to\n"
       "OMPL's benchmark tables (Planner Arena reads them)",
       .imin = 1, .imax = 100000, .expect = "a number of runs >= 1"},
      CP_CLI_VALUE("--planners", "LIST", CP_FLAG_STRING, &planners,
                   "comma-separated planners for --benchmark (complan's\n"
                   "and OMPL's, e.g. astar,sst,ompl:KPIECE1)"),
  };
  const cp_cli_spec spec = {cmd->name, head, tail, "TASK", &file, flags, sizeof flags / sizeof *flags, 0, cmd->usage};
  int prc = cp_cli_parse(&spec, argc, argv);
  if (prc != CP_CLI_GO) return prc;
  const int has_seed = seed_text != NULL;
  if (has_seed && cp_parse_u64(seed_text, &seed))
    return cp_cli_usage_error("plan ", "--seed: expected a whole number from 0 to "
                              "18446744073709551615, found '%s'", seed_text);
  if (method && (prc = check_method("--method", method))) return prc;
  if (method && is_ompl(method) && resume)
    return cp_cli_usage_error("plan ", "--resume: an OMPL planner's run "
                              "cannot be resumed");
  if (planners && !bench)
    return cp_cli_usage_error("plan ", "--planners goes with --benchmark");
  if (bench && resume)
    return cp_cli_usage_error("plan ", "--benchmark and --resume exclude "
                              "each other");

  if (use_mpi && !mpi_impl)
    return cp_cli_usage_error("plan ", "--mpi: this complan was built "
                              "without MPI (install libopenmpi-dev and "
                              "rebuild)");
  if (use_mpi && !bench && method && is_ompl(method))
    return cp_cli_usage_error("plan ", "--mpi runs complan's own planners");

  if (!threads) threads = default_threads();
  cp_task task;
  cp_error err;
  int rank = 0, ranks = 1;
  if (use_mpi && mpi_impl->start(&rank, &ranks, &err)) {
    fprintf(stderr, "complan: %s\n", err.msg);
    return CP_EXIT_UNDECIDED;
  }
  if (cp_task_load(file, &task, &err)) {
    if (rank > 0) return mpi_worker(file, rank, NULL, &err);
    if (use_mpi) mpi_impl->stop();
    return cp_cli_input_error(file, &err);
  }
  if (rank > 0) {
    rc = mpi_worker(file, rank, &task, NULL);
    cp_task_free(&task);
    return rc;
  }
  cp_cli_scene_warnings(file, &task.scene);
  if (bench) {
    if (has_seed) task.seed = (uint64_t)seed;
    if (max_nodes > 0) task.max_nodes = max_nodes; /* every run's limit */
    rc = benchmark(file, &task, db, bench, planners, max_seconds, json,
                   progress || isatty(STDERR_FILENO), (int)threads, use_mpi);
    cp_task_free(&task);
    return rc;
  }
  cp_store *st;
  rc = cp_cli_open_store(db, 0, &st);
  if (rc) {
    if (use_mpi) mpi_impl->stop();
    cp_task_free(&task);
    return rc;
  }
  progress_ctx pc = {0};
  cp_plan_options o = cp_plan_defaults();
  o.resume = resume;
  o.has_seed = has_seed;
  o.seed = has_seed ? (uint64_t)seed : 0;
  o.method = method;
  o.max_seconds = max_seconds;
  o.max_nodes = max_nodes;
  o.task_path = file;
  o.threads = (int)threads;
  if (progress || isatty(STDERR_FILENO)) {
    o.progress = show_progress;
    o.progress_ctx = &pc;
  }
  o.cancel = &cancelled;
  cp_plan_result r;
  catch_signals();
  cp_plan_status s =
      use_mpi ? mpi_impl->plan(st, &task, &o, &r, &err)
      : method && is_ompl(method)
          ? ompl_planners->plan(st, &task, method, &o, &r, &err)
          : cp_plan_task(st, &task, &o, &r, &err);
  release_signals();
  if (pc.shown) fputc('\n', stderr);
  /* Said before MPI is stopped: when a rank has died, MPI_Finalize may
   * wait for it until mpirun kills this rank (the run is committed). */
  if (s == CP_PLAN_INTERRUPTED)
    fprintf(stderr, "complan: interrupted by %s: run %lld stopped and "
            "committed with %ld nodes; %s%s\n",
            __atomic_load_n(&cancelled, __ATOMIC_RELAXED) == SIGTERM
                ? "SIGTERM"
                : "SIGINT", (long long)r.run_id,
            r.nodes, method && is_ompl(method)
                         ? "an OMPL planner's run cannot be resumed"
                         : "continue it with --resume",
            use_mpi ? " (under mpirun: mpirun sends SIGTERM when a rank "
                      "fails, and names that rank)" : "");
  if (use_mpi) {
    long long jobs, own, sent, received;
    cp_plan_mpi_rank0 t;
    mpi_impl->traffic(&jobs, &own, &sent, &received);
    mpi_impl->rank0(&t);
    mpi_waits_line(0);
    mpi_impl->stop();
    fprintf(stderr, "complan: mpi: %d worker rank%s ran %lld expansions, "
            "rank 0 ran %lld; %lld bytes sent, %lld received "
            "(%.0f per worker expansion)\n",
            ranks - 1, ranks == 2 ? "" : "s", jobs, own, sent, received,
            jobs ? (double)(sent + received) / (double)jobs : 0.0);
    fprintf(stderr, "complan: mpi: rank 0 in %lld batches: %.6f s CPU: "
            "%.6f own jobs, %.6f store, %.6f messages, %.6f looking, %.6f "
            "waiting (%.6f s wall of %.6f); %lld looks, %lld found "
            "nothing; %lld jobs of the next batch; %lld looks during "
            "commits; %lld looks within solves (%lld calls)\n",
            t.batches, t.cpu, t.own, t.store,
            t.cpu - t.own - t.store - t.looking - t.waiting, t.looking,
            t.waiting, t.waiting_wall, t.wall, t.looks, t.fruitless,
            t.ahead, t.store_looks, t.solve_looks, t.solve_polls);
  }
  if (s == CP_PLAN_FAILED_EXPANSIONS)
    fprintf(stderr, "complan: %s: the search space ran out, but %ld "
            "expansion%s failed (%ld solver_failed, %ld nonfinite): not a "
            "proof that no plan exists (the nodes' messages say why)\n",
            file, r.failed, r.failed == 1 ? "" : "s",
            r.failed_by[CP_EXPAND_SOLVER_FAILED],
            r.failed_by[CP_EXPAND_NONFINITE]);
  if (r.resumed && method && strcmp(method, r.planner))
    fprintf(stderr, "complan: note: resumed run %lld keeps its planner %s "
            "(--method %s ignored)\n", (long long)r.run_id, r.planner, method);
  rc = exit_of(s);
  if (s == CP_PLAN_BAD_INPUT || s == CP_PLAN_FAILED) {
    if (err.where[0]) cp_cli_input_error(file, &err);
    else fprintf(stderr, "complan: %s\n", err.msg);
    cp_store_close(st);
    cp_task_free(&task);
    return rc;
  }
  if (json) {
    json_t *doc = json_object();
    json_object_set_new(doc, "status", json_string(cp_plan_status_name(s)));
    json_object_set_new(doc, "run_id", json_integer(r.run_id));
    json_object_set_new(doc, "plan_id",
                        r.plan_id >= 0 ? json_integer(r.plan_id) : json_null());
    json_object_set_new(doc, "planner", json_string(r.planner));
    json_object_set_new(doc, "nodes", json_integer(r.nodes));
    json_object_set_new(doc, "expansions", json_integer(r.stats.expansions));
    json_object_set_new(doc, "lcp_solves", json_integer(r.stats.lcp_solves));
    json_object_set_new(doc, "seconds", json_real(r.seconds));
    json_object_set_new(doc, "cost", cp_json_num(r.cost));
    json_object_set_new(doc, "length", json_integer(r.length));
    json_object_set_new(doc, "resumed", json_boolean(r.resumed));
    json_object_set_new(doc, "steps", json_integer(r.stats.steps));
    json_object_set_new(doc, "lemke_pivots", json_integer(r.stats.pivots));
    json_object_set_new(doc, "fallbacks", json_integer(r.stats.fallbacks));
    json_object_set_new(doc, "rejected", json_integer(r.stats.rejected));
    json_object_set_new(doc, "duplicates", json_integer(r.stats.duplicates));
    json_object_set_new(doc, "failed_expansions", json_integer(r.failed));
    json_object_set_new(doc, "actions_exhausted",
                        json_boolean(r.actions_exhausted));
    json_t *why = json_object();
    for (int k = 0; k < CP_EXPAND_COUNT; ++k)
      if (cp_expand_outcome_is_failure((cp_expand_outcome)k))
        json_object_set_new(why, cp_expand_outcome_name((cp_expand_outcome)k),
                            json_integer(r.failed_by[k]));
    json_object_set_new(doc, "failures", why);
    json_object_set_new(doc, "best_distance", cp_json_num(r.best_distance));
    json_object_set_new(doc, "best_node", r.best_node >= 0
                                              ? json_integer(r.best_node)
                                              : json_null());
    json_object_set_new(doc, "store_seconds", json_real(r.store_seconds));
    json_object_set_new(doc, "database", json_string(db));
    if (cp_json_print(doc)) rc = CP_EXIT_UNDECIDED;
    json_decref(doc);
  } else {
    printf("%s: %s by %s%s: %ld nodes, %ld expansions (%ld failed), %lld "
           "simulation steps, %lld LCP solves, %.2f s (%.2f s storing)\n",
           file, cp_plan_status_name(s), r.planner,
           r.resumed ? " (resumed)" : "", r.nodes, r.stats.expansions,
           r.failed, r.stats.steps, r.stats.lcp_solves, r.seconds,
           r.store_seconds);
    if (s == CP_PLAN_SOLVED) {
      if (print_plan(st, &task, &r, db)) rc = CP_EXIT_UNDECIDED;
    } else {
      if (r.best_node >= 0)
        printf("no plan; node %ld came nearest the goal: %.4g m away "
               "(position and angle, docs/planner.md)\n", r.best_node,
               r.best_distance);
      else /* an OMPL planner: its tree is not stored */
        printf("no plan; %s came within %.4g m of the goal (position and "
               "angle, docs/planner.md)\n", r.planner, r.best_distance);
    }
  }
  cp_store_close(st);
  cp_task_free(&task);
  return rc;
}
