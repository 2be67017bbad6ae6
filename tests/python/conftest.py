"""Shared helpers of the Python package's tests: the CLI, the data."""
import json
import os
import subprocess

import pytest

ROOT = os.environ.get("CP_SOURCE_ROOT",
                      os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
DATA = os.environ.get("CP_TEST_DATA", os.path.join(ROOT, "tests", "data"))
SCENES = os.path.join(ROOT, "models", "scenes")


def cli_json(*args):
    """Runs the complan executable (CP_COMPLAN) and parses its --json output."""
    exe = os.environ.get("CP_COMPLAN")
    if not exe:
        pytest.skip("CP_COMPLAN (the complan executable) is not set: run through meson test")
    # a guard against a hung command, not a measure: a sanitizer build runs
    # several times slower (and the machine may be shared)
    timeout = 900 if os.environ.get("COMPLAN_SANITIZED") == "1" else 120
    r = subprocess.run([exe, *args, "--json"], capture_output=True, text=True, timeout=timeout,
                       env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    assert r.stdout, "complan %s printed nothing: %s" % (" ".join(args), r.stderr)
    return json.loads(r.stdout), r.returncode


# A sanitizer build (meson.build sets COMPLAN_SANITIZED): AddressSanitizer's
# quarantine holds freed memory, so resident memory says nothing of leaks.
no_rss_under_sanitizers = pytest.mark.skipif(
    os.environ.get("COMPLAN_SANITIZED") == "1",
    reason="resident memory is not a leak measure under AddressSanitizer")


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class _Mallinfo2(__import__("ctypes").Structure):
    _fields_ = [(k, __import__("ctypes").c_size_t) for k in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks",
                 "uordblks", "fordblks", "keepcost")]


def heap_bytes():
    """Bytes the C heap has handed out and not got back (glibc's mallinfo2:
    in-use ordinary chunks plus mmapped ones). Unlike the resident size it
    sees a small leak even where freed memory of other sizes is reused."""
    import ctypes
    f = ctypes.CDLL(None).mallinfo2
    f.restype = _Mallinfo2
    m = f()
    return m.uordblks + m.hblkhd


def assert_no_leak(rounds, warm, n, what):
    """Runs rounds(warm) to settle the caches, then rounds(n): the C heap
    may grow by under 32 KiB and the resident size by under 1 MiB."""
    rounds(warm)
    before, rss = heap_bytes(), rss_bytes()
    rounds(n)
    grown = heap_bytes() - before
    assert grown < 32 << 10, "the heap grew by %d bytes over %d %s" % (grown, n, what)
    assert rss_bytes() - rss < 1 << 20, "RSS grew over %d %s" % (n, what)
