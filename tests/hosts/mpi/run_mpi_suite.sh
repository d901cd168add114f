#!/bin/bash
# run_mpi_suite.sh: runs the MPI test programs of this directory (allreduce, ring, spawn, pubsub,
# abort) under a launcher for every process count in a list, checks exit status and output, and
# prints one PASS/FAIL/SKIP line per case and a summary.  Exits 0 when every case passed, 1 when
# any failed, 2 on a usage or setup error.
#
# usage: run_mpi_suite.sh BIN_DIR [--pmix-lib-dir DIR] [--launcher mpirun|pmixrun|PATH]
#                         [--launcher-arg ARG]... [--np "1 2 4 8 16"] [--only "spawn pubsub"]
#                         [--timeout SECS] [--budget SECS] [--log-dir DIR]
#
#   BIN_DIR         holds the built programs; when it lacks any of them, build.sh builds all of
#                   them with mpicc into a scratch directory, which is used instead.
#   --pmix-lib-dir  prepended to LD_LIBRARY_PATH for the launcher and (through it) the ranks;
#                   must hold libpmix.so.2 (PMIx-CXX's also loads libpmix-server.so.2 from there),
#                   and Open MPI's mca_pmix_ext3x.so must resolve libpmix.so.2 to it.
#   --launcher      mpirun (default) runs "mpirun --allow-run-as-root --oversubscribe -np N";
#                   pmixrun runs "pmixrun -n N" (which sets up Open MPI's direct launch itself);
#                   the style follows the command's base name.
#   --launcher-arg  one extra argument placed after the launcher's own (repeatable).
#   --np            process counts; abort skips N < 2.
#   --only          the programs to run (default: all five).
#   --timeout       seconds per case before it is killed (default 120).
#   --budget        seconds for the whole suite; cases left when it is spent fail unrun (default 0:
#                   no limit).
#   --log-dir       keeps every case's output there (default: a scratch directory that is removed
#                   when everything passed).
#
# The checks do not depend on the launcher's messages: each program prints "OK <name> ..." lines
# per rank and a final "OK <name> all ..." line, "FAIL <name>: ..." on a failed check, and exits
# non-zero.  Only the abort case has one extra, launcher-specific check: under mpirun, Open MPI's
# "MPI_ABORT was invoked on rank 1 in communicator MPI_COMM_WORLD / with errorcode 7." text (an
# abort run that lost that text to a known Open MPI race is repeated; see SHOW_HELP_RACE).
set -uo pipefail

readonly ALL_PROGRAMS=(allreduce ring spawn pubsub abort)
readonly SPAWN_CHILDREN=2
readonly ABORT_CODE=7
# Open MPI 4.1.4's mpirun loses a rank's show_help text now and then (a quarter of the -np 2 abort
# runs on one VM, half on another: 19 of 40 with our library and 19 of 40 with OpenPMIx's on
# 2026-12-07): the rank sends it with PMIx_Log_nb, the log up-call runs on the
# PMIx server's thread, and ORTE's send-to-self (orte/mca/rml/oob/rml_oob_send.c) queues the
# callback that frees the buffer before it copies the buffer, so mpirun prints "ORTE_ERROR_LOG:
# Data unpack would read past end of buffer" (or "Out of resource") "in file .../show_help.c at
# line 501" instead of the message.  Such an abort run (every other check passed) is repeated, up
# to ABORT_MESSAGE_ATTEMPTS runs in all: at one loss in two, 5 runs all lost it 3% of the time, and
# the suite runs several such cases (a CI run failed so); 15 runs all lose it 0.003% of the time.
# A library whose message never arrives whole still fails: every run then shows the same line.
readonly SHOW_HELP_RACE='ORTE_ERROR_LOG: .* in file .*show_help\.c at line'
readonly ABORT_MESSAGE_ATTEMPTS=15
SOURCE_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly SOURCE_DIR

