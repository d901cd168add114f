"""A PMIx client in Python exercising one family of calls per run, as one
rank of a job pmixrun starts:

    py_calls.py publish | spawn | group | event | log | credential | peers | absent
    py_calls.py hosted | psets

Each rank prints "ok <rank>" and exits 0 when every check passed; the first
check that fails prints "FAIL ..." and exits 1. Processes spawned by the
"spawn" mode run this script as "child" and print "child ok <rank>".
Checks of what only the launcher sees (its stdout, its stderr) are the
test's (test_calls.py). "hosted" (rank 0 of a job a Python host runs, rank
1 on another node) makes one call of each kind the host's server module
answers and prints what each returned, as one Python literal, for the test
(test_host_calls.py) to check against what the host's callables got.
"psets" (rank 0 of a job a Python host runs, test_server_calls.py) reads
the host's resources, then follows the process sets the host defines and
deletes (printing "ready" and "defined" when the host may go on) and prints
"GOT" and what it saw as one Python literal.
"""
import os
import sys
import threading

from pmix import *

# Only against hangs: nothing here measures time.
WAIT = 120


def check(condition, what):
    if not condition:
        print("FAIL", what, flush=True)
        sys.exit(1)


def info(key, value, val_type):
    return {'key': key, 'value': value, 'val_type': val_type}


def as_str(key):
    return key.decode() if isinstance(key, bytes) else key


def find(infos, key):
    """The value of `key` in a list of info dicts (None if absent)."""
    for i in infos:
        if i['key'] == as_str(key):
            return i['value']
    return None


class Job:
    """This rank: the client, its identity, the job's size."""

    def __init__(self):
        self.client = PMIxClient()
        rc, self.me = self.client.init([])
        check(rc == PMIX_SUCCESS, "init: %d" % rc)
        self.nspace, self.rank = self.me['nspace'], self.me['rank']
        rc, size = self.client.get({'nspace': self.nspace, 'rank': PMIX_RANK_WILDCARD}, PMIX_JOB_SIZE, [])
        check(rc == PMIX_SUCCESS, "job size: %d" % rc)
        self.size = size['value']

    def proc(self, rank):
        return {'nspace': self.nspace, 'rank': rank}

    def fence(self):
        rc = self.client.fence([], [])
        check(rc == PMIX_SUCCESS, "fence: %d" % rc)

    def share(self, key, value):
        """Puts a value every rank can read after the next fence."""
        check(self.client.put(PMIX_GLOBAL, key, value) == PMIX_SUCCESS, "put " + key)
        check(self.client.commit() == PMIX_SUCCESS, "commit")

    def read(self, rank, key, nspace=None):
        rc, v = self.client.get({'nspace': nspace or self.nspace, 'rank': rank}, key, [])
        check(rc == PMIX_SUCCESS, "get %s of %s:%d: %d" % (key, nspace or self.nspace, rank, rc))
        return v

    def done(self):
        check(self.client.finalize([]) == PMIX_SUCCESS, "finalize")
        print("ok", self.rank, flush=True)


BLOB = b"\x00published\x00" + bytes(range(256))


