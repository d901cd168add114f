#!/usr/bin/env bash
# tools/multinode/fence_bench.sh [ITERATIONS] [BYTES]
# tools/multinode/fence_bench.sh --rtt-only   (the round trip alone, "rtt_us X";
#                                              tools/bench/compare.py uses it)
#
# Fence latency across 4 nodes (demo.sh: network namespaces, one pmixd each)
# for 1, 2, 4, 8 and 16 ranks per node, with both fence algorithms: each
# rank puts BYTES (default 64) and the job runs ITERATIONS (default 200)
# collecting fences; rank 0's median and minimum in microseconds. The limit
# is the network round trip of the same setup: TCP between node 0 and
# node 3 (median of 200), each on a CPU of its own, printed first. Needs root. Writes a Markdown table on
# stdout. docs/multinode.md has a run.
set -euo pipefail
iters=${1:-200}
bytes=${2:-64}
here=$(cd "$(dirname "$0")" && pwd)
client=${MULTINODE_CLIENT:-$(pwd)/bazel-bin/tests/tools/multinode_client}
# The round trip: rank 3 (node 3) echoes on TCP, rank 0 (node 0) times 200
# exchanges of 64 bytes (tcp_rtt.py), each on a CPU of its own as two nodes
# are; beside it, both on one CPU (tcp_rtt.py says why the two differ).
rtt_on() {
  TCP_RTT_CPU=$1 "$here/demo.sh" 4 1 /usr/bin/python3 "$here/tcp_rtt.py" ranks 10.77.0.4 9977 200 2>/dev/null |
    sed -n 's/^rtt_us //p'
}
rtt=$(rtt_on cross)
if [ "$iters" = --rtt-only ]; then
  echo "rtt_us $rtt"
  echo "rtt_same_cpu_us $(rtt_on same)"
  exit 0
fi
echo "network round trip node0 -> node3 (TCP, 64 bytes, median of 200): $rtt us"
echo
echo "| ranks per node | ranks | tree median (us) | tree min | doubling median (us) | doubling min |"
echo "|---|---|---|---|---|---|"
for ppn in 1 2 4 8 16; do
  row="| $ppn | $((4 * ppn))"
  for alg in tree doubling; do
    r=$(PMIXRUN_ARGS="--fence $alg --quiet --timeout 300" "$here/demo.sh" 4 "$ppn" "$client" fencebench "$iters" "$bytes" 2>/dev/null |
      sed -n 's/^fence_us //p')
    row="$row | ${r% *} | ${r#* }"
  done
  echo "$row |"
done
