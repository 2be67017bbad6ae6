"""The shared libcomplan, its functions' signatures and the ctypes mirrors of
the C structs the package fills or reads (docs/python.md).

Loading: the file named by the environment variable COMPLAN_LIB (a build
tree's libcomplan.so), else the libcomplan.so installed next to this
package, else the system's. Every mirrored struct is checked against the
library's own sizes and offsets (cp_abi_size, python/abi.c) at import: a
header change that moves a field fails here, loudly.
"""
import ctypes
import ctypes.util
import os
from ctypes import (CFUNCTYPE, POINTER, Structure, c_char, c_char_p, c_double,
                    c_int, c_int64, c_long, c_longlong, c_size_t, c_ubyte, c_uint64,
                    c_void_p)

ENV_VAR = "COMPLAN_LIB"


class Error(Exception):
    """A complan failure: `code` is the error kind's name ("input", "io",
    "nomem", "overlap", "unsupported", "numerical", or a world status such
    as "penetration"), `where` the JSON path or line ("" when none),
    `message` the C message, `path` the file concerned (or None)."""

    def __init__(self, code, message, where="", path=None):
        self.code = code
        self.where = where
        self.message = message
        self.path = path
        parts = [p for p in (path, where) if p]
        super().__init__(": ".join(parts + [message]) + " [" + code + "]")


def _candidates():
    env = os.environ.get(ENV_VAR)
    if env:
        return [env], True
    here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libcomplan.so")
    found = [here] if os.path.exists(here) else []
    system = ctypes.util.find_library("complan")
    if system:
        found.append(system)
    return found, False


def _load():
    paths, from_env = _candidates()
    if not paths:
        raise ImportError(
            "complan: no libcomplan.so next to the package and none on the system; "
            "set %s to a build tree's libcomplan.so (docs/python.md)" % ENV_VAR)
    errors = []
    for p in paths:
        try:
            return ctypes.CDLL(p), p
        except OSError as e:
            errors.append("%s: %s" % (p, e))
    where = " (from %s)" % ENV_VAR if from_env else ""
    raise ImportError("complan: cannot load libcomplan%s: %s" % (where, "; ".join(errors)))


lib, lib_path = _load()

# The command-line tool runs OpenBLAS on one thread (planner/cli/cli.c): at
# complan's sizes BLAS threads cost more than they give, and the summation
# order they choose changes the last bits of an answer. Python does the
# same, so that its answers equal the CLI's bit for bit (docs/python.md).
# The setting is OpenBLAS's own and process-wide: it also applies to numpy
# when numpy uses the same OpenBLAS.
try:
    lib.openblas_set_num_threads.argtypes = [ctypes.c_int]
    lib.openblas_set_num_threads.restype = None
    lib.openblas_set_num_threads(1)
except AttributeError:  # a BLAS that is not OpenBLAS: nothing to set
    pass


try:
    _abi_size = lib.cp_abi_size
    _abi_size.restype = c_long
    _abi_size.argtypes = [c_char_p]
except AttributeError:
    raise ImportError("complan: %s has no cp_abi_size: not the shared library "
                      "meson builds for Python (meson.build)" % lib_path) from None

# --- struct mirrors (field order and types as in the C headers) -------------

class CError(Structure):  # models/error.h
    _fields_ = [("code", c_int), ("where", c_char * 192), ("msg", c_char * 384)]


class CLcp(Structure):  # contact/lcp.h
    _fields_ = [("n", c_int), ("M", POINTER(c_double)), ("q", POINTER(c_double)),
                ("name", c_void_p)]


class CCheckOptions(Structure):
    _fields_ = [("rel_tol", c_double)]


class CLemkeOptions(Structure):  # contact/lemke.h
    _fields_ = [("cover", c_void_p), ("max_pivots", c_int), ("restarts", c_int),
                ("seed", c_uint64), ("pivot_tol", c_double), ("lexicographic", c_int),
                ("small_n", c_int), ("check", CCheckOptions), ("rescue", c_int),
                ("classic", c_int)]


class CFipOptions(Structure):  # contact/fip.h
    _fields_ = [("max_iter", c_int), ("gap_tol", c_double), ("beta", c_double),
                ("zeta", c_double), ("kappa", c_double), ("rho", c_double),
                ("sigma", c_double), ("nfp_tol", c_double), ("polish", c_int),
                ("crossover", c_int), ("face_time_limit", c_double),
                ("check", CCheckOptions), ("poll", c_void_p), ("poll_ctx", c_void_p)]


class CCertifyOptions(Structure):  # contact/certify.h
    _fields_ = [("time_limit_s", c_double), ("node_limit", c_long), ("alpha_tol", c_double), ("second", c_int),
                ("max_cuts", c_int), ("check", CCheckOptions), ("clock", c_void_p),
                ("clock_ctx", c_void_p), ("lemke_starts", c_int)]


class CLemkeRegOptions(Structure):  # contact/lemke.h
    _fields_ = [("neps", c_int), ("eps", c_double * 8),  # CP_LEMKE_REG_MAX_EPS
                ("face_time_limit", c_double), ("early_n", c_int)]


class CSolveOptions(Structure):  # contact/solve.h
    _fields_ = [("solver", c_int), ("lemke", CLemkeOptions), ("fip", CFipOptions),
                ("certify", CCertifyOptions), ("extra_restarts", c_int),
                ("regularise", c_int), ("reg", CLemkeRegOptions)]


