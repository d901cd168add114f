#!/usr/bin/env bash
# Jobs across 4 nodes on this machine: tools/multinode/demo.sh makes 4
# network namespaces joined by veth pairs and a bridge, one pmixd in each,
# and runs pmixrun --daemons on node 0 (docs/multinode.md). Cases:
#   - put / collecting fence / get across the 4 nodes, with both fence algorithms
#     and both mappings
#   - direct modex: a fence without data, then gets of every other node's ranks
#   - the same two and a node lost mid-fence with each node's server run by pmixd's CAF
#     multiplexer thread (PMIXD_SERVER_ON_MULTIPLEXER=1, PMIX_CXX_PROGRESS_FD)
#   - Open MPI's allreduce over the 4 nodes (ranks on our client library)
#   - a node killed while the others wait in a fence: their fence fails with
#     PMIX_ERR_UNREACH, pmixrun names the lost node and ends with status 1 in bounded time
#   - PMIx_Abort on one node ends the job on every node with the abort's status
#   - publish / lookup (one that waits for a later publish, ranges, a timeout) / unpublish
#     across nodes; notify_event (session, global, namespace) heard on every node; a
#     spawn whose children run on every node, fence among themselves and see their parent
#   - PMIx_IOF_pull by a rank of node 0 of a rank's output on node 3
#   - PMIx_IOF_push by a rank of node 0 to the stdin of a rank on node 3, which echoes it and
#     sees its end; a push after the end is refused; pushes to a killed node fail with
#     PMIX_ERR_UNREACH in bounded time
#   - pmixrun's own stdin to rank 7 on node 3 (--stdin 7): two lines and the end, and 20 MB
#     counted exactly; --stdin all: every rank on every node gets all of it
#   - pmixrun --hosts starting the daemons through --launch-agent 'ip netns exec {host}'
#     (and ending them), and an agent that fails
#   - node death: publishes fail with PMIX_ERR_UNREACH when node 0 (the data store's) is
#     killed; a notify and then a spawn fail with it when node 3 is killed
#   - the session key (docs/multinode.md, "Who may talk to a daemon"): from node 0, a peer
#     over CAF's plain middleman, one over anonymous TLS, one with another session's key and
#     pmixrun with that key get
#     no handle of node 3's daemon and its plan's marker file never appears; raw garbage does
#     not hurt the daemon; the control (the session's key) gets the handle and its plan runs;
#     the real job then runs on all 4 nodes; the daemon logs each refusal with its reason.
#     Every daemon listens on its node's address only (and its PMIx server on loopback, for OpenPMIx).
#     pmixrun --hosts hands the key over stdin (not on the command line) and leaves no key
#     file behind. pmixd without a key, with a key others may read, or with garbage on stdin,
#     and pmixrun --daemons without a key, refuse to start, and both refuse a
#     PMIX_CXX_DAEMON_PEER_TIMEOUT_S out of 2 to 3600. A node's pmixd stopped mid-fence
#     (SIGSTOP) is lost once silent for that long; stopped 5 s of a paced job, it is not
# Needs root and iproute2: it fails (does not skip) without them.
set -uo pipefail
# shellcheck source=tests/tools/multinode_expect.sh
. tests/tools/multinode_expect.sh
multinode_setup multinode_test mntest
client=$PWD/tests/tools/multinode_client
intruder=$PWD/tests/tools/intruder
export MULTINODE_TAG=mnt$(($$ % 100000))  # the namespaces of this run (others may run beside it)

run() {  # NODES PER_NODE PROGRAM ARGS... (PMIXRUN_ARGS, MULTINODE_KILL from the caller)
  timeout 120 "$demo" "$@" >"$tmp/out" 2>&1
}

PMIXRUN_ARGS="--timeout 60" run 4 2 "$client" putget; st=$?
expect "put/fence/get, 4 nodes x 2, tree fence, by slot" $st 0 "$tmp/out" '^OK putget rank=[0-7] node=[0-3]$' 8 \
  "$tmp/out" '^OK putget rank=[01] node=0$' 2 "$tmp/out" '^OK putget rank=[67] node=3$' 2 "$tmp/out" '^FAIL' 0

