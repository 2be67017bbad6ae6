"""complan from Python: LCPs, scenes and the simulator over the shared
libcomplan through ctypes, numpy arrays in and out (docs/python.md).

The library is found through the environment variable COMPLAN_LIB (a build
tree's libcomplan.so) or next to this package when installed.
"""
from ._lib import ENV_VAR, Error, lib_path
from . import lcp
from .scene import Scene
from .world import World

__version__ = "0.1.0"  # meson.build's project version (tests/python checks they agree)

__all__ = ["Error", "Scene", "World", "lcp", "lib_path", "ENV_VAR", "__version__"]
