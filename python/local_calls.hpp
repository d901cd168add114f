// The calls computed in the calling process (docs/local-functions.md):
// cpusets, topology, locality strings, device distances, with python3-pmix
// 4.2.2's names, arguments and return shapes where it has them
// (docs/python.md).
//
// A cpuset's Python form is python3-pmix's get_cpuset answer:
//   {'source': str, 'cpus': [str]}
// where ','.join(cpus) is the cpuset string ("hwloc:0-3,7" gives
// ['hwloc:0-3', '7']). Given, 'cpus' may also be that string itself (as
// python3-pmix's compute_distances takes it), or a CPU list without the
// "<source>:" prefix, which 'source' (default "hwloc") then supplies; a
// plain str is taken as the cpuset string.
#pragma once

#include <pmix.h>
#include <pybind11/pybind11.h>

namespace pmixpy::local_calls {

namespace py = pybind11;

// PMIx_Load_topology into `topo` (released first if it held one): rc.
pmix_status_t load_topology(pmix_topology_t& topo);
// PMIx_Get_relative_locality: (rc, [PMIX_LOCALITY_* bits set]), one
// PMIX_LOCALITY_NONLOCAL when none is; [] on failure.
py::tuple get_relative_locality(py::handle locality1, py::handle locality2);
// PMIx_Parse_cpuset_string: (rc, cpuset dict), None on failure.
py::tuple parse_cpuset_string(py::handle text);
// PMIx_Get_cpuset(ref): (rc, cpuset dict), {} on failure.
py::tuple get_cpuset(int ref);
// PMIx_Compute_distances from the cpuset (None: this process's binding) to
// the devices of `topo` (loaded first if empty): (rc, [{'uuid', 'osname',
// 'type', 'mindist', 'maxdist'}]).
py::tuple compute_distances(pmix_topology_t& topo, py::handle cpuset, py::handle dicts);
// PMIx_server_generate_cpuset_string: (rc, str), None on failure.
py::tuple generate_cpuset_string(py::handle cpuset);
// PMIx_server_generate_locality_string: (rc, str), None on failure or for a
// cpuset without locality (an unbound one).
py::tuple generate_locality_string(py::handle cpuset);

}  // namespace pmixpy::local_calls
