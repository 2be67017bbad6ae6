/* MPI planning (`mpirun -n 3 complan plan TASK --mpi`, planner/plan/mpi.c):
 * with search.batch 4, rank 0's database -- every node column but pivots,
 * warm-start blobs included -- and the plans are those of `--threads 1`
 * (astar, rrt, sst on the push task) with 1, 2 and 3 ranks, each
 * expansion run once (by a worker or rank 0); a benchmark's runs spread
 * over 1, 2 and 3 ranks give the one-thread database; --mpi with an OMPL
 * planner in a benchmark, with a task or
 * a database that cannot be opened, a worker that cannot load its task or
 * loaded another one are errors with exit status 2 (no run stored, no rank
 * left waiting); a worker rank killed mid-run ends
 * the run with mpirun's error naming it, and the database resumes (under
 * mpirun) into the uninterrupted run; SIGTERM to rank 0 stores the run as
 * interrupted. Pipelined batches, overlapped over the ranks, grow the
 * 1-thread tree on 1, 2 and 4 ranks, and a worker killed mid-run leaves
 * an interrupted run whose nodes are the uninterrupted run's first.
 *
 * No test here sets Criterion's `.timeout`: Criterion 2.4's runner
 * (boxfort's per-test timeout list) intermittently leaked one 48-byte
 * request at exit in this suite, which LeakSanitizer reports as a
 * failure although every test passed (seen 4 times in sanitizer runs,
 * never with our code on the stack). meson's per-test timeout bounds the
 * whole binary instead. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <fcntl.h>
#include <jansson.h>
#include <signal.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/support.h"
#include "synth.h"

/* Starts `mpirun --oversubscribe ARGS` (NULL-ended; "@" stands for the
 * complan executable) with stderr to the file errpath (a mkstemp
 * template, filled in); returns mpirun's pid. */
static pid_t mpirun_args(const char *const *args, char *errpath) {
  const char *mpi = getenv("CP_MPIRUN"), *exe = getenv("CP_COMPLAN");
  cr_assert(mpi && exe, "CP_MPIRUN and CP_COMPLAN (run with meson test)");
  const char *argv[48];
  int k = 0;
  argv[k++] = mpi;
  argv[k++] = "--oversubscribe";
  for (int i = 0; args[i] && k < 47; ++i)
    argv[k++] = strcmp(args[i], "@") ? args[i] : exe;
  argv[k] = NULL;
  int fd = mkstemp(errpath);
  cr_assert(fd >= 0);
  pid_t pid = fork();
  cr_assert(pid >= 0);
  if (pid == 0) {
    /* CI runs as root; Open MPI refuses that unless told. */
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    /* A sanitizer build: Open MPI's own allocations (in MCA components it
     * has unloaded by exit, so no suppression can name them) and OMPL's
     * static ones would fail every rank's leak check. The ranks keep
     * AddressSanitizer's other checks and UBSan; wire.c's memory is
     * leak-checked in process by test_wire. */
    setenv("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=0", 1);
    int nul = open("/dev/null", O_RDWR);
    dup2(nul, 0);
    dup2(nul, 1);
    dup2(fd, 2);
    execv(mpi, (char *const *)argv);
    _exit(127);
  }
  close(fd);
  return pid;
}

