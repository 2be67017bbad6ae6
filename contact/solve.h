/// \file contact/solve.h
/// One entry point over all LCP solvers, and the `auto` strategy.
///
/// auto: fast first, then fall back, stopping at the first verified answer:
///   1. Lemke, covering vector of ones, then its random restarts;
///   2. FIP (phase I, then phase II);
///   3. Lemke again with `extra_restarts` more random covering vectors (from
///      another seed): cheap next to the MIP (200 starts on a size-134 LCP
///      without solution: 26 ms; the MIP: seconds to its time limit), and it
///      finds solutions that only unlucky starts missed (the paper study's
///      problem 31 at mu = 0.8: solved at start 74; the MIP timed out);
///      without Lemke's rescue pass, which step 1 has run if it is on;
///   4. certify (MIP): a solution, or a proof that none exists.
/// With `regularise` on (off by default, so the simulator's and the paper
/// study's solves are unchanged; `complan lcp solve` turns it on), a
/// Lemke run that ends without an answer (ray, pivot cap, failed check,
/// numerical failure) is followed at once by Lemke's regularised route
/// (cp_lemke_regularised): in auto between steps 1 and 2, and also for the
/// solver `lemke` alone.
/// info->solver names the solver whose answer is reported; info->iterations
/// and info->starts are those of that solver.
#ifndef CP_CONTACT_SOLVE_H
#define CP_CONTACT_SOLVE_H

#include "contact/certify.h"
#include "contact/fip.h"
#include "contact/lemke.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cp_solve_options {
  cp_lcp_solver solver;       ///< default CP_SOLVER_AUTO
  cp_lemke_options lemke;
  cp_fip_options fip;
  cp_certify_options certify;
  int extra_restarts;         ///< auto, step 3 (default 200; 0 skips it)
  int regularise;             ///< 1: Lemke's regularised route after a
                              ///< failed Lemke run (default 0, see above)
  cp_lemke_reg_options reg;   ///< its options
} cp_solve_options;

cp_solve_options cp_solve_defaults(void);

/// Per-solver trail of an auto solve (which solvers ran, how each ended).
typedef struct cp_solve_trail {
  int ran[4];                 ///< indexed by cp_lcp_solver
  cp_lcp_status status[4];
  int iterations[4];
  int route;                  ///< 1: the answer came from the regularised
                              ///< route (solver lemke), 0 otherwise
  cp_lemke_reg_report reg;    ///< what the route did, when it ran
} cp_solve_trail;

/// Solves (L1) with the chosen solver. `ws` may be NULL (a Lemke workspace is
/// then made for this call). Writes z[n], w[n], *info, and *trail if not
/// NULL. Returns info->status.
cp_lcp_status cp_lcp_solve(cp_lemke_ws *ws, int n, const double *M,
                           const double *q, const cp_solve_options *opt,
                           double *z, double *w, cp_lcp_info *info,
                           cp_solve_trail *trail);

#ifdef __cplusplus
}
#endif
#endif
