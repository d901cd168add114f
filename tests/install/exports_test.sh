#!/usr/bin/env bash
# The shared objects as built: sonames, what they export, what they load.
set -uo pipefail
lib=api/libpmix.so.2
srv=api/libpmix-server.so.2
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

readelf -d "$lib" | grep -q 'SONAME.*\[libpmix.so.2\]' || fail "libpmix.so.2 soname"
readelf -d "$srv" | grep -q 'SONAME.*\[libpmix-server.so.2\]' || fail "server runtime soname"

# What the library exports, listed once: a check that pipes nm into
# `grep -q` makes nm die of SIGPIPE when grep stops early, which pipefail
# reports as a failure (seen once the list passed 200 names).
exported=$(nm -D --defined-only "$lib" | awk '{print $3}' | grep '^PMIx_' | sort -u)

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

# Nor C++ streams and locales: the C++ runtime linked into libpmix.so.2
# brings them only if the library uses them, and then every process that
# links it relocates their tables and runs their constructors at start-up
# (docs/performance.md, "Client start-up cost"). The log formats without
# them (common/log.hpp).
symbols=$(nm "$lib")
streams=$(grep -E 'basic_ostringstream|basic_stringstream|_ZNSt6locale7classicEv|ios_base4Init' <<<"$symbols" | head -5)
[ -z "$streams" ] || fail "libpmix.so.2 carries C++ streams or locales: $streams"

# Every function the headers of this project declare is defined
# (PMIx_Heartbeat too: a macro by default, as in OpenPMIx 4.2, and a
# function since 6.0; pmix_common.h holds the value helpers and the
# deprecated PMIx_tool_connect_to_server).
for f in $(grep -ho 'PMIx_[A-Za-z_]*)\?(' api/include/pmix_common.h api/include/pmix.h \
             api/include/pmix_server.h api/include/pmix_tool.h | tr -d '()' | sort -u); do
  grep -qx "$f" <<<"$exported" || fail "declared but not exported: $f"
done
# Every PMIx_ function OpenPMIx 4.2.2's libpmix.so.2 (libpmix-dev,
# tools/deps.sh) exports, ours exports too: a program or host built against
# it finds them all (141 in 4.2.2).
openpmix=/usr/lib/x86_64-linux-gnu/libpmix.so.2
if [ ! -f "$openpmix" ]; then
  fail "$openpmix is not installed"
else
  theirs=$(nm -D --defined-only "$openpmix" | awk '{print $3}' | grep '^PMIx_' | sort -u)
  [ "$(echo "$theirs" | wc -l)" -ge 141 ] || fail "OpenPMIx exports fewer PMIx_ functions than 4.2.2's 141"
  missing=$(comm -23 <(echo "$theirs") <(echo "$exported"))
  [ -z "$missing" ] || fail "OpenPMIx exports these, we do not: $(echo $missing)"
  echo "all $(echo "$theirs" | wc -l) PMIx_ functions of OpenPMIx 4.2.2 are exported"
fi
# Issue 37: every function OpenPMIx declares at v4.2.9, v5.0.11, v6.1.0 and
# master (openpmix_functions/<tag>.txt, read from those tags' public
# headers), exported; the names not done yet are in pending.txt, which may
# only shrink: a pending name the library exports fails too.
lists=tests/install/openpmix_functions
declared=$(grep -hv '^#' "$lists"/v4.2.9.txt "$lists"/v5.0.11.txt "$lists"/v6.1.0.txt "$lists"/master.txt | sort -u)
pending=$(grep -v '^#' "$lists"/pending.txt | sort -u)
[ "$(echo "$declared" | wc -l)" -ge 324 ] || fail "the lists of OpenPMIx's functions are short"
missing=$(comm -23 <(echo "$declared") <(echo "$exported") | comm -23 - <(echo "$pending"))
[ -z "$missing" ] || fail "OpenPMIx declares these, we do not export them: $(echo $missing)"
done_now=$(comm -12 <(echo "$pending") <(echo "$exported"))
[ -z "$done_now" ] || fail "exported now, still listed in pending.txt: $(echo $done_now)"
echo "$(comm -12 <(echo "$declared") <(echo "$exported") | wc -l) of the $(echo "$declared" | wc -l) functions" \
  "OpenPMIx 4.2.9 to master declare are exported; $(echo "$pending" | grep -c .) pending (issue 37)"
# Every PMIx function our first real users import is defined: Open MPI
# 4.1.4's PMIx component (48 functions) and Slurm 22.05's mpi/pmix_v4
# plugin (13). CI installs both (tools/deps.sh).
for host in /usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/mca_pmix_ext3x.so \
            /usr/lib/x86_64-linux-gnu/slurm-wlm/mpi_pmix_v4.so; do
  if [ ! -f "$host" ]; then fail "$host is not installed"; continue; fi
  wanted=$(nm -D --undefined-only "$host" | awk '{print $2}' | grep '^PMIx_' | sort -u)
  [ -n "$wanted" ] || fail "$host imports no PMIx_ functions"
  for f in $wanted; do
    grep -qx "$f" <<<"$exported" || fail "$(basename "$host") imports $f, not exported"
  done
  echo "$(basename "$host"): all $(echo "$wanted" | wc -l) imported PMIx_ functions are exported"
done
[ $failures -eq 0 ] && echo "exports_test: ok"
exit $failures
