"""PMIxTool (tests/python/py_tool.py, its own process) against a Python host
with tool support: init, query, finalize."""
import ast
import os
import sys

from pmix import *

import support
from support import info

TOOL = os.path.join(support.HERE, "py_tool.py")
TOOL_SUPPORT = [info(PMIX_SERVER_TOOL_SUPPORT, True, PMIX_BOOL)]


def run_tool(host, *keys):
    code, out, err = support.run([support.PYTHON, TOOL, str(os.getpid()), host.tmpdir] + list(keys))
    assert code == 0, out + err
    return ast.literal_eval(out.strip())


def test_a_python_tool_queries_the_python_host(host):
    record = support.Record()

    def query(args, queries):
        record.add('query', args, queries)
        return PMIX_SUCCESS, [info(PMIX_QUERY_NAMESPACES, "pyjob,other", PMIX_STRING),
                              info("py.raw", b"\x00tool\x00", PMIX_BYTE_OBJECT)]

    def toolconnected(args):
        record.add('toolconnected', args)
        return PMIX_SUCCESS, {'nspace': "pytool", 'rank': 7}

    assert host.init({'query': query, 'toolconnected': toolconnected}, TOOL_SUPPORT) == PMIX_SUCCESS
    rc, me, qrc, results, frc = run_tool(host)
    assert rc == PMIX_SUCCESS
    assert me == {'nspace': "pytool", 'rank': 7}  # the identity toolconnected gave
    assert qrc == PMIX_SUCCESS
    assert [(r['key'], r['value'], r['val_type']) for r in results] == [
        ("pmix.qry.ns", "pyjob,other", PMIX_STRING),
        ("py.raw", {'bytes': b"\x00tool\x00", 'size': 6}, PMIX_BYTE_OBJECT)]
    assert frc == PMIX_SUCCESS
    (args, queries), = record.of('query')
    assert args['source'] == {'nspace': "pytool", 'rank': 7}
    assert queries == args['queries']
    assert len(queries) == 1 and queries[0]['keys'] == ["pmix.qry.ns"]
    assert [(q['key'], q['value']) for q in queries[0]['qualifiers']] == [("py.qualifier", 7)]
    assert len(record.of('toolconnected')) == 1


def test_without_a_query_callable_a_query_is_not_supported(host):
    assert host.init({}, TOOL_SUPPORT) == PMIX_SUCCESS
    rc, me, qrc, results, frc = run_tool(host)
    assert rc == PMIX_SUCCESS and me['nspace'] != ""  # the server named the tool itself
    assert (qrc, results, frc) == (PMIX_ERR_NOT_SUPPORTED, [], PMIX_SUCCESS)


def test_a_query_callable_that_raises_gives_the_tool_an_error(host, monkeypatch):
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: reported.append(u))

    def query(args, queries):
        raise RuntimeError("no answers today")

    assert host.init({'query': query}, TOOL_SUPPORT) == PMIX_SUCCESS
    rc, me, qrc, results, frc = run_tool(host)
    assert rc == PMIX_SUCCESS
    assert (qrc, results, frc) == (PMIX_ERROR, [], PMIX_SUCCESS)
    assert len(reported) == 1 and reported[0].exc_type is RuntimeError
    # the server still answers the next tool
    rc, me, qrc, results, frc = run_tool(host)
    assert rc == PMIX_SUCCESS and qrc == PMIX_ERROR and frc == PMIX_SUCCESS


def test_query_error_status_without_results_reaches_the_tool(host):
    assert host.init({'query': lambda args, queries: (PMIX_ERR_NOT_FOUND, [])}, TOOL_SUPPORT) == PMIX_SUCCESS
    rc, me, qrc, results, frc = run_tool(host)
    assert (rc, qrc, results, frc) == (PMIX_SUCCESS, PMIX_ERR_NOT_FOUND, [], PMIX_SUCCESS)


def test_a_toolconnected_callable_that_raises_refuses_the_tool(host, monkeypatch):
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: reported.append(u))

    def toolconnected(args):
        raise PermissionError("no tools here")

    assert host.init({'toolconnected': toolconnected}, TOOL_SUPPORT) == PMIX_SUCCESS
    rc, me, qrc, results, frc = run_tool(host)
    assert rc != PMIX_SUCCESS and me == {}
    assert len(reported) == 1 and reported[0].exc_type is PermissionError