/* Waits for mpirun; its exit status (-1: killed) and *err its stderr. */
static int mpirun_wait(pid_t pid, char *errpath, char **err) {
  int st = 0;
  waitpid(pid, &st, 0);
  *err = cpt_read_file(errpath, NULL);
  unlink(errpath);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* `mpirun --oversubscribe -n ranks complan ARGS` started. */
static pid_t mpirun_start(int ranks, const char *const *args, char *errpath) {
  const char *argv[40] = {"-n", NULL, "@"};
  char n[16];
  snprintf(n, sizeof n, "%d", ranks);
  argv[1] = n;
  for (int i = 0; args[i] && i < 36; ++i) argv[3 + i] = args[i];
  return mpirun_args(argv, errpath);
}

static int mpirun(int ranks, const char *const *args, char **err) {
  char path[] = "/tmp/cpmpiXXXXXX";
  return mpirun_wait(mpirun_start(ranks, args, path), path, err);
}

/* The counts of the `complan: mpi:` line: jobs sent to the workers and
 * jobs rank 0 ran itself (-1: no such line). */
static void traffic_of(const char *err, long long *jobs, long long *own) {
  const char *at = strstr(err, "complan: mpi: ");
  *jobs = *own = -1;
  if (at && (at = strstr(at, " ran "))) *jobs = atoll(at + 5);
  if (at && (at = strstr(at, "rank 0 ran "))) *own = atoll(at + 11);
}

/* The looks of rank 0's line (`; L looks, F found nothing`); 0, or -1
 * when the line or the counts are missing. */
static int looks_of(const char *err, long long *looks, long long *fruitless) {
  const char *at = strstr(err, "complan: mpi: rank 0 in ");
  at = at ? strstr(at, "); ") : NULL;
  return at && sscanf(at, "); %lld looks, %lld found nothing", looks,
                      fruitless) == 2 ? 0 : -1;
}

/* The run of --threads 1, then of `mpirun -n R ... --mpi` for R = 1, 2, 3
 * (rank 0 alone runs every job; with workers it runs the jobs no worker
 * is free for): the same database rows and plan each time. */
/* search_keys: extra keys of the task's search object (NULL: none). */
static void same_as_threads_with(const char *method, const char *search_keys) {
  char *task = search_keys ? synth_push_task_with(4, search_keys)
                           : synth_push_task(4);
  char *a = synth_temp_db(), *b = synth_temp_db();
  const char *one[] = {"complan", "plan", task, "--db", a, "--method",
                       method, "--max-nodes", "60", "--threads", "1",
                       "--json", NULL};
  char *err = NULL;
  int rc = cpt_run(one, NULL, &err);
  cr_assert(rc == 0 || rc == 1, "exit %d: %s", rc, err);
  free(err);
  sqlite3 *da = synth_open_db(a);
  for (int ranks = 1; ranks <= 3; ++ranks) {
    const char *mp[] = {"plan", task, "--db", b, "--method", method,
                        "--max-nodes", "60", "--mpi", NULL};
    int rm = mpirun(ranks, mp, &err);
    cr_assert_eq(rm, rc, "%s: %d ranks: mpirun exit %d (threads: %d): %s",
                 method, ranks, rm, rc, err);
    char line[64];
    snprintf(line, sizeof line, "complan: mpi: %d worker rank", ranks - 1);
    cr_expect(strstr(err, line), "%s", err);
    long long jobs, own, looks = -1, fruitless = -1;
    traffic_of(err, &jobs, &own);
    cr_expect_eq(looks_of(err, &looks, &fruitless), 0, "%s", err);
    free(err);
    /* Rank 0 looks for answers only while a worker has a job: alone, it
     * never looks; with workers, each answer found by a look was one. */
    cr_expect(fruitless >= 0 && fruitless <= looks, "%lld of %lld looks",
              fruitless, looks);
    if (ranks == 1) cr_expect_eq(looks, 0, "no worker, no look");
    else cr_expect_leq(looks - fruitless, jobs, "%lld looks found %lld of "
                       "%lld answers", looks, looks - fruitless, jobs);
    sqlite3 *db = synth_open_db(b);
    long long na = synth_assert_same_run(da, 1, db, ranks, method);
    cr_assert(na > 10, "%s: a real search (%lld nodes)", method, na);
    /* The nodes' pivot counts too (a memo hit counts its cold solve's). */
    char pq[128];
    snprintf(pq, sizeof pq, "SELECT id, pivots FROM nodes WHERE search_id ="
             " %d ORDER BY id", ranks);
    char *pg = synth_rows_text(db, pq), *pw = synth_rows_text(da,
        "SELECT id, pivots FROM nodes WHERE search_id = 1 ORDER BY id");
    cr_expect_str_eq(pg, pw, "%s: pivots on %d ranks", method, ranks);
    free(pg);
    free(pw);
    /* Every expansion of a batch ran once, on a worker or on rank 0
     * (batches of 1, the last ones of a search, run on rank 0 outside
     * the counts). */
    char sql[128];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM nodes WHERE search_id = "
             "%d AND parent IS NOT NULL", ranks);
    long long expansions = synth_query_int(db, sql);
    cr_expect(jobs >= 0 && own >= 0 && jobs + own <= expansions + 4 &&
                  jobs + own > expansions / 2,
              "%d ranks: %lld + %lld jobs, %lld expansions", ranks, jobs,
              own, expansions);
    if (ranks == 1) cr_expect_eq(jobs, 0, "no worker, no job sent");
    else cr_expect_gt(jobs, 0, "%d ranks: the workers ran jobs", ranks);
    sqlite3_close(db);
  }
  sqlite3_close(da);
  synth_remove_db(a);
  synth_remove_db(b);
  remove(task);
  free(task);
}

static void same_as_threads(const char *method) {
  same_as_threads_with(method, NULL);
}

/* The jobs rank 0 ran of the batch after the one it waited for (the
 * rank-0 line's `; J jobs of the next batch`); -1 when missing. */
static long long ahead_of(const char *err) {
  const char *at = strstr(err, "complan: mpi: rank 0 in ");
  at = at ? strstr(at, "found nothing; ") : NULL;
  long long j = -1;
  return at && sscanf(at, "found nothing; %lld jobs", &j) == 1 ? j : -1;
}

/* The looks rank 0 made during its store's commits (the rank-0 line's
 * `; K looks during commits`); -1 when missing. */
static long long store_looks_of(const char *err) {
  const char *at = strstr(err, "complan: mpi: rank 0 in ");
  at = at ? strstr(at, "jobs of the next batch; ") : NULL;
  long long k = -1;
  return at && sscanf(at, "jobs of the next batch; %lld looks during "
                      "commits", &k) == 1 ? k : -1;
}

/* The rank-0 line's looks within rank 0's LCP solves and the calls made
 * from them (`; L looks within solves (C calls)`); -1 each when missing. */
static void solve_looks_of(const char *err, long long *looks, long long *calls) {
  const char *at = strstr(err, "complan: mpi: rank 0 in ");
  at = at ? strstr(at, "looks during commits; ") : NULL;
  *looks = *calls = -1;
  if (at && sscanf(at, "looks during commits; %lld looks within solves "
                   "(%lld calls)", looks, calls) != 2)
    *looks = *calls = -1;
}

/* The pipelined push task (sst, batch 16, search.pipeline not given: the
 * default, halves of 8) in *task; in the database *a (returned open) the
 * 1-thread run of 120 nodes of the same task at batch 8 with "pipeline":
 * true, the default's tree; *b a database for the runs to compare with it. */
static sqlite3 *pipelined_one_thread(char **task, char **a, char **b) {
  *task = synth_push_task_with(16, NULL);
  char *explicit8 = synth_push_task_with(8, "\"pipeline\": true");
  *a = synth_temp_db();
  *b = synth_temp_db();
  const char *one[] = {"complan", "plan", explicit8, "--db", *a, "--method",
                       "sst", "--max-nodes", "120", "--threads", "1", NULL};
  char *err = NULL;
  cr_assert_eq(cpt_run(one, NULL, &err), 0, "%s", err);
  free(err);
  remove(explicit8);
  free(explicit8);
  return synth_open_db(*a);
}

/* Pipelined batches (the default at batch 16: halves of 8) over 1, 2 and 4 ranks,
 * overlapped (rank 0 hands batch k + 1 out before it waits for batch k, and runs
 * jobs of batch k + 1 while batch k's last ones run on workers): the draw
 * and merge order does not depend on the transport or on which rank ran
 * which job, so every run grows the 1-thread tree. */
