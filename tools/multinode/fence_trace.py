#!/usr/bin/env python3
"""Where a fence across nodes spends its time (issue 40; docs/multinode.md).

Usage: fence_trace.py DIR [--per-node P] [--skip N] [--check]

DIR holds what one run of bench_client datafence under demo.sh wrote with
PMIXD_FENCE_TRACE=DIR and BENCH_FENCE_TRACE=DIR in its environment
(tools/pmixd/fence_trace.hpp), for instance
  PMIXD_FENCE_TRACE=/tmp/t BENCH_FENCE_TRACE=/tmp/t \
    tools/multinode/demo.sh 4 1 bazel-bin/tools/bench/bench_client datafence 200
(the directory must exist and be writable by the ranks): each
daemon's stages of each fence across nodes, each rank's start and end of
each fence, all on the machine's one CLOCK_MONOTONIC. Ranks are mapped by
slot (P per node, rank r on node r // P). The tree algorithm only: node 0
gathers every other node's part and sends the whole back.

Prints, over the fences (the first N skipped: the warm-up), the median of
each step of a fence, in µs, and of the whole: the steps follow one fence
from its ranks to their daemon, across to node 0 and back.

--check: exits 1, naming them, if any fence breaks what must hold whatever
the timing (so a clock or a pairing gone wrong shows): every daemon saw
each fence's up-call, actor, done and answered stages; node 0 received one
part from every other node, the k-th after the k-th was sent; every other
node received the whole after node 0 sent it to it; no server called
fence_nb before the last of its ranks entered, and no rank got out before
its server was called back.
"""
import argparse
import collections
import glob
import os
import re
import statistics
import sys


def load_daemon(path):
    marks = []
    with open(path) as f:
        for line in f:
            ns, stage, key, node, rnd = line.split()
            marks.append((int(ns), stage, key, int(node), int(rnd)))
    return marks


def fences_of(marks):
    """The daemon's fences in order: each a dict of its stages."""
    order = [m[2] for m in marks if m[1] == "actor"]
    by_key = {k: {"key": k, "send": {}, "recv": []} for k in order}
    seq = collections.defaultdict(int)
    for ns, stage, key, node, rnd in marks:
        if stage in ("upcall", "done", "answered"):
            i = seq[stage]
            seq[stage] += 1
            if i < len(order):
                by_key[order[i]][stage] = ns
        elif stage == "actor":
            by_key[key]["actor"] = ns
        elif stage == "send" and key in by_key:
            by_key[key]["send"][node] = ns
        elif stage == "recv" and key in by_key:
            by_key[key]["recv"].append(ns)
    return [by_key[k] for k in order]


