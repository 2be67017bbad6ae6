#!/usr/bin/env bash
# Line coverage of the parsers by the fuzzing corpora: builds the targets
# with clang's source-based coverage in build-fuzzcov/, runs each target
# once over its corpus (build-fuzz/corpus/TARGET, grown by run.sh) and
# prints llvm-cov's report for the files that target exercises.
#   bash tests/fuzz/coverage.sh
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=build-fuzzcov
command -v llvm-cov >/dev/null || { echo "coverage: llvm-cov not found" >&2; exit 3; }
if [ ! -f "$dir/build.ninja" ]; then
  CC=clang meson setup "$dir" --buildtype=debug \
    -Dc_args='-fprofile-instr-generate -fcoverage-mapping' \
    -Dc_link_args='-fprofile-instr-generate' >/dev/null
fi
ninja -C "$dir" tests/fuzz/fuzz_lcp_json tests/fuzz/fuzz_lcp_dat tests/fuzz/fuzz_scene \
  tests/fuzz/fuzz_urdf tests/fuzz/fuzz_task >&2
for t in lcp_json lcp_dat scene urdf task; do
  case $t in
    lcp_json|lcp_dat) files=(contact/lcpio.c) ;;
    scene) files=(models/scene.c models/ranges.c models/jsonread.c models/error.c) ;;
    urdf) files=(models/urdf.c) ;;
    task) files=(planner/search/task.c) ;;
  esac
  rm -f "$dir/$t.profraw"
  CP_FUZZ_SCENE_DIR=$PWD/models/scenes CP_FUZZ_TASK_DIR=$PWD/planner/tasks LLVM_PROFILE_FILE="$dir/$t.profraw" \
    "$dir/tests/fuzz/fuzz_$t" -runs=0 "build-fuzz/corpus/$t" >/dev/null 2>&1 || true
  llvm-profdata merge -sparse "$dir/$t.profraw" -o "$dir/$t.profdata"
  echo "== $t ($(ls "build-fuzz/corpus/$t" | wc -l) corpus files)"
  # (meson compiles with ../ paths, so the report is filtered by name)
  llvm-cov report "$dir/tests/fuzz/fuzz_$t" -instr-profile="$dir/$t.profdata" |
    awk -v want=" ${files[*]} " '/\.c / {n = split($1, p, "/"); f = p[n-1] "/" p[n]
      if (index(want, " " f " ")) print f ": regions " $4 ", functions " $7 ", lines " $10}'
done
