/* `complan lcp solve` and `complan lcp certify`: read a raw LCP, run a solver,
 * print the answer (docs/outputs.md). Thin: parsing lives in contact/lcpio,
 * solving in contact/solve and contact/certify. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "contact/lcpio.h"
#include "contact/solve.h"
#include "planner/cli.h"
#include "planner/output.h"

static const char lcp_usage[] =
    "usage: complan lcp solve FILE [options]\n"
    "       complan lcp certify FILE [--second] [options]\n"
    "\n"
    "FILE is a JSON LCP {\"M\": [[row], ...], \"q\": [...]} or a Siconos .dat file\n"
    "(dense storage). The problem: find z >= 0 with w = M z + q >= 0, z'w = 0.\n"
    "Run 'complan lcp solve --help' or 'complan lcp certify --help' for flags.\n";

static const char solve_usage[] =
    "usage: complan lcp solve FILE [options]\n"
    "\n"
    "Solve a raw LCP (JSON or Siconos .dat). Every reported solution has passed\n"
    "an independent residual check (z >= 0, w >= 0, z_i w_i = 0, w = M z + q).\n"
    "\n"
    "  --solver NAME     lemke | fip | certify | auto (default auto: Lemke with\n"
    "                    restarts, then the interior point method, then 200\n"
    "                    more random Lemke starts, then the MILP certificate;\n"
    "                    stops at the first verified answer)\n"
    "  --json            print one JSON document (docs/outputs.md)\n"
    "  --repeat N        solve N times (1..1000000), report the mean time per\n"
    "                    solve (time_us)\n"
    "  --max-pivots N    Lemke pivot cap per start (default 50(n+1)+100)\n"
    "  --restarts N      Lemke restarts with random covering vectors (default 3)\n"
    "  --seed S          seed of the restart covering vectors (default 1)\n"
    "  --max-iter N      FIP iteration cap (default 300)\n"
    "  --gap G           FIP stops when w'z <= G (default 1e-6)\n"
    "  --time-limit S    certify: seconds per MIP solve (default 60)\n"
    "  --tol T           relative tolerance of the solution check, row by row\n"
    "                    (default 1e-6)\n"
    "  --verbose         GLPK's own messages on stderr (dropped otherwise)\n"
    "  -h, --help        this text\n"
    "\n"
    "exit status: 0 solved or proven to have no solution, 1 not solved,\n"
    "2 bad input or usage.\n";

static const char certify_usage[] =
    "usage: complan lcp certify FILE [--second] [options]\n"
    "\n"
    "Decide whether the LCP has a solution with a mixed-integer program\n"
    "(Pardalos-Rosen scaled form, GLPK): prints a verified solution, or a proof\n"
    "that none exists (status no_solution).\n"
    "\n"
    "  --second          also look for a second solution whose support differs\n"
    "  --json            print one JSON document (docs/outputs.md)\n"
    "  --time-limit S    seconds per MIP solve (default 60)\n"
    "  --max-cuts N      --second: cap on no-good cuts (default 64)\n"
    "  --repeat N        solve N times, report the mean time per solve\n"
    "  --tol T           relative tolerance of the solution check, row by row\n"
    "                    (default 1e-6)\n"
    "  --verbose         GLPK's own messages on stderr (dropped otherwise)\n"
    "  --verbose         GLPK's own messages on stderr (dropped otherwise)\n"
    "  -h, --help        this text\n"
    "\n"
    "exit status: 0 decided (solution or proof of none), 1 undecided (time\n"
    "limit, numerical failure), 2 bad input or usage.\n";

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

static const char *status_word(cp_lcp_status s) {
  return s == CP_LCP_SOLVED ? "solved"
         : s == CP_LCP_INFEASIBLE ? "no_solution" : "failed";
}

static void print_vec_text(const char *name, const double *v, int n) {
  printf("%s =", name);
  for (int i = 0; i < n; i++) printf("%s%.10g", i % 8 == 0 && i ? "\n     " : " ", v[i]);
  printf("\n");
}

typedef struct lcp_args {
  const char *file;
  int json, second;
  long repeat;
  cp_solve_options opt;
} lcp_args;

/* Parses the flags of `lcp solve` / `lcp certify`. Returns -1 to continue,
 * or an exit status (help printed, or a usage error). */