Test(mpi, pipelined_sst_as_threads) {
  char *task, *a, *b, *err = NULL;
  sqlite3 *da = pipelined_one_thread(&task, &a, &b);
  const int ranks[] = {1, 2, 4};
  for (int i = 0; i < 3; ++i) {
    const char *mp[] = {"plan", task, "--db", b, "--method", "sst",
                        "--max-nodes", "120", "--mpi", NULL};
    cr_assert_eq(mpirun(ranks[i], mp, &err), 0, "%d ranks: %s", ranks[i],
                 err);
    char line[64], what[64];
    snprintf(line, sizeof line, "complan: mpi: %d worker rank", ranks[i] - 1);
    cr_expect(strstr(err, line), "%s", err);
    long long jobs, own, ahead = ahead_of(err);
    traffic_of(err, &jobs, &own);
    /* Rank 0 runs jobs of the next batch only among its own jobs, and
     * alone it has no other batch to wait for. */
    cr_expect(ahead >= 0 && ahead <= own, "%lld of %lld: %s", ahead, own,
              err);
    if (ranks[i] == 1) cr_expect_eq(ahead, 0);
    else cr_expect_gt(jobs, 0, "%d ranks: the workers ran jobs", ranks[i]);
    /* Rank 0 also looks for answers during its commits (when one is
     * due), counted among its looks; alone it never looks. */
    long long looks = -1, fruitless = -1, in_commits = store_looks_of(err);
    cr_expect_eq(looks_of(err, &looks, &fruitless), 0, "%s", err);
    cr_expect(in_commits >= 0 && in_commits <= looks, "%lld of %lld: %s",
              in_commits, looks, err);
    if (ranks[i] == 1) cr_expect_eq(in_commits, 0);
    /* And within its long LCP solves (every 16 pivots), counted among its
     * looks; alone it sets no call-back. How many depends on which jobs
     * rank 0 ran, so only the bounds are checked; the tree is the
     * 1-thread one all the same (below). */
    long long in_solves, calls;
    solve_looks_of(err, &in_solves, &calls);
    cr_expect(in_solves >= 0 && in_solves <= calls && in_solves <= looks,
              "%lld looks of %lld calls (%lld looks): %s", in_solves, calls,
              looks, err);
    if (ranks[i] == 1) cr_expect_eq(calls, 0, "%s", err);
    free(err);
    sqlite3 *db = synth_open_db(b);
    snprintf(what, sizeof what, "pipelined, %d ranks", ranks[i]);
    cr_assert_gt(synth_assert_same_run(da, 1, db, i + 1, what), 60);
    char sql[160];
    snprintf(sql, sizeof sql, "SELECT count(*) FROM searches WHERE id = %d "
             "AND options LIKE '%%\"search_batch\": 8, "
             "\"search_pipeline\": true%%'", i + 1);
    cr_assert_eq(synth_query_int(db, sql), 1);
    sqlite3_close(db);
  }
  sqlite3_close(da);
  synth_remove_db(a);
  synth_remove_db(b);
  remove(task);
  free(task);
}

/* Rank r's waits line (`complan: mpi rank R waits: ...`, the CLI's
 * print of cp_plan_mpi_wait_times); 0, or -1 when missing. */
typedef struct waits_line {
  long long waits, naps, jobs;
  double wall, polling, nap_wall, cpu, sending;
} waits_line;

static int waits_of(const char *err, int r, waits_line *w) {
  char head[48];
  snprintf(head, sizeof head, "complan: mpi rank %d waits: ", r);
  const char *at = strstr(err, head);
  return at && sscanf(at + strlen(head), "%lld waits, %lf s wall, %lf "
                      "polling; %lld naps, %lf s; %lld jobs, %lf s CPU, "
                      "%lf s sending", &w->waits, &w->wall, &w->polling,
                      &w->naps, &w->nap_wall, &w->jobs, &w->cpu,
                      &w->sending) == 8 ? 0 : -1;
}

/* How the ranks wait (COMPLAN_MPI_POLL: 1 polls before it naps, 0 only
 * naps; docs/parallel.md) changes no node: pipelined sst on 2 ranks both
 * ways grows the 1-thread tree. Each rank's waits line adds up: the
 * worker's jobs are the jobs rank 0 sent, rank 0 runs none as a worker,
 * polling and naps are parts of the waits, a nap sleeps at least the
 * 20 us it asks for, and without polling nothing polls. */
Test(mpi, waits_poll_or_nap_give_the_same_tree) {
  char *task, *a, *b, *err = NULL;
  sqlite3 *da = pipelined_one_thread(&task, &a, &b);
  for (int poll = 0; poll <= 1; ++poll) {
    setenv("COMPLAN_MPI_POLL", poll ? "1" : "0", 1);
    const char *mp[] = {"plan", task, "--db", b, "--method", "sst",
                        "--max-nodes", "120", "--mpi", NULL};
    int rc = mpirun(2, mp, &err);
    unsetenv("COMPLAN_MPI_POLL");
    cr_assert_eq(rc, 0, "poll %d: %s", poll, err);
    long long jobs, own;
    traffic_of(err, &jobs, &own);
    cr_expect_gt(jobs, 0, "%s", err);
    for (int r = 0; r <= 1; ++r) {
      waits_line w;
      cr_assert_eq(waits_of(err, r, &w), 0, "rank %d: %s", r, err);
      const double eps = 1e-6;
      cr_expect_eq(w.jobs, r ? jobs : 0, "rank %d: %lld jobs, sent %lld", r,
                   w.jobs, jobs);
      cr_expect(w.waits >= 0 && w.naps >= 0 && w.wall >= 0 &&
                    w.polling >= 0 && w.sending >= 0 && w.cpu >= 0,
                "rank %d: %s", r, err);
      cr_expect_leq(w.polling, w.wall + eps, "rank %d: %s", r, err);
      cr_expect_leq(w.nap_wall, w.wall + eps, "rank %d: %s", r, err);
      cr_expect_geq(w.nap_wall, (double)w.naps * 20e-6 - eps,
                    "rank %d: a nap sleeps at least 20 us: %s", r, err);
      if (!poll) cr_expect_eq(w.polling, 0.0, "rank %d: %s", r, err);
      if (!r) cr_expect_eq(w.cpu, 0.0, "rank 0 runs no worker job");
      else cr_expect_gt(w.cpu, 0.0, "the worker's jobs took CPU");
      if (w.waits == 0) cr_expect_eq(w.naps, 0, "rank %d: %s", r, err);
    }
    free(err);
    sqlite3 *db = synth_open_db(b);
    char what[32];
    snprintf(what, sizeof what, "2 ranks, poll %d", poll);
    cr_assert_gt(synth_assert_same_run(da, 1, db, poll + 1, what), 60);
    sqlite3_close(db);
  }
  sqlite3_close(da);
  synth_remove_db(a);
  synth_remove_db(b);
  remove(task);
  free(task);
}

