#!/bin/sh
# Instructions per solve (callgrind) of complan's Lemke, the dense tableau and
# Siconos' lexicolemke on the Siconos test LCPs with n <= 40 (issue 24's
# small-n targets): the difference of 1100 and 100 solves in
# `bench_peers --count`, divided by 1000, so start-up and parsing cancel.
# Siconos' figure includes what bench_peers times with it (wrapping M in a
# NumericsMatrix and freeing it). Run from the source root after building:
#   sh experiments/peers_ir.sh [--complan | --solvers "0 2"] [--first] [FILE.dat ...]
#   (default: the n <= 40 set)
# --complan counts complan's Lemke only (the other columns print "-"): the
# tableau's and Siconos' code does not change between complan's commits,
# so their figures of an earlier run (experiments/results/peers.md) stand.
# --solvers "LIST" counts those solvers only (0 complan, 1 dense, 2 Siconos).
# --first counts the first solve of a process instead (the difference of 1
# and 0 solves: cold code, the dynamic linker's first binding of each
# library function called, the independent check of bench_peers --count).
# BENCH_PEERS=path overrides the executable (another build directory);
# BENCH_SICONOS_DRIVER=1 and BENCH_PEERS_FRESH=1 pass through to it (the
# conventions in bench_peers.c's header comment).
set -e
B=${BENCH_PEERS:-./build/experiments/bench_peers}
SOLVERS="0 1 2"
LO=100 HI=1100
while [ $# -gt 0 ]; do
  case "$1" in
    --complan) SOLVERS=0; shift ;;
    --solvers) SOLVERS=$2; shift 2 ;;
    --first) LO=0 HI=1; shift ;;
    *) break ;;
  esac
done
[ -x "$B" ] || { echo "peers_ir.sh: build $B first (run from the source root)" >&2; exit 2; }
command -v valgrind > /dev/null || { echo "peers_ir.sh: valgrind not found" >&2; exit 2; }
if [ $# -eq 0 ]; then
  set -- $(for f in tests/data/siconos/*.dat; do
    n=$(sed -n 1p "$f" | tr -d ' \r'); [ "$n" -le 40 ] 2>/dev/null && echo "$f"; done)
fi
ir() { # solver reps file -> instructions
  valgrind --tool=callgrind --callgrind-out-file=/dev/null "$B" --count "$1" "$2" "$3" 2>&1 |
    sed -n 's/.*Collected : *//p' | tr -d ,
}
echo "| instance | n | complan | dense | siconos | complan/dense | complan/siconos |"
echo "|---|---|---|---|---|---|---|"
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-") print "-"; else printf "%.2f", a / b }'; }
for f in "$@"; do
  n=$(sed -n 1p "$f" | tr -d ' \r')
  c0=-; c1=-; c2=-
  for s in $SOLVERS; do
    "$B" --count $s 1 "$f" 2> /dev/null || continue # not solved: -
    a=$(ir $s $LO "$f"); b=$(ir $s $HI "$f")
    eval c$s=$(( (b - a) / (HI - LO) ))
  done
  echo "| $(basename "$f" .dat) | $n | $c0 | $c1 | $c2 | $(ratio $c0 $c1) | $(ratio $c0 $c2) |"
done
