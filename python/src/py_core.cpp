// Aggregation, Event, Stat, WaitCounter and log_event: torch.monitor's names over livemon's core.
#include "py_core.h"

#include <pybind11/stl.h>

#include <cctype>
#include <limits>
#include <map>
#include <optional>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <livemon/aggregation.h>
#include <livemon/event.h>
#include <livemon/event_handler.h>
#include <livemon/stat.h>
#include <livemon/step.h>
#include <livemon/system_stats.h>
#include <livemon/wait_counter.h>

#include "py_convert.h"

namespace livemon::python {
namespace {

// The livemon::Stat inside a Python Stat object, or nullptr with a Python error set.
Stat* statOf(PyObject* self) {
  auto* instance = reinterpret_cast<py::detail::instance*>(self);
  if (instance->simple_layout) {
    if (!instance->simple_holder_constructed) {
      PyErr_SetString(PyExc_RuntimeError, "Stat.__init__ has not been called");
      return nullptr;
    }
    return static_cast<Stat*>(instance->simple_value_holder[0]);
  }
  try {
    return &py::handle(self).cast<Stat&>();
  } catch (py::error_already_set& error) {
    error.restore();
  } catch (const std::exception& error) {
    PyErr_SetString(PyExc_RuntimeError, error.what());
  }
  return nullptr;
}

// Whether a Stat.add call other than add(x) names its one argument right: add(v=x) does.
bool addArgumentsValid(Py_ssize_t count, PyObject* keywords) {
  const Py_ssize_t keywordCount = keywords == nullptr ? 0 : PyTuple_GET_SIZE(keywords);
  if (count + keywordCount != 1) {
    PyErr_Format(PyExc_TypeError, "Stat.add() takes exactly one argument (v), %zd given", count + keywordCount);
    return false;
  }
  if (keywordCount == 1 && PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(keywords, 0), "v") != 0) {
    PyErr_Format(PyExc_TypeError, "Stat.add() got an unexpected keyword argument '%U' (its argument is v)",
                 PyTuple_GET_ITEM(keywords, 0));
    return false;
  }
  return true;
}

// Stat.add's error for a value that is not a number: a TypeError naming the argument and its type
// (an error raised by the value's own __float__ or __index__ is left as it is).
PyObject* addFailed(PyObject* value) {
  const PyNumberMethods* number = Py_TYPE(value)->tp_as_number;
  const bool numeric = number != nullptr && (number->nb_float != nullptr || number->nb_index != nullptr);
  if (!numeric && PyErr_ExceptionMatches(PyExc_TypeError) != 0) {
    PyErr_Clear();
    PyErr_Format(PyExc_TypeError, "Stat.add(): v must be a number (anything with __float__), got %s",
                 Py_TYPE(value)->tp_name);
  }
  return nullptr;
}

// Stat.add as a plain METH_FASTCALL C function: the hot path skips pybind11's argument dispatch,
// which costs more than the add itself. METH_KEYWORDS lets it take add(v=x), torch.monitor's name
// for the argument, checked off the fast path; CPython's call of such a method costs 1-3 ns more
// than of a METH_O one (docs/benchmarks.md, "What taking v= cost").
PyObject* statAdd(PyObject* self, PyObject* const* args, Py_ssize_t count, PyObject* keywords) {
  if ((count != 1 || keywords != nullptr) && !addArgumentsValid(count, keywords)) return nullptr;
  PyObject* value = args[0];  // the positional argument, or the value of v=
  double number = 0;
  if (PyFloat_CheckExact(value)) {
    number = PyFloat_AS_DOUBLE(value);
  } else {
    number = PyFloat_AsDouble(value);  // int, numpy scalars, 0-d tensors (anything with __float__)
    if (number == -1.0 && PyErr_Occurred() != nullptr) return addFailed(value);
  }
  Stat* stat = statOf(self);
  if (stat == nullptr) return nullptr;
  stat->add(number);
  Py_RETURN_NONE;
}

PyMethodDef g_statAddMethod = {
    "add", reinterpret_cast<PyCFunction>(reinterpret_cast<void (*)()>(statAdd)), METH_FASTCALL | METH_KEYWORDS,
    "add($self, /, v)\n--\n\n"
    "Adds a sample ``v`` to the open window (positional or as ``v=``). Never blocks and never "
    "raises for a number; a value that is not a number raises TypeError."};

std::string reprOf(const py::handle& object) { return py::repr(object).cast<std::string>(); }

std::string quoted(const std::string& text) { return reprOf(py::str(text)); }

std::unique_ptr<Stat> makeStat(const std::string& name, const std::vector<Aggregation>& aggregations,
                               const py::object& windowSize, int64_t maxSamples) {
  if (name.empty()) throw py::value_error("Stat: name must not be empty");
  const std::string where = "Stat " + quoted(name) + ": ";
  if (aggregations.empty()) throw py::value_error(where + "aggregations must name at least one aggregation");
  // Milliseconds, cut as torch.monitor cuts them.
  const auto window = std::chrono::duration_cast<std::chrono::milliseconds>(fromTimedelta(windowSize, "window_size"));
  if (window < std::chrono::milliseconds(1)) {
    throw py::value_error(where + "window_size must be at least 1 ms, got " + reprOf(windowSize));
  }
  if (maxSamples < 1) throw py::value_error(where + "max_samples must be at least 1, got " + std::to_string(maxSamples));
  return std::make_unique<Stat>(name, aggregations, window, maxSamples);
}

std::string statRepr(const Stat& stat) {
  std::ostringstream out;
  out << "livemon.Stat(name=" << quoted(stat.name()) << ", aggregations=[";
  for (std::size_t i = 0; i < stat.aggregations().size(); ++i) {
    std::string name(aggregationName(stat.aggregations()[i]));
    for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    out << (i ? ", " : "") << "Aggregation." << name;
  }
  out << "], window_size=" << reprOf(toTimedelta(stat.windowSize()));
  if (stat.maxSamples() != std::numeric_limits<int64_t>::max()) out << ", max_samples=" << stat.maxSamples();
  out << ")";
  return out.str();
}

// Not thread-safe: one guard belongs to one thread at a time (each thread takes its own guard()).
//
// What `WaitCounter.guard()` returns: measures one wait per `with` block.
struct WaitCounterGuard {
  WaitCounter counter;
  WaitGuard guard;
};

py::dict totalsDict(const WaitCounterTotals& totals) {
  py::dict result;
  result["active"] = totals.active;
  result["calls"] = totals.calls;
  result["total_time"] = toTimedelta(totals.totalTime);
  result["max_time"] = toTimedelta(totals.maxTime);
  return result;
}

// Not thread-safe: one owner at a time (Python, under the GIL). What enable_system_stats() returns:
// a share of the process's system Stats, let go with the GIL released (the sampler's thread may be
// calling a Python handler, which waits for the GIL, when the last share stops it).
class PySystemStats {
 public:
  explicit PySystemStats(SystemStatsHandle handle) : handle_(std::make_unique<SystemStatsHandle>(std::move(handle))) {}
  ~PySystemStats() { close(); }
  PySystemStats(const PySystemStats&) = delete;
  PySystemStats& operator=(const PySystemStats&) = delete;

