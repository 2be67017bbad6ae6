"""Scenes (models/scene.h, docs/formats.md): loaded from a file or built
from a Python dict in the scene JSON format."""
import ctypes
import json
import os
from ctypes import byref

from . import _lib as L

__all__ = ["Scene"]


class Scene:
    """A parsed and checked scene. Make one with Scene.load(path) or
    Scene.from_dict(d); a World copies it, so a Scene may make many worlds."""

    def __init__(self):
        raise TypeError("use Scene.load(path) or Scene.from_dict(d)")

    @classmethod
    def _empty(cls):
        s = object.__new__(cls)
        s._buf = ctypes.create_string_buffer(L.SCENE_SIZE)
        s._ok = False
        s.path = None
        return s

    @staticmethod
    def _options(check_normal_speed):
        o = L.scene_options_defaults()
        o.check_normal_speed = 1 if check_normal_speed else 0
        return o

    @classmethod
    def load(cls, path, check_normal_speed=True):
        """Reads a scene file (JSON; URDF and mesh paths relative to it).
        check_normal_speed=False accepts approaching contacts (they become
        impacts), as `complan simulate` does. Raises Error naming the file,
        the JSON path and what was expected."""
        s = cls._empty()
        s.path = str(path)
        err = L.CError()
        o = cls._options(check_normal_speed)
        if L.scene_load(s.path.encode(), byref(o), s._buf, byref(err)):
            L.raise_error(err, s.path)
        s._ok = True
        return s

    @classmethod
    def from_json(cls, text, base_dir=None, check_normal_speed=True):
        """Parses scene JSON text; base_dir resolves relative URDF and mesh
        paths (default: the current directory)."""
        if isinstance(text, str):
            text = text.encode()
        s = cls._empty()
        err = L.CError()
        o = cls._options(check_normal_speed)
        bd = os.fspath(base_dir).encode() if base_dir is not None else None
        if L.scene_parse(text, len(text), bd, byref(o), s._buf, byref(err)):
            L.raise_error(err)
        s._ok = True
        return s

    @classmethod
    def from_dict(cls, d, base_dir=None, check_normal_speed=True):
        """A scene from a dict in the scene file's format (docs/formats.md)."""
        try:
            text = json.dumps(d, allow_nan=False)
        except (TypeError, ValueError) as e:
            raise L.Error("input", "the scene dict is not JSON: %s" % e) from None
        return cls.from_json(text, base_dir, check_normal_speed)

    @property
    def _ptr(self):
        return ctypes.addressof(self._buf)

    def __del__(self):
        if getattr(self, "_ok", False) and L.scene_free is not None:
            L.scene_free(self._buf)
            self._ok = False
