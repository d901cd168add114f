"""A Python host's calls beyond its jobs: node resources and process sets
that its clients see (a Python client, tests/python/py_calls.py psets, and
C clients), inventory collected on one Python host and delivered to
another, attributes it registers, a direct modex request for a client's
data, and the set-up of an application (tests/e2e/server_resources_test.cpp
shows the same calls in C)."""
import ast
import os
import sys

from pmix import *

import support
from support import SCRIPT_CLIENT, info

CALLS = os.path.join(support.HERE, "py_calls.py")
JOB = "pyres"


def values(infos):
    return {i['key']: i['value'] for i in infos}


def test_resources_and_process_sets_reach_python_and_c_clients(host):
    assert host.init(directives=[info(PMIX_SERVER_NSPACE, "pyhost", PMIX_STRING)]) == PMIX_SUCCESS
    s = host.server
    # Before the job: every job of the node gets them; the job's own
    # registration of a key wins.
    assert s.register_resources([info("site.rack", "r7", PMIX_STRING), info("site.row", "north", PMIX_STRING),
                                 info("site.zone", "resource zone", PMIX_STRING)]) == PMIX_SUCCESS
    host.register_job(JOB, 2, extra=[info("site.zone", "job zone", PMIX_STRING)])
    # After it: a key registered again replaces its value in the job too.
    assert s.register_resources([info("site.row", "south", PMIX_STRING)]) == PMIX_SUCCESS
    assert s.register_resources([]) == PMIX_ERR_BAD_PARAM

    client = host.launch(JOB, 0, [support.PYTHON, CALLS, "psets"])
    lines = support.Lines(client)
    lines.line("ready")
    members = [{'nspace': JOB, 'rank': 0}, {'nspace': "elsewhere", 'rank': 3}]
    assert s.define_process_set(members, "pyset") == PMIX_SUCCESS
    lines.line("defined")
    assert s.define_process_set(members[:1], "pyset") == PMIX_ERR_EXISTS
    assert s.define_process_set([], "empty") == PMIX_ERR_BAD_PARAM
    assert s.delete_process_set("pyset") == PMIX_SUCCESS
    assert s.delete_process_set("pyset") == PMIX_ERR_NOT_FOUND
    got = ast.literal_eval(lines.line("GOT")[len("GOT "):])
    code, out, err = support.finish(client)
    assert code == 0, out + err

    assert got["site.rack"] == (PMIX_SUCCESS, {'value': "r7", 'val_type': PMIX_STRING})
    assert got["site.row"] == (PMIX_SUCCESS, {'value': "south", 'val_type': PMIX_STRING})
    assert got["site.zone"] == (PMIX_SUCCESS, {'value': "job zone", 'val_type': PMIX_STRING})
    assert got["before"] == (PMIX_SUCCESS, 0, "")
    server = {'nspace': "pyhost", 'rank': 0}
    assert got["define event"] == (PMIX_PROCESS_SET_DEFINE, server, "pyset", {'type': PMIX_PROC, 'array': members})
    assert got["after define"] == (PMIX_SUCCESS, 1, "pyset")
    assert got["membership"] == (PMIX_SUCCESS, {'type': PMIX_PROC, 'array': members})
    assert got["delete event"] == (PMIX_PROCESS_SET_DELETE, server, "pyset", None)
    assert got["after delete"] == (PMIX_SUCCESS, 0, "")

    # Deregistered (the value given is not read), a resource is gone for a
    # process that connects afterwards, here a C client; the others stay.
    assert s.deregister_resources([info("site.rack", "", PMIX_STRING)]) == PMIX_SUCCESS
    code, out, err = support.finish(host.launch(JOB, 1, [SCRIPT_CLIENT, "init", "get:*:site.rack",
                                                         "get:*:site.row", "get:*:site.zone", "finalize"]))
    assert code == 0, out + err
    assert "get:*:site.rack PMIX_ERR_NOT_FOUND" in out
    assert "get:*:site.row PMIX_SUCCESS south" in out
    assert "get:*:site.zone PMIX_SUCCESS job zone" in out


