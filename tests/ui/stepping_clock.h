#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

#include <livemon/clock.h>

namespace livemon::ui::test {

// Thread-safe: every member may be called from any thread.
// A clock that moves on by `step` each time it is read: a refresh's time budget of N steps
// admits a known number of pieces, whatever the machine's speed.
class SteppingClock final : public Clock {
 public:
  explicit SteppingClock(std::chrono::nanoseconds step) : Clock(false), step_(step) {}
  std::chrono::steady_clock::time_point now() const noexcept override {
    return std::chrono::steady_clock::time_point{} + step_ * reads_.fetch_add(1, std::memory_order_relaxed);
  }
  std::chrono::system_clock::time_point wallNow() const noexcept override { return {}; }

 private:
  std::chrono::nanoseconds step_;
  mutable std::atomic<int64_t> reads_{0};
};

}  // namespace livemon::ui::test
