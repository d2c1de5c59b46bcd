#pragma once

#include <pybind11/pybind11.h>

#include <optional>

#include <livemon/event_handler.h>

namespace livemon::python {

namespace py = pybind11;

// Publisher and TensorboardEventHandler.
void bindTransport(py::module_& m);

// The C++ handler behind a livemon object that is itself a handler (TensorboardEventHandler),
// registered without a detour through Python; std::nullopt for any other object.
std::optional<EventHandler> nativeHandlerFor(py::handle object);

}  // namespace livemon::python
