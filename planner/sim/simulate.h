/// \file planner/sim/simulate.h
/// A whole simulation run over a cp_world (planner/sim/world.h): steps for a
/// duration, with the totals `complan simulate` reports (docs/simulate.md)
/// and a per-frame hook for recorders (the CSV writer, a viewer).
///
/// Frames: `frame` (when not NULL) is called with the world after creation
/// (step 0, time 0) and after every `every`-th step, and after the last
/// step if it was not one of those. Inside the call the world's state
/// (cp_world_get_state, cp_world_scene) and the last step's contacts with
/// their forces (cp_world_contacts) are valid; a recorder copies what it
/// needs. Returning non-zero stops the run (status CP_WORLD_BAD_INPUT,
/// message "stopped by the frame recorder").
///
/// Energy: max_step_increase is the largest increase of the total energy
/// over one step (0 if it never increased); with efforts applied it
/// includes their work.
#ifndef CP_PLANNER_SIMULATE_H
#define CP_PLANNER_SIMULATE_H

#include <stdint.h>

#include "planner/sim/world.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*cp_sim_frame_fn)(const cp_world *w, long step, void *user);
typedef void (*cp_sim_progress_fn)(long step, long steps, void *user);

typedef struct cp_sim_options {
  double duration;            ///< simulated time (s), finite, >= 0; default 1
  int every;                  ///< frame period in steps, >= 1; default 1
  cp_sim_frame_fn frame;      ///< may be NULL
  cp_sim_progress_fn progress;///< may be NULL; called about every 1/20 s
  void *user;                 ///< passed to frame and progress
} cp_sim_options;

cp_sim_options cp_sim_defaults(void);

typedef struct cp_sim_result {
  cp_world_status status;     ///< CP_WORLD_OK, or why the run stopped
  char message[512];          ///< "" or what stopped it (step, body, ...)
  long steps;                 ///< steps taken
  double time_us_per_step;    ///< wall time per step (microseconds)
  long fallback_steps;        ///< acceleration steps taken by the velocity
                              ///< stepper
  long lcp_pivots;            ///< Lemke pivots over the run
  long warm_steps;            ///< steps whose main LCP started warm
  long lcp_solves;
  long checked_steps;         ///< steps that passed the per-step check
  long retried_steps;         ///< steps taken again after a failed attempt
  double max_penetration;     ///< deepest overlap after any step (m)
  double energy_initial, energy_final, max_step_increase;
  uint64_t hash;              ///< cp_world_hash at the end
  cp_step_profile profile;    ///< the steps' phase timings summed
                              ///< (cp_world_profile; zeros unless the world
                              ///< was created with opt.profile)
} cp_sim_result;

/// Runs round(duration / dt) steps of w. Returns res->status.
cp_world_status cp_simulate(cp_world *w, const cp_sim_options *opt,
                            cp_sim_result *res);

#ifdef __cplusplus
}
#endif
#endif
