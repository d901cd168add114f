#!/usr/bin/env bash
# CI: the server's heap does not grow while one client cycles init/finalize
# (docs/performance.md, "Server memory over client cycles"). bench_host's
# rss mode reads mallinfo2 after 200 and after 1,000 cycles; with glibc's
# per-thread caches off the figure is constant to a few bytes. Anything the
# server keeps per cycle shows here: a peer actor that did not remove its
# monitor from its rank actor's list kept 1.5 kB a cycle (the rank's monitor
# entry holds the dead peer's memory), 1.2 MB over these 800 cycles.
set -euo pipefail
bin="$TEST_SRCDIR/$TEST_WORKSPACE/tools/bench"
export GLIBC_TUNABLES=glibc.malloc.tcache_count=0
for run in 1 2; do
  dir=$(mktemp -d /tmp/heap_cycles.XXXXXX)  # fresh: its sync files mark the cycles reached (and short: a socket path)
  trap 'rm -rf "$dir"' EXIT
  out=$("$bin/bench_host" "$bin/bench_client" "$dir" rss 200 1000)
  rm -rf "$dir"
  a=$(awk '$1 == "sample" && $2 == "heap_b_200" { print $3 }' <<<"$out")
  b=$(awk '$1 == "sample" && $2 == "heap_b_1000" { print $3 }' <<<"$out")
  if [ -z "$a" ] || [ -z "$b" ]; then
    echo "run $run: no heap figures from bench_host:"; echo "$out"; exit 1
  fi
  growth=$((b - a))
  echo "run $run: server heap after 200 cycles $a bytes, after 1000 $b bytes: growth $growth"
  # A leak of one 16-byte block a cycle would be 12,800 bytes.
  if [ "$growth" -gt 4096 ]; then
    echo "FAILED: the server's heap grew by $growth bytes over 800 client cycles"; exit 1
  fi
done
