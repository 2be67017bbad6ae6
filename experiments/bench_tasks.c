/* bench_tasks: the field's benchmark tasks (planner/tasks/bench/, issue 23)
 * with complan's planners.
 *
 * Every task file in the folder (the *.json files directly in it; scenes
 * live in its scenes/ subfolder) is planned with each planner over S seeds
 * (1 .. S), each run a full stored search in its own SQLite database in a
 * temporary folder (removed afterwards), under the node and time limits
 * given here (they override the task's). Each plan found is re-simulated
 * and compared with the stored states bit for bit (cp_replay_run with
 * verify: what `complan replay --verify` does). The Markdown table goes to
 * stdout (a task's row once all its seeds have run); one line per run goes
 * to stderr as the run ends, whatever stderr is (so a long benchmark
 * written to files can be read while it runs), with the run's CPU seconds.
 *
 * With --file-limits each file is instead planned as `complan plan FILE
 * --seed S` plans it: its own planner, node limit, time limit (unless
 * --seconds is given, as `--max-seconds`) and search keys; the table is
 * then the rate table of experiments/results/tasks.md (solved / run, nodes
 * of the solved runs, CPU seconds per run, the misses with their best
 * distance, plans that replay bitwise).
 *
 * Usage (from the source root):
 *   build/experiments/bench_tasks [--seeds S] [--seconds T] [--nodes N]
 *       [--planners astar,rrt,sst] [--tasks ID,ID] [--dir DIR]
 *   build/experiments/bench_tasks --file-limits [--seeds S] [--seconds T]
 *       [--tasks ID,ID] [--dir DIR]
 * Either form also takes --first-seed K (seeds K..K+S-1; default 1) and
 * --no-velocity-sliding (every task planned with its velocity_sliding key
 * false, as if each file said so: the pyramid in the velocity stepper).
 * Defaults: 10 seeds, 600 s and 100000 nodes per run, all three planners,
 * every task of planner/tasks/bench.
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "planner/plan/plan.h"
#include "planner/replay/replay.h"
#include "planner/search/task.h"
#include "planner/store/store.h"
#include "experiments/bench_util.h"

/* OpenBLAS as the CLI runs it (one thread: see bench_plan.c). */
void openblas_set_num_threads(int n);

#define MAX_TASKS 64
#define MAX_PLANNERS 3
#define MAX_SEEDS 1000

static const char *const USAGE =
    "bench_tasks [--seeds S] [--seconds T] [--nodes N] "
    "[--planners astar,rrt,sst] [--tasks ID,ID] [--dir DIR]\n"
    "       bench_tasks --file-limits [--seeds S] [--seconds T] "
    "[--tasks ID,ID] [--dir DIR]\n"
    "       either form: [--first-seed K] [--no-velocity-sliding]";

/* What the sources report, per task id (docs in each task's comment). */
static const struct {
  const char *id, *figure;
} PUBLISHED[] = {
    {"cmgmp-pick-card", "CMGMP (ICRA 2022): 500 samples, goal bias 0.7"},
    {"cmgmp-bookshelf", "CMGMP (ICRA 2022): reported in the paper, not transcribed here"},
    {"cmgmp-peg-out", "CMGMP (ICRA 2022): reported in the paper, not transcribed here"},
    {"cmgmp-cube-flip", "CMGMP (ICRA 2022): reported in the paper, not transcribed here"},
    {"cmgmp-ledge", "CMGMP (ICRA 2022): 100 samples"},
    {"hidex-corner-pivot", "HiDex: MCTS 5-10 s"},
    {"pang-planar-hand", "Pang et al. (T-RO 2023): RRT 1000 nodes, 5.2 s (16 cores)"},
    {"pang-allegro-ball", "Pang et al. (T-RO 2023): RRT 1000 nodes, 19.6 s (16 cores)"},
    {"pang-bimanual-planar", "Pang et al. (T-RO 2023): RRT 3000 nodes"},
    {"panda-pick-place", "(complan's own)"},
};

