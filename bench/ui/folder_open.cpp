// folder_open: opening a folder of 100 recorded runs (a day's experiments) in the dashboard.
//
// Writes --recordings (100) recordings of demo-like runs with RecordingWriter into a folder, two
// levels deep: each a run of its own (its name, a livemon.run_config event with its learning rate
// and batch size, then --steps (20 000) training steps at 10 a second: a window a second of 8
// Stats with 4 aggregations each, at the step it closed on, and an eval event every 500 steps).
// Then, --repeats (5) times, in a fresh MainWindow each (offscreen unless QT_QPA_PLATFORM says
// otherwise, 1600×1000, range "Whole run"), opens the folder (ReplayController::openFolder) twice:
//   on demand: as the dashboard does, index-only, then a slice of at most 4 096 events a refresh
//   fully:     loading them fully, each run read whole in turn, all in one go (RunFolderLimits::
//              eventsPerRead unbounded, firstEvents 0), and applied as the refreshes take it
// and times, for each:
//   indexed:   every recording's summary read (RunFolder::scanned)
//   listed:    every run's sources (and config) in the registry and the charts made: the runs can
//              be told apart and compared from here on
//   loaded:    every event of every run read and applied
// with the longest stall of the GUI thread's event loop meanwhile (a 5 ms timer's largest
// lateness). The reference: reading and decoding every event of every file in turn
// (RecordingReader + RecordedEventDecoder), the least an open that is not index-only pays before
// it can list the last run. It prints each repeat and the medians, and the load average before
// and after (the machine is shared).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include <QApplication>
#include <QCommandLineParser>
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest/QTest>

#include <livemon/event.h>
#include <livemon/run_config.h>
#include <livemon/transport/recorded_event.h>
#include <livemon/transport/recording.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/replay/folder_scan.h>
#include <livemon/ui/replay/run_folder.h>
#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/dashboard_style.h>
#include <livemon/ui/widgets/main_window.h>

#include "bench_support.h"
#include "bench_window.h"

namespace {

using livemon::bench::median;
using SteadyClock = std::chrono::steady_clock;

double seconds(SteadyClock::duration d) { return std::chrono::duration<double>(d).count(); }

constexpr int kStats = 8;
constexpr int kStepsPerSecond = 10;

void writeRun(const std::string& path, int index, int steps) {
  using namespace livemon;
  transport::RecordingWriter writer(path);
  const auto start = std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000 + 3600 * index));
  transport::SourceInfo info;
  info.run = "lr-sweep-" + std::to_string(index);
  info.host = "gpu" + std::to_string(index % 8);
  info.pid = 1000 + index;
  info.instanceId = 7919U * static_cast<uint64_t>(index + 1);
  info.startTime = start;
  transport::ReceivedEvent event;
  event.source = std::make_shared<const transport::SourceInfo>(info);
  event.endpoint = std::make_shared<const std::string>("tcp://127.0.0.1:5555");
  uint64_t sequence = 0;
  const auto record = [&](std::chrono::system_clock::time_point at) {
    event.event.timestamp = at;
    event.receivedAt = at;
    event.sequence = sequence++;
    transport::recordEvent(writer, event);
  };
  const double lr = 1e-4 * (1 + index % 10);
  event.event = Event{std::string(kRunConfigEventName), start, {{"lr", lr}, {"batch", int64_t{32} << (index % 3)}}};
  event.event.step = 0;
  record(start);
  static const char* const kNames[kStats] = {"train.loss",    "train.step_ms", "train.samples_per_s", "train.lr",
                                             "train.data_ms", "train.grad_norm", "system.gpu_util_percent",
                                             "system.memory_bytes"};
  for (int second = 1; second * kStepsPerSecond <= steps; ++second) {
    const auto at = start + std::chrono::seconds(second);
    const int64_t step = int64_t{second} * kStepsPerSecond;
    for (int s = 0; s < kStats; ++s) {
      const double value = 2.0 * std::exp(-static_cast<double>(step) * lr / 10.0) + 0.1 * s;
      const std::string stat = kNames[s];
      event.event = Event{std::string(kStatEventName), at,
                          {{stat + ".mean", value}, {stat + ".min", value * 0.9}, {stat + ".max", value * 1.1},
                           {stat + ".count", int64_t{kStepsPerSecond}}}};
      event.event.step = step;
      record(at);
    }
    if (step % 500 == 0) {
      event.event = Event{"eval", at, {{"accuracy", 1.0 - std::exp(-static_cast<double>(step) * lr)}, {"loss", 0.5}}};
      event.event.step = step;
      record(at);
    }
  }
  writer.close();
}

