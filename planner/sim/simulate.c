// A simulation run; see planner/sim/simulate.h.
#include "planner/sim/simulate.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "models/clock.h"

cp_sim_options cp_sim_defaults(void) {
  cp_sim_options o;
  memset(&o, 0, sizeof o);
  o.duration = 1.0;
  o.every = 1;
  return o;
}

cp_world_status cp_simulate(cp_world *w, const cp_sim_options *opt,
                            cp_sim_result *res) {
  cp_sim_options def = cp_sim_defaults();
  if (!opt) opt = &def;
  memset(res, 0, sizeof *res);
  res->energy_initial = res->energy_final = cp_world_energy(w);
  res->hash = cp_world_hash(w);
  if (!(opt->duration >= 0) || !isfinite(opt->duration) || opt->every < 1) {
    res->status = CP_WORLD_BAD_INPUT;
    snprintf(res->message, sizeof res->message,
             "duration must be finite and >= 0 and every >= 1");
    return res->status;
  }
  const double h = cp_world_dt(w);
  const long steps = (long)llround(opt->duration / h);
  if (opt->frame && opt->frame(w, 0, opt->user)) {
    res->status = CP_WORLD_BAD_INPUT;
    snprintf(res->message, sizeof res->message,
             "stopped by the frame recorder");
    return res->status;
  }
  double e = res->energy_initial, t0 = cp_clock_now(), tick = t0;
  for (long k = 1; k <= steps; ++k) {
    cp_step_info info;
    cp_world_status st = cp_world_step(w, &info);
    if (st != CP_WORLD_OK) {
      res->status = st;
      snprintf(res->message, sizeof res->message, "step %ld: %s", k,
               cp_world_message(w));
      break;
    }
    res->steps = k;
    res->fallback_steps += info.fallback;
    res->lcp_pivots += info.pivots;
    res->lcp_solves += info.lcp_solves;
    res->warm_steps += info.warm_started;
    res->checked_steps += info.checked;
    res->retried_steps += info.retried;
    if (info.max_penetration > res->max_penetration)
      res->max_penetration = info.max_penetration;
    if (info.energy - e > res->max_step_increase)
      res->max_step_increase = info.energy - e;
    e = info.energy;
    const cp_step_profile p = cp_world_profile(w);
    res->profile.collide += p.collide;
    res->profile.constraints += p.constraints;
    res->profile.assembly += p.assembly;
    res->profile.solve += p.solve;
    res->profile.check += p.check;
    res->profile.integrate += p.integrate;
    res->profile.total += p.total;
    if (opt->frame && (k % opt->every == 0 || k == steps) &&
        opt->frame(w, k, opt->user)) {
      res->status = CP_WORLD_BAD_INPUT;
      snprintf(res->message, sizeof res->message,
               "stopped by the frame recorder");
      break;
    }
    if (opt->progress && (k & 63) == 0) {
      double t = cp_clock_now();
      if (t - tick >= 0.05) {
        opt->progress(k, steps, opt->user);
        tick = t;
      }
    }
  }
  double t1 = cp_clock_now();
  res->time_us_per_step = res->steps ? 1e6 * (t1 - t0) / (double)res->steps : 0;
  res->energy_final = e;
  res->hash = cp_world_hash(w);
  return res->status;
}