static const char *published(const char *id) {
  for (size_t i = 0; i < sizeof PUBLISHED / sizeof PUBLISHED[0]; ++i)
    if (!strcmp(PUBLISHED[i].id, id)) return PUBLISHED[i].figure;
  return "-";
}

typedef struct outcome {
  int ok;             /* the run finished (any status but a failure) */
  int solved, verified;
  double seconds, cost, duration, best_distance;
  double cpu_seconds; /* the process's CPU time spent planning */
  double changes, relocations; /* along the plan (NaN without one) */
  long nodes;
  long long lcp_solves;
  char status[24];
} outcome;


/* Contact changes along a replayed plan. A pair of the scene's bodies or
 * links "touches" in a step when one of its contacts carries a normal
 * force; a change is a pair that starts or stops touching between two
 * steps; a relocation is a pair of a manipulator link and a free body that
 * touches again after having let go (a finger put down somewhere else).
 * Sticking and sliding are not told apart (the contacts given to a replay
 * observer carry forces, not the LCP's modes). */
#define MAX_PAIRS 512
typedef struct contact_track {
  const cp_scene *scene;
  long long now[MAX_PAIRS], prev[MAX_PAIRS], broken[MAX_PAIRS];
  int n_now, n_prev, n_broken;
  long changes, relocations;
} contact_track;

static long long ref_key(const cp_ref *r) {
  return r->body >= 0 ? r->body : 1000000LL + 1000LL * r->manip + r->link;
}

static int has_key(const long long *v, int n, long long k) {
  for (int i = 0; i < n; ++i)
    if (v[i] == k) return 1;
  return 0;
}

/* 1 when the pair is a manipulator link against a free body. */
static int finger_pair(const contact_track *t, const cp_ref *a, const cp_ref *b) {
  const cp_ref *link = a->body < 0 ? a : b->body < 0 ? b : NULL;
  const cp_ref *body = a->body >= 0 ? a : b->body >= 0 ? b : NULL;
  return link && body && body->body < t->scene->n_bodies &&
         !t->scene->bodies[body->body].fixed;
}

static void on_frame(void *ctx, const cp_replay_frame *f) {
  contact_track *t = ctx;
  t->n_now = 0;
  for (int i = 0; i < f->n_contacts; ++i) {
    const cp_world_contact *c = &f->contacts[i];
    double fn = c->force[0] * c->n[0] + c->force[1] * c->n[1] +
                c->force[2] * c->n[2];
    if (!(fn > 1e-9)) continue;
    long long ka = ref_key(&c->a), kb = ref_key(&c->b);
    long long k = ka < kb ? ka * 4000000LL + kb : kb * 4000000LL + ka;
    if (has_key(t->now, t->n_now, k) || t->n_now == MAX_PAIRS) continue;
    t->now[t->n_now++] = k;
    if (!has_key(t->prev, t->n_prev, k) && f->step > 0 &&
        has_key(t->broken, t->n_broken, k) && finger_pair(t, &c->a, &c->b))
      ++t->relocations;
  }
  if (f->step > 0) {
    for (int i = 0; i < t->n_now; ++i)
      t->changes += !has_key(t->prev, t->n_prev, t->now[i]);
    for (int i = 0; i < t->n_prev; ++i)
      if (!has_key(t->now, t->n_now, t->prev[i])) {
        ++t->changes;
        if (!has_key(t->broken, t->n_broken, t->prev[i]) &&
            t->n_broken < MAX_PAIRS)
          t->broken[t->n_broken++] = t->prev[i];
      }
  }
  memcpy(t->prev, t->now, sizeof(long long) * (size_t)t->n_now);
  t->n_prev = t->n_now;
}

/* One stored search of task with method and seed into a fresh database db;
 * its plan (if any) replayed with verification. method NULL, seconds 0 or
 * nodes 0: the task's own (what `complan plan` does without --method,
 * --max-seconds, --max-nodes). 0, or -1 (message printed) when the run
 * could not be made at all. */
