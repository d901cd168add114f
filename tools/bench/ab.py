#!/usr/bin/env python3
"""Two builds of our library side by side, interleaved (A, B, then B, A, ...):
the same benchmark host and client (tools/bench, built against our headers)
run with each build's libpmix.so.2 and libpmix-server.so.2 in turn, and each
sample's median and p99 printed for both, with the ratio B / A.

    tools/bench/ab.py --bin bazel-bin/tools/bench --a OLD_LIB_DIR --b NEW_LIB_DIR \
        [--rounds R] [--cases get,datafence64,...]

A library folder holds libpmix.so.2 and libpmix-server.so.2 (bazel-bin/api of
a checkout). How a change's cost was measured (docs/performance.md,
"Checked A/B"): build the old commit's libraries in a worktree, then run this.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile

# name -> bench_host arguments (as compare.py gives them)
CASES = {
    "init": ["init"],
    "cycle": ["cycle", 50],
    "startup": ["startup", 64],
    "gated64": ["gated", 64],
    "ready256": ["ready", 256],
    "ready1024": ["ready", 1024],
    "ready2048": ["ready", 2048],
    "ready4096": ["ready", 4096],
    "cyclein4096": ["cycle-in", 4096, 100],
    "cyclein8192": ["cycle-in", 8192, 100],
    "fence1": ["fence", 1, 1000, 0],
    "fence2": ["fence", 2, 500, 0],
    "fence8": ["fence", 8, 250, 0],
    "fence8c": ["fence", 8, 250, 1],
    "datafence8": ["datafence", 8, 250],
    "datafence16": ["datafence", 16, 250],
    "datafence64": ["datafence", 64, 250],
    "get": ["get", 250],
    "dmodex16": ["dmodex", 16],
    "dmodex64": ["dmodex", 64],
    "register": ["register-nspace", 10000],
    "hosted": ["register-hosted", 10000],
    "local": ["register-local", 10000],
    "maps": ["register-maps", 100000, 6250],
}


def percentile(values, p):
    s = sorted(values)
    return s[min(len(s) - 1, int(round(p / 100.0 * (len(s) - 1))))] if s else float("nan")


def samples_of(host, client, args, env, who):
    """One bench_host run (HOST CLIENT TMPDIR ARGS...): its samples, name ->
    [values]; a failed run ends the script with its error output."""
    with tempfile.TemporaryDirectory(prefix="pmixab.") as tmp:
        cmd = [host, client, tmp] + [str(a) for a in args]
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=900)
    if p.returncode != 0:
        sys.exit("%s: %s failed (%d): %s" % (who, " ".join(map(str, args)), p.returncode, p.stderr[-800:]))
    out = {}
    for line in p.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "sample":
            out.setdefault(parts[1], []).append(float(parts[2]))
    return out


def run(bindir, libdir, args):
    env = dict(os.environ)
    env["LD_LIBRARY_PATH"] = libdir
    env["PMIX_CXX_SERVER_LIBRARY"] = os.path.join(libdir, "libpmix-server.so.2")
    return samples_of(os.path.join(bindir, "bench_host"), os.path.join(bindir, "bench_client"), args, env, "ab")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--a", required=True, help="folder of the first build's libraries")
    ap.add_argument("--b", required=True, help="folder of the second build's libraries")
    ap.add_argument("--rounds", type=int, default=6)
    ap.add_argument("--cases", default=",".join(CASES))
    a = ap.parse_args()
    libs = {"A": os.path.abspath(a.a), "B": os.path.abspath(a.b)}
    for case in a.cases.split(","):
        samples = {"A": {}, "B": {}}
        for r in range(a.rounds):
            for which in ("A", "B") if r % 2 == 0 else ("B", "A"):
                for name, values in run(a.bin, libs[which], CASES[case]).items():
                    samples[which].setdefault(name, []).extend(values)
        for name in sorted(samples["A"]):
            va, vb = samples["A"][name], samples["B"].get(name, [])
            if not vb:
                continue
            ma, mb = statistics.median(va), statistics.median(vb)
            pa, pb = percentile(va, 99), percentile(vb, 99)
            # Values as the benchmark prints them (their unit ends the name).
            print("%-12s %-24s median A %9.1f B %9.1f (%.3f)   p99 A %9.1f B %9.1f (%.3f)   n=%d" %
                  (case, name, ma, mb, mb / ma if ma else float("nan"), pa, pb, pb / pa if pa else float("nan"),
                   min(len(va), len(vb))), flush=True)


if __name__ == "__main__":
    main()
