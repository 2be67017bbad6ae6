#include "synth.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <sqlite3.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "planner/store/store.h"
#include "tests/support.h"

static const int dirs[4][2] = {{1, 0}, {-1, 0}, {0, 1}, {0, -1}};

static int grid_free(const synth_grid *g, int x, int y) {
  return x >= 0 && y >= 0 && x < g->w && y < g->h && g->rows[y][x] != '#';
}

static int grid_expand(void *ctx, const double *x, double t, const void *warm,
                       size_t ws, long a, double *y, cp_expansion *info) {
  (void)t;
  (void)warm;
  (void)ws;
  synth_grid *g = ctx;
  g->expand_calls++;
  if (g->delay_us > 0) {
    struct timespec ts = {0, 1000L * g->delay_us};
    nanosleep(&ts, NULL);
  }
  int cx = (int)x[0] + dirs[a][0], cy = (int)x[1] + dirs[a][1];
  info->steps = 1;
  if (!grid_free(g, cx, cy)) {
    info->outcome = CP_EXPAND_OUT_OF_BOUNDS;
    snprintf(info->message, sizeof info->message, "cell (%d, %d) blocked", cx,
             cy);
    y[0] = x[0];
    y[1] = x[1];
    return 0;
  }
  y[0] = cx;
  y[1] = cy;
  return 0;
}

static const char *const maze[] = {
    "..........", ".########.", ".#......#.", ".#.####.#.", ".#.#..#.#.",
    ".#.#......", ".#.####.##", ".#........", ".########.", ".........."};

synth_grid synth_maze_grid(void) {
  synth_grid g = {.w = 10, .h = 10, .rows = maze, .start = {0, 0},
                  .goal = {4, 4}, .cost = {1.0, 1.3, 0.7, 2.1}};
  return g;
}

static double grid_cost(void *ctx, long a) { return ((synth_grid *)ctx)->cost[a]; }

static int grid_in_goal(void *ctx, const double *x) {
  synth_grid *g = ctx;
  return (int)x[0] == g->goal[0] && (int)x[1] == g->goal[1];
}

static double grid_h(void *ctx, const double *x) {
  synth_grid *g = ctx;
  double cmin = g->cost[0];
  for (int k = 1; k < 4; ++k) cmin = g->cost[k] < cmin ? g->cost[k] : cmin;
  return cmin * (fabs(x[0] - g->goal[0]) + fabs(x[1] - g->goal[1]));
}

static double grid_dist(void *ctx, const double *x) {
  synth_grid *g = ctx;
  return hypot(x[0] - g->goal[0], x[1] - g->goal[1]);
}

static void grid_embed(void *ctx, const double *x, double *e) {
  (void)ctx;
  e[0] = x[0];
  e[1] = x[1];
}

static void grid_key(void *ctx, const double *x, int64_t *k) {
  (void)ctx;
  k[0] = (int64_t)x[0];
  k[1] = (int64_t)x[1];
}

static void grid_bounds(void *ctx, double *lo, double *hi) {
  synth_grid *g = ctx;
  lo[0] = lo[1] = 0;
  hi[0] = g->w - 1;
  hi[1] = g->h - 1;
}

static void grid_goal_sample(void *ctx, double *e) {
  synth_grid *g = ctx;
  e[0] = g->goal[0];
  e[1] = g->goal[1];
}

cp_search_problem synth_grid_problem(synth_grid *g) {
  cp_search_problem p = {.n = 2, .m = 2, .key_n = 2, .n_actions = 4,
                         .duration = 1.0, .ctx = g,
                         .expand = grid_expand, .action_cost = grid_cost,
                         .in_goal = grid_in_goal, .heuristic = grid_h,
                         .goal_distance = grid_dist, .embed = grid_embed,
                         .discretise = grid_key, .sample_bounds = grid_bounds,
                         .goal_sample = grid_goal_sample};
  return p;
}

