#!/usr/bin/env bash
# tools/multinode/hosts_bench.sh [--nodes "4 8"] [--ppn "4"] [--iters 50] [--rounds 3]
#
# The data fence of MPI_Init under real hosts across network-namespace
# nodes (--ppn ranks per node, 4 by default; a row for each nodes x ppn):
# every rank Puts a 64-byte key and Commits, all enter a collecting fence,
# every rank times every fence (bench_client datafence; the medians count
# every rank's every fence). Under
#   (a) Debian's mpirun on OpenPMIx (the program built against OpenPMIx),
#   (b) the same mpirun on our library (LD_LIBRARY_PATH; our program),
#   (c) srun --mpi=pmix on a Slurm cluster with our library (slurm_nodes.sh)
#       and on one left on OpenPMIx,
#   (d) pmixrun --daemons with a pmixd per node (demo.sh),
# interleaved round by round (each round runs every setup once, in turn; a
# Slurm cluster is started for each of its runs, outside the timing), and
# the network round trip between two of the namespaces (fence_bench.sh
# --rtt-only) as the limit. Needs root, Open MPI, Slurm and munge; build
# first: bazel build //tools/bench:bench_client //tools/bench:bench_client_openpmix
# //tools/pmixd //tools/pmixrun //api:libpmix.so.2 //api:libpmix-server.so.2.
# Prints a Markdown table (docs/multinode.md has a run); exits 1 if a run
# failed (its cell is "-").
set -uo pipefail
nodes_list="4 8"
ppn_list=4
iters=50
rounds=3
while [ $# -gt 0 ]; do
  case $1 in
    --nodes) nodes_list=$2; shift 2 ;;
    --ppn) ppn_list=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) sed -n '2,2p' "$0" >&2; exit 2 ;;
  esac
done
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
# HOSTS_BENCH_BIN: where the built files are (bazel-bin's layout; a Bazel
# test's runfiles have it too)
bin=${HOSTS_BENCH_BIN:-$root/bazel-bin}
ours=$bin/tools/bench/bench_client
theirs=$bin/tools/bench/bench_client_openpmix
for f in "$ours" "$theirs" "$bin/tools/pmixd/pmixd" "$bin/tools/pmixrun/pmixrun" "$bin/api/libpmix.so.2"; do
  [ -x "$f" ] || [ -f "$f" ] || { echo "hosts_bench: build $f first" >&2; exit 2; }
done
export PATH=/usr/sbin:/usr/bin:/sbin:$PATH
export PMIXRUN=$bin/tools/pmixrun/pmixrun PMIXD=$bin/tools/pmixd/pmixd  # for demo.sh
# shellcheck source=tools/multinode/netns.sh
. "$here/netns.sh"
# shellcheck source=tests/hosts/slurm/slurm_cluster.sh
. "$root/tests/hosts/slurm/slurm_cluster.sh"
# shellcheck source=tests/hosts/slurm/slurm_nodes.sh
. "$root/tests/hosts/slurm/slurm_nodes.sh"

work=$(mktemp -d /tmp/hbn.XXXXXX)
lib=$work/lib
mkdir -p "$lib"
cp -L "$bin/api/libpmix.so.2" "$bin/api/libpmix-server.so.2" "$lib"/
cleanup() {
  slurm_nodes_stop
  netns_down
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# median of the "sample dfence_us X" lines of FILE (every rank's every fence)
median() {
  sed -n 's/^sample dfence_us //p' "$1" | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print v[int((NR + 1) / 2)] }'
}
# run NAME FILE CMD...: the command (each bounds its own time); its median appended to NAME's list
declare -A results
failed=0
run() {
  local name=$1 out=$2
  shift 2
  "$@" >"$out" 2>&1
  local m
  m=$(median "$out")
  if [ "$m" = - ]; then
    failed=1
    echo "hosts_bench: $name failed:" >&2
    tail -5 "$out" >&2
  fi
  results[$name]="${results[$name]:-} $m"
}
med_of() { echo "$1" | tr ' ' '\n' | grep -v '^$' | grep -v '^-$' | sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else print v[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a == "-" || b == "-" || b == 0) print "-"; else printf "%.2f", a / b }'; }

rtt=$("$here/fence_bench.sh" --rtt-only 2>/dev/null | sed -n 's/^rtt_us //p')
echo "| nodes x ranks | (a) mpirun, OpenPMIx (us) | (b) mpirun, ours (us) | b/a | (c) srun, OpenPMIx (us) | (c) srun, ours (us) | ours/OpenPMIx | (d) pmixrun + pmixd (us) | d/a |"
echo "|---|---|---|---|---|---|---|---|---|"
for nodes in $nodes_list; do
for ppn in $ppn_list; do
  n=$((nodes * ppn))
  tag=$(printf 'hb%x' $$)
  results=()
  # mpirun: its own namespaces
  netns_up "$tag" "$nodes" 10.75.0 || exit 1
  netns_mpirun_kit "$work/mpi" "$tag" "$nodes" 10.75.0 "$ppn" || exit 1
  for r in $(seq "$rounds"); do
    run a "$work/a.out" timeout 300 "$work/mpi/bin/mpirun" --allow-run-as-root -np "$n" "$theirs" datafence "$iters"
    LD_LIBRARY_PATH=$lib run b "$work/b.out" timeout 300 "$work/mpi/bin/mpirun" --allow-run-as-root -np "$n" "$ours" datafence "$iters"
    MULTINODE_SUBNET=10.74.0 PMIXRUN_ARGS="--quiet --timeout 200" run d "$work/d.out" timeout 300 "$here/demo.sh" "$nodes" "$ppn" "$ours" datafence "$iters"
  done
  netns_down
  # Slurm: a cluster on each library in turn, each round
  for r in $(seq "$rounds"); do
    for lib_of in openpmix ours; do
      rm -rf "$work/s"
      mkdir -p "$work/s"
      if [ $lib_of = ours ]; then
        slurm_nodes_start "$work/s" "$tag" "$nodes" 10.78.0 "$lib" || exit 1
        prog=$ours
      else
        slurm_nodes_start "$work/s" "$tag" "$nodes" 10.78.0 || exit 1
        prog=$theirs
      fi
      run "c$lib_of" "$work/c.out" slurm_nodes_srun -N "$nodes" -n "$n" "$prog" datafence "$iters"
      slurm_nodes_stop
    done
  done
  a=$(med_of "${results[a]}") b=$(med_of "${results[b]}") d=$(med_of "${results[d]}")
  co=$(med_of "${results[copenpmix]}") cu=$(med_of "${results[cours]}")
  echo "| $nodes x $ppn | $a | $b | $(ratio "$b" "$a") | $co | $cu | $(ratio "$cu" "$co") | $d | $(ratio "$d" "$a") |"
done
done
echo
echo "Network round trip between two of the namespaces (TCP, 64 bytes, median of 200): ${rtt:-?} us."
echo "Medians over every rank's every fence ($iters fences per run, $rounds runs per setup, interleaved)."
exit $failed
