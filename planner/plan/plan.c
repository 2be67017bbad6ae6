#include "planner/plan/plan.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>

cp_plan_options cp_plan_defaults(void) {
  cp_plan_options o;
  memset(&o, 0, sizeof o);
  o.progress_interval = 0.5;
  return o;
}

int cp_plan_velocity_sliding_of(const char *text, int world_of) {
  json_t *o = text ? json_loads(text, 0, NULL) : NULL;
  json_t *w = world_of ? json_object_get(o, "world") : o;
  json_t *v = json_is_object(w) ? json_object_get(w, "velocity_sliding") : NULL;
  const int r = json_is_integer(v) ? json_integer_value(v) != 0
                : json_is_boolean(v) ? json_is_true(v)
                                     : -1;
  json_decref(o);
  return r;
}

const char *cp_plan_status_name(cp_plan_status s) {
  static const char *const names[] = {"solved", "not_found", "limit",
                                      "bad_input", "failed", "interrupted",
                                      "failed_expansions"};
  return (unsigned)s < sizeof names / sizeof *names ? names[s] : "unknown";
}

static cp_plan_status store_fail(cp_store *st, cp_store_status s,
                                 cp_error *err) {
  cp_error_set(err, "", "%s", cp_store_message(st));
  return s == CP_STORE_BAD_FILE || s == CP_STORE_CHANGED ? CP_PLAN_BAD_INPUT
                                                         : CP_PLAN_FAILED;
}

typedef struct adopt_ctx {
  cp_search *s;
  int n;
} adopt_ctx;

static int adopt_one(void *ctx, const cp_search_node *node, const double *x,
                     const void *warm, size_t warm_size) {
  adopt_ctx *a = ctx;
  return cp_search_adopt(a->s, node, x, warm, warm_size);
}

static const char *run_status(cp_plan_status s) {
  switch (s) {
  case CP_PLAN_SOLVED:
  case CP_PLAN_NOT_FOUND:
  case CP_PLAN_LIMIT:
  case CP_PLAN_INTERRUPTED:
  case CP_PLAN_FAILED_EXPANSIONS: return cp_plan_status_name(s);
  default: return "error";
  }
}

static int adopt_witness(void *ctx, long id, const double *point, int m,
                         long rep) {
  return cp_search_adopt_witness(ctx, id, point, m, rep);
}

/* How a run ran its batches, from its options' JSON text: returns the
 * batch its search was created with ("search_batch"; 1 for runs stored
 * before there were batches; a pipelined run's half) and sets *pipeline
 * to whether it says "search_pipeline": true, *fresh to whether it says
 * "search_fresh_actions": true, *revive to whether it says
 * "search_fresh_revive": true. A run without the key (plain batches,
 * batch 1, or stored before complan had pipelined batches; one stored
 * before session 28 or with fresh actions off) resumes plain (repeating
 * actions), whatever the task's default is today; a fresh-actions rrt run
 * without "search_fresh_revive" (session 28's) resumes without revival. */
static int run_search_mode(const char *options, int *pipeline, int *fresh,
                           int *revive) {
  json_t *o = options ? json_loads(options, 0, NULL) : NULL;
  json_t *b = json_object_get(o, "search_batch");
  int batch = json_is_integer(b) && json_integer_value(b) >= 1 &&
                      json_integer_value(b) <= CP_SEARCH_MAX_BATCH
                  ? (int)json_integer_value(b)
                  : 1;
  *pipeline = json_is_true(json_object_get(o, "search_pipeline"));
  *fresh = json_is_true(json_object_get(o, "search_fresh_actions"));
  *revive = json_is_true(json_object_get(o, "search_fresh_revive"));
  json_decref(o);
  return batch;
}

/* A pipelined run's pending batch from the store (cp_store_load_pending). */
static int adopt_pending(void *ctx, long iters, int m, const void *data,
                         size_t size, const cp_rng *rng) {
  cp_search *s = ctx;
  return m != cp_search_embedding_size(s) ||
         cp_search_pending_load(s, data, size, iters, rng);
}

