/* Batch jobs as messages (planner/plan/wire.h, the MPI workers' format):
 * a job and an outcome survive encode and decode bit for bit (odd doubles,
 * warm-start bytes, message); a real expansion run on a second world from
 * the decoded job gives back, through the outcome message, exactly what
 * running it in place gives (twice, the second one warm from the first);
 * every truncation, a wrong tag, a wrong state size, trailing bytes and
 * impossible codes are input errors. The benchmark's run messages and
 * the store export/import they carry are checked at the end. */
#include <criterion/criterion.h>
#include <math.h>
#include <sqlite3.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planner/plan/plan.h"
#include "planner/plan/wire.h"
#include "synth.h"

static void same_info(const cp_expansion *a, const cp_expansion *b) {
  cr_expect_eq(a->outcome, b->outcome);
  cr_expect_eq(a->steps, b->steps);
  cr_expect_eq(a->lcp_solves, b->lcp_solves);
  cr_expect_eq(a->pivots, b->pivots);
  cr_expect_eq(a->fallbacks, b->fallbacks);
  cr_expect_eq(a->warm_steps, b->warm_steps);
  cr_expect_eq(a->lcp_reused, b->lcp_reused);
  cr_expect_str_eq(a->message, b->message);
  cr_assert_eq(a->warm_size, b->warm_size);
  cr_expect_eq(a->warm != NULL, b->warm != NULL);
  if (a->warm_size)
    cr_expect_eq(memcmp(a->warm, b->warm, a->warm_size), 0);
}

Test(wire, job_round_trip) {
  double x[4] = {-0.0, 1e-310, -3.25, 1.0 / 3.0};
  unsigned char warm[5] = {0, 255, 7, 0, 9};
  cp_expand_job j = {.x = x, .t = 0.125, .warm = warm, .warm_size = 5,
                     .a = 123456789012L};
  cp_wire_buf b = {0};
  cp_wire_slot s = {0};
  cp_error err;
  cr_assert_eq(cp_wire_job_encode(&j, 4, 2.5, &b, &err), 0);
  cr_expect_eq(b.len, 8 + 8 + 8 + 8 + 8 + 4 * 8 + 5);
  cr_assert_eq(cp_wire_job_decode(b.p, b.len, 4, &s, &err), 0, "%s",
               err.msg);
  cr_expect_eq(memcmp(s.job.x, x, sizeof x), 0);
  cr_expect(signbit(s.job.x[0]));
  cr_expect_eq(s.job.t, 0.125);
  cr_expect_eq(s.left, 2.5);
  cr_expect_eq(s.job.a, 123456789012L);
  cr_assert_eq(s.job.warm_size, 5);
  cr_expect_eq(memcmp(s.job.warm, warm, 5), 0);
  cr_expect_eq(s.job.y, s.y);
  /* No warm start: NULL again, and the slot is reused. */
  j.warm = NULL;
  j.t = 2;
  cr_assert_eq(cp_wire_job_encode(&j, 4, 2.5, &b, &err), 0);
  cr_assert_eq(cp_wire_job_decode(b.p, b.len, 4, &s, &err), 0);
  cr_expect_null(s.job.warm);
  cr_expect_eq(s.job.warm_size, 0);
  cr_expect_eq(s.job.t, 2);
  cr_expect_eq(s.left, 2.5);
  /* No time limit travels as infinity. */
  cr_assert_eq(cp_wire_job_encode(&j, 4, INFINITY, &b, &err), 0);
  cr_assert_eq(cp_wire_job_decode(b.p, b.len, 4, &s, &err), 0);
  cr_expect(isinf(s.left) && s.left > 0);
  /* NaN seconds left are refused (bytes 16..23). */
  double nan_left = NAN;
  memcpy(b.p + 16, &nan_left, sizeof nan_left);
  cr_expect_eq(cp_wire_job_decode(b.p, b.len, 4, &s, &err), -1);
  cr_expect(strstr(err.msg, "seconds left"), "%s", err.msg);
  cp_wire_slot_free(&s);
  cp_wire_buf_free(&b);
}

