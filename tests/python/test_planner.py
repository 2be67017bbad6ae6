"""complan.plan, complan.Database and complan.replay: the answers of
`complan plan --json`, `complan plans --json` and `complan replay --json`;
arrays checked against the stored plan; errors; memory."""
import json
import os
import sqlite3

import numpy as np
import pytest

import complan
from conftest import ROOT, SCENES, assert_no_leak, cli_json, no_rss_under_sanitizers

TASKS = os.path.join(ROOT, "planner", "tasks")
PUSH = os.path.join(TASKS, "push.json")
# Limits a slow machine cannot reach first: the node limit decides.
BIG = ["--max-seconds", "1000000"]

# Fields that measure time, or name the database file.
TIMES = ("seconds", "store_seconds", "database")


def same(a, b):
    return ({k: v for k, v in a.items() if k not in TIMES}
            == {k: v for k, v in b.items() if k not in TIMES})


@pytest.fixture(scope="module")
def planned(tmp_path_factory):
    """push.json planned by the command and by Python into two databases."""
    d = tmp_path_factory.mktemp("plan")
    cli_db, py_db = str(d / "cli.sqlite"), str(d / "py.sqlite")
    doc, rc = cli_json("plan", PUSH, "--db", cli_db, *BIG)
    assert rc == 0 and doc["status"] == "solved", doc
    r = complan.plan(PUSH, db=py_db, max_seconds=1e6)
    return doc, r, cli_db, py_db


def test_plan_equals_cli(planned):
    doc, r, cli_db, py_db = planned
    assert same(r, doc) and set(r) == set(doc)
    assert r["status"] == "solved" and r["plan_id"] == 1 and r["database"] == py_db
    assert r["length"] >= 1 and r["cost"] > 0


def test_database_lists_as_the_cli(planned):
    _, r, _, py_db = planned
    doc, rc = cli_json("plans", "--db", py_db)
    assert rc == 0
    with complan.Database(py_db) as db:
        runs = db.runs()
        assert runs == doc["runs"]
        plans = db.plans()
        assert [p["id"] for p in plans] == [r["plan_id"]] and plans[0]["run"] == r["run_id"]


def test_plan_arrays_match_the_store(planned):
    _, r, _, py_db = planned
    with complan.Database(py_db) as db:
        p = db.plan(r["plan_id"])
        latest = db.plan()
        nodes = db.nodes(r["run_id"])
    n = r["length"]
    assert p["plan"] == latest["plan"] == r["plan_id"] and p["length"] == n
    size = len(p.state_names)
    assert p.states.shape == (n + 1, size) and p.states.dtype == np.float64
    assert p.values.shape == (n, len(p.input_names)) and p.input_names == ["finger/slide"]
    assert p.action.shape == (n,) and p.action.dtype == np.int64
    assert p.state_names[:3] == ["box.x", "box.y", "box.z"]
    # the task's inputs are efforts from {-2, 0, 2, 4} held 0.1 s
    assert set(p.values[:, 0]) <= {-2.0, 0.0, 2.0, 4.0}
    np.testing.assert_allclose(np.diff(p.time), 0.1, rtol=1e-12)
    # the tree holds the plan's nodes with the same states, bit for bit
    assert nodes["nodes"] == r["nodes"] and nodes.states.shape == (r["nodes"], size)
    assert np.array_equal(nodes.states[p.node], p.states)
    assert nodes.parent[0] == -1 and nodes.action[0] == -1
    assert all(nodes.parent[p.node[1:]] == p.node[:-1])
    # the goal: the box within 2 cm of (0.15, 0, 0.05)
    assert np.linalg.norm(p.states[-1, :3] - [0.15, 0, 0.05]) <= 0.02
    assert nodes.goal_distance[p.node[-1]] <= 0.02


def test_replay_equals_cli_and_the_stored_plan(planned):
    _, r, _, py_db = planned
    doc, rc = cli_json("replay", "--db", py_db, "--verify")
    assert rc == 0
    rep = complan.replay(py_db, verify=True)
    assert dict(rep) == doc and rep["verified"] is True and rep["deviation"] == 0.0
    k = rep["steps"] + 1
    assert rep.states.shape == (k, len(rep.state_names)) and rep.time.shape == (k,)
    assert rep.action[0] == -1 and rep.plan_step[-1] == rep["length"]
    with complan.Database(py_db) as db:
        p = db.plan()
    # the trajectory passes through the stored node states, bit for bit
    steps = rep["steps"] // rep["length"]
    assert np.array_equal(rep.states[::steps], p.states)
    unverified = complan.replay(py_db, plan=r["plan_id"], verify=False)
    assert unverified["verified"] is None and unverified["deviation"] is None
    assert np.array_equal(unverified.states, rep.states)


