/* `complan lcp solve` and `complan lcp certify`: read a raw LCP, run a solver,
 * print the answer (docs/outputs.md). Thin: parsing lives in contact/lcpio,
 * solving in contact/solve and contact/certify. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "contact/lcpio.h"
#include "contact/solve.h"
#include "models/clock.h"
#include "planner/cli/commands.h"
#include "planner/cli/flags.h"
#include "planner/cli/output.h"

/* The input of both commands, in their --help. */
#define LCP_FILE_TEXT                                                                   \
  "FILE is a JSON LCP {\"M\": [[row], ...], \"q\": [...]} or a Siconos .dat file\n"    \
  "(dense storage). The problem: find z >= 0 with w = M z + q >= 0, z'w = 0.\n"

static const char solve_head[] =
    "Solve a raw LCP (JSON or Siconos .dat). Every reported solution has passed\n"
    "an independent residual check (z >= 0, w >= 0, z_i w_i = 0, w = M z + q).\n"
    LCP_FILE_TEXT
    "\n";
static const char solve_tail[] =
    "\n"
    "exit status: 0 solved or proven to have no solution, 1 not solved,\n"
    "2 bad input or usage.\n";
static const char certify_head[] =
    "Decide whether the LCP has a solution with a mixed-integer program\n"
    "(Pardalos-Rosen scaled form, GLPK): prints a verified solution, or a proof\n"
    "that none exists (status no_solution).\n"
    LCP_FILE_TEXT
    "\n";
static const char certify_tail[] =
    "\n"
    "exit status: 0 decided (solution or proof of none), 1 undecided (time\n"
    "limit, numerical failure), 2 bad input or usage.\n";

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
static int parse_args(const cp_cli_command *cmd, int argc, char **argv, int certify,
                      lcp_args *a) {
  enum { SOLVE = 1, CERTIFY = 2 }; // the flags' modes
  memset(a, 0, sizeof *a);
  a->repeat = 1;
  a->opt = cp_solve_defaults();
  a->opt.lemke.rescue = 1; /* issue 24: Lemke's rescue pass for raw LCPs */
  a->opt.lemke.classic = 1; /* and its classic pass after it */
  a->opt.regularise = 1;   /* and its regularised route after a failure */
  if (certify) a->opt.solver = CP_SOLVER_CERTIFY;
  int solver = (int)a->opt.solver, verbose = 0;
  double tol = NAN; // NAN: not given, each solver keeps its own default
  const cp_cli_flag flags[] = {
      {"--solver", "NAME", CP_FLAG_ENUM, &solver,
       "lemke | fip | certify | auto (default auto: Lemke with\n"
       "restarts, then the interior point method, then 200\n"
       "more random Lemke starts, then the MILP certificate;\n"
       "stops at the first verified answer)",
       .names = cp_cli_solver_names, .modes = SOLVE},
      {"--second", NULL, CP_FLAG_BOOL, &a->second,
       "also look for a second solution whose support differs", .modes = CERTIFY},
      CP_CLI_BOOL("--json", &a->json, "print one JSON document (docs/outputs.md)"),
      {"--repeat", "N", CP_FLAG_LONG, &a->repeat,
       "solve N times (1..1000000), report the mean time per\nsolve (time_us)",
       .imin = 1, .imax = 1000000},
      {"--max-pivots", "N", CP_FLAG_INT, &a->opt.lemke.max_pivots,
       "Lemke pivot cap per start (default 50(n+1)+100)", .imin = 1, .imax = 1000000000,
       .expect = "a whole number >= 1", .modes = SOLVE},
      {"--restarts", "N", CP_FLAG_INT, &a->opt.lemke.restarts,
       "Lemke restarts with random covering vectors (default 3)", .imin = 0, .imax = 1000,
       .modes = SOLVE},
      {"--seed", "S", CP_FLAG_U64, &a->opt.lemke.seed,
       "seed of the restart covering vectors (default 1)", .modes = SOLVE},
      {"--max-iter", "N", CP_FLAG_INT, &a->opt.fip.max_iter, "FIP iteration cap (default 300)",
       .imin = 1, .imax = 1000000, .expect = "a whole number >= 1", .modes = SOLVE},
      {"--gap", "G", CP_FLAG_DOUBLE, &a->opt.fip.gap_tol, "FIP stops when w'z <= G (default 1e-6)",
       .dmin = 1e-300, .dmax = 1e300, .expect = "a positive number", .modes = SOLVE},
      {"--time-limit", "S", CP_FLAG_DOUBLE, &a->opt.certify.time_limit_s,
       "certify: seconds per call, shared by its MIP solves (default 60)", .dmin = 1e-3, .dmax = 1e7,
       .expect = "seconds > 0", .modes = SOLVE},
      {"--time-limit", "S", CP_FLAG_DOUBLE, &a->opt.certify.time_limit_s,
       "seconds per call, shared by its MIP solves (default 60)", .dmin = 1e-3, .dmax = 1e7,
       .expect = "seconds > 0", .modes = CERTIFY},
      {"--node-limit", "N", CP_FLAG_LONG, &a->opt.certify.node_limit,
       "certify: branch-and-bound nodes per call, shared by its MIP\nsolves (default: none); "
       "a limit that ends the same way on any machine", .imin = 1, .imax = 1000000000,
       .expect = "a whole number >= 1", .modes = SOLVE},
      {"--node-limit", "N", CP_FLAG_LONG, &a->opt.certify.node_limit,
       "branch-and-bound nodes per call, shared by its MIP solves\n(default: none); "
       "a limit that ends the same way on any machine", .imin = 1, .imax = 1000000000,
       .expect = "a whole number >= 1", .modes = CERTIFY},
      {"--max-cuts", "N", CP_FLAG_INT, &a->opt.certify.max_cuts,
       "--second: cap on no-good cuts (default 64)", .imin = 1, .imax = 1000000,
       .expect = "a whole number >= 1", .modes = CERTIFY},
      {"--lemke-starts", "N", CP_FLAG_INT, &a->opt.certify.lemke_starts,
       "Lemke starts that must all fail before a \"no solution\"\n"
       "verdict stands (default 32; 0: take GLPK's word)", .imin = 0, .imax = 1000000,
       .expect = "a whole number >= 0", .modes = CERTIFY},
      {"--tol", "T", CP_FLAG_DOUBLE, &tol,
       "relative tolerance of the solution check, row by row\n(default 1e-6)",
       .dmin = 1e-300, .dmax = 1.0, .expect = "a number in (0, 1]"},
      CP_CLI_BOOL("--verbose", &verbose, "GLPK's own messages on stderr (dropped otherwise)"),
  };
  const cp_cli_spec spec = {cmd->name,
                            certify ? certify_head : solve_head,
                            certify ? certify_tail : solve_tail,
                            "FILE", &a->file, flags, sizeof flags / sizeof *flags,
                            certify ? CERTIFY : SOLVE, cmd->usage};
  int rc = cp_cli_parse(&spec, argc, argv);
  if (rc != CP_CLI_GO) return rc;
  if (verbose) cp_cli_verbose();
  a->opt.solver = (cp_lcp_solver)solver;
  if (!isnan(tol)) {
    cp_check_options c = {.rel_tol = tol};
    a->opt.lemke.check = a->opt.fip.check = a->opt.certify.check = c;
  }
  return CP_CLI_GO;
}

