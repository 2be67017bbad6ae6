/* The fuzz targets' bodies, shared by the libFuzzer entry points
 * (tests/fuzz/fuzz_*.c, clang) and the replay of tests/fuzz/regressions/
 * in the Criterion suite (tests/harden/test_regressions.c, any compiler).
 * Each takes arbitrary bytes; a parser must accept them (and then hold up to
 * the checks below) or reject them with a message; anything else aborts. */
#include "tests/fuzz/targets.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/lcpio.h"
#include "models/scene.h"
#include "models/system.h"
#include "models/urdf.h"
#include "planner/search/task.h"

/* libFuzzer target: the JSON LCP reader (contact/lcpio.h). Anything may come
 * in; the reader must return 0 with a well-formed LCP or -1 with a message,
 * never crash, leak or misbehave under ASan/UBSan. Round trip: a parsed LCP
 * written back and read again must give the same numbers. */
int cpf_lcp_json(const uint8_t *data, size_t size) {
  cp_lcp lcp;
  cp_error err;
  memset(&err, 0, sizeof err);
  if (cp_lcp_parse_json((const char *)data, size, &lcp, &err) == 0) {
    if (lcp.n < 1 || lcp.n > CP_LCP_MAX_N) abort();
    char *s = cp_lcp_format_json(&lcp);
    cp_lcp back;
    if (s && cp_lcp_parse_json(s, strlen(s), &back, &err) == 0) {
      if (back.n != lcp.n) abort();
      for (size_t k = 0; k < (size_t)lcp.n * (size_t)lcp.n; k++)
        if (memcmp(&back.M[k], &lcp.M[k], sizeof(double))) abort();
      cp_lcp_free(&back);
    } else if (s) {
      abort(); /* what we write we must read */
    }
    free(s);
    cp_lcp_free(&lcp);
  } else if (!err.msg[0]) {
    abort(); /* every rejection says why */
  }
  return 0;
}

/* libFuzzer target: the Siconos .dat LCP reader and the format detection
 * in front of it (cp_lcp_parse). Round trip as for JSON. */
int cpf_lcp_dat(const uint8_t *data, size_t size) {
  cp_lcp lcp;
  cp_error err;
  memset(&err, 0, sizeof err);
  if (cp_lcp_parse((const char *)data, size, &lcp, &err) == 0) {
    if (lcp.n < 1 || lcp.n > CP_LCP_MAX_N) abort();
    char *s = cp_lcp_format_dat(&lcp);
    cp_lcp back;
    if (s && cp_lcp_parse_dat(s, strlen(s), &back, &err) == 0) {
      if (back.n != lcp.n) abort();
      for (int i = 0; i < lcp.n; i++)
        if (memcmp(&back.q[i], &lcp.q[i], sizeof(double))) abort();
      cp_lcp_free(&back);
    } else if (s) {
      abort();
    }
    free(s);
    cp_lcp_free(&lcp);
  } else if (!err.msg[0]) {
    abort();
  }
  return 0;
}

/* libFuzzer target: the scene reader (models/scene.h), including the value
 * ranges and automatic contact generation. base_dir is a fixed directory
 * without URDF files, so "urdf" keys exercise the error paths only (set
 * CP_FUZZ_SCENE_DIR to the bundled scenes to reach URDF files too). A
 * parsed scene is then built into a system (models/system.h): the ranges
 * promise that whatever parses is well scaled enough to build. */
int cpf_scene(const uint8_t *data, size_t size) {
  const char *dir = getenv("CP_FUZZ_SCENE_DIR");
  cp_scene s;
  cp_error err;
  memset(&err, 0, sizeof err);
  if (cp_scene_parse((const char *)data, size, dir ? dir : "/nonexistent-fuzz-dir", NULL, &s,
                     &err) == 0) {
    cp_system sys;
    if (cp_system_build(&s, &sys, &err) == 0) cp_system_free(&sys);
    cp_scene_free(&s);
  } else if (!err.msg[0]) {
    abort();
  }
  return 0;
}

/* libFuzzer target: the URDF reader (models/urdf.h, libxml2 underneath). */
int cpf_urdf(const uint8_t *data, size_t size) {
  cp_urdf_model m;
  cp_error err;
  memset(&err, 0, sizeof err);
  if (cp_urdf_parse((const char *)data, size, &m, &err) == 0) {
    cp_urdf_free(&m);
  } else if (!err.msg[0]) {
    abort();
  }
  return 0;
}

/* libFuzzer target: the planner's task reader (planner/search/task.h), with its
 * scene (inline, or a path resolved against the task's directory:
 * CP_FUZZ_TASK_DIR, planner/tasks in run.sh, so that the bundled tasks'
 * "../../models/scenes/..." paths reach real scenes). A parsed task must
 * hold together: at least one input with values, every action decodable,
 * at least one step per action, and a goal on a free body. */
int cpf_task(const uint8_t *data, size_t size) {
  const char *dir = getenv("CP_FUZZ_TASK_DIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/fuzz.json", dir ? dir : "/nonexistent-fuzz-dir");
  cp_task t;
  cp_error err;
  memset(&err, 0, sizeof err);
  if (cp_task_parse((const char *)data, size, path, &t, &err) == 0) {
    if (t.n_inputs < 1 || t.n_actions < 1 || t.steps < 1) abort();
    if (t.goal.body_index < 0 || t.goal.body_index >= t.scene.n_bodies) abort();
    double v[64];
    if (t.n_inputs <= 64) {
      cp_task_action_values(&t, 0, v);
      cp_task_action_values(&t, t.n_actions - 1, v);
      if (!(cp_task_action_cost(&t, t.n_actions - 1) >= 0)) abort();
    }
    cp_task_free(&t);
  } else if (!err.msg[0]) {
    abort();
  }
  return 0;
}