class CLemkeRegReport(Structure):  # contact/lemke.h
    _fields_ = [("tried", c_int), ("eps", c_double), ("reg_status", c_int * 8),
                ("reg_pivots", c_int * 8), ("support", c_int * 8), ("face", c_int * 8)]


class CSolveTrail(Structure):  # contact/solve.h
    _fields_ = [("ran", c_int * 4), ("status", c_int * 4), ("iterations", c_int * 4),
                ("route", c_int), ("reg", CLemkeRegReport)]


class CLcpInfo(Structure):  # contact/lcp.h
    _fields_ = [("status", c_int), ("solver", c_int), ("iterations", c_int),
                ("starts", c_int), ("first_start_iterations", c_int),
                ("complementarity", c_double), ("residual", c_double),
                ("min_z", c_double), ("min_w", c_double), ("polished", c_int),
                ("reason", c_char * 160)]


class CCertifyResult(Structure):  # contact/certify.h
    _fields_ = [("alpha", c_double), ("has_second", c_int), ("second_decided", c_int),
                ("mip_solves", c_int), ("q_cleaned", c_int), ("mip_overruled", c_int)]


class CSceneOptions(Structure):  # models/scene.h
    _fields_ = [("check_normal_speed", c_int), ("files", c_void_p)]


class CWorldOptions(Structure):  # planner/sim/world.h
    _fields_ = [("stepper", c_int), ("dt", c_double), ("solve", CSolveOptions),
                ("warm_start", c_int), ("compliance", c_double),
                ("allow_fallback", c_int), ("check", c_int), ("impact_memo", c_int),
                ("profile", c_int), ("velocity_sliding", c_int),
                ("reserve", c_int)]


class CStepInfo(Structure):  # planner/sim/world.h
    _fields_ = [("contacts", c_int), ("impacts", c_int), ("lcp_solves", c_int),
                ("pivots", c_int), ("warm_started", c_int), ("fallback", c_int),
                ("max_penetration", c_double), ("energy", c_double),
                ("lcp_reused", c_int), ("checked", c_int), ("retried", c_int),
                ("limits_redone", c_int), ("islands", c_int)]


class CStepProfile(Structure):  # planner/sim/world.h
    _fields_ = [(k, c_double) for k in ("collide", "constraints", "assembly", "solve",
                                        "check", "integrate", "total")]


class CSimOptions(Structure):  # planner/sim/simulate.h
    _fields_ = [("duration", c_double), ("every", c_int), ("frame", c_void_p),
                ("progress", c_void_p), ("user", c_void_p)]


SIM_FRAME = CFUNCTYPE(c_int, c_void_p, c_long, c_void_p)


class CSimResult(Structure):  # planner/sim/simulate.h
    _fields_ = [("status", c_int), ("message", c_char * 512), ("steps", c_long),
                ("time_us_per_step", c_double), ("fallback_steps", c_long),
                ("lcp_pivots", c_long), ("warm_steps", c_long), ("lcp_solves", c_long),
                ("checked_steps", c_long), ("retried_steps", c_long),
                ("max_penetration", c_double), ("energy_initial", c_double),
                ("energy_final", c_double), ("max_step_increase", c_double),
                ("hash", c_uint64), ("profile", CStepProfile)]


class CRef(Structure):  # models/scene.h
    _fields_ = [("body", c_int), ("manip", c_int), ("link", c_int)]


class CWorldContact(Structure):  # planner/sim/world.h
    _fields_ = [("a", CRef), ("b", CRef), ("p", c_double * 3), ("n", c_double * 3),
                ("force", c_double * 3), ("depth", c_double)]


class CContact(Structure):  # models/scene.h
    _fields_ = [("a", CRef), ("b", CRef), ("p", c_double * 3), ("n", c_double * 3),
                ("t", c_double * 3), ("o", c_double * 3), ("mu", c_double),
                ("mu_torsion", c_double), ("has_torsion", c_int), ("restitution", c_double),
                ("depth", c_double)]


class CContactDiag(Structure):  # contact/dynamics.h
    _fields_ = [("jacobian_rank", c_int), ("full_column_rank", c_int),
                ("a_positive_definite", c_int), ("friction_bound", c_double),
                ("within_friction_bound", c_int)]


class CProblemOptions(Structure):  # contact/problem.h
    _fields_ = [("solve", CSolveOptions), ("friction", c_int), ("cone_k0", c_int),
                ("cone_kmax", c_int), ("cone_tol", c_double), ("rel_tol", c_double),
                ("check_unique", c_int), ("mu_torsion", POINTER(c_double))]


class CProblemResult(Structure):  # contact/problem.h
    _fields_ = [("info", CLcpInfo), ("lcp_size", c_int), ("nu", c_int), ("nc", c_int),
                ("force", POINTER(c_double)), ("accel", POINTER(c_double)),
                ("udot", POINTER(c_double)), ("effort", POINTER(c_double)),
                ("outcome", POINTER(c_int)), ("diag", CContactDiag), ("cone_edges", c_int),
                ("cone_violation", c_double), ("unique_decided", c_int), ("unique", c_int),
                ("udot_other", POINTER(c_double)), ("soft", POINTER(c_ubyte)),
                ("torsion", POINTER(c_double)), ("spin_accel", POINTER(c_double))]


