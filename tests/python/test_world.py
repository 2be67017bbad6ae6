"""complan.Scene and complan.World: the CLI's hash, state layout, errors,
the ABI check and memory."""
import json
import os
import subprocess
import sys

import numpy as np
import pytest

import complan
from complan import _lib
from conftest import (assert_no_leak, no_rss_under_sanitizers, DATA, SCENES, cli_json,
                      rss_bytes)

BOX_DROP = os.path.join(SCENES, "box_drop.json")


def box_world(**kw):
    return complan.World(complan.Scene.load(BOX_DROP, check_normal_speed=False), **kw)


def test_box_drop_hash_equals_cli():
    doc, rc = cli_json("simulate", "--duration", "0.5", BOX_DROP)
    assert rc == 0
    w = box_world(dt=1e-3)
    w.step(n=500)
    assert "%016x" % w.hash() == doc["hash"]
    assert abs(w.time - 0.5) < 1e-12


def test_velocity_stepper_hash_equals_cli():
    doc, _ = cli_json("simulate", "--duration", "0.2", "--dt", "0.002",
                      "--stepper", "velocity", BOX_DROP)
    w = box_world(dt=0.002, stepper="velocity")
    for _ in range(100):
        w.step()
    assert "%016x" % w.hash() == doc["hash"]


def test_state_layout_shapes_and_names():
    w = box_world()
    x = w.state
    assert x.dtype == np.float64 and x.shape == (13,) and w.state_size == 13
    assert w.state_names() == ["box." + c for c in
                               "x y z qw qx qy qz vx vy vz wx wy wz".split()]
    assert x[2] == pytest.approx(0.3) and w.joint_count == 0
    w.step(n=10)
    # free fall for 10 ms: vz = -g t exactly as the semi-implicit Euler makes it
    assert w.state[9] == pytest.approx(-9.81 * 0.01, rel=1e-12)
    assert w.info["contacts"] == 0


def test_set_state_replays_the_same_steps():
    w = box_world(warm_start=False)
    x0 = w.state
    w.step(n=300)
    x1 = w.state
    w.set_state(x0)
    w.set_time(0.0)
    w.step(n=300)
    assert np.array_equal(w.state, x1)


def test_reserve_keeps_the_hash_and_rejects_bad_values():
    doc, rc = cli_json("simulate", "--duration", "0.5", BOX_DROP)
    assert rc == 0
    # The default (session 25) is the capped AUTO, the one World passes on
    assert _lib.world_defaults().reserve == -1
    for reserve in (-1, 8, 0):  # the scene's contacts; eight contacts; none
        w = box_world(dt=1e-3, reserve=reserve)
        w.step(n=500)
        assert "%016x" % w.hash() == doc["hash"]
    for bad in (-2, 100001):
        with pytest.raises(complan.Error) as e:
            box_world(reserve=bad)
        assert e.value.code == "bad_input" and e.value.where == "reserve"
        assert "got %d" % bad in e.value.message


def test_state_errors():
    w = box_world()
    x = w.state
    with pytest.raises(complan.Error, match=r"shape \(13,\)"):
        w.set_state(x[:5])
    bad = x.copy()
    bad[0] = np.nan
    with pytest.raises(complan.Error) as e:
        w.set_state(bad)
    assert e.value.code == "nonfinite"
    bad = x.copy()
    bad[3] = 2.0
    with pytest.raises(complan.Error) as e:
        w.set_state(bad)
    assert e.value.code == "bad_input" and "orientation norm" in e.value.message
    assert np.array_equal(w.state, x)
    with pytest.raises(complan.Error, match=r"expected 0 number\(s\)"):
        w.step(efforts=[1.0])


def test_scene_from_dict_equals_file():
    with open(BOX_DROP) as f:
        d = json.load(f)
    a = complan.World(complan.Scene.from_dict(d, check_normal_speed=False))
    b = box_world()
    a.step(n=200)
    b.step(n=200)
    assert a.hash() == b.hash()


