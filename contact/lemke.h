/// \file contact/lemke.h
/// Lemke's complementary pivoting method (paper §5; Cottle, Pang, Stone 1992,
/// §4.4) for the LCP (L1) of contact/lcp.h.
///
/// Augmented problem with artificial variable z0 and covering vector d > 0:
///
///     w = M z + q + d z0,   w, z, z0 >= 0,   z^T w = 0.                 (K1)
///
/// Start: all w basic; if q >= 0 the answer is z = 0. Otherwise z0 enters and
/// the row of min_i q_i / d_i leaves; then the complement of the leaving
/// variable enters, until z0 leaves (a solution) or the entering column has
/// no positive entry (a secondary ray). Ties in the ratio test are broken
/// lexicographically (rows of [q̄, B^-1] divided by the pivot column), so
/// degenerate problems cannot cycle.
///
/// Ties in floating point. Values that are equal or zero in exact arithmetic
/// come out of the updates with roundoff, so every comparison carries an
/// error bound: a basic value is known to 1e-10 max(|q|, |q̄|), an entry of
/// B^-1 to 1e-11 of its column's largest entry; rows tie while their
/// intervals overlap. Among tied rows z0 leaves first; rows whose pivot is
/// below 1e-9 of the column's scale are passed over when a sound one is tied;
/// before acting on such a tiny pivot or on a secondary ray, B^-1 is rebuilt
/// from the basis and the test redone. Measured against an exact (rational)
/// lexicographic Lemke: the first start follows the exact path wherever the
/// data make ties exact (docs/solvers.md).
///
/// Small problems: cold starts with n <= small_n (default: the measured
/// crossover, 4) run the same decisions on a dense tableau held in the
/// workspace. (The structured form is as fast from n = 5 up.)
///
/// Restart protocol (paper §6): after a secondary ray or the pivot cap (or a
/// numerical failure, or an answer that fails the check), up to `restarts`
/// further starts with covering vectors drawn uniformly from [0.1, 1.1)^n by a
/// generator seeded with `seed` (deterministic). After a failed warm start,
/// the first further start is the cold start with `cover`. If all of these
/// fail and `rescue` is set, a rescue pass runs cold starts (cover, then the
/// same random covers and further ones) with tighter tie rules
/// (docs/solvers.md): max(restarts + 1, 12) starts, each capped at
/// 5 (n + 1) + 100 pivots unless max_pivots is set.
///
/// Warm start: given a complementary basis (basis[i] != 0: z_i basic), the
/// method factors the basis, sets d := B e so that d̄ = B^-1 d = e, and runs
/// (K1) from that basis; if the basis is already feasible its solution is
/// returned after 0 pivots. A basis whose matrix is singular falls back to a
/// cold start. After every solve the final basis is available through
/// cp_lemke_basis, so a sequence of solves with the same M and changing q can
/// chain warm starts.
///
/// Memory: a cp_lemke_ws holds every array the method needs for problems of
/// size up to its capacity; solves allocate nothing.
#ifndef CP_CONTACT_LEMKE_H
#define CP_CONTACT_LEMKE_H

#include <stdint.h>
#include "contact/lcp.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cp_lemke_options {
  const double *cover; ///< [n] covering vector for the first start; NULL = ones
  int max_pivots;      ///< pivot cap per start; 0 = automatic: 50 (n + 1) + 100
  int restarts;        ///< further starts after a failure (default 3)
  uint64_t seed;       ///< seed of the restart covering vectors (default 1)
  double pivot_tol;    ///< smallest |pivot| accepted (default 1e-12, relative)
  int lexicographic;   ///< 1: lexicographic ratio test (default); 0: plain
  int small_n;         ///< cold starts of problems of size <= small_n run
                       ///< on a dense tableau (same decisions, cheaper at
                       ///< small n); 0 = automatic (the measured crossover),
                       ///< -1 = never; at most 64
  cp_check_options check; ///< acceptance check
  int rescue;          ///< 1: when every start failed, the rescue pass
                       ///< repeats them with tighter tie rules (issue 24's
                       ///< contact problems; docs/solvers.md); default 0
                       ///< (the simulator's solves stay as they are),
                       ///< `complan lcp solve` turns it on
  int classic;         ///< 1: when every start failed (the rescue pass
                       ///< too when it is on), the classic pass repeats
                       ///< the ordinary starts under the tie rules before
                       ///< the error bounds (docs/solvers.md, "The classic
                       ///< pass"); 2: the classic pass alone (the other
                       ///< passes skipped: tests, diagnosis); default 0,
                       ///< `complan lcp solve` turns it on
} cp_lemke_options;

