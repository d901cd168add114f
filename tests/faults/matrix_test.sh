#!/bin/sh
# The fault matrix (issue 18, docs/fault-injection.md): fault kinds x
# lifecycle steps, each cell with a few seeds, under pmixrun with real
# processes and sockets. Every cell must end (never hang), every client call
# must return a status (fault_client exits 4 on silence), and pmixrun's
# invariant checker must say "faults: ok" (exit 0). Then the regressions:
# one case per bug the plane found, named after its seed.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
PMIXRUN=${PMIXRUN:-$here/tools/pmixrun/pmixrun}
CLIENT=${CLIENT:-$here/tests/faults/fault_client}
export PMIX_CXX_SERVER_LIBRARY=${PMIX_CXX_SERVER_LIBRARY:-$here/api/libpmix-server.so.2}
export FAULT_CLIENT_WATCHDOG=20
failures=0
cells=0
out=${TEST_TMPDIR:-/tmp}/fault_matrix.$$
run() {  # run NAME SEED PLAN
  cells=$((cells + 1))
  timeout 90 "$PMIXRUN" -n 3 --timeout 40 --faults "$3" --seed "$2" "$CLIENT" >"$out" 2>&1
  rc=$?
  if [ $rc -ne 0 ] || ! tail -1 "$out" | grep -q "faults: ok" || grep -q "^SILENT" "$out"; then
    echo "FAIL $1 (seed $2, plan '$3', exit $rc):"
    grep -v "^op .*PMIX_SUCCESS" "$out" | tail -20
    failures=$((failures + 1))
  else
    echo "ok   $1 seed $2: $(grep -c '^pmixrun: faults: injected' "$out") faults"
  fi
}

# A tool (pps) attaching while faults hit it: rank 0 runs it between the
# fences; it must have run and ended (its own status may be a failure).
run_tool() {  # run_tool NAME SEED PLAN
  FAULT_CLIENT_TOOL=$PPS run "$@"
  if ! grep -q "^op tool rank=0 exit=" "$out"; then
    echo "FAIL $1 (seed $2): the tool did not run"
    failures=$((failures + 1))
  fi
}
PPS=${PPS:-$here/tools/cli/pps}

steps="init commit fence get finalize"
for seed in 1 2 3; do
  rank=$((seed % 3))
  for step in $steps; do
    run "drop:$step" $seed "drop:$step:rank=$rank:n=1"
    run "delay:$step" $seed "delay:$step:rank=$rank:ms=$((seed * 7))"
    run "dup:$step" $seed "dup:$step:rank=$rank:n=1"
    run "reorder:$step" $seed "reorder:$step:rank=$rank"
    run "cut:$step" $seed "cut:$step:rank=$rank:n=1"
    run "kill:peer:$step" $seed "kill:peer:at=$step:rank=$rank:n=1"
    run "kill:rank:$step" $seed "kill:rank:at=$step:rank=$rank:n=1"
    run "kill:nspace:$step" $seed "kill:nspace:at=$step:rank=$rank:n=1"
  done
  run "cut:init_ack" $seed "cut:init_ack:rank=$rank"
  run "kill:peer:init_ack" $seed "kill:peer:at=init_ack:rank=$rank"
  run "kill:rank:init_ack" $seed "kill:rank:at=init_ack:rank=$rank"
  # The rank fails once it has answered a connect, before its peer has the
  # answer (no peer monitors its rank: the rank's destructor tells it).
  run "kill:rank:connect_answer" $seed "kill:rank:at=connect_answer:rank=$rank"
  run "kill:nspace:init_ack" $seed "kill:nspace:at=init_ack:rank=$rank"
  for upcall in client_connected client_finalized direct_modex; do
    run "fail:$upcall" $seed "fail:$upcall:rank=$rank"
    run "late:$upcall" $seed "late:$upcall:rank=$rank:ms=$((seed * 20))"
    run "twice:$upcall" $seed "twice:$upcall:rank=$rank"
    run "timeout:$upcall" $seed "timeout:$upcall:rank=$rank:ms=50"
  done
  run "random" $seed "random:rate=0.2:kinds=delay,dup,reorder,cut,kill,fail,late,twice"
  # Tool attach: faults on the tool's query (and the host's answer to it) and
  # its tool_connected up-call.
  for plan in "drop:query:n=1" "delay:query:ms=$((seed * 10))" "dup:query" "cut:query:n=1" \
      "fail:query" "late:query:ms=$((seed * 20))" "twice:query" \
      "kill:peer:at=query:n=1" "kill:rank:at=query:n=1" "kill:nspace:at=query:n=1" \
      "fail:tool_connected" "late:tool_connected:ms=$((seed * 20))" "twice:tool_connected" \
      "timeout:tool_connected:ms=50" "random:rate=0.2:kinds=delay,dup,reorder,fail,late,twice"; do
    run_tool "tool attach: $plan" $seed "$plan"
  done
  # Host deregistration: a rank's last messages still in flight (delayed,
  # held, duplicated) when pmixrun deregisters its clients and namespace.
  run "deregistration: delay:commit" $seed "delay:commit:rank=$rank:n=2:ms=400"
  run "deregistration: reorder:commit" $seed "reorder:commit:rank=$rank:n=2"
  run "deregistration: dup:finalize" $seed "dup:finalize:rank=$rank"
  run "deregistration: delay:finalize" $seed "delay:finalize:rank=$rank:ms=$((seed * 30))"
  run "deregistration: kill:rank:finalize" $seed "kill:rank:at=finalize:rank=$rank;delay:commit:n=2:ms=200"
  # Server finalize: a commit delayed past the job's end is still in the
  # plane's hands when pmixrun calls PMIx_server_finalize.
  run "finalize: delay:commit" $seed "delay:commit:rank=$rank:n=2:ms=5000"
  run "finalize: all delayed" $seed "delay:commit:n=2:ms=4000;late:client_finalized:rank=$rank:ms=$((seed * 50))"