/* A commit that fell due after a batch, written while the next batch is
 * simulated (cp_batch_meanwhile: the workers run the jobs while the calling
 * thread, or rank 0, writes), with the totals and the generator as they
 * were after that batch -- the transaction the loop would have written
 * then, so the committed prefix and the database are the same. When the
 * next iteration simulates no batch of several (a single job, or none),
 * the loop writes it after that iteration, with the search as it is. A
 * pipelined search's pending batch is saved with the generator (the batch
 * drawn after the merged one: the next call draws another). */
typedef struct deferred {
  cp_store *st;
  int64_t run_id;
  const cp_task *task;
  cp_search *s;
  int due;
  long nodes;            /* the search's nodes when it fell due */
  cp_store_progress pr;  /* pointing at stats and rng */
  cp_search_stats stats;
  cp_rng rng;
  unsigned char *pending; /* cp_search_pending_save's (pr points at it) */
  size_t pending_cap;
  cp_store_status ss;    /* a failed commit, for the loop */
} deferred;

static void commit_meanwhile(void *ctx) {
  deferred *d = ctx;
  if (!d->due || d->ss || cp_search_node_count(d->s) != d->nodes) return;
  d->due = 0;
  d->ss = cp_store_write_batch(d->st, d->run_id, d->task, d->s, &d->pr, -1,
                               NULL);
}

