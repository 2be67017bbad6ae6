/* Allocation-failure sweep (issue 12; SQLite's habit). For each parser and
 * solver below, one run without injection counts the allocations A it makes
 * and records a digest of its result; then for every k = 1..A (a sample of
 * CPT_OOM_SAMPLES evenly spaced k when A is larger than CPT_OOM_FULL) the
 * same run is repeated with the k-th allocation failing. Each such run must
 * either fail with a message that says "out of memory" or succeed with the
 * very result of the clean run (an allocation whose failure is absorbed);
 * ASan/UBSan (sanitizer build, leak detection on) check that nothing
 * crashes, leaks or reads freed memory on any of these paths.
 *
 * Reach (tests/harden/oomhook.c): complan's own allocations, jansson's and
 * libxml2's. Not injected: GLPK (certify, FIP's LPs), which allocates
 * through its own glp_alloc and on failure raises a GLPK error; complan's
 * GLPK calls all run under an error hook that recovers from that (the path
 * tests/harden/test_finish.c exercises with injected GLPK errors). ODE,
 * OpenBLAS and LAPACKE are not injected either (ODE aborts on failure by
 * design). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "contact/certify.h"
#include "contact/fip.h"
#include "contact/lcpio.h"
#include "contact/lemke.h"
#include "contact/problem.h"
#include "models/scene.h"
#include "models/system.h"
#include "models/urdf.h"
#include "planner/cli/cli.h"
#include "planner/search/task.h"
#include "planner/sim/world.h"
#include "tests/harden/oomhook.h"
#include "tests/support.h"

/* Runs with more allocations than this are sampled. */
#define CPT_OOM_FULL 3000
#define CPT_OOM_SAMPLES 1500

/* ---- digest of results (FNV-1a over bytes) -------------------------------- */
static void mix(uint64_t *h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) *h = (*h ^ b[i]) * 0x100000001b3ull;
}

/* ---- inputs, read before any injection ------------------------------------ */
typedef struct input {
  char path[4096];
  char dir[4096];
  char *text;
  size_t len;
} input;

static input in; /* the current test's input file */

static void load_input(const char *rel) {
  const char *root = getenv("CP_SOURCE_ROOT");
  cr_assert_not_null(root);
  snprintf(in.path, sizeof in.path, "%s/%s", root, rel);
  snprintf(in.dir, sizeof in.dir, "%s", in.path);
  char *slash = strrchr(in.dir, '/');
  if (slash) *slash = '\0';
  in.text = cpt_read_file(in.path, &in.len);
  cr_assert_not_null(in.text, "%s", in.path);
}

typedef int (*op_fn)(uint64_t *digest, char *msg, size_t cap);

/* The code of the last error record an operation failed with (fail_err);
 * CP_ERR_CODE_COUNT when it failed without one. */
static cp_error_code fail_code = CP_ERR_CODE_COUNT;
/* 0: a sweep does not check the code (see Test(oom, task)). */
static int check_code = 1;

static int says_oom(const char *msg) { return strstr(msg, "out of memory") != NULL; }

