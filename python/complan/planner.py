"""Planning with the simulator and the plan database (planner/plan,
planner/store; docs/planner.md, docs/database.md): complan.plan,
complan.benchmark, complan.Task and complan.Database, the answers of
`complan plan --json` and `complan plans --json`."""
import ctypes
import json
import os
import signal
import threading
from ctypes import byref, c_char_p, c_double, c_int, c_int64, c_long, c_void_p

import numpy as np

from . import _lib as L
from ._lib import Error
from .scene import Result
from .world import state_names

__all__ = ["plan", "benchmark", "Database", "Task"]


class Task:
    """A planning task (docs/planner.md), parsed and checked: Task.load(path)
    or Task.from_dict(d, base_dir=None) (the scene inline, or a path
    relative to base_dir). complan.plan takes one, a path or a dict."""

    def __init__(self):
        raise TypeError("use Task.load(path) or Task.from_dict(d)")

    @classmethod
    def _empty(cls):
        t = object.__new__(cls)
        t._buf = ctypes.create_string_buffer(L.abi_size(b"cp_task"))
        t._ok = False
        t.path = None
        return t

    @classmethod
    def load(cls, path):
        t = cls._empty()
        t.path = os.fspath(path)
        err = L.CError()
        if L.task_load(t.path.encode(), t._buf, byref(err)):
            L.raise_error(err, t.path)
        t._ok = True
        return t

    @classmethod
    def from_dict(cls, d, base_dir=None):
        try:
            text = json.dumps(d, allow_nan=False).encode()
        except (TypeError, ValueError) as e:
            raise Error("input", "the task dict is not JSON: %s" % e) from None
        t = cls._empty()
        # the parser resolves a scene path against the task file's folder
        where = os.path.join(os.fspath(base_dir) if base_dir is not None else os.getcwd(),
                             "(task)")
        err = L.CError()
        if L.task_parse(text, len(text), where.encode(), t._buf, byref(err)):
            L.raise_error(err)
        t._ok = True
        return t

    @property
    def _ptr(self):
        return ctypes.addressof(self._buf)

    def state_names(self):
        """The names of the state entries of the task's scene."""
        return state_names(self._ptr + L.offset("cp_task.scene"))

    def input_names(self):
        return _input_names(self._ptr)

    def __del__(self):
        if getattr(self, "_ok", False) and L.task_free is not None:
            L.task_free(self._buf)
            self._ok = False


def _input_names(task_ptr):
    n = L.field(task_ptr, "cp_task.n_inputs", c_int)
    base = L.field(task_ptr, "cp_task.inputs", c_void_p)
    size = L.abi_size(b"cp_task_input")
    return [L.field(base + i * size, "cp_task_input.joint", c_char_p).decode()
            for i in range(n)]


def _task(task, base_dir):
    """A Task and its path (None for a dict) from what plan() accepts."""
    if isinstance(task, Task):
        return task, task.path
    if isinstance(task, dict):
        return Task.from_dict(task, base_dir), None
    if isinstance(task, (str, os.PathLike)):
        t = Task.load(task)
        return t, t.path
    raise Error("input", "task must be a complan.Task, a path or a dict, got %r"
                % type(task).__name__)


def _json_doc(doc, what):
    """The jansson document doc (owned: deleted here) as Python objects."""
    try:
        text = L.json_dumps(doc, 0)
        if not text:
            raise Error("nomem", "out of memory reading %s" % what)
        try:
            return json.loads(ctypes.string_at(text).decode())
        finally:
            L.c_free(text)
    finally:
        L.json_delete(doc)


def _open_store(path, read_only):
    st = c_void_p()
    msg = ctypes.create_string_buffer(512)
    s = L.store_open(os.fspath(path).encode(), int(read_only), byref(st), msg, len(msg))
    if s:  # CP_STORE_BAD_FILE (1) is bad input; the message names the file
        raise Error("input" if s == 1 else "io", msg.value.decode(errors="replace"),
                    path=None)
    return st.value


