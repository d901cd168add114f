#!/usr/bin/env bash
# tools/multinode/demo.sh NODES RANKS_PER_NODE PROGRAM [ARGS...]
#
# Runs PROGRAM as a job of NODES x RANKS_PER_NODE ranks across NODES
# "nodes" on this machine: one network namespace per node, joined by veth
# pairs to a bridge (in a namespace of its own, so the host's network is
# not touched), each with its own host name (a UTS namespace: node0,
# node1, ...) and one pmixd; pmixrun --daemons runs on node 0, as mpirun
# runs on the first node. Removes everything it made and exits with the
# job's status. Needs root and iproute2. docs/multinode.md.
#
# The daemons it starts share a session key it makes (pmixd credentials) and
# listen on their node's address (pmixd's default, --listen auto); with
# MULTINODE_AGENT=1 pmixrun makes the key and hands it to them itself.
#
# Environment:
#   PMIXRUN, PMIXD       the binaries (default: bazel-bin/tools/..., or tools/... from the
#                        current folder, as in a Bazel test's runfiles)
#   PMIXRUN_ARGS         more pmixrun options (e.g. "--fence doubling --map-by node --timeout 60")
#   MULTINODE_KILL=K:S   kill node K's pmixd (SIGKILL) S seconds after the job started
#   MULTINODE_STOP=K:S[:D] stop node K's pmixd (SIGSTOP) S seconds after the job started,
#                        and let it go on (SIGCONT) D seconds later (never without D)
#   MULTINODE_TAG        prefix of the namespaces and devices it makes (default pmn<pid>)
#   MULTINODE_SUBNET     the first three octets of the nodes' addresses (default 10.77.0)
#   MULTINODE_VERBOSE=1  the daemons' --verbose, and their logs printed at the end (they are
#                        printed after a failed job anyway)
#   MULTINODE_AGENT=1    pmixrun starts the daemons itself: pmixrun --hosts TAG-0,... --launch-agent
#                        'ip netns exec {host}' (the nodes are then named after their namespaces;
#                        the daemons write to pmixrun's stderr; no MULTINODE_KILL)
#   MULTINODE_PIN=1      each node on a CPU of its own where the machine has enough: node K's pmixd,
#                        and so the processes it starts, run on the (K mod C)th of the C CPUs this
#                        script may use (taskset), as on nodes that do not share their CPUs; not
#                        with MULTINODE_AGENT
#   MULTINODE_BEFORE=CMD run in node 0's namespace (sh -c) once the daemons listen, before
#                        pmixrun, with MULTINODE_DAEMONS (ADDR:PORT,...), MULTINODE_KEY (the
#                        session key's directory) and MULTINODE_NAMESPACES (one per node) set;
#                        if it fails, so does demo.sh (status 1)
set -euo pipefail

if [ $# -lt 3 ]; then
  echo "usage: $0 NODES RANKS_PER_NODE PROGRAM [ARGS...]" >&2
  exit 2
fi
nodes=$1
per_node=$2
shift 2
case "$nodes$per_node" in *[!0-9]*) echo "$0: NODES and RANKS_PER_NODE are numbers" >&2; exit 2 ;; esac
if [ "$nodes" -lt 1 ] || [ "$nodes" -gt 200 ] || [ "$per_node" -lt 1 ]; then
  echo "$0: NODES must be 1 to 200, RANKS_PER_NODE at least 1" >&2
  exit 2
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "$0: needs root (network namespaces)" >&2
  exit 1
fi
if ! command -v ip >/dev/null; then
  echo "$0: needs iproute2 (ip)" >&2
  exit 1
fi

find_binary() {  # NAME RELATIVE
  for c in "bazel-bin/$2" "$2"; do
    if [ -x "$c" ]; then echo "$PWD/$c"; return; fi
  done
  echo "$0: cannot find $1 (set ${1^^})" >&2
  exit 1
}
pmixrun=${PMIXRUN:-$(find_binary pmixrun tools/pmixrun/pmixrun)}
pmixd=${PMIXD:-$(find_binary pmixd tools/pmixd/pmixd)}
program=$1
shift
if [ "${program#/}" = "$program" ] && [ -x "$program" ]; then program="$PWD/$program"; fi
subnet=${MULTINODE_SUBNET:-10.77.0}
verbose=${MULTINODE_VERBOSE:-}

