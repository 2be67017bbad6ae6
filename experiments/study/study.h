/// \file experiments/study/study.h
/// The computational study of Trinkle, Pang, Sudarsky and Lo (1995), §6,
/// reproduced -- and the question it left open answered: which of the data
/// sets its solvers failed on have a solution at all.
///
/// Generator (experiments/study/gen.c). Problem k (0-based, CP_PAPER_PROBLEMS
/// of them) is a random, physically consistent scene built from the seed:
/// free boxes resting on the ground (a fixed plane) face-, edge- or vertex-
/// down, on fixed pedestals, stacked on each other (on their most upward
/// face, tilted or not), standing side by side, held by fixed walls, and
/// touched by the tips of 2- or 3-link revolute fingers (manipulators whose
/// fixed base is placed so that the tip lands on the chosen face point).
/// Every contact point lies on both surfaces, its normal is a face normal
/// (from b into a), its tangent is random; no two objects overlap and no two
/// objects touch except where a contact is listed (checked with
/// models/collide.h). Velocities: a random generalised velocity u is
/// projected onto the null space of the normal rows of G^T (so every normal
/// relative speed is zero) and of the tangential rows of the contacts chosen
/// to roll (their tangential speed is zero on purpose, not by chance);
/// contacts are added to the rolling set one at a time until exactly the
/// target number rolls, and a contact whose projected tangential speed falls
/// below 1e-3 m/s is made to roll exactly. The target (size, and for the
/// problems that mirror the paper's Tables 2-4 also nb and nS) is met
/// exactly: attempts that miss it are discarded (deterministically).
///
/// The scene is JSON (docs/formats.md §2, explicit contact list, joint efforts
/// and velocities included) and is turned into the LCP only through the real
/// pipeline: cp_scene_parse (which checks that the normal speeds are zero),
/// cp_system_build, cp_contact_space_build, cp_pyramid_build -- the same
/// calls, in the same order, as contact/problem.c, so `complan solve` on a
/// written scene solves exactly the written LCP. Each problem gives
/// CP_PAPER_NMU data sets, mu = 0.1, 0.2, ..., 1.0 (the scene's friction
/// default; same geometry and velocities, so nb, nS, nR are the problem's).
///
/// Protocol per data set (experiments/study/run.c):
///   Lemke   the paper's: covering vector of ones, up to 3 restarts with
///           random covering vectors (seeded per data set), at most 100
///           pivots per start;
///   FIP     at most 300 iterations, stop at w^T z <= 1e-6;
///   auto    contact/solve.h's auto strategy with its own defaults (Lemke's
///           automatic pivot cap, FIP, then the MIP) and the study's time
///           limit for the MIP;
///   certificate  a verified solution from Lemke, FIP or auto; else the MIP
///           of contact/certify.h with a time limit (always with mip_all):
///           a verified solution (from it, or from a
///           persistent Lemke -- 200 random restarts with the automatic
///           pivot cap -- run on the data sets all of them failed on) =
///           "solvable", alpha* = 0 = "none", else "undecided";
///   unique  whether the accelerations u' of the solution are the same for
///           every solution (contact/problem.c's decision rule: symmetric
///           PSD M; a second solution of another support with other u';
///           every solution on one nonsingular support), within a time limit;
///           first every verified solution at hand and 8 Lemke runs with
///           random covering vectors are compared (different u' = not unique).
///
/// Results are values of cp_paper_row (plain data: workers send them through
/// pipes); reports are formatted by experiments/study/report.c; the driver
/// cp_paper_study_run writes everything under an output directory.
#ifndef CP_EXPERIMENTS_STUDY_H
#define CP_EXPERIMENTS_STUDY_H

#include <signal.h>
#include <stdint.h>

#include "contact/dynamics.h"
#include "contact/lcp.h"
#include "contact/pyramid.h"
#include "models/error.h"
#include "models/scene.h"
#include "models/system.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Number of problems of the study (the paper: 35 problems, 328 data sets).
#define CP_PAPER_PROBLEMS 33
/// Friction coefficients per problem: mu = 0.1 k, k = 1..CP_PAPER_NMU.
#define CP_PAPER_NMU 10

