#include <livemonctl/demo_ranks.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <memory>
#include <ostream>
#include <random>
#include <thread>
#include <vector>

#include <livemon/event_handler.h>
#include <livemon/run_config.h>
#include <livemon/stat.h>
#include <livemon/step.h>
#include <livemon/system_stats.h>
#include <livemon/transport/publisher.h>
#include <livemonctl/command.h>
#include <livemonctl/synthetic_training_job.h>

namespace livemon::livemonctl {

namespace {

constexpr std::string_view kCommand = "demo";
// Stats log through the process-wide handlers, where every Publisher would take every rank's
// windows. So each rank's Stats carry this prefix and the rank; one handler strips it and hands
// the window to that rank's publisher alone.
constexpr std::string_view kRankPrefix = "livemon.demo.rank";
constexpr std::chrono::milliseconds kStopCheck{50};
// A rank's compute is this share of the synthetic job's step time, and the allreduce's own
// exchange this share of the step period: with 32 ranks the job then runs near the asked pace
// (its step time is the slowest rank's compute plus the exchange).
constexpr double kComputeShare = 0.7;
constexpr double kCommShare = 0.1;

// The rank a Stat window belongs to, from its first key ("livemon.demo.rank<R>/<stat>.<agg>"),
// and where the stat's own name starts.
std::optional<std::pair<std::size_t, std::size_t>> rankOf(const Event& event) {
  if (event.name != kStatEventName || event.data.empty()) return std::nullopt;
  const std::string& key = event.data.begin()->first;
  if (key.compare(0, kRankPrefix.size(), kRankPrefix) != 0) return std::nullopt;
  std::size_t rank = 0;
  const char* begin = key.data() + kRankPrefix.size();
  const auto [end, error] = std::from_chars(begin, key.data() + key.size(), rank);
  if (error != std::errc() || end == key.data() + key.size() || *end != '/') return std::nullopt;
  return std::pair{rank, static_cast<std::size_t>(end - key.data()) + 1};
}

struct Rank {
  std::unique_ptr<transport::Publisher> publisher;
  std::unique_ptr<SyntheticTrainingJob> job;
  std::vector<std::unique_ptr<Stat>> stats;  // in the order of TrainingStep's fields below
};

// Publishes `event` as `rank`'s, and records it as that rank's when there is a recording.
void publishAs(const Rank& rank, const Event& event, DemoRecording* recording) {
  rank.publisher->publish(event);
  if (recording != nullptr) recording->record(event, rank.publisher->identity());
}

}  // namespace

std::vector<RankStepTimes> synchronousStep(const std::vector<double>& computeMs, double commMs) {
  std::vector<RankStepTimes> times(computeMs.size());
  if (computeMs.empty()) return times;
  const double slowest = *std::max_element(computeMs.begin(), computeMs.end());
  for (std::size_t r = 0; r < computeMs.size(); ++r) {
    times[r].computeMs = computeMs[r];
    times[r].allreduceMs = slowest - computeMs[r] + commMs;
    times[r].stepMs = slowest + commMs;
  }
  return times;
}

std::string rankEndpoint(const std::string& endpoint, int64_t rank) {
  if (rank == 0) return endpoint;
  if (endpoint.rfind("tcp://", 0) == 0) {
    const auto colon = endpoint.rfind(':');
    int port = 0;
    const char* first = endpoint.data() + colon + 1;
    const char* last = endpoint.data() + endpoint.size();
    const auto [end, error] = std::from_chars(first, last, port);
    if (colon == std::string::npos || error != std::errc() || end != last) return endpoint;  // "*" or a name
    return endpoint.substr(0, colon + 1) + std::to_string(port + rank);
  }
  return endpoint + "-" + std::to_string(rank);
}

std::string demoStopsWhen(const DemoOptions& options) {
  if (options.steps > 0 && options.duration.count() > 0) {
    return "stops after " + std::to_string(options.steps) + " steps or " + std::to_string(options.duration.count()) +
           " ms";
  }
  if (options.steps > 0) return "stops after " + std::to_string(options.steps) + " steps";
  if (options.duration.count() > 0) return "stops after " + std::to_string(options.duration.count()) + " ms";
  return "Ctrl-C stops it";
}

int runDemoRanks(const DemoOptions& options, DemoRecording* recording, const std::atomic<bool>& stop, std::ostream& out) {
  const auto count = static_cast<std::size_t>(options.ranks);
  const double periodMs = 1000.0 / options.stepsPerSecond;
  const uint64_t seed = options.seed != 0 ? options.seed : std::random_device{}();

  std::vector<Rank> ranks(count);
  for (std::size_t r = 0; r < count; ++r) {
    transport::PublisherOptions publisherOptions;
    if (options.connect.empty()) {
      publisherOptions.bind = {rankEndpoint(options.endpoint, static_cast<int64_t>(r))};
      // N ranks in one process share the default history rather than take it N times.
      if (std::getenv(std::string(transport::kHistoryEnvironmentVariable).c_str()) == nullptr) {
        publisherOptions.historyBytes = std::max<std::size_t>(1024 * 1024, transport::kDefaultHistoryBytes / count);
      }
    } else {
      publisherOptions.bind.clear();
      publisherOptions.connect = {options.connect};
    }
    publisherOptions.runName = options.runName;
    publisherOptions.curve = options.curve;
    // One process stands for one node of `count` ranks.
    publisherOptions.rank = static_cast<int64_t>(r);
    publisherOptions.worldSize = static_cast<int64_t>(count);
    publisherOptions.localRank = static_cast<int64_t>(r);
    publisherOptions.handleLoggedEvents = false;
    publisherOptions.statName.clear();  // its counters travel in its heartbeats
    ranks[r].publisher = std::make_unique<transport::Publisher>(publisherOptions);
    // A rank of its own: another seed, and step times a few per cent off the others'.
    ranks[r].job = std::make_unique<SyntheticTrainingJob>(seed + 7919 * r, periodMs * (1.0 + 0.02 * static_cast<double>(r % 5)),
                                                          options.stepsPerEpoch, jobShapeOf(options.config));
    ranks[r].job->divergeAt(options.divergeAt);
  }

  struct ClearStepOnExit {
    ~ClearStepOnExit() { clearStep(); }
  } clearStepOnExit;
  // Registered before the Stats exist and removed after they logged their last windows.
  struct Router {
    EventHandlerHandle handle;
    ~Router() { unregisterEventHandler(handle); }
  } router;
  // The config, as each rank's own event: no publisher here takes the one setRunConfig logs.
  if (!options.config.empty()) {
    setRunConfig(options.config);
    if (const auto event = currentRunConfigEvent()) {
      for (const Rank& rank : ranks) publishAs(rank, *event, recording);
    }
  }
  router.handle = registerEventHandler([&ranks, recording](const Event& event) {
    const auto rank = rankOf(event);
    if (!rank || rank->first >= ranks.size()) return;
    Event own{event.name, event.timestamp, {}};
    own.step = statedStep(event);
    for (const auto& [key, value] : event.data) {
      if (key.size() > rank->second) own.data.emplace(key.substr(rank->second), value);
    }
    publishAs(ranks[rank->first], own, recording);
  });
  for (std::size_t r = 0; r < count; ++r) {
    const std::string prefix = std::string(kRankPrefix) + std::to_string(r) + "/";
    auto stat = [&](const char* name, std::vector<Aggregation> aggregations) {
      ranks[r].stats.push_back(std::make_unique<Stat>(prefix + name, std::move(aggregations), options.window));
    };
    stat("train.loss", {Aggregation::Mean, Aggregation::Min, Aggregation::Max});
    stat("train.lr", {Aggregation::Value});
    stat("train.samples_per_s", {Aggregation::Mean});
    stat("train.step_time_ms", {Aggregation::Mean, Aggregation::P50, Aggregation::P90, Aggregation::P99});
    stat("train.grad_norm", {Aggregation::Mean, Aggregation::Max});
    stat("system.memory_gb", {Aggregation::Value, Aggregation::Max});
    stat("train.compute_time_ms", {Aggregation::Mean, Aggregation::Max});
    stat("train.allreduce_time_ms", {Aggregation::Mean, Aggregation::Max});
  }
  // The ranks share this process, so they share its CPU, memory and GPUs: one sampler, whose
  // Stats go out once, as rank 0's (N copies of one number would only look like N machines).
  SystemStatsOptions systemOptions;
  systemOptions.prefix = std::string(kRankPrefix) + "0/system";
  systemOptions.window = options.window;
  auto systemStats = std::make_unique<SystemStatsSampler>(systemOptions);

  commandMessage(out, kCommand) << "run \"" << options.runName << "\", " << count << " ranks publishing "
                                << (options.connect.empty() ? "on " : "into ")
                                << (options.connect.empty() ? ranks[0].publisher->endpoints().front() : options.connect)
                                << (options.connect.empty() && count > 1 ? " (rank 0) and on" : "");
  if (options.connect.empty()) {
    for (std::size_t r = 1; r < count; ++r) out << ' ' << ranks[r].publisher->endpoints().front();
  }
  out << "\n  system Stats of this process every second, as rank 0's; " << systemStats->gpuStatus();
  out << "\n  " << options.stepsPerSecond << " steps/s, " << options.window.count() << " ms Stat windows; "
      << demoStopsWhen(options);
  if (recording != nullptr) out << "\n  recording every rank's events to " << recording->path();
  if (options.straggler) {
    out << "\n  rank " << *options.straggler << " is a straggler: it computes " << options.stragglerFactor
        << " times as long, and the others wait for it in every allreduce";
  }
  out << std::endl;

  const auto start = std::chrono::steady_clock::now();
  const auto end = options.duration.count() > 0 ? start + options.duration : std::chrono::steady_clock::time_point::max();
  const double commMs = kCommShare * periodMs;
  std::vector<TrainingStep> trained(count);
  std::vector<double> computeMs(count);
  double simulatedMs = 0;  // the job's time: the sum of its step times
  int64_t steps = 0;
  while (!stop.load(std::memory_order_relaxed) && std::chrono::steady_clock::now() < end &&
         (options.steps == 0 || steps < options.steps)) {
    for (std::size_t r = 0; r < count; ++r) {
      trained[r] = ranks[r].job->next();
      const bool straggler = options.straggler && static_cast<std::size_t>(*options.straggler) == r;
      computeMs[r] = kComputeShare * trained[r].stepTimeMs * (straggler ? options.stragglerFactor : 1.0);
    }
    const std::vector<RankStepTimes> times = synchronousStep(computeMs, commMs);
    for (std::size_t r = 0; r < count; ++r) {
      Rank& rank = ranks[r];
      const TrainingStep& s = trained[r];
      const RankStepTimes& t = times[r];
      setStep(s.step);
      // The same batch in the step every rank takes.
      const double samplesPerSecond = s.samplesPerSecond * s.stepTimeMs / t.stepMs;
      const double values[] = {s.loss,     s.learningRate, samplesPerSecond, t.stepMs,
                               s.gradNorm, s.memoryGb,     t.computeMs,      t.allreduceMs};
      for (std::size_t i = 0; i < rank.stats.size(); ++i) rank.stats[i]->add(values[i]);
      if (const auto eval = rank.job->evalDue()) {
        Event event{"eval",
                    std::chrono::system_clock::now(),
                    {{"epoch", eval->epoch}, {"step", eval->step}, {"accuracy", eval->accuracy}, {"loss", eval->loss}}};
        publishAs(rank, event, recording);
      }
    }
    ++steps;
    if (recording != nullptr) recording->flushIfDue();
    simulatedMs += times.front().stepMs;
    const auto next = std::min(end, start + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                                               std::chrono::duration<double, std::milli>(simulatedMs)));
    while (!stop.load(std::memory_order_relaxed) && std::chrono::steady_clock::now() < next) {
      std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(next - std::chrono::steady_clock::now(), kStopCheck));
    }
  }
  // The last windows go out before the publishers close.
  for (Rank& rank : ranks) rank.stats.clear();
  systemStats.reset();
  uint64_t published = 0, dropped = 0;
  for (const Rank& rank : ranks) {
    published += rank.publisher->publishedCount();
    dropped += rank.publisher->droppedCount();
  }
  commandMessage(out, kCommand) << "stopped after " << steps << " steps of " << count << " ranks; published "
                                << published << " events, dropped " << dropped << std::endl;
  return 0;
}

}  // namespace livemon::livemonctl
