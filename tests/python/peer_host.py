"""One node of a two-node job: a Python host (PMIxServer named by
PMIX_HOSTNAME) whose 'fencenb' callable trades its node's fence data with the
other node through stdout/stdin (relayed by the test), and which runs the two
local ranks of job "wide" as C clients.

    peer_host.py <this node> <tmpdir> <other node> <script_client>

Prints "FENCE <hex>" lines for the other node and, at the end,
"DONE <node> ok" or "DONE <node> fail ..." with what went wrong."""
import os
import subprocess
import sys

from pmix import *

node, tmpdir, other, script = sys.argv[1:5]
ranks = {"nodeA": [0, 1], "nodeB": [2, 3]}
calls = []


def fencenb(args):
    calls.append(args)
    mine = args['data']
    sys.stdout.write("FENCE %s\n" % mine.hex())
    sys.stdout.flush()
    line = sys.stdin.readline().split()
    theirs = bytes.fromhex(line[1]) if len(line) > 1 else b""
    # Every node returns the same concatenation: nodeA's data, then nodeB's.
    combined = mine + theirs if node == "nodeA" else theirs + mine
    return PMIX_SUCCESS, {'bytes': combined, 'size': len(combined)}


def info(key, value, val_type):
    return {'key': key, 'value': value, 'val_type': val_type}


def main():
    server = PMIxServer()
    mydir = os.path.join(tmpdir, node)
    os.makedirs(mydir, exist_ok=True)
    rc = server.init([info(PMIX_SERVER_TMPDIR, mydir, PMIX_STRING), info(PMIX_HOSTNAME, node, PMIX_STRING)],
                     {'fencenb': fencenb})
    if rc != PMIX_SUCCESS:
        return "init %d" % rc
    rc, node_map = server.generate_regex(["nodeA", "nodeB"])
    rc2, proc_map = server.generate_ppn(["0,1", "2,3"])
    if rc != PMIX_SUCCESS or rc2 != PMIX_SUCCESS:
        return "regex %d %d" % (rc, rc2)
    rc = server.register_nspace("wide", 2, [info(PMIX_JOB_SIZE, 4, PMIX_UINT32),
                                            info(PMIX_NODE_MAP, node_map, PMIX_STRING),
                                            info(PMIX_PROC_MAP, proc_map, PMIX_STRING)])
    if rc != PMIX_SUCCESS:
        return "register_nspace %d" % rc
    clients = []
    for r in ranks[node]:
        proc = {'nspace': "wide", 'rank': r}
        server.register_client(proc, os.getuid(), os.getgid())
        env = dict(os.environ)
        server.setup_fork(proc, env)
        steps = [script, "init", "put:color=c%d" % r, "commit", "fence:collect"]
        steps += ["get:%d:color" % p for p in range(4)]
        steps += ["get:*:pmix.local.size", "finalize"]
        clients.append(subprocess.Popen(steps, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                        text=True))
    problems = []
    for c in clients:
        out, err = c.communicate(timeout=120)
        expected = ["get:%d:color PMIX_SUCCESS c%d" % (p, p) for p in range(4)]
        expected += ["get:*:pmix.local.size PMIX_SUCCESS 2", "finalize PMIX_SUCCESS"]
        if c.returncode != 0 or any(e not in out for e in expected):
            problems.append(out + err)
    if len(calls) != 1:
        problems.append("fencenb called %d times" % len(calls))
    elif calls[0]['procs'] != [{'nspace': "wide", 'rank': PMIX_RANK_WILDCARD}] or not calls[0]['data']:
        problems.append("fencenb arguments: %r" % calls[0])
    server.finalize()
    return "; ".join(problems) or None


if __name__ == "__main__":
    problem = main()
    sys.stdout.write("DONE %s %s\n" % (node, "ok" if problem is None else "fail " + problem.replace("\n", " | ")))
    sys.stdout.flush()
