// event_log_paint: what the event log costs the dashboard at --events-per-second (100 000) rows a
// second, the log shown beside the same log hidden (the reference), each side in its own child
// process, in one run.
//
// A 33 ms timer does what the dashboard's refresh does for the log: appends the rows that arrived
// (EventLogModel::append), frees what it evicted, tells the view (EventLogView::rowsAppended).
// Sides:
//   hidden:    the model fed, the view built but not shown (the reference: the model's own cost)
//   following: the view shown, auto-scroll on at the bottom (what a user sees by default)
//   reading:   the view shown, scrolled up to older rows that slide as new ones arrive
//   styled:    following, its cells painted by QStyledItemDelegate as before issue 32 (a before/after
//              in one run)
// Reported after --warmup (3 s, the ring full by then at the default --capacity): CPU of the
// process as a share of one core, the paints of the table's viewport per second and their mean
// and p99 CPU time (the GUI thread's), and the refresh's own p99 (wall time). The log's cost is a shown side's CPU minus hidden's.
// Runs offscreen unless QT_QPA_PLATFORM says otherwise.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <QApplication>
#include <QScrollBar>
#include <QStyledItemDelegate>
#include <QTableView>
#include <QTimer>

#include <livemon/ui/model/event_log_model.h>
#include <livemon/ui/widgets/dashboard_style.h>
#include <livemon/ui/widgets/event_log_view.h>

#include "bench_support.h"

