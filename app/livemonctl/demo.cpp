#include <livemonctl/demo.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <optional>
#include <ostream>
#include <stdexcept>
#include <thread>

#include <livemon/event_handler.h>
#include <livemon/profiler.h>
#include <livemon/record_function.h>
#include <livemon/stat.h>
#include <livemon/step.h>
#include <livemon/system_stats.h>
#include <livemon/wait_counter.h>
#include <livemon/transport/publisher.h>
#include <livemonctl/command.h>
#include <livemonctl/demo_ranks.h>
#include <livemonctl/text_format.h>

namespace livemon::livemonctl {

namespace {

constexpr std::string_view kCommand = "demo";

constexpr double kPi = 3.14159265358979323846;
constexpr int64_t kWarmupSteps = 200;
constexpr int64_t kScheduleSteps = 20000;  // one cosine cycle of the learning rate
constexpr double kPeakLearningRate = 3e-4;
constexpr double kFinalLearningRate = 1e-5;
// The longest sleep between checks of the stop flag.
constexpr std::chrono::milliseconds kStopCheck{50};
// Each rank is a Publisher with its own I/O thread and sockets.
constexpr int64_t kMaxRanks = 1024;
// A rank a thousand times slower already stalls the run; more only makes the numbers absurd.
constexpr double kMaxStragglerFactor = 1000;

void sleepUntil(std::chrono::steady_clock::time_point until, const std::atomic<bool>& stop) {
  while (!stop.load(std::memory_order_relaxed)) {
    const auto now = std::chrono::steady_clock::now();
    if (now >= until) return;
    std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(until - now, kStopCheck));
  }
}

}  // namespace

SyntheticTrainingJob::SyntheticTrainingJob(uint64_t seed, double stepPeriodMs, int64_t stepsPerEpoch,
                                           int64_t batchSize)
    : random_(seed), stepPeriodMs_(stepPeriodMs), stepsPerEpoch_(stepsPerEpoch), batchSize_(batchSize) {}