/// What a problem must be. size is met exactly; nb > 0 and ns >= 0 are met
/// exactly when given (nb 0 / ns -1: free).
typedef struct cp_paper_spec {
  int size;
  int nb;
  int ns;
  const char *note;  ///< e.g. "paper Table 2" (static, may be NULL)
} cp_paper_spec;

/// The spec of problem k (0 <= k < CP_PAPER_PROBLEMS).
cp_paper_spec cp_paper_problem_spec(int k);

/// The default seed (the paper's year).
#define CP_PAPER_DEFAULT_SEED 1995u

/// A generated problem. Owns scene_json (cp_paper_problem_free).
typedef struct cp_paper_problem {
  int index;          ///< k
  cp_paper_spec spec;
  uint64_t seed;      ///< the study seed it was generated from
  int size, nb, ns, nr, nc;  ///< LCP size, free boxes, sliding, rolling, contacts
  int n_fixed;        ///< fixed bodies (ground, pedestals, walls)
  int n_fingers;      ///< manipulators
  int n_joints;       ///< joints over all manipulators
  int n_u;            ///< generalised velocities 6 nb + n_joints
  int attempts;       ///< generation attempts used (deterministic)
  char *scene_json;   ///< the scene with friction default 0.5 (owned)
} cp_paper_problem;

/// Generates problem k of the study with the given seed. Deterministic: the
/// same (k, seed) gives the same scene text on every run. Returns 0, or -1
/// with *err (no attempt met the spec, or out of memory).
int cp_paper_generate(int k, uint64_t seed, cp_paper_problem *p, cp_error *err);

void cp_paper_problem_free(cp_paper_problem *p);

/// mu of data set j (0 <= j < CP_PAPER_NMU): 0.1 (j + 1), rounded to 0.1 j
/// exactly as the decimal literal.
double cp_paper_mu(int j);

/// The scene text of data set (p, mu): p's scene with "friction":
/// {"default": mu} and a name/comment naming the data set. malloc'd; NULL
/// when out of memory.
char *cp_paper_scene_text(const cp_paper_problem *p, double mu);

/// One data set, built through the real pipeline from scene text. The
/// contact space borrows from sys and driven/udot_driven: do not copy the
/// struct after building it, free it with cp_paper_instance_free.
typedef struct cp_paper_instance {
  cp_scene scene;
  cp_system sys;
  cp_contact_space cs;
  unsigned char *driven;      ///< [n_u] acceleration-driven dofs
  double *udot_driven;        ///< [n_u]
  cp_pyramid_contact *pc;     ///< [nc]
  int *order, *rank;          ///< [nc] layout arrays
  cp_pyramid_layout lay;
  cp_lcp lcp;                 ///< the pyramid LCP (M column-major, q)
  int nb, ns, nr;
} cp_paper_instance;

/// Parses the scene text (cp_scene_parse with default options: normal
/// speeds are checked), builds the system, A and b, and the pyramid LCP
/// exactly as contact/problem.c does. Returns 0, or -1 with *err (and *in
/// zeroed).
int cp_paper_instance_build(const char *scene_text, cp_paper_instance *in,
                            cp_error *err);

void cp_paper_instance_free(cp_paper_instance *in);

/// u' [n_u] of the instance's LCP solution z (contact/problem.c's
/// accelerations from the pyramid forces). Returns 0, or -1 (memory).
int cp_paper_udot(const cp_paper_instance *in, const double *z, double *udot);

/// The study's rule for "other accelerations": 1 when u' vectors a and b
/// [nu] differ anywhere by more than 1e-6 of the largest |entry| (at least
/// 1), else 0.
int cp_paper_udot_differs(int nu, const double *a, const double *b);

/// Solver outcome in the CSV's words.
typedef enum cp_paper_status {
  CP_PAPER_SOLVED = 0,
  CP_PAPER_FAILED,
  CP_PAPER_NO_SOLUTION
} cp_paper_status;

/// Certificate.
typedef enum cp_paper_cert {
  CP_PAPER_CERT_SOLVABLE = 0,
  CP_PAPER_CERT_NONE,
  CP_PAPER_CERT_UNDECIDED
} cp_paper_cert;

