#!/bin/bash
# build.sh OUT_DIR [MPICC]: compiles the MPI test programs of this directory into OUT_DIR.
# MPICC defaults to $MPICC, then mpicc.  Prints the programs built; exits non-zero on any error.
set -euo pipefail

if [[ $# -lt 1 || $# -gt 2 ]]; then
    echo "usage: $0 OUT_DIR [MPICC]" >&2
    exit 2
fi
out_dir=$1
mpicc=${2:-${MPICC:-mpicc}}
source_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
programs=(allreduce ring spawn pubsub abort)

command -v "$mpicc" >/dev/null || { echo "build.sh: $mpicc not found" >&2; exit 1; }
mkdir -p "$out_dir"
for program in "${programs[@]}"; do
    "$mpicc" -std=c11 -O1 -g -Wall -Wextra -Werror \
        -o "$out_dir/$program" "$source_dir/$program.c"
    echo "built $out_dir/$program"
done
