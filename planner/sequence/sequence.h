/// \file planner/sequence/sequence.h
/// Assembly sequences executed by a robot (docs/assembly.md, "Assembly
/// tasks"): an assembly task names the final assembly (a scene: parts in
/// their design poses, fixed supports), where each part is staged, a
/// parallel gripper and the placement tolerances. cp_sequence_plan takes the
/// order from the stability-aware order search (planner/assembly), then for
/// each part in turn ranks grasp candidates with the stability LP and makes
/// a manipulation plan of seven phases (approach, grasp, lift, transport,
/// place, release, retreat), each phase one planner task (cp_plan_task, A*)
/// simulated with the contact model on a world that holds the parts placed
/// so far at their simulated poses. The transport is a straight carriage
/// line whose end a servo sets: the line is simulated in a scratch store,
/// the part's remaining error measured and the line's end moved by it, a
/// few times, before the best line is planned into the store (docs/
/// assembly.md, "Transport"). After each stage the subassembly's
/// verdict comes from the LP/MILP on the simulated poses; an unstable stage
/// or a part outside the tolerances rejects the grasp and the next one is
/// tried; when none is left the sequence is not returned (status NONE).
/// Temporary parts (a centering) are placed like the others and, after the
/// last permanent part, removed in removal stages of eight phases (the
/// withdrawal along a free horizontal axis third), each certified on the
/// parts left standing.
///
/// The gripper: a gantry carriage on three prismatic joints (x, y, z) whose
/// link carries the left finger; the right finger slides on a prismatic
/// joint "gap" along the grasp axis and squeezes with a PD spring. Every
/// input is a joint position target (docs/planner.md, "Input kinds").
///
/// Ownership: a cp_sequence_task owns its strings, arrays and scene; a
/// cp_sequence_result owns its arrays. Nothing here prints; the plans go
/// to the caller's store.
#ifndef CP_PLANNER_SEQUENCE_H
#define CP_PLANNER_SEQUENCE_H

#include <stdint.h>

#include "contact/stability.h"
#include "models/error.h"
#include "models/scene.h"
#include "planner/store/store.h"

