"""A Python host's server module answering the requests of its clients
beyond fences and queries: publish, lookup, unpublish, spawn, connect,
disconnect, log, allocate, monitor, getcredential, validatecredential,
group and fabric, each callable getting python3-pmix's argument dict. The
client is a Python client (tests/python/py_calls.py hosted), rank 0 of a
job whose rank 1 is on another node, so that its connect and group reach
the host."""
import ast
import os
import sys

from pmix import *

import support
from support import info

CALLS = os.path.join(support.HERE, "py_calls.py")
JOB = "pyhosted"


def run_client(host):
    host.register_job(JOB, 2, local=[0], nodes={support.this_host(): [0], "elsewhere": [1]})
    code, out, err = support.finish(host.launch(JOB, 0, [support.PYTHON, CALLS, "hosted"]))
    assert code == 0, out + err
    return ast.literal_eval(out.splitlines()[0]), err


def values(infos):
    return {i['key']: i['value'] for i in infos}


def test_the_host_callables_answer_the_clients_requests(host):
    record = support.Record()
    store = {}

    def publish(args):
        record.add('publish', args)
        for i in args['directives']:
            if i['key'].startswith("py."):
                store[i['key']] = i
        return PMIX_SUCCESS

    def lookup(args):
        record.add('lookup', args)
        found = [store[k] for k in args['keys'] if k in store]
        return (PMIX_SUCCESS if found else PMIX_ERR_NOT_FOUND), [
            {'key': i['key'], 'value': i['value'], 'val_type': i['val_type'], 'proc': {'nspace': "pub", 'rank': 3}}
            for i in found]

    def unpublish(args):
        record.add('unpublish', args)
        return PMIX_SUCCESS

    slots = {
        'publish': publish, 'lookup': lookup, 'unpublish': unpublish,
        'spawn': lambda args: (record.add('spawn', args), (PMIX_SUCCESS, "pychild"))[1],
        'connect': record.answer('connect'),
        'disconnect': record.answer('disconnect'),
        'log': record.answer('log'),
        'allocate': lambda args: (record.add('allocate', args),
                                  (PMIX_SUCCESS, [info(PMIX_ALLOC_ID, "alloc-1", PMIX_STRING)]))[1],
        'monitor': lambda args: (record.add('monitor', args), (PMIX_SUCCESS, []))[1],
        'getcredential': lambda args: (record.add('getcredential', args),
                                       (PMIX_SUCCESS, b"py\x00cred", [info(PMIX_CRED_TYPE, "py", PMIX_STRING)]))[1],
        'validatecredential': lambda args: (record.add('validatecredential', args),
                                            (PMIX_SUCCESS, [info(PMIX_USERID, 4242, PMIX_UINT32)]))[1],
        'group': lambda args: (record.add('group', args),
                               (PMIX_SUCCESS, [info(PMIX_GROUP_CONTEXT_ID, 42, PMIX_SIZE)]))[1],
        'fabric': lambda args: (record.add('fabric', args),
                                (PMIX_SUCCESS, [info("py.fabric.info", "fat tree", PMIX_STRING)]))[1],
        'sessioncontrol': lambda args: (record.add('sessioncontrol', args),
                                        (PMIX_SUCCESS, [info("py.session", "paused", PMIX_STRING)]))[1],
        'resourceblock': lambda args: (record.add('resourceblock', args), PMIX_SUCCESS)[1],
    }
    assert host.init(slots) == PMIX_SUCCESS
    got, err = run_client(host)
    me = {'nspace': JOB, 'rank': 0}
    everyone = [{'nspace': JOB, 'rank': PMIX_RANK_WILDCARD}]

    assert got['publish'] == PMIX_SUCCESS
    args, = record.of('publish')
    assert args['proc'] == me and values(args['directives'])["py.k"] == "v"
    rc, found = got['lookup']
    assert rc == PMIX_SUCCESS
    assert found == [{'key': "py.k", 'proc': {'nspace': "pub", 'rank': 3}, 'value': "v", 'val_type': PMIX_STRING}]
    args, = record.of('lookup')
    assert args['proc'] == me and args['keys'] == ["py.k", "py.none"]
    assert values(args['directives'])[PMIX_TIMEOUT.decode()] == 5
    assert (got['unpublish'], got['unpublish_all']) == (PMIX_SUCCESS, PMIX_SUCCESS)
    assert [a['keys'] for a in record.of('unpublish')] == [["py.k"], None]

    assert got['spawn'] == (PMIX_SUCCESS, "pychild")
    args, = record.of('spawn')
    assert args['proc'] == me and values(args['jobinfo'])[PMIX_TIMEOUT.decode()] == 7
    app, = args['apps']
    assert (app['cmd'], app['argv'], app['env'], app['cwd'], app['maxprocs']) == (
        "/bin/true", ["true", "x"], ["A=B"], "/tmp", 3)
    assert values(app['info'])["py.app"] == 1

    assert (got['connect'], got['disconnect']) == (PMIX_SUCCESS, PMIX_SUCCESS)
    assert record.of('connect')[0]['procs'] == everyone
    assert record.of('disconnect')[0]['procs'] == everyone  # None: this namespace, as python3-pmix

    assert got['log'] == PMIX_SUCCESS
    args, = record.of('log')
    assert args['source'] == me and values(args['data'])[PMIX_LOG_STDERR.decode()] == "py hosted log"
    assert values(args['directives'])[PMIX_LOG_ONCE.decode()] is True

    rc, results = got['allocate']
    assert rc == PMIX_SUCCESS and values(results)[PMIX_ALLOC_ID.decode()] == "alloc-1"
    args, = record.of('allocate')
    assert args['source'] == me and args['action'] == PMIX_ALLOC_NEW
    assert values(args['directives'])[PMIX_ALLOC_NUM_NODES.decode()] == 2

    assert got['monitor'] == (PMIX_SUCCESS, [])
    args, = record.of('monitor')
    assert args['monitor']['key'] == PMIX_MONITOR_FILE.decode() and args['monitor']['value'] == "/tmp/py.watched"
    assert args['error'] == PMIX_MONITOR_FILE_ALERT

    assert got['get_credential'] == (PMIX_SUCCESS, {'bytes': b"py\x00cred", 'size': 7})
    assert values(record.of('getcredential')[0]['directives'])["py.cred.dir"] == 3
    rc, results = got['validate_credential']
    assert rc == PMIX_SUCCESS and values(results)[PMIX_USERID.decode()] == 4242
    assert record.of('validatecredential')[0]['credential'] == {'bytes': b"py\x00cred", 'size': 7}

    rc, results = got['group_construct']
    assert rc == PMIX_SUCCESS and values(results)[PMIX_GROUP_CONTEXT_ID.decode()] == 42  # the host's id wins
    assert got['group_destruct'] == PMIX_SUCCESS
    construct, destruct = record.of('group')
    assert (construct['op'], construct['group']) == (PMIX_GROUP_CONSTRUCT, "pyg")
    assert construct['procs'] == [me, {'nspace': JOB, 'rank': 1}]  # every member, once for this node
    assert (destruct['op'], destruct['group']) == (PMIX_GROUP_DESTRUCT, "pyg")

    rc, results = got['fabric_register']
    assert rc == PMIX_SUCCESS and values(results)["py.fabric.info"] == "fat tree"
    assert got['fabric_update'][0] == PMIX_SUCCESS and got['fabric_deregister'] == PMIX_SUCCESS
    register, update = record.of('fabric')
    assert (register['op'], update['op']) == (PMIX_FABRIC_REQUEST_INFO, PMIX_FABRIC_UPDATE_INFO)
    assert register['source'] == me

    rc, results = got['session_control']
    assert rc == PMIX_SUCCESS and values(results)["py.session"] == "paused"
    args, = record.of('sessioncontrol')
    assert args['source'] == me and args['sessionID'] == 12 and values(args['directives'])["pmix.ssn.pause"] is True
    assert got['resource_block'] == PMIX_SUCCESS
    args, = record.of('resourceblock')
    assert (args['source'], args['directive'], args['block']) == (me, PMIX_RESOURCE_BLOCK_DEFINE, "pyblock")
    assert args['units'] == [{'type': PMIX_DEVTYPE_GPU, 'count': 2}] and values(args['directives'])["py.why"] == "x"
    assert got['error_code'] == PMIX_ERR_TIMEOUT