def test_an_inventory_collected_on_one_host_is_delivered_to_another(host):
    """nodeB (a Python host in its own process) collects its inventory; the
    test's host, nodeA, keeps it with deliver_inventory and gives it back."""
    assert host.init(directives=[info(PMIX_HOSTNAME, "nodeA", PMIX_STRING)]) == PMIX_SUCCESS
    s = host.server
    rc, own = s.collect_inventory()
    assert rc == PMIX_SUCCESS and values(own)[PMIX_HOSTNAME.decode()] == "nodeA"
    other = support.HostProcess(host.tmpdir, "srvB", "jobB", 1, hostname="nodeB")
    try:
        rc, inventory = ast.literal_eval(other.ask("inventory", "INVENTORY")[len("INVENTORY "):])
        assert other.stop() == ("FINALIZE 0", 0)
    finally:
        other.kill()
    assert rc == PMIX_SUCCESS
    found = values(inventory)
    assert found[PMIX_HOSTNAME.decode()] == "nodeB"
    assert found[PMIX_HWLOC_XML_V2.decode()].startswith("<?xml")  # nodeB shares its topology
    assert s.collect_inventory([info(PMIX_HOSTNAME, "nodeB", PMIX_STRING)]) == (PMIX_ERR_NOT_FOUND, [])
    assert s.deliver_inventory(inventory) == PMIX_SUCCESS
    rc, kept = s.collect_inventory([info(PMIX_HOSTNAME, "nodeB", PMIX_STRING)])
    assert rc == PMIX_SUCCESS
    assert [(i['key'], i['value'], i['val_type']) for i in kept] == [
        (i['key'], i['value'], i['val_type']) for i in inventory]
    # a second delivery for the node replaces the first
    assert s.deliver_inventory([info(PMIX_HOSTNAME, "nodeB", PMIX_STRING),
                                info("inv.gpus", 4, PMIX_UINT32)], []) == PMIX_SUCCESS
    rc, kept = s.collect_inventory([info(PMIX_HOSTNAME, "nodeB", PMIX_STRING)])
    assert rc == PMIX_SUCCESS and values(kept) == {PMIX_HOSTNAME.decode(): "nodeB", "inv.gpus": 4}
    # an inventory must name its node
    assert s.deliver_inventory([info("inv.gpus", 2, PMIX_UINT32)]) == PMIX_ERR_BAD_PARAM
    # this node's own is unchanged
    assert s.collect_inventory()[1] == own


def test_registered_attributes_answer_a_tools_query(host):
    """What the host registers is what a tool asking for the host's
    attributes gets (tests/python/py_tool.py)."""
    assert host.init(directives=[info(PMIX_SERVER_TOOL_SUPPORT, True, PMIX_BOOL)]) == PMIX_SUCCESS
    s = host.server
    assert s.register_attributes("PMIx_Get", ["PMIX_TIMEOUT", "PMIX_OPTIONAL"]) == PMIX_SUCCESS
    assert s.register_attributes("PMIx_Get", ["PMIX_TIMEOUT"]) == PMIX_ERR_REPEAT_ATTR_REGISTRATION
    assert s.register_attributes("PMIx_Fence", None) == PMIX_SUCCESS

    def ask(qualifier):
        code, out, err = support.run([support.PYTHON, os.path.join(support.HERE, "py_tool.py"),
                                      str(os.getpid()), host.tmpdir, PMIX_QUERY_ATTRIBUTE_SUPPORT.decode(),
                                      qualifier])
        assert code == 0, out + err
        rc, me, qrc, results, frc = ast.literal_eval(out.strip())
        assert (rc, qrc, frc) == (PMIX_SUCCESS, PMIX_SUCCESS, PMIX_SUCCESS)
        answer, = results
        assert answer['key'] == PMIX_QUERY_ATTRIBUTE_SUPPORT.decode()
        assert answer['value']['type'] == PMIX_INFO
        return answer['value']['array']

    functions, = ask(PMIX_HOST_FUNCTIONS.decode() + "=all")
    assert sorted(functions['value'].split(",")) == ["PMIx_Fence", "PMIx_Get"]
    get, = ask(PMIX_HOST_ATTRIBUTES.decode() + "=PMIx_Get")
    assert get['key'] == "PMIx_Get" and get['value']['type'] == PMIX_REGATTR
    assert [(a['name'], a['key'], a['type']) for a in get['value']['array']] == [
        ("PMIX_TIMEOUT", PMIX_TIMEOUT.decode(), PMIX_INT), ("PMIX_OPTIONAL", PMIX_OPTIONAL.decode(), PMIX_BOOL)]


