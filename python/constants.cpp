// The module's PMIX_* constants, from the list python/gen_constants.py makes
// out of our public headers: the compiler evaluates each one. Integers stay
// ints; attribute keys are bytes, as python3-pmix has them.
#include "python/constants.hpp"

#include <pmix.h>
#include <pmix_server.h>
#include <pmix_tool.h>

#include <type_traits>

namespace pmixpy {
namespace {

template <class T>
void add(py::module_& m, const char* name, T value) {
  if constexpr (std::is_enum_v<T>) {
    m.attr(name) = py::int_(static_cast<std::underlying_type_t<T>>(value));
  } else if constexpr (std::is_integral_v<T>) {
    m.attr(name) = py::int_(value);
  } else {
    static_assert(std::is_convertible_v<T, const char*>, "a constant is an integer or a string");
    m.attr(name) = py::bytes(value);
  }
}

}  // namespace

void add_constants(py::module_& m) {
#define PMIX_PY_CONSTANT(name) add(m, #name, name);
#include "python/constants.inc"
#undef PMIX_PY_CONSTANT
}

}  // namespace pmixpy
