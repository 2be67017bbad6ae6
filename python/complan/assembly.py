"""Stability at rest and assembly sequences (planner/assembly,
docs/assembly.md): complan.stability(scene) and complan.assemble(scene or
task), the answers of `complan stability --json` and `complan assemble
--json`."""
import ctypes
import json
import os
import shutil
import tempfile
from ctypes import byref, c_double, c_int, c_int64, c_uint64, c_void_p

from . import _lib as L
from ._lib import Error
from .scene import Result, Scene

__all__ = ["stability", "assemble"]


def _scene(scene):
    """A Scene as the assembly commands read it: a path is loaded as `complan
    stability` does (normal speeds not checked; at most 64 free bodies)."""
    if isinstance(scene, Scene):
        if L.assembly_parts(scene._buf, None) < 0:
            raise Error("input", "at most 64 free bodies are supported", "bodies", scene.path)
        return scene, scene.path or "(python)"
    if not isinstance(scene, (str, os.PathLike)):
        raise Error("input", "expected a complan.Scene or a scene file's path, got %r"
                    % type(scene).__name__)
    path = os.fspath(scene)
    s = Scene._empty()
    s.path = path
    err = L.CError()
    if L.assembly_load_scene(path.encode(), s._buf, byref(err)):
        L.raise_error(err, path)
    s._ok = True
    return s, path