def load_client(path):
    begins, ends = [], []
    with open(path) as f:
        for line in f:
            ns, what = line.split()
            (begins if what == "begin" else ends).append(int(ns))
    return begins, ends


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dir")
    ap.add_argument("--per-node", type=int, default=1)
    ap.add_argument("--skip", type=int, default=3)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    broken = []

    daemons = {}
    for path in glob.glob(os.path.join(a.dir, "pmixd.*")):
        m = re.match(r"pmixd\.node(\d+)\.", os.path.basename(path))
        if m:
            daemons[int(m.group(1))] = fences_of(load_daemon(path))
    clients = {}
    for path in glob.glob(os.path.join(a.dir, "client.*")):
        clients[int(path.rsplit(".", 1)[1])] = load_client(path)
    if not daemons or not clients:
        sys.exit("fence_trace.py: no pmixd.* or client.* files in %s" % a.dir)
    nodes = sorted(daemons)
    nfences = min(min(len(c[0]) for c in clients.values()), min(len(d) for d in daemons.values()))
    steps = collections.OrderedDict((name, []) for name in (
        "ranks enter (first to last)",
        "last rank enters -> server calls fence_nb",
        "fence_nb -> daemon actor",
        "daemon actor -> its part sent",
        "network up: sent -> node 0's actor has it",
        "node 0: last part in -> whole sent",
        "network down: sent -> node's actor has it",
        "actor has it -> server called back",
        "server callback returns",
        "callback returns -> last rank back",
        "whole fence (first rank in -> last rank back)",
        "critical path: up leg (last part to reach node 0)",
    ))
    us = lambda ns: ns / 1000.0
    for i in range(a.skip, nfences):
        begins = {n: [] for n in nodes}
        ends = {n: [] for n in nodes}
        for r, (b, e) in clients.items():
            n = r // a.per_node
            if n in begins and i < len(b) and i < len(e):
                begins[n].append(b[i])
                ends[n].append(e[i])
        if any(not begins[n] for n in nodes):
            continue
        first_in = min(min(v) for v in begins.values())
        last_out = max(max(v) for v in ends.values())
        steps["ranks enter (first to last)"].append(us(max(max(v) for v in begins.values()) - first_in))
        steps["whole fence (first rank in -> last rank back)"].append(us(last_out - first_in))
        root = daemons[nodes[0]][i]
        if a.check:
            for n in nodes:
                f = daemons[n][i]
                missing = [k for k in ("upcall", "actor", "done", "answered") if k not in f]
                if missing:
                    broken.append("fence %d, node %d: no %s" % (i, n, ", ".join(missing)))
                    continue
                if f["upcall"] < max(begins[n]):
                    broken.append("fence %d, node %d: fence_nb before its last rank entered" % (i, n))
                if min(ends[n]) < f["done"]:
                    broken.append("fence %d, node %d: a rank out before its server was called back" % (i, n))
                if n != nodes[0]:
                    down = root["send"].get(n)
                    if down is None or not f["recv"] or min(f["recv"]) < down:
                        broken.append("fence %d, node %d: the whole came before node 0 sent it" % (i, n))
            ups = sorted(daemons[n][i]["send"].get(nodes[0], -1) for n in nodes[1:])
            recvs = sorted(root["recv"])
            if len(recvs) != len(nodes) - 1 or any(u < 0 or r < u for u, r in zip(ups, recvs)):
                broken.append("fence %d: node 0 received %d parts of %d, or one before it was sent" % (
                    i, len(recvs), len(nodes) - 1))
        arrivals = sorted(root["recv"]) + [root.get("actor", 0)]
        last_part = max(arrivals)
        root_sends = list(root["send"].values())
        if root_sends:
            steps["node 0: last part in -> whole sent"].append(us(max(root_sends) - last_part))
        latest_up = None
        for n in nodes:
            f = daemons[n][i]
            if "upcall" not in f or "actor" not in f:
                continue
            steps["last rank enters -> server calls fence_nb"].append(us(f["upcall"] - max(begins[n])))
            steps["fence_nb -> daemon actor"].append(us(f["actor"] - f["upcall"]))
            if n != nodes[0]:
                sent = f["send"].get(nodes[0])
                if sent is not None:
                    steps["daemon actor -> its part sent"].append(us(sent - f["actor"]))
                    # The part reaches node 0 at one of its receives: the
                    # first one after it was sent that no other node took.
                    later = [t for t in sorted(root["recv"]) if t >= sent]
                    if later:
                        up = later[0] - sent
                        steps["network up: sent -> node 0's actor has it"].append(us(up))
                        if latest_up is None or later[0] > latest_up[0]:
                            latest_up = (later[0], up)
                down_sent = root["send"].get(n)
                if down_sent is not None and f["recv"]:
                    steps["network down: sent -> node's actor has it"].append(us(min(f["recv"]) - down_sent))
            if "done" in f and "answered" in f:
                got = max(f["recv"]) if (n != nodes[0] and f["recv"]) else max(root_sends or [f["done"]])
                steps["actor has it -> server called back"].append(us(f["done"] - got))
                steps["server callback returns"].append(us(f["answered"] - f["done"]))
                steps["callback returns -> last rank back"].append(us(max(ends[n]) - f["answered"]))
        if latest_up is not None:
            steps["critical path: up leg (last part to reach node 0)"].append(us(latest_up[1]))

    print("fences: %d (first %d skipped), nodes: %d, ranks per node: %d" % (
        max(0, nfences - a.skip), a.skip, len(nodes), a.per_node))
    print("%-52s %10s %10s %10s" % ("step", "median us", "p10 us", "p90 us"))
    for name, v in steps.items():
        if not v:
            continue
        v = sorted(v)
        print("%-52s %10.1f %10.1f %10.1f" % (name, statistics.median(v), v[len(v) // 10], v[(len(v) * 9) // 10]))
    if a.check:
        for b in broken[:20]:
            print("BROKEN: " + b)
        if broken:
            sys.exit("fence_trace.py: %d fence(s) break what must hold" % len(broken))
        print("check: every fence holds (%d fences)" % max(0, nfences - a.skip))


if __name__ == "__main__":
    main()