/// Defaults: cover NULL (ones), max_pivots 0 (automatic), restarts 3, seed 1,
/// pivot_tol 1e-12, lexicographic 1, small_n 0 (automatic), check =
/// cp_check_defaults(), rescue 0, classic 0.
cp_lemke_options cp_lemke_defaults(void);

typedef struct cp_lemke_ws cp_lemke_ws;

/// Workspace for problems of size <= capacity. NULL when out of memory.
cp_lemke_ws *cp_lemke_ws_create(int capacity);
/// A workspace for problems of size <= capacity in place of ws (NULL: as
/// cp_lemke_ws_create), which is released: its large square blocks grow
/// where they lie or move with their pages instead of being made anew (a
/// simulator's growing problems keep the memory they touched). NULL when
/// out of memory (ws released all the same).
cp_lemke_ws *cp_lemke_ws_regrow(cp_lemke_ws *ws, int capacity);
/// ws (NULL: none) grown as by cp_lemke_ws_regrow when its capacity is
/// below capacity (>= 1), with every page of its arrays then written once
/// (models/bigbuf.h's cp_bigbuf_touch): for a caller that sizes its memory
/// before a loop of solves, so that their page faults come here. Solves
/// give the same results with or without it. NULL when out of memory (ws
/// released) or capacity < 1 (ws unchanged).
cp_lemke_ws *cp_lemke_ws_reserve(cp_lemke_ws *ws, int capacity);
void cp_lemke_ws_destroy(cp_lemke_ws *ws);

/// Solves (L1). `warm` may be NULL (cold start) or a complementary basis
/// [n] (warm[i] != 0: z_i basic). Writes z[n], w[n] (on failure: the last
/// iterate, not a solution) and *info. Returns info->status.
cp_lcp_status cp_lemke_solve(cp_lemke_ws *ws, int n, const double *M,
                             const double *q, const cp_lemke_options *opt,
                             const unsigned char *warm, double *z, double *w,
                             cp_lcp_info *info);

/// Copies the complementary basis of the last successful solve into
/// basis[n] (1: z_i basic). Returns 0, or -1 if the last solve failed.
int cp_lemke_basis(const cp_lemke_ws *ws, unsigned char *basis);

/// Pivots of each start of the last solve: returns the number of starts and
/// copies up to `cap` counts into per_start.
int cp_lemke_pivots_per_start(const cp_lemke_ws *ws, int *per_start, int cap);

/// Counters of the last solve, for tests (coverage of rare branches) and
/// benchmarks. Reset at the start of every cp_lemke_solve.
typedef struct cp_lemke_stats {
  long lex_ties;       ///< ratio-test ties resolved by the lexicographic rule
  long z0_ties;        ///< ratio-test ties resolved by letting z0 leave
  long active_sum;     ///< sum over pivots of the dense column count k
  int refactors;       ///< re-factorisations of the basis (drift control)
  int warm_fallbacks;  ///< warm bases rejected as singular (cold start used)
  int lu_polish;       ///< 1: final z came from an LU solve of its basis
  int pivot_refactors; ///< re-factorisations before a tiny pivot or a ray
  int small_starts;    ///< starts run on the small path's dense tableau
  int z0_backups;      ///< z0 exits from a tie undone after a failed check
  int rescue_starts;   ///< 1: every start failed, the rescue pass ran
                       ///< (the tight tie rules, docs/solvers.md)
  int classic_starts;  ///< 1: the classic pass ran
} cp_lemke_stats;

/// One pivot, as seen by a trace observer. Variables are numbered w_i = i,
/// z_i = n + i, z0 = 2n.
typedef struct cp_lemke_step {
  int start;     ///< 0 for the first start
  int pivot;     ///< pivot number within the start, from 0
  int entering;  ///< variable entering the basis
  int leaving;   ///< variable leaving it
  int row;       ///< tableau row of the pivot
  int ties;      ///< rows tied in the ratio test (1: no tie)
} cp_lemke_step;

typedef void (*cp_lemke_trace_fn)(void *ctx, const cp_lemke_step *step);

/// Installs an observer called before every pivot of later solves (NULL
/// removes it). For tests and diagnosis: comparing the path with an exact
/// one. Costs one branch per pivot when absent.
void cp_lemke_set_trace(cp_lemke_ws *ws, cp_lemke_trace_fn fn, void *ctx);

