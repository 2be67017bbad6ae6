/* `complan replay` (planner/replay/replay.h, planner/cli/replay.c): every bundled
 * task's plan re-simulates bitwise (--verify), its CSV ends in the stored
 * final state and its page holds every step; a tampered database fails
 * naming the step, body and component; --tolerance; --tree; bad input. */
// No Criterion .timeout in this file: Criterion 2.4's runner leaks under
// LeakSanitizer when tests with timeouts run; meson's timeout for the
// executable (tests/planner/meson.build) bounds the run instead.
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "planner/store/store.h"
#include "tests/support.h"

static char dir[64];

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/cp_replay_XXXXXX");
  cr_assert(mkdtemp(dir));
}

static void teardown(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_assert_eq(system(cmd), 0);
}

static const char *in_dir(const char *name) {
  static char buf[16][256]; /* distinct for the few names a test uses */
  static int k;
  k = (k + 1) % 16;
  snprintf(buf[k], sizeof buf[k], "%s/%s", dir, name);
  return buf[k];
}

/* Plans a bundled task into db; returns the plan's length. */
static long plan(const char *task, const char *db) {
  char path[512];
  snprintf(path, sizeof path, "%s/planner/tasks/%s", getenv("CP_SOURCE_ROOT"),
           task);
  /* No wall-time limit (sanitizer builds and loaded machines are slow). */
  const char *argv[] = {"complan", "plan", path, "--db", db, "--json",
                        "--max-seconds", "3600", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")),
                   "solved", "%s not solved", task);
  long n = (long)json_integer_value(json_object_get(doc, "length"));
  json_decref(doc);
  return n;
}

/* The stored state of the i-th node of plan_id's path (i < 0: the last). */
static int stored_state(const char *db, int64_t plan_id, long i, double *x,
                        int cap, long *n_nodes) {
  cp_store *st;
  char msg[256];
  cr_assert_eq(cp_store_open(db, 1, &st, msg, sizeof msg), CP_STORE_OK, "%s",
               msg);
  int64_t run;
  long *ids, n;
  cr_assert_eq(cp_store_plan_nodes(st, plan_id, &run, &ids, &n), CP_STORE_OK);
  if (i < 0) i = n - 1;
  cp_search_node node;
  int nv;
  cr_assert_eq(cp_store_load_node(st, run, ids[i], &node, x, cap, NULL, 0,
                                  &nv),
               CP_STORE_OK);
  if (n_nodes) *n_nodes = n;
  long id = ids[i];
  free(ids);
  cp_store_close(st);
  return (int)id;
}

/* The last line of a CSV as numbers; returns the column count. */
static int csv_last_row(const char *path, double *v, int cap, long *rows,
                        char *header, size_t hsize) {
  size_t len;
  char *text = cpt_read_file(path, &len);
  cr_assert(text, "no CSV %s", path);
  char *save, *line = strtok_r(text, "\n", &save), *last = NULL;
  snprintf(header, hsize, "%s", line);
  *rows = 0;
  while ((line = strtok_r(NULL, "\n", &save))) {
    last = line;
    ++*rows;
  }
  int n = 0;
  for (char *p = last; p && *p && n < cap;) {
    char *end;
    v[n++] = *p == ',' ? NAN : strtod(p, &end);
    if (*p != ',') p = end;
    if (*p == ',') ++p;
  }
  free(text);
  return n;
}


/* The bundled tasks and their steps per action (duration / dt). */
static const struct {
  const char *task;
  int steps_per_action;
} tasks[] = {{"push.json", 20}, {"grasp_lift.json", 20},
             {"slide_to_wall.json", 20}, {"quasistatic_push.json", 10},
             {"grasp_place.json", 20}};
enum { N_TASKS = sizeof tasks / sizeof *tasks };

TestSuite(replay, .init = setup, .fini = teardown);