TrainingStep SyntheticTrainingJob::next() {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  TrainingStep s;
  s.step = step_++;
  const double t = static_cast<double>(s.step);

  // Loss: an exponential fall to a floor, multiplicative noise, and a rare spike.
  const double trend = 0.15 + 2.2 * std::exp(-t / 1500.0);
  const bool spike = uniform(random_) < 0.01;
  s.loss = trend * (1.0 + 0.06 * normal(random_)) * (spike ? 2.5 + uniform(random_) : 1.0);
  smoothedLoss_ = s.step == 0 ? s.loss : 0.98 * smoothedLoss_ + 0.02 * s.loss;

  if (s.step < kWarmupSteps) {
    s.learningRate = kPeakLearningRate * (t + 1) / kWarmupSteps;
  } else {
    const double progress = std::fmod(t - kWarmupSteps, static_cast<double>(kScheduleSteps)) / kScheduleSteps;
    s.learningRate = kFinalLearningRate + 0.5 * (kPeakLearningRate - kFinalLearningRate) * (1 + std::cos(kPi * progress));
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
  eval.accuracy = std::clamp(0.97 - 0.85 * std::exp(-static_cast<double>(eval.epoch) / 6.0), 0.0, 1.0);
  return eval;
}

namespace {

int demo(const DemoOptions& options, const std::atomic<bool>& stop, std::ostream& out) {
  if (!(options.stepsPerSecond > 0) || options.stepsPerSecond > 100000) {
    throw std::invalid_argument("steps per second must be in (0, 100000], got " + std::to_string(options.stepsPerSecond));
  }
  if (options.window.count() < 1) {
    throw std::invalid_argument("window must be at least 1 ms, got " + std::to_string(options.window.count()) + " ms");
  }
  if (options.duration.count() < 0) throw std::invalid_argument("duration must not be negative");
  if (options.stepsPerEpoch < 1) {
    throw std::invalid_argument("steps per epoch must be at least 1, got " + std::to_string(options.stepsPerEpoch));
  }

  if (options.ranks < 1 || options.ranks > kMaxRanks) {
    throw std::invalid_argument("ranks must be 1.." + std::to_string(kMaxRanks) + ", got " + std::to_string(options.ranks));
  }
  if (options.straggler && (*options.straggler < 0 || *options.straggler >= options.ranks)) {
    throw std::invalid_argument("straggler must be a rank in 0.." + std::to_string(options.ranks - 1) + ", got " +
                                std::to_string(*options.straggler));
  }
  if (!std::isfinite(options.stragglerFactor) || options.stragglerFactor <= 0 || options.stragglerFactor > kMaxStragglerFactor) {
    throw std::invalid_argument("straggler factor must be above 0 and at most " + shortestDouble(kMaxStragglerFactor) +
                                ", got " + shortestDouble(options.stragglerFactor));
  }
  if (options.ranks > 1 || options.straggler) return runDemoRanks(options, stop, out);

  transport::PublisherOptions publisherOptions;
  if (options.connect.empty()) {
    publisherOptions.bind = {options.endpoint};
  } else {
    publisherOptions.bind.clear();
    publisherOptions.connect = {options.connect};
  }
  publisherOptions.runName = options.runName;
  publisherOptions.curve = options.curve;
  publisherOptions.metricsPort = options.metricsPort;
  publisherOptions.metricsAddress = options.metricsAddress;
  publisherOptions.statWindow = options.window;
  publisherOptions.systemStats = true;  // what a real job would show beside its own Stats
  transport::Publisher publisher(publisherOptions);

  const double periodMs = 1000.0 / options.stepsPerSecond;
  const uint64_t seed = options.seed != 0 ? options.seed : std::random_device{}();
  SyntheticTrainingJob job(seed, periodMs, options.stepsPerEpoch);
  job.divergeAt(options.divergeAt);

  // Declared before the Stats, so it clears the step after their last windows are logged: a demo
  // run inside another program (a test) leaves no step behind.
  struct ClearStepOnExit {
    ~ClearStepOnExit() { clearStep(); }
  } clearStepOnExit;
  const auto window = options.window;
  Stat loss("train.loss", {Aggregation::Mean, Aggregation::Min, Aggregation::Max}, window);
  Stat learningRate("train.lr", {Aggregation::Value}, window);
  Stat samplesPerSecond("train.samples_per_s", {Aggregation::Mean}, window);
  Stat stepTime("train.step_time_ms", {Aggregation::Mean, Aggregation::P50, Aggregation::P90, Aggregation::P99}, window);
  Stat gradNorm("train.grad_norm", {Aggregation::Mean, Aggregation::Max}, window);
  Stat memory("system.memory_gb", {Aggregation::Value, Aggregation::Max}, window);
  WaitCounter dataLoading("train.data_loading");

  setThreadName("train");
  setRangeStatsEnabled(true, window);
  std::optional<Profiler> profiler;
  if (!options.traceDir.empty()) {
    ProfilerOptions profilerOptions;
    profilerOptions.schedule = Schedule(options.traceWait, options.traceWarmup, options.traceActive, options.traceRepeat);
    profilerOptions.onTraceReady = [&out, dir = std::filesystem::path(options.traceDir)](const Trace& trace) {
      out << "trace of step " << trace.step << ": " << writeChromeTraceToDir(trace, dir, "demo").string() << std::endl;
    };
    profiler.emplace(std::move(profilerOptions));
  }

  commandMessage(out, kCommand) << "run \"" << publisher.identity().run << "\" publishing on";
  for (const std::string& endpoint : publisher.endpoints()) out << ' ' << endpoint;
  out << "\n  " << options.stepsPerSecond << " steps/s, " << options.window.count() << " ms Stat windows, "
      << options.stepsPerEpoch << " steps per epoch; ";
  if (options.duration.count() > 0) {
    out << "stops after " << options.duration.count() << " ms";
  } else {
    out << "Ctrl-C stops it";
  }
  out << "\n  system Stats of this process every second; " << sharedSystemStatsSampler(window)->gpuStatus();
  out << "\n  watch it with: livemonctl tail " << publisher.endpoints().front();
  if (options.curve.enabled() && options.connect.empty()) {
    out << " --curve-server SERVER.key --curve-client YOURS.key_secret (the server's public half of "
        << options.curve.certificate << "; yours in " << options.curve.allow << ")";
  }
  if (publisher.metricsPort() != 0) {
    out << "\n  Prometheus metrics: http://" << options.metricsAddress << ':' << publisher.metricsPort() << "/metrics";
  }
  out << std::endl;

  const auto start = std::chrono::steady_clock::now();
  const auto end = options.duration.count() > 0 ? start + options.duration : std::chrono::steady_clock::time_point::max();
  const auto period = std::chrono::duration<double, std::milli>(periodMs);
  auto after = [](std::chrono::steady_clock::time_point t, double ms) {
    return t + std::chrono::duration_cast<std::chrono::steady_clock::duration>(std::chrono::duration<double, std::milli>(ms));
  };
  if (profiler) profiler->start();
  int64_t steps = 0;
  while (!stop.load(std::memory_order_relaxed) && std::chrono::steady_clock::now() < end) {
    const auto stepStart = start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(period * static_cast<double>(steps));
    const TrainingStep s = job.next();
    setStep(s.step);  // what every event and Stat window of this step carries
    {
      // The step's time split as a training step's: data, forward, backward (its last fifth an
      // allreduce), optimizer.
      LIVEMON_RECORD_FUNCTION("train_step");
      {
        LIVEMON_RECORD_FUNCTION("data");
        WaitGuard wait = dataLoading.start();
        sleepUntil(after(stepStart, s.dataWaitMs), stop);
      }
      const double computeMs = s.stepTimeMs - s.dataWaitMs;
      auto t = after(stepStart, s.dataWaitMs);
      {
        LIVEMON_RECORD_FUNCTION("forward");
        sleepUntil(t = after(t, 0.3 * computeMs), stop);
      }
      {
        LIVEMON_RECORD_FUNCTION("backward");
        sleepUntil(t = after(t, 0.48 * computeMs), stop);
        LIVEMON_RECORD_FUNCTION("allreduce");
        sleepUntil(t = after(t, 0.12 * computeMs), stop);
      }
      {
        LIVEMON_RECORD_FUNCTION("optimizer");
        sleepUntil(t = after(t, 0.1 * computeMs), stop);
      }
    }
    loss.add(s.loss);
    learningRate.add(s.learningRate);
    samplesPerSecond.add(s.samplesPerSecond);
    stepTime.add(s.stepTimeMs);
    gradNorm.add(s.gradNorm);
    memory.add(s.memoryGb);
    if (const auto eval = job.evalDue()) {
      logEvent(Event{"eval",
                     std::chrono::system_clock::now(),
                     {{"epoch", eval->epoch}, {"step", eval->step}, {"accuracy", eval->accuracy}, {"loss", eval->loss}}});
      out << "epoch " << eval->epoch << " (step " << eval->step << "): accuracy " << eval->accuracy << ", loss "
          << eval->loss << std::endl;
    }
    ++steps;
    if (profiler) profiler->step();
    sleepUntil(std::min(end, start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                          period * static_cast<double>(steps))),
               stop);
  }
  if (profiler) profiler->stop();
  setRangeStatsEnabled(false);
  flushRangeStats();  // the last range windows go out before the publisher closes
  commandMessage(out, kCommand) << "stopped after " << steps << " steps; published " << publisher.publishedCount()
      << " events, dropped " << publisher.droppedCount() << std::endl;
  return 0;
}

}  // namespace

int runDemo(const DemoOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err) {
  return runCommand(kCommand, err, [&] { return demo(options, stop, out); });
}

}  // namespace livemon::livemonctl
