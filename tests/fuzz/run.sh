#!/usr/bin/env bash
# Runs one libFuzzer target (or all) for a time, from a seed corpus made of
# the repository's bundled files, with the target's dictionary.
#   bash tests/fuzz/run.sh TARGET|all SECONDS [JOBS]
# TARGET: lcp_json, lcp_dat, scene, urdf, task. The corpus grows in
# build-fuzz/corpus/TARGET (kept between runs: long campaigns resume);
# a crash is written to build-fuzz/crashes/TARGET/ and the script exits 1:
# minimise it (the target binary with -minimize_crash=1), add the file to
# tests/fuzz/regressions/TARGET/ (replayed by the Criterion suite) and fix.
# The last line per target is "fuzz TARGET: N execs, E exec/s, cov C, ft F".
set -euo pipefail
cd "$(dirname "$0")/../.."
target=${1:?target}; secs=${2:-30}; jobs=${3:-1}
dir=${FUZZ_BUILD:-build-fuzz}
bash tests/fuzz/build.sh "$dir"
targets=("$target"); [ "$target" = all ] && targets=(lcp_json lcp_dat scene urdf task)
status=0
for t in "${targets[@]}"; do
  corpus=$dir/corpus/$t; crashes=$dir/crashes/$t
  mkdir -p "$corpus" "$crashes"
  case $t in
    lcp_json) seeds=(tests/data/lcp/*.json contact/examples/*.json
                     experiments/results/paper/data/p0[1-4]/mu0.5.lcp.json); dict=json ;;
    lcp_dat)  seeds=(tests/data/siconos/*.dat); dict=dat ;;
    scene)    seeds=(models/scenes/*.json experiments/results/paper/data/p0[1-4]/mu0.5.scene.json)
              dict=json ;;
    urdf)     seeds=(models/scenes/*.urdf); dict=urdf ;;
    task)     seeds=(planner/tasks/*.json); dict=json ;;
    *) echo "unknown target $t" >&2; exit 2 ;;
  esac
  cp -n "${seeds[@]}" "$corpus"/ 2>/dev/null || true
  [ -d tests/fuzz/regressions/$t ] && cp -n tests/fuzz/regressions/$t/* "$corpus"/ 2>/dev/null || true
  log=$dir/fuzz_$t.log
  rc=0
  par=""; [ "$jobs" -gt 1 ] && par="-jobs=$jobs -workers=$jobs"  # -jobs=1 would log elsewhere
  CP_FUZZ_SCENE_DIR=$PWD/models/scenes CP_FUZZ_TASK_DIR=$PWD/planner/tasks \
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$dir/tests/fuzz/fuzz_$t" "$corpus" -dict=tests/fuzz/$dict.dict \
    -max_total_time="$secs" $par -max_len=65536 -timeout=20 \
    -rss_limit_mb=2048 -artifact_prefix="$crashes/" -print_final_stats=1 >"$log" 2>&1 || rc=$?
  [ "$jobs" -gt 1 ] && cat fuzz-*.log >>"$log" 2>/dev/null && rm -f fuzz-*.log
  execs=$(grep -h '^stat::number_of_executed_units' "$log" | awk '{s += $2} END {print s+0}')
  rate=$(grep -h '^stat::average_exec_per_sec' "$log" | awk '{s += $2} END {print s+0}')
  cov=$(grep -ho 'cov: [0-9]*' "$log" | tail -1 | awk '{print $2}')
  ft=$(grep -ho 'ft: [0-9]*' "$log" | tail -1 | awk '{print $2}')
  echo "fuzz $t: $execs execs, $rate exec/s, cov ${cov:-?}, ft ${ft:-?} ($secs s, $jobs job(s))"
  if [ $rc -ne 0 ]; then
    echo "fuzz $t: FAILED (exit $rc); see $log and $crashes/"
    grep -m5 -E 'ERROR|runtime error|deadly signal' "$log" >&2 || true
    status=1
  fi
done
exit $status
