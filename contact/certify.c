/// \file contact/certify.c
/// Existence certificate for (L1) by the mixed-integer program (C1) of
/// contact/certify.h, solved with GLPK.
///
/// Scaling. (C1) caps every y_i and w_i at 1 and alpha at 1, so alpha* =
/// 1 / max(1, |z|_inf, |w|_inf) over the best solution, and GLPK's absolute
/// tolerances (primal feasibility 1e-7, integrality tol_int) act on y, w and
/// alpha. A badly scaled (M, q) therefore gives either a tiny alpha* (huge
/// solutions, which the branch-and-bound can prune as "alpha = 0") or tiny y
/// (small solutions, lost in the feasibility tolerance, since alpha cannot
/// exceed 1 to blow them up). Before building (C1) we replace the LCP by an
/// exactly equivalent one:
///
///     M' = D M E,  q' = c D q,   D = diag(d) > 0, E = diag(e) > 0, c > 0,
///
/// whose solutions are z' = c E^-1 z, w' = c D w (complementarity and signs
/// are unchanged, so the solution sets correspond one to one, supports
/// included). d, e, c come from Ruiz equilibration of the n x (n+1) matrix
/// [M q] (rows by d, the columns of M by e, the column q by c) until every
/// row and column has max-norm in about [1/2, 2]. All factors are powers of
/// two, so M' and q' are exact (no rounding) and un-scaling is exact. In the
/// original variables this is (C1) with the bounds y_i <= x_i and
/// w_i <= 1 - x_i replaced by y_i <= x_i e_i / c and w_i <= (1 - x_i) / (c d_i):
/// Pardalos and Rosen's argument holds for any positive bounds, so nothing
/// is lost. res->alpha is alpha in the scaled problem at the reported point
/// (compared with alpha_tol); as the search stops at the first verified
/// point it need not be the optimum, except in an INFEASIBLE verdict.
///
/// Answers. Existence needs one verified solution, not the optimal alpha,
/// and proving alpha optimal is most of the branch-and-bound work; so the
/// main solves (no MIP presolver: our root LP, so that GLPK's callback sees
/// the original columns) stop at the first verified point, from either
///  - a node LP relaxation: its fractional point suggests complementary
///    bases ({i : y_i > w_i} in the equilibrated and in the original
///    scaling, {i : x_i > 1/2}), each solved exactly (a |B| x |B| LU; for a
///    singular M_BB the nearest point of its continuum, by SVD); the first
///    one, if it fails, seeds up to 20 steps of block principal pivoting;
///  - a new incumbent of (C1): its x is the basis.
/// An incumbent (z' = y / alpha, un-scaled) is polished by solving the basis
/// of its x exactly, in the equilibrated problem and then on the original
/// data (cp_lcp_solve_basis); if that fails, cp_lcp_polish (basis
/// z_i > w_i), then the unpolished z. Every candidate is accepted only by
/// cp_lcp_check on the ORIGINAL (M, q). If no point passes, GLPK runs on to
/// the optimal alpha and that point is tried last.
///
/// alpha* <= alpha_tol (optimality proved): a second solve of a LARGER
/// problem must agree before CP_LCP_INFEASIBLE is reported: (C1) with every
/// row relaxed by rounding, |w_i - (M y + q alpha)_i| <= r (|M_i||y| +
/// |q_i| alpha), r = 64 n eps (linear, as y, alpha >= 0), solved along
/// another path (other branching and backtracking rules). Its meaning: no
/// z whose scaled size is below 1 / alpha_tol solves any LCP within
/// rounding of the data (componentwise), decided in floating point by GLPK
/// (not a rational-arithmetic proof). The relaxation is what makes the
/// verdict robust to scaling: with mu = 1e12 forming M rounds away the
/// small entries of a row, and the exact problem may have no solution while
/// the physical answer is still there (the relaxed solve then finds it, and
/// it is verified and reported). It is rounding, not the check's 1e-6,
/// because the check's row tolerance grows with |z|: z = (t, t) passes it
/// for M = [1 -1; -1 1], q = (-1, -1) once t >= 5e5, although that LCP has
/// no solution (w_1 + w_2 = -2). A point the relaxed solve finds
/// that fails the check, a time limit or any GLPK internal error during
/// the call leaves the answer undecided (TIME_LIMIT or NUMERICAL), never
/// INFEASIBLE; so does an M whose nonzeros still span more than 1e7 after
/// equilibration (entries GLPK's absolute tolerances cannot see: mu = 1e20
/// or 1e300 in a contact LCP).
///
/// GLPK failures. GLPK calls abort() on internal errors after printing (it
/// forces its terminal output on). Every GLPK call made here runs inside
/// run_mip, which installs a terminal hook (keeping the text for the reason
/// string and passing it to contact/glpkout.h's sink, never to stdout), and an error hook that longjmps back to
/// run_mip; there glp_free_env() releases everything GLPK had allocated, as
/// GLPK's manual prescribes, and the solve reports CP_LCP_NUMERICAL. Note
/// that glp_free_env() frees the whole GLPK environment of the calling
/// thread, including any GLPK objects the application owns. After a normal
/// solve the error hook and terminal hook are reset to GLPK's defaults (NULL)
/// and glp_term_out is restored to its previous value.
///
/// Work counts. res->mip_solves counts every glp_intopt call (the first
/// solve, the confirmation of an alpha* = 0 verdict, the cut re-solves, and
/// the fixed-pattern LPs of the second-solution search, which are run as
/// MIPs with all binaries fixed). info->iterations is the number of
/// branch-and-bound nodes GLPK created, summed over those solves, counting
/// at least 1 per solve (a solve that the presolver finishes has no tree).
#include "contact/certify.h"
#include "contact/glpkout.h"
#include "contact/lemke.h"
#include "models/clock.h"

/* Largest spread max|M'| / min|M'| (nonzeros, after equilibration) at
 * which an infeasibility verdict is reported: 1 / GLPK's primal
 * feasibility tolerance. */
#define CP_CERTIFY_MAX_SPREAD 1e7

#include <glpk.h>
#include <lapacke.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

cp_certify_options cp_certify_defaults(void) {
  cp_certify_options o;
  memset(&o, 0, sizeof o);
  o.time_limit_s = 60.0;
  o.node_limit = 0;
  o.alpha_tol = 1e-9;
  o.second = 0;
  o.max_cuts = 64;
  o.check = cp_check_defaults();
  o.lemke_starts = 32;
  return o;
}

/* ------------------------------------------------------------------------ */
/* GLPK guard                                                               */
/* ------------------------------------------------------------------------ */

/* What one cp_certify call may spend, shared by its MIP solves. */
typedef struct cert_budget {
  double deadline;  /* the call's end on the options' clock (INFINITY: none) */
  long nodes_left;  /* branch-and-bound nodes left (LONG_MAX: no limit) */
  int node_hit;     /* 1: a solve was stopped, or not made, by nodes_left */
  int lp_hit;       /* 1: a root LP reached its iteration cap */
} cert_budget;

/* Lives in the caller's frame (inside mip_job), not in run_mip's: objects
 * local to the function that calls setjmp and modified before the longjmp
 * would be indeterminate afterwards (C17 7.13.2.1). */
typedef struct glp_guard {
  jmp_buf jb;
  char text[160]; /* GLPK's last output, kept for the reason string */
  size_t len;
} glp_guard;

static int guard_term_hook(void *info, const char *s) {
  glp_guard *g = info;
  const char *s0 = s;
  /* Keep the start of the output: GLPK's error text comes first, then
   * "Error detected in file ...". */
  for (; *s && g->len + 1 < sizeof g->text; s++)
    g->text[g->len++] = (*s == '\n') ? ' ' : *s;
  g->text[g->len] = '\0';
  return cp_glpk_forward(NULL, s0); /* never let GLPK print to stdout */
}

static void guard_error_hook(void *info) {
  glp_guard *g = info;
  longjmp(g->jb, 1);
}

/* ------------------------------------------------------------------------ */
/* Candidates                                                               */
/* ------------------------------------------------------------------------ */

typedef struct cert_ctx {
  int n;
  const double *M, *q;          /* original */
  const double *Ms, *qs;        /* equilibrated */
  const int *er, *ec;           /* row and column exponents */
  int eq;                       /* exponent of q's column factor */
  const cp_check_options *chk;
  double supp_tol;              /* support threshold on the original z */
  unsigned char *basis;         /* [n] scratch */
  double *zr, *wr;              /* [n] scratch: unpolished candidate */
  double *A, *rhs, *sv, *zs;    /* [n*n], [n], [n], [n] scratch */
  int *idx;                     /* [n] scratch */
  lapack_int *piv;              /* [n] scratch */
} cert_ctx;

