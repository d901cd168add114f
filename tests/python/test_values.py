"""The module's forms and its answers to bad input: constants, setup_fork,
generate_regex / generate_ppn, calls before init, malformed dicts (a clear
Python exception, never a crash)."""
import os

import pytest

import pmix
from pmix import *

import support
from support import SCRIPT_CLIENT, info


def test_constants_have_the_c_values():
    assert (PMIX_SUCCESS, PMIX_ERROR, PMIX_ERR_WOULD_BLOCK) == (0, -1, -15)
    assert (PMIX_ERR_NOT_FOUND, PMIX_ERR_INIT, PMIX_OPERATION_SUCCEEDED) == (-46, -31, -157)
    assert (PMIX_BOOL, PMIX_STRING, PMIX_UINT32, PMIX_BYTE_OBJECT, PMIX_DATA_ARRAY) == (1, 3, 14, 27, 39)
    assert (PMIX_RANK_UNDEF, PMIX_RANK_WILDCARD) == (2 ** 32 - 1, 2 ** 32 - 2)
    assert (PMIX_LOCAL, PMIX_REMOTE, PMIX_GLOBAL) == (1, 2, 3)
    assert (PMIX_RANGE_NAMESPACE, PMIX_MAX_NSLEN, PMIX_MAX_KEYLEN) == (3, 255, 511)
    # attribute keys are bytes, as in python3-pmix
    assert PMIX_SERVER_NSPACE == b"pmix.srv.nspace" and PMIX_JOB_SIZE == b"pmix.job.size"
    assert len([n for n in dir(pmix) if n.startswith("PMIX_")]) > 700


def test_class_and_method_names_follow_python3_pmix():
    assert issubclass(PMIxServer, PMIxClient) and issubclass(PMIxTool, PMIxServer)
    for name in ("init", "finalize", "put", "commit", "fence", "get", "abort", "query", "initialized"):
        assert callable(getattr(PMIxClient, name))
    for name in ("load_topology", "get_relative_locality", "parse_cpuset_string", "get_cpuset",
                 "compute_distances"):
        assert callable(getattr(PMIxClient, name))
    for name in ("register_nspace", "deregister_nspace", "register_client", "deregister_client",
                 "setup_fork", "collect_job_info", "generate_regex", "generate_ppn", "dmodex_request",
                 "setup_application", "setup_local_support", "generate_cpuset_string", "generate_locality_string",
                 "register_attributes", "collect_inventory", "deliver_inventory", "register_resources",
                 "deregister_resources", "define_process_set", "delete_process_set", "iof_deliver"):
        assert callable(getattr(PMIxServer, name))
    for name in ("attach_to_server", "get_servers", "set_server", "disconnect"):
        assert callable(getattr(PMIxTool, name))


def test_setup_fork_gives_the_environment_as_a_dict(host):
    assert host.init() == PMIX_SUCCESS
    host.register_job("forked", 2)
    rc, env = host.server.setup_fork({'nspace': "forked", 'rank': 1})
    assert rc == PMIX_SUCCESS
    assert env["PMIX_NAMESPACE"] == "forked" and env["PMIX_RANK"] == "1"
    assert "uds://" in env["PMIX_CXX_SERVER_URI"]
    assert ";tcp4://127.0.0.1:" in env["PMIX_SERVER_URI41"]  # for processes linked with OpenPMIx
    assert all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())
    # python3-pmix's form: the variables are added to the dict given
    mine = {"KEEP": "me"}
    assert host.server.setup_fork({'nspace': "forked", 'rank': 1}, mine) == PMIX_SUCCESS
    assert mine == dict(env, KEEP="me")
    # a client started with exactly that environment connects
    code, out, err = support.run([SCRIPT_CLIENT, "init", "finalize"], env=dict(os.environ, **env))
    assert code == 0, err
    assert "init PMIX_SUCCESS forked 1" in out
    assert host.server.setup_fork({'nspace': "", 'rank': 0}) == (PMIX_ERR_BAD_PARAM, {})


