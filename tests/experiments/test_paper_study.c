/* The paper's study on a tiny configuration: the protocol's rows, the CSV's
 * contract, determinism across worker counts, the reports, and the
 * `complan experiment paper` command (docs/outputs.md). */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "experiments/study/study.h"
#include "tests/support.h"

static char *temp_dir(void) {
  const char *d = getenv("TMPDIR");
  char buf[4096];
  snprintf(buf, sizeof buf, "%s/cppaperXXXXXX", d ? d : "/tmp");
  char *r = mkdtemp(buf);
  cr_assert_not_null(r);
  return strdup(r);
}

static void rm_rf(const char *dir) {
  char cmd[4200];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
  cr_assert_eq(system(cmd), 0);
}

static char *read_in(const char *dir, const char *name) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  char *t = cpt_read_file(path, NULL);
  cr_assert_not_null(t, "%s was not written", path);
  return t;
}

static const char *required =
    "problem,size,nb,nS,nR,mu,lemke_status,lemke_starts,lemke_iters,fip_status,fip_iters,"
    "auto_status,certify,unique";

/* Splits one CSV line into at most cap fields (in place). */
static int fields(char *line, char **f, int cap) {
  int n = 0;
  f[n++] = line;
  for (char *c = line; *c && n < cap; c++)
    if (*c == ',') {
      *c = '\0';
      f[n++] = c + 1;
    }
  return n;
}

/* Checks the CSV of a study of `problems` problems; returns the row count. */
static int check_csv(const char *csv, int problems) {
  cr_assert(!strncmp(csv, required, strlen(required)), "header: %.200s", csv);
  char *copy = strdup(csv);
  int rows = 0;
  char *save = NULL;
  char *line = strtok_r(copy, "\n", &save); /* header */
  while ((line = strtok_r(NULL, "\n", &save))) {
    char *f[64];
    int n = fields(line, f, 64);
    cr_assert_geq(n, 14);
    int size = atoi(f[1]), ns = atoi(f[3]), nr = atoi(f[4]);
    cr_assert_eq(size, ns + 5 * nr, "row %d", rows);
    cr_assert(atoi(f[0]) >= 1 && atoi(f[0]) <= problems);
    const char *lem = f[6], *fip = f[9], *aut = f[11], *cert = f[12], *uni = f[13];
    cr_assert(!strcmp(lem, "solved") || !strcmp(lem, "failed"), "%s", lem);
    cr_assert(!strcmp(fip, "solved") || !strcmp(fip, "failed"), "%s", fip);
    cr_assert(!strcmp(aut, "solved") || !strcmp(aut, "failed") || !strcmp(aut, "no_solution"));
    cr_assert(!strcmp(cert, "solvable") || !strcmp(cert, "none") || !strcmp(cert, "undecided"));
    cr_assert(!strcmp(uni, "unique") || !strcmp(uni, "not unique") || !strcmp(uni, "undecided") ||
              !strcmp(uni, "n/a"));
    /* Consistency of the answers. */
    if (!strcmp(aut, "solved") || !strcmp(lem, "solved") || !strcmp(fip, "solved"))
      cr_assert_str_eq(cert, "solvable");
    if (!strcmp(cert, "none")) cr_assert_str_eq(aut, "no_solution");
    if (!strcmp(aut, "no_solution")) cr_assert_str_eq(cert, "none");
    if (strcmp(cert, "solvable")) cr_assert_str_eq(uni, "n/a");
    int starts = atoi(f[7]);
    cr_assert(starts >= 1 && starts <= 4);
    if (!strcmp(lem, "solved") && starts == 1) cr_assert_leq(atoi(f[8]), 100);
    if (!strcmp(fip, "solved")) cr_assert_leq(atoi(f[10]), 300);
    rows++;
  }
  free(copy);
  return rows;
}

/* The CSV without its timing columns (t_*_s, the last ones): what must not
 * depend on the number of workers. */