/* Gathers M'_BB (B = {i : x_i = 1}) into c->A (k x k) and c->idx; returns k. */
static int gather_basis(const cert_ctx *c, const unsigned char *x) {
  const int n = c->n;
  int k = 0;
  for (int i = 0; i < n; i++)
    if (x[i]) c->idx[k++] = i;
  for (int b = 0; b < k; b++)
    for (int a = 0; a < k; a++)
      c->A[a + (size_t)b * (size_t)k] =
          c->Ms[c->idx[a] + (size_t)c->idx[b] * (size_t)n];
  return k;
}

/* Un-scales c->zs into z and sets w = M z + q from the original data. */
static int unscale_z(const cert_ctx *c, double *z, double *w) {
  for (int j = 0; j < c->n; j++) {
    if (!isfinite(c->zs[j])) return -1;
    z[j] = ldexp(c->zs[j], c->ec[j] - c->eq);
  }
  cp_lcp_eval(c->n, c->M, c->q, z, w);
  return 0;
}

/* Solves the complementary basis x (x_i = 1: z_i basic) of the equilibrated
 * LCP, M'_BB z'_B = -q'_B, z'_N = 0, by a |B| x |B| LU (cheaper than the
 * n x n system of cp_lcp_solve_basis, and better conditioned). Sets
 * *near_singular when the pivots spread beyond 1e11 or one is zero. Returns
 * 0, or -1 when there is no usable solution. */
static int scaled_basis_lu(const cert_ctx *c, const unsigned char *x, double *z,
                           double *w, int *near_singular) {
  const int n = c->n;
  const int k = gather_basis(c, x);
  memset(c->zs, 0, sizeof(double) * (size_t)n);
  *near_singular = 0;
  if (k > 0) {
    for (int a = 0; a < k; a++) c->rhs[a] = -c->qs[c->idx[a]];
    lapack_int info = LAPACKE_dgetrf(LAPACK_COL_MAJOR, k, k, c->A, k, c->piv);
    if (info < 0) return -1;
    double umin = INFINITY, umax = 0.0;
    for (int a = 0; a < k; a++) {
      double u = fabs(c->A[a + (size_t)a * (size_t)k]);
      umin = fmin(umin, u);
      umax = fmax(umax, u);
    }
    if (info > 0 || !(umin > 1e-11 * umax)) *near_singular = 1;
    if (info > 0) return -1;
    if (LAPACKE_dgetrs(LAPACK_COL_MAJOR, 'N', k, 1, c->A, k, c->piv, c->rhs,
                       k) != 0)
      return -1;
    for (int a = 0; a < k; a++) c->zs[c->idx[a]] = c->rhs[a];
  }
  return unscale_z(c, z, w);
}

/* For a (nearly) singular M'_BB, i.e. a continuum of solutions (e.g.
 * rank-deficient PSD M): the point of the basis's solution set nearest to
 * the MIP point z0' = y / alpha, by the minimum-norm correction dz of
 * M'_BB dz = -(M' z0' + q')_B (SVD, LAPACKE_dgelsd), z'_N = 0. */
static int scaled_basis_project(const cert_ctx *c, const unsigned char *x,
                                const double *y, double alpha, double *z,
                                double *w) {
  const int n = c->n;
  const int k = gather_basis(c, x);
  memset(c->zs, 0, sizeof(double) * (size_t)n);
  if (k == 0 || !(alpha > 0.0)) return -1;
  for (int a = 0; a < k; a++) {
    double v = y[c->idx[a]];
    c->zs[c->idx[a]] = v > 0.0 ? v / alpha : 0.0;
  }
  for (int a = 0; a < k; a++) {
    const int i = c->idx[a];
    double r = c->qs[i];
    for (int b = 0; b < k; b++)
      r += c->Ms[i + (size_t)c->idx[b] * (size_t)n] * c->zs[c->idx[b]];
    c->rhs[a] = -r;
  }
  lapack_int rank;
  if (LAPACKE_dgelsd(LAPACK_COL_MAJOR, k, k, 1, c->A, k, c->rhs, k, c->sv,
                     1e-10, &rank) != 0)
    return -1;
  for (int a = 0; a < k; a++) c->zs[c->idx[a]] += c->rhs[a];
  return unscale_z(c, z, w);
}

/* z from a MIP point: z_j = e_j (y_j / alpha) / c, clamped at 0. Tries the
 * basis given by x in the equilibrated problem, then (unless basis_only) the
 * same basis on the original data (cp_lcp_solve_basis), cp_lcp_polish, and
 * the raw point. Returns 1 and
 * writes (z, w) when one passes cp_lcp_check on the original data; returns 0
 * with the raw candidate in (z, w) and the failing check's reason in *why. */
static int make_candidate(const cert_ctx *c, const double *y, double alpha,
                          const unsigned char *x, int basis_only, double *z,
                          double *w, cp_lcp_info *why) {
  const int n = c->n;
  cp_lcp_info tmp;
  for (int j = 0; j < n; j++) {
    double v = y[j] > 0.0 ? y[j] / alpha : 0.0;
    c->zr[j] = ldexp(v, c->ec[j] - c->eq);
  }
  cp_lcp_eval(n, c->M, c->q, c->zr, c->wr);
  /* 1. The complementary basis named by x, solved in the equilibrated
   * problem; if it is (nearly) singular, the nearest point of its continuum. */
  int near_singular = 0;
  if (scaled_basis_lu(c, x, z, w, &near_singular) == 0) {
    cp_lcp_info_clear(&tmp);
    if (cp_lcp_check(n, c->M, c->q, z, w, c->chk, &tmp)) return 1;
  }
  if (near_singular && scaled_basis_project(c, x, y, alpha, z, w) == 0) {
    cp_lcp_info_clear(&tmp);
    if (cp_lcp_check(n, c->M, c->q, z, w, c->chk, &tmp)) return 1;
  }
  if (basis_only) {
    cp_lcp_info_clear(why);
    snprintf(why->reason, sizeof why->reason, "basis rejected");
    return 0;
  }
  /* 2. The same basis solved on the original data. */
  for (int i = 0; i < n; i++) c->basis[i] = x[i];
  if (cp_lcp_solve_basis(n, c->M, c->q, c->basis, z, w) == 0) {
    cp_lcp_info_clear(&tmp);
    if (cp_lcp_check(n, c->M, c->q, z, w, c->chk, &tmp)) return 1;
  }
  /* 3. x may name a bad basis (degenerate indices): cp_lcp_polish picks the
   * basis z_i > w_i and keeps it only if valid. */
  memcpy(z, c->zr, sizeof(double) * (size_t)n);
  memcpy(w, c->wr, sizeof(double) * (size_t)n);
  if (cp_lcp_polish(n, c->M, c->q, z, w, c->chk)) {
    cp_lcp_info_clear(&tmp);
    if (cp_lcp_check(n, c->M, c->q, z, w, c->chk, &tmp)) return 1;
    memcpy(z, c->zr, sizeof(double) * (size_t)n);
    memcpy(w, c->wr, sizeof(double) * (size_t)n);
  }
  /* 4. The unpolished point. */
  cp_lcp_info_clear(why);
  return cp_lcp_check(n, c->M, c->q, z, w, c->chk, why);
}

/* Principal pivoting from a basis whose solution fails the check: flip
 * every infeasible index (z_i < 0 basic, w_i < 0 nonbasic) at once (block
 * principal pivoting, Judice and Pires), falling back to flipping only the
 * largest infeasible index (Murty's rule) when the number of
 * infeasibilities stops falling. Converges for P-matrices; elsewhere it is
 * only a heuristic, hence the cap. Writes a verified (z, w) and returns 1,
 * or returns 0. `b` is modified. */
static int pivot_repair(const cert_ctx *c, unsigned char *b, double *z,
                        double *w, int max_steps) {
  const int n = c->n;
  const double tol = c->supp_tol;
  int best = INT_MAX, stall = 0;
  for (int step = 0; step < max_steps; step++) {
    int ns;
    if (scaled_basis_lu(c, b, z, w, &ns) != 0) return 0;
    int bad = 0, last_bad = -1;
    for (int i = 0; i < n; i++)
      if (b[i] ? z[i] < -tol : w[i] < -tol) { bad++; last_bad = i; }
    if (bad == 0) {
      cp_lcp_info tmp;
      cp_lcp_info_clear(&tmp);
      return cp_lcp_check(n, c->M, c->q, z, w, c->chk, &tmp);
    }
    if (bad < best) { best = bad; stall = 0; } else stall++;
    if (stall == 0) {
      for (int i = 0; i < n; i++)
        if (b[i] ? z[i] < -tol : w[i] < -tol) b[i] = !b[i];
    } else {
      b[last_bad] = !b[last_bad];
    }
  }
  return 0;
}

