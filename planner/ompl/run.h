/* The OMPL adapter's C entry points (planner/ompl/run.cpp), for the command
 * line: `complan plan --method ompl:NAME` and OMPL planners in
 * `--benchmark --planners`. Not installed: C++ programs use
 * planner/ompl/ompl.hpp; the executable registers these with the command
 * line only when it is built with OMPL (planner/cli/main.c). */
#ifndef CP_PLANNER_OMPL_RUN_H
#define CP_PLANNER_OMPL_RUN_H

#include <stdint.h>

#include "models/error.h"
#include "planner/plan/plan.h"
#include "planner/store/store.h"

#ifdef __cplusplus
extern "C" {
#endif

/* "ompl:RRT", "ompl:EST", "ompl:KPIECE1", "ompl:PDST", "ompl:SST", NULL. */
const char *const *cp_ompl_methods(void);

/* Plans task with OMPL's planner `method` (one of cp_ompl_methods) through
 * the adapter and stores the run (and its plan, re-simulated by complan's
 * expansion) in st, like cp_plan_task: opt's seed (OMPL's generator is
 * seeded once per process, before its first use), time and node limits
 * (nodes: actions simulated) and cancel flag are used; resume is not (an
 * OMPL run keeps nothing to resume from: CP_PLAN_BAD_INPUT). */
cp_plan_status cp_ompl_plan_task(cp_store *st, const cp_task *task,
                                 const char *method,
                                 const cp_plan_options *opt,
                                 cp_plan_result *res, cp_error *err);

/* Benchmark runs of OMPL planners (methods: NULL-terminated, each one of
 * cp_ompl_methods) in OMPL's tables, bo->runs each with seeds task->seed +
 * r: into experiment *experiment_id when it is > 0 (made by
 * cp_plan_benchmark; seconds_before is that call's time, added to the
 * experiment's total), else into a new one (its id in *experiment_id).
 * Planner rows are named as OMPL names them ("control_KPIECE1") with
 * OMPL's parameters as settings. Returns like cp_plan_benchmark. */
cp_plan_status cp_ompl_benchmark(cp_store *st, const cp_task *task,
                                 const char *const *methods,
                                 const cp_bench_options *bo,
                                 double seconds_before,
                                 int64_t *experiment_id, cp_error *err);

#ifdef __cplusplus
}
#endif
#endif
