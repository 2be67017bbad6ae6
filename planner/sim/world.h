/// \file planner/sim/world.h
/// The simulation handle: a scene's state stepped in time with the contact
/// model (formulation §6). The simulator command, the planner's expansions
/// and replay all drive a cp_world; it is the only place in complan that
/// advances time.
///
/// CONTRACT NOTE (for the modules built on it): the declarations below are
/// the API that planner/search, planner/replay and the CLI call. Functions
/// may be added; the ones here keep their meaning.
///
/// Steppers (formulation §6):
///   CP_STEPPER_ACCELERATION  the paper's model: impulse LCP for approaching
///       contacts (Newton restitution), then the acceleration LCP with the
///       sliding/rolling split, semi-implicit Euler, quaternions by the
///       exponential map, drift correction of persistent contacts. When the
///       acceleration LCP has no solution (Painleve) the step is taken by the
///       velocity stepper and counted as a fallback.
///   CP_STEPPER_VELOCITY      Stewart-Trinkle / Anitescu-Potra impulse-velocity
///       LCP with gap/h stabilisation: always solvable.
///   CP_STEPPER_QUASISTATIC   the quasistatic problem per step; joint
///       velocities are the inputs (cp_world_set_joint_velocity).
///
/// State vector (cp_world_get_state / cp_world_set_state), length
/// cp_world_state_size() = 13 n_obj + 2 n_l:
///   for each FREE body in scene order: x[3], q[4] (w, x, y, z), v[3], w[3]
///   then for each joint in system order (models/system.h: manipulators in
///   scene order, each chain's joints in order): position, velocity.
/// Time is separate (cp_world_time / cp_world_set_time).
///
/// Determinism: a world created from the same scene and options, given the
/// same calls, produces bitwise identical states on the same build;
/// cp_world_hash digests every state bit after every step.
///
/// Ownership: cp_world_create copies the scene (the caller keeps its own);
/// cp_world_scene returns the world's copy, valid until the next step,
/// set_state or destroy. No function prints.
#ifndef CP_PLANNER_WORLD_H
#define CP_PLANNER_WORLD_H

#include <stddef.h>
#include <stdint.h>

#include "contact/solve.h"
#include "models/error.h"
#include "models/scene.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cp_stepper {
  CP_STEPPER_ACCELERATION = 0,
  CP_STEPPER_VELOCITY,
  CP_STEPPER_QUASISTATIC
} cp_stepper;

/// "acceleration", "velocity", "quasistatic".
const char *cp_stepper_name(cp_stepper s);
/// Parses a stepper name; returns 0 and sets *s, or -1.
int cp_stepper_parse(const char *name, cp_stepper *s);

/// The branch-and-bound node limit of the certificate in the default
/// solver options of a world (cp_world_defaults: solve.certify.node_limit)
/// and its wall-clock safety net (solve.certify.time_limit_s), which only
/// an LP stalling inside GLPK's branch and bound reaches: 2000 nodes take
/// a few seconds at n = 130 (docs/simulate.md, "Solver limits").
#define CP_WORLD_CERTIFY_NODES 2000
#define CP_WORLD_CERTIFY_SAFETY_S 60.0

