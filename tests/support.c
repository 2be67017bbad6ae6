#define _DEFAULT_SOURCE /* mkstemps */
#include "tests/support.h"
#include "contact/lcpio.h"
#include "models/error.h"

#include <criterion/criterion.h>
#include <jansson.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

const char *cpt_data(const char *rel) {
  static char buf[4096];
  const char *root = getenv("CP_TEST_DATA");
  snprintf(buf, sizeof buf, "%s/%s", root ? root : "tests/data", rel);
  return buf;
}

char *cpt_read_file(const char *path, size_t *len) {
  cp_error err;
  return cp_read_file(path, len, &err);
}

char *cpt_temp_file(const char *text, const char *suffix) {
  const char *dir = getenv("TMPDIR");
  char tmpl[4096];
  snprintf(tmpl, sizeof tmpl, "%s/cptestXXXXXX%s", dir ? dir : "/tmp",
           suffix ? suffix : "");
  int fd = mkstemps(tmpl, suffix ? (int)strlen(suffix) : 0);
  if (fd < 0) return NULL;
  size_t len = strlen(text);
  if (write(fd, text, len) != (ssize_t)len) { close(fd); return NULL; }
  close(fd);
  return strdup(tmpl);
}

static char *slurp_fd(int fd) {
  size_t cap = 4096, n = 0;
  char *s = malloc(cap);
  for (;;) {
    if (n + 1 >= cap) s = realloc(s, cap *= 2);
    ssize_t k = read(fd, s + n, cap - n - 1);
    if (k <= 0) break;
    n += (size_t)k;
  }
  s[n] = '\0';
  return s;
}

int cpt_run(const char *const *argv, char **out, char **err) {
  const char *exe = getenv("CP_COMPLAN");
  cr_assert_not_null(exe, "CP_COMPLAN is not set (run the tests with meson test)");
  int argc = 0;
  while (argv[argc]) argc++;
  char **args = calloc((size_t)argc + 1, sizeof *args);
  args[0] = (char *)exe;
  for (int i = 1; i < argc; i++) args[i] = (char *)argv[i];
  /* Capture through temporary files: no risk of a pipe deadlock. */
  char o_path[] = "/tmp/cptoutXXXXXX", e_path[] = "/tmp/cpterrXXXXXX";
  int ofd = mkstemp(o_path), efd = mkstemp(e_path);
  cr_assert(ofd >= 0 && efd >= 0);
  pid_t pid = fork();
  if (pid == 0) {
    int nul = open("/dev/null", O_RDONLY);
    dup2(nul, 0);
    dup2(ofd, 1);
    dup2(efd, 2);
    execv(exe, args);
    _exit(127);
  }
  int st = 0;
  waitpid(pid, &st, 0);
  free(args);
  lseek(ofd, 0, SEEK_SET);
  lseek(efd, 0, SEEK_SET);
  char *o = slurp_fd(ofd), *e = slurp_fd(efd);
  close(ofd);
  close(efd);
  unlink(o_path);
  unlink(e_path);
  if (out) *out = o; else free(o);
  if (err) *err = e; else free(e);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

json_t *cpt_run_json(const char *const *argv, int expect_rc) {
  char *out, *err;
  int rc = cpt_run(argv, &out, &err);
  cr_assert_eq(rc, expect_rc, "exit %d (expected %d); stderr: %s", rc, expect_rc, err);
  json_error_t je;
  json_t *doc = json_loads(out, 0, &je);
  cr_assert_not_null(doc, "stdout is not one JSON document: %s\n%s", je.text, out);
  free(out);
  free(err);
  return doc;
}

void cpt_assert_lcp_solution(int n, const double *M, const double *q,
                             const double *z, double tol) {
  for (int i = 0; i < n; i++) {
    double w = q[i];
    for (int j = 0; j < n; j++) w += M[i + (size_t)j * n] * z[j];
    cr_assert(isfinite(z[i]) && isfinite(w), "non-finite entry at %d", i);
    cr_assert(z[i] >= -tol, "z[%d] = %g < 0", i, z[i]);
    cr_assert(w >= -tol, "w[%d] = %g < 0", i, w);
    cr_assert(fabs(z[i] * w) <= tol, "z[%d] w[%d] = %g != 0", i, i, z[i] * w);
  }
}

uint64_t cpt_rand(uint64_t *s) {
  uint64_t x = (*s += 0x9E3779B97F4A7C15ull);
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

double cpt_uniform(uint64_t *s, double lo, double hi) {
  return lo + (hi - lo) * (double)(cpt_rand(s) >> 11) * 0x1.0p-53;
}

json_t *cpt_page_data(const char *path) {
  size_t len;
  char *page = cpt_read_file(path, &len);
  cr_assert(page, "no page %s", path);
  const char *tag = "id=\"complan-data\">";
  char *a = strstr(page, tag);
  cr_assert(a, "%s: no data", path);
  a += strlen(tag);
  char *b = strstr(a, "</script>");
  cr_assert(b, "%s: the data does not end", path);
  json_error_t je;
  json_t *d = json_loadb(a, (size_t)(b - a), 0, &je);
  cr_assert(d, "%s", je.text);
  free(page);
  return d;
}

void cpt_load_lcp(const char *rel, struct cp_lcp *lcp) {
  size_t len;
  char *text = cpt_read_file(cpt_data(rel), &len);
  cr_assert_not_null(text, "cannot read %s", rel);
  cp_error err;
  cr_assert_eq(cp_lcp_parse(text, len, lcp, &err), 0, "%s: %s", rel, err.msg);
  free(text);
}
