#!/bin/bash
# trace_pmix.sh OUT_DIR [--full] -- COMMAND...: runs COMMAND (e.g. mpirun ... ./spawn) with the
# pmix_trace.c shim preloaded, one trace file per process in OUT_DIR/logs/<pid>.log, then prints
# a condensed view per process: the top-level PMIx calls (nested calls libpmix makes to its own
# API left out), the server up-calls, callbacks and event deliveries, without the PMIx_Get
# traffic of MPI_Init.  --full prints the raw traces instead.
#
# Example: trace_pmix.sh /tmp/trace -- mpirun --allow-run-as-root --oversubscribe -np 2 ./pubsub
# The command's own output goes to OUT_DIR/output.txt; its exit status is this script's.
set -uo pipefail

[[ $# -ge 3 ]] || { sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
out_dir=$1
shift
full=0
if [[ $1 == --full ]]; then
    full=1
    shift
fi
[[ $1 == -- ]] || { echo "trace_pmix.sh: expected -- before the command" >&2; exit 2; }
shift

source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
pmix_include=${PMIX_INCLUDE:-/usr/lib/x86_64-linux-gnu/pmix2/include}
mkdir -p "$out_dir"
out_dir=$(cd "$out_dir" && pwd)
rm -rf "$out_dir/logs"
mkdir -p "$out_dir/logs"
if [[ ! -e $out_dir/libpmix_trace.so || $source_dir/pmix_trace.c -nt $out_dir/libpmix_trace.so ]]; then
    cc -std=c11 -Wall -Wextra -shared -fPIC -O1 -I"$pmix_include" -o "$out_dir/libpmix_trace.so" \
        "$source_dir/pmix_trace.c" -ldl -lpthread || exit 2
fi

PMIX_TRACE_DIR=$out_dir/logs LD_PRELOAD=$out_dir/libpmix_trace.so${LD_PRELOAD:+:$LD_PRELOAD} \
    "$@" </dev/null >"$out_dir/output.txt" 2>&1
rc=$?

for log in "$out_dir"/logs/*.log; do
    echo "=================== $(head -n 1 "$log")"
    if [[ $full == 1 ]]; then
        tail -n +2 "$log"
    else
        # drop nested calls (and their returns/callbacks, which carry the same ids)
        nested_ids=$(grep -o '#[0-9]* [A-Za-z_]* \[nested\]' "$log" | awk '{print $1}' | sort -u)
        tail -n +2 "$log" | awk -v ids="$nested_ids" '
            BEGIN { n = split(ids, a, "\n"); for (i = 1; i <= n; ++i) skip[a[i]] = 1 }
            {
                for (i = 1; i <= NF; ++i) if ($i ~ /^#[0-9]+$/) { if ($i in skip) next; break }
                if ($0 ~ / PMIx_Get(_nb)?[( =]/ || $0 ~ / PMIx_Get(_nb)? callback/) next
                print
            }'
    fi
done
echo "=================== exit status $rc; output in $out_dir/output.txt"
exit $rc
