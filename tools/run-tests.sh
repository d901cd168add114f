#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds everything, runs
# every test, then the sanitizer and fuzzing stages, and ends with
# "N passed, N failed". N counts test cases: the cases of each doctest
# binary, and 1 for any other test target; then 1 per test target of each
# sanitizer stage and 1 per fuzz target. A target that fails to build or
# run, a sanitizer finding and a fuzzing crash count as failed.
# docs/build.md, "Tests"; docs/security.md, "Sanitizers" and "Fuzzing".
set -uo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh test || exit 1
out=$(mktemp)
trap 'rm -f "$out"' EXIT
echo "run-tests: bazel test //..."
SECONDS=0
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
if [ "$bazel_status" -ne 0 ] && [ "$failed" -eq 0 ]; then failed=1; fi
stages_ok=$((bazel_status == 0))
echo "run-tests: the suite took ${SECONDS}s"

# ---- Sanitizers -------------------------------------------------------------
# A subset under each config, so that CI stays well inside its hour on two
# cores: most of the cost is building the library twice more, and the
# decoders of other processes' bytes are already under ASan and UBSan in the
# fuzzing stage below. These are the tests where the server's threads (loop,
# socket, cleaner, host callbacks) meet real clients, hostile peers and
# their progress threads. The whole suite passes under both configs
# (tools/sanitize.sh all). Why these, and what they take: docs/security.md,
# "Sanitizers".
sanitizer_tests=(
  //tests/transport:connection_test
  //tests/e2e:job_test
  //tests/e2e:security_test
  //tests/e2e:isolation_test
  //tests/e2e:lifecycle_test
  //tests/e2e:events_test
  //tests/e2e:openpmix_clients_test
  //tests/e2e:openpmix_server_test
  //tests/api:newer_helpers_c_test
  //tests/api:later_families_c_test
)
for config in asan tsan; do
  echo "run-tests: tools/sanitize.sh $config ${sanitizer_tests[*]}"
  SECONDS=0
  tools/sanitize.sh "$config" "${sanitizer_tests[@]}" 2>&1 | tee "$out"
  stage_status=${PIPESTATUS[0]}
  line=$(grep -E "^sanitize: $config [0-9]+ passed, [0-9]+ failed$" "$out" | tail -n 1)
  if [ -n "$line" ]; then
    p=$(echo "$line" | sed -E 's/.* ([0-9]+) passed.*/\1/')
    f=$(echo "$line" | sed -E 's/.* ([0-9]+) failed$/\1/')
  else
    p=0 f=1
  fi
  if [ "$stage_status" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
  passed=$((passed + p))
  failed=$((failed + f))
  [ "$stage_status" -eq 0 ] || stages_ok=0
  echo "run-tests: $config took ${SECONDS}s"
done

# ---- Fuzzing ----------------------------------------------------------------
# Every fuzz target, briefly: its seeds and reproducers under clang's ASan and
# UBSan, then a few seconds of new inputs.
fuzz_seconds=10
echo "run-tests: tools/fuzz.sh $fuzz_seconds"
SECONDS=0
tools/fuzz.sh "$fuzz_seconds" 2>&1 | tee "$out"
stage_status=${PIPESTATUS[0]}
f=0
while read -r _ target _ crashes; do
  # A target passes with no crash and no line saying it failed to build or run.
  if [ "${crashes#crashes=}" = 0 ] && ! grep -qE "^fuzz: $target (crashing|failed|exited)" "$out"; then
    passed=$((passed + 1))
  else
    f=$((f + 1))
  fi
done < <(grep -E '^fuzz: [a-z_]+ execs=[0-9]+ crashes=[0-9]+$' "$out")
if [ "$stage_status" -ne 0 ] && [ "$f" -eq 0 ]; then f=1; fi
failed=$((failed + f))
[ "$stage_status" -eq 0 ] || stages_ok=0
echo "run-tests: fuzzing took ${SECONDS}s"

bazel shutdown >/dev/null 2>&1 || true
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$stages_ok" -eq 1 ]