static int one_run(const cp_task *task, const char *path, const char *method,
                   uint64_t seed, double seconds, long nodes, const char *db,
                   outcome *o) {
  memset(o, 0, sizeof *o);
  o->cost = o->duration = o->changes = o->relocations = NAN;
  cp_error err;
  cp_store *st;
  char msg[600];
  bench_remove_db(db);
  if (cp_store_open(db, 0, &st, msg, sizeof msg)) {
    fprintf(stderr, "bench_tasks: %s\n", msg);
    return -1;
  }
  cp_plan_options opt = cp_plan_defaults();
  opt.method = method;
  opt.has_seed = 1;
  opt.seed = seed;
  opt.max_seconds = seconds;
  opt.max_nodes = nodes;
  opt.task_path = path;
  cp_plan_result r;
  struct timespec c0, c1;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
  cp_plan_status s = cp_plan_task(st, task, &opt, &r, &err);
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
  o->cpu_seconds = (double)(c1.tv_sec - c0.tv_sec) +
                   1e-9 * (double)(c1.tv_nsec - c0.tv_nsec);
  int rc = 0;
  if (s == CP_PLAN_BAD_INPUT || s == CP_PLAN_FAILED) {
    fprintf(stderr, "bench_tasks: %s (%s, seed %llu): %s\n", path,
            method ? method : task->method, (unsigned long long)seed, err.msg);
    rc = -1;
  } else {
    o->ok = 1;
    snprintf(o->status, sizeof o->status, "%s", cp_plan_status_name(s));
    o->seconds = r.seconds;
    o->nodes = r.nodes;
    o->lcp_solves = r.stats.lcp_solves;
    o->best_distance = r.best_distance;
    if (r.plan_id > 0) {
      o->solved = 1;
      o->cost = r.cost;
      cp_replay *rp;
      if (cp_replay_open(st, r.plan_id, &rp, &err) == CP_REPLAY_OK) {
        cp_replay_options ro = cp_replay_defaults();
        ro.verify = 1;
        contact_track *ct = calloc(1, sizeof *ct);
        if (ct) {
          ct->scene = &cp_replay_task(rp)->scene;
          ro.frame = on_frame;
          ro.ctx = ct;
        }
        cp_replay_result rr;
        if (cp_replay_run(rp, &ro, &rr) == CP_REPLAY_OK) {
          o->verified = rr.verified;
          o->duration = rr.duration;
          if (ct) {
            o->changes = (double)ct->changes;
            o->relocations = (double)ct->relocations;
          }
        } else {
          fprintf(stderr, "bench_tasks: %s (%s, seed %llu): replay: %s\n",
                  path, method ? method : task->method,
                  (unsigned long long)seed, rr.message);
        }
        free(ct);
        cp_replay_close(rp);
      } else {
        fprintf(stderr, "bench_tasks: %s: replay: %s\n", path, err.msg);
      }
    }
  }
  cp_store_close(st);
  bench_remove_db(db);
  return rc;
}

/* One finished run as a line on stderr (after the progress line when
 * stderr is a terminal). */
static void print_run(const char *id, const char *method, int seed,
                      const outcome *o, int tty) {
  fprintf(stderr, "%sbench_tasks: %s %s seed %d: %s, %ld nodes, %lld LCP "
          "solves, best d %.4g m, %.3g s CPU, %.3g s wall%s\n", tty ? "\r" : "",
          id, method, seed, o->solved ? "solved" : o->status, o->nodes,
          o->lcp_solves, o->best_distance, o->cpu_seconds, o->seconds,
          o->solved ? (o->verified ? ", replays bitwise" : ", REPLAY DIFFERS")
                    : "");
  fflush(stderr);
}

/* Median and max of the values v[i] for the runs where pick[i] holds, as
 * "median / max" with fmt (or "-" when none). */
