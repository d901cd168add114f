#!/usr/bin/env bash
# The command-line tools (docs/tools.md) against a real pmixrun job: two event_listener
# processes that stay up until an event tells them to stop. pmix_info, pps, pquery and pevent
# each find the server (by pmixrun's pid, by the server's namespace, as the system server),
# and each says clearly, with exit status 3, when there is no server to find.
set -uo pipefail
pmixrun=${PMIXRUN:-tools/pmixrun/pmixrun}
listener=${EVENT_LISTENER:-tests/tools/event_listener}
cli=${PMIX_CLI_DIR:-tools/cli}   # the tools, or copies of them built against another library
pmix_info=$cli/pmix_info
pps=$cli/pps
pquery=$cli/pquery
pevent=$cli/pevent
tmp=$(mktemp -d /tmp/clit.XXXXXX)
export TMPDIR=$tmp   # servers leave their rendezvous files here; short socket paths
unset PMIX_SERVER_TMPDIR PMIX_SYSTEM_TMPDIR PMIX_CXX_SERVER_URI PMIX_SERVER_URI41 PMIX_SERVER_URI4 PMIX_NAMESPACE
server=""
cleanup() {
  [ -n "$server" ] && kill "$server" 2>/dev/null
  rm -rf "$tmp"
}
trap cleanup EXIT
failures=0
fail() {
  echo "FAIL $1"
  shift
  for f in "$@"; do echo "--- $(basename "$f"):"; cat "$f"; done
  failures=$((failures + 1))
}
# run NAME WANT_STATUS TOOL ARGS...: runs a tool (stdout in $tmp/o, stderr in $tmp/e) with a
# bound against hangs, and checks its exit status.
run() {
  local name=$1 want=$2
  shift 2
  timeout 60 "$@" >"$tmp/o" 2>"$tmp/e"
  local st=$?
  if [ "$st" != "$want" ]; then
    fail "$name: exit status $st, expected $want" "$tmp/o" "$tmp/e"
    return 1
  fi
  return 0
}
# has NAME FILE PATTERN...: every extended regex matches a line of FILE.
has() {
  local name=$1 file=$2
  shift 2
  for p in "$@"; do
    if ! grep -qE -- "$p" "$file"; then
      fail "$name: '$p' not in $(basename "$file")" "$tmp/o" "$tmp/e"
      return 1
    fi
  done
  echo "ok   $name"
}
# lacks NAME FILE PATTERN: no line of FILE matches.
lacks() {
  if grep -qE -- "$3" "$2"; then fail "$1: '$3' in $(basename "$2")" "$2"; return 1; fi
  echo "ok   $1"
}

# ---- Without a server ----------------------------------------------------------------------

for tool in $pmix_info $pps $pquery $pevent; do
  name=$(basename "$tool")
  run "$name --help" 0 "$tool" --help &&
    has "$name --help" "$tmp/o" "^usage: $name " '--pid PID' '--namespace NS' '--system-server'
done

run "pquery without a key is a usage error" 2 $pquery && has "pquery without a key" "$tmp/e" 'no query key'
run "pevent without a status is a usage error" 2 $pevent && has "pevent without a status" "$tmp/e" 'no event STATUS'
run "pevent with an unknown status name" 2 $pevent PMIX_NO_SUCH_STATUS &&
  has "pevent with an unknown status name" "$tmp/e" 'neither a status number nor a status name'
run "pps with an unknown option" 2 $pps --bogus && has "pps with an unknown option" "$tmp/e" "unknown option '--bogus'"
run "a bad --pid" 2 $pps --pid abc && has "a bad --pid" "$tmp/e" 'needs a process id'
run "pmix_info with an unknown level" 2 $pmix_info --level nope && has "pmix_info --level nope" "$tmp/e" 'unknown level'

# pmix_info needs no server for the library's own levels.
run "pmix_info without a server" 0 $pmix_info &&
  has "pmix_info without a server: version, build, client/server/tool attributes" "$tmp/o" \
    '^PMIx library +PMIx-CXX ' '^Library file +/.*libpmix\.so\.2$' '^Built for headers +4\.2\.2 ' \
    '^Stable ABI +0\.0$' '^Client functions \(this library\):$' '^  PMIx_Init$' \
    '^  PMIx_Fence$' '^    PMIX_COLLECT_DATA +pmix\.collect +PMIX_BOOL$' '^Server functions' '^Tool functions' &&
  lacks "pmix_info without a server shows no host level" "$tmp/o" '^Host functions'
run "pmix_info --function names an unknown function" 1 $pmix_info --function PMIx_No_such_function && echo "ok   pmix_info --function names an unknown function"