static void support_of(int n, const double *z, double tol, unsigned char *s) {
  for (int i = 0; i < n; i++) s[i] = z[i] > tol;
}

/* The alpha of (C1) at a solution: 1 / max(1, |z'|_inf, |w'|_inf) in the
 * equilibrated problem (z' = c E^-1 z, w' = c D w). */
static double alpha_of(const cert_ctx *c, const double *z, const double *w) {
  double m = 1.0;
  for (int i = 0; i < c->n; i++) {
    m = fmax(m, fabs(ldexp(z[i], c->eq - c->ec[i])));
    m = fmax(m, fabs(ldexp(w[i], c->eq + c->er[i])));
  }
  return 1.0 / m;
}

static int same_pattern(int n, const unsigned char *a, const unsigned char *b) {
  for (int i = 0; i < n; i++)
    if ((a[i] != 0) != (b[i] != 0)) return 0;
  return 1;
}

/* ------------------------------------------------------------------------ */
/* One MIP (C1) solve                                                       */
/* ------------------------------------------------------------------------ */

typedef enum mip_outcome {
  MIP_OPTIMAL,   /* GLPK proved optimality: alpha (or obj) is optimal */
  MIP_EARLY,     /* stopped at an incumbent that passed the check: the
                    verified pair is in job->ez, job->ew */
  MIP_INCUMBENT, /* stopped early (time limit, failure) with an incumbent */
  MIP_NOFEAS,    /* no feasible point (only possible when cuts exclude all) */
  MIP_TIME,      /* time limit without an incumbent */
  MIP_FAIL,      /* GLPK returned an error code */
  MIP_GLPK_ERROR,/* GLPK hit an internal error; recovered by longjmp */
  MIP_NOMEM
} mip_outcome;

typedef struct mip_job {
  /* inputs */
  int n;
  const double *M;           /* [n*n] scaled, column-major */
  const double *q;           /* [n] scaled */
  int ncuts;
  const unsigned char *cuts; /* [ncuts*n] excluded x patterns */
  const unsigned char *fix;  /* [n] or NULL: fix x to this pattern (LP) */
  const unsigned char *objy; /* [n] or NULL: maximise sum of these y_i
                                instead of alpha (only with fix) */
  double alpha_lb;           /* lower bound on alpha */
  double relax;              /* > 0: rows 1..n relaxed to the check's row
                                tolerance (see run_mip); 0: exact */
  double deadline;           /* the call's end on clock (INFINITY: none):
                                each solve gets only what is left of it */
  double (*clock)(void *);   /* the options' clock, or NULL: cp_clock_now */
  void *clock_ctx;
  long node_cap;             /* nodes this solve may create (LONG_MAX: any) */
  int node_stop;             /* output: 1 when node_cap stopped the solve */
  int lp_cap;                /* output: 1 when the root LP reached its
                                iteration cap (run_mip) */
  int may_refuse;            /* 0: the call's first solve, made even when
                                setting up used the budget (GLPK's shortest
                                limit, 1 ms, as before); 1: later solves */
  int refused;               /* output: 1 when the deadline had passed before
                                the solve, which then never reached GLPK */
  int presolve;              /* 1: GLPK's MIP presolver; 0: our own root LP */
  int br_tech, bt_tech;      /* GLPK branching and backtracking rules */
  /* Early stop (only without presolve, where the callback sees the
   * original columns): at every new incumbent with alpha > early_alpha the
   * candidate is built and checked; the first that passes ends the solve. */
  const cert_ctx *early;
  double early_alpha;
  const unsigned char *avoid;/* [n] or NULL: heuristic points must have
                                another support than this */
  double *ez, *ew;           /* [n] the verified pair of MIP_EARLY */
  unsigned char *last;       /* [4n] scratch: last heuristic basis tried,
                                then this node's three bases */
  int have_last;
  int repair_steps;          /* principal pivoting steps per node (0: off) */
  int early_found;           /* 1: at an incumbent, 2: by the heuristic */
  /* outputs */
  int ret;                   /* glp_intopt (or glp_simplex) return code */
  int mip_status;            /* glp_mip_status */
  double obj, alpha;
  double *y;                 /* [n] */
  unsigned char *x;          /* [n] rounded binaries */
  int nodes;                 /* branch-and-bound nodes created */
  glp_guard guard;
} mip_job;

static void mip_callback(glp_tree *T, void *info) {
  mip_job *job = info;
  int a_cnt, n_cnt, t_cnt;
  glp_ios_tree_size(T, &a_cnt, &n_cnt, &t_cnt);
  if (t_cnt > job->nodes) job->nodes = t_cnt;
  /* The work limit (cp_certify_options.node_limit): the same data stops at
   * the same node on any machine, which a time limit cannot promise. */
  if (t_cnt > job->node_cap && !job->early_found) {
    job->node_stop = 1;
    glp_ios_terminate(T);
    return;
  }
  if (!job->early || job->early_found) return;
  const int reason = glp_ios_reason(T);
  if (reason != GLP_IBINGO && reason != GLP_IHEUR) return;
  /* Existence needs any verified solution, not the largest alpha: proving
   * alpha optimal is most of the branch-and-bound work. So stop at the first
   * point that passes the check. Two sources:
   *  - GLP_IBINGO: the node's LP solution is integer feasible (a point of
   *    (C1)); the candidate uses its x as the basis (make_candidate).
   *  - GLP_IHEUR: the node's LP relaxation (fractional x) read as
   *    complementary bases, each solved exactly; the first reading, if its
   *    solution fails, is handed to a few steps of principal pivoting. */
  glp_prob *P = glp_ios_get_prob(T);
  const int n = job->n;
  const cert_ctx *c = job->early;
  double alpha = glp_get_col_prim(P, n + 1);
  if (!(alpha > job->early_alpha)) return;
  for (int j = 0; j < n; j++) job->y[j] = glp_get_col_prim(P, 1 + j);
  cp_lcp_info why;
  int ok = 0;
  if (reason == GLP_IBINGO) {
    for (int i = 0; i < n; i++)
      job->x[i] = glp_get_col_prim(P, 2 * n + 2 + i) > 0.5;
    ok = make_candidate(c, job->y, alpha, job->x, 0, job->ez, job->ew, &why);
  } else {
    /* Three readings of the fractional point, each a complementary basis:
     * y_i > w_i in the equilibrated problem, z_i > w_i in the original one
     * (other weights), and x_i > 1/2. Each distinct one costs a |B| x |B|
     * LU; a basis equal to the one tried just before is skipped. */
    unsigned char *cur = job->last + n; /* 3 rows of n after `last` */
    for (int i = 0; i < n; i++) {
      double wi = glp_get_col_prim(P, n + 2 + i);
      double zi = ldexp(fmax(job->y[i], 0.0), c->ec[i] - c->eq);
      double wo = ldexp(fmax(wi, 0.0), -c->eq - c->er[i]);
      cur[i] = job->y[i] > wi;
      cur[n + i] = zi > wo;
      cur[2 * n + i] = glp_get_col_prim(P, 2 * n + 2 + i) > 0.5;
    }
    for (int t = 0; t < 3 && !ok; t++) {
      unsigned char *b = cur + (size_t)t * (size_t)n;
      int dup = job->have_last && memcmp(b, job->last, (size_t)n) == 0;
      for (int u = 0; u < t && !dup; u++)
        dup = memcmp(b, cur + (size_t)u * (size_t)n, (size_t)n) == 0;
      if (dup) continue;
      memcpy(job->x, b, (size_t)n);
      ok = make_candidate(c, job->y, alpha, job->x, 1, job->ez, job->ew, &why);
      if (!ok && t == 0 && job->repair_steps > 0)
        ok = pivot_repair(c, job->x, job->ez, job->ew, job->repair_steps);
    }
    memcpy(job->last, cur, (size_t)n);
    job->have_last = 1;
  }
  if (!ok) return;
  /* In a second-solution search only another support is news. */
  if (job->avoid && reason == GLP_IHEUR) {
    int differs = 0;
    for (int i = 0; i < n; i++)
      if ((job->ez[i] > job->early->supp_tol) != (job->avoid[i] != 0)) differs = 1;
    if (!differs) return;
  }
  job->early_found = reason == GLP_IBINGO ? 1 : 2;
  job->alpha = job->obj = alpha;
  glp_ios_terminate(T);
}

/* The options' clock (models/clock.h's monotonic one by default). */
static double clock_of(double (*clock)(void *), void *ctx) {
  return clock ? clock(ctx) : cp_clock_now();
}

