"""Linear complementarity problems: solve, certify, load (docs/python.md).

M is an (n, n) float64 array (any order: a Fortran-ordered one is passed to
C without a copy, others are copied once into column-major), q an (n,)
float64 array. Results are float64 arrays of shape (n,).
"""
import ctypes
import time
from ctypes import byref, c_int, c_size_t, c_char_p

import numpy as np

from . import _lib as L
from ._lib import Error

__all__ = ["Result", "Problem", "solve", "certify", "load", "parse"]


class Result:
    """What a solve or certify reports.

    z, w: (n,) float64 arrays (None unless status == "solved"); status: the
    C status name ("solved", "secondary ray", "pivot cap", "iteration cap",
    "no strictly feasible point", "no solution" (proven by certify), "time
    limit", "numerical failure", "failed the solution check", "out of
    memory"); solved: status == "solved"; solver:
    the solver that produced the answer; iterations, starts; residuals: dict
    of complementarity (max |z_i w_i|), residual (||w - (Mz+q)||_inf), min_z,
    min_w; polished; route ("direct" or "regularised") and route_eps;
    reason (the detail when not solved); time_us: the mean wall time of one solve over the call's `repeat` solves (us); n.
    certify adds alpha, second ((z2, w2) or None), second_decided,
    mip_solves. document(): `complan lcp solve --json`'s (or `lcp certify
    --json`'s) document of this answer.
    """

    def __init__(self, info, z, w):
        self.status = L.lcp_status_name(info.status).decode()
        self.solved = info.status == 0
        self.solver = L.lcp_solver_name(info.solver).decode()
        self.iterations = info.iterations
        self.starts = info.starts
        self.z = z if self.solved else None
        self.w = w if self.solved else None
        self.residuals = {"complementarity": info.complementarity,
                          "residual": info.residual,
                          "min_z": info.min_z, "min_w": info.min_w}
        self.polished = bool(info.polished)
        self.reason = info.reason.decode(errors="replace")
        self.n = len(z)
        self.time_us = None
        # which route answered: "direct", or "regularised" (Lemke's
        # regularised route; route_eps the eps whose support held it)
        self.route = "direct" if self.solved else None
        self.route_eps = None
        self._certify = None  # certify: whether a second solution was asked for
        self._info = (info.status, info.complementarity, info.residual, info.min_z,
                      info.min_w)

    def document(self):
        """The command's JSON document (docs/outputs.md) of this answer as a
        dict: status ("solved", "no_solution", "failed"), solver, n, z, w,
        iterations, starts, complementarity, polished, residual, min_z,
        min_w, time_us, reason (unless solved); certify adds alpha and
        mip_overruled, and
        with second=True second ({"z", "w"} or None) and second_decided.
        Equal to the command's output but for the measured time_us."""
        status, compl, resid, min_z, min_w = self._info
        ok = self.solved
        vec = (lambda a: [L.num(x) for x in a])  # noqa: E731
        d = {"status": _WORDS.get(status, "failed"), "solver": self.solver, "n": self.n,
             "z": vec(self.z) if ok else None, "w": vec(self.w) if ok else None,
             "iterations": self.iterations, "starts": self.starts,
             "complementarity": L.num(compl) if ok else None,
             "polished": self.polished if ok else None,
             "residual": L.num(resid) if ok else None,
             "min_z": L.num(min_z) if ok else None, "min_w": L.num(min_w) if ok else None,
             "time_us": self.time_us, "route": self.route}
        if self.route_eps is not None:
            d["route_eps"] = L.num(self.route_eps)
        if not ok:
            d["reason"] = self.reason or L.lcp_status_name(status).decode()
        if self._certify is not None:
            d["alpha"] = L.num(self.alpha)
            d["mip_overruled"] = self.mip_overruled
            if self._certify and ok:
                d["second"] = None if self.second is None else {
                    "z": vec(self.second[0]), "w": vec(self.second[1])}
                d["second_decided"] = self.second_decided
        return d

    def __repr__(self):
        return "<complan.lcp.Result %s by %s, %d iterations>" % (
            self.status, self.solver, self.iterations)


