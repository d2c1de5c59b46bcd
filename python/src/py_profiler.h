#pragma once

#include <pybind11/pybind11.h>

namespace livemon::python {

namespace py = pybind11;

// ProfilerAction, ScheduleError, Trace, the schedule, the profiler and ranges, for livemon.profiler.
void bindProfiler(py::module_& m);

}  // namespace livemon::python
