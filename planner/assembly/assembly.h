/// \file planner/assembly/assembly.h
/// Stability of an assembly at rest and stable assembly sequences
/// (docs/math.md §9; docs/assembly.md).
///
/// Parts. The free bodies of a scene, numbered 0.. in scene order (part k is
/// the k-th body with "fixed": false); at most CP_ASSEMBLY_MAX_PARTS. Fixed
/// bodies and manipulator links are never removed ("fixed bodies stay"); a
/// manipulator holding a part counts in the contact problem like any body.
/// A subassembly is a bitmask of parts (bit k: part k present).
///
/// Stability of a subassembly. A copy of the scene holding the fixed bodies,
/// the manipulators and the present parts, every velocity (bodies and joints)
/// set to zero. Its contacts: generated from the shapes of the bodies present
/// (models/contactgen.h, the scene's tolerances) when the scene's contacts
/// are "auto"; with an explicit list, the listed contacts whose two ends are
/// present. Then contact/stability.h decides it (strong / weak / unstable /
/// stable_undecided).
///
/// Removal. Part p leaves subassembly S along a unit direction d when the
/// straight-line sweep of its shape, translated by s d for 0 < s <= L, meets
/// no other object present (parts of S, fixed bodies, manipulator links)
/// deeper than sweep_penetration:
///   - at s = 0 every contact of p must open or slide: d . n >= -1e-9 for the
///     normals n (pointing into p) of p's touching contacts;
///   - samples at s = h, 2h, ..., L with h = sweep_step or, when that is <= 0,
///     half the smallest dimension of the shapes involved (box: its smallest
///     side, sphere: its radius, cylinder and capsule: min(2 r, length) or
///     2 r) -- two solids of at least that thickness cannot pass through
///     each other between two samples without one sample overlapping them
///     by a quarter of it or more;
///   - L: the distance after which p's bounding sphere has left every other
///     finite shape's bounding sphere along d, plus h (planes are half-spaces
///     and are checked at every sample).
/// Directions: the six axes (+x, -x, +y, -y, +z, -z) and then `directions`
/// more, spread on the unit sphere (a Fibonacci lattice, deterministic).
///
/// Sequence search (backwards, i.e. disassembly): from the whole assembly,
/// remove one part at a time along a collision-free direction keeping only
/// remainders that have an equilibrium (weakly or strongly stable: the LP
/// alone), depth first, parts tried from the highest (against gravity)
/// down, subassemblies memoised in a hash table (so each is explored once).
/// A found sequence is the removal order reversed; each step then gets the
/// full strong / weak verdict of the subassembly it completes. With none,
/// `blocked` is the smallest explored subassembly from which no part could
/// be removed leaving a stable remainder (the whole assembly when it is not
/// stable itself).
///
/// Ownership: results own their arrays (cp_assembly_result_free). Nothing
/// here prints or touches files; planner/store/assembly.h writes results to
/// SQLite.
#ifndef CP_PLANNER_ASSEMBLY_H
#define CP_PLANNER_ASSEMBLY_H

#include <stdint.h>

#include "contact/stability.h"
#include "models/error.h"
#include "models/scene.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CP_ASSEMBLY_MAX_PARTS 64
/// Default work limit of each found step's strong/weak MILPs
/// (cp_assembly_options.stability.node_limit): branch-and-bound nodes of all
/// of them together; the wall-clock limit (600 s) is only a safety cap.
#define CP_ASSEMBLY_STABILITY_NODES 2000

typedef struct cp_assembly_options {
  cp_stability_options stability; ///< for every stability check
  int directions;           ///< extra removal directions beyond the 6 axes
                            ///< (>= 0); default 0
  double sweep_step;        ///< sample spacing (m); <= 0: automatic (above)
  double sweep_penetration; ///< deepest overlap a sweep accepts (m); 1e-5
  double time_limit_s;      ///< whole search; <= 0: none; default 0
  /// Called after each explored subassembly (may be NULL): progress display.
  void (*progress)(void *ctx, int explored, int parts_present);
  void *progress_ctx;
} cp_assembly_options;

cp_assembly_options cp_assembly_defaults(void);

