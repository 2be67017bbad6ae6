/// \file python/abi.c
/// The sizes and field offsets of the structs the Python package mirrors
/// with ctypes (python/complan/_lib.py), so that a header change that moves
/// a field fails the package's import loudly instead of corrupting memory.
/// Compiled into the shared libcomplan only (meson.build); nothing else
/// calls it.
#include <stddef.h>
#include <string.h>

#include "complan.h"
#include "experiments/study/study.h"

long cp_abi_size(const char *name);
int cp_abi_defaults(const char *name, void *out);

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
    OF(cp_fip_options, polish), OF(cp_fip_options, crossover),
    OF(cp_fip_options, face_time_limit), OF(cp_fip_options, check),
    SZ(cp_lemke_reg_options), OF(cp_lemke_reg_options, neps), OF(cp_lemke_reg_options, eps),
    OF(cp_lemke_reg_options, face_time_limit), OF(cp_lemke_reg_options, early_n),
    SZ(cp_certify_options), OF(cp_certify_options, time_limit_s), OF(cp_certify_options, node_limit),
    OF(cp_certify_options, alpha_tol),
    OF(cp_certify_options, second), OF(cp_certify_options, max_cuts), OF(cp_certify_options, check),
    OF(cp_certify_options, clock), OF(cp_certify_options, clock_ctx),
    SZ(cp_solve_options), OF(cp_solve_options, solver), OF(cp_solve_options, lemke),
    OF(cp_solve_options, fip), OF(cp_solve_options, certify), OF(cp_solve_options, extra_restarts),
    OF(cp_solve_options, regularise), OF(cp_solve_options, reg),
    SZ(cp_lemke_reg_report), OF(cp_lemke_reg_report, tried), OF(cp_lemke_reg_report, eps),
    OF(cp_lemke_reg_report, reg_status), OF(cp_lemke_reg_report, reg_pivots),
    OF(cp_lemke_reg_report, support), OF(cp_lemke_reg_report, face),
    SZ(cp_solve_trail), OF(cp_solve_trail, ran), OF(cp_solve_trail, status),
    OF(cp_solve_trail, iterations), OF(cp_solve_trail, route), OF(cp_solve_trail, reg),
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
    OF(cp_world_options, velocity_sliding),
    SZ(cp_step_info), OF(cp_step_info, contacts), OF(cp_step_info, impacts),
    OF(cp_step_info, lcp_solves), OF(cp_step_info, pivots), OF(cp_step_info, warm_started),
    OF(cp_step_info, fallback), OF(cp_step_info, max_penetration), OF(cp_step_info, energy),
    OF(cp_step_info, lcp_reused), OF(cp_step_info, checked), OF(cp_step_info, retried),
    OF(cp_step_info, limits_redone), OF(cp_step_info, islands),
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
    /* scene contacts, the contact problem (complan.Scene.contacts/solve) */
    SZ(cp_contact), OF(cp_contact, a), OF(cp_contact, b), OF(cp_contact, p), OF(cp_contact, n),
    OF(cp_contact, t), OF(cp_contact, o), OF(cp_contact, mu), OF(cp_contact, mu_torsion),
    OF(cp_contact, has_torsion), OF(cp_contact, restitution), OF(cp_contact, depth),
    OF(cp_scene, n_contacts), OF(cp_scene, contacts), OF(cp_scene, n_bodies),
    OF(cp_scene, n_warnings), OF(cp_scene, warnings),
    SZ(cp_contact_diag), OF(cp_contact_diag, jacobian_rank), OF(cp_contact_diag, full_column_rank),
    OF(cp_contact_diag, a_positive_definite), OF(cp_contact_diag, friction_bound),
    OF(cp_contact_diag, within_friction_bound),
    SZ(cp_problem_options), OF(cp_problem_options, solve), OF(cp_problem_options, friction),
    OF(cp_problem_options, cone_k0), OF(cp_problem_options, cone_kmax),
    OF(cp_problem_options, cone_tol), OF(cp_problem_options, rel_tol),
    OF(cp_problem_options, check_unique), OF(cp_problem_options, mu_torsion),
    SZ(cp_problem_result), OF(cp_problem_result, info), OF(cp_problem_result, lcp_size),
    OF(cp_problem_result, nu), OF(cp_problem_result, nc), OF(cp_problem_result, force),
    OF(cp_problem_result, accel), OF(cp_problem_result, udot), OF(cp_problem_result, effort),
    OF(cp_problem_result, outcome), OF(cp_problem_result, diag), OF(cp_problem_result, cone_edges),
    OF(cp_problem_result, cone_violation), OF(cp_problem_result, unique_decided),
    OF(cp_problem_result, unique), OF(cp_problem_result, udot_other), OF(cp_problem_result, soft),
    OF(cp_problem_result, torsion), OF(cp_problem_result, spin_accel),
    SZ(cp_quasistatic_result), OF(cp_quasistatic_result, info),
    OF(cp_quasistatic_result, lcp_size), OF(cp_quasistatic_result, nu),
    OF(cp_quasistatic_result, nc), OF(cp_quasistatic_result, n_obj),
    OF(cp_quasistatic_result, n_l), OF(cp_quasistatic_result, velocity),
    OF(cp_quasistatic_result, force), OF(cp_quasistatic_result, contact_velocity),
    OF(cp_quasistatic_result, soft), OF(cp_quasistatic_result, torsion),
    OF(cp_quasistatic_result, spin), OF(cp_quasistatic_result, effort),
    OF(cp_quasistatic_result, outcome), OF(cp_quasistatic_result, jacobian_rank),
    OF(cp_quasistatic_result, full_row_rank), OF(cp_quasistatic_result, balance_residual),
    /* read by offset from an opaque cp_system */
    SZ(cp_system), OF(cp_system, n_obj), OF(cp_system, n_l), OF(cp_system, n_u),
    OF(cp_system, n_c), OF(cp_system, obj_body), OF(cp_system, joint_manip),
    OF(cp_system, joint_index), OF(cp_system, sliding),
    /* stability (complan.stability) */
    SZ(cp_stability_options), OF(cp_stability_options, depth), OF(cp_stability_options, rel_tol),
    OF(cp_stability_options, energy_tol), OF(cp_stability_options, mip_tol),
    OF(cp_stability_options, time_limit_s), OF(cp_stability_options, try_solve),
    OF(cp_stability_options, milp), OF(cp_stability_options, energy_band),
    OF(cp_stability_options, mu_torsion), OF(cp_stability_options, progress),
    OF(cp_stability_options, progress_ctx), OF(cp_stability_options, node_limit),
    SZ(cp_stability_result), OF(cp_stability_result, kind), OF(cp_stability_result, method),
    OF(cp_stability_result, reason), OF(cp_stability_result, nu), OF(cp_stability_result, nc),
    OF(cp_stability_result, has_equilibrium), OF(cp_stability_result, force),
    OF(cp_stability_result, torsion), OF(cp_stability_result, residual),
    OF(cp_stability_result, has_motion), OF(cp_stability_result, udot),
    OF(cp_stability_result, motion_force), OF(cp_stability_result, lp_solves),
    OF(cp_stability_result, mip_solves), OF(cp_stability_result, acc_tol),
    OF(cp_stability_result, mip_nodes), OF(cp_stability_result, glpk_failures),
    /* assembly sequences: read by offset (complan.assemble) */
    SZ(cp_assembly_options), OF(cp_assembly_options, stability),
    OF(cp_assembly_options, directions), OF(cp_assembly_options, time_limit_s),
    OF(cp_assembly_options, progress), OF(cp_assembly_options, progress_ctx),
    SZ(cp_assembly_result), OF(cp_assembly_result, status), OF(cp_assembly_result, n_parts),
    OF(cp_assembly_result, n_steps), OF(cp_assembly_result, steps),
    OF(cp_assembly_result, explored), OF(cp_assembly_result, stability_checks),
    OF(cp_assembly_result, has_blocked), OF(cp_assembly_result, blocked),
    OF(cp_assembly_result, seconds), OF(cp_assembly_result, message),
    SZ(cp_assembly_step), OF(cp_assembly_step, body), OF(cp_assembly_step, direction),
    OF(cp_assembly_step, stability),
    /* planning, the database, replay (complan.plan, Database, replay) */
    SZ(cp_task), OF(cp_task, scene), OF(cp_task, n_inputs), OF(cp_task, inputs),
    OF(cp_task, duration), OF(cp_task, dt), OF(cp_task, seed),
    SZ(cp_bench_options), OF(cp_bench_options, runs), OF(cp_bench_options, planners),
    OF(cp_bench_options, max_seconds), OF(cp_bench_options, task_path),
    OF(cp_bench_options, progress), OF(cp_bench_options, progress_ctx),
    OF(cp_bench_options, threads), OF(cp_bench_options, db),
    OF(cp_bench_options, remote), OF(cp_bench_options, cancel),
    SZ(cp_task_input), OF(cp_task_input, joint),
    SZ(cp_search_stats), OF(cp_search_stats, expansions), OF(cp_search_stats, iterations),
    OF(cp_search_stats, duplicates), OF(cp_search_stats, rejected), OF(cp_search_stats, steps),
    OF(cp_search_stats, lcp_solves), OF(cp_search_stats, pivots), OF(cp_search_stats, fallbacks),
    OF(cp_search_stats, warm_steps),
    SZ(cp_search_node), OF(cp_search_node, id), OF(cp_search_node, parent),
    OF(cp_search_node, depth), OF(cp_search_node, time), OF(cp_search_node, cost),
    OF(cp_search_node, action), OF(cp_search_node, outcome), OF(cp_search_node, steps),
    OF(cp_search_node, lcp_solves), OF(cp_search_node, pivots), OF(cp_search_node, fallbacks),
    OF(cp_search_node, warm_steps), OF(cp_search_node, flags),
    OF(cp_search_node, goal_distance), OF(cp_search_node, message),
    SZ(cp_plan_options), OF(cp_plan_options, resume), OF(cp_plan_options, has_seed),
    OF(cp_plan_options, seed), OF(cp_plan_options, method), OF(cp_plan_options, max_seconds),
    OF(cp_plan_options, max_nodes), OF(cp_plan_options, batch),
    OF(cp_plan_options, search_batch), OF(cp_plan_options, threads),
    OF(cp_plan_options, run_batch), OF(cp_plan_options, run_batch_ctx),
    OF(cp_plan_options, task_path),
    OF(cp_plan_options, world_options), OF(cp_plan_options, progress),
    OF(cp_plan_options, progress_ctx), OF(cp_plan_options, progress_interval),
    OF(cp_plan_options, cancel), OF(cp_plan_options, clock), OF(cp_plan_options, clock_ctx),
    OF(cp_plan_options, started), OF(cp_plan_options, started_ctx),
    SZ(cp_plan_result), OF(cp_plan_result, status), OF(cp_plan_result, run_id),
    OF(cp_plan_result, plan_id), OF(cp_plan_result, planner), OF(cp_plan_result, resumed),
    OF(cp_plan_result, nodes), OF(cp_plan_result, stats), OF(cp_plan_result, seconds),
    OF(cp_plan_result, session_seconds), OF(cp_plan_result, store_seconds),
    OF(cp_plan_result, cost), OF(cp_plan_result, length), OF(cp_plan_result, best_distance),
    OF(cp_plan_result, best_node), OF(cp_plan_result, goal_node), OF(cp_plan_result, failed),
    OF(cp_plan_result, failed_by),
    SZ(cp_store_run), OF(cp_store_run, id), OF(cp_store_run, task_id),
    OF(cp_store_run, options), OF(cp_store_run, state_size),
    SZ(cp_replay_options), OF(cp_replay_options, verify), OF(cp_replay_options, tolerance),
    OF(cp_replay_options, frame), OF(cp_replay_options, ctx),
    SZ(cp_sequence_run_options), OF(cp_sequence_run_options, path), OF(cp_sequence_run_options, label),
    OF(cp_sequence_run_options, verify), OF(cp_sequence_run_options, html),
    SZ(cp_sequence_run_result), OF(cp_sequence_run_result, json), OF(cp_sequence_run_result, sequence),
    OF(cp_sequence_run_result, parts), OF(cp_sequence_run_result, verified), OF(cp_sequence_run_result, why),
    OF(cp_sequence_run_result, sequence_id), OF(cp_sequence_run_result, store_failed),
    OF(cp_sequence_run_result, store_error), OF(cp_sequence_run_result, plan_error),
    OF(cp_sequence_run_result, page_written),
    SZ(cp_sequence_replay_options), OF(cp_sequence_replay_options, verify),
    OF(cp_sequence_replay_options, tolerance), OF(cp_sequence_replay_options, html),
    OF(cp_sequence_replay_options, title),
    SZ(cp_sequence_replay_result), OF(cp_sequence_replay_result, sequence_id),
    OF(cp_sequence_replay_result, stages), OF(cp_sequence_replay_result, plans),
    OF(cp_sequence_replay_result, steps), OF(cp_sequence_replay_result, duration),
    OF(cp_sequence_replay_result, max_deviation), OF(cp_sequence_replay_result, verified),
    OF(cp_sequence_replay_result, chained), OF(cp_sequence_replay_result, first_plan),
    OF(cp_sequence_replay_result, frames), OF(cp_sequence_replay_result, message),
    SZ(cp_replay_frame), OF(cp_replay_frame, step), OF(cp_replay_frame, plan_step),
    OF(cp_replay_frame, action), OF(cp_replay_frame, values), OF(cp_replay_frame, n_values),
    OF(cp_replay_frame, time), OF(cp_replay_frame, state), OF(cp_replay_frame, n),
    OF(cp_replay_frame, n_contacts), OF(cp_replay_frame, contacts),
    SZ(cp_replay_result), OF(cp_replay_result, steps), OF(cp_replay_result, duration),
    OF(cp_replay_result, max_deviation), OF(cp_replay_result, max_plan_step),
    OF(cp_replay_result, compared), OF(cp_replay_result, verified),
    OF(cp_replay_result, first_plan_step), OF(cp_replay_result, first_entry),
    OF(cp_replay_result, first_where), OF(cp_replay_result, first_deviation),
    OF(cp_replay_result, message),
    SZ(cp_viewer_tree), OF(cp_viewer_tree, n), OF(cp_viewer_tree, points),
    OF(cp_viewer_tree, parent), OF(cp_viewer_tree, n_path), OF(cp_viewer_tree, path),
    SZ(cp_viewer_options), OF(cp_viewer_options, title), OF(cp_viewer_options, has_goal),
    OF(cp_viewer_options, goal_body), OF(cp_viewer_options, goal_centre),
    OF(cp_viewer_options, goal_tolerance), OF(cp_viewer_options, tree),
    OF(cp_task, goal), OF(cp_task_goal, body), OF(cp_task_goal, position),
    OF(cp_task_goal, tolerance),
    SZ(cp_assembly_anim_options), OF(cp_assembly_anim_options, frames_per_step),
    OF(cp_assembly_anim_options, step_seconds), OF(cp_assembly_anim_options, distance),
    OF(cp_assembly_anim_options, title),
    SZ(cp_paper_options), OF(cp_paper_options, seed), OF(cp_paper_options, problems),
    OF(cp_paper_options, jobs), OF(cp_paper_options, time_limit_s),
    OF(cp_paper_options, unique_time_limit_s), OF(cp_paper_options, node_limit),
    OF(cp_paper_options, unique_node_limit), OF(cp_paper_options, unique_max_cuts),
    OF(cp_paper_options, unique_lemke_covers), OF(cp_paper_options, persist_restarts),
    OF(cp_paper_options, lemke_max_pivots), OF(cp_paper_options, lemke_restarts),
    OF(cp_paper_options, fip_max_iter), OF(cp_paper_options, fip_gap_tol),
    OF(cp_paper_options, write_data), OF(cp_paper_options, mip_all),
    OF(cp_paper_options, spread), OF(cp_paper_options, cancel),
    SZ(cp_paper_study),
    {"CP_EXPAND_COUNT", CP_EXPAND_COUNT}, OF(cp_state_layout, n),
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

/// Writes the defaults of struct `name` (its cp_*_defaults()) into out (a
/// buffer of cp_abi_size(name) bytes), for the structs the package reads
/// and writes by offset rather than through a mirror. 0, or -1 for a name
/// without defaults here.
int cp_abi_defaults(const char *name, void *out) {
  if (!strcmp(name, "cp_assembly_options")) {
    cp_assembly_options o = cp_assembly_defaults();
    memcpy(out, &o, sizeof o);
    return 0;
  }
  return -1;
}