typedef struct cp_world_options {
  cp_stepper stepper;      ///< default CP_STEPPER_ACCELERATION
  double dt;               ///< step (s), > 0; default 1e-3
  cp_solve_options solve;  ///< LCP solver options (default: Lemke with the
                           ///< paper's restarts; a failure falls back;
                           ///< certify bounded by CP_WORLD_CERTIFY_NODES
                           ///< nodes, CP_WORLD_CERTIFY_SAFETY_S a safety net)
  int warm_start;          ///< 1 (default): each LCP starts from the
                           ///< previous step's basis of its persisting
                           ///< contacts (taken as it is, repaired by
                           ///< principal pivots, or Lemke's warm start:
                           ///< docs/simulate.md); 0: Lemke cold
  double compliance;       ///< relative normal compliance kappa >= 0,
                           ///< default 1e-6 (docs/simulate.md): each
                           ///< contact's normal row of the steppers' LCPs
                           ///< gets kappa * (its diagonal entry) added, so
                           ///< that where the rigid model leaves the
                           ///< distribution of a face's pressure over its
                           ///< corner points open, the stepper takes the
                           ///< stiff-compliant limit (pressure spread, not
                           ///< piled on one corner); 0: the rigid model as
                           ///< it is (any of its solutions may be taken)
  int allow_fallback;      ///< 1 (default): acceleration stepper falls back to
                           ///< the velocity stepper; 0: such a step returns
                           ///< CP_WORLD_NEEDS_FALLBACK and the state is
                           ///< unchanged
  int check;               ///< 1 (default): every step of the acceleration
                           ///< and velocity steppers passes the independent
                           ///< check of planner/sim/stepcheck.h or is taken
                           ///< again (4 substeps, then the velocity stepper,
                           ///< whole and in 4 substeps, then -- with
                           ///< velocity_sliding -- the velocity stepper
                           ///< with the pyramid, whole and in 4 substeps);
                           ///< a step none of
                           ///< them gets through is CP_WORLD_CHECK_FAILED
                           ///< naming the law and the body, contact or
                           ///< joint (docs/simulate.md). 0: unchecked
  int impact_memo;         ///< slots (>= 0) of the impact memo; 0 (default):
                           ///< none. An impact LCP identical bit for bit to
                           ///< one solved before (kept in its slot) takes
                           ///< that solution instead of a solve: the same
                           ///< answer, as Lemke's starts are deterministic.
                           ///< Worth it where states recur, as in a
                           ///< planner expanding one node with several
                           ///< actions (the first step's impacts depend on
                           ///< the state only); the planner turns it on
                           ///< with warm starts (docs/simulate.md)
  int profile;             ///< 1: time each step's phases
                           ///< (cp_world_profile); 0 (default): no clock
                           ///< is read and the profile stays zero
  int velocity_sliding;    ///< 1: the velocity stepper writes a contact
                           ///< that slides at the step's start (tangential
                           ///< speed above the tolerance) with the sliding
                           ///< substitution c_tan = -mu c_n v/|v| (one
                           ///< unknown, c_n) instead of the pyramid's six;
                           ///< one that would stop or reverse within the
                           ///< step is made rolling and the LCP solved
                           ///< again (docs/simulate.md, "Sliding contacts
                           ///< in the velocity stepper"). 1 is the
                           ///< default (since session 22), as the
                           ///< acceleration stepper treats sliding
                           ///< contacts; 0: every contact is the pyramid
  int reserve;             ///< contacts the world is sized for when it is
                           ///< created, as MuJoCo's mj_makeData makes its
                           ///< arena (docs/simulate.md, "Reserve"): every
                           ///< array a step grows with its constraints
                           ///< (those contacts plus every joint-limit side
                           ///< and support point) is made that large and
                           ///< its pages written once, so that steps that
                           ///< stay within it take no new memory and no
                           ///< first-touch page faults.
                           ///< CP_WORLD_RESERVE_AUTO (-1, the default
                           ///< since session 25): the contacts of the
                           ///< scene at creation, as many of them as keep
                           ///< the step's LCP within
                           ///< CP_WORLD_RESERVE_AUTO_LCP unknowns (none
                           ///< when its limits alone exceed it); 0: none,
                           ///< the arrays grow in the steps that need
                           ///< them; n > 0: n contacts, without that cap.
                           ///< The same states bit for bit whatever it is
} cp_world_options;

/// cp_world_options.reserve: the contacts of the scene as created, within
/// CP_WORLD_RESERVE_AUTO_LCP (the default).
#define CP_WORLD_RESERVE_AUTO (-1)
/// The most LCP unknowns CP_WORLD_RESERVE_AUTO sizes a world for: its six
/// squares (M, LU, M_B and Lemke's three) then take at most 6 x 512 KB, so
/// that the default costs a large scene (100 resting boxes: 2400 unknowns,
/// six squares of 46 MB) no more than about 3 MB.
#define CP_WORLD_RESERVE_AUTO_LCP 256
/// cp_world_options.reserve's largest value (a larger one is
/// CP_WORLD_BAD_INPUT; one that does not fit in memory, CP_WORLD_NOMEM).
#define CP_WORLD_RESERVE_MAX 100000

cp_world_options cp_world_defaults(void);

typedef enum cp_world_status {
  CP_WORLD_OK = 0,
  CP_WORLD_NEEDS_FALLBACK, ///< allow_fallback = 0 and the step needed it
  CP_WORLD_PENETRATION,    ///< a pair overlaps beyond penetration_tolerance
  CP_WORLD_JOINT_LIMIT,    ///< a joint left its limits beyond tolerance
  CP_WORLD_NONFINITE,      ///< a NaN or infinity appeared (message says where)
  CP_WORLD_SOLVER_FAILED,  ///< no stepper could produce an answer
  CP_WORLD_NOMEM,
  CP_WORLD_BAD_INPUT,      ///< bad argument (message says which)
  CP_WORLD_CHECK_FAILED,   ///< the step failed the per-step check in every
                           ///< retry (message names the law and where)
  CP_WORLD_TIME_LIMIT      ///< the step needed a solver call (certify, FIP)
                           ///< after the deadline (cp_world_set_deadline)
                           ///< had passed: not made, the step not retried
} cp_world_status;

