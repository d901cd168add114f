"""A PMIx tool in Python pulling a job's output (iof_pull) from the server of
process <pid>, driven line by line on stdin so that the test, which is the
host, knows when to deliver:

    py_iof_tool.py <pid> <tmpdir> <nspace>

Each command's answer is one line on stdout, a Python literal:
    pull            (rc, ref) of iof_pull of rank 0's stdout, then (rc, ref)
                    of iof_pull of the whole namespace's stderr with a
                    handler that raises on the payload b"raise"
    wait N          the first N calls of the handlers once there are N:
                    [(which, ref, channel, source, payload, info), ...]
    count           how many calls the handlers have had
    deregister REF  rc of iof_deregister(REF)
    push            (rc of iof_push of b"in\\x00put" to rank 0, rc of the
                    push of None, the end of the input)
    end             rc of finalize, and the tool exits
"""
import sys
import threading

from pmix import *

WAIT = 120  # only against hangs


def main(pid, tmpdir, nspace):
    tool = PMIxTool()
    rc, me = tool.init([{'key': PMIX_SERVER_PIDINFO, 'value': pid, 'val_type': PMIX_PID},
                        {'key': PMIX_SERVER_TMPDIR, 'value': tmpdir, 'val_type': PMIX_STRING}])
    print(repr((rc, me)), flush=True)
    if rc != PMIX_SUCCESS:
        return
    cv = threading.Condition()
    calls = []

    def handler(which):
        def on_output(ref, channel, source, payload, infos):
            with cv:
                calls.append((which, ref, channel, source, payload, infos))
                cv.notify_all()
            if payload['bytes'] == b"raise":
                raise ValueError("py_iof_tool raises in its IOF handler on purpose")
        return on_output

    for line in sys.stdin:
        words = line.split()
        if words[0] == "pull":
            first = tool.iof_pull([{'nspace': nspace, 'rank': 0}], PMIX_FWD_STDOUT_CHANNEL, [], handler("out"))
            second = tool.iof_pull([{'nspace': nspace, 'rank': PMIX_RANK_WILDCARD}], PMIX_FWD_STDERR_CHANNEL, [],
                                   handler("err"))
            answer = (first, second)
        elif words[0] == "wait":
            n = int(words[1])
            with cv:
                cv.wait_for(lambda: len(calls) >= n, WAIT)
                answer = calls[:n]
        elif words[0] == "count":
            with cv:
                answer = len(calls)
        elif words[0] == "deregister":
            answer = tool.iof_deregister(int(words[1]), [])
        elif words[0] == "push":
            answer = (tool.iof_push([{'nspace': nspace, 'rank': 0}], b"in\x00put", []),
                      tool.iof_push([{'nspace': nspace, 'rank': 0}], None, []))
        elif words[0] == "end":
            print(repr(tool.finalize()), flush=True)
            return
        print(repr(answer), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3])
