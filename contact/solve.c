#include "contact/solve.h"

#include <stdio.h>
#include <string.h>

cp_solve_options cp_solve_defaults(void) {
  cp_solve_options o;
  o.solver = CP_SOLVER_AUTO;
  o.lemke = cp_lemke_defaults();
  o.fip = cp_fip_defaults();
  o.certify = cp_certify_defaults();
  o.extra_restarts = 200;
  o.regularise = 0;
  o.reg = cp_lemke_reg_defaults();
  return o;
}

static void trail_note(cp_solve_trail *t, cp_lcp_solver s,
                       const cp_lcp_info *info) {
  if (!t) return;
  t->ran[s] = 1;
  t->status[s] = info->status;
  t->iterations[s] = info->iterations;
}

/* Statuses after which the auto strategy stops: an answer (solved, or proven
 * to have none) or a resource failure that another solver would share. */
static int final_status(cp_lcp_status s) {
  return s == CP_LCP_SOLVED || s == CP_LCP_INFEASIBLE || s == CP_LCP_NOMEM;
}

/* Lemke's regularised route after a Lemke run that ended without an answer
 * (opt->regularise); its outcome replaces the run's only when it solved. */
static void run_regularised(cp_lemke_ws *ws, int n, const double *M,
                            const double *q, const cp_solve_options *opt,
                            double *z, double *w, cp_lcp_info *info,
                            cp_solve_trail *trail) {
  if (!opt->regularise || info->status == CP_LCP_SOLVED ||
      info->status == CP_LCP_NOMEM)
    return;
  cp_lcp_info ri;
  cp_lemke_reg_report rep;
  cp_lemke_regularised(ws, n, M, q, &opt->lemke, &opt->reg, z, w, &ri, &rep);
  if (trail) trail->reg = rep;
  if (ri.status != CP_LCP_SOLVED && ri.status != CP_LCP_NOMEM) return;
  ri.iterations += info->iterations; /* the Lemke run's pivots too */
  ri.starts += info->starts;
  *info = ri;
  if (trail) {
    trail->route = ri.status == CP_LCP_SOLVED;
    trail->status[CP_SOLVER_LEMKE] = ri.status;
    trail->iterations[CP_SOLVER_LEMKE] = ri.iterations;
  }
}

/* Lemke, then (opt->regularise) the regularised route if it failed. From
 * n = opt->reg.early_n on, the route comes right after the first start:
 * on large rank-deficient contact LCPs each further start, and above all
 * the rescue pass, costs far more than the route (KaplasTower, n = 3420:
 * the route 7.7 s CPU, the ordinary and rescue starts before it over
 * 1000 s; docs/solvers.md, "When the route runs"). If the route fails
 * too, the whole Lemke run follows as without the early route (its first
 * start once more), so its answer is the one it would have been; only
 * problems the route solves change. A first start that solves is the
 * same start with or without the policy. */
static void lemke_route(cp_lemke_ws *ws, int n, const double *M,
                        const double *q, const cp_solve_options *opt,
                        double *z, double *w, cp_lcp_info *info,
                        cp_solve_trail *trail) {
  const cp_lemke_options *lo = &opt->lemke;
  if (opt->regularise && opt->reg.early_n > 0 && n >= opt->reg.early_n &&
      (lo->restarts > 0 || lo->rescue || lo->classic)) {
    cp_lemke_options first = *lo;
    first.restarts = 0;
    first.rescue = 0;
    first.classic = 0;
    cp_lemke_solve(ws, n, M, q, &first, NULL, z, w, info);
    trail_note(trail, CP_SOLVER_LEMKE, info);
    if (info->status == CP_LCP_SOLVED || info->status == CP_LCP_NOMEM) return;
    run_regularised(ws, n, M, q, opt, z, w, info, trail);
    if (info->status == CP_LCP_SOLVED || info->status == CP_LCP_NOMEM) return;
    const int iters = info->iterations;
    cp_lemke_solve(ws, n, M, q, lo, NULL, z, w, info);
    info->iterations += iters; /* the first start counted twice: it ran twice */
    trail_note(trail, CP_SOLVER_LEMKE, info);
    return;
  }
  cp_lemke_solve(ws, n, M, q, lo, NULL, z, w, info);
  trail_note(trail, CP_SOLVER_LEMKE, info);
  run_regularised(ws, n, M, q, opt, z, w, info, trail);
}

