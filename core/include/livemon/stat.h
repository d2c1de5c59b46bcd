#pragma once

#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <livemon/aggregation.h>
#include <livemon/clock.h>

namespace livemon {

namespace detail {
class StatState;
}

// Thread-safe: add(), count(), get() and flush() may be called from any thread at once, and
// from inside event handlers.
//
// A windowed statistic, cheap enough for a training job's innermost loop.
//
// Windows are aligned to multiples of `windowSize` on the clock's monotonic axis, as in
// torch.monitor. When a window that holds samples ends, the clock's scheduler logs it as an
// event named kStatEventName with one double per "<name>.<aggregation>" key, timestamped with
// the wall-clock time of the close. This happens on time even when no further add() comes.
// Empty windows are never logged.
//
// `maxSamples` caps a window: the add() that reaches the cap logs the window at once, and later
// adds in the same window are dropped (and counted by droppedCount()).
class Stat {
 public:
  // Throws std::invalid_argument naming the bad argument: an empty `name`, no `aggregations` or
  // an unknown one, `windowSize` below 1 ms, `maxSamples` below 1. Repeated aggregations are
  // reported once.
  Stat(std::string name, std::vector<Aggregation> aggregations, std::chrono::milliseconds windowSize,
       int64_t maxSamples = std::numeric_limits<int64_t>::max());
  // The same on a given clock (for tests: a ManualClock). The Stat must not outlive `clock`.
  Stat(std::string name, std::vector<Aggregation> aggregations, std::chrono::milliseconds windowSize,
       int64_t maxSamples, Clock& clock);
  // Logs the open window if it holds samples.
  ~Stat();

  Stat(const Stat&) = delete;
  Stat& operator=(const Stat&) = delete;

  // Adds a sample to the open window. Never blocks on I/O or on a lock (each thread writes its own
  // accumulators, merged when the window closes; a Stat with maxSamples takes a short lock for its
  // shared count), never throws. Allocates only on a thread's first add to this Stat and when the
  // quantile sketch must grow to a new range of magnitudes. Samples of a thread that exits are
  // logged with the window they were added in. With Aggregation::Value, of adds made at the same
  // moment on several threads any one may be the window's last.
  void add(double value) noexcept;

  // Samples in the open window (0 right after a window closed or reached maxSamples).
  int64_t count() const;

  // The last closed window's value for every configured aggregation; zeros before the first
  // window closes.
  std::map<Aggregation, double> get() const;

  // Closes the open window now: logs it if it holds samples, and starts a new one.
  void flush();

  const std::string& name() const noexcept;
  const std::vector<Aggregation>& aggregations() const noexcept;
  std::chrono::milliseconds windowSize() const noexcept;
  int64_t maxSamples() const noexcept;

  // Samples dropped because their window had already reached maxSamples.
  int64_t droppedCount() const noexcept;

 private:
  std::shared_ptr<detail::StatState> state_;
};

}  // namespace livemon
