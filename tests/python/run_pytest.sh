#!/usr/bin/env bash
# The Python module's tests (docs/python.md): pytest under /usr/bin/python3,
# importing the module Bazel built. conftest.py ends the log with a line in
# doctest's format, which tools/run-tests.sh counts.
set -uo pipefail
root=$PWD
export PYTHONPATH=$root/python
export PMIX_PY_TEST_ROOT=$root
export PYTHONDONTWRITEBYTECODE=1
exec /usr/bin/python3 -m pytest -p no:cacheprovider -q -rfE "$root/tests/python" "$@"
