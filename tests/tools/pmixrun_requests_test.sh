#!/usr/bin/env bash
# The requests pmixrun's processes and tools hand their host (tools/pmixrun/README.md, "Behaviour
# where the standard leaves a choice"), each under a real `pmixrun -n 2` of script_client
# processes (tests/e2e/script_client.cpp; "@<rank>:<step>" runs a step in one rank only):
#  - a tool pulls rank 0's stdout while the job runs and gets exactly what rank 0 printed;
#  - rank 0 pushes lines to rank 1's stdin and ends it; pmixrun's own stdin reaches rank 0
#    (--stdin: every rank, or none);
#  - allocation requests answered as a one-node launcher can;
#  - a group with a context ID among the ranks, and one formed by invitation, with the
#    membership events;
#  - a credential issued and validated by the server (uid/gid, altered, expired), and a
#    heartbeat that stops raising the monitor's event.
#
# Run from the Bazel runfiles directory; PMIXRUN and SCRIPT_CLIENT may name other builds.
set -uo pipefail
pmixrun=${PMIXRUN:-tools/pmixrun/pmixrun}
client=${SCRIPT_CLIENT:-tests/e2e/script_client}
tmp=$(mktemp -d /tmp/pmixrunr.XXXXXX)   # not TEST_TMPDIR: socket paths must stay short
export TMPDIR=$tmp   # rendezvous files (the tool finds pmixrun here) and session directories
unset PMIX_SERVER_TMPDIR PMIX_SYSTEM_TMPDIR PMIX_CXX_SERVER_URI PMIX_SERVER_URI41 PMIX_SERVER_URI4 PMIX_NAMESPACE PMIX_RANK
job=""
cleanup() {
  [ -n "$job" ] && kill "$job" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
failures=0

fail() { echo "FAIL $1"; shift; for f in "$@"; do echo "---- $(basename "$f")"; head -c 4000 "$f"; echo; done; failures=$((failures + 1)); }

# run N [pmixrun options --] STEPS...: pmixrun -n N of script_client with those steps, stdin
# from $tmp/in (empty unless written), output in $tmp/out and $tmp/err; $st
run() {
  local n=$1
  shift
  local opts=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  [ -e "$tmp/in" ] || : >"$tmp/in"
  timeout -k 5 120 "$pmixrun" -n "$n" --timeout 90 "${opts[@]}" "$client" "$@" <"$tmp/in" >"$tmp/out" 2>"$tmp/err"
  st=$?
}

# expect NAME FILE LINE...: every LINE is a whole line of FILE, and pmixrun ended with status 0
expect() {
  local name=$1 file=$2
  shift 2
  if [ "$st" != 0 ]; then fail "$name: pmixrun's exit status $st" "$tmp/out" "$tmp/err"; return 1; fi
  for line in "$@"; do
    if ! grep -qxF -- "$line" "$file"; then
      fail "$name: no line '$line' in $(basename "$file")" "$tmp/out" "$tmp/err"
      return 1
    fi
  done
  echo "ok   $name"
}

# ---- IOF: a tool pulls a running job's output ---------------------------------------------

# The ranks print nothing before the tool has pulled (wait_file); then rank 0 and rank 1 say
# different things on stdout and stderr.
rm -f "$tmp/go" "$tmp/ended"
"$pmixrun" -n 2 --timeout 90 --tag-output --nspace iof.pull "$client" "wait_file:$tmp/go" init \
  "@0:echo:out:rank 0 says hi" "@1:echo:out:rank 1 says hi" "echo:err:to stderr" finalize \
  </dev/null >"$tmp/job.out" 2>"$tmp/job.err" &
job=$!
# Its server is up (the tool can find it) once it has started the ranks.
for _ in $(seq 600); do
  [ -n "$(cat "/proc/$job/task/$job/children" 2>/dev/null)" ] && break
  kill -0 "$job" 2>/dev/null || break
  sleep 0.1
done
timeout -k 5 120 "$client" "tool_init_pid:$job" iof_pull:iof.pull:0:out iof_pull:no.such.job:0:all \
  iof_pull:iof.pull:7:out "touch:$tmp/go" "wait_iof_text:finalize PMIX_SUCCESS" "wait_file:$tmp/ended" \
  "iof_save:$tmp/pulled" >"$tmp/tool.out" 2>"$tmp/tool.err" &
tool=$!
wait "$job"
st=$?
job=""
touch "$tmp/ended"
wait "$tool"
sed -n 's/^\[1,0\]<stdout>://p' "$tmp/job.out" >"$tmp/rank0.out"
if [ "$st" != 0 ]; then
  fail "IOF pull: pmixrun's exit status $st" "$tmp/job.out" "$tmp/job.err" "$tmp/tool.out" "$tmp/tool.err"
elif ! grep -qx "tool_init_pid:[0-9]* PMIX_SUCCESS .*" "$tmp/tool.out" ||
     ! grep -qx "iof_pull:iof.pull:0:out PMIX_SUCCESS ref=[0-9]*" "$tmp/tool.out"; then
  fail "IOF pull: the tool did not connect and pull" "$tmp/tool.out" "$tmp/tool.err" "$tmp/job.err"
elif ! grep -qxF "iof_pull:no.such.job:0:all PMIX_ERR_NOT_FOUND" "$tmp/tool.out" ||
     ! grep -qxF "iof_pull:iof.pull:7:out PMIX_ERR_NOT_FOUND" "$tmp/tool.out"; then
  fail "IOF pull: a job or rank pmixrun does not run is not found" "$tmp/tool.out" "$tmp/tool.err"
elif [ "$(grep -c . "$tmp/rank0.out")" != 4 ] || ! grep -qxF "rank 0 says hi" "$tmp/rank0.out"; then
  fail "IOF pull: rank 0 did not print its 4 lines" "$tmp/job.out" "$tmp/job.err"
elif ! cmp -s "$tmp/pulled" "$tmp/rank0.out"; then
  fail "IOF pull: what the tool got differs from what rank 0 printed" "$tmp/pulled" "$tmp/rank0.out" "$tmp/tool.out"
elif ! grep -qE "^iof_save:$tmp/pulled PMIX_SUCCESS [0-9]+ 2/iof\.pull\.0$" "$tmp/tool.out"; then  # 2: PMIX_FWD_STDOUT_CHANNEL
  fail "IOF pull: payloads from other ranks or channels than rank 0's stdout" "$tmp/tool.out"
else
  echo "ok   IOF pull: a tool got exactly rank 0's stdout ($(wc -c <"$tmp/pulled") bytes), nothing of rank 1 or stderr"
fi

# ---- IOF: stdin --------------------------------------------------------------------------

printf 'line for rank 0\n' >"$tmp/in"
run 2 --nspace push -- init "@0:read_stdin:2" '@0:iof_push:1:hello from rank 0\n' "@0:iof_push:5:x" \
  '@0:iof_push:1:second line\n' "@0:iof_push_end:1" '@0:iof_push:1:too late\n' '@0:iof_push:0:x\n' \
  "@1:read_stdin:3" finalize
expect "stdin: pmixrun's stdin reaches rank 0 only, and ends there with it" "$tmp/out" \
  "read_stdin:2 PMIX_SUCCESS line for rank 0|<eof>" 'iof_push:0:x\n PMIX_ERR_IOF_COMPLETE'
expect "stdin: rank 0 pushes two lines to rank 1 and ends its input; rank 1 reads exactly those" "$tmp/out" \
  'iof_push:1:hello from rank 0\n PMIX_SUCCESS' 'iof_push:1:second line\n PMIX_SUCCESS' \
  "iof_push_end:1 PMIX_SUCCESS" "read_stdin:3 PMIX_SUCCESS hello from rank 0|second line|<eof>"
expect "stdin: a push to a rank the job has not is not found; after the end, it is complete" "$tmp/out" \
  "iof_push:5:x PMIX_ERR_NOT_FOUND" 'iof_push:1:too late\n PMIX_ERR_IOF_COMPLETE'

printf 'to all\n' >"$tmp/in"
run 2 --stdin all -- init read_stdin:2 finalize
expect "stdin: --stdin all copies pmixrun's stdin to every rank" "$tmp/out" \
  "read_stdin:2 PMIX_SUCCESS to all|<eof>" &&
  [ "$(grep -cxF "read_stdin:2 PMIX_SUCCESS to all|<eof>" "$tmp/out")" = 2 ] ||
  fail "stdin: --stdin all: not both ranks read it" "$tmp/out"

printf 'not for anyone\n' >"$tmp/in"
run 2 --stdin none -- init '@1:iof_push:0:pushed\n' "@1:iof_push_end:0" "@0:read_stdin:2" finalize
expect "stdin: --stdin none: rank 0 reads only what is pushed to it" "$tmp/out" \
  "read_stdin:2 PMIX_SUCCESS pushed|<eof>"
rm -f "$tmp/in"

# ---- Allocation ----------------------------------------------------------------------------

host=$(hostname)
cpus=$(nproc)
run 1 --nspace alloc -- init allocate:1:nodes=1:cpus=1:reqid=mine allocate:2:id=last:time=10 \
  allocate:1:nodes=2 "allocate:1:nodelist=$host,elsewhere" "allocate:1:nodelist=$host" \
  "allocate:1:cpus=$((cpus + 1))" allocate:1:time=100000 allocate:1:mem=1024 allocate:3:id=last \
  allocate:3:id=last allocate:2:id=last allocate:2:time=5 allocate:3:reqid=x allocate:9:nodes=1 finalize
grant="pmix.alloc.nnodes=1 pmix.alloc.nlist=$host pmix.alloc.ncpus=$cpus"
if grep -qE "^allocate:1:nodes=1:cpus=1:reqid=mine PMIX_SUCCESS pmix\.alloc\.id=pmixrun\.[0-9]+\.alloc\.1 pmix\.alloc\.reqid=mine $grant pmix\.alloc\.time=(8[0-9]|90)$" "$tmp/out" &&
   grep -qE "^allocate:2:id=last:time=10 PMIX_SUCCESS pmix\.alloc\.id=pmixrun\.[0-9]+\.alloc\.1 $grant pmix\.alloc\.time=10$" "$tmp/out" &&
   grep -qE "^allocate:1:nodelist=$host PMIX_SUCCESS pmix\.alloc\.id=pmixrun\.[0-9]+\.alloc\.2 $grant " "$tmp/out" &&
   grep -qE "^allocate:2:time=5 PMIX_SUCCESS pmix\.alloc\.id=pmixrun\.[0-9]+\.alloc\.0 $grant pmix\.alloc\.time=5$" "$tmp/out"; then
  expect "allocation: this node granted (new, extended, the job's own), with its name and $cpus CPUs" "$tmp/out"
else
  fail "allocation: the grants" "$tmp/out" "$tmp/err"
fi
expect "allocation: more than one node, another node, more CPUs or time than there are: out of resource" "$tmp/out" \
  "allocate:1:nodes=2 PMIX_ERR_OUT_OF_RESOURCE" "allocate:1:nodelist=$host,elsewhere PMIX_ERR_OUT_OF_RESOURCE" \
  "allocate:1:cpus=$((cpus + 1)) PMIX_ERR_OUT_OF_RESOURCE" "allocate:1:time=100000 PMIX_ERR_OUT_OF_RESOURCE"
expect "allocation: release of a grant, then it is gone; required memory and unknown directives are not supported" \
  "$tmp/out" "allocate:3:id=last PMIX_SUCCESS" "allocate:3:id=last PMIX_ERR_NOT_FOUND" \
  "allocate:2:id=last PMIX_ERR_NOT_FOUND" "allocate:3:reqid=x PMIX_SUCCESS" \
  "allocate:1:mem=1024 PMIX_ERR_NOT_SUPPORTED" "allocate:9:nodes=1 PMIX_ERR_NOT_SUPPORTED"

# ---- Groups --------------------------------------------------------------------------------

invited=-159 left=-160 accepted=-161 complete=-166
run 2 --nspace grp -- init group_construct:all:*:ctx "on_group_event:$invited" "on_group_event:$accepted" \
  "on_group_event:$complete" "on_group_event:$left" fence "@0:group_invite:team:1:ctx" \
  "@1:wait_group_event:$invited" "@1:group_join:team:0:accept" "@0:wait_group_event:$accepted" \
  "wait_group_event:$complete" "@1:group_leave:team" "@0:wait_group_event:$left" group_destruct:all finalize
ctx_all=$(sed -nE 's/^group_construct:all:\*:ctx PMIX_SUCCESS id=all members=\* ctx=([0-9]+)$/\1/p' "$tmp/out" | sort -u)
ctx_team=$(sed -nE 's/^group_(invite|join):team:[^ ]* PMIX_SUCCESS id=team members=0,1 ctx=([0-9]+)$/\2/p' "$tmp/out" | sort -u)
if [ "$(grep -c '^group_construct:all:\*:ctx PMIX_SUCCESS' "$tmp/out")" != 2 ] || [ "$(echo "$ctx_all" | wc -w)" != 1 ]; then
  fail "groups: both ranks construct 'all' with one context ID" "$tmp/out" "$tmp/err"
elif [ "$(grep -cE '^group_(invite|join):team:[^ ]* PMIX_SUCCESS' "$tmp/out")" != 2 ] ||
     [ "$(echo "$ctx_team" | wc -w)" != 1 ] || [ "$ctx_team" = "$ctx_all" ]; then
  fail "groups: the invited group has a context ID of its own, the same at both ranks" "$tmp/out" "$tmp/err"
else
  expect "groups: construct with a context ID ($ctx_all), invite/join ($ctx_team), the membership events, leave, destruct" \
    "$tmp/out" "wait_group_event:$invited PMIX_SUCCESS grp.0 id=team" \
    "wait_group_event:$accepted PMIX_SUCCESS grp.1 id=team" "wait_group_event:$complete PMIX_SUCCESS grp.0 id=team" \
    "group_leave:team PMIX_SUCCESS" "wait_group_event:$left PMIX_SUCCESS grp.1 id=team" \
    "group_destruct:all PMIX_SUCCESS" &&
    { [ "$(grep -cxF "wait_group_event:$complete PMIX_SUCCESS grp.0 id=team" "$tmp/out")" = 2 ] ||
      fail "groups: both members hear the construct complete" "$tmp/out"; } &&
    { [ "$(grep -cxF "group_destruct:all PMIX_SUCCESS" "$tmp/out")" = 2 ] ||
      fail "groups: both ranks destruct 'all'" "$tmp/out"; }
fi

# ---- Credentials and heartbeats ------------------------------------------------------------

alert=-109
run 2 --nspace sec -- init "on_event:$alert" "@0:credential:$tmp/cred" "@0:validate:$tmp/cred" \
  "@0:credential:$tmp/short:1" "@0:validate:$tmp/short" "@0:touch:$tmp/creds" "@1:wait_file:$tmp/creds" \
  "@1:validate:$tmp/cred" "@1:corrupt:$tmp/cred" "@1:validate:$tmp/cred" "@1:sleep:2500" \
  "@1:validate:$tmp/short" fence "@0:heartbeat:1:2" "@0:beats:5:200" "wait_event:$alert" finalize
who="uid=$(id -u) gid=$(id -g)"
if grep -qE "^credential:$tmp/cred PMIX_SUCCESS [1-9][0-9]*$" "$tmp/out"; then
  expect "credentials: issued to rank 0 and validated by the server for rank 0 and rank 1 ($who), 1 s lifetime" "$tmp/out" \
    "validate:$tmp/cred PMIX_SUCCESS $who type=pmix-cxx.hmac-sha256" "validate:$tmp/short PMIX_SUCCESS $who type=pmix-cxx.hmac-sha256" &&
    { [ "$(grep -cxF "validate:$tmp/cred PMIX_SUCCESS $who type=pmix-cxx.hmac-sha256" "$tmp/out")" = 2 ] ||
      fail "credentials: rank 1 validates rank 0's credential" "$tmp/out"; }
  expect "credentials: an altered one and an expired one are refused" "$tmp/out" \
    "corrupt:$tmp/cred PMIX_SUCCESS" "validate:$tmp/cred PMIX_ERR_INVALID_CRED" "validate:$tmp/short PMIX_ERR_INVALID_CRED"
else
  fail "credentials: no credential issued" "$tmp/out" "$tmp/err"
fi
expect "heartbeat: rank 0 stops beating; rank 0 and rank 1 hear the monitor's event from sec.0" "$tmp/out" \
  "heartbeat:1:2 PMIX_SUCCESS" "beats:5:200 PMIX_SUCCESS" &&
  { [ "$(grep -cxF "wait_event:$alert PMIX_SUCCESS sec.0" "$tmp/out")" = 2 ] ||
    fail "heartbeat: both ranks hear the event from sec.0" "$tmp/out" "$tmp/err"; }

exit $failures
