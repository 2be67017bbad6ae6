/// \file contact/stability.h
/// Stability of an assembly at rest (docs/math.md §9, after Pang and
/// Trinkle 2000): at zero velocity, under the system's generalised forces f
/// (gravity, applied loads, joint efforts), does the contact problem of
/// docs/math.md §1-§4 admit solutions with u' = 0, and only those?
///
/// Notation (models/system.h): H u' = f + G c (E1); F the free dofs (objects
/// and effort-driven joints), D the acceleration-driven joints (u'_D given,
/// their efforts unknown). Soft fingers add a torsion column per contact as
/// in contact/problem.h (G~ = [G Gtor_soft]).
///
///   equilibrium  u'_F = 0, i.e.  G~_F c~ = H_FD u'_D - f_F          (S1)
///                with every contact force in its pyramid:
///                c_n >= 0, |c_t| <= mu c_n, |c_o| <= mu c_n,
///                |c_tau| <= mu_tau c_n (soft fingers).
///                When u'_D != 0 the contacts still accelerate, a0 = G~_D^T
///                u'_D + k~, and (S1) also needs the LCP's complementarity
///                at a0: a0_n > 0 forces c = 0, a0_n < 0 admits no
///                equilibrium, a nonzero tangential a0 puts c_t on the face
///                opposing it.
///   weakly stable    (S1) is feasible: an LP (GLPK), its answer checked.
///   strongly stable  (S1) is feasible and NO solution of the contact LCP
///                    has u'_F != 0.
///   unstable         (S1) is infeasible.
///
/// Deciding "no solution moves" (strong), cheapest first:
///  1. Energy test (only when u'_D = 0 and k = 0, i.e. at rest): along any
///     solution, u'^T H u' = f^T u' + a^T c and a^T c <= 0 (the pyramid's
///     friction opposes each tangential acceleration, c_n a_n = 0), so a
///     solution with u'_F != 0 needs a u' with a_n = G_n^T u' >= 0 and
///     f_F^T u' > 0. The LP  max f_F^T u'  s.t. G_n,F^T u' >= 0,
///     |u'_i| <= 1  having optimum <= energy_tol proves strong stability
///     without integers (towers, walls: gravity can do no work).
///  2. A solve of the contact problem (contact/problem.h, solver auto) that
///     returns u'_F != 0 is a moving solution: weak. (Also run when there
///     is no equilibrium, to report how the assembly moves.)
///  3. Exact MILPs, one per free dof k and sign s, asking for a solution of
///     the contact problem that moves that way. Homogenised like the
///     Pardalos-Rosen form of contact/certify.h (no a-priori force bound):
///     U = alpha u'_F, C = alpha c~, |U_i| <= 1, C_n <= 1, alpha in [0, 1],
///     A = G~_F^T U + alpha a0 (the contact accelerations, scaled), and
///
///       max alpha  s.t.  H_FF U = -alpha rhs + G~_F C          (E1, S1)
///                        pyramids |C_e| <= mu C_n  (e = t, o, tau)
///                        A_n >= 0,  A_n <= Amax_n (1 - beta),  C_n <= beta
///                        A_e <= Amax_e p_e,  -A_e <= Amax_e m_e,
///                        p_e + m_e <= 1,
///                        C_e + mu C_n <= 2 mu (1 - p_e)   (A_e > 0: C_e = -mu C_n)
///                        mu C_n - C_e <= 2 mu (1 - m_e)   (A_e < 0: C_e = mu C_n)
///                        s U_k >= delta alpha,
///                        f_F^T U >= 0   (at rest, undriven: the energy
///                                        identity of 1 as a cut),
///                        beta, p, m binary,
///
///     Amax = sum_i |G~_F(i, .)| |U_i|max + |a0| (exact bounds from the
///     boxes), delta = 10 acc_tol. Homogeneous in (U, C, alpha): alpha* > 0
///     iff some solution has s u'_k >= delta. A MILP answer counts only
///     after u'_F is recomputed from c = C / alpha by (E1) and the pyramid
///     law is checked contact by contact. "Moving" thus means some |u'_k|
///     >= delta; smaller accelerations are below the model's tolerance.
///  3'. At rest (CP_STABILITY_MILP_ENERGY, the default) the 2 nF MILPs are
///     preceded by ONE (phase 1): by the energy identity of 1, a moving
///     solution has f_F^T u' >= u'^T H u' > 0, so phase 1 replaces
///     s U_k >= delta alpha by  f_F^T U >= eps_E alpha  with eps_E =
///     energy_band * max_i f_i^2 (H^-1)_ii (a power well above GLPK's
///     tolerances: below ~1e-7 of it the program admits pseudo-solutions,
///     measured). Infeasible: every moving solution has f^T u' < eps_E, so
///     (Cauchy-Schwarz, u_k'^2 <= (H^-1)_kk u'^T H u') |u'_k| < R_k =
///     sqrt(eps_E (H^-1)_kk). Phase 2 then covers only that band: the
///     per-dof MILPs get |U_i| <= R_i alpha, f^T U <= eps_E alpha and
///     big-M constants scaled by R; a dof with R_k < delta needs none.
///     Same verdicts and the same meaning of "moving" as 3, in fewer
///     branch-and-bound nodes (experiments/results/assembly_milp.md).
/// GLPK internal errors (its error hook; e.g. a failed assertion after a
/// basis "singular to working precision") are retried, not reported as
/// they come: an LP that fails gets a third solve by GLPK's exact
/// (rational) simplex, and a verdict still needs two solves that answered;
/// a MILP that fails (internal error, or glp_intopt giving up without a
/// candidate) is solved again from scratch with other settings (other
/// branching and backtracking rules: most fractional variable with
/// depth-first search, then breadth-first search), each retry out of the
/// same node budget and time. Only when all three settings fail does the reason say
/// that GLPK did not solve the MILP.
/// A limit (nodes or time), a GLPK failure or an answer that fails its check leaves
/// strong/weak UNDECIDED (CP_STABILITY_UNDECIDED): reported, never guessed.
/// As for certify, "proven" means GLPK's floating-point branch and bound.
///
/// Nothing here prints: GLPK's terminal output goes to contact/glpkout.h's
/// sink (none by default; the command line's --verbose sets stderr), with
/// GLPK's messages switched on only while a sink is set, and its error hook
/// longjmps back (a GLPK failure becomes a status).
/// This module sees matrices only (a cp_system), no scenes or files.
#ifndef CP_CONTACT_STABILITY_H
#define CP_CONTACT_STABILITY_H