# Groups across nodes (issue 34.2): pmixd's group up-call joins the nodes,
# one context id for all, each rank's PMIX_GROUP_INFO read from every node.
PMIXRUN_ARGS="--timeout 60 --map-by node" run 4 2 "$client" group; st=$?
expect "a group across 4 nodes: one context id, every member's group info" $st 0 \
  "$tmp/out" '^OK group rank=[0-7] node=[0-3]$' 8 "$tmp/out" '^FAIL' 0 "$tmp/out" '^group ctx=[1-9][0-9]*$' 8
if [ "$(grep -c '^group ctx=' "$tmp/out")" -ne 8 ] || [ "$(grep '^group ctx=' "$tmp/out" | sort -u | wc -l)" -ne 1 ]; then
  fail "a group across 4 nodes: the ranks' context ids differ" "$tmp/out"
fi

PMIXRUN_ARGS="--timeout 60 --fence doubling --map-by node" run 4 3 "$client" putget; st=$?
expect "put/fence/get, 4 nodes x 3, doubling fence, by node" $st 0 "$tmp/out" '^OK putget rank=[0-9]+ node=[0-3]$' 12 \
  "$tmp/out" '^OK putget rank=(0|4|8) node=0$' 3 "$tmp/out" '^OK putget rank=(3|7|11) node=3$' 3 "$tmp/out" '^FAIL' 0

PMIXRUN_ARGS="--timeout 60" run 4 2 "$client" dmodex; st=$?
expect "direct modex across nodes" $st 0 "$tmp/out" '^OK dmodex rank=[0-7] node=[0-3]$' 8 "$tmp/out" '^FAIL' 0

# Each node's server run by CAF's multiplexer thread (PMIX_CXX_PROGRESS_FD):
# fences with data, direct modex, and a node lost mid-fence.
export PMIXD_SERVER_ON_MULTIPLEXER=1
MULTINODE_VERBOSE=1 PMIXRUN_ARGS="--timeout 60" run 4 2 "$client" putget; st=$?
expect "put/fence/get, 4 nodes x 2, servers on the multiplexer" $st 0 "$tmp/out" '^OK putget rank=[0-7] node=[0-3]$' 8 \
  "$tmp/out" '^FAIL' 0 "$tmp/out" "^pmixd node[0-3]: the PMIx server runs on CAF's multiplexer thread$" 4
PMIXRUN_ARGS="--timeout 60" run 4 2 "$client" dmodex; st=$?
expect "direct modex across nodes, servers on the multiplexer" $st 0 "$tmp/out" '^OK dmodex rank=[0-7] node=[0-3]$' 8 \
  "$tmp/out" '^FAIL' 0
MULTINODE_KILL=3:2 PMIXRUN_ARGS="--timeout 100" run 4 2 "$client" stall; st=$?
expect "a node killed mid-fence, servers on the multiplexer" $st 1 "$tmp/out" '^entering fence rank [0-5]$' 6 \
  "$tmp/out" '^fence failed: PMIX_ERR_UNREACH after [0-9.]+ s rank [0-5]$' 6 "$tmp/out" 'exit status 1$' 1
unset PMIXD_SERVER_ON_MULTIPLEXER

