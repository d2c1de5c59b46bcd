#include <livemon/clock.h>

#include <stdexcept>

#include "window_scheduler.h"

namespace livemon {
namespace {

// Thread-safe: every member may be called from any thread. The process clock.
class SystemClock final : public Clock {
 public:
  SystemClock() : Clock(/*backgroundThread=*/true) {}
  std::chrono::steady_clock::time_point now() const noexcept override { return std::chrono::steady_clock::now(); }
  std::chrono::system_clock::time_point wallNow() const noexcept override {
    return std::chrono::system_clock::now();
  }
};

}  // namespace

Clock::Clock(bool backgroundThread)
    : scheduler_(std::make_unique<detail::WindowScheduler>(*this, backgroundThread)) {}

Clock::~Clock() = default;

Clock& systemClock() noexcept {
  // Never destroyed: Stats with static storage duration may outlive any other static object.
  static SystemClock* clock = new SystemClock;
  return *clock;
}

ManualClock::ManualClock(std::chrono::steady_clock::time_point start, std::chrono::system_clock::time_point wallStart)
    : Clock(/*backgroundThread=*/false), now_(start), wallNow_(wallStart) {}

ManualClock::~ManualClock() = default;

std::chrono::steady_clock::time_point ManualClock::now() const noexcept {
  std::lock_guard lock(mutex_);
  return now_;
}

std::chrono::system_clock::time_point ManualClock::wallNow() const noexcept {
  std::lock_guard lock(mutex_);
  return wallNow_;
}

void ManualClock::advance(std::chrono::nanoseconds step) {
  if (step.count() < 0) throw std::invalid_argument("ManualClock::advance: step must not be negative");
  std::chrono::steady_clock::time_point reached;
  {
    std::lock_guard lock(mutex_);
    now_ += std::chrono::duration_cast<std::chrono::steady_clock::duration>(step);
    wallNow_ += std::chrono::duration_cast<std::chrono::system_clock::duration>(step);
    reached = now_;
  }
  scheduler().runDue(reached);
}

void ManualClock::set(std::chrono::steady_clock::time_point t) {
  std::chrono::nanoseconds step;
  {
    std::lock_guard lock(mutex_);
    if (t < now_) throw std::invalid_argument("ManualClock::set: time must not go backwards");
    step = t - now_;
  }
  advance(step);
}

}  // namespace livemon
