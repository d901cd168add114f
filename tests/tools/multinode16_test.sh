#!/usr/bin/env bash
# Jobs across 16 nodes of 4 ranks (64 ranks) on this machine (issue 38):
# tools/multinode/demo.sh makes 16 network namespaces, one pmixd each, and
# runs pmixrun --daemons on node 0. The checks of multinode_test.sh at this
# scale: put / collecting fence / get with both fence algorithms and both
# mappings, direct modex, Open MPI's allreduce over 64 ranks, an abort,
# publish / lookup (one waiting on node 15), an event of session range, a
# spawn of one child per node, and node 15 killed while the others wait in a
# fence. Needs root and iproute2.
set -uo pipefail
# shellcheck source=tests/tools/multinode_expect.sh
. tests/tools/multinode_expect.sh
multinode_setup multinode16_test mn16
client=$PWD/tests/tools/multinode_client
export MULTINODE_TAG=m16$(($$ % 100000))
export MULTINODE_SUBNET=10.76.0

run() {  # PROGRAM ARGS... on 16 nodes x 4 (PMIXRUN_ARGS, MULTINODE_KILL from the caller)
  timeout 300 "$demo" 16 4 "$@" >"$tmp/out" 2>&1
}

PMIXRUN_ARGS="--timeout 120" run "$client" putget; st=$?
expect "put/fence/get, 16 nodes x 4, tree fence, by slot" $st 0 \
  "$tmp/out" '^OK putget rank=[0-9]+ node=([0-9]|1[0-5])$' 64 \
  "$tmp/out" '^OK putget rank=[0-3] node=0$' 4 "$tmp/out" '^OK putget rank=6[0-3] node=15$' 4 "$tmp/out" '^FAIL' 0

PMIXRUN_ARGS="--timeout 120 --fence doubling --map-by node" run "$client" putget; st=$?
expect "put/fence/get, 16 nodes x 4, doubling fence, by node" $st 0 \
  "$tmp/out" '^OK putget rank=[0-9]+ node=([0-9]|1[0-5])$' 64 \
  "$tmp/out" '^OK putget rank=(0|16|32|48) node=0$' 4 "$tmp/out" '^OK putget rank=(15|31|47|63) node=15$' 4 \
  "$tmp/out" '^FAIL' 0

PMIXRUN_ARGS="--timeout 120" run "$client" dmodex; st=$?
expect "direct modex across 16 nodes" $st 0 "$tmp/out" '^OK dmodex rank=[0-9]+ node=([0-9]|1[0-5])$' 64 \
  "$tmp/out" '^FAIL' 0

export LD_LIBRARY_PATH=$PWD/api${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
PMIXRUN_ARGS="--timeout 200" run "$PWD/tests/hosts/mpi/allreduce" 64; st=$?
expect "Open MPI allreduce across 16 nodes (64 ranks)" $st 0 "$tmp/out" '^OK allreduce rank=[0-9]+ size=64$' 64 \
  "$tmp/out" '^OK allreduce all ranks=64$' 1
unset LD_LIBRARY_PATH

PMIXRUN_ARGS="--timeout 120" run "$client" abort 7; st=$?
expect "abort on node 0 ends the job on all 16 nodes" $st 7 \
  "$tmp/out" '^pmixrun: rank 1 of .* aborted with status 7: multinode_client aborts$' 1 "$tmp/out" 'job aborted' 1

PMIXRUN_ARGS="--timeout 120" run "$client" store; st=$?
expect "publish / lookup (waiting) / unpublish across 16 nodes" $st 0 \
  "$tmp/out" '^OK store rank=[0-9]+ node=([0-9]|1[0-5])$' 64 \
  "$tmp/out" '^lookup waited rank 63 node 15: published by rank 0 on node 0$' 1 "$tmp/out" '^FAIL' 0

PMIXRUN_ARGS="--timeout 120" run "$client" notify session; st=$?
expect "notify_event across 16 nodes, range session" $st 0 \
  "$tmp/out" '^OK notify rank=[0-9]+ node=([0-9]|1[0-5])$' 64 \
  "$tmp/out" '^event rank [0-9]+ node ([0-9]|1[0-5]) from rank 0$' 63 \
  "$tmp/out" '^event rank 6[0-3] node 15 ' 4 "$tmp/out" '^FAIL' 0

PMIXRUN_ARGS="--timeout 120" run "$client" spawn 16; st=$?
expect "spawn across 16 nodes: 16 children, one per node, fence among themselves" $st 0 \
  "$tmp/out" '^spawned pmixrun\.[0-9.]+\.1$' 1 "$tmp/out" '^OK child rank=([0-9]|1[0-5]) node=([0-9]|1[0-5])$' 16 \
  "$tmp/out" '^OK child rank=15 node=15$' 1 "$tmp/out" '^OK spawn rank=[0-9]+ node=([0-9]|1[0-5])$' 64 \
  "$tmp/out" '^FAIL' 0

# Node 15's ranks never reach the fence; its pmixd is killed 4 s in.
start=$(date +%s)
MULTINODE_KILL=15:4 PMIXRUN_ARGS="--timeout 200" run "$client" stall; st=$?
took=$(( $(date +%s) - start ))
expect "a node of 16 killed mid-fence" $st 1 "$tmp/out" '^entering fence rank [0-9]+$' 60 \
  "$tmp/out" '^fence failed: PMIX_ERR_UNREACH after [0-9.]+ s rank [0-9]+$' 60 \
  "$tmp/out" '^pmixrun: node node15 \(10\.76\.0\.16:[0-9]+\) is lost: its pmixd is gone' 1 \
  "$tmp/out" 'exit status 1$' 1
if [ "$took" -gt 60 ]; then fail "a node of 16 killed mid-fence: the job took $took s, want at most 60" "$tmp/out"; fi

if ip netns list | grep -q "^$MULTINODE_TAG-"; then
  fail "network namespaces left: $(ip netns list | grep "^$MULTINODE_TAG-" | tr '\n' ' ')"
fi
if [ $failures -ne 0 ]; then
  echo "$failures case(s) failed"
  exit 1
fi
echo "all 16-node cases passed"