struct Timings {
  double indexed = 0;
  double listed = 0;
  double loaded = 0;
  double longestStall = 0;  // s
};

// Opens `folder` in a fresh window; `eventsPerRead` 0: each run whole in turn, all in one read.
Timings openOnce(const QString& folder, const QString& settingsFile, std::size_t recordings, std::size_t eventsPerRead) {
  livemon::ui::RunFolderLimits limits;
  if (eventsPerRead == 0) {
    limits.eventsPerRead = SIZE_MAX;
    limits.firstEvents = 0;
  } else {
    limits.eventsPerRead = eventsPerRead;
  }
  const auto owned = livemon::bench::benchWindow(settingsFile, livemon::ui::TimeRange::All, limits);
  livemon::ui::MainWindow& window = *owned;

  // The event loop's stalls: how late a 5 ms timer fires.
  auto last = SteadyClock::now();
  double longestStall = 0;
  QTimer probe;
  probe.setTimerType(Qt::PreciseTimer);
  QObject::connect(&probe, &QTimer::timeout, [&] {
    const auto now = SteadyClock::now();
    longestStall = std::max(longestStall, seconds(now - last) - 0.005);
    last = now;
  });
  probe.start(5);

  Timings timings;
  const auto start = SteadyClock::now();
  livemon::ui::Dashboard& dashboard = window.dashboard();
  livemon::ui::RunFolder* runs = dashboard.replays().openFolder(folder);
  QObject::connect(runs, &livemon::ui::RunFolder::scanned, [&] {
    if (timings.indexed == 0) timings.indexed = seconds(SteadyClock::now() - start);
  });
  const auto wait = [](const std::function<bool()>& done, const char* what) {
    if (!QTest::qWaitFor(done, 600'000)) {
      std::fprintf(stderr, "folder_open: %s did not happen\n", what);
      std::exit(1);
    }
  };
  wait([&] {
    return dashboard.registry().sourceCount() >= recordings && window.chartGrid().pendingChartCount() == 0 &&
           !window.chartGrid().charts().empty();
  }, "listing every run");
  timings.listed = seconds(SteadyClock::now() - start);
  wait([&] { return !runs->scanning() && !runs->busy() && !runs->hasMoreToRead(); }, "loading every run");
  dashboard.refreshNow();
  QCoreApplication::processEvents();
  timings.loaded = seconds(SteadyClock::now() - start);
  timings.longestStall = longestStall;
  return timings;
}

double readAll(const livemon::ui::FolderListing& listing, uint64_t* decoded) {
  const auto start = SteadyClock::now();
  uint64_t count = 0;
  std::vector<livemon::transport::ReceivedEvent> events;
  for (const livemon::ui::FoundRecording& recording : listing.recordings) {
    livemon::transport::RecordingReader reader(recording.path.toStdString());
    livemon::transport::RecordedEventDecoder decoder(recording.path.toStdString());
    reader.forEachMessage([&](const livemon::transport::RecordedMessage& message) {
      if (decoder.decode(message, events)) count += events.size();
      return true;
    });
  }
  *decoded = count;
  return seconds(SteadyClock::now() - start);
}

QString loadAverage() {
  QFile file(QStringLiteral("/proc/loadavg"));
  if (!file.open(QIODevice::ReadOnly)) return QStringLiteral("unknown");
  return QString::fromLatin1(file.readAll()).section(QLatin1Char(' '), 0, 2);
}

// An option taking a value, with its default.
QCommandLineOption valued(const char* name, const char* description, const char* fallback) {
  return QCommandLineOption(QString::fromLatin1(name), QString::fromLatin1(description), QStringLiteral("N"),
                            QString::fromLatin1(fallback));
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  livemon::ui::applyDashboardStyle(app);
  const QCommandLineOption recordingsOption = valued("recordings", "Recordings in the folder.", "100");
  const QCommandLineOption stepsOption = valued("steps", "Training steps of each run.", "20000");
  const QCommandLineOption repeatsOption = valued("repeats", "Repeats of each side.", "5");
  const QCommandLineOption folderOption(QStringLiteral("folder"), QStringLiteral("Use (and keep) this folder; written if missing."),
                                        QStringLiteral("DIR"));
  QCommandLineParser parser;
  parser.addHelpOption();
  parser.addOptions({recordingsOption, stepsOption, repeatsOption, folderOption});
  parser.process(app);
  const int recordings = std::max(1, parser.value(recordingsOption).toInt());
  const int steps = std::max(kStepsPerSecond, parser.value(stepsOption).toInt());
  const int repeats = std::max(1, parser.value(repeatsOption).toInt());

  QTemporaryDir dir;
  const QString folder = parser.isSet(folderOption) ? parser.value(folderOption) : dir.filePath(QStringLiteral("runs"));
  if (!QFileInfo::exists(folder)) {
    std::fprintf(stderr, "writing %d recordings of %d steps to %s\n", recordings, steps, qUtf8Printable(folder));
    const auto start = SteadyClock::now();
    for (int i = 0; i < recordings; ++i) {
      const QString sub = QStringLiteral("%1/day-%2/sweep-%3").arg(folder).arg(i / 50).arg(i % 5);
      QDir().mkpath(sub);
      writeRun(QStringLiteral("%1/run-%2.mcap").arg(sub).arg(i).toStdString(), i, steps);
    }
    std::fprintf(stderr, "  %.1f s\n", seconds(SteadyClock::now() - start));
  }
  const livemon::ui::FolderListing listing = livemon::ui::listRecordings(folder);
  qint64 bytes = 0;
  for (const livemon::ui::FoundRecording& recording : listing.recordings) bytes += recording.size;
  std::printf("folder: %s, %zu recordings, %.1f MB; load average %s\n", qUtf8Printable(folder), listing.recordings.size(),
              static_cast<double>(bytes) / 1e6, qUtf8Printable(loadAverage()));

  const QString settings = dir.filePath(QStringLiteral("livemon.ini"));
  std::vector<Timings> onDemand;
  std::vector<Timings> fully;
  std::vector<double> reference;
  const auto print = [](const char* what, const Timings& t) {
    std::printf("  %-10s indexed %.3f s, every run listed %.3f s, all loaded %.3f s, longest stall %.0f ms\n", what,
                t.indexed, t.listed, t.loaded, t.longestStall * 1e3);
  };
  for (int repeat = 0; repeat < repeats; ++repeat) {
    onDemand.push_back(openOnce(folder, settings, listing.recordings.size(), livemon::ui::RunFolderLimits{}.eventsPerRead));
    fully.push_back(openOnce(folder, settings, listing.recordings.size(), 0));
    uint64_t decoded = 0;
    reference.push_back(readAll(listing, &decoded));
    std::printf("repeat %d:\n", repeat + 1);
    print("on demand", onDemand.back());
    print("fully", fully.back());
    std::printf("  reference: read and decode every file %.3f s (%llu events)\n", reference.back(),
                static_cast<unsigned long long>(decoded));
    std::fflush(stdout);
  }
  const auto medianOf = [](const std::vector<Timings>& all, double Timings::*field) {
    std::vector<double> values;
    for (const Timings& t : all) values.push_back(t.*field);
    return median(values);
  };
  std::printf("median of %d:\n", repeats);
  for (const auto& [what, all] : {std::pair{"on demand", &onDemand}, std::pair{"fully", &fully}}) {
    print(what, Timings{medianOf(*all, &Timings::indexed), medianOf(*all, &Timings::listed),
                        medianOf(*all, &Timings::loaded), medianOf(*all, &Timings::longestStall)});
  }
  std::printf("  reference %.3f s; load average %s\n", median(reference), qUtf8Printable(loadAverage()));
  return 0;
}
