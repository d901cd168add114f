#!/usr/bin/env bash
# Runs remote_test inside a network namespace of its own with two veth
# devices, so that "every non-loopback interface" is known. Needs root and
# iproute2 (CI runs as root; tools/deps.sh installs iproute2).
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
  echo "remote_test needs root to make a network namespace" >&2
  exit 1
fi
ns="pmixt$$"
ip netns add "$ns"
trap 'ip netns del "$ns" 2>/dev/null || true' EXIT
run() { ip netns exec "$ns" "$@"; }
run ip link set lo up
run ip link add pa type veth peer name pb
run ip addr add 10.51.0.1/24 dev pa
run ip addr add 10.52.0.1/24 dev pb
run ip link set pa up
run ip link set pb up
run tests/e2e/remote_test "$@"
