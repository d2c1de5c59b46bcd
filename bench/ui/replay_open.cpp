// replay_open: from opening a large recording in the dashboard to its first full view.
//
// Writes a recording of --events (10 000 000) events with RecordingWriter: --rate (1000) events a
// second of recorded time (so 10 M events span 2.8 hours), of which 20 a second are Stat windows
// (4 aggregations each, 20 Stats) and the rest "step" events with two fields, the mix of a training
// job that logs every step. Then, --runs (5) times, in a fresh MainWindow (offscreen unless
// QT_QPA_PLATFORM says otherwise, range "Last 1 min"):
//   livemon:   openRecording() until the window before the playhead (the end) is read, every
//              chart is made and drawn, and the log holds the window's events
//   reference: a sequential read of the whole file, decoding every event (RecordingReader +
//              RecordedEventDecoder), which any view that does not use the chunk index pays
//              before it can show the end of the run
// and prints each run and the medians. The file is in the page cache for both (it was just
// written), so the figures are CPU cost, not disk speed.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <QApplication>
#include <QCommandLineParser>
#include <QSettings>
#include <QTemporaryDir>
#include <QtTest/QTest>

#include <livemon/event.h>
#include <livemon/transport/recording.h>
#include <livemon/transport/recorded_event.h>
#include <livemon/ui/model/event_log_model.h>
#include <livemon/ui/replay/replay_session.h>
#include <livemon/ui/widgets/chart_grid.h>
#include <livemon/ui/widgets/dashboard_style.h>
#include <livemon/ui/widgets/main_window.h>
#include <livemon/ui/widgets/stat_chart_view.h>

#include "bench_support.h"
#include "bench_window.h"

