"""Output files written while simulating (planner/io): the atomic output
file (cp_outfile: a temporary file renamed into place, or nothing) and the
recorder of World.simulate's CSV and viewer page (`complan simulate --csv
--html`)."""
import ctypes
import os
from ctypes import byref

import numpy as np

from . import _lib as L
from ._lib import Error

__all__ = ["OutFile", "Recorder"]


class OutFile:
    """A file written whole or not at all (planner/io/outfile.h)."""

    def __init__(self, path):
        self.path = os.fspath(path)
        err = L.CError()
        self._o = L.outfile_open(self.path.encode(), byref(err))
        if not self._o:
            raise Error(L.error_code_name(err.code).decode(), err.msg.decode(errors="replace"),
                        path=self.path)
        self.stream = L.outfile_stream(self._o)

    def commit(self):
        o, self._o = self._o, None
        err = L.CError()
        if o and L.outfile_commit(o, byref(err)):
            raise Error(L.error_code_name(err.code).decode(), err.msg.decode(errors="replace"),
                        path=self.path)

    def discard(self):
        o, self._o = self._o, None
        if o and L.outfile_discard is not None:
            L.outfile_discard(o)

    __del__ = discard


class Recorder:
    """World.simulate's frames into a CSV (the state layout's columns, as
    `complan simulate --csv`) and a viewer page."""

    def __init__(self, world, csv, html, title):
        from .viewer import Viewer
        self.world, self.csv, self.html = world, None, html
        self.viewer, self.failed = None, None
        self._lay = None
        try:
            if csv is not None:
                sc = L.world_scene(world._w)
                self._lay = ctypes.create_string_buffer(L.LAYOUT_SIZE)
                if L.state_layout_init(self._lay, sc):
                    L.state_layout_free(self._lay)
                    self._lay = None
                    raise Error("nomem", "out of memory for the state layout")
                self._x = np.empty(world.state_size)
                self.csv = OutFile(csv)
                if L.csv_state_header(self.csv.stream, self._lay, sc):
                    raise Error("nomem", "out of memory writing the CSV header")
                L.c_fputc(10, self.csv.stream)
            if html is not None:
                self.viewer = Viewer(world, title=title)
        except BaseException:
            self.close(False)
            raise

    def frame(self, w, step, user):
        try:
            if self.csv:
                L.world_get_state(self.world._w, self._x.ctypes.data_as(L.dptr))
                L.csv_state_row(self.csv.stream, self._lay, self.world.time,
                                self._x.ctypes.data_as(L.dptr))
                L.c_fputc(10, self.csv.stream)
            if self.viewer:
                self.viewer.add_world(self.world)
            return 0
        except Error as e:  # the run stops: "stopped by the frame recorder"
            self.failed = e
            return -1

    def close(self, write):
        """Writes the page, then commits the CSV; the CSV is discarded when
        the page cannot be written (or write is False)."""
        try:
            if write and self.viewer:
                if self.failed is not None:
                    raise self.failed
                self.viewer.write(self.html)
            if write and self.csv:
                self.csv.commit()
        finally:
            if self.viewer:
                self.viewer.close()
            if self.csv:
                self.csv.discard()
            if self._lay is not None:
                L.state_layout_free(self._lay)
                self._lay = None
