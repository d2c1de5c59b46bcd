// ui_ingest: the dashboard under a heavy feed, beside a naive chart fed the same way.
//
// Feeds a window for --seconds (30) with --stats (100) Stats of --aggregations (6) aggregations,
// one window per second each, plus --events-per-second (100 000) raw events for the log, and
// reports the GUI refresh tick's p50/p99 (and the p99 after the first 2 s, in which the charts
// are made), the longest event-loop stall, and memory at 10 s and at the end. Each side runs in
// its own child process (same feed, same ingest path, same event log), so their memory figures do
// not mix:
//   livemon: MainWindow (decimated replace(), only charts on screen and changed are redrawn)
//   naive:   one QChartView per Stat whose QLineSeries get every point by append(), and whose
//            axes follow the data on every tick
// A stall is the longest gap between firings of a 5 ms timer on the GUI thread (the event loop
// was busy or the thread was not scheduled); a busy stall counts only the GUI thread's CPU time
// in that gap, which is what the dashboard itself costs on a machine shared with other work.
// With --ranks N the feed comes from N ranks of one run (each sending every Stat, rank 7 twice as
// slow), and the two sides are both MainWindow: rank groups on (a median line per aggregation over
// a min–max band) and off (a line per rank and aggregation, with room for all of them).
// Runs offscreen unless QT_QPA_PLATFORM says otherwise. UI_INGEST_TRACE=1 prints each tick over
// 16 ms and each stall over 30 ms with when it happened; UI_INGEST_RSS_EVERY=S prints the RSS every S
// seconds.
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <QApplication>
#include <QScrollArea>
#include <QSplitter>
#include <QTemporaryDir>
#include <QTimer>
#include <QVBoxLayout>
#include <QtCharts/QChart>
#include <QtCharts/QChartView>
#include <QtCharts/QDateTimeAxis>
#include <QtCharts/QLineSeries>
#include <QtCharts/QValueAxis>

#include <livemon/transport/subscriber.h>
#include <livemon/ui/ingest/ingest_worker.h>
#include <livemon/ui/model/event_log_model.h>
#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/dashboard_style.h>
#include <livemon/ui/widgets/event_log_view.h>
#include <livemon/ui/widgets/main_window.h>
#include <livemon/ui/widgets/stat_chart_view.h>

#include "bench_support.h"
#include "naive_dashboard.h"

namespace {

using livemon::bench::percentile;
using livemon::bench::rssMiB;
using livemon::bench::threadCpuMs;
using Clock = std::chrono::steady_clock;
using livemon::ui::IngestBatch;
using livemon::ui::IngestWorker;

struct Config {
  double seconds = 30.0;
  int stats = 100;
  int aggregations = 6;
  double eventsPerSecond = 100'000.0;
  int width = 1600;
  int height = 1000;
  std::string sides = "both";
  int ranks = 0;  // > 0: a run of this many ranks, grouped vs a line per rank
  std::size_t logCapacity = livemon::ui::EventLogModel::kDefaultCapacity;
};

constexpr const char* kAggregations[] = {"mean", "min", "max", "p50", "p90", "p99", "value", "stddev", "count", "sum"};
constexpr int kMaxAggregations = static_cast<int>(sizeof kAggregations / sizeof kAggregations[0]);

double cpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// Generates the feed on its own thread (standing in for the subscriber thread) and hands it to
// IngestWorker::deliver, the path received events take.
class Feeder {
 public:
  Feeder(const Config& config, IngestWorker& ingest) : config_(config), ingest_(ingest) {
    livemon::transport::SourceInfo info;
    info.run = "bench";
    info.host = "localhost";
    info.pid = getpid();
    info.instanceId = 42;
    info.startTime = std::chrono::system_clock::now();
    source_ = std::make_shared<const livemon::transport::SourceInfo>(info);
    for (int r = 0; r < config_.ranks; ++r) {
      info.rank = r;
      info.instanceId = 1000 + static_cast<uint64_t>(r);
      ranks_.push_back(std::make_shared<const livemon::transport::SourceInfo>(info));
    }
    endpoint_ = std::make_shared<const std::string>("synthetic://ui_ingest");
    thread_ = std::thread([this] { run(); });
  }
  ~Feeder() { stop(); }
  void stop() {
    stop_.store(true);
    if (thread_.joinable()) thread_.join();
  }
  uint64_t fed() const { return fed_.load(); }

