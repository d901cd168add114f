#!/usr/bin/env bash
# Issue 37: a PMIx client written in OpenPMIx 5.0's style (its macros call
# the functions newer releases export: tests/hosts/slurm/pmix_newer_client.c,
# built against our headers with PMIX_CXX_FUNCTION_MACROS) under our pmixrun
# -n 4 and under Debian's mpirun -np 4 on our library (mpirun's server and
# the ranks). Slurm runs it too (tests/hosts/slurm, slurm_test). Runs from
# the test's runfiles.
set -uo pipefail
lib=$(mktemp -d /tmp/newlib.XXXXXX)
tmp=$(mktemp -d /tmp/newt.XXXXXX)   # short: Unix socket paths live under TMPDIR
trap 'rm -rf "$lib" "$tmp"' EXIT
cp -L api/libpmix.so.2 api/libpmix-server.so.2 "$lib"/
export TMPDIR=$tmp
# Open MPI derives its prefix from where mpirun was found (see
# run_on_our_library.sh).
export PATH=/usr/bin:$PATH
client=$PWD/tests/hosts/slurm/pmix_newer_client
failures=0

# The client really calls the newer functions (not inline code).
for f in PMIx_Load_procid PMIx_Info_list_start PMIx_Info_list_convert PMIx_Argv_append_nosize PMIx_Value_get_number \
         PMIx_Proc_create PMIx_Value_free; do
  if ! nm -u "$client" | grep -qw "$f"; then
    echo "FAIL pmix_newer_client does not call $f"
    failures=$((failures + 1))
  fi
done

check() {  # check LAUNCHER OUT ERR STATUS
  local n
  n=$(grep -c '^pmix_newer_client: rank [0-3] of 4 ok$' "$2")
  if [ "$4" -ne 0 ] || [ "$n" != 4 ] || [ "$(grep '^pmix_newer_client: rank' "$2" | sort -u | wc -l)" != 4 ] ||
     [ "$(grep -c 'library PMIx-CXX' "$3")" != 4 ]; then
    echo "FAIL $1: status $4, $n of 4 ranks ok on our library"
    sed 's/^/  | /' "$2" "$3" | tail -n 40
    failures=$((failures + 1))
  else
    echo "PASS $1: 4 ranks of pmix_newer_client ok on our library"
  fi
}

timeout 120 tools/pmixrun/pmixrun -n 4 "$client" 4 >"$tmp/pmixrun.out" 2>"$tmp/pmixrun.err"
check "pmixrun -n 4" "$tmp/pmixrun.out" "$tmp/pmixrun.err" $?

LD_LIBRARY_PATH=$lib timeout 120 mpirun --allow-run-as-root --oversubscribe -np 4 -x LD_LIBRARY_PATH \
  "$client" 4 >"$tmp/mpirun.out" 2>"$tmp/mpirun.err"
check "mpirun -np 4" "$tmp/mpirun.out" "$tmp/mpirun.err" $?

echo "$([ $failures -eq 0 ] && echo PASS || echo "FAIL ($failures)")"
exit $failures