static void med_max(const double *v, const int *pick, int n, const char *fmt,
                    char *out, size_t size) {
  double w[MAX_SEEDS];
  int k = 0;
  double mx = -INFINITY;
  for (int i = 0; i < n; ++i)
    if (pick[i] && isfinite(v[i])) {
      w[k++] = v[i];
      if (v[i] > mx) mx = v[i];
    }
  if (!k) {
    snprintf(out, size, "-");
    return;
  }
  char a[64], b[64];
  snprintf(a, sizeof a, fmt, bench_median(w, k));
  snprintf(b, sizeof b, fmt, mx);
  snprintf(out, size, "%s / %s", a, b);
}

/* "min-max" of the values v[i] where pick[i] holds (one value when they
 * are equal, "-" when none). */
static void min_max(const double *v, const int *pick, int n, const char *fmt,
                    char *out, size_t size) {
  double lo = INFINITY, hi = -INFINITY;
  for (int i = 0; i < n; ++i)
    if (pick[i] && isfinite(v[i])) {
      if (v[i] < lo) lo = v[i];
      if (v[i] > hi) hi = v[i];
    }
  if (!(lo <= hi)) {
    snprintf(out, size, "-");
    return;
  }
  char a[64], b[64];
  snprintf(a, sizeof a, fmt, lo);
  snprintf(b, sizeof b, fmt, hi);
  if (!strcmp(a, b)) snprintf(out, size, "%s", a);
  else snprintf(out, size, "%s-%s", a, b);
}

/* The --file-limits row of one task: the rate table of
 * experiments/results/tasks.md. */