/// Uniqueness of the accelerations.
typedef enum cp_paper_unique {
  CP_PAPER_UNIQUE = 0,
  CP_PAPER_NOT_UNIQUE,
  CP_PAPER_UNIQUE_UNDECIDED,
  CP_PAPER_UNIQUE_NA          ///< no solution known (none, or undecided)
} cp_paper_unique;

/// Why uniqueness stayed undecided.
typedef enum cp_paper_unique_why {
  CP_PAPER_UW_DECIDED = 0,    ///< decided (or not applicable)
  CP_PAPER_UW_LIMIT,          ///< a node, time or cut limit stopped the search
  CP_PAPER_UW_SAME_ACCEL,     ///< a solution of another support, same u'
  CP_PAPER_UW_SINGULAR,       ///< one support, but its basis is singular
  CP_PAPER_UW_MIP_FAILED      ///< the MIP did not return a verified point
} cp_paper_unique_why;

/// Where the certificate's "solvable" comes from.
typedef enum cp_paper_cert_source {
  CP_PAPER_SRC_NONE = 0,
  CP_PAPER_SRC_MIP,           ///< the MIP's own verified solution
  CP_PAPER_SRC_LEMKE,         ///< the paper's Lemke
  CP_PAPER_SRC_FIP,           ///< the paper's FIP
  CP_PAPER_SRC_AUTO,          ///< the auto strategy
  CP_PAPER_SRC_PERSIST        ///< the persistent Lemke (see cp_paper_options)
} cp_paper_cert_source;

/// "", "mip", "lemke", "fip", "auto", "persistent-lemke".
const char *cp_paper_source_word(cp_paper_cert_source s);

struct cp_plan_mpi_items; /* planner/plan/mpi.h */

/// Study options; initialise with cp_paper_defaults().
typedef struct cp_paper_options {
  uint64_t seed;           ///< default CP_PAPER_DEFAULT_SEED
  int problems;            ///< first N problems (default CP_PAPER_PROBLEMS)
  int jobs;                ///< worker processes (default: online cores)
  double time_limit_s;     ///< certificate MIP's safety net per data set
                           ///< (300 s), also the auto strategy's MIP's
  double unique_time_limit_s; ///< safety net per certify call of the
                              ///< uniqueness search (60 s)
  long node_limit;         ///< certificate MIP limit per data set, in
                           ///< branch-and-bound nodes (10000), also the auto
                           ///< strategy's MIP's: the limit that decides, the
                           ///< same on any machine; 0: none
  long unique_node_limit;  ///< per certify call of the uniqueness search,
                           ///< in nodes (2000); 0: none
  int unique_max_cuts;     ///< no-good cuts of the uniqueness search (64)
  int unique_lemke_covers; ///< Lemke runs with random covering vectors that
                           ///< look for solutions with other u' (8)
  int persist_restarts;    ///< persistent Lemke, run on every data set that
                           ///< Lemke, FIP and auto all failed on: restarts
                           ///< with random covering vectors (200), each with
                           ///< Lemke's automatic pivot cap 50 (n + 1) + 100
  int lemke_max_pivots;    ///< 100 (paper)
  int lemke_restarts;      ///< 3 (paper)
  int fip_max_iter;        ///< 300 (paper)
  double fip_gap_tol;      ///< 1e-6 (paper)
  int write_data;          ///< 1: write every scene and LCP file (default)
  int mip_all;             ///< 1: run the certificate MIP on every data set,
                           ///< also those with a verified solution already
                           ///< (default 0: only where it is needed)
  /// Where the data sets run instead of `jobs` fork()ed workers (NULL, the
  /// default: here): given the study's data sets as items (rank 0's side
  /// of cp_paper_items), it runs them all and returns 0, or -1 with err.
  /// cp_plan_mpi_items_run spreads them over MPI ranks (planner/plan/mpi.h,
  /// `complan experiment paper --mpi`). The rows do not depend on it.
  int (*spread)(const struct cp_plan_mpi_items *items, cp_error *err);
  /// With spread: a signal handler's flag that stops it (the items'
  /// cancel; NULL: none). The study then fails and writes no report.
  volatile sig_atomic_t *cancel;
} cp_paper_options;

