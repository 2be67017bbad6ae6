#!/usr/bin/env python3
"""Per-call overhead of complan.World.step from Python over the C step
(issue 28's target: <= 2 us), measured in one run on the same scene:

  three worlds made alike; each round runs N calls of world.step() from a
  Python loop, N bare ctypes calls of cp_world_step from a Python loop,
  and N steps of cp_simulate (world.simulate: the C loop, no Python between
  steps), in alternating order. overhead = (t_loop - t_C) / N, median over
  the rounds. The worlds take the same steps, so their hashes must agree at
  the end (checked).

Usage (from a build tree, docs/python.md):
  COMPLAN_LIB=build/libcomplan.so PYTHONPATH=python OPENBLAS_NUM_THREADS=1 \\
    /usr/bin/python3 experiments/bench_python.py [--steps N] [--rounds R]
"""
import argparse
import json
import os
import statistics
import sys
import time

import complan
from complan import _lib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BOX_DROP = os.path.join(ROOT, "models", "scenes", "box_drop.json")


def scene_dict(high):
    with open(BOX_DROP) as f:
        d = json.load(f)
    if high:  # floating 1 m above the table without gravity: no contact
        d["bodies"][1]["position"] = [0.0, 0.0, 1.0]
        d["gravity"] = [0.0, 0.0, 0.0]
    return d


def case(name, high, warmup_s, steps, rounds):
    scene = complan.Scene.from_dict(scene_dict(high), check_normal_speed=False)
    a, r, b = (complan.World(scene) for _ in range(3))
    for w in (a, r, b):
        if warmup_s:
            w.simulate(warmup_s)
    dt = a.dt

    def python_loop():
        step = a.step
        for _ in range(steps):
            step()

    def raw_loop():  # the bare ctypes call, without World.step around it
        f, wp, info = _lib.world_step, r._wp, r._info_ref
        for _ in range(steps):
            f(wp, info)

    runs = [python_loop, raw_loop, lambda: b.simulate(steps * dt)]
    t = [[], [], []]
    for k in range(rounds):
        for i in (range(3) if k % 2 == 0 else reversed(range(3))):
            t0 = time.perf_counter_ns()
            runs[i]()
            t[i].append((time.perf_counter_ns() - t0) / steps / 1e3)
    if not a.hash() == r.hash() == b.hash():
        sys.exit("bench_python: %s: the Python and C loops disagree (hash)" % name)
    c_us = statistics.median(t[2])
    over = statistics.median([p - c for p, c in zip(t[0], t[2])])
    raw = statistics.median([p - c for p, c in zip(t[1], t[2])])
    return name, c_us, over, raw, a.info["contacts"]


def bare_call(n=200000):
    """One ctypes call into the library (cp_world_time) from a loop."""
    w = complan.World(complan.Scene.from_dict(scene_dict(True)))
    f, p = _lib.world_time, w._w
    t0 = time.perf_counter_ns()
    for _ in range(n):
        f(p)
    return (time.perf_counter_ns() - t0) / n / 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    rows = [case("box floating (no contact)", True, 0.0, args.steps, args.rounds),
            case("box resting on the table", False, 2.0, args.steps, args.rounds)]
    print("complan %s, %s, %d steps x %d rounds" % (complan.__version__, complan.lib_path,
                                                    args.steps, args.rounds))
    print("| case | contacts | C step (us) | overhead of World.step() (us) "
          "| overhead of the bare ctypes call (us) |")
    print("|---|---|---|---|---|")
    for name, c, o, raw, k in rows:
        print("| %s | %d | %.2f | %.2f | %.2f |" % (name, k, c, o, raw))
    print("one bare ctypes call (cp_world_time): %.2f us" % bare_call())


if __name__ == "__main__":
    main()