# the command's status words (planner/cli/lcp.c): any other status is "failed"
_WORDS = {0: "solved", 5: "no_solution"}  # CP_LCP_SOLVED, CP_LCP_INFEASIBLE


def _repeat(repeat):
    if not (isinstance(repeat, int) and 1 <= repeat <= 1000000):
        raise Error("input", "repeat must be a whole number from 1 to 1000000, got %r"
                    % (repeat,))
    return repeat


class Problem:
    """An LCP read from a file: M (n, n) and q (n,) float64, name (or None)."""

    def __init__(self, M, q, name):
        self.M, self.q, self.name = M, q, name
        self.n = q.shape[0]

    def solve(self, solver="auto", **options):
        return solve(self.M, self.q, solver, **options)

    def certify(self, second=False, **options):
        return certify(self.M, self.q, second, **options)


def _arrays(M, q):
    try:
        M = np.asarray(M, dtype=np.float64)
        q = np.asarray(q, dtype=np.float64)
    except (TypeError, ValueError) as e:
        raise Error("input", "M and q must be arrays of numbers: %s" % e) from None
    if M.ndim != 2 or M.shape[0] != M.shape[1] or M.shape[0] < 1:
        raise Error("input", "M must be a square (n, n) array with n >= 1, got shape %s"
                    % (M.shape,))
    n = M.shape[0]
    if q.shape != (n,):
        raise Error("input", "q must have shape (%d,) to match M, got %s" % (n, q.shape))
    if not np.isfinite(M).all():
        i, j = np.argwhere(~np.isfinite(M))[0]
        raise Error("input", "M[%d, %d] is %r: expected a finite number" % (i, j, M[i, j]))
    if not np.isfinite(q).all():
        i = int(np.argwhere(~np.isfinite(q))[0][0])
        raise Error("input", "q[%d] is %r: expected a finite number" % (i, q[i]))
    return np.asfortranarray(M), np.ascontiguousarray(q), n


def _set_tol(opts, tol):
    if tol is None:
        return
    if not 0 < tol <= 1:
        raise Error("input", "tol must be in (0, 1], got %r" % (tol,))
    for s in opts:
        s.check.rel_tol = tol


def solve(M, q, solver="auto", tol=None, repeat=1, **options):
    """Solves z >= 0, w = M z + q >= 0, z'w = 0 with solver "auto" (Lemke,
    then FIP, more Lemke starts, then the MIP certificate), "lemke", "fip"
    or "certify". tol: relative tolerance of the acceptance check (default
    1e-6). options: fields of cp_solve_options, nested ones as dicts, e.g.
    lemke={"max_pivots": 500, "restarts": 0}, fip={"max_iter": 50},
    certify={"time_limit_s": 10}, extra_restarts=0. As `complan lcp solve`,
    Lemke's rescue pass, its classic pass and its regularised route are on
    (lemke={"rescue": 0, "classic": 0} and regularise=0 turn them off);
    route says which answered.
    repeat: solve that many times (1 to 10^6, `--repeat`) and report the
    mean time of one solve in time_us. Returns a Result."""
    M, q, n = _arrays(M, q)
    _repeat(repeat)
    opt = L.solve_defaults()
    opt.lemke.rescue = 1
    opt.lemke.classic = 1
    opt.regularise = 1
    s = c_int()
    if not isinstance(solver, str) or L.lcp_solver_parse(solver.encode(), byref(s)):
        raise Error("input", "unknown solver %r: expected auto, lemke, fip or certify"
                    % (solver,))
    opt.solver = s.value
    _set_tol((opt.lemke, opt.fip, opt.certify), tol)
    L.set_fields(opt, options, "solve options")
    z = np.empty(n)
    w = np.empty(n)
    info = L.CLcpInfo()
    trail = L.CSolveTrail()
    args = (None, n, M.ctypes.data_as(L.dptr), q.ctypes.data_as(L.dptr), byref(opt),
            z.ctypes.data_as(L.dptr), w.ctypes.data_as(L.dptr), byref(info), byref(trail))
    f = L.lcp_solve
    t0 = time.perf_counter()
    for _ in range(repeat):
        f(*args)
    dt = time.perf_counter() - t0
    r = Result(info, z, w)
    r.time_us = 1e6 * dt / repeat
    if r.solved and trail.route:
        r.route, r.route_eps = "regularised", trail.reg.eps
    return r