/// "ok", "needs_fallback", "penetration", "joint_limit", "nonfinite",
/// "solver_failed", "out_of_memory", "bad_input", "check_failed",
/// "time_limit".
const char *cp_world_status_name(cp_world_status s);

/// Where one step's time went (opt.profile; as Box2D's b2Profile, read by
/// cp_world_profile): seconds of the monotonic clock per phase, over every
/// attempt and substep of the step (docs/simulate.md, "Phase timings"). The phases do not overlap; what
/// is left of total is bookkeeping (state saves and restores, warm records,
/// the step's attempts).
typedef struct cp_step_profile {
  double collide;     ///< contact generation and manifold reduction
  double constraints; ///< the constraint rows (contacts, joint limits) and
                      ///< the settling of a step's overlap, less its own
                      ///< phases
  double assembly;    ///< the step's system: H, f, G, k and the contact
                      ///< space A, b
  double solve;       ///< forming and solving the LCPs (the warm basis,
                      ///< Lemke, fallbacks, the drift projection's LCP)
  double check;       ///< finite numbers, the energy and the independent
                      ///< step check
  double integrate;   ///< the steppers' other work: velocities, positions,
                      ///< drift correction
  double total;       ///< the whole cp_world_step call
} cp_step_profile;

/// What one step did.
typedef struct cp_step_info {
  int contacts;            ///< contacts generated at the start of the step
  int impacts;             ///< contacts treated as impacts
  int lcp_solves;          ///< LCPs solved in this step
  int pivots;              ///< pivots in this step (all solves; Lemke's
                           ///< and the warm basis's principal pivots)
  int warm_started;        ///< 1 when the step's main LCP was solved from
                           ///< the warm basis (as it is or repaired)
  int fallback;            ///< 1 when the step was taken by the velocity
                           ///< stepper as a fallback
  double max_penetration;  ///< deepest overlap after the step (m, >= 0)
  double energy;           ///< total energy after the step (J)
  int lcp_reused;          ///< LCPs of this step answered by the impact memo
                           ///< (counted in lcp_solves, no pivots)
  int checked;             ///< 1 when the accepted step passed the
                           ///< independent check (opt.check, dynamic
                           ///< steppers)
  int retried;             ///< 1 when a first attempt failed (the check, a
                           ///< limit, penetration, a non-finite number) and
                           ///< the step was taken again (docs/simulate.md)
  int limits_redone;       ///< 1 when the step crossed a joint limit outside
                           ///< the window and was taken again with every
                           ///< limit as a constraint
  int islands;             ///< most independent groups of touching bodies a
                           ///< friction LCP of the step was split into and
                           ///< solved group by group (docs/simulate.md,
                           ///< "Islands"); 0: every LCP was solved whole
} cp_step_info;

typedef struct cp_world cp_world;

/// Creates a world from a scene whose contacts come from shapes
/// (scene->contacts_auto); an explicit contact list is CP_WORLD_BAD_INPUT
/// with the message saying why. opt NULL: defaults. Returns a status and
/// *out (NULL on failure, with err filled when err is not NULL).
cp_world_status cp_world_create(const cp_scene *scene,
                                const cp_world_options *opt, cp_world **out,
                                cp_error *err);

void cp_world_destroy(cp_world *w);

/// Advances the world by one step of opt.dt. On a status other than
/// CP_WORLD_OK the state is unchanged and cp_world_message says what
/// happened and where (body, joint or contact pair). info may be NULL.
cp_world_status cp_world_step(cp_world *w, cp_step_info *info);

/// Phase timings of the last cp_world_step (its status OK or not) when the
/// world was created with opt.profile; all zeros without it or before the
/// first step.
cp_step_profile cp_world_profile(const cp_world *w);

/// The message of the last non-OK status ("" when none).
const char *cp_world_message(const cp_world *w);

/// The world's current scene (state and contacts of the last step).
const cp_scene *cp_world_scene(const cp_world *w);

double cp_world_time(const cp_world *w);
/// The world's step (opt.dt).
double cp_world_dt(const cp_world *w);
void cp_world_set_time(cp_world *w, double t);

/// Bounds the time of the solvers of the steps that follow: every solver
/// call gets what is left of `seconds` from now (certify's MIP time limit,
/// cp_certify_options.time_limit_s, is cut to it). Once it is spent no
/// such call is made (Lemke's, which are bounded by their pivot cap, still
/// are): a step that needs one fails with CP_WORLD_TIME_LIMIT, at once,
/// without the retries of other failures, and its state is unchanged.
/// INFINITY: no bound (the default). The planner sets it from its time
/// limit before every action.
void cp_world_set_deadline(cp_world *w, double seconds);

