/* Replay of stored plans (planner/replay/replay.h). */
#include "planner/replay/replay.h"

#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "planner/io/csv.h"
#include "planner/plan/plan.h"
#include "planner/sim/statelayout.h"

struct cp_replay {
  cp_store *st;
  int64_t plan_id, run_id;
  cp_task task;
  cp_plan_world *pw;
  const cp_search_problem *prob;
  int n;                /* state size */
  cp_state_layout layout; /* of the task's scene: names, CSV columns */
  long n_nodes;         /* plan nodes, start included */
  long *ids;            /* [n_nodes] node ids in the run */
  double *states;       /* [n_nodes][n] stored */
  double *times;        /* [n_nodes] */
  long *actions;        /* [n_nodes] (-1 for the start) */
  /* during a run */
  const cp_replay_options *opt;
  cp_replay_frame fr;
  double *values, *x, *y, *step_state;
  long step;
};

cp_replay_options cp_replay_defaults(void) {
  cp_replay_options o;
  memset(&o, 0, sizeof o);
  return o;
}

void cp_replay_close(cp_replay *r) {
  if (!r) return;
  cp_plan_world_destroy(r->pw);
  cp_state_layout_free(&r->layout);
  cp_task_free(&r->task);
  free(r->ids);
  free(r->states);
  free(r->times);
  free(r->actions);
  free(r->values);
  free(r->x);
  free(r->y);
  free(r->step_state);
  free(r);
}

static cp_replay_status open_fail(cp_replay *r, cp_replay_status s) {
  cp_replay_close(r);
  return s;
}

static cp_replay_status store_status(cp_store_status s) {
  return s == CP_STORE_NOMEM ? CP_REPLAY_NOMEM
         : s == CP_STORE_NOT_FOUND || s == CP_STORE_BAD_FILE
             ? CP_REPLAY_BAD_INPUT
             : CP_REPLAY_FAILED;
}

/* A store failure as the replay's error: its status, and in *err the kind
 * (CP_ERR_NOMEM; CP_ERR_IO with the store's message, which names the
 * database file; a missing row: bad input) -- replay.h. */
static cp_replay_status store_fail(cp_error *err, const cp_store *st, cp_store_status s) {
  if (s == CP_STORE_NOMEM) cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  else if (s == CP_STORE_NOT_FOUND)
    cp_error_set(err, "", "a row the plan refers to is missing (a damaged database)");
  else cp_error_setc(err, CP_ERR_IO, "", "%s", cp_store_message(st));
  return store_status(s);
}

/* The latest plan's id (the largest), or 0 when the database has none. */
static cp_store_status latest_plan(cp_store *st, int64_t *id) {
  json_t *list;
  cp_store_status s = cp_store_list(st, &list);
  if (s != CP_STORE_OK) return s;
  *id = 0;
  size_t i, j;
  json_t *run, *plan;
  json_array_foreach(json_object_get(list, "runs"), i, run) {
    json_array_foreach(json_object_get(run, "plans"), j, plan) {
      int64_t p = json_integer_value(json_object_get(plan, "id"));
      if (p > *id) *id = p;
    }
  }
  json_decref(list);
  return CP_STORE_OK;
}

/* The files stored with the task, served to the loaders by the path they
 * ask for: replay reads nothing from disk. */
typedef struct stored_files {
  const cp_store_file *f;
  int n;
  int64_t task_id;
} stored_files;

static char *stored_read(void *ctx, const char *path, const char *kind,
                         size_t *len, cp_error *err) {
  const stored_files *s = ctx;
  for (int i = 0; i < s->n; ++i)
    if (!strcmp(s->f[i].path, path)) {
      char *b = malloc(s->f[i].size + 1);
      if (!b) {
        cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
        return NULL;
      }
      memcpy(b, s->f[i].data, s->f[i].size + 1);
      *len = s->f[i].size;
      return b;
    }
  cp_error_set(err, "", "the %s file %s is not stored with task %lld in the "
               "database (replay reads nothing else)", kind, path,
               (long long)s->task_id);
  return NULL;
}

static int stored_is_dir(void *ctx, const char *path) {
  const stored_files *s = ctx;
  size_t n = strlen(path);
  for (int i = 0; i < s->n; ++i)
    if (!strncmp(s->f[i].path, path, n) && s->f[i].path[n] == '/') return 1;
  return 0;
}

