"""The calls python3-pmix adds beyond put/get and fence, made by Python
clients (tests/python/py_calls.py) that pmixrun starts: publish/lookup,
spawn and connect, groups, events with Python handlers, log, credentials,
peers and nodes, and the statuses of calls pmixrun has no up-call for."""
import os

import pytest

from pmix import *

import support

CALLS = os.path.join(support.HERE, "py_calls.py")


def pmixrun(n, mode):
    code, out, err = support.run([support.PMIXRUN, "-n", str(n), "--timeout", str(support.TIMEOUT),
                                  support.PYTHON, CALLS, mode])
    assert code == 0, out + err
    return out, err


def oks(out, n):
    return sorted(line for line in out.splitlines() if line.startswith("ok ")) == ["ok %d" % r for r in range(n)]


def test_publish_lookup_unpublish_between_two_ranks():
    """Rank 1's lookup waits for rank 0's keys (a byte object with NULs
    comes back exactly, with its publisher); unpublishing one key, then all,
    makes them NOT_FOUND."""
    out, err = pmixrun(2, "publish")
    assert oks(out, 2), out + err


def test_spawn_a_child_job_connect_to_it_and_disconnect():
    """Rank 0 spawns two processes (argv, env, maxprocs of the app dict);
    they see PMIX_SPAWNED and their parent, and both jobs connect, read each
    other's data and disconnect. A program that does not exist gives
    PMIX_ERR_JOB_FAILED_TO_LAUNCH and no namespace."""
    out, err = pmixrun(2, "spawn")
    assert oks(out, 2), out + err
    assert sorted(line for line in out.splitlines() if line.startswith("child ok")) == ["child ok 0",
                                                                                       "child ok 1"]
    assert "2 of 2 processes of 1 spawned job" in err


def test_group_construct_with_a_context_id_invite_join_and_leave():
    """Three ranks construct a group and get one context id; rank 0 invites
    ranks 1 and 2, whose Python handlers get PMIX_GROUP_INVITED; 1 accepts,
    2 declines, the leader hears both and later that 1 left."""
    out, err = pmixrun(3, "group")
    assert oks(out, 3), out + err


def test_events_reach_python_handlers_and_a_raising_handler_is_reported():
    """Rank 0's event reaches both ranks' Python handlers (on a library
    thread, where blocking calls answer PMIX_ERR_WOULD_BLOCK); the handler
    that raises is reported and the chain goes on; deregistered, it is not
    called again."""
    out, err = pmixrun(2, "event")
    assert oks(out, 2), out + err
    assert err.count("RuntimeError: py_calls raises in its event handler on purpose") == 2  # once per rank
    assert err.count("Exception ignored in: 'pmix event handler") == 2


def test_log_reaches_the_launchers_stdout_and_stderr():
    out, err = pmixrun(2, "log")
    assert oks(out, 2), out + err
    lines = out.splitlines()
    assert any(l.startswith("[pmixrun.") and l.endswith(":0] py_calls log line from rank 0") for l in lines), out
    assert any(l.endswith(":1] py_calls log line from rank 1") for l in err.splitlines()), err


def test_credentials_got_validated_and_an_altered_one_refused():
    """With no credential up-call in pmixrun the server issues them: each
    names its holder's uid, gid and process; a flipped bit is
    PMIX_ERR_INVALID_CRED."""
    out, err = pmixrun(2, "credential")
    assert oks(out, 2), out + err


def test_resolve_peers_and_nodes_and_store_internal():
    out, err = pmixrun(3, "peers")
    assert oks(out, 3), out + err


def test_without_the_host_function_the_documented_status():
    """pmixrun has no monitor or job_control up-call: PMIX_ERR_NOT_SUPPORTED;
    it allocates one node at most (PMIX_ERR_OUT_OF_RESOURCE for two) and
    pulls output of its own jobs only (PMIX_ERR_NOT_FOUND, reference -1)."""
    out, err = pmixrun(2, "absent")
    assert oks(out, 2), out + err


def test_the_new_calls_before_init():
    c = PMIxClient()
    assert c.publish([]) == PMIX_ERR_INIT
    assert c.lookup([{'key': "k"}], []) == (PMIX_ERR_INIT, [])
    assert c.spawn([], [{'cmd': "true"}]) == (PMIX_ERR_INIT, None)
    assert c.get_credential([]) == (PMIX_ERR_INIT, {})
    assert c.group_construct("g", [{'nspace': "n", 'rank': 0}], []) == (PMIX_ERR_INIT, [])
    assert c.register_event_handler([PMIX_ERR_LOST_CONNECTION], [], lambda *a: PMIX_SUCCESS) == (PMIX_ERR_INIT, -1)
    assert c.iof_pull([{'nspace': "n", 'rank': 0}], PMIX_FWD_STDOUT_CHANNEL, [], lambda *a: None) == (PMIX_ERR_INIT, -1)
    assert c.notify_event(PMIX_EXTERNAL_ERR_BASE, None, PMIX_RANGE_LOCAL, []) == PMIX_ERR_INIT


def test_bad_input_to_the_new_calls_raises_before_any_c_call():
    c = PMIxClient()
    with pytest.raises(TypeError, match="'cmd' missing"):
        c.spawn([], [{'argv': ["x"]}])
    with pytest.raises(TypeError, match="'key' missing"):
        c.lookup([{'nokey': "k"}], [])
    with pytest.raises(TypeError, match="not callable"):
        c.register_event_handler([PMIX_ERR_LOST_CONNECTION], [], "not a function")
    with pytest.raises(TypeError, match="not callable"):
        c.iof_pull([{'nspace': "n", 'rank': 0}], PMIX_FWD_STDOUT_CHANNEL, [], None)
    with pytest.raises(ValueError, match="notify_event range"):
        c.notify_event(PMIX_EXTERNAL_ERR_BASE, None, 300, [])
    with pytest.raises(ValueError, match="one info dict"):
        c.monitor([], PMIX_MONITOR_FILE_ALERT, [])
    with pytest.raises(TypeError, match="group_construct peers"):
        c.group_construct("g", [{'nspace': "n"}], [])
    with pytest.raises(ValueError, match="a reference is not negative"):
        c.deregister_event_handler(-1)
