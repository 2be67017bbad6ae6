"""Replay of stored plans (planner/replay, docs/replay.md): complan.replay,
the answer of `complan replay --json`, with its CSV and viewer page; and
complan.replay_sequence, `complan replay --sequence ID --json` (a stored
assembly sequence, docs/assembly.md)."""
import ctypes
import json
import os
from ctypes import byref, c_char_p, c_double, c_int, c_void_p

import numpy as np

from . import _lib as L
from ._lib import Error
from .planner import _open_store
from .recording import OutFile
from .scene import Result
from .viewer import Viewer
from .world import state_names

__all__ = ["replay", "replay_sequence"]


def _viewer(rp, tree):
    """The page of the replay: its goal region and, with tree, the run's
    explored tree (as `complan replay --html [--tree]`)."""
    task = L.replay_task(rp)
    g = task + L.offset("cp_task.goal")
    goal = {"body": L.field(g, "cp_task_goal.body", c_char_p).decode(),
            "centre": list((c_double * 3).from_address(g + L.offset("cp_task_goal.position"))),
            "tolerance": L.field(g, "cp_task_goal.tolerance", c_double)}
    t = None
    if tree:
        pts, par, path = (ctypes.POINTER(c_double)(), ctypes.POINTER(c_int)(),
                          ctypes.POINTER(c_int)())
        n, n_path = c_int(), c_int()
        err = L.CError()
        s = L.replay_tree(rp, byref(pts), byref(par), byref(n), byref(path), byref(n_path),
                          byref(err))
        if s:
            raise Error("input" if s == 3 else "io", err.msg.decode(errors="replace"))
        try:
            t = {"points": L.c_array(pts, 3 * n.value, (n.value, 3)),
                 "parent": [par[i] for i in range(n.value)],
                 "path": [path[i] for i in range(n_path.value)]}
        finally:
            for a in (pts, par, path):
                L.c_free(a)
    title = "complan replay: plan %d (run %d)" % (L.replay_plan_id(rp), L.replay_run_id(rp))
    return Viewer._of_scene_at(task + L.offset("cp_task.scene"), rp, title, goal, t)


class _Outputs:
    """The CSV and the page of a replay, written only when the
    re-simulation is complete."""

    def __init__(self, rp, csv, html, tree):
        self.rp, self.html = rp, html
        self.viewer = self.csv = None
        self.failed = None
        if html is not None:
            self.viewer = _viewer(rp, tree)
        if csv is not None:
            self.csv = OutFile(csv)
            if L.replay_csv_header(rp, self.csv.stream):
                raise Error("nomem", "out of memory writing the CSV header")

    def frame(self, f):
        q = f[0]
        if self.csv:
            L.replay_csv_row(self.rp, f, self.csv.stream)
        if self.viewer and self.failed is None:
            try:
                self.viewer.add_frame(q.time, np.ctypeslib.as_array(q.state, shape=(q.n,)),
                                      (q.n_contacts, q.contacts))
            except Error as e:
                self.failed = e

    def finish(self, complete):
        """Writes the page, then commits the CSV (discarded when the page
        cannot be written or the run is incomplete)."""
        try:
            if self.viewer and complete:
                if self.failed is not None:
                    raise self.failed
                self.viewer.write(self.html)
            if self.csv and complete:
                self.csv.commit()
        finally:
            self.discard()

    def discard(self):
        if self.viewer:
            self.viewer.close()
        if self.csv:
            self.csv.discard()


def _check_verify(verify, tolerance):
    if not (isinstance(tolerance, (int, float)) and tolerance >= 0):
        raise Error("input", "tolerance must be a number >= 0, got %r" % (tolerance,))
    if tolerance > 0 and not verify:
        raise Error("input", "tolerance goes with verify=True")