def test_scene_errors_name_the_place(tmp_path):
    with open(BOX_DROP) as f:
        d = json.load(f)
    d["bodies"][1]["mass"] = -1
    with pytest.raises(complan.Error) as e:
        complan.Scene.from_dict(d)
    assert e.value.code == "input" and e.value.where == "bodies[1].mass"
    p = tmp_path / "s.json"
    p.write_text(json.dumps(d))
    with pytest.raises(complan.Error) as e:
        complan.Scene.load(p)
    assert e.value.path == str(p) and e.value.where == "bodies[1].mass"
    with pytest.raises(complan.Error) as e:
        complan.Scene.load(tmp_path / "none.json")
    assert "none.json" in e.value.message
    with pytest.raises(complan.Error, match="unknown stepper"):
        box_world(stepper="rk4")
    with pytest.raises(complan.Error, match="dt"):
        box_world(dt=0)
    with pytest.raises(complan.Error, match="unknown option 'warmstart'"):
        box_world(warmstart=0)


def test_abi_check_catches_a_moved_field(monkeypatch):
    class Wrong(_lib.Structure):
        _fields_ = [("code", _lib.c_int), ("msg", _lib.c_char * 384),
                    ("where", _lib.c_char * 192)]
    _lib.check_abi()
    monkeypatch.setitem(_lib._MIRRORS, "cp_error", Wrong)
    with pytest.raises(ImportError, match=r"cp_error\.msg is at offset 196"):
        _lib.check_abi()


def test_library_variable_is_obeyed():
    env = dict(os.environ, COMPLAN_LIB="/nonexistent/libcomplan.so")
    r = subprocess.run([sys.executable, "-c", "import complan"], env=env,
                       capture_output=True, text=True)
    assert r.returncode != 0 and "COMPLAN_LIB" in r.stderr
    assert complan.lib_path == os.environ.get("COMPLAN_LIB", complan.lib_path)


