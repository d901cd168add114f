#include "python/callbacks.hpp"

#include <atomic>

namespace pmixpy::callbacks {
namespace {

std::atomic<bool> alive{true};
thread_local int depth = 0;

std::string type_name(py::handle obj) { return py::str(py::type::handle_of(obj).attr("__name__")); }

}  // namespace

scope::scope() { ++depth; }
scope::~scope() { --depth; }

bool in_callback() { return depth > 0; }

bool python_alive() { return alive.load(std::memory_order_acquire); }

void shut_down() { alive.store(false, std::memory_order_release); }

void report(const std::string& context, py::error_already_set& e) {
  e.discard_as_unraisable(context.c_str());
}

void report(const std::string& context, const std::string& text) {
  PyErr_SetString(PyExc_TypeError, text.c_str());
  py::error_already_set e;
  report(context, e);
}

pmix_status_t status_of(py::handle answer) {
  if (answer.is_none()) return PMIX_SUCCESS;
  if (!PyLong_Check(answer.ptr()))
    throw py::type_error("expected a PMIx status (int), got " + type_name(answer));
  return answer.cast<pmix_status_t>();
}

std::pair<pmix_status_t, py::object> status_and_payload(py::handle answer) {
  if ((py::isinstance<py::tuple>(answer) || py::isinstance<py::list>(answer)) && py::len(answer) == 2) {
    auto seq = py::reinterpret_borrow<py::sequence>(answer);
    return {status_of(seq[0]), seq[1]};
  }
  return {status_of(answer), py::none()};
}

}  // namespace pmixpy::callbacks