static int ms_limit(double s) {
  if (!(s > 0.0)) return INT_MAX;
  double ms = s * 1000.0;
  if (ms >= (double)INT_MAX) return INT_MAX;
  return ms < 1.0 ? 1 : (int)ms;
}

/* Columns: y_j = 1..n, alpha = n+1, w_i = n+2..2n+1, x_i = 2n+2..3n+1.
 * Rows:    1..n      sum_j M_ij y_j + q_i alpha - w_i = 0
 *          n+1..2n   y_i - x_i <= 0
 *          2n+1..3n  w_i + x_i <= 1
 *          3n+1..    sum_{p_i=0} x_i - sum_{p_i=1} x_i >= 1 - |p|  (cuts)
 * Every GLPK call of this module happens inside this function. */
static mip_outcome run_mip(mip_job *job) {
  const int n = job->n;
  const int ncuts = job->fix ? 0 : job->ncuts;
  const int relaxed = job->relax > 0.0;
  const int ncol = 3 * n + 1;
  job->ret = 0;
  job->mip_status = GLP_UNDEF;
  job->obj = job->alpha = 0.0;
  job->nodes = 0;
  job->early_found = 0;
  job->have_last = 0;
  job->refused = 0;
  job->node_stop = 0;
  job->lp_cap = 0;
  job->guard.len = 0;
  job->guard.text[0] = '\0';
  /* What is left of the call's time (cp_certify_options.time_limit_s is
   * per call): a solve that would start after the deadline is not made. */
  const double left = job->deadline < INFINITY
                          ? job->deadline - clock_of(job->clock, job->clock_ctx)
                          : INFINITY;
  if ((!(left > 0.0) || job->node_cap <= 0) && job->may_refuse) {
    job->ret = GLP_ETMLIM;
    job->refused = 1;
    job->node_stop = job->node_cap <= 0;
    return MIP_TIME;
  }
  size_t cap = (size_t)n * (size_t)n + 6 * (size_t)n +
               (size_t)ncuts * (size_t)n + 1;
  if (relaxed) cap += (size_t)n * (size_t)n + 2 * (size_t)n;
  int *ia = malloc(sizeof(int) * cap);
  int *ja = malloc(sizeof(int) * cap);
  double *ar = malloc(sizeof(double) * cap);
  if (!ia || !ja || !ar || (size_t)INT_MAX < cap) {
    free(ia); free(ja); free(ar);
    return MIP_NOMEM;
  }
  /* Assemble the triplets before touching GLPK. */
  /* Relaxed rows (relax = r > 0), the check's row tolerance made linear
   * (y, alpha >= 0, so |M_i||y| + |q_i| alpha is linear):
   *   row i:          sum_j (M_ij + r|M_ij|) y_j + (q_i + r|q_i|) alpha - w_i >= 0
   *   row 3n+cuts+i:  sum_j (M_ij - r|M_ij|) y_j + (q_i - r|q_i|) alpha - w_i <= 0
   * i.e. |w_i - (M y + q alpha)_i| <= r (|M_i||y| + |q_i| alpha). Positive
   * diagonal scaling maps this set onto the same set of the original data,
   * so it is exact under our equilibration. */
  const double r = job->relax;
  const int rb = 3 * n + ncuts; /* row offset of the relaxed lower rows */
  int k = 0;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      double v = job->M[i + (size_t)j * (size_t)n];
      if (v == 0.0) continue;
      k++; ia[k] = i + 1; ja[k] = j + 1; ar[k] = relaxed ? v + r * fabs(v) : v;
      if (relaxed) { k++; ia[k] = rb + i + 1; ja[k] = j + 1; ar[k] = v - r * fabs(v); }
    }
  for (int i = 0; i < n; i++) {
    const double qi = job->q[i];
    if (qi != 0.0) {
      k++; ia[k] = i + 1; ja[k] = n + 1; ar[k] = relaxed ? qi + r * fabs(qi) : qi;
      if (relaxed) { k++; ia[k] = rb + i + 1; ja[k] = n + 1; ar[k] = qi - r * fabs(qi); }
    }
    if (relaxed) { k++; ia[k] = rb + i + 1; ja[k] = n + 2 + i; ar[k] = -1.0; }
    k++; ia[k] = i + 1; ja[k] = n + 2 + i; ar[k] = -1.0;
    k++; ia[k] = n + 1 + i; ja[k] = 1 + i; ar[k] = 1.0;
    k++; ia[k] = n + 1 + i; ja[k] = 2 * n + 2 + i; ar[k] = -1.0;
    k++; ia[k] = 2 * n + 1 + i; ja[k] = n + 2 + i; ar[k] = 1.0;
    k++; ia[k] = 2 * n + 1 + i; ja[k] = 2 * n + 2 + i; ar[k] = 1.0;
  }
  for (int c = 0; c < ncuts; c++)
    for (int i = 0; i < n; i++) {
      k++;
      ia[k] = 3 * n + 1 + c;
      ja[k] = 2 * n + 2 + i;
      ar[k] = job->cuts[(size_t)c * (size_t)n + i] ? -1.0 : 1.0;
    }
  const int nnz = k;

  glp_term_hook(guard_term_hook, &job->guard);
  const int old_out = glp_term_out(GLP_OFF);
  glp_error_hook(guard_error_hook, &job->guard);
  if (setjmp(job->guard.jb)) {
    /* GLPK is in its error state: its memory, problem objects included, is
     * released only by glp_free_env(); the hooks go with the environment. */
    glp_free_env();
    if (old_out != GLP_ON) glp_term_out(old_out);
    free(ia); free(ja); free(ar);
    return MIP_GLPK_ERROR;
  }

  glp_prob *P = glp_create_prob();
  glp_set_obj_dir(P, GLP_MAX);
  glp_add_cols(P, ncol);
  glp_add_rows(P, 3 * n + ncuts + (relaxed ? n : 0));
  for (int j = 0; j < n; j++) {
    int fixed0 = job->fix && !job->fix[j];
    glp_set_col_bnds(P, 1 + j, fixed0 ? GLP_FX : GLP_DB, 0.0, fixed0 ? 0.0 : 1.0);
    if (job->objy && job->objy[j]) glp_set_obj_coef(P, 1 + j, 1.0);
  }
  if (job->alpha_lb > 0.0)
    glp_set_col_bnds(P, n + 1, GLP_DB, job->alpha_lb, 1.0);
  else
    glp_set_col_bnds(P, n + 1, GLP_DB, 0.0, 1.0);
  if (!job->objy) glp_set_obj_coef(P, n + 1, 1.0);
  for (int i = 0; i < n; i++) {
    int fixed0 = job->fix && job->fix[i];
    glp_set_col_bnds(P, n + 2 + i, fixed0 ? GLP_FX : GLP_DB, 0.0, fixed0 ? 0.0 : 1.0);
    if (job->fix) {
      double v = job->fix[i] ? 1.0 : 0.0;
      glp_set_col_bnds(P, 2 * n + 2 + i, GLP_FX, v, v);
    } else {
      glp_set_col_kind(P, 2 * n + 2 + i, GLP_BV);
    }
  }
  for (int i = 0; i < n; i++) {
    if (relaxed) {
      glp_set_row_bnds(P, 1 + i, GLP_LO, 0.0, 0.0);
      glp_set_row_bnds(P, rb + 1 + i, GLP_UP, 0.0, 0.0);
    } else {
      glp_set_row_bnds(P, 1 + i, GLP_FX, 0.0, 0.0);
    }
    glp_set_row_bnds(P, n + 1 + i, GLP_UP, 0.0, 0.0);
    glp_set_row_bnds(P, 2 * n + 1 + i, GLP_UP, 0.0, 1.0);
  }
  for (int c = 0; c < ncuts; c++) {
    int ones = 0;
    for (int i = 0; i < n; i++) ones += job->cuts[(size_t)c * (size_t)n + i] != 0;
    glp_set_row_bnds(P, 3 * n + 1 + c, GLP_LO, 1.0 - ones, 0.0);
  }
  glp_load_matrix(P, nnz, ia, ja, ar);
  /* Test hook (contact/glpkout.h): a GLPK error raised here takes the path
   * of a real internal error. */
  if (cp_glpk_fault("certify")) glp_error("complan: injected GLPK fault\n");

  glp_iocp ip;
  glp_init_iocp(&ip);
  ip.msg_lev = GLP_MSG_OFF;
  ip.tm_lim = ms_limit(left > 0.0 ? left : 1e-9); /* >= 1 ms */
  /* x is binary: 1e-9 keeps GLPK from accepting x_i = 1e-6 as 0, which
   * would let y_i (hence z_i) be nonzero with w_i too. */
  ip.tol_int = 1e-9;
  ip.tol_obj = 1e-9;
  ip.cb_func = mip_callback;
  ip.cb_info = job;
  ip.br_tech = job->br_tech;
  ip.bt_tech = job->bt_tech;
  int ret;
  if (job->presolve) {
    ip.presolve = GLP_ON;
    ret = glp_intopt(P, &ip);
  } else {
    /* Without the MIP presolver glp_intopt needs an optimal basis of the LP
     * relaxation: scale (GLPK's own scaling, on top of ours) and solve it. */
    glp_smcp sp;
    glp_init_smcp(&sp);
    sp.msg_lev = GLP_MSG_OFF;
    sp.tm_lim = ip.tm_lim;
    /* A work bound as well: on a loaded machine in session 19 this LP
     * (n = 132, from a simulated step) ran for minutes without ending;
     * before, only the time limit ended it, at a point that depends on the
     * machine. Reached: the solve is undecided at a work limit. */
    sp.it_lim = 20 * (glp_get_num_rows(P) + ncol) + 2000;
    double t0 = glp_time();
    glp_scale_prob(P, GLP_SF_AUTO);
    ret = glp_simplex(P, &sp);
    if (ret == GLP_EITLIM) {
      job->lp_cap = 1;
      ret = GLP_ETMLIM;
    } else if (ret == 0 && glp_get_status(P) == GLP_OPT) {
      if (ip.tm_lim != INT_MAX) {
        double used = glp_difftime(glp_time(), t0) * 1000.0;
        ip.tm_lim = used >= ip.tm_lim - 1 ? 1 : ip.tm_lim - (int)used;
      }
      ip.presolve = GLP_OFF;
      ret = glp_intopt(P, &ip);
    } else if (ret == 0 && glp_get_status(P) == GLP_NOFEAS) {
      ret = GLP_ENOPFS; /* all patterns cut */
    } else if (ret == 0) {
      ret = GLP_EFAIL;
    }
  }
  /* A solve stopped by its node cap reads as one stopped by the time
   * limit (an undecided end); cp_certify names the limit. */
  if (job->node_stop && !job->early_found && ret == GLP_ESTOP) ret = GLP_ETMLIM;
  job->ret = ret;
  job->mip_status = glp_mip_status(P);
  mip_outcome out;
  if (job->early_found) {
    out = MIP_EARLY;
  } else if (job->mip_status == GLP_OPT || job->mip_status == GLP_FEAS) {
    job->obj = glp_mip_obj_val(P);
    job->alpha = glp_mip_col_val(P, n + 1);
    for (int j = 0; j < n; j++) job->y[j] = glp_mip_col_val(P, 1 + j);
    for (int i = 0; i < n; i++)
      job->x[i] = glp_mip_col_val(P, 2 * n + 2 + i) > 0.5;
    out = (ret == 0 && job->mip_status == GLP_OPT) ? MIP_OPTIMAL : MIP_INCUMBENT;
  } else if (ret == GLP_ENOPFS || (ret == 0 && job->mip_status == GLP_NOFEAS)) {
    out = MIP_NOFEAS;
  } else if (ret == GLP_ETMLIM) {
    out = MIP_TIME;
  } else {
    out = MIP_FAIL;
  }
  glp_delete_prob(P);
  glp_error_hook(NULL, NULL);
  glp_term_out(old_out);
  glp_term_hook(NULL, NULL);
  free(ia); free(ja); free(ar);
  return out;
}