def publish(job):
    """Rank 0 publishes, rank 1 looks up (waiting for the keys), rank 0
    unpublishes one key, then all of its keys."""
    c = job.client
    if job.rank == 0:
        rc = c.publish([info("py.pub.str", "published by 0", PMIX_STRING),
                        info("py.pub.bytes", BLOB, PMIX_BYTE_OBJECT)])
        check(rc == PMIX_SUCCESS, "publish: %d" % rc)
    elif job.rank == 1:
        asked = [{'key': "py.pub.str"}, {'key': "py.pub.bytes"}]
        rc, found = c.lookup(asked, [info(PMIX_WAIT, True, PMIX_BOOL)])
        check(rc == PMIX_SUCCESS, "lookup: %d" % rc)
        expected = [{'key': "py.pub.str", 'proc': job.proc(0), 'value': "published by 0", 'val_type': PMIX_STRING},
                    {'key': "py.pub.bytes", 'proc': job.proc(0), 'value': {'bytes': BLOB, 'size': len(BLOB)},
                     'val_type': PMIX_BYTE_OBJECT}]
        check(found == expected, "lookup found %r" % (found,))
        check(asked == expected, "the list given is the answer too: %r" % (asked,))
        rc, found = c.lookup(["py.pub.none"], [])
        check(rc == PMIX_ERR_NOT_FOUND and found == [], "lookup of a key nobody published: %d %r" % (rc, found))
    job.fence()
    if job.rank == 0:
        check(c.unpublish(["py.pub.str"], []) == PMIX_SUCCESS, "unpublish one key")
    job.fence()
    if job.rank == 1:
        rc, _ = c.lookup([{'key': "py.pub.str"}], [])
        check(rc == PMIX_ERR_NOT_FOUND, "the key unpublished: %d" % rc)
        rc, found = c.lookup([{'key': "py.pub.bytes"}], [])
        check(rc == PMIX_SUCCESS and found[0]['value']['bytes'] == BLOB, "the key left: %d %r" % (rc, found))
    job.fence()
    if job.rank == 0:
        check(c.unpublish(None, []) == PMIX_SUCCESS, "unpublish all")
    job.fence()
    if job.rank == 1:
        rc, _ = c.lookup([{'key': "py.pub.bytes"}], [])
        check(rc == PMIX_ERR_NOT_FOUND, "all unpublished: %d" % rc)


def spawn(job):
    """Rank 0 spawns two children running this script; a spawn of a program
    that does not exist fails on rank 1. Parents and children connect, read
    each other's data, and disconnect."""
    c = job.client
    if job.rank == 0:
        job.share("py.parent.value", {'value': "from the parent", 'val_type': PMIX_STRING})
        app = {'cmd': sys.executable, 'argv': [sys.executable, os.path.abspath(__file__), "child"],
               'env': ["PY_CALLS_CHILD=yes"], 'maxprocs': 2}
        rc, child = c.spawn([], [app])
        check(rc == PMIX_SUCCESS and child.startswith(job.nspace + "."), "spawn: %d %r" % (rc, child))
        job.share("py.child.nspace", {'value': child, 'val_type': PMIX_STRING})
    if job.rank == 1:
        rc, child = c.spawn([], [{'cmd': "/nonexistent/py_calls_child", 'maxprocs': 1}])
        check(rc == PMIX_ERR_JOB_FAILED_TO_LAUNCH and child is None, "spawn of nothing: %d %r" % (rc, child))
        job.share("py.unused", {'value': 0, 'val_type': PMIX_INT})
    job.fence()
    child = job.read(0, "py.child.nspace")['value']
    both = [{'nspace': job.nspace, 'rank': PMIX_RANK_WILDCARD}, {'nspace': child, 'rank': PMIX_RANK_WILDCARD}]
    rc = c.connect(both, [])
    check(rc == PMIX_SUCCESS, "connect: %d" % rc)
    size = job.read(PMIX_RANK_WILDCARD, PMIX_JOB_SIZE, child)
    check(size['value'] == 2, "the child job's size: %r" % (size,))
    check(job.read(1, "py.child.value", child)['value'] == "from child 1", "child 1's value")
    check(c.disconnect(both, []) == PMIX_SUCCESS, "disconnect")


def child():
    """A process rank 0 of the "spawn" mode started."""
    job = Job()
    c = job.client
    check(os.environ.get("PY_CALLS_CHILD") == "yes", "the app's env reached the child")
    check(job.read(PMIX_RANK_WILDCARD, PMIX_SPAWNED)['value'] is True, "PMIX_SPAWNED")
    parent = job.read(PMIX_RANK_WILDCARD, PMIX_PARENT_ID)['value']
    job.share("py.child.value", {'value': "from child %d" % job.rank, 'val_type': PMIX_STRING})
    both = [{'nspace': parent['nspace'], 'rank': PMIX_RANK_WILDCARD},
            {'nspace': job.nspace, 'rank': PMIX_RANK_WILDCARD}]
    rc = c.connect(both, [])
    check(rc == PMIX_SUCCESS, "child connect: %d" % rc)
    check(job.read(0, "py.parent.value", parent['nspace'])['value'] == "from the parent", "the parent's value")
    check(c.disconnect(both, []) == PMIX_SUCCESS, "child disconnect")
    check(c.finalize([]) == PMIX_SUCCESS, "child finalize")
    print("child ok", job.rank, flush=True)