def test_generate_regex_and_ppn_describe_a_job_clients_read(host):
    rc, regex = host.server.generate_regex(["nodeA", "nodeB", "nodeC"])
    assert rc == PMIX_SUCCESS and isinstance(regex, bytearray) and regex.startswith(b"pmix")
    rc, ppn = host.server.generate_ppn(["0,1", "2", "3,4"])
    assert rc == PMIX_SUCCESS and isinstance(ppn, bytearray)
    # a string is taken as already joined
    assert host.server.generate_regex("nodeA,nodeB,nodeC") == (PMIX_SUCCESS, regex)
    assert host.server.generate_ppn("a,b") == (PMIX_ERR_BAD_PARAM, None)
    # What they describe is what the clients of this node (nodeB) see.
    assert host.init(directives=[info(PMIX_HOSTNAME, "nodeB", PMIX_STRING)]) == PMIX_SUCCESS
    assert host.server.register_nspace("mapped", 1, [info(PMIX_JOB_SIZE, 5, PMIX_UINT32),
                                                     info(PMIX_NODE_MAP, regex, PMIX_STRING),
                                                     info(PMIX_PROC_MAP, ppn, PMIX_STRING)]) == PMIX_SUCCESS
    proc = {'nspace': "mapped", 'rank': 2}
    assert host.server.register_client(proc, os.getuid(), os.getgid()) == PMIX_SUCCESS
    code, out, err = support.finish(host.launch("mapped", 2, [SCRIPT_CLIENT, "init", "get:*:pmix.local.size",
                                                              "get:*:pmix.job.size", "finalize"]))
    assert code == 0, err
    assert "get:*:pmix.local.size PMIX_SUCCESS 1" in out
    assert "get:*:pmix.job.size PMIX_SUCCESS 5" in out


def test_server_calls_before_init_return_init_errors():
    s = PMIxServer()
    p = {'nspace': "none", 'rank': 0}
    assert s.register_nspace("none", 1, []) == PMIX_ERR_INIT
    assert s.register_client(p, 0, 0) == PMIX_ERR_INIT
    assert s.deregister_client(p) == PMIX_ERR_INIT
    assert s.deregister_nspace("none") == PMIX_ERR_INIT
    assert s.setup_fork(p) == (PMIX_ERR_INIT, {})
    rack = [info("site.rack", "r7", PMIX_STRING)]
    assert s.register_resources(rack) == PMIX_ERR_INIT
    assert s.deregister_resources(rack) == PMIX_ERR_INIT
    assert s.define_process_set([p], "set") == PMIX_ERR_INIT
    assert s.delete_process_set("set") == PMIX_ERR_INIT
    assert s.collect_inventory() == (PMIX_ERR_INIT, [])
    assert s.deliver_inventory([info(PMIX_HOSTNAME, "n", PMIX_STRING)]) == PMIX_ERR_INIT
    assert s.register_attributes("PMIx_Get", ["PMIX_TIMEOUT"]) == PMIX_ERR_INIT
    assert s.dmodex_request(p) == (PMIX_ERR_INIT, (None, 0))
    assert s.setup_application("none") == (PMIX_ERR_INIT, [])
    assert s.setup_local_support("none", []) == PMIX_ERR_INIT
    assert s.finalize() == PMIX_ERR_INIT


def test_tool_disconnect_takes_a_server_or_the_clients_peers():
    """PMIxTool.disconnect(server) is PMIx_tool_disconnect; with a list of
    procs it is still the client's PMIx_Disconnect."""
    t = PMIxTool()
    assert t.disconnect({'nspace': "srv", 'rank': 0}) == PMIX_ERR_INIT
    assert t.disconnect(server={'nspace': "srv", 'rank': 0}) == PMIX_ERR_INIT
    assert t.disconnect([{'nspace': "job", 'rank': 0}], []) == PMIX_ERR_INIT
    with pytest.raises(TypeError, match="tool disconnect server: 'rank' missing"):
        t.disconnect({'nspace': "srv"})
    with pytest.raises(TypeError, match="disconnect peers"):
        t.disconnect([("job", 0)])
    with pytest.raises(TypeError, match="set_server server"):
        t.set_server("srv", [])


@pytest.mark.parametrize("proc, error, words", [
    ({'nspace': "x"}, TypeError, "'rank' missing"),
    ({'rank': 0}, TypeError, "'nspace' missing"),
    (("x", 0), TypeError, "expected a proc dict"),
    ({'nspace': "x", 'rank': -1}, ValueError, "negative"),
    ({'nspace': "x", 'rank': 2 ** 32}, ValueError, "out of range"),
    ({'nspace': "x", 'rank': "0"}, TypeError, "expected int"),
    ({'nspace': "x" * 256, 'rank': 0}, ValueError, "longer than 255"),
    ({'nspace': "x\0y", 'rank': 0}, ValueError, "NUL"),
    ({'nspace': 7, 'rank': 0}, TypeError, "expected str or bytes"),
])
def test_a_bad_proc_dict_raises_a_clear_error(host, proc, error, words):
    assert host.init() == PMIX_SUCCESS
    with pytest.raises(error, match=words):
        host.server.register_client(proc, 0, 0)
    with pytest.raises(error, match=words):
        host.server.setup_fork(proc)
    with pytest.raises(error, match=words):
        host.server.collect_job_info([proc])
    with pytest.raises(error, match=words):
        PMIxClient().fence([proc], [])
    # nothing was harmed
    host.register_job("fine", 1)
    assert host.server.collect_job_info([{'nspace': "fine", 'rank': 0}])[0] == PMIX_SUCCESS


