#!/usr/bin/env bash
# The server's live heap over client init/finalize cycles, measured by
# valgrind rather than by the resident size (which moves in 4 kB pages and
# with the allocator's free lists): the bytes still reachable after A and
# after B cycles of one client, each taken while the client waits
# (bench_host's rss mode, held with BENCH_HOLD), for PMIx-CXX and OpenPMIx.
# Usage: tools/bench/live_heap.sh [A B]   (default 200 2000)
set -euo pipefail
cd "$(dirname "$0")/../.."
A=${1:-200}
B=${2:-2000}
command -v valgrind >/dev/null || { echo "live_heap.sh: needs valgrind (apt-get install valgrind)" >&2; exit 2; }
tools/deps.sh test >/dev/null
bazel build //tools/bench:all >/dev/null 2>&1
bin=bazel-bin/tools/bench
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

reachable() {  # pid -> "bytes blocks" still reachable (definitely/possibly lost included)
  vgdb --pid="$1" leak_check full reachable any 2>/dev/null |
    awk '/in use at exit|definitely lost:|indirectly lost:|possibly lost:|still reachable:/ {
           gsub(",", "", $0); for (i = 1; i <= NF; ++i) if ($(i) == "bytes") { b += $(i-1); n += $(i+2) } }
         END { print b + 0, n + 0 }'
}

measure() {  # name host client
  local name=$1 host=$2 client=$3 dir="$work/$1"
  mkdir -p "$dir/tmp"
  BENCH_HOLD=1 valgrind --vgdb=yes --log-file="$dir/vg.log" \
    "$host" "$client" "$dir/tmp" rss "$A" "$B" >"$dir/out" 2>&1 &
  local pid=$! first second
  until_at() {  # the client reached cycle $1 (false if the host ended first)
    while [ ! -e "$dir/tmp/at.$1" ]; do
      kill -0 "$pid" 2>/dev/null || return 1
      sleep 0.2
    done
  }
  if ! until_at "$A"; then echo "$name: the run ended before $A cycles:"; tail -3 "$dir/out"; return; fi
  sleep 1  # the host has printed and waits for go.A
  first=$(reachable "$pid")
  touch "$dir/tmp/go.$A"
  if ! until_at "$B"; then echo "$name: the run ended before $B cycles:"; tail -3 "$dir/out"; return; fi
  sleep 1
  second=$(reachable "$pid")
  touch "$dir/tmp/go.$B"
  wait "$pid" || true
  local ba na bb nb
  read -r ba na <<<"$first"
  read -r bb nb <<<"$second"
  printf '%-14s live heap after %5d cycles: %9d bytes in %5d blocks; after %5d: %9d bytes in %5d blocks; growth %8.2f bytes/cycle\n' \
    "$name" "$A" "$ba" "$na" "$B" "$bb" "$nb" "$(echo "($bb - $ba) / ($B - $A)" | bc -l)"
}

measure PMIx-CXX "$bin/bench_host" "$bin/bench_client"
measure "OpenPMIx 4.2.2" "$bin/bench_host_openpmix" "$bin/bench_client_openpmix"