usage() {
    sed -n '7,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

die() {
    echo "run_mpi_suite.sh: $*" >&2
    exit 2
}

# ---------------------------------------------------------------------------------------------
# arguments

[[ $# -ge 1 ]] || usage
bin_dir=$1
shift
pmix_lib_dir=""
launcher=mpirun
launcher_args=()
np_list="1 2 4 8 16"
only="${ALL_PROGRAMS[*]}"
case_timeout=120
budget=0
log_dir=""
while [[ $# -gt 0 ]]; do
    [[ $# -ge 2 ]] || usage
    case $1 in
        --pmix-lib-dir) pmix_lib_dir=$2 ;;
        --launcher) launcher=$2 ;;
        --launcher-arg) launcher_args+=("$2") ;;
        --np) np_list=$2 ;;
        --only) only=$2 ;;
        --timeout) case_timeout=$2 ;;
        --budget) budget=$2 ;;
        --log-dir) log_dir=$2 ;;
        *) usage ;;
    esac
    shift 2
done

for n in $np_list; do
    [[ $n =~ ^[1-9][0-9]*$ ]] || die "--np: '$n' is not a positive integer"
done
[[ $case_timeout =~ ^[1-9][0-9]*$ ]] || die "--timeout: '$case_timeout' is not a positive integer"
[[ $budget =~ ^[0-9]+$ ]] || die "--budget: '$budget' is not a non-negative integer"
for program in $only; do
    [[ " ${ALL_PROGRAMS[*]} " == *" $program "* ]] || die "--only: unknown program '$program'"
done

launcher_path=$(command -v "$launcher") || die "launcher '$launcher' not found"
case $(basename "$launcher_path") in
    mpirun* | mpiexec* | orterun*) launcher_style=mpirun ;;
    pmixrun*) launcher_style=pmixrun ;;
    *) die "cannot tell the command-line style of launcher '$launcher' (mpirun or pmixrun)" ;;
esac

