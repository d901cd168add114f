"""A PMIx tool in Python with two servers (tests/python/test_tool_servers.py):
srvA (job jobA) and srvB (job jobB), Python hosts found by their PIDs in
<tmpdir>, whose 'query' callables answer with their job's name, so that
each query shows which server served it. Makes the calls of
PMIxTool.attach_to_server, get_servers, set_server and disconnect(server)
in one sequence and prints, as one Python literal, the list of (step, what
the call returned) for the test to check.

    py_servers_tool.py <tmpdir> <pid of srvA> <pid of srvB>
"""
import sys

from pmix import *


def info(key, value, val_type):
    return {'key': key, 'value': value, 'val_type': val_type}


def main(tmpdir, pid_a, pid_b):
    tool = PMIxTool()
    srv_a, srv_b = {'nspace': "srvA", 'rank': 0}, {'nspace': "srvB", 'rank': 0}
    steps = []

    def note(step, result):
        steps.append((step, result))

    def by_pid(pid, primary=False):
        found = [info(PMIX_SERVER_PIDINFO, pid, PMIX_PID), info(PMIX_SERVER_TMPDIR, tmpdir, PMIX_STRING)]
        return found + ([info(PMIX_PRIMARY_SERVER, True, PMIX_BOOL)] if primary else [])

    def served_by():
        rc, results = tool.query([{'keys': [PMIX_QUERY_NAMESPACES], 'qualifiers': []}])
        return rc, [r['value'] for r in results]

    note("servers before init", tool.get_servers())
    note("attach before init", tool.attach_to_server(by_pid(pid_b)))
    note("set_server before init", tool.set_server(srv_b, []))
    note("disconnect before init", tool.disconnect(srv_b))
    note("init", tool.init(by_pid(pid_a)))
    note("servers", tool.get_servers())
    note("query", served_by())
    # B besides: A stays the primary server.
    note("attach B", tool.attach_to_server(by_pid(pid_b)))
    note("servers with B", tool.get_servers())
    note("query with B", served_by())
    # B the primary server: the calls go there.
    note("set_server B", tool.set_server(srv_b, []))
    note("servers B first", tool.get_servers())
    note("query B", served_by())
    note("jobB size", tool.get({'nspace': "jobB", 'rank': PMIX_RANK_WILDCARD}, PMIX_JOB_SIZE, []))
    # A server already held, named by its namespace: no second connection.
    note("attach A by namespace", tool.attach_to_server([info(PMIX_SERVER_NSPACE, "srvA", PMIX_STRING),
                                                         info(PMIX_SERVER_TMPDIR, tmpdir, PMIX_STRING)]))
    note("servers unchanged", tool.get_servers())
    # The other server gone, the primary one goes on serving.
    note("disconnect A", tool.disconnect(srv_a))
    note("servers without A", tool.get_servers())
    note("query without A", served_by())
    note("disconnect A again", tool.disconnect(srv_a))
    note("set_server A", tool.set_server(srv_a, []))
    note("attach nowhere", tool.attach_to_server([info(PMIX_SERVER_NSPACE, "srvC", PMIX_STRING),
                                                  info(PMIX_SERVER_TMPDIR, tmpdir, PMIX_STRING)]))
    note("attach without directives", tool.attach_to_server([]))
    # The primary server gone: nothing serves.
    note("disconnect B", tool.disconnect(srv_b))
    note("servers none", tool.get_servers())
    note("query none", served_by())
    # PMIX_PRIMARY_SERVER: A serves at once.
    note("attach A primary", tool.attach_to_server(by_pid(pid_a, primary=True)))
    note("servers A", tool.get_servers())
    note("query A", served_by())
    note("finalize", tool.finalize())
    note("servers after finalize", tool.get_servers())
    print(repr(steps), flush=True)


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
