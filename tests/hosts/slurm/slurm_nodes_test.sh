#!/usr/bin/env bash
# Slurm 22.05 across 4 network-namespace nodes, our libpmix.so.2 in every
# node's slurmd, slurmstepd and tasks (issue 38): tests/hosts/slurm/slurm_nodes.sh
# makes the cluster (one slurmd per node, each in its own mount namespace).
#
# A control first: Open MPI's allreduce on a cluster left on Debian's
# OpenPMIx (the harness itself works). Then, on ours, with every node's
# server checked to be ours (its log file, PMIX_CXX_LOG_FILE):
#   srun -N 4 -n 16 of the PMIx client: job size, a collecting fence, every
#     rank's key;
#   the same with a fence that does not collect, then a Get of a rank on
#     another node (direct modex through the plugin);
#   Open MPI's allreduce and ring;
#   node3's slurmd and slurmstepd killed while the other 12 ranks are in a
#     fence: each of them gets a PMIx error (the plugin's collective timeout,
#     SLURM_PMIX_TIMEOUT=5) and srun ends (node3 is declared dead), no hang.
# Needs root, iproute2, slurm-wlm and munge.
set -uo pipefail
# The daemons live in /usr/sbin, which a test PATH lacks; /usr/bin first (see
# tests/hosts/mpi/run_on_our_library.sh).
export PATH=/usr/sbin:/usr/bin:/sbin:$PATH

if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null || ! command -v slurmd >/dev/null; then
  echo "FAIL slurm_nodes_test needs root, iproute2 and slurm-wlm"
  exit 1
fi
# shellcheck source=tools/multinode/netns.sh
. tools/multinode/netns.sh
# shellcheck source=tests/hosts/slurm/slurm_cluster.sh
. tests/hosts/slurm/slurm_cluster.sh
# shellcheck source=tests/hosts/slurm/slurm_nodes.sh
. tests/hosts/slurm/slurm_nodes.sh

