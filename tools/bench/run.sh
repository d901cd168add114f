#!/usr/bin/env bash
# The side-by-side benchmark: builds the benchmark host and client against
# PMIx-CXX and against OpenPMIx 4.2.2 (Debian's libpmix-dev), runs both,
# interleaved, then times mpirun and srun of Open MPI's allreduce on each
# library (real hosts), and writes bench-results/report.md and
# bench-results/fence.svg.
# Usage: tools/bench/run.sh [--short] [--rounds R] [--out DIR]
#                           [--hosts mpirun,srun|none] [--host-runs R]
# The srun part needs root (a one-node Slurm test cluster per library).
set -euo pipefail
cd "$(dirname "$0")/../.."
tools/deps.sh test   # libpmix-dev: OpenPMIx 4.2.2 to compare against
bazel build //tools/bench:all //tests/hosts/mpi:allreduce //tools/pmixrun //tools/pmixd
# Bazel's server (a JVM) stays up after a build and runs periodic tasks of up
# to a millisecond: stopped before anything is timed, for both libraries.
bazel shutdown >/dev/null 2>&1 || true
status=0
/usr/bin/python3 tools/bench/compare.py --bin bazel-bin/tools/bench \
  --mpi-program bazel-bin/tests/hosts/mpi/allreduce \
  --slurm-harness tests/hosts/slurm/slurm_cluster.sh "$@" || status=$?
exit $status
