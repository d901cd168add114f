#!/usr/bin/env python3
"""Runs the same benchmark programs against PMIx-CXX and OpenPMIx 4.2.2,
interleaved on this machine, and reports each figure with the ratio
ours / OpenPMIx.

    compare.py --bin DIR [--out DIR] [--short] [--rounds R]
               [--hosts mpirun,srun|none] [--host-runs R] [--mpi-program PROG]
               [--pmix-lib DIR] [--slurm-harness FILE]

DIR holds bench_host, bench_client (built against our libpmix.so.2) and
bench_host_openpmix, bench_client_openpmix (built against Debian's OpenPMIx);
`bazel build //tools/bench:all` puts them in bazel-bin/tools/bench. The
report (report.md), the fence plot (fence.svg) and every real-host run's
time (real_hosts.tsv) go to --out.

--short runs every benchmark once with tiny sizes: it proves the programs
still build and run (CI), its figures mean nothing.

Then what users run on real hosts (real_hosts.py): the wall time of
`mpirun -np 4` and `-np 16` of Open MPI's allreduce (--mpi-program, by
default DIR/../../tests/hosts/mpi/allreduce) and of `srun --mpi=pmix -n 4`
of it under a one-node Slurm test cluster, with our library (copies of
--pmix-lib's libpmix.so.2 and libpmix-server.so.2) and with OpenPMIx,
--host-runs runs each (15, or 2 with --short), interleaved. --hosts picks
the parts (mpirun,srun or none); a part whose needs (Open MPI, Slurm,
root) are missing is skipped and the report says so. A failed run is an
error (exit status 1), not a figure.
"""
import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import real_hosts  # noqa: E402  (next to this file)

LIBS = ("ours", "openpmix")


def percentile(values, p):
    s = sorted(values)
    if not s:
        return float("nan")
    k = min(len(s) - 1, max(0, int(round(p / 100.0 * (len(s) - 1)))))
    return s[k]


def stolen_s():
    """CPU time the hypervisor has taken from this VM (all CPUs), in seconds:
    the "steal" column of /proc/stat; 0 where there is none."""
    try:
        with open("/proc/stat") as f:
            fields = f.readline().split()
        return float(fields[8]) / os.sysconf("SC_CLK_TCK") if fields[0] == "cpu" and len(fields) > 8 else 0.0
    except (OSError, ValueError, IndexError):
        return 0.0


def other_tasks_ns():
    """CPU time each thread now on this machine has run, in ns
    (/proc/PID/task/TID/schedstat), keyed by (pid, tid) with its process's
    name. Taken before and after a benchmark: the threads alive at both ends
    are the ones that were not the benchmark's (it starts its processes
    after the first look and they have ended by the second), and what they
    ran meanwhile took CPU from it (the sandbox's own agent, kernel threads,
    anything else)."""
    out = {}
    try:
        pids = [d for d in os.listdir("/proc") if d.isdigit()]
    except OSError:
        return out
    me = os.getpid()
    for pid in pids:
        if int(pid) == me:
            continue
        try:
            with open("/proc/%s/comm" % pid) as f:
                comm = f.read().strip()
            for tid in os.listdir("/proc/%s/task" % pid):
                with open("/proc/%s/task/%s/schedstat" % (pid, tid)) as f:
                    out[(int(pid), int(tid))] = (comm, int(f.read().split()[0]))
        except (OSError, ValueError, IndexError):
            continue
    return out


class Runner:
    def __init__(self, bindir, short):
        self.bindir = bindir
        self.short = short
        self.samples = {lib: {} for lib in LIBS}  # lib -> name -> [values]
        self.failures = []
        # benchmark -> lib -> seconds stolen by the hypervisor while it ran:
        # a figure measured then is not the library's (docs/performance.md).
        self.stolen = {}
        # benchmark -> lib -> {process name: seconds} other processes ran
        # while it ran (other_tasks_ns).
        self.others = {}

    def programs(self, lib):
        suffix = "" if lib == "ours" else "_openpmix"
        return (os.path.join(self.bindir, "bench_host" + suffix),
                os.path.join(self.bindir, "bench_client" + suffix))

    def run(self, lib, args, key=None):
        """One bench_host run; its samples go under `key` + name."""
        host, client = self.programs(lib)
        stolen_before = stolen_s()
        others_before = other_tasks_ns()
        with tempfile.TemporaryDirectory(prefix="pmixbench.") as tmp:
            cmd = [host, client, tmp] + [str(a) for a in args]
            try:
                p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True, timeout=900)
            except subprocess.TimeoutExpired:
                self.failures.append("%s %s: timed out" % (lib, " ".join(map(str, args))))
                return
            finally:
                label = " ".join(str(a) for a in (args[:1] + ([key] if key else [])))
                by_lib = self.stolen.setdefault(label, {l: 0.0 for l in LIBS})
                by_lib[lib] += max(0.0, stolen_s() - stolen_before)
                ran = self.others.setdefault(label, {l: {} for l in LIBS})[lib]
                for task, (comm, ns) in other_tasks_ns().items():
                    before = others_before.get(task)
                    if before and ns > before[1]:
                        ran[comm] = ran.get(comm, 0.0) + (ns - before[1]) / 1e9
        if p.returncode != 0:
            self.failures.append("%s %s: exit %d: %s" % (lib, " ".join(map(str, args)), p.returncode,
                                                         p.stderr.strip()[-500:]))
            return
        for line in p.stdout.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[0] == "sample":
                name = (key + "." if key else "") + parts[1]
                self.samples[lib].setdefault(name, []).append(float(parts[2]))

    def both(self, args, rounds, key=None):
        """Interleaved: ours then OpenPMIx, then the other way round, ..."""
        for r in range(rounds):
            order = LIBS if r % 2 == 0 else tuple(reversed(LIBS))
            for lib in order:
                self.run(lib, args, key)

    def values(self, lib, name):
        return self.samples[lib].get(name, [])


