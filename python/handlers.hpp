// Python callables registered as the process's event handlers
// (PMIx_Register_event_handler) and forwarded-output handlers
// (PMIx_IOF_pull), in python3-pmix's forms (docs/python.md, "Events" and
// "Forwarded output").
//
// The library calls one C trampoline per kind with the registration's
// reference; the callables are found by that reference. A registration is
// made by one Python thread at a time, and the callable is known before the
// C call starts, so a call that comes before the C call has returned its
// reference (output may come before PMIx_IOF_pull's answer) still finds it.
// References of deregistered handlers are remembered, so a late call for one
// of them is not mistaken for the registration under way. The tables are
// emptied when the library's last user finalizes (references restart at 0
// in the next cycle).
#pragma once

#include <pmix.h>
#include <pybind11/pybind11.h>

#include "python/values.hpp"

namespace pmixpy::handlers {

namespace py = pybind11;

// PMIx_Register_event_handler(codes, info, trampoline): (rc, ref), (rc, -1)
// on failure. The callable gets (ref, status, source, [info], [results])
// and answers (status, [info]) or a status (None: PMIX_SUCCESS); its status
// and results go to the chain's completion callback. One that raises is
// reported and the chain goes on with PMIX_ERROR. Needs the GIL (released
// around the C call).
py::tuple register_event(py::handle codes, py::handle info, py::handle fn);
// PMIx_Deregister_event_handler(ref); the callable is dropped.
pmix_status_t deregister_event(size_t ref);

// PMIx_IOF_pull(procs, directives, channel, trampoline): (rc, ref), (rc, -1)
// on failure. The callable gets (ref, channel, source, {'bytes': ..., 'size':
// ...}, [info]); what it returns is ignored, what it raises is reported.
// Needs the GIL (released around the C call).
py::tuple iof_pull(proc_array& procs, pmix_iof_channel_t channel, info_array& directives, py::handle fn);
// PMIx_IOF_deregister(ref, directives); the callable is dropped.
pmix_status_t iof_deregister(size_t ref, info_array& directives);

// Forgets every callable (the library's last user finalized). Needs the GIL.
void clear();

}  // namespace pmixpy::handlers
