#pragma once

#include <pybind11/pybind11.h>

#include <optional>

#include <livemon/event_handler.h>

namespace livemon::python {

namespace py = pybind11;

// register_event_handler, unregister_event_handler, EventHandlerHandle and the exit hook.
void bindHandlers(py::module_& m);

// The C++ handler behind a livemon object that is itself a handler (TensorboardEventHandler),
// registered without a detour through Python. Defined with those classes.
std::optional<EventHandler> nativeHandlerFor(py::handle object);

}  // namespace livemon::python
