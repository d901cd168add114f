"""A Python host: PMIxServer with its server module in Python, launching real
C clients (tests/e2e/script_client) with the environment setup_fork gives."""
import json
import os
import shutil
import subprocess
import sys
import threading

from pmix import *

import support
from support import SCRIPT_CLIENT, info


def steps_exchanging(nprocs, rank):
    return ([SCRIPT_CLIENT, "init", "put:color=c%d" % rank, "commit", "fence:collect"]
            + ["get:%d:color" % peer for peer in range(nprocs)]
            + ["get:*:pmix.job.size", "finalize"])


def test_c_clients_of_a_python_host_exchange_data_and_the_callbacks_run(host):
    record = support.Record()
    assert host.init({'clientconnected': record.answer('clientconnected'),
                      'clientfinalized': record.answer('clientfinalized')}) == PMIX_SUCCESS
    host.register_job("pyjob", 3)
    clients = [host.launch("pyjob", r, steps_exchanging(3, r)) for r in range(3)]
    for r, c in enumerate(clients):
        code, out, err = support.finish(c)
        assert code == 0, err
        for peer in range(3):
            assert "get:%d:color PMIX_SUCCESS c%d" % (peer, peer) in out
        assert "get:*:pmix.job.size PMIX_SUCCESS 3" in out
        assert "finalize PMIX_SUCCESS" in out
    # Each client's init waited for clientconnected, its finalize for
    # clientfinalized: both ran for every rank, with the proc dict form.
    assert sorted(p['rank'] for p in record.of('clientconnected')) == [0, 1, 2]
    assert sorted(p['rank'] for p in record.of('clientfinalized')) == [0, 1, 2]
    assert all(p['nspace'] == "pyjob" for p in record.of('clientconnected'))
    assert host.server.deregister_client({'nspace': "pyjob", 'rank': 0}) == PMIX_SUCCESS
    assert host.server.deregister_nspace("pyjob") == PMIX_SUCCESS
    assert host.server.collect_job_info([{'nspace': "pyjob", 'rank': 0}]) == (PMIX_ERR_NOT_FOUND, None)


def test_a_callable_that_raises_fails_that_client_only(host, monkeypatch):
    """The exception is reported (sys.unraisablehook), the client's call gets
    an error, and the server goes on serving the others."""
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: reported.append(u))
    def connected(proc):
        if proc == {'nspace': "picky", 'rank': 1}:
            raise ValueError("rank %d is not welcome" % proc['rank'])
        return PMIX_SUCCESS

    assert host.init({'clientconnected': connected}) == PMIX_SUCCESS
    host.register_job("picky", 3)
    steps = [SCRIPT_CLIENT, "init", "put:k=v", "commit", "get:*:pmix.job.size", "finalize"]
    clients = {r: host.launch("picky", r, steps) for r in range(3)}
    results = {r: support.finish(c) for r, c in clients.items()}
    for r in (0, 2):
        code, out, err = results[r]
        assert code == 0, err
        assert "init PMIX_SUCCESS picky %d" % r in out
        assert "finalize PMIX_SUCCESS" in out
    code, out, err = results[1]
    assert "init PMIX_SUCCESS" not in out
    assert "init PMIX_ERR" in out
    assert len(reported) == 1
    assert reported[0].exc_type is ValueError
    assert "rank 1 is not welcome" in str(reported[0].exc_value)
    assert "clientconnected" in str(reported[0].object)
    # Still serving: a client of another job connects.
    host.register_job("after", 1)
    code, out, err = support.finish(host.launch("after", 0, steps))
    assert code == 0, err
    assert "init PMIX_SUCCESS after 0" in out


def test_an_unusable_answer_is_an_error_too(host, monkeypatch):
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: reported.append(u))
    assert host.init({'clientconnected': lambda proc: "not a status"}) == PMIX_SUCCESS
    host.register_job("odd", 1)
    code, out, err = support.finish(host.launch("odd", 0, [SCRIPT_CLIENT, "init", "finalize"]))
    assert "init PMIX_ERR" in out
    assert len(reported) == 1 and reported[0].exc_type is TypeError


