#include "py_convert.h"

// CPython's datetime accessors are macros made of C casts.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wold-style-cast"
#include <datetime.h>

#include <algorithm>
#include <cmath>
#include <ctime>
#include <limits>
#include <vector>

namespace livemon::python {
namespace {

using std::chrono::duration_cast;
using std::chrono::microseconds;
using std::chrono::nanoseconds;
using std::chrono::seconds;
using std::chrono::system_clock;

std::string typeName(py::handle value) { return py::str(py::type::handle_of(value).attr("__name__")); }

[[noreturn]] void throwTypeError(const std::string& message) {
  PyErr_SetString(PyExc_TypeError, message.c_str());
  throw py::error_already_set();
}

int64_t toInt64(py::handle value, const std::string& key) {
  int overflow = 0;
  const long long result = PyLong_AsLongLongAndOverflow(value.ptr(), &overflow);
  if (overflow != 0) {
    const std::string message = "data['" + key + "']: " + py::repr(value).cast<std::string>() +
                                " does not fit in a 64-bit integer";
    PyErr_SetString(PyExc_OverflowError, message.c_str());
    throw py::error_already_set();
  }
  if (result == -1 && PyErr_Occurred() != nullptr) throw py::error_already_set();
  return result;
}

}  // namespace

void initConversions() {
  PyDateTime_IMPORT;
  if (PyDateTimeAPI == nullptr) throw py::error_already_set();
}

py::object toDatetime(system_clock::time_point t) {
  const int64_t ns = duration_cast<nanoseconds>(t.time_since_epoch()).count();
  int64_t secs = ns / 1'000'000'000;
  int64_t rest = ns % 1'000'000'000;
  if (rest < 0) {
    --secs;
    rest += 1'000'000'000;
  }
  const std::time_t asTime = static_cast<std::time_t>(secs);
  std::tm local{};
  if (localtime_r(&asTime, &local) == nullptr) {
    PyErr_SetString(PyExc_OverflowError, ("timestamp " + std::to_string(ns) + " ns is out of range").c_str());
    throw py::error_already_set();
  }
  PyObject* result = PyDateTime_FromDateAndTime(local.tm_year + 1900, local.tm_mon + 1, local.tm_mday, local.tm_hour,
                                                local.tm_min, local.tm_sec, static_cast<int>(rest / 1000));
  if (result == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(result);
}

system_clock::time_point fromDatetime(py::handle value, const char* what) {
  if (!PyDateTime_Check(value.ptr())) {
    throwTypeError(std::string(what) + " must be a datetime.datetime, got " + typeName(value));
  }
  std::tm fields{};
  fields.tm_year = PyDateTime_GET_YEAR(value.ptr()) - 1900;
  fields.tm_mon = PyDateTime_GET_MONTH(value.ptr()) - 1;
  fields.tm_mday = PyDateTime_GET_DAY(value.ptr());
  fields.tm_hour = PyDateTime_DATE_GET_HOUR(value.ptr());
  fields.tm_min = PyDateTime_DATE_GET_MINUTE(value.ptr());
  fields.tm_sec = PyDateTime_DATE_GET_SECOND(value.ptr());
  const int64_t micros = PyDateTime_DATE_GET_MICROSECOND(value.ptr());
  const py::object offset = py::reinterpret_borrow<py::object>(value).attr("utcoffset")();
  int64_t secs = 0;
  if (offset.is_none()) {
    fields.tm_isdst = -1;  // local time; let the C library decide whether DST applies
    secs = std::mktime(&fields);
  } else {
    secs = timegm(&fields) - duration_cast<seconds>(fromTimedelta(offset, "utcoffset()")).count();
  }
  return system_clock::time_point(duration_cast<system_clock::duration>(seconds(secs) + microseconds(micros)));
}

microseconds fromTimedelta(py::handle value, const char* what) {
  if (PyDelta_Check(value.ptr())) {
    const int64_t days = PyDateTime_DELTA_GET_DAYS(value.ptr());
    const int64_t secs = PyDateTime_DELTA_GET_SECONDS(value.ptr());
    const int64_t micros = PyDateTime_DELTA_GET_MICROSECONDS(value.ptr());
    return microseconds((days * 86'400 + secs) * 1'000'000 + micros);
  }
  if (PyFloat_Check(value.ptr()) || PyLong_Check(value.ptr())) {
    const double secs = py::reinterpret_borrow<py::float_>(value);
    if (!std::isfinite(secs) || std::abs(secs) > 1e12) {
      PyErr_SetString(PyExc_ValueError, (std::string(what) + " out of range: " + py::repr(value).cast<std::string>()).c_str());
      throw py::error_already_set();
    }
    return microseconds(static_cast<int64_t>(std::trunc(secs * 1e6)));
  }
  throwTypeError(std::string(what) + " must be a datetime.timedelta, got " + typeName(value));
}

py::object toTimedelta(nanoseconds duration) {
  const int64_t micros = duration_cast<microseconds>(duration).count();
  const int64_t days = micros / 86'400'000'000;
  const int64_t rest = micros % 86'400'000'000;
  PyObject* result = PyDelta_FromDSU(static_cast<int>(days), static_cast<int>(rest / 1'000'000),
                                     static_cast<int>(rest % 1'000'000));
  if (result == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::object>(result);
}

DataValue toDataValue(py::handle value, const std::string& key) {
  PyObject* object = value.ptr();
  if (PyBool_Check(object)) return object == Py_True;
  if (PyLong_Check(object)) return toInt64(value, key);
  if (PyFloat_Check(object)) return PyFloat_AS_DOUBLE(object);
  if (PyUnicode_Check(object)) return value.cast<std::string>();
  // numpy scalars and tensors: integers through __index__, the rest through __float__.
  if (PyIndex_Check(object)) {
    PyObject* index = PyNumber_Index(object);
    if (index != nullptr) {
      const auto owned = py::reinterpret_steal<py::object>(index);
      return toInt64(owned, key);
    }
    PyErr_Clear();
  }
  if (Py_TYPE(object)->tp_as_number != nullptr && Py_TYPE(object)->tp_as_number->nb_float != nullptr) {
    const double number = PyFloat_AsDouble(object);
    if (!(number == -1.0 && PyErr_Occurred() != nullptr)) return number;
    PyErr_Clear();
  }
  throwTypeError("data['" + key + "']: a value must be str, float, int or bool, got " + typeName(value));
}

py::object fromDataValue(const DataValue& value) {
  return std::visit(
      [](const auto& v) -> py::object {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, std::string>) {
          return py::str(v);
        } else if constexpr (std::is_same_v<T, double>) {
          return py::float_(v);
        } else if constexpr (std::is_same_v<T, int64_t>) {
          return py::int_(v);
        } else {
          return py::bool_(v);
        }
      },
      value);
}

std::unordered_map<std::string, DataValue> toData(py::handle dict) {
  if (!PyDict_Check(dict.ptr())) {
    // Any other mapping (as torch.monitor takes) is read as the dict it holds.
    const py::object mappingType = py::module_::import("collections.abc").attr("Mapping");
    if (PyObject_IsInstance(dict.ptr(), mappingType.ptr()) == 1) {
      return toData(py::dict(py::reinterpret_borrow<py::object>(dict)));
    }
    if (PyErr_Occurred() != nullptr) throw py::error_already_set();
    throwTypeError("data must be a dict (or another mapping), got " + typeName(dict));
  }
  std::unordered_map<std::string, DataValue> data;
  data.reserve(static_cast<std::size_t>(PyDict_Size(dict.ptr())));
  for (const auto& [key, value] : py::reinterpret_borrow<py::dict>(dict)) {
    if (!PyUnicode_Check(key.ptr())) {
      throwTypeError("data keys must be str, got " + py::repr(key).cast<std::string>() + " (" + typeName(key) + ")");
    }
    std::string name = key.cast<std::string>();
    DataValue converted = toDataValue(value, name);
    data.emplace(std::move(name), std::move(converted));
  }
  return data;
}

py::dict fromData(const std::unordered_map<std::string, DataValue>& data) {
  std::vector<const std::pair<const std::string, DataValue>*> entries;
  entries.reserve(data.size());
  for (const auto& entry : data) entries.push_back(&entry);
  std::sort(entries.begin(), entries.end(), [](const auto* a, const auto* b) { return a->first < b->first; });
  py::dict result;
  for (const auto* entry : entries) result[py::str(entry->first)] = fromDataValue(entry->second);
  return result;
}

Event eventFromObject(py::handle object) {
  if (py::isinstance<Event>(object)) return object.cast<const Event&>();
  if (!py::hasattr(object, "name") || !py::hasattr(object, "timestamp") || !py::hasattr(object, "data")) {
    throwTypeError("an event must be an Event (livemon's or torch.monitor's), got " + typeName(object));
  }
  Event event;
  const py::object name = object.attr("name");
  if (!PyUnicode_Check(name.ptr())) throwTypeError("event name must be str, got " + typeName(name));
  event.name = name.cast<std::string>();
  event.timestamp = fromDatetime(object.attr("timestamp"), "event timestamp");
  event.data = toData(object.attr("data"));
  return event;
}

bool interpreterFinalizing() {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing() != 0;
#else
  return _Py_IsFinalizing() != 0;
#endif
}

}  // namespace livemon::python

#pragma GCC diagnostic pop
