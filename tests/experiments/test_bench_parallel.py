#!/usr/bin/env python3
"""experiments/bench_parallel's control (two independent 1-thread runs at
once) on a short run: `BENCH_TASK=push BENCH_NODES=N bench_parallel 1 16
timed`. Its table has one row per mode (default pipelined, plain); both
control runs grew the tree of the mode's 1-thread run ("same nodes and
plan" yes, each run's node count that of the 1-thread row); and, with one
round, its figures multiply back to the main table's: the 2-thread (or
2-rank) row over the control, times the control over the lone 1-thread
run, is that row's ratio to the 1-thread run (to the printed digits).
Also BENCH_NODES=0 is a usage error (exit 2). Nothing here depends on
timings. Usage: test_bench_parallel.py BENCH SOURCE_ROOT"""
import os
import subprocess
import sys

NODES = 150


def cells(line):
    return [c.strip() for c in line.strip().strip("|").split("|")]


def lead(cell):
    """The number a cell starts with ("1.83x [1.80-1.90]" -> 1.83)."""
    return float(cell.split()[0].rstrip("x%"))


def main():
    bench, root = sys.argv[1:3]
    # In a sanitizer build the ranks' leak checks would fail on Open MPI's
    # own allocations (in MCA components unloaded by exit, which no
    # suppression can name) and OMPL's static ones, as tests/planner/
    # test_mpi.c explains; AddressSanitizer's other checks and UBSan stay
    # on. The library's memory is leak-checked by the in-process tests.
    env = dict(os.environ, OPENBLAS_NUM_THREADS="1", BENCH_TASK="push",
               OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               ASAN_OPTIONS="detect_leaks=0:abort_on_error=0")
    failures = []

    def check(ok, what):
        if not ok:
            failures.append(what)

    r = subprocess.run([bench, "1", "16", "timed"], cwd=root, capture_output=True,
                       text=True, env=dict(env, BENCH_NODES="0"), timeout=60)
    check(r.returncode == 2 and "BENCH_NODES" in r.stderr,
          "BENCH_NODES=0: exit %d, stderr %r" % (r.returncode, r.stderr))

    r = subprocess.run([bench, "1", "16", "timed"], cwd=root, capture_output=True,
                       text=True, env=dict(env, BENCH_NODES=str(NODES)), timeout=1500)
    check(r.returncode == 0, "bench_parallel exit %d: %s" % (r.returncode, r.stderr))
    rows = [cells(l) for l in r.stdout.splitlines() if l.startswith("| push.json |")]
    main_rows = {c[4]: c for c in rows if len(c) == 17}
    ctl_rows = {c[3]: c for c in rows if len(c) == 11 and c[1] == "sst"}
    check(len(main_rows) == 9, "main table rows: %s" % sorted(main_rows))
    check(all(c[13] == "yes" for c in main_rows.values()),
          "main table, same nodes: %s" % [c[13] for c in main_rows.values()])
    check(len(ctl_rows) == 2, "control rows: %s\n%s" % (sorted(ctl_rows), r.stdout))
    for mode, c in ctl_rows.items():
        one = main_rows.get("1 thread, " + mode)
        two_t = main_rows.get("2 threads, " + mode)
        two_r = main_rows.get("2 ranks, " + mode)
        if not (one and two_t and two_r):
            failures.append("no 1-thread, 2-thread or 2-rank row for %r" % mode)
            continue
        check(c[8] == "yes", "%s: control runs not the same tree: %s" % (mode, c))
        check(c[4] == "%s / %s" % (one[3], one[3]),
              "%s: control nodes %r, 1 thread %r" % (mode, c[4], one[3]))
        check(int(one[3]) >= NODES // 2, "%s: only %s nodes" % (mode, one[3]))
        control = lead(c[5])
        slow = [float(x) for x in c[6].split("/")]
        both = lead(c[7])
        # The CPU per expansion is the run's process CPU less a 1-node
        # pair's: at this short length the subtraction is start-up noise
        # and may even come out negative on a busy machine, so only its
        # presence is checked (never its size).
        check(control > 0 and len(slow) == 2 and 0 <= both <= 100,
              "%s: control figures %s" % (mode, c[5:8]))
        # One round: (row / sum) x (sum / lone) = row / lone, to the digits
        # printed (each figure rounded to 0.005).
        for row, over in ((two_t, lead(c[9])), (two_r, lead(c[10]))):
            want = lead(row[8])
            tol = 0.005 * (control + over) + 0.005 + 1e-9
            check(abs(over * control - want) <= tol,
                  "%s: %s over the control %.2f x control %.2f != %.2f" %
                  (mode, row[4], over, control, want))
    if failures:
        print("\n".join(failures))
        print(r.stdout)
        return 1
    print(r.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