/// A call-back for the owner of a long solve: fn(ctx) is called after
/// every `period`-th pivot of a solve (counted over all its starts from the
/// solve's beginning; a solve of P pivots calls it floor(P / period) times;
/// the dense paths of tiny cold solves, n <= small_n, do not count). It
/// lets a caller do other work of its own while one solve lasts (an MPI
/// rank answering its workers, docs/solvers.md "The poll hook"); it cannot
/// see or change the solve, which takes the same pivots and gives the same
/// bits with or without it. Later solves on ws call it, including those
/// after cp_lemke_ws_regrow / _reserve (the hook moves with the
/// workspace). fn NULL removes it (then it costs one test per pivot).
/// Returns 0, or -1 (nothing changed) for ws NULL or fn set with
/// period < 1.
typedef void (*cp_lemke_poll_fn)(void *ctx);
int cp_lemke_set_poll(cp_lemke_ws *ws, cp_lemke_poll_fn fn, void *ctx,
                      int period);

/// Copies the counters of the last solve into *st.
void cp_lemke_get_stats(const cp_lemke_ws *ws, cp_lemke_stats *st);

/// The regularised route (docs/solvers.md, "The regularised route"): for
/// LCPs where Lemke's method ends on a secondary ray or its answer fails the
/// check although a solution exists (rank-deficient contact problems:
/// resting bodies with redundant corners). For each eps of a decreasing
/// sequence, Lemke solves LCP(M + eps m I, q) with m = max_i M_ii (max |M_ij|
/// when no diagonal entry is positive); the support P = {i : z_i > w_i} of
/// that answer names a face of the ORIGINAL problem, and
/// cp_fip_face_crossover looks for a point of it (an LP vertex, then its
/// basis solved exactly) that passes the original problem's check. The
/// first verified point is the answer; nothing unverified is ever reported.
#define CP_LEMKE_REG_MAX_EPS 8

typedef struct cp_lemke_reg_options {
  int neps;                          ///< values of eps used (1..MAX_EPS)
  double eps[CP_LEMKE_REG_MAX_EPS];  ///< strictly decreasing, in (0, 1);
                                     ///< default 1e-3, 1e-4, 1e-5
  double face_time_limit;            ///< seconds per face LP; 0: none (the
                                     ///< LP's iteration cap only)
  int early_n;                       ///< cp_lcp_solve with `regularise`:
                                     ///< from this n on, the route runs
                                     ///< right after Lemke's first start
                                     ///< fails, before its other starts
                                     ///< and rescue pass (0: never early;
                                     ///< default 2000, docs/solvers.md)
} cp_lemke_reg_options;

cp_lemke_reg_options cp_lemke_reg_defaults(void);

/// What the route did (cp_lemke_regularised).
typedef struct cp_lemke_reg_report {
  int tried;            ///< eps values tried
  double eps;           ///< the eps whose support gave the answer (0: none)
  int reg_status[CP_LEMKE_REG_MAX_EPS]; ///< Lemke's status per eps tried
  int reg_pivots[CP_LEMKE_REG_MAX_EPS]; ///< its pivots
  int support[CP_LEMKE_REG_MAX_EPS];    ///< |P| (-1: Lemke did not solve)
  int face[CP_LEMKE_REG_MAX_EPS];       ///< cp_fip_face_crossover's return
} cp_lemke_reg_report;

/// Runs the route. `lo` (NULL: defaults) are the options of each regularised
/// Lemke solve (its rescue pass is not run there) and its `check` is the
/// check of the original problem; `ws` may be NULL (one is made). Each eps
/// after the first starts warm from the previous regularised basis (cold
/// when that start fails). rep->reg_pivots counts the last start only;
/// info->iterations counts every pivot. On
/// success (CP_LCP_SOLVED) (z, w) solve (L1) and passed the check;
/// info->solver = LEMKE, info->iterations = all regularised pivots,
/// info->polished = 1 only when the answer is a basis solution. Otherwise
/// CP_LCP_CHECK_FAILED ("no face of the regularised supports holds a
/// solution"), CP_LCP_NUMERICAL (invalid options) or CP_LCP_NOMEM, with
/// (z, w) zero. `rep` may be NULL.
cp_lcp_status cp_lemke_regularised(cp_lemke_ws *ws, int n, const double *M,
                                   const double *q, const cp_lemke_options *lo,
                                   const cp_lemke_reg_options *ro, double *z,
                                   double *w, cp_lcp_info *info,
                                   cp_lemke_reg_report *rep);

#ifdef __cplusplus
}
#endif
#endif
