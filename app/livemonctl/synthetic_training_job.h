#pragma once

#include <cstdint>
#include <optional>
#include <random>

#include <livemon/run_config.h>

// The numbers a plausible training run produces, for `livemonctl demo` and its ranks.
namespace livemon::livemonctl {

// Thread-safety: a plain value type.
//
// The numbers of one simulated training step.
struct TrainingStep {
  int64_t step = 0;
  double loss = 0;              // falls, with noise and occasional spikes
  double learningRate = 0;      // linear warm-up, then cosine decay
  double gradNorm = 0;          // spikes with the loss
  double stepTimeMs = 0;        // mostly near the step period, with a slow tail
  double dataWaitMs = 0;        // part of the step spent waiting for data
  double samplesPerSecond = 0;  // batch size / step time
  double memoryGb = 0;          // a gauge: a slow sawtooth with noise
};

// Thread-safety: a plain value type.
//
// An evaluation at the end of an epoch.
struct EvalResult {
  int64_t epoch = 0;
  int64_t step = 0;
  double accuracy = 0;
  double loss = 0;
};

// Thread-safety: a plain value type.
//
// What a run's config changes in the job, so that runs of different configs differ on a chart.
struct JobShape {
  // The learning rate at the end of the warm-up. Above the default the loss falls faster and
  // noisier; away from 1e-3 either way it levels off higher (an optimum, as real sweeps have).
  std::optional<double> peakLearningRate;
  int64_t batchSize = 64;  // samples per step: samples_per_s
};

// The shape a demo's --config asks for: "lr" (a positive number) and "batch" (a positive integer);
// other keys, and values out of range, change nothing.
JobShape jobShapeOf(const RunConfig& config);

// Not thread-safe: one owner at a time; one job belongs to one thread. Generates the numbers of a
// plausible training run; deterministic for a given seed.
class SyntheticTrainingJob {
 public:
  SyntheticTrainingJob(uint64_t seed, double stepPeriodMs, int64_t stepsPerEpoch, JobShape shape = {});

  TrainingStep next();
  // From `step` on, the loss and gradient norm grow tenfold about every 15 steps and, 40 steps
  // later, become NaN: a run that diverges, to try alerts on. 0 (the default): never.
  void divergeAt(int64_t step) { divergeAt_ = step; }
  // The evaluation due after the step just returned by next(), if it ended an epoch.
  std::optional<EvalResult> evalDue() const;

 private:
  std::mt19937_64 random_;
  double stepPeriodMs_;
  int64_t stepsPerEpoch_;
  int64_t batchSize_;
  double peakLearningRate_;
  double speed_;        // how much faster than the default the loss falls
  double floor_;        // where the loss levels off
  double noise_;        // the loss's relative noise
  int64_t step_ = 0;
  double smoothedLoss_ = 0;
  int64_t divergeAt_ = 0;
};

}  // namespace livemon::livemonctl