mkdir "$tmp/empty"
for tool in "$pmix_info --level host" "$pps" "$pquery PMIX_QUERY_NAMESPACES" "$pevent -3101"; do
  name=${tool%% *}
  name=$(basename "$name")
  # shellcheck disable=SC2086
  run "$name: no server in an empty directory" 3 $tool --tmpdir "$tmp/empty" &&
    has "$name: no server in an empty directory" "$tmp/e" "^$name: no PMIx server found on this node \(rendezvous files in $tmp/empty\)"
  # shellcheck disable=SC2086
  run "$name: a pid that is no server" 3 $tool --pid $$ &&
    has "$name: a pid that is no server" "$tmp/e" "^$name: no PMIx server found running as process $$"
done
run "pps: no system server" 3 $pps --system-server && has "pps: no system server" "$tmp/e" 'no PMIx server found of the system'
run "pquery: a URI file that is not there" 3 $pquery --uri "file:$tmp/none" PMIX_QUERY_NAMESPACES &&
  has "pquery: a URI file that is not there" "$tmp/e" 'cannot read a server URI'

# ---- A running job -------------------------------------------------------------------------

stop=-3999
$pmixrun --system-server --timeout 120 -n 2 "$listener" $stop 100 >"$tmp/job.out" 2>"$tmp/job.err" &
server=$!
nspace=pmixrun.$server
for _ in $(seq 600); do
  [ "$(grep -c '^READY' "$tmp/job.out")" = 2 ] && break
  kill -0 "$server" 2>/dev/null || break
  sleep 0.1
done
if [ "$(grep -c '^READY' "$tmp/job.out")" != 2 ]; then
  fail "the job did not start" "$tmp/job.out" "$tmp/job.err"
  exit 1
fi
pid0=$(sed -nE 's/^READY rank=0 pid=([0-9]+) .*/\1/p' "$tmp/job.out")
pid1=$(sed -nE 's/^READY rank=1 pid=([0-9]+) .*/\1/p' "$tmp/job.out")
rows=("^ +0 +$pid0 +0 +RUNNING +[^ ]+ +.*event_listener$" "^ +1 +$pid1 +0 +RUNNING +[^ ]+ +.*event_listener$")

run "pps --pid" 0 $pps --pid $server &&
  has "pps --pid lists the job and its processes" "$tmp/o" "^JOB $nspace  size 2  command .*event_listener $stop 100$" "${rows[@]}"
run "pps --namespace" 0 $pps --namespace pmixrun-server.$server &&
  has "pps --namespace (the server's) finds the same" "$tmp/o" "^JOB $nspace " "${rows[@]}"
run "pps --system-server" 0 $pps --system-server &&
  has "pps --system-server finds the same" "$tmp/o" "^JOB $nspace " "${rows[@]}"
run "pps by default (the only server of the node)" 0 $pps "$nspace" &&
  has "pps NAMESPACE, found by default" "$tmp/o" "^JOB $nspace " "${rows[@]}"
run "pps --pid beside a launcher's address" 0 env PMIX_SERVER_URI41="x.0;uds://$tmp/no-such-socket" $pps --pid $server &&
  has "pps --pid wins over the launcher's address in the environment" "$tmp/o" "^JOB $nspace " "${rows[@]}"
run "pps of a job the server has not" 1 $pps --pid $server no.such.job &&
  has "pps of a job the server has not" "$tmp/e" '^pps: the server has no job no\.such\.job$'

run "pquery PMIX_QUERY_NAMESPACES" 0 $pquery --pid $server PMIX_QUERY_NAMESPACES &&
  has "pquery PMIX_QUERY_NAMESPACES" "$tmp/o" "^PMIX_QUERY_NAMESPACES \(pmix\.qry\.ns\): $nspace$"
run "pquery a key with a qualifier" 0 $pquery --pid $server --qualifier "PMIX_NSPACE=$nspace" pmix.job.size &&
  has "pquery a key (given as its string) with a qualifier" "$tmp/o" '^PMIX_JOB_SIZE \(pmix\.job\.size\): 2$'
run "pquery the process table" 0 $pquery --system-server -q "pmix.nspace=$nspace" PMIX_QUERY_PROC_TABLE &&
  has "pquery the process table" "$tmp/o" '^PMIX_QUERY_PROC_TABLE \(pmix\.qry\.ptable\): array of 2 PMIX_PROC_INFO$' \
    "^  $nspace:0 pid $pid0 state RUNNING exit 0 " "^  $nspace:1 pid $pid1 state RUNNING exit 0 "
