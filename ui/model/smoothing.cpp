#include <livemon/ui/model/smoothing.h>

#include <algorithm>
#include <cmath>

namespace livemon::ui {

double clampSmoothing(double weight) noexcept {
  if (!(weight > 0.0)) return 0.0;  // also NaN
  return std::min(weight, kMaxSmoothing);
}

ExponentialSmoother::ExponentialSmoother(double weight) noexcept : weight_(clampSmoothing(weight)) {}

double ExponentialSmoother::add(double value) noexcept {
  if (!std::isfinite(value)) return value;
  accumulated_ = accumulated_ * weight_ + (1.0 - weight_) * value;
  weightPower_ *= weight_;
  return accumulated_ / (1.0 - weightPower_);
}

void ExponentialSmoother::reset() noexcept {
  accumulated_ = 0.0;
  weightPower_ = 1.0;
}

std::size_t smoothingWarmup(double weight) noexcept {
  const double w = clampSmoothing(weight);
  if (w == 0.0) return 0;
  return static_cast<std::size_t>(std::ceil(std::log(0.001) / std::log(w)));
}

}  // namespace livemon::ui
