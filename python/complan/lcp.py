"""Linear complementarity problems: solve, certify, load (docs/python.md).

M is an (n, n) float64 array (any order: a Fortran-ordered one is passed to
C without a copy, others are copied once into column-major), q an (n,)
float64 array. Results are float64 arrays of shape (n,).
"""
import ctypes
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
    min_w; polished; reason (the detail when not solved). certify adds alpha,
    second ((z2, w2) or None), second_decided, mip_solves.
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

    def __repr__(self):
        return "<complan.lcp.Result %s by %s, %d iterations>" % (
            self.status, self.solver, self.iterations)


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


def solve(M, q, solver="auto", tol=None, **options):
    """Solves z >= 0, w = M z + q >= 0, z'w = 0 with solver "auto" (Lemke,
    then FIP, more Lemke starts, then the MIP certificate), "lemke", "fip"
    or "certify". tol: relative tolerance of the acceptance check (default
    1e-6). options: fields of cp_solve_options, nested ones as dicts, e.g.
    lemke={"max_pivots": 500, "restarts": 0}, fip={"max_iter": 50},
    certify={"time_limit_s": 10}, extra_restarts=0. As `complan lcp solve`,
    Lemke's rescue pass is on (lemke={"rescue": 0} turns it off).
    Returns a Result."""
    M, q, n = _arrays(M, q)
    opt = L.solve_defaults()
    opt.lemke.rescue = 1
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
    L.lcp_solve(None, n, M.ctypes.data_as(L.dptr), q.ctypes.data_as(L.dptr), byref(opt),
                z.ctypes.data_as(L.dptr), w.ctypes.data_as(L.dptr), byref(info), None)
    return Result(info, z, w)


def certify(M, q, second=False, tol=None, **options):
    """Decides the LCP by the mixed-integer program of docs/math.md §5: a
    verified solution, or status "no solution" (proven, in floating point).
    second: also look for a solution with another support. options: fields
    of cp_certify_options (time_limit_s, alpha_tol, max_cuts). Returns a
    Result with alpha, second ((z2, w2) or None), second_decided and
    mip_solves."""
    M, q, n = _arrays(M, q)
    opt = L.certify_defaults()
    _set_tol((opt,), tol)
    L.set_fields(opt, options, "certify options")
    opt.second = 1 if second else 0
    z, w, z2, w2 = (np.empty(n) for _ in range(4))
    res = L.CCertifyResult()
    info = L.CLcpInfo()
    p = lambda a: a.ctypes.data_as(L.dptr)  # noqa: E731
    L.certify(n, p(M), p(q), byref(opt), p(z), p(w), p(z2), p(w2), byref(res), byref(info))
    r = Result(info, z, w)
    r.alpha = res.alpha
    r.second = (z2, w2) if (r.solved and second and res.has_second) else None
    r.second_decided = bool(res.second_decided)
    r.mip_solves = res.mip_solves
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
