#!/usr/bin/env python3
"""tools/multinode/fence_cpu.py NODES RANKS_PER_NODE [FENCES]
   tools/multinode/fence_cpu.py --one-node RANKS [FENCES]
   tools/multinode/fence_cpu.py --floor RANKS [FENCES]

What one data fence across NODES nodes costs this machine in CPU, beside
its wall time: demo.sh runs bench_client datafence twice, with 300 and with
300 + FENCES (default 1,000) fences, and the difference between the two
runs' CPU time (user and system, of every process they made and waited for:
the daemons, the servers in them, the ranks, pmixrun), divided by FENCES,
is one fence's: start-up, the end and the network namespaces cancel out.
Its wall time is the same difference of the ranks' timed rounds (their
dfence_loop_us, the median over the ranks) over FENCES (the runs' own wall
times differ by more than the fences: demo.sh waits for the daemons' end
in steps of 0.1 s). The CPU of a start-up varies by some 25 ms from run
to run here: over 1,000 fences, a few percent. "busy" is CPU over wall: near the
number of CPUs this process may use ("cpus"), the fence is bound by CPU
(docs/multinode.md, "Where a fence's time goes"). median_us: every rank's
fence times in the longer run, their median. With PMIX_CXX_SPIN_US=0
PMIX_CXX_SERVER_SPIN_US=0 in the environment nothing polls, so the CPU is
what the fence needs.

With --one-node the same fence of RANKS ranks on this node alone, under
bench_host (one server, no daemon, no network, no root needed): what the
ranks' own fence costs, to set beside a fence of as many ranks across
nodes.

With --floor the same measure of tools/bench/fence_floor: RANKS processes
that each write one 64-byte message to a parent and sleep on a futex word
it shares with them, until it has read them all and wakes them at once.
No PMIx: the system calls, wake-ups and context switches that any fence of
RANKS processes on one node needs, the floor under --one-node's figures.

Prints one line:
  cpu_us C user_us U sys_us S wall_us W busy B cpus N median_us M
Needs root (network namespaces), as demo.sh. MULTINODE_CLIENT: the
bench_client (default bazel-bin/tools/bench/bench_client); BENCH_HOST the
bench_host of --one-node (default beside it); FENCE_FLOOR the fence_floor
of --floor (default beside it).
"""
import os
import resource
import statistics
import subprocess
import sys
import tempfile

BASE = 300


def usage(message):
    sys.stderr.write("fence_cpu.py: %s\nusage: fence_cpu.py NODES RANKS_PER_NODE [FENCES]\n"
                     "       fence_cpu.py --one-node RANKS [FENCES]\n"
                     "       fence_cpu.py --floor RANKS [FENCES]\n" % message)
    sys.exit(2)


def samples(text, name):
    return [float(l.split()[2]) for l in text.splitlines()
            if l.startswith("sample %s " % name) and len(l.split()) == 3]


def run(command, fences):
    """One run of `fences` fences: (user s, system s, the ranks' fence
    times, the ranks' timed rounds' times)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    p = subprocess.run(command + [str(fences)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.stderr.write("fence_cpu.py: the run of %d fences failed (exit %d):\n%s\n"
                         % (fences, p.returncode, p.stderr[-2000:]))
        sys.exit(1)
    return (after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime,
            samples(p.stdout, "dfence_us"), samples(p.stdout, "dfence_loop_us"))


def main():
    args = sys.argv[1:]
    floor = bool(args) and args[0] == "--floor"
    one_node = bool(args) and args[0] in ("--one-node", "--floor")
    if one_node:
        args = ["1"] + args[1:]
    if len(args) not in (2, 3):
        usage("two or three arguments")
    try:
        nodes, per_node = int(args[0]), int(args[1])
        fences = int(args[2]) if len(args) == 3 else 1000
    except ValueError:
        usage("NODES, RANKS_PER_NODE and FENCES are numbers")
    if nodes < 1 or per_node < 1 or fences < 1:
        usage("NODES, RANKS_PER_NODE and FENCES must be at least 1")
    here = os.path.dirname(os.path.abspath(__file__))
    client = os.environ.get("MULTINODE_CLIENT", os.path.join(os.getcwd(), "bazel-bin/tools/bench/bench_client"))
    host = os.environ.get("BENCH_HOST", os.path.join(os.path.dirname(client), "bench_host"))
    floor_program = os.environ.get("FENCE_FLOOR", os.path.join(os.path.dirname(client), "fence_floor"))
    needed = [floor_program] if floor else [client] + ([host] if one_node else [])
    for program in needed:
        if not os.access(program, os.X_OK):
            sys.stderr.write("fence_cpu.py: no %s (build //tools/bench:all, or set MULTINODE_CLIENT, "
                             "BENCH_HOST and FENCE_FLOOR)\n" % program)
            sys.exit(1)
    with tempfile.TemporaryDirectory(prefix="fence_cpu.") as tmp:
        if floor:
            command = [floor_program, str(per_node)]
        elif one_node:
            command = [host, client, tmp, "datafence", str(per_node)]
        else:
            command = [os.path.join(here, "demo.sh"), str(nodes), str(per_node), client, "datafence"]
        short = run(command, BASE)
        long_ = run(command, BASE + fences)
    if not long_[2] or not long_[3] or not short[3]:
        sys.stderr.write("fence_cpu.py: a run printed no fence times (a bench_client "
                         "without dfence_loop_us?)\n")
        sys.exit(1)
    user = (long_[0] - short[0]) / fences * 1e6
    system = (long_[1] - short[1]) / fences * 1e6
    wall = (statistics.median(long_[3]) - statistics.median(short[3])) / fences
    cpu = user + system
    print("cpu_us %.0f user_us %.0f sys_us %.0f wall_us %.0f busy %s cpus %d median_us %.0f" % (
        cpu, user, system, wall, "%.2f" % (cpu / wall) if wall > 0 else "n/a",
        len(os.sched_getaffinity(0)), statistics.median(long_[2])))


if __name__ == "__main__":
    main()