Test(wire, outcome_round_trip) {
  double y[3] = {1.5, -2.0, 1e300}, got[3] = {0};
  char warm[300];
  for (int k = 0; k < 300; ++k) warm[k] = (char)(k * 7);
  cp_expand_job j = {.y = y, .rc = 0};
  j.info = (cp_expansion){.outcome = CP_EXPAND_PENETRATION, .steps = 17,
                          .lcp_solves = 20, .pivots = 93, .fallbacks = 2,
                          .warm_steps = 15, .lcp_reused = 3,
                          .warm = warm, .warm_size = sizeof warm};
  snprintf(j.info.message, sizeof j.info.message,
           "box overlaps the table by %g m", 0.003);
  cp_wire_buf b = {0};
  cp_error err;
  cr_assert_eq(cp_wire_outcome_encode(&j, 3, &b, &err), 0);
  cp_expand_job r = {.y = got};
  cr_assert_eq(cp_wire_outcome_decode(b.p, b.len, 3, &r, &err), 0, "%s",
               err.msg);
  cr_expect_eq(memcmp(got, y, sizeof y), 0);
  cr_expect_eq(r.rc, 0);
  same_info(&j.info, &r.info);
  cr_expect_eq(r.info.warm, r.keep);
  /* A failed job (rc 1: stopped by the budget) sends no warm start. */
  j.rc = 1;
  cr_assert_eq(cp_wire_outcome_encode(&j, 3, &b, &err), 0);
  cr_assert_eq(cp_wire_outcome_decode(b.p, b.len, 3, &r, &err), 0);
  cr_expect_eq(r.rc, 1);
  cr_expect_null(r.info.warm);
  cr_expect_eq(r.info.warm_size, 0);
  free(r.keep);
  cp_wire_buf_free(&b);
}

/* Runs job j in place on `own`, and through the messages on `other`;
 * asserts the two give the same; leaves the in-place outcome in j. */
static void through_wire(cp_plan_world *own, cp_plan_world *other,
                         cp_expand_job *j, int n) {
  const cp_search_problem *p = cp_plan_world_problem(own);
  const cp_search_problem *q = cp_plan_world_problem(other);
  cp_wire_buf b = {0};
  cp_wire_slot s = {0};
  cp_error err;
  cr_assert_eq(cp_wire_job_encode(j, n, INFINITY, &b, &err), 0);
  cr_assert_eq(cp_wire_job_decode(b.p, b.len, n, &s, &err), 0, "%s",
               err.msg);
  cp_wire_job_run(q, &s);
  cr_assert_eq(cp_wire_outcome_encode(&s.job, n, &b, &err), 0);
  double *y = calloc((size_t)n, sizeof *y);
  cp_expand_job r = {.y = y};
  cr_assert_eq(cp_wire_outcome_decode(b.p, b.len, n, &r, &err), 0, "%s",
               err.msg);
  cp_expand_job_run(p->expand, p->ctx, j);
  cr_assert_eq(j->rc, 0, "%s", j->info.message);
  cr_expect_eq(r.rc, j->rc);
  cr_expect_eq(memcmp(r.y, j->y, (size_t)n * sizeof *y), 0);
  same_info(&j->info, &r.info);
  free(r.keep);
  free(y);
  cp_wire_slot_free(&s);
  cp_wire_buf_free(&b);
}

Test(wire, expansion_through_messages) {
  cp_task task;
  synth_load_task(&task);
  cp_plan_world *own, *other;
  cp_error err;
  cr_assert_eq(cp_plan_world_create(&task, 1, &own, &err), 0, "%s", err.msg);
  cr_assert_eq(cp_plan_world_create(&task, 1, &other, &err), 0, "%s",
               err.msg);
  int n = cp_plan_world_problem(own)->n;
  double *y1 = calloc((size_t)n, sizeof *y1), *y2 = calloc((size_t)n, 8);
  cp_expand_job j1 = {.x = cp_plan_world_start(own), .t = 0, .a = 1,
                      .y = y1};
  through_wire(own, other, &j1, n);
  cr_expect_gt(j1.info.steps, 0);
  cr_expect_gt(j1.info.warm_size, 0, "the first expansion stores a warm "
                                     "start for the second");
  cp_expand_job j2 = {.x = y1, .t = cp_plan_world_problem(own)->duration,
                      .warm = j1.info.warm, .warm_size = j1.info.warm_size,
                      .a = 2, .y = y2};
  through_wire(own, other, &j2, n);
  cr_expect_gt(j2.info.warm_steps, 0);
  free(j1.keep);
  free(j2.keep);
  free(y1);
  free(y2);
  cp_plan_world_destroy(own);
  cp_plan_world_destroy(other);
  cp_task_free(&task);
}

