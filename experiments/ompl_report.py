#!/usr/bin/env python3
"""Tables of a `complan plan --benchmark` database that holds complan's and
OMPL's planners (docs/ompl.md), one table per experiment (task), as
Markdown: experiments/results/ompl.md.

Usage: ompl_report.py DB

Per planner: runs solved; time to the first plan (mean over the solved
runs: the run's time for planners that stop at their first plan, the first
progress sample with a plan for complan's sst; OMPL's SST keeps no such
record and runs to the limit); best cost (mean over solved runs); states
kept (graph_states: complan's nodes; OMPL's motions); actions simulated
(expansions), LCP solves and the least goal distance reached (means over
all runs; OMPL's: its approximate solution's distance, 0 when solved)."""
import sqlite3
import sys


def mean(v):
    v = [x for x in v if x is not None]
    return sum(v) / len(v) if v else None


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def main(path):
    db = sqlite3.connect(path)
    for eid, setup, limit, runcount in db.execute(
            "SELECT id, setup, timelimit, runcount FROM experiments ORDER BY id"):
        name = setup.split('"name"', 1)[1].split('"')[1] if '"name"' in setup else eid
        print(f"### {name}\n")
        print(f"{runcount} runs per planner, {limit:g} s each.\n")
        print("| planner | solved | first plan (s) | best cost | states "
              "| actions simulated | LCP solves | nearest (m) |")
        print("|---|---|---|---|---|---|---|---|")
        for pid, pname in db.execute(
                "SELECT DISTINCT c.id, c.name FROM plannerConfigs c JOIN runs r"
                " ON r.plannerid = c.id WHERE r.experimentid = ? ORDER BY c.id",
                (eid,)):
            rows = db.execute(
                "SELECT id, time, solved, best_cost, graph_states, expansions,"
                " lcp_solves, best_goal_distance FROM runs WHERE experimentid = ? AND plannerid = ?",
                (eid, pid)).fetchall()
            solved = [r for r in rows if r[2]]
            first = []
            for r in solved:
                if pname == "control_complan_sst":
                    t = db.execute("SELECT min(time) FROM progress WHERE runid = ?"
                                   " AND best_cost IS NOT NULL", (r[0],)).fetchone()[0]
                    first.append(t)
                elif pname != "control_SST":
                    first.append(r[1])
            label = pname.replace("control_complan_", "").replace("control_", "ompl:")
            print(f"| {label} | {len(solved)}/{len(rows)} "
                  f"| {fmt(mean(first), '.3f')} "
                  f"| {fmt(mean([r[3] for r in solved]), '.3g')} "
                  f"| {fmt(mean([r[4] for r in rows]), '.0f')} "
                  f"| {fmt(mean([r[5] for r in rows]), '.0f')} "
                  f"| {fmt(mean([r[6] for r in rows]), '.0f')} "
                  f"| {fmt(mean([r[7] for r in rows]), '.3g')} |")
        print()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