def test_the_build_tree_needs_one_variable(tmp_path):
    """PYTHONPATH=build/python alone: the package there finds the build's
    libcomplan.so beside it, and answers as the CLI does."""
    tree = os.environ.get("CP_PYTHON_TREE")
    if not tree:
        pytest.skip("CP_PYTHON_TREE (the build's python folder) is not set: run through "
                    "meson test")
    env = {k: v for k, v in os.environ.items() if k not in ("COMPLAN_LIB", "PYTHONPATH")}
    env["PYTHONPATH"] = tree
    code = ("import complan; w = complan.World(complan.Scene.load(%r, "
            "check_normal_speed=False)); w.step(n=500); "
            "print(complan.lib_path); print('%%016x' %% w.hash())" % BOX_DROP)
    r = subprocess.run([sys.executable, "-c", code], env=env, cwd=tmp_path,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    lib, digest = r.stdout.split()
    assert lib == os.path.join(tree, "complan", "libcomplan.so")
    doc, _ = cli_json("simulate", "--duration", "0.5", BOX_DROP)
    assert digest == doc["hash"]


@no_rss_under_sanitizers
def test_repeated_steps_keep_rss_flat():
    scene = complan.Scene.load(BOX_DROP, check_normal_speed=False)
    w = complan.World(scene, dt=1e-3)
    w.step(n=2000)  # the box has landed: contacts every step from here
    for _ in range(2000):
        w.state
    before = rss_bytes()
    for _ in range(100000):
        w.step()
        w.state
    grown = rss_bytes() - before
    assert grown < 1 << 20, "RSS grew by %d bytes over 10^5 steps" % grown
    assert w.info["contacts"] > 0
    # the cheap calls (docs/python.md): the C heap too stays where it was
    buf = np.empty(w.state_size)

    def rounds(n):
        for _ in range(n):
            w.step()
            w.get_state(buf)
    assert_no_leak(rounds, 2000, 100000, "steps and get_state(buf)")


def test_get_state_into_a_buffer():
    w = box_world()
    buf = np.full(w.state_size, np.nan)
    assert w.get_state(buf) is buf and np.array_equal(buf, w.state)
    w.step(n=3)
    assert w.get_state(buf) is buf and np.array_equal(buf, w.state)  # the same buffer again
    other = np.empty(w.state_size)
    assert np.array_equal(w.get_state(other), buf)  # another buffer, checked
    assert np.array_equal(w.get_state(), buf) and w.get_state() is not buf
    for bad in (np.empty(w.state_size, dtype=np.float32), np.empty(w.state_size + 1),
                np.empty((w.state_size, 2))[:, 0], list(range(w.state_size)),
                np.empty(w.state_size)[::-1]):
        with pytest.raises(complan.Error, match="float64 array of shape"):
            w.get_state(bad)
    ro = np.empty(w.state_size)
    ro.flags.writeable = False
    with pytest.raises(complan.Error):
        w.get_state(ro)


@no_rss_under_sanitizers
def test_many_worlds_are_freed():
    scene = complan.Scene.load(BOX_DROP, check_normal_speed=False)
    for _ in range(200):
        complan.World(scene).step(n=5)
    before = rss_bytes()
    for _ in range(5000):
        complan.World(scene).step(n=5)
        complan.Scene.load(BOX_DROP, check_normal_speed=False)
    grown = rss_bytes() - before
    assert grown < 1 << 20, "RSS grew by %d bytes over 5000 worlds" % grown


def test_simulate_in_c_equals_python_steps():
    a = box_world()
    b = box_world()
    res = a.simulate(0.4)
    b.step(n=400)
    assert res["steps"] == 400 and res.hash == a.hash() == b.hash()
    assert res["hash"] == "%016x" % b.hash()
    assert np.array_equal(a.state, b.state) and np.array_equal(res.state, b.state)
    assert res["energy"]["final"] == a.energy() == b.energy()


def test_version_is_the_librarys():
    import re
    from conftest import ROOT
    with open(os.path.join(ROOT, "meson.build")) as f:
        v = re.search(r"version: '([^']+)'", f.read()).group(1)
    assert complan.__version__ == v


def test_resting_contacts_carry_the_weight():
    w = box_world()
    w.simulate(2.0)
    w.step()
    c = w.contacts()
    k = len(c["a"])
    assert k == w.info["contacts"] > 0
    assert c["point"].shape == c["normal"].shape == c["force"].shape == (k, 3)
    assert c["depth"].shape == (k,) and c["force"].dtype == np.float64
    assert set(c["a"]) | set(c["b"]) == {"box", "table"}
    # at rest the contact forces on the box balance its weight (1 kg, g = 9.81)
    sign = np.array([1.0 if a == "box" else -1.0 for a in c["a"]])
    total = (c["force"] * sign[:, None]).sum(axis=0)
    assert total[2] == pytest.approx(9.81, rel=1e-6)
    assert abs(total[0]) < 1e-9 and abs(total[1]) < 1e-9
    np.testing.assert_allclose(np.linalg.norm(c["normal"], axis=1), 1.0, rtol=1e-12)


def test_warm_blob_moves_between_worlds():
    a = box_world()
    a.simulate(2.0)
    blob = a.warm_get()
    assert len(blob) > 0
    floating = box_world()
    assert floating.warm_get() == b""
    b = box_world()
    b.set_state(a.state)
    b.warm_set(blob)
    b.warm_set(b"not a blob")  # ignored: wrong magic and size
    a.step()
    b.step()
    assert b.info["warm_started"] == a.info["warm_started"] == 1
    assert np.array_equal(a.state, b.state)


def test_every_module_is_installed():
    """meson.build's install_sources lists every module of the package (an
    installed package without one fails at import)."""
    import glob
    import re
    from conftest import ROOT
    with open(os.path.join(ROOT, "meson.build")) as f:
        listed = set(re.findall(r"'python/complan/([a-z_]+\.py)'", f.read()))
    present = {os.path.basename(p) for p in glob.glob(os.path.join(ROOT, "python", "complan",
                                                                    "*.py"))}
    assert present and listed == present


def test_simulate_files_equal_the_clis(tmp_path):
    """World.simulate(csv=, html=, every=) writes complan simulate's CSV
    and page byte for byte."""
    c1, h1 = tmp_path / "cli.csv", tmp_path / "cli.html"
    doc, rc = cli_json("simulate", "--duration", "0.3", "--every", "7", "--csv", str(c1),
                       "--html", str(h1), BOX_DROP)
    assert rc == 0
    w = box_world()
    c2, h2 = tmp_path / "py.csv", tmp_path / "py.html"
    res = w.simulate(0.3, every=7, csv=c2, html=h2, title="complan simulate: " + BOX_DROP)
    assert res["hash"] == doc["hash"]
    assert c2.read_bytes() == c1.read_bytes() and h2.read_bytes() == h1.read_bytes()
    rows = c2.read_text().splitlines()
    assert rows[0].split(",")[:4] == ["t", "box.x", "box.y", "box.z"]
    assert len(rows) == 1 + 1 + 300 // 7 + 1  # header, start, every 7th, the last
    # a page that cannot be written: an error naming it, and no CSV either
    with pytest.raises(complan.Error) as e:
        box_world().simulate(0.01, csv=tmp_path / "x.csv", html=tmp_path / "no" / "x.html")
    assert "x.html" in str(e.value) and not (tmp_path / "x.csv").exists()
    with pytest.raises(complan.Error, match="every"):
        box_world().simulate(0.01, every=0)


def without_times(doc):
    """A simulate document without what is measured (the wall time per
    step and the phase timings); the phase names are kept."""
    d = {k: v for k, v in doc.items() if k not in ("time_us_per_step", "profile")}
    if "profile" in doc:
        d["profile"] = sorted(doc["profile"])
    return d


@pytest.mark.parametrize("scene,args,kw", [
    ("box_drop.json", ["--duration", "0.5"], {"duration": 0.5}),
    # joints (two), the explicit contact list dropped, the phase timings
    ("finger_push.json", ["--duration", "0.3", "--auto-contacts", "--profile"],
     {"duration": 0.3, "auto_contacts": True, "profile": True}),
    # a gripper: four joints, the velocity stepper, another dt, a cold start
    ("gripper_box.json", ["--duration", "0.2", "--dt", "0.002", "--stepper", "velocity",
                          "--no-warm-start", "--compliance", "0"],
     {"duration": 0.2, "dt": 0.002, "stepper": "velocity", "warm_start": False,
      "compliance": 0.0}),
    # the velocity stepper with every contact in the pyramid (session 22's
    # default writes sliding contacts with Coulomb's law)
    ("box_sliding.json", ["--duration", "0.3", "--stepper", "velocity", "--auto-contacts",
                          "--no-velocity-sliding"],
     {"duration": 0.3, "stepper": "velocity", "auto_contacts": True,
      "velocity_sliding": False}),
    # a step that fails: the document says so (exit status 1), nothing raised
    ("box_drop.json", ["--duration", "0.1", "--stepper", "quasistatic"],
     {"duration": 0.1, "stepper": "quasistatic"}),
])
def test_simulate_document_equals_clis(scene, args, kw):
    """complan.simulate returns `complan simulate --json`'s document: the
    same keys and numbers bit for bit, but for the measured times."""
    path = os.path.join(SCENES, scene)
    doc, rc = cli_json("simulate", *args, path)
    r = complan.simulate(path, **kw)
    assert without_times(dict(r)) == without_times(doc)
    assert (rc == 0) == (r["status"] == "ok")
    assert r["time_us_per_step"] > 0 or r["steps"] == 0
    if "profile" in r:
        p = r["profile"]
        assert all(v >= 0 for v in p.values()) and p["total"] > 0
        assert sum(v for k, v in p.items() if k != "total") <= p["total"] * (1 + 1e-9)
    # the same run from a world made in Python: the same document
    if r["status"] == "ok":
        sc = complan.Scene.load(path, check_normal_speed=False)
        opts = {k: kw[k] for k in ("dt", "stepper", "auto_contacts") if k in kw}
        if kw.get("warm_start") is False:
            opts["warm_start"] = False
        if "compliance" in kw:
            opts["compliance"] = kw["compliance"]
        if "velocity_sliding" in kw:
            opts["velocity_sliding"] = kw["velocity_sliding"]
        w = complan.World(sc, profile=kw.get("profile", False), **opts)
        assert without_times(dict(w.simulate(kw["duration"]))) == without_times(doc)
        njoints = {"box_drop.json": 0, "finger_push.json": 2, "gripper_box.json": 4,
                   "box_sliding.json": 0}[scene]
        assert len(r["final"]["joints"]) == njoints and w.joint_count == njoints


def test_failed_simulate_raises_with_the_document():
    w = box_world(stepper="quasistatic")
    with pytest.raises(complan.Error) as e:
        w.simulate(0.1)
    assert e.value.code == "solver_failed" and e.value.message.startswith("step 1: ")
    r = e.value.result
    assert r["status"] == "solver_failed" and r["steps"] == 0
    assert r["message"] == e.value.message and r["final"]["time"] == 0.0


def test_simulate_progress_and_its_errors(tmp_path):
    """progress gets (step, steps) while the C loop runs (as --progress
    prints them); what it raises comes out after the run; bad arguments
    raise before anything is written."""
    seen = []
    w = box_world()
    r = w.simulate(3.0, progress=lambda k, n: seen.append((k, n)))
    # the callback is time-driven (every 1/20 s of stepping): how many calls
    # depends on the machine, what they carry does not
    assert all(n == 3000 and 0 < k <= n and k % 64 == 0 for k, n in seen)
    assert [k for k, _ in seen] == sorted({k for k, _ in seen})
    assert r["steps"] == 3000
    doc, _ = cli_json("simulate", "--duration", "3", BOX_DROP)
    assert r["hash"] == doc["hash"]

    calls = []

    def boom(k, n):
        calls.append(k)
        raise KeyError("stop")
    try:
        box_world().simulate(3.0, progress=boom)
        raised = None
    except KeyError as e:
        raised = e
    # raised exactly when it was called (how often depends on the machine's
    # speed), and never called again after raising
    assert (raised is not None) == bool(calls) and len(calls) <= 1
    # the same mechanism called by hand: kept, later calls skipped, raised after
    p = _lib.Progress(boom, _lib.SIM_PROGRESS, lambda a: a[:2], "(step, steps)")
    calls.clear()
    p._cb(64, 100, None)
    p._cb(128, 100, None)
    assert calls == [64]
    with pytest.raises(KeyError):
        p.raise_kept()
    with pytest.raises(complan.Error, match="progress"):
        box_world().simulate(0.1, progress=3, csv=tmp_path / "p.csv")
    assert not (tmp_path / "p.csv").exists()
    for bad in (-1.0, float("nan"), float("inf"), "1"):
        with pytest.raises(complan.Error, match="duration"):
            complan.simulate(BOX_DROP, duration=bad)
    with pytest.raises(complan.Error, match="compliance"):
        complan.simulate(BOX_DROP, compliance=1.0)
    with pytest.raises(complan.Error) as e:
        complan.simulate(os.path.join(SCENES, "finger_push.json"), duration=0.01)
    assert e.value.where == "contacts" and "auto_contacts=True" in e.value.message
    assert e.value.path.endswith("finger_push.json")
    with pytest.raises(complan.Error) as e:
        complan.simulate(tmp_path / "none.json")
    assert e.value.path.endswith("none.json")


FINGER = {  # a 0.1 kg rod on a prismatic joint along x, nothing to touch
    "gravity": [0, 0, -9.81],
    "bodies": [{"name": "table", "fixed": True,
                "shape": {"type": "plane", "normal": [0, 0, 1], "offset": 0}}],
    "manipulators": [
        {"name": "finger", "base": {"position": [0, 0, 0.5]},
         "joints": [{"name": "slide", "type": "prismatic", "axis": [1, 0, 0],
                     "link": {"name": "rod", "mass": 0.1, "com": [0.1, 0, 0],
                              "shape": {"type": "box", "size": [0.2, 0.02, 0.02]}}}]}],
}


def test_efforts_reach_the_joint():
    """A push F on a free prismatic joint of mass m: qd = n h F / m after n
    steps (semi-implicit Euler), whether the efforts go by step() or
    set_efforts(); bad efforts raise, naming what was expected."""
    a = complan.World(complan.Scene.from_dict(FINGER), dt=1e-3)
    b = complan.World(complan.Scene.from_dict(FINGER), dt=1e-3)
    a.step(efforts=[0.2], n=50)
    for _ in range(50):
        b.set_efforts(np.array([0.2]))
        b.step()
    names = a.state_names()
    qd = a.state[names.index("finger/slide.qd")]
    assert qd == pytest.approx(50 * 1e-3 * 0.2 / 0.1, rel=1e-12)
    assert np.array_equal(a.state, b.state) and a.hash() == b.hash()
    for bad in ([0.2, 0.1], 0.2, [[0.2]], ["x"], []):
        with pytest.raises(complan.Error, match=r"expected 1 number\(s\)") as e:
            a.set_efforts(bad)
        assert e.value.code == "input"
    with pytest.raises(complan.Error) as e:
        a.set_efforts([float("nan")])
    assert e.value.code == "nonfinite" and "joint 0" in e.value.message


@no_rss_under_sanitizers
def test_repeated_simulate_documents_leak_nothing():
    """complan.simulate (a world made and dropped, its document, a progress
    callback, the final joints) and an LCP's document, 1000 times."""
    sc = complan.Scene.load(os.path.join(SCENES, "finger_push.json"), check_normal_speed=False)
    p = complan.lcp.load(os.path.join(DATA, "siconos", "lcp_exp_murty2.dat"))

    def rounds(n):
        for _ in range(n):
            r = complan.simulate(sc, duration=0.003, auto_contacts=True,
                                 progress=lambda k, m: None)
            assert r["status"] == "ok" and len(r["final"]["joints"]) == 2
            p.solve().document()

    assert_no_leak(rounds, 50, 1000, "simulate documents")
