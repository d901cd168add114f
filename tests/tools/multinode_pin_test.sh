#!/usr/bin/env bash
# tools/multinode/demo.sh's MULTINODE_PIN=1 (docs/multinode.md, "Each node on
# a CPU of its own"): 3 nodes x 2 ranks; every rank reports its host name and
# the CPUs it may run on:
#   - node K's ranks run on the (K mod C)th of the C CPUs the test may use,
#     only there (3 nodes: node 2 shares the first CPU again)
#   - without the variable every rank may use every CPU the test may
#   - MULTINODE_PIN=2 and MULTINODE_PIN with MULTINODE_AGENT are refused
# Needs root and iproute2 (network namespaces): it fails without them.
set -uo pipefail
# shellcheck source=tests/tools/multinode_expect.sh
. tests/tools/multinode_expect.sh
multinode_setup multinode_pin_test mpin
export PMIXRUN_ARGS="--quiet --timeout 120"
export MULTINODE_TAG=mp$(($$ % 100000))

allowed=$(sed -n 's/^Cpus_allowed_list:[[:space:]]*//p' /proc/self/status)
cpus=()
for part in ${allowed//,/ }; do
  for c in $(seq "${part%-*}" "${part#*-}"); do cpus+=("$c"); done
done
echo "the test may use CPUs $allowed (${#cpus[@]})"
report='echo "where $(hostname) $(sed -n "s/^Cpus_allowed_list:[[:space:]]*//p" /proc/self/status)"'

MULTINODE_PIN=1 timeout 120 "$demo" 3 2 /bin/sh -c "$report" >"$tmp/out" 2>&1
status=$?
want=""
for k in 0 1 2; do want="$want/node$k ${cpus[$((k % ${#cpus[@]}))]}"; done
expect "pinned: 6 ranks report" $status 0 "$tmp/out" '^where node[0-2] ' 6
for k in 0 1 2; do
  n=$(grep -c "^where node$k ${cpus[$((k % ${#cpus[@]}))]}\$" "$tmp/out")
  [ "$n" -eq 2 ] || fail "pinned: $n ranks of node$k on CPU ${cpus[$((k % ${#cpus[@]}))]} alone, want 2 (want$want)" "$tmp/out"
done

timeout 120 "$demo" 3 2 /bin/sh -c "$report" >"$tmp/out" 2>&1
expect "not pinned: every rank may use every CPU" $? 0 "$tmp/out" "^where node[0-2] $allowed\$" 6

MULTINODE_PIN=2 timeout 60 "$demo" 2 1 /bin/true >"$tmp/out" 2>&1
expect "MULTINODE_PIN=2 refused" $? 2 "$tmp/out" 'MULTINODE_PIN is 1 or unset' 1
MULTINODE_PIN=1 MULTINODE_AGENT=1 timeout 60 "$demo" 2 1 /bin/true >"$tmp/out" 2>&1
expect "MULTINODE_PIN with MULTINODE_AGENT refused" $? 2 "$tmp/out" 'MULTINODE_PIN needs the daemons started here' 1

if [ "$failures" -ne 0 ]; then
  echo "multinode_pin_test: $failures failure(s)" >&2
  exit 1
fi
echo "multinode_pin_test: ok"
