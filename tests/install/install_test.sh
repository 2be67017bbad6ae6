#!/bin/sh
# Installs complan into a temporary DESTDIR and builds a program against it
# the way a user would: only <complan/complan.h>, the flags of the generated
# complan.pc (pkg-config, PKG_CONFIG_SYSROOT_DIR pointing into the DESTDIR).
# Also checks that complan.h includes every installed header, that no
# internal header is installed and that the library's global names are cp_.
# Usage: install_test.sh BUILD_DIR CONSUMER_C CC [CC_ARGS...]
set -eu
build=$1
consumer=$2
shift 2
dest=$(mktemp -d "${TMPDIR:-/tmp}/cp_install_XXXXXX")
trap 'rm -rf "$dest"' EXIT INT TERM

fail() { echo "install_test: $*" >&2; exit 1; }

meson install -C "$build" --destdir "$dest" --no-rebuild >"$dest.log" 2>&1 ||
  { cat "$dest.log" >&2; rm -f "$dest.log"; fail "meson install failed"; }
rm -f "$dest.log"

pc=$(find "$dest" -name complan.pc | head -n 1)
[ -n "$pc" ] || fail "no complan.pc installed"
top=$(find "$dest" -path '*/include/complan/complan.h' | head -n 1)
[ -n "$top" ] || fail "no include/complan/complan.h installed"
incdir=$(dirname "$top")

# Every installed header is in complan.h; no internal one is installed.
n=0
for h in $(cd "$incdir" && find . -name '*.h' ! -path ./complan.h | sed 's|^\./||' | sort); do
  n=$((n + 1))
  grep -q "^#include \"$h\"" "$top" || fail "$h is installed but not included by complan.h"
  case "$h" in
    *_impl.h | planner/sim/stepcheck.h | models/grow.h | planner/cli/*)
      fail "$h is internal but installed" ;;
  esac
done
[ "$n" -gt 40 ] || fail "only $n headers installed"
for h in $(sed -n 's/^#include "\(.*\)"$/\1/p' "$top"); do
  [ -f "$incdir/$h" ] || fail "complan.h includes $h, which is not installed"
done

# The library's global names all start with cp_: a program's own names
# cannot clash with complan's internals. (Names starting with __ are the
# compiler's, e.g. AddressSanitizer's __odr_asan.*.)
lib=$(find "$dest" -name 'libcomplan.a' -o -name 'libcomplan.so' | head -n 1)
[ -n "$lib" ] || fail "no libcomplan installed"
stray=$(nm -g --defined-only "$lib" 2>/dev/null | awk 'NF == 3 {print $3}' | grep -v '^cp_\|^__' | sort -u | head -n 5)
[ -z "$stray" ] || fail "global names outside cp_ in $(basename "$lib"): $stray"

export PKG_CONFIG_PATH="$(dirname "$pc")"
export PKG_CONFIG_SYSROOT_DIR="$dest"
cflags=$(pkg-config --cflags complan) || fail "pkg-config --cflags complan"
libs=$(pkg-config --static --libs complan) || fail "pkg-config --libs complan"
case "$cflags" in *"$dest"*) ;; *) fail "cflags do not point into the DESTDIR: $cflags" ;; esac

# The consumer is compiled in the DESTDIR, away from the source tree, so
# that only the installed headers can be found.
cp "$consumer" "$dest/consumer.c"
# shellcheck disable=SC2086 # the flags are words
"$@" -std=c17 -Wall -Wextra -Werror -o "$dest/consumer" "$dest/consumer.c" $cflags $libs ||
  fail "the consumer does not compile or link with: $cflags $libs"
OPENBLAS_NUM_THREADS=1 "$dest/consumer" || fail "the consumer failed"
# The OMPL adapter (docs/ompl.md), when complan was built with it: its one
# C++ header is installed and a C++ program built with complan-ompl.pc
# plans a task with OMPL's RRT (CP_CXX, CP_OMPL_CONSUMER: tests/meson.build).
# OMPL's include folders are the system's, not under the DESTDIR (the
# DESTDIR's copies of them are absent).
ompl=""
if [ -n "${CP_OMPL_CONSUMER:-}" ]; then
  [ -f "$incdir/planner/ompl/ompl.hpp" ] || fail "no planner/ompl/ompl.hpp installed"
  ocflags=$(pkg-config --cflags complan-ompl) || fail "pkg-config --cflags complan-ompl"
  olibs=$(pkg-config --static --libs complan-ompl) || fail "pkg-config --libs complan-ompl"
  sys=$(PKG_CONFIG_SYSROOT_DIR='' pkg-config --cflags-only-I ompl) || fail "pkg-config --cflags ompl"
  cp "$CP_OMPL_CONSUMER" "$dest/ompl_consumer.cpp"
  # shellcheck disable=SC2086 # the flags are words
  $CP_CXX $ocflags $sys -std=c++17 -Wall -o "$dest/ompl_consumer" "$dest/ompl_consumer.cpp" $olibs ||
    fail "the OMPL consumer does not compile or link with: $ocflags $sys $olibs"
  OPENBLAS_NUM_THREADS=1 "$dest/ompl_consumer" "$CP_SOURCE_ROOT/planner/tasks/quasistatic_push.json" ||
    fail "the OMPL consumer failed"
  ompl="; the OMPL consumer built and planned"
fi
# MPI planning (docs/parallel.md), when complan was built with it: a program
# calling planner/plan/mpi.h builds and links with complan-mpi.pc (not run:
# that takes mpirun).
mpi=""
if [ -n "${CP_MPI:-}" ]; then
  mcflags=$(pkg-config --cflags complan-mpi) || fail "pkg-config --cflags complan-mpi"
  mlibs=$(pkg-config --static --libs complan-mpi) || fail "pkg-config --libs complan-mpi"
  printf '%s\n' '#include <complan/complan.h>' 'int main(void) {' \
    '  int rank = 0, ranks = 0;' '  cp_error err;' \
    '  if (cp_plan_mpi_start(&rank, &ranks, &err)) return 1;' \
    '  cp_plan_mpi_stop();' '  return 0;' '}' >"$dest/mpi_consumer.c"
  # shellcheck disable=SC2086 # the flags are words
  "$@" -std=c17 -Wall -Wextra -Werror -o "$dest/mpi_consumer" "$dest/mpi_consumer.c" $mcflags $mlibs ||
    fail "the MPI consumer does not compile or link with: $mcflags $mlibs"
  mpi="; the MPI consumer built"
fi
echo "install_test: $n headers installed, all in complan.h; consumer built and ran$ompl$mpi"
