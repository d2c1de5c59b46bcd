// The Profiler's schedule and state machine (torch.profiler's semantics) and Chrome trace output.
#include <livemon/profiler.h>

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <system_error>

#include <livemon/detail/exclusive_file.h>
#include <livemon/detail/json_writer.h>

#include "range_registry.h"

namespace livemon {

std::string_view profilerActionName(ProfilerAction action) noexcept {
  switch (action) {
    case ProfilerAction::None: return "NONE";
    case ProfilerAction::Warmup: return "WARMUP";
    case ProfilerAction::Record: return "RECORD";
    case ProfilerAction::RecordAndSave: return "RECORD_AND_SAVE";
  }
  return "UNKNOWN";
}

namespace {

int64_t checkedNonNegative(int64_t value, const char* argument) {
  if (value < 0) {
    throw std::invalid_argument(std::string("Schedule: ") + argument + " must not be negative, got " +
                                std::to_string(value));
  }
  return value;
}

}  // namespace

Schedule::Schedule(int64_t wait, int64_t warmup, int64_t active, int64_t repeat, int64_t skipFirst)
    : wait_(checkedNonNegative(wait, "wait")),
      warmup_(checkedNonNegative(warmup, "warmup")),
      active_(active),
      repeat_(checkedNonNegative(repeat, "repeat")),
      skipFirst_(checkedNonNegative(skipFirst, "skip_first")) {
  if (active < 1) throw std::invalid_argument("Schedule: active must be at least 1, got " + std::to_string(active));
  constexpr int64_t kLimit = int64_t{1} << 60;  // keeps wait + warmup + active and repeat * cycle exact
  if (wait > kLimit || warmup > kLimit || active > kLimit) {
    throw std::invalid_argument("Schedule: wait, warmup and active must each be at most 2^60");
  }
}

ProfilerAction Schedule::operator()(int64_t step) const noexcept {
  if (step < skipFirst_) return ProfilerAction::None;
  const int64_t sinceSkip = step - skipFirst_;
  const int64_t cycle = wait_ + warmup_ + active_;
  if (repeat_ > 0 && sinceSkip / cycle >= repeat_) return ProfilerAction::None;
  const int64_t inCycle = sinceSkip % cycle;
  if (inCycle < wait_) return ProfilerAction::None;
  if (inCycle < wait_ + warmup_) return ProfilerAction::Warmup;
  return inCycle < cycle - 1 ? ProfilerAction::Record : ProfilerAction::RecordAndSave;
}

// ---------------------------------------------------------------------------------------------
// Chrome trace output

namespace {

// `ns` as microseconds with three decimals ("1000.500"), in `text`, which it returns.
std::string_view microsecondsText(std::string& text, int64_t ns) {
  text.clear();
  if (ns < 0) {
    text += '-';
    ns = -ns;
  }
  char digits[32];
  const int n = std::snprintf(digits, sizeof digits, "%lld.%03lld", static_cast<long long>(ns / 1000),
                              static_cast<long long>(ns % 1000));
  text.append(digits, static_cast<std::size_t>(n));
  return text;
}

std::string hostName() {
  char name[256] = {};
  if (gethostname(name, sizeof name - 1) != 0 || name[0] == '\0') return "localhost";
  return name;
}

}  // namespace

std::string chromeTraceJson(const Trace& trace) {
  detail::JsonWriter json;
  json.reserve(128 + trace.ranges.size() * 110 + trace.threads.size() * 100);
  json.beginObject().key("displayTimeUnit").string("ms");
  json.key("otherData").beginObject().key("producer").string("livemon").key("step").integer(trace.step);
  json.key("dropped_ranges").integer(trace.droppedRanges).endObject();
  json.key("traceEvents").beginArray(detail::JsonWriter::ArrayLayout::OnePerLine);
  json.beginObject().key("ph").string("M").key("name").string("process_name").key("pid").integer(trace.pid);
  json.key("tid").integer(0).key("args").beginObject().key("name").string("livemon").endObject().endObject();
  for (const TraceThread& thread : trace.threads) {
    json.beginObject().key("ph").string("M").key("name").string("thread_name").key("pid").integer(trace.pid);
    json.key("tid").integer(thread.id).key("args").beginObject().key("name");
    json.string(thread.name.empty() ? "thread " + std::to_string(thread.id) : thread.name).endObject().endObject();
  }
  std::string microseconds;
  for (const TraceRange& range : trace.ranges) {
    json.beginObject().key("ph").string("X").key("cat").string("cpu").key("name").string(range.name);
    json.key("pid").integer(trace.pid).key("tid").integer(range.threadId);
    json.key("ts").rawNumber(microsecondsText(microseconds, range.startNs));
    json.key("dur").rawNumber(microsecondsText(microseconds, range.endNs - range.startNs));
    json.key("args").beginObject().key("depth").integer(range.depth).endObject().endObject();
  }
  json.endArray().endObject();
  return json.take() + '\n';
}

void writeChromeTrace(const Trace& trace, const std::filesystem::path& path) {
  const std::string json = chromeTraceJson(trace);
  // A file of its own beside `path`, under a name no one can guess, renamed into place: a reader
  // never sees half a trace, and nothing placed at a predictable name is written through.
  std::string temporary;
  const int fd = detail::createTemporaryBeside(path.string(), 0666, temporary);
  if (fd < 0) throw std::runtime_error("cannot create trace file " + path.string() + ": " + std::strerror(errno));
  auto fail = [&](const std::string& what, int error) {
    ::unlink(temporary.c_str());
    throw std::runtime_error(what + ": " + std::strerror(error));
  };
  for (std::size_t done = 0; done < json.size();) {
    const ssize_t n = ::write(fd, json.data() + done, json.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : ENOSPC;
      ::close(fd);
      fail("cannot write trace file " + path.string(), error);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::close(fd) != 0) fail("cannot write trace file " + path.string(), errno);
  if (::rename(temporary.c_str(), path.c_str()) != 0) {
    fail("cannot rename " + temporary + " to " + path.string(), errno);
  }
}

std::filesystem::path writeChromeTraceToDir(const Trace& trace, const std::filesystem::path& dir,
                                            std::string workerName) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error || !std::filesystem::is_directory(dir)) {
    throw std::runtime_error("cannot create trace directory " + dir.string() +
                             (error ? ": " + error.message() : std::string(": not a directory")));
  }
  if (workerName.empty()) workerName = hostName() + "_" + std::to_string(getpid());
  const auto wallMs = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch())
                          .count();
  const std::filesystem::path path =
      dir / (workerName + "." + std::to_string(trace.step) + "." + std::to_string(wallMs) + ".pt.trace.json");
  writeChromeTrace(trace, path);
  return path;
}