cp_paper_options cp_paper_defaults(void);

/// Everything measured on one data set. Plain data (no pointers).
typedef struct cp_paper_row {
  int problem;        ///< k + 1 (1-based, as in the tables)
  int mu_index;       ///< j
  double mu;
  int size, nb, ns, nr, nc, n_u, n_joints;
  /* Lemke, paper protocol */
  cp_paper_status lemke;
  int lemke_starts;          ///< starts made (1..4)
  int lemke_iters;           ///< pivots over all starts
  int lemke_first_iters;     ///< pivots of the first start
  int lemke_pivots[4];       ///< per start
  cp_lcp_status lemke_raw;   ///< final status of the last start
  /* FIP, paper protocol */
  cp_paper_status fip;
  int fip_iters;
  cp_lcp_status fip_raw;     ///< SOLVED, NO_STRICT_FEASIBLE ("NFP"), ITERATION_CAP ("MAX"), ...
  /* auto strategy */
  cp_paper_status autos;
  int auto_solver;           ///< cp_lcp_solver that answered (or ran last)
  int auto_iters;
  cp_lcp_status auto_raw;
  int auto_ran[3];           ///< lemke, fip, certify ran
  /* MIP certificate */
  cp_lcp_status mip_raw;     ///< SOLVED, INFEASIBLE, TIME_LIMIT, ...
  int mip_ran;               ///< 1 if the MIP was run: when no solver had a
                             ///< verified solution (or with mip_all)
  cp_lcp_status mip_first_raw; ///< status before the denoised retry
  int mip_nodes;
  int mip_hit_limit;         ///< 1: stopped by its node or time limit
  int mip_from_auto;         ///< 1: the auto strategy's own MIP run was reused
  int mip_denoised;          ///< 1: the verdict is from the retry with q's
                             ///< rounding noise zeroed (see run.c)
  int persist_ran;           ///< 1: the persistent Lemke ran
  cp_lcp_status persist_raw; ///< its status
  int persist_iters;         ///< its pivots over all starts
  int persist_starts;        ///< its starts
  cp_paper_cert cert;
  cp_paper_cert_source cert_source; ///< what proves "solvable"
  int conflict;              ///< 1: MIP says none but a solver solved it
  /* uniqueness */
  cp_paper_unique unique;
  cp_paper_unique_why unique_why;
  int unique_hit_limit;      ///< 1: a limit stopped the search
  /* diagnostics (docs/math.md §5): Theorem 1's assumptions */
  int jacobian_rank;
  int full_rank;
  double friction_bound;     ///< Proposition 3's mu_bar (INFINITY: nothing slides)
  int within_bound;          ///< every sliding mu < mu_bar
  /* timings (s, wall clock of this process) */
  double t_lemke, t_fip, t_auto, t_mip, t_persist, t_unique, t_total;
  char lemke_reason[64];
  char fip_reason[64];
  char mip_reason[96];
  char auto_reason[96];
} cp_paper_row;

/// Runs the protocol on data set (p, j). Returns 0, or -1 with *err when the
/// data set could not be built (a generator bug: it was built before).
int cp_paper_run_dataset(const cp_paper_problem *p, int j,
                         const cp_paper_options *opt, cp_paper_row *row,
                         cp_error *err);

/// Short words for the tables and the CSV (experiments/study/report.c).
const char *cp_paper_status_word(cp_paper_status s);   ///< solved|failed|no_solution
const char *cp_paper_cert_word(cp_paper_cert c);       ///< solvable|none|undecided
const char *cp_paper_unique_word(cp_paper_unique u);   ///< unique|not unique|undecided|n/a
/// The paper's FIP-iter marker: iterations, "MAX", "NFP" or "NUM" (written
/// into buf).
const char *cp_paper_fip_cell(const cp_paper_row *r, char *buf, int size);

