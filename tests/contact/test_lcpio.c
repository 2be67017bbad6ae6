/* Readers and writers of raw LCP files (docs/formats.md §1). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/lcpio.h"
#include "tests/support.h"

static int parse_str(const char *text, cp_lcp *lcp, cp_error *err) {
  return cp_lcp_parse(text, strlen(text), lcp, err);
}

Test(lcpio, json_is_row_major_in_file_column_major_in_memory) {
  cp_lcp lcp;
  cp_error err;
  cr_assert_eq(parse_str("{\"M\": [[1, 2], [3, 4]], \"q\": [5, -6], \"name\": \"t\"}",
                         &lcp, &err), 0, "%s: %s", err.where, err.msg);
  cr_assert_eq(lcp.n, 2);
  /* M[i + j n]: row 0 is (1, 2). */
  cr_assert_eq(lcp.M[0], 1.0);
  cr_assert_eq(lcp.M[2], 2.0);
  cr_assert_eq(lcp.M[1], 3.0);
  cr_assert_eq(lcp.M[3], 4.0);
  cr_assert_eq(lcp.q[1], -6.0);
  cr_assert_str_eq(lcp.name, "t");
  cp_lcp_free(&lcp);
}

Test(lcpio, dat_is_column_major) {
  cp_lcp lcp;
  cp_error err;
  cr_assert_eq(parse_str("2\n0\n2\n2\n2 2\n1 3\n2 4\n5 -6\ncomment 7 8\n", &lcp, &err), 0,
               "%s", err.msg);
  cr_assert_eq(lcp.M[0], 1.0);
  cr_assert_eq(lcp.M[1], 3.0); /* first column is (1, 3) */
  cr_assert_eq(lcp.M[2], 2.0);
  cr_assert_eq(lcp.q[0], 5.0);
  cp_lcp_free(&lcp);
}

/* Writing and reading back gives the same numbers bit for bit. */
Test(lcpio, round_trip_exact) {
  cp_lcp lcp;
  cr_assert_eq(cp_lcp_init(&lcp, 3), 0);
  uint64_t s = 7;
  for (int k = 0; k < 9; k++) lcp.M[k] = cpt_uniform(&s, -1e3, 1e3) / 3.0;
  for (int k = 0; k < 3; k++) lcp.q[k] = cpt_uniform(&s, -1, 1) * 1e-7;
  lcp.M[4] = -0.0;
  char *texts[2] = {cp_lcp_format_json(&lcp), cp_lcp_format_dat(&lcp)};
  for (int t = 0; t < 2; t++) {
    cp_lcp back;
    cp_error err;
    cr_assert_not_null(texts[t]);
    cr_assert_eq(parse_str(texts[t], &back, &err), 0, "%s: %s", err.where, err.msg);
    cr_assert_eq(back.n, 3);
    cr_assert_eq(memcmp(back.M, lcp.M, sizeof(double) * 9), 0);
    cr_assert_eq(memcmp(back.q, lcp.q, sizeof(double) * 3), 0);
    cp_lcp_free(&back);
    free(texts[t]);
  }
  cp_lcp_free(&lcp);
}

/* All twenty Siconos files: the dense ones are read with the size their
 * header gives and entries matching a direct token count; the block ones are
 * rejected with the promised message. */
