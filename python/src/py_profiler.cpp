// livemon.profiler's native half: ranges, the Profiler and its traces (python/livemon/profiler.py
// wraps them in torch.profiler's names).
#include "py_profiler.h"

#include <pybind11/functional.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>

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
      .value("RECORD_AND_SAVE", ProfilerAction::RecordAndSave);

  py::class_<Schedule>(m, "_Schedule")
      .def(py::init([](int64_t wait, int64_t warmup, int64_t active, int64_t repeat, int64_t skipFirst) {
             try {
               return Schedule(wait, warmup, active, repeat, skipFirst);
             } catch (const std::invalid_argument& error) {
               throw py::value_error(error.what());
             }
           }),
           py::kw_only(), py::arg("wait"), py::arg("warmup"), py::arg("active"), py::arg("repeat") = 0,
           py::arg("skip_first") = 0)
      .def("__call__", [](const Schedule& s, int64_t step) { return s(step); }, py::arg("step"))
      .def_property_readonly("wait", &Schedule::wait)
      .def_property_readonly("warmup", &Schedule::warmup)
      .def_property_readonly("active", &Schedule::active)
      .def_property_readonly("repeat", &Schedule::repeat)
      .def_property_readonly("skip_first", &Schedule::skipFirst)
      .def("__repr__", [](const Schedule& s) {
        return "schedule(wait=" + std::to_string(s.wait()) + ", warmup=" + std::to_string(s.warmup()) +
               ", active=" + std::to_string(s.active()) + ", repeat=" + std::to_string(s.repeat()) +
               ", skip_first=" + std::to_string(s.skipFirst()) + ")";
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
               if (py::isinstance<Schedule>(schedule)) {
                 options.schedule = schedule.cast<Schedule>();  // no Python call per step
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