static void file_limits_row(const char *id, const cp_task *task,
                            double seconds, const outcome *runs, int seeds,
                            int first_seed) {
  double nd[MAX_SEEDS], cpu[MAX_SEEDS];
  int is_solved[MAX_SEEDS], is_ok[MAX_SEEDS];
  int solved = 0, finished = 0, verified = 0;
  for (int s = 0; s < seeds; ++s) {
    nd[s] = (double)runs[s].nodes;
    cpu[s] = runs[s].cpu_seconds;
    is_solved[s] = runs[s].solved;
    is_ok[s] = runs[s].ok;
    solved += runs[s].solved;
    finished += runs[s].ok;
    verified += runs[s].verified;
  }
  char c_nodes[160], c_cpu[160], misses[600] = "-";
  min_max(nd, is_solved, seeds, "%.0f", c_nodes, sizeof c_nodes);
  min_max(cpu, is_ok, seeds, "%.1f", c_cpu, sizeof c_cpu);
  size_t used = 0;
  for (int s = 0; s < seeds; ++s) {
    if (runs[s].solved) continue;
    int w = runs[s].ok
                ? snprintf(misses + used, sizeof misses - used,
                           "%s%d (%.4f, %s)", used ? ", " : "", s + first_seed,
                           runs[s].best_distance, runs[s].status)
                : snprintf(misses + used, sizeof misses - used,
                           "%s%d (failed)", used ? ", " : "", s + first_seed);
    if (w > 0 && (size_t)w < sizeof misses - used) used += (size_t)w;
  }
  printf("| %s | %s | %ld | %.6g | %d / %d | %s | %s | %s | %d / %d |\n", id,
         task->method, task->max_nodes, seconds > 0 ? seconds : task->max_seconds,
         solved, finished,
         c_nodes, c_cpu, misses, verified, solved);
  fflush(stdout);
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static int in_list(const char *list, const char *id) {
  if (!list) return 1;
  size_t n = strlen(id);
  for (const char *p = list; *p;) {
    const char *e = strchr(p, ',');
    size_t k = e ? (size_t)(e - p) : strlen(p);
    if (k == n && !strncmp(p, id, n)) return 1;
    if (!e) break;
    p = e + 1;
  }
  return 0;
}

static int split_planners(char *list, const char *planners[MAX_PLANNERS]) {
  int n = 0;
  for (char *p = strtok(list, ","); p; p = strtok(NULL, ",")) {
    if (strcmp(p, "astar") && strcmp(p, "rrt") && strcmp(p, "sst")) return -1;
    if (n == MAX_PLANNERS) return -1;
    planners[n++] = p;
  }
  return n ? n : -1;
}

static void usage_exit(const char *bad) {
  fprintf(stderr, "bench_tasks: bad argument '%s'\nusage: %s\n", bad, USAGE);
  exit(2);
}

int main(int argc, char **argv) {
  int seeds = 10, first_seed = 1, no_velocity_sliding = 0;
  double seconds = 600;
  long nodes = 100000;
  char planner_text[64] = "astar,rrt,sst";
  const char *tasks_filter = NULL, *dir = "planner/tasks/bench";
  /* --file-limits: each file's own planner and limits; --seconds may still
   * set the time limit, --nodes and --planners may not be given. */
  int file_limits = 0, given_seconds = 0, given_other = 0;
  for (int i = 1; i < argc; ++i) {
    const char *a = argv[i];
    if (!strcmp(a, "--file-limits")) {
      file_limits = 1;
      continue;
    }
    if (!strcmp(a, "--no-velocity-sliding")) {
      no_velocity_sliding = 1;
      continue;
    }
    if (i + 1 >= argc) usage_exit(a);
    const char *v = argv[++i];
    char *end;
    if (!strcmp(a, "--seeds")) {
      long s = strtol(v, &end, 10);
      if (*end || s < 1 || s > MAX_SEEDS) usage_exit(v);
      seeds = (int)s;
    } else if (!strcmp(a, "--first-seed")) {
      long k = strtol(v, &end, 10);
      if (*end || k < 1 || k > 1000000000L) usage_exit(v);
      first_seed = (int)k;
    } else if (!strcmp(a, "--seconds")) {
      seconds = strtod(v, &end);
      if (*end || !(seconds > 0)) usage_exit(v);
      given_seconds = 1;
    } else if (!strcmp(a, "--nodes")) {
      nodes = strtol(v, &end, 10);
      if (*end || nodes < 1) usage_exit(v);
      given_other = 1;
    } else if (!strcmp(a, "--planners")) {
      if (strlen(v) >= sizeof planner_text) usage_exit(v);
      snprintf(planner_text, sizeof planner_text, "%s", v);
      given_other = 1;
    } else if (!strcmp(a, "--tasks")) {
      tasks_filter = v;
    } else if (!strcmp(a, "--dir")) {
      dir = v;
    } else {
      usage_exit(a);
    }
  }
  char planner_list[64];
  snprintf(planner_list, sizeof planner_list, "%s", planner_text);
  const char *planners[MAX_PLANNERS];
  int n_planners = split_planners(planner_text, planners);
  if (n_planners < 0) usage_exit(planner_text);
  if (file_limits && given_other) usage_exit("--file-limits with --nodes or --planners");
  if (file_limits) {
    n_planners = 1; /* the file's own */
    if (!given_seconds) seconds = 0;
  }
  openblas_set_num_threads(1);

  /* The task files: *.json directly in dir, sorted. */
  DIR *d = opendir(dir);
  if (!d) {
    fprintf(stderr, "bench_tasks: cannot open %s (run from the source root)\n", dir);
    return 2;
  }
  char *ids[MAX_TASKS];
  int n_tasks = 0;
  for (struct dirent *e; (e = readdir(d));) {
    size_t n = strlen(e->d_name);
    if (n <= 5 || strcmp(e->d_name + n - 5, ".json")) continue;
    char id[256];
    snprintf(id, sizeof id, "%.*s", (int)(n - 5), e->d_name);
    if (!in_list(tasks_filter, id)) continue;
    if (n_tasks == MAX_TASKS) break;
    ids[n_tasks++] = strdup(id);
  }
  closedir(d);
  qsort(ids, (size_t)n_tasks, sizeof ids[0], cmp_str);
  if (!n_tasks) {
    fprintf(stderr, "bench_tasks: no task files in %s\n", dir);
    return 2;
  }

  char tmpdir[] = "/tmp/bench_tasks_XXXXXX";
  if (!mkdtemp(tmpdir)) {
    perror("bench_tasks: mkdtemp");
    return 1;
  }
  char db[1024];
  snprintf(db, sizeof db, "%s/run.sqlite", tmpdir);
  int tty = isatty(2);

  time_t now = time(NULL);
  char date[64];
  strftime(date, sizeof date, "%Y-%m-%d %H:%M:%S UTC", gmtime(&now));
  printf("# bench_tasks: the field's benchmark tasks (planner/tasks/bench/)\n\n");
  if (file_limits) {
    printf("date: %s; %d seed(s) per task (seeds %d..%d); each file planned "
           "as `complan plan FILE --seed S%s` plans it: its own planner, "
           "search keys and node limit, %s (wall clock, one thread). Each "
           "run is a stored search in its own database; each plan found is "
           "re-simulated and compared bitwise with the stored states "
           "(replay --verify). CPU = the process's CPU seconds spent "
           "planning.%s\n\n", date, seeds, first_seed, first_seed + seeds - 1,
           no_velocity_sliding ? " Every task with velocity_sliding false "
                                 "(--no-velocity-sliding)." : "",
           given_seconds ? " --max-seconds T" : "",
           given_seconds ? "the time limit given" : "its own time limit");
    printf("| task | planner | node limit | time limit (s) | solved / run | "
           "nodes of the solved runs (min-max) | CPU s per run (min-max) | "
           "misses: seed (best distance m, status) | replays bitwise |\n"
           "|---|---|---|---|---|---|---|---|---|\n");
  } else {
    printf("date: %s; %d seed(s) per planner (seeds %d..%d); limits per run: "
           "%ld nodes, %.4g s (wall clock, one thread); planners: %s. Each run "
           "is a stored search in its own database; each plan found is "
           "re-simulated and compared bitwise with the stored states "
           "(replay --verify).\n\n",
           date, seeds, first_seed, first_seed + seeds - 1, nodes, seconds,
           planner_list);
    printf("Columns: success = runs that found a plan; time = planning seconds "
           "of the successful runs (median / max); nodes and LCP solves = "
           "median / max over all runs; duration = simulated seconds of the "
           "plan and cost = plan cost, contact changes = pairs of bodies or links "
           "that start or stop touching (normal force > 0) between two steps of "
           "the replayed plan, relocations = link-free body pairs touching again "
           "after letting go (each median / max over successes); best d = "
           "median least goal distance (m) over all runs; verified = plans "
           "that replay bitwise / plans found; ends = how the runs without a "
           "plan ended (plan statuses, with counts).\n\n");
    printf("| task | planner | success | time (s) | nodes | LCP solves | "
           "duration (s) | cost | contact changes | relocations | best d (m) | "
           "verified | ends | published (source) |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  }
  fflush(stdout);

  int failures = 0;
  outcome *runs = malloc(sizeof *runs * (size_t)seeds);
  if (!runs) return 1;
  for (int t = 0; t < n_tasks; ++t) {
    char path[1200];
    snprintf(path, sizeof path, "%s/%s.json", dir, ids[t]);
    cp_task task;
    cp_error err;
    if (cp_task_load(path, &task, &err)) {
      fprintf(stderr, "bench_tasks: %s: %s: %s\n", path, err.where, err.msg);
      if (file_limits)
        printf("| %s | - | does not load: %s | | | | | | |\n", ids[t], err.msg);
      else
        printf("| %s | - | does not load: %s | | | | | | | | | | | %s |\n",
               ids[t], err.msg, published(ids[t]));
      ++failures;
      continue;
    }
    /* The world options (and so the run's record, which replay reads) are
     * made from the loaded task: this is the file with the key false. */
    if (no_velocity_sliding) task.velocity_sliding = 0;
    for (int p = 0; p < n_planners; ++p) {
      int solved = 0, verified = 0, finished = 0;
      /* --file-limits: the file's planner and limits (NULL, 0: the task's) */
      const char *method = file_limits ? NULL : planners[p];
      const char *name = file_limits ? task.method : planners[p];
      for (int s = 0; s < seeds; ++s) {
        if (tty)
          fprintf(stderr, "\rbench_tasks: %s %s seed %d/%d ...        ",
                  ids[t], name, s + first_seed, first_seed + seeds - 1);
        if (one_run(&task, path, method, (uint64_t)(s + first_seed), seconds,
                    file_limits ? 0 : nodes, db, &runs[s]))
          ++failures;
        else
          print_run(ids[t], name, s + first_seed, &runs[s], tty);
        solved += runs[s].solved;
        verified += runs[s].verified;
        finished += runs[s].ok;
      }
      if (file_limits) {
        file_limits_row(ids[t], &task, seconds, runs, seeds, first_seed);
        continue;
      }
      double secs[MAX_SEEDS], nd[MAX_SEEDS], lcp[MAX_SEEDS], dur[MAX_SEEDS],
          cost[MAX_SEEDS], best[MAX_SEEDS], chg[MAX_SEEDS], rel[MAX_SEEDS];
      int is_solved[MAX_SEEDS], is_ok[MAX_SEEDS];
      for (int s = 0; s < seeds; ++s) {
        secs[s] = runs[s].seconds;
        nd[s] = (double)runs[s].nodes;
        lcp[s] = (double)runs[s].lcp_solves;
        dur[s] = runs[s].duration;
        cost[s] = runs[s].cost;
        best[s] = runs[s].best_distance;
        chg[s] = runs[s].changes;
        rel[s] = runs[s].relocations;
        is_solved[s] = runs[s].solved;
        is_ok[s] = runs[s].ok;
      }
      char c_time[160], c_nodes[160], c_lcp[160], c_dur[160], c_cost[160],
          c_chg[160], c_rel[160];
      med_max(secs, is_solved, seeds, "%.3g", c_time, sizeof c_time);
      med_max(nd, is_ok, seeds, "%.0f", c_nodes, sizeof c_nodes);
      med_max(lcp, is_ok, seeds, "%.0f", c_lcp, sizeof c_lcp);
      med_max(dur, is_solved, seeds, "%.3g", c_dur, sizeof c_dur);
      med_max(cost, is_solved, seeds, "%.3g", c_cost, sizeof c_cost);
      med_max(chg, is_solved, seeds, "%.0f", c_chg, sizeof c_chg);
      med_max(rel, is_solved, seeds, "%.0f", c_rel, sizeof c_rel);
      int k = 0;
      for (int s = 0; s < seeds; ++s)
        if (runs[s].ok) best[k++] = runs[s].best_distance;
      char c_best[40] = "-";
      if (k) snprintf(c_best, sizeof c_best, "%.3g", bench_median(best, k));
      /* How the runs without a plan ended: "status xN", distinct ones in
       * order of first appearance. */
      char c_ends[200] = "-";
      size_t used = 0;
      for (int s = 0; s < seeds; ++s) {
        if (!runs[s].ok || runs[s].solved) continue;
        int seen = 0, count = 0;
        for (int q = 0; q < seeds; ++q)
          if (runs[q].ok && !runs[q].solved &&
              !strcmp(runs[q].status, runs[s].status)) {
            seen |= q < s;
            ++count;
          }
        if (seen) continue;
        int w = snprintf(c_ends + used, sizeof c_ends - used, "%s%s x%d",
                         used ? ", " : "", runs[s].status, count);
        if (w > 0 && (size_t)w < sizeof c_ends - used) used += (size_t)w;
      }
      printf("| %s | %s | %d/%d | %s | %s | %s | %s | %s | %s | %s | %s | "
             "%d/%d | %s | %s |\n",
             ids[t], planners[p], solved, finished, c_time, c_nodes, c_lcp,
             c_dur, c_cost, c_chg, c_rel, c_best, verified, solved, c_ends,
             published(ids[t]));
      fflush(stdout);
    }
    cp_task_free(&task);
  }
  if (tty) fprintf(stderr, "\rbench_tasks: done.%40s\n", "");
  free(runs);
  for (int t = 0; t < n_tasks; ++t) free(ids[t]);
  rmdir(tmpdir);
  return failures ? 1 : 0;
}
