#!/usr/bin/env bash
# Open MPI 4.1.4's mpirun across 4 "nodes" on this machine, our libpmix.so.2
# in mpirun and in every orted and rank (issue 38).
#
# The nodes are network namespaces (tools/multinode/netns.sh), node0 to node3
# at 10.79.0.1-4. Each process of a node runs in that network namespace and in
# its own mount and UTS namespaces: host name nodeK, an /etc/hosts naming the
# four nodes, a /dev/shm of its own (with one host name and one /dev/shm,
# Open MPI's shared-memory segments collide between nodes), its own TMPDIR.
# mpirun runs on node0 through a wrapper named mpirun; it starts an orted on
# each other node through its rsh launcher, whose agent (--mca plm_rsh_agent)
# is a script of ours that does what ssh would: run the command words it is
# given on that host (here: in that node's namespaces).
#
# First a check that every node's server is ours (each logs where it listens
# at PMIX_CXX_VERBOSE=2), and a control run on Debian's OpenPMIx (no lib dir),
# so that a failure of the suite is ours; then run_mpi_suite.sh at 16 ranks,
# 4 per node, mapped by node (so rank 1, the one that aborts, is on node1):
# allreduce, ring, MPI_Comm_spawn of 2 children onto node3 (SPAWN_HOST),
# publish/lookup with accept/connect, MPI_Abort(7). Needs root and iproute2.
set -uo pipefail

if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null; then
  echo "FAIL mpirun_nodes_test needs root and iproute2 (network namespaces)"
  exit 1
fi
# shellcheck source=tools/multinode/netns.sh
. tools/multinode/netns.sh

nodes=4
per_node=4
subnet=10.79.0
tag=$(printf 'mn%x' $$)
scratch=$(mktemp -d /tmp/mpn.XXXXXX)   # short: Unix socket paths live under TMPDIR
cleanup() {
  local status=$?
  netns_down
  rm -rf "$scratch"
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

netns_up "$tag" "$nodes" "$subnet" || { echo "FAIL the namespaces could not be made"; exit 1; }
mkdir -p "$scratch/lib"
cp -L api/libpmix.so.2 api/libpmix-server.so.2 "$scratch/lib/"
netns_mpirun_kit "$scratch" "$tag" "$nodes" "$subnet" "$per_node" || { echo "FAIL cannot write the mpirun kit"; exit 1; }
export PATH=/usr/bin:$PATH SPAWN_HOST=node3
n=$((nodes * per_node))

failed=0
# Every node's server is ours: mpirun's on node0 and each orted's.
LD_LIBRARY_PATH=$scratch/lib PMIX_CXX_VERBOSE=2 timeout 120 "$scratch/bin/mpirun" --allow-run-as-root -np $n \
  tests/hosts/mpi/allreduce >"$scratch/check.out" 2>"$scratch/check.err"
status=$?
ours=$(sed -n "s|.*info server: listening at .*$scratch/n\([0-9]*\)/tmp/.*|\1|p" "$scratch/check.err" | sort -u | tr '\n' ' ')
if [ $status -ne 0 ] || [ "$ours" != "0 1 2 3 " ] ||
  [ "$(grep -c '^OK allreduce rank=' "$scratch/check.out")" != $n ]; then
  echo "FAIL 16 ranks on 4 nodes, each node's server ours (status $status; our servers on nodes: ${ours:-none}):"
  cat "$scratch/check.out" "$scratch/check.err"
  failed=1
else
  echo "PASS 16 ranks on 4 nodes, every node's server ours (mpirun and 3 orteds)"
fi
# The same run on OpenPMIx: the harness itself works.
timeout 120 "$scratch/bin/mpirun" --allow-run-as-root -np $n tests/hosts/mpi/allreduce \
  >"$scratch/control.out" 2>&1
if [ "$(grep -c '^OK allreduce rank=' "$scratch/control.out")" != $n ]; then
  echo "FAIL control: the same run on Debian's OpenPMIx:"
  cat "$scratch/control.out"
  failed=1
else
  echo "PASS control: the same run on Debian's OpenPMIx"
fi

tests/hosts/mpi/run_mpi_suite.sh tests/hosts/mpi --pmix-lib-dir "$scratch/lib" \
  --launcher "$scratch/bin/mpirun" --np "$n" --timeout 120 || failed=1

netns_down
left=$(netns_left "$tag")
if [ -n "$left" ]; then
  echo "FAIL namespaces left behind: $left"
  failed=1
fi
exit $failed
