/// \file planner/plan/pool.h
/// Inside planner/plan: the workers that simulate a search's batches
/// (cp_plan_world_set_threads). Not a public header.
#ifndef CP_PLANNER_PLAN_POOL_H
#define CP_PLANNER_PLAN_POOL_H

#include "planner/plan/plan.h"

typedef struct cp_plan_pool cp_plan_pool;

/// threads - 1 workers, each with a world of task made like
/// cp_plan_world_create(task, warm_start). 0, or -1 with err.
int cp_plan_pool_create(const cp_task *task, int warm_start, int threads,
                        cp_plan_pool **out, cp_error *err);
void cp_plan_pool_destroy(cp_plan_pool *pool);
/// Runs the n jobs on the workers and on the calling thread with `own`
/// (the caller's world); returns when all have run. 0 always (a job's
/// failure is its rc). meanwhile (may be NULL) runs on the calling thread
/// once the workers have the jobs, before it takes any itself.
int cp_plan_pool_run(cp_plan_pool *pool, cp_plan_world *own,
                     cp_expand_job *jobs, int n,
                     const cp_batch_meanwhile *meanwhile);
/// The same in two halves, so that two batches may be out at once
/// (pipelined batches): start hands the jobs to the workers and returns a
/// handle (0 or 1; -1 when two batches are out already); wait runs jobs
/// of that batch on the calling thread, then of the other batch out (one
/// at a time, while its own batch's last jobs run elsewhere), and returns
/// 0 when all of its batch have run (-1: no such batch). The workers take
/// jobs of the older batch first.
int cp_plan_pool_start(cp_plan_pool *pool, cp_expand_job *jobs, int n);
int cp_plan_pool_wait(cp_plan_pool *pool, cp_plan_world *own, int handle,
                      const cp_batch_meanwhile *meanwhile);
/// Hands the search's budget (NULL: none) to every worker's world.
void cp_plan_pool_set_budget(cp_plan_pool *pool,
                             const cp_search_budget *budget);
/// The impact memo of every worker's world (cp_plan_world_set_impact_memo).
int cp_plan_pool_set_impact_memo(cp_plan_pool *pool, int slots);
/// cp_plan_world_set_memo_pivots of every worker's world.
void cp_plan_pool_set_memo_pivots(cp_plan_pool *pool, int on);
/// cp_plan_world_clear_impact_memo of every worker's world.
void cp_plan_pool_clear_impact_memo(cp_plan_pool *pool);
/// Times, or not, the expansions of every worker's world
/// (cp_plan_world_set_timing).
void cp_plan_pool_set_timing(cp_plan_pool *pool, int on);
/// Simulation seconds of the workers' worlds, summed.
double cp_plan_pool_seconds(const cp_plan_pool *pool);

#endif
