#!/usr/bin/env python3
"""Screenshot of a viewer page in headless Chromium (how docs/img/viewer.png
is made; see docs/viewer.md).

usage: screenshot_page.py PAGE.html OUT.png [FRAME] [WIDTHxHEIGHT]

FRAME: the frame to show (default: the middle one; -1: the last).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from browser_viewer import fail, start_browser  # noqa: E402


def main():
    if len(sys.argv) < 3:
        fail(__doc__)
    page, out = os.path.abspath(sys.argv[1]), sys.argv[2]
    frame = int(sys.argv[3]) if len(sys.argv) > 3 else None
    size = sys.argv[4] if len(sys.argv) > 4 else "1200x750"
    driver, cleanup = start_browser(size.replace("x", ","))
    try:
        from selenium.webdriver.support.ui import WebDriverWait
        driver.get("file://" + page)
        WebDriverWait(driver, 60).until(
            lambda d: d.execute_script("return !!window.complan"))
        driver.execute_script(
            "const n = complan.frames, f = arguments[0];"
            "complan.seek(f === null ? Math.floor(n / 2) : f < 0 ? n + f : f);",
            frame)
        driver.save_screenshot(out)
    finally:
        cleanup()


if __name__ == "__main__":
    main()
