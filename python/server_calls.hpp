// A host's server calls beyond its jobs and clients: node resources,
// process sets, inventory, attribute registration, direct modex for another
// node, application set-up. Each has python3-pmix 4.2.2's name, argument
// order and return shape (docs/python.md); each converts its arguments
// (TypeError / ValueError before any C call), calls the C function with the
// GIL released (waiting for its callback where the C call has one), and
// converts the result.
#pragma once

#include <pmix_server.h>
#include <pybind11/pybind11.h>

namespace pmixpy::server_calls {

namespace py = pybind11;

// PMIx_server_register_resources / _deregister_resources (blocking): rc.
pmix_status_t register_resources(py::handle directives);
pmix_status_t deregister_resources(py::handle directives);
// PMIx_server_define_process_set(members, name) / _delete_process_set: rc.
pmix_status_t define_process_set(py::handle members, py::handle name);
pmix_status_t delete_process_set(py::handle name);
// PMIx_server_collect_inventory: (rc, [info]).
py::tuple collect_inventory(py::handle directives);
// PMIx_server_deliver_inventory (blocking): rc.
pmix_status_t deliver_inventory(py::handle info, py::handle directives);
// PMIx_Register_attributes(function, [attribute names] or None): rc.
pmix_status_t register_attributes(py::handle function, py::handle attrs);
// PMIx_server_dmodex_request: (rc, (bytes, size)), (rc, (None, 0)) on
// failure; a dict `dataout` also gets 'bytes' and 'size'.
py::tuple dmodex_request(py::handle proc, py::handle dataout);
// PMIx_server_setup_application: (rc, [info]).
py::tuple setup_application(py::handle nspace, py::handle dicts);
// PMIx_server_setup_local_support (blocking): rc.
pmix_status_t setup_local_support(py::handle nspace, py::handle dicts);

}  // namespace pmixpy::server_calls