run_env=()
if [[ -n $pmix_lib_dir ]]; then
    pmix_lib_dir=$(cd "$pmix_lib_dir" 2>/dev/null && pwd) || die "--pmix-lib-dir: no such directory"
    [[ -e $pmix_lib_dir/libpmix.so.2 ]] || die "--pmix-lib-dir: $pmix_lib_dir has no libpmix.so.2"
    run_env+=("LD_LIBRARY_PATH=$pmix_lib_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
fi
# Under pmixrun nothing more is needed: pmixrun itself gives Open MPI 4.1 ranks what they need for a
# direct launch (OMPI_MCA_schizo=^orte, and OMPI_MCA_mpi_yield_when_idle=1 when oversubscribed;
# tools/pmixrun/README.md), as a user's job would run.

scratch=$(mktemp -d "${TMPDIR:-/tmp}/mpi_suite.XXXXXX") || die "mktemp failed"
keep_logs=0
if [[ -n $log_dir ]]; then
    mkdir -p "$log_dir" || die "cannot create --log-dir $log_dir"
    log_dir=$(cd "$log_dir" && pwd)
    keep_logs=1
else
    log_dir=$scratch/logs
    mkdir -p "$log_dir"
fi
# shellcheck disable=SC2317  # called through the EXIT trap
cleanup() {
    if [[ $keep_logs == 1 ]]; then
        rm -rf "${scratch:?}/bin" "${scratch:?}/run"
        [[ $log_dir == "$scratch"/* ]] || rm -rf "$scratch"
    else
        rm -rf "$scratch"
    fi
}
trap cleanup EXIT

# ---------------------------------------------------------------------------------------------
# programs

have_all=1
for program in "${ALL_PROGRAMS[@]}"; do
    [[ -x $bin_dir/$program ]] || have_all=0
done
if [[ $have_all == 0 ]]; then
    echo "note: $bin_dir lacks the programs; building them into $scratch/bin"
    if ! "$SOURCE_DIR/build.sh" "$scratch/bin" >"$scratch/build.log" 2>&1; then
        cat "$scratch/build.log" >&2
        die "build failed"
    fi
    bin_dir=$scratch/bin
fi
bin_dir=$(cd "$bin_dir" && pwd)
mkdir -p "$scratch/run"

echo "launcher: $launcher_path ($launcher_style style)${launcher_args[*]:+ extra args: ${launcher_args[*]}}"
ext3x=$(find /usr/lib -path '*/openmpi/lib/openmpi3/mca_pmix_ext3x.so' 2>/dev/null | head -n 1)
if [[ -n $ext3x ]]; then
    resolved=$(env "${run_env[@]}" ldd "$ext3x" 2>/dev/null | awk '$1 == "libpmix.so.2" { print $3 }')
    echo "libpmix.so.2 seen by Open MPI's pmix component: ${resolved:-unknown}"
    if [[ -n $pmix_lib_dir && $resolved != "$pmix_lib_dir/libpmix.so.2" ]]; then
        die "Open MPI would not load $pmix_lib_dir/libpmix.so.2 (it resolves ${resolved:-nothing})"
    fi
fi
if [[ -n $pmix_lib_dir && ! -e $pmix_lib_dir/libpmix-server.so.2 ]]; then
    echo "note: $pmix_lib_dir has no libpmix-server.so.2 (PMIx-CXX's server side needs it)"
fi
echo "programs: $bin_dir; logs: $log_dir; timeout per case: ${case_timeout}s"

# ---------------------------------------------------------------------------------------------
# running one case

launch_command() { # N -> launch_cmd array
    case $launcher_style in
        mpirun) launch_cmd=("$launcher_path" --allow-run-as-root --oversubscribe -np "$1") ;;
        pmixrun) launch_cmd=("$launcher_path" -n "$1") ;;
    esac
    launch_cmd+=("${launcher_args[@]}")
}

# PIDs of processes running BIN_DIR/PROGRAM (ranks the launcher left behind)
leftover_pids() {
    local program=$1 pid
    find /proc/[0-9]*/exe -maxdepth 0 \( -lname "$bin_dir/$program" -o \
        -lname "$bin_dir/$program (deleted)" \) 2>/dev/null |
        while IFS=/ read -r _ _ pid _; do echo "$pid"; done
}

# The ranks (numbers) of the lines matching REGEX (with one group capturing the rank) in LOG are
# exactly 0..COUNT-1?  Sets missing_text when not.
check_rank_lines() {
    local log=$1 regex=$2 count=$3 what=$4
    local found expected
    found=$(sed -nE "s/.*$regex.*/\\1/p" "$log" | sort -n | uniq | tr '\n' ' ')
    expected=$(seq 0 $((count - 1)) | tr '\n' ' ')
    if [[ $found != "$expected" ]]; then
        missing_text="$what OK lines for ranks [${found% }], want [${expected% }]"
        return 1
    fi
    return 0
}

# Checks the output and exit status of PROGRAM run with N processes; sets reason on failure.
check_case() {
    local program=$1 n=$2 rc=$3 log=$4
    reason=""
    missing_text=""
    show_help_race=0
    if grep -q "FAIL $program" "$log"; then
        reason="the program reported FAIL"
    fi
    case $program in
        abort)
            if [[ $rc != "$ABORT_CODE" ]]; then
                reason="${reason:+$reason; }exit status $rc, want $ABORT_CODE"
            fi
            if [[ $launcher_style == mpirun ]]; then
                if ! grep -q "MPI_ABORT was invoked on rank 1 in communicator MPI_COMM_WORLD" "$log" ||
                    ! grep -q "with errorcode $ABORT_CODE\." "$log"; then
                    [[ -z $reason ]] && grep -q "$SHOW_HELP_RACE" "$log" && show_help_race=1
                    reason="${reason:+$reason; }no Open MPI MPI_ABORT message for rank 1, errorcode $ABORT_CODE"
                fi
            fi
            ;;
        spawn)
            [[ $rc == 0 ]] || reason="${reason:+$reason; }exit status $rc"
            check_rank_lines "$log" "OK spawn parent rank=([0-9]+) parents=$n( |\$)" "$n" parent ||
                reason="${reason:+$reason; }$missing_text"
            check_rank_lines "$log" "OK spawn child rank=([0-9]+) children=$SPAWN_CHILDREN parents=$n( |\$)" \
                "$SPAWN_CHILDREN" child || reason="${reason:+$reason; }$missing_text"
            grep -q "OK spawn all parents=$n children=$SPAWN_CHILDREN merged=$((n + SPAWN_CHILDREN))" "$log" ||
                reason="${reason:+$reason; }no final OK line"
            ;;
        *)
            [[ $rc == 0 ]] || reason="${reason:+$reason; }exit status $rc"
            check_rank_lines "$log" "OK $program rank=([0-9]+) size=$n( |\$)" "$n" rank ||
                reason="${reason:+$reason; }$missing_text"
            grep -qE "OK $program all ranks=$n( |\$)" "$log" ||
                reason="${reason:+$reason; }no final OK line"
            ;;
    esac
    [[ -z $reason ]]
}