/* The certificate as a solver: existence only (no second-solution search). */
static void run_certify(int n, const double *M, const double *q,
                        const cp_solve_options *opt, double *z, double *w,
                        cp_lcp_info *info, cp_solve_trail *trail) {
  cp_certify_options co = opt->certify;
  co.second = 0;
  cp_certify(n, M, q, &co, z, w, NULL, NULL, NULL, info);
  trail_note(trail, CP_SOLVER_CERTIFY, info);
}

cp_lcp_status cp_lcp_solve(cp_lemke_ws *ws, int n, const double *M,
                           const double *q, const cp_solve_options *opt,
                           double *z, double *w, cp_lcp_info *info,
                           cp_solve_trail *trail) {
  cp_solve_options def = cp_solve_defaults();
  if (!opt) opt = &def;
  if (trail) memset(trail, 0, sizeof *trail);
  cp_lcp_info_clear(info);

  cp_lemke_ws *own = NULL;
  const int want_lemke =
      opt->solver == CP_SOLVER_LEMKE || opt->solver == CP_SOLVER_AUTO;
  if (want_lemke && !ws) {
    ws = own = cp_lemke_ws_create(n);
    if (!ws) {
      info->status = CP_LCP_NOMEM;
      info->solver = opt->solver;
      snprintf(info->reason, sizeof info->reason, "out of memory");
      return info->status;
    }
  }

  switch (opt->solver) {
  case CP_SOLVER_LEMKE:
    lemke_route(ws, n, M, q, opt, z, w, info, trail);
    break;
  case CP_SOLVER_FIP:
    cp_fip_solve(n, M, q, &opt->fip, z, w, info);
    trail_note(trail, CP_SOLVER_FIP, info);
    break;
  case CP_SOLVER_CERTIFY:
    run_certify(n, M, q, opt, z, w, info, trail);
    break;
  case CP_SOLVER_AUTO: {
    /* Fast first: Lemke with its restarts; then FIP, which handles the
     * rank-deficient problems where pivoting struggles; then the MIP, which
     * either finds a solution or proves there is none. Each step's answer
     * has passed cp_lcp_check inside the solver. */
    lemke_route(ws, n, M, q, opt, z, w, info, trail);
    if (final_status(info->status)) break;
    cp_fip_solve(n, M, q, &opt->fip, z, w, info);
    trail_note(trail, CP_SOLVER_FIP, info);
    if (final_status(info->status)) break;
    if (opt->extra_restarts > 0) {
      cp_lemke_options lo = opt->lemke;
      lo.restarts = opt->extra_restarts;
      lo.seed = opt->lemke.seed ^ 0x9E3779B97F4A7C15ull; /* other covering vectors */
      /* Step 1 has run the rescue pass already (when it is on): here it
       * would repeat its tight rules over max(extra_restarts + 1, 12)
       * more starts, doubling what an LCP without solution costs
       * (4 + 12 + 201 + 201 = 418 starts with `lcp solve`'s defaults;
       * now 4 + 12 + 201 = 217). docs/solvers.md, "auto". */
      lo.rescue = 0;
      lo.classic = 0; /* likewise the classic pass */
      cp_lemke_solve(ws, n, M, q, &lo, NULL, z, w, info);
      if (trail) { /* the trail counts both Lemke runs */
        trail->status[CP_SOLVER_LEMKE] = info->status;
        trail->iterations[CP_SOLVER_LEMKE] += info->iterations;
      }
      if (final_status(info->status)) break;
    }
    run_certify(n, M, q, opt, z, w, info, trail);
    break;
  }
  }
  /* Every solved answer is exact to rounding or flagged: an approximate one
   * (an interior point's that polishing could not improve, or certify's)
   * gets one more crossover, its support's basis solved exactly and
   * verified; if that fails it stays, with info->polished = 0. */
  if (info->status == CP_LCP_SOLVED && !info->polished) {
    const cp_check_options *chk = info->solver == CP_SOLVER_FIP ? &opt->fip.check
                                  : info->solver == CP_SOLVER_CERTIFY ? &opt->certify.check
                                                                       : &opt->lemke.check;
    if (cp_lcp_crossover(n, M, q, z, w, chk, info) < 0) {
      info->status = CP_LCP_NOMEM;
      snprintf(info->reason, sizeof info->reason, "out of memory");
    }
  }
  cp_lemke_ws_destroy(own);
  return info->status;
}
