#!/bin/sh
# pmixrun --shrink (issue 18, docs/fault-injection.md): a plan whose random
# part injects several harmless faults beside one that makes a client hang
# fails; --shrink must print a minimal plan with fewer rules than were
# injected, and the replay command with that plan must still fail (exit 3),
# while the harmless faults alone pass.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
PMIXRUN=${PMIXRUN:-$here/tools/pmixrun/pmixrun}
CLIENT=${CLIENT:-$here/tests/faults/fault_client}
export PMIX_CXX_SERVER_LIBRARY=${PMIX_CXX_SERVER_LIBRARY:-$here/api/libpmix-server.so.2}
export FAULT_CLIENT_WATCHDOG=20
out=${TEST_TMPDIR:-/tmp}/shrink.$$
fail() { echo "FAIL $*"; tail -20 "$out"; rm -f "$out"; exit 1; }

plan="delay:fence:rank=0:n=1:ms=100000; random:rate=0.5:kinds=delay"
timeout 600 "$PMIXRUN" -n 2 --timeout 3 --faults "$plan" --seed 2 --shrink "$CLIENT" >"$out" 2>&1
rc=$?
[ $rc -eq 3 ] || fail "the plan did not fail (exit $rc)"
injected=$(grep -c "^pmixrun: faults: injected" "$out")
minimal=$(sed -n "s/^pmixrun: faults: minimal plan: '\(.*\)'$/\1/p" "$out")
[ -n "$minimal" ] || fail "no minimal plan printed"
rules=$(printf '%s\n' "$minimal" | tr ';' '\n' | grep -c .)
[ "$injected" -ge 3 ] || fail "only $injected faults injected: nothing to shrink"
[ "$rules" -lt "$injected" ] || fail "the minimal plan has $rules rules, $injected were injected"
echo "ok   $injected faults injected, shrunk to $rules: $minimal"

# The printed replay command, with the minimal plan, still fails.
replay=$(sed -n "s/^pmixrun: faults: replay: //p" "$out" | head -1)
[ -n "$replay" ] || fail "no replay command printed"
seed=$(printf '%s\n' "$replay" | sed -n "s/.* --seed \([0-9]*\) .*/\1/p")
rest=$(printf '%s\n' "$replay" | sed -n "s/.* --seed [0-9]* //p")
[ "$seed" = 2 ] && [ -n "$rest" ] || fail "replay command unreadable: $replay"
# shellcheck disable=SC2086
timeout 120 "$PMIXRUN" --faults "$minimal" --seed "$seed" $rest >"$out" 2>&1
rc=$?
[ $rc -eq 3 ] && tail -1 "$out" | grep -q "faults: FAILED" || fail "the minimal plan replayed did not fail (exit $rc)"
echo "ok   the minimal plan still fails when replayed"

# What shrinking removed was harmless: the plan without the hanging rule passes.
timeout 120 "$PMIXRUN" -n 2 --timeout 20 --faults "random:rate=0.5:kinds=delay" --seed 2 "$CLIENT" >"$out" 2>&1
rc=$?
[ $rc -eq 0 ] || fail "the random part alone failed (exit $rc)"
echo "ok   the random part alone passes"
rm -f "$out"