namespace {

using livemon::bench::median;

using SteadyClock = std::chrono::steady_clock;

double seconds(SteadyClock::duration d) { return std::chrono::duration<double>(d).count(); }

void writeRecording(const std::string& path, uint64_t events, uint64_t rate) {
  using namespace livemon;
  transport::RecordingWriter writer(path);
  transport::SourceInfo info;
  info.run = "train";
  info.host = "bench";
  info.pid = 4242;
  info.instanceId = 1;
  const auto start = std::chrono::system_clock::time_point(std::chrono::seconds(1'700'000'000));
  info.startTime = start;
  const auto source = std::make_shared<const transport::SourceInfo>(info);
  const auto endpoint = std::make_shared<const std::string>("tcp://127.0.0.1:5555");
  const uint64_t statsPerSecond = 20;
  transport::ReceivedEvent event;
  event.source = source;
  event.endpoint = endpoint;
  for (uint64_t i = 0; i < events; ++i) {
    const uint64_t second = i / rate;
    const uint64_t within = i % rate;
    const auto at = start + std::chrono::nanoseconds(static_cast<int64_t>(i * (1'000'000'000 / rate)));
    event.event.timestamp = at;
    event.receivedAt = at;
    event.sequence = i;
    event.event.data.clear();
    const double x = static_cast<double>(second);
    if (within < statsPerSecond) {
      event.event.name = std::string(kStatEventName);
      const std::string stat = "train.stat" + std::to_string(within);
      event.event.data[stat + ".mean"] = std::sin(x / 100.0 + static_cast<double>(within));
      event.event.data[stat + ".min"] = std::sin(x / 100.0 + static_cast<double>(within)) - 0.5;
      event.event.data[stat + ".max"] = std::sin(x / 100.0 + static_cast<double>(within)) + 0.5;
      event.event.data[stat + ".p99"] = std::sin(x / 100.0 + static_cast<double>(within)) + 0.4;
    } else {
      event.event.name = "step";
      event.event.data["step"] = static_cast<int64_t>(i);
      event.event.data["loss"] = 1.0 / (1.0 + x);
    }
    transport::recordEvent(writer, event);
    if (i % 1'000'000 == 999'999) std::fprintf(stderr, "  wrote %llu M events\n", static_cast<unsigned long long>((i + 1) / 1'000'000));
  }
  writer.close();
}

// Opens `path` in a fresh dashboard and returns the seconds until its first full view.
double openOnce(const QString& path, const QString& settingsFile, uint64_t* logRows) {
  const auto owned = livemon::bench::benchWindow(settingsFile, livemon::ui::TimeRange::LastMinute);
  livemon::ui::MainWindow& window = *owned;

  const auto start = SteadyClock::now();
  livemon::ui::ReplaySession* session = window.dashboard().replays().openRecording(path);
  const auto complete = [&] {
    if (!session->isOpen() || session->busy()) return false;
    window.dashboard().refreshNow();
    livemon::ui::ChartGrid& grid = window.chartGrid();
    if (grid.pendingChartCount() > 0 || grid.charts().empty()) return false;
    const livemon::ui::ChartRenderContext context = grid.renderContext();
    for (const livemon::ui::StatChartView* chart : grid.charts()) {
      if (chart->needsRender(context)) return false;
    }
    return true;
  };
  if (!QTest::qWaitFor(complete, 600'000)) {
    std::fprintf(stderr, "replay_open: the view did not complete\n");
    std::exit(1);
  }
  QCoreApplication::processEvents();  // the paint of the finished view
  const double elapsed = seconds(SteadyClock::now() - start);
  *logRows = static_cast<uint64_t>(window.dashboard().eventLog().rowCount());
  return elapsed;
}

double readAll(const std::string& path, uint64_t* decoded) {
  const auto start = SteadyClock::now();
  livemon::transport::RecordingReader reader(path);
  livemon::transport::RecordedEventDecoder decoder(path);
  livemon::transport::ReceivedEvent event;
  uint64_t count = 0;
  reader.forEachMessage([&](const livemon::transport::RecordedMessage& message) {
    if (decoder.decode(message, event)) ++count;
    return true;
  });
  *decoded = count;
  return seconds(SteadyClock::now() - start);
}

}  // namespace

int main(int argc, char** argv) {
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  livemon::ui::applyDashboardStyle(app);
  QCommandLineParser parser;
  parser.addHelpOption();
  const QCommandLineOption eventsOption(QStringLiteral("events"), QStringLiteral("Events in the recording."),
                                        QStringLiteral("N"), QStringLiteral("10000000"));
  const QCommandLineOption rateOption(QStringLiteral("rate"), QStringLiteral("Events per recorded second."),
                                      QStringLiteral("N"), QStringLiteral("1000"));
  const QCommandLineOption runsOption(QStringLiteral("runs"), QStringLiteral("Runs of each side."), QStringLiteral("N"),
                                      QStringLiteral("5"));
  const QCommandLineOption fileOption(QStringLiteral("file"),
                                      QStringLiteral("Use (and keep) this recording; written if missing."),
                                      QStringLiteral("FILE"));
  parser.addOptions({eventsOption, rateOption, runsOption, fileOption});
  parser.process(app);
  const uint64_t events = parser.value(eventsOption).toULongLong();
  const uint64_t rate = std::max<qulonglong>(20, parser.value(rateOption).toULongLong());
  const int runs = std::max(1, parser.value(runsOption).toInt());

  QTemporaryDir dir;
  const QString path = parser.isSet(fileOption) ? parser.value(fileOption) : dir.filePath(QStringLiteral("big.mcap"));
  if (!QFileInfo::exists(path)) {
    std::fprintf(stderr, "writing %llu events to %s\n", static_cast<unsigned long long>(events), qUtf8Printable(path));
    const auto start = SteadyClock::now();
    writeRecording(path.toStdString(), events, rate);
    std::fprintf(stderr, "  %.1f s\n", seconds(SteadyClock::now() - start));
  }
  std::printf("recording: %s, %.1f MB\n", qUtf8Printable(path), static_cast<double>(QFileInfo(path).size()) / 1e6);

  std::vector<double> opened;
  std::vector<double> reference;
  for (int run = 0; run < runs; ++run) {
    uint64_t rows = 0;
    uint64_t decoded = 0;
    opened.push_back(openOnce(path, dir.filePath(QStringLiteral("livemon.ini")), &rows));
    reference.push_back(readAll(path.toStdString(), &decoded));
    std::printf("run %d: livemon first full view %.3f s (%llu log rows) | reference full read %.3f s (%llu events)\n",
                run + 1, opened.back(), static_cast<unsigned long long>(rows), reference.back(),
                static_cast<unsigned long long>(decoded));
    std::fflush(stdout);
  }
  std::printf("median of %d: livemon %.3f s, reference %.3f s\n", runs, median(opened), median(reference));
  return 0;
}