/* ------------------------------------------------------------------------ */
/* Scaling                                                                  */
/* ------------------------------------------------------------------------ */

/* Exponent p with 2^p closest (in log) to 1/sqrt(v), v > 0. */
static int half_exp(double v) {
  int p = (int)lround(-0.5 * log2(v));
  return p > 60 ? 60 : (p < -60 ? -60 : p);
}

/* Ruiz equilibration of [M q] with power-of-two factors: writes the exact
 * scaled copy Ms = D M E, qs = c D q and the exponents (d_i = 2^er[i],
 * e_j = 2^ec[j], c = 2^*eq). */
static void equilibrate(int n, const double *M, const double *q, double *Ms,
                        double *qs, int *er, int *ec, int *eq, double *rmax,
                        double *cmax) {
  memset(er, 0, sizeof(int) * (size_t)n);
  memset(ec, 0, sizeof(int) * (size_t)n);
  *eq = 0;
  memcpy(Ms, M, sizeof(double) * (size_t)n * (size_t)n);
  memcpy(qs, q, sizeof(double) * (size_t)n);
  for (int it = 0; it < 30; it++) {
    for (int i = 0; i < n; i++) rmax[i] = fabs(qs[i]);
    double qmax = 0.0;
    for (int i = 0; i < n; i++) qmax = fmax(qmax, fabs(qs[i]));
    for (int j = 0; j < n; j++) {
      const double *col = Ms + (size_t)j * (size_t)n;
      double cm = 0.0;
      for (int i = 0; i < n; i++) {
        double a = fabs(col[i]);
        if (a > cm) cm = a;
        if (a > rmax[i]) rmax[i] = a;
      }
      cmax[j] = cm;
    }
    int changed = 0;
    for (int i = 0; i < n; i++)
      if (rmax[i] > 0.0) {
        int p = half_exp(rmax[i]);
        if (p) { er[i] += p; changed = 1; }
      }
    for (int j = 0; j < n; j++)
      if (cmax[j] > 0.0) {
        int p = half_exp(cmax[j]);
        if (p) { ec[j] += p; changed = 1; }
      }
    if (qmax > 0.0) {
      int p = half_exp(qmax);
      if (p) { *eq += p; changed = 1; }
    }
    if (!changed) break;
    /* Recompute from the original data: ldexp is exact barring under- or
     * overflow, which the +-60 cap per step and 30 steps keep far away for
     * any finite data that is not itself near the limits of double. */
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++)
        Ms[i + (size_t)j * (size_t)n] =
            ldexp(M[i + (size_t)j * (size_t)n], er[i] + ec[j]);
    for (int i = 0; i < n; i++) qs[i] = ldexp(q[i], er[i] + *eq);
  }
}

static const char *mip_outcome_text(mip_outcome o) {
  static const char *const names[] = {"optimal", "verified incumbent",
                                      "incumbent", "no feasible point",
                                      "time limit", "solver failure",
                                      "GLPK internal error", "out of memory"};
  return names[o];
}

/* ------------------------------------------------------------------------ */
/* cp_certify                                                               */
/* ------------------------------------------------------------------------ */

typedef struct cert_state {
  cp_certify_result *res;
  long nodes;
  int glpk_errors;  /* solves that ended in a GLPK internal error */
  int *glpk_errors_out; /* the caller's count of them (may be NULL) */
  cert_budget *bud;     /* the call's limits */
} cert_state;

static mip_outcome solve_counted(mip_job *job, cert_state *st) {
  job->node_cap = st->bud->nodes_left;
  mip_outcome o = run_mip(job);
  if (job->node_stop) st->bud->node_hit = 1;
  if (job->lp_cap) st->bud->lp_hit = 1;
  if (job->refused) return o; /* past the deadline: no solve was made */
  if (st->bud->nodes_left != LONG_MAX)
    st->bud->nodes_left -= job->nodes > 1 ? job->nodes : 1;
  st->glpk_errors += o == MIP_GLPK_ERROR;
  if (st->glpk_errors_out) *st->glpk_errors_out += o == MIP_GLPK_ERROR;
  st->res->mip_solves++;
  st->nodes += job->nodes > 1 ? job->nodes : 1;
  return o;
}

static void set_reason_mip(cp_lcp_info *info, const char *what,
                           const mip_job *job, mip_outcome o) {
  if (o == MIP_GLPK_ERROR)
    snprintf(info->reason, sizeof info->reason, "%s: GLPK internal error: %.100s",
             what, job->guard.text[0] ? job->guard.text : "(no message)");
  else
    snprintf(info->reason, sizeof info->reason,
             "%s: %s (glp_intopt %d, mip status %d)", what,
             mip_outcome_text(o), job->ret, job->mip_status);
}

static cp_lcp_status certify_once(int n, const double *M, const double *q,
                                  const cp_certify_options *opt, double *z, double *w,
                                  double *z2, double *w2, cp_certify_result *res,
                                  cp_lcp_info *info,
                                  int *glpk_errors, cert_budget *bud, int first);

