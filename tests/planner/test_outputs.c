/* Output files (issue 21, item 6): the state layout against the world's own
 * state (planner/sim/statelayout.h); RFC 4180 CSV from `simulate --csv` and
 * `replay --csv` read back by a strict reader written here (bodies named
 * `a,b`, `q"x` and one with CR LF in it, joints with ',' and '"', a mimic
 * joint; the Panda); atomic outputs (planner/io/outfile.h): nothing on stdout
 * with exit 2, no temporary file after SIGINT/SIGTERM during a write (held
 * deterministically by the COMPLAN_TEST_HOLD_OUTPUT hook), the umask. */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "experiments/study/study.h"
#include "planner/io/csv.h"
#include "planner/io/outfile.h"
#include "planner/sim/statelayout.h"
#include "planner/sim/world.h"
#include "tests/support.h"

static char dir[64];

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/cp_outputs_XXXXXX");
  cr_assert(mkdtemp(dir));
}

static void teardown(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_assert_eq(system(cmd), 0);
}

TestSuite(outputs, .init = setup, .fini = teardown);

/* dir/name, kept for the test's life (a test makes a few dozen). */
static const char *in_dir(const char *name) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s/%s", dir, name);
  return strdup(buf);
}

static void write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  cr_assert(f, "%s", path);
  fputs(text, f);
  cr_assert_eq(fclose(f), 0);
}

/* Entries of the test folder other than the given names (temporary files
 * left behind, outputs that should not exist). */
static int strays(const char *const *keep, char *list, size_t size) {
  DIR *d = opendir(dir);
  cr_assert(d);
  int n = 0;
  list[0] = '\0';
  struct dirent *e;
  while ((e = readdir(d))) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    int kept = 0;
    for (const char *const *k = keep; *k; ++k) kept |= !strcmp(*k, e->d_name);
    if (kept) continue;
    ++n;
    size_t len = strlen(list);
    snprintf(list + len, size - len, " %s", e->d_name);
  }
  closedir(d);
  return n;
}

/* ---- a strict RFC 4180 reader (independent of planner/io/csv.c) ---------- */

typedef struct csv_doc {
  int n;          /* records */
  int *width;     /* [n] fields per record */
  char ***field;  /* [n][width] */
} csv_doc;

static void csv_free(csv_doc *d) {
  for (int r = 0; r < d->n; ++r) {
    for (int i = 0; i < d->width[r]; ++i) free(d->field[r][i]);
    free(d->field[r]);
  }
  free(d->width);
  free(d->field);
}

/* Parses text by RFC 4180's grammar: records end in CRLF or LF (the last
 * one may end at the end of the text); an escaped field is DQUOTE ... DQUOTE
 * with "" for a quote and anything else inside; a non-escaped field holds no
 * comma, quote, CR or LF. Anything else fails the test, saying where. */
static void csv_parse(const char *text, csv_doc *d) {
  memset(d, 0, sizeof *d);
  const char *p = text;
  size_t cap = strlen(text) + 2;
  char *buf = malloc(cap);
  while (*p) {
    d->width = realloc(d->width, (size_t)(d->n + 1) * sizeof *d->width);
    d->field = realloc(d->field, (size_t)(d->n + 1) * sizeof *d->field);
    int w = 0;
    char **fields = NULL;
    for (;;) {
      size_t len = 0;
      if (*p == '"') {
        for (++p;; ++p) {
          cr_assert(*p, "record %d: end of file inside a quoted field", d->n);
          if (*p == '"') {
            if (p[1] != '"') break;
            ++p;
          }
          buf[len++] = *p;
        }
        ++p; /* the closing quote */
        cr_assert(*p == ',' || *p == '\n' || *p == '\0' ||
                      (*p == '\r' && p[1] == '\n'),
                  "record %d field %d: '%c' after a closing quote", d->n, w,
                  *p);
      } else {
        for (; *p && *p != ',' && *p != '\n' && *p != '\r'; ++p) {
          cr_assert(*p != '"', "record %d field %d: a quote in an unquoted "
                    "field", d->n, w);
          buf[len++] = *p;
        }
        cr_assert(*p != '\r' || p[1] == '\n',
                  "record %d field %d: a bare CR in an unquoted field", d->n,
                  w);
      }
      buf[len] = '\0';
      fields = realloc(fields, (size_t)(w + 1) * sizeof *fields);
      fields[w++] = strdup(buf);
      if (*p == ',') {
        ++p;
        continue;
      }
      if (*p == '\r') ++p;
      if (*p == '\n') ++p;
      break;
    }
    d->width[d->n] = w;
    d->field[d->n++] = fields;
  }
  free(buf);
}

static void csv_read(const char *path, csv_doc *d) {
  size_t len;
  char *text = cpt_read_file(path, &len);
  cr_assert(text, "no CSV %s", path);
  cr_assert_eq(strlen(text), len, "a NUL in %s", path);
  csv_parse(text, d);
  free(text);
}

/* Every record as wide as the header, every field after the header a
 * number (empty allowed from column `empty_from` on). */
static void csv_check_widths(const csv_doc *d, int width, int empty_from) {
  cr_assert_gt(d->n, 1, "no rows");
  for (int r = 0; r < d->n; ++r) {
    cr_assert_eq(d->width[r], width, "record %d has %d fields, the header %d",
                 r, d->width[r], width);
    for (int i = 0; r && i < width; ++i) {
      const char *s = d->field[r][i];
      if (!*s && i >= empty_from) continue;
      char *end;
      strtod(s, &end);
      cr_assert(*s && !*end, "record %d field %d: '%s' is not a number", r, i,
                s);
    }
  }
}

