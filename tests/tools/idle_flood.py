"""Idle TCP connections to a port, as a hostile peer holds them.

    idle_flood.py HOST PORT N STATUS_FILE

Opens N connections (raising this process's descriptor limit as far as it
may), sends nothing on any, and writes "open N" to STATUS_FILE. Then it
waits (up to 120 s, a guard against hangs) until the other side has closed
every one of them, and writes "closed K of N" (K those closed). Used by
pmixd_flood_test.sh (issue 33.7).
"""
import resource
import select
import socket
import sys
import time


def main():
    host, port, n, status = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, n + 256)), hard))
    conns = []
    for _ in range(n):
        s = socket.create_connection((host, port), timeout=30)
        s.setblocking(False)
        conns.append(s)
    with open(status, "w") as f:
        f.write("open %d\n" % len(conns))
    open_ones = set(conns)
    deadline = time.monotonic() + 120
    poller = select.poll()
    by_fd = {s.fileno(): s for s in conns}
    for s in conns:
        poller.register(s, select.POLLIN | select.POLLHUP | select.POLLERR)
    while open_ones and time.monotonic() < deadline:
        for fd, _ in poller.poll(1000):
            s = by_fd[fd]
            try:
                data = s.recv(4096)
            except (ConnectionResetError, BrokenPipeError):
                data = b""
            except BlockingIOError:
                continue
            if not data:
                poller.unregister(fd)
                open_ones.discard(s)
    with open(status, "w") as f:
        f.write("closed %d of %d\n" % (n - len(open_ones), n))


if __name__ == "__main__":
    main()