Test(mpi, astar_as_threads) { same_as_threads("astar"); }
Test(mpi, rrt_as_threads) { same_as_threads("rrt"); }
Test(mpi, sst_as_threads) { same_as_threads("sst"); }
/* search.fresh_actions (session 28): the draws are rank 0's, so 1-3 ranks
 * grow the one-thread tree (plain batches and pipelined halves). */
Test(mpi, fresh_actions_sst_as_threads) {
  same_as_threads_with("sst", "\"pipeline\": false, \"fresh_actions\": true");
}
Test(mpi, fresh_actions_pipelined_sst_as_threads) {
  same_as_threads_with("sst", "\"pipeline\": true, \"fresh_actions\": true");
}
/* rrt's revival of an exhausted node's children (session 29) as well. */
Test(mpi, fresh_actions_rrt_as_threads) {
  same_as_threads_with("rrt", "\"pipeline\": false, \"fresh_actions\": true");
}

/* `plan --benchmark --mpi` (cp_plan_mpi_benchmark): six runs (astar and
 * sst, 3 seeds each, node limits) spread over 1, 2 and 3 ranks give the
 * database of `--threads 1`: the same searches under the same ids (every
 * node column, pivots included, the plans), and the benchmark's run rows
 * (planner, search, status, states, expansions, LCP solves, steps, cost,
 * pivots) in the same order; with workers, the workers searched the runs. */
Test(mpi, benchmark_over_ranks_gives_the_one_thread_database) {
  char *task = synth_push_task(1), *a = synth_temp_db(), *err = NULL;
  const char *one[] = {"complan", "plan", task, "--db", a, "--benchmark",
                       "3", "--planners", "astar,sst", "--max-nodes", "80",
                       "--threads", "1", NULL};
  int rc = cpt_run(one, NULL, &err);
  cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
  free(err);
  const char *q =
      "SELECT r.id, p.name, r.search_id, r.status, r.solved, r.graph_states,"
      " r.expansions, r.lcp_solves, r.simulation_steps, r.best_cost,"
      " r.lemke_pivots, s.planner, s.seed, s.status, s.nodes FROM runs r"
      " JOIN plannerConfigs p ON p.id = r.plannerid JOIN searches s ON s.id"
      " = r.search_id ORDER BY r.id";
  /* every node's pivots too: each search starts with empty impact memos */
  const char *qp = "SELECT search_id, id, pivots FROM nodes ORDER BY 1, 2";
  sqlite3 *da = synth_open_db(a);
  char *ra = synth_rows_text(da, q), *pa = synth_rows_text(da, qp);
  cr_assert(strstr(ra, "control_complan_sst 6 "), "%s", ra);
  for (int ranks = 1; ranks <= 3; ++ranks) {
    char *b = synth_temp_db();
    const char *mp[] = {"plan", task, "--db", b, "--benchmark", "3",
                        "--planners", "astar,sst", "--max-nodes", "80",
                        "--mpi", NULL};
    cr_assert_eq(mpirun(ranks, mp, &err), 0, "%d ranks: %s", ranks, err);
    char line[64];
    snprintf(line, sizeof line, "the worker ranks searched %d runs",
             ranks > 1 ? 6 : 0);
    cr_expect(strstr(err, line), "%d ranks: %s", ranks, err);
    free(err);
    sqlite3 *db = synth_open_db(b);
    for (int run = 1; run <= 6; ++run) {
      char what[48];
      snprintf(what, sizeof what, "%d ranks, run %d", ranks, run);
      cr_assert_gt(synth_assert_same_run(da, run, db, run, what), 10, "%s",
                   what);
    }
    char *rb = synth_rows_text(db, q), *pb = synth_rows_text(db, qp);
    cr_assert_str_eq(rb, ra, "%d ranks", ranks);
    cr_assert_str_eq(pb, pa, "%d ranks: pivots", ranks);
    free(rb);
    free(pb);
    cr_expect_eq(synth_query_int(db, "SELECT count(*) FROM searches"), 6);
    cr_expect_eq(synth_query_int(db, "SELECT count(*) FROM tasks"), 1);
    sqlite3_close(db);
    synth_remove_db(b);
  }
  free(ra);
  free(pa);
  sqlite3_close(da);
  synth_remove_db(a);
  remove(task);
  free(task);
}

