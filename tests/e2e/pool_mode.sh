#!/usr/bin/env bash
# Runs an end-to-end test binary with the server's actors on CAF's worker
# pool beside a socket thread (PMIX_CXX_LOOP=0) instead of the default loop
# thread, so both thread set-ups pass the same tests.
set -euo pipefail
export PMIX_CXX_LOOP=0
exec "$@"
