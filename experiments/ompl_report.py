#!/usr/bin/env python3
"""Tables of a `complan plan --benchmark` database that holds complan's and
OMPL's planners (docs/ompl.md), one table per experiment (task), as
Markdown: experiments/results/ompl.md.

Usage: ompl_report.py DB [TASK_NAME ...]

TASK_NAMEs label the experiments in order (default: the experiment's name).

Per planner: runs solved; time to the first plan (mean over the solved
runs of the first progress row with a plan: complan's planners sample
every 0.05 s, OMPL's runs too and add a row the moment the adapter's goal
sees a plan, or SST's cheaper one; a planner that stops at its first plan
has it in its last row); the run's time (mean over all runs: a run can
overrun its limit by what one iteration takes); best cost (mean over
solved runs); states kept (graph_states: complan's nodes; OMPL's
motions); actions simulated (expansions), LCP solves and the least goal
distance reached (means over all runs).

Then the best cost over time, from the progress table: at 1/50, 1/10, 1/5
and all of the time limit, the mean over the runs that had a plan by then
of the cheapest plan so far, and how many runs had one (left out when no
run found a plan)."""
import sqlite3
import sys


def mean(v):
    v = [x for x in v if x is not None]
    return sum(v) / len(v) if v else None


def fmt(x, spec):
    return "-" if x is None else format(x, spec)


def label(pname):
    return pname.replace("control_complan_", "").replace("control_", "ompl:")


def main(path, names):
    db = sqlite3.connect(path)
    exps = db.execute("SELECT id, timelimit, runcount FROM experiments"
                      " ORDER BY id").fetchall()
    for k, (eid, limit, runcount) in enumerate(exps):
        name = names[k] if k < len(names) else f"experiment {eid}"
        print(f"#### {name}\n")
        print(f"{runcount} runs per planner, {limit:g} s each.\n")
        print("| planner | solved | first plan (s) | run (s) | best cost | states "
              "| actions simulated | LCP solves | nearest (m) |")
        print("|---|---|---|---|---|---|---|---|---|")
        planners = db.execute(
            "SELECT DISTINCT c.id, c.name FROM plannerConfigs c JOIN runs r"
            " ON r.plannerid = c.id WHERE r.experimentid = ? ORDER BY c.id",
            (eid,)).fetchall()
        marks = (limit / 50, limit / 10, limit / 5, limit)
        over_time = []
        for pid, pname in planners:
            rows = db.execute(
                "SELECT id, time, solved, best_cost, graph_states, expansions,"
                " lcp_solves, best_goal_distance FROM runs WHERE"
                " experimentid = ? AND plannerid = ?", (eid, pid)).fetchall()
            solved = [r for r in rows if r[2]]
            first = [db.execute("SELECT min(time) FROM progress WHERE runid = ?"
                                " AND best_cost IS NOT NULL", (r[0],)
                                ).fetchone()[0] for r in solved]
            print(f"| {label(pname)} | {len(solved)}/{len(rows)} "
                  f"| {fmt(mean(first), '.3f')} "
                  f"| {fmt(mean([r[1] for r in rows]), '.3g')} "
                  f"| {fmt(mean([r[3] for r in solved]), '.3g')} "
                  f"| {fmt(mean([r[4] for r in rows]), '.0f')} "
                  f"| {fmt(mean([r[5] for r in rows]), '.0f')} "
                  f"| {fmt(mean([r[6] for r in rows]), '.0f')} "
                  f"| {fmt(mean([r[7] for r in rows]), '.3g')} |")
            cells = []
            for t in marks:
                costs = [db.execute(
                    "SELECT min(best_cost) FROM progress WHERE runid = ? AND"
                    " time <= ? AND best_cost IS NOT NULL", (r[0], t)
                    ).fetchone()[0] for r in rows]
                costs = [c for c in costs if c is not None]
                cells.append(f"{fmt(mean(costs), '.3g')} ({len(costs)}/{len(rows)})")
            over_time.append((label(pname), cells, len(costs)))
        print()
        if not any(c for _, _, c in over_time):
            continue  # no plan: no cost over time
        print("Best cost over time (mean cost of the runs with a plan by then, "
              "and how many):\n")
        print("| planner | " + " | ".join(f"{t:g} s" for t in marks) + " |")
        print("|---|" + "---|" * len(marks))
        for lab, cells, _ in over_time:
            print(f"| {lab} | " + " | ".join(cells) + " |")
        print()


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1], sys.argv[2:]))
