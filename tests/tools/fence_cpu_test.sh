#!/usr/bin/env bash
# tools/multinode/fence_cpu.py (issue 40, point 4; docs/multinode.md, "Where
# a fence's time goes"): one fence's CPU and wall time, from two runs of
# different lengths, across 2 nodes and on one node alone:
#   - one line with every figure, CPU and wall time above zero, CPU the sum
#     of user and system time, "busy" CPU over wall and at most the CPUs
#     the test may use (a little over for rounding), every rank's fence
#     times' median above zero
#   - the processes of the runs are counted, not only the script: a fence
#     of 8 ranks on one node costs more CPU than a fence of 1
#   - --floor (tools/bench/fence_floor, no PMIx) gives the same line, and
#     its 8 processes cost more CPU than 1 as well
#   - bad arguments are refused with status 2
# Needs root and iproute2 (network namespaces) for the 2-node part.
set -uo pipefail
# shellcheck source=tests/tools/multinode_expect.sh
. tests/tools/multinode_expect.sh
multinode_setup fence_cpu_test fcpu
export PMIXRUN_ARGS="--quiet --timeout 120"
export MULTINODE_TAG=fc$(($$ % 100000))
export MULTINODE_CLIENT=$PWD/tools/bench/bench_client
export BENCH_HOST=$PWD/tools/bench/bench_host
export FENCE_FLOOR=$PWD/tools/bench/fence_floor
tool=tools/multinode/fence_cpu.py

# check NAME: the line in $tmp/out; its cpu_us in $tmp/cpu.NAME
check() {
  local name=$1
  if ! python3 - "$tmp/out" "$tmp/cpu.$name" <<'PY'; then
import os, sys
line = open(sys.argv[1]).read().split("\n")[0].split()
f = dict(zip(line[0::2], line[1::2]))
want = ["cpu_us", "user_us", "sys_us", "wall_us", "busy", "cpus", "median_us"]
if sorted(f) != sorted(want):
    sys.exit("fields %s, want %s" % (sorted(f), sorted(want)))
cpu, user, system, wall = (float(f[k]) for k in want[:4])
busy, cpus, median = float(f["busy"]), int(f["cpus"]), float(f["median_us"])
if not (cpu > 0 and wall > 0 and median > 0):
    sys.exit("a figure is not above zero: %s" % f)
if abs(cpu - (user + system)) > 1.5:
    sys.exit("cpu_us is not user_us + sys_us: %s" % f)
# The line rounds CPU and wall time to whole µs and busy to 0.01: busy
# must lie between what the rounded figures allow (a fence of 10 µs moves
# 5% with a rounding).
low, high = (cpu - 0.5) / (wall + 0.5) - 0.006, (cpu + 0.5) / max(wall - 0.5, 1e-9) + 0.006
if not low <= busy <= high or busy > cpus * 1.25:
    sys.exit("busy is not CPU over wall, or over the CPUs: %s" % f)
if cpus != len(os.sched_getaffinity(0)):
    sys.exit("cpus is not the CPUs this process may use: %s" % f)
open(sys.argv[2], "w").write("%s\n" % cpu)
PY
    fail "$name: the line is wrong" "$tmp/out"
    return
  fi
  echo "ok: $name: $(cat "$tmp/out")"
}

# more_cpu A B WHAT: the run A's CPU above B's
more_cpu() {
  if [ -s "$tmp/cpu.$1" ] && [ -s "$tmp/cpu.$2" ]; then
    if python3 -c "import sys; sys.exit(0 if float('$(cat "$tmp/cpu.$1")') > float('$(cat "$tmp/cpu.$2")') else 1)"; then
      echo "ok: $3"
    else
      fail "not so: $3 ($(cat "$tmp/cpu.$1") us against $(cat "$tmp/cpu.$2") us)"
    fi
  fi
}

timeout 300 "$tool" 2 1 2000 >"$tmp/out" 2>&1
status=$?
if [ $status -ne 0 ]; then fail "2 x 1: exit status $status" "$tmp/out"; else check two_nodes; fi

