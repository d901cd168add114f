#!/usr/bin/env bash
# Issue 37: PMIX_CXX_FUNCTION_MACROS changes what the helper macros expand
# to. One small C file is compiled twice against our headers, with and
# without the option; the object built with it references the exported
# functions of OpenPMIx 5.0's macro forms, the one built without does not
# (its macros stay inline, as in OpenPMIx 4.2.2).
set -uo pipefail
include=api/include
failures=0
fail() { echo "FAIL $*"; failures=$((failures + 1)); }

[ -f "$include/pmix_function_macros.h" ] || fail "$include/pmix_function_macros.h is missing"
work=$(mktemp -d "${TEST_TMPDIR:-/tmp}/fmexp.XXXXXX")
trap 'rm -rf "$work"' EXIT

cat > "$work/probe.c" <<'C'
#include <pmix.h>

pmix_status_t probe(char ***argv_out, pmix_proc_t *proc);

pmix_status_t probe(char ***argv_out, pmix_proc_t *proc)
{
    pmix_info_t *info = NULL;
    char **argv = NULL;
    pmix_status_t rc = PMIX_SUCCESS;
    pmix_coord_t *coords = NULL;
    PMIX_INFO_CREATE(info, 2);
    PMIX_LOAD_KEY(info[0].key, "my.key");
    PMIX_INFO_FREE(info, 2);
    PMIX_ARGV_APPEND(rc, argv, "x");
    PMIX_LOAD_PROCID(proc, "job", 0);
    PMIX_COORD_CREATE(coords, 2, 3);
    PMIX_COORD_FREE(coords, 2);
    PMIx_Heartbeat();
    *argv_out = argv;
    return rc;
}
C

flags=(-std=c11 -Wall -Wextra -Werror -pedantic -I"$include" -c)
/usr/bin/gcc "${flags[@]}" -DPMIX_CXX_FUNCTION_MACROS -o "$work/with.o" "$work/probe.c" ||
  fail "compile with PMIX_CXX_FUNCTION_MACROS"
/usr/bin/gcc "${flags[@]}" -o "$work/without.o" "$work/probe.c" || fail "compile without the option"

# Read each list once (a pipe into grep -q can kill nm with SIGPIPE).
with=$(nm -u "$work/with.o" | awk '{print $2}' | sort -u)
without=$(nm -u "$work/without.o" | awk '{print $2}' | sort -u)
functions=(PMIx_Info_create PMIx_Info_free PMIx_Load_key PMIx_Argv_append_nosize PMIx_Load_procid
           PMIx_Coord_create PMIx_Coord_free PMIx_Heartbeat)
for f in "${functions[@]}"; do
  grep -qx "$f" <<<"$with" || fail "with the option, $f is not called"
  grep -qx "$f" <<<"$without" && fail "without the option, $f is called"
done
# Without the option the heartbeat is 4.2.2's macro: a monitor request.
grep -qx PMIx_Process_monitor_nb <<<"$without" || fail "without the option, PMIx_Heartbeat() is not the macro"

echo "with the option: $(grep '^PMIx_' <<<"$with" | tr '\n' ' ')"
echo "without it:      $(grep '^PMIx_' <<<"$without" | tr '\n' ' ')"
[ "$failures" -eq 0 ] || { echo "$failures failure(s)"; exit 1; }
echo "function_macros_expansion_test: ok"