/// The clock the deadline is read with (seconds, any origin, never going
/// back): clock(ctx). NULL: the monotonic clock of models/clock.h (the
/// default). For tests that need a deadline to pass at a given point of a
/// step without depending on the machine's speed; set it before
/// cp_world_set_deadline.
void cp_world_set_clock(cp_world *w, double (*clock)(void *ctx), void *ctx);

/// A call-back made from within the world's long LCP solves: fn(ctx) after
/// every `period`-th Lemke pivot of a solve (contact/lemke.h,
/// cp_lemke_set_poll) and after every interior-point iteration of the
/// FIP solves the world makes (cp_fip_options.poll, whatever the period),
/// so that the caller can do work of its own while a
/// step lasts (an MPI rank answering its workers: docs/parallel.md). fn
/// must not touch the world; the steps' results are the same with or
/// without it. fn NULL removes it (the default). CP_WORLD_BAD_INPUT for fn
/// set with period < 1.
cp_world_status cp_world_set_solve_poll(cp_world *w, void (*fn)(void *ctx),
                                        void *ctx, int period);

/// Resizes the impact memo (cp_world_options.impact_memo) to slots >= 0
/// (0: off), dropping what it kept. CP_WORLD_BAD_INPUT for slots < 0,
/// CP_WORLD_NOMEM (memo then off) when out of memory.
cp_world_status cp_world_set_impact_memo(cp_world *w, int slots);
/// Whether an impact LCP answered by the impact memo adds to the step's
/// `pivots` the pivots of the cold solve that answered it first (on), or
/// none (off: the default, pivots done). On, a step's count no longer
/// depends on what the world solved before (the answers never do), so
/// worlds that share out a planner's jobs in any way count the same
/// (planner/plan: on for searches with batches of several jobs).
void cp_world_set_memo_pivots(cp_world *w, int on);
/// Empties the impact memo, keeping its slots and their memory (no
/// allocation, cannot fail): the world's next impact LCPs are solved as a
/// new world's would be. The planner empties it at every search's start,
/// so that a search's pivot counts do not depend on the searches its world
/// made before (a benchmark's runs on one thread, or spread over several).
void cp_world_clear_impact_memo(cp_world *w);

int cp_world_state_size(const cp_world *w);
void cp_world_get_state(const cp_world *w, double *x);
/// Sets the state (layout above); quaternions are renormalised. Returns
/// CP_WORLD_NONFINITE or CP_WORLD_BAD_INPUT (non-unit quaternion beyond
/// 1e-6) without changing anything.
cp_world_status cp_world_set_state(cp_world *w, const double *x);

/// Inputs. joint is the system row of the joint (0..n_l-1, models/system.h
/// order). Effort of an effort-driven joint; acceleration of an
/// acceleration-driven one; joint velocity for the quasistatic stepper.
cp_world_status cp_world_set_effort(cp_world *w, int joint, double effort);
cp_world_status cp_world_set_joint_velocity(cp_world *w, int joint,
                                            double velocity);
/// Looks up a joint row by its name "manip/joint"; -1 if none.
int cp_world_joint_index(const cp_world *w, const char *name);
int cp_world_joint_count(const cp_world *w);

/// Total energy (kinetic + gravitational potential) of the current state.
double cp_world_energy(const cp_world *w);

/// Running 64-bit digest of every state bit after every step (and of
/// set_state calls), from the world's creation.
uint64_t cp_world_hash(const cp_world *w);

/// Warm-start data (the last LCP basis and the contact identities it
/// belongs to), so that a planner can start siblings from a node's basis.
/// cp_world_warm_size: bytes needed (0 when there is none);
/// cp_world_warm_get copies it into buf (size bytes); cp_world_warm_set
/// installs a blob from warm_get (possibly of another world of the same
/// scene); a blob that does not fit the current contacts is ignored.
size_t cp_world_warm_size(const cp_world *w);
void cp_world_warm_get(const cp_world *w, void *buf, size_t size);
void cp_world_warm_set(cp_world *w, const void *buf, size_t size);

/// The contacts of the last step with their forces, for viewers and logs.
typedef struct cp_world_contact {
  cp_ref a, b;
  double p[3];      ///< world point
  double n[3];      ///< normal, from b into a
  double force[3];  ///< force on a, world frame (impulse / dt for impulsive
                    ///< steps)
  double depth;     ///< penetration at the start of the step
} cp_world_contact;

/// Returns the number of contacts of the last step and sets *out to an
/// array owned by the world (valid until the next step).
int cp_world_contacts(const cp_world *w, const cp_world_contact **out);

#ifdef __cplusplus
}
#endif
#endif
