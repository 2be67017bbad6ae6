#!/usr/bin/env python3
"""An assembly sequence's viewer page in a real browser (headless Chromium
through Selenium), reusing browser_viewer.py's browser start and checks.

usage: browser_assembly.py ASSEMBLY_PAGE_EXE SCENE OUTDIR [COMPLAN]

ASSEMBLY_PAGE_EXE (tests/planner/assembly_page.c) plans SCENE's sequence and
writes OUTDIR/page.html with the library (planner/view/assembly.h) and
OUTDIR/expected.json with the part poses of the animation's closed form. The
test opens the page from disk and checks:
  - window.complan has one frame per the animation's count;
  - after seek(i) every part is at the closed-form pose (to 1e-12), so the
    parts really move along their approach directions, one step at a time;
  - the 3D view draws (the WebGL canvas is not blank) and differs between
    the first frame (parts waiting) and the last (assembly complete);
  - playing runs, and the console has no errors.
With COMPLAN, `complan assemble SCENE --no-db --html FILE` must write a page
showing the same frames and poses. Never skipped: a missing browser fails.
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import browser_viewer as bv  # noqa: E402

TOL = 1e-12


def check_page(driver, page, expected, name):
    bv.open_page(driver, page, name + ": ")
    frames = driver.execute_script("return complan.frames;")
    if frames != expected["frames"]:
        bv.fail("%s: complan.frames = %r, expected %r" % (name, frames, expected["frames"]))
    worst = 0.0
    for frame, parts in expected["poses"].items():
        got = driver.execute_script(
            "complan.seek(arguments[0]); const r = {};"
            "for (const n of arguments[1]) r[n] = complan.bodyPose(n);"
            "r.__frame = complan.frame; return r;", int(frame), list(parts))
        if got["__frame"] != int(frame):
            bv.fail("%s: after seek(%s) the page is at frame %r" % (name, frame, got["__frame"]))
        for part, want in parts.items():
            pose = got.get(part)
            if pose is None:
                bv.fail("%s: bodyPose(%r) returned null" % (name, part))
            for key in ("position", "orientation"):
                for a, b in zip(pose[key], want[key]):
                    worst = max(worst, abs(a - b))
                    if not abs(a - b) <= TOL:
                        bv.fail("%s: frame %s, %s %s: page %r, closed form %r"
                                % (name, frame, part, key, pose[key], want[key]))
    print("%s: %d frames, part poses within %.3g of the closed form" % (name, frames, worst))
    bv.check_first_last_and_play(driver, frames, name)


def main():
    if len(sys.argv) not in (4, 5):
        bv.fail("usage: browser_assembly.py ASSEMBLY_PAGE_EXE SCENE OUTDIR [COMPLAN]")
    exe, scene, outdir = sys.argv[1:4]
    os.makedirs(outdir, exist_ok=True)
    for f in ("page.html", "expected.json", "cli.html"):
        if os.path.exists(os.path.join(outdir, f)):
            os.remove(os.path.join(outdir, f))
    subprocess.run([exe, scene, outdir], check=True)
    with open(os.path.join(outdir, "expected.json")) as f:
        expected = json.load(f)
    pages = [(os.path.abspath(os.path.join(outdir, "page.html")), "library page")]
    if len(sys.argv) == 5:
        cli = os.path.abspath(os.path.join(outdir, "cli.html"))
        subprocess.run([sys.argv[4], "assemble", scene, "--no-db", "--html", cli],
                       check=True, stdout=subprocess.DEVNULL)
        pages.append((cli, "complan assemble --html"))
    driver, cleanup = bv.start_browser("1000,700")
    try:
        for page, name in pages:
            check_page(driver, page, expected, name)
    finally:
        cleanup()
    print("assembly pages OK in %s" % outdir)


if __name__ == "__main__":
    main()
