#pragma once

#include <pybind11/pybind11.h>

namespace livemon::python {

namespace py = pybind11;

// register_event_handler, unregister_event_handler, EventHandlerHandle and the exit hook.
void bindHandlers(py::module_& m);

}  // namespace livemon::python
