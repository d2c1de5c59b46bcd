#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include <livemon/clock.h>

namespace livemon {

namespace detail {
class WaitCounterState;
}

// Thread-safety: a plain value type. Process-wide totals of one WaitCounter key.
struct WaitCounterTotals {
  int64_t active = 0;                        // waits started and not yet finished
  int64_t calls = 0;                         // waits finished
  std::chrono::nanoseconds totalTime{0};     // summed duration of the finished waits
  std::chrono::nanoseconds maxTime{0};       // longest finished wait
};

// Not thread-safe: one owner at a time; one guard belongs to one thread at a time. Move-only.
//
// Measures one wait, from WaitCounter::start() until stop() or destruction, whichever comes
// first.
class WaitGuard {
 public:
  WaitGuard() = default;  // records nothing
  WaitGuard(WaitGuard&& other) noexcept;
  WaitGuard& operator=(WaitGuard&& other) noexcept;
  WaitGuard(const WaitGuard&) = delete;
  WaitGuard& operator=(const WaitGuard&) = delete;
  ~WaitGuard();

  // Records the wait. A second call does nothing.
  void stop() noexcept;

 private:
  friend class WaitCounter;
  WaitGuard(std::shared_ptr<detail::WaitCounterState> state, std::chrono::steady_clock::time_point start) noexcept;

  std::shared_ptr<detail::WaitCounterState> state_;
  std::chrono::steady_clock::time_point start_;
};

// Thread-safe: start() and totals() may be called from any thread.
//
// Counts waits (data loading, a barrier, a lock) under a key. Counters with the same key share
// process-wide totals, and every finished wait is added, in milliseconds, to a Stat named after
// the key (aggregations count, mean, max, p50, p99; 1 s windows), so waits show on the dashboard.
// Setting LIVEMON_DISABLE_WAIT_COUNTERS=1 before a counter is constructed makes it a no-op.
class WaitCounter {
 public:
  // Throws std::invalid_argument if `key` is empty.
  explicit WaitCounter(std::string key);
  // The same on a given clock; the first counter of a key decides the clock of its Stat.
  WaitCounter(std::string key, Clock& clock);

  WaitGuard start();

  const std::string& key() const noexcept { return key_; }
  // Totals for this counter's key (all zeros when disabled).
  WaitCounterTotals totals() const;
  bool enabled() const noexcept { return state_ != nullptr; }

  static constexpr std::chrono::milliseconds kStatWindow{1000};

 private:
  std::string key_;
  std::shared_ptr<detail::WaitCounterState> state_;
};

}  // namespace livemon
