"""complan.replay_sequence and complan.assemble(task, html=): the answers
of `complan replay --sequence ID --json` and `complan assemble TASK --html
FILE --json`, their viewer pages, and their errors."""
import json
import os
import subprocess

import pytest

import complan
from conftest import SCENES, cli_json

TASK = os.path.normpath(os.path.join(SCENES, "..", "..", "planner", "tasks", "assembly",
                                     "peg_hole.json"))


def cli(*args):
    """The complan command's exit status, stdout and stderr (no --json added)."""
    exe = os.environ.get("CP_COMPLAN")
    if not exe:
        pytest.skip("CP_COMPLAN (the complan executable) is not set: run through meson test")
    timeout = 900 if os.environ.get("COMPLAN_SANITIZED") == "1" else 120
    r = subprocess.run([exe, *args], capture_output=True, text=True, timeout=timeout,
                       env=dict(os.environ, OPENBLAS_NUM_THREADS="1"))
    return r.returncode, r.stdout, r.stderr


def frames(page):
    """The number of frames a viewer page animates (the entries of its
    "time" array)."""
    i = page.index(b'"time":[') + len(b'"time":[')
    body = page[i:page.index(b"]", i)].strip()
    return len(body.split(b",")) if body else 0


@pytest.fixture(scope="module")
def assembled(tmp_path_factory):
    """peg_hole executed once by the command and once from Python, each
    into its own new database, each with its page."""
    d = tmp_path_factory.mktemp("sequence")
    doc, rc = cli_json("assemble", "--db", str(d / "cli.sqlite"), "--html", str(d / "cli.html"),
                       TASK)
    assert rc == 0, doc
    r = complan.assemble(TASK, db=d / "py.sqlite", html=d / "py.html")
    return d, doc, r


def drop(doc):
    """An assembly task's document without what differs between the two
    runs: the timing and the page's path."""
    return {k: v for k, v in doc.items() if k not in ("seconds", "html")}


def test_assemble_task_with_page_equals_cli(assembled):
    d, doc, r = assembled
    assert doc["status"] == "solved" and doc["replay_verified"] is True
    assert drop(dict(r)) == drop(doc)
    assert r["sequence_id"] == doc["sequence_id"] == 1
    assert doc["html"] == str(d / "cli.html") and r["html"] == str(d / "py.html")
    assert r.page_written
    page = (d / "py.html").read_bytes()
    # the same page, byte for byte (its title names sequence 1 in both)
    assert page == (d / "cli.html").read_bytes() and frames(page) > 10


def test_replay_sequence_equals_cli(assembled, tmp_path):
    d, doc, r = assembled
    db = d / "py.sqlite"
    c, rc = cli_json("replay", "--db", str(db), "--sequence", "1", "--verify",
                     "--html", str(tmp_path / "cli.html"))
    assert rc == 0
    p = complan.replay_sequence(db, 1, verify=True, html=tmp_path / "py.html")
    assert isinstance(p, complan.Result)
    assert {k: v for k, v in p.items() if k != "html"} == \
        {k: v for k, v in c.items() if k != "html"}
    assert p["html"] == str(tmp_path / "py.html")
    # every phase plan of the one stage replayed bitwise and chained
    assert p["sequence"] == 1 and p["stages"] == 1
    assert p["plans"] == len(doc["stages"][0]["plan_ids"])
    assert p["verified"] is True and p["deviation"] == 0.0 and p["chained"] is True
    assert p["mismatch"] is None and p["steps"] > 0 and p["duration"] > 0
    page = (tmp_path / "py.html").read_bytes()
    assert page == (tmp_path / "cli.html").read_bytes()
    # the page drawn by assemble is the page of this replay
    assert page == (d / "py.html").read_bytes()
    # the latest sequence by default, the same numbers without a page
    q = complan.replay_sequence(db)
    assert dict(q) == {k: v for k, v in p.items() if k != "html"}


