"""The calls computed in the calling process (docs/local-functions.md), in
python3-pmix's forms: get_cpuset, parse_cpuset_string,
generate_cpuset_string, generate_locality_string, get_relative_locality,
load_topology and compute_distances. They need no init; a Python client of
a Python host (tests/python/py_local.py) makes them after init."""
import ast
import os

import pytest

from pmix import *

import support
from support import info

LOCAL = os.path.join(support.HERE, "py_local.py")


def cpu_list(cpus):
    """The CPUs of a cpuset dict's 'cpus' (['hwloc:0-2', '5'])."""
    out = set()
    for part in ",".join(cpus).split(":", 1)[1].split(","):
        first, _, last = part.partition("-")
        out.update(range(int(first), int(last or first) + 1))
    return out


def test_get_cpuset_is_the_process_affinity():
    c = PMIxClient()
    rc, cpuset = c.get_cpuset(PMIX_CPUBIND_PROCESS)
    assert rc == PMIX_SUCCESS and cpuset['source'] == "hwloc"
    assert cpuset['cpus'][0].startswith("hwloc:")
    assert cpu_list(cpuset['cpus']) == os.sched_getaffinity(0)
    rc, thread = c.get_cpuset(PMIX_CPUBIND_THREAD)
    assert rc == PMIX_SUCCESS and cpu_list(thread['cpus']) == os.sched_getaffinity(0)
    assert c.get_cpuset(7) == (PMIX_ERR_BAD_PARAM, {})


def test_cpuset_strings_parse_and_generate():
    c, s = PMIxClient(), PMIxServer()
    assert c.parse_cpuset_string("hwloc:0-2,5") == (PMIX_SUCCESS, {'source': "hwloc", 'cpus': ["hwloc:0-2", "5"]})
    assert c.parse_cpuset_string("HWLOC:3") == (PMIX_SUCCESS, {'source': "hwloc", 'cpus': ["hwloc:3"]})
    assert c.parse_cpuset_string("hwloc:2-1") == (PMIX_ERR_BAD_PARAM, None)
    assert c.parse_cpuset_string("0-2") == (PMIX_ERR_BAD_PARAM, None)
    assert c.parse_cpuset_string("other:0") == (PMIX_ERR_NOT_SUPPORTED, None)
    rc, cpuset = c.parse_cpuset_string("hwloc:0-2,5")
    assert s.generate_cpuset_string(cpuset) == (PMIX_SUCCESS, "hwloc:0-2,5")
    # the other forms a cpuset is given in
    assert s.generate_cpuset_string({'source': "hwloc", 'cpus': ["0-2", "5"]}) == (PMIX_SUCCESS, "hwloc:0-2,5")
    assert s.generate_cpuset_string({'cpus': "hwloc:1,0"}) == (PMIX_SUCCESS, "hwloc:0-1")
    assert s.generate_cpuset_string("hwloc:4") == (PMIX_SUCCESS, "hwloc:4")
    assert s.generate_cpuset_string({'cpus': "x"}) == (PMIX_ERR_BAD_PARAM, None)
    with pytest.raises(TypeError, match="'cpus' missing"):
        s.generate_cpuset_string({'source': "hwloc"})


