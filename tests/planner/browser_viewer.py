#!/usr/bin/env python3
"""The viewer page in a real browser (headless Chromium through Selenium).

usage: browser_viewer.py VIEWER_PAGE_EXE OUTDIR [COMPLAN TASK...]

VIEWER_PAGE_EXE (tests/planner/viewer_page.c) writes OUTDIR/page.html from
the fixture scene and OUTDIR/expected.json with the closed-form poses. The
test opens the page from disk and checks:
  - window.complan has the frames, times and body names of the contract;
  - seek(i) puts every body and link at the pose the C side wrote (to 1e-12:
    the closed forms are evaluated independently of models/ kinematics);
  - the 3D view draws (the WebGL canvas is not blank) and seek changes it;
  - seek rejects a frame out of range;
  - the browser console has no errors.
It writes OUTDIR/screenshot.png. With COMPLAN and task files, each task is
planned and its plan replayed into a page and a CSV (`complan replay --html
--csv`); the page must load without console errors, have a frame per CSV
row and show the goal body at the CSV's final position and orientation.
If Selenium or the browser cannot start, the test FAILS with a loud
message: it is never skipped.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

TOL = 1e-12


def fail(msg):
    print("FAIL: " + msg, file=sys.stderr)
    sys.exit(1)


def main():
    if len(sys.argv) < 3 or len(sys.argv) == 4:
        fail("usage: browser_viewer.py VIEWER_PAGE_EXE OUTDIR [COMPLAN TASK...]")
    exe, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    for f in ("page.html", "expected.json", "screenshot.png"):
        if os.path.exists(os.path.join(outdir, f)):
            os.remove(os.path.join(outdir, f))
    subprocess.run([exe, outdir], check=True)
    page = os.path.abspath(os.path.join(outdir, "page.html"))
    with open(os.path.join(outdir, "expected.json")) as f:
        expected = json.load(f)

    driver, cleanup = start_browser("1000,700")
    try:
        check(driver, page, expected, outdir)
        for arg in sys.argv[4:]:
            if arg.startswith("scene="):
                check_simulate(driver, sys.argv[3], arg[6:], outdir)
            else:
                check_replay(driver, sys.argv[3], arg, outdir)
    finally:
        cleanup()
    print("viewer page OK in %s" % page)


def check_replay(driver, complan, task, outdir):
    """A bundled task's plan, replayed into a page: it loads cleanly and
    shows the CSV's trajectory."""
    name = os.path.splitext(os.path.basename(task))[0]
    db = os.path.join(outdir, name + ".sqlite")
    page = os.path.abspath(os.path.join(outdir, name + ".html"))
    csv = os.path.join(outdir, name + ".csv")
    for f in (db, page, csv):
        if os.path.exists(f):
            os.remove(f)
    # No wall-time limit: a loaded machine or a sanitizer build is slow, and
    # the node limit decides anyway.
    subprocess.run([complan, "plan", task, "--db", db, "--max-seconds", "3600"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run([complan, "replay", "--db", db, "--verify", "--html", page,
                    "--csv", csv], check=True, stdout=subprocess.DEVNULL)
    with open(task) as f:
        goal_body = json.load(f)["goal"]["body"]
    check_page_csv(driver, name, page, csv, goal_body)


def check_simulate(driver, complan, scene, outdir):
    """A bundled scene simulated with --html and --csv: the page matches
    the CSV (every free body at the final row's pose)."""
    name = "simulate_" + os.path.splitext(os.path.basename(scene))[0]
    page = os.path.abspath(os.path.join(outdir, name + ".html"))
    csv = os.path.join(outdir, name + ".csv")
    for f in (page, csv):
        if os.path.exists(f):
            os.remove(f)
    subprocess.run([complan, "simulate", scene, "--duration", "0.3", "--dt",
                    "0.002", "--every", "5", "--html", page, "--csv", csv],
                   check=True, stdout=subprocess.DEVNULL)
    with open(scene) as f:
        bodies = [b["name"] for b in json.load(f)["bodies"] if not b.get("fixed")]
    for b in bodies:
        check_page_csv(driver, name, page, csv, b)


def check_page_csv(driver, name, page, csv, goal_body):
    with open(csv) as f:
        rows = [l.rstrip("\n").split(",") for l in f]
    header, last = rows[0], rows[-1]
    col = header.index(goal_body + ".x")
    want_p = [float(v) for v in last[col:col + 3]]
    want_q = [float(v) for v in last[col + 3:col + 7]]
    driver.get("file://" + page)
    from selenium.webdriver.support.ui import WebDriverWait
    WebDriverWait(driver, 60).until(
        lambda d: d.execute_script("return !!window.complan"))
    frames = driver.execute_script("return complan.frames;")
    if frames != len(rows) - 1:
        fail("%s: the page has %r frames, the CSV %d rows" % (name, frames, len(rows) - 1))
    pose = driver.execute_script(
        "complan.seek(complan.frames - 1); return complan.bodyPose(arguments[0]);",
        goal_body)
    if pose["position"] != want_p or pose["orientation"] != want_q:
        fail("%s: last frame shows %s at %r, the CSV has %r %r"
             % (name, goal_body, pose, want_p, want_q))
    driver.execute_script("complan.play();")
    time.sleep(0.3)
    dump_console(driver, fail_on_error=True)
    print("%s: page OK (%d frames, %s at the CSV's final pose)"
          % (name, frames, goal_body))


def start_browser(window_size):
    """Headless Chromium through Selenium with a fresh profile; returns the
    driver and a function that quits it and removes the profile. Fails
    loudly (never skips) when Selenium or the browser is missing or cannot
    start."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError as e:
        fail("=== THE BROWSER TEST CANNOT RUN: Selenium is missing (%s). Install "
             "python3-selenium, chromium and chromium-driver (.ci/deps). ===" % e)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_bin = shutil.which("chromedriver")
    if not chromium or not driver_bin:
        fail("=== THE BROWSER TEST CANNOT RUN: chromium (%s) or chromedriver (%s) "
             "not found. Install chromium and chromium-driver (.ci/deps). ==="
             % (chromium, driver_bin))
    profile = tempfile.mkdtemp(prefix="complan-chromium-")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for a in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
              "--no-first-run", "--disable-background-networking",
              "--disable-component-update", "--disable-sync",
              "--disable-dev-shm-usage",
              # WebGL without a GPU: SwiftShader, which Chromium only uses
              # when asked to.
              "--use-angle=swiftshader", "--enable-unsafe-swiftshader",
              "--window-size=" + window_size, "--user-data-dir=" + profile):
        opts.add_argument(a)
    opts.set_capability("goog:loggingOptions", {"browser": "ALL"})
    try:
        driver = webdriver.Chrome(service=Service(driver_bin), options=opts)
    except Exception as e:  # noqa: BLE001 -- any failure to start is fatal
        shutil.rmtree(profile, ignore_errors=True)
        fail("=== THE BROWSER COULD NOT START: %s ===" % e)

    def cleanup():
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)
    return driver, cleanup


def open_page(driver, page, what=""):
    """Loads the page from disk and waits for window.complan."""
    from selenium.webdriver.support.ui import WebDriverWait
    driver.get("file://" + page)
    try:
        WebDriverWait(driver, 60).until(
            lambda d: d.execute_script("return !!window.complan"))
    except Exception:  # noqa: BLE001
        dump_console(driver)
        fail(what + "window.complan never appeared")


def check(driver, page, expected, outdir):
    open_page(driver, page)

    api = driver.execute_script(
        "const c = window.complan; return {frames: c.frames, time: c.time, "
        "bodies: c.bodies, seek: typeof c.seek, bodyPose: typeof c.bodyPose};")
    if api["frames"] != expected["frames"]:
        fail("complan.frames = %r, expected %r" % (api["frames"], expected["frames"]))
    if api["bodies"] != expected["bodies"]:
        fail("complan.bodies = %r, expected %r" % (api["bodies"], expected["bodies"]))
    if api["time"] != expected["time"]:
        fail("complan.time differs from the frames' times")
    if api["seek"] != "function" or api["bodyPose"] != "function":
        fail("complan.seek / bodyPose are not functions: %r" % api)

    worst = 0.0
    for frame, bodies in expected["poses"].items():
        got = driver.execute_script(
            "complan.seek(arguments[0]); const r = {};"
            "for (const n of complan.bodies) r[n] = complan.bodyPose(n);"
            "r.__frame = complan.frame; return r;", int(frame))
        if got["__frame"] != int(frame):
            fail("after seek(%s) the page is at frame %r" % (frame, got["__frame"]))
        for name, want in bodies.items():
            pose = got.get(name)
            if pose is None:
                fail("bodyPose(%r) returned null" % name)
            for key in ("position", "orientation"):
                for a, b in zip(pose[key], want[key]):
                    d = abs(a - b)
                    worst = max(worst, d)
                    if not d <= TOL:
                        fail("frame %s, %s %s: page %r, expected %r (|d| = %g)"
                             % (frame, name, key, pose[key], want[key], d))
    print("seek/bodyPose: largest deviation from the closed forms %.3g" % worst)

    # seek moved the bodies: the box's pose at the first and last frames.
    first = driver.execute_script("complan.seek(0); return complan.bodyPose('box');")
    last = driver.execute_script(
        "complan.seek(complan.frames - 1); return complan.bodyPose('box');")
    if first == last:
        fail("seek(0) and seek(last) leave the box at the same pose")
    if driver.execute_script("return complan.bodyPose('no such body');") is not None:
        fail("bodyPose of an unknown name is not null")
    err = driver.execute_script(
        "try { complan.seek(complan.frames); return null; } "
        "catch (e) { return e.name; }")
    if err != "RangeError":
        fail("seek(frames) did not throw a RangeError (got %r)" % err)

    # The 3D view draws: read the WebGL canvas back (preserveDrawingBuffer).
    stats = []
    for i in (0, expected["frames"] - 1):
        s = driver.execute_script(CANVAS_STATS, i)
        if s is None:
            fail("no WebGL canvas on the page (WebGL unavailable?)")
        stats.append(s)
        print("frame %d: %dx%d canvas, %.1f %% of pixels off the background, "
              "%d colours" % (i, s["w"], s["h"], 100 * s["drawn"], s["colours"]))
        if s["drawn"] < 0.02 or s["colours"] < 50:
            fail("the canvas looks blank at frame %d: %r" % (i, s))
    if stats[0]["hash"] == stats[1]["hash"]:
        fail("the picture did not change between the first and last frame")
    driver.execute_script("complan.seek(Math.floor(complan.frames / 2));")
    driver.save_screenshot(os.path.join(outdir, "screenshot.png"))

    # Play for a moment: the animation loop must run without errors.
    driver.execute_script("complan.play();")
    time.sleep(0.5)
    driver.execute_script("complan.pause();")
    dump_console(driver, fail_on_error=True)


CANVAS_STATS = """
complan.seek(arguments[0]);
const c = document.querySelector('canvas');
if (!c) return null;
const w = c.width, h = c.height;
const cv = document.createElement('canvas');
cv.width = w; cv.height = h;
const g = cv.getContext('2d');
g.drawImage(c, 0, 0);
const px = g.getImageData(0, 0, w, h).data;
const bg = [px[0], px[1], px[2]];
let drawn = 0, hash = 0;
const colours = new Set();
for (let i = 0; i < px.length; i += 4) {
  const r = px[i], gg = px[i + 1], b = px[i + 2];
  if (Math.abs(r - bg[0]) + Math.abs(gg - bg[1]) + Math.abs(b - bg[2]) > 12) drawn++;
  if (colours.size < 5000) colours.add((r << 16) | (gg << 8) | b);
  hash = (hash * 31 + r * 7 + gg * 3 + b) >>> 0;
}
return {w: w, h: h, drawn: drawn / (w * h), colours: colours.size, hash: hash};
"""


def check_first_last_and_play(driver, frames, name):
    """The canvas draws at the first and the last frame (not blank) and the
    picture differs between them; playing runs; no console errors."""
    stats = []
    for i in (0, frames - 1):
        s = driver.execute_script(CANVAS_STATS, i)
        if s is None:
            fail("%s: no WebGL canvas on the page" % name)
        print("%s: frame %d: %.1f %% of pixels drawn, %d colours"
              % (name, i, 100 * s["drawn"], s["colours"]))
        if s["drawn"] < 0.02 or s["colours"] < 50:
            fail("%s: the canvas looks blank at frame %d: %r" % (name, i, s))
        stats.append(s)
    if stats[0]["hash"] == stats[1]["hash"]:
        fail("%s: the picture did not change between the first and last frame" % name)
    driver.execute_script("complan.play();")
    time.sleep(0.5)
    driver.execute_script("complan.pause();")
    dump_console(driver, fail_on_error=True)


def dump_console(driver, fail_on_error=False):
    errors = []
    for entry in driver.get_log("browser"):
        print("console %s: %s" % (entry.get("level"), entry.get("message")),
              file=sys.stderr)
        if entry.get("level") == "SEVERE":
            errors.append(entry.get("message"))
    if fail_on_error and errors:
        fail("%d console error(s), first: %s" % (len(errors), errors[0]))


if __name__ == "__main__":
    main()
