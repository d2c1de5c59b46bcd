// The extension module behind `import livemon` (python/livemon/__init__.py re-exports it).
#include <pybind11/pybind11.h>

#include "py_convert.h"
#include "py_core.h"
#include "py_handlers.h"
#include "py_profiler.h"
#include "py_run_config.h"
#include "py_transport.h"

PYBIND11_MODULE(_livemon, m) {
  m.doc() = "livemon: live monitoring for training jobs, with torch.monitor's API.";
  m.attr("__version__") = LIVEMON_VERSION;
  livemon::python::initConversions();
  livemon::python::bindCore(m);
  livemon::python::bindRunConfig(m);
  livemon::python::bindHandlers(m);
  livemon::python::bindTransport(m);
  livemon::python::bindProfiler(m);
}
