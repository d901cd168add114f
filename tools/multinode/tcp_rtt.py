#!/usr/bin/env python3
"""The TCP round trip between two nodes (network namespaces): 64 bytes echoed
on one connection with TCP_NODELAY, as the daemons' messages travel. The
limit that tools/multinode/fence_bench.sh and caf_rtt.sh compare with.

  tcp_rtt.py echo ADDR PORT      listens on ADDR:PORT and echoes one
                                 connection until it closes
  tcp_rtt.py time ADDR PORT N    connects (retrying for 5 s), makes 20
                                 untimed exchanges, then times N; prints
                                 the median in µs
  tcp_rtt.py ranks ADDR PORT N   as a job's process (PMIX_RANK): rank 3
                                 echoes on ADDR:PORT, rank 0 times and
                                 prints "rtt_us MEDIAN", the others end

Where both ends share this machine's CPUs, where they run decides what is
timed: on one CPU a round trip is two context switches (9.5 us on the VM of
2026-12-07), on two CPUs the receiver is woken on its own CPU, as on two
machines (64-66 us there); left to the scheduler, a run gets either. So with
TCP_RTT_CPU=cross (the default where this process may run on 2 CPUs or
more) the echoing end runs on the second CPU it may use and the timing end
on the first, as two nodes do; TCP_RTT_CPU=same puts both on the first;
TCP_RTT_CPU=free leaves them to the scheduler. TCP_RTT_SHOW_CPU=1: each end
says on stderr where it runs.
"""
import os
import socket
import sys
import time


def pin(echoing):
    """This end's CPU (TCP_RTT_CPU above)."""
    cpus = sorted(os.sched_getaffinity(0))
    how = os.environ.get("TCP_RTT_CPU") or "cross"
    if how == "free" or len(cpus) < 2:
        return
    if how not in ("cross", "same"):
        sys.exit("tcp_rtt.py: TCP_RTT_CPU is cross, same or free, not %r" % how)
    cpu = cpus[1] if echoing and how == "cross" else cpus[0]
    os.sched_setaffinity(0, {cpu})
    if os.environ.get("TCP_RTT_SHOW_CPU"):
        print("tcp_rtt.py: %s on CPU %d" % ("echo" if echoing else "time", cpu), file=sys.stderr, flush=True)


def echo(addr, port):
    pin(True)
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((addr, port))
    s.listen(1)
    c, _ = s.accept()
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    while True:
        d = c.recv(64)
        if not d:
            break
        c.sendall(d)


def median_us(addr, port, n):
    pin(False)
    for _ in range(100):
        try:
            c = socket.create_connection((addr, port))
            break
        except OSError:
            time.sleep(0.05)
    else:
        sys.exit("tcp_rtt.py: cannot connect to %s:%d" % (addr, port))
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    t = []
    for i in range(20 + n):
        a = time.perf_counter()
        c.sendall(b"x" * 64)
        k = 0
        while k < 64:
            k += len(c.recv(64 - k))
        if i >= 20:
            t.append((time.perf_counter() - a) * 1e6)
    c.close()
    t.sort()
    return t[len(t) // 2]


def main():
    if len(sys.argv) < 4:
        sys.exit(__doc__)
    mode, addr, port = sys.argv[1], sys.argv[2], int(sys.argv[3])
    n = int(sys.argv[4]) if len(sys.argv) > 4 else 200
    if mode == "echo":
        echo(addr, port)
    elif mode == "time":
        print("%.1f" % median_us(addr, port, n))
    elif mode == "ranks":
        rank = os.environ.get("PMIX_RANK")
        if rank == "3":
            echo(addr, port)
        elif rank == "0":
            print("rtt_us %.1f" % median_us(addr, port, n))
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
