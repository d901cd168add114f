#!/usr/bin/env bash
# The MPI suite (run_mpi_suite.sh) on our libpmix.so.2, under the launcher
# given: mpirun (Open MPI's, hosting our server) or the path of our pmixrun.
# Runs from the test's runfiles; every process finds our library first,
# unless "openpmix-ranks" follows: then only the launcher runs on ours and
# the MPI ranks load Debian's OpenPMIx 4.2.2 (issue 35: a mixed install); or
# "openpmix-launcher": then mpirun runs on Debian's OpenPMIx (its server)
# and only the ranks load ours (issue 36: our client under OpenPMIx).
set -uo pipefail
launcher=${1:?usage: run_on_our_library.sh mpirun|PATH-TO-PMIXRUN [openpmix-ranks]}
ranks_on=${2:-ours}
[ "$launcher" = mpirun ] || launcher=$PWD/$launcher
lib=$(mktemp -d /tmp/mpilib.XXXXXX)
tmp=$(mktemp -d /tmp/mpit.XXXXXX)   # short: Unix socket paths live under TMPDIR
trap 'rm -rf "$lib" "$tmp"' EXIT
# Our two shared objects side by side (the client library loads the server
# runtime from its own directory).
cp -L api/libpmix.so.2 api/libpmix-server.so.2 "$lib"/
export TMPDIR=$tmp
# Under the asan and tsan configs (docs/security.md, "Sanitizers") our
# library is instrumented and Open MPI's mpirun is not: the sanitizer's
# runtime must come first in mpirun, so it is preloaded (the ranks, built by
# the same config, inherit it harmlessly), with libstdc++ under ASan (loaded
# only later, with our server runtime, it would leave ASan's __cxa_throw
# interceptor without the real function). Leaks are not checked in mpirun:
# its own leaks at exit cannot be told from ours by a suppression, since
# every stack in it passes through Open MPI (our server's leaks are checked
# under pmixrun). openmpi.asan.supp and openmpi.tsan.supp name a bug of
# mpirun's own. The preload is given to mpirun alone, through a wrapper
# named mpirun: bash itself crashes with libtsan preloaded (a segmentation
# fault before its first line), so the suite's scripts must run without it.
if [ "$launcher" = mpirun ] && [ "$ranks_on" != openpmix-launcher ]; then
  preload=$(tests/support/sanitizer_runtime.sh api/libpmix.so.2)
  case "$preload" in
    *libasan*)
      export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0:suppressions=$PWD/tests/hosts/mpi/openmpi.asan.supp" ;;
    *libtsan*)
      # TSan reads one suppressions file: one given already is kept, with
      # openmpi.tsan.supp (a bug of mpirun's own) added.
      given=$(sed -n 's/.*suppressions=\([^:]*\).*/\1/p' <<<"${TSAN_OPTIONS:-}")
      { [ -z "$given" ] || cat "$given"; cat tests/hosts/mpi/openmpi.tsan.supp; } >"$lib/tsan.supp"
      export TSAN_OPTIONS="${TSAN_OPTIONS:-}:suppressions=$lib/tsan.supp" ;;
  esac
  if [ -n "$preload" ]; then
    mkdir "$lib/bin"
    printf '#!/bin/sh\nLD_PRELOAD=%s exec /usr/bin/mpirun "$@"\n' "$preload${LD_PRELOAD:+:$LD_PRELOAD}" >"$lib/bin/mpirun"
    chmod +x "$lib/bin/mpirun"
    launcher=$lib/bin/mpirun
  fi
fi
# Open MPI derives its prefix from where mpirun was found: /usr/bin, not the
# /bin of a merged-/usr system that a test PATH may list first.
export PATH=/usr/bin:$PATH
extra=()
if [ "$ranks_on" = openpmix-ranks ]; then
  # The ranks' LD_LIBRARY_PATH names Debian's OpenPMIx (mpirun's own names
  # ours). First a check that it is so: our server logs each connection
  # made with OpenPMIx's protocol (at PMIX_CXX_VERBOSE=2).
  openpmix=/usr/lib/x86_64-linux-gnu/pmix2/lib
  extra=(--launcher-arg -x --launcher-arg "LD_LIBRARY_PATH=$openpmix")
  LD_LIBRARY_PATH=$lib PMIX_CXX_VERBOSE=2 timeout 120 "$launcher" --allow-run-as-root --oversubscribe -np 4 \
    -x "LD_LIBRARY_PATH=$openpmix" tests/hosts/mpi/allreduce >"$tmp/check.out" 2>"$tmp/check.err"
  n=$(grep -c 'a process linked with OpenPMIx 4.2.2[^ ]* connects as' "$tmp/check.err")
  if [ "$n" != 4 ] || [ "$(grep -c '^OK allreduce rank=' "$tmp/check.out")" != 4 ]; then
    echo "FAIL the 4 ranks did not connect with OpenPMIx's protocol ($n did):"
    cat "$tmp/check.out" "$tmp/check.err"
    exit 1
  fi
  echo "PASS 4 MPI ranks on Debian's OpenPMIx under mpirun on our library"
fi
lib_dir=(--pmix-lib-dir "$lib")
if [ "$ranks_on" = openpmix-launcher ]; then
  # mpirun with no LD_LIBRARY_PATH of ours (it loads Debian's OpenPMIx and
  # serves with it); the ranks, and the processes they spawn, get ours. A
  # check first: our client logs each connection to an OpenPMIx server (at
  # PMIX_CXX_VERBOSE=2): 4 ranks, then 2 parents and their 2 children.
  lib_dir=()
  extra=(--launcher-arg -x --launcher-arg "LD_LIBRARY_PATH=$lib")
  for check in "4 allreduce" "2 spawn"; do
    read -r np program <<<"$check"
    env -u LD_LIBRARY_PATH PMIX_CXX_VERBOSE=2 timeout 120 "$launcher" --allow-run-as-root --oversubscribe -np "$np" \
      -x "LD_LIBRARY_PATH=$lib" -x PMIX_CXX_VERBOSE tests/hosts/mpi/$program >"$tmp/check.out" 2>"$tmp/check.err"
    n=$(grep -c 'connected to an OpenPMIx 4.2.2[^ ]* server' "$tmp/check.err")
    if [ "$n" != 4 ] || ! grep -q "^OK $program all" "$tmp/check.out"; then
      echo "FAIL $program -np $np: 4 processes on our library should have connected to mpirun's OpenPMIx ($n did):"
      cat "$tmp/check.out" "$tmp/check.err"
      exit 1
    fi
    echo "PASS $program -np $np: its 4 processes on our library under mpirun's OpenPMIx server"
  done
  unset LD_LIBRARY_PATH
fi
exec tests/hosts/mpi/run_mpi_suite.sh tests/hosts/mpi "${lib_dir[@]}" --launcher "$launcher" \
  "${extra[@]}" --np "1 2 4 8 16" --timeout 120 --budget 800 --log-dir "$tmp/logs"