Test(mpi, errors) {
  char *task = synth_push_task(4), *db = synth_temp_db(), *err = NULL;
  sqlite3 *s;
  const char *bench[] = {"plan", task, "--db", db, "--mpi", "--benchmark",
                         "2", "--planners", "astar,ompl:RRT", NULL};
  cr_assert_eq(mpirun(2, bench, &err), 2, "%s", err);
  cr_expect(strstr(err, "--mpi runs complan's own planners"), "%s", err);
  free(err);
  /* A task no rank can load: rank 0 says so once (the workers, told to
   * stop, are silent), and nothing hangs. */
  const char *missing[] = {"plan", "/nonexistent/task.json", "--db", db,
                           "--mpi", NULL};
  cr_assert_eq(mpirun(3, missing, &err), 2, "%s", err);
  const char *at = strstr(err, "cannot open /nonexistent/task.json");
  cr_expect(at && !strstr(at + 1, "cannot open /nonexistent"), "%s", err);
  free(err);
  /* Ranks given other tasks (mpirun's MPMD form): a worker that cannot
   * load its task, and one whose task differs from rank 0's (here only in
   * its search seed: any byte of the task or its files counts). */
  char path[] = "/tmp/cpmpiXXXXXX";
  const char *lost[] = {"-n", "1", "@", "plan", task, "--db", db, "--mpi",
                        ":", "-n", "1", "@", "plan", "/nonexistent/t.json",
                        "--db", db, "--mpi", NULL};
  cr_assert_eq(mpirun_wait(mpirun_args(lost, path), path, &err), 2, "%s",
               err);
  cr_expect(strstr(err, "rank 1 could not load the task: cannot open "
                        "/nonexistent/t.json"), "%s", err);
  free(err);
  /* The same in a benchmark over ranks: refused before any row. */
  const char *lost_bench[] = {"-n", "1", "@", "plan", task, "--db", db,
                              "--benchmark", "2", "--mpi", ":", "-n", "1",
                              "@", "plan", "/nonexistent/t.json", "--db", db,
                              "--benchmark", "2", "--mpi", NULL};
  char path3[] = "/tmp/cpmpiXXXXXX";
  cr_assert_eq(mpirun_wait(mpirun_args(lost_bench, path3), path3, &err), 2,
               "%s", err);
  cr_expect(strstr(err, "rank 1 could not load the task: cannot open "
                        "/nonexistent/t.json"), "%s", err);
  free(err);
  s = synth_open_db(db);
  cr_expect_eq(synth_query_int(s, "SELECT count(*) FROM experiments"), 0);
  sqlite3_close(s);
  char *text = cpt_read_file(task, NULL), *seed = strstr(text, "\"seed\": 1");
  cr_assert_not_null(seed);
  seed[8] = '2';
  char *other = cpt_temp_file(text, ".json");
  free(text);
  const char *differ[] = {"-n", "2", "@", "plan", task, "--db", db, "--mpi",
                          ":", "-n", "1", "@", "plan", other, "--db", db,
                          "--mpi", NULL};
  char path2[] = "/tmp/cpmpiXXXXXX";
  cr_assert_eq(mpirun_wait(mpirun_args(differ, path2), path2, &err), 2,
               "%s", err);
  cr_expect(strstr(err, "rank 2 loaded another task than rank 0"), "%s",
            err);
  free(err);
  remove(other);
  free(other);
  s = synth_open_db(db);
  cr_expect_eq(synth_query_int(s, "SELECT count(*) FROM searches"), 0);
  sqlite3_close(s);
  /* A database rank 0 cannot open: the workers are stopped too. */
  char dir[] = "/tmp/cpmpidirXXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  const char *baddb[] = {"plan", task, "--db", dir, "--mpi", NULL};
  cr_assert_eq(mpirun(3, baddb, &err), 2, "%s", err);
  cr_expect(strstr(err, "is a directory"), "%s", err);
  free(err);
  rmdir(dir);
  synth_remove_db(db);
  remove(task);
  free(task);
}

/* The pid of MPI rank `rank` among mpirun's children (Open MPI gives each
 * OMPI_COMM_WORLD_RANK in its environment); -1 when none. */
static pid_t rank_pid(pid_t mpirun_pid, int rank) {
  char want[64];
  snprintf(want, sizeof want, "OMPI_COMM_WORLD_RANK=%d", rank);
  DIR *d = opendir("/proc");
  cr_assert_not_null(d);
  pid_t found = -1;
  struct dirent *e;
  while (found < 0 && (e = readdir(d))) {
    char path[300];
    long pid = atol(e->d_name), ppid = 0;
    if (pid <= 0) continue;
    snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    /* pid (comm) state ppid: comm may hold spaces, so from the last ')'. */
    char line[1024];
    char *r = fgets(line, sizeof line, f) ? strrchr(line, ')') : NULL;
    fclose(f);
    if (!r || sscanf(r + 1, " %*c %ld", &ppid) != 1 || ppid != mpirun_pid)
      continue;
    snprintf(path, sizeof path, "/proc/%ld/environ", pid);
    size_t len = 0;
    char *env = cpt_read_file(path, &len);
    for (size_t at = 0; env && at < len; at += strlen(env + at) + 1)
      if (!strcmp(env + at, want)) found = (pid_t)pid;
    free(env);
  }
  closedir(d);
  return found;
}

/* The killed run resumed under mpirun. */
static void resume_mpi(const char *task, const char *db) {
  const char *args[] = {"plan", task, "--db", db, "--method", "sst",
                        "--seed", "4", "--max-nodes", "1500",
                        "--max-seconds", "3600", "--mpi", "--resume", NULL};
  char *err = NULL;
  cr_assert_eq(mpirun(3, args, &err), 0, "%s", err);
  free(err);
}

/* Runs the push task (sst, seed 4, max_nodes) under `mpirun -n 3 --mpi`
 * until 100 nodes are committed, sends MPI rank `rank` the signal sig and
 * waits for mpirun: its exit status, *err its stderr, *s the database. */
static int signal_mid_run(const char *task, const char *db,
                          const char *max_nodes, int rank, int sig,
                          sqlite3 **s, char **err) {
  const char *args[] = {"plan", task, "--db", db, "--method", "sst",
                        "--seed", "4", "--max-nodes", max_nodes,
                        "--max-seconds", "3600", "--mpi", NULL};
  char path[] = "/tmp/cpmpiXXXXXX";
  pid_t pid = mpirun_start(3, args, path);
  *s = synth_wait_nodes(db, 100, 120);
  cr_assert_not_null(*s, "no nodes committed");
  pid_t r = rank_pid(pid, rank);
  cr_assert(r > 0, "rank %d not found among mpirun's children", rank);
  kill(r, sig);
  return mpirun_wait(pid, path, err);
}

