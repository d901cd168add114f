#!/usr/bin/env bash
# tools/multinode/tcp_rtt.py, the limit of the fence benchmarks across nodes:
# where the machine has 2 CPUs or more, its two ends run on different CPUs by
# default (as two nodes do; on one CPU a round trip is two context switches),
# on one CPU with TCP_RTT_CPU=same, where the scheduler puts them with
# TCP_RTT_CPU=free; any other value is refused. Over loopback: no root needed.
set -uo pipefail
rtt=tools/multinode/tcp_rtt.py
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
allowed=$(python3 -c 'import os; print(" ".join(map(str, sorted(os.sched_getaffinity(0)))))')
read -r -a cpus <<<"$allowed"
echo "the test may use CPUs ${cpus[*]}"
port=$((20000 + $$ % 20000))

# run MODE: one round trip measurement over loopback; both ends' stderr in
# $tmp/err, the median in $tmp/out.
run() {
  port=$((port + 1))
  TCP_RTT_CPU=$1 TCP_RTT_SHOW_CPU=1 python3 "$rtt" echo 127.0.0.1 "$port" 2>"$tmp/err.echo" &
  local echo_pid=$!
  TCP_RTT_CPU=$1 TCP_RTT_SHOW_CPU=1 timeout 60 python3 "$rtt" time 127.0.0.1 "$port" 200 >"$tmp/out" 2>"$tmp/err.time"
  local st=$?
  wait "$echo_pid"
  cat "$tmp/err.echo" "$tmp/err.time" >"$tmp/err"
  return $st
}

run cross || fail "cross: the measurement failed: $(cat "$tmp/err")"
grep -Eq '^[0-9]+\.[0-9]$' "$tmp/out" || fail "cross: no median printed: $(cat "$tmp/out")"
if [ "${#cpus[@]}" -ge 2 ]; then
  grep -qx "tcp_rtt.py: time on CPU ${cpus[0]}" "$tmp/err" || fail "cross: the timing end is not on CPU ${cpus[0]}: $(cat "$tmp/err")"
  grep -qx "tcp_rtt.py: echo on CPU ${cpus[1]}" "$tmp/err" || fail "cross: the echoing end is not on CPU ${cpus[1]}: $(cat "$tmp/err")"
  run "" || fail "default: the measurement failed"
  grep -qx "tcp_rtt.py: echo on CPU ${cpus[1]}" "$tmp/err" || fail "default: not cross: $(cat "$tmp/err")"
  run same || fail "same: the measurement failed"
  [ "$(grep -cx "tcp_rtt.py: \(echo\|time\) on CPU ${cpus[0]}" "$tmp/err")" -eq 2 ] ||
    fail "same: both ends not on CPU ${cpus[0]}: $(cat "$tmp/err")"
else
  [ ! -s "$tmp/err" ] || fail "one CPU: an end was pinned: $(cat "$tmp/err")"
fi
run free || fail "free: the measurement failed"
[ ! -s "$tmp/err" ] || fail "free: an end was pinned: $(cat "$tmp/err")"
TCP_RTT_CPU=both timeout 20 python3 "$rtt" time 127.0.0.1 1 1 >"$tmp/out" 2>&1
st=$?
[ "$st" -ne 0 ] && grep -q "TCP_RTT_CPU is cross, same or free" "$tmp/out" ||
  fail "TCP_RTT_CPU=both: not refused (status $st): $(cat "$tmp/out")"

if [ "$failures" -ne 0 ]; then
  echo "tcp_rtt_test: $failures failure(s)" >&2
  exit 1
fi
echo "tcp_rtt_test: ok"