Test(wire, malformed_messages) {
  double x[2] = {1, 2}, y[2] = {3, 4};
  unsigned char warm[3] = {1, 2, 3};
  cp_expand_job j = {.x = x, .t = 1, .warm = warm, .warm_size = 3, .a = 2,
                     .y = y};
  snprintf(j.info.message, sizeof j.info.message, "why");
  j.info.warm = warm;
  j.info.warm_size = 3;
  cp_wire_buf job = {0}, out = {0};
  cp_wire_slot s = {0};
  cp_expand_job r = {.y = y};
  cp_error err;
  cr_assert_eq(cp_wire_job_encode(&j, 2, 1.0, &job, &err), 0);
  cr_assert_eq(cp_wire_outcome_encode(&j, 2, &out, &err), 0);
  for (size_t len = 0; len < job.len; ++len) {
    cr_assert_eq(cp_wire_job_decode(job.p, len, 2, &s, &err), -1);
    cr_expect_eq(err.code, CP_ERR_INPUT);
    cr_expect_str_eq(err.where, "job");
  }
  for (size_t len = 0; len < out.len; ++len) {
    cr_assert_eq(cp_wire_outcome_decode(out.p, len, 2, &r, &err), -1);
    cr_expect_eq(err.code, CP_ERR_INPUT);
  }
  /* Another state size, kind of message, trailing bytes. */
  cr_expect_eq(cp_wire_job_decode(job.p, job.len, 3, &s, &err), -1);
  cr_expect(strstr(err.msg, "state of 3 numbers, got 2"), "%s", err.msg);
  cr_expect_eq(cp_wire_job_decode(out.p, out.len, 2, &s, &err), -1);
  cr_expect(strstr(err.msg, "expected a job message"), "%s", err.msg);
  cr_expect_eq(cp_wire_outcome_decode(job.p, job.len, 2, &r, &err), -1);
  unsigned char *longer = malloc(job.len + 1);
  memcpy(longer, job.p, job.len);
  longer[job.len] = 0;
  cr_expect_eq(cp_wire_job_decode(longer, job.len + 1, 2, &s, &err), -1);
  cr_expect(strstr(err.msg, "1 bytes left over"), "%s", err.msg);
  free(longer);
  /* An outcome code out of range (byte 12: the outcome after tag, n, rc). */
  int32_t bad = CP_EXPAND_COUNT;
  memcpy(out.p + 12, &bad, sizeof bad);
  cr_expect_eq(cp_wire_outcome_decode(out.p, out.len, 2, &r, &err), -1);
  cr_expect(strstr(err.msg, "outcome below"), "%s", err.msg);
  /* A warm size beyond the message (job: bytes 32..39). */
  uint64_t huge = (uint64_t)1 << 60;
  memcpy(job.p + 32, &huge, sizeof huge);
  cr_expect_eq(cp_wire_job_decode(job.p, job.len, 2, &s, &err), -1);
  cr_expect(strstr(err.msg, "warm-start data"), "%s", err.msg);
  free(r.keep);
  cp_wire_slot_free(&s);
  cp_wire_buf_free(&job);
  cp_wire_buf_free(&out);
}

/* The time limit travels with the job: a job sent with no seconds left
 * stops at the worker's first poll inside the action (step
 * CP_PLAN_BUDGET_STEPS of the push task's 20) with rc 1 and no
 * outcome, as the search's own expansion does when its budget is spent;
 * the same job with time left runs to the end; and the worker's world has
 * no deadline left over for its next job. */
