#!/usr/bin/env bash
# tools/bench/compare.py's goals for the data fence across nodes (issue 40,
# point 4), from figures given to it: a 4 x 1 fence in at most 10 round
# trips of the limit, 4 x 16 in at most twice 4 x 1, and the nearest goal
# on a machine whose CPUs the 64 ranks saturate (4 x 16 less the one-node
# 64-rank fence at most twice 4 x 1). Each verdict on both sides of its
# bound, and none where a figure is missing.
set -euo pipefail
python3 - "tools/bench" <<'PY'
import sys
sys.path.insert(0, sys.argv[1])
import compare

failures = 0
def check(ok, what):
    global failures
    if not ok:
        failures += 1
        print("FAIL: " + what)

def goals(rtt, one, sixteen, one_node_64):
    mn = compare.Multinode()
    mn.rtt = rtt
    if one is not None:
        mn.rows.append((4, 1, "shared", [one - 10, one, one + 10]))
    mn.rows.append((2, 1, "one each", [1.0]))  # the pinned row is not 4 x 1
    if sixteen is not None:
        mn.rows.append((4, 16, "shared", [sixteen, sixteen]))
    if one_node_64 is not None:
        mn.one_node_64 = one_node_64
    return mn.goals(), mn.markdown()

g, md = goals(50.0, 400.0, 1000.0, 300.0)
check(len(g) == 3, "three goal lines: %r" % g)
check("8.0 round trips, **met**" in g[0], "4 x 1 in 8 round trips is met: %s" % g[0])
check("2.50x" in g[1] and "**missed**" in g[1], "4 x 16 at 2.5x is missed: %s" % g[1])
check("700 µs against 800 µs, **met**" in g[2], "700 added against 2 x 400 is met: %s" % g[2])
check("Goals (issue 40, point 4):" in md and g[2] in md, "the report shows them")

g, _ = goals(50.0, 520.0, 1000.0, 250.0)
check("10.4 round trips, **missed**" in g[0], "10.4 round trips is missed: %s" % g[0])
check("1.92x" in g[1] and "**met**" in g[1], "4 x 16 at 1.92x is met: %s" % g[1])

g, _ = goals(50.0, 400.0, 1300.0, 450.0)
check("850 µs against 800 µs, **missed**" in g[2], "850 added against 800 is missed: %s" % g[2])

g, md = goals(50.0, 400.0, 1000.0, None)
check(len(g) == 2, "no nearest goal without the one-node fence: %r" % g)
g, md = goals(float("nan"), 400.0, None, 300.0)
check(g == [], "no goal without the limit or 4 x 16: %r" % g)
check("Goals (issue 40" not in md, "and no goals paragraph")

print("%d failed checks" % failures)
sys.exit(1 if failures else 0)
PY