def _store_error(st, s):
    return Error("input" if s == 1 else "io", L.store_message(st).decode(errors="replace"))


class _Cancel:
    """SIGINT while the C search runs: Python's handler runs at the next
    progress callback and sets the search's cancel flag, so the run stops
    after the action it simulates, is committed and stored "interrupted"
    (resumable), as the command does."""

    def __init__(self, flag):
        self.flag, self.old, self.hit = flag, None, False

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            self.old = signal.signal(signal.SIGINT, self._on)
        return self

    def _on(self, sig, frame):
        self.flag.value = 1
        self.hit = True

    def __exit__(self, *exc):
        if self.old is not None:
            signal.signal(signal.SIGINT, self.old)


def plan(task, db="complan.sqlite", seed=None, method=None, max_seconds=None,
         max_nodes=None, resume=False, batch=None, progress=None, base_dir=None,
         clock=None, search_batch=None, threads=None):
    """Plans a task (`complan plan --json`): task is a Task, a task file's
    path or a dict in the task format (base_dir resolves its relative scene
    path). Every node and the plan go to the SQLite database db (created
    when absent). Overrides of the task's own settings: seed (0 .. 2^64-1),
    method ("astar", "rrt", "sst"), max_seconds, max_nodes, batch
    (expansions per transaction), search_batch (expansions chosen and
    simulated together, the task's search.batch; a resumed run keeps its
    own; from 4 on, rrt and sst pipeline two halves of search_batch // 2
    unless the task's search says "pipeline": true (halves of search_batch)
    or false (plain batches), docs/planner.md "Batches"); threads: threads
    simulating those batches (default 1; the nodes
    and the plan do not depend on it, docs/parallel.md; a clock function
    is then also called from the worker threads); resume=True continues
    the task's last unfinished run. progress: a function called about every 0.5 s with a
    dict (nodes, expansions, expansions_per_second, best_distance (m),
    best_cost, elapsed (s)); an exception it raises stops the search (the
    run is committed as "interrupted", resumable) and is raised. clock: a
    function returning seconds for the time limit and the progress
    reports (default: the monotonic wall clock). Ctrl-C stops the search
    after the action it simulates (status "interrupted", resumable).

    Returns a Result with the JSON's keys: status ("solved", "not_found",
    "limit", "interrupted", "failed_expansions"), run_id, plan_id (None
    without a plan), planner, nodes, expansions, lcp_solves, seconds, cost,
    length, resumed, steps, lemke_pivots, fallbacks, rejected, duplicates,
    failed_expansions, failures {outcome: count}, actions_exhausted (True:
    with search.fresh_actions every node had tried all its actions, status
    "limit", or "solved" with sst's plan so far), best_distance, best_node,
    store_seconds, database. Bad input (the task, a database of another
    kind) and storage failures raise Error."""
    t, path = _task(task, base_dir)
    o = L.plan_defaults()
    o.resume = int(bool(resume))
    if seed is not None:
        if not (isinstance(seed, int) and 0 <= seed < 1 << 64):
            raise Error("input", "seed: expected a whole number from 0 to "
                        "18446744073709551615, got %r" % (seed,))
        o.has_seed, o.seed = 1, seed
    if method is not None:
        if method not in ("astar", "rrt", "sst"):
            raise Error("input", "unknown method %r: expected astar, rrt or sst" % (method,))
        o.method = method.encode()
    for key, val, lo, hi, kind in (("max_seconds", max_seconds, 1e-6, 1e7, (int, float)),
                                   ("max_nodes", max_nodes, 1, 100000000, int),
                                   ("batch", batch, 1, 1 << 30, int),
                                   ("search_batch", search_batch, 1, 4096, int),
                                   ("threads", threads, 1, 256, int)):
        if val is None:
            continue
        if not (isinstance(val, kind) and not isinstance(val, bool) and lo <= val <= hi):
            raise Error("input", "%s must be a number in [%g, %g], got %r" % (key, lo, hi, val))
        setattr(o, key, val)
    path_b = path.encode() if path else None
    o.task_path = path_b
    cancel = c_int(0)
    o.cancel = ctypes.pointer(cancel)

    raised = []

    def on_progress(ctx, p):
        if progress is None or raised:
            return
        q = ctypes.cast(p, ctypes.POINTER(L.CPlanProgress))[0]
        try:
            progress({k: getattr(q, k) for k, _ in L.CPlanProgress._fields_})
        except BaseException as e:  # noqa: BLE001 - never unwind through C:
            raised.append(e)        # stop the search (committed, resumable)
            cancel.value = 1        # and raise it once the call returns

    cb = L.PLAN_PROGRESS(on_progress)
    o.progress = cb
    if clock is not None:
        ccb = L.PLAN_CLOCK(lambda ctx: float(clock()))
        o.clock = ctypes.cast(ccb, c_void_p)
    st = _open_store(db, False)
    try:
        r = L.CPlanResult()
        err = L.CError()
        with _Cancel(cancel):
            s = L.plan_task(st, t._buf, byref(o), byref(r), byref(err))
        if raised:
            raise raised[0]
        if s in (3, 4):  # CP_PLAN_BAD_INPUT, CP_PLAN_FAILED
            where = err.where.decode(errors="replace")
            raise Error(L.error_code_name(err.code).decode(), err.msg.decode(errors="replace"),
                        where, path if where else None)
        res = Result()
        res["status"] = L.plan_status_name(s).decode()
        res["run_id"] = r.run_id
        res["plan_id"] = r.plan_id if r.plan_id >= 0 else None
        res["planner"] = r.planner.decode()
        res["nodes"] = r.nodes
        res["expansions"] = r.stats.expansions
        res["lcp_solves"] = r.stats.lcp_solves
        res["seconds"] = r.seconds
        res["cost"] = L.num(r.cost)
        res["length"] = r.length
        res["resumed"] = bool(r.resumed)
        res["steps"] = r.stats.steps
        res["lemke_pivots"] = r.stats.pivots
        res["fallbacks"] = r.stats.fallbacks
        res["rejected"] = r.stats.rejected
        res["duplicates"] = r.stats.duplicates
        res["failed_expansions"] = r.failed
        res["actions_exhausted"] = bool(r.actions_exhausted)
        res["failures"] = {L.expand_outcome_name(k).decode(): r.failed_by[k]
                           for k in range(len(r.failed_by)) if L.expand_outcome_is_failure(k)}
        res["best_distance"] = L.num(r.best_distance)
        res["best_node"] = r.best_node if r.best_node >= 0 else None
        res["store_seconds"] = r.store_seconds
        res["database"] = os.fspath(db)
        return res
    finally:
        L.store_close(st)


