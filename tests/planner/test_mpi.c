/* MPI planning (`mpirun -n 3 complan plan TASK --mpi`, planner/plan/mpi.c):
 * with search.batch 4, rank 0's database -- every node column but pivots,
 * warm-start blobs included -- and the plans are those of `--threads 1`
 * (astar, rrt, sst on the push task), the ranks sent one job per
 * expansion; --mpi without other ranks, with --benchmark, and a task a
 * worker cannot load are errors with exit status 2 and no run stored. */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/support.h"
#include "synth.h"

/* Runs `mpirun --oversubscribe -n ranks complan ARGS` (args NULL-ended);
 * returns the exit status and *err its stderr (malloc'd). */
static int mpirun(int ranks, const char *const *args, char **err) {
  const char *mpi = getenv("CP_MPIRUN"), *exe = getenv("CP_COMPLAN");
  cr_assert(mpi && exe, "CP_MPIRUN and CP_COMPLAN (run with meson test)");
  const char *argv[32];
  char n[16];
  snprintf(n, sizeof n, "%d", ranks);
  int k = 0;
  argv[k++] = mpi;
  argv[k++] = "--oversubscribe";
  argv[k++] = "-n";
  argv[k++] = n;
  argv[k++] = exe;
  for (int i = 0; args[i]; ++i) argv[k++] = args[i];
  argv[k] = NULL;
  char path[] = "/tmp/cpmpiXXXXXX";
  int fd = mkstemp(path);
  cr_assert(fd >= 0);
  pid_t pid = fork();
  if (pid == 0) {
    /* CI runs as root; Open MPI refuses that unless told. */
    setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
    setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
    int nul = open("/dev/null", O_RDWR);
    dup2(nul, 0);
    dup2(nul, 1);
    dup2(fd, 2);
    execv(mpi, (char *const *)argv);
    _exit(127);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  close(fd);
  *err = cpt_read_file(path, NULL);
  unlink(path);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void same_as_threads(const char *method) {
  char *task = synth_push_task(4), *a = synth_temp_db(), *b = synth_temp_db();
  const char *one[] = {"complan", "plan", task, "--db", a, "--method",
                       method, "--max-nodes", "60", "--threads", "1",
                       "--json", NULL};
  char *err = NULL;
  int rc = cpt_run(one, NULL, &err);
  cr_assert(rc == 0 || rc == 1, "exit %d: %s", rc, err);
  free(err);
  const char *mp[] = {"plan", task, "--db", b, "--method", method,
                      "--max-nodes", "60", "--mpi", NULL};
  int rm = mpirun(3, mp, &err);
  cr_assert_eq(rm, rc, "%s: mpirun exit %d (threads: %d): %s", method, rm,
               rc, err);
  cr_expect(strstr(err, "complan: mpi: 2 worker ranks ran"), "%s", err);
  long long jobs = 0;
  const char *at = strstr(err, "ranks ran ");
  if (at) jobs = atoll(at + 10);
  free(err);
  sqlite3 *da = synth_open_db(a), *db = synth_open_db(b);
  long long na, nb;
  unsigned long long ha = synth_run_digest(da, 1, &na);
  cr_assert(na > 10, "%s: a real search (%lld nodes)", method, na);
  cr_assert_eq(synth_run_digest(db, 1, &nb), ha, "%s: same nodes", method);
  cr_assert_eq(nb, na);
  char pa[4096], pb[4096];
  synth_plan_of(da, 1, pa, sizeof pa);
  synth_plan_of(db, 1, pb, sizeof pb);
  cr_assert_str_eq(pb, pa, "%s: same plans", method);
  /* Every expansion but the start's went to a worker (batches of 1, the
   * last ones of a search, run on rank 0). */
  long long expansions =
      synth_query_int(db, "SELECT count(*) FROM nodes WHERE search_id = 1 "
                          "AND parent IS NOT NULL");
  cr_expect(jobs > 0 && jobs <= expansions + 4, "%lld jobs, %lld expansions",
            jobs, expansions);
  sqlite3_close(da);
  sqlite3_close(db);
  synth_remove_db(a);
  synth_remove_db(b);
  remove(task);
  free(task);
}

Test(mpi, astar_as_threads, .timeout = 600) { same_as_threads("astar"); }
Test(mpi, rrt_as_threads, .timeout = 600) { same_as_threads("rrt"); }
Test(mpi, sst_as_threads, .timeout = 600) { same_as_threads("sst"); }

Test(mpi, errors, .timeout = 600) {
  char *task = synth_push_task(4), *db = synth_temp_db(), *err = NULL;
  /* One rank: nobody to simulate. */
  const char *alone[] = {"complan", "plan", task, "--db", db, "--mpi", NULL};
  cr_assert_eq(mpirun(1, alone + 1, &err), 2, "%s", err);
  cr_expect(strstr(err, "at least 2 ranks"), "%s", err);
  free(err);
  sqlite3 *s = synth_open_db(db);
  cr_expect_eq(synth_query_int(s, "SELECT count(*) FROM searches"), 0);
  sqlite3_close(s);
  const char *bench[] = {"plan", task, "--db", db, "--mpi", "--benchmark",
                         "2", NULL};
  cr_assert_eq(mpirun(2, bench, &err), 2, "%s", err);
  cr_expect(strstr(err, "without --benchmark"), "%s", err);
  free(err);
  synth_remove_db(db);
  remove(task);
  free(task);
}