/* GLPK sometimes returns an "optimal" point of (C1) that violates its own
 * equality rows when q holds rounding noise (entries ~1e-15 |q|: the b_t of
 * a rolling contact that is zero in exact arithmetic) -- found by the
 * paper's study (experiments/results/paper): glp_check_kkt showed a 0.61
 * row violation, and the same LCP with those entries set to zero certified
 * at once. So a failed or numerically broken answer is retried once on q
 * with every |q_i| <= 1e-12 max(1, |q|_inf) set to 0. Solutions of the
 * retry count only after cp_lcp_check accepts them on the ORIGINAL (M, q);
 * an alpha* = 0 verdict of the retry is reported as "no solution" with the
 * reason saying that q was cleaned (the two LCPs differ by less than 1e-12
 * of the check tolerance's scale). */
static cp_lcp_status certify_main(int n, const double *M, const double *q,
                                  const cp_certify_options *opt, double *z,
                                  double *w, double *z2, double *w2,
                                  cp_certify_result *res, cp_lcp_info *info,
                                  cert_budget *bud);

/* GLPK's alpha* = 0 is a floating-point branch-and-bound verdict, and on
 * degenerate data both MIP solves can be wrong alike. Found in the paper
 * study (session 20): data set p22 at mu = 1.0 (n = 50, forces
 * indeterminate; the copy regenerated after the generator's arithmetic
 * moved in the last bits) has a solution that Lemke finds in 37 pivots and
 * the check accepts (its alpha in (C1) is about 0.3), yet the main solve and
 * the confirming one both end "optimal" at alpha = 0 (GLPK 5.0; on the
 * unequilibrated (C1) GLPK's presolved MIP stops at 0.20, also short of the
 * 0.29 of the solution's own pattern). So a "no solution" verdict stands
 * only after opt->lemke_starts Lemke starts on the original data find
 * nothing; a solution they find and the check accepts overrules the MIPs.
 * This makes a wrong verdict rarer, not impossible: Lemke failing proves
 * nothing. Returns the new status (SOLVED, INFEASIBLE, or NOMEM). */
static cp_lcp_status lemke_overrule(int n, const double *M, const double *q,
                                    const cp_certify_options *opt, double *z, double *w,
                                    cp_certify_result *res, cp_lcp_info *info) {
  cp_lemke_ws *ws = cp_lemke_ws_create(n);
  double *zt = malloc(sizeof(double) * 2 * (size_t)n);
  if (!ws || !zt) {
    cp_lemke_ws_destroy(ws);
    free(zt);
    snprintf(info->reason, sizeof info->reason, "certify: out of memory");
    return info->status = CP_LCP_NOMEM;
  }
  double *wt = zt + n;
  cp_lemke_options lo = cp_lemke_defaults();
  lo.restarts = opt->lemke_starts - 1;
  lo.rescue = 1;
  lo.check = opt->check;
  cp_lcp_info li;
  cp_lcp_info_clear(&li);
  cp_lcp_status st = CP_LCP_INFEASIBLE;
  if (cp_lemke_solve(ws, n, M, q, &lo, NULL, zt, wt, &li) == CP_LCP_SOLVED) {
    memcpy(z, zt, sizeof(double) * (size_t)n);
    memcpy(w, wt, sizeof(double) * (size_t)n);
    const int nodes = info->iterations;
    *info = li; /* the check's fields of the reported pair */
    info->solver = CP_SOLVER_CERTIFY;
    info->iterations = nodes;
    info->starts = 1;
    info->reason[0] = '\0';
    res->mip_overruled = 1;
    res->has_second = res->second_decided = 0;
    st = info->status = CP_LCP_SOLVED;
  }
  cp_lemke_ws_destroy(ws);
  free(zt);
  return st;
}

/* The answer is exact to rounding or flagged (info->polished, lcp.h): a
 * solution that is not its support's basis solution gets that crossover. */
cp_lcp_status cp_certify(int n, const double *M, const double *q,
                         const cp_certify_options *opt, double *z, double *w,
                         double *z2, double *w2, cp_certify_result *res,
                         cp_lcp_info *info) {
  /* One budget for the whole call: its MIP solves (the confirming one,
   * the retry on cleaned q, the second solution's) share time_limit_s and
   * node_limit. */
  const cp_certify_options def = cp_certify_defaults();
  if (!opt) opt = &def;
  cp_certify_result res_local;
  cert_budget bud = {INFINITY, LONG_MAX, 0, 0};
  if (opt->time_limit_s > 0.0)
    bud.deadline = clock_of(opt->clock, opt->clock_ctx) + opt->time_limit_s;
  if (opt->node_limit > 0) bud.nodes_left = opt->node_limit;
  cp_lcp_status st = certify_main(n, M, q, opt, z, w, z2, w2, res, info, &bud);
  /* Undecided at the work limit, not the clock: an iteration cap (the
   * reason, written where the search ended, names the node limit). */
  if (st == CP_LCP_TIME_LIMIT && (bud.node_hit || bud.lp_hit)) {
    st = info->status = CP_LCP_ITERATION_CAP;
    if (bud.lp_hit && !bud.node_hit)
      snprintf(info->reason, sizeof info->reason,
               "certify: undecided: the MIP's root LP relaxation reached its "
               "iteration cap (20 (rows + columns) + 2000)");
  }
  if (st == CP_LCP_INFEASIBLE && opt->lemke_starts > 0)
    st = lemke_overrule(n, M, q, opt, z, w, res ? res : &res_local, info);
  if (st == CP_LCP_SOLVED && !info->polished) {
    const cp_check_options chk = opt->check;
    if (cp_lcp_crossover(n, M, q, z, w, &chk, info) < 0) {
      info->status = CP_LCP_NOMEM;
      snprintf(info->reason, sizeof info->reason, "certify: out of memory");
      return CP_LCP_NOMEM;
    }
  }
  return st;
}

static cp_lcp_status certify_main(int n, const double *M, const double *q,
                                  const cp_certify_options *opt, double *z,
                                  double *w, double *z2, double *w2,
                                  cp_certify_result *res, cp_lcp_info *info,
                                  cert_budget *bud) {
  cp_certify_result res_local;
  if (!res) res = &res_local;
  int glpk_errors = 0;
  cp_lcp_status st =
      certify_once(n, M, q, opt, z, w, z2, w2, res, info, &glpk_errors, bud, 1);
  if ((st != CP_LCP_CHECK_FAILED && st != CP_LCP_NUMERICAL) || n < 1 || !M || !q || !z || !w)
    return st;
  double *qd = malloc(sizeof(double) * (size_t)n);
  if (!qd) return st;
  double qmax = 1.0;
  for (int i = 0; i < n; i++)
    if (isfinite(q[i])) qmax = fmax(qmax, fabs(q[i]));
  int changed = 0;
  for (int i = 0; i < n; i++) {
    qd[i] = fabs(q[i]) <= 1e-12 * qmax ? 0.0 : q[i];
    changed += qd[i] != q[i];
  }
  if (!changed) {
    free(qd);
    return st;
  }
  const int mip_solves = res->mip_solves, nodes = info->iterations;
  /* The first attempt had a GLPK internal error (counted by its solves):
   * the retry may still find a verified solution, but after an error no
   * "no solution" verdict is given. */
  const int had_error = glpk_errors > 0;
  /* The retry gets what is left of the call's time, not a new budget. */
  st = certify_once(n, M, qd, opt, z, w, z2, w2, res, info, NULL, bud, 0);
  res->mip_solves += mip_solves;
  info->iterations += nodes;
  res->q_cleaned = changed;
  cp_check_options def = cp_certify_defaults().check;
  const cp_check_options *ck = opt ? &opt->check : &def;
  if (st == CP_LCP_SOLVED) {
    cp_lcp_eval(n, M, q, z, w);
    if (!cp_lcp_check(n, M, q, z, w, ck, info)) {
      st = info->status = CP_LCP_CHECK_FAILED;
    } else if (res->has_second) {
      cp_lcp_info i2;
      cp_lcp_info_clear(&i2);
      cp_lcp_eval(n, M, q, z2, w2);
      if (!cp_lcp_check(n, M, q, z2, w2, ck, &i2)) res->has_second = res->second_decided = 0;
    }
  } else if (st == CP_LCP_INFEASIBLE && had_error) {
    st = info->status = CP_LCP_NUMERICAL;
    snprintf(info->reason, sizeof info->reason,
             "certify: undecided: GLPK failed internally on the data, and a "
             "verdict on a cleaned copy of q is no proof after that");
  } else if (st == CP_LCP_INFEASIBLE) {
    size_t len = strlen(info->reason);
    snprintf(info->reason + len, sizeof info->reason - len,
             " (q's %d rounding-level entries set to 0)", changed);
  }
  free(qd);
  return st;
}

