#pragma once

#include <cstdint>
#include <functional>

namespace livemon::detail {

// The two clocks a TickCalibration reads: a fast counter (the x86 time-stamp counter) and the
// reference it is converted to (steady_clock, in nanoseconds). Injected so that tests can
// simulate a preemption at any moment.
struct TickSources {
  std::function<int64_t()> ticks;
  std::function<int64_t()> steadyNs;
};

// Converts ticks of a fast counter into steady_clock nanoseconds.
//
// Not thread-safe: its owner serialises every call.
class TickCalibration {
 public:
  // Measures a first rate over 2 ms.
  explicit TickCalibration(TickSources sources);

  bool usable() const noexcept { return true; }
  double nsPerTick() const noexcept { return nsPerTick_; }
  int64_t toSteadyNs(int64_t ticks) const noexcept;

  // Recomputes the rate over the whole time since the calibration started.
  void refine() noexcept;

 private:
  TickSources sources_;
  int64_t baseTicks_ = 0;
  int64_t baseNs_ = 0;
  double nsPerTick_ = 1.0;
};

}  // namespace livemon::detail