run "pquery an unknown key" 1 $pquery --pid $server pmix.no.such.key &&
  has "pquery an unknown key is a clear error" "$tmp/e" \
    '^pquery: pmix\.no\.such\.key: no answer: the server does not know it \(the query.s status: PMIX_ERR_NOT_FOUND\)$'
run "pquery a known and an unknown key" 1 $pquery --pid $server PMIX_QUERY_NAMESPACES pmix.no.such.key &&
  has "pquery a known and an unknown key: the answer and the error" "$tmp/o" "^PMIX_QUERY_NAMESPACES .*: $nspace$" &&
  has "pquery a known and an unknown key: the error" "$tmp/e" '^pquery: pmix\.no\.such\.key: no answer'

run "pmix_info --pid" 0 $pmix_info --pid $server &&
  has "pmix_info --pid: the host's registered attributes too" "$tmp/o" \
    '^PMIx library +PMIx-CXX ' '^Client functions' \
    '^Host functions \(registered by the server.s host\):$' '^  PMIx_Query_info$' \
    '^    PMIX_QUERY_PROC_TABLE +pmix\.qry\.ptable +PMIX_DATA_ARRAY$' '^  PMIx_Log$' \
    '^    PMIX_LOG_STDOUT +pmix\.log\.stdout +PMIX_STRING$' '^  PMIx_IOF_pull$' '^  PMIx_IOF_push$' \
    '^    PMIX_IOF_COMPLETE +pmix\.iof\.cmp +PMIX_BOOL$' '^  PMIx_Allocation_request$' \
    '^    PMIX_ALLOC_NUM_NODES +pmix\.alloc\.nnodes +PMIX_UINT64$' '^    PMIX_ALLOC_TIME +pmix\.alloc\.time +PMIX_UINT32$' \
    '^  PMIx_Group_construct$' '^    PMIX_GROUP_ASSIGN_CONTEXT_ID +pmix\.grp\.actxid +PMIX_BOOL$'
run "pmix_info --level host --functions" 0 $pmix_info --system-server --level host --functions &&
  has "pmix_info --functions of the host" "$tmp/o" '^Host functions' '^  PMIx_Query_info$' '^  PMIx_Spawn$' &&
  lacks "pmix_info --level host shows only that level" "$tmp/o" '^Client functions'

# Events: the listeners print each event they get.
run "pevent with data" 0 $pevent --pid $server --info cli.test.msg=hello --info cli.test.count=uint32:7 -3101 &&
  has "pevent reports what it sent" "$tmp/o" '^pevent: -3101 sent to range session$'
run "pevent to one process" 0 $pevent --namespace pmixrun-server.$server --target "$nspace:1" -3102 && echo "ok   pevent to one process"
run "pevent by status name" 0 $pevent --pid $server ERR_PROC_ABORTED &&
  has "pevent by status name" "$tmp/o" '^pevent: PMIX_ERR_PROC_ABORTED \(-7\) sent to range session$'
run "pevent for non-default handlers only" 0 $pevent --pid $server --non-default -3103 && echo "ok   pevent for non-default handlers only"
run "pevent stops the job" 0 $pevent --system-server $stop && echo "ok   pevent stops the job"
# The listeners exit on the stop event; pmixrun ends with them.
for _ in $(seq 600); do kill -0 "$server" 2>/dev/null || break; sleep 0.1; done
wait "$server"
st=$?
server_pid=$server
server=""
if [ $st != 0 ]; then fail "the job ended with status $st" "$tmp/job.out" "$tmp/job.err"; fi
out=$tmp/job.out
for r in 0 1; do
  has "rank $r got the event with its data" "$out" \
    "^EVENT rank=$r status=-3101 source=pmixrun-server\.$server_pid\.tool\.[0-9]+:0 cli\.test\.msg=hello cli\.test\.count=7$"
  has "rank $r got the event named by its status name" "$out" "^EVENT rank=$r status=-7 "
  has "rank $r got the stop event" "$out" "^EVENT rank=$r status=$stop "
  lacks "rank $r's default handler did not get the non-default event" "$out" "^EVENT rank=$r status=-3103 "
done
has "the targeted event reached rank 1" "$out" '^EVENT rank=1 status=-3102 '
lacks "the targeted event did not reach rank 0" "$out" '^EVENT rank=0 status=-3102 '

run "pps after the server ended" 3 $pps --pid $server_pid &&
  has "pps after the server ended" "$tmp/e" "no PMIx server found running as process $server_pid"
leftover=$(find "$tmp" -maxdepth 1 -name 'pmix.*' | wc -l)
[ "$leftover" = 0 ] && echo "ok   the server removed its rendezvous files" ||
  fail "rendezvous files left behind: $(ls "$tmp")"

echo "$failures failures"
[ $failures = 0 ]
