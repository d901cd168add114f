#!/usr/bin/env bash
# slurm_smoke.sh on our libpmix.so.2: the plain PMIx client and Open MPI's
# allreduce, srun --mpi=pmix -n 4 each, under a one-node Slurm of the test's
# own. Runs from the test's runfiles. Arguments are slurm_smoke.sh's
# (--openpmix-ranks: the ranks on Debian's OpenPMIx, issue 35).
set -uo pipefail
# The daemons live in /usr/sbin, which a test PATH lacks; /usr/bin first (see
# tests/hosts/mpi/run_on_our_library.sh).
export PATH=/usr/sbin:/usr/bin:/sbin:$PATH
lib=$(mktemp -d /tmp/slmlib.XXXXXX)
trap 'rm -rf "$lib"' EXIT
cp -L api/libpmix.so.2 api/libpmix-server.so.2 "$lib"/
tests/hosts/slurm/slurm_smoke.sh --client tests/hosts/slurm/pmix_job_client \
  --newer-client tests/hosts/slurm/pmix_newer_client \
  --mpi-program tests/hosts/mpi/allreduce "$@" "$lib"
