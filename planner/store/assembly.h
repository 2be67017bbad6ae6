/// \file planner/store/assembly.h
/// Writes an assembly-sequence search (planner/assembly/assembly.h) to the SQLite
/// database (default complan.sqlite). The tables carry the `assembly_` prefix
/// and belong to the planner store's schema (planner/store/store.h): the file is
/// opened through cp_store_open, so it is stamped, versioned, migrated and
/// checked like any complan database, and another application's file or
/// another version is refused untouched. One transaction per run: a run is
/// stored whole or not at all.
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
#include "planner/assembly/assembly.h"

#ifdef __cplusplus
extern "C" {
#endif

/// Stores one run. scene_label names the scene (its path). directions is
/// the number of candidate directions used (6 + extra). Returns 0 and the
/// new run's id in *run_id (may be NULL), or -1 with err set: where
/// "bad_file" when the file is refused (not complan's, another version,
/// damaged, not a regular file), "open" when it cannot be opened or
/// prepared, else the SQL step; the message names the file.
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
