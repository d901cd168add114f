#!/usr/bin/env bash
# Real jobs under a one-node Slurm 22.05 (srun --mpi=pmix): a plain PMIx client
# and an Open MPI allreduce, 4 ranks each. Needs root, slurm-wlm, munge,
# openmpi-bin, libopenmpi-dev, libpmix-dev.
#
#   slurm_smoke.sh [--client PROG] [--newer-client PROG] [--mpi-program PROG] [--openpmix-ranks | --our-ranks]
#                  [--ranks-library NAME] [PMIX_LIB_DIR]
#
# --ranks-library NAME: check that the client's 4 ranks report a library whose
# PMIx_Get_version starts with NAME (issue 39: the system's library, from our
# Debian packages, with no PMIX_LIB_DIR).
#
# --our-ranks (issue 36, the other mixed install): the Slurm daemons on
# Debian's OpenPMIx (the stock plugin, no bind mount), the ranks on
# PMIX_LIB_DIR's library (their LD_LIBRARY_PATH), speaking OpenPMIx's
# protocol to slurmstepd's OpenPMIx server.
#
# --openpmix-ranks (issue 35, a mixed install): the ranks load Debian's
# OpenPMIx 4.2.2 (a copy taken before the cluster's mount namespace puts
# PMIX_LIB_DIR's library in its place, named by their LD_LIBRARY_PATH),
# the Slurm daemons the library in PMIX_LIB_DIR.
#
# PMIX_LIB_DIR: a folder with the libpmix.so.2 (and libpmix-server.so.2) to put
# in place of OpenPMIx under slurmd, slurmstepd, srun and the ranks; without
# it the job runs on Debian's OpenPMIx. --client: a prebuilt pmix_job_client
# (default: built here from pmix_job_client.c with gcc against OpenPMIx's
# headers). --newer-client: a prebuilt pmix_newer_client (OpenPMIx 5.0's
# style, built against our headers), run like the client when given and the
# ranks are on our library. --mpi-program: a prebuilt tests/hosts/mpi/allreduce (by default
# built here from that source with mpicc).
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=slurm_cluster.sh
source "$here/slurm_cluster.sh"

client='' newer_client='' mpi_program='' libdir='' openpmix_ranks='' our_ranks='' ranks_library=''
while [ $# -gt 0 ]; do
  case $1 in
    --openpmix-ranks) openpmix_ranks=1; shift ;;
    --our-ranks) our_ranks=1; shift ;;
    --ranks-library) ranks_library=${2:?--ranks-library needs a name}; shift 2 ;;
    --client) client=$(realpath "${2:?--client needs a program}") || exit 2; shift 2 ;;
    --newer-client) newer_client=$(realpath "${2:?--newer-client needs a program}") || exit 2; shift 2 ;;
    --mpi-program) mpi_program=$(realpath "${2:?--mpi-program needs a program}") || exit 2; shift 2 ;;
    -*) echo "usage: $0 [--client PROG] [--newer-client PROG] [--mpi-program PROG] [--openpmix-ranks | --our-ranks] [--ranks-library NAME] [PMIX_LIB_DIR]" >&2; exit 2 ;;
    *) libdir=$(realpath "$1") || exit 2; shift ;;
  esac
done
# Which library the client's ranks must report (PMIx_Get_version's start).
[ -z "$openpmix_ranks" ] || ranks_library='OpenPMIx 4.2.2'
[ -z "$our_ranks" ] || ranks_library=PMIx-CXX

scratch=$(mktemp -d /tmp/slm.XXXXXX)   # short: Unix socket paths live under it
trap 'slurm_stop; rm -rf "$scratch"' EXIT
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }
show() { echo "  --- $1:"; sed 's/^/  | /' "$1" | tail -n 40; }
started=$(date +%s.%N)

if [ -n "$openpmix_ranks" ]; then
  mkdir -p "$scratch/openpmix"
  cp -L /usr/lib/x86_64-linux-gnu/pmix2/lib/libpmix.so.2 "$scratch/openpmix/libpmix.so.2" || exit 1
fi
daemons_lib=$libdir
[ -z "$our_ranks" ] || daemons_lib=''
if ! slurm_start "$scratch" ${daemons_lib:+"$daemons_lib"}; then
  echo "FAIL the cluster did not start"
  exit 1