/// A whole study: problems and rows (problem-major, mu-minor). Owned.
typedef struct cp_paper_study {
  cp_paper_options opt;
  int n_problems;
  cp_paper_problem *problems;
  int n_rows;
  cp_paper_row *rows;
  double gen_s;       ///< generation (and file writing) wall time
  double run_s;       ///< solving wall time
  double load1;       ///< 1-minute load average at the start (-1 unknown)
  char command[512];  ///< the command line that made it (for the reports)
} cp_paper_study;

/// Progress callback: done of total data sets finished.
typedef void (*cp_paper_progress_fn)(void *ctx, int done, int total);

/// Runs the study: generates the problems, writes their scenes and LCPs
/// under out_dir/data (if opt->write_data), runs every data set on
/// opt->jobs fork()ed workers (results gathered through pipes, stored by
/// index: the output order does not depend on jobs), then writes the
/// reports (cp_paper_write_reports). progress may be NULL. Returns 0, or -1
/// with *err: CP_ERR_IO or CP_ERR_INPUT (where = the path) when the output
/// directory or a file in it cannot be made, CP_ERR_NOMEM, or
/// CP_ERR_NUMERICAL when the study could not finish (a problem not
/// generated, a data set not built, a worker that could not be started or
/// died).
int cp_paper_study_run(const cp_paper_options *opt, const char *out_dir,
                       const char *command, cp_paper_progress_fn progress,
                       void *progress_ctx, cp_paper_study *st, cp_error *err);

void cp_paper_study_free(cp_paper_study *st);

/// The work side of the study's data sets as items (planner/plan/mpi.h),
/// for a process that serves them (cp_plan_mpi_items_serve): a request
/// carries the options, the problem and its scene text; the answer is the
/// data set's cp_paper_row (a data set that cannot be built answers a row
/// with problem -1 and the reason in mip_reason, which rank 0 reports).
void cp_paper_worker_items(struct cp_plan_mpi_items *items);

/* Reports (experiments/study/report.c): each returns a malloc'd string, or
 * NULL when out of memory. */

/// One row per data set; header starts with the required columns
/// problem,size,nb,nS,nR,mu,lemke_status,lemke_starts,lemke_iters,
/// fip_status,fip_iters,auto_status,certify,unique.
char *cp_paper_format_csv(const cp_paper_study *st);
/// Table 1 in the paper's columns (by size) plus the new columns, and the
/// paper's rows side by side; Markdown.
char *cp_paper_format_table1_md(const cp_paper_study *st);
/// Table 1 as CSV (one row per size).
char *cp_paper_format_table1_csv(const cp_paper_study *st);
/// Per-problem tables in the form of Tables 2-4, plus auto, certificate and
/// uniqueness; Markdown.
char *cp_paper_format_problems_md(const cp_paper_study *st);
/// The summary: headline numbers against the paper's.
char *cp_paper_format_summary_md(const cp_paper_study *st);
/// SVG: fraction solved against LCP size, per solver.
char *cp_paper_svg_fraction_size(const cp_paper_study *st);
/// SVG: average iterations of solved data sets against mu, per solver.
char *cp_paper_svg_iterations_mu(const cp_paper_study *st);
/// SVG: fraction solved against mu, per solver.
char *cp_paper_svg_fraction_mu(const cp_paper_study *st);
/// What `complan experiment paper` prints at the end: the counts of solved
/// data sets per solver and of certificates, the solving time and out_dir.
char *cp_paper_format_headline(const cp_paper_study *st, const char *out_dir);

/// Writes text (plus a final newline if missing) to dir/name, atomically
/// with the user's umask (planner/io/outfile.h). Returns 0 or -1 with *err
/// (where = the path, msg "cannot create|write: REASON").
int cp_paper_write_file(const char *dir, const char *name, const char *text,
                        cp_error *err);

/// Writes the reports (datasets.csv, table1.md, table1.csv, problems.md,
/// summary.md, fraction_solved_size.svg, iterations_mu.svg,
/// fraction_solved_mu.svg) into out_dir. Returns 0 or -1 with *err.
int cp_paper_write_reports(const cp_paper_study *st, const char *out_dir,
                           cp_error *err);

#ifdef __cplusplus
}
#endif
#endif