 private:
  livemon::transport::ReceivedEvent make(std::string name, std::chrono::system_clock::time_point at) {
    livemon::transport::ReceivedEvent event;
    event.event.name = std::move(name);
    event.event.timestamp = at;
    event.source = source_;
    event.endpoint = endpoint_;
    event.sequence = sequence_++;
    event.receivedAt = std::chrono::system_clock::now();
    return event;
  }

  void run() {
    static const char* kRawNames[] = {"train.step", "data.batch", "optimizer.update"};
    const auto start = Clock::now();
    const auto wallStart = std::chrono::system_clock::now();
    int64_t lastWindow = -1;
    uint64_t raw = 0;
    std::vector<livemon::transport::ReceivedEvent> chunk;
    while (!stop_.load(std::memory_order_relaxed)) {
      const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
      chunk.clear();
      const auto window = static_cast<int64_t>(elapsed);
      if (window > lastWindow) {
        lastWindow = window;
        const auto at = wallStart + std::chrono::seconds(window);
        for (std::size_t r = 0; r < ranks_.size(); ++r) {
          // Every rank sends every Stat; rank 7 is twice as slow, the others scatter a little.
          for (int stat = 0; stat < config_.stats; ++stat) {
            auto event = make("livemon.Stat", at + std::chrono::microseconds(100 * r));
            event.source = ranks_[r];
            char name[32];
            std::snprintf(name, sizeof name, "bench.stat_%03d.", stat);
            const double level = (1 + stat % 7) * (1.0 + 0.05 * std::sin(static_cast<double>(r) * 1.7 + window)) * (r == 7 ? 2.0 : 1.0);
            for (int a = 0; a < config_.aggregations; ++a) event.event.data.emplace(std::string(name) + kAggregations[a], level + 0.1 * a);
            chunk.push_back(std::move(event));
          }
        }
        for (int stat = 0; stat < config_.stats && ranks_.empty(); ++stat) {
          auto event = make("livemon.Stat", at);
          char name[32];
          std::snprintf(name, sizeof name, "bench.stat_%03d.", stat);
          const double level = std::sin(window / 10.0 + stat) * (1 + stat % 7);
          for (int a = 0; a < config_.aggregations; ++a) {
            event.event.data.emplace(std::string(name) + kAggregations[a], level + 0.1 * a + 0.05 * std::sin(window * 1.3 + a));
          }
          chunk.push_back(std::move(event));
        }
      }
      const auto target = static_cast<uint64_t>(elapsed * config_.eventsPerSecond);
      const auto now = std::chrono::system_clock::now();
      for (; raw < target && chunk.size() < 5000; ++raw) {
        auto event = make(kRawNames[raw % 3], now);
        event.event.data.emplace("step", static_cast<int64_t>(raw));
        event.event.data.emplace("loss", 1.0 / (1.0 + static_cast<double>(raw) * 1e-5));
        event.event.data.emplace("phase", std::string("train"));
        chunk.push_back(std::move(event));
      }
      fed_.fetch_add(chunk.size());
      if (!chunk.empty()) ingest_.deliver(chunk);
      if (raw >= target) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  const Config& config_;
  IngestWorker& ingest_;
  std::shared_ptr<const livemon::transport::SourceInfo> source_;
  std::vector<std::shared_ptr<const livemon::transport::SourceInfo>> ranks_;
  std::shared_ptr<const std::string> endpoint_;
  uint64_t sequence_ = 0;
  std::atomic<bool> stop_{false};
  std::atomic<uint64_t> fed_{0};
  std::thread thread_;
};

struct Results {
  std::vector<double> tickMs;
  std::size_t warmupTicks = 0;  // of tickMs, those in the first 2 s (the charts being made)
  double longestStallMs = 0.0;
  double longestStallAfterWarmupMs = 0.0;
  double longestBusyStallMs = 0.0;  // after 2 s: the most CPU the GUI thread used between two probes
  uint64_t stallsOver50 = 0;        // after 2 s: probe gaps over 50 ms
  double rssStartMiB = 0.0;
  double rss10MiB = 0.0;
  double rss20MiB = 0.0;
  double rssEndMiB = 0.0;
  double cpuPercent = 0.0;
  uint64_t fed = 0;
  uint64_t logged = 0;
  uint64_t droppedByDashboard = 0;
  int charts = 0;
};

// Runs one side in this process: a window, the feeder, a 33 ms refresh timer and a 5 ms probe
// timer whose late firings measure how long the event loop was blocked.
Results runSide(const Config& config, bool naive) {
  int argc = 1;
  char name[] = "ui_ingest";
  char* argv[] = {name, nullptr};
  QApplication app(argc, argv);
  livemon::ui::applyDashboardStyle(app);
  QTemporaryDir settings;

  Results results;
  results.rssStartMiB = rssMiB();
  std::unique_ptr<livemon::ui::MainWindow> window;
  std::unique_ptr<IngestWorker> naiveIngest;
  std::unique_ptr<NaiveDashboard> naiveWindow;
  IngestWorker* ingest = nullptr;
  QTimer naiveTimer;
  const auto benchStart = Clock::now();
  const bool trace = std::getenv("UI_INGEST_TRACE") != nullptr;
  const auto recordTick = [&](double ms) {
    results.tickMs.push_back(ms);
    if (Clock::now() - benchStart <= std::chrono::seconds(2)) results.warmupTicks = results.tickMs.size();
    if (ms > 16 && trace) {
      std::fprintf(stderr, "slow tick %.1f ms at %.2f s\n", ms, std::chrono::duration<double>(Clock::now() - benchStart).count());
    }
  };

  if (naive && config.ranks == 0) {
    naiveIngest = std::make_unique<IngestWorker>(IngestWorker::Options{});
    naiveWindow = std::make_unique<NaiveDashboard>(*naiveIngest, config.logCapacity);
    naiveWindow->resize(config.width, config.height);
    naiveWindow->show();
    naiveTimer.setTimerType(Qt::PreciseTimer);
    naiveTimer.setInterval(33);
    QObject::connect(&naiveTimer, &QTimer::timeout, [&] {
      const auto start = Clock::now();
      naiveWindow->tick();
      recordTick(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    });
    naiveTimer.start();
    ingest = naiveIngest.get();
  } else {
    livemon::ui::DashboardOptions options;
    options.exactEndpoints = true;  // no endpoints: the feeder is the only source
    options.settingsFile = settings.filePath(QStringLiteral("livemon.ini"));
    options.logCapacity = config.logCapacity;
    if (naive) {  // with --ranks: a line per rank, every one of them drawn
      options.groupRanks = false;
      options.maxLinesPerChart = static_cast<std::size_t>(config.ranks * config.aggregations);
    }
    window = std::make_unique<livemon::ui::MainWindow>(options);
    window->resize(config.width, config.height);
    window->show();
    QObject::connect(&window->dashboard(), &livemon::ui::Dashboard::refreshed,
                     [&](qint64 nanoseconds) { recordTick(static_cast<double>(nanoseconds) / 1e6); });
    ingest = &window->dashboard().ingest();
  }

  QTimer probe;
  probe.setTimerType(Qt::PreciseTimer);
  probe.setInterval(5);
  const auto start = Clock::now();
  auto lastProbe = start;
  double lastProbeCpu = threadCpuMs();
  QObject::connect(&probe, &QTimer::timeout, [&] {
    const auto now = Clock::now();
    const double gap = std::chrono::duration<double, std::milli>(now - lastProbe).count();
    const double cpu = threadCpuMs();
    const double ran = cpu - lastProbeCpu;
    lastProbe = now;
    lastProbeCpu = cpu;
    if (now - start > std::chrono::seconds(2)) results.longestBusyStallMs = std::max(results.longestBusyStallMs, ran);
    if (gap > 30 && trace) {
      std::fprintf(stderr, "stall %.1f ms (GUI thread ran %.1f ms) at %.2f s\n", gap, ran,
                   std::chrono::duration<double>(now - start).count());
    }
    results.longestStallMs = std::max(results.longestStallMs, gap);
    if (gap > 50 && now - start > std::chrono::seconds(2)) ++results.stallsOver50;
    if (now - start > std::chrono::seconds(2)) results.longestStallAfterWarmupMs = std::max(results.longestStallAfterWarmupMs, gap);
  });
  probe.start();

  const double cpuStart = cpuSeconds();
  Feeder feeder(config, *ingest);
  QTimer::singleShot(10'000, [&] { results.rss10MiB = rssMiB(); });
  QTimer::singleShot(20'000, [&] { results.rss20MiB = rssMiB(); });
  // UI_INGEST_RSS_EVERY=S: the RSS every S seconds on stderr, to see where memory levels off.
  QTimer rssProbe;
  if (const char* every = std::getenv("UI_INGEST_RSS_EVERY"); every != nullptr && std::atof(every) > 0) {
    QObject::connect(&rssProbe, &QTimer::timeout, [&] {
      std::fprintf(stderr, "rss %.0f MiB at %.0f s\n", rssMiB(), std::chrono::duration<double>(Clock::now() - start).count());
    });
    rssProbe.start(static_cast<int>(std::atof(every) * 1000));
  }
  QTimer::singleShot(static_cast<int>(config.seconds * 1000), [&] { app.quit(); });
  QApplication::exec();
  feeder.stop();
  results.rssEndMiB = rssMiB();
  results.cpuPercent = 100.0 * (cpuSeconds() - cpuStart) / config.seconds;
  results.fed = feeder.fed();
  results.droppedByDashboard = ingest->staging().droppedLogEntries() + ingest->staging().droppedSamples();
  if (naiveWindow) {
    results.logged = naiveWindow->log().receivedCount();
    results.charts = naiveWindow->chartCount();
  } else {
    results.logged = window->dashboard().eventLog().receivedCount();
    results.charts = static_cast<int>(window->chartGrid().charts().size());
  }
  return results;
}

std::string serialize(const Results& r) {
  std::ostringstream out;
  out.precision(17);
  out << r.longestStallMs << ' ' << r.longestStallAfterWarmupMs << ' ' << r.longestBusyStallMs << ' ' << r.rssStartMiB << ' ' << r.rss10MiB << ' '
      << r.rss20MiB << ' ' << r.rssEndMiB << ' ' << r.cpuPercent << ' ' << r.fed << ' ' << r.logged << ' ' << r.droppedByDashboard << ' '
      << r.charts << ' ' << r.warmupTicks << ' ' << r.stallsOver50 << ' ' << r.tickMs.size();
  for (double t : r.tickMs) out << ' ' << t;
  return out.str();
}

Results deserialize(const std::string& text) {
  std::istringstream in(text);
  Results r;
  std::size_t ticks = 0;
  in >> r.longestStallMs >> r.longestStallAfterWarmupMs >> r.longestBusyStallMs >> r.rssStartMiB >> r.rss10MiB >> r.rss20MiB >> r.rssEndMiB >> r.cpuPercent >>
      r.fed >> r.logged >> r.droppedByDashboard >> r.charts >> r.warmupTicks >> r.stallsOver50 >> ticks;
  r.tickMs.resize(ticks);
  for (double& t : r.tickMs) in >> t;
  return r;
}

// Runs a side in a child process so each starts from a clean heap; returns its results.
bool runChild(const Config& config, bool naive, Results& results) {
  const std::optional<std::string> text = livemon::bench::runInChild([&] { return serialize(runSide(config, naive)); });
  if (!text) return false;
  results = deserialize(*text);
  return true;
}

void usage(const char* program) {
  std::fprintf(stderr,
               "usage: %s [--seconds S] [--stats N] [--aggregations N] [--events-per-second N]\n"
               "          [--width PX] [--height PX] [--sides both|livemon|naive] [--ranks N]\n"
               "          [--log-capacity ROWS]\n",
               program);
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
    if (i + 1 >= argc) {
      usage(argv[0]);
      return 2;
    }
    const char* value = argv[++i];
    if (flag == "--seconds") config.seconds = std::atof(value);
    else if (flag == "--stats") config.stats = std::atoi(value);
    else if (flag == "--aggregations") config.aggregations = std::atoi(value);
    else if (flag == "--events-per-second") config.eventsPerSecond = std::atof(value);
    else if (flag == "--width") config.width = std::atoi(value);
    else if (flag == "--height") config.height = std::atoi(value);
    else if (flag == "--sides") config.sides = value;
    else if (flag == "--ranks") config.ranks = std::atoi(value);
    else if (flag == "--log-capacity") config.logCapacity = std::strtoull(value, nullptr, 10);
    else {
      usage(argv[0]);
      return 2;
    }
  }
  if (!(config.seconds >= 21) || config.stats < 1 || config.aggregations < 1 || config.aggregations > kMaxAggregations ||
      config.eventsPerSecond < 0 || config.ranks < 0 || (config.sides != "both" && config.sides != "livemon" && config.sides != "naive")) {
    std::fprintf(stderr, "ui_ingest: --seconds must be at least 21, --aggregations 1 to %d, --sides both, livemon or naive\n",
                 kMaxAggregations);
    return 2;
  }
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");

  std::printf("ui_ingest: %.0f s per side, %d rank(s) x %d Stats x %d aggregations at 1 window/s, %.0f raw events/s, %dx%d window, %s\n",
              config.seconds, std::max(1, config.ranks), config.stats, config.aggregations, config.eventsPerSecond, config.width,
              config.height, qgetenv("QT_QPA_PLATFORM").constData());
  std::vector<std::pair<std::string, Results>> sides;
  for (const bool naive : {false, true}) {
    if (config.sides == (naive ? "livemon" : "naive")) continue;
    Results results;
    if (!runChild(config, naive, results)) {
      std::fprintf(stderr, "ui_ingest: the %s side failed\n", naive ? "naive" : "livemon");
      return 1;
    }
    if (config.ranks > 0) sides.emplace_back(naive ? "line per rank" : "rank groups", std::move(results));
    else sides.emplace_back(naive ? "naive append()" : "livemon", std::move(results));
  }

  std::printf("\n%-28s", "");
  for (const auto& [name, r] : sides) std::printf(" %16s", name.c_str());
  const auto row = [&](const char* label, auto value) {
    std::printf("\n%-28s", label);
    for (const auto& [name, r] : sides) std::printf(" %16s", value(r).c_str());
  };
  const auto number = [](double v, const char* format) {
    char text[64];
    std::snprintf(text, sizeof text, format, v);
    return std::string(text);
  };
  row("GUI tick p50 (ms)", [&](const Results& r) { return number(percentile(r.tickMs, 50), "%.2f"); });
  row("GUI tick p99 (ms)", [&](const Results& r) { return number(percentile(r.tickMs, 99), "%.2f"); });
  row("GUI tick p99 after 2 s (ms)", [&](const Results& r) {
    const auto warmup = static_cast<std::ptrdiff_t>(std::min(r.warmupTicks, r.tickMs.size()));
    return number(percentile(std::vector<double>(r.tickMs.begin() + warmup, r.tickMs.end()), 99), "%.2f");
  });
  row("GUI tick max (ms)", [&](const Results& r) { return number(percentile(r.tickMs, 100), "%.1f"); });
  row("ticks", [&](const Results& r) { return number(static_cast<double>(r.tickMs.size()), "%.0f"); });
  row("longest stall (ms)", [&](const Results& r) { return number(r.longestStallMs, "%.1f"); });
  row("longest stall after 2 s (ms)", [&](const Results& r) { return number(r.longestStallAfterWarmupMs, "%.1f"); });
  row("longest busy stall after 2 s", [&](const Results& r) { return number(r.longestBusyStallMs, "%.1f"); });
  row("stalls > 50 ms after 2 s", [&](const Results& r) { return number(static_cast<double>(r.stallsOver50), "%.0f"); });
  row("RSS at start (MiB)", [&](const Results& r) { return number(r.rssStartMiB, "%.0f"); });
  row("RSS at 10 s (MiB)", [&](const Results& r) { return number(r.rss10MiB, "%.0f"); });
  row("RSS at 20 s (MiB)", [&](const Results& r) { return number(r.rss20MiB, "%.0f"); });
  row("RSS at end (MiB)", [&](const Results& r) { return number(r.rssEndMiB, "%.0f"); });
  row("CPU, all threads (%)", [&](const Results& r) { return number(r.cpuPercent, "%.0f"); });
  row("events fed", [&](const Results& r) { return number(static_cast<double>(r.fed), "%.0f"); });
  row("events in the log", [&](const Results& r) { return number(static_cast<double>(r.logged), "%.0f"); });
  row("dropped by the dashboard", [&](const Results& r) { return number(static_cast<double>(r.droppedByDashboard), "%.0f"); });
  row("charts", [&](const Results& r) { return number(r.charts, "%.0f"); });
  std::printf("\n");
  return 0;
}
