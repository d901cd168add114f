"""What users run on real hosts, timed with our library and with OpenPMIx
(compare.py's "Real hosts" part; issue 13, point 6):

- `mpirun --allow-run-as-root --oversubscribe -np N allreduce N` (Debian's
  Open MPI 4.1.4), the whole command from start to exit: ours with
  LD_LIBRARY_PATH at a folder holding copies of our libpmix.so.2 and
  libpmix-server.so.2 (mpirun then hosts our server, the ranks are our
  clients), OpenPMIx without LD_LIBRARY_PATH (Debian's libpmix.so.2);
- `srun --mpi=pmix -n 4 allreduce 4` under two one-node Slurm 22.05 clusters
  (tests/hosts/slurm/slurm_cluster.sh, through slurm_jobs.sh), one started
  with our library folder and one on OpenPMIx; each is started once, hosts
  every srun of its library, and is stopped at the end, also on error.

Runs are interleaved (ours then OpenPMIx, then the other way round) so that
machine noise hits both alike. Every run's output is checked: exit status 0,
"OK allreduce rank=R size=N" from every rank R exactly once, "OK allreduce
all ranks=N", no FAIL line, no rank left running. A failed run is an error
(listed in the report, compare.py exits 1), never a figure.

A part whose needs are missing (Open MPI, Slurm, munge, root) is skipped,
and the report says why.
"""
import os
import re
import select
import shutil
import signal
import subprocess
import tempfile
import time

LIBS = ("ours", "openpmix")
MPIRUN = "/usr/bin/mpirun"   # Open MPI derives its prefix from where mpirun is
RUN_TIMEOUT = 120            # seconds for one mpirun or srun
PMIX_COMPONENT = "/usr/lib/x86_64-linux-gnu/openmpi/lib/openmpi3/mca_pmix_ext3x.so"


def _tail(text, n=600):
    text = text.strip()
    return text if len(text) <= n else "..." + text[-n:]


def check_output(text, rc, n):
    """None when the allreduce run of N ranks passed, else why not."""
    why = []
    if rc != 0:
        why.append("exit status %d" % rc)
    if re.search(r"^FAIL", text, re.M):
        why.append("a FAIL line")
    ranks = sorted(int(m) for m in re.findall(r"^OK allreduce rank=(\d+) size=%d$" % n, text, re.M))
    if ranks != list(range(n)):
        why.append("OK lines from ranks %s, want 0..%d once each" % (ranks, n - 1))
    if not re.search(r"^OK allreduce all ranks=%d$" % n, text, re.M):
        why.append("no 'OK allreduce all ranks=%d' line" % n)
    return "; ".join(why) or None


def _which(name, extra=("/usr/sbin", "/sbin")):
    path = shutil.which(name)
    if path:
        return path
    for d in extra:
        p = os.path.join(d, name)
        if os.access(p, os.X_OK):
            return p
    return None


class SlurmCluster:
    """slurm_jobs.sh as a child process: one cluster, srun on request."""

    def __init__(self, script, harness, libdir, log):
        self.log = log
        self.logf = open(log, "w")
        args = ["/bin/bash", script, harness] + ([libdir] if libdir else [])
        self.proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=self.logf, text=True, bufsize=1)

    def _reply(self, timeout):
        r, _, _ = select.select([self.proc.stdout], [], [], timeout)
        if not r:
            raise RuntimeError("no answer from slurm_jobs.sh in %d s" % timeout)
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("slurm_jobs.sh exited (status %s)" % self.proc.poll())
        return line.split()

    def log_tail(self):
        try:
            with open(self.log) as f:
                return _tail(f.read(), 1500)
        except OSError:
            return ""

    def wait_ready(self):
        words = self._reply(300)
        if words[:1] != ["ready"]:
            raise RuntimeError(" ".join(words))

    def srun(self, args):
        """(exit status, seconds, stdout + stderr) of one srun."""
        self.proc.stdin.write("srun " + " ".join(args) + "\n")
        self.proc.stdin.flush()
        words = self._reply(RUN_TIMEOUT + 60)
        if len(words) != 6 or words[0] != "done":
            raise RuntimeError("unexpected answer: " + " ".join(words))
        rc, t0, t1 = int(words[1]), float(words[2]), float(words[3])
        text = ""
        for path in words[4:6]:
            try:
                with open(path) as f:
                    text += f.read()
                os.unlink(path)
            except OSError:
                pass
        return rc, t1 - t0, text

    def stop(self):
        """Stops the cluster: "stop", then end of input, then TERM, then KILL."""
        p = self.proc
        try:
            if p.poll() is None:
                try:
                    p.stdin.write("stop\n")
                    p.stdin.flush()
                except (BrokenPipeError, OSError, ValueError):
                    pass
            try:
                p.stdin.close()
            except (BrokenPipeError, OSError):
                pass
            for sig in (None, signal.SIGTERM, signal.SIGKILL):
                if sig is not None and p.poll() is None:
                    p.send_signal(sig)
                try:
                    p.wait(timeout=90)
                    break
                except subprocess.TimeoutExpired:
                    continue
        finally:
            self.logf.close()


