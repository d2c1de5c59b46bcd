#pragma once

#include <chrono>
#include <memory>
#include <mutex>

namespace livemon {

namespace detail {
class WindowScheduler;
}

// Thread-safe: every member may be called from any thread.
//
// A source of time for Stats and WaitCounters. Each clock owns the scheduler that closes the
// windows of the Stats that use it, so window logic can be driven by a test clock.
class Clock {
 public:
  virtual ~Clock();
  Clock(const Clock&) = delete;
  Clock& operator=(const Clock&) = delete;

  // Monotonic time; Stat windows are aligned to multiples of their size on this clock.
  virtual std::chrono::steady_clock::time_point now() const noexcept = 0;
  // Wall-clock time, used for event timestamps.
  virtual std::chrono::system_clock::time_point wallNow() const noexcept = 0;

  // Internal: closes the windows of the Stats on this clock.
  detail::WindowScheduler& scheduler() noexcept { return *scheduler_; }

 protected:
  // `backgroundThread`: windows are closed by a shared thread that waits for their deadlines
  // (the real clock). Otherwise nothing closes them until the clock is told time passed.
  explicit Clock(bool backgroundThread);

 private:
  std::unique_ptr<detail::WindowScheduler> scheduler_;
};

// The process clock: std::chrono::steady_clock and system_clock. Stats on it are closed on time
// by one shared background thread, started on first need, that never keeps the process from
// exiting.
Clock& systemClock() noexcept;

// Thread-safe: every member may be called from any thread; advance() and set() close the due
// windows on the calling thread, before they return.
//
// A clock that moves only when told to, for tests. advance() and set() close every window that
// has ended by the new time. Stats and WaitCounters must not outlive the ManualClock they use.
class ManualClock final : public Clock {
 public:
  // Starts at `start` on the monotonic axis and `wallStart` on the wall clock.
  explicit ManualClock(std::chrono::steady_clock::time_point start = std::chrono::steady_clock::time_point{},
                       std::chrono::system_clock::time_point wallStart =
                           std::chrono::system_clock::time_point{std::chrono::seconds{1'700'000'000}});
  ~ManualClock() override;

  std::chrono::steady_clock::time_point now() const noexcept override;
  std::chrono::system_clock::time_point wallNow() const noexcept override;

  // Moves both clocks forward by `step` (must not be negative), then closes due windows.
  void advance(std::chrono::nanoseconds step);
  // Moves the monotonic clock to `t` (must not be earlier than now()) and the wall clock by the
  // same amount, then closes due windows.
  void set(std::chrono::steady_clock::time_point t);

 private:
  mutable std::mutex mutex_;
  std::chrono::steady_clock::time_point now_;
  std::chrono::system_clock::time_point wallNow_;
};

}  // namespace livemon
