#include <livemonctl/demo.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <memory>
#include <optional>
#include <ostream>
#include <random>
#include <stdexcept>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>

#include <livemon/event_handler.h>
#include <livemon/profiler.h>
#include <livemon/record_function.h>
#include <livemon/run_config.h>
#include <livemon/stat.h>
#include <livemon/step.h>
#include <livemon/system_stats.h>
#include <livemon/wait_counter.h>
#include <livemon/transport/publisher.h>
#include <livemonctl/command.h>
#include <livemonctl/demo_ranks.h>
#include <livemonctl/demo_recording.h>
#include <livemonctl/run_config_option.h>
#include <livemonctl/synthetic_training_job.h>
#include <livemonctl/text_format.h>

namespace livemon::livemonctl {

namespace {

constexpr std::string_view kCommand = "demo";

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

void checkOptions(const DemoOptions& options) {
  if (!(options.stepsPerSecond > 0) || options.stepsPerSecond > 100000) {
    throw std::invalid_argument("steps per second must be in (0, 100000], got " + std::to_string(options.stepsPerSecond));
  }
  if (options.window.count() < 1) {
    throw std::invalid_argument("window must be at least 1 ms, got " + std::to_string(options.window.count()) + " ms");
  }
  if (options.duration.count() < 0) throw std::invalid_argument("duration must not be negative");
  if (options.steps < 0) throw std::invalid_argument("steps must not be negative, got " + std::to_string(options.steps));
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
}

// Not thread-safe: one owner at a time (the demo's loop). The Stats a single-rank demo publishes,
// with the Stat window; their last windows are logged when they are destroyed.
struct DemoStats {
  explicit DemoStats(std::chrono::milliseconds window)
      : loss("train.loss", {Aggregation::Mean, Aggregation::Min, Aggregation::Max}, window),
        learningRate("train.lr", {Aggregation::Value}, window),
        samplesPerSecond("train.samples_per_s", {Aggregation::Mean}, window),
        stepTime("train.step_time_ms", {Aggregation::Mean, Aggregation::P50, Aggregation::P90, Aggregation::P99}, window),
        gradNorm("train.grad_norm", {Aggregation::Mean, Aggregation::Max}, window),
        memory("system.memory_gb", {Aggregation::Value, Aggregation::Max}, window) {}

  Stat loss;
  Stat learningRate;
  Stat samplesPerSecond;
  Stat stepTime;
  Stat gradNorm;
  Stat memory;
};

// Not thread-safe: one owner at a time; its handler runs on any thread that logs. Until destroyed,
// every event logged in this process is also written into `recording` as `source`'s (the
// single-rank demo's publisher handles them all).
struct RecordLoggedEvents {
  RecordLoggedEvents(DemoRecording* recording, const SourceInfo& source) {
    if (recording != nullptr) {
      handle = registerEventHandler([recording, &source](const Event& event) { recording->record(event, source); });
    }
  }
  ~RecordLoggedEvents() { unregisterEventHandler(handle); }
  RecordLoggedEvents(const RecordLoggedEvents&) = delete;
  RecordLoggedEvents& operator=(const RecordLoggedEvents&) = delete;

