#!/usr/bin/env bash
# The main job: build the library and the reference launcher, then run a real
# 4-process job (the demo client: put, commit, collecting fence, get every
# peer's value, check it, finalize).
# Usage: tools/main-job.sh [pmixrun options] (default: -n 4)
set -euo pipefail
cd "$(dirname "$0")/.."
tools/deps.sh build
echo "main-job: building pmixrun and the demo client"
bazel build //tools/pmixrun //tools/demo:pmix_demo
args=("$@")
if [ ${#args[@]} -eq 0 ]; then args=(-n 4); fi
echo "main-job: bazel-bin/tools/pmixrun/pmixrun ${args[*]} bazel-bin/tools/demo/pmix_demo"
status=0
bazel-bin/tools/pmixrun/pmixrun "${args[@]}" bazel-bin/tools/demo/pmix_demo || status=$?
bazel shutdown >/dev/null 2>&1 || true
exit $status
