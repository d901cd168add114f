// The calls of a client (and of the tool and server classes, which derive
// from PMIxClient) beyond init, put/get, fence and query: publish/lookup,
// spawn, connect, groups, events, IOF, log, credentials, job control,
// allocation, monitoring, peers and nodes. Each has python3-pmix 4.2.2's
// name, argument order, dict forms and return shape (docs/python.md); each
// converts its arguments (raising TypeError / ValueError before any C call),
// calls one C function with the GIL released, and converts the result.
#pragma once

#include <pmix.h>
#include <pybind11/pybind11.h>

namespace pmixpy::calls {

namespace py = pybind11;

// This process's identity once PMIx_Init or PMIx_tool_init succeeded (rank
// PMIX_RANK_UNDEF before): the default proc of several calls.
pmix_proc_t& me();

pmix_status_t publish(py::handle dicts);
pmix_status_t unpublish(py::handle keys, py::handle dicts);
py::tuple lookup(py::handle data, py::handle dicts);
py::tuple spawn(py::handle job_info, py::handle apps);
pmix_status_t connect(py::handle peers, py::handle dicts);
pmix_status_t disconnect(py::handle peers, py::handle dicts);
py::tuple resolve_peers(py::handle node, py::handle nspace);
py::tuple resolve_nodes(py::handle nspace);
pmix_status_t log(py::handle data, py::handle directives);
py::tuple allocation_request(int directive, py::handle dicts);
py::tuple job_control(py::handle targets, py::handle directives);
// OpenPMIx 6.0's PMIx_Session_control ((rc, [infos]) the host answered)
// and PMIx_Resource_block (units: [{'type': ..., 'count': ...}]).
py::tuple session_control(unsigned long session, py::handle directives);
pmix_status_t resource_block(int directive, py::handle block, py::handle units, py::handle info);
py::tuple monitor(py::handle monitor, int code, py::handle directives);
py::tuple get_credential(py::handle dicts);
py::tuple validate_credential(py::handle credential, py::handle dicts);
py::tuple group_construct(py::handle group, py::handle peers, py::handle dicts);
py::tuple group_invite(py::handle group, py::handle peers, py::handle dicts);
py::tuple group_join(py::handle group, py::handle leader, int opt, py::handle dicts);
pmix_status_t group_leave(py::handle group, py::handle dicts);
pmix_status_t group_destruct(py::handle group, py::handle dicts);
pmix_status_t notify_event(int status, py::handle source, int range, py::handle dicts);
py::tuple iof_pull(py::handle procs, int channel, py::handle directives, py::handle handler);
pmix_status_t iof_deregister(long long ref, py::handle directives);
pmix_status_t iof_push(py::handle targets, py::handle data, py::handle directives);
// The server's PMIx_server_IOF_deliver.
pmix_status_t iof_deliver(py::handle source, int channel, py::handle data, py::handle directives);

}  // namespace pmixpy::calls
