#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds everything, runs
# every test, and ends with "N passed, N failed". N counts test cases: the
# cases of each doctest binary, and 1 for any other test target. A target
# that fails to build or run counts as failed.
set -uo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh test || exit 1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "run-tests: bazel test //..."
bazel test //... --test_output=errors --test_summary=short 2>&1 | tee "$out"
bazel_status=${PIPESTATUS[0]}

passed=0
failed=0
while read -r target rest; do
  log="bazel-testlogs/${target#//}"
  log="${log/://}/test.log"
  summary=""
  case "$rest" in
    *PASSED* | *FAILED\ in* | *FLAKY*) [ -f "$log" ] && summary=$(grep -E '^\[doctest\] test cases:' "$log" | tail -n 1) ;;
  esac
  if [ -n "$summary" ]; then
    p=$(echo "$summary" | sed -E 's/.*\| *([0-9]+) passed.*/\1/')
    f=$(echo "$summary" | sed -E 's/.*\| *([0-9]+) failed.*/\1/')
    passed=$((passed + p))
    failed=$((failed + f))
    case "$rest" in *PASSED*) ;; *) [ "$f" -eq 0 ] && failed=$((failed + 1)) ;; esac
  else
    case "$rest" in *PASSED*) passed=$((passed + 1)) ;; *) failed=$((failed + 1)) ;; esac
  fi
done < <(grep -E '^//[^ ]+ +.*(PASSED|FAILED|NO STATUS|TIMEOUT|FLAKY|INCOMPLETE)' "$out")

bazel shutdown >/dev/null 2>&1 || true
if [ "$bazel_status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$bazel_status" -eq 0 ]
