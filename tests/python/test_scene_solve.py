"""Scene.contacts() and Scene.solve(): the answers of `complan contacts
--json` and `complan solve --json`, bit for bit; shapes, analytic checks,
errors."""
import os

import numpy as np
import pytest

import complan
from conftest import SCENES, assert_no_leak, cli_json, no_rss_under_sanitizers


def scene(name, **kw):
    return complan.Scene.load(os.path.join(SCENES, name), **kw)


@pytest.mark.parametrize("name", ["box_on_table.json", "finger_push.json",
                                  "softfinger_spin.json", "stack.json"])
def test_contacts_equal_cli(name):
    doc, rc = cli_json("contacts", os.path.join(SCENES, name))
    assert rc == 0
    r = scene(name).contacts()
    assert dict(r) == doc
    k = len(doc["contacts"])
    assert r.point.shape == r.normal.shape == (k, 3) and r.point.dtype == np.float64
    assert r.depth.shape == r.mu.shape == (k,)
    assert r.a == [c["a"] for c in doc["contacts"]]
    np.testing.assert_allclose(np.linalg.norm(r.normal, axis=1), 1.0, rtol=1e-12)


SOLVES = [("box_on_table.json", {}), ("box_sliding.json", {}),
          ("incline_slide.json", {}), ("finger_push.json", {}),
          ("softfinger_spin.json", {}), ("gripper_box.json", {}),
          ("box_on_table.json", {"friction": "cone"}),
          ("incline_rest.json", {"friction": "cone"}),
          ("box_sliding.json", {"solver": "lemke"}),
          ("painleve_rod.json", {"solver": "certify"})]


@pytest.mark.parametrize("name,kw", SOLVES)
def test_solve_equals_cli(name, kw):
    args = ["solve"]
    for k, v in kw.items():
        args += ["--" + k, v]
    doc, rc = cli_json(*args, os.path.join(SCENES, name))
    r = scene(name).solve(**kw)
    assert dict(r) == doc
    if r["status"] == "solved":
        nb, nj, k = len(doc["bodies"]), len(doc["joints"]), len(doc["contacts"])
        assert r.udot.shape == (6 * nb + nj,) and r.udot.dtype == np.float64
        assert r.effort.shape == (nj,) and r.force.shape == (k, 3)
        assert r.contact_acceleration.shape == (k, 3) and len(r.outcome) == k
        assert r.joint_names == [j["name"] for j in doc["joints"]]


def test_quasistatic_equals_cli():
    path = os.path.join(SCENES, "quasistatic_push.json")
    doc, rc = cli_json("solve", "--quasistatic", path)
    assert rc == 0
    r = complan.Scene.load(path, check_normal_speed=False).solve(quasistatic=True)
    assert dict(r) == doc and r["quasistatic"] is True
    assert r.velocity.shape == (6 * len(doc["bodies"]) + len(doc["joints"]),)
    assert r.contact_velocity.shape == r.force.shape == (len(doc["contacts"]), 3)


def test_resting_box_forces_balance_its_weight():
    # a box at rest on a table: zero acceleration, normal forces summing to m g
    r = scene("box_on_table.json").solve()
    assert r["status"] == "solved"
    np.testing.assert_allclose(r.udot, 0.0, atol=1e-9)
    mass = 1.0
    with open(os.path.join(SCENES, "box_on_table.json")) as f:
        import json
        d = json.load(f)
    mass = [b for b in d["bodies"] if not b.get("fixed")][0]["mass"]
    g = -d["gravity"][2]
    assert r.force[:, 0].sum() == pytest.approx(mass * g, rel=1e-9)
    assert set(r.outcome) == {"rolling"}


def test_sliding_box_decelerates_by_mu_g():
    import json
    with open(os.path.join(SCENES, "box_sliding.json")) as f:
        d = json.load(f)
    r = complan.Scene.from_dict(d).solve()
    mu = d["friction"]["default"]
    g = -d["gravity"][2]
    v = [b for b in d["bodies"] if not b.get("fixed")][0]["velocity"]
    v = np.array(v[:3])
    a = r.udot[:3]
    # Coulomb: the sliding box decelerates along -v by mu g
    assert np.dot(a, v) / np.linalg.norm(v) == pytest.approx(-mu * g, rel=1e-9)


def test_solve_errors():
    s = scene("box_on_table.json")
    with pytest.raises(complan.Error, match="unknown friction 'coulomb'"):
        s.solve(friction="coulomb")
    with pytest.raises(complan.Error, match="friction 'cone' is not supported"):
        s.solve(friction="cone", quasistatic=True)
    with pytest.raises(complan.Error, match="unknown solver"):
        s.solve(solver="simplex")
    with pytest.raises(complan.Error, match="cone_tol"):
        s.solve(friction="cone", cone_tol=2.0)
    with pytest.raises(complan.Error, match="unknown option 'pivots'"):
        s.solve(pivots=3)


@no_rss_under_sanitizers
def test_repeated_solves_leak_nothing():
    s = scene("finger_push.json")

    def rounds(n):
        for _ in range(n):
            s.solve()
            s.solve(quasistatic=True)
            s.contacts()
            complan.stability(s, time_limit=0)

    # a result left unfreed is ~500 bytes a call: 500 kB here
    assert_no_leak(rounds, 50, 1000, "solves")


def test_scene_warnings_as_the_cli_prints_them(tmp_path):
    from conftest import DATA
    urdf = os.path.join(DATA, "robots", "habits.urdf")
    d = {"bodies": [{"name": "table", "fixed": True,
                     "shape": {"type": "plane", "normal": [0, 0, 1], "offset": 0}}],
         "manipulators": [{"name": "h", "urdf": urdf}]}
    p = tmp_path / "s.json"
    import json
    p.write_text(json.dumps(d))
    import subprocess
    err = subprocess.run([os.environ["CP_COMPLAN"], "contacts", str(p)], capture_output=True,
                         text=True).stderr
    w = complan.Scene.load(p).warnings
    assert w and [l for l in err.splitlines() if "warning" in l] == \
        ["complan: %s: warning: %s" % (p, x) for x in w]
    assert "limit" in w[0] and scene("box_on_table.json").warnings == []


def test_glpk_output_goes_where_asked():
    """GLPK's messages (the stability LPs talk) reach the function, the same
    text `complan stability --verbose` writes to stderr; None drops them."""
    import subprocess
    path = os.path.join(SCENES, "stack.json")
    err = subprocess.run([os.environ["CP_COMPLAN"], "stability", "--verbose", "--time-limit",
                          "0", path], capture_output=True, text=True).stderr
    got = []
    complan.set_glpk_output(got.append)
    try:
        a = complan.stability(path, time_limit=0)
    finally:
        complan.set_glpk_output(None)
    assert got and "".join(got) == err
    n = len(got)
    b = complan.stability(path, time_limit=0)
    assert len(got) == n and dict(a) == dict(b)
    with pytest.raises(complan.Error, match="function"):
        complan.set_glpk_output(3)