def test_dmodex_request_gives_a_clients_committed_data(host):
    assert host.init() == PMIX_SUCCESS
    host.register_job("pydm", 1)
    client = host.launch("pydm", 0, [SCRIPT_CLIENT, "init", "put:py.dm=committed for dmodex", "commit",
                                     "sleep:200", "finalize"])
    dataout = {}
    rc, (data, size) = host.server.dmodex_request({'nspace': "pydm", 'rank': 0}, dataout)
    code, out, err = support.finish(client)
    assert code == 0, out + err
    assert rc == PMIX_SUCCESS and size == len(data) > 0
    assert b"py.dm" in data and b"committed for dmodex" in data  # the committed key and its value
    assert dataout == {'bytes': data, 'size': size}
    assert host.server.dmodex_request({'nspace': "", 'rank': 0}) == (PMIX_ERR_BAD_PARAM, (None, 0))


def test_setup_application_and_local_support_prepare_a_launch(host, monkeypatch):
    monkeypatch.setenv("PMIX_CXX_PYTEST_SETTING", "carried")
    assert host.init() == PMIX_SUCCESS
    s = host.server
    rc, app = s.setup_application("pyapp", [info(PMIX_SETUP_APP_ENVARS, True, PMIX_BOOL)])
    assert rc == PMIX_SUCCESS
    envars = [i['value'] for i in app if i['key'] == PMIX_SET_ENVAR.decode()]
    assert {'envar': "PMIX_CXX_PYTEST_SETTING", 'value': "carried", 'separator': ":"} in envars
    assert s.setup_application("pyapp", []) == (PMIX_SUCCESS, [])
    # What setup_application gave, and a job-level entry, for this node.
    host.register_job("pyapp", 1)
    assert s.setup_local_support("pyapp", app + [info("py.local", "prepared", PMIX_STRING)]) == PMIX_SUCCESS
    rc, env = s.setup_fork({'nspace': "pyapp", 'rank': 0})
    assert rc == PMIX_SUCCESS and env["PMIX_CXX_PYTEST_SETTING"] == "carried"
    code, out, err = support.finish(host.launch("pyapp", 0, [SCRIPT_CLIENT, "init", "get:*:py.local", "finalize"]))
    assert code == 0, out + err
    assert "get:*:py.local PMIX_SUCCESS prepared" in out


def test_waiting_calls_inside_a_callable_would_block(host):
    """collect_inventory, dmodex_request and setup_application wait for the
    library's callback: inside a callable (a library thread) they answer
    PMIX_ERR_WOULD_BLOCK at once, as the blocking calls do."""
    answers = []

    def clientconnected(proc):
        s = host.server
        answers.append((s.collect_inventory(), s.dmodex_request(proc), s.setup_application(proc['nspace']),
                        s.register_resources([info("site.rack", "r1", PMIX_STRING)]),
                        s.define_process_set([proc], "inside")))
        return PMIX_SUCCESS

    assert host.init({'clientconnected': clientconnected}) == PMIX_SUCCESS
    host.register_job("pywb", 1)
    code, out, err = support.finish(host.launch("pywb", 0, [SCRIPT_CLIENT, "init", "finalize"]))
    assert code == 0, out + err
    assert answers == [((PMIX_ERR_WOULD_BLOCK, []), (PMIX_ERR_WOULD_BLOCK, (None, 0)), (PMIX_ERR_WOULD_BLOCK, []),
                        PMIX_ERR_WOULD_BLOCK, PMIX_ERR_WOULD_BLOCK)]