/* Kills worker rank 1 of a run of task mid-run (signal_mid_run) and
 * checks what mpirun and rank 0 say and the run's status; the database. */
static sqlite3 *kill_a_worker_mid_run(const char *task, const char *db) {
  char *err = NULL;
  sqlite3 *s;
  int rc = signal_mid_run(task, db, "1500", 1, SIGKILL, &s, &err);
  cr_assert_neq(rc, 0, "the run ended before the rank was killed: %s", err);
  cr_expect(strstr(err, "process rank 1"), "mpirun names the rank: %s", err);
  cr_expect(strstr(err, "interrupted by SIGTERM: run 1 stopped and "
                        "committed"), "rank 0 says so: %s", err);
  cr_expect(strstr(err, "mpirun sends SIGTERM when a rank fails"), "%s",
            err);
  free(err);
  cr_expect_eq(synth_query_int(s, "SELECT count(*) FROM searches WHERE "
                                  "status = 'interrupted'"), 1,
               "the run is marked interrupted, not left running");
  return s;
}

/* A worker rank killed mid-run: mpirun ends the run with an error naming
 * the rank, rank 0 (told by mpirun's SIGTERM, while the other worker
 * waits instead of dying) stores the run as interrupted and says so; the
 * database holds whole batches and --resume under mpirun grows it into
 * the uninterrupted run (made on one thread). */
Test(mpi, a_dead_rank_leaves_a_resumable_run) {
  char *task = synth_push_task(4), *db = synth_temp_db();
  sqlite3 *s = kill_a_worker_mid_run(task, db);
  synth_killed_push_resumes(s, task, db, "1", resume_mpi);
}

/* The same with pipelined, overlapped batches (two batches out on the
 * ranks at the kill): mpirun names the rank, rank 0 rolls both back,
 * commits and says so; the run is interrupted, the database intact, and
 * its nodes are the first ones of the uninterrupted run (made on one
 * thread): whole batches, merged in order. (A pipelined run does not
 * resume yet: docs/parallel.md.) */
Test(mpi, a_dead_rank_in_a_pipelined_run_leaves_whole_batches) {
  char *task = synth_push_task_with(4, "\"pipeline\": true");
  char *db = synth_temp_db(), *full = synth_temp_db(), *err = NULL;
  sqlite3 *s = kill_a_worker_mid_run(task, db);
  cr_expect_eq(synth_query_int(s, "SELECT count(*) FROM pragma_integrity_check"
                                  " WHERE integrity_check = 'ok'"), 1);
  long long n = synth_query_int(s, "SELECT count(*) FROM nodes");
  cr_assert(n >= 100 && n < 1500, "%lld nodes committed", n);
  const char *one[] = {"complan", "plan", task, "--db", full, "--method",
                       "sst", "--seed", "4", "--max-nodes", "1500",
                       "--threads", "1", NULL};
  int rc = cpt_run(one, NULL, &err);
  cr_assert(rc == 0 || rc == 1, "exit %d: %s", rc, err);
  free(err);
  sqlite3 *f = synth_open_db(full);
  cr_expect_eq(synth_rows_digest(s, n), synth_rows_digest(f, n),
               "the %lld nodes are the uninterrupted run's first", n);
  sqlite3_close(f);
  sqlite3_close(s);
  synth_remove_db(full);
  synth_remove_db(db);
  remove(task);
  free(task);
}

/* SIGTERM to rank 0 stops the search between its polls: the run is stored
 * as interrupted (resumable) and the workers are told to stop. */
Test(mpi, sigterm_to_rank_0_interrupts_the_run) {
  char *task = synth_push_task(4), *db = synth_temp_db(), *err = NULL;
  sqlite3 *s;
  cr_assert_eq(signal_mid_run(task, db, "20000", 0, SIGTERM, &s, &err), 1,
               "%s", err);
  cr_expect(strstr(err, "interrupted by SIGTERM: run 1 stopped and "
                        "committed"), "%s", err);
  free(err);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM searches WHERE "
                                  "status = 'interrupted'"), 1);
  sqlite3_close(s);
  synth_remove_db(db);
  remove(task);
  free(task);
}

/* Rank 0 SIGKILLed mid-run (no handler runs): mpirun ends the workers;
 * the run stays `running` with whole batches only (the database is
 * intact), and --resume without MPI continues it into the uninterrupted
 * run. */
Test(mpi, a_killed_rank_0_leaves_a_resumable_run) {
  char *task = synth_push_task(4), *db = synth_temp_db(), *err = NULL;
  sqlite3 *s;
  int rc = signal_mid_run(task, db, "1500", 0, SIGKILL, &s, &err);
  cr_assert_neq(rc, 0, "the run ended before rank 0 was killed: %s", err);
  cr_expect(strstr(err, "process rank 0"), "mpirun names the rank: %s", err);
  free(err);
  cr_expect_eq(synth_query_int(s, "SELECT count(*) FROM searches WHERE "
                                  "status = 'running'"), 1);
  cr_expect_eq(synth_query_int(s, "SELECT count(*) FROM pragma_integrity_check"
                                  " WHERE integrity_check = 'ok'"), 1);
  synth_killed_push_resumes(s, task, db, "1", NULL);
}

/* A worker rank killed during `plan --benchmark --mpi` (4 sst runs on 2
 * worker ranks): rank 0, told by mpirun's SIGTERM, keeps the runs that
 * ended (each the one-thread benchmark's run of its seed, with its
 * benchmark row), stores each run under way as interrupted (its row and
 * start node: the nodes were in the dead or stopped rank) and says so;
 * --resume without MPI continues the last of them into the uninterrupted
 * run. Which runs ended before the kill depends on timing; what each row
 * holds does not (node limits; the time limit out of reach). The benchmark
 * has 40 runs and rank 1 dies as soon as the first run is in, so runs are
 * under way at the kill however fast the machine (with 4 runs, a quiet
 * machine finished them all before the kill landed); the one-thread
 * reference is made afterwards, up to the highest seed stored. */