/* The task as stored: its text with "scene" replaced by the stored scene
 * (so that neither file need still exist, nor be unchanged), parsed with the
 * scene's folder for the scene's relative paths (URDF files), whose bytes
 * come from files (NULL: a version-1 task, read from disk). */
static int rebuild_task(const cp_store_task_row *row,
                        const cp_file_source *files, cp_task *task,
                        cp_error *err) {
  json_error_t je;
  json_t *t = json_loads(row->text, 0, &je);
  json_t *s = json_loads(row->scene, 0, &je);
  int rc = -1;
  if (!t || !s || !json_is_object(t)) {
    cp_error_set(err, "tasks", "the stored task or scene is not JSON: %s",
                 je.text);
  } else if (json_object_set(t, "scene", s)) {
    cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
  } else {
    char *text = json_dumps(t, JSON_COMPACT | JSON_REAL_PRECISION(17));
    char *path = NULL;
    if (row->scene_dir[0]) {
      size_t n = strlen(row->scene_dir) + 16;
      path = malloc(n);
      if (path) snprintf(path, n, "%s/task.json", row->scene_dir);
    }
    if (!text || (row->scene_dir[0] && !path))
      cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
    else
      rc = cp_task_parse_from(text, strlen(text), path, files, task, err);
    free(text);
    free(path);
  }
  json_decref(t);
  json_decref(s);
  return rc;
}