static void sweep(const char *name, op_fn op) {
  char msg[1024] = "";
  uint64_t ref = 0xcbf29ce484222325ull;
  /* a first run for one-time initialisation (libxml2's, jansson's
   * allocator), which later runs do not repeat */
  cr_assert_eq(op(&ref, msg, sizeof msg), 0, "%s without injection: %s", name, msg);
  ref = 0xcbf29ce484222325ull;
  cpt_oom_arm(0);
  int rc = op(&ref, msg, sizeof msg);
  const long total = cpt_oom_disarm();
  cr_assert_eq(rc, 0, "%s without injection: %s", name, msg);
  cr_assert_gt(total, 0, "%s makes no allocation?", name);
  const long stride = total > CPT_OOM_FULL ? (total + CPT_OOM_SAMPLES - 1) / CPT_OOM_SAMPLES : 1;
  long runs = 0, failed = 0, absorbed = 0;
  for (long k = 1; k <= total; k += stride) {
    uint64_t d = 0xcbf29ce484222325ull;
    msg[0] = '\0';
    fail_code = CP_ERR_CODE_COUNT;
    cpt_oom_arm(k);
    rc = op(&d, msg, sizeof msg);
    cpt_oom_disarm();
    /* libxml2's hash tables are seeded at random, so a run may allocate a
     * little less than the first: then nothing failed and all must be as in
     * the clean run (the check below). */
    runs += cpt_oom.failed;
    if (rc == 0) {
      cr_assert_eq(d, ref, "%s: allocation %ld of %ld failed, yet the run succeeded with "
                   "another result", name, k, total);
      absorbed += cpt_oom.failed;
    } else {
      cr_assert(cpt_oom.failed && says_oom(msg), "%s: allocation %ld of %ld failed; message \"%s\" does not "
                "say out of memory", name, k, total, msg);
      /* The caller decides from the code, never from the words. */
      cr_assert(!check_code || fail_code == CP_ERR_CODE_COUNT || fail_code == CP_ERR_NOMEM,
                "%s: allocation %ld of %ld failed; \"%s\" has code %s, not nomem", name, k,
                total, msg, cp_error_code_name(fail_code));
      failed++;
    }
  }
  fprintf(stderr, "oom %s: %ld allocations, %ld injected runs (every %ld%s): %ld failed "
          "cleanly, %ld absorbed\n", name, total, runs, stride, stride > 1 ? ", sampled" : "",
          failed, absorbed);
}

static int fail(char *msg, size_t cap, const char *what, const char *why) {
  snprintf(msg, cap, "%s: %s", what, why);
  return -1;
}

/* fail() with a library error record: its code is checked as well. */
static int fail_err(char *msg, size_t cap, const cp_error *e) {
  fail_code = e->code;
  return fail(msg, cap, e->where, e->msg);
}

/* ---- parsers ------------------------------------------------------------- */
static int digest_lcp(uint64_t *h, const cp_lcp *l) {
  mix(h, &l->n, sizeof l->n);
  mix(h, l->M, sizeof(double) * (size_t)l->n * (size_t)l->n);
  mix(h, l->q, sizeof(double) * (size_t)l->n);
  return 0;
}

/* Parse, format, digest: the LCP readers' round trip (the formatter is NULL
 * only when out of memory). */
static int lcp_round_trip(uint64_t *h, char *msg, size_t cap,
                          int (*parse)(const char *, size_t, cp_lcp *, cp_error *),
                          char *(*format)(const cp_lcp *), const char *format_name) {
  cp_lcp l;
  cp_error e = {0};
  if (parse(in.text, in.len, &l, &e)) return fail_err(msg, cap, &e);
  char *s = format(&l);
  if (!s) {
    cp_lcp_free(&l);
    return fail(msg, cap, format_name, "out of memory");
  }
  mix(h, s, strlen(s));
  free(s);
  digest_lcp(h, &l);
  cp_lcp_free(&l);
  return 0;
}

static int op_lcp_json(uint64_t *h, char *msg, size_t cap) {
  return lcp_round_trip(h, msg, cap, cp_lcp_parse_json, cp_lcp_format_json,
                        "cp_lcp_format_json");
}

static int op_lcp_dat(uint64_t *h, char *msg, size_t cap) {
  return lcp_round_trip(h, msg, cap, cp_lcp_parse, cp_lcp_format_dat,
                        "cp_lcp_format_dat");
}

static void digest_system(uint64_t *h, const cp_system *sys) {
  mix(h, &sys->n_u, sizeof sys->n_u);
  mix(h, &sys->n_c, sizeof sys->n_c);
  mix(h, sys->H, sizeof(double) * (size_t)sys->n_u * (size_t)sys->n_u);
  mix(h, sys->f, sizeof(double) * (size_t)sys->n_u);
  mix(h, sys->G, sizeof(double) * (size_t)sys->n_u * 3 * (size_t)sys->n_c);
}