def test_abort_reaches_the_abort_callable(host):
    record = support.Record()

    def abort(args):
        record.add('abort', args)
        return PMIX_SUCCESS if args['caller']['rank'] == 0 else PMIX_ERR_NO_PERMISSIONS

    assert host.init({'abort': abort}) == PMIX_SUCCESS
    host.register_job("aborting", 2)
    results = [support.finish(host.launch("aborting", r, [SCRIPT_CLIENT, "init", "abort:42", "finalize"]))
               for r in range(2)]
    assert "abort:42 PMIX_SUCCESS" in results[0][1]
    assert "abort:42 PMIX_ERR_NO_PERMISSIONS" in results[1][1]
    calls = sorted(record.of('abort'), key=lambda a: a['caller']['rank'])
    assert [a['caller'] for a in calls] == [{'nspace': "aborting", 'rank': 0},
                                           {'nspace': "aborting", 'rank': 1}]
    assert all(a['status'] == 42 and a['msg'] == "script_client abort" and a['targets'] == []
               for a in calls)


def test_job_control_answers_come_from_the_jobcontrol_callable(host, monkeypatch):
    monkeypatch.setattr(sys, "unraisablehook", lambda u: None)
    record = support.Record()

    def jobcontrol(args):
        record.add('jobcontrol', args)
        if args['directives'][0]['value'] == "explode":
            raise RuntimeError("cannot")
        return PMIX_SUCCESS, [info("py.answer", "done", PMIX_STRING)]

    assert host.init({'jobcontrol': jobcontrol}) == PMIX_SUCCESS
    host.register_job("ctl", 1)
    code, out, err = support.finish(host.launch("ctl", 0, [
        SCRIPT_CLIENT, "init", "job_control:%s=now" % PMIX_JOB_CTRL_KILL.decode(),
        "job_control:%s=explode" % PMIX_JOB_CTRL_KILL.decode(), "finalize"]))
    assert code == 0, err
    assert "job_control:pmix.jctrl.kill=now PMIX_SUCCESS 1 py.answer=done" in out
    assert "job_control:pmix.jctrl.kill=explode PMIX_ERROR 0" in out
    first = record.of('jobcontrol')[0]
    assert first['source'] == {'nspace': "ctl", 'rank': 0}
    assert first['directives'][0]['key'] == PMIX_JOB_CTRL_KILL.decode()
    assert first['directives'][0]['val_type'] == PMIX_STRING


def test_blocking_calls_inside_a_callable_return_would_block(host):
    """Spec 002, 19.2.260.7: a callable runs on a library thread, where every
    blocking call answers PMIX_ERR_WOULD_BLOCK at once (and nothing hangs)."""
    seen = []

    def connected(proc):
        s = host.server
        seen.append(s.register_nspace("inside", 1, []))
        seen.append(s.register_client({'nspace': "inside", 'rank': 0}, 0, 0))
        seen.append(s.deregister_nspace("blocky"))
        seen.append(s.deregister_client(proc))
        seen.append(s.collect_job_info([proc])[0])
        seen.append(s.finalize())
        return PMIX_SUCCESS

    assert host.init({'clientconnected': connected}) == PMIX_SUCCESS
    host.register_job("blocky", 1)
    code, out, err = support.finish(host.launch("blocky", 0, [SCRIPT_CLIENT, "init", "get:*:pmix.job.size",
                                                              "finalize"]))
    assert code == 0, err
    assert "get:*:pmix.job.size PMIX_SUCCESS 1" in out
    assert seen == [PMIX_ERR_WOULD_BLOCK] * 6
    # Nothing was done: no namespace "inside", "blocky" still there, the
    # server still up.
    assert host.server.collect_job_info([{'nspace': "inside", 'rank': 0}])[0] == PMIX_ERR_NOT_FOUND
    assert host.server.collect_job_info([{'nspace': "blocky", 'rank': 0}])[0] == PMIX_SUCCESS


