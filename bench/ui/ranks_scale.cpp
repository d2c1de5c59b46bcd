// ranks_scale: the dashboard fed by 1 024 ranks beside 64 ranks, in one run: the GUI tick's p99
// and the RSS over time, each rank count in its own child process (both at once unless
// --one-at-a-time), the same window, feed and limits.
//
// Each of --ranks (64,1024) ranks of one run (world size stated) sends --stats (20) Stats of four
// aggregations (mean, min, max, p50) once a second, rank 7 twice as slow, its window's events
// spread over the first 100 ms of the second as a cluster's arrive; they are built as
// transport::ReceivedEvents on a thread standing in for the subscriber and handed to
// IngestWorker::deliver. The window is MainWindow as shipped (rank groups, the Ranks view's
// scoring, the event log), 1600×1000, offscreen unless QT_QPA_PLATFORM says otherwise.
// Reported per rank count: tick p50/p99 after --warmup (60 s), the longest tick, and the RSS every
// --rss-every (60) seconds; "flat" compares the last two samples. RANKS_SCALE_COUNTS=1 also prints
// the series, stored points and log rows at the end, which is where the memory goes.
// --in-process runs one rank count in this process rather than a child: heaptrack and perf do not
// follow a fork (`heaptrack ranks_scale --ranks 1024 --in-process` is where docs/benchmarks.md's
// heap profile comes from).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <QApplication>
#include <QTemporaryDir>
#include <QTimer>

#include <livemon/transport/subscriber.h>
#include <livemon/ui/ingest/ingest_worker.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/dashboard_style.h>
#include <livemon/ui/widgets/main_window.h>

#include "bench_support.h"

namespace {

using livemon::bench::percentile;
using livemon::bench::rssMiB;
using Clock = std::chrono::steady_clock;

struct Config {
  std::vector<int> ranks{64, 1024};
  int stats = 20;
  double seconds = 300.0;
  double warmup = 60.0;
  double rssEvery = 60.0;
  bool together = true;
  bool inProcess = false;  // no child process: for heaptrack or perf, which do not follow a fork
};

struct Results {
  std::vector<double> tickMs;  // after the warm-up
  std::vector<double> rssMiB;  // every rssEvery seconds
  double maxTickMs = 0.0;
  std::size_t series = 0;
  std::size_t points = 0;
  std::size_t logRows = 0;
};

// The ranks' windows, on a thread of its own, into IngestWorker::deliver.
class RankFeeder {
 public:
  RankFeeder(int ranks, int stats, livemon::ui::IngestWorker& ingest) : stats_(stats), ingest_(ingest) {
    livemon::transport::SourceInfo info;
    info.run = "bench";
    info.host = "localhost";
    info.pid = getpid();
    info.worldSize = ranks;
    info.startTime = std::chrono::system_clock::now();
    for (int r = 0; r < ranks; ++r) {
      info.rank = r;
      info.instanceId = 1000 + static_cast<uint64_t>(r);
      sources_.push_back(std::make_shared<const livemon::transport::SourceInfo>(info));
    }
    endpoint_ = std::make_shared<const std::string>("synthetic://ranks_scale");
    thread_ = std::thread([this] { run(); });
  }
  ~RankFeeder() {
    stop_.store(true);
    thread_.join();
  }

