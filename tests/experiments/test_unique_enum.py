#!/usr/bin/env python3
"""experiments/unique_enum: the paper study's uniqueness verdicts against an
enumeration of every complementary support, on the data sets with n <= 10
(90 data sets, about a second). Asserts that the program ran every data
set, that no decided verdict of the study is contradicted, and that the
enumeration reaches both answers by itself: the study's "unique" rows are
"unique" here and its "not unique" rows "not unique" (so a check that said
"unique" for everything would fail). Also: a bad MAXN is a usage error
(exit 2). Usage: test_unique_enum.py UNIQUE_ENUM"""
import re
import subprocess
import sys


def main():
    exe = sys.argv[1]
    failures = []

    def check(ok, what):
        if not ok:
            failures.append(what)

    r = subprocess.run([exe, "10"], capture_output=True, text=True)
    check(r.returncode == 0, f"exit status {r.returncode}: {r.stderr[-500:]}")
    rows = [l.split("|")[1:-1] for l in r.stdout.splitlines()
            if re.match(r"\| \d+ \| [01]\.\d \|", l)]
    check(len(rows) == 90, f"{len(rows)} rows, expected 90 (9 problems x 10 mu)")
    study = {"unique": 0, "not unique": 0}
    for c in rows:
        n, sv, ev, agree = int(c[2]), c[3].strip(), c[7].strip(), c[9].strip()
        check(n <= 10, f"a row with n = {n} > 10")
        if sv in study:
            study[sv] += 1
            check(ev == sv and agree == "yes",
                  f"problem {c[0].strip()} mu {c[1].strip()}: study {sv}, enumeration {ev}")
    # Both verdicts occur among the small data sets (committed study:
    # 44 unique, 46 not unique with n <= 10).
    check(study["unique"] > 0 and study["not unique"] > 0, f"verdicts {study}")
    m = re.search(r"(\d+) decided verdicts of the study confirmed, (\d+) contradicted",
                  r.stdout)
    check(m is not None and int(m.group(2)) == 0 and
          int(m.group(1)) == study["unique"] + study["not unique"],
          f"summary line: {m.group(0) if m else 'missing'}")

    for bad in (["0"], ["31"], ["10", "1", "x"]):
        b = subprocess.run([exe] + bad, capture_output=True, text=True)
        check(b.returncode == 2 and "usage" in b.stderr and not b.stdout,
              f"unique_enum {' '.join(bad)}: exit {b.returncode}, stderr {b.stderr!r}")

    for f in failures:
        print("FAIL:", f)
    print(f"{'ok' if not failures else 'failed'}: {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