def certify(M, q, second=False, tol=None, repeat=1, **options):
    """Decides the LCP by the mixed-integer program of docs/math.md §5: a
    verified solution, or status "no solution" (proven, in floating point).
    second: also look for a solution with another support. options: fields
    of cp_certify_options (time_limit_s, alpha_tol, max_cuts). repeat: as
    in solve. Returns a Result with alpha, second ((z2, w2) or None),
    second_decided, mip_solves and mip_overruled (GLPK's "no solution"
    overruled by a verified Lemke solution: cp_certify_options.lemke_starts)."""
    M, q, n = _arrays(M, q)
    _repeat(repeat)
    opt = L.certify_defaults()
    _set_tol((opt,), tol)
    L.set_fields(opt, options, "certify options")
    opt.second = 1 if second else 0
    z, w, z2, w2 = (np.empty(n) for _ in range(4))
    res = L.CCertifyResult()
    info = L.CLcpInfo()
    p = lambda a: a.ctypes.data_as(L.dptr)  # noqa: E731
    args = (n, p(M), p(q), byref(opt), p(z), p(w), p(z2), p(w2), byref(res), byref(info))
    t0 = time.perf_counter()
    for _ in range(repeat):
        L.certify(*args)
    dt = time.perf_counter() - t0
    r = Result(info, z, w)
    r.time_us = 1e6 * dt / repeat
    r._certify = bool(second)
    r.alpha = res.alpha
    r.second = (z2, w2) if (r.solved and second and res.has_second) else None
    r.second_decided = bool(res.second_decided)
    r.mip_solves = res.mip_solves
    r.mip_overruled = bool(res.mip_overruled)
    return r


def _problem(lcp):
    n = lcp.n
    # column-major in C: the (n, n) C-order view of it is M transposed
    M = np.ctypeslib.as_array(lcp.M, shape=(n * n,)).reshape(n, n).T.copy()
    q = np.ctypeslib.as_array(lcp.q, shape=(n,)).copy()
    name = ctypes.string_at(lcp.name).decode() if lcp.name else None
    return Problem(M, q, name)


def parse(text, path=None):
    """Parses an LCP from text or bytes (JSON or Siconos .dat, by content)."""
    if isinstance(text, str):
        text = text.encode()
    lcp = L.CLcp()
    err = L.CError()
    if L.lcp_parse(text, len(text), byref(lcp), byref(err)):
        L.raise_error(err, path)
    try:
        return _problem(lcp)
    finally:
        L.lcp_free(byref(lcp))


def load(path):
    """Reads an LCP file (.json or Siconos .dat, told apart by content, as
    the CLI does). Returns a Problem; raises Error naming the file and the
    place on bad input."""
    path = str(path)
    size = c_size_t()
    err = L.CError()
    buf = L.read_file(path.encode(), byref(size), byref(err))
    if not buf:
        L.raise_error(err, path)
    try:
        lcp = L.CLcp()
        if L.lcp_parse(ctypes.cast(buf, c_char_p), size.value, byref(lcp), byref(err)):
            L.raise_error(err, path)
    finally:
        L.c_free(buf)
    try:
        return _problem(lcp)
    finally:
        L.lcp_free(byref(lcp))