Test(wire, a_job_keeps_the_time_limit_of_its_search) {
  char *file = synth_push_task(4);
  cp_task task;
  cp_error err;
  cr_assert_eq(cp_task_load(file, &task, &err), 0, "%s", err.msg);
  cr_assert_gt(task.steps, CP_PLAN_BUDGET_STEPS, "a long enough action");
  cp_plan_world *pw;
  cr_assert_eq(cp_plan_world_create(&task, 1, &pw, &err), 0, "%s", err.msg);
  const cp_search_problem *p = cp_plan_world_problem(pw);
  int n = p->n;
  cp_expand_job j = {.x = cp_plan_world_start(pw), .t = 0, .a = 1};
  cp_wire_buf b = {0};
  cp_wire_slot s = {0};
  const double left[3] = {0, -1, 1e9}, expect_rc[3] = {1, 1, 0};
  for (int k = 0; k < 3; ++k) {
    cr_assert_eq(cp_wire_job_encode(&j, n, left[k], &b, &err), 0);
    cr_assert_eq(cp_wire_job_decode(b.p, b.len, n, &s, &err), 0, "%s",
                 err.msg);
    cp_wire_job_run(p, &s);
    cr_expect_eq(s.job.rc, expect_rc[k], "left %g: rc %d", left[k],
                 s.job.rc);
    if (k < 2)
      cr_expect_eq(s.job.info.steps, CP_PLAN_BUDGET_STEPS, "left %g",
                   left[k]);
    else
      cr_expect_eq(s.job.info.steps, task.steps);
  }
  /* Then a job with no limit: the previous deadline is gone. */
  cr_assert_eq(cp_wire_job_encode(&j, n, 0, &b, &err), 0);
  cr_assert_eq(cp_wire_job_decode(b.p, b.len, n, &s, &err), 0);
  cp_wire_job_run(p, &s);
  cr_assert_eq(s.job.rc, 1);
  cr_assert_eq(cp_wire_job_encode(&j, n, INFINITY, &b, &err), 0);
  cr_assert_eq(cp_wire_job_decode(b.p, b.len, n, &s, &err), 0);
  cp_wire_job_run(p, &s);
  cr_expect_eq(s.job.rc, 0);
  cr_expect_eq(s.job.info.steps, task.steps);
  cp_wire_slot_free(&s);
  cp_wire_buf_free(&b);
  cp_plan_world_destroy(pw);
  cp_task_free(&task);
  remove(file);
  free(file);
}

/* A benchmark's run (plan --benchmark --mpi): the request and the answer
 * survive encode and decode (the result struct, the error, the progress
 * reports, the store's bytes); a store exported from one store file imports
 * into another as the same rows under the next free run id; truncations,
 * a wrong tag, a result of another size and trailing bytes are input
 * errors. */
Test(wire, benchmark_run_messages) {
  cp_wire_run run = {.k = 5, .seed = 0xfedcba9876543210ull,
                     .max_seconds = 2.5, .max_nodes = 1234567};
  snprintf(run.method, sizeof run.method, "sst");
  cp_wire_buf b = {0};
  cp_error err;
  cr_assert_eq(cp_wire_run_encode(&run, &b, &err), 0);
  cp_wire_run back;
  cr_assert_eq(cp_wire_run_decode(b.p, b.len, &back, &err), 0, "%s", err.msg);
  cr_expect_eq(back.k, 5);
  cr_expect_eq(back.seed, run.seed);
  cr_expect_eq(back.max_seconds, 2.5);
  cr_expect_eq(back.max_nodes, 1234567);
  cr_expect_str_eq(back.method, "sst");
  for (size_t cut = 0; cut < b.len; ++cut)
    cr_expect_eq(cp_wire_run_decode(b.p, cut, &back, &err), -1, "cut %zu",
                 cut);
  cr_expect_eq(cp_wire_run_decode(b.p, b.len + 1, &back, &err), -1);

  cp_plan_progress samples[2] = {{1, 2, 3.5, 0.25, NAN, 0.5},
                                 {10, 20, 30.5, 0.125, 1.5, 1.0}};
  unsigned char store[7] = {1, 2, 3, 0, 4, 5, 6};
  cp_wire_run_done d = {.k = 3, .status = CP_PLAN_LIMIT, .samples = samples,
                        .n_samples = 2, .store = store, .store_len = 7};
  d.res.run_id = 42;
  d.res.nodes = 77;
  d.res.cost = -1.25;
  snprintf(d.res.planner, sizeof d.res.planner, "astar");
  cp_error_setc(&d.err, CP_ERR_IO, "where", "what went wrong");
  cr_assert_eq(cp_wire_run_done_encode(&d, &b, &err), 0);
  cp_wire_run_done e;
  cp_plan_progress *sv = NULL;
  int cap = 0;
  cr_assert_eq(cp_wire_run_done_decode(b.p, b.len, &e, &sv, &cap, &err), 0,
               "%s", err.msg);
  cr_expect_eq(e.k, 3);
  cr_expect_eq(e.status, CP_PLAN_LIMIT);
  cr_expect_eq(memcmp(&e.res, &d.res, sizeof e.res), 0);
  cr_expect_eq(e.err.code, CP_ERR_IO);
  cr_expect_str_eq(e.err.where, "where");
  cr_expect_str_eq(e.err.msg, "what went wrong");
  cr_assert_eq(e.n_samples, 2);
  cr_expect_eq(memcmp(e.samples, samples, sizeof samples), 0);
  cr_assert_eq(e.store_len, 7);
  cr_expect_eq(memcmp(e.store, store, 7), 0);
  for (size_t cut = 0; cut < b.len - 7; ++cut)
    cr_expect_eq(cp_wire_run_done_decode(b.p, cut, &e, &sv, &cap, &err), -1,
                 "cut %zu", cut);
  cr_expect_eq(cp_wire_run_done_decode(b.p, b.len + 1, &e, &sv, &cap, &err),
               -1);
  cr_expect(strstr(err.msg, "expected a store of 7 bytes"), "%s", err.msg);
  uint32_t size = 0; /* the result's size, after the tag, k and status */
  memcpy(&size, b.p + 12, 4);
  cr_assert_eq(size, sizeof d.res);
  size += 8;
  memcpy(b.p + 12, &size, 4);
  cr_expect_eq(cp_wire_run_done_decode(b.p, b.len, &e, &sv, &cap, &err), -1);
  cr_expect(strstr(err.msg, "another build"), "%s", err.msg);
  /* A request is not an answer. */
  cr_assert_eq(cp_wire_run_encode(&run, &b, &err), 0);
  cr_expect_eq(cp_wire_run_done_decode(b.p, b.len, &e, &sv, &cap, &err), -1);
  cr_expect(strstr(err.msg, "expected a run result message"), "%s", err.msg);
  free(sv);
  cp_wire_buf_free(&b);
}