double synth_grid_dijkstra(const synth_grid *g) {
  enum { MAXC = 4096 };
  double d[MAXC];
  int done[MAXC];
  int n = g->w * g->h;
  if (n > MAXC) return NAN;
  for (int i = 0; i < n; ++i) {
    d[i] = INFINITY;
    done[i] = 0;
  }
  d[g->start[1] * g->w + g->start[0]] = 0;
  for (;;) {
    int u = -1;
    for (int i = 0; i < n; ++i)
      if (!done[i] && isfinite(d[i]) && (u < 0 || d[i] < d[u])) u = i;
    if (u < 0) break;
    done[u] = 1;
    int ux = u % g->w, uy = u / g->w;
    for (int a = 0; a < 4; ++a) {
      int vx = ux + dirs[a][0], vy = uy + dirs[a][1];
      if (!grid_free(g, vx, vy)) continue;
      int v = vy * g->w + vx;
      if (d[u] + g->cost[a] < d[v]) d[v] = d[u] + g->cost[a];
    }
  }
  return d[g->goal[1] * g->w + g->goal[0]];
}

/* --- the point --------------------------------------------------------- */

static int point_expand(void *ctx, const double *x, double t, const void *warm,
                        size_t ws, long a, double *y, cp_expansion *info) {
  (void)t;
  (void)warm;
  (void)ws;
  ((synth_point *)ctx)->expand_calls++;
  double ang = (double)a * 0.78539816339744831;
  double nx = x[0] + 0.05 * cos(ang), ny = x[1] + 0.05 * sin(ang);
  info->steps = 5;
  y[0] = x[0];
  y[1] = x[1];
  if (nx < 0 || ny < 0 || nx > 1 || ny > 1) {
    info->outcome = CP_EXPAND_OUT_OF_BOUNDS;
    snprintf(info->message, sizeof info->message, "left the square");
    return 0;
  }
  if (nx >= 0.45 && nx <= 0.55 && ny < 0.7) {
    info->outcome = CP_EXPAND_PENETRATION;
    snprintf(info->message, sizeof info->message, "into the wall");
    return 0;
  }
  y[0] = nx;
  y[1] = ny;
  return 0;
}

static double point_cost(void *ctx, long a) {
  (void)ctx;
  return (a % 2) ? 1.4142135623730951 : 1.0;
}

static double point_dist(void *ctx, const double *x) {
  (void)ctx;
  double d = hypot(x[0] - 0.9, x[1] - 0.9) - 0.06;
  return d > 0 ? d : 0;
}

static int point_in_goal(void *ctx, const double *x) {
  return point_dist(ctx, x) <= 0;
}

static double point_h(void *ctx, const double *x) {
  return point_dist(ctx, x) / 0.05;
}

static void point_key(void *ctx, const double *x, int64_t *k) {
  (void)ctx;
  k[0] = (int64_t)floor(x[0] / 0.01);
  k[1] = (int64_t)floor(x[1] / 0.01);
}

static void point_bounds(void *ctx, double *lo, double *hi) {
  (void)ctx;
  lo[0] = lo[1] = 0;
  hi[0] = hi[1] = 1;
}

static void point_goal_sample(void *ctx, double *e) {
  (void)ctx;
  e[0] = e[1] = 0.9;
}

cp_search_problem synth_point_problem(synth_point *pt) {
  cp_search_problem p = {.n = 2, .m = 2, .key_n = 2, .n_actions = 8,
                         .duration = 0.1, .ctx = pt,
                         .expand = point_expand, .action_cost = point_cost,
                         .in_goal = point_in_goal, .heuristic = point_h,
                         .goal_distance = point_dist, .embed = grid_embed,
                         .discretise = point_key, .sample_bounds = point_bounds,
                         .goal_sample = point_goal_sample};
  return p;
}

long long synth_query_int(sqlite3 *db, const char *sql) {
  sqlite3_stmt *q;
  cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK, "%s: %s",
               sql, sqlite3_errmsg(db));
  cr_assert_eq(sqlite3_step(q), SQLITE_ROW, "%s", sql);
  long long v = sqlite3_column_int64(q, 0);
  sqlite3_finalize(q);
  return v;
}

unsigned long long synth_rows_digest(sqlite3 *db, long long n) {
  sqlite3_stmt *q;
  sqlite3_prepare_v2(db, "SELECT id, ifnull(parent, -1), cost, state FROM nodes"
                         " WHERE id < ? ORDER BY id", -1, &q, NULL);
  sqlite3_bind_int64(q, 1, n);
  unsigned long long h = 1469598103934665603ull;
  long long count = 0;
  while (sqlite3_step(q) == SQLITE_ROW) {
    long long v[2] = {sqlite3_column_int64(q, 0), sqlite3_column_int64(q, 1)};
    double c = sqlite3_column_double(q, 2);
    const unsigned char *parts[3] = {(const void *)v, (const void *)&c,
                                     sqlite3_column_blob(q, 3)};
    size_t lens[3] = {sizeof v, sizeof c, (size_t)sqlite3_column_bytes(q, 3)};
    for (int k = 0; k < 3; ++k)
      for (size_t i = 0; i < lens[k]; ++i)
        h = (h ^ parts[k][i]) * 1099511628211ull;
    ++count;
  }
  sqlite3_finalize(q);
  cr_assert_eq(count, n);
  return h;
}

