#!/usr/bin/env bash
# Issue 33.7: idle TCP connections to a pmixd's TLS port, more than the
# daemon has descriptors (1,024). CAF 0.17's OpenSSL transport took them
# all, loaded the certificate file for each, and when no descriptor was left
# threw "cannot load certificate" on its multiplexer thread: the daemon
# aborted, with every job of its node; fewer of them stayed open for ever.
# Now (tools/pmixd/tls_guard.hpp) the daemon keeps descriptors to spare,
# holds at most PMIX_CXX_DAEMON_MAX_PENDING handshakes, closes handshakes
# that do not complete (PMIX_CXX_DAEMON_HANDSHAKE_TIMEOUT_MS, 3 s here), and
# takes the key from memory. Checked: the daemon lives, a keyed launch runs
# during the flood, and every idle connection is closed by the daemon (1,100
# of them, then 300).
set -uo pipefail
PMIXD=$PWD/tools/pmixd/pmixd
PMIXRUN=$PWD/tools/pmixrun/pmixrun
flood=$PWD/tests/tools/idle_flood.py
tmp=$(mktemp -d /tmp/pmixdflood.XXXXXX)
export TMPDIR=$tmp
failures=0
daemon=
cleanup() {
  [ -n "$daemon" ] && kill -9 "$daemon" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $1"
  for f in "${@:2}"; do [ -f "$f" ] && sed 's/^/    /' "$f"; done
  failures=$((failures + 1))
}
# Waits (up to 120 s, a guard against hangs) until FILE holds a line matching REGEX.
wait_for() {
  for _ in $(seq 1 1200); do
    grep -qE "$2" "$1" 2>/dev/null && return 0
    sleep 0.1
  done
  return 1
}

"$PMIXD" credentials "$tmp/key" >/dev/null || { echo "FAIL: cannot make a session key"; exit 1; }
PMIX_CXX_DAEMON_HANDSHAKE_TIMEOUT_MS=3000 /usr/bin/prlimit --nofile=1024:1024 \
  "$PMIXD" --credentials "$tmp/key" --listen 127.0.0.1:0 --port-file "$tmp/port" --name flood \
  >"$tmp/pmixd.out" 2>&1 &
daemon=$!
wait_for "$tmp/port" '^[0-9]+$' || { fail "pmixd did not start" "$tmp/pmixd.out"; exit 1; }
port=$(cat "$tmp/port")

for n in 1100 300; do
  /usr/bin/python3 "$flood" 127.0.0.1 "$port" "$n" "$tmp/flood.$n" &
  flooder=$!
  wait_for "$tmp/flood.$n" "^open $n\$" || fail "$n idle connections could not be opened" "$tmp/flood.$n"
  # A keyed launch while they are there.
  timeout 120 "$PMIXRUN" --daemons "127.0.0.1:$port" --credentials "$tmp/key" -n 2 /bin/sh -c 'echo ran' \
    >"$tmp/run.$n" 2>&1
  st=$?
  [ "$st" -eq 0 ] || fail "with $n idle connections: pmixrun --daemons exited with $st" "$tmp/run.$n" "$tmp/pmixd.out"
  [ "$(grep -c '^ran$' "$tmp/run.$n")" -eq 2 ] || fail "with $n idle connections: the job did not run twice" "$tmp/run.$n"
  kill -0 "$daemon" 2>/dev/null || fail "with $n idle connections: pmixd died" "$tmp/pmixd.out"
  # Every idle connection is closed by the daemon (none stays for ever).
  wait "$flooder"
  grep -qE "^closed $n of $n\$" "$tmp/flood.$n" || fail "the daemon left idle connections open" "$tmp/flood.$n"
done

# SIGPIPE is blocked in every thread of the daemon (CAF's OpenSSL guard then
# makes no system call: tools/pmixd/sigpipe_calls.hpp), and in none of its
# job's processes.
threads=0
for status in /proc/"$daemon"/task/*/status; do
  blk=$(awk '/^SigBlk:/ {print $2}' "$status" 2>/dev/null) || continue
  [ -n "$blk" ] || continue
  threads=$((threads + 1))
  (( (16#$blk >> 12) & 1 )) || fail "a thread of pmixd has SIGPIPE unblocked (SigBlk $blk, $status)"
done
[ "$threads" -ge 4 ] || fail "pmixd's threads not found ($threads)"
timeout 120 "$PMIXRUN" --daemons "127.0.0.1:$port" --credentials "$tmp/key" -n 1 /bin/sh -c 'grep SigBlk /proc/self/status' \
  >"$tmp/run.mask" 2>&1
grep -qE '^SigBlk:[[:space:]]+0+$' "$tmp/run.mask" || fail "the job's process started with signals blocked" "$tmp/run.mask"

grep -qE 'terminate called|cannot load certificate' "$tmp/pmixd.out" && fail "pmixd reported an abort" "$tmp/pmixd.out"
grep -qE '^pmixd: TLS port: .* not complete within 3000 ms' "$tmp/pmixd.out" ||
  fail "pmixd did not report the handshakes it closed" "$tmp/pmixd.out"
kill -TERM "$daemon"
wait "$daemon"
st=$?
daemon=
[ "$st" -eq 0 ] || fail "pmixd ended with status $st" "$tmp/pmixd.out"
if [ "$failures" -eq 0 ]; then echo "pmixd_flood_test: all passed"; fi
exit "$failures"
