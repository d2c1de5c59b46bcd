#pragma once

#include <pybind11/pybind11.h>

namespace livemon::python {

namespace py = pybind11;

// set_run_config, run_config and clear_run_config (livemon/run_config.h).
void bindRunConfig(py::module_& m);

}  // namespace livemon::python