  EventHandlerHandle handle;
};

int runSingleRank(const DemoOptions& options, DemoRecording* recording, const std::atomic<bool>& stop, std::ostream& out) {
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
  SyntheticTrainingJob job(seed, periodMs, options.stepsPerEpoch, jobShapeOf(options.config));
  job.divergeAt(options.divergeAt);

  // Declared before the Stats, so it clears the step after their last windows are logged: a demo
  // run inside another program (a test) leaves no step behind.
  struct ClearStepOnExit {
    ~ClearStepOnExit() { clearStep(); }
  } clearStepOnExit;
  const auto window = options.window;
  // Registered before the Stats exist and removed after they logged their last windows.
  std::optional<RecordLoggedEvents> recordLogged(std::in_place, recording, publisher.identity());
  if (!options.config.empty()) setRunConfig(options.config);
  std::optional<DemoStats> stats(std::in_place, window);
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
  out << demoStopsWhen(options);
  if (recording != nullptr) out << "\n  recording its events to " << recording->path();
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
  while (!stop.load(std::memory_order_relaxed) && std::chrono::steady_clock::now() < end &&
         (options.steps == 0 || steps < options.steps)) {
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
    stats->loss.add(s.loss);
    stats->learningRate.add(s.learningRate);
    stats->samplesPerSecond.add(s.samplesPerSecond);
    stats->stepTime.add(s.stepTimeMs);
    stats->gradNorm.add(s.gradNorm);
    stats->memory.add(s.memoryGb);
    if (const auto eval = job.evalDue()) {
      logEvent(Event{"eval",
                     std::chrono::system_clock::now(),
                     {{"epoch", eval->epoch}, {"step", eval->step}, {"accuracy", eval->accuracy}, {"loss", eval->loss}}});
      out << "epoch " << eval->epoch << " (step " << eval->step << "): accuracy " << eval->accuracy << ", loss "
          << eval->loss << std::endl;
    }
    ++steps;
    if (recording != nullptr) recording->flushIfDue();
    if (profiler) profiler->step();
    sleepUntil(std::min(end, start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                          period * static_cast<double>(steps))),
               stop);
  }
  if (profiler) profiler->stop();
  setRangeStatsEnabled(false);
  flushRangeStats();  // the last range windows go out before the publisher closes
  stats.reset();      // and the Stats' last windows, recorded too
  recordLogged.reset();
  commandMessage(out, kCommand) << "stopped after " << steps << " steps; published " << publisher.publishedCount()
      << " events, dropped " << publisher.droppedCount() << std::endl;
  return 0;
}

int demo(const DemoOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err) {
  checkOptions(options);
  std::unique_ptr<DemoRecording> recording;
  if (!options.recordPath.empty()) {
    try {
      recording = std::make_unique<DemoRecording>(options.recordPath);
    } catch (const transport::RecordingError& error) {
      commandMessage(err, kCommand) << error.what() << '\n';
      return kFailedExitCode;
    }
  }
  // A demo run inside another program (a test) leaves no config behind.
  struct ClearConfigOnExit {
    ~ClearConfigOnExit() { clearRunConfig(); }
  } clearConfigOnExit;
  const int exitCode = options.ranks > 1 || options.straggler ? runDemoRanks(options, recording.get(), stop, out)
                                                              : runSingleRank(options, recording.get(), stop, out);
  if (recording == nullptr) return exitCode;
  if (!recording->close()) {
    commandMessage(err, kCommand) << "recording failed: " << recording->failure() << " (" << recording->eventCount()
                                  << " events recorded, " << recording->unrecordedCount() << " not)\n";
    return kFailedExitCode;
  }
  commandMessage(out, kCommand) << "recorded " << recording->eventCount() << " events to " << recording->path()
                                << std::endl;
  return exitCode;
}

}  // namespace

int runDemo(const DemoOptions& options, const std::atomic<bool>& stop, std::ostream& out, std::ostream& err) {
  return runCommand(kCommand, err, [&] { return demo(options, stop, out, err); });
}

