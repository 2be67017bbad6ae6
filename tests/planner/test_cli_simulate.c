/* `complan simulate` as a user runs it: the JSON contract of docs/simulate.md
 * §3 with numbers checked against closed forms, the CSV, every bundled
 * scene with shapes, and bad input (exit 2, the file and the place, nothing
 * written). */
// No Criterion .timeout in this file: Criterion 2.4's runner leaks under
// LeakSanitizer when tests with timeouts run; meson's timeout for the
// executable (tests/planner/meson.build) bounds the run instead.
#include <criterion/criterion.h>
#include <dirent.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/support.h"

static const char *scene(const char *name) {
  static char buf[2][1024];
  static int k;
  k ^= 1;
  snprintf(buf[k], sizeof buf[k], "%s/models/scenes/%s", getenv("CP_SOURCE_ROOT"), name);
  return buf[k];
}

static double num(json_t *v) { return json_number_value(v); }

// Free fall of the box of box_drop for 0.1 s: v = g t exactly, the summary
// keys all present.
Test(cli_simulate, json_contract) {
  const char *argv[] = {"complan", "simulate", scene("box_drop.json"), "--duration",
                        "0.1", "--dt", "0.001", "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "ok");
  cr_assert_str_eq(json_string_value(json_object_get(doc, "stepper")), "acceleration");
  cr_assert_eq(json_integer_value(json_object_get(doc, "steps")), 100);
  cr_assert_float_eq(num(json_object_get(doc, "dt")), 0.001, 1e-15);
  cr_assert(num(json_object_get(doc, "time_us_per_step")) > 0);
  cr_assert_eq(json_integer_value(json_object_get(doc, "fallback_steps")), 0);
  cr_assert_eq(json_integer_value(json_object_get(doc, "checked_steps")), 100);
  cr_assert_eq(json_integer_value(json_object_get(doc, "retried_steps")), 0);
  cr_assert(json_is_integer(json_object_get(doc, "lcp_pivots")));
  cr_assert_float_eq(num(json_object_get(doc, "max_penetration")), 0, 1e-12);
  json_t *e = json_object_get(doc, "energy");
  // Semi-implicit Euler loses m g^2 h^2 / 2 per free-fall step.
  double e0 = num(json_object_get(e, "initial")), e1 = num(json_object_get(e, "final"));
  cr_assert_float_eq(e0 - e1, 100 * 0.5 * 9.81 * 9.81 * 1e-6, 1e-9);
  cr_assert_float_eq(num(json_object_get(e, "max_step_increase")), 0, 1e-12);
  const char *h = json_string_value(json_object_get(doc, "hash"));
  cr_assert(h && strlen(h) == 16);
  json_t *fin = json_object_get(doc, "final");
  cr_assert_float_eq(num(json_object_get(fin, "time")), 0.1, 1e-12);
  json_t *b = json_array_get(json_object_get(fin, "bodies"), 0);
  cr_assert_str_eq(json_string_value(json_object_get(b, "name")), "box");
  cr_assert_eq(json_array_size(json_object_get(b, "orientation")), 4);
  cr_assert_float_eq(num(json_array_get(json_object_get(b, "linear_velocity"), 2)),
                     -0.981, 1e-12);
  cr_assert_eq(json_array_size(json_object_get(b, "angular_velocity")), 3);
  cr_assert_eq(json_array_size(json_object_get(fin, "joints")), 0);
  json_decref(doc);
}

// Same run twice: same hash.
// A step that fails the per-step check in every retry stops the run: exit
// 1, status check_failed, the law and where in the message, the steps before
// it counted as checked (issue 20). The finger's joints are at their URDF
// effort limits; step 4 gains more energy than the efforts supply.
Test(cli_simulate, refused_step) {
  const char *argv[] = {"complan", "simulate", cpt_data("robots/finger3_overdriven.json"),
                        "--duration", "0.5", "--dt", "0.005", "--json", NULL};
  json_t *doc = cpt_run_json(argv, 1);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "check_failed");
  cr_assert_eq(json_integer_value(json_object_get(doc, "steps")), 3);
  cr_assert_eq(json_integer_value(json_object_get(doc, "checked_steps")), 3);
  const char *m = json_string_value(json_object_get(doc, "message"));
  cr_assert(m && strstr(m, "step 4: ") && strstr(m, "the step check failed: energy") &&
                strstr(m, "taken again in 4 substeps and by the velocity stepper"),
            "%s", m);
  json_decref(doc);
}