cp_replay_status cp_replay_open(cp_store *st, int64_t plan_id,
                                cp_replay **out, cp_error *err) {
  *out = NULL;
  cp_replay *r = calloc(1, sizeof *r);
  if (!r) {
    cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
    return CP_REPLAY_NOMEM;
  }
  r->st = st;
  cp_store_status ss;
  if (plan_id <= 0) {
    if ((ss = latest_plan(st, &plan_id)) != CP_STORE_OK) {
      return open_fail(r, store_fail(err, st, ss));
    }
    if (plan_id <= 0) {
      cp_error_set(err, "", "the database holds no plan (run 'complan plan' "
                            "first)");
      return open_fail(r, CP_REPLAY_BAD_INPUT);
    }
  }
  r->plan_id = plan_id;
  ss = cp_store_plan_nodes(st, plan_id, &r->run_id, &r->ids, &r->n_nodes);
  if (ss != CP_STORE_OK || r->n_nodes == 0) {
    if (ss != CP_STORE_OK && ss != CP_STORE_NOT_FOUND)
      return open_fail(r, store_fail(err, st, ss));
    cp_error_set(err, "--plan", "no plan %lld in the database", (long long)plan_id);
    return open_fail(r, CP_REPLAY_BAD_INPUT);
  }
  cp_store_run run;
  if ((ss = cp_store_load_run(st, r->run_id, &run)) != CP_STORE_OK) {
    return open_fail(r, store_fail(err, st, ss));
  }
  /* The run's world options: warm starts as the search had them, and the
   * velocity stepper's sliding contacts (recorded since session 22; a run
   * stored before had them off: the pyramid). */
  int warm_start = 1;
  const int velocity_sliding = cp_plan_velocity_sliding_of(run.options, 1) == 1;
  json_t *o = json_loads(run.options ? run.options : "{}", 0, NULL);
  json_t *wo = json_object_get(o, "world");
  json_t *ws = json_object_get(json_is_object(wo) ? wo : o, "warm_start");
  if (json_is_integer(ws)) warm_start = (int)json_integer_value(ws);
  if (json_is_boolean(ws)) warm_start = json_is_true(ws);
  json_decref(o);
  free(run.options);
  cp_store_task_row row;
  if ((ss = cp_store_load_task(st, run.task_id, &row)) != CP_STORE_OK) {
    return open_fail(r, store_fail(err, st, ss));
  }
  stored_files sf = {NULL, 0, run.task_id};
  cp_store_file *files = NULL;
  if (row.inputs_stored &&
      (ss = cp_store_task_files(st, run.task_id, &files, &sf.n)) != CP_STORE_OK) {
    cp_store_task_row_free(&row);
    return open_fail(r, store_fail(err, st, ss));
  }
  sf.f = files;
  const cp_file_source src = {stored_read, stored_is_dir, &sf};
  cp_error e;
  memset(&e, 0, sizeof e);
  int rc = rebuild_task(&row, row.inputs_stored ? &src : NULL, &r->task, &e);
  cp_store_task_row_free(&row);
  cp_store_files_free(files, sf.n);
  /* Out of memory stays out of memory; anything else is the stored
   * input's fault. */
  if (rc) {
    cp_error_setc(err, e.code == CP_ERR_NOMEM ? CP_ERR_NOMEM : CP_ERR_INPUT, "",
                  "the stored task of plan %lld no longer parses: %s%s%s",
                  (long long)plan_id, e.where, e.where[0] ? ": " : "", e.msg);
    return open_fail(r, e.code == CP_ERR_NOMEM ? CP_REPLAY_NOMEM : CP_REPLAY_BAD_INPUT);
  }
  r->task.velocity_sliding = velocity_sliding;
  if (cp_plan_world_create(&r->task, warm_start, &r->pw, &e)) {
    cp_error_setc(err, e.code == CP_ERR_NOMEM ? CP_ERR_NOMEM : CP_ERR_INPUT, "",
                  "cannot simulate the stored task: %s%s%s", e.where,
                  e.where[0] ? ": " : "", e.msg);
    return open_fail(r, e.code == CP_ERR_NOMEM ? CP_REPLAY_NOMEM : CP_REPLAY_BAD_INPUT);
  }
  r->prob = cp_plan_world_problem(r->pw);
  r->n = r->prob->n;
  if (r->n != run.state_size) {
    cp_error_set(err, "", "plan %lld: stored states have %d numbers, the "
                 "rebuilt task's world %d", (long long)plan_id,
                 run.state_size, r->n);
    return open_fail(r, CP_REPLAY_BAD_INPUT);
  }
  size_t nn = (size_t)r->n_nodes;
  r->states = malloc(nn * (size_t)r->n * sizeof *r->states);
  r->times = malloc(nn * sizeof *r->times);
  r->actions = malloc(nn * sizeof *r->actions);
  r->values = malloc((size_t)(r->task.n_inputs + 1) * sizeof *r->values);
  r->x = malloc((size_t)r->n * sizeof *r->x);
  r->y = malloc((size_t)r->n * sizeof *r->y);
  r->step_state = malloc((size_t)r->n * sizeof *r->step_state);
  if (!r->states || !r->times || !r->actions || !r->values || !r->x ||
      !r->y || !r->step_state) {
    cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
    return open_fail(r, CP_REPLAY_NOMEM);
  }
  for (long k = 0; k < r->n_nodes; ++k) {
    cp_search_node node;
    int nv = 0;
    ss = cp_store_load_node(st, r->run_id, r->ids[k], &node,
                            r->states + (size_t)k * (size_t)r->n, r->n, NULL,
                            0, &nv);
    if (ss != CP_STORE_OK) {
      return open_fail(r, store_fail(err, st, ss));
    }
    r->times[k] = node.time;
    r->actions[k] = node.action;
    if (k > 0 && !cp_task_action_valid(&r->task, node.action)) {
      cp_error_set(err, "", "plan %lld, step %ld (node %ld): action %ld is "
                   "not one of the task's 0..%ld", (long long)plan_id, k,
                   r->ids[k], node.action, r->task.n_actions - 1);
      return open_fail(r, CP_REPLAY_BAD_INPUT);
    }
  }
  if (cp_state_layout_init(&r->layout, &r->task.scene)) {
    cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
    return open_fail(r, CP_REPLAY_NOMEM);
  }
  if (r->layout.n > r->n) { /* goal entries may follow (plan/problem.c) */
    cp_error_set(err, "", "plan %lld: the scene's state layout has %d "
                 "numbers, the world's %d", (long long)plan_id, r->layout.n,
                 r->n);
    return open_fail(r, CP_REPLAY_BAD_INPUT);
  }
  *out = r;
  return CP_REPLAY_OK;
}

const cp_task *cp_replay_task(const cp_replay *r) { return &r->task; }
int64_t cp_replay_plan_id(const cp_replay *r) { return r->plan_id; }
int64_t cp_replay_run_id(const cp_replay *r) { return r->run_id; }
long cp_replay_length(const cp_replay *r) { return r->n_nodes - 1; }

/* The body or joint and component of state entry i. */
static void entry_name(const cp_replay *r, int i, char *buf, size_t size) {
  static const char *const joint_comp[2] = {"position", "velocity"};
  const cp_scene *sc = &r->task.scene;
  cp_state_entry e;
  if (cp_state_entry_of(&r->layout, i, &e))
    snprintf(buf, size, "state entry %d", i);
  else if (!e.is_joint)
    snprintf(buf, size, "body \"%s\" %s", sc->bodies[e.body].name,
             e.component_name);
  else
    snprintf(buf, size, "joint \"%s/%s\" %s", sc->manips[e.manip].name,
             sc->manips[e.manip].joints[e.joint].name,
             joint_comp[e.component]);
}

