#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <livemon/aggregation.h>
#include <livemon/clock.h>
#include <livemon/event.h>
#include <livemon/detail/spin_lock.h>
#include <livemon/quantile_sketch.h>

namespace livemon::detail {

// Thread-safe: every member, from any thread. Lock order: closeMutex_, then lock_; resultMutex_ on
// its own. No lock is held while handlers run.
//
// The shared state behind a Stat. The window scheduler holds it weakly, so a window closing on
// the scheduler's thread keeps it alive while the Stat object itself is destroyed.
class StatState : public std::enable_shared_from_this<StatState> {
 public:
  StatState(std::string name, std::vector<Aggregation> aggregations, std::chrono::milliseconds windowSize,
            int64_t maxSamples, Clock& clock);

  void add(double value) noexcept;
  int64_t count() const noexcept;
  std::map<Aggregation, double> get() const;
  int64_t droppedCount() const noexcept { return dropped_.load(std::memory_order_relaxed); }

  enum class CloseReason {
    Scheduled,  // the window's time is up: a new window starts, the cap is lifted
    Flush,      // flush(): a new window starts now
    Cap,        // maxSamples reached: later adds in this window are dropped until it ends
    Destroy,    // the Stat is going away
  };
  void close(CloseReason reason) noexcept { close(reason, {}); }
  // The scheduler's close of the window that ends at `deadline`; ignored when the window was
  // rescheduled since (setWindowSize).
  void closeScheduledWindow(std::chrono::steady_clock::time_point deadline) noexcept {
    close(CloseReason::Scheduled, deadline);
  }

  // Closes the open window now (logging it if it holds samples) and makes the windows after it
  // `size` long, aligned to multiples of `size`. `size` is at least 1 ms (the caller checks).
  void setWindowSize(std::chrono::milliseconds size) noexcept;
  std::chrono::milliseconds windowSize() const noexcept {
    return std::chrono::milliseconds(windowMs_.load(std::memory_order_relaxed));
  }

  const std::string name_;
  const std::vector<Aggregation> aggregations_;
  const int64_t maxSamples_;

 private:
  // Not thread-safe: guarded by the StatState's lock_.
  //
  // The open window's accumulators. Min and max start at +/-infinity so NaN never enters them;
  // variance sums are taken around the window's first value, which keeps them accurate for data
  // far from zero.
  struct Window {
    int64_t count = 0;
    double sum = 0;
    double min = std::numeric_limits<double>::infinity();
    double max = -std::numeric_limits<double>::infinity();
    double last = 0;
    double shift = 0;
    double shiftedSum = 0;
    double shiftedSquares = 0;
  };

  void close(CloseReason reason, std::chrono::steady_clock::time_point deadline) noexcept;
  void arm() noexcept;
  std::map<Aggregation, double> compute(const Window& window, const QuantileSketch* sketch) const;

  Clock& clock_;
  std::vector<std::string> keys_;  // "<name>.<aggregation>", parallel to aggregations_
  bool wantVariance_ = false;
  bool wantQuantiles_ = false;

  mutable SpinLock lock_;
  Window open_;                             // guarded by lock_
  bool capped_ = false;                     // guarded by lock_
  bool armed_ = false;                      // guarded by lock_: a close is scheduled
  std::chrono::steady_clock::time_point armedDeadline_;  // guarded by lock_: for that close
  std::atomic<int64_t> windowMs_;
  std::unique_ptr<QuantileSketch> sketch_;  // guarded by lock_; null without quantiles
  std::atomic<int64_t> dropped_{0};

  std::mutex closeMutex_;                  // serialises closes
  std::unique_ptr<QuantileSketch> spare_;  // guarded by closeMutex_: the sketch being read out

  mutable std::mutex resultMutex_;
  std::map<Aggregation, double> last_;  // guarded by resultMutex_
};

}  // namespace livemon::detail