class Recorder:
    """Calls of a Python handler, from the library's threads."""

    def __init__(self):
        self.cv = threading.Condition()
        self.calls = []

    def add(self, call):
        with self.cv:
            self.calls.append(call)
            self.cv.notify_all()

    def wait_for(self, n, what):
        with self.cv:
            check(self.cv.wait_for(lambda: len(self.calls) >= n, WAIT), "waited too long for " + what)
            return list(self.calls)


def group(job):
    """Every rank constructs a group with a context id; rank 0 invites ranks
    1 and 2, 1 accepts and 2 declines (answering the PMIX_GROUP_INVITED
    event their Python handlers got); 1 leaves, 0 hears of it."""
    c = job.client
    everyone = [job.proc(r) for r in range(job.size)]
    rc, results = c.group_construct("pygrp", everyone, [info(PMIX_GROUP_ASSIGN_CONTEXT_ID, True, PMIX_BOOL)])
    check(rc == PMIX_SUCCESS, "group_construct: %d" % rc)
    check(find(results, PMIX_GROUP_ID) == "pygrp", "the group's id: %r" % (results,))
    members = find(results, PMIX_GROUP_MEMBERSHIP)
    check(members == {'type': PMIX_PROC, 'array': everyone}, "the group's members: %r" % (members,))
    ctxid = find(results, PMIX_GROUP_CONTEXT_ID)
    check(isinstance(ctxid, int), "a context id: %r" % (results,))
    job.share("py.ctxid", {'value': ctxid, 'val_type': PMIX_SIZE})
    job.fence()
    check(all(job.read(r, "py.ctxid")['value'] == ctxid for r in range(job.size)), "one context id for all")

    events = Recorder()

    def on_event(ref, status, source, infos, results):
        events.add((status, source, find(infos, PMIX_GROUP_ID)))
        return PMIX_EVENT_ACTION_COMPLETE, []

    codes = [PMIX_GROUP_INVITED, PMIX_GROUP_INVITE_ACCEPTED, PMIX_GROUP_INVITE_DECLINED, PMIX_GROUP_LEFT]
    rc, ref = c.register_event_handler(codes, [], on_event)
    check(rc == PMIX_SUCCESS and ref >= 0, "register_event_handler: %d %d" % (rc, ref))
    job.fence()
    if job.rank == 0:
        rc, results = c.group_invite("pyinv", [job.proc(1), job.proc(2)], [])
        check(rc == PMIX_SUCCESS, "group_invite: %d" % rc)
        members = find(results, PMIX_GROUP_MEMBERSHIP)
        check(members == {'type': PMIX_PROC, 'array': [job.proc(0), job.proc(1)]}, "invite's group: %r" % (results,))
        seen = events.wait_for(2, "the invitees' answers")
        check(sorted(seen[:2]) == sorted([(PMIX_GROUP_INVITE_ACCEPTED, job.proc(1), "pyinv"),
                                          (PMIX_GROUP_INVITE_DECLINED, job.proc(2), "pyinv")]),
              "the answers: %r" % (seen,))
        seen = events.wait_for(3, "rank 1 leaving")
        check(seen[2] == (PMIX_GROUP_LEFT, job.proc(1), "pyinv"), "rank 1 left: %r" % (seen,))
    else:
        seen = events.wait_for(1, "the invitation")
        check(seen[0][0] == PMIX_GROUP_INVITED and seen[0][2] == "pyinv", "invited: %r" % (seen,))
        opt = PMIX_GROUP_ACCEPT if job.rank == 1 else PMIX_GROUP_DECLINE
        rc, results = c.group_join("pyinv", job.proc(0), opt, [])
        check(rc == PMIX_SUCCESS, "group_join(%d): %d" % (opt, rc))
        if job.rank == 1:
            check(c.group_leave("pyinv", []) == PMIX_SUCCESS, "group_leave")
    job.fence()
    check(c.deregister_event_handler(ref) == PMIX_SUCCESS, "deregister_event_handler")
    check(c.group_destruct("pygrp", []) == PMIX_SUCCESS, "group_destruct")
    check(c.group_destruct("pygrp", []) == PMIX_ERR_NOT_FOUND, "a group destructed is gone")


EVENT = PMIX_EXTERNAL_ERR_BASE - 15