const char synth_task_json[] =
    "{\"scene\": {\"bodies\": ["
    "  {\"name\": \"table\", \"fixed\": true, \"shape\": {\"type\": \"plane\","
    "   \"normal\": [0, 0, 1], \"offset\": 0}},"
    "  {\"name\": \"box\", \"mass\": 1, \"shape\": {\"type\": \"box\","
    "   \"size\": [0.1, 0.1, 0.1]}, \"position\": [0, 0, 0.05]}],"
    " \"manipulators\": [{\"name\": \"f\", \"base\": {\"position\": [-0.3, 0, 0.05]},"
    "  \"joints\": [{\"name\": \"j\", \"type\": \"prismatic\", \"axis\": [1, 0, 0],"
    "   \"link\": {\"name\": \"rod\", \"mass\": 0.1, \"shape\": {\"type\": \"box\","
    "   \"size\": [0.1, 0.01, 0.01]}}}]}]},"
    " \"inputs\": {\"f/j\": {\"values\": [0, 1, 2, 3, 4, 5, 6, 7]}},"
    " \"action\": {\"duration\": 1.0, \"dt\": 0.25},"
    " \"goal\": {\"body\": \"box\", \"position\": [0.2, 0, 0.05], \"tolerance\": 0.01},"
    " \"limits\": {\"nodes\": 1000000, \"seconds\": 600},"
    " \"storage\": {\"batch\": 4}}";

void synth_load_task(cp_task *t) {
  cp_error e;
  cr_assert_eq(cp_task_parse(synth_task_json, strlen(synth_task_json), NULL, t, &e), 0,
               "%s: %s", e.where, e.msg);
}

char *synth_temp_db(void) {
  char *p = cpt_temp_file("", ".sqlite");
  unlink(p); /* a fresh file is created by the store */
  return p;
}

void synth_remove_db(char *p) {
  char side[1100];
  snprintf(side, sizeof side, "%s-wal", p);
  unlink(side);
  snprintf(side, sizeof side, "%s-shm", p);
  unlink(side);
  unlink(p);
  free(p);
}

cp_search_status synth_run(cp_search *s, long max_iter) {
  cp_search_status st = CP_SEARCH_RUNNING;
  for (long k = 0; k < max_iter && st == CP_SEARCH_RUNNING; ++k)
    st = cp_search_iterate(s);
  return st;
}

sqlite3 *synth_wait_nodes(const char *path, long long n, double seconds) {
  sqlite3 *s = NULL;
  long long have = 0;
  for (long k = 0; k < (long)(seconds * 1000) && have < n; ++k) {
    nanosleep(&(struct timespec){0, 1000000L}, NULL);
    if (!s && access(path, F_OK) == 0) {
      if (sqlite3_open(path, &s) != SQLITE_OK) {
        sqlite3_close(s);
        s = NULL;
        continue;
      }
      sqlite3_busy_timeout(s, 5000);
    }
    sqlite3_stmt *q;
    if (s && sqlite3_prepare_v2(s, "SELECT count(*) FROM nodes", -1, &q,
                                NULL) == SQLITE_OK) {
      if (sqlite3_step(q) == SQLITE_ROW) have = sqlite3_column_int64(q, 0);
      sqlite3_finalize(q);
    }
  }
  return s;
}

/* The push task with search.batch `batch` (its scene path made absolute),
 * in a temporary file: plain batches ("pipeline": false at batch > 1, now
 * that pipelined batches are the default there). */
char *synth_push_task(int batch) {
  return synth_push_task_with(batch, batch > 1 ? "\"pipeline\": false" : NULL);
}

