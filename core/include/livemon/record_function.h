#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace livemon {

namespace detail {

// What a range does when it opens: bit kModeTrace, it is written to its thread's trace buffer;
// bit kModeStats, its duration is added to the Stat "range/<name>". Zero: nothing at all.
inline constexpr uint32_t kModeTrace = 1;
inline constexpr uint32_t kModeStats = 2;
extern std::atomic<uint32_t> g_rangeMode;

// The id of `name` in the process-wide name table, adding it on first use. Takes a lock; ids are
// never reused and names are never freed. Returns kOverflowNameId when the table is full or
// memory runs out.
uint32_t internRangeName(std::string_view name) noexcept;
inline constexpr uint32_t kOverflowNameId = 1;

// The out-of-line halves of RecordFunction, taken only while a profiler or range stats are on.
int64_t beginRange() noexcept;  // returns the start in range ticks
void endRange(uint32_t nameId, uint32_t mode, int64_t start) noexcept;

}  // namespace detail

// Thread-safe: name() and id() may be called from any thread at once.
//
// A range name known at compile time, interned on its first use while ranges are recorded.
// constexpr-constructible, so `static constinit RangeName` costs no initialisation guard.
class RangeName {
 public:
  constexpr explicit RangeName(std::string_view name) noexcept : name_(name) {}

  std::string_view name() const noexcept { return name_; }
  uint32_t id() const noexcept {
    const uint32_t cached = id_.load(std::memory_order_relaxed);
    return cached != 0 ? cached : intern();
  }

 private:
  uint32_t intern() const noexcept {
    const uint32_t fresh = detail::internRangeName(name_);
    id_.store(fresh, std::memory_order_relaxed);
    return fresh;
  }

  std::string_view name_;
  mutable std::atomic<uint32_t> id_{0};
};

// Not thread-safe: one owner at a time; a RecordFunction is opened and closed on one thread. Any
// number of threads may open ranges at once, and ranges nest.
//
// A labelled range of CPU time: from construction to destruction, on the constructing thread.
//
// With no Profiler recording and range stats off, a range costs one relaxed atomic load and a
// branch. While a Profiler records, the range is written as one fixed-size record to a buffer of
// its own thread, without a lock. While range stats are on (setRangeStatsEnabled, or a started
// Profiler), its duration in milliseconds is added to the Stat "range/<name>". A range opened
// while range stats were on (or a Profiler warmed up) and still open when recording starts is
// recorded when it closes, with its start, so a trace that starts inside it nests completely. A
// range opened while all of that was off records nothing (its start was never read), even if
// recording starts before it closes.
class RecordFunction {
 public:
  // The name's id is cached in `name`: nothing is hashed. See LIVEMON_RECORD_FUNCTION.
  explicit RecordFunction(const RangeName& name) noexcept
      : mode_(detail::g_rangeMode.load(std::memory_order_relaxed)) {
    if (mode_ != 0) [[unlikely]] {
      nameId_ = name.id();
      start_ = detail::beginRange();
    }
  }
  // A name known only at run time (Python uses this): looked up in the name table under a lock,
  // and only while ranges are recorded.
  explicit RecordFunction(std::string_view name) noexcept
      : mode_(detail::g_rangeMode.load(std::memory_order_relaxed)) {
    if (mode_ != 0) [[unlikely]] {
      nameId_ = detail::internRangeName(name);
      start_ = detail::beginRange();
    }
  }
  ~RecordFunction() {
    if (mode_ != 0) [[unlikely]] detail::endRange(nameId_, mode_, start_);
  }

  RecordFunction(const RecordFunction&) = delete;
  RecordFunction& operator=(const RecordFunction&) = delete;

  // True if this range will be recorded or timed.
  bool active() const noexcept { return mode_ != 0; }

 private:
  uint32_t mode_;
  uint32_t nameId_ = 0;
  int64_t start_ = 0;
};

// Range stats: every range's duration, in milliseconds, goes to a Stat named "range/<name>" with
// the aggregations count, mean, p50, p99 and max, on the system clock. They are on while this
// is enabled or while a Profiler started with ProfilerOptions::rangeStats is running.
// Enabling with a `window` other than the current one (1000 ms at first) applies it to every range
// Stat: each logs its open window now, and its windows are `window` long from then on; Stats
// created later (at a name's first timed range) get it too. Disabling leaves the window as it is.
// Throws std::invalid_argument for a window below 1 ms.
// Their open windows are logged at the latest when the process exits (std::atexit; Python: the
// module's atexit hook, while the interpreter and its handlers are still there), when a Profiler
// that timed them stops, and when a Publisher is destroyed (so a Publisher local to main still
// sends them).
// Thread-safe.
void setRangeStatsEnabled(bool enabled, std::chrono::milliseconds window = std::chrono::milliseconds(1000));
bool rangeStatsEnabled() noexcept;

// Closes the open window of every range Stat now (logging those that hold samples), as
// Stat::flush. Exit, Profiler::stop() and a Publisher's destruction call it (see above).
// Thread-safe.
void flushRangeStats();

// The prefix of range Stat names: the Stat of range "forward" is "range/forward".
inline constexpr std::string_view kRangeStatPrefix = "range/";

// Names the calling thread in traces (Chrome "thread_name" metadata). Without it, the name the
// operating system has for the thread when it first records a range is used. Thread-safe.
void setThreadName(std::string name);

}  // namespace livemon

#define LIVEMON_DETAIL_CONCAT2(a, b) a##b
#define LIVEMON_DETAIL_CONCAT(a, b) LIVEMON_DETAIL_CONCAT2(a, b)

// Opens a range named by a string literal until the end of the enclosing scope:
//   { LIVEMON_RECORD_FUNCTION("forward"); model.forward(batch); }
#define LIVEMON_RECORD_FUNCTION(literal)                                                                      \
  static constinit ::livemon::RangeName LIVEMON_DETAIL_CONCAT(livemonRangeName_, __LINE__){literal};          \
  const ::livemon::RecordFunction LIVEMON_DETAIL_CONCAT(livemonRange_, __LINE__) {                            \
    LIVEMON_DETAIL_CONCAT(livemonRangeName_, __LINE__)                                                         \
  }