 private:
  void run() {
    static const char* kAggregations[] = {"mean", "min", "max", "p50"};
    const auto start = Clock::now();
    const auto wallStart = std::chrono::system_clock::now();
    std::size_t next = 0;  // the next rank of the current window
    int64_t window = 0;
    std::vector<livemon::transport::ReceivedEvent> chunk;
    while (!stop_.load(std::memory_order_relaxed)) {
      // Window w's ranks arrive over [w s, w s + 100 ms).
      const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      const double into = elapsed - static_cast<double>(window);
      const std::size_t due = into < 0 ? 0 : std::min(sources_.size(), static_cast<std::size_t>(std::ceil(into / 0.1 * sources_.size())));
      chunk.clear();
      const auto at = wallStart + std::chrono::seconds(window);
      for (; next < due; ++next) {
        for (int stat = 0; stat < stats_; ++stat) {
          livemon::transport::ReceivedEvent event;
          event.event.name = "livemon.Stat";
          event.event.timestamp = at + std::chrono::microseconds(100 * next);
          event.source = sources_[next];
          event.endpoint = endpoint_;
          event.sequence = sequence_++;
          event.receivedAt = std::chrono::system_clock::now();
          char name[40] = "train.compute_time_ms.";  // the Ranks view's key
          if (stat > 0) std::snprintf(name, sizeof name, "bench.stat_%03d.", stat);
          const double level = (1 + stat % 7) * (1.0 + 0.05 * std::sin(static_cast<double>(next) * 1.7 + static_cast<double>(window))) *
                               (next == 7 ? 2.0 : 1.0);
          for (int a = 0; a < 4; ++a) event.event.data.emplace(std::string(name) + kAggregations[a], level + 0.1 * a);
          chunk.push_back(std::move(event));
        }
      }
      if (!chunk.empty()) ingest_.deliver(chunk);
      if (next == sources_.size()) {
        next = 0;
        ++window;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  int stats_;
  livemon::ui::IngestWorker& ingest_;
  std::vector<std::shared_ptr<const livemon::transport::SourceInfo>> sources_;
  std::shared_ptr<const std::string> endpoint_;
  uint64_t sequence_ = 0;
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

Results runSide(const Config& config, int ranks) {
  int argc = 1;
  char name[] = "ranks_scale";
  char* argv[] = {name, nullptr};
  QApplication app(argc, argv);
  livemon::ui::applyDashboardStyle(app);
  QTemporaryDir settings;
  livemon::ui::DashboardOptions options;
  options.exactEndpoints = true;  // no endpoints: the feeder is the only source
  options.settingsFile = settings.filePath(QStringLiteral("livemon.ini"));
  livemon::ui::MainWindow window(options);
  window.resize(1600, 1000);
  window.show();

  Results results;
  const auto start = Clock::now();
  QObject::connect(&window.dashboard(), &livemon::ui::Dashboard::refreshed, [&](qint64 nanoseconds) {
    const double ms = static_cast<double>(nanoseconds) / 1e6;
    if (std::chrono::duration<double>(Clock::now() - start).count() < config.warmup) return;
    results.tickMs.push_back(ms);
    results.maxTickMs = std::max(results.maxTickMs, ms);
  });
  QTimer rss;
  QObject::connect(&rss, &QTimer::timeout, [&] { results.rssMiB.push_back(rssMiB()); });
  rss.start(static_cast<int>(config.rssEvery * 1000));
  RankFeeder feeder(ranks, config.stats, window.dashboard().ingest());
  QTimer::singleShot(static_cast<int>(config.seconds * 1000), [&] { app.quit(); });
  QApplication::exec();
  const livemon::ui::StatRegistry& registry = window.dashboard().registry();
  const auto count = [&](const livemon::ui::SeriesEntry& entry) {
    ++results.series;
    results.points += entry.store.recentSize() + entry.store.bucketCount();
  };
  for (livemon::ui::SeriesId id = 0; id < registry.seriesIdEnd(); ++id) {
    if (const livemon::ui::SeriesEntry* entry = registry.series(id)) count(*entry);
  }
  for (livemon::ui::SeriesId id = livemon::ui::StatRegistry::kFirstDerivedSeries; registry.series(id) != nullptr; ++id) {
    count(*registry.series(id));
  }
  results.logRows = window.dashboard().eventLog().storedCount();
  return results;
}

std::string serialize(const Results& r) {
  std::ostringstream out;
  out.precision(17);
  out << r.maxTickMs << ' ' << r.series << ' ' << r.points << ' ' << r.logRows << ' ' << r.rssMiB.size();
  for (double v : r.rssMiB) out << ' ' << v;
  out << ' ' << r.tickMs.size();
  for (double v : r.tickMs) out << ' ' << v;
  return out.str();
}

Results deserialize(const std::string& text) {
  std::istringstream in(text);
  Results r;
  std::size_t n = 0;
  in >> r.maxTickMs >> r.series >> r.points >> r.logRows >> n;
  r.rssMiB.resize(n);
  for (double& v : r.rssMiB) in >> v;
  in >> n;
  r.tickMs.resize(n);
  for (double& v : r.tickMs) in >> v;
  return r;
}

void usage(const char* program) {
  std::fprintf(stderr,
               "usage: %s [--ranks N,N...] [--stats N] [--seconds S] [--warmup S] [--rss-every S] [--one-at-a-time]\n"
               "          [--in-process]  (one rank count, run in this process: for heaptrack or perf)\n",
               program);
}

bool parseRanks(const std::string& text, std::vector<int>& ranks) {
  ranks.clear();
  std::istringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    const int n = std::atoi(part.c_str());
    if (n < 8 || n > 4096) return false;
    ranks.push_back(n);
  }
  return !ranks.empty();
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--help" || flag == "-h") {
      usage(argv[0]);
      return 0;
    }
    if (flag == "--one-at-a-time") {
      config.together = false;
      continue;
    }
    if (flag == "--in-process") {
      config.inProcess = true;
      continue;
    }
    if (i + 1 >= argc) {
      usage(argv[0]);
      return 2;
    }
    const char* value = argv[++i];
    bool ok = true;
    if (flag == "--ranks") ok = parseRanks(value, config.ranks);
    else if (flag == "--stats") config.stats = std::atoi(value);
    else if (flag == "--seconds") config.seconds = std::atof(value);
    else if (flag == "--warmup") config.warmup = std::atof(value);
    else if (flag == "--rss-every") config.rssEvery = std::atof(value);
    else ok = false;
    if (!ok) {
      usage(argv[0]);
      return 2;
    }
  }
  if (config.stats < 1 || config.stats > 1000 || !(config.rssEvery >= 1) || !(config.warmup >= 0) ||
      !(config.seconds > config.warmup + config.rssEvery) || (config.inProcess && config.ranks.size() != 1)) {
    std::fprintf(stderr, "ranks_scale: --ranks 8..4096 each, --stats 1..1000, --seconds beyond --warmup plus --rss-every, "
                 "--in-process with one rank count\n");
    return 2;
  }
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  std::printf("ranks_scale: %d Stats x 4 aggregations per rank at 1 window/s, %.0f s (ticks after %.0f s), %s, %s\n", config.stats,
              config.seconds, config.warmup, config.together ? "rank counts at once" : "one at a time",
              qgetenv("QT_QPA_PLATFORM").constData());
  // Each rank count in a child process of its own, all at once (a thread waiting on each) or in turn.
  std::vector<std::optional<std::string>> texts(config.ranks.size());
  const auto run = [&](std::size_t i) {
    if (config.inProcess) texts[i] = serialize(runSide(config, config.ranks[i]));
    else texts[i] = livemon::bench::runInChild([&] { return serialize(runSide(config, config.ranks[i])); });
  };
  std::vector<std::thread> waiting;
  for (std::size_t i = 0; i < config.ranks.size(); ++i) {
    if (config.together && !config.inProcess) waiting.emplace_back(run, i);
    else run(i);
  }
  for (std::thread& thread : waiting) thread.join();
  std::vector<Results> results;
  for (std::size_t i = 0; i < config.ranks.size(); ++i) {
    if (!texts[i]) {
      std::fprintf(stderr, "ranks_scale: the %d-rank side failed\n", config.ranks[i]);
      return 1;
    }
    results.push_back(deserialize(*texts[i]));
  }
  const bool counts = std::getenv("RANKS_SCALE_COUNTS") != nullptr;
  for (std::size_t i = 0; i < config.ranks.size(); ++i) {
    const Results& r = results[i];
    std::printf("\n%5d ranks: tick p50 %.2f ms, p99 %.2f ms, max %.1f ms (%zu ticks after warm-up)\n", config.ranks[i],
                percentile(r.tickMs, 50), percentile(r.tickMs, 99), r.maxTickMs, r.tickMs.size());
    std::printf("             RSS (MiB) every %.0f s:", config.rssEvery);
    for (double v : r.rssMiB) std::printf(" %.0f", v);
    if (r.rssMiB.size() >= 2) std::printf("  (last step %+.0f MiB)", r.rssMiB.back() - r.rssMiB[r.rssMiB.size() - 2]);
    std::printf("\n");
    if (counts) std::printf("             %zu series, %zu stored points, %zu log rows\n", r.series, r.points, r.logRows);
  }
  return 0;
}