Test(cli_simulate, hash_repeats) {
  const char *argv[] = {"complan", "simulate", scene("grasp_hold.json"), "--duration",
                        "0.05", "--json", NULL};
  json_t *a = cpt_run_json(argv, 0), *b = cpt_run_json(argv, 0);
  cr_assert_str_eq(json_string_value(json_object_get(a, "hash")),
                   json_string_value(json_object_get(b, "hash")));
  json_t *j = json_object_get(json_object_get(a, "final"), "joints");
  cr_assert_eq(json_array_size(j), 4);
  cr_assert_str_eq(json_string_value(json_object_get(json_array_get(j, 0), "name")), "left/j1");
  json_decref(a);
  json_decref(b);
}

// --profile: the phase sums are there, non-negative, add up to at most the
// total, and timing changes nothing (same hash); without it, no "profile".
Test(cli_simulate, profile_flag) {
  const char *on[] = {"complan", "simulate", scene("box_drop.json"), "--duration",
                      "0.05", "--profile", "--json", NULL};
  const char *off[] = {"complan", "simulate", scene("box_drop.json"), "--duration",
                       "0.05", "--json", NULL};
  json_t *a = cpt_run_json(on, 0), *b = cpt_run_json(off, 0);
  cr_assert_str_eq(json_string_value(json_object_get(a, "hash")),
                   json_string_value(json_object_get(b, "hash")));
  cr_assert_null(json_object_get(b, "profile"));
  json_t *p = json_object_get(a, "profile");
  cr_assert(json_is_object(p));
  const char *ph[] = {"collide", "constraints", "assembly", "solve", "check", "integrate"};
  double sum = 0, total = json_number_value(json_object_get(p, "total"));
  for (int i = 0; i < 6; ++i) {
    json_t *v = json_object_get(p, ph[i]);
    cr_assert(json_is_number(v), "profile.%s", ph[i]);
    cr_assert_geq(json_number_value(v), 0.0);
    sum += json_number_value(v);
  }
  cr_assert_gt(total, 0.0);
  cr_assert_leq(sum, total * (1 + 1e-9), "phases %g > total %g", sum, total);
  json_decref(a);
  json_decref(b);
}

// --compliance reaches the stepper: the box lands and rests on the table in
// both runs (to 1e-9 m), and the rigid run's numbers differ from the
// default's (another hash).
Test(cli_simulate, compliance_flag) {
  const char *rigid[] = {"complan", "simulate", scene("box_drop.json"), "--duration",
                         "0.4", "--compliance", "0", "--json", NULL};
  const char *dflt[] = {"complan", "simulate", scene("box_drop.json"), "--duration",
                        "0.4", "--json", NULL};
  json_t *a = cpt_run_json(rigid, 0), *b = cpt_run_json(dflt, 0);
  for (int k = 0; k < 2; ++k) {
    json_t *d = k ? b : a;
    json_t *box = json_array_get(json_object_get(json_object_get(d, "final"), "bodies"), 0);
    cr_assert_float_eq(num(json_array_get(json_object_get(box, "position"), 2)), 0.05, 1e-9);
  }
  cr_assert_str_neq(json_string_value(json_object_get(a, "hash")),
                    json_string_value(json_object_get(b, "hash")));
  json_decref(a);
  json_decref(b);
}