TraceHandler chromeTraceHandler(std::filesystem::path dir, std::string workerName) {
  return [dir = std::move(dir), workerName = std::move(workerName)](const Trace& trace) {
    writeChromeTraceToDir(trace, dir, workerName);
  };
}

// ---------------------------------------------------------------------------------------------
// Profiler

Profiler::Profiler(ProfilerOptions options) : options_(std::move(options)) { action_ = actionFor(0); }

Profiler::~Profiler() {
  try {
    stop();
  } catch (...) {
    // onTraceReady failed; a destructor has nowhere to report it.
  }
  if (running_) {
    running_ = false;
    detail::setTraceBuffering(false);
    detail::setProfilerRangeStats(false);
    detail::releaseProfilerSlot(this);
  }
}

ProfilerAction Profiler::actionFor(int64_t step) const {
  return options_.schedule ? options_.schedule(step) : ProfilerAction::Record;
}

void Profiler::start() {
  if (running_) return;
  if (!detail::claimProfilerSlot(this)) throw std::logic_error("Profiler: another Profiler is already running");
  running_ = true;
  if (options_.rangeStats) detail::setProfilerRangeStats(true);
  transit(ProfilerAction::None, action_);
  openStepRange();
}

void Profiler::step() {
  if (!running_) return;
  const ProfilerAction next = actionFor(stepNum_ + 1);  // a throwing schedule changes nothing
  closeStepRange();
  const ProfilerAction previous = action_;
  ++stepNum_;
  action_ = next;
  // Not thread-safe: a scope guard of the calling thread. The step range opens before the
  // handler runs, so a throwing handler leaves a consistent state.
  struct OpenOnExit {
    Profiler& self;
    ~OpenOnExit() { self.openStepRange(); }
  } open{*this};
  transit(previous, action_);
}

