"""complan.stability and complan.assemble: the answers of `complan
stability --json` and `complan assemble --json`; errors."""
import json
import os

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
