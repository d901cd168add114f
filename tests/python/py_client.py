"""A PMIx client written in Python: one rank of a job run by pmixrun or by a
Python host. Every rank puts values of many types (bytes with NUL bytes
among them), commits, fences and reads every rank's values back, checking
each exactly. Prints "ok <rank>" and exits 0 when every check passed;
prints "FAIL ..." and exits 1 at the first that did not.

Options: --no-collect   fence without data collection (gets use direct modex)
         --abort N      rank 1 calls abort(N) after init
         --host-blob    the job info holds py.host.blob (put there by a
                        Python host), checked byte for byte
         --gil-file P   rank 0 creates file P from a second thread once its
                        main thread is about to block in fence(); the other
                        ranks wait for P before their fence. The job only
                        completes if fence() runs without the GIL.
"""
import os
import sys
import threading
import time

from pmix import *


def check(condition, what):
    if not condition:
        print("FAIL", what, flush=True)
        sys.exit(1)


def values_of(nspace, rank):
    """What rank `rank` puts: key -> value dict."""
    blob = b"\x00\x01\x00\xff" + b"\x00rank %d\x00" % rank + bytes(range(256))
    return {
        "py.str": {"value": "text of rank %d" % rank, "val_type": PMIX_STRING},
        "py.bytes": {"value": blob, "val_type": PMIX_BYTE_OBJECT},
        "py.u32": {"value": 4000000000 + rank, "val_type": PMIX_UINT32},
        "py.i64": {"value": -(2 ** 40) - rank, "val_type": PMIX_INT64},
        "py.double": {"value": 2.5 + rank, "val_type": PMIX_DOUBLE},
        "py.bool": {"value": rank % 2 == 0, "val_type": PMIX_BOOL},
        "py.proc": {"value": {"nspace": nspace, "rank": rank}, "val_type": PMIX_PROC},
        "py.rank": {"value": rank, "val_type": PMIX_PROC_RANK},
        "py.status": {"value": PMIX_ERR_NOT_FOUND, "val_type": PMIX_STATUS},
        "py.array": {"value": {"type": PMIX_UINT32, "array": [rank, 1, 2]}, "val_type": PMIX_DATA_ARRAY},
        "py.strings": {"value": {"type": PMIX_STRING, "array": ["a", "b%d" % rank]},
                       "val_type": PMIX_DATA_ARRAY},
    }


def expected(value):
    """The form get() gives back for a value put as `value`."""
    if value["val_type"] == PMIX_BYTE_OBJECT:
        return {"value": {"bytes": value["value"], "size": len(value["value"])},
                "val_type": PMIX_BYTE_OBJECT}
    return value


HOST_BLOB = b"\x00host\x00blob\x00" + bytes(range(255, -1, -1))


def create_when_set(event, path):
    event.wait()
    with open(path, "w"):
        pass


def wait_for_file(path):
    deadline = time.monotonic() + 120  # only against hangs
    while not os.path.exists(path):
        check(time.monotonic() < deadline, "waited too long for " + path)
        time.sleep(0.005)


def main(argv):
    collect = "--no-collect" not in argv
    gil_file = argv[argv.index("--gil-file") + 1] if "--gil-file" in argv else None
    abort_status = int(argv[argv.index("--abort") + 1]) if "--abort" in argv else None
    client = PMIxClient()
    rc, me = client.init([])
    check(rc == PMIX_SUCCESS, "init: %d" % rc)
    check(client.initialized(), "initialized() after init")
    nspace, rank = me["nspace"], me["rank"]
    rc, size = client.get({"nspace": nspace, "rank": PMIX_RANK_WILDCARD}, PMIX_JOB_SIZE, [])
    check(rc == PMIX_SUCCESS and size["val_type"] == PMIX_UINT32, "job size: %d %r" % (rc, size))
    nprocs = size["value"]
    if "--host-blob" in argv:
        rc, blob = client.get({"nspace": nspace, "rank": PMIX_RANK_WILDCARD}, "py.host.blob", [])
        check(rc == PMIX_SUCCESS, "get py.host.blob: %d" % rc)
        check(blob == {"value": {"bytes": HOST_BLOB, "size": len(HOST_BLOB)}, "val_type": PMIX_BYTE_OBJECT},
              "py.host.blob: %r" % (blob,))
    if abort_status is not None and rank == 1:
        client.abort(abort_status, "py_client aborts on purpose", [])
        check(False, "abort returned")
    for key, value in values_of(nspace, rank).items():
        rc = client.put(PMIX_GLOBAL, key, value)
        check(rc == PMIX_SUCCESS, "put %s: %d" % (key, rc))
    check(client.commit() == PMIX_SUCCESS, "commit")
    directives = [{"key": PMIX_COLLECT_DATA, "value": collect, "val_type": PMIX_BOOL}]
    if gil_file is not None and rank == 0:
        entering = threading.Event()
        helper = threading.Thread(target=create_when_set, args=(entering, gil_file))
        helper.start()
        entering.set()  # the helper can only run once fence() let go of the GIL
        rc = client.fence([], directives)
        helper.join()
    else:
        if gil_file is not None:
            wait_for_file(gil_file)
        rc = client.fence([], directives)
    check(rc == PMIX_SUCCESS, "fence: %d" % rc)
    for peer in range(nprocs):
        for key, value in values_of(nspace, peer).items():
            rc, got = client.get({"nspace": nspace, "rank": peer}, key, [])
            check(rc == PMIX_SUCCESS, "get %s of rank %d: %d" % (key, peer, rc))
            check(got == expected(value), "get %s of rank %d: %r, expected %r"
                  % (key, peer, got, expected(value)))
    rc, _ = client.get({"nspace": nspace, "rank": 0}, "py.no-such-key", [])
    check(rc == PMIX_ERR_NOT_FOUND, "a missing key: %d" % rc)
    check(client.finalize([]) == PMIX_SUCCESS, "finalize")
    print("ok", rank, flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])