void Profiler::stop() {
  if (!running_) return;
  closeStepRange();
  running_ = false;
  struct ReleaseOnExit {
    Profiler& self;
    ~ReleaseOnExit() {
      detail::setTraceBuffering(false);
      detail::setProfilerRangeStats(false);
      detail::releaseProfilerSlot(&self);
      // The windows the profiler's timing opened end with it, rather than at the next window or exit.
      if (self.options_.rangeStats) {
        try {
          flushRangeStats();
        } catch (const std::exception&) {
          // Out of memory for the list: the windows close on time instead.
        }
      }
    }
  } release{*this};
  transit(action_, std::nullopt);
}

// torch.profiler.profile's table of transitions: which of prepare (start buffering), start
// (count ranges from now), stop (collect) and trace-ready each (previous, next) pair runs.
void Profiler::transit(ProfilerAction previous, std::optional<ProfilerAction> next) {
  using A = ProfilerAction;
  bool prepare = false, startTrace = false, stopTrace = false, ready = false;
  if (!next) {  // stop()
    switch (previous) {
      case A::None: break;
      case A::Warmup: startTrace = stopTrace = true; break;
      case A::Record:
      case A::RecordAndSave: stopTrace = ready = true; break;
    }
  } else {
    const A to = *next;
    switch (previous) {
      case A::None:
        prepare = to != A::None;
        startTrace = to == A::Record || to == A::RecordAndSave;
        break;
      case A::Warmup:
        startTrace = to != A::Warmup;
        stopTrace = to == A::None;
        break;
      case A::Record:
        stopTrace = to == A::None || to == A::Warmup;  // an odd schedule: torch drops the recording
        break;
      case A::RecordAndSave:
        stopTrace = ready = true;
        prepare = to != A::None;
        startTrace = to == A::Record || to == A::RecordAndSave;
        break;
    }
  }
  std::optional<Trace> collected;
  if (stopTrace) {
    detail::setTraceBuffering(false);
    collected = detail::collectBufferedRanges(recordingSince_);
    collected->step = next ? stepNum_ - 1 : stepNum_;  // the step that just ended
  }
  if (prepare) detail::setTraceBuffering(true);
  if (startTrace) recordingSince_ = detail::discardBufferedRanges();
  if (ready && collected && options_.onTraceReady) options_.onTraceReady(*collected);
}

void Profiler::openStepRange() noexcept {
  stepRangeMode_ = 0;
  if (!running_ || !options_.schedule || !options_.recordSteps) return;
  if ((detail::g_rangeMode.load(std::memory_order_relaxed) & detail::kModeTrace) == 0) return;
  try {
    stepRangeName_ = detail::internRangeName("ProfilerStep#" + std::to_string(stepNum_));
  } catch (const std::bad_alloc&) {
    return;
  }
  stepRangeMode_ = detail::kModeTrace;
  stepRangeStart_ = detail::beginRange();
}

void Profiler::closeStepRange() noexcept {
  if (stepRangeMode_ != 0) detail::endRange(stepRangeName_, stepRangeMode_, stepRangeStart_);
  stepRangeMode_ = 0;
}

}  // namespace livemon
