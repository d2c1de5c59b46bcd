#include "tick_calibration.h"

#include <utility>

namespace livemon::detail {

TickCalibration::TickCalibration(TickSources sources) : sources_(std::move(sources)) {
  baseTicks_ = sources_.ticks();
  baseNs_ = sources_.steadyNs();
  int64_t ticks = 0;
  int64_t ns = 0;
  do {
    ticks = sources_.ticks();
    ns = sources_.steadyNs();
  } while (ns - baseNs_ < 2'000'000);
  nsPerTick_ = static_cast<double>(ns - baseNs_) / static_cast<double>(ticks - baseTicks_);
}

int64_t TickCalibration::toSteadyNs(int64_t ticks) const noexcept {
  return baseNs_ + static_cast<int64_t>(static_cast<double>(ticks - baseTicks_) * nsPerTick_);
}

void TickCalibration::refine() noexcept {
  const int64_t ticks = sources_.ticks();
  const int64_t ns = sources_.steadyNs();
  if (ns - baseNs_ > 100'000'000 && ticks > baseTicks_) {
    nsPerTick_ = static_cast<double>(ns - baseNs_) / static_cast<double>(ticks - baseTicks_);
  }
}

}  // namespace livemon::detail
