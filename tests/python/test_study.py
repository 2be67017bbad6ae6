"""complan.experiment_paper: the study's answers equal `complan experiment
paper`'s on its smallest problems."""
import csv
import os

import pytest

import complan

# The answers, not the times (the study's timing columns end in _s or _ms).
ANSWERS = ["problem", "size", "nb", "nS", "nR", "mu", "lemke_status", "lemke_starts",
           "lemke_iters", "fip_status", "fip_iters", "auto_status", "certify", "unique"]


def read(path):
    with open(path) as f:
        return [{k: row[k] for k in ANSWERS} for row in csv.DictReader(f)]


def test_study_equals_cli(tmp_path):
    exe = os.environ.get("CP_COMPLAN")
    if not exe:
        pytest.skip("CP_COMPLAN is not set")
    import subprocess
    cli = tmp_path / "cli"
    p = subprocess.run([exe, "experiment", "paper", "--problems", "2", "--jobs", "1",
                        "--no-data", "--node-limit", "5000", "--unique-node-limit", "1000",
                        "--out", str(cli)], capture_output=True, text=True,
                       timeout=600)
    assert p.returncode == 0, p.stderr
    seen = []
    # work limits (nodes): the answers cannot depend on the machine's speed
    r = complan.experiment_paper(tmp_path / "py", problems=2, jobs=1, data=False,
                                 node_limit=5000, unique_node_limit=1000,
                                 progress=lambda d, t: seen.append((d, t)))
    assert r["out"] == str(tmp_path / "py")
    assert read(tmp_path / "py" / "datasets.csv") == read(cli / "datasets.csv")
    assert [{k: x[k] for k in ANSWERS} for x in r.rows] == read(cli / "datasets.csv")
    assert len(r.rows) == 20 and {x["mu"] for x in r.rows} == \
        {"%.1f" % (0.1 * k) for k in range(1, 11)}
    assert (tmp_path / "py" / "table1.csv").read_text() == (cli / "table1.csv").read_text()
    assert r["headline"].splitlines()[0] == p.stdout.splitlines()[0]
    assert seen and seen[-1] == (20, 20)
    assert not (tmp_path / "py" / "data").exists()


def test_study_errors(tmp_path):
    with pytest.raises(complan.Error, match="problems"):
        complan.experiment_paper(tmp_path, problems=0)
    with pytest.raises(complan.Error, match="time_limit"):
        complan.experiment_paper(tmp_path, time_limit=0)
    with pytest.raises(complan.Error, match="unique_node_limit"):
        complan.experiment_paper(tmp_path, unique_node_limit=0)
    with pytest.raises(complan.Error, match="node_limit"):
        complan.experiment_paper(tmp_path, node_limit=2.5)
    (tmp_path / "file").write_text("x")
    with pytest.raises(complan.Error) as e:
        complan.experiment_paper(tmp_path / "file" / "out", problems=1, jobs=1)
    assert "file" in str(e.value)