Command addDemoCommand(CLI::App& app) {
  // What the options parse into, kept alive by the returned command.
  struct Parsed {
    DemoOptions demo;
    double window = 1.0;
    double duration = 0.0;
    int64_t straggler = -1;
    std::vector<int64_t> traceSchedule;
    std::vector<std::string> config;
  };
  const auto parsed = std::make_shared<Parsed>();
  DemoOptions& demo = parsed->demo;
  CLI::App* command = app.add_subcommand("demo", "Run a synthetic training job that publishes its Stats and events");
  command->add_option("--endpoint", demo.endpoint, "Endpoint to bind (with --ranks, rank R binds the port R above)")
      ->capture_default_str();
  command->add_option("--connect", demo.connect, "Connect to EP (a relay's --listen) instead of binding")
      ->option_text("EP");
  command->add_option("--ranks", demo.ranks, "Run N ranks in this process, each its own publisher (ranks 0..N-1)")
      ->option_text("N")
      ->check(CLI::Range(int64_t{1}, int64_t{1024}))
      ->capture_default_str();
  command->add_option("--steps-per-second", demo.stepsPerSecond, "Training steps per second")
      ->check(CLI::Range(0.001, 100000.0))
      ->capture_default_str();
  command->add_option("--window", parsed->window, "Stat window in seconds")->check(CLI::Range(0.001, 86400.0))->capture_default_str();
  command->add_option("--duration", parsed->duration, "Stop after this many seconds (0: run until Ctrl-C)")
      ->check(CLI::Range(0.0, 1e9))
      ->capture_default_str();
  command->add_option("--steps-per-epoch", demo.stepsPerEpoch, "Steps between eval events")
      ->check(CLI::Range(int64_t{1}, int64_t{1'000'000'000}))
      ->capture_default_str();
  command->add_option("--run", demo.runName, "Run name the demo publishes under")->capture_default_str();
  // A malformed entry is a usage error, as CLI11's own checks are.
  static const CLI::Validator configEntry(
      [](std::string& entry) {
        try {
          parseConfigEntries({entry});
          return std::string();
        } catch (const std::invalid_argument& error) {
          return std::string(error.what());
        }
      },
      "KEY=VALUE", "config entry");
  command->add_option("--config", parsed->config,
                      "The run's config, KEY=VALUE[,KEY=VALUE...] (repeatable): int, float, true/false or text. "
                      "lr and batch also shape the synthetic job")
      ->option_text("KEY=VALUE,...")
      ->delimiter(',')
      ->check(configEntry);
  command->add_option("--steps", demo.steps, "Stop after N training steps (0: run until Ctrl-C or --duration)")
      ->option_text("N")
      ->check(CLI::Range(int64_t{0}, int64_t{1'000'000'000'000}))
      ->capture_default_str();
  command->add_option("--record", demo.recordPath,
                      "Also write the demo's own events into the recording FILE (as livemonctl record would)")
      ->option_text("FILE");
  command->add_option("--seed", demo.seed, "Random seed (0: random)")->capture_default_str();
  command->add_option("--diverge-at", demo.divergeAt,
                      "From this step the loss blows up and, 40 steps later, becomes NaN, to try alerts (0: never)")
      ->option_text("STEP")
      ->check(CLI::Range(int64_t{0}, int64_t{1'000'000'000}))
      ->capture_default_str();
  command->add_option("--metrics-port", demo.metricsPort,
                      "Serve the demo's Stats for Prometheus at http://127.0.0.1:PORT/metrics (0: off)")
      ->option_text("PORT")
      ->capture_default_str();
  command->add_option("--metrics-address", demo.metricsAddress, "Address the metrics are served on")
      ->capture_default_str();
  command->add_option("--trace-dir", demo.traceDir,
                      "Run a profiler and write Chrome traces of the demo's ranges into this directory");
  CLI::Option* stragglerOption =
      command->add_option("--straggler", parsed->straggler,
                          "With --ranks: rank R computes --straggler-factor times as long, and the others wait for "
                          "it in each step's allreduce (R in 0..N-1)")
          ->option_text("R")
          ->check(CLI::Range(int64_t{0}, int64_t{1023}));
  command->add_option("--straggler-factor", demo.stragglerFactor, "How many times as long the straggler computes (2)")
      ->option_text("F")
      ->check(positiveFactor())
      ->needs(stragglerOption)
      ->capture_default_str();
  parsed->traceSchedule = {demo.traceWait, demo.traceWarmup, demo.traceActive, demo.traceRepeat};
  command->add_option("--trace-schedule", parsed->traceSchedule, "The profiler's WAIT WARMUP ACTIVE REPEAT steps")
      ->expected(4)
      ->check(CLI::Range(int64_t{0}, int64_t{1'000'000'000}))
      ->capture_default_str();
  addPublisherCurveOptions(*command, demo.curve, true);

  return {command, [parsed, command](const CommandContext& context) {
            DemoOptions options = parsed->demo;
            // A check that spans options, which CLI11 validates one at a time.
            if (parsed->straggler >= options.ranks) {
              return usageError(*command,
                                "--straggler: " + std::to_string(parsed->straggler) + " is not a rank of --ranks " +
                                    std::to_string(options.ranks) + " (0.." + std::to_string(options.ranks - 1) + ")",
                                context.err);
            }
            options.config = parseConfigEntries(parsed->config);
            options.window = secondsToMs(parsed->window);
            options.duration = secondsToMs(parsed->duration);
            if (parsed->straggler >= 0) options.straggler = parsed->straggler;
            options.traceWait = parsed->traceSchedule[0];
            options.traceWarmup = parsed->traceSchedule[1];
            options.traceActive = parsed->traceSchedule[2];
            options.traceRepeat = parsed->traceSchedule[3];
            return runDemo(options, context.stop, context.out, context.err);
          }};
}

}  // namespace livemon::livemonctl