def test_without_those_callables_the_documented_statuses(host, capfd):
    """No host function: NOT_SUPPORTED, except log (the server writes the
    message itself) and credentials (the server issues its own)."""
    assert host.init({}) == PMIX_SUCCESS
    got, err = run_client(host)
    assert got['publish'] == PMIX_ERR_NOT_SUPPORTED
    assert got['lookup'] == (PMIX_ERR_NOT_SUPPORTED, [])
    assert got['unpublish'] == PMIX_ERR_NOT_SUPPORTED
    assert got['spawn'] == (PMIX_ERR_NOT_SUPPORTED, None)
    assert (got['connect'], got['disconnect']) == (PMIX_ERR_NOT_SUPPORTED, PMIX_ERR_NOT_SUPPORTED)
    assert got['log'] == PMIX_SUCCESS
    assert "[%s:0] py hosted log" % JOB in capfd.readouterr().err  # the host process's stderr
    assert got['allocate'] == (PMIX_ERR_NOT_SUPPORTED, [])
    assert got['monitor'] == (PMIX_ERR_NOT_SUPPORTED, [])
    rc, cred = got['get_credential']
    assert rc == PMIX_SUCCESS and cred['size'] > 0
    rc, results = got['validate_credential']
    assert rc == PMIX_SUCCESS and values(results)[PMIX_USERID.decode()] == os.getuid()
    assert got['group_construct'] == (PMIX_ERR_NOT_SUPPORTED, [])
    assert got['fabric_register'] == (PMIX_ERR_NOT_SUPPORTED, [])
    assert got['session_control'] == (PMIX_ERR_NOT_SUPPORTED, [])
    assert got['resource_block'] == PMIX_ERR_NOT_SUPPORTED


def test_a_raising_lookup_or_spawn_callable_fails_that_call_only(host, monkeypatch):
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: reported.append(u))

    def fail(args):
        raise KeyError("nothing here")

    assert host.init({'lookup': fail, 'spawn': fail, 'publish': lambda args: PMIX_SUCCESS}) == PMIX_SUCCESS
    got, err = run_client(host)
    assert got['publish'] == PMIX_SUCCESS
    assert got['lookup'] == (PMIX_ERROR, [])
    assert got['spawn'] == (PMIX_ERROR, None)
    assert sorted(str(r.object) for r in reported) == ["pmix server module 'lookup'",
                                                       "pmix server module 'spawn'"]
