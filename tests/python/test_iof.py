"""Forwarded output in Python: a PMIxTool (tests/python/py_iof_tool.py, its
own process) pulls a job's output from a Python host whose 'iofpull'
callable agrees and which delivers with PMIxServer.iof_deliver; the tool
pushes stdin through the host's 'pushstdin'. Without those callables the
documented statuses."""
import ast
import os
import subprocess
import sys

from pmix import *

import support
from support import info

TOOL = os.path.join(support.HERE, "py_iof_tool.py")
TOOL_SUPPORT = [info(PMIX_SERVER_TOOL_SUPPORT, True, PMIX_BOOL)]
JOB = "pyiof"


class Tool:
    """The tool process, one command and one answer at a time."""

    def __init__(self, host):
        self.p = subprocess.Popen([support.PYTHON, TOOL, str(os.getpid()), host.tmpdir, JOB],
                                  stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                  text=True)
        self.started = self.answer()

    def answer(self):
        line = self.p.stdout.readline()
        assert line, "the tool ended: " + self.p.stderr.read()
        return ast.literal_eval(line)

    def ask(self, command):
        self.p.stdin.write(command + "\n")
        self.p.stdin.flush()
        return self.answer()

    def end(self):
        rc = self.ask("end")
        code, out, err = support.finish(self.p)
        return rc, code, err


def proc(rank):
    return {'nspace': JOB, 'rank': rank}


def test_a_python_tool_pulls_output_a_python_host_delivers(host):
    record = support.Record()
    assert host.init({'iofpull': record.answer('iofpull'), 'pushstdin': record.answer('pushstdin')},
                     TOOL_SUPPORT) == PMIX_SUCCESS
    host.register_job(JOB, 2)
    tool = Tool(host)
    rc, me = tool.started
    assert rc == PMIX_SUCCESS
    (rc1, out_ref), (rc2, err_ref) = tool.ask("pull")
    assert (rc1, rc2) == (PMIX_SUCCESS, PMIX_SUCCESS) and out_ref != err_ref
    # The host's callable was asked once per pull, in python3-pmix's form.
    assert [(a['channels'], a['sources']) for a in record.of('iofpull')] == [
        (PMIX_FWD_STDOUT_CHANNEL, [proc(0)]),
        (PMIX_FWD_STDERR_CHANNEL, [{'nspace': JOB, 'rank': PMIX_RANK_WILDCARD}])]
    blob = b"\x00out\x00put\xff" + bytes(range(256))
    srv = host.server
    assert srv.iof_deliver(proc(0), PMIX_FWD_STDOUT_CHANNEL, {'bytes': blob, 'size': len(blob)}, []) == PMIX_SUCCESS
    assert srv.iof_deliver(proc(1), PMIX_FWD_STDOUT_CHANNEL, b"rank 1's stdout: nobody pulled it", []) == PMIX_SUCCESS
    assert srv.iof_deliver(proc(1), PMIX_FWD_STDERR_CHANNEL, b"raise", []) == PMIX_SUCCESS
    assert srv.iof_deliver(proc(0), PMIX_FWD_STDERR_CHANNEL, b"after the raise", []) == PMIX_SUCCESS
    calls = tool.ask("wait 3")
    assert sorted((c[:5] for c in calls), key=repr) == sorted([
        ("out", out_ref, PMIX_FWD_STDOUT_CHANNEL, proc(0), {'bytes': blob, 'size': len(blob)}),
        ("err", err_ref, PMIX_FWD_STDERR_CHANNEL, proc(1), {'bytes': b"raise", 'size': 5}),
        ("err", err_ref, PMIX_FWD_STDERR_CHANNEL, proc(0), {'bytes': b"after the raise", 'size': 15})], key=repr)
    # Deregistered, the stdout handler gets nothing more; stderr still comes.
    assert tool.ask("deregister %d" % out_ref) == PMIX_SUCCESS
    assert srv.iof_deliver(proc(0), PMIX_FWD_STDOUT_CHANNEL, b"not pulled any more", []) == PMIX_SUCCESS
    assert srv.iof_deliver(proc(0), PMIX_FWD_STDERR_CHANNEL, b"the last", []) == PMIX_SUCCESS
    calls = tool.ask("wait 4")
    assert calls[3][:5] == ("err", err_ref, PMIX_FWD_STDERR_CHANNEL, proc(0), {'bytes': b"the last", 'size': 8})
    assert tool.ask("count") == 4  # "not pulled any more", delivered before "the last", never came
    # stdin: the bytes, then the end of the input (no payload).
    assert tool.ask("push") == (PMIX_SUCCESS, PMIX_SUCCESS)
    pushes = record.of('pushstdin')
    assert [(a['source'], a['targets'], a['payload']) for a in pushes] == [
        (me, [proc(0)], {'bytes': b"in\x00put", 'size': 6}), (me, [proc(0)], None)]
    rc, code, err = tool.end()
    assert (rc, code) == (PMIX_SUCCESS, 0), err
    # The raising handler was reported in the tool; nothing else went wrong.
    assert err.count("ValueError: py_iof_tool raises in its IOF handler on purpose") == 1, err
    assert "Exception ignored in: 'pmix IOF handler %d'" % err_ref in err


def test_without_iofpull_and_pushstdin_callables_not_supported(host):
    assert host.init({}, TOOL_SUPPORT) == PMIX_SUCCESS
    host.register_job(JOB, 1)
    tool = Tool(host)
    assert tool.started[0] == PMIX_SUCCESS
    assert tool.ask("pull") == ((PMIX_ERR_NOT_SUPPORTED, -1), (PMIX_ERR_NOT_SUPPORTED, -1))
    assert tool.ask("push") == (PMIX_ERR_NOT_SUPPORTED, PMIX_ERR_NOT_SUPPORTED)
    rc, code, err = tool.end()
    assert (rc, code) == (PMIX_SUCCESS, 0), err


def test_an_iofpull_callable_that_refuses_or_raises(host, monkeypatch):
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: reported.append(u))

    def iofpull(args):
        if args['channels'] == PMIX_FWD_STDOUT_CHANNEL:
            return PMIX_ERR_NO_PERMISSIONS
        raise RuntimeError("no stderr for tools")

    assert host.init({'iofpull': iofpull}, TOOL_SUPPORT) == PMIX_SUCCESS
    host.register_job(JOB, 1)
    tool = Tool(host)
    assert tool.ask("pull") == ((PMIX_ERR_NO_PERMISSIONS, -1), (PMIX_ERROR, -1))
    assert len(reported) == 1 and reported[0].exc_type is RuntimeError
    assert "iofpull" in str(reported[0].object)
    rc, code, err = tool.end()
    assert (rc, code) == (PMIX_SUCCESS, 0), err