#ifdef __cplusplus
extern "C" {
#endif

/// The parallel gripper of an assembly task ("robot").
typedef struct cp_sequence_gripper {
  double squeeze;          ///< finger force when closed (N), default 5
  double stiffness;        ///< PD stiffness of the gap joint (N/m), 300
  double mu;               ///< friction fingers/parts, default 0.8
  double finger[3];        ///< thickness, width, height (m): 0.01 0.03 0.03
  double max_opening;      ///< widest part it can take (m), default 0.1
  double clearance;        ///< finger gap to a face on approach (m), 0.002
  double carriage_mass;    ///< mass of each carriage link (kg), default 1
  int panda;               ///< 1: the Panda hand ("type": "panda_hand"):
                           ///< the hand and fingers from its URDF on the
                           ///< carriage, the fingers a mimic pair
  char *hand_urdf;         ///< panda: the URDF's hand and finger links and
                           ///< finger joints, as written there (owned)
  char *packages;          ///< panda: "packages" of the phase scenes (JSON
                           ///< text, owned; NULL: none)
  double finger_upper;     ///< panda: a finger joint's upper limit (m)
  double finger_effort;    ///< panda: the finger joints' effort limit (N)
  double tcp;              ///< panda: the tool centre point below the hand
                           ///< frame (m)
} cp_sequence_gripper;

typedef struct cp_sequence_task {
  char *path;              ///< the task file as given (owned, may be NULL)
  char *scene_text;        ///< the assembly's scene JSON (owned)
  cp_scene scene;          ///< the assembly at its design poses
  int n_parts;
  int *part_body;          ///< [n_parts] scene body index of each part
  double *staged;          ///< [7 n_parts]: x y z qw qx qy qz per part
  cp_sequence_gripper gripper;
  double tol_position;     ///< placement tolerance (m), default 0.002
  double tol_angle;        ///< placement tolerance (rad), default 1 deg
  double step;             ///< carriage motion per action (m), 0.01
  double clearance;        ///< transport height above everything (m), 0.02
  double acceleration;     ///< peak acceleration of a carriage step
                           ///< (m/s^2), default 25: sets the carriage's
                           ///< PD gains and is what a grasp must hold
                           ///< besides the weight
  double seconds;          ///< time limit of the whole sequence (s), 600
  long nodes;              ///< node limit of each phase, default 2000
  long stability_nodes;    ///< work limit of each certificate's strong/
                           ///< weak MILPs: branch-and-bound nodes of all
                           ///< of them together ("limits.stability_nodes",
                           ///< default 2000); when it runs out the verdict
                           ///< is stable_undecided, the same on any machine
  double stability_seconds; ///< safety cap on the same MILPs (wall clock,
                           ///< s), default 600 ("limits.stability"): meant
                           ///< never to be reached; if it is (a far slower
                           ///< machine), the verdict depends on speed
  uint64_t temporary;      ///< parts (bit k: part k) placed like the
                           ///< others and removed again after the last
                           ///< permanent part ("temporary": a centering)
  int n_temporary;         ///< how many parts are temporary
  int temporary_order[64]; ///< [n_temporary] the temporary parts in the
                           ///< order they are removed (as listed)
} cp_sequence_task;

/// 1 when the JSON document text is an assembly task (an object with the
/// key "assembly"), 0 when it is something else (a scene).
int cp_sequence_is_task(const char *text, size_t len);

/// Parses an assembly task; path (may be NULL) resolves a relative
/// "assembly" scene path. Returns 0, or -1 with err (where = the JSON path,
/// e.g. "staging.block1.position") and the task zeroed.
int cp_sequence_task_parse(const char *text, size_t len, const char *path,
                           cp_sequence_task *t, cp_error *err);
int cp_sequence_task_load(const char *path, cp_sequence_task *t,
                          cp_error *err);
void cp_sequence_task_free(cp_sequence_task *t);

/// A grasp candidate: a pair of antipodal faces of a box part.
typedef struct cp_sequence_grasp {
  int axis;                ///< the part's local axis (0 x, 1 y, 2 z)
  double dir[3];           ///< world grasp axis (left finger -> right)
  double width;            ///< part extent along it (m)
  double offset;           ///< height of the fingers' centre above the
                           ///< part's (m): 0, or near its top
  double shift[3];         ///< a turning Panda grasp held away from the
                           ///< part's centre (m, world, staged pose): the
                           ///< fingers' centre minus the part's, chosen
                           ///< so that the turned palm clears the table;
                           ///< else 0 (then offset says where)
  double turn;             ///< rotation about dir from the staged to the
                           ///< design orientation (rad): the gripper's
                           ///< wrist turns the part in the grasp
  double finger[3];        ///< the fingers' size for this grasp (m)
  double hold;             ///< largest multiple of (weight + transport
                           ///< inertia) the grasp holds in the LP (0..8)
  int rejected;            ///< 1: not tried (reason says why)
  char reason[96];
} cp_sequence_grasp;

/// Phases of a stage, at most: "approach", "grasp", "lift", "turn" (only
/// when the grasp turns the part), "transport", "place", "release",
/// "retreat"; a removal stage has "withdraw" (index CP_SEQUENCE_WITHDRAW)
/// after the grasp instead of a turn.
#define CP_SEQUENCE_PHASES 8
#define CP_SEQUENCE_WITHDRAW 8
const char *cp_sequence_phase_name(int k);

typedef struct cp_sequence_stage {
  int part, body;          ///< part index, scene body index
  cp_sequence_grasp grasp; ///< the grasp used
  int regrasps;            ///< intermediate placements on the table
  int attempts;            ///< grasps tried (executed) for this part
  int certified;           ///< 1: placed, verdict stable, within tolerance
  int n_candidates;
  cp_sequence_grasp candidates[6]; ///< every candidate, ranked
  int n_plans;              ///< phases planned: 7, or 8 with a turn, per
                            ///< move (a regrasp adds a move)
  int64_t plan_ids[2 * CP_SEQUENCE_PHASES]; ///< [n_plans] in order
  unsigned char plan_phase[2 * CP_SEQUENCE_PHASES]; ///< [n_plans] each
                            ///< plan's phase (cp_sequence_phase_name)
  cp_stability_kind stability; ///< of the subassembly after release
  long stability_nodes;    ///< branch-and-bound nodes its MILPs used
  char stability_reason[120]; ///< why stable_undecided ("" otherwise)
  double position_error;   ///< placed part vs design (m)
  double angle_error;      ///< rad
  double pose[7];          ///< its simulated pose after the stage
  int removal;             ///< 1: a temporary part taken out of the
                           ///< assembly and put down at its staging pose
                           ///< (the verdict is then on the rest; the
                           ///< pose error is from the staging pose)
  double withdraw[3];      ///< removal: the horizontal direction it left in
} cp_sequence_stage;

typedef enum cp_sequence_status {
  CP_SEQUENCE_SOLVED = 0,  ///< every part placed and certified
  CP_SEQUENCE_NONE,        ///< no order / no grasp gave a certified stage
  CP_SEQUENCE_LIMIT,       ///< the time limit ended it
  CP_SEQUENCE_FAILED       ///< storage or memory failure (err says which)
} cp_sequence_status;

/// "solved", "none", "limit", "failed".
const char *cp_sequence_status_name(cp_sequence_status s);

typedef struct cp_sequence_result {
  cp_sequence_status status;
  int n_order;
  int *order;              ///< [n_order] part indices in placing order
  int n_stages;            ///< certified stages (when solved: n_order,
                           ///< then one removal stage per temporary part)
  cp_sequence_stage *stages;
  double final_position_error, final_angle_error; ///< worst part at the end
  double seconds;
  long long lcp_solves;
  long plans;              ///< planner runs made (phases of every attempt)
  int backtracks;          ///< placed stages taken back because the rest
                           ///< of the order could not be completed
  char message[256];       ///< why NONE / LIMIT / FAILED
} cp_sequence_result;

/// Ranks the grasp candidates of part p as staged (transport towards its
/// design pose): each box face pair with a horizontal normal, held at the
/// part's centre height or (when the part is taller than the fingers) with
/// the fingers 2 mm below its top, refused when
/// wider than the gripper opens or when a finger at the design pose (or on
/// the way down to it) would meet a part placed before (placed: bitmask of
/// parts) or a fixed body; else its hold factor from the stability LP of
/// the part between a fixed finger and one pressing with the squeeze force,
/// under gravity plus the transport acceleration, refused below 1. Sorted:
/// usable first, by hold descending. Returns the count, or -1 with err.
/// from and to (x y z qw qx qy qz; NULL: the staged pose, the design pose)
/// say where the part is picked and where it goes.
int cp_sequence_grasps(const cp_sequence_task *t, int p, const double *from, const double *to, uint64_t placed,
                       cp_sequence_grasp *out, int cap, cp_error *err);

/// Plans and executes the whole sequence, every phase a plan in st.
/// Returns the status (also in res->status).
cp_sequence_status cp_sequence_plan(cp_store *st, const cp_sequence_task *t,
                                    cp_sequence_result *res, cp_error *err);
void cp_sequence_result_free(cp_sequence_result *res);

#ifdef __cplusplus
}
#endif
#endif
