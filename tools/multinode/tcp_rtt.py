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
"""
import os
import socket
import sys
import time


def echo(addr, port):
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
