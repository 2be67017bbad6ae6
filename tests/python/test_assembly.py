"""complan.stability and complan.assemble: the answers of `complan
stability --json` and `complan assemble --json`; errors."""
import json
import os
import subprocess

import numpy as np
import pytest

import complan
from conftest import SCENES, cli_json


# Scenes decided well inside the MILPs' time limit (arch.json, which needs
# the whole minute here, would make the answer depend on the machine).
@pytest.mark.parametrize("name", ["stack.json", "tower.json", "incline_slide.json",
                                  "incline_rest.json", "gripper_box.json"])
def test_stability_equals_cli(name):
    path = os.path.join(SCENES, name)
    # no MILP time limit: the answer cannot depend on the machine's speed
    doc, rc = cli_json("stability", "--time-limit", "0", path)
    r = complan.stability(path, time_limit=0)
    assert dict(r) == doc
    k = len(doc["contacts"])
    assert r.force.shape == (k, 3) and r.force.dtype == np.float64
    # the same from a Scene object
    assert dict(complan.stability(complan.Scene.load(path, check_normal_speed=False),
                                  time_limit=0)) == doc


def test_motion_names_bodies_and_joints():
    r = complan.stability(os.path.join(SCENES, "gripper_box.json"), time_limit=0)
    assert r["kind"] == "weak" and r["motion"] is not None
    assert r.udot.shape == (6 + len(r["motion"]["joints"]),)
    assert r["moving"][0] == "box" and all("/" in m for m in r["moving"][1:])


def test_stability_node_limit_equals_cli():
    # incline_rest.json needs the MILPs: 3 nodes leave it undecided, the
    # same count as the command line's --node-limit, on any machine.
    path = os.path.join(SCENES, "incline_rest.json")
    doc, rc = cli_json("stability", "--node-limit", "3", path)
    r = complan.stability(path, time_limit=0, node_limit=3)
    assert dict(r) == doc
    assert r["kind"] == "stable_undecided" and 3 < r["mip_nodes"] <= 5


def test_stack_is_stable_with_the_weight_carried():
    path = os.path.join(SCENES, "stack.json")
    r = complan.stability(path, time_limit=0)
    assert r["stable"] and r["kind"] in ("strong", "weak")
    with open(path) as f:
        d = json.load(f)
    # the table carries the whole stack: the normal forces on bodies resting
    # on the fixed bodies add up to the total weight
    fixed = {b["name"] for b in d["bodies"] if b.get("fixed")}
    weight = -d["gravity"][2] * sum(b["mass"] for b in d["bodies"] if not b.get("fixed"))
    on_ground = [j for j, c in enumerate(r["contacts"]) if c["b"] in fixed or c["a"] in fixed]
    assert r.force[on_ground, 0].sum() == pytest.approx(weight, rel=1e-6)


def drop(doc):
    return {k: v for k, v in doc.items() if k not in ("seconds", "run_id")}


@pytest.mark.parametrize("name", ["stack.json", "no_sequence.json", "tower.json"])
def test_assemble_equals_cli(name, tmp_path):
    path = os.path.join(SCENES, name)
    doc, rc = cli_json("assemble", "--no-db", path)
    r = complan.assemble(path)
    assert drop(r) == drop(doc) and r["run_id"] is None
    assert r["seconds"] >= 0
    if r["status"] == "found":
        assert len(r["sequence"]) == len(r["steps"])


def test_assemble_stores_a_run(tmp_path):
    db = tmp_path / "a.sqlite"
    r = complan.assemble(os.path.join(SCENES, "stack.json"), db=db)
    assert r["status"] == "found" and r["run_id"] == 1 and db.exists()
    r2 = complan.assemble(complan.Scene.load(os.path.join(SCENES, "stack.json")), db=db,
                          directions=4)
    assert r2["run_id"] == 2 and r2["sequence"] == r["sequence"]


def test_assembly_errors(tmp_path):
    with pytest.raises(complan.Error) as e:
        complan.stability(tmp_path / "none.json")
    assert "none.json" in str(e.value)
    with pytest.raises(complan.Error, match="expected a complan.Scene"):
        complan.stability(3)
    with pytest.raises(complan.Error, match="time_limit"):
        complan.stability(os.path.join(SCENES, "stack.json"), time_limit=-1)
    for bad_nodes in (-1, 2.5, True):
        with pytest.raises(complan.Error, match="node_limit"):
            complan.stability(os.path.join(SCENES, "stack.json"), node_limit=bad_nodes)
    with pytest.raises(complan.Error, match="directions"):
        complan.assemble(os.path.join(SCENES, "stack.json"), directions=-2)
    bad = tmp_path / "bad.sqlite"
    bad.write_text("not a database at all, " * 100)
    with pytest.raises(complan.Error) as e:
        complan.assemble(os.path.join(SCENES, "stack.json"), db=bad)
    assert e.value.code in ("input", "io") and "bad.sqlite" in str(e.value)
    assert bad.read_text().startswith("not a database")


