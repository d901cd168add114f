"""A PMIxTool (tests/python/py_servers_tool.py) connected to two Python hosts
at once, each in a process of its own (tests/python/py_host.py):
attach_to_server, get_servers, set_server and disconnect(server), the
python3-pmix forms of PMIx_tool_attach_to_server, _get_servers, _set_server
and _disconnect (tests/e2e/tool_servers_test.cpp shows the same in C)."""
import ast
import os
import shutil

from pmix import *

import support

TOOL = os.path.join(support.HERE, "py_servers_tool.py")


def test_a_python_tool_with_two_python_hosts():
    tmpdir = support.short_tmpdir()
    hosts = []
    try:
        hosts.append(support.HostProcess(tmpdir, "srvA", "jobA", 2))
        hosts.append(support.HostProcess(tmpdir, "srvB", "jobB", 3))
        a, b = hosts
        code, out, err = support.run([support.PYTHON, TOOL, tmpdir, str(a.pid), str(b.pid)])
        assert code == 0, out + err
        steps = ast.literal_eval(out.strip())
        got = dict(steps)
        assert len(got) == len(steps)
        srv_a, srv_b = {'nspace': "srvA", 'rank': 0}, {'nspace': "srvB", 'rank': 0}

        assert got["servers before init"] == (PMIX_ERR_INIT, [])
        assert got["attach before init"] == (PMIX_ERR_INIT, {}, {})
        assert got["set_server before init"] == PMIX_ERR_INIT
        assert got["disconnect before init"] == PMIX_ERR_INIT

        rc, me = got["init"]
        assert rc == PMIX_SUCCESS and me['nspace'].startswith("srvA.tool.")
        assert got["servers"] == (PMIX_SUCCESS, [srv_a])
        assert got["query"] == (PMIX_SUCCESS, ["jobA"])
        # the tool keeps its identity on every server
        assert got["attach B"] == (PMIX_SUCCESS, me, srv_b)
        assert got["servers with B"] == (PMIX_SUCCESS, [srv_a, srv_b])
        assert got["query with B"] == (PMIX_SUCCESS, ["jobA"])
        assert got["set_server B"] == PMIX_SUCCESS
        assert got["servers B first"] == (PMIX_SUCCESS, [srv_b, srv_a])
        assert got["query B"] == (PMIX_SUCCESS, ["jobB"])
        assert got["jobB size"] == (PMIX_SUCCESS, {'value': 3, 'val_type': PMIX_UINT32})
        assert got["attach A by namespace"] == (PMIX_SUCCESS, me, srv_a)
        assert got["servers unchanged"] == (PMIX_SUCCESS, [srv_b, srv_a])

        assert got["disconnect A"] == PMIX_SUCCESS
        assert got["servers without A"] == (PMIX_SUCCESS, [srv_b])
        assert got["query without A"] == (PMIX_SUCCESS, ["jobB"])
        assert got["disconnect A again"] == PMIX_ERR_NOT_FOUND
        assert got["set_server A"] == PMIX_ERR_UNREACH
        assert got["attach nowhere"] == (PMIX_ERR_UNREACH, {}, {})
        assert got["attach without directives"] == (PMIX_ERR_BAD_PARAM, {}, {})

        assert got["disconnect B"] == PMIX_SUCCESS
        assert got["servers none"] == (PMIX_ERR_UNREACH, [])
        assert got["query none"] == (PMIX_ERR_UNREACH, [])
        assert got["attach A primary"] == (PMIX_SUCCESS, me, srv_a)
        assert got["servers A"] == (PMIX_SUCCESS, [srv_a])
        assert got["query A"] == (PMIX_SUCCESS, ["jobA"])
        assert got["finalize"] == PMIX_SUCCESS
        assert got["servers after finalize"] == (PMIX_ERR_INIT, [])

        # both hosts finalize cleanly once the tool has gone
        for h in hosts:
            assert h.stop() == ("FINALIZE 0", 0)
    finally:
        for h in hosts:
            h.kill()
        shutil.rmtree(tmpdir, ignore_errors=True)