def benchmark(task, runs, planners=None, db="complan.sqlite", max_seconds=None, seed=None,
              base_dir=None):
    """Repeated runs into OMPL's benchmark tables (`complan plan --benchmark
    RUNS --json`, docs/planner.md): runs per planner with seeds seed,
    seed+1, ... (seed: the task's unless given); planners: a list of
    "astar", "rrt", "sst" (None: the task's method); max_seconds per run
    (None: the task's limit). Every run is also an ordinary search run in
    db. Returns the summary read back from OMPL's tables, as the command
    prints it: a Result {"experiment": id, "planners": [{"planner", "runs",
    "solved", "time" (s), "best_cost", "graph_states", "expansions",
    "lcp_solves", "simulation_steps"}]} (means over the runs)."""
    if not (isinstance(runs, int) and 1 <= runs <= 100000):
        raise Error("input", "runs must be a number of runs in [1, 100000], got %r" % (runs,))
    names = list(planners) if planners is not None else []
    for m in names:
        if m not in ("astar", "rrt", "sst"):
            raise Error("input", "unknown planner %r: expected astar, rrt or sst" % (m,))
    if planners is not None and not 1 <= len(names) <= 7:
        raise Error("input", "planners: expected 1 to 7 planners, got %d" % len(names))
    if max_seconds is not None and not (isinstance(max_seconds, (int, float))
                                        and 1e-6 <= max_seconds <= 1e7):
        raise Error("input", "max_seconds must be a number in [1e-06, 1e+07], got %r"
                    % (max_seconds,))
    t, path = _task(task, base_dir)
    if seed is not None:
        if not (isinstance(seed, int) and 0 <= seed < 1 << 64):
            raise Error("input", "seed: expected a whole number from 0 to "
                        "18446744073709551615, got %r" % (seed,))
        L.set_field(t._ptr, "cp_task.seed", ctypes.c_uint64, seed)
    pw = c_void_p()
    err = L.CError()
    if L.plan_world_create(t._buf, 1, byref(pw), byref(err)):
        L.raise_error(err, path)
    st = None
    try:
        st = _open_store(db, False)
        lst = (c_char_p * (len(names) + 1))(*[m.encode() for m in names], None)
        bo = L.CBenchOptions(runs=runs, planners=lst if names else None,
                             max_seconds=float(max_seconds or 0),
                             task_path=path.encode() if path else None)
        eid = c_int64(-1)
        s = L.plan_benchmark(st, t._buf, L.plan_world_problem(pw), L.plan_world_start(pw),
                             L.plan_world_options(pw), byref(bo), byref(eid), byref(err))
        if s:
            raise Error(L.error_code_name(err.code).decode(), err.msg.decode(errors="replace"),
                        err.where.decode(errors="replace"), path)
        doc = c_void_p()
        if L.store_bench_summary(st, eid.value, byref(doc)) or not doc.value:
            raise Error("io", "%s: cannot summarise the benchmark" % os.fspath(db))
        return Result(_json_doc(doc, os.fspath(db)))
    finally:
        if st:
            L.store_close(st)
        L.plan_world_destroy(pw)


