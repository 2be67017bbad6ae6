#!/usr/bin/env python3
"""The page of a whole executed assembly sequence in a real browser (headless
Chromium through Selenium), reusing browser_viewer.py's browser start and
checks.

usage: browser_sequence.py COMPLAN TASK OUTDIR

`complan assemble TASK --db OUTDIR/sequence.sqlite --html OUTDIR/assemble.html
--json` plans and executes the task and writes the page; `complan replay
--sequence ID --html OUTDIR/replay.html` writes it again from the database.
Each page is opened from disk and checked:
  - walking every frame's note (noteAt(i); note after seek agrees), the notes come stage after stage, each
    stage's phases in their order (approach first, retreat last), and the
    release note of every stage carries the verdict the JSON document gives
    it ("certified strong");
  - the last frame shows every part within the task's position tolerance of
    its design position (read from the task's own scene file, not from the
    page) and the fingers are drawn;
  - with the Panda hand (a page body gripper_hand_1): the hand's box (the
    bounding box of hand.stl, its size read from the page's scene) and the
    fingers' boxes are drawn at the end, and over every frame the box's
    lowest corner, computed here from its pose, stays above the table (the
    turned palm clears it) while it moves with the fingers;
  - the 3D view draws (the WebGL canvas is not blank) and differs between the
    first and the last frame; playing runs; the console has no errors.
Never skipped: a missing browser fails.
"""
import json
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser_viewer as bv  # noqa: E402

WALK = """
const notes = [];
for (let i = 0; i < complan.frames; i++) {
  const n = complan.noteAt(i);
  if (!notes.length || notes[notes.length - 1] !== n) notes.push(n);
}
complan.seek(complan.frames - 1);
if (complan.note !== notes[notes.length - 1]) return null;
return notes;
"""


def design(task_path):
    """Design positions of the task's parts and its position tolerance, from
    the task file and its scene file."""
    with open(task_path) as f:
        task = json.load(f)
    scene = task["assembly"]
    if isinstance(scene, str):
        with open(os.path.join(os.path.dirname(task_path), scene)) as f:
            scene = json.load(f)
    parts = {b["name"]: b.get("position", [0, 0, 0]) for b in scene["bodies"] if not b.get("fixed")}
    return parts, task.get("tolerance", {}).get("position", 0.002)


def check_page(driver, page, doc, parts, tol, name):
    bv.open_page(driver, page, name + ": ")
    frames = driver.execute_script("return complan.frames;")
    if frames < 2:
        bv.fail("%s: %d frames" % (name, frames))
    notes = driver.execute_script(WALK)
    if notes is None:
        bv.fail("%s: complan.note after seek differs from noteAt" % name)
    stages = doc["stages"]
    # Notes stage after stage; inside a stage phases in order.
    at = 0
    for k, st in enumerate(stages):
        head = "stage %d of %d: %s, " % (k + 1, len(stages), st["part"])
        mine = [n for n in notes if n.startswith(head)]
        if not mine:
            bv.fail("%s: no note for %r in %r" % (name, head, notes))
        first = notes.index(mine[0])
        if first < at:
            bv.fail("%s: stage %d's notes come before stage %d's" % (name, k + 1, k))
        at = first
        if "approach" not in mine[0] or "retreat" not in mine[-1]:
            bv.fail("%s: stage %d runs %r .. %r" % (name, k + 1, mine[0], mine[-1]))
        verdict = "release -- certified %s, " % st["stability"]
        if not any(verdict in n for n in mine):
            bv.fail("%s: stage %d has no note %r: %r" % (name, k + 1, verdict, mine))
    print("%s: %d frames, %d notes, every stage's verdict shown" % (name, frames, len(notes)))
    got = driver.execute_script(
        "complan.seek(complan.frames - 1); const r = {};"
        "for (const n of arguments[0]) r[n] = complan.bodyPose(n);"
        "r.__fingers = complan.bodies.filter((b) => b.startsWith('gripper_')).map((b) => complan.visible(b));"
        "return r;", list(parts))
    worst = 0.0
    for part, want in parts.items():
        pose = got.get(part)
        if pose is None:
            bv.fail("%s: bodyPose(%r) is null" % (name, part))
        err = math.dist(pose["position"], want)
        worst = max(worst, err)
        if err > tol:
            bv.fail("%s: %s ends %.3g mm from its design position" % (name, part, 1e3 * err))
    if not got["__fingers"] or not any(got["__fingers"]):
        bv.fail("%s: no finger drawn at the end: %r" % (name, got["__fingers"]))
    print("%s: last frame: every part within %.3g mm of its design" % (name, 1e3 * worst))
    if doc.get("robot_type") == "panda_hand" and not check_hand(driver, page, name):
        bv.fail("%s: a Panda hand task's page has no body gripper_hand_1" % name)
    bv.check_first_last_and_play(driver, frames, name)


