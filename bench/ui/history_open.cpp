// history_open: the dashboard opened late on a running job, while the job's history arrives as
// one burst. Connects a MainWindow to ENDPOINT (e.g. `livemonctl demo` after it has filled its
// 32 MiB history), and for --seconds (20) reports: when the history note came and what it said,
// the GUI refresh tick's p50/p99/max (Dashboard::refreshed, views' redraws included, and its apply
// part alone, Dashboard::applied) during the history (until its note is applied) and after it, and the longest event-loop stall (the longest gap between firings of a
// 5 ms timer on the GUI thread, with the GUI thread's CPU time in that gap beside it, as a gap on a
// shared machine can also be the thread waiting for a core), and the GUI thread's CPU: its share of a
// core during the history and after it, and the most it ran between two firings of the timer (the
// longest stall the dashboard itself caused, whatever else the machine was doing; paints included).
// --trace also prints every tick over 16 ms with its apply part, every event that takes the GUI
// thread over 16 ms of CPU (its type and receiver) with the chart paints over 8 ms inside it, every
// gap of the timer over 50 ms, and at the end how many chart paints there were and their CPU.
// Runs offscreen unless QT_QPA_PLATFORM says otherwise.
//   history_open tcp://127.0.0.1:5555 [--seconds S] [--no-history] [--trace] [--apply-ms MS]
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <QApplication>
#include <QTemporaryDir>
#include <QTimer>
#include <QtCharts/QChartView>

#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/dashboard_style.h>
#include <livemon/ui/widgets/main_window.h>

#include "bench_support.h"

namespace {

using livemon::bench::threadCpuMs;
using Clock = std::chrono::steady_clock;

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const auto index = static_cast<std::size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

void printTicks(const char* what, const std::vector<double>& ticks) {
  std::printf("%-24s %6zu ticks  p50 %6.1f ms  p99 %6.1f ms  max %6.1f ms\n", what, ticks.size(),
              percentile(ticks, 0.5), percentile(ticks, 0.99),
              ticks.empty() ? 0.0 : *std::max_element(ticks.begin(), ticks.end()));
}

// With --trace, every outermost event that takes the GUI thread over 16 ms, and what it went to:
// what fills a stall between ticks (a paint, a layout, a posted slot).
class TracingApplication : public QApplication {
 public:
  TracingApplication(int& argc, char** argv, Clock::time_point start) : QApplication(argc, argv), start_(start) {}
  bool trace = false;
  // Every paint of a chart's viewport inside another event, and the GUI thread's CPU in them.
  int chartPaints = 0;
  double chartPaintCpu = 0.0;

  bool notify(QObject* receiver, QEvent* event) override {
    if (!trace) return QApplication::notify(receiver, event);
    if (depth_ > 0) {
      // A paint inside an outer event: which widget's, when it is long.
      const bool paint = event->type() == QEvent::Paint;
      const double cpuBefore = paint ? threadCpuMs() : 0.0;
      ++depth_;
      const bool handled = QApplication::notify(receiver, event);
      --depth_;
      const QObject* named = receiver->parent() != nullptr ? receiver->parent() : receiver;
      const auto* chartView = qobject_cast<const QChartView*>(named);
      if (paint && chartView != nullptr) {
        ++chartPaints;
        chartPaintCpu += threadCpuMs() - cpuBefore;
      }
      if (paint && threadCpuMs() - cpuBefore > 8.0) {
        const QString name = chartView != nullptr ? chartView->chart()->title() : named->objectName();
        std::printf("    paint of %s %s: GUI thread CPU %.1f ms\n", named->metaObject()->className(),
                    name.toUtf8().constData(), threadCpuMs() - cpuBefore);
      }
      return handled;
    }
    const QEvent::Type type = event->type();  // the event may be gone after it is handled
    const QByteArray what = QByteArray(receiver->metaObject()->className()) + " " + receiver->objectName().toUtf8();
    const Clock::time_point before = Clock::now();
    const double cpuBefore = threadCpuMs();
    ++depth_;
    const bool handled = QApplication::notify(receiver, event);
    --depth_;
    const double cpu = threadCpuMs() - cpuBefore;
    if (cpu > 16.0) {
      std::printf("  event at %.2f s: type %d to %s: %.1f ms, GUI thread CPU %.1f ms\n",
                  std::chrono::duration<double>(before - start_).count(), static_cast<int>(type), what.constData(),
                  std::chrono::duration<double, std::milli>(Clock::now() - before).count(), cpu);
    }
    return handled;
  }