static char *strip_times(const char *csv) {
  const char *t = strstr(csv, ",t_lemke_s");
  cr_assert_not_null(t);
  int keep = 0; /* commas before the first timing column */
  for (const char *c = csv; c <= t; c++) keep += *c == ',';
  char *out = malloc(strlen(csv) + 1), *o = out;
  const char *line = csv;
  while (*line) {
    const char *end = strchr(line, '\n');
    size_t len = end ? (size_t)(end - line) : strlen(line);
    int commas = 0;
    for (size_t i = 0; i < len; i++) {
      if (line[i] == ',' && ++commas >= keep) break;
      *o++ = line[i];
    }
    *o++ = '\n';
    line += len + (end ? 1 : 0);
  }
  *o = '\0';
  return out;
}

Test(paper_study, tiny_run_rows_and_reports) {
  char *dir = temp_dir();
  cp_paper_options o = cp_paper_defaults();
  o.problems = 2;
  o.jobs = 1;
  cp_paper_study st;
  cp_error e;
  cr_assert_eq(cp_paper_study_run(&o, dir, "test", NULL, NULL, &st, &e), 0, "%s: %s", e.where, e.msg);
  cr_assert_eq(st.n_rows, 2 * CP_PAPER_NMU);
  for (int i = 0; i < st.n_rows; i++) {
    const cp_paper_row *r = &st.rows[i];
    cr_assert_eq(r->problem, i / CP_PAPER_NMU + 1);
    cr_assert_eq(r->mu_index, i % CP_PAPER_NMU);
    cr_assert_eq(r->size, 2);
    cr_assert_leq(r->lemke_first_iters, 100);
  }
  char *csv = read_in(dir, "datasets.csv");
  cr_assert_eq(check_csv(csv, 2), 20);
  const char *files[] = {"table1.md", "table1.csv", "problems.md", "summary.md",
                         "fraction_solved_size.svg", "fraction_solved_mu.svg",
                         "iterations_mu.svg", "data/p01/mu0.1.scene.json",
                         "data/p02/mu1.0.lcp.json"};
  for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) free(read_in(dir, files[i]));
  char *t1 = read_in(dir, "table1.md");
  cr_assert(strstr(t1, "| size | # data sets | Lemke frac. solved | ave. # starts | ave. # iter. |"));
  free(t1);
  char *svg = read_in(dir, "fraction_solved_size.svg");
  cr_assert(!strncmp(svg, "<svg", 4) && strstr(svg, "</svg>"));
  free(svg);
  char *pm = read_in(dir, "problems.md");
  cr_assert(strstr(pm, "| size | nb | nS | nR | mu | L-starts | L-iter | FIP-iter |"));
  free(pm);
  /* The command's summary line (report.c) counts the rows as they are. */
  int l1 = 0, lem = 0, fip = 0, either = 0, aut = 0, sol = 0, none = 0, und = 0;
  for (int i = 0; i < st.n_rows; i++) {
    const cp_paper_row *r = &st.rows[i];
    l1 += r->lemke == CP_PAPER_SOLVED && r->lemke_starts == 1;
    lem += r->lemke == CP_PAPER_SOLVED;
    fip += r->fip == CP_PAPER_SOLVED;
    either += r->lemke == CP_PAPER_SOLVED || r->fip == CP_PAPER_SOLVED;
    aut += r->autos == CP_PAPER_SOLVED;
    sol += r->cert == CP_PAPER_CERT_SOLVABLE;
    none += r->cert == CP_PAPER_CERT_NONE;
    und += r->cert == CP_PAPER_CERT_UNDECIDED;
  }
  char want[512];
  snprintf(want, sizeof want,
           "20 data sets from 2 problems (seed 1995): Lemke 1st start %d, with restarts %d, "
           "FIP %d, either %d, auto %d; certificate: %d solvable, %d none, %d undecided.\n",
           l1, lem, fip, either, aut, sol, none, und);
  char *head = cp_paper_format_headline(&st, dir);
  cr_assert_not_null(head);
  cr_assert(!strncmp(head, want, strlen(want)), "%s\nexpected %s", head, want);
  cr_assert(strstr(head, " on 1 worker; reports in ") && strstr(head, dir), "%s", head);
  free(head);
  /* The same study on two workers: the same rows in the same order. */
  char *dir2 = temp_dir();
  cp_paper_study st2;
  o.jobs = 2;
  cr_assert_eq(cp_paper_study_run(&o, dir2, "test", NULL, NULL, &st2, &e), 0, "%s", e.msg);
  char *csv2 = read_in(dir2, "datasets.csv");
  char *a = strip_times(csv), *b = strip_times(csv2);
  cr_assert_str_eq(a, b);
  free(a);
  free(b);
  free(csv);
  free(csv2);
  cp_paper_study_free(&st);
  cp_paper_study_free(&st2);
  rm_rf(dir);
  rm_rf(dir2);
  free(dir);
  free(dir2);
}