def test_locality_strings_and_relative_locality():
    c, s = PMIxClient(), PMIxServer()
    cpus = sorted(os.sched_getaffinity(0))
    rc, first = s.generate_locality_string({'source': "hwloc", 'cpus': [str(cpus[0])]})
    assert rc == PMIX_SUCCESS and first.startswith(("SK", "L", "CR", "HT", "NM"))
    assert ":HT" in first  # one hardware thread
    # a process on the same CPU shares every level with it
    rc, same = c.get_relative_locality(first, first)
    assert rc == PMIX_SUCCESS
    assert {PMIX_LOCALITY_SHARE_NODE, PMIX_LOCALITY_SHARE_HWTHREAD, PMIX_LOCALITY_SHARE_CORE} <= set(same)
    assert same == sorted(same, key=[PMIX_LOCALITY_NONLOCAL, PMIX_LOCALITY_SHARE_HWTHREAD, PMIX_LOCALITY_SHARE_CORE,
                                     PMIX_LOCALITY_SHARE_L1CACHE, PMIX_LOCALITY_SHARE_L2CACHE,
                                     PMIX_LOCALITY_SHARE_L3CACHE, PMIX_LOCALITY_SHARE_PACKAGE,
                                     PMIX_LOCALITY_SHARE_NUMA, PMIX_LOCALITY_SHARE_NODE].index)
    if len(cpus) > 1:
        rc, second = s.generate_locality_string({'cpus': [str(cpus[1])]})
        assert rc == PMIX_SUCCESS and second != first
        rc, apart = c.get_relative_locality(first, second)
        assert rc == PMIX_SUCCESS and PMIX_LOCALITY_SHARE_NODE in apart
        assert PMIX_LOCALITY_SHARE_HWTHREAD not in apart
    # no levels: the same node only
    assert c.get_relative_locality("", "") == (PMIX_SUCCESS, [PMIX_LOCALITY_SHARE_NODE])
    assert c.get_relative_locality("XX0", first) == (PMIX_ERR_BAD_PARAM, [])


def test_load_topology_and_compute_distances():
    c = PMIxClient()
    assert c.load_topology() == PMIX_SUCCESS
    rc, everything = c.compute_distances(None, [])
    assert rc in (PMIX_SUCCESS, PMIX_ERR_NOT_FOUND)  # a node may have no device
    for d in everything:
        assert set(d) == {'uuid', 'osname', 'type', 'mindist', 'maxdist'}
        assert d['uuid'] and d['osname'] and d['mindist'] == d['maxdist'] > 0
    # filtered by type, and by the device's OS name
    for kind in (PMIX_DEVTYPE_GPU, PMIX_DEVTYPE_NETWORK, PMIX_DEVTYPE_OPENFABRICS):
        rc, some = c.compute_distances(None, [info(PMIX_DEVICE_TYPE, kind, PMIX_DEVTYPE)])
        assert [d for d in everything if d['type'] == kind] == some
        assert rc == (PMIX_SUCCESS if some else PMIX_ERR_NOT_FOUND)
    for d in everything:
        assert c.compute_distances(None, [info(PMIX_DEVICE_ID, d['osname'], PMIX_STRING)]) == (PMIX_SUCCESS, [d])
    assert c.compute_distances(None, [info(PMIX_DEVICE_ID, "no-such-device", PMIX_STRING)]) == (
        PMIX_ERR_NOT_FOUND, [])
    # from the process's own cpuset, given as get_cpuset gives it: the same
    rc, mine = c.get_cpuset(PMIX_CPUBIND_PROCESS)
    assert c.compute_distances(mine, []) == (rc if everything else PMIX_ERR_NOT_FOUND, everything)
    assert c.compute_distances(None, [info(PMIX_DEVICE_TYPE, "gpu", PMIX_STRING)]) == (PMIX_ERR_TYPE_MISMATCH, [])
    assert c.compute_distances({'cpus': "hwloc:x"}, []) == (PMIX_ERR_BAD_PARAM, [])
    # an object not loaded yet loads its topology first
    assert PMIxClient().compute_distances(None, []) == (rc if everything else PMIX_ERR_NOT_FOUND, everything)


def test_a_python_client_uses_the_topology_its_host_shares(host):
    """A Python client (py_local.py) of a host that shares its topology
    computes, after init, the same device distances as the host's process."""
    assert host.init(directives=[info(PMIX_SERVER_SHARE_TOPOLOGY, True, PMIX_BOOL)]) == PMIX_SUCCESS
    host.register_job("pylocal", 1)
    code, out, err = support.finish(host.launch("pylocal", 0, [support.PYTHON, LOCAL]))
    assert code == 0, out + err
    got = ast.literal_eval(out.strip())
    assert got['init'] == PMIX_SUCCESS and got['load_topology'] == PMIX_SUCCESS
    c = PMIxClient()
    rc, mine = c.get_cpuset(PMIX_CPUBIND_PROCESS)
    assert got['get_cpuset'] == (rc, mine)  # the client inherited this process's affinity
    assert got['compute_distances'] == c.compute_distances(mine, [])
    assert got['finalize'] == PMIX_SUCCESS
