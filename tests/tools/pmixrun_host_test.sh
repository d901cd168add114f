#!/usr/bin/env bash
# What pmixrun hosts for its jobs, as real jobs: publish / lookup (with wait and timeout),
# persistence, spawn (exit codes forwarded, a program that cannot run), connect / disconnect,
# log, the job data Open MPI reads, and Open MPI 4.1 programs launched directly at their real
# size (allreduce, MPI_Comm_spawn, MPI_Publish_name, MPI_Abort(7)).
#
# Run from the Bazel runfiles directory, like pmixrun_test.sh. The binaries can be given
# instead through PMIXRUN and PMIXRUN_CLIENT (e.g. builds against OpenPMIx; see
# tools/pmixrun/README.md). The Open MPI cases use the programs of tests/hosts/mpi that Bazel
# built (or build them with mpicc; skipped without it); PMIX_LIB_DIR (default: api/ when it holds libpmix.so.2) is put first in
# LD_LIBRARY_PATH for them, so that Open MPI's ranks load the same library as pmixrun.
set -uo pipefail
pmixrun=${PMIXRUN:-tools/pmixrun/pmixrun}
client=${PMIXRUN_CLIENT:-tests/tools/pmixrun_client}
here=$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")
mpi_src=${MPI_SRC_DIR:-$here/../hosts/mpi}
if [ -z "${PMIX_LIB_DIR+x}" ] && [ -e api/libpmix.so.2 ]; then PMIX_LIB_DIR=$PWD/api; fi
tmp=$(mktemp -d /tmp/pmixrunh.XXXXXX)   # not TEST_TMPDIR: socket paths must stay short
trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp   # short socket paths; pmixrun's session directories go here too
failures=0

fail() { echo "FAIL $1"; shift; for f in "$@"; do echo "---- $f"; cat "$f"; done; failures=$((failures + 1)); }

# run NAME N [pmixrun options --] ARGS...: runs pmixrun -n N ARGS, output in $tmp/out, $tmp/err
run() {
  local n=$1
  shift
  timeout -k 5 120 "$pmixrun" -n "$n" --timeout 90 "$@" >"$tmp/out" 2>"$tmp/err"
}

# expect NAME WANT_STATUS GOT_STATUS [FILE PATTERN [COUNT]]...: each PATTERN (extended regex)
# must match COUNT lines of FILE (default: at least one)
expect() {
  local name=$1 want=$2 got=$3
  shift 3
  if [ "$want" != "$got" ]; then fail "$name: exit status $got, expected $want" "$tmp/out" "$tmp/err"; return; fi
  while [ $# -ge 2 ]; do
    local file=$1 pattern=$2 count=
    shift 2
    if [ $# -ge 1 ] && [[ $1 =~ ^[0-9]+$ ]]; then count=$1; shift; fi
    local got_lines
    got_lines=$(grep -cE -- "$pattern" "$file")
    if { [ -n "$count" ] && [ "$got_lines" != "$count" ]; } || { [ -z "$count" ] && [ "$got_lines" = 0 ]; }; then
      fail "$name: '$pattern' matched $got_lines lines of $(basename "$file"), want ${count:-some}" "$tmp/out" "$tmp/err"
      return
    fi
  done
  if grep -q '^FAIL' "$tmp/out"; then fail "$name: the client reported failures" "$tmp/out" "$tmp/err"; return; fi
  echo "ok   $name"
}

# ---- PMIx clients ----------------------------------------------------------------------------

run 2 "$client" pubsub; st=$?
expect "publish / lookup / unpublish, wait, timeout, first-read, duplicates" 0 $st "$tmp/out" '^OK pubsub rank=[01]$' 2

run 2 "$client" persist; st=$?
expect "PERSIST_PROC data goes with its publisher" 0 $st "$tmp/out" '^OK persist rank=[01]$' 2

run 2 "$client" spawn 0; st=$?
expect "spawn of two apps as one job, connect, ranges across jobs" 0 $st \
  "$tmp/out" '^OK spawn child rank=[01] appnum=0$' 2 "$tmp/out" '^OK spawn child rank=2 appnum=1$' 1 \
  "$tmp/out" '^OK spawn rank=[01]$' 2 "$tmp/err" '3 of 3 processes of 1 spawned job'

run 2 "$client" spawn 3; st=$?
expect "a spawned process's exit status is pmixrun's" 3 $st "$tmp/err" 'exited with status 3'

run 1 "$client" spawn-missing; st=$?
expect "a spawn of a program that cannot run fails, without a hang" 0 $st \
  "$tmp/out" '^OK spawn-missing rank=0$' "$tmp/err" 'spawn by .* failed: cannot run'

run 2 "$client" log; st=$?
expect "log to stdout and stderr, prefixed with the source" 0 $st \
  "$tmp/out" '^\[[^]]+:[01]\] log to stdout from rank [01]$' 2 \
  "$tmp/err" '^\[[^]]+:[01]\] log to stderr from rank [01]$' 2

run 3 "$client" jobdata; st=$?
expect "the job data Open MPI reads" 0 $st "$tmp/out" '^OK jobdata rank=[012]$' 3

# ---- Open MPI 4.1 programs, launched directly ------------------------------------------------

# The programs Bazel built (//tests/hosts/mpi:programs), else built here with mpicc.
mpi_bin=$tmp/mpi
if [ -x tests/hosts/mpi/allreduce ]; then
  mpi_bin=$PWD/tests/hosts/mpi
elif ! command -v mpicc >/dev/null || [ ! -x "$mpi_src/build.sh" ]; then
  mpi_bin=
elif ! "$mpi_src/build.sh" "$mpi_bin" >"$tmp/build.log" 2>&1; then
  fail "building the MPI programs" "$tmp/build.log"
  mpi_bin=
fi
if [ -z "$mpi_bin" ]; then
  echo "skip Open MPI programs (not built, and no mpicc)"
else
  if [ -n "${PMIX_LIB_DIR:-}" ]; then export LD_LIBRARY_PATH=$PMIX_LIB_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}; fi
  run 4 "$mpi_bin/allreduce" 4; st=$?
  expect "Open MPI allreduce at its real size (4 ranks, not singletons)" 0 $st \
    "$tmp/out" '^OK allreduce rank=[0-3] size=4$' 4 "$tmp/out" '^OK allreduce all ranks=4$' 1

  run 2 "$mpi_bin/spawn"; st=$?
  expect "Open MPI MPI_Comm_spawn of 2 children, merged" 0 $st \
    "$tmp/out" '^OK spawn all parents=2 children=2 merged=4$' 1 "$tmp/err" '2 of 2 processes of 1 spawned job'

  run 3 "$mpi_bin/pubsub"; st=$?
  expect "Open MPI MPI_Publish_name / MPI_Lookup_name / connect-accept" 0 $st \
    "$tmp/out" '^OK pubsub all ranks=3 connect=yes$' 1

  run 3 "$mpi_bin/abort"; st=$?
  expect "Open MPI MPI_Abort(7) gives exit status 7" 7 $st "$tmp/err" 'PMIx_Abort\(7\)'
fi

exit $failures