Test(paper_study, protocol_on_one_dataset) {
  /* The Table 2 mirror at mu = 0.4: every column filled consistently. */
  cp_paper_problem p;
  cp_error e;
  cr_assert_eq(cp_paper_generate(13, CP_PAPER_DEFAULT_SEED, &p, &e), 0);
  cp_paper_options o = cp_paper_defaults();
  cp_paper_row r;
  cr_assert_eq(cp_paper_run_dataset(&p, 3, &o, &r, &e), 0, "%s", e.msg);
  cr_assert_eq(r.size, 26);
  cr_assert_eq(r.nb, 4);
  cr_assert_eq(r.ns, 6);
  cr_assert_eq(r.nr, 4);
  cr_assert_float_eq(r.mu, 0.4, 0.0);
  cr_assert(r.lemke_starts >= 1 && r.lemke_starts <= 4);
  int sum = 0;
  for (int s = 0; s < r.lemke_starts; s++) {
    cr_assert_leq(r.lemke_pivots[s], 100);
    sum += r.lemke_pivots[s];
  }
  cr_assert_eq(sum, r.lemke_iters);
  cr_assert_eq(r.lemke_pivots[0], r.lemke_first_iters);
  cr_assert_leq(r.fip_iters, 300);
  cr_assert_eq(r.jacobian_rank <= 3 * r.nc, 1);
  if (r.autos == CP_PAPER_SOLVED) cr_assert_eq(r.cert, CP_PAPER_CERT_SOLVABLE);
  cp_paper_problem_free(&p);
}

static int run(const char *const *argv, char **err_out) {
  char *out, *err;
  int rc = cpt_run(argv, &out, &err);
  free(out);
  if (err_out) *err_out = err;
  else free(err);
  return rc;
}

/* A study that cannot write its output says so with an I/O code and the
 * path (the command's exit 2), before any data set is solved. */
Test(paper_study, unwritable_output_is_an_io_error) {
  cp_paper_options o = cp_paper_defaults();
  o.problems = 1;
  o.jobs = 1;
  cp_paper_study st;
  cp_error e;
  cr_assert_eq(cp_paper_study_run(&o, "/proc/no/such/dir", "test", NULL, NULL, &st, &e), -1);
  cr_assert_eq(e.code, CP_ERR_IO, "%s: %s (%s)", e.where, e.msg, cp_error_code_name(e.code));
  cr_assert(strstr(e.where, "/proc/no"), "%s", e.where);
}