def _row_owner(scene, bodies, joints, r):
    return bodies[r // 6] if r < 6 * len(bodies) else joints[r - 6 * len(bodies)]


def stability(scene, time_limit=60.0, progress=None, node_limit=0):
    """Is the assembly stable at rest? (`complan stability`, docs/math.md §9.)
    scene: a complan.Scene or a scene file's path. time_limit: seconds for
    all the exact MILPs together (0: none). node_limit: branch-and-bound
    nodes for all of them together (0: none; `--node-limit`), a verdict
    that does not depend on the machine.

    Returns a Result with the JSON's keys: stable (bool), kind ("strong",
    "weak", "unstable", "stable_undecided", "failed"), moving (names of the
    bodies and joints that accelerate in a moving solution), method,
    reason (when set), mip_nodes, contacts [{"a", "b", "point", "normal", "force"
    (the equilibrium's (n, t, o) on a, N, or None), "torsion"?}],
    equilibrium_residual (when an equilibrium exists), motion (None, or
    {"bodies", "joints", "forces"} of a moving solution); and the arrays
    force (k, 3) (NaN rows without an equilibrium) and udot (n_u,) of the
    moving solution (None without one). progress: a function called with
    (done, total) as the exact MILPs are solved (what `--progress` prints:
    "exact MILP done of at most total"); an exception it raises is raised
    when the answer is in."""
    if not (isinstance(time_limit, (int, float)) and 0 <= time_limit <= 1e9):
        raise Error("input", "time_limit must be seconds >= 0, got %r" % (time_limit,))
    if not (isinstance(node_limit, int) and not isinstance(node_limit, bool)
            and 0 <= node_limit <= 1000000000):
        raise Error("input", "node_limit must be a whole number >= 0, got %r" % (node_limit,))
    prog = L.Progress(progress, L.COUNT_PROGRESS, lambda a: a[1:], "(done, total)")
    sc, _ = _scene(scene)
    np_ = L.assembly_parts(sc._buf, None)
    mask = (1 << 64) - 1 if np_ >= 64 else (1 << np_) - 1
    opt = L.stability_defaults()
    opt.time_limit_s = float(time_limit)
    opt.node_limit = node_limit
    opt.progress = prog.ptr
    res = L.CStabilityResult()
    sys_buf = ctypes.create_string_buffer(L.abi_size(b"cp_system"))
    con = ctypes.POINTER(L.CContact)()
    ncon = c_int()
    err = L.CError()
    if L.assembly_stability(sc._buf, mask, byref(opt), byref(res), sys_buf, byref(con),
                            byref(ncon), byref(err)):
        L.raise_error(err, sc.path)
    try:
        n_obj, n_l, _, bodies, joints, _ = sc._system(sys_buf)
        nu, k = 6 * n_obj + n_l, ncon.value
        kind = L.stability_kind_name(res.kind).decode()
        r = Result()
        r["stable"] = res.kind in (0, 1, 2)  # strong, weak, undecided
        r["kind"] = kind
        moving = []
        udot = L.c_array(res.udot, nu) if res.has_motion else None
        for i in range(nu if res.has_motion else 0):
            if not abs(udot[i]) > res.acc_tol:
                continue
            name = _row_owner(sc, bodies, joints, i)
            if not moving or moving[-1] != name:
                moving.append(name)
        r["moving"] = moving
        r["method"] = res.method.decode() if res.method else None
        r["mip_nodes"] = int(res.mip_nodes)
        if res.reason:
            r["reason"] = res.reason.decode(errors="replace")
        eq = bool(res.has_equilibrium)
        force = L.c_array(res.force, 3 * k, (k, 3)) if eq else None
        cl = []
        for j in range(k):
            c = con[j]
            o = {"a": sc._ref_name(c.a), "b": sc._ref_name(c.b),
                 "point": [L.num(x) for x in c.p], "normal": [L.num(x) for x in c.n],
                 "force": [L.num(x) for x in force[j]] if eq else None}
            if c.has_torsion:
                o["torsion"] = L.num(res.torsion[j]) if eq else None
            cl.append(o)
        r["contacts"] = cl
        if eq:
            r["equilibrium_residual"] = L.num(res.residual)
        if res.has_motion:
            mf = L.c_array(res.motion_force, 3 * k, (k, 3))
            r["motion"] = {
                "bodies": [{"name": bodies[i],
                            "linear_acceleration": [L.num(x) for x in udot[6 * i:6 * i + 3]],
                            "angular_acceleration": [L.num(x) for x in udot[6 * i + 3:6 * i + 6]]}
                           for i in range(n_obj)],
                "joints": [{"name": joints[q], "acceleration": L.num(udot[6 * n_obj + q])}
                           for q in range(n_l)],
                "forces": [[L.num(x) for x in mf[j]] for j in range(k)]}
        else:
            r["motion"] = None
        import numpy as np
        r.force = force if eq else np.full((k, 3), np.nan)
        r.udot = udot
        prog.raise_kept()
        return r
    finally:
        L.c_free(con)
        L.system_free(sys_buf)
        L.stability_result_free(byref(res))


def _task_text(task):
    """(text bytes, path or None) of an assembly task given as a dict or a
    file's path, or None when it is a scene (a Scene, or a file without the
    key "assembly")."""
    if isinstance(task, dict):
        text = json.dumps(task).encode()
        if not L.sequence_is_task(text, len(text)):
            raise Error("input", "an assembly task needs the key \"assembly\" (the design "
                        "scene's path); a scene is given as a path or a complan.Scene")
        return text, None
    if not isinstance(task, (str, os.PathLike)):
        return None
    path = os.fspath(task)
    try:
        with open(path, "rb") as f:
            text = f.read()
    except OSError:
        return None  # the scene loader reports it, as before
    return (text, path) if L.sequence_is_task(text, len(text)) else None


def _assemble_task(text, path, db, html):
    """`complan assemble TASK [--html FILE] --json` (cp_sequence_run): the
    sequence planned, executed, verified by replay and stored in db (a
    temporary database, removed afterwards, when None), its page written
    to html (when not None)."""
    tmp = None
    if db is None:
        tmp = tempfile.mkdtemp(prefix="complan-assemble-")
        dbpath = os.path.join(tmp, "sequence.sqlite")
    else:
        dbpath = os.fspath(db)
    try:
        opt = L.sequence_run_defaults()
        if path is not None:
            opt.path = path.encode()
        else:
            opt.label = b"(python)"
        hpath = os.fspath(html) if html is not None else None
        if hpath is not None:
            opt.html = hpath.encode()
        out = L.CSequenceRunResult()
        err = L.CError()
        rs = L.sequence_run(text, len(text), dbpath.encode(), byref(opt), byref(out), byref(err))
        try:
            if rs == 2:  # CP_SEQUENCE_RUN_BAD_TASK
                L.raise_error(err, path)
            if rs == 3:  # CP_SEQUENCE_RUN_BAD_STORE
                raise Error(L.error_code_name(err.code).decode(),
                            err.msg.decode(errors="replace"), path=dbpath)
            if rs == 4:  # CP_SEQUENCE_RUN_BAD_OUTPUT: the page (the message names it)
                raise Error(L.error_code_name(err.code).decode(),
                            err.msg.decode(errors="replace"), path=hpath)
            if out.store_failed:
                L.raise_error(out.store_error, dbpath)
            if out.sequence == 3:  # CP_SEQUENCE_FAILED
                L.raise_error(out.plan_error, path)
            if not out.json:
                L.raise_error(err)
            doc = json.loads(ctypes.string_at(out.json).decode())
        finally:
            L.c_free(out.json)
        r = Result()
        r.update(doc)
        r.page_written = bool(out.page_written)
        if tmp is not None:
            r["sequence_id"] = None
        return r
    finally:
        if tmp is not None:
            shutil.rmtree(tmp, ignore_errors=True)


def assemble(scene, directions=0, time_limit=0.0, db=None, html=None, title=None,
             progress=None):
    """A stable assembly sequence (`complan assemble`, docs/assembly.md) of
    the scene's free bodies, or an assembly task executed with the gripper.

    Given an assembly task (a dict, or a file's path, with the key
    "assembly"; docs/assembly.md, "Assembly tasks"), the sequence is
    planned, every part carried through simulated phases, every phase plan
    verified by replay and the sequence stored in db (None: a temporary
    database, removed afterwards, and sequence_id None). It takes db and
    html only (its limits are the task's): html is a file for the viewer
    page of the whole executed sequence (the page of
    complan.replay_sequence, written after the sequence is stored; none
    when no stage was certified); the file is tried for writing before
    anything is planned. Returns a Result with the keys of `complan
    assemble TASK --json`: status ("solved", "none", "limit"), order,
    stages [{"part", "certified", "grasp", "regrasps", "attempts",
    "plan_ids", "phases", "stability", "pose_error", "candidates"}],
    final_error, seconds, lcp_solves, plans, message (when set), replay_verified,
    sequence_id, html (the page's path, None without one); and the
    attribute page_written (bool). A bad task raises Error with the JSON
    path in `where`; a storage failure or a page that cannot be written
    raises Error too.

    Given a scene: scene is a complan.Scene or a scene file's path;
    directions: candidate removal directions beyond the six axes (>= 0);
    time_limit: seconds for the whole search (0: none); db: an SQLite file
    to store the run in (tables assembly_*), None (the default, unlike the
    command) for none; html: a file for the viewer page animating the
    sequence (each part along its approach direction), title its title
    (default "complan assemble"). The page is written before the run is
    stored, as the command does.

    Returns a Result with the JSON's keys: status ("found", "none",
    "limit", "failed"), sequence (body names, first placed first), steps
    [{"place", "direction", "stability"}], explored, blocked (names, or
    None), stability_checks, seconds, run_id (None without db), message
    (when set). progress: a function called with (explored, parts) after
    every explored subassembly (the command's `--progress` line shows
    every 16th); an exception it raises is raised when the search is
    over."""
    task = _task_text(scene)
    if task is not None:
        if directions or time_limit or title is not None or progress is not None:
            raise Error("input", "an assembly task takes db and html only (its limits are the "
                        "task's; directions, time_limit, title, progress are for a scene)",
                        path=task[1])
        return _assemble_task(task[0], task[1], db, html)
    if not (isinstance(directions, int) and 0 <= directions <= 10000):
        raise Error("input", "directions must be an integer in [0, 10000], got %r"
                    % (directions,))
    if not (isinstance(time_limit, (int, float)) and 0 <= time_limit <= 1e9):
        raise Error("input", "time_limit must be seconds >= 0, got %r" % (time_limit,))
    prog = L.Progress(progress, L.COUNT_PROGRESS, lambda a: a[1:], "(explored, parts)")
    sc, label = _scene(scene)
    opt = ctypes.create_string_buffer(L.abi_size(b"cp_assembly_options"))
    L.abi_defaults(b"cp_assembly_options", opt)
    o = ctypes.addressof(opt)
    L.set_field(o, "cp_assembly_options.directions", c_int, directions)
    L.set_field(o, "cp_assembly_options.time_limit_s", c_double, float(time_limit))
    L.set_field(o, "cp_assembly_options.progress", c_void_p, prog.ptr.value if prog.ptr else None)
    res = ctypes.create_string_buffer(L.abi_size(b"cp_assembly_result"))
    b = ctypes.addressof(res)
    L.assembly_plan(sc._buf, opt, res)
    try:
        run_id = c_int64(-1)
        err = L.CError()
        if html is not None:
            ao = L.assembly_anim_defaults()
            t = str(title).encode() if title is not None else None
            if t is not None:
                ao.title = t
            if L.assembly_write_page(sc._buf, res, byref(ao), os.fspath(html).encode(),
                                     byref(err)):
                raise Error(L.error_code_name(err.code).decode(),
                            err.msg.decode(errors="replace"), path=os.fspath(html))
        if db is not None and L.assembly_store(os.fspath(db).encode(), label.encode(), sc._buf,
                                               res, 6 + directions, byref(run_id), byref(err)):
            where = err.where.decode()
            raise Error(L.error_code_name(err.code).decode(), err.msg.decode(errors="replace"),
                        "" if where in ("bad_file", "open") else where, os.fspath(db))

        def get(name, ctype):
            return L.field(b, "cp_assembly_result." + name, ctype)

        r = Result()
        r["status"] = L.assembly_status_name(get("status", c_int)).decode()
        n_steps = get("n_steps", c_int)
        steps = get("steps", c_void_p)
        ssize = L.abi_size(b"cp_assembly_step")
        seq, sl = [], []
        for k in range(n_steps):
            base = steps + k * ssize
            name = sc._body_name(L.field(base, "cp_assembly_step.body", c_int))
            d = (c_double * 3).from_address(base + L.offset("cp_assembly_step.direction"))
            seq.append(name)
            sl.append({"place": name, "direction": [L.num(x) for x in d],
                       "stability": L.stability_kind_name(
                           L.field(base, "cp_assembly_step.stability", c_int)).decode()})
        r["sequence"] = seq
        r["steps"] = sl
        r["explored"] = get("explored", c_int)
        blocked = None
        if get("has_blocked", c_int):
            p = L.assembly_mask_names(sc._buf, res, get("blocked", c_uint64))
            if not p:
                raise Error("nomem", "out of memory for the blocked subassembly's names")
            try:
                blocked = json.loads(ctypes.string_at(p).decode())
            finally:
                L.c_free(p)
        r["blocked"] = blocked
        r["stability_checks"] = get("stability_checks", c_int)
        r["seconds"] = L.num(get("seconds", c_double))
        r["run_id"] = run_id.value if run_id.value >= 0 else None
        msg = ctypes.string_at(b + L.offset("cp_assembly_result.message")).decode(errors="replace")
        if msg:
            r["message"] = msg
        prog.raise_kept()
        return r
    finally:
        L.assembly_result_free(res)
