#!/usr/bin/env bash
# Builds the libFuzzer targets in build-fuzz/ (clang, the library and the
# targets instrumented, AddressSanitizer + UndefinedBehaviorSanitizer with
# every report fatal). Usage: bash tests/fuzz/build.sh [BUILDDIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
dir=${1:-build-fuzz}
command -v clang >/dev/null || { echo "fuzz: clang not found" >&2; exit 3; }
if [ ! -f "$dir/build.ninja" ]; then
  CC=clang meson setup "$dir" --buildtype=debugoptimized \
    -Db_sanitize=address,undefined -Db_lundef=false \
    -Dc_args='-fsanitize=fuzzer-no-link -fno-sanitize-recover=all -fno-omit-frame-pointer' \
    >/dev/null
fi
ninja -C "$dir" tests/fuzz/fuzz_lcp_json tests/fuzz/fuzz_lcp_dat tests/fuzz/fuzz_scene \
  tests/fuzz/fuzz_urdf tests/fuzz/fuzz_task >&2
