"""One rank of a job, on Debian's python3-pmix (OpenPMIx's own binding, over
Debian's libpmix.so.2, speaking OpenPMIx's protocol to our server: issue 35).
Puts a value naming itself, commits, fences collecting data, reads every
other rank's value; prints "ok <rank>" when all of it worked, else
"FAIL ..." and exits 1."""
import sys

from pmix import *


def check(condition, what):
    if not condition:
        print("FAIL", what, flush=True)
        sys.exit(1)


c = PMIxClient()
rc, me = c.init([])
check(rc == PMIX_SUCCESS, "init: %d" % rc)
rc, size = c.get({'nspace': me['nspace'], 'rank': PMIX_RANK_WILDCARD}, PMIX_JOB_SIZE, [])
check(rc == PMIX_SUCCESS and size['val_type'] == PMIX_UINT32, "job size: %d %r" % (rc, size))
check(c.put(PMIX_GLOBAL, "py.key", {'value': "from-%d" % me['rank'], 'val_type': PMIX_STRING}) == PMIX_SUCCESS, "put")
check(c.commit() == PMIX_SUCCESS, "commit")
rc = c.fence([], [{'key': PMIX_COLLECT_DATA, 'value': True, 'val_type': PMIX_BOOL}])
check(rc == PMIX_SUCCESS, "fence: %d" % rc)
for r in range(size['value']):
    if r == me['rank']:
        continue
    rc, v = c.get({'nspace': me['nspace'], 'rank': r}, "py.key", [])
    check(rc == PMIX_SUCCESS and v == {'value': "from-%d" % r, 'val_type': PMIX_STRING}, "get of %d: %d %r" % (r, rc, v))
check(c.finalize([]) == PMIX_SUCCESS, "finalize")
print("ok", me['rank'], flush=True)
