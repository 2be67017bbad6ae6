/// \file planner/sim/actuate.h
/// Joint position control for the planner's robot-ready inputs
/// (docs/planner.md, "Input kinds"): pure functions from a scene's current
/// state (the joints' positions and rates, as cp_world_scene gives them)
/// to joint efforts. Nothing here steps a world or knows its internals.
///
/// The law, per independent joint coordinate k of a chain:
///
///     tau_k = Kp_k (q*_k - q_k) - Kd_k q'_k + [P^T (g(l) + h(l, l'))]_k,
///
/// clamped to [-limit_k, limit_k]. g and h are the chain's own gravity and
/// velocity-product efforts (recursive Newton-Euler, models/chain.h) in the
/// full joint space; P^T maps them to the independent coordinates (a mimic
/// leader carries its followers' efforts times their multipliers). With
/// q* = q and q' = 0 the joint is held exactly against gravity.
///
/// Stability (the explicit law, cp_actuate_pd; the implicit one,
/// cp_actuate_pd_implicit, has no bound). Explicit PD on the semi-implicit Euler step of size h, for a
/// joint of effective inertia I (the smallest the joint presents:
/// 1 / (M_q^-1)_kk, the other joints free), is stable iff
///     s = Kp h^2 / I + 2 Kd h / I < 4;
/// cp_actuate_stability returns s and complan accepts s < 2 (a margin for
/// the inertia changing with the configuration). Default gains are
/// critically damped for the inertia the joint presents with the other
/// joints held (M_q)_kk, the usual case when every joint of the arm is
/// driven: Kp = M_kk w^2, Kd = 2 M_kk w with w = 10 / T (T the action's
/// duration: 99.9 % of a step is reached within the action), lowered where
/// needed so that s <= 0.84 at the least inertia.
///
/// Cartesian goals: the link point's (and optionally the link's
/// orientation) error e is resolved to joint targets by damped least
/// squares, q* = q + J^T (J J^T + lambda^2 I)^-1 e, over the independent
/// joints on the link's path, each clamped to its limits.
///
/// Ownership: a cp_actuate_work holds scratch sized for one scene (its
/// largest chain); the functions take the scene and never keep it.
#ifndef CP_PLANNER_ACTUATE_H
#define CP_PLANNER_ACTUATE_H

#include "models/chain.h"
#include "models/scene.h"

#ifdef __cplusplus
extern "C" {
#endif

/// One joint driven to a position target.
typedef struct cp_actuator {
  int manip;      ///< chain index in the scene
  int joint;      ///< joint index in that chain (not a mimic follower)
  double target;  ///< q* (rad or m)
  double kp, kd;  ///< stiffness and damping, >= 0
  double limit;   ///< |effort| bound; 0: none
} cp_actuator;

/// Scratch for one scene.
typedef struct cp_actuate_work {
  int cap;                 ///< joints of the largest chain
  cp_link_state *s;        ///< [cap]
  double *g, *h, *comp;    ///< [cap] each
  double *J, *Jq;          ///< [6 cap] each
  double *M, *Mq;          ///< [cap * cap] each
  int *dof;                ///< [cap]
  double *scale;           ///< [cap]
  int *act;                ///< [cap] one chain's actuators (implicit law)
} cp_actuate_work;

/// Sizes the scratch for scene s. Returns 0, or -1 when out of memory (w
/// then empty; cp_actuate_work_free is still safe).
int cp_actuate_work_init(cp_actuate_work *w, const cp_scene *s);
void cp_actuate_work_free(cp_actuate_work *w);

/// The compensation [P^T (g + h)] of chain m at its current state, one
/// entry per independent coordinate (cp_chain_dofs), into comp.
void cp_actuate_bias(const cp_scene *s, int m, cp_actuate_work *w,
                     double *comp);

/// The law above for n actuators: effort[i] for a[i]. Actuators of one
/// chain should be consecutive (the chain's compensation is computed once
/// per run of them).
void cp_actuate_pd(const cp_scene *s, int n, const cp_actuator *a,
                   cp_actuate_work *w, double *effort);

/// The law evaluated implicitly for a step of size h (a task's
/// `"action": {"pd": "implicit"}`): the PD terms act on the joints' rates
/// and positions at the END of the step, as if stiffness and damping were
/// folded into the step's mass matrix. Per chain, with S its actuated
/// coordinates, e = q* - q, C = diag(h Kd + h^2 Kp) over S and the
/// semi-implicit step q'+ = q' + h M_q^-1 tau (contact and other efforts
/// left out of the prediction), the efforts tau_S solve
///     (I + C (M_q^-1)_SS) tau_S = Kp e - (Kd + h Kp) q',
/// then the compensation is added and the effort clamped. For a lone joint
/// of inertia I: tau = (Kp e - (Kd + h Kp) q') / (1 + (h Kd + h^2 Kp) / I),
/// stable for all gains and steps (the step's map has spectral radius < 1
/// for Kp, Kd >= 0, I > 0); with Kp h^2 >> I it tends to moving the joint
/// onto its target in one step. Actuators need not be grouped by chain.
void cp_actuate_pd_implicit(const cp_scene *s, int n, const cp_actuator *a,
                            double h, cp_actuate_work *w, double *effort);

/// Inertias of independent joint k (a chain joint index, not a follower)
/// of chain c at its current configuration: returns the smallest it
/// presents, 1 / (M_q^-1)_kk (the other joints free), and sets *held to
/// (M_q)_kk (the other joints held). NaN when the mass matrix is not
/// positive definite.
double cp_actuate_inertia(const cp_chain *c, int k, cp_actuate_work *w,
                          double *held);

/// Default gains for a joint of inertias `held` and `least`
/// (cp_actuate_inertia), actions of duration T, steps h: critically damped
/// for `held`, Kp = held w^2, Kd = 2 held w, with w = 10 / T or less, so
/// that the stability number at `least` stays <= 0.84.
void cp_actuate_default_gains(double held, double least, double duration,
                              double dt, double *kp, double *kd);

/// The stability number s = Kp h^2 / I + 2 Kd h / I (stable below 4).
double cp_actuate_stability(double kp, double kd, double inertia, double dt);

/// Stability numbers complan accepts: below this.
#define CP_ACTUATE_STABILITY_MAX 2.0

/// A Cartesian goal for a link.
typedef struct cp_cartesian_goal {
  int manip, link;       ///< chain and joint/link index
  double point[3];       ///< the controlled point, link frame
  double position[3];    ///< where it should be (world)
  int has_rotation;      ///< 1: orientation controlled too
  double rotation[9];    ///< the link's desired orientation (world,
                         ///< row-major)
  double lambda;         ///< damped least squares' lambda (> 0)
} cp_cartesian_goal;

/// World position p of the point (link frame) of link k of chain m and the
/// link's orientation R (row-major; may be NULL) at the current state.
void cp_actuate_link_pose(const cp_scene *s, int m, int k,
                          const double *point, cp_actuate_work *w, double *p,
                          double *R);

/// Joint targets for the goal: targets[k] for every joint k of the chain
/// (chain joint indices; followers and joints off the link's path get
/// their current position), clamped to the joints' limits.
void cp_actuate_cartesian(const cp_scene *s, const cp_cartesian_goal *g,
                          cp_actuate_work *w, double *targets);

#ifdef __cplusplus
}
#endif
#endif
