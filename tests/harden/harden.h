/// \file tests/harden/harden.h
/// Shared by issue 12's tests: a command that must fail as bad input.
#ifndef CP_TESTS_HARDEN_H
#define CP_TESTS_HARDEN_H

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "tests/support.h"

/// Runs complan with argv and asserts exit status 2, nothing on stdout and
/// both needles (NULL: skipped) in the message on stderr.
static inline void cpth_expect_bad_input(const char *const *argv, const char *n1,
                                         const char *n2) {
  char *out, *err;
  cr_assert_eq(cpt_run(argv, &out, &err), 2, "%s", err);
  cr_assert_str_empty(out);
  cr_assert(!n1 || strstr(err, n1), "'%s' lacks '%s'", err, n1 ? n1 : "");
  cr_assert(!n2 || strstr(err, n2), "'%s' lacks '%s'", err, n2 ? n2 : "");
  free(out);
  free(err);
}

#endif
