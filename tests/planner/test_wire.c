/* Batch jobs as messages (planner/plan/wire.h, the MPI workers' format):
 * a job and an outcome survive encode and decode bit for bit (odd doubles,
 * warm-start bytes, message); a real expansion run on a second world from
 * the decoded job gives back, through the outcome message, exactly what
 * running it in place gives (twice, the second one warm from the first);
 * every truncation, a wrong tag, a wrong state size, trailing bytes and
 * impossible codes are input errors. */
#include <criterion/criterion.h>
#include <math.h>
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
