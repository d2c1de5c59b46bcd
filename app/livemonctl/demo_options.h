#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include <livemon/run_config.h>
#include <livemon/transport/curve.h>
#include <livemon/transport/wire_format.h>

// What `livemonctl demo` runs: one rank (demo.h) or several in one process (demo_ranks.h).
namespace livemon::livemonctl {

// Thread-safety: a plain value type.
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
  int64_t steps = 0;                        // stops after this many training steps; 0: until stopped
  int64_t stepsPerEpoch = 100;
  std::string runName = "demo";
  // The run's config (setRunConfig; with ranks, a livemon.run_config event from every rank). Its
  // "lr" and "batch" also shape the synthetic job (jobShapeOf). Empty: no config is sent.
  RunConfig config;
  // When set, the demo's own events are also written into this recording (DemoRecording).
  std::string recordPath;
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

}  // namespace livemon::livemonctl
