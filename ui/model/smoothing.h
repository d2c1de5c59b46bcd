#pragma once

#include <cstddef>
#include <cstdint>

namespace livemon::ui {

// Not thread-safe: one owner at a time.
// The debiased exponential moving average TensorBoard's smoothing slider draws: with weight w,
// s = w * s + (1 - w) * y over the finite values seen, divided by 1 - w^n after n of them, so the
// first point is the first value itself rather than a fraction of it pulled towards zero.
// A value that is not finite (NaN, ±Inf) comes out as itself and leaves the average untouched:
// the line shows it where it happened and the values after it smooth as if it had not come.
class ExponentialSmoother {
 public:
  // `weight` is clamped to [0, kMaxSmoothing]; 0 returns every value unchanged.
  explicit ExponentialSmoother(double weight) noexcept;

  double add(double value) noexcept;
  void reset() noexcept;
  double weight() const noexcept { return weight_; }

 private:
  double weight_;
  double accumulated_ = 0.0;
  double weightPower_ = 1.0;  // w^n: 1 - weightPower_ is the debiasing divisor
};

// The slider's range: TensorBoard's, as 1 would freeze the line at its first value.
inline constexpr double kMaxSmoothing = 0.99;
inline constexpr double kDefaultSmoothing = 0.6;

// `weight` clamped to [0, kMaxSmoothing]; NaN gives 0.
double clampSmoothing(double weight) noexcept;

// How many values before the first one shown a smoothed line starts from, so that what it leaves
// out weighs under 1/1000 of any point shown: log(0.001) / log(w) values (688 at 0.99, 14 at 0.6,
// none at 0). Starting there rather than at the series' first sample keeps a refresh's cost
// proportional to what is shown.
std::size_t smoothingWarmup(double weight) noexcept;

}  // namespace livemon::ui