// CSV: header, one row per K steps plus t = 0, velocities of free fall.
Test(cli_simulate, csv_rows) {
  char *csv = cpt_temp_file("", ".csv");
  const char *argv[] = {"complan", "simulate", scene("box_drop.json"), "--duration",
                        "0.01", "--dt", "0.001", "--every", "5", "--csv", csv, NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(argv, &out, &err), 0, "%s", err);
  size_t n;
  char *text = cpt_read_file(csv, &n);
  cr_assert(text);
  cr_assert(!strncmp(text, "t,box.x,box.y,box.z,box.qw,box.qx,box.qy,box.qz,box.vx,"
                     "box.vy,box.vz,box.wx,box.wy,box.wz\n", 72), "%s", text);
  int rows = 0;
  double t = -1, vz = 1;
  for (char *line = strchr(text, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
    double v[14];
    int k = 0;
    char *p = line + 1;
    for (; k < 14; ++k) {
      v[k] = strtod(p, &p);
      if (*p == ',') ++p;
    }
    t = v[0];
    vz = v[10];
    ++rows;
  }
  cr_assert_eq(rows, 3); // t = 0, 0.005, 0.01
  cr_assert_float_eq(t, 0.01, 1e-12);
  cr_assert_float_eq(vz, -0.0981, 1e-12);
  free(text);
  free(out);
  free(err);
  unlink(csv);
  free(csv);
}

// Every bundled scene with shapes runs (explicit lists with
// --auto-contacts): status ok, no NaN, a finite hash.
Test(cli_simulate, bundled_scenes) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/models/scenes", getenv("CP_SOURCE_ROOT"));
  DIR *d = opendir(dir);
  cr_assert(d);
  struct dirent *de;
  int ran = 0;
  while ((de = readdir(d))) {
    size_t l = strlen(de->d_name);
    if (l < 6 || strcmp(de->d_name + l - 5, ".json")) continue;
    for (int st = 0; st < 2; ++st) {
      const char *argv[] = {"complan", "simulate", scene(de->d_name), "--duration",
                            "0.05", "--auto-contacts", "--stepper",
                            st ? "velocity" : "acceleration", "--json", NULL};
      json_t *doc = cpt_run_json(argv, 0);
      cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "ok",
                       "%s: %s", de->d_name,
                       json_string_value(json_object_get(doc, "message")));
      json_decref(doc);
      ++ran;
    }
  }
  closedir(d);
  cr_assert_geq(ran, 20);
}

static void bad(const char *const *argv, const char *expect1, const char *expect2) {
  char *out, *err;
  int rc = cpt_run(argv, &out, &err);
  cr_assert_eq(rc, 2, "rc %d: %s", rc, err);
  cr_assert_eq(out[0], '\0', "stdout: %s", out);
  cr_assert(strstr(err, expect1), "stderr: %s", err);
  if (expect2) cr_assert(strstr(err, expect2), "stderr: %s", err);
  free(out);
  free(err);
}

Test(cli_simulate, bad_input) {
  const char *s1 = scene("box_on_table.json");
  const char *explicit_[] = {"complan", "simulate", s1, "--json", NULL};
  bad(explicit_, "box_on_table.json: contacts:", "with the bodies (or pass --auto-contacts)");
  const char *dt0[] = {"complan", "simulate", scene("box_drop.json"), "--dt", "0", NULL};
  bad(dt0, "--dt", "> 0");
  const char *dtneg[] = {"complan", "simulate", scene("box_drop.json"), "--dt", "-1e-3", NULL};
  bad(dtneg, "--dt", NULL);
  const char *dur[] = {"complan", "simulate", scene("box_drop.json"), "--duration", "inf", NULL};
  bad(dur, "--duration", "finite");
  const char *durnan[] = {"complan", "simulate", scene("box_drop.json"), "--duration", "nan", NULL};
  bad(durnan, "--duration", NULL);
  const char *stepper[] = {"complan", "simulate", scene("box_drop.json"), "--stepper", "rk4", NULL};
  bad(stepper, "--stepper", "rk4");
  const char *compneg[] = {"complan", "simulate", scene("box_drop.json"), "--compliance", "-1e-6", NULL};
  bad(compneg, "--compliance", "[0, 0.01]");
  const char *compbig[] = {"complan", "simulate", scene("box_drop.json"), "--compliance", "0.5", NULL};
  bad(compbig, "--compliance", "[0, 0.01]");
  // A scene that starts in deep penetration: the pair and the depth.
  char *f = cpt_temp_file(
      "{\"bodies\": [{\"name\": \"table\", \"fixed\": true, \"shape\": {\"type\": "
      "\"plane\", \"normal\": [0, 0, 1], \"offset\": 0}}, {\"name\": \"box\", "
      "\"mass\": 1, \"shape\": {\"type\": \"box\", \"size\": [0.2, 0.1, 0.1]}, "
      "\"position\": [0, 0, 0.03]}]}",
      ".json");
  char *csv = cpt_temp_file("", ".csv");
  unlink(csv);
  const char *deep[] = {"complan", "simulate", f, "--csv", csv, NULL};
  bad(deep, ": contacts:", "penetration");
  cr_assert_neq(access(csv, F_OK), 0, "a CSV was written");
  unlink(f);
  free(f);
  free(csv);
}

Test(cli_simulate, help) {
  const char *argv[] = {"complan", "simulate", "--help", NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(argv, &out, &err), 0);
  cr_assert(strstr(out, "--stepper"));
  cr_assert(strstr(out, "--every"));
  free(out);
  free(err);
}
