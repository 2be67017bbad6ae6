#!/usr/bin/env python3
"""Per-call overhead of complan.World.step from Python over the C step
(issue 28's target: <= 2 us), measured in one run on the same scene:

  four worlds made alike; each round runs N calls of world.step() from a
  Python loop, N of world.step() each followed by world.get_state(buf) into
  one reused array, N bare ctypes calls of cp_world_step from a Python
  loop, and N steps of cp_simulate (world.simulate: the C loop, no Python
  between steps), in alternating order. overhead = (t_loop - t_C) / N,
  median over the rounds. The worlds take the same steps, so their hashes
  must agree at the end (checked). Times are the CPU time of the thread
  (time.thread_time_ns; --clock wall for the wall clock), so that the time
  other processes hold the core does not count; the load average is
  printed with the table, since on a shared machine it still moves every
  figure (caches, frequency).

Usage (from a build tree, docs/python.md):
  PYTHONPATH=build/python OPENBLAS_NUM_THREADS=1 \\
    /usr/bin/python3 experiments/bench_python.py [--steps N] [--rounds R] [--clock cpu|wall]
"""
import argparse
import json
import os
import statistics
import sys
import time

import numpy as np

import complan
from complan import _lib

clock = time.thread_time_ns  # --clock wall: time.perf_counter_ns
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
    a, s, r, b = (complan.World(scene) for _ in range(4))
    for w in (a, s, r, b):
        if warmup_s:
            w.simulate(warmup_s)
    dt = a.dt

    def python_loop():
        step = a.step
        for _ in range(steps):
            step()

    def state_loop():  # a step and its state, into one reused buffer
        step, get, buf = s.step, s.get_state, np.empty(s.state_size)
        for _ in range(steps):
            step()
            get(buf)

    def raw_loop():  # the bare ctypes call, without World.step around it
        f, wp, info = _lib.world_step_raw, r._wp, r._info_ref
        for _ in range(steps):
            f(wp, info)

    runs = [python_loop, state_loop, raw_loop, lambda: b.simulate(steps * dt)]
    t = [[] for _ in runs]
    for k in range(rounds):
        for i in (range(len(runs)) if k % 2 == 0 else reversed(range(len(runs)))):
            t0 = clock()
            runs[i]()
            t[i].append((clock() - t0) / steps / 1e3)
    if not a.hash() == s.hash() == r.hash() == b.hash():
        sys.exit("bench_python: %s: the Python and C loops disagree (hash)" % name)
    c_us = statistics.median(t[-1])
    over = [statistics.median([p - c for p, c in zip(t[i], t[-1])]) for i in range(3)]
    return (name, c_us, *over, a.info["contacts"])


def bare_call(n=200000):
    """One ctypes call into the library (cp_world_time) from a loop."""
    w = complan.World(complan.Scene.from_dict(scene_dict(True)))
    f, p = _lib.world_time, w._w
    t0 = clock()
    for _ in range(n):
        f(p)
    return (clock() - t0) / n / 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=20000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    args = ap.parse_args()
    global clock
    clock = time.thread_time_ns if args.clock == "cpu" else time.perf_counter_ns
    load0 = os.getloadavg()[0]
    rows = [case("box floating (no contact)", True, 0.0, args.steps, args.rounds),
            case("box resting on the table", False, 2.0, args.steps, args.rounds)]
    print("complan %s, %s, %d steps x %d rounds, %s time, load average %.1f before, "
          "%.1f after" % (complan.__version__, complan.lib_path, args.steps, args.rounds,
                          "CPU" if args.clock == "cpu" else "wall", load0, os.getloadavg()[0]))
    print("| case | contacts | C step (us) | overhead of World.step() (us) "
          "| of World.step() + get_state(buf) (us) | of the bare ctypes call (us) |")
    print("|---|---|---|---|---|---|")
    for name, c, o, st, raw, k in rows:
        print("| %s | %d | %.2f | %.2f | %.2f | %.2f |" % (name, k, c, o, st, raw))
    print("one bare ctypes call (cp_world_time): %.2f us" % bare_call())

if __name__ == "__main__":
    main()