def test_replay_reports_a_changed_database(planned, tmp_path):
    _, r, _, py_db = planned
    db = tmp_path / "changed.sqlite"
    with open(py_db, "rb") as f:
        db.write_bytes(f.read())
    for suffix in ("-wal", "-shm"):
        assert not os.path.exists(str(db) + suffix)
    con = sqlite3.connect(str(db))
    # nudge the last plan node's stored state (x of the box) by one bit
    (plan_node,) = con.execute("SELECT node FROM plans WHERE id = ?", (r["plan_id"],)).fetchone()
    (blob,) = con.execute("SELECT state FROM nodes WHERE search_id = ? AND id = ?",
                          (r["run_id"], plan_node)).fetchone()
    x = np.frombuffer(blob, dtype=np.float64).copy()
    x[0] = np.nextafter(x[0], 1.0)
    con.execute("UPDATE nodes SET state = ? WHERE search_id = ? AND id = ?",
                (x.tobytes(), r["run_id"], plan_node))
    con.commit()
    con.close()
    doc, rc = cli_json("replay", "--db", str(db), "--verify")
    rep = complan.replay(db)
    assert rc == 1 and dict(rep) == doc
    assert rep["verified"] is False and rep["mismatch"]["plan_step"] == r["length"]
    assert rep["mismatch"]["entry"] == 0


def test_plan_from_a_dict_with_overrides(tmp_path):
    with open(PUSH) as f:
        task = json.load(f)
    task["scene"] = os.path.join(SCENES, "plan_push.json")
    r = complan.plan(task, db=tmp_path / "d.sqlite", max_nodes=5, max_seconds=1e6,
                     method="rrt", seed=7)
    assert r["status"] == "limit" and r["planner"] == "rrt" and r["plan_id"] is None
    # rrt does not start an iteration whose candidates would pass the node
    # limit (docs/planner.md): a limit of N ends with N - candidates + 1 to N
    assert 1 < r["nodes"] <= 5 and r["best_node"] is not None
    with complan.Database(tmp_path / "d.sqlite") as db:
        (run,) = db.runs()
        assert run["seed"] == 7 and run["status"] == "limit" and run["plans"] == []
        assert db.nodes(run["id"])["nodes"] == r["nodes"]
    # resume continues the same run
    again = complan.plan(task, db=tmp_path / "d.sqlite", max_nodes=10, max_seconds=1e6,
                         method="rrt", seed=7, resume=True)
    assert again["resumed"] is True and again["run_id"] == r["run_id"]
    assert r["nodes"] < again["nodes"] <= 10


def test_threads_give_the_same_search(tmp_path):
    # search_batch 4 on 1 and 2 threads: the same nodes and plan (every node
    # column but pivots: tests/planner/test_threads.c); bad counts refused
    runs = []
    for t in (1, 2):
        db = tmp_path / ("t%d.sqlite" % t)
        r = complan.plan(PUSH, db=db, method="sst", max_nodes=300, max_seconds=1e6,
                         search_batch=4, threads=t)
        with sqlite3.connect(str(db)) as c:
            rows = c.execute("SELECT id, parent, action, flags, cost, state, warm"
                             " FROM nodes ORDER BY id").fetchall()
        runs.append((r["nodes"], r["expansions"], r["cost"], rows))
    assert runs[0] == runs[1] and runs[0][0] > 250
    for bad in ({"threads": 0}, {"threads": 257}, {"search_batch": 0}):
        with pytest.raises(complan.Error):
            complan.plan(PUSH, db=tmp_path / "bad.sqlite", **bad)


def test_batches_are_pipelined_unless_the_task_says_false(tmp_path):
    # search_batch 8 with sst: pipelined by default in halves of 4 (the
    # run's options say so), the tree of "pipeline": true at search_batch
    # 4; the task's "pipeline": false gives the plain batches of 8, another
    # tree, its options without the key; true at 8 keeps halves of 8
    with open(PUSH) as f:
        task = json.load(f)
    task["scene"] = os.path.join(SCENES, "plan_push.json")
    runs = {}
    for mode, batch, half in ((None, 8, 4), (False, 8, 8), (True, 4, 4),
                              (True, 8, 8)):
        t = json.loads(json.dumps(task))
        if mode is not None:
            t["search"]["pipeline"] = mode
        db = tmp_path / ("p%s%d.sqlite" % (mode, batch))
        r = complan.plan(t, db=db, method="sst", max_nodes=200, max_seconds=1e6,
                         search_batch=batch, threads=2)
        with sqlite3.connect(str(db)) as c:
            (opts,) = c.execute("SELECT options FROM searches").fetchone()
            rows = c.execute("SELECT id, parent, action, flags, cost, state, warm"
                             " FROM nodes ORDER BY id").fetchall()
        runs[(mode, batch)] = (r["nodes"], r["expansions"], rows)
        o = json.loads(opts)
        assert o.get("search_pipeline", False) is (mode is not False)
        assert o["search_batch"] == half
        with complan.Database(db) as d:
            (run,) = d.runs()
            assert run["search_batch"] == half
            assert run["search_pipeline"] is (mode is not False)
    assert runs[(None, 8)] == runs[(True, 4)] and runs[(None, 8)][0] > 150
    assert runs[(None, 8)][2] != runs[(False, 8)][2]
    assert runs[(None, 8)][2] != runs[(True, 8)][2]