static int parse_args(int argc, char **argv, int certify, lcp_args *a) {
  const char *cmdname = certify ? "lcp certify " : "lcp solve ";
  memset(a, 0, sizeof *a);
  a->repeat = 1;
  a->opt = cp_solve_defaults();
  if (certify) a->opt.solver = CP_SOLVER_CERTIFY;
  for (int i = 1; i < argc; i++) {
    const char *arg = argv[i], *v;
    int missing = 0;
    long l;
    double d;
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
      fputs(certify ? certify_usage : solve_usage, stdout);
      return 0;
    } else if (!strcmp(arg, "--json")) {
      a->json = 1;
    } else if (cp_cli_verbose_flag(arg)) {
    } else if (certify && !strcmp(arg, "--second")) {
      a->second = 1;
    } else if (!certify && (v = cp_cli_flag_value(argc, argv, &i, "--solver", &missing))) {
      if (cp_lcp_solver_parse(v, &a->opt.solver))
        return cp_cli_usage_error(cmdname, "--solver: expected lemke, fip, certify or auto, found '%s'", v);
    } else if ((v = cp_cli_flag_value(argc, argv, &i, "--repeat", &missing))) {
      if (cp_parse_int(v, 1, 1000000, &a->repeat))
        return cp_cli_usage_error(cmdname, "--repeat: expected a whole number from 1 to 1000000, found '%s'", v);
    } else if (!certify && (v = cp_cli_flag_value(argc, argv, &i, "--max-pivots", &missing))) {
      if (cp_parse_int(v, 1, 1000000000, &l))
        return cp_cli_usage_error(cmdname, "--max-pivots: expected a whole number >= 1, found '%s'", v);
      a->opt.lemke.max_pivots = (int)l;
    } else if (!certify && (v = cp_cli_flag_value(argc, argv, &i, "--restarts", &missing))) {
      if (cp_parse_int(v, 0, 1000, &l))
        return cp_cli_usage_error(cmdname, "--restarts: expected a whole number from 0 to 1000, found '%s'", v);
      a->opt.lemke.restarts = (int)l;
    } else if (!certify && (v = cp_cli_flag_value(argc, argv, &i, "--seed", &missing))) {
      if (cp_parse_u64(v, &a->opt.lemke.seed))
        return cp_cli_usage_error(cmdname, "--seed: expected a whole number from 0 to 18446744073709551615, found '%s'", v);
    } else if (!certify && (v = cp_cli_flag_value(argc, argv, &i, "--max-iter", &missing))) {
      if (cp_parse_int(v, 1, 1000000, &l))
        return cp_cli_usage_error(cmdname, "--max-iter: expected a whole number >= 1, found '%s'", v);
      a->opt.fip.max_iter = (int)l;
    } else if (!certify && (v = cp_cli_flag_value(argc, argv, &i, "--gap", &missing))) {
      if (cp_parse_double(v, 1e-300, 1e300, &d))
        return cp_cli_usage_error(cmdname, "--gap: expected a positive number, found '%s'", v);
      a->opt.fip.gap_tol = d;
    } else if ((v = cp_cli_flag_value(argc, argv, &i, "--time-limit", &missing))) {
      if (cp_parse_double(v, 1e-3, 1e7, &d))
        return cp_cli_usage_error(cmdname, "--time-limit: expected seconds > 0, found '%s'", v);
      a->opt.certify.time_limit_s = d;
    } else if (certify && (v = cp_cli_flag_value(argc, argv, &i, "--max-cuts", &missing))) {
      if (cp_parse_int(v, 1, 1000000, &l))
        return cp_cli_usage_error(cmdname, "--max-cuts: expected a whole number >= 1, found '%s'", v);
      a->opt.certify.max_cuts = (int)l;
    } else if ((v = cp_cli_flag_value(argc, argv, &i, "--tol", &missing))) {
      if (cp_parse_double(v, 1e-300, 1.0, &d))
        return cp_cli_usage_error(cmdname, "--tol: expected a number in (0, 1], found '%s'", v);
      cp_check_options c = {.rel_tol = d};
      a->opt.lemke.check = a->opt.fip.check = a->opt.certify.check = c;
    } else if (missing) {
      return cp_cli_usage_error(cmdname, "%s needs a value", arg);
    } else if (arg[0] == '-' && arg[1] != '\0') {
      return cp_cli_usage_error(cmdname, "unknown option '%s'", arg);
    } else if (a->file) {
      return cp_cli_usage_error(cmdname, "one FILE expected, found a second: '%s'", arg);
    } else {
      a->file = arg;
    }
  }
  if (!a->file) return cp_cli_usage_error(cmdname, "missing FILE");
  return -1;
}

