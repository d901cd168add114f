"""Python clients (PMIxClient, tests/python/py_client.py): run by our
launcher pmixrun, and by a Python host."""
import os
import shutil

from pmix import *

import support
from support import info

CLIENT = os.path.join(support.HERE, "py_client.py")


def pmixrun(n, *args):
    return support.run([support.PMIXRUN, "-n", str(n), "--timeout", str(support.TIMEOUT),
                        support.PYTHON, CLIENT] + list(args))


def test_python_clients_under_pmixrun_exchange_every_type_exactly():
    """init, put (bytes with NULs among the types), commit, collecting fence,
    get of every rank's values, finalize."""
    code, out, err = pmixrun(2)
    assert code == 0, out + err
    assert sorted(out.split("\n")[:-1]) == ["ok 0", "ok 1"], out + err
    assert "2 of 2 processes" in err


def test_python_clients_get_through_direct_modex_after_a_plain_fence():
    code, out, err = pmixrun(3, "--no-collect")
    assert code == 0, out + err
    assert sorted(out.split("\n")[:-1]) == ["ok 0", "ok 1", "ok 2"], out + err


def test_fence_lets_other_python_threads_run():
    """fence() blocks without the GIL: another thread of the same process
    runs meanwhile (the job could not finish otherwise)."""
    tmp = support.short_tmpdir()
    try:
        code, out, err = pmixrun(2, "--gil-file", os.path.join(tmp, "go"))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    assert code == 0, out + err
    assert sorted(out.split("\n")[:-1]) == ["ok 0", "ok 1"], out + err


def test_a_python_client_abort_is_the_job_status():
    code, out, err = pmixrun(2, "--abort", "7")
    assert code == 7, out + err
    assert "PMIx_Abort(7): py_client aborts on purpose" in err


def test_python_clients_of_a_python_host(host):
    """Both ends in Python: job data a Python host registered (a byte object
    with NULs) reaches Python clients exactly."""
    record = support.Record()
    assert host.init({'clientconnected': record.answer('clientconnected')}) == PMIX_SUCCESS
    blob = b"\x00host\x00blob\x00" + bytes(range(255, -1, -1))
    host.register_job("pyboth", 2, extra=[info("py.host.blob", blob, PMIX_BYTE_OBJECT)])
    clients = [host.launch("pyboth", r, [support.PYTHON, CLIENT, "--host-blob"]) for r in range(2)]
    for r, c in enumerate(clients):
        code, out, err = support.finish(c)
        assert code == 0, out + err
        assert out == "ok %d\n" % r
    assert sorted(p['rank'] for p in record.of('clientconnected')) == [0, 1]


def test_client_calls_before_init_return_init_errors():
    c = PMIxClient()
    assert not c.initialized()
    assert c.put(PMIX_GLOBAL, "k", {'value': 1, 'val_type': PMIX_INT}) == PMIX_ERR_INIT
    assert c.commit() == PMIX_ERR_INIT
    assert c.fence([], []) == PMIX_ERR_INIT
    assert c.get({'nspace': "x", 'rank': 0}, "k", []) == (PMIX_ERR_INIT, None)
    assert c.query([{'keys': [PMIX_QUERY_NAMESPACES], 'qualifiers': []}]) == (PMIX_ERR_INIT, [])
