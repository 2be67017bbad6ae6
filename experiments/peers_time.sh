#!/bin/bash
# Time per solve of complan's Lemke against Siconos' lexicolemke (and,
# optionally, of another complan build) on the same calls as peers_ir.sh:
# user CPU of `bench_peers --count S R FILE` minus that of
# `--count S 0 FILE` (start-up and parsing cancel; the smallest of three
# such runs per solver and file), divided by R. The solvers run
# alternately, ROUNDS rounds, so that a change of the machine's load hits
# each of them alike; printed per instance: the median and the fastest
# round of each, and complan / Siconos. Wall time is never used.
#   bash experiments/peers_time.sh ROUNDS R [FILE.dat ...]  (default: the n <= 40 set)
# BENCH_PEERS=path: the build measured (built with Siconos);
# BENCH_BEFORE=path: a second bench_peers whose complan runs beside it
# (before/after a change: its column "before", and after / before).
# R: solves per run, or "auto": about 0.3 s of complan's solves per run
# (the smallest power of 10 from 100 taking 0.03 s in the faster of two
# runs, scaled).
# On a shared machine run it at a high priority, e.g.
#   setsid bash -c 'echo -15 > /proc/$$/autogroup; bash experiments/peers_time.sh 7 2000000 F.dat'
set -e
B=${BENCH_PEERS:-./build/experiments/bench_peers}
[ $# -ge 2 ] || { echo "usage: peers_time.sh ROUNDS R [FILE.dat ...]" >&2; exit 2; }
ROUNDS=$1; R=$2; shift 2
[ -x "$B" ] || { echo "peers_time.sh: build $B first" >&2; exit 2; }
"$B" --count 2 0 /dev/null 2>&1 | grep -q "0..1" &&
  { echo "peers_time.sh: $B was built without Siconos" >&2; exit 2; }
if [ $# -eq 0 ]; then
  set -- $(for f in tests/data/siconos/*.dat; do
    n=$(sed -n 1p "$f" | tr -d ' \r'); [ "$n" -le 40 ] 2>/dev/null && echo "$f"; done)
fi
TIMEFORMAT=%3U
ucpu() { { time "$@" > /dev/null 2>&1; } 2>&1 || true; }
specs="complan:$B:0 siconos:$B:2"
[ -n "$BENCH_BEFORE" ] && specs="before:$BENCH_BEFORE:0 $specs"
echo "| instance | n | $(for s in $specs; do printf '%s ns | ' "${s%%:*}"; done)complan/siconos |"
echo "|---|---|$(for s in $specs; do printf -- '---|'; done)---|"
for f in "$@"; do
  n=$(sed -n 1p "$f" | tr -d ' \r')
  skip=
  for s in $specs; do # only instances every solver solves (bench_peers' check)
    IFS=: read -r name bin solver <<< "$s"
    "$bin" --count "$solver" 1 "$f" > /dev/null 2>&1 || skip=1
  done
  [ -n "$skip" ] && continue
  declare -A base=()
  for s in $specs; do
    IFS=: read -r name bin solver <<< "$s"
    m=
    for k in 1 2 3; do
      t=$(ucpu "$bin" --count "$solver" 0 "$f")
      m=$(awk -v a="$t" -v b="${m:-$t}" 'BEGIN { print (a < b) ? a : b }')
    done
    base[$name]=$m
  done
  reps=$R
  if [ "$R" = auto ]; then
    reps=100
    while :; do
      t=$(ucpu "$B" --count 0 "$reps" "$f")
      t2=$(ucpu "$B" --count 0 "$reps" "$f") # the smaller of two: a spike
      t=$(awk -v a="$t" -v b="$t2" 'BEGIN { print (a < b) ? a : b }') # must not shrink R
      if awk -v a="$t" -v b="${base[complan]}" 'BEGIN { exit !(a - b >= 0.03) }'; then
        reps=$(awk -v a="$t" -v b="${base[complan]}" -v r="$reps" 'BEGIN { printf "%d", r * 0.3 / (a - b) }')
        break
      fi
      reps=$((reps * 10))
      [ "$reps" -le 100000000 ] || { echo "peers_time.sh: $f: no timing" >&2; exit 1; }
    done
  fi
  out=
  for k in $(seq "$ROUNDS"); do
    for s in $specs; do
      IFS=: read -r name bin solver <<< "$s"
      t=$(ucpu "$bin" --count "$solver" "$reps" "$f")
      out="$out $name $(awk -v a="$t" -v b="${base[$name]}" -v r="$reps" 'BEGIN { printf "%.1f", (a - b) * 1e9 / r }')"
    done
  done
  echo "$out" | awk -v inst="$(basename "$f" .dat)" -v n="$n" -v names="$(for s in $specs; do printf '%s ' "${s%%:*}"; done)" '
    function med(a, c,   i, j, t) { # median of a[1..c] (sorted in place)
      for (i = 2; i <= c; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
      return c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2 }
    { for (i = 1; i < NF; i += 2) { c[$i]++; v[$i, c[$i]] = $(i + 1) } }
    END {
      k = split(names, nm, " "); line = "| " inst " | " n " | "
      for (s = 1; s <= k; s++) {
        x = nm[s]; lo = 1e30
        for (i = 1; i <= c[x]; i++) { a[i] = v[x, i]; if (a[i] < lo) lo = a[i] }
        m[x] = med(a, c[x]); line = line sprintf("%.0f (%.0f) | ", m[x], lo)
      }
      line = line sprintf("%.2f", m["complan"] / m["siconos"])
      if ("before" in m) line = line sprintf(" (before %.2f; after/before %.2f)", m["before"] / m["siconos"], m["complan"] / m["before"])
      print line " |"
    }'
done
