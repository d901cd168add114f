#!/usr/bin/env bash
# Runs remote_test inside a network namespace of its own with two veth
# devices, so that "every non-loopback interface" is known. Needs root,
# iproute2 (tools/deps.sh installs it) and util-linux's unshare.
set -euo pipefail
if [ "$(id -u)" -ne 0 ]; then
  echo "remote_test needs root to make a network namespace" >&2
  exit 1
fi
# unshare(1) gives the test a network namespace of its own that ends with
# it: nothing to clean up, and no /run/netns mount needed (so it also works
# in a chroot).
exec unshare --net -- bash -euo pipefail -c '
  ip link set lo up
  ip link add pa type veth peer name pb
  ip addr add 10.51.0.1/24 dev pa
  ip addr add 10.52.0.1/24 dev pb
  ip link set pa up
  ip link set pb up
  exec tests/e2e/remote_test "$@"
' remote_test "$@"
