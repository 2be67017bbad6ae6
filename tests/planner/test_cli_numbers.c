/* Numeric command-line flags are parsed strictly (issue 12): overflow,
 * leading spaces, '+', hexadecimal, inf/nan, junk and absurd values are
 * usage errors (exit 2), never silently clamped or truncated. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "planner/cli/flags.h"
#include "tests/harden/harden.h"

Test(cli_numbers, integers) {
  long v;
  cr_assert_eq(cp_parse_int("42", 0, 100, &v), 0);
  cr_assert_eq(v, 42);
  cr_assert_eq(cp_parse_int("-7", -10, 10, &v), 0);
  cr_assert_eq(v, -7);
  const char *bad[] = {"", " 5", "5 ", "+5", "0x10", "5x", "1e3", "9223372036854775808",
                       "-", "1.0", "١"};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
    cr_assert_eq(cp_parse_int(bad[k], -1000000, 1000000, &v), -1, "'%s' accepted", bad[k]);
  cr_assert_eq(cp_parse_int("101", 0, 100, &v), -1);
}

Test(cli_numbers, u64) {
  uint64_t v;
  cr_assert_eq(cp_parse_u64("18446744073709551615", &v), 0);
  cr_assert_eq(v, UINT64_MAX);
  cr_assert_eq(cp_parse_u64("0", &v), 0);
  cr_assert_eq(v, 0);
  const char *bad[] = {"18446744073709551616", "99999999999999999999999", "-1", " 1", "+1", ""};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
    cr_assert_eq(cp_parse_u64(bad[k], &v), -1, "'%s' accepted", bad[k]);
}

Test(cli_numbers, doubles) {
  double d;
  cr_assert_eq(cp_parse_double("2e-3", 0, 1, &d), 0);
  cr_assert_eq(d, 2e-3);
  cr_assert_eq(cp_parse_double(".5", 0, 1, &d), 0);
  cr_assert_eq(d, 0.5);
  cr_assert_eq(cp_parse_double("-1.5E+2", -1000, 0, &d), 0);
  cr_assert_eq(d, -150);
  const char *bad[] = {" 1", "1 ", "+1", "0x1p3", "inf", "nan", "1e", "1e999", ".", "e5", "1..2"};
  for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++)
    cr_assert_eq(cp_parse_double(bad[k], -1e300, 1e300, &d), -1, "'%s' accepted", bad[k]);
}

/* The examples at the command line. */
Test(cli_numbers, cli_examples) {
  const char *seed[] = {"complan", "experiment", "paper", "--seed", "18446744073709551616",
                        "--out", "/nonexistent/never", NULL};
  cpth_expect_bad_input(seed, "--seed", "18446744073709551616");
  const char *f = cpt_data("siconos/lcp_trivial.dat");
  char *path = strdup(f);
  const char *rep[] = {"complan", "lcp", "solve", path, "--repeat", "100000000", NULL};
  cpth_expect_bad_input(rep, "--repeat", "1000000");
  const char *sp[] = {"complan", "lcp", "solve", path, "--max-pivots", " 5", NULL};
  cpth_expect_bad_input(sp, "--max-pivots", "' 5'");
  const char *tol[] = {"complan", "lcp", "solve", path, "--tol", "1e-3junk", NULL};
  cpth_expect_bad_input(tol, "--tol", NULL);
  const char *ls[] = {"complan", "lcp", "solve", path, "--seed", "-1", NULL};
  cpth_expect_bad_input(ls, "--seed", "'-1'");
  /* and a good one still works */
  const char *ok[] = {"complan", "lcp", "solve", path, "--seed", "18446744073709551615",
                      "--json", NULL};
  json_t *doc = cpt_run_json(ok, 0);
  cr_assert_str_eq(json_string_value(json_object_get(doc, "status")), "solved");
  json_decref(doc);
  free(path);
}
