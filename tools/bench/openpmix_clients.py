#!/usr/bin/env python3
"""Our library beside OpenPMIx's on one side of the connection, the other side
the same: interleaved (ours, theirs, then theirs, ours, ...); each figure's
median and p99, with the ratio ours / theirs against the goal of 0.7.

    tools/bench/openpmix_clients.py --bin bazel-bin/tools/bench [--side clients|server]
        [--rounds R] [--cases startup,cycle,datafence,get,dmodex,mixed,mpirun] [--short]
        [--lib DIR --mpi-program PATH]

--side clients (issue 35): clients linked with OpenPMIx under our server,
beside the same clients under OpenPMIx's own server (only the server
differs). --side server (issue 36): our client under OpenPMIx's server,
beside OpenPMIx's own client under it (only the client differs).

Pairings (tools/bench: the same sources built against each library; the
server is bench_host, the clients bench_client):
  side     pairing  server                 clients
  clients  ours     bench_host (ours)      bench_client_openpmix
  clients  theirs   bench_host_openpmix    bench_client_openpmix
  server   ours     bench_host_openpmix    bench_client (ours)
  server   theirs   bench_host_openpmix    bench_client_openpmix
  either   mixed    as "ours", with the odd ranks bench_client (ours) and the
                    even ones bench_client_openpmix: the 64-rank data fence
                    of a job mixing the two libraries, beside theirs.
  server   mpirun   Debian's mpirun (its own OpenPMIx server) of the MPI
                    allreduce program at -np 16, start to exit: the ranks on
                    our library (-x LD_LIBRARY_PATH=DIR, DIR holding our
                    libpmix.so.2) or on OpenPMIx's. Its goal is 1x.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from ab import percentile, samples_of  # noqa: E402  (next to this file)


# (side, pairing) -> (server, clients)
PROGRAMS = {
    ("clients", "ours"): ("bench_host", "bench_client_openpmix"),
    ("clients", "theirs"): ("bench_host_openpmix", "bench_client_openpmix"),
    ("clients", "mixed"): ("bench_host", "bench_client_openpmix"),
    ("server", "ours"): ("bench_host_openpmix", "bench_client"),
    ("server", "theirs"): ("bench_host_openpmix", "bench_client_openpmix"),
    ("server", "mixed"): ("bench_host_openpmix", "bench_client_openpmix"),
}


def run_mpirun(a, pairing, n):
    """One `mpirun -np n allreduce n` under Debian's mpirun: its wall time."""
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    env["PATH"] = "/usr/bin:" + env.get("PATH", "")
    cmd = ["/usr/bin/mpirun", "--allow-run-as-root", "--oversubscribe", "-np", str(n)]
    if pairing == "ours":
        cmd += ["-x", "LD_LIBRARY_PATH=" + os.path.abspath(a.lib)]
    cmd += [a.mpi_program, str(n)]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=300)
    us = (time.perf_counter() - t0) * 1e6
    if p.returncode != 0 or ("OK allreduce all ranks=%d" % n) not in p.stdout:
        sys.exit("openpmix_clients (mpirun, %s): failed (%d): %s" % (pairing, p.returncode, p.stdout[-800:]))
    return {"mpirun_np%d_us" % n: [us]}


def run(bindir, side, pairing, args):
    env = {k: v for k, v in os.environ.items() if k != "LD_LIBRARY_PATH"}
    host, client = PROGRAMS[(side, pairing)]
    if pairing == "mixed":
        env["BENCH_ODD_CLIENT"] = os.path.join(bindir, "bench_client")
        if side == "server":
            # An OpenPMIx server keeps the data of its ds21 clients where it
            # cannot give it to a hash client's get (docs/hosts.md): a job
            # mixing both libraries runs with its store in hash.
            env["PMIX_MCA_gds"] = "hash"
    return samples_of(os.path.join(bindir, host), os.path.join(bindir, client), args, env,
                      "openpmix_clients (%s side, %s)" % (side, pairing))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--side", choices=("clients", "server"), default="clients",
                    help="which side is ours: the server (clients linked with OpenPMIx) or the client")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--cases", default="startup,cycle,datafence,get,dmodex,mixed")
    ap.add_argument("--lib", help="mpirun case: a folder holding our libpmix.so.2")
    ap.add_argument("--mpi-program", help="mpirun case: tests/hosts/mpi's allreduce")
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
    if "mpirun" in wanted:
        if a.side != "server" or not a.lib or not a.mpi_program:
            sys.exit("the mpirun case needs --side server, --lib and --mpi-program")
        cases.append(("mpirun", ["mpirun", 4 if a.short else 16], ("ours", "theirs")))
    print("| case | figure | ours median | theirs median | ratio | ours p99 | theirs p99 | ratio | goal |")
    print("|---|---|---|---|---|---|---|---|---|")
    misses = 0
    for label, args, (first, second) in cases:
        samples = {first: {}, second: {}}
        for r in range(a.rounds):
            for which in (first, second) if r % 2 == 0 else (second, first):
                got = run_mpirun(a, which, args[1]) if args[0] == "mpirun" else run(a.bin, a.side, which, args)
                for name, values in got.items():
                    samples[which].setdefault(name, []).extend(values)
        for name in sorted(samples[first]):
            vo, vt = samples[first][name], samples[second].get(name, [])
            if not vt or not name.endswith("_us"):
                continue
            mo, mt = statistics.median(vo), statistics.median(vt)
            po, pt = percentile(vo, 99), percentile(vt, 99)
            rm, rp = mo / mt if mt else float("nan"), po / pt if pt else float("nan")
            goal = 1.0 if label == "mpirun" else 0.7
            met = rm <= goal and rp <= goal
            misses += 0 if met else 1
            print("| %s | %s | %.1f us | %.1f us | %.2f | %.1f us | %.1f us | %.2f | %.1f %s |" %
                  (label, name, mo, mt, rm, po, pt, rp, goal, "met" if met else "missed"), flush=True)
    print("\n%d figure(s) missed the goal" % misses)


if __name__ == "__main__":
    main()
