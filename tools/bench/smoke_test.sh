#!/usr/bin/env bash
# CI: the side-by-side benchmark in its short mode, only to prove that both
# builds of the programs still run, and that mpirun and srun of an MPI
# program still run on both libraries (its figures are not checked); then
# openpmix_clients.py the same way, for either side.
set -euo pipefail
bin="$TEST_SRCDIR/$TEST_WORKSPACE/tools/bench"
# The real-host part's allreduce program and Slurm harness are in tests/hosts,
# whose targets are not visible from tools/bench: they are taken from the
# source tree the runfiles link to (the program built here with mpicc, as
# tests/hosts/mpi/build.sh does). Without them that part says "skipped".
tree=$(cd "$(dirname "$(readlink -f "$bin/compare.py")")/../.." && pwd)
program=$TEST_TMPDIR/allreduce
if command -v mpicc >/dev/null && [ -f "$tree/tests/hosts/mpi/allreduce.c" ]; then
  mpicc -std=c11 -O1 -o "$program" "$tree/tests/hosts/mpi/allreduce.c"
fi
# Open MPI derives its prefix from where mpirun is: /usr/bin first; the
# Slurm daemons are in /usr/sbin, which a test's PATH lacks.
export PATH=/usr/bin:/usr/sbin:/bin:/sbin:$PATH
/usr/bin/python3 "$bin/compare.py" --bin "$bin" --short --out "$TEST_TMPDIR/bench" \
  --mpi-program "$program" --slurm-harness "$tree/tests/hosts/slurm/slurm_cluster.sh"
test -s "$TEST_TMPDIR/bench/report.md"
grep -q "<polyline" "$TEST_TMPDIR/bench/fence.svg"
grep -q "^## Real hosts: mpirun and srun" "$TEST_TMPDIR/bench/report.md"
grep -q "lost its CPU for more than 1 ms" "$TEST_TMPDIR/bench/report.md"
grep -q "Other processes ran" "$TEST_TMPDIR/bench/report.md"
grep -q "16 processes at once, each inits, Puts, Commits and fences: all ready" "$TEST_TMPDIR/bench/report.md"
grep -q "time to all ready, 16 processes against 8" "$TEST_TMPDIR/bench/report.md"
# The data fence's floor (fence_floor, beside the programs) ran and was set
# beside both libraries' fence of as many ranks.
grep -qE "^The floor at N = 4: .*median [0-9.]+ µs\. What each library adds to it: PMIx-CXX -?[0-9.]+ µs, OpenPMIx -?[0-9.]+ µs" \
  "$TEST_TMPDIR/bench/report.md"
# OpenPMIx's clients under our server and under its own (issue 35), and a
# job mixing both libraries: one round of tiny sizes.
/usr/bin/python3 "$bin/openpmix_clients.py" --bin "$bin" --short --rounds 1 >"$TEST_TMPDIR/openpmix_clients.md"
grep -q "^| mixed4 | dfence_us |" "$TEST_TMPDIR/openpmix_clients.md"
grep -q "^| dmodex16 | dmodex_get_us |" "$TEST_TMPDIR/openpmix_clients.md"
# Our client under OpenPMIx's server beside OpenPMIx's own client (issue 36),
# the mixed job, and mpirun's allreduce with the ranks on either library.
ourlib=$(mktemp -d "$TEST_TMPDIR/ourlib.XXXXXX")
cp -L "$TEST_SRCDIR/$TEST_WORKSPACE/api/libpmix.so.2" "$ourlib/"
/usr/bin/python3 "$bin/openpmix_clients.py" --bin "$bin" --side server --short --rounds 1 \
  --cases startup,cycle,datafence,get,dmodex,mixed,mpirun --lib "$ourlib" --mpi-program "$program" \
  >"$TEST_TMPDIR/openpmix_server.md"
grep -q "^| mixed4 | dfence_us |" "$TEST_TMPDIR/openpmix_server.md"
grep -q "^| mpirun | mpirun_np4_us |" "$TEST_TMPDIR/openpmix_server.md"
# The real hosts across namespace nodes (tools/multinode/hosts_bench.sh):
# mpirun on both libraries, srun on both, pmixrun with pmixd, 2 nodes, a few
# fences each; every setup must give a figure.
HOSTS_BENCH_BIN="$TEST_SRCDIR/$TEST_WORKSPACE" "$tree/tools/multinode/hosts_bench.sh" --nodes 2 --iters 3 --rounds 1 >"$TEST_TMPDIR/hosts_bench.md"
grep -qE '^\| 2 x 4 \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \| [0-9.]+ \|$' \
  "$TEST_TMPDIR/hosts_bench.md"
