# tools/multinode/netns.sh: "nodes" on one machine, for bash scripts to source.
#
# netns_up TAG NODES SUBNET  makes a namespace TAG-hub holding a bridge br0 and,
#                            for k = 0..NODES-1, a network namespace TAG-k whose
#                            eth0 (one end of a veth pair, the other on br0) has
#                            SUBNET.(k+1)/24. TAG: 1 to 8 of [a-z0-9] (device
#                            names are at most 15 bytes). Records what it made in
#                            NETNS_MADE.
# netns_kill                 SIGKILLs every process left in the made namespaces.
# netns_down                 netns_kill, then deletes the made namespaces (mounts
#                            made in mount namespaces of their processes go with
#                            them); NETNS_MADE is emptied.
# netns_left TAG             prints the namespaces named TAG-* that exist (a test's
#                            check that nothing was left behind).
#
# Needs root and iproute2. The host's own network is not touched: the bridge
# lives in a namespace of its own.

NETNS_MADE=()

netns_up() {  # TAG NODES SUBNET
  local tag=$1 nodes=$2 subnet=$3 k ns
  case "$tag" in *[!a-z0-9]* | "" | ?????????*) echo "netns_up: TAG: 1 to 8 of [a-z0-9]" >&2; return 2 ;; esac
  ip netns add "$tag-hub" || return 1
  NETNS_MADE+=("$tag-hub")
  ip -n "$tag-hub" link set lo up
  ip -n "$tag-hub" link add br0 type bridge
  ip -n "$tag-hub" link set br0 up
  for k in $(seq 0 $((nodes - 1))); do
    ns="$tag-$k"
    ip netns add "$ns" || return 1
    NETNS_MADE+=("$ns")
    ip -n "$ns" link set lo up
    ip link add "${tag}a$k" type veth peer name "${tag}b$k" || return 1
    ip link set "${tag}a$k" netns "$ns"
    ip link set "${tag}b$k" netns "$tag-hub"
    ip -n "$ns" link set "${tag}a$k" name eth0
    ip -n "$ns" addr add "$subnet.$((k + 1))/24" dev eth0
    ip -n "$ns" link set eth0 up
    ip -n "$tag-hub" link set "${tag}b$k" master br0
    ip -n "$tag-hub" link set "${tag}b$k" up
  done
}

netns_kill() {
  local ns pid
  for ns in "${NETNS_MADE[@]}"; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
  done
}

netns_down() {
  local ns
  netns_kill
  for ns in "${NETNS_MADE[@]}"; do ip netns del "$ns" 2>/dev/null; done
  NETNS_MADE=()
}

netns_left() {  # TAG
  ip netns list 2>/dev/null | awk -v t="$1-" 'index($1, t) == 1 { print $1 }'
}