def test_direct_modex_asks_the_directmodex_callable(host, monkeypatch):
    """A get for a rank on another node goes to 'directmodex'; its status is
    the client's (the data format of an answer is the library's own)."""
    monkeypatch.setattr(sys, "unraisablehook", lambda u: None)
    record = support.Record()

    def directmodex(args):
        record.add('directmodex', args)
        if args['proc']['rank'] == 1:
            return PMIX_ERR_NOT_FOUND, None
        raise KeyError("no node for rank %d" % args['proc']['rank'])

    directives = [info(PMIX_HOSTNAME, "nodeA", PMIX_STRING)]
    assert host.init({'directmodex': directmodex}, directives) == PMIX_SUCCESS
    host.register_job("far", 3, local=[0], nodes={"nodeA": [0], "nodeB": [1, 2]})
    code, out, err = support.finish(host.launch("far", 0, [SCRIPT_CLIENT, "init", "get:1:addr",
                                                           "get:2:addr", "get:*:pmix.local.size",
                                                           "finalize"]))
    assert code == 0, err
    assert "get:1:addr PMIX_ERR_NOT_FOUND" in out
    assert "get:2:addr PMIX_ERROR" in out
    assert "get:*:pmix.local.size PMIX_SUCCESS 1" in out
    assert sorted(a['proc']['rank'] for a in record.of('directmodex')) == [1, 2]
    assert all(a['proc']['nspace'] == "far" for a in record.of('directmodex'))


