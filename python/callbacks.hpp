// What every call from the library into Python shares: the server module's
// callables (server_module.hpp) and the handlers a process registers for
// events and forwarded output (handlers.hpp). They run on the library's
// threads, take the GIL for the Python call, and report what Python raised
// instead of letting it escape into C (docs/python.md, "Threads and the
// GIL").
#pragma once

#include <pmix_common.h>
#include <pybind11/pybind11.h>

#include <string>
#include <utility>

namespace pmixpy::callbacks {

namespace py = pybind11;

// Marks the current thread as inside a call from the library into Python
// for its lifetime.
class scope {
 public:
  scope();
  ~scope();
  scope(const scope&) = delete;
  scope& operator=(const scope&) = delete;
};

// True on a thread inside such a call (a library thread: blocking calls
// would wait on themselves).
bool in_callback();

// False once the interpreter exits: the library's threads no longer call
// Python from then on.
bool python_alive();
void shut_down();

// Reports a failure through sys.unraisablehook (the default hook prints the
// traceback to stderr), naming `context`. Needs the GIL.
void report(const std::string& context, py::error_already_set& e);
// The same for an answer that could not be used: a TypeError with `text`.
void report(const std::string& context, const std::string& text);

// A callable's answer: an int status, None (PMIX_SUCCESS), or (status,
// payload). TypeError for anything else.
pmix_status_t status_of(py::handle answer);
std::pair<pmix_status_t, py::object> status_and_payload(py::handle answer);

}  // namespace pmixpy::callbacks
