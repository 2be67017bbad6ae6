/// \file python/abi.c
/// The sizes and field offsets of the structs the Python package mirrors
/// with ctypes (python/complan/_lib.py), so that a header change that moves
/// a field fails the package's import loudly instead of corrupting memory.
/// Compiled into the shared libcomplan only (meson.build); nothing else
/// calls it.
#include <stddef.h>
#include <string.h>

#include "complan.h"

long cp_abi_size(const char *name);

#define SZ(T) {#T, (long)sizeof(T)}
#define OF(T, f) {#T "." #f, (long)offsetof(T, f)}

static const struct {
  const char *name;
  long value;
} abi_table[] = {
    SZ(cp_error), OF(cp_error, code), OF(cp_error, where), OF(cp_error, msg),
    SZ(cp_lcp), OF(cp_lcp, n), OF(cp_lcp, M), OF(cp_lcp, q), OF(cp_lcp, name),
    SZ(cp_check_options), OF(cp_check_options, rel_tol),
    SZ(cp_lemke_options), OF(cp_lemke_options, cover), OF(cp_lemke_options, max_pivots),
    OF(cp_lemke_options, restarts), OF(cp_lemke_options, seed), OF(cp_lemke_options, pivot_tol),
    OF(cp_lemke_options, lexicographic), OF(cp_lemke_options, small_n),
    OF(cp_lemke_options, check), OF(cp_lemke_options, rescue),
    SZ(cp_fip_options), OF(cp_fip_options, max_iter), OF(cp_fip_options, gap_tol),
    OF(cp_fip_options, beta), OF(cp_fip_options, zeta), OF(cp_fip_options, kappa),
    OF(cp_fip_options, rho), OF(cp_fip_options, sigma), OF(cp_fip_options, nfp_tol),
    OF(cp_fip_options, polish), OF(cp_fip_options, crossover), OF(cp_fip_options, check),
    SZ(cp_certify_options), OF(cp_certify_options, time_limit_s), OF(cp_certify_options, alpha_tol),
    OF(cp_certify_options, second), OF(cp_certify_options, max_cuts), OF(cp_certify_options, check),
    SZ(cp_solve_options), OF(cp_solve_options, solver), OF(cp_solve_options, lemke),
    OF(cp_solve_options, fip), OF(cp_solve_options, certify), OF(cp_solve_options, extra_restarts),
    SZ(cp_lcp_info), OF(cp_lcp_info, status), OF(cp_lcp_info, solver), OF(cp_lcp_info, iterations),
    OF(cp_lcp_info, starts), OF(cp_lcp_info, first_start_iterations),
    OF(cp_lcp_info, complementarity), OF(cp_lcp_info, residual), OF(cp_lcp_info, min_z),
    OF(cp_lcp_info, min_w), OF(cp_lcp_info, polished), OF(cp_lcp_info, reason),
    SZ(cp_certify_result), OF(cp_certify_result, alpha), OF(cp_certify_result, has_second),
    OF(cp_certify_result, second_decided), OF(cp_certify_result, mip_solves),
    OF(cp_certify_result, q_cleaned),
    SZ(cp_world_options), OF(cp_world_options, stepper), OF(cp_world_options, dt),
    OF(cp_world_options, solve), OF(cp_world_options, warm_start), OF(cp_world_options, compliance),
    OF(cp_world_options, allow_fallback), OF(cp_world_options, check),
    OF(cp_world_options, impact_memo), OF(cp_world_options, profile),
    SZ(cp_step_info), OF(cp_step_info, contacts), OF(cp_step_info, impacts),
    OF(cp_step_info, lcp_solves), OF(cp_step_info, pivots), OF(cp_step_info, warm_started),
    OF(cp_step_info, fallback), OF(cp_step_info, max_penetration), OF(cp_step_info, energy),
    OF(cp_step_info, lcp_reused), OF(cp_step_info, checked), OF(cp_step_info, retried),
    OF(cp_step_info, limits_redone),
    SZ(cp_step_profile), OF(cp_step_profile, collide), OF(cp_step_profile, constraints),
    OF(cp_step_profile, assembly), OF(cp_step_profile, solve), OF(cp_step_profile, check),
    OF(cp_step_profile, integrate), OF(cp_step_profile, total),
    SZ(cp_sim_options), OF(cp_sim_options, duration), OF(cp_sim_options, every),
    OF(cp_sim_options, frame), OF(cp_sim_options, progress), OF(cp_sim_options, user),
    SZ(cp_sim_result), OF(cp_sim_result, status), OF(cp_sim_result, message),
    OF(cp_sim_result, steps), OF(cp_sim_result, time_us_per_step),
    OF(cp_sim_result, fallback_steps), OF(cp_sim_result, lcp_pivots),
    OF(cp_sim_result, warm_steps), OF(cp_sim_result, lcp_solves),
    OF(cp_sim_result, checked_steps), OF(cp_sim_result, retried_steps),
    OF(cp_sim_result, max_penetration), OF(cp_sim_result, energy_initial),
    OF(cp_sim_result, energy_final), OF(cp_sim_result, max_step_increase),
    OF(cp_sim_result, hash), OF(cp_sim_result, profile),
    SZ(cp_ref), OF(cp_ref, body), OF(cp_ref, manip), OF(cp_ref, link),
    SZ(cp_world_contact), OF(cp_world_contact, a), OF(cp_world_contact, b),
    OF(cp_world_contact, p), OF(cp_world_contact, n), OF(cp_world_contact, force),
    OF(cp_world_contact, depth),
    SZ(cp_scene_options), OF(cp_scene_options, check_normal_speed),
    OF(cp_scene_options, files),
    /* held as opaque buffers of this size */
    SZ(cp_scene), SZ(cp_state_layout),
};

/// sizeof(T) for name "T", offsetof(T, f) for "T.f"; -1 when the table has
/// no such entry.
long cp_abi_size(const char *name) {
  for (size_t i = 0; i < sizeof abi_table / sizeof *abi_table; i++)
    if (!strcmp(abi_table[i].name, name)) return abi_table[i].value;
  return -1;
}