def fmt(v, unit):
    if v != v:  # nan
        return "n/a"
    if unit in ("kB",):
        return "%.0f %s" % (v, unit)
    if unit == "kB/cycle":
        return "%.2f %s" % (v, unit)
    if v >= 100:
        return "%.0f %s" % (v, unit)
    if v >= 10:
        return "%.1f %s" % (v, unit)
    return "%.2f %s" % (v, unit)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out", default="bench-results")
    ap.add_argument("--short", action="store_true")
    ap.add_argument("--rounds", type=int, default=0, help="runs per library for each benchmark")
    ap.add_argument("--hosts", default="mpirun,srun",
                    help="real-host parts to run: mpirun, srun, both (comma-separated) or none")
    ap.add_argument("--host-runs", type=int, default=0,
                    help="timed runs per library of each real-host case (default 15, 2 with --short)")
    ap.add_argument("--mpi-program", help="Open MPI's allreduce program, tests/hosts/mpi/allreduce.c "
                    "built (default: BIN/../../tests/hosts/mpi/allreduce, as in bazel-bin)")
    ap.add_argument("--pmix-lib", help="folder of our libpmix.so.2 and libpmix-server.so.2 "
                    "(default: BIN/../../api, as in bazel-bin and in runfiles)")
    ap.add_argument("--slurm-harness", help="tests/hosts/slurm/slurm_cluster.sh (default: the one "
                    "of the source tree this file is in)")
    ap.add_argument("--cases", default="all",
                    help="comma-separated subset: init, cycle, startup, fence, datafence, get, register, "
                    "hosted, maps, local, clients, rss, scale (default all); the real hosts are chosen by --hosts")
    ap.add_argument("--scale", help="comma-separated N of the 'scale' case: N processes started at once, "
                    "each doing what MPI_Init does once (default 512,1024,2048; 8,16 with --short)")
    ap.add_argument("--dsizes", help="comma-separated N of the data-carrying fence "
                    "(default 1,2,4,8,16,32,64,128,256; 1,2,4 with --short)")
    ap.add_argument("--multinode", default="",
                    help="ranks per node of the 4-node data fence (tools/multinode/demo.sh: network "
                    "namespaces, one pmixd each; ours only, needs root), comma-separated, or none "
                    "(default 1,2,4,8,16; none with --short)")
    a = ap.parse_args()
    cases = set(a.cases.split(","))
    def want(case):
        return "all" in cases or case in cases
    host_parts = [p for p in a.hosts.split(",") if p and p != "none"]
    for p in host_parts:
        if p not in ("mpirun", "srun"):
            ap.error("--hosts: unknown part %r (mpirun, srun or none)" % p)

    short = a.short
    rounds = a.rounds or (1 if short else 4)
    sizes = [1, 2, 4] if short else [1, 2, 4, 8, 16, 32, 64]
    # The data-carrying fence (what MPI_Init does): up to 64 with goals, then
    # 128 and 256, oversubscribed on this machine's CPUs.
    dsizes = [1, 2, 4] if short else [1, 2, 4, 8, 16, 32, 64, 128, 256]
    if a.dsizes:
        dsizes = [int(n) for n in a.dsizes.split(",")]
    fence_iters = 20 if short else 200
    min_samples = 40 if short else 2000
    min_fences = 20 if short else 1000
    cycles = 20 if short else 200
    startup = 8 if short else 64
    gets = 50 if short else 1000
    big = 1000 if short else 10000
    rss_a, rss_b = (20, 100) if short else (200, 1000)
    scale = [8, 16] if short else [512, 1024, 2048]
    cycle_in = [64, 128] if short else [1024, 2048, 8192]  # one process in a job of N local ranks
    cycle_hosted = [1000] if short else [100000]  # one process in a job of N ranks, 100 a node, Slurm's form
    cycle_cyclic = (1000, 4) if short else (100000, 16)  # ... N ranks round-robin over M nodes
    if a.scale:
        scale = [int(n) for n in a.scale.split(",")]

    run = Runner(a.bin, short)
    t_start = datetime.datetime.now()
    load_start = os.getloadavg()[0]
    # How often this machine takes a CPU away for more than 1 ms (a process of
    # higher priority, or the hypervisor): a rank or the server queued on that
    # CPU holds up its fence for as long (docs/performance.md, "Tails: steal, CPU gaps and what else ran").
    gap_ms = 200 if short else 2000
    run.run("ours", ["cpu-gaps", gap_ms], key="before")
    if want("init"):
        print("bench: server init/finalize", flush=True)
        run.both(["init"], rounds * (1 if short else 5))
    if want("cycle"):
        print("bench: client init/finalize cycles", flush=True)
        run.both(["cycle", max(1, cycles // rounds)], rounds)
    if want("startup"):
        print("bench: %d clients starting at once" % startup, flush=True)
        run.both(["startup", startup], rounds)
    # Every rank times every fence, and a figure's p99 comes from at least
    # min_samples samples and min_fences fences: the p99 of 200 (what one
    # rank gives in 200 fences) is the third-largest sample, which one stall
    # of the VM decides; and the samples of one fence move together (a
    # stall of the server holds up every rank of it), so the p99 of N ranks
    # over 200 fences is decided by the two or three slowest fences.
    def fence_rounds_iters(n, iters):
        return max(1, max(iters, min_fences, -(-min_samples // n)) // rounds)

    for n in sizes if want("fence") else []:
        for collect in (0, 1):
            print("bench: fence N=%d collect=%d" % (n, collect), flush=True)
            run.both(["fence", n, fence_rounds_iters(n, fence_iters), collect], rounds,
                     key="n%d.c%d" % (n, collect))
    if want("datafence"):
        print("bench: one Unix-socket round trip (the fence's unit of limit)", flush=True)
        run.both(["uds-rtt", 200 if short else 2000], rounds)
    for n in dsizes if want("datafence") else []:
        iters = fence_iters if n <= 64 else fence_iters // 5
        print("bench: data-carrying fence N=%d (every rank Puts, then fences; every rank times)" % n,
              flush=True)
        run.both(["datafence", n, fence_rounds_iters(n, iters) if n <= 64 else max(1, iters // rounds)],
                 rounds, key="n%d" % n)
    floor_n = max([n for n in dsizes if n <= 64] or [0]) if want("datafence") else 0
    if floor_n:
        # The same fence's floor on this machine: as many processes, no
        # PMIx (fence_floor: a socket write and a futex wake-up each); run
        # under each library's host alike, and pooled.
        print("bench: the floor of a fence of %d processes, without PMIx" % floor_n, flush=True)
        run.both(["datafence-bare", floor_n, fence_rounds_iters(floor_n, fence_iters)], rounds,
                 key="f%d" % floor_n)
    if want("get"):
        print("bench: get", flush=True)
        run.both(["get", max(1, gets // rounds)], rounds)
    if want("register"):
        print("bench: register a namespace of %d ranks" % big, flush=True)
        run.both(["register-nspace", big], rounds)
    if want("hosted"):
        print("bench: register a namespace of %d ranks as hosts do" % big, flush=True)
        run.both(["register-hosted", big], rounds)
    if want("maps"):
        print("bench: register a namespace of %d ranks by its maps alone" % (big * 10), flush=True)
        run.both(["register-maps", big * 10, max(1, big * 10 // 16)], rounds)
    if want("local"):
        print("bench: register a namespace of %d ranks all on this node" % big, flush=True)
        run.both(["register-local", big], rounds)
    if want("clients"):
        print("bench: register %d clients" % big, flush=True)
        run.both(["register-clients", big], rounds)
    if want("rss"):
        print("bench: server memory over %d client cycles" % rss_b, flush=True)
        run.both(["rss", rss_a, rss_b], 1 if short else 2)
    for n in scale if want("scale") else []:
        print("bench: %d processes at once: init, Put, Commit, collecting fence (issue 40)" % n, flush=True)
        run.both(["ready", n], 1 if short else 2, key="s%d" % n)
        # The same processes without PMIx (bench_bare: no library, no
        # call), under each library's host, which then makes no PMIx call
        # either: what starting and ending them costs by itself.
        print("bench: %d processes at once without PMIx (the baseline)" % n, flush=True)
        run.both(["ready-bare", n], 1 if short else 2, key="b%d" % n)
    # One process's own cost as its job grows: rank 0 of a job of N local
    # ranks cycles init/finalize alone (what per process grows with N).
    for n in cycle_in if want("scale") else []:
        print("bench: init/finalize cycles of one process in a job of %d local ranks" % n, flush=True)
        run.both(["cycle-in", n, 20 if short else 100], rounds, key="c%d" % n)
    # The same in a large job across nodes, registered as Slurm does (every
    # rank's data), of which this node holds 100 ranks: what a process's
    # start costs as the whole job grows.
    for n in cycle_hosted if want("scale") else []:
        print("bench: init/finalize cycles of one process in a job of %d ranks on %d nodes" % (n, (n + 99) // 100),
              flush=True)
        run.both(["cycle-hosted", n, 20 if short else 50], rounds, key="h%d" % n)
    # And with the ranks placed round-robin over the nodes (srun -m cyclic,
    # mpirun --map-by node): this node's ranks are not one block.
    if want("scale"):
        n, nodes = cycle_cyclic
        print("bench: init/finalize cycles of one process in a job of %d ranks round-robin over %d nodes"
              % (n, nodes), flush=True)
        run.both(["cycle-cyclic", n, nodes, 20 if short else 50], rounds, key="rr%d" % n)

    run.run("ours", ["cpu-gaps", gap_ms], key="after")

    multinode = multinode_fences(a, short, tree_of_this_file(), fence_iters)

    # Real hosts last: their clusters' daemons must not run during the others.
    tree = os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..")
    hosts = real_hosts.RealHosts(
        program=a.mpi_program or os.path.join(a.bin, "..", "..", "tests", "hosts", "mpi", "allreduce"),
        libdir=a.pmix_lib or os.path.join(a.bin, "..", "..", "api"),
        harness=a.slurm_harness or os.path.join(tree, "tests", "hosts", "slurm", "slurm_cluster.sh"),
        parts=host_parts,
        runs=a.host_runs or (2 if short else 15), warmup=0 if short else 1,
        np_list=[4, 16], srun_n=4, failures=run.failures)
    if host_parts:
        print("bench: real hosts (%s), %d run(s) each" % (", ".join(host_parts), hosts.runs), flush=True)
        hosts.run()

    # ---- the figures ----------------------------------------------------------------
    rows = []  # (figure, unit, ours, theirs, goal) ; goal: "time", "memory", "growth"

    # figure -> the benchmark (Runner label) it comes from, for the fences:
    # a missed one is listed with what else ran during that benchmark.
    case_of = {}
    misses = []  # (figure, benchmark)

    def stat_row(label, name, unit, stat, goal="time"):
        o = run.values("ours", name)
        t = run.values("openpmix", name)
        f = (lambda v: statistics.median(v) if v else float("nan")) if stat == "median" else \
            (lambda v: percentile(v, 99))
        rows.append((label, unit, f(o), f(t), goal))

    stat_row("server init (median)", "server_init_us", "µs", "median")
    stat_row("server finalize (median)", "server_finalize_us", "µs", "median")
    stat_row("client init+finalize cycle, median of %d" % cycles, "cycle_us", "µs", "median")
    stat_row("client init+finalize cycle, p99", "cycle_us", "µs", "p99")
    stat_row("PMIx_Init with %d clients starting at once, median" % startup, "startup_init_us", "µs", "median")
    stat_row("PMIx_Init with %d clients starting at once, p99" % startup, "startup_init_us", "µs", "p99")
    stat_row("%d clients: start, init, finalize, exit (whole job)" % startup, "startup_job_ms", "ms", "median")
    for n in sizes:
        for collect in (0, 1):
            key = "n%d.c%d.fence_us" % (n, collect)
            what = "fence N=%d%s" % (n, " collect" if collect else "")
            stat_row(what + ", median", key, "µs", "median")
            stat_row(what + ", p99", key, "µs", "p99")
            case_of[what + ", median"] = case_of[what + ", p99"] = "fence n%d.c%d" % (n, collect)
    stat_row("PMIx_Get of a peer's 64-byte key, median", "get_peer_us", "µs", "median")
    stat_row("PMIx_Get of a job-level key (PMIX_JOB_SIZE), median", "get_job_us", "µs", "median")
    stat_row("register one namespace of %d ranks" % big, "register_nspace_ms", "ms", "median")
    stat_row("  its memory (server anonymous RSS growth)" , "register_nspace_kb", "kB", "median", goal="memory")
    stat_row("register one namespace of %d ranks as Slurm and ORTE do (3 per-rank keys)" % big,
             "register_hosted_ms", "ms", "median", goal=0.4)
    stat_row("  its memory (server anonymous RSS growth)", "register_hosted_kb", "kB", "median", goal="memory")
    stat_row("the same, all %d ranks on this node (issue 40)" % big, "register_local_ms", "ms", "median", goal=0.3)
    stat_row("  its memory (server anonymous RSS growth)", "register_local_kb", "kB", "median", goal="memory")
    stat_row("a job of %d ranks on 16 nodes by its node and proc maps alone (pmixsim's form)" % (big * 10),
             "register_maps_ms", "ms", "median")
    stat_row("  its memory (server anonymous RSS growth)", "register_maps_kb", "kB", "median", goal="memory")
    stat_row("register %d clients" % big, "register_clients_ms", "ms", "median")
    stat_row("  their memory (server anonymous RSS growth)", "register_clients_kb", "kB", "median", goal="memory")
    stat_row("server anonymous RSS, no client yet", "rss_kb_0", "kB", "median", goal="memory")
    stat_row("server anonymous RSS after %d client cycles" % rss_a, "rss_kb_%d" % rss_a, "kB", "median", goal="memory")
    stat_row("server anonymous RSS after %d client cycles" % rss_b, "rss_kb_%d" % rss_b, "kB", "median", goal="memory")
    for n in scale:
        stat_row("%d processes at once, each inits, Puts, Commits and fences: all ready" % n,
                 "s%d.ready_ms" % n, "ms", "median")
        stat_row("  the whole job (start to last exit)", "s%d.ready_job_ms" % n, "ms", "median")
        stat_row("  CPU of the host process (server, forking), per process", "s%d.ready_host_cpu_per_proc_ms" % n,
                 "ms", "median", goal=None)
        stat_row("  CPU of the processes themselves, per process", "s%d.ready_clients_cpu_per_proc_ms" % n,
                 "ms", "median", goal=None)
        # Both hosts run the same program then: one baseline, from all of
        # its runs.
        bare = run.values("ours", "b%d.ready_ms" % n) + run.values("openpmix", "b%d.ready_ms" % n)
        base = statistics.median(bare) if bare else float("nan")
        rows.append(("  the same processes without PMIx (bench_bare), all ready", "ms", base, base, None))
        def added(lib):
            v = run.values(lib, "s%d.ready_ms" % n)
            return statistics.median(v) - base if v else float("nan")
        rows.append(("  what PMIx adds to that (all ready minus the baseline)", "ms", added("ours"),
                     added("openpmix"), "time"))
    for n in cycle_in:
        stat_row("one process's init+finalize cycle in a job of %d local ranks, median" % n, "c%d.cycle_us" % n,
                 "µs", "median")
    for n in cycle_hosted:
        stat_row("one process's init+finalize cycle in a job of %d ranks, 100 a node, registered as Slurm does, "
                 "median" % n, "h%d.cycle_us" % n, "µs", "median")
    stat_row("one process's init+finalize cycle in a job of %d ranks placed round-robin over %d nodes, median"
             % cycle_cyclic, "rr%d.cycle_us" % cycle_cyclic[0], "µs", "median")
    if len(scale) > 1:
        # Cost per process flat (issue 40): the largest N at most 2.2x the
        # one before it (for 2,048 against 1,024).
        lo, hi = scale[-2], scale[-1]
        ratio = {}
        for lib in LIBS:
            a_ = run.values(lib, "s%d.ready_ms" % lo)
            b_ = run.values(lib, "s%d.ready_ms" % hi)
            ratio[lib] = statistics.median(b_) / statistics.median(a_) if a_ and b_ else float("nan")
        rows.append(("time to all ready, %d processes against %d" % (hi, lo), "x", ratio["ours"], ratio["openpmix"],
                     "scaling"))
    growth = {}
    for lib in LIBS:
        a_ = run.values(lib, "rss_kb_%d" % rss_a)
        b_ = run.values(lib, "rss_kb_%d" % rss_b)
        growth[lib] = (statistics.median(b_) - statistics.median(a_)) / (rss_b - rss_a) if a_ and b_ else float("nan")
    rows.append(("server anonymous RSS growth per client cycle (%d..%d)" % (rss_a, rss_b), "kB/cycle",
                 growth["ours"], growth["openpmix"], "growth"))

    # Real hosts: the whole command's wall time; goal at most 1 × (issue 13).
    host_rows = []
    for key, label in hosts.cases:
        o = hosts.values("ours", key)
        t = hosts.values("openpmix", key)
        runs = "%d/%d runs" % (len(o), len(t))
        host_rows.append((label + ", median (%s)" % runs, "ms",
                          statistics.median(o) * 1e3 if o else float("nan"),
                          statistics.median(t) * 1e3 if t else float("nan"), "host"))
        host_rows.append((label + ", p90", "ms", percentile(o, 90) * 1e3, percentile(t, 90) * 1e3, "host"))

    def verdict(o, t, goal):
        if o != o or t != t:
            return "n/a"
        if goal == "growth":
            return "met" if o <= 0.0 else "missed"
        if goal == "scaling":
            return "met" if o <= 2.2 else "missed"
        if t <= 0:
            return "n/a"
        if goal is None:
            return "-"
        limit = goal if isinstance(goal, float) else 0.5 if goal == "time" else 1.0
        return "met" if o / t <= limit else "missed"

    def table(rows):
        lines = []
        width = max(len(r[0]) for r in rows)
        print()
        print("%-*s  %14s  %14s  %7s  %s" % (width, "figure", "PMIx-CXX", "OpenPMIx", "ratio", "goal"))
        for label, unit, o, t, goal in rows:
            ratio = o / t if (t == t and o == o and t > 0) else float("nan")
            v = verdict(o, t, goal)
            if v == "missed" and label in case_of:
                misses.append((label, case_of[label]))
            print("%-*s  %14s  %14s  %7s  %s" % (width, label, fmt(o, unit), fmt(t, unit),
                                                 "n/a" if ratio != ratio else "%.2f" % ratio, v))
            lines.append("| %s | %s | %s | %s | %s |" % (label, fmt(o, unit), fmt(t, unit),
                                                         "n/a" if ratio != ratio else "%.2f" % ratio, v))
        return lines

    dfence_lines, rtt, floor_text = data_fence_table(run, dsizes, verdict, misses, floor_n)
    rows.extend(memory_rows)
    lines = table(rows)
    host_lines = table(host_rows) if host_rows else []
    for part, why in sorted(hosts.skipped.items()):
        print("real hosts: %s skipped: %s" % (part, why))
    # Time the hypervisor took from this VM while a benchmark ran: a figure
    # taken then measures the host's load, not a library.
    stolen_total = sum(sum(v.values()) for v in run.stolen.values())
    stolen_hits = ["`%s` (PMIx-CXX %.2f s, OpenPMIx %.2f s)" % (label, v["ours"], v["openpmix"])
                   for label, v in run.stolen.items() if sum(v.values()) >= 0.01]
    stolen_text = "The hypervisor took %.2f s of CPU time from this VM while the benchmarks ran " \
                  "(steal time, /proc/stat)%s" % (
                      stolen_total, ": during " + ", ".join(stolen_hits) + "." if stolen_hits else ".")
    print(stolen_text.replace("`", ""))
    # What other processes ran while a benchmark ran: on this sandbox the
    # init process's worker threads run at nice -10 in bursts of 1-5 ms (a
    # 32-rank fence held 5 ms by one: docs/performance.md, "Tails: steal, CPU gaps and what else ran").
    others_total = {}
    others_hits = []
    for label, by_lib in run.others.items():
        for lib in LIBS:
            for comm, sec in by_lib[lib].items():
                others_total[comm] = others_total.get(comm, 0.0) + sec
        ours_s, theirs_s = (sum(by_lib[l].values()) for l in LIBS)
        if ours_s >= 0.002 or theirs_s >= 0.002:
            others_hits.append("`%s` (PMIx-CXX %.1f ms, OpenPMIx %.1f ms)" % (label, ours_s * 1e3, theirs_s * 1e3))
    top = sorted(others_total.items(), key=lambda kv: -kv[1])[:3]
    others_text = "Other processes ran %.2f s while the benchmarks ran (%s)%s" % (
        sum(others_total.values()), ", ".join("%s %.2f s" % (c, v) for c, v in top) or "none",
        ", 2 ms or more during " + ", ".join(others_hits) + "." if others_hits else ".")
    print(others_text.replace("`", ""))
    # Each missed fence figure with the steal and the other threads' CPU
    # during each library's runs of its benchmark: a p99 moved by them is
    # the machine's (docs/performance.md, "Tails: steal, CPU gaps and what else ran").
    def beside(figure, case):
        st = run.stolen.get(case, {})
        ot = run.others.get(case, {})
        return "%s (steal: PMIx-CXX %.2f s, OpenPMIx %.2f s; other threads: PMIx-CXX %.1f ms, OpenPMIx %.1f ms)" % (
            figure, st.get("ours", 0.0), st.get("openpmix", 0.0),
            sum(ot.get("ours", {}).values()) * 1e3, sum(ot.get("openpmix", {}).values()) * 1e3)
    missed_text = ("Missed: " + "; ".join(beside(f, c) for f, c in misses) + ".") if misses else ""
    if missed_text:
        print(missed_text)
    gaps = []
    for when in ("before", "after"):
        per_s = run.values("ours", when + ".cpu_gaps_per_s")
        longest = run.values("ours", when + ".cpu_gap_longest_us")
        if per_s and longest:
            gaps.append("%.1f a second %s them (the longest %.1f ms)" % (per_s[0], when, longest[0] / 1e3))
    gap_text = ("A busy thread pinned to each CPU lost its CPU for more than 1 ms %s: a fence "
                "with a rank or the server queued on such a CPU waits as long." % " and ".join(gaps)) \
        if gaps else "The CPU-gap probe did not run."
    print(gap_text)

    os.makedirs(a.out, exist_ok=True)
    svg = fence_plot(run, sizes)
    with open(os.path.join(a.out, "datafence.svg"), "w") as f:
        f.write(data_fence_plot(run, dsizes, rtt))
    if hosts.log:
        hosts.write_log(os.path.join(a.out, "real_hosts.tsv"))
    with open(os.path.join(a.out, "fence.svg"), "w") as f:
        f.write(svg)
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next((l.split(":", 1)[1].strip() for l in f if l.startswith("model name")), "")
    except OSError:
        pass
    with open(os.path.join(a.out, "report.md"), "w") as f:
        f.write("# PMIx-CXX against OpenPMIx 4.2.2\n\n")
        f.write("%s, %d CPUs (%s), %s %s; %s mode, %d run(s) per library and benchmark, "
                "interleaved. Started %s, took %.0f s; load average (1 min) %.2f at the start, "
                "%.2f at the end.\n\n" % (
                    platform.node(), os.cpu_count() or 0, cpu, platform.system(), platform.release(),
                    "short" if short else "full", rounds, t_start.strftime("%Y-%m-%d %H:%M"),
                    (datetime.datetime.now() - t_start).total_seconds(), load_start, os.getloadavg()[0]))
        f.write(stolen_text + " " + others_text + " " + gap_text + "\n\n")
        if missed_text:
            f.write(missed_text + "\n\n")
        f.write("Goals: every timing at most 0.5 × OpenPMIx, memory at most 1 ×, no growth per cycle. "
                "In the fences every rank times every fence and all ranks' samples count; each fence "
                "figure has at least %d samples from at least %d fences (more fences at small N), and an "
                "untimed fence ends each run, so that no rank leaves while another is still in a timed "
                "one.\n\n" % (min_samples, min_fences))
        f.write("| figure | PMIx-CXX | OpenPMIx 4.2.2 | ratio | goal |\n|---|---|---|---|---|\n")
        f.write("\n".join(lines) + "\n\n")
        f.write("![fence latency against N](fence.svg)\n")
        f.write("\n## The data-carrying fence (what MPI_Init does)\n\n")
        f.write("Every rank Puts a 64-byte key and Commits (untimed), then all enter a collecting "
                "fence; every rank times every fence, and all ranks' samples count (median and p99 "
                "over all of them). After the last round each rank Gets two peers' keys and checks "
                "they are that round's. Limit: N x one Unix-socket round trip between two processes, "
                "measured in the same run (median %s); distance = our median / limit. Goals: at most "
                "0.5 x OpenPMIx for every N up to 64, 0.35 at N = 64; N = 128 and 256 run "
                "oversubscribed, without goal.\n\n" % fmt(rtt, "µs"))
        f.write("| N | PMIx-CXX median | OpenPMIx median | ratio | PMIx-CXX p99 | OpenPMIx p99 | ratio "
                "| limit | distance | goal |\n|---|---|---|---|---|---|---|---|---|---|\n")
        f.write("\n".join(dfence_lines) + "\n\n")
        if floor_text:
            f.write(floor_text + "\n\n")
        f.write("![data-carrying fence against N](datafence.svg)\n")
        f.write("\n## Real hosts: mpirun and srun\n\n")
        if not host_parts:
            f.write("Not run (--hosts none).\n")
        else:
            f.write("The wall time of the whole command, start to exit, of Open MPI 4.1.4's allreduce "
                    "(every rank's result checked), %d timed run(s) per library%s, interleaved. "
                    "PMIx-CXX: `mpirun` with `LD_LIBRARY_PATH` at copies of our `libpmix.so.2` and "
                    "`libpmix-server.so.2`; `srun` under a one-node Slurm 22.05 cluster started with "
                    "them in place of OpenPMIx. OpenPMIx 4.2.2: Debian's, no `LD_LIBRARY_PATH`, a "
                    "cluster of its own. `mpirun` is `mpirun --allow-run-as-root --oversubscribe`.\n\n"
                    % (hosts.runs, " (after %d untimed warm-up run(s) each)" % hosts.warmup if hosts.warmup else ""))
            f.write("Goal: at most 1 × OpenPMIx (issue 13).\n\n")
            if host_lines:
                f.write("| figure | PMIx-CXX | OpenPMIx 4.2.2 | ratio | goal |\n|---|---|---|---|---|\n")
                f.write("\n".join(host_lines) + "\n\n")
            for part, why in sorted(hosts.skipped.items()):
                f.write("- `%s`: skipped: %s\n" % (part, why))
            for note in hosts.notes:
                f.write("- %s\n" % note)
        f.write("\n## Across nodes: the data fence (PMIx-CXX)\n\n")
        one_node_64 = run.values("ours", "n64.dfence_us")
        if one_node_64:
            multinode.one_node_64 = statistics.median(one_node_64)
        for g in multinode.goals():
            print("multinode goal: " + g.replace("**", ""))
        f.write(multinode.markdown())
        if run.failures:
            f.write("\n## Failed runs\n\n" + "\n".join("- " + x for x in run.failures) + "\n")
    print()
    print("bench: report in %s, plot in %s" % (os.path.join(a.out, "report.md"), os.path.join(a.out, "fence.svg")))
    run.failures.extend(multinode.failures)
    if run.failures:
        print("bench: %d run(s) failed:" % len(run.failures))
        for x in run.failures:
            print("  " + x)
        return 1
    return 0


def dfence_goal(n):
    return 0.35 if n == 64 else 0.5 if n <= 64 else None


def tree_of_this_file():
    return os.path.join(os.path.dirname(os.path.realpath(__file__)), "..", "..")


class Multinode:
    """The data-carrying fence across 4 nodes on this machine
    (tools/multinode/demo.sh: 4 network namespaces, one pmixd each), ours
    only (OpenPMIx has no multi-node host here): bench_client datafence with
    every rank timing every fence, for each number of ranks per node, and
    the nodes' TCP round trip of the same run as the limit. With one rank
    per node, also 2 nodes x 1 with each node on a CPU of its own
    (MULTINODE_PIN=1), as on nodes that do not share their CPUs."""

    def __init__(self):
        self.rows = []  # (nodes, ppn, CPUs: "shared" or "one each", samples)
        self.rtt = float("nan")
        self.rtt_same_cpu = float("nan")
        self.skipped = ""
        self.failures = []
        self.one_node_64 = float("nan")  # our one-node 64-rank data fence, median (set by main)

    def markdown(self):
        if self.skipped:
            return "Not run: %s.\n" % self.skipped
        out = ["Every rank Puts a 64-byte key and Commits, then all %s enter a collecting fence, "
               "as in the one-node data fence; every rank times every fence and all samples count. "
               "The 4 nodes are network namespaces joined by a bridge, each with a `pmixd` "
               "(`tools/multinode/demo.sh`), sharing this machine's CPUs, so the figures include the "
               "scheduling of 4 daemons and their ranks on them; the 2-node row runs each node (its "
               "`pmixd` and its rank) on a CPU of its own (`MULTINODE_PIN=1`), as on nodes that do not "
               "share their CPUs. Limit: the TCP round trip between "
               "node 0 and node 3 in the same run (%s), each end on a CPU of its own as on two "
               "machines; distance = median / limit. With both ends on one CPU the round trip is "
               "%s, two context switches rather than a network's round trip "
               "(tools/multinode/tcp_rtt.py).\n\n"
               % ("ranks", fmt(self.rtt, "µs"), fmt(self.rtt_same_cpu, "µs")),
               "| nodes | CPUs | ranks per node | ranks | median | p99 | limit | distance |",
               "|---|---|---|---|---|---|---|---|"]
        for nodes, ppn, cpus, v in self.rows:
            m = statistics.median(v) if v else float("nan")
            out.append("| %d | %s | %d | %d | %s | %s | %s | %s |" % (
                nodes, cpus, ppn, nodes * ppn, fmt(m, "µs"),
                fmt(percentile(v, 99), "µs"), fmt(self.rtt, "µs"),
                "n/a" if (m != m or self.rtt != self.rtt) else "%.0f" % (m / self.rtt)))
        goals = self.goals()
        if goals:
            out.append("")
            out.append("Goals (issue 40, point 4):")
            out.append("")
            out.extend("- " + g for g in goals)
        return "\n".join(out) + "\n"

    def median_of(self, nodes, ppn):
        for n, p, cpus, v in self.rows:
            if n == nodes and p == ppn and cpus == "shared" and v:
                return statistics.median(v)
        return float("nan")

    def goals(self):
        """The point's two goals, and the nearest one this machine can show
        for the second: what crossing the nodes adds to the 64 ranks' own
        fence (this report's one-node 64-rank data fence, no network, no
        daemon), against twice 4 x 1. On 2 CPUs the 64 ranks' own fence
        takes more than twice 4 x 1 by itself (docs/multinode.md)."""
        one, sixteen = self.median_of(4, 1), self.median_of(4, 16)
        lines = []
        verdict = lambda ok: "**met**" if ok else "**missed**"
        if one == one and self.rtt == self.rtt:
            d = one / self.rtt
            lines.append("a 4 x 1 data fence in at most 10 round trips of the limit: %s round trips, %s"
                         % ("%.1f" % d, verdict(d <= 10)))
        if one == one and sixteen == sixteen:
            r = sixteen / one
            lines.append("4 x 16 in at most 2 x 4 x 1: %.2fx (%s against %s), %s"
                         % (r, fmt(sixteen, "µs"), fmt(one, "µs"), verdict(r <= 2)))
            if self.one_node_64 == self.one_node_64:
                added = sixteen - self.one_node_64
                lines.append("nearest goal this machine can show: what crossing nodes adds to the 64 ranks' "
                             "own fence (4 x 16 less the one-node 64-rank data fence above, %s) at most "
                             "2 x 4 x 1: %s against %s, %s"
                             % (fmt(self.one_node_64, "µs"), fmt(added, "µs"), fmt(2 * one, "µs"),
                                verdict(added <= 2 * one)))
        return lines


def multinode_fences(a, short, tree, fence_iters):
    mn = Multinode()
    spec = a.multinode or ("none" if short else "1,2,4,8,16")
    if spec == "none":
        mn.skipped = "--multinode none"
        return mn
    demo = os.path.join(tree, "tools", "multinode", "demo.sh")
    bench = os.path.join(tree, "tools", "multinode", "fence_bench.sh")
    client = os.path.join(os.path.abspath(a.bin), "bench_client")
    if os.geteuid() != 0:
        mn.skipped = "needs root (network namespaces)"
        return mn
    env = dict(os.environ)
    env.setdefault("PMIXRUN", os.path.join(os.path.abspath(a.bin), "..", "pmixrun", "pmixrun"))
    env.setdefault("PMIXD", os.path.join(os.path.abspath(a.bin), "..", "pmixd", "pmixd"))
    env["LD_LIBRARY_PATH"] = os.path.join(os.path.abspath(a.bin), "..", "..", "api")
    for need in (demo, env["PMIXRUN"], env["PMIXD"], client):
        if not os.path.exists(need):
            mn.skipped = "%s is missing" % need
            return mn
    print("bench: 4-node data fence, network round trip", flush=True)
    p = subprocess.run([bench, "--rtt-only"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env=env, timeout=300)
    for line in p.stdout.splitlines():
        if line.startswith("rtt_us "):
            mn.rtt = float(line.split()[1])
        elif line.startswith("rtt_same_cpu_us "):
            mn.rtt_same_cpu = float(line.split()[1])
    per_node = [int(x) for x in spec.split(",")]
    # The pinned row only where 2 CPUs make "a CPU of its own" true.
    own = len(os.sched_getaffinity(0)) >= 2
    setups = [(4, ppn, False) for ppn in per_node] + ([(2, 1, True)] if 1 in per_node and own else [])
    for nodes, ppn, pinned in setups:
        what = "%d-node data fence, %d rank(s) per node%s" % (
            nodes, ppn, ", each node on a CPU of its own" if pinned else "")
        print("bench: " + what, flush=True)
        env["PMIXRUN_ARGS"] = "--quiet --timeout 600"
        env["MULTINODE_PIN"] = "1" if pinned else ""
        # 500 fences (as tools/multinode/hosts_bench.sh): a run of 100 at
        # 4 x 1 lasts 50 ms, and one pause of the VM then moves its median.
        p = subprocess.run([demo, str(nodes), str(ppn), client, "datafence", str(max(20, fence_iters * 5 // 2))],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, timeout=900)
        v = [float(l.split()[2]) for l in p.stdout.splitlines()
             if l.startswith("sample dfence_us ") and len(l.split()) == 3]
        if p.returncode != 0 or not v:
            mn.failures.append("%s: exit %d: %s" % (what, p.returncode, p.stderr.strip()[-500:]))
            continue
        mn.rows.append((nodes, ppn, "one each" if pinned else "shared", v))
    return mn


memory_rows = []  # filled by data_fence_table, reported with the other figures


def data_fence_table(run, dsizes, verdict, misses, floor_n=0):
    """Rows of the data-carrying fence, printed and as Markdown; returns them,
    the median Unix-socket round trip (both libraries' runs pooled: it
    does not involve PMIx) and a sentence on the floor of the fence of
    floor_n processes (fence_floor, pooled alike; empty without it)."""
    rtts = run.values("ours", "uds_rtt_us") + run.values("openpmix", "uds_rtt_us")
    rtt = statistics.median(rtts) if rtts else float("nan")
    print()
    print("data-carrying fence (every rank times every fence); Unix-socket round trip %s" % fmt(rtt, "µs"))
    print("%5s  %10s %10s %6s  %10s %10s %6s  %10s %8s  %s" % (
        "N", "ours med", "OMPIx med", "ratio", "ours p99", "OMPIx p99", "ratio", "limit", "distance", "goal"))
    lines = []
    for n in dsizes:
        o = run.values("ours", "n%d.dfence_us" % n)
        t = run.values("openpmix", "n%d.dfence_us" % n)
        om = statistics.median(o) if o else float("nan")
        tm = statistics.median(t) if t else float("nan")
        op, tp = percentile(o, 99), percentile(t, 99)
        goal = dfence_goal(n)
        v = "-" if goal is None else (
            "met" if verdict(om, tm, goal) == "met" and verdict(op, tp, goal) == "met" else
            "n/a" if verdict(om, tm, goal) == "n/a" else "missed")
        if v == "missed":
            misses.append(("data fence N=%d" % n, "datafence n%d" % n))
        limit = n * rtt
        r = lambda x, y: "n/a" if (x != x or y != y or y <= 0) else "%.2f" % (x / y)
        print("%5d  %10s %10s %6s  %10s %10s %6s  %10s %8s  %s" % (
            n, fmt(om, "µs"), fmt(tm, "µs"), r(om, tm), fmt(op, "µs"), fmt(tp, "µs"), r(op, tp),
            fmt(limit, "µs"), r(om, limit), v if goal is None else "%s (<= %.2f)" % (v, goal)))
        lines.append("| %d | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            n, fmt(om, "µs"), fmt(tm, "µs"), r(om, tm), fmt(op, "µs"), fmt(tp, "µs"), r(op, tp),
            fmt(limit, "µs"), r(om, limit), v if goal is None else "%s (<= %.2f)" % (v, goal)))
    for n in dsizes:
        o = run.values("ours", "n%d.dfence_rss_kb" % n)
        t = run.values("openpmix", "n%d.dfence_rss_kb" % n)
        if o or t:
            om = statistics.median(o) if o else float("nan")
            tm = statistics.median(t) if t else float("nan")
            memory_rows.append(("a client's resident set after %d-rank data fences and two Gets, median" % n,
                                "kB", om, tm, "memory"))
    return lines, rtt, floor_sentence(run, floor_n)


def floor_sentence(run, n):
    """What each library adds to the floor of a fence of n processes (the
    same fence without PMIx: fence_floor's samples under both hosts,
    pooled), printed, and returned as Markdown; empty when not run. Its
    processes sleep without polling, where ours poll first: at a few ranks
    ours can be the faster (a negative figure, no ratio)."""
    floor = run.values("ours", "f%d.dfence_us" % n) + run.values("openpmix", "f%d.dfence_us" % n)
    o = run.values("ours", "n%d.dfence_us" % n)
    t = run.values("openpmix", "n%d.dfence_us" % n)
    if not n or not floor or not o or not t:
        return ""
    base = statistics.median(floor)
    added_o, added_t = statistics.median(o) - base, statistics.median(t) - base
    text = ("The floor at N = %d: the same fence of %d processes without PMIx (`tools/bench/fence_floor`: "
            "each writes 64 bytes to a parent over a Unix socket and sleeps, without polling, on a "
            "futex word that the parent wakes once it has read them all), median %s. What each library adds to it: "
            "PMIx-CXX %s, OpenPMIx %s (ratio %s)." % (
                n, n, fmt(base, "µs"), fmt(added_o, "µs"), fmt(added_t, "µs"),
                "%.2f" % (added_o / added_t) if added_t > 0 and added_o >= 0 else "n/a"))
    print(text.replace("`", ""))
    return text


def data_fence_plot(run, dsizes, rtt):
    """SVG: median data-carrying fence against N for both libraries, and the
    limit N x round trip; log2 N, log10 latency."""
    import math
    series = []
    for lib, color, label in (("ours", "#1f77b4", "PMIx-CXX"), ("openpmix", "#d62728", "OpenPMIx 4.2.2")):
        pts = [(n, statistics.median(v)) for n in dsizes for v in [run.values(lib, "n%d.dfence_us" % n)] if v]
        series.append((label, color, "", pts))
    if rtt == rtt:
        series.append(("limit: N x socket round trip", "#555", ' stroke-dasharray="4,4"',
                       [(n, n * rtt) for n in dsizes]))
    ys = [y for _, _, _, pts in series for _, y in pts if y > 0]
    lo = 10 ** math.floor(math.log10(min(ys))) if ys else 1.0
    hi = 10 ** math.ceil(math.log10(max(ys))) if ys else 10.0
    if hi <= lo:
        hi = lo * 10
    W, H, L, R, T, B = 760, 440, 70, 230, 30, 50
    pw, ph = W - L - R, H - T - B
    nmax = max(dsizes)
    def x(n):
        return L + (pw * (math.log2(n) / math.log2(nmax)) if nmax > 1 else pw / 2)
    def y(v):
        return T + ph - ph * (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (W, H),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="18" font-size="14">Data-carrying PMIx_Fence, median over every rank (µs, log) against N</text>' % L,
           '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (L, T + ph, L + pw, T + ph),
           '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (L, T, L, T + ph)]
    for n in dsizes:
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (x(n), T + ph + 18, n))
    d = lo
    while d <= hi * 1.0001:
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (L, y(d), L + pw, y(d)))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%g</text>' % (L - 6, y(d) + 4, d))
        d *= 10
    out.append('<text x="%d" y="%d" text-anchor="middle">N (log scale)</text>' % (L + pw / 2, H - 10))
    for i, (label, color, dash, pts) in enumerate(series):
        if not pts:
            continue
        out.append('<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>' % (
            color, dash, " ".join("%.1f,%.1f" % (x(n), y(v)) for n, v in pts if v > 0)))
        for n, v in pts:
            if v > 0:
                out.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (x(n), y(v), color))
        ly = T + 20 + 22 * i
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>' % (
            L + pw + 15, ly, L + pw + 45, ly, color, dash))
        out.append('<text x="%d" y="%d">%s</text>' % (L + pw + 50, ly + 4, label))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def fence_plot(run, sizes):
    """An SVG line chart of the median fence latency against N, per library
    and data collection, on a log2 axis for N."""
    series = []
    colors = {("ours", 0): "#1f77b4", ("ours", 1): "#6baed6",
              ("openpmix", 0): "#d62728", ("openpmix", 1): "#fc9272"}
    for lib in LIBS:
        for collect in (0, 1):
            pts = []
            for n in sizes:
                v = run.values(lib, "n%d.c%d.fence_us" % (n, collect))
                if v:
                    pts.append((n, statistics.median(v)))
            series.append(((lib, collect), pts))
    ymax = max([y for _, pts in series for _, y in pts] + [1.0])
    W, H, L, R, T, B = 720, 420, 70, 190, 30, 50
    pw, ph = W - L - R, H - T - B
    nmax = max(sizes)
    import math
    def x(n):
        return L + (pw * (math.log2(n) / math.log2(nmax)) if nmax > 1 else pw / 2)
    def y(v):
        return T + ph - ph * v / (ymax * 1.1)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">' % (W, H),
           '<rect width="100%" height="100%" fill="white"/>',
           '<text x="%d" y="18" font-size="14">Median PMIx_Fence latency (µs) against local clients N</text>' % L,
           '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (L, T + ph, L + pw, T + ph),
           '<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="black"/>' % (L, T, L, T + ph)]
    for n in sizes:
        out.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (x(n), T + ph + 18, n))
    for k in range(6):
        v = ymax * 1.1 * k / 5
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/>' % (L, y(v), L + pw, y(v)))
        out.append('<text x="%d" y="%.1f" text-anchor="end">%.0f</text>' % (L - 6, y(v) + 4, v))
    out.append('<text x="%d" y="%d" text-anchor="middle">N (log scale)</text>' % (L + pw / 2, H - 10))
    for i, ((lib, collect), pts) in enumerate(series):
        if not pts:
            continue
        c = colors[(lib, collect)]
        dash = ' stroke-dasharray="6,4"' if collect else ""
        out.append('<polyline fill="none" stroke="%s" stroke-width="2"%s points="%s"/>' % (
            c, dash, " ".join("%.1f,%.1f" % (x(n), y(v)) for n, v in pts)))
        for n, v in pts:
            out.append('<circle cx="%.1f" cy="%.1f" r="3" fill="%s"/>' % (x(n), y(v), c))
        ly = T + 20 + 22 * i
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="2"%s/>' % (
            L + pw + 15, ly, L + pw + 45, ly, c, dash))
        out.append('<text x="%d" y="%d">%s%s</text>' % (
            L + pw + 50, ly + 4, "PMIx-CXX" if lib == "ours" else "OpenPMIx 4.2.2",
            ", collect" if collect else ""))
    out.append("</svg>")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
