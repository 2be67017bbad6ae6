/// \file planner/search/task.h
/// Planning task files (docs/planner.md): the scene and its start state, the
/// candidate inputs, the action's duration and step, the goal region, the
/// workspace bounds, the cost, the search method with its parameters and the
/// limits.
///
/// Actions. Input i (a joint, "manip/joint") has n_i candidate values (a
/// list, or `samples` values evenly spaced over a range). The candidate
/// actions are the Cartesian product of the inputs' values: action index a
/// decodes in mixed radix, input 0 varying fastest:
///     value_i = values_i[(a / (n_0 ... n_{i-1})) mod n_i].
/// An action holds its values for `duration` seconds, simulated in steps of
/// `dt` (round(duration / dt) steps). In dynamic mode the values are joint
/// efforts, in quasistatic mode joint velocities.
///
/// Cost of an action (docs/math.md §8): cost.time * T + cost.effort *
/// |values|^2 * T (the effort's squared norm integrated over the action),
/// plus cost.path times the distance each chosen body's centre moved from
/// the action's start to its end (planner/plan/problem.c).
///
/// Goal: one goal ("goal") or an ordered list of them ("phases"), each a
/// conjunction of body, joint, contact and rest terms (planner/search/goal.h);
/// a plan passes through the phases in order and ends in the last.
///
/// Ownership: a cp_task owns every string and array it points to and its
/// parsed scene; cp_task_free releases them. On failure cp_task_parse leaves
/// the task zeroed.
#ifndef CP_PLANNER_TASK_H
#define CP_PLANNER_TASK_H

#include <stddef.h>
#include <stdint.h>

#include "models/error.h"
#include "models/scene.h"
#include "planner/search/goal.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cp_task_mode {
  CP_TASK_DYNAMIC = 0,     ///< inputs are joint efforts
  CP_TASK_QUASISTATIC      ///< inputs are joint velocities
} cp_task_mode;

/// Stepper names as in planner/sim/world.h's cp_stepper (same values).
enum { CP_TASK_STEPPER_ACCELERATION = 0, CP_TASK_STEPPER_VELOCITY = 1,
       CP_TASK_STEPPER_QUASISTATIC = 2 };

/// What an input's values are (docs/planner.md, "Input kinds").
typedef enum cp_task_input_kind {
  CP_INPUT_EFFORT = 0,  ///< joint effort (dynamic) or velocity (quasistatic)
  CP_INPUT_TARGET,      ///< joint position target, tracked by PD
  CP_INPUT_CARTESIAN,   ///< displacement (m) or rotation (rad) of a link
  CP_INPUT_REACH,       ///< a link point put on a sampled point of a body's
                        ///< surface (planner/search/reach.h)
  CP_INPUT_PINCH        ///< two link points put on antipodal points of a
                        ///< body and squeezed (planner/search/pinch.h)
} cp_task_input_kind;