/* cp_store_export + cp_store_import_run: a real search into a store in
 * memory, imported twice into a file store, gives two runs (ids 1 and 2)
 * with the search's node rows and plan; a store of another schema version
 * is refused. */
Test(wire, a_run_imports_from_an_exported_store) {
  char *file = synth_push_task(1);
  cp_task task;
  cp_error e;
  cr_assert_eq(cp_task_load(file, &task, &e), 0, "%s", e.msg);
  task.max_nodes = 200;
  cp_store *mem, *st;
  char msg[512];
  cr_assert_eq(cp_store_open(":memory:", 0, &mem, msg, sizeof msg), 0, "%s",
               msg);
  cp_plan_result r;
  cp_plan_options o = cp_plan_defaults();
  o.method = "sst";
  cr_assert_eq(cp_plan_task(mem, &task, &o, &r, &e), CP_PLAN_SOLVED, "%s",
               e.msg);
  void *bytes;
  size_t len;
  cr_assert_eq(cp_store_export(mem, &bytes, &len), CP_STORE_OK);
  char *path = synth_temp_db();
  cr_assert_eq(cp_store_open(path, 0, &st, msg, sizeof msg), 0, "%s", msg);
  int64_t task_id, run_id, plan_id;
  cr_assert_eq(cp_store_task(st, &task, file, &task_id), CP_STORE_OK);
  for (int64_t want = 1; want <= 2; ++want) {
    cr_assert_eq(cp_store_import_run(st, bytes, len, r.run_id, task_id,
                                     &run_id, &plan_id),
                 CP_STORE_OK, "%s", cp_store_message(st));
    cr_expect_eq(run_id, want);
    cr_expect_eq(plan_id, want);
  }
  /* Another schema version: refused, nothing written. */
  unsigned char *copy = malloc(len);
  memcpy(copy, bytes, len);
  copy[63] ^= 1; /* the header's user_version (big-endian, bytes 60-63) */
  cr_expect_eq(cp_store_import_run(st, copy, len, r.run_id, task_id, &run_id,
                                   &plan_id),
               CP_STORE_BAD_FILE);
  cr_expect(strstr(cp_store_message(st), "schema version"), "%s",
            cp_store_message(st));
  free(copy);
  free(bytes);
  cp_store_close(st);
  sqlite3 *a = synth_open_db(path);
  cr_expect_eq(synth_query_int(a, "SELECT count(*) FROM searches"), 2);
  char *mem_path = synth_temp_db(); /* the in-memory run, as a file */
  cp_store *f;
  cr_assert_eq(cp_store_open(mem_path, 0, &f, msg, sizeof msg), 0);
  cr_assert_eq(cp_plan_task(f, &task, &o, &r, &e), CP_PLAN_SOLVED);
  cp_store_close(f);
  sqlite3 *m = synth_open_db(mem_path);
  for (int run = 1; run <= 2; ++run)
    cr_assert_gt(synth_assert_same_run(m, 1, a, run, "imported"), 10);
  sqlite3_close(m);
  sqlite3_close(a);
  cp_store_close(mem);
  synth_remove_db(path);
  synth_remove_db(mem_path);
  cp_task_free(&task);
  remove(file);
  free(file);
}

