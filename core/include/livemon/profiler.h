#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <livemon/record_function.h>

namespace livemon {

// What the profiler does during a step, as torch.profiler.ProfilerAction. The values only ever
// grow.
enum class ProfilerAction {
  None = 0,           // not recording
  Warmup = 1,         // ranges go to the buffers but are discarded when recording starts
  Record = 2,         // recording
  RecordAndSave = 3,  // recording; the trace is handed to onTraceReady when this step ends
};

// "NONE" "WARMUP" "RECORD" "RECORD_AND_SAVE"
std::string_view profilerActionName(ProfilerAction action) noexcept;

// Thread-safety: a plain value type; operator() is const.
//
// torch.profiler.schedule: skip the first `skipFirst` steps, then cycles of `wait` steps of
// None, `warmup` of Warmup and `active` of Record, the last of which is RecordAndSave.
// `repeat` cycles, or without end when it is 0.
class Schedule {
 public:
  // Throws std::invalid_argument naming the argument: a negative wait, warmup, repeat or
  // skipFirst, or active below 1.
  Schedule(int64_t wait, int64_t warmup, int64_t active, int64_t repeat = 0, int64_t skipFirst = 0);

  // The action for step number `step` (counted from 0); None for a negative step.
  ProfilerAction operator()(int64_t step) const noexcept;

  int64_t wait() const noexcept { return wait_; }
  int64_t warmup() const noexcept { return warmup_; }
  int64_t active() const noexcept { return active_; }
  int64_t repeat() const noexcept { return repeat_; }
  int64_t skipFirst() const noexcept { return skipFirst_; }

 private:
  int64_t wait_;
  int64_t warmup_;
  int64_t active_;
  int64_t repeat_;
  int64_t skipFirst_;
};

// Thread-safety: a plain value type.
//
// One closed range of a trace. `name` points into the process-wide name table, which lives
// as long as the process.
struct TraceRange {
  std::string_view name;
  uint64_t threadId = 0;  // the operating system's thread id (gettid)
  int64_t startNs = 0;    // steady_clock, nanoseconds since its epoch; before Trace::startNs for a
                          // range that was open when recording started
  int64_t endNs = 0;
  int32_t depth = 0;      // ranges open on the thread when this one opened
};

// Thread-safety: a plain value type. A thread with ranges in a trace, by its id (gettid).
struct TraceThread {
  uint64_t id = 0;
  std::string name;
};

// Thread-safety: a plain value type.
//
// The ranges recorded during one cycle's active steps (or from start() to stop() without a
// schedule).
struct Trace {
  int64_t step = 0;      // the step during which recording ended
  int64_t startNs = 0;   // steady_clock, when recording started
  int64_t endNs = 0;     // when it ended
  int64_t pid = 0;
  std::vector<TraceRange> ranges;    // by thread, then start time, enclosing ranges first
  std::vector<TraceThread> threads;  // every thread with a range in `ranges`
  uint64_t droppedRanges = 0;        // ranges lost: a thread filled its 256 blocks of 4096, or memory ran out
};

// Chrome trace-event JSON (the format of chrome://tracing and ui.perfetto.dev): one "X" complete
// event per range with ts and dur in microseconds, pid and tid, and a "thread_name" metadata
// event per thread.
std::string chromeTraceJson(const Trace& trace);

// Writes chromeTraceJson(trace) to `path` atomically (a temporary file renamed into place).
// Throws std::runtime_error naming the path on failure.
void writeChromeTrace(const Trace& trace, const std::filesystem::path& path);

using TraceHandler = std::function<void(const Trace&)>;

// The file a chromeTraceHandler writes: "<worker>.<step>.<milliseconds since the Unix epoch>.pt.trace.json"
// in `dir`, created (with its parents) if missing. An empty `workerName` means "<host>_<pid>", as
// torch.profiler.tensorboard_trace_handler. Returns the path written; throws std::runtime_error
// naming the path on failure.
std::filesystem::path writeChromeTraceToDir(const Trace& trace, const std::filesystem::path& dir,
                                            std::string workerName = {});

// An onTraceReady handler that calls writeChromeTraceToDir for each trace.
TraceHandler chromeTraceHandler(std::filesystem::path dir, std::string workerName = {});

// The action for a step number: a Schedule, or any function (as torch.profiler accepts).
using ScheduleFunction = std::function<ProfilerAction(int64_t step)>;

// Thread-safety: a plain value type.
struct ProfilerOptions {
  // Without a schedule every step records and the trace is handed over at stop(), as
  // torch.profiler.profile without a schedule. An exception thrown by the schedule leaves the
  // constructor, start() or step().
  ScheduleFunction schedule;
  // Called on the thread that calls step() or stop(), when a RecordAndSave step ends and when
  // stop() ends a recording. An exception it throws leaves step() or stop() (the profiler's
  // state has advanced by then), except from the destructor, which swallows it.
  TraceHandler onTraceReady;
  // Time every range into its "range/<name>" Stat while the profiler runs.
  bool rangeStats = true;
  // With a schedule, a range "ProfilerStep#<n>" covers each step, as torch's profiler does.
  bool recordSteps = true;
};

// Not thread-safe: one owner at a time; start(), step(), stop() and the destructor are called from
// one thread (the training loop). Ranges may be recorded on any thread meanwhile. One Profiler runs
// at a time in a process; start() throws std::logic_error while another runs.
//
// Drives the schedule: which steps record ranges, and when a recorded trace is handed over.
class Profiler {
 public:
  explicit Profiler(ProfilerOptions options = {});
  // stop()s a running profiler; an exception from onTraceReady is swallowed here.
  ~Profiler();

  Profiler(const Profiler&) = delete;
  Profiler& operator=(const Profiler&) = delete;

  // Enters the action of the current step (step 0 at first). Does nothing if running.
  void start();
  // Ends the current step and enters the next one's action; a RecordAndSave step's end hands its
  // trace to onTraceReady. Does nothing when not running.
  void step();
  // Ends recording; a recording in progress (Warmup excepted) is handed to onTraceReady. With
  // rangeStats, the range Stats log their open windows (flushRangeStats). Does nothing when not
  // running.
  void stop();

  bool running() const noexcept { return running_; }
  int64_t stepNum() const noexcept { return stepNum_; }
  ProfilerAction currentAction() const noexcept { return action_; }
  const ProfilerOptions& options() const noexcept { return options_; }

 private:
  ProfilerAction actionFor(int64_t step) const;
  void transit(ProfilerAction previous, std::optional<ProfilerAction> next);
  void openStepRange() noexcept;
  void closeStepRange() noexcept;

  ProfilerOptions options_;
  bool running_ = false;
  int64_t stepNum_ = 0;
  ProfilerAction action_ = ProfilerAction::None;
  int64_t recordingSince_ = 0;  // when recording started, in the buffers' time unit
  uint32_t stepRangeMode_ = 0;
  uint32_t stepRangeName_ = 0;
  int64_t stepRangeStart_ = 0;
};

}  // namespace livemon
