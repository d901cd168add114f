#pragma once

#include <pybind11/pybind11.h>

namespace pmixpy {

namespace py = pybind11;

// Adds every PMIX_* constant of our public headers to the module.
void add_constants(py::module_& m);

}  // namespace pmixpy
