"""What the tests share: where the built programs are, a Python host with a
short temporary directory, launching clients with setup_fork's environment,
and a thread-safe record of server-module calls."""
import os
import select
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

from pmix import *

HERE = os.path.dirname(os.path.abspath(__file__))
# The build tree: the test's runfiles under Bazel, bazel-bin when run by hand.
ROOT = os.environ.get("PMIX_PY_TEST_ROOT") or os.path.join(HERE, "..", "..", "bazel-bin")
SCRIPT_CLIENT = os.path.join(ROOT, "tests", "e2e", "script_client")
PEER_SERVER = os.path.join(ROOT, "tests", "e2e", "peer_server")
EVENT_CLIENT = os.path.join(ROOT, "tests", "e2e", "event_client")
PMIXRUN = os.path.join(ROOT, "tools", "pmixrun", "pmixrun")
PYTHON = sys.executable
# Only against hangs: no test measures time.
TIMEOUT = 120


def info(key, value, val_type):
    return {"key": key, "value": value, "val_type": val_type}


def short_tmpdir():
    """A directory whose socket paths fit sun_path (Bazel's TEST_TMPDIR may not)."""
    return tempfile.mkdtemp(prefix="pmixpy.", dir="/tmp")


def finish(process):
    """Waits for a launched process: (exit status, stdout, stderr)."""
    try:
        out, err = process.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        process.kill()
        out, err = process.communicate()
        raise AssertionError("hung and was killed:\n%s\n%s" % (out, err))
    return process.returncode, out, err


def run(argv, env=None):
    return finish(subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   text=True))


class Host:
    """A PMIxServer in the test process, with its own short tmpdir."""

    def __init__(self):
        self.tmpdir = short_tmpdir()
        self.server = PMIxServer()
        self.inits = 0

    def init(self, slots=None, directives=()):
        rc = self.server.init([info(PMIX_SERVER_TMPDIR, self.tmpdir, PMIX_STRING)] + list(directives),
                              slots)
        if rc == PMIX_SUCCESS:
            self.inits += 1
        return rc

    def register_job(self, nspace, nprocs, local=None, nodes=None, extra=()):
        """Registers `nspace` with nprocs ranks; the first `local` (default:
        all) run here and are registered as clients. `nodes` maps node names
        to rank lists for a job spanning several nodes."""
        local = list(range(nprocs)) if local is None else list(local)
        job = [info(PMIX_JOB_SIZE, nprocs, PMIX_UINT32)]
        if nodes:
            rc, node_map = self.server.generate_regex(list(nodes))
            assert rc == PMIX_SUCCESS
            rc, proc_map = self.server.generate_ppn([",".join(str(r) for r in ranks)
                                                     for ranks in nodes.values()])
            assert rc == PMIX_SUCCESS
            job += [info(PMIX_NODE_MAP, node_map, PMIX_STRING),
                    info(PMIX_PROC_MAP, proc_map, PMIX_STRING)]
        rc = self.server.register_nspace(nspace, len(local), job + list(extra))
        assert rc == PMIX_SUCCESS, rc
        for r in local:
            rc = self.server.register_client({"nspace": nspace, "rank": r}, os.getuid(), os.getgid())
            assert rc == PMIX_SUCCESS, rc

    def launch(self, nspace, rank, argv):
        """Starts argv as rank `rank` of `nspace`, with setup_fork's variables."""
        env = dict(os.environ)
        rc = self.server.setup_fork({"nspace": nspace, "rank": rank}, env)
        assert rc == PMIX_SUCCESS, rc
        return subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True)

    def close(self):
        while self.inits > 0:
            self.inits -= 1
            self.server.finalize()
        shutil.rmtree(self.tmpdir, ignore_errors=True)


class Record:
    """Calls of server-module callables, from the library's threads."""

    def __init__(self):
        self.lock = threading.Lock()
        self.calls = []

    def add(self, slot, *args):
        with self.lock:
            self.calls.append((slot,) + args)

    def of(self, slot):
        with self.lock:
            return [c[1:] if len(c) > 2 else c[1] for c in self.calls if c[0] == slot]

    def answer(self, slot, result=PMIX_SUCCESS):
        """A callable that records its arguments and returns `result`."""
        def callable_(*args):
            self.add(slot, *args)
            return result
        return callable_


def this_host():
    return socket.gethostname()


class Lines:
    """The lines a launched process writes to its stdout, read as they come
    (os.read on the pipe: nothing waits in a Python buffer), each wait
    bounded by TIMEOUT against hangs."""

    def __init__(self, process):
        self.process = process
        self.pending = b""

    def line(self, prefix):
        """The next line that starts with `prefix` (the lines before it are
        skipped)."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            while b"\n" in self.pending:
                text, self.pending = self.pending.split(b"\n", 1)
                if text.decode().startswith(prefix):
                    return text.decode()
            ready, _, _ = select.select([self.process.stdout], [], [], max(0, deadline - time.monotonic()))
            chunk = os.read(self.process.stdout.fileno(), 65536) if ready else b""
            if not chunk:
                if self.process.poll() is None:
                    self.process.kill()
                self.process.wait()
                raise AssertionError("no '%s' line from %s: %r" % (prefix, self.process.args, self.process.stderr.read()))
            self.pending += chunk


class HostProcess:
    """tests/python/py_host.py in a process of its own: a second Python host
    the test talks to through its stdin and stdout."""

    SCRIPT = os.path.join(HERE, "py_host.py")

    def __init__(self, tmpdir, name, job, size, hostname=None):
        argv = [PYTHON, self.SCRIPT, tmpdir, name, job, str(size)] + ([hostname] if hostname else [])
        self.process = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, bufsize=0)
        self.output = Lines(self.process)
        self.pid = int(self.output.line("ready").split()[1])

    def ask(self, command, prefix):
        self.process.stdin.write((command + "\n").encode())
        return self.output.line(prefix)

    def stop(self):
        """Finalizes it: (finalize's line, exit status)."""
        said = self.ask("stop", "FINALIZE")
        try:
            self.process.stdin.close()
            return said, self.process.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            self.kill()
            raise AssertionError("py_host.py hung after finalize")

    def kill(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()