/* ---- the CSV field writer --------------------------------------------- */

static char *field_of(const char *s) {
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&out, &len);
  cp_csv_field(f, s);
  fclose(f);
  return out;
}

Test(outputs, csv_fields_quoted_as_rfc4180_says) {
  static const struct {
    const char *in, *out;
  } cases[] = {{"box", "box"},           {"a,b", "\"a,b\""},
               {"q\"x", "\"q\"\"x\""},   {"l\nf", "\"l\nf\""},
               {"c\rr", "\"c\rr\""},     {"", ""},
               {"\"", "\"\"\"\""},       {"sp ace;tab\t", "sp ace;tab\t"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; ++i) {
    char *got = field_of(cases[i].in);
    cr_assert_str_eq(got, cases[i].out, "field %zu", i);
    csv_doc d;
    csv_parse(got[0] ? got : "\n", &d); /* reads back as the one field */
    cr_assert_eq(d.n, 1);
    cr_assert_eq(d.width[0], 1);
    cr_assert_str_eq(d.field[0][0], cases[i].in);
    csv_free(&d);
    free(got);
  }
}

/* ---- a scene with awkward names --------------------------------------- */

/* A serial robot: j,1 (prismatic x), j"2 mimicking it (prismatic y), j"3
 * (prismatic z). Massive links without shapes. */
static const char urdf[] =
    "<robot name=\"r\">\n"
    " <link name=\"base\"/>\n"
    " <link name=\"l1\"><inertial><mass value=\"0.1\"/><inertia ixx=\"1e-4\" "
    "iyy=\"1e-4\" izz=\"1e-4\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>"
    "</link>\n"
    " <link name=\"l2\"><inertial><mass value=\"0.1\"/><inertia ixx=\"1e-4\" "
    "iyy=\"1e-4\" izz=\"1e-4\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>"
    "</link>\n"
    " <link name=\"l3\"><inertial><mass value=\"0.1\"/><inertia ixx=\"1e-4\" "
    "iyy=\"1e-4\" izz=\"1e-4\" ixy=\"0\" ixz=\"0\" iyz=\"0\"/></inertial>"
    "</link>\n"
    " <joint name=\"j,1\" type=\"prismatic\"><parent link=\"base\"/><child "
    "link=\"l1\"/><axis xyz=\"1 0 0\"/><limit lower=\"-1\" upper=\"1\" "
    "effort=\"10\" velocity=\"1\"/></joint>\n"
    " <joint name=\"j&quot;2\" type=\"prismatic\"><parent link=\"l1\"/><child "
    "link=\"l2\"/><axis xyz=\"0 1 0\"/><limit lower=\"-1\" upper=\"1\" "
    "effort=\"10\" velocity=\"1\"/><mimic joint=\"j,1\"/></joint>\n"
    " <joint name=\"j&quot;3\" type=\"prismatic\"><parent link=\"l2\"/><child "
    "link=\"l3\"/><axis xyz=\"0 0 1\"/><limit lower=\"-1\" upper=\"1\" "
    "effort=\"10\" velocity=\"1\"/></joint>\n"
    "</robot>\n";

/* No gravity: the bodies drift at their velocities, the robot stays. */
static const char *odd_scene(void) {
  write_text(in_dir("odd.urdf"), urdf);
  static char text[4096];
  snprintf(text, sizeof text,
           "{\"gravity\": [0, 0, 0],\n"
           " \"bodies\": [\n"
           "  {\"name\": \"floor\", \"fixed\": true, \"shape\": {\"type\": "
           "\"plane\", \"normal\": [0, 0, 1], \"offset\": 0}},\n"
           "  {\"name\": \"a,b\", \"mass\": 0.5, \"shape\": {\"type\": "
           "\"box\", \"size\": [0.1, 0.1, 0.1]}, \"position\": [0, 0, 0.5], "
           "\"velocity\": [0.5, 0, 0]},\n"
           "  {\"name\": \"wall\", \"fixed\": true, \"shape\": {\"type\": "
           "\"box\", \"size\": [0.1, 0.1, 0.1]}, \"position\": [5, 5, 0.05]},\n"
           "  {\"name\": \"q\\\"x\", \"mass\": 0.2, \"shape\": {\"type\": "
           "\"sphere\", \"radius\": 0.05}, \"position\": [1, 0, 0.5]},\n"
           "  {\"name\": \"c\\r\\nd\", \"mass\": 0.2, \"shape\": {\"type\": "
           "\"sphere\", \"radius\": 0.05}, \"position\": [2, 0, 0.5], "
           "\"velocity\": [0, 0.1, 0]}],\n"
           " \"manipulators\": [{\"name\": \"m\", \"urdf\": \"%s\",\n"
           "   \"base\": {\"position\": [0, 3, 1]},\n"
           "   \"state\": {\"j,1\": {\"position\": 0.25, \"velocity\": 0.5},\n"
           "             \"j\\\"3\": {\"position\": -0.125}}}]}\n",
           in_dir("odd.urdf"));
  const char *path = in_dir("odd.json");
  write_text(path, text);
  return path;
}

/* The columns, written out by hand. */
static const char *const body_comp[13] = {"x",  "y",  "z",  "qw", "qx",
                                          "qy", "qz", "vx", "vy", "vz",
                                          "wx", "wy", "wz"};
static int odd_header(char names[][32]) {
  static const char *const bodies[3] = {"a,b", "q\"x", "c\r\nd"};
  int n = 0;
  snprintf(names[n++], 32, "t");
  for (int b = 0; b < 3; ++b)
    for (int c = 0; c < 13; ++c)
      snprintf(names[n++], 32, "%s.%s", bodies[b], body_comp[c]);
  snprintf(names[n++], 32, "m/j,1.q");
  snprintf(names[n++], 32, "m/j,1.qd");
  snprintf(names[n++], 32, "m/j\"3.q");
  snprintf(names[n++], 32, "m/j\"3.qd");
  return n;
}

/* The layout against the world's own state vector: every body's and
 * joint's numbers where the layout says, the mimic joint and fixed bodies
 * out, the names and the inverse map. */
Test(outputs, layout_matches_the_world_state) {
  cp_scene s;
  cp_error err;
  cp_scene_options po = cp_scene_options_defaults();
  cr_assert_eq(cp_scene_load(odd_scene(), &po, &s, &err), 0, "%s: %s",
               err.where, err.msg);
  cp_world *w;
  cr_assert_eq(cp_world_create(&s, NULL, &w, &err), CP_WORLD_OK, "%s",
               err.msg);
  cp_state_layout l;
  cr_assert_eq(cp_state_layout_init(&l, &s), 0);
  cr_assert_eq(l.n, cp_world_state_size(w));
  cr_assert_eq(l.n, 3 * 13 + 2 * 2);
  double x[64];
  cp_world_get_state(w, x);
  cr_assert_eq(cp_state_body_at(&l, 0), -1);
  cr_assert_eq(cp_state_body_at(&l, 2), -1);
  for (int b = 0; b < s.n_bodies; ++b) {
    const cp_body *bd = &s.bodies[b];
    int at = cp_state_body_at(&l, b);
    if (bd->fixed) continue;
    for (int k = 0; k < 3; ++k) {
      cr_assert_eq(x[at + k], bd->x[k]);
      cr_assert_eq(x[at + 7 + k], bd->v[k]);
      cr_assert_eq(x[at + 10 + k], bd->w[k]);
    }
    for (int k = 0; k < 4; ++k) cr_assert_eq(x[at + 3 + k], bd->q[k]);
  }
  cr_assert_eq(x[cp_state_body_at(&l, 1) + 7], 0.5); /* a,b moves */
  cr_assert_eq(x[cp_state_body_at(&l, 4) + 8], 0.1); /* c\r\nd too */
  const cp_chain *c = &s.manips[0];
  cr_assert_eq(c->n, 3);
  cr_assert(c->joints[1].is_mimic);
  cr_assert_eq(cp_state_joint_at(&l, 0, 1), -1);
  cr_assert_eq(cp_state_joint_at(&l, 0, 3), -1);
  cr_assert_eq(cp_state_joint_at(&l, 1, 0), -1);
  int j1 = cp_state_joint_at(&l, 0, 0), j3 = cp_state_joint_at(&l, 0, 2);
  cr_assert_eq(j1, 39);
  cr_assert_eq(j3, 41);
  cr_assert_eq(x[j1], 0.25);
  cr_assert_eq(x[j1 + 1], 0.5);
  cr_assert_eq(x[j3], -0.125);
  cr_assert_eq(x[j3 + 1], 0.0);
  cr_assert_eq(c->joints[0].position, 0.25);
  /* Names: the hand-written header, and entry_of the inverse of the
   * offsets. */
  char names[64][32], buf[8];
  int nn = odd_header(names);
  cr_assert_eq(nn, l.n + 1);
  for (int i = 0; i < l.n; ++i) {
    char col[64];
    cr_assert_eq(cp_state_column_name(&l, &s, i, col, sizeof col),
                 (int)strlen(names[i + 1]));
    cr_assert_str_eq(col, names[i + 1]);
    /* snprintf semantics: the full length whatever the buffer */
    cr_assert_eq(cp_state_column_name(&l, &s, i, buf, sizeof buf),
                 (int)strlen(names[i + 1]));
    cp_state_entry e;
    cr_assert_eq(cp_state_entry_of(&l, i, &e), 0);
    int base = e.is_joint ? cp_state_joint_at(&l, e.manip, e.joint)
                          : cp_state_body_at(&l, e.body);
    cr_assert_eq(base + e.component, i);
  }
  cp_state_entry e;
  cr_assert_eq(cp_state_entry_of(&l, l.n, &e), -1);
  cr_assert_eq(cp_state_entry_of(&l, -1, &e), -1);
  cr_assert_eq(cp_state_owner_name(&l, &s, 41, buf, sizeof buf), 5);
  cr_assert_str_eq(buf, "m/j\"3");
  cp_state_layout_free(&l);
  cp_world_destroy(w);
  cp_scene_free(&s);
}

/* Runs complan (exit 0), reads its CSV strictly, checks the first columns
 * of the header against the hand-written ones; returns their number. */
static int run_and_read(const char *const *argv, const char *csv,
                        csv_doc *d, char names[][32]) {
  char *out, *err;
  int rc = cpt_run(argv, &out, &err);
  cr_assert_eq(rc, 0, "%s", err);
  free(out);
  free(err);
  csv_read(csv, d);
  int nn = odd_header(names);
  cr_assert_geq(d->width[0], nn);
  for (int i = 0; i < nn; ++i) cr_assert_str_eq(d->field[0][i], names[i]);
  return nn;
}

/* simulate --csv: read back by the strict reader, the header is the
 * hand-written one, every row as wide, the first row the start state. */
Test(outputs, simulate_csv_is_rfc4180) {
  const char *scene = odd_scene(), *csv = in_dir("odd.csv");
  const char *argv[] = {"complan", "simulate", scene, "--duration", "0.01",
                        "--csv", csv, NULL};
  csv_doc d;
  char names[64][32];
  int nn = run_and_read(argv, csv, &d, names);
  cr_assert_eq(d.width[0], nn);
  csv_check_widths(&d, nn, nn);
  cr_assert_eq(d.n, 1 + 11); /* start + 10 steps */
  cr_assert_eq(strtod(d.field[1][0], NULL), 0.0);
  cr_assert_eq(strtod(d.field[1][1 + 7], NULL), 0.5);   /* a,b.vx */
  cr_assert_eq(strtod(d.field[1][40], NULL), 0.25);     /* m/j,1.q */
  cr_assert_float_eq(strtod(d.field[11][1], NULL), 0.5 * 0.01, 1e-12);
  csv_free(&d);
}

/* A task on the odd scene: its input is the joint after the mimic one
 * (its row is 1, not 2). */
static const char *odd_task(void) {
  const char *scene = odd_scene();
  static char text[2048];
  snprintf(text, sizeof text,
           "{\"name\": \"odd\", \"scene\": \"%s\", \"mode\": \"dynamic\",\n"
           " \"inputs\": {\"m/j\\\"3\": {\"values\": [0, 1]}},\n"
           " \"action\": {\"duration\": 0.1, \"dt\": 0.01},\n"
           " \"goal\": {\"body\": \"a,b\", \"position\": [0.05, 0, 0.5], "
           "\"tolerance\": 0.01},\n"
           " \"bounds\": {\"min\": [-3, -3, -3], \"max\": [3, 3, 3]},\n"
           " \"search\": {\"method\": \"astar\"}, \"limits\": {\"nodes\": 50}}\n",
           scene);
  const char *path = in_dir("odd_task.json");
  write_text(path, text);
  return path;
}

static void plan_into(const char *task, const char *db) {
  const char *argv[] = {"complan", "plan", task, "--db", db, "--json",
                        "--max-seconds", "3600", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")),
                   "solved");
  cr_assert_eq(json_integer_value(json_object_get(doc, "length")), 1);
  json_decref(doc);
}

Test(outputs, replay_csv_is_rfc4180) {
  const char *db = in_dir("odd.sqlite"), *csv = in_dir("odd_replay.csv");
  plan_into(odd_task(), db);
  const char *argv[] = {"complan", "replay", "--db", db, "--verify", "--csv",
                        csv, NULL};
  csv_doc d;
  char names[64][32];
  int nn = run_and_read(argv, csv, &d, names);
  cr_assert_eq(d.width[0], nn + 2);
  cr_assert_str_eq(d.field[0][nn], "action");
  cr_assert_str_eq(d.field[0][nn + 1], "m/j\"3.input");
  csv_check_widths(&d, nn + 2, nn + 1); /* no input value at the start */
  cr_assert_eq(d.n, 1 + 1 + 10);
  cr_assert_str_eq(d.field[1][nn], "-1");
  cr_assert_str_eq(d.field[1][nn + 1], "");
  cr_assert_str_eq(d.field[2][nn], d.field[11][nn]);
  csv_free(&d);
}

/* The Panda (a mimic finger joint): replay's header and rows have the same
 * width, the follower has no column. */
Test(outputs, panda_replay_csv_widths) {
  const char *data = getenv("CP_TEST_DATA");
  char scene[2048], task[1024];
  snprintf(scene, sizeof scene,
           "{\"packages\": {\"example-robot-data\": "
           "\"%s/robots/example-robot-data\"},\n"
           " \"gravity\": [0, 0, 0],\n"
           " \"bodies\": [{\"name\": \"box\", \"mass\": 0.5, \"shape\": "
           "{\"type\": \"box\", \"size\": [0.1, 0.1, 0.1]}, \"position\": "
           "[2, 0, 0.5], \"velocity\": [0.5, 0, 0]}],\n"
           " \"manipulators\": [{\"name\": \"r\", \"urdf\": "
           "\"%s/robots/example-robot-data/robots/panda_description/urdf/"
           "panda_collision.urdf\",\n"
           "   \"state\": {\"panda_joint4\": {\"position\": -1.5}}}]}\n",
           data, data);
  write_text(in_dir("panda.json"), scene);
  snprintf(task, sizeof task,
           "{\"name\": \"panda\", \"scene\": \"%s\", \"mode\": \"dynamic\",\n"
           " \"inputs\": {\"r/panda_finger_joint1\": {\"values\": [0]}},\n"
           " \"action\": {\"duration\": 0.1, \"dt\": 0.01},\n"
           " \"goal\": {\"body\": \"box\", \"position\": [2.05, 0, 0.5], "
           "\"tolerance\": 0.01},\n"
           " \"bounds\": {\"min\": [-3, -3, -3], \"max\": [3, 3, 3]},\n"
           " \"search\": {\"method\": \"astar\"}, \"limits\": {\"nodes\": 10}}\n",
           in_dir("panda.json"));
  write_text(in_dir("panda_task.json"), task);
  const char *db = in_dir("panda.sqlite"), *csv = in_dir("panda.csv");
  plan_into(in_dir("panda_task.json"), db);
  const char *argv[] = {"complan", "replay", "--db", db, "--csv", csv, NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(argv, &out, &err), 0, "%s", err);
  free(out);
  free(err);
  csv_doc d;
  csv_read(csv, &d);
  /* t, the box, 8 joint rows (7 arm joints and the finger leader), action
   * and the one input */
  int width = 1 + 13 + 2 * 8 + 1 + 1;
  csv_check_widths(&d, width, width - 1);
  for (int i = 0; i < width; ++i)
    cr_assert_null(strstr(d.field[0][i], "panda_finger_joint2"), "%s",
                   d.field[0][i]);
  cr_assert_str_eq(d.field[0][28], "r/panda_finger_joint1.q");
  cr_assert_str_eq(d.field[0][30], "action");
  csv_free(&d);
}

/* ---- atomic outputs --------------------------------------------------- */

/* Runs complan with a umask (< 0: inherited) and the hold hook's FIFO (NULL:
 * none), stdout and stderr to files in the test folder; returns the pid. */
static pid_t spawn(const char *const *argv, int mask, const char *hold) {
  const char *exe = getenv("CP_COMPLAN");
  cr_assert(exe);
  int argc = 0;
  while (argv[argc]) argc++;
  char **args = calloc((size_t)argc + 1, sizeof *args);
  args[0] = (char *)exe;
  for (int i = 1; i < argc; i++) args[i] = (char *)argv[i];
  char o[600], e[600];
  snprintf(o, sizeof o, "%s/../%s.out", dir, dir + 5);
  snprintf(e, sizeof e, "%s/../%s.err", dir, dir + 5);
  pid_t pid = fork();
  cr_assert(pid >= 0);
  if (pid == 0) {
    if (mask >= 0) umask((mode_t)mask);
    signal(SIGINT, SIG_DFL); /* whatever the test runner had */
    signal(SIGTERM, SIG_DFL);
    if (hold) setenv("COMPLAN_TEST_HOLD_OUTPUT", hold, 1);
    else unsetenv("COMPLAN_TEST_HOLD_OUTPUT");
    int nul = open("/dev/null", O_RDONLY);
    int ofd = open(o, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    int efd = open(e, O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(nul, 0);
    dup2(ofd, 1);
    dup2(efd, 2);
    execv(exe, args);
    _exit(127);
  }
  free(args);
  return pid;
}

/* The captured stdout (which = 'o') or stderr ('e') of the last spawn. */
static char *captured(char which) {
  char p[600];
  snprintf(p, sizeof p, "%s/../%s.%s", dir, dir + 5,
           which == 'o' ? "out" : "err");
  size_t len;
  char *t = cpt_read_file(p, &len);
  unlink(p);
  return t ? t : strdup("");
}

static int wait_exit(pid_t pid) {
  int st;
  cr_assert_eq(waitpid(pid, &st, 0), pid);
  cr_assert(WIFEXITED(st), "the command did not exit (signal %d)",
            WIFSIGNALED(st) ? WTERMSIG(st) : 0);
  return WEXITSTATUS(st);
}

static mode_t mode_of(const char *path) {
  struct stat st;
  cr_assert_eq(stat(path, &st), 0, "%s: %s", path, strerror(errno));
  return st.st_mode & 0777;
}

/* A page that cannot be written: exit 2, nothing on stdout (the summary
 * and the JSON are not printed), the CSV not written either, no temporary
 * file left. Where the page's temporary file cannot be created (no such
 * folder; a folder in the way), and where it is made and its rename fails
 * (a folder put in the way while the write is held). */
Test(outputs, unwritable_page_exit_2_and_nothing_left) {
  const char *db = in_dir("odd.sqlite");
  plan_into(odd_task(), db);
  mkdir(in_dir("page.html"), 0755);
  const char *pages[] = {in_dir("page.html"), in_dir("nodir/page.html")};
  for (int k = 0; k < 2; ++k)
    for (int json = 0; json < 2; ++json) {
      const char *argv[] = {"complan", "replay", "--db", db, "--csv",
                            in_dir("out.csv"), "--html", pages[k],
                            json ? "--json" : NULL, NULL};
      char *out, *err;
      int rc = cpt_run(argv, &out, &err);
      cr_assert_eq(rc, 2, "page %d: exit %d; stderr %s", k, rc, err);
      cr_assert_str_eq(out, "", "page %d: stdout holds '%s'", k, out);
      cr_assert(strstr(err, pages[k]) && strstr(err, "cannot create"), "%s",
                err);
      const char *keep[] = {"odd.urdf", "odd.json", "odd_task.json",
                            "odd.sqlite", "odd.sqlite-wal", "odd.sqlite-shm",
                            "page.html", NULL};
      char list[1024];
      cr_assert_eq(strays(keep, list, sizeof list), 0, "left:%s", list);
      free(out);
      free(err);
    }
  /* the folder in the way is untouched and empty */
  DIR *d = opendir(in_dir("page.html"));
  int n = 0;
  while (readdir(d)) ++n;
  closedir(d);
  cr_assert_eq(n, 2);
  rmdir(in_dir("page.html"));

  /* the rename fails: a folder appears at the page's name during the hold */
  const char *fifo = in_dir("hold.fifo"), *page = in_dir("late.html");
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  const char *argv[] = {"complan", "replay", "--db", db, "--csv",
                        in_dir("out.csv"), "--html", page, "--json", NULL};
  pid_t pid = spawn(argv, -1, fifo);
  int fd = open(fifo, O_WRONLY);
  cr_assert(fd >= 0);
  cr_assert_eq(mkdir(page, 0755), 0);
  close(fd);
  int rc = wait_exit(pid);
  char *out = captured('o'), *err = captured('e');
  cr_assert_eq(rc, 2, "exit %d: %s", rc, err);
  cr_assert_str_eq(out, "");
  cr_assert(strstr(err, "late.html: cannot write: Is a directory"), "%s", err);
  free(out);
  free(err);
  unlink(fifo);
  rmdir(page);
  const char *keep[] = {"odd.urdf", "odd.json", "odd_task.json",
                        "odd.sqlite", "odd.sqlite-wal", "odd.sqlite-shm", NULL};
  char list[1024];
  cr_assert_eq(strays(keep, list, sizeof list), 0, "left:%s", list);
}

/* The same for simulate: a page or a CSV in a folder's way, with and
 * without --json. */
Test(outputs, simulate_unwritable_output_exit_2_and_nothing_left) {
  const char *scene = odd_scene();
  mkdir(in_dir("busy"), 0755);
  const char *const runs[][2] = {{in_dir("s.csv"), in_dir("busy")},
                                 {in_dir("busy"), in_dir("s.html")},
                                 {in_dir("busy"), NULL}};
  for (int k = 0; k < 3; ++k)
    for (int json = 0; json < 2; ++json) {
      const char *argv[12] = {"complan", "simulate", scene, "--duration",
                              "0.01", "--csv", runs[k][0]};
      int n = 7;
      if (runs[k][1]) {
        argv[n++] = "--html";
        argv[n++] = runs[k][1];
      }
      if (json) argv[n++] = "--json";
      argv[n] = NULL;
      char *out, *err;
      int rc = cpt_run(argv, &out, &err);
      cr_assert_eq(rc, 2, "run %d: exit %d; stderr %s", k, rc, err);
      cr_assert_str_eq(out, "", "run %d: stdout holds '%s'", k, out);
      cr_assert(strstr(err, "busy: cannot create: Is a directory"), "%s", err);
      const char *keep[] = {"odd.urdf", "odd.json", "busy", NULL};
      char list[1024];
      cr_assert_eq(strays(keep, list, sizeof list), 0, "left:%s", list);
      free(out);
      free(err);
    }
}

/* SIGINT or SIGTERM while an output is being written (held at the hook,
 * with its whole content in the temporary file): the process dies of the
 * signal and leaves neither the temporary file nor the target. Without the
 * signal the same run completes (the hold is only a pause). */
static void interrupted_write(const char *const *argv, const char *target,
                              int sig) {
  const char *fifo = in_dir("hold.fifo");
  unlink(fifo);
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  pid_t pid = spawn(argv, -1, fifo);
  /* Opening the FIFO returns once the command holds in its commit. */
  int fd = open(fifo, O_WRONLY);
  cr_assert(fd >= 0);
  const char *base = strrchr(target, '/') + 1;
  DIR *d = opendir(dir);
  int temps = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    temps += !strncmp(e->d_name, base, strlen(base)) &&
             e->d_name[strlen(base)] == '.' &&
             strlen(e->d_name) == strlen(base) + 7;
  closedir(d);
  cr_assert_eq(temps, 1, "no temporary file while the write is held");
  cr_assert_neq(access(target, F_OK), 0, "the target exists before commit");
  if (sig) {
    cr_assert_eq(kill(pid, sig), 0);
    int st;
    cr_assert_eq(waitpid(pid, &st, 0), pid);
    close(fd);
    cr_assert(WIFSIGNALED(st) && WTERMSIG(st) == sig,
              "status %d: not killed by signal %d", st, sig);
    cr_assert_neq(access(target, F_OK), 0, "the target was written");
  } else {
    close(fd); /* end of the hold: the command goes on */
    int rc = wait_exit(pid);
    char *err = captured('e');
    cr_assert_eq(rc, 0, "%s", err);
    free(err);
    cr_assert_eq(access(target, F_OK), 0, "no target after the hold");
    unlink(target);
  }
  free(captured('o'));
  free(captured('e'));
  unlink(fifo);
  const char *keep[] = {"odd.urdf", "odd.json", "odd_task.json",
                        "odd.sqlite", "odd.sqlite-wal", "odd.sqlite-shm",
                        NULL};
  char list[1024];
  cr_assert_eq(strays(keep, list, sizeof list), 0, "left:%s", list);
}

Test(outputs, signal_during_simulate_csv_leaves_nothing) {
  const char *csv = in_dir("sim.csv");
  const char *argv[] = {"complan", "simulate", odd_scene(), "--duration",
                        "0.01", "--csv", csv, NULL};
  interrupted_write(argv, csv, SIGINT);
  interrupted_write(argv, csv, SIGTERM);
  interrupted_write(argv, csv, 0);
}

Test(outputs, signal_during_replay_page_leaves_nothing) {
  const char *db = in_dir("odd.sqlite"), *page = in_dir("replay.html");
  plan_into(odd_task(), db);
  const char *argv[] = {"complan", "replay", "--db", db, "--html", page,
                        NULL};
  interrupted_write(argv, page, SIGTERM);
  interrupted_write(argv, page, SIGINT);
  interrupted_write(argv, page, 0);
}

/* New files get 0666 less the umask: 027 -> 0640, 077 -> 0600, 022 ->
 * 0644; for simulate's CSV and page and replay's. */
Test(outputs, files_honour_the_umask) {
  const char *scene = odd_scene(), *db = in_dir("odd.sqlite");
  plan_into(odd_task(), db);
  static const int masks[] = {027, 077, 022};
  for (int k = 0; k < 3; ++k) {
    const char *sim[] = {"complan", "simulate", scene, "--duration", "0.01",
                         "--csv", in_dir("s.csv"), "--html", in_dir("s.html"),
                         NULL};
    const char *rep[] = {"complan", "replay", "--db", db, "--csv",
                         in_dir("r.csv"), "--html", in_dir("r.html"), NULL};
    cr_assert_eq(wait_exit(spawn(sim, masks[k], NULL)), 0);
    cr_assert_eq(wait_exit(spawn(rep, masks[k], NULL)), 0);
    free(captured('o'));
    free(captured('e'));
    mode_t want = 0666 & ~(mode_t)masks[k];
    const char *files[] = {"s.csv", "s.html", "r.csv", "r.html"};
    for (int f = 0; f < 4; ++f) {
      cr_assert_eq(mode_of(in_dir(files[f])), want, "%s under umask %03o: %03o",
                   files[f], masks[k], mode_of(in_dir(files[f])));
      unlink(in_dir(files[f]));
    }
  }
}

/* The library: a commit that cannot rename removes its temporary file and
 * says why; discard and the signal-safe cleanup remove theirs; the list's
 * capacity is an error, not an overflow. */
Test(outputs, outfile_library) {
  cp_error err;
  mkdir(in_dir("busy"), 0755);
  cr_assert_null(cp_outfile_open(in_dir("busy"), &err));
  cr_assert(strstr(err.msg, "busy: cannot create: Is a directory"), "%s",
            err.msg);
  cp_outfile *o = cp_outfile_open(in_dir("late"), &err);
  cr_assert(o);
  fputs("x\n", cp_outfile_stream(o));
  mkdir(in_dir("late"), 0755); /* in the way of the rename */
  cr_assert_eq(cp_outfile_commit(o, &err), -1);
  cr_assert(strstr(err.msg, "late: cannot write: Is a directory"), "%s",
            err.msg);
  rmdir(in_dir("late"));

  o = cp_outfile_open(in_dir("gone.txt"), &err);
  cr_assert(o);
  cp_outfile_discard(o);

  cp_outfile *held[CP_OUTFILE_MAX_PENDING];
  for (int i = 0; i < CP_OUTFILE_MAX_PENDING; ++i) {
    held[i] = cp_outfile_open(in_dir("many.txt"), &err);
    cr_assert(held[i], "%d: %s", i, err.msg);
  }
  cr_assert_null(cp_outfile_open(in_dir("one_more.txt"), &err));
  cr_assert(strstr(err.msg, "too many output files at once"), "%s", err.msg);
  cp_outfile_remove_pending(); /* what the signal handler does */
  const char *keep[] = {"busy", NULL};
  char list[4096];
  cr_assert_eq(strays(keep, list, sizeof list), 0, "left:%s", list);
  for (int i = 0; i < CP_OUTFILE_MAX_PENDING; ++i) {
    cr_assert_eq(cp_outfile_commit(held[i], &err), -1); /* temp gone */
    cr_assert(strstr(err.msg, "No such file"), "%s", err.msg);
  }

  cr_assert_eq(cp_outfile_write_all(in_dir("all.txt"), "abc", 3, &err), 0);
  size_t len;
  char *t = cpt_read_file(in_dir("all.txt"), &len);
  cr_assert_str_eq(t, "abc");
  free(t);
}

/* Task inputs address the world's joint rows: an input on a mimic follower
 * is refused at parse time naming its leader (it has no row of its own). */
Test(outputs, task_input_on_a_mimic_follower_is_refused) {
  const char *task = odd_task();
  size_t len;
  char *text = cpt_read_file(task, &len);
  char *at = strstr(text, "j\\\"3");
  cr_assert(at);
  at[3] = '2'; /* m/j"2: the follower */
  write_text(task, text);
  free(text);
  const char *argv[] = {"complan", "plan", task, "--db", in_dir("x.sqlite"),
                        NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(argv, &out, &err), 2, "%s", err);
  cr_assert_str_eq(out, "");
  cr_assert(strstr(err, "inputs.m/j\"2: joint \"m/j\"2\" mimics \"j,1\""),
            "%s", err);
  free(out);
  free(err);
}

/* ---- names of any length ---------------------------------------------- */

/* Replaces the first `from` in text (malloc'd) by `to`. */
static char *replace(char *text, const char *from, const char *to) {
  char *at = strstr(text, from);
  cr_assert(at, "no '%s'", from);
  size_t n = strlen(text) - strlen(from) + strlen(to) + 1;
  char *out = malloc(n);
  snprintf(out, n, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
  free(text);
  return out;
}

/* The same for the JSON string "from" (quotes included). */
static char *replace_string(char *text, const char *from, const char *to) {
  char *f = malloc(strlen(from) + 3), *t = malloc(strlen(to) + 3);
  sprintf(f, "\"%s\"", from);
  sprintf(t, "\"%s\"", to);
  text = replace(text, f, t);
  free(f);
  free(t);
  return text;
}

/* A joint and a link named with 300 bytes each (the "manip/joint" name is
 * 307): the task parser accepts them and so does everything after it --
 * planning, replay --verify and its CSV, simulate's, solve's, stability's
 * and contacts' JSON -- with the names whole. */
Test(outputs, names_over_255_bytes_accepted_everywhere) {
  char joint[301], link[301], full[400];
  memset(joint, 'j', 300);
  memset(link, 'L', 300);
  joint[300] = link[300] = '\0';
  snprintf(full, sizeof full, "finger/%s", joint);
  const char *root = getenv("CP_SOURCE_ROOT");
  char path[512];
  size_t len;
  snprintf(path, sizeof path, "%s/models/scenes/plan_push.json", root);
  char *scene = cpt_read_file(path, &len);
  cr_assert(scene);
  scene = replace_string(scene, "slide", joint);
  scene = replace_string(scene, "rod", link);
  const char *scene_path = in_dir("long.json");
  write_text(scene_path, scene);
  /* the rod touching the box: a contact naming the link */
  scene = replace(scene, "[-0.26, 0.0, 0.05]", "[-0.25, 0.0, 0.05]");
  const char *touch_path = in_dir("long_touch.json");
  write_text(touch_path, scene);
  free(scene);
  snprintf(path, sizeof path, "%s/planner/tasks/push.json", root);
  char *task = cpt_read_file(path, &len);
  cr_assert(task);
  task = replace_string(task, "../../models/scenes/plan_push.json", scene_path);
  task = replace_string(task, "finger/slide", full);
  const char *task_path = in_dir("long_task.json");
  write_text(task_path, task);
  free(task);

  const char *db = in_dir("long.sqlite"), *csv = in_dir("long.csv");
  char col[420];
  const char *plan[] = {"complan", "plan", task_path, "--db", db, "--json",
                        "--max-seconds", "3600", NULL};
  json_t *doc = cpt_run_json(plan, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")),
                   "solved");
  json_decref(doc);
  /* the plan's printout (text) names the input whole */
  const char *plan_text[] = {"complan", "plan", task_path, "--db",
                             in_dir("long_text.sqlite"), "--max-seconds",
                             "3600", NULL};
  char *out, *err;
  cr_assert_eq(cpt_run(plan_text, &out, &err), 0, "%s", err);
  snprintf(col, sizeof col, "%s=", full);
  cr_assert(strstr(out, col), "%s", out);
  free(out);
  free(err);
  const char *rep[] = {"complan", "replay", "--db", db, "--verify", "--csv",
                       csv, "--json", NULL};
  doc = cpt_run_json(rep, 0);
  cr_assert(json_is_true(json_object_get(doc, "verified")));
  json_decref(doc);
  csv_doc d;
  csv_read(csv, &d);
  snprintf(col, sizeof col, "%s.qd", full);
  cr_assert_str_eq(d.field[0][1 + 13 + 1], col);
  snprintf(col, sizeof col, "%s.input", full);
  cr_assert_str_eq(d.field[0][1 + 13 + 2 + 1], col);
  csv_check_widths(&d, 1 + 13 + 2 + 2, 1 + 13 + 2 + 1);
  csv_free(&d);

  const char *sim[] = {"complan", "simulate", scene_path, "--duration",
                       "0.01", "--json", NULL};
  doc = cpt_run_json(sim, 0);
  json_t *j = json_array_get(
      json_object_get(json_object_get(doc, "final"), "joints"), 0);
  cr_assert_str_eq(json_string_value(json_object_get(j, "name")), full);
  json_decref(doc);
  const char *solve[] = {"complan", "solve", scene_path, "--json", NULL};
  doc = cpt_run_json(solve, 0);
  j = json_array_get(json_object_get(doc, "joints"), 0);
  cr_assert_str_eq(json_string_value(json_object_get(j, "name")), full);
  json_decref(doc);
  /* sideways gravity: the free joint moves, the stability answer names it */
  scene = cpt_read_file(scene_path, &len);
  scene = replace(scene, "[0.0, 0.0, -9.81]", "[1.0, 0.0, -9.81]");
  const char *tilt_path = in_dir("long_tilt.json");
  write_text(tilt_path, scene);
  free(scene);
  const char *stab[] = {"complan", "stability", tilt_path, "--json", NULL};
  doc = cpt_run_json(stab, 0);
  cr_assert(json_is_false(json_object_get(doc, "stable")));
  json_t *moving = json_object_get(doc, "moving");
  int found = 0;
  for (size_t i = 0; i < json_array_size(moving); ++i)
    found |= !strcmp(json_string_value(json_array_get(moving, i)), full);
  cr_assert(found, "the joint is not among the moving rows");
  json_decref(doc);
  snprintf(full, sizeof full, "finger/%s", link);
  const char *con[] = {"complan", "contacts", touch_path, "--json", NULL};
  doc = cpt_run_json(con, 0);
  json_t *cs = json_object_get(doc, "contacts");
  found = 0;
  for (size_t i = 0; i < json_array_size(cs); ++i) {
    json_t *c = json_array_get(cs, i);
    found |= !strcmp(json_string_value(json_object_get(c, "a")), full) ||
             !strcmp(json_string_value(json_object_get(c, "b")), full);
  }
  cr_assert(found, "no contact names the link whole");
  json_decref(doc);
}

/* experiment paper's files go through the same helper: the umask, the
 * final newline, a folder in the way refused with the path in `where`. */
Test(outputs, paper_files_are_atomic_outputs) {
  umask(027);
  cp_error err;
  cr_assert_eq(cp_paper_write_file(dir, "r.md", "# report", &err), 0, "%s",
               err.msg);
  size_t len;
  char *t = cpt_read_file(in_dir("r.md"), &len);
  cr_assert_str_eq(t, "# report\n");
  free(t);
  cr_assert_eq(mode_of(in_dir("r.md")), 0640);
  mkdir(in_dir("sub"), 0755);
  cr_assert_eq(cp_paper_write_file(dir, "sub", "x", &err), -1);
  cr_assert_str_eq(err.where, in_dir("sub"));
  cr_assert_str_eq(err.msg, "cannot create: Is a directory");
  cr_assert_eq(err.code, CP_ERR_IO, "a file that cannot be made is an I/O error");
  const char *keep[] = {"r.md", "sub", NULL};
  char list[1024];
  cr_assert_eq(strays(keep, list, sizeof list), 0, "left:%s", list);
}
