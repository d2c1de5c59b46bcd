// chart_redraw: what one chart's redraw costs the GUI thread while it follows a live run whose
// whole history is in view (range All), the case of a late joiner whose history has come in.
// A StatChartView (600x300, offscreen) holds one Stat with mean, min, max (a band), p50 and p99,
// WINDOWS windows (2 ms apart; 100 000 by default). Each round adds 50 windows and redraws at the
// new range, as a refresh does, then paints the chart into an image, as the event loop would; the
// GUI thread's CPU of each part is reported as p50/p99 over ROUNDS rounds (200), so what the
// machine does meanwhile does not count.
// With --new-charts, it measures instead what a chart costs when it is made on a run already
// under way (a late joiner's first second): ROUNDS charts made one after another on the same
// WINDOWS windows, each shown, rendered and painted for the first time, then once more.
// --noisy makes each window's values independent of the last, as a step time's are (the lines
// zigzag over most of the plot); --smoothed draws with the dashboard's default smoothing (a faint
// raw line under each smoothed one); --viewport paints the way the window does (the view's
// viewport repainted) rather than into an image.
//   chart_redraw [--windows N] [--rounds R] [--new-charts] [--noisy] [--smoothed] [--viewport]
#include <time.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include <QApplication>
#include <QImage>
#include <QPainter>

#include <livemon/ui/ingest/event_converter.h>
#include <livemon/ui/model/chart_view_options.h>
#include <livemon/ui/model/stat_registry.h>
#include <livemon/ui/widgets/dashboard_style.h>
#include <livemon/ui/widgets/stat_chart_view.h>

#include "bench_support.h"

namespace {

double threadCpuMs() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const auto index = static_cast<std::size_t>(p * static_cast<double>(values.size() - 1) + 0.5);
  return values[std::min(index, values.size() - 1)];
}

constexpr double kStartMs = 1'700'000'000'000.0;
constexpr double kWindowMs = 2.0;

std::chrono::system_clock::time_point atMs(double ms) {
  return std::chrono::system_clock::time_point(
      std::chrono::duration_cast<std::chrono::system_clock::duration>(std::chrono::duration<double, std::milli>(ms)));
}

bool noisy = false;
bool smoothed = false;
bool viewportPaint = false;

// Windows [from, to) of a noisy, slowly falling loss.
std::vector<livemon::ui::SeriesId> feed(livemon::ui::EventConverter& converter, livemon::ui::StatRegistry& registry,
                                        const std::shared_ptr<const livemon::transport::SourceInfo>& source,
                                        int from, int to) {
  livemon::ui::IngestBatch batch;
  for (int i = from; i < to; ++i) {
    const double base = 2.0 * std::exp(-i / 40000.0) + 0.3;
    // A window's noise: smooth by default; with --noisy, a step time's, each window independent of
    // the last and as large as the trend (lines zigzag across most of the plot's height).
    const double noise = noisy ? 4.0 * (static_cast<double>((static_cast<unsigned>(i) * 2654435761u) % 1000u) / 1000.0 - 0.5)
                               : 0.05 * std::sin(i * 0.37) + 0.03 * std::sin(i * 1.91);
    livemon::transport::ReceivedEvent event;
    event.event = livemon::Event{"livemon.Stat", atMs(kStartMs + kWindowMs * i),
                                 {{"loss.mean", base + noise},
                                  {"loss.min", base + noise - 0.2},
                                  {"loss.max", base + noise + 0.25},
                                  {"loss.p50", base + noise - 0.02},
                                  {"loss.p99", base + noise + 0.2}}};
    event.source = source;
    converter.convert(event, batch);
  }
  return registry.apply(batch).newSeries;
}

livemon::ui::ChartRenderContext liveContext(int windows) {
  livemon::ui::ChartRenderContext context;
  context.mode = livemon::ui::TimeAxisMode::SinceRunStart;
  context.x = livemon::ui::XRange{0.0, kWindowMs * windows / 1000.0};
  context.following = true;
  return context;
}

