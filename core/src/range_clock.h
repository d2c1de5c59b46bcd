#pragma once

// The clock ranges are timed with (record_function.cpp's hot path and its registry).
#include <atomic>
#include <cstdint>
#include <limits>
#include <mutex>
#include <optional>

#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include "range_registry.h"
#include "tick_calibration.h"

namespace livemon::detail {

// Ranges are timed in ticks: the x86 time-stamp counter where it runs at a constant rate (two
// reads cost less than half of two steady_clock reads), else steady_clock nanoseconds. Ticks
// become steady_clock nanoseconds through a calibration (tick_calibration.h) that the end of a
// range refines when g_nextRefineTicks has passed, and every collection too.
// LIVEMON_RANGE_CLOCK=steady chooses steady_clock. The hot path reads only these atomics; the
// RangeClock's constructor (the registry's member) sets the first two, before ranges first turn on.
extern std::atomic<bool> g_useTsc;
extern std::atomic<double> g_nsPerTick;
extern std::atomic<int64_t> g_nextRefineTicks;

inline int64_t ticksNow() noexcept {
#if defined(__x86_64__)
  if (g_useTsc.load(std::memory_order_relaxed)) return static_cast<int64_t>(__rdtsc());
#endif
  return steadyNowNs();
}

inline double nsPerTick() noexcept { return g_nsPerTick.load(std::memory_order_relaxed); }

// Thread-safe: every member takes its own mutex; refineIfIdle(), for the end of a range on any
// thread, skips the refine instead of waiting when another thread holds it. The registry may
// call the others while holding its mutex, which is always taken before this one.
//
// The calibration of the counter, or none when ranges are timed with steady_clock.
class RangeClock {
 public:
  // Calibrates the time-stamp counter, unless it is unusable or LIVEMON_RANGE_CLOCK=steady.
  RangeClock();

  void refineIfIdle() noexcept {
    std::unique_lock lock(mutex_, std::try_to_lock);
    if (lock.owns_lock()) refineLocked();
  }

  void refine() noexcept {
    std::lock_guard lock(mutex_);
    refineLocked();
  }

  // A fresh map for the ranges of one trace: all of them are converted by the same map, so
  // whatever a refine does meanwhile, the trace keeps their order and nesting.
  TickMapping refinedMapping() noexcept {
    std::lock_guard lock(mutex_);
    refineLocked();
    return calibration_ ? calibration_->mapping() : TickMapping{};
  }

  RangeClockState state() noexcept {
    std::lock_guard lock(mutex_);
    if (!calibration_) return RangeClockState{};
    return RangeClockState{true, calibration_->nsPerTick(), calibration_->errorBound(),
                           calibration_->refinesAccepted() + calibration_->refinesRejected() +
                               calibration_->baselinesRestarted()};
  }

  // A fork must not leave the mutex held in the child by a thread that does not exist there.
  void beforeFork() noexcept { mutex_.lock(); }
  void afterFork() noexcept { mutex_.unlock(); }

 private:
  void refineLocked() noexcept {
    if (!calibration_) return;
    calibration_->refine();
    publishLocked();
  }

  void publishLocked() noexcept {
    g_nsPerTick.store(calibration_->nsPerTick(), std::memory_order_relaxed);
    g_nextRefineTicks.store(calibration_->nextRefineTicks(), std::memory_order_relaxed);
  }

  std::mutex mutex_;
  std::optional<TickCalibration> calibration_;  // set in the constructor only
};

}  // namespace livemon::detail