if [ -x tests/hosts/mpi/allreduce ]; then
  export LD_LIBRARY_PATH=$PWD/api${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  PMIXRUN_ARGS="--timeout 90" run 4 2 "$PWD/tests/hosts/mpi/allreduce" 8; st=$?
  expect "Open MPI allreduce across 4 nodes (8 ranks)" $st 0 "$tmp/out" '^OK allreduce rank=[0-7] size=8$' 8 \
    "$tmp/out" '^OK allreduce all ranks=8$' 1
  unset LD_LIBRARY_PATH
else
  fail "Open MPI allreduce: tests/hosts/mpi/allreduce was not built"
fi

# lost_mid_fence NAME HOW REASON MAX_S: node 3's ranks never reach the
# fence, and 2 s in its pmixd is killed (HOW: MULTINODE_KILL) or stopped
# (MULTINODE_STOP: it keeps its connections open, and the other daemons and
# the launcher hear no beat from it for 10 s, tools/pmixd/liveness.hpp).
# The ranks of the other nodes fail with PMIX_ERR_UNREACH, pmixrun says
# node 3 is lost and why (REASON), and the job ends within MAX_S seconds.
lost_mid_fence() {  # PMIX_CXX_DAEMON_PEER_TIMEOUT_S from the caller, if any
  local name=$1 how=$2 reason=$3 max=$4 start took st
  start=$(date +%s)
  export "$how=3:2"
  PMIXRUN_ARGS="--timeout 100" run 4 2 "$client" stall; st=$?
  unset "$how"
  took=$(( $(date +%s) - start ))
  expect "$name" $st 1 "$tmp/out" '^entering fence rank [0-5]$' 6 \
    "$tmp/out" '^fence failed: PMIX_ERR_UNREACH after [0-9.]+ s rank [0-5]$' 6 \
    "$tmp/out" "^pmixrun: node node3 \\(10\\.77\\.0\\.4:[0-9]+\\) is lost: $reason" 1 \
    "$tmp/out" 'exit status 1$' 1
  if [ "$took" -gt "$max" ]; then fail "$name: the job took $took s, want at most $max" "$tmp/out"; fi
}
lost_mid_fence "a node killed mid-fence" MULTINODE_KILL "its pmixd is gone" 20
PMIX_CXX_DAEMON_PEER_TIMEOUT_S=3 \
  lost_mid_fence "a node stopped mid-fence, lost after 3 s" MULTINODE_STOP "its pmixd has not answered for 3 s" 60

# Stopped for 5 s in the middle of a job of 16 fences 0.5 s apart: less
# than the 10 s of silence that loses a node, so the job goes on.
MULTINODE_STOP=3:2:5 PMIXRUN_ARGS="--timeout 100" run 4 2 "$client" paced 16 500; st=$?
expect "a node stopped for 5 s mid-job is not lost" $st 0 "$tmp/out" '^OK paced rank=[0-7] node=[0-3]$' 8 \
  "$tmp/out" '^demo.sh: the pmixd of node3 goes on$' 1 "$tmp/out" 'is lost' 0 "$tmp/out" '^FAIL' 0

PMIXRUN_ARGS="--timeout 60" run 4 1 "$client" abort 7; st=$?
expect "abort on node 1 ends the job on every node" $st 7 \
  "$tmp/out" '^pmixrun: rank 1 of .* aborted with status 7: multinode_client aborts$' 1 "$tmp/out" 'job aborted' 1

PMIXRUN_ARGS="--timeout 60" run 4 2 "$client" store; st=$?
expect "publish / lookup (waiting) / unpublish across nodes" $st 0 "$tmp/out" '^OK store rank=[0-7] node=[0-3]$' 8 \
  "$tmp/out" '^lookup waited rank 7 node 3: published by rank 0 on node 0$' 1 "$tmp/out" '^FAIL' 0

for range in session global namespace; do
  PMIXRUN_ARGS="--timeout 60" run 4 2 "$client" notify $range; st=$?
  expect "notify_event across nodes, range $range" $st 0 "$tmp/out" '^OK notify rank=[0-7] node=[0-3]$' 8 \
    "$tmp/out" '^event rank [1-7] node [0-3] from rank 0$' 7 "$tmp/out" '^event rank [67] node 3 ' 2 "$tmp/out" '^FAIL' 0
done

PMIXRUN_ARGS="--timeout 60" run 4 2 "$client" iof; st=$?
expect "PMIx_IOF_pull of a rank on another node" $st 0 "$tmp/out" '^OK iof rank=[0-7] node=[0-3]$' 8 \
  "$tmp/out" '^pulled from rank 7: pmixrun\.[0-9.]+:7 iof line from rank 7 on node 3$' 1 "$tmp/out" '^FAIL' 0

PMIXRUN_ARGS="--timeout 60" run 4 2 "$client" stdin; st=$?
expect "PMIx_IOF_push from node 0 to the stdin of rank 7 on node 3, and its end" $st 0 \
  "$tmp/out" '^OK stdin rank=[0-7] node=[0-3]$' 8 \
  "$tmp/out" '^stdin rank 7 node 3: pushed line 1 from rank 0 on node 0$' 1 \
  "$tmp/out" '^stdin rank 7 node 3: pushed line 2 from rank 0 on node 0$' 1 \
  "$tmp/out" '^stdin rank 7 node 3: <eof>$' 1 "$tmp/out" '^stdin rank ' 3 \
  "$tmp/out" '^push after the end: PMIX_ERR_IOF_COMPLETE$' 1 "$tmp/out" '^FAIL' 0
if [ "$(grep '^stdin rank ' "$tmp/out" | sed 's/^stdin rank 7 node 3: //' | tr '\n' '|')" != \
  'pushed line 1 from rank 0 on node 0|pushed line 2 from rank 0 on node 0|<eof>|' ]; then
  fail "PMIx_IOF_push across nodes: rank 7 did not read line 1, line 2, then its end, in that order" "$tmp/out"
fi

printf 'first from pmixrun\nsecond from pmixrun\n' | PMIXRUN_ARGS="--timeout 60 --stdin 7" run 4 2 "$client" readstdin
st=$?
expect "pmixrun --stdin 7: pmixrun's stdin reaches rank 7 on node 3, and its end too" $st 0 \
  "$tmp/out" '^OK readstdin rank=[0-7] node=[0-3]$' 8 "$tmp/out" '^FAIL' 0
if [ "$(grep '^stdin rank ' "$tmp/out" | sed 's/^stdin rank 7 node 3: //' | tr '\n' '|')" != \
  'first from pmixrun|second from pmixrun|<eof>|' ]; then
  fail "pmixrun --stdin 7: rank 7 did not read the two lines, then the end" "$tmp/out"
fi

# 20 MB, five times what pmixrun lets wait for the pipes: read only as rank 7 takes it.
head -c 20000000 /dev/zero | PMIXRUN_ARGS="--timeout 60 --stdin 7" run 4 2 /bin/sh -c \
  'if [ "$PMIX_RANK" = 7 ]; then echo "rank 7 read $(wc -c) bytes"; fi'; st=$?
expect "pmixrun --stdin 7: 20 MB to a rank on node 3" $st 0 "$tmp/out" '^rank 7 read 20000000 bytes$' 1

head -c 1000000 /dev/urandom >"$tmp/input"
PMIXRUN_ARGS="--timeout 60 --stdin all" run 4 2 /bin/sh -c 'echo "rank $PMIX_RANK read $(md5sum | cut -c1-32)"' \
  <"$tmp/input"; st=$?
expect "pmixrun --stdin all: every rank on every node reads all of it" $st 0 \
  "$tmp/out" "^rank [0-7] read $(md5sum <"$tmp/input" | cut -c1-32)\$" 8

PMIXRUN_ARGS="--timeout 60" run 4 2 "$client" spawn 4; st=$?
expect "spawn across nodes: 4 children, one per node, fence among themselves" $st 0 \
  "$tmp/out" '^spawned pmixrun\.[0-9.]+\.1$' 1 "$tmp/out" '^OK child rank=[0-3] node=[0-3]$' 4 \
  "$tmp/out" '^OK child rank=3 node=3$' 1 "$tmp/out" '^OK spawn rank=[0-7] node=[0-3]$' 8 "$tmp/out" '^FAIL' 0

# Node 0, which holds the job's data store, is killed 3 s in while the others publish: each
# publish fails within 5 s of the last that succeeded (0.1 s in practice; the bound leaves
# room for a loaded machine).
start=$(date +%s)
MULTINODE_KILL=0:3 PMIXRUN_ARGS="--timeout 100" run 4 2 "$client" deadstore; st=$?
took=$(( $(date +%s) - start ))
expect "publish with the store's node killed" $st 1 \
  "$tmp/out" '^publish failed: PMIX_ERR_UNREACH after [0-4]\.[0-9] s rank [2-7]$' 6 \
  "$tmp/out" '^pmixrun: node node0 \(10\.77\.0\.1:[0-9]+\) is lost' 1 "$tmp/out" 'exit status 1$' 1
if [ "$took" -gt 20 ]; then fail "publish with the store's node killed: the job took $took s, want at most 20" "$tmp/out"; fi

# Node 3 is killed 3 s in; rank 0 notifies until that fails, then spawns.
MULTINODE_KILL=3:3 PMIXRUN_ARGS="--timeout 100" run 4 1 "$client" deadspawn; st=$?
expect "notify and spawn with a node killed" $st 1 "$tmp/out" '^notify failed: PMIX_ERR_UNREACH$' 1 \
  "$tmp/out" '^spawn failed: PMIX_ERR_UNREACH after [0-4]\.[0-9] s$' 1 \
  "$tmp/out" '^pmixrun: spawn by .* refused: node node3 is lost$' 1

# Node 3 is killed 3 s in while rank 0 pushes a line to rank 7's stdin there every 100 ms:
# the push fails with PMIX_ERR_UNREACH within 5 s of the last that succeeded (0.1 s in
# practice; the bound leaves room for a loaded machine).
start=$(date +%s)
MULTINODE_KILL=3:3 PMIXRUN_ARGS="--timeout 100" run 4 2 "$client" deadstdin; st=$?
took=$(( $(date +%s) - start ))
expect "PMIx_IOF_push to a rank on a killed node" $st 1 \
  "$tmp/out" '^push failed: PMIX_ERR_UNREACH after [0-4]\.[0-9] s$' 1 "$tmp/out" '^stdin rank 7 node 3: line 0$' 1 \
  "$tmp/out" '^pmixrun: node node3 \(10\.77\.0\.4:[0-9]+\) is lost' 1 "$tmp/out" 'exit status 1$' 1
if [ "$took" -gt 20 ]; then fail "PMIx_IOF_push to a killed node: the job took $took s, want at most 20" "$tmp/out"; fi

# pmixrun --hosts starts the daemons itself, through a launch agent (here ip netns exec).
MULTINODE_AGENT=1 PMIXRUN_ARGS="--timeout 60 --fence doubling" run 4 2 "$client" putget; st=$?
expect "pmixrun --hosts with --launch-agent 'ip netns exec {host}'" $st 0 \
  "$tmp/out" '^OK putget rank=[0-7] node=[0-3]$' 8 "$tmp/out" '^OK putget rank=[67] node=3$' 2 \
  "$tmp/out" '^FAIL' 0 "$tmp/out" 'processes left' 0

# A launch agent that cannot start the daemons: a message per host, status 1, at once.
start=$(date +%s)
timeout 60 "$PMIXRUN" --hosts a,b --launch-agent false -n 2 /bin/true >"$tmp/out" 2>&1; st=$?
took=$(( $(date +%s) - start ))
expect "a launch agent that fails" $st 1 "$tmp/out" '^pmixrun: the pmixd on (a|b) did not start \(false .(a|b).\)$' 2
if [ "$took" -gt 10 ]; then fail "a launch agent that fails: $took s, want at most 10" "$tmp/out"; fi

# The session key. From node 0, against node 3's daemon: CAF's plain middleman, another
# session's key (a peer, then pmixrun itself), raw garbage, then the control with the
# session's key (its plan must run: the test of the others can fail); then the job itself.
"$PMIXD" credentials "$tmp/otherkey" >/dev/null
mkdir "$tmp/marks"
cat >"$tmp/attack.sh" <<ATTACK
set -u
last=\${MULTINODE_DAEMONS##*,}
for ns in \$MULTINODE_NAMESPACES; do
  echo "listening in \$ns: \$(ip netns exec "\$ns" ss -Hltn | awk '{print \$4}' | sort | tr '\\n' ' ')"
done
"$intruder" plain "\$last" "$tmp/marks/plain"
"$intruder" anonymous "\$last" "$tmp/marks/anonymous"
"$intruder" tls "$tmp/otherkey" "\$last" "$tmp/marks/otherkey"
timeout 60 "$PMIXRUN" --daemons "\$last" --credentials "$tmp/otherkey" -n 1 /bin/sh -c "touch $tmp/marks/pmixrun"
echo "pmixrun with another key: status \$?"
"$intruder" garbage "\$last"
"$intruder" tls "\$MULTINODE_KEY" "\$last" "$tmp/marks/control"
echo "control: status \$?"
ATTACK
MULTINODE_VERBOSE=1 MULTINODE_BEFORE="sh $tmp/attack.sh" PMIXRUN_ARGS="--timeout 60" run 4 2 "$client" putget; st=$?
expect "the session key: only its holders reach a daemon, which keeps serving" $st 0 \
  "$tmp/out" '^intruder: no handle: ' 3 "$tmp/out" "^intruder: got the daemon's handle\$" 1 \
  "$tmp/out" '^pmixrun: cannot reach the daemon at 10\.77\.0\.4:[0-9]+: .*same session key' 1 \
  "$tmp/out" '^pmixrun with another key: status 1$' 1 \
  "$tmp/out" '^intruder: garbage sent on 3 connections$' 1 \
  "$tmp/out" "^intruder: $tmp/marks/control made\$" 1 "$tmp/out" '^control: status 3$' 1 \
  "$tmp/out" '^OK putget rank=[0-7] node=[0-3]$' 8 "$tmp/out" '^FAIL' 0
for mark in plain anonymous otherkey pmixrun; do
  if [ -e "$tmp/marks/$mark" ]; then fail "the session key: the daemon ran the plan of '$mark'" "$tmp/out"; fi
done
# Node 3's daemon logs each refused connection with OpenSSL's reason (CAF reports none):
# plain BASP and random bytes, anonymous TLS, another session's key (intruder, then
# pmixrun's retries).
for want in 'wrong version number:2' 'peer did not return a certificate:1' 'alert unknown ca:2'; do
  n=$(grep -cE "^pmixd: refused a TLS connection from .*: error:.*${want%:*}\$" "$tmp/out")
  if [ "$n" -lt "${want##*:}" ]; then fail "the session key: $n refusals logged for '${want%:*}', want at least ${want##*:}" "$tmp/out"; fi
done
for k in 0 1 2 3; do
  # Its node's address, and the loopback port where its PMIx server serves
  # processes linked with OpenPMIx (issue 35; other nodes cannot reach it).
  if ! grep -qE "^listening in $MULTINODE_TAG-$k: 10\.77\.0\.$((k + 1)):[0-9]+ (127\.0\.0\.1:[0-9]+ )?\$" "$tmp/out"; then
    fail "the daemon of node $k does not listen on its node's address (and loopback) only" "$tmp/out"
  fi
done

# pmixrun --hosts: a fresh key, handed to each daemon on its stdin, gone at the end.
MULTINODE_AGENT=1 PMIXRUN_ARGS="--timeout 60 --verbose" run 4 1 /bin/true; st=$?
expect "pmixrun --hosts hands the session key over stdin" $st 0 \
  "$tmp/out" '^pmixrun: starting ip netns exec .* --credentials-stdin --announce --lifeline$' 4 \
  "$tmp/out" 'PRIVATE KEY|BEGIN' 0 \
  "$tmp/out" "^pmixrun: the pmixd on $MULTINODE_TAG-[0-3] listens on 10\.77\.0\.[1-4]:[0-9]+\$" 4
left=$(find "$tmp" -maxdepth 1 -name '*credentials*' | tr '\n' ' ')
if [ -n "$left" ]; then fail "pmixrun --hosts left key directories: $left"; fi

# Refusals, at once and with a message.
mkdir -m 700 "$tmp/emptykey"
for args in "--listen 127.0.0.1:0" "--credentials $tmp/emptykey --listen 127.0.0.1:0"; do
  # shellcheck disable=SC2086
  timeout 10 "$PMIXD" $args >"$tmp/out" 2>&1; st=$?
  expect "pmixd $args refuses to start" $st 2 "$tmp/out" '^pmixd: (give the session key|refusing to start)' 1
done
"$PMIXD" credentials "$tmp/openkey" >/dev/null
chmod 644 "$tmp/openkey/key.pem"
timeout 10 "$PMIXD" --credentials "$tmp/openkey" --listen 127.0.0.1:0 >"$tmp/out" 2>&1; st=$?
expect "pmixd refuses a key others may read" $st 2 "$tmp/out" 'key.pem: the key must be readable by its owner only' 1
echo "not a key" | timeout 10 "$PMIXD" --credentials-stdin --listen 127.0.0.1:0 >"$tmp/out" 2>&1; st=$?
expect "pmixd refuses garbage on stdin" $st 2 "$tmp/out" '^pmixd: refusing to start: the session key from stdin: ' 1
"$PMIXD" credentials "$tmp/newkey" >/dev/null
timeout 10 "$PMIXRUN" --daemons 127.0.0.1:1 -n 1 /bin/true >"$tmp/out" 2>&1; st=$?
expect "pmixrun --daemons without a key" $st 2 "$tmp/out" '^pmixrun: --daemons needs --credentials DIR' 1
for bad in 1 3601 ten; do
  PMIX_CXX_DAEMON_PEER_TIMEOUT_S=$bad timeout 10 "$PMIXD" --credentials "$tmp/newkey" --listen 127.0.0.1:0 \
    >"$tmp/out" 2>&1; st=$?
  expect "pmixd refuses PMIX_CXX_DAEMON_PEER_TIMEOUT_S=$bad" $st 2 \
    "$tmp/out" "^pmixd: refusing to start: PMIX_CXX_DAEMON_PEER_TIMEOUT_S='$bad' must be a number from 2 to 3600\$" 1
  PMIX_CXX_DAEMON_PEER_TIMEOUT_S=$bad timeout 10 "$PMIXRUN" --daemons 127.0.0.1:1 --credentials "$tmp/newkey" \
    -n 1 /bin/true >"$tmp/out" 2>&1; st=$?
  expect "pmixrun --daemons refuses PMIX_CXX_DAEMON_PEER_TIMEOUT_S=$bad" $st 2 \
    "$tmp/out" "^pmixrun: PMIX_CXX_DAEMON_PEER_TIMEOUT_S='$bad' must be a number from 2 to 3600\$" 1
done
if [ "$(stat -c %a "$tmp/newkey") $(stat -c %a "$tmp/newkey/key.pem") $(stat -c %a "$tmp/newkey/cert.pem")" != "700 600 600" ]; then
  fail "pmixd credentials: modes $(stat -c %a "$tmp/newkey" "$tmp/newkey/key.pem" "$tmp/newkey/cert.pem" | tr '\n' ' '), want 700 600 600"
fi

# Nothing is left behind.
if ip netns list | grep -q "^$MULTINODE_TAG-"; then
  fail "network namespaces left: $(ip netns list | grep "^$MULTINODE_TAG-" | tr '\n' ' ')"
fi

if [ $failures -ne 0 ]; then
  echo "$failures case(s) failed"
  exit 1
fi
echo "all multinode cases passed"
