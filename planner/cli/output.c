#include "planner/cli/output.h"
#include "contact/glpkout.h"
#include "models/jsonread.h"

#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cp_cli_read_input(const char *path, char **text, size_t *len) {
  cp_error err;
  *text = cp_read_file(path, len, &err);
  /* The reader's message names the file and says why, as a scene's does:
   * `complan: PATH: cannot open PATH: REASON`. */
  return *text ? CP_EXIT_ANSWERED : cp_cli_input_error(path, &err);
}

char *cp_cli_read_file(const char *path, size_t *len) {
  char *text;
  (void)cp_cli_read_input(path, &text, len);
  return text;
}

int cp_cli_input_error(const char *file, const cp_error *err) {
  if (err->where[0])
    fprintf(stderr, "complan: %s: %s: %s\n", file, err->where, err->msg);
  else
    fprintf(stderr, "complan: %s: %s\n", file, err->msg);
  return cp_cli_exit_of(err);
}

static void glpk_to_stderr(void *ctx, const char *text) {
  (void)ctx;
  fputs(text, stderr);
}

void cp_cli_verbose(void) { cp_glpk_set_sink(glpk_to_stderr, NULL); }

int cp_cli_exit_of(const cp_error *err) {
  // Running out of memory is not the input's fault (docs/outputs.md: 1).
  return err->code == CP_ERR_NOMEM ? CP_EXIT_UNDECIDED : CP_EXIT_BAD_INPUT;
}

void cp_cli_scene_warnings(const char *file, const cp_scene *scene) {
  for (int i = 0; i < scene->n_warnings; i++)
    fprintf(stderr, "complan: %s: warning: %s\n", file, scene->warnings[i]);
}

/* COMPLAN_CHECKPOINT_PAGES (docs/database.md): the WAL's growth between
 * two checkpoints of the store's helper thread, 0 for SQLite's own inside
 * the commits; unset or empty, the store's default. -1 when malformed. */
static long checkpoint_pages(const char *v) {
  if (!v || !*v) return CP_STORE_CHECKPOINT_PAGES;
  char *end;
  errno = 0;
  long n = strtol(v, &end, 10);
  if (errno || *end || end == v || n < 0 || n > 1000000000L) return -1;
  return n;
}

int cp_cli_open_store(const char *db, int read_only, cp_store **st) {
  *st = NULL;
  if (read_only && access(db, F_OK) != 0) {
    fprintf(stderr, "complan: %s: no such database (%s)\n", db, strerror(errno));
    return CP_EXIT_BAD_INPUT;
  }
  const char *env = getenv("COMPLAN_CHECKPOINT_PAGES");
  long pages = checkpoint_pages(env);
  if (pages < 0) {
    fprintf(stderr,
            "complan: COMPLAN_CHECKPOINT_PAGES=%s: expected a whole number "
            "of pages from 0 to 1000000000 (0: checkpoints inside the "
            "commits)\n",
            env);
    return CP_EXIT_BAD_INPUT;
  }
  char msg[600];
  cp_store_status s = cp_store_open(db, read_only, st, msg, sizeof msg);
  if (s == CP_STORE_OK && !read_only)
    s = cp_store_set_checkpoints(*st, (int)pages);
  if (s == CP_STORE_OK) return 0;
  fprintf(stderr, "complan: %s\n", *st ? cp_store_message(*st) : msg);
  cp_store_close(*st);
  *st = NULL;
  return s == CP_STORE_BAD_FILE ? CP_EXIT_BAD_INPUT : CP_EXIT_UNDECIDED;
}

/* Names of any length (docs/ranges.md): growable buffers, one per slot. */
static const char *name_in_slot(int slot, const char *a, const char *b) {
  static struct {
    char *buf;
    size_t cap;
  } slots[CP_CLI_NAME_SLOTS];
  if (slot < 0 || slot >= CP_CLI_NAME_SLOTS) slot = 0;
  size_t need = strlen(a) + (b ? strlen(b) + 1 : 0) + 1;
  if (need > slots[slot].cap) {
    char *p = realloc(slots[slot].buf, need);
    if (!p) {
      cp_json_note_alloc_failure();
      return "(name: out of memory)";
    }
    slots[slot].buf = p;
    slots[slot].cap = need;
  }
  snprintf(slots[slot].buf, need, b ? "%s/%s" : "%s", a, b);
  return slots[slot].buf;
}

const char *cp_cli_ref_name(const cp_scene *s, cp_ref r, int slot) {
  if (r.body >= 0) return name_in_slot(slot, s->bodies[r.body].name, NULL);
  return name_in_slot(slot, s->manips[r.manip].name,
                      s->manips[r.manip].joints[r.link].link.name);
}

const char *cp_cli_joint_name(const cp_scene *s, int m, int k, int slot) {
  return name_in_slot(slot, s->manips[m].name, s->manips[m].joints[k].name);
}

int cp_cli_usage_error(const char *cmd, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("complan: ", stderr);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fprintf(stderr, "\n(see 'complan %s--help')\n", cmd ? cmd : "");
  return CP_EXIT_BAD_INPUT;
}

json_t *cp_json_num(double x) {
  return isfinite(x) ? json_real(x) : json_null();
}

json_t *cp_json_vec(const double *v, int n) {
  json_t *a = json_array();
  for (int i = 0; i < n; i++) json_array_append_new(a, cp_json_num(v[i]));
  return a;
}

static unsigned long json_failures_base;

void cp_cli_output_begin(void) { json_failures_base = cp_json_alloc_failures(); }

int cp_json_print(json_t *doc) {
  /* Serialised in memory first: stdout gets the whole document or nothing. */
  char *s = cp_json_alloc_failures() == json_failures_base
                ? json_dumps(doc, JSON_REAL_PRECISION(17) | JSON_INDENT(0) | JSON_COMPACT)
                : NULL;
  if (s && cp_json_alloc_failures() != json_failures_base) { /* while dumping */
    free(s);
    s = NULL;
  }
  if (!s) {
    fprintf(stderr, "complan: out of memory writing the JSON document\n");
    return -1;
  }
  int rc = fputs(s, stdout) == EOF || fputc('\n', stdout) == EOF ? -1 : 0;
  free(s);
  return rc;
}

void cp_cli_catch_signals(void (*on_signal)(int)) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESETHAND | SA_RESTART;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
}

void cp_cli_release_signals(void) {
  signal(SIGINT, SIG_DFL);
  signal(SIGTERM, SIG_DFL);
}
