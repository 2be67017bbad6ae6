"""Importing complan puts OpenBLAS on one thread, as the command-line tool
does (planner/cli/cli.c), so that Python's answers equal the CLI's bit for
bit whatever OPENBLAS_NUM_THREADS says (docs/python.md)."""
import os
import subprocess
import sys

import pytest

PROBE = (
    "import ctypes, sys\n"
    "import complan\n"
    "from complan import _lib\n"
    "f = _lib.lib.openblas_get_num_threads\n"
    "f.restype = ctypes.c_int\n"
    "print(f())\n")


def test_import_sets_one_blas_thread():
    if os.cpu_count() is None or os.cpu_count() < 2:
        pytest.skip("one core: OpenBLAS starts with one thread anyway")
    if "COMPLAN_LIB" not in os.environ:
        pytest.skip("COMPLAN_LIB is not set: run through meson test")
    env = dict(os.environ, OPENBLAS_NUM_THREADS="2")
    # control: OpenBLAS alone, loaded without complan, takes the variable's 2
    ctl = subprocess.run(
        [sys.executable, "-c",
         "import ctypes, os\n"
         "lib = ctypes.CDLL(os.environ['COMPLAN_LIB'])\n"
         "f = lib.openblas_get_num_threads\n"
         "f.restype = ctypes.c_int\n"
         "print(f())\n"],
        capture_output=True, text=True, env=env, timeout=60)
    if ctl.returncode != 0:
        pytest.skip("no OpenBLAS symbols reachable through libcomplan: %s" % ctl.stderr[-200:])
    assert ctl.stdout.strip() == "2", ctl.stdout + ctl.stderr
    r = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True,
                       env=env, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "1", r.stdout + r.stderr