Test(lcpio, siconos_files) {
  static const char *names[] = {
      "lcp_CPS_1", "lcp_CPS_2", "lcp_CPS_3", "lcp_CPS_4", "lcp_CPS_4bis",
      "lcp_CPS_5", "lcp_Pang_isolated_sol", "lcp_Pang_isolated_sol_perturbed",
      "lcp_deudeu", "lcp_enum_fails", "lcp_exp_murty", "lcp_exp_murty2",
      "lcp_inf_sol_perturbed", "lcp_mmc", "lcp_ortiz", "lcp_tobenna",
      "lcp_trivial"};
  static const int sizes[] = {2, 3, 4, 4, 4, 2, 3, 3, 2, 9, 6, 6, 3, 26, 4, 40, 9};
  for (size_t k = 0; k < sizeof names / sizeof *names; k++) {
    char rel[128];
    snprintf(rel, sizeof rel, "siconos/%s.dat", names[k]);
    size_t len;
    char *text = cpt_read_file(cpt_data(rel), &len);
    cr_assert_not_null(text, "cannot read %s", rel);
    cp_lcp lcp;
    cp_error err;
    cr_assert_eq(cp_lcp_parse(text, len, &lcp, &err), 0, "%s: %s: %s", rel, err.where, err.msg);
    cr_assert_eq(lcp.n, sizes[k], "%s: n = %d", rel, lcp.n);
    /* Independent reading: the (6 + n^2 + n)-th token is q's last entry. */
    char *copy = strdup(text), *save = NULL;
    int idx = 0;
    double last = NAN;
    for (char *t = strtok_r(copy, " \t\r\n", &save); t; t = strtok_r(NULL, " \t\r\n", &save))
      if (++idx == 6 + lcp.n * lcp.n + lcp.n) { last = strtod(t, NULL); break; }
    cr_assert_eq(lcp.q[lcp.n - 1], last, "%s: last q entry", rel);
    free(copy);
    free(text);
    cp_lcp_free(&lcp);
  }
  /* Murty's example: upper triangular, 1 on the diagonal, 2 above. */
  size_t len;
  char *text = cpt_read_file(cpt_data("siconos/lcp_exp_murty.dat"), &len);
  cp_lcp lcp;
  cp_error err;
  cr_assert_eq(cp_lcp_parse(text, len, &lcp, &err), 0);
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++)
      cr_assert_eq(lcp.M[i + 6 * j], i == j ? 1.0 : (j > i ? 2.0 : 0.0));
  cp_lcp_free(&lcp);
  free(text);
  const char *blocks[] = {"siconos/lcp_deudeu_block.dat", "siconos/lcp_ortiz_block.dat",
                          "siconos/lcp_trivial_block.dat"};
  for (int k = 0; k < 3; k++) {
    text = cpt_read_file(cpt_data(blocks[k]), &len);
    cr_assert_eq(cp_lcp_parse(text, len, &lcp, &err), -1);
    cr_assert(strstr(err.msg, "unsupported storage type 1"), "%s", err.msg);
    cr_assert_str_eq(err.where, "line 2");
    free(text);
  }
}

/* Each malformed input: rejected, with the place and what was expected. */
Test(lcpio, malformed_inputs) {
  static const struct { const char *text, *where, *msg; } cases[] = {
      {"{\"M\": [[1]], \"q\": [1], \"extra\": 1}", "extra", "unknown key"},
      {"{\"M\": [[1, 2], [3, 4]], \"q\": [1]}", "M", "expected 1 rows"},
      {"{\"M\": [[1, 2], [3]], \"q\": [1, 2]}", "M[1]", "row of 2 numbers"},
      {"{\"M\": [[1, \"x\"], [3, 4]], \"q\": [1, 2]}", "M[0][1]", "finite number"},
      {"{\"M\": [[1]], \"q\": [true]}", "q[0]", "finite number"},
      {"{\"M\": [[1]]}", "q", "missing"},
      {"{\"q\": [1]}", "M", "missing"},
      {"{\"M\": [[1]], \"q\": []}", "q", "non-empty"},
      {"{\"M\": [[1]], \"q\": [1], \"q\": [2]}", "line 1, column", "duplicate"},
      {"{\"M\": [[1]], \"q\": [1e999]}", "line 1, column", "invalid JSON"},
      {"[1, 2]", "$", "expected an object"},
      {"{\"M\": [[1]], \"q\": [1]", "line 1, column", "invalid JSON"},
      {"{\"M\": [[1]], \"q\": [1], \"name\": 3}", "name", "expected a string"},
      {"2\n0\n2\n2\n2 2\n1 2 3 4\n5\n", "line 7", "unexpected end of file"},
      {"2\n0\n2\n3\n2 2\n1 2 3 4\n5 6\n", "line 5", "inconsistent sizes"},
      {"2\n0\n2\n2\n2 2\n1 2 x 4\n5 6\n", "line 6", "found 'x'"},
      {"2\n0\n2\n2\n2 2\n1 2 nan 4\n5 6\n", "line 6", "non-finite"},
      {"2\n0\n2\n2\n2 2\n1 2 1e400 4\n5 6\n", "line 6", "non-finite"},
      {"2.5\n0\n", "line 1", "integer"},
      {"0\n0\n", "line 1", "n >= 1"},
      {"2\n7\n", "line 2", "unknown storage type 7"},
      {"", "line 1", "unexpected end of file"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    cp_lcp lcp;
    cp_error err = {0};
    cr_assert_eq(parse_str(cases[k].text, &lcp, &err), -1, "case %zu accepted", k);
    cr_assert(strncmp(err.where, cases[k].where, strlen(cases[k].where)) == 0,
              "case %zu: where '%s', expected '%s'", k, err.where, cases[k].where);
    cr_assert(strstr(err.msg, cases[k].msg), "case %zu: msg '%s' lacks '%s'", k,
              err.msg, cases[k].msg);
    cr_assert_null(lcp.M);
  }
}