Test(replay, every_bundled_task_replays_bitwise_with_csv_and_page) {
  const char *db = in_dir("all.sqlite");
  long length[N_TASKS];
  for (int k = 0; k < N_TASKS; ++k) length[k] = plan(tasks[k].task, db);
  for (int k = 0; k < N_TASKS; ++k) {
    char plan_id[16];
    snprintf(plan_id, sizeof plan_id, "%d", k + 1);
    char csv[256], html[256];
    snprintf(csv, sizeof csv, "%s", in_dir("plan.csv"));
    snprintf(html, sizeof html, "%s", in_dir("plan.html"));
    const char *argv[] = {"complan", "replay", "--db", db, "--plan", plan_id,
                          "--verify", "--json", "--csv", csv, "--html", html,
                          NULL};
    json_t *doc = cpt_run_json(argv, 0);
    cr_assert(json_is_true(json_object_get(doc, "verified")), "%s",
              tasks[k].task);
    cr_assert_eq(json_real_value(json_object_get(doc, "deviation")), 0.0);
    long steps = (long)json_integer_value(json_object_get(doc, "steps"));
    cr_assert_eq(json_integer_value(json_object_get(doc, "length")),
                 length[k]);
    cr_assert_eq(steps, length[k] * tasks[k].steps_per_action, "%s: %ld",
                 tasks[k].task, steps);
    json_decref(doc);

    /* CSV: a row per step plus the start; the last row's state is the
     * stored final node's, bit for bit. */
    double x[64], row[96];
    long n_nodes;
    stored_state(db, k + 1, -1, x, 64, &n_nodes);
    cr_assert_eq(n_nodes, length[k] + 1);
    long rows;
    char header[2048];
    int cols = csv_last_row(csv, row, 96, &rows, header, sizeof header);
    cr_assert_eq(rows, steps + 1);
    cr_assert_eq(strncmp(header, "t,", 2), 0);
    cr_assert(strstr(header, ",action,"), "%s", header);
    cr_assert(strstr(header, ".input"), "%s", header);
    int n_inputs = 0;
    for (const char *p = header; (p = strstr(p, ".input")); ++p) ++n_inputs;
    cr_assert_geq(n_inputs, 1);
    int n_state = cols - 2 - n_inputs; /* t, state..., action, inputs */
    cr_assert_gt(n_state, 13);
    for (int i = 0; i < n_state && i < 64; ++i)
      cr_assert_eq(row[1 + i], x[i], "%s: column %d", tasks[k].task, i + 1);

    /* The page: a frame per row, the first free body (column 1..7) at the
     * stored final pose in the last frame. */
    json_t *d = cpt_page_data(html);
    json_t *time = json_object_get(d, "time");
    cr_assert_eq((long)json_array_size(time), steps + 1);
    json_t *poses = json_object_get(d, "poses");
    json_t *last = json_array_get(poses, json_array_size(poses) - 1);
    for (int i = 0; i < 7; ++i)
      cr_assert_eq(json_number_value(json_array_get(last, (size_t)i)), x[i]);
    cr_assert(json_is_object(json_object_get(d, "goal")));
    cr_assert(json_is_null(json_object_get(d, "tree")));
    json_decref(d);
  }
}

/* Largest |value| of the named CSV columns over every row. */
static double csv_max_abs(const char *path, const char *const *names, int n) {
  FILE *f = fopen(path, "r");
  cr_assert(f, "no %s", path);
  char line[8192];
  cr_assert(fgets(line, sizeof line, f));
  int col[8], ncol = 0;
  for (int k = 0; k < n; ++k) {
    int c = 0, found = -1;
    for (char *tok = line, *end; tok; tok = end ? end + 1 : NULL, ++c) {
      end = strpbrk(tok, ",\n");
      size_t len = end ? (size_t)(end - tok) : strlen(tok);
      if (len == strlen(names[k]) && !strncmp(tok, names[k], len)) found = c;
      if (!end || *end == '\n') break;
    }
    cr_assert_geq(found, 0, "no column %s in %s", names[k], path);
    col[ncol++] = found;
  }
  double m = 0;
  while (fgets(line, sizeof line, f)) {
    int c = 0;
    for (char *tok = line; tok; ++c) {
      for (int k = 0; k < ncol; ++k)
        if (col[k] == c) m = fmax(m, fabs(strtod(tok, NULL)));
      tok = strchr(tok, ',');
      if (tok) ++tok;
    }
  }
  fclose(f);
  return m;
}

/* The grasp-and-lift plan is physical: the box, squeezed along x and lifted
 * along z, never moves sideways nor turns (issue 8's regression: it used to
 * spin at up to 7 rad/s about x while lifted, see docs/simulate.md,
 * Compliance), and ends in the goal region. */
