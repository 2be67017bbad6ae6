"""docs/python.md's worked example runs as written: headless (matplotlib's
Agg), in a scratch folder, and draws a picture that is not blank."""
import os
import re
import subprocess
import sys

import pytest

from conftest import ROOT

MARKER = "<!-- example: tests/python/test_example.py runs the next block -->"


def example_code():
    with open(os.path.join(ROOT, "docs", "python.md")) as f:
        text = f.read()
    assert text.count(MARKER) == 1, "docs/python.md lost its example marker"
    m = re.match(r"\s*```python\n(.*?)```", text.split(MARKER)[1], re.S)
    assert m, "no python block after the example marker"
    return m.group(1)


def test_worked_example_runs_and_plots(tmp_path):
    pytest.importorskip("matplotlib")
    code = example_code()
    assert "complan.plan(" in code and "savefig" in code and "World(" in code
    env = dict(os.environ, MPLBACKEND="Agg", MPLCONFIGDIR=str(tmp_path / "mpl"))
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
    out = r.stdout.splitlines()
    # the printed facts: the resting box's weight (0.5 kg * 9.81), a plan,
    # a verified replay
    assert out[0] == "solved normal forces sum to 4.9050 N"
    assert out[2].startswith("solved by astar")
    assert out[3].endswith("verified: True")
    png = tmp_path / "push.png"
    assert png.exists() and (tmp_path / "push.sqlite").exists()
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10000
    import matplotlib.image
    import numpy as np
    img = matplotlib.image.imread(str(png))
    assert img.shape[0] >= 300 and img.shape[1] >= 500
    # not blank: many pixels differ from the background, in several colours
    rgb = img[:, :, :3].reshape(-1, 3)
    assert (rgb != rgb[0]).any(axis=1).mean() > 0.02
    assert len(np.unique(np.round(rgb * 255).astype(int), axis=0)) > 20
