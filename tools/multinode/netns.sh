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

# netns_mpirun_kit DIR TAG NODES SUBNET PER_NODE writes what Open MPI's mpirun
# needs to run across the nodes TAG-0.. into DIR: etc/hosts (node<k> at
# SUBNET.<k+1>), n<k>/tmp, and
#   bin/node K CMD...      CMD in node K's network namespace and in a mount and
#                          UTS namespace of its own: host name node<k>, that
#                          /etc/hosts, a /dev/shm of its own (with one host
#                          name and one /dev/shm, Open MPI's shared-memory
#                          segments collide between nodes), TMPDIR n<k>/tmp;
#   bin/node K -c WORDS... the words as one shell command line, as ssh runs them;
#   bin/agent HOST WORDS...  the --mca plm_rsh_agent: WORDS on node HOST;
#   bin/mpirun ARGS...     Debian's mpirun on node 0 with the nodes (PER_NODE
#                          slots each, mapped by node), the agent, TCP limited
#                          to SUBNET.0/24 (each namespace's loopback is another
#                          node's), polling ranks yielding (PER_NODE slots do
#                          not look oversubscribed to Open MPI), SPAWN_HOST
#                          passed on.
netns_mpirun_kit() {  # DIR TAG NODES SUBNET PER_NODE
  local dir=$1 tag=$2 nodes=$3 subnet=$4 per_node=$5 k hosts=""
  mkdir -p "$dir/bin" "$dir/etc" || return 1
  {
    echo "127.0.0.1 localhost"
    for k in $(seq 0 $((nodes - 1))); do echo "$subnet.$((k + 1)) node$k"; done
  } >"$dir/etc/hosts"
  for k in $(seq 0 $((nodes - 1))); do
    mkdir -p "$dir/n$k/tmp"
    hosts="$hosts${hosts:+,}node$k:$per_node"
  done
  cat >"$dir/bin/node" <<EOF
#!/bin/sh
k=\$1; shift
exec ip netns exec "$tag-\$k" unshare -m -u --propagation private -- sh -c '
  hostname "node\$1"
  mount --bind "$dir/etc/hosts" /etc/hosts
  mount -t tmpfs -o size=256m,mode=1777 tmpfs /dev/shm
  export TMPDIR="$dir/n\$1/tmp"
  shift
  if [ "\$1" = -c ]; then shift; exec sh -c "\$*"; fi
  exec "\$@"' node "\$k" "\$@"
EOF
  cat >"$dir/bin/agent" <<EOF
#!/bin/sh
host=\$1; shift
k=\${host#node}
case \$k in ''|*[!0-9]*) echo "agent: no such node: \$host" >&2; exit 255 ;; esac
exec "$dir/bin/node" "\$k" -c "\$@"
EOF
  cat >"$dir/bin/mpirun" <<EOF
#!/bin/sh
exec "$dir/bin/node" 0 /usr/bin/mpirun --host "$hosts" --map-by node \\
  --mca plm rsh --mca plm_rsh_agent "$dir/bin/agent" \\
  --mca oob_tcp_if_include $subnet.0/24 --mca btl_tcp_if_include $subnet.0/24 --mca btl self,vader,tcp \\
  --mca mpi_yield_when_idle 1 -x SPAWN_HOST "\$@"
EOF
  chmod +x "$dir/bin/node" "$dir/bin/agent" "$dir/bin/mpirun"
}