show_log() {
    local log=$1 lines
    lines=$(wc -l <"$log")
    echo "    ---- output ($lines lines) ----"
    if ((lines > 300)); then
        head -n 60 "$log" | sed 's/^/    | /'
        echo "    | ... ($((lines - 260)) lines left out) ..."
        tail -n 200 "$log" | sed 's/^/    | /'
    else
        sed 's/^/    | /' "$log"
    fi
    echo "    ---- end of output ----"
}

passed=0
failed=0
skipped=0
failed_cases=()
suite_start=$(date +%s.%N)

elapsed_since() { # start -> seconds with one decimal
    awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'
}

run_case() {
    local program=$1 n=$2
    local args=()
    [[ $program == allreduce ]] && args=("$n")
    local log=$log_dir/$program.np$n.log
    local name="$program N=$n"

    if ((budget > 0)) && awk -v s="$(elapsed_since "$suite_start")" -v b="$budget" 'BEGIN { exit !(s >= b) }'; then
        echo "FAIL $name (not run: suite budget of ${budget}s spent)"
        failed=$((failed + 1))
        failed_cases+=("$name")
        return
    fi

    launch_command "$n"
    local attempt=1 start rc seconds earlier_logs=""
    while :; do
        {
            echo "# $(date -u +%FT%TZ) ${run_env[*]} ${launch_cmd[*]} $bin_dir/$program ${args[*]}"
        } >"$log"
        start=$(date +%s.%N)
        (cd "$scratch/run" && exec env "${run_env[@]}" timeout -k 10 "$case_timeout" \
            "${launch_cmd[@]}" "$bin_dir/$program" "${args[@]}") </dev/null >>"$log" 2>&1
        rc=$?
        seconds=$(elapsed_since "$start")

        reason=""
        show_help_race=0
        if [[ $rc == 124 || $rc == 137 ]]; then
            reason="timed out after ${case_timeout}s (status $rc)"
        else
            check_case "$program" "$n" "$rc" "$log"
        fi
        if [[ $show_help_race == 1 && $attempt -lt $ABORT_MESSAGE_ATTEMPTS ]]; then
            mv "$log" "$log.attempt$attempt"
            earlier_logs+=" $log.attempt$attempt"
            attempt=$((attempt + 1))
            continue
        fi
        break
    done
    local note=""
    ((attempt > 1)) && note="; run $attempt times: Open MPI lost its abort message to the show_help race"

    # ranks still alive after the launcher returned: wait a little, then kill them by PID
    local leftovers tries=0
    leftovers=$(leftover_pids "$program")
    while [[ -n $leftovers && $tries -lt 10 ]]; do
        sleep 1
        tries=$((tries + 1))
        leftovers=$(leftover_pids "$program")
    done
    if [[ -n $leftovers ]]; then
        reason="${reason:+$reason; }processes left running after the launcher exited: ${leftovers//$'\n'/ }"
        # shellcheck disable=SC2086
        kill -9 $leftovers 2>/dev/null
    fi

    if [[ -z $reason ]]; then
        echo "PASS $name (${seconds}s$note)"
        passed=$((passed + 1))
    else
        echo "FAIL $name ($reason; ${seconds}s$note; log $log${earlier_logs:+, earlier runs:$earlier_logs})"
        show_log "$log"
        failed=$((failed + 1))
        failed_cases+=("$name")
    fi
}

for program in $only; do
    for n in $np_list; do
        if [[ $program == abort && $n -lt 2 ]]; then
            echo "SKIP abort N=$n (needs N>=2)"
            skipped=$((skipped + 1))
            continue
        fi
        run_case "$program" "$n"
    done
done

total_seconds=$(elapsed_since "$suite_start")
echo "SUMMARY: $passed passed, $failed failed, $skipped skipped in ${total_seconds}s" \
    "(launcher $launcher_style${pmix_lib_dir:+, libpmix from $pmix_lib_dir})"
if ((failed > 0)); then
    echo "failed: ${failed_cases[*]}"
    keep_logs=1
    echo "logs kept in $log_dir"
    exit 1
fi
exit 0