class RealHosts:
    """Runs the real-host benchmark; samples[lib][case] = [seconds, ...]."""

    def __init__(self, program, libdir, harness, parts, runs, warmup, np_list, srun_n, failures):
        self.program = program
        self.libdir = libdir
        self.harness = harness
        self.parts = parts
        self.runs = runs
        self.warmup = warmup
        self.np_list = np_list
        self.srun_n = srun_n
        self.failures = failures      # shared with compare.py's Runner
        self.samples = {lib: {} for lib in LIBS}
        self.log = []                 # (case, lib, round, seconds) of every timed run, in order
        self.round = 0
        self.skipped = {}             # part -> why
        self.notes = []
        self.cases = []               # (key, label), in report order
        self.scratch = None
        self.clusters = {}

    # ---- what can run here ------------------------------------------------------
    def _check_mpirun(self):
        if not os.access(MPIRUN, os.X_OK):
            return "Open MPI's mpirun not found (%s; Debian's openmpi-bin)" % MPIRUN
        if not os.path.exists(PMIX_COMPONENT):
            return "Open MPI's PMIx component %s not found" % PMIX_COMPONENT
        return None

    def _check_srun(self):
        if os.geteuid() != 0:
            return "not root (the test cluster's daemons need root)"
        for name in ("srun", "slurmctld", "slurmd", "munged", "munge", "unmunge", "scontrol",
                     "sinfo", "unshare", "nsenter"):
            if not _which(name):
                return "%s not found (Debian's slurm-wlm, munge)" % name
        if not os.path.exists(self.harness):
            return "no Slurm test harness at %s" % self.harness
        return None

    def _common(self):
        if not self.program or not os.access(self.program, os.X_OK):
            return "no allreduce program (%s)" % self.program
        for f in ("libpmix.so.2", "libpmix-server.so.2"):
            if not os.path.exists(os.path.join(self.libdir, f)):
                return "no %s in %s" % (f, self.libdir)
        return None

    # ---- running ----------------------------------------------------------------
    def _leftovers(self):
        """PIDs of processes still running our copy of the program."""
        pids = []
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                exe = os.readlink("/proc/%s/exe" % d)
            except OSError:
                continue
            if exe in (self.prog, self.prog + " (deleted)"):
                pids.append(int(d))
        return pids

    def _after_run(self, what):
        """A rank left running after its launcher exited is an error: it is
        killed (by PID: processes of our own copy of the program)."""
        left = self._leftovers()
        for _ in range(20):
            if not left:
                return None
            time.sleep(0.1)
            left = self._leftovers()
        for pid in left:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        return "ranks left running after %s exited: %s" % (what, " ".join(map(str, left)))

    def _record(self, lib, key, what, rc, secs, text, n, timed):
        why = check_output(text, rc, n)
        left = self._after_run(what)
        if left:
            why = (why + "; " if why else "") + left
        if why:
            self.failures.append("%s %s: %s; output: %s" % (lib, what, why, _tail(text)))
        elif timed:
            self.samples[lib].setdefault(key, []).append(secs)
            self.log.append((key, lib, self.round, secs))

    def _mpirun(self, lib, n, key, timed):
        env = dict(self.base_env)
        if lib == "ours":
            env["LD_LIBRARY_PATH"] = self.ourlib
        cmd = [MPIRUN, "--allow-run-as-root", "--oversubscribe", "-np", str(n), self.prog, str(n)]
        what = "mpirun -np %d" % n
        t0 = time.perf_counter()
        try:
            p = subprocess.run(cmd, env=env, cwd=self.rundir, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                               timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            self.failures.append("%s %s: timed out after %d s" % (lib, what, RUN_TIMEOUT))
            self._after_run(what)
            return
        secs = time.perf_counter() - t0
        self._record(lib, key, what, p.returncode, secs, p.stdout, n, timed)

    def _srun(self, lib, n, key, timed):
        what = "srun -n %d" % n
        try:
            rc, secs, text = self.clusters[lib].srun(["-n", str(n), self.prog, str(n)])
        except RuntimeError as e:
            self.failures.append("%s %s: %s; slurm_jobs.sh log: %s" % (lib, what, e, self.clusters[lib].log_tail()))
            raise
        if rc in (124, 137):
            text += "\n(srun timed out after %d s)" % RUN_TIMEOUT
        self._record(lib, key, what, rc, secs, text, n, timed)

    def _ldd_pmix(self, env):
        p = subprocess.run(["ldd", PMIX_COMPONENT], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL, text=True)
        for line in p.stdout.splitlines():
            parts = line.split()
            if parts and parts[0] == "libpmix.so.2" and len(parts) >= 3:
                return parts[2]
        return None

    def run(self):
        if "mpirun" in self.parts:
            why = self._check_mpirun()
            if why:
                self.skipped["mpirun"] = why
        if "srun" in self.parts:
            why = self._check_srun()
            if why:
                self.skipped["srun"] = why
        parts = [p for p in self.parts if p not in self.skipped]
        if not parts:
            return
        why = self._common()
        if why:
            for p in parts:
                self.skipped[p] = why
            return

        # a scratch folder of our own, short (Unix socket paths under TMPDIR)
        self.scratch = tempfile.mkdtemp(prefix="pmxh.", dir="/tmp")
        # TERM (a test's timeout) ends the run through the clean-up below
        def on_term(signum, frame):
            raise SystemExit(128 + signum)
        old_term = signal.signal(signal.SIGTERM, on_term)
        try:
            self._run(parts)
        finally:
            for c in self.clusters.values():
                c.stop()
            shutil.rmtree(self.scratch, ignore_errors=True)
            signal.signal(signal.SIGTERM, old_term)

    def _run(self, parts):
        s = self.scratch
        self.ourlib = os.path.join(s, "lib")
        os.mkdir(self.ourlib)
        for f in ("libpmix.so.2", "libpmix-server.so.2"):   # copies: a build may replace them
            shutil.copy(os.path.join(self.libdir, f), self.ourlib)
        self.prog = os.path.join(s, "allreduce")
        shutil.copy(self.program, self.prog)
        self.rundir = os.path.join(s, "run")
        os.mkdir(self.rundir)
        tmp = os.path.join(s, "tmp")
        os.mkdir(tmp)
        env = dict(os.environ)
        env.pop("LD_LIBRARY_PATH", None)
        env["PATH"] = "/usr/bin:/bin:" + env.get("PATH", "")
        env["TMPDIR"] = tmp
        self.base_env = env

        steps = []  # (key, n, function)
        if "mpirun" in parts:
            ours = self._ldd_pmix(dict(env, LD_LIBRARY_PATH=self.ourlib))
            theirs = self._ldd_pmix(env)
            if ours != os.path.join(self.ourlib, "libpmix.so.2") or not theirs or theirs.startswith(s):
                self.failures.append("Open MPI's PMIx component would not load the library wanted: "
                                     "ours resolves to %s, OpenPMIx to %s" % (ours, theirs))
                self.skipped["mpirun"] = "Open MPI would not load our library (see the failed runs)"
            else:
                self.notes.append("mpirun: Open MPI's PMIx component loads %s (ours) and %s (OpenPMIx)"
                                  % ("a copy of our libpmix.so.2", os.path.realpath(theirs)))
                for n in self.np_list:
                    key = "mpirun_np%d" % n
                    self.cases.append((key, "`mpirun -np %d` allreduce, start to exit" % n))
                    steps.append((key, n, self._mpirun))
        if "srun" in parts:
            try:
                for lib in LIBS:
                    t0 = time.perf_counter()
                    c = SlurmCluster(os.path.join(os.path.dirname(os.path.abspath(__file__)), "slurm_jobs.sh"),
                                     self.harness, self.ourlib if lib == "ours" else None,
                                     os.path.join(s, "slurm_jobs.%s.log" % lib))
                    self.clusters[lib] = c
                    try:
                        c.wait_ready()
                    except RuntimeError as e:
                        raise RuntimeError("%s cluster: %s; log: %s" % (lib, e, c.log_tail()))
                    self.notes.append("srun: the %s cluster started in %.1f s" % (
                        "PMIx-CXX" if lib == "ours" else "OpenPMIx", time.perf_counter() - t0))
            except RuntimeError as e:
                self.failures.append("Slurm: %s" % e)
                self.skipped["srun"] = "a test cluster did not start (see the failed runs)"
            else:
                key = "srun_n%d" % self.srun_n
                self.cases.append((key, "`srun --mpi=pmix -n %d` allreduce, start to exit" % self.srun_n))
                steps.append((key, self.srun_n, self._srun))

        try:
            for key, n, fn in steps:   # untimed: page cache, Open MPI's files, the clusters' first job
                for lib in LIBS:
                    for _ in range(self.warmup):
                        fn(lib, n, key, False)
            for r in range(self.runs):
                self.round = r + 1
                order = LIBS if r % 2 == 0 else tuple(reversed(LIBS))
                for key, n, fn in steps:
                    for lib in order:
                        fn(lib, n, key, True)
        except RuntimeError:
            pass   # a cluster stopped answering: recorded, the clusters are stopped by run()

    def values(self, lib, key):
        return self.samples[lib].get(key, [])

    def write_log(self, path):
        """Every timed run, in the order run: case, library, round, seconds."""
        with open(path, "w") as f:
            f.write("case\tlibrary\tround\tseconds\n")
            for key, lib, r, secs in self.log:
                f.write("%s\t%s\t%d\t%.6f\n" % (key, lib, r, secs))
