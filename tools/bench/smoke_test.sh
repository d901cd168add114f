#!/usr/bin/env bash
# CI: the side-by-side benchmark in its short mode, only to prove that both
# builds of the programs still run (its figures are not checked).
set -euo pipefail
bin="$TEST_SRCDIR/$TEST_WORKSPACE/tools/bench"
/usr/bin/python3 "$bin/compare.py" --bin "$bin" --short --out "$TEST_TMPDIR/bench"
test -s "$TEST_TMPDIR/bench/report.md"
grep -q "<polyline" "$TEST_TMPDIR/bench/fence.svg"
