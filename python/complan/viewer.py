"""The viewer page (planner/view/viewer.h, docs/viewer.md): one
self-contained HTML file animating a scene's frames in the browser, as
`complan simulate --html` and `complan replay --html` write it."""
import ctypes
import os
from ctypes import byref, c_void_p

import numpy as np

from . import _lib as L
from ._lib import Error

__all__ = ["Viewer"]

_STATUS = {1: "input", 2: "nomem", 3: "io"}  # cp_viewer_status -> Error code


class Viewer:
    """Viewer(scene, title="complan", goal=None, tree=None)

    scene: a Scene or a World (its scene). goal: None or a dict {"body":
    name, "centre": (3,) m, "tolerance": m}, drawn as a sphere. tree: None
    or a dict {"points": (n, 3) world positions (m), "parent": (n,) indices
    (-1 for a root), "path": indices of the highlighted path, root first}.
    Add frames with add_world(world) (its state and last step's contacts)
    or add_frame(t, state); write(path) writes the page (atomically: a
    file that cannot be written leaves nothing)."""

    def __init__(self, scene, title="complan", goal=None, tree=None):
        self._v = None
        from .scene import Scene
        from .world import World
        if isinstance(scene, World):
            sc = L.world_scene(scene._w)
        elif isinstance(scene, Scene):
            sc = scene._ptr
        else:
            raise Error("input", "Viewer takes a complan.Scene or World, got %r"
                        % type(scene).__name__)
        self._create(sc, [scene], title, goal, tree)

    @classmethod
    def _of_scene_at(cls, scene_ptr, owner, title, goal, tree):
        """A viewer of the scene at scene_ptr, kept alive by owner."""
        v = cls.__new__(cls)
        v._v = None
        v._create(scene_ptr, [owner], title, goal, tree)
        return v

    def _create(self, sc, keep, title, goal, tree):
        self._keep = keep
        o = L.viewer_defaults()
        self._title = str(title).encode()
        o.title = self._title
        if goal is not None:
            try:
                self._goal_body = str(goal["body"]).encode()
                o.goal_centre[:] = [float(x) for x in goal["centre"]]
                o.goal_tolerance = float(goal["tolerance"])
            except (KeyError, TypeError, ValueError) as e:
                raise Error("input", "goal must be {'body', 'centre' (3 numbers), "
                            "'tolerance'}: %s" % e) from None
            o.has_goal = 1
            o.goal_body = self._goal_body
        if tree is not None:
            o.tree = ctypes.pointer(self._tree(tree))
        out = c_void_p()
        err = L.CError()
        s = L.viewer_create(sc, byref(o), byref(out), byref(err))
        if s:
            raise Error(_STATUS.get(s, "input"), err.msg.decode(errors="replace"),
                        err.where.decode(errors="replace"))
        self._v = out.value
        self._n = L.viewer_state_size(self._v)

    def _tree(self, tree):
        try:
            pts = np.ascontiguousarray(tree["points"], dtype=np.float64)
            par = np.ascontiguousarray(tree["parent"], dtype=np.intc)
            path = np.ascontiguousarray(tree.get("path", []), dtype=np.intc)
        except (KeyError, TypeError, ValueError) as e:
            raise Error("input", "tree must be {'points' (n, 3), 'parent' (n,), 'path'}: %s"
                        % e) from None
        n = par.shape[0]
        if pts.shape != (n, 3):
            raise Error("input", "tree points must have shape (%d, 3), got %s"
                        % (n, pts.shape))
        self._keep += [pts, par, path]
        return L.CViewerTree(n, pts.ctypes.data_as(L.dptr),
                             par.ctypes.data_as(ctypes.POINTER(ctypes.c_int)), len(path),
                             path.ctypes.data_as(ctypes.POINTER(ctypes.c_int)))

    def _check(self, s):
        if s:
            raise Error(_STATUS.get(s, "input"),
                        L.viewer_message(self._v).decode(errors="replace"))

    def add_world(self, world):
        """A frame of the world now: its time, state and the contacts (with
        forces) of its last step."""
        self._check(L.viewer_add_world(self._v, world._w))

    def add_frame(self, t, state, contacts=None):
        """A frame at time t (s) of a state laid out as World.state.
        contacts: None, or a pointer and count from C (internal)."""
        x = np.ascontiguousarray(state, dtype=np.float64)
        if x.shape != (self._n,):
            raise Error("input", "state must have shape (%d,), got %s" % (self._n, x.shape))
        k, ptr = contacts if contacts is not None else (0, None)
        self._check(L.viewer_add_frame(self._v, float(t), x.ctypes.data_as(L.dptr), k, ptr))

    @property
    def frame_count(self):
        return L.viewer_frame_count(self._v)

    def write(self, path):
        """Writes the page to path (the whole file or nothing)."""
        self._check(L.viewer_write(self._v, os.fspath(path).encode()))

    def close(self):
        if self._v and L.viewer_destroy is not None:
            L.viewer_destroy(self._v)
        self._v = None

    __del__ = close