static void observe(void *ctx, const cp_world *w) {
  cp_replay *r = ctx;
  r->step++;
  if (!r->opt->frame) return;
  cp_world_get_state(w, r->step_state);
  r->fr.step = r->step;
  r->fr.time = cp_world_time(w);
  r->fr.state = r->step_state;
  r->fr.n_contacts = cp_world_contacts(w, &r->fr.contacts);
  r->opt->frame(r->opt->ctx, &r->fr);
}

cp_replay_status cp_replay_run(cp_replay *r, const cp_replay_options *opt,
                               cp_replay_result *res) {
  cp_replay_options d = cp_replay_defaults();
  if (!opt) opt = &d;
  memset(res, 0, sizeof *res);
  res->compared = opt->verify;
  r->opt = opt;
  r->step = 0;
  size_t n = (size_t)r->n;
  memcpy(r->x, r->states, n * sizeof *r->x);
  memset(&r->fr, 0, sizeof r->fr);
  r->fr.n = r->n;
  r->fr.action = -1;
  r->fr.time = r->times[0];
  r->fr.state = r->x;
  if (opt->frame) opt->frame(opt->ctx, &r->fr);

  unsigned char *warm = NULL;
  size_t warm_size = 0;
  cp_replay_status status = CP_REPLAY_OK;
  cp_plan_world_observe(r->pw, observe, r);
  for (long k = 1; k < r->n_nodes; ++k) {
    long a = r->actions[k];
    cp_task_action_values(&r->task, a, r->values);
    r->fr.plan_step = k;
    r->fr.action = a;
    r->fr.values = r->values;
    r->fr.n_values = r->task.n_inputs;
    cp_expansion info;
    memset(&info, 0, sizeof info);
    /* The expansion as the search made it: from the parent's state and time
     * with the parent's warm-start data. */
    int rc = r->prob->expand(r->prob->ctx, r->x, r->times[k - 1], warm,
                             warm_size, a, r->y, &info);
    res->steps += info.steps;
    if (rc != 0 || info.outcome != CP_EXPAND_OK) {
      snprintf(res->message, sizeof res->message,
               "plan step %ld (node %ld, action %ld): the re-simulated action "
               "%s: %.380s", k, r->ids[k], a,
               rc ? "failed" : "was rejected", info.message);
      status = CP_REPLAY_FAILED;
      break;
    }
    free(warm);
    warm = NULL;
    warm_size = 0;
    if (info.warm && info.warm_size) {
      warm = malloc(info.warm_size);
      if (!warm) {
        status = CP_REPLAY_NOMEM;
        snprintf(res->message, sizeof res->message, "out of memory");
        break;
      }
      memcpy(warm, info.warm, info.warm_size);
      warm_size = info.warm_size;
    }
    if (opt->verify) {
      const double *s = r->states + (size_t)k * n;
      for (size_t i = 0; i < n; ++i) {
        double dv = fabs(r->y[i] - s[i]);
        if (isnan(dv)) dv = INFINITY;
        int differs = memcmp(&r->y[i], &s[i], sizeof(double)) != 0;
        if (dv > res->max_deviation) {
          res->max_deviation = dv;
          res->max_plan_step = k;
        }
        int over = opt->tolerance > 0 ? dv > opt->tolerance : differs;
        if (over && !res->first_plan_step) {
          res->first_plan_step = k;
          res->first_entry = (int)i;
          res->first_deviation = dv;
          entry_name(r, (int)i, res->first_where, sizeof res->first_where);
          snprintf(res->message, sizeof res->message,
                   "plan step %ld (node %ld): %s differs from the stored "
                   "state by %.3g (stored %.17g, re-simulated %.17g)",
                   k, r->ids[k], res->first_where, dv, s[i], r->y[i]);
        }
      }
    }
    memcpy(r->x, r->y, n * sizeof *r->x);
  }
  cp_plan_world_observe(r->pw, NULL, NULL);
  free(warm);
  res->duration = r->times[r->n_nodes - 1] - r->times[0];
  if (status == CP_REPLAY_OK && opt->verify) {
    res->verified = res->first_plan_step == 0;
    if (!res->verified) status = CP_REPLAY_MISMATCH;
  }
  return status;
}

