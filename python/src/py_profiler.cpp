// livemon.profiler's native half: ranges, the Profiler and its traces (python/livemon/profiler.py
// wraps them in torch.profiler's names).
#include "py_profiler.h"

#include <pybind11/functional.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

#include <limits>
#include <memory>
#include <new>
#include <optional>
#include <string>

#include <livemon/profiler.h>
#include <livemon/record_function.h>
#include <livemon/step.h>
#include <livemon/wait_counter.h>

#include "py_convert.h"
#include "range_api.h"

namespace livemon::python {
namespace {

// Not thread-safe: opened and closed on one thread, as a with block is.
//
// One `with record_function(...)` block: the range opens in open() and closes in close().
class PyRange {
 public:
  explicit PyRange(std::string name) : name_(std::move(name)) {}
  void open() {
    range_.reset();
    range_.emplace(name_);
  }
  void close() noexcept { range_.reset(); }
  const std::string& name() const noexcept { return name_; }

 private:
  std::string name_;
  std::optional<RecordFunction> range_;
};

// Thread-safety: a value type; operator() is const.
//
// torch.profiler.schedule as torch 2.x has it: livemon's Schedule plus skip_first_wait, which
// makes the first cycle after skip_first begin at its warmup (torch shifts the step by `wait`).
// Later cycles wait as usual, and `repeat` counts the shortened first cycle.
struct TorchSchedule {
  Schedule schedule;
  bool skipFirstWait = false;

