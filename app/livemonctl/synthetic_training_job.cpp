#include <livemonctl/synthetic_training_job.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace livemon::livemonctl {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr int64_t kWarmupSteps = 200;
constexpr int64_t kScheduleSteps = 20000;  // one cosine cycle of the learning rate
constexpr double kPeakLearningRate = 3e-4;
constexpr double kFinalLearningRate = 1e-5;
// The learning rate where a tuned run's loss levels off lowest.
constexpr double kBestLearningRate = 1e-3;

}  // namespace

JobShape jobShapeOf(const RunConfig& config) {
  JobShape shape;
  const auto number = [&config](const char* key) -> std::optional<double> {
    const auto found = config.find(key);
    if (found == config.end()) return std::nullopt;
    if (const auto* d = std::get_if<double>(&found->second)) return *d;
    if (const auto* i = std::get_if<int64_t>(&found->second)) return static_cast<double>(*i);
    return std::nullopt;
  };
  if (const auto lr = number("lr"); lr && std::isfinite(*lr) && *lr > 0 && *lr <= 10) shape.peakLearningRate = *lr;
  if (const auto batch = number("batch"); batch && *batch >= 1 && *batch <= 1e9) {
    shape.batchSize = static_cast<int64_t>(*batch);
  }
  return shape;
}

SyntheticTrainingJob::SyntheticTrainingJob(uint64_t seed, double stepPeriodMs, int64_t stepsPerEpoch,
                                           JobShape shape)
    : random_(seed),
      stepPeriodMs_(stepPeriodMs),
      stepsPerEpoch_(stepsPerEpoch),
      batchSize_(shape.batchSize),
      peakLearningRate_(shape.peakLearningRate.value_or(kPeakLearningRate)),
      speed_(1.0),
      floor_(0.15),
      noise_(0.06) {
  if (shape.peakLearningRate) {
    // Ten times the learning rate, about ten times as fast (at most 30x), noisier, and a floor that
    // rises with the distance from the best learning rate on a log scale.
    speed_ = std::clamp(*shape.peakLearningRate / kPeakLearningRate, 0.05, 30.0);
    const double off = std::log10(*shape.peakLearningRate / kBestLearningRate);
    floor_ = 0.15 + 0.12 * off * off;
    noise_ = 0.06 * std::clamp(std::sqrt(speed_), 0.5, 3.0);
  }
}

TrainingStep SyntheticTrainingJob::next() {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  TrainingStep s;
  s.step = step_++;
  const double t = static_cast<double>(s.step);

  // Loss: an exponential fall to a floor, multiplicative noise, and a rare spike.
  const double trend = floor_ + 2.2 * std::exp(-t * speed_ / 1500.0);
  const bool spike = uniform(random_) < 0.01;
  s.loss = trend * (1.0 + noise_ * normal(random_)) * (spike ? 2.5 + uniform(random_) : 1.0);
  smoothedLoss_ = s.step == 0 ? s.loss : 0.98 * smoothedLoss_ + 0.02 * s.loss;

  if (s.step < kWarmupSteps) {
    s.learningRate = peakLearningRate_ * (t + 1) / kWarmupSteps;
  } else {
    const double progress = std::fmod(t - kWarmupSteps, static_cast<double>(kScheduleSteps)) / kScheduleSteps;
    s.learningRate = kFinalLearningRate + 0.5 * (peakLearningRate_ - kFinalLearningRate) * (1 + std::cos(kPi * progress));
  }

  s.gradNorm = std::exp(0.25 * normal(random_)) * (0.5 + trend) * (spike ? 4.0 : 1.0);
  // Step time: near 90 % of the period, log-normal, with an occasional slow step.
  s.stepTimeMs = 0.9 * stepPeriodMs_ * std::exp(0.08 * normal(random_)) * (uniform(random_) < 0.03 ? 1.6 : 1.0);
  s.dataWaitMs = s.stepTimeMs * (0.02 + 0.06 * uniform(random_));
  s.samplesPerSecond = static_cast<double>(batchSize_) / (s.stepTimeMs / 1000.0);
  s.memoryGb = 6.0 + 1.5 * std::fmod(t, 500.0) / 500.0 + 0.05 * normal(random_);
  if (divergeAt_ > 0 && s.step >= divergeAt_) {
    constexpr int64_t kStepsToNaN = 40;
    const int64_t since = s.step - divergeAt_;
    const double growth = std::exp(0.15 * static_cast<double>(since));
    s.loss = since >= kStepsToNaN ? std::numeric_limits<double>::quiet_NaN() : s.loss * growth;
    s.gradNorm = since >= kStepsToNaN ? std::numeric_limits<double>::quiet_NaN() : s.gradNorm * growth;
  }
  return s;
}

std::optional<EvalResult> SyntheticTrainingJob::evalDue() const {
  if (step_ == 0 || step_ % stepsPerEpoch_ != 0) return std::nullopt;
  EvalResult eval;
  eval.epoch = step_ / stepsPerEpoch_;
  eval.step = step_;
  eval.loss = smoothedLoss_ * 1.08;
  // A run whose loss levels off higher ends less accurate.
  eval.accuracy = std::clamp(0.97 - (floor_ - 0.15) - 0.85 * std::exp(-static_cast<double>(eval.epoch) * speed_ / 6.0),
                             0.0, 1.0);
  return eval;
}

}  // namespace livemon::livemonctl
