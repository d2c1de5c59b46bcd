#pragma once

#include <cstdint>
#include <functional>

namespace livemon::detail {

// Thread-safety: a plain value type; its functions are called by the calibration's owner.
//
// The two clocks a TickCalibration reads: a fast counter (the x86 time-stamp counter) and the
// reference it is converted to (steady_clock, in nanoseconds). Injected so that tests can
// simulate a preemption at any moment.
struct TickSources {
  std::function<int64_t()> ticks;
  std::function<int64_t()> steadyNs;
};

// Thread-safety: a plain value type.
//
// The counter's reading at one moment, and that moment on the reference clock: the reading was
// taken between two reference reads `widthNs` apart, so the true moment is within widthNs / 2
// of `ns`, however long the thread was preempted between the reads.
struct TickSample {
  int64_t ticks = 0;
  int64_t ns = 0;
  int64_t widthNs = 0;
};

// Thread-safety: a plain value type.
//
// An increasing affine map from ticks to reference nanoseconds. One map converts a whole
// trace, so its ranges keep their order and nesting.
struct TickMapping {
  int64_t baseTicks = 0;
  int64_t baseNs = 0;
  double nsPerTick = 1.0;

  int64_t toSteadyNs(int64_t ticks) const noexcept;
};

// Not thread-safe: one owner at a time; its owner serialises every call.
//
// Converts ticks of a fast counter into steady_clock nanoseconds.
//
// The rate is the ratio of the two clocks' advances between two samples (an anchor and a later
// one), and is believed only with its error bound, which the samples' widths give: a preemption
// between two reads widens the bracket it falls in and so can only loosen the bound, never skew
// the rate unseen. Each sample is the tightest of several brackets; rates outside what a
// time-stamp counter runs at, or whose bound is too loose, are rejected. With no acceptable
// first rate the calibration is not usable and the caller keeps to the reference clock.
//
// refine() measures again over the longer baseline since the anchor and keeps the result when
// its bound is tighter. A result that contradicts the current rate beyond both bounds (the
// counter jumped or changed rate) starts a new baseline at that sample.
class TickCalibration {
 public:
  // Brackets per sample; the tightest is kept, so one preemption cannot widen a sample.
  static constexpr int kBracketsPerSample = 8;
  // The first rate is measured over at least this long, doubled until its bound is below
  // kGoodError, up to kMaxFirstBaselineNs.
  static constexpr int64_t kFirstBaselineNs = 2'000'000;
  static constexpr int64_t kMaxFirstBaselineNs = 16'000'000;
  static constexpr double kGoodError = 1e-3;
  // No rate with a looser bound is used.
  static constexpr double kMaxError = 1e-2;
  // What a time-stamp counter runs at: 100 MHz to 10 GHz.
  static constexpr double kMinNsPerTick = 0.1;
  static constexpr double kMaxNsPerTick = 10.0;
  // How far two honest rates may differ beyond their bounds: steady_clock is slewed by NTP by
  // at most 500 ppm, so rates over different baselines may legitimately differ by that much.
  static constexpr double kSlewAllowance = 1e-3;
  // Refines come when the baseline has doubled, but at least this often once it is long: the
  // reference clock's slew is followed within a second.
  static constexpr int64_t kMaxRefineIntervalNs = 1'000'000'000;

  // Measures the first rate: about 2 ms of reads, at most kMaxFirstBaselineNs.
  explicit TickCalibration(TickSources sources);

  // False when no plausible rate with a bound under kMaxError could be measured.
  bool usable() const noexcept { return usable_; }
  double nsPerTick() const noexcept { return mapping_.nsPerTick; }
  // The relative error bound of nsPerTick().
  double errorBound() const noexcept { return error_; }
  TickMapping mapping() const noexcept { return mapping_; }
  int64_t toSteadyNs(int64_t ticks) const noexcept { return mapping_.toSteadyNs(ticks); }
  // The counter reading from which a refine() has something to gain.
  int64_t nextRefineTicks() const noexcept { return nextRefineTicks_; }

  // Measures the rate again over the time since the anchor (a few microseconds of reads).
  void refine() noexcept;

  // What the refines did, for tests and diagnostics.
  int64_t refinesAccepted() const noexcept { return accepted_; }
  int64_t refinesRejected() const noexcept { return rejected_; }
  int64_t baselinesRestarted() const noexcept { return restarts_; }

 private:
  struct Estimate {
    double nsPerTick = 0;
    double error = 1.0;
    bool meaningful = false;  // the interval is long enough against the samples' widths to say anything
    bool plausible = false;   // ... and the rate is one a time-stamp counter runs at
  };

  TickSample sample();
  static Estimate estimate(const TickSample& from, const TickSample& to) noexcept;
  void adopt(const TickSample& at, const Estimate& rate) noexcept;
  void scheduleNextRefine(const TickSample& at) noexcept;

  TickSources sources_;
  bool usable_ = false;
  TickSample anchor_;
  TickMapping mapping_;
  double error_ = 1.0;
  bool verified_ = true;  // false after a restarted baseline: the next good rate is taken as it is
  int64_t nextRefineTicks_ = INT64_MAX;
  int64_t accepted_ = 0;
  int64_t rejected_ = 0;
  int64_t restarts_ = 0;
};

// Whether the x86 time-stamp counter runs at a constant rate (CPUID's invariant TSC bit); false
// on other machines.
bool invariantTsc() noexcept;
// A read of that counter fenced so that it happens between the reads of another clock that
// bracket it, as the calibration needs.
int64_t fencedTsc() noexcept;

}  // namespace livemon::detail