def test_assemble_page_equals_the_clis(tmp_path):
    path = os.path.join(SCENES, "stack.json")
    h1, h2 = tmp_path / "cli.html", tmp_path / "py.html"
    doc, rc = cli_json("assemble", "--no-db", "--html", str(h1), path)
    assert rc == 0
    r = complan.assemble(path, html=h2, title="complan assemble " + path)
    assert r["sequence"] == doc["sequence"] and h2.read_bytes() == h1.read_bytes()
    with pytest.raises(complan.Error) as e:
        complan.assemble(path, html=tmp_path / "no" / "x.html", db=tmp_path / "a.sqlite")
    assert "x.html" in str(e.value) and not (tmp_path / "a.sqlite").exists()


TASKS = os.path.join(os.path.dirname(SCENES), "..", "planner", "tasks", "assembly")


def drop_task(doc):
    """An assembly task's document without what differs between runs: the
    timing and the stored sequence's id (its database)."""
    return {k: v for k, v in doc.items() if k not in ("seconds", "sequence_id")}


def test_assemble_task_equals_cli(tmp_path):
    path = os.path.normpath(os.path.join(TASKS, "tower3.json"))
    doc, rc = cli_json("assemble", "--db", str(tmp_path / "cli.sqlite"), path)
    assert rc == 0 and doc["status"] == "solved" and doc["replay_verified"] is True
    r = complan.assemble(path, db=tmp_path / "py.sqlite")
    assert isinstance(r, complan.Result)
    assert drop_task(dict(r)) == drop_task(doc)
    assert sorted(r["order"]) == ["block0", "block1", "block2"] and len(r["stages"]) == 3
    assert r["sequence_id"] == doc["sequence_id"] == 1  # each the first in a new database
    # every certified stage placed within the task's tolerance
    with open(path) as f:
        task = json.load(f)
    for s in r["stages"]:
        assert s["certified"]
        assert s["pose_error"]["position"] <= task["tolerance"]["position"]
        assert s["pose_error"]["angle"] <= task["tolerance"]["angle"]
    # the same task as a dict (its scene path made absolute: a dict has no
    # file to resolve it from), without a database: nothing kept, no id
    task["assembly"] = os.path.join(os.path.dirname(path), task["assembly"])
    r2 = complan.assemble(task)
    assert r2["sequence_id"] is None
    assert drop_task(dict(r2)) == drop_task(doc)


def test_assemble_bad_task_names_the_json_path(tmp_path):
    path = os.path.normpath(os.path.join(TASKS, "tower3.json"))
    with open(path) as f:
        task = json.load(f)
    task["assembly"] = os.path.join(os.path.dirname(path), task["assembly"])
    task["staging"]["block1"]["position"] = [0.12, "zero", 0.02]
    with pytest.raises(complan.Error) as e:
        complan.assemble(task, db=tmp_path / "a.sqlite")
    assert e.value.code == "input" and e.value.where.startswith("staging.block1.position")
    assert not (tmp_path / "a.sqlite").exists()  # nothing written for a bad task
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(task))
    with pytest.raises(complan.Error) as e:
        complan.assemble(bad)
    assert e.value.path == str(bad) and e.value.where.startswith("staging.block1.position")
    # the CLI names the same place, exit status 2
    exe = os.environ.get("CP_COMPLAN")
    if exe:
        c = subprocess.run([exe, "assemble", "--db", str(tmp_path / "c.sqlite"), str(bad), "--json"],
                           capture_output=True, text=True, timeout=120)
        assert c.returncode == 2 and c.stdout == ""
        assert "%s: %s: %s" % (bad, e.value.where, e.value.message) in c.stderr
    # a task takes db only
    with pytest.raises(complan.Error, match="db and html only"):
        complan.assemble(path, directions=2)
    with pytest.raises(complan.Error, match="key \"assembly\""):
        complan.assemble({"staging": {}})


def test_progress_of_stability_and_assemble():
    """progress gets the command's --progress numbers: stability (done,
    total) after each exact MILP, assemble (explored, parts present) after
    each subassembly; the answers are those without it."""
    path = os.path.join(SCENES, "incline_rest.json")  # decided by 13 MILPs
    seen = []
    r = complan.stability(path, time_limit=0, progress=lambda d, t: seen.append((d, t)))
    assert r["method"] == "milp" and dict(r) == dict(complan.stability(path, time_limit=0))
    total = seen[0][1]
    assert seen == [(k, total) for k in range(1, len(seen) + 1)] and len(seen) <= total
    path = os.path.join(SCENES, "stack.json")
    seen = []
    r = complan.assemble(path, progress=lambda e, p: seen.append((e, p)))
    assert [e for e, _ in seen] == list(range(1, r["explored"] + 1))
    n = len(r["sequence"])
    assert seen[0] == (1, n) and all(1 <= p <= n for _, p in seen)

    def boom(*a):
        raise KeyError("stop")
    with pytest.raises(KeyError):
        complan.stability(os.path.join(SCENES, "incline_rest.json"), time_limit=0,
                          progress=boom)
    with pytest.raises(KeyError):
        complan.assemble(path, progress=boom)
    with pytest.raises(complan.Error, match="progress"):
        complan.stability(path, progress="no")
    with pytest.raises(complan.Error, match="progress"):
        complan.assemble(path, progress=1)