Test(replay, grasp_plan_lifts_without_turning) {
  const char *db = in_dir("grasp.sqlite");
  plan("grasp_lift.json", db);
  const char *csv = in_dir("grasp.csv");
  const char *argv[] = {"complan", "replay", "--db", db, "--plan", "1",
                        "--csv", csv, "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  json_decref(doc);
  static const char *const side[] = {"box.x", "box.y"},
                           *turn[] = {"box.wx", "box.wy", "box.wz"};
  double ms = csv_max_abs(csv, side, 2), mt = csv_max_abs(csv, turn, 3);
  cr_assert(ms <= 1e-6, "the box moved sideways by %g m", ms);
  cr_assert(mt <= 1e-5, "the box turned at %g rad/s", mt);
  double x[64];
  stored_state(db, 1, -1, x, 64, NULL);
  cr_assert(fabs(x[2] - 0.08) <= 0.01, "final box z = %g", x[2]);
}

/* Flips the lowest bit of state entry `entry` of the plan's node `step`. */
static void tamper(const char *db, int64_t plan_id, long step, int entry) {
  double x[64];
  int id = stored_state(db, plan_id, step, x, 64, NULL);
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  sqlite3_stmt *q;
  cr_assert_eq(sqlite3_prepare_v2(h,
                                  "UPDATE nodes SET state = ? WHERE id = ? "
                                  "AND search_id = (SELECT search_id FROM "
                                  "plans WHERE id = ?)",
                                  -1, &q, NULL),
               SQLITE_OK, "%s", sqlite3_errmsg(h));
  /* Read the blob's size from the stored row to write the same length. */
  sqlite3_stmt *r;
  cr_assert_eq(sqlite3_prepare_v2(h, "SELECT length(state) FROM nodes WHERE "
                                     "id = ? AND search_id = (SELECT "
                                     "search_id FROM plans WHERE id = ?)",
                                  -1, &r, NULL),
               SQLITE_OK);
  sqlite3_bind_int(r, 1, id);
  sqlite3_bind_int64(r, 2, plan_id);
  cr_assert_eq(sqlite3_step(r), SQLITE_ROW);
  int bytes = sqlite3_column_int(r, 0);
  sqlite3_finalize(r);
  cr_assert_leq(bytes, (int)sizeof x);
  uint64_t bits;
  memcpy(&bits, &x[entry], 8);
  bits ^= 1;
  memcpy(&x[entry], &bits, 8);
  sqlite3_bind_blob(q, 1, x, bytes, SQLITE_TRANSIENT);
  sqlite3_bind_int(q, 2, id);
  sqlite3_bind_int64(q, 3, plan_id);
  cr_assert_eq(sqlite3_step(q), SQLITE_DONE, "%s", sqlite3_errmsg(h));
  cr_assert_eq(sqlite3_changes(h), 1);
  sqlite3_finalize(q);
  sqlite3_close(h);
}

Test(replay, a_tampered_database_fails_verify_naming_step_and_body) {
  const char *db = in_dir("push.sqlite");
  cr_assert_geq(plan("push.json", db), 2);
  tamper(db, 1, 2, 0); /* plan step 2, the box's x, one bit */
  const char *argv[] = {"complan", "replay", "--db", db, "--verify", NULL};
  char *out, *err;
  int rc = cpt_run(argv, &out, &err);
  cr_assert_eq(rc, 1, "rc %d: %s", rc, err);
  cr_assert(strstr(err, "plan step 2"), "%s", err);
  cr_assert(strstr(err, "body \"box\" x"), "%s", err);
  free(out);
  free(err);

  const char *argj[] = {"complan", "replay", "--db", db, "--verify", "--json",
                        NULL};
  json_t *doc = cpt_run_json(argj, 1);
  cr_assert(json_is_false(json_object_get(doc, "verified")));
  json_t *m = json_object_get(doc, "mismatch");
  cr_assert_eq(json_integer_value(json_object_get(m, "plan_step")), 2);
  cr_assert_str_eq(json_string_value(json_object_get(m, "where")),
                   "body \"box\" x");
  double dev = json_number_value(json_object_get(m, "deviation"));
  cr_assert(dev > 0 && dev < 1e-15, "deviation %g", dev);
  json_decref(doc);

  /* A tolerance above one bit accepts it; without --verify it replays. */
  const char *argt[] = {"complan", "replay", "--db", db, "--verify",
                        "--tolerance", "1e-12", "--json", NULL};
  doc = cpt_run_json(argt, 0);
  cr_assert(json_is_true(json_object_get(doc, "verified")));
  cr_assert_gt(json_number_value(json_object_get(doc, "deviation")), 0);
  json_decref(doc);
  const char *argn[] = {"complan", "replay", "--db", db, "--json", NULL};
  doc = cpt_run_json(argn, 0);
  cr_assert(json_is_null(json_object_get(doc, "verified")));
  json_decref(doc);
}

Test(replay, tree_page_and_latest_plan) {
  const char *db = in_dir("tree.sqlite");
  long len = plan("push.json", db);
  plan("slide_to_wall.json", db);
  const char *html = in_dir("tree.html");
  /* Without --plan: the latest plan (2). With --plan 1 --tree: run 1. */
  const char *arg0[] = {"complan", "replay", "--db", db, "--json", NULL};
  json_t *doc = cpt_run_json(arg0, 0);
  cr_assert_eq(json_integer_value(json_object_get(doc, "plan")), 2);
  json_decref(doc);
  const char *argv[] = {"complan", "replay", "--db", db, "--plan", "1",
                        "--html", html, "--tree", NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(argv, &out, &err), 0, "%s", err);
  free(out);
  free(err);
  const char *argl[] = {"complan", "plans", "--db", db, "--json", NULL};
  doc = cpt_run_json(argl, 0);
  long nodes = (long)json_integer_value(
      json_object_get(json_array_get(json_object_get(doc, "runs"), 0),
                      "nodes"));
  json_decref(doc);
  json_t *d = cpt_page_data(html);
  json_t *tree = json_object_get(d, "tree");
  cr_assert_eq((long)json_array_size(json_object_get(tree, "points")),
               3 * nodes);
  json_t *path = json_object_get(tree, "path");
  json_t *parent = json_object_get(tree, "parent");
  cr_assert_eq((long)json_array_size(path), len + 1);
  /* The path starts at the root and each node's parent is the one before. */
  cr_assert_eq(json_integer_value(json_array_get(
                   parent, (size_t)json_integer_value(json_array_get(path, 0)))),
               -1);
  for (size_t i = 1; i < json_array_size(path); ++i) {
    size_t node = (size_t)json_integer_value(json_array_get(path, i));
    cr_assert_eq(json_integer_value(json_array_get(parent, node)),
                 json_integer_value(json_array_get(path, i - 1)));
  }
  /* The root's point is the box's start position (0, 0, 0.05). */
  json_t *pts = json_object_get(tree, "points");
  size_t root = (size_t)json_integer_value(json_array_get(path, 0));
  cr_assert_float_eq(json_number_value(json_array_get(pts, 3 * root + 2)),
                     0.05, 1e-9);
  json_decref(d);
}

Test(replay, bad_input_exits_2_and_writes_nothing) {
  char *out, *err;
  const char *missing = in_dir("missing.sqlite");
  const char *a1[] = {"complan", "replay", "--db", missing, NULL};
  cr_assert_eq(cpt_run(a1, &out, &err), 2);
  cr_assert(strstr(err, missing), "%s", err);
  free(out);
  free(err);

  const char *db = in_dir("one.sqlite");
  plan("push.json", db);
  const char *csv = in_dir("x.csv");
  const char *a2[] = {"complan", "replay", "--db", db, "--plan", "99",
                      "--csv", csv, NULL};
  cr_assert_eq(cpt_run(a2, &out, &err), 2);
  cr_assert(strstr(err, "no plan 99"), "%s", err);
  cr_assert_neq(access(csv, F_OK), 0, "a CSV was written");
  free(out);
  free(err);

  const char *a3[] = {"complan", "replay", "--db", db, "--tree", NULL};
  cr_assert_eq(cpt_run(a3, &out, &err), 2);
  cr_assert(strstr(err, "--tree goes with --html"), "%s", err);
  free(out);
  free(err);

  const char *nowhere = in_dir("missing/x.html");
  const char *a6[] = {"complan", "replay", "--db", db, "--html", nowhere,
                      NULL};
  cr_assert_eq(cpt_run(a6, &out, &err), 2);
  cr_assert(strstr(err, nowhere), "%s", err);
  free(out);
  free(err);

  const char *a4[] = {"complan", "replay", "--db", db, "--plan", "x", NULL};
  cr_assert_eq(cpt_run(a4, &out, &err), 2);
  free(out);
  free(err);

  /* A database without plans. */
  cp_store *st;
  char msg[256];
  const char *empty = in_dir("empty.sqlite");
  cr_assert_eq(cp_store_open(empty, 0, &st, msg, sizeof msg), CP_STORE_OK);
  cp_store_close(st);
  const char *a5[] = {"complan", "replay", "--db", empty, NULL};
  cr_assert_eq(cpt_run(a5, &out, &err), 2);
  cr_assert(strstr(err, "no plan"), "%s", err);
  free(out);
  free(err);
}

/* ---- self-contained provenance (issue 21, H1) ------------------------- */

/* Writes text to dir/name. */
static void put(const char *name, const char *text) {
  FILE *f = fopen(in_dir(name), "w");
  cr_assert(f, "cannot write %s", in_dir(name));
  fputs(text, f);
  fclose(f);
}

/* push.json's task with its scene at "scene.json" beside it, in dir. */
static void push_task_in_dir(const char *scene_text) {
  char path[512];
  snprintf(path, sizeof path, "%s/planner/tasks/push.json", getenv("CP_SOURCE_ROOT"));
  char *task = cpt_read_file(path, NULL);
  const char *from = "../../models/scenes/plan_push.json";
  char *at = strstr(task, from);
  cr_assert(at);
  char text[4096];
  snprintf(text, sizeof text, "%.*sscene.json%s", (int)(at - task), task, at + strlen(from));
  free(task);
  put("task.json", text);
  put("scene.json", scene_text);
}

static char *bundled_scene(const char *name) {
  char path[512];
  snprintf(path, sizeof path, "%s/models/scenes/%s", getenv("CP_SOURCE_ROOT"), name);
  return cpt_read_file(path, NULL);
}

/* text with the first `from` replaced by `to` (malloc'd). */
static char *replaced(const char *text, const char *from, const char *to) {
  const char *at = strstr(text, from);
  cr_assert(at, "no %s", from);
  size_t n = strlen(text) + strlen(to) + 1;
  char *s = malloc(n);
  snprintf(s, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
  return s;
}

/* The first column of sql's first row in db, as text (malloc'd). */
static char *db_text(const char *db, const char *sql) {
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  sqlite3_stmt *q;
  cr_assert_eq(sqlite3_prepare_v2(h, sql, -1, &q, NULL), SQLITE_OK, "%s", sql);
  cr_assert_eq(sqlite3_step(q), SQLITE_ROW, "%s", sql);
  char *v = strdup((const char *)sqlite3_column_text(q, 0));
  sqlite3_finalize(q);
  sqlite3_close(h);
  return v;
}

static void db_expect(const char *db, const char *sql, const char *want) {
  char *v = db_text(db, sql);
  cr_assert_str_eq(v, want, "%s", sql);
  free(v);
}

static int run_quiet(const char *const *argv, char **err) {
  char *out;
  int rc = cpt_run(argv, &out, err);
  free(out);
  return rc;
}

Test(replay, an_edited_scene_gives_a_new_task_and_both_replay_bitwise) {
  char *scene = bundled_scene("plan_push.json");
  push_task_in_dir(scene);
  const char *db = in_dir("edit.sqlite");
  const char *argv[] = {"complan", "plan", in_dir("task.json"), "--db", db,
                        "--max-seconds", "3600", NULL};
  char *err;
  cr_assert_eq(run_quiet(argv, &err), 0, "%s", err);
  free(err);
  char *edited = replaced(scene, "\"default\": 0.3", "\"default\": 0.6");
  put("scene.json", edited);
  cr_assert_eq(run_quiet(argv, &err), 0, "%s", err);
  free(err);
  /* The edited scene is a new task; two scene contents, one task text:
   * three blobs. */
  db_expect(db, "SELECT count(*) || ' ' || count(DISTINCT hash) FROM tasks", "2 2");
  db_expect(db, "SELECT count(*) FROM blobs", "3");
  for (int p = 1; p <= 2; ++p) {
    char id[8];
    snprintf(id, sizeof id, "%d", p);
    const char *rv[] = {"complan", "replay", "--db", db, "--plan", id, "--verify", NULL};
    cr_assert_eq(run_quiet(rv, &err), 0, "plan %d: %s", p, err);
    free(err);
  }
  free(edited);
  free(scene);
}

Test(replay, resume_after_a_scene_edit_is_refused_naming_the_scene) {
  char *scene = bundled_scene("plan_push.json");
  push_task_in_dir(scene);
  const char *db = in_dir("resume.sqlite");
  const char *a1[] = {"complan", "plan", in_dir("task.json"), "--db", db,
                      "--max-nodes", "5", "--max-seconds", "3600", NULL};
  char *err;
  cr_assert_eq(run_quiet(a1, &err), 1, "%s", err);
  free(err);
  char *edited = replaced(scene, "\"default\": 0.3", "\"default\": 0.6");
  put("scene.json", edited);
  const char *a2[] = {"complan", "plan", in_dir("task.json"), "--db", db,
                      "--resume", "--max-seconds", "3600", NULL};
  char *out;
  cr_assert_eq(cpt_run(a2, &out, &err), 2, "%s", err);
  cr_assert(strstr(err, "scene file") && strstr(err, "scene.json") &&
            strstr(err, "changed") && strstr(err, "run 1"), "%s", err);
  cr_assert_str_eq(out, "");
  free(out);
  free(err);
  db_expect(db, "SELECT count(*) FROM searches", "1"); /* none started */
  /* Back to the original bytes: the same task, the run resumes. */
  put("scene.json", scene);
  cr_assert_eq(run_quiet(a2, &err), 0, "%s", err);
  free(err);
  free(edited);
  free(scene);
}

static void sql_on(const char *db, const char *sql);

/* velocity_sliding (session 22) is recorded with the run's world options.
 * A run stored before lacks it and simulated with it off: resuming it with
 * it on would mix two friction laws in one tree, so it is refused, naming
 * the run and the option, and nothing is written; with the record back,
 * the run resumes. */
Test(replay, a_run_without_velocity_sliding_is_not_resumed_with_it_on) {
  char *scene = bundled_scene("plan_push.json");
  push_task_in_dir(scene);
  const char *db = in_dir("vs.sqlite");
  const char *a1[] = {"complan", "plan", in_dir("task.json"), "--db", db,
                      "--max-nodes", "5", "--max-seconds", "3600", NULL};
  char *err;
  cr_assert_eq(run_quiet(a1, &err), 1, "%s", err);
  free(err);
  db_expect(db, "SELECT json_extract(options, '$.world.velocity_sliding') FROM searches", "1");
  sql_on(db, "UPDATE searches SET options = json_remove(options, '$.world.velocity_sliding')");
  char *before = db_text(db, "SELECT count(*) || ' ' || sessions FROM nodes, searches");
  const char *a2[] = {"complan", "plan", in_dir("task.json"), "--db", db,
                      "--resume", "--max-seconds", "3600", NULL};
  char *out;
  cr_assert_eq(cpt_run(a2, &out, &err), 2, "%s", err);
  cr_assert(strstr(err, "velocity_sliding") && strstr(err, "run 1") &&
            strstr(err, "plan it again"), "%s", err);
  cr_assert_str_eq(out, "");
  free(out);
  free(err);
  db_expect(db, "SELECT count(*) || ' ' || sessions FROM nodes, searches", before);
  free(before);
  sql_on(db, "UPDATE searches SET options = json_set(options, '$.world.velocity_sliding', 1)");
  cr_assert_eq(run_quiet(a2, &err), 0, "%s", err);
  free(err);
  free(scene);
}

/* A task may keep the pyramid ("velocity_sliding": false): the run records
 * 0, and its plan replays bitwise with it. */
Test(replay, a_task_without_velocity_sliding_records_it_and_replays) {
  char *scene = bundled_scene("plan_push.json");
  push_task_in_dir(scene);
  char *task = cpt_read_file(in_dir("task.json"), NULL);
  char *off = replaced(task, "{", "{\"velocity_sliding\": false, ");
  put("task.json", off);
  const char *db = in_dir("vs_off.sqlite");
  const char *a[] = {"complan", "plan", in_dir("task.json"), "--db", db,
                     "--max-seconds", "3600", NULL};
  char *err;
  cr_assert_eq(run_quiet(a, &err), 0, "%s", err);
  free(err);
  db_expect(db, "SELECT json_extract(options, '$.world.velocity_sliding') FROM searches", "0");
  const char *rv[] = {"complan", "replay", "--db", db, "--plan", "1", "--verify", NULL};
  cr_assert_eq(run_quiet(rv, &err), 0, "%s", err);
  free(err);
  free(off);
  free(task);
  free(scene);
}

/* A URDF manipulator whose link collides through a mesh: a prismatic
 * probe along x (gravity along -z does not move it) well away from the
 * box and the table. */
static const char probe_urdf[] =
    "<robot name=\"probe\">\n"
    "  <link name=\"base\"/>\n"
    "  <link name=\"tip\">\n"
    "    <inertial><mass value=\"0.1\"/>\n"
    "      <inertia ixx=\"1e-4\" iyy=\"1e-4\" izz=\"1e-4\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/>\n"
    "    </inertial>\n"
    "    <collision><geometry><mesh filename=\"meshes/tip.stl\"/></geometry></collision>\n"
    "  </link>\n"
    "  <joint name=\"s\" type=\"prismatic\">\n"
    "    <parent link=\"base\"/><child link=\"tip\"/><axis xyz=\"1 0 0\"/>\n"
    "    <limit lower=\"-0.1\" upper=\"0.1\" effort=\"10\" velocity=\"1\"/>\n"
    "  </joint>\n"
    "</robot>\n";
static const char tip_stl[] =
    "solid tip\n"
    "facet normal 0 0 -1\n outer loop\n  vertex 0 0 0\n  vertex 0.02 0 0\n  vertex 0 0.02 0\n endloop\nendfacet\n"
    "facet normal 0 -1 0\n outer loop\n  vertex 0 0 0\n  vertex 0 0 0.02\n  vertex 0.02 0 0\n endloop\nendfacet\n"
    "facet normal -1 0 0\n outer loop\n  vertex 0 0 0\n  vertex 0 0.02 0\n  vertex 0 0 0.02\n endloop\nendfacet\n"
    "facet normal 1 1 1\n outer loop\n  vertex 0.02 0 0\n  vertex 0 0 0.02\n  vertex 0 0.02 0\n endloop\nendfacet\n"
    "endsolid tip\n";

Test(replay, replay_reads_urdf_and_mesh_from_the_database_only) {
  char *scene = bundled_scene("plan_push.json");
  char *with_probe = replaced(
      scene, "\"manipulators\": [",
      "\"manipulators\": [{\"name\": \"probe\", \"urdf\": \"robots/probe.urdf\","
      " \"base\": {\"position\": [0.0, 0.3, 0.4], \"orientation\": [1, 0, 0, 0]}},");
  char cmd[512];
  snprintf(cmd, sizeof cmd, "mkdir -p '%s/robots/meshes'", dir);
  cr_assert_eq(system(cmd), 0);
  put("robots/probe.urdf", probe_urdf);
  put("robots/meshes/tip.stl", tip_stl);
  push_task_in_dir(with_probe);
  const char *db = in_dir("self.sqlite");
  const char *a1[] = {"complan", "plan", in_dir("task.json"), "--db", db,
                      "--max-seconds", "3600", NULL};
  char *err;
  cr_assert_eq(run_quiet(a1, &err), 0, "%s", err);
  free(err);
  db_expect(db, "SELECT group_concat(kind, ',') FROM (SELECT kind FROM task_files ORDER BY seq)",
            "task,scene,urdf,mesh");
  /* The inputs moved away, replay run from another folder. */
  snprintf(cmd, sizeof cmd, "mv '%s/robots' '%s/robots.gone' && mv '%s/scene.json' '%s/x'",
           dir, dir, dir, dir);
  cr_assert_eq(system(cmd), 0);
  cr_assert_eq(chdir("/"), 0);
  const char *rv[] = {"complan", "replay", "--db", db, "--verify", NULL};
  char *out;
  cr_assert_eq(cpt_run(rv, &out, &err), 0, "%s", err);
  cr_assert(strstr(out, "bitwise"), "%s", out);
  free(out);
  free(err);
  /* A stored file damaged: replay refuses, naming it. */
  sqlite3 *h;
  sqlite3_open(db, &h);
  cr_assert_eq(sqlite3_exec(h, "UPDATE blobs SET data = CAST('solid x' AS BLOB)"
                            " WHERE sha256 = (SELECT sha256 FROM task_files WHERE kind = 'mesh')",
                            NULL, NULL, NULL), SQLITE_OK);
  sqlite3_close(h);
  cr_assert_eq(cpt_run(rv, &out, &err), 2, "%s", err);
  cr_assert(strstr(err, "tip.stl") && strstr(err, "SHA-256"), "%s", err);
  cr_assert_str_eq(out, "");
  free(out);
  free(err);
  free(with_probe);
  free(scene);
}

/* ---- hostile databases (issue 21): each exits 2 naming the node ------- */

static void sql_on(const char *db, const char *sql) {
  sqlite3 *h;
  cr_assert_eq(sqlite3_open(db, &h), SQLITE_OK);
  cr_assert_eq(sqlite3_exec(h, sql, NULL, NULL, NULL), SQLITE_OK, "%s: %s", sql,
               sqlite3_errmsg(h));
  sqlite3_close(h);
}

/* A fresh copy of push's solved database (plan 1: nodes 0 -> ... -> goal). */
static const char *solved_copy(const char *name) {
  static int planned;
  const char *master = in_dir("hostile_master.sqlite");
  if (!planned++) {
    plan("push.json", master);
    sql_on(master, "PRAGMA wal_checkpoint(TRUNCATE)");
  }
  const char *db = in_dir(name);
  char cmd[600];
  snprintf(cmd, sizeof cmd, "cp '%s' '%s'", master, db);
  cr_assert_eq(system(cmd), 0);
  return db;
}

/* Runs argv and expects exit 2, nothing on stdout, and every word in err. */
static void expect_2(const char *const *argv, const char *w1, const char *w2) {
  char *out, *err;
  int rc = cpt_run(argv, &out, &err);
  cr_assert_eq(rc, 2, "%s %s: exit %d: %s", argv[1], argv[3], rc, err);
  cr_assert_str_eq(out, "", "%s printed on stdout", argv[1]);
  cr_assert(strstr(err, w1) && (!w2 || strstr(err, w2)), "%s", err);
  free(out);
  free(err);
}

Test(replay, a_cycle_in_the_parent_links_exits_2_at_once) {
  const char *db = solved_copy("cycle.sqlite");
  /* The plan's first action's node gets the plan's last node as parent. */
  char *first = db_text(db, "SELECT min(id) FROM nodes WHERE parent = 0 AND id IN"
                            " (WITH RECURSIVE p(id, parent) AS (SELECT n.id, n.parent FROM"
                            " nodes n JOIN plans ON plans.node = n.id WHERE plans.id = 1"
                            " UNION ALL SELECT n.id, n.parent FROM nodes n JOIN p ON"
                            " n.id = p.parent) SELECT id FROM p)");
  char sql[256], node[64];
  snprintf(sql, sizeof sql, "UPDATE nodes SET parent = (SELECT node FROM plans WHERE id = 1)"
           " WHERE id = %s", first);
  sql_on(db, sql);
  snprintf(node, sizeof node, "node %s", first);
  const char *rv[] = {"complan", "replay", "--db", db, "--verify", NULL};
  expect_2(rv, node, "cycle");
  free(first);
}

Test(replay, short_and_empty_state_blobs_exit_2_naming_the_node) {
  for (int k = 0; k < 2; ++k) {
    const char *db = solved_copy(k ? "short.sqlite" : "empty_blob.sqlite");
    sql_on(db, k ? "UPDATE nodes SET state = x'0000000000000000'"
                   " WHERE id = (SELECT node FROM plans WHERE id = 1)"
                 : "UPDATE nodes SET state = x''"
                   " WHERE id = (SELECT node FROM plans WHERE id = 1)");
    char *id = db_text(db, "SELECT node FROM plans WHERE id = 1");
    char node[64];
    snprintf(node, sizeof node, "node %s", id);
    const char *rv[] = {"complan", "replay", "--db", db, "--verify", NULL};
    expect_2(rv, node, k ? "state of 8 bytes" : "state of 0 bytes");
    free(id);
  }
}

Test(replay, damaged_rows_exit_2_not_1) {
  const char *db = solved_copy("outcome.sqlite");
  sql_on(db, "UPDATE nodes SET outcome = 'bogus' WHERE id = (SELECT node FROM plans WHERE id = 1)");
  const char *rv[] = {"complan", "replay", "--db", db, NULL};
  expect_2(rv, "unknown outcome", "bogus");
  /* A table gone from a stamped file. */
  db = solved_copy("no_plans.sqlite");
  sql_on(db, "DROP TABLE plans");
  const char *pv[] = {"complan", "plans", "--db", db, NULL};
  expect_2(pv, "no such table", "damaged");
  const char *rv2[] = {"complan", "replay", "--db", db, NULL};
  expect_2(rv2, "no such table", "damaged");
  /* The store's message names the database: once, first (its code says
   * so, planner/replay/replay.h). */
  char *out, *err;
  cr_assert_eq(cpt_run(rv2, &out, &err), 2);
  size_t n = strlen("complan: ");
  cr_assert(!strncmp(err, "complan: ", n) && !strncmp(err + n, db, strlen(db)), "%s", err);
  cr_assert_null(strstr(err + n + 1, db), "the database named twice: %s", err);
  free(out);
  free(err);
}

Test(replay, a_fifo_as_the_database_is_refused_at_once) {
  const char *fifo = in_dir("fifo.sqlite");
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  const char *rv[] = {"complan", "replay", "--db", fifo, NULL};
  expect_2(rv, "a FIFO", fifo);
  const char *pv[] = {"complan", "plans", "--db", fifo, NULL};
  expect_2(pv, "a FIFO", NULL);
  char task[512];
  snprintf(task, sizeof task, "%s/planner/tasks/push.json", getenv("CP_SOURCE_ROOT"));
  const char *av[] = {"complan", "plan", task, "--db", fifo, NULL};
  expect_2(av, "a FIFO", NULL);
}

Test(replay, seeds_up_to_2_to_the_64_minus_1) {
  const char *db = in_dir("seed.sqlite");
  char task[512];
  snprintf(task, sizeof task, "%s/planner/tasks/push.json", getenv("CP_SOURCE_ROOT"));
  const char *av[] = {"complan", "plan", task, "--db", db, "--seed",
                      "18446744073709551615", "--method", "rrt", "--max-nodes", "20", NULL};
  char *err;
  int rc = run_quiet(av, &err);
  cr_assert(rc == 0 || rc == 1, "exit %d: %s", rc, err);
  free(err);
  /* Stored as the same 64 bits (SQLite's integers are signed). */
  db_expect(db, "SELECT seed FROM searches", "-1");
  const char *bad[] = {"complan", "plan", task, "--db", db, "--seed",
                       "18446744073709551616", NULL};
  char *out;
  cr_assert_eq(cpt_run(bad, &out, &err), 2);
  cr_assert(strstr(err, "--seed") && strstr(err, "18446744073709551616"), "%s", err);
  free(out);
  free(err);
}