static int run(const cp_cli_command *cmd, int argc, char **argv, int certify) {
  lcp_args a;
  int rc = parse_args(cmd, argc, argv, certify, &a);
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
  cp_solve_trail trail;
  memset(&trail, 0, sizeof trail);
  cp_certify_result cres = {0};
  cp_certify_options co = a.opt.certify;
  co.second = a.second;

  /* The timed loop covers the solve only: not start-up, not parsing. */
  double t0 = cp_clock_now();
  for (long r = 0; r < a.repeat; r++) {
    if (certify)
      cp_certify(n, lcp.M, lcp.q, &co, z, w, z2, w2, &cres, &info);
    else
      cp_lcp_solve(ws, n, lcp.M, lcp.q, &a.opt, z, w, &info, &trail);
  }
  double time_us = 1e6 * (cp_clock_now() - t0) / (double)a.repeat;

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
    /* Issue 24: exact to rounding (a basis solution) or flagged, with the
     * pair's measured residuals. */
    json_object_set_new(doc, "polished", solved ? json_boolean(info.polished) : json_null());
    json_object_set_new(doc, "residual", solved ? cp_json_num(info.residual) : json_null());
    json_object_set_new(doc, "min_z", solved ? cp_json_num(info.min_z) : json_null());
    json_object_set_new(doc, "min_w", solved ? cp_json_num(info.min_w) : json_null());
    json_object_set_new(doc, "time_us", json_real(time_us));
    /* Which route of the solver answered: "direct", or "regularised" (Lemke's
     * regularised route, with the eps whose support held the solution). */
    json_object_set_new(doc, "route", solved ? json_string(trail.route ? "regularised"
                                                                       : "direct")
                                             : json_null());
    if (solved && trail.route) json_object_set_new(doc, "route_eps", json_real(trail.reg.eps));
    if (!solved)
      json_object_set_new(doc, "reason", json_string(info.reason[0] ? info.reason
                                                     : cp_lcp_status_name(info.status)));
    if (certify) {
      json_object_set_new(doc, "alpha", cp_json_num(cres.alpha));
      json_object_set_new(doc, "mip_overruled", json_boolean(cres.mip_overruled));
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
      if (certify && cres.mip_overruled)
        printf("note: GLPK's MIPs ended at alpha* = %.3g (\"no solution\"); Lemke found "
               "this solution, which passes the check, and overrules them\n",
               cres.alpha);
      if (certify && a.second) {
        if (cres.has_second) {
          printf("second solution (another support):\n");
          print_vec_text("z", z2, n);
          print_vec_text("w", w2, n);
        } else {
          printf("second solution: %s\n",
                 cres.second_decided ? "none: every solution shares this support"
                 : cres.mip_overruled ? "undecided (the MIPs were overruled on this problem)"
                                      : "undecided (a cut, node or time limit reached)");
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

int cp_cli_lcp_solve(const cp_cli_command *cmd, int argc, char **argv) {
  return run(cmd, argc, argv, 0);
}

int cp_cli_lcp_certify(const cp_cli_command *cmd, int argc, char **argv) {
  return run(cmd, argc, argv, 1);
}