class CQuasistaticResult(Structure):  # contact/quasistatic.h
    _fields_ = [("info", CLcpInfo), ("lcp_size", c_int), ("nu", c_int), ("nc", c_int),
                ("n_obj", c_int), ("n_l", c_int), ("velocity", POINTER(c_double)),
                ("force", POINTER(c_double)), ("contact_velocity", POINTER(c_double)),
                ("soft", POINTER(c_ubyte)), ("torsion", POINTER(c_double)),
                ("spin", POINTER(c_double)), ("effort", POINTER(c_double)),
                ("outcome", POINTER(c_int)), ("jacobian_rank", c_int),
                ("full_row_rank", c_int), ("balance_residual", c_double)]


class CStabilityOptions(Structure):  # contact/stability.h
    _fields_ = [("depth", c_int), ("rel_tol", c_double), ("energy_tol", c_double),
                ("mip_tol", c_double), ("time_limit_s", c_double), ("try_solve", c_int),
                ("milp", c_int), ("energy_band", c_double), ("mu_torsion", POINTER(c_double)),
                ("progress", c_void_p), ("progress_ctx", c_void_p), ("node_limit", c_long)]


class CStabilityResult(Structure):  # contact/stability.h
    _fields_ = [("kind", c_int), ("method", c_char_p), ("reason", c_char * 200),
                ("nu", c_int), ("nc", c_int), ("has_equilibrium", c_int),
                ("force", POINTER(c_double)), ("torsion", POINTER(c_double)),
                ("residual", c_double), ("has_motion", c_int), ("udot", POINTER(c_double)),
                ("motion_force", POINTER(c_double)), ("lp_solves", c_int),
                ("mip_solves", c_int), ("acc_tol", c_double), ("mip_nodes", c_long),
                ("glpk_failures", c_int)]


class CSearchStats(Structure):  # planner/search/search.h
    _fields_ = [("expansions", c_long), ("iterations", c_long), ("duplicates", c_long),
                ("rejected", c_long), ("steps", c_longlong), ("lcp_solves", c_longlong),
                ("pivots", c_longlong), ("fallbacks", c_longlong), ("warm_steps", c_longlong)]


class CSearchNode(Structure):  # planner/search/search.h
    _fields_ = [("id", c_long), ("parent", c_long), ("depth", c_int), ("time", c_double),
                ("cost", c_double), ("action", c_long), ("outcome", c_int), ("steps", c_int),
                ("lcp_solves", c_int), ("pivots", c_int), ("fallbacks", c_int),
                ("warm_steps", c_int), ("flags", c_int), ("goal_distance", c_double),
                ("message", c_char_p)]


PLAN_PROGRESS = CFUNCTYPE(None, c_void_p, c_void_p)
PLAN_CLOCK = CFUNCTYPE(c_double, c_void_p)


class CPlanOptions(Structure):  # planner/plan/plan.h
    _fields_ = [("resume", c_int), ("has_seed", c_int), ("seed", c_uint64),
                ("method", c_char_p), ("max_seconds", c_double), ("max_nodes", c_long),
                ("batch", c_int), ("search_batch", c_int), ("threads", c_int),
                ("run_batch", c_void_p), ("run_batch_start", c_void_p),
                ("run_batch_wait", c_void_p), ("run_batch_ctx", c_void_p),
                ("task_path", c_char_p), ("world_options", c_char_p),
                ("progress", PLAN_PROGRESS), ("progress_ctx", c_void_p),
                ("progress_interval", c_double), ("cancel", POINTER(c_int)),
                ("clock", c_void_p), ("clock_ctx", c_void_p),
                ("started", c_void_p), ("started_ctx", c_void_p)]


class CPlanProgress(Structure):  # planner/plan/plan.h (read in the callback only)
    _fields_ = [("nodes", c_long), ("expansions", c_long),
                ("expansions_per_second", c_double), ("best_distance", c_double),
                ("best_cost", c_double), ("elapsed", c_double)]


class CPlanResult(Structure):  # planner/plan/plan.h
    _fields_ = [("status", c_int), ("run_id", c_int64), ("plan_id", c_int64),
                ("planner", c_char * 16), ("resumed", c_int), ("nodes", c_long),
                ("stats", CSearchStats), ("seconds", c_double), ("session_seconds", c_double),
                ("store_seconds", c_double), ("cost", c_double), ("length", c_long),
                ("best_distance", c_double), ("best_node", c_long), ("goal_node", c_long),
                ("failed", c_long), ("failed_by", c_long * _abi_size(b"CP_EXPAND_COUNT")),
                ("actions_exhausted", c_int)]


class CBenchOptions(Structure):  # planner/plan/plan.h
    _fields_ = [("runs", c_int), ("planners", POINTER(c_char_p)), ("max_seconds", c_double),
                ("task_path", c_char_p), ("progress", c_void_p), ("progress_ctx", c_void_p),
                ("threads", c_int), ("db", c_char_p), ("remote", c_void_p),
                ("cancel", c_void_p)]


class CViewerTree(Structure):  # planner/view/viewer.h
    _fields_ = [("n", c_int), ("points", POINTER(c_double)), ("parent", POINTER(c_int)),
                ("n_path", c_int), ("path", POINTER(c_int))]