class Database:
    """A planner database (docs/database.md), opened read-only:
    runs(), plans(), plan(id) and nodes(run) read it through planner/store's
    read API. Use it as a context manager, or close() it."""

    def __init__(self, path="complan.sqlite"):
        self._st = None
        self.path = os.fspath(path)
        self._st = _open_store(self.path, True)

    def close(self):
        if self._st and L.store_close is not None:
            L.store_close(self._st)
        self._st = None

    __del__ = close

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _live(self):
        if not self._st:
            raise Error("input", "the database %s is closed" % self.path)
        return self._st

    def runs(self):
        """Every search run with its plans, as `complan plans --json` lists
        them: [{"id", "task_id", "task_hash", "task_path", "planner",
        "search_batch", "search_pipeline", "search_fresh_actions",
        "status", "seed", "seconds", "nodes", "expansions", "lcp_solves",
        "plans": [{"id", "node", "cost", "length", "duration"}]}];
        search_batch is a pipelined run's half (search_pipeline True), else
        its whole batch; search_fresh_actions True for a rrt or sst run that
        never simulated a (node, action) pair twice."""
        st = self._live()
        doc = c_void_p()
        s = L.store_list(st, byref(doc))
        if s:
            raise _store_error(st, s)
        return _json_doc(doc, self.path)["runs"]

    def plans(self):
        """Every plan: [{"id", "run", "node", "cost", "length", "duration"}]."""
        return [dict(p, run=r["id"]) for r in self.runs() for p in r["plans"]]

    def plan(self, plan_id=None):
        """A plan's trajectory at its nodes (start first): a Result with
        plan, run, length and the arrays states (length+1, state_size),
        time (length+1,) (s), cost (length+1,) accumulated, action
        (length,) the task's action indices, values (length, n_inputs)
        the actions' input values, node (length+1,) the node ids, and the
        names state_names and input_names. plan_id None: the latest."""
        st = self._live()
        rp = c_void_p()
        err = L.CError()
        s = L.replay_open(st, int(plan_id or 0), byref(rp), byref(err))
        if s:
            raise Error(L.error_code_name(err.code).decode(), err.msg.decode(errors="replace"),
                        err.where.decode(errors="replace"), self.path)
        try:
            task = L.replay_task(rp)
            names = state_names(task + L.offset("cp_task.scene"))
            inputs = _input_names(task)
            pid = L.replay_plan_id(rp)
        finally:
            L.replay_close(rp)
        run = c_int64()
        ids = ctypes.POINTER(c_long)()
        n = c_long()
        s = L.store_plan_nodes(st, pid, byref(run), byref(ids), byref(n))
        if s:
            raise _store_error(st, s)
        try:
            node_ids = [ids[k] for k in range(n.value)]
        finally:
            L.c_free(ids)
        size, ni = len(names), len(inputs)
        states = np.empty((len(node_ids), size))
        values = np.zeros((max(len(node_ids) - 1, 0), ni))
        t, cost, act = (np.empty(len(node_ids)), np.empty(len(node_ids)),
                        np.empty(max(len(node_ids) - 1, 0), dtype=np.int64))
        v = (c_double * max(ni, 1))()
        nv = c_int()
        node = L.CSearchNode()
        for k, nid in enumerate(node_ids):
            row = states[k]
            s = L.store_load_node(st, run.value, nid, byref(node), row.ctypes.data_as(L.dptr),
                                  size, v, ni, byref(nv))
            if s:
                raise _store_error(st, s)
            t[k], cost[k] = node.time, node.cost
            if k:
                act[k - 1] = node.action
                values[k - 1] = v[:ni]
        r = Result(plan=pid, run=run.value, length=len(node_ids) - 1)
        r.states, r.time, r.cost, r.action, r.values = states, t, cost, act, values
        r.node = np.array(node_ids, dtype=np.int64)
        r.state_names, r.input_names = names, inputs
        return r

    def nodes(self, run_id):
        """Every node of a run (the explored tree), in id order: a Result
        with the arrays id, parent (-1 for the start), depth, action (-1
        for the start), time (s), cost, goal_distance (m), steps,
        lcp_solves, flags, states (N, state_size), and the lists outcome
        (names) and message (rejection reasons, "" when none)."""
        st = self._live()
        run = ctypes.create_string_buffer(L.abi_size(b"cp_store_run"))
        s = L.store_load_run(st, int(run_id), run)
        if s:
            raise _store_error(st, s)
        base = ctypes.addressof(run)
        L.c_free(L.field(base, "cp_store_run.options", c_void_p))
        size = L.field(base, "cp_store_run.state_size", c_int)
        cols = {k: [] for k in ("id", "parent", "depth", "action", "time", "cost",
                                "goal_distance", "steps", "lcp_solves", "flags",
                                "outcome", "message")}
        xs = []

        def on_node(ctx, nd, x, warm, warm_size):
            q = nd[0]
            for k in cols:
                if k == "outcome":
                    cols[k].append(L.expand_outcome_name(q.outcome).decode())
                elif k == "message":
                    cols[k].append((q.message or b"").decode(errors="replace"))
                else:
                    cols[k].append(getattr(q, k))
            xs.append(np.ctypeslib.as_array(x, shape=(size,)).copy())
            return 0

        s = L.store_load_nodes(st, int(run_id), L.NODE_FN(on_node), None)
        if s:
            raise _store_error(st, s)
        r = Result(run=int(run_id), nodes=len(xs))
        for k, vals in cols.items():
            if k in ("outcome", "message"):
                setattr(r, k, vals)
            else:
                dt = np.float64 if k in ("time", "cost", "goal_distance") else np.int64
                setattr(r, k, np.array(vals, dtype=dt))
        r.states = np.array(xs).reshape(len(xs), size)
        return r