char *synth_push_task_with(int batch, const char *extra) {
  char path[1024], scenes[1024];
  const char *root = getenv("CP_SOURCE_ROOT");
  snprintf(path, sizeof path, "%s/planner/tasks/push.json", root);
  snprintf(scenes, sizeof scenes, "\"%s/models/scenes/", root);
  char *text = cpt_read_file(path, NULL);
  const char *from = "\"../../models/scenes/", *seed = "\"seed\": 1}";
  char *sp = strstr(text, from), *sd = strstr(text, seed);
  cr_assert(sp && sd && sp < sd);
  size_t n = strlen(text) + strlen(scenes) + (extra ? strlen(extra) : 0) + 64;
  char *out = malloc(n);
  snprintf(out, n, "%.*s%s%.*s\"seed\": 1, \"batch\": %d%s%s}%s",
           (int)(sp - text), text, scenes, (int)(sd - sp - strlen(from)),
           sp + strlen(from), batch, extra ? ", " : "", extra ? extra : "",
           sd + strlen(seed));
  free(text);
  char *file = cpt_temp_file(out, ".json");
  free(out);
  return file;
}

sqlite3 *synth_open_db(const char *path) {
  sqlite3 *db;
  cr_assert_eq(sqlite3_open(path, &db), SQLITE_OK);
  sqlite3_busy_timeout(db, 5000);
  return db;
}

cp_store *synth_open_store(const char *path) {
  cp_store *st;
  char msg[512];
  cr_assert_eq(cp_store_open(path, 0, &st, msg, sizeof msg), CP_STORE_OK,
               "%s", msg);
  return st;
}

/* Digest of a run's node rows, every column but pivots (a work count: an
 * impact LCP found in a worker's memo counts none); *n the count. */
unsigned long long synth_run_digest(sqlite3 *db, long long run,
                                     long long *n) {
  sqlite3_stmt *q;
  cr_assert_eq(sqlite3_prepare_v2(
                   db,
                   "SELECT id, ifnull(parent, -1), depth, ifnull(action, -1),"
                   " flags, steps, lcp_solves, fallbacks, warm_steps, time,"
                   " cost, goal_distance, outcome, ifnull(message, ''), state,"
                   " ifnull(warm, x'') FROM nodes WHERE search_id = ?"
                   " ORDER BY id",
                   -1, &q, NULL),
               SQLITE_OK);
  sqlite3_bind_int64(q, 1, run);
  unsigned long long h = 1469598103934665603ull;
  *n = 0;
  while (sqlite3_step(q) == SQLITE_ROW) {
    long long v[9];
    double d[3];
    for (int k = 0; k < 9; ++k) v[k] = sqlite3_column_int64(q, k);
    for (int k = 0; k < 3; ++k) d[k] = sqlite3_column_double(q, 9 + k);
    const unsigned char *parts[6] = {
        (const void *)v, (const void *)d, sqlite3_column_text(q, 12),
        sqlite3_column_text(q, 13), sqlite3_column_blob(q, 14),
        sqlite3_column_blob(q, 15)};
    size_t lens[6] = {sizeof v, sizeof d, (size_t)sqlite3_column_bytes(q, 12),
                      (size_t)sqlite3_column_bytes(q, 13),
                      (size_t)sqlite3_column_bytes(q, 14),
                      (size_t)sqlite3_column_bytes(q, 15)};
    for (int k = 0; k < 6; ++k)
      for (size_t i = 0; i < lens[k]; ++i)
        h = (h ^ parts[k][i]) * 1099511628211ull;
    ++*n;
  }
  sqlite3_finalize(q);
  return h;
}

/* The plans of run `run` ("node:cost:length", comma-separated; "" when
 * none). */
void synth_plan_of(sqlite3 *db, long long run, char *out, size_t size) {
  char sql[256];
  snprintf(sql, sizeof sql,
           "SELECT group_concat(node || ':' || cost || ':' || length, ',')"
           " FROM plans WHERE search_id = %lld", run);
  sqlite3_stmt *q;
  cr_assert_eq(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK, "%s",
               sqlite3_errmsg(db));
  cr_assert_eq(sqlite3_step(q), SQLITE_ROW);
  const unsigned char *t = sqlite3_column_text(q, 0);
  snprintf(out, size, "%s", t ? (const char *)t : "");
  sqlite3_finalize(q);
}

long long synth_assert_same_run(sqlite3 *a, long long ra, sqlite3 *b,
                                long long rb, const char *what) {
  long long na, nb;
  cr_assert_eq(synth_run_digest(a, ra, &na), synth_run_digest(b, rb, &nb),
               "%s: the node rows differ", what);
  cr_assert_eq(na, nb, "%s", what);
  char pa[4096], pb[4096];
  synth_plan_of(a, ra, pa, sizeof pa);
  synth_plan_of(b, rb, pb, sizeof pb);
  cr_assert_str_eq(pa, pb, "%s: the plans differ", what);
  return na;
}

