# A Slurm 22.05 "cluster" of several nodes on this machine, for tests: one
# network namespace per node (tools/multinode/netns.sh), run as root from a
# scratch folder, without systemd, cgroups or any change to the system.
#
#   source tools/multinode/netns.sh
#   source tests/hosts/slurm/slurm_cluster.sh
#   source tests/hosts/slurm/slurm_nodes.sh
#   scratch=$(mktemp -d /tmp/smn.XXXXXX)     # short: socket paths < 108 bytes
#   trap 'slurm_nodes_stop; rm -rf "$scratch"' EXIT
#   slurm_nodes_start "$scratch" TAG NODES SUBNET [PMIX_LIB_DIR] || exit 1
#   slurm_nodes_srun -N 4 -n 16 ./prog      # srun -O --mpi=pmix on node0, under a timeout
#   slurm_nodes_stop
#
# Node k is node<k> at SUBNET.<k+1>, in the network namespace TAG-<k>; its
# slurmd runs there in a mount and UTS namespace of its own: host name
# node<k>, an /etc/hosts naming every node, a /dev/shm of its own, and its
# folder SCRATCH/n<k> mounted over SCRATCH/node, the one path slurm.conf
# names for every node's spool, temporary files, pid and log (the pmix
# plugin sends other nodes the socket path of its own spool, and its
# server's temporary folder is there too: the same path with each node's own
# contents, as on real nodes). With PMIX_LIB_DIR our library replaces
# OpenPMIx's in each node's mount namespace, as slurm_cluster.sh does on one
# node. The nodes are entered with nsenter, not `ip netns exec`, which mounts
# a /sys of the namespace's own and hides /sys/fs/cgroup (slurmd needs it,
# even with proctrack/linuxproc). munged runs outside (its socket is a file, reached from every
# namespace); slurmctld runs in node0's namespaces, and so does srun.
#
# slurm_nodes_slurmd_pid K   the PID of node K's slurmd
# slurm_nodes_pids K         every process in node K's network namespace

SLURM_NODES_PIDS=()
SLURM_NODES_TAG=
SLURM_NODES_COUNT=0
SLURM_NODES_SUBNET=

# Run as: bash -c "$_SLURM_NODE_SCRIPT" node-ns K SCRATCH STAGE COMMAND...
# (STAGE empty: OpenPMIx stays; else slurm_cluster.sh's _SLURM_NS_SCRIPT,
# given in SLURM_NODES_LIB_SCRIPT, puts it over OpenPMIx's files).
# shellcheck disable=SC2016  # expanded by that bash, not this one
_SLURM_NODE_SCRIPT='
k=$1; scratch=$2; stage=$3; shift 3
set -e
hostname "node$k"
mount --bind "$scratch/n$k" "$scratch/node"
mount --bind "$scratch/etc/hosts" /etc/hosts
mount -t tmpfs -o size=256m,mode=1777 tmpfs /dev/shm
set +e
if [ -n "$stage" ]; then
  script=$SLURM_NODES_LIB_SCRIPT
  unset SLURM_NODES_LIB_SCRIPT
  exec bash -c "$script" slurmd-ns "$stage" "$@"
fi
exec "$@"
'

slurm_nodes_slurmd_pid() { echo "${SLURM_NODES_PIDS[$1]}"; }
slurm_nodes_pids() { ip netns pids "$SLURM_NODES_TAG-$1" 2>/dev/null; }

