#!/usr/bin/env bash
# The threaded planner under ThreadSanitizer (.ci/test's "ThreadSanitizer"
# stage): `complan plan --threads 1, 2, 4` on the push task at search.batch 4
# with astar, rrt and sst with plain batches ("pipeline": false), and rrt
# and sst at search.batch 8 with pipelined ones (search.pipeline not given:
# the default, halves of 4; the same nodes as an explicit "pipeline": true
# at batch 4), built with -Db_sanitize=thread. Any report ends the
# process (exit 66) and fails the check; the databases must also be the same
# for every thread count (node rows but pivots, and the plans), and a run
# stopped by SIGINT on 2 threads (plain and pipelined sst) must resume into
# the uninterrupted one.
# Criterion's runner does not start under TSan (its inheritable arena clashes
# with TSan's memory layout), hence a script over the CLI.
# Usage: tsan_threads.sh COMPLAN SOURCE_ROOT
set -euo pipefail
exe=$1 root=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
sed -e "s#\"../../models/scenes/#\"$root/models/scenes/#" \
    -e 's/"seed": 1}/"seed": 1, "batch": 8}/' \
    "$root/planner/tasks/push.json" > "$tmp/push8p.json"
grep -q '"batch": 8}' "$tmp/push8p.json"
# At batch 4 with plain batches (search.pipeline false), and pipelined.
sed -e 's/"batch": 8}/"batch": 4, "pipeline": false}/' "$tmp/push8p.json" \
  > "$tmp/push4.json"
grep -q '"pipeline": false' "$tmp/push4.json"
sed -e 's/"batch": 8}/"batch": 4, "pipeline": true}/' "$tmp/push8p.json" \
  > "$tmp/push4t.json"
grep -q '"pipeline": true' "$tmp/push4t.json"
export TSAN_OPTIONS="halt_on_error=1 exitcode=66 ${TSAN_OPTIONS:-}"
export OPENBLAS_NUM_THREADS=1
# The store's checkpoint thread (docs/database.md) checkpoints every 8 WAL
# pages, so that its work runs beside the searches' under TSan too.
export COMPLAN_CHECKPOINT_PAGES=8
digest() { # DB -> digest of run 1's node rows (every column but pivots) and plans
  /usr/bin/python3 - "$1" <<'PY'
import hashlib, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
cols = [r[1] for r in db.execute("PRAGMA table_info(nodes)") if r[1] != "pivots"]
h = hashlib.sha256()
n = 0
for row in db.execute("SELECT %s FROM nodes WHERE search_id = 1 ORDER BY id" % ", ".join(cols)):
    h.update(repr(row).encode()); n += 1
for row in db.execute("SELECT node, cost, length FROM plans WHERE search_id = 1"):
    h.update(repr(row).encode())
print(n, h.hexdigest())
PY
}
fail=0
# same_for_threads TASK PREFIX METHOD...: 1, 2 and 4 threads, the same nodes.
same_for_threads() {
  local task=$1 pre=$2 m t d ref
  shift 2
  for m in "$@"; do
    ref=
    for t in 1 2 4; do
      "$exe" plan "$task" --db "$tmp/$pre$m$t.db" --method "$m" \
        --max-nodes 300 --threads "$t" --json > "$tmp/out.json"
      d=$(digest "$tmp/$pre$m$t.db")
      echo "$pre$m --threads $t: ${d%% *} nodes"
      [ -n "$ref" ] || ref=$d
      if [ "$d" != "$ref" ]; then echo "$pre$m: $t threads differ from 1"; fail=1; fi
    done
  done
}
same_for_threads "$tmp/push4.json" "" astar rrt sst
same_for_threads "$tmp/push8p.json" pipelined- rrt sst
# The default at batch 8 is pipelined in halves of 4: an explicit
# "pipeline": true at batch 4 grows the same tree.
"$exe" plan "$tmp/push4t.json" --db "$tmp/explicit4.db" --method rrt \
  --max-nodes 300 --threads 2 --json > "$tmp/out.json"
if [ "$(digest "$tmp/explicit4.db")" != "$(digest "$tmp/pipelined-rrt1.db")" ]; then
  echo "pipelined-rrt: the default at batch 8 is not pipelined 4"; fail=1
fi
# SIGINT on 2 threads, resumed on 2: the uninterrupted run (sst1.db above);
# likewise pipelined (its drawn batch stored with the commit).
sigint_resumes() { # TASK PREFIX
  local task=$1 pre=$2 pid n rc db="$tmp/${2}int.db"
  "$exe" plan "$task" --db "$db" --method sst --max-nodes 300 \
    --threads 2 --max-seconds 3600 > /dev/null 2>&1 &
  pid=$!
  for _ in $(seq 1 3000); do
    n=$(/usr/bin/python3 -c "import sqlite3,sys
try: print(sqlite3.connect(sys.argv[1]).execute('SELECT count(*) FROM nodes').fetchone()[0])
except Exception: print(0)" "$db" 2>/dev/null || echo 0)
    [ "$n" -ge 40 ] && break
    sleep 0.01
  done
  kill -INT "$pid"
  rc=0; wait "$pid" || rc=$?
  [ "$rc" = 1 ] || { echo "${pre}SIGINT: exit $rc, expected 1 (interrupted)"; fail=1; }
  "$exe" plan "$task" --db "$db" --method sst --max-nodes 300 \
    --threads 2 --resume --json > /dev/null
  if [ "$(digest "$db")" != "$(digest "$tmp/${pre}sst1.db")" ]; then
    echo "${pre}SIGINT and resume on 2 threads: not the uninterrupted run"; fail=1
  fi
}
sigint_resumes "$tmp/push4.json" ""
sigint_resumes "$tmp/push8p.json" pipelined-
[ $fail = 0 ] && echo "threads under ThreadSanitizer: ok"
exit $fail