class CViewerOptions(Structure):  # planner/view/viewer.h
    _fields_ = [("title", c_char_p), ("has_goal", c_int), ("goal_body", c_char_p),
                ("goal_centre", c_double * 3), ("goal_tolerance", c_double),
                ("tree", POINTER(CViewerTree))]


class CAssemblyAnimOptions(Structure):  # planner/view/assembly.h
    _fields_ = [("frames_per_step", c_int), ("step_seconds", c_double),
                ("distance", c_double), ("title", c_char_p)]


class CPaperOptions(Structure):  # experiments/study/study.h
    _fields_ = [("seed", c_uint64), ("problems", c_int), ("jobs", c_int),
                ("time_limit_s", c_double), ("unique_time_limit_s", c_double),
                ("node_limit", c_long), ("unique_node_limit", c_long),
                ("unique_max_cuts", c_int), ("unique_lemke_covers", c_int),
                ("persist_restarts", c_int), ("lemke_max_pivots", c_int),
                ("lemke_restarts", c_int), ("fip_max_iter", c_int), ("fip_gap_tol", c_double),
                ("write_data", c_int), ("mip_all", c_int),
                ("spread", c_void_p),  # a C function (MPI ranks); NULL here
                ("cancel", c_void_p)]  # a signal handler's flag; NULL here


PAPER_PROGRESS = CFUNCTYPE(None, c_void_p, c_int, c_int)


class CReplayFrame(Structure):  # planner/replay/replay.h
    _fields_ = [("step", c_long), ("plan_step", c_long), ("action", c_long),
                ("values", POINTER(c_double)), ("n_values", c_int), ("time", c_double),
                ("state", POINTER(c_double)), ("n", c_int), ("n_contacts", c_int),
                ("contacts", POINTER(CWorldContact))]


REPLAY_FRAME = CFUNCTYPE(None, c_void_p, POINTER(CReplayFrame))


class CReplayOptions(Structure):  # planner/replay/replay.h
    _fields_ = [("verify", c_int), ("tolerance", c_double), ("frame", REPLAY_FRAME),
                ("ctx", c_void_p)]


class CSequenceRunOptions(Structure):  # planner/replay/sequence_run.h
    _fields_ = [("path", c_char_p), ("label", c_char_p), ("verify", c_int), ("html", c_char_p)]


class CSequenceRunResult(Structure):  # planner/replay/sequence_run.h
    _fields_ = [("json", c_void_p), ("sequence", c_int), ("parts", c_int), ("verified", c_int),
                ("why", c_char * 700), ("sequence_id", c_int64), ("store_failed", c_int),
                ("store_error", CError), ("plan_error", CError), ("page_written", c_int)]


class CSequenceReplayOptions(Structure):  # planner/replay/sequence_replay.h
    _fields_ = [("verify", c_int), ("tolerance", c_double), ("html", c_char_p),
                ("title", c_char_p)]


class CSequenceReplayResult(Structure):  # planner/replay/sequence_replay.h
    _fields_ = [("sequence_id", c_int64), ("stages", c_int), ("plans", c_int), ("steps", c_long),
                ("duration", c_double), ("max_deviation", c_double), ("verified", c_int),
                ("chained", c_int), ("first_plan", c_int64), ("frames", c_int),
                ("message", c_char * 700)]


class CReplayResult(Structure):  # planner/replay/replay.h
    _fields_ = [("steps", c_long), ("duration", c_double), ("max_deviation", c_double),
                ("max_plan_step", c_long), ("compared", c_int), ("verified", c_int),
                ("first_plan_step", c_long), ("first_entry", c_int),
                ("first_where", c_char * 160), ("first_deviation", c_double),
                ("message", c_char * 512)]


_MIRRORS = {
    "cp_error": CError, "cp_lcp": CLcp, "cp_check_options": CCheckOptions,
    "cp_lemke_options": CLemkeOptions, "cp_fip_options": CFipOptions,
    "cp_lemke_reg_options": CLemkeRegOptions, "cp_lemke_reg_report": CLemkeRegReport,
    "cp_solve_trail": CSolveTrail,
    "cp_certify_options": CCertifyOptions, "cp_solve_options": CSolveOptions,
    "cp_lcp_info": CLcpInfo, "cp_certify_result": CCertifyResult,
    "cp_scene_options": CSceneOptions, "cp_world_options": CWorldOptions,
    "cp_step_info": CStepInfo, "cp_step_profile": CStepProfile,
    "cp_sim_options": CSimOptions, "cp_sim_result": CSimResult,
    "cp_ref": CRef, "cp_world_contact": CWorldContact,
    "cp_contact": CContact, "cp_contact_diag": CContactDiag,
    "cp_problem_options": CProblemOptions, "cp_problem_result": CProblemResult,
    "cp_quasistatic_result": CQuasistaticResult,
    "cp_stability_options": CStabilityOptions, "cp_stability_result": CStabilityResult,
    "cp_search_stats": CSearchStats, "cp_search_node": CSearchNode,
    "cp_plan_options": CPlanOptions, "cp_plan_result": CPlanResult,
    "cp_bench_options": CBenchOptions, "cp_viewer_tree": CViewerTree,
    "cp_viewer_options": CViewerOptions, "cp_assembly_anim_options": CAssemblyAnimOptions,
    "cp_paper_options": CPaperOptions,
    "cp_replay_frame": CReplayFrame, "cp_replay_options": CReplayOptions,
    "cp_replay_result": CReplayResult,
    "cp_sequence_run_options": CSequenceRunOptions, "cp_sequence_run_result": CSequenceRunResult,
    "cp_sequence_replay_options": CSequenceReplayOptions,
    "cp_sequence_replay_result": CSequenceReplayResult,
}