pin=${MULTINODE_PIN:-}
case "$pin" in "" | 1) ;; *) echo "$0: MULTINODE_PIN is 1 or unset" >&2; exit 2 ;; esac
cpus=()
if [ -n "$pin" ]; then
  # The CPUs this process may use ("0-3,8,10-11"), one by one.
  allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
  for part in ${allowed//,/ }; do
    for c in $(seq "${part%-*}" "${part#*-}"); do cpus+=("$c"); done
  done
  if [ ${#cpus[@]} -eq 0 ]; then echo "$0: MULTINODE_PIN: no CPU in '$allowed'" >&2; exit 1; fi
fi

tag=${MULTINODE_TAG:-pmn$(($$ % 100000))}
case "$tag" in *[!a-z0-9]* | "" | ?????????*) echo "$0: MULTINODE_TAG: 1 to 8 of [a-z0-9]" >&2; exit 2 ;; esac
work=$(mktemp -d "/tmp/$tag.XXXXXX")
daemon_pids=()
stopper=""
# shellcheck source=tools/multinode/netns.sh
. "$(dirname "${BASH_SOURCE[0]}")/netns.sh"

cleanup() {
  local status=$?
  set +e
  [ -n "$stopper" ] && kill "$stopper" 2>/dev/null
  for pid in "${daemon_pids[@]}"; do kill -TERM "$pid" 2>/dev/null; kill -CONT "$pid" 2>/dev/null; done
  for _ in $(seq 50); do
    alive=0
    for pid in "${daemon_pids[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ $alive -eq 0 ] && break
    sleep 0.1
  done
  netns_kill
  for pid in "${daemon_pids[@]}"; do wait "$pid" 2>/dev/null; done
  if [ -n "$verbose" ] || [ "$status" -ne 0 ]; then
    for f in "$work"/node*.log; do [ -f "$f" ] && { echo "--- $f"; cat "$f"; } >&2; done
  fi
  netns_down
  rm -rf "$work"
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

netns_up "$tag" "$nodes" "$subnet"

if [ -n "${MULTINODE_AGENT:-}" ]; then
  if [ -n "$pin" ]; then
    echo "$0: MULTINODE_PIN needs the daemons started here, not MULTINODE_AGENT" >&2
    exit 2
  fi
  if [ -n "${MULTINODE_KILL:-}${MULTINODE_STOP:-}" ]; then
    echo "$0: MULTINODE_KILL and MULTINODE_STOP need the daemons started here, not MULTINODE_AGENT" >&2
    exit 2
  fi
  hosts=""
  for k in $(seq 0 $((nodes - 1))); do hosts="$hosts${hosts:+,}$tag-$k"; done
  set +e
  # shellcheck disable=SC2086
  ip netns exec "$tag-0" "$pmixrun" --hosts "$hosts" --launch-agent 'ip netns exec {host}' --pmixd "$pmixd" \
    -n $((nodes * per_node)) ${PMIXRUN_ARGS:-} "$program" "$@"
  status=$?
  set -e
  # pmixrun has ended its daemons (their lifelines closed): nothing may be left.
  for k in $(seq 0 $((nodes - 1))); do
    left=$(ip netns pids "$tag-$k" | tr '\n' ' ')
    if [ -n "$left" ]; then echo "demo.sh: processes left on $tag-$k after pmixrun ended: $left" >&2; fi
  done
  exit $status
fi

daemons=""
"$pmixd" credentials "$work/key" >/dev/null
for k in $(seq 0 $((nodes - 1))); do
  ns="$tag-$k"
  on_cpu=()
  if [ -n "$pin" ]; then on_cpu=(taskset -c "${cpus[$((k % ${#cpus[@]}))]}"); fi
  ip netns exec "$ns" unshare --uts -- sh -c 'hostname "$1"; shift; exec "$@"' sh "node$k" \
    "${on_cpu[@]}" "$pmixd" --credentials "$work/key" --name "node$k" --port-file "$work/port$k" ${verbose:+--verbose} \
    >"$work/node$k.out" 2>"$work/node$k.log" &
  daemon_pids+=($!)
done
for k in $(seq 0 $((nodes - 1))); do
  for _ in $(seq 100); do [ -s "$work/port$k" ] && break; sleep 0.1; done
  if [ ! -s "$work/port$k" ]; then
    echo "$0: the pmixd of node$k did not start:" >&2
    cat "$work/node$k.log" >&2
    exit 1
  fi
  daemons="$daemons${daemons:+,}$subnet.$((k + 1)):$(cat "$work/port$k")"
done

if [ -n "${MULTINODE_KILL:-}" ]; then
  victim=${MULTINODE_KILL%%:*}
  delay=${MULTINODE_KILL#*:}
  (sleep "$delay"; echo "demo.sh: killing the pmixd of node$victim" >&2; kill -KILL "${daemon_pids[$victim]}") &
fi
if [ -n "${MULTINODE_STOP:-}" ]; then
  IFS=: read -r victim delay pause <<<"$MULTINODE_STOP"
  case "$victim:$delay:${pause:-0}" in
    *[!0-9:]* | :* | *::*) echo "$0: MULTINODE_STOP is K:S[:D] (whole numbers)" >&2; exit 2 ;;
  esac
  [ "$victim" -lt "$nodes" ] || { echo "$0: MULTINODE_STOP: no node $victim" >&2; exit 2; }
  (
    sleep "$delay"
    echo "demo.sh: stopping the pmixd of node$victim" >&2
    kill -STOP "${daemon_pids[$victim]}"
    if [ -n "$pause" ]; then
      sleep "$pause"
      echo "demo.sh: the pmixd of node$victim goes on" >&2
      kill -CONT "${daemon_pids[$victim]}"
    fi
  ) &
  stopper=$!
fi

if [ -n "${MULTINODE_BEFORE:-}" ]; then
  namespaces=""
  for k in $(seq 0 $((nodes - 1))); do namespaces="$namespaces${namespaces:+ }$tag-$k"; done
  if ! MULTINODE_DAEMONS=$daemons MULTINODE_KEY=$work/key MULTINODE_NAMESPACES=$namespaces \
    ip netns exec "$tag-0" sh -c "$MULTINODE_BEFORE"; then
    echo "$0: MULTINODE_BEFORE failed" >&2
    exit 1
  fi
fi

set +e
# shellcheck disable=SC2086
ip netns exec "$tag-0" "$pmixrun" --daemons "$daemons" --credentials "$work/key" -n $((nodes * per_node)) \
  ${PMIXRUN_ARGS:-} "$program" "$@"
status=$?
set -e
exit $status
