/// \file planner/sim/stepcheck.h
/// An independent check of one simulation step (issue 20, item 1): the
/// laws a step must satisfy, tested on the step's outcome with the system
/// of models/system.h (H, f, G at the step's start), not with the solver's
/// contact space, its LCP or its own residual. planner/sim/world.c fills a
/// cp_stepcheck_step after every dynamic step and refuses a step that fails
/// (it is retried, or the run stops with the failure named): see
/// docs/simulate.md, "The per-step check".
///
/// Notation: nu generalised velocities (6 per free body, then the joints),
/// nc constraints (contacts and joint limits), each with three columns of
/// G (normal, t, o; a limit's tangential columns are zero). The step goes
/// from velocity u0 to u1 over h with total constraint impulses p (3 nc,
/// contact frame: impacts plus h times the forces).
///
/// What is checked, each to its stated tolerance (cp_stepcheck_options):
///   1. Newton-Euler: H (u1 - u0) = h f + G p on every dof that is not
///      driven by a given acceleration, to ne_rel times the row's own scale
///      |H||u1 - u0| + h|f| + |G||p| (plus ne_abs). A driven dof's residual
///      is its drive's force (used for the work in 5).
///   2. Normal law of every constraint, with the predicted gap
///      g = gap0 + h vn1 (+ h^2 k_n for the acceleration stepper, whose
///      rows see the velocity product k) and its compliant part
///      gc = g + comp h p_n (comp = kappa A_nn, the model's compliance):
///      p_n >= -p_tol; no sinking deeper than the step started,
///      gc >= min(gap0, 0) - g_tol; and complementarity: a pushing
///      constraint (p_n > p_tol) ends closed, gc <= g_tol (with restitution
///      e: gc <= g_tol + max(gap0, 0) + h e max(0, -vn0), Newton's law
///      of an impact, which for e > 0 may come before the contact touches).
///      g_tol = gap_abs + gap_rel |gap0| + vel_lcp h (|vn0| + |vn1| +
///      |G_n| |u1 - u0|) + h^2 |k_n| + comp h |p_n| (the row's velocities at
///      the LCP's own relative accuracy); p_tol = imp_rel P + imp_abs, P the
///      larger of the largest impulse and the largest |H du| + h |f| of a
///      row.
///   3. Friction (contacts): the four-sided pyramid |p_t|, |p_o| <= mu p_n
///      + p_tol; and a contact that slides at the end of the step
///      (|v_tan1| > v_tol) has its friction at the bound against that
///      sliding, p_tan . v_tan1 / |v_tan1| <= -mu p_n (1 - sat_rel) + p_tol
///      (single-phase steps only, two_phase below), or against
///      the sliding at the start (the explicit sliding direction of the
///      acceleration stepper). (Pyramid and circle alike: against a unit
///      direction d, the pyramid's maximal dissipation gives
///      -mu p_n (|d_t| + |d_o|) <= -mu p_n.)
///      v_tol = vel_abs + slide_tol + vel_rel (|v0| + |v1|) + comp_t |p_tan|
///      (the model's own sliding threshold and the creep of a loaded
///      sticking contact under the compliance); v_tan1 adds h k_t for the
///      acceleration stepper.
///   4. Motion: every free body's origin and every joint moves by at most
///      h |velocity after the step| + move_tol, orientations by at most
///      h |w1| + move_tol, up to the drift projection (xm); what the
///      projection adds is bounded by the energy law (its lift). Limits:
///      a joint ends no deeper beyond a limit than it started (+ gap_abs).
///   5. Energy: E1 - E0 <= W + e_tol, W the work of the inputs (efforts
///      and drives times their joint's displacement), of the velocity
///      stepper's push out of overlap present at the start
///      (p_n max(0, -gap0) / h) and of the drift projection's lift
///      (drift_depth times the total weight); e_tol = energy_abs +
///      energy_rel (|E0| + |E1| + |W|) + the integrator's own term
///      h/2 sum_i |f_i| |u1_i - u0_i| (semi-implicit Euler takes the work
///      of f with u1, the kinetic energy changes with the mean velocity;
///      drive forces in place of f on driven dofs) + work_rel (|W| + F +
///      |dKE|), F = h/2 sum_i |f_i| (|u0_i| + |u1_i|) the energy the forces
///      move in the step and dKE = (H du) . (u0 + u1) / 2 the kinetic
///      energy exchanged: the work is a first-order estimate, a joint's
///      potential and kinetic energy are not linear in its angle, and
///      semi-implicit Euler is not symplectic for a chain whose mass matrix
///      depends on its configuration (the Allegro's thumb swinging at 15 to
///      30 rad/s at dt 5 ms gained 1e-4 J a step, with no input). Energy
///      from nothing still fails: it shows as kinetic energy, and a rise
///      must stay below work_rel of it.
///
/// The cost is a few matrix-vector products of the step's own size (no
/// factorisation); experiments/bench_sim shows it per step.
#ifndef CP_PLANNER_STEPCHECK_H
#define CP_PLANNER_STEPCHECK_H

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cp_stepcheck_options {
  double ne_rel, ne_abs;       ///< 1e-8, 1e-12 (N s)
  double imp_rel, imp_abs;     ///< 1e-7 of the momentum scale, 1e-12 N s
  double gap_abs, gap_rel;     ///< 1e-9 m, 1e-9
  double vel_lcp;              ///< 1e-5: ten times the LCP solution's own
                               ///< relative accuracy (rel_tol 1e-6,
                               ///< docs/math.md section 5), on the
                               ///< velocities of a constraint's row
  double vel_abs, vel_rel;     ///< 1e-7 m/s, 1e-6
  double move_tol;             ///< 1e-9 (m or rad)
  double energy_abs, energy_rel; ///< 1e-9 J, 1e-8
  double work_rel;             ///< 0.25 (see 5.)
  double sat_rel;              ///< 1e-2: friction at its bound to 1 %
} cp_stepcheck_options;