Test(paper_study, cli_tiny_configuration) {
  char *dir = temp_dir();
  const char *argv[] = {"complan", "experiment", "paper", "--out", dir, "--problems", "2",
                        "--jobs", "2", "--seed", "1995", NULL};
  char *err;
  int rc = run(argv, &err);
  cr_assert_eq(rc, 0, "stderr: %s", err);
  cr_assert(!strchr(err, '\r'), "no progress bar when stderr is not a terminal");
  free(err);
  char *csv = read_in(dir, "datasets.csv");
  cr_assert_eq(check_csv(csv, 2), 20);
  free(csv);
  char *sum = read_in(dir, "summary.md");
  cr_assert(strstr(sum, "228"), "the summary quotes the paper's numbers");
  cr_assert(strstr(sum, "complan experiment paper --out"), "the summary names the command");
  free(sum);
  /* A written data set is a valid `complan lcp solve` input. */
  char lcp[4200];
  snprintf(lcp, sizeof lcp, "%s/data/p02/mu0.5.lcp.json", dir);
  const char *a2[] = {"complan", "lcp", "solve", lcp, NULL};
  cr_assert_eq(run(a2, NULL), 0);
  /* --progress forces the bar. */
  const char *a3[] = {"complan", "experiment", "paper", "--out", dir, "--problems", "1",
                      "--jobs", "1", "--progress", "--no-data", NULL};
  rc = run(a3, &err);
  cr_assert_eq(rc, 0);
  cr_assert(strchr(err, '\r'), "progress bar expected: %s", err);
  free(err);
  rm_rf(dir);
  free(dir);
}

Test(paper_study, cli_bad_flags) {
  const char *bad[][8] = {
      {"complan", "experiment", NULL},
      {"complan", "experiment", "nonsense", NULL},
      {"complan", "experiment", "paper", "--bogus", NULL},
      {"complan", "experiment", "paper", "--jobs", "0", NULL},
      {"complan", "experiment", "paper", "--jobs", "two", NULL},
      {"complan", "experiment", "paper", "--problems", "99", NULL},
      {"complan", "experiment", "paper", "--seed", "-3", NULL},
      {"complan", "experiment", "paper", "--seed", "x1", NULL},
      {"complan", "experiment", "paper", "--time-limit", "0", NULL},
      {"complan", "experiment", "paper", "--node-limit", "0", NULL},
      {"complan", "experiment", "paper", "--unique-node-limit", "1.5", NULL},
      {"complan", "experiment", "paper", "--out", NULL},
      {"complan", "experiment", "paper", "--out", "/proc/no/such/dir", "--problems", "1", NULL},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    char *err;
    int rc = run(bad[i], &err);
    cr_assert_eq(rc, 2, "case %zu: exit %d, stderr %s", i, rc, err);
    cr_assert(strstr(err, "complan"), "case %zu: a message: %s", i, err);
    free(err);
  }
  const char *help[] = {"complan", "experiment", "paper", "--help", NULL};
  cr_assert_eq(run(help, NULL), 0);
}

Test(paper_study, failures_above_a_friction_bound_have_no_solution) {
  /* The Table 3 mirror (size 30, nb 5, nS 5, nR 5) at mu = 1.0: Lemke fails
   * at all four starts and the MIP proves that no solution exists; the auto
   * strategy says so too. */
  cp_paper_problem p;
  cp_error e;
  cr_assert_eq(cp_paper_generate(15, CP_PAPER_DEFAULT_SEED, &p, &e), 0);
  cr_assert_eq(p.size, 30);
  cp_paper_options o = cp_paper_defaults();
  cp_paper_row r;
  cr_assert_eq(cp_paper_run_dataset(&p, CP_PAPER_NMU - 1, &o, &r, &e), 0, "%s", e.msg);
  cr_assert_eq(r.lemke, CP_PAPER_FAILED);
  cr_assert_eq(r.lemke_starts, 4);
  cr_assert_eq(r.cert, CP_PAPER_CERT_NONE, "certificate %s (%s)", cp_paper_cert_word(r.cert), r.mip_reason);
  cr_assert_eq(r.autos, CP_PAPER_NO_SOLUTION);
  cr_assert_eq(r.unique, CP_PAPER_UNIQUE_NA);
  cr_assert_eq(r.persist_ran, 1);
  cr_assert_neq(r.persist_raw, CP_LCP_SOLVED);
  cp_paper_problem_free(&p);
}