HAND = """
const size = arguments[0], out = {low: Infinity, moved: 0, frames: complan.frames};
let first = null;
for (let i = 0; i < complan.frames; i++) {
  complan.seek(i);
  const p = complan.bodyPose('gripper_hand_1');
  if (!p || !complan.visible('gripper_hand_1')) continue;
  const [w, x, y, z] = p.orientation;
  // third row of the rotation matrix: the world z of each box axis
  const r = [2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y)];
  let reach = 0;
  for (let k = 0; k < 3; k++) reach += 0.5 * size[k] * Math.abs(r[k]);
  out.low = Math.min(out.low, p.position[2] - reach);
  if (first === null) first = p.position;
  else out.moved = Math.max(out.moved, Math.hypot(p.position[0] - first[0], p.position[1] - first[1], p.position[2] - first[2]));
}
complan.seek(complan.frames - 1);
out.shown = complan.bodies.filter((b) => b.startsWith('gripper_') && complan.visible(b));
return out;
"""


def check_hand(driver, page, name):
    """The Panda hand's palm box on the page: drawn, moving, never below the
    table (z = 0)."""
    with open(page) as f:
        text = f.read()
    m = re.search(r'"name":"gripper_hand_1"[^]]*?"size":\[([^\]]*)\]', text)
    if not m:
        return False
    size = [float(v) for v in m.group(1).split(",")]
    if not (0.05 < size[0] < 0.08 and 0.18 < size[1] < 0.23 and 0.07 < size[2] < 0.11):
        bv.fail("%s: the hand's box is %r, not hand.stl's bounds" % (name, size))
    got = driver.execute_script(HAND, size)
    if "gripper_hand_1" not in got["shown"] or len(got["shown"]) < 9:
        bv.fail("%s: the hand and its fingers are not all drawn at the end: %r" % (name, got["shown"]))
    if got["moved"] < 0.05:
        bv.fail("%s: the hand's box moved only %.3g m" % (name, got["moved"]))
    if got["low"] < -1e-4:
        bv.fail("%s: the hand's box reaches %.3g mm below the table" % (name, -1e3 * got["low"]))
    print("%s: the Panda hand drawn (%d boxes), its box's lowest point %.1f mm above the table"
          % (name, len(got["shown"]), 1e3 * got["low"]))
    return True


def main():
    if len(sys.argv) != 4:
        bv.fail("usage: browser_sequence.py COMPLAN TASK OUTDIR")
    complan, task, outdir = sys.argv[1:4]
    os.makedirs(outdir, exist_ok=True)
    db = os.path.join(outdir, "sequence.sqlite")
    pages = [os.path.abspath(os.path.join(outdir, f)) for f in ("assemble.html", "replay.html")]
    for f in [db, db + "-wal", db + "-shm"] + pages:
        if os.path.exists(f):
            os.remove(f)
    out = subprocess.run([complan, "assemble", task, "--db", db, "--html", pages[0], "--json"],
                         check=True, stdout=subprocess.PIPE).stdout
    doc = json.loads(out)
    if doc["status"] != "solved":
        bv.fail("%s: %s" % (task, doc.get("message")))
    subprocess.run([complan, "replay", "--db", db, "--sequence", str(doc["sequence_id"]),
                    "--html", pages[1]], check=True, stdout=subprocess.DEVNULL)
    parts, tol = design(task)
    with open(task) as f:
        doc["robot_type"] = json.load(f)["robot"]["type"]
    driver, cleanup = bv.start_browser("1000,700")
    try:
        check_page(driver, pages[0], doc, parts, tol, "assemble --html")
        check_page(driver, pages[1], doc, parts, tol, "replay --sequence --html")
    finally:
        cleanup()
    print("sequence pages OK in %s" % outdir)


if __name__ == "__main__":
    main()