#include "models/system.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cp_stability_kind {
  CP_STABILITY_STRONG = 0,  ///< equilibrium exists and no solution moves
  CP_STABILITY_WEAK,        ///< equilibrium exists and some solution moves
  CP_STABILITY_UNDECIDED,   ///< equilibrium exists; a limit left strong/weak open
  CP_STABILITY_UNSTABLE,    ///< no equilibrium
  CP_STABILITY_FAILED       ///< the LP could not be solved (numerics, memory)
} cp_stability_kind;

/// "strong", "weak", "stable_undecided", "unstable", "failed".
const char *cp_stability_kind_name(cp_stability_kind k);

/// What the verdict k certifies and what it leaves open, one sentence for
/// users (static string), e.g. for stable_undecided: an equilibrium exists
/// (weakly stable at least), whether a solution moves is open.
const char *cp_stability_kind_meaning(cp_stability_kind k);

/// How much to decide.
typedef enum cp_stability_depth {
  CP_STABILITY_FULL = 0,    ///< strong / weak / unstable
  CP_STABILITY_EQUILIBRIUM  ///< only whether an equilibrium exists: kind is
                            ///< STRONG-or-WEAK reported as UNDECIDED, or
                            ///< UNSTABLE (the LP alone; sequence planning)
} cp_stability_depth;

