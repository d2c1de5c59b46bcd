#include "range_clock.h"

#include <cstdlib>
#include <string_view>
#include <utility>

namespace livemon::detail {

std::atomic<bool> g_useTsc{false};
std::atomic<double> g_nsPerTick{1.0};
std::atomic<int64_t> g_nextRefineTicks{std::numeric_limits<int64_t>::max()};

RangeClock::RangeClock() {
  const char* choice = std::getenv("LIVEMON_RANGE_CLOCK");
  if (!invariantTsc() || (choice != nullptr && std::string_view(choice) == "steady")) return;
  TickCalibration calibration(TickSources{fencedTsc, steadyNowNs});
  if (!calibration.usable()) return;  // no rate to trust: steady_clock times the ranges
  calibration_.emplace(std::move(calibration));
  publishLocked();
  g_useTsc.store(true, std::memory_order_relaxed);
}

}  // namespace livemon::detail
