// A tool's calls for several servers (PMIx_tool_attach_to_server,
// _get_servers, _set_server, _disconnect), with python3-pmix 4.2.2's names,
// argument order and return shapes (docs/python.md). Each converts its
// arguments (TypeError / ValueError before any C call), calls the C
// function with the GIL released, and converts the result.
#pragma once

#include <pmix_tool.h>
#include <pybind11/pybind11.h>

namespace pmixpy::tool_calls {

namespace py = pybind11;

// PMIx_tool_attach_to_server(dicts): (rc, this tool's proc, the server's
// proc); both {} on failure.
py::tuple attach_to_server(py::handle dicts);
// PMIx_tool_get_servers: (rc, [proc]), the primary server first.
py::tuple get_servers();
// PMIx_tool_set_server(server, dicts): rc.
pmix_status_t set_server(py::handle server, py::handle dicts);
// PMIx_tool_disconnect(server): rc.
pmix_status_t disconnect(py::handle server);

}  // namespace pmixpy::tool_calls