# One rank's fence takes some 10 µs: 20,000 of them outweigh a pause of
# the shorter run (300 fences), which would make the difference negative.
timeout 300 "$tool" --one-node 1 20000 >"$tmp/out" 2>&1
status=$?
if [ $status -ne 0 ]; then fail "one node, 1 rank: exit status $status" "$tmp/out"; else check one; fi
timeout 300 "$tool" --one-node 8 2000 >"$tmp/out" 2>&1
status=$?
if [ $status -ne 0 ]; then fail "one node, 8 ranks: exit status $status" "$tmp/out"; else check eight; fi
more_cpu eight one "8 ranks' fence costs more CPU than 1 rank's"

timeout 300 "$tool" --floor 1 20000 >"$tmp/out" 2>&1
status=$?
if [ $status -ne 0 ]; then fail "floor, 1 rank: exit status $status" "$tmp/out"; else check floor_one; fi
timeout 300 "$tool" --floor 8 2000 >"$tmp/out" 2>&1
status=$?
if [ $status -ne 0 ]; then fail "floor, 8 ranks: exit status $status" "$tmp/out"; else check floor_eight; fi
more_cpu floor_eight floor_one "the floor of 8 ranks' fence costs more CPU than 1 rank's"

# fence_floor itself: refuses what it cannot run, and a run's lines are
# every rank's timed rounds and each rank's loop, whole: 16 ranks of 400
# rounds each write more than a pipe takes at once (PIPE_BUF).
for bad in "" "0 1" "1 0" "x 1" "5000 1" "1 1 x" "1 1 -1" "1 1 200000" "1 1 1 1"; do
  # shellcheck disable=SC2086
  tools/bench/fence_floor $bad >"$tmp/out" 2>&1
  status=$?
  if [ $status -ne 2 ] || ! grep -q "^usage: fence_floor" "$tmp/out"; then
    fail "fence_floor '$bad': exit status $status, want 2 and its usage" "$tmp/out"
  fi
done
# Through a pipe, as fence_cpu.py reads it (a file's writes do not mix).
timeout 120 tools/bench/fence_floor 16 400 2>&1 | cat >"$tmp/out"
status=${PIPESTATUS[0]}
if [ $status -ne 0 ] || [ "$(grep -c "^sample dfence_us [0-9]*\.[0-9]$" "$tmp/out")" -ne 6400 ] ||
   [ "$(grep -c "^sample dfence_loop_us [0-9]*\.[0-9]$" "$tmp/out")" -ne 16 ] || [ "$(wc -l <"$tmp/out")" -ne 6416 ]; then
  fail "fence_floor 16 400: exit status $status, want 0 and 16 x 400 fence lines and 16 loop lines, whole" "$tmp/out"
else
  echo "ok: fence_floor 16 400: 6,400 fence times and 16 loops, every line whole"
fi
# And with each rank polling for up to 1,000 µs before it sleeps.
timeout 120 tools/bench/fence_floor 4 200 1000 2>&1 | cat >"$tmp/out"
status=${PIPESTATUS[0]}
if [ $status -ne 0 ] || [ "$(grep -c "^sample dfence_us [0-9]*\.[0-9]$" "$tmp/out")" -ne 800 ] ||
   [ "$(grep -c "^sample dfence_loop_us [0-9]*\.[0-9]$" "$tmp/out")" -ne 4 ]; then
  fail "fence_floor 4 200 1000: exit status $status, want 0 and 4 x 200 fence lines and 4 loop lines" "$tmp/out"
else
  echo "ok: fence_floor 4 200 1000 (polling): 800 fence times and 4 loops"
fi

for bad in "" "4" "x 1" "4 0" "4 1 0" "--one-node" "--floor" "--floor 0" "4 1 10 10"; do
  # shellcheck disable=SC2086
  "$tool" $bad >"$tmp/out" 2>&1
  status=$?
  if [ $status -ne 2 ] || ! grep -q "^usage:\|must be at least 1\|are numbers\|^fence_cpu.py:" "$tmp/out"; then
    fail "arguments '$bad': exit status $status, want 2 and a message" "$tmp/out"
  fi
done
echo "ok: bad arguments refused"

echo "$failures failed checks"
[ "$failures" -eq 0 ]