def test_plan_progress_callback_and_errors(tmp_path):
    with pytest.raises(complan.Error) as e:
        complan.plan(os.path.join(TASKS, "nothing.json"), db=tmp_path / "x.sqlite")
    assert "nothing.json" in str(e.value)
    with open(PUSH) as f:
        task = json.load(f)
    task["scene"] = os.path.join(SCENES, "plan_push.json")
    task["action"]["dt"] = -1
    with pytest.raises(complan.Error) as e:
        complan.plan(task, db=tmp_path / "x.sqlite")
    assert e.value.code == "input" and e.value.where.startswith("action")
    for kw, msg in (({"method": "dfs"}, "unknown method"), ({"seed": -1}, "seed"),
                    ({"max_nodes": 0}, "max_nodes"), ({"max_seconds": "1"}, "max_seconds")):
        with pytest.raises(complan.Error, match=msg):
            complan.plan(PUSH, db=tmp_path / "x.sqlite", **kw)
    bad = tmp_path / "other.sqlite"
    con = sqlite3.connect(str(bad))
    con.execute("CREATE TABLE t (x)")
    con.commit()
    con.close()
    with pytest.raises(complan.Error) as e:
        complan.plan(PUSH, db=bad)
    assert e.value.code == "input" and "other.sqlite" in e.value.message
    with pytest.raises(complan.Error) as e:
        complan.Database(tmp_path / "absent.sqlite")
    assert "absent.sqlite" in e.value.message
    with pytest.raises(complan.Error) as e:
        complan.replay(tmp_path / "x.sqlite", plan=99)


@no_rss_under_sanitizers
def test_repeated_database_reads_leak_nothing(planned):
    _, r, _, py_db = planned

    def reads(n):
        for _ in range(n):
            with complan.Database(py_db) as db:
                db.runs()
                db.plan()
                db.nodes(r["run_id"])
            complan.replay(py_db)

    assert_no_leak(reads, 20, 200, "database reads")


@no_rss_under_sanitizers
def test_repeated_plans_leak_nothing(tmp_path):
    with open(PUSH) as f:
        task = json.load(f)
    task["scene"] = os.path.join(SCENES, "plan_push.json")
    t = complan.Task.from_dict(task)
    db = tmp_path / "m.sqlite"

    def plans(n):
        for _ in range(n):
            complan.plan(t, db=db, max_nodes=3, max_seconds=1e6)
            os.remove(db)

    assert_no_leak(plans, 10, 100, "plans")


def test_progress_reports_and_a_raising_callback_interrupts(tmp_path):
    """A clock that advances 1 s per reading makes the progress callback run
    after every iteration (reports every 0.5 s), whatever the machine's
    speed; the callback's exception stops the search, the run is committed
    as interrupted and resume continues it."""
    ticks = [0.0]

    def clock():
        ticks[0] += 1.0
        return ticks[0]

    seen = []

    def progress(p):
        seen.append(p)
        if len(seen) == 2:  # of push's three A* iterations
            raise KeyboardInterrupt

    db = tmp_path / "i.sqlite"
    with pytest.raises(KeyboardInterrupt):
        complan.plan(PUSH, db=db, max_seconds=1e6, progress=progress, clock=clock)
    assert len(seen) == 2
    assert set(seen[0]) == {"nodes", "expansions", "expansions_per_second",
                            "best_distance", "best_cost", "elapsed"}
    assert seen[0]["nodes"] >= 1 and seen[1]["expansions"] > seen[0]["expansions"]
    with complan.Database(db) as d:
        (run,) = d.runs()
    assert run["status"] == "interrupted" and run["plans"] == []
    r = complan.plan(PUSH, db=db, max_seconds=1e6, resume=True, clock=clock)
    assert r["resumed"] is True and r["run_id"] == run["id"] and r["status"] == "solved"


