"""A Python host in a process of its own, for tests that need a second
server beside the test process's: a PMIxServer named <server>
(PMIX_SERVER_NSPACE), with tool support and its topology shared, hosting
job <job> of <size> ranks, whose 'query' callable answers every key with
<job>, so that a tool sees which server served it; <hostname> names its
node (PMIX_HOSTNAME). It prints "ready <pid>" once it serves, then answers
commands read from stdin, one a line:

    inventory   prints "INVENTORY <repr of collect_inventory()>"
    stop        finalizes, prints "FINALIZE <rc>" and exits

    py_host.py <tmpdir> <server> <job> <size> [<hostname>]
"""
import os
import sys

from pmix import *


def info(key, value, val_type):
    return {'key': key, 'value': value, 'val_type': val_type}


def main(tmpdir, name, job, size, hostname=None):
    def query(args, queries):
        return PMIX_SUCCESS, [info(key, job, PMIX_STRING) for q in queries for key in q['keys']]

    server = PMIxServer()
    directives = [info(PMIX_SERVER_TMPDIR, tmpdir, PMIX_STRING), info(PMIX_SERVER_NSPACE, name, PMIX_STRING),
                  info(PMIX_SERVER_TOOL_SUPPORT, True, PMIX_BOOL), info(PMIX_SERVER_SHARE_TOPOLOGY, True, PMIX_BOOL)]
    if hostname:
        directives.append(info(PMIX_HOSTNAME, hostname, PMIX_STRING))
    rc = server.init(directives, {'query': query})
    if rc != PMIX_SUCCESS:
        print("FAIL init", rc, flush=True)
        return 1
    rc = server.register_nspace(job, 0, [info(PMIX_JOB_SIZE, int(size), PMIX_UINT32)])
    if rc != PMIX_SUCCESS:
        print("FAIL register_nspace", rc, flush=True)
        return 1
    print("ready", os.getpid(), flush=True)
    for line in sys.stdin:
        command = line.strip()
        if command == "inventory":
            print("INVENTORY", repr(server.collect_inventory([])), flush=True)
        elif command == "stop":
            break
    print("FINALIZE", server.finalize(), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