// Makes `rounds` charts on the run in `registry`, one after another, as a late joiner does.
int measureNewCharts(livemon::ui::StatRegistry& registry, const std::vector<livemon::ui::SeriesId>& ids, int windows,
                     int rounds) {
  std::vector<double> make;
  std::vector<double> first;
  std::vector<double> firstPaint;
  std::vector<double> second;
  const livemon::ui::ChartRenderContext context = liveContext(windows);
  for (int round = 0; round < rounds + 2; ++round) {
    const double before = threadCpuMs();
    auto chart = std::make_unique<livemon::ui::StatChartView>(QStringLiteral("loss"), registry,
                                                              livemon::ui::TimeAxisMode::SinceRunStart);
    livemon::ui::ChartViewOptions options;
    if (smoothed) chart->setViewOptions(&options);
    for (livemon::ui::SeriesId id : ids) chart->addSeries(id);
    chart->resize(600, 300);
    chart->show();
    QApplication::processEvents();
    const double made = threadCpuMs();
    chart->render(context, true);
    const double rendered = threadCpuMs();
    QImage image(chart->size(), QImage::Format_ARGB32_Premultiplied);
    QPainter painter(&image);
    chart->QChartView::render(&painter);
    painter.end();
    const double painted = threadCpuMs();
    chart->render(context, true);
    const double again = threadCpuMs();
    if (round < 2) continue;  // the first charts load fonts and styles
    make.push_back(made - before);
    first.push_back(rendered - made);
    firstPaint.push_back(painted - rendered);
    second.push_back(again - painted);
  }
  std::printf("%d windows, %d new charts (GUI thread CPU, p50 / p99): made and shown %.2f / %.2f ms; "
              "first render %.2f / %.2f ms; first paint %.2f / %.2f ms; second render %.2f / %.2f ms\n",
              windows, rounds, percentile(make, 0.5), percentile(make, 0.99), percentile(first, 0.5),
              percentile(first, 0.99), percentile(firstPaint, 0.5), percentile(firstPaint, 0.99),
              percentile(second, 0.5), percentile(second, 0.99));
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  int windows = 100000;
  int rounds = 200;
  bool newCharts = false;
  const char* const usage = "chart_redraw [--windows N] [--rounds R] [--new-charts] [--noisy] [--smoothed] [--viewport]";
  livemon::bench::exitOnHelp(argc, argv, usage);
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--new-charts") == 0) {
      newCharts = true;
    } else if (std::strcmp(argv[i], "--noisy") == 0) {
      noisy = true;
    } else if (std::strcmp(argv[i], "--viewport") == 0) {
      viewportPaint = true;
    } else if (std::strcmp(argv[i], "--smoothed") == 0) {
      smoothed = true;
    } else if (std::strcmp(argv[i], "--windows") == 0 && i + 1 < argc) {
      windows = std::atoi(argv[++i]);
    } else if (std::strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
      rounds = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s\n", usage);
      return 2;
    }
  }
  if (windows < 2 || rounds < 1) {
    std::fprintf(stderr, "chart_redraw: --windows must be at least 2 and --rounds at least 1\n");
    return 2;
  }
  if (qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
  QApplication app(argc, argv);
  livemon::ui::applyDashboardStyle(app);

  livemon::transport::SourceInfo info;
  info.run = "bench";
  info.host = "host";
  info.pid = 1;
  info.instanceId = 1;
  info.startTime = atMs(kStartMs);
  const auto source = std::make_shared<const livemon::transport::SourceInfo>(info);
  livemon::ui::EventConverter converter;
  livemon::ui::StatRegistry registry;
  const std::vector<livemon::ui::SeriesId> ids = feed(converter, registry, source, 0, windows);
  if (newCharts) return measureNewCharts(registry, ids, windows, rounds);
  livemon::ui::StatChartView chart(QStringLiteral("loss"), registry, livemon::ui::TimeAxisMode::SinceRunStart);
  livemon::ui::ChartViewOptions options;
  if (smoothed) chart.setViewOptions(&options);
  for (livemon::ui::SeriesId id : ids) chart.addSeries(id);
  chart.resize(600, 300);
  chart.show();
  QApplication::processEvents();

  QImage image(chart.size(), QImage::Format_ARGB32_Premultiplied);
  std::vector<double> redraw;
  std::vector<double> paint;
  int fed = windows;
  for (int round = 0; round < rounds + 5; ++round) {
    feed(converter, registry, source, fed, fed + 50);
    fed += 50;
    livemon::ui::ChartRenderContext context;
    context.mode = livemon::ui::TimeAxisMode::SinceRunStart;
    context.x = livemon::ui::XRange{0.0, kWindowMs * fed / 1000.0};
    context.following = true;
    const double before = threadCpuMs();
    chart.render(context, true);
    const double drawn = threadCpuMs();
    if (viewportPaint) {
      chart.viewport()->repaint();
    } else {
      QPainter painter(&image);
      chart.QChartView::render(&painter);
      painter.end();
    }
    const double painted = threadCpuMs();
    if (round < 5) continue;  // the first rounds lay the chart out
    redraw.push_back(drawn - before);
    paint.push_back(painted - drawn);
  }
  std::printf("%d windows, %d rounds: redraw p50 %.2f ms p99 %.2f ms; paint p50 %.2f ms p99 %.2f ms (GUI thread CPU)\n",
              windows, rounds, percentile(redraw, 0.5), percentile(redraw, 0.99), percentile(paint, 0.5),
              percentile(paint, 0.99));
  return 0;
}
