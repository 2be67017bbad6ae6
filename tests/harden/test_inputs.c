/* Hostile and extreme input files (issue 12): tokens read in full, sizes
 * checked before allocating, the format detected and named, and only
 * regular files of bounded size read. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "contact/lcpio.h"
#include "models/error.h"
#include "models/scene.h"
#include "tests/harden/harden.h"

static int parse(const char *text, cp_lcp *lcp, cp_error *err) {
  return cp_lcp_parse(text, strlen(text), lcp, err);
}

/* A number of 76 characters (the example) is read in full, in both
 * M and q; the answer is the right one. */
Test(inputs, dat_long_numbers_read_in_full) {
  char q[128] = "-2.5", m[128] = "0.5";
  for (int i = 0; i < 66; i++) strcat(q, "0");
  strcat(q, "e+01");
  for (int i = 0; i < 80; i++) strcat(m, "0");
  cr_assert_eq(strlen(q), 74);
  char text[512];
  snprintf(text, sizeof text, "1\n0\n1\n1\n1 1\n%s\n%s\n", m, q);
  cp_lcp lcp;
  cp_error err;
  cr_assert_eq(parse(text, &lcp, &err), 0, "%s: %s", err.where, err.msg);
  cr_assert_eq(lcp.M[0], 0.5);
  cr_assert_eq(lcp.q[0], -25.0);
  cp_lcp_free(&lcp);

  /* The CLI gives z = 50 (0.5 z - 25 = 0), not 5 (a cut token read as 2.5). */
  char *f = cpt_temp_file(text, ".dat");
  const char *argv[] = {"complan", "lcp", "solve", f, "--json", NULL};
  json_t *doc = cpt_run_json(argv, 0);
  cr_assert_float_eq(json_number_value(json_array_get(json_object_get(doc, "z"), 0)), 50.0,
                     1e-12);
  json_decref(doc);
  unlink(f);
  free(f);
}

/* A token longer than the reader's limit is rejected with its line. */
Test(inputs, dat_overlong_token_rejected_with_line) {
  char *text = malloc(2000);
  strcpy(text, "1\n0\n1\n1\n1 1\n2\n");
  size_t k = strlen(text);
  memset(text + k, '1', 900);
  strcpy(text + k + 900, "\n");
  cp_lcp lcp;
  cp_error err;
  cr_assert_eq(parse(text, &lcp, &err), -1);
  cr_assert_str_eq(err.where, "line 7");
  cr_assert(strstr(err.msg, "900 characters"), "%s", err.msg);
  free(text);
}

/* A header claiming n = 100000 (80 GB of M) or a size the file cannot hold
 * is rejected at once, before anything is allocated. */
Test(inputs, dat_sizes_checked_before_allocating) {
  cp_lcp lcp;
  cp_error err;
  cr_assert_eq(parse("100000 0 100000 100000 100000 100000 1 2 3", &lcp, &err), -1);
  cr_assert(strstr(err.msg, "at most 10000"), "%s", err.msg);
  cr_assert_eq(parse("9000 0 9000 9000 9000 9000 1 2 3", &lcp, &err), -1);
  cr_assert(strstr(err.msg, "needs 81009000 numbers"), "%s", err.msg);
  cr_assert_str_eq(err.where, "line 1");
  /* The smallest file that holds everything is accepted. */
  cr_assert_eq(parse("2 0 2 2 2 2 1 0 0 1 -1 -1", &lcp, &err), 0, "%s", err.msg);
  cp_lcp_free(&lcp);
}

/* JSON: rows are checked before M is allocated; n above the maximum is
 * named. */
Test(inputs, json_sizes_checked) {
  cp_lcp lcp;
  cp_error err;
  cr_assert_eq(parse("{\"M\": [[1, 2], [3]], \"q\": [1, 2]}", &lcp, &err), -1);
  cr_assert_str_eq(err.where, "M[1]");
  /* q of 10001 zeros: over the maximum. */
  size_t cap = 30 + 2 * 10001;
  char *t = malloc(cap);
  strcpy(t, "{\"M\": [], \"q\": [0");
  char *p = t + strlen(t);
  for (int i = 1; i < 10001; i++, p += 2) memcpy(p, ",0", 2);
  strcpy(p, "]}");
  cr_assert_eq(parse(t, &lcp, &err), -1);
  cr_assert(strstr(err.msg, "maximum n = 10000"), "%s", err.msg);
  free(t);
}

/* A UTF-8 byte-order mark is skipped; a top-level null, a string, UTF-16
 * text, binary data and an empty file are each named for what they are. */