cp_stepcheck_options cp_stepcheck_defaults(void);

/// What failed: the law and the constraint, dof, body or joint (by index;
/// the caller names it).
typedef enum cp_stepcheck_law {
  CP_CHECK_OK = 0,
  CP_CHECK_NEWTON_EULER,  ///< dof `index`
  CP_CHECK_NORMAL_SIGN,   ///< constraint `index`: p_n < 0
  CP_CHECK_PENETRATION,   ///< constraint `index` sinks deeper
  CP_CHECK_COMPLEMENTARITY, ///< constraint `index` pushes while open
  CP_CHECK_FRICTION_CONE, ///< contact `index` outside the pyramid
  CP_CHECK_FRICTION_DIRECTION, ///< contact `index` slides, friction not
                               ///< at the bound against it
  CP_CHECK_MOTION,        ///< free body `index` (0-based among free bodies)
                          ///< or joint nbodies + r moved too far
  CP_CHECK_JOINT_LIMIT,   ///< joint row `index` deeper beyond a limit
  CP_CHECK_ENERGY         ///< energy rose beyond the inputs' work
} cp_stepcheck_law;

/// "ok", "newton_euler", ...
const char *cp_stepcheck_law_name(cp_stepcheck_law l);

/// One step's data (arrays owned by the caller; column-major matrices).
typedef struct cp_stepcheck_step {
  int nu, nc;             ///< generalised velocities, constraints
  int nbody;              ///< free bodies (the first 6 nbody dofs)
  int njoint;             ///< joint dofs (the last njoint)
  double h;
  int accel_k;            ///< 1: the gap prediction adds h^2 k_n
  int two_phase;          ///< 1: impacts then forces (acceleration stepper
                          ///< with an impact): complementarity (2., last
                          ///< part) and the friction direction law (3.,
                          ///< second part) are not checked, as each phase
                          ///< obeys them with its own velocities (a corner
                          ///< struck in the impulse phase may lift in the
                          ///< force phase)
  double slide_tol;       ///< the model's sliding threshold (the scene's
                          ///< velocity tolerance): slower contacts roll
  const double *H;        ///< nu x nu mass matrix at the step's start
  const double *f;        ///< nu, forces of the (last) system build
  const double *G;        ///< nu x 3 nc
  const int *range;       ///< NULL, or 4 per constraint: two dof ranges
                          ///< [lo, hi) holding every nonzero of its three
                          ///< columns of G (the two sides' bodies or
                          ///< joints; an empty range is lo = hi)
  int nblock;             ///< diagonal blocks of H (0 with block NULL)
  const int *block;       ///< NULL, or nblock + 1 starts: H is zero outside
                          ///< the diagonal blocks [block[b], block[b+1])
  const double *k;        ///< 3 nc velocity products (may be NULL if
                          ///< accel_k is 0)
  const unsigned char *driven; ///< nu, 1: acceleration-driven dof
  const double *u0, *u1;  ///< nu, velocities at the start and after the
                          ///< step (before any drift velocity scaling)
  const double *p;        ///< 3 nc total impulses (n, t, o)
  const double *gap0;     ///< nc gaps at the start
  const double *mu;       ///< nc friction coefficients (0: frictionless)
  const double *rest;     ///< nc restitution coefficients (may be NULL)
  const double *comp_n, *comp_t; ///< nc compliance per impulse (m/s / N s)
  const double *x0, *x1;  ///< states at the start and the end, in the
                          ///< layout of planner/sim/world.h (13 per free body,
                          ///< then 2 per joint)
  const double *xm;       ///< the state after the step's motion and before
                          ///< the drift projection (NULL: x1)
  const double *lower, *upper; ///< njoint limits (NULL: none), -inf/inf
                               ///< for an unlimited joint
  const double *effort;   ///< njoint efforts of effort-driven joints
  double e0, e1;          ///< total energy before and after
  double drift_depth;     ///< overlap removed by the drift projection (m)
  double weight;          ///< total weight of the moving parts (N)
} cp_stepcheck_step;

typedef struct cp_stepcheck_report {
  cp_stepcheck_law law;
  int index;              ///< see cp_stepcheck_law
  double value, limit;    ///< the offending quantity and its bound
  double work;            ///< W of law 5 (J)
} cp_stepcheck_report;

/// Checks one step; returns rep->law (CP_CHECK_OK when every law holds).
/// opt NULL: defaults. scratch: at least 2 nu + 7 nc doubles.
cp_stepcheck_law cp_stepcheck_run(const cp_stepcheck_step *s,
                                  const cp_stepcheck_options *opt,
                                  double *scratch, cp_stepcheck_report *rep);

#ifdef __cplusplus
}
#endif
#endif