def test_sigint_interrupts_the_search(tmp_path):
    """SIGINT during the search (sent from the first progress report, the
    fake clock making that the first iteration): the run stops, is stored
    as interrupted and the call returns status "interrupted"; Python's own
    SIGINT handler is back afterwards."""
    import signal
    ticks = [0.0]

    def clock():
        ticks[0] += 1.0
        return ticks[0]

    def progress(p):
        if p["expansions"] and not sent:
            sent.append(1)
            os.kill(os.getpid(), signal.SIGINT)

    sent = []
    before = signal.getsignal(signal.SIGINT)
    r = complan.plan(PUSH, db=tmp_path / "s.sqlite", max_seconds=1e6, progress=progress,
                     clock=clock)
    assert sent and r["status"] == "interrupted" and r["plan_id"] is None
    assert signal.getsignal(signal.SIGINT) is before


def test_benchmark_equals_cli(tmp_path):
    """`plan --benchmark`: the summary of OMPL's tables, the command's and
    Python's equal but for the mean times; a node limit (not the time
    limit) ends the runs that find nothing, whatever the machine's speed."""
    with open(PUSH) as f:
        task = json.load(f)
    task["scene"] = os.path.join(SCENES, "plan_push.json")
    task["limits"] = {"nodes": 40, "seconds": 1000000}
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(task))
    doc, rc = cli_json("plan", str(path), "--benchmark", "2", "--planners", "astar,rrt",
                       "--seed", "3", "--db", str(tmp_path / "cli.sqlite"))
    assert rc == 0
    r = complan.benchmark(str(path), 2, planners=["astar", "rrt"], seed=3,
                          db=tmp_path / "py.sqlite")

    def no_time(d):
        return [{k: v for k, v in p.items() if k != "time"} for p in d["planners"]]

    assert r["experiment"] == doc["experiment"] == 1
    assert no_time(r) == no_time(doc) and [p["planner"] for p in r["planners"]] == \
        ["astar", "rrt"]
    assert r["planners"][0]["runs"] == 2 and r["planners"][0]["solved"] == 2
    with complan.Database(tmp_path / "py.sqlite") as db:
        runs = db.runs()
    assert len(runs) == 4 and [x["seed"] for x in runs] == [3, 4, 3, 4]
    for kw, msg in (({"runs": 0}, "runs"), ({"planners": ["bfs"]}, "unknown planner"),
                    ({"max_seconds": 0}, "max_seconds")):
        args = dict({"runs": 1}, **kw)
        with pytest.raises(complan.Error, match=msg):
            complan.benchmark(str(path), db=tmp_path / "x.sqlite", **args)


def test_replay_files_equal_the_clis(planned, tmp_path):
    """replay(csv=, html=, tree=True) writes the command's CSV and page,
    byte for byte."""
    _, r, _, py_db = planned
    c1, h1 = tmp_path / "cli.csv", tmp_path / "cli.html"
    doc, rc = cli_json("replay", "--db", py_db, "--verify", "--csv", str(c1), "--html", str(h1),
                       "--tree")
    assert rc == 0
    c2, h2 = tmp_path / "py.csv", tmp_path / "py.html"
    rep = complan.replay(py_db, csv=c2, html=h2, tree=True)
    assert rep["csv"] == str(c2) and rep["html"] == str(h2)
    assert {k: v for k, v in rep.items() if k not in ("csv", "html")} == \
        {k: v for k, v in doc.items() if k not in ("csv", "html")}
    assert c2.read_bytes() == c1.read_bytes() and h2.read_bytes() == h1.read_bytes()
    rows = c2.read_text().splitlines()
    assert len(rows) == rep["steps"] + 2 and rows[0].startswith("t,")
    # a CSV that cannot be written: an error naming it, no page left either
    with pytest.raises(complan.Error) as e:
        complan.replay(py_db, csv=tmp_path / "no" / "x.csv", html=tmp_path / "p.html")
    assert "x.csv" in str(e.value) and not (tmp_path / "p.html").exists()
    with pytest.raises(complan.Error, match="tree=True goes with html"):
        complan.replay(py_db, tree=True)


def test_viewer_of_a_world_equals_simulate_html(tmp_path):
    path = os.path.join(SCENES, "box_drop.json")
    page = tmp_path / "cli.html"
    doc, rc = cli_json("simulate", "--duration", "0.05", "--html", str(page), path)
    assert rc == 0
    w = complan.World(complan.Scene.load(path, check_normal_speed=False))
    v = complan.Viewer(w, title="complan simulate: %s" % path)
    v.add_world(w)
    for _ in range(50):
        w.step()
        v.add_world(w)
    assert v.frame_count == 51
    v.write(tmp_path / "py.html")
    assert (tmp_path / "py.html").read_bytes() == page.read_bytes()
    with pytest.raises(complan.Error, match=r"shape \(13,\)"):
        v.add_frame(0.0, [0.0])
    with pytest.raises(complan.Error) as e:
        v.write(tmp_path / "none" / "x.html")
    assert "x.html" in str(e.value)
    with pytest.raises(complan.Error, match="goal must be"):
        complan.Viewer(w, goal={"body": "box"})