/// One input: a joint (or, for a Cartesian input, a link) and its
/// candidate values.
typedef struct cp_task_input {
  char *joint;        ///< the input's key: "manip/joint" (a Cartesian
                      ///< input: any label) (owned)
  int row;            ///< the joint's system row (models/system.h order);
                      ///< -1 for a Cartesian input
  int n_values;
  double *values;     ///< [n_values] (owned)
  int kind;           ///< cp_task_input_kind
  int manip, index;   ///< target: chain and joint index; Cartesian: chain
                      ///< and link index
  int relative;       ///< target: values are offsets from the joint's
                      ///< position when the action starts
  int acceleration;   ///< effort: the joint is acceleration-driven and the
                      ///< task said so ("acceleration": true)
  double stiffness;   ///< target: Kp (default: critically damped, see
                      ///< planner/sim/actuate.h)
  double damping;     ///< target: Kd
  double effort_limit;///< target: |effort| bound (URDF's, or the task's;
                      ///< 0: none)
  double point[3];    ///< Cartesian: the controlled point, link frame
  double direction[3];///< Cartesian: unit world direction of the
                      ///< displacement, or rotation axis
  int rotation;       ///< Cartesian: 1 when values are angles about
                      ///< direction ("axis"), 0 displacements
  int has_range;      ///< given as "range": [lo, hi] (continuous sampling
  double lo, hi;      ///< draws from it)
  int body;           ///< reach: the free body touched (scene index)
  unsigned faces;     ///< reach: faces it may touch (bit set,
                      ///< planner/search/reach.h CP_REACH_FACE_*)
  double offset;      ///< reach: distance of the point from the surface
                      ///< when touching (e.g. the fingertip's radius)
  double approach;    ///< reach: extra standoff in the action's first half
  double push[2];     ///< reach: depth past touching in the second half,
                      ///< drawn from [push[0], push[1]]
  double hold;        ///< reach: a value < 0 holds a contact the point is
                      ///< within offset + hold of (0: never)
  int manip2, index2; ///< pinch: the second link (the first: manip, index;
                      ///< the reach fields above apply to both)
  double carry[3];    ///< pinch: a held pair's largest displacement per
                      ///< world axis and action (m)
  double turn;        ///< pinch: its largest turn per action (rad) about
                      ///< `direction` (world, unit)
  double still;       ///< pinch: the share of held actions that keep the
                      ///< pair where it is (no carry, no turn; 0: none)
  double spread[3];   ///< reach, pinch: the share of the body's extent
                      ///< along each body axis that drawn points come
                      ///< from, about the centre ([0, 1]; 1: all of it)
} cp_task_input;

/// search.sampling "continuous" (rrt and sst): an action index is a seed
/// and there are this many of them (see cp_task_action_values).
#define CP_TASK_CONTINUOUS_ACTIONS (1L << 52)

/// A one-body summary of the goal for displays (the plan printout, the
/// viewer): the first body term of the last phase (its ball, else its box's
/// nearest point to the start with half the box's narrowest finite side as
/// the radius, at most 1 cm). A goal without body terms shows the first
/// free body.
typedef struct cp_task_goal {
  char *body;             ///< a free body's name (owned)
  int body_index;         ///< index into scene.bodies
  double position[3];
  double tolerance;       ///< m, > 0
  int has_orientation;
  double orientation[4];  ///< unit quaternion [w, x, y, z]
  double angle_tolerance; ///< rad, > 0
  int at_rest;
  double rest_speed;      ///< m/s, > 0 (default 0.01)
} cp_task_goal;

/// A file the task was built from, as read: the task file itself, the
/// scene file, every URDF and mesh file (planner/store/store.h stores them with
/// each run, so that replay needs nothing but the database).
typedef struct cp_task_file {
  char kind[8];           ///< "task", "scene", "urdf" or "mesh"
  char *path;             ///< as the loader asked for it (owned)
  char *data;             ///< the bytes (owned, NUL appended)
  size_t size;            ///< bytes, the NUL not counted
  char sha256[65];        ///< SHA-256 of the bytes, lowercase hex
} cp_task_file;

/// SHA-256 hex digests: 64 digits and the NUL.
#define CP_TASK_KEY_SIZE 65

