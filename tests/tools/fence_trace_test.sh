#!/usr/bin/env bash
# The fence trace across nodes (docs/multinode.md, "Where a fence's time
# goes"): 4 nodes x 1 and x 4 ranks of bench_client datafence under
# tools/multinode/demo.sh with PMIXD_FENCE_TRACE and BENCH_FENCE_TRACE.
#   - every daemon writes its file, every rank its own, with one line per
#     stage of each of the job's fences (20 timed + 3 warm-up + the last,
#     dataless one the ranks leave with)
#   - tools/multinode/fence_trace.py --check finds every fence causal across
#     the nodes (the machine's one monotonic clock) and prints every step
#   - the check fails when one node's clock is shifted by 10 ms (it can fail)
# Needs root and iproute2 (network namespaces): it fails without them.
set -uo pipefail
# shellcheck source=tests/tools/multinode_expect.sh
. tests/tools/multinode_expect.sh
multinode_setup fence_trace_test ftrace
client=$PWD/tools/bench/bench_client
export PMIXRUN_ARGS="--quiet --timeout 300"
export MULTINODE_TAG=ftr$(($$ % 100000))

for ppn in 1 4; do
  dir=$tmp/trace$ppn
  mkdir -m 0777 "$dir"
  if ! PMIXD_FENCE_TRACE=$dir BENCH_FENCE_TRACE=$dir timeout 300 "$demo" 4 "$ppn" "$client" datafence 20 \
      >"$tmp/out$ppn" 2>&1; then
    fail "4 x $ppn: the job failed: $(tail -5 "$tmp/out$ppn")"
    continue
  fi
  daemons=$(find "$dir" -name 'pmixd.node*' | wc -l)
  clients=$(find "$dir" -name 'client.*' | wc -l)
  [ "$daemons" -eq 4 ] || fail "4 x $ppn: $daemons daemon traces, not 4"
  [ "$clients" -eq $((4 * ppn)) ] || fail "4 x $ppn: $clients rank traces, not $((4 * ppn))"
  for f in "$dir"/pmixd.node*; do
    for stage in upcall actor done answered; do
      n=$(awk -v s="$stage" '$2 == s' "$f" | wc -l)
      [ "$n" -eq 24 ] || fail "4 x $ppn: $(basename "$f"): $n '$stage' lines, not 24"
    done
  done
  for f in "$dir"/client.*; do
    n=$(grep -c ' begin$' "$f")
    [ "$n" -eq 23 ] || fail "4 x $ppn: $(basename "$f"): $n fences, not 23"
  done
  if ! python3 tools/multinode/fence_trace.py --check --per-node "$ppn" "$dir" >"$tmp/report$ppn" 2>&1; then
    fail "4 x $ppn: fence_trace.py --check: $(cat "$tmp/report$ppn")"
  fi
  for step in "fence_nb -> daemon actor" "network up" "network down" "whole fence" "check: every fence holds (20 fences)"; do
    grep -q "$step" "$tmp/report$ppn" || fail "4 x $ppn: the report has no '$step': $(cat "$tmp/report$ppn")"
  done
  cat "$tmp/report$ppn"
done

# One node's clock 10 ms early: its parts would arrive before they were sent.
if [ -d "$tmp/trace1" ]; then
  mkdir "$tmp/shifted"
  cp "$tmp"/trace1/* "$tmp/shifted/"
  f=$(ls "$tmp"/shifted/pmixd.node3.*)
  # (python3: mawk's integers stop at 2^31.)
  python3 -c 'import sys
lines = open(sys.argv[1]).read().split("\n")
out = [str(int(l.split(" ", 1)[0]) - 10000000) + " " + l.split(" ", 1)[1] for l in lines if l]
open(sys.argv[1], "w").write("\n".join(out) + "\n")' "$f"
  head -1 "$f" | grep -q '^[0-9]\{10,\} ' || fail "the shifted trace lost its times: $(head -1 "$f")"
  if python3 tools/multinode/fence_trace.py --check "$tmp/shifted" >"$tmp/report_shifted" 2>&1; then
    fail "a node's clock shifted by 10 ms passed the check"
  fi
  grep -q "BROKEN: fence" "$tmp/report_shifted" || fail "the shifted trace's report names no fence: $(cat "$tmp/report_shifted")"
fi

if [ "$failures" -ne 0 ]; then
  echo "fence_trace_test: $failures failure(s)" >&2
  exit 1
fi
echo "fence_trace_test: ok"