slurm_nodes_start() {
  local -; set +e
  local scratch=${1:?usage: slurm_nodes_start SCRATCH TAG NODES SUBNET [PMIX_LIB_DIR]}
  local tag=${2:?} nodes=${3:?} subnet=${4:?} libdir=${5:-}
  local k list state ping stage=""
  if [ -n "$SLURM_HARNESS_DIR" ]; then _slurm_say "a cluster is already running in $SLURM_HARNESS_DIR"; return 1; fi
  [ "$(id -u)" = 0 ] || { _slurm_say "must run as root"; return 1; }
  scratch=$(cd "$scratch" && pwd) || return 1
  if [ ${#scratch} -gt 60 ]; then _slurm_say "scratch path $scratch too long for Unix sockets"; return 1; fi
  SLURM_HARNESS_DIR=$scratch
  SLURM_HARNESS_LIB_DIR=
  SLURM_NODES_TAG=$tag
  SLURM_NODES_COUNT=$nodes
  SLURM_NODES_SUBNET=$subnet
  SLURM_NODES_PIDS=()
  mkdir -p "$scratch"/{etc,log,run,state,munge,node} || return 1
  chmod 0755 "$scratch/munge"
  for k in $(seq 0 $((nodes - 1))); do mkdir -p "$scratch/n$k"/{spool,tmp,log,run} || return 1; done
  if [ -n "$libdir" ]; then
    SLURM_HARNESS_LIB_DIR=$(cd "$libdir" && pwd) || { _slurm_fail "no folder $libdir"; return 1; }
    _slurm_stage_pmix "$SLURM_HARNESS_LIB_DIR" || { _slurm_fail "cannot stage $SLURM_HARNESS_LIB_DIR"; return 1; }
    stage=$scratch/pmixlib
  fi
  netns_up "$tag" "$nodes" "$subnet" || { _slurm_fail "cannot make the namespaces"; return 1; }
  {
    echo "127.0.0.1 localhost"
    for k in $(seq 0 $((nodes - 1))); do echo "$subnet.$((k + 1)) node$k"; done
  } >"$scratch/etc/hosts"

  _slurm_start_munge "$scratch" || return 1

  : >"$scratch/etc/plugstack.conf"
  list="node[0-$((nodes - 1))]"
  # Fixed ports: every daemon is alone in its network namespace. Short
  # timeouts: a node that dies is noticed in bounded time.
  cat >"$scratch/etc/slurm.conf" <<EOF
# test cluster of $nodes namespace nodes written by tests/hosts/slurm/slurm_nodes.sh
ClusterName=m$(printf '%05d' $((RANDOM % 100000)))
SlurmctldHost=node0($subnet.1)
SlurmctldPort=6817
SlurmdPort=6818
$(_slurm_common_conf "$scratch")
SlurmdSpoolDir=$scratch/node/spool
SlurmctldPidFile=$scratch/run/slurmctld.pid
SlurmdPidFile=$scratch/node/run/slurmd.pid
SlurmctldLogFile=$scratch/log/slurmctld.log
SlurmdLogFile=$scratch/node/log/slurmd.log
TmpFS=$scratch/node/tmp
SlurmdTimeout=10
MessageTimeout=5
PartitionName=test Nodes=$list OverSubscribe=FORCE:16 Default=YES State=UP MaxTime=INFINITE
EOF
  for k in $(seq 0 $((nodes - 1))); do
    echo "NodeName=node$k NodeAddr=$subnet.$((k + 1)) NodeHostname=node$k CPUs=$(nproc) State=UNKNOWN" \
      >>"$scratch/etc/slurm.conf"
  done
  export SLURM_CONF=$scratch/etc/slurm.conf

  # slurmctld on node0 (its host name must be the controller's)
  SLURM_HARNESS_ID=$scratch nsenter "--net=/run/netns/$tag-0" unshare -u -- sh -c 'hostname node0; exec "$@"' ctld \
    slurmctld -D -i -f "$SLURM_CONF" </dev/null >"$scratch/log/slurmctld.out" 2>&1 &
  SLURM_HARNESS_SLURMCTLD_PID=$!
  local server_env=()
  if [ -f "$scratch/pmixlib/libpmix-server.so.2" ]; then
    server_env=("PMIX_CXX_SERVER_LIBRARY=$scratch/pmixlib/libpmix-server.so.2")
  fi
  for k in $(seq 0 $((nodes - 1))); do
    # ip netns exec, unshare and both shells exec: the PID ends up slurmd's
    SLURM_HARNESS_ID=$scratch SLURM_NODES_LIB_SCRIPT=$_SLURM_NS_SCRIPT env "${server_env[@]}" \
      nsenter "--net=/run/netns/$tag-$k" unshare -m -u --propagation private -- \
      bash -c "$_SLURM_NODE_SCRIPT" node-ns "$k" "$scratch" "$stage" \
      slurmd -D -f "$SLURM_CONF" -N "node$k" </dev/null >"$scratch/n$k/log/slurmd.out" 2>&1 &
    SLURM_NODES_PIDS[k]=$!
  done
  SLURM_HARNESS_SLURMD_PID=${SLURM_NODES_PIDS[0]}

  for _ in $(seq 600); do
    _slurm_ours "$SLURM_HARNESS_SLURMCTLD_PID" || { _slurm_nodes_fail "slurmctld exited"; return 1; }
    for k in $(seq 0 $((nodes - 1))); do
      _slurm_ours "${SLURM_NODES_PIDS[k]}" || { _slurm_nodes_fail "the slurmd of node$k exited"; return 1; }
    done
    ping=$(slurm_nodes_on 0 timeout 10 scontrol ping 2>/dev/null)
    state=$(slurm_nodes_on 0 timeout 10 sinfo -h -N -o %T 2>/dev/null | sort -u)
    case "$ping" in *" is UP"*) [ "$state" = idle ] && return 0 ;; esac
    sleep 0.1
  done
  _slurm_nodes_fail "the nodes are not idle after 60 s (scontrol ping: ${ping:-nothing}; sinfo: ${state:-nothing})"
}

_slurm_nodes_fail() {
  _slurm_say "$*"
  slurm_nodes_dump_logs
  slurm_nodes_stop
  return 1
}

slurm_nodes_dump_logs() {
  local -; set +e
  [ -n "$SLURM_HARNESS_DIR" ] || return 0
  _slurm_show_tails 30 "$SLURM_HARNESS_DIR"/log/{munged,slurmctld}.out "$SLURM_HARNESS_DIR"/n*/log/slurmd.log
}

# Runs COMMAND in node K's network, mount and UTS namespaces (those of its
# slurmd), from the current folder.
slurm_nodes_on() {
  local k=$1; shift
  SLURM_HARNESS_ID=$SLURM_HARNESS_DIR SLURM_CONF=$SLURM_HARNESS_DIR/etc/slurm.conf \
    nsenter -t "${SLURM_NODES_PIDS[k]}" -n -m -u "--wd=$PWD" -- "$@"
}

# srun -O --mpi=pmix ARGS on node0, under `timeout` ($SLURM_SRUN_TIMEOUT,
# 120 s). Tasks get TMPDIR in their node's folder, Open MPI's
# yield-when-idle (the nodes are oversubscribed) and its TCP interfaces
# limited to the nodes' subnet (each namespace's loopback is another node's).
slurm_nodes_srun() {
  local -; set +e
  [ -n "$SLURM_HARNESS_DIR" ] || { _slurm_say "slurm_nodes_srun: no cluster running"; return 1; }
  TMPDIR=$SLURM_HARNESS_DIR/node/tmp OMPI_MCA_mpi_yield_when_idle=${OMPI_MCA_mpi_yield_when_idle:-1} \
    OMPI_MCA_btl_tcp_if_include=$SLURM_NODES_SUBNET.0/24 \
    slurm_nodes_on 0 timeout -k 10 "${SLURM_SRUN_TIMEOUT:-120}" srun -O --mpi=pmix "$@"
}

slurm_nodes_stop() {
  local -; set +e
  local k
  [ -n "$SLURM_HARNESS_DIR" ] || return 0
  if _slurm_ours "$SLURM_HARNESS_SLURMCTLD_PID" && [ -n "$(slurm_nodes_on 0 timeout 10 squeue -h -o %i 2>/dev/null)" ]; then
    slurm_nodes_on 0 timeout 10 scancel --quiet --full --user=root 2>/dev/null
    for _ in $(seq 100); do
      [ -z "$(slurm_nodes_on 0 timeout 10 squeue -h -o %i 2>/dev/null)" ] && break
      sleep 0.1
    done
  fi
  for k in "${!SLURM_NODES_PIDS[@]}"; do _slurm_stop_pid "${SLURM_NODES_PIDS[k]}" "slurmd of node$k" 5; done
  _slurm_stop_pid "$SLURM_HARNESS_SLURMCTLD_PID" slurmctld 5
  _slurm_stop_pid "$SLURM_HARNESS_MUNGED_PID" munged 5
  # whatever is left on the nodes (slurmstepd, tasks), then the nodes
  netns_down
  SLURM_NODES_PIDS=()
  SLURM_HARNESS_MUNGED_PID='' SLURM_HARNESS_SLURMCTLD_PID='' SLURM_HARNESS_SLURMD_PID=''
  SLURM_HARNESS_DIR='' SLURM_HARNESS_LIB_DIR=
  return 0
}