Test(mpi, a_dead_rank_in_a_benchmark_keeps_its_runs) {
  char *task = synth_push_task(1), *a = synth_temp_db(), *b = synth_temp_db();
  char *err = NULL;
  int rc;
  /* Rank 0 has odls_base_sigkill_timeout between mpirun's SIGTERM and its
   * SIGKILL to store the runs: 1 s by default, too short for a sanitizer
   * build on a loaded machine (docs/parallel.md gives the same advice). */
  const char *args[] = {"--mca", "odls_base_sigkill_timeout", "10", "-n",
                        "3", "@", "plan", task, "--db", b, "--benchmark",
                        "40", "--planners", "sst", "--max-nodes", "1000",
                        "--max-seconds", "3600", "--mpi", NULL};
  char path[] = "/tmp/cpmpiXXXXXX";
  pid_t pid = mpirun_args(args, path);
  sqlite3 *s = synth_wait_nodes(b, 100, 120); /* a run is in */
  cr_assert_not_null(s, "no run imported");
  pid_t r1 = rank_pid(pid, 1);
  cr_assert(r1 > 0, "rank 1 not found among mpirun's children");
  kill(r1, SIGKILL);
  rc = mpirun_wait(pid, path, &err);
  cr_assert_neq(rc, 0, "the benchmark ended before the rank was killed: %s",
                err);
  cr_expect(strstr(err, "process rank 1"), "mpirun names the rank: %s", err);
  cr_expect(strstr(err, "interrupted by SIGTERM: benchmark stopped: "),
            "rank 0 says so: %s", err);
  free(err);
  long long kept = synth_query_int(s, "SELECT count(*) FROM searches WHERE "
                                      "status <> 'interrupted'"),
            stopped = synth_query_int(s, "SELECT count(*) FROM searches "
                                         "WHERE status = 'interrupted'");
  cr_assert(kept >= 1 && stopped >= 1 && kept + stopped <= 40,
            "%lld runs kept, %lld interrupted", kept, stopped);
  cr_expect_eq(synth_query_int(s, "SELECT count(*) FROM runs"), kept);
  cr_expect_eq(synth_query_int(s, "SELECT count(*) FROM nodes n JOIN "
                                  "searches r ON r.id = n.search_id WHERE "
                                  "r.status = 'interrupted'"), stopped,
               "an interrupted run holds its start node");
  /* The reference: the one-thread benchmark up to the highest seed stored
   * (the task's seed is 1, so run k has seed k whatever the count). */
  char upto[24];
  snprintf(upto, sizeof upto, "%lld",
           synth_query_int(s, "SELECT max(seed) FROM searches"));
  const char *one[] = {"complan", "plan", task, "--db", a, "--benchmark",
                       upto, "--planners", "sst", "--max-nodes", "1000",
                       "--max-seconds", "3600", "--threads", "1", NULL};
  rc = cpt_run(one, NULL, &err);
  cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
  free(err);
  sqlite3 *ref = synth_open_db(a);
  for (long long id = 1; id <= kept + stopped; ++id) {
    char q[96], what[64];
    snprintf(q, sizeof q, "SELECT seed FROM searches WHERE id = %lld", id);
    long long seed = synth_query_int(s, q);
    snprintf(q, sizeof q, "SELECT status = 'interrupted' FROM searches WHERE "
             "id = %lld", id);
    if (synth_query_int(s, q)) continue;
    snprintf(what, sizeof what, "kept run %lld (seed %lld)", id, seed);
    synth_assert_same_run(ref, seed, s, id, what); /* id k: seed k */
  }
  /* The last interrupted run, resumed on one thread without MPI. */
  long long last = synth_query_int(s, "SELECT max(id) FROM searches WHERE "
                                      "status = 'interrupted'");
  char q[96];
  snprintf(q, sizeof q, "SELECT seed FROM searches WHERE id = %lld", last);
  long long seed = synth_query_int(s, q);
  const char *res[] = {"complan", "plan", task, "--db", b, "--resume",
                       "--max-nodes", "1000", "--max-seconds", "3600",
                       "--json", NULL};
  json_t *doc = cpt_run_json(res, 0);
  cr_assert(json_is_true(json_object_get(doc, "resumed")));
  json_decref(doc);
  synth_assert_same_run(ref, seed, s, last,
                        "the interrupted run, resumed, is the uninterrupted one");
  sqlite3_close(ref);
  sqlite3_close(s);
  synth_remove_db(a);
  synth_remove_db(b);
  remove(task);
  free(task);
}

/* ---- the paper study over ranks (experiment paper --mpi) ---------------- */

/* The reports of `experiment paper --no-data` (cp_paper_write_reports). */
static const char *const paper_files[] = {
    "datasets.csv", "table1.md", "table1.csv", "problems.md",
    "fraction_solved_size.svg", "iterations_mu.svg", "fraction_solved_mu.svg",
    "summary.md", NULL};

/* text with the last `fields` comma-separated fields of every line cut
 * off (datasets.csv ends each row with its seven timings). */
static void cut_last_fields(char *text, int fields) {
  char *out = text;
  for (char *line = text; *line;) {
    char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    size_t keep = len;
    for (int f = 0; f < fields && keep > 0;) {
      --keep;
      if (line[keep] == ',') ++f;
    }
    memmove(out, line, keep);
    out += keep;
    *out++ = '\n';
    line += len + (end ? 1 : 0);
  }
  *out = '\0';
}

static void remove_paper_dir(const char *dir) {
  for (int i = 0; paper_files[i]; ++i) {
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, paper_files[i]);
    remove(path);
  }
  cr_expect_eq(rmdir(dir), 0, "%s holds more than the reports", dir);
}

