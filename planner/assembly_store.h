/// \file planner/assembly_store.h
/// Writes an assembly-sequence search (planner/assembly.h) to the SQLite
/// database (default complan.sqlite). The tables carry the `assembly_` prefix
/// and are created IF NOT EXISTS, so they live beside the planner's own
/// tables in the same file; this module never sets PRAGMA user_version (the
/// planner's store owns the schema version). WAL mode, foreign keys on, one
/// transaction per run: a run is stored whole or not at all.
///
///   assembly_runs(id, created, scene, status, parts, directions, explored,
///                 stability_checks, seconds, blocked)
///   assembly_subassemblies(run_id -> assembly_runs.id, mask, parts, n_parts,
///                 stable, feasible, dead_end)       one row per explored mask
///   assembly_steps(run_id -> assembly_runs.id, step, part, dx, dy, dz,
///                 stability)                        the placing order
///
/// docs/assembly.md gives every column's meaning.
#ifndef CP_PLANNER_ASSEMBLY_STORE_H
#define CP_PLANNER_ASSEMBLY_STORE_H

#include <stdint.h>

#include "models/error.h"
#include "models/scene.h"
#include "planner/assembly.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Stores one run. scene_label names the scene (its path). directions is
/// the number of candidate directions used (6 + extra). Returns 0 and the
/// new run's id in *run_id (may be NULL), or -1 with err set (where = the
/// database path's SQL step, message SQLite's).
int cp_assembly_store(const char *db_path, const char *scene_label,
                      const cp_scene *scene, const cp_assembly_result *res,
                      int directions, int64_t *run_id, cp_error *err);

/// Names of the parts in mask as a JSON array text ("[\"b0\",\"b1\"]"),
/// malloc'd; NULL when out of memory.
char *cp_assembly_mask_names(const cp_scene *scene, const cp_assembly_result *res,
                             uint64_t mask);

#ifdef __cplusplus
}
#endif
#endif
