#!/usr/bin/env bash
# Builds every fuzz target (tests/fuzz/*_fuzz.cpp) with clang 14, libFuzzer,
# ASan and UBSan, and runs each, one after the other, for SECONDS seconds on
# a copy of its seed corpus (the committed corpus is never modified).
# docs/security.md, "Fuzzing".
#
# Usage: tools/fuzz.sh SECONDS [TARGET...]     (default: every target)
#
# Prints exactly one line per target:
#   fuzz: <target> execs=<n> crashes=<k>
# followed, when the target crashed, by a line with the directory holding the
# crashing inputs (and when it failed to build or run, a line saying so).
# Exits non-zero if any target crashed or failed to build or run.
#
# The build uses an output base of its own (PMIX_FUZZ_OUTPUT_BASE, default
# ~/.cache/bazel-fuzz/<hash of this checkout>) and no convenience symlinks,
# so it never touches the normal gcc build; the Bazel server it starts is
# shut down at the end. As root, missing Debian packages are installed
# (tools/deps.sh fuzz: the build's, clang-14, libclang-rt-14-dev,
# libfuzzer-14-dev).
set -uo pipefail

all_targets=(framing server_envelope client_reply data_unpack regex openpmix openpmix_client)

usage() {
  echo "usage: $0 SECONDS [TARGET...]   targets: ${all_targets[*]}" >&2
  exit 2
}
[ $# -ge 1 ] || usage
seconds=$1
shift
[[ "$seconds" =~ ^[0-9]+$ ]] && [ "$seconds" -ge 1 ] || usage
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all_targets[@]}")
for t in "${targets[@]}"; do
  [[ " ${all_targets[*]} " == *" $t "* ]] || usage
done

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 1

# ---- Debian packages ---------------------------------------------------------
# tools/deps.sh fuzz: the build's packages, clang-14, libclang-rt-14-dev and
# libfuzzer-14-dev; as root it installs what is missing, otherwise it names
# them and fails.
tools/deps.sh fuzz >&2 || exit 1

# ---- build --------------------------------------------------------------------
output_base=${PMIX_FUZZ_OUTPUT_BASE:-$HOME/.cache/bazel-fuzz/$(printf '%s' "$root" | md5sum | cut -c1-32)}
mkdir -p "$output_base"
bazel_cmd=(bazel "--output_base=$output_base")
work=$(mktemp -d /tmp/pmix-fuzz.XXXXXX)
trap '"${bazel_cmd[@]}" shutdown >/dev/null 2>&1' EXIT

bin_dir=$("${bazel_cmd[@]}" info --config=fuzz bazel-bin 2>"$work/info.log") || {
  echo "fuzz.sh: bazel info failed (log: $work/info.log)" >&2
  cat "$work/info.log" >&2
  exit 1
}

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:symbolize=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export PMIX_CXX_VERBOSE=${PMIX_CXX_VERBOSE:-0}  # the library's own error lines stay out of the logs

failed=0
for t in "${targets[@]}"; do
  log="$work/$t"
  mkdir -p "$log"
  if ! "${bazel_cmd[@]}" build --config=fuzz --symlink_prefix=/ "//tests/fuzz:${t}_fuzz" >"$log/build.log" 2>&1; then
    echo "fuzz: $t execs=0 crashes=0"
    echo "fuzz: $t failed to build (log: $log/build.log)"
    failed=1
    continue
  fi
  # A copy of the seeds (and the committed crash reproducers): libFuzzer adds
  # what it finds to the first corpus directory.
  mkdir -p "$log/corpus" "$log/artifacts"
  cp -r "tests/fuzz/corpus/$t/." "$log/corpus/"
  [ -d "tests/fuzz/regressions/$t" ] && cp -r "tests/fuzz/regressions/$t/." "$log/corpus/"
  "$bin_dir/tests/fuzz/${t}_fuzz" "$log/corpus" \
    -max_total_time="$seconds" -print_final_stats=1 -timeout=25 -rss_limit_mb=2048 \
    -artifact_prefix="$log/artifacts/" >"$log/fuzz.log" 2>&1
  rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *\([0-9]*\).*/\1/p' "$log/fuzz.log" | tail -1)
  if [ -z "$execs" ]; then  # no final stats (killed): the last progress line
    execs=$(sed -n 's/^#\([0-9][0-9]*\).*/\1/p' "$log/fuzz.log" | tail -1)
  fi
  crashes=$(find "$log/artifacts" -type f | wc -l)
  echo "fuzz: $t execs=${execs:-0} crashes=$crashes"
  if [ "$crashes" -gt 0 ]; then
    echo "fuzz: $t crashing inputs in $log/artifacts (log: $log/fuzz.log)"
    failed=1
  elif [ $rc -ne 0 ]; then
    echo "fuzz: $t exited with $rc (log: $log/fuzz.log)"
    failed=1
  fi
done

if [ $failed -eq 0 ]; then
  rm -rf "$work"
else
  echo "fuzz: logs in $work" >&2
fi
exit $failed