@pytest.mark.parametrize("item, error, words", [
    ({'key': PMIX_JOB_SIZE, 'value': 1}, TypeError, "'val_type' missing"),
    ({'value': 1, 'val_type': PMIX_UINT32}, TypeError, "'key' missing"),
    ({'key': PMIX_JOB_SIZE, 'value': "one", 'val_type': PMIX_UINT32}, TypeError, "expected int"),
    ({'key': PMIX_JOB_SIZE, 'value': 2 ** 32, 'val_type': PMIX_UINT32}, ValueError, "out of range"),
    ({'key': "py.s", 'value': "a\0b", 'val_type': PMIX_STRING}, ValueError, "NUL"),
    ({'key': "py.b", 'value': 5, 'val_type': PMIX_BYTE_OBJECT}, TypeError, "expected bytes"),
    ({'key': "py.b", 'value': {'bytes': b"ab", 'size': 3}, 'val_type': PMIX_BYTE_OBJECT}, ValueError,
     "larger than"),
    ({'key': "py.p", 'value': {'nspace': "x"}, 'val_type': PMIX_PROC}, TypeError, "'rank' missing"),
    ({'key': "py.a", 'value': {'type': PMIX_UINT8, 'array': [1, 300]}, 'val_type': PMIX_DATA_ARRAY},
     ValueError, "out of range"),
    ({'key': "py.t", 'value': None, 'val_type': PMIX_TOPO}, TypeError, "not supported"),
    ({'key': "k" * 512, 'value': 1, 'val_type': PMIX_INT}, ValueError, "longer than 511"),
    ("not a dict", TypeError, "expected an info dict"),
])
def test_a_bad_info_dict_raises_a_clear_error(host, item, error, words):
    assert host.init() == PMIX_SUCCESS
    with pytest.raises(error, match=words):
        host.server.register_nspace("bad", 1, [info(PMIX_UNIV_SIZE, 1, PMIX_UINT32), item])
    # not registered, and the server goes on
    assert host.server.collect_job_info([{'nspace': "bad", 'rank': 0}]) == (PMIX_ERR_NOT_FOUND, None)
    host.register_job("good", 1)


def test_a_bad_server_module_is_refused_before_init():
    s = PMIxServer()
    with pytest.raises(ValueError, match="unknown server module slot 'nosuch'"):
        s.init([], {'nosuch': lambda *a: 0})
    with pytest.raises(TypeError, match="'abort' is not callable"):
        s.init([], {'abort': 42})
    with pytest.raises(TypeError, match="dict of slot name"):
        s.init([], [('abort', print)])
    assert s.collect_job_info([{'nspace': "x", 'rank': 0}]) == (PMIX_ERR_INIT, None)


def test_every_python3_pmix_slot_name_is_accepted(host):
    names = ["clientconnected", "clientfinalized", "abort", "fencenb", "directmodex", "publish", "lookup",
             "unpublish", "spawn", "connect", "disconnect", "registerevents", "deregisterevents",
             "listener", "notify_event", "query", "toolconnected", "log", "allocate", "jobcontrol",
             "monitor", "getcredential", "validatecredential", "iofpull", "pushstdin", "group", "fabric"]
    assert host.init({name: (lambda *args: PMIX_SUCCESS) for name in names}) == PMIX_SUCCESS


def test_values_round_trip_through_a_server_and_a_c_client(host):
    """Values a Python host registers, as a C client prints them."""
    assert host.init() == PMIX_SUCCESS
    host.register_job("typed", 1, extra=[
        info("py.str", "hello wörld", PMIX_STRING),
        info("py.u16", 65535, PMIX_UINT16),
        info("py.int", -12, PMIX_INT),
        info("py.bool", "true", PMIX_BOOL),
        info("py.rank", 3, PMIX_PROC_RANK),
    ])
    code, out, err = support.finish(host.launch("typed", 0, [
        SCRIPT_CLIENT, "init", "get:*:py.str", "get:*:py.u16", "get:*:py.int", "get:*:py.bool",
        "get:*:py.rank", "finalize"]))
    assert code == 0, err
    for line in ("get:*:py.str PMIX_SUCCESS hello wörld", "get:*:py.u16 PMIX_SUCCESS 65535",
                 "get:*:py.int PMIX_SUCCESS -12", "get:*:py.bool PMIX_SUCCESS true",
                 "get:*:py.rank PMIX_SUCCESS 3"):
        assert line in out