def test_a_fence_across_two_python_hosts_goes_through_fencenb():
    """Two nodes, each a Python host in its own process (peer_host.py): each
    'fencenb' callable sends its node's data to the other and returns both;
    four C clients then read every rank's data. The blobs are binary and go
    through Python whole."""
    tmp = support.short_tmpdir()
    env = dict(os.environ)
    nodes = ["nodeA", "nodeB"]
    peers = [subprocess.Popen([support.PYTHON, os.path.join(support.HERE, "peer_host.py"), node, tmp,
                               nodes[1 - k], SCRIPT_CLIENT],
                              env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
             for k, node in enumerate(nodes)]
    # Each peer host speaks to the other through this process: relay lines
    # both ways until both are done.
    def relay(src, dst):
        for line in src.stdout:
            if line.startswith(b"FENCE "):
                dst.stdin.write(line)
                dst.stdin.flush()
            else:
                results.append(line.decode())

    results = []
    threads = [threading.Thread(target=relay, args=(peers[k], peers[1 - k]), daemon=True) for k in (0, 1)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(support.TIMEOUT)
    for p in peers:
        try:
            p.wait(timeout=support.TIMEOUT)
        except subprocess.TimeoutExpired:
            p.kill()
    errors = [p.stderr.read().decode() for p in peers]
    shutil.rmtree(tmp, ignore_errors=True)
    assert all(p.returncode == 0 for p in peers), errors
    done = [r for r in results if r.startswith("DONE")]
    assert len(done) == 2, results
    for line in done:
        assert line.split()[2:] == ["ok"], (results, errors)


def test_a_later_init_adopts_a_module_only_when_none_was_set(host):
    """Spec 000, 20.2.247.3: repeated inits count; a module given later is
    adopted if none was set before, and ignored otherwise."""
    first, second, third = support.Record(), support.Record(), support.Record()
    assert host.init(None) == PMIX_SUCCESS
    assert host.init({'clientconnected': first.answer('clientconnected')}) == PMIX_SUCCESS
    assert host.init({'clientconnected': second.answer('clientconnected')}) == PMIX_SUCCESS
    host.register_job("adopted", 1)
    code, out, err = support.finish(host.launch("adopted", 0, [SCRIPT_CLIENT, "init", "finalize"]))
    assert code == 0, err
    assert first.of('clientconnected') == [{'nspace': "adopted", 'rank': 0}]
    assert second.of('clientconnected') == []
    # Balanced finalizes: the last one ends the server and drops the module.
    for _ in range(3):
        assert host.server.finalize() == PMIX_SUCCESS
    host.inits = 0
    assert host.server.finalize() == PMIX_ERR_INIT
    assert host.init({'clientconnected': third.answer('clientconnected')}) == PMIX_SUCCESS
    host.register_job("fresh", 1)
    code, out, err = support.finish(host.launch("fresh", 0, [SCRIPT_CLIENT, "init", "finalize"]))
    assert code == 0, err
    assert third.of('clientconnected') == [{'nspace': "fresh", 'rank': 0}]
    assert len(first.of('clientconnected')) == 1


def test_an_event_beyond_the_node_goes_to_the_notify_event_callable(host, monkeypatch):
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: reported.append(u))
    record = support.Record()

    def notify_event(args):
        record.add('notify_event', args)
        if args['code'] == 301:
            raise OSError("the resource manager is down")
        return PMIX_SUCCESS

    assert host.init({'notify_event': notify_event}) == PMIX_SUCCESS
    host.register_job("events", 1)
    code, out, err = support.finish(host.launch("events", 0, [
        support.EVENT_CLIENT, "init", "notify:300:rm:text=hello", "notify:301:rm", "finalize"]))
    assert code == 0, err
    assert "notify:300:rm:text=hello PMIX_SUCCESS" in out
    assert "notify:301:rm PMIX_ERROR" in out
    first, second = record.of('notify_event')
    assert (first['code'], first['source'], first['range']) == (300, {'nspace': "events", 'rank': 0},
                                                                 PMIX_RANGE_RM)
    text = [d for d in first['directives'] if d['key'] == PMIX_EVENT_TEXT_MESSAGE.decode()]
    assert [(d['value'], d['val_type']) for d in text] == [("hello", PMIX_STRING)]
    assert second['code'] == 301
    assert len(reported) == 1 and reported[0].exc_type is OSError


EXITING_HOST = r'''
import json, os, sys
from pmix import *
def connected(proc):
    print("connected", proc['rank'], flush=True)
    return PMIX_SUCCESS
s = PMIxServer()
assert s.init([{'key': PMIX_SERVER_TMPDIR, 'value': sys.argv[1], 'val_type': PMIX_STRING}],
              {'clientconnected': connected, 'clientfinalized': connected}) == PMIX_SUCCESS
assert s.register_nspace("left", 1, []) == PMIX_SUCCESS
assert s.register_client({'nspace': "left", 'rank': 0}, os.getuid(), os.getgid()) == PMIX_SUCCESS
print(json.dumps(s.setup_fork({'nspace': "left", 'rank': 0})[1]), flush=True)
sys.stdin.readline()
# exits with the server up and its client connected: no finalize
'''


def test_a_host_that_exits_without_finalize_exits_cleanly():
    """At interpreter exit the module finalizes the server itself, while
    Python can still run the callables; the process exits normally."""
    tmp = support.short_tmpdir()
    go = os.path.join(tmp, "go")
    host = subprocess.Popen([support.PYTHON, "-c", EXITING_HOST, tmp], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        env = dict(os.environ, **json.loads(host.stdout.readline()))
        client = subprocess.Popen([SCRIPT_CLIENT, "init", "wait_file:" + go, "finalize"], env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert client.stdout.readline() == "init PMIX_SUCCESS left 0\n"
        host.stdin.write("exit\n")
        host.stdin.flush()
        code, out, err = support.finish(host)
    finally:
        with open(go, "w"):
            pass  # the client goes on, to find its server gone
    support.finish(client)
    shutil.rmtree(tmp, ignore_errors=True)
    assert code == 0, out + err
    assert out.split("\n")[:1] == ["connected 0"], out + err