/// How the exact "does any solution move?" question is put to GLPK.
typedef enum cp_stability_milp {
  CP_STABILITY_MILP_ENERGY = 0, ///< at rest: ONE MILP asking for a solution
                                ///< on which the loads do work (f^T u' >=
                                ///< lambda_min(H) delta^2); otherwise as below
  CP_STABILITY_MILP_PER_COORD   ///< one MILP per free dof and sign (s u'_k >=
                                ///< delta), the formulation of session 2
} cp_stability_milp;

typedef struct cp_stability_options {
  cp_stability_depth depth; ///< default FULL
  double rel_tol;           ///< residual/acceleration tolerances, relative
                            ///< to max(1, |f|_inf) resp. max(1, |H^-1 f|_inf);
                            ///< default 1e-6
  double energy_tol;        ///< energy test threshold, relative to
                            ///< max(1, sum |f_F|); default 1e-9
  double mip_tol;           ///< t* <= mip_tol counts as 0; default 1e-9
  double time_limit_s;      ///< all MILPs together (wall clock); default 60 s; <= 0 none.
                            ///< Depends on the machine's speed and load: a
                            ///< safety cap; node_limit is the limit that
                            ///< gives the same verdict everywhere
  int try_solve;            ///< 1 (default): step 1 (a contact solve) first
  cp_stability_milp milp;   ///< default CP_STABILITY_MILP_ENERGY
  double energy_band;       ///< phase-1 power threshold eps_E relative to
                            ///< max_i f_i^2 (H^-1)_ii; default 1e-6
  const double *mu_torsion; ///< [n_c] soft-finger mu_tau (< 0: ordinary);
                            ///< NULL: none. Borrowed.
  /// Called after each MILP with (done, total) (may be NULL): the MILPs
  /// can take minutes, and a terminal should show that they progress.
  void (*progress)(void *ctx, int done, int total);
  void *progress_ctx;
  /// Branch-and-bound nodes of all MILPs together (GLPK's count of the
  /// nodes it created, read in its callback); reached: UNDECIDED. A work
  /// limit: the same verdict on any machine. Default 0: none.
  long node_limit;
} cp_stability_options;

cp_stability_options cp_stability_defaults(void);

/// What was found. Arrays owned (cp_stability_result_free).
typedef struct cp_stability_result {
  cp_stability_kind kind;
  const char *method;       ///< what decided it: "lp", "solve", "energy",
                            ///< "milp" (static string)
  char reason[200];         ///< why undecided / failed ("" otherwise)
  int nu, nc;
  int has_equilibrium;      ///< 1: force/torsion hold an equilibrium (S1)
  double *force;            ///< [3nc] equilibrium (n, t, o) per contact, on a
  double *torsion;          ///< [nc] equilibrium moment about n (soft), else 0
  double residual;          ///< |G~_F c~ - rhs|_inf of the equilibrium
  int has_motion;           ///< 1: a solution with u'_F != 0 is below
  double *udot;             ///< [nu] its generalised acceleration
  double *motion_force;     ///< [3nc] its contact forces
  int lp_solves, mip_solves;
  double acc_tol;           ///< the acceleration threshold used (|u'_i|)
  long mip_nodes;           ///< branch-and-bound nodes of all its MILPs
  int glpk_failures;        ///< solves GLPK failed: LPs/MILPs ended by an
                            ///< internal error, MILPs it gave up on without
                            ///< a candidate (each retried, see above)
} cp_stability_result;

/// Decides the stability of sys at rest. sys should be built at zero
/// velocity (every contact rolling; its k is used as given). Returns
/// res->kind. On FAILED, reason says why.
cp_stability_kind cp_stability_decide(const cp_system *sys,
                                      const cp_stability_options *opt,
                                      cp_stability_result *res);

void cp_stability_result_free(cp_stability_result *res);

#ifdef __cplusplus
}
#endif
#endif
