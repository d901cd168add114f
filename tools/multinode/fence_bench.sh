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
# node 3 (median of 200), printed first. Needs root. Writes a Markdown table on
# stdout. docs/multinode.md has a run.
set -euo pipefail
iters=${1:-200}
bytes=${2:-64}
here=$(cd "$(dirname "$0")" && pwd)
client=${MULTINODE_CLIENT:-$(pwd)/bazel-bin/tests/tools/multinode_client}
# The round trip: rank 3 (node 3) echoes on TCP, rank 0 (node 0) times 200
# exchanges of 64 bytes (TCP_NODELAY), as the daemons' messages travel.
rtt_script='
import socket, sys, time, os
rank = os.environ["PMIX_RANK"]
if rank == "3":
    s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind(("10.77.0.4", 9977)); s.listen(1); c, _ = s.accept()
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    while True:
        d = c.recv(64)
        if not d: break
        c.sendall(d)
elif rank == "0":
    for _ in range(100):
        try:
            c = socket.create_connection(("10.77.0.4", 9977)); break
        except OSError: time.sleep(0.05)
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    t = []
    for _ in range(200):
        a = time.perf_counter(); c.sendall(b"x" * 64); n = 0
        while n < 64: n += len(c.recv(64 - n))
        t.append((time.perf_counter() - a) * 1e6)
    t.sort(); print("rtt_us %.1f" % t[len(t) // 2]); c.close()
'
rtt=$("$here/demo.sh" 4 1 /usr/bin/python3 -c "$rtt_script" 2>/dev/null | sed -n 's/^rtt_us //p')
if [ "$iters" = --rtt-only ]; then
  echo "rtt_us $rtt"
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