done

# Regressions, each named after the seed that found it.
run_tool "regression seed 24 (a held fence's flush came due while the loop ran actors, and waited for a socket event)" 24 \
  "random:rate=0.2:kinds=delay,dup,reorder,fail,late,twice"
FAULT_CLIENT_TOOL=$PPS run "regression seed 10 (a host answering a tool's query twice answered the tool twice)" 10 \
  "twice:query:nspace=pmixrun-server.{pid}.tool.0"
run "regression seed 7 (a failed peer left its socket open)" 7 "kill:peer:at=fence:rank=1"
run "regression seed 7 (a get waited for a dead rank)" 7 "kill:peer:at=init_ack:rank=2"
run "regression seed 1 (a process whose connect was lost ended unknown to the server)" 1 "drop:init:rank=1:n=1"
run "regression seed 7 (a failed rank actor took its namespace down)" 7 "kill:rank:at=fence:rank=1"
run "regression seed 7 (clients of a failed namespace actor waited forever)" 7 "kill:nspace:at=get:rank=0"
# A get waiting in a peer actor (for the end of its client's commit hold)
# when the fault plane killed that actor at the late commit: CAF does not
# answer an ended actor's promises, so the get waited for ever (about 1 run
# in 3 before the fix; CI's "random" seed 3 found it).
for seed in 1 2 3; do
  run "regression seed $seed (a get waited in a peer the fault plane killed)" $seed "kill:peer:at=commit:rank=1:n=2"
  # The same for a rank actor killed while a get waited in it (or in its
  # peer): the namespace answers the gets it handed that rank.
  run "regression seed $seed (a get waited in a rank actor the fault plane killed)" $seed "kill:rank:at=get:rank=0:n=1"
done

# Replay: the same plan and seed inject the same faults (same set hash).
h1=$(timeout 90 "$PMIXRUN" -n 3 --timeout 40 --faults "random:rate=0.3:kinds=delay,dup,fail,late" --seed 11 "$CLIENT" 2>&1 | grep -o "set hash [0-9a-f]*")
h2=$(timeout 90 "$PMIXRUN" -n 3 --timeout 40 --faults "random:rate=0.3:kinds=delay,dup,fail,late" --seed 11 "$CLIENT" 2>&1 | grep -o "set hash [0-9a-f]*")
if [ -z "$h1" ] || [ "$h1" != "$h2" ]; then
  echo "FAIL replay: '$h1' then '$h2'"
  failures=$((failures + 1))
else
  echo "ok   replay: $h1"
fi

# The checker is not blind: a plan that loses the reply's request of a
# client that waits forever is caught (the job times out).
timeout 90 "$PMIXRUN" -n 1 --timeout 3 --faults "delay:fence:ms=100000" --seed 1 "$CLIENT" >"$out" 2>&1
rc=$?
if [ $rc -ne 3 ] || ! tail -1 "$out" | grep -q "faults: FAILED" || ! grep -q "replay: .*--faults 'delay:fence:ms=100000' --seed 1" "$out"; then
  echo "FAIL a hanging client is not reported (exit $rc)"; tail -5 "$out"
  failures=$((failures + 1))
else
  echo "ok   a hanging client is reported, with its replay command"
fi
rm -f "$out"
echo "$cells cells, $failures failures"
[ $failures -eq 0 ]