  ProfilerAction operator()(int64_t step) const noexcept {
    if (skipFirstWait && step >= schedule.skipFirst()) {
      // Saturating: a step this far out is past any finite repeat, and signed overflow is undefined.
      const int64_t wait = schedule.wait();
      step = step > std::numeric_limits<int64_t>::max() - wait ? std::numeric_limits<int64_t>::max() : step + wait;
    }
    return schedule(step);
  }
};

// livemon.profiler.ScheduleError: a bad schedule argument. Both a ValueError (livemon's error for
// bad arguments) and an AssertionError (what torch.profiler.schedule raises), so code written
// against either still catches it. Created once with the module and kept for the process.
PyObject* g_scheduleError = nullptr;

[[noreturn]] void throwScheduleError(const std::string& message) {
  PyErr_SetString(g_scheduleError, message.c_str());
  throw py::error_already_set();
}

void createScheduleError(py::module_& m) {
  PyObject* bases = PyTuple_Pack(2, PyExc_ValueError, PyExc_AssertionError);
  if (bases == nullptr) throw py::error_already_set();
  g_scheduleError = PyErr_NewExceptionWithDoc(
      "livemon._livemon.ScheduleError",
      "A bad profiler schedule argument or step: a ValueError and, as torch.profiler raises, an AssertionError.",
      bases, nullptr);
  Py_DECREF(bases);
  if (g_scheduleError == nullptr) throw py::error_already_set();
  m.attr("ScheduleError") = py::handle(g_scheduleError);
}

}  // namespace

namespace {

uint32_t internRangeNameC(const char* data, std::size_t size) noexcept {
  return detail::internRangeName(std::string_view(data, size));
}

int64_t advanceStep() noexcept {
  const int64_t next = currentStep().value_or(0) + 1;
  setStep(next);
  return next;
}

void* openWaitCounter(const char* key, std::size_t size) noexcept {
  try {
    auto counter = std::make_unique<WaitCounter>(std::string(key, size));
    return counter->enabled() ? counter.release() : nullptr;
  } catch (...) {  // out of memory, or an empty key: torch then ignores this backend
    return nullptr;
  }
}

void closeWaitCounter(void* counter) noexcept { delete static_cast<WaitCounter*>(counter); }

void* startWait(void* counter) noexcept {
  try {
    return new WaitGuard(static_cast<WaitCounter*>(counter)->start());
  } catch (...) {
    return nullptr;
  }
}

void stopWait(void* wait) noexcept {
  std::unique_ptr<WaitGuard> guard(static_cast<WaitGuard*>(wait));
  guard->stop();
}

constinit const RangeApi kRangeApi{kRangeApiVersion, &detail::g_rangeMode, &internRangeNameC,
                                   &detail::beginRange, &detail::endRange, &advanceStep,
                                   &openWaitCounter, &closeWaitCounter, &startWait, &stopWait};

}  // namespace

void bindProfiler(py::module_& m) {
  py::enum_<ProfilerAction>(m, "ProfilerAction", "What the profiler does during a step, as torch.profiler's.")
      .value("NONE", ProfilerAction::None)
      .value("WARMUP", ProfilerAction::Warmup)
      .value("RECORD", ProfilerAction::Record)
      .value("RECORD_AND_SAVE", ProfilerAction::RecordAndSave)
      // torch 2.x's: set by torch itself when device collection stops early, never returned by a
      // schedule. livemon records no device activity, so no profile is ever in it; a schedule
      // that returns it gets torch's ValueError (profiler.py checks).
      .value("DEVICE_STOPPED", static_cast<ProfilerAction>(4));

  createScheduleError(m);
  py::class_<TorchSchedule>(m, "_Schedule")
      .def(py::init([](int64_t wait, int64_t warmup, int64_t active, int64_t repeat, int64_t skipFirst,
                       int64_t skipFirstWait) {
             try {
               return TorchSchedule{Schedule(wait, warmup, active, repeat, skipFirst), skipFirstWait != 0};
             } catch (const std::invalid_argument& error) {
               throwScheduleError(error.what());
             }
           }),
           py::kw_only(), py::arg("wait"), py::arg("warmup"), py::arg("active"), py::arg("repeat") = 0,
           py::arg("skip_first") = 0, py::arg("skip_first_wait") = 0)
      .def(
          "__call__",
          [](const TorchSchedule& s, int64_t step) {
            if (step < 0) throwScheduleError("schedule: step must be >= 0, got " + std::to_string(step));
            return s(step);
          },
          py::arg("step"))
      .def_property_readonly("wait", [](const TorchSchedule& s) { return s.schedule.wait(); })
      .def_property_readonly("warmup", [](const TorchSchedule& s) { return s.schedule.warmup(); })
      .def_property_readonly("active", [](const TorchSchedule& s) { return s.schedule.active(); })
      .def_property_readonly("repeat", [](const TorchSchedule& s) { return s.schedule.repeat(); })
      .def_property_readonly("skip_first", [](const TorchSchedule& s) { return s.schedule.skipFirst(); })
      .def_property_readonly("skip_first_wait", [](const TorchSchedule& s) { return int64_t{s.skipFirstWait}; })
      .def("__repr__", [](const TorchSchedule& s) {
        const Schedule& base = s.schedule;
        return "schedule(wait=" + std::to_string(base.wait()) + ", warmup=" + std::to_string(base.warmup()) +
               ", active=" + std::to_string(base.active()) + ", repeat=" + std::to_string(base.repeat()) +
               ", skip_first=" + std::to_string(base.skipFirst()) +
               ", skip_first_wait=" + std::to_string(int{s.skipFirstWait}) + ")";
      });

  py::class_<Trace>(m, "Trace", R"doc(
        The ranges recorded in one profiling cycle. ``ranges`` lists (name, thread_id, start_ns,
        end_ns, depth) tuples on the steady clock; ``threads`` maps thread ids to names.
      )doc")
      .def_readonly("step", &Trace::step)
      .def_readonly("start_ns", &Trace::startNs)
      .def_readonly("end_ns", &Trace::endNs)
      .def_readonly("pid", &Trace::pid)
      .def_readonly("dropped_ranges", &Trace::droppedRanges)
      .def_property_readonly("ranges",
                             [](const Trace& t) {
                               py::list ranges;
                               for (const TraceRange& r : t.ranges) {
                                 ranges.append(py::make_tuple(py::str(r.name.data(), r.name.size()), r.threadId,
                                                              r.startNs, r.endNs, r.depth));
                               }
                               return ranges;
                             })
      .def_property_readonly("threads",
                             [](const Trace& t) {
                               py::dict threads;
                               for (const TraceThread& thread : t.threads) threads[py::int_(thread.id)] = thread.name;
                               return threads;
                             })
      .def("to_chrome_json", &chromeTraceJson, "The trace as Chrome trace-event JSON.")
      .def("save", &writeChromeTrace, py::arg("path"), "Writes the Chrome JSON to path (atomically).")
      .def("save_to_dir", &writeChromeTraceToDir, py::arg("dir"), py::arg("worker_name") = "",
           "Writes <worker>.<step>.<ms>.pt.trace.json into dir (created if missing); returns the path.")
      .def("__len__", [](const Trace& t) { return t.ranges.size(); });

  py::class_<Profiler>(m, "_Profiler")
      .def(py::init([](py::object schedule, py::object onTraceReady, bool rangeStats, bool recordSteps) {
             ProfilerOptions options;
             if (!schedule.is_none()) {
               if (py::isinstance<TorchSchedule>(schedule)) {
                 options.schedule = schedule.cast<TorchSchedule>();  // no Python call per step
               } else {
                 options.schedule = [schedule](int64_t step) {
                   py::gil_scoped_acquire gil;
                   return schedule(step).cast<ProfilerAction>();
                 };
               }
             }
             if (!onTraceReady.is_none()) {
               options.onTraceReady = [onTraceReady](const Trace& trace) {
                 py::gil_scoped_acquire gil;
                 onTraceReady(trace);
               };
             }
             options.rangeStats = rangeStats;
             options.recordSteps = recordSteps;
             return std::make_unique<Profiler>(std::move(options));
           }),
           py::arg("schedule"), py::arg("on_trace_ready"), py::arg("range_stats"), py::arg("record_steps"))
      .def("start",
           [](Profiler& p) {
             try {
               p.start();
             } catch (const std::logic_error& error) {
               throw py::value_error(error.what());  // another profiler runs
             }
           })
      .def("step", &Profiler::step)
      .def("stop", &Profiler::stop)
      .def_property_readonly("running", &Profiler::running)
      .def_property_readonly("step_num", &Profiler::stepNum)
      .def_property_readonly("current_action", &Profiler::currentAction);

  py::class_<PyRange>(m, "_Range")
      .def(py::init<std::string>(), py::arg("name"))
      .def("open", &PyRange::open)
      .def("close", &PyRange::close)
      .def_property_readonly("name", &PyRange::name);

  m.def(
      "set_range_stats_enabled",
      [](bool enabled, const py::object& window) {
        const auto ms = window.is_none() ? std::chrono::milliseconds(1000)
                                         : std::chrono::duration_cast<std::chrono::milliseconds>(
                                               fromTimedelta(window, "window"));
        if (ms < std::chrono::milliseconds(1)) {
          throw py::value_error("set_range_stats_enabled: window must be at least 1 ms, got " +
                                std::to_string(ms.count()) + " ms");
        }
        // A new window logs the open ones, which may wait for a Python handler on another thread.
        py::gil_scoped_release release;
        setRangeStatsEnabled(enabled, ms);
      },
      py::arg("enabled"), py::arg("window") = py::none(), R"doc(
        Times every range into a Stat "range/<name>" (count, mean, p50, p99, max, in ms) while
        enabled, with or without a profiler. Enabling with another ``window`` (a timedelta,
        default 1 s) applies it to every range Stat, those already created included: their open
        windows are logged now. Open windows are also logged when a profile stops, when a
        Publisher closes and at interpreter exit (before the Python handlers are removed).
      )doc");
  m.def("range_stats_enabled", &rangeStatsEnabled);
  m.def(
      "flush_range_stats",
      [] {
        py::gil_scoped_release release;  // the handlers it calls may run on other threads too
        flushRangeStats();
      },
      "Closes the open window of every range Stat now.");
  m.def(
      "_flush_range_stats_at_exit",
      [] {
        py::gil_scoped_release release;
        flushRangeStats();
      },
      R"doc(
        Run at interpreter exit (registered with atexit): logs the range Stats' open windows while
        the Python handlers and Publishers are still there. The C++ exit hook comes after
        finalization, when livemon no longer calls into Python.
      )doc");
  // Registered after _shutdown (bindHandlers runs first), so it runs before it: atexit runs the
  // last registered first.
  py::module_::import("atexit").attr("register")(m.attr("_flush_range_stats_at_exit"));
  m.def("set_thread_name", &setThreadName, py::arg("name"), "Names the calling thread in traces.");
  // For livemon._torch_ops (see range_api.h); const_cast only because PyCapsule stores void*.
  m.attr("_range_api") = py::capsule(const_cast<RangeApi*>(&kRangeApi), kRangeApiCapsuleName);
}

}  // namespace livemon::python