static int run(int argc, char **argv, int certify) {
  lcp_args a;
  int rc = parse_args(argc, argv, certify, &a);
  if (rc >= 0) return rc;

  size_t len;
  char *text;
  int read_rc = cp_cli_read_input(a.file, &text, &len);
  if (read_rc) return read_rc;
  cp_lcp lcp;
  cp_error err;
  if (cp_lcp_parse(text, len, &lcp, &err)) {
    free(text);
    return cp_cli_input_error(a.file, &err);
  }
  free(text);

  const int n = lcp.n;
  double *buf = malloc(sizeof(double) * 4 * (size_t)n);
  cp_lemke_ws *ws = cp_lemke_ws_create(n);
  if (!buf || !ws) {
    fprintf(stderr, "complan: out of memory for an LCP of size %d\n", n);
    free(buf);
    cp_lemke_ws_destroy(ws);
    cp_lcp_free(&lcp);
    return CP_EXIT_UNDECIDED;
  }
  double *z = buf, *w = buf + n, *z2 = buf + 2 * n, *w2 = buf + 3 * n;
  cp_lcp_info info;
  cp_certify_result cres = {0};
  cp_certify_options co = a.opt.certify;
  co.second = a.second;

  /* The timed loop covers the solve only: not start-up, not parsing. */
  double t0 = now_us();
  for (long r = 0; r < a.repeat; r++) {
    if (certify)
      cp_certify(n, lcp.M, lcp.q, &co, z, w, z2, w2, &cres, &info);
    else
      cp_lcp_solve(ws, n, lcp.M, lcp.q, &a.opt, z, w, &info, NULL);
  }
  double time_us = (now_us() - t0) / (double)a.repeat;

  const int solved = info.status == CP_LCP_SOLVED;
  if (a.json) {
    json_t *doc = json_object();
    json_object_set_new(doc, "status", json_string(status_word(info.status)));
    json_object_set_new(doc, "solver", json_string(cp_lcp_solver_name(info.solver)));
    json_object_set_new(doc, "n", json_integer(n));
    json_object_set_new(doc, "z", solved ? cp_json_vec(z, n) : json_null());
    json_object_set_new(doc, "w", solved ? cp_json_vec(w, n) : json_null());
    json_object_set_new(doc, "iterations", json_integer(info.iterations));
    json_object_set_new(doc, "starts", json_integer(info.starts));
    json_object_set_new(doc, "complementarity",
                        solved ? cp_json_num(info.complementarity) : json_null());
    json_object_set_new(doc, "time_us", json_real(time_us));
    if (!solved)
      json_object_set_new(doc, "reason", json_string(info.reason[0] ? info.reason
                                                     : cp_lcp_status_name(info.status)));
    if (certify) {
      json_object_set_new(doc, "alpha", cp_json_num(cres.alpha));
      if (a.second && solved) {
        if (cres.has_second) {
          json_t *s = json_object();
          json_object_set_new(s, "z", cp_json_vec(z2, n));
          json_object_set_new(s, "w", cp_json_vec(w2, n));
          json_object_set_new(doc, "second", s);
        } else {
          json_object_set_new(doc, "second", json_null());
        }
        json_object_set_new(doc, "second_decided", json_boolean(cres.second_decided));
      }
    }
    if (cp_json_print(doc)) rc = CP_EXIT_UNDECIDED;
    json_decref(doc);
  } else {
    printf("%s: %s by %s (n = %d", a.file, status_word(info.status),
           cp_lcp_solver_name(info.solver), n);
    if (info.solver == CP_SOLVER_LEMKE)
      printf(", %d pivots, %d start%s", info.iterations, info.starts,
             info.starts == 1 ? "" : "s");
    else if (info.solver == CP_SOLVER_FIP)
      printf(", %d iterations", info.iterations);
    else if (info.solver == CP_SOLVER_CERTIFY)
      printf(", %d MIP solve%s", cres.mip_solves, cres.mip_solves == 1 ? "" : "s");
    printf(", %.1f us per solve)\n", time_us);
    if (solved) {
      print_vec_text("z", z, n);
      print_vec_text("w", w, n);
      printf("max |z_i w_i| = %.3g, residual = %.3g\n", info.complementarity,
             info.residual);
      if (certify && a.second) {
        if (cres.has_second) {
          printf("second solution (another support):\n");
          print_vec_text("z", z2, n);
          print_vec_text("w", w2, n);
        } else {
          printf("second solution: %s\n",
                 cres.second_decided ? "none: every solution shares this support"
                                     : "undecided (cut or time limit reached)");
        }
      }
    } else if (info.status == CP_LCP_INFEASIBLE) {
      printf("proof: the MILP's optimal alpha is %.3g, so no solution exists\n",
             cres.alpha);
    } else {
      printf("reason: %s\n", info.reason[0] ? info.reason : cp_lcp_status_name(info.status));
    }
  }
  if (rc < 0) rc = (solved || info.status == CP_LCP_INFEASIBLE) ? CP_EXIT_ANSWERED
                                                                 : CP_EXIT_UNDECIDED;
  free(buf);
  cp_lemke_ws_destroy(ws);
  cp_lcp_free(&lcp);
  return rc;
}

int cp_cli_lcp(int argc, char **argv) {
  if (argc < 2) {
    fputs(lcp_usage, stderr);
    return CP_EXIT_BAD_INPUT;
  }
  if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
    fputs(lcp_usage, stdout);
    return 0;
  }
  if (!strcmp(argv[1], "solve")) return run(argc - 1, argv + 1, 0);
  if (!strcmp(argv[1], "certify")) return run(argc - 1, argv + 1, 1);
  return cp_cli_usage_error("lcp ", "unknown lcp command '%s' (expected solve or certify)", argv[1]);
}