/* `mpirun -n R complan experiment paper --mpi` for R = 1, 2, 3 (4
 * problems, 40 data sets): the reports are byte for byte those of `--jobs
 * 1`, but for the timings (datasets.csv's last seven columns; summary.md
 * quotes times, the command and the load, so only its headline table is
 * compared); with workers, the workers solved every data set. */
Test(mpi, paper_study_over_ranks_gives_the_one_worker_results) {
  char one[] = "/tmp/cppaperXXXXXX";
  cr_assert_not_null(mkdtemp(one));
  const char *a[] = {"complan", "experiment", "paper", "--out", one,
                     "--problems", "4", "--no-data", "--jobs", "1", NULL};
  char *err = NULL;
  int rc = cpt_run(a, NULL, &err);
  cr_assert_eq(rc, 0, "exit %d: %s", rc, err);
  free(err);
  for (int ranks = 1; ranks <= 3; ++ranks) {
    char dir[] = "/tmp/cppaperXXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    const char *mp[] = {"experiment", "paper", "--mpi", "--out", dir,
                        "--problems", "4", "--no-data", NULL};
    cr_assert_eq(mpirun(ranks, mp, &err), 0, "%d ranks: %s", ranks, err);
    char line[96];
    snprintf(line, sizeof line, "complan: mpi: %d worker rank%s solved %d "
             "data sets, rank 0 %d;", ranks - 1, ranks == 2 ? "" : "s",
             ranks > 1 ? 40 : 0, ranks > 1 ? 0 : 40);
    cr_expect(strstr(err, line), "%d ranks: %s", ranks, err);
    free(err);
    for (int i = 0; paper_files[i]; ++i) {
      char px[128], py[128];
      snprintf(px, sizeof px, "%s/%s", one, paper_files[i]);
      snprintf(py, sizeof py, "%s/%s", dir, paper_files[i]);
      char *x = cpt_read_file(px, NULL), *y = cpt_read_file(py, NULL);
      cr_assert(x && y, "%d ranks: %s not written", ranks, paper_files[i]);
      if (!strcmp(paper_files[i], "datasets.csv")) {
        cut_last_fields(x, 7);
        cut_last_fields(y, 7);
      } else if (!strcmp(paper_files[i], "summary.md")) {
        char *hx = strstr(x, "## Headline numbers"), *hy = strstr(y, "## "
                                                                        "Headline numbers");
        cr_assert(hx && hy);
        memmove(x, hx, strlen(hx) + 1);
        memmove(y, hy, strlen(hy) + 1);
      }
      cr_assert_str_eq(y, x, "%d ranks: %s differs", ranks, paper_files[i]);
      free(x);
      free(y);
    }
    remove_paper_dir(dir);
  }
  remove_paper_dir(one);
  /* An output directory rank 0 cannot make: exit status 2, the path
   * named, and the workers stopped (mpirun returns). */
  const char *bad[] = {"experiment", "paper", "--mpi", "--out",
                       "/proc/no/such/dir", "--problems", "1", NULL};
  cr_assert_eq(mpirun(3, bad, &err), 2, "%s", err);
  cr_expect(strstr(err, "/proc/no"), "%s", err);
  free(err);
}

/* The number of data sets the progress bar of `experiment paper
 * --progress` says are done in the stderr file at path (-1: none yet). */
static int paper_done(const char *path) {
  char *text = cpt_read_file(path, NULL);
  int done = -1, total;
  for (const char *at = text; at && (at = strstr(at, "] ")); at += 2)
    if (sscanf(at, "] %d/%d data sets", &done, &total) != 2) done = -1;
  free(text);
  return done;
}

/* A worker rank killed during `experiment paper --mpi` (the whole study:
 * 330 data sets, the last ones the largest problems): rank 0 says it was
 * interrupted, how many data sets were done, and that no report was
 * written; the output directory holds nothing; mpirun names the rank.
 * Rank 1 dies once the first data sets are in, however fast the machine. */
Test(mpi, a_dead_rank_in_the_paper_study_writes_no_report) {
  char dir[] = "/tmp/cppaperXXXXXX";
  cr_assert_not_null(mkdtemp(dir));
  const char *args[] = {"--mca", "odls_base_sigkill_timeout", "10", "-n",
                        "3", "@", "experiment", "paper", "--mpi", "--out",
                        dir, "--no-data", "--progress", NULL};
  char path[] = "/tmp/cpmpiXXXXXX";
  pid_t pid = mpirun_args(args, path);
  int done = -1;
  for (int k = 0; k < 1200 && done < 2; ++k) {
    const struct timespec tenth = {0, 100000000};
    nanosleep(&tenth, NULL);
    done = paper_done(path);
  }
  cr_assert(done >= 2, "no data set done in 120 s");
  pid_t r1 = rank_pid(pid, 1);
  cr_assert(r1 > 0, "rank 1 not found among mpirun's children");
  kill(r1, SIGKILL);
  char *err = NULL;
  int rc = mpirun_wait(pid, path, &err);
  cr_assert_neq(rc, 0, "the study ended before the rank was killed: %s",
                err);
  cr_expect(strstr(err, "process rank 1"), "mpirun names the rank: %s", err);
  cr_expect(strstr(err, "complan: experiment paper: interrupted by SIGTERM"),
            "rank 0 says so: %s", err);
  const char *at = strstr(err, "stopped by a signal with ");
  int kept = -1, of = 0;
  cr_assert(at && sscanf(at, "stopped by a signal with %d of %d items done",
                         &kept, &of) == 2, "%s", err);
  cr_expect(kept >= done && kept < of && of == 330, "%d of %d done", kept,
            of);
  cr_expect(strstr(err, "; no report written"), "%s", err);
  free(err);
  cr_expect_eq(rmdir(dir), 0, "%s holds files: a report was written", dir);
}