static cp_lcp_status certify_once(int n, const double *M, const double *q,
                                  const cp_certify_options *opt, double *z, double *w,
                                  double *z2, double *w2, cp_certify_result *res,
                                  cp_lcp_info *info,
                                  int *glpk_errors, cert_budget *bud, int first) {
  cp_certify_options def = cp_certify_defaults();
  cp_certify_result res_local;
  if (!opt) opt = &def;
  if (!res) res = &res_local;
  memset(res, 0, sizeof *res);
  cp_lcp_info_clear(info);
  info->solver = CP_SOLVER_CERTIFY;
  info->starts = 1;

  if (n < 1 || !M || !q || !z || !w) {
    snprintf(info->reason, sizeof info->reason,
             "certify: invalid arguments (n = %d)", n);
    return info->status = CP_LCP_NUMERICAL;
  }
  if (opt->second && (!z2 || !w2)) {
    snprintf(info->reason, sizeof info->reason,
             "certify: a second-solution search needs z2 and w2");
    return info->status = CP_LCP_NUMERICAL;
  }
  for (size_t k = 0; k < (size_t)n * (size_t)n; k++)
    if (!isfinite(M[k])) {
      snprintf(info->reason, sizeof info->reason,
               "certify: M has a non-finite entry at (%d, %d)",
               (int)(k % (size_t)n), (int)(k / (size_t)n));
      return info->status = CP_LCP_NUMERICAL;
    }
  for (int i = 0; i < n; i++)
    if (!isfinite(q[i])) {
      snprintf(info->reason, sizeof info->reason,
               "certify: q has a non-finite entry at %d", i);
      return info->status = CP_LCP_NUMERICAL;
    }

  const int max_cuts = opt->second && opt->max_cuts > 0 ? opt->max_cuts : 0;
  const size_t nn = (size_t)n * (size_t)n, un = (size_t)n;
  /* Everything except GLPK's own memory, allocated once. */
  double *Ms = malloc(sizeof(double) * (2 * nn + 11 * un));
  int *ex = malloc(sizeof(int) * 3 * un);
  lapack_int *piv = malloc(sizeof(lapack_int) * un);
  /* [max_cuts + 1] patterns (cut or about to be), then 9 scratch rows */
  unsigned char *pat = malloc(((size_t)max_cuts + 10) * un);
  double *pat_alpha = malloc(sizeof(double) * ((size_t)max_cuts + 1));
  unsigned char *pat_ok = malloc((size_t)max_cuts + 1);
  if (!Ms || !ex || !piv || !pat || !pat_alpha || !pat_ok) {
    free(Ms); free(ex); free(piv); free(pat); free(pat_alpha); free(pat_ok);
    snprintf(info->reason, sizeof info->reason, "certify: out of memory");
    return info->status = CP_LCP_NOMEM;
  }
  double *qs = Ms + nn, *y = qs + un, *zr = y + un, *wr = zr + un;
  double *rmax = wr + un, *cmax = rmax + un, *zc = cmax + un, *wc = zc + un;
  double *Ab = wc + un, *rhs = Ab + nn, *sv = rhs + un, *zs = sv + un;
  int *er = ex, *ec = ex + un, *idx = ex + 2 * un;
  unsigned char *cuts = pat;
  unsigned char *xs = pat + ((size_t)max_cuts + 1) * un; /* MIP x */
  unsigned char *s1 = xs + un;       /* support of the first answer */
  unsigned char *s2 = s1 + un;       /* support of a later answer */
  unsigned char *basis = s2 + un;
  unsigned char *objy = basis + un;
  unsigned char *last = objy + un; /* 4 rows */
  int eq = 0;
  equilibrate(n, M, q, Ms, qs, er, ec, &eq, rmax, cmax);
  /* The spread of M after equilibration: GLPK's tolerances are absolute
   * (primal feasibility 1e-7 on rows whose entries are now about 1), so an
   * entry below 1e-7 of the largest cannot be seen by it, and a verdict of
   * infeasibility that may rest on such entries is no proof (mu = 1e20 in a
   * contact LCP gives 4e11; the paper's sixteen infeasible data sets at
   * most 4e4). q is not counted: its rounding-level entries are cleaned by
   * cp_certify's retry and do not mislead GLPK's pivoting. */
  double mbig = 0.0, msmall = INFINITY;
  for (size_t k = 0; k < nn; k++) {
    const double a = fabs(Ms[k]);
    if (a == 0.0) continue;
    mbig = fmax(mbig, a);
    msmall = fmin(msmall, a);
  }
  const double mspread = mbig > 0.0 ? mbig / msmall : 1.0;

  double qmax = 1.0;
  for (int i = 0; i < n; i++) qmax = fmax(qmax, fabs(q[i]));
  const cp_check_options chk = opt->check;
  cert_ctx ctx = {.n = n, .M = M, .q = q, .er = er, .ec = ec, .eq = eq, .chk = &chk,
                  .supp_tol = chk.rel_tol * qmax, .basis = basis, .zr = zr,
                  .wr = wr, .Ms = Ms, .qs = qs, .A = Ab, .rhs = rhs, .sv = sv,
                  .zs = zs, .idx = idx, .piv = piv};
  cert_state st = {.res = res, .nodes = 0, .glpk_errors_out = glpk_errors, .bud = bud};
  const double atol = opt->alpha_tol;

  /* The main solves: our root LP, no MIP presolver, so that the callback
   * sees the original columns and can stop at the first verified point. */
  mip_job job;
  memset(&job, 0, sizeof job);
  job.n = n;
  job.M = Ms;
  job.q = qs;
  job.deadline = bud->deadline;
  job.clock = opt->clock;
  job.clock_ctx = opt->clock_ctx;
  job.may_refuse = !first;
  job.presolve = 0;
  job.br_tech = GLP_BR_DTH;
  job.bt_tech = GLP_BT_BLB;
  job.early = &ctx;
  job.early_alpha = atol;
  job.repair_steps = 20;
  job.ez = z;
  job.ew = w;
  job.last = last;
  job.y = y;
  job.x = xs;

  cp_lcp_status status;
  cp_lcp_info why;
  cp_lcp_info_clear(&why);
  mip_outcome o = solve_counted(&job, &st);
  job.may_refuse = 1; /* every later solve of the call */
  res->alpha = fmax(job.alpha, 0.0);
  if (o == MIP_EARLY) {
    status = CP_LCP_SOLVED;
  } else if (o == MIP_OPTIMAL && job.alpha <= atol) {
    /* GLPK says alpha* = 0: no EXACT solution of the floating-point data.
     * That is not yet a proof worth reporting: the data may be badly
     * scaled (mu = 1e12 puts 1e12 and 1 in one row, so forming M already
     * rounded away what the small entries said). So the verdict is asked
     * again of a LARGER problem, along another path (other branching and
     * backtracking rules): (C1) with every row relaxed by rounding,
     * |w - (M y + q alpha)|_i <= r (|M_i||y| + |q_i| alpha), r = 64 n eps:
     * a solution of data within rounding of the given data. Only alpha* = 0
     * there too means "no solution"; a point it finds instead is verified
     * like any other (a solution), or the answer is undecided. (r is not
     * the check's 1e-6: with that, y/alpha can grow until the tolerance,
     * which grows with |z|, swallows any row -- z = (t, t) "solves"
     * M = [1 -1; -1 1], q = (-1, -1) for t >= 5e5 -- and no infeasible LCP
     * would ever be proven so.) */
    mip_job j2 = job;
    j2.relax = 64.0 * (double)n * 2.220446049250313e-16;
    j2.presolve = 1; /* GLPK's MIP presolver: another path, and fast */
    j2.early = NULL;
    j2.br_tech = GLP_BR_MFV;
    j2.bt_tech = GLP_BT_DFS;
    j2.have_last = 0;
    mip_outcome o2 = solve_counted(&j2, &st);
    if (o2 == MIP_EARLY) {
      job.alpha = j2.alpha;
      status = CP_LCP_SOLVED;
    } else if ((o2 == MIP_OPTIMAL || o2 == MIP_INCUMBENT) && j2.alpha > atol) {
      if (make_candidate(&ctx, y, j2.alpha, xs, 0, z, w, &why)) {
        job.alpha = j2.alpha;
        status = CP_LCP_SOLVED;
      } else {
        snprintf(info->reason, sizeof info->reason,
                 "certify: undecided: no exact solution (alpha* = %.3g), but one "
                 "within rounding may exist (relaxed alpha = %.3g; its point "
                 "fails the check)", job.alpha, j2.alpha);
        status = CP_LCP_NUMERICAL;
      }
    } else if (o2 == MIP_OPTIMAL && mspread > CP_CERTIFY_MAX_SPREAD) {
      status = CP_LCP_NUMERICAL;
      snprintf(info->reason, sizeof info->reason,
               "certify: undecided: GLPK finds no solution, but the equilibrated M "
               "spans %.2g (above %.0e): its tolerances cannot prove that",
               mspread, CP_CERTIFY_MAX_SPREAD);
    } else if (o2 == MIP_OPTIMAL && st.glpk_errors == 0) {
      status = CP_LCP_INFEASIBLE;
      snprintf(info->reason, sizeof info->reason,
               "no solution exists: alpha* = %.3g <= alpha_tol %.3g, and "
               "%.3g with every row relaxed by rounding",
               fmax(job.alpha, 0.0), atol, fmax(j2.alpha, 0.0));
    } else {
      /* A verdict that was not confirmed is no proof. */
      status = o2 == MIP_TIME || j2.ret == GLP_ETMLIM ? CP_LCP_TIME_LIMIT : CP_LCP_NUMERICAL;
      snprintf(info->reason, sizeof info->reason,
               "certify: undecided: alpha* = %.3g but the confirming solve "
               "(rows relaxed by rounding) ended with %s",
               fmax(job.alpha, 0.0), o2 == MIP_GLPK_ERROR ? "a GLPK internal error"
                                    : j2.ret == GLP_ETMLIM ? (bud->node_hit ? "the node limit" : "the time limit")
                                                           : mip_outcome_text(o2));
    }
  } else if ((o == MIP_OPTIMAL || o == MIP_INCUMBENT) && job.alpha > atol) {
    /* Every incumbent failed the check in the callback (or this is the
     * incumbent left by a time limit or a failure): the last word is the
     * final point, which is the best conditioned one GLPK found. */
    if (make_candidate(&ctx, y, job.alpha, xs, 0, z, w, &why)) {
      status = CP_LCP_SOLVED;
    } else if (o == MIP_INCUMBENT && job.ret == GLP_ETMLIM) {
      status = CP_LCP_TIME_LIMIT;
      snprintf(info->reason, sizeof info->reason,
               "certify: %s limit; the incumbent (alpha = %.3g) failed the "
               "check: %.60s", bud->node_hit ? "node" : "time", job.alpha, why.reason);
    } else {
      status = CP_LCP_CHECK_FAILED;
      snprintf(info->reason, sizeof info->reason,
               "certify: alpha* = %.3g but z = y/alpha failed the check: %.80s",
               job.alpha, why.reason);
    }
  } else if (o == MIP_TIME || (o == MIP_INCUMBENT && job.ret == GLP_ETMLIM)) {
    status = CP_LCP_TIME_LIMIT;
    if (bud->node_hit)
      snprintf(info->reason, sizeof info->reason,
               "certify: node limit (%ld branch-and-bound nodes) reached undecided "
               "(best alpha %.3g)", opt->node_limit, fmax(job.alpha, 0.0));
    else
      snprintf(info->reason, sizeof info->reason,
               "certify: time limit (%.3g s) reached undecided (best alpha %.3g)",
               opt->time_limit_s, fmax(job.alpha, 0.0));
  } else if (o == MIP_NOMEM) {
    status = CP_LCP_NOMEM;
    snprintf(info->reason, sizeof info->reason, "certify: out of memory");
  } else {
    status = CP_LCP_NUMERICAL;
    set_reason_mip(info, "certify", &job, o);
  }

  if (status == CP_LCP_SOLVED && opt->second) {
    /* Second solution by no-good cuts on x.
     *
     * What alpha* = 0 under the cuts proves: every x pattern that admits a
     * solution is among the cut ones, and each cut pattern gave a solution
     * with the first support S1. That alone does not mean every solution
     * has support S1: a cut pattern X may hold a continuum of solutions
     * (degenerate: x_i = 1 with z_i = w_i = 0) with other supports. But a
     * solution z' with support S' != S1 has its minimal pattern S' cut, and
     * that pattern gave support S1, so S1 is a proper subset of S', and z'
     * lies in the pattern polyhedron of a cut pattern X with X \ S1
     * nonempty. For each such X we maximise sum_{i in X \ S1} y_i over (C1)
     * with x fixed to X and alpha >= alpha_X / 2 (the midpoint of the found
     * point and z' scaled into the box is feasible there with a positive
     * objective), an LP; a zero optimum for all of them completes the
     * proof. */
    support_of(n, z, ctx.supp_tol, s1);
    int ncut = 0, unverified = 0, exhausted = 0, found = 0;
    memcpy(cuts, xs, un);
    pat_alpha[0] = alpha_of(&ctx, z, w);
    pat_ok[0] = 1;
    int npat = 1; /* patterns stored in cuts[0..npat) */
    job.ez = zc;
    job.ew = wc;
    job.avoid = s1;
    while (ncut < max_cuts) {
      ncut++; /* patterns 0..ncut-1 are now cut */
      job.ncuts = ncut;
      job.cuts = cuts;
      mip_outcome oc = solve_counted(&job, &st);
      if (oc == MIP_NOFEAS || (oc == MIP_OPTIMAL && job.alpha <= atol)) {
        exhausted = 1;
        break;
      }
      int ok;
      if (oc == MIP_EARLY && job.early_found == 2) {
        /* The node heuristic found a verified point of another support. */
        memcpy(z2, zc, sizeof(double) * un);
        memcpy(w2, wc, sizeof(double) * un);
        found = 1;
        break;
      }
      if (oc == MIP_EARLY)
        ok = 1;
      else if ((oc == MIP_OPTIMAL || oc == MIP_INCUMBENT) && job.alpha > atol)
        ok = make_candidate(&ctx, y, job.alpha, xs, 0, zc, wc, &why);
      else
        break; /* time limit, failure: undecided */
      if (ok) {
        support_of(n, zc, ctx.supp_tol, s2);
        if (!same_pattern(n, s1, s2)) {
          memcpy(z2, zc, sizeof(double) * un);
          memcpy(w2, wc, sizeof(double) * un);
          found = 1;
          break;
        }
      } else {
        unverified++; /* its pattern is cut unexplored: no proof later */
      }
      /* At most max_cuts iterations store one pattern each: the
       * max_cuts + 1 slots suffice. */
      memcpy(cuts + (size_t)npat * un, xs, un);
      pat_alpha[npat] = ok ? alpha_of(&ctx, zc, wc) : job.alpha;
      pat_ok[npat] = (unsigned char)ok;
      npat++;
    }
    int decided = found;
    if (exhausted && !unverified) {
      /* The degenerate patterns: see the comment above. */
      int undecided = 0;
      for (int p = 0; p < ncut && !found; p++) {
        const unsigned char *X = cuts + (size_t)p * un;
        int extra = 0;
        for (int i = 0; i < n; i++) {
          objy[i] = X[i] && !s1[i];
          extra += objy[i];
        }
        if (!extra) continue;
        mip_job lp = job;
        lp.ncuts = 0;
        lp.cuts = NULL;
        lp.fix = X;
        lp.objy = objy;
        lp.alpha_lb = 0.5 * pat_alpha[p];
        lp.presolve = 1;
        lp.early = NULL;
        lp.avoid = NULL;
        mip_outcome ol = solve_counted(&lp, &st);
        if (ol != MIP_OPTIMAL) { undecided = 1; continue; }
        if (lp.obj <= 1e-9) continue;
        if (make_candidate(&ctx, y, lp.alpha, X, 0, zc, wc, &why)) {
          support_of(n, zc, ctx.supp_tol, s2);
          if (!same_pattern(n, s1, s2)) {
            memcpy(z2, zc, sizeof(double) * un);
            memcpy(w2, wc, sizeof(double) * un);
            found = 1;
          }
        } else {
          undecided = 1;
        }
      }
      decided = found || !undecided;
    }
    res->has_second = found;
    res->second_decided = decided;
  }

  /* Fill the check fields of info from the reported pair. */
  if (status == CP_LCP_SOLVED) {
    res->alpha = alpha_of(&ctx, z, w);
    if (!cp_lcp_check(n, M, q, z, w, &chk, info)) status = CP_LCP_CHECK_FAILED;
    else info->reason[0] = '\0';
  } else if (status == CP_LCP_CHECK_FAILED) {
    cp_lcp_info tmp = *info;
    cp_lcp_check(n, M, q, z, w, &chk, info);
    memcpy(info->reason, tmp.reason, sizeof info->reason);
  }
  info->iterations = st.nodes > INT_MAX ? INT_MAX : (int)st.nodes;
  info->status = status;
  free(Ms); free(ex); free(piv); free(pat); free(pat_alpha); free(pat_ok);
  return status;
}
