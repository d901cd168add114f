#!/usr/bin/env bash
# The MPI suite (run_mpi_suite.sh) on our libpmix.so.2, under the launcher
# given: mpirun (Open MPI's, hosting our server) or the path of our pmixrun.
# Runs from the test's runfiles; every process finds our library first.
set -uo pipefail
launcher=${1:?usage: run_on_our_library.sh mpirun|PATH-TO-PMIXRUN}
[ "$launcher" = mpirun ] || launcher=$PWD/$launcher
lib=$(mktemp -d /tmp/mpilib.XXXXXX)
tmp=$(mktemp -d /tmp/mpit.XXXXXX)   # short: Unix socket paths live under TMPDIR
trap 'rm -rf "$lib" "$tmp"' EXIT
# Our two shared objects side by side (the client library loads the server
# runtime from its own directory).
cp -L api/libpmix.so.2 api/libpmix-server.so.2 "$lib"/
export TMPDIR=$tmp
# Open MPI derives its prefix from where mpirun was found: /usr/bin, not the
# /bin of a merged-/usr system that a test PATH may list first.
export PATH=/usr/bin:$PATH
exec tests/hosts/mpi/run_mpi_suite.sh tests/hosts/mpi --pmix-lib-dir "$lib" --launcher "$launcher" \
  --np "1 2 4 8 16" --timeout 120 --budget 800 --log-dir "$tmp/logs"
