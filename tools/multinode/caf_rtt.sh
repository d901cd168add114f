#!/bin/bash
# tools/multinode/caf_rtt.sh [ROUNDS] [N]: the round trip between two network
# namespaces (tools/multinode/netns.sh), measured three ways, round by round:
#   tcp    64 bytes echoed on a TCP connection (TCP_NODELAY; Python, as
#          fence_bench.sh measures its limit)
#   plain  an actor's message to an actor of the other process and its
#          answer, through CAF's middleman (caf_rtt, pmixd's CAF settings)
#   tls    the same through CAF's OpenSSL module with a session key, as
#          pmixd's daemons talk (SIGPIPE blocked everywhere, so that CAF's
#          guard around each OpenSSL call makes no system call:
#          tools/pmixd/sigpipe_calls.hpp)
#   libc   tls with that guard's calls left to the C library (3 system
#          calls each), as before pmixd took them over
# N round trips each (default 1000), one at a time; prints each round's
# medians and then the median of the rounds' medians. Root; build first:
#   bazel build //tools/multinode:caf_rtt
set -u
rounds=${1:-5}
n=${2:-1000}
here=$(cd "$(dirname "$0")" && pwd)
bin=${CAF_RTT:-$here/../../bazel-bin/tools/multinode/caf_rtt}
[ -x "$bin" ] || { echo "caf_rtt.sh: no $bin (bazel build //tools/multinode:caf_rtt)" >&2; exit 2; }
. "$here/netns.sh"
tag=rtt$$
tag=${tag:0:8}
trap netns_down EXIT
netns_up "$tag" 2 10.78.0 || exit 1

tcp_script='
import socket, sys, time
host, n = sys.argv[1], int(sys.argv[2])
for _ in range(100):
    try:
        c = socket.create_connection((host, 9978)); break
    except OSError: time.sleep(0.05)
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
t = []
for i in range(20 + n):
    a = time.perf_counter(); c.sendall(b"x" * 64); k = 0
    while k < 64: k += len(c.recv(64 - k))
    if i >= 20: t.append((time.perf_counter() - a) * 1e6)
t.sort(); print("%.1f" % t[len(t) // 2]); c.close()
'
echo_script='
import socket
s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("10.78.0.1", 9978)); s.listen(1); c, _ = s.accept()
c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
while True:
    d = c.recv(64)
    if not d: break
    c.sendall(d)
'

tcp_rtt() {
  ip netns exec "$tag-0" python3 -c "$echo_script" &
  local echo_pid=$!
  ip netns exec "$tag-1" python3 -c "$tcp_script" 10.78.0.1 "$n"
  wait "$echo_pid"
}

caf_rtt() {  # plain|tls [GUARD]
  local port="" key="" res
  export CAF_RTT_GUARD=${2:-}
  coproc SERVE { ip netns exec "$tag-0" "$bin" serve 0 ${1/plain/}; }
  while read -r -t 30 k v <&"${SERVE[0]}"; do
    case $k in key) key=$v ;; port) port=$v; break ;; esac
  done
  if [ -z "${port:-}" ]; then echo "caf_rtt.sh: the server did not start" >&2; return 1; fi
  res=$(ip netns exec "$tag-1" "$bin" ping 10.78.0.1 "$port" "$n" $key | awk '/^caf_rtt_us/ {print $2}')
  exec {SERVE[1]}>&-
  wait "$SERVE_PID" 2>/dev/null
  echo "${res:-?}"
}

declare -A all
for r in $(seq 1 "$rounds"); do
  t=$(tcp_rtt); p=$(caf_rtt plain); s=$(caf_rtt tls); l=$(caf_rtt tls libc)
  echo "round $r: tcp $t us, caf plain $p us, caf tls $s us, caf tls with libc's guard $l us"
  all[tcp]+="$t "; all[plain]+="$p "; all[tls]+="$s "; all[libc]+="$l "
done
for k in tcp plain tls libc; do
  printf '%s median of rounds: %s us\n' "$k" "$(echo ${all[$k]} | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"
done