cp_plan_status cp_plan_search(cp_store *st, const cp_task *task,
                              const cp_search_problem *p, const double *x0,
                              const cp_plan_options *optp, cp_plan_result *res,
                              cp_error *err) {
  cp_plan_options opt = optp ? *optp : cp_plan_defaults();
  if (opt.progress_interval <= 0) opt.progress_interval = 0.5;
  memset(res, 0, sizeof *res);
  res->plan_id = -1;
  res->goal_node = -1;
  res->best_node = -1;
  res->cost = NAN;
  cp_search_budget budget = {.clock = opt.clock, .clock_ctx = opt.clock_ctx,
                             .cancel = opt.cancel};
  double t_start = cp_search_budget_now(&budget),
         store0 = cp_store_seconds(st);
  int64_t task_id, run_id = -1;
  cp_store_status ss = cp_store_task(st, task, opt.task_path, &task_id);
  if (ss) return res->status = store_fail(st, ss, err);

  cp_search_options so = cp_search_defaults();
  so.method = opt.method ? opt.method : task->method;
  so.weight = task->weight;
  so.goal_bias = task->goal_bias;
  so.candidates = task->candidates;
  so.connect = (int)task->connect;
  so.goal_k = (int)task->goal_k;
  so.drop_rejected = task->drop_rejected;
  so.steer_local = task->steer_local;
  so.steer_log = task->steer_log;
  so.steer_probe = task->steer_probe;
  so.delta_bn = task->delta_bn;
  so.delta_s = task->delta_s;
  so.seed = opt.has_seed ? opt.seed : task->seed;
  so.max_nodes = opt.max_nodes > 0 ? opt.max_nodes : task->max_nodes;
  so.budget = &budget;
  double max_seconds = opt.max_seconds > 0 ? opt.max_seconds : task->max_seconds;
  int batch = opt.batch > 0 ? opt.batch : task->batch;
  /* The task's search.pipeline, else rrt and sst at batch >= 4 pipeline
   * halves of batch / 2 (cp_task_search_mode): so.batch is a half. */
  so.pipeline = cp_task_search_mode(
      task, so.method,
      opt.search_batch > 0 ? opt.search_batch : task->search_batch, &so.batch);
  /* search.fresh_actions true: rrt and sst with grid sampling never
   * repeat a (node, action) pair. */
  so.fresh_actions = cp_task_fresh_actions(task, so.method);

  char msg[256], planner[16];
  cp_search *s = NULL;
  double seconds_before = 0;
  if (opt.resume) {
    ss = cp_store_find_resumable(st, task_id, &run_id);
    if (ss == CP_STORE_OK) {
      cp_store_run run;
      if ((ss = cp_store_load_run(st, run_id, &run)))
        return res->status = store_fail(st, ss, err);
      so.batch = run_search_mode(run.options, &so.pipeline,
                                 &so.fresh_actions, &so.fresh_revive);
      /* The world's options recorded with the run (the search cannot
       * change the world it was given): a run stored before session 22
       * lacks velocity_sliding and simulated with it off. */
      const int vs_run = cp_plan_velocity_sliding_of(run.options, 1),
                vs_now = cp_plan_velocity_sliding_of(opt.world_options, 0);
      const int vs_recorded = vs_run >= 0, vs_on = vs_run == 1;
      free(run.options);
      if (vs_now >= 0 && vs_now != vs_on) {
        cp_error_set(err, "", "run %lld was planned with velocity_sliding %s%s; "
                     "this complan simulates the task with it %s, so the run "
                     "cannot be resumed (replay still verifies it); plan it again",
                     (long long)run_id, vs_on ? "on" : "off",
                     vs_recorded ? "" : " (a run stored before complan recorded "
                     "it, session 22)", vs_on ? "off" : "on");
        return res->status = CP_PLAN_BAD_INPUT;
      }
      if (run.state_size != p->n) {
        cp_error_set(err, "", "run %lld stores states of %d numbers; this "
                     "task's have %d", (long long)run_id, run.state_size, p->n);
        return res->status = CP_PLAN_BAD_INPUT;
      }
      /* The same run: its planner and seed, whatever the flags say. */
      snprintf(planner, sizeof planner, "%s", run.planner);
      so.method = planner;
      so.seed = run.seed;
      s = cp_search_create(p, &so, x0, 1, msg, sizeof msg);
      if (!s) {
        cp_error_set(err, "", "%s", msg);
        return res->status = CP_PLAN_BAD_INPUT;
      }
      adopt_ctx ac = {s, 0};
      ss = cp_store_load_nodes(st, run_id, adopt_one, &ac);
      if (!ss) ss = cp_store_load_witnesses(st, run_id, adopt_witness, s);
      int resumed = !ss && !cp_search_resume(s, run.has_rng ? &run.rng : NULL,
                                             &run.stats);
      if (resumed && so.pipeline) { /* the batch drawn at the last commit */
        ss = cp_store_load_pending(st, run_id, adopt_pending, s);
        if (ss == CP_STORE_NOT_FOUND) {
          cp_error_set(err, "", "run %lld was planned with search.pipeline "
                       "by a complan that did not store its pending batch "
                       "(database schema version 3 or older), so it cannot "
                       "be resumed; plan it again", (long long)run_id);
          cp_search_destroy(s);
          return res->status = CP_PLAN_BAD_INPUT;
        }
      }
      if (ss || !resumed) {
        if (ss == CP_STORE_BAD_FILE && resumed)
          cp_error_set(err, "", "%s: %s", cp_store_message(st),
                       cp_search_message(s));
        else if (ss) store_fail(st, ss, err);
        else cp_error_set(err, "", "run %lld: %s", (long long)run_id,
                          cp_search_message(s));
        cp_search_destroy(s);
        return res->status = ss == CP_STORE_OK || ss == CP_STORE_BAD_FILE
                                 ? CP_PLAN_BAD_INPUT
                                 : CP_PLAN_FAILED;
      }
      seconds_before = run.seconds;
      res->resumed = 1;
      if ((ss = cp_store_run_resumed(st, run_id))) {
        cp_search_destroy(s);
        return res->status = store_fail(st, ss, err);
      }
    } else if (ss != CP_STORE_NOT_FOUND ||
               (ss = cp_store_resume_check(st, task, opt.task_path, task_id))) {
      return res->status = store_fail(st, ss, err);
    }
  }
  if (!s) {
    s = cp_search_create(p, &so, x0, 0, msg, sizeof msg);
    if (!s) {
      cp_error_set(err, "search.method", "%s", msg);
      return res->status = CP_PLAN_BAD_INPUT;
    }
    /* goal_k, the pipeline, drop_rejected and fresh actions (as the search
     * has them: astar has none; rrt's with "search_fresh_revive", its
     * revival of unkept candidates, rrt.c): stored only when on (a
     * plain batched run has no "search_pipeline", as before session 26,
     * so that an older complan resumes it as it was planned). A pipelined
     * run's "search_batch" is its half (so.batch), whether the task asked
     * for the pipeline or had it by default: resumed by this complan or
     * an older one (which reads the two keys the same way), it runs the
     * same halves. */
    char options[2048], goal_k[32] = "", extra[192];
    if (so.goal_k > 1)
      snprintf(goal_k, sizeof goal_k, ", \"goal_k\": %d", so.goal_k);
    snprintf(extra, sizeof extra, "%s%s%s%s%s", goal_k,
             so.pipeline ? ", \"search_pipeline\": true" : "",
             so.drop_rejected ? ", \"drop_rejected\": true" : "",
             so.fresh_actions && strcmp(cp_search_method(s), "astar")
                 ? ", \"search_fresh_actions\": true" : "",
             so.fresh_actions && so.fresh_revive &&
                     !strcmp(cp_search_method(s), "rrt")
                 ? ", \"search_fresh_revive\": true" : "");
    const int n_opt = snprintf(options, sizeof options,
                 "{\"method\": \"%s\", \"weight\": %.17g, \"goal_bias\": %.17g, "
                 "\"candidates\": %d, \"connect\": %d, \"steer\": \"%s\", "
                 "\"steer_rotation\": \"%s\", \"steer_probe\": %.17g, "
                 "\"delta_bn\": %.17g, \"delta_s\": %.17g, "
                 "\"max_nodes\": %ld, \"max_seconds\": %.17g, \"batch\": %d, "
                 "\"search_batch\": %d%s, \"world\": %s}",
                 cp_search_method(s), so.weight, so.goal_bias, so.candidates,
                 so.connect, so.steer_local ? "local" : "sample",
                 so.steer_log ? "log" : "quaternion", so.steer_probe,
                 so.delta_bn, so.delta_s, so.max_nodes, max_seconds, batch,
                 so.batch, extra,
                 opt.world_options ? opt.world_options : "{}");
    if (n_opt < 0 || (size_t)n_opt >= sizeof options) {
      cp_search_destroy(s);
      cp_error_set(err, "", "the run's options (%d characters with the world's) do not fit in %zu",
                   n_opt, sizeof options);
      return res->status = CP_PLAN_BAD_INPUT;
    }
    /* The run with its start node: resumable from the first commit on. */
    if ((ss = cp_store_run_start(st, task_id, options, so.seed, task, s,
                                 &run_id))) {
      cp_search_destroy(s);
      return res->status = store_fail(st, ss, err);
    }
  }
  snprintf(res->planner, sizeof res->planner, "%s", cp_search_method(s));
  res->run_id = run_id;
  if (opt.started) opt.started(opt.started_ctx, run_id);

  /* The loop: iterate, commit every `batch` expansions; the budget (the
   * time limit, the cancel flag) is polled by the search after every
   * action and here after every iteration. */
  budget.has_deadline = 1;
  budget.deadline = t_start + (max_seconds - seconds_before);
  cp_search_status status = CP_SEARCH_RUNNING;
  long last_flush = cp_search_get_stats(s)->expansions;
  double t_loop = t_start, next_progress = t_loop + opt.progress_interval;
  cp_store_progress pr = {.status = "running", .seconds = seconds_before};
  deferred d = {.st = st, .run_id = run_id, .task = task, .s = s};
  const int overlap = p->expand_batch && so.batch > 1;
  if (overlap) cp_search_set_meanwhile(s, commit_meanwhile, &d);
  while (status == CP_SEARCH_RUNNING) {
    status = cp_search_iterate(s);
    if (d.due && !d.ss) { /* no batch of several ran: now, as it is */
      d.due = 0;
      d.ss = cp_store_write_batch(st, run_id, task, s, &pr, -1, NULL);
    }
    if ((ss = d.ss)) break;
    if (status == CP_SEARCH_RUNNING && cp_search_budget_spent(&budget))
      status = CP_SEARCH_STOPPED;
    const cp_search_stats *stats = cp_search_get_stats(s);
    double t = cp_search_budget_now(&budget);
    if (status == CP_SEARCH_RUNNING && stats->expansions - last_flush >= batch) {
      pr.seconds = seconds_before + (t - t_start);
      if (overlap) {
        d.due = 1;
        d.nodes = cp_search_node_count(s);
        d.stats = *stats;
        d.rng = *cp_search_rng(s);
        d.pr = pr;
        d.pr.stats = &d.stats;
        d.pr.rng = &d.rng;
        if (cp_search_pipelined(s)) {
          const cp_rng *undone; /* none while the search runs */
          d.pr.pending_iters = cp_search_pending_save(
              s, &d.pending, &d.pending_cap, &d.pr.pending_size, &undone);
          if (d.pr.pending_iters < 0) {
            free(d.pending);
            cp_search_destroy(s);
            cp_error_set(err, "", "out of memory");
            return res->status = CP_PLAN_FAILED;
          }
          d.pr.pending = d.pending ? d.pending : (const void *)"";
        }
      } else if ((ss = cp_store_write_batch(st, run_id, task, s, &pr, -1,
                                            NULL))) {
        break;
      }
      last_flush = stats->expansions;
    }
    if (opt.progress && t >= next_progress) {
      long b = cp_search_best(s);
      cp_plan_progress pg = {
          cp_search_node_count(s), stats->expansions,
          (double)stats->expansions / (t - t_loop > 0 ? t - t_loop : 1e-9),
          cp_search_best_distance(s),
          b >= 0 ? cp_search_node_get(s, b)->cost : NAN, t - t_start};
      opt.progress(opt.progress_ctx, &pg);
      next_progress = t + opt.progress_interval;
    }
  }
  free(d.pending); /* no commit is deferred past the loop */
  d.pending = NULL;
  if (ss) {
    cp_plan_status r = store_fail(st, ss, err);
    cp_search_destroy(s);
    return res->status = r;
  }
  long best = cp_search_best(s);
  long failed = cp_search_failures(s, res->failed_by);
  cp_plan_status result;
  switch (status) {
  case CP_SEARCH_SOLVED: result = CP_PLAN_SOLVED; break;
  case CP_SEARCH_EXHAUSTED:
    /* Fresh actions (rrt, sst): every node it could grow from has tried
     * all its actions. Not a proof (docs/planner.md, "Fresh actions"): a
     * limit, and sst's plan so far counts, as at a node limit. */
    if (cp_search_fresh_actions(s)) {
      res->actions_exhausted = 1;
      result = best >= 0 ? CP_PLAN_SOLVED : CP_PLAN_LIMIT;
    } else {
      result = failed ? CP_PLAN_FAILED_EXPANSIONS : CP_PLAN_NOT_FOUND;
    }
    break;
  case CP_SEARCH_FAILED: result = CP_PLAN_FAILED; break;
  default: /* node or time limit: an anytime planner's plan counts */
    result = best >= 0 ? CP_PLAN_SOLVED : CP_PLAN_LIMIT;
    break;
  }
  /* Cancelled (not by the time limit): resumable, no plan stored yet. */
  if (status == CP_SEARCH_STOPPED && opt.cancel && cp_search_cancelled(opt.cancel))
    result = CP_PLAN_INTERRUPTED;
  res->failed = failed;
  if (result != CP_PLAN_SOLVED) best = -1;
  /* Shortcutting (docs/planner.md): the plan only gets shorter, and only
   * to another goal node; the new nodes go out with the last batch. */
  if (best >= 0 && task->shortcut > 0 && status != CP_SEARCH_STOPPED) {
    best = cp_search_shortcut(s, best, task->shortcut);
    if (best < 0) {
      cp_error_set(err, "", "shortcutting failed: %s", cp_search_message(s));
      cp_search_destroy(s);
      return res->status = CP_PLAN_FAILED;
    }
  }
  pr.status = run_status(result);
  pr.seconds = seconds_before + (cp_search_budget_now(&budget) - t_start);
  if ((ss = cp_store_write_batch(st, run_id, task, s, &pr, best,
                                 &res->plan_id))) {
    cp_plan_status r = store_fail(st, ss, err);
    cp_search_destroy(s);
    return res->status = r;
  }
  if (status == CP_SEARCH_FAILED)
    cp_error_set(err, "", "search failed: %s", cp_search_message(s));
  res->status = result;
  res->nodes = cp_search_node_count(s);
  res->stats = *cp_search_get_stats(s);
  res->session_seconds = cp_search_budget_now(&budget) - t_start;
  res->seconds = seconds_before + res->session_seconds;
  res->store_seconds = cp_store_seconds(st) - store0;
  res->best_distance = cp_search_best_distance(s);
  res->best_node = cp_search_nearest(s);
  if (best >= 0) {
    const cp_search_node *g = cp_search_node_get(s, best);
    res->goal_node = best;
    res->cost = g->cost;
    res->length = g->depth;
  }
  cp_search_destroy(s);
  return result;
}
