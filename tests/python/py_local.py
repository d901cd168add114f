"""A Python client of a Python host (tests/python/test_local_calls.py): the
calls computed in the process, after init, so that the topology is the one
the host shares. Prints what each returned as one Python literal."""
from pmix import *


def main():
    c = PMIxClient()
    got = {'init': c.init([])[0]}
    got['load_topology'] = c.load_topology()
    got['get_cpuset'] = c.get_cpuset(PMIX_CPUBIND_PROCESS)
    got['compute_distances'] = c.compute_distances(got['get_cpuset'][1], [])
    got['finalize'] = c.finalize([])
    print(repr(got), flush=True)


if __name__ == "__main__":
    main()