def event(job):
    """Rank 1's Python handlers get the events rank 0 notifies: a handler
    that raises first (reported; the chain goes on), then one that answers.
    After the raising one is deregistered only the other runs. Rank 0's own
    handler gets its own events once each."""
    c = job.client
    raised, got = Recorder(), Recorder()

    def raising(ref, status, source, infos, results):
        raised.add(status)
        raise RuntimeError("py_calls raises in its event handler on purpose")

    def answering(ref, status, source, infos, results):
        # A library thread: blocking calls refuse at once.
        blocked = (c.fence([], []), c.register_event_handler([EVENT], [], answering)[0])
        got.add((ref, status, source, find(infos, "py.event.data"), results, blocked,
                 threading.current_thread() is threading.main_thread()))
        return PMIX_EVENT_ACTION_COMPLETE, [info("py.handled", True, PMIX_BOOL)]

    rc, first = c.register_event_handler([EVENT], [info(PMIX_EVENT_HDLR_FIRST, True, PMIX_BOOL)], raising)
    check(rc == PMIX_SUCCESS, "register the raising handler: %d" % rc)
    rc, second = c.register_event_handler([EVENT], [], answering)
    check(rc == PMIX_SUCCESS and second != first, "register the answering handler: %d %d" % (rc, second))
    job.fence()
    if job.rank == 0:
        rc = c.notify_event(EVENT, None, PMIX_RANGE_NAMESPACE, [info("py.event.data", "first", PMIX_STRING)])
        check(rc == PMIX_SUCCESS, "notify_event: %d" % rc)
    calls = got.wait_for(1, "the first event")
    ref, status, source, data, results, blocked, on_main = calls[0]
    check((ref, status, source, data) == (second, EVENT, job.proc(0), "first"), "the event: %r" % (calls[0],))
    check(blocked == (PMIX_ERR_WOULD_BLOCK, PMIX_ERR_WOULD_BLOCK), "blocking calls in a handler: %r" % (blocked,))
    check(not on_main, "the handler runs on a library thread")
    check(raised.wait_for(1, "the raising handler") == [EVENT], "the raising handler ran")
    check(c.deregister_event_handler(first) == PMIX_SUCCESS, "deregister the raising handler")
    job.fence()
    if job.rank == 0:
        rc = c.notify_event(EVENT, job.me, PMIX_RANGE_NAMESPACE, [info("py.event.data", "second", PMIX_STRING)])
        check(rc == PMIX_SUCCESS, "notify_event again: %d" % rc)
    calls = got.wait_for(2, "the second event")
    check(calls[1][3] == "second", "the second event: %r" % (calls[1],))
    job.fence()
    check(len(raised.calls) == 1 and len(got.calls) == 2, "one call each per event: %r %r" % (raised.calls, got.calls))
    check(c.deregister_event_handler(second) == PMIX_SUCCESS, "deregister the answering handler")


def log(job):
    """PMIx_Log to the launcher's stdout (rank 0) and stderr (rank 1)."""
    key = PMIX_LOG_STDOUT if job.rank == 0 else PMIX_LOG_STDERR
    rc = job.client.log([info(key, "py_calls log line from rank %d" % job.rank, PMIX_STRING)], [])
    check(rc == PMIX_SUCCESS, "log: %d" % rc)


