#!/usr/bin/env bash
# The Python module's tests (docs/python.md): pytest under /usr/bin/python3,
# importing the module Bazel built. conftest.py ends the log with a line in
# doctest's format, which tools/run-tests.sh counts.
set -uo pipefail
root=$PWD
export PYTHONPATH=$root/python
export PMIX_PY_TEST_ROOT=$root
export PYTHONDONTWRITEBYTECODE=1
# Under the asan and tsan configs (docs/security.md, "Sanitizers") the module
# and the C programs are instrumented, the interpreter is not: the
# sanitizer's runtime must be loaded first, so it is preloaded (into every
# process of the test, which includes Python processes started by C ones),
# with libstdc++ under ASan (loaded only later, with the module, it would
# leave ASan's __cxa_throw interceptor without the real function).
# Leaks are not checked here: the interpreter frees little at exit, and a
# suppression naming it would match every stack of the process, ours too.
# The same C programs and library run with leak checking in tests/e2e.
preload=$(tests/support/sanitizer_runtime.sh "$root/python/pmix.so")
if [ -n "$preload" ]; then
  export LD_PRELOAD="$preload${LD_PRELOAD:+:$LD_PRELOAD}"
  export ASAN_OPTIONS="${ASAN_OPTIONS:-}:detect_leaks=0"
fi
exec /usr/bin/python3 -m pytest -p no:cacheprovider -q -rfE "$root/tests/python" "$@"