/* A pipelined run (sst, batch 8: halves of 4) that ended at its node limit
 * keeps, in pending_batches, the batch drawn and not merged; the shrunk
 * export of a benchmark worker (cp_store_export_runs) and the import must
 * carry it, or `plan --resume` refuses the imported run. The imported run
 * has the row of a run planned straight into a file store, and resumes
 * with a larger limit into that run's resumed nodes and plans. */
Test(wire, an_imported_pipelined_run_keeps_its_pending_batch) {
  char *file = synth_push_task_with(8, NULL);
  cp_task task;
  cp_error e;
  cr_assert_eq(cp_task_load(file, &task, &e), 0, "%s", e.msg);
  task.max_nodes = 20; /* (seed 4 solves at 34 nodes) */
  char msg[512];
  cp_store *mem;
  cr_assert_eq(cp_store_open(":memory:", 0, &mem, msg, sizeof msg), 0, "%s",
               msg);
  cp_plan_options o = cp_plan_defaults();
  o.method = "sst";
  o.has_seed = 1;
  o.seed = 4;
  cp_plan_result r;
  cr_assert_eq(cp_plan_task(mem, &task, &o, &r, &e), CP_PLAN_LIMIT, "%s",
               e.msg);
  void *bytes;
  size_t len;
  cr_assert_eq(cp_store_export_runs(mem, &bytes, &len), CP_STORE_OK, "%s",
               cp_store_message(mem));
  cp_store_close(mem);
  char *path = synth_temp_db(), *ref_path = synth_temp_db();
  cp_store *st = synth_open_store(path), *ref = synth_open_store(ref_path);
  int64_t task_id, run_id, plan_id;
  cr_assert_eq(cp_store_task(st, &task, file, &task_id), CP_STORE_OK);
  cr_assert_eq(cp_store_import_run(st, bytes, len, r.run_id, task_id,
                                   &run_id, &plan_id),
               CP_STORE_OK, "%s", cp_store_message(st));
  free(bytes);
  cr_assert_eq(cp_plan_task(ref, &task, &o, &r, &e), CP_PLAN_LIMIT, "%s",
               e.msg);
  const char *q = "SELECT search_id, iterations, embedding, hex(data),"
                  " hex(rng) FROM pending_batches";
  sqlite3 *a = synth_open_db(path), *b = synth_open_db(ref_path);
  char *got = synth_rows_text(a, q), *want = synth_rows_text(b, q);
  cr_expect(want[0] != 0, "the planned run has no pending batch");
  cr_expect_str_eq(got, want);
  free(got);
  free(want);
  /* Both resume with a larger limit into the same run. */
  task.max_nodes = 30;
  o.resume = 1;
  cp_plan_result ra, rb;
  cp_plan_status sa = cp_plan_task(st, &task, &o, &ra, &e);
  cr_expect_eq(sa, CP_PLAN_LIMIT, "%s", e.msg);
  cr_expect_eq(cp_plan_task(ref, &task, &o, &rb, &e), CP_PLAN_LIMIT, "%s",
               e.msg);
  cr_expect_eq(ra.resumed, 1);
  cr_expect_eq(rb.resumed, 1);
  cr_expect_gt(synth_assert_same_run(a, 1, b, 1, "resumed import"), 20);
  sqlite3_close(a);
  sqlite3_close(b);
  cp_store_close(st);
  cp_store_close(ref);
  synth_remove_db(path);
  synth_remove_db(ref_path);
  cp_task_free(&task);
  remove(file);
  free(file);
}
