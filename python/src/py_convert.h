#pragma once

// Conversions between livemon's C++ values and Python objects. Every function here needs the GIL.

#include <pybind11/pybind11.h>

#include <chrono>
#include <memory>
#include <string>
#include <unordered_map>

#include <livemon/event.h>

namespace livemon::python {

namespace py = pybind11;

// Imports the datetime C API; called once when the module loads.
void initConversions();

// A naive datetime in local time (as torch.monitor gives), to the microsecond; the nanoseconds
// below it are cut.
py::object toDatetime(std::chrono::system_clock::time_point t);
// A datetime: naive ones are local time (as datetime.timestamp() takes them), aware ones are
// converted with their UTC offset. Throws TypeError naming `what` for anything else.
std::chrono::system_clock::time_point fromDatetime(py::handle value, const char* what);

// A datetime.timedelta (or a number of seconds) as microseconds. Throws TypeError naming `what`.
std::chrono::microseconds fromTimedelta(py::handle value, const char* what);
py::object toTimedelta(std::chrono::nanoseconds duration);

// str, float, int (fits int64) or bool; objects with __index__ become int, objects with __float__
// (numpy and 0-d torch scalars) float. Throws TypeError or OverflowError naming the key.
DataValue toDataValue(py::handle value, const std::string& key);
py::object fromDataValue(const DataValue& value);

// A dict (or any collections.abc.Mapping) with str keys. Throws TypeError naming the bad key or value.
std::unordered_map<std::string, DataValue> toData(py::handle dict);
// A dict with its keys in sorted order, so reprs and printouts are stable.
py::dict fromData(const std::unordered_map<std::string, DataValue>& data);

// Reads any object with name, timestamp and data attributes (a livemon.Event or a
// torch.monitor.Event) into an Event; TypeError for an object without them.
Event eventFromObject(py::handle object);

// True while the interpreter is being finalized: a thread may not release and retake the GIL then.
bool interpreterFinalizing();

// Destroys `object` with the GIL released: destruction waits for a thread (and for the network or
// the disk, or for handlers that take the GIL themselves) while other Python threads should go on.
// While the interpreter is being finalized the GIL stays.
template <typename T>
void destroyWithoutGil(std::unique_ptr<T>& object) {
  std::unique_ptr<T> doomed = std::move(object);
  if (!interpreterFinalizing()) {
    py::gil_scoped_release release;
    doomed.reset();
  } else {
    doomed.reset();
  }
}

}  // namespace livemon::python