/// Status of a sequence search.
typedef enum cp_assembly_status {
  CP_ASSEMBLY_FOUND = 0,  ///< a sequence is in steps
  CP_ASSEMBLY_NONE,       ///< proven: no stable sequence (blocked says where)
  CP_ASSEMBLY_LIMIT,      ///< the time limit ended the search undecided
  CP_ASSEMBLY_FAILED      ///< a stability check or contact generation failed
} cp_assembly_status;

/// "found", "none", "limit", "failed".
const char *cp_assembly_status_name(cp_assembly_status s);

typedef struct cp_assembly_step {
  int part;                    ///< part placed (index; see header)
  int body;                    ///< its scene body index
  double direction[3];         ///< direction it moves in on its final approach
  cp_stability_kind stability; ///< of the subassembly this step completes
} cp_assembly_step;

/// An explored subassembly (for the database).
typedef struct cp_assembly_node {
  uint64_t mask;
  int stable;      ///< 1 equilibrium exists, 0 none, -1 not checked
  int feasible;    ///< 1 it can be disassembled stably, 0 not
  int dead_end;    ///< 1 no part can be removed leaving a stable remainder
} cp_assembly_node;

typedef struct cp_assembly_result {
  cp_assembly_status status;
  int n_parts;
  int *part_body;             ///< [n_parts] scene body index of each part
  int n_steps;
  cp_assembly_step *steps;    ///< [n_steps] placing order (first placed first)
  int explored;               ///< subassemblies explored by the search
  int stability_checks;       ///< equilibrium LPs run
  int has_blocked;
  uint64_t blocked;           ///< see header comment (when has_blocked)
  int n_nodes;
  cp_assembly_node *nodes;    ///< [n_nodes] every explored subassembly
  double seconds;
  char message[256];          ///< why FAILED / LIMIT; with NONE, set when
                              ///< the complete assembly itself is unstable
} cp_assembly_result;

/// Plans a stable assembly sequence for scene (see header). Returns the
/// status (also in res->status); on FAILED message says why.
cp_assembly_status cp_assembly_plan(const cp_scene *scene,
                                    const cp_assembly_options *opt,
                                    cp_assembly_result *res);

void cp_assembly_result_free(cp_assembly_result *res);

/// Loads a scene for the assembly questions: parsed without the normal-speed
/// check (every question is asked at rest, velocities set to zero) and with
/// at most CP_ASSEMBLY_MAX_PARTS free bodies (else an error at `bodies`).
/// Returns 0, or -1 with err set and *scene zeroed.
int cp_assembly_load_scene(const char *path, cp_scene *scene, cp_error *err);

/// Number of parts of scene (free bodies); part_body [n] (may be NULL)
/// receives their body indices. Returns -1 when there are more than
/// CP_ASSEMBLY_MAX_PARTS.
int cp_assembly_parts(const cp_scene *scene, int *part_body);

/// Stability of the subassembly mask (all parts: ~0) at rest: builds the
/// copy described in the header, its contacts and system, and calls
/// cp_stability_decide (opt NULL: defaults; mu_torsion is filled from the
/// contacts). *sys_out (may be NULL) receives the system (caller frees with
/// cp_system_free) and *view_contacts the copy's contacts with body indices
/// of the ORIGINAL scene (caller frees; may be NULL). Returns 0, or -1 with
/// err set (contact generation failed, memory).
int cp_assembly_stability(const cp_scene *scene, uint64_t mask,
                          const cp_stability_options *opt,
                          cp_stability_result *res, cp_system *sys_out,
                          cp_contact **view_contacts, int *n_view_contacts,
                          cp_error *err);

/// The removal directions used with `extra` more than the six axes:
/// writes 6 + extra unit vectors to dirs [3 (6 + extra)].
void cp_assembly_directions(int extra, double *dirs);

/// 1 when part can leave subassembly mask along unit direction d (sweep
/// described in the header), 0 when blocked, -1 on error (err set).
int cp_assembly_removable(const cp_scene *scene, uint64_t mask, int part,
                          const double *d, const cp_assembly_options *opt,
                          cp_error *err);

#ifdef __cplusplus
}
#endif
#endif