def credential(job):
    """Each rank gets a credential, validates its own and the other rank's,
    and sees a credential altered by one bit refused."""
    c = job.client
    rc, cred = c.get_credential([])
    check(rc == PMIX_SUCCESS and cred['size'] == len(cred['bytes']) > 0, "get_credential: %d %r" % (rc, cred))
    rc, results = c.validate_credential(cred, [])
    check(rc == PMIX_SUCCESS, "validate my credential: %d" % rc)
    check(find(results, PMIX_USERID) == os.getuid() and find(results, PMIX_GRPID) == os.getgid(),
          "who my credential names: %r" % (results,))
    job.share("py.cred", {'value': cred['bytes'], 'val_type': PMIX_BYTE_OBJECT})
    job.fence()
    other = (job.rank + 1) % job.size
    theirs = job.read(other, "py.cred")['value']
    rc, results = c.validate_credential(theirs, [])  # the byte-object dict itself
    check(rc == PMIX_SUCCESS and find(results, PMIX_PROCID) == job.proc(other),
          "rank %d's credential: %d %r" % (other, rc, results))
    altered = bytearray(theirs['bytes'])
    altered[len(altered) // 2] ^= 1
    rc, results = c.validate_credential(bytes(altered), [])
    check(rc == PMIX_ERR_INVALID_CRED and results == [], "an altered credential: %d %r" % (rc, results))


def peers(job):
    """resolve_peers and resolve_nodes name this one-node job; a value
    store_internal keeps for another rank is what get answers."""
    c = job.client
    stored = {'value': b"\x00kept\x00", 'val_type': PMIX_BYTE_OBJECT}
    other = job.proc((job.rank + 1) % job.size)
    check(c.store_internal(other, "py.stored", stored) == PMIX_SUCCESS, "store_internal")
    rc, got = c.get(other, "py.stored", [])
    check(rc == PMIX_SUCCESS and got == {'value': {'bytes': b"\x00kept\x00", 'size': 6}, 'val_type': PMIX_BYTE_OBJECT},
          "the stored value: %d %r" % (rc, got))
    c.progress()
    rc, host = c.get(job.me, PMIX_HOSTNAME, [])
    check(rc == PMIX_SUCCESS, "hostname: %d" % rc)
    rc, nodes = c.resolve_nodes(job.nspace)
    check(rc == PMIX_SUCCESS and nodes == host['value'], "resolve_nodes: %d %r" % (rc, nodes))
    rc, procs = c.resolve_peers(host['value'], job.nspace)
    check(rc == PMIX_SUCCESS and sorted(p['rank'] for p in procs) == list(range(job.size))
          and all(p['nspace'] == job.nspace for p in procs), "resolve_peers: %d %r" % (rc, procs))


def absent(job):
    """Under pmixrun: the calls it has no up-call for (monitor, job control)
    answer the status without a host function; those it answers for one
    node (allocation, output pulls) refuse what one node cannot give."""
    c = job.client
    rc, results = c.monitor([info(PMIX_MONITOR_FILE, "/tmp/py_calls", PMIX_STRING)], PMIX_MONITOR_FILE_ALERT, [])
    check((rc, results) == (PMIX_ERR_NOT_SUPPORTED, []), "monitor: %d %r" % (rc, results))
    rc, results = c.job_control(None, [info(PMIX_JOB_CTRL_PAUSE, True, PMIX_BOOL)])
    check((rc, results) == (PMIX_ERR_NOT_SUPPORTED, []), "job_control: %d %r" % (rc, results))
    rc, results = c.allocation_request(PMIX_ALLOC_NEW, [info(PMIX_ALLOC_NUM_NODES, 2, PMIX_UINT64)])
    check(rc == PMIX_ERR_OUT_OF_RESOURCE, "allocation_request of 2 nodes: %d %r" % (rc, results))
    rc, ref = c.iof_pull([{'nspace': "no.such.job", 'rank': 0}], PMIX_FWD_STDOUT_CHANNEL, [], lambda *args: None)
    check((rc, ref) == (PMIX_ERR_NOT_FOUND, -1), "iof_pull of an unknown job: %d %d" % (rc, ref))


def hosted(job):
    c = job.client
    everyone = {'nspace': job.nspace, 'rank': PMIX_RANK_WILDCARD}
    got = {}
    got['publish'] = c.publish([info("py.k", "v", PMIX_STRING)])
    got['lookup'] = c.lookup([{'key': "py.k"}, {'key': "py.none"}], [info(PMIX_TIMEOUT, 5, PMIX_INT)])
    got['unpublish'] = c.unpublish(["py.k"], [])
    got['unpublish_all'] = c.unpublish(None, [])
    got['spawn'] = c.spawn([info(PMIX_TIMEOUT, 7, PMIX_INT)],
                           [{'cmd': "/bin/true", 'argv': ["true", "x"], 'env': ["A=B"], 'cwd': "/tmp",
                             'maxprocs': 3, 'info': [info("py.app", 1, PMIX_UINT32)]}])
    got['connect'] = c.connect([everyone], [])
    got['disconnect'] = c.disconnect(None, [])
    got['log'] = c.log([info(PMIX_LOG_STDERR, "py hosted log", PMIX_STRING)], [info(PMIX_LOG_ONCE, True, PMIX_BOOL)])
    got['allocate'] = c.allocation_request(PMIX_ALLOC_NEW, [info(PMIX_ALLOC_NUM_NODES, 2, PMIX_UINT64)])
    got['monitor'] = c.monitor([info(PMIX_MONITOR_FILE, "/tmp/py.watched", PMIX_STRING)], PMIX_MONITOR_FILE_ALERT, [])
    rc, cred = c.get_credential([info("py.cred.dir", 3, PMIX_UINT32)])
    got['get_credential'] = (rc, cred)
    got['validate_credential'] = c.validate_credential(cred if cred else b"none", [])
    got['group_construct'] = c.group_construct("pyg", [job.proc(0), job.proc(1)],
                                               [info(PMIX_GROUP_ASSIGN_CONTEXT_ID, True, PMIX_BOOL)])
    got['group_destruct'] = c.group_destruct("pyg", [])
    got['fabric_register'] = c.fabric_register([info(PMIX_FABRIC_IDENTIFIER, "pyfabric", PMIX_STRING)])
    got['fabric_update'] = c.fabric_update()
    got['fabric_deregister'] = c.fabric_deregister()
    # OpenPMIx 6.0's requests (python3-pmix 4.2.2 has no form of them)
    got['session_control'] = c.session_control(12, [info("pmix.ssn.pause", True, PMIX_BOOL)])
    got['resource_block'] = c.resource_block(PMIX_RESOURCE_BLOCK_DEFINE, "pyblock",
                                             [{'type': PMIX_DEVTYPE_GPU, 'count': 2}], [info("py.why", "x", PMIX_STRING)])
    got['error_code'] = c.error_code("PMIX_ERR_TIMEOUT")
    print(repr(got), flush=True)


def pset_names(c):
    """The server's answer to PMIX_QUERY_NUM_PSETS and PMIX_QUERY_PSET_NAMES."""
    rc, results = c.query([{'keys': [PMIX_QUERY_NUM_PSETS, PMIX_QUERY_PSET_NAMES], 'qualifiers': []}])
    return rc, find(results, PMIX_QUERY_NUM_PSETS), find(results, PMIX_QUERY_PSET_NAMES)


def psets(job):
    c = job.client
    events = Recorder()

    def on_pset(ref, status, source, infos, results):
        events.add((status, source, find(infos, PMIX_PSET_NAME), find(infos, PMIX_PSET_MEMBERS)))
        return PMIX_EVENT_ACTION_COMPLETE, []

    got = {}
    rc, ref = c.register_event_handler([PMIX_PROCESS_SET_DEFINE, PMIX_PROCESS_SET_DELETE], [], on_pset)
    check(rc == PMIX_SUCCESS, "register_event_handler: %d" % rc)
    everyone = job.proc(PMIX_RANK_WILDCARD)
    for key in ("site.rack", "site.row", "site.zone"):
        got[key] = c.get(everyone, key, [])
    got['before'] = pset_names(c)
    print("ready", flush=True)
    got['define event'] = events.wait_for(1, "PMIX_PROCESS_SET_DEFINE")[0]
    got['after define'] = pset_names(c)
    rc, results = c.query([{'keys': [PMIX_QUERY_PSET_MEMBERSHIP],
                            'qualifiers': [info(PMIX_PSET_NAME, "pyset", PMIX_STRING)]}])
    got['membership'] = (rc, find(results, PMIX_QUERY_PSET_MEMBERSHIP))
    print("defined", flush=True)
    got['delete event'] = events.wait_for(2, "PMIX_PROCESS_SET_DELETE")[1]
    got['after delete'] = pset_names(c)
    check(c.deregister_event_handler(ref) == PMIX_SUCCESS, "deregister_event_handler")
    print("GOT", repr(got), flush=True)


MODES = {'hosted': hosted, 'psets': psets, 'publish': publish, 'spawn': spawn, 'group': group, 'event': event,
         'log': log, 'credential': credential, 'peers': peers, 'absent': absent}


def main(mode):
    if mode == "child":
        return child()
    job = Job()
    MODES[mode](job)
    job.done()


if __name__ == "__main__":
    main(sys.argv[1])
