#pragma once

#include <pybind11/pybind11.h>

namespace livemon::python {

namespace py = pybind11;

// Aggregation, Event, Stat, WaitCounter, log_event and the STAT_EVENT constants.
void bindCore(py::module_& m);

}  // namespace livemon::python