namespace {

using livemon::bench::percentile;
using livemon::bench::threadCpuMs;
using Clock = std::chrono::steady_clock;

struct Config {
  double seconds = 13.0;
  double warmup = 3.0;
  double eventsPerSecond = 100'000.0;
  std::size_t capacity = 100'000;
  int width = 800;
  int height = 600;
};

struct Results {
  double cpuPercent = 0.0;
  double paintsPerSecond = 0.0;
  double paintMeanMs = 0.0;
  double paintP99Ms = 0.0;
  double refreshP99Ms = 0.0;
};

double cpuSeconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// Times the paint events of a widget (the table's viewport).
class PaintTimer : public QObject {
 public:
  bool eventFilter(QObject* watched, QEvent* event) override {
    if (event->type() != QEvent::Paint || !counting) return QObject::eventFilter(watched, event);
    const double start = threadCpuMs();
    // Paint now, timed, and swallow the event.
    static_cast<QWidget*>(watched)->removeEventFilter(this);
    QCoreApplication::sendEvent(watched, event);
    static_cast<QWidget*>(watched)->installEventFilter(this);
    paintsMs.push_back(threadCpuMs() - start);
    return true;
  }
  bool counting = false;
  std::vector<double> paintsMs;
};

Results runSide(const Config& config, const std::string& side) {
  int argc = 1;
  char name[] = "event_log_paint";
  char* argv[] = {name, nullptr};
  QApplication app(argc, argv);
  livemon::ui::applyDashboardStyle(app);
  livemon::ui::EventLogModel model(config.capacity);
  for (livemon::ui::SourceId s = 0; s < 64; ++s) {
    model.setSourceLabel(s, QStringLiteral("rank %1/64 · train@gpu%2:%3").arg(s).arg(s / 8, 2, 10, QLatin1Char('0')).arg(4000 + s));
  }
  const char* names[] = {"train.step", "data.batch", "optimizer.update", "eval"};
  for (livemon::ui::NameId n = 0; n < 4; ++n) model.setEventName(n, QString::fromLatin1(names[n]));
  livemon::ui::EventLogView view(model);
  view.resize(config.width, config.height);
  if (side == "styled") view.table()->setItemDelegate(new QStyledItemDelegate(view.table()));  // the log before issue 32
  if (side != "hidden") view.show();
  PaintTimer paints;
  view.table()->viewport()->installEventFilter(&paints);

  std::vector<double> refreshMs;
  uint64_t appended = 0;
  const auto start = Clock::now();
  const auto wallStart = std::chrono::system_clock::now();
  double cpuAtWarmup = -1.0;
  bool scrolledUp = false;
  QTimer refresh;
  refresh.setTimerType(Qt::PreciseTimer);
  QObject::connect(&refresh, &QTimer::timeout, [&] {
    const double elapsed = std::chrono::duration<double>(Clock::now() - start).count();
    const auto target = static_cast<uint64_t>(elapsed * config.eventsPerSecond);
    std::vector<livemon::ui::LogEntry> rows;
    rows.reserve(target - appended);
    const int64_t nowNs = std::chrono::duration_cast<std::chrono::nanoseconds>(
                              (wallStart + std::chrono::duration_cast<std::chrono::system_clock::duration>(Clock::now() - start))
                                  .time_since_epoch())
                              .count();
    for (; appended < target; ++appended) {
      livemon::ui::LogEntry entry;
      entry.timeNs = nowNs;
      entry.source = static_cast<livemon::ui::SourceId>(appended % 64);
      entry.name = static_cast<livemon::ui::NameId>(appended % 3);
      entry.step = static_cast<int64_t>(appended / 64);
      char data[96];
      std::snprintf(data, sizeof data, "loss=%.6g, lr=0.0003, phase=train, tokens=%llu", 1.0 / (1.0 + appended * 1e-5),
                    static_cast<unsigned long long>(appended % 4096));
      entry.data = data;
      rows.push_back(std::move(entry));
    }
    const auto tickStart = Clock::now();
    model.append(std::move(rows));
    model.takeEvicted();
    view.rowsAppended();
    if (elapsed >= config.warmup) refreshMs.push_back(std::chrono::duration<double, std::milli>(Clock::now() - tickStart).count());
    if (side == "reading" && !scrolledUp && elapsed > 1.0) {  // a reader scrolls up to older rows
      view.table()->verticalScrollBar()->setValue(view.table()->verticalScrollBar()->maximum() / 2);
      scrolledUp = true;
    }
    if (elapsed >= config.warmup && cpuAtWarmup < 0) {
      cpuAtWarmup = cpuSeconds();
      paints.counting = true;
    }
  });
  refresh.start(33);
  QTimer::singleShot(static_cast<int>(config.seconds * 1000), [&] { app.quit(); });
  QApplication::exec();
  const double measured = config.seconds - config.warmup;
  Results results;
  results.cpuPercent = 100.0 * (cpuSeconds() - cpuAtWarmup) / measured;
  results.paintsPerSecond = static_cast<double>(paints.paintsMs.size()) / measured;
  double total = 0.0;
  for (double ms : paints.paintsMs) total += ms;
  results.paintMeanMs = paints.paintsMs.empty() ? 0.0 : total / static_cast<double>(paints.paintsMs.size());
  results.paintP99Ms = percentile(paints.paintsMs, 99);
  results.refreshP99Ms = percentile(refreshMs, 99);
  return results;
}

// Runs a side in a child process, so each starts from a clean heap.
bool runChild(const Config& config, const std::string& side, Results& results) {
  const std::optional<std::string> text = livemon::bench::runInChild([&] {
    const Results r = runSide(config, side);
    char line[256];
    std::snprintf(line, sizeof line, "%.17g %.17g %.17g %.17g %.17g", r.cpuPercent, r.paintsPerSecond, r.paintMeanMs, r.paintP99Ms,
                  r.refreshP99Ms);
    return std::string(line);
  });
  if (!text) return false;
  std::istringstream in(*text);
  in >> results.cpuPercent >> results.paintsPerSecond >> results.paintMeanMs >> results.paintP99Ms >> results.refreshP99Ms;
  return static_cast<bool>(in);
}

void usage(const char* program) {
  std::fprintf(stderr,
               "usage: %s [--seconds S] [--warmup S] [--events-per-second N] [--capacity ROWS] [--width PX] [--height PX]\n"
               "          [--runs N] [--side hidden|following|reading|styled]\n",
               program);
}

}  // namespace

