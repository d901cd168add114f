#!/usr/bin/env python3
"""Clients linked with OpenPMIx under our server, beside the same clients
under OpenPMIx's own server (issue 35): the client half is OpenPMIx's code in
both, only the server differs. Interleaved (ours, theirs, then theirs,
ours, ...); each figure's median and p99, with the ratio ours / theirs
against the goal of 0.7.

    tools/bench/openpmix_clients.py --bin bazel-bin/tools/bench [--rounds R]
        [--cases startup,cycle,datafence,get,dmodex,mixed] [--short]

Pairings (tools/bench: the same sources built against each library):
  ours    bench_host (our server)       + bench_client_openpmix
  theirs  bench_host_openpmix           + bench_client_openpmix
  mixed   bench_host (our server), even ranks bench_client_openpmix, odd
          ranks bench_client (ours): the 64-rank data fence of a job mixing
          the two libraries, beside theirs with 64 OpenPMIx clients.
"""
import argparse
import os
import statistics
import sys


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ab import percentile, samples_of  # noqa: E402  (next to this file)


def run(bindir, pairing, args):
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    host = "bench_host_openpmix" if pairing == "theirs" else "bench_host"
    if pairing == "mixed":
        env["BENCH_ODD_CLIENT"] = os.path.join(bindir, "bench_client")
    return samples_of(os.path.join(bindir, host), os.path.join(bindir, "bench_client_openpmix"), args, env,
                      "openpmix_clients (%s)" % pairing)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--cases", default="startup,cycle,datafence,get,dmodex,mixed")
    ap.add_argument("--short", action="store_true", help="tiny sizes: proves the programs run, figures mean nothing")
    a = ap.parse_args()
    sizes = [1, 2, 4] if a.short else [1, 2, 4, 8, 16, 32, 64]
    iters = 20 if a.short else 200
    cases = []  # (label, bench_host args, pairings)
    wanted = set(a.cases.split(","))
    if "startup" in wanted:
        cases.append(("startup%d" % (8 if a.short else 64), ["startup", 8 if a.short else 64], ("ours", "theirs")))
    if "cycle" in wanted:
        cases.append(("cycle", ["cycle", 10 if a.short else 50], ("ours", "theirs")))
    if "datafence" in wanted:
        for n in sizes:
            cases.append(("datafence%d" % n, ["datafence", n, iters], ("ours", "theirs")))
    if "get" in wanted:
        cases.append(("get", ["get", iters], ("ours", "theirs")))
    if "dmodex" in wanted:
        cases.append(("dmodex16", ["dmodex", 4 if a.short else 16], ("ours", "theirs")))
    if "mixed" in wanted:
        n = 4 if a.short else 64
        cases.append(("mixed%d" % n, ["datafence", n, iters], ("mixed", "theirs")))
    print("| case | figure | ours median | theirs median | ratio | ours p99 | theirs p99 | ratio | goal 0.7 |")
    print("|---|---|---|---|---|---|---|---|---|")
    misses = 0
    for label, args, (first, second) in cases:
        samples = {first: {}, second: {}}
        for r in range(a.rounds):
            for which in (first, second) if r % 2 == 0 else (second, first):
                for name, values in run(a.bin, which, args).items():
                    samples[which].setdefault(name, []).extend(values)
        for name in sorted(samples[first]):
            vo, vt = samples[first][name], samples[second].get(name, [])
            if not vt or not name.endswith("_us"):
                continue
            mo, mt = statistics.median(vo), statistics.median(vt)
            po, pt = percentile(vo, 99), percentile(vt, 99)
            rm, rp = mo / mt if mt else float("nan"), po / pt if pt else float("nan")
            met = rm <= 0.7 and rp <= 0.7
            misses += 0 if met else 1
            print("| %s | %s | %.1f us | %.1f us | %.2f | %.1f us | %.1f us | %.2f | %s |" %
                  (label, name, mo, mt, rm, po, pt, rp, "met" if met else "missed"), flush=True)
    print("\n%d figure(s) missed the goal" % misses)


if __name__ == "__main__":
    main()
