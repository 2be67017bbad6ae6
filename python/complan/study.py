"""The paper's computational study (experiments/study/study.h): Trinkle,
Pang, Sudarsky and Lo (1995) §6 reproduced, as `complan experiment paper`
runs it."""
import csv
import ctypes
import io
import os
from ctypes import byref

from . import _lib as L
from ._lib import Error
from .scene import Result

__all__ = ["experiment_paper"]


def _text(p):
    if not p:
        raise Error("nomem", "out of memory formatting the study's report")
    try:
        return ctypes.string_at(p).decode()
    finally:
        L.c_free(p)


def experiment_paper(out="experiments/results/paper", seed=None, problems=None, jobs=None,
                     time_limit=None, unique_time_limit=None, mip_all=False, data=True,
                     progress=None, node_limit=None, unique_node_limit=None):
    """Runs the study (`complan experiment paper`, README.md) and writes
    its reports under out (created): datasets.csv, table1.md/.csv,
    problems.md, summary.md, the SVG figures and, with data, every scene
    and LCP file. seed: the generator's (default 1995); problems: only the
    N smallest (default all 33); jobs: worker processes (default: the
    online cores; the answers do not depend on it); node_limit: the
    certificate MIP's limit per data set in branch-and-bound nodes (default
    10000); unique_node_limit: per certify call of the uniqueness search
    (default 2000); time_limit, unique_time_limit: their safety nets in
    seconds (defaults 300 and 60; the node limits decide, the same on any
    machine); mip_all: the certificate MIP on every data set;
    progress: a function called with (done, total) data sets.

    Returns a Result {"out", "headline"} (the command's printed summary)
    with the attributes rows (one dict per data set, the columns of
    datasets.csv as strings) and table1 (one dict per LCP size)."""
    o = L.paper_defaults()
    for key, val, field, lo, hi in (("seed", seed, "seed", 0, (1 << 64) - 1),
                                    ("problems", problems, "problems", 1, 33),
                                    ("jobs", jobs, "jobs", 1, 256),
                                    ("node_limit", node_limit, "node_limit", 1, 10**9),
                                    ("unique_node_limit", unique_node_limit,
                                     "unique_node_limit", 1, 10**9)):
        if val is None:
            continue
        if not (isinstance(val, int) and not isinstance(val, bool) and lo <= val <= hi):
            raise Error("input", "%s must be an integer in [%d, %d], got %r" % (key, lo, hi, val))
        setattr(o, field, val)
    for key, val, field in (("time_limit", time_limit, "time_limit_s"),
                            ("unique_time_limit", unique_time_limit, "unique_time_limit_s")):
        if val is None:
            continue
        if not (isinstance(val, (int, float)) and 0.01 <= val <= 86400):
            raise Error("input", "%s must be seconds in [0.01, 86400], got %r" % (key, val))
        setattr(o, field, float(val))
    o.mip_all = int(bool(mip_all))
    o.write_data = int(bool(data))
    out = os.fspath(out)

    def on_progress(ctx, done, total):
        if progress is not None:
            try:
                progress(done, total)
            except Exception:  # noqa: BLE001 - never unwind through C
                pass

    cb = L.PAPER_PROGRESS(on_progress)
    st = ctypes.create_string_buffer(L.abi_size(b"cp_paper_study"))
    err = L.CError()
    if L.paper_study_run(byref(o), out.encode(), b"complan.experiment_paper (Python)", cb, None,
                         st, byref(err)):
        where = err.where.decode(errors="replace")
        raise Error(L.error_code_name(err.code).decode(), err.msg.decode(errors="replace"),
                    where)
    try:
        r = Result(out=out, headline=_text(L.paper_format_headline(st, out.encode())))
        r.rows = list(csv.DictReader(io.StringIO(_text(L.paper_format_csv(st)))))
        r.table1 = list(csv.DictReader(io.StringIO(_text(L.paper_format_table1_csv(st)))))
        return r
    finally:
        L.paper_study_free(st)