static int op_scene(uint64_t *h, char *msg, size_t cap) {
  cp_scene s;
  cp_error e = {0};
  if (cp_scene_parse(in.text, in.len, in.dir, NULL, &s, &e)) return fail_err(msg, cap, &e);
  cp_system sys;
  if (cp_system_build(&s, &sys, &e)) {
    cp_scene_free(&s);
    return fail_err(msg, cap, &e);
  }
  mix(h, &s.n_bodies, sizeof s.n_bodies);
  mix(h, &s.n_contacts, sizeof s.n_contacts);
  digest_system(h, &sys);
  cp_system_free(&sys);
  cp_scene_free(&s);
  return 0;
}

static int op_urdf(uint64_t *h, char *msg, size_t cap) {
  cp_urdf_model m;
  cp_error e = {0};
  if (cp_urdf_parse(in.text, in.len, &m, &e)) return fail_err(msg, cap, &e);
  mix(h, m.robot, strlen(m.robot));
  mix(h, m.root, strlen(m.root));
  mix(h, &m.chain.n, sizeof m.chain.n);
  mix(h, m.joint_line, sizeof(int) * (size_t)m.chain.n);
  cp_urdf_free(&m);
  return 0;
}

static int op_task(uint64_t *h, char *msg, size_t cap) {
  cp_task t;
  cp_error e = {0};
  if (cp_task_parse(in.text, in.len, in.path, &t, &e)) return fail_err(msg, cap, &e);
  mix(h, &t.n_actions, sizeof t.n_actions);
  mix(h, &t.steps, sizeof t.steps);
  mix(h, t.scene_text, strlen(t.scene_text));
  for (int i = 0; i < t.n_inputs; i++)
    mix(h, t.inputs[i].values, sizeof(double) * (size_t)t.inputs[i].n_values);
  cp_task_free(&t);
  return 0;
}

Test(oom, lcp_json) {
  load_input("tests/data/lcp/fip_indeterminate.json");
  sweep("lcp_json", op_lcp_json);
}
Test(oom, lcp_dat) {
  load_input("tests/data/siconos/lcp_CPS_4.dat");
  sweep("lcp_dat", op_lcp_dat);
}
Test(oom, scene_with_urdf) {
  load_input("models/scenes/urdf_finger_push.json");
  sweep("scene+system", op_scene);
}
Test(oom, scene_auto_contacts) {
  load_input("models/scenes/gripper_box.json"); /* URDF twice, contact generation */
  sweep("scene (auto contacts)+system", op_scene);
}
Test(oom, urdf) {
  load_input("models/scenes/gripper.urdf");
  sweep("urdf", op_urdf);
}
Test(oom, task) {
  load_input("planner/tasks/grasp_lift.json");
  sweep("task", op_task);
}

/* ---- solvers ------------------------------------------------------------- */
static cp_lcp lcp; /* parsed before any injection */

static void load_lcp(const char *rel) {
  load_input(rel);
  cp_error e = {0};
  cr_assert_eq(cp_lcp_parse(in.text, in.len, &lcp, &e), 0, "%s", e.msg);
}

static int lcp_outcome(uint64_t *h, char *msg, size_t cap, const cp_lcp_info *info,
                       const double *z) {
  if (info->status != CP_LCP_SOLVED) {
    snprintf(msg, cap, "%s: %s", cp_lcp_status_name(info->status), info->reason);
    return -1;
  }
  mix(h, z, sizeof(double) * (size_t)lcp.n);
  return 0;
}