 private:
  Clock::time_point start_;
  int depth_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  std::string endpoint;
  double seconds = 20.0;
  bool history = true;
  bool trace = false;  // every tick and event over 16 ms, and every stall over 50 ms
  double applyMs = -1.0;  // DashboardOptions::refreshBudget.time; below 0: the default
  livemon::bench::exitOnHelp(argc, argv, "history_open ENDPOINT [--seconds S] [--no-history] [--trace] [--apply-ms MS]");
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc) {
      seconds = std::atof(argv[++i]);
    } else if (std::strcmp(argv[i], "--no-history") == 0) {
      history = false;
    } else if (std::strcmp(argv[i], "--trace") == 0) {
      trace = true;
    } else if (std::strcmp(argv[i], "--apply-ms") == 0 && i + 1 < argc) {
      applyMs = std::atof(argv[++i]);
    } else {
      endpoint = argv[i];
    }
  }
  if (endpoint.empty() || !(seconds > 0)) {
    std::fprintf(stderr, "usage: history_open ENDPOINT [--seconds S] [--no-history] [--trace] [--apply-ms MS]\n");
    return 2;
  }

  TracingApplication app(argc, argv, Clock::now());
  app.trace = trace;
  livemon::ui::applyDashboardStyle(app);
  QTemporaryDir settings;
  livemon::ui::DashboardOptions options;
  options.endpoints = {endpoint};
  options.exactEndpoints = true;
  options.settingsFile = settings.filePath(QStringLiteral("livemon.ini"));
  options.history = history;
  if (applyMs >= 0) options.refreshBudget.time = std::chrono::microseconds(static_cast<int64_t>(applyMs * 1000));
  livemon::ui::MainWindow window(options);
  window.resize(1600, 1000);
  window.show();
  window.setTimeRange(livemon::ui::TimeRange::All);

  const Clock::time_point start = Clock::now();
  std::optional<double> noteAt;
  std::vector<double> duringHistory;
  std::vector<double> afterHistory;
  // The apply part of each tick (Dashboard::applied), the rest being the views' redraws.
  std::vector<double> applyDuring;
  std::vector<double> applyAfter;
  // The GUI thread's CPU in each tick's redraw part (between Dashboard::applied and ::refreshed):
  // what the views' work costs, whatever else the machine is doing.
  std::vector<double> redrawCpu;
  double cpuAtApplied = 0.0;
  livemon::ui::Dashboard& dashboard = window.dashboard();
  QObject::connect(&dashboard, &livemon::ui::Dashboard::historyNoted, [&](const livemon::ui::HistoryNote& note) {
    noteAt = std::chrono::duration<double>(Clock::now() - start).count();
    std::printf("history after %.2f s: %s (%llu events)\n", *noteAt,
                qUtf8Printable(livemon::ui::describeHistory(note)), static_cast<unsigned long long>(note.events));
  });
  QObject::connect(&dashboard, &livemon::ui::Dashboard::applied, [&](qint64 ns) {
    (noteAt ? applyAfter : applyDuring).push_back(static_cast<double>(ns) / 1e6);
    cpuAtApplied = threadCpuMs();
  });
  QObject::connect(&dashboard, &livemon::ui::Dashboard::refreshed, [&](qint64 ns) {
    (noteAt ? afterHistory : duringHistory).push_back(static_cast<double>(ns) / 1e6);
    redrawCpu.push_back(threadCpuMs() - cpuAtApplied);
    const std::vector<double>& applies = noteAt ? applyAfter : applyDuring;
    if (trace && static_cast<double>(ns) / 1e6 > 16.0 && !applies.empty()) {
      std::printf("  tick at %.2f s: %.1f ms, apply %.1f ms, %zu rows waiting\n",
                  std::chrono::duration<double>(Clock::now() - start).count(), static_cast<double>(ns) / 1e6,
                  applies.back(), dashboard.waitingRows());
    }
  });

  double longestStall = 0.0;
  double stallCpu = 0.0;
  double stallAt = 0.0;
  Clock::time_point last = Clock::now();
  double lastCpu = threadCpuMs();
  double mostCpuInGap = 0.0;  // the GUI thread's CPU between two firings of the probe
  const double cpuAtStart = lastCpu;
  std::optional<double> cpuAtNote;  // the GUI thread's CPU when the history note came
  QTimer probe;
  probe.setTimerType(Qt::PreciseTimer);
  QObject::connect(&probe, &QTimer::timeout, [&] {
    const Clock::time_point now = Clock::now();
    const double cpu = threadCpuMs();
    const double gap = std::chrono::duration<double, std::milli>(now - last).count();
    if (gap > longestStall) {
      longestStall = gap;
      stallCpu = cpu - lastCpu;
      stallAt = std::chrono::duration<double>(now - start).count();
    }
    mostCpuInGap = std::max(mostCpuInGap, cpu - lastCpu);
    if (trace && gap > 50.0) {
      std::printf("  stall before %.2f s: %.1f ms, GUI thread CPU %.1f ms\n",
                  std::chrono::duration<double>(now - start).count(), gap, cpu - lastCpu);
    }
    if (noteAt && !cpuAtNote) cpuAtNote = cpu;
    last = now;
    lastCpu = cpu;
  });
  probe.start(5);
  QTimer::singleShot(static_cast<int>(seconds * 1000), &app, &QApplication::quit);
  QApplication::exec();

  const livemon::transport::SubscriberStats stats = dashboard.ingest().stats();
  std::printf("events %llu (from history %llu), log rows %d, samples dropped by staging %llu, log rows dropped %llu\n",
              static_cast<unsigned long long>(stats.events), static_cast<unsigned long long>(stats.historyEvents),
              dashboard.eventLog().rowCount(),
              static_cast<unsigned long long>(dashboard.ingest().staging().droppedSamples()),
              static_cast<unsigned long long>(dashboard.ingest().staging().droppedLogEntries()));
  printTicks("while the history came", duringHistory);
  printTicks("  of which apply", applyDuring);
  printTicks("after it", afterHistory);
  printTicks("  of which apply", applyAfter);
  printTicks("redraw's CPU, every tick", redrawCpu);
  std::printf("longest stall %.1f ms (GUI thread ran %.1f ms of it) at %.2f s\n", longestStall, stallCpu, stallAt);
  const double cpuEnd = threadCpuMs();
  const double noteSeconds = noteAt.value_or(seconds);
  const double cpuNote = cpuAtNote.value_or(cpuEnd);
  if (trace) {
    std::printf("chart paints %d, GUI thread CPU in them %.0f ms (%.1f ms a paint)\n", app.chartPaints, app.chartPaintCpu,
                app.chartPaints > 0 ? app.chartPaintCpu / app.chartPaints : 0.0);
  }
  std::printf("GUI thread CPU: %.0f %% of a core while the history came, %.0f %% after it; most in one stall %.1f ms\n",
              (cpuNote - cpuAtStart) / (noteSeconds * 10.0),
              seconds > noteSeconds ? (cpuEnd - cpuNote) / ((seconds - noteSeconds) * 10.0) : 0.0, mostCpuInGap);
  return 0;
}
