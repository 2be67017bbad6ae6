"""complan from Python: LCPs, scenes, the simulator, contact problems,
stability and assembly, planning, the plan database and replay, over the
shared libcomplan through ctypes, numpy arrays in and out (docs/python.md).

The library is found through the environment variable COMPLAN_LIB (a build
tree's libcomplan.so) or next to this package when installed.
"""
from ._lib import ENV_VAR, Error, build, lib_path
from . import lcp
from .scene import Result, Scene
from .world import World
from .assembly import assemble, stability
from .planner import Database, Task, benchmark, plan
from .replaying import replay
from .viewer import Viewer
from .study import experiment_paper

# The library's version (meson.build's project version), read from the
# library itself: "complan 0.1.0 (release, gcc ...)".
__version__ = build.split()[1]

__all__ = ["Error", "Result", "Scene", "World", "Viewer", "Task", "Database", "lcp", "plan", "benchmark",
           "replay",
           "stability", "assemble", "experiment_paper", "lib_path", "build", "ENV_VAR", "__version__"]
