#!/usr/bin/env bash
# One one-node Slurm test cluster (tests/hosts/slurm/slurm_cluster.sh) kept up
# for the real-host benchmark (real_hosts.py), which sends it srun commands
# one line at a time and times them here.
#
#   slurm_jobs.sh HARNESS [PMIX_LIB_DIR]
#
# HARNESS: the path of slurm_cluster.sh. PMIX_LIB_DIR: the folder whose
# libpmix.so.2 (and libpmix-server.so.2) replaces OpenPMIx under slurmd,
# slurmstepd, srun and the ranks; without it the cluster runs on Debian's
# OpenPMIx. Needs root.
#
# Protocol, on stdin / stdout (everything else goes to stderr):
#   -> "ready"                      the cluster is up (or "error WHY", then exit)
#   <- "srun ARGS..."               runs `srun -O --mpi=pmix ARGS` (slurm_srun)
#   -> "done RC T0 T1 OUT ERR"      exit status, start and end (EPOCHREALTIME,
#                                   seconds), files holding its stdout, stderr
#   <- "stop", or end of input      stops the cluster and exits
# The cluster is stopped and the scratch folder removed on any exit: end of
# input (the caller died), TERM, INT, HUP, or an error.
set -u
export LC_ALL=C   # EPOCHREALTIME with a decimal point
export PATH=/usr/sbin:/usr/bin:/sbin:/bin
harness=${1:?usage: slurm_jobs.sh HARNESS [PMIX_LIB_DIR]}
libdir=${2:-}
exec 3>&1 1>&2   # fd 3: the protocol; stray output of the harness goes to stderr
# shellcheck source=/dev/null  # a path given at run time
source "$harness" || { echo "error cannot source $harness" >&3; exit 1; }

scratch=$(mktemp -d /tmp/slb.XXXXXX) || { echo "error mktemp failed" >&3; exit 1; }
# shellcheck disable=SC2317  # called through the EXIT trap
cleanup() { slurm_stop; rm -rf "$scratch"; }
trap cleanup EXIT
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM

if ! slurm_start "$scratch" ${libdir:+"$libdir"}; then
  echo "error the cluster did not start (its logs are on stderr)" >&3
  exit 1
fi
cd "$scratch" || exit 1
echo "ready" >&3

k=0
while IFS= read -r line; do
  read -r -a words <<<"$line"
  case ${words[0]:-} in
    srun)
      k=$((k + 1))
      out=$scratch/job$k.out err=$scratch/job$k.err
      t0=$EPOCHREALTIME
      slurm_srun "${words[@]:1}" </dev/null >"$out" 2>"$err"
      rc=$?
      t1=$EPOCHREALTIME
      echo "done $rc $t0 $t1 $out $err" >&3
      ;;
    stop) break ;;
    '') ;;
    *) echo "error unknown command: ${words[0]}" >&3 ;;
  esac
done
exit 0