  void close() {
    if (handle_) destroyWithoutGil(handle_);
  }
  bool active() const { return handle_ && *handle_; }
  std::string gpuStatus() const { return active() ? handle_->sampler()->gpuStatus() : std::string(); }

 private:
  std::unique_ptr<SystemStatsHandle> handle_;
};

}  // namespace

void bindCore(py::module_& m) {
  py::enum_<Aggregation>(m, "Aggregation", R"doc(
        What a Stat reports for each window. VALUE to MIN are torch.monitor's; STDDEV (population
        standard deviation) and the quantiles P50, P90 and P99 (within 0.39 %) are livemon's.
      )doc")
      .value("VALUE", Aggregation::Value, "the last value added in the window")
      .value("MEAN", Aggregation::Mean, "the arithmetic mean")
      .value("COUNT", Aggregation::Count, "the number of samples")
      .value("SUM", Aggregation::Sum, "the sum of the samples")
      .value("MAX", Aggregation::Max, "the largest sample")
      .value("MIN", Aggregation::Min, "the smallest sample")
      .value("STDDEV", Aggregation::Stddev, "the population standard deviation")
      .value("P50", Aggregation::P50, "the median")
      .value("P90", Aggregation::P90, "the 90th percentile")
      .value("P99", Aggregation::P99, "the 99th percentile")
      .export_values();

  m.attr("STAT_EVENT") = std::string(kStatEventName);
  m.attr("TORCH_STAT_EVENT") = std::string(kTorchStatEventName);

  py::class_<Event>(m, "Event", R"doc(
        A structured, timestamped record: ``Event(name, timestamp, data, step=None)`` with ``data`` a
        dict (any mapping) of str to str, float, int or bool. A bool stays a bool. ``name``,
        ``timestamp``, ``data`` and ``step`` may be assigned, with the same checks (TypeError
        naming the field; the event stays as it was). ``step`` is the training step
        the event belongs to: when it is None and the data has no int ``"step"`` field (which
        states the step itself), ``log_event`` gives handlers the event with the step current
        then (``set_step``). Two
        events are equal when their names, timestamps, steps and data (types included: True !=
        1.0) are.
      )doc")
      .def(py::init([](const std::string& name, const py::handle& timestamp, const py::handle& data,
                       std::optional<int64_t> step) {
             return Event{name, fromDatetime(timestamp, "timestamp"), toData(data), step};
           }),
           py::arg("name"), py::arg("timestamp"), py::arg("data"), py::arg("step") = py::none())
      // Assignable, as in torch.monitor; a value of the wrong type raises TypeError naming the
      // attribute and leaves the event as it was.
      .def_property(
          "name", [](const Event& event) { return event.name; },
          [](Event& event, const py::handle& name) {
            if (!PyUnicode_Check(name.ptr())) {
              throw py::type_error("Event.name must be a str, got " +
                                   py::str(py::type::handle_of(name).attr("__name__")).cast<std::string>());
            }
            event.name = name.cast<std::string>();
          },
          "The event's name.")
      .def_property(
          "timestamp", [](const Event& event) { return toDatetime(event.timestamp); },
          [](Event& event, const py::handle& timestamp) {
            event.timestamp = fromDatetime(timestamp, "Event.timestamp");
          },
          "When the event happened: a naive datetime in local time (an aware one is converted).")
      .def_property(
          "data", [](const Event& event) { return fromData(event.data); },
          [](Event& event, const py::handle& data) { event.data = toData(data); },
          "The event's data: a new dict of str to str, float, int or bool at every read (changing "
          "it does not change the event; assign a whole new dict instead).")
      .def_property(
          "step", [](const Event& event) { return event.step; },
          [](Event& event, const py::handle& step) {
            if (step.is_none()) {
              event.step = std::nullopt;
            } else if (PyLong_Check(step.ptr()) && !PyBool_Check(step.ptr())) {
              event.step = step.cast<int64_t>();
            } else {
              throw py::type_error("Event.step must be an int or None, got " +
                                   py::str(py::type::handle_of(step).attr("__name__")).cast<std::string>());
            }
          },
          "The training step, or None.")
      .def_property_readonly(
          "stated_step", [](const Event& event) { return statedStep(event); },
          "The step the event states: ``step``, else its int data field ``\"step\"``, else None.")
      .def("__eq__",
           [](const Event& a, const py::object& b) -> py::object {
             if (!py::isinstance<Event>(b)) return py::reinterpret_borrow<py::object>(Py_NotImplemented);
             return py::bool_(a == b.cast<const Event&>());
           })
      .def("__repr__", [](const Event& event) {
        return "livemon.Event(name=" + quoted(event.name) + ", timestamp=" + reprOf(toDatetime(event.timestamp)) +
               ", data=" + reprOf(fromData(event.data)) +
               (event.step ? ", step=" + std::to_string(*event.step) : std::string()) + ")";
      });
  // Equal events must hash alike, and Event's data is a dict: unhashable, like the data.
  m.attr("Event").attr("__hash__") = py::none();

  m.def(
      "log_event",
      [](const py::handle& event) {
        if (py::isinstance<Event>(event)) {
          logEvent(event.cast<const Event&>());
        } else {
          logEvent(eventFromObject(event));  // e.g. a torch.monitor.Event
        }
      },
      py::arg("event"), R"doc(
        Hands ``event`` to every registered handler, in registration order, on this thread.
        Never raises because of a handler.
      )doc");

  m.def("set_step", &setStep, py::arg("step"), R"doc(
        Makes ``step`` the training step of this process (every thread). Events logged from now on
        carry it, unless they state their own (an ``int`` data field ``"step"``), and so do Stat
        windows that close from now on: a window carries the step current when it closes. One
        atomic store: cheap enough to call every step.
      )doc");
  m.def("current_step", &currentStep, "The step set last with set_step, or None.");

  py::class_<PySystemStats>(m, "SystemStatsHandle", R"doc(
        A share of the process's system Stats, from ``enable_system_stats()``: they stay on while
        any share is open. A context manager; ``close()`` lets go (a second call does nothing).
      )doc")
      .def("close", &PySystemStats::close, "Lets go: the last share stops the sampler, which logs its open windows.")
      .def("__enter__", [](PySystemStats& self) -> PySystemStats& { return self; }, py::return_value_policy::reference)
      .def("__exit__", [](PySystemStats& self, const py::args&) {
        self.close();
        return false;
      })
      .def_property_readonly("active", &PySystemStats::active, "True until closed.")
      .def_property_readonly("gpu_status", &PySystemStats::gpuStatus,
                             "Why there are GPU Stats or none ('NVML: 2 GPUs', 'NVML not loaded: ...'); '' once closed.");
  m.def(
      "enable_system_stats",
      [](const py::object& windowSize) {
        const auto window = std::chrono::duration_cast<std::chrono::milliseconds>(fromTimedelta(windowSize, "window_size"));
        return std::make_unique<PySystemStats>(enableSystemStats(window));
      },
      py::arg("window_size") = toTimedelta(std::chrono::seconds(5)), R"doc(
        Switches on what the machine is doing as ``system.*`` Stats (the process's CPU and memory,
        the host's memory, each GPU's utilization, memory, temperature and power with NVML),
        sampled every second in windows of ``window_size`` (a timedelta or seconds; at least 1 ms),
        logged like any other Stat, so they leave through every Publisher. The process has one
        sampler: a second call shares the running one. ``Publisher(system_stats=True)`` and
        LIVEMON_SYSTEM_STATS=1 do the same for as long as the Publisher lives. Returns a
        SystemStatsHandle; they stay on until every handle is closed.
      )doc");
  m.def("clear_step", &clearStep, "Back to no step: events logged from now on carry none.");

  py::class_<Stat> stat(m, "Stat", R"doc(
        A windowed statistic: ``Stat(name, aggregations, window_size, max_samples=...)``.

        Windows are aligned to multiples of ``window_size`` (at least 1 ms; milliseconds count) on
        the monotonic clock. When a window that holds samples ends, it is logged as an event
        named ``livemon.Stat`` (STAT_EVENT) with a float per ``"<name>.<aggregation>"`` key. Unlike
        torch.monitor, the window is logged when it ends, without waiting for the next ``add``.
        ``max_samples`` caps a window: the add that reaches it logs the window at once, later adds
        in that window are dropped. Deleting the Stat logs the open window.
      )doc");
  stat.def(py::init(&makeStat), py::arg("name"), py::arg("aggregations"), py::arg("window_size"),
           py::arg("max_samples") = std::numeric_limits<int64_t>::max())
      .def("get", &Stat::get, R"doc(
        The last closed window's value of every configured aggregation (zeros before the first
        window closes).
      )doc")
      .def("flush", &Stat::flush, "Closes the open window now, logging it if it holds samples.")
      .def_property_readonly("count", &Stat::count, "Samples in the open window.")
      .def_property_readonly("name", &Stat::name)
      .def_property_readonly("aggregations", &Stat::aggregations)
      .def_property_readonly("window_size", [](const Stat& s) { return toTimedelta(s.windowSize()); })
      .def_property_readonly("max_samples", &Stat::maxSamples)
      .def_property_readonly("dropped_count", &Stat::droppedCount,
                             "Samples dropped because their window had already reached max_samples.")
      .def("__repr__", &statRepr);
  PyObject* add = PyDescr_NewMethod(reinterpret_cast<PyTypeObject*>(stat.ptr()), &g_statAddMethod);
  if (add == nullptr) throw py::error_already_set();
  stat.attr("add") = py::reinterpret_steal<py::object>(add);

  py::class_<WaitCounterGuard>(m, "WaitCounterGuard", R"doc(
        A context manager measuring the wait of its ``with`` block (from ``WaitCounter.guard()``).
        One guard may be used for any number of blocks, one at a time.
      )doc")
      .def("__enter__",
           [](WaitCounterGuard& self) -> WaitCounterGuard& {
             self.guard = self.counter.start();
             return self;
           },
           py::return_value_policy::reference_internal)
      .def("__exit__", [](WaitCounterGuard& self, const py::args&) {
        self.guard.stop();
        return false;
      });

  py::class_<WaitCounter>(m, "WaitCounter", R"doc(
        Counts waits (data loading, a barrier) under a key: ``with counter.guard(): ...``.
        Totals are process-wide per key, and every wait is added, in milliseconds, to a Stat named
        after the key (count, mean, max, p50, p99 over 1 s windows), so waits reach the dashboard.
        LIVEMON_DISABLE_WAIT_COUNTERS=1 turns counters into no-ops.

        Also named ``_WaitCounter`` (and its guard ``_WaitCounterTracker``), torch.monitor 2.x's
        names: ``_WaitCounter(key).guard()`` works unchanged and feeds the same totals and Stat.
      )doc")
      .def(py::init<std::string>(), py::arg("key"))
      .def(
          "guard", [](const WaitCounter& counter) { return WaitCounterGuard{counter, WaitGuard{}}; },
          "A context manager (WaitCounterGuard) that counts the wait of each ``with`` block.")
      .def("totals", [](const WaitCounter& counter) { return totalsDict(counter.totals()); },
           "{'active', 'calls', 'total_time', 'max_time'} for this key.")
      .def_property_readonly("key", &WaitCounter::key)
      .def_property_readonly("enabled", &WaitCounter::enabled);

  // torch.monitor 2.x's names for the same two types (PyTorch's own tests import both).
  m.attr("_WaitCounter") = m.attr("WaitCounter");
  m.attr("_WaitCounterTracker") = m.attr("WaitCounterGuard");
}

}  // namespace livemon::python
