#!/usr/bin/env bash
# The shared objects as built: sonames, what they export, what they load.
set -uo pipefail
lib=api/libpmix.so.2
srv=api/libpmix-server.so.2
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

readelf -d "$lib" | grep -q 'SONAME.*\[libpmix.so.2\]' || fail "libpmix.so.2 soname"
readelf -d "$srv" | grep -q 'SONAME.*\[libpmix-server.so.2\]' || fail "server runtime soname"

# libpmix.so.2 exports the PMIx API and nothing else.
others=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -v '^PMIx_')
[ -z "$others" ] || fail "libpmix.so.2 exports non-PMIx symbols: $others"
count=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep -c '^PMIx_')
[ "$count" -ge 40 ] || fail "libpmix.so.2 exports only $count PMIx_ functions"
echo "libpmix.so.2 exports $count PMIx_* functions and nothing else"

# The server runtime exports its entry table only.
[ "$(nm -D --defined-only "$srv" | awk '{print $3}')" = pmix_cxx_server_runtime ] ||
  fail "server runtime exports more than pmix_cxx_server_runtime"

# Client processes load neither CAF nor hwloc nor full protobuf.
if readelf -d "$lib" | grep NEEDED | grep -E 'caf|hwloc|libprotobuf\.so'; then
  fail "libpmix.so.2 needs a heavy library"
fi
readelf -d "$srv" | grep -q 'NEEDED.*libcaf_core' || fail "server runtime does not link CAF"

# Every function the 4.2.2 headers of this project declare is defined.
for f in $(grep -ho 'PMIx_[A-Za-z_]*(' api/include/pmix.h api/include/pmix_server.h \
             api/include/pmix_tool.h | tr -d '(' | sort -u); do
  nm -D --defined-only "$lib" | awk '{print $3}' | grep -qx "$f" || fail "declared but not exported: $f"
done
[ $failures -eq 0 ] && echo "exports_test: ok"
exit $failures
