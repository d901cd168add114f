#!/bin/sh
# The fault soak (issue 18, docs/fault-injection.md): N seeded random plans
# (default 10000) under pmixrun with tests/faults/fault_client, 3 ranks each.
# Every run must end with "faults: ok"; each failure is printed with its
# replay command. Build first:
#   bazel build --disk_cache=/work/.bazel-disk-cache //tools/pmixrun //tests/faults:fault_client
# Usage: tools/faults/soak.sh [N] [RATE] [FIRST_SEED]
set -u
n=${1:-10000}
rate=${2:-0.1}
first=${3:-1}
root=$(cd "$(dirname "$0")/../.." && pwd)
bin=$root/bazel-bin
export PMIX_CXX_SERVER_LIBRARY=$bin/api/libpmix-server.so.2
fails=0
seed=$first
last=$((first + n - 1))
start=$(date +%s)
while [ $seed -le $last ]; do
  out=$(timeout 120 "$bin/tools/pmixrun/pmixrun" -n 3 --timeout 60 --faults "random:rate=$rate" --seed $seed \
    "$bin/tests/faults/fault_client" 2>&1)
  if [ $? -ne 0 ]; then
    fails=$((fails + 1))
    echo "seed $seed FAILED:"
    echo "$out" | grep "pmixrun: faults:"
  fi
  seed=$((seed + 1))
done
echo "soak: $n plans (random:rate=$rate, seeds $first..$last), $fails failed, $(($(date +%s) - start)) s"
[ $fails -eq 0 ]
