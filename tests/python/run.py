#!/usr/bin/env python3
"""Runs the Python package's tests (tests/python/test_*.py) with pytest;
meson's `python` suite calls it with COMPLAN_LIB and PYTHONPATH set
(meson.build). Skips (exit 77) with a message when numpy or pytest is
missing: install python3-numpy and python3-pytest (.ci/deps)."""
import os
import sys

missing = []
for mod in ("numpy", "pytest"):
    try:
        __import__(mod)
    except ImportError:
        missing.append(mod)
if missing:
    print("tests/python skipped: %s not importable by %s (Debian: python3-numpy, "
          "python3-pytest)" % (", ".join(missing), sys.executable))
    sys.exit(77)

import pytest  # noqa: E402

here = os.path.dirname(os.path.abspath(__file__))
sys.exit(pytest.main([here, "-q", "-p", "no:cacheprovider", "-rs"]))
