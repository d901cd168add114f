#!/bin/bash
# tools/multinode/caf_rtt.sh [ROUNDS] [N]: the round trip between two network
# namespaces (tools/multinode/netns.sh), measured three ways, round by round:
#   tcp    64 bytes echoed on a TCP connection (TCP_NODELAY; tcp_rtt.py,
#          as fence_bench.sh measures its limit)
#   plain  an actor's message to an actor of the other process and its
#          answer, through CAF's middleman (caf_rtt, pmixd's CAF settings)
#   tls    the same through CAF's OpenSSL module with a session key, as
#          pmixd's daemons talk (SIGPIPE blocked everywhere, so that CAF's
#          guard around each OpenSSL call makes no system call:
#          tools/pmixd/sigpipe_calls.hpp)
#   sched  tls with both actors on CAF's scheduler threads and one BASP
#          worker (CAF's default), as pmixd's daemon actor ran before it
#          became a broker on the multiplexer thread
#   libc   sched with the SIGPIPE guard's calls left to the C library (3
#          system calls each), as before pmixd took them over
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
tag=rtt$(($$ % 100000))
trap netns_down EXIT
netns_up "$tag" 2 10.78.0 || exit 1

tcp_rtt() {
  ip netns exec "$tag-0" python3 "$here/tcp_rtt.py" echo 10.78.0.1 9978 &
  local echo_pid=$!
  ip netns exec "$tag-1" python3 "$here/tcp_rtt.py" time 10.78.0.1 9978 "$n"
  wait "$echo_pid"
}

caf_rtt() {  # plain|tls [sched [libc]]
  local port="" key="" res
  if [ -n "${2:-}" ]; then export CAF_RTT_BROKER=0 CAF_RTT_WORKERS=1; else unset CAF_RTT_BROKER CAF_RTT_WORKERS; fi
  export CAF_RTT_GUARD=${3:-}
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
  t=$(tcp_rtt); p=$(caf_rtt plain); s=$(caf_rtt tls); c=$(caf_rtt tls sched); l=$(caf_rtt tls sched libc)
  echo "round $r: tcp $t us, caf plain $p us, caf tls $s us, on the scheduler $c us, with libc's guard $l us"
  all[tcp]+="$t "; all[plain]+="$p "; all[tls]+="$s "; all[sched]+="$c "; all[libc]+="$l "
done
for k in tcp plain tls sched libc; do
  printf '%s median of rounds: %s us\n' "$k" "$(echo ${all[$k]} | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}')"
done