Test(inputs, format_detection) {
  cp_lcp lcp;
  cp_error err;
  cr_assert_eq(parse("\xEF\xBB\xBF{\"M\": [[2]], \"q\": [-1]}", &lcp, &err), 0, "%s", err.msg);
  cr_assert_eq(lcp.M[0], 2.0);
  cp_lcp_free(&lcp);
  cr_assert_eq(parse("\xEF\xBB\xBF 1 0 1 1 1 1 2 -1", &lcp, &err), 0, "%s", err.msg);
  cp_lcp_free(&lcp);
  cr_assert_eq(parse("null", &lcp, &err), -1);
  cr_assert(strstr(err.msg, "found null"), "%s", err.msg);
  cr_assert_eq(parse("\"M\"", &lcp, &err), -1);
  cr_assert(strstr(err.msg, "found a string"), "%s", err.msg);
  cr_assert_eq(parse("[1, 2]", &lcp, &err), -1);
  cr_assert(strstr(err.msg, "found an array"), "%s", err.msg);
  cr_assert_eq(cp_lcp_parse("\xFF\xFE{\0", 4, &lcp, &err), -1);
  cr_assert(strstr(err.msg, "UTF-16"), "%s", err.msg);
  cr_assert_eq(parse("\x01\x02", &lcp, &err), -1);
  cr_assert(strstr(err.msg, "0x01"), "%s", err.msg);
  cr_assert_eq(parse("hello", &lcp, &err), -1);
  cr_assert(strstr(err.msg, "unknown format: found 'h'"), "%s", err.msg);
  cr_assert_eq(parse("  \n ", &lcp, &err), -1);
  cr_assert(strstr(err.msg, "empty"), "%s", err.msg);
}

/* cp_read_file: regular files only; devices, FIFOs and directories are
 * refused without being read (a FIFO without a writer must not hang). */
Test(inputs, read_file_regular_only, .timeout = 20) {
  cp_error err;
  size_t len;
  cr_assert_null(cp_read_file("/dev/zero", &len, &err));
  cr_assert(strstr(err.msg, "character device"), "%s", err.msg);
  cr_assert_null(cp_read_file("/tmp", &len, &err));
  cr_assert(strstr(err.msg, "directory"), "%s", err.msg);
  char fifo[] = "/tmp/cp_fifo_XXXXXX";
  int fd = mkstemp(fifo);
  cr_assert_geq(fd, 0);
  close(fd);
  unlink(fifo);
  cr_assert_eq(mkfifo(fifo, 0600), 0);
  cr_assert_null(cp_read_file(fifo, &len, &err));
  cr_assert(strstr(err.msg, "FIFO"), "%s", err.msg);
  /* The CLI says so with exit 2, for LCPs and scenes alike. */
  const char *a1[] = {"complan", "lcp", "solve", fifo, "--json", NULL};
  cpth_expect_bad_input(a1, fifo, "FIFO");
  const char *a2[] = {"complan", "solve", "/dev/zero", "--json", NULL};
  cpth_expect_bad_input(a2, "/dev/zero", "character device");
  /* A scene whose manipulator's URDF is the FIFO or /dev/zero: rejected at
   * the "urdf" key, not a hang or an endless read. */
  const char *targets[] = {fifo, "/dev/zero"};
  for (int k = 0; k < 2; k++) {
    char scene[512];
    snprintf(scene, sizeof scene,
             "{\"bodies\": [], \"manipulators\": [{\"name\": \"m\", \"urdf\": \"%s\"}]}",
             targets[k]);
    cp_scene sc;
    cr_assert_eq(cp_scene_parse(scene, strlen(scene), "/tmp", NULL, &sc, &err), -1);
    cr_assert_str_eq(err.where, "manipulators[0].urdf");
    cr_assert(strstr(err.msg, k ? "character device" : "FIFO"), "%s", err.msg);
  }
  unlink(fifo);
}

/* A file above the size cap is refused from its size (a sparse file: no
 * disk used, nothing read). */
Test(inputs, read_file_size_cap) {
  char path[] = "/tmp/cp_big_XXXXXX";
  int fd = mkstemp(path);
  cr_assert_geq(fd, 0);
  cr_assert_eq(ftruncate(fd, (off_t)CP_READ_FILE_MAX + 1), 0);
  close(fd);
  cp_error err;
  size_t len;
  cr_assert_null(cp_read_file(path, &len, &err));
  cr_assert(strstr(err.msg, "more than the limit of 256 MiB"), "%s", err.msg);
  unlink(path);
  /* An ordinary file still reads in full. */
  char *f = cpt_temp_file("abc", ".txt");
  char *s = cp_read_file(f, &len, &err);
  cr_assert_not_null(s);
  cr_assert_eq(len, 3);
  cr_assert_str_eq(s, "abc");
  free(s);
  unlink(f);
  free(f);
}