def test_replay_sequence_without_verify_equals_cli(assembled):
    d, _, _ = assembled
    c, rc = cli_json("replay", "--db", str(d / "cli.sqlite"), "--sequence", "1")
    assert rc == 0 and c["verified"] is None and c["deviation"] is None
    p = complan.replay_sequence(d / "cli.sqlite", 1, verify=False)
    assert dict(p) == c


def test_replay_sequence_title(assembled, tmp_path):
    d, _, _ = assembled
    complan.replay_sequence(d / "py.sqlite", 1, html=tmp_path / "t.html", title="peg in hole")
    page = (tmp_path / "t.html").read_bytes()
    assert b"<title>peg in hole</title>" in page
    assert b"complan replay: sequence 1" not in page
    assert frames(page) == frames((d / "py.html").read_bytes())


def test_unknown_sequence_raises_the_c_message(assembled, tmp_path):
    d, _, _ = assembled
    db = d / "py.sqlite"
    with pytest.raises(complan.Error) as e:
        complan.replay_sequence(db, 7, html=tmp_path / "x.html")
    assert e.value.code == "input" and e.value.path == str(db)
    assert "7" in e.value.message
    assert not (tmp_path / "x.html").exists()
    # the command says the same, exit status 2, nothing on stdout
    rc, out, err = cli("replay", "--db", str(db), "--sequence", "7", "--json")
    assert rc == 2 and out == ""
    assert "%s: %s" % (db, e.value.message) in err


def test_replay_sequence_errors(assembled, tmp_path):
    d, _, _ = assembled
    db = d / "py.sqlite"
    before = db.read_bytes()
    # a page that cannot be written: named, nothing left
    with pytest.raises(complan.Error) as e:
        complan.replay_sequence(db, 1, html=tmp_path / "no" / "x.html")
    assert "x.html" in str(e.value) and not (tmp_path / "no").exists()
    with pytest.raises(complan.Error, match="tolerance goes with verify"):
        complan.replay_sequence(db, 1, verify=False, tolerance=1e-9)
    with pytest.raises(complan.Error, match="tolerance must be"):
        complan.replay_sequence(db, 1, tolerance=-1)
    for bad in (0, -3, 1.5, "1", True):
        with pytest.raises(complan.Error, match="sequence id >= 1"):
            complan.replay_sequence(db, bad)
    # a database without sequences, and one that is not a database
    with pytest.raises(complan.Error) as e:
        complan.replay_sequence(tmp_path / "none.sqlite")
    assert "none.sqlite" in str(e.value)
    bad = tmp_path / "bad.sqlite"
    bad.write_text("not a database at all, " * 100)
    with pytest.raises(complan.Error) as e:
        complan.replay_sequence(bad, 1)
    assert "bad.sqlite" in str(e.value)
    assert db.read_bytes() == before  # replay only reads


def test_assemble_task_page_that_cannot_be_written(tmp_path):
    """The page's file is tried before anything is planned: an error naming
    it, no database made."""
    db = tmp_path / "a.sqlite"
    with pytest.raises(complan.Error) as e:
        complan.assemble(TASK, db=db, html=tmp_path / "no" / "p.html")
    assert "p.html" in str(e.value) and not db.exists()
    rc, out, err = cli("assemble", "--db", str(db), "--html", str(tmp_path / "no" / "p.html"),
                       TASK, "--json")
    assert rc == 2 and out == "" and e.value.message in err and not db.exists()
    with pytest.raises(complan.Error, match="db and html only"):
        complan.assemble(TASK, html=tmp_path / "p.html", title="x")


def test_assemble_task_page_without_db(tmp_path):
    """Without a database the sequence is stored in a temporary one: the
    page is still written (and equals the stored run's page)."""
    with open(TASK) as f:
        task = json.load(f)
    task["assembly"] = os.path.join(os.path.dirname(TASK), task["assembly"])
    r = complan.assemble(task, html=tmp_path / "p.html")
    assert r["sequence_id"] is None and r.page_written and r["html"] == str(tmp_path / "p.html")
    assert frames((tmp_path / "p.html").read_bytes()) > 10