static json_t *push_plan_json(const char *task, const char *db,
                              const char *threads, const char *extra) {
  const char *argv[] = {"complan", "plan", task, "--db", db, "--method",
                        "sst", "--seed", "4", "--max-nodes", "1500",
                        "--max-seconds", "3600", "--threads", threads,
                        "--json", extra, NULL};
  return cpt_run_json(argv, 0);
}

sqlite3 *synth_kill_push_run(const char *task, const char *db) {
  const char *exe = getenv("CP_COMPLAN");
  pid_t pid = fork();
  cr_assert(pid >= 0);
  if (pid == 0) {
    if (!freopen("/dev/null", "w", stdout) ||
        !freopen("/dev/null", "w", stderr))
      _exit(126);
    execl(exe, exe, "plan", task, "--db", db, "--method", "sst", "--seed",
          "4", "--max-nodes", "1500", "--max-seconds", "3600", "--threads",
          "2", NULL);
    _exit(127);
  }
  /* Killed once batches are committed. */
  sqlite3 *s = synth_wait_nodes(db, 100, 60);
  kill(pid, SIGKILL);
  int wst;
  waitpid(pid, &wst, 0);
  cr_assert(WIFSIGNALED(wst), "the run ended before it was killed");
  cr_assert_not_null(s);
  return s;
}

void synth_killed_push_resumes(sqlite3 *s, char *task, char *db,
                               const char *threads,
                               void (*resume)(const char *task,
                                              const char *db)) {
  long long n1 = synth_query_int(s, "SELECT count(*) FROM nodes");
  cr_assert(n1 >= 100 && n1 < 1500, "%lld nodes", n1);
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM plans"), 0);
  if (resume) {
    resume(task, db);
  } else { /* on one thread (the batch is the run's, not the threads') */
    json_t *doc = push_plan_json(task, db, "1", "--resume");
    cr_assert(json_is_true(json_object_get(doc, "resumed")));
    json_decref(doc);
  }
  /* The same run went on (no second run). */
  cr_assert_eq(synth_query_int(s, "SELECT count(*) FROM searches"), 1);
  char *db2 = synth_temp_db();
  json_decref(push_plan_json(task, db2, threads, NULL));
  sqlite3 *s2 = synth_open_db(db2);
  synth_assert_same_run(s, 1, s2, 1,
                        "the killed run, resumed, is the uninterrupted one");
  sqlite3_close(s);
  sqlite3_close(s2);
  synth_remove_db(db);
  synth_remove_db(db2);
  remove(task);
  free(task);
}

void synth_assert_sequence_replays(const char *db, json_t *doc, long long plans) {
  char sid[32];
  snprintf(sid, sizeof sid, "%lld", (long long)json_integer_value(json_object_get(doc, "sequence_id")));
  const char *rv[] = {"complan", "replay", "--db", db, "--sequence", sid, "--verify", "--json", NULL};
  json_t *r = cpt_run_json(rv, 0);
  cr_assert_eq(json_integer_value(json_object_get(r, "plans")), plans);
  cr_assert(json_is_true(json_object_get(r, "verified")));
  cr_assert(json_is_true(json_object_get(r, "chained")));
  json_decref(r);
}

/* The rows of query in db as text, one line each. */
char *synth_rows_text(sqlite3 *db, const char *query) {
  sqlite3_stmt *q;
  cr_assert_eq(sqlite3_prepare_v2(db, query, -1, &q, NULL), SQLITE_OK, "%s",
               sqlite3_errmsg(db));
  size_t cap = 4096, len = 0;
  char *out = calloc(cap, 1);
  while (sqlite3_step(q) == SQLITE_ROW) {
    for (int k = 0; k < sqlite3_column_count(q); ++k) {
      const char *v = (const char *)sqlite3_column_text(q, k);
      size_t need = len + (v ? strlen(v) : 4) + 2;
      if (need >= cap) {
        cap = 2 * need;
        out = realloc(out, cap);
      }
      len += (size_t)sprintf(out + len, "%s%c", v ? v : "NULL",
                             k + 1 < sqlite3_column_count(q) ? ' ' : '\n');
    }
  }
  sqlite3_finalize(q);
  return out;
}
