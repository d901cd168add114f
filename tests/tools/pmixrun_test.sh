#!/usr/bin/env bash
# The reference launcher as a user runs it: real jobs of the demo client.
set -uo pipefail
pmixrun=tools/pmixrun/pmixrun
demo=tools/demo/pmix_demo
tmp=$(mktemp -d /tmp/pmixrunt.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp   # short socket paths
failures=0
check() {  # check NAME EXPECTED_STATUS ACTUAL_STATUS [grep-pattern file]
  local name=$1 want=$2 got=$3
  if [ "$want" != "$got" ]; then
    echo "FAIL $name: exit status $got, expected $want"; failures=$((failures + 1)); return
  fi
  if [ $# -ge 5 ] && ! grep -q -- "$4" "$5"; then
    echo "FAIL $name: '$4' not in $5:"; cat "$5"; failures=$((failures + 1)); return
  fi
  echo "ok   $name"
}

timeout 120 $pmixrun -n 4 $demo >"$tmp/out" 2>"$tmp/err"; st=$?
check "4 ranks succeed" 0 $st "4 of 4 processes" "$tmp/err"
[ "$(grep -c 'checked 4 peers' "$tmp/out")" = 4 ] && echo "ok   every rank checked its peers" || { echo "FAIL peers"; failures=$((failures + 1)); }

timeout 120 $pmixrun -n 16 $demo --no-collect --rounds 2 >"$tmp/out" 2>"$tmp/err"; st=$?
check "16 ranks with direct modex" 0 $st "16 of 16 processes" "$tmp/err"

# A login shell's soft limit of 1,024 descriptors is too few for 300
# processes (about 4 of pmixrun's each: it stopped at 252); pmixrun raises
# it to the hard limit, as mpirun does. With the hard limit at 1,024 too it
# says so before the job fails.
timeout 300 /usr/bin/prlimit --nofile=1024:4096 $pmixrun -n 300 $demo >"$tmp/out" 2>"$tmp/err"; st=$?
check "300 ranks under a soft limit of 1,024 descriptors (hard 4,096)" 0 $st "300 of 300 processes" "$tmp/err"
timeout 300 /usr/bin/prlimit --nofile=1024:1024 $pmixrun -n 300 $demo >"$tmp/out" 2>"$tmp/err"; st=$?
[ $st -ne 0 ] && [ $st -ne 124 ] &&
  grep -q "^pmixrun: warning: 300 processes need about 1264 descriptors here, and this process may have 1024 " "$tmp/err" &&
  echo "ok   under a hard limit of 1,024 the job fails without hanging, after a warning" ||
  { echo "FAIL hard limit 1,024: status $st"; cat "$tmp/err"; failures=$((failures + 1)); }

timeout 120 $pmixrun -n 4 $demo --abort-rank 1 >"$tmp/out" 2>"$tmp/err"; st=$?
check "an abort's status is the job's" 42 $st "job aborted" "$tmp/err"

timeout 120 $pmixrun -n 4 $demo --crash-rank 2 >"$tmp/out" 2>"$tmp/err"; st=$?
[ $st -ne 0 ] && [ $st -ne 124 ] && echo "ok   a crashed rank fails the job without hanging" || { echo "FAIL crash: status $st"; failures=$((failures + 1)); }

timeout 120 $pmixrun -n 2 --timeout 1 /bin/sleep 100 >"$tmp/out" 2>"$tmp/err"; st=$?
[ $st -ne 0 ] && [ $st -ne 124 ] && grep -q timeout "$tmp/err" && echo "ok   --timeout ends a hanging job" || { echo "FAIL timeout: status $st"; failures=$((failures + 1)); }

timeout 120 $pmixrun -n 1 "$tmp/no-such-program" >"$tmp/out" 2>"$tmp/err"; st=$?
check "a missing program" 127 $st "cannot run" "$tmp/err"

timeout 120 $pmixrun -n 0 $demo >"$tmp/out" 2>"$tmp/err"; st=$?
check "a bad -n is refused" 2 $st "between 1 and" "$tmp/err"

# A program built against Debian's OpenPMIx as a user builds one (issue 35):
# it loads OpenPMIx's libpmix.so.2 and speaks OpenPMIx's protocol to
# pmixrun's server: init, job data, put, commit, fence, every peer's value.
if cc -O2 -o "$tmp/opmx" tests/e2e/openpmix_client.c $(pkg-config --cflags --libs pmix) 2>"$tmp/err"; then
  timeout 120 env -u LD_LIBRARY_PATH $pmixrun -n 3 "$tmp/opmx" >"$tmp/out" 2>"$tmp/err"; st=$?
  check "3 ranks linked with OpenPMIx 4.2.2" 0 $st "3 of 3 processes" "$tmp/err"
  n=$(grep -cE '^get:[0-2] SUCCESS hello-from-[0-2]$' "$tmp/out")
  [ "$n" = 6 ] && [ "$(grep -c '^finalize SUCCESS$' "$tmp/out")" = 3 ] &&
    [ "$(grep -cE '^lookup SUCCESS published-by-[0-2]$' "$tmp/out")" = 3 ] &&
    [ "$(grep -c 'a log line from OpenPMIx$' "$tmp/err")" = 3 ] &&
    echo "ok   each rank linked with OpenPMIx read both others' values, looked up a published one, logged, finalized" ||
    { echo "FAIL OpenPMIx ranks: $n values read"; cat "$tmp/out" "$tmp/err"; failures=$((failures + 1)); }
  # Direct modex: the fence collects nothing, so each get asks the server,
  # which asks the rank that put the value.
  timeout 120 env -u LD_LIBRARY_PATH $pmixrun -n 3 "$tmp/opmx" nocollect >"$tmp/out" 2>"$tmp/err"; st=$?
  check "3 ranks linked with OpenPMIx, direct modex" 0 $st "3 of 3 processes" "$tmp/err"
  n=$(grep -cE '^get:[0-2] SUCCESS hello-from-[0-2]$' "$tmp/out")
  [ "$n" = 6 ] && echo "ok   each read both others' values by direct modex" ||
    { echo "FAIL direct modex: $n values read"; cat "$tmp/out" "$tmp/err"; failures=$((failures + 1)); }
  # Events between two ranks linked with OpenPMIx: each notifies its
  # namespace, each receives an event from a rank of the job.
  timeout 120 env -u LD_LIBRARY_PATH $pmixrun -n 2 "$tmp/opmx" events -3001 -3001 >"$tmp/out" 2>"$tmp/err"; st=$?
  check "2 ranks linked with OpenPMIx notify each other" 0 $st "2 of 2 processes" "$tmp/err"
  [ "$(grep -cE '^event -3001 from pmixrun\.[0-9]+\.[01] text=from OpenPMIx$' "$tmp/out")" = 2 ] &&
    echo "ok   each received an event of the job, with its text" ||
    { echo "FAIL events:"; cat "$tmp/out" "$tmp/err"; failures=$((failures + 1)); }
  # PMIx_Spawn of 2 more (linked with OpenPMIx too): the spawner reads the
  # new job's size, each child its parent.
  timeout 120 env -u LD_LIBRARY_PATH $pmixrun -n 2 "$tmp/opmx" spawn >"$tmp/out" 2>"$tmp/err"; st=$?
  check "a rank linked with OpenPMIx spawns 2" 0 $st "2 of 2 processes of 1 spawned job" "$tmp/err"
  ns=$(sed -n 's/^spawn SUCCESS \(.*\)$/\1/p' "$tmp/out")
  [ -n "$ns" ] && grep -q '^child_size SUCCESS 2$' "$tmp/out" &&
    [ "$(grep -cE "^parent SUCCESS ${ns%.*}\.0$" "$tmp/out")" = 2 ] &&
    echo "ok   the spawner read the new job's size, each child its parent" ||
    { echo "FAIL spawn:"; cat "$tmp/out" "$tmp/err"; failures=$((failures + 1)); }
  # PMIx_Abort(7) from rank 1: the job ends with that status.
  timeout 120 env -u LD_LIBRARY_PATH $pmixrun -n 3 "$tmp/opmx" abort 1 7 >"$tmp/out" 2>"$tmp/err"; st=$?
  check "a rank linked with OpenPMIx aborts the job" 7 $st "called PMIx_Abort(7): OpenPMIx client aborts" "$tmp/err"
  # The rest of the API (job control, monitoring, credentials, groups,
  # allocation, fabric, IOF pull and delivery): the same binary on our
  # library must print the same lines, bar one. OpenPMIx 4.2.2's own
  # client reports success for a fabric registration its server refused
  # (its answer's handler passes on the unpacking's status), so that line
  # is compared apart.
  timeout 120 env -u LD_LIBRARY_PATH $pmixrun -n 2 "$tmp/opmx" extras >"$tmp/theirs" 2>"$tmp/err"; st=$?
  check "the rest of the API from ranks linked with OpenPMIx" 0 $st "2 of 2 processes" "$tmp/err"
  ours=$(cd api && pwd)
  # Under the asan and tsan configs our library is instrumented and this
  # program is not: it starts through a script that preloads the
  # sanitizer's runtime into it alone (pmixrun is instrumented itself).
  preload=$(tests/support/sanitizer_runtime.sh api/libpmix.so.2)
  opmx=$tmp/opmx
  if [ -n "$preload" ]; then
    printf '#!/bin/sh\nLD_PRELOAD=%s exec %s "$@"\n' "$preload" "$tmp/opmx" >"$tmp/opmx-ours"
    chmod +x "$tmp/opmx-ours"
    opmx=$tmp/opmx-ours
  fi
  timeout 120 env LD_LIBRARY_PATH="$ours" $pmixrun -n 2 "$opmx" extras >"$tmp/ours" 2>"$tmp/err2"; st=$?
  check "the same program on our library" 0 $st "2 of 2 processes" "$tmp/err2"
  grep -q '^fabric -47$' "$tmp/ours" && [ "$(grep -c '^fabric ' "$tmp/theirs")" = 2 ] &&
    diff <(grep -v '^fabric ' "$tmp/theirs" | sort) <(grep -v '^fabric ' "$tmp/ours" | sort) >"$tmp/diff" &&
    grep -qx 'iof_received_from 0 1' "$tmp/theirs" && grep -qx 'group_construct 0 context-id' "$tmp/theirs" &&
    grep -qx 'credential 0 nonempty' "$tmp/theirs" && [ "$(grep -cE '^[a-z_]+ 0( |$)' "$tmp/theirs")" -ge 20 ] &&
    echo "ok   job control, monitor, credentials, groups, allocation, IOF: as on our library" ||
    { echo "FAIL the rest of the API:"; cat "$tmp/diff" "$tmp/theirs" "$tmp/err"; failures=$((failures + 1)); }
  # OpenPMIx's own tools (Debian's libpmix-bin) find the job by pmixrun's
  # PID through its rendezvous file: pps lists it, pattrs prints the host's
  # attributes, pevent raises an event both ranks (linked with OpenPMIx
  # too) receive. (Debian's pquery and plookup 4.2.2 crash before reaching
  # any server: docs/hosts.md, "Mixed installs".)
  $pmixrun --timeout 90 -n 2 env -u LD_LIBRARY_PATH "$tmp/opmx" wait-event -3333 >"$tmp/out" 2>"$tmp/err" &
  job=$!
  for _ in $(seq 600); do [ "$(grep -c '^ready$' "$tmp/out")" = 2 ] && break; sleep 0.1; done
  timeout 60 env -u LD_LIBRARY_PATH /usr/bin/pps --pid $job >"$tmp/pps" 2>&1; pps_st=$?
  timeout 60 env -u LD_LIBRARY_PATH /usr/bin/pattrs --pid $job --host all >"$tmp/pattrs" 2>&1; pattrs_st=$?
  timeout 60 env -u LD_LIBRARY_PATH /usr/bin/pevent --pid $job --event -3333 --range 5 >"$tmp/pevent" 2>&1; pevent_st=$?
  wait $job; st=$?
  check "OpenPMIx's pps lists the job" 0 $pps_st "^Active nspaces: pmixrun\.$job\$" "$tmp/pps"
  # pattrs prints what pmixrun registered for each up-call (its attributes'
  # keys and types from our dictionary).
  check "OpenPMIx's pattrs lists the host's attributes" 0 $pattrs_st "^PMIx_Lookup:$" "$tmp/pattrs"
  grep -qE '^PMIX_TIMEOUT +pmix\.timeout +PMIX_INT ' "$tmp/pattrs" && grep -qE '^PMIX_WDIR +pmix\.wdir +PMIX_STRING ' "$tmp/pattrs" &&
    echo "ok   with each attribute's key and type" ||
    { echo "FAIL pattrs:"; cat "$tmp/pattrs"; failures=$((failures + 1)); }
  check "OpenPMIx's pevent raises an event" 0 $pevent_st
  check "the job ends after the event" 0 $st "2 of 2 processes" "$tmp/err"
  [ "$(grep -cE "^event -3333 from pmixrun-server\.$job\.tool\.[0-9]+\.0 " "$tmp/out")" = 2 ] &&
    echo "ok   both ranks received pevent's event, from the tool's namespace" ||
    { echo "FAIL pevent's event:"; cat "$tmp/out" "$tmp/err" "$tmp/pevent"; failures=$((failures + 1)); }
else
  echo "FAIL cannot build a program against Debian's OpenPMIx (libpmix-dev):"; cat "$tmp/err"; failures=$((failures + 1))
fi

# Debian's python3-pmix (OpenPMIx's binding, on Debian's libpmix.so.2), as a
# user runs it: /usr/bin/python3, nothing of ours on its paths.
timeout 120 env -u LD_LIBRARY_PATH -u PYTHONPATH $pmixrun -n 3 /usr/bin/python3 -W ignore \
  tests/tools/python3_pmix_client.py >"$tmp/out" 2>"$tmp/err"; st=$?
check "3 ranks of Debian's python3-pmix" 0 $st "3 of 3 processes" "$tmp/err"
[ "$(grep -cE '^ok [0-2]$' "$tmp/out")" = 3 ] && echo "ok   each python3-pmix rank read both others' values" ||
  { echo "FAIL python3-pmix ranks:"; cat "$tmp/out" "$tmp/err"; failures=$((failures + 1)); }

exit $failures
