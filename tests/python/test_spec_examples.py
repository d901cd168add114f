"""Every Python example of the spec documents, as written there
(../shared/spec/000_*.txt 20.2.247.1.1 and 002_*.txt 19.2.260.1.1), and what
each promises."""
import os
import shutil
import tempfile

from pmix import *

import support
from support import info


def test_spec000_server_init_python_syntax(monkeypatch, host):
    """[20.2.247.1.1] PMIxServer().init(pydirs, map): the directives are info
    dicts and the map gives server-module functions as Python callables."""
    # The example names no PMIX_SERVER_TMPDIR: the server uses $TMPDIR, which
    # must be short enough for a socket path.
    monkeypatch.setenv("TMPDIR", host.tmpdir)
    connected = []

    def myconnfn(proc):
        connected.append(proc)
        return PMIX_SUCCESS

    # --- the spec's example ---
    foo = PMIxServer()
    # the directives is a list of Python ``pmix_info_t`` dictionaries
    pydirs = [{'key': PMIX_SERVER_NSPACE,
               'value': "SERVER", 'val_type': PMIX_STRING}]
    # map is a dictionary of server-module-function keys to Python
    # callback implementations (e.g. {'clientconnected': myconnfn, ...})
    map = {'clientconnected': myconnfn}
    rc = foo.init(pydirs, map)
    # ---
    assert rc == PMIX_SUCCESS
    host.inits += 1  # the fixture finalizes it
    # The directive took effect: clients learn the server's namespace.
    host.register_job("spec000", 1)
    rc, env = foo.setup_fork({'nspace': "spec000", 'rank': 0})
    assert rc == PMIX_SUCCESS
    assert env["PMIX_SERVER_NSPACE"] == "SERVER"
    # The map's callable is the host's client_connected.
    code, out, err = support.finish(host.launch("spec000", 0, [support.SCRIPT_CLIENT, "init", "finalize"]))
    assert code == 0, err
    assert "init PMIX_SUCCESS spec000 0" in out
    assert connected == [{'nspace': "spec000", 'rank': 0}]


def test_spec002_collect_job_info_python_syntax(host):
    """[19.2.260.1.1] rc, blob = foo.collect_job_info([...]) with blob a byte
    object {'bytes': bytes, 'size': int}."""
    assert host.init() == PMIX_SUCCESS
    foo = host.server
    host.register_job("myjob", 1, extra=[info("py.note", "job data for a peer", PMIX_STRING)])
    # --- the spec's example ---
    # ... after a successful foo.init() and register_nspace() ...
    # the procs are a list of Python proc dictionaries - only their
    # namespaces matter, and the list cannot be empty
    rc, blob = foo.collect_job_info([{'nspace': "myjob", 'rank': 0}])
    # blob is a byte object, {'bytes': bytes, 'size': int}
    # ---
    assert rc == PMIX_SUCCESS
    assert set(blob) == {'bytes', 'size'}
    assert isinstance(blob['bytes'], bytes)
    assert blob['size'] == len(blob['bytes']) > 0
    assert b"\x00" in blob['bytes']  # packed binary data, kept whole
    # The bytes are exactly the packed buffer: a second server registers the
    # namespace from them and its client reads the same job data.
    peer_tmp = support.short_tmpdir()
    try:
        path = os.path.join(peer_tmp, "job.buf")
        with open(path, "wb") as f:
            f.write(blob['bytes'])
        code, out, err = support.run([support.PEER_SERVER, path, peer_tmp, support.SCRIPT_CLIENT,
                                      "init", "get:*:py.note", "get:*:pmix.job.size", "finalize"])
    finally:
        shutil.rmtree(peer_tmp, ignore_errors=True)
    assert code == 0, out + err
    assert "get:*:py.note PMIX_SUCCESS job data for a peer" in out
    assert "get:*:pmix.job.size PMIX_SUCCESS 1" in out


def test_spec002_only_namespaces_matter_and_the_list_cannot_be_empty(host):
    """[19.2.260.2] procs are reduced to their namespaces; [19.2.260.5] the
    return codes, with no blob unless the call succeeded."""
    assert host.server.collect_job_info([{'nspace': "myjob", 'rank': 0}]) == (PMIX_ERR_INIT, None)
    assert host.init() == PMIX_SUCCESS
    host.register_job("myjob", 2)
    rc, one = host.server.collect_job_info([{'nspace': "myjob", 'rank': 0}])
    assert rc == PMIX_SUCCESS
    rc, again = host.server.collect_job_info([{'nspace': "myjob", 'rank': 1},
                                              {'nspace': "myjob", 'rank': PMIX_RANK_WILDCARD}])
    assert rc == PMIX_SUCCESS and again == one
    assert host.server.collect_job_info([]) == (PMIX_ERR_BAD_PARAM, None)
    assert host.server.collect_job_info([{'nspace': "nosuchjob", 'rank': 0}]) == (PMIX_ERR_NOT_FOUND, None)
    # an unknown namespace next to a known one is skipped
    rc, mixed = host.server.collect_job_info([{'nspace': "nosuchjob", 'rank': 0},
                                              {'nspace': "myjob", 'rank': 0}])
    assert rc == PMIX_SUCCESS and mixed == one
