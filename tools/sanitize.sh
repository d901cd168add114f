#!/usr/bin/env bash
# The test suite under the sanitizers (docs/security.md, "Sanitizers"):
#   tools/sanitize.sh [asan|tsan|all] [bazel test patterns...]
# runs `bazel test --config=<config>` over the patterns (default //...) for
# each config asked (default all: asan, then tsan), and ends with one line
# per config: "sanitize: <config> N passed, N failed", counting test
# targets (a target that fails to build counts as failed). Each config
# builds into an output directory of its own (--platform_suffix), so the
# normal build is left alone, and leaves the convenience symlinks (bazel-bin,
# bazel-testlogs) pointing at the normal build: tools that use bazel-bin
# (install.sh, main-job.sh) never pick up an instrumented build. Exits
# non-zero if any target failed.
set -uo pipefail
cd "$(dirname "$0")/.."

which=${1:-all}
case "$which" in
  asan | tsan) configs=("$which") ;;
  all) configs=(asan tsan) ;;
  *) echo "usage: tools/sanitize.sh [asan|tsan|all] [bazel test patterns...]" >&2; exit 2 ;;
esac
shift $(($# > 0 ? 1 : 0))
patterns=("$@")
[ ${#patterns[@]} -gt 0 ] || patterns=(//...)

out=$(mktemp)
trap 'rm -f "$out"' EXIT
summary=()
status=0
for config in "${configs[@]}"; do
  echo "sanitize: bazel test --config=$config ${patterns[*]}"
  extra=()
  # The suppressions (TSan: what it cannot see in uninstrumented CAF; LSan:
  # leaks inside foreign libraries) need an absolute path, which .bazelrc
  # cannot give.
  if [ "$config" = asan ]; then
    extra=("--test_env=LSAN_OPTIONS=suppressions=$PWD/tools/lsan.supp")
  fi
  if [ "$config" = tsan ]; then
    extra=("--test_env=TSAN_OPTIONS=halt_on_error=0:second_deadlock_stack=1:die_after_fork=0:suppressions=$PWD/tools/tsan.supp")
  fi
  bazel test --config="$config" "${extra[@]}" -k --build_tests_only --symlink_prefix=/ --test_output=errors --test_summary=short \
    -- "${patterns[@]}" 2>&1 | tee "$out"
  bazel_status=${PIPESTATUS[0]}
  passed=$(grep -cE '^//[^ ]+ +(\(cached\) )?PASSED' "$out")
  failed=$(grep -cE '^//[^ ]+ +.*(FAILED|NO STATUS|TIMEOUT|FLAKY|INCOMPLETE)' "$out")
  # A build failure leaves targets without a status line: count one. (Exit
  # status 4 only says the patterns held no test.)
  if [ "$bazel_status" -ne 0 ] && [ "$bazel_status" -ne 4 ] && [ "$failed" -eq 0 ]; then failed=1; fi
  if [ "$failed" -ne 0 ]; then
    status=1
    echo "sanitize: $config test logs in $(bazel info --config="$config" bazel-testlogs 2>/dev/null)"
  fi
  summary+=("sanitize: $config $passed passed, $failed failed")
done
printf '%s\n' "${summary[@]}"
exit $status