def replay(db="complan.sqlite", plan=None, verify=True, tolerance=0.0, csv=None, html=None,
           tree=False):
    """Re-simulates a stored plan (`complan replay --json`): the task rebuilt
    from the database, each action simulated as the search did; with verify
    every node state is compared with the stored one (bitwise at tolerance
    0). plan: its id, None for the latest. csv: a file for the trajectory
    at every step (the command's columns); html: a file for the viewer
    page, with tree=True also the run's explored tree. The files are
    written when the re-simulation is complete (also after a mismatch),
    else nothing is left.

    Returns a Result with the JSON's keys: plan, run, length, steps,
    duration (s), deviation (largest, None without verify), verified (None
    without verify), tolerance, mismatch (None, or {"plan_step", "where",
    "entry", "deviation"}), csv and html (when given); and the trajectory
    at every simulation step: time (k,), states (k, state_size), action (k,)
    (-1 at the start), plan_step (k,), state_names. A mismatch is
    reported, not raised; an action that cannot be re-simulated raises
    Error (code "failed")."""
    _check_verify(verify, tolerance)
    if tree and html is None:
        raise Error("input", "tree=True goes with html=FILE")
    path = os.fspath(db)
    st = _open_store(path, True)
    rp = c_void_p()
    outs = None
    try:
        err = L.CError()
        s = L.replay_open(st, int(plan or 0), byref(rp), byref(err))
        if s:
            raise Error(L.error_code_name(err.code).decode(), err.msg.decode(errors="replace"),
                        err.where.decode(errors="replace"), None if err.code == 4 else path)
        outs = _Outputs(rp, csv, html, tree)
        t, x, a, ps = [], [], [], []

        def on_frame(ctx, f):
            q = f[0]
            t.append(q.time)
            x.append(np.ctypeslib.as_array(q.state, shape=(q.n,)).copy())
            a.append(q.action)
            ps.append(q.plan_step)
            outs.frame(f)

        o = L.replay_defaults()
        o.verify = int(bool(verify))
        o.tolerance = float(tolerance)
        o.frame = L.REPLAY_FRAME(on_frame)
        res = L.CReplayResult()
        s = L.replay_run(rp, byref(o), byref(res))
        o_, outs = outs, None
        o_.finish(s in (0, 1))
        if s not in (0, 1):  # OK, MISMATCH
            raise Error("failed" if s == 2 else "nomem", res.message.decode(errors="replace"))
        r = Result()
        r["plan"] = L.replay_plan_id(rp)
        r["run"] = L.replay_run_id(rp)
        r["length"] = L.replay_length(rp)
        r["steps"] = res.steps
        r["duration"] = L.num(res.duration)
        r["deviation"] = L.num(res.max_deviation) if verify else None
        r["verified"] = bool(res.verified) if verify else None
        r["tolerance"] = float(tolerance)
        r["mismatch"] = ({"plan_step": res.first_plan_step,
                          "where": res.first_where.decode(errors="replace"),
                          "entry": res.first_entry,
                          "deviation": L.num(res.first_deviation)}
                         if verify and not res.verified else None)
        if csv is not None:
            r["csv"] = os.fspath(csv)
        if html is not None:
            r["html"] = os.fspath(html)
        r.time, r.states = np.array(t), np.array(x)
        r.action, r.plan_step = np.array(a, dtype=np.int64), np.array(ps, dtype=np.int64)
        r.state_names = state_names(L.replay_task(rp) + L.offset("cp_task.scene"))
        return r
    finally:
        if outs is not None:
            outs.discard()
        if rp.value:
            L.replay_close(rp)
        L.store_close(st)


def replay_sequence(db="complan.sqlite", sequence=None, verify=True, tolerance=0.0, html=None,
                    title=None):
    """Re-simulates a stored assembly sequence (`complan replay --sequence
    ID --json`, docs/assembly.md "Replaying a sequence"): every phase plan
    of every certified stage, in order, and checks that each phase starts
    where the previous one left its bodies (and, inside one move, the
    gripper's joints). sequence: its id (`complan.assemble(task, db=...)`
    returns it as "sequence_id"), None for the latest. verify: compare
    every node state with the stored one (bitwise at tolerance 0; unlike
    the command, on by default). html: a file for the viewer page of the
    whole sequence, title its title (default "complan replay: sequence
    ID"); written only after a complete replay, whole or not at all.

    Returns a Result with the JSON's keys: sequence (its id), stages,
    plans (phase plans replayed), steps, duration (s, all phases),
    deviation (largest, None without verify), verified (None without
    verify), chained, mismatch (None, or the message naming the plan that
    does not replay as stored or the phases that do not chain), phases
    (each plan's {"plan", "stage", "part", "move", "phase"} as stored),
    html (when given). A mismatch is reported, not raised; an unknown sequence, a
    damaged row or a page that cannot be written raises Error with the C
    message (an unknown sequence: code "input", where the table); a plan
    that cannot be re-simulated raises Error (code "failed")."""
    _check_verify(verify, tolerance)
    if sequence is not None and not (isinstance(sequence, int) and not isinstance(sequence, bool)
                                     and 1 <= sequence <= 1 << 62):
        raise Error("input", "sequence must be a sequence id >= 1 (or None: the latest), got %r"
                    % (sequence,))
    path = os.fspath(db)
    hpath = os.fspath(html) if html is not None else None
    st = _open_store(path, True)
    try:
        o = L.sequence_replay_defaults()
        o.verify = int(bool(verify))
        o.tolerance = float(tolerance)
        hb = hpath.encode() if hpath is not None else None
        tb = str(title).encode() if title is not None else None
        o.html, o.title = hb, tb
        res = L.CSequenceReplayResult()
        err = L.CError()
        s = L.sequence_replay(st, int(sequence or 0), byref(o), byref(res), byref(err))
        phases = None
        if s in (0, 1):  # OK, MISMATCH: the stored phases, as the command lists them
            perr = L.CError()
            t = L.sequence_phases_json(st, res.sequence_id, byref(perr))
            if t:
                phases = json.loads(ctypes.string_at(t).decode())
                L.c_free(t)
    finally:
        L.store_close(st)
    msg = err.msg.decode(errors="replace")
    if s in (3, 4) or (s == 2 and msg):  # BAD_INPUT, NOMEM, FAILED with its error
        where = err.where.decode(errors="replace")
        if hpath is not None and where == hpath:  # the page: the message names it
            raise Error(L.error_code_name(err.code).decode(), msg, "", hpath)
        raise Error(L.error_code_name(err.code).decode(), msg, where, path)
    if s == 2:  # CP_REPLAY_FAILED
        raise Error("failed", res.message.decode(errors="replace"), path=path)
    r = Result()
    r["sequence"] = res.sequence_id
    r["stages"] = res.stages
    r["plans"] = res.plans
    r["steps"] = res.steps
    r["duration"] = L.num(res.duration)
    r["deviation"] = L.num(res.max_deviation) if verify else None
    r["verified"] = res.verified == 1 if verify else None
    r["chained"] = bool(res.chained)
    r["mismatch"] = res.message.decode(errors="replace") if s == 1 else None
    r["phases"] = phases
    if hpath is not None:
        r["html"] = hpath
    return r