def _sig(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


abi_size = _abi_size


def check_abi():
    """Compares every mirror's size and field offsets with the library's;
    raises ImportError naming the first difference."""
    for cname, py in _MIRRORS.items():
        size = abi_size(cname.encode())
        if size != ctypes.sizeof(py):
            raise ImportError("complan: struct %s is %d bytes in %s but %d in the "
                              "package's mirror (python/complan/_lib.py)"
                              % (cname, size, lib_path, ctypes.sizeof(py)))
        for field, _ in py._fields_:
            off = abi_size(("%s.%s" % (cname, field)).encode())
            if off != getattr(py, field).offset:
                raise ImportError("complan: %s.%s is at offset %d in %s but %d in the "
                                  "package's mirror" % (cname, field, off, lib_path,
                                                        getattr(py, field).offset))


check_abi()
SCENE_SIZE = abi_size(b"cp_scene")
LAYOUT_SIZE = abi_size(b"cp_state_layout")

dptr = POINTER(c_double)

# models/
error_code_name = _sig("cp_error_code_name", c_char_p, c_int)
read_file = _sig("cp_read_file", c_void_p, c_char_p, POINTER(c_size_t), POINTER(CError))
scene_options_defaults = _sig("cp_scene_options_defaults", CSceneOptions)
scene_load = _sig("cp_scene_load", c_int, c_char_p, POINTER(CSceneOptions), c_void_p,
                  POINTER(CError))
scene_parse = _sig("cp_scene_parse", c_int, c_char_p, c_size_t, c_char_p,
                   POINTER(CSceneOptions), c_void_p, POINTER(CError))
scene_copy = _sig("cp_scene_copy", c_int, c_void_p, c_void_p)
scene_free = _sig("cp_scene_free", None, c_void_p)

# contact/
lcp_free = _sig("cp_lcp_free", None, POINTER(CLcp))
lcp_parse = _sig("cp_lcp_parse", c_int, c_char_p, c_size_t, POINTER(CLcp), POINTER(CError))
lcp_status_name = _sig("cp_lcp_status_name", c_char_p, c_int)
lcp_solver_name = _sig("cp_lcp_solver_name", c_char_p, c_int)
lcp_solver_parse = _sig("cp_lcp_solver_parse", c_int, c_char_p, POINTER(c_int))
solve_defaults = _sig("cp_solve_defaults", CSolveOptions)
certify_defaults = _sig("cp_certify_defaults", CCertifyOptions)
lcp_solve = _sig("cp_lcp_solve", c_int, c_void_p, c_int, dptr, dptr,
                 POINTER(CSolveOptions), dptr, dptr, POINTER(CLcpInfo),
                 POINTER(CSolveTrail))
certify = _sig("cp_certify", c_int, c_int, dptr, dptr, POINTER(CCertifyOptions),
               dptr, dptr, dptr, dptr, POINTER(CCertifyResult), POINTER(CLcpInfo))

# planner/sim/
stepper_parse = _sig("cp_stepper_parse", c_int, c_char_p, POINTER(c_int))
stepper_name = _sig("cp_stepper_name", c_char_p, c_int)
world_defaults = _sig("cp_world_defaults", CWorldOptions)
world_status_name = _sig("cp_world_status_name", c_char_p, c_int)
world_create = _sig("cp_world_create", c_int, c_void_p, POINTER(CWorldOptions),
                    POINTER(c_void_p), POINTER(CError))
world_destroy = _sig("cp_world_destroy", None, c_void_p)
world_step = _sig("cp_world_step", c_int, c_void_p, POINTER(CStepInfo))
world_message = _sig("cp_world_message", c_char_p, c_void_p)
world_scene = _sig("cp_world_scene", c_void_p, c_void_p)
world_time = _sig("cp_world_time", c_double, c_void_p)
world_dt = _sig("cp_world_dt", c_double, c_void_p)
world_set_time = _sig("cp_world_set_time", None, c_void_p, c_double)
world_state_size = _sig("cp_world_state_size", c_int, c_void_p)
world_get_state = _sig("cp_world_get_state", None, c_void_p, dptr)
world_set_state = _sig("cp_world_set_state", c_int, c_void_p, dptr)
world_set_effort = _sig("cp_world_set_effort", c_int, c_void_p, c_int, c_double)
world_set_joint_velocity = _sig("cp_world_set_joint_velocity", c_int, c_void_p, c_int,
                                c_double)
world_joint_index = _sig("cp_world_joint_index", c_int, c_void_p, c_char_p)
world_joint_count = _sig("cp_world_joint_count", c_int, c_void_p)
world_energy = _sig("cp_world_energy", c_double, c_void_p)
world_hash = _sig("cp_world_hash", c_uint64, c_void_p)
sim_defaults = _sig("cp_sim_defaults", CSimOptions)
simulate = _sig("cp_simulate", c_int, c_void_p, POINTER(CSimOptions), POINTER(CSimResult))
SIM_PROGRESS = CFUNCTYPE(None, c_long, c_long, c_void_p)
# The per-step calls of World.step and World.get_state(out): second function
# objects of the same symbols without argtypes, so that ctypes does not run
# its argument converters at every call (about 0.4 us of a step's overhead,
# experiments/bench_python.py). They are called only with a c_void_p world
# and a byref() or a c_void_p of the right type: with no argtypes a plain
# int would go through as a C int.
world_step_raw = lib["cp_world_step"]
world_step_raw.restype = c_int
world_get_state_raw = lib["cp_world_get_state"]
world_get_state_raw.restype = None
world_set_inputs_raw = lib["cp_py_world_set_inputs"]  # python/bind.c
world_set_inputs_raw.restype = c_int
world_contacts = _sig("cp_world_contacts", c_int, c_void_p, POINTER(POINTER(CWorldContact)))
world_warm_size = _sig("cp_world_warm_size", c_size_t, c_void_p)
world_warm_get = _sig("cp_world_warm_get", None, c_void_p, c_char_p, c_size_t)
world_warm_set = _sig("cp_world_warm_set", None, c_void_p, c_char_p, c_size_t)
scene_ref_name = _sig("cp_scene_ref_name", c_char_p, c_void_p, CRef, c_char_p, c_size_t)
state_layout_init = _sig("cp_state_layout_init", c_int, c_void_p, c_void_p)
state_layout_free = _sig("cp_state_layout_free", None, c_void_p)
state_column_name = _sig("cp_state_column_name", c_int, c_void_p, c_void_p, c_int,
                         c_char_p, c_size_t)

# models/, contact/: a scene's contacts and contact problem
system_build = _sig("cp_system_build", c_int, c_void_p, c_void_p, POINTER(CError))
system_free = _sig("cp_system_free", None, c_void_p)
problem_defaults = _sig("cp_problem_defaults", CProblemOptions)
problem_torsion_from_scene = _sig("cp_problem_torsion_from_scene", c_int, c_void_p,
                                  POINTER(c_double))
problem_solve = _sig("cp_problem_solve", c_int, c_void_p, POINTER(CProblemOptions),
                     POINTER(CProblemResult))
problem_result_free = _sig("cp_problem_result_free", None, POINTER(CProblemResult))
problem_quasistatic = _sig("cp_problem_quasistatic", c_int, c_void_p,
                           POINTER(CProblemOptions), POINTER(CQuasistaticResult))
quasistatic_result_free = _sig("cp_quasistatic_result_free", None,
                               POINTER(CQuasistaticResult))
outcome_name = _sig("cp_outcome_name", c_char_p, c_int)
joint_name = _sig("cp_py_joint_name", c_int, c_void_p, c_int, c_int, c_char_p, c_size_t)
py_joints = _sig("cp_py_joints", c_int, c_void_p, dptr, POINTER(c_int), POINTER(c_int))
scene_auto_contacts = _sig("cp_py_scene_auto_contacts", None, c_void_p)

# contact/stability.h, planner/assembly/, planner/store/assembly.h
stability_defaults = _sig("cp_stability_defaults", CStabilityOptions)
stability_kind_name = _sig("cp_stability_kind_name", c_char_p, c_int)
stability_result_free = _sig("cp_stability_result_free", None, POINTER(CStabilityResult))
assembly_load_scene = _sig("cp_assembly_load_scene", c_int, c_char_p, c_void_p,
                           POINTER(CError))
assembly_parts = _sig("cp_assembly_parts", c_int, c_void_p, c_void_p)
assembly_stability = _sig("cp_assembly_stability", c_int, c_void_p, c_uint64,
                          POINTER(CStabilityOptions), POINTER(CStabilityResult), c_void_p,
                          POINTER(POINTER(CContact)), POINTER(c_int), POINTER(CError))
# progress(ctx, done, total) of cp_stability_options and cp_assembly_options
COUNT_PROGRESS = CFUNCTYPE(None, c_void_p, c_int, c_int)
abi_defaults = _sig("cp_abi_defaults", c_int, c_char_p, c_void_p)
assembly_plan = _sig("cp_assembly_plan", c_int, c_void_p, c_void_p, c_void_p)
assembly_result_free = _sig("cp_assembly_result_free", None, c_void_p)
assembly_status_name = _sig("cp_assembly_status_name", c_char_p, c_int)
assembly_store = _sig("cp_assembly_store", c_int, c_char_p, c_char_p, c_void_p, c_void_p,
                      c_int, POINTER(c_int64), POINTER(CError))
assembly_anim_defaults = _sig("cp_assembly_anim_defaults", CAssemblyAnimOptions)
assembly_write_page = _sig("cp_assembly_write_page", c_int, c_void_p, c_void_p,
                           POINTER(CAssemblyAnimOptions), c_char_p, POINTER(CError))
assembly_mask_names = _sig("cp_assembly_mask_names", c_void_p, c_void_p, c_void_p, c_uint64)

# planner/search, planner/store, planner/plan, planner/replay
task_load = _sig("cp_task_load", c_int, c_char_p, c_void_p, POINTER(CError))
task_parse = _sig("cp_task_parse", c_int, c_char_p, c_size_t, c_char_p, c_void_p,
                  POINTER(CError))
task_free = _sig("cp_task_free", None, c_void_p)
expand_outcome_name = _sig("cp_expand_outcome_name", c_char_p, c_int)
expand_outcome_is_failure = _sig("cp_expand_outcome_is_failure", c_int, c_int)
store_open = _sig("cp_store_open", c_int, c_char_p, c_int, POINTER(c_void_p), c_char_p,
                  c_size_t)
store_close = _sig("cp_store_close", None, c_void_p)
store_message = _sig("cp_store_message", c_char_p, c_void_p)
store_list = _sig("cp_store_list", c_int, c_void_p, POINTER(c_void_p))
store_load_run = _sig("cp_store_load_run", c_int, c_void_p, c_int64, c_void_p)
NODE_FN = CFUNCTYPE(c_int, c_void_p, POINTER(CSearchNode), POINTER(c_double), c_void_p,
                    c_size_t)
store_load_nodes = _sig("cp_store_load_nodes", c_int, c_void_p, c_int64, NODE_FN, c_void_p)
store_load_node = _sig("cp_store_load_node", c_int, c_void_p, c_int64, c_long,
                       POINTER(CSearchNode), POINTER(c_double), c_int, POINTER(c_double),
                       c_int, POINTER(c_int))
store_plan_nodes = _sig("cp_store_plan_nodes", c_int, c_void_p, c_int64, POINTER(c_int64),
                        POINTER(POINTER(c_long)), POINTER(c_long))
plan_defaults = _sig("cp_plan_defaults", CPlanOptions)
plan_task = _sig("cp_plan_task", c_int, c_void_p, c_void_p, POINTER(CPlanOptions),
                 POINTER(CPlanResult), POINTER(CError))
plan_world_create = _sig("cp_plan_world_create", c_int, c_void_p, c_int, POINTER(c_void_p),
                         POINTER(CError))
plan_world_destroy = _sig("cp_plan_world_destroy", None, c_void_p)
plan_world_problem = _sig("cp_plan_world_problem", c_void_p, c_void_p)
plan_world_start = _sig("cp_plan_world_start", c_void_p, c_void_p)
plan_world_options = _sig("cp_plan_world_options", c_void_p, c_void_p)
plan_benchmark = _sig("cp_plan_benchmark", c_int, c_void_p, c_void_p, c_void_p, c_void_p,
                      c_void_p, POINTER(CBenchOptions), POINTER(c_int64), POINTER(CError))
store_bench_summary = _sig("cp_store_bench_summary", c_int, c_void_p, c_int64,
                           POINTER(c_void_p))
plan_status_name = _sig("cp_plan_status_name", c_char_p, c_int)
replay_open = _sig("cp_replay_open", c_int, c_void_p, c_int64, POINTER(c_void_p),
                   POINTER(CError))
replay_close = _sig("cp_replay_close", None, c_void_p)
replay_task = _sig("cp_replay_task", c_void_p, c_void_p)
replay_plan_id = _sig("cp_replay_plan_id", c_int64, c_void_p)
replay_run_id = _sig("cp_replay_run_id", c_int64, c_void_p)
replay_length = _sig("cp_replay_length", c_long, c_void_p)
replay_defaults = _sig("cp_replay_defaults", CReplayOptions)
sequence_run_defaults = _sig("cp_sequence_run_defaults", CSequenceRunOptions)
sequence_run = _sig("cp_sequence_run", c_int, c_char_p, c_size_t, c_char_p,
                    POINTER(CSequenceRunOptions), POINTER(CSequenceRunResult), POINTER(CError))
sequence_replay_defaults = _sig("cp_sequence_replay_defaults", CSequenceReplayOptions)
sequence_replay = _sig("cp_sequence_replay", c_int, c_void_p, c_int64,
                       POINTER(CSequenceReplayOptions), POINTER(CSequenceReplayResult),
                       POINTER(CError))
sequence_phases_json = _sig("cp_sequence_phases_json", c_void_p, c_void_p, c_int64, POINTER(CError))
sequence_is_task = _sig("cp_sequence_is_task", c_int, c_char_p, c_size_t)
replay_run = _sig("cp_replay_run", c_int, c_void_p, POINTER(CReplayOptions),
                  POINTER(CReplayResult))
viewer_defaults = _sig("cp_viewer_defaults", CViewerOptions)
viewer_create = _sig("cp_viewer_create", c_int, c_void_p, POINTER(CViewerOptions),
                     POINTER(c_void_p), POINTER(CError))
viewer_destroy = _sig("cp_viewer_destroy", None, c_void_p)
viewer_state_size = _sig("cp_viewer_state_size", c_int, c_void_p)
viewer_add_frame = _sig("cp_viewer_add_frame", c_int, c_void_p, c_double, POINTER(c_double),
                        c_int, c_void_p)
viewer_add_world = _sig("cp_viewer_add_world", c_int, c_void_p, c_void_p)
viewer_frame_count = _sig("cp_viewer_frame_count", c_int, c_void_p)
viewer_write = _sig("cp_viewer_write", c_int, c_void_p, c_char_p)
viewer_message = _sig("cp_viewer_message", c_char_p, c_void_p)
replay_tree = _sig("cp_replay_tree", c_int, c_void_p, POINTER(POINTER(c_double)),
                   POINTER(POINTER(c_int)), POINTER(c_int), POINTER(POINTER(c_int)),
                   POINTER(c_int), POINTER(CError))
csv_state_header = _sig("cp_csv_state_header", c_int, c_void_p, c_void_p, c_void_p)
csv_state_row = _sig("cp_csv_state_row", None, c_void_p, c_void_p, c_double, POINTER(c_double))
replay_csv_header = _sig("cp_replay_csv_header", c_int, c_void_p, c_void_p)
replay_csv_row = _sig("cp_replay_csv_row", None, c_void_p, c_void_p, c_void_p)
outfile_open = _sig("cp_outfile_open", c_void_p, c_char_p, POINTER(CError))
outfile_stream = _sig("cp_outfile_stream", c_void_p, c_void_p)
outfile_commit = _sig("cp_outfile_commit", c_int, c_void_p, POINTER(CError))
outfile_discard = _sig("cp_outfile_discard", None, c_void_p)
# experiments/study/study.h
paper_defaults = _sig("cp_paper_defaults", CPaperOptions)
paper_study_run = _sig("cp_paper_study_run", c_int, POINTER(CPaperOptions), c_char_p, c_char_p,
                       PAPER_PROGRESS, c_void_p, c_void_p, POINTER(CError))
paper_study_free = _sig("cp_paper_study_free", None, c_void_p)
paper_format_headline = _sig("cp_paper_format_headline", c_void_p, c_void_p, c_char_p)
paper_format_csv = _sig("cp_paper_format_csv", c_void_p, c_void_p)
paper_format_table1_csv = _sig("cp_paper_format_table1_csv", c_void_p, c_void_p)
GLPK_SINK = CFUNCTYPE(None, c_void_p, c_char_p)
glpk_set_sink = _sig("cp_glpk_set_sink", None, GLPK_SINK, c_void_p)
# jansson, linked into libcomplan: cp_store_list's document as text
json_dumps = _sig("json_dumps", c_void_p, c_void_p, c_size_t)
json_delete = _sig("json_delete", None, c_void_p)
build = _sig("cp_py_build", c_char_p)().decode()

_libc = ctypes.CDLL(None)
c_free = _libc.free
c_free.restype = None
c_free.argtypes = [c_void_p]
c_fputc = _libc.fputc
c_fputc.restype = c_int
c_fputc.argtypes = [c_int, c_void_p]


def offset(name):
    """The offset of "struct.field" in the library (python/abi.c); the
    package reads the structs it holds as opaque buffers with it."""
    off = abi_size(name.encode())
    if off < 0:
        raise ImportError("complan: %s has no offset of %s (python/abi.c)" % (lib_path, name))
    return off


def field(base, name, ctype):
    """The value of field "struct.field" (a ctypes type) of the struct at
    address base."""
    return ctype.from_address(base + offset(name)).value


def set_field(base, name, ctype, value):
    ctype.from_address(base + offset(name)).value = value


def c_array(ptr, n, shape=None):
    """A numpy copy of n doubles at a ctypes pointer (an empty array for n 0)."""
    import numpy as np
    a = np.ctypeslib.as_array(ptr, shape=(n,)).copy() if n > 0 else np.empty(0)
    return a.reshape(shape) if shape is not None else a


def num(x):
    """A number as the command line's JSON has it: None when not finite."""
    return x if x == x and x not in (float("inf"), float("-inf")) else None


def raise_error(err, path=None):
    """Raises Error from a filled cp_error."""
    raise Error(error_code_name(err.code).decode(), err.msg.decode(errors="replace"),
                err.where.decode(errors="replace"), path)


class Progress:
    """A progress function of the caller's handed to C as a callback of
    type proto: fn(*pick(C arguments)). An exception it raises is never
    unwound through C: it is kept, later calls are skipped, and raise_kept()
    raises it once the C call has returned. fn None: ptr is None."""

    def __init__(self, fn, proto, pick, what):
        self.raised = None
        self.ptr = None
        if fn is None:
            return
        if not callable(fn):
            raise Error("input", "progress must be a function of %s, or None" % what)

        def call(*args):
            if self.raised is None:
                try:
                    fn(*pick(args))
                except BaseException as e:  # noqa: BLE001 - kept, raised after the call
                    self.raised = e

        self._cb = proto(call)  # kept alive as long as this object
        self.ptr = ctypes.cast(self._cb, c_void_p)

    def raise_kept(self):
        if self.raised is not None:
            raise self.raised


def set_fields(struct, values, what):
    """Sets the fields of a ctypes struct from a dict; nested structs take
    dicts. Unknown names raise Error naming them."""
    names = dict(struct._fields_)
    for key, value in values.items():
        if key not in names or key in ("cover", "files"):
            raise Error("input", "unknown option %r of %s (known: %s)"
                        % (key, what, ", ".join(n for n in names if n not in ("cover", "files"))))
        sub = getattr(struct, key)
        if isinstance(sub, Structure):
            if not isinstance(value, dict):
                raise Error("input", "option %r of %s takes a dict" % (key, what))
            set_fields(sub, value, what + "." + key)
        else:
            try:
                setattr(struct, key, value)
            except TypeError:
                raise Error("input", "option %r of %s: cannot take %r" % (key, what, value)) \
                    from None


__all__ = ["Error", "lib", "lib_path", "ENV_VAR"]