typedef struct cp_task {
  char *text;             ///< the task file's text (owned, NUL-terminated)
  char *scene_text;       ///< the scene's JSON text (owned)
  char *scene_base;       ///< directory for the scene's relative paths (owned)
  cp_scene scene;         ///< parsed start scene (normal speeds not checked)
  cp_task_mode mode;
  int stepper;            ///< CP_TASK_STEPPER_* (= cp_stepper)
  int n_inputs;
  cp_task_input *inputs;  ///< [n_inputs] (owned)
  long n_actions;         ///< product of the inputs' value counts
  double duration;        ///< T (s), > 0
  double dt;              ///< h (s), 0 < h <= T
  int steps;              ///< round(T / h) >= 1
  int pd_implicit;        ///< action.pd "implicit" (1) or "explicit" (0,
                          ///< the default): the target inputs' PD law
  cp_task_goal goal;       ///< summary (above)
  int n_phases;            ///< >= 1 (a plain "goal" is one phase)
  cp_goal *phases;         ///< [n_phases] (owned)
  cp_goal_pairs pairs;     ///< the contact pairs the goals name
  double angle_scale;      ///< search.metric.angle: m per rad (0.1)
  int has_bounds;
  double bounds_min[3], bounds_max[3];
  double cost_time, cost_effort;
  double cost_path;        ///< cost.path: weight of the path length (1/m)
  int n_path_bodies;       ///< cost.path_bodies (default: every free body)
  int *path_bodies;        ///< [n_path_bodies] scene indices (owned)
  char method[16];        ///< "astar", "rrt", "sst"
  double weight;          ///< astar's w (default 1.5)
  double res_position, res_angle, res_velocity; ///< duplicate-detection cells
  double goal_bias;       ///< rrt/sst (default 0.05)
  uint64_t seed;          ///< default 1
  int continuous;         ///< search.sampling "continuous" (default "grid")
  long shortcut;          ///< search.shortcut: simulations spent shortening
                          ///< a plan (0: none, the default)
  int candidates;         ///< rrt/sst: actions tried per iteration (default 8)
  int search_batch;       ///< search.batch: expansions chosen together (1)
  /// search.pipeline: pipelined batches (docs/parallel.md): 1 on, 0 off,
  /// -1 (the default) not given: rrt and sst at batch >= 4 pipeline halves
  /// of batch / 2 (cp_task_search_mode), as the task's runs use it.
  int search_pipeline;
  long connect;           ///< search.connect: rrt's greedy extensions (0)
  long goal_k;            ///< search.goal_k: rrt grows a goal sample from
                          ///< one of this many nearest nodes (0: nearest)
  int drop_rejected;      ///< search.drop_rejected: rrt drops a node an
                          ///< iteration from which kept nothing (0: off)
  /// search.fresh_actions: rrt and sst never simulate a (node, action) pair
  /// twice (cp_search_options.fresh_actions): 1 on, 0 off, -1 not given
  /// (off; cp_task_fresh_actions).
  int search_fresh_actions;
  int steer_local;        ///< search.steer "local" (planner/search/
                          ///< steer_local.c; task_actions.c): 1, else 0
  int n_steer;            ///< steer_local: the inputs it steers (those
                          ///< with a range, reach inputs not counted)
  int steer_log;          ///< search.steer_rotation "log": 1, else 0
  double steer_probe;     ///< search.steer_probe: coordinate probes' u (0)
  long steer_levels;      ///< steer_local: values per steered input
                          ///< (odd, >= 3) in a steered action's id
  double speed;           ///< astar: speed bound of the heuristic (m/s, 0.5)
  double delta_bn;        ///< sst: selection radius (metric units, 0.05)
  double delta_s;         ///< sst: witness radius (metric units, 0.02)
  double metric[5];       ///< weights: position, orientation, velocity,
                          ///< joint position, joint velocity
  double metric_robot;    ///< search.metric.robot: a further factor on
                          ///< every joint coordinate (1; small values key
                          ///< the metric on the bodies' states)
  long max_nodes;         ///< > 0
  double max_seconds;     ///< > 0 (default 60)
  int allow_fallback;     ///< 1 (default): impulsive fallback steps accepted
  int velocity_sliding;   ///< 1 (default): the velocity stepper (also the
                          ///< fallback) writes sliding contacts as the
                          ///< acceleration stepper does
                          ///< (cp_world_options.velocity_sliding); 0: the
                          ///< pyramid, as every run before session 22
  int batch;              ///< expansions per database transaction (64)
  int n_files;
  cp_task_file *files;    ///< [n_files] every file read, in reading order
                          ///< (owned); none for an inline task without
                          ///< files
} cp_task;

/// Parses a task from JSON text. path (may be NULL) is the file's path: its
/// directory resolves the relative scene path. Returns 0, or -1 with err
/// (where = the JSON path, e.g. "inputs.finger/j1.samples") and the task
/// zeroed.
int cp_task_parse(const char *text, size_t len, const char *path,
                  cp_task *task, cp_error *err);

/// Reads and parses a task file; a read failure has err->where "".
int cp_task_load(const char *path, cp_task *task, cp_error *err);

