/// \file tests/support.h
/// Helpers shared by the Criterion tests: data paths, running the complan
/// executable, independent checks of LCP solutions.
#ifndef CP_TESTS_SUPPORT_H
#define CP_TESTS_SUPPORT_H

#include <stddef.h>
#include <stdint.h>

/// Path of a bundled test file: $CP_TEST_DATA/rel (static buffer, valid until
/// the next call).
const char *cpt_data(const char *rel);

/// Reads a whole file (NUL-terminated, malloc'd); NULL on failure.
char *cpt_read_file(const char *path, size_t *len);
struct cp_lcp;
/// Reads the LCP file tests/data/REL (JSON or Siconos .dat) into *lcp;
/// asserts on failure. Free with cp_lcp_free.
void cpt_load_lcp(const char *rel, struct cp_lcp *lcp);

/// Writes text to a fresh temporary file and returns its path (malloc'd).
/// `suffix` such as ".json" is appended to the name.
char *cpt_temp_file(const char *text, const char *suffix);

/// Runs $CP_COMPLAN with argv (argv[0] is ignored; NULL-terminated), stdin
/// from /dev/null. Captures stdout and stderr (malloc'd, NUL-terminated).
/// Returns the exit status, or -1 if it did not exit normally.
int cpt_run(const char *const *argv, char **out, char **err);

/// Runs complan (as cpt_run), asserts the exit status and that stdout is
/// exactly one JSON document, and returns it (json_decref when done).
struct json_t;
struct json_t *cpt_run_json(const char *const *argv, int expect_rc);

/// The JSON data embedded in a viewer page (planner/view/viewer.h) at path
/// (asserted to be there and to parse).
struct json_t *cpt_page_data(const char *path);

/// Independent check of an LCP solution with a given absolute tolerance:
/// asserts (Criterion) z >= -tol, w = M z + q >= -tol, |z_i w_i| <= tol.
/// M column-major.
void cpt_assert_lcp_solution(int n, const double *M, const double *q,
                             const double *z, double tol);

/// Deterministic generator (splitmix64) for test data.
uint64_t cpt_rand(uint64_t *state);
double cpt_uniform(uint64_t *state, double lo, double hi);

#endif
