#include "tick_calibration.h"

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

namespace livemon::detail {

namespace {

constexpr int64_t kNoWidth = std::numeric_limits<int64_t>::max();

// Bounds the first calibration's wait on a reference clock that does not advance as it should:
// far more reads than kMaxFirstBaselineNs takes at any real clock's cost.
constexpr int64_t kMaxSpinReads = 20'000'000;

}  // namespace

int64_t TickMapping::toSteadyNs(int64_t ticks) const noexcept {
  const int64_t elapsed = ticks - baseTicks;
  if (nsPerTick == 1.0) return baseNs + elapsed;  // the reference clock itself: exact
  // floor keeps the map non-decreasing, so ranges converted together stay ordered and nested.
  return baseNs + static_cast<int64_t>(std::floor(static_cast<double>(elapsed) * nsPerTick));
}

TickCalibration::TickCalibration(TickSources sources) : sources_(std::move(sources)) {
  anchor_ = sample();
  if (anchor_.widthNs == kNoWidth) return;
  Estimate best;
  TickSample bestAt;
  int64_t spinReads = 0;
  for (int64_t baseline = kFirstBaselineNs; baseline <= kMaxFirstBaselineNs; baseline *= 2) {
    // Spins rather than sleeps: on a loaded machine a sleep may last many times longer.
    while (sources_.steadyNs() - anchor_.ns < baseline) {
      if (++spinReads > kMaxSpinReads) return;
    }
    const TickSample now = sample();
    const Estimate rate = estimate(anchor_, now);
    if (rate.plausible && (!best.plausible || rate.error < best.error)) {
      best = rate;
      bestAt = now;
    }
    if (best.plausible && best.error <= kGoodError) break;
  }
  if (!best.plausible || best.error > kMaxError) return;
  usable_ = true;
  adopt(bestAt, best);
  scheduleNextRefine(bestAt);
}

TickSample TickCalibration::sample() {
  TickSample best;
  best.widthNs = kNoWidth;
  for (int i = 0; i < kBracketsPerSample; ++i) {
    const int64_t before = sources_.steadyNs();
    const int64_t ticks = sources_.ticks();
    const int64_t after = sources_.steadyNs();
    const int64_t width = after - before;
    if (i == 0) best = TickSample{ticks, before, kNoWidth};
    if (width >= 0 && width < best.widthNs) best = TickSample{ticks, before + width / 2, width};
  }
  return best;
}

TickCalibration::Estimate TickCalibration::estimate(const TickSample& from, const TickSample& to) noexcept {
  Estimate result;
  const int64_t ticks = to.ticks - from.ticks;
  const double ns = static_cast<double>(to.ns) - static_cast<double>(from.ns);
  // How far the true interval may be from `ns`: half of each width, the rounding of the two
  // midpoints, and a tick of the counter at the fastest rate believed.
  const double slack =
      (static_cast<double>(from.widthNs) + static_cast<double>(to.widthNs)) / 2 + 1.0 + kMaxNsPerTick;
  result.meaningful = ns > 2 * slack;
  if (!result.meaningful) return result;
  result.error = slack / (ns - slack);
  if (ticks <= 0) return result;
  result.nsPerTick = ns / static_cast<double>(ticks);
  result.plausible = result.nsPerTick >= kMinNsPerTick && result.nsPerTick <= kMaxNsPerTick;
  return result;
}

void TickCalibration::adopt(const TickSample& at, const Estimate& rate) noexcept {
  // The map goes through the newest sample: offsets stay as fresh as the rate.
  mapping_ = TickMapping{at.ticks, at.ns, rate.nsPerTick};
  error_ = rate.error;
  verified_ = true;
}

void TickCalibration::refine() noexcept {
  if (!usable_) return;
  const TickSample now = sample();
  const Estimate rate = estimate(anchor_, now);
  if (!rate.meaningful) {
    // Too soon after the anchor to say anything, or every bracket was preempted.
    ++rejected_;
  } else if (!rate.plausible ||
             (verified_ && std::abs(rate.nsPerTick / mapping_.nsPerTick - 1.0) > rate.error + error_ + kSlewAllowance)) {
    // The clocks contradict what was measured before: the counter jumped (a suspend, a
    // migrated virtual machine) or changed rate. Measure afresh from here; until then the map
    // keeps the old rate from this sample on, the best guess.
    anchor_ = now;
    mapping_.baseTicks = now.ticks;
    mapping_.baseNs = now.ns;
    verified_ = false;
    ++restarts_;
  } else if ((verified_ && rate.error < error_) || (!verified_ && rate.error <= kMaxError)) {
    adopt(now, rate);
    ++accepted_;
  } else {
    ++rejected_;  // no tighter than the rate in use
  }
  scheduleNextRefine(now);
}

void TickCalibration::scheduleNextRefine(const TickSample& at) noexcept {
  // When the baseline will have doubled: each refine roughly halves the error bound.
  const int64_t baseline = std::max<int64_t>(at.ns - anchor_.ns, 0);
  const int64_t intervalNs = std::clamp(baseline, kFirstBaselineNs, kMaxRefineIntervalNs);
  const auto intervalTicks = static_cast<int64_t>(static_cast<double>(intervalNs) / mapping_.nsPerTick);
  nextRefineTicks_ = at.ticks > std::numeric_limits<int64_t>::max() - intervalTicks
                         ? std::numeric_limits<int64_t>::max()
                         : at.ticks + intervalTicks;
}

bool invariantTsc() noexcept {
#if defined(__x86_64__)
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) == 0 || eax < 0x80000007u) return false;
  if (__get_cpuid(0x80000007u, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (edx & (1u << 8)) != 0;
#else
  return false;
#endif
}

// The calibration's counter read: fenced, so that it happens between the steady_clock reads
// that bracket it and not before or after them, as an unordered read may.
int64_t fencedTsc() noexcept {
#if defined(__x86_64__)
  _mm_lfence();
  const auto ticks = static_cast<int64_t>(__rdtsc());
  _mm_lfence();
  return ticks;
#else
  return 0;  // never called: invariantTsc() is false here
#endif
}

}  // namespace livemon::detail
