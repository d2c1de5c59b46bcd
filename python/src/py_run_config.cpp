// The run's config from Python: a dict of hyperparameters, nested dicts flattened to dotted keys
// as W&B's config and TensorBoard's hparams take them.
#include "py_run_config.h"

#include <string>
#include <utility>

#include <livemon/run_config.h>

#include "py_convert.h"

namespace livemon::python {

namespace {

// Deeper than any config written by hand; a dict that holds itself stops here.
constexpr int kMaxDepth = 32;

[[noreturn]] void raise(PyObject* type, const std::string& message) {
  PyErr_SetString(type, message.c_str());
  throw py::error_already_set();
}

std::string typeOf(py::handle value) { return py::str(py::type::handle_of(value).attr("__name__")); }

DataValue configValue(py::handle value, const std::string& key) {
  PyObject* object = value.ptr();
  if (PyBool_Check(object)) return object == Py_True;
  if (PyLong_Check(object)) {
    int overflow = 0;
    const long long number = PyLong_AsLongLongAndOverflow(object, &overflow);
    if (overflow != 0) raise(PyExc_ValueError, "set_run_config: '" + key + "' does not fit in a 64-bit integer");
    if (number == -1 && PyErr_Occurred() != nullptr) throw py::error_already_set();
    return static_cast<int64_t>(number);
  }
  if (PyFloat_Check(object)) return PyFloat_AS_DOUBLE(object);
  if (PyUnicode_Check(object)) return value.cast<std::string>();
  const bool container = PyList_Check(object) || PyTuple_Check(object) || PySet_Check(object) || value.is_none();
  if (!container && (PyIndex_Check(object) || PyNumber_Check(object))) {
    try {
      return toDataValue(value, key);  // numpy and 0-d torch scalars
    } catch (const py::error_already_set&) {
      PyErr_Clear();
    }
  }
  raise(PyExc_TypeError, "set_run_config: '" + key + "' must be an int, float, str or bool (or a dict of them), got " +
                             typeOf(value));
}

void flatten(py::handle mapping, const std::string& prefix, int depth, RunConfig& out) {
  if (depth > kMaxDepth) raise(PyExc_ValueError, "set_run_config: '" + prefix + "' is nested deeper than 32 dicts");
  for (const auto& [name, value] : mapping.cast<py::dict>()) {
    if (!PyUnicode_Check(name.ptr())) {
      raise(PyExc_TypeError, "set_run_config: key " + py::repr(name).cast<std::string>() + " under '" + prefix +
                                 "' must be a str, got " + typeOf(name));
    }
    const std::string key = prefix.empty() ? name.cast<std::string>() : prefix + "." + name.cast<std::string>();
    if (PyDict_Check(value.ptr())) {
      flatten(value, key, depth + 1, out);
      continue;
    }
    if (!out.emplace(key, configValue(value, key)).second) {
      raise(PyExc_ValueError, "set_run_config: key '" + key + "' is given twice (once as a nested dict)");
    }
  }
}

}  // namespace

void bindRunConfig(py::module_& m) {
  m.def(
      "set_run_config",
      [](const py::object& config) {
        if (!PyDict_Check(config.ptr())) {
          raise(PyExc_TypeError, "set_run_config: the config must be a dict, got " + typeOf(config));
        }
        RunConfig flat;
        flatten(config, "", 0, flat);
        setRunConfig(std::move(flat));
      },
      py::arg("config"), R"doc(
        Sets the run's config, the hyperparameters that tell this run from the others (learning
        rate, batch size, optimizer, seed), and logs it at once as one ``livemon.run_config``
        event whose data are its keys. Nested dicts are flattened to dotted keys:
        ``{"optimizer": {"lr": 3e-4}}`` becomes ``{"optimizer.lr": 3e-4}``. Values are int,
        float, str or bool (numpy scalars too). A Publisher sends the config when it starts, so
        it may be set before or after one is made; a dashboard or ``livemon tail`` that joins
        late still receives it. A second call replaces the config. TypeError for a key that is
        not a str or a value of another type, ValueError for a key ``"step"``, an empty key, a
        key given twice, or a config beyond the limits (1024 keys); each names the key.
      )doc");
  m.def(
      "run_config",
      []() -> py::object {
        const std::optional<RunConfig> config = currentRunConfig();
        if (!config) return py::none();
        py::dict result;
        for (const auto& [key, value] : *config) result[py::str(key)] = fromDataValue(value);
        return result;
      },
      "The config set last with set_run_config, as a flat dict of dotted keys, or None.");
  m.def("clear_run_config", &clearRunConfig, "Back to no config (run_config() returns None).");
}

}  // namespace livemon::python