client=$PWD/tests/hosts/slurm/pmix_job_client
allreduce=$PWD/tests/hosts/mpi/allreduce
ring=$PWD/tests/hosts/mpi/ring
nodes=4
n=16
subnet=10.78.0
tag=$(printf 'sn%x' $$)
scratch=$(mktemp -d /tmp/smn.XXXXXX)
lib=$(mktemp -d /tmp/smnlib.XXXXXX)
cp -L api/libpmix.so.2 api/libpmix-server.so.2 "$lib"/
cleanup() {
  local status=$?
  slurm_nodes_stop
  netns_down
  rm -rf "$scratch" "$lib"
  exit $status
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

failed=0
pass() { echo "PASS $*"; }
fail() {
  echo "FAIL $1"
  [ -n "${2:-}" ] && [ -f "$2" ] && cat "$2"
  failed=1
}
# count LOG REGEX: lines matching
count() { grep -cE "$2" "$1"; }

# --- control: the harness on Debian's OpenPMIx
if slurm_nodes_start "$scratch" "$tag" "$nodes" "$subnet"; then
  # Slurm's ring for every fence (PMIxCollFence=ring): its default tree
  # completes a fence without data on each node at once, and Open MPI's ranks
  # then may leave MPI_Init's barrier early and crash (OpenPMIx too; our
  # server makes such fences ring ones itself, docs/hosts.md).
  SLURM_PMIX_FENCE=ring slurm_nodes_srun -N "$nodes" -n "$n" "$allreduce" >"$scratch/control.out" 2>&1
  if [ "$(count "$scratch/control.out" '^OK allreduce rank=')" = "$n" ]; then
    pass "control: allreduce, 16 ranks on 4 nodes, Slurm on Debian's OpenPMIx"
  else
    fail "control: allreduce on Debian's OpenPMIx" "$scratch/control.out"
  fi
else
  fail "control: the cluster on Debian's OpenPMIx did not start"
fi
slurm_nodes_stop
rm -rf "${scratch:?}"/*

# --- on our library; each node's server logs to its own node's folder
export PMIX_CXX_LOG_FILE=$scratch/node/log/pmix.log PMIX_CXX_VERBOSE=2
if ! slurm_nodes_start "$scratch" "$tag" "$nodes" "$subnet" "$lib"; then
  echo "FAIL the cluster on our library did not start"
  exit 1
fi
unset PMIX_CXX_LOG_FILE PMIX_CXX_VERBOSE

out=$scratch/job.out
slurm_nodes_srun -N "$nodes" -n "$n" "$client" "$n" >"$out" 2>&1
status=$?
servers=0
for k in $(seq 0 $((nodes - 1))); do
  grep -q "info server: listening at " "$scratch/n$k/log/pmix.log" 2>/dev/null && servers=$((servers + 1))
done
if [ $status -eq 0 ] && [ "$(count "$out" 'pmix_job_client: rank [0-9]+ of 16 ok')" = "$n" ] &&
  [ "$(count "$out" 'library PMIx-CXX')" = "$n" ] && [ "$servers" = "$nodes" ]; then
  pass "PMIx client, 16 ranks on 4 nodes: job size, collecting fence, every rank's key; our server on every node"
else
  fail "PMIx client with a collecting fence (status $status, our servers on $servers nodes)" "$out"
fi

out=$scratch/dmodex.out
slurm_nodes_srun -N "$nodes" -n "$n" "$client" "$n" dmodex >"$out" 2>&1
status=$?
# ranks 0-3 run on node0 (block distribution): each fetched the key of a rank elsewhere
remote=$(sed -nE 's/^pmix_job_client: rank ([0-9]+) got rank [0-9]+.s key from node([0-9]+)$/\1 \2/p' "$out" |
  awk '{ if (int($1 / 4) != $2) n++ } END { print n + 0 }')
if [ $status -eq 0 ] && [ "$remote" = "$n" ] && [ "$(count "$out" 'of 16 ok')" = "$n" ]; then
  pass "direct modex: a fence without data, then each rank gets a key of a rank on another node"
else
  fail "direct modex across nodes (status $status, $remote ranks got a remote key)" "$out"
fi

for prog in allreduce ring; do
  out=$scratch/$prog.out
  slurm_nodes_srun -N "$nodes" -n "$n" "$PWD/tests/hosts/mpi/$prog" >"$out" 2>&1
  status=$?
  if [ $status -eq 0 ] && [ "$(count "$out" "^OK $prog rank=")" = "$n" ] && grep -q "^OK $prog all ranks=$n" "$out"; then
    pass "Open MPI's $prog, 16 ranks on 4 nodes"
  else
    fail "Open MPI's $prog (status $status)" "$out"
  fi
done

# --- a node lost in the middle of a fence
out=$scratch/kill.out
SECONDS=0
# Each node's stepd times its collective out on its own (5 s here, well before
# slurmctld declares node3 dead, 10 s or more, and srun ends the step): every
# rank then reports its error. (With --kill-on-bad-exit the first node's
# errors ended the others before their own timeouts.)
SLURM_PMIX_TIMEOUT=5 SLURM_SRUN_TIMEOUT=100 slurm_nodes_srun -N "$nodes" -n "$n" \
  "$client" "$n" stallfence node3 >"$out" 2>&1 &
srun_pid=$!
for _ in $(seq 600); do
  [ "$(count "$out" 'entering fence')" -ge 12 ] && break
  sleep 0.1
done
entered=$(count "$out" 'entering fence')
killed=""
for pid in $(slurm_nodes_pids 3); do
  case $(cat "/proc/$pid/comm" 2>/dev/null) in
    slurmd | slurmstepd) kill -KILL "$pid" 2>/dev/null && killed="$killed $(cat "/proc/$pid/comm" 2>/dev/null)$pid" ;;
  esac
done
wait "$srun_pid"
status=$?
{ wait "$(slurm_nodes_slurmd_pid 3)"; } 2>/dev/null  # reaped quietly
took=$SECONDS
failures=$(count "$out" 'fence failed: PMIX_ERR')
if [ "$entered" = 12 ] && [ "$failures" = 12 ] && [ $status -ne 0 ] && [ $status -ne 124 ] && [ $status -ne 137 ]; then
  pass "node3 killed mid-fence: the 12 other ranks' fences fail ($(grep -o 'fence failed: [A-Z_]*' "$out" | sort -u | tr '\n' ' ')), srun ends ($status) after ${took}s"
else
  fail "node3 killed mid-fence: $entered entered, $failures failed, srun status $status after ${took}s" "$out"
fi

slurm_nodes_stop
left=$(netns_left "$tag")
if [ -n "$left" ]; then
  fail "namespaces left behind: $left"
fi
exit $failed