int main(int argc, char** argv) {
  Config config;
  int runs = 3;
  std::string only;  // --side: one side only (for a profiler)
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
    else if (flag == "--warmup") config.warmup = std::atof(value);
    else if (flag == "--events-per-second") config.eventsPerSecond = std::atof(value);
    else if (flag == "--capacity") config.capacity = std::strtoull(value, nullptr, 10);
    else if (flag == "--width") config.width = std::atoi(value);
    else if (flag == "--height") config.height = std::atoi(value);
    else if (flag == "--runs") runs = std::atoi(value);
    else if (flag == "--side") only = value;
    else {
      usage(argv[0]);
      return 2;
    }
  }
  if (!only.empty() && only != "hidden" && only != "following" && only != "reading" && only != "styled") {
    usage(argv[0]);
    return 2;
  }
  if (!(config.seconds > config.warmup + 1) || config.warmup < 0 || config.eventsPerSecond < 0 || config.capacity < 1 || runs < 1 ||
      config.width < 100 || config.height < 100) {
    std::fprintf(stderr, "event_log_paint: --seconds must exceed --warmup by more than 1, --capacity and --runs at least 1\n");
    return 2;
  }
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  std::printf("event_log_paint: %.0f rows/s, ring of %zu, %dx%d log, %.0f s per side (first %.0f s left out), %d run(s), %s\n",
              config.eventsPerSecond, config.capacity, config.width, config.height, config.seconds, config.warmup, runs,
              qgetenv("QT_QPA_PLATFORM").constData());
  const char* sides[] = {"hidden", "following", "reading", "styled"};
  constexpr int kSides = 4;
  std::vector<std::vector<Results>> all(kSides);
  std::printf("%-4s %-10s %8s %9s %11s %10s %12s\n", "run", "side", "CPU %", "paints/s", "paint mean", "paint p99", "refresh p99");
  for (int run = 0; run < runs; ++run) {
    for (int s = 0; s < kSides; ++s) {
      if (!only.empty() && only != sides[s]) continue;
      Results r;
      if (!runChild(config, sides[s], r)) {
        std::fprintf(stderr, "event_log_paint: the %s side failed\n", sides[s]);
        return 1;
      }
      std::printf("%-4d %-10s %8.1f %9.1f %8.2f ms %7.2f ms %9.2f ms\n", run + 1, sides[s], r.cpuPercent, r.paintsPerSecond, r.paintMeanMs,
                  r.paintP99Ms, r.refreshP99Ms);
      std::fflush(stdout);
      all[static_cast<std::size_t>(s)].push_back(r);
    }
  }
  if (!only.empty()) return 0;
  const auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  std::printf("\nmedians of %d run(s):\n", runs);
  for (int s = 0; s < kSides; ++s) {
    const auto& rs = all[static_cast<std::size_t>(s)];
    const auto pick = [&](double Results::*field) {
      std::vector<double> v;
      for (const Results& r : rs) v.push_back(r.*field);
      return median(v);
    };
    std::printf("%-15s %8.1f %9.1f %8.2f ms %7.2f ms %9.2f ms\n", sides[s], pick(&Results::cpuPercent), pick(&Results::paintsPerSecond),
                pick(&Results::paintMeanMs), pick(&Results::paintP99Ms), pick(&Results::refreshP99Ms));
  }
  const auto beyondHidden = [&](std::size_t side) {
    std::vector<double> d;
    for (std::size_t i = 0; i < all[side].size(); ++i) d.push_back(all[side][i].cpuPercent - all[0][i].cpuPercent);
    return median(d);
  };
  std::printf("the log's view (CPU %% of a core beyond hidden's, median of the runs' differences): following %.1f, reading %.1f, "
              "styled %.1f\n",
              beyondHidden(1), beyondHidden(2), beyondHidden(3));
  return 0;
}