/* ---- the explored tree ------------------------------------------------ */

typedef struct tree_ctx {
  int slot, n, cap;
  long *ids, *parents;
  double *pts;
} tree_ctx;

static int tree_node(void *ctx, const cp_search_node *node, const double *x,
                     const void *warm, size_t warm_size) {
  (void)warm;
  (void)warm_size;
  tree_ctx *t = ctx;
  if (t->n == t->cap) {
    int cap = t->cap ? 2 * t->cap : 256;
    long *a = realloc(t->ids, (size_t)cap * sizeof *a);
    if (!a) return 1;
    t->ids = a;
    long *b = realloc(t->parents, (size_t)cap * sizeof *b);
    if (!b) return 1;
    t->parents = b;
    double *p = realloc(t->pts, 3 * (size_t)cap * sizeof *p);
    if (!p) return 1;
    t->pts = p;
    t->cap = cap;
  }
  t->ids[t->n] = node->id;
  t->parents[t->n] = node->parent;
  memcpy(t->pts + 3 * t->n, x + t->slot, 3 * sizeof(double));
  t->n++;
  return 0;
}

/* Index of node id in the sorted ids, or -1. */
static int index_of(const long *ids, int n, long id) {
  int lo = 0, hi = n - 1;
  while (lo <= hi) {
    int mid = lo + (hi - lo) / 2;
    if (ids[mid] == id) return mid;
    if (ids[mid] < id) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

cp_replay_status cp_replay_tree(cp_replay *r, double **points, int **parent,
                                int *n, int **path, int *n_path,
                                cp_error *err) {
  *points = NULL;
  *parent = *path = NULL;
  *n = *n_path = 0;
  tree_ctx t;
  memset(&t, 0, sizeof t);
  t.slot = cp_state_body_at(&r->layout, r->task.goal.body_index);
  if (t.slot < 0) t.slot = 0; /* a fixed goal body: cp_plan_world refuses */
  cp_store_status ss = cp_store_load_nodes(r->st, r->run_id, tree_node, &t);
  cp_replay_status status = CP_REPLAY_OK;
  int *par = NULL, *pth = NULL;
  if (ss != CP_STORE_OK) {
    status = store_fail(err, r->st, ss);
  } else {
    par = malloc((size_t)(t.n + 1) * sizeof *par);
    pth = malloc((size_t)(r->n_nodes + 1) * sizeof *pth);
    if (!par || !pth) {
      cp_error_setc(err, CP_ERR_NOMEM, "", "out of memory");
      status = CP_REPLAY_NOMEM;
    }
  }
  if (status == CP_REPLAY_OK) {
    /* Nodes come in id order, so ids are sorted. */
    for (int i = 0; i < t.n; ++i)
      par[i] = t.parents[i] < 0 ? -1 : index_of(t.ids, t.n, t.parents[i]);
    for (long k = 0; k < r->n_nodes; ++k)
      pth[k] = index_of(t.ids, t.n, r->ids[k]);
    *points = t.pts;
    t.pts = NULL;
    *parent = par;
    *path = pth;
    par = pth = NULL;
    *n = t.n;
    *n_path = (int)r->n_nodes;
  }
  free(par);
  free(pth);
  free(t.ids);
  free(t.parents);
  free(t.pts);
  return status;
}

/* ---- CSV (planner/io/csv.h) --------------------------------------------- */

int cp_replay_csv_header(const cp_replay *r, FILE *f) {
  if (cp_csv_state_header(f, &r->layout, &r->task.scene)) return -1;
  fputs(",action", f);
  for (int i = 0; i < r->task.n_inputs; ++i) {
    fputc(',', f);
    if (cp_csv_fieldf(f, "%s.input", r->task.inputs[i].joint)) return -1;
  }
  fputc('\n', f);
  return 0;
}

void cp_replay_csv_row(const cp_replay *r, const cp_replay_frame *fr,
                       FILE *f) {
  cp_csv_state_row(f, &r->layout, fr->time, fr->state);
  fprintf(f, ",%ld", fr->action);
  for (int i = 0; i < r->task.n_inputs; ++i) {
    if (fr->values) fprintf(f, ",%.17g", fr->values[i]);
    else fputs(",", f);
  }
  fputc('\n', f);
}