static int op_lemke(uint64_t *h, char *msg, size_t cap) {
  cp_lemke_ws *ws = cp_lemke_ws_create(lcp.n);
  if (!ws) return fail(msg, cap, "cp_lemke_ws_create", "out of memory");
  double *z = malloc(sizeof(double) * 2 * (size_t)lcp.n);
  if (!z) {
    cp_lemke_ws_destroy(ws);
    return fail(msg, cap, "test", "out of memory");
  }
  cp_lcp_info info;
  cp_lemke_options o = cp_lemke_defaults();
  cp_lemke_solve(ws, lcp.n, lcp.M, lcp.q, &o, NULL, z, z + lcp.n, &info);
  int rc = lcp_outcome(h, msg, cap, &info, z);
  free(z);
  cp_lemke_ws_destroy(ws);
  return rc;
}

static int op_fip(uint64_t *h, char *msg, size_t cap) {
  double *z = malloc(sizeof(double) * 2 * (size_t)lcp.n);
  if (!z) return fail(msg, cap, "test", "out of memory");
  cp_lcp_info info;
  cp_fip_solve(lcp.n, lcp.M, lcp.q, NULL, z, z + lcp.n, &info);
  int rc = lcp_outcome(h, msg, cap, &info, z);
  free(z);
  return rc;
}

static int op_certify(uint64_t *h, char *msg, size_t cap) {
  double *z = malloc(sizeof(double) * 2 * (size_t)lcp.n);
  if (!z) return fail(msg, cap, "test", "out of memory");
  cp_lcp_info info;
  cp_certify_result res;
  cp_certify(lcp.n, lcp.M, lcp.q, NULL, z, z + lcp.n, NULL, NULL, &res, &info);
  int rc = lcp_outcome(h, msg, cap, &info, z);
  free(z);
  return rc;
}

Test(oom, lemke) {
  load_lcp("tests/data/lcp/fip_indeterminate.json");
  sweep("lemke", op_lemke);
}
Test(oom, fip_with_crossover) {
  load_lcp("tests/data/lcp/fip_indeterminate.json");
  sweep("fip", op_fip);
}
Test(oom, certify) {
  load_lcp("tests/data/siconos/lcp_CPS_4.dat");
  sweep("certify", op_certify);
}

/* ---- contact problem and simulator ---------------------------------------- */
static cp_scene scene;
static cp_system sys;

static void load_scene(const char *rel, int build) {
  load_input(rel);
  cp_error e = {0};
  cp_scene_options so = cp_scene_options_defaults();
  so.check_normal_speed = 0;
  cr_assert_eq(cp_scene_parse(in.text, in.len, in.dir, &so, &scene, &e), 0, "%s", e.msg);
  if (build) cr_assert_eq(cp_system_build(&scene, &sys, &e), 0, "%s", e.msg);
}

static int op_problem(uint64_t *h, char *msg, size_t cap) {
  cp_problem_options o = cp_problem_defaults();
  cp_problem_result r;
  cp_problem_solve(&sys, &o, &r);
  int rc = 0;
  if (r.info.status != CP_LCP_SOLVED) {
    snprintf(msg, cap, "%s: %s", cp_lcp_status_name(r.info.status), r.info.reason);
    rc = -1;
  } else {
    mix(h, r.force, sizeof(double) * 3 * (size_t)r.nc);
    mix(h, r.udot, sizeof(double) * (size_t)r.nu);
  }
  cp_problem_result_free(&r);
  return rc;
}

static int op_world(uint64_t *h, char *msg, size_t cap) {
  cp_world *w = NULL;
  cp_error e = {0};
  cp_world_status st = cp_world_create(&scene, NULL, &w, &e);
  if (st != CP_WORLD_OK) {
    snprintf(msg, cap, "%s: %s", cp_world_status_name(st), e.msg);
    return -1;
  }
  for (int k = 0; k < 5 && st == CP_WORLD_OK; k++) st = cp_world_step(w, NULL);
  int rc = 0;
  if (st != CP_WORLD_OK) {
    snprintf(msg, cap, "%s: %s", cp_world_status_name(st), cp_world_message(w));
    rc = -1;
  } else {
    const int n = cp_world_state_size(w);
    double x[256];
    cr_assert_leq(n, 256);
    cp_world_get_state(w, x);
    mix(h, x, sizeof(double) * (size_t)n);
  }
  cp_world_destroy(w);
  return rc;
}

