#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <random>
#include <string>

#include <livemon/transport/curve.h>
#include <livemon/transport/wire_format.h>

// `livemonctl demo`: a synthetic training job that publishes what a real one would.
namespace livemon::livemonctl {

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

// An evaluation at the end of an epoch.
struct EvalResult {
  int64_t epoch = 0;
  int64_t step = 0;
  double accuracy = 0;
  double loss = 0;
};

// Not thread-safe: one job belongs to one thread.
// Generates the numbers of a plausible training run; deterministic for a given seed.
class SyntheticTrainingJob {
 public:
  SyntheticTrainingJob(uint64_t seed, double stepPeriodMs, int64_t stepsPerEpoch, int64_t batchSize = 64);

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
  int64_t step_ = 0;
  double smoothedLoss_ = 0;
  int64_t divergeAt_ = 0;
};

struct DemoOptions {
  std::string endpoint{transport::kDefaultEndpoint};  // bound by the demo's publisher (see rankEndpoint)
  std::string connect;  // when set, the publishers connect here (a relay) instead of binding
  int64_t ranks = 1;    // publishers in the process, ranks 0..ranks-1 (runDemoRanks)
  // With ranks: this rank computes stragglerFactor times slower than it would, and every other
  // rank waits for it in the allreduce (runDemoRanks). Must be in 0..ranks-1; the factor finite
  // and above 0.
  std::optional<int64_t> straggler;
  double stragglerFactor = 2.0;
  double stepsPerSecond = 10;
  std::chrono::milliseconds window{1000};   // Stat window
  std::chrono::milliseconds duration{0};    // 0: until stopped
  int64_t stepsPerEpoch = 100;
  std::string runName = "demo";
  uint64_t seed = 0;  // 0: a random seed
  int64_t divergeAt = 0;  // SyntheticTrainingJob::divergeAt; 0: never
  // PublisherOptions::metricsPort: serves the demo's Stats for Prometheus on this port (0: the
  // LIVEMON_METRICS_PORT environment variable, else off).
  uint16_t metricsPort = 0;
  std::string metricsAddress = "127.0.0.1";
  // When set, a Profiler with the schedule (wait, warmup, active, repeat) writes Chrome traces
  // of the demo's ranges into this directory.
  std::string traceDir;
  int64_t traceWait = 10, traceWarmup = 2, traceActive = 5, traceRepeat = 0;
  // CURVE (transport::CurveOptions): --curve-secret, --curve-allow, --curve-server, --require-curve.
  transport::CurveOptions curve;
};

// Runs the demo until `stop` becomes true or `duration` passes (with ranks > 1 or a straggler:
// runDemoRanks): publishes Stats (train.loss,
// train.lr, train.samples_per_s, train.step_time_ms with p50/p90/p99, train.grad_norm,
// system.memory_gb), an "eval" event each epoch, a WaitCounter "train.data_loading", and nested
// ranges (train_step around data, forward, backward with allreduce inside, optimizer) timed live
// as range/<name> Stats with the Stat window. Prints where it publishes, and each eval, to `out`.
// Returns the exit code: 0, or kFailedExitCode for a bad option or an endpoint that cannot be
// bound (`err` names it).
int runDemo(const DemoOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err);

}  // namespace livemon::livemonctl