/// cp_task_parse and cp_task_load with every file read through src
/// (models/error.h; NULL: the file system). Either way each file read is
/// kept in task->files.
int cp_task_parse_from(const char *text, size_t len, const char *path,
                       const cp_file_source *src, cp_task *task,
                       cp_error *err);
int cp_task_load_from(const char *path, const cp_file_source *src,
                      cp_task *task, cp_error *err);

/// Releases what the task owns and zeroes it. Safe on a zeroed task.
void cp_task_free(cp_task *task);

/// The values of action a (n_inputs of them) into out. On the grid (the
/// default) a is the mixed-radix index above; with continuous sampling a
/// is a seed: the generator of planner/search/search.h seeded with a draws
/// one uniform u_i per input in input order, and input i takes lo + (hi -
/// lo) u_i for a range, values[floor(u_i n_i)] for a list.
void cp_task_action_values(const cp_task *task, long a, double *out);

/// Cost of action a held for the task's duration.
double cp_task_action_cost(const cp_task *task, long a);

/// Local steering's actions (search.steer "local", docs/planner.md "Local
/// steering"; planner/search/task_actions.c). A steered action gives each
/// steered input (every input with a range [lo, hi], lo < hi, but the reach
/// inputs) the value mid + half u_i for a normalised u_i in [-1, 1],
/// rounded to one of steer_levels evenly spaced values; each reach input
/// -1 (no new contact; a touching point is held); every other input (it
/// must have a single value) that value. Its id is
/// CP_TASK_CONTINUOUS_ACTIONS plus the levels' mixed-radix index (input 0
/// fastest), so that it is a value like any other action id: the store,
/// resume and replay decode it with cp_task_action_values.
/// 1 when a is a steered action's id of this task.
int cp_task_action_is_steered(const cp_task *task, long a);
/// 1 when a is an action id of this task (sampled or steered).
int cp_task_action_valid(const cp_task *task, long a);
/// The id of the steered action nearest u [n_steer] (clamped to [-1, 1]).
long cp_task_steer_action(const cp_task *task, const double *u);
/// The normalised steered coordinates u [n_steer] of an action whose
/// values (cp_task_action_values) are values [n_inputs].
void cp_task_steer_coords(const cp_task *task, const double *values,
                          double *u);

/// Whether the task's runs with planner `method` use fresh actions
/// (cp_search_options.fresh_actions): search.fresh_actions when given
/// true (rrt and sst with grid sampling and at most
/// CP_SEARCH_MAX_FRESH_ACTIONS actions); 0 otherwise (opt-in for now).
int cp_task_fresh_actions(const cp_task *task, const char *method);

/// How a search of the task with method `method` and search.batch `batch`
/// (the run's, which a caller may override) runs its batches: returns 1
/// for pipelined batches, else 0, and sets *search_batch (may be NULL) to
/// the batch the search is created with (cp_search_options.batch; for a
/// pipelined search, each of its two halves). The rule:
/// - search.pipeline given true: pipelined, halves of `batch` (2 batch
///   jobs in flight); given false: plain batches of `batch`;
/// - not given, rrt or sst at batch >= 4 (the default since session 27):
///   pipelined with halves of batch / 2 rounded down, so that the jobs in
///   flight are the task's batch (odd: one fewer), never more;
/// - not given otherwise (astar, batch 1, 2 or 3: a half of 1 cannot be
///   pipelined): plain batches of `batch`.
int cp_task_search_mode(const cp_task *task, const char *method, int batch,
                        int *search_batch);

/// The task's key: SHA-256 (hex) of its text and of the bytes of every
/// other file it was built from, in reading order (the paths are not part
/// of it: the same inputs from another folder give the same key).
void cp_task_hash(const cp_task *task, char out[CP_TASK_KEY_SIZE]);

/// SHA-256 of n bytes as 64 lowercase hex digits and a NUL (OpenSSL's
/// libcrypto).
void cp_sha256_hex(const void *data, size_t n, char out[CP_TASK_KEY_SIZE]);

#ifdef __cplusplus
}
#endif
#endif