Test(oom, contact_problem) {
  load_scene("models/scenes/grasp_hold.json", 1);
  sweep("contact problem", op_problem);
}
Test(oom, world_create_and_step) {
  load_scene("models/scenes/plan_push.json", 0);
  sweep("world", op_world);
}
Test(oom, world_gripper) {
  load_scene("models/scenes/gripper_box.json", 0);
  sweep("world (gripper)", op_world);
}

/* ---- the command line ----------------------------------------------------- *
 * cp_cli_main in this process, stdout and stderr sent to temporary files.
 * Out of memory must end with exit status 1, "out of memory" on stderr and
 * nothing on stdout (no half JSON document); otherwise exit 0 with the very
 * document of the clean run. */
static char *cli_argv[8];
static int cli_argc;

static char *slurp_fd(int fd) {
  off_t n = lseek(fd, 0, SEEK_END);
  const int armed = cpt_oom_pause(); /* the test's own allocation */
  char *b = malloc((size_t)n + 1);
  cpt_oom_resume(armed);
  cr_assert_not_null(b);
  cr_assert_eq(pread(fd, b, (size_t)n, 0), n);
  b[n] = '\0';
  return b;
}

static int op_cli(uint64_t *h, char *msg, size_t cap) {
  char out_t[] = "/tmp/cpt_oom_outXXXXXX", err_t[] = "/tmp/cpt_oom_errXXXXXX";
  int fo = mkstemp(out_t), fe = mkstemp(err_t);
  cr_assert(fo >= 0 && fe >= 0);
  unlink(out_t);
  unlink(err_t);
  fflush(stdout);
  fflush(stderr);
  int so = dup(1), se = dup(2);
  dup2(fo, 1);
  dup2(fe, 2);
  int rc = cp_cli_main(cli_argc, cli_argv);
  fflush(stdout);
  fflush(stderr);
  dup2(so, 1);
  dup2(se, 2);
  close(so);
  close(se);
  char *out = slurp_fd(fo), *err = slurp_fd(fe);
  close(fo);
  close(fe);
  int r = 0;
  if (rc == 0) {
    mix(h, out, strlen(out));
  } else {
    snprintf(msg, cap, "exit %d, stdout %zu bytes (%.300s), stderr: %s", rc, strlen(out), out, err);
    cr_assert_eq(rc, 1, "%s", msg);
    if (out[0]) {
      /* A complete document that reports the failure is fine too (e.g.
       * `solve`'s {"status": "failed", "reason": "out of memory"}). */
      const int armed = cpt_oom_pause();
      json_t *doc = json_loads(out, 0, NULL);
      const char *reason = json_string_value(json_object_get(doc, "reason"));
      cr_assert(reason && says_oom(reason), "%s", msg);
      snprintf(msg, cap, "%s", reason);
      json_decref(doc);
      cpt_oom_resume(armed);
    } else {
      snprintf(msg, cap, "%s", err);
    }
    r = -1;
  }
  free(out);
  free(err);
  return r;
}

static void cli_args(const char *a0, const char *a1, const char *a2, const char *file) {
  const char *root = getenv("CP_SOURCE_ROOT");
  static char path[4096];
  snprintf(path, sizeof path, "%s/%s", root, file);
  const char *v[] = {"complan", a0, a1, a2, path, "--json"};
  cli_argc = 0;
  for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
    if (v[i]) cli_argv[cli_argc++] = (char *)v[i];
}

Test(oom, cli_lcp_solve) {
  cli_args("lcp", "solve", NULL, "tests/data/lcp/fip_indeterminate.json");
  sweep("cli lcp solve --json", op_cli);
}
Test(oom, cli_solve_scene) {
  cli_args("solve", NULL, NULL, "models/scenes/grasp_hold.json");
  sweep("cli solve --json", op_cli);
}