fi
echo "ok   the cluster is up in $scratch${daemons_lib:+ with $daemons_lib in place of OpenPMIx}"
# srun passes its environment on to the ranks (not to the daemons).
[ -z "$openpmix_ranks" ] || export LD_LIBRARY_PATH=$scratch/openpmix
[ -z "$our_ranks" ] || export LD_LIBRARY_PATH=$libdir
cd "$scratch" || exit 1

# --- the programs
if [ -z "$client" ]; then
  client=$scratch/pmix_job_client
  # shellcheck disable=SC2046
  gcc -O1 -o "$client" "$here/pmix_job_client.c" $(pkg-config --cflags --libs pmix) ||
    { echo "FAIL cannot build pmix_job_client"; exit 1; }
fi
if [ -z "$mpi_program" ]; then
  mpi_program=$scratch/allreduce
  mpicc -std=c11 -O1 -o "$mpi_program" "$here/../mpi/allreduce.c" ||
    { echo "FAIL cannot build the allreduce program"; exit 1; }
fi

# --- a plain PMIx client: size, put/commit, collecting fence, get from every rank
t0=$(date +%s.%N)
slurm_srun -n 4 "$client" 4 >client.out 2>client.err; st=$?
t1=$(date +%s.%N)
if [ $st -ne 0 ]; then
  fail "pmix_job_client: srun exit status $st"; show client.out; show client.err
elif [ "$(grep -c '^pmix_job_client: rank [0-3] of 4 ok$' client.out)" != 4 ] ||
  [ "$(grep '^pmix_job_client: rank' client.out | sort -u | wc -l)" != 4 ]; then
  fail "pmix_job_client: not 4 distinct ok lines"; show client.out; show client.err
else
  echo "ok   pmix_job_client: 4 ranks ok ($(echo "$t1 - $t0" | bc) s)"
fi
if [ -n "$ranks_library" ]; then
  n=$(grep -c "^pmix_job_client: rank [0-3] library ${ranks_library//./\\.}" client.err)
  [ "$n" = 4 ] && echo "ok   the 4 ranks ran on $ranks_library" ||
    { fail "the ranks did not all run on $ranks_library ($n did)"; show client.err; }
fi

# --- the same in OpenPMIx 5.0's style (its macros call our library's newer
# functions: it cannot run on OpenPMIx 4.2.2's ranks)
if [ -n "$newer_client" ] && [ -z "$openpmix_ranks" ]; then
  slurm_srun -n 4 "$newer_client" 4 >newer.out 2>newer.err; st=$?
  if [ $st -ne 0 ]; then
    fail "pmix_newer_client: srun exit status $st"; show newer.out; show newer.err
  elif [ "$(grep -c '^pmix_newer_client: rank [0-3] of 4 ok$' newer.out)" != 4 ] ||
    [ "$(grep '^pmix_newer_client: rank' newer.out | sort -u | wc -l)" != 4 ]; then
    fail "pmix_newer_client: not 4 distinct ok lines"; show newer.out; show newer.err
  else
    echo "ok   pmix_newer_client (OpenPMIx 5.0's style): 4 ranks ok"
  fi
fi

# --- Open MPI: direct launch, allreduce over 4 ranks
t0=$(date +%s.%N)
slurm_srun -n 4 "$mpi_program" 4 >mpi.out 2>mpi.err; st=$?
t1=$(date +%s.%N)
if [ $st -ne 0 ]; then
  fail "allreduce: srun exit status $st"; show mpi.out; show mpi.err
elif [ "$(grep -c '^OK allreduce rank=[0-3] size=4$' mpi.out)" != 4 ] ||
  [ "$(grep '^OK allreduce rank=' mpi.out | sort -u | wc -l)" != 4 ] ||
  ! grep -q '^OK allreduce all ranks=4$' mpi.out || grep -q '^FAIL' mpi.out; then
  fail "allreduce: not 4 distinct ranks of a job of 4 with every result checked"; show mpi.out; show mpi.err
else
  echo "ok   allreduce: 4 ranks of 4, results checked ($(echo "$t1 - $t0" | bc) s)"
fi

[ $failures -eq 0 ] || slurm_dump_logs
slurm_stop
echo "$([ $failures -eq 0 ] && echo PASS || echo "FAIL ($failures)") in $(echo "$(date +%s.%N) - $started" | bc) s"
exit $failures
