// The host's server module given as Python callables (python3-pmix's form):
// a dict of slot name -> callable, turned into a pmix_server_module_t whose
// functions call them (docs/python.md, "The server module").
//
// The library calls these functions on its own threads. Each one takes the
// GIL, converts the arguments to Python, calls the callable, converts the
// answer back and completes the up-call: the C callback is called (without
// the GIL) before the function returns, or the status is returned as the
// C API allows. A callable that raises is reported through
// sys.unraisablehook and the library gets PMIX_ERROR, so the client's call
// fails and the server goes on.
#pragma once

#include <pmix_server.h>
#include <pybind11/pybind11.h>

namespace pmixpy::server_module {

namespace py = pybind11;

// Sets the slots `map` names in `out` (zeroed by the caller) and keeps the
// callables for the up-calls, unless callables are kept already (the library
// keeps the first module it was given). Returns false when `map` is None or
// empty: no module at all. TypeError for a non-callable, ValueError for a
// name python3-pmix does not know. Needs the GIL.
bool install(py::handle map, pmix_server_module_t& out);

// Forgets the callables (after the last PMIx_server_finalize). Needs the GIL.
void clear();

}  // namespace pmixpy::server_module
