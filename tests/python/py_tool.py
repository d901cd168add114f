"""A PMIx tool in Python (PMIxTool): connects to the server of process
<pid> through its rendezvous files in <tmpdir>, queries it, finalizes, and
prints one line: repr((init rc, identity, query rc, results, finalize rc)).
The query has the keys given (default PMIX_QUERY_NAMESPACES) and the
qualifiers given as key=value (string values; default a PMIX_UINT32
"py.qualifier" of 7).

    py_tool.py <pid> <tmpdir> [key | qualifier=value ...]
"""
import sys

from pmix import *


def main(pid, tmpdir, args):
    keys = [a for a in args if "=" not in a]
    qualifiers = [{'key': a.split("=", 1)[0], 'value': a.split("=", 1)[1], 'val_type': PMIX_STRING}
                  for a in args if "=" in a]
    tool = PMIxTool()
    rc, me = tool.init([{'key': PMIX_SERVER_PIDINFO, 'value': pid, 'val_type': PMIX_PID},
                        {'key': PMIX_SERVER_TMPDIR, 'value': tmpdir, 'val_type': PMIX_STRING}])
    if rc != PMIX_SUCCESS:
        print(repr((rc, me, None, None, None)), flush=True)
        return
    qrc, results = tool.query([{'keys': keys or [PMIX_QUERY_NAMESPACES],
                                'qualifiers': qualifiers or [{'key': "py.qualifier", 'value': 7,
                                                              'val_type': PMIX_UINT32}]}])
    frc = tool.finalize()
    print(repr((rc, me, qrc, results, frc)), flush=True)


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2], sys.argv[3:])
