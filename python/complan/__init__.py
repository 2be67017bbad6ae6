"""complan from Python: LCPs, scenes, the simulator, contact problems,
stability and assembly, planning, the plan database and replay, over the
shared libcomplan through ctypes, numpy arrays in and out (docs/python.md).

The library is found through the environment variable COMPLAN_LIB (a build
tree's libcomplan.so) or next to this package when installed.
"""
from ._lib import ENV_VAR, Error, build, lib_path
from . import lcp
from .scene import Result, Scene
from .world import World, simulate
from .assembly import assemble, stability
from .planner import Database, Task, benchmark, plan
from .replaying import replay, replay_sequence
from .viewer import Viewer
from .study import experiment_paper

_glpk_sink = None  # the installed callback, kept alive


def set_glpk_output(fn):
    """Sends GLPK's terminal output (the MIP and LP solvers of certify,
    FIP and stability; what `--verbose` shows) to fn(text), e.g.
    sys.stderr.write; None drops it again (the default). Process-wide: set
    it before solving, not while another thread solves."""
    global _glpk_sink
    from . import _lib
    if fn is None:
        _lib.glpk_set_sink(_lib.GLPK_SINK(), None)
        _glpk_sink = None
        return
    if not callable(fn):
        raise Error("input", "set_glpk_output takes a function of one string, or None")

    def sink(ctx, text):
        try:
            fn(text.decode(errors="replace"))
        except Exception:  # noqa: BLE001 - never unwind through C
            pass

    _glpk_sink = _lib.GLPK_SINK(sink)
    _lib.glpk_set_sink(_glpk_sink, None)


# The library's version (meson.build's project version), read from the
# library itself: "complan 0.1.0 (release, gcc ...)".
__version__ = build.split()[1]

__all__ = ["Error", "Result", "Scene", "World", "simulate", "Viewer", "Task", "Database", "lcp", "plan", "benchmark",
           "replay", "replay_sequence",
           "stability", "assemble", "experiment_paper", "set_glpk_output", "lib_path", "build", "ENV_VAR", "__version__"]
